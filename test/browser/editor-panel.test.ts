// The panel after a PostgreSQL Explain that measures, in real Chromium: the host shows the plan with the
// rules' suggestions, then the measurement's list and one verdict per suggestion arrive, as
// src/extension/advice.ts posts them. The panel stays at its top (the plan and the summary, not the
// last verdict), and the names the measurement gives the indexes it builds on its copies (qpi_c0,
// qpi_j1) appear nowhere: "Expected plan" names the index by its table and key columns.

import assert from 'node:assert/strict';
import type { LiveAdvice } from '../../src/adapters/advise';
import { advisePostgres } from '../../src/core/advice/pgAdvisor';
import { applyTournament } from '../../src/core/advice/tournament';
import type { Advice, MeasuredWork } from '../../src/core/advice/types';
import { statusOf, suggestionId, suggestionViews } from '../../src/extension/adviceView';
import { pageViolations, screenshot, suiteHarness, type ViewPage } from './harness';
import { corpusMessage } from './plans';

const QUERY = 'SELECT id, created_at FROM orders WHERE country_id = 3 ORDER BY created_at DESC LIMIT 20';

function liveOf(advice: Advice): LiveAdvice {
  return { advice, engine: 'postgres', serverVersion: '15.20', existingIndexes: ['orders_pkey'], stats: { total: 20_000 }, statsMethod: 'exact', verification: { method: 'none' } };
}

/** One measured run as the PostgreSQL tournament writes it: its plan names the copy's index qpi_cN. */
function run(buffers: number, plan: string, blockingSort = false): MeasuredWork {
  return { work: buffers, buffers, rows: 20, blockingSort, sorted: blockingSort ? 1998 : 0, plan };
}

/** Everything a person can read in the page: text, and the tooltips and labels of its elements. */
async function readable(v: ViewPage): Promise<string> {
  return v.page.evaluate(() => {
    const attrs = Array.from(document.querySelectorAll('[title], [aria-label]')).map((e) => `${e.getAttribute('title') ?? ''} ${e.getAttribute('aria-label') ?? ''}`);
    return `${document.body.innerText}\n${attrs.join('\n')}`;
  });
}

/** What the top of the panel shows: the page's and the side list's scroll, and the first card in sight. */
async function topOfPanel(v: ViewPage): Promise<{ pageTop: number; listTop: number; canvasInSight: boolean; firstCard: string }> {
  return v.page.evaluate(() => {
    const list = document.querySelector('.findings-panel') as HTMLElement;
    const canvas = document.querySelector('.canvas') as HTMLElement;
    const c = canvas.getBoundingClientRect();
    const box = list.getBoundingClientRect();
    const cards = Array.from(list.querySelectorAll<HTMLElement>('li.suggestion, li.finding'));
    const first = cards.find((e) => {
      const r = e.getBoundingClientRect();
      return r.bottom > box.top && r.top < box.bottom;
    });
    return {
      pageTop: document.scrollingElement?.scrollTop ?? 0,
      listTop: list.scrollTop,
      canvasInSight: c.top >= 0 && c.top < window.innerHeight && c.height > 0,
      firstCard: first ? `${first.className}: ${first.querySelector('.f-title')?.textContent ?? ''}` : '',
    };
  });
}

