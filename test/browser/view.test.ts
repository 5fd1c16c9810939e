// The plan view in real Chromium under the extension's Content Security Policy: real corpus plans
// drawn and asserted on through the DOM, findings linked to nodes, keyboard navigation, collapse,
// search, exports, hostile plans kept inert, and a 5,000-node plan kept responsive. Screenshots go to
// test-results/ for a person to look at.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyze } from '../../src/core/index';
import type { Plan, PlanNode } from '../../src/core/model';
import { FINDINGS_PAGE } from '../../webview/panels';
import { nodeRawOf, wirePlanWithoutRaw, type SaveFileMessage, type ShowPlanMessage } from '../../src/protocol/webview';
import { painted, pageViolations, RESULTS, screenshot, suiteHarness, toWire, type ViewPage } from './harness';
import { until } from '../until';
import { bigPostgresText, corpusMessage, HOSTILE, hostileMongoText, hostilePostgresText, load, wideAppendText } from './plans';

const PG_MISSING_INDEX = 'pg-json-analyze-sort-hashjoins-seqscans-missing-index.json';
const PG_BIG_REAL = 'pg-json-very-large-plan-hash-joins-190kb.json';
const MONGO_RANGE = 'mongo-find-ixscan-fetch-range-3.2.json';
const MONGO_SHARDED = 'mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json';
const MONGO_AGG = 'mongo-shell-agg-tpch-q22-cursor-projection-default-rejected-lookup-group-allplans-4.4.js';

function all(plan: Plan): PlanNode[] {
  const out: PlanNode[] = [];
  const stack = [plan.root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n);
    stack.push(...n.children);
  }
  return out;
}

async function cardCount(v: ViewPage): Promise<number> {
  return v.page.locator('svg.tree g.card').count();
}

async function cardText(v: ViewPage, id: number): Promise<string> {
  return v.page.locator(`svg.tree g.card[data-id="${id}"]`).evaluate((g) => Array.from(g.querySelectorAll('text')).map((t) => t.textContent).join('|'));
}

async function activeCardId(v: ViewPage): Promise<number | undefined> {
  return v.page.evaluate(() => {
    const g = document.activeElement?.closest('g.card');
    return g ? Number(g.getAttribute('data-id')) : undefined;
  });
}

/** Whether a card's box lies inside the tree's visible area. */
async function cardOnScreen(v: ViewPage, id: number): Promise<boolean> {
  return v.page.evaluate((cid) => {
    const g = document.querySelector(`svg.tree g.card[data-id="${cid}"] rect.card-bg`);
    const svg = document.querySelector('svg.tree');
    if (!g || !svg) return false;
    const a = g.getBoundingClientRect();
    const b = svg.getBoundingClientRect();
    return a.left >= b.left - 1 && a.top >= b.top - 1 && a.right <= b.right + 1 && a.bottom <= b.bottom + 1;
  }, id);
}

/** Sends a plan and waits for the page to say it drew it (its side panel filled after the first frame). */
async function sendDrawn(v: ViewPage, message: unknown): Promise<void> {
  const drawn = async () => (await v.outbox()).filter((m) => m.type === 'planDrawn').length;
  const before = await drawn();
  await v.send(message);
  await until('the page to say planDrawn', async () => (await drawn()) > before);
}

async function lastSave(v: ViewPage): Promise<SaveFileMessage> {
  const out = await v.outbox();
  const saves = out.filter((m): m is SaveFileMessage => m.type === 'saveFile');
  assert.ok(saves.length > 0, 'the view sent no saveFile message');
  return saves[saves.length - 1]!;
}

