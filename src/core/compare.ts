// Two plans of one engine side by side: which nodes correspond, what changed in each, how the
// whole-plan figures moved, which findings appeared or went away, and a one-line verdict.
//
// Matching. Nodes are paired by a constrained ordered tree edit distance (Zhang, "A constrained edit
// distance between unordered labeled trees", 1996, in its ordered form): deleting or inserting a node
// costs 1 and lifts its children into its parent's place, pairing two nodes costs what tells them apart
// (`pairCost`), and a mapping must keep disjoint subtrees disjoint. That is what plans need: a SORT that
// disappears is one deletion, an IXSCAN that replaces a COLLSCAN on the same collection is one cheap
// pairing, a FETCH that appears above it is one insertion, and a join keeps the tables it joins. The
// table of subtree and forest distances takes O(|before| x |after|) time and memory; the two children
// of a join may also pair crosswise, because the planner swaps the sides of a hash join when estimates
// move. Plans whose product of sizes exceeds MAX_CELLS are matched top-down instead (roots, then
// children aligned by the same pair cost, one level of inserted or removed node tolerated), and the
// comparison says so in its notes.
//
// Pairs whose cost says they are different things (different tables, unrelated kinds) are never
// reported as pairs: the before node is "removed" and the after node "added".

import { analyze } from './findings/index';
import { formatCount, formatKb, formatMs, formatRatio, plural } from './format';
import { walk } from './metrics';
import type { Engine, Finding, Plan, PlanNode } from './model';

export type NodeStatus = 'unchanged' | 'changed' | 'added' | 'removed';

/** Which way a difference goes for the reader: less work is better; rows returned are neither. */
export type Trend = 'better' | 'worse' | 'same' | 'neutral';

export type DeltaUnit = 'count' | 'ms' | 'blocks' | 'kb' | 'bytes' | 'cost';

export interface MetricDelta {
  /** Stable key: 'keysExamined', 'docsExamined', 'returned', 'executionTime', 'sharedBlocks', ... */
  key: string;
  /** Words for a table row: 'keys examined'. */
  label: string;
  unit: DeltaUnit;
  /** Absent when that side did not report the figure. */
  before?: number;
  after?: number;
  /** after / before, when both are positive. */
  factor?: number;
  /** Large enough to mention: above the metric's noise floor both in ratio and in absolute terms. */
  material: boolean;
  trend: Trend;
}

/** A yes/no property of a whole plan: it sorts in memory, it spills to disk, it scans a collection. */
export interface FlagDelta {
  key: 'blockingSort' | 'sort' | 'spill' | 'collectionScan' | 'seqScan';
  label: string;
  before: boolean;
  after: boolean;
  trend: Trend;
}

export interface NodeComparison {
  status: NodeStatus;
  /** The node in the before plan (its PlanNode.id); absent for an added node. */
  beforeId?: number;
  /** The node in the after plan; absent for a removed node. */
  afterId?: number;
  /** The after node's kind, or the before node's for a removed node. */
  kind: string;
  /** What tells the pair apart besides figures, as short phrases: 'Seq Scan → Index Scan'. */
  differences: string[];
  /** Figures reported on either side that differ; `material` marks those worth showing. */
  deltas: MetricDelta[];
}

export interface FindingsDelta {
  /** Findings of the after plan whose code the before plan did not have. */
  appeared: Finding[];
  /** Findings of the before plan whose code the after plan no longer has. */
  disappeared: Finding[];
  /** Codes both plans have. */
  kept: string[];
}

export interface ComparedPlans {
  ok: true;
  engine: Engine;
  /** One entry per pair, added node and removed node, in a merged preorder of both trees. */
  nodes: NodeComparison[];
  /** For each before node id, the index of its entry in `nodes`. */
  beforeEntry: number[];
  /** For each after node id, the index of its entry in `nodes`. */
  afterEntry: number[];
  counts: Record<NodeStatus, number>;
  totals: MetricDelta[];
  flags: FlagDelta[];
  findings: FindingsDelta;
  /** Where the whole plan went, as the verdict says it; 'unmeasured' when the shapes differ but a side has no figures. */
  direction: 'better' | 'worse' | 'mixed' | 'same' | 'unmeasured';
  /** One sentence: "After reads 10 keys instead of 1,020 (102x fewer) and no longer sorts in memory." */
  verdict: string;
  /** Sentences about what limits the comparison: different queries, different results, missing figures. */
  notes: string[];
  /** How the nodes were matched (see the top of this file). */
  matching: 'edit-distance' | 'top-down';
}

export interface RefusedComparison {
  ok: false;
  refusal: string;
}

export type PlanComparison = ComparedPlans | RefusedComparison;

export interface CompareOptions {
  /** Findings already computed for the plans (the view receives them); computed here otherwise. */
  beforeFindings?: Finding[];
  afterFindings?: Finding[];
}

/** Largest |before| x |after| matched by edit distance: 24 bytes a cell, about 24 MB at the limit. */
export const MAX_CELLS = 1_000_000;

/** A pair cost at or above this means "not the same node": deleting and inserting cost 2. */
const DIFFERENT = 2;
const INCOMPATIBLE = 2.5;
const EPS = 1e-9;

// ---- the trees as arrays --------------------------------------------------------------------------

interface Indexed {
  nodes: PlanNode[];
  children: number[][];
  size: number[];
  /** Objects (tables, collections, shards) read under each node, for telling joins apart. */
  objects: Set<string>[];
  /** Each node's settings (see `settingsOf`) serialised once, compared by string. */
  settings: string[][];
}

function indexTree(root: PlanNode, engine: Engine): Indexed {
  const nodes: PlanNode[] = [];
  const children: number[][] = [];
  const parent: number[] = [];
  // The positions of the current node's ancestors by depth: in preorder they are the last ones numbered.
  const path: number[] = [];
  walk(root, (n, _parent, depth) => {
    const pos = nodes.length;
    const p = depth > 0 ? path[depth - 1]! : -1;
    path[depth] = pos;
    nodes.push(n);
    children.push([]);
    parent.push(p);
    if (p >= 0) children[p]!.push(pos);
  });
  const size = new Array<number>(nodes.length).fill(1);
  const objects: Set<string>[] = nodes.map((n) => {
    const o = objectOf(n, engine);
    return o === undefined ? new Set<string>() : new Set([o]);
  });
  // Children follow their parent in preorder, so a backward pass sees every child before its parent.
  for (let i = nodes.length - 1; i > 0; i--) {
    const p = parent[i]!;
    size[p]! += size[i]!;
    if (objects[p]!.size < 64) for (const o of objects[i]!) objects[p]!.add(o);
  }
  return { nodes, children, size, objects, settings: nodes.map(settingsOf) };
}

// ---- what a node is -------------------------------------------------------------------------------

