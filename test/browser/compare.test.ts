// The side-by-side comparison in real Chromium under the extension's Content Security Policy: real plan
// pairs (truth plans measured on MongoDB 6.0.5 and PostgreSQL 15, a corpus update before and after its
// index) drawn as two trees, cards marked changed, added and removed, the verdict and the totals table,
// partner linking by click and by keyboard, the mode switch, a refusal, hostile names kept inert.
// Screenshots go to test-results/compare-*.png for a person to look at.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { comparePlans, type ComparedPlans } from '../../src/core/compare';
import { analyze } from '../../src/core/index';
import type { Plan } from '../../src/core/model';
import type { ShowComparisonMessage } from '../../src/protocol/webview';
import { pageViolations, ROOT, screenshot, suiteHarness, type ViewPage } from './harness';
import { corpusText, HOSTILE, hostilePostgresText, load } from './plans';

const TRUTH = join(ROOT, 'test', 'fixtures', 'truth-plans');

function truthPlan(caseId: string, prefix: string): Plan {
  const file = readdirSync(join(TRUTH, caseId)).find((f) => f.startsWith(prefix));
  assert.ok(file, `${caseId} has no ${prefix} plan`);
  const doc = JSON.parse(readFileSync(join(TRUTH, caseId, file), 'utf8')) as { hinted_explain?: unknown; natural?: unknown };
  return load(JSON.stringify(doc.hinted_explain ?? doc.natural), `${caseId}/${file}`);
}

function message(title: string, before: [string, Plan], after: [string, Plan]): ShowComparisonMessage {
  return {
    type: 'showComparison',
    title,
    before: { label: before[0], plan: before[1], findings: analyze(before[1]) },
    after: { label: after[0], plan: after[1], findings: analyze(after[1]) },
  };
}

function expected(m: ShowComparisonMessage): ComparedPlans {
  const c = comparePlans(m.before.plan, m.after.plan);
  assert.ok(c.ok);
  return c;
}

const card = (side: 'before' | 'after', id: number): string => `.compare-panes .pane-${side} svg.tree g.card[data-id="${id}"]`;

async function cardClass(v: ViewPage, side: 'before' | 'after', id: number): Promise<string> {
  return (await v.page.locator(card(side, id)).getAttribute('class')) ?? '';
}

async function cardText(v: ViewPage, side: 'before' | 'after', id: number): Promise<string> {
  return v.page.locator(card(side, id)).evaluate((g) => Array.from(g.querySelectorAll('text:not(.far)')).map((t) => t.textContent).join('|'));
}

async function paneCards(v: ViewPage, side: 'before' | 'after'): Promise<number> {
  return v.page.locator(`.compare-panes .pane-${side} svg.tree g.card`).count();
}

async function focusedCard(v: ViewPage): Promise<{ side: string; id: number } | undefined> {
  return v.page.evaluate(() => {
    const g = document.activeElement?.closest('g.card');
    const pane = g?.closest('.pane') as HTMLElement | null;
    return g && pane ? { side: pane.dataset.side!, id: Number(g.getAttribute('data-id')) } : undefined;
  });
}

/** Whether a card lies inside its pane's visible area. */
async function onScreen(v: ViewPage, side: 'before' | 'after', id: number): Promise<boolean> {
  return v.page.evaluate(
    ([s, cid]) => {
      const g = document.querySelector(`.compare-panes .pane-${s} svg.tree g.card[data-id="${cid}"] rect.card-bg`);
      const svg = document.querySelector(`.compare-panes .pane-${s} svg.tree`);
      if (!g || !svg) return false;
      const a = g.getBoundingClientRect();
      const b = svg.getBoundingClientRect();
      return a.left >= b.left - 1 && a.top >= b.top - 1 && a.right <= b.right + 1 && a.bottom <= b.bottom + 1;
    },
    [side, id] as const,
  );
}

