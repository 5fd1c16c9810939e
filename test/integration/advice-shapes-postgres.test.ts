// Advice for the PostgreSQL shapes the truth generator does not write (test/fixtures/shapes), on a real
// server: a function over a column, a leading wildcard or case-insensitive substring, jsonb containment
// with equality on an ordinary column, and two ranges in one query. Measured through `qpi advise --uri`;
// every run must leave the catalog as it found it (no index, no extension, no temporary table), and the
// index that wins must read fewer buffers than today's plan on the real table.

import { strict as assert } from 'node:assert';
import pg from 'pg';
import { openPostgresAdvice } from '../../src/adapters/advise';
import { advisePostgresLive } from '../../src/adapters/adviceService';
import { pgSend, pgTrialExtensions } from '../../src/adapters/door';
import { advisePostgres } from '../../src/core/index';
import { run, type Io } from '../../src/cli/main';
import { env, pgUriFor } from './support/env';
import { loadPgShapes } from '../fixtures/shapes/data';
import cases from '../fixtures/shapes/cases.json';

const DB = 'qpi_advice_shapes';
const sqlOf = (id: string): string => cases.postgres.find((c) => c.id === id)!.sql;

interface EntryJson { label: string; origin: string; createIndex: string | null; work: number | null; error: string | null; index: { text: string } | null }
interface AdviseJson {
  measurement: { status: string; winner?: EntryJson; ranking?: EntryJson[]; rulesOnly: boolean; howToMeasure: string | null };
  suggestions: { action: string; rule: string; method?: string; columns?: { column: string }[]; createIndex: string | null; ruleText: string; tradeOff: string; verification: { status: string } }[];
  notes: string[];
}

