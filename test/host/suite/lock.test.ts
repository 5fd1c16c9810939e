// qpi.lock.json in the real host: a file and a lock written into the workspace while the editor runs.
// The language server hears of the lock through the editor's file watcher, shows the finding it waives
// as information with the waiver's reason, owner and expiry (message and hover), and as a warning again
// once the lock is deleted.

import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { until } from './languageServer.test';

const FILE = 'app/qpiLockAudit.js';
/**
 * The query's key as `qpi check` writes it in the lock (file, engine, function, hash of the shape);
 * test/unit/lsp-lock.test.ts checks that collectQueries computes this key for the same source. Written out here
 * because the in-host bundle does not load the SQL parser the core's identity module imports.
 */
const HOST_LOCK_KEY = 'app/qpiLockAudit.js mongodb recentAudit 3f5bb6cd8ec53f51';

const HOST_LOCK_SOURCE = `export async function recentAudit(db, actor) {
  return db.collection('audit_log').find({ actor: 'x' }).sort({ at: -1 }).skip(5000).limit(20).toArray();
}
`;

function skipDiagnostic(uri: vscode.Uri): vscode.Diagnostic | undefined {
  return vscode.languages.getDiagnostics(uri).find((d) => d.source === 'Query Plan Inspector' && (typeof d.code === 'object' ? String(d.code.value) : String(d.code)) === 'qpi.skip-pagination');
}

export function lockTests(): void {
  describe('qpi.lock.json in the editor', () => {
    let file: vscode.Uri;
    let lock: vscode.Uri;

    before(async () => {
      const folder = vscode.workspace.workspaceFolders![0]!.uri;
      file = vscode.Uri.joinPath(folder, ...FILE.split('/'));
      lock = vscode.Uri.joinPath(folder, 'qpi.lock.json');
      await vscode.workspace.fs.writeFile(file, Buffer.from(HOST_LOCK_SOURCE));
    });

    after(async () => {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      await vscode.workspace.fs.delete(file).then(undefined, () => undefined);
      await vscode.workspace.fs.delete(lock).then(undefined, () => undefined);
    });

    it('shows a finding waived in the lock as waived, with its reason, owner and expiry, and as a warning again when the lock goes', async () => {
      const doc = await vscode.workspace.openTextDocument(file);
      await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      const before = await until('the skip-pagination warning', () => {
        const d = skipDiagnostic(file);
        return d?.severity === vscode.DiagnosticSeverity.Warning ? d : undefined;
      });
      assert.doesNotMatch(before.message, /Waived/);

      const waived = `${JSON.stringify({ environment: {}, queries: {}, version: 1, waivers: [{ expires: '2999-12-31', owner: 'ops-team', query: HOST_LOCK_KEY, reason: 'the audit page is read by hand', rule: 'qpi.skip-pagination' }] }, null, 2)}\n`;
      await vscode.workspace.fs.writeFile(lock, Buffer.from(waived));
      const after = await until(() => `the waived finding (now: ${skipDiagnostic(file)?.message ?? 'none'})`, () => {
        const d = skipDiagnostic(file);
        return d?.severity === vscode.DiagnosticSeverity.Information ? d : undefined;
      });
      assert.match(after.message, /Waived in qpi\.lock\.json until 2999-12-31 by ops-team: the audit page is read by hand\.$/);
      const at = HOST_LOCK_SOURCE.indexOf('.skip(');
      const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', file, doc.positionAt(at + 2));
      const text = hovers.flatMap((h) => h.contents.map((c) => (c as vscode.MarkdownString).value ?? String(c))).join('\n');
      assert.match(text, /`qpi\.skip-pagination`: Waived in qpi\.lock\.json until 2999-12-31 by ops-team/);

      await vscode.workspace.fs.delete(lock);
      await until('the warning again once the lock is deleted', () => skipDiagnostic(file)?.severity === vscode.DiagnosticSeverity.Warning);
    });
  });
}
