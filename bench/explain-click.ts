// Explain from the click to the panel, in a real VS Code host: the packed .vsix installed into
// code-server, the samples' folder opened in Chromium with its connections in the folder settings (the
// samples' data loaded into the servers of scripts/with-servers.mjs), and "Explain Query" clicked in the
// editor's context menu on the first query of orders.sql and of orders.mongodb.js.
//
//   click to panel ready   from the mouse-up on the menu item (the workbench page's own event time) to the
//                          first change to the plan's cards in the webview after it (a mutation observer
//                          in the webview's frame, attached again whenever the frame's document changes;
//                          a first draw seen only at attaching counts at that moment, 20 ms late at most).
//   first                  the first Explain after the window opens, one window per sample (a new
//                          extension host on the same code-server): the first in a new browser profile,
//                          whose first webview also registers the webview's service worker, the others
//                          that window reloaded, as a user reopens it.
//   warm                   further Explains of the same query in the last window, each after the previous
//                          one's advice and measurement have finished (read from the Output log); from the
//                          context menu and from the Explain lens above the query, in turn.
//   baseline               the same explain through the driver (`pg`, `mongodb`) from this process, on an
//                          open connection and with a connection opened and closed around it, run just
//                          before each click, so both see the same machine and server state.
//
// The Output log's step line of every Explain (src/extension/explainSteps.ts) says where the time went in
// the extension host; the session Explain keeps per connection (src/extension/connections/sessions.ts) is
// opened when the file is shown, so the first Explain of a window finds it open too. A benchmark prints
// figures; it asserts nothing.
// The first Explain of a window also says when the plan's page asked for its script and style sheet and
// when they had come (the page's own resource timings), from the click.
// "handed to page" splits the stretch from the plan handed to the panel to its cards drawn: the message's way
// from the extension host through the workbench to the plan's page, and then the page's own work.
// Run: npm run bench:explain [-- --runs N (warm, default 10) --first N (default 3) --trace FILE]

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { Workbench } from '../test/host/workbench';
import { median, runsArg, serverUri } from './support';
// host.mjs ends in a top-level await, so it is imported dynamically (as scripts/demo.ts does).
type Hosting = typeof import('../scripts/host.mjs');

const WARM = runsArg(10);
const firstArg = process.argv.indexOf('--first');
const FIRST = firstArg > 0 ? Number(process.argv[firstArg + 1]) : 3;
const TARGET = { warm: 1000, first: 3000, overhead: 50 };
const ROOT = resolve(import.meta.dirname, '..');
const traceArg = process.argv.indexOf('--trace');
/**
 * `--trace FILE`: a Chromium trace of each engine's last warm Explain is written to FILE.<engine>.json, and of
 * the first Explain in its last reopened window to FILE.<engine>.first.json.
 */
const TRACE = traceArg > 0 ? process.argv[traceArg + 1] : undefined;

/** Starts a Chromium trace (the workbench and its webview's frames); the function returned ends it and gives its JSON. */
async function startTrace(page: import('playwright-core').Page, file: string): Promise<() => Promise<string>> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Tracing.start', { transferMode: 'ReturnAsStream', traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel', 'v8.execute', 'blink.user_timing', 'disabled-by-default-devtools.timeline.frame', 'ipc', 'mojom'] } });
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  return async () => {
    const { profile } = await cdp.send('Profiler.stop');
    writeFileSync(file.replace(/\.json$/, '.cpuprofile'), JSON.stringify(profile));
    const done = new Promise<string>((r) => cdp.once('Tracing.tracingComplete', (e) => r(e.stream!)));
    await cdp.send('Tracing.end');
    const stream = await done;
    let text = '';
    for (;;) {
      const chunk = await cdp.send('IO.read', { handle: stream });
      text += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString('utf8') : chunk.data;
      if (chunk.eof) break;
    }
    await cdp.send('IO.close', { handle: stream });
    await cdp.detach();
    return text;
  };
}

/** Runs in the workbench page before its scripts: keeps the time of the last mouse-up. */
const MOUSE_UP = `if (window === window.top) window.addEventListener('mouseup', (e) => { window.__qpiUp = performance.timeOrigin + e.timeStamp; }, true);`;

