// The finder following values across the workspace's modules (workspace.ts, origin.ts): a helper that
// returns a collection, a Knex instance held by an imported object, types another module declares or
// passes on, a postgres.js field; each case also read without the workspace, where the call is not found.

import assert from 'node:assert/strict';
import { findQueries, type FoundQuery, type FoundSqlQuery, type WorkspaceModules } from '../../src/core/query/find/index';
import { resolveSpecifier } from '../../src/core/query/find/workspace';

/** A workspace held in memory: the files by absolute path, resolved by the core's own rules. */
function workspace(files: Record<string, string>): WorkspaceModules {
  return {
    resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files, packages: new Map([['@app/database', { dir: '/ws/packages/database', entry: '/ws/packages/database/lib/index' }]]) }, from, spec),
    read: (f) => files[f],
  };
}

const FILES: Record<string, string> = {
  '/ws/packages/database/lib/index.ts': [
    "import knex from 'knex';",
    "export type { Knex } from 'knex';",
    'class KnexDatabase {',
    '  knex: ReturnType<typeof knex>;',
    "  readOnly = knex({ client: 'pg' });",
    "  constructor() { this.knex = knex({ client: 'pg' }); }",
    '}',
    'export default new KnexDatabase();',
  ].join('\n'),
  '/ws/src/util/mongo.util.ts': [
    "import mongoose from 'mongoose';",
    'export function getCollection<T>(name: string) {',
    '  return mongoose.connection.db.collection<T>(name);',
    '}',
    "export const products = () => mongoose.connection.db.collection('products');",
  ].join('\n'),
  '/ws/src/util/named.ts': [
    "import { MongoClient } from 'mongodb';",
    "const cfg = { coll: 'audit_archive' };",
    "const db = new MongoClient('mongodb://localhost').db();",
    'export const openNamed = (name: string) => db.collection(name);',
    'export const archived = () => openNamed(cfg.coll);',
  ].join('\n'),
  '/ws/src/db/pg.ts': ["import postgres from 'postgres';", 'export type PostgresDB = postgres.Sql<{ bigint: bigint }>;'].join('\n'),
  '/ws/src/db/index.ts': "export * from './pg';\nexport { getCollection as collectionOf } from '../util/mongo.util';",
  '/ws/src/mongo/client.ts': [
    "import { MongoClient } from 'mongodb';",
    'type G = typeof global & { mongoClient: MongoClient };',
    'export const mongoClient = ((global as G).mongoClient ??= new MongoClient(process.env.MONGODB_URI!));',
    'export const db = mongoClient.db();',
  ].join('\n'),
  '/ws/src/mongo/authors.ts': [
    "import { db } from './client';",
    "export const Authors = db.collection<{ email: string }>('Authors');",
    "const SlackMsgs = db.collection('SlackMsgs');",
    'export { SlackMsgs as Messages };',
  ].join('\n'),
  '/ws/src/mongo/collections.ts': [
    "import { mongoClient } from './client';",
    "const db = mongoClient.db('games');",
    "export const collections = { users: db.collection('Users'), clans: db.collection('Clans') };",
    "export default { products: db.collection('Products') };",
  ].join('\n'),
  '/ws/src/services/database.service.ts': [
    "import * as mongoDB from 'mongodb';",
    'export const collections: { games?: mongoDB.Collection; players?: mongoDB.Collection; users?: mongoDB.Collection } = {};',
    'export async function connectToDatabase() {',
    '  const client = new mongoDB.MongoClient(process.env.DB_CONN_STRING!);',
    '  const db = client.db(process.env.DB_NAME);',
    "  const gamesCollection: mongoDB.Collection = db.collection('Games');",
    '  collections.games = gamesCollection;',
    "  if (process.env.PLAYERS !== 'off') { const players = db.collection('Players'); collections.players = players; }",
    '  collections.users = db.collection(process.env.USERS_COLLECTION_NAME!);',
    '}',
  ].join('\n'),
  '/ws/config/mongoCollections.ts': [
    "import { dbConnection } from './mongoConnection';",
    'const getCollectionFn = (collection: string) => {',
    '  let _col = undefined;',
    '  return async () => {',
    '    if (!_col) {',
    '      const db = await dbConnection();',
    '      _col = await db.collection(collection);',
    '    }',
    '    return _col;',
    '  };',
    '};',
    "export const users = getCollectionFn('users');",
    "export const posts = getCollectionFn('blog_posts');",
  ].join('\n'),
  '/ws/config/mongoConnection.ts': [
    "import { MongoClient } from 'mongodb';",
    'let _db;',
    "export const dbConnection = async () => { if (!_db) { _db = (await MongoClient.connect('mongodb://localhost')).db('blog'); } return _db; };",
  ].join('\n'),
  '/ws/src/store/collection.ts': [
    'export class StoredCollection {',
    '  public name: string;',
    '  constructor(private store: Store, meta: { name: string; clearable: boolean }) { this.name = meta.name; }',
    '}',
    "export class GuildsCollection extends StoredCollection {",
    '  constructor(store: Store, meta: typeof guildsMeta) { super(store, meta); this.name = meta.name; }',
    '}',
    "export const guildsMeta = { name: 'Guilds', clearable: true, classConstructor: GuildsCollection } as const;",
    "export const votesMeta = { name: 'Votes', clearable: false } as const;",
  ].join('\n'),
  '/ws/src/store/index.ts': [
    "import { MongoClient } from 'mongodb';",
    "import { StoredCollection, guildsMeta, votesMeta } from './collection';",
    'export function createCollections(store: Store) {',
    '  return { guilds: new guildsMeta.classConstructor(store, guildsMeta), votes: new StoredCollection(store, votesMeta) } as const;',
    '}',
    'class StoreImpl {',
    '  public collections;',
    '  private client = new MongoClient(process.env.URL!);',
    '  constructor() { this.collections = createCollections(this); }',
    '  getConnection() { return this.client.db(); }',
    '}',
    'export const store = new StoreImpl();',
    'export type Store = typeof store;',
  ].join('\n'),
  '/ws/src/shared/descriptors/invoices.model.ts': [
    "const collectionName = 'invoices';",
    'const indexes = [[{ customer: 1 }, {}]];',
    'export default { indexes, collectionName };',
  ].join('\n'),
  '/ws/src/data/service.ts': [
    "import { Db } from 'mongodb';",
    'class Data { db!: Db; collection(name: string) { return this.db.collection(name); } }',
    'export default new Data();',
  ].join('\n'),
  '/ws/src/data/receipts.ts': [
    "import data from './service';",
    "const archive = data.collection('receipts.archive');",
    'export default class Receipts {',
    "  static coll = data.collection('receipts');",
    '  static collArchive = archive;',
    '}',
  ].join('\n'),
  '/ws/src/data/refunds.ts': [
    "import data from './service';",
    "export const coll = data.collection('refunds');",
    "export const collLog = data.collection('refunds.log');",
  ].join('\n'),
  '/ws/src/data/ledger.ts': [
    "import data from './service';",
    "export class Ledger { static coll = data.collection('ledger'); }",
    "export function useArchive() { Ledger.coll = data.collection('ledger.archive'); }",
  ].join('\n'),
  '/ws/src/data/index.ts': "export * as Refunds from './refunds';\nexport { default as Receipts } from './receipts';",
  '/ws/src/shared/names.ts': "export const LEDGER = 'ledger_entries';\nexport const names = { AUDIT: 'audit_trail' };",
  '/ws/src/shared/tables.ts': [
    'export const enum Tables {',
    "  SHIPMENTS = 'shipments',",
    '  PARCELS = `parcels`,',
    "  LEGACY = 'shipments',",
    '  COUNT = 3,',
    '  ALIAS = SHIPMENTS,',
    '}',
    'export enum Plain { LABELS = "labels" }',
  ].join('\n'),
  '/ws/src/shared/index.ts': "export * from './tables';",
  '/ws/src/common/mongo.ts': [
    "import { MongoClient } from 'mongodb';",
    'let client: MongoClient | null = null;',
    "const ready = (c: MongoClient | null): MongoClient => { if (!c) throw new Error('not connected'); return c; };",
    'export const getDbCollection = <T>(name) => ready(client).db().collection<T>(name);',
  ].join('\n'),
  '/ws/src/common/collections.ts': [
    "import invoicesDescriptor from '../shared/descriptors/invoices.model';",
    "import { LEDGER } from '../shared/names';",
    "import { getDbCollection } from './mongo';",
    'export const invoicesDb = () => getDbCollection<Invoice>(invoicesDescriptor.collectionName);',
    'export const ledgerDb = () => getDbCollection(LEDGER);',
  ].join('\n'),
};

function found(text: string, file = '/ws/src/models/model.ts', withWorkspace = true): FoundQuery[] {
  return findQueries(text, 'script', 'ts', withWorkspace ? { file, modules: workspace(FILES) } : {}).queries;
}

const described = (q: FoundQuery) => (q.engine === 'mongodb' ? `${q.command.collection}.${q.command.operation}` : q.sql);

