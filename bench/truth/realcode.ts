// The real-code truth set: queries the finder reads in public applications, one JSON file per repository
// under bench/truth/realcode/ (the repository, its commit, its set, the data its queries run on, and the
// cases: each query as written with literal values standing in for run-time ones, and the fields it
// reads, from which the oracle enumerates its candidates on its own). This module reads those files,
// makes the data from their specifications (seeded, the same on every machine) and loads it, one
// database per repository. See docs/truth.md.

import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ObjectId, type Db } from 'mongodb';
import type { Client } from 'pg';
import { inBatches, settle } from './datasets';
import type { Engine, GeneratedCase, TruthSet } from './generate';
import { letters, mulberry32, weighted, zipf, type Rand } from './prng';

/** Bumped whenever a data specification or its generator changes, so cached oracle results are not reused. */
export const REALCODE_DATA_VERSION = 1;
export const REALCODE_DIR = resolve(__dirname, 'realcode');

/**
 * How one field or column is drawn. Every kind may add `nulls` (a share of nulls) and, on MongoDB,
 * `missing` (a share of documents without the field). Fields are drawn in the order written, so `copy`
 * and `within` may name one written before them.
 */
export type Gen = (
  /** start + i * step, the i-th row's; `date`: milliseconds since the epoch, made a date; `prefix`: a string; `uuid`: a UUID. */
  | { seq: number; step?: number; date?: boolean; prefix?: string; uuid?: boolean }
  /**
   * Zipf over ranks 0..n-1 (rank 0 most frequent): `prefix` + rank, the rank + `offset` without a prefix,
   * or with `uuid` the rank as the last digits of a UUID.
   */
  | { zipf: number; s?: number; prefix?: string; offset?: number; uuid?: boolean }
  /** Uniform whole numbers from lo to hi; `date`: milliseconds, made a date. */
  | { uniform: [number, number]; date?: boolean }
  /** One of the values, with the weights (equal without). */
  | { oneOf: (string | number | boolean)[]; weights?: number[] }
  /** `prefix` + n random lowercase letters. */
  | { letters: number; prefix?: string }
  /** Another field's value (a number or a date) plus a uniform whole number from lo to hi: correlated columns. */
  | { copy: string; plus: [number, number] }
  /** A key that belongs to another field's value: `<that value>:<prefix><rank>`, the rank Zipf over n. */
  | { within: string; zipf: number; s?: number; prefix?: string }
  /** An array of min..max elements drawn with `of`. */
  | { array: Gen; min: number; max: number }
  /** A nested document (MongoDB) or a jsonb object (PostgreSQL). */
  | { object: Record<string, Gen> }
  /** MongoDB: an ObjectId whose time is another field's date (so _id order follows it). */
  | { objectIdFrom: string }
  /** Another generator by the row's place in the table: the first `until` share of rows (0..1) from the first, and so on. */
  | { phases: { until: number; gen: Gen }[] }
) & { nulls?: number; missing?: number };

export interface RealCollection {
  name: string;
  count: number;
  seed: number;
  /** The indexes the repository's schema declares on the collection. */
  indexes?: { key: Record<string, 1 | -1>; unique?: boolean }[];
  fields: Record<string, Gen>;
}
export interface RealColumn { name: string; type: string; gen: Gen }
export interface RealTable {
  name: string;
  rows: number;
  seed: number;
  /** The columns of the repository's schema the cases read, with the primary key, as it declares them. */
  create: string;
  /** The indexes and unique constraints the repository's schema declares on those columns. */
  indexes?: string[];
  columns: RealColumn[];
}

export interface RealCase {
  id: string;
  /** The file the query was read from, in the repository at its commit. */
  source: string;
  category: string;
  query: string;
  /** MongoDB: the collection and every path the query filters on, and its sort. */
  collection?: string;
  fields?: string[];
  sort?: [string, 1 | -1][];
  /** PostgreSQL: per table, the columns the query filters or joins on, its sort, and jsonb columns tested with @>. */
  tables?: { table: string; columns: string[]; sort?: [string, 'asc' | 'desc'][]; jsonb?: string[] }[];
}

export interface RealRepository {
  repository: string;
  commit: string;
  library: string;
  set: TruthSet;
  engine: Engine;
  /** Where the schema came from: the repository's schema file, or the fields its queries read. */
  schema: string;
  collections?: RealCollection[];
  tables?: RealTable[];
  cases: RealCase[];
}

