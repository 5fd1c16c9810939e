// npm run bench:truth: how often the first suggestion of `qpi advise` is the least-work index, on
// generated query shapes the advice was not tuned on. Starts its own MongoDB and PostgreSQL (free ports,
// always stopped), loads the sample data, measures every candidate with the oracle (cached under
// .cache/truth/), then asks `qpi advise` offline and connected (--uri) for each case and judges the first
// suggestion: correct when its work is within 10% of the oracle's least, or when the rewrite it serves does
// less work than the best index as written. Prints figures; asserts nothing. See docs/truth.md.
//
//   npm run bench:truth [-- --set checking|tuning|all] [--seeds 1..480] [--engine mongodb|postgres]
//                          [--no-connected] [--verbose] [--postgres 15|18]
//   npm run bench:truth -- --set realcode[-tuning|-all]     the real-code cases (bench/truth/realcode/)

import { resolve } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import pg from 'pg';
import { startServers, stopServers, type ServersState } from '../../scripts/servers.mjs';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../scripts/embedded-postgres';
import { run as qpi } from '../../src/cli/main';
import { COLLSCAN, NO_INDEX, mongoKey, pgKey } from './candidates';
import { loadMongo, loadPostgres } from './datasets';
import { generateCase, type Engine, type GeneratedCase, type TruthSet } from './generate';
import { REWRITTEN_IN, asRecorded, handmadeCorrect, handmadeRecord, loadHandmadeMongo, loadHandmadePostgres, readHandmade, recordedKeys, recordedWork } from './handmade';
import { best, measureMongo, measureMongoSet, measurePg, missingMongo, missingPg, readRecord, writeRecord, type CaseRecord, type Measure } from './oracle';
import { REALCODE_DATA_VERSION, asGenerated, databaseOf, loadRealMongo, loadRealPostgres, readRealcode, type RealRepository } from './realcode';

/** The oracle's results; QPI_TRUTH_CACHE moves them (the default is ignored by git). */
const CACHE = process.env.QPI_TRUTH_CACHE ?? resolve(__dirname, '..', '..', '.cache', 'truth');
const TOLERANCE = 1.1;
/** Set on Ctrl-C: the servers are being stopped. */
let interrupted = false;

interface Options {
  set: TruthSet | 'all';
  from: number;
  to: number;
  engines: Engine[];
  connected: boolean;
  verbose: boolean;
  handmade: string | undefined;
  /** 15: the PostgreSQL 15 (+HypoPG) of scripts/servers.mjs; 18: the embedded PostgreSQL 18, its oracle cached apart. */
  postgres: 15 | 18;
  /** The real-code cases of these repositories instead of the generated and hand-made ones. */
  realcode: TruthSet | 'all' | undefined;
}

