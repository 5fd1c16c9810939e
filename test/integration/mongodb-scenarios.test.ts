// The MongoDB scenarios the product teaches, run on a real mongod 6.0.5 with seeded data, asserting the
// numbers the server reports as the core reads them (loadPlan): the ESR plan of the orders query, the
// keys and seeks of ESR/ER/RE indexes, explode-for-sort, $project before $match, skip against keyset.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db } from 'mongodb';
import { connectMongo, type MongoConnection } from '../../src/adapters/mongodb';
import { parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import { env, nodesOf, onlyNode, planOf, shape } from './support/env';
import { ARTICLE_DEMOESR, customerDocs, esrDocs, orderDocs, type CustomerDoc, type EsrDoc, type OrderDoc } from './support/seed';

const DB = 'qpi_scenarios';

function query(text: string): MongoCommand {
  const r = parseMongoQuery(text);
  if (!r.ok) assert.fail(r.error);
  return r.command;
}

describe('MongoDB scenarios on a real server', function () {
  let client: MongoClient;
  let db: Db;
  let conn: MongoConnection;

  before(async function () {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db(DB);
    await db.dropDatabase();
    const orders = orderDocs(20_000);
    const esr = esrDocs(20_000);
    const customers = customerDocs(5_000);
    await Promise.all([
      db.collection<OrderDoc>('orders').insertMany(orders, { ordered: false }),
      db.collection<EsrDoc>('esr').insertMany(esr, { ordered: false }),
      db.collection<CustomerDoc>('customers').insertMany(customers, { ordered: false }),
      db.collection('demoesr').insertMany(ARTICLE_DEMOESR.map((d) => ({ ...d }))),
    ]);
    await db.collection('orders').createIndex({ country_id: 1, 'order_details.product_id': 1, created_at: -1 });
    await db.collection('esr').createIndexes([{ key: { e: 1, r: 1, s: 1 } }, { key: { e: 1, s: 1 } }]);
    await db.collection('customers').createIndex({ 'contact.email': 1 });
    await db.collection('demoesr').createIndexes([{ key: { e: 1, s: 1, r: 1 } }, { key: { e: 1, r: 1 } }, { key: { r: 1, e: 1 } }]);
    conn = await connectMongo({ uri: env.mongoUri });
  });

  after(async function () {
    await conn?.close();
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  async function explain(text: string) {
    return conn.explain(query(text), { verbosity: 'executionStats', database: DB, timeoutMs: 60_000 });
  }

  it('reports the server as a real mongod 6.0.5', function () {
    assert.equal(conn.server.kind, 'mongod');
    assert.equal(conn.server.product, 'MongoDB');
    assert.equal(conn.server.version, '6.0.5');
  });

  it('ESR index on orders: LIMIT > FETCH > IXSCAN reading exactly 10 keys and 10 documents for 10 results, one seek, no SORT', async function () {
    const result = await explain('db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}}).sort({created_at: -1}).limit(10)');
    const plan = planOf(result);
    assert.equal(shape(plan), 'LIMIT>FETCH>IXSCAN');
    assert.equal(nodesOf(plan, 'SORT').length, 0);
    const ix = onlyNode(plan, 'IXSCAN');
    assert.equal(ix.details.indexName, 'country_id_1_order_details.product_id_1_created_at_-1');
    assert.equal(ix.details.isMultiKey, true);
    assert.deepEqual(ix.details.indexBounds, { country_id: ['[1, 1]'], 'order_details.product_id': ['[5, 5]'], created_at: ['[MaxKey, MinKey]'] });
    assert.equal(ix.metrics.keysExamined, 10);
    assert.equal(ix.metrics.seeks, 1);
    assert.equal(onlyNode(plan, 'FETCH').metrics.docsExamined, 10);
    assert.equal(plan.totals.keysExamined, 10);
    assert.equal(plan.totals.docsExamined, 10);
    assert.equal(plan.totals.nReturned, 10);
    assert.equal(result.serverVersion, '6.0.5');
    assert.ok(result.durationMs >= 0);
    assert.deepEqual(JSON.parse(result.rawText).command.filter, { country_id: 1, order_details: { $elemMatch: { product_id: 5 } } });
  });

  describe('the skip-scan article, on its own five documents', function () {
    const text = (hint: string) => `db.demoesr.find({ r: {$gt: 10}, e: {$eq: 42} }, {e: 1, s: 1, r: 1, _id: 0}).hint(${hint})`;

    it('ESR {e:1, s:1, r:1}: covered, 5 keys for 2 results with 3 seeks', async function () {
      const plan = planOf(await explain(text('{e: 1, s: 1, r: 1}')));
      assert.equal(shape(plan), 'PROJECTION_COVERED>IXSCAN');
      const ix = onlyNode(plan, 'IXSCAN');
      assert.deepEqual([ix.metrics.keysExamined, ix.metrics.seeks, plan.totals.docsExamined, plan.totals.nReturned], [5, 3, 0, 2]);
    });

    it('ER {e:1, r:1}: 2 keys, 2 documents, 2 results, 1 seek', async function () {
      const plan = planOf(await explain(text('{e: 1, r: 1}')));
      assert.equal(shape(plan), 'PROJECTION_SIMPLE>FETCH>IXSCAN');
      const ix = onlyNode(plan, 'IXSCAN');
      assert.deepEqual(ix.details.indexBounds, { e: ['[42, 42]'], r: ['(10, inf.0]'] });
      assert.deepEqual([ix.metrics.keysExamined, ix.metrics.seeks, plan.totals.docsExamined, plan.totals.nReturned], [2, 1, 2, 2]);
    });

    it('RE {r:1, e:1}: 3 keys for 2 results with 2 seeks (one value of e skipped)', async function () {
      const plan = planOf(await explain(text('"r_1_e_1"')));
      const ix = onlyNode(plan, 'IXSCAN');
      assert.deepEqual(ix.details.indexBounds, { r: ['(10, inf.0]'], e: ['[42, 42]'] });
      assert.deepEqual([ix.metrics.keysExamined, ix.metrics.seeks, plan.totals.docsExamined, plan.totals.nReturned], [3, 2, 2, 2]);
    });
  });

  describe('$in and the sort (explode-for-sort)', function () {
    it('two values: one IXSCAN per value merged by SORT_MERGE, no blocking SORT', async function () {
      const plan = planOf(await explain('db.esr.find({e: 42, r: {$in: [10, 30]}}).sort({s: 1}).limit(5).hint({e: 1, r: 1, s: 1})'));
      assert.equal(nodesOf(plan, 'SORT').length, 0, shape(plan));
      assert.equal(nodesOf(plan, 'SORT_MERGE').length, 1, shape(plan));
      const scans = nodesOf(plan, 'IXSCAN');
      assert.equal(scans.length, 2);
      assert.deepEqual(scans.map((s) => s.details.indexBounds!.r), [['[10, 10]'], ['[30, 30]']]);
      assert.equal(plan.totals.nReturned, 5);
      // A pushed-down limit: the merge reads about as many keys as it returns, not every match.
      assert.ok(plan.totals.keysExamined! <= 7, `keysExamined ${plan.totals.keysExamined}`);
    });

    it('250 values: the order is lost and a blocking SORT reads every match', async function () {
      const values = Array.from({ length: 250 }, (_, i) => i).join(', ');
      const plan = planOf(await explain(`db.esr.find({e: 42, r: {$in: [${values}]}}).sort({s: 1}).limit(5).hint({e: 1, r: 1, s: 1})`));
      assert.equal(nodesOf(plan, 'SORT_MERGE').length, 0, shape(plan));
      const sort = onlyNode(plan, 'SORT');
      const ix = onlyNode(plan, 'IXSCAN');
      assert.equal(ix.details.indexBounds!.r!.length, 250);
      const matches = await db.collection('esr').countDocuments({ e: 42, r: { $in: Array.from({ length: 250 }, (_, i) => i) } });
      assert.ok(matches > 1000, `the seed gives ${matches} matches`);
      assert.equal(ix.metrics.rowsReturned, matches, 'every match goes into the sort');
      assert.equal(sort.metrics.rowsReturned, 5);
      assert.equal(plan.totals.nReturned, 5);
    });
  });

  describe('$project before $match', function () {
    const email = customerDocs(5_000)[1234]!.contact.email;

    it('renaming first hides the index: COLLSCAN over every customer', async function () {
      const result = await explain(`db.customers.aggregate([{$project: {name: 1, email: "$contact.email"}}, {$match: {email: "${email}"}}])`);
      const plan = planOf(result);
      assert.equal(nodesOf(plan, 'IXSCAN').length, 0, shape(plan));
      assert.equal(nodesOf(plan, 'COLLSCAN').length, 1, shape(plan));
      assert.equal(plan.totals.docsExamined, 5_000);
    });

    it('matching on the dotted path first uses the index: 1 key, 1 document', async function () {
      const plan = planOf(await explain(`db.customers.aggregate([{$match: {"contact.email": "${email}"}}, {$project: {name: 1, email: "$contact.email"}}])`));
      assert.equal(nodesOf(plan, 'COLLSCAN').length, 0, shape(plan));
      const ix = onlyNode(plan, 'IXSCAN');
      assert.equal(ix.details.indexName, 'contact.email_1');
      assert.equal(plan.totals.keysExamined, 1);
      assert.equal(plan.totals.docsExamined, 1);
    });
  });

  describe('pagination', function () {
    it('skip(1000).limit(20) examines 1,020 keys to return 20', async function () {
      const plan = planOf(await explain('db.esr.find({e: 42}).sort({s: 1}).skip(1000).limit(20).hint({e: 1, s: 1})'));
      // The skip happens on index keys, before the fetch: 1,020 keys read, only 20 documents fetched.
      assert.equal(shape(plan), 'LIMIT>FETCH>SKIP>IXSCAN');
      const ix = onlyNode(plan, 'IXSCAN');
      assert.equal(ix.metrics.keysExamined, 1020);
      assert.equal(ix.metrics.rowsReturned, 1020);
      assert.equal(onlyNode(plan, 'SKIP').metrics.rowsReturned, 20);
      assert.equal(plan.totals.docsExamined, 20);
      assert.equal(plan.totals.nReturned, 20);
    });

    it('keyset pagination from the last value seen examines 20 keys for 20', async function () {
      const page = await db.collection('esr').find({ e: 42 }).sort({ s: 1 }).skip(999).limit(1).toArray();
      const last = page[0]!.s as number;
      const plan = planOf(await explain(`db.esr.find({e: 42, s: {$gt: ${last}}}).sort({s: 1}).limit(20).hint({e: 1, s: 1})`));
      assert.equal(onlyNode(plan, 'IXSCAN').metrics.keysExamined, 20);
      assert.equal(plan.totals.docsExamined, 20);
      assert.equal(plan.totals.nReturned, 20);
    });
  });

  it('lists the indexes of a collection with their key patterns in order', async function () {
    const indexes = await conn.listIndexes('demoesr', DB);
    assert.deepEqual(indexes.map((i) => [i.name, Object.entries(i.key)]), [
      ['_id_', [['_id', 1]]],
      ['e_1_s_1_r_1', [['e', 1], ['s', 1], ['r', 1]]],
      ['e_1_r_1', [['e', 1], ['r', 1]]],
      ['r_1_e_1', [['r', 1], ['e', 1]]],
    ]);
    assert.deepEqual(await conn.listIndexes('no_such_collection', DB), []);
  });
});
