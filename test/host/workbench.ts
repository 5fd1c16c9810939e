// What the UI flows do to a VS Code workbench in code-server, as a user does it: open it in Chromium,
// run a command from the palette, answer quick picks and input boxes, press notification buttons, open
// files, reach the plan view inside the webview's nested frames. Shared by the flows in test/host/.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type FrameLocator, type Locator, type Page } from 'playwright-core';

const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export class Workbench {
  readonly errors: string[] = [];

  private constructor(readonly page: Page, private readonly ctx: BrowserContext, private readonly udd: string) {}

  /**
   * Opens the folder in code-server at `url`; `ext` loads that folder as a development extension
   * (code-server honours the payload only with the smoke-test driver, which hides notification toasts).
   * `initScript` runs in every frame the browser loads, the webview's included, before the frame's own
   * scripts (the Explain bench records there when the plan's cards are drawn).
   */
  static async open(url: string, folder: string, ext?: string, initScript?: string): Promise<Workbench> {
    const udd = mkdtempSync(join(tmpdir(), 'qpi-ui-'));
    const ctx = await chromium.launchPersistentContext(udd, { executablePath: process.env.QPI_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ARGS, viewport: { width: 1500, height: 900 } });
    if (initScript !== undefined) await ctx.addInitScript({ content: initScript });
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    page.setDefaultTimeout(30_000);
    const wb = new Workbench(page, ctx, udd);
    page.on('pageerror', (e) => wb.errors.push(e.message));
    const host = new URL(url).host;
    const payload = JSON.stringify([...(ext ? [['extensionDevelopmentPath', `vscode-remote://${host}${ext}`]] : []), ['skipWelcome', 'true']]);
    await page.goto(`${url}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(payload)}`);
    await wb.settle();
    return wb;
  }

  /** Reloads the window, as a user reopens it: a new extension host, in the same browser profile. */
  async reload(): Promise<void> {
    await this.page.reload();
    await this.settle();
  }

  private async settle(): Promise<void> {
    const page = this.page;
    await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
    await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: 90_000 });
    // The extension's contributions are registered once its host has started; its view container in
    // the activity bar says so.
    await page.locator('.activitybar .action-item', { has: page.locator('[aria-label^="Query Plan Inspector"]') }).first().waitFor({ timeout: 90_000 })
      .catch(() => page.locator('.activitybar [aria-label^="Query Plan Inspector"]').first().waitFor({ timeout: 30_000 }));
  }

  async close(): Promise<void> {
    await this.ctx.close();
    rmSync(this.udd, { recursive: true, force: true });
  }

  /** The plan view, inside the webview's two frames (not another extension's webview, such as a walkthrough's page). */
  get view(): FrameLocator {
    return this.page.frameLocator('iframe.webview[src*="extensionId=query-plan-inspector"]').frameLocator('#active-frame');
  }

  /**
   * Runs a command from the palette; retries while the command is not listed yet (the host may still be
   * starting) and when the palette closes before it is typed in (a panel revealed a moment earlier takes
   * the focus back).
   */
  async palette(command: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      await this.page.keyboard.press('F1');
      const input = this.page.locator('.quick-input-widget input');
      const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first();
      try {
        await input.waitFor({ timeout: 5_000 });
        await input.fill(`>${command}`, { timeout: 5_000 });
        await row.waitFor({ timeout: 3_000 });
        await row.click();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await this.page.keyboard.press('Escape');
      }
    }
  }

  async pick(label: string | RegExp): Promise<void> {
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
    await row.waitFor({ timeout: 30_000 });
    await row.click();
  }

  /** Answers the input box titled `title` (waiting for that box, not the one before it). */
  async answer(title: string | RegExp, text: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget', { has: this.page.locator('.quick-input-title, .quick-input-header', { hasText: title }) });
    await widget.waitFor({ timeout: 30_000 });
    const input = widget.locator('input').first();
    await input.fill(text);
    await input.press('Enter');
    await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'hidden', timeout: 30_000 }).catch(() => undefined);
  }

  /**
   * Clicks a button of a notification. The workbench does not always pop a toast up (it may count the
   * notification in the status bar instead), so the notification centre is opened when no toast shows.
   */
  async notificationButton(label: string): Promise<void> {
    const toast = this.page.locator('.notification-toast .monaco-button', { hasText: label }).first();
    try {
      await toast.waitFor({ timeout: 5_000 });
      await toast.click();
      return;
    } catch {
      await this.palette('Notifications: Show Notifications');
      const inCentre = this.page.locator('.notifications-center .monaco-button', { hasText: label }).first();
      await inCentre.waitFor({ timeout: 15_000 });
      await inCentre.click();
    }
  }

  /**
   * Quick Open, the file typed and picked. Asked for again when the quick input closes before it is
   * typed into or before its row is picked (a panel that finishes loading behind it takes the focus
   * back, as a user would see).
   */
  async openFile(name: string): Promise<void> {
    const input = this.page.locator('.quick-input-widget input');
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('Control+P');
      try {
        await input.waitFor({ timeout: 10_000 });
        await input.fill(name, { timeout: 5_000 });
        await row.click({ timeout: 10_000 });
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
        await this.page.keyboard.press('Escape');
      }
    }
    await this.page.locator('.editor-group-container .monaco-editor .view-lines').first().waitFor();
  }

  /**
   * Right-click > Explain Query on the first line of the editor holding `text`. The context menu is asked
   * for again when it does not open (a right-click while the editor is still taking the focus is lost).
   */
  async explainLine(text: string | RegExp): Promise<void> {
    const line = this.page.locator('.view-lines .view-line', { hasText: text }).first();
    const item = this.page.getByRole('menuitem', { name: /Explain Query/ });
    await line.waitFor();
    for (let attempt = 1; ; attempt++) {
      await line.click();
      await line.click({ button: 'right' });
      try {
        await item.waitFor({ timeout: 5_000 });
        break;
      } catch (err) {
        if (attempt >= 4) throw err;
        await this.page.keyboard.press('Escape');
      }
    }
    // A menu item takes a click only from a moment after the menu is drawn (it listens for the mouse-up
    // from then on): a click before that leaves the menu open, and is given again. A click taken runs the
    // command and closes the menu at once. The item is found once, while the menu is open: after the
    // click only that element is watched until it goes. (A query by role after the click would scan the
    // whole workbench's accessibility tree on the page's thread, tens of milliseconds each time, while
    // the command and its plan are on their way; the Explain bench would count them as the workbench's.)
    const handle = await item.elementHandle();
    if (!handle) throw new Error('the Explain Query menu item went before it could be clicked');
    try {
      for (let attempt = 1; ; attempt++) {
        await handle.click();
        try {
          await handle.waitForElementState('hidden', { timeout: 2_000 });
          return;
        } catch (err) {
          if (attempt >= 4) throw err;
        }
      }
    } finally {
      await handle.dispose();
    }
  }

  /**
   * Clicks the first CodeLens link holding `text`: a command link (not the placeholder the editor draws
   * from its cache before the providers answer) once its fade-in has ended, or was cut short by a
   * redraw of the line. The click itself waits until the link stands still and takes the pointer, and
   * finds the link again when the line is redrawn.
   */
  async clickLens(text: string | RegExp): Promise<void> {
    const lens = this.page.locator('.contentWidgets .codelens-decoration a', { hasText: text }).first();
    await lens.waitFor({ timeout: 30_000 });
    await clickStill(lens);
  }

  /**
   * Clicks the CodeLens link holding `text` drawn right above the first line holding `line` (the lens of
   * the query that starts there), as clickLens does once it stands still. The editor draws a file's lenses
   * again when the language server refreshes them (after an Explain, say): until that lens is back, within
   * 30 s, it is looked for again.
   */
  async clickLensAbove(line: string | RegExp, text: string | RegExp): Promise<void> {
    const row = this.page.locator('.view-lines .view-line', { hasText: line }).first();
    await row.waitFor();
    const links = this.page.locator('.contentWidgets .codelens-decoration a', { hasText: text });
    await links.first().waitFor({ timeout: 30_000 });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no CodeLens holding ${String(text)} above the line holding ${String(line)} within 30 s`);
      await this.page.waitForFunction(lensAbove, { line: patternOf(line), text: patternOf(text) }, { timeout: left, polling: 100 });
      const top = (await row.boundingBox())?.y;
      if (top === undefined) throw new Error(`the line holding ${String(line)} is not on screen`);
      let best: { link: Locator; gap: number } | undefined;
      for (const link of await links.all()) {
        const y = (await link.boundingBox().catch(() => null))?.y;
        if (y !== undefined && y < top && (!best || top - y < best.gap)) best = { link, gap: top - y };
      }
      // Redrawn again between the two looks (or during the click): looked for once more.
      if (best && (await clickStill(best.link).then(() => true, () => false))) return;
    }
  }

  /**
   * Waits until the plan view has fitted its tree: every card drawn lies inside the view (it zooms to fit
   * after its first layout, and again once the panel's size settles). Checked in the view at each frame.
   */
  async planFitted(timeoutMs = 15_000): Promise<void> {
    await this.view.locator('div.canvas svg:has(g.card)').first().evaluate(cardsInside, timeoutMs);
  }

  /** Waits until no notification toast is left on the screen (after they are cleared, before a screenshot). */
  async toastsGone(): Promise<void> {
    await this.page.locator('.notification-toast').filter({ visible: true }).first().waitFor({ state: 'detached', timeout: 15_000 });
  }
}

/** What cardsInside uses of the page's DOM, typed here: bench/explain-click.ts imports this file into a program without the DOM library. */
interface PageBox { left: number; right: number; top: number; bottom: number }
interface PageElement { getBoundingClientRect(): PageBox; querySelectorAll(selector: string): Iterable<{ getBoundingClientRect(): PageBox }> }
interface PageGlobals { requestAnimationFrame(callback: (time: number) => void): void }

/**
 * In the view: resolves once every card of `svg` lies inside it, checked at each animation frame. (No
 * named function inside: the test runner's transform would name it with a helper the page lacks.)
 */
async function cardsInside(svg: PageElement, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const box = svg.getBoundingClientRect();
    const cards = [...svg.querySelectorAll('g.card')].map((c) => c.getBoundingClientRect());
    if (cards.length > 0 && cards.every((r) => r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1)) return;
    if (Date.now() > deadline) throw new Error(`the plan view did not fit its ${cards.length} cards within ${timeoutMs} ms`);
    await new Promise((frame) => (globalThis as unknown as PageGlobals).requestAnimationFrame(frame));
  }
}

/**
 * The hooks of a flow in code-server (scripts/host.mjs sets the variables): opens the workbench on the
 * temporary workspace, with a statement that runs for half a minute for the Cancel flows, and keeps a
 * screenshot of every failed test in `shots`.
 */
export function flowHooks(shots: string, ready: (wb: Workbench) => void): void {
  let wb: Workbench | undefined;
  before(async () => {
    const url = process.env.QPI_HOST_URL;
    const ws = process.env.QPI_HOST_WS;
    assert.ok(url && ws, 'run through scripts/host.mjs: QPI_HOST_URL and QPI_HOST_WS are not set');
    assert.ok(process.env.QPI_SAMPLES_PG_URI, 'QPI_SAMPLES_PG_URI is not set: run npm run test:host');
    writeFileSync(join(ws, 'slow.sql'), 'SELECT pg_sleep(25), count(*) FROM orders;\n');
    rmSync(shots, { recursive: true, force: true });
    mkdirSync(shots, { recursive: true });
    wb = await Workbench.open(url, ws, process.env.QPI_HOST_EXT);
    ready(wb);
  });
  after(async () => {
    await wb?.close();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && wb) await wb.page.screenshot({ path: join(shots, `failed-${this.currentTest.title.replace(/\W+/g, '-').slice(0, 60)}.png`) });
  });
}

/** Clicks a CodeLens link once its fade-in has ended (or was cut short by a redraw of its line). */
async function clickStill(link: Locator): Promise<void> {
  await link.evaluate((a) => Promise.all((a.parentElement ?? a).getAnimations({ subtree: true }).map((x: { finished: Promise<unknown> }) => x.finished.catch(() => undefined))));
  await link.click();
}

/** A text or pattern as it crosses into the page: a RegExp's source and flags, or the text to hold. */
interface PagePattern { source: string; flags: string; literal: boolean }
function patternOf(p: string | RegExp): PagePattern {
  return typeof p === 'string' ? { source: p, flags: '', literal: true } : { source: p.source, flags: p.flags, literal: false };
}

interface PageDocument { querySelectorAll(selector: string): Iterable<{ textContent: string | null; getBoundingClientRect(): PageBox & { width: number; height: number } }> }

/**
 * In the page: true once a CodeLens link holding `text` is drawn above the first line holding `line`. (No
 * named function inside, as for cardsInside.)
 */
function lensAbove(args: { line: PagePattern; text: PagePattern }): boolean {
  const doc = (globalThis as unknown as { document: PageDocument }).document;
  const line = args.line.literal ? undefined : new RegExp(args.line.source, args.line.flags);
  const text = args.text.literal ? undefined : new RegExp(args.text.source, args.text.flags);
  let top: number | undefined;
  for (const r of doc.querySelectorAll('.view-lines .view-line')) {
    const t = r.textContent ?? '';
    if (line ? line.test(t) : t.includes(args.line.source)) {
      top = r.getBoundingClientRect().top;
      break;
    }
  }
  if (top === undefined) return false;
  for (const a of doc.querySelectorAll('.contentWidgets .codelens-decoration a')) {
    const t = a.textContent ?? '';
    const box = a.getBoundingClientRect();
    // A link not drawn (a lens being replaced) has an empty box.
    if ((text ? text.test(t) : t.includes(args.text.source)) && box.width > 0 && box.height > 0 && box.top < top) return true;
  }
  return false;
}
