// `qpi compare BEFORE AFTER [--json]`: two saved explain outputs of one query, side by side: the
// verdict, the whole-plan figures, each node paired, changed, added or removed, and the findings that
// went away or appeared. The comparison itself is core's comparePlans; this file reads and prints.

import {
  analyze, changeText, comparePlans, deltaText, deltaValue, loadPlan,
  type ComparedPlans, type Finding, type MetricDelta, type NodeComparison, type Plan, type PlanNode,
} from '../core/index';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, readFailure, type Io } from './io';

/** Plans with more nodes than this list only the nodes that differ. */
const LIST_ALL_UNDER = 60;

type Read = { ok: true; plan: Plan; findings: Finding[] } | { ok: false; message: string };

async function readPlan(file: string, io: Io): Promise<Read> {
  let text: string;
  try {
    text = await (file === '-' ? io.readStdin() : io.readFile(file));
  } catch (err) {
    return { ok: false, message: readFailure(file, err) };
  }
  const loaded = loadPlan(text);
  if (!loaded.ok) return { ok: false, message: `${file === '-' ? 'Standard input' : file}: ${loaded.refusal}` };
  return { ok: true, plan: loaded.plan, findings: analyze(loaded.plan) };
}

export async function runCompare(positional: string[], json: boolean, io: Io): Promise<number> {
  if (positional.length !== 2) {
    io.stderr('qpi compare takes two plan files: the one before and the one after (- for standard input).\n');
    return EXIT_USAGE;
  }
  const [beforeFile, afterFile] = positional as [string, string];
  if (beforeFile === '-' && afterFile === '-') {
    io.stderr('Only one of the two plans can come from standard input.\n');
    return EXIT_USAGE;
  }
  const before = await readPlan(beforeFile, io);
  if (!before.ok) {
    io.stderr(`${before.message}\n`);
    return EXIT_REFUSED;
  }
  const after = await readPlan(afterFile, io);
  if (!after.ok) {
    io.stderr(`${after.message}\n`);
    return EXIT_REFUSED;
  }
  const c = comparePlans(before.plan, after.plan, { beforeFindings: before.findings, afterFindings: after.findings });
  if (!c.ok) {
    io.stderr(`${c.refusal}\n`);
    return EXIT_REFUSED;
  }
  const names = { before: beforeFile === '-' ? 'standard input' : beforeFile, after: afterFile === '-' ? 'standard input' : afterFile };
  if (json) io.stdout(JSON.stringify(jsonComparison(c, before.plan, after.plan, names), null, 2) + '\n');
  else io.stdout(textComparison(c, before.plan, after.plan, names));
  return EXIT_OK;
}

// ---- text -----------------------------------------------------------------------------------------

const MARK: Record<NodeComparison['status'], string> = { unchanged: '=', changed: '~', added: '+', removed: '-' };

function depths(plan: Plan): Map<number, number> {
  const out = new Map<number, number>();
  const stack: [PlanNode, number][] = [[plan.root, 0]];
  while (stack.length > 0) {
    const [n, d] = stack.pop()!;
    out.set(n.id, d);
    for (const c of n.children) stack.push([c, d + 1]);
  }
  return out;
}

function pad(cells: string[][]): string[] {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 2))).join('').trimEnd());
}

function nodeLine(e: NodeComparison, before: Plan, after: Plan): string {
  const a = e.beforeId !== undefined ? before.nodes[e.beforeId] : undefined;
  const b = e.afterId !== undefined ? after.nodes[e.afterId] : undefined;
  const label = e.status === 'changed' && a && b && a.label !== b.label ? `${a.label} → ${b.label}` : (b ?? a)!.label;
  const parts: string[] = [];
  if (e.status === 'changed') {
    // The label already shows a change of kind ("COLLSCAN → IXSCAN {...}").
    parts.push(...e.differences.filter((d) => !(a && b && d === `${a.kind} → ${b.kind}` && label.includes(' → '))));
    parts.push(...e.deltas.filter((d) => d.material).map((d) => `${d.label} ${deltaText(d)}`));
  } else if (e.status !== 'unchanged') {
    const side = e.status === 'added' ? 'after' : 'before';
    parts.push(...e.deltas.filter((d) => d[side] !== undefined && d.material).slice(0, 4).map((d) => `${d.label} ${deltaValue(d, side)}`));
  }
  return parts.length > 0 ? `${label}: ${parts.join('; ')}` : label;
}