describe('plan comparison in Chromium', function () {
  this.timeout(180_000);
  const open = suiteHarness();

  describe('MongoDB: a collection scan with an in-memory sort against the E,E,S index', () => {
    let v: ViewPage;
    let m: ShowComparisonMessage;
    let c: ComparedPlans;
    before(async () => {
      v = await open('light');
      m = message('orders in country 1 with product 5', ['COLLSCAN', truthPlan('m01_orders_elemmatch_sort', 'loser3_COLLSCAN')], ['{country_id, product_id, created_at}', truthPlan('m01_orders_elemmatch_sort', 'oracle')]);
      c = expected(m);
      await v.send(m);
    });
    after(async () => v.page.close());

    it('draws both trees, marks each card and shows the verdict and the totals', async () => {
      assert.equal(await paneCards(v, 'before'), m.before.plan.nodes.length);
      assert.equal(await paneCards(v, 'after'), m.after.plan.nodes.length);
      const verdict = v.page.locator('.compare-head .verdict');
      assert.equal(await verdict.textContent(), c.verdict);
      assert.match(c.verdict, /^After examines 10 keys and 10 documents instead of 0 and 200,000 .*no longer sorts in memory/);
      assert.match((await verdict.getAttribute('class'))!, /dir-better/);
      for (const e of c.nodes) {
        if (e.beforeId !== undefined) assert.match(await cardClass(v, 'before', e.beforeId), new RegExp(`cmp-${e.status}`), `before ${e.kind}`);
        if (e.afterId !== undefined) assert.match(await cardClass(v, 'after', e.afterId), new RegExp(`cmp-${e.status}`), `after ${e.kind}`);
      }
      const sort = m.before.plan.nodes.find((n) => n.kind === 'SORT')!;
      assert.match(await cardText(v, 'before', sort.id), /^removed\|SORT/);
      const ix = m.after.plan.nodes.find((n) => n.kind === 'IXSCAN')!;
      const text = await cardText(v, 'after', ix.id);
      assert.match(text, /^changed\|IXSCAN/);
      assert.match(text, /change\|COLLSCAN → IXSCAN/);
      assert.match(text, /docs examined\|200,000 → —/);
      const row = await v.page.$$eval('.cmp-totals tr[data-key="docsExamined"] > *', (cells) => cells.map((x) => x.textContent));
      assert.deepEqual(row, ['docs examined', '200,000', '10', '20,000x fewer']);
      const sortRow = await v.page.$$eval('.cmp-totals tr[data-key="blockingSort"] > *', (cells) => cells.map((x) => x.textContent));
      assert.deepEqual(sortRow, ['sorts in memory', 'yes', 'no', 'better']);
      assert.equal(await v.page.locator('.cmp-counts .chip[data-status="added"]').textContent(), `${c.counts.added} added`);
      await screenshot(v, 'compare-mongo-collscan-vs-esr-light');
    });

    it('in a narrow panel the pane headings stay inside their panes, the meta line wrapping under the label', async () => {
      // A page of its own at 360 px: resizing the shared page would refit its trees under the next test.
      const narrow = await open('light', { width: 360, height: 860 });
      try {
        await narrow.send(m);
        const boxes = await narrow.page.$$eval('.compare-panes .pane', (panes) => panes.map((p) => {
          const pane = p.getBoundingClientRect();
          const parts = Array.from(p.querySelectorAll('.pane-head > *')).map((x) => ({ cls: x.className, r: x.getBoundingClientRect() }));
          return { side: (p as HTMLElement).dataset.side, left: pane.left, right: pane.right, parts: parts.map((x) => ({ cls: x.cls, left: x.r.left, right: x.r.right })) };
        }));
        assert.equal(boxes.length, 2);
        for (const b of boxes) {
          for (const part of b.parts) {
            assert.ok(part.left >= b.left - 0.5 && part.right <= b.right + 0.5, `${b.side} ${part.cls} spans ${part.left}-${part.right}, its pane ${b.left}-${b.right}`);
          }
        }
        // The totals table shows its change column without a scroll.
        const table = await narrow.page.$eval('table.cmp-totals', (t) => ({ right: t.getBoundingClientRect().right, page: document.documentElement.clientWidth }));
        assert.ok(table.right <= table.page + 0.5, `the totals table ends at ${table.right}, the panel at ${table.page}`);
        // So does every button of the toolbar (it wraps).
        const buttons = await narrow.page.$$eval('.toolbar button, .toolbar select, .toolbar input', (xs) => xs.filter((x) => (x as HTMLElement).offsetParent !== null).map((x) => ({ text: x.textContent || x.getAttribute('aria-label') || x.tagName, right: x.getBoundingClientRect().right })));
        assert.deepEqual(buttons.filter((b) => b.right > table.page + 0.5).map((b) => b.text), []);
        await screenshot(narrow, 'compare-narrow');
      } finally {
        await narrow.page.close();
      }
    });

    it('selecting a node highlights its partner in the other tree and brings it into view', async () => {
      const ix = m.after.plan.nodes.find((n) => n.kind === 'IXSCAN')!;
      const scan = m.before.plan.nodes.find((n) => n.kind === 'COLLSCAN')!;
      // Pan the before tree away so the partner has to be brought back.
      const box = (await v.page.locator('.compare-panes .pane-before svg.tree').boundingBox())!;
      await v.page.mouse.move(box.x + 100, box.y + 100);
      await v.page.mouse.down();
      await v.page.mouse.move(box.x + box.width - 5, box.y + box.height - 5, { steps: 4 });
      await v.page.mouse.up();
      assert.equal(await onScreen(v, 'before', scan.id), false, 'the pan did not move the partner away');
      await v.page.locator(card('after', ix.id)).click();
      assert.match(await cardClass(v, 'before', scan.id), /\bactive\b/);
      assert.match(await cardClass(v, 'before', scan.id), /\bflash\b/);
      assert.ok(await onScreen(v, 'before', scan.id), 'the partner is not on screen');
      await v.page.locator('button.tab[data-tab="node"]').click();
      assert.match((await v.page.locator('.node-panel .cmp-status').textContent())!, /^Changed between COLLSCAN and /);
      assert.ok((await v.page.locator('.node-panel .cmp-differences').textContent())!.includes('COLLSCAN → IXSCAN'));
      const docsRow = await v.page.$$eval('.node-panel .cmp-node-deltas tr.material', (trs) => trs.map((t) => t.textContent));
      assert.ok(docsRow.includes('docs examined200,000—'), docsRow.join(' / '));
      await screenshot(v, 'compare-mongo-partner-selected');
      // A node with no partner says so and moves nothing.
      const limit = m.after.plan.nodes.find((n) => n.kind === 'LIMIT')!;
      await v.page.locator(card('after', limit.id)).click();
      assert.match((await v.page.locator('.node-panel .cmp-status').textContent())!, /^Added:/);
    });

    it('"p" on a focused card moves the keyboard focus to its partner', async () => {
      const ix = m.after.plan.nodes.find((n) => n.kind === 'IXSCAN')!;
      const scan = m.before.plan.nodes.find((n) => n.kind === 'COLLSCAN')!;
      await v.page.locator(card('after', ix.id)).click();
      assert.deepEqual(await focusedCard(v), { side: 'after', id: ix.id });
      await v.page.keyboard.press('p');
      assert.deepEqual(await focusedCard(v), { side: 'before', id: scan.id });
      await v.page.keyboard.press('p');
      assert.deepEqual(await focusedCard(v), { side: 'after', id: ix.id });
    });

    it('lists resolved and new findings, each linked to its node on its side', async () => {
      await v.page.locator('button.tab[data-tab="findings"]').click();
      const resolved = await v.page.$$eval('.cmp-findings-resolved li.finding', (lis) => lis.map((l) => (l as HTMLElement).dataset.code));
      assert.deepEqual(resolved.sort(), c.findings.disappeared.map((f) => f.code).sort());
      const fresh = await v.page.$$eval('.cmp-findings-new li.finding', (lis) => lis.map((l) => (l as HTMLElement).dataset.code));
      assert.deepEqual(fresh, c.findings.appeared.map((f) => f.code));
      const scanFinding = c.findings.disappeared.find((f) => f.code === 'mongo.collscan')!;
      await v.page.locator('.cmp-findings-resolved li.finding[data-code="mongo.collscan"]').click();
      assert.match(await cardClass(v, 'before', scanFinding.nodeId!), /\bactive\b/);
      assert.deepEqual(await pageViolations(v), []);
      assert.deepEqual(v.errors, []);
    });

    it('the toolbar acts on both trees: search, heat, theme and export', async () => {
      await v.page.locator('.search input').fill('scan');
      await v.page.waitForFunction(() => document.querySelector('.search-count')?.textContent === '2 found');
      const scan = m.before.plan.nodes.find((n) => n.kind === 'COLLSCAN')!;
      const ix = m.after.plan.nodes.find((n) => n.kind === 'IXSCAN')!;
      assert.match(await cardClass(v, 'before', scan.id), /\bmatch\b/);
      assert.match(await cardClass(v, 'after', ix.id), /\bmatch\b/);
      await v.page.locator('.search input').press('Enter');
      await v.page.locator('.search input').press('Enter');
      assert.equal(await v.page.locator('.search-count').textContent(), '2 of 2');
      assert.match(await cardClass(v, 'after', ix.id), /\bactive\b/);
      await v.page.locator('.search input').fill('');
      await v.page.locator('.search input').press('Escape');
      // One heat scale: the collection scan read the most documents of either plan, the only heat-4 card.
      await v.page.selectOption('.heat select', 'docsExamined');
      assert.match(await cardClass(v, 'before', scan.id), /\bheat-4\b/);
      assert.doesNotMatch(await cardClass(v, 'after', ix.id), /\bheat-[34]\b/);
      await v.send({ type: 'setTheme', kind: 'dark' });
      assert.equal(await paneCards(v, 'after'), m.after.plan.nodes.length);
      assert.match(await cardClass(v, 'after', ix.id), /cmp-changed/);
      await v.send({ type: 'setTheme', kind: 'light' });
      await v.page.locator('.export summary').click();
      await v.page.locator('.export button', { hasText: 'SVG' }).click();
      const saves = (await v.outbox()).filter((x) => x.type === 'saveFile');
      const svg = saves[saves.length - 1];
      assert.ok(svg && svg.type === 'saveFile');
      assert.ok(svg.content.includes('IXSCAN') && svg.content.includes('changed'), 'the export is not the after tree with its marks');
    });

    it('switches to one plan alone and back', async () => {
      await v.page.locator('.compare-bar button[data-mode="before"]').click();
      assert.equal(await v.page.locator('.compare-panes').count(), 0);
      assert.equal(await v.page.locator('svg.tree g.card').count(), m.before.plan.nodes.length);
      assert.equal(await v.page.locator('.compare-head').isVisible(), false);
      await v.page.locator('.compare-bar button[data-mode="both"]').click();
      assert.equal(await paneCards(v, 'after'), m.after.plan.nodes.length);
      assert.equal(await v.page.locator('.compare-head .verdict').textContent(), c.verdict);
      assert.equal(await v.page.locator('.compare-bar button[data-mode="both"]').getAttribute('aria-pressed'), 'true');
    });
  });

  it('PostgreSQL offset pagination: a mixed verdict, the Sort added, in the dark theme', async () => {
    const v = await open('dark');
    const m = message('page 501 of esr where a = 42', ['index (a, b)', truthPlan('p10e1_offset_pagination', 'loser2_textbook')], ['no index', truthPlan('p10e1_offset_pagination', 'oracle')]);
    const c = expected(m);
    await v.send(m);
    assert.equal(c.direction, 'mixed');
    assert.equal(await v.page.locator('.compare-head .verdict').textContent(), c.verdict);
    assert.match((await v.page.locator('.compare-head .verdict').getAttribute('class'))!, /dir-mixed/);
    const sort = m.after.plan.nodes.find((n) => n.kind === 'Sort')!;
    assert.match(await cardClass(v, 'after', sort.id), /cmp-added/);
    const seq = m.after.plan.nodes.find((n) => n.kind === 'Seq Scan')!;
    const text = await cardText(v, 'after', seq.id);
    assert.match(text, /change\|Index Scan → Seq Scan/);
    const buffers = await v.page.$$eval('.cmp-totals tr[data-key="sharedBlocks"] td', (cells) => cells.map((x) => x.textContent));
    assert.deepEqual(buffers.slice(0, 2), ['10,043', '1,082']);
    assert.match(buffers[2]!, /^9\.3x fewer$/);
    await screenshot(v, 'compare-pg-offset-index-vs-none-dark');
    assert.deepEqual(await pageViolations(v), []);
    await v.page.close();
  });

  it('PostgreSQL = ANY against its UNION ALL rewrite in high contrast: the Sort goes, a Merge Append comes', async () => {
    const v = await open('high-contrast');
    const m = message('a = ANY(...) ORDER BY b LIMIT 10', ['= ANY, index (a, b)', truthPlan('p10d1_any_sort_limit', 'loser2_textbook')], ['UNION ALL, index (a, b)', truthPlan('p10d2_union_all_rewrite', 'oracle')]);
    const c = expected(m);
    await v.send(m);
    const sort = m.before.plan.nodes.find((n) => n.kind === 'Sort')!;
    assert.match(await cardClass(v, 'before', sort.id), /cmp-removed/);
    const merge = m.after.plan.nodes.find((n) => n.kind === 'Merge Append')!;
    assert.match(await cardClass(v, 'after', merge.id), /cmp-added/);
    assert.equal(await v.page.locator('.compare-head .verdict').textContent(), c.verdict);
    assert.match(c.verdict, /no longer sorts\.$/);
    await screenshot(v, 'compare-pg-any-vs-union-all-high-contrast');
    assert.deepEqual(await pageViolations(v), []);
    await v.page.close();
  });

  it('a corpus pair: an update before and after its index', async () => {
    const v = await open('light', { width: 1100, height: 700 });
    const before = load(corpusText('mongosh-update-explain-update-collscan-6.0.js'), 'collscan update');
    const after = load(corpusText('mongosh-update-explain-update-fetch-ixscan-6.0.js'), 'ixscan update');
    const m = message('update one leg', ['no index', before], ['legId_-1', after]);
    const c = expected(m);
    await v.send(m);
    assert.equal(await v.page.locator('.compare-head .verdict').textContent(), c.verdict);
    assert.match(await cardClass(v, 'after', 0), /cmp-unchanged/);
    const fetch = after.nodes.find((n) => n.kind === 'FETCH')!;
    assert.match(await cardClass(v, 'after', fetch.id), /cmp-added/);
    await screenshot(v, 'compare-mongo-update-narrow');
    await v.page.close();
  });

  it('plans of two engines are refused in the notice and the after plan is drawn alone', async () => {
    const v = await open('light');
    const mongo = truthPlan('m01_orders_elemmatch_sort', 'oracle');
    const pg = truthPlan('p10e1_offset_pagination', 'oracle');
    await v.send(message('two engines', ['mongo', mongo], ['pg', pg]));
    assert.match((await v.page.locator('.notice-text').textContent())!, /^The plans come from different engines \(MongoDB before, PostgreSQL after\) and cannot be compared\.$/);
    assert.equal(await v.page.locator('.compare-panes').count(), 0);
    assert.equal(await v.page.locator('svg.tree g.card').count(), pg.nodes.length);
    assert.equal(await v.page.locator('.compare-bar button[data-mode="after"]').getAttribute('aria-pressed'), 'true');
    await v.page.close();
  });

  it('keeps hostile names inert on both sides', async () => {
    const v = await open('light');
    const plan = load(hostilePostgresText(), 'hostile plan');
    const other = load(hostilePostgresText(), 'hostile plan');
    await v.send(message(HOSTILE[0]!, [HOSTILE[1]!, plan], [HOSTILE[2]!, other]));
    assert.equal(await paneCards(v, 'before'), plan.nodes.length);
    assert.equal(await v.page.locator('.compare-panes .pane-before .pane-label').textContent(), HOSTILE[1]);
    assert.equal(await v.page.locator('.cmp-totals thead th.cmp-col').first().getAttribute('title'), HOSTILE[1]);
    assert.equal(await v.page.locator('img, iframe, script:not([src])').count(), 0);
    assert.deepEqual(v.dialogs, []);
    assert.deepEqual(await pageViolations(v), []);
    await v.page.close();
  });
});
