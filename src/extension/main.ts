// The composition root of the VS Code extension, and the only place that wires things together.
// Activation only registers: commands, the Connections view, the status bar item and the CodeLens
// provider. Nothing connects or loads a driver during activate(): the language client is loaded and
// started after it has returned, and then, once a connection exists, the adapters, drivers and SQL parser
// are loaded in the background so the first Explain does not wait for them. The log says how long
// activate() took (bench/activation.ts reads it).

import * as vscode from 'vscode';
import { Commands, commandState, registerCommand } from './commands';
import { addConnection, chooseMongoMeasure, editConnection, removeConnection, selectConnection, testConnection, useConnectionHere } from './connections/actions';
import { MeasureChoices } from './connections/measureChoice';
import { Bindings, ConnectionStatusBar } from './connections/bindings';
import { ConnectionStore } from './connections/store';
import { ConnectionsTree } from './connections/tree';
import { activeExplain, CompareCodeLens, Explainer, type ExplainArgs } from './explain';
import { DocumentQueries } from './documentQueries';
import { history } from './runHistory';
import { AdviceHub } from './adviceHub';
import { IndexBuilder } from './build';
import { ConnectionChoice } from './connectionChoice';
import type { ConnectionParts } from './connections/actions';
import { Prompts } from './prompts';
import { watchPrismaSchemas } from './targets';
import type { Gateway } from './gateway';
import { Log } from './log';
import { loadSqlParser } from '../core/index';
import { CapStatus } from './capStatus';
import { comparePlans, openPlan, type OpenPlanArgs } from './openPlan';
import { PlanPanel } from './planPanel';
import { createSuggestedIndex, explainSample, offerWalkthrough, showPlan, verifyFirstSuggestion, type SampleArgs } from './walkthrough';
import { keepExplainSessions } from './connections/warmSessions';
import type { ListedQuery } from '../protocol/languageServer';

/** What activate() returns: a small handle the extension's own tests read. Not a public API. */
export interface ExtensionHandle {
  /** The parts the tests read: the extension's context, the log, the connections and their choices. */
  parts: Pick<ConnectionParts, 'log' | 'store' | 'bindings' | 'measureChoices'> & { context: vscode.ExtensionContext };
  /** The answers the tests give in place of the user (consent, the measure question). */
  prompts: Prompts;
  /** Explain and Compare: its `measuring` is the measurement started after the last explain. */
  explainer: Explainer;
  /** Wraps the gateway every part reaches the adapters through (tests watch what is asked); returns the undo. */
  wrapGateway(wrap: (inner: Gateway) => Gateway): () => void;
  lastError(): string | undefined;
  clearLastError(): void;
  panel(): PlanPanel | undefined;
  statusBarText(): string;
  /** The per-file cap hint of the active editor's document, if it hit one. */
  capText(): string | undefined;
  history: typeof history;
  /** True when this start offered the walkthrough (the first start of an install). */
  walkthroughOffered: Promise<boolean>;
  /** Asks again what a start asks (true only when this install was never offered the walkthrough). */
  offerWalkthrough(): Promise<boolean>;
  /** Does what the progress notification's Cancel button does; false when nothing runs. */
  cancelRunningExplain(): boolean;
  /** The queries the language server lists for a document, as Explain picks from them (undefined while it does not run). */
  listedQueries(doc: vscode.TextDocument): Promise<ListedQuery[] | undefined>;
}

const CODE_FILES: vscode.DocumentSelector = [
  { language: 'sql' },
  { language: 'javascript' },
  { language: 'typescript' },
  { language: 'javascriptreact' },
  { language: 'typescriptreact' },
  { pattern: '**/*.mongodb.js' },
];

