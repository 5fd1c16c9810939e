// Time from a plan to an interactive tree, for our plan view and for pev2, on the same generated
// PostgreSQL plans (100, 1,000, 5,000 and 10,000 nodes) in one Chromium run. A benchmark prints figures;
// it asserts nothing. Run: npm run bench:webview [-- --runs N]; by default 5 tabs per tool for 100 and
// 1,000 nodes and 3 for 5,000 and 10,000 (pev2 needs tens of seconds per render there). A drawing that
// has not settled after 120 s is reported as "> 120 s" and that tool's remaining tabs of the size are
// skipped; the bench goes on. `--sizes 100,10000` and `--tools ours` run a part of it; `--profile DIR` writes a CPU
// profile of each tool's first cold render per size.
//
// `--warm-small [--baseline REV] [--arrivals N]` runs instead the warm Explain's case: a small plan (the
// samples' first PostgreSQL statement, a join, and their first MongoDB find, captured from real servers)
// arriving in a panel that already shows another plan of the same query, as a panel reused by the next
// Explain gets it: the query's plan without and with the index, and the same plan again with its timings
// 10% longer (the same query explained again). Two plans arrive in turn, N times each (40 by default) in
// each of 3 tabs. With --baseline, the view as it was at that revision is built too (its webview/ and src/ from
// git) and measured in the same browser, tabs interleaved, with the ratio printed; `--profile DIR` writes
// a CPU profile of one tab's arrivals per build and engine. Figures per arrival:
//   handler   JSON.parse of the message as the transport delivers it -> the view's message handler done.
//   frame     the first frame after it rendered (requestAnimationFrame, then a task after its paint),
//             from the hand-over; it includes the wait for the frame's turn (up to one frame interval).
//   drawn     handler + that frame's own time (its callbacks, style, layout, paint): the hand-over to the
//             new cards on screen without the wait for the frame's turn, the figure the change aims at.
//   settled   the hand-over -> the view done with the message (the node panel, the findings and the
//             plan's summary filled, nothing left scheduled), then a frame painted.
//
// Both tools get the same JSON text, the same viewport, a production (minified) esbuild bundle and a
// fresh tab per run. What each figure includes:
//   load      navigation start -> the page's script evaluated and able to take a plan (first-load cost,
//             kept out of the render figures).
//   drawn     plan handed over -> the last frame in which the drawing changed, then unchanged for three
//             frames. Ours: JSON.parse of the showPlan message as the webview transport delivers it, the
//             message event, the tree laid out and painted. pev2: the component mounted with the plan text,
//             its parse, its node measurements and layout, painted.
//   click     a click dispatched on the root node -> the frame that shows it selected (ours: the card
//             active and the Node panel filled; pev2: the node marked selected).
//   ready     drawn + click: the time until the tree has answered a click. The idle frames used to see
//             that the drawing had settled are not counted.
//   cold      first plan in a fresh tab; warm: the same plan again in that tab (ours: a second showPlan;
//             pev2: the component unmounted and mounted again).
// Our view also needs the host's work before the message exists (loadPlan + analyze + wirePlan +
// JSON.stringify, in Node); it is printed apart and added in the "text -> ready" column, which is the
// figure to set against pev2, whose own parse happens inside its render.

import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { analyze, loadPlan } from '../src/core/index';
import { webviewHtml, wirePlan, type ShowPlanMessage } from '../src/protocol/webview';
import { generatePostgresJsonPlan } from './generate';

const ROOT = resolve(__dirname, '..');
const OUT = join(ROOT, '.cache', 'bench');
const CHROMIUM = '/usr/bin/chromium';
// The flags the browser tests use (test/browser/harness.ts).
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const VIEWPORT = { width: 1400, height: 860 };
const sizesArg = process.argv.indexOf('--sizes');
/** Plan sizes to run, e.g. --sizes 100,10000 (all by default). */
const SIZES = sizesArg > 0 ? process.argv[sizesArg + 1]!.split(',').map(Number) : [100, 1000, 5000, 10000];
/** Longest a drawing may take to settle before it is reported as a timeout rather than measured. */
const SETTLE_LIMIT_MS = 120_000;

