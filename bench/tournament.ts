// The tournament's wall time on this machine: `qpi advise --uri` measuring every candidate on a sample of
// a 200,000-document collection (MongoDB) and a 200,000-row table (PostgreSQL), against the rules-only
// advice on the same connection in the same process (the baseline), and how long a Cancel takes to
// leave no work on the server, and when the measurement's first progress (candidates measured, 0 of N)
// comes. A benchmark prints figures; it asserts nothing.
// Run: node scripts/with-servers.mjs node --import tsx bench/tournament.ts [--runs N] [--size N] [--mongo-only|--pg-only]

import { MongoClient, type Document } from 'mongodb';
import pg from 'pg';
import { openMongoAdvice, openPostgresAdvice } from '../src/adapters/advise';
import { adviseMongoLive, advisePostgresLive } from '../src/adapters/adviceService';
import { parseMongoQuery } from '../src/core/query/mongoShell';
import { demoesr } from '../test/integration/support/adviceData';
import { median, runsArg, serverUri } from './support';

const RUNS = runsArg(5);
const sizeAt = process.argv.indexOf('--size');
const SIZE = sizeAt > 0 ? Number(process.argv[sizeAt + 1]) : 200_000;
const DB = 'qpi_bench_tournament';

const ms = (x: number): string => `${x.toFixed(0)} ms`;

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

const MONGO_QUERIES = [
  'db.demoesr.find({e: 42, r: {$gt: 10}}).sort({s: 1})',
  'db.demoesr.find({e: {$in: [1, 2, 3]}, r: {$lt: 5}}).sort({s: -1}).limit(20)',
  // A $or over different fields: groups of branch indexes, each run unhinted.
  'db.demoesr.find({$or: [{e: 42, r: {$gt: 10}}, {s: 7}]})',
];

