// One pass over a parsed plan: numbering, exclusive time and buffers, estimate factors, plan-wide maxima.
// Parsers fill what the server printed; everything computed from it is computed here and only here.

import { emptyMaxima, type Plan, type PlanMaxima, type PlanNode } from './model';

/** Visits nodes in preorder; a visit that returns false skips that node's children. */
export function walk(root: PlanNode, visit: (node: PlanNode, parent: PlanNode | undefined, depth: number) => void | boolean): void {
  // Parallel stacks rather than one of {node, parent, depth} records: no allocation per node.
  const stack: PlanNode[] = [root];
  const parents: (PlanNode | undefined)[] = [undefined];
  const depths: number[] = [0];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const parent = parents.pop();
    const depth = depths.pop()!;
    if (visit(node, parent, depth) === false) continue;
    for (let i = node.children.length - 1; i >= 0; i--) {
      stack.push(node.children[i]!);
      parents.push(node);
      depths.push(depth + 1);
    }
  }
}

/**
 * Numbers a tree in preorder: each node's id is its position in `nodes`, and `parents[id]` is the id of
 * its parent (-1 for the root).
 */
function number(root: PlanNode, nodes: PlanNode[], parents: number[]): void {
  // In preorder a parent is numbered before its children, so its id is already set when they are reached.
  walk(root, (node, parent) => {
    node.id = nodes.length;
    nodes.push(node);
    parents.push(parent ? parent.id : -1);
  });
}

function sharedBlocks(node: PlanNode): number | undefined {
  const b = node.metrics.buffers;
  if (!b) return undefined;
  if (b.sharedHit === undefined && b.sharedRead === undefined) return undefined;
  return (b.sharedHit ?? 0) + (b.sharedRead ?? 0);
}

/**
 * Completes a plan in place and returns it: ids in preorder, `nodes`, exclusive figures, estimate
 * factors and maxima. Idempotent. Rejected plans get their own ids, independent of the main tree.
 */
export function derive(plan: Plan): Plan {
  for (const r of plan.rejectedPlans) r.maxima = deriveTree(r.root, plan.engine, []);
  const nodes: PlanNode[] = [];
  plan.maxima = deriveTree(plan.root, plan.engine, nodes);
  plan.nodes = nodes;
  return plan;
}

/** One tree: numbered, each node's own figures and wasted reads in one pass, then the maxima. */
function deriveTree(root: PlanNode, engine: Plan['engine'], nodes: PlanNode[]): PlanMaxima {
  const parents: number[] = [];
  number(root, nodes, parents);
  let ctes = false;
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    // Preorder: the parent's flag is set before its children are reached.
    if (engine === 'postgres' && i > 0 && mayStopEarly(node, nodes[parents[i]!]!)) node.metrics.stoppedEarly = true;
    deriveNode(node);
    if (engine === 'postgres') {
      chargePostgresWaste(node);
      if (node.kind === 'CTE Scan' || node.details.subplanName !== undefined) ctes = true;
    } else chargeMongoWaste(node, i, nodes, parents);
  }
  if (ctes) chargeCtesOnce(nodes);
  return maximaOf(nodes);
}

function maximaOf(nodes: PlanNode[]): PlanMaxima {
  const max = emptyMaxima();
  for (const node of nodes) {
    const m = node.metrics;
    if (m.exclusiveTimeMs !== undefined) max.exclusiveTimeMs = Math.max(max.exclusiveTimeMs, m.exclusiveTimeMs);
    if (m.rowsReturned !== undefined) max.rowsReturned = Math.max(max.rowsReturned, m.rowsReturned);
    if (m.keysExamined !== undefined) max.keysExamined = Math.max(max.keysExamined, m.keysExamined);
    if (m.docsExamined !== undefined) max.docsExamined = Math.max(max.docsExamined, m.docsExamined);
    if (m.exclusiveSharedBlocks !== undefined) max.sharedBlocks = Math.max(max.sharedBlocks, m.exclusiveSharedBlocks);
    if (m.estimateFactor !== undefined) max.estimateFactor = Math.max(max.estimateFactor, m.estimateFactor);
    if (m.wastedReads !== undefined) max.wastedReads = Math.max(max.wastedReads, m.wastedReads);
  }
  return max;
}