describe('plan view in Chromium', function () {
  this.timeout(180_000);
  const open = suiteHarness();

  describe('a wide node: an Append over 3,000 partitions', () => {
    let v: ViewPage;
    let plan: Plan;
    before(async () => {
      v = await open('light');
      plan = load(wideAppendText(3000), 'the wide plan');
      await v.send({ type: 'showPlan', title: 'wide', plan, findings: [] });
    });
    after(async () => v.page.close());

    it('draws a page of its children with the count of the others, and the next page on a click', async () => {
      const append = plan.root.children[0]!;
      // Aggregate, Append and the first page of 50 scans.
      assert.equal(await cardCount(v), 52);
      const more = v.page.locator(`svg.tree g.card[data-id="${append.id}"] g.more-children`);
      assert.equal(await more.locator('text').textContent(), '+2,950 more');
      await more.click();
      assert.equal(await cardCount(v), 102);
      assert.equal(await more.locator('text').textContent(), '+2,900 more');
      assert.equal(await v.page.locator(`svg.tree g.card[data-id="${append.children[99]!.id}"]`).count(), 1);
    });

    it('opens the page that holds a node the host points at', async () => {
      const last = plan.root.children[0]!.children[2999]!;
      await v.send({ type: 'focusNode', nodeId: last.id });
      await v.page.locator(`svg.tree g.card[data-id="${last.id}"]`).waitFor();
      assert.ok((await cardCount(v)) < 200, 'only the page of the node, not every child');
    });
  });

  describe('a PostgreSQL plan from the corpus', () => {
    let v: ViewPage;
    let msg: ShowPlanMessage;
    before(async () => {
      v = await open('light');
      msg = corpusMessage(PG_MISSING_INDEX);
      await v.send(msg);
    });
    after(async () => v.page.close());

    it('draws one card per node with the kinds, relations and figures of the plan', async () => {
      assert.equal(await cardCount(v), msg.plan.nodes.length);
      for (const n of all(msg.plan)) {
        const text = await cardText(v, n.id);
        assert.ok(text.includes(n.kind.split(' ')[0]!), `card ${n.id} lacks its kind ${n.kind}: ${text}`);
        if (n.details.relationName) assert.ok(text.includes(n.details.relationName), `card ${n.id} lacks relation ${n.details.relationName}`);
      }
      // Rows removed by filter show on the scan that removed them, with the examined/kept ratio.
      const filtered = all(msg.plan).find((n) => (n.metrics.rowsRemovedByFilter ?? 0) > 1000)!;
      assert.ok(filtered, 'the fixture has a scan removing rows by filter');
      const text = await cardText(v, filtered.id);
      const perLoop = filtered.metrics.actualRowsPerLoop!;
      const ratio = `${Math.round((perLoop + filtered.metrics.rowsRemovedByFilter!) / perLoop).toLocaleString('en-US')}x`;
      assert.ok(text.includes(ratio), `no ${ratio} on card: ${text}`);
      // The finding about the same node states the same figures as the card.
      const kept = filtered.metrics.rowsReturned!;
      const read = kept + filtered.metrics.rowsRemovedByFilter!;
      assert.ok(text.includes(`${read.toLocaleString('en-US')} rows → ${kept.toLocaleString('en-US')} kept`), `read and kept missing: ${text}`);
      const finding = msg.findings.find((f) => f.nodeId === filtered.id && f.code === 'pg.seq-scan');
      assert.ok(finding?.message.includes(`read ${read.toLocaleString('en-US')} rows to keep ${kept.toLocaleString('en-US')}`), `the finding says otherwise: ${finding?.message}`);
      assert.ok(text.includes(filtered.metrics.rowsRemovedByFilter!.toLocaleString('en-US')), `removed count missing: ${text}`);
      assert.equal(await v.page.locator(`svg.tree g.card[data-id="${filtered.id}"].waste-bad`).count(), 1);
    });

    it('draws edges as wide as the rows flowing up', async () => {
      const widths = await v.page.$$eval('svg.tree path.edge', (ps) => ps.map((p) => Number(p.getAttribute('stroke-width'))));
      assert.equal(widths.length, msg.plan.nodes.length - 1);
      assert.ok(Math.max(...widths) > Math.min(...widths), 'all edges have the same width');
    });

    it('links each finding to its node: click focuses, highlights and scrolls to it', async () => {
      const linked = msg.findings.filter((f) => f.nodeId !== undefined);
      assert.ok(linked.length > 0, 'the fixture has findings on nodes');
      // Zoom far out and pan away so the jump has to move the view.
      await v.page.mouse.move(300, 300);
      await v.page.mouse.wheel(0, 2500);
      await v.page.mouse.down();
      await v.page.mouse.move(1200, 800, { steps: 4 });
      await v.page.mouse.up();
      const f = linked[linked.length - 1]!;
      const item = v.page.locator(`.findings li.finding[data-node-id="${f.nodeId}"]`).first();
      await item.click();
      assert.equal(await activeCardId(v), f.nodeId);
      assert.equal(await v.page.locator(`svg.tree g.card[data-id="${f.nodeId}"].flash`).count(), 1);
      assert.ok(await cardOnScreen(v, f.nodeId!), 'the finding’s node is not on screen after the click');
      // Enter on a finding does the same.
      const other = linked.find((x) => x.nodeId !== f.nodeId);
      if (other) {
        await v.page.locator(`.findings li.finding[data-node-id="${other.nodeId}"]`).first().focus();
        await v.page.keyboard.press('Enter');
        assert.equal(await activeCardId(v), other.nodeId);
      }
      // The node panel shows the node's raw fields as text.
      await v.page.locator('button.tab[data-tab="node"]').click();
      const raw = await v.page.locator('.node-panel .raw-fields').textContent();
      const node = msg.plan.nodes[(other ?? f).nodeId!]!;
      assert.ok(raw!.includes(String(node.raw['Node Type'])), 'raw fields do not list the node type');
    });

    it('moves between nodes with the arrow keys and folds with Enter', async () => {
      await v.page.locator('button', { hasText: 'Fit' }).click();
      await v.page.locator(`svg.tree g.card[data-id="0"]`).click();
      assert.equal(await activeCardId(v), 0);
      await v.page.keyboard.press('ArrowDown');
      const first = msg.plan.root.children[0]!;
      assert.equal(await activeCardId(v), first.id);
      const focusRing = await v.page.evaluate(() => document.activeElement?.matches(':focus-visible') ?? false);
      assert.ok(focusRing, 'keyboard focus is not visible');
      await v.page.keyboard.press('ArrowUp');
      assert.equal(await activeCardId(v), 0);
      await v.page.keyboard.press('ArrowDown');
      const before = await cardCount(v);
      await v.page.keyboard.press('Enter');
      const descendants = all({ ...msg.plan, root: first } as Plan).length - 1;
      assert.equal(await cardCount(v), before - descendants);
      assert.equal(await v.page.locator(`svg.tree g.card[data-id="${first.id}"]`).getAttribute('aria-expanded'), 'false');
      const toggle = await v.page.locator(`svg.tree g.card[data-id="${first.id}"] .toggle-text`).textContent();
      assert.equal(toggle, `+${descendants}`);
      await v.page.keyboard.press('Enter');
      assert.equal(await cardCount(v), before);
      if (first.children.length > 1) {
        await v.page.keyboard.press('ArrowDown');
        await v.page.keyboard.press('ArrowRight');
        assert.equal(await activeCardId(v), first.children[1]!.id);
      }
    });

    it('finds nodes with / and Enter', async () => {
      const target = all(msg.plan).find((n) => n.details.relationName === 'answer')!;
      await v.page.locator('button', { hasText: 'Fit' }).click();
      await v.page.locator('svg.tree g.card[data-id="0"]').click();
      await v.page.keyboard.press('/');
      assert.equal(await v.page.evaluate(() => document.activeElement?.getAttribute('type')), 'search');
      await v.page.keyboard.type('answer');
      await v.page.keyboard.press('Enter');
      assert.match((await v.page.locator('.search-count').textContent())!, /^1 of \d+$/);
      assert.equal(await v.page.locator(`svg.tree g.card[data-id="${target.id}"].match`).count(), 1);
      assert.equal(await v.page.locator('svg.tree g.card.active').getAttribute('data-id'), String(target.id));
      await v.page.keyboard.press('Escape');
    });

    it('opens a clicked node in the Node tab, and fits the tree again when the panel is resized', async () => {
      await v.page.locator('button.tab[data-tab="findings"]').click();
      const scan = all(msg.plan).find((n) => n.kind === 'Seq Scan')!;
      await v.page.locator(`svg.tree g.card[data-id="${scan.id}"] .card-title`).click();
      assert.equal(await v.page.getAttribute('button.tab[data-tab="node"]', 'aria-selected'), 'true');
      assert.equal(await v.page.locator('.node-panel .node-title').textContent(), 'Seq Scan');
      const before = await v.page.getAttribute('svg.tree g.viewport', 'transform');
      await v.page.setViewportSize({ width: 700, height: 860 });
      await v.page.waitForFunction((t) => document.querySelector('svg.tree g.viewport')?.getAttribute('transform') !== t, before, { timeout: 5000 });
      await v.page.setViewportSize({ width: 1400, height: 860 });
    });

    it('lists a high-severity finding before the suggestions', async () => {
      const high = msg.findings.find((f) => f.severity === 'high' && !f.good);
      const findings = high ? msg.findings : [{ ...msg.findings[0]!, severity: 'high' as const, good: false }, ...msg.findings.slice(1)];
      await v.send({ ...msg, findings, suggestions: [{ id: 's9', title: 'CREATE INDEX ON question (exam_id)' }] });
      await v.page.locator('button.tab[data-tab="findings"]').click();
      const heads = await v.page.locator('.findings-panel h3').allTextContents();
      assert.match(heads[0]!, /^Findings/);
      assert.match(heads[1]!, /^Suggestions/);
      await v.send(msg);
    });

    it('recolours by another heat metric', async () => {
      const before = await v.page.$$eval('svg.tree g.card', (gs) => gs.map((g) => g.getAttribute('class')).join());
      await v.page.selectOption('.heat select', 'rows');
      const after = await v.page.$$eval('svg.tree g.card', (gs) => gs.map((g) => g.getAttribute('class')).join());
      assert.notEqual(after, before);
      const hottest = all(msg.plan).reduce((a, b) => ((b.metrics.rowsReturned ?? 0) > (a.metrics.rowsReturned ?? 0) ? b : a));
      assert.equal(await v.page.locator(`svg.tree g.card[data-id="${hottest.id}"].heat-4`).count(), 1);
      await v.page.selectOption('.heat select', 'exclusiveTime');
    });

    it('exports SVG, PNG and JSON, with literals replaced when asked', async () => {
      await v.page.locator('.export summary').click();
      await v.page.locator('.export button', { hasText: 'JSON' }).click();
      const plainJson = await lastSave(v);
      assert.equal(plainJson.mimeType, 'application/json');
      assert.ok(plainJson.content.includes("'nicolas1'"), 'the plain JSON lost a filter literal');
      await v.page.locator('.export summary').click();
      await v.page.locator('.export input[type=checkbox]').check();
      await v.page.locator('.export button', { hasText: 'JSON' }).click();
      const redacted = await lastSave(v);
      assert.ok(!redacted.content.includes('nicolas1'), 'a literal survived the placeholders');
      const doc = JSON.parse(redacted.content) as { plan: Plan; placeholders: boolean };
      assert.equal(doc.placeholders, true);
      assert.ok(JSON.stringify(doc.plan).includes('rel_users_exams'), 'placeholders removed a relation name');

      await v.page.locator('.export summary').click();
      await v.page.locator('.export button', { hasText: 'SVG' }).click();
      const svg = await lastSave(v);
      assert.equal(svg.mimeType, 'image/svg+xml');
      assert.ok(!svg.content.includes('nicolas1'));
      const parsed = await v.page.evaluate((text) => {
        const d = new DOMParser().parseFromString(text, 'image/svg+xml');
        return {
          error: d.querySelector('parsererror') !== null,
          cards: d.querySelectorAll('g > g > g').length,
          text: d.documentElement.textContent ?? '',
          classes: d.querySelectorAll('[class]').length,
          filled: d.querySelectorAll('rect[fill]').length,
        };
      }, svg.content);
      assert.equal(parsed.error, false);
      assert.ok(parsed.text.includes('Seq Scan') && parsed.text.includes('rel_users_exams'), 'card text missing from the SVG');
      assert.equal(parsed.classes, 0, 'exported SVG still depends on the stylesheet');
      assert.ok(parsed.filled > msg.plan.nodes.length, 'exported shapes carry no colours');

      await v.page.locator('.export summary').click();
      await v.page.locator('.export button', { hasText: 'PNG' }).click();
      await v.page.waitForFunction(() => (window as unknown as { qpiOutbox: { type: string; mimeType?: string }[] }).qpiOutbox.some((m) => m.mimeType === 'image/png'));
      const png = await lastSave(v);
      assert.equal(png.encoding, 'base64');
      const bytes = Buffer.from(png.content, 'base64');
      assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG');
      writeFileSync(join(RESULTS, 'export-pg-placeholders.png'), bytes);
      writeFileSync(join(RESULTS, 'export-pg-placeholders.svg'), svg.content);
      assert.ok(bytes.length > 5000, 'the PNG is suspiciously small');
      assert.deepEqual(await pageViolations(v), []);
    });

    it('asks the host to copy and to reveal, by message', async () => {
      await v.page.locator('button.tab[data-tab="node"]').click();
      await v.page.locator('.node-panel button', { hasText: 'Copy raw' }).click();
      await v.page.locator('.node-panel button', { hasText: 'Reveal' }).click();
      const out = await v.outbox();
      assert.ok(out.some((m) => m.type === 'copyText' && m.text.includes('Node Type')));
      assert.ok(out.some((m) => m.type === 'openNode'));
      await v.page.locator('button.tab[data-tab="raw"]').click();
      const raw = await v.page.locator('pre.raw').textContent();
      assert.equal(raw, msg.rawText);
    });

    it('asks for the raw text when the Raw tab opens, as the extension sends it (the plan message without it)', async () => {
      const { rawText, ...slim } = msg;
      assert.ok(rawText);
      await v.page.locator('button.tab[data-tab="findings"]').click();
      await v.send({ ...slim, hasRawText: true });
      const before = (await v.outbox()).filter((m) => m.type === 'rawTextWanted').length;
      await v.page.locator('button.tab[data-tab="raw"]').click();
      await v.page.waitForFunction(() => document.querySelector('.raw-note')?.textContent?.includes('Loading'));
      const asked = (await v.outbox()).filter((m) => m.type === 'rawTextWanted').length;
      assert.equal(asked, before + 1, 'one request when the tab opens');
      await v.send({ type: 'rawText', text: rawText });
      await v.page.locator('pre.raw').waitFor();
      assert.equal(await v.page.locator('pre.raw').textContent(), rawText);
      await v.page.locator('button.tab[data-tab="findings"]').click();
      await v.page.locator('button.tab[data-tab="raw"]').click();
      assert.equal((await v.outbox()).filter((m) => m.type === 'rawTextWanted').length, asked, 'asked once per plan');
      await v.send(msg);
    });

    it('draws a plan sent without its nodes\' raw fields, says they are loading, and fills the Node tab and a waiting export when they arrive', async () => {
      const count = async (type: string) => (await v.outbox()).filter((m) => m.type === type).length;
      await v.page.locator('button.tab[data-tab="node"]').click();
      await sendDrawn(v, { ...msg, plan: wirePlanWithoutRaw(msg.plan), nodeRawLater: true });
      assert.equal(await cardCount(v), msg.plan.nodes.length, 'the cards are drawn without the raw fields');
      const section = v.page.locator('.node-panel .raw-fields');
      assert.equal((await section.textContent())?.includes('Loading the raw fields'), true, 'no loading line where the raw fields go');
      assert.equal(await section.locator('dt').count(), 0, 'an empty list shown as if the node had no raw fields');
      assert.equal(await v.page.locator('.node-panel button', { hasText: 'Copy raw' }).isDisabled(), true);
      // An export of the plan asked for now waits for the fields instead of leaving them out.
      const saves = await count('saveFile');
      await v.page.locator('.export summary').click();
      await v.page.locator('.export input[type=checkbox]').check();
      await v.page.locator('.export button', { hasText: 'JSON' }).click();
      await painted(v.page);
      assert.equal(await count('saveFile'), saves, 'the JSON was exported before the raw fields came');

      await v.send(nodeRawOf(msg.plan));
      const root = msg.plan.root;
      await until('the raw fields in the Node tab', async () => (await section.locator('dt').count()) === Object.keys(root.raw).length);
      assert.ok((await section.textContent())!.includes(String(root.raw['Node Type'])));
      assert.equal((await section.textContent())?.includes('Loading'), false);
      await until('the waiting export', async () => (await count('saveFile')) > saves);
      const doc = JSON.parse((await lastSave(v)).content) as { plan: Plan; placeholders: boolean };
      assert.equal(doc.placeholders, true);
      const filtered = all(doc.plan).find((n) => typeof n.raw['Filter'] === 'string' && String(n.raw['Filter']).includes('user_username'));
      assert.ok(filtered, 'the export lacks the raw Filter field');
      assert.ok(!String(filtered.raw['Filter']).includes('nicolas1'), 'a literal in a raw field survived the placeholders');
      assert.equal(all(doc.plan).length, msg.plan.nodes.length);
      assert.ok(all(doc.plan).every((n) => Object.keys(n.raw).length > 0), 'a node went out without its raw fields');

      // Copy raw copies them; another node's fields are there too.
      await v.page.locator('.node-panel button', { hasText: 'Copy raw' }).click();
      await until('the copy', async () => (await v.outbox()).some((m) => m.type === 'copyText' && m.text.includes(String(root.raw['Node Type']))));
      const leaf = msg.plan.nodes[msg.plan.nodes.length - 1]!;
      await v.page.locator(`svg.tree g.card[data-id="${leaf.id}"]`).click();
      await v.page.locator('button.tab[data-tab="node"]').click();
      assert.ok((await section.textContent())!.includes(String(leaf.raw['Node Type'])));
      assert.equal(await section.locator('dt').count(), Object.keys(leaf.raw).length);
      assert.deepEqual(await pageViolations(v), []);
      await sendDrawn(v, msg);
    });

    it('shows the plan as read in the Raw tab only with its nodes\' raw fields, when there is no explain text', async () => {
      const { rawText: _text, ...noText } = msg;
      await v.page.locator('button.tab[data-tab="raw"]').click();
      await v.send({ ...noText, plan: wirePlanWithoutRaw(msg.plan), nodeRawLater: true });
      await until('the loading line', async () => (await v.page.locator('.raw-panel .raw-note').textContent())?.includes('Loading') === true);
      assert.equal(await v.page.locator('.raw-panel pre.raw').count(), 0);
      await v.send(nodeRawOf(msg.plan));
      await v.page.locator('.raw-panel pre.raw').waitFor();
      assert.ok((await v.page.locator('.raw-panel pre.raw').textContent())!.includes(String(msg.plan.root.raw['Node Type'])));
      await v.page.locator('button.tab[data-tab="findings"]').click();
      await sendDrawn(v, msg);
    });

    it('says planDrawn once per plan, when its cards and its side panel are drawn (the host starts the advice then)', async () => {
      await v.page.evaluate(() => {
        const w = window as unknown as { qpiDrawnSeen: { cards: number; findings: number }[] };
        w.qpiDrawnSeen = [];
        window.addEventListener('qpi-outbound', (e) => {
          if ((e as CustomEvent<{ type: string }>).detail.type !== 'planDrawn') return;
          w.qpiDrawnSeen.push({ cards: document.querySelectorAll('svg.tree g.card').length, findings: document.querySelectorAll('.findings-panel h3').length });
        });
      });
      const before = (await v.outbox()).filter((m) => m.type === 'planDrawn').length;
      await v.send(msg);
      await v.page.waitForFunction(() => (window as unknown as { qpiDrawnSeen: unknown[] }).qpiDrawnSeen.length > 0);
      const seen = await v.page.evaluate(() => (window as unknown as { qpiDrawnSeen: { cards: number; findings: number }[] }).qpiDrawnSeen);
      assert.equal(seen.length, 1, 'one planDrawn for one plan');
      assert.ok(seen[0]!.cards > 0, 'the cards were drawn before planDrawn');
      assert.ok(seen[0]!.findings > 0, 'the side panel was filled before planDrawn');
      assert.equal((await v.outbox()).filter((m) => m.type === 'planDrawn').length, before + 1);
    });

    it('ignores a malformed message with a one-line notice and keeps the plan', async () => {
      const count = await cardCount(v);
      await v.send({ type: 'showPlan', title: 'broken', plan: { engine: 'postgres', root: { id: 0 } }, findings: [] });
      const notice = v.page.locator('.notice');
      assert.equal(await notice.isVisible(), true);
      const text = (await notice.locator('.notice-text').textContent())!;
      assert.match(text, /^Ignored a malformed message: showPlan\.plan\.\S+ .+\.$/);
      assert.ok(!text.includes('\n'));
      assert.equal(await cardCount(v), count);
      await v.send({ type: 'nonsense' });
      assert.match((await notice.locator('.notice-text').textContent())!, /"nonsense" is not a message the view knows/);
      await v.send('just a string');
      assert.equal(await cardCount(v), count);
    });

    it('shows suggestions and asks the host to verify them', async () => {
      const target = msg.findings.find((f) => f.nodeId !== undefined)!;
      await v.send({
        ...msg,
        suggestions: [{ id: 's1', title: 'Index on answer(question_id)', ddl: 'CREATE INDEX ON answer (question_id);', verifiable: true, nodeIds: [target.nodeId!] }],
      });
      await v.page.locator('button.tab[data-tab="findings"]').click();
      await v.page.locator('.suggestion button', { hasText: 'Verify' }).click();
      const out = await v.outbox();
      assert.ok(out.some((m) => m.type === 'verifySuggestion' && m.id === 's1'));
      await v.send({ type: 'suggestionStatus', id: 's1', status: 'verified', detail: 'Cost 1,200 → 14.' });
      assert.match((await v.page.locator('.suggestion .status').textContent())!, /^Verified: Cost 1,200 → 14\.$/);
      // Once verified, the index can be built from the panel; the host reports the build's progress.
      const create = v.page.locator('.suggestion button.create-index');
      assert.equal(await create.textContent(), 'Create Index');
      await create.click();
      assert.ok((await v.outbox()).some((m) => m.type === 'createIndex' && m.id === 's1'));
      assert.equal(await create.textContent(), 'Creating…');
      assert.equal(await create.isDisabled(), true);
      await v.send({ type: 'suggestionStatus', id: 's1', status: 'created', detail: 'Created the index on answer.' });
      assert.equal(await v.page.locator('.suggestion button.create-index').count(), 0);
      assert.equal(await v.page.locator('.suggestion .status').textContent(), 'Created the index on answer.');
      assert.deepEqual(await pageViolations(v), []);
      assert.deepEqual(v.errors, []);
    });
  });

  describe('MongoDB plans from the corpus', () => {
    it('shows keys and docs examined against returned on the stage that reads them', async () => {
      const v = await open('light');
      const msg = corpusMessage(MONGO_RANGE);
      await v.send(msg);
      assert.equal(await cardCount(v), msg.plan.nodes.length);
      const ix = all(msg.plan).find((n) => n.kind === 'IXSCAN')!;
      const text = await cardText(v, ix.id);
      assert.ok(text.includes(ix.details.indexName!), `index name missing: ${text}`);
      assert.ok(text.includes(ix.metrics.keysExamined!.toLocaleString('en-US')) || text.includes('192k'), `keys examined missing: ${text}`);
      assert.ok(text.includes('[33, 40]'), `bounds missing: ${text}`);
      const wasteful = all(msg.plan).find((n) => (n.metrics.docsExamined ?? 0) > (n.metrics.rowsReturned ?? 0));
      if (wasteful) {
        const wt = await cardText(v, wasteful.id);
        const ratio = wasteful.metrics.docsExamined! / Math.max(1, wasteful.metrics.rowsReturned!);
        assert.ok(wt.includes('docs →'), `no examined→returned mark: ${wt}`);
        assert.ok(wt.includes(`${ratio < 10 ? Math.round(ratio * 10) / 10 : Math.round(ratio).toLocaleString('en-US')}×`), `ratio missing: ${wt}`);
      }
      await screenshot(v, 'mongo-range-light');
      assert.deepEqual(await pageViolations(v), []);
      await v.page.close();
    });

    it('opens on wasted reads: an efficient plan stays cool, a collection scan is the hot card', async () => {
      const v = await open('light');
      const good = corpusMessage('mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json');
      assert.ok(all(good.plan).every((n) => (n.metrics.keysExamined ?? n.metrics.docsExamined ?? 0) <= (n.metrics.rowsReturned ?? 0)), 'the fixture reads only what it returns');
      await v.send(good);
      assert.equal(await v.page.inputValue('.heat select'), 'waste');
      assert.equal(await v.page.locator('svg.tree g.card[class*="heat-"]:not(.heat-0)').count(), 0);
      const bad = corpusMessage('mongosh-update-explain-update-collscan-6.0.js');
      await v.send(bad);
      const scan = all(bad.plan).find((n) => n.kind === 'COLLSCAN')!;
      assert.ok(scan.metrics.docsExamined! > scan.metrics.rowsReturned!, 'the fixture scans more than it keeps');
      assert.match((await v.page.locator(`svg.tree g.card[data-id="${scan.id}"]`).getAttribute('class')) ?? '', /\bheat-4\b/);
      await v.page.close();
    });

    it('labels shard subtrees and lists and draws rejected plans', async () => {
      const v = await open('dark');
      const msg = corpusMessage(MONGO_SHARDED);
      await v.send(msg);
      const shards = all(msg.plan).filter((n) => n.details.shardName !== undefined);
      assert.ok(shards.length >= 2, 'the fixture is sharded over several shards');
      const lanes = await v.page.$$eval('svg.tree g.lane text', (ts) => ts.map((t) => t.textContent));
      assert.deepEqual(lanes.sort(), shards.map((s) => `shard ${s.details.shardName}`).sort());
      await screenshot(v, 'mongo-sharded-dark');
      await v.page.locator('button.tab[data-tab="plan"]').click();
      const listed = await v.page.locator('.plan-panel li.rejected-plan').count();
      assert.equal(listed, msg.plan.rejectedPlans.length);
      const r = msg.plan.rejectedPlans[0]!;
      await v.page.locator('.plan-panel li.rejected-plan').first().locator('button', { hasText: 'Draw' }).click();
      assert.equal(await v.page.locator('.rejected-bar').isVisible(), true);
      assert.equal(await cardCount(v), all({ ...msg.plan, root: r.root } as Plan).length);
      await screenshot(v, 'mongo-sharded-rejected-dark');
      assert.equal(await v.page.locator('.plan-panel li.rejected-plan.shown').count(), 1);
      const last = msg.plan.rejectedPlans[msg.plan.rejectedPlans.length - 1]!;
      await v.page.locator('.plan-panel li.rejected-plan').last().locator('button', { hasText: 'Draw' }).click();
      assert.equal(await cardCount(v), all({ ...msg.plan, root: last.root } as Plan).length);
      assert.match((await v.page.locator('.rejected-bar').textContent())!, new RegExp(`#${last.index + 1} on shard ${last.shardName}`));
      await v.page.locator('.rejected-bar button').click();
      assert.equal(await cardCount(v), msg.plan.nodes.length);
      assert.deepEqual(await pageViolations(v), []);
      await v.page.close();
    });

    it('gives a rejected plan drawn before the nodes\' raw fields came its fields when they come', async () => {
      const v = await open('light');
      const msg = corpusMessage(MONGO_SHARDED);
      await v.send({ ...msg, plan: wirePlanWithoutRaw(msg.plan), nodeRawLater: true });
      await v.page.locator('button.tab[data-tab="plan"]').click();
      await v.page.locator('.plan-panel li.rejected-plan').first().locator('button', { hasText: 'Draw' }).click();
      await v.page.locator('button.tab[data-tab="node"]').click();
      const section = v.page.locator('.node-panel .raw-fields');
      assert.equal((await section.textContent())?.includes('Loading the raw fields'), true);
      await v.send(nodeRawOf(msg.plan));
      const root = msg.plan.rejectedPlans[0]!.root;
      await until('the rejected root\'s raw fields', async () => (await section.locator('dt').count()) === Object.keys(root.raw).length);
      assert.ok((await section.textContent())!.includes(String(root.raw['stage'])));
      await v.page.locator('.rejected-bar button').click();
      assert.equal(await section.locator('dt').count(), Object.keys(msg.plan.root.raw).length, 'the winning plan\'s root has its fields too');
      await v.page.close();
    });

    it('draws an aggregation with lookups and its rejected candidate in high contrast', async () => {
      const v = await open('high-contrast');
      const msg = corpusMessage(MONGO_AGG);
      await v.send(msg);
      assert.equal(await cardCount(v), msg.plan.nodes.length);
      await screenshot(v, 'mongo-agg-high-contrast');
      assert.deepEqual(await pageViolations(v), []);
      await v.page.close();
    });
  });

  describe('host messages', () => {
    it('shows a comparison of two plans and switches between them', async () => {
      const v = await open('light');
      const before = corpusMessage(PG_MISSING_INDEX);
      const after = corpusMessage(PG_BIG_REAL);
      await v.send({
        type: 'showComparison',
        title: 'before and after',
        before: { label: 'seq scans', plan: before.plan, findings: before.findings },
        after: { label: 'big', plan: after.plan, findings: after.findings },
      });
      assert.equal(await v.page.locator('.compare-bar').isVisible(), true);
      assert.equal(await v.page.locator('.summary').textContent(), await v.page.locator('.summary').getAttribute('title'));
      assert.match((await v.page.locator('.summary').textContent())!, new RegExp(`${after.plan.nodes.length} nodes`));
      await v.page.locator('.compare-bar button', { hasText: 'Before' }).click();
      assert.equal(await cardCount(v), before.plan.nodes.length);
      await v.page.locator('button.tab[data-tab="plan"]').click();
      const header = await v.page.$$eval('.plan-panel table.compare tr:first-child th', (ths) => ths.map((t) => t.textContent));
      assert.deepEqual(header, ['', 'seq scans', 'big']);
      assert.deepEqual(await pageViolations(v), []);
      await v.page.close();
    });

    it('focuses a node the host points at, expanding its ancestors', async () => {
      const { text } = bigPostgresText(1500);
      const plan = load(text, 'generated plan');
      const v = await open('light');
      await v.send({ type: 'showPlan', title: 'focus', plan, findings: [] });
      const hidden = plan.nodes.filter((n) => n.children.length === 0).pop()!;
      assert.equal(await v.page.locator(`svg.tree g.card[data-id="${hidden.id}"]`).count(), 0);
      await v.send({ type: 'focusNode', nodeId: hidden.id });
      assert.equal(await activeCardId(v), hidden.id);
      assert.ok(await cardOnScreen(v, hidden.id));
      await v.send({ type: 'focusNode', nodeId: 99_999 });
      assert.match((await v.page.locator('.notice-text').textContent())!, /no node 99999/);
      await v.page.close();
    });

    it('takes its colours from the --vscode-* variables VS Code sets on the page', async () => {
      const v = await open('dark');
      // VS Code writes the theme as custom properties on <html>; a CSSOM write is what it amounts to.
      await v.page.evaluate(() => {
        const st = document.documentElement.style;
        st.setProperty('--vscode-editor-background', 'rgb(1, 2, 3)');
        st.setProperty('--vscode-editorWidget-background', 'rgb(10, 20, 30)');
        st.setProperty('--vscode-editor-foreground', 'rgb(200, 201, 202)');
        st.setProperty('--vscode-charts-red', 'rgb(250, 0, 0)');
      });
      await v.send(corpusMessage(PG_MISSING_INDEX));
      const colours = await v.page.evaluate(() => ({
        body: getComputedStyle(document.body).backgroundColor,
        card: getComputedStyle(document.querySelector('svg.tree g.card.heat-0 rect.card-bg')!).fill,
        text: getComputedStyle(document.querySelector('svg.tree g.card text.card-title')!).fill,
        heat: getComputedStyle(document.querySelector('svg.tree rect.heat-bar')!).fill,
      }));
      assert.deepEqual(colours, { body: 'rgb(1, 2, 3)', card: 'rgb(10, 20, 30)', text: 'rgb(200, 201, 202)', heat: 'rgb(250, 0, 0)' });
      await screenshot(v, 'pg-missing-index-vscode-variables');
      assert.deepEqual(await pageViolations(v), []);
      await v.page.close();
    });

    it('would see a policy violation if the page had one', async () => {
      // The CSP assertions above are only worth something if a violation is actually recorded.
      const v = await open('light');
      await v.page.evaluate(() => {
        const s = document.createElement('style');
        s.textContent = 'body { color: red; }';
        document.head.appendChild(s);
        document.body.setAttribute('style', 'color: red');
      });
      // The report is an event the page receives after the style is refused: wait for it.
      await until('a style-src violation recorded for an inline style', async () => (await pageViolations(v)).some((x) => /style-src/.test(x)));
      await v.page.close();
    });
  });

  describe('hostile plans', () => {
    for (const [name, text] of [
      ['PostgreSQL', hostilePostgresText()],
      ['MongoDB', hostileMongoText()],
    ] as const) {
      it(`keeps markup in a ${name} plan inert`, async () => {
        const v = await open('light');
        const plan = load(text, `hostile ${name}`);
        const msg: ShowPlanMessage = {
          type: 'showPlan',
          title: HOSTILE[1]!,
          plan,
          rawText: text,
          findings: [{ code: HOSTILE[0]!, severity: 'high', nodeId: plan.nodes.length - 1, title: HOSTILE[0]!, message: HOSTILE[1]!, numbers: {} }],
          suggestions: [{ id: HOSTILE[2]!, title: HOSTILE[0]!, ddl: HOSTILE[1]!, detail: HOSTILE[3]!, verifiable: true }],
        };
        const before = await v.page.evaluate(() => ({ scripts: document.scripts.length, styles: document.querySelectorAll('style, link').length }));
        await v.send(msg);
        await v.page.locator('li.finding').first().click();
        for (const tab of ['node', 'raw', 'plan', 'findings']) await v.page.locator(`button.tab[data-tab="${tab}"]`).click();
        await v.page.locator('.search input').fill('img');
        await v.page.keyboard.press('Enter');
        await v.page.locator('.export summary').click();
        await v.page.locator('.export button', { hasText: 'SVG' }).click();
        const dom = await v.page.evaluate(() => ({
          scripts: document.scripts.length,
          styles: document.querySelectorAll('style, link').length,
          injected: document.querySelectorAll('img, iframe, object, embed, b, svg svg').length,
          handlers: Array.from(document.querySelectorAll('*')).filter((e) => Array.from(e.attributes).some((a) => a.name.startsWith('on'))).length,
          text: document.body.textContent ?? '',
        }));
        assert.equal(dom.scripts, before.scripts);
        assert.equal(dom.styles, before.styles);
        assert.equal(dom.injected, 0);
        assert.equal(dom.handlers, 0);
        // The markup is there, as text.
        assert.ok(dom.text.includes(HOSTILE[0]!), 'the hostile text is not shown as text');
        const svg = await lastSave(v);
        const exported = await v.page.evaluate((t) => {
          const d = new DOMParser().parseFromString(t, 'image/svg+xml');
          return { error: d.querySelector('parsererror') !== null, foreign: d.querySelectorAll('script, foreignObject, img, iframe').length };
        }, svg.content);
        assert.deepEqual(exported, { error: false, foreign: 0 });
        // Nothing that could load later is in the page (no img, iframe, object above): a painted frame
        // and the tasks queued before it carry any dialog, error or violation report the clicks set off.
        await painted(v.page);
        assert.deepEqual(v.dialogs, []);
        assert.deepEqual(await pageViolations(v), []);
        assert.deepEqual(v.errors, []);
        await screenshot(v, `hostile-${name.toLowerCase()}`);
        await v.page.close();
      });
    }
  });

  describe('big plans', () => {
    it('keeps a 5,000-node PostgreSQL plan usable', async () => {
      const { text, deepRelation } = bigPostgresText(5000);
      const plan = load(text, 'generated plan');
      assert.equal(plan.nodes.length, 5000);
      const v = await open('dark');
      const msg: ShowPlanMessage = { type: 'showPlan', title: 'Generated 5,000-node plan', plan, findings: [] };
      const tti = await v.page.evaluate(
        (json) =>
          new Promise<number>((resolve) => {
            const t0 = performance.now();
            window.addEventListener('message', () => requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t0), 0)), { once: true });
            window.postMessage(JSON.parse(json), '*');
          }),
        JSON.stringify(toWire(msg)),
      );
      const drawn = await cardCount(v);
      assert.ok(drawn > 20 && drawn <= 400, `drew ${drawn} cards of 5,000`);
      await screenshot(v, 'big-5000-initial-dark');
      // Search reveals a node 120 levels down and focuses it.
      const target = plan.nodes.find((n) => n.details.relationName === deepRelation)!;
      const searchMs = await v.page.evaluate(async (rel) => {
        const input = document.querySelector<HTMLInputElement>('.search input')!;
        const t0 = performance.now();
        input.value = rel;
        input.dispatchEvent(new Event('input'));
        input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now() - t0;
      }, deepRelation);
      assert.equal(await v.page.locator(`svg.tree g.card[data-id="${target.id}"].active`).count(), 1);
      assert.ok(await cardOnScreen(v, target.id));
      const afterSearch = await cardCount(v);
      assert.ok(afterSearch <= drawn + 400, `revealing one path drew ${afterSearch - drawn} more cards`);
      // Expanding a collapsed node adds a bounded number of cards.
      const collapsedId = Number(await v.page.locator('svg.tree g.card.collapsed').first().getAttribute('data-id'));
      const toggleMs = await v.page.evaluate(async (id) => {
        const t0 = performance.now();
        document.querySelector(`svg.tree g.card[data-id="${id}"] .toggle rect`)!.dispatchEvent(new MouseEvent('click', { bubbles: true }));
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now() - t0;
      }, collapsedId);
      assert.ok((await cardCount(v)) > afterSearch);
      await v.page.locator(`svg.tree g.card[data-id="${collapsedId}"]`).focus();
      const keyMs = await v.page.evaluate(async () => {
        const t0 = performance.now();
        document.activeElement!.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now() - t0;
      });
      console.log(`      5,000 nodes: interactive after ${tti.toFixed(0)} ms with ${drawn} cards; search+reveal ${searchMs.toFixed(0)} ms; expand ${toggleMs.toFixed(0)} ms; arrow key ${keyMs.toFixed(0)} ms`);
      await v.page.locator('.search input').fill('');
      await v.page.locator('button', { hasText: 'Reset' }).click();
      await screenshot(v, 'big-5000-dark');
      assert.deepEqual(await pageViolations(v), []);
      assert.deepEqual(v.errors, []);
      await v.page.close();
    });

    it('lists thousands of findings a page at a time, each page linked to its nodes', async () => {
      const plan = load(bigPostgresText(3000).text, 'generated plan');
      const findings = analyze(plan);
      assert.ok(findings.length > 2 * FINDINGS_PAGE, `the plan has only ${findings.length} findings`);
      const v = await open();
      await v.send({ type: 'showPlan', title: 'Generated 3,000-node plan', plan, findings });
      const items = v.page.locator('.findings li.finding');
      const more = v.page.locator('button.more-findings');
      assert.equal(await items.count(), FINDINGS_PAGE);
      assert.equal(await more.textContent(), `Show ${FINDINGS_PAGE} more of ${(findings.length - FINDINGS_PAGE).toLocaleString('en-US')} findings`);
      assert.equal(await v.page.locator('button.tab[data-tab="findings"]').textContent(), `Findings ${findings.length}`);
      await more.click();
      assert.equal(await items.count(), 2 * FINDINGS_PAGE);
      // Every finding can be listed: the button goes once the last page is shown.
      while ((await more.count()) > 0) await more.click();
      assert.equal(await items.count(), findings.length);
      const last = items.last();
      const id = Number(await last.getAttribute('data-node-id'));
      await last.click();
      assert.equal(await activeCardId(v), id);
      assert.deepEqual(v.errors, []);
      await v.page.close();
    });

    it('draws the largest corpus plan in light and dark themes', async () => {
      for (const theme of ['light', 'dark'] as const) {
        const v = await open(theme);
        const msg = corpusMessage(PG_BIG_REAL);
        await v.send(msg);
        assert.ok((await cardCount(v)) > 0);
        await screenshot(v, `pg-large-${theme}`);
        await v.page.locator('button', { hasText: 'Fit' }).click();
        await screenshot(v, `pg-large-fit-${theme}`);
        assert.deepEqual(await pageViolations(v), []);
        await v.page.close();
      }
    });

    it('draws the missing-index plan in light and dark themes', async () => {
      const backgrounds: string[] = [];
      for (const theme of ['light', 'dark'] as const) {
        const v = await open(theme);
        await v.send(corpusMessage(PG_MISSING_INDEX));
        assert.ok((await cardCount(v)) > 0, `no card drawn in the ${theme} theme`);
        backgrounds.push(await v.page.evaluate(() => getComputedStyle(document.body).backgroundColor));
        await screenshot(v, `pg-missing-index-${theme}`);
        await v.page.close();
      }
      assert.notEqual(backgrounds[0], backgrounds[1], 'the theme colours reach the page');
    });
  });
});