describe('advice on shapes the generator does not write: PostgreSQL (real server)', function () {
  this.timeout(300_000);
  let admin: pg.Client;
  let client: pg.Client;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${DB}`);
    client = new pg.Client({ connectionString: pgUriFor(DB) });
    await client.connect();
    await loadPgShapes(client);
  });

  after(async function () {
    await client?.end();
    await admin?.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin?.query('DROP ROLE IF EXISTS qpi_shapes_noext').catch(() => {});
    await admin?.end();
  });

  /** Every index, every extension and every temporary table: what a measurement must leave as it was. */
  async function state(): Promise<string> {
    const ix = await client.query("SELECT indexname FROM pg_indexes WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1");
    const ext = await client.query('SELECT extname FROM pg_extension ORDER BY 1');
    const temp = await client.query("SELECT count(*)::int AS n FROM pg_class WHERE relpersistence = 't'");
    return JSON.stringify({ indexes: ix.rows, extensions: ext.rows, temp: temp.rows[0].n });
  }

  async function advise(sql: string, uri = pgUriFor(DB), extra: string[] = []): Promise<AdviseJson> {
    const before = await state();
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { stdout: (x) => void out.push(x), stderr: (x) => void err.push(x), readStdin: () => '', readFile: () => '' };
    assert.equal(await run(['advise', '--uri', uri, '--json', ...extra, '--query', sql], io), 0, err.join(''));
    assert.equal(await state(), before, 'the measurement left something behind');
    return JSON.parse(out.join('')) as AdviseJson;
  }

  /** Buffers at the plan's root on the real table, with one index (and the extensions it needs) built in a rolled-back transaction. */
  async function buffers(sql: string, ddl: string | null): Promise<number> {
    await client.query('BEGIN');
    try {
      if (ddl !== null) {
        if (/gin_trgm_ops/.test(ddl)) await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
        if (/USING gin \([^)]*,/.test(ddl)) await client.query('CREATE EXTENSION IF NOT EXISTS btree_gin');
        await client.query(ddl.replace(/\bCONCURRENTLY\s+/, '').replace(/;\s*$/, ''));
      }
      const r = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`);
      const plan = (r.rows[0]['QUERY PLAN'] as { Plan: Record<string, number> }[])[0]!.Plan;
      return Number(plan['Shared Hit Blocks'] ?? 0) + Number(plan['Shared Read Blocks'] ?? 0);
    } finally {
      await client.query('ROLLBACK');
    }
  }

  it('a function over a column: an expression index, not the plain index on the column, offline and measured', async function () {
    const sql = sqlOf('p-expression');
    const offline = await advisePostgres(sql);
    assert.equal(offline.suggestions[0]!.createText, 'CREATE INDEX CONCURRENTLY ON accounts ((lower(email)));');
    assert.match(offline.suggestions[0]!.ruleText, /an index on the bare column cannot be used/);
    const doc = await advise(sql);
    assert.equal(doc.measurement.status, 'measured', JSON.stringify(doc.measurement));
    const first = doc.suggestions[0]!;
    assert.equal(first.action, 'create');
    assert.equal(first.createIndex, 'CREATE INDEX CONCURRENTLY ON accounts ((lower(email)));');
    assert.ok(!doc.suggestions.some((s) => s.action === 'keep'), 'the plain index on email is not kept for lower(email)');
    const today = await buffers(sql, null);
    const withIt = await buffers(sql, first.createIndex);
    assert.ok(withIt * 10 < today, `the expression index reads ${withIt} buffers, today ${today}`);
  });

  it('a case-insensitive substring with the tenant: a trigram GIN with the tenant through btree_gin offline; measured with pg_trgm created and rolled back', async function () {
    const sql = sqlOf('p-trigram-tenant');
    const offline = await advisePostgres(sql);
    assert.equal(offline.suggestions[0]!.createText, 'CREATE INDEX CONCURRENTLY ON accounts USING gin (tenant_id, name gin_trgm_ops);');
    assert.match(offline.suggestions[0]!.ruleText, /no B-tree on name can serve it/);
    assert.match(offline.suggestions[0]!.tradeOff, /CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE EXTENSION IF NOT EXISTS btree_gin;/);
    assert.ok(!offline.suggestions.some((s) => s.index?.engine === 'postgres' && s.index.method === 'btree' && s.index.keys.some((k) => k.column === 'name')), 'no B-tree on name');
    const doc = await advise(sql);
    assert.equal(doc.measurement.status, 'measured', JSON.stringify(doc.measurement));
    const trigram = doc.measurement.ranking!.filter((e) => /gin_trgm_ops/.test(e.createIndex ?? ''));
    assert.ok(trigram.length > 0 && trigram.every((e) => e.work !== null), JSON.stringify(trigram));
    assert.ok(doc.notes.some((n) => /pg_trgm .*created inside the measurement's transaction.*rolled back with it/.test(n)), doc.notes.join(' | '));
    const winner = doc.measurement.winner!;
    assert.match(winner.createIndex ?? '', /gin_trgm_ops/, JSON.stringify(doc.measurement.ranking));
    assert.ok(doc.notes.some((n) => /not installed in this database: run CREATE EXTENSION IF NOT EXISTS pg_trgm;/.test(n)), doc.notes.join(' | '));
    const today = await buffers(sql, null);
    const withIt = await buffers(sql, winner.createIndex);
    assert.ok(withIt < today, `the trigram GIN reads ${withIt} buffers, today ${today}`);
  });

  it('a leading wildcard without equality: a trigram GIN offline, where before nothing was suggested', async function () {
    const offline = await advisePostgres(sqlOf('p-trigram'));
    assert.equal(offline.suggestions[0]!.createText, 'CREATE INDEX CONCURRENTLY ON accounts USING gin (name gin_trgm_ops);');
    assert.match(offline.suggestions[0]!.ruleText, /starts with a wildcard/);
  });

  it('jsonb containment with an equality: one GIN over both through btree_gin, created inside the rolled-back transaction, beats a B-tree and a GIN on attrs', async function () {
    const sql = sqlOf('p-jsonb-tenant');
    const offline = await advisePostgres(sql);
    assert.ok(offline.suggestions.some((s) => s.createText === 'CREATE INDEX CONCURRENTLY ON accounts USING gin (tenant_id, attrs jsonb_path_ops);' && /btree_gin/.test(s.tradeOff)), JSON.stringify(offline.suggestions.map((s) => s.createText)));
    const doc = await advise(sql);
    assert.equal(doc.measurement.status, 'measured', JSON.stringify(doc.measurement));
    const combined = doc.measurement.ranking!.find((e) => /USING gin \(tenant_id, attrs/.test(e.createIndex ?? ''));
    assert.ok(combined && combined.work !== null, JSON.stringify(doc.measurement.ranking));
    const btree = doc.measurement.ranking!.find((e) => e.createIndex === 'CREATE INDEX CONCURRENTLY ON accounts (tenant_id);');
    const ginAlone = doc.measurement.ranking!.find((e) => /USING gin \(attrs/.test(e.createIndex ?? ''));
    assert.ok(btree?.work && ginAlone?.work, JSON.stringify(doc.measurement.ranking));
    assert.ok(combined.work! < btree.work! && combined.work! < ginAlone.work!, `GIN (tenant_id, attrs) ${combined.work}, B-tree (tenant_id) ${btree.work}, GIN (attrs) ${ginAlone.work}`);
    assert.match(doc.measurement.winner!.createIndex ?? '', /USING gin \(tenant_id, attrs/);
    assert.ok(doc.notes.some((n) => /btree_gin .*created inside the measurement's transaction/.test(n)), doc.notes.join(' | '));
    const today = await buffers(sql, null);
    assert.ok((await buffers(sql, doc.measurement.winner!.createIndex)) < today);
  });

  it('jsonb with an equality, for a role that may not create extensions: the GIN over both is named with the command that enables btree_gin', async function () {
    await admin.query('DROP ROLE IF EXISTS qpi_shapes_noext');
    await admin.query("CREATE ROLE qpi_shapes_noext LOGIN PASSWORD 'noext-pw'");
    await client.query('GRANT SELECT ON accounts TO qpi_shapes_noext');
    const u = new URL(pgUriFor(DB));
    u.username = 'qpi_shapes_noext';
    u.password = 'noext-pw';
    const doc = await advise(sqlOf('p-jsonb-tenant'), u.toString());
    assert.equal(doc.measurement.status, 'measured', JSON.stringify(doc.measurement));
    const combined = doc.measurement.ranking!.find((e) => /USING gin \(tenant_id, attrs/.test(e.createIndex ?? ''));
    assert.ok(combined && combined.work === null && /permission denied/.test(combined.error ?? ''), JSON.stringify(combined));
    assert.ok(doc.notes.some((n) => /USING gin \(tenant_id, attrs.*may be the better option but was not measured.*CREATE EXTENSION IF NOT EXISTS btree_gin;/.test(n)), doc.notes.join(' | '));
  });

  it('the door creates only btree_gin and pg_trgm, only inside a transaction, and the rollback undoes them', async function () {
    const c = new pg.Client({ connectionString: pgUriFor(DB) });
    await c.connect();
    try {
      const before = await state();
      await assert.rejects(pgSend(c, 'CREATE EXTENSION IF NOT EXISTS btree_gin'), /only for a measurement/);
      await assert.rejects(pgSend(c, 'SELECT 1; create   extension pg_trgm'), /only for a measurement/);
      await assert.rejects(pgTrialExtensions(c, ['btree_gin'], async () => 1), /SAVEPOINT can only be used in transaction blocks/);
      await c.query('BEGIN');
      await assert.rejects(pgTrialExtensions(c, ['hstore'], async () => 1), /not one a measurement may create/);
      const inside = await pgTrialExtensions(c, ['btree_gin', 'pg_trgm'], async (created) => {
        const r = await c.query("SELECT array_agg(extname::text ORDER BY extname) AS e FROM pg_extension WHERE extname IN ('btree_gin', 'pg_trgm')");
        return { created, present: r.rows[0].e as string[] };
      });
      assert.deepEqual(inside, { created: ['btree_gin', 'pg_trgm'], present: ['btree_gin', 'pg_trgm'] });
      const after = await c.query("SELECT count(*)::int AS n FROM pg_extension WHERE extname IN ('btree_gin', 'pg_trgm')");
      assert.equal(after.rows[0].n, 0, 'the extensions are gone inside the transaction already');
      await c.query('COMMIT');
      assert.equal(await state(), before);
    } finally {
      await c.end();
    }
  });

  it('two ranges: the one counted more selective goes first, whatever the text order', async function () {
    const sql = sqlOf('p-two-ranges');
    const offline = await advisePostgres(sql);
    assert.equal((offline.suggestions[0]!.index as { keys: { column: string }[] }).keys[0]!.column, 'created_at');
    const session = await openPostgresAdvice({ uri: pgUriFor(DB) });
    try {
      const live = await advisePostgresLive(session, sql, { measure: false });
      const first = live.advice.suggestions[0]!;
      assert.equal((first.index as { keys: { column: string }[] }).keys.map((k) => k.column).join(', '), 'score, created_at');
      assert.ok(live.advice.notes.some((n) => /Ranges on accounts counted with count\(\*\) to put the most selective first \(created_at > '2024-01-02': 59,\d{3}; score BETWEEN 10 AND 12: 180 /.test(n)), live.advice.notes.join(' | '));
    } finally {
      await session.close();
    }
    const doc = await advise(sql);
    assert.equal(doc.measurement.status, 'measured');
    assert.match(doc.measurement.winner!.createIndex ?? '', /\(score/);
  });
});