/**
 * Evaluated in the plan's page (PLAN_PAGE), again and again while an Explain runs: watches its current document
 * (the webview writes its page anew after the frame exists) for any change to a plan card, and returns
 * the times of the changes seen. Cards already there when a document is first watched count at that
 * moment: a bound from above, a poll's interval late at most. Also notes when each message reached the
 * frame (the event's own time, whichever listener is called first).
 */
const WATCH = `(() => {
  const w = window;
  w.__qpiCards ??= [];
  if (w.__qpiWatched !== document) {
    w.__qpiWatched = document;
    const card = (n) => {
      const e = n && (n.nodeType === 1 ? n : n.parentElement);
      return !!e && (!!e.closest('g.card') || (typeof e.querySelector === 'function' && !!e.querySelector('g.card')));
    };
    new MutationObserver((records) => {
      if (records.some((r) => card(r.target) || Array.from(r.addedNodes).some(card))) w.__qpiCards.push(performance.timeOrigin + performance.now());
    }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    if (document.querySelector('g.card')) w.__qpiCards.push(performance.timeOrigin + performance.now());
  }
  // Added again at every evaluation (the same function is added once): a page written anew into the
  // same document loses the window's listeners.
  w.__qpiMsgs ??= [];
  w.__qpiOnMessage ??= (e) => { w.__qpiMsgs.push(performance.timeOrigin + e.timeStamp); };
  window.addEventListener('message', w.__qpiOnMessage, true);
  return w.__qpiCards;
})()`;

/** The frame the plan's page runs in: the webview's inner frame, its document written anew by the workbench. */
const PLAN_PAGE = /\/webview\/browser\/pre\/fake\.html/;

/** The times messages reached a frame (the listener WATCH adds): in the plan's page, the host's messages. */
const MESSAGES = 'window.__qpiMsgs ?? []';

interface Engine {
  name: string;
  file: string;
  /** Text of the line right-clicked: the query's first line. */
  line: string;
  what: string;
  raw(): Promise<unknown>;
  rawConnect(): Promise<unknown>;
  close(): Promise<void>;
}

const SQL = `SELECT o.id, o.created_at
FROM orders o
JOIN order_details d ON d.order_id = o.id
WHERE o.country_id = 1 AND d.product_id = 5
ORDER BY o.created_at DESC
LIMIT 10`;

async function postgres(uri: string): Promise<Engine> {
  const open = new pg.Client({ connectionString: uri });
  await open.connect();
  const text = `EXPLAIN (FORMAT JSON, ANALYZE, BUFFERS) ${SQL}`;
  return {
    name: 'PostgreSQL', file: 'orders.sql', line: 'o.id,', what: 'orders.sql, its first statement (a join), EXPLAIN (ANALYZE, BUFFERS)',
    raw: () => open.query(text),
    rawConnect: async () => {
      const c = new pg.Client({ connectionString: uri });
      await c.connect();
      await c.query(text);
      await c.end();
    },
    close: () => open.end(),
  };
}

async function mongodb(uri: string): Promise<Engine> {
  const open = new MongoClient(uri);
  await open.connect();
  const command = {
    explain: { find: 'orders', filter: { country_id: 1, order_details: { $elemMatch: { product_id: 5 } } }, sort: { created_at: -1 }, limit: 10 },
    verbosity: 'executionStats',
  };
  return {
    name: 'MongoDB', file: 'orders.mongodb.js', line: '$elemMatch', what: 'orders.mongodb.js, its first find, explain at executionStats',
    raw: () => open.db().command(command),
    rawConnect: async () => {
      const c = new MongoClient(uri);
      await c.connect();
      await c.db().command(command);
      await c.close();
    },
    close: () => open.close(),
  };
}

async function pause(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

async function poll<T>(what: string, timeoutMs: number, read: () => Promise<T | undefined> | T | undefined, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(everyMs);
  }
}

/** The extension's Output log files under the host's folder (VS Code writes each channel to one per window). */
function logFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'Query Plan Inspector.log') found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

const count = (text: string, re: RegExp) => text.match(re)?.length ?? 0;
const STEP_LINE = /step by step: (.*) \(total ([\d,]+) ms\)\./g;
const PARTS_LINE = /the explain's parts: (.*)\.$/gm;
const ADVISED = /: advise [\d,]+ ms, after the plan was shown/g;
const MEASURING = /Measuring the suggestions of /g;
const MEASURED = /: measure [\d,]+ ms, after the plan was shown/g;

type Steps = Record<string, number>;

