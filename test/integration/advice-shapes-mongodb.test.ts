// Advice for the MongoDB pipeline shapes the truth generator does not write (test/fixtures/shapes): a
// $match after $group, $unwind or $lookup. The rules split the $match as the server does; here the real
// server's explain shows what it moved before the stage (the filter its query layer received), the
// suggested index is the one the explained plan then scans, the $elemMatch rewrite returns the same
// documents, and `qpi advise` without --verify says the verdict is the rules' only and how to measure it.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db, type Document } from 'mongodb';
import { adviseMongo } from '../../src/core/index';
import { run, type Io } from '../../src/cli/main';
import { env } from './support/env';
import { loadMongoShapes } from '../fixtures/shapes/data';
import cases from '../fixtures/shapes/cases.json';

const DB = 'qpi_advice_shapes';
const caseOf = (id: string) => cases.mongodb.find((c) => c.id === id)!;

/** The filter the server's query layer received for a pipeline, from its explain. */
function serverFilter(explain: Document): Document {
  const stages = explain['stages'] as Document[] | undefined;
  const planner = stages ? (stages[0]!['$cursor'] as Document)['queryPlanner'] as Document : explain['queryPlanner'] as Document;
  return planner['parsedQuery'] as Document;
}

function winningIndex(explain: Document): string | undefined {
  const stages = explain['stages'] as Document[] | undefined;
  const planner = stages ? (stages[0]!['$cursor'] as Document)['queryPlanner'] as Document : explain['queryPlanner'] as Document;
  const find = (n: Document | undefined): string | undefined => (n === undefined ? undefined : typeof n['indexName'] === 'string' ? n['indexName'] : find((n['inputStage'] ?? n['queryPlan']) as Document | undefined));
  return find(planner['winningPlan'] as Document);
}

describe('advice on shapes the generator does not write: MongoDB pipelines (real server)', function () {
  this.timeout(120_000);
  let client: MongoClient;
  let db: Db;

  before(async function () {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db(DB);
    await db.dropDatabase();
    await loadMongoShapes(db);
  });

  after(async function () {
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  const explain = (pipeline: Document[]): Promise<Document> => db.command({ explain: { aggregate: 'orders', pipeline, cursor: {} }, verbosity: 'queryPlanner' });

  for (const id of ['m-group', 'm-unwind', 'm-lookup']) {
    it(`${id}: the rules move what the server moves, and the index they suggest is the one the server then scans`, async function () {
      const c = caseOf(id);
      const advice = adviseMongo({ collection: 'orders', pipeline: c.pipeline as Document[] });
      const first = advice.suggestions[0]!;
      assert.deepEqual(first.index?.engine === 'mongodb' ? first.index.keyPattern : undefined, c.expect.first);
      assert.equal(first.servesQueryAsWritten, true);
      assert.deepEqual(serverFilter(await explain(c.pipeline as Document[])), c.expect.serverMoves);
      const noIndexFor = (c.expect as { noIndexFor?: string }).noIndexFor;
      if (noIndexFor !== undefined) assert.ok(advice.notes.some((n) => n.includes(`on ${noIndexFor} `) && /no index/.test(n)), advice.notes.join(' | '));
      const name = await db.collection('orders').createIndex(first.index!.engine === 'mongodb' ? first.index!.keyPattern : {});
      try {
        assert.equal(winningIndex(await explain(c.pipeline as Document[])), name);
      } finally {
        await db.collection('orders').dropIndex(name);
      }
    });
  }

  it('m-group-accumulator: a $match on what $group computed gets no index, and says why', async function () {
    const advice = adviseMongo({ collection: 'orders', pipeline: caseOf('m-group-accumulator').pipeline as Document[] });
    assert.ok(advice.suggestions.every((s) => s.action === 'none'), JSON.stringify(advice.suggestions.map((s) => s.action)));
    assert.ok(advice.notes.some((n) => /filters what \$group computed: no index can help that stage/.test(n)), advice.notes.join(' | '));
    assert.deepEqual(serverFilter(await explain(caseOf('m-group-accumulator').pipeline as Document[])), {});
  });

  it('m-unwind: the $elemMatch copy before $unwind returns the same documents and, indexed, examines fewer', async function () {
    const pipeline = caseOf('m-unwind').pipeline as Document[];
    const advice = adviseMongo({ collection: 'orders', pipeline });
    const rw = advice.rewrites.find((r) => r.rule === 'match-first')!;
    assert.ok(rw?.structured?.pipeline, JSON.stringify(advice.rewrites));
    const rewritten = rw.structured!.pipeline as Document[];
    const asWritten = await db.collection('orders').aggregate(pipeline).toArray();
    const moved = await db.collection('orders').aggregate(rewritten).toArray();
    assert.ok(asWritten.length > 0);
    assert.deepEqual(moved, asWritten);
    const withRewrite = advice.suggestions.find((s) => !s.servesQueryAsWritten)!;
    const key = withRewrite.index!.engine === 'mongodb' ? withRewrite.index!.keyPattern : {};
    assert.deepEqual(key, { status: 1, 'items.sku': 1 });
    const name = await db.collection('orders').createIndex(key);
    try {
      const stats = async (p: Document[]): Promise<number> => {
        const e = await db.command({ explain: { aggregate: 'orders', pipeline: p, cursor: {} }, verbosity: 'executionStats' });
        const cursor = (e['stages'] as Document[])[0]!['$cursor'] as Document;
        return Number((cursor['executionStats'] as Document)['totalDocsExamined']);
      };
      const before = await stats(pipeline);
      const after = await stats(rewritten);
      assert.ok(after * 5 < before, `the rewrite examines ${after} documents, as written ${before}`);
    } finally {
      await db.collection('orders').dropIndex(name);
    }
  });

  it('qpi advise without --verify says the verdict is the rules\' only, and how to measure it', async function () {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { stdout: (x) => void out.push(x), stderr: (x) => void err.push(x), readStdin: () => '', readFile: () => '' };
    const uri = env.mongoUri.replace('/?', `/${DB}?`);
    const query = 'db.orders.find({customer: 7, status: "new"}).sort({created: -1}).limit(10)';
    assert.equal(await run(['advise', '--uri', uri, '--json', '--query', query], io), 0, err.join(''));
    const doc = JSON.parse(out.join('')) as { measurement: { status: string; rulesOnly: boolean; howToMeasure: string | null } };
    assert.equal(doc.measurement.status, 'not-measured');
    assert.equal(doc.measurement.rulesOnly, true);
    assert.match(doc.measurement.howToMeasure ?? '', /^Add --verify to measure the candidates/);
    out.length = 0;
    assert.equal(await run(['advise', '--uri', uri, '--query', query], io), 0, err.join(''));
    assert.match(out.join(''), /The rules' verdict only \(ESR, ERS, explode-for-sort\): no candidate was measured on your data.* Add --verify/);
    assert.match(out.join(''), /Verification: not run: the rules' verdict only/);
    out.length = 0;
    assert.equal(await run(['advise', '--uri', uri, '--verify', '--json', '--query', query], io), 0, err.join(''));
    const measured = JSON.parse(out.join('')) as { measurement: { status: string; rulesOnly: boolean; howToMeasure: string | null } };
    assert.equal(measured.measurement.status, 'measured');
    assert.equal(measured.measurement.rulesOnly, false);
    assert.equal(measured.measurement.howToMeasure, null);
  });
});
