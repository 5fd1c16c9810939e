// The PostgreSQL tournament on statements as code writes them (real server): $n parameters measured with
// values from the columns' statistics, tables named with their schema (a non-public schema, a mixed-case
// quoted one), a table joined with itself on one copy. Each run must leave nothing behind: no index, no
// temporary table, no running statement; and the winner must do less work than today on the real table.

import { strict as assert } from 'node:assert';
import pg from 'pg';
import { openPostgresAdvice } from '../../src/adapters/advise';
import { advisePostgresLive } from '../../src/adapters/adviceService';
import { AdapterError } from '../../src/adapters/errors';
import { run, type Io } from '../../src/cli/main';
import { env, pgUriFor, rootBuffers } from './support/env';
import { until } from '../until';

const DB = 'qpi_tournament_shapes';

const uriFor = pgUriFor;

interface EntryJson { label: string; createIndex?: string | null; index: { table: string } | null; work: number | null }
interface AdviseJson {
  measurement: { status: string; label: string; reason?: string; winner?: EntryJson; ranking?: EntryJson[] };
  suggestions: { action: string; table?: string; schema?: string | null; createIndex: string | null; verification: { status: string; message?: string } }[];
  notes: string[];
}

describe('the PostgreSQL tournament on parameters, schemas and self-joins (real server)', function () {
  this.timeout(240_000);
  let admin: pg.Client;
  let client: pg.Client;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.query(`CREATE DATABASE ${DB}`);
    client = new pg.Client({ connectionString: uriFor(DB) });
    await client.connect();
    // Customers drawn with a skew (a few hot ones, many cold), so pg_stats keeps a list of common values.
    const orders = async (table: string, quoted = false): Promise<void> => {
      const [id, cust, status, created, total] = quoted ? ['"Id"', '"CustomerId"', '"Status"', '"CreatedAt"', '"Total"'] : ['id', 'customer_id', 'status', 'created_at', 'total'];
      await client.query(`CREATE TABLE ${table} (${id} int PRIMARY KEY, ${cust} int NOT NULL, ${status} text NOT NULL, ${created} timestamptz NOT NULL, ${total} int NOT NULL);
        INSERT INTO ${table} SELECT g, (floor(power(random(), 3) * 2000))::int, (ARRAY['new','paid','shipped','done'])[1 + g % 4],
          timestamptz '2024-01-01' + g * interval '5 minutes', (g * 7919) % 1000 FROM generate_series(1, 60000) g`);
      await client.query(`VACUUM ANALYZE ${table}`);
    };
    await client.query('SELECT setseed(0.42)');
    await orders('p_orders');
    await client.query('CREATE SCHEMA app');
    await orders('app.s_orders');
    await client.query('CREATE SCHEMA "Sales"');
    await orders('"Sales"."Orders"', true);
  });

  after(async function () {
    await client?.end();
    await admin?.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin?.end();
  });

  /** Every index of every schema, the temporary tables anywhere, and statements still running. */
  async function state(): Promise<string> {
    const ix = await client.query("SELECT schemaname, indexname FROM pg_indexes WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2");
    const temp = await client.query("SELECT count(*)::int AS n FROM pg_class WHERE relpersistence = 't'");
    const active = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name IN ('query-plan-inspector', 'qpi') AND state = 'active'");
    return JSON.stringify({ indexes: ix.rows, temp: temp.rows[0].n, active: active.rows[0].n });
  }

  async function advise(sql: string): Promise<AdviseJson> {
    const before = await state();
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { stdout: (x) => void out.push(x), stderr: (x) => void err.push(x), readStdin: () => '', readFile: () => '' };
    assert.equal(await run(['advise', '--uri', uriFor(DB), '--verify', '--json', '--query', sql], io), 0, err.join(''));
    assert.equal(await state(), before, 'the measurement left something behind');
    return JSON.parse(out.join('')) as AdviseJson;
  }

  const buffers = (sql: string, ddl: string | null): Promise<number> => rootBuffers(client, sql, ddl);

  /** Advice measured under `label` whose first suggestion creates an index that beats today on the real tables. */
  async function measuredWin(sql: string, label: string | undefined): Promise<AdviseJson['suggestions'][number]> {
    const doc = await advise(sql);
    assert.equal(doc.measurement.status, 'measured', JSON.stringify(doc.measurement));
    if (label !== undefined) assert.equal(doc.measurement.label, label);
    const first = doc.suggestions[0]!;
    assert.equal(first.action, 'create');
    assert.equal(first.verification.status, 'verified');
    assert.ok((await buffers(sql, first.createIndex)) < (await buffers(sql, null)), `${first.createIndex} does not beat today`);
    return first;
  }

  it('measures a statement with $n parameters with values from pg_stats, and says which', async function () {
    const sql = 'SELECT id, total FROM p_orders WHERE customer_id = $1 AND created_at > $2 ORDER BY created_at DESC LIMIT $3';
    const doc = await advise(sql);
    assert.equal(doc.measurement.status, 'measured', JSON.stringify(doc.measurement));
    const m = /with \$1 = (\d+), \$2 = '([^']+)', \$3 = 20$/.exec(doc.measurement.label);
    assert.ok(m, doc.measurement.label);
    // $1 is one of the column's common values, $2 a bound of its histogram.
    const mcv = await client.query("SELECT most_common_vals::text::int[] AS v FROM pg_stats WHERE tablename = 'p_orders' AND attname = 'customer_id'");
    assert.ok((mcv.rows[0].v as number[]).includes(Number(m[1])), `$1 = ${m[1]} is not a common value of customer_id`);
    const hist = await client.query("SELECT histogram_bounds::text::timestamptz[] AS v FROM pg_stats WHERE tablename = 'p_orders' AND attname = 'created_at'");
    const bounds = (hist.rows[0].v as Date[]).map((d) => d.getTime());
    assert.ok(bounds.includes(new Date(m[2]!).getTime()), `$2 = ${m[2]} is not a histogram bound of created_at`);
    assert.ok(doc.notes.some((n) => /\$1 = \d+, a common value of p_orders\.customer_id/.test(n)), doc.notes.join(' | '));
    // The winner, with those values, reads fewer buffers than today (a table scan) on the real table.
    const bound = sql.replace('$1', m[1]!).replace('$2', `'${m[2]}'`).replace('$3', '20');
    const winner = doc.measurement.winner!.createIndex!;
    assert.match(winner, /ON p_orders \(customer_id, created_at/);
    assert.ok((await buffers(bound, winner)) < (await buffers(bound, null)), 'the winner does not beat today on the real table');
    assert.equal(doc.suggestions[0]!.verification.status, 'verified');
  });

  it('falls back to the rules, labelled not measured, when a parameter is compared to no column', async function () {
    const doc = await advise('SELECT id FROM p_orders WHERE lower(status) = $1 AND customer_id = $2');
    assert.equal(doc.measurement.status, 'not-measured');
    assert.equal(doc.measurement.label, 'not measured');
    assert.match(doc.measurement.reason ?? '', /^\$1 is compared to no column whose statistics could give it a value \(lower\(status\) = \$1\), so it was not measured/);
  });

  it('measures tables named with their schema, a non-public one and a quoted mixed-case one', async function () {
    const plain = await measuredWin('SELECT id, total FROM app.s_orders WHERE customer_id = 1500 ORDER BY total DESC LIMIT 5', 'measured on all 60,000 rows');
    assert.equal(plain.createIndex, 'CREATE INDEX CONCURRENTLY ON app.s_orders (customer_id, total DESC);');
    const quoted = await measuredWin('SELECT "Id" FROM "Sales"."Orders" o WHERE o."CustomerId" = 1500 AND o."Status" = \'paid\' ORDER BY o."CreatedAt" DESC LIMIT 5', undefined);
    assert.match(quoted.createIndex ?? '', /^CREATE INDEX CONCURRENTLY ON "Sales"\."Orders" \("CustomerId", /);
  });

  it('leaves nothing behind when a bound, schema-qualified statement fails on the copy or is cancelled', async function () {
    const before = await state();
    const session = await openPostgresAdvice({ uri: uriFor(DB) });
    try {
      // Division by zero only when a row is read: plain EXPLAIN plans it, EXPLAIN ANALYZE on the copy fails.
      const failed = await advisePostgresLive(session, 'SELECT id FROM app.s_orders WHERE customer_id = $1 AND 1 / (total - total) = 0');
      assert.equal(failed.measurement?.status, 'not-measured');
      assert.ok(failed.advice.notes.some((n) => /\$1 = \d+, a common value of s_orders\.customer_id/.test(n)), failed.advice.notes.join(' | '));
      assert.ok(failed.advice.notes.some((n) => /measurement on a sample failed/.test(n)), failed.advice.notes.join(' | '));
      assert.equal(await state(), before);

      // A filter that sleeps a little per row keeps each run of the self-join going for seconds.
      const abort = new AbortController();
      const slow = 'SELECT b."Id" FROM "Sales"."Orders" a JOIN "Sales"."Orders" b ON b."CustomerId" = a."CustomerId" WHERE a."Status" = $1 AND pg_sleep(0.0002) IS NOT NULL';
      const p = advisePostgresLive(session, slow, { signal: abort.signal });
      await until('a measurement of the copies running', async () => {
        const r = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'EXPLAIN (ANALYZE, BUFFERS%' AND query LIKE '%pg_temp.\"Orders\"%' AND state = 'active'");
        return r.rows[0].n > 0;
      }, { timeoutMs: 30_000, pauseMs: 20 });
      abort.abort();
      await assert.rejects(p, (e: unknown) => e instanceof AdapterError && e.kind === 'cancelled');
    } finally {
      await session.close();
    }
    await until('no statement of the cancelled measurement left on the server', async () => (await state()) === before, { timeoutMs: 10_000 });
  });

  it('measures a table joined with itself on one copy, candidates of both aliases together', async function () {
    // Other orders of the customer of one order: the probe side looks rows up by customer_id.
    const first = await measuredWin("SELECT b.id, b.total FROM p_orders a JOIN p_orders b ON b.customer_id = a.customer_id WHERE a.id = 4242 AND b.status = 'paid'", 'measured on whole copies of p_orders (60,000 rows)');
    assert.equal(first.table, 'p_orders');
    assert.match(first.createIndex ?? '', /customer_id/);
  });
});