const runsArg = process.argv.indexOf('--runs');
const RUNS_GIVEN = runsArg > 0 ? Number(process.argv[runsArg + 1]) : undefined;
const runsFor = (n: number) => RUNS_GIVEN ?? (n >= 5000 ? 3 : 5);

type Tool = 'ours' | 'pev2';
const profileArg = process.argv.indexOf('--profile');
/** A folder to write a CPU profile of each tool's first cold render into (Chrome DevTools format). */
const PROFILE_DIR = profileArg > 0 ? resolve(process.argv[profileArg + 1]!) : undefined;
const profiled = new Set<string>();
const toolsArg = process.argv.indexOf('--tools');
/** The tools to run, e.g. --tools ours (both by default). */
const TOOLS = (toolsArg > 0 ? process.argv[toolsArg + 1]!.split(',') : ['ours', 'pev2']) as Tool[];
const WARM_SMALL = process.argv.includes('--warm-small');
const baselineArg = process.argv.indexOf('--baseline');
/** A revision whose view is measured beside this tree's (--warm-small only). */
const BASELINE = baselineArg > 0 ? process.argv[baselineArg + 1] : undefined;
const arrivalsArg = process.argv.indexOf('--arrivals');
const ARRIVALS = arrivalsArg > 0 ? Number(process.argv[arrivalsArg + 1]) : 40;

/** One fresh tab's figures; NaN marks a drawing that did not settle within SETTLE_LIMIT_MS. */
interface Sample {
  load: number;
  coldDrawn: number;
  coldClick: number;
  warmDrawn: number;
  warmClick: number;
  cards: number;
}