const MONGO_FAMILIES: Record<string, string> = {};
const PG_FAMILIES: Record<string, string> = {};
function families(target: Record<string, string>, family: string, kinds: string[]): void {
  for (const k of kinds) target[k] = family;
}
families(MONGO_FAMILIES, 'access', [
  'COLLSCAN', 'IXSCAN', 'IDHACK', 'EXPRESS_IXSCAN', 'EXPRESS_IDHACK', 'EXPRESS_CLUSTERED_IXSCAN', 'CLUSTERED_IXSCAN',
  'COUNT_SCAN', 'DISTINCT_SCAN', 'GEO_NEAR_2D', 'GEO_NEAR_2DSPHERE', 'TEXT_MATCH', 'EOF', 'VIRTUAL_SCAN',
]);
families(MONGO_FAMILIES, 'sort', ['SORT', '$sort', 'SORT_KEY_GENERATOR']);
families(MONGO_FAMILIES, 'merge', ['SORT_MERGE', 'OR', 'AND_SORTED', 'AND_HASH', 'SHARD_MERGE', 'SHARD_MERGE_SORT', '$mergeCursors']);
families(MONGO_FAMILIES, 'limit', ['LIMIT', 'SKIP', '$limit', '$skip']);
families(MONGO_FAMILIES, 'project', ['PROJECTION', 'PROJECTION_DEFAULT', 'PROJECTION_SIMPLE', 'PROJECTION_COVERED', '$project', '$addFields', '$set', '$unset', '$replaceRoot']);
families(MONGO_FAMILIES, 'group', ['GROUP', '$group', '$bucket', '$bucketAuto', 'COUNT', '$count']);
families(MONGO_FAMILIES, 'lookup', ['$lookup', 'EQ_LOOKUP', '$graphLookup']);
families(PG_FAMILIES, 'access', ['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan', 'Tid Scan', 'Tid Range Scan', 'Sample Scan', 'Foreign Scan']);
families(PG_FAMILIES, 'bitmap', ['Bitmap Index Scan', 'BitmapAnd', 'BitmapOr']);
families(PG_FAMILIES, 'join', ['Nested Loop', 'Hash Join', 'Merge Join']);
families(PG_FAMILIES, 'aggregate', ['Aggregate', 'HashAggregate', 'GroupAggregate', 'Group', 'Unique']);
families(PG_FAMILIES, 'sort', ['Sort', 'Incremental Sort']);
families(PG_FAMILIES, 'append', ['Append', 'Merge Append']);
families(PG_FAMILIES, 'gather', ['Gather', 'Gather Merge']);
families(PG_FAMILIES, 'buffer', ['Materialize', 'Memoize']);

function familyOf(kind: string, engine: Engine): string {
  return (engine === 'mongodb' ? MONGO_FAMILIES : PG_FAMILIES)[kind] ?? kind;
}

function str(x: unknown): string | undefined {
  return typeof x === 'string' && x !== '' ? x : undefined;
}

/** The table, CTE, function, joined collection or shard a node works on, when it names one. */
function objectOf(n: PlanNode, engine: Engine): string | undefined {
  const d = n.details;
  if (engine === 'postgres') {
    if (d.relationName) return `table ${d.relationName}`;
    if (d.cteName) return `cte ${d.cteName}`;
    const fn = str(n.raw['Function Name']);
    return fn ? `function ${fn}` : undefined;
  }
  if (d.shardName) return `shard ${d.shardName}`;
  if ((n.kind === '$lookup' || n.kind === '$unionWith' || n.kind === '$graphLookup') && n.label !== n.kind) return n.label;
  return undefined;
}

function indexOf(n: PlanNode): string | undefined {
  return n.details.indexName ?? (n.details.keyPattern ? JSON.stringify(n.details.keyPattern) : undefined);
}

