// Reads the --vscode-* colour variables VS Code gives webviews under each default theme, from a real
// workbench (the code-server the host tests use), and writes them to test/browser/themes.json, where
// the browser tests set them on the plan view to check contrast as users see it. Run again after a
// code-server upgrade: node scripts/theme-variables.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CODE_SERVER_VERSION, startHost } from './host.mjs';

const ROOT = join(import.meta.dirname, '..');
const THEMES = {
  light: 'Light Modern',
  dark: 'Dark Modern',
  'high-contrast': 'Default High Contrast',
  'high-contrast-light': 'Default High Contrast Light',
};
// Every variable the stylesheet reads, and the font ones the page falls back on.
const used = [...new Set(readFileSync(join(ROOT, 'webview', 'style.css'), 'utf8').match(/--vscode-[\w.-]+/g))].sort();

const host = await startHost();
const browser = await chromium.launch({ executablePath: process.env.QPI_CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS });
const out = { codeServer: CODE_SERVER_VERSION, themes: {} };
try {
  const page = await browser.newPage();
  await page.goto(`${host.url}/?folder=${encodeURIComponent(host.ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 120_000 });
  const settingsFile = join(host.run, 'ud', 'User', 'settings.json');
  const base = JSON.parse(readFileSync(settingsFile, 'utf8'));
  for (const [kind, theme] of Object.entries(THEMES)) {
    writeFileSync(settingsFile, JSON.stringify({ ...base, 'workbench.colorTheme': theme }, null, 2));
    const wanted = kind === 'light' ? 'vs' : kind === 'dark' ? 'vs-dark' : kind === 'high-contrast' ? 'hc-black' : 'hc-light';
    // The workbench re-reads settings on change and marks its element with the theme's base class.
    await page.waitForFunction((cls) => document.querySelector('.monaco-workbench')?.classList.contains(cls), wanted, { timeout: 60_000 });
    await page.waitForFunction((name) => document.body.innerText !== undefined && getComputedStyle(document.querySelector('.monaco-workbench')).getPropertyValue('--vscode-editor-background') !== '' && document.querySelector('.monaco-workbench').dataset.theme !== name, theme);
    const vars = await page.evaluate((names) => {
      const st = getComputedStyle(document.querySelector('.monaco-workbench'));
      return Object.fromEntries(names.map((n) => [n, st.getPropertyValue(n).trim()]).filter(([, v]) => v !== ''));
    }, used);
    out.themes[kind] = { theme, variables: vars };
    console.log(`${theme}: ${Object.keys(vars).length} of ${used.length} variables`);
  }
} finally {
  await browser.close();
  await host.stop();
}
writeFileSync(join(ROOT, 'test', 'browser', 'themes.json'), `${JSON.stringify(out, null, 2)}\n`);
