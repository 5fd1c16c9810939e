// Turns a plan and its findings into what the CLI prints: a readable report, or the documented JSON
// document (docs/cli.md). Formatting only: the text goes out through the Io it is given.

import { analyze, loadPlan, type Finding, type Plan, type PlanNode } from '../core/index';
import { EXIT_OK, EXIT_REFUSED, type Io } from './io';
import { formatCount } from '../core/index';

const n = (x: number | undefined): string => (x === undefined ? '-' : formatCount(x));

/** The figures that matter for one node, as `name value` pairs, in the order a reader scans them. */
export function nodeFigures(plan: Plan, node: PlanNode): string[] {
  const m = node.metrics;
  const out: string[] = [];
  const push = (label: string, v: number | undefined) => {
    if (v !== undefined) out.push(`${label} ${n(v)}`);
  };
  if (plan.engine === 'mongodb') {
    push('returned', m.rowsReturned);
    push('keys', m.keysExamined);
    push('docs', m.docsExamined);
    push('seeks', m.seeks);
    if (m.exclusiveTimeMs) push('ms', m.exclusiveTimeMs);
  } else {
    if (m.neverExecuted) {
      out.push('never executed');
      return out;
    }
    push('rows', m.rowsReturned);
    if (m.loops !== undefined && m.loops !== 1) push('loops', m.loops);
    push('planned', m.plannedRows);
    if (m.estimateFactor !== undefined && m.estimateFactor >= 10) out.push(`misestimate x${n(Math.round(m.estimateFactor))} ${m.estimateDirection}`);
    push('ms', m.exclusiveTimeMs);
    push('removed by filter', m.rowsRemovedByFilter);
    push('removed by join filter', m.rowsRemovedByJoinFilter);
    push('removed by recheck', m.rowsRemovedByIndexRecheck);
    push('heap fetches', m.heapFetches);
    // One search per loop is an ordinary index scan; more are the hops of a skip scan or an ANY list.
    if (m.indexSearches !== undefined && m.indexSearches > Math.max(m.loops ?? 1, 1)) push('index searches', m.indexSearches);
    if (m.exclusiveSharedBlocks !== undefined) push('buffers', m.exclusiveSharedBlocks);
    if (m.sortMethod) out.push(`sort ${m.sortMethod}${m.sortSpaceType ? ` (${m.sortSpaceType} ${n(m.sortSpaceKb)} kB)` : ''}`);
    if (m.workersPlanned !== undefined) out.push(`workers ${n(m.workersLaunched)}/${n(m.workersPlanned)}`);
  }
  return out;
}

/** Plain-text report: header, totals, the tree with figures, findings, warnings. */
export function textReport(plan: Plan, findings: Finding[], source?: string): string {
  const lines: string[] = [];
  const title = plan.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL';
  lines.push(`${title} plan${source ? ` from ${source}` : ''} (${plan.format}${plan.serverVersion ? `, server ${plan.serverVersion}` : ''}), ${plan.nodes.length} nodes`);
  lines.push(`Totals: ${totalsLine(plan)}`);
  lines.push('');
  const findingByNode = new Map<number, Finding[]>();
  for (const f of findings) if (f.nodeId !== undefined) findingByNode.set(f.nodeId, [...(findingByNode.get(f.nodeId) ?? []), f]);
  const draw = (node: PlanNode, prefix: string, last: boolean, top: boolean) => {
    const marks = (findingByNode.get(node.id) ?? []).filter((f) => !f.good && f.severity !== 'info').length;
    const head = top ? '' : `${prefix}${last ? '└─ ' : '├─ '}`;
    const role = node.role && !['inputStage', 'Outer'].includes(node.role) ? `[${node.role}] ` : '';
    lines.push(`${head}${role}${node.label}${marks ? '  ⚠' : ''}  ${nodeFigures(plan, node).join(' · ')}`.trimEnd());
    const next = top ? '' : prefix + (last ? '   ' : '│  ');
    node.children.forEach((c, i) => draw(c, next, i === node.children.length - 1, false));
  };
  draw(plan.root, '', true, true);
  if (plan.rejectedPlans.length > 0) {
    lines.push('');
    lines.push(`Rejected plans: ${plan.rejectedPlans.length}`);
    for (const r of plan.rejectedPlans) {
      const t = r.trial;
      lines.push(`  ${r.index + 1}. ${r.root.label}${t ? `  trial: returned ${n(t.nReturned)} keys ${n(t.keysExamined)} docs ${n(t.docsExamined)}` : ''}`);
    }
  }
  lines.push('');
  if (findings.length === 0) lines.push('Findings: none.');
  else {
    lines.push('Findings:');
    for (const f of findings) {
      const where = f.nodeId !== undefined ? ` (node ${f.nodeId}: ${plan.nodes[f.nodeId]?.kind ?? '?'})` : '';
      lines.push(`  [${f.good ? 'good' : f.severity}] ${f.code}${where}: ${f.message}`);
    }
  }
  if (plan.warnings.length > 0) {
    lines.push('');
    lines.push('Warnings:');
    for (const w of plan.warnings) lines.push(`  ${w}`);
  }
  return lines.join('\n') + '\n';
}

