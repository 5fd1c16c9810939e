// The sessions Explain keeps open between Explains (src/extension/connections/sessions.ts), on real
// servers: the session a warm-up opens is the one the Explains use, one after another, without connecting
// again; when the server ends its connections (as a restart does) the next Explain gets a new session
// without an error; a removed connection's session is closed on the server; a server that is down is said
// in one sentence.

import { strict as assert } from 'node:assert';
import pg from 'pg';
import type { MongoAdviceSession, PostgresAdviceSession } from '../../src/adapters/advise';
import { AdapterError } from '../../src/adapters/errors';
import { explainFingerprint, explainSessions, openExplainSession, warmExplainSession, type SessionRequest } from '../../src/extension/connections/sessions';
import { parseMongoQuery } from '../../src/core/query/mongoShell';
import { closedPort, env, planOf } from './support/env';
import { until } from '../until';

const APP = 'qpi_explain_sessions';
const SQL = 'SELECT relname FROM pg_class WHERE relkind = \'r\' ORDER BY relname LIMIT 3';

function withApp(uri: string): string {
  const u = new URL(uri);
  u.searchParams.set('application_name', APP);
  return u.toString();
}

/** Lends the connection's session as an Explain does. */
function lease<S>(request: SessionRequest) {
  return explainSessions.acquire(request.connectionId, explainFingerprint(request), () => openExplainSession(request) as Promise<PostgresAdviceSession | MongoAdviceSession>) as Promise<{ session: S; reused: boolean; release(keep: boolean): void }>;
}

describe('Explain keeps one session per connection open between Explains', function () {
  this.timeout(60_000);
  let admin: pg.Client;
  const backends = async (): Promise<number[]> => (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid', [APP])).rows.map((r) => r.pid);

  before(async () => {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
  });

  after(async () => {
    explainSessions.forget('pg-sessions');
    explainSessions.forget('mongo-sessions');
    await admin.end();
  });

  it('PostgreSQL: explains on the warmed session twice, then on a new one after the server ended its connections, and closes it when the connection is removed', async () => {
    const request: SessionRequest = { engine: 'postgres', connectionId: 'pg-sessions', uri: withApp(env.pgUri), timeoutMs: 30_000, connectTimeoutMs: 10_000 };
    assert.equal(await warmExplainSession(request), true, 'the warm-up opened the session');
    const opened = await backends();
    assert.equal(opened.length, 2, 'the explain connection and the catalog connection');

    const first = await lease<PostgresAdviceSession>(request);
    assert.equal(first.reused, true, 'the Explain gets the warmed session');
    planOf(await first.session.conn.explain(SQL, { analyze: true }));
    first.release(true);
    const second = await lease<PostgresAdviceSession>(request);
    assert.equal(second.reused, true);
    assert.equal(second.session, first.session);
    planOf(await second.session.conn.explain(SQL, { analyze: true }));
    assert.ok((await second.session.catalog.read('SELECT 1 AS one', [])).length === 1);
    assert.deepEqual(await backends(), opened, 'no connection was opened for the second Explain');
    second.release(true);

    // What a restart does to the session: the server ends both of its connections while it waits.
    const ended = await admin.query<{ n: number }>('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1', [APP]);
    assert.equal(ended.rows[0]!.n, 2);
    await until('the kept session to know its connection was ended', () => !second.session.conn.usable);

    const third = await lease<PostgresAdviceSession>(request);
    assert.equal(third.reused, false, 'a new session replaces the lost one');
    assert.notEqual(third.session.conn.backendPid, second.session.conn.backendPid);
    planOf(await third.session.conn.explain(SQL, { analyze: true }));
    assert.ok((await third.session.catalog.read('SELECT 1 AS one', [])).length === 1);
    third.release(true);
    const now = await backends();
    assert.equal(now.length, 2);
    assert.ok(now.every((pid) => !opened.includes(pid)));

    // The connection is removed: its session closes on the server.
    explainSessions.forget(request.connectionId);
    await until('the removed connection\'s backends to end', async () => (await backends()).length === 0);
  });

  it('MongoDB: explains on the warmed session twice without connecting again', async () => {
    const request: SessionRequest = { engine: 'mongodb', connectionId: 'mongo-sessions', uri: env.mongoUri, timeoutMs: 30_000, connectTimeoutMs: 10_000 };
    assert.equal(await warmExplainSession(request), true);
    const parsed = parseMongoQuery('db.qpi_sessions.find({ a: 1 })');
    if (!parsed.ok) assert.fail(parsed.error);
    const first = await lease<MongoAdviceSession>(request);
    assert.equal(first.reused, true);
    planOf(await first.session.conn.explain(parsed.command, { verbosity: 'executionStats' }));
    first.release(true);
    const second = await lease<MongoAdviceSession>(request);
    assert.equal(second.reused, true);
    assert.equal(second.session, first.session);
    planOf(await second.session.conn.explain(parsed.command, { verbosity: 'executionStats' }));
    second.release(true);
    explainSessions.forget(request.connectionId);
    await until('the removed connection\'s session to close', () => !second.session.conn.usable);
  });

  it('says in one sentence that the server is down, and keeps nothing', async () => {
    const port = await closedPort();
    const request: SessionRequest = { engine: 'postgres', connectionId: 'pg-down', uri: `postgresql://qpi@127.0.0.1:${port}/postgres`, timeoutMs: 30_000, connectTimeoutMs: 5_000 };
    assert.equal(await warmExplainSession(request), false);
    const size = explainSessions.size;
    await assert.rejects(lease(request), (err: unknown) => {
      assert.ok(err instanceof AdapterError);
      assert.equal(err.kind, 'network');
      assert.match(err.message, /^Cannot reach PostgreSQL at 127\.0\.0\.1:\d+: .*\.$/);
      return true;
    });
    assert.equal(explainSessions.size, size);
  });
});
