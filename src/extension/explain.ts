// "Explain Query": from the query under the cursor (or the selection, or a CodeLens, or text given to
// the command) to the plan panel. Picks the folder's connection, reads the options from the settings,
// runs the explain (a progress notification shows once it has run for half a second; its Cancel stops the
// work on the server), and shows the plan with its findings. Also "Compare with previous run" and its
// CodeLens.

import * as vscode from 'vscode';
import { analyze, fillExplainValues } from '../core/index';
import { isCollectionFamily, onFamilyMember, parseMongoQuery, type ExplainVerbosity, type MongoCommand } from '../core/index';
import { Commands, Dismissed, UserError } from './commands';
import { connectionUri, type ConnectionEngine } from './connections/spec';
import { modalConsent } from './advice';
import { suggestionViews, type AdviceContext } from './adviceView';
import { SETTINGS, settings } from './config';
import type { AdviceHub } from './adviceHub';
import { familyMember, type ConnectionChoice } from './connectionChoice';
import type { ConnectionStore } from './connections/store';
import type { Gateway } from './gateway';
import type { Log } from './log';
import type { Prompts } from './prompts';
import type { AdviceOutcome, ExplainOutcome } from './gateway';
import { PlanPanel } from './planPanel';
import { PlanSession } from './planSession';
import { history, RunHistory, type Run } from './runHistory';
import { decideMongoMeasure, measureQuestion, type MeasureAnswer, type MeasureChoices } from './connections/measureChoice';
import { explainWouldWrite } from '../core/index';
import { loadSqlParser } from '../core/index';
import { statementInfo } from '../core/index';
import { classifySelection, queryAt, type QueryTarget } from '../core/index';
import { queryKind } from './targets';
import type { DocumentQueries } from './documentQueries';
import { phasesLine, stepsLine, type ExplainStep } from './explainSteps';

/** Arguments the explain command accepts (CodeLens, tests, keybindings). All optional. */
export interface ExplainArgs {
  uri?: string | vscode.Uri;
  /** Offsets of the query in the document (a CodeLens passes them). */
  start?: number;
  end?: number;
  /** Query text to explain instead of reading an editor. */
  text?: string;
  engine?: ConnectionEngine;
  connectionId?: string;
  verbosity?: ExplainVerbosity;
  analyze?: boolean;
  buffers?: boolean;
  /** MongoDB: for a query on a family of collections (`app_users*`), the one to explain on; the largest when absent. */
  collection?: string;
  /** The values of a query that takes them from the code, in order, instead of asking for each (scripts, tests). */
  values?: string[];
}

/** What the command returns: a summary tests and scripts can check. */
export interface ExplainSummary {
  engine: ConnectionEngine;
  connection: string;
  title: string;
  nodeCount: number;
  rootKind: string;
  findings: string[];
  durationMs: number;
  rolledBack: boolean;
  serverVersion?: string;
  /** Titles of the index suggestions shown, best first (the rules' order; a measurement may reorder them). */
  suggestions: string[];
  /** A measurement of the suggestions started at once (the measureOnExplain settings); Explainer.measuring ends with it. */
  measuring: boolean;
  /** MongoDB: for a query on a family of collections, the one it was explained on. */
  collection?: string;
}


/** The explain or verification in progress, if any: its cancel is what the notification's Cancel button runs. */
export const activeExplain: { cancel?: () => void } = {};

/** The query the command is about, with the document it came from (if any). */
interface Target {
  query: QueryTarget;
  uri?: vscode.Uri;
  range?: vscode.Range;
}

