// The open documents: the server's copy of each text, edited in place with the editor's changes, its
// query index (the finder's incremental reading) and the per-document state every concern keeps.

import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic, Range } from 'vscode-languageserver';
import { changedSpan, querySourceKind, scriptDialect, ScriptQueryIndex, SqlQueryIndex } from '../core/index';
import type { DocumentSchema, FinderContext, FoundQuery, InlineIgnore, KnownChange, QueryAnalysis, QuerySourceKind, SourceRange, Waiver } from '../core/index';

/** One edit, in the text before it: the changed part [p, oldEnd), its last line, and the lines it added (or removed, below 0). */
export interface Edit {
  p: number;
  oldEnd: number;
  delta: number;
  endLine: number;
  lines: number;
}

/** A query's analysis for one schema version, and the diagnostics last published for it and where. */
export interface CachedAnalysis {
  schemaVersion: number;
  analysis: QueryAnalysis;
  /** Where the query started when it was analysed (a query the edit did not touch moves, and keeps this). */
  start: number;
  published?: Published;
}

/**
 * The diagnostics last published for a query, where the query was then, and the block of text they lie
 * in: the query and its findings' places (which may be outside it: a filter or a pipeline declared above
 * the call, a constant further down).
 */
export interface Published {
  start: number;
  line: number;
  character: number;
  diagnostics: Diagnostic[];
  /** The waivers and ignores they were built with (QueryCovers.sig). */
  covers: string;
  /** The block [lo, hi) of the text, and the line lo is on. */
  lo: number;
  hi: number;
  loLine: number;
}

/**
 * What the gate's waivers and inline ignores say of one query: its `qpi-ignore` comments, the lock's
 * waivers of its key, and the lock's file for the hover.
 */
export interface QueryCovers {
  ignores: InlineIgnore[];
  waivers: Waiver[];
  lockFile?: string;
  /** What the diagnostics were built with: equal strings, equal diagnostics. */
  sig: string;
}

export interface DocState {
  uri: string;
  kind: QuerySourceKind;
  doc: TextDocument;
  index: ScriptQueryIndex | SqlQueryIndex;
  queries: FoundQuery[];
  /** The version the queries and diagnostics were computed for. */
  analysedVersion: number;
  analyses: WeakMap<FoundQuery, CachedAnalysis>;
  schema?: DocumentSchema;
  schemaVersion: number;
  /** Targets already announced in SchemaNeeded, and the queries already looked at for it. */
  announced: Set<string>;
  announcedQueries: WeakSet<FoundQuery>;
  /** The common prefix and suffix of the text the index last read and the document's text now. */
  sinceIndexed?: KnownChange;
  /** The one edit since the last analysis, where it was; `many` when there were several. */
  edit?: Edit | 'many';
  timer?: ReturnType<typeof setTimeout>;
  lastRun: number;
  /** Background explains: the texts already asked for, when, and the pending request. */
  explainAsked: Set<string>;
  explainTimes: number[];
  explainTimer?: ReturnType<typeof setTimeout>;
  /** Callers of `explainsSettled`, resolved when the pending request has been sent or dropped. */
  explainWaiters: (() => void)[];
  /** Texts whose advice was asked of the extension's advice service, and those it could not answer. */
  adviceAsked: Set<string>;
  adviceFailed: Set<string>;
  /**
   * After a ClearSchema, the connections the document had, until its lists come again (or a few seconds
   * pass): its lenses say "Checking" meanwhile instead of falling back, for an instant, to advice made
   * without the indexes.
   */
  reconnecting?: { connection: { mongodb?: string; postgres?: string }; until: number };
  /** Resolves when the pending analysis has run (tests and the benchmark wait on it). */
  waiters: (() => void)[];
  /** The cap the client was last told this document hits ('' for none), so each is said once. */
  capSaid?: string;
  /** The waivers and ignores of the queries, for one version of the text and of the locks. */
  covers?: { version: number; locks: number; today: string; byQuery: Map<FoundQuery, QueryCovers> };
}

