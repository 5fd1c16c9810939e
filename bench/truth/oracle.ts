// The oracle: every candidate index built alone on the full data and the query measured with it.
// MongoDB: the query explained at executionStats with a hint on the candidate (or $natural for the
// collection scan); work = keys examined + documents examined + documents a blocking sort held.
// PostgreSQL: the candidate built inside a transaction that is rolled back, the query run under
// EXPLAIN (ANALYZE, BUFFERS) with the planner free to choose; work = shared buffers hit + read at the
// root. Results are cached per seed under .cache/truth/, so later runs measure only what is new.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BSON, type Db, type Document } from 'mongodb';
import type { Client } from 'pg';
import { loadPlan } from '../../src/core/load';
import type { Plan, PlanNode } from '../../src/core/model';
import { parseMongoQuery } from '../../src/core/query/mongoShell';
import { toServerCommand } from '../../src/core/query/mongoServerCommand';
import { COLLSCAN, NO_INDEX, mongoCandidates, mongoKey, pgCandidates, pgKey } from './candidates';
import { DATA_VERSION } from './datasets';
import { GENERATOR_VERSION, type GeneratedCase } from './generate';

export interface Measure {
  work: number;
  /** One line: the plan's stages, for reading a miss. */
  plan: string;
  keysExamined?: number;
  docsExamined?: number;
  sorted?: number;
  rows?: number;
  error?: string;
}

export interface CaseRecord {
  case: GeneratedCase;
  /** Candidate key (mongoKey / CREATE INDEX text / "$natural" / "none") to its measure. */
  candidates: Record<string, Measure>;
  /** Indexes or rewrites an advisor suggested that were not among the candidates, measured on demand. */
  extra: Record<string, Measure>;
}

export function cacheFile(dir: string, c: GeneratedCase): string {
  return join(dir, `${c.engine}-d${DATA_VERSION}-g${GENERATOR_VERSION}-${c.seed}.json`);
}

export function readRecord(dir: string, c: GeneratedCase): CaseRecord {
  const file = cacheFile(dir, c);
  if (existsSync(file)) {
    const rec = JSON.parse(readFileSync(file, 'utf8')) as CaseRecord;
    if (rec.case.query === c.query) return rec;
  }
  return { case: c, candidates: {}, extra: {} };
}

export function writeRecord(dir: string, rec: CaseRecord): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(cacheFile(dir, rec.case), JSON.stringify(rec, null, 1));
}

/** The least work among the measured candidates, with its key. */
export function best(rec: CaseRecord): { key: string; work: number } | undefined {
  let out: { key: string; work: number } | undefined;
  for (const [key, m] of Object.entries(rec.candidates)) {
    if (m.error === undefined && (out === undefined || m.work < out.work)) out = { key, work: m.work };
  }
  return out;
}

// ---- MongoDB ------------------------------------------------------------------------------------------

const SORTS = new Set(['SORT', 'SORT_KEY_GENERATOR', '$sort']);

function shape(plan: Plan): string {
  const label = (n: PlanNode): string => (n.details.indexName ? `${n.kind}[${n.details.indexName}]` : n.kind);
  const draw = (n: PlanNode): string => (n.children.length === 0 ? label(n) : n.children.length === 1 ? `${label(n)}>${draw(n.children[0]!)}` : `${label(n)}(${n.children.map(draw).join(',')})`);
  return draw(plan.root);
}

/** Runs one query text at executionStats, with a hint or with the planner free, and reads its work. */
export async function explainMongo(db: Db, query: string, hint: Document | undefined): Promise<Measure> {
  const parsed = parseMongoQuery(query);
  if (!parsed.ok) return { work: Infinity, plan: '', error: parsed.error };
  const built = toServerCommand({ ...parsed.command, ...(hint ? { hint: hint as Record<string, unknown> } : {}) });
  if (!built.ok) return { work: Infinity, plan: '', error: built.error };
  const inner = BSON.EJSON.deserialize(built.command, { relaxed: false }) as Document;
  try {
    const res = await db.command({ explain: { ...inner, maxTimeMS: 60_000 }, verbosity: 'executionStats' });
    const loaded = loadPlan(BSON.EJSON.stringify(res, { relaxed: true }));
    if (!loaded.ok) return { work: Infinity, plan: '', error: loaded.refusal };
    const plan = loaded.plan;
    const sum = (f: (n: PlanNode) => number | undefined): number => plan.nodes.reduce((a, n) => a + (f(n) ?? 0), 0);
    const keys = plan.totals.keysExamined ?? sum((n) => n.metrics.keysExamined);
    const docs = plan.totals.docsExamined ?? sum((n) => n.metrics.docsExamined);
    const sorted = plan.nodes.filter((n) => SORTS.has(n.kind)).reduce((a, n) => a + (n.children[0]?.metrics.rowsReturned ?? n.metrics.rowsReturned ?? 0), 0);
    return { work: keys + docs + sorted, keysExamined: keys, docsExamined: docs, sorted, rows: plan.totals.nReturned ?? plan.root.metrics.rowsReturned ?? 0, plan: shape(plan) };
  } catch (err) {
    return { work: Infinity, plan: '', error: (err as Error).message.split('\n')[0]! };
  }
}

