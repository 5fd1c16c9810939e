// Soak: mutated real plans through the core in process, then hostile inputs through the built `qpi`
// binary. It prints what a user must never see (exits other than 0/2/64, stack traces, internal errors,
// refusals longer than a sentence), runs over 5 s for inputs up to 10 MB, and peak memory against input
// size. It asserts nothing; the figures are the result. Not part of `npm test`.
//
// Run: npm run build && npm run bench:soak [-- --seed N --mutations N --cli N --corpus DIR]
// The seed is fixed by default and printed, so a finding can be replayed.

import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyze, loadPlan } from '../src/core/index';
import { jsonReport, textReport } from '../src/cli/report';
import { generateMongoAllPlansExplain, generatePostgresJsonPlan, rng } from './generate';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const SEED = Number(arg('seed', '20261124'));
const MUTATIONS = Number(arg('mutations', '100000'));
const CLI_RUNS = Number(arg('cli', '2000'));
const PARALLEL = Number(arg('parallel', '2'));
const ROOT = join(__dirname, '..');
const CORPUS = arg('corpus', existsSync(join(ROOT, '..', 'shared', 'corpus')) ? join(ROOT, '..', 'shared', 'corpus') : join(ROOT, 'test', 'fixtures', 'corpus'));
const CLI = join(ROOT, 'dist', 'cli.js');
const SLOW_MS = 5000;
const MB = 1024 * 1024;

const random = rng(SEED);
const int = (n: number): number => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;

const corpus = readdirSync(CORPUS)
  .filter((f) => /\.(json|js|txt|yaml|xml)$/.test(f) && statSync(join(CORPUS, f)).isFile())
  .map((f) => ({ name: f, text: readFileSync(join(CORPUS, f), 'utf8') }));

// ---------------------------------------------------------------------------------------------------
// Mutations: what copying, pasting, editors and hostile hands do to a plan.

const HOSTILE = ['{', '}', '[', ']', '"', ',', ':', '->', ' ', '\n', '\t', '0', '-1', '1e309', 'NaN', '99999999999999999999', '\u0000', '\u202e', '\ud800', '\ufeff', '\u001b[2J', '<Plan>', '</Plan>', 'ObjectId(', 'Long("', '  ->  Hash Join  (cost=0.00..1.00 rows=1 width=4)'];

const mutators: ((t: string) => string)[] = [
  (t) => t.slice(0, int(t.length + 1)),
  (t) => t.split('\n').slice(0, int(t.split('\n').length + 1)).join('\n'),
  (t) => {
    const at = int(t.length);
    return t.slice(0, at) + t.slice(at + 1 + int(100));
  },
  (t) => {
    const at = int(t.length);
    const len = 1 + int(200);
    return t.slice(0, at + len) + t.slice(at, at + len) + t.slice(at + len);
  },
  (t) => {
    const at = int(t.length);
    return t.slice(0, at) + pick(HOSTILE) + t.slice(at + int(2));
  },
  (t) => t.replace(/\d+(\.\d+)?/g, (m) => (random() < 0.1 ? pick(['0', '-1', '1e309', '4294967296', '0.000001', '9007199254740993']) : m)),
  (t) => {
    const lines = t.split('\n');
    const a = int(lines.length);
    const b = int(lines.length);
    [lines[a], lines[b]] = [lines[b]!, lines[a]!];
    return lines.join('\n');
  },
  (t) => {
    const lines = t.split('\n');
    const a = int(lines.length);
    lines.splice(a, 0, ...Array<string>(1 + int(50)).fill(lines[a] ?? ''));
    return lines.join('\n');
  },
  (t) => {
    const k = 1 + int(40);
    return t.trimStart().startsWith('{') || t.trimStart().startsWith('[') ? '['.repeat(k) + t + ']'.repeat(k) : t.replace(/^/gm, ' '.repeat(k));
  },
  (t) => t.replace(/"[A-Z][A-Za-z ]+"/g, (m) => (random() < 0.05 ? `"${pick(['Hash Join', 'Nested Loop', 'Plans', 'stage', 'inputStage', 'queryPlanner'])}"` : m)),
];

function mutate(text: string): string {
  let t = text;
  for (let i = 1 + int(3); i > 0; i--) t = pick(mutators)(t);
  return t;
}

// ---------------------------------------------------------------------------------------------------
// In-process soak

interface Tally {
  runs: number;
  analysed: number;
  refused: number;
  thrown: string[];
  internal: string[];
  notOneSentence: string[];
  slow: string[];
  maxMs: number;
}

