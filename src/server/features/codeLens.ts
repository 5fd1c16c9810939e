// Code lenses: Explain above every query, and the index it wants (or the one that serves it) with whose
// verdict that is, or that the connection's verdict is still coming.

import type { CodeLens } from 'vscode-languageserver';
import { explainText, explainValues } from '../../core/index';
import { ClientCommands, type CreateIndexArgs, type InlineExplainArgs } from '../../protocol/languageServer';
import { adviceWaiting } from '../asks/advice';
import type { ServerContext } from '../context';
import { databaseOf } from '../documents';

export function codeLensesOf(ctx: ServerContext, uri: string): CodeLens[] {
  if (!ctx.options.codeLens) return [];
  const state = ctx.current(uri);
  if (!state) return [];
  const out: CodeLens[] = [];
  for (const q of state.queries) {
    const a = ctx.analyses.of(state, q);
    const at = state.doc.positionAt(q.range.start);
    const range = { start: at, end: at };
    // "Explain" for every query; the client drops it where the extension draws its own.
    const text = explainText(q);
    const explain: InlineExplainArgs = { uri, start: q.range.start, end: q.range.end, engine: q.engine, ...(text.ok ? { text: text.text } : { problem: text.problem }) };
    const title = text.ok ? '$(debug-start) Explain' : explainValues(q) ? '$(debug-start) Explain (asks for values)' : '$(warning) Explain (needs literal values)';
    out.push({ range, command: { title, tooltip: text.ok ? 'Explain this query and show its plan' : text.problem, command: ClientCommands.explainInline, arguments: [explain] } });
    const waiting = adviceWaiting(state, q);
    if (waiting !== undefined) {
      out.push({ range, command: { title: `$(sync~spin) Checking indexes on ${waiting}`, tooltip: 'The advice for this query is being computed on the connection; the plan panel gives the same verdict.', command: '' } });
    } else if (a.top?.createText) {
      const database = databaseOf(q);
      const args: CreateIndexArgs = { uri, engine: q.engine, createText: a.top.createText, target: a.top.target, ...(database !== undefined ? { database } : {}) };
      const measured = a.top.measured ? ` ${a.top.measured}` : '';
      // The title says whose verdict it is: the rules' (read from the query and the index lists), or the
      // measurement's (the same verdict the plan panel and `qpi advise` give once they have measured).
      const tooltip = a.top.measured ? `The index this query wants: ${a.top.createText}${measured}` : `The index the rules choose for this query: ${a.top.createText}. Not measured yet: Explain measures the candidates and may choose another.`;
      out.push({ range, command: { title: `$(lightbulb) Suggest index ${a.top.measured ? '(measured)' : '(rules)'}`, tooltip, command: ClientCommands.suggestIndex, arguments: [args] } });
    } else if (a.top?.keep && a.top.rewriteOnly) {
      out.push({ range, command: { title: `$(lightbulb) Rewrite it to use ${a.top.keep}`, tooltip: `The index ${a.top.keep} has the keys this query needs, but only the rewritten query can use it (see the quick fix).`, command: '' } });
    } else if (a.top?.keep) {
      // Like the Suggest lens, the title says whose verdict it is.
      const tooltip = a.top.measured ?? `The rules read from the query and the index lists say ${a.top.keep} serves it. Not measured yet: Explain measures the candidates and may find a better index.`;
      out.push({ range, command: { title: `$(check) Index ${a.top.keep} serves it ${a.top.measured ? '(measured)' : '(rules)'}`, tooltip, command: '' } });
    }
  }
  return out;
}
