// Parse + analyse time of the plan engine, printed as medians and as a ratio to JSON.parse of the same
// text in the same process (the baseline: reading the bytes at all). A benchmark prints figures; it
// asserts nothing. Run: npm run bench [-- --runs N] [-- --only TEXT] [-- --breakdown]
//
// Inputs: every plan of the corpus (real server output), generated PostgreSQL plans and generated MongoDB
// plans of 1,000, 5,000 and 10,000 nodes (a wide $or: one index scan per branch), a MongoDB aggregate of
// 1,000 pipeline stages (the server's limit; drawn as a chain that deep), and a 10 MB MongoDB output whose
// size is one long $in (few stages, big bounds). The last lines name the worst ratio.
// The engine is measured as it ships: bundled by esbuild like dist/. --breakdown prints under each input
// the shares of the engine's time (a CPU profile): JSON.parse, format detection, readers, derive, findings,
// garbage collection.
// "message" is the panel's showPlan message as JSON (the plan and its findings; the raw text is sent only
// when the Raw tab asks), against the plan text: the target is no larger than the text.

import { buildSync } from 'esbuild';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { Session } from 'node:inspector';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Finding, LoadResult, Plan } from '../src/core/index';
import type { ShowPlanMessage } from '../src/protocol/webview';
import { generateMongoAllPlansExplain, generateMongoDeepAggregateExplain, generateMongoWideOrExplain, generatePostgresJsonPlan } from './generate';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 15;
/** Passes over the corpus before any figure is taken. */
const WARM_ROUNDS = 30;
/** Prints, under each input, where the engine's time goes (see breakdown). */
const BREAKDOWN = process.argv.includes('--breakdown');
const onlyArg = process.argv.indexOf('--only');
/** Runs only the inputs whose name contains this text (e.g. --only generated). */
const ONLY = onlyArg > 0 ? process.argv[onlyArg + 1] : undefined;

/**
 * The engine as it ships: one esbuild bundle like dist/ (no name-keeping helpers around every closure,
 * which the TypeScript loader of this script adds and which cost the engine a third of its time).
 */
