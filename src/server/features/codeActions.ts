// Code actions: a finding's fix (with the declaration it needs), Copy and Create for a suggested index,
// the rewritten query to copy, and Explain for the query at the cursor.

import type { CodeAction, CodeActionParams, Diagnostic, Range } from 'vscode-languageserver';
import { anchorRange, declareEdit, explainText, scriptDialect, type Anchor, type FoundQuery, type InlineFinding } from '../../core/index';
import { ClientCommands, type CreateIndexArgs, type DataEdit, type DiagnosticData, type InlineExplainArgs } from '../../protocol/languageServer';
import type { ServerContext } from '../context';
import { databaseOf, queryAt, rangeOf, type DocState } from '../documents';
import { SOURCE } from './diagnostics';

/** LSP 3.18's SnippetTextEdit: the text with tab stops (`${1:unknown}`), for clients that say they apply it. */
interface SnippetEdit {
  range: Range;
  snippet: { kind: 'snippet'; value: string };
}

export function codeActionsFor(ctx: ServerContext, params: CodeActionParams): CodeAction[] {
  const state = ctx.current(params.textDocument.uri);
  if (!state) return [];
  const out: CodeAction[] = [];
  const uri = state.uri;
  const version = state.doc.version;
  const seen = new Set<string>();
  const add = (a: CodeAction) => {
    const key = `${a.title}\u0000${JSON.stringify(a.command?.arguments ?? a.edit ?? '')}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(a);
  };
  for (const d of params.context.diagnostics) {
    const data = d.data as DiagnosticData | undefined;
    if (d.source !== SOURCE || !data || typeof data.code !== 'string' || !data.query) continue;
    const found = findingOf(ctx, state, data, d);
    if (!found) continue;
    const { q, f } = found;
    const edits = f.fix ? fixEdits(ctx, state, q, f) : undefined;
    if (f.fix && edits) {
      add({
        title: f.fix.title, kind: 'quickfix', diagnostics: [d], isPreferred: true,
        edit: { documentChanges: [{ textDocument: { uri, version }, edits }] },
      });
    }
    if (f.suggestion) suggestionActions(uri, q.engine, f.suggestion.createText, f.suggestion.target, [d], add);
    if (f.rewriteText && !f.fix) {
      add({ title: 'Copy the rewritten query', kind: 'quickfix', diagnostics: [d], command: { title: 'Copy', command: ClientCommands.copyText, arguments: [{ text: f.rewriteText, what: 'The rewritten query' }] } });
    }
  }
  const q = queryAt(state, state.doc.offsetAt(params.range.start));
  if (q) {
    const text = explainText(q);
    const explain: InlineExplainArgs = { uri, start: q.range.start, end: q.range.end, engine: q.engine, ...(text.ok ? { text: text.text } : { problem: text.problem }) };
    add({ title: 'Explain this query', kind: '', command: { title: 'Explain this query', command: ClientCommands.explainInline, arguments: [explain] } });
    const a = ctx.analyses.of(state, q);
    if (a.top?.createText) suggestionActions(uri, q.engine, a.top.createText, a.top.target, undefined, add, databaseOf(q));
  }
  return out;
}

/**
 * The finding a diagnostic stands for, in the analysis of the document's current version: same query,
 * same code, same place. A diagnostic of another version whose query moved finds nothing, so no code
 * action is offered for text that is no longer there.
 */
function findingOf(ctx: ServerContext, state: DocState, data: DiagnosticData, d: Diagnostic): { q: FoundQuery; f: InlineFinding } | undefined {
  const q = state.queries.find((x) => x.range.start === data.query.start && x.range.end === data.query.end);
  if (!q) return undefined;
  for (const f of ctx.analyses.placed(state, q).findings) {
    if (f.code !== data.code) continue;
    const r = rangeOf(state, anchorRange(q, f.anchor));
    if (r.start.line === d.range.start.line && r.start.character === d.range.start.character) return { q, f };
  }
  return undefined;
}

function edit(state: DocState, q: FoundQuery, anchor: Anchor, newText: string): DataEdit {
  return { range: rangeOf(state, anchorRange(q, anchor)), newText };
}

/**
 * The edits of a finding's fix, from the cached analysis of the query it belongs to. A fix that needs
 * a name declared gets the declaration too, or is not offered when it cannot be declared there.
 */
function fixEdits(ctx: ServerContext, state: DocState, q: FoundQuery, f: InlineFinding): (DataEdit | SnippetEdit)[] | undefined {
  if (!f.fix) return undefined;
  const edits: (DataEdit | SnippetEdit)[] = f.fix.edits.map((e) => edit(state, q, e.anchor, e.newText));
  if (f.fix.declare) {
    if (state.kind === 'sql') return undefined;
    const { name, offset, why } = f.fix.declare;
    const decl = declareEdit(state.doc.getText(), scriptDialect(state.doc.languageId, state.uri), offset, name, why);
    if (!decl) return undefined;
    const range = rangeOf(state, decl);
    edits.unshift(ctx.options.snippets ? { range, snippet: { kind: 'snippet', value: decl.snippet } } : { range, newText: decl.newText });
  }
  return edits;
}

function suggestionActions(uri: string, engine: 'mongodb' | 'postgres', createText: string, target: string, diagnostics: Diagnostic[] | undefined, add: (a: CodeAction) => void, database?: string): void {
  const what = engine === 'mongodb' ? 'createIndex' : 'CREATE INDEX';
  const args: CreateIndexArgs = { uri, engine, createText, target, ...(database !== undefined ? { database } : {}) };
  add({ title: `Copy ${what}: ${createText}`, kind: diagnostics ? 'quickfix' : '', ...(diagnostics ? { diagnostics } : {}), command: { title: `Copy ${what}`, command: ClientCommands.copyText, arguments: [{ text: createText, what: `The ${what} command` }] } });
  add({ title: 'Create index...', kind: diagnostics ? 'quickfix' : '', ...(diagnostics ? { diagnostics } : {}), command: { title: 'Create index...', command: ClientCommands.createIndex, arguments: [args] } });
}
