// What every concern of the language server shares: the port to the client, the options, the open
// documents, their analyses and covers, and the two calls that bring a document up to date and publish it.

import type { PublishDiagnosticsParams } from 'vscode-languageserver';
import type { NotificationType } from '../protocol/messages';
import type { Analyses } from './analyses';
import type { Covers } from './covers';
import type { DocState, Edit } from './documents';

/** What the service needs from a connection: publish diagnostics, notify the client, log. */
export interface ServerPort {
  sendDiagnostics(params: PublishDiagnosticsParams): void;
  /** A server -> client notification of src/protocol/languageServer.ts. */
  sendNotification<P>(type: NotificationType<P, 'server'>, params: NoInfer<P>): void;
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

/**
 * The per-file caps keep a file of any size answered within 2 s and 300 MB (bench/caps.ts): the finder
 * reads a file of up to 600,000 characters (53,000 short queries in 3 MB took it 2.4 s and 1 GB), and
 * its first 750 queries are analysed. The extension's own lenses use the same figures (src/extension/caps.ts).
 */
export const DEFAULT_OPTIONS: ServiceOptions = { debounceMs: 150, codeLens: true, maxTextLength: 600_000, maxQueries: 750, explainDelayMs: 1500, explainsPerMinute: 8 };

export interface ServerContext {
  readonly port: ServerPort;
  readonly options: ServiceOptions;
  readonly docs: ReadonlyMap<string, DocState>;
  readonly analyses: Analyses;
  readonly covers: Covers;
  /** The document, analysed now if an edit is pending: a hover on stale positions would point wrong. */
  current(uri: string): DocState | undefined;
  /** Publishes the document's diagnostics; `edit`: the one edit since the last analysis. */
  publish(state: DocState, edit?: Edit): void;
}
