// Every wait of `qpi explain` is bounded, on the real servers: a PostgreSQL backend frozen mid-explain
// (SIGSTOP on the server this run started) ends within the limit plus the grace, and the backend is gone
// once it runs again; SIGTERM and SIGHUP cancel on the server like Ctrl-C; Ctrl-C while connecting ends at
// once; a refused port fails fast; the URI's own connect timeouts are kept; MongoDB JavaScript that
// ignores maxTimeMS meets the client-side deadline and killOp. And no error path prints the password.

import { strict as assert } from 'node:assert';
import { createServer, type Server, type Socket } from 'node:net';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { graceFor } from '../../src/adapters/deadline';
import { qpi, startQpi } from './support/cli';
import { closedPort, env } from './support/env';
import { until } from '../until';

const DB = 'qpi_deadlines';

/** A TCP server that accepts connections and never answers: a database that hangs. */
async function silentServer(): Promise<{ port: number; connected: Promise<void>; close: () => Promise<void> }> {
  const sockets: Socket[] = [];
  let onConnect!: () => void;
  const connected = new Promise<void>((r) => (onConnect = r));
  const server: Server = createServer((s) => {
    sockets.push(s);
    onConnect();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    port,
    connected,
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

describe('qpi explain: every wait bounded', function () {
  let admin: pg.Client;
  let mongo: MongoClient;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query('DROP TABLE IF EXISTS dl_rows; CREATE TABLE dl_rows (id int PRIMARY KEY, v int); INSERT INTO dl_rows SELECT g, 0 FROM generate_series(1, 100) g');
    mongo = await MongoClient.connect(env.mongoUri);
    await mongo.db(DB).dropDatabase();
    await mongo.db(DB).collection<{ _id: number; a: number }>("items").insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, a: i })));
  });

  after(async function () {
    await admin?.query('DROP TABLE IF EXISTS dl_rows').catch(() => {});
    await admin?.end();
    await mongo?.db(DB).dropDatabase().catch(() => {});
    await mongo?.close();
  });

  /** Backend pid of the running statement that holds `marker`, once it is active. */
  function backendOf(marker: string): Promise<number> {
    return until(`the statement ${marker} running`, async () => {
      const r = await admin.query("SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()", [`%${marker}%`]);
      return r.rows[0]?.pid as number | undefined;
    });
  }

  it('a frozen PostgreSQL backend: qpi ends within the limit plus the grace, and the backend is gone once it runs again', async function () {
    const timeoutMs = 1500;
    const run = startQpi(['explain', '--uri', env.pgUri, '--query', 'SELECT pg_sleep(30) /* frozen-backend */', '--analyze', '--timeout-ms', String(timeoutMs)]);
    const pid = await backendOf('frozen-backend');
    process.kill(pid, 'SIGSTOP');
    const started = Date.now();
    let r;
    try {
      r = await run.done;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const bound = timeoutMs + graceFor(timeoutMs) + 6000;
    assert.ok(Date.now() - started < bound, `qpi ended after ${Date.now() - started} ms, past ${bound} ms`);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^PostgreSQL at \\S+ gave no answer within ${seconds(timeoutMs + graceFor(timeoutMs))} s \\(the 1500 ms limit and a grace\\): the statement was stopped on the server through a second connection and this connection was closed\\.\\n$`));
    await until('the frozen backend gone', async () => ((await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0].n === 0 ? true : undefined));
  });

  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    it(`${signal} to an --analyze UPDATE cancels it on the server: nothing left in pg_stat_activity, no lock held`, async function () {
      const marker = `signal-${signal}`;
      const run = startQpi(['explain', '--uri', env.pgUri, '--query', `UPDATE dl_rows SET v = v + 1 FROM (SELECT pg_sleep(30)) s /* ${marker} */`, '--analyze']);
      await backendOf(marker);
      run.child.kill(signal);
      const r = await run.done;
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /^The explain was cancelled and the statement stopped on the server\.\n$/);
      const left = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND state <> 'idle' AND pid <> pg_backend_pid()", [`%${marker}%`]);
      assert.equal(left.rows[0].n, 0, 'the statement no longer runs');
      const locks = await admin.query("SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'dl_rows'::regclass");
      assert.equal(locks.rows[0].n, 0, 'no lock is held on the table');
      assert.equal((await admin.query('SELECT sum(v)::int AS s FROM dl_rows')).rows[0].s, 0, 'no row changed');
    });
  }

  it('Ctrl-C while connecting to a server that does not answer ends at once, on both engines', async function () {
    for (const scheme of ['postgresql', 'mongodb'] as const) {
      const silent = await silentServer();
      try {
        const uri = scheme === 'postgresql' ? `postgresql://app@127.0.0.1:${silent.port}/db` : `mongodb://127.0.0.1:${silent.port}/?directConnection=true`;
        const run = startQpi(['explain', '--uri', uri, '--query', scheme === 'postgresql' ? 'SELECT 1' : 'db.items.find({})']);
        await silent.connected;
        const started = Date.now();
        run.child.kill('SIGINT');
        const r = await run.done;
        assert.ok(Date.now() - started < 2000, `${scheme}: ended ${Date.now() - started} ms after Ctrl-C`);
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`^Connecting to (PostgreSQL|MongoDB) at 127\\.0\\.0\\.1:${silent.port} was cancelled\\.\\n$`));
      } finally {
        await silent.close();
      }
    }
  });

  it('keeps connect_timeout and serverSelectionTimeoutMS from the URI, and a refused MongoDB port fails fast', async function () {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const r = await qpi(['explain', '--uri', `postgresql://app@127.0.0.1:${silent.port}/db?connect_timeout=1`, '--query', 'SELECT 1']);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /no answer within the connect timeout\.\n$/);
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms with connect_timeout=1`);
      const m = Date.now();
      const rm = await qpi(['explain', '--uri', `mongodb://127.0.0.1:${silent.port}/?directConnection=true&serverSelectionTimeoutMS=1000`, '--query', 'db.items.find({})']);
      assert.equal(rm.status, 2, rm.stderr);
      assert.ok(Date.now() - m < 5000, `took ${Date.now() - m} ms with serverSelectionTimeoutMS=1000`);
    } finally {
      await silent.close();
    }
    const port = await closedPort();
    const started = Date.now();
    const refused = await qpi(['explain', '--uri', `mongodb://127.0.0.1:${port}/?directConnection=true`, '--query', 'db.items.find({})']);
    assert.equal(refused.status, 2);
    assert.equal(refused.stderr, `Cannot reach MongoDB at 127.0.0.1:${port}: the connection was refused (is the server running on that port?).\n`);
    assert.ok(Date.now() - started < 3000, `a refused port took ${Date.now() - started} ms`);
  });

  it('MongoDB JavaScript that ignores maxTimeMS meets the client-side deadline and killOp; nothing is left in currentOp', async function () {
    const timeoutMs = 1000;
    const body = 'function() { const t = Date.now(); while (Date.now() - t < 20000) {} return 1; }';
    const query = `db.getSiblingDB("${DB}").items.aggregate([{$limit: 1}, {$addFields: {x: {$function: {body: ${JSON.stringify(body)}, args: [], lang: "js"}}}}])`;
    const started = Date.now();
    const r = await qpi(['explain', '--uri', env.mongoUri, '--query', query, '--verbosity', 'executionStats', '--timeout-ms', String(timeoutMs)]);
    const bound = timeoutMs + graceFor(timeoutMs) + 6000;
    assert.ok(Date.now() - started < bound, `qpi ended after ${Date.now() - started} ms, past ${bound} ms`);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^The explain passed its deadline of 3\.1 s \(the 1 s maxTimeMS limit and a grace\) without an answer, as server-side JavaScript \(\$where, \$function, \$accumulator\) does not stop at maxTimeMS: killOp was sent for it through another connection and this connection was closed\.\n$/);
    assert.doesNotMatch(r.stderr, /interrupted/);
    await until('the operation gone from currentOp', async () => {
      const ops = await mongo.db('admin').command({ currentOp: true, 'command.comment': { $regex: '^qpi-explain-' } });
      return (ops.inprog as unknown[]).length === 0 ? true : undefined;
    }, { timeoutMs: 30_000 });
  });

  it('no error path prints any piece of the password', async function () {
    const password = 'Pw-Secret/77#Zq?x@end';
    const encoded = encodeURIComponent(password);
    const port = await closedPort();
    const silent = await silentServer();
    const pgUser = new URL(env.pgUri);
    const mongoUser = new URL(env.mongoUri);
    const pieces = [password, ...password.split(/[@/#?:]/).filter((p) => p.length >= 4), encoded];
    try {
      const runs: { args: string[]; env?: Record<string, string> }[] = [];
      for (const [scheme, host, query] of [['postgresql', `${pgUser.hostname}:${pgUser.port}`, 'SELECT 1'], ['mongodb', `${mongoUser.hostname}:${mongoUser.port}`, 'db.items.find({})']] as const) {
        const user = env.pwUser;
        runs.push(
          { args: ['--uri', `${scheme}://${user}:${password}@${host}/${DB}`, '--query', query] }, // raw password: malformed
          { args: ['--uri', `${scheme}://${user}:${encoded}@${host}/${DB}`, '--query', query] }, // wrong password
          { args: ['--uri', `${scheme}://${user}@${host}/${DB}`, '--query', query], env: { QPI_PASSWORD: password } },
          { args: ['--uri', `${scheme}://${user}:${encoded}@127.0.0.1:${port}/${DB}`, '--query', query] }, // refused
          { args: ['--uri', `${scheme}://${user}:${encoded}@no-such-host.invalid:1/${DB}`, '--query', query] }, // unknown host
          { args: ['--uri', `${scheme}://${user}:${encoded}@127.0.0.1:${silent.port}/${DB}?${scheme === 'postgresql' ? 'connect_timeout=1' : 'serverSelectionTimeoutMS=1000&directConnection=true'}`, '--query', query] }, // timeout
          { args: ['--uri', `${scheme}://${user}:${password.replace('@', '')}@${host}/${DB}`, '--query', query] }, // malformed without '@'
        );
      }
      for (const run of runs) {
        const r = await qpi(['explain', ...run.args], run.env);
        assert.equal(r.status, 2, `${run.args[1]}: ${r.stderr}`);
        assert.match(r.stderr, /^[^\n]+\.\n$/, 'one sentence');
        for (const piece of pieces) assert.ok(!(r.stdout + r.stderr).includes(piece), `"${piece}" printed: ${r.stderr}`);
      }
    } finally {
      await silent.close();
    }
  });
});