/** The time of the last line of the log matching `re` ("2026-01-31 12:00:00.123 [info] ..."), as epoch ms. */
function lastAt(text: string, re: RegExp): number | undefined {
  let at: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})/.exec(line);
    if (m && re.test(line)) at = new Date(`${m[1]}T${m[2]}`).getTime();
  }
  return at;
}

function lastSteps(text: string): Steps {
  const all = [...text.matchAll(STEP_LINE)];
  const last = all.at(-1);
  const steps: Steps = {};
  if (!last) return steps;
  for (const part of last[1]!.split(', ')) {
    const m = /^(\w+) ([\d,]+) ms$/.exec(part);
    if (m) steps[m[1]!] = Number(m[2]!.replace(/,/g, ''));
  }
  steps.total = Number(last[2]!.replace(/,/g, ''));
  // PostgreSQL's explain in its parts, when the log gives them (after the step line).
  const parts = [...text.slice(last.index).matchAll(PARTS_LINE)][0];
  for (const part of parts ? parts[1]!.split(', ') : []) {
    const m = /^(.+) ([\d.]+) ms$/.exec(part);
    if (m) steps[`explain: ${m[1]!}`] = Number(m[2]);
  }
  return steps;
}

/** One window on the host: its Output log, and Explain clicked and timed in it. */
class Window {
  private clicks = 0;

  private constructor(readonly wb: Workbench, private readonly log: string) {}

  /** A window in a new browser profile (`reopen` undefined), or `reopen`'s browser with its window reloaded. */
  static async open(host: { url: string; ws: string; run: string }, reopen?: Window): Promise<Window> {
    const before = new Set(logFiles(host.run));
    let wb: Workbench;
    if (reopen) {
      wb = reopen.wb;
      await wb.reload();
    } else {
      wb = await Workbench.open(host.url, host.ws, undefined, MOUSE_UP);
    }
    const log = await poll('the extension\'s Output log of the new window', 120_000, () => logFiles(host.run).find((f) => !before.has(f) && /activated in/.test(readFileSync(f, 'utf8'))));
    return new Window(wb, log);
  }

