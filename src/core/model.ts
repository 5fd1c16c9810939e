// The one plan model both engines are read into. Every parser produces a `Plan`; every consumer
// (findings, advice, the webview, the CLI, compare) reads only this. Raw server fields stay verbatim in
// `PlanNode.raw`; the typed fields beside them are normalised copies, and the derived ones (exclusive
// time, totals, maxima, estimate factors) are computed once by `derive()` in metrics.ts.

import { formatCount } from './format';

export type Engine = 'mongodb' | 'postgres';

/** How the text was written, as detected. */
export type PlanFormat =
  | 'mongodb-json'
  | 'mongodb-shell'
  | 'postgres-json'
  | 'postgres-text'
  | 'postgres-yaml'
  | 'postgres-xml';

/** PostgreSQL buffer counters of one node (as printed, i.e. totals over all loops). */
export interface Buffers {
  sharedHit?: number;
  sharedRead?: number;
  sharedDirtied?: number;
  sharedWritten?: number;
  localHit?: number;
  localRead?: number;
  localDirtied?: number;
  localWritten?: number;
  tempRead?: number;
  tempWritten?: number;
  /** I/O timings in milliseconds (shared+local unless split below). */
  ioReadTimeMs?: number;
  ioWriteTimeMs?: number;
  tempIoReadTimeMs?: number;
  tempIoWriteTimeMs?: number;
}

/** Per-worker figures of a parallel PostgreSQL node, as printed. */
export interface WorkerStats {
  worker: number;
  actualRows?: number;
  actualTotalTimeMs?: number;
  loops?: number;
  buffers?: Buffers;
  sortMethod?: string;
  sortSpaceKb?: number;
  sortSpaceType?: string;
}

/**
 * The normalised numbers of one node. Every field is optional: a plan holds only what its server and
 * verbosity printed, and absent means "not reported", never zero.
 */
export interface NodeMetrics {
  // ---- both engines -------------------------------------------------------------------------
  /** Rows/documents this node produced in total (PG: actual rows x loops; MongoDB: nReturned). */
  rowsReturned?: number;
  /** Time including children, in ms (PG: actual total time x loops; MongoDB: executionTimeMillisEstimate). */
  inclusiveTimeMs?: number;
  /** Time spent in this node alone; set by derive(). */
  exclusiveTimeMs?: number;
  /** Planned rows in the same unit as rowsReturned (PG: Plan Rows x loops). */
  plannedRows?: number;
  /** max(actual/planned, planned/actual), with zero treated as one; set by derive(). */
  estimateFactor?: number;
  /** 'under' when the planner expected fewer rows than came; set by derive(). */
  estimateDirection?: 'under' | 'over' | 'exact';
  /**
   * PostgreSQL: what reads this node may stop before it is done (a Limit above it, either side of a Merge
   * Join, a semi or anti join, a WindowAgg with a Run Condition, a subplan; not below a node that reads
   * all its input first, such as a Sort or a Hash), so its planned rows count the whole result and fewer
   * actual rows are no misestimate: derive() then gives no over-estimate for it.
   */
  stoppedEarly?: boolean;
  /** True when the node never ran (PG "never executed", Actual Loops 0). */
  neverExecuted?: boolean;

  // ---- MongoDB ------------------------------------------------------------------------------
  keysExamined?: number;
  docsExamined?: number;
  seeks?: number;
  works?: number;
  advanced?: number;
  needTime?: number;
  needYield?: number;
  isEOF?: boolean;
  dupsTested?: number;
  dupsDropped?: number;
  /** SORT stage: bytes and whether it spilled. */
  memUsageBytes?: number;
  usedDisk?: boolean;
  /** SKIP/LIMIT amounts. */
  skipAmount?: number;
  limitAmount?: number;

