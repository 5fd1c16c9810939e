// Runs the built plan view in real Chromium: builds the bundles once, serves the page from a local
// HTTP server with the same page skeleton and Content Security Policy the extension uses, and opens
// pages that record what the view posts, every CSP violation and every dialog.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { HostToViewMessage, ThemeKind, ViewToHostMessage } from '../../src/protocol/webview';
import { webviewHtml, wirePlan } from '../../src/protocol/webview';
import { until } from '../until';

export const ROOT = resolve(__dirname, '..', '..');
export const RESULTS = join(ROOT, 'test-results');
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Harness {
  origin: string;
  context: BrowserContext;
  close(): Promise<void>;
}

export interface ViewPage {
  page: Page;
  /** CSP violations seen by the page (securitypolicyviolation events and console reports). */
  violations: string[];
  /** Dialogs the page tried to open (alert, confirm, prompt). */
  dialogs: string[];
  /** Uncaught page errors. */
  errors: string[];
  /** Sends a host -> view message the way the extension's postMessage delivers it: JSON, as a window message event. */
  send(message: HostToViewMessage | unknown): Promise<void>;
  /** Messages the view posted so far. */
  outbox(): Promise<ViewToHostMessage[]>;
}

/** What the extension posts for a message: plans without their `nodes` index (see wirePlan). */
export function toWire(message: unknown): unknown {
  const m = message as HostToViewMessage;
  if (m && typeof m === 'object' && m.type === 'showPlan') return { ...m, plan: wirePlan(m.plan) };
  if (m && typeof m === 'object' && m.type === 'showComparison') {
    return { ...m, before: { ...m.before, plan: wirePlan(m.before.plan) }, after: { ...m.after, plan: wirePlan(m.after.plan) } };
  }
  return message;
}

/** Waits for the Chromium binary, which may still be being installed when the tests start. */
async function waitForChromium(): Promise<void> {
  await until(`${CHROMIUM} to appear`, () => existsSync(CHROMIUM), { timeoutMs: 300_000, pauseMs: 500 });
}

let built = false;

/** Builds the bundles with the project's build script, once per test run. */
export function buildOnce(): void {
  if (built) return;
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed:\n${r.stdout}\n${r.stderr}`);
  built = true;
}

function serve(): Promise<Server> {
  const files: Record<string, string> = {
    '/webview/webview.js': join(ROOT, 'dist', 'webview', 'webview.js'),
    '/webview/style.css': join(ROOT, 'dist', 'webview', 'style.css'),
  };
  const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/') {
      const origin = `http://${req.headers.host}`;
      const nonce = randomBytes(16).toString('base64').replace(/[^A-Za-z0-9]/g, '');
      const html = webviewHtml({ cspSource: origin, nonce, scriptUri: `${origin}/webview/webview.js`, styleUri: `${origin}/webview/style.css`, title: 'Plan view test' });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(html);
      return;
    }
    const file = files[url.pathname];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[file.split('.').pop()!] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

export async function startHarness(): Promise<Harness> {
  await waitForChromium();
  buildOnce();
  mkdirSync(RESULTS, { recursive: true });
  const server = await serve();
  const { port } = server.address() as AddressInfo;
  const userDataDir = mkdtempSync(join(tmpdir(), 'qpi-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1400, height: 860 },
    deviceScaleFactor: 1,
  });
  return {
    origin: `http://127.0.0.1:${port}`,
    context,
    close: async () => {
      await context.close();
      await new Promise<void>((ok) => server.close(() => ok()));
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * For a describe block: starts the harness before its tests and closes it after them. Returns how the
 * tests open the view (see openView) in that harness.
 */
export function suiteHarness(): (theme?: ThemeKind, size?: { width: number; height: number }) => Promise<ViewPage> {
  let h: Harness | undefined;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });
  return (theme, size) => {
    if (!h) throw new Error('The browser harness did not start.');
    return openView(h, theme, size);
  };
}

/** Saves a screenshot of the view under test-results/ for a person to look at. */
export async function screenshot(v: ViewPage, name: string): Promise<void> {
  await v.page.screenshot({ path: join(RESULTS, `${name}.png`) });
}

/** Opens the view, waits for its `ready`, and applies a theme. */
export async function openView(h: Harness, theme: ThemeKind = 'light', size?: { width: number; height: number }): Promise<ViewPage> {
  const page = await h.context.newPage();
  if (size) await page.setViewportSize(size);
  const violations: string[] = [];
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  // Registered through the debugging protocol, so it runs before the page and outside its policy.
  await page.addInitScript(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(h.origin + '/');
  await page.waitForFunction(() => (window as unknown as { qpiOutbox?: { type: string }[] }).qpiOutbox?.some((m) => m.type === 'ready') === true);
  const view: ViewPage = {
    page,
    violations,
    dialogs,
    errors,
    send: async (message) => {
      // Like the extension: plans go slim, and the message travels as JSON.
      await page.evaluate((json) => window.postMessage(JSON.parse(json), '*'), JSON.stringify(toWire(message)));
      await painted(page);
    },
    outbox: () => page.evaluate(() => (window as unknown as { qpiOutbox: ViewToHostMessage[] }).qpiOutbox.slice()),
  };
  await view.send({ type: 'setTheme', kind: theme });
  return view;
}

/**
 * Waits for the page to paint its next frame and run the tasks queued before it: the message events,
 * the CSP violation reports and the handlers that what was just done set off.
 */
export async function painted(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
}

/** CSP violations recorded inside the page. */
export async function pageViolations(v: ViewPage): Promise<string[]> {
  const inPage = await v.page.evaluate(() => (window as unknown as { __violations: string[] }).__violations.slice());
  return [...inPage, ...v.violations];
}