// Its own browser context: the page's clock is the context's, and this test stops it.
describe('plan view in Chromium, with the page\'s clock in the test\'s hands', function () {
  this.timeout(180_000);
  const open = suiteHarness();

  describe('an export waiting for raw fields that do not come', () => {
    it('gives up a JSON export whose raw fields do not come, says so, saves nothing, and exports once they come', async () => {
      const v = await open('light');
      const msg = corpusMessage(MONGO_SHARDED);
      await v.send({ ...msg, plan: wirePlanWithoutRaw(msg.plan), nodeRawLater: true });
      // The page's time stands still from here, moved on only by the test (no frame is drawn meanwhile).
      await v.page.clock.install();
      await v.page.clock.pauseAt(Date.now() + 1000);
      const saves = async () => (await v.outbox()).filter((m) => m.type === 'saveFile').length;
      const noticeText = async () => ((await v.page.locator('.notice').isVisible()) ? await v.page.locator('.notice-text').textContent() : '');
      await v.page.locator('.export summary').click();
      await v.page.locator('.export button', { hasText: 'JSON' }).click();
      await until('the waiting line', async () => (await noticeText())?.includes('waits for the plan\'s raw fields') === true);
      await v.page.clock.runFor(9_000);
      assert.equal(await saves(), 0, 'saved before the raw fields came');
      assert.match((await noticeText()) ?? '', /waits for/, 'the waiting line went before the bound');
      await v.page.clock.runFor(1_500);
      await until('the sentence', async () => (await noticeText())?.includes('was not saved') === true);
      assert.match((await noticeText())!, /did not come from the extension within 10 s\. Nothing was written/);
      assert.equal(await saves(), 0, 'a JSON without the raw fields was saved');
      assert.ok((await v.outbox()).some((m) => m.type === 'reportError' && /raw fields did not come/.test(m.message)), 'the log was not told');
      // The fields come late: nothing is saved by the export given up, and the next one is whole.
      await v.page.clock.resume();
      await v.send(nodeRawOf(msg.plan));
      await painted(v.page);
      assert.equal(await saves(), 0, 'the given-up export was saved after all');
      await v.page.locator('.export summary').click();
      await v.page.locator('.export button', { hasText: 'JSON' }).click();
      await until('the export', async () => (await saves()) === 1);
      const doc = JSON.parse((await lastSave(v)).content) as { plan: Plan };
      assert.ok(all(doc.plan).every((n) => Object.keys(n.raw).length > 0), 'a node went out without its raw fields');
      await v.page.close();
    });
  });
});