/**
 * MongoDB stages that pass documents through without dropping any of their own accord: when one returns
 * fewer than it was given, a consumer above stopped asking (a limit), which is not waste.
 */
const MONGO_PASS_THROUGH = /^(\$cursor|LIMIT|\$limit|PROJECTION_\w+|PROJECTION|\$project|\$addFields|\$set|\$unset|SHARDING_FILTER|\$_internalInhibitOptimization)$/;
/** MongoDB stages that drop documents because of the query (a filter or a skip): what they drop was read for nothing. */
const MONGO_FILTERS = /^(\$match|SKIP|\$skip)$/;

/** PostgreSQL: rows removed by a filter, a join filter or a recheck, times loops (see NodeMetrics.wastedReads). */
function chargePostgresWaste(node: PlanNode): void {
  const m = node.metrics;
  if (m.neverExecuted) return;
  const f = m.rowsRemovedByFilter;
  const j = m.rowsRemovedByJoinFilter;
  const r = m.rowsRemovedByIndexRecheck;
  // Rows removed are printed per loop, like actual rows: the total is rounded the way rowsReturned is.
  if (f !== undefined || j !== undefined || r !== undefined) m.wastedReads = Math.round(((f ?? 0) + (j ?? 0) + (r ?? 0)) * Math.max(m.loops ?? 1, 1));
}

/**
 * MongoDB: the documents a collection or index scan returns are often filtered further up (`$match`
 * after `$project`, a skip): the reads are charged to the scan, climbing through stages that only pass
 * documents on, and stopping at one that reads again itself (FETCH above IXSCAN is charged for its own
 * documents) or reshapes the stream ($group, $unwind, SORT). See NodeMetrics.wastedReads.
 */
function chargeMongoWaste(node: PlanNode, id: number, nodes: PlanNode[], parents: number[]): void {
  const m = node.metrics;
  if (m.neverExecuted) return;
  if (m.keysExamined === undefined && m.docsExamined === undefined) return;
  // A stage that examines both (EXPRESS_IXSCAN, an id lookup) reads each document through its key.
  const examined = Math.max(m.keysExamined ?? 0, m.docsExamined ?? 0);
  let kept = m.rowsReturned ?? 0;
  let upId = parents[id]!;
  while (upId >= 0) {
    const up = nodes[upId]!;
    if (up.children.length !== 1 || up.metrics.keysExamined !== undefined || up.metrics.docsExamined !== undefined) break;
    if (MONGO_FILTERS.test(up.kind) && up.metrics.rowsReturned !== undefined) kept = Math.min(kept, up.metrics.rowsReturned);
    else if (!MONGO_PASS_THROUGH.test(up.kind)) break;
    upId = parents[upId]!;
  }
  m.wastedReads = Math.max(0, examined - kept);
}

/**
 * PostgreSQL runs a CTE on demand from the CTE Scans that read it, so a CTE Scan's printed time holds
 * the CTE's own work, which the CTE's nodes already show. That time is taken back from the scans (the
 * first ones to read, in plan order) so that each millisecond is shown once.
 */
