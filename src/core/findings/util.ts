// Helpers shared by the MongoDB and PostgreSQL rules: the tree context every rule reads and the severity
// scales documented in docs/findings.md. Numbers in messages are printed by ../format.ts.

import type { Finding, Plan, PlanNode, Severity } from '../model';
import { walk } from '../metrics';

/** What every rule sees: the plan, its nodes in preorder and each node's parent. */
export interface Ctx {
  plan: Plan;
  nodes: PlanNode[];
  /** The position in `nodes` of each node's parent, by the node's own position; -1 for the root. */
  parentAt: Int32Array;
  /** Positions by node, only when the nodes' ids are not their positions (a plan built without derive()). */
  positions: Map<PlanNode, number> | undefined;
  /** Wall-clock time of the whole statement in ms, when the plan reports it. */
  totalTimeMs: number | undefined;
  /** True when the plan carries execution figures (executionStats, EXPLAIN ANALYZE). */
  executed: boolean;
}

/** Most estimate errors follow from a few: the MAX_MISESTIMATES largest are kept, the rest would be noise. */
export const MAX_MISESTIMATES = 3;

/** A finding plus the amount of waste it stands for, used only to order findings of equal severity. */
export interface Scored {
  finding: Finding;
  score: number;
  /** Writes what the finding still lacks (its message), called only for the findings kept. */
  finish?: () => void;
}

/** A check run on every node; `code` names it when it fails. */
export interface NodeRule {
  code: string;
  run: (ctx: Ctx, node: PlanNode) => Scored | undefined;
}

/** A check run once per plan. */
export interface PlanRule {
  code: string;
  run: (ctx: Ctx) => Scored | undefined;
}

export function buildCtx(plan: Plan): Ctx {
  // The tree is walked here rather than trusting plan.nodes, so a plan built by hand without derive()
  // is still analysed; ids stay those the plan carries.
  const nodes: PlanNode[] = [];
  const parents: number[] = [];
  // While every id so far is its node's position, a node met again is found by its id; past the first
  // id that is not, a set remembers the nodes.
  let seen: Set<PlanNode> | undefined;
  let executed = plan.totals.nReturned !== undefined;
  // Two parallel stacks rather than one of {node, parent} pairs: no allocation per node.
  const stack: PlanNode[] = [plan.root];
  const parentStack: number[] = [-1];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const parent = parentStack.pop()!;
    // A node reached twice (a hand-built plan sharing a subtree) is analysed once, under its first parent.
    if (seen ? seen.has(node) : node.id >= 0 && node.id < nodes.length && nodes[node.id] === node) continue;
    const at = nodes.length;
    if (!seen && node.id !== at) seen = new Set(nodes);
    seen?.add(node);
    if (node.metrics.rowsReturned !== undefined) executed = true;
    nodes.push(node);
    parents.push(parent);
    for (let i = node.children.length - 1; i >= 0; i--) {
      stack.push(node.children[i]!);
      parentStack.push(at);
    }
  }
  let positions: Map<PlanNode, number> | undefined;
  if (seen) {
    positions = new Map();
    nodes.forEach((n, i) => positions!.set(n, i));
  }
  let totalTimeMs = plan.totals.executionTimeMs ?? plan.postgres?.executionTimeMs;
  if (totalTimeMs === undefined || totalTimeMs <= 0) totalTimeMs = plan.root.metrics.inclusiveTimeMs;
  if (totalTimeMs !== undefined && totalTimeMs <= 0) totalTimeMs = undefined;
  return { plan, nodes, parentAt: Int32Array.from(parents), positions, totalTimeMs, executed };
}

/** The position of a node in the context's `nodes`, -1 when it is not in the tree. */
export function positionOf(ctx: Ctx, node: PlanNode): number {
  if (ctx.positions) return ctx.positions.get(node) ?? -1;
  return ctx.nodes[node.id] === node ? node.id : -1;
}

/** The parent of a node in the context's tree. */
export function parentOf(ctx: Ctx, node: PlanNode): PlanNode | undefined {
  const at = positionOf(ctx, node);
  return at > 0 ? ctx.nodes[ctx.parentAt[at]!] : undefined;
}

