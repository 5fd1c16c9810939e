// The language server's behaviour, independent of the transport: open documents, their queries and
// analyses (cached per query, so an edit re-analyses only the statements it touched), diagnostics,
// hovers, code actions, lenses and the schema the extension sends. main.ts wires it to a real LSP
// connection; the unit tests drive it through a fake one.

import { TextDocument } from 'vscode-languageserver-textdocument';
import type {
  CodeAction, CodeActionParams, CodeLens, Diagnostic, Hover, Position, PublishDiagnosticsParams, Range,
} from 'vscode-languageserver';
import { changedSpan, declareEdit, isCollectionFamily } from '../core/index';
import { querySourceKind, scriptDialect, ScriptQueryIndex, SqlQueryIndex, type FoundQuery, type KnownChange, type QuerySourceKind, type SourceRange } from '../core/index';
import {
  AdviceWanted, CapReached, ClientCommands, ExplainWanted, SchemaNeeded,
  type AdviceWantedParams, type ClearAdviceParams, type SetAdviceParams, type ClearSchemaParams, type CreateIndexArgs, type DataEdit, type ExplainWantedParams, type SetPlansParams, type DiagnosticData, type InlineExplainArgs, type ListedQuery, type SchemaNeededParams,
  type SetSchemaParams, type SetSchemaResult, type CapReachedParams,
} from '../protocol/languageServer';
import { explainText, explainValues } from '../core/index';
import { analyzeQuery, anchorRange, planKey, type Anchor, type DocumentSchema, type InlineFinding, type QueryAnalysis } from '../core/index';
import type { FinderContext, RepositorySchema, WorkspaceModules } from '../core/index';
import { CheckRules, coverJustification, coverOf, expiredOf, expiredSentence, queryIgnores, queryKeys, waiversOf, type Cover, type InlineIgnore, type Lock, type Waiver } from '../core/index';
import { fileURLToPath } from 'node:url';

/** What the service needs from a connection: publish diagnostics, notify the client, log. */
export interface ServerPort {
  sendDiagnostics(params: PublishDiagnosticsParams): void;
  sendNotification(method: string, params: unknown): void;
  log(message: string): void;
  /** Asks the editor to draw the lenses again (they changed without an edit: new indexes, new advice). */
  refreshLenses?(): void;
}

export interface ServiceOptions {
  /** Minimum time between two analyses of one document during a burst of edits, in ms. */
  debounceMs: number;
  codeLens: boolean;
  /** Files longer than this are not analysed (generated bundles, minified code). */
  maxTextLength: number;
  /** Only a file's first this many queries are analysed (diagnostics, lenses, hovers); absent: all. */
  maxQueries?: number;
  /** Ask the extension for plain explains of a connected document's queries, this long after the last edit (ms); 0 turns it off. */
  explainDelayMs?: number;
  /** At most this many background explains per document and minute. */
  explainsPerMinute?: number;
  /** The client applies snippet edits (LSP 3.18 SnippetTextEdit): a fix's tab stops select what to choose. */
  snippets?: boolean;
  /** Today as the lock's waivers write it (YYYY-MM-DD, UTC); a waiver holds through its expiry day. */
  today?: () => string;
}

/** A `qpi.lock.json` of the workspace: its folder (absolute, '/' separated), whose files its keys name. */
export interface WorkspaceLock {
  dir: string;
  lock: Lock;
}

/**
 * What the gate's waivers and inline ignores say of one query: its `qpi-ignore` comments, the lock's
 * waivers of its key, and the lock's file for the hover.
 */
interface QueryCovers {
  ignores: InlineIgnore[];
  waivers: Waiver[];
  lockFile?: string;
  /** What the diagnostics were built with: equal strings, equal diagnostics. */
  sig: string;
}

/** LSP 3.18's SnippetTextEdit: the text with tab stops (`${1:unknown}`), for clients that say they apply it. */
interface SnippetEdit {
  range: Range;
  snippet: { kind: 'snippet'; value: string };
}

/**
 * The per-file caps keep a file of any size answered within 2 s and 300 MB (bench/caps.ts): the finder
 * reads a file of up to 600,000 characters (53,000 short queries in 3 MB took it 2.4 s and 1 GB), and
 * its first 750 queries are analysed. The extension's own lenses use the same figures (src/extension/caps.ts).
 */
export const DEFAULT_OPTIONS: ServiceOptions = { debounceMs: 150, codeLens: true, maxTextLength: 600_000, maxQueries: 750, explainDelayMs: 1500, explainsPerMinute: 8 };

const SOURCE = 'Query Plan Inspector';
/** How long lenses wait for a document's index lists after they were cleared, before the rules speak alone. */
const RECONNECT_MS = 5_000;
const SEVERITY = { warning: 2, information: 3, hint: 4 } as const;

/** A query's analysis for one schema version, and the diagnostics last published for it and where. */
interface CachedAnalysis {
  schemaVersion: number;
  analysis: QueryAnalysis;
  /** Where the query started when it was analysed (a query the edit did not touch moves, and keeps this). */
  start: number;
  published?: Published;
}

/** One edit, in the text before it: the changed part [p, oldEnd), its last line, and the lines it added (or removed, below 0). */
interface Edit {
  p: number;
  oldEnd: number;
  delta: number;
  endLine: number;
  lines: number;
}

/**
 * The diagnostics last published for a query, where the query was then, and the block of text they lie
 * in: the query and its findings' places (which may be outside it: a filter or a pipeline declared above
 * the call, a constant further down).
 */