async function resolveTarget(queries: DocumentQueries, args: ExplainArgs): Promise<Target> {
  // The finder reads .sql files and SQL strings with PostgreSQL's parser: it loads once.
  await loadSqlParser();
  if (args.text !== undefined) {
    const guess = classifySelection(args.text, args.engine === 'postgres' ? 'sql' : args.engine === 'mongodb' ? 'mongodb-playground' : 'script');
    if (!guess) throw new UserError('The text is neither a mongo shell call such as db.orders.find({...}) nor a SQL statement.');
    return { query: guess };
  }
  let doc: vscode.TextDocument | undefined;
  let editor = vscode.window.activeTextEditor;
  if (args.uri) {
    const uri = typeof args.uri === 'string' ? vscode.Uri.parse(args.uri) : args.uri;
    doc = await vscode.workspace.openTextDocument(uri);
    if (editor?.document.uri.toString() !== uri.toString()) editor = undefined;
  } else if (editor) doc = editor.document;
  if (!doc) {
    const typed = await vscode.window.showInputBox({
      title: 'Explain Query',
      prompt: 'A mongo shell call or a SQL statement',
      placeHolder: 'db.orders.find({ country_id: 1 }).sort({ created_at: -1 }).limit(10)',
      ignoreFocusOut: true,
    });
    if (typed === undefined) throw new Dismissed();
    return resolveTarget(queries, { ...args, text: typed });
  }
  const text = doc.getText();
  const kind = queryKind(doc);
  const rangeOf = (q: QueryTarget) => new vscode.Range(doc.positionAt(q.start), doc.positionAt(q.end));
  // The queries the language server's Explain lens is drawn above (the extension's own finder where the
  // server has none to give), so the lens and Explain at the cursor pick the same query.
  if (args.start !== undefined) {
    const found = await queries.of(doc);
    const q = found.find((x) => x.start === args.start) ?? queryAt(found, args.start, text);
    if (!q) throw new UserError('The query moved or changed since the CodeLens was drawn: try again.');
    return { query: q, uri: doc.uri, range: rangeOf(q) };
  }
  if (editor && !editor.selection.isEmpty) {
    const selStart = doc.offsetAt(editor.selection.start);
    const q = classifySelection(doc.getText(editor.selection), kind);
    if (!q) throw new UserError('The selection is neither a mongo shell call such as db.orders.find({...}) nor a SQL statement.');
    const shifted = { ...q, start: q.start + selStart, end: q.end + selStart };
    return { query: shifted, uri: doc.uri, range: rangeOf(shifted) };
  }
  const offset = editor ? doc.offsetAt(editor.selection.active) : 0;
  const q = queryAt(await queries.of(doc), offset, text);
  if (!q) {
    throw new UserError(kind === 'other'
      ? 'Explain Query works in .sql, .mongodb.js, JavaScript and TypeScript files, or on a selected query.'
      : 'No query at the cursor: put the cursor inside a mongo shell call or a SQL statement, or select one.');
  }
  return { query: q, uri: doc.uri, range: rangeOf(q) };
}

/**
 * The modal after a 'side-effects' refusal: explain without ANALYZE (nothing of the statement runs), run
 * it anyway, or cancel (undefined).
 */
async function askSideEffects(message: string, analyze: boolean): Promise<'plain' | 'run' | undefined> {
  const plain = 'Explain Without ANALYZE';
  const run = analyze ? 'Run It Anyway' : 'Explain Anyway';
  const buttons = analyze ? [plain, run] : [run];
  const choice = await vscode.window.showWarningMessage(message, { modal: true, detail: analyze ? 'EXPLAIN without ANALYZE plans the statement without running it.' : 'The planner may evaluate the function while it plans.' }, ...buttons);
  return choice === plain ? 'plain' : choice === run ? 'run' : undefined;
}

/**
 * A query with values from the code (`{ $lt: lastCreatedAt }`, `$1`): one input box per value, in the
 * notation of its engine, put in the query's text. Escape on any box cancels the Explain.
 */
async function askValues(query: QueryTarget, given?: readonly string[]): Promise<QueryTarget> {
  const v = query.values!;
  const typed: string[] = [];
  for (const [i, name] of v.names.entries()) {
    if (given?.[i] !== undefined && given[i].trim() !== '') {
      typed.push(given[i].trim());
      continue;
    }
    const value = await vscode.window.showInputBox({
      title: `Explain ${query.title}: value ${i + 1} of ${v.names.length}`,
      prompt: query.engine === 'mongodb'
        ? `The value of ${name} to explain with, in mongo shell notation`
        : `The value of ${name} to explain with, as an SQL literal`,
      placeHolder: query.engine === 'mongodb' ? '42, "open", ISODate("2024-01-31"), ObjectId("...")' : "42, 'open', now() - interval '1 day'",
      ignoreFocusOut: true,
      validateInput: (x) => (x.trim() === '' ? 'Give a value (null is one).' : undefined),
    });
    if (value === undefined) throw new Dismissed();
    typed.push(value.trim());
  }
  const { problem: _problem, values: _values, ...rest } = query;
  return { ...rest, text: fillExplainValues(v, typed) };
}

/** How long an explain runs before its progress notification (with Cancel) shows. */
const PROGRESS_DELAY_MS = 500;
/** How long the advice waits at most for the page to say it has drawn the plan. */
const DRAWN_BOUND_MS = 1000;