describe('finder: values followed across the workspace', () => {
  it('reads a collection an imported helper returns, named by a constant of this file, at the call', () => {
    const text = [
      "import { getCollection } from '../util/mongo.util';",
      "const COLLECTION = 'featurecoderefs';",
      'export async function refs(organization: string) {',
      '  return getCollection(COLLECTION).find({ organization }).sort({ createdAt: -1 }).toArray();',
      '}',
    ].join('\n');
    const [q] = found(text);
    assert.equal(q && described(q), 'featurecoderefs.find');
    assert.deepEqual(found(text, undefined, false), []);
  });

  it("never takes a variable a called function assigns again for its first value, in another module or this file", () => {
    const pickModule = [
      "import { Db } from 'mongodb';",
      'export function ordersOf(db: Db, archived: boolean) {',
      "  let name = 'orders';",
      "  if (archived) name = 'orders_archive';",
      '  return db.collection(name);',
      '}',
      "export function invoicesOf(db: Db) { let name = 'invoices'; return db.collection(name); }",
    ].join('\n');
    const calls = [
      'export const open = (db: Db, archived: boolean) => ordersOf(db, archived).find({ open: true }).toArray();',
      'export const paid = (db: Db) => invoicesOf(db).find({ paid: true }).toArray();',
    ];
    const text = ["import { Db } from 'mongodb';", "import { ordersOf, invoicesOf } from '../util/pick';", ...calls].join('\n');
    const files = { ...FILES, '/ws/src/util/pick.ts': pickModule };
    const other = findQueries(text, 'script', 'ts', { file: '/ws/src/models/model.ts', modules: workspace(files) }).queries;
    assert.deepEqual(other.map(described), ['.find', 'invoices.find']);
    const here = findQueries([pickModule, ...calls].join('\n'), 'script', 'ts', {}).queries;
    assert.deepEqual(here.map(described), ['.find', 'invoices.find']);
  });

  it('puts a collection named in the other module at the call of this file', () => {
    const text = "import { products } from '../util/mongo.util';\nexport const cheap = () => products().find({ price: { $lt: 5 } });";
    const [q] = found(text);
    assert.ok(q && q.engine === 'mongodb');
    assert.equal(q.command.collection, 'products');
    const at = q.command.ranges?.collection;
    assert.ok(at && at.start < text.length, 'the range is in this file');
    assert.equal(text.slice(at.start, at.end), 'products');
  });

  it('reads a collection another module exports as a constant, imported or required, at the call', () => {
    const text = [
      "import { Authors, Messages } from '../mongo/authors';",
      "const { Authors: Writers } = require('../mongo/authors');",
      'export async function run(email: string) {',
      '  await Authors.findOne({ email });',
      "  await Messages.updateOne({ email }, { $set: { status: 'sent' } });",
      '  return Writers.countDocuments({ email });',
      '}',
    ].join('\n');
    const qs = found(text);
    assert.deepEqual(qs.map(described), ['Authors.findOne', 'SlackMsgs.updateOne', 'Authors.countDocuments']);
    const at = qs[0]!.engine === 'mongodb' ? qs[0]!.command.ranges?.collection : undefined;
    assert.ok(at && text.slice(at.start, at.end) === 'Authors', 'the range is at the name in this file');
    // Alone, the file names collections only after what it imports (`authors`, `messages`), never SlackMsgs.
    assert.ok(!found(text, undefined, false).map(described).some((d) => /^(Authors|SlackMsgs)\./.test(d)));
  });

  it('reads collections kept as the properties of an object another module exports, by the names it gives them', () => {
    const text = [
      "import { collections } from '../mongo/collections';",
      "import stores from '../mongo/collections';",
      'export async function clan(id: string) {',
      '  await collections.users.findOne({ clanId: id });',
      '  await stores.products.deleteOne({ sku: id });',
      '  return collections.clans.find({ id }).toArray();',
      '}',
    ].join('\n');
    assert.deepEqual(found(text).map(described), ['Users.findOne', 'Products.deleteOne', 'Clans.find']);
    // Alone, the holder's property names are taken for the collections' names.
    assert.deepEqual(found(text, undefined, false).map(described), ['users.findOne', 'clans.find']);
  });

  it('reads collections another module assigns to the properties of an object it exports, in the function that connects', () => {
    const text = [
      "import { collections } from '../services/database.service';",
      'export async function list(id: string) {',
      '  await collections.games?.findOne({ id });',
      '  await collections.users?.updateOne({ id }, { $set: { seen: true } });',
      '  return collections.players?.find({ id }).toArray();',
      '}',
    ].join('\n');
    const qs = found(text);
    assert.deepEqual(qs.map(described), ['Games.findOne', 'USERS.updateOne', 'Players.find']);
    // The name set at run time is taken from the name that holds it, and the hover says so.
    assert.ok(qs[1]!.warnings.some((w) => w.includes('process.env.USERS_COLLECTION_NAME')));
    assert.deepEqual(found(text, undefined, false).map(described), ['games.findOne', 'users.updateOne', 'players.find']);
  });

  it('reads a collection a function made by another module opens and keeps, called with no arguments', () => {
    const text = [
      "import { users, posts } from '../../config/mongoCollections';",
      'export async function get(id: string) {',
      '  const userCollection = await users();',
      '  await userCollection.findOne({ _id: id });',
      '  const postCol = await posts();',
      '  return postCol.find({ author: id }).toArray();',
      '}',
    ].join('\n');
    const qs = found(text, '/ws/src/data/users.ts');
    assert.deepEqual(qs.map(described), ['users.findOne', 'blog_posts.find']);
    assert.deepEqual(qs.map((q) => q.warnings.length), [0, 0]);
    // Alone, the first is taken from the variable's name (and said so), the second not found.
    assert.deepEqual(found(text, '/ws/src/data/users.ts', false).map(described), ['user.findOne']);
  });

  it("reads a collection named by a field of an instance its class's constructor sets from the arguments of new", () => {
    const text = [
      "import { Store } from '../store';",
      'export class Guilds {',
      '  private store: Store;',
      '  constructor(store: Store) { this.store = store; }',
      '  one(id: string) {',
      '    const db = this.store.getConnection();',
      '    return db.collection(this.store.collections.guilds.name).findOne({ _id: id });',
      '  }',
      '  votes(week: string) { return this.store.getConnection().collection(this.store.collections.votes.name).find({ week }).toArray(); }',
      '  any(name: string) { return this.store.getConnection().collection(name).find({}).toArray(); }',
      '}',
    ].join('\n');
    assert.deepEqual(found(text).map(described), ['Guilds.findOne', 'Votes.find', '.find']);
    assert.deepEqual(found(text, undefined, false).map(described), ['.findOne', '.find', '.find']);
  });

  it("reads a collection named by a getter of another field's instance, over what its constructor is given", () => {
    const text = [
      "import { MongoClient, Db } from 'mongodb';",
      'class Names {',
      '  constructor(private readonly options: { collection: string; prefix?: string }) {}',
      '  get collectionName() { return this.options.collection; }',
      '}',
      'class Feed {',
      '  private names = new Names({ collection: "posts" });',
      '  constructor(private readonly db: Db) {}',
      '  latest() { return this.db.collection(this.names.collectionName).find({ published: true }).sort({ at: -1 }).toArray(); }',
      '}',
    ].join('\n');
    assert.deepEqual(found(text).map(described), ['posts.find']);
  });

  it("reads a collection named by a property of an object another module exports, or a namespace import's constant", () => {
    const text = [
      "import invoices from '../shared/descriptors/invoices.model';",
      "import * as shared from '../shared/names';",
      "import { MongoClient } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'export async function run(customer: string) {',
      '  await db.collection(invoices.collectionName).findOne({ customer });',
      '  return db.collection(shared.LEDGER).countDocuments({ customer });',
      '}',
    ].join('\n');
    assert.deepEqual(found(text).map(described), ['invoices.findOne', 'ledger_entries.countDocuments']);
    // Alone, the file does not show what the names hold.
    assert.deepEqual(found(text, undefined, false).map(described), ['.findOne', '.countDocuments']);
  });

  it("reads a collection named by a string member of an enum another module exports, and leaves other members unnamed", () => {
    const text = [
      "import { Tables, Plain } from '../shared';",
      "import { MongoClient } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'export async function run(owner: string) {',
      '  await db.collection(Tables.SHIPMENTS).findOne({ owner });',
      '  await db.collection<{ owner: string }>(Tables.PARCELS).find({ owner }).toArray();',
      '  await db.collection(Plain.LABELS).deleteMany({ owner });',
      '  await db.collection(Tables.COUNT).findOne({ owner });',
      '  await db.collection(Tables.ALIAS).findOne({ owner });',
      '  await db.collection(Tables.MISSING).findOne({ owner });',
      '}',
    ].join('\n');
    assert.deepEqual(found(text).map(described), ['shipments.findOne', 'parcels.find', 'labels.deleteMany', '.findOne', '.findOne', '.findOne']);
    assert.deepEqual(found(text, undefined, false).map(described), ['.findOne', '.find', '.deleteMany', '.findOne', '.findOne', '.findOne']);
  });

  it("reads a collection named by an enum's member through a namespace import, also through a re-export, and no other property of it", () => {
    const text = [
      "import * as tables from '../shared/tables';",
      "import * as shared from '../shared';",
      "import { MongoClient } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'export async function run(owner: string) {',
      '  await db.collection(tables.Tables.SHIPMENTS).findOne({ owner });',
      '  await db.collection(shared.Tables.PARCELS).find({ owner }).toArray();',
      '  await db.collection(tables.Tables.COUNT).findOne({ owner });',
      '  await db.collection(tables.Missing.SHIPMENTS).findOne({ owner });',
      '}',
    ].join('\n');
    assert.deepEqual(found(text).map(described), ['shipments.findOne', 'parcels.find', '.findOne', '.findOne']);
    assert.deepEqual(found(text, undefined, false).map(described), ['.findOne', '.find', '.findOne', '.findOne']);
  });

  it("reads a $lookup's other collection named by an enum's member another module exports", () => {
    const text = [
      "import { Tables } from '../shared/tables';",
      "import { MongoClient } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'export const withParcels = (owner: string) => db.collection(Tables.SHIPMENTS).aggregate([',
      "  { $match: { owner } }, { $lookup: { from: Tables.PARCELS, localField: '_id', foreignField: 'shipment', as: 'parcels' } },",
      ']);',
    ].join('\n');
    const [q] = found(text);
    assert.deepEqual(q?.engine === 'mongodb' ? q.command.pipeline?.[1] : undefined, { $lookup: { from: 'parcels', localField: '_id', foreignField: 'shipment', as: 'parcels' } });
  });

  it('reads a collection named by a string member of an enum the file declares, never a parameter of the same name', () => {
    const text = [
      "import { MongoClient } from 'mongodb';",
      "enum Coll { ORDERS = 'orders', STOCK = 'stock' }",
      'const db = new MongoClient(process.env.URL!).db();',
      'export async function run(sku: string) {',
      '  await db.collection(Coll.ORDERS).find({ sku }).toArray();',
      '  const orders = db.collection(Coll.STOCK);',
      '  await orders.updateOne({ sku }, { $inc: { n: 1 } });',
      '}',
      'export async function other(Coll: { ORDERS: string }, sku: string) {',
      '  await db.collection(Coll.ORDERS).findOne({ sku });',
      '}',
    ].join('\n');
    assert.deepEqual(found(text, undefined, false).map(described), ['orders.find', 'stock.updateOne', '.findOne']);
  });

  it("reads a collection a class keeps in a static property, and one a namespace import's module exports, by the class's or the module's name", () => {
    const text = [
      "import Receipts from '../data/receipts';",
      "import * as refunds from '../data/refunds';",
      'export async function run(shop: string) {',
      '  await Receipts.coll.find({ shop }).toArray();',
      '  await Receipts.collArchive.deleteMany({ shop });',
      '  await refunds.coll.findOne({ shop });',
      '  return refunds.collLog.countDocuments({ shop });',
      '}',
    ].join('\n');
    const qs = found(text);
    assert.deepEqual(qs.map(described), ['receipts.find', 'receipts.archive.deleteMany', 'refunds.findOne', 'refunds.log.countDocuments']);
    const at = qs[0]!.engine === 'mongodb' ? qs[0]!.command.ranges?.collection : undefined;
    assert.ok(at && text.slice(at.start, at.end) === 'Receipts.coll', 'the range is at the name in this file');
    // A static property its class's module assigns again holds what the code chose last, not its initialiser.
    const reassigned = "import { Ledger } from '../data/ledger';\nexport const recent = (shop: string) => Ledger.coll.find({ shop }).toArray();";
    assert.deepEqual(found(reassigned).map(described), ['.find']);
    // Alone, the file does not show what the class or the module holds: nothing is named.
    assert.ok(found(text, undefined, false).every((q) => q.engine === 'mongodb' && q.command.collection === ''));
    // An instance has no static property: `new Receipts().coll` is not the class's `static coll`.
    const instance = "import Receipts from '../data/receipts';\nexport const mine = (shop: string) => new Receipts().coll.find({ shop }).toArray();";
    assert.deepEqual(found(instance).map(described), ['.find']);
  });

  it('reads a Mongoose model a namespace import of a barrel module names, the model module exporting it by default', () => {
    const files: Record<string, string> = {
      ...FILES,
      '/ws/scripts/models/badge.model.ts': ["import mongoose from 'mongoose';", "const Badge = mongoose.model('Badge', new mongoose.Schema({ name: String }));", 'export default Badge;'].join('\n'),
      '/ws/scripts/models/helpers.ts': 'export const label = (name: string) => name.trim();',
      '/ws/scripts/models/index.ts': ["export { default as badge } from './badge.model';", "export * as helpers from './helpers';"].join('\n'),
    };
    const text = [
      "import * as models from './models';",
      'export async function copy() {',
      '  const all = await models.badge.find();',
      "  await models.helpers.find({ name: 'x' });",
      "  return models.badge.findOne({ name: 'x' });",
      '}',
    ].join('\n');
    const read = (modules?: WorkspaceModules) => findQueries(text, 'script', 'ts', modules ? { file: '/ws/scripts/copy.ts', modules } : {}).queries;
    assert.deepEqual(read(workspace(files)).map(described), ['badges.find', 'badges.findOne']);
    // Alone, the file does not show what the module exports: no model is read.
    assert.deepEqual(read().map(described), []);
  });

  it("reads a module's namespace another module exports again (`export * as`), never as a Mongoose model", () => {
    const text = [
      "import { Receipts, Refunds } from '../data';",
      'export async function run(shop: string) {',
      '  await Refunds.collLog.find({ shop }).toArray();',
      "  await Refunds.deleteOne('eu', shop);",
      '  return Receipts.coll.countDocuments({ shop });',
      '}',
    ].join('\n');
    assert.deepEqual(found(text).map(described), ['refunds.log.find', 'receipts.countDocuments']);
  });

  it("reads a collection of a model the application keeps in a global registry, by the type the module declaring the global gives it", () => {
    const files: Record<string, string> = {
      '/ws/src/types.ts': [
        'export interface Models {',
        "  ticket: typeof import('./model/ticket').default;",
        "  audit: Omit<typeof import('./model/audit'), 'log'>;",
        '}',
        'export interface DeskGlobal { version: string; models: Models }',
        'declare global {',
        '  var Desk: DeskGlobal;',
        '}',
      ].join('\n'),
      '/ws/src/db.ts': "import { MongoClient } from 'mongodb';\nexport const db = new MongoClient(process.env.URL!).db();",
      '/ws/src/model/ticket.ts': [
        "import { db } from '../db';",
        'class TicketModel {',
        "  static coll = db.collection('ticket');",
        '}',
        'global.Desk.models.ticket = TicketModel;',
        'export default TicketModel;',
      ].join('\n'),
      '/ws/src/model/audit.ts': [
        "import { db } from '../db';",
        "export const coll = db.collection('audit');",
        'export function log() {}',
      ].join('\n'),
      '/ws/src/service/stats.ts': [
        'export async function stats() {',
        '  const { ticket, audit } = global.Desk.models;',
        '  const open = await ticket.coll.countDocuments({ state: 1 });',
        "  const late = await Desk.models.ticket.coll.countDocuments({ state: 2 });",
        "  return [open, late, await audit.coll.countDocuments({ kind: 'login' })];",
        '}',
      ].join('\n'),
    };
    const listed: WorkspaceModules = { ...workspace(files), files: () => Object.keys(files) };
    const read = (modules: WorkspaceModules) => findQueries(files['/ws/src/service/stats.ts']!, 'script', 'ts', { file: '/ws/src/service/stats.ts', modules }).queries.map(described);
    assert.deepEqual(read(listed), ['ticket.countDocuments', 'ticket.countDocuments', 'audit.countDocuments']);
    // Two modules that declare the same global: which one holds is not known, so nothing is named.
    const twice: Record<string, string> = { ...files, '/ws/src/other.ts': 'declare global {\n  var Desk: { models: { ticket: { coll: any } } };\n}\nexport {};' };
    const both: WorkspaceModules = { ...workspace(twice), files: () => Object.keys(twice) };
    assert.deepEqual(findQueries(twice['/ws/src/service/stats.ts']!, 'script', 'ts', { file: '/ws/src/service/stats.ts', modules: both }).queries.map(described), ['.countDocuments', '.countDocuments', '.countDocuments']);
  });

  it('reads a static property of a class of the same file through its name, and never a parameter of that name', () => {
    const text = [
      "import { MongoClient } from 'mongodb';",
      'const db = new MongoClient(process.env.URL!).db();',
      'class Sessions {',
      "  static coll = db.collection('sessions');",
      '  static byUser(uid: string) { return Sessions.coll.find({ uid }).toArray(); }',
      '}',
      'export const drop = (Sessions: { coll: any }, uid: string) => Sessions.coll.deleteMany({ uid });',
      'export const all = (uid: string) => Sessions.coll.countDocuments({ uid });',
    ].join('\n');
    assert.deepEqual(found(text).map(described), ['sessions.find', '.deleteMany', 'sessions.countDocuments']);
  });

  it("gives a helper of another module the string this file's imports name", () => {
    const text = [
      "import { getDbCollection } from '../common/mongo';",
      "import { LEDGER } from '../shared/names';",
      "import invoices from '../shared/descriptors/invoices.model';",
      'export async function run(customer: string) {',
      '  await getDbCollection(LEDGER).find({ customer }).toArray();',
      '  return getDbCollection(invoices.collectionName).deleteMany({ customer });',
      '}',
    ].join('\n');
    const qs = found(text);
    assert.deepEqual(qs.map(described), ['ledger_entries.find', 'invoices.deleteMany']);
    const at = qs[0]!.engine === 'mongodb' ? qs[0]!.command.ranges?.collection : undefined;
    assert.ok(at && text.slice(at.start, at.end) === 'getDbCollection', 'the range is at the call in this file');
  });

  it("reads a collection two modules away: a module's functions that hand a helper an imported descriptor's name", () => {
    const text = [
      "import { invoicesDb, ledgerDb } from '../common/collections';",
      'export async function run(customer: string) {',
      '  await invoicesDb().updateOne({ customer }, { $set: { paid: true } });',
      '  return ledgerDb().aggregate([{ $match: { customer } }]).toArray();',
      '}',
    ].join('\n');
    const qs = found(text);
    assert.deepEqual(qs.map(described), ['invoices.updateOne', 'ledger_entries.aggregate']);
    const at = qs[0]!.engine === 'mongodb' ? qs[0]!.command.ranges?.collection : undefined;
    assert.ok(at && at.start < text.length, 'the range is in this file');
  });

  it("never reads an argument another module cannot see in that module's names: a caller's own object of the same name", () => {
    const text = [
      "import { openNamed } from '../util/named';",
      'export const recent = (cfg: { coll: string }) => openNamed(cfg.coll).find({ at: { $gt: 1 } }).toArray();',
    ].join('\n');
    const [q] = found(text);
    assert.ok(q && q.engine === 'mongodb', 'the query is found');
    assert.notEqual(q.command.collection, 'audit_archive', "the helper's own cfg.coll was taken for the caller's");
  });

  it('follows a re-export under another name and a star export', () => {
    const text = "import { collectionOf } from '../db';\nexport const one = (id: string) => collectionOf('jobs').findOne({ id });";
    assert.deepEqual(found(text).map(described), ['jobs.findOne']);
  });

  it('reads Knex held by a workspace package default export, and transactions typed by the type it passes on', () => {
    const text = [
      "import db from '@app/database';",
      "import type { Knex } from '@app/database';",
      "export const user = (id: number) => db.knex<DBUser>('users').where({ id }).first();",
      "export const env = (id: number) => db.readOnly.select('id').from('environments').where({ id });",
      "export const lock = (trx: Knex.Transaction, id: number) => trx<DBKey>('customer_keys').where({ id });",
      "export const clear = (trx: Knex, id: number) => trx.update({ schema: null }).from('sync_configs').where({ id });",
    ].join('\n');
    assert.deepEqual(found(text).map(described), [
      'SELECT * FROM users WHERE id = $1 LIMIT 1',
      'SELECT id FROM environments WHERE id = $1',
      'SELECT * FROM customer_keys WHERE id = $1',
      'UPDATE sync_configs SET schema = NULL WHERE id = $1',
    ]);
    // Alone, the file shows only what a name says (`trx` called for a table).
    assert.deepEqual(found(text, undefined, false).map(described), ['SELECT * FROM customer_keys WHERE id = $1']);
  });

  it('reads postgres.js tags on names and private fields typed by an alias another module declares', () => {
    const text = [
      "import type { PostgresDB } from '../db';",
      'export class CVRStore {',
      '  readonly #db: PostgresDB;',
      '  constructor(db: PostgresDB) { this.#db = db; }',
      '  load(id: string) { return this.#db`SELECT "clientGroupID" FROM cvr.instances WHERE "clientGroupID" = ${id}`; }',
      '}',
      'export const ttl = (cvrDB: PostgresDB, id: string) => cvrDB`SELECT "ttlClock" FROM cvr.instances WHERE "clientGroupID" = ${id}`;',
    ].join('\n');
    assert.deepEqual(found(text).map(described), [
      'SELECT "clientGroupID" FROM cvr.instances WHERE "clientGroupID" = $1',
      'SELECT "ttlClock" FROM cvr.instances WHERE "clientGroupID" = $1',
    ]);
  });

  it('reads a call as the library its receiver comes from: a pg pool named knex is not Knex', () => {
    const text = [
      "import { Pool } from 'pg';",
      "import Knex from 'knex';",
      'const knex = new Pool();',
      "export const rows = () => knex.select('id').from('orders');",
    ].join('\n');
    assert.deepEqual(found(text).map(described), []);
  });

  it('resolves TypeScript ESM specifiers, folder indexes and paths outside the workspace', () => {
    const files = { '/ws/a/b.ts': '', '/ws/a/c/index.tsx': '' };
    const rules = { exists: (f: string) => f in files };
    assert.equal(resolveSpecifier(rules, '/ws/a/x.ts', './b.js'), '/ws/a/b.ts');
    assert.equal(resolveSpecifier(rules, '/ws/a/x.ts', './c'), '/ws/a/c/index.tsx');
    assert.equal(resolveSpecifier(rules, '/ws/a/x.ts', 'knex'), undefined);
    assert.equal(resolveSpecifier({ ...rules, paths: [{ pattern: '@/*', targets: ['/ws/a/*'] }] }, '/ws/z.ts', '@/b'), '/ws/a/b.ts');
  });
});

