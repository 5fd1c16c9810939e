// The extension's one seam to the database adapters: what it asks of a live server. The adapter-backed
// implementation is in adapterGateway.ts; keeping the extension's needs in this small interface keeps
// the commands independent of driver details and lets tests substitute a gateway.

import type { LiveAdvice } from '../adapters/advise';
import type { MeasureStep } from '../adapters/adviceService';
import type { FamilyMember, Plan } from '../core/index';
import type { ExplainVerbosity, MongoCommand } from '../core/index';
import type { ConnectionEngine } from './connections/spec';

export interface ExplainRequest {
  engine: ConnectionEngine;
  /** The connection's id: the advice service keys its answers by it. */
  connectionId: string;
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
  /** PostgreSQL: the user agreed to run what the rollback does not undo (asked after a 'side-effects' refusal). */
  allowSideEffects?: boolean;
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
  /** Where the time went, in milliseconds: opening the session, the explain itself. */
  steps?: { connectMs: number; explainMs: number };
  /** PostgreSQL: the explain's own parts, in the order they ran (the adapter's `phases`). */
  phases?: { label: string; ms: number }[];
}

/** The live advice on the explain's session, which comes after the plan (the panel shows the plan first). */
export interface AdviceOutcome {
  /**
   * The live advisor's answer on the same connection (the indexes that exist, bounded selectivity),
   * not verified yet: verification waits for the user's Verify. Absent when the advisor failed.
   */
  advice?: LiveAdvice;
  /** Why there is no advice, one sentence; the plan is shown anyway. */
  adviceError?: string;
  /** The advisor's time on the session, in milliseconds. */
  adviseMs: number;
}

/** A measurement of a suggestion shown in the plan panel (its Verify button, or at once after an explain). */
export interface MeasureRequest {
  engine: ConnectionEngine;
  /** The URI to connect with, password included; never logged. */
  uri: string;
  /** The query as written (the SQL statement PostgreSQL explains). */
  text: string;
  /** MongoDB: the parsed command the measurement runs on the sample. */
  command?: MongoCommand;
  /** The advice the panel shows; its suggestions' verification is filled in place. */
  live: LiveAdvice;
  /** Rank of the suggestion asked for: the check includes it. */
  rank: number;
  /** MongoDB: documents copied to the scratch collection. */
  sampleSize: number;
  timeoutMs: number;
  connectTimeoutMs: number;
  /** MongoDB: called at each step of the measurement (the user has already agreed to it). */
  onStep?: (step: MeasureStep) => void;
  /**
   * PostgreSQL: asked when the suggestion can be checked only by building it inside a rolled-back
   * transaction (no HypoPG, or a kind of index HypoPG cannot simulate); true lets it build.
   */
  confirmBuild?: (tables: string[], hypopgInstalled: boolean) => Promise<boolean>;
}

export interface MeasureOutcome {
  /** The user declined the rolled-back build: nothing ran. */
  declined: boolean;
  /** Sentences of this measurement (how it was done, what was skipped), and warnings (a scratch collection left behind). */
  notes: string[];
  warnings: string[];
}

export interface RunningMeasure {
  done: Promise<MeasureOutcome>;
  /** Stops the work on the server; a MongoDB measurement's scratch collection is dropped anyway. */
  cancel(): void;
}

export interface RunningExplain {
  /** Settles as soon as the plan exists. */
  done: Promise<ExplainOutcome>;
  /**
   * Settles once the advisor has answered on the same session, after `done` (the session closes then);
   * rejected only when the explain failed or was cancelled. Absent: a gateway without an advisor.
   */
  advice?: Promise<AdviceOutcome>;
  /** Stops the work on the server (pg_cancel_backend / killOp), then the connection. */
  cancel(): Promise<void>;
}

export interface ServerInfo {
  serverVersion?: string;
  /** One sentence about the server (kind, compatible API, HypoPG...). */
  detail?: string;
}

/** The collections of a family (`app_users*`) a query names, asked for before Explain picks one of them. */
export interface FamilyRequest {
  /** The URI to connect with, password included; never logged. */
  uri: string;
  family: string;
  /** The database named in the code (`client.db('x')`); the URI's when absent. */
  database?: string;
  connectTimeoutMs: number;
}

export interface Gateway {
  test(engine: ConnectionEngine, uri: string, connectTimeoutMs: number): Promise<ServerInfo>;
  /** MongoDB: the family's collections on the server, largest first (core's FamilyMember). */
  familyCollections(request: FamilyRequest): Promise<FamilyMember[]>;
  /**
   * Explains on the connection's kept session; the advice follows on the same session once `planShown`
   * has settled (at once when absent), so none of its work comes between the plan and the panel.
   */
  explain(request: ExplainRequest, planShown?: Promise<void>): RunningExplain;
  /** Measures a suggestion of `request.live` through the advice service (the panel's Verify): every candidate on a copy, HypoPG or a rolled-back build for PostgreSQL; a sample in a scratch collection for MongoDB. */
  measure(request: MeasureRequest): RunningMeasure;
}
