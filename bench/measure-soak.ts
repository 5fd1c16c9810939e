// Measurement safety soak: `qpi advise` measured on real servers, again and again, with statements whose
// side effects the measurement must not run, harmless statements it must measure, and runs killed at
// random moments. After each run it looks at everything a measurement could leave or change: sequence
// positions, the rows of a second table, files written by the server, temporary tables, prepared
// transactions and sessions still open on PostgreSQL, indexes on the user's tables, MongoDB scratch
// collections left and user collections dropped, operations still running. It asserts nothing; the
// figures are the result (docs/measure-safety.md).
//
// Run: npm run build && npm run bench:measure-soak [-- --runs 200 --seed N --only I --kind TEXT --deadline-wait S]
// Every run's kind, statement, signal and kill delay are drawn from the seed before the first run, so
// `--seed S --runs N --only I` replays run I of a soak alone (after the same setup).

import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import pg from 'pg';
import { startServers, stopServers, type ServersState } from '../scripts/servers.mjs';
import { rng } from './generate';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const SEED = Number(arg('seed', '20261201'));
const RUNS = Number(arg('runs', '200'));
const ONLY = process.argv.includes('--only') ? Number(arg('only', '0')) : undefined;
/** Only the runs whose kind contains this text (the others are drawn all the same, so run numbers stay). */
const KIND = process.argv.includes('--kind') ? arg('kind', '') : undefined;
/** Longest the soak waits at its end for the sweep deadline of scratch collections a killed run left. */
const DEADLINE_WAIT_S = Number(arg('deadline-wait', '1200'));
/**
 * A kill lands uniformly between 0 and 1.2 times the time one whole run of the same statement took when
 * the soak began (its calibration run), so most signals land inside the run, in any of its phases.
 */
const KILL_SPAN = 1.2;
const calibrated = new Map<string, number>();
const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'cli.js');
const DB = 'qpi_soak';
/** A process still running after this is killed and its run recorded as hung. */
const HUNG_MS = 180_000;
/** How long a session or an operation of a finished run may take to go away before it counts as left. */
const GONE_MS = 30_000;
/** A scratch collection without a readable marker is taken to be swept this long after the time in its name. */
const SWEEP_AFTER_MS = 3_600_000;
const SCRATCH_PREFIX = 'qpi_trial_';
/** A user's collection whose name looks like a scratch collection of a week ago: it must survive. */
const DECOY = `${SCRATCH_PREFIX}orders_${(Date.now() - 7 * 86_400_000).toString(36)}_abcdef`;
const OBSERVER = 'qpi-soak-observer';
const USER_COLLECTIONS = ['orders', DECOY];

// ---- what runs -----------------------------------------------------------------------------------------

interface Statement {
  kind: string;
  engine: 'postgres' | 'mongodb';
  text: string;
  /** It has a side effect the measurement must not run. */
  trap: boolean;
  needs?: 'dblink';
}