describe('finder: methods and models of classes across the workspace', () => {
  const files: Record<string, string> = {
    '/ws/src/models/base.ts': [
      "import mongoose from 'mongoose';",
      'export abstract class BaseModel {',
      '  protected config!: { collectionName: string };',
      '  private _collection: unknown;',
      '  protected _dangerousGetCollection() {',
      '    if (!this._collection) this._collection = mongoose.connection.db.collection(this.config.collectionName);',
      '    return this._collection;',
      '  }',
      '}',
      'export function MakeModelClass(config: { collectionName: string }) {',
      '  abstract class Model extends BaseModel { constructor() { super(); this.config = config; } }',
      '  return Model;',
      '}',
    ].join('\n'),
    '/ws/src/customers/customers.service.ts': [
      "import { InjectModel } from '@nestjs/mongoose';",
      "import { Model } from 'mongoose';",
      "import { Customer } from './schemas/customer.schema';",
      'export class CustomersService {',
      '  constructor(@InjectModel(Customer.name) public CustomerModel: Model<Customer>) {}',
      '}',
    ].join('\n'),
  };
  const modules: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f] };
  const read = (text: string, file: string) => findQueries(text, 'script', 'ts', { file, modules }).queries;

  it('reads a collection a base class method returns, named by the configuration the subclass is built with', () => {
    const text = [
      "import { MakeModelClass } from './base';",
      "const COLLECTION_NAME = 'rampschedules';",
      "const BaseClass = MakeModelClass({ collectionName: COLLECTION_NAME, idPrefix: 'rs_' });",
      'export class RampScheduleModel extends BaseClass {',
      '  pause(org: string, id: string) { return this._dangerousGetCollection().updateOne({ organization: org, id }, { $set: { paused: true } }); }',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/src/models/ramp.ts');
    assert.deepEqual(qs.map(described), ['rampschedules.updateOne']);
  });

  it('reads a Mongoose model another class has injected, on a field typed by that class', () => {
    const text = [
      "import { CustomersService } from '../customers/customers.service';",
      'export class EventsService {',
      '  constructor(private readonly customersService: CustomersService) {}',
      '  find(id: string) { return this.customersService.CustomerModel.findOne({ _id: id, workspaceId: this.ws }).lean(); }',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/src/events/events.service.ts');
    assert.deepEqual(qs.map(described), ['customers.findOne']);
  });
});

