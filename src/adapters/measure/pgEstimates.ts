// The planner's estimates of the PostgreSQL suggestions: plain EXPLAIN without and with each index,
// hypothetical through HypoPG when it is installed (nothing is built), otherwise, only when the user allows
// it, built inside a transaction that is rolled back (the build locks writes to the table while it runs).
// What is measured when the candidates cannot be run on a copy (pgCandidates.ts), or when only the
// estimates are asked for.

import type { Advice, PgIndexSpec, Plan, Suggestion } from '../../core/index';
import { AdapterError } from '../errors';
import type { PostgresConnection } from '../postgres';
import { BETTER, fmt, planShape, setVerdict, type MeasuredVerdict } from './figures';

const DEFAULT_TIMEOUT_MS = 30_000;

export interface PgEstimatesOptions {
  /** Without HypoPG: build each index inside a transaction that is rolled back (it locks writes while it builds). */
  allowBuild?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Suggestions tried, in rank order. Default 3. */
  maxSuggestions?: number;
  /** Names of the indexes that exist, so a new index is told apart in the plan. */
  existingNames?: string[];
}

export interface PgEstimatesReport {
  method: 'hypopg' | 'trial-index' | 'none';
  notes: string[];
  warnings: string[];
}

function rootCost(plan: Plan): number {
  return plan.root.metrics.totalCost ?? NaN;
}

function indexNames(plan: Plan): Set<string> {
  return new Set(plan.nodes.map((n) => n.details.indexName).filter((x): x is string => x !== undefined));
}

/** The CREATE INDEX a rolled-back build can run: CONCURRENTLY cannot run inside a transaction, and one statement has no semicolon. */
export function rolledBackDdl(createText: string): string {
  return createText.replace(/\bCONCURRENTLY\s+/i, '').replace(/;\s*$/, '');
}

/**
 * Fills the verdicts of the PostgreSQL suggestions: plain EXPLAIN of the statement without and with
 * each index (HypoPG, or a rolled-back build when allowed). Throws AdapterError only for a lost connection or
 * a cancel; a failed check is reported on its suggestion.
 */
