// Index suggestions in the plan view, in real Chromium under the extension's Content Security Policy:
// the real advisor's suggestions flattened by the extension (src/extension/adviceView.ts) show their rule,
// expected plan, trade-off, conditions and rewrites; Verify asks the host; the verdict arrives as figures
// before and after, laid out inside the side panel; markup in any of the new fields stays text.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LiveAdvice } from '../../src/adapters/advise';
import { mongoNumbers, type MeasuredVerdict as LiveVerification } from '../../src/adapters/adviceService';
import { fromMongoCommand } from '../../src/core/advice/fromMongoCommand';
import { adviseMongo } from '../../src/core/advice/mongoAdvisor';
import { advisePostgres } from '../../src/core/advice/pgAdvisor';
import { applyTournament } from '../../src/core/advice/tournament';
import type { Advice } from '../../src/core/advice/types';
import { analyze } from '../../src/core/index';
import type { Plan } from '../../src/core/model';
import { parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import { statusOf, suggestionViews } from '../../src/extension/adviceView';
import type { ShowPlanMessage, SuggestionView } from '../../src/protocol/webview';
import { pageViolations, RESULTS, ROOT, suiteHarness, type ViewPage } from './harness';
import { corpusMessage, HOSTILE, load } from './plans';

const TRUTH = join(ROOT, 'test', 'fixtures', 'truth-plans', 'm02b_esr_sort_range64');
const DEMOESR = 'db.demoesr.find({ e: 42, r: { $gt: 10 } }).sort({ s: 1 })';

function truthPlan(file: string): Plan {
  const raw = JSON.parse(readFileSync(join(TRUTH, file), 'utf8')) as Record<string, unknown>;
  return load(JSON.stringify(raw['hinted_explain']), file);
}

function liveOf(advice: Advice, total: number): LiveAdvice {
  return { advice, engine: advice.engine, serverVersion: '7.0.14', existingIndexes: ['_id_'], stats: { total }, statsMethod: 'exact', verification: { method: 'none' } };
}

function demoesrAdvice(): { live: LiveAdvice; command: MongoCommand } {
  const parsed = parseMongoQuery(DEMOESR);
  if (!parsed.ok) throw new Error(parsed.error);
  const input = fromMongoCommand(parsed.command);
  if (!input.ok) throw new Error(input.refusal);
  return { live: liveOf(adviseMongo(input.query, { existing: [{ name: '_id_', key: { _id: 1 } }] }), 50_000), command: parsed.command };
}

/** The side panel's list shows without horizontal scrolling. */
async function overflowsSideways(v: ViewPage): Promise<boolean> {
  return v.page.locator('.findings-panel').evaluate((e) => e.scrollWidth > e.clientWidth + 1);
}

describe('index suggestions in the plan view (Chromium)', function () {
  this.timeout(180_000);
  const open = suiteHarness();

  it('shows each suggestion with its rule, expected plan, trade-off and condition, and the verdict of a trial as figures', async () => {
    const v = await open('dark', { width: 1200, height: 860 });
    try {
      const { live, command } = demoesrAdvice();
      const views = suggestionViews({ engine: 'mongodb', live, command });
      assert.deepEqual(views.map((x) => x.rule), ['esr', 'ers']);
      const today = truthPlan('loser2_bestWithBlockingSort__e_1_r_1.json');
      const msg: ShowPlanMessage = { type: 'showPlan', title: 'demoesr.find', plan: today, findings: analyze(today), suggestions: views };
      await v.send(msg);
      await v.page.locator('button.tab[data-tab="findings"]').click();

      const esr = v.page.locator('li.suggestion[data-rule="esr"]');
      await esr.waitFor();
      assert.equal(await esr.locator('.f-title').textContent(), 'db.demoesr.createIndex({e: 1, s: 1, r: 1})');
      assert.equal(await esr.locator('.rule').textContent(), 'esr');
      const facts = (await esr.locator('table.suggestion-facts').textContent()) ?? '';
      assert.ok(facts.includes(views[0]!.expectedPlan!), `expected plan missing: ${facts}`);
      assert.ok(facts.includes(views[0]!.tradeOff!), `trade-off missing: ${facts}`);
      assert.equal(await esr.locator('ul.conditions li').count(), views[0]!.conditions!.length);
      assert.ok(views[0]!.conditions!.length > 0);

      await esr.locator('button', { hasText: 'Verify' }).click();
      const out = await v.outbox();
      assert.ok(out.some((m) => m.type === 'verifySuggestion' && m.id === views[0]!.id));
      assert.equal(await esr.locator('button', { hasText: 'Verifying…' }).isDisabled(), true);

      // The host's answer, built the way the extension builds it, from the figures of real plans.
      const s = live.advice.suggestions[0]!;
      const before = mongoNumbers(today);
      const after = mongoNumbers(truthPlan('oracle__e_1_s_1_r_1.json'));
      const verification: LiveVerification = {
        status: 'verified', method: 'sampled', unit: 'keys + documents examined + documents sorted in memory', before: before.work, after: after.work,
        planBefore: before.plan, planAfter: after.plan, numbersBefore: before, numbersAfter: after, sampleSize: 1000, collectionSize: 50_000, usedByPlanner: true,
        message: `Verified on a random sample of 1,000 of 50,000 documents: ${before.work} today, ${after.work} with the index.`,
      };
      s.verification = verification;
      const st = statusOf(s);
      await v.send({ type: 'suggestionStatus', id: views[0]!.id, status: st.status, detail: st.detail, verdict: st.verdict });

      const status = esr.locator('.status');
      await status.waitFor();
      assert.equal(await status.textContent(), verification.message, 'the status word is not repeated before a detail that starts with it');
      const table = esr.locator('table.verdict-figures');
      const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((c) => c.textContent ?? '')));
      const row = (label: string) => rows.find((r) => r[0] === label);
      const fmt = (n: number) => n.toLocaleString('en-US');
      assert.deepEqual(row('Work'), ['Work', fmt(before.work), fmt(after.work)]);
      assert.deepEqual(row('Keys examined'), ['Keys examined', fmt(before.keysExamined), fmt(after.keysExamined)]);
      assert.deepEqual(row('Sorted in memory'), ['Sorted in memory', fmt(before.sorted), ''], 'the ESR plan sorts nothing in memory');
      assert.deepEqual(row('Plan'), ['Plan', before.plan, after.plan]);
      assert.deepEqual(await table.locator('thead th').allTextContents(), ['', 'today', 'with the index']);
      assert.match((await esr.locator('.verdict-how').textContent()) ?? '', /random sample of 1,000 of 50,000 documents.*The planner chose it without a hint\./);
      assert.equal(await overflowsSideways(v), false, 'the suggestion makes the side panel scroll sideways');
      await esr.scrollIntoViewIfNeeded();
      await v.page.screenshot({ path: join(RESULTS, 'suggestions-verdict.png') });
      assert.deepEqual(await pageViolations(v), []);
      assert.deepEqual(v.errors, []);
    } finally {
      await v.page.close();
    }
  });

  it('a measurement that ranks the suggestions anew replaces the list: the winner first, with its verdict, and actions name it', async () => {
    const v = await open('light', { width: 1200, height: 860 });
    try {
      const { live, command } = demoesrAdvice();
      const ctx = { engine: 'mongodb' as const, live, command };
      const today = truthPlan('loser2_bestWithBlockingSort__e_1_r_1.json');
      await v.send({ type: 'showPlan', title: 'demoesr.find', plan: today, findings: analyze(today), suggestions: suggestionViews(ctx) });
      await v.page.locator('button.tab[data-tab="findings"]').click();
      await v.page.locator('li.suggestion[data-rule="esr"]').waitFor();
      const titles = async () => v.page.locator('li.suggestion .f-title').allTextContents();
      assert.deepEqual(await titles(), ['db.demoesr.createIndex({e: 1, s: 1, r: 1})', 'db.demoesr.createIndex({e: 1, r: 1, s: 1})']);

      // A tournament where the rules' second pick (ERS) does least: the host's list after Verify, built
      // the way the extension builds it.
      const work = (w: number, sorted: number) => ({ work: w, keysExamined: w - sorted, docsExamined: 0, sorted, blockingSort: sorted > 0, rows: 20, plan: 'IXSCAN' });
      const [esr, ers] = live.advice.suggestions;
      applyTournament(live.advice, {
        engine: 'mongodb', unit: 'work', sample: { size: 1000, total: 50_000, scaled: true }, label: 'measured from a sample of 1,000 of 50,000 documents', generated: 3,
        entries: [
          { label: 'ESR', origin: 'rule', index: esr!.index!, createText: esr!.createText!, ruleRank: 1, rule: 'esr', measured: work(900, 0) },
          { label: 'ERS', origin: 'rule', index: ers!.index!, createText: ers!.createText!, ruleRank: 2, rule: 'ers', measured: work(60, 40) },
          { label: 'collection scan', origin: 'scan', measured: work(1000, 40) },
        ],
        today: work(1000, 40),
      });
      const views = suggestionViews(ctx);
      await v.send({ type: 'setSuggestions', suggestions: views });
      await v.page.waitForFunction(() => document.querySelector('li.suggestion .f-title')?.textContent === 'db.demoesr.createIndex({e: 1, r: 1, s: 1})');
      assert.deepEqual(await titles(), views.map((x) => x.title));
      const first = v.page.locator('li.suggestion').first();
      assert.match((await first.locator('.status').textContent()) ?? '', /least work of 3 candidates/);
      await first.locator('button', { hasText: 'Create index' }).click();
      const out = await v.outbox();
      assert.ok(out.some((m) => m.type === 'createIndex' && m.id === views[0]!.id), JSON.stringify(out));
      assert.deepEqual(await pageViolations(v), []);
      assert.deepEqual(v.errors, []);
    } finally {
      await v.page.close();
    }
  });

  it('a PostgreSQL OFFSET suggestion carries its keyset rewrite with its own Copy, and no Verify', async () => {
    const v = await open('light', { width: 1200, height: 860 });
    try {
      const advice = await advisePostgres('SELECT id, created_at FROM orders ORDER BY created_at DESC, id DESC OFFSET 10000 LIMIT 20');
      const views = suggestionViews({ engine: 'postgres', live: liveOf(advice, 20_000) });
      const msg = corpusMessage('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json', { suggestions: views });
      await v.send(msg);
      await v.page.locator('button.tab[data-tab="findings"]').click();
      const item = v.page.locator('li.suggestion').first();
      await item.waitFor();
      assert.equal(await item.locator('button', { hasText: /^Verify$/ }).count(), 0);
      const rewrite = item.locator('.rewrite[data-rule="keyset"]');
      assert.equal(await rewrite.locator('pre.ddl').textContent(), views[0]!.rewrites![0]!.text);
      await rewrite.locator('button', { hasText: 'Copy rewrite' }).click();
      const out = await v.outbox();
      assert.ok(out.some((m) => m.type === 'copyText' && m.text === views[0]!.rewrites![0]!.text));
      assert.equal(await overflowsSideways(v), false);
      await v.page.screenshot({ path: join(RESULTS, 'suggestions-rewrite.png') });
    } finally {
      await v.page.close();
    }
  });

  it('keeps markup in conditions, rewrites and verdicts inert', async () => {
    const v = await open('light');
    try {
      const today = truthPlan('loser2_bestWithBlockingSort__e_1_r_1.json');
      const hostile: SuggestionView = {
        id: 's1', title: 'x', rule: HOSTILE[0]!, expectedPlan: HOSTILE[1]!, tradeOff: HOSTILE[2]!, conditions: [HOSTILE[3]!], keep: HOSTILE[4]!, replaces: [HOSTILE[5]!],
        rewrites: [{ rule: HOSTILE[0]!, description: HOSTILE[1]!, text: HOSTILE[2]!, caveat: HOSTILE[3]! }],
        status: 'verified', statusDetail: HOSTILE[4]!,
        verdict: { method: 'sampled', how: HOSTILE[5]!, beforeLabel: HOSTILE[0]!, afterLabel: HOSTILE[1]!, planBefore: HOSTILE[2]!, planAfter: HOSTILE[3]!, before: 1, after: 2, figuresBefore: { [HOSTILE[4]!]: 3 } },
      };
      const before = await v.page.evaluate(() => ({ scripts: document.scripts.length, styles: document.querySelectorAll('style, link').length }));
      await v.send({ type: 'showPlan', title: 'hostile', plan: today, findings: [], suggestions: [hostile] });
      await v.page.locator('button.tab[data-tab="findings"]').click();
      await v.page.locator('li.suggestion table.verdict-figures').waitFor();
      const dom = await v.page.evaluate(() => ({
        scripts: document.scripts.length,
        styles: document.querySelectorAll('style, link').length,
        injected: document.querySelectorAll('img, iframe, object, embed, svg svg').length,
        handlers: Array.from(document.querySelectorAll('*')).filter((e) => Array.from(e.attributes).some((a) => a.name.startsWith('on'))).length,
        text: document.querySelector('li.suggestion')?.textContent ?? '',
      }));
      assert.equal(dom.scripts, before.scripts);
      assert.equal(dom.styles, before.styles);
      assert.equal(dom.injected, 0);
      assert.equal(dom.handlers, 0);
      for (const s of HOSTILE) assert.ok(dom.text.includes(s), `${s} is not shown as text`);
      assert.deepEqual(v.dialogs, []);
      assert.deepEqual(await pageViolations(v), []);
    } finally {
      await v.page.close();
    }
  });
});
