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

  /** Probe files: where, what, and whether the lint must report it. */
  const probes: { file: string; code: string; reportedByLint: boolean }[] = [
    { file: 'test/browser/probe.test.ts', code: "import type { Page } from 'playwright-core';\nexport const pause = (page: Page) => page.waitForTimeout(300);", reportedByLint: true },
    { file: 'bench/probe.ts', code: "import type { Page } from 'playwright-core';\nexport const pause = (page: Page) => page.waitForTimeout(300);", reportedByLint: true },
    { file: 'test/browser/probe.test.ts', code: "import { setTimeout as sleep } from 'node:timers/promises';\nexport const pause = () => sleep(300);", reportedByLint: true },
    { file: 'test/unit/probe.test.ts', code: "import { setTimeout } from 'timers/promises';\nexport const pause = () => setTimeout(300);", reportedByLint: true },
    { file: 'test/browser/probe.test.ts', code: "import type { Page } from 'playwright-core';\nexport const ready = (page: Page) => page.waitForFunction(() => document.title !== '');", reportedByLint: false },
    { file: 'test/browser/probe.test.ts', code: "import type { Locator } from 'playwright-core';\nexport const shown = (card: Locator) => card.waitFor();", reportedByLint: false },
  ];

  it('reports waitForTimeout and a timers/promises sleep, and allows waits on the page', async () => {
    const seen = await Promise.all(probes.map(async (p) => ({ ...p, reportedByLint: (await reported(p.file, p.code)).length > 0 })));
    assert.deepEqual(seen, probes);
  });
});
