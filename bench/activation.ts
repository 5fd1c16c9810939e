// Activation of the packed extension in a real VS Code host: the .vsix that `node scripts/host.mjs
// package` builds is installed into code-server, a workspace holding *.mongodb.js files is opened in
// Chromium (which activates the extension), and the extension's own log line "activated in N ms" (from
// the start of activate() to its return) is read from the host's log folder. Each run is a fresh
// code-server. A benchmark prints figures; it asserts nothing. Run: npm run bench:activation [-- --runs N]

import { readdirSync, readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
// host.mjs ends in a top-level await, so it is imported dynamically (as scripts/demo.ts does).
type Hosting = typeof import('../scripts/host.mjs');

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3;
const TARGET_MS = 100;
const LINE = /activated in ([\d.]+) ms/;

/** The extension's log files under the host's folder (VS Code writes each output channel to one). */
function logFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'Query Plan Inspector.log') found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

async function poll<T>(read: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = read();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function once(hosting: Hosting, vsix: string): Promise<number> {
  const host = await hosting.startHost({ vsix });
  const udd = mkdtempSync(join(tmpdir(), 'qpi-activation-'));
  const ctx = await chromium.launchPersistentContext(udd, { executablePath: process.env.QPI_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: hosting.CHROMIUM_ARGS });
  try {
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.goto(`${host.url}/?folder=${encodeURIComponent(host.ws)}`);
    return await poll(() => {
      for (const f of logFiles(host.run)) {
        const m = LINE.exec(readFileSync(f, 'utf8'));
        if (m) return Number(m[1]);
      }
      return undefined;
    }, 120_000, 'the extension to log its activation');
  } finally {
    await ctx.close();
    rmSync(udd, { recursive: true, force: true });
    await host.stop();
  }
}

async function main(): Promise<void> {
  const hosting = (await import('../scripts/host.mjs')) as Hosting;
  const vsix = hosting.packageVsix();
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const ms = await once(hosting, vsix);
    samples.push(ms);
    console.log(`run ${i + 1}: activate() ${ms.toFixed(1)} ms`);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(`activation (activate() start to return, packed .vsix in code-server), median of ${RUNS}: ${median.toFixed(1)} ms (target <= ${TARGET_MS} ms)`);
}

void main();
