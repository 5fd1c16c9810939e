// Fixtures written from each library's documented API: the finder reads the call as the library sends it.
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { findQueries, type FoundMongoQuery, type FoundQuery, type FoundSqlQuery } from '../../src/core/query/find/index';
import { mongooseCollection } from '../../src/core/query/find/mongoose';
import { sqlCharToSource } from '../../src/core/query/find/ranges';
import { loadSqlParser } from '../../src/core/sql/index';
import { advisePostgresShapes, analyzeQuery, chooseFamilyMember, explainTargets, familyMembers, fillExplainValues, onFamilyMember, parsePostgresQuerySync } from '../../src/core/index';
import { readRepositorySchema } from '../../src/core/schema/index';

const find = (text: string, kind: 'script' | 'sql' = 'script'): FoundQuery[] => findQueries(text, kind).queries;
const mongo = (text: string) => find(text).filter((q): q is FoundMongoQuery => q.engine === 'mongodb');
const sql = (text: string, kind: 'script' | 'sql' = 'script') => find(text, kind).filter((q): q is FoundSqlQuery => q.engine === 'postgres');
const brief = (q: FoundMongoQuery) => ({ collection: q.command.collection, operation: q.command.operation, filter: q.command.filter, ...(q.command.sort ? { sort: q.command.sort } : {}), ...(q.command.limit !== undefined ? { limit: q.command.limit } : {}), ...(q.command.skip !== undefined ? { skip: q.command.skip } : {}) });

