// `qpi explain` as a user runs it: the built binary against the real servers, on the seeds' orders query,
// and its failure paths (wrong password, server down), each one sentence with exit code 2.

import { strict as assert } from 'node:assert';
import { MongoClient } from 'mongodb';
import { Client } from 'pg';
import { qpi } from './support/cli';
import { closedPort, env } from './support/env';
import { orderDocs, type OrderDoc } from './support/seed';

const DB = 'qpi_cli';

function withDb(uri: string, db: string): string {
  const u = new URL(uri);
  u.pathname = `/${db}`;
  return u.toString();
}

describe('qpi explain on real servers', function () {
  before(async function () {
    const client = await MongoClient.connect(env.mongoUri);
    try {
      const db = client.db(DB);
      await db.dropDatabase();
      await db.collection<OrderDoc>('orders').insertMany(orderDocs(5_000));
      await db.collection('orders').createIndex({ country_id: 1, 'order_details.product_id': 1, created_at: -1 });
    } finally {
      await client.close();
    }
    const pg = new Client({ connectionString: env.pgUri });
    await pg.connect();
    try {
      await pg.query('DROP TABLE IF EXISTS cli_orders');
      await pg.query('CREATE TABLE cli_orders AS SELECT g AS id, g % 50 AS customer_id, now() - g * interval \'1 minute\' AS created_at FROM generate_series(1, 20000) g');
      await pg.query('CREATE INDEX ON cli_orders (created_at)');
      await pg.query('ANALYZE cli_orders');
    } finally {
      await pg.end();
    }
  });

  it('prints the seeds\' numbers for the orders query: 10 keys, 10 documents, 10 returned, seeks 1', async function () {
    const query = 'db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}}).sort({created_at: -1}).limit(10)';
    const r = await qpi(['explain', '--uri', withDb(env.mongoUri, DB), '--query', query, '--verbosity', 'executionStats', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as { engine: string; totals: Record<string, number>; nodeCount: number; findings: { code: string }[] };
    assert.equal(doc.engine, 'mongodb');
    assert.deepEqual([doc.totals.keysExamined, doc.totals.docsExamined, doc.totals.nReturned], [10, 10, 10]);
    assert.equal(doc.nodeCount, 3);
    assert.ok(!doc.findings.some((f) => f.code === 'mongo.blocking-sort'));
    const text = await qpi(['explain', '--uri', withDb(env.mongoUri, DB), '--query', query, '--verbosity', 'executionStats']);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /IXSCAN \{ country_id: 1, 'order_details\.product_id': 1, created_at: -1 \}\s+returned 10 · keys 10 · seeks 1/);
  });

  it('reports OFFSET pagination reading what it skips on PostgreSQL', async function () {
    const r = await qpi(['explain', '--uri', env.pgUri, '--query', 'SELECT * FROM cli_orders ORDER BY created_at DESC OFFSET 10000 LIMIT 20', '--analyze', '--buffers', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as { engine: string; totals: { rows: number; executionTimeMs: number }; findings: { code: string; numbers: Record<string, number> }[] };
    assert.equal(doc.engine, 'postgres');
    assert.equal(doc.totals.rows, 20);
    assert.equal(typeof doc.totals.executionTimeMs, 'number');
    const offset = doc.findings.find((f) => f.code === 'pg.offset-reads');
    assert.ok(offset, `expected pg.offset-reads among ${doc.findings.map((f) => f.code).join(', ')}`);
  });

  it('says the password is wrong in one sentence, without the password, exit 2', async function () {
    const u = new URL(env.pgUri);
    u.username = env.pwUser;
    u.password = '';
    const r = await qpi(['explain', '--uri', u.toString(), '--query', 'SELECT 1'], { QPI_PASSWORD: 'definitely-wrong-pw' });
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^[^\n]+\.\n$/);
    assert.match(r.stderr, /password|authentication/i);
    assert.ok(!r.stderr.includes('definitely-wrong-pw'));
  });

  it('says the server is not reachable in one sentence, exit 2', async function () {
    const port = await closedPort();
    const r = await qpi(['explain', '--uri', `mongodb://127.0.0.1:${port}/x?serverSelectionTimeoutMS=1500`, '--query', 'db.c.find({})']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^[^\n]+\.\n$/);
  });

  it('refuses query text it cannot read without running it', async function () {
    const r = await qpi(['explain', '--uri', env.mongoUri, '--query', "db.c.find({$where: require('fs').rmSync('/x')})"]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^[^\n]+\.\n$/);
  });
});
