// TypeORM repositories and managers, node-postgres statements and MongoDB collections held by classes, as
// applications write them: the receiver decided by where its value comes from (origin.ts), across the
// workspace's modules; each case is also read without the workspace where the name alone does not say what
// the receiver is.

import assert from 'node:assert/strict';
import { analyzeQuery, loadSqlParser, parsePostgresQuerySync } from '../../src/core/index';
import { anchorRange } from '../../src/core/lint/analysis';
import { findQueries, type FoundQuery, type FoundSqlQuery, type WorkspaceModules } from '../../src/core/query/find/index';
import { resolveSpecifier } from '../../src/core/query/find/workspace';
import { MAX_STATEMENT_FILE } from '../../src/core/query/find/loadedSql';

function reader(files: Record<string, string>) {
  const modules: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f] };
  return (text: string, file: string, withWorkspace = true): FoundQuery[] => findQueries(text, 'script', 'ts', withWorkspace ? { file, modules } : {}).queries;
}

const sqlOf = (q: FoundQuery) => (q.engine === 'postgres' ? q.sql : `${q.command.collection}.${q.command.operation}`);

describe('finder: TypeORM repositories followed to where they come from', () => {
  const read = reader({
    '/ws/src/entity/invoice.ts': [
      "import { Entity, Column, PrimaryColumn } from 'typeorm';",
      '@Entity()',
      'export class InvoiceRow { @PrimaryColumn() id: string; @Column() customerId: string; @Column() deletedAt: Date; }',
    ].join('\n'),
    '/ws/src/store.ts': [
      "import { DataSource, EntityManager } from 'typeorm';",
      'export class Store {',
      '  constructor(private readonly source: DataSource) {}',
      '  async manager(): Promise<EntityManager> { return this.source.manager; }',
      '}',
    ].join('\n'),
    '/ws/src/base.ts': [
      "import { EntityManager } from 'typeorm';",
      "import { Store } from './store';",
      'export abstract class Ledger {',
      '  constructor(protected readonly store: Store) {}',
      '  protected async entities(): Promise<EntityManager> { return this.store.manager(); }',
      '}',
    ].join('\n'),
    '/ws/src/invoice.repository.ts': [
      "import { Repository, DataSource } from 'typeorm';",
      "import { InvoiceRow } from './entity/invoice';",
      'export class InvoiceLedger extends Repository<InvoiceRow> {',
      '  constructor(source: DataSource) { super(InvoiceRow, source.manager); }',
      '  unpaid(customerId: string) { return this.find({ where: { customerId }, take: 20 }); }',
      '}',
      'export type Invoices = Repository<InvoiceRow> & { archive(id: string): Promise<void> };',
    ].join('\n'),
  });

  it("reads a repository an application's method returns, declared Promise<Repository<X>>, under any name", () => {
    const text = [
      "import { Repository } from 'typeorm';",
      "import { Ledger } from './base';",
      "import { InvoiceRow } from './entity/invoice';",
      'export class Billing extends Ledger {',
      '  private async rows(): Promise<Repository<InvoiceRow>> { return (await this.entities()).getRepository<InvoiceRow>(InvoiceRow); }',
      '  async forCustomer(customerId: string) { const rows = await this.rows(); return rows.find({ where: { customerId } }); }',
      '  async drop(id: string) { await (await this.rows()).delete({ id }); }',
      '  async undo(id: string) { const r = await this.rows(); await r.restore(id); }',
      '  async many(ids: string[]) { const r = await this.rows(); return r.findByIds(ids); }',
      '  async other(id: string) { const self = this as Billing; const r = await self.rows(); return r.findOneBy({ id }); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/billing.ts').map(sqlOf), [
      'SELECT * FROM invoice_row WHERE "customerId" = $1',
      'DELETE FROM invoice_row WHERE id = $1',
      'UPDATE invoice_row SET "deletedAt" = NULL WHERE id = $1',
      'SELECT * FROM invoice_row WHERE id = ANY($1)',
      'SELECT * FROM invoice_row WHERE id = $1 LIMIT 1',
    ]);
    // The method's declared type says it, so the file alone reads the same.
    assert.equal(read(text, '/ws/src/billing.ts', false).length, 5);
  });

  it('reads a custom repository that extends Repository<X>: its own calls on this, and an instance a container gives', () => {
    const own = read(
      "import { Repository } from 'typeorm';\nimport { InvoiceRow } from './entity/invoice';\n" +
        'export class Late extends Repository<InvoiceRow> { overdue(customerId: string) { return this.findBy({ customerId }); } }',
      '/ws/src/late.ts',
    );
    assert.deepEqual(own.map(sqlOf), ['SELECT * FROM invoice_row WHERE "customerId" = $1']);
    // 0.2's @EntityRepository(X) names the entity where the class does not.
    const decorated = read(
      "import { EntityRepository, Repository } from 'typeorm';\nimport { InvoiceRow } from './entity/invoice';\n" +
        '@EntityRepository(InvoiceRow)\nexport class Old extends Repository { paid(id: string) { return this.count({ where: { id } }); } }',
      '/ws/src/old.ts',
    );
    assert.deepEqual(decorated.map(sqlOf), ['SELECT count(*) FROM invoice_row WHERE id = $1']);
    const text = [
      "import { Container } from 'typedi';",
      "import { InvoiceLedger } from './invoice.repository';",
      'export async function count(customerId: string) {',
      '  const ledger = Container.get(InvoiceLedger);',
      '  return ledger.count({ where: { customerId } });',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/count.ts').map(sqlOf), ['SELECT count(*) FROM invoice_row WHERE "customerId" = $1']);
    assert.deepEqual(read(text, '/ws/src/count.ts', false).map(sqlOf), []);
  });

  it("reads a repository injected under a token and typed by the application's alias of Repository<X> & extras", () => {
    const text = [
      "import { Inject } from '@nestjs/common';",
      "import type { Invoices } from './invoice.repository';",
      'export class Reminders {',
      "  constructor(@Inject('invoices') private readonly books: Invoices) {}",
      '  due(id: string) { return this.books.findOneBy({ id }); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/reminders.ts').map(sqlOf), ['SELECT * FROM invoice_row WHERE id = $1 LIMIT 1']);
    assert.deepEqual(read(text, '/ws/src/reminders.ts', false).map(sqlOf), []);
  });

  it("reads a repository another module's function returns, and one it exports, made by the application's data source", () => {
    const read2 = reader({
      '/ws/src/data-source.ts': [
        "import { DataSource } from 'typeorm';",
        "import { InvoiceRow } from './entity/invoice';",
        "export const AppSource = new DataSource({ type: 'postgres' });",
        'export const invoices = () => AppSource.getRepository(InvoiceRow);',
        'export const invoiceBook = AppSource.getRepository(InvoiceRow);',
      ].join('\n'),
    });
    const text = [
      "import { invoices, invoiceBook } from './data-source';",
      'export const open = (customerId: string) => invoices().findBy({ customerId });',
      'export const one = (id: string) => invoiceBook.findOne({ where: { id } });',
    ].join('\n');
    assert.deepEqual(read2(text, '/ws/src/open.ts').map(sqlOf), ['SELECT * FROM invoice_row WHERE "customerId" = $1', 'SELECT * FROM invoice_row WHERE id = $1 LIMIT 1']);
    assert.deepEqual(read2(text, '/ws/src/open.ts', false).map(sqlOf), []);
  });

  it("reads a manager by its origin under any name: a data source's query runner, a transaction's parameter", () => {
    const text = [
      "import { DataSource } from 'typeorm';",
      "import { InvoiceRow } from './entity/invoice';",
      'export async function settle(source: DataSource, id: string) {',
      '  const runner = source.createQueryRunner();',
      '  const open = await runner.manager.find(InvoiceRow, { where: { id } });',
      "  const last = await source.createQueryBuilder(InvoiceRow, 'i').where('i.customerId = :id', { id }).orderBy('i.id', 'DESC').getOne();",
      '  return source.transaction(async (work) => work.findOne(InvoiceRow, { where: { customerId: id } }));',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/settle.ts').map(sqlOf), [
      'SELECT * FROM invoice_row WHERE id = $1',
      'SELECT * FROM invoice_row i WHERE (i."customerId" = $1) ORDER BY i.id DESC',
      'SELECT * FROM invoice_row WHERE "customerId" = $1 LIMIT 1',
    ]);
  });
});