describe('finder: the libraries people use', () => {
  before(async () => {
    await loadSqlParser();
  });

  describe('MongoDB driver', () => {
    it('follows collections held in class fields, constant objects and db-like holders', () => {
      const qs = mongo([
        `class OrderStore {`,
        `  constructor(db) { this.orders = db.collection('orders'); }`,
        `  open() { return this.orders.find({ status: 'open' }).sort({ createdAt: -1 }).limit(20).toArray(); }`,
        `}`,
        `const collections = { users: db.collection('users') };`,
        `collections.users.findOne({ email: 'a@b.c' });`,
        `app.db.invoices.find({ paid: false }).skip(40);`,
      ].join('\n'));
      assert.deepEqual(qs.map(brief), [
        { collection: 'orders', operation: 'find', filter: { status: 'open' }, sort: { createdAt: -1 }, limit: 20 },
        { collection: 'users', operation: 'findOne', filter: { email: 'a@b.c' }, limit: 1 },
        { collection: 'invoices', operation: 'find', filter: { paid: false }, skip: 40 },
      ]);
      // The holder's object is seen for collections.users; app.db is not: its collection is the property's
      // name, and the hover says so.
      assert.deepEqual(qs[1]!.warnings, []);
      assert.deepEqual(qs[2]!.warnings, ['The collection is taken to be invoices, the name of the property app.db.invoices: the object that holds it is not in the files read, so the collection it holds may be named otherwise.']);
    });

    it("reads a value written as an enum's string member or a constant object's property, and leaves any other property unknown", () => {
      const qs = mongo([
        `import { MongoClient } from 'mongodb';`,
        `enum State { OPEN = 'open', LATE = 2 }`,
        `const Kinds = { RETURN: 'return' };`,
        `const db = new MongoClient('mongodb://localhost').db();`,
        `export function list(req, opts = { kind: 'x' }) {`,
        `  db.collection('orders').find({ state: State.OPEN, kind: Kinds.RETURN, age: State.LATE, owner: req.user, tag: opts.kind });`,
        `  return db.collection('orders').aggregate([{ $lookup: { from: Kinds.RETURN, localField: '_id', foreignField: 'order', as: 'r' } }]);`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs[0]!.command.filter, {
        state: 'open', kind: 'return', age: { $placeholder: 'State.LATE' }, owner: { $placeholder: 'req.user' }, tag: { $placeholder: 'opts.kind' },
      });
      assert.deepEqual(qs[1]!.command.pipeline, [{ $lookup: { from: 'return', localField: '_id', foreignField: 'order', as: 'r' } }]);
    });

    it('reads a query on collections the code chooses between on the first, and names the others in its hover', () => {
      const qs = mongo([
        `const { MongoClient } = require('mongodb');`,
        `const db = new MongoClient('mongodb://localhost').db();`,
        `async function orders(archived) {`,
        `  const coll = archived ? db.collection('old_orders') : db.collection('orders');`,
        `  return coll.find({ status: 'open' }).toArray();`,
        `}`,
        `const people = (staff) => (staff ? db.collection('staff') : db.collection('staff')).findOne({ id: 1 });`,
        `const BOARDS = { dps: 'leaderboard_dps', hps: 'leaderboard_hps' };`,
        `const top = (dps) => db.collection(dps ? BOARDS.dps : BOARDS.hps).find({ season: 3 }).sort({ score: -1 }).limit(10).toArray();`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.command.collection), ['old_orders', 'staff', 'leaderboard_dps']);
      assert.deepEqual(qs[0]!.warnings, ['The collection is chosen at run time between old_orders, orders: the query is read on old_orders.']);
      assert.deepEqual(qs[1]!.warnings, [], 'the same collection on both sides is no choice');
      assert.deepEqual(qs[2]!.warnings, ['The collection is chosen at run time between leaderboard_dps, leaderboard_hps: the query is read on leaderboard_dps.']);
    });

    it('reads legacy update/remove as the operations they run, and each bulkWrite operation', () => {
      const qs = mongo([
        `db.orders.update({ a: 1 }, { $set: { b: 2 } }, { multi: true });`,
        `db.orders.update({ a: 2 }, { $set: { b: 3 } });`,
        `db.orders.remove({ c: 1 });`,
        `db.orders.remove({ c: 2 }, true);`,
        `db.collection('orders').bulkWrite([{ updateOne: { filter: { x: 1 }, update: { $set: { y: 2 } } } }, { insertOne: { document: { z: 1 } } }, { deleteMany: { filter: { z: 3 } } }]);`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => `${q.command.operation} ${JSON.stringify(q.command.filter)}`), [
        'updateMany {"a":1}', 'updateOne {"a":2}', 'deleteMany {"c":1}', 'deleteOne {"c":2}', 'updateOne {"x":1}', 'deleteMany {"z":3}',
      ]);
    });

    it('finds a collection chosen at run time and says it cannot be named', () => {
      const qs = mongo(`export const list = (req) => req.collection.find({ a: 1 });\nexport const byName = (db, name) => db.collection(name).countDocuments({ b: 2 });`);
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['', 'find'], ['', 'countDocuments']]);
      assert.match(qs[0]!.warnings.join(' '), /chosen at run time/);
    });

    describe('a collection of a family, named by a literal and a run-time value', () => {
      const text = [
        `import { MongoClient } from 'mongodb';`,
        `const client = new MongoClient(process.env.MONGO_URL);`,
        `const db = client.db('analytics');`,
        `export const user = (appId, uid) => db.collection('app_users' + appId).findOne({ uid });`,
        `export const recent = (appId, key) => db.collection(\`events_\${appId}\`).find({ key }).sort({ ts: -1 }).limit(50).toArray();`,
        `export function byDevice(appId, did) {`,
        `  const name = 'app_users' + appId;`,
        `  return db.collection(name).find({ did }).toArray();`,
        `}`,
        `export const file = (bucketName, filename) => db.collection(bucketName + '.files').find({ filename }).sort({ uploadDate: -1 }).toArray();`,
        `export const chunks = (bucketName, id) => db.collection(bucketName + '.chunks').find({ files_id: id }).sort({ n: 1 }).toArray();`,
        `export const anyOf = (prefix, name) => db.collection(prefix + '_' + name).find({ did: 1 }).toArray();`,
      ].join('\n');

      it('names the family with a * where the run-time part goes, and says so', () => {
        const qs = mongo(text);
        assert.deepEqual(qs.map((q) => q.command.collection), ['app_users*', 'events_*', 'app_users*', '*.files', '*.chunks', '']);
        assert.ok(qs.slice(0, 5).every((q) => q.command.database === 'analytics'));
        assert.match(qs[0]!.warnings.join(' '), /one of the family app_users\*, named at run time \('app_users' \+ appId\).*an index is meant for each/);
        // The variable's value is what the sentence shows.
        assert.match(qs[2]!.warnings.join(' '), /\('app_users' \+ appId\)/);
        assert.match(qs[5]!.warnings.join(' '), /chosen at run time, so no index can be named/);
      });

      it('advises each family as a fixed name, and nothing on a name fully chosen at run time', () => {
        const qs = mongo(text);
        const tops = qs.map((q) => analyzeQuery(q, text, undefined).top);
        // The command builds the index on each collection of the family, never on one named with the `*`.
        const each = (family: string, keys: string) => `db.getCollectionNames().filter((n) => /${family}/.test(n)).forEach((n) => db.getCollection(n).createIndex(${keys}))`;
        assert.equal(tops[0]?.createText, each('^app_users.+$', '{uid: 1}'));
        assert.equal(tops[1]?.createText, each('^events_.+$', '{key: 1, ts: -1}'));
        assert.equal(tops[2]?.createText, each('^app_users.+$', '{did: 1}'));
        assert.equal(tops[5], undefined);
        // Run as mongosh would, against a database listing three collections, two of the family.
        const built: [string, unknown][] = [];
        const db = { getCollectionNames: () => ['app_users1', 'app_users2', 'apps'], getCollection: (n: string) => ({ createIndex: (k: unknown) => built.push([n, k]) }) };
        runInNewContext(tops[0]!.createText!, { db });
        assert.deepEqual(JSON.parse(JSON.stringify(built)), [['app_users1', { uid: 1 }], ['app_users2', { uid: 1 }]]);
        // The extension's Create Index builds it on the one collection it explained on.
        assert.equal(onFamilyMember(tops[0]!.createText!, 'app_users*', 'app_users2'), 'db.getCollection("app_users2").createIndex({uid: 1})');
        const hover = analyzeQuery(qs[0]!, text, undefined).hover;
        assert.match(hover, /one of the family app_users\*/);
      });

      it("takes GridFS's own indexes on a bucket's files and chunks as existing", () => {
        const qs = mongo(text);
        const files = analyzeQuery(qs[3]!, text, undefined);
        assert.equal(files.top?.createText, undefined);
        assert.equal(files.top?.keep, 'filename_1_uploadDate_1');
        const chunks = analyzeQuery(qs[4]!, text, undefined);
        assert.equal(chunks.top?.keep, 'files_id_1_n_1');
        assert.match(chunks.hover, /files_id_1_n_1` from GridFS/);
      });

      it("says so of a family's bulkWrite operations and legacy bulk finds too", () => {
        const qs = mongo([
          `import { MongoClient } from 'mongodb';`,
          `export async function touch(db, appId, uids) {`,
          `  await db.collection('app_users' + appId).bulkWrite([{ updateMany: { filter: { uid: { $in: uids } }, update: { $set: { seen: true } } } }]);`,
          `  const bulk = db.collection(\`app_users\${appId}\`).initializeUnorderedBulkOp();`,
          `  bulk.find({ did: 'd1' }).upsert().updateOne({ $set: { seen: true } });`,
          `  return bulk.execute();`,
          `}`,
        ].join('\n'));
        assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['app_users*', 'updateMany'], ['app_users*', 'updateOne']]);
        assert.ok(qs.every((q) => q.warnings.some((w) => /one of the family app_users\*/.test(w))), qs.map((q) => q.warnings.join(' ')).join(' | '));
      });

      it("matches a server's collections to the family and picks the one to explain on", () => {
        assert.deepEqual(familyMembers('app_users*', ['app_users', 'app_users1', 'app_users_x', 'apps', 'xapp_users1']), ['app_users1', 'app_users_x']);
        assert.deepEqual(familyMembers('*.files', ['fs.files', 'fs.chunks', 'photos.files', 'files']), ['fs.files', 'photos.files']);
        const members = [{ name: 'app_users2', documents: 3_000 }, { name: 'app_users1', documents: 400 }];
        assert.equal(chooseFamilyMember('app_users*', members)?.why, 'the largest of 2 collections of the family app_users*');
        assert.equal(chooseFamilyMember('app_users*', members, 'app_users1')?.sentence, 'Explained on app_users1, one of 2 collections of the family app_users*, 400 documents; the others: app_users2.');
        assert.equal(chooseFamilyMember('app_users*', []), undefined);
        // The text Explain runs once the user gave the values the code takes: on the chosen collection.
        const [target] = explainTargets(text, 'script', 'ts');
        assert.equal(onFamilyMember(fillExplainValues(target!.values!, ['"u1"']), 'app_users*', 'app_users2'), 'db.getSiblingDB("analytics").getCollection("app_users2").find({uid: ("u1")}).limit(1)');
      });

      it('keeps an index the repository builds on the family', () => {
        const schema = readRepositorySchema([{ path: 'src/indexes.js', text: [
          `export async function ensureIndexes(db, appId) {`,
          `  await db.collection('app_users' + appId).createIndex({ uid: 1 }, { unique: true, name: 'uid_unique' });`,
          `  const events = db.collection(\`events_\${appId}\`);`,
          `  await events.createIndexes([{ key: { key: 1, ts: -1 }, name: 'key_ts' }]);`,
          `}`,
        ].join('\n') }, {
          // Building an index that exists changes nothing, on the server as here: the first declaration stays.
          path: 'src/seed.js', text: `export const seed = (db, appId) => db.collection(\`app_users\${appId}\`).createIndex({ uid: 1 });`,
        }]);
        assert.deepEqual([...schema.collections.keys()].sort(), ['app_users*', 'events_*']);
        assert.deepEqual(schema.collections.get('app_users*')!.map((ix) => `${ix.name} ${ix.source}`), ['uid_unique src/indexes.js']);
        const qs = mongo(text);
        const user = analyzeQuery(qs[0]!, text, undefined, schema);
        assert.equal(user.top?.keep, 'uid_unique');
        assert.match(user.hover, /`uid_unique` from src\/indexes.js/);
        assert.equal(analyzeQuery(qs[1]!, text, undefined, schema).top?.keep, 'key_ts');
        // Another collection of the same name's prefix without the family is not the family.
        assert.equal(analyzeQuery(mongo("db.collection('app_users').findOne({ uid: 1 });")[0]!, '', undefined, schema).top?.keep, undefined);
      });
    });

    it('follows functions that return a collection, with their arguments, let/var never assigned again and one assigned again before it is read', () => {
      const qs = mongo([
        `import { MongoClient } from 'mongodb';`,
        `const client = new MongoClient(uri);`,
        `function orders() { return client.db('shop').collection('orders'); }`,
        `const coll = (name) => client.db().collection(name);`,
        `export async function open() {`,
        `  let invoices = client.db().collection('invoices');`,
        `  var carts = client.db().collection('carts');`,
        `  let moving = client.db().collection('a');`,
        `  moving = client.db().collection('b');`,
        `  await orders().find({ status: 'open' }).sort({ at: -1 }).toArray();`,
        `  await coll('users').findOne({ email: 'a@b.c' });`,
        `  await invoices.countDocuments({ paid: false });`,
        `  await carts.deleteMany({ empty: true });`,
        `  await moving.find({ x: 1 }).toArray();`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map(brief), [
        { collection: 'orders', operation: 'find', filter: { status: 'open' }, sort: { at: -1 } },
        { collection: 'users', operation: 'findOne', filter: { email: 'a@b.c' }, limit: 1 },
        { collection: 'invoices', operation: 'countDocuments', filter: { paid: false } },
        { collection: 'carts', operation: 'deleteMany', filter: { empty: true } },
        // Assigned again before it is read: the value the later assignment gives.
        { collection: 'b', operation: 'find', filter: { x: 1 } },
      ]);
      assert.equal(qs[0]!.command.database, 'shop');
    });

    it('takes the branch of a conditional that names the collection, and a name set at run time from what it is called', () => {
      const qs = mongo([
        `import { MongoClient } from 'mongodb';`,
        `export async function list(db, ready, config, eventsCollection) {`,
        `  const chunks = ready ? db.collection('chunks') : await createChunks(db);`,
        `  await chunks.distinct('fileName');`,
        `  await db.collection(config.entries_collection).find({ type: 'sgv' }).toArray();`,
        `  await eventsCollection.updateOne({ _id: 1 }, { $set: { seen: true } });`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['chunks', 'distinct'], ['entries', 'find'], ['events', 'updateOne']]);
      assert.deepEqual(qs.map((q) => q.warnings.some((w) => /taken to be \w+ from the name/.test(w))), [false, true, true]);
    });

    it('names collections destructured from what holds them', () => {
      const qs = mongo([
        `import { MongoClient } from 'mongodb';`,
        `const stores = { audit: client.db().collection('audit_log') };`,
        `export async function place(context, { collections: { Carts } }) {`,
        `  const { Orders, Accounts: People } = context.collections;`,
        `  const { audit } = stores;`,
        `  const { users } = db;`,
        `  await Orders.findOne({ _id: 'a' });`,
        `  await People.updateOne({ _id: 'b' }, { $set: { seen: true } });`,
        `  await Carts.deleteMany({ empty: true });`,
        `  await audit.countDocuments({ level: 'warn' });`,
        `  await users.findOne({ _id: 'c' });`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['Orders', 'findOne'], ['Accounts', 'updateOne'], ['Carts', 'deleteMany'], ['audit_log', 'countDocuments']]);
    });

    it('names collections held as properties of a db the application\'s own module exports, not a Sequelize model index', () => {
      const qs = mongo([
        `import { db } from '../infrastructure/mongodb';`,
        `export const byEmail = (email) => db.users.findOne({ email }, { projection: { _id: 1 } });`,
        `export const sequelizeStyle = () => db.User.findOne({ where: { id: 1 } });`,
      ].join('\n'));
      const destructured = mongo([`import store from './store';`, `const { db } = store;`, `export const open = () => db.projects.countDocuments({ archived: false });`].join('\n'));
      const fromPackage = mongo([`import { db } from 'some-client';`, `export const open = () => db.projects.countDocuments({ archived: false });`].join('\n'));
      assert.deepEqual([...qs, ...destructured, ...fromPackage].map((q) => [q.command.collection, q.command.operation]), [['users', 'findOne'], ['projects', 'countDocuments']]);
    });

    it('does not take an SQL client\'s db.x.count() for MongoDB', () => {
      assert.equal(mongo(`import knex from 'knex';\nconst n = await app.db.orders.count();`).length, 0);
    });

    it('reads the legacy bulk API: each find(filter) with the operation it queues, on the bulk\'s collection', () => {
      const qs = mongo([
        `import { MongoClient } from 'mongodb';`,
        `export async function sync(db, items, ordered) {`,
        `  const bulk = db.collection('orders').initializeUnorderedBulkOp();`,
        `  items.forEach((i) => bulk.find({ sku: i.sku }).upsert().updateOne({ $set: { qty: i.qty } }));`,
        `  bulk.find({ status: 'old' }).update({ $set: { archived: true } });`,
        `  bulk.find({ sku: 'x' }).replaceOne({ sku: 'x', qty: 0 });`,
        `  bulk.find({ expired: true }).delete();`,
        `  bulk.find({ expired: true, sku: 'y' }).deleteOne();`,
        `  bulk.insert({ sku: 'z' });`,
        `  await bulk.execute();`,
        `  let later;`,
        `  if (ordered) later = db.collection('events').initializeOrderedBulkOp();`,
        `  later.find({ type: 'seen' }).remove();`,
        `  const one = bulk.find({ sku: 'w' });`,
        `  one.updateOne({ $inc: { qty: 1 } });`,
        `  items.forEach(() => { let one = 0; one = 1; });`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => `${q.command.collection} ${q.command.operation} ${JSON.stringify(q.command.filter)}`), [
        'orders updateOne {"sku":{"$placeholder":"i.sku"}}', 'orders updateMany {"status":"old"}', 'orders replaceOne {"sku":"x"}',
        'orders deleteMany {"expired":true}', 'orders deleteOne {"expired":true,"sku":"y"}', 'events deleteMany {"type":"seen"}', 'orders updateOne {"sku":"w"}',
      ]);
      assert.deepEqual(qs[0]!.command.options, { upsert: true });
      assert.deepEqual(qs[0]!.command.update, { $set: { qty: { $placeholder: 'i.qty' } } });
    });

    it('names a variable given several collections in turn by the one the order of the code gives where it is read', () => {
      const text = [
        `const { MongoClient } = require('mongodb');`,
        `let dbo;`,
        `const connect = async () => { dbo = (await MongoClient.connect(process.env.URL)).db('forms'); };`,
        `const save = async (form, ids) => {`,
        `  try {`,
        `    let collection = dbo.collection('forms');`,
        `    await collection.updateOne({ id: form.id }, { $set: { title: form.title } });`,
        `    collection = dbo.collection('versions');`,
        `    await collection.findOne({ id: form.id });`,
        `    for (const id of ids) { await collection.deleteOne({ id }); collection = dbo.collection('drafts'); }`,
        `    if (form.old) collection = dbo.collection('archive');`,
        `    return collection.find({ id: form.id }).toArray();`,
        `  } catch (e) { return collection; }`,
        `};`,
      ].join('\n');
      const qs = mongo(text);
      // In the loop a later assignment comes back to the read; after the if, either branch may have run.
      assert.deepEqual(qs.map((q) => `${q.command.collection} ${q.command.operation}`), ['forms updateOne', 'versions findOne', ' deleteOne', ' find']);
      assert.deepEqual(qs[0]!.warnings, []);
      assert.match(qs[2]!.warnings.join(' '), /chosen at run time/);
    });

    it('reads bulkWrite operations pushed into an array or mapped in the same function, run from each call', () => {
      const text = [
        `import { MongoClient } from 'mongodb';`,
        `export async function archive(db, items) {`,
        `  let ops = [];`,
        `  for (const item of items) {`,
        `    ops.push({ updateOne: { filter: { sku: item.sku }, update: { $set: { archived: true } } } });`,
        `    if (ops.length > 500) { await db.collection('products').bulkWrite(ops); ops = []; }`,
        `  }`,
        `  await db.collection('products').bulkWrite(ops, { ordered: false });`,
        `  await db.collection('carts').bulkWrite(items.map((i) => ({ deleteOne: { filter: { sku: i.sku } } })));`,
        `  await db.collection('carts').bulkWrite(unknownOps);`,
        `}`,
      ].join('\n');
      const qs = mongo(text);
      assert.deepEqual(qs.map((q) => `${q.command.collection} ${q.command.operation} ${JSON.stringify(q.command.filter)}`), [
        'products updateOne {"sku":{"$placeholder":"item.sku"}}', 'carts deleteOne {"sku":{"$placeholder":"i.sku"}}',
      ]);
      // The pushed operation is written apart from both calls that run it; the mapped one inside its call.
      assert.deepEqual(qs[0]!.calledFrom!.map((r) => text.slice(r.start, r.end).replace(/\(.*/, '')), ['db.collection', 'db.collection']);
      assert.equal(qs[1]!.calledFrom, undefined);
    });

    it("reads bulkWrite operations a local function's calls give it, pushed where the calls are", () => {
      const text = [
        `import { Db } from 'mongodb';`,
        `export async function reprice(db: Db, items, other) {`,
        `  const flush = async (chunk) => { if (chunk.length > 0) await db.collection('prices').bulkWrite(chunk); };`,
        `  const drop = (chunk) => db.collection('prices').bulkWrite(chunk);`,
        `  let batch = [];`,
        `  for (const item of items) {`,
        `    batch.push({ updateOne: { filter: { sku: item.sku }, update: { $set: { price: item.price } } } });`,
        `    if (batch.length >= 100) { await flush(batch); batch = []; }`,
        `  }`,
        `  await flush(batch);`,
        `  await drop(other);`,
        `}`,
      ].join('\n');
      const qs = mongo(text);
      assert.deepEqual(qs.map((q) => `${q.command.collection} ${q.command.operation} ${Object.keys(q.command.filter ?? {}).join()}`), ['prices updateOne sku']);
      // Written where it is pushed, run from the bulkWrite in the function the calls give it to.
      assert.deepEqual(qs[0]!.calledFrom!.map((r) => text.slice(r.start, r.end).replace(/\(.*/, '')), ['db.collection']);
    });

    it('reads bulkWrite operations mapped by a function declared under a name', () => {
      const text = [
        `import { Db } from 'mongodb';`,
        `function toUpsert({ sku, ...rest }) {`,
        `  const update = { $set: rest };`,
        `  return { updateOne: { filter: { sku }, update, upsert: true } };`,
        `}`,
        `const toDelete = (sku) => ({ deleteOne: { filter: { sku } } });`,
        `export async function sync(db: Db, items, gone) {`,
        `  await db.collection('stock').bulkWrite(items.map(toUpsert));`,
        `  const ops = gone.map(toDelete);`,
        `  await db.collection('stock').bulkWrite(ops);`,
        `}`,
      ].join('\n');
      assert.deepEqual(mongo(text).map((q) => `${q.command.collection} ${q.command.operation} ${Object.keys(q.command.filter ?? {}).join()}`), ['stock updateOne sku', 'stock deleteOne sku']);
    });

    it('reads bulkWrite operations another function or method of the file returns, flat-mapped or filtered', () => {
      const text = [
        `import { Db } from 'mongodb';`,
        `export function rankOperations(players) {`,
        `  return players.map((p, i) => ({ updateOne: { filter: { _id: p._id }, update: { $set: { rank: i + 1 } } } }));`,
        `}`,
        `export class Runner {`,
        `  toHistory(doc) { return { replaceOne: { filter: { uuid: doc.uuid }, replacement: doc, upsert: true } }; }`,
        `  async run(db: Db, docs, players, nodes) {`,
        `    await db.collection('players').bulkWrite(rankOperations(players));`,
        `    const ops = await Promise.all(docs.map(async (d) => this.toHistory(d)));`,
        `    await db.collection('history').bulkWrite(ops.filter((o) => o !== null), { ordered: false });`,
        `    await db.collection('nodes').bulkWrite(nodes.flatMap((n) => ({ updateOne: { filter: { hash: n.hash }, update: { $set: n }, upsert: true } })));`,
        `    await db.collection('nodes').bulkWrite(unknown(nodes));`,
        `  }`,
        `}`,
      ].join('\n');
      const qs = mongo(text);
      assert.deepEqual(qs.map((q) => `${q.command.collection} ${q.command.operation} ${Object.keys(q.command.filter ?? {}).join()}`), [
        'players updateOne _id', 'history replaceOne uuid', 'nodes updateOne hash',
      ]);
      // Written in another function, each is run from the call that is given it.
      assert.deepEqual(qs.slice(0, 2).map((q) => q.calledFrom?.length), [1, 1]);
    });

    it('reads collections as properties of a db taken from a parameter or an object, and through a db the client gives', () => {
      const qs = mongo([
        `export async function migrate({ db }) { await db.users.updateMany({ legacy: true }, { $unset: { legacy: 1 } }); }`,
        `export const rollback = async (client) => { const { db } = client; await db.projects.countDocuments({ archived: true }); };`,
        `export function up(client) { const db = client.db(); return db.collection('invoices').find({ paid: false }).toArray(); }`,
        `export const down = async ({ db }) => db.Users.findAll({ where: { id: 1 } });`,
        `import * as app from './app';`,
        `const db = app.db;`,
        `export const rooms = () => db.rooms.find({ open: true });`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['users', 'updateMany'], ['projects', 'countDocuments'], ['invoices', 'find'], ['rooms', 'find']]);
    });

    it('follows fields the file assigns a collection to elsewhere: another method, a constructor function, a class', () => {
      const qs = mongo([
        `import { MongoClient } from 'mongodb';`,
        `module.exports = {`,
        `  async init(self) { self.jobs = await self.apos.db.collection('jobs'); },`,
        `  methods(self) { return { get: (id) => self.jobs.findOne({ _id: id, ended: false }) }; },`,
        `};`,
        `function Store(db) { this.collection = db.collection('sessions'); }`,
        `Store.prototype.touch = function (sid) { return this.collection.updateOne({ sid }, { $set: { at: 1 } }); };`,
        `class Cache {`,
        `  constructor(db) { this.entries = db.collection('entries'); }`,
        `  get(k) { return this.entries.findOne({ k }); }`,
        `}`,
        `function A(db) { this.coll = db.collection('a'); }`,
        `function B(db) { this.coll = db.collection('b'); }`,
        `B.prototype.list = function () { return this.coll.find({ x: 1 }); };`,
      ].join('\n'));
      // Two different collections assigned to one field: the field's collection is not known.
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['jobs', 'findOne'], ['sessions', 'updateOne'], ['entries', 'findOne'], ['', 'find']]);
    });

    it('follows a variable assigned in an init function or a hook, names from a constant object, and a parameter\'s default name', () => {
      const qs = mongo([
        `import { MongoClient } from 'mongodb';`,
        `const names = { USERS: 'users', CACHE: 'cache' };`,
        `let movies;`,
        `let mixed = null;`,
        `export class MoviesDAO {`,
        `  static async injectDB(conn) { movies = await conn.db('mflix').collection('movies'); mixed = conn.db().collection('a'); }`,
        `  static byGenre(genre) { return movies.find({ genres: genre }).limit(20).toArray(); }`,
        `  static other() { mixed = conn.db().collection('b'); return mixed.findOne({ x: 1 }); }`,
        `}`,
        `export const user = (db, id) => db.collection(names.USERS).findOne({ _id: id });`,
        `describe('games', () => {`,
        `  let games;`,
        `  beforeAll(async () => { games = await client.db('mflix').collection('videoGames'); });`,
        `  it('deletes', async () => { await games.deleteOne({ year: 2008 }); });`,
        `});`,
        `export function makeStore({ db, collectionName = 'embedded_content' }) {`,
        `  const coll = db.collection(collectionName);`,
        `  return { byUrl: (url) => coll.find({ url }).toArray() };`,
        `}`,
      ].join('\n'));
      // `mixed` is given two collections: it is not taken for either.
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['movies', 'find'], ['users', 'findOne'], ['videoGames', 'deleteOne'], ['embedded_content', 'find']]);
      assert.equal(qs[0]!.command.database, 'mflix');
      assert.match(qs[3]!.warnings.join(' '), /taken to be embedded_content, the default of collectionName; a caller may name another/);
    });
    it('reads collections as properties of a bare db parameter when the file shows a db holding collections', () => {
      // Another statement takes the application's db (`req.app.db`), which holds the collections.
      const fromApp = mongo([
        `const menu = (db) => db.menu.findOne({});`,
        `const add = (req) => { const db = req.app.db; return menu(db); };`,
      ].join('\n'));
      // A cursor's toArray(), insertMany and a db set up with collections as properties say it too.
      const fromCallback = mongo([
        `initDb(url, (err, db) => {`,
        `  db.users.deleteMany({ temporary: true });`,
        `  db.sessions.find({ expired: false }).toArray();`,
        `});`,
      ].join('\n'));
      const fromInsert = mongo(`export const reset = (db) => Promise.all([db.carts.deleteMany({}), db.users.insertMany(seed)]);`);
      const fromSetup = mongo([
        `function connected(client) { const db = client.db('shop'); db.orders = db.collection('orders'); return db; }`,
        `export const open = (db) => db.orders.find({ status: 'open' });`,
      ].join('\n'));
      const fromDriver = mongo(`import { ObjectId } from 'mongodb';\nexport const byId = (db, id) => db.products.findOne({ _id: new ObjectId(id) });`);
      assert.deepEqual([...fromApp, ...fromCallback, ...fromInsert, ...fromSetup, ...fromDriver].map((q) => [q.command.collection, q.command.operation]), [
        ['menu', 'findOne'], ['users', 'deleteMany'], ['sessions', 'find'], ['carts', 'deleteMany'], ['orders', 'find'], ['products', 'findOne'],
      ]);
    });

    it('follows fields declared empty and assigned from a collections object, called with optional chaining', () => {
      const qs = mongo([
        `import type { Collection } from 'mongodb';`,
        `class Settings {`,
        `  private settings: Collection<Setting> | undefined = undefined;`,
        `  private locks: Collection<Lock> | null = null;`,
        `  async init() {`,
        `    const { getCollections } = await import('./database');`,
        `    const collections = await getCollections();`,
        `    this.settings = collections.settings;`,
        `    this.locks = collections.locks;`,
        `  }`,
        `  all() { return this.settings?.find({ scope: 'global' }).toArray(); }`,
        `  touch(key: string) { return this.locks?.updateOne({ key }, { $set: { at: new Date() } }, { upsert: true }); }`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation, JSON.stringify(q.command.filter)]), [
        ['settings', 'find', '{"scope":"global"}'], ['locks', 'updateOne', '{"key":{"$placeholder":"key"}}'],
      ]);
    });

    it('finds a parameter typed Collection and says its caller chooses it; a Collection of another library is not one', () => {
      const qs = mongo([
        `import { Collection, ObjectId } from 'mongodb';`,
        `export async function removeAll(items: Collection<Item>, ids: ObjectId[]) { return items.deleteMany({ _id: { $in: ids } }); }`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['', 'deleteMany']]);
      assert.match(qs[0]!.warnings.join(' '), /The collection is the parameter items, typed Collection: the caller chooses it at run time/);
      assert.deepEqual(mongo(`import { Collection } from 'backbone';\nexport const pick = (items: Collection<Model>) => items.find({ id: 1 });`), []);
    });

    it('reads bulkWrite operations mapped from a cursor and collected with toArray()', () => {
      const text = [
        `import { MongoClient } from 'mongodb';`,
        `export async function rename(db) {`,
        `  const items = db.collection('items');`,
        `  const ops = await items.find({ model: 'old' }).map((item) => {`,
        `    const next = item.model + '-2';`,
        `    return { updateOne: { filter: { _id: item._id }, update: { $set: { model: next } } } };`,
        `  }).toArray();`,
        `  await items.bulkWrite(ops);`,
        `}`,
      ].join('\n');
      const qs = mongo(text);
      assert.deepEqual(qs.map((q) => `${q.command.collection} ${q.command.operation} ${JSON.stringify(q.command.filter)}`), [
        'items find {"model":"old"}', 'items updateOne {"_id":{"$placeholder":"item._id"}}',
      ]);
      assert.deepEqual(qs[1]!.calledFrom!.map((r) => text.slice(r.start, r.end)), ['items.bulkWrite(ops)']);
    });

    it('leaves a bare db parameter alone when nothing in the file shows it holds collections, and ORM calls on one that does', () => {
      // A Prisma or Sequelize client passed as `db` has count() and deleteMany() too.
      assert.deepEqual(mongo(`export const total = (db) => db.user.count();\nexport const purge = (db) => db.session.deleteMany({});`), []);
      // The file shows a driver db, but these calls are an ORM's: a `where` argument, a capitalised model.
      const qs = mongo([
        `initDb(url, (err, db) => db.sessions.find({}).toArray());`,
        `export const one = (db, id) => db.users.findOne({ where: { id } });`,
        `export const all = (db) => db.Users.findAll();`,
        `export const first = (db) => db.User.findOne({ id: 1 });`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => [q.command.collection, q.command.operation]), [['sessions', 'find']]);
    });
  });

  describe('Mongoose', () => {
    it('names collections by Mongoose\'s pluralisation rules', () => {
      assert.deepEqual(['Order', 'Category', 'Person', 'Status', 'Box', 'Child', 'Mouse', 'Wolf', 'Leaf'].map(mongooseCollection),
        ['orders', 'categories', 'people', 'status', 'boxes', 'children', 'mice', 'wolves', 'leafs']);
    });

    it('reads model calls with their query methods, the model from mongoose.model or the collection option', () => {
      const qs = mongo([
        `import mongoose from 'mongoose';`,
        `const Order = mongoose.model('Order', new mongoose.Schema({ status: String }));`,
        `const Event = mongoose.model('Event', new mongoose.Schema({}, { collection: 'audit_log' }));`,
        `export const list = () => Order.find({ status: 'open' }).sort('-createdAt name').skip(10).limit(5).lean().exec();`,
        `export const one = (id) => Order.findById(id).select('total');`,
        `export const n = () => Event.countDocuments({ kind: 'login' });`,
        `export const close = () => Order.updateMany({ status: 'open' }, { $set: { status: 'closed' } });`,
      ].join('\n'));
      assert.deepEqual(qs.map(brief), [
        { collection: 'orders', operation: 'find', filter: { status: 'open' }, sort: { createdAt: -1, name: 1 }, limit: 5, skip: 10 },
        { collection: 'orders', operation: 'findOne', filter: { _id: { $placeholder: 'id' } }, limit: 1 },
        { collection: 'audit_log', operation: 'countDocuments', filter: { kind: 'login' } },
        { collection: 'orders', operation: 'updateMany', filter: { status: 'open' } },
      ]);
      assert.deepEqual(qs[1]!.command.projection, { total: 1 });
    });

    it('writes an update without operators as Mongoose sends it, its fields under $set, unless overwrite is set', () => {
      const qs = mongo([
        `import mongoose from 'mongoose';`,
        `const Team = mongoose.model('Team', new mongoose.Schema({ name: String }));`,
        `export const rename = (id, name) => Team.updateOne({ _id: id }, { name, active: true });`,
        `export const mixed = (id, name) => Team.findByIdAndUpdate(id, { name, $inc: { edits: 1 }, $set: { touched: true } }, { new: true });`,
        `export const keep = (id) => Team.updateOne({ _id: id }, { $set: { active: false } });`,
        `export const replace = (id, doc) => Team.findOneAndUpdate({ _id: id }, { name: 'x' }, { overwrite: true });`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.command.update), [
        { $set: { name: { $placeholder: 'name' }, active: true } },
        { $inc: { edits: 1 }, $set: { touched: true, name: { $placeholder: 'name' } } },
        { $set: { active: false } },
        { name: 'x' },
      ]);
    });

    it('reads imported and injected models, and leaves SQL ORMs alone', () => {
      const qs = mongo([
        `const Category = require('../models/category');`,
        `Category.find({ parent: null });`,
        `class Svc { constructor(@InjectModel(User.name) private userModel: Model<User>) {}`,
        `  byEmail(email: string) { return this.userModel.findOne({ email }).exec(); } }`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => `${q.command.collection}.${q.command.operation}`), ['categories.find', 'users.findOne']);
      assert.equal(mongo(`import { Model } from 'sequelize';\nimport User from './user';\nUser.findOne({ where: { id: 1 } });`).length, 0);
    });
  });

  describe('Prisma', () => {
    it('reads model calls as the SQL Prisma sends, and raw queries', () => {
      const qs = sql([
        `import { PrismaClient } from '@prisma/client';`,
        `const prisma = new PrismaClient();`,
        `await prisma.order.findMany({ where: { status: 'open', userId, total: { gte: 10 }, OR: [{ a: 1 }, { b: { in: [1, 2] } }] }, orderBy: { createdAt: 'desc' }, take: 20, skip: 40 });`,
        `await prisma.user.findUnique({ where: { email } });`,
        `await prisma.user.count({ where: { name: { startsWith: 'Jo' } } });`,
        'await prisma.$queryRaw`SELECT * FROM "User" WHERE id = ${id}`;',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        `SELECT * FROM "Order" WHERE status = 'open' AND "userId" = $1 AND total >= 10 AND ((a = 1) OR (b IN (1, 2))) ORDER BY "createdAt" DESC LIMIT 20 OFFSET 40`,
        'SELECT * FROM "User" WHERE email = $1 LIMIT 1',
        `SELECT count(*) FROM "User" WHERE name LIKE 'Jo%'`,
        'SELECT * FROM "User" WHERE id = $1',
      ]);
      assert.deepEqual(qs[0]!.params.map((p) => p.text), ['userId']);
    });

    it('writes the tables and columns schema.prisma maps the models and fields to', () => {
      const schema = readRepositorySchema([{ path: 'prisma/schema.prisma', text: [
        'model OrderItem {',
        '  id        Int      @id',
        '  orderId   Int      @map("order_id")',
        '  createdAt DateTime @map("created_at")',
        '  quantity  Int',
        '  @@map("order_items")',
        '}',
        'model audit_log {',
        '  id Int @id',
        '  at DateTime',
        '}',
      ].join('\n') }]);
      const text = [
        `import { PrismaClient } from '@prisma/client';`,
        `const prisma = new PrismaClient();`,
        `await prisma.orderItem.findMany({ where: { orderId: 7, quantity: { gt: 1 } }, orderBy: { createdAt: 'desc' }, select: { id: true, createdAt: true } });`,
        `await prisma.orderItem.updateMany({ where: { orderId: 7 }, data: { quantity: 0 } });`,
        `await prisma.audit_log.findFirst({ orderBy: { at: 'desc' } });`,
      ].join('\n');
      const mapped = findQueries(text, 'script', 'ts', { prismaModels: schema.prismaModels }).queries as FoundSqlQuery[];
      assert.deepEqual(mapped.map((q) => q.sql), [
        'SELECT id, created_at FROM order_items WHERE order_id = 7 AND quantity > 1 ORDER BY created_at DESC',
        'UPDATE order_items SET quantity = 0 WHERE order_id = 7',
        'SELECT * FROM audit_log ORDER BY at DESC LIMIT 1',
      ]);
      // Without the schema the model's and fields' names are all there is.
      assert.match(sql(text)[0]!.sql, /^SELECT id, "createdAt" FROM "OrderItem" WHERE "orderId" = 7/);
    });
    it('reads a client imported under any name from the application\'s module named for Prisma, or with a method only Prisma has', () => {
      const qs = sql([
        `import { p } from 'src/prismaClient';`,
        `import { store } from '../lib/store';`,
        `export const byId = (id: number) => p.user.findFirst({ where: { id } });`,
        `export const drop = (id: number) => p.session.deleteMany({ where: { userId: id } });`,
        `export const latest = () => store.post.findMany({ orderBy: { createdAt: 'desc' }, take: 10 });`,
        `export const rename = (id: number) => store.post.update({ where: { id }, data: { title: 'x' } });`,
      ].join('\n'));
      // store.post.update: the method is not Prisma's alone and the module is not named for it.
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM "User" WHERE id = $1 LIMIT 1',
        'DELETE FROM "Session" WHERE "userId" = $1',
        'SELECT * FROM "Post" ORDER BY "createdAt" DESC LIMIT 10',
      ]);
      // Drizzle's relational queries are written alike.
      assert.deepEqual(sql(`import { eq } from 'drizzle-orm';\nimport { q } from './db';\nexport const one = () => q.users.findFirst({ where: eq(users.id, 1) });`), []);
    });
  });

  describe('Knex', () => {
    it('reads builder chains, joins and raw SQL with ? bindings; inserts are not queries', () => {
      const qs = sql([
        `import knex from 'knex';`,
        `const db = knex({ client: 'pg' });`,
        `await db('orders').where({ status: 'open' }).andWhere('total', '>', 10).orderBy('created_at', 'desc').limit(10).offset(20);`,
        `await db.select('id', 'name').from('users').whereIn('id', ids).first();`,
        `await db('orders as o').join('users as u', 'u.id', 'o.user_id').where('u.email', email);`,
        `await db.raw('SELECT * FROM orders WHERE id = ? AND note = ?', [1, 'a?']);`,
        `await db('orders').insert({ a: 1 });`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        `SELECT * FROM orders WHERE status = 'open' AND total > 10 ORDER BY created_at DESC LIMIT 10 OFFSET 20`,
        'SELECT id, name FROM users WHERE id IN ($1) LIMIT 1',
        'SELECT * FROM orders o JOIN users u ON u.id = o.user_id WHERE u.email = $1',
        'SELECT * FROM orders WHERE id = $1 AND note = $2',
      ]);
      assert.deepEqual(qs[3]!.values, [1, 'a?']);
    });

    it('reads a table or column the code names at run time as a stand-in, and suggests no index on it', () => {
      const text = [
        `const knex = require('knex');`,
        `function Store(options) { this.knex = knex(options); this.options = options; }`,
        `Store.prototype.get = function (key) {`,
        `  return this.knex.transaction((trx) => trx.select('*').forUpdate().from(this.options.tablename).where('key', '=', key));`,
        `};`,
        `Store.prototype.all = function (table, key) { return this.knex(table).where({ key }); };`,
        `Store.prototype.by = function (column, v) { return this.knex('sessions').whereRaw('?? = ?', [column, v]).orderBy('created_at'); };`,
      ].join('\n');
      const qs = sql(text);
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM tablename WHERE key = $1',
        'SELECT * FROM "table" WHERE key = $1',
        'SELECT * FROM sessions WHERE (unknown_column = $1) ORDER BY created_at',
      ]);
      assert.deepEqual(qs.map((q) => q.standInNames), [['tablename'], ['table'], ['unknown_column']]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{this\.options\.tablename\} names a schema, table or column chosen at run time; it was read as tablename/);
      assert.match(qs[2]!.warnings.join(' '), /A \?\? binding \(column\) names a column chosen at run time/);
      for (const q of qs.slice(0, 2)) assert.equal(analyzeQuery(q, text, undefined).top, undefined);
      // The column chosen at run time is left out; the order on a real column is still advised.
      const parsed = parsePostgresQuerySync(qs[2]!.sql);
      assert.ok(parsed.ok);
      const keys = advisePostgresShapes(parsed.shapes, { standIns: qs[2]!.standInNames! }).suggestions.flatMap((x) => (x.index?.engine === 'postgres' ? x.index.keys.map((k) => k.column) : []));
      assert.ok(!keys.includes('unknown_column'));
    });

    it('reads a Knex instance held in a field, and a raw template whose holes are constants', () => {
      const qs = sql([
        `import type { Knex } from 'knex';`,
        `const TABLE = 'api_keys';`,
        `export class KeyStore {`,
        `  constructor(private readonly db: Knex) {}`,
        `  get(secret: string) { return this.db(TABLE).where({ secret }).first(); }`,
        `  seen(ids: number[]) { return this.db<KeyRow>(TABLE).whereIn('id', ids).update({ seen_at: new Date() }); }`,
        `  exists(id: number) { return this.db.raw(\`SELECT EXISTS (SELECT 1 FROM \${TABLE} WHERE id = ?) AS present\`, [id]); }`,
        `  add(row: KeyRow) { return this.db(TABLE).insert(row); }`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM api_keys WHERE secret = $1 LIMIT 1',
        'UPDATE api_keys SET seen_at = $2 WHERE id IN ($1)',
        'SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $1) AS present',
      ]);
    });

    it('keeps a hole of an untagged template that is not a constant as a parameter', () => {
      const qs = sql([`import { Pool } from 'pg';`, `const pool = new Pool();`, `await pool.query(\`SELECT * FROM orders WHERE customer_id = \${req.id}\`);`].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT * FROM orders WHERE customer_id = $1']);
    });
  });

  describe('Sequelize', () => {
    it('reads model calls with Op operators, the table from define or pluralised', () => {
      const qs = sql([
        `import { Op } from 'sequelize';`,
        `const User = sequelize.define('user', {}, { tableName: 'app_users' });`,
        `User.findAll({ where: { status: 'active', age: { [Op.gt]: 18 }, [Op.or]: [{ a: 1 }, { b: null }] }, order: [['createdAt', 'DESC']], limit: 10, offset: 20 });`,
        `Order.findOne({ where: { id } });`,
        `Order.destroy({ where: { x: [1, 2] } });`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        `SELECT * FROM app_users WHERE status = 'active' AND age > 18 AND ((a = 1) OR (b IS NULL)) ORDER BY "createdAt" DESC LIMIT 10 OFFSET 20`,
        'SELECT * FROM "Orders" WHERE id = $1 LIMIT 1',
        'DELETE FROM "Orders" WHERE x IN (1, 2)',
      ]);
    });

    it("reads query()'s :name replacements on an instance of any name when its options have replacements", () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        `await db.query('UPDATE "Activities" SET data = :data WHERE id = :id', { replacements: { data, id } });`,
        `await pool.query('SELECT * FROM "Activities" WHERE kind = $1', [kind]);`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['UPDATE "Activities" SET data = $1 WHERE id = $2', 'SELECT * FROM "Activities" WHERE kind = $1']);
    });
  });

  describe('TypeORM', () => {
    it('reads repositories, find operators, entity tables and query builders', () => {
      const qs = sql([
        `import { Repository, MoreThan, In } from 'typeorm';`,
        `@Entity('orders') export class Order {}`,
        `class S { constructor(@InjectRepository(Order) private readonly repo: Repository<Order>, private userRepository: Repository<User>) {}`,
        `  a() { return this.repo.find({ where: { status: 'open', total: MoreThan(5), id: In([1, 2]) }, order: { createdAt: 'DESC' }, take: 10 }); }`,
        `  b(email: string) { return this.userRepository.findOneBy({ email }); }`,
        `  c(email: string) { return this.userRepository.createQueryBuilder('u').leftJoinAndSelect('u.profile', 'p').where('u.email = :email', { email }).andWhere('p.age > :age', { age: 3 }).orderBy('u.createdAt', 'DESC').take(10).getMany(); }`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        `SELECT * FROM orders WHERE status = 'open' AND total > 5 AND id IN (1, 2) ORDER BY "createdAt" DESC LIMIT 10`,
        'SELECT * FROM "user" WHERE email = $1 LIMIT 1',
        'SELECT * FROM "user" u WHERE (u.email = $1) ORDER BY u."createdAt" DESC LIMIT 10',
      ]);
      assert.match(qs[2]!.warnings.join(' '), /joins \(p\)/);
    });

    it('reads a query builder kept in a variable, and says later conditions are not read', () => {
      const qs = sql(`import { getRepository } from 'typeorm';\nconst qb = getRepository(ArticleEntity).createQueryBuilder('article').where('article.slug = :slug', { slug: 'a' });`);
      assert.deepEqual(qs.map((q) => q.sql), [`SELECT * FROM article_entity article WHERE (article.slug = 'a')`]);
      assert.match(qs[0]!.warnings.join(' '), /run elsewhere/);
    });
    it('takes the entity from this in an entity\'s static methods and from this.getRepository()', () => {
      const qs = sql([
        `import { BaseEntity, Entity, getRepository } from 'typeorm';`,
        `@Entity('watchlist') export class Watchlist extends BaseEntity {`,
        `  static async remove(tmdbId: number) { const repo = getRepository(this); await repo.delete({ tmdbId }); }`,
        `  static byUser(userId: number) { return this.getRepository().find({ where: { userId }, take: 5 }); }`,
        `  static recent() { return Watchlist.getRepository().createQueryBuilder('w').orderBy('w.createdAt', 'DESC').getMany(); }`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'DELETE FROM watchlist WHERE "tmdbId" = $1',
        'SELECT * FROM watchlist WHERE "userId" = $1 LIMIT 5',
        'SELECT * FROM watchlist w ORDER BY w."createdAt" DESC',
      ]);
    });

    it('takes the last class argument of a connection\'s own getRepository(ctx, Entity), and a repository both branches name', () => {
      const qs = sql([
        `import { In } from 'typeorm';`,
        `export class ProductService {`,
        `  constructor(private connection: TransactionalConnection) {}`,
        `  byIds(ctx: RequestContext, ids: string[]) { return this.connection.getRepository(ctx, Product).find({ where: { id: In(ids) } }); }`,
        `  byCode(ctx: RequestContext | undefined, code: string) {`,
        `    const repository = ctx ? this.connection.getRepository(ctx, Facet) : this.connection.rawConnection.getRepository(Facet);`,
        `    return repository.findOne({ where: { code } });`,
        `  }`,
        `  built(ctx: RequestContext) { return this.connection.getRepository(ctx, Order).createQueryBuilder('o').where('o.code = :code', { code: 'x' }).getOne(); }`,
        `  chosen(ctx: RequestContext, entityType: Type<VendureEntity>) { return this.connection.getRepository(ctx, entityType).findOne({ where: { id: 1 } }); }`,
        `  mixed(ctx: RequestContext) { const r = ctx ? this.connection.getRepository(ctx, Facet) : this.connection.getRepository(ctx, Product); return r.findOne({ where: { id: 2 } }); }`,
        `  other(ctx: RequestContext) { return this.cache.getRepository(ctx, Facet).findOne({ where: { id: 3 } }); }`,
        `}`,
      ].join('\n'));
      // An entity chosen at run time, two entities, and a receiver that is not a connection: not taken.
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM product WHERE id IN ($1)',
        'SELECT * FROM facet WHERE code = $1 LIMIT 1',
        `SELECT * FROM "order" o WHERE (o.code = 'x')`,
      ]);
    });

    it('takes an entity picked from an object of entities by a constant key, and says so', () => {
      const qs = sql([
        `import { DataSource } from 'typeorm';`,
        `export async function flows(appDataSource: DataSource, options: ICommonObject, id: string) {`,
        `  const databaseEntities = options.databaseEntities as IDatabaseEntity;`,
        `  const flow = await appDataSource.getRepository(databaseEntities['ChatFlow']).findOneBy({ id });`,
        `  const byKey = await appDataSource.getRepository(databaseEntities[options.kind]).findOneBy({ id });`,
        `  return [flow, byKey];`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT * FROM chat_flow WHERE id = $1 LIMIT 1']);
      assert.match(qs[0]!.warnings.join(' '), /The entity is taken to be ChatFlow from the key of databaseEntities\['ChatFlow'\]/);
    });

    it('takes the entity a manager is given in a field named for its class, and says so', () => {
      const qs = sql([
        `import { DataSource, In } from 'typeorm';`,
        `export class Store {`,
        `  private OrderLine;`,
        `  init({ OrderLine }) { this.OrderLine = OrderLine; }`,
        `  async lines(dataSource: DataSource, keys: string[]) {`,
        `    const queryRunner = dataSource.createQueryRunner();`,
        `    return queryRunner.manager.find(this.OrderLine, { where: { orderKey: In(keys) } });`,
        `  }`,
        `  async line(entityManager, key: string) { return entityManager.findOneBy(this.OrderLine, { orderKey: key }); }`,
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT * FROM order_line WHERE "orderKey" IN ($1)', 'SELECT * FROM order_line WHERE "orderKey" = $1 LIMIT 1']);
      assert.match(qs[0]!.warnings.join(' '), /The entity is taken to be OrderLine from the field this\.OrderLine, which is given its class at run time\./);
    });
  });

  describe('postgres.js and slonik', () => {
    it("reads postgres.js's dynamic updates, inserts and lists, and queries given whole as a WITH's parts", () => {
      const qs = sql([
        `import postgres from 'postgres';`,
        `const sql = postgres();`,
        'await sql`update alerts set ${sql(changes)} where id = ${id} and project_id = ${projectId}`;',
        'await sql`insert into alerts ${sql(row)} returning id`;',
        'await sql`select * from alerts where id in ${sql(ids)}`;',
        'await sql`with days as (${daysQuery}) select d.day, count(a.id) from days d left join alerts a on a.day = d.day group by d.day`;',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'update alerts set id = id where id = $2 and project_id = $3',
        'insert into alerts DEFAULT VALUES returning id',
        'select * from alerts where id in ($1)',
        'with days as (SELECT NULL) select d.day, count(a.id) from days d left join alerts a on a.day = d.day group by d.day',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{sql\(changes\)\} \(assignments\)/);
      assert.match(qs[3]!.warnings.join(' '), /\$\{daysQuery\} \(a subquery\)/);
    });

    it('reads sql and tx tags, fragments, identifiers, unsafe, and names chosen at run time with a stand-in', () => {
      const qs = sql([
        `import postgres from 'postgres';`,
        `const sql = postgres();`,
        'await sql`SELECT * FROM orders WHERE id = ${id} ${status ? sql`AND status = ${status}` : sql``}`;',
        'await sql.begin(async (tx) => { await tx`UPDATE orders SET a = 1 WHERE id = ${id}`; });',
        `await sql.unsafe('SELECT * FROM orders WHERE id = $1', [5]);`,
        'await sql`SELECT * FROM ${sql(\'orders\')} WHERE x = 1`;',
        'await pool.query(`SELECT * FROM ${schema}.orders WHERE id = $1`, [1]);',
        'await pool.one(sql.type(Row)`SELECT id FROM users WHERE email = ${email}`);',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM orders WHERE id = $1 AND status = $2',
        'UPDATE orders SET a = 1 WHERE id = $1',
        'SELECT * FROM orders WHERE id = $1',
        'SELECT * FROM "orders" WHERE x = 1',
        'SELECT * FROM schema.orders WHERE id = $1',
        'SELECT id FROM users WHERE email = $1',
      ]);
      assert.match(qs[4]!.warnings.join(' '), /\$\{schema\} names a schema/);
    });

    it('reads identifier helpers and insert columns given names at run time as stand-ins, quoting keywords', () => {
      const qs = sql([
        `import { sql } from 'slonik';`,
        'export const drop = (pool, table, fields, id) => pool.query(sql`DELETE FROM ${sql.identifier([table])} WHERE ${fields.id} = ${id}`);',
        'export const put = (pool, table, fields, v) => pool.query(sql`INSERT INTO ${table} (${fields.key}, ${fields.value}) SELECT ${v}, 1 WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE value = ${v})`);',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'DELETE FROM "table" WHERE $1 = $2',
        'INSERT INTO "table" (key, value) SELECT $4, 1 WHERE NOT EXISTS (SELECT 1 FROM "table" WHERE value = $6)',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{sql\.identifier\(\[table\]\)\} names a schema, table or column chosen at run time; it was read as "table"/);
      assert.match(qs[1]!.warnings.join(' '), /\$\{fields\.key\}, \$\{fields\.value\}/);
    });
  });

  describe('SQL whose clauses are fragments', () => {
    const keys = (q: FoundSqlQuery) => {
      const parsed = parsePostgresQuerySync(q.sql);
      assert.ok(parsed.ok, `${q.sql} does not parse`);
      return [...new Set(advisePostgresShapes(parsed.shapes, { standIns: q.standInNames ?? [] }).suggestions.flatMap((s) => (s.index?.engine === 'postgres' ? [`${s.index.table}(${s.index.keys.map((k) => k.column).join(', ')})`] : [])))];
    };

    it('reads slonik fragments the file builds: constants, a conditional, sql.join of an array pushed into, a helper', () => {
      const qs = sql([
        `import { sql } from 'slonik';`,
        `const byStatus = (status) => sql.fragment\`o.status = \${status}\`;`,
        `export async function search(pool, { name, city, sort }) {`,
        '  const conditions = [sql.fragment`TRUE`];',
        '  if (name) conditions.push(sql.fragment`c.name = ${name}`);',
        '  if (city) conditions.push(sql.fragment`a.city = ${city}`);',
        '  const orderBy = sort === \'new\' ? sql.fragment`ORDER BY c.created_at DESC` : sql.fragment`ORDER BY c.name`;',
        '  let join = sql.fragment``;',
        '  if (city) join = sql.fragment`JOIN addresses a ON a.customer_id = c.id`;',
        '  else if (name) join = sql.fragment`JOIN notes n ON n.customer_id = c.id`;',
        '  return pool.any(sql.unsafe`SELECT c.id FROM customers c ${join} WHERE ${sql.join(conditions, sql.fragment` AND `)} ${orderBy} LIMIT 10`);',
        `}`,
        'export const open = (pool) => pool.any(sql.unsafe`SELECT o.id FROM orders o WHERE ${byStatus(\'open\')}`);',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT c.id FROM customers c JOIN addresses a ON a.customer_id = c.id WHERE TRUE AND c.name = $1 AND a.city = $2 ORDER BY c.created_at DESC LIMIT 10',
        'SELECT o.id FROM orders o WHERE o.status = $1',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{join\}, \$\{sql\.join\(conditions, sql\.fragment` AND `\)\}, \$\{orderBy\} were read with the SQL this file builds for them, every optional part present/);
      assert.deepEqual(qs[1]!.params.map((p) => p.text), ['status']);
      // Each part of the SQL maps back to where the file writes it.
      const src = qs[0]!;
      const at = (s: string) => src.runs.find(([start]) => start === src.sql.indexOf(s))?.[1];
      assert.ok(at('JOIN addresses') !== undefined && at('JOIN addresses')! < at('SELECT c.id')!);
    });

    it('reads postgres.js fragments held in variables and nested in place', () => {
      const qs = sql([
        `import postgres from 'postgres';`,
        `const sql = postgres();`,
        'const recent = sql`AND created_at > now() - interval \'1 day\'`;',
        'export const events = (kind, mine) => sql`SELECT * FROM events WHERE kind = ${kind} ${recent} ${mine ? sql`AND owner = ${mine}` : sql``} ${sql`ORDER BY created_at DESC`}`;',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [`SELECT * FROM events WHERE kind = $1 AND created_at > now() - interval '1 day' AND owner = $2 ORDER BY created_at DESC`]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{recent\} was read with the SQL this file builds for it, every optional part present/);
    });

    it('reads a clause node-postgres splices into its text from a constant the file shows', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `export async function mark(client, id, paid) {`,
        '  const setClause = paid ? `SET paid = true, paid_at = now()` : `SET paid = false`;',
        '  await client.query(`UPDATE invoices ${setClause} WHERE id = $1`, [id]);',
        '  await client.query(`UPDATE invoices ${buildSet(paid)} WHERE id = $1`, [id]);',
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['UPDATE invoices SET paid = true, paid_at = now() WHERE id = $1', 'UPDATE invoices SET id = id WHERE id = $1']);
      assert.match(qs[1]!.warnings.join(' '), /The SQL of \$\{buildSet\(paid\)\} \(assignments\) is built where this file does not show it; the statement was read without it, so the advice does not cover it\./);
    });

    it('reads what the file does not show with a stand-in by its place in the grammar, never as an index key', () => {
      const qs = sql([
        `import { sql } from 'slonik';`,
        `import { tracked, filter, order, joins, page, rows, assignments } from './helpers';`,
        'pool.one(sql.unsafe`UPDATE orders SET total = ${total}, ${tracked.assignments(userId)} WHERE id = ${id} RETURNING ${columns}`);',
        'pool.one(sql.unsafe`UPDATE orders SET ${sql.join(assignments, sql.fragment`, `)} WHERE id = ${id}`);',
        'pool.query(sql.unsafe`INSERT INTO order_lines (order_id, sku) VALUES ${sql.join(rows, sql.fragment`, `)}`);',
        'pool.any(sql.unsafe`SELECT id FROM orders WHERE ${filter} AND customer_id = ${customer} ORDER BY ${order}`);',
        'pool.any(sql.unsafe`SELECT o.id FROM orders o ${joins} WHERE o.status = ${status} ${page(2)}`);',
        'pool.any(sql.unsafe`SELECT count(*) ${from}`);',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'UPDATE orders SET total = $1 WHERE id = $3 RETURNING $4',
        'UPDATE orders SET id = id WHERE id = $2',
        'INSERT INTO order_lines (order_id, sku) VALUES (DEFAULT, DEFAULT)',
        'SELECT id FROM orders WHERE TRUE AND customer_id = $2 ',
        'SELECT o.id FROM orders o  WHERE o.status = $2 ',
        // Its tables are in the part not shown: nothing is left to analyse, so it is not read at all.
        'SELECT count(*) $1',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{tracked\.assignments\(userId\)\} \(assignments\)/);
      assert.match(qs[3]!.warnings.join(' '), /The SQL of \$\{filter\} \(a condition\) and \$\{order\} \(the order\) is built where this file does not show it/);
      assert.match(qs[4]!.warnings.join(' '), /\$\{joins\} \(a clause\) and \$\{page\(2\)\} \(a clause\)/);
      assert.deepEqual(qs.map((q) => q.params.map((p) => p.n)), [[1, 3, 4], [2], [], [2], [2], [1]]);
      assert.deepEqual(keys(qs[1]!), ['orders(id)']);
      assert.deepEqual(keys(qs[3]!), ['orders(customer_id)']);
      assert.deepEqual(keys(qs[4]!), ['orders(status)']);
    });
    it('reads a table chosen at run time that follows a comma of a FROM list as a name', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        'export const within = (tree: string, id: string) => pool.query(`SELECT c.id FROM ${tree} AS p, ${tree} c WHERE c.lft BETWEEN p.lft AND p.rgt AND p.id = ${id}`);',
        'export const pick = (a: string, b: number) => pool.query(`SELECT x, ${a} FROM items WHERE id IN (1, ${b})`);',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT c.id FROM tree AS p, tree c WHERE c.lft BETWEEN p.lft AND p.rgt AND p.id = $3',
        'SELECT x, $1 FROM items WHERE id IN (1, $2)',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{tree\} names a schema, table or column chosen at run time; it was read as tree/);
      assert.deepEqual(keys(qs[0]!), []);
    });
    it('reads a name chosen at run time inside a quoted name or a longer one as a stand-in, never as a name to index', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        'export const a = (table: string, id: string) => pool.query(`SELECT * FROM "${table}" WHERE id = $1`, [id]);',
        'export const b = (year: string, id: string) => pool.query(`SELECT * FROM orders_${year} WHERE id = $1`, [id]);',
        'export const c = (year: string, id: string) => pool.query(`SELECT * FROM "Orders_${year}" o WHERE o.id = $1`, [id]);',
        'export const d = (col: string, v: string) => pool.query(`SELECT id FROM orders WHERE "${col}" = $1 AND kind = ${v}`);',
        // A value in a string stays a value; a constant is its text, as before.
        "export const e = (q: string) => pool.query(`SELECT id FROM orders WHERE note LIKE '%${q}%' AND kind = $1`, ['x']);",
        `const T = 'audit';`,
        'export const f = (id: string) => pool.query(`SELECT * FROM "${T}" WHERE id = $1`, [id]);',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM "table" WHERE id = $1',
        'SELECT * FROM orders_year WHERE id = $1',
        'SELECT * FROM "Orders_year" o WHERE o.id = $1',
        'SELECT id FROM orders WHERE "col" = $1 AND kind = $3',
        "SELECT id FROM orders WHERE note LIKE '%$2%' AND kind = $1",
        'SELECT * FROM "audit" WHERE id = $1',
      ]);
      assert.deepEqual(qs.map((q) => q.standInNames ?? []), [['table'], ['orders_year'], ['orders_year'], ['col'], [], []]);
      assert.deepEqual(qs.map((q) => q.params.map((p) => p.text)), [[], [], [], ['v'], ['q'], []]);
      assert.match(qs[1]!.warnings.join(' '), /\$\{year\} names a schema, table or column chosen at run time, or a part of one; it was read as orders_year to analyse the rest/);
      for (const q of qs.slice(0, 3)) assert.deepEqual(keys(q), [], q.sql);
      // The column chosen at run time is never a key; the one the code names still is.
      assert.deepEqual(keys(qs[3]!), ['orders(kind)']);
      assert.ok(keys(qs[4]!).includes('orders(kind)'));
      assert.deepEqual(keys(qs[5]!), ['audit(id)']);
    });
    it('reads a part that is one of the constants the file writes with the first, and says which', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        `const ORDERS = { name: 'o.name', newest: 'o.created_at' };`,
        'export const list = (q: { sort: string; asc: boolean }, org: string) => pool.query(`SELECT o.id FROM orders o WHERE o.org = $1 ORDER BY ${ORDERS[q.sort] ?? \'o.updated_at\'} ${q.asc ? \'ASC\' : \'DESC\'} LIMIT 20`, [org]);',
        "export const open = (late: boolean) => pool.query('SELECT id FROM orders WHERE ' + (late ? 'due < now()' : 'due >= now()'));",
        'export const by = (col: string) => pool.query(`SELECT id FROM orders ORDER BY ${col}`);',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT o.id FROM orders o WHERE o.org = $1 ORDER BY o.updated_at ASC LIMIT 20',
        'SELECT id FROM orders WHERE due < now()',
        'SELECT id FROM orders ',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /is one of the constants the file writes for it \('o\.updated_at', 'o\.name', 'o\.created_at'\); the statement was read with 'o\.updated_at'/);
      assert.match(qs[0]!.warnings.join(' '), /\('ASC', 'DESC'\); the statement was read with 'ASC'/);
      assert.deepEqual(keys(qs[0]!), ['orders(org, updated_at)']);
    });
    it("reads pg-format's format() given to query, and its ident() in a template, a name chosen at run time as a stand-in", () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `import format, { ident } from 'pg-format';`,
        `const pool = new Pool();`,
        'export async function run(table: string, id: string, schema: string) {',
        "  await pool.query(format('SELECT * FROM %I WHERE id = %L AND kind = %L AND n > %s', table, id, 'book', 5));",
        '  const text = format("SELECT name FROM %I.users WHERE id = %L", \'App\', id);',
        '  await pool.query(text);',
        '  await pool.query(`SELECT * FROM ${ident(schema)}.orders WHERE ref = $1`, [id]);',
        "  await pool.query(`SELECT * FROM ${ident('audit_log')} WHERE ref = $1`, [id]);",
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        `SELECT * FROM "table" WHERE id = $1 AND kind = 'book' AND n > 5`,
        'SELECT name FROM "App".users WHERE id = $1',
        'SELECT * FROM schema.orders WHERE ref = $1',
        'SELECT * FROM "audit_log" WHERE ref = $1',
      ]);
      assert.deepEqual(qs.map((q) => q.params.map((p) => p.text)), [['id'], ['id'], [], []]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{table\} names a schema, table or column chosen at run time/);
      assert.deepEqual(keys(qs[0]!), []);
      assert.deepEqual(keys(qs[3]!), ['audit_log(ref)']);
    });
    it('reads the text a function or method of the file returns, with the call\'s arguments, and never writes it back', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        'function byId(table: string) { return `SELECT * FROM ${table} WHERE id = $1`; }',
        'export class Store {',
        '  private pool = new Pool();',
        '  private static latest(table: string, column: string): string {',
        '    const statement = `SELECT * FROM ${table} ORDER BY ${column} DESC LIMIT 1`;',
        '    return statement;',
        '  }',
        '  private owned() { return \'SELECT id FROM notes WHERE owner = $1\'; }',
        '  async run(id: string, extra: boolean) {',
        '    let statement = \'SELECT * FROM notes WHERE id = $1\';',
        '    if (extra) statement += \' AND archived\';',
        '    await this.pool.query(statement, [id]);',
        "    await this.pool.query(Store.latest('events', 'created'));",
        "    await this.pool.query(byId('users'), [id]);",
        '    await this.pool.query(this.owned(), [id]);',
        '  }',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM notes WHERE id = $1 AND archived',
        'SELECT * FROM events ORDER BY created DESC LIMIT 1',
        'SELECT * FROM users WHERE id = $1',
        'SELECT id FROM notes WHERE owner = $1',
      ]);
      assert.match(qs[1]!.warnings.join(' '), /The SQL is what Store\.latest\(\) returns, read with this call's arguments/);
      assert.deepEqual(keys(qs[3]!), ['notes(owner)']);
      // The text is the function's, which other calls share: a run of no SQL at the call keeps it from being written back.
      assert.ok(qs[3]!.runs.some(([, , len, fileLen]) => len === 0 && fileLen > 0));
    });
    it('reads a subquery that a function of the file returns, spliced into a template where a subquery stands, with the call\'s arguments', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        'const pool = new Pool();',
        'function activeConfigs(column?: string): string {',
        '  return `SELECT cfg.${column || \'*\'} FROM config cfg JOIN teams t ON t.id = cfg.team_id WHERE cfg.enabled AND t.level > 0`;',
        '}',
        'export async function plugins() {',
        '  return pool.query(`SELECT p.* FROM plugins p WHERE p.id IN (${activeConfigs(\'plugin_id\')} GROUP BY cfg.plugin_id)`);',
        '}',
        'export async function files(owner: string) {',
        '  return pool.query(`SELECT f.* FROM files f WHERE f.owner = $1 AND f.config_id IN (${activeConfigs(\'id\')})`, [owner]);',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT p.* FROM plugins p WHERE p.id IN (SELECT cfg.plugin_id FROM config cfg JOIN teams t ON t.id = cfg.team_id WHERE cfg.enabled AND t.level > 0 GROUP BY cfg.plugin_id)',
        'SELECT f.* FROM files f WHERE f.owner = $1 AND f.config_id IN (SELECT cfg.id FROM config cfg JOIN teams t ON t.id = cfg.team_id WHERE cfg.enabled AND t.level > 0)',
      ]);
      for (const q of qs) assert.equal(parsePostgresQuerySync(q.sql).ok, true, q.sql);
    });
    it("reads the text a function of the file returns where it is handed to the application's own wrapper", () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        'export class Store {',
        '  private pool = new Pool();',
        '  run(text: string, values: unknown[] | undefined, tag: string) { return this.pool.query(text, values); }',
        '}',
        'const store = new Store();',
        'function enabledConfigs(): string {',
        "  return `SELECT cfg.id, cfg.team_id FROM config cfg WHERE cfg.enabled AND cfg.deleted_at IS NULL`;",
        '}',
        "export async function configs() { return store.run(enabledConfigs(), undefined, 'configs'); }",
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT cfg.id, cfg.team_id FROM config cfg WHERE cfg.enabled AND cfg.deleted_at IS NULL']);
      assert.match(qs[0]!.warnings.join(' '), /The SQL is what enabledConfigs\(\) returns/);
    });
    it("reads SQL written as a sum of strings where it is handed to the application's own wrapper", () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        'export class Ledger {',
        '  private pool = new Pool();',
        '  private async run(text: string, values: unknown[] = []) { return this.pool.query(text, values); }',
        '  async undo(from: number, owner: string) {',
        "    return this.run('SELECT kind, payload FROM ledger_entries ' +",
        "      'WHERE height >= $1 AND owner = $2 ' +",
        "      'ORDER BY height DESC', [from, owner]);",
        '  }',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT kind, payload FROM ledger_entries WHERE height >= $1 AND owner = $2 ORDER BY height DESC']);
    });
    it('reads SQL in a template tagged by a tag that only joins its lines (common-tags oneLine, dedent)', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `import { oneLine, stripIndent } from 'common-tags';`,
        `import dedent from 'dedent';`,
        'const pool = new Pool();',
        'export async function counts(owner: string) {',
        '  await pool.query(oneLine`',
        '    SELECT kind, COUNT(*) AS n FROM items',
        '    WHERE owner = $1 GROUP BY kind`, [owner]);',
        '  await pool.query(stripIndent`SELECT id FROM items WHERE owner = ${owner}`);',
        "  await pool.query('SELECT id FROM items ' + oneLine`",
        '    WHERE kind = $1`, [owner]);',
        '  const text = dedent`',
        '    SELECT id FROM boxes WHERE owner = $1`;',
        '  return pool.query(text, [owner]);',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql.replace(/\s+/g, ' ').trim()), [
        'SELECT kind, COUNT(*) AS n FROM items WHERE owner = $1 GROUP BY kind',
        'SELECT id FROM items WHERE owner = $1',
        'SELECT id FROM items WHERE kind = $1',
        'SELECT id FROM boxes WHERE owner = $1',
      ]);
    });
    it('reads a hole that a name goes on after as part of that name', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        'const pool = new Pool();',
        'export async function listing(prefix: string, filter: string, key: string) {',
        '  await pool.query(`SELECT id FROM ${prefix}_orders WHERE owner = $1`, [key]);',
        '  return pool.query(`SELECT COUNT(*) FROM listing_filters WHERE filter @> make_filter(${filter}s => $1)`, [[key]]);',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT id FROM prefix_orders WHERE owner = $1',
        'SELECT COUNT(*) FROM listing_filters WHERE filter @> make_filter(filters => $1)',
      ]);
      for (const q of qs) assert.equal(parsePostgresQuerySync(q.sql).ok, true, q.sql);
      assert.deepEqual(qs[0]!.standInNames, ['prefix_orders']);
    });
    it('reads text a function of the file returns with what the script appends to it', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        'const pool = new Pool();',
        'function volumeQuery(since?: number): string {',
        "  return `SELECT account, SUM(price) volume FROM trades WHERE market = $1 ${since ? 'AND traded_at > $2' : ''} GROUP BY account `;",
        '}',
        'export async function top(market: string, limit: number) {',
        '  let text = volumeQuery();',
        "  text += 'ORDER BY volume DESC LIMIT $3';",
        '  return pool.query(text, [market, 0, limit]);',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql.replace(/\s+/g, ' ')), ['SELECT account, SUM(price) volume FROM trades WHERE market = $1 AND traded_at > $2 GROUP BY account ORDER BY volume DESC LIMIT $3']);
    });
    it('reads a hole whose left side the code shows as a string as that string, never its fallback', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        'const pool = new Pool();',
        "const SORT = 'created_at';",
        'export async function page() {',
        "  return pool.query(`SELECT * FROM events WHERE kind = $1 ORDER BY ${SORT || 'id'} DESC`, ['x']);",
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT * FROM events WHERE kind = $1 ORDER BY created_at DESC']);
    });
    it('reads a statement handed to a function of the file that appends to it and returns it, with what the script appends after', () => {
      const text = [
        `import { Pool } from 'pg';`,
        'const pool = new Pool();',
        'function byOwner(query: string, owner?: string): string {',
        '  if (owner) query += ` WHERE owner_id = $1`;',
        '  return query;',
        '}',
        'function filtering(query: string, filters: Record<string, string>, params: string[]): string {',
        '  Object.entries(filters).forEach(([column, value], index) => {',
        '    params.push(value);',
        '    if (index === 0) query += ` WHERE "${column}" = $${params.length}`;',
        '    else query += ` AND "${column}" = $${params.length}`;',
        '  });',
        '  return query;',
        '}',
        'function other(query: string): string { return `SELECT 1`; }',
        'export async function mine(owner: string) {',
        '  let query = `SELECT id, title FROM posts`;',
        '  query = byOwner(query, owner);',
        '  query += ` ORDER BY created_at DESC LIMIT 20`;',
        '  return pool.query(query, [owner]);',
        '}',
        'export async function counted(filters: Record<string, string>) {',
        '  let query = `SELECT p.user_id, COUNT(*) FROM posts p`;',
        '  const params: string[] = [];',
        '  query = filtering(query, filters, params);',
        '  query += ` GROUP BY p.user_id`;',
        '  return pool.query(query, params);',
        '}',
        'export async function replaced() {',
        '  let query = `SELECT id FROM posts`;',
        '  query = other(query);',
        '  return pool.query(query);',
        '}',
        // A parameter the function is given and never assigns is no such text: its callers' statements are read.
        'async function run(text: string, values: unknown[]) { return pool.query(text, values); }',
        "export async function one(id: string) { return run('SELECT title FROM posts WHERE id = $1', [id]); }",
      ].join('\n');
      const qs = sql(text);
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT id, title FROM posts WHERE owner_id = $1 ORDER BY created_at DESC LIMIT 20',
        'SELECT p.user_id, COUNT(*) FROM posts p WHERE "column" = $2 GROUP BY p.user_id',
        'SELECT title FROM posts WHERE id = $1',
      ]);
      assert.deepEqual(keys(qs[0]!), ['posts(owner_id, created_at)']);
      // The column is chosen at run time: a stand-in, on which no index is suggested.
      assert.deepEqual(qs[1]!.standInNames, ['column']);
      assert.match(qs[1]!.warnings.join(' '), /first branch's \(not 'AND "\$\{column\}"/);
      // The appended text is the function's, which other calls share: a run of no SQL at the call keeps it from being written back.
      const call = text.indexOf('byOwner(query, owner)');
      assert.ok(qs[0]!.runs.some(([, at, len, fileLen]) => at === call && len === 0 && fileLen > 0));
    });
    it('reads the text a method of the file returns with more SQL appended to it, and never writes it back', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        'export class Tree {',
        '  private pool = new Pool();',
        '  constructor(private tableName: string) {}',
        '  private byName(name: string) { return `SELECT id FROM nodes WHERE name = $1`; }',
        '  private insertSql(values: unknown[]) { const tbl = this.tableName; return `INSERT INTO "${tbl}" (name) VALUES ($1)`; }',
        "  async one(name: string) { return this.pool.query(this.byName(name) + ' ORDER BY id LIMIT 1', [name]); }",
        '  async add(name: string) { return this.pool.query(this.insertSql([name]) + " RETURNING id", [name]); }',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT id FROM nodes WHERE name = $1 ORDER BY id LIMIT 1',
        'INSERT INTO "tbl" (name) VALUES ($1) RETURNING id',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{this\.byName\(name\)\} was read with the SQL this file builds for it/);
      assert.deepEqual(keys(qs[0]!), ['nodes(name, id)']);
      assert.deepEqual(qs[1]!.standInNames, ['tbl']);
      // The text is the method's, which other calls share: a run of no SQL at the call keeps it from being written back.
      assert.ok(qs[0]!.runs.some(([, , len, fileLen]) => len === 0 && fileLen > 0));
    });
    it('reports no query for EXPLAIN of a statement the file does not show, and reads EXPLAIN of one it does', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        'export const plan = (statement: string, params: unknown[]) => pool.query(`EXPLAIN (FORMAT JSON) ${statement}`, params);',
        "export const mine = (id: string) => pool.query('EXPLAIN ANALYZE SELECT * FROM orders WHERE id = $1', [id]);",
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['EXPLAIN ANALYZE SELECT * FROM orders WHERE id = $1']);
    });
    it("reads the text of a pg-cursor or pg-query-stream object given to query()", () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `import Cursor from 'pg-cursor';`,
        `import QueryStream from 'pg-query-stream';`,
        `const pool = new Pool();`,
        'export async function* rows(client, owner: string) {',
        "  const cursor = client.query(new Cursor('SELECT id FROM events WHERE owner = $1 ORDER BY id', [owner]));",
        '  const text = `SELECT * FROM audit WHERE actor = $1`;',
        '  yield client.query(new QueryStream(text, [owner]));',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT id FROM events WHERE owner = $1 ORDER BY id', 'SELECT * FROM audit WHERE actor = $1']);
      assert.deepEqual(keys(qs[0]!), ['events(owner, id)']);
    });
    it('reads a cursor declared for a query, and not a text that only starts with the word', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        'export async function exportRows(client, owner: string) {',
        "  await client.query('BEGIN');",
        '  await client.query(`DECLARE rows_out CURSOR FOR SELECT id, total FROM invoices WHERE owner = $1 ORDER BY id`, [owner]);',
        "  await client.query('FETCH 500 FROM rows_out');",
        "  await pool.query('declare the winner', []);",
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['DECLARE rows_out CURSOR FOR SELECT id, total FROM invoices WHERE owner = $1 ORDER BY id']);
      assert.deepEqual(keys(qs[0]!), ['invoices(owner, id)']);
    });
    it('reads a function called in a schema chosen at run time, and an assignment list beside a column named by a keyword', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        `export async function enqueue(schema, sets, values) {`,
        "  await pool.query(`select ${schema}.add_job('mail', json_build_object('to', $1::text))`, values);",
        "  await pool.query(`UPDATE ${schema}.queue SET ${sets.join(', ')} WHERE name = $1`, values);",
        // A SELECT whose only FROM is in the part not shown still reads nothing.
        '  await pool.query(`SELECT count(*) ${from}`);',
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        "select schema.add_job('mail', json_build_object('to', $1::text))",
        'UPDATE schema.queue SET name = name WHERE name = $1',
        'SELECT count(*) $1',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{schema\} names a schema, table or column chosen at run time; it was read as schema/);
      assert.match(qs[1]!.warnings.join(' '), /\$\{sets\.join\(', '\)\} \(assignments\) is built where this file does not show it/);
      // The schema is the stand-in: where the table is, and so where an index would go, is not known, so none is suggested.
      assert.deepEqual(keys(qs[1]!), []);
    });

    it('reads the conditions a function pushes into an array and joins with AND or OR, every optional one present', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        `export async function list(status?: string, owner?: string) {`,
        `  const conditions: string[] = [];`,
        `  const values: unknown[] = [];`,
        '  if (status) { values.push(status); conditions.push(`o.status = $${values.length}`); }',
        "  if (owner) { values.push(owner); conditions.push('o.owner_id = $' + values.length); }",
        "  const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';",
        '  return pool.query(`SELECT * FROM orders o ${where} ORDER BY o.created_at DESC LIMIT 20`, values);',
        `}`,
        `export async function cards(board: string, column?: string, tag?: string) {`,
        `  const values: unknown[] = [board];`,
        "  const where: string[] = ['c.board_id = $1', 'c.archived = false'];",
        '  if (column) { values.push(column); where.push(`c.column_id = $${values.length}`); }',
        "  if (tag) where.push(`c.tag = ${tag}`);",
        "  return pool.query(`SELECT c.id FROM cards c WHERE ${where.join(' AND ')}`, values);",
        `}`,
        // A piece that is not SQL the file shows (a clause handed in) keeps the whole list unread, as before.
        `export async function other(clause: string, v: string) {`,
        `  const where: string[] = [];`,
        '  where.push(`${clause}$1`);',
        "  return pool.query(`SELECT id FROM notes WHERE ${where.join(' AND ')}`, [v]);",
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM orders o WHERE o.status = $1 AND o.owner_id = $2 ORDER BY o.created_at DESC LIMIT 20',
        'SELECT c.id FROM cards c WHERE c.board_id = $1 AND c.archived = false AND c.column_id = $2 AND c.tag = $3',
        'SELECT id FROM notes WHERE TRUE',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{conditions\.join\(' AND '\)\}, \$\{where\} were read with the SQL this file builds for them, every optional part present/);
      assert.match(qs[1]!.warnings.join(' '), /\$\{where\.join\(' AND '\)\} was read with the SQL this file builds for it, every optional part present/);
      assert.deepEqual(keys(qs[0]!), ['orders(status, owner_id, created_at)']);
      assert.deepEqual(keys(qs[1]!), ['cards(board_id, archived, column_id, tag)']);
      // Built at run time: never written back by a quick fix.
      assert.ok(qs[1]!.runs.some(([, from]) => from > qs[1]!.textRange.end || from < qs[1]!.textRange.start));
    });

    it('reads the conditions a local helper pushes into the array, once per call of it with its arguments', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `const pool = new Pool();`,
        `export async function cards(board: string, column?: string, due?: string) {`,
        `  const values: unknown[] = [board];`,
        "  const where: string[] = ['c.board_id=$1'];",
        '  const push = (clause: string, val: unknown) => { values.push(val); where.push(`${clause}$${values.length}`); };',
        "  if (column) push('c.column_id=', column);",
        "  if (due) push('c.due_date<=', due);",
        "  const whereSql = where.join(' AND ');",
        '  return pool.query(`SELECT c.id FROM cards c WHERE ${whereSql} ORDER BY c.created_at DESC`, values);',
        `}`,
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT c.id FROM cards c WHERE c.board_id=$1 AND c.column_id=$2 AND c.due_date<=$3 ORDER BY c.created_at DESC']);
      assert.deepEqual(keys(qs[0]!).sort(), ['cards(board_id, column_id, created_at, due_date)', 'cards(board_id, column_id, due_date, created_at)']);
    });

    it('reads an upsert whose column, value and assignment lists a helper of the file builds at run time', () => {
      const qs = sql([
        `import { Pool } from 'pg';`,
        `export class Store {`,
        `  private pool = new Pool();`,
        `  private static upsert(table: string, constraint: string, keyNames: string[]): string {`,
        '    const keys = keyNames.join(", ");',
        '    const keysValues = `\\$${keyNames.map((k, i) => i + 1).join(", $")}`;',
        '    const keysSets = keyNames.map((k, i) => `${k} = \\$${i + 1}`).join(", ");',
        '    return `INSERT INTO ${table} (${keys}) VALUES (${keysValues}) ` + `ON CONFLICT ${constraint} DO UPDATE SET ${keysSets}`;',
        '  }',
        '  async save(userId: string, data: string) {',
        "    await this.pool.query(Store.upsert('user_activity', '(user_id)', ['user_id', 'data']), [userId, data]);",
        '  }',
        '  async mark(id: string, sets: string[]) {',
        "    await this.pool.query(`INSERT INTO seen (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET ${sets.join(', ')} WHERE seen.id = $1`, [id]);",
        '  }',
        '}',
      ].join('\n'));
      assert.deepEqual(qs.map((q) => q.sql), [
        'INSERT INTO user_activity (keys) VALUES ($2) ON CONFLICT (user_id) DO NOTHING',
        'INSERT INTO seen (id) VALUES ($1) ON CONFLICT (id) DO NOTHING',
      ]);
      assert.match(qs[0]!.warnings.join(' '), /\$\{keysSets\} \(assignments\) is built where this file does not show it/);
      assert.deepEqual(qs[0]!.standInNames, ['keys']);
      // Read, and nothing in it for an index: an INSERT of values.
      for (const q of qs) assert.match(String((parsePostgresQuerySync(q.sql) as { refusal?: string }).refusal), /reads no rows/);
    });

    it('finds SQL whose tag comes from another database\'s module and says in the hover why it is not advised', () => {
      const text = [
        `import { sql as pg } from 'slonik';`,
        `import { sql } from './clickhouse-client';`,
        'export const daily = (ch, target) => ch.query(sql`SELECT toStartOfDay(timestamp) AS day, sum(total) FROM operations_daily WHERE target = ${target} GROUP BY day`);',
        'export const org = (pool, id) => pool.one(pg`SELECT id FROM organizations WHERE id = ${id}`);',
      ].join('\n');
      const qs = sql(text);
      assert.deepEqual(qs.map((q) => q.otherDatabase), [{ name: 'ClickHouse', module: './clickhouse-client', by: 'tag' }, undefined]);
      const a = analyzeQuery(qs[0]!, text, undefined);
      assert.equal(a.top, undefined);
      assert.match(a.hover, /The SQL is written for ClickHouse \(its `sql` tag comes from \.\/clickhouse-client\), which PostgreSQL does not read, so it is not advised here\./);
      assert.doesNotMatch(analyzeQuery(qs[1]!, text, undefined).hover, /written for/);
      // Explain says the same and asks for no values.
      const [daily] = explainTargets(text, 'script');
      assert.match(daily!.problem ?? '', /written for ClickHouse/);
      assert.equal(daily!.values, undefined);
      // A query call in a file whose only database client is another database's.
      const surreal = [`import { Surreal } from 'surrealdb';`, 'export const get = (db, key) => db.query("SELECT key, value FROM store WHERE key = $key", { key });'].join('\n');
      const [kv] = sql(surreal);
      assert.deepEqual(kv!.otherDatabase, { name: 'SurrealDB', module: 'surrealdb', by: 'client' });
      assert.match(analyzeQuery(kv!, surreal, undefined).hover, /The SQL is written for SurrealDB \(the file's database client is surrealdb\)/);
      // With node-postgres beside it, a query call is PostgreSQL's.
      assert.equal(sql([`import { Pool } from 'pg';`, `import Database from 'better-sqlite3';`, 'pool.query("SELECT id FROM users WHERE email = $1", [e]);'].join('\n'))[0]!.otherDatabase, undefined);
    });

    it('suggests no index on a name the code chooses at run time, and the hover says why', () => {
      const text = [
        `import { sql } from 'slonik';`,
        'pool.any(sql.unsafe`SELECT id FROM ${sql.identifier([table])} WHERE email = ${email}`);',
        'pool.any(sql.unsafe`SELECT u.id FROM users u WHERE u.${field} = ${v} AND u.tenant_id = ${tenant}`);',
      ].join('\n');
      const qs = sql(text);
      assert.deepEqual(qs.map((q) => q.sql), ['SELECT id FROM "table" WHERE email = $1', 'SELECT u.id FROM users u WHERE u.field = $2 AND u.tenant_id = $3']);
      assert.deepEqual(qs.map((q) => q.standInNames), [["table"], ["field"]]);
      assert.deepEqual(keys(qs[0]!), []);
      assert.deepEqual(keys(qs[1]!), ['users(tenant_id)']);
      const a = analyzeQuery(qs[0]!, text, undefined);
      assert.equal(a.top, undefined);
      assert.match(a.hover, /No index is suggested on "?table"?: the code chooses the table at run time/);
      const parsed = parsePostgresQuerySync(qs[1]!.sql);
      assert.ok(parsed.ok);
      assert.match(advisePostgresShapes(parsed.shapes, { standIns: ['field'] }).notes.join(' '), /field stands in for a column the code chooses at run time: the suggestions leave it out/);
    });

    it('reads a statement that starts with a clause a helper of the file returns, with what the helper appends to it', () => {
      const text = [
        `import { Client, QueryConfig } from 'pg';`,
        `const ORDERS = 'orders';`,
        'function listParts(fields: string[], withOwner: boolean) {',
        "  let selectPart = `SELECT ${fields}`, joinPart = '', groupPart = '';",
        '  if (withOwner) {',
        '    selectPart = `${selectPart}, owner.name`;',
        '    joinPart = `${joinPart} JOIN owners AS owner ON owner.id = o.owner_id`;',
        "    groupPart = 'GROUP BY o.id, owner.id';",
        '  }',
        '  return { selectPart, joinPart, groupPart };',
        '}',
        'export async function listOrders(client: Client, status: string, fields: string[]) {',
        '  const { selectPart, joinPart, groupPart } = listParts(fields, true);',
        '  const q: QueryConfig = { text: `${selectPart} FROM ${ORDERS} AS o ${joinPart} WHERE o.status = $1 ${groupPart}`, values: [status] };',
        '  return client.query(q);',
        '}',
      ].join('\n');
      const qs = sql(text);
      assert.deepEqual(qs.map((q) => q.sql.replace(/\s+/g, ' ')), ['SELECT $2, owner.name FROM orders AS o JOIN owners AS owner ON owner.id = o.owner_id WHERE o.status = $1 GROUP BY o.id, owner.id']);
      assert.match(qs[0]!.warnings.join(' '), /\$\{selectPart\}, \$\{joinPart\}, \$\{groupPart\} were read with the SQL this file builds for them/);
      assert.deepEqual(keys(qs[0]!), ['orders(status)', 'owners(id)']);
      // A name the helper does not return leaves the statement unread.
      assert.deepEqual(sql(text.replace('return { selectPart, joinPart, groupPart };', 'return { joinPart, groupPart };')), []);
    });

    it('reads assignments a loop appends to a clause as one part the code does not show', () => {
      const text = [
        `import { Client, QueryConfig } from 'pg';`,
        'export async function updateMember(client: Client, payload: Record<string, unknown>, teamId: number, userId: number) {',
        "  let assignments = 'SET';",
        '  const values: unknown[] = [teamId, userId];',
        '  Object.entries(payload).forEach(([key, value], index, all) => {',
        '    values.push(value);',
        '    if (index !== all.length - 1) assignments = `${assignments} ${key} = $${values.length},`;',
        '    else assignments = `${assignments} ${key} = $${values.length}`;',
        '  });',
        '  const q: QueryConfig = { text: `UPDATE team_members ${assignments} WHERE team_id = $1 AND user_id = $2 RETURNING id;`, values };',
        '  return client.query(q);',
        '}',
      ].join('\n');
      const [q] = sql(text);
      assert.equal(q!.sql, 'UPDATE team_members SET team_id = team_id WHERE team_id = $1 AND user_id = $2 RETURNING id;');
      assert.match(q!.warnings.join(' '), /\$\{assignments\} \(assignments\) is built where this file does not show it/);
      assert.deepEqual(keys(q!), ['team_members(team_id, user_id)']);
    });

    it('reads the statements of a text that opens a transaction, from the first after BEGIN', () => {
      const text = [
        `import { Client, QueryConfig } from 'pg';`,
        'export async function publish(client: Client, id: number, userId: number) {',
        '  const publishQuery: QueryConfig = {',
        '    text: `BEGIN;',
        "      UPDATE articles SET status = 'published' WHERE slug = ${id};",
        '      INSERT INTO events (article_id, user_id) VALUES (${id}, ${userId});',
        '    COMMIT;`,',
        '  };',
        '  await client.query(publishQuery.text);',
        '}',
      ].join('\n');
      const [q] = sql(text);
      // Only the first statement is the query, the one an Explain runs: the adapter takes one statement.
      assert.equal(q!.sql.trim().replace(/\s+/g, ' '), "UPDATE articles SET status = 'published' WHERE slug = $1");
      assert.deepEqual(q!.params.map((p) => p.n), [1]);
      assert.match(q!.warnings.join(' '), /opens a transaction/);
      assert.deepEqual(keys(q!), ['articles(slug)']);
      // Its SQL maps back to the file: the UPDATE's table is where the template writes it.
      const at = sqlCharToSource(q!, q!.sql.indexOf('articles')).start;
      assert.equal(text.slice(at, at + 8), 'articles');
      // A transaction's control statement alone is no query.
      assert.deepEqual(sql(`import { Client } from 'pg';\nexport const open = (client: Client) => client.query('BEGIN;');`), []);
    });

    it('numbers what is appended to a clause after the placeholders its first value writes', () => {
      const text = [
        `import { Client } from 'pg';`,
        'export async function countOwned(client: Client, ownerId: number, status?: string) {',
        "  let where = 'WHERE o.owner_id = $1';",
        '  const values: unknown[] = [ownerId];',
        '  if (status) {',
        '    values.push(status);',
        '    where = `${where} AND o.status = $${values.length}`;',
        '  }',
        '  return client.query({ text: `SELECT COUNT(o.id) FROM orders AS o ${where}`, values });',
        '}',
      ].join('\n');
      const [q] = sql(text);
      assert.equal(q!.sql, 'SELECT COUNT(o.id) FROM orders AS o WHERE o.owner_id = $1 AND o.status = $2');
      assert.deepEqual(keys(q!), ['orders(owner_id, status)']);
    });
  });

  describe('.sql query files', () => {
    it('splits -- name: blocks and reads other placeholder styles as $n', () => {
      const text = `-- name: get-user\nSELECT * FROM users WHERE id = :id AND created_at::date = :day\n\n-- name: list-orders\nSELECT * FROM orders WHERE status = %s AND x = %(x)s LIMIT ?\n-- name: by-email\nSELECT * FROM users WHERE email = @email AND tags @> '{a}';\n`;
      const qs = sql(text, 'sql');
      assert.deepEqual(qs.map((q) => q.sql), [
        'SELECT * FROM users WHERE id = $1 AND created_at::date = $2',
        'SELECT * FROM orders WHERE status = $1 AND x = $2 LIMIT $3',
        `SELECT * FROM users WHERE email = $1 AND tags @> '{a}'`,
      ]);
      assert.ok(text.slice(qs[0]!.range.start).startsWith('SELECT * FROM users WHERE id = :id'));
    });
  });
});
