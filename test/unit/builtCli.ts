// The `qpi` binary the unit tests run as a child process, bundled from the sources the tests are run on:
// the tests need no `npm run build` first (a fresh clone passes) and never run a dist/ left by an older
// build. One bundle per test process, in a folder of its own beside the SQL parser's WASM, as in dist/.

import { buildSync } from 'esbuild';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const root = join(__dirname, '..', '..');
let built: string | undefined;

/** The path of the bundled `qpi` entry point, built on the first call. */
export function builtCli(): string {
  if (built !== undefined) return built;
  const dir = mkdtempSync(join(tmpdir(), 'qpi-unit-cli-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const outfile = join(dir, 'cli.js');
  buildSync({
    entryPoints: [join(root, 'src', 'cli', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['vscode'],
    logLevel: 'error',
  });
  // libpg-query's loader looks for its WASM beside the script that runs it.
  const wasm = join(dirname(createRequire(join(root, 'package.json')).resolve('libpg-query')), 'libpg-query.wasm');
  copyFileSync(wasm, join(dir, 'libpg-query.wasm'));
  built = outfile;
  return built;
}
