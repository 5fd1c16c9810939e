// The texts "Create Index" runs: a MongoDB createIndex call read without evaluating it, and one
// PostgreSQL CREATE INDEX statement checked with the server's own parser. The index commands the advisor
// writes for the measured truth cases must be accepted as they are, with the keys and (for MongoDB) the
// index name the server really gave them; anything else is refused in one sentence.

import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdapterError } from '../../src/adapters/errors';
import { inspectCreateIndex } from '../../src/adapters/pgStatement';
import { createIndexText } from '../../src/core/advice/mongoText';
import { defaultMongoIndexName, parseMongoCreateIndex, type MongoIndexCreation } from '../../src/core/query/createIndex';

const TRUTH = join(__dirname, '..', 'fixtures', 'truth');

interface TruthCase {
  engine: string;
  data: { collection?: string };
  oracle: { index: Record<string, 1 | -1> | string; metrics?: { indexBounds?: { index: string }[] } };
  candidates?: { index: unknown }[];
}

const cases = readdirSync(TRUTH).filter((d) => !d.startsWith('.')).sort().map((id) => ({ id, c: JSON.parse(readFileSync(join(TRUTH, id, 'case.json'), 'utf8')) as TruthCase }));

function read(text: string): MongoIndexCreation {
  const r = parseMongoCreateIndex(text);
  if (!r.ok) assert.fail(`expected ${text} to be read, got: ${r.error}`);
  return r.value;
}

function refusedMongo(text: string): string {
  const r = parseMongoCreateIndex(text);
  assert.equal(r.ok, false, `expected a refusal for ${text}`);
  const error = (r as { ok: false; error: string }).error;
  assert.match(error, /^[A-Za-z$].*\.$/, 'one sentence ending with a full stop');
  assert.doesNotMatch(error, /\n/);
  return error;
}

async function refusedSql(text: string): Promise<AdapterError> {
  let error: unknown;
  try {
    await inspectCreateIndex(text);
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof AdapterError, `expected a refusal for ${text}`);
  assert.match(error.message, /^[A-Z].*\.$/);
  assert.doesNotMatch(error.message, /\n/);
  return error;
}

describe('create index: MongoDB text', () => {
  const mongoCases = cases.filter(({ c }) => c.engine.startsWith('mongodb') && typeof c.oracle.index === 'object' && c.data.collection);

  it('reads the advisor\'s createIndex text for every measured MongoDB case, with the name the server gave the index', () => {
    assert.ok(mongoCases.length >= 10, `only ${mongoCases.length} MongoDB truth cases`);
    for (const { id, c } of mongoCases) {
      const keys = c.oracle.index as Record<string, 1 | -1>;
      const text = createIndexText(c.data.collection!, Object.entries(keys).map(([field, direction]) => ({ field, direction })));
      const v = read(text);
      assert.equal(v.collection, c.data.collection, id);
      assert.deepEqual(Object.entries(v.keys), Object.entries(keys), `${id}: keys in their order`);
      assert.deepEqual(v.options, {});
      const serverName = c.oracle.metrics?.indexBounds?.[0]?.index;
      if (serverName) assert.equal(v.name, serverName, `${id}: the name MongoDB gave the index`);
    }
  });

  it('reads getCollection, bracket access, getSiblingDB, the options document and shell constructors', () => {
    const a = read("db.getCollection('order items').createIndex({ 'a.b': 1, c: -1 }, { name: 'ab_c', unique: true, partialFilterExpression: { c: { $gt: NumberInt(5) } } });");
    assert.deepEqual(a, { collection: 'order items', keys: { 'a.b': 1, c: -1 }, options: { name: 'ab_c', unique: true, partialFilterExpression: { c: { $gt: 5 } } }, name: 'ab_c' });
    const b = read('db.getSiblingDB("shop")["orders"].createIndex({ body: "text" }) // built once');
    assert.deepEqual({ database: b.database, collection: b.collection, name: b.name }, { database: 'shop', collection: 'orders', name: 'body_text' });
    const c = read('db.events.createIndex({ at: 1 }, { expireAfterSeconds: 3600, partialFilterExpression: { at: { $gte: ISODate("2024-01-01T00:00:00Z") } } })');
    assert.deepEqual(c.options.partialFilterExpression, { at: { $gte: { $date: '2024-01-01T00:00:00Z' } } });
    assert.equal(defaultMongoIndexName({ a: 1, b: -1, loc: '2dsphere' }), 'a_1_b_-1_loc_2dsphere');
  });

  it('refuses anything that is not one createIndex call on db, and never runs it', () => {
    let ran = false;
    (globalThis as Record<string, unknown>).__qpiRan = () => (ran = true);
    assert.match(refusedMongo('db.orders.createIndex({ a: __qpiRan() })'), /./);
    assert.match(refusedMongo('db.orders.drop()'), /createIndex/);
    assert.match(refusedMongo('db.orders.createIndexes([{ key: { a: 1 }, name: "a_1" }])'), /createIndexes is not accepted/);
    assert.match(refusedMongo('db.orders.createIndex({ a: 1 }); db.orders.drop()'), /more text/);
    assert.match(refusedMongo('other.orders.createIndex({ a: 1 })'), /start from db/);
    assert.match(refusedMongo('db[name].createIndex({ a: 1 })'), /start from db/);
    assert.match(refusedMongo('db.orders.createIndex({})'), /at least one field/);
    assert.match(refusedMongo('db.orders.createIndex({ a: 0 })'), /key a must be 1, -1/);
    assert.match(refusedMongo('db.orders.createIndex({ a: 1 }, { name: "" })'), /name must be a non-empty string/);
    assert.match(refusedMongo('db.orders.createIndex({ a: 1 }, { unique: true }, { commitQuorum: 1 })'), /key pattern and, optionally/);
    assert.match(refusedMongo('db.orders.createIndex({ a: 1 }, "a_1")'), /options document/);
    assert.match(refusedMongo('db.orders.createIndex({ a: 1 '), /not valid shell syntax/);
    assert.match(refusedMongo(''), /empty/);
    assert.equal(ran, false, 'nothing in the text was evaluated');
  });
});

