// The door to MongoDB on a real mongod 6.0.5: what it refuses to send, shown by the collections and
// indexes still there afterwards. A collection without the scratch marker is never dropped, whatever its
// name; $out and collMod reach only a scratch collection this run made; a command that writes is not sent;
// an explain of a pipeline that writes runs beyond queryPlanner only with consent; an index is dropped only
// when this run built it.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db } from 'mongodb';
import {
  mongoAggregate, mongoBuildIndex, mongoCommand, mongoCreateScratch, mongoDropBuiltIndex, mongoDropScratch, mongoExplain, mongoScratchCollMod, mongoScratchIndexes,
} from '../../src/adapters/door';
import { AdapterError } from '../../src/adapters/errors';
import { env } from './support/env';

describe('the door to MongoDB (real server)', function () {
  this.timeout(60_000);
  let client: MongoClient;
  let db: Db;
  type Doc = { _id: number; [k: string]: unknown };

  before(async () => {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db('qpi_door');
    await db.dropDatabase();
    await db.collection<Doc>('orders').insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, status: i % 3 === 0 ? 'open' : 'shipped' })));
    // A user's collection with a name a scratch collection could have.
    await db.collection<Doc>('qpi_trial_orders_lk2x0a1b_abcdef').insertOne({ _id: 1, mine: true });
    await db.collection('orders').createIndex({ status: 1 }, { name: 'status_1' });
  });

  after(async () => {
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  async function names(): Promise<string[]> {
    return (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  }

  async function refused(run: () => Promise<unknown>, message: RegExp): Promise<void> {
    const before = JSON.stringify([await names(), await db.collection('orders').indexes(), await db.collection('orders').countDocuments()]);
    const err = await run().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof AdapterError && err.kind === 'side-effects', String(err));
    assert.match(err.message, message);
    assert.equal(JSON.stringify([await names(), await db.collection('orders').indexes(), await db.collection('orders').countDocuments()]), before, 'nothing changed');
  }

  it('never drops a collection without the scratch marker, whatever its name', async () => {
    await refused(() => mongoDropScratch(db, 'qpi_trial_orders_lk2x0a1b_abcdef'), /carries no scratch marker/);
    await refused(() => mongoDropScratch(db, 'orders'), /carries no scratch marker/);
  });

  it('sends no command that writes, and $out, indexes and collMod only into a scratch collection of this run', async () => {
    await refused(() => mongoCommand(db, { drop: 'orders' }), /^The command drop: the product does not send that/);
    await refused(() => mongoCommand(db, { delete: 'orders', deletes: [{ q: {}, limit: 0 }] }), /^The command delete/);
    await refused(() => mongoAggregate(db, 'orders', [{ $match: {} }, { $out: 'orders_copy' }]), /A pipeline writing to orders_copy/);
    await refused(() => mongoAggregate(db, 'orders', [{ $merge: { into: 'orders' } }]), /A pipeline writing to orders/);
    await refused(() => mongoScratchIndexes(db, 'orders', [{ key: { x: 1 }, name: 'x_1' }]), /not a scratch collection of this run/);
    await refused(() => mongoScratchCollMod(db, 'orders', { index: { name: 'status_1', hidden: true } }), /not a scratch collection of this run/);
  });

  it('explains a pipeline that writes beyond queryPlanner only with consent', async () => {
    const explain = { explain: { aggregate: 'orders', pipeline: [{ $out: 'orders_copy' }], cursor: {} }, verbosity: 'executionStats' };
    await refused(() => mongoExplain(db, explain), /An explain that runs a pipeline writing to orders_copy/);
    const planned = await mongoExplain(db, { ...explain, verbosity: 'queryPlanner' });
    assert.equal(planned['ok'], 1);
    assert.ok(!(await names()).includes('orders_copy'));
  });

  it('drops an index only when this run built it', async () => {
    await refused(() => mongoDropBuiltIndex(db, 'orders', 'status_1'), /which this run did not build/);
    await mongoBuildIndex(db, { createIndexes: 'orders', indexes: [{ key: { status: -1 }, name: 'status_-1' }] });
    await mongoDropBuiltIndex(db, 'orders', 'status_-1');
    assert.deepEqual((await db.collection('orders').indexes()).map((ix) => ix.name).sort(), ['_id_', 'status_1']);
  });

  it('makes, fills, indexes and drops a scratch collection of its own', async () => {
    const scratch = 'qpi_trial_orders_door_test_123456';
    await mongoCreateScratch(db, scratch, { run: 'qpi-door-test', until: Date.now() + 60_000 });
    await mongoAggregate(db, 'orders', [{ $sample: { size: 10 } }, { $out: scratch }]);
    await mongoScratchIndexes(db, scratch, [{ key: { status: 1 }, name: 'status_1' }]);
    await mongoScratchCollMod(db, scratch, { index: { name: 'status_1', hidden: true } });
    assert.equal(await db.collection(scratch).countDocuments(), 10);
    assert.equal(await mongoDropScratch(db, scratch), true);
    assert.ok(!(await names()).includes(scratch));
    assert.ok((await names()).includes('qpi_trial_orders_lk2x0a1b_abcdef'), "the user's collection is still there");
  });
});
