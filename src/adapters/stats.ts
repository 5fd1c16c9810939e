// Selectivity figures for the advisor, read from a live server without ever scanning a big collection or
// table unless the user said so.
//
// MongoDB: the collection size comes from its metadata (estimatedDocumentCount). A collection of at most
// `exactUpTo` documents is counted exactly (countDocuments with a limit, one count per predicate set);
// a bigger one is estimated from ONE random sample ($sample of `sampleSize` documents, every count taken
// on that sample in a $facet) scaled to the collection size, so the server reads at most the sample. The
// same sample says which paths hold arrays (multikey). `exactCounts` is the user's consent to count on
// the whole collection whatever its size.
//
// PostgreSQL: pg_class (reltuples, relpages), pg_stats (n_distinct, correlation) and the planner's own row
// estimates (plain EXPLAIN, which reads no table) for each set of predicates. `exactCounts` runs count(*)
// instead, which may read the whole table.

import type { Db, Document } from 'mongodb';
import type { MongoPredicate, MongoShape } from '../core/index';
import type { PgPredicate, PgShape, PgTable } from '../core/index';
import type { MongoStats, PgStats, PgTableStats } from '../core/index';
import { bindPgParams, formatCount, parsePostgresQuery, pgParamSlots, pgParamValue, type PgColumnValues, type PgParamValue } from '../core/index';
import { AdapterError } from './errors';
import { hasPlaceholder, killable, operationTag, toBson } from './mongoOps';
import type { PostgresConnection } from './postgres';
import { mongoAggregate, mongoCountDocuments, mongoEstimatedCount, type Clearance } from './door';

/** Documents read by $sample when the options do not say. */
export const DEFAULT_SAMPLE_SIZE = 1000;
/** Collections up to this size are counted exactly (a count reads at most this many documents). */
export const EXACT_COUNT_LIMIT = 100_000;
const DEFAULT_STATS_TIMEOUT_MS = 10_000;
/** $sample reads only the documents it returns (a random cursor) while they are under 5% of the collection. */
const RANDOM_CURSOR_SHARE = 0.049;

/**
 * The sample size that keeps $sample on its random cursor for a big collection: from 5% of the collection
 * on, $sample scans and sorts the whole of it. Small collections (up to `exactUpTo`) may be read whole.
 */
export function boundedSampleSize(requested: number, total: number, exactUpTo = EXACT_COUNT_LIMIT, allowScan = false): number {
  if (allowScan || total <= exactUpTo) return requested;
  return Math.max(1, Math.min(requested, Math.floor(total * RANDOM_CURSOR_SHARE)));
}

