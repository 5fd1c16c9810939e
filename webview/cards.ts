// What a node card says: the numbers that matter for the node's engine and kind, in a fixed order, each
// with a level that the stylesheet turns into a colour. Pure functions of the plan model, so the same
// text is drawn on screen and in exports.

import type { NodeMetrics, Plan, PlanMaxima, PlanNode } from '../src/core/view';
import { formatBytes, formatCompact, formatCount, formatKb, formatMs, formatPercent, formatRatio, rowsPerLoopText, wasteRatio } from '../src/core/view';

export type Level = 'bad' | 'warn' | 'good' | 'muted' | undefined;

export interface CardRow {
  label: string;
  value: string;
  level?: Level;
}

/** Examined against returned on the node where the reading happens. */
export interface Waste {
  examined: number;
  returned: number;
  /** examined / returned; Infinity when nothing was returned. */
  ratio: number;
  /** What was examined: 'keys', 'docs', 'rows'. */
  unit: string;
  level: Level;
  /** Short text for the card: '1,000 keys → 10 returned'. */
  text: string;
  /** 'returned' when the node itself returned what was kept, 'kept' when a filter further up dropped the rest. */
  verb: string;
}

export interface CardSpec {
  title: string;
  subtitle?: string;
  /** Small tag above the title: the role when it matters (SubPlan, InitPlan, shard name). */
  tag?: string;
  rows: CardRow[];
  waste?: Waste;
  neverExecuted?: boolean;
}

const QUIET_ROLES = new Set(['inputStage', 'inputStages', 'Outer', 'Inner', 'Member', 'Subquery', 'child', 'stage', 'queryPlan', 'winningPlan']);

function levelForFactor(f: number, warnAt: number, badAt: number): Level {
  if (f >= badAt) return 'bad';
  if (f >= warnAt) return 'warn';
  return undefined;
}

