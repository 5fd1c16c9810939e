// The findings: what a plan wastes, where, and by how much. `analyze` runs the engine's rules over every
// node and orders the results; `summarize` turns them into the one-line verdict the CLI and the compare
// view print. Codes, severities and thresholds are documented in docs/findings.md.

import type { Finding, Plan, Severity } from '../model';
import { mongoNodeRules, mongoPlanRules } from './mongo';
import { postgresNodeRules, postgresPlanRules } from './postgres';
import { formatCount, formatMs, plural } from '../format';
import { buildCtx, type Ctx, MAX_MISESTIMATES, type NodeRule, num, type PlanRule, type Scored, severityRank } from './util';

export { filterFields } from './mongo';

/**
 * Finds the waste in a plan. Never throws: a check that fails on an unexpected plan is skipped and
 * reported as one `qpi.rule-error` finding, so the other checks still speak.
 */
export function analyze(plan: Plan): Finding[] {
  let ctx: Ctx;
  try {
    ctx = buildCtx(plan);
  } catch (err) {
    return [ruleError(['reading the plan tree'], err)];
  }
  const nodeRules: NodeRule[] = plan.engine === 'mongodb' ? mongoNodeRules : postgresNodeRules;
  const planRules: PlanRule[] = plan.engine === 'mongodb' ? mongoPlanRules : postgresPlanRules;
  const scored: Scored[] = [];
  const failed = new Set<string>();
  let firstError: unknown;
  for (const node of ctx.nodes) {
    for (const rule of nodeRules) {
      try {
        const s = rule.run(ctx, node);
        if (s) scored.push(s);
      } catch (err) {
        failed.add(rule.code);
        firstError ??= err;
      }
    }
  }
  for (const rule of planRules) {
    try {
      const s = rule.run(ctx);
      if (s) scored.push(s);
    } catch (err) {
      failed.add(rule.code);
      firstError ??= err;
    }
  }
  const kept = capMisestimates(scored).filter((s) => {
    if (!s.finish) return true;
    try {
      s.finish();
      return true;
    } catch (err) {
      failed.add(s.finding.code);
      firstError ??= err;
      return false;
    }
  });
  const efficient = efficiency(ctx, kept);
  if (efficient) kept.push(efficient);
  const findings = order(kept);
  if (failed.size > 0) findings.push(ruleError([...failed], firstError));
  return findings;
}

function capMisestimates(scored: Scored[]): Scored[] {
  const mis = scored.filter((s) => s.finding.code === 'pg.misestimate');
  if (mis.length <= MAX_MISESTIMATES) return scored;
  const keep = new Set(mis.sort((a, b) => (b.finding.numbers['factor'] ?? 0) - (a.finding.numbers['factor'] ?? 0)).slice(0, MAX_MISESTIMATES));
  return scored.filter((s) => s.finding.code !== 'pg.misestimate' || keep.has(s));
}

/** Severity first, then the amount of waste, then position in the tree: the order every view shows. */
function order(scored: Scored[]): Finding[] {
  // Severity and goodness are one number per finding, worked out once rather than in every comparison
  // (thousands of findings on big plans). Array sort is stable, so equal findings keep the order the
  // rules produced them in.
  const rank = new Int8Array(scored.length);
  scored.forEach((s, i) => {
    rank[i] = severityRank(s.finding.severity) * 2 + (s.finding.good === true ? 1 : 0);
  });
  const at = scored.map((_s, i) => i);
  at.sort((i, j) => {
    if (rank[i] !== rank[j]) return rank[i]! - rank[j]!;
    const a = scored[i]!;
    const b = scored[j]!;
    if (b.score !== a.score) return b.score - a.score;
    return (a.finding.nodeId ?? -1) - (b.finding.nodeId ?? -1);
  });
  return at.map((i) => scored[i]!.finding);
}

function ruleError(codes: string[], err: unknown): Finding {
  const msg = err instanceof Error ? err.message : String(err);
  return {
    code: 'qpi.rule-error',
    severity: 'info',
    title: 'Some checks could not run',
    message: `The ${codes.join(', ')} check${codes.length === 1 ? '' : 's'} failed on this plan because of an internal error (${msg.slice(0, 120)}); the findings shown come from the checks that ran.`,
    numbers: {},
  };
}

function isWaste(f: Finding): boolean {
  return f.good !== true && f.severity !== 'info';
}

/** A "no waste" finding: good, informational, scored nothing. */
function noWaste(code: string, title: string, message: string, numbers: Record<string, number>): Scored {
  return { score: 0, finding: { code, severity: 'info', good: true, title, message, numbers } };
}

