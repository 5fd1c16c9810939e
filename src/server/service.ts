// The language server's behaviour, independent of the transport: the one object that holds the open
// documents and hands each message to its concern (documents.ts, analyses.ts, covers.ts, features/ for
// what the editor shows, asks/ for what the server asks the extension), and decides when a document is
// read again and published. main.ts wires it to a real LSP connection; the unit tests drive it through
// a fake one.

import { basename } from 'node:path';
import type { CodeAction, CodeActionParams, CodeLens, Hover, Position, Range } from 'vscode-languageserver';
import { savedFilesReach, ScriptQueryIndex, workspaceFileChanged, type FinderContext, type RepositorySchema, type WorkspaceModules } from '../core/index';
import type { ClearAdviceParams, ClearSchemaParams, ListedQuery, SetAdviceParams, SetPlansParams, SetSchemaParams, SetSchemaResult } from '../protocol/languageServer';
import { Analyses } from './analyses';
import { askAdvice, clearAdvice, setAdvice } from './asks/advice';
import { sayCap } from './asks/caps';
import { scheduleExplain, setPlans } from './asks/plans';
import { announce, clearSchema, setSchema } from './asks/schema';
import { DEFAULT_OPTIONS, type ServerContext, type ServerPort, type ServiceOptions } from './context';
import { Covers, type WorkspaceLock } from './covers';
import { applyChanges, closeDocument, openDocument, readQueries, replaceText, type DocState, type Edit } from './documents';
import { codeActionsFor } from './features/codeActions';
import { codeLensesOf } from './features/codeLens';
import { diagnosticsOf } from './features/diagnostics';
import { hoverAt } from './features/hover';
import { listQueries } from './features/queries';

export { DEFAULT_OPTIONS, type ServerPort, type ServiceOptions } from './context';
export type { WorkspaceLock } from './covers';

/** Saved files at most whose imports the index of callers reads at once. */
const MAX_FILES_REINDEXED = 200;

/** The files whose queries the finder reads from another file (workspace.ts follows these). */
const SCRIPT_FILE = /\.(c|m)?(j|t)sx?$/i;

export class InlineAdviceService implements ServerContext {
  readonly docs = new Map<string, DocState>();
  /** The indexes and keys the workspace's schema files declare (workspaceSchema.ts reads them). */
  private repository: RepositorySchema | undefined;
  readonly analyses: Analyses;
  readonly covers: Covers;
  /** Analysis time of the last runs, in ms, for the log and the benchmark. */
  readonly timings: number[] = [];
  /** The workspace's other modules, for following imports, and the file path of a document's URI. */
  private workspace: { modules: WorkspaceModules; fileOf(uri: string): string | undefined } | undefined;

  constructor(readonly port: ServerPort, readonly options: ServiceOptions = DEFAULT_OPTIONS) {
    this.analyses = new Analyses((m) => port.log(m), () => this.repository);
    this.covers = new Covers((m) => port.log(m), () => options.today?.() ?? new Date().toISOString().slice(0, 10));
  }

  // ---- documents --------------------------------------------------------------------------------------

  open(uri: string, languageId: string, version: number, text: string): void {
    const state = openDocument(uri, languageId, version, text, (u) => this.finderContext(u));
    if (!state) return;
    this.docs.set(uri, state);
    this.run(state);
  }

  /** The whole new text of a document. */
  change(uri: string, version: number, text: string): void {
    const state = this.docs.get(uri);
    if (state && replaceText(state, version, text)) this.schedule(state);
  }

  /** A document's changes as the editor sends them (LSP's incremental sync). */
  applyChanges(uri: string, version: number, changes: readonly ({ range: Range; text: string } | { text: string })[]): void {
    const state = this.docs.get(uri);
    if (!state || changes.length === 0) return;
    applyChanges(state, version, changes);
    this.schedule(state);
  }

