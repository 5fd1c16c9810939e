// The messages between the extension (the language client) and the language server (src/server/), on
// top of the standard LSP ones. The server finds queries in the open files and advises without any
// database; everything it knows about a live database (index lists, statistics) reaches it through these
// messages, sent by the extension after the extension itself connected through the adapters. The server
// never sees a connection string, a password or a driver.
//
// Types and descriptors only (no library import): each message is a descriptor of messages.ts, which both
// sides send and handle through `typedMessages` over their own LSP library.

import { clientNotification, clientRequest, serverNotification } from './messages';
import type { Advice, CatalogRelation, ExistingMongoIndex, ExistingPgIndex, MongoStats, PgTableStats } from '../core/index';
import type { DiagnosticCode, PlanSummary, QueryTarget } from '../core/index';

// The diagnostic codes and the plan summary are the query lint's own (src/core/lint), shared with `qpi lint`.
export { DiagnosticCodes, type DiagnosticCode, type PlanSummary } from '../core/index';

/** Bumped when a message below changes shape; sent by the client in initializationOptions. */
export const LANGUAGE_SERVER_PROTOCOL_VERSION = 2;

/** What the client passes in `initializationOptions`. */
export interface ServerInitOptions {
  protocolVersion: number;
  /** Wait after an edit before re-analysing a burst of edits, in ms; the first edit of a pause runs at once. */
  debounceMs?: number;
  /** Show the "Suggest index" CodeLens (the extension draws "Explain" itself). */
  codeLens?: boolean;
  /** Ask for plain explains of connected documents' queries in the background (default true). */
  backgroundExplain?: boolean;
  /**
   * Read the workspace's schema files (SQL and migrations, Prisma schemas, Mongoose models) and use the
   * indexes and keys they declare where no connection sent a list (default true).
   */
  repositorySchema?: boolean;
}

// ---- server -> client ---------------------------------------------------------------------------------

/**
 * Notification, server -> client: the collections and tables an open document's queries use, sent when
 * the server has no schema for some of them. The extension answers (if the document's folder has a
 * connection bound; it never prompts for one) with `schema` requests. Sent again only for new targets.
 */
export const SchemaNeeded = serverNotification<SchemaNeededParams>('queryPlanInspector/schemaNeeded');
export interface SchemaNeededParams {
  uri: string;
  mongodb: { database?: string; collection: string }[];
  postgres: { schema?: string; table: string }[];
}

// ---- client -> server ---------------------------------------------------------------------------------

/**
 * Request, client -> server: the indexes (and optional statistics) of some collections or tables, as
 * the connection bound to these documents' folder reports them. The server stores them for the given
 * documents, re-analyses them with the indexes that exist, and answers with how many queries it advised.
 */
export const SetSchema = clientRequest<SetSchemaParams, SetSchemaResult>('queryPlanInspector/schema');
export interface SetSchemaParams {
  /** The documents this schema applies to (those whose folder uses the connection). */
  uris: string[];
  engine: 'mongodb' | 'postgres';
  /** The connection's display name, for messages ("on Local Mongo"); never its address or password. */
  connectionName: string;
  /**
   * `relation`: what the connection's catalog says the name is (a table, a view and what it reads, a
   * collection), `null` when it does not exist there: the server then says so instead of an index or a
   * scan. Absent: not looked up.
   */
  collections?: { database?: string; name: string; indexes: ExistingMongoIndex[]; stats?: MongoStats; relation?: CatalogRelation | null }[];
  tables?: { schema?: string; name: string; indexes: ExistingPgIndex[]; stats?: PgTableStats; relation?: CatalogRelation | null }[];
}
export interface SetSchemaResult {
  /** Queries in those documents advised with the schema. */
  advised: number;
}

/**
 * Notification, server -> client: queries of a document worth a plain explain in the background
 * (queryPlanner / EXPLAIN without ANALYZE: nothing is executed), sent a while after the last edit, only
 * for documents whose folder has a connection (the server has its schema), at most a few per document
 * and minute, each text once. The extension explains them on the folder's connection and answers with
 * `plans`; it drops the request if no connection is bound.
 */
export const ExplainWanted = serverNotification<ExplainWantedParams>('queryPlanInspector/explainWanted');
export interface ExplainWantedParams {
  uri: string;
  queries: { engine: 'mongodb' | 'postgres'; text: string }[];
}


/**
 * Request, client -> server: the plans of queries the server asked about (by their text), or why one
 * could not be explained. The server stores them for these documents and republishes their diagnostics.
 */
export const SetPlans = clientRequest<SetPlansParams, void>('queryPlanInspector/plans');
export interface SetPlansParams {
  uris: string[];
  connectionName: string;
  plans: { engine: 'mongodb' | 'postgres'; text: string; summary?: PlanSummary; error?: string }[];
}

/**
 * Notification, client -> server: forget the schema of these documents (all when `uris` is absent), as
 * when the folder's connection changed or was removed. Diagnostics fall back to advice without a database.
 */
export const ClearSchema = clientNotification<ClearSchemaParams>('queryPlanInspector/clearSchema');
export interface ClearSchemaParams {
  uris?: string[];
}

