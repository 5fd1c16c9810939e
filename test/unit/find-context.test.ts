// The finder reading a collection a method of the application's own context object returns
// (`mongo.accounts().findOne(...)`), where the object is typed by an interface or a class of the workspace:
// read by what the method's implementation returns, never by the method's name.

import assert from 'node:assert/strict';
import { findQueries, type FoundMongoQuery, type FoundQuery, type WorkspaceModules } from '../../src/core/query/find/index';
import { resolveSpecifier } from '../../src/core/query/find/workspace';

function reader(files: Record<string, string>) {
  const modules: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f], files: () => Object.keys(files) };
  return (file: string): FoundQuery[] => findQueries(files[file]!, 'script', 'ts', { file, modules }).queries;
}

const mongo = (qs: FoundQuery[]) => qs.filter((q): q is FoundMongoQuery => q.engine === 'mongodb');
const described = (qs: FoundQuery[]) => mongo(qs).map((q) => `${q.command.collection || '?'}.${q.command.operation}`);

const CONTEXT = [
  "import { Collection, Db } from 'mongodb';",
  "import { collectionOf } from './helpers';",
  'export interface StoreContext {',
  '  readonly live: Db;',
  '  accounts(): Collection<{ id: string; tenantID: string }>;',
  '  invoices(): Collection<{ id: string; paid: boolean }>;',
  '  audits(): Collection<{ at: Date }>;',
  '}',
  'export class StoreContextImpl implements StoreContext {',
  '  constructor(public readonly live: Db) {}',
  "  public accounts() { return this.live.collection('accounts'); }",
  "  public invoices(): Collection<{ id: string; paid: boolean }> { return collectionOf<{ id: string; paid: boolean }>('invoices')(this.live); }",
  '  public audits(): Collection<{ at: Date }> { return this.pick(); }',
  "  private pick() { return this.live.collection(process.env.AUDITS ?? 'audits'); }",
  '}',
].join('\n');
const HELPERS = "import type { Db } from 'mongodb';\nexport function collectionOf<T>(name: string) {\n  return <U = T>(db: Db) => db.collection<U>(name);\n}";