  /** Clicks Explain Query on `engine`'s query; returns click-to-panel-ready and the step line, once everything it started has finished. */
  async explain(engine: Engine, via: 'menu' | 'lens' = 'menu', trace?: string): Promise<{ ms: number; steps: Steps }> {
    const page = this.wb.page;
    // Only the plan's page is watched: an observer on the workbench's own document would run on the
    // workbench's thread at each of its changes while the click is carried, and count there.
    const seen = async (): Promise<number[]> => (await Promise.all(page.frames().filter((f) => PLAN_PAGE.test(f.url())).map((f) => f.evaluate(WATCH).catch(() => []) as Promise<number[]>))).flat();
    await seen();
    const tracing = trace === undefined ? undefined : await startTrace(page, trace);
    const before = Date.now();
    if (via === 'lens') await this.wb.clickLensAbove(engine.line, /Explain/);
    else await this.wb.explainLine(engine.line);
    this.clicks++;
    const up = (await page.evaluate('window.__qpiUp')) as number | undefined ?? before;
    // When each of the webview's two frames started loading (its own time origin): the workbench's
    // frame of the panel (index.html), and the page the plan view runs in (fake.html, written anew).
    const origins = async (): Promise<Record<string, number>> => {
      const found: Record<string, number> = {};
      for (const f of page.frames()) {
        const m = /\/webview\/browser\/pre\/(index|fake)\.html/.exec(f.url());
        if (!m) continue;
        const t = await f.evaluate('performance.timeOrigin').catch(() => undefined) as number | undefined;
        if (t !== undefined && t > up - 120_000) found[m[1] === 'index' ? 'click to panel frame' : 'click to plan page'] = t;
        if (m[1] === 'fake') {
          const loads = await f.evaluate('performance.getEntriesByType("resource").map((e) => [e.name.split("/").pop(), performance.timeOrigin + e.startTime, performance.timeOrigin + e.responseEnd])').catch(() => []) as [string, number, number][];
          for (const [name, start, end] of loads) {
            found[`click to ${name} asked`] = start;
            found[`click to ${name} loaded`] = end;
          }
        }
      }
      return found;
    };
    const drawn = await poll('the plan drawn in the panel', 120_000, async () => {
      const after = (await seen()).filter((t) => t > up);
      return after.length > 0 ? Math.min(...after) : undefined;
    }, 20);
    if (tracing && trace !== undefined) writeFileSync(trace, await tracing());
    // Everything the Explain started is over before the next click: its advice, and a measurement.
    const text = await poll('the Explain\'s advice (and measurement) in the Output log', 300_000, () => {
      const t = readFileSync(this.log, 'utf8');
      if (count(t, STEP_LINE) < this.clicks || count(t, ADVISED) < this.clicks || count(t, MEASURED) < count(t, MEASURING)) return undefined;
      return t;
    }, 200);
    // Where the click's time went as the log's clocks tell it: to the line that starts the explain (the
    // command has found the query, its connection and loaded the adapters), to the step line (the plan
    // handed to the panel), and from there to the cards drawn.
    const steps = lastSteps(text);
    if (this.clicks === 1) for (const [k, t] of Object.entries(await origins())) steps[k] = Math.round(t - up);
    const started = lastAt(text, /\] Explaining /);
    const handed = lastAt(text, /step by step: /);
    if (started !== undefined) steps['click to "Explaining"'] = Math.round(started - up);
    // The part of it before the command ran in the extension host (the menu, the workbench, the message
    // to the extension host): what is left when the host's own steps before the explain are taken away.
    if (started !== undefined && steps.find !== undefined && steps.prepare !== undefined) steps['click to the command'] = Math.round(started - up - steps.find - steps.prepare);
    if (handed !== undefined) {
      steps['handed to drawn'] = Math.round(drawn - handed);
      // The same stretch in two: to the plan's page (the extension host's message through the workbench
      // and the webview's frame), and the page's own work to the cards.
      let arrived: number | undefined;
      for (const f of page.frames()) {
        if (!PLAN_PAGE.test(f.url())) continue;
        const times = (await f.evaluate(MESSAGES).catch(() => [])) as number[];
        for (const t of times) if (t >= handed - 2 && t <= drawn && (arrived === undefined || t < arrived)) arrived = t;
      }
      if (arrived !== undefined) {
        steps['handed to page'] = Math.round(arrived - handed);
        steps['page to drawn'] = Math.round(drawn - arrived);
      }
    }
    // The first Explain of a window: how long before (negative: after) the click the background loading of
    // the adapters, drivers and parser had finished.
    const warmed = lastAt(text, /\] Explain is ready: /);
    if (this.clicks === 1 && warmed !== undefined) steps['warmed before the click'] = Math.round(up - warmed);
    // The session the Explain uses, opened when the file was shown: how long before the click.
    const session = lastAt(text, /\] Explain's session on .* is open/);
    if (this.clicks === 1 && session !== undefined) steps['session open before the click'] = Math.round(up - session);
    return { ms: drawn - up, steps };
  }

  close(): Promise<void> {
    return this.wb.close();
  }
}