describe("finder: TypeORM managers an application's unit of work hands out, and the entity a generic base class is given", () => {
  // A unit of work in its own folder (imported through its index) hands out the current transaction's
  // manager from a method declared `: EntityManager`; repositories extend a generic base class that keeps
  // the entity its subclasses give to `super(...)`. The files that query import nothing from typeorm.
  const generic = [
    "import { EntityTarget, FindOptionsWhere } from 'typeorm';",
    "import { Session } from '../work';",
    'export abstract class GenericStore<T> {',
    '  constructor(protected readonly target: EntityTarget<T>, protected readonly session: Session) {}',
    '  async remove(where: FindOptionsWhere<T>) { const db = this.session.currentManager(); await db.delete<T>(this.target, where); }',
    '}',
  ].join('\n');
  const read = reader({
    '/ws/app/work/session.ts': [
      "import { DataSource, EntityManager, QueryRunner } from 'typeorm';",
      'export class Session {',
      '  private runner?: QueryRunner;',
      '  constructor(private readonly source: DataSource, private readonly fallback: EntityManager) {}',
      '  public currentManager(): EntityManager { return this.runner?.manager || this.fallback; }',
      '}',
    ].join('\n'),
    '/ws/app/work/index.ts': "export * from './session';",
    '/ws/app/entities/parcel.ts': [
      "import { Entity, Column, PrimaryGeneratedColumn } from 'typeorm';",
      "@Entity({ name: 'parcels' })",
      'export class Parcel { @PrimaryGeneratedColumn() id: number; @Column() trackingCode: string; @Column() shippedAt: Date; @Column() status: string; }',
    ].join('\n'),
    '/ws/app/stores/generic.store.ts': generic,
  });
  const parcels = [
    "import { Parcel } from '../entities/parcel';",
    "import { Session } from '../work';",
    "import { GenericStore } from './generic.store';",
    'export class ParcelStore extends GenericStore<Parcel> {',
    '  constructor(session: Session) { super(Parcel, session); }',
    '  async late(since: Date) { const db = this.session.currentManager(); return db.find(this.target, { where: { shippedAt: since } }); }',
    "  async resend(trackingCode: string) { const db = this.session.currentManager(); await db.update(this.target, { trackingCode }, { status: 'queued' }); }",
    "  async purge(ids: number[]) { const db = this.session.currentManager(); await db.createQueryBuilder().delete().from(Parcel).where('id IN (:...ids)', { ids }).execute(); }",
    '}',
  ].join('\n');

  it("reads a manager another value's method declares it returns, with the entity the subclass gives to super(...)", () => {
    assert.deepEqual(read(parcels, '/ws/app/stores/parcel.store.ts').map(sqlOf), [
      'SELECT * FROM parcels WHERE "shippedAt" = $1',
      `UPDATE parcels SET status = 'queued' WHERE "trackingCode" = $1`,
      'DELETE FROM parcels WHERE (id IN ($1))',
    ]);
  });

  it('reads a manager call in the generic base class with its table unknown, since each subclass gives another entity', () => {
    const qs = read(generic, '/ws/app/stores/generic.store.ts') as FoundSqlQuery[];
    assert.equal(qs.length, 1);
    assert.match(qs[0]!.sql, /^DELETE FROM unknown_entity /);
    assert.deepEqual(qs[0]!.standInNames, ['unknown_entity']);
    assert.ok(qs[0]!.warnings.some((w) => /entity of this call is chosen at run time/.test(w)));
  });

  it('does not take a value whose method is declared to return something else for a manager', () => {
    const text = [
      "import { Parcel } from '../entities/parcel';",
      'class Cache { current(): Map<string, unknown> { return new Map(); } }',
      'export class Shelf {',
      '  constructor(private readonly cache: Cache, private readonly target: unknown) {}',
      '  drop(key: string) { const db = this.cache.current(); return db.delete(this.target, key); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/app/stores/shelf.ts').map(sqlOf), []);
  });
});

describe('finder: TypeORM active records whose BaseEntity is reached through other modules', () => {
  // The entities live in a package of the workspace, extend the application's own base class (itself in
  // another file), and are imported from the package's index; the file that queries them imports nothing
  // from typeorm.
  const read = reader({
    '/ws/src/store/entities/Stamped.ts': [
      "import { BaseEntity, PrimaryColumn } from 'typeorm';",
      'export class Stamped extends BaseEntity { @PrimaryColumn() id: string; }',
    ].join('\n'),
    '/ws/src/store/entities/Ticket.ts': [
      "import { Column, Entity } from 'typeorm';",
      "import { Stamped } from './Stamped';",
      "@Entity({ name: 'tickets' })",
      'export class Ticket extends Stamped { @Column() owner_id: string; @Column() closed: boolean; }',
    ].join('\n'),
    '/ws/src/store/entities/Note.ts': [
      "import { Entity } from 'typeorm';",
      "import * as orm from 'typeorm';",
      '@Entity()',
      'export class StickyNote extends orm.BaseEntity { text: string; }',
    ].join('\n'),
    '/ws/src/store/entities/index.ts': "export * from './Ticket';\nexport * from './Stamped';\nexport * from './Note';",
    '/ws/src/store/index.ts': "export * from './entities/index';",
    '/ws/src/cache/Shelf.ts': 'export class Shelf { static find(q: unknown) { return [q]; } }\nexport class Drawer extends Shelf {}',
    '/ws/src/store/Home.ts': [
      "import { DataSource, EntityManager } from 'typeorm';",
      'export class Home {',
      '  private _source: DataSource;',
      '  current?: EntityManager;',
      '  public get source() { return this._source; }',
      '}',
      'export type Work = <T>(tx: EntityManager | undefined, op: ((manager: EntityManager) => Promise<T>)) => Promise<T>;',
      'export function inWork<T>(op: (db: EntityManager) => Promise<T>): Promise<T> { return op(undefined as never); }',
    ].join('\n'),
  });

  it("reads an entity's statics as queries on the table its @Entity names, in a file that does not import typeorm", () => {
    const text = [
      "import { StickyNote, Ticket } from '../store';",
      'export async function close(owner: string, id: string) {',
      '  const open = await Ticket.find({ where: { owner_id: owner }, take: 10 });',
      '  await Ticket.update({ id }, { closed: true });',
      '  const n = await Ticket.count({ where: { owner_id: owner } });',
      '  await Ticket.delete({ owner_id: owner });',
      "  const last = await Ticket.createQueryBuilder('t').where('t.owner_id = :owner', { owner }).getOne();",
      '  const any = await Ticket.exists({ where: { id } });',
      '  const notes = await StickyNote.findOne({ where: { text: id } });',
      '  return [open, n, last, any, notes];',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/routes/close.ts').map(sqlOf), [
      'SELECT * FROM tickets WHERE owner_id = $1 LIMIT 10',
      'UPDATE tickets SET closed = TRUE WHERE id = $1',
      'SELECT count(*) FROM tickets WHERE owner_id = $1',
      'DELETE FROM tickets WHERE owner_id = $1',
      'SELECT * FROM tickets t WHERE (t.owner_id = $1)',
      'SELECT count(*) FROM tickets WHERE id = $1 LIMIT 1',
      'SELECT * FROM sticky_note WHERE text = $1 LIMIT 1',
    ]);
    // Alone, the file does not say what Ticket is: its statics are not read as TypeORM's.
    assert.ok(!read(text, '/ws/src/routes/close.ts', false).map(sqlOf).some((q) => q.includes('FROM tickets')));
  });

  it('reads increment, decrement and the aggregates of a column, on an entity and on a manager', () => {
    const text = [
      "import { EntityManager } from 'typeorm';",
      "import { Ticket } from '../store';",
      'export async function bump(em: EntityManager, owner: string, by: number) {',
      "  await Ticket.increment({ owner_id: owner }, 'views', by);",
      "  await em.decrement(Ticket, { id: owner }, 'views', 2);",
      "  const total = await Ticket.sum('views', { owner_id: owner });",
      "  return [total, await em.maximum(Ticket, 'views', { closed: false })];",
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/routes/bump.ts').map(sqlOf), [
      'UPDATE tickets SET views = views + $2 WHERE owner_id = $1',
      'UPDATE tickets SET views = views - 2 WHERE id = $1',
      'SELECT SUM(views) FROM tickets WHERE owner_id = $1',
      'SELECT MAX(views) FROM tickets WHERE closed = FALSE',
    ]);
  });

  it("reads a manager's query builder that updates or deletes the entity it names", () => {
    const text = [
      "import { EntityManager } from 'typeorm';",
      "import { Ticket } from '../store';",
      'export async function tidy(em: EntityManager, id: string) {',
      "  await em.createQueryBuilder().update(Ticket).set({ closed: true }).where('id = :id', { id }).execute();",
      "  await em.createQueryBuilder().delete().from(Ticket).where('owner_id = :id', { id }).execute();",
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/routes/tidy.ts').map(sqlOf), [
      'UPDATE tickets SET closed = TRUE WHERE (id = $1)',
      'DELETE FROM tickets WHERE (owner_id = $1)',
    ]);
  });

  it("reads a query builder's insert as an INSERT of the entity `into` names, which reads no rows, never as a SELECT", async () => {
    const text = [
      "import { EntityManager } from 'typeorm';",
      "import { Ticket } from '../store';",
      'export async function open(em: EntityManager, owner: string, rows: object[]) {',
      "  await em.createQueryBuilder().insert().into(Ticket).values({ owner_id: owner, closed: false }).execute();",
      "  await em.createQueryBuilder().insert().into(Ticket).values([{ owner_id: 'a', views: 1 }, { owner_id: 'b', views: 2 }]).orIgnore().execute();",
      '  await em.createQueryBuilder().insert().into(Ticket).values(rows).execute();',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/src/routes/open.ts');
    assert.deepEqual(qs.map(sqlOf), [
      'INSERT INTO tickets (owner_id, closed) VALUES ($1, FALSE)',
      "INSERT INTO tickets (owner_id, views) VALUES ('a', 1), ('b', 2) ON CONFLICT DO NOTHING",
      'INSERT INTO tickets DEFAULT VALUES',
    ]);
    assert.match((qs[2] as FoundSqlQuery).warnings.join(' '), /values it inserts are not written out here/);
    await loadSqlParser();
    for (const q of qs) {
      const parsed = parsePostgresQuerySync(sqlOf(q));
      assert.ok(!parsed.ok && /reads no rows/.test(parsed.refusal), `${sqlOf(q)} read as a query with rows to index`);
    }
  });

  it("reads a data source a getter returns, and either of two managers, in a file that does not import typeorm", () => {
    const text = [
      "import { Home } from '../store/Home';",
      "import { Ticket } from '../store';",
      'export class Desk {',
      '  constructor(private readonly home: Home) {}',
      "  open() { return this.home.source.createQueryBuilder().select('t').from(Ticket, 't').where('t.owner_id = :o', { o: 'x' }).getCount(); }",
      '  one(id: string) { const work = this.home.current; return (work || this.home.source).find(Ticket, { where: { id } }); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/routes/desk.ts').map(sqlOf), [
      "SELECT count(*) FROM tickets t WHERE (t.owner_id = 'x')",
      'SELECT * FROM tickets WHERE id = $1',
    ]);
    assert.deepEqual(read(text, '/ws/src/routes/desk.ts', false).map(sqlOf), []);
  });

  it("reads a callback's parameter as the manager the called function's declared type gives it", () => {
    const text = [
      "import { inWork, type Work } from '../store/Home';",
      "import { Ticket } from '../store';",
      'export class Lookup {',
      '  constructor(private readonly work: Work) {}',
      '  byOwner(owner: string) { return this.work(undefined, (m) => m.find(Ticket, { where: { owner_id: owner } })); }',
      '  closed() { return inWork((x) => x.count(Ticket, { where: { closed: true } })); }',
      '  plain(list: string[]) { return list.map((m) => m.length); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/routes/lookup.ts').map(sqlOf), [
      'SELECT * FROM tickets WHERE owner_id = $1',
      'SELECT count(*) FROM tickets WHERE closed = TRUE',
    ]);
  });

  it("does not read the statics of a class of the workspace that does not extend TypeORM's BaseEntity", () => {
    const text = [
      "import { Drawer } from '../cache/Shelf';",
      'export const list = (owner: string) => Drawer.find({ where: { owner } });',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/routes/list.ts').map(sqlOf), []);
  });

  it('names the table of an entity imported from another module where a manager is given the class', () => {
    const text = [
      "import { EntityManager } from 'typeorm';",
      "import { Ticket } from '../store';",
      "export const mine = (em: EntityManager, owner: string) => em.find(Ticket, { where: { owner_id: owner } });",
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/routes/mine.ts').map(sqlOf), ['SELECT * FROM tickets WHERE owner_id = $1']);
  });
});