function soakInProcess(): Tally {
  const t: Tally = { runs: 0, analysed: 0, refused: 0, thrown: [], internal: [], notOneSentence: [], slow: [], maxMs: 0 };
  for (let i = 0; i < MUTATIONS; i++) {
    const source = pick(corpus);
    const text = mutate(source.text);
    const label = `mutation ${i} of ${source.name}`;
    const started = performance.now();
    try {
      const r = loadPlan(text);
      if (r.ok) {
        const findings = analyze(r.plan);
        textReport(r.plan, findings);
        JSON.stringify(jsonReport(r.plan, findings));
        t.analysed++;
      } else {
        t.refused++;
        if (/internal error/.test(r.refusal)) t.internal.push(`${label}: ${r.refusal}`);
        else if (/\n/.test(r.refusal) || !/[.]$/.test(r.refusal)) t.notOneSentence.push(`${label}: ${JSON.stringify(r.refusal)}`);
      }
    } catch (err) {
      t.thrown.push(`${label}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const ms = performance.now() - started;
    t.maxMs = Math.max(t.maxMs, ms);
    if (ms > SLOW_MS) t.slow.push(`${label}: ${Math.round(ms)} ms`);
    t.runs++;
  }
  return t;
}

// ---------------------------------------------------------------------------------------------------
// CLI soak: the built binary, with a preload that reports the process's peak memory on fd 3.

interface CliCase {
  name: string;
  args: string[];
  /** Bytes written to standard input, or a file to open as standard input. */
  stdin?: Buffer | { path: string };
  size: number;
  /** Close our end of stdout after the first chunk, like `| head`. */
  closeEarly?: boolean;
}

interface CliResult {
  name: string;
  code: number | null;
  ms: number;
  /** CPU time of the process (user + system): on a shared machine the fairer measure of its own work. */
  cpuMs: number;
  maxRssKb: number;
  size: number;
  stderr: string;
}

const work = mkdtempSync(join(tmpdir(), 'qpi-soak-'));
const hook = join(work, 'rss.cjs');
writeFileSync(hook, "process.on('exit', () => { try { const u = process.resourceUsage(); require('fs').writeSync(3, `${u.maxRSS} ${(u.userCPUTime + u.systemCPUTime) / 1000}`); } catch {} });\n");

function runCli(c: CliCase): Promise<CliResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    let stdinFd: 'pipe' | number = 'pipe';
    if (c.stdin && !Buffer.isBuffer(c.stdin)) stdinFd = openSync(c.stdin.path, 'r');
    const child = spawn(process.execPath, ['--require', hook, CLI, ...c.args], { stdio: [stdinFd, 'pipe', 'pipe', 'pipe'] });
    if (typeof stdinFd === 'number') closeSync(stdinFd);
    let stderr = '';
    let rss = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdio[3]!.on('data', (d: Buffer) => (rss += d.toString()));
    child.stdout!.on('data', () => {
      if (c.closeEarly) child.stdout!.destroy();
    });
    if (child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(Buffer.isBuffer(c.stdin) ? c.stdin : undefined);
    }
    child.on('close', (code) => {
      const [kb, cpu] = rss.split(' ').map(Number);
      resolve({ name: c.name, code, ms: performance.now() - started, cpuMs: cpu ?? 0, maxRssKb: kb ?? 0, size: c.size, stderr });
    });
  });
}

function utf16(text: string, bom: boolean): Buffer {
  return Buffer.from((bom ? '\ufeff' : '') + text, 'utf16le');
}

function specialCases(): CliCase[] {
  const file = (name: string, content: string | Buffer): { path: string; size: number } => {
    const path = join(work, name);
    writeFileSync(path, content);
    return { path, size: statSync(path).size };
  };
  const deepJson = (d: number) => '[{"Plan": ' + '{"Node Type": "Append", "Plans": ['.repeat(d) + '{"Node Type": "Seq Scan"}' + ']}'.repeat(d) + '}]';
  const deepXml = (d: number) => '<explain xmlns="http://www.postgresql.org/2009/explain"><Query><Plan><Node-Type>Append</Node-Type><Plans>' + '<Plan><Node-Type>Append</Node-Type><Plans>'.repeat(d) + '</Plans></Plan>'.repeat(d) + '</Plans></Plan></Query></explain>';
  const deepShell = (d: number) => '{queryPlanner: {winningPlan: ' + '{stage: "A", inputStage: '.repeat(d) + '{}' + '}'.repeat(d) + '}}';
  let deepYaml = '- Plan:\n    Node Type: "Append"\n';
  for (let i = 0, ind = '    '; i < 3000; i++, ind += '    ') deepYaml += `${ind}Plans:\n${ind}  - Node Type: "Append"\n`;
  const pg10 = file('pg-10mb.json', generatePostgresJsonPlan(5200));
  const mongo10 = file('mongo-10mb.json', generateMongoAllPlansExplain(10 * MB));
  const yaml62 = file('yaml-62mb.yaml', '- Plan:\n    Node Type: "Append"\n    Plans:\n' + '      - Node Type: "Seq Scan"\n        Relation Name: "t"\n        Total Cost: 1.0\n'.repeat(800_000));
  const shell40 = file('shell-40mb.js', `{queryPlanner: {winningPlan: {stage: "OR", inputStages: [${'{stage:"A"},'.repeat(3_500_000)}]}}}`);
  const shellValues = file('shell-values-40mb.js', `{queryPlanner: {winningPlan: {stage: "COLLSCAN", filter: [${'{a:1},'.repeat(7_000_000)}]}}}`);
  const binary = Buffer.alloc(MB);
  for (let i = 0; i < binary.length; i++) binary[i] = int(256);
  const binFile = file('random.bin', binary);
  const pgText = corpus.find((c) => c.name.startsWith('pg-json-'))!.text;
  const cases: CliCase[] = [
    { name: 'analyze /dev/zero', args: ['analyze', '/dev/zero'], size: 64 * MB },
    { name: 'analyze /dev/urandom', args: ['analyze', '/dev/urandom'], size: 64 * MB },
    { name: 'analyze - < /dev/zero', args: ['analyze', '-'], stdin: { path: '/dev/zero' }, size: 64 * MB },
    { name: 'analyze 10 MB PostgreSQL JSON', args: ['analyze', pg10.path], size: pg10.size },
    { name: 'analyze 10 MB MongoDB JSON --json', args: ['analyze', mongo10.path, '--json'], size: mongo10.size },
    { name: 'analyze 10 MB PostgreSQL JSON | head', args: ['analyze', pg10.path], size: pg10.size, closeEarly: true },
    { name: 'analyze 62 MB YAML', args: ['analyze', yaml62.path], size: yaml62.size },
    { name: 'analyze 40 MB shell notation, tiny stages', args: ['analyze', shell40.path], size: shell40.size },
    { name: 'analyze 40 MB shell notation, tiny values', args: ['analyze', shellValues.path], size: shellValues.size },
    { name: 'analyze 1 MB random bytes', args: ['analyze', binFile.path], size: binFile.size },
    { name: 'JSON nested 5,000 deep', args: ['analyze', '-'], stdin: Buffer.from(deepJson(5000)), size: deepJson(5000).length },
    { name: 'XML nested 2,000 deep', args: ['analyze', '-'], stdin: Buffer.from(deepXml(2000)), size: deepXml(2000).length },
    { name: 'shell notation nested 100,000 deep', args: ['analyze', '-'], stdin: Buffer.from(deepShell(100000)), size: deepShell(100000).length },
    { name: 'YAML nested 3,000 deep', args: ['analyze', '-'], stdin: Buffer.from(deepYaml), size: deepYaml.length },
    { name: 'UTF-16 LE with a byte order mark', args: ['analyze', '-'], stdin: utf16(pgText, true), size: pgText.length * 2 + 2 },
    { name: 'UTF-16 LE without a byte order mark', args: ['analyze', '-'], stdin: utf16(pgText, false), size: pgText.length * 2 },
  ];
  return cases;
}

function mutatedCase(i: number): CliCase {
  const source = pick(corpus);
  const text = mutate(source.text);
  const bytes = Buffer.from(text);
  const r = random();
  if (r < 0.1) {
    const other = pick(corpus.filter((c) => c.name.slice(0, 3) === source.name.slice(0, 3)));
    const path = join(work, `before-${i}`);
    writeFileSync(path, bytes);
    return { name: `compare mutated ${source.name} with ${other.name}`, args: ['compare', path, join(CORPUS, other.name)], size: bytes.length };
  }
  return { name: `analyze mutated ${source.name}${r < 0.5 ? ' --json' : ''}`, args: ['analyze', '-', ...(r < 0.5 ? ['--json'] : [])], stdin: bytes, size: bytes.length };
}

async function soakCli(): Promise<CliResult[]> {
  const specials = specialCases();
  const cases: CliCase[] = [...specials];
  for (let i = cases.length; i < CLI_RUNS; i++) cases.push(mutatedCase(i));
  const results: CliResult[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      const c = cases[next++]!;
      results.push(await runCli(c));
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return results;
}

// ---------------------------------------------------------------------------------------------------

function show(title: string, items: string[], limit = 5): void {
  console.log(`${title}: ${items.length}`);
  for (const s of items.slice(0, limit)) console.log(`    ${s.slice(0, 300)}`);
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run npm run build first.');
  console.log(`soak seed ${SEED}, corpus ${corpus.length} files, ${MUTATIONS} in-process mutations, ${CLI_RUNS} CLI runs (${PARALLEL} at a time), load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  const started = performance.now();
  const t = soakInProcess();
  console.log(`\nIn process (${((performance.now() - started) / 1000).toFixed(0)} s): ${t.runs} runs, ${t.analysed} analysed, ${t.refused} refused, slowest ${Math.round(t.maxMs)} ms`);
  show('  thrown (a bug)', t.thrown);
  show('  internal-error refusals (a bug)', t.internal);
  show('  refusals that are not one sentence', t.notOneSentence);
  show(`  runs over ${SLOW_MS / 1000} s`, t.slow);

  const cliStarted = performance.now();
  const results = await soakCli();
  const baseline = results.filter((r) => r.size < 64 * 1024 && r.maxRssKb > 0).map((r) => r.maxRssKb).sort((a, b) => a - b);
  const baseKb = baseline[Math.floor(baseline.length / 2)] ?? 0;
  console.log(`\nCLI (${((performance.now() - cliStarted) / 1000).toFixed(0)} s): ${results.length} runs, exits ${JSON.stringify(Object.fromEntries([...new Set(results.map((r) => r.code))].map((c) => [c, results.filter((r) => r.code === c).length])))}`);
  show('  exits other than 0/2/64', results.filter((r) => ![0, 2, 64].includes(r.code ?? -1)).map((r) => `${r.name}: exit ${r.code} ${r.stderr.split('\n')[0]}`));
  show('  stack traces on stderr', results.filter((r) => /\n\s+at |node:internal|Error: /.test(r.stderr)).map((r) => `${r.name}: ${r.stderr.split('\n').slice(0, 2).join(' | ')}`));
  show('  stderr longer than one line', results.filter((r) => r.stderr.trimEnd().includes('\n') && !/Usage:/.test(r.stderr)).map((r) => `${r.name}: ${JSON.stringify(r.stderr.slice(0, 200))}`));
  const upTo10 = results.filter((r) => r.size <= 10 * MB);
  show(`  runs over ${SLOW_MS / 1000} s of CPU with inputs up to 10 MB`, upTo10.filter((r) => r.cpuMs > SLOW_MS).map((r) => `${r.name}: ${Math.round(r.cpuMs)} ms CPU, ${(r.size / MB).toFixed(1)} MB`));
  show(`  runs over ${SLOW_MS / 1000} s of wall time with inputs up to 10 MB (counts the machine's load)`, upTo10.filter((r) => r.ms > SLOW_MS).map((r) => `${r.name}: ${Math.round(r.ms)} ms wall, ${Math.round(r.cpuMs)} ms CPU, ${(r.size / MB).toFixed(1)} MB`));
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`  per run: wall median ${Math.round(median(results.map((r) => r.ms)))} ms (slowest ${Math.round(Math.max(...results.map((r) => r.ms)))}), CPU median ${Math.round(median(results.map((r) => r.cpuMs)))} ms (most ${Math.round(Math.max(...results.map((r) => r.cpuMs)))})`);
  console.log(`  peak memory: ${(baseKb / 1024).toFixed(0)} MB for a small input (median), the process's own floor`);
  const big = results.filter((r) => r.size >= MB).sort((a, b) => b.size - a.size);
  let worst = 0;
  for (const r of big) {
    const ratio = (r.maxRssKb * 1024) / r.size;
    const above = (Math.max(0, r.maxRssKb - baseKb) * 1024) / r.size;
    worst = Math.max(worst, above);
    console.log(`    ${r.name}: input ${(r.size / MB).toFixed(1)} MB, peak ${(r.maxRssKb / 1024).toFixed(0)} MB (${ratio.toFixed(1)}x the input; ${above.toFixed(1)}x above the floor), ${Math.round(r.ms)} ms wall, ${Math.round(r.cpuMs)} ms CPU, exit ${r.code}${r.code === 2 ? `: ${r.stderr.trim().slice(0, 110)}` : ''}`);
  }
  console.log(`  worst peak memory above the floor, inputs of 1 MB or more: ${worst.toFixed(1)}x the input (target 10x)`);
  rmSync(work, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  rmSync(work, { recursive: true, force: true });
  console.error(err);
  process.exitCode = 1;
});
