// The finder deciding a receiver's library by what the value is, followed across the workspace's modules
// (origin.ts): written cases of what applications do, each also read without the workspace, where the
// name alone does not say the library and the call is not found.

import assert from 'node:assert/strict';
import { findQueries, type FoundQuery, type WorkspaceModules } from '../../src/core/query/find/index';
import { resolveSpecifier } from '../../src/core/query/find/workspace';

function reader(files: Record<string, string>) {
  const modules: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f] };
  return (text: string, file: string, withWorkspace = true): FoundQuery[] => findQueries(text, 'script', 'ts', withWorkspace ? { file, modules } : {}).queries;
}

const described = (q: FoundQuery) => (q.engine === 'mongodb' ? `${q.command.collection}.${q.command.operation}` : q.sql);

describe("finder: a Prisma client behind the application's own classes", () => {
  const read = reader({
    '/ws/src/services/prisma.service.ts': [
      "import { Injectable, OnModuleInit } from '@nestjs/common';",
      "import { PrismaClient } from '@prisma/client';",
      '@Injectable()',
      'export class PrismaService extends PrismaClient implements OnModuleInit {',
      '  async onModuleInit() { await this.$connect(); }',
      '}',
      'export class PrismaRepository<T extends keyof PrismaService> {',
      '  public model: Pick<PrismaService, T>;',
      '  constructor(private readonly service: PrismaService) { this.model = service; }',
      '}',
    ].join('\n'),
    '/ws/src/db.ts': "import { PrismaClient } from '../generated/prisma';\nexport const store = new PrismaClient();",
  });

  it('reads calls on a class that extends PrismaClient, injected under any name', () => {
    const text = [
      "import { PrismaService } from './services/prisma.service';",
      'export class TeamService {',
      '  constructor(private readonly store: PrismaService) {}',
      '  members(teamId: string) { return this.store.teamMember.findMany({ where: { teamId }, orderBy: { joinedAt: "desc" } }); }',
      '  rename(id: string, name: string) { return this.store.team.update({ where: { id }, data: { name } }); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/team.service.ts').map(described), [
      'SELECT * FROM "TeamMember" WHERE "teamId" = $1 ORDER BY "joinedAt" DESC',
      'UPDATE "Team" SET name = $2 WHERE id = $1',
    ]);
    assert.deepEqual(read(text, '/ws/src/team.service.ts', false), []);
  });

  it("reads calls through a repository wrapper's model, typed Pick of the service", () => {
    const text = [
      "import { PrismaRepository } from './services/prisma.service';",
      'export class PostsRepository {',
      "  constructor(private readonly _posts: PrismaRepository<'post'>) {}",
      '  due(before: Date) { return this._posts.model.post.findMany({ where: { publishAt: { lte: before }, deletedAt: null } }); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/posts.repository.ts').map(described), ['SELECT * FROM "Post" WHERE "publishAt" <= $1 AND "deletedAt" IS NULL']);
    assert.deepEqual(read(text, '/ws/src/posts.repository.ts', false), []);
  });

  it('reads a client made from a generated client module, exported under another name', () => {
    const text = "import { store } from './db';\nexport const open = (userId: string) => store.ticket.count({ where: { userId, closed: false } });";
    assert.deepEqual(read(text, '/ws/src/tickets.ts').map(described), ['SELECT count(*) FROM "Ticket" WHERE "userId" = $1 AND closed = FALSE']);
    assert.deepEqual(read(text, '/ws/src/tickets.ts', false), []);
  });
});