/** A drawing that did not settle in time: what the tab reports instead of figures. */
class SettleTimeout extends Error {}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Production bundles of both pages, built with the same esbuild into the ignored cache folder. */
async function bundle(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  // A profiled run keeps the names readable: whitespace and syntax are still minified.
  const common = { bundle: true, platform: 'browser', target: 'es2022', minifyWhitespace: true, minifySyntax: true, minifyIdentifiers: PROFILE_DIR === undefined, logLevel: 'warning', legalComments: 'none' } as const;
  await build({ ...common, entryPoints: [join(ROOT, 'webview', 'main.ts')], outfile: join(OUT, 'webview.js'), format: 'iife' });
  await build({
    ...common,
    entryPoints: { pev2: join(ROOT, 'bench', 'pev2-page.ts') },
    outdir: OUT,
    format: 'iife',
    loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file' },
    // Vue's production build, as an application bundler would select it.
    define: { 'process.env.NODE_ENV': '"production"', __VUE_OPTIONS_API__: 'true', __VUE_PROD_DEVTOOLS__: 'false', __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false' },
  });
}

/** Serves our view with the extension's page skeleton and policy, and the pev2 page without a policy. */
function serve(): Promise<Server> {
  const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const origin = `http://${req.headers.host}`;
    if (url.pathname === '/ours' || url.pathname === '/base') {
      const base = url.pathname === '/base';
      const html = webviewHtml({
        cspSource: origin,
        nonce: 'benchnonce0123456789',
        scriptUri: `${origin}/static/${base ? 'base-webview.js' : 'webview.js'}`,
        styleUri: `${origin}/static/${base ? 'base-style.css' : 'style.css'}`,
        title: 'Plan view benchmark',
      });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
      return;
    }
    if (url.pathname === '/pev2') {
      // pev2 sets inline styles and has no policy of its own, so its page runs without one.
      const html = `<!doctype html><html><head><meta charset="utf-8"><title>pev2 benchmark</title>
<link rel="stylesheet" href="/static/pev2.css"></head>
<body><div id="app" class="d-flex flex-column vh-100"></div><script src="/static/pev2.js"></script></body></html>`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
      return;
    }
    const m = /^\/static\/([\w.-]+)$/.exec(url.pathname);
    const file = m ? (m[1] === 'style.css' ? join(ROOT, 'webview', 'style.css') : m[1] === 'base-style.css' ? join(OUT, 'base-src', 'webview', 'style.css') : join(OUT, m[1]!)) : undefined;
    let body: Buffer | undefined;
    try {
      body = file ? readFileSync(file) : undefined;
    } catch {
      body = undefined;
    }
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[file!.split('.').pop()!] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

/**
 * In-page: hands the plan over with `start`, then watches the drawing once per frame (after the frame's
 * tasks) until it has not changed for three frames, clicks the root node and waits for the frame that
 * shows the answer. Returns milliseconds from hand-over to the settled drawing, and from click to answer.
 */
async function renderInPage(page: Page, tool: Tool, payload: string): Promise<{ drawn: number; click: number; cards: number }> {
  const r = await page.evaluate(
    async ({ tool, payload, limit }) => {
      const cardSel = tool === 'ours' ? 'svg.tree g.card' : '.plan-node';
      const nextFrame = () => new Promise<void>((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      const signature = () => {
        const cards = document.querySelectorAll(cardSel);
        if (cards.length === 0) return '0';
        const a = cards[0]!.getBoundingClientRect();
        const b = cards[cards.length - 1]!.getBoundingClientRect();
        return `${cards.length}|${a.x},${a.y},${a.width},${a.height}|${b.x},${b.y},${b.width},${b.height}`;
      };
      const t0 = performance.now();
      if (tool === 'ours') window.postMessage(JSON.parse(payload), '*');
      else (window as unknown as { pev2Bench: { mount(t: string): void } }).pev2Bench.mount(payload);
      let last = '0';
      let settledAt = 0;
      let still = 0;
      for (;;) {
        await nextFrame();
        const sig = signature();
        if (sig !== last) {
          last = sig;
          settledAt = performance.now();
          still = 0;
        } else if (sig !== '0' && ++still >= 3) break;
        if (performance.now() - t0 > limit) return undefined;
      }
      const cards = document.querySelectorAll(cardSel).length;
      let target: Element | null;
      let answered: () => boolean;
      if (tool === 'ours') {
        document.querySelector('.node-panel')!.replaceChildren();
        target = document.querySelector('svg.tree g.card[data-id="0"]');
        answered = () => document.querySelector('svg.tree g.card.active[data-id="0"]') !== null && document.querySelector('.node-panel')!.childElementCount > 0;
      } else {
        // The "#id" link in the root node's header selects the node.
        target = document.querySelector('.plan-node header a');
        answered = () => document.querySelector('.plan-node.selected') !== null;
      }
      if (!target) throw new Error(`${tool}: no root node to click`);
      const tc = performance.now();
      target.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
      while (!answered()) {
        await nextFrame();
        if (performance.now() - tc > 30_000) throw new Error(`${tool}: the click was not answered within 30 s`);
      }
      await nextFrame();
      return { drawn: settledAt - t0, click: performance.now() - tc, cards };
    },
    { tool, payload, limit: SETTLE_LIMIT_MS },
  );
  if (!r) throw new SettleTimeout(`${tool}: the drawing did not settle within ${SETTLE_LIMIT_MS / 1000} s`);
  return r;
}

/** A new page that keeps its errors and notes when the view said it is ready (`benchReadyAt`). */
async function benchPage(context: BrowserContext): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // tsx names the functions it compiles with a `__name` helper, which the page does not have.
  await page.addInitScript('window.__name = (fn) => fn;');
  await page.addInitScript(() => {
    window.addEventListener('qpi-outbound', (e) => {
      if ((e as CustomEvent<{ type: string }>).detail.type === 'ready') (window as unknown as { benchReadyAt: number }).benchReadyAt = performance.now();
    });
  });
  return { page, errors };
}

async function oneRun(context: BrowserContext, origin: string, tool: Tool, payload: string): Promise<Sample> {
  const { page, errors } = await benchPage(context);
  // pev2's page has no ready message: it is ready when its document is.
  await page.addInitScript(() => {
    document.addEventListener('DOMContentLoaded', () => {
      if ((window as unknown as { pev2Bench?: unknown }).pev2Bench) (window as unknown as { benchReadyAt: number }).benchReadyAt = performance.now();
    });
  });
  await page.goto(`${origin}/${tool}`);
  await page.waitForFunction(() => typeof (window as unknown as { benchReadyAt?: number }).benchReadyAt === 'number');
  const load = await page.evaluate(() => (window as unknown as { benchReadyAt: number }).benchReadyAt);
  const key = `${tool}-${payload.length}`;
  const cdp = PROFILE_DIR !== undefined && !profiled.has(key) ? await context.newCDPSession(page) : undefined;
  if (cdp) {
    profiled.add(key);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.start');
  }
  try {
    const cold = await renderInPage(page, tool, payload);
    if (cdp) {
      const { profile } = await cdp.send('Profiler.stop');
      mkdirSync(PROFILE_DIR!, { recursive: true });
      writeFileSync(join(PROFILE_DIR!, `${key}.cpuprofile`), JSON.stringify(profile));
    }
    const warm = await renderInPage(page, tool, payload);
    if (errors.length) throw new Error(`${tool}: page errors: ${errors.join('; ')}`);
    return { load, coldDrawn: cold.drawn, coldClick: cold.click, warmDrawn: warm.drawn, warmClick: warm.click, cards: cold.cards };
  } catch (err) {
    if (!(err instanceof SettleTimeout)) throw err;
    return { load, coldDrawn: NaN, coldClick: NaN, warmDrawn: NaN, warmClick: NaN, cards: NaN };
  } finally {
    await page.close();
  }
}

/** Node-side work of the extension before the message exists, median of `runs` after two warm-ups. */
function hostPrep(text: string, n: number, runs: number): { ms: number; payload: string; nodes: number } {
  let payload = '';
  let nodes = 0;
  const times: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const t = performance.now();
    const r = loadPlan(text);
    if (!r.ok) throw new Error(`the generated ${n}-node plan did not load: ${r.refusal}`);
    const findings = analyze(r.plan);
    const msg: ShowPlanMessage = { type: 'showPlan', title: `Generated ${n}-node plan`, plan: wirePlan(r.plan), findings };
    payload = JSON.stringify(msg);
    if (i >= 2) times.push(performance.now() - t);
    nodes = r.plan.nodes.length;
  }
  return { ms: median(times), payload, nodes };
}

const f = (x: number) => (Number.isNaN(x) ? `> ${SETTLE_LIMIT_MS / 1000} s` : x < 10 ? x.toFixed(1) : x.toFixed(0)).padStart(7);

// ---- a small plan arriving in a panel that shows another plan (the warm Explain) ---------------------

/** One arrival's figures in milliseconds (see the header). */
interface Arrival {
  handler: number;
  frame: number;
  drawn: number;
  settled: number;
}

type Build = 'ours' | 'base';

/** Builds the view as it was at `rev` from git's copy of webview/ and src/, beside this tree's bundle. */
async function bundleBaseline(rev: string): Promise<string> {
  const dir = join(OUT, 'base-src');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', rev, 'webview', 'src'], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  const sha = execFileSync('git', ['rev-parse', '--short', rev], { cwd: ROOT, encoding: 'utf8' }).trim();
  await build({
    bundle: true, platform: 'browser', target: 'es2022', minifyWhitespace: true, minifySyntax: true, minifyIdentifiers: PROFILE_DIR === undefined,
    logLevel: 'warning', legalComments: 'none', format: 'iife',
    entryPoints: [join(dir, 'webview', 'main.ts')], outfile: join(OUT, 'base-webview.js'), nodePaths: [join(ROOT, 'node_modules')],
  });
  return sha;
}

/** The showPlan message the extension posts after an Explain (explain.ts): slim plan, findings, no advice yet. */
function explainMessage(text: string, title: string): string {
  const r = loadPlan(text);
  if (!r.ok) throw new Error(`${title} did not load: ${r.refusal}`);
  const msg: ShowPlanMessage = { type: 'showPlan', title, plan: wirePlan(r.plan), findings: analyze(r.plan), hasRawText: true, suggestions: [] };
  return JSON.stringify(msg);
}

/** The same explain output with every timing 10% longer: the same query explained again. */
function slower(value: unknown, key = ''): unknown {
  if (typeof value === 'number') return /Time|Millis/.test(key) ? Math.round(value * 1.1 * 1000 + 1) / 1000 : value;
  if (Array.isArray(value)) return value.map((v) => slower(v));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, slower(v, k)]));
  return value;
}