interface Published {
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

interface DocState {
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

export class InlineAdviceService {
  private readonly docs = new Map<string, DocState>();
  /** The indexes and keys the workspace's schema files declare (workspaceSchema.ts reads them). */
  private repository: RepositorySchema | undefined;
  /** The workspace's qpi.lock.json files (workspaceLock.ts reads them), and how often they changed. */
  private locks: WorkspaceLock[] = [];
  private locksVersion = 0;
  /** Analysis time of the last runs, in ms, for the log and the benchmark. */
  readonly timings: number[] = [];

  constructor(private readonly port: ServerPort, readonly options: ServiceOptions = DEFAULT_OPTIONS) {}

  // ---- documents --------------------------------------------------------------------------------------

  open(uri: string, languageId: string, version: number, text: string): void {
    const kind = querySourceKind(languageId, uri);
    if (kind === 'other') return;
    const state: DocState = {
      uri, kind, doc: TextDocument.create(uri, languageId, version, text), queries: [], analysedVersion: -1,
      index: kind === 'sql' ? new SqlQueryIndex() : new ScriptQueryIndex(kind, scriptDialect(languageId, uri), this.finderContext(uri)),
      analyses: new WeakMap(), schemaVersion: 0, announced: new Set(), announcedQueries: new WeakSet(), lastRun: 0, waiters: [], explainWaiters: [],
      explainAsked: new Set(), explainTimes: [], adviceAsked: new Set(), adviceFailed: new Set(),
    };
    this.docs.set(uri, state);
    this.run(state);
  }

  /** The whole new text of a document. */
  change(uri: string, version: number, text: string): void {
    const state = this.docs.get(uri);
    if (!state) return;
    const before = state.doc.getText();
    if (version === state.doc.version && text === before) return;
    const { p, oldEnd } = changedSpan(before, text);
    this.edited(state, p, oldEnd, text.slice(p, text.length - (before.length - oldEnd)), version);
    this.schedule(state);
  }

  /**
   * A document's changes as the editor sends them (LSP's incremental sync): each a range of the text as
   * the changes before it left it, with its new text, or a whole new text. The server's copy is edited
   * with them, so no text is compared with another to find what changed.
   */
  applyChanges(uri: string, version: number, changes: readonly ({ range: Range; text: string } | { text: string })[]): void {
    const state = this.docs.get(uri);
    if (!state || changes.length === 0) return;
    for (const c of changes) {
      if ('range' in c) {
        const p = state.doc.offsetAt(c.range.start);
        this.edited(state, p, Math.max(p, state.doc.offsetAt(c.range.end)), c.text, version);
      } else {
        const before = state.doc.getText();
        const { p, oldEnd } = changedSpan(before, c.text);
        this.edited(state, p, oldEnd, c.text.slice(p, c.text.length - (before.length - oldEnd)), version);
      }
    }
    this.schedule(state);
  }

  /**
   * Replaces [p, oldEnd) of the document by `inserted`. The document is edited in place, so its line
   * offsets are moved rather than counted again over the whole file when the diagnostics ask for a
   * position; the finder and the diagnostics are told where the edit was, so they need not compare the
   * texts again.
   */
  private edited(state: DocState, p: number, oldEnd: number, inserted: string, version: number): void {
    const suffix = state.doc.getText().length - oldEnd;
    const range = { start: state.doc.positionAt(p), end: state.doc.positionAt(oldEnd) };
    state.doc = TextDocument.update(state.doc, [{ range, text: inserted }], version);
    state.sinceIndexed = state.sinceIndexed ? { p: Math.min(state.sinceIndexed.p, p), suffix: Math.min(state.sinceIndexed.suffix, suffix) } : { p, suffix };
    const lines = inserted.split('\n').length - 1 - (range.end.line - range.start.line);
    state.edit = state.edit ? 'many' : { p, oldEnd, delta: inserted.length - (oldEnd - p), endLine: range.end.line, lines };
  }

  close(uri: string): void {
    const state = this.docs.get(uri);
    if (!state) return;
    if (state.timer) clearTimeout(state.timer);
    if (state.explainTimer) clearTimeout(state.explainTimer);
    this.docs.delete(uri);
    this.port.sendDiagnostics({ uri, diagnostics: [] });
    for (const w of state.waiters.splice(0)) w();
    for (const w of state.explainWaiters.splice(0)) w();
  }

  /** Resolves once the document's latest version has been analysed and its diagnostics published. */
  settled(uri: string): Promise<void> {
    const state = this.docs.get(uri);
    if (!state || (state.analysedVersion === state.doc.version && !state.timer)) return Promise.resolve();
    return new Promise((resolve) => state.waiters.push(resolve));
  }

  /**
   * Resolves once the document is analysed and no background explain is waiting for its delay: what
   * was going to be asked of the extension has been asked (or dropped with the document).
   */
  async explainsSettled(uri: string): Promise<void> {
    await this.settled(uri);
    const state = this.docs.get(uri);
    if (!state?.explainTimer) return;
    await new Promise<void>((resolve) => state.explainWaiters.push(resolve));
  }

  /**
   * The first edit after a pause runs at once (on the next turn of the event loop); edits that follow
   * within `debounceMs` of the last run are folded into one run when that time is up.
   */
  private schedule(state: DocState): void {
    if (state.timer) return;
    const since = Date.now() - state.lastRun;
    const wait = since >= this.options.debounceMs ? 0 : this.options.debounceMs - since;
    state.timer = setTimeout(() => {
      delete state.timer;
      this.run(state);
    }, wait);
  }

