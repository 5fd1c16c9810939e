// What the commands share, built once by the composition root (main.ts): the connections, the gateway to
// the adapters, the one advice service and the events that tell every face its advice changed.

import type * as vscode from 'vscode';
import type { AdviceService } from '../adapters/adviceService';
import type { ConsentPrompt } from './advice';
import type { CapStatus } from './capStatus';
import type { Bindings } from './connections/bindings';
import type { MeasureAnswer, MeasureChoices } from './connections/measureChoice';
import type { ConnectionEngine, ConnectionSpec } from './connections/spec';
import type { ConnectionStore } from './connections/store';
import type { DocumentQueries } from './documentQueries';
import type { Gateway } from './gateway';
import type { Log } from './log';

/** What an invalidation covers: a connection (all when absent), and only these collections or tables when given. */
export interface AdviceScope {
  connection?: string;
  targets?: string[];
}

/** The services the commands share, built once on first use. */
export interface Services {
  context: vscode.ExtensionContext;
  log: Log;
  store: ConnectionStore;
  bindings: Bindings;
  /** The queries of a document, from the language server (else the extension's finder). */
  queries: DocumentQueries;
  gateway: () => Promise<Gateway>;
  /** The one advice service (src/adapters/adviceService.ts), loaded on first use. */
  advice: () => Promise<AdviceService>;
  /** Drops cached advice (after Create Index, a connection switch, Refresh) so every face asks again. */
  invalidateAdvice: (scope: AdviceScope) => void;
  /** Fired once advice was dropped; the language client makes the server ask again. */
  onAdviceInvalidated: vscode.Event<AdviceScope>;
  /**
   * A cached answer changed in place (Verify measured it): the faces ask again and get the measured
   * verdict from the cache, which is kept.
   */
  adviceMeasured: () => void;
  /** Fired by adviceMeasured; the language client has the server ask for the cached advice again. */
  onAdviceMeasured: vscode.Event<void>;
  /** The status bar hint and log line of a document over a per-file cap (the language server reports it). */
  caps: CapStatus;
  /** Connection add flow, used when a query needs a connection and none exists. */
  addConnection: (engine: ConnectionEngine) => Promise<ConnectionSpec | undefined>;
  /**
   * Answers the questions asked before anything is written or built on a server (the MongoDB trial, a
   * rolled-back PostgreSQL build); a modal by default. Tests set it to answer for the user.
   */
  consent?: ConsentPrompt;
  /** The measurement started after the last explain, until it ends (tests wait on it). */
  measuring?: Promise<void>;
  /** MongoDB: whether each connection measures its suggestions on Explain (asked once per connection). */
  measureChoices: MeasureChoices;
  /** Answers the measure question for tests (a notification by default). */
  measureAnswer?: () => Promise<MeasureAnswer | undefined>;
}

