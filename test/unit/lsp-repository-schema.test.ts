// Offline advice from the schema the repository declares: the language server's lenses and hovers change
// when a schema file declares the index, a declared primary key is never suggested, a connection's own
// lists win, and the workspace reader finds, bounds and re-reads the files.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { readRepositorySchema, type RepositorySchema } from '../../src/core/index';
import { analyzeQuery } from '../../src/core/lint/analysis';
import { findQueries, loadSqlParser } from '../../src/core/query/find';
import { InlineAdviceService } from '../../src/server/service';
import { WorkspaceSchema } from '../../src/node/workspaceSchema';
import { FakePort } from './lsp-fixtures';

const PRISMA = [
  'model Order {',
  '  id        Int      @id @default(autoincrement())',
  '  status    String',
  '  createdAt DateTime @default(now())',
  '  @@index([status, createdAt(sort: Desc)])',
  '}',
].join('\n');

const CALLS = [
  "import { PrismaClient } from '@prisma/client';",
  'const prisma = new PrismaClient();',
  "export const open = () => prisma.order.findMany({ where: { status: 'open' }, orderBy: { createdAt: 'desc' }, take: 20 });",
  'export const one = (id) => prisma.order.findUnique({ where: { id: 7 } });',
].join('\n');

function lensTitles(service: InlineAdviceService, uri: string): string[] {
  return service.codeLenses(uri).map((l) => l.command?.title ?? '').filter((t) => !t.includes('Explain'));
}

function hover(service: InlineAdviceService, uri: string, text: string, needle: string): string {
  const doc = TextDocument.create(uri, 'typescript', 1, text);
  const h = service.hover(uri, doc.positionAt(text.indexOf(needle)));
  return h ? (h.contents as { value: string }).value : '';
}