/**
 * Two messages of one engine's sample query, as the explain's JSON text: `another` is the query's plan
 * without the index and with it (another plan arrives), `again` is the plan without the index and the
 * same with other timings (the same query explained again, the bench:explain case).
 */
function samplePlans(engine: 'postgresql' | 'mongodb', which: 'another' | 'again'): [string, string] {
  const dir = join(ROOT, 'test', 'fixtures', 'truth-plans');
  const read = (f: string, key: string) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>)[key];
  const [first, other, key, title] = engine === 'postgresql'
    ? ['p10a_orders_two_tables/loser4_noIndex__none_PK_only_.json', 'p10a_orders_two_tables/oracle__order_details_product_id_order_id_.json', 'natural', 'orders.sql:5 (Orders of country 1 that contain product 5)']
    : ['m01_orders_elemmatch_sort/loser3_COLLSCAN__COLLSCAN.json', 'm01_orders_elemmatch_sort/oracle__country_id_1_order_details.product_id_1_created_at_-1.json', 'hinted_explain', 'orders.mongodb.js:7 (db.orders.find)'];
  const a = read(first, key);
  const b = which === 'another' ? read(other, key) : slower(a);
  return [explainMessage(JSON.stringify(a), title), explainMessage(JSON.stringify(b), title)];
}