export interface MongoStatsOptions {
  /** Documents in the random sample (ratios on big collections, array detection). Default 1,000. */
  sampleSize?: number;
  /** Count exactly up to this many documents in the collection. Default 100,000. */
  exactUpTo?: number;
  /** The user agreed to exact counts on the whole collection, even a big one (they may scan it). */
  exactCounts?: boolean;
  /** maxTimeMS of each operation. Default 10 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** One predicate set that was counted, for reports and tests. */
export interface CountedSet {
  /** The paths joined with '+', as MongoStats.matching keys them. */
  key: string;
  count: number;
  /** Counted on the collection, or scaled from the sample. */
  exact: boolean;
}

export interface MongoStatsReport {
  stats: MongoStats;
  /** exact: every count was taken on the collection; sampled: ratios in the sample times the size. */
  method: 'exact' | 'sampled';
  /** Documents the sample actually held. */
  sampleSize: number;
  counted: CountedSet[];
  /** Sentences for the user: how the figures were obtained, what could not be counted. */
  notes: string[];
}

interface PredicateSets<P> {
  sets: { key: string; preds: P[] }[];
  /** Key of the set of every equality (and $in / IN) predicate: MongoStats.equality. */
  equalityKey?: string;
  /** Key of the set of every indexable predicate: MongoStats.result. */
  resultKey?: string;
}

/** Each predicate alone, the equalities together, each range with them, and all of them: the sets the advisor looks up. */
function countSets<P>(groups: P[][], keyOf: (p: P) => string, isEquality: (p: P) => boolean, isRange: (p: P) => boolean, withTotals: boolean): PredicateSets<P> {
  const sets = new Map<string, P[]>();
  const add = (preds: P[]): string | undefined => {
    if (preds.length === 0) return undefined;
    const key = [...new Set(preds.map(keyOf))].sort().join('+');
    if (!sets.has(key)) sets.set(key, preds);
    return key;
  };
  const out: PredicateSets<P> = { sets: [] };
  for (const group of groups) {
    for (const p of group) add([p]);
    const eq = group.filter(isEquality);
    const eqKey = add(eq);
    for (const r of group.filter(isRange)) add([...eq, r]);
    const all = add(group);
    if (withTotals) {
      if (eqKey !== undefined) out.equalityKey = eqKey;
      if (all !== undefined) out.resultKey = all;
    }
  }
  out.sets = [...sets.entries()].map(([key, preds]) => ({ key, preds }));
  return out;
}

/** The MongoDB predicate sets to count; $or branches each add their own (no equality/result then). */
export function mongoCountSets(shape: MongoShape): PredicateSets<MongoPredicate> {
  const usable = (ps: MongoPredicate[]) => ps.filter((p) => p.kind !== 'unindexable' && !hasPlaceholder(p.condition));
  const groups = shape.orBranches.length > 0 ? shape.orBranches.map((b) => usable([...shape.predicates, ...b])) : [usable(shape.predicates)];
  return countSets(groups, (p) => p.path, (p) => p.kind === 'equality' || p.kind === 'in', (p) => p.kind === 'range', shape.orBranches.length === 0);
}

/** The filter document that matches exactly the predicates of a set (predicates of one $elemMatch stay together). */
export function mongoSetFilter(preds: readonly MongoPredicate[]): Document {
  const clauses: Document[] = [];
  const elem = new Map<string, Document>();
  for (const p of preds) {
    if (p.elemMatch !== undefined && p.path.startsWith(`${p.elemMatch}.`)) {
      const inner = elem.get(p.elemMatch) ?? {};
      const rel = p.path.slice(p.elemMatch.length + 1);
      if (p.detail === '$or') inner['$and'] = [...((inner['$and'] as Document[] | undefined) ?? []), { $or: p.condition }];
      else inner[rel] = p.condition;
      elem.set(p.elemMatch, inner);
    } else if (p.detail === '$or') {
      clauses.push({ $or: p.condition });
    } else {
      clauses.push({ [p.path]: p.condition });
    }
  }
  for (const [path, inner] of elem) clauses.push({ [path]: { $elemMatch: inner } });
  return toBson(clauses.length === 1 ? clauses[0]! : { $and: clauses });
}

/** Paths the query reads (filter, sort, projection, distinct), for array detection. */
function referencedPaths(shape: MongoShape): string[] {
  const paths = new Set<string>();
  for (const p of [...shape.predicates, ...shape.orBranches.flat()]) {
    paths.add(p.path);
    if (p.elemMatch !== undefined) paths.add(p.elemMatch);
  }
  for (const s of shape.sort) paths.add(s.path);
  for (const f of shape.projection?.fields ?? []) paths.add(f);
  if (shape.distinctField !== undefined) paths.add(shape.distinctField);
  return [...paths];
}

/** Records every prefix of `path` at which some document holds an array. */
function arrayPrefixes(doc: unknown, segments: readonly string[], i: number, prefix: string, out: Set<string>): void {
  if (Array.isArray(doc)) {
    if (prefix !== '') out.add(prefix);
    for (const el of doc) if (el !== null && typeof el === 'object' && !Array.isArray(el)) arrayPrefixes(el, segments, i, prefix, out);
    return;
  }
  if (i >= segments.length || doc === null || typeof doc !== 'object') return;
  const seg = segments[i]!;
  const next = prefix === '' ? seg : `${prefix}.${seg}`;
  arrayPrefixes((doc as Record<string, unknown>)[seg], segments, i + 1, next, out);
}

export async function mongoStats(db: Db, collection: string, shape: MongoShape, opts: MongoStatsOptions = {}): Promise<MongoStatsReport> {
  const requested = Math.max(1, Math.floor(opts.sampleSize ?? DEFAULT_SAMPLE_SIZE));
  const exactUpTo = Math.max(0, Math.floor(opts.exactUpTo ?? EXACT_COUNT_LIMIT));
  const maxTimeMS = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_STATS_TIMEOUT_MS));
  const notes: string[] = [];
  const tag = operationTag('stats');

  const total = await killable(db, tag, opts.signal, (session) => mongoEstimatedCount(db, collection, { maxTimeMS, comment: tag, session }));
  const { sets, equalityKey, resultKey } = mongoCountSets(shape);
  const sampleSize = boundedSampleSize(requested, total, exactUpTo, opts.exactCounts === true);
  if (sampleSize < requested) notes.push(`The sample was cut to ${formatCount(sampleSize)} documents: from 5% of the collection on, $sample reads all of it.`);
  const paths = referencedPaths(shape);

  // One random sample: every set counted on it, and the referenced paths kept to find arrays.
  const facet: Document = { size: [{ $count: 'n' }] };
  sets.forEach((s, i) => {
    facet[`s${i}`] = [{ $match: mongoSetFilter(s.preds) }, { $count: 'n' }];
  });
  // Only the referenced paths travel back (a path under another one would collide in $project).
  const kept = paths.filter((p) => !paths.some((q) => q !== p && p.startsWith(`${q}.`)) && p !== '_id');
  facet['docs'] = [{ $project: { _id: 0, ...Object.fromEntries(kept.map((p) => [p, 1])) } }];
  const pipeline: Document[] = [{ $sample: { size: sampleSize } }, { $facet: facet }];
  const sampled = await killable(db, tag, opts.signal, (session) => mongoAggregate(db, collection, pipeline, { maxTimeMS, comment: tag, session }));
  const row = (sampled[0] ?? {}) as Document;
  const countOf = (k: string): number => ((row[k] as Document[] | undefined)?.[0]?.['n'] as number | undefined) ?? 0;
  const inSample = countOf('size');

  const arrays = new Set<string>();
  for (const doc of (row['docs'] as Document[] | undefined) ?? []) {
    for (const p of paths) arrayPrefixes(doc, p.split('.'), 0, '', arrays);
  }

  const exact = total <= exactUpTo || opts.exactCounts === true;
  const stats: MongoStats = { total };
  const matching: Record<string, number> = {};
  const counted: CountedSet[] = [];
  let fellBack = 0;
  for (const [i, s] of sets.entries()) {
    let value: number | undefined;
    let isExact = false;
    if (exact) {
      try {
        const options: Document = { maxTimeMS, comment: tag };
        if (!opts.exactCounts) options['limit'] = exactUpTo;
        value = await killable(db, tag, opts.signal, (session) => mongoCountDocuments(db, collection, mongoSetFilter(s.preds), { ...options, session }));
        isExact = true;
      } catch (err) {
        if (!(err instanceof AdapterError) || err.kind !== 'timeout') throw err;
        fellBack++;
      }
    }
    if (value === undefined) {
      const n = countOf(`s${i}`);
      // None in the sample: fewer than one in `inSample`; half of that is the least biased single figure.
      value = inSample > 0 ? Math.round(((n === 0 ? 0.5 : n) / inSample) * total) : 0;
    }
    matching[s.key] = value;
    counted.push({ key: s.key, count: value, exact: isExact });
    if (s.key === equalityKey) stats.equality = value;
    if (s.key === resultKey) stats.result = value;
  }
  if (Object.keys(matching).length > 0) stats.matching = matching;
  if (arrays.size > 0) stats.arrays = [...arrays].sort();

  const fmt = formatCount;
  if (exact && fellBack === 0) {
    notes.push(`Selectivity counted exactly on ${collection} (${fmt(total)} documents${opts.exactCounts && total > exactUpTo ? ', counted in full as allowed' : ''}).`);
  } else if (exact) {
    notes.push(`Selectivity counted on ${collection}; ${fellBack} count${fellBack > 1 ? 's' : ''} ran past the time limit and ${fellBack > 1 ? 'were' : 'was'} estimated from a random sample of ${fmt(inSample)} documents instead.`);
  } else {
    notes.push(`Selectivity estimated from a random sample of ${fmt(inSample)} of about ${fmt(total)} documents in ${collection} ($sample): the counts are scaled, not exact; more than ${fmt(exactUpTo)} documents are not counted one by one unless you allow it.`);
  }
  if (inSample > 0 && arrays.size > 0) notes.push(`Arrays found in the sample at ${[...arrays].sort().join(', ')} (the indexes on them are multikey).`);
  return { stats, method: exact && fellBack === 0 ? 'exact' : 'sampled', sampleSize: inSample, counted, notes };
}

