import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseOneExpression } from '../../src/core/mongo/shellNotation';
import { mongoCommandFromNode, parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import { explainWouldWrite, toServerCommand } from '../../src/core/query/mongoServerCommand';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

function read(text: string): MongoCommand {
  const r = parseMongoQuery(text);
  if (!r.ok) assert.fail(`expected to read ${JSON.stringify(text)} but got: ${r.error}`);
  return r.command;
}

function refused(text: string): string {
  const r = parseMongoQuery(text);
  assert.equal(r.ok, false, `expected a refusal for ${JSON.stringify(text.slice(0, 80))}`);
  const error = (r as { ok: false; error: string }).error;
  assert.match(error, /\.$/, 'the error ends with a full stop');
  assert.doesNotMatch(error, /\n/, 'the error is one line');
  return error;
}

/** The text a range points at. */
function at(text: string, cmd: MongoCommand, part: keyof MongoCommand['ranges']): string {
  const r = cmd.ranges[part];
  assert.ok(r, `range of ${part} is set`);
  return text.slice(r.start, r.end);
}

describe('mongo query text', () => {
  describe('find', () => {
    it('reads the ESR query with filter, sort, limit and the source range of each part', () => {
      const text = 'db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}}).sort({created_at: -1}).limit(10)';
      const cmd = read(text);
      assert.equal(cmd.collection, 'orders');
      assert.equal(cmd.operation, 'find');
      assert.deepEqual(cmd.filter, { country_id: 1, order_details: { $elemMatch: { product_id: 5 } } });
      assert.deepEqual(cmd.sort, { created_at: -1 });
      assert.equal(cmd.limit, 10);
      assert.equal(cmd.skip, undefined);
      assert.equal(cmd.explain, undefined);
      assert.equal(at(text, cmd, 'collection'), 'orders');
      assert.equal(at(text, cmd, 'operation'), 'find');
      assert.equal(at(text, cmd, 'filter'), '{country_id: 1, order_details: {$elemMatch: {product_id: 5}}}');
      assert.equal(at(text, cmd, 'sort'), '{created_at: -1}');
      assert.equal(at(text, cmd, 'limit'), '10');
      assert.equal(at(text, cmd, 'whole'), text);
    });

    it('reads getCollection, a projection argument, skip, hint, projection() and a trailing explain', () => {
      const text = `db.getCollection('demo-esr').find({ r: { $gt: 10 }, e: { $eq: 42 } }, { e: 1, _id: 0 })\n  .skip(100).limit(5).hint({ e: 1, s: 1, r: 1 }).projection({ e: 1, s: 1 }).explain("executionStats");`;
      const cmd = read(text);
      assert.equal(cmd.collection, 'demo-esr');
      assert.equal(at(text, cmd, 'collection'), "'demo-esr'");
      assert.deepEqual(cmd.projection, { e: 1, s: 1 }, 'the later projection() wins over the argument');
      assert.equal(cmd.skip, 100);
      assert.equal(cmd.limit, 5);
      assert.deepEqual(cmd.hint, { e: 1, s: 1, r: 1 });
      assert.equal(cmd.explain, 'executionStats');
      assert.equal(at(text, cmd, 'explain'), 'explain("executionStats")');
      assert.equal(at(text, cmd, 'skip'), '100');
    });

    it('reads db["name"], dotted collection names, getSiblingDB and the collection-level explain', () => {
      assert.equal(read(`db['orders'].find()`).collection, 'orders');
      assert.equal(read('db.system.profile.find({}).sort({ts: -1})').collection, 'system.profile');
      const cmd = read(`db.getSiblingDB('shop').orders.explain('allPlansExecution').find({a: 1}).sort({b: 1})`);
      assert.equal(cmd.database, 'shop');
      assert.equal(cmd.collection, 'orders');
      assert.equal(cmd.explain, 'allPlansExecution');
      assert.deepEqual(cmd.sort, { b: 1 });
      assert.equal(read('db.c.find().explain()').explain, 'queryPlanner');
      assert.equal(read('db.c.find().explain(true)').explain, 'allPlansExecution');
    });

    it('keeps BSON constructor values as Extended JSON and reads options from the third argument', () => {
      const cmd = read(`db.c.find({ _id: ObjectId("64b7f0c2a1b2c3d4e5f60718"), at: { $gte: ISODate("2024-01-01T00:00:00Z") }, name: /^ab/i, n: NumberLong(5) }, null, { sort: { at: -1 }, limit: 3, collation: { locale: 'fr' }, allowDiskUse: true })`);
      assert.deepEqual(cmd.filter, {
        _id: { $oid: '64b7f0c2a1b2c3d4e5f60718' },
        at: { $gte: { $date: '2024-01-01T00:00:00Z' } },
        name: { $regex: '^ab', $options: 'i' },
        n: { $numberLong: '5' },
      });
      assert.equal(cmd.projection, undefined);
      assert.deepEqual(cmd.sort, { at: -1 });
      assert.equal(cmd.limit, 3);
      assert.deepEqual(cmd.collation, { locale: 'fr' });
      assert.deepEqual(cmd.options, { allowDiskUse: true });
    });

    it('reads limit and skip given as Long/NumberInt, and a negative limit with a warning', () => {
      assert.equal(read('db.c.find().limit(NumberInt(7)).skip(Long("20"))').skip, 20);
      const r = parseMongoQuery('db.c.find().limit(-5)');
      assert.ok(r.ok);
      assert.equal(r.command.limit, 5);
      assert.match(r.warnings[0]!, /negative limit/);
    });

    it('reads findOne as a find of one document and cursor.count() as the count command', () => {
      const one = read('db.c.findOne({a: 1}, {b: 1})');
      assert.equal(one.operation, 'findOne');
      assert.equal(one.limit, 1);
      const count = read('db.c.find({a: 1}).limit(5).count()');
      assert.equal(count.operation, 'count');
      assert.equal(count.limit, undefined, 'cursor.count() ignores limit as the shell does');
    });

    it('accepts await, toArray() and pretty() around the query', () => {
      const cmd = read('await db.c.find({a: 1}).sort({a: 1}).toArray()');
      assert.deepEqual(cmd.sort, { a: 1 });
      assert.equal(read('db.c.find().pretty()').operation, 'find');
    });
  });

  describe('other operations', () => {
    it('reads aggregate with a pipeline and options, and legacy stages given as arguments', () => {
      const text = `db.customers.aggregate([\n  { $project: { email: '$contact.email' } },\n  { $match: { email: 'a@b.c' } }\n], { allowDiskUse: true, hint: 'contact.email_1' })`;
      const cmd = read(text);
      assert.equal(cmd.operation, 'aggregate');
      assert.deepEqual(cmd.pipeline, [{ $project: { email: '$contact.email' } }, { $match: { email: 'a@b.c' } }]);
      assert.equal(cmd.hint, 'contact.email_1');
      assert.deepEqual(cmd.options, { allowDiskUse: true });
      assert.ok(at(text, cmd, 'pipeline').startsWith('[\n  { $project'));
      const legacy = parseMongoQuery('db.c.aggregate({$match: {a: 1}}, {$limit: 2})');
      assert.ok(legacy.ok);
      assert.equal(legacy.command.pipeline!.length, 2);
      assert.equal(legacy.warnings.length, 1);
      assert.equal(read('db.c.aggregate([{$match: {a: 1}}]).explain("executionStats")').explain, 'executionStats');
    });

    it('reads count, countDocuments with options, and distinct with its field', () => {
      const c = read('db.c.countDocuments({ e: 42, r: { $gt: 10 } }, { limit: 100, skip: 2, hint: "e_1_r_1" })');
      assert.equal(c.operation, 'countDocuments');
      assert.deepEqual(c.filter, { e: 42, r: { $gt: 10 } });
      assert.equal(c.limit, 100);
      assert.equal(c.skip, 2);
      assert.equal(c.hint, 'e_1_r_1');
      assert.deepEqual(read('db.c.count({a: 1})').filter, { a: 1 });
      const text = `db.orders.distinct('order_details.product_id', { country_id: 1 })`;
      const d = read(text);
      assert.equal(d.field, 'order_details.product_id');
      assert.deepEqual(d.filter, { country_id: 1 });
      assert.equal(at(text, d, 'field'), `'order_details.product_id'`);
    });

    it('reads updates, update pipelines, replacements, deletes and findOneAnd*', () => {
      const u = read('db.c.updateMany({ status: "A" }, { $set: { flag: true }, $inc: { n: 1 } }, { upsert: true, arrayFilters: [{ "x.a": 1 }] })');
      assert.equal(u.operation, 'updateMany');
      assert.deepEqual(u.update, { $set: { flag: true }, $inc: { n: 1 } });
      assert.deepEqual(u.options, { upsert: true, arrayFilters: [{ 'x.a': 1 }] });
      assert.deepEqual(read('db.c.updateOne({a: 1}, [{ $set: { b: "$a" } }])').update, [{ $set: { b: '$a' } }]);
      assert.deepEqual(read('db.c.replaceOne({a: 1}, { a: 1, b: 2 })').update, { a: 1, b: 2 });
      const d = read('db.c.deleteOne({ a: { $lt: 5 } })');
      assert.equal(d.operation, 'deleteOne');
      assert.deepEqual(d.filter, { a: { $lt: 5 } });
      const f = read('db.c.findOneAndUpdate({ a: 1 }, { $inc: { n: 1 } }, { sort: { at: -1 }, projection: { n: 1 }, returnDocument: "after" })');
      assert.deepEqual(f.sort, { at: -1 });
      assert.deepEqual(f.projection, { n: 1 });
      assert.deepEqual(f.options, { returnDocument: 'after' });
      assert.equal(read('db.c.findOneAndDelete({a: 1}, {sort: {a: 1}})').operation, 'findOneAndDelete');
    });

    it('refuses an update without operators and a replacement with operators', () => {
      assert.match(refused('db.c.updateOne({a: 1}, {b: 2})'), /without update operators/);
      assert.match(refused('db.c.replaceOne({a: 1}, {$set: {b: 2}})'), /update operators \(\$set\)/);
      assert.match(refused('db.c.updateOne({a: 1})'), /without the update document/);
    });
  });

  describe('errors', () => {
    it('names the position of a syntax error and of a truncated query', () => {
      assert.equal(refused('db.c.find({a: 1}'), 'At line 1, column 17, the query ends early: a bracket or quote is not closed.');
      assert.match(refused('db.c.find({a: 1 b: 2})'), /^At line 1, column 17, the query is not valid JavaScript: /);
      assert.match(refused('db.c.find({a: 1})\n.sort({b: 1}) x'), /^At line 2, column 15, the query has more text/);
    });

    it('refuses what is not a db call chain or not a known operation or method', () => {
      assert.match(refused('orders.find({})'), /does not start with db/);
      assert.match(refused('db.find({})'), /calls find on db itself/);
      assert.match(refused('db.c.drop()'), /^At line 1, column 6, the query calls drop, which is not an operation/);
      assert.match(refused('db.c.insertOne({a: 1})'), /calls insertOne/);
      assert.match(refused('db.c.find().map(1)'), /chains map\(\.\.\.\), which is not a cursor method/);
      assert.match(refused('db.c.countDocuments({}).sort({a: 1})'), /only accepts after find/);
      assert.match(refused('db.c'), /no operation/);
      assert.match(refused('db.c.find().limit("ten")'), /limit a value that is not a whole number/);
      assert.match(refused('db.c.find().skip(-1)'), /skip a negative number/);
      assert.match(refused('db.c.find().sort({a: "up"})'), /sorts on a/);
      assert.match(refused('db.c.find().explain("full")'), /verbosity/);
      assert.match(refused('db.c.find(5)'), /filter that is not a document/);
      assert.match(refused('db.c.aggregate([{$match: {}, $limit: 1}])'), /stage 1 that is not one \$stage/);
      assert.match(refused(''), /empty/);
    });

    it('refuses variables unless placeholders are asked for, and marks the command then', () => {
      assert.match(refused('db.c.find({ a: userId })'), /refers to the name userId at line 1, column 16/);
      const r = parseMongoQuery('db.c.find({ a: userId, b: getB() }).limit(n)', { placeholders: true });
      assert.equal(r.ok, false, 'a placeholder cannot stand for a limit');
      const p = parseMongoQuery('db.c.find({ a: userId, b: getB() }).sort({ t: -1 })', { placeholders: true });
      assert.ok(p.ok);
      assert.equal(p.command.hasPlaceholders, true);
      assert.deepEqual(p.command.filter, { a: { $placeholder: 'userId' }, b: { $placeholder: 'getB()' } });
      const s = toServerCommand(p.command);
      assert.equal(s.ok, false);
      assert.match((s as { error: string }).error, /literal values/);
    });
  });

  describe('hostile input is read, never run', () => {
    const g = globalThis as Record<string, unknown>;
    afterEach(() => {
      delete g.qpiRan;
    });

    const hostile = [
      'db.c.find({ a: (globalThis.qpiRan = 1) })',
      'db.c.find({ a: globalThis.qpiRan = 1 })',
      'db.c.find({ get a() { globalThis.qpiRan = 1; return 1 } })',
      'db.c.find({ a: (() => { globalThis.qpiRan = 1 })() })',
      'db.c.find({ a: `${globalThis.qpiRan = 1}` })',
      'db.c.find({}).sort({ a: 1 }).constructor.constructor("globalThis.qpiRan = 1")()',
      'db.c.find({ a: Function("globalThis.qpiRan = 1")() })',
      'db.c.find({ a: eval("globalThis.qpiRan = 1") })',
      'db.c.find({ a: ObjectId.constructor("globalThis.qpiRan = 1")() })',
      'db.c.find({ a: new ObjectId({ toString() { globalThis.qpiRan = 1; return "x" } }) })',
      'db.c.find({ a: [].constructor.constructor("globalThis.qpiRan = 1")() })',
      'db[(globalThis.qpiRan = 1, "c")].find()',
      'db.getCollection(String(globalThis.qpiRan = 1)).find()',
      'db.c.find({ ...{ a: globalThis.qpiRan = 1 } })',
      'db.c.find({ [globalThis.qpiRan = 1]: 1 })',
      'db.c.find({}).limit(globalThis.qpiRan = 1)',
      'db.c.find({ a: import("node:fs") })',
      'db.c.find({ a: require("child_process").execSync("touch owned") })',
    ];
    for (const text of hostile) {
      it(`refuses ${text}`, () => {
        refused(text);
        assert.equal(g.qpiRan, undefined, 'nothing in the text ran');
      });
    }

    it('keeps __proto__ an ordinary key and pollutes no prototype', () => {
      const cmd = read('db.c.find({ __proto__: { polluted: 1 }, "constructor": { prototype: { polluted: 1 } } })');
      assert.deepEqual(Object.keys(cmd.filter!), ['__proto__', 'constructor']);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(Object.getPrototypeOf(cmd.filter), Object.prototype);
    });

    it('refuses a chain deeper than the reader accepts, and a huge text, without throwing', () => {
      assert.match(refused('db.c.find()' + '.limit(1)'.repeat(200)), /more than 64 calls/);
      assert.match(refused('db.c.find(' + '['.repeat(100000) + ']'.repeat(100000) + ')'), /nested|deep/);
      assert.match(refused('db.c.find({a: "' + 'x'.repeat(1024 * 1024) + '"})'), /KB long/);
    });

    it('never throws on arbitrary text (property)', () => {
      const alphabet = fc.constantFrom(...'db.c.find({a:1,$in:[2]}).sort({b:-1})limit(5)`${}"\'\\/ \n=>()?:;+-*'.split(''));
      fc.assert(
        fc.property(fc.string({ unit: alphabet, maxLength: 80 }), (s) => {
          const r = parseMongoQuery(s);
          if (!r.ok) assert.ok(r.error.length > 0 && !r.error.includes('\n'));
          return true;
        }),
        { numRuns: 2000 },
      );
    });
  });

  describe('from an expression parsed elsewhere', () => {
    it('gives ranges in the coordinates of the larger text', () => {
      const source = `const top = await db.orders.find({ country_id: 1 }).limit(10);\n`;
      const start = source.indexOf('db.');
      const parsed = parseOneExpression(source.slice(start, source.indexOf(';')), { startIndex: start });
      assert.ok('node' in parsed);
      const r = mongoCommandFromNode(parsed.node, source);
      assert.ok(r.ok);
      assert.equal(source.slice(r.command.ranges.filter!.start, r.command.ranges.filter!.end), '{ country_id: 1 }');
    });
  });

  describe('server command', () => {
    function serverCommandOf(file: string): Record<string, unknown> {
      const doc = JSON.parse(readFileSync(join(CORPUS, file), 'utf8')) as { command: Record<string, unknown> };
      // What the driver adds around the command (session, database, time limit) is not the query's.
      const { $db: _db, maxTimeMS: _t, lsid: _l, $clusterTime: _c, ...rest } = doc.command;
      return rest;
    }

    function built(text: string): Record<string, unknown> {
      const r = toServerCommand(read(text));
      if (!r.ok) assert.fail(r.error);
      return r.command;
    }

    it('builds the find command a real 6.0.5 server echoed', () => {
      assert.deepEqual(built(`db.orders.find({ status: "A", qty: { $gt: 10 } }).sort({ qty: -1 }).limit(5)`), serverCommandOf('mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json'));
    });

    it('builds the find command with $or and with a projection as real servers echoed them', () => {
      assert.deepEqual(
        built(`db.matches.find({ $or: [{ ChallengerId: "bench-heavy-me" }, { OpponentId: "bench-heavy-me" }] }).sort({ CreatedAt: -1 }).limit(40)`),
        serverCommandOf('mongo-find-or-subplan-limit-sort-merge-execstats-7.0.json'),
      );
      assert.deepEqual(built(`db.test.find({ i: { $lt: 1000 } }, { i: 1 })`), serverCommandOf('mongo-find-sbe-collscan-projection-simple-execstats-5.0.json'));
    });

    it('builds the aggregate command a real 6.0.5 server echoed', () => {
      assert.deepEqual(
        built(`db.orders.aggregate([{ $match: { status: "B" } }, { $group: { _id: "$item", total: { $sum: "$qty" } } }, { $sort: { total: -1 } }])`),
        serverCommandOf('mongo-agg-sbe-group-execstats-6.0.5-local.json'),
      );
    });

    it('builds write commands that name one statement each, and countDocuments as the driver pipeline', () => {
      assert.deepEqual(built('db.c.updateOne({ a: 1 }, { $set: { b: 2 } }, { upsert: true })'), {
        update: 'c', updates: [{ q: { a: 1 }, u: { $set: { b: 2 } }, multi: false, upsert: true }],
      });
      assert.deepEqual(built('db.c.deleteMany({ a: 1 })'), { delete: 'c', deletes: [{ q: { a: 1 }, limit: 0 }] });
      assert.deepEqual(built('db.c.findOneAndUpdate({ a: 1 }, { $inc: { n: 1 } }, { returnDocument: "after", sort: { t: 1 } })'), {
        findAndModify: 'c', query: { a: 1 }, sort: { t: 1 }, update: { $inc: { n: 1 } }, new: true,
      });
      assert.deepEqual(built('db.c.countDocuments({ a: 1 }, { limit: 5 })'), {
        aggregate: 'c', pipeline: [{ $match: { a: 1 } }, { $limit: 5 }, { $group: { _id: 1, n: { $sum: 1 } } }], cursor: {},
      });
      assert.deepEqual(built(`db.c.distinct("f", { a: 1 })`), { distinct: 'c', key: 'f', query: { a: 1 } });
    });

    it('says which pipelines would write when executed', () => {
      assert.equal(explainWouldWrite(read('db.c.aggregate([{ $match: {} }, { $out: "copy" }])')), true);
      assert.equal(explainWouldWrite(read('db.c.aggregate([{ $merge: { into: "copy" } }])')), true);
      assert.equal(explainWouldWrite(read('db.c.aggregate([{ $match: { $out: 1 } }])')), false);
      assert.equal(explainWouldWrite(read('db.c.updateMany({}, { $set: { a: 1 } })')), false);
    });
  });
});
