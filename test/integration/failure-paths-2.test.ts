// More of what goes wrong on real servers, each in one sentence of ours: a PostgreSQL backend ended under
// an explain or a measurement, a table whose rules add actions to a DELETE, SELECT INTO under ANALYZE, a
// port out of range, and a port that answers in another protocol than MongoDB's.

import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import pg from 'pg';
import { openPostgresAdvice, type PostgresAdviceSession } from '../../src/adapters/advise';
import { advisePostgresLive } from '../../src/adapters/adviceService';
import { AdapterError } from '../../src/adapters/errors';
import { connectMongo } from '../../src/adapters/mongodb';
import { connectPostgres, type PostgresConnection } from '../../src/adapters/postgres';
import { env, planOf } from './support/env';
import { until } from '../until';

const DB = 'qpi_failures_2';

function uriFor(db: string): string {
  const u = new URL(env.pgUri);
  u.pathname = `/${db}`;
  return u.toString();
}

/** Awaits a promise that must fail with an AdapterError; checks the one-sentence rule. */
async function failure(promise: Promise<unknown>): Promise<AdapterError> {
  let error: unknown;
  try {
    await promise;
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof AdapterError, `expected an AdapterError, got ${error === undefined ? 'success' : String(error)}`);
  assert.match(error.message, /^[A-Z].*\.$/, 'one sentence, capitalised, ending with a full stop');
  assert.doesNotMatch(error.message, /\n/);
  return error;
}

/** Ends the backends whose statement matches `like`, once one runs; returns how many were ended. */
async function terminateWhenActive(admin: pg.Client, like: string): Promise<number> {
  return until(`a backend running ${like}`, async () => {
    const r = await admin.query<{ n: number }>(
      "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE $1",
      [like],
    );
    return r.rows[0]!.n > 0 ? r.rows[0]!.n : false;
  }, { timeoutMs: 20_000, pauseMs: 5 });
}

