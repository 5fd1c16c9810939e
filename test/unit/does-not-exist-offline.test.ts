// Offline, the repository's schema says a table is not there only when it declares every table: a
// Prisma schema or SQL files that create tables, and nothing that says those are only some (a migration
// written in code, a CREATE TABLE that did not parse or sits in a function, a file left unread). Entities
// alone, index calls alone and MongoDB never do. These tests hold both sides of that rule, through the
// same analysis the language server and `qpi lint` run, with findings alone and whole.

import assert from 'node:assert/strict';
import { analyzeQuery, type DocumentSchema } from '../../src/core/lint/analysis';
import { DiagnosticCodes } from '../../src/core/lint/codes';
import type { CatalogRelation } from '../../src/core/advice/catalog';
import { findQueries, loadSqlParser, querySourceKind, scriptDialect } from '../../src/core/query/find';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceSchema } from '../../src/node/workspaceSchema';
import { readRepositorySchema, repositoryCatalog, type RepositorySchema, type SchemaFile } from '../../src/core/schema/index';

const MIGRATION = `
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL);
CREATE VIEW order_totals AS SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id;
CREATE MATERIALIZED VIEW daily AS SELECT created_at::date AS day, count(*) AS n FROM orders GROUP BY 1;
`;

const PRISMA = `
model User {
  id    Int    @id @default(autoincrement())
  email String @unique
  @@map("app_users")
}
view ActiveUser {
  id Int @unique
  @@map("active_users")
}
`;

function analyse(sql: string, repo: RepositorySchema | undefined, schema?: DocumentSchema, findingsOnly = false) {
  const uri = 'file:///x/q.sql';
  const found = findQueries(sql, querySourceKind('sql', uri), scriptDialect('sql', uri)).queries;
  assert.equal(found.length, 1, 'one query');
  return analyzeQuery(found[0]!, sql, schema, repo, findingsOnly ? { findingsOnly: true } : undefined);
}

const codes = (a: { findings: { code: string }[] }) => a.findings.map((f) => f.code);

