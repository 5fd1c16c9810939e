// A plan arriving in a panel that already shows one (the next Explain reuses the panel), in real
// Chromium: the opening view is computed from the size the page was last laid out at and the card font
// is kept between plans, so these tests change that size or that font in the task the plan arrives in,
// and check the drawing is the one a page that knew the change from the start draws.

import assert from 'node:assert/strict';
import { painted, suiteHarness, toWire, type ViewPage } from './harness';
import { corpusMessage } from './plans';

const JOIN = 'pg-json-analyze-buffers-nested-loop-index-scans.json';
const FIND = 'mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json';

/** The tree's zoom transform as drawn. */
function viewTransform(v: ViewPage): Promise<string | null> {
  return v.page.locator('svg.tree g.viewport').getAttribute('transform');
}

/** Each drawn card's width, by node id. */
function cardWidths(v: ViewPage): Promise<Record<string, string | null>> {
  return v.page.evaluate(() =>
    Object.fromEntries(Array.from(document.querySelectorAll('svg.tree g.card'), (g) => [g.getAttribute('data-id'), g.querySelector('rect.card-bg')!.getAttribute('width')])),
  );
}

type Change = 'hide side panel' | 'monospace font';

/** What a change does to the page (VS Code sets its font variables on the root element). */
function change(v: ViewPage, what: Change): Promise<void> {
  return v.page.evaluate((what) => {
    if (what === 'hide side panel') document.querySelector('.app')!.classList.add('side-hidden');
    else document.documentElement.style.setProperty('--vscode-font-family', 'monospace');
  }, what);
}

/**
 * Changes the page and hands the view a message in the same task (a message event dispatched at once):
 * the view handles it before any frame has laid the changed page out or any observer has run.
 */
async function sendWith(v: ViewPage, message: unknown, what: Change): Promise<void> {
  await v.page.evaluate(
    ([json, what]) => {
      if (what === 'hide side panel') document.querySelector('.app')!.classList.add('side-hidden');
      else document.documentElement.style.setProperty('--vscode-font-family', 'monospace');
      window.dispatchEvent(new MessageEvent('message', { data: JSON.parse(json!) }));
    },
    [JSON.stringify(toWire(message)), what] as const,
  );
  await painted(v.page);
}

describe('a plan arriving in a panel that shows another (Chromium)', function () {
  this.timeout(180_000);
  const open = suiteHarness();

  it('fits the new plan to the canvas when the canvas was resized in the same task, as Fit does', async () => {
    const v = await open('light');
    try {
      await v.send(corpusMessage(FIND, { title: 'find' }));
      const before = await viewTransform(v);
      // The side panel goes away as the plan arrives: the canvas widens before any layout reported it.
      await sendWith(v, corpusMessage(JOIN, { title: 'join' }), 'hide side panel');
      const opened = await viewTransform(v);
      assert.notEqual(opened, before);
      await v.page.getByRole('button', { name: 'Fit' }).click();
      await painted(v.page);
      assert.equal(opened, await viewTransform(v), 'the opening view is the fit to the widened canvas');
      assert.deepEqual(v.errors, []);
    } finally {
      await v.page.close();
    }
  });

  it('measures the cards with the font set on the page in the same task, as a page that had it from the start', async () => {
    const fresh = await open('light');
    const warm = await open('light');
    try {
      await change(fresh, 'monospace font');
      await fresh.send(corpusMessage(JOIN));
      const expected = await cardWidths(fresh);
      await warm.send(corpusMessage(FIND));
      await warm.send(corpusMessage(JOIN));
      const sansWidths = await cardWidths(warm);
      assert.notDeepEqual(sansWidths, expected, 'monospace makes other widths than the default font');
      await sendWith(warm, corpusMessage(JOIN), 'monospace font');
      assert.deepEqual(await cardWidths(warm), expected);
    } finally {
      await fresh.page.close();
      await warm.page.close();
    }
  });

  it('draws the cards in the task the plan arrives in, and fills the side panel after that frame is painted', async () => {
    const v = await open('light');
    try {
      await v.send(corpusMessage(FIND, { title: 'find' }));
      const side = () => v.page.evaluate(() => ['.node-panel', '.findings-panel', '.plan-panel'].map((s) => document.querySelector(s)?.textContent ?? '').join('|'));
      const findSide = await side();
      // In the message's own task: the new cards and summary are there, the side panel still the last plan's.
      const inTask = await v.page.evaluate((json) => {
        window.dispatchEvent(new MessageEvent('message', { data: JSON.parse(json) }));
        return {
          cards: Array.from(document.querySelectorAll('svg.tree g.card'), (g) => g.textContent ?? '').join('|'),
          summary: document.querySelector('span.summary')?.textContent ?? '',
          side: ['.node-panel', '.findings-panel', '.plan-panel'].map((s) => document.querySelector(s)?.textContent ?? '').join('|'),
        };
      }, JSON.stringify(toWire(corpusMessage(JOIN, { title: 'join' }))));
      assert.match(inTask.summary, /^PostgreSQL/);
      assert.match(inTask.cards, /Nested Loop/);
      assert.equal(inTask.side, findSide, 'the side panel waits for the first frame of the new cards');
      await painted(v.page);
      const joinSide = await side();
      assert.notEqual(joinSide, findSide);
      assert.match(joinSide, /Nested Loop/);
      // A comparison arriving before the side panel of a plan is filled keeps its own side panel.
      await v.page.evaluate((json) => {
        window.dispatchEvent(new MessageEvent('message', { data: JSON.parse(json) }));
      }, JSON.stringify(toWire(corpusMessage(FIND, { title: 'find again' }))));
      await v.send({ type: 'showComparison', title: 'compare', before: { label: 'before', plan: corpusMessage(JOIN).plan, findings: [] }, after: { label: 'after', plan: corpusMessage(JOIN).plan, findings: [] } });
      await painted(v.page);
      assert.ok(await v.page.locator('.compare-bar').isVisible());
      assert.doesNotMatch(await v.page.locator('.node-panel').textContent() ?? '', /IXSCAN/);
      assert.deepEqual(v.errors, []);
    } finally {
      await v.page.close();
    }
  });
});
