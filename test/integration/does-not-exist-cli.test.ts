// The command line says what is not there, on real servers (PostgreSQL 15 and MongoDB 6.0 started by
// scripts/with-servers.mjs): `qpi advise --uri` refuses a table or collection the database does not have
// in one sentence naming the database, and names a view as a view instead of indexing it; `qpi explain`
// says the same of a missing collection (whose plan reads nothing) and a missing table (which PostgreSQL
// cannot plan); `qpi check` reports a query on a missing table or collection under its own rule,
// qpi.does-not-exist, never as a scan, and it fails a new query.

import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { run } from '../../src/cli/main';
import { capturedIo } from './support/cliIo';
import { env, pgUriFor } from './support/env';

const DB = 'qpi_dne_cli';

function mongoUriFor(db: string): string {
  const u = new URL(env.mongoUri);
  u.pathname = `/${db}`;
  return u.toString();
}

async function qpi(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = capturedIo();
  const code = await run(args, io);
  return { code, out: io.out, err: io.err };
}

describe('the command line says what is not there', function () {
  let admin: pg.Client;
  let mongo: MongoClient;
  const pgHost = (): string => new URL(env.pgUri).host;
  const mongoHost = (): string => new URL(env.mongoUri).host;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.query(`CREATE DATABASE ${DB}`);
    const c = new pg.Client({ connectionString: pgUriFor(DB) });
    await c.connect();
    try {
      await c.query(`
        CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
        INSERT INTO orders (id, customer_id, status) SELECT g, g % 500, CASE WHEN g % 7 = 0 THEN 'open' ELSE 'done' END FROM generate_series(1, 5000) g;
        CREATE INDEX orders_customer_idx ON orders (customer_id);
        CREATE VIEW open_orders AS SELECT * FROM orders WHERE status = 'open';
        ANALYZE orders;
      `);
    } finally {
      await c.end();
    }
    mongo = await MongoClient.connect(env.mongoUri);
    const db = mongo.db(DB);
    await db.dropDatabase();
    await db.collection('orders').insertMany(Array.from({ length: 2000 }, (_, i) => ({ status: i % 100 === 0 ? 'new' : 'paid', userId: `u${i % 20}` })));
  });

  after(async function () {
    await mongo?.db(DB).dropDatabase().catch(() => {});
    await mongo?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin?.end();
  });

  it('qpi advise refuses a missing table and a missing collection in one sentence naming the database', async function () {
    const sql = await qpi('advise', '--uri', pgUriFor(DB), '--query', 'SELECT * FROM orders_v2 WHERE status = $1 ORDER BY created_at DESC LIMIT 20');
    assert.equal(sql.code, 2, sql.out);
    assert.equal(sql.err.trim(), `orders_v2 does not exist on ${pgHost()}/${DB}.`);
    assert.equal(sql.out, '');
    const mongoQuery = await qpi('advise', '--uri', mongoUriFor(DB), '--query', "db.orders_v2.find({ _id: 'x', userId: 'u1' })", '--verify');
    assert.equal(mongoQuery.code, 2, mongoQuery.out);
    assert.equal(mongoQuery.err.trim(), `orders_v2 does not exist on ${mongoHost()}/${DB}.`);
    // The collection that exists is advised, never on _id.
    const there = await qpi('advise', '--uri', mongoUriFor(DB), '--query', "db.orders.find({ status: 'new' })", '--json');
    assert.equal(there.code, 0, there.err);
    const doc = JSON.parse(there.out) as { suggestions: { createIndex: string | null }[]; notIndexable: string | null };
    assert.equal(doc.notIndexable, null);
    assert.match(doc.suggestions[0]?.createIndex ?? '', /status: 1/);
  });

  it('qpi advise names a view as a view and measures nothing on it', async function () {
    const r = await qpi('advise', '--uri', pgUriFor(DB), '--query', 'SELECT * FROM open_orders WHERE customer_id = $1', '--json');
    assert.equal(r.code, 0, r.err);
    const doc = JSON.parse(r.out) as { suggestions: unknown[]; notIndexable: string | null; measurement: { status: string; reason: string } };
    assert.deepEqual(doc.suggestions, []);
    const sentence = `open_orders is a view on ${pgHost()}/${DB}, which takes no index: index what it reads, orders.`;
    assert.equal(doc.notIndexable, sentence);
    assert.deepEqual([doc.measurement.status, doc.measurement.reason], ['not-measured', sentence]);
    const text = await qpi('advise', '--uri', pgUriFor(DB), '--query', 'SELECT * FROM open_orders WHERE customer_id = $1');
    assert.ok(text.out.includes(`No suggestion: ${sentence}`), text.out);
  });

  it('qpi explain says a collection is not there, and a table PostgreSQL cannot plan, in the advice\'s words', async function () {
    const m = await qpi('explain', '--uri', mongoUriFor(DB), '--query', "db.orders_v2.find({ status: 'new' })");
    assert.equal(m.code, 0, m.err);
    assert.ok(m.err.includes(`note: orders_v2 does not exist on ${mongoHost()}/${DB}: the plan reads nothing, and no index is advised for it.`), m.err);
    const present = await qpi('explain', '--uri', mongoUriFor(DB), '--query', "db.orders.find({ status: 'new' })");
    assert.equal(present.code, 0, present.err);
    assert.doesNotMatch(present.err, /does not exist/);
    const p = await qpi('explain', '--uri', pgUriFor(DB), '--query', 'SELECT * FROM orders_v2 WHERE status = $1');
    assert.equal(p.code, 2);
    assert.match(p.err, new RegExp(`^orders_v2 does not exist on ${pgHost().replace(/\./g, '\\.')}/${DB}: PostgreSQL cannot plan the statement \\(relation "orders_v2" does not exist\\)\\.`));
  });

  it('qpi check reports a query on a missing table or collection under qpi.does-not-exist, not as a scan, and fails it as new', async function () {
    const app = mkdtempSync(join(tmpdir(), 'qpi-dne-'));
    try {
      mkdirSync(join(app, 'src'));
      writeFileSync(join(app, 'src', 'orders.js'), [
        "const { MongoClient } = require('mongodb');",
        "const db = new MongoClient('mongodb://localhost').db('qpi_dne_cli');",
        'async function open(client) {',
        "  return client.query('SELECT id FROM orders WHERE customer_id = 42');",
        '}',
        'async function archived(client) {',
        "  return client.query('SELECT id FROM orders_archive WHERE customer_id = 42');",
        '}',
        'async function legacy() {',
        "  return db.collection('orders_v2').findOne({ _id: 'x', userId: 'u1' });",
        '}',
        'module.exports = { open, archived, legacy };',
        '',
      ].join('\n'));
      const io = capturedIo();
      const code = await run(['check', join(app, 'src'), '--uri', pgUriFor(DB), '--uri', env.mongoUri, '--lock', join(app, 'qpi.lock.json'), '--json'], io);
      const doc = JSON.parse(io.out) as { queries: { key: string; line: number; outcome: string; notExplainable?: string; results: { rule: string; fails: boolean }[] }[] };
      assert.equal(code, 3, io.err);
      const byLine = new Map(doc.queries.map((q) => [q.line, q]));
      const archived = byLine.get(7)!;
      assert.ok(archived, JSON.stringify(doc.queries.map((q) => q.line)));
      assert.deepEqual(archived.results.map((r) => [r.rule, r.fails]), [['qpi.does-not-exist', true]]);
      assert.equal(archived.notExplainable, 'orders_archive does not exist on the CI database');
      const legacy = byLine.get(10)!;
      assert.deepEqual(legacy.results.map((r) => [r.rule, r.fails]), [['qpi.does-not-exist', true]]);
      assert.ok(!legacy.results.some((r) => r.rule === 'qpi.collection-scan'));
      const open = byLine.get(4)!;
      assert.equal(open.outcome, 'passed');
      assert.ok(!open.results.some((r) => r.rule === 'qpi.does-not-exist'));
      // Reported without failing when the configuration says so.
      writeFileSync(join(app, 'qpi.config.json'), JSON.stringify({ rules: { 'qpi.does-not-exist': { fail: false } } }));
      const io2 = capturedIo();
      const code2 = await run(['check', join(app, 'src'), '--uri', pgUriFor(DB), '--uri', env.mongoUri, '--lock', join(app, 'qpi.lock.json'), '--json'], io2);
      const doc2 = JSON.parse(io2.out) as typeof doc;
      assert.ok(doc2.queries.every((q) => q.results.every((r) => r.rule !== 'qpi.does-not-exist' || !r.fails)), io2.out);
      assert.equal(code2, 0, io2.out);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });
});