describe('offline: when the repository\'s schema may say a table does not exist', () => {
  before(async () => {
    await loadSqlParser();
  });

  const schemaOf = (files: SchemaFile[]) => readRepositorySchema(files);

  it('says it from SQL migrations that create tables, in the diagnostics and instead of an index', () => {
    const repo = schemaOf([{ path: 'db/migrations/001_init.sql', text: MIGRATION }]);
    const sql = 'SELECT * FROM orders_v2 WHERE status = $1 ORDER BY created_at DESC LIMIT 20';
    for (const findingsOnly of [true, false]) {
      const a = analyse(sql, repo, undefined, findingsOnly);
      const f = a.findings.find((x) => x.code === DiagnosticCodes.doesNotExist);
      assert.ok(f, `a does-not-exist finding (findingsOnly ${findingsOnly})`);
      assert.equal(f.message, "orders_v2 does not exist in the repository's schema (db/migrations/001_init.sql): the query cannot run there as written, so no index is suggested for it.");
      assert.equal(f.severity, 'information');
      assert.deepEqual(f.anchor, { sql: [14, 23] });
    }
    const whole = analyse(sql, repo);
    assert.equal(whole.top, undefined, 'no index is offered');
    assert.match(whole.hover, /orders_v2 does not exist in the repository's schema/);
  });

  it('advises a declared table, a materialized view, and names a view as one', () => {
    const repo = schemaOf([{ path: 'db/migrations/001_init.sql', text: MIGRATION }]);
    const table = analyse('SELECT * FROM orders WHERE status = $1 ORDER BY created_at DESC LIMIT 20', repo);
    assert.deepEqual(codes(table).filter((c) => c === DiagnosticCodes.doesNotExist), []);
    assert.match(table.top?.createText ?? '', /ON orders \(status, created_at DESC\)/);
    const mat = analyse('SELECT * FROM daily WHERE day = $1', repo);
    assert.match(mat.top?.createText ?? '', /ON daily \(day\)/);
    const view = analyse('SELECT * FROM order_totals WHERE customer_id = $1', repo);
    assert.equal(view.top?.createText, undefined);
    assert.ok(!codes(view).includes(DiagnosticCodes.doesNotExist));
    assert.match(view.hover, /order_totals is a view in the repository's schema/);
  });

  it('says it from a Prisma schema, by the mapped table names, and knows its views', () => {
    const repo = schemaOf([{ path: 'prisma/schema.prisma', text: PRISMA }]);
    const catalog = repositoryCatalog(repo, 'postgres', [{ table: 'app_users' }, { table: 'active_users' }, { table: 'users' }, { table: 'users', schema: 'audit' }])!;
    assert.deepEqual(catalog.relations, { app_users: { kind: 'table' }, active_users: { kind: 'view' }, users: null });
    assert.equal(catalog.where, "the repository's schema (prisma/schema.prisma)");
    assert.ok(codes(analyse('SELECT * FROM users WHERE email = $1', repo, undefined, true)).includes(DiagnosticCodes.doesNotExist));
  });

  it('never judges a CTE, a system catalog or a name in another schema', () => {
    const repo = schemaOf([{ path: 'schema.sql', text: MIGRATION }]);
    for (const sql of [
      'WITH recent AS (SELECT * FROM orders WHERE status = $1) SELECT * FROM recent WHERE customer_id = $2',
      'SELECT * FROM information_schema.tables WHERE table_name = $1',
      'SELECT * FROM pg_stat_activity WHERE state = $1',
      'SELECT * FROM archive.old_orders WHERE status = $1',
    ]) assert.ok(!codes(analyse(sql, repo)).includes(DiagnosticCodes.doesNotExist), sql);
  });

  it('does not say it when a migration is written in code', () => {
    const repo = schemaOf([
      { path: 'db/schema.sql', text: MIGRATION },
      { path: 'migrations/20240101_add_invoices.js', text: "exports.up = (knex) => knex.schema.createTable('invoices', (t) => { t.increments('id'); });" },
    ]);
    assert.ok((repo.partial ?? []).some((p) => /migrations\/20240101_add_invoices\.js creates tables in code/.test(p)));
    assert.equal(repositoryCatalog(repo, 'postgres', [{ table: 'invoices' }]), undefined);
    const a = analyse('SELECT * FROM invoices WHERE customer_id = $1', repo);
    assert.ok(!codes(a).includes(DiagnosticCodes.doesNotExist));
    assert.match(a.top?.createText ?? '', /ON invoices \(customer_id\)/);
  });

  it('does not say it when a CREATE TABLE did not parse or sits in a DO block', () => {
    const broken = schemaOf([{ path: 'db/schema.sql', text: `${MIGRATION}\nCREATE TABLE invoices (id int AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB;` }]);
    assert.equal(repositoryCatalog(broken, 'postgres', [{ table: 'invoices' }]), undefined);
    const inDo = schemaOf([{ path: 'db/schema.sql', text: `${MIGRATION}\nDO $$ BEGIN EXECUTE 'CREATE TABLE invoices (id int)'; END $$;` }]);
    assert.equal(repositoryCatalog(inDo, 'postgres', [{ table: 'invoices' }]), undefined);
  });

  it('does not say it from entities, index files or a temporary table alone', () => {
    const entities = schemaOf([{ path: 'src/entity/User.ts', text: "import { Entity, PrimaryGeneratedColumn } from 'typeorm';\n@Entity('users')\nexport class User { @PrimaryGeneratedColumn() id!: number; }\n" }]);
    assert.ok(entities.tables.has('users'));
    assert.equal(repositoryCatalog(entities, 'postgres', [{ table: 'orders' }]), undefined);
    const indexesOnly = schemaOf([{ path: 'db/indexes.sql', text: 'CREATE INDEX orders_status_idx ON orders (status);\nCREATE TEMP TABLE scratch (id int);' }]);
    assert.equal(repositoryCatalog(indexesOnly, 'postgres', [{ table: 'invoices' }]), undefined);
    assert.ok(!codes(analyse('SELECT * FROM invoices WHERE id = $1 AND total > $2', indexesOnly)).includes(DiagnosticCodes.doesNotExist));
  });

  it('does not say it when the workspace walk left a schema file unread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qpi-dne-'));
    try {
      writeFileSync(join(dir, '001_init.sql'), MIGRATION);
      const read = (fileBytes: number) => new WorkspaceSchema([dir], () => undefined, () => undefined, { entries: 1000, files: 100, fileBytes, totalBytes: 1_000_000 }).load();
      const whole = await read(1_000_000);
      assert.deepEqual(repositoryCatalog(whole, 'postgres', [{ table: 'invoices' }])?.relations, { invoices: null });
      writeFileSync(join(dir, '002_invoices.sql'), `CREATE TABLE invoices (id int PRIMARY KEY, note text);\n-- ${'x'.repeat(MIGRATION.length + 100)}\n`);
      const part = await read(MIGRATION.length + 10);
      assert.ok((part.partial ?? []).some((p) => /1 schema file was over \d+ bytes and not read/.test(p)), JSON.stringify(part.partial));
      assert.equal(repositoryCatalog(part, 'postgres', [{ table: 'invoices' }]), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never says it of a MongoDB collection offline, whatever the repository declares', () => {
    const repo = schemaOf([
      { path: 'db/schema.sql', text: MIGRATION },
      { path: 'models/person.js', text: "const mongoose = require('mongoose');\nconst s = new mongoose.Schema({ name: { type: String, index: true } });\nmodule.exports = mongoose.model('Person', s);\n" },
    ]);
    assert.equal(repositoryCatalog(repo, 'mongodb', [{ table: 'orders_v2' }]), undefined);
    const uri = 'file:///x/q.js';
    const text = "db.collection('orders_v2').find({ status: 'new' }).toArray();\n";
    const q = findQueries(text, querySourceKind('javascript', uri), scriptDialect('javascript', uri)).queries[0]!;
    const a = analyzeQuery(q, text, undefined, repo);
    assert.ok(!codes(a).includes(DiagnosticCodes.doesNotExist));
    assert.match(a.top?.createText ?? '', /orders_v2.*status: 1/);
  });
});

describe('connected: the catalog the extension sent, in the diagnostics', () => {
  before(async () => {
    await loadSqlParser();
  });

  const connected = (relation: CatalogRelation | null): DocumentSchema => ({
    connection: { postgres: 'shop-dev', mongodb: 'shop-mongo' },
    collections: new Map([['orders_v2', { indexes: [], relation }], ['orders', { indexes: [{ name: '_id_', key: { _id: 1 } }], relation: { kind: 'collection' } }]]),
    tables: new Map([['orders_v2', { indexes: [], relation }]]),
    plans: new Map(),
    advice: new Map(),
  });

  it('a missing table is said not to exist on the connection, with no scan, no sort and no index', () => {
    const a = analyse('SELECT * FROM orders_v2 WHERE status = $1 ORDER BY created_at DESC LIMIT 20', undefined, connected(null));
    assert.deepEqual(codes(a), [DiagnosticCodes.doesNotExist]);
    assert.equal(a.findings[0]!.severity, 'warning');
    assert.match(a.findings[0]!.message, /^orders_v2 does not exist on shop-dev: /);
    assert.equal(a.top, undefined);
    assert.match(a.hover, /orders_v2 does not exist on shop-dev\./);
    const there = analyse('SELECT * FROM orders_v2 WHERE status = $1 ORDER BY created_at DESC LIMIT 20', undefined, connected({ kind: 'table' }));
    assert.ok(codes(there).includes(DiagnosticCodes.collectionScan));
    assert.ok(!codes(there).includes(DiagnosticCodes.doesNotExist));
  });

  it('a missing collection is not a collection scan, and _id is never suggested on one that exists', () => {
    const uri = 'file:///x/q.js';
    const text = "db.collection('orders_v2').findOne({ _id: id, userId });\ndb.collection('orders').findOne({ _id: id, userId });\n";
    const [missing, there] = findQueries(text, querySourceKind('javascript', uri), scriptDialect('javascript', uri)).queries;
    const schema = connected(null);
    const a = analyzeQuery(missing!, text, schema);
    assert.deepEqual(codes(a), [DiagnosticCodes.doesNotExist]);
    assert.match(a.findings[0]!.message, /^orders_v2 does not exist on shop-mongo: /);
    assert.equal(a.top, undefined);
    const b = analyzeQuery(there!, text, schema);
    assert.ok(!codes(b).includes(DiagnosticCodes.collectionScan) && !codes(b).includes(DiagnosticCodes.doesNotExist), JSON.stringify(codes(b)));
    assert.doesNotMatch(b.top?.createText ?? '', /_id/);
  });
});