// ---- PostgreSQL ---------------------------------------------------------------------------------------

/** Runs one read-only query (catalog or count) on the same server. */
/** The catalog connection of an advice session: read-only, bounded by statement_timeout. */
export interface PgCatalog {
  /** A read of the catalog: the product's own statement. */
  read(sql: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  /** A count of the statement's predicates, which runs them: only with the statement's clearance. */
  count(clearance: Clearance, sql: string): Promise<Record<string, unknown>[]>;
}

export interface PgStatsOptions {
  /**
   * The user agreed to exact count(*) per predicate set, which may read whole tables, and the side-effect
   * check cleared the statement whose predicates they run.
   */
  exactCounts?: Clearance;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface PgStatsReport {
  stats: PgStats;
  /** estimated: pg_class, pg_stats and plain EXPLAIN row estimates; exact: count(*) per set. */
  method: 'estimated' | 'exact';
  notes: string[];
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** FROM item for one table as the query names it, so the predicates' own text resolves (alias included). */
function fromItem(t: PgTable): string {
  return `${t.schema !== undefined ? `${quoteIdent(t.schema)}.` : ''}${quoteIdent(t.name)}${t.alias !== undefined ? ` AS ${quoteIdent(t.alias)}` : ''}`;
}

function orderable(p: PgPredicate): boolean {
  return (p.kind === 'equality' || p.kind === 'in' || p.kind === 'range') && !/\$\d/.test(p.text);
}

export async function postgresStats(conn: PostgresConnection, catalog: PgCatalog, shapes: PgShape[], opts: PgStatsOptions = {}): Promise<PgStatsReport> {
  const tables: Record<string, PgTableStats> = {};
  const notes: string[] = [];
  const timeoutMs = opts.timeoutMs ?? DEFAULT_STATS_TIMEOUT_MS;
  const cancelled = (): void => {
    if (opts.signal?.aborted) throw new AdapterError('cancelled', 'Reading the statistics was cancelled.');
  };
  for (const shape of shapes) {
    for (const t of shape.tables) {
      if (tables[t.name] !== undefined) continue;
      cancelled();
      const ts: PgTableStats = {};
      const rel = await catalog.read(
        `SELECT c.reltuples::float8 AS rows, c.relpages::float8 AS pages, n.nspname AS schema
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relname = $1 AND c.relkind IN ('r', 'p', 'm', 'f')
            AND (($2::text IS NULL AND pg_table_is_visible(c.oid)) OR n.nspname = $2)
          LIMIT 1`,
        [t.name, t.schema ?? null],
      );
      if (rel.length === 0) {
        notes.push(`The table ${t.name} was not found on the server, so no statistics were read for it.`);
        continue;
      }
      const reltuples = Number(rel[0]!['rows']);
      const schema = String(rel[0]!['schema']);
      if (reltuples >= 0) {
        ts.rows = reltuples;
        ts.pages = Number(rel[0]!['pages']);
      } else {
        notes.push(`${t.name} has never been analyzed (pg_class.reltuples is -1): the estimates are rough until ANALYZE ${t.name} runs.`);
        const est = await planRows(conn, `SELECT 1 FROM ${fromItem(t)}`, timeoutMs, opts.signal);
        if (est !== undefined) ts.rows = est;
      }
      const preds = shape.predicates.filter((p) => p.table === t.key);
      const columns = [...new Set([...preds.map((p) => p.column), ...shape.orderBy.filter((o) => o.table === t.key).map((o) => o.column)])];
      if (columns.length > 0) {
        const st = await catalog.read(
          'SELECT attname, n_distinct::float8 AS n_distinct, correlation::float8 AS correlation FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = ANY($3::text[])',
          [schema, t.name, columns],
        );
        for (const s of st) {
          const col = String(s['attname']);
          const nd = Number(s['n_distinct']);
          if (Number.isFinite(nd) && ts.rows !== undefined) (ts.distinct ??= {})[col] = nd >= 0 ? nd : Math.round(-nd * ts.rows);
          if (s['correlation'] !== null && Number.isFinite(Number(s['correlation']))) (ts.correlation ??= {})[col] = Number(s['correlation']);
        }
        if (st.length === 0 && reltuples >= 0) notes.push(`pg_stats has no rows for ${t.name}: run ANALYZE ${t.name} so that the planner and this advice know its values.`);
      }
      const { sets, equalityKey, resultKey } = countSets([preds.filter(orderable)], (p) => p.column, (p) => p.kind === 'equality' || p.kind === 'in', (p) => p.kind === 'range', true);
      for (const set of sets) {
        cancelled();
        const where = set.preds.map((p) => `(${p.text})`).join(' AND ');
        let n: number | undefined;
        try {
          if (opts.exactCounts) {
            const r = await catalog.count(opts.exactCounts, `SELECT count(*)::float8 AS n FROM ${fromItem(t)} WHERE ${where}`);
            n = Number(r[0]?.['n']);
          } else {
            n = await planRows(conn, `SELECT 1 FROM ${fromItem(t)} WHERE ${where}`, timeoutMs, opts.signal);
          }
        } catch (err) {
          if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth')) throw err;
          notes.push(`The rows matching ${set.preds.map((p) => p.text).join(' AND ')} could not be estimated: ${err instanceof Error ? err.message : String(err)}`);
        }
        if (n === undefined || !Number.isFinite(n)) continue;
        (ts.matching ??= {})[set.key] = n;
        if (set.key === equalityKey) ts.equality = n;
        if (set.key === resultKey) ts.result = n;
      }
      tables[t.name] = ts;
    }
  }
  notes.unshift(opts.exactCounts
    ? 'Selectivity counted exactly with count(*) on each table, as allowed (this reads the tables).'
    : "Selectivity from the planner's statistics: pg_class, pg_stats and plain EXPLAIN row estimates (no table is read).");
  return { stats: { tables }, method: opts.exactCounts ? 'exact' : 'estimated', notes };
}

/** The planner's row estimate for a query, from a plain EXPLAIN (nothing runs). */
async function planRows(conn: PostgresConnection, sql: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<number | undefined> {
  const r = await conn.explain(sql, { timeoutMs, ...(signal ? { signal } : {}) });
  if (!r.load.ok) return undefined;
  const root = r.load.plan.root.metrics;
  return root.plannedRows ?? root.planRowsPerLoop;
}

// ---- $n parameters bound from the statistics ------------------------------------------------------------
//
// `qpi check` on a server before PostgreSQL 16, which has no EXPLAIN (GENERIC_PLAN), explains a statement
// with $n parameters with values chosen from the statistics of the columns they are compared to (core
// pgParams, the measurement's rule), read through the catalog connection; the tournament binds the same
// way on its measurement connection (measure/pgCandidates.ts).

function qualifiedName(schema: string | undefined, name: string): string {
  return `${schema !== undefined ? `${quoteIdent(schema)}.` : ''}${quoteIdent(name)}`;
}

/**
 * What pg_stats says of one column: its type, its most common values and its histogram, read as text
 * through an array of the column's own type. Undefined when the table or column is not found; empty lists
 * when the table was never analysed.
 */
export async function pgColumnValues(catalog: Pick<PgCatalog, 'read'>, schema: string | undefined, table: string, column: string): Promise<PgColumnValues | undefined> {
  const rows = await catalog.read(
    `SELECT format_type(a.atttypid, a.atttypmod) AS type,
       (SELECT s.most_common_vals::text FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = a.attname ORDER BY s.inherited DESC LIMIT 1) AS mcv,
       (SELECT s.histogram_bounds::text FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = a.attname ORDER BY s.inherited DESC LIMIT 1) AS hist
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
     WHERE c.oid = to_regclass($1) AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped`,
    [qualifiedName(schema, table), column],
  );
  const row = rows[0] as { type: string; mcv: string | null; hist: string | null } | undefined;
  if (!row) return undefined;
  if (row.mcv === null && row.hist === null) return { type: row.type, common: [], ordered: [] };
  // The type comes from the catalog's own format_type, so it reads back as a type name.
  const lists = await catalog.read(`SELECT array(SELECT x::text FROM unnest($1::text::${row.type}[]) x) AS common, array(SELECT x::text FROM unnest($1::text::${row.type}[]) x ORDER BY x) AS sorted, array(SELECT x::text FROM unnest($2::text::${row.type}[]) x) AS hist`, [row.mcv, row.hist]);
  const l = lists[0] as { common: string[]; sorted: string[]; hist: string[] };
  return { type: row.type, common: l.common, ordered: l.hist.length > 0 ? l.hist : l.sorted };
}

/** A statement with its parameters bound: the text to explain and how each value was chosen. */
export type BoundStatement = { ok: true; sql: string; values: PgParamValue[] } | { ok: false; why: string };

/**
 * The statement with its $n parameters bound to values chosen from the statistics of the columns they
 * are compared to; or why it cannot be, in one sentence.
 */
export async function pgBindFromStatistics(catalog: Pick<PgCatalog, 'read'>, sql: string): Promise<BoundStatement> {
  const parsed = await parsePostgresQuery(sql);
  if (!parsed.ok) return { ok: false, why: parsed.refusal };
  const { slots, unknown } = pgParamSlots(parsed.shapes);
  const first = unknown[0];
  if (first) return { ok: false, why: `$${first.n} is compared to no column whose statistics could give it a value (${first.where}).` };
  const cache = new Map<string, PgColumnValues | undefined>();
  const values: PgParamValue[] = [];
  for (const slot of slots) {
    let cv: PgColumnValues | undefined;
    if (slot.column !== undefined && slot.table !== undefined) {
      const key = `${slot.schema ?? ''}.${slot.table}.${slot.column}`;
      // A column whose statistics cannot be read is one not found: the statement is then said not bindable.
      if (!cache.has(key)) cache.set(key, await pgColumnValues(catalog, slot.schema, slot.table, slot.column).catch(() => undefined));
      cv = cache.get(key);
    }
    const v = pgParamValue(slot, cv);
    if (!v) return { ok: false, why: `$${slot.n} is compared to ${slot.table}.${slot.column}, ${cv ? 'which has no statistics (ANALYZE has not read it)' : 'which was not found in the catalog'}.` };
    values.push(v);
  }
  const text = bindPgParams(sql, values);
  const again = await parsePostgresQuery(text);
  if (!again.ok || again.shapes.some((sh) => sh.maxParam > 0)) return { ok: false, why: 'The statement could not be read again with values from the statistics in place of its parameters.' };
  return { ok: true, sql: text, values };
}
