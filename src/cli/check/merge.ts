// `qpi check merge FILE...`: the outputs of the shards of one run joined (src/core/check/merge.ts). Each
// input is recognised by its content: a `--json` document, a SARIF log, a JUnit report or a lock. SARIF
// and JUnit outputs are joined from inputs of their own kind when there are some, else written from the
// joined --json documents; markdown, GitLab and --json need --json documents; --lock needs locks.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  decisionFromJson, formatCount, isCheckJson, mergeJsonDocuments, mergeJunit, mergeLocks, mergeSarif, toGitlab, toJunit, toMarkdown, toSarif, plural,
  type CheckJson, type Merged,
} from '../../core/index';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, readOrSay, strictFlags, type Io } from '../io';
import { EXIT_FINDINGS } from '../lint';

export const HELP_BASE = 'https://marketplace.visualstudio.com/items?itemName=query-plan-inspector.query-plan-inspector';
export const TOOL_VERSION = '0.1.0';

const MERGE_USAGE = '  qpi check merge FILE... [--sarif FILE] [--junit FILE] [--markdown FILE] [--gitlab FILE] [--lock FILE] [--json]\n';

type Kind = 'json' | 'sarif' | 'junit' | 'lock';

export async function runMerge(argv: string[], io: Io): Promise<number> {
  const parsed = strictFlags(argv, { sarif: { type: 'string' }, junit: { type: 'string' }, markdown: { type: 'string' }, gitlab: { type: 'string' }, lock: { type: 'string' }, json: { type: 'boolean' }, 'lock-file': { type: 'string' } });
  if (typeof parsed === 'string') {
    io.stderr(`${parsed}\nUsage:\n${MERGE_USAGE}`);
    return EXIT_USAGE;
  }
  const v = parsed.values;
  if (parsed.positionals.length === 0) {
    io.stderr(`qpi check merge needs the files to join.\nUsage:\n${MERGE_USAGE}`);
    return EXIT_USAGE;
  }
  if (!v.sarif && !v.junit && !v.markdown && !v.gitlab && !v.lock && !v.json) {
    io.stderr(`qpi check merge writes nothing without an output: --sarif, --junit, --markdown, --gitlab, --lock or --json.\nUsage:\n${MERGE_USAGE}`);
    return EXIT_USAGE;
  }
  const inputs: Record<Kind, { name: string; text: string }[]> = { json: [], sarif: [], junit: [], lock: [] };
  const docs: CheckJson[] = [];
  // Sorted by name, though the joins do not depend on the order: the messages do.
  for (const name of [...parsed.positionals].sort()) {
    const text = await readOrSay(io, name);
    if (text === undefined) return EXIT_REFUSED;
    const kind = kindOf(text);
    if (!kind) {
      io.stderr(`${name} is none of what qpi check writes (a --json document, SARIF, JUnit XML or a lock).\n`);
      return EXIT_REFUSED;
    }
    inputs[kind].push({ name, text });
    if (kind === 'json') docs.push(JSON.parse(text) as CheckJson);
  }
  const merged = docs.length > 0 ? mergeJsonDocuments(docs) : undefined;
  if (merged && !merged.ok) {
    io.stderr(`${merged.error}\n`);
    return EXIT_REFUSED;
  }
  const decision = merged?.ok ? decisionFromJson(merged.doc) : undefined;
  const lockFile = v['lock-file'] ?? 'qpi.lock.json';
  const outputs: [string | undefined, () => Merged | undefined, string][] = [
    [v.sarif, () => (inputs.sarif.length > 0 ? mergeSarif(inputs.sarif) : decision && { ok: true, text: toSarif(decision, { toolVersion: TOOL_VERSION, helpBase: HELP_BASE, lockFile }) }), 'SARIF logs or --json documents'],
    [v.junit, () => (inputs.junit.length > 0 ? mergeJunit(inputs.junit) : decision && { ok: true, text: toJunit(decision) }), 'JUnit reports or --json documents'],
    [v.markdown, () => decision && { ok: true, text: toMarkdown(decision) }, '--json documents'],
    [v.gitlab, () => decision && { ok: true, text: toGitlab(decision, lockFile) }, '--json documents'],
    [v.lock, () => (inputs.lock.length > 0 ? mergeLocks(inputs.lock) : undefined), 'locks'],
  ];
  for (const [path, make, needs] of outputs) {
    if (path === undefined) continue;
    const r = make();
    if (!r) {
      io.stderr(`${path} is made from ${needs}, and none was given.\n`);
      return EXIT_USAGE;
    }
    if (!r.ok) {
      io.stderr(`${r.error}\n`);
      return EXIT_REFUSED;
    }
    mkdirSync(dirname(resolve(path)), { recursive: true });
    writeFileSync(path, r.text);
  }
  if (v.json) {
    if (!merged?.ok) {
      io.stderr('--json is made from --json documents, and none was given.\n');
      return EXIT_USAGE;
    }
    io.stdout(`${JSON.stringify(merged.doc, null, 2)}\n`);
  }
  const counted = Object.entries(inputs).filter(([, l]) => l.length > 0).map(([k, l]) => `${l.length} ${k === 'json' ? '--json document' : k === 'lock' ? 'lock' : k === 'sarif' ? 'SARIF log' : 'JUnit report'}${l.length === 1 ? '' : 's'}`).join(', ');
  if (merged?.ok) {
    const c = merged.doc.counts;
    io.stderr(`Joined ${counted}: ${plural(c.queries, 'query', 'queries')}, ${formatCount(c.failed)} failed, ${formatCount(c.passed)} passed, ${formatCount(c.notExplainable)} not explainable. The gate ${merged.doc.passed ? 'passed' : 'failed'}.\n`);
    return merged.doc.passed ? EXIT_OK : EXIT_FINDINGS;
  }
  io.stderr(`Joined ${counted}.\n`);
  return EXIT_OK;
}

function kindOf(text: string): Kind | undefined {
  const t = text.trimStart();
  if (t.startsWith('<')) return /<testsuites[\s>]/.test(t) ? 'junit' : undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (isCheckJson(doc)) return 'json';
  const d = doc as Record<string, unknown> | null;
  if (d && typeof d === 'object' && d.version === '2.1.0' && Array.isArray(d.runs)) return 'sarif';
  if (d && typeof d === 'object' && d.version === 1 && typeof d.queries === 'object') return 'lock';
  return undefined;
}