  // ---- PostgreSQL ---------------------------------------------------------------------------
  /** Actual rows per loop as printed (fractional on PG 18). */
  actualRowsPerLoop?: number;
  loops?: number;
  planRowsPerLoop?: number;
  startupCost?: number;
  totalCost?: number;
  actualStartupTimeMs?: number;
  /** Actual total time per loop as printed. */
  actualTotalTimeMs?: number;
  /** "Rows Removed by ..." as printed: an average per loop (multiply by loops for the total). */
  rowsRemovedByFilter?: number;
  rowsRemovedByJoinFilter?: number;
  rowsRemovedByIndexRecheck?: number;
  /** Heap Fetches and Index Searches are totals over all loops, as printed. */
  heapFetches?: number;
  indexSearches?: number;
  buffers?: Buffers;
  sortMethod?: string;
  sortSpaceKb?: number;
  sortSpaceType?: string;
  /** Hash: batches actually used and originally planned; HashAggregate spill. */
  hashBatches?: number;
  originalHashBatches?: number;
  hashBuckets?: number;
  diskUsageKb?: number;
  peakMemoryKb?: number;
  workersPlanned?: number;
  workersLaunched?: number;
  workers?: WorkerStats[];
  exactHeapBlocks?: number;
  lossyHeapBlocks?: number;
  walRecords?: number;
  walFpi?: number;
  walBytes?: number;
  /** Shared hit+read of this node minus its children's (PG buffers are inclusive); set by derive(). */
  exclusiveSharedBlocks?: number;
  /**
   * What this node read that the query then threw away, charged to the node that did the reading; set
   * by derive(). MongoDB: keys or documents examined beyond what survived the filtering stages above
   * (a collection scan under `$project` + `$match` is charged for what `$match` dropped). PostgreSQL:
   * rows removed by a filter, join filter or recheck, times loops. Absent when the node reads nothing.
   */
  wastedReads?: number;
}

/** Descriptive (non-numeric) facts of a node, normalised across server versions. */
export interface NodeDetails {
  /** MongoDB: index name; PG: Index Name. */
  indexName?: string;
  /** MongoDB keyPattern, in key order. */
  keyPattern?: Record<string, number | string>;
  /** MongoDB indexBounds, field -> list of interval strings. */
  indexBounds?: Record<string, string[]>;
  isMultiKey?: boolean;
  multiKeyPaths?: Record<string, string[]>;
  /** MongoDB scan direction ('forward'/'backward'); PG Scan Direction. */
  direction?: string;
  /** MongoDB stage filter (verbatim object). */
  filter?: unknown;
  /** MongoDB SORT pattern. */
  sortPattern?: Record<string, number | string>;
  /** PG relation, schema, alias. */
  relationName?: string;
  schema?: string;
  alias?: string;
  /** PG Join Type, Strategy, Operation, Parent Relationship, Subplan Name, CTE Name, Function Name. */
  joinType?: string;
  strategy?: string;
  operation?: string;
  parentRelationship?: string;
  subplanName?: string;
  cteName?: string;
  /** PG conditions as printed: Filter, Index Cond, Recheck Cond, Join Filter, Hash Cond, Merge Cond, ... */
  conditions?: Record<string, string>;
  /** PG Sort Key / Group Key / Presorted Key lists. */
  sortKey?: string[];
  groupKey?: string[];
  presortedKey?: string[];
  /** PG VERBOSE Output list. */
  output?: string[];
  parallelAware?: boolean;
  /** MongoDB shard name when this node is a shard's plan root. */
  shardName?: string;
}

export interface PlanNode {
  /** Preorder position in the drawn tree, 0 for the root; unique within one Plan. */
  id: number;
  /** Stage or node type as the server names it: 'IXSCAN', '$group', 'Index Scan', 'Hash Join'. */
  kind: string;
  /** One-line label for display: 'IXSCAN { a: 1, b: -1 }', 'Index Scan using i on t'. */
  label: string;
  /** How this node hangs off its parent: 'inputStage', 'Outer', 'Inner', 'InitPlan', 'SubPlan', 'shard'... */
  role?: string;
  children: PlanNode[];
  metrics: NodeMetrics;
  details: NodeDetails;
  /** The node's own fields exactly as the server printed them (children removed). */
  raw: Record<string, unknown>;
}

/** A MongoDB candidate plan the planner rejected, with its trial figures when executed. */
export interface RejectedPlan {
  /** Position in rejectedPlans, 0-based. */
  index: number;
  /** Shard the candidate belongs to, for sharded plans. */
  shardName?: string;
  root: PlanNode;
  /** Trial figures from allPlansExecution, when present. */
  trial?: { nReturned?: number; keysExamined?: number; docsExamined?: number; works?: number; score?: number };
  /** Maxima of this candidate's own tree, for drawing it alone; set by derive(). */
  maxima?: PlanMaxima;
}

export interface PlanTotals {
  /** MongoDB: whole-plan executionStats figures (summed over shards). */
  keysExamined?: number;
  docsExamined?: number;
  nReturned?: number;
  /** Both: MongoDB executionTimeMillis; PostgreSQL Execution Time footer. */
  executionTimeMs?: number;
  /** PostgreSQL: Planning Time footer and the root's rows. */
  planningTimeMs?: number;
  rows?: number;
  /** Sum over nodes of exclusive shared/local/temp buffers, as reported at the root (buffers are inclusive). */
  buffers?: Buffers;
  jitTimeMs?: number;
  triggerTimeMs?: number;
}