  private run(state: DocState): void {
    const t0 = performance.now();
    const text = state.doc.getText();
    try {
      if (text.length > this.options.maxTextLength) {
        state.queries = [];
        // The finder starts again from the whole text when the file is under the cap again.
        state.sinceIndexed = { p: 0, suffix: 0 };
        this.cap(state, 'characters', this.options.maxTextLength, text.length);
      } else {
        state.index.update(text, state.sinceIndexed);
        delete state.sinceIndexed;
        this.readQueries(state);
      }
      state.analysedVersion = state.doc.version;
      const edit = state.edit;
      delete state.edit;
      this.publish(state, edit === 'many' ? undefined : edit);
      this.announce(state);
      this.askAdvice(state);
      this.scheduleExplain(state);
    } catch (err) {
      // A bug in a rule must not take the server down: log it and leave the last diagnostics.
      this.port.log(`Analysing ${state.uri} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    } finally {
      state.lastRun = Date.now();
      this.timings.push(performance.now() - t0);
      if (this.timings.length > 1000) this.timings.splice(0, this.timings.length - 1000);
      if (!state.timer) for (const w of state.waiters.splice(0)) w();
    }
  }

  /** The finder's queries, the first `maxQueries` of them when there are more (which the client is told). */
  private readQueries(state: DocState): void {
    if (state.doc.getText().length > this.options.maxTextLength) return;
    const all = state.index.result().queries;
    const max = this.options.maxQueries ?? Infinity;
    state.queries = all.length > max ? all.slice(0, max) : all;
    if (all.length > max) this.cap(state, 'queries', max, all.length);
    else this.cap(state, null);
  }

  /** Tells the client a document hit a cap (or none any more), once per change. */
  private cap(state: DocState, cap: CapReachedParams['cap'], limit?: number, size?: number): void {
    const said = cap ?? '';
    if ((state.capSaid ?? '') === said) return;
    state.capSaid = said;
    this.port.sendNotification(CapReached, { uri: state.uri, cap, ...(limit !== undefined ? { limit } : {}), ...(size !== undefined ? { size } : {}) } satisfies CapReachedParams);
    if (cap) this.port.log(`${state.uri} has ${size!.toLocaleString('en-US')} ${cap}, over the cap of ${limit!.toLocaleString('en-US')}: ${cap === 'characters' ? 'it is not analysed' : `only its first ${limit!.toLocaleString('en-US')} are analysed`}.`);
  }

  private analysis(state: DocState, q: FoundQuery): QueryAnalysis {
    return this.cached(state, q).analysis;
  }

  /**
   * The analysis of a query where it is now. Findings and their anchors move with the query's own ranges,
   * so diagnostics take the cached analysis wherever the query moved; a fix's edits and declarations are
   * file offsets of the text the query was analysed in, so code actions ask again once it moved.
   */
  private placed(state: DocState, q: FoundQuery): QueryAnalysis {
    const entry = this.cached(state, q);
    if (entry.start === q.range.start) return entry.analysis;
    const published = entry.published;
    const fresh = this.cached(state, q, true);
    if (published) fresh.published = published;
    return fresh.analysis;
  }

  /**
   * `findings`: only the findings are wanted (the diagnostics), so a document without a connection's
   * schema is not advised yet: the advice, the hover and the code actions are computed when a hover, a
   * lens or a code action asks, and the diagnostics published meanwhile are kept, since those findings
   * are the same.
   */
  private cached(state: DocState, q: FoundQuery, again = false, findings = false): CachedAnalysis {
    const hit = state.analyses.get(q);
    const current = hit !== undefined && hit.schemaVersion === state.schemaVersion && !again;
    if (current && (findings || !hit.analysis.findingsOnly)) return hit;
    let analysis: QueryAnalysis;
    try {
      analysis = analyzeQuery(q, state.doc.getText(), state.schema, this.repository, { findingsOnly: findings });
    } catch (err) {
      this.port.log(`A rule failed on a query at offset ${q.range.start} of ${state.uri}: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      analysis = { engine: q.engine, targets: [], findings: [], hover: '', connected: false };
    }
    const entry: CachedAnalysis = { schemaVersion: state.schemaVersion, analysis, start: q.range.start };
    if (current && hit.published) entry.published = hit.published;
    state.analyses.set(q, entry);
    return entry;
  }

  // ---- diagnostics ------------------------------------------------------------------------------------

  private publish(state: DocState, edit?: Edit): void {
    this.port.sendDiagnostics({ uri: state.uri, version: state.doc.version, diagnostics: this.diagnostics(state, edit) });
  }

  diagnostics(state: DocState, edit?: Edit): Diagnostic[] {
    const out: Diagnostic[] = [];
    const covers = this.coversOf(state);
    for (const q of state.queries) {
      const entry = this.cached(state, q, false, true);
      const cover = covers.get(q);
      const expired = cover ? expiredOf(cover.waivers, this.today()) : [];
      if (entry.analysis.findings.length === 0 && expired.length === 0) continue;
      const sig = cover?.sig ?? '';
      // Diagnostics built with other waivers or ignores (a comment typed above the query, the lock
      // changed) are built again.
      const last = entry.published?.covers === sig ? entry.published : undefined;
      // A query the edit did not touch keeps its object and its diagnostics: the same objects where the
      // edit came after the text they lie in, the same moved by the lines the edit added or removed
      // where it came before on an earlier line. A keystroke builds only the diagnostics it touched.
      if (last && edit && q.range.start === last.start && edit.p >= last.hi) {
        for (const d of last.diagnostics) out.push(d);
        continue;
      }
      if (last && edit && q.range.start === last.start + edit.delta && edit.oldEnd <= last.lo && edit.endLine < last.loLine) {
        const diagnostics = edit.delta === 0 && edit.lines === 0 ? last.diagnostics : moved(last.diagnostics, q, edit.lines);
        entry.published = { start: q.range.start, line: last.line + edit.lines, character: last.character, diagnostics, covers: sig, lo: last.lo + edit.delta, hi: last.hi + edit.delta, loLine: last.loLine + edit.lines };
        for (const d of diagnostics) out.push(d);
        continue;
      }
      // Without the edit's place (several edits, a new index list), a query at the same line and column
      // keeps its diagnostics.
      const at = state.doc.positionAt(q.range.start);
      if (last && !edit && last.start === q.range.start && last.line === at.line && last.character === at.character) {
        for (const d of last.diagnostics) out.push(d);
        continue;
      }
      let lo = q.range.start;
      let hi = q.range.end;
      let loLine = at.line;
      const diagnostics = entry.analysis.findings.map((f) => {
        const r = anchorRange(q, f.anchor);
        const d = this.diagnostic(state, q, f, r, cover);
        lo = Math.min(lo, r.start);
        hi = Math.max(hi, r.end);
        loLine = Math.min(loLine, d.range.start.line);
        return d;
      });
      // An expired waiver fails `qpi check` whatever the query's findings: the editor says so at the query.
      for (const w of expired) {
        const d: Diagnostic = { range: this.range(state, q.range), severity: SEVERITY.warning, code: CheckRules.waiverExpired, source: SOURCE, message: `${expiredSentence(w)} qpi check fails on it until the waiver is renewed in ${cover?.lockFile ?? 'qpi.lock.json'} or the query is fixed.` };
        loLine = Math.min(loLine, d.range.start.line);
        diagnostics.push(d);
      }
      entry.published = { start: q.range.start, line: at.line, character: at.character, diagnostics, covers: sig, lo, hi, loLine };
      for (const d of diagnostics) out.push(d);
    }
    return out;
  }

  /**
   * Only what finds the finding again travels with the diagnostic: its code and its query. Quick fixes
   * read the rest (the index to build, the rewrite) from the cached analysis, which keeps the published
   * diagnostics of a file with a thousand findings small.
   */
  private diagnostic(state: DocState, q: FoundQuery, f: InlineFinding, at: SourceRange, covers?: QueryCovers): Diagnostic {
    const data: DiagnosticData = { code: f.code, query: { start: q.range.start, end: q.range.end } };
    const cover = covers ? coverOf(f.code, covers.ignores, covers.waivers, this.today()) : undefined;
    // A finding the gate would not fail on (waived in the lock, or ignored by a comment) is information,
    // with the reason in its message: the editor and `qpi check` give one verdict.
    const severity = cover && f.severity === 'warning' ? SEVERITY.information : SEVERITY[f.severity];
    const message = cover ? `${f.message} ${coverSentence(cover, covers?.lockFile)}` : f.message;
    return { range: this.range(state, at), severity, code: f.code, source: SOURCE, message, data };
  }

  private today(): string {
    return this.options.today?.() ?? new Date().toISOString().slice(0, 10);
  }

  // ---- the lock's waivers and the inline ignores ------------------------------------------------------

  /**
   * The workspace's qpi.lock.json files changed (read at start, then again when the file watcher reports
   * one): every document's diagnostics are built again with their waivers.
   */
  setLocks(locks: readonly WorkspaceLock[]): void {
    this.locks = locks.map((l) => ({ dir: l.dir.replace(/\\/g, '/').replace(/\/+$/, ''), lock: l.lock }));
    this.locksVersion++;
    for (const state of this.docs.values()) if (state.analysedVersion === state.doc.version) this.publish(state);
  }

  /** The nearest lock above a document and the document's path relative to the lock's folder, as its keys write it. */
  private lockOf(uri: string): { lock: Lock; file: string; lockFile: string } | undefined {
    if (this.locks.length === 0 || !uri.startsWith('file:')) return undefined;
    let path: string;
    try {
      path = fileURLToPath(uri).replace(/\\/g, '/');
    } catch {
      return undefined;
    }
    let best: WorkspaceLock | undefined;
    for (const l of this.locks) if (path.startsWith(`${l.dir}/`) && (!best || l.dir.length > best.dir.length)) best = l;
    if (!best) return undefined;
    const file = path.slice(best.dir.length + 1);
    const nested = this.locks.filter((l) => l.dir.length > 0 && path.startsWith(`${l.dir}/`)).length > 1;
    return { lock: best.lock, file, lockFile: nested ? `${best.dir.split('/').pop()}/qpi.lock.json` : 'qpi.lock.json' };
  }

  /**
   * Each query's `qpi-ignore` comments and the lock's waivers of its key, as `qpi check` reads them. The
   * keys (which parse the file for its functions' names) are computed only when the lock waives
   * something in this file.
   */
  private coversOf(state: DocState): Map<FoundQuery, QueryCovers> {
    const today = this.today();
    const c = state.covers;
    if (c && c.version === state.doc.version && c.locks === this.locksVersion && c.today === today && state.queries.every((q) => c.byQuery.has(q))) return c.byQuery;
    const byQuery = new Map<FoundQuery, QueryCovers>();
    const text = state.doc.getText();
    const ignores = queryIgnores(text, state.queries);
    const lock = this.lockOf(state.uri);
    const prefix = lock ? `${lock.file} ` : undefined;
    const waived = lock && prefix ? lock.lock.waivers.some((w) => w.query.startsWith(prefix)) : false;
    let keys: string[] | undefined;
    if (waived) {
      try {
        keys = queryKeys(text, lock!.file, state.queries);
      } catch (err) {
        this.port.log(`The lock's keys of ${state.uri} could not be computed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    state.queries.forEach((q, i) => {
      const waivers = keys ? waiversOf(lock!.lock, keys[i]!) : [];
      const own = ignores[i] ?? [];
      const sig = own.length === 0 && waivers.length === 0 ? '' : JSON.stringify([own.map((x) => [x.rule, x.reason, x.line]), waivers, today]);
      byQuery.set(q, { ignores: own, waivers, ...(lock ? { lockFile: lock.lockFile } : {}), sig });
    });
    state.covers = { version: state.doc.version, locks: this.locksVersion, today, byQuery };
    return byQuery;
  }

  /** The hover's part on the gate: what waives or ignores the query's findings, and its expired waivers. */
  private coverHover(state: DocState, q: FoundQuery, a: QueryAnalysis): string {
    const covers = this.coversOf(state).get(q);
    if (!covers || covers.sig === '') return '';
    const today = this.today();
    const lines: string[] = [];
    for (const code of new Set(a.findings.map((f) => f.code))) {
      const c = coverOf(code, covers.ignores, covers.waivers, today);
      if (c) lines.push(`- \`${code}\`: ${coverSentence(c, covers.lockFile)}`);
    }
    for (const w of expiredOf(covers.waivers, today)) lines.push(`- **Expired:** ${expiredSentence(w)} \`qpi check\` fails on it.`);
    if (lines.length === 0) return '';
    return `**qpi check**\n\n${lines.join('\n')}`;
  }

  /**
   * The finding a diagnostic stands for, in the analysis of the document's current version: same query,
   * same code, same place. A diagnostic of another version whose query moved finds nothing, so no code
   * action is offered for text that is no longer there.
   */
  private findingOf(state: DocState, data: DiagnosticData, d: Diagnostic): { q: FoundQuery; f: InlineFinding } | undefined {
    const q = state.queries.find((x) => x.range.start === data.query.start && x.range.end === data.query.end);
    if (!q) return undefined;
    for (const f of this.placed(state, q).findings) {
      if (f.code !== data.code) continue;
      const r = this.range(state, anchorRange(q, f.anchor));
      if (r.start.line === d.range.start.line && r.start.character === d.range.start.character) return { q, f };
    }
    return undefined;
  }

  private edit(state: DocState, q: FoundQuery, anchor: Anchor, newText: string): DataEdit {
    return { range: this.range(state, anchorRange(q, anchor)), newText };
  }

  private range(state: DocState, r: SourceRange): Range {
    return { start: state.doc.positionAt(r.start), end: state.doc.positionAt(r.end) };
  }

  // ---- hover, code actions, lenses --------------------------------------------------------------------

  private queryAt(state: DocState, offset: number): FoundQuery | undefined {
    let best: FoundQuery | undefined;
    for (const q of state.queries) {
      if (q.range.start <= offset && offset <= q.range.end && (!best || q.range.end - q.range.start < best.range.end - best.range.start)) best = q;
    }
    return best;
  }

  /** Only while the analysed version is the document's: a hover on stale positions would point wrong. */
  private current(uri: string): DocState | undefined {
    const state = this.docs.get(uri);
    if (!state) return undefined;
    if (state.analysedVersion !== state.doc.version) {
      if (state.timer) clearTimeout(state.timer);
      delete state.timer;
      this.run(state);
    }
    return state;
  }

  hover(uri: string, position: Position): Hover | null {
    const state = this.current(uri);
    if (!state) return null;
    const q = this.queryAt(state, state.doc.offsetAt(position));
    if (!q) return null;
    const a = this.analysis(state, q);
    const gate = this.coverHover(state, q, a);
    const value = [a.hover, gate].filter((x) => x !== '').join('\n\n---\n\n');
    if (value === '') return null;
    return { contents: { kind: 'markdown', value }, range: this.range(state, q.range) };
  }

  codeActions(params: CodeActionParams): CodeAction[] {
    const state = this.current(params.textDocument.uri);
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
      const found = this.findingOf(state, data, d);
      if (!found) continue;
      const { q, f } = found;
      const edits = f.fix ? this.fixEdits(state, q, f) : undefined;
      if (f.fix && edits) {
        add({
          title: f.fix.title, kind: 'quickfix', diagnostics: [d], isPreferred: true,
          edit: { documentChanges: [{ textDocument: { uri, version }, edits }] },
        });
      }
      if (f.suggestion) this.suggestionActions(uri, q.engine, f.suggestion.createText, f.suggestion.target, [d], add);
      if (f.rewriteText && !f.fix) {
        add({ title: 'Copy the rewritten query', kind: 'quickfix', diagnostics: [d], command: { title: 'Copy', command: ClientCommands.copyText, arguments: [{ text: f.rewriteText, what: 'The rewritten query' }] } });
      }
    }
    const q = this.queryAt(state, state.doc.offsetAt(params.range.start));
    if (q) {
      const text = explainText(q);
      const explain: InlineExplainArgs = { uri, start: q.range.start, end: q.range.end, engine: q.engine, ...(text.ok ? { text: text.text } : { problem: text.problem }) };
      add({ title: 'Explain this query', kind: '', command: { title: 'Explain this query', command: ClientCommands.explainInline, arguments: [explain] } });
      const a = this.analysis(state, q);
      if (a.top?.createText) this.suggestionActions(uri, q.engine, a.top.createText, a.top.target, undefined, add, this.database(q));
    }
    return out;
  }

  /**
   * The edits of a finding's fix, from the cached analysis of the query it belongs to. A fix that needs
   * a name declared gets the declaration too, or is not offered when it cannot be declared there.
   */
  private fixEdits(state: DocState, q: FoundQuery, f: InlineFinding): (DataEdit | SnippetEdit)[] | undefined {
    if (!f.fix) return undefined;
    const edits: (DataEdit | SnippetEdit)[] = f.fix.edits.map((e) => this.edit(state, q, e.anchor, e.newText));
    if (f.fix.declare) {
      if (state.kind === 'sql') return undefined;
      const { name, offset, why } = f.fix.declare;
      const decl = declareEdit(state.doc.getText(), scriptDialect(state.doc.languageId, state.uri), offset, name, why);
      if (!decl) return undefined;
      const range = this.range(state, decl);
      edits.unshift(this.options.snippets ? { range, snippet: { kind: 'snippet', value: decl.snippet } } : { range, newText: decl.newText });
    }
    return edits;
  }

  private database(q: FoundQuery): string | undefined {
    return q.engine === 'mongodb' ? q.command.database : undefined;
  }

  private suggestionActions(uri: string, engine: 'mongodb' | 'postgres', createText: string, target: string, diagnostics: Diagnostic[] | undefined, add: (a: CodeAction) => void, database?: string): void {
    const what = engine === 'mongodb' ? 'createIndex' : 'CREATE INDEX';
    const args: CreateIndexArgs = { uri, engine, createText, target, ...(database !== undefined ? { database } : {}) };
    add({ title: `Copy ${what}: ${createText}`, kind: diagnostics ? 'quickfix' : '', ...(diagnostics ? { diagnostics } : {}), command: { title: `Copy ${what}`, command: ClientCommands.copyText, arguments: [{ text: createText, what: `The ${what} command` }] } });
    add({ title: 'Create index...', kind: diagnostics ? 'quickfix' : '', ...(diagnostics ? { diagnostics } : {}), command: { title: 'Create index...', command: ClientCommands.createIndex, arguments: [args] } });
  }

  codeLenses(uri: string): CodeLens[] {
    if (!this.options.codeLens) return [];
    const state = this.current(uri);
    if (!state) return [];
    const out: CodeLens[] = [];
    for (const q of state.queries) {
      const a = this.analysis(state, q);
      const at = state.doc.positionAt(q.range.start);
      const range = { start: at, end: at };
      // "Explain" for every query; the client drops it where the extension draws its own.
      const text = explainText(q);
      const explain: InlineExplainArgs = { uri, start: q.range.start, end: q.range.end, engine: q.engine, ...(text.ok ? { text: text.text } : { problem: text.problem }) };
      const title = text.ok ? '$(debug-start) Explain' : explainValues(q) ? '$(debug-start) Explain (asks for values)' : '$(warning) Explain (needs literal values)';
      out.push({ range, command: { title, tooltip: text.ok ? 'Explain this query and show its plan' : text.problem, command: ClientCommands.explainInline, arguments: [explain] } });
      const waiting = this.adviceWaiting(state, q);
      if (waiting !== undefined) {
        out.push({ range, command: { title: `$(sync~spin) Checking indexes on ${waiting}`, tooltip: 'The advice for this query is being computed on the connection; the plan panel gives the same verdict.', command: '' } });
      } else if (a.top?.createText) {
        const args: CreateIndexArgs = { uri, engine: q.engine, createText: a.top.createText, target: a.top.target, ...(this.database(q) !== undefined ? { database: this.database(q)! } : {}) };
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

  // ---- schema from the repository's files --------------------------------------------------------------

  /** The workspace's other modules, for following imports, and the file path of a document's URI. */
  private workspace: { modules: WorkspaceModules; fileOf(uri: string): string | undefined } | undefined;

  /** The workspace's modules became known (at start, for a workspace on disk): documents are read again with them. */
  setWorkspaceModules(modules: WorkspaceModules, fileOf: (uri: string) => string | undefined): void {
    this.workspace = { modules, fileOf };
    for (const state of this.docs.values()) {
      if (!(state.index instanceof ScriptQueryIndex)) continue;
      state.index.setContext(this.finderContext(state.doc.uri));
      state.queries = state.index.result().queries;
    }
  }

  /**
   * What the finder knows beyond a document's text: the repository's Prisma schema and declared entities,
   * and the workspace's modules, so an imported helper, client or collection is followed.
   */
  private finderContext(uri: string): FinderContext {
    const file = this.workspace?.fileOf(uri);
    return {
      prismaModels: this.repository?.prismaModels, entities: this.repository?.entities,
      ...(this.workspace && file !== undefined ? { file, modules: this.workspace.modules } : {}),
    };
  }

  /**
   * The schema the workspace's files declare changed (read at start, then again when a schema file
   * changes): every document is advised again with it, where no connection sent a list.
   */
  setRepositorySchema(schema: RepositorySchema | undefined): void {
    this.repository = schema;
    for (const state of this.docs.values()) {
      state.schemaVersion++;
      // Prisma calls are written with the schema's table and column names: their SQL changes with it.
      if (state.index instanceof ScriptQueryIndex) {
        state.index.setContext(this.finderContext(state.doc.uri));
        this.readQueries(state);
      }
      if (state.analysedVersion === state.doc.version) this.publish(state);
    }
    this.port.refreshLenses?.();
  }

  // ---- schema from the extension ----------------------------------------------------------------------

  setSchema(params: SetSchemaParams): SetSchemaResult {
    let advised = 0;
    for (const uri of params.uris) {
      const state = this.docs.get(uri);
      if (!state) continue;
      const schema: DocumentSchema = state.schema ?? { connection: {}, collections: new Map(), tables: new Map(), plans: new Map(), advice: new Map() };
      const switched = schema.connection[params.engine] !== undefined && schema.connection[params.engine] !== params.connectionName;
      schema.connection[params.engine] = params.connectionName;
      // An index list that changed (built, dropped, another connection) makes the plans and the advice
      // given with the old one wrong: they are dropped and asked for again.
      let changed = switched;
      // What the catalog says a name is comes with its list: a table created or dropped is news too.
      for (const c of params.collections ?? []) {
        const before = schema.collections.get(c.name);
        if (before && (JSON.stringify(before.indexes) !== JSON.stringify(c.indexes) || (c.relation !== undefined && JSON.stringify(before.relation) !== JSON.stringify(c.relation)))) changed = true;
        schema.collections.set(c.name, { indexes: c.indexes, ...(c.stats ? { stats: c.stats } : {}), ...(c.relation !== undefined ? { relation: c.relation } : {}) });
      }
      for (const t of params.tables ?? []) {
        const before = schema.tables.get(t.name);
        if (before && (JSON.stringify(before.indexes) !== JSON.stringify(t.indexes) || (t.relation !== undefined && JSON.stringify(before.relation) !== JSON.stringify(t.relation)))) changed = true;
        schema.tables.set(t.name, { indexes: t.indexes, ...(t.stats ? { stats: t.stats } : {}), ...(t.relation !== undefined ? { relation: t.relation } : {}) });
      }
      state.schema = schema;
      delete state.reconnecting;
      if (changed) this.forgetAdvice(state);
      state.schemaVersion++;
      this.current(uri);
      this.publish(state);
      this.askAdvice(state);
      this.scheduleExplain(state, changed ? 0 : undefined);
      this.port.refreshLenses?.();
      advised += state.queries.filter((q) => this.analysis(state, q).connected).length;
    }
    return { advised };
  }

  clearSchema(params: ClearSchemaParams): void {
    for (const state of this.docs.values()) {
      if (params.uris && !params.uris.includes(state.uri)) continue;
      // A document without a schema is announced again too: its folder may have a connection now.
      if (state.schema) state.reconnecting = { connection: { ...state.schema.connection }, until: Date.now() + RECONNECT_MS };
      this.forgetAdvice(state);
      delete state.schema;
      state.schemaVersion++;
      state.announced.clear();
      state.announcedQueries = new WeakSet();
      this.publish(state);
      this.announce(state);
    }
    this.port.refreshLenses?.();
    // Lenses of a document whose lists never came back (no connection any more) fall back to the rules.
    const t = setTimeout(() => this.port.refreshLenses?.(), RECONNECT_MS + 50);
    t.unref?.();
  }

  /** Drops a document's plans and advice, so both are asked for again. */
  private forgetAdvice(state: DocState): void {
    state.schema?.plans.clear();
    state.schema?.advice.clear();
    state.explainAsked.clear();
    // The per-minute budget guards against typing; an invalidation is a user's action (Create Index,
    // another connection, Refresh) after which the plans must come back at once.
    state.explainTimes = [];
    state.adviceAsked.clear();
    state.adviceFailed.clear();
  }

  /** The connection whose advice a query of a connected document is waiting for, if it is waiting. */
  private adviceWaiting(state: DocState, q: FoundQuery): string | undefined {
    if (!state.schema && state.reconnecting && Date.now() < state.reconnecting.until) return state.reconnecting.connection[q.engine];
    const connection = state.schema?.connection[q.engine];
    if (connection === undefined) return undefined;
    const t = explainText(q);
    if (!t.ok) return undefined;
    const key = planKey(q.engine, t.text);
    return state.schema!.advice.has(key) || state.adviceFailed.has(key) ? undefined : connection;
  }

  /** Asks the extension's advice service about the queries of a connected document it has no answer for. */
  private askAdvice(state: DocState): void {
    const schema = state.schema;
    if (!schema) return;
    const queries = unasked(state, state.adviceAsked, (key) => schema.advice.has(key), Infinity);
    if (queries.length > 0) this.port.sendNotification(AdviceWanted, { uri: state.uri, queries } satisfies AdviceWantedParams);
  }

  setAdvice(params: SetAdviceParams): void {
    for (const uri of params.uris) {
      const state = this.docs.get(uri);
      if (!state?.schema) continue;
      for (const e of params.entries) {
        const key = planKey(e.engine, e.text);
        if (e.advice) {
          state.schema.advice.set(key, e.advice);
          state.adviceFailed.delete(key);
        } else {
          state.adviceFailed.add(key);
          if (e.error) this.port.log(`No advice from the connection for a query of ${uri}: ${e.error}`);
        }
      }
      state.schemaVersion++;
      this.current(uri);
      this.publish(state);
    }
    this.port.refreshLenses?.();
  }

  clearAdvice(params: ClearAdviceParams): void {
    for (const state of this.docs.values()) {
      if (params.uris && !params.uris.includes(state.uri)) continue;
      if (!state.schema) continue;
      this.forgetAdvice(state);
      state.schemaVersion++;
      this.publish(state);
      this.askAdvice(state);
      this.scheduleExplain(state, 0);
    }
    this.port.refreshLenses?.();
  }

  /**
   * Once edits pause, asks the extension to explain (without executing) the queries of a connected
   * document it has no plan for, each text once and a few per minute.
   */
  private scheduleExplain(state: DocState, soon?: number): void {
    const configured = this.options.explainDelayMs ?? 0;
    if (configured <= 0 || !state.schema) return;
    // Right after the indexes changed no edit is under way: the plan is asked for at once.
    const delay = soon ?? configured;
    if (state.explainTimer) clearTimeout(state.explainTimer);
    state.explainTimer = setTimeout(() => {
      delete state.explainTimer;
      this.askExplains(state);
      for (const w of state.explainWaiters.splice(0)) w();
    }, delay);
  }

  /** Sends ExplainWanted for the document's queries without a plan, within this minute's budget. */
  private askExplains(state: DocState): void {
    if (!this.docs.has(state.uri) || !state.schema) return;
    const now = Date.now();
    state.explainTimes = state.explainTimes.filter((t) => now - t < 60_000);
    const plans = state.schema.plans;
    const queries = unasked(state, state.explainAsked, (key) => plans.has(key), (this.options.explainsPerMinute ?? 8) - state.explainTimes.length);
    for (let i = 0; i < queries.length; i++) state.explainTimes.push(now);
    if (queries.length > 0) this.port.sendNotification(ExplainWanted, { uri: state.uri, queries } satisfies ExplainWantedParams);
  }

  setPlans(params: SetPlansParams): void {
    for (const uri of params.uris) {
      const state = this.docs.get(uri);
      if (!state?.schema) continue;
      for (const p of params.plans) {
        if (p.summary) state.schema.plans.set(planKey(p.engine, p.text), p.summary);
        else if (p.error) this.port.log(`No background plan for a query of ${uri}: ${p.error}`);
      }
      state.schemaVersion++;
      this.current(uri);
      this.publish(state);
    }
    this.port.refreshLenses?.();
  }

  /** Tells the client which collections and tables it has no schema for yet (each once). */
  private announce(state: DocState): void {
    const need: SchemaNeededParams = { uri: state.uri, mongodb: [], postgres: [] };
    for (const q of state.queries) {
      if (state.announcedQueries.has(q)) continue;
      state.announcedQueries.add(q);
      if (q.engine === 'mongodb') {
        // A collection chosen at run time has no name to ask for; a family's (`app_users*`) is no one collection's.
        if (q.command.collection === '' || isCollectionFamily(q.command.collection)) continue;
        const key = `m\u0000${q.command.database ?? ''}\u0000${q.command.collection}`;
        if (state.announced.has(key) || state.schema?.collections.has(q.command.collection)) continue;
        state.announced.add(key);
        need.mongodb.push({ collection: q.command.collection, ...(q.command.database !== undefined ? { database: q.command.database } : {}) });
      } else {
        for (const t of this.cached(state, q, false, true).analysis.targets) {
          const key = `p\u0000${t}`;
          if (state.announced.has(key) || state.schema?.tables.has(t)) continue;
          state.announced.add(key);
          need.postgres.push({ table: t });
        }
      }
    }
    if (need.mongodb.length > 0 || need.postgres.length > 0) this.port.sendNotification(SchemaNeeded, need);
  }

  listQueries(uri: string): ListedQuery[] {
    const state = this.current(uri);
    if (!state) return [];
    return state.queries.map((q) => {
      const a = this.analysis(state, q);
      const l: ListedQuery = { engine: q.engine, start: q.range.start, end: q.range.end, targets: a.targets };
      if (a.top?.createText) l.createText = a.top.createText;
      return l;
    });
  }
}

/**
 * The diagnostics of a query that moved with the text its findings lie in (an edit before it, on an
 * earlier line): each is `lines` lines further, at the same column. Only the query's offsets in `data`
 * are new; a range that did not move is the same object.
 */
function moved(last: Diagnostic[], q: FoundQuery, lines: number): Diagnostic[] {
  return last.map((d) => {
    const { start, end } = d.range;
    const range = lines === 0 ? d.range : { start: { line: start.line + lines, character: start.character }, end: { line: end.line + lines, character: end.character } };
    // An expired waiver's diagnostic has no finding to find again, so no data.
    if (d.data === undefined) return { range, severity: d.severity, code: d.code, source: SOURCE, message: d.message };
    const data: DiagnosticData = { code: (d.data as DiagnosticData).code, query: { start: q.range.start, end: q.range.end } };
    return { range, severity: d.severity, code: d.code, source: SOURCE, message: d.message, data };
  });
}

/** What covers a finding, as the editor says it after the finding's message. */
function coverSentence(c: Cover, lockFile = 'qpi.lock.json'): string {
  if (c.by === 'ignore') return `Ignored by a qpi-ignore comment (line ${c.ignore.line}): ${c.ignore.reason || 'no reason given'}.`;
  return `${coverJustification(c).replace('in the lock', `in ${lockFile}`)}.`;
}

/**
 * The explainable queries of a document on a connected engine that `asked` has not seen and `known`
 * does not answer, each text once and at most `limit` of them; they are marked asked.
 */
function unasked(state: DocState, asked: Set<string>, known: (key: string) => boolean, limit: number): { engine: FoundQuery['engine']; text: string }[] {
  const out: { engine: FoundQuery['engine']; text: string }[] = [];
  for (const q of state.queries) {
    if (out.length >= limit) break;
    if (state.schema?.connection[q.engine] === undefined) continue;
    const t = explainText(q);
    if (!t.ok) continue;
    const key = planKey(q.engine, t.text);
    if (asked.has(key) || known(key)) continue;
    asked.add(key);
    out.push({ engine: q.engine, text: t.text });
  }
  return out;
}
