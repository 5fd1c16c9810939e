// Index advice with a connection, proven on a real mongod 6.0.5. The truth cases' collections are
// recreated at a smaller size by our own generator; for each case the advisor runs live (existing
// indexes, counts, the sampled trial), and then every candidate key order of the case (the measured list
// in test/fixtures/truth) is built on the same collection and the query is explained with a hint on each:
// the advisor's first suggestion must do within 10% of the least work found. Work is measured here from
// the raw explain output: keys examined + documents examined + documents entering a blocking SORT.
// Around every live run the collection's hash, its indexes and the list of collections must not change:
// the trial's scratch collection is gone afterwards, also after a cancel or an error.

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient, type Db, type Document } from 'mongodb';
import { openMongoAdvice, type LiveAdvice, type MongoAdviceSession } from '../../src/adapters/advise';
import { adviseMongoLive } from '../../src/adapters/adviceService';
import { AdapterError } from '../../src/adapters/errors';
import { mongoStats } from '../../src/adapters/stats';
import type { MeasuredVerdict } from '../../src/adapters/adviceService';
import { mongoShape } from '../../src/core/advice/mongoShape';
import type { MongoIndexSpec, Suggestion } from '../../src/core/advice/types';
import { parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import { run } from '../../src/cli/main';
import { capturedIo } from './support/cliIo';
import { customers, demoesr, orders } from './support/adviceData';
import { env } from './support/env';
import { until } from '../until';

const DB = 'qpi_advice';
const truthDir = join(__dirname, '..', 'fixtures', 'truth');

function command(text: string): MongoCommand {
  const r = parseMongoQuery(text);
  if (!r.ok) assert.fail(r.error);
  return r.command;
}

/** The key patterns every candidate of a truth case was measured with ('COLLSCAN' for the collection scan). */
function candidatesOf(id: string): (Record<string, number> | 'COLLSCAN')[] {
  const c = JSON.parse(readFileSync(join(truthDir, id, 'case.json'), 'utf8')) as { candidates: { index: unknown }[] };
  return c.candidates.map((x) => (typeof x.index === 'string' ? 'COLLSCAN' : (x.index as Record<string, number>)));
}

interface Work {
  keys: number;
  docs: number;
  sorted: number;
  total: number;
  shape: string;
}

/** Work read straight from the server's executionStats, independently of the product's plan reader. */
function workOf(explain: Document): Work {
  const es = explain['executionStats'] as Document;
  let sorted = 0;
  const kinds: string[] = [];
  const walk = (st: Document | undefined): void => {
    if (!st) return;
    kinds.push(String(st['stage']));
    if (st['stage'] === 'SORT') sorted += Number((st['inputStage'] as Document | undefined)?.['nReturned'] ?? 0);
    walk(st['inputStage'] as Document | undefined);
    for (const s of (st['inputStages'] as Document[] | undefined) ?? []) walk(s);
  };
  walk(es['executionStages'] as Document);
  const keys = Number(es['totalKeysExamined']);
  const docs = Number(es['totalDocsExamined']);
  return { keys, docs, sorted, total: keys + docs + sorted, shape: kinds.join('>') };
}

function sameKeys(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return JSON.stringify(Object.entries(a)) === JSON.stringify(Object.entries(b));
}

describe('MongoDB index advice with a connection (real server)', function () {
  this.timeout(120_000);
  let client: MongoClient;
  let db: Db;
  let session: MongoAdviceSession;

  before(async function () {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db(DB);
    await db.dropDatabase();
    await Promise.all([
      db.collection('demoesr').insertMany(demoesr(20_000) as unknown as Document[], { ordered: false }),
      db.collection('customers').insertMany(customers(20_000) as unknown as Document[], { ordered: false }),
      db.collection('orders').insertMany(orders(10_000) as unknown as Document[], { ordered: false }),
    ]);
    session = await openMongoAdvice({ uri: env.mongoUri, database: DB });
  });

  after(async function () {
    await session?.close();
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  /** What must not change: the collection's content hash, its indexes, and the collections of the database. */
  async function fingerprint(coll: string): Promise<string> {
    const hash = await db.command({ dbHash: 1, collections: [coll] });
    const indexes = await db.collection(coll).listIndexes().toArray();
    const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
    return JSON.stringify({ md5: (hash['collections'] as Document)[coll], indexes: indexes.map((i) => [i['name'], i['key']]), names });
  }

  async function scratchLeft(): Promise<string[]> {
    return (await db.listCollections({ name: /^qpi_trial_/ }, { nameOnly: true }).toArray()).map((c) => c.name);
  }

  async function adviseUnchanged(coll: string, text: string, opts: Parameters<typeof adviseMongoLive>[2] = {}): Promise<LiveAdvice> {
    const before = await fingerprint(coll);
    const live = await adviseMongoLive(session, command(text), opts);
    assert.equal(live.advice.refusal, undefined, live.advice.refusal);
    assert.equal(await fingerprint(coll), before, 'the advice changed the collection, its indexes or the list of collections');
    assert.deepEqual(await scratchLeft(), []);
    return live;
  }

  async function explainHinted(coll: string, text: string, hint: Document): Promise<Work> {
    const cmd = command(text);
    const find: Document = { find: coll, filter: cmd.filter ?? {}, hint };
    if (cmd.sort) find['sort'] = cmd.sort;
    if (cmd.projection) find['projection'] = cmd.projection;
    if (cmd.limit !== undefined) find['limit'] = cmd.limit;
    if (cmd.skip !== undefined) find['skip'] = cmd.skip;
    return workOf(await db.command({ explain: find, verbosity: 'executionStats' }));
  }

  /** Builds every candidate (and the suggestion's own key pattern when missing), hints each, and drops them. */
  async function measure(id: string, coll: string, text: string, s: Suggestion): Promise<{ suggestion: Work; least: Work; leastIndex: string }> {
    const cands = candidatesOf(id);
    const keys = cands.filter((c): c is Record<string, number> => c !== 'COLLSCAN');
    const own = s.action === 'none' ? undefined : (s.index as MongoIndexSpec).keyPattern;
    if (own && !keys.some((k) => sameKeys(k, own))) keys.push(own);
    await db.collection(coll).createIndexes(keys.map((key) => ({ key })));
    try {
      let least: Work | undefined;
      let leastIndex = '';
      for (const c of cands) {
        const w = await explainHinted(coll, text, c === 'COLLSCAN' ? { $natural: 1 } : c);
        if (!least || w.total < least.total) {
          least = w;
          leastIndex = JSON.stringify(c);
        }
      }
      const suggestion = await explainHinted(coll, text, own ?? { $natural: 1 });
      return { suggestion, least: least!, leastIndex };
    } finally {
      await db.collection(coll).dropIndexes();
    }
  }

  const cases: { id: string; coll: string; text: string; first?: string }[] = [
    { id: 'm01_orders_elemmatch_sort', coll: 'orders', text: 'db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}}).sort({created_at: -1}).limit(10)' },
    { id: 'm02b_esr_sort_range64', coll: 'demoesr', text: 'db.demoesr.find({e: 42, r: {$gt: 10}}).sort({s: 1})', first: 'esr' },
    { id: 'm03a_in2_explode_sort_merge', coll: 'demoesr', text: 'db.demoesr.find({e: 42, r: {$in: [10, 30]}}).sort({s: 1}).limit(5)', first: 'explode-in' },
    {
      id: 'm03b_in250_no_explode',
      coll: 'demoesr',
      text: `db.demoesr.find({e: 42, r: {$in: [${Array.from({ length: 250 }, (_, i) => 2 * i).join(', ')}]}}).sort({s: 1}).limit(5)`,
    },
    // The truth case skips 5,000 of about 20,000; with a tenth of the data, 500 of about 2,000.
    { id: 'm05a_skip_pagination', coll: 'demoesr', text: 'db.demoesr.find({e: 42}).sort({s: 1}).skip(500).limit(20)' },
    { id: 'm06c_regex_prefix_sort', coll: 'customers', text: 'db.customers.find({tenant: 7, name: /^ab/}).sort({created: -1})', first: 'ers' },
    { id: 'm16_low_selectivity', coll: 'customers', text: 'db.customers.find({status: "active"})', first: 'collection-scan' },
  ];

  describe('the first suggestion, with counts from the server, is within 10% of the least measured work', function () {
    for (const c of cases) {
      it(c.id, async function () {
        const live = await adviseUnchanged(c.coll, c.text, { measure: true });
        assert.equal(live.statsMethod, 'exact');
        assert.deepEqual(live.existingIndexes, ['_id_']);
        const first = live.advice.suggestions[0]!;
        if (c.first) assert.equal(first.rule, c.first, first.ruleText);
        const v = first.verification as MeasuredVerdict;
        assert.ok(v.status === 'verified', `${c.id}: the trial did not verify the first suggestion: ${JSON.stringify(v)}`);
        assert.equal(typeof v.before, 'number');
        assert.equal(typeof v.after, 'number');
        assert.equal(live.verification.method, 'tournament');
        assert.ok(v.sampleSize! >= 1000 && v.sampleSize! <= v.collectionSize!, `sample of ${v.sampleSize} of ${v.collectionSize}`);
        const m = await measure(c.id, c.coll, c.text, first);
        if (process.env.QPI_TEST_VERBOSE) console.log(c.id, first.action, JSON.stringify(first.index && (first.index as MongoIndexSpec).keyPattern), m.suggestion, m.leastIndex, m.least, v.message);
        assert.ok(m.suggestion.total <= m.least.total * 1.1,
          `${c.id}: ${first.action} ${JSON.stringify(first.index && (first.index as MongoIndexSpec).keyPattern)} does ${m.suggestion.total} (${m.suggestion.shape}), ${m.leastIndex} does ${m.least.total} (${m.least.shape})`);
      });
    }
  });

  it('a selective range flips ESR to ERS when the counts say so, and the server agrees', async function () {
    // r > 100 keeps about 2% of e = 42: reading the range and sorting it beats walking the whole tenant in order.
    const text = 'db.demoesr.find({e: 42, r: {$gt: 100}}).sort({s: 1})';
    const live = await adviseUnchanged('demoesr', text);
    const first = live.advice.suggestions[0]!;
    assert.equal(first.rule, 'ers');
    assert.equal(first.conditions.find((x) => x.below.startsWith('ERS'))!.decided, 'below');
    await db.collection('demoesr').createIndexes([{ key: { e: 1, s: 1, r: 1 } }, { key: { e: 1, r: 1, s: 1 } }]);
    try {
      const esr = await explainHinted('demoesr', text, { e: 1, s: 1, r: 1 });
      const ers = await explainHinted('demoesr', text, (first.index as MongoIndexSpec).keyPattern);
      assert.ok(ers.total * 5 < esr.total, `ERS ${ers.total} (${ers.shape}) against ESR ${esr.total} (${esr.shape})`);
    } finally {
      await db.collection('demoesr').dropIndexes();
    }
  });

  it('says "keep using" an existing index that serves, verifies it on the sample, and proposes no duplicate', async function () {
    await db.collection('demoesr').createIndex({ e: 1, s: 1, r: 1 });
    try {
      const live = await adviseUnchanged('demoesr', 'db.demoesr.find({e: 42, r: {$gt: 10}}).sort({s: 1})', { measure: true });
      const first = live.advice.suggestions[0]!;
      assert.equal(first.action, 'keep');
      assert.equal(first.keep?.name, 'e_1_s_1_r_1');
      assert.match(first.keep!.reason, /^Keep using e_1_s_1_r_1/);
      assert.ok(!live.advice.suggestions.some((s) => s.action === 'create' && sameKeys((s.index as MongoIndexSpec).keyPattern, { e: 1, s: 1, r: 1 })));
      const v = first.verification as MeasuredVerdict;
      assert.equal(v.status, 'verified');
      // Measured against every candidate, a collection scan among them: the kept index does less work.
      const t = live.measurement?.status === 'measured' ? live.measurement.tournament : assert.fail('not measured');
      const scan = t.ranking.find((e) => e.origin === 'scan')!;
      assert.ok(scan.measured!.work > v.after!, `collection scan ${scan.measured!.work} against the kept index ${v.after}`);
      assert.equal(v.usedByPlanner, true);
      assert.match(live.advice.writeCost ?? '', /2 indexes/);
    } finally {
      await db.collection('demoesr').dropIndex('e_1_s_1_r_1');
    }
  });

  it('proposes extending an existing prefix index and names the index it replaces', async function () {
    await db.collection('demoesr').createIndex({ e: 1 });
    try {
      const live = await adviseUnchanged('demoesr', 'db.demoesr.find({e: 42}).sort({s: 1}).limit(20)');
      const first = live.advice.suggestions[0]!;
      assert.equal(first.action, 'create');
      assert.equal(JSON.stringify((first.index as MongoIndexSpec).keyPattern), '{"e":1,"s":1}');
      assert.deepEqual(first.replaces, ['e_1']);
    } finally {
      await db.collection('demoesr').dropIndex('e_1');
    }
  });

  describe('the scratch collection is always dropped', function () {
    for (const step of ['copy', 'indexes', 'explain'] as const) {
      it(`after a cancel during the ${step} step`, async function () {
        const before = await fingerprint('demoesr');
        const abort = new AbortController();
        let seen = false;
        const p = adviseMongoLive(session, command('db.demoesr.find({e: 42, r: {$gt: 10}}).sort({s: 1})'), {
          measure: true,
          signal: abort.signal,
          onStep: (s) => {
            if (s === step && !seen) {
              seen = true;
              abort.abort();
            }
          },
        });
        await assert.rejects(p, (err: unknown) => err instanceof AdapterError && err.kind === 'cancelled');
        assert.ok(seen);
        assert.deepEqual(await scratchLeft(), []);
        assert.equal(await fingerprint('demoesr'), before);
      });
    }

    it('after a cancel that kills a running explain on the server', async function () {
      const before = await fingerprint('demoesr');
      // A filter that costs 20 ms a document keeps the trial's explain running for seconds.
      const slow = 'db.demoesr.find({e: 42, $expr: {$function: {body: "function() { var t = Date.now(); while (Date.now() - t < 20) {} return true; }", args: [], lang: "js"}}}).sort({s: 1})';
      const abort = new AbortController();
      let started = 0;
      let cancelled: Promise<unknown> | undefined;
      const p = adviseMongoLive(session, command(slow), {
        measure: true,
        signal: abort.signal,
        onStep: (s) => {
          if (s === 'explain' && started === 0) {
            started = Date.now();
            // Cancel once the explain runs on the server, so there is a server operation to kill.
            const ours = async () => ((await client.db('admin').command({ currentOp: true, 'command.comment': /^qpi-/ }))['inprog'] as unknown[]).length > 0;
            cancelled = until('the trial explain running on the server', ours, { pauseMs: 20 }).finally(() => abort.abort());
          }
        },
      });
      await assert.rejects(p, (err: unknown) => err instanceof AdapterError && err.kind === 'cancelled');
      await cancelled;
      assert.ok(Date.now() - started < 5_000, `the cancel took ${Date.now() - started} ms`);
      const running = await client.db('admin').command({ currentOp: true, 'command.comment': /^qpi-/ });
      assert.deepEqual(running['inprog'], []);
      assert.deepEqual(await scratchLeft(), []);
      assert.equal(await fingerprint('demoesr'), before);
    });

    it('after an error in the middle of the trial', async function () {
      const before = await fingerprint('customers');
      // The indexes step starts once the sample has been copied into the scratch collection.
      const p = adviseMongoLive(session, command('db.customers.find({tenant: 7}).sort({created: -1})'), {
        measure: true,
        onStep: (s) => {
          if (s === 'indexes') throw new Error('simulated failure after the copy');
        },
      });
      await assert.rejects(p, /simulated failure/);
      assert.deepEqual(await scratchLeft(), []);
      assert.equal(await fingerprint('customers'), before);
    });
  });

  it('estimates a big collection from one $sample: the server reads about the sample, and the ratios hold', async function () {
    await db.command({ profile: 2 });
    try {
      const shape = mongoShape({ collection: 'demoesr', filter: { e: 42, r: { $gt: 10 } } });
      assert.ok(shape.ok);
      const report = await mongoStats(db, 'demoesr', shape.shape, { exactUpTo: 5_000, sampleSize: 900 });
      assert.equal(report.method, 'sampled');
      assert.equal(report.sampleSize, 900);
      const exactE = await db.collection('demoesr').countDocuments({ e: 42 });
      const exactR = await db.collection('demoesr').countDocuments({ r: { $gt: 10 } });
      const m = report.stats.matching!;
      assert.ok(Math.abs(m['e']! - exactE) < 0.4 * exactE, `e = 42: sampled ${m['e']}, exact ${exactE}`);
      assert.ok(Math.abs(m['r']! - exactR) < 0.15 * exactR, `r > 10: sampled ${m['r']}, exact ${exactR}`);
      assert.ok(report.counted.every((c) => !c.exact));
      await db.command({ profile: 0 });
      const ops = await db.collection('system.profile').find({ 'command.comment': /^qpi-stats-/ }).toArray();
      assert.ok(ops.length >= 2, 'the statistics operations were profiled');
      for (const op of ops) {
        assert.ok(Number(op['docsExamined'] ?? 0) <= 1_000, `${JSON.stringify(op['command'])} examined ${op['docsExamined']} documents`);
        // estimatedDocumentCount is a count without a query: it reads the collection's metadata only.
        const cmd = op['command'] as Document;
        assert.ok(!('count' in cmd) || Object.keys((cmd['query'] as Document | undefined) ?? {}).length === 0, `a count with a filter ran: ${JSON.stringify(cmd)}`);
      }
      // A sample of 5% or more would make $sample read the whole collection: it is cut below that.
      const capped = await mongoStats(db, 'demoesr', shape.shape, { exactUpTo: 5_000, sampleSize: 5_000 });
      assert.equal(capped.sampleSize, 980);
      assert.ok(capped.notes.some((n) => /cut to 980/.test(n)));
    } finally {
      await db.command({ profile: 0 });
      await db.collection('system.profile').drop().catch(() => {});
    }
  });

  it('qpi advise --uri --verify --json: ordered key pattern and the trial numbers', async function () {
    const io = capturedIo();
    const uri = env.mongoUri.replace(/\/(\?|$)/, `/${DB}$1`);
    const before = await fingerprint('orders');
    const code = await run(['advise', '--uri', uri, '--verify', '--sample', '500', '--json', '--query', cases[0]!.text], io);
    assert.equal(code, 0, io.err);
    assert.equal(await fingerprint('orders'), before);
    const doc = JSON.parse(io.out) as { connected: boolean; serverVersion: string; existingIndexes: string[]; sampleSize: number; suggestions: { keyPattern: Record<string, number>; verification: MeasuredVerdict }[] };
    assert.equal(doc.connected, true);
    assert.equal(doc.serverVersion, '6.0.5');
    assert.deepEqual(doc.existingIndexes, ['_id_']);
    // --sample is the least the tournament copies; the query's selectivity may ask for more.
    assert.ok(doc.sampleSize >= 500, `sample of ${doc.sampleSize}`);
    const first = doc.suggestions[0]!;
    assert.deepEqual(Object.keys(first.keyPattern).sort(), ['country_id', 'created_at', 'order_details.product_id']);
    assert.equal(Object.keys(first.keyPattern)[2], 'created_at');
    assert.equal(first.keyPattern['created_at'], -1);
    assert.equal(first.verification.status, 'verified');
    assert.equal(first.verification.sampleSize, doc.sampleSize);
    assert.ok(first.verification.numbersAfter!.work < first.verification.numbersBefore!.work);
  });
});
