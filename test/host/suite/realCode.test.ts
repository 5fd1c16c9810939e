// Queries in real code, in the real host, before any connection is bound to the samples folder: a
// Mongoose model file and Prisma calls get diagnostics, a lens that names the index the repository's own
// schema declares (read from app/models/customer.js and prisma/schema.prisma by the language server), and
// Explain on the real servers.

import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { Commands } from '../../../src/extension/commands';
import type { ExplainSummary } from '../../../src/extension/explain';
import type { ConnectionSpec } from '../../../src/extension/connections/spec';
import type { ExtensionHandle } from '../../../src/extension/main';
import { EXTENSION_ID, until } from './languageServer.test';

function codes(uri: vscode.Uri, line: number): string[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Query Plan Inspector' && d.range.start.line === line).map((d) => (typeof d.code === 'object' ? String(d.code.value) : String(d.code)));
}

async function lensTitles(uri: vscode.Uri, line: number): Promise<string[]> {
  const all = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri, 20);
  return all.filter((l) => l.range.start.line === line).map((l) => l.command?.title ?? '');
}

async function hoverText(doc: vscode.TextDocument, offset: number): Promise<string> {
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, doc.positionAt(offset));
  return hovers.flatMap((h) => h.contents.map((c) => (c as vscode.MarkdownString).value ?? String(c))).join('\n');
}