/**
 * Shows a cancellable progress notification for `done` if it has not settled after `delayMs`; Cancel
 * runs `cancel`. The notification closes when `done` settles.
 */
function progressAfter(delayMs: number, title: string, done: Promise<unknown>, cancel: () => void): void {
  const timer = setTimeout(() => {
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (_progress, token) => {
      const sub = token.onCancellationRequested(cancel);
      try {
        await done;
      } catch {
        // The explain's own caller reports its failure.
      } finally {
        sub.dispose();
      }
    });
  }, delayMs);
  const end = () => clearTimeout(timer);
  done.then(end, end);
}

/** What Explain and Compare are built with (main.ts). */
export interface ExplainParts {
  extensionUri: vscode.Uri;
  log: Log;
  /** Where a connection's state (ok, failed) is recorded. */
  store: ConnectionStore;
  connections: ConnectionChoice;
  queries: DocumentQueries;
  gateway: () => Promise<Gateway>;
  advice: AdviceHub;
  prompts: Prompts;
  /** MongoDB: whether each connection measures its suggestions on Explain (asked once per connection). */
  measureChoices: MeasureChoices;
}

/** "Explain Query" and "Compare with Previous Run". */
export class Explainer {
  /** The measurement started after the last explain, until it ends (tests wait on it). */
  measuring?: Promise<void>;

  constructor(readonly parts: ExplainParts) {}

  explain(args: ExplainArgs = {}): Promise<ExplainSummary | undefined> {
    return explainQuery(this, args);
  }

  compare(args: { key?: string } | ExplainArgs = {}): Promise<boolean> {
    return compareWithPrevious(this, args);
  }
}

async function explainQuery(e: Explainer, args: ExplainArgs): Promise<ExplainSummary | undefined> {
  const opened: { unused?: () => void; advise?: () => void } = {};
  try {
    return await explainFound(e, args, opened);
  } catch (err) {
    opened.unused?.();
    opened.advise?.();
    throw err;
  }
}