describe('finder: a capitalised import is a Mongoose model only where its module makes one', () => {
  const read = reader({
    '/ws/src/models/user.ts': "import { Schema, model } from 'mongoose';\nexport const User = model('User', new Schema({ email: String }));",
    '/ws/src/models/index.ts': "export { User } from './user';",
    '/ws/src/kernel/store.ts': 'function scoped(path: string) { return { remove: (ns: string, key: string) => ({ path, ns, key }) }; }\nexport const Store = scoped("/data");',
  });

  it('reads a model imported through a barrel, and not a store object or a package of the same shape', () => {
    const text = [
      "import { User } from './models';",
      "import { Store } from './kernel/store';",
      "import NProgress from 'nprogress';",
      'export const forget = (email: string) => User.deleteOne({ email });',
      "export const clear = (key: string) => Store.remove('settings', key);",
      'export const stop = () => NProgress.remove();',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/settings.ts').map(described), ['users.deleteOne']);
  });
});

describe('finder: a Mongoose model a base repository is given by each subclass', () => {
  const INVOICE_REPOSITORY = [
    "import { BaseRepository } from './base.repository';",
    "import { Invoice } from './invoice.schema';",
    'export class InvoiceRepository extends BaseRepository<unknown> {',
    "  constructor() { super(Invoice, 'invoice'); }",
    '  unpaid(customerId: string) { return this._model.find({ customerId, paid: false }); }',
    '}',
  ].join('\n');
  const read = reader({
    '/ws/dal/base.repository.ts': [
      "import { Model } from 'mongoose';",
      'export class BaseRepository<T> {',
      '  public _model: Model<T>;',
      '  constructor(protected MongooseModel: Model<T>, private readonly label: string) { this._model = MongooseModel; }',
      '  count() { return this.MongooseModel.estimatedDocumentCount(); }',
      '}',
    ].join('\n'),
    '/ws/dal/invoice.schema.ts': "import mongoose from 'mongoose';\nexport const Invoice = mongoose.model('Invoice', new mongoose.Schema({ customerId: String, paid: Boolean }));",
    '/ws/dal/invoice.repository.ts': INVOICE_REPOSITORY,
  });

  it('reads this._model in the subclass, and repository._model elsewhere, as the model given to super()', () => {
    const own = read(INVOICE_REPOSITORY, '/ws/dal/invoice.repository.ts');
    assert.deepEqual(own.map(described), ['invoices.find']);
    const text = [
      "import { InvoiceRepository } from '../dal/invoice.repository';",
      'const invoices = new InvoiceRepository();',
      'export const purge = (customerId: string) => invoices._model.deleteMany({ customerId });',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/admin/purge.ts').map(described), ['invoices.deleteMany']);
    assert.deepEqual(read(text, '/ws/admin/purge.ts', false), []);
  });

  it("reads the base class's own calls on a member typed Model as on a model chosen at run time", () => {
    const base = read([
      "import { Model } from 'mongoose';",
      'export class BaseRepository<T> {',
      '  public _model: Model<T>;',
      '  constructor(protected MongooseModel: Model<T>) { this._model = MongooseModel; }',
      '  all() { return this._model.find({}); }',
      '  size() { return this.MongooseModel.estimatedDocumentCount(); }',
      '}',
    ].join('\n'), '/ws/dal/base2.repository.ts');
    assert.deepEqual(base.map(described), ['.find', '.count']);
  });
});

describe('finder: MongoDB collections handed out by the application', () => {
  const read = reader({
    '/ws/db/collections.ts': [
      "import type { Db } from 'mongodb';",
      'export const CatalogCollections = async (db: Db) => {',
      "  const Products = db.collection('products');",
      "  const ProductTexts = db.collection('product_texts');",
      '  await Products.createIndex({ slug: 1 });',
      '  return { Products, ProductTexts };',
      '};',
    ].join('\n'),
    '/ws/db/driver.ts': "import * as mongodb from 'mongodb';\nexport { mongodb };",
  });

  it('reads a collection destructured from what an imported function returns, named where it is made', () => {
    const text = [
      "import { CatalogCollections } from '../db/collections';",
      'export async function configure(db) {',
      '  const { Products, ProductTexts } = await CatalogCollections(db);',
      '  return {',
      '    bySlug: (slug: string) => Products.findOne({ slug }),',
      '    texts: (productId: string) => ProductTexts.find({ productId }).toArray(),',
      '  };',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/modules/catalog.ts').map(described), ['products.findOne', 'product_texts.find']);
    assert.deepEqual(read(text, '/ws/modules/catalog.ts', false), []);
  });

  it('reads the object such a function returns through a constant, read on or destructured, and through a module loaded where it is called', () => {
    const text = [
      "import { CatalogCollections } from '../db/collections';",
      'export async function reindex(db, id: string) {',
      '  const cols = await CatalogCollections(db);',
      '  const { ProductTexts } = cols;',
      '  await cols.Products.updateOne({ _id: id }, { $set: { indexed: true } });',
      '  await ProductTexts.deleteMany({ productId: id });',
      '  await (await CatalogCollections(db)).Products.findOne({ _id: id });',
      "  const { Products } = await (await import('../db/collections')).CatalogCollections(db);",
      '  return Products.find({ parent: id }).toArray();',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/modules/reindex.ts').map(described), ['products.updateOne', 'product_texts.deleteMany', 'products.findOne', 'products.find']);
  });

  it("reads a parameter typed by the driver's type named inline, import('mongodb').Collection", () => {
    const text = [
      'export async function prune(',
      "  logs: import('mongodb').Collection<{ at: Date }>,",
      '  before: Date,',
      ') {',
      '  return logs.deleteMany({ at: { $lt: before } });',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/modules/prune.ts');
    assert.deepEqual(qs.map(described), ['.deleteMany']);
    assert.match(qs[0]!.engine === 'mongodb' ? qs[0]!.warnings.join(' ') : '', /parameter logs, typed Collection/);
  });

  it("names a private method's collection parameter by what the class's calls of it give", () => {
    const text = [
      "import type { Collection } from 'mongodb';",
      "import { CatalogCollections } from '../db/collections';",
      'export class Catalog {',
      '  constructor(private readonly db) {}',
      '  async hide(id: string) {',
      '    const { Products } = await CatalogCollections(this.db);',
      '    await this.touch(Products, id);',
      '  }',
      '  async show(id: string) { const { Products } = await CatalogCollections(this.db); return this.touch(Products, id); }',
      '  async relabel(id: string, texts: boolean) {',
      '    const { Products, ProductTexts } = await CatalogCollections(this.db);',
      '    return this.stamp(texts ? ProductTexts : Products, id);',
      '  }',
      '  private touch(coll: Collection, id: string) { return coll.updateOne({ _id: id }, { $set: { at: new Date() } }); }',
      '  private stamp(coll: Collection, id: string) { return coll.findOne({ _id: id }); }',
      '  public open(coll: Collection, id: string) { return coll.findOne({ _id: id, open: true }); }',
      '}',
    ].join('\n');
    // A public method may be called from anywhere: its parameter stays the caller's choice.
    assert.deepEqual(read(text, '/ws/modules/catalog-class.ts').map(described), ['products.updateOne', '.findOne', '.findOne']);
  });

  it('reads a collection given in a destructured parameter typed by the driver, through a namespace another module passes on', () => {
    const text = [
      "import { mongodb } from '../db/driver';",
      'export const configureFilters = ({ Filters }: { Filters: mongodb.Collection<{ key: string }> }) => ({',
      '  byKey: (key: string) => Filters.findOne({ key }),',
      '});',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/modules/filters.ts').map((q) => q.engine === 'mongodb' ? q.command.operation : q.sql), ['findOne']);
    assert.deepEqual(read(text, '/ws/modules/filters.ts', false), []);
  });
});

describe('finder: estimatedDocumentCount counts the whole collection', () => {
  it('reads it as a count with no filter, its options left out, on a driver collection and a Mongoose model', () => {
    const text = [
      "import { MongoClient } from 'mongodb';",
      "import mongoose from 'mongoose';",
      "const Visit = mongoose.model('Visit', new mongoose.Schema({ at: Date }));",
      "const events = new MongoClient('mongodb://localhost').db('app').collection('events');",
      'export const sizes = async () => [await events.estimatedDocumentCount({ maxTimeMS: 500 }), await Visit.estimatedDocumentCount({ maxTimeMS: 500 })];',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts').queries;
    assert.deepEqual(qs.map((q) => (q.engine === 'mongodb' ? [q.command.collection, q.command.operation, JSON.stringify(q.command.filter ?? {})] : q.sql)), [
      ['events', 'count', '{}'],
      ['visits', 'count', '{}'],
    ]);
  });
});

describe('finder: the parameter a library gives a transaction callback', () => {
  const read = reader({
    '/ws/db/index.ts': [
      "import knex from 'knex';",
      "import postgres from 'postgres';",
      "export const db = { knex: knex({ client: 'pg' }) };",
      'export const pg = postgres();',
    ].join('\n'),
  });

  it('reads queries on a Knex or postgres.js transaction under any name, as the library of what began it', () => {
    const text = [
      "import { db, pg } from '../db';",
      'export const close = (id: number) => db.knex.transaction(async (work) => {',
      "  const row = await work.from('jobs').where({ id }).forUpdate().first();",
      "  await work('jobs').where({ id }).update({ state: 'closed' });",
      '  return row;',
      '});',
      'export const move = (id: number) => pg.begin(async (step) => step`UPDATE jobs SET queue = 2 WHERE id = ${id}`);',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/jobs/close.ts').map(described), [
      'SELECT * FROM jobs WHERE id = $1 LIMIT 1',
      "UPDATE jobs SET state = 'closed' WHERE id = $1",
      'UPDATE jobs SET queue = 2 WHERE id = $1',
    ]);
    assert.deepEqual(read(text, '/ws/jobs/close.ts', false), []);
  });
});
