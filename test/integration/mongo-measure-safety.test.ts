// The MongoDB measurement is safe for ordinary users, on a mongod 6.0.5 of its own that enforces access
// control (--auth; the shared test server runs without it, so privileges could not be told apart there):
// a root user, a readWrite user and a read user on one database. A cancel, or the end of the
// measurement's time budget, stops the server's work within about a second for root and for the
// readWrite user (currentOp seen by root, polled, never waited for by a pause); the read user gets the
// rules' advice and one sentence instead of a refusal; the sweep of stale scratch collections drops only
// collections carrying the marker written at their creation, and only past the deadline it holds.

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, type Db, type Document } from 'mongodb';
import { fetchMongod } from '../../scripts/servers.mjs';
import { openMongoAdvice, type MongoAdviceSession } from '../../src/adapters/advise';
import { adviseMongoLive } from '../../src/adapters/adviceService';
import { AdapterError } from '../../src/adapters/errors';
import { measureMongoCandidates } from '../../src/adapters/measure/mongoCandidates';
import { dropStaleScratch, SCRATCH_PREFIX } from '../../src/adapters/measure/mongoScratch';
import { scratchMarkerOf, scratchOptions } from '../../src/adapters/door';
import { run } from '../../src/cli/main';
import { fromMongoCommand, mongoShape, type MongoCommand } from '../../src/core/index';
import { parseMongoQuery } from '../../src/core/query/mongoShell';
import { capturedIo } from './support/cliIo';
import { closedPort } from './support/env';
import { until } from '../until';

const DB = 'qpi_safety';
const PASSWORD = 'safety-pw-7Qx';

function command(text: string): MongoCommand {
  const r = parseMongoQuery(text);
  if (!r.ok) assert.fail(r.error);
  return r.command;
}

// Server-side JavaScript that costs 5 ms a document and ignores maxTimeMS: a measurement of it runs for
// many seconds unless its operations are killed.
const SLOW = 'function(s) { var t = Date.now(); while (Date.now() - t < 5) {} return s + 1; }';
const SLOW_QUERY = `db.items.aggregate([{$match: {g: {$gte: 0}}}, {$group: {_id: "$g", n: {$accumulator: {init: "function() { return 0; }", accumulate: ${JSON.stringify(SLOW)}, accumulateArgs: [1], merge: "function(a, b) { return a + b; }", lang: "js"}}}}])`;