describe('finder: node-postgres statements written in pieces', () => {
  const read = reader({});

  it('reads strings joined with +, constants as their text and other values as parameters', () => {
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      "const COLUMNS = 'id, label';",
      'export const tags = (owner: string) =>',
      "  pool.query('SELECT ' + COLUMNS + ' FROM tags ' + 'WHERE owner = $1 AND label <> ' + owner, [owner]);",
      "export const named = (n: string) => pool.query(\"SELECT id FROM tags \" +\n  \"WHERE label = $1\", [n]);",
    ].join('\n');
    assert.deepEqual(read(text, '/ws/tags.ts').map(sqlOf), ['SELECT id, label FROM tags WHERE owner = $1 AND label <> $2', 'SELECT id FROM tags WHERE label = $1']);
  });

  it('reads a `$` written before a number chosen at run time as one placeholder, in a + join and in a template', () => {
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      'export const byOwner = (owner: string, i: number) =>',
      "  pool.query('SELECT id FROM tags WHERE owner = $' + i, [owner]);",
      'export const byLabel = (label: string, i: number) =>',
      '  pool.query(`SELECT id FROM tags WHERE label = $${i + 1} AND note = $$a$$`, [label]);',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/tags.ts').map(sqlOf), ['SELECT id FROM tags WHERE owner = $1', 'SELECT id FROM tags WHERE label = $1 AND note = $$a$$']);
  });

  it('reads a statement a function appends to with +=, every optional part present', () => {
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      "const HIDDEN = 'hidden';",
      'export async function feed(user: string, since?: Date, limit?: number) {',
      "  let statement = 'SELECT * FROM posts WHERE author = $1';",
      '  const params: unknown[] = [user];',
      '  if (since) { statement += \' AND created > $2\'; params.push(since); }',
      "  statement += ' AND ' + HIDDEN + ' = false';",
      "  statement += ' ORDER BY created DESC';",
      '  if (limit) statement += ` LIMIT ${limit}`;',
      '  return pool.query(statement, params);',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/feed.ts');
    assert.deepEqual(qs.map(sqlOf), ['SELECT * FROM posts WHERE author = $1 AND created > $2 AND hidden = false ORDER BY created DESC LIMIT $3']);
    assert.match(qs[0]!.warnings.join(' '), /every optional part present/);
  });

  it('reads each statement a conditional chooses between as a query of its own, at the call, each mapped to its text', () => {
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      'export async function contact(byPhone: boolean, key: string, archived: boolean) {',
      '  const lookup = byPhone',
      "    ? 'SELECT id FROM contacts WHERE phone = $1 LIMIT 1'",
      '    : `SELECT id FROM contacts WHERE lower(email) = lower($1) LIMIT 1`;',
      '  await pool.query(lookup, [key]);',
      "  return pool.query(archived ? 'SELECT id FROM old_contacts WHERE id = $1' : 'SELECT id FROM contacts WHERE id = $1', [key]);",
      '}',
    ].join('\n');
    const qs = read(text, '/ws/contacts.ts');
    assert.deepEqual(qs.map(sqlOf), [
      'SELECT id FROM contacts WHERE phone = $1 LIMIT 1',
      'SELECT id FROM contacts WHERE lower(email) = lower($1) LIMIT 1',
      'SELECT id FROM old_contacts WHERE id = $1',
      'SELECT id FROM contacts WHERE id = $1',
    ]);
    assert.equal(text.slice(qs[1]!.range.start, qs[1]!.range.end), 'pool.query(lookup, [key])');
    assert.equal(text.slice((qs[1] as FoundSqlQuery).textRange.start, (qs[1] as FoundSqlQuery).textRange.end), 'SELECT id FROM contacts WHERE lower(email) = lower($1) LIMIT 1');
    assert.match(qs[0]!.warnings.join(' '), /one of 2 statements, chosen at run time by `byPhone`/);
  });

  it('reads each statement the branches of an if ... else chain assign to a name as a query of its own, and nothing when a branch assigns none', () => {
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      "const SHIPPED = 'SELECT id FROM shipments WHERE order_id = $1';",
      'export async function tracking(kind: string, id: number) {',
      '  let sql, label;',
      "  if (kind === 'parcel') {",
      "    sql = 'SELECT id FROM parcels WHERE order_id = $1';",
      "    label = 'parcel';",
      "  } else if (kind === 'freight') sql = `SELECT id FROM freight WHERE order_id = $1`;",
      '  else {',
      '    sql = SHIPPED;',
      '  }',
      '  await pool.query(sql, [id]);',
      '  let other;',
      "  if (kind === 'parcel') other = 'SELECT 1 FROM parcels WHERE id = $1';",
      "  else if (kind === 'freight') other = 'SELECT 1 FROM freight WHERE id = $1';",
      '  await pool.query(other, [id]);',
      '  let late;',
      "  if (kind === 'parcel') late = 'SELECT 1 FROM parcels WHERE late';",
      "  else late = 'SELECT 1 FROM freight WHERE late';",
      "  late = 'SELECT 1 FROM shipments WHERE late';",
      '  return pool.query(late);',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/tracking.ts');
    assert.deepEqual(qs.map(sqlOf), [
      'SELECT id FROM parcels WHERE order_id = $1',
      'SELECT id FROM freight WHERE order_id = $1',
      'SELECT id FROM shipments WHERE order_id = $1',
    ]);
    assert.match(qs[0]!.warnings.join(' '), /one of 3 statements, chosen at run time by `kind === 'parcel'`/);
  });

  it('reads the first branch of an if ... else chain that appends in each branch, and the optional parts around it', () => {
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      'export async function user(email?: string, phone?: string, active?: boolean) {',
      '  const params: string[] = [];',
      "  let query = 'SELECT id, email FROM users';",
      '  if (email && phone) {',
      '    params.push(email, phone);',
      "    query += ' WHERE email = $1 AND phone = $2';",
      '  } else if (email) {',
      '    params.push(email);',
      "    query += ' WHERE email = $1';",
      '  } else {',
      "    query += ' WHERE phone = $1';",
      '  }',
      "  if (active) query += ' AND active';",
      "  query += ' LIMIT 1';",
      '  return pool.query(query, params);',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/users.ts');
    assert.deepEqual(qs.map(sqlOf), ['SELECT id, email FROM users WHERE email = $1 AND phone = $2 AND active LIMIT 1']);
    assert.match(qs[0]!.warnings.join(' '), /first branch's \(not 'WHERE email = \$1', 'WHERE phone = \$1'\)/);
  });

  it("reads a list joined in place where names stand as a stand-in named for the list, quoted where PostgreSQL reserves the word", async () => {
    await loadSqlParser();
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      'export async function add(columns: string[], marks: string[], values: unknown[], side: { left: string }) {',
      '  await pool.query(`INSERT INTO products (${columns.join(", ")}, created_at) VALUES (${marks.join(", ")}, now())`, values);',
      '  return pool.query(`SELECT id FROM ${side.left} WHERE id = $1`, values);',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/products.ts');
    assert.deepEqual(qs.map(sqlOf), ['INSERT INTO products (columns, created_at) VALUES ($2, now())', 'SELECT id FROM "left" WHERE id = $1']);
    assert.deepEqual(qs.map((q) => (q as FoundSqlQuery).standInNames), [['columns'], ['left']]);
  });

  it('points a finding at the piece that holds it, and never writes the whole statement back over one piece', async () => {
    await loadSqlParser();
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      'export async function page(owner: string, since?: Date) {',
      "  let sql = 'SELECT * FROM posts WHERE owner = $1';",
      "  if (since) sql += ' AND created > $2';",
      "  sql += ' ORDER BY created DESC, id DESC LIMIT 20 OFFSET 10000';",
      '  return pool.query(sql, [owner]);',
      '}',
    ].join('\n');
    const [q] = read(text, '/ws/page.ts');
    const findings = analyzeQuery(q!, text, undefined).findings;
    const skip = findings.find((f) => f.code === 'qpi.skip-pagination');
    assert.ok(skip);
    const at = anchorRange(q!, skip.anchor);
    assert.equal(text.slice(at.start, at.end), 'OFFSET 10000');
    assert.equal(skip.fix, undefined);
  });

  it("reads a method's constant statement although another method of the class assigns a variable of the same name", () => {
    const text = [
      "import { Pool } from 'pg';",
      'export class Posts {',
      '  constructor(private readonly pool: Pool) {}',
      '  one(id: string) {',
      "    const sql = 'SELECT * FROM posts WHERE id = $1';",
      '    return this.pool.query(sql, [id]);',
      '  }',
      '  recent(limit?: number) {',
      "    let sql = 'SELECT * FROM posts ORDER BY created DESC';",
      '    if (limit) sql += ` LIMIT ${limit}`;',
      '    return this.pool.query(sql);',
      '  }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/posts.ts').map(sqlOf), ['SELECT * FROM posts WHERE id = $1', 'SELECT * FROM posts ORDER BY created DESC LIMIT $1']);
  });
});

