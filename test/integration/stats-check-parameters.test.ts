// `qpi check` on statements whose $n parameters the code binds at run time: on PostgreSQL 18 (embedded)
// they are explained as generic plans, on PostgreSQL 15 (the test servers, which have no GENERIC_PLAN)
// with values chosen from the statistics of the columns they are compared to; a parameter compared to
// no column stays not explainable, with the reason. The lock says which way each plan was made.

import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { run } from '../../src/cli/main';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../scripts/embedded-postgres';
import { capturedIo } from './support/cliIo';
import { env } from './support/env';

const DB = 'qpi_check_params';
const SETUP = [
  'CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL, customer_id int NOT NULL, total numeric NOT NULL)',
  "INSERT INTO orders SELECT g, CASE WHEN g % 2000 = 0 THEN 'pending' ELSE 'done' END, g % 5000, g FROM generate_series(1, 50000) g",
  'CREATE INDEX orders_customer ON orders (customer_id)',
  'VACUUM ANALYZE orders',
];
const SOURCE = `const { Pool } = require('pg');
const pool = new Pool();
async function byCustomer(customerId) {
  return pool.query('SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY id LIMIT $2', [customerId, 20]);
}
async function byTotal(low) {
  return pool.query('SELECT id FROM orders WHERE total > $1', [low]);
}
async function matching(pattern) {
  return pool.query('SELECT id FROM orders WHERE lower(status) LIKE $1', [pattern]);
}
module.exports = { byCustomer, byTotal, matching };
`;

interface Query { scope: string; status: string; notExplainable?: string; signature?: { parameters?: string; access: { path: string; index?: string }[] } }

function withDb(uri: string, db: string): string {
  const u = new URL(uri);
  u.pathname = `/${db}`;
  return u.toString();
}

describe('qpi check on statements with $n parameters (PostgreSQL 15 and 18)', function () {
  this.timeout(300_000);
  let pg18: EmbeddedServer | undefined;
  const uris: Record<'15' | '18', string> = { '15': '', '18': '' };
  const dir = mkdtempSync(join(tmpdir(), 'qpi-check-params-'));
  const app = join(dir, 'app');

  before(async function () {
    pg18 = await startEmbeddedPostgres({ prefix: 'qpi-params18-', password: 'qpi-test' });
    for (const [version, base] of [['15', env.pgUri], ['18', pg18.uri]] as const) {
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
      await admin.query(`CREATE DATABASE ${DB}`);
      await admin.end();
      const client = new pg.Client({ connectionString: withDb(base, DB) });
      await client.connect();
      for (const sql of SETUP) await client.query(sql);
      await client.end();
      uris[version] = withDb(base, DB);
    }
    mkdirSync(app);
    writeFileSync(join(app, 'orders.js'), SOURCE);
  });

  after(async function () {
    const admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin.end();
    await pg18?.pg.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function check(version: '15' | '18'): Promise<{ queries: Map<string, Query>; lock: Record<string, { signature?: { parameters?: string } }> }> {
    const lock = join(dir, `lock-${version}.json`);
    const io = capturedIo();
    assert.equal(await run(['check', app, '--uri', uris[version], '--lock', lock, '--update', '--json'], io), 0, io.err);
    const doc = JSON.parse(io.out) as { queries: Query[] };
    return { queries: new Map(doc.queries.map((q) => [q.scope, q])), lock: JSON.parse(readFileSync(lock, 'utf8')).queries };
  }

  it('explains them as generic plans on PostgreSQL 18', async function () {
    const { queries, lock } = await check('18');
    for (const scope of ['byCustomer', 'byTotal', 'matching']) {
      const q = queries.get(scope)!;
      assert.equal(q.status, 'explained', `${scope}: ${q.notExplainable}`);
      assert.equal(q.signature?.parameters, 'generic plan');
    }
    assert.deepEqual(queries.get('byCustomer')!.signature!.access.map((a) => a.index ?? a.path).sort(), ['orders_customer']);
    assert.ok(Object.values(lock).every((e) => e.signature?.parameters === 'generic plan'), JSON.stringify(lock));
  });

  it('binds them from the statistics on PostgreSQL 15, and says why one cannot be', async function () {
    const { queries } = await check('15');
    for (const scope of ['byCustomer', 'byTotal']) {
      const q = queries.get(scope)!;
      assert.equal(q.status, 'explained', `${scope}: ${q.notExplainable}`);
      assert.equal(q.signature?.parameters, 'bound from statistics');
    }
    // customer_id = a common value: the index; total > its 90th percentile: a tenth of the table.
    assert.deepEqual(queries.get('byCustomer')!.signature!.access.map((a) => a.index ?? a.path), ['orders_customer']);
    const m = queries.get('matching')!;
    assert.equal(m.status, 'not-explainable');
    assert.match(m.notExplainable ?? '', /^The SQL has \$n parameters bound at run time, and PostgreSQL 15\.\d+ has no generic plan \(16 and later\): \$1 is compared to no column whose statistics could give it a value \(lower\(status\) LIKE \$1\)\.$/);
  });
});