const PG_STATEMENTS: Statement[] = [
  { kind: 'pg nextval() in select list', engine: 'postgres', trap: true, text: "SELECT nextval('soak_ids') AS n, id FROM orders WHERE customer = 17 ORDER BY total DESC LIMIT 10" },
  { kind: 'pg nextval() in a CTE', engine: 'postgres', trap: true, text: "WITH n AS (SELECT nextval('soak_ids') AS v) SELECT o.id, n.v FROM orders o, n WHERE o.customer = 23 AND o.status = 'pending'" },
  { kind: 'pg volatile plpgsql in WHERE', engine: 'postgres', trap: true, text: "SELECT id, total FROM orders WHERE customer = 17 AND status = 'paid' AND bump(id)" },
  { kind: 'pg volatile plpgsql via a view', engine: 'postgres', trap: true, text: 'SELECT id FROM bumped WHERE customer = 31 ORDER BY created' },
  { kind: 'pg STABLE-declared fn advancing a sequence', engine: 'postgres', trap: true, text: 'SELECT id FROM orders WHERE customer = 41 AND sly(id) ORDER BY total' },
  { kind: 'pg COPY TO file in a function', engine: 'postgres', trap: true, text: "SELECT id, status FROM orders WHERE customer = 17 AND write_file(id)" },
  { kind: 'pg dblink insert in a function', engine: 'postgres', trap: true, needs: 'dblink', text: 'SELECT id FROM orders WHERE customer = 42 AND remote_note(id) ORDER BY created DESC' },
  // Reached where the catalog check does not look (a domain's CHECK, a cast's function, dynamic SQL), and
  // not stopped by a READ ONLY transaction (a file written by COPY TO, a row written through dblink).
  { kind: 'pg file written by a domain CHECK', engine: 'postgres', trap: true, text: 'SELECT id FROM orders WHERE customer = 17 AND id::soak_dom > 0' },
  { kind: 'pg file written by a cast function', engine: 'postgres', trap: true, text: 'SELECT id FROM orders WHERE customer = 17 AND (id::soak_t).v > 0' },
  { kind: 'pg file written by dynamic SQL', engine: 'postgres', trap: true, text: "SELECT id FROM orders WHERE customer = 17 AND query_to_xml('SELECT write_file(' || id || ')', false, false, '') IS NOT NULL" },
  { kind: 'pg dblink insert by a domain CHECK', engine: 'postgres', trap: true, needs: 'dblink', text: 'SELECT id FROM orders WHERE customer = 42 AND id::soak_remote > 0' },
  { kind: 'pg UPDATE of a table with a trigger', engine: 'postgres', trap: true, text: 'UPDATE accounts SET balance = balance + 1 WHERE owner = 17' },
  { kind: 'pg DELETE of a table with a trigger', engine: 'postgres', trap: true, text: 'DELETE FROM accounts WHERE owner = 19 AND balance > 100' },
];
const PG_HARMLESS: Statement[] = [
  { kind: 'pg harmless SELECT', engine: 'postgres', trap: false, text: "SELECT id, total FROM orders WHERE customer = 17 AND status = 'pending' ORDER BY total DESC LIMIT 10" },
  { kind: 'pg harmless SELECT', engine: 'postgres', trap: false, text: "SELECT count(*) FROM orders WHERE region = 7 AND created > now() - interval '30 days'" },
  { kind: 'pg harmless SELECT', engine: 'postgres', trap: false, text: 'SELECT o.id, a.balance FROM orders o JOIN accounts a ON a.owner = o.customer WHERE o.customer = 77 AND o.total > 500' },
];
const MONGO_QUERIES: Statement[] = [
  { kind: 'mongo --verify', engine: 'mongodb', trap: false, text: 'db.orders.find({ customer: 17, status: "pending" }).sort({ total: -1 })' },
  { kind: 'mongo --verify', engine: 'mongodb', trap: false, text: 'db.orders.find({ status: { $in: ["pending", "paid"] }, total: { $gt: 900 } })' },
  { kind: 'mongo --verify', engine: 'mongodb', trap: false, text: 'db.orders.find({ region: 3 }).sort({ created: 1 }).limit(20)' },
  { kind: 'mongo --verify', engine: 'mongodb', trap: false, text: 'db.orders.aggregate([{ $project: { c: "$customer", t: "$total" } }, { $match: { c: 42 } }])' },
];

type Sig = 'SIGKILL' | 'SIGINT';
interface Plan {
  i: number;
  st: Statement;
  kind: string;
  signal?: Sig;
  /** Where in the kill window the signal lands, 0 to 1. */
  at?: number;
  delayMs?: number;
}

