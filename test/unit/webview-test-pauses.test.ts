// The browser tests of the plan view and the benchmarks that drive it wait on the page, never for a
// fixed time: the test lint (eslint.config.mjs) reports Playwright's waitForTimeout and a sleep from
// timers/promises as it reports setTimeout with a delay. This lints probe files to show the rules bite.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const root = join(__dirname, '..', '..');
const eslint = new ESLint({ cwd: root });
const PAUSE_RULES = new Set(['no-restricted-properties', 'no-restricted-syntax']);

async function reported(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const x = 1;\n`, { filePath: join(root, file) });
  return (result?.messages ?? []).filter((m) => PAUSE_RULES.has(m.ruleId ?? '')).map((m) => m.message);
}

describe('webview tests do not pause', function () {
  this.timeout(60_000);

  const cases: [string, string, boolean][] = [
    ['test/browser/probe.test.ts', "import type { Page } from 'playwright-core';\nexport const pause = (page: Page) => page.waitForTimeout(300);", true],
    ['bench/probe.ts', "import type { Page } from 'playwright-core';\nexport const pause = (page: Page) => page.waitForTimeout(300);", true],
    ['test/browser/probe.test.ts', "import { setTimeout as sleep } from 'node:timers/promises';\nexport const pause = () => sleep(300);", true],
    ['test/unit/probe.test.ts', "import { setTimeout } from 'timers/promises';\nexport const pause = () => setTimeout(300);", true],
    ['test/browser/probe.test.ts', "import type { Page } from 'playwright-core';\nexport const ready = (page: Page) => page.waitForFunction(() => document.title !== '');", false],
    ['test/browser/probe.test.ts', "import type { Locator } from 'playwright-core';\nexport const shown = (card: Locator) => card.waitFor();", false],
  ];
  for (const [file, code, broken] of cases) {
    it(`${broken ? 'reports' : 'allows'} \`${code.split('\n').pop()}\` in ${file.replace(/probe(\.test)?\.ts$/, '')}`, async () => {
      const found = await reported(file, code);
      assert.equal(found.length > 0, broken, found.join('; '));
    });
  }
});
