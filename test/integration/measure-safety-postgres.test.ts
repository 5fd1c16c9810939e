// The measurement never runs a side effect, on a real PostgreSQL 15: `qpi advise --uri` measures by
// default, and the editor measures right after Explain, so a statement that would advance a sequence,
// call a volatile function that writes (here through COPY ... TO a file, which no rollback undoes) or run
// a trigger must not be executed at all. Sequence positions, a second table's rows and the files on the
// server are read before and after; the advice still comes, ranked by the planner's estimates, with one
// sentence naming what would have run. A harmless statement is still measured, and a time budget
// bounds the whole measurement.

import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { advisePostgresLive, openPostgresAdvice, type PostgresAdviceSession } from '../../src/adapters/advise';
import { run, type Io } from '../../src/cli/main';
import { env, pgUriFor } from './support/env';

const DB = 'qpi_measure_safety';

describe('PostgreSQL: the measurement runs no side effect (real server)', function () {
  this.timeout(180_000);
  let admin: pg.Client;
  let client: pg.Client;
  let session: PostgresAdviceSession;
  let outDir: string;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.query(`CREATE DATABASE ${DB}`);
    client = new pg.Client({ connectionString: pgUriFor(DB) });
    await client.connect();
    // A folder the server's own user can write into, so that a COPY ... TO really would write there.
    outDir = mkdtempSync(join(tmpdir(), 'qpi-copy-'));
    chmodSync(outDir, 0o777);
    await client.query(`
      CREATE TABLE small (id int PRIMARY KEY, customer_id int NOT NULL, v int NOT NULL);
      INSERT INTO small SELECT g, g % 500, (g * 7919) % 10007 FROM generate_series(1, 50000) g;
      CREATE TABLE audit (n int);
      CREATE SEQUENCE s1;
      CREATE SEQUENCE calls;
      CREATE FUNCTION counted(x int) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
        BEGIN PERFORM nextval('calls'); RETURN x >= 0; END $$;
      CREATE FUNCTION dumped(x int) RETURNS int LANGUAGE plpgsql VOLATILE AS $$
        BEGIN EXECUTE format('COPY (SELECT %s) TO %L', x, ${pg.escapeLiteral(outDir)} || '/row-' || x || '-' || nextval('calls')); RETURN x; END $$;
    `);
    await client.query('VACUUM ANALYZE small');
    session = await openPostgresAdvice({ uri: pgUriFor(DB) });
  });

  after(async function () {
    await session?.close();
    await client?.end();
    await admin?.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin?.end();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  /** Sequence positions, the second table's rows, the files written, and temporary tables left. */
  async function state(): Promise<string> {
    const r = await client.query(`SELECT
      (SELECT last_value || '/' || is_called FROM s1) AS s1,
      (SELECT last_value || '/' || is_called FROM calls) AS calls,
      (SELECT count(*)::int FROM audit) AS audit,
      (SELECT count(*)::int FROM pg_class WHERE relpersistence = 't') AS temp`);
    return JSON.stringify({ ...r.rows[0], files: existsSync(outDir) ? readdirSync(outDir).length : -1 });
  }

  function io(): { io: Io; out: () => string; err: () => string } {
    let out = '';
    let err = '';
    return {
      io: { stdout: (s) => void (out += s), stderr: (s) => void (err += s), readStdin: () => '', readFile: () => '' },
      out: () => out,
      err: () => err,
    };
  }

  const cases: { name: string; sql: string; names: RegExp }[] = [
    { name: 'nextval() in the select list', sql: "SELECT *, nextval('s1') FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3", names: /nextval/ },
    { name: 'a volatile function in WHERE', sql: 'SELECT * FROM small WHERE customer_id = 5 AND counted(v) ORDER BY v LIMIT 3', names: /counted\(integer\)/ },
    { name: 'a function writing a file with COPY', sql: 'SELECT dumped(id) FROM small WHERE customer_id = 7 ORDER BY v LIMIT 3', names: /dumped\(integer\)/ },
  ];

  for (const c of cases) {
    it(`does not execute ${c.name}, and still advises from the estimates with one sentence naming it`, async function () {
      const before = await state();
      const { io: cli, out } = io();
      const code = await run(['advise', '--uri', pgUriFor(DB), '--query', c.sql, '--json'], cli);
      assert.equal(code, 0);
      assert.equal(await state(), before, 'nothing changed: sequences, the second table, the files on the server, temporary tables');
      const doc = JSON.parse(out()) as { measurement: { status: string; reason?: string }; suggestions: unknown[] };
      assert.equal(doc.measurement.status, 'not-measured');
      assert.match(doc.measurement.reason ?? '', /^Not measured: running the statement would /);
      assert.match(doc.measurement.reason ?? '', c.names);
      assert.match(doc.measurement.reason ?? '', /ranked by the planner's estimates without running it\.$/);
      assert.ok(doc.suggestions.length > 0, 'the rules and the estimates still advise');
    });
  }

  it('does not count exactly through a volatile function either (--exact-counts)', async function () {
    const before = await state();
    const { io: cli, out } = io();
    const code = await run(['advise', '--uri', pgUriFor(DB), '--query', 'SELECT * FROM small WHERE counted(v) AND customer_id = 5', '--exact-counts', '--json'], cli);
    assert.equal(code, 0);
    assert.equal(await state(), before);
    const doc = JSON.parse(out()) as { warnings: string[] };
    assert.ok(doc.warnings.some((w) => /^Selectivity was not counted exactly: counting would call the volatile function (public\.)?counted\(integer\)/.test(w)), doc.warnings.join('\n'));
  });

  it('measures a statement that runs nothing of the kind, and leaves nothing behind', async function () {
    const before = await state();
    const live = await advisePostgresLive(session, 'SELECT * FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3');
    assert.equal(live.measurement?.status, 'measured');
    assert.equal(await state(), before);
  });

  it('stops starting candidates when the time budget is spent and labels the best measured so far', async function () {
    // A budget already spent when the measurement starts: nothing is measured, and it says why.
    const spent = await advisePostgresLive(session, 'SELECT * FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3', { until: Date.now() });
    assert.equal(spent.measurement?.status, 'not-measured');
    assert.match(spent.measurement?.status === 'not-measured' ? spent.measurement.reason : '', /No candidate could be measured/);
    // Progress is reported as candidates are measured, up to all of them.
    const seen: { measured: number; of: number }[] = [];
    const live = await advisePostgresLive(session, 'SELECT * FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3', { onProgress: (p) => seen.push(p) });
    assert.equal(live.measurement?.status, 'measured');
    assert.ok(seen.length >= 2 && seen[0]!.measured === 0, JSON.stringify(seen));
    assert.equal(seen.at(-1)!.measured, seen.at(-1)!.of);
  });
});
