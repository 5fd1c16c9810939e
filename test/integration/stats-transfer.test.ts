// `qpi stats export` / `qpi stats import` on real servers. A production database on the embedded
// PostgreSQL 18 holds 200,000 orders of which one in 2,000 is pending; a CI copy holds 1,000 orders, half
// of them pending, analysed on its own. The same query plans differently on the two, and after the
// production statistics are imported into the CI copy it plans as production does, with production's row
// estimate under --match-pages; `qpi check` then gives the CI copy production's lock. Nothing but
// statistics changes in the CI copy. PostgreSQL 15 (the test servers) is refused in one sentence.

import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { run } from '../../src/cli/main';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../scripts/embedded-postgres';
import { capturedIo } from './support/cliIo';
import { env } from './support/env';

const TABLE = 'CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL, customer_id int NOT NULL, total numeric NOT NULL)';
const PROD = [
  TABLE,
  "INSERT INTO orders SELECT g, CASE WHEN g % 2000 = 0 THEN 'pending' ELSE 'done' END, g % 5000, g FROM generate_series(1, 200000) g",
  'CREATE INDEX orders_status ON orders (status)',
  'VACUUM ANALYZE orders',
];
const CI = [
  TABLE,
  "INSERT INTO orders SELECT g, CASE WHEN g % 2 = 0 THEN 'pending' ELSE 'done' END, g % 50, g FROM generate_series(1, 1000) g",
  'CREATE INDEX orders_status ON orders (status)',
  'VACUUM ANALYZE orders',
];
const QUERY = "SELECT id, total FROM orders WHERE status = 'pending'";

interface PlanNode { 'Node Type': string; 'Plan Rows': number; 'Index Name'?: string; Plans?: PlanNode[] }

function withDb(uri: string, db: string): string {
  const u = new URL(uri);
  u.pathname = `/${db}`;
  return u.toString();
}

