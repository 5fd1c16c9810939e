// What the lock keeps of a plan: its signature (how each collection or table is reached, the indexes
// read, whether it sorts in memory) and the counters that do not depend on time or on the machine:
// PostgreSQL's estimated cost and rows (buffers only when the plan was analyzed), MongoDB's keys and
// documents examined per document returned. Time is never part of either.

import type { PlanSummary } from '../lint/codes';
import type { Plan, PlanNode } from '../model';

export type AccessKind = 'full-scan' | 'index-scan' | 'index-only' | 'bitmap' | 'id-lookup';

export interface AccessPath {
  /** The collection or table. */
  target: string;
  path: AccessKind;
  /** The index read, when one is. */
  index?: string;
}

export interface PlanSignature {
  /** Each collection or table the plan reads and how, sorted. */
  access: AccessPath[];
  /** Every index the plan reads, sorted. */
  indexes: string[];
  /** The plan sorts in memory (SORT / Sort / $sort). */
  blockingSort: boolean;
  /**
   * The advice on the query with the server's indexes: `serves` when an existing index already gives
   * the equality, sort and range fields in the order ESR asks, `improvable` when a better index is
   * advised although the plan reads one, `no-index` when the plan reads none and one is advised.
   */
  esr?: 'serves' | 'improvable' | 'no-index';
  /** Node kinds root first, for people reading the lock; not compared. */
  stages: string;
  /**
   * How the values the code gives at run time were planned, when the query takes some. PostgreSQL's $n
   * parameters: `generic plan` (EXPLAIN GENERIC_PLAN, 16 and later) or `bound from statistics` (values of
   * the compared columns' statistics). MongoDB's variables: `bound from data` (each a value of its field in
   * the CI database) or `stand-in values` (some field has no value there; mongoValues.ts).
   */
  parameters?: 'generic plan' | 'bound from statistics' | 'bound from data' | 'stand-in values';
}

export interface PlanCounters {
  /** PostgreSQL: the root's total estimated cost and rows. */
  cost?: number;
  rows?: number;
  /** PostgreSQL under ANALYZE, BUFFERS: shared blocks hit + read. */
  sharedBlocks?: number;
  /** MongoDB executionStats. */
  keysExamined?: number;
  docsExamined?: number;
  returned?: number;
  /** MongoDB: examined per document returned (per one when none is returned). */
  keysPerReturned?: number;
  docsPerReturned?: number;
}

const MONGO_INDEX_STAGES = new Set(['IXSCAN', 'EXPRESS_IXSCAN', 'COUNT_SCAN', 'DISTINCT_SCAN', 'CLUSTERED_IXSCAN']);
const MONGO_ID_STAGES = new Set(['IDHACK', 'EXPRESS_IDHACK', 'EXPRESS_CLUSTERED_IXSCAN']);
const SORT_KINDS = new Set(['SORT', 'Sort', '$sort']);

/** The signature of a plan; `collection` names what a MongoDB plan reads when its namespace does not. */
export function planSignature(plan: Plan, collection?: string): PlanSignature {
  const access: AccessPath[] = [];
  const indexes = new Set<string>();
  let blockingSort = false;
  const mongoTarget = plan.mongo?.namespace?.split('.').slice(1).join('.') || collection || 'collection';
  for (const n of plan.nodes) {
    if (SORT_KINDS.has(n.kind)) blockingSort = true;
    if (n.details.indexName !== undefined) indexes.add(n.details.indexName);
    const a = plan.engine === 'mongodb' ? mongoAccess(n, mongoTarget) : pgAccess(n);
    if (a) access.push(a);
  }
  access.sort((x, y) => cmp(x.target, y.target) || cmp(x.path, y.path) || cmp(x.index ?? '', y.index ?? ''));
  return { access, indexes: [...indexes].sort(cmp), blockingSort, stages: plan.nodes.map((n) => n.kind).join(' > ') };
}

function mongoAccess(n: PlanNode, target: string): AccessPath | undefined {
  if (n.kind === 'COLLSCAN') return { target, path: 'full-scan' };
  if (MONGO_ID_STAGES.has(n.kind)) return { target, path: 'id-lookup', ...(n.details.indexName ? { index: n.details.indexName } : {}) };
  if (MONGO_INDEX_STAGES.has(n.kind)) return { target, path: 'index-scan', ...(n.details.indexName ? { index: n.details.indexName } : {}) };
  return undefined;
}

function pgAccess(n: PlanNode): AccessPath | undefined {
  const target = n.details.relationName;
  if (target === undefined) return undefined;
  switch (n.kind) {
    case 'Seq Scan':
    case 'Parallel Seq Scan':
      return { target, path: 'full-scan' };
    case 'Index Scan':
      return { target, path: 'index-scan', ...(n.details.indexName ? { index: n.details.indexName } : {}) };
    case 'Index Only Scan':
      return { target, path: 'index-only', ...(n.details.indexName ? { index: n.details.indexName } : {}) };
    case 'Bitmap Heap Scan': {
      const used: string[] = [];
      const stack = [...n.children];
      while (stack.length > 0) {
        const c = stack.pop()!;
        if (c.details.indexName !== undefined) used.push(c.details.indexName);
        stack.push(...c.children);
      }
      return { target, path: 'bitmap', ...(used.length > 0 ? { index: used.sort(cmp).join('+') } : {}) };
    }
    default:
      return undefined;
  }
}

/** The counters of a plan, rounded so that a lock written twice is the same file. */
export function planCounters(plan: Plan): PlanCounters {
  const out: PlanCounters = {};
  if (plan.engine === 'postgres') {
    const m = plan.root.metrics;
    if (m.totalCost !== undefined) out.cost = round(m.totalCost);
    if (m.planRowsPerLoop !== undefined) out.rows = round(m.planRowsPerLoop);
    const b = plan.postgres?.analyzed ? plan.root.metrics.buffers : undefined;
    if (b && (b.sharedHit !== undefined || b.sharedRead !== undefined)) out.sharedBlocks = (b.sharedHit ?? 0) + (b.sharedRead ?? 0);
    return out;
  }
  const t = plan.totals;
  if (t.keysExamined !== undefined) out.keysExamined = t.keysExamined;
  if (t.docsExamined !== undefined) out.docsExamined = t.docsExamined;
  if (t.nReturned !== undefined) out.returned = t.nReturned;
  const per = Math.max(1, t.nReturned ?? 0);
  if (t.keysExamined !== undefined) out.keysPerReturned = round(t.keysExamined / per);
  if (t.docsExamined !== undefined) out.docsPerReturned = round(t.docsExamined / per);
  return out;
}

/** What the editor's findings need of a plan (the language server's background explain summary). */
export function planSummaryOf(sig: PlanSignature): PlanSummary {
  const full = sig.access.find((a) => a.path === 'full-scan');
  return { stages: sig.stages.split(' > '), blockingSort: sig.blockingSort, indexes: sig.indexes, ...(full ? { fullScan: full.target } : {}) };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
