// What the adapters do when things go wrong, on real servers: a server that is down, a wrong password,
// a syntax error, a time limit, a cancel (and the server really stops the work), and the guarantee that
// explaining a write changes no data. Every error must be one sentence with the right kind, without the
// password.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db } from 'mongodb';
import pg from 'pg';
import { AdapterError, type AdapterErrorKind } from '../../src/adapters/errors';
import { connectMongo, type MongoConnection } from '../../src/adapters/mongodb';
import { connectPostgres, type PostgresConnection } from '../../src/adapters/postgres';
import { parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import { closedPort, env, planOf } from './support/env';
import { until } from '../until';

const DB = 'qpi_failures';

function query(text: string): MongoCommand {
  const r = parseMongoQuery(text);
  if (!r.ok) assert.fail(r.error);
  return r.command;
}

/** Awaits a promise that must fail with an AdapterError of `kind`; checks the one-sentence rule. */
async function failsWith(kind: AdapterErrorKind, promise: Promise<unknown>, secret?: string): Promise<AdapterError> {
  let error: unknown;
  try {
    await promise;
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof AdapterError, `expected an AdapterError of kind ${kind}, got ${error === undefined ? 'success' : String(error)}`);
  assert.equal(error.kind, kind, error.message);
  assert.match(error.message, /^[A-Z].*\.$/, 'one sentence, capitalised, ending with a full stop');
  assert.doesNotMatch(error.message, /\n|\bat .*\.ts:\d+/, 'no newline, no stack');
  if (secret) assert.ok(!error.message.includes(secret), 'the password is not in the message');
  return error;
}

function withUser(uri: string, user: string, password?: string): string {
  const u = new URL(uri);
  u.username = user;
  if (password !== undefined) u.password = password;
  return u.toString();
}

describe('PostgreSQL failure paths', function () {
  let admin: pg.Client;
  let conn: PostgresConnection;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query('DROP TABLE IF EXISTS accounts; CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)');
    await admin.query('INSERT INTO accounts SELECT g, g * 10 FROM generate_series(1, 5000) g');
    conn = await connectPostgres({ uri: env.pgUri });
  });

  after(async function () {
    await conn?.close();
    await admin?.query('DROP TABLE IF EXISTS accounts').catch(() => {});
    await admin?.end();
  });

  it('server down: kind network, one sentence naming the host', async function () {
    const port = await closedPort();
    const err = await failsWith('network', connectPostgres({ uri: `postgresql://postgres@127.0.0.1:${port}/postgres`, connectTimeoutMs: 3000 }));
    assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  });

  it('wrong password: kind auth, the password never in the message; the right one connects', async function () {
    const wrong = 'not-the-password-Zx81';
    await failsWith('auth', connectPostgres({ uri: withUser(env.pgUri, env.pwUser), password: wrong }), wrong);
    await failsWith('auth', connectPostgres({ uri: withUser(env.pgUri, env.pwUser, wrong) }), wrong);
    const ok = await connectPostgres({ uri: withUser(env.pgUri, env.pwUser), password: env.pwPassword });
    assert.match(ok.serverVersion, /^15\./);
    await ok.close();
  });

  it('syntax errors: kind syntax with the position, from the parser and from the server', async function () {
    // "FORM" reads as a column alias, so the parser stops at the table name.
    const local = await failsWith('syntax', conn.explain('SELECT id FORM accounts'));
    assert.match(local.message, /line 1, column 16: syntax error at or near "accounts"/);
    const server = await failsWith('syntax', conn.explain('SELECT nope FROM accounts'));
    assert.match(server.message, /column "nope" does not exist/);
    assert.match(server.message, /line 1, column 8/);
    await failsWith('unsupported', conn.explain('SELECT 1; DROP TABLE accounts'));
    assert.equal((await admin.query('SELECT count(*)::int AS n FROM accounts')).rows[0].n, 5000, 'the second statement never ran');
  });

  it('statement_timeout: kind timeout, the server stops, the connection stays usable', async function () {
    const started = Date.now();
    await failsWith('timeout', conn.explain('SELECT pg_sleep(20)', { analyze: true, timeoutMs: 300 }));
    assert.ok(Date.now() - started < 5000, 'stopped by the server limit, not after the sleep');
    const after = await conn.explain('SELECT 1', { analyze: true });
    assert.equal(planOf(after).root.kind, 'Result');
  });

  it('cancel: kind cancelled, and pg_stat_activity shows the statement gone', async function () {
    const controller = new AbortController();
    const running = conn.explain('SELECT pg_sleep(30)', { analyze: true, signal: controller.signal, timeoutMs: 60_000 });
    const active = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE '%pg_sleep(30)%'";
    await until('the statement running on the server', async () => ((await admin.query(active, [conn.backendPid])).rows[0].n === 1 ? true : undefined));
    const started = Date.now();
    controller.abort();
    await failsWith('cancelled', running);
    assert.ok(Date.now() - started < 5000);
    assert.equal((await admin.query(active, [conn.backendPid])).rows[0].n, 0, 'nothing of it still runs');
    const state = (await admin.query('SELECT state FROM pg_stat_activity WHERE pid = $1', [conn.backendPid])).rows[0].state;
    assert.equal(state, 'idle', 'the explain transaction was rolled back, not left open');
  });

  it('cancel() on the connection stops a running explain the same way', async function () {
    const running = conn.explain('SELECT pg_sleep(30)', { analyze: true });
    const active = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE '%pg_sleep(30)%'";
    await until('the statement running on the server', async () => ((await admin.query(active, [conn.backendPid])).rows[0].n === 1 ? true : undefined));
    assert.equal(await conn.cancel(), true);
    await failsWith('cancelled', running);
    assert.equal(await conn.cancel(), false, 'nothing left to cancel');
  });

  it('a cancel that comes before the statement starts stops it too, and the connection stays usable', async function () {
    const controller = new AbortController();
    const running = conn.explain('SELECT pg_sleep(30)', { analyze: true, signal: controller.signal });
    controller.abort();
    const started = Date.now();
    await failsWith('cancelled', running);
    assert.ok(Date.now() - started < 5000);
    assert.equal(planOf(await conn.explain('SELECT 2')).root.kind, 'Result');
  });

  it('EXPLAIN ANALYZE of an UPDATE runs it, rolls it back, and says so; the rows are unchanged', async function () {
    const before = (await admin.query('SELECT sum(balance)::int AS s, count(*)::int AS n FROM accounts')).rows[0];
    const result = await conn.explain('UPDATE accounts SET balance = balance + 1000 WHERE id <= 2500', { analyze: true, buffers: true });
    const plan = planOf(result);
    assert.equal(plan.root.kind, 'ModifyTable');
    assert.equal(plan.root.details.operation, 'Update');
    assert.equal(plan.root.children[0]!.metrics.rowsReturned, 2500, 'the update really ran over 2,500 rows');
    assert.equal(result.rolledBack, true);
    assert.equal(result.writes, true);
    assert.ok(result.notes.some((n) => /rolled back/.test(n)), result.notes.join(' '));
    const after = (await admin.query('SELECT sum(balance)::int AS s, count(*)::int AS n FROM accounts')).rows[0];
    assert.deepEqual(after, before);
  });

  it('a CTE that deletes is treated as a write and rolled back too', async function () {
    const result = await conn.explain('WITH gone AS (DELETE FROM accounts WHERE id <= 100 RETURNING id) SELECT count(*) FROM gone', { analyze: true });
    assert.equal(result.rolledBack, true);
    assert.equal((await admin.query('SELECT count(*)::int AS n FROM accounts')).rows[0].n, 5000);
  });
});