function fmt(ms: number): string {
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

function stepMedians(all: Steps[]): string {
  const keys = [...new Set(all.flatMap((s) => Object.keys(s)))];
  // An explain's parts are under a few milliseconds each: to a tenth.
  return keys.map((k) => `${k} ${k.startsWith('explain: ') ? `${median(all.map((s) => s[k] ?? 0)).toFixed(1)} ms` : fmt(median(all.map((s) => s[k] ?? 0)))}`).join(', ');
}

async function main(): Promise<void> {
  const pgUri = serverUri('QPI_TEST_PG_URI');
  const mongoUrl = new URL(serverUri('QPI_TEST_MONGO_URI'));
  mongoUrl.pathname = '/qpi_samples';
  const mongoUri = mongoUrl.toString();
  console.log('loading the sample data');
  const loaded = spawnSync(process.execPath, [join(ROOT, 'samples', 'load-sample-data.mjs'), '--mongo', mongoUri, '--pg', pgUri], { stdio: 'inherit', cwd: ROOT });
  if (loaded.status !== 0) throw new Error('loading the sample data failed');
  const hosting = (await import('../scripts/host.mjs')) as Hosting;
  const vsix = hosting.packageVsix();
  const host = await hosting.startHost({
    vsix,
    workspaceSettings: {
      'queryPlanInspector.connections': [
        { name: 'Sample PostgreSQL', engine: 'postgres', uri: pgUri },
        { name: 'Sample MongoDB', engine: 'mongodb', uri: mongoUri },
      ],
    },
  });
  const engines = [await postgres(pgUri), await mongodb(mongoUri)];
  const lines: string[] = [];
  try {
    for (const engine of engines) {
      const first: number[] = [];
      const firstNew: number[] = [];
      const warm: number[] = [];
      const warmLens: number[] = [];
      const firstSteps: Steps[] = [];
      const warmSteps: Steps[] = [];
      const warmLensSteps: Steps[] = [];
      const raw: number[] = [];
      const rawConnect: number[] = [];
      const baseline = async () => {
        for (let i = 0; i < 3; i++) {
          let t = performance.now();
          await engine.raw();
          raw.push(performance.now() - t);
          t = performance.now();
          await engine.rawConnect();
          rawConnect.push(performance.now() - t);
        }
      };
      // The first window of each engine is a new browser profile (a new user: the browser has never
      // shown a webview of this host); the others reload that window (a user reopening it).
      let win: Window | undefined;
      try {
        for (let w = 0; w < FIRST; w++) {
          win = await Window.open(host, win);
          await win.wb.openFile(engine.file);
          await baseline();
          const r = await win.explain(engine, 'menu', TRACE && w > 0 && w === FIRST - 1 ? `${TRACE}.${engine.name}.first.json` : undefined);
          (w === 0 ? firstNew : first).push(r.ms);
          firstSteps.push(r.steps);
          console.log(`${engine.name} first Explain in ${w === 0 ? 'a new browser profile' : `reopened window ${w}`}: ${fmt(r.ms)} (${Object.entries(r.steps).map(([k, v]) => `${k} ${v}`).join(', ')})`);
        }
        // From the context menu and from the Explain lens above the query, in turn.
        for (let i = 0; i < WARM && win; i++) {
          await baseline();
          const x = await win.explain(engine, 'menu', TRACE && i === WARM - 1 ? `${TRACE}.${engine.name}.json` : undefined);
          warm.push(x.ms);
          warmSteps.push(x.steps);
          console.log(`${engine.name} warm ${i + 1}: ${fmt(x.ms)} (${Object.entries(x.steps).map(([k, v]) => `${k} ${v}`).join(', ')})`);
          await baseline();
          const y = await win.explain(engine, 'lens');
          warmLens.push(y.ms);
          warmLensSteps.push(y.steps);
          console.log(`${engine.name} warm ${i + 1} from the lens: ${fmt(y.ms)} (${Object.entries(y.steps).map(([k, v]) => `${k} ${v}`).join(', ')})`);
        }
      } finally {
        await win?.close();
      }
      const base = median(raw);
      const warmMs = median(warm);
      const lensMs = median(warmLens);
      lines.push(
        `${engine.name}: ${engine.what}`,
        `  click to panel ready, first Explain after the window opens: median ${first.length > 0 ? fmt(median(first)) : '-'} of ${first.length} reopened windows (target <= ${fmt(TARGET.first)}); in a new browser profile ${fmt(median(firstNew))}`,
        `  click to panel ready, warm:                                 median ${fmt(warmMs)} of ${warm.length} (target <= ${fmt(TARGET.warm)})`,
        `  baseline, the driver's explain from this process: ${median(raw).toFixed(1)} ms on an open connection, ${median(rawConnect).toFixed(1)} ms with connect + close (medians of ${raw.length})`,
        `  overhead, warm click to panel - baseline: ${fmt(warmMs - base)} (${(warmMs / base).toFixed(2)}x; target <= ${fmt(TARGET.overhead)}); over connect + explain + close: ${fmt(warmMs - median(rawConnect))}`,
        `  from the Explain lens, warm: median ${fmt(lensMs)} of ${warmLens.length}; overhead ${fmt(lensMs - base)} (target <= ${fmt(TARGET.overhead)})`,
        `  the step log, warm medians:  ${stepMedians(warmSteps)}`,
        `  the step log, warm medians from the lens: ${stepMedians(warmLensSteps)}`,
        `  the step log, first medians: ${stepMedians(firstSteps)}`,
        '',
      );
    }
  } finally {
    for (const e of engines) await e.close().catch(() => undefined);
    await host.stop();
  }
  console.log('');
  console.log(`Explain, click to panel ready, in code-server with Chromium, the packed extension, Node ${process.version} for the baseline:`);
  console.log(lines.join('\n'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