/**
 * In-page: hands one message over, times the view's handler (a listener added after the view's runs
 * right after it for the same event), then the first frame after it, then waits until the view is done
 * (its side panel filled, no frame changes the page any more).
 */
async function arriveInPage(page: Page, payload: string): Promise<Arrival> {
  return page.evaluate(async (payload) => {
    const frameAfter = () => new Promise<{ raf: number; after: number }>((ok) => requestAnimationFrame(() => {
      const raf = performance.now();
      setTimeout(() => ok({ raf, after: performance.now() }), 0);
    }));
    // The cards and the summary line (the same query again may change only the total time).
    const cardsText = () => Array.from(document.querySelectorAll('svg.tree g.card, span.summary'), (c) => c.textContent).join('|');
    const sideText = () => ['.node-panel', '.findings-panel', '.plan-panel', 'span.summary'].map((s) => document.querySelector(s)?.textContent ?? '').join('|');
    const before = cardsText();
    let handledAt = 0;
    const mark = () => { handledAt = performance.now(); };
    window.addEventListener('message', mark, { once: true });
    const t0 = performance.now();
    window.postMessage(JSON.parse(payload), '*');
    const first = await frameAfter();
    if (handledAt === 0) throw new Error('the message was not handled before the next frame');
    if (cardsText() === before) throw new Error('the first frame after the message does not show the new plan');
    // Done: two frames in a row without a change to the cards or the side panel.
    let last = cardsText() + sideText();
    let still = 0;
    let settledAt = first.after;
    while (still < 2) {
      const f = await frameAfter();
      const now = cardsText() + sideText();
      if (now !== last) {
        last = now;
        settledAt = f.after;
        still = 0;
      } else still++;
    }
    return { handler: handledAt - t0, frame: first.after - t0, drawn: handledAt - t0 + (first.after - first.raf), settled: settledAt - t0 };
  }, payload);
}