describe('finder: node-postgres statements read from .sql files whose path the code shows', () => {
  const files: Record<string, string> = {
    '/ws/src/db/sql/orders-by-customer.sql': '-- the latest orders of a customer\nSELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT 20;\n',
    '/ws/src/db/sql/close-order.sql': 'UPDATE orders SET closed_at = now() WHERE id = $1',
    '/ws/src/db/sql/schema.sql': 'CREATE TABLE orders (id int);\nUPDATE orders SET id = id + 1 WHERE id < 0;\nCREATE TABLE customers (id int);',
    '/ws/src/db/sql.ts': [
      "import { readFileSync } from 'node:fs';",
      "import path from 'node:path';",
      "export const sql = (name: string) => readFileSync(path.join(__dirname, 'sql', `${name}.sql`), 'utf8');",
    ].join('\n'),
  };
  const read = reader(files);

  it('reads the file a literal path or a loader given a literal name names, anchored at the module, and maps it to the call', async () => {
    await loadSqlParser();
    const text = [
      "import fs from 'fs';",
      "import { join, dirname } from 'path';",
      "import { fileURLToPath } from 'url';",
      "import { Pool } from 'pg';",
      "import { sql } from './sql';",
      'const here = dirname(fileURLToPath(import.meta.url));',
      'const pool = new Pool();',
      "const CLOSE = fs.readFileSync(join(here, 'sql/close-order.sql')).toString();",
      "const QUERIES = { latest: fs.readFileSync(`${__dirname}/sql/orders-by-customer.sql`, 'utf8') };",
      'export const latest = (c: string) => pool.query(QUERIES.latest, [c]);',
      'export const close = (id: string) => pool.query(CLOSE, [id]);',
      "export const viaLoader = (c: string) => pool.query(sql('orders-by-customer'), [c]);",
      "export const notShown = (name: string) => pool.query(sql(name));",
      "export const fromCwd = () => pool.query(fs.readFileSync('sql/close-order.sql', 'utf8'));",
      "export const schema = () => pool.query(sql('schema'));",
    ].join('\n');
    const qs = read(text, '/ws/src/db/orders.ts') as FoundSqlQuery[];
    assert.deepEqual(qs.map(sqlOf), [
      'SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT 20',
      'UPDATE orders SET closed_at = now() WHERE id = $1',
      'SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT 20',
    ]);
    const at = (q: FoundSqlQuery) => text.slice(q.textRange.start, q.textRange.end);
    assert.equal(at(qs[2]!), "sql('orders-by-customer')");
    assert.match(qs[2]!.warnings.join(' '), /read from \.\/sql\/orders-by-customer\.sql, which sql\(\) loads/);
    assert.ok(qs[0]!.runs.some(([, , l, fl]) => l !== fl), 'never written back over the call');
  });

  it('parses no .sql file longer than one statement could be', async () => {
    await loadSqlParser();
    const long = `SELECT id FROM orders WHERE note = '${'x'.repeat(MAX_STATEMENT_FILE)}'`;
    const readLong = reader({ ...files, '/ws/src/db/sql/long.sql': long, '/ws/src/db/sql/short.sql': 'SELECT id FROM orders WHERE id = $1' });
    const text = [
      "import { Pool } from 'pg';",
      "import { sql } from './sql';",
      'const pool = new Pool();',
      "export const a = () => pool.query(sql('long'));",
      "export const b = (id: string) => pool.query(sql('short'), [id]);",
    ].join('\n');
    assert.deepEqual(readLong(text, '/ws/src/db/orders.ts').map(sqlOf), ['SELECT id FROM orders WHERE id = $1']);
  });

  it('reads a statement a constant object holds by its property', () => {
    const text = [
      "import { Pool } from 'pg';",
      'const pool = new Pool();',
      "const Q = { byOwner: 'SELECT id FROM tags WHERE owner = $1', recent: `SELECT id FROM tags ORDER BY created DESC LIMIT 5` };",
      'export const tags = (o: string) => pool.query(Q.byOwner, [o]);',
      'export const recent = () => pool.query(Q.recent);',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/tags.ts').map(sqlOf), ['SELECT id FROM tags WHERE owner = $1', 'SELECT id FROM tags ORDER BY created DESC LIMIT 5']);
  });
});

describe('finder: node-postgres statements a registry of .sql files gives for a key', () => {
  const files: Record<string, string> = {
    '/ws/src/queries/orders/latest.sql': 'SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT $2',
    '/ws/src/queries/orders/unpaged/latest.sql': 'SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC',
    '/ws/src/queries/stores/one.sql': 'SELECT * FROM stores WHERE id = $1;',
    '/ws/src/queries/migrate.sql': 'CREATE TABLE stores (id int);\nCREATE TABLE orders (id int);',
    // A registry: a constant of keys to files, a class that reads each through it from its own folder.
    '/ws/src/queries/index.ts': [
      "import fs from 'fs';",
      "import path from 'path';",
      "import { fileURLToPath } from 'url';",
      'const FILES = {',
      "  orders_latest: 'orders/latest.sql',",
      "  orders_latest_unpaged: 'orders/unpaged/latest.sql',",
      "  'stores-one': 'stores/one.sql',",
      "  migrate: 'migrate.sql',",
      '} as const;',
      'type Key = keyof typeof FILES;',
      'class Queries {',
      '  private cache = {} as Record<Key, string>;',
      '  private load = (key: Key) => {',
      '    const __filename = fileURLToPath(import.meta.url);',
      '    const __dirname = path.dirname(__filename);',
      '    return fs.readFileSync(path.join(__dirname, FILES[key])).toString();',
      '  };',
      '  get = (key: Key): string => (this.cache[key] ??= this.load(key));',
      '}',
      'export const queries = new Queries();',
      'export const query = (key: Key) => queries.get(key);',
    ].join('\n'),
    // A look-alike: keys to files, read from the working folder (not the module's): which file is not in the code.
    '/ws/src/other/index.ts': [
      "import { readFileSync } from 'fs';",
      "const FILES = { orders_latest: 'orders/latest.sql' };",
      'export const get = (key: keyof typeof FILES) => readFileSync(FILES[key], "utf8");',
    ].join('\n'),
  };
  const read = reader(files);

  it('reads the file the literal key maps to, through the registry\'s object, function or namespace, and maps it to the call', async () => {
    await loadSqlParser();
    const text = [
      "import { Pool } from 'pg';",
      "import { queries, query } from '../queries/index.js';",
      "import * as Q from '../queries';",
      "import * as other from '../other';",
      'const pool = new Pool();',
      "export const latest = (c: string, n: number) => pool.query(queries.get('orders_latest'), [c, n]);",
      "export const all = (c: string) => pool.query(query('orders_latest_unpaged'), [c]);",
      "export const store = (id: string) => pool.query(Q.queries.get('stores-one'), [id]);",
      "export const unknownKey = () => pool.query(queries.get('orders_oldest'));",
      "export const byName = (key: 'orders_latest') => pool.query(queries.get(key));",
      "export const wholeScript = () => pool.query(queries.get('migrate'));",
      "export const fromCwd = () => pool.query(other.get('orders_latest'));",
    ].join('\n');
    const qs = read(text, '/ws/src/routes/orders.ts') as FoundSqlQuery[];
    assert.deepEqual(qs.map(sqlOf), [
      'SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT $2',
      'SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC',
      'SELECT * FROM stores WHERE id = $1',
    ]);
    const at = (q: FoundSqlQuery) => text.slice(q.textRange.start, q.textRange.end);
    assert.equal(at(qs[0]!), "queries.get('orders_latest')");
    assert.match(qs[0]!.warnings.join(' '), /read from \.\.\/queries\/orders\/latest\.sql, the file \.\.\/queries\/index\.ts maps 'orders_latest' to; edit it there/);
    assert.ok(qs[0]!.runs.some(([, , l, fl]) => l !== fl), 'never written back over the call');
  });

  it('reads a key given to the registry in its own module', async () => {
    await loadSqlParser();
    const text = [
      "import fs from 'node:fs';",
      "import { join } from 'node:path';",
      "import { Pool } from 'pg';",
      "const FILES = { latest: 'orders/latest.sql' };",
      'const sql = (k: keyof typeof FILES) => fs.readFileSync(join(__dirname, FILES[k]), "utf8");',
      'const pool = new Pool();',
      "export const latest = (c: string, n: number) => pool.query(sql('latest'), [c, n]);",
    ].join('\n');
    const qs = read(text, '/ws/src/queries/here.ts') as FoundSqlQuery[];
    assert.deepEqual(qs.map(sqlOf), ['SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT $2']);
    assert.match(qs[0]!.warnings.join(' '), /read from \.\/orders\/latest\.sql, the file this module maps 'latest' to/);
  });
});

describe("finder: sql-template-strings statements run by node-postgres", () => {
  const read = reader({});
  const text = [
    "import { Pool, PoolClient } from 'pg';",
    "import SQL, { SQLStatement } from 'sql-template-strings';",
    'const pool = new Pool();',
    'export const byId = (id: number) => pool.query(SQL`SELECT * FROM books WHERE id = ${id}`);',
    'export const search = (author: string, year?: number) => {',
    '  const statement = SQL`SELECT * FROM books WHERE author = ${author}`;',
    '  if (year) statement.append(SQL` AND year = ${year}`);',
    "  statement.append(' ORDER BY title');",
    '  return pool.query(statement.text, statement.values);',
    '};',
    'export const shelve = (c: PoolClient, shelf: string) => c.query(SQL`UPDATE books SET shelf = ${shelf}`.append(SQL` WHERE shelf IS NULL`));',
    'export const byAuthor = (author: string): SQLStatement => {',
    '  const q = SQL`SELECT id FROM books WHERE author = ${author}`;',
    '  q.append(SQL` LIMIT 10`);',
    '  return q;',
    '};',
    'export const drop = (c: PoolClient, id: number) => { const s = SQL`DELETE FROM books WHERE id = ${id}`; return c.query({ text: s.text, values: s.values }); };',
  ].join('\n');

  it('reads the statement with what is appended to it, once, where it is run (or where it is made, when it is returned)', () => {
    const qs = read(text, '/ws/books.ts');
    assert.deepEqual(qs.map(sqlOf), [
      'SELECT * FROM books WHERE id = $1',
      'SELECT * FROM books WHERE author = $1 AND year = $2 ORDER BY title',
      'UPDATE books SET shelf = $1 WHERE shelf IS NULL',
      'SELECT id FROM books WHERE author = $1 LIMIT 10',
      'DELETE FROM books WHERE id = $1',
    ]);
    const at = (q: FoundQuery) => text.slice(q.range.start, q.range.end);
    assert.equal(at(qs[1]!), 'pool.query(statement.text, statement.values)');
    assert.equal(at(qs[4]!), 'c.query({ text: s.text, values: s.values })');
    assert.match(qs[1]!.warnings.join(' '), /every optional part present/);
  });
});

describe('finder: sql-syntax statements spread into node-postgres', () => {
  const read = reader({});
  before(async () => {
    await loadSqlParser();
  });
  const text = [
    "import { Pool } from 'pg';",
    "import SQLSyntax, { sqls, escapeIdentifier } from 'sql-syntax';",
    'export class Shelf {',
    '  private pool = new Pool();',
    '  private tbl = escapeIdentifier(this.tableName);',
    '  constructor(private tableName: string) {}',
    '  byId(id: number) { return this.pool.query(...sqls`SELECT * FROM books WHERE id = ${id}`.toQuery()); }',
    '  async byAuthor(author: string, cols: string[]) {',
    '    const inner = sqls`SELECT id FROM authors WHERE name = ${author}`;',
    '    const statement = sqls`SELECT ${SQLSyntax.join([sqls`id`, sqls`title`], sqls`,`)} FROM books WHERE author_id IN (${inner}) AND shelf = ${"a"}`;',
    '    return this.pool.query(...statement.toQuery());',
    '  }',
    '  nodes(id: string) { const tbl = escapeIdentifier(this.tableName); return this.pool.query(...sqls`SELECT * FROM ${tbl} WHERE parent = ${id}`.toQuery()); }',
    "  logs() { return this.pool.query(...sqls`SELECT * FROM ${escapeIdentifier('app.logs')} LIMIT 5`.toQuery()); }",
    '}',
  ].join('\n');

  it('reads the tag where toQuery() hands it to query(), values as parameters and fragments spliced in', () => {
    const qs = read(text, '/ws/shelf.ts');
    assert.deepEqual(qs.map(sqlOf), [
      'SELECT * FROM books WHERE id = $1',
      'SELECT id,title FROM books WHERE author_id IN (SELECT id FROM authors WHERE name = $1) AND shelf = $2',
      'SELECT * FROM tablename WHERE parent = $1',
      'SELECT * FROM "app"."logs" LIMIT 5',
    ]);
    assert.equal(text.slice(qs[1]!.range.start, qs[1]!.range.end), 'this.pool.query(...statement.toQuery())');
    assert.deepEqual((qs[2] as FoundSqlQuery).standInNames, ['tablename']);
  });

  it("reads a fragment's where, orderBy and limit, and SQLSyntax's joinWithAnd, joinWithOr and csv", () => {
    const qs = read([
      "import { Pool } from 'pg';",
      "import SQLSyntax, { sqls } from 'sql-syntax';",
      'const pool = new Pool();',
      'export async function find(owner: string, tag: string | undefined, access: SQLSyntax) {',
      '  const filters = [sqls`owner = ${owner}`, SQLSyntax.joinWithOr([sqls`shared`, sqls`public`])];',
      '  if (tag) filters.push(sqls`tag = ${tag}`);',
      '  const statement = sqls`SELECT ${SQLSyntax.csv(sqls`id`, sqls`title`)} FROM notes`.where(SQLSyntax.joinWithAnd(filters)).orderBy(sqls`created`).limit(20);',
      '  await pool.query(...statement.toQuery());',
      '  return pool.query(...sqls`SELECT id FROM notes`.where(SQLSyntax.joinWithAnd([sqls`id = ${owner}`, access])).toQuery());',
      '}',
    ].join('\n'), '/ws/notes.ts');
    assert.deepEqual(qs.map(sqlOf), [
      'SELECT id, title FROM notes WHERE owner = $1 AND (shared OR public) AND tag = $2 ORDER BY created LIMIT $3',
      'SELECT id FROM notes WHERE id = $1 AND TRUE',
    ]);
    assert.match(qs[1]!.warnings.join(' '), /The SQL of \$\{access\} \(a condition\) is built where this file does not show it/);
    assert.match(qs[0]!.warnings.join(' '), /every optional part present/);
  });
});

describe('finder: MongoDB collections held by a class, assigned in its constructor or injected by a token', () => {
  it("reads a field named `collection` that the constructor assigns as the collection it holds, not the driver's method", () => {
    const text = [
      "import { Collection, Db } from 'mongodb';",
      'export class Tickets {',
      '  private collection: Collection<{ seq: number }>;',
      "  constructor(private readonly source: { db(): Db }) { this.collection = this.source.db().collection('tickets'); }",
      "  next() { return this.collection.findOneAndUpdate({ name: 'main' }, { $inc: { seq: 1 } }); }",
      '}',
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts', {}).queries.map(sqlOf), ['tickets.findOneAndUpdate']);
  });

  it("names a base repository's collection in each subclass from what its super call gives, the parameter or the name", () => {
    const read = reader({
      '/ws/src/base.ts': [
        "import { Collection, Db, Document, Filter } from 'mongodb';",
        'export abstract class Store<T extends Document> {',
        '  constructor(protected readonly collection: Collection<T>) {}',
        '  byId(id: string) { return this.collection.findOne({ _id: id } as Filter<T>); }',
        '}',
        'export abstract class NamedStore<T extends Document> {',
        '  protected readonly items: Collection<T>;',
        '  constructor(db: Db, name: string) { this.items = db.collection<T>(name); }',
        '}',
      ].join('\n'),
    });
    const text = [
      "import { Db } from 'mongodb';",
      "import { Store, NamedStore } from './base';",
      'export class Users extends Store<{ email: string }> {',
      "  constructor(db: Db) { super(db.collection('users')); }",
      '  byEmail(email: string) { return this.collection.findOne({ email }); }',
      '}',
      'export class Badges extends NamedStore<{ owner: string }> {',
      "  constructor(db: Db) { super(db, 'badges'); }",
      '  of(owner: string) { return this.items.find({ owner }).toArray(); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/stores.ts').map(sqlOf), ['users.findOne', 'badges.find']);
    // In the base class's own method, each subclass gives another collection.
    const base = [
      "import { Collection, Document, Filter } from 'mongodb';",
      'export abstract class Store<T extends Document> {',
      '  constructor(protected readonly collection: Collection<T>) {}',
      '  byId(id: string) { return this.collection.findOne({ _id: id } as Filter<T>); }',
      '}',
    ].join('\n');
    assert.deepEqual(read(base, '/ws/src/other-base.ts').map(sqlOf), ['.findOne']);
  });

  it("names a base class's field that a set-up method opens from its parameter by what each subclass's call of it gives", () => {
    const read = reader({
      '/ws/src/syncer.ts': [
        "import { Collection, Document, MongoClient } from 'mongodb';",
        'export abstract class Syncer<T extends Document> {',
        '  protected collection?: Collection<T>;',
        '  protected client?: MongoClient;',
        '  protected async open(collectionName: string, keys: Record<string, number>[]) {',
        '    if (this.client) {',
        '      this.collection = this.client.db(`sync_${process.env.CHAIN}`).collection<T>(collectionName);',
        '      for (const key of keys) await this.collection.createIndex(key);',
        '    }',
        '  }',
        '}',
      ].join('\n'),
    });
    const text = [
      "import { Collection } from 'mongodb';",
      "import { Syncer } from './syncer';",
      'export class HoldersSync extends Syncer<{ owner: string }> {',
      '  private holders?: Collection<{ owner: string }>;',
      "  protected async open() { await super.open('holders', [{ owner: 1 }]); this.holders = this.collection as Collection<{ owner: string }>; }",
      '  write(docs: { owner: string }[]) { return this.holders!.deleteMany({ owner: { $in: docs.map((d) => d.owner) } }); }',
      '}',
      'export class VotesSync extends Syncer<{ voter: string }> {',
      "  async start() { await this.open('votes', [{ voter: 1 }]); }",
      '  clear(voter: string) { return this.collection!.deleteOne({ voter }); }',
      '}',
      'export class EitherSync extends Syncer<{ id: string }> {',
      "  async start(old: boolean) { if (old) await this.open('old_items', []); else await this.open('items', []); }",
      '  drop(id: string) { return this.collection!.deleteOne({ id }); }',
      '}',
    ].join('\n');
    // Two calls that open different collections leave it unnamed: never one of them.
    const qs = read(text, '/ws/src/syncs.ts');
    assert.deepEqual(qs.map(sqlOf), ['holders.deleteMany', 'votes.deleteOne', '.deleteOne']);
    assert.deepEqual(qs[2]!.engine === 'mongodb' && qs[2]!.warnings, [
      'The collection is the parameter collectionName, which the 2 calls of open in syncs.ts give as old_items or items: the query runs on each, so no index can be named for one of them here.',
    ]);
    // The base class in the same file: its own method's query stays chosen by each subclass.
    const together = [
      "import { Collection, Document, MongoClient } from 'mongodb';",
      'abstract class Syncer<T extends Document> {',
      '  protected collection?: Collection<T>;',
      '  constructor(protected client: MongoClient) {}',
      '  protected open(name: string) { this.collection = this.client.db().collection<T>(name); }',
      '  purge() { return this.collection!.deleteMany({}); }',
      '}',
      'export class PermsSync extends Syncer<{ actor: string }> {',
      "  start() { this.open('permissions'); }",
      '  of(actor: string) { return this.collection!.find({ actor }).toArray(); }',
      '}',
    ].join('\n');
    assert.deepEqual(findQueries(together, 'script', 'ts', {}).queries.map(sqlOf), ['.deleteMany', 'permissions.find']);
  });

  it('reads a collection a getter of the base class opens by the name each subclass declares', () => {
    const text = [
      "import { Collection, Db, Document } from 'mongodb';",
      'abstract class Repo<T extends Document> {',
      '  protected abstract readonly collectionName: string;',
      '  constructor(private readonly db: Db) {}',
      '  protected get collection(): Collection<T> { return this.db.collection<T>(this.collectionName); }',
      '  count() { return this.collection.countDocuments({}); }',
      '}',
      'export class Invoices extends Repo<{ paid: boolean }> {',
      "  protected readonly collectionName = 'invoices';",
      '  unpaid() { return this.collection.find({ paid: false }).toArray(); }',
      '}',
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts', {}).queries.map(sqlOf), ['.countDocuments', 'invoices.find']);
  });

  it("reads a class's own getCollection() method, named in a subclass by the name its super call gives the base class", () => {
    const text = [
      "import { MongoClient } from 'mongodb';",
      'abstract class MongoRepo {',
      '  constructor(protected readonly collectionName: string, protected readonly client: MongoClient) {}',
      '  protected async getCollection() { return this.client.db().collection(this.collectionName); }',
      '}',
      'export class Sessions extends MongoRepo {',
      "  constructor(client: MongoClient) { super('sessions', client); }",
      '  async active(user: string) { return (await this.getCollection()).find({ user, expired: false }).toArray(); }',
      '}',
      'export class Audit {',
      '  constructor(private readonly client: MongoClient) {}',
      "  private getCollection() { return this.client.db().collection('audit'); }",
      '  recent() { return this.getCollection().find({}).sort({ at: -1 }).limit(20).toArray(); }',
      '}',
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts', {}).queries.map(sqlOf), ['sessions.find', 'audit.find']);
  });

  it('names a collection injected by a token from the one provider the module declaring the token gives, returned from a block', () => {
    const read = reader({
      '/ws/src/parcels/parcels.provider.ts': [
        "import { MongoClient } from 'mongodb';",
        "export const PARCELS = Symbol('PARCELS');",
        "const PARCELS_NAME = 'parcels';",
        'export const parcelsProvider = {',
        '  provide: PARCELS,',
        '  useFactory: async (client: MongoClient) => {',
        '    try {',
        '      const parcels = client.db().collection(PARCELS_NAME);',
        '      await parcels.createIndex({ trackingCode: 1 });',
        '      return parcels;',
        '    } catch (e) {',
        '      process.exit(1);',
        '    }',
        '  },',
        "  inject: ['MONGO_CLIENT'],",
        '};',
      ].join('\n'),
    });
    const text = [
      "import { Inject, Injectable } from '@nestjs/common';",
      "import { Collection } from 'mongodb';",
      "import { PARCELS } from './parcels.provider';",
      '@Injectable()',
      'export class ParcelsDao {',
      '  constructor(@Inject(PARCELS) private readonly collection: Collection<{ trackingCode: string }>) {}',
      '  byCode(trackingCode: string) { return this.collection.findOne({ trackingCode }); }',
      '}',
      'export class ParcelsReport {',
      '  @Inject(PARCELS) private readonly parcels!: Collection;',
      "  late() { return this.parcels.countDocuments({ state: 'late' }); }",
      '}',
    ].join('\n');
    assert.deepEqual(read(text, '/ws/src/parcels/parcels.dao.ts').map(sqlOf), ['parcels.findOne', 'parcels.countDocuments']);
    assert.deepEqual(read(text, '/ws/src/parcels/parcels.dao.ts', false).map(sqlOf), ['.findOne', '.countDocuments']);
    // Two providers of the token: which one the module uses is not known here.
    const twice = text + "\nexport const other = { provide: PARCELS, useValue: null };";
    assert.deepEqual(read(twice.replace("import { PARCELS } from './parcels.provider';", "const PARCELS = Symbol('P');\nconst first = { provide: PARCELS, useFactory: (c: any) => c.db().collection('parcels') };"), '/ws/src/parcels/parcels.dao.ts').map(sqlOf), ['.findOne', '.countDocuments']);
  });
});

describe('finder: MongoDB collections kept by an instance of an application class, and named by what a method returns', () => {
  const files: Record<string, string> = {
    '/ws/lib/index.ts': "export * as driver from 'mongodb';",
    '/ws/src/store.ts': [
      "import { driver } from '../lib/index';",
      'export class Store {',
      '  readonly orders: driver.Collection<{ total: number }>;',
      '  readonly db: driver.Db;',
      '  constructor(client: driver.MongoClient) {',
      '    const db = client.db();',
      '    this.db = db;',
      "    this.orders = db.collection('orders');",
      '  }',
      '  get settings() { return this.db.collection<{ key: string }>(\'app_settings\'); }',
      '  shardName(shard: number) { return `items_${shard}`; }',
      '}',
      'export function openStore(url: string) { return new Store(new driver.MongoClient(url)); }',
    ].join('\n'),
    '/ws/src/index.ts': "export * from './store';",
    '/ws/src/view.ts': [
      "import { driver } from '../lib/index';",
      "import { Store } from './store';",
      'export abstract class View {',
      '  constructor(protected readonly upstream: Store) {}',
      '  get orders() { return this.upstream.orders; }',
      '  protected itemsName(shard: number) { return this.upstream.shardName(shard); }',
      '}',
      'export class ShardView extends View {',
      '  items(shard: number): driver.Collection<{ sku: string }> { return this.upstream.db.collection(this.itemsName(shard)); }',
      '  legacy(_shard: number): driver.Collection<{ sku: string }> { return this.upstream.orders as any as driver.Collection<{ sku: string }>; }',
      '}',
    ].join('\n'),
  };
  const modules: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f], files: () => Object.keys(files) };
  const read = (text: string, file: string) => findQueries(text, 'script', 'ts', { file, modules }).queries;

  it("reads a member of a class's instance where the class assigns it, a getter returns it or a base class's getter hands it on", () => {
    const text = [
      "import * as stores from './index';",
      "import { Store } from './store';",
      "import { ShardView } from './view';",
      'export async function migrate() {',
      "  const db = stores.openStore('mongodb://x');",
      '  await db.orders.updateMany({ state: null }, { $set: { state: 1 } });',
      '}',
      'export class Report {',
      '  constructor(private readonly store: Store, private readonly view: ShardView) {}',
      "  setting(key: string) { return this.store.settings.findOne({ key }); }",
      '  open() { return this.view.orders.find({ open: true }).toArray(); }',
      '  legacy() { return this.view.legacy(1).countDocuments({ sku: null }); }',
      '}',
      'class Slice {',
      '  readonly collection;',
      '  constructor(store: Store) { this.collection = store.settings; }',
      '}',
      "export function unset(slice: Slice) { return slice.collection.deleteMany({ key: '' }); }",
    ].join('\n');
    // The getter names app_settings, not its property's name; a factory imported through a namespace gives the class.
    assert.deepEqual(read(text, '/ws/src/report.ts').map(sqlOf), ['orders.updateMany', 'app_settings.findOne', 'orders.find', 'orders.countDocuments', 'app_settings.deleteMany']);
  });

  it('names the family a method returns the name of, through the methods it calls', () => {
    const text = [
      "import { ShardView } from './view';",
      'export class Pass {',
      '  constructor(private readonly view: ShardView, private readonly shard: number) {}',
      '  list() { return this.view.items(this.shard).find({ sku: { $gt: \'a\' } }).toArray(); }',
      '  async fix() { const col = this.view.items(this.shard); await this.clear(col); return col.updateOne({ sku: \'b\' }, { $set: { sku: \'c\' } }); }',
      "  private clear(col: ReturnType<ShardView['items']>) { return col.deleteMany({ sku: null }); }",
      '}',
    ].join('\n');
    const qs = read(text, '/ws/src/pass.ts');
    assert.deepEqual(qs.map(sqlOf), ['items_*.find', 'items_*.updateOne', 'items_*.deleteMany']);
    assert.match(qs[0]!.engine === 'mongodb' ? qs[0]!.warnings.join(' ') : '', /family items_\*, named at run time \(`items_\$\{shard\}`\)/);
  });

  it("reads a method of a value asserted to be an application's class: `(view as Shards).items(n)`", () => {
    const text = [
      "import { Collection, Db } from 'mongodb';",
      'class Shards {',
      '  constructor(private readonly db: Db) {}',
      '  items(shard: number): Collection<{ sku: string }> { return this.db.collection(`items_${shard}`); }',
      '}',
      "export const second = (view: unknown, n: number) => (view as Shards).items(n).find({ sku: 'x' }).toArray();",
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts', {}).queries.map(sqlOf), ['items_*.find']);
  });

  it("finds a query on what a class's abstract method returns, typed the driver's Collection, unnamed: each subclass chooses", () => {
    const text = [
      "import { Collection, Db } from 'mongodb';",
      'export abstract class Tables {',
      '  constructor(protected readonly db: Db) {}',
      '  abstract tables(stream: number): Collection<{ name: string }>;',
      '}',
      'export class Drop {',
      '  constructor(private readonly store: Tables, private readonly stream: number) {}',
      '  run(name: string) { return this.store.tables(this.stream).deleteOne({ name }); }',
      '}',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(qs.map(sqlOf), ['.deleteOne']);
  });

  it("reads what the workspace's subclasses implementing an abstract method return: named when they agree, else named in the hover", () => {
    const files: Record<string, string> = {
      '/ws/src/base.ts': [
        "import { Collection, Db } from 'mongodb';",
        'export abstract class Tables {',
        '  constructor(protected readonly db: Db) {}',
        '  abstract tables(stream: number): Collection<{ name: string }>;',
        '}',
      ].join('\n'),
      '/ws/src/v1.ts': [
        "import { Collection } from 'mongodb';",
        "import { Tables } from './base';",
        "export class TablesV1 extends Tables { tables(_stream: number): Collection<{ name: string }> { return this.db.collection('tables'); } }",
      ].join('\n'),
      '/ws/src/v2.ts': [
        "import { Collection } from 'mongodb';",
        "import { Tables } from './base';",
        'export class TablesV2 extends Tables { tables(stream: number): Collection<{ name: string }> { return this.db.collection(`tables_${stream}`); } }',
      ].join('\n'),
    };
    const use = [
      "import { Tables } from './base';",
      'export const drop = (store: Tables, stream: number, name: string) => store.tables(stream).deleteOne({ name });',
    ].join('\n');
    const read = (all: Record<string, string>) => {
      const mods: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in all }, from, spec), read: (f) => all[f], files: () => Object.keys(all) };
      return findQueries(use, 'script', 'ts', { file: '/ws/src/use.ts', modules: mods }).queries;
    };
    const differ = read({ ...files, '/ws/src/use.ts': use });
    assert.deepEqual(differ.map(sqlOf), ['.deleteOne']);
    assert.deepEqual(differ[0]!.engine === 'mongodb' && differ[0]!.warnings, [
      'The collection is what tables returns, which the 2 implementations of tables in v1.ts, v2.ts give as tables or tables_*: the query runs on each, so no index can be named for one of them here.',
    ]);
    const agree = read({ ...files, '/ws/src/v2.ts': files['/ws/src/v2.ts']!.replace('`tables_${stream}`', "'tables'"), '/ws/src/use.ts': use });
    assert.deepEqual(agree.map(sqlOf), ['tables.deleteOne']);
  });

  it('reads the collection an object a local function returns holds, kept in a constant unless there is nothing to build', () => {
    const text = [
      "import { Db } from 'mongodb';",
      'export async function lookups(db: Db, ids: string[]) {',
      '  const build = (id: string) => {',
      '    const collection = db.collection(`lookup_${id}`);',
      '    return { collection, pipeline: [{ $match: { id } }] };',
      '  };',
      '  const first = ids.length === 0 ? null : build(ids[0]!);',
      '  if (first == null) return [];',
      '  return first.collection.aggregate(first.pipeline).toArray();',
      '}',
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts', {}).queries.map(sqlOf), ['lookup_*.aggregate']);
  });

  it("reads a bulkWrite of a field the class's methods push operations into, each where it is pushed", () => {
    const text = [
      "import { MongoClient } from 'mongodb';",
      'export class Batch {',
      "  private readonly items = new MongoClient('').db().collection<{ sku: string; n: number }>('items');",
      '  private pending: object[] = [];',
      '  remove(sku: string) { this.pending.push({ deleteOne: { filter: { sku } } }); }',
      '  bump(sku: string) { const filter = { sku, n: { $gt: 0 } }; this.pending.push({ updateOne: { filter, update: { $inc: { n: 1 } } } }); }',
      '  async flush() { await this.items.bulkWrite(this.pending as any); this.pending = []; }',
      '}',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(qs.map(sqlOf), ['items.deleteOne', 'items.updateOne']);
    const bump = qs[1]!;
    assert.ok(bump.engine === 'mongodb');
    assert.deepEqual(Object.keys(bump.command.filter ?? {}), ['sku', 'n'], "the filter read in the pushing method's scope");
    assert.deepEqual(bump.calledFrom?.map((r) => text.slice(r.start, r.end).slice(0, 22)), ['this.items.bulkWrite(t']);
  });

  it("reads an application's class that implements the driver's Collection as the collection it is made from", () => {
    const text = [
      "import { Collection, Db, Document, Filter } from 'mongodb';",
      'export class Audited<T extends Document> implements Collection<T> {',
      '  constructor(private inner: Collection<T>, private user: string) {}',
      '  find(filter: Filter<T>) { return this.inner.find(filter); }',
      '}',
      'export async function openInvoices(db: Db, user: string) {',
      "  const invoices = new Audited(db.collection('invoices'), user);",
      "  return invoices.find({ status: 'open', owner: user }).toArray();",
      '}',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries.filter((q) => q.engine === 'mongodb' && q.command.filter?.status !== undefined);
    assert.deepEqual(qs.map(sqlOf), ['invoices.find']);
    // A class that does not say it is a collection is not read as the one it is given.
    const plain = text.replace(' implements Collection<T>', '');
    assert.deepEqual(findQueries(plain, 'script', 'ts', {}).queries.filter((q) => q.engine === 'mongodb' && q.command.filter?.status !== undefined).map(sqlOf), []);
  });

  it("does not name a collection after a calling class's field that one of its methods assigns again", () => {
    const text = [
      "import { Db } from 'mongodb';",
      'abstract class Source {',
      '  protected abstract collectionName: string;',
      '  constructor(private db: Db) {}',
      '  protected open() { return this.db.collection(this.collectionName); }',
      '}',
      'export class Invoices extends Source {',
      "  protected collectionName = 'invoices';",
      "  pending() { return this.open().find({ paid: false }).toArray(); }",
      '}',
    ].join('\n');
    assert.deepEqual(findQueries(text, 'script', 'ts', {}).queries.map(sqlOf), ['invoices.find']);
    const moved = text.replace("  pending()", "  useArchive(year: number) { this.collectionName = `invoices_${year}`; }\n  pending()");
    assert.deepEqual(findQueries(moved, 'script', 'ts', {}).queries.map((q) => q.engine === 'mongodb' && q.command.collection), ['']);
  });

  it("reads a bulkWrite of a property an object's methods push operations into, each where it is built", () => {
    const text = [
      "import { Db } from 'mongodb';",
      'export default {',
      '  size: 100,',
      '  queued: [] as object[],',
      '  markStale(id: string, at: number) {',
      '    return { updateOne: { filter: { _id: id, seenAt: { $lt: at } }, update: { $set: { stale: true } } } };',
      '  },',
      '  visit(ids: string[], at: number) {',
      '    ids.forEach((id) => this.queued.push(this.markStale(id, at)));',
      '  },',
      '  async flush(db: Db) {',
      "    if (this.queued.length >= this.size) await db.collection('pages').bulkWrite(this.queued as any);",
      '    this.queued = [];',
      '  },',
      '};',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(qs.map(sqlOf), ['pages.updateOne']);
    const stale = qs[0]!;
    assert.ok(stale.engine === 'mongodb');
    assert.deepEqual(Object.keys(stale.command.filter ?? {}), ['_id', 'seenAt'], 'the filter read where the method builds it');
    assert.deepEqual(stale.calledFrom?.map((r) => text.slice(r.start, r.end).slice(0, 24)), ["db.collection('pages').b"]);
    // A property of another object (not the one whose method runs the bulkWrite) is not read as this one's.
    const other = text.replace('this.queued.push(this.markStale(id, at))', 'helper.queued.push(this.markStale(id, at))');
    assert.deepEqual(findQueries(other, 'script', 'ts', {}).queries.map(sqlOf), []);
  });

  it('reads a bulkWrite of the operations a class collects in a field and groups by key in a Map, each where it is pushed', () => {
    const text = [
      "import { MongoClient, type AnyBulkWriteOperation } from 'mongodb';",
      "const db = new MongoClient('').db();",
      'export class Ledger {',
      '  pending: { account: string; operation: AnyBulkWriteOperation }[] = [];',
      '  debit(account: string, id: string, amount: number) {',
      '    this.pending.push({ account, operation: { updateOne: { filter: { _id: id }, update: { $inc: { balance: -amount } } } } });',
      '  }',
      '  drop(account: string, id: string) {',
      '    this.pending.push({ account, operation: { deleteOne: { filter: { _id: id, settled: true } } } });',
      '  }',
      '  async flush() {',
      '    const byAccount = new Map<string, typeof this.pending>();',
      '    for (const entry of this.pending) {',
      '      const group = byAccount.get(entry.account) ?? [];',
      '      group.push(entry);',
      '      byAccount.set(entry.account, group);',
      '    }',
      '    for (const entries of byAccount.values()) {',
      "      await db.collection(`entries_${entries[0]!.account}`).bulkWrite(entries.map((e) => e.operation), { ordered: true });",
      '    }',
      '  }',
      '}',
    ].join('\n');
    const qs = findQueries(text, 'script', 'ts', {}).queries;
    assert.deepEqual(qs.map(sqlOf), ['entries_*.updateOne', 'entries_*.deleteOne']);
    const drop = qs[1]!;
    assert.ok(drop.engine === 'mongodb');
    assert.deepEqual(Object.keys(drop.command.filter ?? {}), ['_id', 'settled']);
    assert.deepEqual(drop.calledFrom?.map((r) => text.slice(r.start, r.end).slice(0, 20)), ['db.collection(`entri']);
    // A Map the code does not fill here (given by a caller) holds groups not seen: nothing is read of it.
    const given = text.replace('const byAccount = new Map<string, typeof this.pending>();', 'const byAccount = this.grouped();');
    assert.deepEqual(findQueries(given, 'script', 'ts', {}).queries.map(sqlOf), []);
  });

  it("reads a field typed by the driver's Collection through a workspace module that passes on the driver's namespace", () => {
    const text = [
      "import { driver } from '../lib/index';",
      'export class Chunks {',
      '  private collection: driver.Collection;',
      '  constructor(options: { collection: driver.Collection }) { this.collection = options.collection; }',
      '  next(after: string) { return this.collection.find({ _id: { $gt: after } }, { limit: 10 }).toArray(); }',
      '}',
    ].join('\n');
    const qs = read(text, '/ws/src/chunks.ts');
    assert.deepEqual(qs.map(sqlOf), ['.find']);
  });

  it("names a field a constructor takes from its options object by what the class's `new` calls give it", () => {
    const local: Record<string, string> = {
      '/ws/src/lock.ts': [
        "import { Collection } from 'mongodb';",
        'export class Lock {',
        '  collection: Collection<{ name: string }>;',
        '  constructor(options: { name: string; collection: Collection<{ name: string }> }) { this.collection = options.collection; }',
        '  take(name: string) { return this.collection.updateOne({ name }, { $set: { held: true } }); }',
        '}',
      ].join('\n'),
      '/ws/src/use.ts': [
        "import { MongoClient } from 'mongodb';",
        "import { Lock } from './lock';",
        "export const lock = new Lock({ name: 'jobs', collection: new MongoClient('').db().collection('locks') });",
      ].join('\n'),
    };
    const mods: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in local }, from, spec), read: (f) => local[f], files: () => Object.keys(local) };
    const qs = findQueries(local['/ws/src/lock.ts']!, 'script', 'ts', { file: '/ws/src/lock.ts', modules: mods }).queries;
    assert.deepEqual(qs.map(sqlOf), ['locks.updateOne']);
  });

  it('counts the calls made through a namespace of a namespace among the callers, naming or unnaming by what they give', () => {
    const base: Record<string, string> = {
      '/ws/lib/lock.ts': [
        "import { Collection } from 'mongodb';",
        'export class Lock {',
        '  collection: Collection<{ name: string }>;',
        '  constructor(options: { collection: Collection<{ name: string }> }) { this.collection = options.collection; }',
        '  take(name: string) { return this.collection.updateOne({ name }, { $set: { held: true } }); }',
        '}',
      ].join('\n'),
      '/ws/lib/index.ts': "export * as locking from './lock';",
      '/ws/src/direct.ts': [
        "import { MongoClient } from 'mongodb';",
        "import { Lock } from '../lib/lock';",
        "export const jobs = new Lock({ collection: new MongoClient('').db().collection('locks') });",
      ].join('\n'),
    };
    const through = (name: string) => [
      "import { MongoClient } from 'mongodb';",
      "import * as lib from '../lib/index';",
      `export const mail = new lib.locking.Lock({ collection: new MongoClient('').db().collection('${name}') });`,
    ].join('\n');
    const read = (files: Record<string, string>) => {
      const mods: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f], files: () => Object.keys(files) };
      return findQueries(files['/ws/lib/lock.ts']!, 'script', 'ts', { file: '/ws/lib/lock.ts', modules: mods }).queries;
    };
    const same = read({ ...base, '/ws/src/ns.ts': through('locks') });
    assert.deepEqual(same.map(sqlOf), ['locks.updateOne']);
    assert.match(same[0]!.engine === 'mongodb' ? same[0]!.warnings.join(' ') : '', /the 2 calls of new Lock in direct\.ts, ns\.ts/);
    // A call through the namespace that gives another collection: no longer named by the direct call alone.
    assert.deepEqual(read({ ...base, '/ws/src/ns.ts': through('old_locks') }).map(sqlOf), ['.updateOne']);
  });

  it("names a collection a template or a sum writes of known parts, also through an application's own collection method", () => {
    const text = [
      "import { Db } from 'mongodb';",
      "const PREFIX = 'app';",
      'class Store {',
      '  constructor(private readonly db: Db) {}',
      '  collection(name: string) { return this.db.collection(`app.${name}`); }',
      "  tableName(t: string) { return PREFIX + '_' + t; }",
      '}',
      "export const users = (store: Store, email: string) => store.collection('users').find({ email }).toArray();",
      'export const orders = (db: Db) => db.collection(`${PREFIX}_orders`).find({ open: true }).toArray();',
      "export const carts = (db: Db, s: Store) => db.collection(s.tableName('carts')).find({ open: true }).toArray();",
      'export const mixed = (db: Db, t: string) => db.collection(`${PREFIX}_${t}`).find({ open: true }).toArray();',
    ].join('\n');
    // The method's prefix is read, where the driver's `collection('users')` would name another collection;
    // a part chosen at run time still makes a family.
    assert.deepEqual(findQueries(text, 'script', 'ts', {}).queries.map(sqlOf), ['app.users.find', 'app_orders.find', 'app_carts.find', 'app_*.find']);
  });

  it("reads an application's own getCollection method with the call's arguments, through a global its module types or a parameter", () => {
    const files: Record<string, string> = {
      '/ws/src/names.ts': [
        "const SHARED = ['tenants'];",
        'export default class Names {',
        '  static of(tenant: string, suffix: string): string {',
        "    let prefix = 'common';",
        '    if (!SHARED.includes(suffix) && tenant) prefix = tenant;',
        '    return `${prefix}.${suffix}`;',
        '  }',
        '}',
      ].join('\n'),
      '/ws/src/storage.ts': [
        "import { Collection, Db } from 'mongodb';",
        "import Names from './names';",
        'export default class Storage {',
        '  constructor(private readonly db: Db) {}',
        '  getCollection<T>(tenant: string, name: string): Collection<T> { return this.db.collection<T>(Names.of(tenant, name)); }',
        '}',
      ].join('\n'),
      '/ws/src/global.ts': [
        "import Storage from './storage';",
        'interface AppGlobal extends Global { database: Storage; }',
        'declare const global: AppGlobal;',
        'export default global;',
      ].join('\n'),
    };
    const text = [
      "import global from './global';",
      "import Storage from './storage';",
      'export const invoice = (tenant: { id: string }, number: string) =>',
      "  global.database.getCollection<any>(tenant.id, 'invoices').findOne({ number });",
      "export const tenants = (store: Storage, host: string) => store.getCollection<any>('', 'tenants').find({ host }).toArray();",
    ].join('\n');
    const mods: WorkspaceModules = { resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec), read: (f) => files[f], files: () => Object.keys(files) };
    const qs = findQueries(text, 'script', 'ts', { file: '/ws/src/invoices.ts', modules: mods }).queries;
    // The prefix of the name is chosen at run time: a family, `*.invoices`, where the shell's
    // `getCollection(name)` would take the tenant's id for the name.
    assert.deepEqual(qs.map(sqlOf), ['*.invoices.findOne', '*.tenants.find']);
    assert.match(qs[0]!.engine === 'mongodb' ? qs[0]!.warnings.join(' ') : '', /one of the family \*\.invoices, named at run time \(`\$\{prefix\}\.\$\{suffix\}`\)/);
  });
});