describe("finder: SQL handed to the application's own wrapper", () => {
  const files: Record<string, string> = {
    '/ws/src/sqlHelper.ts': [
      "import { Pool } from 'pg';",
      'export class SqlHelper {',
      '  constructor(private client: Pool) {}',
      '  async getRowsBySqlQuery(sql: string, params: unknown[] = []) { return (await this.client.query(sql, params)).rows; }',
      '  async count(table: string) { return this.client.query(`SELECT count(*) FROM ${table}`); }',
      '}',
      'export async function runQuery(pool: Pool, text: string) { return (await pool.query(text)).rows; }',
    ].join('\n'),
    '/ws/src/userSql.js': "const userSql = { byId: 'SELECT * FROM users WHERE id = $1' };\nmodule.exports = userSql;",
  };
  const modules: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f] };
  const text = [
    "import { SqlHelper, runQuery } from './sqlHelper';",
    'export class Explorer {',
    '  constructor(private sql: SqlHelper, private pool: unknown) {}',
    "  tables(schema: string) { return this.sql.getRowsBySqlQuery('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]); }",
    '  user(id: number) { return runQuery(this.pool as never, `SELECT * FROM users WHERE id = ${id}`); }',
    // A method that does not run its argument as SQL: the string is only a name.
    "  size() { return this.sql.count('SELECT'); }",
    // A statement another module holds, handed to the wrapper; a name of another module handed to a method that only names.
    '  byId(id: number) { return this.sql.getRowsBySqlQuery(userSql.byId, [id]); }',
    '  sized() { return this.sql.count(userSql.byId); }',
    '}',
  ].join('\n').replace("import { SqlHelper, runQuery } from './sqlHelper';", "import { SqlHelper, runQuery } from './sqlHelper';\nimport userSql from './userSql';");

  it('reads the SQL a wrapper method or function runs, with the values given beside it', () => {
    const qs = findQueries(text, 'script', 'ts', { file: '/ws/src/explorer.ts', modules }).queries;
    assert.deepEqual(qs.map(described), ['SELECT table_name FROM information_schema.tables WHERE table_schema = $1', 'SELECT * FROM users WHERE id = $1', 'SELECT * FROM users WHERE id = $1']);
    assert.match(qs[2]!.warnings.join(' '), /read from \.\/userSql\.js \(`userSql\.byId`\)/);
  });

  it('finds no wrapper where the workspace does not show the function', () => {
    assert.deepEqual(findQueries(text, 'script', 'ts').queries.map(described), []);
  });

  it("reads the statement an application's query-builder class of another module builds from the calls made on it", () => {
    const files = {
      '/ws/src/select.ts': [
        'export class Select {',
        '  private filters: string[] = [];',
        "  private tail = '';",
        "  private orderWord = ' ORDER BY ';",
        '  private args: unknown[] = [];',
        '  constructor(private readonly head: string) {}',
        '  param(v: unknown): string { this.args.push(v); return `$${this.args.length}`; }',
        '  where(column: string, v: unknown): this { this.filters.push(`${column} = ${this.param(v)}`); return this; }',
        '  anyOf(column: string, vs: unknown[]): this {',
        "    if (!Array.isArray(vs)) throw new Error('a list');",
        '    if (vs.length === 1) return this.where(column, vs[0]);',
        '    this.filters.push(column + " = ANY(" + this.param(vs) + ")");',
        '    return this;',
        '  }',
        '  raw(cond: string): this { this.filters.push(`(${cond})`); return this; }',
        '  orderBy(text: string): this { this.tail += this.orderWord + text; return this; }',
        '  text(): string {',
        '    let out = this.head;',
        "    if (this.filters.length > 0) out += ' WHERE ' + this.filters.join(' AND ');",
        '    return out + this.tail;',
        '  }',
        '  values(): unknown[] { return this.args; }',
        '}',
      ].join('\n'),
      '/ws/src/filters.ts': [
        "import type { Select } from './select';",
        'export function visible(q: Select, columns: { owner?: string; team?: string }, since: string | null, area = "notes") {',
        "  area = area + '.zone';",
        "  q.raw('hidden = false');",
        "  if (area) q.where(area, 'eu');",
        "  if (columns.owner) q.where(columns.owner, 'me');",
        "  if (columns.team) q.raw(columns.team + ' IS NOT NULL');",
        "  if (since) q.raw(since + ' > now()');",
        '}',
        "export function tagged(q: Select, tags: string[]) { for (const t of tags) q.raw('tags @> ' + q.param(t)); }",
        "export function shared(q: Select) { q.raw('shared'); tagged(q, ['a']); }",
      ].join('\n'),
    };
    const text = [
      "import { Pool } from 'pg';",
      "import { Select } from './select';",
      "import { shared, tagged, visible } from './filters';",
      'const pool = new Pool();',
      'export async function list(owner: string, kinds: string[], search?: string) {',
      "  const q = new Select('SELECT id, title FROM notes');",
      "  q.where('owner_id', owner).anyOf('kind', kinds);",
      "  if (search) q.raw('title ILIKE ' + q.param(search));",
      "  visible(q, { owner: 'author_id' }, null, 'notes');",
      '  tagged(q, kinds);',
      '  shared(q);',
      "  q.orderBy('created_at DESC');",
      "  const total = await pool.query('SELECT COUNT(*) FROM (' + q.text() + ') t', q.values());",
      '  return pool.query(q.text(), q.values());',
      '}',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', { file: '/ws/src/notes.ts', modules: workspace({ ...FILES, ...files }) }).queries.filter((q): q is FoundSqlQuery => q.engine === 'postgres');
    assert.deepEqual(qs.map((q) => q.sql), [
      'SELECT COUNT(*) FROM (SELECT id, title FROM notes WHERE owner_id = $1 AND kind = $2 AND (title ILIKE $3) AND (hidden = false) AND $4 = $5 AND author_id = $6 ORDER BY created_at DESC) t',
      'SELECT id, title FROM notes WHERE owner_id = $1 AND kind = $2 AND (title ILIKE $3) AND (hidden = false) AND $4 = $5 AND author_id = $6 ORDER BY created_at DESC',
    ]);
    // What a helper does in a loop is not read, and the hover names it.
    assert.match(qs[1]!.warnings.join(' '), /handed to `tagged\(q, kinds\)`, `shared\(q\)`/);
    assert.doesNotMatch(qs[1]!.warnings.join(' '), /visible/);
    // Never written back: the text is the class's, mapped to the calls of this file that made it.
    assert.ok(qs[1]!.runs.some(([, , l, fl]) => l !== fl));
    assert.ok(qs.every((q) => q.runs.every(([, f, , fl]) => f >= 0 && f + fl <= text.length)));
    // Without the class in the workspace, nothing is known of what q.text() returns.
    const alone = findQueries(text, 'script', 'ts').queries.filter((q): q is FoundSqlQuery => q.engine === 'postgres');
    assert.equal(alone.length, 1);
    assert.doesNotMatch(alone[0]!.sql, /notes/);
  });

  it('reads a statement another module holds, exported by CommonJS or ESM, mapped to the name here and never written back', () => {
    const files: Record<string, string> = {
      '/ws/db/pool.js': "const { Pool } = require('pg');\nconst pool = new Pool({ max: 5 });\nconst db = pool;\nmodule.exports = db;",
      '/ws/sql/invoice.sql.js': [
        'const invoiceSql = {',
        '  byCustomer: `',
        '    SELECT id, total FROM invoices',
        '    WHERE customer_id = $1',
        '  `,',
        "  overdue: 'SELECT id FROM invoices ' + 'WHERE due_on < now() AND paid = false',",
        '};',
        'module.exports = invoiceSql;',
      ].join('\n'),
      '/ws/sql/line.sql.js': [
        "const LINES = 'invoice_lines';",
        'const forInvoice = `SELECT sku, qty FROM ${LINES} WHERE invoice_id = $1`;',
        'const forSkus = `SELECT sku FROM invoice_lines WHERE sku IN (${skuList})`;',
        "module.exports = { forInvoice, forSkus, bySku: 'SELECT invoice_id FROM invoice_lines WHERE sku = $1' };",
      ].join('\n'),
      '/ws/sql/moved.sql.js': "const movedSql = { byId: 'SELECT * FROM moved WHERE id = $1' };\nmovedSql.byId = process.env.OTHER;\nmodule.exports = movedSql;",
      '/ws/sql/refund.ts': "export const byInvoice = 'SELECT id FROM refunds WHERE invoice_id = $1';\nexport default { open: 'SELECT id FROM refunds WHERE closed_at IS NULL' };",
    };
    const text = [
      "const db = require('../db/pool');",
      "const invoiceSql = require('../sql/invoice.sql');",
      "const lineSql = require('../sql/line.sql');",
      "const { bySku } = require('../sql/line.sql');",
      "const movedSql = require('../sql/moved.sql');",
      'exports.list = async (req) => {',
      '  const a = await db.query(invoiceSql.byCustomer, [req.params.id]);',
      '  const sql = invoiceSql.overdue;',
      '  const b = await db.query(sql);',
      '  const c = await db.query(lineSql.forInvoice, [7]);',
      "  const d = await db.query(bySku, ['x-1']);",
      '  const e = await db.query(req.query.paid ? invoiceSql.overdue : lineSql.bySku, [1]);',
      '  const f = await db.query(lineSql.forSkus);',
      '  const g = await db.query(movedSql.byId, [1]);',
      '  return [a, b, c, d, e, f, g];',
      '};',
    ].join('\n');
    const modules = workspace({ ...FILES, ...files });
    const qs = findQueries(text, 'script', 'js', { file: '/ws/routes/invoices.js', modules }).queries.filter((q): q is FoundSqlQuery => q.engine === 'postgres');
    assert.deepEqual(qs.map((q) => q.sql.replace(/\s+/g, ' ').trim()), [
      'SELECT id, total FROM invoices WHERE customer_id = $1',
      'SELECT id FROM invoices WHERE due_on < now() AND paid = false',
      'SELECT sku, qty FROM invoice_lines WHERE invoice_id = $1',
      'SELECT invoice_id FROM invoice_lines WHERE sku = $1',
      'SELECT id FROM invoices WHERE due_on < now() AND paid = false',
      'SELECT invoice_id FROM invoice_lines WHERE sku = $1',
    ]);
    assert.deepEqual(qs[3]!.values, ['x-1']);
    assert.match(qs[0]!.warnings.join(' '), /read from \.\.\/sql\/invoice\.sql\.js \(`invoiceSql\.byCustomer`\); edit it there/);
    assert.match(qs[4]!.warnings.join(' '), /one of 2 statements/);
    // Mapped to the name in this file, with a run of no SQL over it: never written back.
    const at = text.indexOf('invoiceSql.byCustomer');
    assert.deepEqual(qs[0]!.textRange, { start: at, end: at + 'invoiceSql.byCustomer'.length });
    assert.ok(qs.every((q) => q.runs[0]![2] === 0 && q.runs.every(([, f, , fl]) => f >= 0 && f + fl <= text.length)));
    // ESM: a named export, a namespace import's export and a default export's property.
    const esm = [
      "import { Pool } from 'pg';",
      "import { byInvoice } from '../sql/refund';",
      "import * as refundSql from '../sql/refund';",
      "import refunds from '../sql/refund';",
      'const pool = new Pool();',
      'export const a = (id: number) => pool.query(byInvoice, [id]);',
      'export const b = (id: number) => pool.query(refundSql.byInvoice, [id]);',
      'export const c = () => pool.query(refunds.open);',
    ].join('\n');
    assert.deepEqual(findQueries(esm, 'script', 'ts', { file: '/ws/routes/refunds.ts', modules }).queries.map((q) => (q as FoundSqlQuery).sql), [
      'SELECT id FROM refunds WHERE invoice_id = $1',
      'SELECT id FROM refunds WHERE invoice_id = $1',
      'SELECT id FROM refunds WHERE closed_at IS NULL',
    ]);
    // Without the workspace, the text is not known.
    assert.deepEqual(findQueries(text, 'script', 'js').queries, []);
  });

  it('reads the statements a function returns as a property of an object, with the arguments the call gives it', () => {
    const files = {
      '/ws/lib/jsonPatch.ts': [
        'export function patchSettings(opts: { table: string; match: string; keys: unknown[]; path: string; value?: unknown }) {',
        '  const { table, match, keys, path, value } = opts;',
        '  const p = keys.length + 1;',
        '  if (value === undefined) {',
        '    return { text: `UPDATE "${table}" SET settings = settings #- ARRAY[$${p}::text] WHERE ${match}`, values: [...keys, path] };',
        '  }',
        '  return {',
        '    text: `UPDATE "${table}" SET settings = jsonb_set(settings, ARRAY[$${p}::text], $${p + 1}::jsonb) WHERE ${match}`,',
        '    values: [...keys, path, JSON.stringify(value)],',
        '  };',
        '}',
        'export function upsertRow(table: string, row: object) {',
        "  const cols = Object.keys(row).join(', ');",
        '  return { text: `INSERT INTO ${table} (${cols}) VALUES ($1)` };',
        '}',
        "const match = 'archived = false';",
        'export function notesWhere([match]: string[]) {',
        '  return { text: `SELECT id FROM notes WHERE ${match}` };',
        '}',
      ].join('\n'),
    };
    const text = [
      "import { Pool } from 'pg';",
      "import { notesWhere, patchSettings, upsertRow } from '../lib/jsonPatch';",
      'const pool = new Pool();',
      "const SHOPS = 'shop';",
      'export async function setShopSetting(shopId: number, path: string, value: unknown) {',
      "  const { text, values } = patchSettings({ table: SHOPS, match: 'shop_id = $1', keys: [shopId], path, value });",
      '  await pool.query(text, values);',
      '}',
      'export async function setStoreSetting(path: string, value: unknown) {',
      "  const q = patchSettings({ table: 'store', match: 'id = true', keys: [], path, value });",
      '  await pool.query(q.text, q.values);',
      '}',
      'export async function save(row: object) {',
      "  const { text } = upsertRow('shop', row);",
      '  await pool.query(text);',
      '}',
      'export async function notes(where: string) {',
      '  const q = notesWhere([where]);',
      '  await pool.query(q.text);',
      '}',
      'function ownFilter(owner: string) {',
      '  return { sql: `SELECT id FROM invoices WHERE ${owner} = $1`, args: [] };',
      '}',
      'export async function mine(id: number) {',
      "  const { sql } = ownFilter('owner_id');",
      '  return pool.query(sql, [id]);',
      '}',
    ].join('\n');
    const modules = workspace({ ...FILES, ...files });
    const qs = findQueries(text, 'script', 'ts', { file: '/ws/services/settings.ts', modules }).queries.filter((q): q is FoundSqlQuery => q.engine === 'postgres');
    assert.deepEqual(qs.map((q) => q.sql), [
      'UPDATE "shop" SET settings = settings #- ARRAY[$2::text] WHERE shop_id = $1',
      'UPDATE "shop" SET settings = jsonb_set(settings, ARRAY[$2::text], $3::jsonb) WHERE shop_id = $1',
      'UPDATE "store" SET settings = settings #- ARRAY[$1::text] WHERE id = true',
      'UPDATE "store" SET settings = jsonb_set(settings, ARRAY[$1::text], $2::jsonb) WHERE id = true',
      'SELECT id FROM invoices WHERE owner_id = $1',
    ]);
    assert.match(qs[0]!.warnings.join(' '), /what patchSettings\(\) returns as `text` \(in \.\.\/lib\/jsonPatch\.ts\), read with this call's arguments/);
    assert.match(qs[0]!.warnings.join(' '), /one of the 2 statements patchSettings\(\) returns/);
    // Mapped to the name at the call, with a run of no SQL over it: never written back.
    const at = text.indexOf('text, values);');
    assert.deepEqual(qs[0]!.textRange, { start: at, end: at + 'text'.length });
    assert.ok(qs.every((q) => q.runs[0]![2] === 0));
    // Without the workspace, only the function of this file is read.
    assert.deepEqual(findQueries(text, 'script', 'ts').queries.map((q) => (q as FoundSqlQuery).sql), ['SELECT id FROM invoices WHERE owner_id = $1']);
  });

  it("reads a collection wrapped in a class of another module that implements the driver's Collection, named by the calling class", () => {
    const files: Record<string, string> = {
      '/ws/src/db/wrapper.ts': [
        "import { Collection, Document } from 'mongodb';",
        'export abstract class Forwarding<T extends Document> {',
        '  protected inner: Collection<T>;',
        '  constructor(inner: Collection<T>) { this.inner = inner; }',
        '}',
      ].join('\n'),
      '/ws/src/db/logged.ts': [
        "import { Collection, Document, Filter } from 'mongodb';",
        "import { Forwarding } from './wrapper';",
        'export class Logged<T extends Document> extends Forwarding<T> implements Collection<T> {',
        '  constructor(inner: Collection<T>, private log: (m: string) => void) { super(inner); }',
        '  find(filter: Filter<T>) { this.log(JSON.stringify(filter)); return this.inner.find(filter); }',
        '}',
      ].join('\n'),
      '/ws/src/db/source.ts': [
        "import { Db } from 'mongodb';",
        "import { Logged } from './logged';",
        'export abstract class Source {',
        '  protected abstract collectionName: string;',
        '  constructor(private db: Db) {}',
        '  protected getCollection(name = this.collectionName) { return new Logged(this.db.collection(name), console.log); }',
        '}',
      ].join('\n'),
    };
    const text = [
      "import { Source } from '../db/source';",
      'export class Shipments extends Source {',
      "  protected collectionName = 'shipments';",
      "  late(now: Date) { return this.getCollection().find({ due: { $lt: now }, delivered: false }).toArray(); }",
      '}',
    ].join('\n');
    const found = findQueries(text, 'script', 'ts', { file: '/ws/src/shipments/source.ts', modules: workspace(files) }).queries;
    assert.deepEqual(found.map((q) => (q.engine === 'mongodb' ? `${q.command.collection}.${q.command.operation}` : q.sql)), ['shipments.find']);
  });

  it("never reads an array's find(fn) as a collection's", () => {
    const qs = findQueries("export const owner = (collection: { members: { userId: number }[] }, id: number) => collection.members.find((m) => m.userId === id);", 'script', 'ts').queries;
    assert.deepEqual(qs, []);
  });

  it("never reads a module namespace's destroy() as a Sequelize model's", () => {
    const text = [
      "import * as Flags from 'feature-flags-client';",
      "import { User } from './models';",
      'export function stop() { Flags.destroy(); }',
      'export const drop = (id: number) => User.destroy({ where: { id } });',
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts').queries.map(described), ['DELETE FROM "Users" WHERE id = $1']);
  });
});

describe('finder: Prisma writes the issue names', () => {
  it('reads updateManyAndReturn as the UPDATE it sends, and writes through a transaction client', () => {
    const text = [
      "import { PrismaClient } from '@prisma/client';",
      'const prisma = new PrismaClient();',
      'export const touch = (ids: string[]) => prisma.user.updateManyAndReturn({ where: { id: { in: ids } }, data: { seen: true } });',
      'export const move = (id: string) => prisma.$transaction(async (tx) => tx.post.updateMany({ where: { authorId: id }, data: { archived: true } }));',
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts').queries.map(described), [
      'UPDATE "User" SET seen = TRUE WHERE id IN ($1)',
      'UPDATE "Post" SET archived = TRUE WHERE "authorId" = $1',
    ]);
  });
});

