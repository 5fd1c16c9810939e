// The extension's one seam to the database adapters: what it asks of a live server. The adapter-backed
// implementation is in adapterGateway.ts; keeping the extension's needs in this small interface keeps
// the commands independent of driver details and lets tests substitute a gateway.

import type { ExistingMongoIndex, ExistingPgIndex } from '../core/advice/types';
import type { Plan } from '../core/model';
import type { ExplainVerbosity, MongoCommand } from '../core/query/mongoShell';
import type { ConnectionEngine } from './connections/spec';

export interface ExplainRequest {
  engine: ConnectionEngine;
  /** The URI to connect with, password included; never logged. */
  uri: string;
  /** The query as written: mongo shell text or one SQL statement. */
  text: string;
  /** MongoDB: the parsed command. */
  command?: MongoCommand;
  verbosity: ExplainVerbosity;
  /** MongoDB: the user agreed that a $out/$merge pipeline may run. */
  allowWrites: boolean;
  analyze: boolean;
  buffers: boolean;
  timeoutMs: number;
  connectTimeoutMs: number;
}

export interface ExplainOutcome {
  plan: Plan;
  /** The server's answer as text (shown in the Raw tab, used by Compare). */
  rawText: string;
  serverVersion?: string;
  durationMs: number;
  /** PostgreSQL: the statement changed data and ran inside a transaction that was rolled back. */
  rolledBack?: boolean;
  /** Sentences the adapter wants the user to read (compatible-API server, verbosity lowered...). */
  notes: string[];
  /** The indexes that exist on the collection / in the database, for the advisor (absent when listing failed). */
  existing?: { mongodb?: ExistingMongoIndex[]; postgres?: ExistingPgIndex[] };
}

/** The outcome of checking a suggested PostgreSQL index without building it for real. */
export interface IndexCheck {
  method: 'hypopg' | 'trial-index';
  costBefore: number;
  costAfter: number;
  /** The index appears in the plan with it. */
  used: boolean;
}

export interface RunningExplain {
  done: Promise<ExplainOutcome>;
  /** Stops the work on the server (pg_cancel_backend / killOp), then the connection. */
  cancel(): Promise<void>;
}

export interface ServerInfo {
  serverVersion?: string;
  /** One sentence about the server (kind, compatible API, HypoPG...). */
  detail?: string;
}

export interface Gateway {
  test(engine: ConnectionEngine, uri: string, connectTimeoutMs: number): Promise<ServerInfo>;
  explain(request: ExplainRequest): RunningExplain;
  /** PostgreSQL: plain EXPLAIN of the statement without and with a hypothetical (HypoPG) or rolled-back index. */
  checkIndex(uri: string, sql: string, createIndex: string, allowTrialBuild: boolean, timeoutMs: number): Promise<IndexCheck>;
}