/** The "no waste" finding, for an executed plan where no check found anything to fix. */
function efficiency(ctx: Ctx, scored: Scored[]): Scored | undefined {
  if (!ctx.executed) return undefined;
  if (scored.some((s) => isWaste(s.finding))) return undefined;
  const t = ctx.plan.totals;
  if (ctx.plan.engine === 'mongodb') {
    if (scored.some((s) => s.finding.code === 'mongo.collscan')) return undefined;
    const keys = t.keysExamined;
    const docs = t.docsExamined;
    const ret = t.nReturned;
    if (keys === undefined || docs === undefined || ret === undefined) return undefined;
    // In an aggregation the query layer hands its documents to the pipeline, which may group them into
    // a few results: the query layer's own output is what the examined counts compare with.
    const cursors = ctx.nodes.filter((n) => n.kind === '$cursor' || n.kind === '$geoNearCursor');
    const fromQuery = cursors.length > 0 ? cursors.reduce((sum, c) => sum + (c.metrics.rowsReturned ?? 0), 0) : ret;
    // A count returns no document: what it counted is the result.
    const count = ctx.nodes.find((n) => n.kind === 'COUNT');
    const counted = count ? (num(count.raw['nCounted']) ?? count.children[0]?.metrics.rowsReturned) : undefined;
    if (counted !== undefined && docs === 0) {
      return noWaste('mongo.efficient', 'No wasted work', `Counted ${plural(counted, 'document')} from ${plural(keys, 'index key')} without fetching any document: ${keys <= counted + 1 ? 'nothing was read for nothing' : 'no stage reads enough for nothing to be worth a change'}.`, { keysExamined: keys, docsExamined: docs, counted });
    }
    const exact = keys <= fromQuery && docs <= fromQuery;
    const near = keys <= fromQuery * 1.25 + 2 && docs <= fromQuery * 1.25 + 2;
    const covered = docs === 0 && fromQuery > 0 ? ' (covered: no document was fetched)' : '';
    const returned = cursors.length > 0 && fromQuery !== ret ? `pass ${formatCount(fromQuery)} to the pipeline (which returned ${formatCount(ret)})` : `return ${formatCount(ret)}`;
    const verdict = exact ? 'nothing was read for nothing' : near ? 'close to one key and one document per result' : 'no stage reads enough for nothing to be worth a change';
    const sorts = scored.some((s) => s.finding.code === 'mongo.blocking-sort') ? '' : ', and no stage sorts in memory';
    const numbers: Record<string, number> = { keysExamined: keys, docsExamined: docs, returned: ret };
    if (cursors.length > 0) numbers['passedToPipeline'] = fromQuery;
    return noWaste('mongo.efficient', 'No wasted work', `Examined ${plural(keys, 'index key')} and ${plural(docs, 'document')} to ${returned}${covered}: ${verdict}${sorts}.`, numbers);
  }
  const rows = t.rows ?? ctx.plan.root.metrics.rowsReturned;
  const ms = t.executionTimeMs ?? ctx.plan.postgres?.executionTimeMs;
  const numbers: Record<string, number> = {};
  if (rows !== undefined) numbers['rows'] = rows;
  if (ms !== undefined) numbers['executionMs'] = ms;
  const blocks = sharedBlocks(ctx.plan);
  if (blocks !== undefined) numbers['sharedBlocks'] = blocks;
  return noWaste('pg.efficient', 'No wasted work found', `No node reads rows it throws away, sorts or hashes on disk, or skips what it read${rows !== undefined ? `: ${plural(rows, 'row')}` : ''}${ms !== undefined ? ` in ${formatMs(ms)}` : ''}${blocks !== undefined ? `, ${plural(blocks, 'buffer')} touched` : ''}.`, numbers);
}

function sharedBlocks(plan: Plan): number | undefined {
  const b = plan.totals.buffers ?? plan.root.metrics.buffers;
  if (!b || (b.sharedHit === undefined && b.sharedRead === undefined)) return undefined;
  return (b.sharedHit ?? 0) + (b.sharedRead ?? 0);
}

const SEVERITIES: Severity[] = ['high', 'medium', 'low'];

/**
 * One line for the CLI and the compare view: the verdict, the worst problems by title, and the plan's
 * headline figures. Example: "2 problems (1 high, 1 medium): Collection scan; Blocking sort — 0 keys,
 * 100,000 documents examined, 1 returned, 167 ms."
 */
export function summarize(plan: Plan, findings: Finding[]): string {
  const waste = findings.filter(isWaste);
  const figures = headline(plan);
  const tail = figures ? ` — ${figures}.` : '.';
  if (waste.length === 0) {
    const executed = findings.every((f) => f.code !== 'mongo.no-execution-stats' && f.code !== 'pg.not-analyzed');
    if (!executed) return `No problem visible in the plan's shape; run it with execution statistics to measure the work${tail}`;
    const good = findings.filter((f) => f.good === true && f.code !== 'mongo.efficient' && f.code !== 'pg.efficient');
    const extra = good.length > 0 ? ` (${good.map((f) => f.title).join('; ')})` : '';
    const efficient = findings.some((f) => f.code === 'mongo.efficient' || f.code === 'pg.efficient');
    const notes = findings.filter((f) => f.severity === 'info' && f.good !== true).map((f) => f.title);
    if (efficient) return `Efficient: no wasted work found${extra}${tail}`;
    return `No problem worth fixing${notes.length > 0 ? ` (noted: ${[...new Set(notes)].slice(0, 2).join('; ')})` : ''}${extra}${tail}`;
  }
  const counts = SEVERITIES.map((s) => [s, waste.filter((f) => f.severity === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  const titles = [...new Set(waste.map((f) => f.title))];
  const shown = titles.slice(0, 2).join('; ');
  const more = titles.length > 2 ? `; +${titles.length - 2} more` : '';
  return `${waste.length} ${waste.length === 1 ? 'problem' : 'problems'} (${counts}): ${shown}${more}${tail}`;
}

function headline(plan: Plan): string {
  const t = plan.totals;
  const parts: string[] = [];
  if (plan.engine === 'mongodb') {
    if (t.nReturned !== undefined) {
      parts.push(`${plural(t.keysExamined ?? 0, 'key')}, ${plural(t.docsExamined ?? 0, 'document')} examined, ${formatCount(t.nReturned)} returned`);
    }
    if (t.executionTimeMs !== undefined) parts.push(formatMs(t.executionTimeMs));
  } else {
    const rows = t.rows ?? plan.root.metrics.rowsReturned;
    if (rows !== undefined) parts.push(plural(rows, 'row'));
    const ms = t.executionTimeMs ?? plan.postgres?.executionTimeMs;
    if (ms !== undefined) parts.push(formatMs(ms));
    const blocks = sharedBlocks(plan);
    if (blocks !== undefined) parts.push(plural(blocks, 'buffer'));
  }
  return parts.join(', ');
}