/** A finite number or undefined: raw server values may be strings, null or NaN. */
export function num(x: unknown): number | undefined {
  if (typeof x === 'number' && Number.isFinite(x)) return x;
  if (typeof x === 'string' && x.trim() !== '' && Number.isFinite(Number(x))) return Number(x);
  return undefined;
}

export function ratioOf(examined: number, returned: number): number {
  return Math.round((examined / Math.max(returned, 1)) * 100) / 100;
}

const RANK: Record<Severity, number> = { high: 0, medium: 1, low: 2, info: 3 };

export function severityRank(s: Severity): number {
  return RANK[s];
}

export function lower(s: Severity): Severity {
  return s === 'high' ? 'medium' : s === 'medium' ? 'low' : s;
}

/**
 * The scale for "read N, kept M" waste (keys or documents examined against returned, rows read against
 * rows kept): high when at least 10,000 were read for nothing and the ratio is 10 or more; medium when
 * at least 1,000 were wasted at a ratio of 2 or more, or 100 at a ratio of 10 or more; low otherwise.
 */
export function wasteSeverity(examined: number, returned: number): Severity {
  const waste = examined - returned;
  const ratio = examined / Math.max(returned, 1);
  if (waste >= 10_000 && ratio >= 10) return 'high';
  if ((waste >= 1_000 && ratio >= 2) || (waste >= 100 && ratio >= 10)) return 'medium';
  return 'low';
}

/** Share of the statement's time spent in this node alone, 0..1, when both figures are known. */
export function timeShare(ctx: Ctx, node: PlanNode): number | undefined {
  const ex = node.metrics.exclusiveTimeMs;
  if (ex === undefined || ctx.totalTimeMs === undefined) return undefined;
  return Math.min(1, Math.max(0, ex / ctx.totalTimeMs));
}

/** Descendants of a node in preorder, stopping below nodes for which `stop` says so. */
export function descendants(node: PlanNode, stop?: (n: PlanNode) => boolean): PlanNode[] {
  const out: PlanNode[] = [];
  for (const child of node.children) {
    walk(child, (n) => {
      out.push(n);
      return !(stop && stop(n));
    });
  }
  return out;
}

export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A short, single-line rendering of a value for messages (filters, key patterns). */
export function brief(x: unknown, max = 80): string {
  // Serialises only as much as will be shown: a filter with an $in of 50,000 values costs the same as a
  // short one.
  const out: string[] = [];
  let used = 0;
  const push = (t: string): boolean => {
    out.push(t);
    used += t.length;
    return used <= max;
  };
  const write = (v: unknown, depth: number): boolean => {
    if (typeof v === 'string') return push(JSON.stringify(v.length > max ? v.slice(0, max) : v));
    if (v === null || typeof v !== 'object') return push(v === undefined ? 'undefined' : String(v));
    if (depth > 20) return push('…');
    if (Array.isArray(v)) {
      if (!push('[')) return false;
      for (let i = 0; i < v.length; i++) if ((i > 0 && !push(',')) || !write(v[i], depth + 1)) return false;
      return push(']');
    }
    if (!push('{')) return false;
    let first = true;
    for (const k in v as Record<string, unknown>) {
      if (!first && !push(',')) return false;
      first = false;
      if (!push(`${JSON.stringify(k)}:`) || !write((v as Record<string, unknown>)[k], depth + 1)) return false;
    }
    return push('}');
  };
  if (typeof x === 'string') {
    // The common case (a condition's text) needs no serialising, and usually no whitespace folding.
    const t = x.length > max * 2 ? x.slice(0, max * 2) : x;
    const s = /\s\s|[^\S ]/.test(t) ? t.replace(/\s+/g, ' ') : t;
    return s.length > max ? `${s.slice(0, max - 1)}…` : s;
  }
  write(x, 0);
  const s = out.join('').replace(/\s+/g, ' ');
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Lists names for a sentence: "a", "a and b", "a, b and c". */
export function listNames(names: string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}
