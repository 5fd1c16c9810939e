// Connections defined in the workspace's .vscode/settings.json, inside the real extension host: the
// folder uses the first of each engine without being asked, a sample query explains on it, an entry
// with a password is refused in one sentence, and a password the server asks for is asked once and kept
// in SecretStorage only. Runs before the other suites, while no connection is chosen for the folder, and
// removes its settings afterwards.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { until } from '../../until';
import { Commands } from '../../../src/extension/commands';
import type { ConnectionSpec } from '../../../src/extension/connections/spec';
import type { ExplainSummary } from '../../../src/extension/explain';
import type { ExtensionHandle } from '../../../src/extension/main';

const EXTENSION_ID = 'query-plan-inspector.query-plan-inspector';

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these tests with npm run test:host (it starts the servers).`);
  return v;
}


export function settingsConnectionTests(): void {
  describe('connections from settings', () => {
    let handle: ExtensionHandle;
    let folder: vscode.Uri;
    const config = () => vscode.workspace.getConfiguration('queryPlanInspector');

    before(async () => {
      const ext = vscode.extensions.getExtension<ExtensionHandle>(EXTENSION_ID);
      assert.ok(ext, `${EXTENSION_ID} is not installed in the host`);
      handle = await ext.activate();
      folder = vscode.workspace.workspaceFolders![0]!.uri;
    });

    after(async () => {
      delete handle.parts.store.promptPassword;
      await config().update('connections', undefined, vscode.ConfigurationTarget.Workspace);
      await until('the settings connections to go', () => (handle.parts.store.list().some((c) => c.origin) ? undefined : true));
    });

    it('the first PostgreSQL connection of the folder settings is its default, explains orders.sql, and an entry with a password is refused', async () => {
      const leaked = 'leaked-pw-123';
      const pgUri = new URL(env('QPI_SAMPLES_PG_URI'));
      await config().update('connections', [
        { name: 'team pg', engine: 'postgres', uri: env('QPI_SAMPLES_PG_URI') },
        { name: 'team mongo', engine: 'mongodb', uri: env('QPI_SAMPLES_MONGO_URI') },
        { name: 'leaky', engine: 'postgres', uri: `postgresql://app:${leaked}@${pgUri.host}/postgres` },
      ], vscode.ConfigurationTarget.Workspace);
      const store = handle.parts.store;
      const spec = await until('team pg in the store', () => store.list('postgres').find((c) => c.name === 'team pg'));
      assert.equal(spec.origin?.scope, 'folder');
      assert.equal(spec.origin?.folder, folder.toString());
      assert.deepEqual(store.list().filter((c) => c.origin).map((c) => c.name), ['team pg', 'team mongo']);
      // The entry with a password: refused in one sentence that does not repeat it, never usable.
      const problem = store.settingsProblems().find((p) => p.name === 'leaky');
      assert.ok(problem, 'the entry with a password was not refused');
      assert.match(problem.error, /^The connection "leaky" in the settings of the folder \S+ has a password in its uri: remove it[^\n]*\.$/);
      assert.ok(!problem.error.includes(leaked));
      assert.ok(!JSON.stringify(store.list()).includes(leaked));

      const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, 'orders.sql'));
      const editor = await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      const offset = doc.getText().indexOf('SELECT id, created_at FROM orders ORDER BY');
      assert.ok(offset >= 0);
      editor.selection = new vscode.Selection(doc.positionAt(offset + 1), doc.positionAt(offset + 1));
      assert.equal(handle.parts.bindings.get(doc.uri, 'postgres')?.id, spec.id);
      assert.equal(handle.parts.bindings.get(doc.uri, 'mongodb')?.name, 'team mongo');
      await until('the status bar to show team pg', () => (handle.statusBarText().includes('team pg') ? true : undefined));

      const summary = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
      assert.ok(summary, `Explain failed: ${handle.lastError()}`);
      assert.equal(summary.connection, 'team pg');
      assert.equal(summary.engine, 'postgres');
      assert.ok(summary.nodeCount >= 2, `only ${summary.nodeCount} nodes`);
      assert.equal(store.state(spec.id).kind, 'ok');

      // Read-only here: removing it is refused in one sentence; the settings file keeps it.
      assert.equal(await vscode.commands.executeCommand(Commands.removeConnection, { id: spec.id, confirm: false }), undefined);
      assert.match(handle.lastError() ?? '', /^team pg is defined in the settings of the folder \S+: remove it there\.$/);
      assert.ok(store.get(spec.id));
      handle.clearLastError();
      assert.equal(await vscode.commands.executeCommand(Commands.editConnection, { id: spec.id, name: 'renamed' }), undefined);
      assert.match(handle.lastError() ?? '', /^team pg is defined in the settings of the folder \S+: change it there, only its password is kept here\.$/);
      assert.equal(store.get(spec.id)?.name, 'team pg');
    });

    it('asks for the password when the server wants one, keeps it in SecretStorage only, and Explain uses it', async () => {
      const pgUri = new URL(env('QPI_SAMPLES_PG_URI'));
      const user = env('QPI_TEST_PW_USER');
      const password = env('QPI_TEST_PW_PASSWORD');
      await config().update('connections', [{ name: 'team pw', engine: 'postgres', uri: `postgresql://${user}@${pgUri.host}/postgres` }], vscode.ConfigurationTarget.Workspace);
      const store = handle.parts.store;
      const spec: ConnectionSpec = await until('team pw in the store', () => store.list().find((c) => c.name === 'team pw'));
      assert.equal(spec.hasPassword, false);
      const asked: string[] = [];
      store.promptPassword = async (_spec, reason) => {
        asked.push(reason);
        return password;
      };

      const tested = await vscode.commands.executeCommand<{ ok: boolean }>(Commands.testConnection, spec.id);
      assert.equal(tested?.ok, true, handle.lastError());
      assert.deepEqual(asked, [`team pw asks for the password of ${user}.`]);
      assert.equal(await store.password(spec.id), password);
      assert.equal(store.get(spec.id)?.hasPassword, true);
      assert.ok(!JSON.stringify(handle.parts.context.globalState.get('queryPlanInspector.connections') ?? []).includes(password));
      assert.ok(!readFileSync(vscode.Uri.joinPath(folder, '.vscode', 'settings.json').fsPath, 'utf8').includes(password), 'the password is in the settings');

      // Forgotten, then asked again by Explain itself (through the gateway), which then runs.
      await store.setSettingsPassword(spec.id, null);
      const summary = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, {
        text: 'SELECT relname FROM pg_class ORDER BY relname LIMIT 5', engine: 'postgres', connectionId: spec.id,
      });
      assert.ok(summary, `Explain failed: ${handle.lastError()}`);
      assert.equal(summary.connection, 'team pw');
      assert.equal(asked.length, 2);
      assert.equal(await store.password(spec.id), password);
    });
  });
}