export function readRealcode(dir = REALCODE_DIR): RealRepository[] {
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RealRepository);
}

/** The database a repository's data is loaded into: `qpi_real_` and its name. */
export function databaseOf(r: RealRepository): string {
  return `qpi_real_${r.repository.split('/')[1]!.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`;
}

/** A stable number for a case id (FNV-1a), the oracle cache's key beside the query text. */
export function caseSeed(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** An identifier as the query writes it: quoted when it is not all lower case. */
const ident = (name: string): string => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

/** The case in the generator's form, which the oracle's candidates, cache and judge read. */
export function asGenerated(r: RealRepository, c: RealCase): GeneratedCase {
  const base = { seed: caseSeed(c.id), engine: r.engine, set: r.set, category: c.category, query: c.query };
  if (r.engine === 'mongodb') return { ...base, mongo: { collection: c.collection!, fields: c.fields ?? [], sort: c.sort ?? [] } };
  return {
    ...base,
    pg: (c.tables ?? []).map((t) => ({
      table: ident(t.table),
      columns: t.columns.map(ident),
      sort: (t.sort ?? []).map(([col, dir]): [string, 'asc' | 'desc'] => [ident(col), dir]),
      jsonb: (t.jsonb ?? []).map(ident),
    })),
  };
}

// ---- the data -----------------------------------------------------------------------------------------

type Value = unknown;
type Draw = (row: Record<string, Value>, i: number) => Value;

export const uuidOf = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function drawer(rand: Rand, g: Gen, count: number): Draw {
  const inner = ((): Draw => {
    if ('seq' in g) return (_r, i) => {
      const v = g.seq + i * (g.step ?? 1);
      return g.date ? new Date(v) : g.uuid ? uuidOf(v) : g.prefix !== undefined ? `${g.prefix}${v}` : v;
    };
    if ('zipf' in g && !('within' in g)) {
      const z = zipf(rand, g.zipf, g.s ?? 1.0);
      return () => (g.uuid ? uuidOf(z()) : g.prefix !== undefined ? `${g.prefix}${z()}` : z() + (g.offset ?? 0));
    }
    if ('uniform' in g) return () => {
      const v = g.uniform[0] + Math.floor(rand() * (g.uniform[1] - g.uniform[0] + 1));
      return g.date ? new Date(v) : v;
    };
    if ('oneOf' in g) {
      const w = weighted(rand, g.oneOf, g.weights ?? g.oneOf.map(() => 1));
      return () => w();
    }
    if ('letters' in g) return () => `${g.prefix ?? ''}${letters(rand, g.letters)}`;
    if ('copy' in g) return (row) => {
      const v = row[g.copy];
      const d = g.plus[0] + Math.floor(rand() * (g.plus[1] - g.plus[0] + 1));
      return v instanceof Date ? new Date(v.getTime() + d) : typeof v === 'number' ? v + d : v;
    };
    if ('within' in g) {
      const z = zipf(rand, g.zipf, g.s ?? 1.0);
      return (row) => `${String(row[g.within])}:${g.prefix ?? ''}${z()}`;
    }
    if ('array' in g) {
      const el = drawer(rand, g.array, count);
      return (row, i) => Array.from({ length: g.min + Math.floor(rand() * (g.max - g.min + 1)) }, () => el(row, i));
    }
    if ('object' in g) {
      const parts = Object.entries(g.object).map(([k, sub]) => [k, drawer(rand, sub, count)] as const);
      return (row, i) => {
        const o: Record<string, Value> = {};
        for (const [k, d] of parts) {
          const v = d(row, i);
          if (v !== MISSING) o[k] = v;
        }
        return o;
      };
    }
    if ('objectIdFrom' in g) return (row) => ObjectId.createFromTime(Math.floor((row[g.objectIdFrom] as Date).getTime() / 1000));
    if ('phases' in g) {
      const parts = g.phases.map((p) => ({ until: p.until, draw: drawer(rand, p.gen, count) }));
      return (row, i) => (parts.find((p) => i < p.until * count) ?? parts.at(-1)!).draw(row, i);
    }
    throw new Error(`unknown generator ${JSON.stringify(g)}`);
  })();
  if (g.nulls === undefined && g.missing === undefined) return inner;
  return (row, i) => {
    const u = rand();
    if (u < (g.missing ?? 0)) return MISSING;
    if (u < (g.missing ?? 0) + (g.nulls ?? 0)) return null;
    return inner(row, i);
  };
}

/** A field left out of the document. */
const MISSING = Symbol('missing');

/** Sets a dotted path in a document, making the sub-documents on the way. */
function setPath(doc: Record<string, Value>, path: string, v: Value): void {
  const parts = path.split('.');
  let at = doc;
  for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Record<string, Value>;
  at[parts.at(-1)!] = v;
}

/** The rows of a specification, each as a flat record by field name (dotted paths kept whole). */
export function* rowsOf(seed: number, count: number, fields: Record<string, Gen>): Generator<Record<string, Value>> {
  const rand = mulberry32(seed);
  const draws = Object.entries(fields).map(([k, g]) => [k, drawer(rand, g, count)] as const);
  for (let i = 0; i < count; i++) {
    const row: Record<string, Value> = {};
    for (const [k, d] of draws) row[k] = d(row, i);
    yield row;
  }
}

/** A flat row as a MongoDB document: dotted paths nested, missing fields left out. */
export function documentOf(row: Record<string, Value>): Record<string, Value> {
  const doc: Record<string, Value> = {};
  for (const [k, v] of Object.entries(row)) if (v !== MISSING) setPath(doc, k, v);
  return doc;
}

/** A value as PostgreSQL's text input for its column type (arrays as array literals, objects as JSON). */
export function pgText(v: Value): string | null {
  if (v === null || v === MISSING || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return `{${v.map((x) => (typeof x === 'string' ? `"${x.replace(/["\\]/g, '\\$&')}"` : String(x))).join(',')}}`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Loads a repository's collections unless this version of them is there. */