/**
 * Notification, server -> client: queries of a document whose folder has a connection, for which the
 * server has no advice from the extension's advice service yet (each text once, until ClearAdvice or a
 * changed index list). The extension asks its advice service (the same one the plan panel, Verify and
 * the CLI use) and answers with `advice`, so the lens, the squiggles and the hover give the panel's verdict.
 * Until the answer comes, the lens says the indexes are being checked rather than guess.
 */
export const AdviceWanted = serverNotification<AdviceWantedParams>('queryPlanInspector/adviceWanted');
export interface AdviceWantedParams {
  uri: string;
  queries: { engine: 'mongodb' | 'postgres'; text: string }[];
}

/**
 * Request, client -> server: the advice service's answers for queries (by their text, as in
 * AdviceWanted), or why there is none (the server then falls back to its own rules). The server stores
 * them for these documents, republishes their diagnostics and asks the editor to redraw the lenses.
 */
export const SetAdvice = clientRequest<SetAdviceParams, void>('queryPlanInspector/advice');
export interface SetAdviceParams {
  uris: string[];
  connectionName: string;
  entries: { engine: 'mongodb' | 'postgres'; text: string; advice?: Advice; error?: string }[];
}

/**
 * Notification, client -> server: the advice of these documents (all when `uris` is absent) is stale
 * (an index was built, Refresh Connections): drop it and the background plans, and ask again.
 */
export const ClearAdvice = clientNotification<ClearAdviceParams>('queryPlanInspector/clearAdvice');
export interface ClearAdviceParams {
  uris?: string[];
}

/**
 * Notification, server -> client: a document hit a per-file cap (longer than `limit` characters: not
 * read; more than `limit` queries: only the first `limit` analysed), or `cap: null` when it is under
 * them again. Sent once per document and cap; the extension says it in the Output log and the status bar.
 */
export const CapReached = serverNotification<CapReachedParams>('queryPlanInspector/capReached');
export interface CapReachedParams {
  uri: string;
  cap: 'characters' | 'queries' | null;
  limit?: number;
  /** The document's characters or queries. */
  size?: number;
}

/**
 * Request, client -> server: the queries found in a document with their positions, for the extension's
 * tests and the "Explain" command. Answers from the server's cache, where a query's advice (its
 * `createText`) is computed if no hover, lens or code action asked for it before.
 */
export const ListQueries = clientRequest<ListQueriesParams, ListedQuery[]>('queryPlanInspector/queries');
export interface ListQueriesParams {
  uri: string;
}
/**
 * A query of the document as Explain runs it (the core's QueryTarget: offsets, the text to explain with
 * constants resolved, a title, or why it cannot be explained as written): the extension's Explain at the
 * cursor picks from these, the same queries the server's Explain lens is drawn above.
 */
export interface ListedQuery extends QueryTarget {
  /** Collection or table names. */
  targets: string[];
  /** The index the advisor wants first, as text to run, if any. */
  createText?: string;
}

// ---- diagnostics --------------------------------------------------------------------------------------


/** A text edit in the document version the diagnostic was published for (LSP positions, 0-based). */
export interface DataEdit {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}

/**
 * The `data` of every diagnostic: what finds its finding again in the server's cached analysis (the query
 * and the code), from which code actions take the index to build, the fix's edits and the rewrite. A
 * diagnostic of an older version whose query moved finds nothing, so no action is offered for it.
 */
export interface DiagnosticData {
  code: DiagnosticCode;
  /** The query the diagnostic belongs to, as document offsets. */
  query: { start: number; end: number };
}

// ---- commands the server's code actions and lenses run on the client ----------------------------------

/** Command ids the server puts in code actions and lenses; the extension registers them. */
export const ClientCommands = {
  /** Opens the plan of the query at [start, end) (the extension's Explain Query). Args: ExplainAtArgs. */
  explainQueryAt: 'queryPlanInspector.explainQueryAt',
  /**
   * Explains a query the server found: through explainQueryAt when the extension's own finder sees it at
   * that place, else with the text the server read (constants resolved). Args: InlineExplainArgs.
   */
  explainInline: 'queryPlanInspector.explainInline',
  /** Copies text to the clipboard and says so. Args: { text: string; what: string }. */
  copyText: 'queryPlanInspector.copyText',
  /** Shows the exact index command and asks before anything runs. Args: CreateIndexArgs. */
  createIndex: 'queryPlanInspector.createIndex',
  /** Shows the index the query wants, with Copy and Create actions. Args: CreateIndexArgs. */
  suggestIndex: 'queryPlanInspector.suggestIndex',
} as const;

export interface ExplainAtArgs {
  uri: string;
  start: number;
  end: number;
}

export interface InlineExplainArgs extends ExplainAtArgs {
  engine: 'mongodb' | 'postgres';
  /** Shell notation or SQL to explain when the extension's finder does not see the query at [start, end). */
  text?: string;
  /** Why the query cannot be explained as written (values from the code), one sentence. */
  problem?: string;
}

export interface CreateIndexArgs {
  uri: string;
  engine: 'mongodb' | 'postgres';
  createText: string;
  target: string;
  /** One sentence: why this index. */
  reason?: string;
  /** MongoDB: the database named in the code (`client.db('x')`), when it names one. */
  database?: string;
  /**
   * MongoDB: `target` is one collection of this family (`app_users*`), chosen on the server; the index is
   * built on it only, and the confirmation names the others.
   */
  family?: { name: string; others: string[] };
}
