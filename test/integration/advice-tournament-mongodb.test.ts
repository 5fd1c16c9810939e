// The tournament on a real mongod 6.0.5: candidates built on a sample of the collection, ranked by the
// work the server did. On a query where the rules' first pick loses, the tournament's winner must do
// less work than the rules' pick on the WHOLE collection (both built there and hinted after the advice,
// measured from the raw explain), the CLI JSON must show the runner-up and the rule that lost, and
// nothing may be left behind: no scratch collection, no index, no running operation, after success,
// error and cancel.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db, type Document } from 'mongodb';
import { openMongoAdvice, type MongoAdviceSession } from '../../src/adapters/advise';
import { adviseMongoLive } from '../../src/adapters/adviceService';
import { AdapterError } from '../../src/adapters/errors';
import { run, type Io } from '../../src/cli/main';
import { parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import { customers, demoesr } from './support/adviceData';
import { env } from './support/env';
import { until } from '../until';

const DB = 'qpi_tournament';

function command(text: string): MongoCommand {
  const r = parseMongoQuery(text);
  if (!r.ok) assert.fail(r.error);
  return r.command;
}

/** keys + documents + documents entering a blocking SORT, straight from executionStats. */
function workOf(explain: Document): number {
  const es = explain['executionStats'] as Document;
  let sorted = 0;
  const walk = (st: Document | undefined): void => {
    if (!st) return;
    if (st['stage'] === 'SORT') sorted += Number((st['inputStage'] as Document | undefined)?.['nReturned'] ?? 0);
    walk(st['inputStage'] as Document | undefined);
    for (const s of (st['inputStages'] as Document[] | undefined) ?? []) walk(s);
  };
  walk(es['executionStages'] as Document);
  return Number(es['totalKeysExamined']) + Number(es['totalDocsExamined']) + sorted;
}

interface EntryJson { label: string; index: { keyPattern: Record<string, number> } | null; work: number | null; ruleRank: number | null }

describe('the tournament on MongoDB (real server)', function () {
  this.timeout(180_000);
  let client: MongoClient;
  let db: Db;
  let session: MongoAdviceSession;

  before(async function () {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db(DB);
    await db.dropDatabase();
    await db.collection('demoesr').insertMany(demoesr(30_000, 7) as unknown as Document[], { ordered: false });
    await db.collection('customers').insertMany(customers(20_000, 11) as unknown as Document[], { ordered: false });
    session = await openMongoAdvice({ uri: env.mongoUri, database: DB });
  });

  after(async function () {
    await session?.close();
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  async function leftovers(coll: string): Promise<{ collections: string[]; indexes: string[]; ops: number }> {
    const collections = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
    const indexes = (await db.collection(coll).listIndexes().toArray()).map((i) => String(i['name'])).sort();
    const ops = ((await client.db('admin').command({ currentOp: true, 'command.comment': /^qpi-/ }))['inprog'] as unknown[]).length;
    return { collections, indexes, ops };
  }

  /** Waits until no operation of ours runs on the server (a kill lands asynchronously), up to 10 s. */
  async function quiet(what: string): Promise<void> {
    let ops = 0;
    await until(() => `${what} (${ops} still running)`, async () => {
      ops = ((await client.db('admin').command({ currentOp: true, 'command.comment': /^qpi-/ }))['inprog'] as unknown[]).length;
      return ops === 0;
    });
  }

  async function wholeCollectionWork(coll: string, text: string, key: Record<string, number>): Promise<number> {
    const name = await db.collection(coll).createIndex(key);
    try {
      const cmd = command(text);
      const find: Document = { find: coll, filter: cmd.filter ?? {}, hint: name };
      if (cmd.sort) find['sort'] = cmd.sort;
      if (cmd.limit !== undefined) find['limit'] = cmd.limit;
      return workOf(await db.command({ explain: find, verbosity: 'executionStats' }));
    } finally {
      await db.collection(coll).dropIndex(name);
    }
  }

  for (const [coll, text] of [
    // A range that matches few documents beats the sort: the rules' ESR order reads far more keys.
    ['demoesr', 'db.demoesr.find({e: {$gt: 500}, r: {$lt: 3}}).sort({s: 1})'],
    // An array field: a multikey index cannot combine both bounds on ratings, so the extra key costs.
    ['customers', 'db.customers.find({ratings: {$gt: 50, $lt: 52}, status: "pending"})'],
  ] as const) {
    it(`picks an index that beats the rules' pick on the whole collection: ${text}`, async function () {
      const before = await leftovers(coll);
      const out: string[] = [];
      const err: string[] = [];
      const io: Io = { stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), readStdin: () => '', readFile: () => '' };
      const uri = env.mongoUri.replace(/\/(\?|$)/, `/${DB}$1`);
      const code = await run(['advise', '--uri', uri, '--verify', '--json', '--query', text], io);
      assert.equal(code, 0, err.join(''));
      assert.deepEqual(await leftovers(coll), before, 'the tournament left something behind');
      const doc = JSON.parse(out.join('')) as {
        measurement: { status: string; label: string; tried: number; generated: number; winner: EntryJson; runnerUp: EntryJson | null; overturned: string | null; ranking: EntryJson[]; today: { work: number } | null };
        suggestions: { rank: number; keyPattern?: Record<string, number>; verification: { status: string; message: string } }[];
      };
      const m = doc.measurement;
      assert.equal(m.status, 'measured');
      assert.match(m.label, /^measured from a sample of [\d,]+ of 30,000|20,000 documents$/);
      assert.ok(m.tried >= 4 && m.tried <= m.generated, `tried ${m.tried} of ${m.generated}`);
      assert.ok(m.runnerUp !== null, 'no runner-up in the JSON');
      assert.ok(m.today !== null);
      const rulePick = m.ranking.find((e) => e.ruleRank === 1);
      assert.ok(rulePick?.index, 'the rules\' pick was not measured');
      // Key order matters and deepEqual ignores it: compare the patterns as text.
      assert.notEqual(JSON.stringify(m.winner.index?.keyPattern), JSON.stringify(rulePick.index.keyPattern), 'the rules\' pick won: this query no longer shows a tournament win');
      assert.match(m.overturned ?? '', /The rules' pick .* lost/);
      const first = doc.suggestions[0]!;
      assert.equal(JSON.stringify(first.keyPattern), JSON.stringify(m.winner.index!.keyPattern));
      assert.equal(first.verification.status, 'verified');
      assert.match(first.verification.message, /runner-up/);

      // The judge: both indexes on the whole collection, the query hinted on each.
      const winnerWork = await wholeCollectionWork(coll, text, m.winner.index!.keyPattern);
      const ruleWork = await wholeCollectionWork(coll, text, rulePick.index.keyPattern);
      assert.ok(winnerWork < ruleWork, `on the whole collection the winner did ${winnerWork}, the rules' pick ${ruleWork}`);
    });
  }

  /** Work of a query on the whole collection, unhinted, with these indexes built (and dropped afterwards). */
  async function wholeCollectionSetWork(coll: string, text: string, keys: Record<string, number>[]): Promise<number> {
    const names: string[] = [];
    try {
      for (const k of keys) names.push(await db.collection(coll).createIndex(k));
      const cmd = command(text);
      return workOf(await db.command({ explain: { find: coll, filter: cmd.filter ?? {} }, verbosity: 'executionStats' }));
    } finally {
      for (const n of names) await db.collection(coll).dropIndex(n);
    }
  }

  it('measures a $or over different fields as groups of branch indexes, run unhinted, and suggests the winning group whole', async function () {
    const text = 'db.customers.find({$or: [{tenant: 3, plan: "enterprise"}, {status: "deleted", score: {$gt: 900}}]})';
    const before = await leftovers('customers');
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), readStdin: () => '', readFile: () => '' };
    const uri = env.mongoUri.replace(/\/(\?|$)/, `/${DB}$1`);
    assert.equal(await run(['advise', '--uri', uri, '--verify', '--json', '--query', text], io), 0, err.join(''));
    assert.deepEqual(await leftovers('customers'), before, 'the tournament left something behind');
    const doc = JSON.parse(out.join('')) as {
      measurement: { status: string; winner: EntryJson; ranking: EntryJson[]; today: { work: number } | null };
      suggestions: { action: string; rule: string; keyPattern?: Record<string, number>; verification: { status: string; message: string } }[];
      notes: string[];
    };
    const m = doc.measurement;
    assert.equal(m.status, 'measured', JSON.stringify(m));
    assert.ok(doc.notes.some((n) => /groups of indexes built together, one per \$or branch/.test(n)), doc.notes.join(' | '));
    const rules = m.ranking.find((e) => e.ruleRank !== null);
    assert.ok(rules && rules.work !== null, "the rules' indexes per branch were not measured as a group");
    // The winning group is suggested whole: one or-branch index per branch, each verified.
    const group = doc.suggestions.filter((x) => x.rule === 'or-branch');
    assert.equal(group.length, 2, JSON.stringify(doc.suggestions.map((x) => [x.rule, x.keyPattern])));
    assert.ok(group.every((x) => x.action === 'create' && x.verification.status === 'verified'));
    assert.deepEqual(doc.suggestions.slice(0, 2), group);
    // On the whole collection, the group built together and run without a hint beats today's scan and
    // does no worse than the rules' group by more than the tournament's margin.
    const groupWork = await wholeCollectionSetWork('customers', text, group.map((x) => x.keyPattern!));
    const rulesAdvice = (await adviseMongoLive(session, command(text))).advice.suggestions.filter((x) => x.rule === 'or-branch' && x.action === 'create' && x.index?.engine === 'mongodb');
    const rulesWork = await wholeCollectionSetWork('customers', text, rulesAdvice.map((x) => (x.index as { keyPattern: Record<string, number> }).keyPattern));
    const scanWork = await wholeCollectionSetWork('customers', text, []);
    assert.ok(groupWork < scanWork / 10, `the group did ${groupWork}, the collection scan ${scanWork}`);
    assert.ok(groupWork <= rulesWork * 1.1, `the group did ${groupWork}, the rules' group ${rulesWork}`);
  });

  it('leaves nothing behind after a cancel while a $or group is measured', async function () {
    const before = await leftovers('customers');
    const abort = new AbortController();
    let steps = 0;
    const p = adviseMongoLive(session, command('db.customers.find({$or: [{tenant: 3}, {status: "deleted"}]})'), {
      measure: true,
      signal: abort.signal,
      onStep: (s) => {
        // The second 'explain' step measures the groups (indexes hidden and shown): cancel there.
        if (s === 'explain' && ++steps === 2) abort.abort();
      },
    });
    await assert.rejects(p, (e: unknown) => e instanceof AdapterError && e.kind === 'cancelled');
    await quiet('no operation of the cancelled tournament left on the server');
    assert.deepEqual(await leftovers('customers'), before);
  });

  it('keeps using an existing index that does as well instead of suggesting a new one', async function () {
    await db.collection('demoesr').createIndex({ e: 1, s: 1, r: 1 }, { name: 'ours' });
    try {
      const live = await adviseMongoLive(session, command('db.demoesr.find({e: 42, r: {$gt: 10}}).sort({s: 1})'), { measure: true });
      const first = live.advice.suggestions[0]!;
      assert.equal(first.action, 'keep', JSON.stringify(first));
      assert.equal(first.keep?.name, 'ours');
      assert.ok(!live.advice.suggestions.some((s) => s.action === 'create' && JSON.stringify(s.index?.engine === 'mongodb' ? s.index.keyPattern : null) === JSON.stringify({ e: 1, s: 1, r: 1 })));
    } finally {
      await db.collection('demoesr').dropIndex('ours');
    }
  });

  it('leaves nothing behind after an error', async function () {
    const before = await leftovers('demoesr');
    const p = adviseMongoLive(session, command('db.demoesr.find({e: 42, r: {$gt: 10}}).sort({s: 1})'), {
      measure: true,
      onStep: (s) => {
        if (s === 'explain') throw new Error('simulated failure once candidates exist');
      },
    });
    await assert.rejects(p, /simulated failure/);
    await quiet('no operation of the tournament left on the server');
    assert.deepEqual(await leftovers('demoesr'), before);
  });

  it('stops the server\'s work and leaves nothing behind after a cancel', async function () {
    const before = await leftovers('demoesr');
    const abort = new AbortController();
    let steps = 0;
    const p = adviseMongoLive(session, command('db.demoesr.find({e: {$gt: 500}, r: {$lt: 3}}).sort({s: 1})'), {
      measure: true,
      signal: abort.signal,
      onStep: (s) => {
        // The second 'indexes' step builds the candidates: cancel while they build.
        if (s === 'indexes' && ++steps === 2) abort.abort();
      },
    });
    await assert.rejects(p, (e: unknown) => e instanceof AdapterError && e.kind === 'cancelled');
    assert.equal(steps, 2);
    await quiet('no operation of the cancelled tournament left on the server');
    assert.deepEqual(await leftovers('demoesr'), before);
  });

  it('stops starting candidates at the time budget, says so, and reports progress up to every candidate', async function () {
    const before = await leftovers('demoesr');
    const spent = await adviseMongoLive(session, command('db.demoesr.find({e: 42, r: {$gt: 10}}).sort({s: 1})'), { measure: true, until: Date.now() });
    assert.equal(spent.measurement?.status, 'not-measured');
    assert.match(spent.measurement?.status === 'not-measured' ? spent.measurement.reason : '', /No candidate could be measured/);
    assert.deepEqual(await leftovers('demoesr'), before);
    const seen: { measured: number; of: number }[] = [];
    const live = await adviseMongoLive(session, command('db.demoesr.find({e: 42, r: {$gt: 10}}).sort({s: 1})'), { measure: true, onProgress: (p) => seen.push(p) });
    assert.equal(live.measurement?.status, 'measured');
    assert.equal(seen[0]?.measured, 0);
    assert.equal(seen.at(-1)?.measured, seen.at(-1)?.of, JSON.stringify(seen));
  });
});
