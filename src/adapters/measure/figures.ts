// What a measurement reports, for both engines: the figures of one run (MongoDB's keys, documents and
// in-memory sort; a plan's stages as one line), the verdict a measured suggestion carries with the
// figures behind it, the steps and progress a front end shows while it runs.

import type { Advice, MeasuredWork, Plan, PlanNode, Suggestion, Tournament, Verification } from '../../core/index';
import { formatCount, indexLabel } from '../../core/index';

/** The work unit of a MongoDB measurement. */
export const MONGO_WORK_UNIT = 'keys + documents examined + documents sorted in memory';

/** The steps of a MongoDB measurement, for a progress line. */
export type MeasureStep = 'copy' | 'indexes' | 'explain' | 'drop';

/** Progress of a measurement: candidates measured so far of those to measure. */
export interface MeasureProgress {
  measured: number;
  of: number;
}

/** What one explain of a MongoDB measurement counted. */
export interface MeasuredNumbers {
  keysExamined: number;
  docsExamined: number;
  nReturned: number;
  /** Documents (or keys) that entered a blocking SORT; 0 without one. */
  sorted: number;
  blockingSort: boolean;
  /** keysExamined + docsExamined + sorted: the unit a MongoDB measurement compares. */
  work: number;
  /** The stages, as "LIMIT > FETCH > IXSCAN {a: 1}". */
  plan: string;
  /** The index scanned, or undefined for a collection scan. */
  index?: string;
}

/** A suggestion's measured verdict with the facts behind its figures (a subtype of the core's Verification). */
export type MeasuredVerdict = Extract<Verification, { status: 'verified' | 'refuted' | 'failed' }> & {
  /** MongoDB: documents in the sample the numbers rest on, and the collection's size. */
  sampleSize?: number;
  collectionSize?: number;
  /** The plan without the index and with it. */
  planBefore?: string;
  planAfter?: string;
  /** The planner chose the index by itself (MongoDB: unhinted once it existed; PostgreSQL: in the plan). */
  usedByPlanner?: boolean;
  numbersBefore?: MeasuredNumbers;
  numbersAfter?: MeasuredNumbers;
};

/** An index must cut the work (or the estimated cost) by at least this share to count as an improvement. */
export const BETTER = 0.9;

export const fmt = formatCount;

// ---- plans --------------------------------------------------------------------------------------------

/** The plan's stages as one line: "LIMIT > FETCH > IXSCAN {a: 1}", branches in parentheses. */
export function planShape(plan: Plan): string {
  const label = (n: PlanNode): string => {
    if (plan.engine === 'mongodb') {
      const kp = n.details.keyPattern;
      return kp ? `${n.kind} {${Object.entries(kp).map(([k, v]) => `${k}: ${v}`).join(', ')}}` : n.kind;
    }
    const on = n.details.indexName !== undefined ? ` using ${n.details.indexName}` : n.details.relationName !== undefined ? ` on ${n.details.relationName}` : '';
    return `${n.kind}${on}`;
  };
  const draw = (n: PlanNode): string => {
    if (n.children.length === 0) return label(n);
    if (n.children.length === 1) return `${label(n)} > ${draw(n.children[0]!)}`;
    return `${label(n)}(${n.children.map(draw).join(', ')})`;
  };
  return draw(plan.root);
}

/** Keys, documents and in-memory sort of a MongoDB executionStats plan. */
export function mongoNumbers(plan: Plan): MeasuredNumbers {
  const t = plan.totals;
  const keys = t.keysExamined ?? sum(plan.nodes, (n) => n.metrics.keysExamined);
  const docs = t.docsExamined ?? sum(plan.nodes, (n) => n.metrics.docsExamined);
  const sorts = plan.nodes.filter((n) => n.kind === 'SORT' || n.kind === 'SORT_KEY_GENERATOR' || n.kind === '$sort');
  const sorted = sorts.reduce((acc, n) => acc + (n.children[0]?.metrics.rowsReturned ?? n.metrics.rowsReturned ?? 0), 0);
  const scans = plan.nodes.filter((n) => n.details.indexName !== undefined);
  const out: MeasuredNumbers = {
    keysExamined: keys,
    docsExamined: docs,
    nReturned: t.nReturned ?? plan.root.metrics.rowsReturned ?? 0,
    sorted,
    blockingSort: sorts.length > 0,
    work: keys + docs + sorted,
    plan: planShape(plan),
  };
  if (scans.length > 0) out.index = scans[0]!.details.indexName!;
  return out;
}

function sum(nodes: PlanNode[], f: (n: PlanNode) => number | undefined): number {
  return nodes.reduce((acc, n) => acc + (f(n) ?? 0), 0);
}

export function numbersText(n: MeasuredNumbers): string {
  return `${fmt(n.keysExamined)} keys + ${fmt(n.docsExamined)} documents${n.blockingSort ? ` + ${fmt(n.sorted)} sorted in memory` : ''} = ${fmt(n.work)}`;
}

/**
 * What a trial on a sample cannot show when the sample holds none of the documents the query returns: the
 * plan's shape is measured, its work on matching documents is not ("" when the sample returned some).
 */
export function emptySampleNote(before: MeasuredNumbers, after: MeasuredNumbers): string {
  if (before.nReturned > 0 || after.nReturned > 0) return '';
  return ' The sample holds no document the query returns, so these figures show the plan each way, not its work on matching documents.';
}

/** Stores a measured verdict with its extra facts (MeasuredVerdict is a subtype of the core's Verification). */
export function setVerdict(s: Suggestion, v: MeasuredVerdict): void {
  s.verification = v;
}

export function measuredWork(n: MeasuredNumbers): MeasuredWork {
  const out: MeasuredWork = { work: n.work, keysExamined: n.keysExamined, docsExamined: n.docsExamined, sorted: n.sorted, rows: n.nReturned, blockingSort: n.blockingSort, plan: n.plan };
  if (n.index !== undefined) out.index = n.index;
  return out;
}

export function numbersOf(m: MeasuredWork): MeasuredNumbers {
  const out: MeasuredNumbers = { keysExamined: m.keysExamined ?? 0, docsExamined: m.docsExamined ?? 0, nReturned: m.rows, sorted: m.sorted ?? 0, blockingSort: m.blockingSort, work: m.work, plan: m.plan };
  if (m.index !== undefined) out.index = m.index;
  return out;
}

/** The measured suggestions' verdicts get the figures behind them, as the panel's Verify shows them. */
export function attachFigures(advice: Advice, t: Tournament): void {
  for (const s of advice.suggestions) {
    if (s.verification.status === 'not-run' || s.verification.method !== 'sampled') continue;
    const key = JSON.stringify(s.index ?? null);
    const e = t.ranking.find((x) => x.measured !== undefined && JSON.stringify(x.index ?? null) === key && (x.rewrite !== undefined) === !s.servesQueryAsWritten);
    if (!e?.measured) continue;
    const v: MeasuredVerdict = { ...s.verification, sampleSize: t.sample.size, collectionSize: t.sample.total, planAfter: e.measured.plan };
    if (t.engine === 'mongodb') v.numbersAfter = numbersOf(e.measured);
    if (t.today) {
      v.planBefore = t.today.plan;
      if (t.engine === 'mongodb') v.numbersBefore = numbersOf(t.today);
    }
    if (t.plannerChoice !== undefined) v.usedByPlanner = t.plannerChoice === indexLabel(e.index);
    s.verification = v;
  }
}