describe('language server: the schema in the repository', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('keeps the index a Prisma schema declares instead of suggesting it, and never suggests its primary key', () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
    const uri = 'file:///app/src/orders.ts';
    service.open(uri, 'typescript', 1, CALLS);
    const before = lensTitles(service, uri);
    assert.deepEqual(before, ['$(lightbulb) Suggest index (rules)', '$(lightbulb) Suggest index (rules)']);
    assert.match(hover(service, uri, CALLS, 'findMany'), /CREATE INDEX CONCURRENTLY ON "Order" \(status, "createdAt" DESC\)/);

    service.setRepositorySchema(readRepositorySchema([{ path: 'prisma/schema.prisma', text: PRISMA }]));
    assert.deepEqual(lensTitles(service, uri), ['$(check) Index Order_status_createdAt_idx serves it (rules)', '$(check) Index Order_pkey serves it (rules)']);
    const text = hover(service, uri, CALLS, 'findMany');
    assert.match(text, /\*\*Index Order_status_createdAt_idx serves this query\*\* \(declared in prisma\/schema\.prisma\)/);
    assert.match(text, /`Order_pkey` from prisma\/schema\.prisma/);
    assert.doesNotMatch(hover(service, uri, CALLS, 'findUnique'), /CREATE INDEX/);

    service.setRepositorySchema(undefined);
    assert.deepEqual(lensTitles(service, uri), before);
  });

  it('writes a Prisma call with the table and columns schema.prisma maps it to, once the schema is read', () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
    const uri = 'file:///app/src/orders.ts';
    const mapped = PRISMA.replace('  status    String', '  status    String   @map("order_status")').replace('  @@index', '  @@map("orders")\n  @@index');
    service.open(uri, 'typescript', 1, CALLS);
    assert.match(hover(service, uri, CALLS, 'findMany'), /ON "Order" \(status, "createdAt" DESC\)/);
    service.setRepositorySchema(readRepositorySchema([{ path: 'prisma/schema.prisma', text: mapped }]));
    assert.deepEqual(service.listQueries(uri).map((q) => q.targets), [['orders'], ['orders']]);
    assert.deepEqual(lensTitles(service, uri), ['$(check) Index orders_order_status_createdAt_idx serves it (rules)', '$(check) Index orders_pkey serves it (rules)']);
    assert.match(hover(service, uri, CALLS, 'findMany'), /\*\*Index orders_order_status_createdAt_idx serves this query\*\*/);
  });

  it('reads a Mongoose model file and an SQL migration for the queries of other files', () => {
    const schema = readRepositorySchema([
      { path: 'models/order.js', text: "const mongoose = require('mongoose');\nconst s = new mongoose.Schema({ status: { type: String, index: true }, total: Number });\nmodule.exports = mongoose.model('Order', s);" },
      { path: 'migrations/001_users.sql', text: 'CREATE TABLE users (id bigint PRIMARY KEY, email text NOT NULL);' },
    ]);
    const mongo = "const { Order } = require('./models/order');\nexports.open = () => Order.find({ status: 'open' });";
    const [mq] = findQueries(mongo, 'script', 'js').queries;
    const withRepo = analyzeQuery(mq!, mongo, undefined, schema);
    assert.equal(withRepo.top?.keep, 'status_1');
    assert.match(withRepo.hover, /`status_1` from models\/order\.js/);
    assert.equal(analyzeQuery(mq!, mongo, undefined, undefined).top?.createText, 'db.orders.createIndex({status: 1})');

    const sql = 'SELECT email FROM users WHERE id = $1;';
    const [sq] = findQueries(sql, 'sql').queries;
    assert.ok(analyzeQuery(sq!, sql, undefined, undefined).top?.createText, 'offline rules alone suggest an index on id');
    const a = analyzeQuery(sq!, sql, undefined, schema);
    assert.equal(a.top?.createText, undefined);
    assert.equal(a.top?.keep, 'users_pkey');
    assert.equal(a.findings.length, 0, 'the repository\'s schema makes no scan or sort findings');
  });

  it('lets a connection\'s own index list win over the repository\'s', () => {
    const schema: RepositorySchema = readRepositorySchema([{ path: 'db/schema.sql', text: 'CREATE TABLE orders (id int, status text);\nCREATE INDEX orders_status_idx ON orders (status);' }]);
    const sql = "SELECT * FROM orders WHERE status = 'open';";
    const [q] = findQueries(sql, 'sql').queries;
    assert.equal(analyzeQuery(q!, sql, undefined, schema).top?.keep, 'orders_status_idx');
    const connected = { connection: { postgres: 'Local' }, collections: new Map(), tables: new Map([['orders', { indexes: [] }]]), plans: new Map(), advice: new Map() };
    const a = analyzeQuery(q!, sql, connected, schema);
    assert.match(a.top?.createText ?? '', /CREATE INDEX CONCURRENTLY ON orders \(status\)/);
    assert.doesNotMatch(a.hover, /repository declares/);
  });

  describe('workspace files', () => {
    let root: string;
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'qpi-schema-'));
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('reads schema files, skips dependencies and hidden folders, and reads a changed or deleted file again', async () => {
      mkdirSync(join(root, 'prisma'));
      mkdirSync(join(root, 'node_modules', 'lib'), { recursive: true });
      mkdirSync(join(root, '.git'));
      writeFileSync(join(root, 'prisma', 'schema.prisma'), PRISMA);
      writeFileSync(join(root, 'node_modules', 'lib', 'schema.sql'), 'CREATE TABLE dep (id int PRIMARY KEY);');
      writeFileSync(join(root, '.git', 'x.sql'), 'CREATE TABLE hidden (id int PRIMARY KEY);');
      writeFileSync(join(root, 'big.sql'), `CREATE TABLE big (id int PRIMARY KEY);\n--${'x'.repeat(2000)}`);
      writeFileSync(join(root, 'util.js'), 'module.exports = 1;');
      const published: RepositorySchema[] = [];
      const ws = WorkspaceSchema.fromUris([pathToFileURL(root).href], (s) => published.push(s), () => undefined, { entries: 1000, files: 100, fileBytes: 1000, totalBytes: 1e6 }, 0);
      const first = await ws.load();
      assert.deepEqual([...first.tables.keys()], ['Order']);
      assert.equal(first.tables.get('Order')![0]!.source, 'prisma/schema.prisma');

      writeFileSync(join(root, 'prisma', 'schema.prisma'), PRISMA.replace('@@index([status, createdAt(sort: Desc)])', '@@index([createdAt])'));
      writeFileSync(join(root, 'init.sql'), 'CREATE TABLE users (id int PRIMARY KEY);');
      writeFileSync(join(root, 'node_modules', 'lib', 'other.sql'), 'CREATE TABLE dep2 (id int PRIMARY KEY);');
      ws.changed([pathToFileURL(join(root, 'prisma', 'schema.prisma')).href, pathToFileURL(join(root, 'init.sql')).href, pathToFileURL(join(root, 'node_modules', 'lib', 'other.sql')).href]);
      const second = await ws.applyChanges();
      assert.deepEqual(second.tables.get('Order')!.map((ix) => ix.name), ['Order_pkey', 'Order_createdAt_idx']);
      assert.deepEqual([...second.tables.keys()].sort(), ['Order', 'users']);

      unlinkSync(join(root, 'init.sql'));
      ws.changed([pathToFileURL(join(root, 'init.sql')).href]);
      const third = await ws.applyChanges();
      assert.deepEqual([...third.tables.keys()], ['Order']);
      assert.equal(published.length, 3);
      ws.dispose();
    });
  });
});