export async function measurePgEstimates(conn: PostgresConnection, sql: string, advice: Advice, opts: PgEstimatesOptions = {}): Promise<PgEstimatesReport> {
  const report: PgEstimatesReport = { method: 'none', notes: [], warnings: [] };
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const common = { timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) };
  const hypo = await conn.hypopg();
  const pass = (err: unknown): void => {
    if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth')) throw err;
  };
  let before: Plan;
  try {
    const r = await conn.explain(sql, common);
    if (!r.load.ok) {
      report.notes.push(`The plan of the statement could not be read, so nothing was verified: ${r.load.refusal}`);
      return report;
    }
    before = r.load.plan;
  } catch (err) {
    pass(err);
    report.notes.push(`The statement could not be explained, so nothing was verified: ${err instanceof Error ? err.message : String(err)}`);
    return report;
  }
  const known = new Set([...(opts.existingNames ?? []), ...indexNames(before)]);
  const costBefore = rootCost(before);
  const shapeBefore = planShape(before);
  const tables = new Set<string>();
  let declined = false;

  /** The statement's plan with one index added; `declined` without HypoPG and without consent to build. */
  const withIndex = async (spec: PgIndexSpec, ddl: string, text: string): Promise<{ plan: Plan; method: 'hypopg' | 'trial-index' } | { error: string } | 'declined'> => {
    const hypothetical = hypo.installed && spec.method === 'btree';
    if (!hypothetical && !opts.allowBuild) {
      declined = true;
      return 'declined';
    }
    try {
      const r = await conn.explain(text, { ...common, indexes: { ddl: [ddl], mode: hypothetical ? 'hypothetical' : 'transaction' } });
      if (!r.load.ok) return { error: r.load.refusal };
      if (!hypothetical) tables.add(spec.table);
      return { plan: r.load.plan, method: hypothetical ? 'hypopg' : 'trial-index' };
    } catch (err) {
      pass(err);
      return { error: err instanceof Error ? err.message : String(err) };
    }
  };
  const how = (m: 'hypopg' | 'trial-index') => (m === 'hypopg' ? 'a hypothetical index (HypoPG, nothing built)' : 'the index built inside a transaction that was rolled back');

  let tried = 0;
  const measured: { s: Suggestion; used: boolean; cost: number; plan: Plan; method: 'hypopg' | 'trial-index' }[] = [];
  for (const s of advice.suggestions) {
    if (tried >= (opts.maxSuggestions ?? 3)) break;
    if (s.action !== 'create' || !s.createText || s.index?.engine !== 'postgres') continue;
    let text = sql;
    if (!s.servesQueryAsWritten) {
      const rw = s.rewrites.find((r) => (r.parameters ?? []).length === 0);
      if (!rw) {
        report.notes.push(`Suggestion ${s.rank} serves only the rewritten query, which needs values from the previous page: it was not verified.`);
        continue;
      }
      text = rw.text;
    }
    tried++;
    const got = await withIndex(s.index, rolledBackDdl(s.createText), text);
    if (got === 'declined') continue;
    if ('error' in got) {
      s.verification = { status: 'failed', method: hypo.installed && s.index.method === 'btree' ? 'hypopg' : 'trial-index', message: `The check failed: ${got.error}` };
      continue;
    }
    const after = got.plan;
    const newNames = [...indexNames(after)].filter((n) => !known.has(n));
    const used = newNames.length > 0;
    const costAfter = rootCost(after);
    const better = used && costAfter < costBefore * BETTER;
    const rewritten = text !== sql ? ' (the rewritten query)' : '';
    const v: MeasuredVerdict = {
      status: better ? 'verified' : 'refuted',
      method: got.method === 'hypopg' ? 'hypopg' : 'trial-index',
      before: costBefore,
      after: costAfter,
      unit: 'estimated cost',
      planBefore: shapeBefore,
      planAfter: planShape(after),
      usedByPlanner: used,
      message: used
        ? `${better ? 'Verified' : 'Not better'} with ${how(got.method)}: estimated cost ${fmt(costBefore)} → ${fmt(costAfter)}${rewritten}; plan ${shapeBefore} → ${planShape(after)}.`
        : `The planner did not use the index${rewritten}: estimated cost ${fmt(costBefore)} without it, ${fmt(costAfter)} with ${how(got.method)}; the plan stays ${planShape(after)}.`,
    };
    s.verification = v;
    measured.push({ s, used, cost: costAfter, plan: after, method: got.method });
  }

  for (const s of advice.suggestions) {
    if (s.action === 'keep' && s.keep) {
      const uses = indexNames(before).has(s.keep.name);
      setVerdict(s, {
        status: uses ? 'verified' : 'refuted',
        method: 'hinted-explain',
        before: costBefore,
        after: costBefore,
        unit: 'estimated cost',
        planBefore: shapeBefore,
        planAfter: shapeBefore,
        usedByPlanner: uses,
        message: uses
          ? `Verified: the planner already uses ${s.keep.name} (estimated cost ${fmt(costBefore)}; plan ${shapeBefore}).`
          : `The planner does not choose ${s.keep.name} for this statement today (plan ${shapeBefore}, estimated cost ${fmt(costBefore)}).`,
      });
    }
    if (s.action === 'none') {
      const next = advice.suggestions.find((x) => x.rank > s.rank && x.action === 'create' && x.servesQueryAsWritten && x.createText && x.index?.engine === 'postgres');
      if (!next) continue;
      const m = measured.find((x) => x.s === next);
      const got = m ? { plan: m.plan, method: m.method } : await withIndex(next.index as PgIndexSpec, rolledBackDdl(next.createText!), sql);
      if (got === 'declined' || 'error' in got) continue;
      const used = [...indexNames(got.plan)].some((n) => !known.has(n));
      const costWith = rootCost(got.plan);
      const good = !used || costWith >= costBefore * BETTER;
      setVerdict(s, {
        status: good ? 'verified' : 'refuted',
        method: got.method === 'hypopg' ? 'hypopg' : 'trial-index',
        before: costWith,
        after: costBefore,
        unit: 'estimated cost',
        planBefore: planShape(got.plan),
        planAfter: shapeBefore,
        usedByPlanner: !used,
        message: good
          ? `Verified with ${how(got.method)}: ${used ? `the index would cost ${fmt(costWith)} against ${fmt(costBefore)} without it` : `even with the index the planner keeps ${shapeBefore} (estimated cost ${fmt(costBefore)})`}.`
          : `Refuted with ${how(got.method)}: the planner would use the index, at an estimated cost of ${fmt(costWith)} against ${fmt(costBefore)} without it.`,
      });
    }
  }

  if (measured.some((m) => m.method === 'trial-index') || tables.size > 0) {
    report.method = 'trial-index';
    report.warnings.push(`Each index measured was built inside a transaction that was rolled back, so nothing remains; while it was being built it locked writes to ${[...tables].join(', ')}.`);
  } else if (measured.length > 0) {
    report.method = 'hypopg';
  }
  if (declined) {
    report.notes.push(hypo.installed
      ? 'Some suggestions were not verified: HypoPG cannot simulate them, and a build inside a rolled-back transaction needs your consent because it locks writes to the table while it builds.'
      : `The suggestions were not verified: HypoPG is not installed in this database${hypo.available ? ' (CREATE EXTENSION hypopg would add it)' : ''}, and a build inside a rolled-back transaction needs your consent because it locks writes to the table while it builds.`);
  }
  return report;
}