interface Engine {
  loadPlan(text: string): LoadResult;
  analyze(plan: Plan): Finding[];
  wirePlan(plan: Plan): Plan;
}
function bundledEngine(): Engine {
  const dir = mkdtempSync(join(tmpdir(), 'qpi-bench-'));
  const outfile = join(dir, 'engine.js');
  try {
    buildSync({
      stdin: {
        contents: "export { loadPlan } from './src/core/load'; export { analyze } from './src/core/findings/index'; export { wirePlan } from './src/protocol/webview';",
        resolveDir: join(__dirname, '..'),
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outfile,
      logLevel: 'warning',
    });
    bundleText = readFileSync(outfile, 'utf8');
    bundleName = outfile;
    return createRequire(__filename)(outfile) as Engine;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
let bundleText = '';
let bundleName = '';
const { loadPlan, analyze, wirePlan } = bundledEngine();

/** Sends an inspector command; the main thread's own session answers before post returns. */
function inspect<T>(session: Session, method: string, params?: object): T {
  let out: T | undefined;
  let failure: Error | null = null;
  session.post(method, params, (err, res) => {
    failure = err;
    out = res as T;
  });
  if (failure) throw failure;
  return out as T;
}

/**
 * Where the engine's time goes on one input: a CPU profile of RUNS runs of loadPlan + analyze, each
 * sample charged to the part of the engine whose source module it ran in (esbuild marks each module in
 * the bundle), to the JSON.parse that loadPlan calls, or to the garbage collector.
 */
interface Frame {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

function breakdown(text: string): string {
  const parents = new Map<number, Frame>();
  const starts: [number, string][] = [];
  bundleText.split('\n').forEach((line, i) => {
    const m = /^\/\/ (\S+\.ts)$/.exec(line);
    if (m) starts.push([i, m[1]!]);
  });
  const moduleAt = (line: number): string => {
    let found = '';
    for (const [at, name] of starts) if (at <= line) found = name;
    return found;
  };
  /** A sample in a built-in (a sort, a regular expression) is charged to the engine function that called it. */
  const partOf = (f: Frame | undefined): string => {
    while (f && !f.callFrame.url.endsWith(bundleName)) f = parents.get(f.id);
    if (!f) return 'other';
    if (f.callFrame.functionName === 'loadPlanUnsafe') return 'JSON.parse';
    const mod = moduleAt(f.callFrame.lineNumber);
    if (/\/core\/(postgres|mongo)\/|\/core\/model\.ts$/.test(mod)) return 'readers';
    if (/\/core\/metrics\.ts$/.test(mod)) return 'derive';
    if (/\/core\/(findings\/|format\.ts$)/.test(mod)) return 'findings';
    if (/\/core\/load\.ts$/.test(mod)) return 'format detection';
    return 'other';
  };
  const session = new Session();
  session.connect();
  try {
    inspect(session, 'Profiler.enable');
    inspect(session, 'Profiler.setSamplingInterval', { interval: 100 });
    inspect(session, 'Profiler.start');
    for (let i = 0; i < RUNS; i++) {
      const r = loadPlan(text);
      if (r.ok) analyze(r.plan);
    }
    const { profile } = inspect<{ profile: { nodes: Frame[]; samples: number[]; timeDeltas: number[] } }>(session, 'Profiler.stop');
    const frames = new Map(profile.nodes.map((n) => [n.id, n]));
    for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n);
    const parts = new Map<string, number>();
    let total = 0;
    profile.samples.forEach((id, i) => {
      const f = frames.get(id)!;
      const fn = f.callFrame.functionName;
      // The profiler's own start and stop are not the engine's time.
      if (fn === '(idle)' || fn === '(program)' || fn === '(root)' || fn === 'dispatch' || f.callFrame.url.startsWith('node:inspector')) return;
      const dt = profile.timeDeltas[i] ?? 0;
      const part = fn === '(garbage collector)' ? 'garbage collection' : partOf(f);
      parts.set(part, (parts.get(part) ?? 0) + dt);
      total += dt;
    });
    return [...parts].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${Math.round((100 * v) / total)}%`).join(', ');
  } finally {
    session.disconnect();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Times fn RUNS times after two warm-ups, interleaved with the baseline so both see the same machine. */
function measure(text: string, isJson: boolean): { engine: number; baseline: number | undefined; nodes: number; message: number } {
  const engine: number[] = [];
  const baseline: number[] = [];
  let nodes = 0;
  let message = 0;
  for (let i = 0; i < RUNS + 2; i++) {
    let t = performance.now();
    const r = loadPlan(text);
    const findings = r.ok ? analyze(r.plan) : [];
    const e = performance.now() - t;
    if (r.ok && i === 0) {
      nodes = r.plan.nodes.length;
      const msg: ShowPlanMessage = { type: 'showPlan', title: 'plan', plan: wirePlan(r.plan), findings, hasRawText: true };
      message = JSON.stringify(msg).length;
    }
    let b = 0;
    if (isJson) {
      t = performance.now();
      JSON.parse(text);
      b = performance.now() - t;
    }
    if (i >= 2) {
      engine.push(e);
      baseline.push(b);
    }
  }
  return { engine: median(engine), baseline: isJson ? median(baseline) : undefined, nodes, message };
}

let worst: { name: string; ratio: number } | undefined;
let worstMessage: { name: string; ratio: number } | undefined;

function row(name: string, make: () => string): void {
  if (ONLY !== undefined && !name.includes(ONLY)) return;
  const text = make();
  const isJson = /^\s*[[{]/.test(text) && (() => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  })();
  const m = measure(text, isJson);
  const kb = (text.length / 1024).toFixed(0).padStart(6);
  const ratio = m.baseline ? m.engine / m.baseline : undefined;
  if (ratio !== undefined && (!worst || ratio > worst.ratio)) worst = { name, ratio };
  const msgRatio = m.message / text.length;
  if (m.message > 0 && (!worstMessage || msgRatio > worstMessage.ratio)) worstMessage = { name, ratio: msgRatio };
  console.log(
    `${name.padEnd(72)} ${kb} KB ${String(m.nodes).padStart(6)} nodes  engine ${m.engine.toFixed(2).padStart(8)} ms  JSON.parse ${m.baseline === undefined ? '       -' : m.baseline.toFixed(2).padStart(8)} ms  ratio ${(ratio !== undefined ? `${ratio.toFixed(2)}x` : 'n/a (text)').padEnd(10)}  message ${(m.message / 1024).toFixed(0).padStart(6)} KB = ${msgRatio.toFixed(2)}x text`,
  );  if (BREAKDOWN) console.log(`    engine time: ${breakdown(text)}`);
}

console.log(`Plan engine benchmark: median of ${RUNS} runs (after 2 warm-ups), Node ${process.version}`);
console.log('ratio = (loadPlan + analyze) / JSON.parse of the same text; target <= 1.5x on JSON inputs');
const corpus = join(__dirname, '..', 'test', 'fixtures', 'corpus');
const files = readdirSync(corpus)
  .filter((f) => /\.(json|js|txt|yaml|xml)$/.test(f))
  .map((f) => ({ f, size: statSync(join(corpus, f)).size }))
  .sort((a, b) => b.size - a.size);
// The engine's code is warmed first on every corpus plan, as in a session that has opened plans before:
// the figures are its steady state, not the compiler's first passes over it.
const corpusTexts = files.map(({ f }) => readFileSync(join(corpus, f), 'utf8'));
for (let round = 0; round < WARM_ROUNDS; round++) {
  for (const text of corpusTexts) {
    const r = loadPlan(text);
    if (r.ok) analyze(r.plan);
  }
}
files.forEach(({ f }, i) => row(`corpus/${f}`, () => corpusTexts[i]!));
for (const n of [1000, 5000, 10000]) {
  const size = n.toLocaleString('en');
  row(`generated PostgreSQL JSON plan, ${size} nodes`, () => generatePostgresJsonPlan(n));
  row(`generated MongoDB wide $or at executionStats, ${size} stages`, () => generateMongoWideOrExplain(n));
}
// MongoDB accepts pipelines of at most 1,000 stages: the deep aggregate is drawn as a chain that long.
row('generated MongoDB deep aggregate at executionStats, 1,000 pipeline stages', () => generateMongoDeepAggregateExplain(1000));
row('generated MongoDB allPlansExecution, ~10 MB (one long $in)', () => generateMongoAllPlansExplain(10 * 1024 * 1024));
if (worst) console.log(`worst ratio: ${worst.ratio.toFixed(2)}x (${worst.name}); target <= 1.5x`);
if (worstMessage) console.log(`largest message against its text: ${worstMessage.ratio.toFixed(2)}x (${worstMessage.name}); target <= 1x`);