describe('MongoDB failure paths', function () {
  let client: MongoClient;
  let db: Db;
  let conn: MongoConnection;

  before(async function () {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db(DB);
    await db.dropDatabase();
    await db.collection<{ _id: number; a: number }>('slow').insertMany(Array.from({ length: 600 }, (_, i) => ({ _id: i, a: i % 7 })));
    conn = await connectMongo({ uri: env.mongoUri });
  });

  after(async function () {
    await conn?.close();
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  it('server down: kind network, one sentence naming the host', async function () {
    const port = await closedPort();
    const err = await failsWith('network', connectMongo({ uri: `mongodb://127.0.0.1:${port}/?directConnection=true`, connectTimeoutMs: 2000 }));
    assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  });

  it('wrong password: kind auth, the password never in the message; the right one connects', async function () {
    const wrong = 'not-the-password-Qy72';
    await failsWith('auth', connectMongo({ uri: withUser(env.mongoUri, env.pwUser), password: wrong, connectTimeoutMs: 5000 }), wrong);
    await failsWith('auth', connectMongo({ uri: withUser(env.mongoUri, env.pwUser, wrong), connectTimeoutMs: 5000 }), wrong);
    const ok = await connectMongo({ uri: withUser(env.mongoUri, env.pwUser), password: env.pwPassword });
    assert.equal(ok.server.version, '6.0.5');
    await ok.close();
  });

  it('a query the server rejects: kind syntax with its reason', async function () {
    const err = await failsWith('syntax', conn.explain(query('db.slow.find({a: {$bogus: 1}})'), { database: DB }));
    assert.match(err.message, /unknown operator: \$bogus/);
    const stage = await failsWith('syntax', conn.explain(query('db.slow.aggregate([{$nostage: {}}])'), { database: DB }));
    assert.match(stage.message, /\$nostage/);
  });

  it('maxTimeMS: kind timeout, stopped on the server, with the partial explain kept', async function () {
    const started = Date.now();
    const err = await failsWith('timeout', conn.explain(query('db.slow.find({$where: "sleep(20) || true"})'), { verbosity: 'executionStats', timeoutMs: 300, database: DB }));
    assert.ok(Date.now() - started < 5000, 'stopped by the server limit');
    assert.ok(err.partialRawText && JSON.parse(err.partialRawText).executionStats.executionSuccess === false);
  });

  it('cancel: kind cancelled, and currentOp shows the operation gone', async function () {
    const controller = new AbortController();
    const running = conn.explain(query('db.slow.find({$where: "sleep(50) || true"})'), { verbosity: 'executionStats', signal: controller.signal, database: DB, timeoutMs: 120_000 });
    const ops = async () => (await client.db('admin').command({ currentOp: true, 'command.explain.find': 'slow', ns: `${DB}.slow` })).inprog as unknown[];
    await until('the explain running on the server', async () => ((await ops()).length === 1 ? true : undefined));
    const started = Date.now();
    controller.abort();
    await failsWith('cancelled', running);
    assert.ok(Date.now() - started < 5000);
    assert.equal((await ops()).length, 0, 'the operation was killed on the server');
  });

  it('refuses to run a $out pipeline at executionStats without consent, and writes nothing', async function () {
    const out = query('db.slow.aggregate([{$match: {a: 1}}, {$out: "copied"}])');
    const err = await failsWith('unsupported', conn.explain(out, { verbosity: 'executionStats', database: DB }));
    assert.match(err.message, /\$out/);
    const planned = await conn.explain(out, { verbosity: 'queryPlanner', database: DB });
    assert.equal(planned.writes, true);
    assert.deepEqual(await db.listCollections({ name: 'copied' }).toArray(), []);
  });

  it('explains updateMany and deleteMany at executionStats without changing a document', async function () {
    const before = await db.collection('slow').find({}).sort({ _id: 1 }).toArray();
    const update = await conn.explain(query('db.slow.updateMany({a: 1}, {$inc: {a: 100}})'), { verbosity: 'executionStats', database: DB });
    const plan = planOf(update);
    assert.equal(plan.root.kind, 'UPDATE');
    assert.equal(plan.totals.docsExamined, 600);
    assert.equal(update.writes, true);
    await conn.explain(query('db.slow.deleteMany({})'), { verbosity: 'executionStats', database: DB });
    assert.deepEqual(await db.collection('slow').find({}).sort({ _id: 1 }).toArray(), before);
  });
});
