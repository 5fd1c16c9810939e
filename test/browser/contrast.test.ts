// Contrast of every piece of text in the plan view, under the colour variables VS Code's default themes
// really give a webview (test/browser/themes.json, read from a running workbench by
// scripts/theme-variables.mjs): each text's colour against the background it is drawn on (the nearest
// painted ancestor for HTML, the card behind it for SVG) must reach 4.5:1, the WCAG AA level for text.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyze } from '../../src/core/index';
import type { ThemeKind } from '../../src/protocol/webview';
import { RESULTS, ROOT, suiteHarness, type ViewPage } from './harness';
import { corpusMessage } from './plans';

const THEMES = JSON.parse(readFileSync(join(ROOT, 'test', 'browser', 'themes.json'), 'utf8')) as { themes: Record<ThemeKind, { theme: string; variables: Record<string, string> }> };
const MIN = 4.5;

/** Sets the theme's variables on the page the way VS Code does: on the root element's style. */
async function applyVariables(v: ViewPage, kind: ThemeKind): Promise<void> {
  await v.page.evaluate((vars) => {
    for (const [k, val] of Object.entries(vars)) document.documentElement.style.setProperty(k, val);
  }, THEMES.themes[kind].variables);
  await v.send({ type: 'setTheme', kind });
}

interface Low { text: string; ratio: number; fg: string; bg: string; where: string }

/** Every visible text in the page whose contrast is below the minimum. */
async function lowContrast(v: ViewPage, min: number): Promise<Low[]> {
  // The test runs through tsx, whose compiled functions call a `__name` helper to keep their names;
  // the page has none, so it gets an identity one.
  await v.page.evaluate('globalThis.__name = (f) => f');
  return v.page.evaluate((minimum) => {
    const probe = document.createElement('canvas').getContext('2d', { willReadFrequently: true })!;
    /** Any CSS colour (rgb(), color(srgb ...), color-mix results) as [r, g, b, a] in 0..255 / 0..1. */
    const rgba = (css: string): [number, number, number, number] => {
      probe.clearRect(0, 0, 1, 1);
      probe.fillStyle = '#000';
      probe.fillStyle = css;
      probe.fillRect(0, 0, 1, 1);
      const d = probe.getImageData(0, 0, 1, 1).data;
      return [d[0]!, d[1]!, d[2]!, d[3]! / 255];
    };
    const over = (top: [number, number, number, number], under: [number, number, number, number]): [number, number, number, number] => {
      const a = top[3] + under[3] * (1 - top[3]);
      if (a === 0) return [0, 0, 0, 0];
      const mix = (i: number): number => (top[i]! * top[3] + under[i]! * under[3] * (1 - top[3])) / a;
      return [mix(0), mix(1), mix(2), a];
    };
    const lum = (c: [number, number, number, number]): number => {
      const ch = (x: number): number => {
        const s = x / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2]);
    };
    /** The colour behind an HTML element: its painted ancestors composited from the page down. */
    const htmlBackground = (el: Element): [number, number, number, number] => {
      const layers: [number, number, number, number][] = [];
      for (let e: Element | null = el; e; e = e.parentElement) {
        const c = rgba(getComputedStyle(e).backgroundColor);
        if (c[3] > 0) layers.push(c);
        if (c[3] >= 1) break;
      }
      let bg: [number, number, number, number] = [255, 255, 255, 1];
      for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i]!, bg);
      return bg;
    };
    const out: { text: string; ratio: number; fg: string; bg: string; where: string }[] = [];
    const all = document.querySelectorAll('body *');
    for (const el of Array.from(all)) {
      const own = Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? '').trim() !== '');
      if (!own) continue;
      if (el.closest('[hidden], .export-stage, title, option')) continue;
      const st = getComputedStyle(el);
      if (st.visibility === 'hidden' || st.display === 'none' || Number(st.opacity) === 0) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      let fg: [number, number, number, number];
      let bg: [number, number, number, number];
      if (el instanceof SVGElement) {
        fg = rgba(st.fill);
        const card = el.closest('g.card');
        const base = htmlBackground(el.closest('svg')!.parentElement!);
        bg = card ? over(rgba(getComputedStyle(card.querySelector('.card-bg')!).fill), base) : base;
        // A badge's number sits on the badge's circle.
        const dot = el.parentElement?.querySelector(':scope > circle');
        if (dot) bg = over(rgba(getComputedStyle(dot).fill), bg);
        // Text on the waste band sits on the band, not on the card.
        const band = card?.querySelector('.waste-bg');
        if (band && (el.classList.contains('waste-text') || el.classList.contains('waste-ratio'))) bg = over(rgba(getComputedStyle(band).fill), bg);
      } else {
        bg = htmlBackground(el);
        fg = over(rgba(st.color), bg);
      }
      fg = over(fg, bg);
      const [l1, l2] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      const ratio = (l1! + 0.05) / (l2! + 0.05);
      if (ratio < minimum) {
        const path = [el.tagName.toLowerCase(), ...Array.from(el.classList)].join('.');
        out.push({ text: (el.textContent ?? '').trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100, fg: `rgb(${fg.slice(0, 3).map(Math.round).join(',')})`, bg: `rgb(${bg.slice(0, 3).map(Math.round).join(',')})`, where: path });
      }
    }
    return out;
  }, min);
}