describe('MongoDB measurement safety for ordinary users (mongod 6.0.5 with --auth)', function () {
  this.timeout(180_000);
  let mongod: ChildProcess | undefined;
  let dir = '';
  let port = 0;
  let root: MongoClient;
  let db: Db;

  const uriFor = (user: string, database = DB): string => `mongodb://${user}:${PASSWORD}@127.0.0.1:${port}/${database}?directConnection=true&authSource=admin`;

  before(async function () {
    const binary = await fetchMongod();
    dir = mkdtempSync(join(tmpdir(), 'qpi-auth-mongod-'));
    port = await closedPort();
    mongod = spawn(binary, ['--dbpath', dir, '--bind_ip', '127.0.0.1', '--port', String(port), '--nounixsocket', '--auth', '--wiredTigerCacheSizeGB', '0.25', '--logpath', join(dir, 'mongod.log'), '--setParameter', 'diagnosticDataCollectionEnabled=false'], { stdio: 'ignore' });
    // Before any user exists, the localhost exception lets a local client create the first one.
    const first = await until('the --auth mongod answering', async () => {
      const c = new MongoClient(`mongodb://127.0.0.1:${port}/?directConnection=true`, { serverSelectionTimeoutMS: 1000 });
      try {
        await c.db('admin').command({ ping: 1 });
        return c;
      } catch {
        await c.close().catch(() => {});
        return false;
      }
    }, { timeoutMs: 30_000, pauseMs: 200 });
    await first.db('admin').command({ createUser: 'root', pwd: PASSWORD, roles: ['root'] });
    await first.close();
    root = await MongoClient.connect(uriFor('root', 'admin'));
    const admin = root.db('admin');
    await admin.command({ createUser: 'writer', pwd: PASSWORD, roles: [{ role: 'readWrite', db: DB }] });
    await admin.command({ createUser: 'reader', pwd: PASSWORD, roles: [{ role: 'read', db: DB }] });
    db = root.db(DB);
    await db.collection('items').insertMany(Array.from({ length: 4_000 }, (_, i) => ({ g: i % 40, s: (i * 7919) % 4_000, v: i })));
  });

  after(async function () {
    await root?.close().catch(() => {});
    if (mongod && mongod.exitCode === null) {
      const exited = new Promise((r) => mongod!.once('exit', r));
      mongod.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Operations of this tool running on the server, of any user, as root sees them. */
  async function ours(): Promise<Document[]> {
    return (await root.db('admin').command({ currentOp: true, 'command.comment': /^qpi-/ }))['inprog'] as Document[];
  }

  async function scratchLeft(): Promise<string[]> {
    return (await db.listCollections({ name: { $regex: `^${SCRATCH_PREFIX}` } }, { nameOnly: true }).toArray()).map((c) => c.name);
  }

  /**
   * While a measurement runs, its scratch collection, filled by $out, still carries the marker written
   * at its creation, with a deadline ahead, and a sweep (another run's) keeps it.
   */
  async function markedAndKept(): Promise<void> {
    const listed = await db.listCollections({ name: { $regex: `^${SCRATCH_PREFIX}` } }).toArray();
    assert.equal(listed.length, 1, JSON.stringify(listed));
    const options = (listed[0] as Document)['options'];
    const marker = scratchMarkerOf(options);
    assert.ok(marker, `no marker in ${JSON.stringify(options)}`);
    // The deadline: the run's budget (ten times the 30 s limit of one operation) and 5 minutes of grace.
    assert.ok(marker.until > Date.now() + 5 * 60_000 && marker.until < Date.now() + 11 * 60_000, `deadline ${new Date(marker.until).toISOString()}`);
    assert.ok((await db.collection(listed[0]!.name).estimatedDocumentCount()) > 0, 'the scratch collection is empty');
    assert.deepEqual(await dropStaleScratch(db), []);
  }

  for (const user of ['root', 'writer'] as const) {
    it(`a cancel stops the server's work within 2 s for a ${user === 'root' ? 'root' : 'readWrite'} user, and says it was stopped on the server`, async function () {
      const session = await openMongoAdvice({ uri: uriFor(user), database: DB });
      try {
        const abort = new AbortController();
        let cancelledAt = 0;
        let cancelling: Promise<unknown> | undefined;
        const p = adviseMongoLive(session, command(SLOW_QUERY), {
          measure: true,
          signal: abort.signal,
          onStep: (step) => {
            if (step !== 'explain' || cancelling) return;
            // Cancel once the measurement's explain runs the JavaScript on the server.
            cancelling = until('the measurement running its explain on the server', async () => (await ours()).some((op) => op['command']?.['explain'] !== undefined), { pauseMs: 20 }).then(async () => {
              try {
                await markedAndKept();
              } finally {
                cancelledAt = Date.now();
                abort.abort();
              }
            });
          },
        });
        const err = await p.then(() => assert.fail('the measurement was not cancelled'), (e: unknown) => e);
        const answered = Date.now() - cancelledAt;
        await cancelling;
        assert.ok(err instanceof AdapterError && err.kind === 'cancelled', String(err));
        assert.equal(err.message, 'The measurement was cancelled and stopped on the server.');
        await until('no operation of the measurement left on the server', async () => (await ours()).length === 0, { timeoutMs: 2_000, pauseMs: 20 });
        const stopped = Date.now() - cancelledAt;
        console.log(`      ${user}: the cancel answered after ${answered} ms; nothing of the measurement ran on the server ${stopped} ms after it`);
        assert.ok(stopped < 2_000, `the server's work went on ${stopped} ms after the cancel`);
        assert.deepEqual(await scratchLeft(), []);
      } finally {
        await session.close();
      }
    });
  }

  it("the end of a readWrite user's measurement budget stops the server's work within 2 s", async function () {
    const session: MongoAdviceSession = await openMongoAdvice({ uri: uriFor('writer'), database: DB });
    try {
      const cmd = { ...command(SLOW_QUERY), database: DB };
      const input = fromMongoCommand(cmd);
      if (!input.ok) assert.fail(input.refusal);
      const shape = mongoShape(input.query);
      if (!shape.ok) assert.fail(shape.refusal);
      const live = await adviseMongoLive(session, cmd);
      const started = Date.now();
      const budgetMs = 3_000;
      const err = await measureMongoCandidates(session.db, session.conn, cmd, shape.shape, live.advice, { existing: [], existingForAdvice: [], budgetMs, timeoutMs: 60_000 })
        .then(() => assert.fail('the measurement outlived its budget'), (e: unknown) => e);
      assert.ok(err instanceof AdapterError && err.kind === 'timeout', String(err));
      assert.equal(err.message, 'The measurement ran past its time budget of 3 s and was stopped on the server.');
      await until('no operation of the measurement left on the server', async () => (await ours()).length === 0, { timeoutMs: 2_000, pauseMs: 20 });
      const stopped = Date.now() - started - budgetMs;
      console.log(`      readWrite: nothing of the measurement ran on the server ${stopped} ms after its budget ended`);
      assert.ok(stopped < 2_000, `the server's work went on ${stopped} ms past the budget`);
      assert.deepEqual(await scratchLeft(), []);
    } finally {
      await session.close();
    }
  });

  it('a cancel before anything was sent says the measurement was cancelled before it started', async function () {
    const session = await openMongoAdvice({ uri: uriFor('writer'), database: DB });
    try {
      const cmd = { ...command('db.items.find({g: 3}).sort({s: 1})'), database: DB };
      const live = await adviseMongoLive(session, cmd);
      const input = fromMongoCommand(cmd);
      if (!input.ok) assert.fail(input.refusal);
      const shape = mongoShape(input.query);
      if (!shape.ok) assert.fail(shape.refusal);
      const abort = new AbortController();
      abort.abort();
      const err = await measureMongoCandidates(session.db, session.conn, cmd, shape.shape, live.advice, { existing: [], existingForAdvice: [], signal: abort.signal })
        .then(() => assert.fail('the measurement ran'), (e: unknown) => e);
      assert.ok(err instanceof AdapterError && err.kind === 'cancelled', String(err));
      assert.equal(err.message, 'The measurement was cancelled before it started.');
    } finally {
      await session.close();
    }
  });

  it('a read-only user gets the rules\' advice and one sentence, exit 0, in text and in --json, with no command dump', async function () {
    const query = 'db.items.find({g: 3}).sort({s: 1})';
    const before = await db.listCollections({}, { nameOnly: true }).toArray();
    const text = capturedIo();
    assert.equal(await run(['advise', '--uri', uriFor('reader'), '--verify', '--query', query], text), 0, text.err);
    assert.equal(text.err, '');
    assert.match(text.out, /^Not measured: needs write access \(readWrite\) for a scratch copy\.$/m);
    assert.match(text.out, /^1\. db\.items\.createIndex\(/m);
    assert.doesNotMatch(text.out, /lsid|\$db|execute command|\{ (create|aggregate):/);

    const json = capturedIo();
    assert.equal(await run(['advise', '--uri', uriFor('reader'), '--verify', '--json', '--query', query], json), 0, json.err);
    const doc = JSON.parse(json.out) as { measurement: { status: string; reason: string }; suggestions: { action: string; keyPattern?: Record<string, number> }[]; notes: string[] };
    // Measuring was asked and could not run: the verdict is the rules' only, and the reason says what measuring needs.
    assert.deepEqual(doc.measurement, { status: 'not-measured', label: 'not measured', reason: 'needs write access (readWrite) for a scratch copy.', rulesOnly: true, howToMeasure: null });
    assert.deepEqual(doc.suggestions[0]?.keyPattern, { g: 1, s: 1 });
    assert.ok(doc.notes.includes('Not measured: needs write access (readWrite) for a scratch copy.'), doc.notes.join('\n'));
    assert.doesNotMatch(json.out, /lsid|execute command/);
    assert.deepEqual(await db.listCollections({}, { nameOnly: true }).toArray(), before);
  });

  it('the sweep drops only marked scratch collections past their deadline, never a collection without the marker', async function () {
    const writer = await MongoClient.connect(uriFor('writer'));
    try {
      const wdb = writer.db(DB);
      const hourAgo = (Date.now() - 3_600_000 * 3).toString(36);
      // A user's own collection whose name looks like an old scratch collection.
      const users = `${SCRATCH_PREFIX}orders_${hourAgo}_a1b2c3`;
      await wdb.collection(users).insertOne({ mine: true });
      // What a run killed (SIGKILL) long ago left: marked, its deadline past.
      const killed = `${SCRATCH_PREFIX}orders_${hourAgo}_d4e5f6`;
      await wdb.createCollection(killed, scratchOptions({ run: 'qpi-tournament-0123456789ab', until: Date.now() - 60_000 }));
      // A run still going: marked, its deadline ahead, whatever the time in its name.
      const running = `${SCRATCH_PREFIX}orders_${hourAgo}_0a0b0c`;
      await wdb.createCollection(running, scratchOptions({ run: 'qpi-tournament-ba9876543210', until: Date.now() + 600_000 }));

      const dropped = await dropStaleScratch(wdb);
      assert.deepEqual(dropped, [killed]);
      const left = (await wdb.listCollections({ name: { $regex: `^${SCRATCH_PREFIX}` } }).toArray()).map((c) => c.name).sort();
      assert.deepEqual(left, [running, users].sort());
      assert.deepEqual(await wdb.collection(users).find({}, { projection: { _id: 0 } }).toArray(), [{ mine: true }]);

      // The same sweep an hour later drops the one whose run is over, and still not the user's.
      assert.deepEqual(await dropStaleScratch(wdb, Date.now() + 3_600_000), [running]);
      assert.deepEqual((await wdb.listCollections({ name: { $regex: `^${SCRATCH_PREFIX}` } }, { nameOnly: true }).toArray()).map((c) => c.name), [users]);
      await wdb.collection(users).drop();
    } finally {
      await writer.close();
    }
  });
});