async function warmSmall(): Promise<void> {
  const t = performance.now();
  mkdirSync(OUT, { recursive: true });
  await build({ bundle: true, platform: 'browser', target: 'es2022', minifyWhitespace: true, minifySyntax: true, minifyIdentifiers: PROFILE_DIR === undefined, logLevel: 'warning', legalComments: 'none', entryPoints: [join(ROOT, 'webview', 'main.ts')], outfile: join(OUT, 'webview.js'), format: 'iife' });
  const baseSha = BASELINE ? await bundleBaseline(BASELINE) : undefined;
  const builds: Build[] = baseSha ? ['ours', 'base'] : ['ours'];
  const server = await serve();
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const userDataDir = mkdtempSync(join(tmpdir(), 'qpi-bench-'));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: VIEWPORT, deviceScaleFactor: 1 });
  const TABS = 3;
  console.log(`A small plan arriving in a panel that shows another plan (the warm Explain), Chromium ${context.browser()?.version() ?? ''} headless, ${VIEWPORT.width}x${VIEWPORT.height};`);
  console.log(`${ARRIVALS} arrivals of each of the two plans per tab, ${TABS} tabs per build${baseSha ? `, this tree against ${BASELINE} (${baseSha}), tabs interleaved` : ''}. Medians in ms.`);
  console.log('handler = hand-over -> handler done; drawn = handler + the next frame\'s own time; frame = hand-over -> that frame painted; settled = the view done.');
  console.log('');
  try {
    for (const [engine, which] of [['postgresql', 'another'], ['postgresql', 'again'], ['mongodb', 'another'], ['mongodb', 'again']] as const) {
      const [a, b] = samplePlans(engine, which);
      const got: Record<Build, Arrival[]> = { ours: [], base: [] };
      for (let tab = 0; tab < TABS; tab++) {
        const order = tab % 2 === 0 ? builds : [...builds].reverse();
        for (const build of order) {
          const { page, errors } = await benchPage(context);
          await page.goto(`${origin}/${build}`);
          await page.waitForFunction(() => typeof (window as unknown as { benchReadyAt?: number }).benchReadyAt === 'number');
          // The panel already shows a plan; a few arrivals warm the page's code up first, as earlier Explains did.
          for (let i = 0; i < 5; i++) {
            await arriveInPage(page, a);
            await arriveInPage(page, b);
          }
          const cdp = PROFILE_DIR !== undefined && tab === 0 ? await context.newCDPSession(page) : undefined;
          if (cdp) {
            await cdp.send('Profiler.enable');
            await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
            await cdp.send('Profiler.start');
          }
          for (let i = 0; i < ARRIVALS; i++) {
            got[build].push(await arriveInPage(page, a));
            got[build].push(await arriveInPage(page, b));
          }
          if (cdp) {
            const { profile } = await cdp.send('Profiler.stop');
            mkdirSync(PROFILE_DIR!, { recursive: true });
            writeFileSync(join(PROFILE_DIR!, `warm-small-${engine}-${which}-${build}.cpuprofile`), JSON.stringify(profile));
          }
          if (errors.length) throw new Error(`${build}: page errors: ${errors.join('; ')}`);
          await page.close();
        }
      }
      const m = (build: Build, k: keyof Arrival) => median(got[build].map((x) => x[k]));
      const what = which === 'another' ? 'its plan without and with the index in turn' : 'the same plan again with other timings';
      console.log(`${engine === 'postgresql' ? 'PostgreSQL, the join (EXPLAIN ANALYZE)' : 'MongoDB, the find (executionStats)'}, ${what}: messages of ${(a.length / 1024).toFixed(1)} and ${(b.length / 1024).toFixed(1)} KB`);
      console.log('          handler    drawn    frame  settled');
      for (const build of builds) {
        console.log(`  ${(build === 'ours' ? 'now' : 'before').padEnd(6)} ${f(m(build, 'handler'))}  ${f(m(build, 'drawn'))}  ${f(m(build, 'frame'))}  ${f(m(build, 'settled'))}`);
      }
      if (baseSha) {
        const r = (k: keyof Arrival) => `${(m('ours', k) / m('base', k)).toFixed(2)}x`;
        console.log(`  now/before: handler ${r('handler')}, drawn ${r('drawn')}, frame ${r('frame')}, settled ${r('settled')}`);
      }
      console.log('');
    }
    console.log(`Total ${((performance.now() - t) / 1000).toFixed(0)} s.`);
  } finally {
    await context.close();
    await new Promise<void>((ok) => server.close(() => ok()));
    rmSync(userDataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (WARM_SMALL) return warmSmall();
  const t = performance.now();
  await bundle();
  const server = await serve();
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const userDataDir = mkdtempSync(join(tmpdir(), 'qpi-bench-'));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: VIEWPORT, deviceScaleFactor: 1 });
  const version = context.browser()?.version() ?? (await (async () => {
    const p = await context.newPage();
    const ua = await p.evaluate(() => navigator.userAgent);
    await p.close();
    return /Chrome\/([\d.]+)/.exec(ua)?.[1] ?? 'unknown';
  })());
  console.log(`Plan view vs pev2 1.21.0: generated PostgreSQL JSON plans, Chromium ${version} headless, ${VIEWPORT.width}x${VIEWPORT.height}, medians over fresh tabs, the tools interleaved.`);
  console.log('load = navigation -> script ready; drawn = plan handed over -> drawing settled; click = click on root node -> shown selected;');
  console.log('ready = drawn + click; cold = first plan in the tab, warm = same plan again; host = loadPlan+analyze+wirePlan+stringify in Node.');
  console.log('');
  try {
    for (const n of SIZES) {
      const text = generatePostgresJsonPlan(n);
      const runs = runsFor(n);
      const prep = hostPrep(text, n, runs);
      const samples: Record<Tool, Sample[]> = { ours: [], pev2: [] };
      for (let r = 0; r < runs; r++) {
        // Alternate which tool goes first so neither always meets a warmer machine.
        const order: Tool[] = r % 2 === 0 ? ['ours', 'pev2'] : ['pev2', 'ours'];
        for (const tool of order.filter((t) => TOOLS.includes(t))) {
          // After a timeout the other tabs of this size would time out too: two minutes each for nothing.
          if (samples[tool].some((x) => Number.isNaN(x.coldDrawn))) continue;
          samples[tool].push(await oneRun(context, origin, tool, tool === 'ours' ? prep.payload : text));
        }
      }
      // A timeout is the result of the size: any tab that timed out makes the median "> 120 s".
      const timedOut = (tool: Tool) => samples[tool].some((x) => Number.isNaN(x.coldDrawn));
      const m = (tool: Tool, k: keyof Sample) => (timedOut(tool) ? NaN : median(samples[tool].map((s) => s[k])));
      const ready = (tool: Tool, w: 'cold' | 'warm') => (timedOut(tool) ? NaN : median(samples[tool].map((s) => (w === 'cold' ? s.coldDrawn + s.coldClick : s.warmDrawn + s.warmClick))));
      console.log(`${n.toLocaleString('en-US')} nodes, median of up to ${runs} tabs per tool (${(text.length / 1024).toFixed(0)} KB of plan text; our message ${(prep.payload.length / 1024).toFixed(0)} KB, ${prep.nodes} nodes read; host ${prep.ms.toFixed(1)} ms)`);
      console.log('         load ms  cold: drawn  click  ready   warm: drawn  click  ready   cards in DOM');
      for (const tool of TOOLS) {
        console.log(`  ${tool.padEnd(5)} ${f(m(tool, 'load'))}       ${f(m(tool, 'coldDrawn'))}${f(m(tool, 'coldClick'))}${f(ready(tool, 'cold'))}        ${f(m(tool, 'warmDrawn'))}${f(m(tool, 'warmClick'))}${f(ready(tool, 'warm'))}   ${timedOut(tool) ? '-' : m(tool, 'cards')}`);
      }
      if (TOOLS.length < 2) {
        console.log('');
        continue;
      }
      const oursCold = ready('ours', 'cold');
      const pevCold = ready('pev2', 'cold');
      // Against a timeout the ratio is an upper bound: pev2 took at least the limit.
      const ratio = (a: number, b: number) => (Number.isNaN(a) ? 'n/a' : Number.isNaN(b) ? `< ${(a / SETTLE_LIMIT_MS).toFixed(3)}x` : `${(a / b).toFixed(2)}x`);
      const pevText = Number.isNaN(pevCold) ? `> ${SETTLE_LIMIT_MS / 1000} s` : `${pevCold.toFixed(0)} ms`;
      console.log(
        `  ours/pev2: cold ready ${ratio(oursCold, pevCold)}, warm ready ${ratio(ready('ours', 'warm'), ready('pev2', 'warm'))}; ` +
          `text -> ready (host + cold ready) ${(oursCold + prep.ms).toFixed(0)} ms vs ${pevText} = ${ratio(oursCold + prep.ms, pevCold)}`,
      );
      console.log('');
    }
    console.log('Our view draws the top of a big plan and collapses the rest (cards in DOM); pev2 draws every node.');
    console.log(`Total ${((performance.now() - t) / 1000).toFixed(0)} s.`);
  } finally {
    await context.close();
    await new Promise<void>((ok) => server.close(() => ok()));
    rmSync(userDataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