async function explainFound(e: Explainer, args: ExplainArgs, opened: { unused?: () => void; advise?: () => void }): Promise<ExplainSummary | undefined> {
  const s = e.parts;
  const steps: Partial<Record<ExplainStep, number>> = {};
  let started = performance.now();
  const target = await resolveTarget(s.queries, args);
  steps.find = performance.now() - started;
  started = performance.now();
  if (target.query.problem && !target.query.values) throw new UserError(target.query.problem);
  // The query is found: the panel's page loads while the values are asked and the explain runs.
  const unused = PlanPanel.prepare(s.extensionUri, s.log);
  if (unused) opened.unused = unused;
  let query = target.query.problem ? await askValues(target.query, args.values) : target.query;
  const opts = settings();
  const verbosity = args.verbosity ?? opts.verbosity;
  const analyzeFlag = args.analyze ?? opts.analyze;
  const buffers = args.buffers ?? opts.buffers;

  // Read the query before connecting, so a typo costs no round trip.
  let command: MongoCommand | undefined;
  if (query.engine === 'mongodb') {
    const parsed = parseMongoQuery(query.text);
    if (!parsed.ok) throw new UserError(parsed.error);
    command = parsed.command;
  }

  const spec = await s.connections.for(query.engine, target.uri, args.connectionId);
  let effectiveVerbosity = verbosity;
  let allowWrites = false;
  if (command && verbosity !== 'queryPlanner' && explainWouldWrite(command)) {
    const choice = await vscode.window.showWarningMessage(
      'This pipeline writes with $out or $merge: explaining it at executionStats runs it and writes the output collection.',
      { modal: true },
      'Explain Without Running',
      'Run It (It Writes)',
    );
    if (choice === undefined) throw new Dismissed();
    if (choice === 'Explain Without Running') effectiveVerbosity = 'queryPlanner';
    else allowWrites = true;
  }
  const password = await s.connections.password(spec);
  const uri = connectionUri(spec, password);
  const gateway = await s.gateway();
  // A query on a family of collections (`'app_users' + appId`) runs on one real collection of it.
  let family: { name: string; others: string[] } | undefined;
  if (command && isCollectionFamily(command.collection)) {
    const member = await familyMember(gateway, spec, uri, command.collection, command.database, args.collection);
    s.log.info(member.sentence);
    query = { ...query, text: onFamilyMember(query.text, command.collection, member.name), title: `${member.name}.${command.operation} (${member.why})` };
    family = { name: command.collection, others: member.others };
    const parsed = parseMongoQuery(query.text);
    if (!parsed.ok) throw new UserError(parsed.error);
    command = parsed.command;
  }
  const title = query.title;
  const statement = query.engine === 'postgres' ? statementInfo(query.text) : undefined;
  const what = query.engine === 'postgres' ? `${analyzeFlag ? 'EXPLAIN ANALYZE' : 'EXPLAIN'} ${statement?.verb ?? 'statement'}` : `explain (${effectiveVerbosity})`;
  s.log.info(`Explaining ${title} on ${spec.name} (${what}).`);

  // The advice of the explain that gave the plan, and its cancel while it runs after the plan is shown.
  let advising: { advice: Promise<AdviceOutcome> | undefined; cancel: () => void } | undefined;
  // The advice starts on the explain's session once the plan has left for the panel (below), or once
  // this command has failed on its way there, so the session is always given back.
  let letAdvise!: () => void;
  const planShown = new Promise<void>((resolve) => (letAdvise = resolve));
  opened.advise = letAdvise;
  const run = async (withAnalyze: boolean, allowSideEffects: boolean): Promise<ExplainOutcome> => {
    const running = gateway.explain({
      engine: query.engine, connectionId: spec.id, uri, text: query.text, ...(command ? { command } : {}), verbosity: effectiveVerbosity, allowWrites,
      analyze: withAnalyze, allowSideEffects, buffers, timeoutMs: opts.timeoutMs, connectTimeoutMs: opts.connectTimeoutMs,
    }, planShown);
    let cancelled = false;
    const cancel = () => {
      if (cancelled) return;
      cancelled = true;
      s.log.info(`Cancelling the explain of ${title} on the server.`);
      running.cancel().catch((err: unknown) => s.log.error('Cancelling failed', err));
    };
    activeExplain.cancel = cancel;
    // The notification with Cancel comes only for an explain still running after a moment: a warm one
    // is done before it would show, so no toast flashes and the workbench draws none while the plan is
    // on its way to the panel.
    progressAfter(PROGRESS_DELAY_MS, `Explaining ${title} on ${spec.name}`, running.done, cancel);
    try {
      const planned = await running.done;
      advising = { advice: running.advice, cancel };
      return planned;
    } catch (err) {
      const kind = (err as { kind?: string }).kind;
      if (kind === 'auth' || kind === 'network' || kind === 'config') {
        s.store.setState(spec.id, { kind: 'failed', error: (err as Error).message, at: Date.now() });
      }
      if (cancelled || kind === 'cancelled') {
        throw new UserError(`The explain of ${title} was cancelled and the server stopped the query.`);
      }
      throw err;
    } finally {
      if (activeExplain.cancel === cancel && !advising) delete activeExplain.cancel;
    }
  };
  // PostgreSQL refuses, before anything runs, an explain that would change what the rollback does not
  // undo (or whose planning may run a user-written function): ask, then explain again as the user chose.
  let withAnalyze = analyzeFlag;
  let allowSideEffects = false;
  let outcome: ExplainOutcome;
  steps.prepare = performance.now() - started;
  for (;;) {
    try {
      outcome = await run(withAnalyze, allowSideEffects);
      break;
    } catch (err) {
      if ((err as { kind?: string }).kind !== 'side-effects' || allowSideEffects) throw err;
      const choice = await askSideEffects((err as Error).message, withAnalyze);
      if (choice === undefined) throw new Dismissed();
      s.log.info(choice === 'plain' ? 'Explaining without ANALYZE, as chosen.' : 'Running the explain anyway, as chosen.');
      if (choice === 'plain') withAnalyze = false;
      else allowSideEffects = true;
    }
  }
  s.store.setState(spec.id, { kind: 'ok', ...(outcome.serverVersion ? { serverVersion: outcome.serverVersion } : {}), at: Date.now() });
  for (const note of outcome.notes) s.log.info(note);
  if (outcome.steps) {
    steps.connect = outcome.steps.connectMs;
    steps.explain = outcome.steps.explainMs;
  }
  started = performance.now();
  const findings = analyze(outcome.plan);
  steps.analyse = performance.now() - started;
  const keys = RunHistory.keys(query.engine, query.text, target.uri && target.range ? { uri: target.uri, line: target.range.start.line } : undefined);
  const previous = history.get(history.find(keys, 1)).at(-1);
  history.add(keys, { title, plan: outcome.plan, findings, at: Date.now(), label: `${new Date().toLocaleTimeString()} on ${spec.name}` });
  // The plan is shown as soon as it exists, with its own session; the advice (index lists, bounded
  // counts) joins the session when the advisor has answered on the same connection session.
  const session = new PlanSession(
    { log: s.log, gateway: s.gateway, consent: () => s.prompts.consent ?? modalConsent, measured: () => s.advice.measured(), running: activeExplain },
    {
      title, text: query.text, plan: outcome.plan, findings, connection: spec, connectUri: uri, runKeys: keys,
      ...(target.uri ? { source: target.uri } : {}), ...(family ? { family } : {}),
    },
  );
  started = performance.now();
  const panel = PlanPanel.showPlan(s.extensionUri, s.log, { title, plan: outcome.plan, findings, rawText: outcome.rawText, suggestions: [] }, { ...(target.uri ? { uri: target.uri } : {}), ...(target.range ? { range: target.range } : {}) }, session);
  // The advice starts when the page says it has drawn the plan (a second at most; a page still loading
  // gets the plan later, and then the advice starts at once): neither its replies nor its work on this
  // machine and the server come between the plan and the panel.
  void panel.drawn(DRAWN_BOUND_MS).then(letAdvise);
  const addSuggestions = panel.laterSuggestions();
  steps.render = performance.now() - started;
  s.log.info(`Explain of ${title}, step by step: ${stepsLine(steps)}.`);
  if (outcome.phases) s.log.info(`Explain of ${title}, the explain's parts: ${phasesLine(outcome.phases)}.`);
  const adviceStart = performance.now();
  let adviceOutcome: AdviceOutcome | undefined;
  try {
    adviceOutcome = await advising?.advice;
  } catch (err) {
    if (activeExplain.cancel === advising?.cancel) delete activeExplain.cancel;
    if ((err as { kind?: string }).kind === 'cancelled' || (err as { name?: string }).name === 'AbortError') throw new UserError(`The advice for ${title} was cancelled; the plan is shown.`);
    throw err;
  }
  if (activeExplain.cancel === advising?.cancel) delete activeExplain.cancel;
  s.log.info(`Explain of ${title}: advise ${Math.round(adviceOutcome?.adviseMs ?? performance.now() - adviceStart).toLocaleString('en-US')} ms, after the plan was shown.`);
  const live = adviceOutcome?.advice;
  const ctx: AdviceContext | undefined = live ? { engine: query.engine, live, ...(command ? { command } : {}) } : undefined;
  const suggestions = suggestionViews(ctx);
  if (live?.advice.refusal) s.log.info(`No index advice: ${live.advice.refusal}`);
  for (const note of live?.advice.notes ?? []) s.log.info(`Advice: ${note}`);
  for (const warning of live?.advice.warnings ?? []) s.log.warn(`Advice: ${warning}`);
  session.advise(ctx);
  const shown = addSuggestions(suggestions);
  // Measured at once where the settings say so (PostgreSQL by default: nothing of the user's is written):
  // the panel shows the rules' order now and the measured order when the server has done the work.
  const verifiable = shown ? suggestions.find((v) => v.verifiable) : undefined;
  const startMeasure = (v: NonNullable<typeof verifiable>) => {
    s.log.info(`Measuring the suggestions of ${title} on ${spec.name}.`);
    const measureStart = performance.now();
    const measuring = panel.measure(session, v.id).finally(() => {
      s.log.info(`Explain of ${title}: measure ${Math.round(performance.now() - measureStart).toLocaleString('en-US')} ms, after the plan was shown.`);
      if (e.measuring === measuring) delete e.measuring;
    });
    e.measuring = measuring;
  };
  let toMeasure: typeof verifiable;
  if (verifiable && query.engine === 'mongodb' && !opts.measureOnExplain.mongodb) {
    // MongoDB measures on a scratch copy of a sample: asked once per connection (the plan is shown already,
    // and Explain does not wait for the answer).
    // The answer may come after another Explain replaced this plan (and its session with it): then this
    // plan's suggestions are not measured.
    const showing = panel.stillShowing();
    decideMongoMeasure(s.measureChoices, spec.id, false, () => (s.prompts.measureAnswer ?? askMeasure(spec.name))()).then((yes) => {
      if (yes && showing()) startMeasure(verifiable);
      else if (yes) s.log.info(`The suggestions of ${title} were not measured: another plan is shown now.`);
      else s.log.info(`The suggestions of ${title} are the rules' verdict: measuring on ${spec.name} is off (Connections view: Measure MongoDB Suggestions).`);
    }, (err: unknown) => s.log.error(`Whether to measure on ${spec.name} could not be decided`, err));
  } else if (verifiable && opts.measureOnExplain[query.engine]) {
    toMeasure = verifiable;
    startMeasure(verifiable);
  }
  s.log.info(`Explained ${title} in ${Math.round(outcome.durationMs)} ms: ${outcome.plan.nodes.length} nodes, ${findings.length} findings.`);
  if (outcome.rolledBack) {
    void vscode.window.showInformationMessage(`The ${statement?.verb ?? 'statement'} ran under EXPLAIN ANALYZE inside a transaction that was rolled back: no rows changed${allowSideEffects ? ', but what a rollback does not undo (sequences, volatile functions) was allowed to run' : ''}.`);
  } else if (withAnalyze && statement?.writes) {
    s.log.warn('A data-changing statement was explained with ANALYZE but the adapter did not report a rollback.');
  }
  if (previous) {
    void vscode.window.showInformationMessage(`${title} was explained before in this session.`, 'Compare with Previous Run').then((c) => {
      if (c) void session.compare();
    });
  }
  const summary: ExplainSummary = {
    engine: query.engine, connection: spec.name, title, nodeCount: outcome.plan.nodes.length, rootKind: outcome.plan.root.kind,
    findings: findings.map((f) => f.code), durationMs: outcome.durationMs, rolledBack: outcome.rolledBack === true, suggestions: suggestions.map((v) => v.title),
    measuring: toMeasure !== undefined,
  };
  if (outcome.serverVersion) summary.serverVersion = outcome.serverVersion;
  if (family && command) summary.collection = command.collection;
  return summary;
}

