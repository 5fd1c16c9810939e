// `qpi check` on 1,000 generated queries against local servers: the wall time of a whole run (finder,
// one explain per query, the editor's findings, the lock compared, SARIF written), median of --runs.
// Half PostgreSQL (node-postgres calls and .sql statements on three indexed tables), half MongoDB
// (driver calls on three collections), in 50 files. Figures, not a timed test.
//
//   node scripts/with-servers.mjs npx tsx bench/check.ts [--queries 1000] [--runs 3]
// reads QPI_TEST_PG_URI and QPI_TEST_MONGO_URI (set by scripts/with-servers.mjs).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import { Client } from 'pg';
import { run } from '../src/cli/main';

const { values } = parseArgs({ options: { queries: { type: 'string', default: '1000' }, runs: { type: 'string', default: '3' } } });
const QUERIES = Number(values.queries);
const RUNS = Number(values.runs);
const PG = process.env.QPI_TEST_PG_URI;
const MONGO = process.env.QPI_TEST_MONGO_URI;
if (!PG || !MONGO) throw new Error('QPI_TEST_PG_URI and QPI_TEST_MONGO_URI are not set: run under scripts/with-servers.mjs.');

const DB = 'qpi_bench_check';
const pgUri = (db: string): string => {
  const u = new URL(PG);
  u.pathname = `/${db}`;
  return u.toString();
};

const TABLES = ['orders', 'customers', 'items'];
const COLUMNS = ['a', 'b', 'c', 'd'];

/** The i-th query: a filter on one or two columns, sometimes a sort, a range or a limit. */
function pgQuery(i: number): string {
  const t = TABLES[i % 3]!;
  const c1 = COLUMNS[i % 4]!;
  const c2 = COLUMNS[(i >> 2) % 4]!;
  const where = c1 === c2 ? `${c1} = ${i}` : `${c1} = ${i} AND ${c2} > ${i % 97}`;
  const tail = i % 5 === 0 ? ` ORDER BY ${COLUMNS[(i + 1) % 4]} LIMIT ${10 + (i % 7)}` : '';
  return `SELECT id, ${c1} FROM ${t} WHERE ${where}${tail}`;
}

function mongoQuery(i: number): string {
  const c = `events_${i % 3}`;
  const f1 = COLUMNS[i % 4]!;
  const f2 = COLUMNS[(i >> 2) % 4]!;
  const filter = f1 === f2 ? `{ ${f1}: ${i} }` : `{ ${f1}: ${i}, ${f2}: { $gt: ${i % 97} } }`;
  const tail = i % 5 === 0 ? `.sort({ ${COLUMNS[(i + 1) % 4]}: -1 }).limit(${10 + (i % 7)})` : '';
  return `db.collection('${c}').find(${filter})${tail}.toArray()`;
}

async function setUp(): Promise<void> {
  const admin = new Client({ connectionString: pgUri('postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
  const c = new Client({ connectionString: pgUri(DB) });
  await c.connect();
  for (const t of TABLES) {
    await c.query(`CREATE TABLE ${t} (id serial PRIMARY KEY, a int, b int, c int, d int)`);
    await c.query(`INSERT INTO ${t} (a, b, c, d) SELECT g % 1000, g % 100, g % 10, g FROM generate_series(1, 20000) g`);
    await c.query(`CREATE INDEX ${t}_a_b ON ${t} (a, b)`);
    await c.query(`CREATE INDEX ${t}_c ON ${t} (c)`);
  }
  await c.query('ANALYZE');
  await c.end();
  const m = await MongoClient.connect(MONGO!);
  const db = m.db(DB);
  await db.dropDatabase();
  for (let k = 0; k < 3; k++) {
    const coll = db.collection(`events_${k}`);
    await coll.insertMany(Array.from({ length: 5000 }, (_, g) => ({ a: g % 1000, b: g % 100, c: g % 10, d: g })));
    await coll.createIndex({ a: 1, b: 1 });
    await coll.createIndex({ c: 1 });
  }
  await m.close();
}

function writeApp(dir: string): void {
  mkdirSync(join(dir, 'src'), { recursive: true });
  const perFile = Math.ceil(QUERIES / 50);
  let n = 0;
  for (let f = 0; f < 50 && n < QUERIES; f++) {
    const count = Math.min(perFile, QUERIES - n);
    if (f % 5 === 4) {
      const lines = Array.from({ length: count }, (_, k) => `${pgQuery(n + k)};\n`);
      writeFileSync(join(dir, 'src', `report_${f}.sql`), lines.join('\n'));
    } else if (f % 2 === 0) {
      const fns = Array.from({ length: count }, (_, k) => `async function q${n + k}() {\n  return client.query('${pgQuery(n + k)}');\n}\n`);
      writeFileSync(join(dir, 'src', `repo_${f}.js`), `const { Client } = require('pg');\nconst client = new Client();\n\n${fns.join('\n')}`);
    } else {
      const fns = Array.from({ length: count }, (_, k) => `async function q${n + k}() {\n  return ${mongoQuery(n + k)};\n}\n`);
      writeFileSync(join(dir, 'src', `events_${f}.js`), `const { MongoClient } = require('mongodb');\nconst db = new MongoClient('mongodb://localhost').db('${DB}');\n\n${fns.join('\n')}`);
    }
    n += count;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  await setUp();
  const dir = mkdtempSync(join(tmpdir(), 'qpi-bench-check-'));
  try {
    writeApp(dir);
    const mongoUri = new URL(MONGO!);
    mongoUri.pathname = `/${DB}`;
    const args = ['check', join(dir, 'src'), '--uri', pgUri(DB), '--uri', mongoUri.toString(), '--lock', join(dir, 'qpi.lock.json'), '--sarif', join(dir, 'qpi.sarif')];
    let err = '';
    const io = { stdout: () => undefined, stderr: (s: string) => void (err += s), readStdin: () => '', readFile: async (p: string) => (await import('node:fs')).readFileSync(p, 'utf8') };
    const first = await run([...args, '--update'], io);
    if (first !== 0) throw new Error(`qpi check --update exited ${first}: ${err}`);
    console.log(err.trim().split('\n').pop());
    const times: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      err = '';
      const t0 = performance.now();
      const code = await run(args, io);
      times.push(performance.now() - t0);
      if (code !== 0) throw new Error(`qpi check exited ${code}: ${err}`);
    }
    console.log(err.trim().split('\n').pop());
    console.log(`qpi check, ${QUERIES} generated queries: median ${(median(times) / 1000).toFixed(1)} s over ${RUNS} runs (${times.map((t) => (t / 1000).toFixed(1)).join(', ')} s); ${(median(times) / QUERIES).toFixed(1)} ms a query`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (e: unknown) => {
  console.error(e);
  process.exit(1);
});