export function textComparison(c: ComparedPlans, before: Plan, after: Plan, names: { before: string; after: string }): string {
  const lines: string[] = [];
  const engine = c.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL';
  lines.push(`${engine} plans compared: ${names.before} (${before.nodes.length} nodes) → ${names.after} (${after.nodes.length} nodes)`);
  lines.push(c.verdict);
  for (const n of c.notes) lines.push(`Note: ${n}`);
  lines.push('');
  const rows: string[][] = [['', 'before', 'after', 'change']];
  for (const d of c.totals) rows.push([d.label, deltaValue(d, 'before'), deltaValue(d, 'after'), changeText(d)]);
  for (const f of c.flags) {
    if (!f.before && !f.after) continue;
    rows.push([f.label, f.before ? 'yes' : 'no', f.after ? 'yes' : 'no', f.trend === 'same' ? '' : f.trend]);
  }
  lines.push(...pad(rows).map((l) => `  ${l}`));
  lines.push('');
  const k = c.counts;
  lines.push(`Nodes: ${k.unchanged} unchanged, ${k.changed} changed, ${k.added} added, ${k.removed} removed (= ~ + -)`);
  const da = depths(before);
  const db = depths(after);
  const all = c.nodes.length <= LIST_ALL_UNDER;
  let hidden = 0;
  for (const e of c.nodes) {
    if (!all && e.status === 'unchanged') {
      hidden++;
      continue;
    }
    const depth = e.afterId !== undefined ? db.get(e.afterId) ?? 0 : da.get(e.beforeId!) ?? 0;
    lines.push(`  ${MARK[e.status]} ${'  '.repeat(depth)}${nodeLine(e, before, after)}`);
  }
  if (hidden > 0) lines.push(`  (${hidden} unchanged nodes not listed)`);
  const f = c.findings;
  if (f.disappeared.length > 0 || f.appeared.length > 0) lines.push('');
  if (f.disappeared.length > 0) lines.push(`Findings gone: ${f.disappeared.map((x) => `${x.code} (${x.title})`).join(', ')}`);
  if (f.appeared.length > 0) lines.push(`Findings new: ${f.appeared.map((x) => `${x.code} (${x.title})`).join(', ')}`);
  return lines.join('\n') + '\n';
}

// ---- JSON (docs/cli.md, "qpi compare --json") -----------------------------------------------------

function nodeRef(plan: Plan, id: number | undefined): { id: number; kind: string; label: string } | null {
  if (id === undefined) return null;
  const n = plan.nodes[id];
  return n ? { id: n.id, kind: n.kind, label: n.label } : null;
}

function deltaJson(d: MetricDelta): Record<string, unknown> {
  return { key: d.key, label: d.label, unit: d.unit, before: d.before ?? null, after: d.after ?? null, factor: d.factor ?? null, material: d.material, trend: d.trend };
}

function findingJson(f: Finding, plan: Plan): Record<string, unknown> {
  return { code: f.code, severity: f.severity, good: f.good === true, title: f.title, message: f.message, node: nodeRef(plan, f.nodeId) };
}

export function jsonComparison(c: ComparedPlans, before: Plan, after: Plan, names: { before: string; after: string }): Record<string, unknown> {
  return {
    schemaVersion: 1,
    engine: c.engine,
    before: { source: names.before, format: before.format, serverVersion: before.serverVersion ?? null, nodeCount: before.nodes.length },
    after: { source: names.after, format: after.format, serverVersion: after.serverVersion ?? null, nodeCount: after.nodes.length },
    verdict: c.verdict,
    direction: c.direction,
    notes: c.notes,
    totals: c.totals.map(deltaJson),
    flags: c.flags.map((f) => ({ key: f.key, label: f.label, before: f.before, after: f.after, trend: f.trend })),
    counts: c.counts,
    matching: c.matching,
    nodes: c.nodes.map((e) => ({
      status: e.status,
      before: nodeRef(before, e.beforeId),
      after: nodeRef(after, e.afterId),
      differences: e.differences,
      deltas: e.deltas.map(deltaJson),
    })),
    findings: {
      appeared: c.findings.appeared.map((f) => findingJson(f, after)),
      disappeared: c.findings.disappeared.map((f) => findingJson(f, before)),
      kept: c.findings.kept,
    },
  };
}
