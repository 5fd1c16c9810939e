#!/usr/bin/env node
// Checks `npm run demo -- --open` end to end, as a new user would meet it: runs the README command in
// its own process group, opens the address it prints in Chromium (playwright-core), explains a statement
// of orders.sql and the first query of orders.mongodb.js on the connections the folder settings define
// (no prompt on the way), then presses Ctrl-C the way a terminal does (SIGINT to the whole group) and
// checks that code-server, both servers and the temporary folders are gone. Screenshots go to
// test-results/demo/. Exits 0 when all of that held.
//
//   node scripts/demo-check.mjs

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_ARGS } from './host.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHOTS = join(ROOT, 'test-results', 'demo');
const CHROMIUM = process.env.QPI_CHROMIUM || '/usr/bin/chromium';
/** The first run installs code-server into the cache (minutes); later runs start in about 30 s. */
const START_LIMIT_MS = Number(process.env.QPI_DEMO_START_TIMEOUT_MS ?? 600_000);
const T0 = Date.now();
const log = (msg) => console.log(`[demo-check ${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}`);

function fail(message) {
  throw new Error(message);
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
function listening(port) {
  return new Promise((res) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      res(true);
    });
    s.once('error', () => res(false));
  });
}

const demo = spawn('npm', ['run', 'demo', '--', '--open'], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
const exited = new Promise((res) => demo.on('exit', (code, signal) => res({ code, signal })));
demo.stdout.on('data', (d) => (output += d));
demo.stderr.on('data', (d) => (output += d));

/** Waits until the demo's output matches, or it exits, or the time is up. */
async function waitOutput(pattern, limitMs, what) {
  const deadline = Date.now() + limitMs;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    const m = pattern.exec(output);
    if (m) return m;
    if (gone) fail(`the demo exited before ${what}:\n${output.slice(-3000)}`);
    if (Date.now() > deadline) fail(`no ${what} after ${limitMs} ms:\n${output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let ctx;
let udd;
let code = 1;
try {
  const [, url] = await waitOutput(/^Open (http:\/\/127\.0\.0\.1:\d+\/\?folder=\S+) in a browser\.$/m, START_LIMIT_MS, 'address to open');
  const ws = /^Workspace (\S+)$/m.exec(output)?.[1] ?? fail('the demo did not print its workspace');
  const pgPort = Number(/^PostgreSQL postgresql:\/\/postgres@127\.0\.0\.1:(\d+)\//m.exec(output)?.[1] ?? fail('no PostgreSQL address'));
  const mongoPort = Number(/^MongoDB mongodb:\/\/127\.0\.0\.1:(\d+)\//m.exec(output)?.[1] ?? fail('no MongoDB address'));
  const csPort = Number(new URL(url).port);
  log(`the demo is ready: ${url}`);

  const { chromium } = await import('playwright-core');
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  udd = mkdtempSync(join(tmpdir(), 'qpi-demo-check-'));
  ctx = await chromium.launchPersistentContext(udd, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1500, height: 900 } });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  page.setDefaultTimeout(30_000);
  try {
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
    await page.getByRole('treeitem', { name: /orders\.sql/ }).waitFor({ timeout: 90_000 });
    await page.locator('.activitybar [aria-label^="Query Plan Inspector"]').first().waitFor({ timeout: 90_000 });

    const openFile = async (name) => {
      await page.keyboard.press('Control+P');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor();
      await input.fill(name);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().click();
      await page.locator('.editor-group-container .monaco-editor .view-lines').first().waitFor();
    };
    const palette = async (command) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor();
        await input.fill(`>${command}`);
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first();
        try {
          await row.waitFor({ timeout: 3_000 });
          await row.click();
          await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
          return;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await page.keyboard.press('Escape');
        }
      }
    };
    const view = page.frameLocator('iframe.webview').frameLocator('#active-frame');
    const titles = view.locator('g.card .card-title');
    /**
     * The card titles of the plan view once `card` (a locator in it) is drawn; fails when a question
     * shows instead (the demo's connections come from its folder settings: it asks nothing).
     */
    const cards = async (card, what) => {
      const asked = page.locator('.quick-input-widget').filter({ visible: true }).first();
      const first = await Promise.race([
        card.waitFor({ timeout: 60_000 }).then(() => 'drawn', () => 'none'),
        asked.waitFor({ timeout: 60_000 }).then(() => 'asked', () => 'none'),
      ]);
      if (first === 'asked') fail(`the demo asked a question instead of explaining: ${await asked.innerText().catch(() => '(gone)')}`);
      if (first === 'none') fail(`the plan view showed no ${what} within 60 s: ${(await titles.allTextContents()).join(', ') || 'no cards'}`);
      return { view, titles: await titles.allTextContents() };
    };
    /**
     * Waits until the plan view has fitted its tree: every card lies inside the view (it zooms to fit
     * after its first layout, and again once the panel's size settles). Checked in the view at each frame.
     */
    const fitted = () => view.locator('div.canvas svg:has(g.card)').first().evaluate(async (svg, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const box = svg.getBoundingClientRect();
        const cards = [...svg.querySelectorAll('g.card')].map((c) => c.getBoundingClientRect());
        if (cards.length > 0 && cards.every((r) => r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1)) return;
        if (Date.now() > deadline) throw new Error(`the plan view did not fit its ${cards.length} cards within ${timeoutMs} ms`);
        await new Promise((frame) => requestAnimationFrame(frame));
      }
    }, 15_000);

    // orders.sql: the cursor in the join statement, Explain Query from the palette.
    await openFile('orders.sql');
    const line = page.locator('.view-lines .view-line', { hasText: 'WHERE o.country_id = 1 AND d.product_id = 5' }).first();
    await line.click();
    await page.locator('.statusbar-item', { hasText: 'Demo PostgreSQL' }).first().waitFor({ timeout: 30_000 });
    await palette('Query Plan Inspector: Explain Query');
    const sql = await cards(titles.nth(2), 'plan of three cards');
    if (sql.titles[0] !== 'Limit') fail(`the PostgreSQL plan starts with ${sql.titles[0]}, not Limit: ${sql.titles.join(', ')}`);
    if (!sql.titles.some((t) => /Scan/.test(t))) fail(`no scan in the PostgreSQL plan: ${sql.titles.join(', ')}`);
    await fitted();
    await page.screenshot({ path: join(SHOTS, 'demo-orders-sql.png') });
    log(`orders.sql explained on Demo PostgreSQL: ${sql.titles.join(', ')}`);
    // PostgreSQL measures the suggestions right after the plan: the winner comes first, marked verified.
    const measured = sql.view.locator('li.suggestion.status-verified').first();
    await measured.waitFor({ timeout: 90_000 }).catch(async () => {
      const first = sql.view.locator('li.suggestion').first();
      fail(`the PostgreSQL suggestions were not measured within 90 s; the first says: ${(await first.innerText().catch(() => '(none shown)')).slice(0, 600)}`);
    });
    const winner = (await measured.locator('pre.ddl').first().textContent()) ?? '';
    await measured.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'demo-orders-sql-measured.png') });
    log(`measured on Demo PostgreSQL: ${winner}`);

    // orders.mongodb.js: the Explain CodeLens above the first query, a command link (not the placeholder
    // drawn from the editor's cache) once its fade-in has ended or a redraw of the line cut it short. The
    // click waits until the link stands still and takes the pointer, and finds it again when redrawn.
    await openFile('orders.mongodb.js');
    const lens = page.locator('.contentWidgets .codelens-decoration a', { hasText: 'Explain' }).first();
    await lens.waitFor({ timeout: 30_000 });
    await lens.evaluate((a) => Promise.all((a.parentElement ?? a).getAnimations({ subtree: true }).map((x) => x.finished.catch(() => undefined))));
    await lens.click();
    // The MongoDB plan replaces the PostgreSQL one: a scan of MongoDB's among the cards.
    const mongo = await cards(view.locator('g.card .card-title', { hasText: /^\s*(IXSCAN|COLLSCAN)\s*$/ }).first(), 'MongoDB plan in place of the PostgreSQL one');
    await fitted();
    await page.screenshot({ path: join(SHOTS, 'demo-orders-mongodb.png') });
    log(`orders.mongodb.js explained on Demo MongoDB: ${mongo.titles.join(', ')}`);

    // The Connections view lists both, marked as coming from the folder settings.
    await palette('View: Show Query Plan Inspector');
    for (const name of ['Demo PostgreSQL', 'Demo MongoDB']) {
      await page.locator('.monaco-list-row', { hasText: name }).filter({ hasText: 'from settings' }).first().waitFor({ timeout: 15_000 });
    }
    await page.screenshot({ path: join(SHOTS, 'demo-connections.png') });
  } catch (err) {
    await page.screenshot({ path: join(SHOTS, 'failed.png') }).catch(() => {});
    throw err;
  }
  await ctx.close();
  ctx = undefined;

  // Ctrl-C in a terminal: SIGINT to every process of the foreground group.
  log('Ctrl-C');
  const t = Date.now();
  process.kill(-demo.pid, 'SIGINT');
  const end = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 60_000))]);
  if (!end) fail(`the demo still runs 60 s after Ctrl-C:\n${output.slice(-2000)}`);
  log(`stopped in ${Date.now() - t} ms (exit ${end.code ?? end.signal})`);
  if (!/^Stopped; the temporary folders are removed\.$/m.test(output)) fail(`the demo did not say it stopped:\n${output.slice(-2000)}`);
  if (existsSync(ws)) fail(`the workspace ${ws} is still there`);
  for (const [what, port] of [['code-server', csPort], ['PostgreSQL', pgPort], ['MongoDB', mongoPort]]) {
    if (await listening(port)) fail(`${what} still listens on ${port} after Ctrl-C`);
  }
  log(`passed; screenshots in ${SHOTS}`);
  code = 0;
} catch (err) {
  console.error(`[demo-check] FAILED: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  await ctx?.close().catch(() => {});
  if (udd) rmSync(udd, { recursive: true, force: true });
  if (demo.exitCode === null && demo.signalCode === null) {
    // Whatever failed, nothing the demo started is left running.
    try { process.kill(-demo.pid, 'SIGINT'); } catch { /* gone */ }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
    try { process.kill(-demo.pid, 'SIGKILL'); } catch { /* gone */ }
  }
}
process.exit(code);