/** A MongoDB keyPattern or sort pattern as `{ a: 1, b: -1 }`. */
export function pattern(p: Record<string, number | string> | undefined): string {
  if (!p) return '';
  const parts = Object.entries(p).map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : v}`);
  return `{ ${parts.join(', ')} }`;
}

/** Index bounds summarised on one line: `a [1, 1] · b [MinKey, MaxKey]`, long lists counted. */
export function boundsSummary(b: Record<string, string[]> | undefined): string {
  if (!b) return '';
  const parts: string[] = [];
  for (const [field, intervals] of Object.entries(b)) {
    if (intervals.length === 0) parts.push(`${field} ∅`);
    else if (intervals.length === 1) parts.push(`${field} ${intervals[0]}`);
    else parts.push(`${field} ${intervals.length} intervals`);
  }
  return parts.join(' · ');
}

/**
 * What this node read against what the query kept of it, from the figures derive() set (wastedReads),
 * so the card and the finding about the same node state the same numbers and the same ratio.
 */
export function waste(node: PlanNode, engine: Plan['engine']): Waste | undefined {
  const m = node.metrics;
  const wasted = m.wastedReads;
  if (m.neverExecuted || wasted === undefined || wasted <= 0) return undefined;
  let examined: number;
  let unit: string;
  if (engine === 'mongodb') {
    const keys = m.keysExamined ?? 0;
    const docs = m.docsExamined ?? 0;
    examined = Math.max(keys, docs);
    unit = docs >= keys ? 'docs' : 'keys';
  } else {
    examined = (m.rowsReturned ?? 0) + wasted;
    unit = 'rows';
  }
  const returned = examined - wasted;
  const ratio = wasteRatio(examined, returned);
  const level: Level = ratio >= 10 ? 'bad' : ratio >= 2 ? 'warn' : 'muted';
  // A MongoDB scan whose documents a later $match drops keeps fewer than it returned.
  const verb = engine === 'mongodb' && returned === m.rowsReturned ? 'returned' : 'kept';
  const text = `${formatCompact(examined)} ${unit} → ${formatCompact(returned)} ${verb}`;
  return { examined, returned, ratio, unit, level, text, verb };
}

function mongoRows(node: PlanNode, plan: Plan, rows: CardRow[]): void {
  const m = node.metrics;
  const d = node.details;
  if (m.rowsReturned !== undefined) rows.push({ label: 'returned', value: formatCompact(m.rowsReturned) });
  if (m.keysExamined !== undefined) {
    const seeks = m.seeks !== undefined ? ` · seeks ${formatCompact(m.seeks)}` : '';
    const hops = m.seeks !== undefined && m.seeks > 1 && m.keysExamined > (m.rowsReturned ?? 0);
    rows.push({ label: 'keys examined', value: `${formatCompact(m.keysExamined)}${seeks}`, level: hops ? 'warn' : undefined });
  }
  if (m.docsExamined !== undefined) rows.push({ label: 'docs examined', value: formatCompact(m.docsExamined) });
  if (m.inclusiveTimeMs !== undefined) {
    const share = plan.totals.executionTimeMs !== undefined ? formatPercent(m.exclusiveTimeMs ?? 0, plan.totals.executionTimeMs) : '';
    rows.push({ label: 'time', value: `${formatMs(m.inclusiveTimeMs)}${share && m.exclusiveTimeMs ? ` · own ${share}` : ''}` });
  }
  if (d.indexBounds) rows.push({ label: 'bounds', value: boundsSummary(d.indexBounds) });
  if (d.isMultiKey) rows.push({ label: 'multikey', value: 'yes', level: 'muted' });
  if (d.sortPattern) rows.push({ label: 'sort', value: pattern(d.sortPattern) });
  if (m.memUsageBytes !== undefined) rows.push({ label: 'memory', value: formatBytes(m.memUsageBytes) });
  if (m.usedDisk) rows.push({ label: 'spilled', value: 'to disk', level: 'bad' });
  if (m.limitAmount !== undefined) rows.push({ label: 'limit', value: formatCount(m.limitAmount) });
  if (m.skipAmount !== undefined) rows.push({ label: 'skip', value: formatCount(m.skipAmount), level: m.skipAmount >= 1000 ? 'warn' : undefined });
  if (m.dupsDropped) rows.push({ label: 'dups dropped', value: formatCompact(m.dupsDropped), level: 'muted' });
}

function postgresRows(node: PlanNode, plan: Plan, rows: CardRow[]): void {
  const m = node.metrics;
  const d = node.details;
  const analyzed = plan.postgres?.analyzed !== false && (m.actualRowsPerLoop !== undefined || m.rowsReturned !== undefined || m.neverExecuted);
  if (m.neverExecuted) {
    rows.push({ label: 'rows', value: 'never executed', level: 'muted' });
  } else if (m.actualRowsPerLoop !== undefined && m.loops !== undefined && m.loops > 1) {
    rows.push({ label: 'rows', value: rowsPerLoopText(m.actualRowsPerLoop, m.loops) });
  } else if (m.rowsReturned !== undefined) {
    rows.push({ label: 'rows', value: formatCompact(m.rowsReturned) });
  }
  if (m.plannedRows !== undefined || m.planRowsPerLoop !== undefined) {
    const planned = m.planRowsPerLoop ?? m.plannedRows!;
    let value = formatCompact(planned);
    let level: Level;
    // Factors under 2 are the planner doing well; printing them would drown the ones that matter.
    if (analyzed && m.estimateFactor !== undefined && m.estimateFactor >= 2) {
      const arrow = m.estimateDirection === 'under' ? '↑' : '↓';
      value += ` · ${arrow} ${formatRatio(m.estimateFactor)}`;
      level = levelForFactor(m.estimateFactor, 10, 100);
    }
    rows.push({ label: analyzed ? 'planned' : 'est. rows', value, level });
  }
  if (m.exclusiveTimeMs !== undefined) {
    const whole = plan.totals.executionTimeMs ?? plan.root.metrics.inclusiveTimeMs ?? 0;
    const share = formatPercent(m.exclusiveTimeMs, whole);
    const p = whole > 0 ? m.exclusiveTimeMs / whole : 0;
    rows.push({ label: 'own time', value: `${formatMs(m.exclusiveTimeMs)}${share ? ` · ${share}` : ''}`, level: p >= 0.5 ? 'bad' : p >= 0.2 ? 'warn' : undefined });
  } else if (!analyzed && m.totalCost !== undefined) {
    rows.push({ label: 'cost', value: formatCompact(m.totalCost) });
  }
  if (m.rowsRemovedByFilter !== undefined) rows.push({ label: 'removed by filter', value: formatCompact(m.rowsRemovedByFilter) });
  if (m.rowsRemovedByJoinFilter !== undefined) rows.push({ label: 'removed by join filter', value: formatCompact(m.rowsRemovedByJoinFilter) });
  if (m.rowsRemovedByIndexRecheck !== undefined) rows.push({ label: 'removed by recheck', value: formatCompact(m.rowsRemovedByIndexRecheck) });
  if (m.heapFetches !== undefined) {
    const rowsOut = m.rowsReturned ?? 0;
    rows.push({ label: 'heap fetches', value: formatCompact(m.heapFetches), level: m.heapFetches > 0 && m.heapFetches >= rowsOut * 0.1 ? 'warn' : undefined });
  }
  if (m.indexSearches !== undefined && m.indexSearches > 1) rows.push({ label: 'index searches', value: formatCompact(m.indexSearches) });
  const b = m.buffers;
  if (b) {
    const parts: string[] = [];
    if (b.sharedHit) parts.push(`hit ${formatCompact(b.sharedHit)}`);
    if (b.sharedRead) parts.push(`read ${formatCompact(b.sharedRead)}`);
    if (b.sharedDirtied) parts.push(`dirtied ${formatCompact(b.sharedDirtied)}`);
    if (b.sharedWritten) parts.push(`written ${formatCompact(b.sharedWritten)}`);
    if (parts.length > 0) rows.push({ label: 'shared', value: parts.join(' · ') });
    const local: string[] = [];
    if (b.localHit) local.push(`hit ${formatCompact(b.localHit)}`);
    if (b.localRead) local.push(`read ${formatCompact(b.localRead)}`);
    if (local.length > 0) rows.push({ label: 'local', value: local.join(' · ') });
    const temp: string[] = [];
    if (b.tempRead) temp.push(`read ${formatCompact(b.tempRead)}`);
    if (b.tempWritten) temp.push(`written ${formatCompact(b.tempWritten)}`);
    if (temp.length > 0) rows.push({ label: 'temp', value: temp.join(' · '), level: 'warn' });
  }
  if (m.sortMethod !== undefined) {
    const disk = m.sortSpaceType === 'Disk' || /external/i.test(m.sortMethod);
    const space = m.sortSpaceKb !== undefined ? ` · ${formatKb(m.sortSpaceKb)}${m.sortSpaceType ? ` ${m.sortSpaceType.toLowerCase()}` : ''}` : '';
    rows.push({ label: 'sort', value: `${m.sortMethod}${space}`, level: disk ? 'bad' : undefined });
  }
  if (m.hashBatches !== undefined && (m.hashBatches > 1 || (m.originalHashBatches ?? 1) > 1)) {
    const orig = m.originalHashBatches !== undefined && m.originalHashBatches !== m.hashBatches ? ` (planned ${m.originalHashBatches})` : '';
    rows.push({ label: 'batches', value: `${formatCompact(m.hashBatches)}${orig}`, level: 'bad' });
  }
  if (m.diskUsageKb !== undefined && m.diskUsageKb > 0) rows.push({ label: 'disk', value: formatKb(m.diskUsageKb), level: 'bad' });
  if (m.peakMemoryKb !== undefined) rows.push({ label: 'memory', value: formatKb(m.peakMemoryKb), level: 'muted' });
  if (m.workersPlanned !== undefined || m.workersLaunched !== undefined) {
    const launched = m.workersLaunched ?? 0;
    const planned = m.workersPlanned ?? launched;
    rows.push({ label: 'workers', value: `${launched} of ${planned} launched`, level: launched < planned ? 'warn' : undefined });
  }
  if (m.lossyHeapBlocks) rows.push({ label: 'lossy blocks', value: formatCompact(m.lossyHeapBlocks), level: 'warn' });
  if (m.walBytes !== undefined) rows.push({ label: 'WAL', value: formatBytes(m.walBytes), level: 'muted' });
  const cond = d.conditions && (d.conditions['Index Cond'] ?? d.conditions['Hash Cond'] ?? d.conditions['Merge Cond'] ?? d.conditions['Filter'] ?? d.conditions['Join Filter'] ?? d.conditions['Recheck Cond']);
  if (cond !== undefined) rows.push({ label: 'cond', value: cond, level: 'muted' });
  else if (d.sortKey && d.sortKey.length > 0) rows.push({ label: 'key', value: d.sortKey.join(', '), level: 'muted' });
  else if (d.groupKey && d.groupKey.length > 0) rows.push({ label: 'group', value: d.groupKey.join(', '), level: 'muted' });
}

function subtitleOf(node: PlanNode, engine: Plan['engine']): string | undefined {
  const d = node.details;
  if (engine === 'mongodb') {
    if (d.indexName || d.keyPattern) return [d.indexName, d.keyPattern ? pattern(d.keyPattern) : ''].filter(Boolean).join(' ');
    if (node.label && node.label !== node.kind) return node.label.startsWith(node.kind) ? node.label.slice(node.kind.length).trim() || undefined : node.label;
    return undefined;
  }
  const parts: string[] = [];
  if (d.indexName) parts.push(`using ${d.indexName}`);
  if (d.relationName) {
    const rel = d.schema && d.schema !== 'public' ? `${d.schema}.${d.relationName}` : d.relationName;
    parts.push(`on ${rel}${d.alias && d.alias !== d.relationName ? ` ${d.alias}` : ''}`);
  } else if (d.cteName) {
    parts.push(`on ${d.cteName}${d.alias && d.alias !== d.cteName ? ` ${d.alias}` : ''}`);
  } else if (d.alias) {
    parts.push(`as ${d.alias}`);
  }
  if (parts.length > 0) return parts.join(' ');
  if (node.label && node.label !== node.kind && !node.label.startsWith(node.kind)) return node.label;
  if (node.label.startsWith(node.kind) && node.label.length > node.kind.length) return node.label.slice(node.kind.length).trim();
  return undefined;
}

function titleOf(node: PlanNode, engine: Plan['engine']): string {
  const d = node.details;
  if (engine === 'postgres') {
    // "Hash Join" with Join Type "Left" reads as "Hash Left Join", like PostgreSQL's text format.
    if (d.joinType && d.joinType !== 'Inner' && /\bJoin$/.test(node.kind) && !node.kind.includes(d.joinType)) {
      return node.kind.replace(/ Join$/, ` ${d.joinType} Join`);
    }
    if (d.joinType && d.joinType !== 'Inner' && node.kind === 'Nested Loop') return `Nested Loop ${d.joinType} Join`;
    if (d.strategy && node.kind === 'Aggregate') {
      const s: Record<string, string> = { Hashed: 'HashAggregate', Sorted: 'GroupAggregate', Mixed: 'MixedAggregate' };
      const t = s[d.strategy];
      if (t) return t;
    }
    if (d.parallelAware && !node.kind.startsWith('Parallel')) return `Parallel ${node.kind}`;
  }
  return node.kind;
}

function tagOf(node: PlanNode): string | undefined {
  const d = node.details;
  if (d.shardName) return `shard ${d.shardName}`;
  if (d.subplanName) return d.subplanName;
  if (d.cteName && node.role === 'InitPlan') return `CTE ${d.cteName}`;
  if (node.role && !QUIET_ROLES.has(node.role)) return node.role;
  return undefined;
}

/** The card of one node. */
export function cardSpec(node: PlanNode, plan: Plan): CardSpec {
  const rows: CardRow[] = [];
  if (plan.engine === 'mongodb') mongoRows(node, plan, rows);
  else postgresRows(node, plan, rows);
  const spec: CardSpec = { title: titleOf(node, plan.engine), rows };
  const sub = subtitleOf(node, plan.engine);
  if (sub && sub !== spec.title && !spec.title.endsWith(sub)) spec.subtitle = sub;
  const tag = tagOf(node);
  if (tag) spec.tag = tag;
  const w = waste(node, plan.engine);
  if (w) spec.waste = w;
  if (node.metrics.neverExecuted) spec.neverExecuted = true;
  return spec;
}

export type HeatMetric = 'none' | 'waste' | 'exclusiveTime' | 'rows' | 'keysExamined' | 'docsExamined' | 'sharedBlocks';

export const HEAT_LABELS: Record<HeatMetric, string> = {
  none: 'No heat',
  waste: 'Wasted reads',
  exclusiveTime: 'Own time',
  rows: 'Rows',
  keysExamined: 'Keys examined',
  docsExamined: 'Docs examined',
  sharedBlocks: 'Shared buffers',
};

/** Each heat metric's figure on a node, and its plan-wide maximum in plan.maxima (set by derive()). */
const HEAT_FIELDS: Record<Exclude<HeatMetric, 'none'>, readonly [keyof NodeMetrics, keyof PlanMaxima]> = {
  waste: ['wastedReads', 'wastedReads'],
  exclusiveTime: ['exclusiveTimeMs', 'exclusiveTimeMs'],
  rows: ['rowsReturned', 'rowsReturned'],
  keysExamined: ['keysExamined', 'keysExamined'],
  docsExamined: ['docsExamined', 'docsExamined'],
  sharedBlocks: ['exclusiveSharedBlocks', 'sharedBlocks'],
};

/** The value a node is coloured by, or undefined when the node has no such figure. */
export function heatValue(node: PlanNode, metric: HeatMetric): number | undefined {
  const f = metric === 'none' ? undefined : HEAT_FIELDS[metric];
  const v = f ? node.metrics[f[0]] : undefined;
  return typeof v === 'number' ? v : undefined;
}

/** The plan-wide maximum of a heat metric. */
export function heatMax(plan: Plan, metric: HeatMetric): number {
  const f = metric === 'none' ? undefined : HEAT_FIELDS[metric];
  return f ? plan.maxima[f[1]] : 0;
}

/**
 * The least plan-wide maximum that paints a card at full heat. Heat is relative to the hottest node, so
 * without a floor a plan that ran in 0.4 ms shows its 0.3 ms node as deep red as a 3-second sort; with
 * it, a node is hot only when its figure is both the plan's largest and large in itself.
 */
export const HEAT_FLOOR: Record<HeatMetric, number> = {
  none: 1,
  waste: 1_000,
  exclusiveTime: 20,
  rows: 10_000,
  keysExamined: 10_000,
  docsExamined: 10_000,
  sharedBlocks: 1_000,
};

/** How hot a node is, from 0 to 1: its figure over the plan's maximum or the metric's floor, whichever is larger. */
export function heatFraction(node: PlanNode, plan: Plan, metric: HeatMetric): number {
  const v = heatValue(node, metric);
  if (v === undefined || !(v > 0)) return 0;
  return Math.min(1, v / Math.max(heatMax(plan, metric), HEAT_FLOOR[metric]));
}

/** Whether any node of the plan reports a figure for the metric. */
function measures(plan: Plan, metric: HeatMetric): boolean {
  return plan.nodes.some((n) => heatValue(n, metric) !== undefined);
}

/** The metrics worth offering for a plan: those with a non-zero maximum. */
export function availableHeat(plan: Plan): HeatMetric[] {
  const all: HeatMetric[] = ['waste', 'exclusiveTime', 'rows', 'keysExamined', 'docsExamined', 'sharedBlocks'];
  // Wasted reads is offered whenever the plan measures them, even when there are none: that is the news.
  return all.filter((h) => (h === 'waste' ? measures(plan, h) : heatMax(plan, h) > 0));
}

/** The metric a plan opens with: where the work is most visible for its engine. */
export function defaultHeat(plan: Plan): HeatMetric {
  const avail = availableHeat(plan);
  // MongoDB opens on what was read for nothing, so an efficient plan is not painted red for the
  // documents it had to read; PostgreSQL on where the time went.
  const order: HeatMetric[] = plan.engine === 'mongodb' ? ['waste', 'docsExamined', 'keysExamined', 'exclusiveTime', 'rows'] : ['exclusiveTime', 'sharedBlocks', 'rows'];
  return order.find((h) => avail.includes(h)) ?? 'none';
}