function chargeCtesOnce(nodes: PlanNode[]): void {
  const cteTime = new Map<string, number>();
  for (const n of nodes) {
    const name = /^CTE (.+)$/.exec(n.details.subplanName ?? '')?.[1];
    if (name !== undefined && n.metrics.inclusiveTimeMs !== undefined) cteTime.set(name, n.metrics.inclusiveTimeMs);
  }
  if (cteTime.size === 0) return;
  for (const n of nodes) {
    const name = n.details.cteName;
    if (n.kind !== 'CTE Scan' || name === undefined || n.metrics.exclusiveTimeMs === undefined) continue;
    const remaining = cteTime.get(name);
    if (!remaining) continue;
    const take = Math.min(remaining, n.metrics.exclusiveTimeMs);
    n.metrics.exclusiveTimeMs = round3(n.metrics.exclusiveTimeMs - take);
    cteTime.set(name, round3(remaining - take));
  }
}

function deriveNode(node: PlanNode): void {
  const m = node.metrics;
  if (m.inclusiveTimeMs !== undefined) {
    let childTime = 0;
    for (const c of node.children) {
      // A PostgreSQL InitPlan (a CTE is printed as one) runs when its result is first needed, inside
      // whichever node asks for it (a CTE Scan, a Filter): its time is already counted in that
      // descendant, so subtracting it here as well would count it twice.
      if (c.role === 'InitPlan') continue;
      childTime += c.metrics.inclusiveTimeMs ?? 0;
    }
    m.exclusiveTimeMs = Math.max(0, round3(m.inclusiveTimeMs - childTime));
  }
  const own = sharedBlocks(node);
  if (own !== undefined) {
    let childBlocks = 0;
    for (const c of node.children) childBlocks += sharedBlocks(c) ?? 0;
    m.exclusiveSharedBlocks = Math.max(0, own - childBlocks);
  }
  if (m.plannedRows !== undefined && m.rowsReturned !== undefined && !m.neverExecuted) {
    const planned = Math.max(m.plannedRows, 1);
    const actual = Math.max(m.rowsReturned, 1);
    if (actual > planned) {
      m.estimateFactor = round3(actual / planned);
      m.estimateDirection = 'under';
    } else if (planned > actual) {
      // Read only until its consumer had enough: the planned rows are the whole result's, not an estimate of this.
      if (m.stoppedEarly) return;
      m.estimateFactor = round3(planned / actual);
      m.estimateDirection = 'over';
    } else {
      m.estimateFactor = 1;
      m.estimateDirection = 'exact';
    }
  }
}

const SEMI_ANTI = /Semi|Anti/;
const SEMI_ANTI_JOIN = /Semi|Anti/i;

/**
 * Whether a node reads its whole input before it returns a row, whoever reads it: a Sort (top-N too), a
 * Hash, a hashed or plain Aggregate, a hashed SetOp. What such a node reads is read to its end even when
 * the node itself is read only in part.
 */
function readsAllInput(node: PlanNode): boolean {
  const k = node.kind;
  const strategy = node.details.strategy;
  if (k === 'Sort' || k === 'Hash' || k === 'HashAggregate' || k === 'MixedAggregate' || k === 'HashSetOp') return true;
  if (k === 'Aggregate') return strategy === undefined || strategy === 'Plain' || strategy === 'Hashed' || strategy === 'Mixed';
  return k === 'SetOp' && strategy === 'Hashed';
}

/** Whether what reads `node` (its parent, or a subplan's caller) may stop before `node` is exhausted; see NodeMetrics.stoppedEarly. */
function mayStopEarly(node: PlanNode, parent: PlanNode): boolean {
  if (parent.metrics.stoppedEarly && !readsAllInput(parent)) return true;
  if (node.role === 'SubPlan' || node.role === 'InitPlan' || node.details.parentRelationship === 'SubPlan' || node.details.parentRelationship === 'InitPlan') return true;
  const runCondition = parent.details.conditions?.['Run Condition'];
  return (
    parent.kind === 'Limit' ||
    parent.kind === 'Merge Join' ||
    (parent.kind === 'WindowAgg' && typeof runCondition === 'string' && runCondition.trim() !== '') ||
    SEMI_ANTI_JOIN.test(parent.details.joinType ?? '') ||
    SEMI_ANTI.test(parent.kind)
  );
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
