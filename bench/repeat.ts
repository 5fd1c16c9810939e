// Repeatability of the measured first suggestion: the connected advice of `qpi advise --uri` (PostgreSQL:
// the default measurement; MongoDB: --verify) asked again and again for the same query on the same data,
// and the distinct first suggestions counted per case. A case with more than one is a flip: the
// measurement's noise decided it. Runs on the 30 hand-made truth cases and on generated cases of the
// truth generator's checking set, with the data bench/truth loads. Starts its own MongoDB and PostgreSQL
// (free ports, always stopped). Prints figures; asserts nothing (docs/measure-safety.md).
//
//   npm run bench:repeat [-- --repeats 20 --cases N --generated 20 --engine mongodb|postgres --handmade DIR]

import { loadavg, cpus } from 'node:os';
import { resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { startServers, stopServers, type ServersState } from '../scripts/servers.mjs';
import { run as qpi } from '../src/cli/main';
import { loadMongo, loadPostgres } from './truth/datasets';
import { generateCase, type Engine } from './truth/generate';
import { loadHandmadeMongo, loadHandmadePostgres, readHandmade } from './truth/handmade';

interface Options {
  repeats: number;
  cases: number | undefined;
  generated: number;
  engines: Engine[];
  handmade: string;
}

function options(argv: string[]): Options {
  const o: Options = { repeats: 20, cases: undefined, generated: 20, engines: ['mongodb', 'postgres'], handmade: resolve(__dirname, '..', 'test', 'fixtures', 'truth') };
  const num = (a: string, v: string | undefined): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${a} takes a whole number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--repeats') o.repeats = Math.max(1, num(a, argv[++i]));
    else if (a === '--cases') o.cases = num(a, argv[++i]);
    else if (a === '--generated') o.generated = num(a, argv[++i]);
    else if (a === '--engine') {
      const v = argv[++i];
      if (v !== 'mongodb' && v !== 'postgres') throw new Error('--engine takes mongodb or postgres');
      o.engines = [v];
    } else if (a === '--handmade') o.handmade = resolve(argv[++i] ?? '.');
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

interface Case {
  id: string;
  engine: Engine;
  query: string;
  /** Which data it runs on. */
  handmade: boolean;
}

/** Generated cases of the checking set (seed % 4 == 0), one per category first, then the next seeds. */
function generatedCases(engine: Engine, n: number): Case[] {
  const seen = new Set<string>();
  const first: Case[] = [];
  const rest: Case[] = [];
  for (let seed = 4; seed <= 480 && first.length < n; seed += 4) {
    const c = generateCase(engine, seed);
    const x = { id: `seed ${seed} ${c.category}`, engine, query: c.query, handmade: false };
    if (seen.has(c.category)) rest.push(x);
    else {
      seen.add(c.category);
      first.push(x);
    }
  }
  return [...first, ...rest].slice(0, n);
}

/** Per engine: hand-made and generated cases alternating, so a short run (--cases) has both. */
function cases(o: Options): Case[] {
  const hm = readHandmade(o.handmade);
  const out: Case[] = [];
  for (const engine of o.engines) {
    const h = hm.filter((c) => c.id.startsWith(engine === 'mongodb' ? 'm' : 'p')).map((c) => ({ id: c.id, engine, query: c.query.text, handmade: true }));
    const g = generatedCases(engine, Math.round(o.generated / 2));
    const mixed: Case[] = [];
    for (let i = 0; i < Math.max(h.length, g.length); i++) {
      if (h[i]) mixed.push(h[i]!);
      if (g[i]) mixed.push(g[i]!);
    }
    out.push(...(o.cases !== undefined ? mixed.slice(0, Math.ceil(o.cases / o.engines.length)) : mixed));
  }
  return out;
}

interface SuggestionJson {
  action: 'create' | 'keep' | 'none';
  keyPattern?: Record<string, number>;
  createIndex?: string | null;
  servesQueryAsWritten?: boolean;
}

/** The first suggestion as a short text: the index it creates or keeps, or what else it says. */
function label(engine: Engine, s: SuggestionJson): string {
  const what = s.action === 'create'
    ? engine === 'mongodb' ? JSON.stringify(s.keyPattern ?? {}) : (s.createIndex ?? '?').replace(/^CREATE INDEX (CONCURRENTLY )?(\S+ )?ON /i, '')
    : s.action === 'keep' ? `keep ${engine === 'mongodb' ? JSON.stringify(s.keyPattern ?? {}) : s.createIndex ?? 'an existing index'}` : 'no index';
  return s.servesQueryAsWritten === false ? `${what} (for a rewrite)` : what;
}

/** The first suggestion, and whether the server measured it (a tournament, or MongoDB's sampled trial), or why not. */
async function firstSuggestion(c: Case, uri: string): Promise<{ first: string; measured: true | string }> {
  let out = '';
  let err = '';
  const args = ['advise', '--uri', uri, '--query', c.query, '--json', ...(c.engine === 'mongodb' ? ['--verify'] : [])];
  const code = await qpi(args, { stdout: (s) => (out += s), stderr: (s) => (err += s), readStdin: () => '', readFile: () => '' });
  if (code !== 0) return { first: `refused: ${err.trim().split('\n')[0] ?? `exit ${code}`}`, measured: 'refused' };
  const doc = JSON.parse(out) as { suggestions: SuggestionJson[]; measurement: { status: string; label: string; reason?: string } };
  const m = doc.measurement;
  return {
    first: doc.suggestions[0] ? label(c.engine, doc.suggestions[0]) : 'no suggestion',
    measured: m.status === 'measured' || m.label.startsWith('tried on a sample') ? true : m.reason ?? m.label,
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const list = cases(o);
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  let state: ServersState | null = null;
  const clients: { close: () => Promise<unknown> }[] = [];
  const stop = async (): Promise<void> => {
    for (const c of clients) await c.close().catch(() => undefined);
    await stopServers(state);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => void stop().then(() => process.exit(130)));
  try {
    state = await startServers();
    const base = state.env;
    const mongoUri = (name: string): string => base.QPI_TEST_MONGO_URI!.replace('/?', `/${name}?`);
    const pgUri = (name: string): string => base.QPI_TEST_PG_URI!.replace(/\/postgres$/, `/${name}`);
    const versions: string[] = [];
    const loads: Promise<void>[] = [];
    const tl = Date.now();
    if (o.engines.includes('mongodb')) {
      const mongo = await MongoClient.connect(base.QPI_TEST_MONGO_URI!);
      clients.push(mongo);
      versions.push(`MongoDB ${String((await mongo.db('admin').command({ buildInfo: 1 }))['version'])}`);
      if (list.some((c) => c.engine === 'mongodb' && !c.handmade)) loads.push(loadMongo(mongo.db('qpi_truth_gen')));
      if (list.some((c) => c.engine === 'mongodb' && c.handmade)) loads.push(loadHandmadeMongo(mongo.db('qpi_truth_cases')));
    }
    if (o.engines.includes('postgres')) {
      const admin = new pg.Client({ connectionString: base.QPI_TEST_PG_URI });
      await admin.connect();
      versions.push(`PostgreSQL ${String((await admin.query('SHOW server_version')).rows[0].server_version)}`);
      for (const name of ['qpi_truth_gen', 'qpi_truth_cases']) {
        await admin.query(`CREATE DATABASE ${name}`);
        const c = new pg.Client({ connectionString: pgUri(name) });
        await c.connect();
        clients.push({ close: () => c.end() });
        // HypoPG is there, as on the servers bench:truth measures on.
        await c.query('CREATE EXTENSION IF NOT EXISTS hypopg');
        if (name === 'qpi_truth_gen' && list.some((x) => x.engine === 'postgres' && !x.handmade)) loads.push(loadPostgres(c));
        if (name === 'qpi_truth_cases' && list.some((x) => x.engine === 'postgres' && x.handmade)) loads.push(loadHandmadePostgres(c));
      }
      await admin.end();
    }
    await Promise.all(loads);
    console.log(`Repeatability of the measured first suggestion: ${list.length} cases x ${o.repeats} repeats`);
    console.log(`  on ${versions.join(', ')}; node ${process.version}, ${cpus().length} cores, load average at start ${load}; sample data loaded in ${((Date.now() - tl) / 1000).toFixed(0)} s`);
    console.log('  connected advice: PostgreSQL with its default measurement, MongoDB with --verify');

    const results: { c: Case; seen: Map<string, number>; ms: number[]; unmeasured: Map<string, number> }[] = [];
    for (const c of list) {
      const uri = c.engine === 'mongodb' ? mongoUri(c.handmade ? 'qpi_truth_cases' : 'qpi_truth_gen') : pgUri(c.handmade ? 'qpi_truth_cases' : 'qpi_truth_gen');
      const seen = new Map<string, number>();
      const unmeasured = new Map<string, number>();
      const ms: number[] = [];
      for (let r = 0; r < o.repeats; r++) {
        const t0 = Date.now();
        const s = await firstSuggestion(c, uri);
        ms.push(Date.now() - t0);
        seen.set(s.first, (seen.get(s.first) ?? 0) + 1);
        if (s.measured !== true) unmeasured.set(s.measured, (unmeasured.get(s.measured) ?? 0) + 1);
      }
      results.push({ c, seen, ms, unmeasured });
      process.stderr.write(`  ${c.engine} ${c.id}: ${seen.size} distinct, median ${(median(ms) / 1000).toFixed(2)} s${unmeasured.size ? `; not measured: ${[...unmeasured].map(([w, n]) => `${n}x ${w.slice(0, 140)}`).join(' | ')}` : ''}\n`);
    }

    console.log(`\nload average at end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    const head = ['engine', 'cases', 'repeats', 'cases with flips', 'distinct first suggestions', 'runs not measured', 'median time per measurement'];
    const rows = o.engines.map((e) => {
      const rs = results.filter((r) => r.c.engine === e);
      return [e === 'mongodb' ? 'MongoDB (--verify)' : 'PostgreSQL', String(rs.length), String(o.repeats), String(rs.filter((r) => r.seen.size > 1).length), String(rs.reduce((a, r) => a + r.seen.size, 0)), String(rs.reduce((a, r) => a + [...r.unmeasured.values()].reduce((x, y) => x + y, 0), 0)), `${(median(rs.flatMap((r) => r.ms)) / 1000).toFixed(2)} s`];
    });
    const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    for (const r of [head, ...rows]) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
    const unmeasured = results.filter((r) => r.unmeasured.size > 0);
    if (unmeasured.length) console.log('\nCases whose advice was not measured every time (why x times):');
    for (const r of unmeasured) console.log(`  ${r.c.engine} ${r.c.id}: ${[...r.unmeasured].map(([w, n]) => `${w} x${n}`).join(' | ')}`);
    const flips = results.filter((r) => r.seen.size > 1);
    if (flips.length) console.log('\nFlips (suggestion x times seen):');
    for (const r of flips) {
      console.log(`  ${r.c.engine} ${r.c.id}: ${[...r.seen].sort((a, b) => b[1] - a[1]).map(([s, n]) => `${s} x${n}`).join(' | ')}`);
      console.log(`    query: ${r.c.query.replace(/\s+/g, ' ')}`);
    }
  } finally {
    await stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exitCode = 1;
});