/** Indexes built together: a hinted explain uses only its index, so the others do not change its figures. */
const BATCH = 40;

type Need = { rec: CaseRecord; keys: string[]; into: 'candidates' | 'extra'; query?: string };
type Use = { rec: CaseRecord; into: 'candidates' | 'extra'; query: string; label: string };

function usesByKey(needs: Need[], group: (n: Need, key: string) => string): Map<string, Use[]> {
  const byKey = new Map<string, Use[]>();
  for (const n of needs) {
    for (const k of n.keys) {
      const id = group(n, k);
      if (!byKey.has(id)) byKey.set(id, []);
      byKey.get(id)!.push({ rec: n.rec, into: n.into, query: n.query ?? n.rec.case.query, label: n.query ? `${k} ${n.query}` : k });
    }
  }
  return byKey;
}

/**
 * Measures `keys` (mongoKey strings or COLLSCAN) for each case that lacks them. Indexes are built in
 * batches of one collection, every case needing one is explained with a hint on it, and the batch is
 * dropped; `saved` is called for each record once its batch is measured.
 */
export async function measureMongo(db: Db, needs: Need[], onIndex?: (done: number, total: number) => void, saved?: (rec: CaseRecord) => void): Promise<void> {
  const byKey = usesByKey(needs, (n, k) => `${n.rec.case.mongo!.collection}\u0000${k}`);
  const ids = [...byKey.keys()].sort();
  let done = 0;
  for (let i = 0; i < ids.length;) {
    const collection = ids[i]!.split('\u0000')[0]!;
    const batch: string[] = [];
    while (i < ids.length && batch.length < BATCH && ids[i]!.startsWith(`${collection}\u0000`)) batch.push(ids[i++]!);
    const coll = db.collection(collection);
    const names = new Map<string, string>();
    const errors = new Map<string, string>();
    // An index the collection has (its _id index, one its schema declares) is hinted as it is: MongoDB
    // builds a second index on the same keys when the options differ (a unique one), and a hint on those
    // keys is then refused as ambiguous.
    const has = new Set((await coll.indexes()).map((ix) => mongoKey(ix.key as Record<string, number>)));
    const specs = batch.filter((id) => !id.endsWith(`\u0000${COLLSCAN}`) && !has.has(id.split('\u0000')[1]!)).map((id, j) => ({ id, key: JSON.parse(id.split('\u0000')[1]!) as Document, name: `qpi_truth_${j}` }));
    try {
      if (specs.length > 0) await coll.createIndexes(specs.map(({ key, name }) => ({ key, name })));
      // An index equal to one that exists (the _id index) is not created again: only built ones are dropped.
      const built = new Set((await coll.indexes()).map((ix) => ix.name));
      for (const x of specs) if (built.has(x.name)) names.set(x.id, x.name);
    } catch {
      // One index of the batch was refused (two array fields in one compound key): build them one by one.
      for (const x of specs) {
        try {
          await coll.createIndex(x.key, { name: x.name });
          names.set(x.id, x.name);
        } catch (err) {
          // An index with these keys already exists (the _id index): it is hinted as it is.
          if ((err as { code?: number }).code !== 85) errors.set(x.id, (err as Error).message.split('\n')[0]!);
        }
      }
    }
    try {
      for (const id of batch) {
        const key = id.split('\u0000')[1]!;
        const hint = (key === COLLSCAN ? { $natural: 1 } : JSON.parse(key)) as Document;
        for (const u of byKey.get(id)!) {
          const err = errors.get(id);
          u.rec[u.into][u.into === 'extra' ? u.label : key] = err !== undefined ? { work: Infinity, plan: '', error: err } : await explainMongo(db, u.query, hint);
        }
        onIndex?.(++done, ids.length);
      }
    } finally {
      for (const name of names.values()) await coll.dropIndex(name).catch((err: { code?: number }) => (err.code === 27 ? undefined : Promise.reject(err)));
    }
    for (const id of batch) for (const u of byKey.get(id)!) saved?.(u.rec);
  }
}

/**
 * Builds several indexes together (a `$or` suggestion's one index per branch), runs the query without a
 * hint, as the server runs it with them (a hint names one index for the whole query, and so cannot
 * measure a set), drops what it built, and records the work under `set <keys>` in `rec.extra`.
 */