describe('finder: Mongoose models a factory returns or a schema static uses', () => {
  it('reads a Mongoose model a factory function of another module returns, looked up or compiled, and its discriminators', () => {
    const files: Record<string, string> = {
      ...FILES,
      '/ws/src/models/ticket.model.ts': [
        "import { Mongoose, Schema } from 'mongoose';",
        "import { Kind } from '../types/kind';",
        "export const TICKET_ID = 'Ticket';",
        "const TicketSchema = new Schema({ owner: String, kind: String }, { discriminatorKey: 'kind' });",
        "const RefundSchema = new Schema({ amount: Number });",
        'const compileTicketModel = (db: Mongoose) => {',
        '  const Ticket = db.model(TICKET_ID, TicketSchema);',
        // Written without a semicolon, the statement ends where the call does.
        '  Ticket.discriminator(Kind.Refund, RefundSchema)',
        '  return db.model(TICKET_ID, TicketSchema);',
        '};',
        'const getTicketModel = (db: Mongoose) => {',
        '  try {',
        '    return db.model(TICKET_ID);',
        '  } catch {',
        '    return compileTicketModel(db);',
        '  }',
        '};',
        'export const getRefundModel = (db: Mongoose) => {',
        '  getTicketModel(db);',
        '  return db.model(Kind.Refund);',
        '};',
        "export const getLabelModel = (db: Mongoose) => db.model('Label', new Schema({ text: String }));",
        'export const pick = (kind: string) => (kind === \'label\' ? getLabelModel(mongoose) : getTicketModel(mongoose));',
        'export default getTicketModel;',
      ].join('\n'),
      '/ws/src/types/kind.ts': "export enum Kind { Refund = 'refund', Credit = 'credit' }",
      '/ws/src/models/audit.model.ts': [
        "import { Mongoose, Schema } from 'mongoose';",
        "const AuditSchema = new Schema({ owner: String });",
        'export const getLoginAuditModel = (db: Mongoose, kind: string) => {',
        "  db.model('Audit', AuditSchema).discriminator(kind, new Schema({ ip: String }));",
        "  return db.model('LoginAudit');",
        '};',
      ].join('\n'),
      '/ws/src/models/note.model.ts': [
        "import { Mongoose, Schema } from 'mongoose';",
        "const NOTE_ID = 'Note';",
        'export const getNoteModel = (db: Mongoose) => {',
        '  try {',
        '    return db.model(NOTE_ID);',
        '  } catch {',
        "    return db.model(NOTE_ID, new Schema({ text: String }), 'note_book');",
        '  }',
        '};',
      ].join('\n'),
    };
    const text = [
      "import mongoose from 'mongoose';",
      "import getTicketModel, { getRefundModel, pick } from '../models/ticket.model';",
      "import { getNoteModel } from '../models/note.model';",
      "import { getLoginAuditModel } from '../models/audit.model';",
      'const TicketModel = getTicketModel(mongoose);',
      'const NoteModel = getNoteModel(mongoose);',
      'const RefundModel = getRefundModel(mongoose);',
      'export async function mine(owner: string, kind: string) {',
      '  await RefundModel.find({ owner });',
      '  const Chosen = pick(kind);',
      '  await Chosen.findOne({ owner });',
      '  await NoteModel.deleteMany({ owner });',
      // A discriminator named at run time may be the model looked up: its collection is not known, and no plural is made up.
      '  const Audits = getLoginAuditModel(mongoose, process.env.AUDIT_KIND!);',
      '  await Audits.find({ owner });',
      '  return TicketModel.countDocuments({ owner });',
      '}',
    ].join('\n');
    const read = (modules?: WorkspaceModules) => findQueries(text, 'script', 'ts', modules ? { file: '/ws/src/services/tickets.ts', modules } : {}).queries;
    // A discriminator's documents are in its base model's collection; a factory whose returns name two collections gives a model chosen at run time.
    const queries = read(workspace(files));
    assert.deepEqual(queries.map(described), ['tickets.find', '.findOne', 'note_book.deleteMany', 'tickets.countDocuments']);
    // Mongoose adds the discriminator's key (the base schema's discriminatorKey) and value to its queries.
    const filters = queries.map((q) => (q.engine === 'mongodb' ? q.command.filter : undefined));
    assert.deepEqual(filters[0], { kind: 'refund', owner: { $placeholder: 'owner' } });
    assert.deepEqual(filters[3], { owner: { $placeholder: 'owner' } });
    // Alone, the file does not show what the functions return: no model is read.
    assert.deepEqual(read().map(described), []);
  });

  it("reads `this` in a schema's statics as the model made from that schema, a discriminator's as its base collection", () => {
    const text = [
      "import { Mongoose, Schema } from 'mongoose';",
      "const EventSchema = new Schema({ owner: String }, { statics: { byOwner(owner: string) { return this.find({ owner }); } } });",
      'const ClickSchema = new Schema({ at: Date });',
      'const EventDocSchema = EventSchema as unknown as Schema<{ owner: string }>;',
      'EventDocSchema.statics.newest = function (owner: string) {',
      "  return this.findOne({ owner }).sort('-at');",
      '};',
      "ClickSchema.static('since', function (at: Date) { return this.countDocuments({ at: { $gt: at } }); });",
      'ClickSchema.statics = { last() { return this.findOne({}).sort({ at: -1 }); } };',
      'export const compile = (db: Mongoose) => {',
      '  const PageSchema = new Schema({ path: String });',
      '  PageSchema.statics.byPath = async function (path: string) {',
      '    return [1].map(() => this.exists({ path }));',
      '  };',
      "  const Event = db.model('Event', EventSchema);",
      "  Event.discriminator('Click', ClickSchema)",
      "  db.model('Page', PageSchema, 'site_pages');",
      '  return Event;',
      '};',
      // A function that is no static keeps `this` unknown.
      'export function other(this: { find(f: object): void }) { return this.find({ a: 1 }); }',
    ].join('\n');
    const queries = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(queries.map(described), ['events.find', 'events.findOne', 'events.countDocuments', 'events.findOne', 'site_pages.findOne']);
    // A discriminator's statics query with its key, Mongoose's `__t` where the base schema names none; the base's do not.
    const filters = queries.map((q) => (q.engine === 'mongodb' ? q.command.filter : undefined));
    assert.deepEqual(filters[1], { owner: { $placeholder: 'owner' } });
    assert.deepEqual(filters[2], { __t: 'Click', at: { $gt: { $placeholder: 'at' } } });
    assert.deepEqual(filters[3], { __t: 'Click' });
  });

  it("reads a model made by the `model` function imported from Mongoose: its schema's statics, also given by name, and a look-up by its name", () => {
    const made = (imports: string) => [
      imports,
      'const ThingSchema = new Schema({ a: String });',
      'ThingSchema.statics.byA = function (a: string) { return this.find({ a }); };',
      "export const Thing = model('Thing', ThingSchema, 'things_x');",
      "export const later = () => model('Thing').findOne({ a: 'x' });",
    ].join('\n');
    const read = (text: string) => findQueries(text, 'script', 'ts', {}).queries.map(described);
    assert.deepEqual(read(made("import { Schema, model } from 'mongoose';")), ['things_x.find', 'things_x.findOne']);
    assert.deepEqual(read(made("const { Schema, model } = require('mongoose');")), ['things_x.find', 'things_x.findOne']);
    // Statics given as functions of the module by their names: declared, held by a constant, shorthand in an object.
    const named = [
      "import { Schema, model } from 'mongoose';",
      'const LinkSchema = new Schema({ url: String });',
      'function byUrl(url: string) { return this.findOne({ url }); }',
      'const recent = function () { return this.find({}).sort({ at: -1 }); };',
      'async function count() { return this.countDocuments({}); }',
      'const helper = () => 1;',
      'LinkSchema.statics = { count, helper };',
      'LinkSchema.statics.byUrl = byUrl;',
      "LinkSchema.static('recent', recent);",
      "export const Link = model('Link', LinkSchema);",
    ].join('\n');
    assert.deepEqual(read(named), ['links.findOne', 'links.find', 'links.countDocuments']);
    // A `model` function of the application's own is not Mongoose's: what it makes is not taken as the schema's model.
    assert.ok(!read(made("import { Schema } from 'mongoose';\nimport { model } from './registry';")).some((q) => q.startsWith('things_x.')));
  });

  it("reads `this` in the statics of a schema whose model another module makes, under any name, and not when two make different ones", () => {
    const files: Record<string, string> = {
      '/ws/src/schemas/user.schema.ts': [
        "import { Schema } from 'mongoose';",
        'export const UserSchema = new Schema({ email: String });',
        'UserSchema.statics.byEmail = function (email: string) { return this.findOne({ email }); };',
      ].join('\n'),
      '/ws/src/models/user.model.ts': [
        "import mongoose from 'mongoose';",
        "import { UserSchema } from '../schemas/user.schema';",
        "export const User = mongoose.model('User', UserSchema, 'app_users');",
      ].join('\n'),
      // A CommonJS schema module, required under its own name by the module that makes its model.
      '/ws/src/schemas/note.schema.js': [
        "const { Schema } = require('mongoose');",
        'const NoteSchema = new Schema({ owner: String });',
        'NoteSchema.statics.mine = function (owner) { return this.find({ owner }); };',
        'module.exports = NoteSchema;',
      ].join('\n'),
      '/ws/src/models/note.model.js': "const mongoose = require('mongoose');\nconst NoteSchema = require('../schemas/note.schema');\nmodule.exports = mongoose.model('Note', NoteSchema);",
      // A default export imported under another name, by ESM and by require (from an index file).
      '/ws/src/schemas/profile.schema.ts': [
        "import { Schema } from 'mongoose';",
        'const ProfileSchema = new Schema({ handle: String });',
        'ProfileSchema.statics.byHandle = function (handle: string) { return this.findOne({ handle }); };',
        'export default ProfileSchema;',
      ].join('\n'),
      '/ws/src/models/profile.model.ts': "import { model } from 'mongoose';\nimport schema from '../schemas/profile.schema';\nexport default model('Profile', schema, 'profiles_v2');",
      '/ws/src/schemas/invite/index.js': [
        "const { Schema } = require('mongoose');",
        'const InviteSchema = new Schema({ code: String });',
        'InviteSchema.statics.byCode = function (code) { return this.findOne({ code }); };',
        'module.exports = InviteSchema;',
      ].join('\n'),
      '/ws/src/models/invite.model.js': "const mongoose = require('mongoose');\nconst s = require('../schemas/invite');\nmodule.exports = mongoose.model('Invite', s);",
      // Made into two models of different collections: which one `this` is depends on the caller.
      '/ws/src/schemas/tag.schema.ts': [
        "import { Schema } from 'mongoose';",
        'export const TagSchema = new Schema({ label: String });',
        'TagSchema.statics.byLabel = function (label: string) { return this.findOne({ label }); };',
      ].join('\n'),
      '/ws/src/models/tags.ts': [
        "import { model } from 'mongoose';",
        "import { TagSchema } from '../schemas/tag.schema';",
        "export const PostTag = model('PostTag', TagSchema);",
        "export const UserTag = model('UserTag', TagSchema);",
      ].join('\n'),
    };
    const listed: WorkspaceModules = { ...workspace(files), files: () => Object.keys(files) };
    const read = (file: string, modules?: WorkspaceModules) => findQueries(files[file]!, 'script', file.endsWith('.js') ? 'js' : 'ts', modules ? { file, modules } : {}).queries.map(described);
    assert.deepEqual(read('/ws/src/schemas/user.schema.ts', listed), ['app_users.findOne']);
    assert.deepEqual(read('/ws/src/schemas/note.schema.js', listed), ['notes.find']);
    assert.deepEqual(read('/ws/src/schemas/profile.schema.ts', listed), ['profiles_v2.findOne']);
    assert.deepEqual(read('/ws/src/schemas/invite/index.js', listed), ['invites.findOne']);
    // As where one module makes both: `this` is not read as a model (nothing is named that may be wrong).
    assert.deepEqual(read('/ws/src/schemas/tag.schema.ts', listed), []);
    // Alone, the schema's module does not show that `this` is a model.
    assert.deepEqual(read('/ws/src/schemas/user.schema.ts'), []);
  });

  it("reads `this` in functions another module gives a schema as statics, as the model that module makes", () => {
    const files: Record<string, string> = {
      '/ws/src/users/statics.ts': [
        "import type { Model } from 'mongoose';",
        'export async function getUser(this: Model<unknown>, id: string) { return this.findOne({ _id: id }); }',
        'export const listUsers = function (this: Model<unknown>) { return this.find({ active: true }); };',
        // Exported, but given to no schema: its `this` is not known.
        'export function unrelated(this: { find(q: object): unknown }) { return this.find({ x: 1 }); }',
      ].join('\n'),
      '/ws/src/users/model.ts': [
        "import mongoose, { Schema } from 'mongoose';",
        "import { getUser, listUsers } from './statics';",
        'const userSchema = new Schema({ name: String, active: Boolean });',
        "userSchema.static('getUser', getUser);",
        'userSchema.statics.listUsers = listUsers;',
        "export default mongoose.model('User', userSchema, 'members');",
      ].join('\n'),
      // Given to two schemas whose models are in different collections: which one `this` is depends on the caller.
      '/ws/src/shared/byName.ts': "export function byName(name: string) { return this.findOne({ name }); }",
      '/ws/src/a.ts': "import { Schema, model } from 'mongoose';\nimport { byName } from './shared/byName';\nconst A = new Schema({ name: String });\nA.statics = { byName };\nexport const Alpha = model('Alpha', A);",
      '/ws/src/b.ts': "import { Schema, model } from 'mongoose';\nimport { byName } from './shared/byName';\nconst B = new Schema({ name: String });\nB.static('byName', byName);\nexport const Beta = model('Beta', B);",
    };
    const listed: WorkspaceModules = { ...workspace(files), files: () => Object.keys(files) };
    const read = (file: string, modules?: WorkspaceModules) => findQueries(files[file]!, 'script', 'ts', modules ? { file, modules } : {}).queries.map(described);
    assert.deepEqual(read('/ws/src/users/statics.ts', listed), ['members.findOne', 'members.find']);
    assert.deepEqual(read('/ws/src/shared/byName.ts', listed), []);
    // Alone, the module does not show that `this` is a model.
    assert.deepEqual(read('/ws/src/users/statics.ts'), []);
  });

  it("reads `this` in the static methods of a class a schema loads as the schema's model, and not in its other methods", () => {
    const text = [
      "import mongoose, { Schema } from 'mongoose';",
      'const mongoSchema = new Schema({ slug: String });',
      'class UserClass extends mongoose.Model {',
      '  public static async getBySlug({ slug }: { slug: string }) {',
      '    return this.findOne({ slug }).lean();',
      '  }',
      '  static list() { return [1].map(() => this.find({})); }',
      '  static nested() { return function (this: { find(q: object): void }) { return this.find({ n: 1 }); }; }',
      '  async mine() { return this.findOne({ own: 1 }); }',
      '}',
      'mongoSchema.loadClass(UserClass);',
      "const TeamSchema = new Schema({ name: String });",
      "TeamSchema.loadClass(class extends mongoose.Model { static byName(name: string) { return this.findOne({ name }); } });",
      "export const User = mongoose.model('User', mongoSchema);",
      "export const Team = mongoose.model('Team', TeamSchema, 'squads');",
      // A class no schema loads: its static methods' `this` is not a model.
      'export class Other { static nope() { return this.findOne({ y: 1 }); } }',
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts', {}).queries.map(described), ['users.findOne', 'users.find', 'squads.findOne']);
  });

  it("adds a discriminator's key to an aggregate's first stage, keeps a key the code writes, and takes the value an option gives", () => {
    const text = [
      "import mongoose, { Schema } from 'mongoose';",
      "const BaseSchema = new Schema({ day: Date }, { discriminatorKey: 'kind' });",
      'const VisitSchema = new Schema({ path: String });',
      "VisitSchema.statics.perDay = function () { return this.aggregate([{ $group: { _id: '$day', n: { $sum: 1 } } }]); };",
      "VisitSchema.statics.ofKind = function (kind: string) { return this.find({ kind, path: '/' }); };",
      "const Base = mongoose.model('Hit', BaseSchema);",
      "Base.discriminator('Visit', VisitSchema, { value: 'visit' });",
    ].join('\n');
    const [perDay, ofKind] = findQueries(text, 'script', 'ts', {}).queries;
    assert.ok(perDay?.engine === 'mongodb' && ofKind?.engine === 'mongodb');
    assert.equal(perDay.command.collection, 'hits');
    assert.deepEqual(perDay.command.pipeline, [{ $match: { kind: 'visit' } }, { $group: { _id: '$day', n: { $sum: 1 } } }]);
    assert.deepEqual(ofKind.command.filter, { kind: { $placeholder: 'kind' }, path: '/' });
  });
});