function plans(): Plan[] {
  const random = rng(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const out: Plan[] = [];
  for (let i = 1; i <= RUNS; i++) {
    const u = random();
    const sig: Sig = random() < 0.5 ? 'SIGKILL' : 'SIGINT';
    const frac = random();
    if (u < 0.3) out.push({ i, st: pick(PG_STATEMENTS), kind: '' });
    else if (u < 0.42) out.push({ i, st: pick(PG_HARMLESS), kind: '' });
    else if (u < 0.6) {
      const st = random() < 0.5 ? pick(PG_STATEMENTS) : pick(PG_HARMLESS);
      out.push({ i, st, kind: `pg killed ${sig}`, signal: sig, at: frac });
    } else if (u < 0.78) out.push({ i, st: pick(MONGO_QUERIES), kind: '' });
    else out.push({ i, st: pick(MONGO_QUERIES), kind: `mongo killed ${sig}`, signal: sig, at: frac });
    const p = out[out.length - 1]!;
    if (!p.kind) p.kind = p.st.kind;
  }
  return out;
}

// ---- the servers and their data -----------------------------------------------------------------------

interface Env {
  pgUri: string;
  mongoUri: string;
  pg: pg.Client;
  mongo: MongoClient;
  db: Db;
  dir: string;
  dblink: string | null;
  versions: string;
}

async function setupPostgres(adminUri: string, dir: string): Promise<{ pg: pg.Client; uri: string; dblink: string | null; version: string }> {
  const admin = new pg.Client({ connectionString: adminUri, application_name: OBSERVER });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
  const uri = adminUri.replace(/\/postgres$/, `/${DB}`);
  const c = new pg.Client({ connectionString: uri, application_name: OBSERVER });
  c.on('error', (e) => process.stderr.write(`  the soak's own PostgreSQL connection failed: ${e.message}\n`));
  await c.connect();
  const version = String((await c.query('SHOW server_version')).rows[0].server_version);
  await c.query(`
    CREATE TABLE orders (id int PRIMARY KEY, customer int NOT NULL, status text NOT NULL, region int NOT NULL, total numeric NOT NULL, created timestamptz NOT NULL);
    INSERT INTO orders SELECT i, (i::bigint * 7919) % 2000, (ARRAY['paid','paid','paid','pending','shipped','cancelled'])[1 + (i * 31) % 6], i % 20, ((i::bigint * 104729) % 100000) / 100.0, now() - (i || ' minutes')::interval FROM generate_series(1, 200000) i;
    CREATE TABLE accounts (id int PRIMARY KEY, owner int NOT NULL, balance int NOT NULL);
    INSERT INTO accounts SELECT i, i % 500, (i * 37) % 1000 FROM generate_series(1, 5000) i;
    CREATE TABLE audit (id bigserial PRIMARY KEY, what text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
    CREATE SEQUENCE soak_ids; CREATE SEQUENCE soak_counter; CREATE SEQUENCE soak_trig; CREATE SEQUENCE soak_sly;
    CREATE FUNCTION bump(int) RETURNS boolean VOLATILE LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('soak_counter'); RETURN true; END $$;
    CREATE FUNCTION sly(int) RETURNS boolean STABLE LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('soak_sly'); RETURN true; END $$;
    CREATE VIEW bumped AS SELECT id, customer, created FROM orders WHERE bump(id);
    CREATE FUNCTION write_file(int) RETURNS boolean VOLATILE LANGUAGE plpgsql AS $$
      BEGIN EXECUTE format('COPY (SELECT %s) TO %L', $1, '${dir}/row_' || $1 || '_' || pg_backend_pid() || '_' || (extract(epoch FROM clock_timestamp()) * 1e6)::bigint); RETURN true; END $$;
    CREATE DOMAIN soak_dom AS int CHECK (write_file(VALUE));
    CREATE TYPE soak_t AS (v int);
    CREATE FUNCTION to_soak_t(int) RETURNS soak_t VOLATILE LANGUAGE plpgsql AS $$ BEGIN PERFORM write_file($1); RETURN ROW($1)::soak_t; END $$;
    CREATE CAST (int AS soak_t) WITH FUNCTION to_soak_t(int);
    CREATE FUNCTION audit_trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('soak_trig'); INSERT INTO audit (what) VALUES (TG_OP); RETURN NULL; END $$;
    CREATE TRIGGER accounts_audit AFTER UPDATE OR DELETE ON accounts FOR EACH ROW EXECUTE FUNCTION audit_trg();
    ANALYZE orders; ANALYZE accounts;`);
  // dblink comes with the server's contrib modules; without it that kind is skipped and said so.
  let dblink: string | null = null;
  const avail = await c.query("SELECT 1 FROM pg_available_extensions WHERE name = 'dblink'");
  if (avail.rowCount) {
    await c.query('CREATE EXTENSION dblink');
    const u = new URL(uri);
    const conninfo = `host=${u.hostname} port=${u.port} dbname=${DB} user=${decodeURIComponent(u.username)} application_name=${OBSERVER}-dblink`;
    await c.query(`CREATE FUNCTION remote_note(int) RETURNS boolean VOLATILE LANGUAGE plpgsql AS $$
      BEGIN PERFORM dblink_exec('${conninfo}', 'INSERT INTO audit (what) VALUES (''dblink ' || $1 || ''')'); RETURN true; END $$`);
    await c.query('CREATE DOMAIN soak_remote AS int CHECK (remote_note(VALUE))');
    dblink = conninfo;
  }
  return { pg: c, uri, dblink, version };
}

async function setupMongo(adminUri: string): Promise<{ mongo: MongoClient; db: Db; uri: string; version: string }> {
  const mongo = await MongoClient.connect(adminUri, { appName: OBSERVER });
  const db = mongo.db(DB);
  const statuses = ['paid', 'paid', 'paid', 'pending', 'shipped', 'cancelled'];
  const docs = Array.from({ length: 100_000 }, (_, k) => {
    const i = k + 1;
    return { _id: i, customer: (i * 7919) % 2000, status: statuses[(i * 31) % 6], region: i % 20, total: ((i * 104729) % 100000) / 100, created: new Date(Date.UTC(2024, 0, 1) + i * 60_000) };
  });
  for (let k = 0; k < docs.length; k += 10_000) await db.collection<{ _id: number }>('orders').insertMany(docs.slice(k, k + 10_000), { ordered: false });
  await db.collection('orders').createIndex({ customer: 1 });
  await makeDecoy(db);
  const version = String((await mongo.db('admin').command({ buildInfo: 1 }))['version']);
  return { mongo, db, uri: adminUri.replace('/?', `/${DB}?`), version };
}

/** The user's collection named like a scratch collection of a week ago (made again after a run drops it). */
async function makeDecoy(db: Db): Promise<void> {
  await db.collection<{ _id: number; note?: string }>(DECOY).insertMany([{ _id: 1, note: 'a user collection named like a scratch collection' }, { _id: 2 }]);
}

// ---- what a run left or changed -----------------------------------------------------------------------

interface PgState {
  sequences: Record<string, string>;
  audit: number;
  files: number;
  data: string;
  indexes: string;
}

async function pgState(env: Env): Promise<PgState> {
  const seq = await env.pg.query("SELECT sequencename AS n, coalesce(last_value::text, '-') AS v FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1");
  const audit = await env.pg.query('SELECT count(*)::int AS n FROM audit');
  const data = await env.pg.query('SELECT (SELECT count(*) || \'/\' || sum(balance) FROM accounts) || \' \' || (SELECT count(*) || \'/\' || sum(total) FROM orders) AS d');
  const ix = await env.pg.query("SELECT string_agg(indexrelid::regclass::text || ':' || indrelid::regclass::text, ',' ORDER BY 1) AS s FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'");
  return {
    sequences: Object.fromEntries(seq.rows.map((r: { n: string; v: string }) => [r.n, r.v])),
    audit: (audit.rows[0] as { n: number }).n,
    files: readdirSync(env.dir).length,
    data: String((data.rows[0] as { d: string }).d),
    indexes: String((ix.rows[0] as { s: string | null }).s ?? ''),
  };
}

function pgChanges(a: PgState, b: PgState): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(b.sequences)) if (a.sequences[k] !== v) out.push(`sequence ${k} ${a.sequences[k] ?? '?'} -> ${v}`);
  if (a.audit !== b.audit) out.push(`audit rows ${a.audit} -> ${b.audit}`);
  if (a.files !== b.files) out.push(`files written ${b.files - a.files}`);
  if (a.data !== b.data) out.push(`user rows ${a.data} -> ${b.data}`);
  if (a.indexes !== b.indexes) out.push(`indexes on user tables ${a.indexes} -> ${b.indexes}`);
  return out;
}