describe("finder: collections a method of the application's context object returns", () => {
  it('reads a method of an interface by what the class that implements it returns, in another module', () => {
    const read = reader({
      '/ws/data/context.ts': CONTEXT,
      '/ws/data/helpers.ts': HELPERS,
      '/ws/models/account.ts': [
        "import { StoreContext } from '../data/context';",
        'export async function accountByID(store: StoreContext, tenantID: string, id: string) {',
        '  return store.accounts().findOne({ tenantID, id });',
        '}',
        'export const unpaid = (store: StoreContext) => store.invoices().find({ paid: false }).toArray();',
      ].join('\n'),
    });
    const qs = read('/ws/models/account.ts');
    assert.deepEqual(described(qs), ['accounts.findOne', 'invoices.find']);
  });

  it('keeps a collection the implementation chooses at run time unnamed, and found', () => {
    const read = reader({
      '/ws/data/context.ts': CONTEXT,
      '/ws/data/helpers.ts': HELPERS,
      '/ws/models/audit.ts': "import type { StoreContext } from '../data/context';\nexport const recent = (store: StoreContext) => store.audits().find({}).sort({ at: -1 }).limit(5).toArray();",
    });
    assert.deepEqual(described(read('/ws/models/audit.ts')), ['?.find']);
  });

  it('finds a collection an interface method declares when no class of the workspace implements it, unnamed', () => {
    const read = reader({
      '/ws/ctx.ts': "import type { Collection } from 'mongodb';\nexport interface Ctx {\n  sessions(): Collection<{ userID: string }>;\n}",
      '/ws/sessions.ts': "import type { Ctx } from './ctx';\nexport const mine = (ctx: Ctx, userID: string) => ctx.sessions().deleteMany({ userID });",
    });
    assert.deepEqual(described(read('/ws/sessions.ts')), ['?.deleteMany']);
  });

  it('finds the implementation in a module that imports the interface, and reads a class typed directly', () => {
    const read = reader({
      '/ws/ctx.ts': "import type { Collection } from 'mongodb';\nexport interface Ctx {\n  sessions(): Collection<{ userID: string }>;\n}",
      '/ws/mongo.ts': "import type { Db } from 'mongodb';\nimport type { Ctx } from './ctx';\nexport class MongoCtx implements Ctx {\n  constructor(private db: Db) {}\n  sessions() { return this.db.collection('sessions'); }\n}",
      '/ws/sessions.ts': [
        "import type { Ctx } from './ctx';",
        "import type { MongoCtx } from './mongo';",
        'export const mine = (ctx: Ctx, userID: string) => ctx.sessions().deleteMany({ userID });',
        'export const all = (ctx: MongoCtx) => ctx.sessions().countDocuments({});',
      ].join('\n'),
    });
    assert.deepEqual(described(read('/ws/sessions.ts')), ['sessions.deleteMany', 'sessions.countDocuments']);
  });

  it('does not read a method of a value nothing types, nor one whose name only sounds like a collection', () => {
    const read = reader({
      '/ws/ctx.ts': "export interface Ctx {\n  users(): Array<{ id: string }>;\n}",
      '/ws/use.ts': "import type { Ctx } from './ctx';\nexport const a = (ctx: Ctx) => ctx.users().find((u) => u.id === 'x');\nexport const b = (other: any) => other.users().findOne({ id: 1 });",
    });
    assert.deepEqual(described(read('/ws/use.ts')), []);
  });
  it("reads a class's field named `collection` and typed by the driver as the collection its constructor is given", () => {
    const head = ["import { MongoClient, type Collection, type Document } from 'mongodb';", 'const db = new MongoClient(process.env.URL!).db();'];
    const query = [
      ...head,
      'export class Query<T extends Document> {',
      '  private collection: Collection<T>;',
      '  constructor(collection: Collection<T>) { this.collection = collection; }',
      '  run(filter: object) { return this.collection.find(filter).limit(10).toArray(); }',
      '}',
      "export const q = [new Query(db.collection('a')), new Query(db.collection('b'))];",
    ].join('\n');
    const batch = [
      ...head,
      'export class Batch<T extends Document> {',
      '  constructor(private readonly collection: Collection<T>) {}',
      '  flush() { return this.collection.deleteMany({ done: true }); }',
      '}',
      "export const batch = new Batch(db.collection('jobs'));",
    ].join('\n');
    assert.deepEqual(described(findQueries(query, 'script', 'ts', {}).queries), ['?.find']);
    assert.deepEqual(described(findQueries(batch, 'script', 'ts', {}).queries), ['jobs.deleteMany']);
  });
  it('reads a context taken apart from what a fixture function returns, the context made by a helper of another module', () => {
    const read = reader({
      '/ws/ctx.ts': "import type { Collection, Db } from 'mongodb';\nexport interface Ctx {\n  sessions(): Collection<{ userID: string }>;\n}\nexport class CtxImpl implements Ctx {\n  constructor(private db: Db) {}\n  sessions() { return this.db.collection('sessions'); }\n}",
      '/ws/helpers.ts': "import type { Db } from 'mongodb';\nimport { type Ctx, CtxImpl } from './ctx';\nexport const createCtx = async (db: Db): Promise<Ctx> => new CtxImpl(db);",
      '/ws/a.spec.ts': [
        "import type { Db } from 'mongodb';",
        "import { createCtx } from './helpers';",
        'const fixtures = async (db: Db) => {',
        '  const mongo = await createCtx(db);',
        '  return { mongo, when: new Date() };',
        '};',
        'export async function cleanUp(db: Db) {',
        '  const { mongo } = await fixtures(db);',
        "  await mongo.sessions().deleteMany({ userID: 'b' });",
        '}',
      ].join('\n'),
    });
    assert.deepEqual(described(read('/ws/a.spec.ts')), ['sessions.deleteMany']);
  });
});
