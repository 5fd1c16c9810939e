// UI flows in a real VS Code (code-server started by scripts/host.mjs), driven through Chromium by
// playwright-core as a user would: command palette, quick picks, the editor's context menu, and the plan
// view inside the webview's nested frames. Screenshots go to test-results/host/.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { until } from '../until';
import { flowHooks, Workbench } from './workbench';

const PG_URI = process.env.QPI_SAMPLES_PG_URI;
const MONGO_URI = process.env.QPI_SAMPLES_MONGO_URI;
const SHOTS = join(process.cwd(), 'test-results', 'host');

describe('VS Code UI flows (code-server + Chromium)', function () {
  let wb: Workbench;
  let page: Page;
  const palette = (command: string) => wb.palette(command);
  const pick = (label: string | RegExp) => wb.pick(label);
  const answer = (title: string | RegExp, text: string) => wb.answer(title, text);
  const notificationButton = (label: string) => wb.notificationButton(label);
  const openFile = (name: string) => wb.openFile(name);

  flowHooks(SHOTS, (w) => {
    wb = w;
    page = w.page;
  });

  it('adds a PostgreSQL connection through the command palette and quick picks', async () => {
    await palette('Query Plan Inspector: Add Connection...');
    await pick('PostgreSQL');
    await pick('Connection string');
    await answer(/connection string/, PG_URI!);
    await answer(/Password for postgres/, ''); // no password for this user
    await answer(/name/, 'ui pg');
    // The connection is tested right after it is saved; its state shows in the Connections view.
    await palette('View: Show Query Plan Inspector');
    await page.getByRole('treeitem', { name: /ui pg/ }).first().waitFor({ timeout: 30_000 });
    await page.locator('.monaco-list-row', { hasText: 'ui pg' }).locator('.codicon-pass').first().waitFor({ timeout: 30_000 });
    await palette('View: Show Explorer');
  });

  it('right-click > Explain Query on a SQL statement opens the plan view with its nodes', async () => {
    await openFile('orders.sql');
    await wb.explainLine('OFFSET 10000 LIMIT 20');
    await pick('ui pg');
    const view = page.frameLocator('iframe.webview').frameLocator('#active-frame');
    const titles = view.locator('g.card .card-title');
    await titles.first().waitFor({ timeout: 60_000 });
    const kinds = await titles.allTextContents();
    assert.deepEqual(kinds.slice(0, 1), ['Limit']);
    assert.ok(kinds.some((k) => /Index (Only )?Scan/.test(k)), `cards: ${kinds.join(', ')}`);
    await view.getByText('OFFSET reads what it skips').first().waitFor();
    // The message that draws the plan goes without the nodes' raw fields; they follow it, and the Node tab
    // (filled, not opened: a click in the view would move the editor focus to the panel's group) lists them.
    await view.locator('.node-panel .raw-fields dt', { hasText: 'Node Type' }).first().waitFor({ state: 'attached' });
    await wb.planFitted();
    await page.screenshot({ path: join(SHOTS, 'explain-sql.png') });
  });

  it('a first-time user clicks the Explain CodeLens in a playground, adds a MongoDB connection, and sees the plan', async () => {
    assert.ok(MONGO_URI, 'QPI_SAMPLES_MONGO_URI is not set: run npm run test:host');
    await openFile('orders.mongodb.js');
    await wb.clickLens('Explain');
    await notificationButton('Add Connection');
    await pick('Connection string');
    await answer(/connection string/, MONGO_URI);
    await answer(/name/, 'ui mongo');
    const view = page.frameLocator('iframe.webview').frameLocator('#active-frame');
    const titles = view.locator('g.card .card-title');
    await titles.nth(2).waitFor({ timeout: 60_000 });
    assert.deepEqual(await titles.allTextContents(), ['LIMIT', 'FETCH', 'IXSCAN']);
    await view.getByText('Keep using country_id_1_order_details.product_id_1_created_at_-1').first().waitFor();
    await palette('Notifications: Clear All Notifications');
    await wb.toastsGone();
    await wb.planFitted();
    await page.screenshot({ path: join(SHOTS, 'explain-mongo-codelens.png') });
  });

  it('Verify in the plan view asks before the trial on a sample, then shows the verdict, and leaves no scratch collection', async () => {
    const view = page.frameLocator('iframe.webview').frameLocator('#active-frame');
    const item = view.locator('li.suggestion', { hasText: 'Keep using country_id_1_order_details.product_id_1_created_at_-1' }).first();
    await item.waitFor();
    await item.locator('button', { hasText: 'Verify' }).click();
    // A modal says what the trial does before anything is written on the server.
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 15_000 });
    const question = (await dialog.textContent()) ?? '';
    assert.match(question, /random sample/);
    assert.match(question, /scratch collection/);
    await page.screenshot({ path: join(SHOTS, 'verify-mongo-consent.png') });
    await dialog.getByRole('button', { name: 'Measure on a Sample' }).click();
    await item.locator('.status', { hasText: /^Verified\b/ }).waitFor({ timeout: 60_000 });
    const figures = item.locator('table.verdict-figures');
    await figures.waitFor();
    assert.match((await figures.textContent()) ?? '', /collection scan/);
    assert.match((await item.locator('.verdict-how').textContent()) ?? '', /random sample of [\d,]+ of [\d,]+ documents/);
    await palette('Notifications: Clear All Notifications');
    await wb.toastsGone();
    await item.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'verify-mongo-verdict.png') });
    const client = new MongoClient(MONGO_URI!);
    await client.connect();
    try {
      const left = await client.db().listCollections({ name: { $regex: '^qpi_trial_' } }, { nameOnly: true }).toArray();
      assert.deepEqual(left.map((c) => c.name), []);
    } finally {
      await client.close();
    }
  });

  it('Cancel in the progress notification stops the statement on the server', async () => {
    const client = new pg.Client({ connectionString: PG_URI });
    await client.connect();
    try {
      const running = async () => (await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(25)%' AND state = 'active' AND pid <> pg_backend_pid()")).rows[0].n as number;
      await openFile('slow.sql');
      await wb.explainLine('pg_sleep');
      await until('the statement to start on the server', async () => (await running()) > 0, { timeoutMs: 20_000, pauseMs: 100 });
      await page.screenshot({ path: join(SHOTS, 'explain-progress.png') });
      await notificationButton('Cancel');
      const t0 = Date.now();
      await until('the statement to stop on the server after Cancel', async () => (await running()) === 0, { timeoutMs: 10_000, pauseMs: 100 });
      console.log(`      stopped on the server ${Date.now() - t0} ms after Cancel`);
    } finally {
      await client.end();
    }
  });

  it('the status bar shows the folder connection and the Connections view lists it', async () => {
    await openFile('orders.sql');
    await page.locator('.statusbar-item', { hasText: 'ui pg' }).first().waitFor({ timeout: 15_000 });
    await palette('View: Show Query Plan Inspector');
    await page.getByRole('treeitem', { name: /ui pg/ }).first().waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(SHOTS, 'connections-view.png') });
    assert.deepEqual(wb.errors.filter((e) => /queryPlanInspector|query-plan-inspector/i.test(e)), []);
  });
});