describe('create index: PostgreSQL statement', () => {
  const pgTexts = [...new Set(cases.filter(({ c }) => c.engine.startsWith('postgres')).flatMap(({ c }) => JSON.stringify(c).match(/CREATE INDEX[^"]*/g) ?? []))];

  it('accepts every CREATE INDEX the PostgreSQL truth cases measured, reading the table', async () => {
    assert.ok(pgTexts.length >= 10, `only ${pgTexts.length} statements`);
    for (const text of pgTexts) {
      const s = await inspectCreateIndex(`${text};`);
      assert.equal(s.sql, text);
      assert.equal(s.table, /\bON\s+(?:ONLY\s+)?([A-Za-z_][\w.]*)/i.exec(text)![1]!.split('.').pop(), text);
      assert.equal(s.concurrent, false);
    }
  });

  it('reads the name, schema, UNIQUE, CONCURRENTLY and IF NOT EXISTS', async () => {
    assert.deepEqual(await inspectCreateIndex('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "Orders_Email" ON shop."Orders" (lower(email)) WHERE deleted_at IS NULL;\n'), {
      sql: 'CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "Orders_Email" ON shop."Orders" (lower(email)) WHERE deleted_at IS NULL',
      name: 'Orders_Email', schema: 'shop', table: 'Orders', concurrent: true, unique: true, ifNotExists: true,
    });
    const unnamed = await inspectCreateIndex('create index on orders using gin (tags)');
    assert.equal(unnamed.name, undefined);
    assert.equal(unnamed.schema, undefined);
  });

  it('refuses another statement, a second statement and bad syntax in one sentence', async () => {
    assert.match((await refusedSql('DROP INDEX orders_pkey')).message, /Only a CREATE INDEX statement is run here, and this is a DROP statement/);
    assert.match((await refusedSql('CREATE INDEX ON t (a); DROP TABLE t')).message, /holds 2 statements/);
    assert.match((await refusedSql('SELECT 1')).message, /this is a SELECT statement/);
    assert.match((await refusedSql('CREATE TABLE x (a int)')).message, /CREATE TABLE/);
    const syntax = await refusedSql('CREATE INDEX ON t (a');
    assert.equal(syntax.kind, 'syntax');
    assert.equal((await refusedSql('  ;  ')).kind, 'syntax');
    assert.equal((await refusedSql('-- just a comment')).kind, 'syntax');
  });
});
