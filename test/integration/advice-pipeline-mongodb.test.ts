// Pipelines as the server rewrites them, on a real mongod 6.0.5: the advice with a connection explains
// the aggregate and suggests the index for the filter the explain shows pushed to the collection scan,
// and a $lookup's other collection gets a suggestion of its own while no index there leads with the
// foreignField, and a note naming the index once one does.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db, type Document } from 'mongodb';
import { liveMongoAdvice, openMongoAdvice, type MongoAdviceSession } from '../../src/adapters/advise';
import { AdviceService } from '../../src/adapters/adviceService';
import { explainedLead } from '../../src/core/advice/mongoPipeline';
import type { MongoIndexSpec } from '../../src/core/advice/types';
import { parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import { random } from './support/adviceData';
import { env } from './support/env';

const DB = 'qpi_advice_pipeline';

function command(text: string): MongoCommand {
  const r = parseMongoQuery(text);
  if (!r.ok) assert.fail(r.error);
  return r.command;
}

/** Orders with an array of items, a region of five, a status of three, and the customer's number. */
function orders(count: number): Document[] {
  const rand = random(11);
  const regions = ['EU', 'US', 'APAC', 'LATAM', 'MEA'];
  const statuses = ['A', 'B', 'C'];
  return Array.from({ length: count }, (_, i) => ({
    _id: i,
    region: regions[Math.floor(rand() * regions.length)],
    status: statuses[Math.floor(rand() * statuses.length)],
    cust_no: Math.floor(rand() * 500),
    items: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => ({ sku: `s${Math.floor(rand() * 50)}`, qty: 1 + Math.floor(rand() * 9) })),
  }));
}