async function benchMongo(): Promise<void> {
  const uri = serverUri('QPI_TEST_MONGO_URI');
  const client = await MongoClient.connect(uri);
  const db = client.db(DB);
  await db.dropDatabase();
  const docs = demoesr(SIZE) as unknown as Document[];
  for (let i = 0; i < docs.length; i += 20_000) await db.collection('demoesr').insertMany(docs.slice(i, i + 20_000), { ordered: false });
  await db.collection('demoesr').createIndex({ e: 1 });
  const session = await openMongoAdvice({ uri, database: DB });
  try {
    for (const text of MONGO_QUERIES) {
      const parsed = parseMongoQuery(text);
      if (!parsed.ok) throw new Error(parsed.error);
      const rules: number[] = [];
      const full: number[] = [];
      const first: number[] = [];
      let last = '';
      for (let i = 0; i < RUNS; i++) {
        rules.push(await timed(() => adviseMongoLive(session, parsed.command, { timeoutMs: 60_000 })));
        const t0 = performance.now();
        let seen = false;
        const onProgress = (): void => {
          if (!seen) first.push(performance.now() - t0);
          seen = true;
        };
        full.push(await timed(async () => {
          const live = await adviseMongoLive(session, parsed.command, { measure: true, timeoutMs: 60_000, onProgress });
          const t = live.measurement?.status === 'measured' ? live.measurement.tournament : undefined;
          last = t ? `${t.tried} candidates, ${t.label}; winner ${t.winner?.label}` : 'not measured';
        }));
      }
      console.log(`mongodb ${text} (${SIZE.toLocaleString('en-US')} documents)\n  rules only ${ms(median(rules))}, tournament ${ms(median(full))} (median of ${RUNS}; ${(median(full) / median(rules)).toFixed(1)}x the rules), first progress after ${first.length > 0 ? ms(median(first)) : 'none'} — ${last}`);
    }
    // Cancel: abort once the copy runs, then wait until no operation of ours is left on the server.
    const parsed = parseMongoQuery(MONGO_QUERIES[0]!);
    if (!parsed.ok) throw new Error(parsed.error);
    const cancels: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const abort = new AbortController();
      let aborted = 0;
      const p = adviseMongoLive(session, parsed.command, { measure: true, timeoutMs: 60_000, signal: abort.signal, onStep: (s) => { if (s === 'indexes' && aborted === 0) { aborted = performance.now(); abort.abort(); } } }).catch(() => undefined);
      await p;
      for (;;) {
        const ops = await client.db('admin').command({ currentOp: true, 'command.comment': { $regex: '^qpi-' } });
        const left = (await db.listCollections({ name: { $regex: '^qpi_trial_' } }).toArray()).length;
        if ((ops['inprog'] as unknown[]).length === 0 && left === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      if (aborted > 0) cancels.push(performance.now() - aborted);
    }
    if (cancels.length > 0) console.log(`mongodb cancel: nothing left on the server ${ms(median(cancels))} after Cancel (median of ${cancels.length})`);
  } finally {
    await session.close();
    await db.dropDatabase();
    await client.close();
  }
}

const PG_QUERIES = [
  'SELECT * FROM demoesr WHERE e = 42 AND r > 10 ORDER BY s',
  'SELECT * FROM demoesr WHERE e > 500 AND r < 3 ORDER BY s LIMIT 20',
  // Parameters as code sends them, bound to values from pg_stats.
  'SELECT * FROM demoesr WHERE e = $1 AND r > $2 ORDER BY s LIMIT $3',
];

async function benchPostgres(): Promise<void> {
  const uri = serverUri('QPI_TEST_PG_URI');
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  await client.query('DROP TABLE IF EXISTS demoesr');
  await client.query('CREATE TABLE demoesr (id int PRIMARY KEY, e int NOT NULL, s int NOT NULL, r int NOT NULL)');
  const rows = demoesr(SIZE);
  for (let i = 0; i < rows.length; i += 10_000) {
    const part = rows.slice(i, i + 10_000);
    await client.query('INSERT INTO demoesr SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::int[])', [part.map((d) => d._id), part.map((d) => d.e), part.map((d) => d.s), part.map((d) => d.r)]);
  }
  await client.query('CREATE INDEX demoesr_e ON demoesr (e)');
  await client.query('ANALYZE demoesr');
  const session = await openPostgresAdvice({ uri, timeoutMs: 60_000 });
  try {
    for (const sql of PG_QUERIES) {
      const rules: number[] = [];
      const full: number[] = [];
      const first: number[] = [];
      let last = '';
      for (let i = 0; i < RUNS; i++) {
        rules.push(await timed(() => advisePostgresLive(session, sql, { measure: false, timeoutMs: 60_000 })));
        const t0 = performance.now();
        let seen = false;
        const onProgress = (): void => {
          if (!seen) first.push(performance.now() - t0);
          seen = true;
        };
        full.push(await timed(async () => {
          const live = await advisePostgresLive(session, sql, { timeoutMs: 60_000, onProgress });
          const t = live.measurement?.status === 'measured' ? live.measurement.tournament : undefined;
          last = t ? `${t.tried} candidates, ${t.label}; winner ${t.winner?.label}` : 'not measured';
        }));
      }
      console.log(`postgres ${sql} (${SIZE.toLocaleString('en-US')} rows)\n  rules only ${ms(median(rules))}, tournament ${ms(median(full))} (median of ${RUNS}; ${(median(full) / median(rules)).toFixed(1)}x the rules), first progress after ${first.length > 0 ? ms(median(first)) : 'none'} — ${last}`);
    }
    // Cancel: abort 300 ms in, then wait until the server runs nothing of ours and no temporary table is left.
    const cancels: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const abort = new AbortController();
      let aborted = 0;
      const timer = setTimeout(() => { aborted = performance.now(); abort.abort(); }, 300);
      await advisePostgresLive(session, PG_QUERIES[0]!, { timeoutMs: 60_000, signal: abort.signal }).catch(() => undefined);
      clearTimeout(timer);
      for (;;) {
        const busy = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'query-plan-inspector' AND state = 'active'");
        if ((busy.rows[0] as { n: number }).n === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      if (aborted > 0) cancels.push(performance.now() - aborted);
    }
    if (cancels.length > 0) console.log(`postgres cancel: nothing running on the server ${ms(median(cancels))} after Cancel (median of ${cancels.length})`);
  } finally {
    await session.close();
    await client.query('DROP TABLE IF EXISTS demoesr');
    await client.end();
  }
}

async function main(): Promise<void> {
  if (!process.argv.includes('--pg-only')) await benchMongo();
  if (!process.argv.includes('--mongo-only')) await benchPostgres();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