export async function measureMongoSet(db: Db, rec: CaseRecord, keys: string[]): Promise<Measure> {
  const label = `set ${keys.join(' + ')}`;
  const known = rec.extra[label];
  if (known) return known;
  const coll = db.collection(rec.case.mongo!.collection);
  const built: string[] = [];
  let m: Measure;
  try {
    for (const [i, k] of keys.entries()) {
      try {
        await coll.createIndex(JSON.parse(k) as Document, { name: `qpi_truth_set_${i}` });
        built.push(`qpi_truth_set_${i}`);
      } catch (err) {
        // An index with these keys exists already (the _id index): the planner has it anyway.
        if ((err as { code?: number }).code !== 85) throw err;
      }
    }
    m = await explainMongo(db, rec.case.query, undefined);
  } catch (err) {
    m = { work: Infinity, plan: '', error: (err as Error).message.split('\n')[0]! };
  } finally {
    for (const name of built) await coll.dropIndex(name).catch(() => undefined);
  }
  rec.extra[label] = m;
  return m;
}

export function missingMongo(rec: CaseRecord): string[] {
  return mongoCandidates(rec.case).filter((k) => !(k in rec.candidates));
}

// ---- PostgreSQL ---------------------------------------------------------------------------------------

function pgShape(node: Record<string, unknown>): string {
  const on = node['Index Name'] ? `[${String(node['Index Name'])}]` : node['Relation Name'] ? `[${String(node['Relation Name'])}]` : '';
  const kids = (node.Plans as Record<string, unknown>[] | undefined) ?? [];
  const label = `${String(node['Node Type'])}${on}`;
  return kids.length === 0 ? label : kids.length === 1 ? `${label}>${pgShape(kids[0]!)}` : `${label}(${kids.map(pgShape).join(',')})`;
}

/** EXPLAIN (ANALYZE, BUFFERS) of one statement: buffers hit + read at the root. */
export async function explainPg(pg: Client, sql: string): Promise<Measure> {
  try {
    await pg.query('SAVEPOINT qpi_truth_explain');
    const res = await pg.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`);
    await pg.query('RELEASE SAVEPOINT qpi_truth_explain');
    const doc = (res.rows[0]!['QUERY PLAN'] as Record<string, unknown>[])[0]!;
    const root = doc.Plan as Record<string, unknown>;
    const buffers = Number(root['Shared Hit Blocks'] ?? 0) + Number(root['Shared Read Blocks'] ?? 0);
    return { work: buffers, rows: Number(root['Actual Rows'] ?? 0), plan: pgShape(root) };
  } catch (err) {
    await pg.query('ROLLBACK TO SAVEPOINT qpi_truth_explain').catch(() => undefined);
    return { work: Infinity, plan: '', error: (err as Error).message.split('\n')[0]! };
  }
}

/**
 * Measures CREATE INDEX statements (or "none") for each case lacking them: each index is built inside a
 * transaction, every case needing it is explained, and the transaction is rolled back.
 */
/** Seconds a PostgreSQL candidate may run before it is stopped and recorded as an error. */
const PG_CANDIDATE_LIMIT_S = 10;

export async function measurePg(pg: Client, needs: Need[], onIndex?: (done: number, total: number) => void, saved?: (rec: CaseRecord) => void): Promise<void> {
  const byKey = usesByKey(needs, (_n, k) => (k === NO_INDEX ? NO_INDEX : pgKey(k)));
  let done = 0;
  for (const [id, users] of byKey) {
    await pg.query('BEGIN');
    try {
      // The best candidate of every generated case runs in well under a second on these tables; one that
      // runs past this limit (a nested loop scanning a table per outer row) is recorded as an error,
      // which ranks it last, as its work would.
      await pg.query(`SET LOCAL statement_timeout = '${PG_CANDIDATE_LIMIT_S}s'`);
      let buildError: string | undefined;
      if (id !== NO_INDEX) {
        try {
          // An index the advice measured with btree_gin or pg_trgm created inside its rolled-back
          // transaction is judged the same way: the extension made here is rolled back with the index.
          if (/\busing gin\b/i.test(id) && /,/.test(id)) await pg.query('CREATE EXTENSION IF NOT EXISTS btree_gin');
          if (/\bgin_trgm_ops\b/i.test(id)) await pg.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
          await pg.query(`CREATE INDEX qpi_truth_candidate ON ${id}`);
        } catch (err) {
          buildError = (err as Error).message.split('\n')[0]!;
        }
      }
      if (buildError !== undefined) {
        for (const u of users) u.rec[u.into][u.label] = { work: Infinity, plan: '', error: buildError };
      } else {
        for (const u of users) u.rec[u.into][u.label] = await explainPg(pg, u.query);
      }
    } finally {
      await pg.query('ROLLBACK');
    }
    for (const u of users) saved?.(u.rec);
    onIndex?.(++done, byKey.size);
  }
}

export function missingPg(rec: CaseRecord): string[] {
  return pgCandidates(rec.case).filter((k) => !(k in rec.candidates));
}