/** The plan's node types and indexes, root first, and the root's row estimate. */
async function planOf(client: pg.Client): Promise<{ shape: string; rows: number }> {
  const r = await client.query(`EXPLAIN (FORMAT JSON) ${QUERY}`);
  const root = (r.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
  const parts: string[] = [];
  const walk = (n: PlanNode): void => {
    parts.push(n['Index Name'] ? `${n['Node Type']} (${n['Index Name']})` : n['Node Type']);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(root);
  return { shape: parts.join(' > '), rows: root['Plan Rows'] };
}

/** What an import must not change: the rows, the relations, the indexes and their definitions. */
async function contents(client: pg.Client): Promise<string> {
  const rows = await client.query("SELECT count(*)::int AS n, sum(total)::text AS total, count(*) FILTER (WHERE status = 'pending')::int AS pending FROM orders");
  const rels = await client.query("SELECT c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY 1");
  const ix = await client.query("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1");
  return JSON.stringify([rows.rows, rels.rows, ix.rows]);
}

describe('qpi stats export and import (embedded PostgreSQL 18, PostgreSQL 15)', function () {
  this.timeout(300_000);
  let pg18: EmbeddedServer | undefined;
  let prod: pg.Client;
  let ci: pg.Client;
  let prodUri = '';
  let ciUri = '';
  const dir = mkdtempSync(join(tmpdir(), 'qpi-stats-'));
  const statsFile = join(dir, 'stats.json');

  before(async function () {
    pg18 = await startEmbeddedPostgres({ prefix: 'qpi-stats18-', password: 'qpi-test' });
    const admin = new pg.Client({ connectionString: pg18.uri });
    await admin.connect();
    await admin.query('CREATE DATABASE stats_prod');
    await admin.query('CREATE DATABASE stats_ci');
    await admin.end();
    prodUri = withDb(pg18.uri, 'stats_prod');
    ciUri = withDb(pg18.uri, 'stats_ci');
    prod = new pg.Client({ connectionString: prodUri });
    ci = new pg.Client({ connectionString: ciUri });
    await prod.connect();
    await ci.connect();
    for (const sql of PROD) await prod.query(sql);
    for (const sql of CI) await ci.query(sql);
    // No autovacuum ANALYZE may replace what the tests import.
    await ci.query('ALTER TABLE orders SET (autovacuum_enabled = false)');
  });

  after(async function () {
    await prod?.end().catch(() => {});
    await ci?.end().catch(() => {});
    await pg18?.pg.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports the statistics of the tables and indexes from pg_class and pg_stats', async function () {
    const io = capturedIo();
    assert.equal(await run(['stats', 'export', '--uri', prodUri, '--out', statsFile], io), 0, io.err);
    const file = JSON.parse((await import('node:fs')).readFileSync(statsFile, 'utf8'));
    const orders = file.relations.find((r: { name: string }) => r.name === 'orders');
    const real = (await prod.query("SELECT relpages, reltuples::float8 AS reltuples FROM pg_class WHERE relname = 'orders'")).rows[0];
    assert.equal(orders.relpages, real.relpages);
    assert.equal(orders.reltuples, real.reltuples);
    const status = orders.columns.find((c: { attname: string }) => c.attname === 'status');
    assert.equal(status.most_common_vals, '{done,pending}');
    assert.ok(status.most_common_freqs[1] < 0.01, `pending is rare in production: ${JSON.stringify(status)}`);
    assert.ok(file.relations.some((r: { name: string; kind: string; table?: string }) => r.name === 'orders_status' && r.kind === 'index' && r.table === 'orders'));
    assert.match(io.err, /Statistics of 3 relations and 4 columns read from stats_prod on PostgreSQL 18\.\d+\./);
  });

  it('makes the CI copy plan the query as production does, and changes nothing but statistics', async function () {
    const production = await planOf(prod);
    const own = await planOf(ci);
    assert.notEqual(own.shape, production.shape, `the CI copy must plan differently before the import: ${own.shape}`);
    const before = await contents(ci);

    // Production's page count: the planner scales the rows to the CI table's 7 pages, and says so.
    let io = capturedIo();
    assert.equal(await run(['stats', 'import', '--uri', ciUri, statsFile], io), 0, io.err);
    assert.match(io.err, /warning: public\.orders has \d+ pages? in the CI database against [\d,]+ in production, so the planner scales the imported 200,000 rows to [\d,]+: import with --match-pages/);
    assert.equal((await planOf(ci)).shape, production.shape);

    // The CI table's own page count: production's row estimate as well.
    io = capturedIo();
    assert.equal(await run(['stats', 'import', '--uri', ciUri, statsFile, '--match-pages', '--json'], io), 0, io.err);
    const report = JSON.parse(io.out);
    assert.equal(report.relations, 3);
    assert.equal(report.columns, 4);
    assert.deepEqual(report.scaled, []);
    assert.doesNotMatch(io.err, /warning:/);
    const after = await planOf(ci);
    assert.equal(after.shape, production.shape);
    assert.equal(after.rows, production.rows);
    assert.equal(await contents(ci), before, 'the import changed more than statistics');
    const stats = (await ci.query("SELECT most_common_vals::text AS mcv FROM pg_stats WHERE tablename = 'orders' AND attname = 'status'")).rows[0];
    assert.equal(stats.mcv, '{done,pending}');
  });

  it('gives the CI copy the lock qpi check wrote on production', async function () {
    const app = join(dir, 'app');
    (await import('node:fs')).mkdirSync(app);
    writeFileSync(join(app, 'pending.sql'), `${QUERY};\n`);
    const lock = join(dir, 'qpi.lock.json');
    let io = capturedIo();
    assert.equal(await run(['check', app, '--uri', prodUri, '--lock', lock, '--update'], io), 0, io.err);
    io = capturedIo();
    assert.equal(await run(['check', app, '--uri', ciUri, '--lock', lock, '--json'], io), 0, io.err);
    const locked = Object.values(JSON.parse((await import('node:fs')).readFileSync(lock, 'utf8')).queries)[0] as { signature: unknown; counters: { rows: number } };
    const doc = JSON.parse(io.out);
    const q = doc.queries[0];
    assert.equal(q.outcome, 'passed', JSON.stringify(q));
    // The plan and its row estimate are production's; the cost follows the CI table's real pages.
    assert.deepEqual(q.signature, locked.signature);
    assert.equal(q.counters.rows, locked.counters.rows);
    // ANALYZE on the CI copy puts its own statistics back: the query loses production's index.
    await ci.query('ANALYZE orders');
    io = capturedIo();
    assert.equal(await run(['check', app, '--uri', ciUri, '--lock', lock, '--json'], io), 3, io.err);
    const again = JSON.parse(io.out).queries[0];
    assert.equal(again.signature.access[0].path, 'full-scan');
    assert.ok(again.results.some((r: { rule: string; fails: boolean }) => r.rule === 'qpi.check.lost-index' && r.fails), JSON.stringify(again.results));
  });

  it('refuses PostgreSQL 15 in one sentence, before anything is written', async function () {
    const io = capturedIo();
    assert.equal(await run(['stats', 'import', '--uri', env.pgUri, statsFile], io), 2);
    assert.match(io.err, /^PostgreSQL 15\.\d+ cannot take statistics in: pg_restore_relation_stats and pg_restore_attribute_stats arrived in PostgreSQL 18, so run the CI database on 18 or later\.\n$/);
  });
});
