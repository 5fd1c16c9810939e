// The finder naming a collection a function takes as a parameter from the function's callers (callers.ts):
// in the same file and in the workspace's files that import the function, only when every call passes the
// same collection, named where it is made; never a guess when they differ.

import assert from 'node:assert/strict';
import { findQueries, ScriptQueryIndex, type FoundMongoQuery, type FoundQuery, type WorkspaceModules } from '../../src/core/query/find/index';
import { resolveSpecifier } from '../../src/core/query/find/workspace';
import { importedNames } from '../../src/core/query/find/callers';

function reader(files: Record<string, string>) {
  const unlisted: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f] };
  const modules: WorkspaceModules = { ...unlisted, files: () => Object.keys(files) };
  return (file: string, withWorkspace = true, listed = true): FoundQuery[] =>
    findQueries(files[file]!, 'script', 'ts', withWorkspace ? { file, modules: listed ? modules : unlisted } : {}).queries;
}

const mongo = (qs: FoundQuery[]) => qs.filter((q): q is FoundMongoQuery => q.engine === 'mongodb');
const described = (qs: FoundQuery[]) => mongo(qs).map((q) => `${q.command.collection || '?'}.${q.command.operation}`);

describe('finder: a collection named by the callers of the function that takes it', () => {
  it('names a plain parameter from the one call in the same file', () => {
    const text = [
      "import { MongoClient, Collection } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'function listOpen(tickets: Collection) {',
      "  return tickets.find({ state: 'open' }).sort({ openedAt: -1 }).toArray();",
      '}',
      'export async function openTickets() {',
      "  const tickets = db.collection('tickets');",
      '  return listOpen(tickets);',
      '}',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(described(qs), ['tickets.find']);
    assert.match(mongo(qs)[0]!.warnings.join(' '), /named by the function's callers: taken from the call of listOpen in this file/);
  });

  it('keeps it chosen by the caller when two calls pass different collections', () => {
    const text = [
      "import { MongoClient, Collection } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'function countActive(c: Collection) {',
      '  return c.countDocuments({ active: true });',
      '}',
      "export const users = () => countActive(db.collection('users'));",
      "export const teams = () => countActive(db.collection('teams'));",
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(described(qs), ['?.countDocuments']);
    assert.match(mongo(qs)[0]!.warnings.join(' '), /the parameter c, which the 2 calls of countActive in this file give as users or teams: the query runs on each/);
  });

  it("reads a parameter called for its collection by the functions its callers give", () => {
    const text = [
      "import { MongoClient } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      "const ticketsDb = () => db.collection('tickets');",
      "const closedTicketsDb = () => db.collection('closed_tickets');",
      'async function reopen(coll: typeof ticketsDb, id: string) {',
      "  return coll().updateOne({ id }, { $set: { state: 'open' } });",
      '}',
      'async function sweep(source: typeof ticketsDb | typeof closedTicketsDb) {',
      '  return source().find({ stale: true }).toArray();',
      '}',
      'function latest(list: () => string[]) {',
      '  return list().find((x) => x.length > 0);',
      '}',
      "export const run = () => [reopen(ticketsDb, 'a'), reopen(ticketsDb, 'b'), sweep(ticketsDb), sweep(closedTicketsDb), latest(() => [])];",
    ].join('\n');
    const qs = mongo(findQueries(text, 'script', 'ts', {}).queries);
    assert.deepEqual(described(qs), ['tickets.updateOne', '?.find']);
    assert.match(qs[0]!.warnings.join(' '), /The collection is tickets, named by the function's callers: taken from the 2 calls of reopen in this file/);
    assert.match(qs[1]!.warnings.join(' '), /the parameter source\(\), which the 2 calls of sweep in this file give as tickets or closed_tickets: the query runs on each/);
  });

  it('names the collections callers in other modules give a parameter between them, and keeps it unnamed', () => {
    const read = reader({
      '/ws/db/collections.ts': [
        "import { MongoClient } from 'mongodb';",
        'const db = new MongoClient(process.env.URL!).db();',
        "export const receiptsDb = () => db.collection('receipts');",
        "export const archivedReceiptsDb = () => db.collection('receipts_archive');",
      ].join('\n'),
      '/ws/jobs/dedupe.ts': [
        "import type { Collection } from 'mongodb';",
        'export async function dedupe(coll: Collection) {',
        "  return coll.aggregate([{ $group: { _id: '$ref', n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }]).toArray();",
        '}',
        'export async function scrub(coll) {',
        '  return coll.deleteMany({ ref: null });',
        '}',
      ].join('\n'),
      '/ws/jobs/run.ts': [
        "import { dedupe, scrub } from './dedupe';",
        "import { receiptsDb, archivedReceiptsDb } from '../db/collections';",
        'export const run = () => Promise.all([dedupe(receiptsDb()), dedupe(archivedReceiptsDb()), scrub(receiptsDb()), scrub(pick())]);',
        'declare function pick(): never;',
      ].join('\n'),
    });
    const qs = mongo(read('/ws/jobs/dedupe.ts'));
    assert.deepEqual(described(qs), ['?.aggregate', '?.deleteMany']);
    assert.match(qs[0]!.warnings.join(' '), /the parameter coll, which the 2 calls of dedupe in run\.ts give as receipts or receipts_archive: the query runs on each, so no index can be named for one of them here/);
    // A call whose collection is not known: nothing is said of the others.
    assert.doesNotMatch(qs[1]!.warnings.join(' '), /give as/);
  });

  it('names a destructured parameter through calls in two modules that import the function', () => {
    const read = reader({
      '/ws/db/collections.ts': [
        "import type { Db } from 'mongodb';",
        'export const FiltersCollection = async (db: Db) => {',
        "  const Filters = db.collection('filters');",
        "  const FilterTexts = db.collection('filter_texts');",
        '  return { Filters, FilterTexts };',
        '};',
      ].join('\n'),
      '/ws/module/configureFilters.ts': [
        "import { mongodb } from '../lib/mongo';",
        'export const configureFilters = ({ Filters }: { Filters: mongodb.Collection<{ _id: string; key: string }> }) => {',
        '  return {',
        '    findFilter: (key: string) => Filters.findOne({ key, deleted: null }),',
        '    count: () => Filters.countDocuments({ deleted: null }),',
        '  };',
        '};',
        'export type FiltersModule = ReturnType<typeof configureFilters>;',
      ].join('\n'),
      '/ws/lib/mongo.ts': "import * as mongodb from 'mongodb';\nexport { mongodb };",
      '/ws/module/index.ts': [
        "import type { Db } from 'mongodb';",
        "import { FiltersCollection } from '../db/collections';",
        "import { configureFilters } from './configureFilters';",
        'export const configureFiltersModule = async ({ db }: { db: Db }) => {',
        '  const { Filters } = await FiltersCollection(db);',
        '  return configureFilters({ Filters });',
        '};',
      ].join('\n'),
      '/ws/worker/reindex.ts': [
        "import type { Db } from 'mongodb';",
        "import { configureFilters } from '../module/configureFilters';",
        'export async function reindex(db: Db) {',
        "  const filters = configureFilters({ Filters: db.collection('filters') });",
        "  return filters.findFilter('all');",
        '}',
      ].join('\n'),
    });
    const qs = read('/ws/module/configureFilters.ts');
    assert.deepEqual(described(qs), ['filters.findOne', 'filters.countDocuments']);
    assert.match(mongo(qs)[0]!.warnings.join(' '), /taken from the 2 calls of configureFilters in index\.ts, reindex\.ts/);
    // Without the workspace's files listed, no caller is seen: chosen by the caller, as before.
    assert.deepEqual(described(read('/ws/module/configureFilters.ts', true, false)), ['?.findOne', '?.countDocuments']);
  });

  it("names a collection opened by a name the function takes, from what its calls give it, through a caller's own parameter too", () => {
    const read = reader({
      '/ws/scripts/bench.js': [
        "import { MongoClient } from 'mongodb';",
        "const LEDGER = 'ledger_entries';",
        'async function touchAll(uri, dbName, collectionName, ids) {',
        '  const client = new MongoClient(uri);',
        '  try {',
        '    const entries = client.db(dbName).collection(collectionName);',
        '    await Promise.all(ids.map((id) => entries.updateOne({ _id: id }, { $set: { touched: true } })));',
        '  } finally {',
        '    await client.close();',
        '  }',
        '}',
        'async function timeLookups(uri, dbName, collectionName, accounts) {',
        '  const client = new MongoClient(uri);',
        '  return client.db(dbName).collection(collectionName).findOne({ account: accounts[0] });',
        '}',
        'async function runLookups(uri, dbName, name, accounts) {',
        '  await timeLookups(uri, dbName, name, accounts);',
        '  await timeLookups(uri, dbName, name, accounts.slice(1));',
        '}',
        "await touchAll('mongodb://localhost', 'bench', LEDGER, [1, 2]);",
        "await runLookups('mongodb://localhost', 'bench', LEDGER, ['a']);",
      ].join('\n'),
      '/ws/src/counters.js': [
        "export const nextValue = (db, collectionName, key) => db.collection(collectionName).findOneAndUpdate({ _id: key }, { $inc: { seq: 1 } });",
      ].join('\n'),
      '/ws/src/orders.js': [
        "import { nextValue } from './counters.js';",
        "export const nextOrderNumber = (db) => nextValue(db, 'counters', 'orders');",
      ].join('\n'),
    });
    const qs = mongo(read('/ws/scripts/bench.js'));
    assert.deepEqual(described(qs), ['ledger_entries.updateOne', 'ledger_entries.findOne']);
    assert.match(qs[0]!.warnings.join(' '), /The collection is ledger_entries, named by the function's callers: taken from the call of touchAll in bench\.js/);
    assert.match(qs[1]!.warnings.join(' '), /taken from the 2 calls of timeLookups in bench\.js/);
    assert.deepEqual(described(read('/ws/src/counters.js')), ['counters.findOneAndUpdate']);
  });

  it('keeps a collection opened by a name the function takes unnamed when its calls give different names, and names them', () => {
    const text = [
      "import { MongoClient } from 'mongodb';",
      'const db = new MongoClient(process.env.URL).db();',
      'export async function highest() {',
      '  const top = async (collectionName) => {',
      '    const [doc] = await db.collection(collectionName).find({ rank: { $gte: 1 } }).sort({ rank: -1 }).limit(1).toArray();',
      '    return doc?.rank ?? 0;',
      '  };',
      "  return Math.max(await top('players'), await top('retired_players'));",
      '}',
    ].join('\n');
    const qs = mongo(findQueries(text, 'script', 'js', {}).queries);
    assert.deepEqual(described(qs), ['?.find']);
    assert.match(qs[0]!.warnings.join(' '), /the parameter collectionName, which the 2 calls of top in this file give as players or retired_players: the query runs on each/);
  });

  it('keeps it unnamed when a module that imports the function passes another collection', () => {
    const read = reader({
      '/ws/audit.ts': [
        "import type { Collection } from 'mongodb';",
        'export function recent(events: Collection) {',
        '  return events.find({}).sort({ at: -1 }).limit(20).toArray();',
        '}',
      ].join('\n'),
      '/ws/a.ts': "import type { Db } from 'mongodb';\nimport { recent } from './audit';\nexport const a = (db: Db) => recent(db.collection('audit_events'));",
      '/ws/b.ts': "import type { Db } from 'mongodb';\nimport { recent } from './audit';\nexport const b = (db: Db) => recent(db.collection('login_events'));",
    });
    assert.deepEqual(described(read('/ws/audit.ts')), ['?.find']);
  });

  it('keeps it unnamed when the function is handed on as a value, so calls not seen may pass another', () => {
    const text = [
      "import { MongoClient, Collection } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'function purge(c: Collection) {',
      '  return c.deleteMany({ expired: true });',
      '}',
      "export const sessions = () => purge(db.collection('sessions'));",
      'export const jobs = [purge];',
    ].join('\n');
    assert.deepEqual(described(findQueries(text, 'script', 'ts', {}).queries), ['?.deleteMany']);
  });

  it("names a class's field from the collection every `new` of the class gives its constructor", () => {
    const text = [
      "import { MongoClient, type Collection } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'export class TicketStore {',
      '  constructor(private readonly tickets: Collection<{ state: string }>) {}',
      "  open() { return this.tickets.find({ state: 'open' }).toArray(); }",
      '}',
      'class Archive {',
      '  private items: Collection;',
      '  constructor(items: Collection) { this.items = items; }',
      '  old(before: Date) { return this.items.deleteMany({ at: { $lt: before } }); }',
      '}',
      "export const store = new TicketStore(db.collection('tickets'));",
      "export const archives = [new Archive(db.collection('archive_2024')), new Archive(db.collection('archive_2025'))];",
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(described(qs), ['tickets.find', '?.deleteMany']);
    assert.match(mongo(qs)[0]!.warnings.join(' '), /taken from the call of new TicketStore in this file/);
  });

  it('keeps the name when an edit inside the function is read again alone', () => {
    const lines = [
      "import { MongoClient, Collection } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'export const configureTickets = ({ Tickets }: { Tickets: Collection }) => {',
      ...Array.from({ length: 40 }, (_, i) => `  const f${i} = () => Tickets.findOne({ state: 'open', n: ${i} });`),
      '  return { f0 };',
      '};',
      "export const tickets = configureTickets({ Tickets: db.collection('tickets') });",
    ];
    const text = lines.join('\n');
    const index = new ScriptQueryIndex('script', 'ts', {});
    index.update(text);
    const edited = text.replace("n: 20 }", "n: 201 }");
    index.update(edited);
    const again = described(index.result().queries);
    assert.deepEqual(again, described(findQueries(edited, 'script', 'ts', {}).queries));
    assert.deepEqual(new Set(again), new Set(['tickets.findOne']));
  });

  it('reads a query named by its callers again when only a call of its function or class is edited, inside a large class too', () => {
    const lines = [
      "import { MongoClient, type Collection, type Db } from 'mongodb';",
      'const db: Db = new MongoClient(process.env.URL!).db();',
      'async function listOpen(coll) {',
      "  return coll.find({ state: 'open' }).toArray();",
      '}',
      'export class Desk {',
      '  constructor(private readonly letters: Collection) {}',
      ...Array.from({ length: 120 }, (_, i) => `  note${i}() { return ${i}; }`),
      '  unread() { return this.letters.find({ seen: false }).toArray(); }',
      "  static make() { return new Desk(db.collection('letters')); }",
      "  async closed() { return listOpen(db.collection('archive')); }",
      '}',
    ];
    const text = lines.join('\n');
    const index = new ScriptQueryIndex('script', 'ts', {});
    index.update(text);
    assert.deepEqual(described(index.result().queries), ['archive.find', 'letters.find']);
    // A call of the top-level function, edited in a method of the large class: the function's query follows.
    const topEdited = text.replace("listOpen(db.collection('archive'))", "listOpen(db.collection('issues'))");
    index.update(topEdited);
    assert.deepEqual(described(index.result().queries), described(findQueries(topEdited, 'script', 'ts', {}).queries));
    assert.deepEqual(described(index.result().queries), ['issues.find', 'letters.find']);
    // The class made in one of its own methods with another collection: the field's query follows.
    const inClass = topEdited.replace("new Desk(db.collection('letters'))", "new Desk(db.collection('parcels'))");
    index.update(inClass);
    assert.equal(index.lastUpdate.inner, true, 'the edit was read inside the class');
    assert.deepEqual(described(index.result().queries), described(findQueries(inClass, 'script', 'ts', {}).queries));
    assert.deepEqual(described(index.result().queries), ['issues.find', 'parcels.find']);
  });

  it('reads a method a query names its collection by again when an edit inside a large class assigns its variable again', () => {
    const lines = [
      "import { type Db } from 'mongodb';",
      'export class Desk {',
      '  constructor(private readonly db: Db) {}',
      ...Array.from({ length: 120 }, (_, i) => `  note${i}() { return ${i}; }`),
      '  count() { let n = 0; n += 1; return n; }',
      "  name(old: boolean) { let n = 'letters'; if (old) { console.log(n); } return n; }",
      '  unread(old: boolean) { return this.db.collection(this.name(old)).find({ seen: false }).toArray(); }',
      '}',
    ];
    const text = lines.join('\n');
    const index = new ScriptQueryIndex('script', 'ts', {});
    index.update(text);
    assert.deepEqual(described(index.result().queries), ['letters.find']);
    // The variable given another name in a branch: no longer the name it starts with.
    const edited = text.replace('console.log(n);', "n = 'archive';");
    index.update(edited);
    assert.equal(index.lastUpdate.inner, true, 'the edit was read inside the class');
    assert.deepEqual(described(index.result().queries), described(findQueries(edited, 'script', 'ts', {}).queries));
    assert.deepEqual(described(index.result().queries), ['?.find']);
  });

  it('names a field called coll or collection, which alone would be chosen at run time, from the new calls of its class', () => {
    const head = [
      "import { Db, Collection } from 'mongodb';",
      'class Store { constructor(private readonly coll: Collection) {} open() { return this.coll.find({ state: 1 }); } }',
      "export const orders = (db: Db) => new Store(db.collection('orders'));",
    ];
    assert.deepEqual(described(findQueries(head.join('\n'), 'script', 'ts', {}).queries), ['orders.find']);
    // Made with two collections: which one is chosen at run time.
    const two = [...head, "export const carts = (db: Db) => new Store(db.collection('carts'));"];
    assert.deepEqual(described(findQueries(two.join('\n'), 'script', 'ts', {}).queries), ['?.find']);
    // JavaScript: the constructor's untyped parameter assigned to the field.
    const js = [
      "const { MongoClient } = require('mongodb');",
      'class Store { constructor(coll) { this.coll = coll; } open() { return this.coll.find({ state: 1 }); } }',
      "const db = new MongoClient('mongodb://localhost').db();",
      "module.exports = { orders: new Store(db.collection('orders')) };",
    ];
    assert.deepEqual(described(findQueries(js.join('\n'), 'script', 'js', {}).queries), ['orders.find']);
    const jsTwo = [...js, "module.exports.carts = new Store(db.collection('carts'));"];
    assert.deepEqual(described(findQueries(jsTwo.join('\n'), 'script', 'js', {}).queries), ['?.find']);
  });

  it('names collections taken apart by index from the array a function or a static method returns', () => {
    const text = [
      "import { Db, Collection } from 'mongodb';",
      'async function openStores(db: Db) {',
      "  const notes = db.collection('notes');",
      "  const tags = db.collection('tags');",
      '  return [notes, tags] as const;',
      '}',
      'export class Archive {',
      '  static async stores(db: Db): Promise<[Collection, Collection]> {',
      "    return [db.collection('archived_notes'), db.collection('archived_tags')];",
      '  }',
      '  static async purge(db: Db) {',
      '    const [, oldTags] = await Archive.stores(db);',
      '    await oldTags.deleteMany({ usedBy: 0 });',
      '  }',
      '}',
      'export async function tagged(db: Db, tag: string) {',
      '  const [notes, tags] = await openStores(db);',
      '  await tags.updateOne({ name: tag }, { $inc: { uses: 1 } });',
      '  return notes.find({ tags: tag }).toArray();',
      '}',
    ].join('\n');
    assert.deepEqual(described(findQueries(text, 'script', 'ts', {}).queries), ['archived_tags.deleteMany', 'tags.updateOne', 'notes.find']);
  });

  it('names a field from the new calls of a class made in its own static method, whose name the class reads statically', () => {
    const text = [
      "import { Db, Collection } from 'mongodb';",
      'export class Inbox {',
      '  private constructor(private readonly letters: Collection) {}',
      "  static async open(db: Db) { return [db.collection('letters')]; }",
      '  static async create(db: Db) {',
      '    const [letters] = await Inbox.open(db);',
      '    return new Inbox(letters);',
      '  }',
      '  unread(owner: string) { return this.letters.find({ owner, read: false }).toArray(); }',
      '}',
    ].join('\n');
    assert.deepEqual(described(findQueries(text, 'script', 'ts', {}).queries), ['letters.find']);
    // Handed on as a value, the class may be made anywhere: its field stays chosen by the caller.
    const handed = text.replace("  unread(", "  static factory = Inbox.bind(null);\n  unread(");
    assert.deepEqual(described(findQueries(handed, 'script', 'ts', {}).queries), ['?.find']);
  });

  it("names a static method's parameter from its calls on the class's name, here and in the modules that import the class", () => {
    const read = reader({
      '/ws/src/inbox.ts': [
        "import type { Collection } from 'mongodb';",
        'export class Inbox {',
        '  private constructor(private readonly letters: Collection, private readonly owner: string) {}',
        '  static async open(letters: Collection, owner: string) {',
        '    return new Inbox(letters, owner);',
        '  }',
        '  unread() { return this.letters.find({ owner: this.owner, read: false }).toArray(); }',
        '}',
      ].join('\n'),
      '/ws/src/boot.ts': [
        "import type { Db } from 'mongodb';",
        "import { Inbox } from './inbox';",
        'export async function boot(db: Db, owners: string[]) {',
        "  const letters = db.collection('letters');",
        '  return Promise.all(owners.map((o) => Inbox.open(letters, o)));',
        '}',
      ].join('\n'),
    });
    assert.deepEqual(described(read('/ws/src/inbox.ts')), ['letters.find']);
    assert.deepEqual(described(read('/ws/src/inbox.ts', false)), ['?.find']);
  });

  it("keeps a static method's parameter chosen by the caller when another static method calls it through this", () => {
    const text = [
      "import type { Collection, Db } from 'mongodb';",
      'export class Inbox {',
      '  private constructor(private readonly letters: Collection) {}',
      '  static open(letters: Collection) { return new Inbox(letters); }',
      "  static archive(db: Db) { return this.open(db.collection('archived_letters')); }",
      "  static live(db: Db) { return Inbox.open(db.collection('letters')); }",
      '  unread() { return this.letters.find({ read: false }).toArray(); }',
      '}',
    ].join('\n');
    assert.deepEqual(described(findQueries(text, 'script', 'ts', {}).queries), ['?.find']);
  });

  it('names a collection injected by a token from its one provider in a module of the workspace that imports the token', () => {
    const files = {
      '/ws/src/tokens.ts': "export const LEDGER = 'LEDGER';\nexport const UNUSED = 'UNUSED';",
      '/ws/src/db.module.ts': [
        "import { Db } from 'mongodb';",
        "import { LEDGER } from './tokens';",
        'export const dbModule = {',
        "  providers: [{ provide: LEDGER, useFactory: (db: Db) => db.collection('ledger_entries'), inject: ['DB'] }],",
        '};',
      ].join('\n'),
      '/ws/src/ledger.ts': [
        "import { Inject } from '@nestjs/common';",
        "import { Collection } from 'mongodb';",
        "import { LEDGER } from './tokens';",
        'export class Ledger {',
        '  constructor(@Inject(LEDGER) private readonly entries: Collection) {}',
        '  of(account: string) { return this.entries.find({ account }).sort({ at: -1 }).toArray(); }',
        '}',
      ].join('\n'),
    };
    const read = reader(files);
    assert.deepEqual(described(read('/ws/src/ledger.ts')), ['ledger_entries.find']);
    // A second module providing the token: which one is used is not known here.
    const twice = reader({ ...files, '/ws/src/test.module.ts': "import { LEDGER } from './tokens';\nexport const m = { providers: [{ provide: LEDGER, useValue: {} }] };" });
    assert.deepEqual(described(twice('/ws/src/ledger.ts')), ['?.find']);
  });

  it('reads the names import statements and require declarations take, and the modules they name', () => {
    assert.deepEqual([...importedNames([
      "import { a, b as c } from './x';",
      "import type { T } from './t';",
      "import d, { e } from 'e';",
      "const { f } = require('./f');",
      "const g = require('./g');",
      "import h from '../schemas/user.schema.js';",
      "const i = require(`./lib/`);",
      "const j = require(path.join(dir, 'k'));",
    ].join('\n'))].sort(), ['T', 'a', 'b', 'c', 'd', 'e', 'f', 'from e', 'from f', 'from g', 'from t', 'from user.schema', 'from x', 'g', 'h', 'i', 'j']);
  });
});

describe('finder: a model, a Knex instance, a TypeORM manager or a SQL client named by the callers of the function that takes it', () => {
  const sqlOf = (qs: FoundQuery[]) => qs.map((q) => (q.engine === 'postgres' ? q.sql.replace(/\s+/g, ' ') : `${q.command.collection || '?'}.${q.command.operation}`));

  it('reads a parameter as the Knex instance every caller in the workspace passes, under any name', () => {
    const files = {
      '/ws/db.ts': "import knex from 'knex';\nexport const warehouse = knex({ client: 'pg' });",
      '/ws/jobs.ts': [
        'export function doneJobs(store, since) {',
        "  return store('jobs').where({ state: 'done' }).andWhere('finished_at', '>', since).orderBy('finished_at', 'desc');",
        '}',
      ].join('\n'),
      '/ws/report.ts': "import { warehouse } from './db';\nimport { doneJobs } from './jobs';\nexport const report = () => doneJobs(warehouse, new Date());",
      '/ws/cron.ts': "import { warehouse } from './db';\nimport { doneJobs } from './jobs';\nexport async function sweep() { return doneJobs(warehouse, new Date(0)); }",
    };
    const read = reader(files);
    const qs = read('/ws/jobs.ts');
    assert.equal(qs.length, 1);
    assert.match(sqlOf(qs)[0]!, /FROM jobs WHERE state = 'done' AND finished_at > \$1 ORDER BY finished_at DESC/i);
    assert.match(qs[0]!.warnings.join(' '), /The Knex instance is a parameter, named by the function's callers: taken from the 2 calls of doneJobs in report\.ts, cron\.ts/);
    // Without the workspace's files listed, nothing says what `store` is.
    assert.deepEqual(read('/ws/jobs.ts', true, false), []);
  });

  it('leaves a parameter undecided when one caller passes something that is not the same library', () => {
    const read = reader({
      '/ws/db.ts': "import knex from 'knex';\nexport const warehouse = knex({ client: 'pg' });",
      '/ws/jobs.ts': "export function doneJobs(store) {\n  return store('jobs').where({ state: 'done' });\n}",
      '/ws/a.ts': "import { warehouse } from './db';\nimport { doneJobs } from './jobs';\nexport const a = () => doneJobs(warehouse);",
      '/ws/b.ts': "import { doneJobs } from './jobs';\nexport const b = (cache: Map<string, string>) => doneJobs(cache);",
    });
    assert.deepEqual(read('/ws/jobs.ts'), []);
  });

  it('reads a postgres.js instance given as a parameter as its tag', () => {
    const text = [
      "import postgres from 'postgres';",
      'const main = postgres(process.env.DATABASE_URL!);',
      'async function byEmail(conn, email: string) {',
      '  return conn`select id, name from users where email = ${email}`;',
      '}',
      "export const lookup = (email: string) => byEmail(main, email);",
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.equal(qs.length, 1);
    assert.match(sqlOf(qs)[0]!, /select id, name from users where email = \$1/);
    assert.match(qs[0]!.warnings.join(' '), /The postgres\.js instance is a parameter, named by the function's callers: taken from the call of byEmail in this file/);
  });

  it("reads a TypeORM entity manager given as a parameter with the entity it is asked for", () => {
    const read = reader({
      '/ws/entity/user.ts': "import { Entity, Column, PrimaryColumn } from 'typeorm';\n@Entity('users')\nexport class User { @PrimaryColumn() id: string; @Column() active: boolean; }",
      '/ws/source.ts': "import { DataSource } from 'typeorm';\nexport const source = new DataSource({ type: 'postgres' });",
      '/ws/users.ts': [
        "import { User } from './entity/user';",
        'export function activeUsers(em) {',
        '  return em.find(User, { where: { active: true } });',
        '}',
      ].join('\n'),
      '/ws/job.ts': "import { source } from './source';\nimport { activeUsers } from './users';\nexport const job = () => activeUsers(source.manager);",
    });
    const qs = read('/ws/users.ts');
    assert.equal(qs.length, 1);
    assert.match(sqlOf(qs)[0]!, /WHERE .*active/i);
    assert.match(qs[0]!.warnings.join(' '), /TypeORM entity manager is a parameter, named by the function's callers/);
  });

  it('names the collection of a Mongoose model given as a parameter when every call passes the same model', () => {
    const text = [
      "import mongoose from 'mongoose';",
      "const Order = mongoose.model('Order', new mongoose.Schema({ state: String, createdAt: Date }));",
      "const Invoice = mongoose.model('Invoice', new mongoose.Schema({ state: String }));",
      'function newest(M, state: string) {',
      '  return M.find({ state }).sort({ createdAt: -1 }).limit(10);',
      '}',
      'function purge(M) {',
      '  return M.deleteMany({ state: "void" });',
      '}',
      "export const open = () => newest(Order, 'open');",
      "export const shipped = () => newest(Order, 'shipped');",
      'export const purgeAll = () => [purge(Order), purge(Invoice)];',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(described(qs), ['orders.find']);
    assert.match(mongo(qs)[0]!.warnings.join(' '), /The collection is orders, named by the function's callers: taken from the 2 calls of newest in this file/);
  });
  it('reads a TypeORM repository, a Knex transaction and a node-postgres pool given as parameters as their callers pass them', () => {
    const text = [
      "import { DataSource } from 'typeorm';",
      "import knex from 'knex';",
      "import { Pool } from 'pg';",
      "import { User } from './user';",
      "const source = new DataSource({ type: 'postgres' });",
      "const db = knex({ client: 'pg' });",
      'const pool = new Pool();',
      'function active(r) { return r.find({ where: { active: true } }); }',
      'export const a = () => active(source.getRepository(User));',
      "function done(w) { return w.from('jobs').where({ state: 'done' }); }",
      'export const b = () => db.transaction(async (t) => done(t));',
      "function byId(c, id) { return c.query('SELECT * FROM accounts WHERE id = $1', [id]); }",
      'export const c = (id: string) => byId(pool, id);',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(sqlOf(qs), ['SELECT * FROM "user" WHERE active = TRUE', "SELECT * FROM jobs WHERE state = 'done'", 'SELECT * FROM accounts WHERE id = $1']);
    assert.match(qs[0]!.warnings.join(' '), /The TypeORM repository is a parameter, named by the function's callers: taken from the call of active in this file/);
    assert.match(qs[1]!.warnings.join(' '), /The Knex instance is a parameter, named by the function's callers/);
    assert.match(qs[2]!.warnings.join(' '), /The node-postgres client is a parameter, named by the function's callers/);
  });
});