export function activate(context: vscode.ExtensionContext): ExtensionHandle {
  const started = performance.now();
  const log = new Log('Query Plan Inspector');
  const store = new ConnectionStore(context.globalState, context.secrets);
  const bindings = new Bindings(context.workspaceState, store);
  const caps = new CapStatus(log);
  // The composition: each part is built here with only the parts it needs.
  // One advice service for the panel, Verify and the language server's lenses, squiggles and hovers,
  // loaded with the adapters on first use.
  const advice = new AdviceHub();
  let loaded: Promise<Gateway> | undefined;
  let wrapped: ((inner: Gateway) => Gateway) | undefined;
  const load = () => (loaded ??= advice.service().then((a) => import('./adapterGateway').then((m) => store.askingPasswords(m.createGateway(log, a), log))));
  const gateway = async (): Promise<Gateway> => (wrapped ? wrapped(await load()) : load());
  const measureChoices = new MeasureChoices(context.globalState);
  const prompts = new Prompts();
  const queries = new DocumentQueries();
  const connectionParts: ConnectionParts = { store, bindings, log, gateway, measureChoices };
  const connections = new ConnectionChoice(store, bindings, log, (engine) => addConnection(connectionParts, { engine }));
  const explainer = new Explainer({ extensionUri: context.extensionUri, log, store, connections, queries, gateway, advice, prompts, measureChoices });
  const builder = new IndexBuilder(log, bindings, connections, gateway, prompts, advice);
  const panelParts = { extensionUri: context.extensionUri, log };
  const statusBar = new ConnectionStatusBar(bindings, store);
  const tree = new ConnectionsTree(store);
  const lenses = new CompareCodeLens(queries);
  watchPrismaSchemas(context);
  context.subscriptions.push(
    log, store, bindings, statusBar, caps, tree, lenses, advice,
    vscode.window.registerTreeDataProvider('queryPlanInspector.connections', tree),
    vscode.languages.registerCodeLensProvider(CODE_FILES, lenses),
    { dispose: () => PlanPanel.active?.dispose() },
    // A fix that inserts lines above a query that ran keeps its previous run for Compare.
    vscode.workspace.onDidChangeTextDocument((e) => history.follow(e.document.uri, e.contentChanges)),
  );

  const reg = <A extends unknown[], R>(id: (typeof Commands)[keyof typeof Commands], title: string, fn: (...a: A) => Promise<R> | R) => registerCommand(context, log, id, title, fn);
  reg(Commands.explainQuery, 'Explain Query', (args?: ExplainArgs | vscode.Uri) => explainer.explain(args instanceof vscode.Uri ? { uri: args } : args));
  reg(Commands.explainQueryAt, 'Explain Query', (args?: ExplainArgs) => explainer.explain(args));
  reg(Commands.openPlan, 'Open Plan', (args?: OpenPlanArgs) => openPlan(panelParts, args));
  reg(Commands.openPlanFromClipboard, 'Open Plan', () => openPlan(panelParts, { source: 'clipboard' }));
  reg(Commands.compareWithPrevious, 'Compare with Previous Run', (args?: { key?: string }) => explainer.compare(args));
  reg(Commands.comparePlans, 'Compare Plans', (args?: { before?: string; after?: string }) => comparePlans(panelParts, args));
  reg(Commands.addConnection, 'Add Connection', (input?: Parameters<typeof addConnection>[1]) => addConnection(connectionParts, input));
  reg(Commands.editConnection, 'Edit Connection', (arg?: Parameters<typeof editConnection>[1]) => editConnection(connectionParts, arg));
  reg(Commands.removeConnection, 'Remove Connection', (arg?: Parameters<typeof removeConnection>[1]) => removeConnection(connectionParts, arg));
  reg(Commands.measureOnExplain, 'Measure MongoDB Suggestions', (arg?: Parameters<typeof chooseMongoMeasure>[1]) => chooseMongoMeasure(connectionParts, arg));
  reg(Commands.testConnection, 'Test Connection', (arg?: Parameters<typeof testConnection>[1]) => testConnection(connectionParts, arg));
  reg(Commands.selectConnection, 'Choose Connection', (arg?: Parameters<typeof selectConnection>[1]) => selectConnection(connectionParts, arg));
  reg(Commands.useConnectionHere, 'Use Connection Here', (arg?: Parameters<typeof useConnectionHere>[1]) => useConnectionHere(connectionParts, arg));
  reg(Commands.refreshConnections, 'Refresh Connections', () => {
    for (const spec of store.list()) store.setState(spec.id, { kind: 'unknown' });
    // Index lists and statistics are read again by every face.
    advice.invalidate({});
  });
  reg(Commands.showLog, 'Show Log', () => log.show());
  reg(Commands.explainSample, 'Explain Query', (args?: SampleArgs) => explainSample(explainer, args));
  reg(Commands.showPlan, 'Show the Plan', () => showPlan());
  reg(Commands.verifySuggestion, 'Verify', () => verifyFirstSuggestion());
  reg(Commands.createSuggestedIndex, 'Create Index', () => createSuggestedIndex());
  // Inline advice while coding: the language client is loaded and the server started in the background;
  // activation does not wait for either.
  setImmediate(() => {
    import('./languageClient')
      .then((m) => m.startLanguageClient(context, { log, bindings, connections, advice, caps, queries, builder }))
      .catch((err: unknown) => log.error('The language server could not start.', err))
      .finally(() => {
        // Explain warmed before the first click, once a connection exists: the adapters, the drivers,
        // the advice service and the SQL parser loaded in the background (nothing connects).
        if (store.list().length > 0) warm();
        else context.subscriptions.push(store.onDidChange(() => store.list().length > 0 && warm()));
        // The session of the connection the shown query file uses is opened before the first Explain.
        context.subscriptions.push(keepExplainSessions(connectionParts));
      });
  });
  let warming: Promise<void> | undefined;
  const warm = () => {
    const t0 = performance.now();
    warming ??= Promise.all([gateway(), import('../adapters/advise'), import('../adapters/postgres'), import('../adapters/mongodb'), loadSqlParser()])
      .then(() => log.info(`Explain is ready: the adapters, drivers and parser loaded in ${Math.round(performance.now() - t0).toLocaleString('en-US')} ms, before the first Explain.`))
      .catch((err: unknown) => log.warn(`Explain could not be warmed (the first one loads what it needs): ${err instanceof Error ? err.message : String(err)}`));
  };

  const walkthroughOffered = offerWalkthrough(context, log).catch((err: unknown) => {
    log.error('The walkthrough could not be offered.', err);
    return false;
  });
  log.info(`activated in ${(performance.now() - started).toFixed(1)} ms`);
  return {
    parts: { context, log, store, bindings, measureChoices },
    prompts,
    explainer,
    wrapGateway: (wrap) => {
      wrapped = wrap;
      return () => {
        if (wrapped === wrap) wrapped = undefined;
      };
    },
    lastError: () => commandState.lastError,
    clearLastError: () => {
      delete commandState.lastError;
    },
    panel: () => PlanPanel.active,
    statusBarText: () => statusBar.text,
    capText: () => caps.text,
    listedQueries: (doc) => queries.listed(doc),
    history,
    walkthroughOffered,
    offerWalkthrough: () => offerWalkthrough(context, log),
    cancelRunningExplain: () => {
      if (!activeExplain.cancel) return false;
      activeExplain.cancel();
      return true;
    },
  };
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