/** Plan-wide maxima of the metrics the view colours by; set by derive(). */
export interface PlanMaxima {
  exclusiveTimeMs: number;
  rowsReturned: number;
  keysExamined: number;
  docsExamined: number;
  sharedBlocks: number;
  estimateFactor: number;
  wastedReads: number;
}

export interface MongoMeta {
  explainVersion?: string;
  verbosity?: 'queryPlanner' | 'executionStats' | 'allPlansExecution';
  namespace?: string;
  command?: unknown;
  parsedQuery?: unknown;
  /** 'classic' or 'sbe' (slot-based engine). */
  engineKind?: 'classic' | 'sbe';
  /** The slot-based plan kept verbatim (not drawn). */
  slotBasedPlan?: unknown;
  /** The slot-based executionStages tree kept verbatim; its figures are mapped onto the drawn queryPlan by planNodeId. */
  slotBasedExecutionStages?: unknown;
  sharded?: boolean;
  /** Aggregation pipeline stage names in order, when the explain came from aggregate. */
  pipeline?: string[];
  /** Plan cache / query hash for identification. */
  queryHash?: string;
  planCacheKey?: string;
}

export interface PostgresMeta {
  planningTimeMs?: number;
  executionTimeMs?: number;
  /** ANALYZE was used (actual figures present). */
  analyzed?: boolean;
  buffersReported?: boolean;
  settings?: Record<string, string>;
  jit?: { functions?: number; timingMs?: Record<string, number>; options?: Record<string, boolean> };
  triggers?: { name: string; relation?: string; timeMs?: number; calls?: number }[];
  queryText?: string;
  queryIdentifier?: string;
  planningBuffers?: Buffers;
  serialization?: Record<string, unknown>;
  planningMemory?: Record<string, unknown>;
}

export interface Plan {
  engine: Engine;
  format: PlanFormat;
  /** Server version when the output says it (MongoDB serverInfo), else undefined. */
  serverVersion?: string;
  root: PlanNode;
  /** All nodes of the drawn tree in preorder; nodes[i].id === i. Set by derive(). */
  nodes: PlanNode[];
  rejectedPlans: RejectedPlan[];
  totals: PlanTotals;
  maxima: PlanMaxima;
  mongo?: MongoMeta;
  postgres?: PostgresMeta;
  /** Things the reader skipped or guessed, each one sentence. */
  warnings: string[];
}

/** The result of reading a text: a plan, or a refusal in one sentence. Never an exception. */
export type LoadResult =
  | { ok: true; plan: Plan }
  | { ok: false; refusal: string };

export type Severity = 'high' | 'medium' | 'low' | 'info';

/**
 * A finding about a plan. `code` is stable (documented in docs/findings.md), tools key on it.
 * `good` marks a finding that reports something done right (e.g. explode-for-sort).
 */
export interface Finding {
  code: string;
  severity: Severity;
  good?: boolean;
  /** The node the finding belongs to, by PlanNode.id; absent for whole-plan findings. */
  nodeId?: number;
  title: string;
  /** Plain-words explanation, one to three sentences, with the numbers. */
  message: string;
  /** The figures the message quotes, keyed by name. */
  numbers: Record<string, number>;
}

/**
 * Most plan nodes a text may hold. Text formats are counted from their node marks before any reader
 * runs; a JSON document, already parsed in linear time, is counted by its reader as it builds the tree.
 */
export const MAX_PLAN_NODES = 100_000;

/** The refusal of a plan past MAX_PLAN_NODES. */
export const TOO_MANY_NODES = `The plan has more than ${formatCount(MAX_PLAN_NODES)} nodes, more than this reader takes.`;

export function emptyMaxima(): PlanMaxima {
  return { exclusiveTimeMs: 0, rowsReturned: 0, keysExamined: 0, docsExamined: 0, sharedBlocks: 0, estimateFactor: 1, wastedReads: 0 };
}

/**
 * Builds a node, with empty metrics/details unless the reader has them ready; parsers fill the rest.
 * `id` is renumbered by derive().
 */
export function makeNode(kind: string, label: string, raw: Record<string, unknown>, role?: string, metrics: NodeMetrics = {}, details: NodeDetails = {}): PlanNode {
  const node: PlanNode = { id: -1, kind, label, children: [], metrics, details, raw };
  if (role !== undefined) node.role = role;
  return node;
}
