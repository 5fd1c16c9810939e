// Say what is not there, in the real host with a real PostgreSQL: a file that queries a table the bound
// connection does not have gets the "does not exist on <connection>" diagnostic, no collection-scan or
// sort finding, and no CREATE INDEX quick fix or lens; the same file's query on a table that exists is
// still advised.

import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { Commands } from '../../../src/extension/commands';
import type { ConnectionSpec } from '../../../src/extension/connections/spec';
import type { ExtensionHandle } from '../../../src/extension/main';
import { EXTENSION_ID, until } from './languageServer.test';

const SQL = [
  '-- name: missing',
  'SELECT * FROM orders_v2 WHERE status = $1 ORDER BY created_at DESC LIMIT 20;',
  '',
  '-- name: present',
  'SELECT * FROM qpi_dne_host WHERE status = $1 ORDER BY created_at DESC LIMIT 20;',
  '',
].join('\n');

function codeOf(d: vscode.Diagnostic): string {
  return typeof d.code === 'object' ? String(d.code.value) : String(d.code);
}

export function doesNotExistTests(): void {
  describe('what is not there, on a connection', () => {
    let file: vscode.Uri;
    let admin: import('pg').Client;

    before(async () => {
      const uri = process.env.QPI_TEST_PG_URI;
      assert.ok(uri, 'QPI_TEST_PG_URI is not set: run these tests with npm run test:host');
      const pg = await import('pg');
      admin = new pg.Client({ connectionString: uri });
      await admin.connect();
      await admin.query('DROP TABLE IF EXISTS qpi_dne_host; DROP TABLE IF EXISTS orders_v2');
      await admin.query("CREATE TABLE qpi_dne_host (id bigint PRIMARY KEY, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now()); INSERT INTO qpi_dne_host (id, status) SELECT g, CASE WHEN g % 50 = 0 THEN 'open' ELSE 'done' END FROM generate_series(1, 5000) g; ANALYZE qpi_dne_host");
      const handle = vscode.extensions.getExtension<ExtensionHandle>(EXTENSION_ID)!.exports;
      const spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.addConnection, { name: 'shop-dev', uri, test: false });
      assert.ok(spec, handle.lastError());
      const folder = vscode.workspace.workspaceFolders![0]!.uri;
      file = vscode.Uri.joinPath(folder, 'qpi-does-not-exist.sql');
      await vscode.workspace.fs.writeFile(file, Buffer.from(SQL));
      const doc = await vscode.workspace.openTextDocument(file);
      await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      await handle.parts.bindings.set(file, spec);
    });

    after(async () => {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      await vscode.workspace.fs.delete(file).then(undefined, () => undefined);
      await admin?.query('DROP TABLE IF EXISTS qpi_dne_host').catch(() => undefined);
      await admin?.end();
    });

    it('says "does not exist on shop-dev" and offers no CREATE INDEX for the missing table', async () => {
      const doc = await vscode.workspace.openTextDocument(file);
      const missingLine = 1;
      const ds = await until('the does-not-exist diagnostic and the advice on the table that exists', () => {
        const all = vscode.languages.getDiagnostics(file).filter((d) => d.source === 'Query Plan Inspector');
        return all.some((d) => codeOf(d) === 'qpi.does-not-exist') && all.some((d) => d.range.start.line === 4) ? all : undefined;
      }, 60_000);
      const onMissing = ds.filter((d) => d.range.start.line === missingLine);
      assert.deepEqual(onMissing.map(codeOf), ['qpi.does-not-exist'], JSON.stringify(onMissing.map((d) => d.message)));
      assert.equal(onMissing[0]!.message, 'orders_v2 does not exist on shop-dev: the query cannot run there as written, so no index is suggested for it.');
      assert.equal(doc.getText(onMissing[0]!.range), 'orders_v2');
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', file, onMissing[0]!.range);
      const titles = actions.map((a) => a.title);
      assert.ok(!titles.some((t) => /CREATE INDEX|Create index/.test(t)), JSON.stringify(titles));
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', file);
      assert.ok(!lenses.some((l) => l.range.start.line === missingLine && /Suggest index/.test(l.command?.title ?? '')), JSON.stringify(lenses.map((l) => `${l.range.start.line} ${l.command?.title}`)));
      // The table that exists keeps its advice: an index is offered there.
      const present = ds.filter((d) => d.range.start.line === 4);
      assert.ok(!present.some((d) => codeOf(d) === 'qpi.does-not-exist'));
      const presentActions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', file, new vscode.Range(4, 20, 4, 20));
      assert.ok(presentActions.some((a) => /CREATE INDEX .*ON qpi_dne_host/.test(a.title)), JSON.stringify(presentActions.map((a) => a.title)));
    });
  });
}