/** Sessions other than the soak's own, temporary tables and prepared transactions, after a bounded wait. */
async function pgLeft(env: Env): Promise<{ left: string[]; waitedMs: number }> {
  const t0 = Date.now();
  let left: string[] = [];
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    const s = await env.pg.query(`SELECT pid, application_name AS app, state, left(query, 60) AS q FROM pg_stat_activity
      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name NOT LIKE '${OBSERVER}%'`);
    const t = await env.pg.query("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relpersistence = 't' AND c.relkind = 'r'");
    const p = await env.pg.query('SELECT gid FROM pg_prepared_xacts');
    left = [
      ...s.rows.map((r: { pid: number; app: string; state: string; q: string }) => `session ${r.pid} (${r.app || 'no application_name'}, ${r.state}: ${r.q})`),
      ...t.rows.map((r: { relname: string }) => `temporary table ${r.relname}`),
      ...p.rows.map((r: { gid: string }) => `prepared transaction ${r.gid}`),
    ];
    if (left.length === 0 || Date.now() - t0 > GONE_MS) return { left, waitedMs: Date.now() - t0 };
    await pause(wait);
  }
}

interface MongoState {
  scratch: string[];
  /** When a later run's sweep may drop each scratch collection: its marker's time, else its name's time and an hour. */
  deadline: Map<string, { at: number; marked: boolean }>;
  userMissing: string[];
  userIndexes: string;
  userCount: number;
}

