// `qpi check --measure`: the measured advice `qpi advise --uri` gives, for the queries that failed the
// gate, within one time budget for the whole run. The advice service measures (PostgreSQL: the candidates
// on temporary copies inside a rolled-back transaction; MongoDB: on a sample in a scratch collection that
// is always dropped, which --measure consents to); this file only chooses the queries, shares the
// budget out and reads the measured first suggestion into what the gate's outputs show.

import type { LiveAdvice } from '../../adapters/advise';
import { isAdapterError } from '../../adapters/errors';
import { entryLabel, formatLimit, indexLabel, workText, type CheckMeasurement, type GateDecision, type MeasuredWork, type QueryRun } from '../../core/index';
import type { CiDatabases } from './servers';

/** The default time budget of all the measurements of one run. */
export const DEFAULT_MEASURE_BUDGET_MS = 60_000;

/** The rules a measurement cannot speak to: the gate's own bookkeeping, and a table that is not there. */
const NOT_MEASURABLE = new Set(['qpi.check.no-longer-explained', 'qpi.check.waiver-expired', 'qpi.does-not-exist']);

/** The runs `--measure` measures: explained, failing on a finding or a regression a missing index can cause. */
export function runsToMeasure(d: GateDecision): QueryRun[] {
  return d.verdicts.filter((v) => v.outcome === 'failed' && v.run.status === 'explained' && v.results.some((r) => r.fails && !NOT_MEASURABLE.has(r.rule))).map((v) => v.run);
}

export interface MeasureOptions {
  /** The query text each run was explained with; absent for one explained with $n parameters bound. */
  textOf: (key: string) => string | undefined;
  budgetMs: number;
  timeoutMs: number;
  progress?: (line: string) => void;
}

/** Measures each run in turn, setting `run.measurement`; none starts once the budget is spent. */
export async function measureRuns(runs: readonly QueryRun[], dbs: CiDatabases, o: MeasureOptions): Promise<void> {
  const until = Date.now() + o.budgetMs;
  for (const [i, run] of runs.entries()) {
    o.progress?.(`qpi check: measuring ${i + 1}/${runs.length} ${run.file}`);
    const text = o.textOf(run.key);
    if (text === undefined) {
      run.measurement = { status: 'not-measured', reason: 'the statement has $n parameters the code binds at run time, and the measurement runs the query on real values' };
      continue;
    }
    if (Date.now() >= until) {
      run.measurement = { status: 'not-measured', reason: `the time budget of the measurements (--measure-budget-ms, ${formatLimit(o.budgetMs)}) ran out before it` };
      continue;
    }
    try {
      const live = await dbs.measure(run.engine, text, { timeoutMs: Math.max(1, Math.min(o.timeoutMs, until - Date.now())), until });
      run.measurement = typeof live === 'string' ? { status: 'not-measured', reason: live } : measurementOf(live);
    } catch (err) {
      if (!isAdapterError(err)) throw err;
      run.measurement = { status: 'not-measured', reason: err.message };
    }
  }
}

/** The measured first suggestion of advice given with measurement, with today's work and the work with it. */
export function measurementOf(live: LiveAdvice): CheckMeasurement {
  const advice = live.advice;
  if (advice.refusal !== undefined) return { status: 'not-measured', reason: advice.refusal };
  if (live.notIndexable !== undefined) return { status: 'not-measured', reason: live.notIndexable };
  const m = live.measurement;
  if (!m || m.status !== 'measured') return { status: 'not-measured', reason: m?.status === 'not-measured' ? m.reason : 'nothing was measured' };
  const t = m.tournament;
  const first = advice.suggestions[0];
  if (!first) return { status: 'not-measured', reason: t.verdict };
  // The tournament's entry of the first suggestion: its winner, unless the suggestions were not built from it.
  const same = (e: { index?: unknown; createText?: string }): boolean => (first.createText !== undefined && e.createText === first.createText) || (first.index !== undefined && e.index !== undefined && indexLabel(first.index) === indexLabel(e.index as typeof first.index));
  const entry = t.winner && same(t.winner) ? t.winner : t.ranking.find(same) ?? (first.action === 'none' ? t.winner : undefined);
  const figures = (w: MeasuredWork | undefined) => (w ? { work: w.work, text: workText(w), plan: w.plan } : undefined);
  const before = figures(t.today);
  const after = figures(entry?.measured);
  const index = first.index ? indexLabel(first.index) : entry ? entryLabel(entry) : 'no index (full scan)';
  return {
    status: 'measured',
    index,
    ...(first.createText !== undefined ? { createIndex: first.createText } : {}),
    action: first.action,
    label: t.label,
    unit: t.unit,
    ...(before ? { before } : {}),
    ...(after ? { after } : {}),
    confirms: first.action === 'create' && before !== undefined && after !== undefined && after.work < before.work,
  };
}