describe('text contrast in the default themes (Chromium)', function () {
  this.timeout(180_000);
  const open = suiteHarness();

  for (const kind of Object.keys(THEMES.themes) as ThemeKind[]) {
    it(`every text reaches ${MIN}:1 in ${THEMES.themes[kind].theme}: cards, findings, a verified suggestion, node figures, plan facts and a comparison`, async () => {
      const v = await open(kind, { width: 1400, height: 900 });
      try {
        await applyVariables(v, kind);
        const msg = corpusMessage('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json', {
          suggestions: [{
            id: 's1', title: 'CREATE INDEX ON question (exam_id)', ddl: 'CREATE INDEX ON question (exam_id);', rule: 'filter', verifiable: true,
            status: 'verified', statusDetail: 'Verified with a hypothetical index: estimated cost 1,200 → 14.',
            verdict: { method: 'hypopg', how: 'a hypothetical index (HypoPG)', unit: 'estimated cost', beforeLabel: 'today', afterLabel: 'with the index', before: 1200, after: 14, planBefore: 'Seq Scan', planAfter: 'Index Scan', usedByPlanner: true },
            expectedPlan: 'Index Scan on question', tradeOff: 'Writes to question maintain one more index.', conditions: ['Pays while few rows match exam_id.'],
          }],
        });
        await v.send(msg);
        const failures: Low[] = [];
        const check = async (what: string): Promise<void> => {
          for (const f of await lowContrast(v, MIN)) failures.push({ ...f, where: `${what}: ${f.where}` });
        };
        await v.page.locator('button.tab[data-tab="findings"]').click();
        await check('findings');
        await v.page.screenshot({ path: join(RESULTS, `contrast-${kind}-findings.png`) });
        await v.page.locator('button.tab[data-tab="node"]').click();
        await check('node');
        await v.page.locator('button.tab[data-tab="plan"]').click();
        await check('plan');
        // A heat metric that lights the cards, so text on the hottest card is checked too.
        await v.page.selectOption('.heat select', 'exclusiveTime');
        await check('heat');
        const mongo = corpusMessage('mongosh-update-explain-update-collscan-6.0.js');
        const after = corpusMessage('mongosh-update-explain-update-fetch-ixscan-6.0.js');
        await v.send({ type: 'showComparison', title: 'compare', before: { label: 'before', plan: mongo.plan, findings: analyze(mongo.plan) }, after: { label: 'after', plan: after.plan, findings: analyze(after.plan) } });
        await v.page.locator('button.tab[data-tab="findings"]').click();
        await check('comparison');
        await v.page.locator('button.tab[data-tab="plan"]').click();
        await check('comparison plan');
        await v.page.screenshot({ path: join(RESULTS, `contrast-${kind}-compare.png`) });
        const seen = new Set<string>();
        const unique = failures.filter((f) => {
          const k = `${f.where}|${f.fg}|${f.bg}`;
          if (seen.has(k)) return false;
          seen.add(k);
          return true;
        });
        assert.deepEqual(unique, [], `text under ${MIN}:1 in ${THEMES.themes[kind].theme}:\n${unique.map((f) => `  ${f.ratio}:1 ${f.where} "${f.text}" ${f.fg} on ${f.bg}`).join('\n')}`);
      } finally {
        await v.page.close();
      }
    });
  }
});