/** Shows the last two runs of a query side by side. */
async function compareWithPrevious(e: Explainer, args: { key?: string } | ExplainArgs): Promise<boolean> {
  const s = e.parts;
  let key = 'key' in args && args.key ? args.key : undefined;
  if (!key) {
    const editor = vscode.window.activeTextEditor;
    if (editor) {
      try {
        const target = await resolveTarget(s.queries, args as ExplainArgs);
        key = history.find(RunHistory.keys(target.query.engine, target.query.text, target.uri && target.range ? { uri: target.uri, line: target.range.start.line } : undefined), 2);
      } catch (err) {
        if (!(err instanceof UserError)) throw err;
      }
    }
    if (!key || history.get(key).length < 2) key = history.lastKey;
  }
  const runs = history.get(key);
  if (runs.length < 2) throw new UserError('There is no previous run of this query to compare with: explain it, change something, and explain it again.');
  const [before, after] = runs as [Run, Run];
  PlanPanel.showComparison(s.extensionUri, s.log, {
    title: after.title,
    before: { label: before.label, plan: before.plan, findings: before.findings },
    after: { label: after.label, plan: after.plan, findings: after.findings },
  });
  return true;
}

/**
 * "Compare with previous run" above a query of the file that ran twice. The "Explain" above every query
 * is the language server's lens, over the same queries this one reads from it.
 */