describe('MongoDB pipeline advice as the server explains it (real server)', function () {
  this.timeout(120_000);
  let client: MongoClient;
  let db: Db;
  let session: MongoAdviceSession;

  before(async function () {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db(DB);
    await db.dropDatabase();
    await db.collection<Document>('orders').insertMany(orders(4_000));
    await db.collection<Document>('customers').insertMany(Array.from({ length: 500 }, (_, i): Document => ({ _id: i, cust_no: i, name: `c${i}` })));
    session = await openMongoAdvice({ uri: env.mongoUri, database: DB });
  });

  after(async function () {
    await session?.close();
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  it('$unwind then $match on another field than the unwound path: the index on that field, as the explain shows it pushed down', async function () {
    const text = `db.orders.aggregate([{ $unwind: "$items" }, { $match: { region: "EU" } }])`;
    const explain = await db.command({ explain: { aggregate: 'orders', pipeline: [{ $unwind: '$items' }, { $match: { region: 'EU' } }], cursor: {} }, verbosity: 'queryPlanner' });
    const lead = explainedLead(explain);
    assert.deepEqual(lead?.filter, { region: { $eq: 'EU' } }, 'the server pushes the $match on region before $unwind');
    const live = await liveMongoAdvice(session, command(text));
    assert.equal(live.advice.refusal, undefined, live.advice.refusal);
    const first = live.advice.suggestions[0];
    assert.equal(first?.action, 'create', JSON.stringify(live.advice.suggestions));
    assert.deepEqual((first!.index as MongoIndexSpec).keyPattern, { region: 1 });
    assert.equal((first!.index as MongoIndexSpec).collection, 'orders');
    // The explain and the rules' split agree here, so the advice does not say they differ.
    assert.ok(!live.advice.notes.some((n) => /the advice follows the explain/.test(n)), live.advice.notes.join('\n'));
  });

  it('a $match on a renamed field, which 6.0.5 moves before the $project: the index on the original path for the pipeline as written, and the advice says the explain won', async function () {
    const pipeline = [{ $project: { r: '$region', status: 1 } }, { $match: { r: 'EU' } }];
    const explain = await db.command({ explain: { aggregate: 'orders', pipeline, cursor: {} }, verbosity: 'queryPlanner' });
    assert.deepEqual(explainedLead(explain)?.filter, { region: { $eq: 'EU' } }, 'the server moves the $match on the renamed field');
    const live = await liveMongoAdvice(session, command(`db.orders.aggregate([{ $project: { r: "$region", status: 1 } }, { $match: { r: "EU" } }])`));
    const first = live.advice.suggestions[0];
    assert.equal(first?.action, 'create', JSON.stringify(live.advice.suggestions));
    assert.deepEqual((first!.index as MongoIndexSpec).keyPattern, { region: 1 });
    // The rules alone offer it only with the $match moved first; the explain shows the server already does that.
    assert.equal(first!.servesQueryAsWritten, true);
    assert.ok(live.advice.notes.some((n) => /filtered on region where the rules' reading of the pipeline gives no field: the advice follows the explain\./.test(n)), live.advice.notes.join('\n'));
  });

  it('$lookup: a second suggestion on the other collection while none of its indexes leads with foreignField, a note once one does', async function () {
    const text = `db.orders.aggregate([{ $match: { region: "EU" } }, { $lookup: { from: "customers", localField: "cust_no", foreignField: "cust_no", as: "customer" } }])`;
    const without = await liveMongoAdvice(session, command(text));
    assert.equal(without.advice.refusal, undefined, without.advice.refusal);
    assert.deepEqual((without.advice.suggestions[0]!.index as MongoIndexSpec).keyPattern, { region: 1 });
    const other = without.advice.suggestions.filter((s) => (s.index as MongoIndexSpec | undefined)?.collection === 'customers');
    assert.equal(other.length, 1, JSON.stringify(without.advice.suggestions.map((s) => s.createText)));
    assert.deepEqual((other[0]!.index as MongoIndexSpec).keyPattern, { cust_no: 1 });
    assert.equal(other[0]!.createText, 'db.customers.createIndex({cust_no: 1})');
    assert.ok(other[0]!.rank > 1);

    await db.collection('customers').createIndex({ cust_no: 1, name: 1 }, { name: 'cust_no_name' });
    try {
      const withIndex = await liveMongoAdvice(session, command(text));
      assert.ok(!withIndex.advice.suggestions.some((s) => (s.index as MongoIndexSpec | undefined)?.collection === 'customers'));
      assert.ok(withIndex.advice.notes.some((n) => /reads customers by cust_no through its index cust_no_name/.test(n)), withIndex.advice.notes.join('\n'));
    } finally {
      await db.collection('customers').dropIndex('cust_no_name');
    }
  });

  it('through the advice service: the suggestion on the other collection is not measured on the queried one, not "kept" for an index of the queried one, and an index built on the other is a new answer', async function () {
    const text = `db.orders.aggregate([{ $match: { region: "EU" } }, { $lookup: { from: "customers", localField: "cust_no", foreignField: "cust_no", as: "customer" } }])`;
    await db.collection('orders').createIndex({ cust_no: 1 }, { name: 'orders_cust_no' });
    const service = new AdviceService();
    try {
      const live = await service.mongo(session, command(text), { connection: 'local' });
      const onCustomers = (l: typeof live) => l.advice.suggestions.find((s) => (s.index as MongoIndexSpec | undefined)?.collection === 'customers');
      assert.equal(onCustomers(live)?.action, 'create', 'an index of orders on cust_no does not serve a lookup into customers');
      await service.measureMongo(session, command(text), live, { sampleSize: 1_000 });
      const other = onCustomers(live)!;
      assert.equal(other.verification.status, 'not-run');
      assert.equal(other.rank, live.advice.suggestions.length);
      assert.ok(live.advice.notes.some((n) => /suggestion on customers was not measured: a measurement copies a sample of orders only/.test(n)), live.advice.notes.join('\n'));
      const top = live.advice.suggestions[0]!;
      assert.notEqual(top.verification.status, 'not-run', 'the suggestion on orders was measured');

      await db.collection('customers').createIndex({ cust_no: 1 }, { name: 'customers_cust_no' });
      const again = await service.mongo(session, command(text), { connection: 'local' });
      assert.notEqual(again, live, 'a new answer after the index on customers');
      assert.equal(onCustomers(again), undefined);
    } finally {
      await db.collection('orders').dropIndex('orders_cust_no').catch(() => {});
      await db.collection('customers').dropIndex('customers_cust_no').catch(() => {});
    }
  });

  it('$lookup on a collection the database does not have: no suggestion on it, and the note says the join reads nothing', async function () {
    const live = await liveMongoAdvice(session, command(`db.orders.aggregate([{ $lookup: { from: "nowhere", localField: "cust_no", foreignField: "cust_no", as: "x" } }])`));
    assert.ok(!live.advice.suggestions.some((s) => (s.index as MongoIndexSpec | undefined)?.collection === 'nowhere'));
    assert.ok(live.advice.notes.some((n) => /\$lookup at stage 1 joins nothing: nowhere does not exist/.test(n)), live.advice.notes.join('\n'));
    // The advice service lists the other collection's indexes for its cache key too: a missing one is none.
    const served = await new AdviceService().mongo(session, command(`db.orders.aggregate([{ $lookup: { from: "nowhere", localField: "cust_no", foreignField: "cust_no", as: "x" } }])`), { connection: 'local' });
    assert.ok(served.advice.notes.some((n) => /joins nothing: nowhere does not exist/.test(n)), served.advice.notes.join('\n'));
  });
});