  close(uri: string): void {
    const state = this.docs.get(uri);
    if (!state) return;
    this.docs.delete(uri);
    closeDocument(state);
    this.port.sendDiagnostics({ uri, diagnostics: [] });
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

  /** Reads the document's queries again, publishes its diagnostics, and asks the extension what it lacks. */
  private run(state: DocState): void {
    const t0 = performance.now();
    const text = state.doc.getText();
    try {
      if (text.length > this.options.maxTextLength) {
        state.queries = [];
        // The finder starts again from the whole text when the file is under the cap again.
        state.sinceIndexed = { p: 0, suffix: 0 };
        sayCap(this, state, 'characters', this.options.maxTextLength, text.length);
      } else {
        state.index.update(text, state.sinceIndexed);
        delete state.sinceIndexed;
        this.readQueries(state);
      }
      state.analysedVersion = state.doc.version;
      const edit = state.edit;
      delete state.edit;
      this.publish(state, edit === 'many' ? undefined : edit);
      announce(this, state);
      askAdvice(this, state);
      scheduleExplain(this, state);
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
    const max = this.options.maxQueries ?? Infinity;
    const read = readQueries(state, this.options.maxTextLength, max);
    if (!read) return;
    if (read.over !== undefined) sayCap(this, state, 'queries', max, read.over);
    else sayCap(this, state, null);
  }

  current(uri: string): DocState | undefined {
    const state = this.docs.get(uri);
    if (!state) return undefined;
    if (state.analysedVersion !== state.doc.version) {
      if (state.timer) clearTimeout(state.timer);
      delete state.timer;
      this.run(state);
    }
    return state;
  }

  publish(state: DocState, edit?: Edit): void {
    this.port.sendDiagnostics({ uri: state.uri, version: state.doc.version, diagnostics: diagnosticsOf(this, state, edit) });
  }

  // ---- what the editor shows (features/) --------------------------------------------------------------

  hover(uri: string, position: Position): Hover | null {
    return hoverAt(this, uri, position);
  }

  codeActions(params: CodeActionParams): CodeAction[] {
    return codeActionsFor(this, params);
  }

  codeLenses(uri: string): CodeLens[] {
    return codeLensesOf(this, uri);
  }

  listQueries(uri: string): ListedQuery[] {
    return listQueries(this, uri);
  }

  // ---- what the extension answers (asks/) -------------------------------------------------------------

  setSchema(params: SetSchemaParams): SetSchemaResult {
    return setSchema(this, params);
  }

  clearSchema(params: ClearSchemaParams): void {
    clearSchema(this, params);
  }

  setAdvice(params: SetAdviceParams): void {
    setAdvice(this, params);
  }

  clearAdvice(params: ClearAdviceParams): void {
    clearAdvice(this, params);
  }

  setPlans(params: SetPlansParams): void {
    setPlans(this, params);
  }

  // ---- what the workspace declares --------------------------------------------------------------------

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
   * Files of the workspace changed on disk (saved, created, deleted; the editor's file watcher says so): an
   * open script whose queries may follow one of them (it imports it, or it is imported by it, so a helper,
   * a collection or the calls of its functions may be there) is read again and its diagnostics published.
   */
  workspaceFilesChanged(uris: readonly string[]): void {
    const ws = this.workspace;
    if (!ws) return;
    const files = uris.map((u) => ws.fileOf(u)).filter((f): f is string => f !== undefined);
    const changed = files.filter((f) => SCRIPT_FILE.test(f));
    // A `.sql` file a script loads (loadedSql.ts): the scripts whose text names the file, or whose queries were
    // read from it (a registry given a key), are read again, the new statement read through the modules'
    // reader, which sees the saved text.
    const sqlFiles = new Set(files.filter((f) => /\.sql$/i.test(f)));
    const sqlNames = [...sqlFiles].map((f) => basename(f).replace(/\.sql$/i, ''));
    if (changed.length === 0 && sqlNames.length === 0) return;
    // The index of callers reads a few saved files at once; a branch switched is left to its periodic pass.
    if (changed.length <= MAX_FILES_REINDEXED) for (const file of changed) workspaceFileChanged(ws.modules, file);
    const reaches = changed.length > 0 ? savedFilesReach(ws.modules, changed) : () => false;
    for (const state of this.docs.values()) {
      if (!(state.index instanceof ScriptQueryIndex)) continue;
      const file = ws.fileOf(state.doc.uri);
      const loads = sqlNames.length > 0 && (sqlNames.some((n) => state.doc.getText().includes(n)) || state.index.result().queries.some((q) => q.engine === 'postgres' && q.readFrom !== undefined && sqlFiles.has(q.readFrom)));
      if (!loads && (file === undefined || !reaches(file))) continue;
      state.index.readAgain();
      this.schedule(state);
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

  /**
   * The workspace's qpi.lock.json files changed (read at start, then again when the file watcher reports
   * one): every document's diagnostics are built again with their waivers.
   */
  setLocks(locks: readonly WorkspaceLock[]): void {
    this.covers.setLocks(locks);
    for (const state of this.docs.values()) if (state.analysedVersion === state.doc.version) this.publish(state);
  }
}
