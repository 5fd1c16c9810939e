// Keeps Explain's sessions (sessions.ts) in step with the editor: the session of the connection a query
// file uses is opened when the file is shown or a connection is chosen for it, so the first Explain finds it
// open; the session of a connection that is removed or edited is closed, and every one when the extension
// stops. Nothing here asks the user anything: a warm-up that cannot connect (a server that is down, a
// password not given yet) is left for the Explain, which says why.

import * as vscode from 'vscode';
import { settings } from '../config';
import type { ConnectionParts } from './actions';
import { queryKind } from '../targets';
import { connectionUri, type ConnectionEngine, type ConnectionSpec } from './spec';
import { changedConnections, explainSessions, warmExplainSession } from './sessions';

const ENGINES_OF: Record<string, ConnectionEngine[]> = { sql: ['postgres'], 'mongodb-playground': ['mongodb'], script: ['postgres', 'mongodb'] };

export function keepExplainSessions(s: ConnectionParts): vscode.Disposable {
  let known = changedConnections(new Map(), s.store.list()).seen;
  const warmEditor = (editor: vscode.TextEditor | undefined): void => {
    if (!editor) return;
    for (const engine of ENGINES_OF[queryKind(editor.document)] ?? []) {
      const spec = s.bindings.get(editor.document.uri, engine);
      if (spec) void warm(s, spec);
    }
  };
  const subs = [
    vscode.window.onDidChangeActiveTextEditor(warmEditor),
    s.bindings.onDidChange(() => warmEditor(vscode.window.activeTextEditor)),
    s.store.onDidChange(() => {
      const now = changedConnections(known, s.store.list());
      known = now.seen;
      for (const id of now.gone) explainSessions.forget(id);
      if (now.gone.length > 0) warmEditor(vscode.window.activeTextEditor);
    }),
  ];
  warmEditor(vscode.window.activeTextEditor);
  return {
    dispose: () => {
      for (const d of subs) d.dispose();
      void explainSessions.closeAll();
    },
  };
}

async function warm(s: ConnectionParts, spec: ConnectionSpec): Promise<void> {
  try {
    const password = spec.hasPassword ? await s.store.password(spec.id) : undefined;
    s.log.addSecret(password);
    const uri = connectionUri(spec, password);
    const { timeoutMs, connectTimeoutMs } = settings();
    await s.gateway();
    const t0 = performance.now();
    if (await warmExplainSession({ engine: spec.engine, connectionId: spec.id, uri, timeoutMs, connectTimeoutMs })) {
      s.log.info(`Explain's session on ${spec.name} is open (${Math.round(performance.now() - t0).toLocaleString('en-US')} ms), before the Explain.`);
    }
  } catch (err) {
    s.log.warn(`Explain's session on ${spec.name} was not opened ahead (the Explain opens it): ${err instanceof Error ? err.message : String(err)}`);
  }
}