export function realCodeTests(): void {
  describe('queries in real code, with the repository\'s schema', () => {
    let handle: ExtensionHandle;
    let folder: vscode.Uri;

    before(() => {
      handle = vscode.extensions.getExtension<ExtensionHandle>(EXTENSION_ID)!.exports;
      folder = vscode.workspace.workspaceFolders![0]!.uri;
    });

    async function explainAt(doc: vscode.TextDocument, needle: string, spec: ConnectionSpec, values?: string[]): Promise<ExplainSummary> {
      const editor = await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      const at = doc.positionAt(doc.getText().indexOf(needle) + 1);
      editor.selection = new vscode.Selection(at, at);
      // Given the connection, Explain binds nothing to the folder: the other suites start unbound.
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { connectionId: spec.id, ...(values ? { values } : {}) });
      assert.ok(r, `explain failed: ${handle.lastError()}`);
      return r;
    }

    it('a Mongoose model file: skip() flagged, the declared index named by the lens and the hover, Explain on MongoDB', async () => {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, 'app', 'models', 'customer.js'));
      await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      const text = doc.getText();
      const pageLine = doc.positionAt(text.indexOf('Customer.find(')).line;
      const emailAt = text.indexOf('Customer.findOne(');
      const emailLine = doc.positionAt(emailAt).line;
      await until(() => `qpi.skip-pagination on line ${pageLine + 1}: ${codes(doc.uri, pageLine).join(', ')}`, () => codes(doc.uri, pageLine).includes('qpi.skip-pagination'));
      let seen: string[] = [];
      const titles = await until(() => `the lens from the declared index: ${seen.join(' | ')}`, async () => {
        seen = await lensTitles(doc.uri, emailLine);
        return seen.includes('$(check) Index contact.email_1 serves it (rules)') ? seen : undefined;
      });
      assert.equal(titles.filter((t) => t.includes('Explain')).length, 1, titles.join(' | '));
      assert.match(await hoverText(doc, emailAt + 2), /Index contact\.email_1 serves this query\*\* \(declared in app\/models\/customer\.js\)/);

      const spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.addConnection, { name: 'real code mongo', uri: process.env.QPI_SAMPLES_MONGO_URI, test: false });
      assert.ok(spec, handle.lastError());
      const r = await explainAt(doc, 'Customer.findOne(', spec);
      assert.equal(r.engine, 'mongodb');
      assert.equal(r.title, 'customers.findOne');
      const shown = handle.panel()?.lastMessage;
      assert.equal(shown?.type, 'showPlan');
      assert.match(JSON.stringify(shown?.type === 'showPlan' ? shown.plan.root : {}), /contact\.email_1/);
    });

    it('Prisma calls: OFFSET flagged, the primary key schema.prisma declares kept, a mapped model call written with its table, Explain on PostgreSQL', async () => {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, 'app', 'prismaOrders.ts'));
      await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      const text = doc.getText();
      const pageLine = doc.positionAt(text.indexOf('FROM orders')).line;
      const keyAt = text.indexOf('FROM order_details');
      const keyLine = doc.positionAt(keyAt).line;
      await until(() => `qpi.skip-pagination on line ${pageLine + 1}: ${codes(doc.uri, pageLine).join(', ')}`, () => codes(doc.uri, pageLine).includes('qpi.skip-pagination'));
      assert.ok((await lensTitles(doc.uri, pageLine)).includes('$(lightbulb) Suggest index (rules)'));
      let seen: string[] = [];
      await until(() => `the lens from the declared key: ${seen.join(' | ')}`, async () => {
        seen = await lensTitles(doc.uri, keyLine);
        return seen.includes('$(check) Index order_details_pkey serves it (rules)');
      });
      assert.match(await hoverText(doc, keyAt + 2), /declared in prisma\/schema\.prisma/);

      const spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.addConnection, { name: 'real code pg', uri: process.env.QPI_SAMPLES_PG_URI, test: false });
      assert.ok(spec, handle.lastError());
      const r = await explainAt(doc, 'FROM order_details', spec);
      assert.equal(r.engine, 'postgres');
      const shown = handle.panel()?.lastMessage;
      assert.match(JSON.stringify(shown?.type === 'showPlan' ? shown.plan.root : {}), /order_details_pkey/);

      // A model call: OrderDetail is mapped to order_details, so the lens names the table's key and Explain runs on the table.
      const modelLine = doc.positionAt(text.indexOf('prisma.orderDetail')).line;
      await until(() => `the lens on the model call: ${seen.join(' | ')}`, async () => {
        seen = await lensTitles(doc.uri, modelLine);
        return seen.includes('$(check) Index order_details_pkey serves it (rules)');
      });
      const m = await explainAt(doc, 'prisma.orderDetail', spec);
      assert.equal(m.engine, 'postgres');
      const modelPlan = handle.panel()?.lastMessage;
      assert.match(JSON.stringify(modelPlan?.type === 'showPlan' ? modelPlan.plan.root : {}), /order_details/);
    });

    it('the keyset fix applied to a script declares its last value, Explain runs with the value given, and Compare finds the run before the fix', async () => {
      const doc = await vscode.workspace.openTextDocument({ language: 'javascript', content: "db.orders.find({ country_id: 1 }).sort({ created_at: -1 }).skip(5000).limit(20);\n" });
      await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      const spec = handle.parts.store.list('mongodb').find((c) => c.name === 'real code mongo');
      assert.ok(spec, 'the connection the Mongoose test added');
      await explainAt(doc, 'db.orders.find', spec);
      const d = await until('the skip-pagination diagnostic', () => vscode.languages.getDiagnostics(doc.uri).find((x) => x.source === 'Query Plan Inspector' && (typeof x.code === 'object' ? x.code.value : x.code) === 'qpi.skip-pagination'));
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, d.range);
      const fix = actions.find((a) => a.title === 'Rewrite to keyset pagination (after lastCreatedAt)');
      assert.ok(fix?.edit, actions.map((a) => a.title).join(' | '));
      assert.equal(await vscode.workspace.applyEdit(fix.edit), true);
      assert.equal(doc.getText(), 'let lastCreatedAt; // the created_at of the last document of the previous page\ndb.orders.find({ country_id: 1, created_at: { $lt: lastCreatedAt } }).sort({ created_at: -1 }).limit(20);\n');
      await until('the skip-pagination diagnostic to go', () => !codes(doc.uri, 1).includes('qpi.skip-pagination'));
      // The value the fix asks for, given as a user types it in the input box.
      const r = await explainAt(doc, 'db.orders.find', spec, ['ISODate("2024-01-10T00:00:00Z")']);
      assert.equal(r.title, 'orders.find');
      const shown = handle.panel()?.lastMessage;
      const root = JSON.stringify(shown?.type === 'showPlan' ? shown.plan.root : {});
      assert.match(root, /created_at/);
      const meta = JSON.stringify(shown?.type === 'showPlan' ? shown.plan.mongo : {});
      assert.match(meta, /2024-01-10/, 'the query ran with the value given, not null');
      const compared = await vscode.commands.executeCommand<boolean | undefined>(Commands.compareWithPrevious);
      assert.equal(compared, true, `compare failed: ${handle.lastError()}`);
      assert.equal(handle.panel()?.lastMessage?.type, 'showComparison');
    });

    it('a collection named by the calls in another file follows that file when it is saved, and Explain runs on the new one', async () => {
      const dir = vscode.Uri.joinPath(folder, 'app', 'callers');
      const stores = vscode.Uri.joinPath(dir, 'stores.ts');
      const app = vscode.Uri.joinPath(dir, 'app.ts');
      const appText = (name: string) => [
        "import { MongoClient } from 'mongodb';",
        "import { listOpen } from './stores';",
        "const db = new MongoClient('mongodb://localhost').db();",
        `export const run = () => listOpen(db.collection('${name}'));`,
        '',
      ].join('\n');
      const write = (uri: vscode.Uri, text: string) => vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(text));
      await write(stores, "import type { Collection } from 'mongodb';\nexport async function listOpen(coll: Collection) {\n  return coll.find({ state: 'open' }).toArray();\n}\n");
      await write(app, appText('tickets'));
      try {
        const doc = await vscode.workspace.openTextDocument(stores);
        await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
        let seen = '';
        const targetsNow = async () => (seen = ((await handle.listedQueries(doc)) ?? []).map((q) => q.targets.join(',')).join(' | '));
        await until(() => `the caller's collection (listed: ${seen})`, async () => (await targetsNow()) === 'tickets');
        // The caller's file saved with another collection (as the editor saves it, through the file system).
        await write(app, appText('archived_tickets'));
        await until(() => `the saved caller's new collection (listed: ${seen})`, async () => (await targetsNow()) === 'archived_tickets');
        const spec = handle.parts.store.list('mongodb').find((c) => c.name === 'real code mongo');
        assert.ok(spec, 'the connection of the first test');
        const r = await explainAt(doc, 'coll.find', spec);
        assert.equal(r.title, 'archived_tickets.find');
      } finally {
        await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
        await vscode.workspace.fs.delete(dir, { recursive: true });
      }
    });

    it('a statement a script loads from a .sql file is read, its hover says where to edit it, saving the file reads it again, and Explain runs it on PostgreSQL', async () => {
      const dir = vscode.Uri.joinPath(folder, 'app', 'loaded');
      const script = vscode.Uri.joinPath(dir, 'report.ts');
      const sqlFile = vscode.Uri.joinPath(dir, 'sql', 'recent-orders.sql');
      const write = (uri: vscode.Uri, text: string) => vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(text));
      await write(sqlFile, 'SELECT id, created_at FROM orders WHERE country_id = 3 ORDER BY created_at DESC LIMIT 10\n');
      await write(script, [
        "import { readFileSync } from 'node:fs';",
        "import { join } from 'node:path';",
        "import { Pool } from 'pg';",
        'const pool = new Pool();',
        "const sql = (name: string) => readFileSync(join(__dirname, 'sql', `${name}.sql`), 'utf8');",
        "export const recent = () => pool.query(sql('recent-orders'));",
        '',
      ].join('\n'));
      try {
        const doc = await vscode.workspace.openTextDocument(script);
        await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
        let seen = '';
        const listedNow = async () => (seen = ((await handle.listedQueries(doc)) ?? []).map((q) => `${q.targets.join(',')}: ${q.text}`).join(' | '));
        await until(() => `the loaded statement (listed: ${seen})`, async () => (await listedNow()).startsWith('orders: SELECT id, created_at FROM orders'));
        assert.match(await hoverText(doc, doc.getText().indexOf("sql('recent-orders')") + 2), /read from \.\/sql\/recent-orders\.sql, which sql\(\) loads; edit it there/);
        // The .sql file saved with another statement (through the file system, as the editor saves it).
        await write(sqlFile, 'SELECT order_id FROM order_details WHERE product_id = 5\n');
        await until(() => `the saved file's statement (listed: ${seen})`, async () => (await listedNow()).startsWith('order_details: SELECT order_id FROM order_details'));
        const spec = handle.parts.store.list('postgres').find((c) => c.name === 'real code pg');
        assert.ok(spec, 'the connection of the Prisma test');
        const r = await explainAt(doc, "sql('recent-orders')", spec);
        assert.equal(r.engine, 'postgres');
        const shown = handle.panel()?.lastMessage;
        assert.match(JSON.stringify(shown?.type === 'showPlan' ? shown.plan.root : {}), /order_details/);
      } finally {
        await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
        await vscode.workspace.fs.delete(dir, { recursive: true });
      }
    });
  });
}