describe('the panel after a measured PostgreSQL Explain (Chromium)', function () {
  this.timeout(180_000);
  const open = suiteHarness();

  for (const size of [{ width: 1200, height: 760 }, { width: 640, height: 720 }]) {
    it(`opens at its top and names measured indexes by their columns (${size.width} px wide)`, async () => {
      const v = await open('dark', size);
      try {
        const live = liveOf(await advisePostgres(QUERY));
        const ctx = { engine: 'postgres' as const, live };
        // The Explain: the plan and the rules' suggestions.
        await v.send(corpusMessage('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json', { suggestions: suggestionViews(ctx) }));
        await v.page.locator('button.tab[data-tab="findings"]').click();
        await v.page.locator('li.suggestion').first().waitFor();
        const rules = live.advice.suggestions.filter((s) => s.action === 'create' && s.index?.engine === 'postgres');
        assert.ok(rules.length >= 1, 'the rules suggest an index');

        // The measurement: every rule's index and two more, each under its copy's name, most of them losing.
        const more = [
          { table: 'orders', method: 'btree' as const, keys: [{ column: 'created_at' }] },
          { table: 'orders', method: 'btree' as const, keys: [{ column: 'country_id' }] },
        ].map((ix) => ({ engine: 'postgres' as const, ...ix }));
        applyTournament(live.advice, {
          engine: 'postgres', unit: 'buffers', sample: { size: 20_000, total: 20_000, scaled: false }, label: 'measured on a whole copy of orders (20,000 rows)', generated: rules.length + 2,
          entries: [
            ...rules.map((s, i) => ({ label: `rule ${s.rule}`, origin: 'rule', index: s.index!, createText: s.createText!, ruleRank: s.rank, rule: s.rule, measured: run(4 + i * 30, `Limit > Index Scan using qpi_c${i}`) })),
            ...more.map((ix, i) => ({ label: 'extension', origin: 'extension', index: ix, measured: run(400 + i * 100, `Limit > Sort > Bitmap Heap Scan on orders > Bitmap Index Scan using qpi_c${rules.length + i}`, true) })),
            { label: 'table scan', origin: 'scan', measured: run(150, 'Limit > Sort > Seq Scan on orders', true) },
          ],
          today: run(150, 'Limit > Sort > Seq Scan on orders', true),
        });
        const views = suggestionViews(ctx);
        assert.ok(views.some((x) => x.status === 'rejected'), 'the measurement rejects some candidates');
        await v.send({ type: 'setSuggestions', suggestions: views });
        for (const s of live.advice.suggestions) {
          if (s.verification.status === 'not-run') continue;
          const st = statusOf(s);
          await v.send({ type: 'suggestionStatus', id: suggestionId(s), status: st.status, ...(st.detail ? { detail: st.detail } : {}), ...(st.verdict ? { verdict: st.verdict } : {}) });
        }
        await v.page.locator('li.suggestion.status-rejected').first().waitFor({ state: 'attached' });

        const top = await topOfPanel(v);
        assert.equal(top.pageTop, 0, 'the page is not scrolled');
        assert.equal(top.listTop, 0, 'the side list is at its top');
        assert.ok(top.canvasInSight, 'the plan is in sight');
        assert.doesNotMatch(top.firstCard, /status-rejected/, `the first card in sight: ${top.firstCard}`);

        const text = await readable(v);
        assert.doesNotMatch(text, /qpi_[cj]\d|qpi_rw/, 'no name of a measurement copy');
        const expected = await v.page.locator('li.suggestion').first().locator('tr', { hasText: 'Expected plan' }).textContent();
        assert.match(expected ?? '', /Index Scan using orders \(country_id, created_at/, `Expected plan names the index by its columns: ${expected}`);
        await screenshot(v, `editor-panel-measured-${size.width}`);
        assert.deepEqual(await pageViolations(v), []);
        assert.deepEqual(v.errors, []);
      } finally {
        await v.page.close();
      }
    });
  }

  it('still keeps the suggestion the user pressed Verify on in sight when its verdict arrives', async () => {
    const v = await open('light', { width: 640, height: 720 });
    try {
      const live = liveOf(await advisePostgres(QUERY));
      const views = suggestionViews({ engine: 'postgres', live }).map((x) => ({ ...x, verifiable: true }));
      // Enough findings above the suggestions that the last suggestion starts below the fold.
      await v.send(corpusMessage('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json', { suggestions: [...views, ...views.map((x) => ({ ...x, id: `${x.id}b` })), ...views.map((x) => ({ ...x, id: `${x.id}c` }))] }));
      await v.page.locator('button.tab[data-tab="findings"]').click();
      const last = v.page.locator('li.suggestion').last();
      await last.waitFor();
      const id = (await last.getAttribute('data-id'))!;
      // The user presses Verify on it, and the host answers.
      await last.locator('button', { hasText: /^Verify$/ }).click();
      await v.page.evaluate(() => {
        (document.querySelector('.findings-panel') as HTMLElement).scrollTop = 0;
      });
      await v.send({ type: 'suggestionStatus', id, status: 'verified', detail: 'Verified on the whole table.' });
      const inSight = await v.page.evaluate((sid) => {
        const list = document.querySelector('.findings-panel') as HTMLElement;
        const item = list.querySelector(`li.suggestion[data-id="${sid}"]`) as HTMLElement;
        const a = list.getBoundingClientRect();
        const b = item.getBoundingClientRect();
        return { overlaps: b.bottom > a.top && b.top < a.bottom, pageTop: document.scrollingElement?.scrollTop ?? 0 };
      }, id);
      assert.ok(inSight.overlaps, 'the verified suggestion is in sight');
      assert.equal(inSight.pageTop, 0, 'only the list moved, not the page');
    } finally {
      await v.page.close();
    }
  });
});