async function mongoState(env: Env): Promise<MongoState> {
  const listed = await env.db.listCollections({}).toArray();
  const names = listed.map((c) => c.name);
  const deadline = new Map<string, { at: number; marked: boolean }>();
  for (const c of listed) {
    const until = markerUntil((c as { options?: { validator?: { $comment?: unknown } } }).options?.validator?.$comment);
    deadline.set(c.name, until !== undefined ? { at: until, marked: true } : { at: stampOf(c.name) + SWEEP_AFTER_MS, marked: false });
  }
  const ix = (await env.db.collection('orders').listIndexes().toArray().catch(() => [])).map((x) => x['name'] as string).sort().join(',');
  return {
    // Any collection the soak did not make: scratch collections, and whatever else a run could leave.
    scratch: names.filter((n) => !USER_COLLECTIONS.includes(n) && !n.startsWith('system.')).sort(),
    deadline,
    userMissing: USER_COLLECTIONS.filter((n) => !names.includes(n)),
    userIndexes: ix,
    userCount: await env.db.collection('orders').estimatedDocumentCount(),
  };
}

/** Operations on the soak's database still running, after a bounded wait. */
async function mongoOps(env: Env): Promise<string[]> {
  const t0 = Date.now();
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    const ops = await env.mongo.db('admin').aggregate([{ $currentOp: { allUsers: true, idleConnections: false } }, { $match: { ns: { $regex: `^${DB}\\.` }, appName: { $ne: OBSERVER } } }]).toArray();
    const left = ops.map((o) => `op ${String(o['opid'])} ${String(o['op'])} on ${String(o['ns'])} (${String(o['appName'] ?? '')}, ${String(o['secs_running'] ?? 0)} s)`);
    if (left.length === 0 || Date.now() - t0 > GONE_MS) return left;
    await pause(wait);
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// ---- one run ------------------------------------------------------------------------------------------

interface Outcome {
  exit: number | null;
  signal: string | null;
  ms: number;
  /** The process ended before the signal was sent. */
  endedFirst: boolean;
  measured: string;
  hung: boolean;
  stderr: string;
}

let child: ChildProcess | undefined;

function runCli(env: Env, p: Plan): Promise<Outcome> {
  const uri = p.st.engine === 'postgres' ? env.pgUri : env.mongoUri;
  const args = [CLI, 'advise', '--uri', uri, '--query', p.st.text, '--json', ...(p.st.engine === 'mongodb' ? ['--verify'] : [])];
  return new Promise((resolve) => {
    const t0 = Date.now();
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let out = '';
    let err = '';
    let sent = false;
    let hung = false;
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    if (p.signal && p.delayMs === undefined) p.delayMs = Math.round((p.at ?? 0) * KILL_SPAN * (calibrated.get(p.st.text) ?? 1000));
    const killer = p.signal ? setTimeout(() => {
      sent = true;
      proc.kill(p.signal);
    }, p.delayMs ?? 0) : undefined;
    const guard = setTimeout(() => {
      hung = true;
      proc.kill('SIGKILL');
    }, HUNG_MS);
    proc.on('close', (code, signal) => {
      clearTimeout(killer);
      clearTimeout(guard);
      child = undefined;
      let measured = '';
      try {
        const doc = JSON.parse(out) as { measurement?: { status?: string; label?: string; reason?: string } };
        const m = doc.measurement;
        measured = m?.status === 'measured' ? 'measured' : m?.label?.startsWith('tried on a sample') ? `measured as a sampled trial: ${m.label}` : `${m?.status ?? '?'}${m?.reason ? `: ${m.reason}` : ''}`;
      } catch {
        measured = err.trim().split('\n')[0] ?? '';
      }
      resolve({ exit: code, signal, ms: Date.now() - t0, endedFirst: p.signal !== undefined && !sent, measured, hung, stderr: err.trim() });
    });
  });
}

interface RunRecord {
  p: Plan;
  o: Outcome;
  changes: string[];
  pgLeft: string[];
  opsLeft: string[];
  userDropped: string[];
  newScratch: string[];
}

const median = (xs: number[]): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function repro(p: Plan, env: Env): string {
  const uri = p.st.engine === 'postgres' ? env.pgUri : env.mongoUri;
  const cli = `node dist/cli.js advise --uri '${uri.replace(/:\d+\//, ':PORT/')}' --query '${p.st.text.replace(/'/g, "'\\''")}' --json${p.st.engine === 'mongodb' ? ' --verify' : ''}`;
  return `npm run bench:measure-soak -- --seed ${SEED} --runs ${RUNS} --only ${p.i}\n    or by hand on the soak's data: ${cli}${p.signal ? `, then kill -${p.signal.slice(3)} after ${p.delayMs} ms` : ''}`;
}

/** One whole run of every statement the soak will kill, timed: the kill windows. */
async function calibrate(env: Env, todo: Plan[]): Promise<void> {
  for (const p of todo) {
    if (!p.signal || calibrated.has(p.st.text)) continue;
    calibrated.set(p.st.text, (await runCli(env, { i: 0, st: p.st, kind: 'calibration' })).ms);
  }
}

async function trapCheck(env: Env, statements: Statement[]): Promise<string[]> {
  // Each trap run directly inside a rolled-back transaction must change something, or a 0 below says nothing.
  const lines: string[] = [];
  for (const st of statements) {
    const before = await pgState(env);
    await env.pg.query('BEGIN');
    await env.pg.query(st.text).catch((e: unknown) => lines.push(`  ${st.kind}: the statement itself failed (${e instanceof Error ? e.message : String(e)})`));
    await env.pg.query('ROLLBACK');
    const ch = pgChanges(before, await pgState(env));
    lines.push(`  ${st.kind}: run by hand and rolled back, it leaves ${ch.length ? ch.join('; ') : 'NOTHING (the trap is not armed)'}`);
  }
  return lines;
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run npm run build first.');
  const all = plans();
  const todo = all.filter((p) => (ONLY === undefined || p.i === ONLY) && (KIND === undefined || p.kind.includes(KIND)));
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  let state: ServersState | null = null;
  let env: Env | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'qpi-soak-files-'));
  chmodSync(dir, 0o777);
  const stop = async (): Promise<void> => {
    child?.kill('SIGKILL');
    await env?.pg.end().catch(() => undefined);
    await env?.mongo.close().catch(() => undefined);
    await stopServers(state);
    rmSync(dir, { recursive: true, force: true });
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => void stop().then(() => process.exit(130)));
  }
  try {
    state = await startServers();
    const [p, m] = await Promise.all([setupPostgres(state.env.QPI_TEST_PG_URI!, dir), setupMongo(state.env.QPI_TEST_MONGO_URI!)]);
    env = { pgUri: p.uri, mongoUri: m.uri, pg: p.pg, mongo: m.mongo, db: m.db, dir, dblink: p.dblink, versions: `PostgreSQL ${p.version}, MongoDB ${m.version}` };
    console.log(`Measurement safety soak: ${todo.length} run${todo.length === 1 ? '' : 's'}${ONLY !== undefined ? ` (run ${ONLY} of --runs ${RUNS})` : ''}${KIND !== undefined ? ` (kinds containing "${KIND}" of --runs ${RUNS})` : ''}, --seed ${SEED}`);
    console.log(`  on ${env.versions}; node ${process.version}, ${cpus().length} cores, load average at start ${load}`);
    await calibrate(env, todo);
    const spans = (e: string): string => {
      const v = [...calibrated].filter(([t]) => [...PG_STATEMENTS, ...PG_HARMLESS, ...MONGO_QUERIES].find((x) => x.text === t)?.engine === e).map(([, ms]) => ms);
      return v.length ? `${Math.min(...v)}-${Math.max(...v)} ms` : '-';
    };
    console.log(`  a kill lands between 0 and ${KILL_SPAN} times one whole run of its statement (PostgreSQL ${spans('postgres')}, MongoDB ${spans('mongodb')}); a session or operation may take ${GONE_MS / 1000} s to go`);
    if (!env.dblink) console.log('  dblink is not available on this server (no contrib package): the dblink kind is skipped.');
    console.log('Traps, checked by hand first:');
    for (const line of await trapCheck(env, PG_STATEMENTS.filter((s) => s.needs !== 'dblink' || env!.dblink))) console.log(line);

    const records: RunRecord[] = [];
    /** Scratch collections a run left: name -> the run, seen after the next run's sweep, and whether. */
    const leftovers = new Map<string, { run: RunRecord; afterSweep?: boolean; deadline: number; marked: boolean }>();
    for (const plan of todo) {
      if (plan.st.needs === 'dblink' && !env.dblink) continue;
      const pgBefore = await pgState(env);
      const mBefore = await mongoState(env);
      const o = await runCli(env, plan);
      const pgAfter = await pgState(env);
      const left = await pgLeft(env);
      const ops = await mongoOps(env);
      const mAfter = await mongoState(env);
      const changes = pgChanges(pgBefore, pgAfter);
      if (mBefore.userIndexes !== mAfter.userIndexes) changes.push(`indexes on orders ${mBefore.userIndexes} -> ${mAfter.userIndexes}`);
      if (mBefore.userCount !== mAfter.userCount) changes.push(`orders documents ${mBefore.userCount} -> ${mAfter.userCount}`);
      const newScratch = mAfter.scratch.filter((n) => !mBefore.scratch.includes(n));
      const rec: RunRecord = { p: plan, o, changes, pgLeft: left.left, opsLeft: ops, userDropped: mAfter.userMissing.filter((n) => !mBefore.userMissing.includes(n)), newScratch };
      records.push(rec);
      // A MongoDB run that ended normally swept what was old enough: what an earlier run left is looked at once.
      if (plan.st.engine === 'mongodb' && o.exit === 0) {
        for (const [name, l] of leftovers) if (l.afterSweep === undefined && l.run !== rec) l.afterSweep = mAfter.scratch.includes(name);
      }
      for (const n of newScratch) leftovers.set(n, { run: rec, deadline: mAfter.deadline.get(n)?.at ?? 0, marked: mAfter.deadline.get(n)?.marked ?? false });
      if (rec.userDropped.includes(DECOY)) await makeDecoy(env.db);
      const bad = [...changes, ...left.left, ...ops, ...rec.userDropped.map((n) => `user collection ${n} dropped`), ...(o.hung ? ['hung'] : [])];
      const how = plan.signal ? `${plan.signal} at ${plan.delayMs} ms${o.endedFirst ? ' (ended first)' : ''}` : `exit ${o.exit}`;
      process.stderr.write(`  run ${plan.i} ${plan.kind}: ${how}, ${(o.ms / 1000).toFixed(1)} s${newScratch.length ? `, ${newScratch.length} scratch left` : ''}${bad.length ? `, FOUND ${bad.join('; ')}` : ''}\n`);
      if (!plan.signal && o.exit !== 0) process.stderr.write(`    stderr: ${o.stderr.split('\n')[0] ?? ''}\n`);
      else if (!plan.signal || !o.endedFirst) process.stderr.write(`    ${o.measured.slice(0, 160)}\n`);
    }

    // The deadline: a later run's sweep drops a scratch collection once its marker's time has passed.
    let afterDeadline: Set<string> | undefined;
    const pending = (await mongoState(env)).scratch.filter((n) => leftovers.has(n));
    const due = Math.max(0, ...pending.map((n) => leftovers.get(n)!.deadline - Date.now()));
    if (pending.length > 0) process.stderr.write(`  ${pending.length} scratch collections left; the last deadline is in ${(due / 1000).toFixed(0)} s${due <= DEADLINE_WAIT_S * 1000 ? ', waiting for it' : ''}\n`);
    if (due <= DEADLINE_WAIT_S * 1000) {
      if (due > 0) await pause(due + 1000);
      await runCli(env, { i: 0, st: MONGO_QUERIES[0]!, kind: 'sweep' });
      const s = (await mongoState(env)).scratch;
      afterDeadline = new Set(pending.filter((n) => s.includes(n)));
      if (pending.length === 0) afterDeadline = new Set();
    }

    // ---- the figures ----
    const kinds = [...new Set(records.map((r) => r.p.kind))].sort();
    const rows = kinds.map((k) => {
      const rs = records.filter((r) => r.p.kind === k);
      const mongo = rs[0]!.p.st.engine === 'mongodb';
      const left = [...leftovers].filter(([, l]) => l.run.p.kind === k);
      return [
        k,
        String(rs.length),
        String(rs.filter((r) => r.p.signal && r.o.endedFirst).length || (rs[0]!.p.signal ? '0' : '-')),
        String(rs.filter((r) => r.changes.length > 0).length),
        String(rs.filter((r) => r.pgLeft.length > 0).length),
        mongo ? String(left.length) : '-',
        mongo ? String(left.filter(([, l]) => l.afterSweep === true).length) + (left.some(([, l]) => l.afterSweep === undefined) ? '+' : '') : '-',
        mongo ? (afterDeadline ? String(left.filter(([n]) => afterDeadline!.has(n)).length) : left.length ? 'not reached' : '0') : '-',
        String(rs.filter((r) => r.opsLeft.length > 0).length),
        String(rs.filter((r) => r.userDropped.length > 0).length),
        String(rs.filter((r) => r.o.measured.startsWith('measured')).length),
        `${(median(rs.map((r) => r.o.ms)) / 1000).toFixed(2)} s`,
      ];
    });
    const head = ['kind', 'runs', 'ended before the signal', 'changes outside the tx', 'pg objects left', 'scratch left right after', 'after next sweep', 'after the deadline', 'ops left', 'user colls dropped', 'measured', 'median time'];
    console.log(`\n${records.length} runs in ${((records.reduce((a, r) => a + r.o.ms, 0)) / 1000).toFixed(0)} s of measurement; load average at end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    printTable(head, rows);
    const notMeasured = records.filter((r) => !r.p.signal && r.p.st.engine === 'postgres' && !r.p.st.trap && !r.o.measured.startsWith('measured'));
    const measuredTraps = records.filter((r) => !r.p.signal && r.p.st.trap && r.o.measured.startsWith('measured'));
    const failed = records.filter((r) => !r.p.signal && r.o.exit !== 0);
    console.log(`\nHarmless PostgreSQL statements not measured: ${notMeasured.length}${notMeasured.length ? ` (${[...new Set(notMeasured.map((r) => r.o.measured))].join(' | ')})` : ''}`);
    console.log(`Statements with a side effect that were executed for the measurement (status measured): ${measuredTraps.length}${measuredTraps.length ? ` (${[...new Set(measuredTraps.map((r) => r.p.st.kind))].join(', ')})` : ''}`);
    console.log(`Runs not killed that exited other than 0: ${failed.length}${failed.length ? `\n${[...new Set(failed.map((r) => `  ${r.p.kind}: ${r.o.stderr.split('\n')[0] ?? ''}`))].join('\n')}` : ''}`);
    if (afterDeadline === undefined) console.log(`The last deadline of the scratch collections left was more than --deadline-wait ${DEADLINE_WAIT_S} s away: "after the deadline" was not reached.`);
    else if (leftovers.size > 0) console.log('"After the deadline": one more --verify run once every deadline had passed, then the scratch collections counted.');
    const unmarked = [...leftovers].filter(([, l]) => !l.marked).length;
    if (unmarked) console.log(`Scratch collections left without a readable marker: ${unmarked} (their deadline taken as the time in the name and ${SWEEP_AFTER_MS / 60_000} min).`);
    for (const e of ['pg', 'mongo']) {
      const ints = records.filter((r) => r.p.signal === 'SIGINT' && !r.o.endedFirst && r.p.kind.startsWith(e));
      const after = ints.map((r) => r.o.ms - (r.p.delayMs ?? 0));
      if (ints.length) console.log(`${e === 'pg' ? 'PostgreSQL' : 'MongoDB'} runs stopped by SIGINT: ${ints.length}, exit ${[...new Set(ints.map((r) => r.o.exit ?? r.o.signal))].join('/')}, from the signal to the exit median ${median(after).toFixed(0)} ms, longest ${Math.max(...after)} ms`);
    }
    const findings = records.filter((r) => r.changes.length || r.pgLeft.length || r.opsLeft.length || r.userDropped.length || r.o.hung);
    console.log(`\nFindings: ${findings.length}`);
    for (const r of findings) {
      console.log(`  run ${r.p.i} ${r.p.kind}${r.p.signal ? ` (${r.p.signal} at ${r.p.delayMs} ms${r.o.endedFirst ? ', the process had ended' : ''})` : ''}, ${(r.o.ms / 1000).toFixed(1)} s: ${[...r.changes, ...r.pgLeft, ...r.opsLeft, ...r.userDropped.map((n) => `user collection ${n} dropped`), ...(r.o.hung ? ['hung'] : [])].join('; ')}`);
      console.log(`    statement: ${r.p.st.text}`);
      console.log(`    measurement: ${r.o.measured}`);
      console.log(`    reproduce: ${repro(r.p, env)}`);
    }
    const kept = [...leftovers].filter(([, l]) => l.afterSweep !== false);
    if (kept.length) {
      console.log('\nScratch collections left (the run that left them, its kill moment, its deadline):');
      for (const [n, l] of kept) console.log(`  ${n}: run ${l.run.p.i} ${l.run.p.kind} at ${l.run.p.delayMs ?? '-'} ms; deadline ${new Date(l.deadline).toISOString()}${l.marked ? '' : ' (no marker)'}; after the next sweep ${l.afterSweep === undefined ? 'no later run swept' : l.afterSweep ? 'still there' : 'gone'}${afterDeadline ? `; after the deadline ${afterDeadline.has(n) ? 'STILL THERE' : 'gone'}` : ''}`);
    }
  } finally {
    await stop();
  }
}

/** The `until` of a scratch marker: a validator comment that ends in JSON holding it. */
function markerUntil(comment: unknown): number | undefined {
  if (typeof comment !== 'string') return undefined;
  const json = /\{.*\}\s*$/.exec(comment)?.[0];
  try {
    const until = json ? (JSON.parse(json) as { until?: unknown }).until : undefined;
    return typeof until === 'number' ? until : undefined;
  } catch {
    return undefined;
  }
}

function stampOf(name: string): number {
  const s = /_([0-9a-z]+)_[0-9a-z]{6}$/.exec(name)?.[1];
  return s ? parseInt(s, 36) : 0;
}

function printTable(head: string[], rows: string[][]): void {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exitCode = 1;
});