export class CompareCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly sub: vscode.Disposable[];

  constructor(private readonly queries: DocumentQueries) {
    this.sub = [
      history.onDidChange(() => this.changed.fire()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${SETTINGS}.codeLens.enabled`)) this.changed.fire();
      }),
    ];
  }

  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    if (!vscode.workspace.getConfiguration(SETTINGS).get<boolean>('codeLens.enabled', true)) return [];
    // Nothing ran yet: the server is not asked.
    if (history.lastKey === undefined) return [];
    const lenses: vscode.CodeLens[] = [];
    for (const q of (await this.queries.listed(doc)) ?? []) {
      const range = new vscode.Range(doc.positionAt(q.start), doc.positionAt(q.start));
      const key = history.find(RunHistory.keys(q.engine, q.text, { uri: doc.uri, line: range.start.line }), 2);
      if (key) lenses.push(new vscode.CodeLens(range, { title: 'Compare with previous run', command: Commands.compareWithPrevious, arguments: [{ key }] }));
    }
    return lenses;
  }

  dispose(): void {
    for (const d of this.sub) d.dispose();
    this.changed.dispose();
  }
}

/** The measure question as a notification: the plan is on screen already; an unanswered question measures nothing. */
function askMeasure(connectionName: string): () => Promise<MeasureAnswer | undefined> {
  return async () => {
    const q = measureQuestion(connectionName);
    const label = await vscode.window.showInformationMessage(q.message, ...q.buttons.map((b) => b.label));
    return q.buttons.find((b) => b.label === label)?.answer;
  };
}