function options(argv: string[]): Options {
  const o: Options = { set: 'checking', from: 1, to: 480, engines: ['mongodb', 'postgres'], connected: true, verbose: false, handmade: resolve(__dirname, '..', '..', 'test', 'fixtures', 'truth'), postgres: 15, realcode: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--set') {
      const v = argv[++i];
      if (v === 'realcode' || v === 'realcode-tuning' || v === 'realcode-all') o.realcode = v === 'realcode' ? 'checking' : v === 'realcode-tuning' ? 'tuning' : 'all';
      else if (v !== 'checking' && v !== 'tuning' && v !== 'all') throw new Error('--set takes checking, tuning, all, realcode, realcode-tuning or realcode-all');
      else o.set = v;
    } else if (a === '--seeds') {
      const m = /^(\d+)\.\.(\d+)$/.exec(argv[++i] ?? '');
      if (!m) throw new Error('--seeds takes FROM..TO, for example 1..480');
      o.from = Number(m[1]);
      o.to = Number(m[2]);
    } else if (a === '--engine') {
      const v = argv[++i];
      if (v !== 'mongodb' && v !== 'postgres') throw new Error('--engine takes mongodb or postgres');
      o.engines = [v];
    } else if (a === '--no-connected') o.connected = false;
    else if (a === '--verbose') o.verbose = true;
    else if (a === '--no-handmade') o.handmade = undefined;
    else if (a === '--handmade') o.handmade = resolve(argv[++i] ?? '.');
    else if (a === '--postgres') {
      const v = argv[++i];
      if (v !== '15' && v !== '18') throw new Error('--postgres takes 15 or 18');
      o.postgres = Number(v) as 15 | 18;
    }
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

// ---- asking qpi ---------------------------------------------------------------------------------------

interface SuggestionJson {
  action: 'create' | 'keep' | 'none';
  rule: string;
  keyPattern?: Record<string, number>;
  createIndex?: string | null;
  servesQueryAsWritten?: boolean;
  rewrites?: { rule: string; text: string; parameters: unknown[] }[];
}

/** `qpi advise --json` in this process; the first suggestion and all of them, or the sentence it refused with. */
async function advise(query: string, engine: Engine, uri: string | undefined): Promise<{ s?: SuggestionJson; all?: SuggestionJson[]; error?: string; measured?: string }> {
  let out = '';
  let err = '';
  const args = ['advise', '--query', query, '--json', '--engine', engine];
  if (uri !== undefined) args.push('--uri', uri, '--verify');
  const code = await qpi(args, { stdout: (s) => (out += s), stderr: (s) => (err += s), readStdin: () => '', readFile: () => '' });
  if (code !== 0) return { error: err.trim().split('\n')[0] ?? `exit ${code}` };
  const doc = JSON.parse(out) as { suggestions: SuggestionJson[]; measurement?: { label?: string; reason?: string } };
  // How the connected advice was measured (a tournament cut by its time budget says so), for --verbose.
  const m = doc.measurement;
  const measured = m?.label !== undefined ? `${m.label}${m.reason ? ` (${m.reason})` : ''}` : undefined;
  const found = doc.suggestions[0] ? { s: doc.suggestions[0], all: doc.suggestions } : { error: 'no suggestion' };
  return measured !== undefined ? { ...found, measured } : found;
}

// ---- judging ------------------------------------------------------------------------------------------

interface Verdict {
  ok: boolean;
  how: 'index' | 'rewrite' | 'miss' | 'refused';
  work: number;
  best: number;
  what: string;
}

/** The index a suggestion names, as the oracle's key, or the no-index key. */
function suggestionKey(engine: Engine, s: SuggestionJson): string {
  if (engine === 'mongodb') return s.action === 'none' || !s.keyPattern ? COLLSCAN : mongoKey(s.keyPattern);
  return s.action === 'create' && s.createIndex ? s.createIndex : NO_INDEX;
}

function lookup(engine: Engine, rec: CaseRecord, key: string): Measure | undefined {
  if (engine === 'mongodb') return rec.candidates[key] ?? rec.extra[key];
  if (key === NO_INDEX) return rec.candidates[NO_INDEX];
  const want = pgKey(key);
  for (const [k, m] of Object.entries(rec.candidates)) if (k !== NO_INDEX && pgKey(k) === want) return m;
  return rec.extra[key];
}

async function measureExtra(engine: Engine, conn: Db | pg.Client, rec: CaseRecord, key: string, query?: string): Promise<Measure> {
  const need = { rec, keys: [key], into: 'extra' as const, ...(query !== undefined ? { query } : {}) };
  if (engine === 'mongodb') await measureMongo(conn as Db, [need]);
  else await measurePg(conn as pg.Client, [need]);
  return rec.extra[query !== undefined ? `${key} ${query}` : key]!;
}

async function judge(engine: Engine, conn: Db | pg.Client, rec: CaseRecord, s: SuggestionJson | undefined, error: string | undefined, all: SuggestionJson[] = []): Promise<Verdict> {
  const b = best(rec);
  if (!b) return { ok: false, how: 'refused', work: Infinity, best: Infinity, what: 'no candidate could be measured' };
  if (!s) return { ok: false, how: 'refused', work: Infinity, best: b.work, what: error ?? '' };
  // A $or suggestion is one index per branch: judged as the set the user would build, run unhinted.
  const branches = engine === 'mongodb' && s.rule === 'or-branch' ? all.filter((x) => x.rule === 'or-branch' && x.action === 'create' && x.keyPattern) : [];
  if (branches.length > 1) {
    const keys = [...new Set(branches.map((x) => mongoKey(x.keyPattern!)))];
    const m = await measureMongoSet(conn as Db, rec, keys);
    const ok = m.error === undefined && m.work <= b.work * TOLERANCE;
    return { ok, how: ok ? 'index' : 'miss', work: m.work, best: b.work, what: `${keys.join(' + ')} together, unhinted${m.error ? ` (${m.error})` : ''}` };
  }
  const key = suggestionKey(engine, s);
  const label = engine === 'mongodb' ? (key === COLLSCAN ? 'no index' : key) : key === NO_INDEX ? 'no index' : pgKey(key);
  const rewrite = s.servesQueryAsWritten === false ? s.rewrites?.find((r) => r.parameters.length === 0) : undefined;
  if (rewrite) {
    const m = rec.extra[`${key} ${rewrite.text}`] ?? (await measureExtra(engine, conn, rec, key, rewrite.text));
    if (m.error === undefined && m.work < b.work) return { ok: true, how: 'rewrite', work: m.work, best: b.work, what: `${label} + ${rewrite.rule}` };
  }
  const m = lookup(engine, rec, key) ?? (await measureExtra(engine, conn, rec, key));
  const ok = m.error === undefined && m.work <= b.work * TOLERANCE;
  return { ok, how: ok ? 'index' : 'miss', work: m.work, best: b.work, what: m.error ? `${label} (${m.error})` : label };
}

// ---- the run ------------------------------------------------------------------------------------------

const pct = (n: number, d: number): string => (d === 0 ? '-' : `${((100 * n) / d).toFixed(0)}%`);
const cell = (n: number, d: number): string => `${n}/${d} ${pct(n, d)}`.padEnd(14);
let pgVersion: 15 | 18 = 15;
const engineName = (e: Engine): string => (e === 'mongodb' ? 'MongoDB 6.0.5' : `PostgreSQL ${pgVersion}`);
/** The oracle's cache of an engine: PostgreSQL 18's measurements are kept apart from 15's. */
const cacheOf = (e: Engine): string => (e === 'postgres' && pgVersion === 18 ? resolve(CACHE, 'pg18') : CACHE);

interface Servers {
  mongoUri: string;
  pgUri: string;
  db: Db;
  pg: pg.Client;
  /** The hand-made cases' data, in databases of their own. */
  handmadeMongoUri: string;
  handmadePgUri: string;
  handmadeDb: Db;
  handmadePg: pg.Client;
}

/** Prints accuracy per category and overall for each mode, from one verdict per case and mode. */
function table(categories: string[], modes: string[], ok: Map<string, boolean[]>): void {
  console.log(`  ${'category'.padEnd(34)}${'cases'.padStart(6)}  ${modes.map((m) => m.padEnd(14)).join('')}`);
  const line = (name: string, idx: number[]): string => `  ${name.padEnd(34)}${String(idx.length).padStart(6)}  ${modes.map((m) => cell(idx.filter((i) => ok.get(m)![i]).length, idx.length)).join('')}`;
  for (const cat of [...new Set(categories)].sort()) console.log(line(cat, categories.flatMap((c, i) => (c === cat ? [i] : []))));
  console.log(line('all', categories.map((_, i) => i)));
}

async function generated(o: Options, engine: Engine, sv: Servers): Promise<void> {
  const seeds = Array.from({ length: o.to - o.from + 1 }, (_, i) => o.from + i);
  const cases = seeds.map((s) => generateCase(engine, s)).filter((c) => o.set === 'all' || c.set === o.set);
  const recs = cases.map((c) => readRecord(cacheOf(engine), c));
  const missing = recs.map((rec) => ({ rec, keys: engine === 'mongodb' ? missingMongo(rec) : missingPg(rec), into: 'candidates' as const })).filter((n) => n.keys.length > 0);
  const to = Date.now();
  const count = missing.reduce((a, n) => a + n.keys.length, 0);
  const progress = (d: number, t: number): void => {
    if (d % 50 === 0 || d === t) process.stderr.write(`  oracle ${engine}: ${d}/${t} indexes\n`);
  };
  // Measures taken while the run is being stopped fail for want of a connection: they are not kept.
  const save = (rec: CaseRecord): void => {
    if (!interrupted) writeRecord(cacheOf(engine), rec);
  };
  if (engine === 'mongodb') await measureMongo(sv.db, missing, progress, save);
  else await measurePg(sv.pg, missing, progress, save);
  const measured = recs.reduce((a, r) => a + Object.keys(r.candidates).length, 0);
  const which = o.set === 'checking' ? ' (seed % 4 == 0)' : o.set === 'tuning' ? ' (seed % 4 != 0)' : '';
  console.log(`\n${engineName(engine)}, generated: seeds ${o.from}..${o.to}, ${o.set} set${which}: ${cases.length} cases, ${measured} candidate measurements (${count} new, ${((Date.now() - to) / 1000).toFixed(0)} s).`);

  const modes: ('offline' | 'connected')[] = o.connected ? ['offline', 'connected'] : ['offline'];
  const results = new Map<string, (Verdict & { measured?: string })[]>();
  for (const mode of modes) {
    const ta = Date.now();
    const verdicts: (Verdict & { measured?: string })[] = [];
    for (const rec of recs) {
      const { s, all, error, measured } = await advise(rec.case.query, engine, mode === 'connected' ? (engine === 'mongodb' ? sv.mongoUri : sv.pgUri) : undefined);
      const v = await judge(engine, engine === 'mongodb' ? sv.db : sv.pg, rec, s, error, all);
      verdicts.push(mode === 'connected' && measured !== undefined ? { ...v, measured } : v);
    }
    for (const rec of recs) save(rec);
    results.set(mode, verdicts);
    console.log(`  advice ${mode}: ${((Date.now() - ta) / 1000).toFixed(0)} s`);
  }
  table(cases.map((c) => c.category), modes, new Map([...results].map(([m, v]) => [m, v.map((x) => x.ok)])));
  for (const mode of modes) {
    const v = results.get(mode)!;
    console.log(`  ${mode}: ${v.filter((x) => x.how === 'index').length} index within 10%, ${v.filter((x) => x.how === 'rewrite').length} rewrite doing less work than the best index, ${v.filter((x) => x.how === 'miss').length} misses, ${v.filter((x) => x.how === 'refused').length} refused`);
  }
  if (!o.verbose) return;
  for (const mode of modes) {
    for (const [i, v] of results.get(mode)!.entries()) {
      if (v.ok) continue;
      const c: GeneratedCase = cases[i]!;
      const b = best(recs[i]!);
      console.log(`  miss ${mode} seed ${c.seed} ${c.category}: ${c.query}\n      suggested ${v.what} work ${v.work}; best ${b?.key ?? 'none'} work ${b?.work ?? '-'} (${(v.work / Math.max(1, b?.work ?? 1)).toFixed(1)}x)${v.measured !== undefined ? `\n      measurement: ${v.measured}` : ''}`);
    }
  }
}

async function handmade(o: Options, engine: Engine, sv: Servers): Promise<void> {
  const all = readHandmade(o.handmade!);
  const cases = all.filter((c) => c.id.startsWith(engine === 'mongodb' ? 'm' : 'p'));
  const byId = new Map(all.map((c) => [c.id, c]));
  const modes: ('offline' | 'connected')[] = o.connected ? ['offline', 'connected'] : ['offline'];
  const ok = new Map<string, boolean[]>();
  const misses: string[] = [];
  const ta = Date.now();
  for (const mode of modes) {
    const row: boolean[] = [];
    for (const c of cases) {
      const { s, error } = await advise(c.query.text, engine, mode === 'connected' ? (engine === 'mongodb' ? sv.handmadeMongoUri : sv.handmadePgUri) : undefined);
      if (!s) {
        row.push(false);
        misses.push(`  miss ${mode} ${c.id}: ${error ?? ''}`);
        continue;
      }
      // A suggestion serving a rewrite is looked up in the case that measured the rewrite, as the cases' own tests do.
      const target = s.servesQueryAsWritten === false && REWRITTEN_IN[c.id] ? byId.get(REWRITTEN_IN[c.id]!)! : c;
      const key = suggestionKey(engine, s);
      let m = recordedKeys(target).get(engine === 'mongodb' || key === NO_INDEX ? key : pgKey(key));
      if (!m) {
        const rec = handmadeRecord(target);
        if (engine === 'mongodb') await measureMongo(sv.handmadeDb, [{ rec, keys: [key], into: 'extra' }]);
        else await measurePg(sv.handmadePg, [{ rec, keys: [key], into: 'extra' }]);
        const live = rec.extra[key]!;
        if (live.error !== undefined) {
          row.push(false);
          misses.push(`  miss ${mode} ${c.id}: suggested ${key} could not be measured: ${live.error}`);
          continue;
        }
        m = asRecorded(live);
      }
      const good = handmadeCorrect(c, m);
      row.push(good);
      if (!good) misses.push(`  miss ${mode} ${c.id}: suggested ${key === COLLSCAN || key === NO_INDEX ? 'no index' : engine === 'mongodb' ? key : pgKey(key)} work ${recordedWork(c, m)}; oracle ${JSON.stringify(c.oracle.index)} work ${recordedWork(c, c.oracle.metrics)}`);
    }
    ok.set(mode, row);
  }
  console.log(`\n${engineName(engine)}, the ${cases.length} hand-made truth cases (${((Date.now() - ta) / 1000).toFixed(0)} s):`);
  table(cases.map((c) => c.id), modes, ok);
  for (const line of misses) console.log(line);
}

/** One repository's database: the URI `qpi advise --uri` is given and the connection the oracle measures on. */
interface RealDb { uri: string; conn: Db | pg.Client }

/**
 * The real-code cases of `repos` (one engine): the oracle on each repository's database, then the advice
 * offline and connected, judged as the generated cases are; accuracy per repository and in all.
 */
async function realcode(o: Options, engine: Engine, repos: RealRepository[], dbs: Map<string, RealDb>): Promise<void> {
  const cases = repos.flatMap((r) => r.cases.map((c) => ({ r, c, g: asGenerated(r, c) })));
  const dir = resolve(cacheOf(engine), `realcode-d${REALCODE_DATA_VERSION}`);
  const recs = cases.map((x) => readRecord(dir, x.g));
  const save = (rec: CaseRecord): void => {
    if (!interrupted) writeRecord(dir, rec);
  };
  const to = Date.now();
  let count = 0;
  for (const r of repos) {
    const db = dbs.get(r.repository)!;
    const missing = cases.flatMap((x, i) => (x.r === r ? [{ rec: recs[i]!, keys: engine === 'mongodb' ? missingMongo(recs[i]!) : missingPg(recs[i]!), into: 'candidates' as const }] : [])).filter((n) => n.keys.length > 0);
    count += missing.reduce((a, n) => a + n.keys.length, 0);
    const progress = (d: number, t: number): void => {
      if (d % 50 === 0 || d === t) process.stderr.write(`  oracle ${r.repository}: ${d}/${t} indexes\n`);
    };
    if (engine === 'mongodb') await measureMongo(db.conn as Db, missing, progress, save);
    else await measurePg(db.conn as pg.Client, missing, progress, save);
  }
  const measured = recs.reduce((a, r) => a + Object.keys(r.candidates).length, 0);
  console.log(`\n${engineName(engine)}, real code (${o.realcode} repositories): ${cases.length} cases from ${repos.length} repositories, ${measured} candidate measurements (${count} new, ${((Date.now() - to) / 1000).toFixed(0)} s).`);
  const modes: ('offline' | 'connected')[] = o.connected ? ['offline', 'connected'] : ['offline'];
  const results = new Map<string, (Verdict & { measured?: string })[]>();
  for (const mode of modes) {
    const ta = Date.now();
    const verdicts: (Verdict & { measured?: string })[] = [];
    for (const [i, x] of cases.entries()) {
      const db = dbs.get(x.r.repository)!;
      const { s, all, error, measured } = await advise(x.c.query, engine, mode === 'connected' ? db.uri : undefined);
      const v = await judge(engine, db.conn, recs[i]!, s, error, all);
      verdicts.push(mode === 'connected' && measured !== undefined ? { ...v, measured } : v);
    }
    for (const rec of recs) save(rec);
    results.set(mode, verdicts);
    console.log(`  advice ${mode}: ${((Date.now() - ta) / 1000).toFixed(0)} s`);
  }
  table(cases.map((x) => x.r.repository), modes, new Map([...results].map(([m, v]) => [m, v.map((x) => x.ok)])));
  if (!o.verbose) return;
  for (const [i, x] of cases.entries()) {
    const b = best(recs[i]!);
    console.log(`  ${x.c.id} (${x.c.category}): ${x.c.query}\n      best ${b?.key ?? 'none'} work ${b?.work ?? '-'}`);
    for (const mode of modes) {
      const v = results.get(mode)![i]!;
      console.log(`      ${mode} ${v.ok ? 'ok  ' : 'miss'} ${v.what} work ${v.work}${v.measured !== undefined ? ` (${v.measured})` : ''}`);
    }
  }
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const t0 = Date.now();
  let state: ServersState | null = null;
  let pg18: EmbeddedServer | undefined;
  pgVersion = o.postgres;
  const clients: { close: () => Promise<unknown> }[] = [];
  const stop = async (): Promise<void> => {
    for (const c of clients) await c.close().catch(() => undefined);
    await pg18?.pg.stop().catch(() => undefined);
    await stopServers(state);
  };
  // Ctrl-C, a terminal closed or a kill: the servers are stopped either way.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      interrupted = true;
      void stop().then(() => process.exit(130));
    });
  }
  try {
    state = await startServers();
    const base = state.env;
    if (o.postgres === 18 && o.engines.includes('postgres')) {
      pg18 = await startEmbeddedPostgres({ prefix: 'qpi-truth18-', password: 'qpi-truth' });
      console.log(`[truth] embedded PostgreSQL 18 on ${new URL(pg18.uri).port}`);
    }
    const pgBase = pg18?.uri ?? base.QPI_TEST_PG_URI!;
    const mongoUri = (name: string): string => base.QPI_TEST_MONGO_URI!.replace('/?', `/${name}?`);
    const pgUri = (name: string): string => pgBase.replace(/\/postgres$/, `/${name}`);
    const mongo = await MongoClient.connect(base.QPI_TEST_MONGO_URI!);
    clients.push(mongo);
    const admin = new pg.Client({ connectionString: pgBase });
    await admin.connect();
    const pgDb = async (name: string): Promise<pg.Client> => {
      await admin.query(`CREATE DATABASE ${name}`);
      const c = new pg.Client({ connectionString: pgUri(name) });
      await c.connect();
      clients.push({ close: () => c.end() });
      // HypoPG is there, as on a server where the advice can verify without building (the embedded 18 has none).
      if (o.postgres === 15) await c.query('CREATE EXTENSION IF NOT EXISTS hypopg');
      return c;
    };
    if (o.realcode !== undefined) {
      for (const engine of o.engines) {
        const repos = readRealcode().filter((r) => r.engine === engine && (o.realcode === 'all' || r.set === o.realcode));
        const dbs = new Map<string, RealDb>();
        const tl = Date.now();
        for (const r of repos) {
          const name = databaseOf(r);
          if (engine === 'mongodb') {
            const db = mongo.db(name);
            await loadRealMongo(db, r);
            dbs.set(r.repository, { uri: mongoUri(name), conn: db });
          } else {
            const c = await pgDb(name);
            await loadRealPostgres(c, r);
            dbs.set(r.repository, { uri: pgUri(name), conn: c });
          }
        }
        console.log(`${engineName(engine)}: the real-code data of ${repos.length} repositories loaded in ${((Date.now() - tl) / 1000).toFixed(0)} s.`);
        await realcode(o, engine, repos, dbs);
      }
      await admin.end();
      console.log(`\nTotal ${((Date.now() - t0) / 1000).toFixed(0)} s.`);
      return;
    }
    const sv: Servers = {
      mongoUri: mongoUri('qpi_truth_gen'), pgUri: pgUri('qpi_truth_gen'), db: mongo.db('qpi_truth_gen'), pg: await pgDb('qpi_truth_gen'),
      handmadeMongoUri: mongoUri('qpi_truth_cases'), handmadePgUri: pgUri('qpi_truth_cases'), handmadeDb: mongo.db('qpi_truth_cases'), handmadePg: await pgDb('qpi_truth_cases'),
    };
    await admin.end();
    const tl = Date.now();
    const loads: Promise<void>[] = [];
    if (o.engines.includes('mongodb')) loads.push(loadMongo(sv.db), ...(o.handmade && o.connected ? [loadHandmadeMongo(sv.handmadeDb)] : []));
    if (o.engines.includes('postgres')) loads.push(loadPostgres(sv.pg), ...(o.handmade && o.connected ? [loadHandmadePostgres(sv.handmadePg)] : []));
    await Promise.all(loads);
    console.log(`Sample data loaded in ${((Date.now() - tl) / 1000).toFixed(0)} s.`);
    for (const engine of o.engines) await generated(o, engine, sv);
    if (o.handmade) for (const engine of o.engines) await handmade(o, engine, sv);
    console.log(`\nTotal ${((Date.now() - t0) / 1000).toFixed(0)} s.`);
  } finally {
    await stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exitCode = 1;
});