describe('PostgreSQL failure paths, continued', function () {
  let admin: pg.Client;
  let db: pg.Client;
  let conn: PostgresConnection;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${DB}`);
    db = new pg.Client({ connectionString: uriFor(DB) });
    await db.connect();
    await db.query('CREATE TABLE ledger (id int PRIMARY KEY, account int NOT NULL, amount int NOT NULL, memo text)');
    await db.query("INSERT INTO ledger SELECT g, g % 5000, g % 97, repeat('x', 200) FROM generate_series(1, 600000) g");
    await db.query('CREATE TABLE ledger_audit (id int)');
    await db.query('CREATE TABLE entries (id int PRIMARY KEY, v int)');
    await db.query('INSERT INTO entries SELECT g, g FROM generate_series(1, 1000) g');
    await db.query('ANALYZE');
    conn = await connectPostgres({ uri: uriFor(DB) });
  });

  after(async function () {
    await conn?.close();
    await db?.end();
    await admin?.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin?.end();
  });

  it('says in its own words that the server ended the connection under an explain', async function () {
    const victim = await connectPostgres({ uri: uriFor(DB) });
    try {
      const running = failure(victim.explain('SELECT pg_sleep(60)', { analyze: true, allowSideEffects: true }));
      await terminateWhenActive(admin, 'EXPLAIN%pg_sleep(60)%');
      const error = await running;
      assert.equal(error.kind, 'network', error.message);
      assert.match(error.message, /^The PostgreSQL connection to 127\.0\.0\.1:\d+ was lost while the explain ran: the server ended it \(an administrator or another session terminated this backend/);
      assert.doesNotMatch(error.message, /terminating connection|Connection terminated|administrator command/);
      // The next explain on the dead connection says so too, without the driver's words.
      const next = await failure(victim.explain('SELECT 1'));
      assert.equal(next.kind, 'network', next.message);
      assert.doesNotMatch(next.message, /not queryable|Connection terminated/);
    } finally {
      await victim.close();
    }
  });

  it('says in its own words that the server ended the measurement\'s connection', async function () {
    const session: PostgresAdviceSession = await openPostgresAdvice({ uri: uriFor(DB) });
    try {
      const running = failure(advisePostgresLive(session, 'SELECT * FROM ledger WHERE account = 42 ORDER BY amount'));
      // The measurement copies a sample of the table into a temporary one: the backend is ended there.
      await terminateWhenActive(admin, 'CREATE TEMP TABLE%ledger%');
      const error = await running;
      assert.equal(error.kind, 'network', error.message);
      assert.match(error.message, /^The PostgreSQL connection was lost while the measurement ran: the server ended it \(/);
      assert.doesNotMatch(error.message, /terminating connection|Connection terminated|administrator command/);
    } finally {
      await session.close();
    }
  });

  it('explains a DELETE on a table whose rules add a NOTIFY and an INSERT, showing the DELETE\'s own plan', async function () {
    await db.query('CREATE RULE entries_notify AS ON DELETE TO entries DO ALSO NOTIFY entries_changed');
    try {
      const notifyOnly = await conn.explain('DELETE FROM entries WHERE id = 5');
      const root = planOf(notifyOnly).root;
      assert.equal(root.raw['Operation'], 'Delete');
      assert.equal(root.raw['Relation Name'], 'entries');
      assert.ok(notifyOnly.notes.some((n) => /rules add an action to the DELETE \(a NOTIFY\)/.test(n)), notifyOnly.notes.join(' | '));

      await db.query('CREATE RULE entries_audit AS ON DELETE TO entries DO ALSO INSERT INTO ledger_audit VALUES (old.id)');
      for (const analyze of [false, true]) {
        const both = await conn.explain('DELETE FROM entries WHERE id = 5', { analyze, allowSideEffects: true });
        const plan = planOf(both);
        // The server prints the rule's INSERT first: the plan shown must still be the DELETE's.
        assert.equal(plan.root.raw['Operation'], 'Delete');
        assert.equal(plan.root.raw['Relation Name'], 'entries');
        assert.ok(both.notes.some((n) => /rules add 2 actions to the DELETE \(an INSERT on ledger_audit and a NOTIFY\)/.test(n)), both.notes.join(' | '));
        assert.match(both.rawText, /ledger_audit/, 'the raw output keeps every plan');
      }
      assert.equal((await db.query('SELECT count(*)::int AS n FROM entries')).rows[0].n, 1000, 'the rollback kept every row');
    } finally {
      await db.query('DROP RULE IF EXISTS entries_notify ON entries; DROP RULE IF EXISTS entries_audit ON entries');
    }
  });

  it('names SELECT INTO for what it is under ANALYZE: it creates a table, which the rollback removes', async function () {
    const r = await conn.explain('SELECT id, v INTO entries_copy FROM entries WHERE v < 10', { analyze: true });
    assert.ok(r.notes.some((n) => /^The SELECT INTO really ran and created its table, inside a transaction that was rolled back: the table no longer exists\.$/.test(n)), r.notes.join(' | '));
    assert.ok(!r.notes.some((n) => /WITH clause/.test(n)), r.notes.join(' | '));
    assert.equal((await db.query("SELECT to_regclass('entries_copy') AS t")).rows[0].t, null);
  });

  it('blames a port out of range on the port, not on the password', async function () {
    const u = new URL(uriFor(DB));
    const error = await failure(connectPostgres({ uri: `postgresql://app:secret@${u.hostname}:99999/${DB}` }));
    assert.equal(error.kind, 'config');
    assert.match(error.message, /port 99999 is out of range \(1-65535\)/);
    assert.doesNotMatch(error.message, /percent-encoded|password/);
    const mongo = await failure(connectMongo({ uri: 'mongodb://app:secret@127.0.0.1:99999/' }));
    assert.match(mongo.message, /port 99999 is out of range \(1-65535\)/);
  });
});

describe('MongoDB on a port that speaks another protocol', function () {
  const servers: Server[] = [];

  after(async function () {
    for (const s of servers) await new Promise((r) => s.close(r));
  });

  async function listening(server: Server): Promise<string> {
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `mongodb://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }

  async function connectFails(uri: string, what: string): Promise<AdapterError> {
    const started = Date.now();
    const error = await failure(connectMongo({ uri }));
    // The time is printed for whoever reads the run; a shared machine makes it no assertion.
    console.log(`      ${what}: ${Date.now() - started} ms: ${error.message}`);
    assert.equal(error.kind, 'network');
    return error;
  }

  it('says so of a TCP server that answers with random bytes', async function () {
    const uri = await listening(createServer((socket) => {
      socket.on('error', () => {});
      socket.on('data', () => socket.write(randomBytes(4096)));
    }));
    const error = await connectFails(uri, 'random bytes');
    assert.match(error.message, /^The server at 127\.0\.0\.1:\d+ does not speak the MongoDB protocol \(is it the right port\?\): it answered a hello with bytes that are not a MongoDB reply\.$/);
  });

  it('says so of an HTTP server', async function () {
    const uri = await listening(createHttpServer((_req, res) => res.end('hello')));
    const error = await connectFails(uri, 'HTTP');
    assert.match(error.message, /does not speak the MongoDB protocol \(is it the right port\?\): it answered in HTTP\.$/);
  });

  it('still connects to a real MongoDB server', async function () {
    const conn = await connectMongo({ uri: env.mongoUri });
    try {
      assert.equal(conn.server.product, 'MongoDB');
    } finally {
      await conn.close();
    }
  });
});