export function totalsLine(plan: Plan): string {
  const t = plan.totals;
  if (plan.engine === 'mongodb') {
    return `keysExamined ${n(t.keysExamined)}, docsExamined ${n(t.docsExamined)}, nReturned ${n(t.nReturned)}${t.executionTimeMs !== undefined ? `, ${n(t.executionTimeMs)} ms` : ''}`;
  }
  const b = t.buffers;
  const parts = [`rows ${n(t.rows)}`];
  if (t.executionTimeMs !== undefined) parts.push(`execution ${n(t.executionTimeMs)} ms`);
  if (t.planningTimeMs !== undefined) parts.push(`planning ${n(t.planningTimeMs)} ms`);
  if (b) parts.push(`shared hit ${n(b.sharedHit ?? 0)} read ${n(b.sharedRead ?? 0)}`);
  return parts.join(', ');
}

/** Version of the JSON document `qpi analyze --json` prints; bumped on any incompatible change. */
export const REPORT_SCHEMA_VERSION = 1;

/** The documented JSON document (docs/cli.md). */
export function jsonReport(plan: Plan, findings: Finding[]): unknown {
  const t = plan.totals;
  return {
    schemaVersion: REPORT_SCHEMA_VERSION,
    engine: plan.engine,
    format: plan.format,
    serverVersion: plan.serverVersion ?? null,
    nodeCount: plan.nodes.length,
    totals:
      plan.engine === 'mongodb'
        ? { keysExamined: t.keysExamined ?? null, docsExamined: t.docsExamined ?? null, nReturned: t.nReturned ?? null, executionTimeMs: t.executionTimeMs ?? null }
        : {
            executionTimeMs: t.executionTimeMs ?? null,
            planningTimeMs: t.planningTimeMs ?? null,
            rows: t.rows ?? null,
            buffers: t.buffers ?? null,
          },
    root: { kind: plan.root.kind, label: plan.root.label },
    rejectedPlans: plan.rejectedPlans.length,
    findings: findings.map((f) => ({
      code: f.code,
      severity: f.severity,
      good: f.good === true,
      message: f.message,
      node: f.nodeId === undefined ? null : { id: f.nodeId, kind: plan.nodes[f.nodeId]?.kind ?? null, label: plan.nodes[f.nodeId]?.label ?? null },
      numbers: f.numbers,
    })),
    warnings: plan.warnings,
  };
}

/** Loads, analyses and prints; shared by `analyze` and `explain`. */
export function report(text: string, source: string | undefined, json: boolean, io: Io): number {
  const loaded = loadPlan(text);
  if (!loaded.ok) {
    io.stderr(`${loaded.refusal}\n`);
    return EXIT_REFUSED;
  }
  const findings = analyze(loaded.plan);
  if (json) io.stdout(JSON.stringify(jsonReport(loaded.plan, findings), null, 2) + '\n');
  else io.stdout(textReport(loaded.plan, findings, source));
  return EXIT_OK;
}