export async function loadRealMongo(db: Db, r: RealRepository): Promise<void> {
  const meta = db.collection<{ _id: string; v: number }>('_meta');
  for (const c of r.collections ?? []) {
    if ((await meta.findOne({ _id: c.name }))?.v === REALCODE_DATA_VERSION) continue;
    await db.collection(c.name).drop().catch(() => undefined);
    await inBatches(rowsOf(c.seed, c.count, c.fields), 5000, (b) => db.collection(c.name).insertMany(b.map(documentOf), { ordered: false }));
    for (const ix of c.indexes ?? []) await db.collection(c.name).createIndex(ix.key, ix.unique ? { unique: true } : {});
    await meta.replaceOne({ _id: c.name }, { v: REALCODE_DATA_VERSION }, { upsert: true });
  }
}

/** Creates and fills a repository's tables with the indexes its schema declares, unless this version is there. */
export async function loadRealPostgres(pg: Client, r: RealRepository): Promise<void> {
  await pg.query('CREATE TABLE IF NOT EXISTS _meta (name text PRIMARY KEY, v int)');
  const m = await pg.query<{ v: number }>("SELECT v FROM _meta WHERE name = 'realcode'");
  if (m.rows[0]?.v === REALCODE_DATA_VERSION) return;
  for (const t of r.tables ?? []) {
    await pg.query(`DROP TABLE IF EXISTS ${ident(t.name)} CASCADE`);
    await pg.query(t.create);
    const cols = t.columns;
    const fields = Object.fromEntries(cols.map((c) => [c.name, c.gen]));
    const sql = `INSERT INTO ${ident(t.name)} (${cols.map((c) => ident(c.name)).join(', ')}) SELECT ${cols.map((c, k) => `c${k}::${c.type}`).join(', ')} FROM unnest(${cols.map((_c, k) => `$${k + 1}::text[]`).join(', ')}) AS u(${cols.map((_c, k) => `c${k}`).join(', ')})`;
    await inBatches(rowsOf(t.seed, t.rows, fields), 10_000, (b) => pg.query(sql, cols.map((c) => b.map((row) => pgText(row[c.name])))));
    for (const ix of t.indexes ?? []) await pg.query(ix);
  }
  await settle(pg, (r.tables ?? []).map((t) => ident(t.name)));
  await pg.query("INSERT INTO _meta VALUES ('realcode', $1) ON CONFLICT (name) DO UPDATE SET v = EXCLUDED.v", [REALCODE_DATA_VERSION]);
}
