// `qpi check` on real servers: the fixture application of test/fixtures/check-app (node-postgres calls, a
// .sql file, MongoDB driver calls) with its migration loaded into a fresh database, gated against a lock
// written by --update. The gate passes on the baseline, fails a new unindexed query at its own file and
// line, keeps every fingerprint when lines move, fails the query whose index a migration dropped, and
// exits 4 when a database is dead or its version is not the lock's.

import { strict as assert } from 'node:assert';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../src/cli/main';
import { capturedIo } from './support/cliIo';
import { copyCheckApp, loadCheckDatabases, pgAdmin } from './support/checkFixture';
import { closedPort, env, pgUriFor } from './support/env';

const PG_DB = 'qpi_check';
const MONGO_DB = 'qpi_check_app';

interface Sarif {
  runs: { results: { ruleId: string; level: string; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[]; partialFingerprints: { primaryLocationLineHash: string }; baselineState: string }[] }[];
}

interface CheckJson {
  passed: boolean;
  exitCode: number;
  counts: { queries: number; explained: number; notExplainable: number; failed: number };
  queries: { key: string; file: string; line: number; outcome: string; notExplainable?: string; results: { rule: string; fails: boolean; tier: string }[] }[];
}

describe('qpi check on real servers', function () {
  let app: string;
  const pgUri = (): string => pgUriFor(PG_DB);

  async function check(...extra: string[]): Promise<{ code: number; out: string; err: string }> {
    const io = capturedIo();
    const code = await run(['check', join(app, 'src'), '--uri', pgUri(), '--uri', env.mongoUri, '--lock', join(app, 'qpi.lock.json'), ...extra], io);
    return { code, out: io.out, err: io.err };
  }

  async function checkJson(...extra: string[]): Promise<{ code: number; doc: CheckJson; sarif: Sarif; err: string }> {
    const sarifFile = join(app, 'out', 'check.sarif');
    const r = await check('--json', '--sarif', sarifFile, ...extra);
    return { code: r.code, doc: JSON.parse(r.out) as CheckJson, sarif: JSON.parse(readFileSync(sarifFile, 'utf8')) as Sarif, err: r.err };
  }


  before(async function () {
    await loadCheckDatabases(PG_DB, MONGO_DB);
  });

  beforeEach(function () {
    app = copyCheckApp('qpi-check-');
  });

  afterEach(function () {
    rmSync(app, { recursive: true, force: true });
  });

  it('writes a sorted lock that is byte-identical across runs, then passes on it', async function () {
    const first = await check('--update');
    assert.equal(first.code, 0, first.err);
    const lock1 = readFileSync(join(app, 'qpi.lock.json'), 'utf8');
    const second = await check('--update');
    assert.equal(second.code, 0, second.err);
    assert.equal(readFileSync(join(app, 'qpi.lock.json'), 'utf8'), lock1);
    const lock = JSON.parse(lock1) as { environment: Record<string, { server: string }>; queries: Record<string, { engine: string; signature?: { parameters?: string; access: { target: string; path: string; index?: string }[] } }> };
    const keys = Object.keys(lock.queries);
    assert.deepEqual(keys, [...keys].sort());
    assert.equal(keys.length, 6, keys.join('\n'));
    assert.ok(keys.every((k) => !/:\d+/.test(k)), 'no line number in a key');
    assert.deepEqual(Object.keys(lock.environment).sort(), ['mongodb', 'postgres']);
    const byCustomer = Object.entries(lock.queries).find(([k]) => k.startsWith('src/orders.js postgres ordersOfCustomer '));
    assert.ok(byCustomer, keys.join('\n'));
    assert.ok(byCustomer[1].signature!.access.some((a) => a.target === 'orders' && a.index === 'orders_customer_idx'), JSON.stringify(byCustomer[1].signature));
    const recent = Object.entries(lock.queries).find(([k]) => k.startsWith('src/events.js mongodb recentEvents '));
    assert.ok(recent && recent[1].signature!.access.some((a) => a.index === 'user_recent'), JSON.stringify(recent));

    const r = await checkJson();
    assert.equal(r.code, 0, r.err);
    assert.equal(r.doc.passed, true);
    assert.deepEqual([r.doc.counts.queries, r.doc.counts.explained, r.doc.counts.notExplainable, r.doc.counts.failed], [6, 6, 0, 0]);
    // eventsOf(userId): the variable is given a user_id of the CI database's events, and the plan is the index's.
    const withValue = Object.entries(lock.queries).find(([k]) => k.startsWith('src/events.js mongodb eventsOf '));
    assert.ok(withValue, keys.join('\n'));
    assert.equal(withValue[1].signature!.parameters, 'bound from data');
    assert.ok(withValue[1].signature!.access.some((a) => a.index === 'user_recent'), JSON.stringify(withValue[1].signature));
  });

  it('explains MongoDB queries with values from the code: from the data, stand-ins where no document has the field, and says why when the code gives the whole filter', async function () {
    writeFileSync(join(app, 'src', 'variables.js'), [
      "const { MongoClient } = require('mongodb');",
      "const db = new MongoClient('mongodb://localhost').db('qpi_check_app');",
      "async function byKind(kind, since) { return db.collection('events').find({ kind, created_at: { $gt: since } }).toArray(); }",
      "async function tagged(tags) { return db.collection('events').find({ user_id: 3, tags: { $in: tags } }).toArray(); }",
      'async function anything(filter) { return db.collection(\'events\').find(filter).toArray(); }',
      "async function seen(id, at) { return db.collection('events').updateOne({ _id: id }, { $set: { seen_at: at }, $inc: { views: 1 } }); }",
      'async function inAny(collection, id) { return collection.findOne({ _id: id }); }',
      'module.exports = { byKind, tagged, anything, seen, inAny };',
    ].join('\n'));
    const r = await check('--update');
    assert.equal(r.code, 0, r.err);
    const lock = JSON.parse(readFileSync(join(app, 'qpi.lock.json'), 'utf8')) as { queries: Record<string, { signature?: { parameters?: string; access: { path: string; index?: string }[] } }> };
    const entry = (fn: string) => Object.entries(lock.queries).find(([k]) => k.startsWith(`src/variables.js mongodb ${fn} `))?.[1];
    assert.equal(entry('byKind')?.signature?.parameters, 'bound from data', JSON.stringify(entry('byKind')));
    assert.deepEqual(entry('byKind')!.signature!.access.map((a) => a.path), ['full-scan']);
    // No event has tags: a stand-in, and the plan is still the one its shape gets (the index on user_id).
    assert.equal(entry('tagged')?.signature?.parameters, 'stand-in values', JSON.stringify(entry('tagged')));
    assert.ok(entry('tagged')!.signature!.access.some((a) => a.index === 'user_recent'));
    assert.equal(entry('seen')?.signature?.parameters, 'bound from data', JSON.stringify(entry('seen')));
    assert.deepEqual(entry('seen')!.signature!.access.map((a) => a.path), ['id-lookup']);
    const j = await checkJson();
    const anything = j.doc.queries.find((q) => q.file === 'src/variables.js' && q.outcome === 'not-explainable');
    assert.ok(anything, JSON.stringify(j.doc.queries.map((q) => [q.file, q.outcome])));
    assert.match(anything.notExplainable!, /values from the code \(filter\), so it cannot be explained/);
    const inAny = j.doc.queries.find((q) => q.file === 'src/variables.js' && q.key.includes(' inAny '));
    assert.ok(inAny, JSON.stringify(j.doc.queries.map((q) => q.key)));
    assert.equal(inAny.notExplainable, 'The collection is chosen at run time, so which one the query reads is not known.');
  });

  it('fails a new query no index can serve, at its own file and line', async function () {
    assert.equal((await check('--update')).code, 0);
    const file = join(app, 'src', 'orders.js');
    const text = readFileSync(file, 'utf8');
    const added = `\nasync function openOrders() {\n  return client.query("SELECT id FROM orders WHERE status = 'open'");\n}\n`;
    const changed = text.replace('\nmodule.exports', `${added}\nmodule.exports`);
    writeFileSync(file, changed);
    const line = changed.split('\n').findIndex((l) => l.includes("status = 'open'")) + 1;
    assert.ok(line > 1);
    const r = await checkJson();
    assert.equal(r.code, 3, r.err);
    const failed = r.doc.queries.filter((q) => q.outcome === 'failed');
    assert.deepEqual(failed.map((q) => [q.file, q.line]), [['src/orders.js', line]]);
    assert.ok(failed[0]!.results.some((x) => x.fails && x.rule === 'qpi.collection-scan' && x.tier === 'structural'), JSON.stringify(failed[0]!.results));
    const alert = r.sarif.runs[0]!.results.find((x) => x.level === 'error')!;
    assert.equal(alert.locations[0]!.physicalLocation.artifactLocation.uri, 'src/orders.js');
    assert.equal(alert.locations[0]!.physicalLocation.region.startLine, line);
    assert.equal(alert.baselineState, 'new');
  });

  it('keeps every fingerprint and fails nothing when lines move', async function () {
    assert.equal((await check('--update')).code, 0);
    const before = await checkJson();
    assert.equal(before.code, 0, before.err);
    const prints = (s: Sarif) => s.runs[0]!.results.map((x) => `${x.ruleId} ${x.partialFingerprints.primaryLocationLineHash}`).sort();
    assert.ok(prints(before.sarif).length > 0, 'the baseline has findings to compare');
    for (const f of ['orders.js', 'events.js', 'reports.sql']) {
      const p = join(app, 'src', f);
      const comment = f.endsWith('.sql') ? '-- moved\n' : '// moved\n';
      writeFileSync(p, comment.repeat(7) + readFileSync(p, 'utf8'));
    }
    const after = await checkJson();
    assert.equal(after.code, 0, after.err);
    assert.deepEqual(prints(after.sarif), prints(before.sarif));
    const lines = (s: Sarif) => s.runs[0]!.results.map((x) => x.locations[0]!.physicalLocation.region.startLine);
    assert.deepEqual(lines(after.sarif), lines(before.sarif).map((l) => l + 7));
  });

  it('fails the query whose index a migration dropped, and only that one', async function () {
    assert.equal((await check('--update')).code, 0);
    await pgAdmin(PG_DB, (c) => c.query('DROP INDEX customers_email_idx'));
    try {
      const r = await checkJson();
      assert.equal(r.code, 3, r.err);
      const failed = r.doc.queries.filter((q) => q.outcome === 'failed');
      assert.deepEqual(failed.map((q) => [q.file, q.line]), [['src/orders.js', 12]]);
      assert.ok(failed[0]!.results.some((x) => x.fails && x.rule === 'qpi.check.lost-index'), JSON.stringify(failed[0]!.results));
    } finally {
      await pgAdmin(PG_DB, (c) => c.query('CREATE INDEX customers_email_idx ON customers (email)'));
    }
  });

  it('exits 4, not 3, when a database is dead or its version is not the lock\'s', async function () {
    assert.equal((await check('--update')).code, 0);
    const io = capturedIo();
    const port = await closedPort();
    const code = await run(['check', join(app, 'src'), '--uri', `postgres://qpi@127.0.0.1:${port}/x`, '--lock', join(app, 'qpi.lock.json')], io);
    assert.equal(code, 4, io.err);
    assert.match(io.err, /PostgreSQL database cannot be used/);

    const lockFile = join(app, 'qpi.lock.json');
    const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { environment: { postgres: { server: string } } };
    lock.environment.postgres.server = '9.6';
    writeFileSync(lockFile, JSON.stringify(lock));
    const r = await check();
    assert.equal(r.code, 4, r.err);
    assert.match(r.err, /the lock was written on 9\.6.*not a regression/);
  });
});