/** A document's state when it opens, or undefined for a language the finder does not read. */
export function openDocument(uri: string, languageId: string, version: number, text: string, context: (uri: string) => FinderContext): DocState | undefined {
  const kind = querySourceKind(languageId, uri);
  if (kind === 'other') return undefined;
  return {
    uri, kind, doc: TextDocument.create(uri, languageId, version, text), queries: [], analysedVersion: -1,
    index: kind === 'sql' ? new SqlQueryIndex() : new ScriptQueryIndex(kind, scriptDialect(languageId, uri), context(uri)),
    analyses: new WeakMap(), schemaVersion: 0, announced: new Set(), announcedQueries: new WeakSet(), lastRun: 0, waiters: [], explainWaiters: [],
    explainAsked: new Set(), explainTimes: [], adviceAsked: new Set(), adviceFailed: new Set(),
  };
}

/** The whole new text of a document; false when it is the text the server has. */
export function replaceText(state: DocState, version: number, text: string): boolean {
  const before = state.doc.getText();
  if (version === state.doc.version && text === before) return false;
  const { p, oldEnd } = changedSpan(before, text);
  edited(state, p, oldEnd, text.slice(p, text.length - (before.length - oldEnd)), version);
  return true;
}

/**
 * A document's changes as the editor sends them (LSP's incremental sync): each a range of the text as
 * the changes before it left it, with its new text, or a whole new text. The server's copy is edited
 * with them, so no text is compared with another to find what changed.
 */
export function applyChanges(state: DocState, version: number, changes: readonly ({ range: Range; text: string } | { text: string })[]): void {
  for (const c of changes) {
    if ('range' in c) {
      const p = state.doc.offsetAt(c.range.start);
      edited(state, p, Math.max(p, state.doc.offsetAt(c.range.end)), c.text, version);
    } else {
      const before = state.doc.getText();
      const { p, oldEnd } = changedSpan(before, c.text);
      edited(state, p, oldEnd, c.text.slice(p, c.text.length - (before.length - oldEnd)), version);
    }
  }
}

/**
 * Replaces [p, oldEnd) of the document by `inserted`. The document is edited in place, so its line
 * offsets are moved rather than counted again over the whole file when the diagnostics ask for a
 * position; the finder and the diagnostics are told where the edit was, so they need not compare the
 * texts again.
 */
function edited(state: DocState, p: number, oldEnd: number, inserted: string, version: number): void {
  const suffix = state.doc.getText().length - oldEnd;
  const range = { start: state.doc.positionAt(p), end: state.doc.positionAt(oldEnd) };
  state.doc = TextDocument.update(state.doc, [{ range, text: inserted }], version);
  state.sinceIndexed = state.sinceIndexed ? { p: Math.min(state.sinceIndexed.p, p), suffix: Math.min(state.sinceIndexed.suffix, suffix) } : { p, suffix };
  const lines = inserted.split('\n').length - 1 - (range.end.line - range.start.line);
  state.edit = state.edit ? 'many' : { p, oldEnd, delta: inserted.length - (oldEnd - p), endLine: range.end.line, lines };
}

/** Stops a closed document's timers and releases whoever waits on it. */
export function closeDocument(state: DocState): void {
  if (state.timer) clearTimeout(state.timer);
  if (state.explainTimer) clearTimeout(state.explainTimer);
  for (const w of state.waiters.splice(0)) w();
  for (const w of state.explainWaiters.splice(0)) w();
}

/**
 * The finder's queries, the first `max` of them when there are more; `over` says how many the finder
 * found when they are more than `max`. Nothing is read from a text over `maxTextLength`.
 */
export function readQueries(state: DocState, maxTextLength: number, max = Infinity): { over?: number } | undefined {
  if (state.doc.getText().length > maxTextLength) return undefined;
  const all = state.index.result().queries;
  state.queries = all.length > max ? all.slice(0, max) : all;
  return all.length > max ? { over: all.length } : {};
}

/** The innermost query around an offset. */
export function queryAt(state: DocState, offset: number): FoundQuery | undefined {
  let best: FoundQuery | undefined;
  for (const q of state.queries) {
    if (q.range.start <= offset && offset <= q.range.end && (!best || q.range.end - q.range.start < best.range.end - best.range.start)) best = q;
  }
  return best;
}

export function rangeOf(state: DocState, r: SourceRange): Range {
  return { start: state.doc.positionAt(r.start), end: state.doc.positionAt(r.end) };
}

/** MongoDB: the database the code names for the query (`client.db('x')`), if any. */
export function databaseOf(q: FoundQuery): string | undefined {
  return q.engine === 'mongodb' ? q.command.database : undefined;
}