/** The node's kind as the cards title it ("HashAggregate" for a hashed Aggregate). */
function kindLabel(n: PlanNode, engine: Engine): string {
  if (engine === 'postgres' && n.kind === 'Aggregate') {
    const s: Record<string, string> = { Hashed: 'HashAggregate', Sorted: 'GroupAggregate', Mixed: 'MixedAggregate' };
    const t = n.details.strategy ? s[n.details.strategy] : undefined;
    if (t) return t;
  }
  return n.kind;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Settings of a node that do not make it another node but make it do other work. */
function settingsOf(n: PlanNode): string[] {
  const d = n.details;
  return [d.direction, d.indexBounds, d.filter, d.sortPattern, d.sortKey, d.groupKey, d.joinType, d.strategy, d.conditions].map((x) => (x === undefined ? '' : JSON.stringify(x)));
}

/**
 * What it costs to call `a` and `b` the same node: 0 for the same kind on the same object with the same
 * settings, under 1 for a node that does the same job differently (an index scan for a scan of the same
 * table), INCOMPATIBLE for different objects or unrelated kinds.
 */
function pairCost(A: Indexed, i: number, B: Indexed, j: number, engine: Engine): number {
  const a = A.nodes[i]!;
  const b = B.nodes[j]!;
  let cost = 0;
  if (a.kind !== b.kind) {
    if (familyOf(a.kind, engine) !== familyOf(b.kind, engine)) return INCOMPATIBLE;
    cost += 0.6;
  }
  const oa = objectOf(a, engine);
  const ob = objectOf(b, engine);
  if (oa !== undefined && ob !== undefined && oa !== ob) return INCOMPATIBLE;
  if ((oa === undefined) !== (ob === undefined)) cost += 0.3;
  const da = a.details;
  const db = b.details;
  if (da.alias !== undefined && db.alias !== undefined && da.alias !== db.alias) cost += 0.4;
  if (da.subplanName !== db.subplanName) cost += 0.3;
  const ia = indexOf(a);
  const ib = indexOf(b);
  if (ia !== ib) cost += ia !== undefined && ib !== undefined ? 0.3 : 0.15;
  if (a.role !== b.role) cost += 0.1;
  if (a.children.length > 0 || b.children.length > 0) cost += 0.4 * jaccardDistance(A.objects[i]!, B.objects[j]!);
  const ka = A.settings[i]!;
  const kb = B.settings[j]!;
  let settings = 0;
  for (let k = 0; k < ka.length; k++) if (ka[k] !== kb[k]) settings++;
  cost += Math.min(0.2, 0.05 * settings);
  return Math.min(cost, DIFFERENT - 0.05);
}

function jaccardDistance(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let both = 0;
  for (const x of a) if (b.has(x)) both++;
  return 1 - both / (a.size + b.size - both);
}

// ---- matching -------------------------------------------------------------------------------------

type Cost = (i: number, j: number) => number;

/** Pairs by constrained ordered tree edit distance; returns the partner in B of each node of A, or -1. */
function editMatch(A: Indexed, B: Indexed, cost: Cost): Int32Array {
  const n1 = A.nodes.length;
  const n2 = B.nodes.length;
  const DT = new Float64Array(n1 * n2);
  const DF = new Float64Array(n1 * n2);
  const CT = new Int32Array(n1 * n2);
  const CF = new Int32Array(n1 * n2);
  let maxDeg = 1;
  for (const c of A.children) maxDeg = Math.max(maxDeg, c.length);
  let maxDeg2 = 1;
  for (const c of B.children) maxDeg2 = Math.max(maxDeg2, c.length);
  const scratch = new Float64Array((maxDeg + 1) * (maxDeg2 + 1));

  // Children have larger preorder positions than their parent: a backward sweep fills both tables.
  for (let i = n1 - 1; i >= 0; i--) {
    const ci = A.children[i]!;
    for (let j = n2 - 1; j >= 0; j--) {
      const cj = B.children[j]!;
      const k = i * n2 + j;
      let df: number;
      let cf = 0;
      if (ci.length === 0 || cj.length === 0) {
        df = A.size[i]! - 1 + B.size[j]! - 1;
      } else {
        df = alignForests(A, B, ci, cj, DT, n2, scratch);
        if (ci.length === 2 && cj.length === 2) {
          const swapped = DT[ci[0]! * n2 + cj[1]!]! + DT[ci[1]! * n2 + cj[0]!]!;
          if (swapped < df - EPS) {
            df = swapped;
            cf = 1;
          }
        }
        // The children of i map inside one child of j (j's other children inserted), or the reverse.
        const insJ = B.size[j]! - 1;
        for (let t = 0; t < cj.length; t++) {
          const v = insJ - (B.size[cj[t]!]! - 1) + DF[i * n2 + cj[t]!]!;
          if (v < df - EPS) {
            df = v;
            cf = 2 + 2 * t;
          }
        }
        const delI = A.size[i]! - 1;
        for (let s = 0; s < ci.length; s++) {
          const v = delI - (A.size[ci[s]!]! - 1) + DF[ci[s]! * n2 + j]!;
          if (v < df - EPS) {
            df = v;
            cf = 3 + 2 * s;
          }
        }
      }
      DF[k] = df;
      CF[k] = cf;
      let dt = df + cost(i, j);
      let ct = 0;
      for (let t = 0; t < cj.length; t++) {
        const v = B.size[j]! - B.size[cj[t]!]! + DT[i * n2 + cj[t]!]!;
        if (v < dt - EPS) {
          dt = v;
          ct = 2 + 2 * t;
        }
      }
      for (let s = 0; s < ci.length; s++) {
        const v = A.size[i]! - A.size[ci[s]!]! + DT[ci[s]! * n2 + j]!;
        if (v < dt - EPS) {
          dt = v;
          ct = 3 + 2 * s;
        }
      }
      DT[k] = dt;
      CT[k] = ct;
    }
  }

  const partner = new Int32Array(n1).fill(-1);
  const tasks: { tree: boolean; i: number; j: number }[] = [{ tree: true, i: 0, j: 0 }];
  while (tasks.length > 0) {
    const { tree, i, j } = tasks.pop()!;
    const k = i * n2 + j;
    const ci = A.children[i]!;
    const cj = B.children[j]!;
    if (tree) {
      const c = CT[k]!;
      if (c === 0) {
        if (cost(i, j) < DIFFERENT) partner[i] = j;
        tasks.push({ tree: false, i, j });
      } else if (c % 2 === 0) tasks.push({ tree: true, i, j: cj[(c - 2) / 2]! });
      else tasks.push({ tree: true, i: ci[(c - 3) / 2]!, j });
    } else {
      if (ci.length === 0 || cj.length === 0) continue;
      const c = CF[k]!;
      if (c === 0) {
        for (const [s, t] of alignTrace(A, B, ci, cj, DT, n2)) tasks.push({ tree: true, i: s, j: t });
      } else if (c === 1) {
        tasks.push({ tree: true, i: ci[0]!, j: cj[1]! }, { tree: true, i: ci[1]!, j: cj[0]! });
      } else if (c % 2 === 0) tasks.push({ tree: false, i, j: cj[(c - 2) / 2]! });
      else tasks.push({ tree: false, i: ci[(c - 3) / 2]!, j });
    }
  }
  return partner;
}

/** Ordered alignment of two child lists: each subtree paired, deleted whole or inserted whole. */
function alignForests(A: Indexed, B: Indexed, ci: number[], cj: number[], DT: Float64Array, n2: number, S: Float64Array): number {
  const m = ci.length;
  const n = cj.length;
  const w = n + 1;
  S[0] = 0;
  for (let b = 1; b <= n; b++) S[b] = S[b - 1]! + B.size[cj[b - 1]!]!;
  for (let a = 1; a <= m; a++) {
    const del = A.size[ci[a - 1]!]!;
    S[a * w] = S[(a - 1) * w]! + del;
    for (let b = 1; b <= n; b++) {
      const ins = B.size[cj[b - 1]!]!;
      const sub = S[(a - 1) * w + b - 1]! + DT[ci[a - 1]! * n2 + cj[b - 1]!]!;
      S[a * w + b] = Math.min(sub, S[(a - 1) * w + b]! + del, S[a * w + b - 1]! + ins);
    }
  }
  return S[m * w + n]!;
}

function alignTrace(A: Indexed, B: Indexed, ci: number[], cj: number[], DT: Float64Array, n2: number): [number, number][] {
  const m = ci.length;
  const n = cj.length;
  const w = n + 1;
  const S = new Float64Array((m + 1) * w);
  alignForests(A, B, ci, cj, DT, n2, S);
  const pairs: [number, number][] = [];
  let a = m;
  let b = n;
  while (a > 0 && b > 0) {
    const here = S[a * w + b]!;
    if (Math.abs(here - (S[(a - 1) * w + b - 1]! + DT[ci[a - 1]! * n2 + cj[b - 1]!]!)) < 1e-7) {
      pairs.push([ci[a - 1]!, cj[b - 1]!]);
      a--;
      b--;
    } else if (Math.abs(here - (S[(a - 1) * w + b]! + A.size[ci[a - 1]!]!)) < 1e-7) a--;
    else b--;
  }
  return pairs;
}

/** Top-down matching for plans too large for the table: roots, then children aligned by pair cost. */
function topDownMatch(A: Indexed, B: Indexed, cost: Cost): Int32Array {
  const partner = new Int32Array(A.nodes.length).fill(-1);
  if (cost(0, 0) >= DIFFERENT) return partner;
  const stack: [number, number][] = [[0, 0]];
  while (stack.length > 0) {
    const [i, j] = stack.pop()!;
    partner[i] = j;
    const ci = A.children[i]!;
    const cj = B.children[j]!;
    if (ci.length === 0 || cj.length === 0) continue;
    const m = ci.length;
    const n = cj.length;
    const w = n + 1;
    const S = new Float64Array((m + 1) * w);
    for (let b = 1; b <= n; b++) S[b] = b;
    for (let a = 1; a <= m; a++) {
      S[a * w] = a;
      for (let b = 1; b <= n; b++) {
        const c = cost(ci[a - 1]!, cj[b - 1]!);
        const sub = c < DIFFERENT ? S[(a - 1) * w + b - 1]! + c : Infinity;
        S[a * w + b] = Math.min(sub, S[(a - 1) * w + b]! + 1, S[a * w + b - 1]! + 1);
      }
    }
    let a = m;
    let b = n;
    const leftA: number[] = [];
    const leftB: number[] = [];
    while (a > 0 || b > 0) {
      const here = S[a * w + b]!;
      if (a > 0 && b > 0) {
        const c = cost(ci[a - 1]!, cj[b - 1]!);
        if (c < DIFFERENT && Math.abs(here - (S[(a - 1) * w + b - 1]! + c)) < 1e-7) {
          stack.push([ci[a - 1]!, cj[b - 1]!]);
          a--;
          b--;
          continue;
        }
      }
      if (a > 0 && Math.abs(here - (S[(a - 1) * w + b]! + 1)) < 1e-7) leftA.push(ci[--a]!);
      else leftB.push(cj[--b]!);
    }
    // One node inserted or removed between a parent and its child: look one level down.
    for (const s of leftA) {
      const only = A.children[s]!;
      const t = leftB.findIndex((x) => only.length === 1 && cost(only[0]!, x) < DIFFERENT);
      if (t >= 0) {
        stack.push([only[0]!, leftB[t]!]);
        leftB.splice(t, 1);
      }
    }
    for (const t of leftB) {
      const only = B.children[t]!;
      const s = leftA.findIndex((x) => only.length === 1 && partner[x] === -1 && cost(x, only[0]!) < DIFFERENT);
      if (s >= 0) stack.push([leftA[s]!, only[0]!]);
    }
  }
  return partner;
}

// ---- figures --------------------------------------------------------------------------------------

interface Floor {
  /** Smallest max/min ratio that counts. */
  ratio: number;
  /** Smallest absolute difference that counts. */
  abs: number;
}

const FLOORS: Record<string, Floor> = {
  count: { ratio: 1.1, abs: 1 },
  blocks: { ratio: 1.2, abs: 8 },
  kb: { ratio: 1.2, abs: 64 },
  bytes: { ratio: 1.2, abs: 65536 },
  cost: { ratio: 1.1, abs: 1 },
  // Timings move from run to run: a node's time must change by half and by a millisecond to count.
  ms: { ratio: 1.5, abs: 1 },
  totalMs: { ratio: 1.2, abs: 0.5 },
  // MongoDB's times are whole-millisecond estimates.
  mongoMs: { ratio: 2, abs: 5 },
};

function delta(key: string, label: string, unit: DeltaUnit, before: number | undefined, after: number | undefined, lowerIsBetter: boolean, floor: Floor = FLOORS[unit]!): MetricDelta {
  const d: MetricDelta = { key, label, unit, material: false, trend: 'same' };
  if (before !== undefined) d.before = before;
  if (after !== undefined) d.after = after;
  if (before !== undefined && after !== undefined) {
    if (before > 0 && after > 0) d.factor = Math.round((after / before) * 1000) / 1000;
    const hi = Math.max(before, after);
    const lo = Math.min(before, after);
    d.material = hi - lo >= floor.abs && (lo <= 0 || hi / lo >= floor.ratio);
  } else {
    // Reported on one side only: material when that side did real work.
    const v = before ?? after ?? 0;
    d.material = v >= floor.abs;
  }
  if (d.material) {
    if (!lowerIsBetter) d.trend = 'neutral';
    else if (before === undefined || after === undefined) d.trend = 'neutral';
    else d.trend = after < before ? 'better' : 'worse';
  }
  return d;
}

/**
 * Keys examined that appear where there were none, while keys and documents together fell, are an index
 * doing its job (a collection scan became an index scan): the new keys are not a regression, so they
 * are not marked as one. Documents that appear where there were none (a covered query now fetching)
 * stay a regression.
 */
function keysForDocs(keys: MetricDelta, docs: MetricDelta): void {
  if (keys.trend !== 'worse' || (keys.before ?? 0) !== 0 || keys.after === undefined) return;
  if (docs.before === undefined || docs.after === undefined) return;
  if (keys.after + docs.after < docs.before) keys.trend = 'neutral';
}

function sharedOf(b: { sharedHit?: number; sharedRead?: number } | undefined): number | undefined {
  if (!b || (b.sharedHit === undefined && b.sharedRead === undefined)) return undefined;
  return (b.sharedHit ?? 0) + (b.sharedRead ?? 0);
}

function tempOf(b: { tempRead?: number; tempWritten?: number } | undefined): number | undefined {
  if (!b || (b.tempRead === undefined && b.tempWritten === undefined)) return undefined;
  return (b.tempRead ?? 0) + (b.tempWritten ?? 0);
}

/** Rows thrown away by a PostgreSQL node, over all loops (printed per loop). */
function removedOf(n: PlanNode): number | undefined {
  const m = n.metrics;
  if (m.rowsRemovedByFilter === undefined && m.rowsRemovedByJoinFilter === undefined && m.rowsRemovedByIndexRecheck === undefined) return undefined;
  const perLoop = (m.rowsRemovedByFilter ?? 0) + (m.rowsRemovedByJoinFilter ?? 0) + (m.rowsRemovedByIndexRecheck ?? 0);
  return Math.round(perLoop * (m.loops && m.loops > 0 ? m.loops : 1));
}

function nodeDeltas(a: PlanNode | undefined, b: PlanNode | undefined, engine: Engine): MetricDelta[] {
  const ma = a?.metrics ?? {};
  const mb = b?.metrics ?? {};
  const out: MetricDelta[] = [];
  const add = (d: MetricDelta): void => {
    if (d.before === undefined && d.after === undefined) return;
    if (d.before === d.after) return;
    out.push(d);
  };
  if (engine === 'mongodb') {
    add(delta('returned', 'returned', 'count', ma.rowsReturned, mb.rowsReturned, false));
    const keys = delta('keysExamined', 'keys examined', 'count', ma.keysExamined, mb.keysExamined, true);
    const docs = delta('docsExamined', 'docs examined', 'count', ma.docsExamined, mb.docsExamined, true);
    keysForDocs(keys, docs);
    add(keys);
    add(docs);
    add(delta('seeks', 'seeks', 'count', ma.seeks, mb.seeks, true));
    add(delta('memory', 'memory', 'bytes', ma.memUsageBytes, mb.memUsageBytes, true));
    add(delta('time', 'time', 'ms', ma.inclusiveTimeMs, mb.inclusiveTimeMs, true, FLOORS['mongoMs']));
    return out;
  }
  const analyzed = (m: typeof ma): boolean => m.rowsReturned !== undefined || m.neverExecuted === true;
  add(delta('rows', 'rows', 'count', ma.rowsReturned, mb.rowsReturned, false));
  add(delta('loops', 'loops', 'count', ma.loops, mb.loops, false));
  add(delta('ownTime', 'own time', 'ms', ma.exclusiveTimeMs, mb.exclusiveTimeMs, true));
  add(delta('sharedBlocks', 'shared buffers', 'blocks', sharedOf(ma.buffers), sharedOf(mb.buffers), true));
  add(delta('sharedRead', 'read from disk', 'blocks', ma.buffers?.sharedRead, mb.buffers?.sharedRead, true));
  add(delta('tempBlocks', 'temp buffers', 'blocks', tempOf(ma.buffers), tempOf(mb.buffers), true));
  add(delta('rowsRemoved', 'rows removed', 'count', a ? removedOf(a) : undefined, b ? removedOf(b) : undefined, true));
  add(delta('heapFetches', 'heap fetches', 'count', ma.heapFetches, mb.heapFetches, true));
  add(delta('sortSpace', 'sort space', 'kb', ma.sortSpaceKb, mb.sortSpaceKb, true));
  add(delta('diskUsage', 'disk', 'kb', ma.diskUsageKb, mb.diskUsageKb, true));
  add(delta('hashBatches', 'hash batches', 'count', ma.hashBatches, mb.hashBatches, true));
  if (!analyzed(ma) && !analyzed(mb)) add(delta('cost', 'estimated cost', 'cost', ma.totalCost, mb.totalCost, true));
  return out;
}

function short(s: string, max = 48): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function pattern(p: Record<string, number | string>): string {
  return `{ ${Object.entries(p).map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : v}`).join(', ')} }`;
}

function boundsText(b: Record<string, string[]>): string {
  return Object.entries(b)
    .map(([f, iv]) => (iv.length === 1 ? `${f} ${iv[0]}` : `${f} ${iv.length} intervals`))
    .join(' · ');
}

/** The differences of a pair that are not figures, as short phrases. */
function nodeDifferences(a: PlanNode, b: PlanNode, engine: Engine): string[] {
  const out: string[] = [];
  const ka = kindLabel(a, engine);
  const kb = kindLabel(b, engine);
  if (ka !== kb) out.push(`${ka} → ${kb}`);
  const da = a.details;
  const db = b.details;
  const ia = da.indexName ?? (da.keyPattern ? pattern(da.keyPattern) : undefined);
  const ib = db.indexName ?? (db.keyPattern ? pattern(db.keyPattern) : undefined);
  if (ia !== ib) {
    if (ia !== undefined && ib !== undefined) out.push(`index ${ia} → ${ib}`);
    else if (ib !== undefined) out.push(`uses index ${ib}`);
    else out.push(`no longer uses index ${ia}`);
  }
  if (da.direction !== db.direction && da.direction !== undefined && db.direction !== undefined) out.push(`direction ${da.direction} → ${db.direction}`);
  if (ia === ib && !sameJson(da.indexBounds, db.indexBounds) && da.indexBounds && db.indexBounds) {
    const t = `bounds ${boundsText(da.indexBounds)} → ${boundsText(db.indexBounds)}`;
    out.push(t.length <= 90 ? t : 'index bounds changed');
  }
  if (!sameJson(da.filter, db.filter)) out.push(da.filter === undefined ? 'now filters' : db.filter === undefined ? 'no longer filters' : 'filter changed');
  if (!sameJson(da.sortPattern, db.sortPattern) && da.sortPattern && db.sortPattern) out.push(`sort ${pattern(da.sortPattern)} → ${pattern(db.sortPattern)}`);
  if (da.joinType !== db.joinType && da.joinType && db.joinType) out.push(`join type ${da.joinType} → ${db.joinType}`);
  if (da.strategy !== db.strategy && da.strategy && db.strategy && ka === kb) out.push(`strategy ${da.strategy} → ${db.strategy}`);
  if (!sameJson(da.sortKey, db.sortKey) && da.sortKey && db.sortKey) out.push(`sort key ${short(da.sortKey.join(', '), 30)} → ${short(db.sortKey.join(', '), 30)}`);
  const sa = a.metrics.sortMethod;
  const sb = b.metrics.sortMethod;
  if (sa !== sb && sa !== undefined && sb !== undefined) out.push(`sort method ${sa} → ${sb}`);
  if (a.metrics.usedDisk !== b.metrics.usedDisk && (a.metrics.usedDisk || b.metrics.usedDisk)) out.push(b.metrics.usedDisk ? 'now spills to disk' : 'no longer spills to disk');
  const ca = da.conditions ?? {};
  const cb = db.conditions ?? {};
  for (const key of new Set([...Object.keys(ca), ...Object.keys(cb)])) {
    const x = ca[key];
    const y = cb[key];
    if (x === y) continue;
    if (x === undefined) out.push(`${key} ${short(y!)}`);
    else if (y === undefined) out.push(`no ${key}`);
    else out.push(`${key} ${short(x, 36)} → ${short(y, 36)}`);
  }
  return out;
}

// ---- whole plan -----------------------------------------------------------------------------------

function planTotals(before: Plan, after: Plan, A: Indexed, B: Indexed): MetricDelta[] {
  const ta = before.totals;
  const tb = after.totals;
  if (before.engine === 'mongodb') {
    const keys = delta('keysExamined', 'keys examined', 'count', ta.keysExamined, tb.keysExamined, true);
    const docs = delta('docsExamined', 'docs examined', 'count', ta.docsExamined, tb.docsExamined, true);
    keysForDocs(keys, docs);
    return [
      keys,
      docs,
      delta('returned', 'returned', 'count', ta.nReturned, tb.nReturned, false),
      delta('executionTime', 'execution time', 'ms', ta.executionTimeMs, tb.executionTimeMs, true, FLOORS['mongoMs']),
    ].filter((d) => d.before !== undefined || d.after !== undefined);
  }
  const sum = (I: Indexed, f: (n: PlanNode) => number | undefined): number | undefined => {
    let total: number | undefined;
    for (const n of I.nodes) {
      const v = f(n);
      if (v !== undefined) total = (total ?? 0) + v;
    }
    return total;
  };
  const time = (p: Plan): number | undefined => p.totals.executionTimeMs ?? p.postgres?.executionTimeMs ?? p.root.metrics.inclusiveTimeMs;
  const rows = (p: Plan): number | undefined => p.totals.rows ?? p.root.metrics.rowsReturned;
  const bufs = (p: Plan) => p.totals.buffers ?? p.root.metrics.buffers;
  return [
    delta('executionTime', 'execution time', 'ms', time(before), time(after), true, FLOORS['totalMs']),
    delta('planningTime', 'planning time', 'ms', ta.planningTimeMs ?? before.postgres?.planningTimeMs, tb.planningTimeMs ?? after.postgres?.planningTimeMs, true, FLOORS['totalMs']),
    delta('rows', 'rows', 'count', rows(before), rows(after), false),
    delta('sharedBlocks', 'shared buffers', 'blocks', sharedOf(bufs(before)), sharedOf(bufs(after)), true),
    delta('sharedRead', 'read from disk', 'blocks', bufs(before)?.sharedRead, bufs(after)?.sharedRead, true),
    delta('tempBlocks', 'temp buffers', 'blocks', tempOf(bufs(before)), tempOf(bufs(after)), true),
    delta('rowsRemoved', 'rows removed', 'count', sum(A, removedOf), sum(B, removedOf), true),
    delta('cost', 'estimated cost', 'cost', before.root.metrics.totalCost, after.root.metrics.totalCost, true),
  ].filter((d) => d.before !== undefined || d.after !== undefined);
}

function spills(n: PlanNode): boolean {
  const m = n.metrics;
  return (
    m.usedDisk === true ||
    m.sortSpaceType === 'Disk' ||
    (m.sortMethod !== undefined && /external/i.test(m.sortMethod)) ||
    (m.hashBatches !== undefined && m.hashBatches > 1) ||
    (m.diskUsageKb !== undefined && m.diskUsageKb > 0)
  );
}

function planFlags(A: Indexed, B: Indexed, engine: Engine): FlagDelta[] {
  const has = (I: Indexed, f: (n: PlanNode) => boolean): boolean => I.nodes.some(f);
  const flag = (key: FlagDelta['key'], label: string, f: (n: PlanNode) => boolean): FlagDelta => {
    const before = has(A, f);
    const after = has(B, f);
    return { key, label, before, after, trend: before === after ? 'same' : after ? 'worse' : 'better' };
  };
  if (engine === 'mongodb') {
    return [
      flag('blockingSort', 'sorts in memory', (n) => n.kind === 'SORT' || n.kind === '$sort'),
      flag('spill', 'spills to disk', spills),
      flag('collectionScan', 'scans a whole collection', (n) => n.kind === 'COLLSCAN'),
    ];
  }
  return [
    flag('sort', 'sorts', (n) => n.kind === 'Sort' || n.kind === 'Incremental Sort'),
    flag('spill', 'spills to disk', spills),
    flag('seqScan', 'scans a table sequentially', (n) => n.kind === 'Seq Scan'),
  ];
}

function findingsDelta(before: Finding[], after: Finding[]): FindingsDelta {
  const codesBefore = new Set(before.map((f) => f.code));
  const codesAfter = new Set(after.map((f) => f.code));
  return {
    appeared: after.filter((f) => !codesBefore.has(f.code)),
    disappeared: before.filter((f) => !codesAfter.has(f.code)),
    kept: [...codesAfter].filter((c) => codesBefore.has(c)),
  };
}

// ---- the verdict ----------------------------------------------------------------------------------

/** A ratio for a sentence: "4x", "9.3x", "102x", "10,000x". */
export function timesText(a: number, b: number): string {
  return formatRatio(Math.max(a, b) / Math.min(a, b));
}

function byKey(ds: MetricDelta[], key: string): MetricDelta | undefined {
  return ds.find((d) => d.key === key);
}

function both(d: MetricDelta | undefined): d is MetricDelta & { before: number; after: number } {
  return d !== undefined && d.before !== undefined && d.after !== undefined;
}

/** "1,020 keys instead of 10 (102x more)". */
function countPhrase(d: MetricDelta & { before: number; after: number }, noun: string, fewer: string, more: string): string {
  const instead = d.before === 0 ? 'none' : formatCount(d.before);
  const ratio = d.before > 0 && d.after > 0 ? ` (${timesText(d.before, d.after)} ${d.after < d.before ? fewer : more})` : '';
  const now = d.after === 0 ? `no ${noun}` : d.after === 1 ? `1 ${noun.replace(/s$/, '')}` : `${formatCount(d.after)} ${noun}`;
  return `${now} instead of ${instead}${ratio}`;
}

interface Clause {
  text: string;
  trend: 'better' | 'worse';
}

function flagClauses(flags: FlagDelta[], engine: Engine): Clause[] {
  const words: Record<FlagDelta['key'], [string, string]> = {
    blockingSort: ['no longer sorts in memory', 'now sorts in memory'],
    sort: ['no longer sorts', 'now sorts'],
    spill: ['no longer spills to disk', 'now spills to disk'],
    collectionScan: ['no longer scans the whole collection', 'now scans the whole collection'],
    seqScan: ['no longer reads a table sequentially', 'now reads a table sequentially'],
  };
  const out: Clause[] = [];
  for (const f of flags) {
    if (f.before === f.after) continue;
    // A sequential scan is often the right plan in PostgreSQL: only worth a clause next to nothing else.
    if (engine === 'postgres' && f.key === 'seqScan') continue;
    const [gone, now] = words[f.key];
    out.push(f.after ? { text: now, trend: 'worse' } : { text: gone, trend: 'better' });
  }
  return out;
}

function joinClauses(parts: string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** Assembles "After <main>, <better clauses> but <worse clauses>." from a direction and clauses. */
function sentence(main: Clause[], extra: Clause[]): { direction: ComparedPlans['direction']; text: string } {
  const all = [...main, ...extra.slice(0, 3)];
  const good = all.filter((c) => c.trend === 'better').map((c) => c.text);
  const bad = all.filter((c) => c.trend === 'worse').map((c) => c.text);
  // The headline figures decide; the flags decide only when the figures did not move.
  const lead = main.length > 0 ? main : extra;
  const leadGood = lead.some((c) => c.trend === 'better');
  const leadBad = lead.some((c) => c.trend === 'worse');
  if (leadGood && leadBad) return { direction: 'mixed', text: `Mixed: after ${joinClauses(good)} but ${joinClauses(bad)}.` };
  if (leadGood) return { direction: 'better', text: `After ${joinClauses(good)}${bad.length > 0 ? ` but ${joinClauses(bad)}` : ''}.` };
  return { direction: 'worse', text: `Worse: after ${joinClauses(bad)}${good.length > 0 ? ` but ${joinClauses(good)}` : ''}.` };
}

/** The verdict when there is nothing measured to judge by: whether the shapes differ at all. */
function unmeasured(differing: number): { direction: ComparedPlans['direction']; text: string } {
  if (differing === 0) return { direction: 'same', text: 'No change in the plan\u2019s shape; neither plan has execution figures to compare the work.' };
  return {
    direction: 'unmeasured',
    text: `The plans differ in shape (${plural(differing, 'node')} changed, added or removed), but without execution figures on both sides the work cannot be compared.`,
  };
}

function mongoVerdict(totals: MetricDelta[], flags: FlagDelta[], differing: number): { direction: ComparedPlans['direction']; text: string } {
  const keys = byKey(totals, 'keysExamined');
  const docs = byKey(totals, 'docsExamined');
  const time = byKey(totals, 'executionTime');
  const main: Clause[] = [];
  if (both(keys) && both(docs)) {
    const work = delta('work', 'work', 'count', keys.before + docs.before, keys.after + docs.after, true);
    if (work.material) {
      const trend = work.trend === 'better' ? 'better' : 'worse';
      if (keys.material && !docs.material) main.push({ text: `reads ${countPhrase(keys, 'keys', 'fewer', 'more')}`, trend });
      else if (docs.material && !keys.material) main.push({ text: `reads ${countPhrase(docs, 'documents', 'fewer', 'more')}`, trend });
      else {
        const ratio = work.before! > 0 && work.after! > 0 ? ` (${timesText(work.before!, work.after!)} ${trend === 'better' ? 'less' : 'more'} work)` : '';
        main.push({ text: `examines ${plural(keys.after, 'key')} and ${plural(docs.after, 'document')} instead of ${formatCount(keys.before)} and ${formatCount(docs.before)}${ratio}`, trend });
      }
    }
  } else if (both(time) && time.material) {
    main.push({ text: `runs in ${formatMs(time.after)} instead of ${formatMs(time.before)}`, trend: time.trend === 'better' ? 'better' : 'worse' });
  }
  const extra = flagClauses(flags, 'mongodb');
  if (main.length === 0 && extra.length === 0) {
    if (both(keys) && both(docs)) {
      const same = keys.before === keys.after && docs.before === docs.after;
      const ret = byKey(totals, 'returned');
      const tail = ret?.after !== undefined ? ` to return ${formatCount(ret.after)}` : '';
      return {
        direction: 'same',
        text: same
          ? `No material change: both examine ${plural(keys.after, 'key')} and ${plural(docs.after, 'document')}${tail}.`
          : `No material change: ${formatCount(keys.before)} → ${formatCount(keys.after)} keys and ${formatCount(docs.before)} → ${formatCount(docs.after)} documents examined.`,
      };
    }
    return unmeasured(differing);
  }
  return sentence(main, extra);
}

function postgresVerdict(totals: MetricDelta[], flags: FlagDelta[], differing: number): { direction: ComparedPlans['direction']; text: string } {
  const time = byKey(totals, 'executionTime');
  const blocks = byKey(totals, 'sharedBlocks');
  const removed = byKey(totals, 'rowsRemoved');
  const cost = byKey(totals, 'cost');
  const main: Clause[] = [];
  const trendOf = (d: MetricDelta): 'better' | 'worse' => (d.trend === 'better' ? 'better' : 'worse');
  if (both(time) && time.material) {
    const ratio = time.before > 0 && time.after > 0 ? ` (${timesText(time.before, time.after)} ${time.after < time.before ? 'faster' : 'slower'})` : '';
    main.push({ text: `runs in ${formatMs(time.after)} instead of ${formatMs(time.before)}${ratio}`, trend: trendOf(time) });
  }
  if (both(blocks) && blocks.material) main.push({ text: `touches ${countPhrase(blocks, 'buffers', 'fewer', 'more')}`, trend: trendOf(blocks) });
  if (main.length === 0 && both(removed) && removed.material) main.push({ text: `discards ${countPhrase(removed, 'rows', 'fewer', 'more')}`, trend: trendOf(removed) });
  const analyzed = time?.before !== undefined || time?.after !== undefined;
  if (main.length === 0 && !analyzed && both(cost) && cost.material) {
    main.push({ text: `has an estimated cost of ${formatCount(Math.round(cost.after))} instead of ${formatCount(Math.round(cost.before))} (${timesText(cost.before, cost.after)} ${cost.after < cost.before ? 'lower' : 'higher'})`, trend: trendOf(cost) });
  }
  const extra = flagClauses(flags, 'postgres');
  if (main.length === 0 && extra.length === 0) {
    const seq = flags.find((f) => f.key === 'seqScan' && f.before !== f.after);
    if (seq) return sentence([], [{ text: seq.after ? 'now reads a table sequentially' : 'no longer reads a table sequentially', trend: seq.after ? 'worse' : 'better' }]);
    const parts: string[] = [];
    if (both(time)) parts.push(`${formatMs(time.before)} → ${formatMs(time.after)}`);
    if (both(blocks)) parts.push(blocks.before === blocks.after ? `${plural(blocks.after, 'buffer')} each` : `${formatCount(blocks.before)} → ${formatCount(blocks.after)} buffers`);
    if (parts.length === 0 && both(cost)) parts.push(`estimated cost ${formatCount(Math.round(cost.before))} → ${formatCount(Math.round(cost.after))}`);
    if (parts.length === 0) return unmeasured(differing);
    return { direction: 'same', text: `No material change${parts.length > 0 ? ` (${parts.join(', ')})` : ''}.` };
  }
  return sentence(main, extra);
}

// ---- notes ----------------------------------------------------------------------------------------

function executed(p: Plan): boolean {
  if (p.engine === 'mongodb') return p.totals.nReturned !== undefined || p.totals.keysExamined !== undefined;
  return p.postgres?.analyzed === true || p.root.metrics.rowsReturned !== undefined;
}

function notesFor(before: Plan, after: Plan, totals: MetricDelta[], matching: ComparedPlans['matching'], n1: number, n2: number): string[] {
  const notes: string[] = [];
  const eb = executed(before);
  const ea = executed(after);
  if (!eb || !ea) {
    const which = !eb && !ea ? 'Neither plan has' : !eb ? 'The before plan has' : 'The after plan has';
    notes.push(`${which} execution figures (${before.engine === 'mongodb' ? 'queryPlanner verbosity' : 'EXPLAIN without ANALYZE'}): only shapes${before.engine === 'postgres' ? ' and estimates' : ''} can be compared.`);
  }
  const ret = byKey(totals, before.engine === 'mongodb' ? 'returned' : 'rows');
  if (both(ret) && ret.before !== ret.after) {
    const noun = before.engine === 'mongodb' ? 'documents' : 'rows';
    notes.push(`The plans return different numbers of ${noun} (${formatCount(ret.before)} before, ${formatCount(ret.after)} after): check that they answer the same question.`);
  }
  if (before.engine === 'mongodb') {
    const qa = before.mongo?.parsedQuery;
    const qb = after.mongo?.parsedQuery;
    if (qa !== undefined && qb !== undefined && !sameJson(qa, qb)) notes.push('The filters differ (a rewritten query): compare the work done, not the shape node for node.');
    const na = before.mongo?.namespace;
    const nb = after.mongo?.namespace;
    if (na && nb && na !== nb) notes.push(`The plans read different collections (${na} and ${nb}).`);
  } else {
    const qa = before.postgres?.queryText;
    const qb = after.postgres?.queryText;
    if (qa && qb && qa.replace(/\s+/g, ' ').trim() !== qb.replace(/\s+/g, ' ').trim()) notes.push('The query texts differ (a rewritten query): compare the work done, not the shape node for node.');
  }
  if (before.serverVersion && after.serverVersion && before.serverVersion !== after.serverVersion) {
    notes.push(`The plans come from different server versions (${before.serverVersion} and ${after.serverVersion}).`);
  }
  if (matching === 'top-down') {
    notes.push(`The plans are large (${formatCount(n1)} and ${formatCount(n2)} nodes): nodes were matched top-down, so a node moved deep in the tree may show as removed and added.`);
  }
  return notes;
}

// ---- entry ----------------------------------------------------------------------------------------

/**
 * Compares two plans of the same engine. Never throws on plans the readers produced: two engines are
 * refused in one sentence, and anything unexpected becomes a refusal naming the internal error.
 */
export function comparePlans(before: Plan, after: Plan, options: CompareOptions = {}): PlanComparison {
  if (before.engine !== after.engine) {
    const name = (e: Engine): string => (e === 'mongodb' ? 'MongoDB' : 'PostgreSQL');
    return { ok: false, refusal: `The plans come from different engines (${name(before.engine)} before, ${name(after.engine)} after) and cannot be compared.` };
  }
  try {
    return compareUnsafe(before, after, options);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return { ok: false, refusal: `The plans could not be compared because of an internal error (${msg.slice(0, 200)}).` };
  }
}

function compareUnsafe(before: Plan, after: Plan, options: CompareOptions): ComparedPlans {
  const engine = before.engine;
  const A = indexTree(before.root, engine);
  const B = indexTree(after.root, engine);
  const n1 = A.nodes.length;
  const n2 = B.nodes.length;
  const costs = new Map<number, number>();
  const cost: Cost = (i, j) => {
    const key = i * n2 + j;
    let c = costs.get(key);
    if (c === undefined) {
      c = pairCost(A, i, B, j, engine);
      costs.set(key, c);
    }
    return c;
  };
  // The edit-distance sweep asks for every pair once: a cache would only cost memory there.
  const matching: ComparedPlans['matching'] = n1 * n2 <= MAX_CELLS ? 'edit-distance' : 'top-down';
  const partner =
    matching === 'edit-distance'
      ? editMatch(A, B, (i, j) => pairCost(A, i, B, j, engine))
      : topDownMatch(A, B, cost);

  const partnerOfB = new Int32Array(n2).fill(-1);
  for (let i = 0; i < n1; i++) if (partner[i]! >= 0) partnerOfB[partner[i]!] = i;

  const nodes: NodeComparison[] = [];
  const beforeEntry = new Array<number>(n1).fill(-1);
  const afterEntry = new Array<number>(n2).fill(-1);
  const counts: Record<NodeStatus, number> = { unchanged: 0, changed: 0, added: 0, removed: 0 };
  const push = (e: NodeComparison, i: number, j: number): void => {
    if (i >= 0) beforeEntry[i] = nodes.length;
    if (j >= 0) afterEntry[j] = nodes.length;
    nodes.push(e);
    counts[e.status]++;
  };
  const removedFrom = (i: number): void => {
    // Removed before nodes follow the entry of the before node just ahead of them in preorder.
    for (let r = i; r < n1 && partner[r] === -1 && beforeEntry[r] === -1; r++) {
      const n = A.nodes[r]!;
      push({ status: 'removed', beforeId: n.id, kind: n.kind, differences: [], deltas: nodeDeltas(n, undefined, engine) }, r, -1);
    }
  };
  removedFrom(0);
  for (let j = 0; j < n2; j++) {
    const b = B.nodes[j]!;
    const i = partnerOfB[j]!;
    if (i < 0) {
      push({ status: 'added', afterId: b.id, kind: b.kind, differences: [], deltas: nodeDeltas(undefined, b, engine) }, -1, j);
      continue;
    }
    const a = A.nodes[i]!;
    const differences = nodeDifferences(a, b, engine);
    const deltas = nodeDeltas(a, b, engine);
    const changed = differences.length > 0 || deltas.some((d) => d.material);
    push({ status: changed ? 'changed' : 'unchanged', beforeId: a.id, afterId: b.id, kind: b.kind, differences, deltas }, i, j);
    removedFrom(i + 1);
  }
  // Removed nodes whose preorder predecessor was itself never reached (under a swapped pair).
  for (let i = 0; i < n1; i++) if (beforeEntry[i] === -1) removedFrom(i);

  const totals = planTotals(before, after, A, B);
  const flags = planFlags(A, B, engine);
  const differing = counts.changed + counts.added + counts.removed;
  const verdict = engine === 'mongodb' ? mongoVerdict(totals, flags, differing) : postgresVerdict(totals, flags, differing);
  const beforeFindings = options.beforeFindings ?? analyze(before);
  const afterFindings = options.afterFindings ?? analyze(after);
  return {
    ok: true,
    engine,
    nodes,
    beforeEntry: remapIds(beforeEntry, A),
    afterEntry: remapIds(afterEntry, B),
    counts,
    totals,
    flags,
    findings: findingsDelta(beforeFindings, afterFindings),
    direction: verdict.direction,
    verdict: verdict.text,
    notes: notesFor(before, after, totals, matching, n1, n2),
    matching,
  };
}

/** Entries are found by PlanNode.id; ids equal preorder positions after derive(), but a plan may not be derived. */
function remapIds(entries: number[], I: Indexed): number[] {
  let max = -1;
  for (const n of I.nodes) max = Math.max(max, n.id);
  if (max === I.nodes.length - 1 && I.nodes.every((n, i) => n.id === i)) return entries;
  const out = new Array<number>(max + 1).fill(-1);
  I.nodes.forEach((n, i) => {
    if (n.id >= 0) out[n.id] = entries[i]!;
  });
  return out;
}

/** The comparison entry of a node of the before plan (by PlanNode.id). */
export function entryOfBefore(c: ComparedPlans, id: number): NodeComparison | undefined {
  const k = c.beforeEntry[id];
  return k === undefined || k < 0 ? undefined : c.nodes[k];
}

/** The comparison entry of a node of the after plan (by PlanNode.id). */
export function entryOfAfter(c: ComparedPlans, id: number): NodeComparison | undefined {
  const k = c.afterEntry[id];
  return k === undefined || k < 0 ? undefined : c.nodes[k];
}

/** A figure in the unit it was measured in, for tables and cards. */
export function deltaValue(d: MetricDelta, side: 'before' | 'after'): string {
  const v = d[side];
  if (v === undefined) return '—';
  switch (d.unit) {
    case 'ms':
      return formatMs(v);
    case 'kb':
      return formatKb(v);
    case 'bytes':
      return formatKb(v / 1024);
    case 'cost':
      return formatCount(Math.round(v * 100) / 100);
    default:
      return formatCount(v);
  }
}

/** "200,000 → 10 (20,000x fewer)", or "— → 10" when one side did not report it. */
export function deltaText(d: MetricDelta): string {
  const base = `${deltaValue(d, 'before')} → ${deltaValue(d, 'after')}`;
  if (d.before === undefined || d.after === undefined || d.before <= 0 || d.after <= 0 || d.before === d.after) return base;
  const r = Math.max(d.before, d.after) / Math.min(d.before, d.after);
  if (r < 1.05) return base;
  const word = d.unit === 'ms' ? (d.after < d.before ? 'faster' : 'slower') : d.unit === 'count' || d.unit === 'blocks' ? (d.after < d.before ? 'fewer' : 'more') : d.after < d.before ? 'less' : 'more';
  return `${base} (${timesText(d.before, d.after)} ${word})`;
}

/** The change column of a table: "102x fewer", "4x faster", "was none", "now none", or '' when immaterial. */
export function changeText(d: MetricDelta): string {
  if (!d.material) return '';
  const ratio = /\(([^)]*)\)$/.exec(deltaText(d))?.[1];
  if (ratio) return ratio;
  if (d.unit === 'ms' && d.before !== undefined && d.after !== undefined) return d.after < d.before ? 'faster' : 'slower';
  if (d.before === undefined || d.before === 0) return d.after === 0 ? '' : 'was none';
  if (d.after === undefined || d.after === 0) return 'now none';
  return '';
}
