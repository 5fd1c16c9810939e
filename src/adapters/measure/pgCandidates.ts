// Every candidate measured on PostgreSQL: candidates for the one table of a single-table SELECT
// (core/advice/pgCandidates.ts), shortlisted with HypoPG when it is installed (plain EXPLAIN with each as
// a hypothetical index on the real table: nothing is built), then each measured for real on a copy: a
// TEMP table with the real table's name holds the whole table up to 200,000 rows, else a TABLESAMPLE of
// its rows (the query's unqualified name then resolves to it, since pg_temp comes first in the search
// path), vacuumed or analysed like the real one, and dropped at the end; inside one transaction that is
// always rolled back, today's indexes are rebuilt on it and the query runs under
// EXPLAIN (ANALYZE, BUFFERS) once as today, once per candidate (each built after a SAVEPOINT and dropped
// by rolling back to it), once without any index scan, and once with every candidate (the planner's own
// choice). The user's table is only read (a copy takes the lock a SELECT takes); nothing remains.
// A SELECT over several tables (or one table under several aliases), or with a LATERAL or correlated
// subquery, is measured on whole copies of its tables instead (measurePgJoinCandidates), since a sample of one
// side changes what the join does. A table named with its schema is copied from there and the statement
// run on the copies names pg_temp's copy instead (onCopies); $n parameters are bound first to values
// from the statistics of the columns they are compared to (bindFromStatistics).

import pg from 'pg';
import { canonicalPgKey, pgCandidates, pgExtensionsFor, pgJoinCandidates, type PgCandidate } from '../../core/index';
import { createIndexSql, formatCount, formatMs, formatSeconds } from '../../core/index';
import type { PgShape } from '../../core/index';
import { applyTournament, indexLabel, scalesWithData, tournamentSampleSize, type TournamentInput } from '../../core/index';
import type { Advice, ExistingPgIndex, MeasuredWork, PgIndexSpec, PgStats, Tournament, TournamentEntry } from '../../core/index';
import { loadPlan, mergedPgShape, parsePostgresQuery, renameRelations } from '../../core/index';
import { bindPgParams, type PgParamValue } from '../../core/index';
import { pgBindFromStatistics } from '../stats';
import type { Plan } from '../../core/index';
import { AdapterError, firstLine, pgLostError } from '../errors';
import { afterCancel, CANCEL_GRACE_MS, MeasureBudget } from '../deadline';
import { pgExecute, pgSend, pgTrialExtensions, type Clearance } from '../door';
import { listPhrases } from '../pgSideEffects';
import type { PgScratch } from '../advise';
import type { PostgresConnection } from '../postgres';
import { attachFigures, planShape, type MeasureProgress } from './figures';

export const PG_WORK_UNIT = 'buffers (shared + local, hit + read) under EXPLAIN (ANALYZE, BUFFERS)';
/**
 * Rows a sample holds at least: a table up to this size is copied whole. Copying rows into a temporary
 * table is cheap (about a second for 200,000 rows here), and only the whole table has the B-tree heights
 * and page counts the query will meet: on a fifth of it a wide index and a narrow one read the same
 * number of pages, where on the whole table the narrow one reads one page less per lookup.
 */
const PG_MIN_SAMPLE = 200_000;
/** Candidates measured for real after the HypoPG shortlist. */
const SHORTLIST = 10;

export interface PgCandidatesOptions {
  stats?: PgStats;
  existing: ExistingPgIndex[];
  cap?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Rows in the sample at least, and at most. */
  minSample?: number;
  maxSample?: number;
  /**
   * When the whole measurement must end (epoch ms): no candidate starts after it, each statement's limit
   * is cut to what is left, and the candidates measured by then are ranked, the rest named as not measured.
   */
  until?: number;
  /** Called as candidates are measured: how many of how many, for a front end's progress line. */
  onProgress?: (p: MeasureProgress) => void;
}

export interface PgCandidatesReport {
  tournament?: Tournament;
  notes: string[];
  /** Why nothing was measured, one sentence, when the candidates were not run. */
  reason?: string;
  /**
   * What running the statement would change that the rollback does not undo, when that is why it was
   * not run: the candidates are then ranked without executing it (the planner's estimates).
   */
  sideEffects?: string[];
}

/** Why the candidates of this statement cannot be measured, or undefined when it can. */
export function pgCandidatesRefusal(shape: PgShape): string | undefined {
  if (shape.statement !== 'select') return 'Only a SELECT is measured on a sample';
  if (shape.maxParam > 0) return 'The statement has parameters ($1...) whose values are not known here';
  return undefined;
}

/**
 * The real table behind each temporary copy, by the copy's name (the table's own name), found as the
 * statement names it (with its schema, or through the search path); or why the statement cannot run on
 * copies: a table not found, or two tables of one name in different schemas, which would share a copy.
 */
async function realTables(q: ScratchRun['q'], shape: PgShape): Promise<Map<string, string> | string> {
  const real = new Map<string, string>();
  for (const t of shape.tables) {
    const r = await q(`SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(${pg.escapeLiteral(qualified(t.schema, t.name))})`);
    const name = (r.rows[0] as { name?: string } | undefined)?.name;
    if (name === undefined) return `The table ${qualified(t.schema, t.name)} was not found`;
    const before = real.get(t.name);
    if (before !== undefined && before !== name) return `The statement reads ${before} and ${name}, two tables of one name, which one temporary copy cannot stand for`;
    real.set(t.name, name);
  }
  return real;
}

/**
 * The statement pointed at the copies: a table named with its schema (app.orders, "Sales"."Orders") does
 * not resolve to a temporary table the way an unqualified name does, so its name becomes pg_temp's copy.
 */
function onCopies(text: string, shape: PgShape): string {
  const qualifiedNames = new Set(shape.tables.filter((t) => t.schema !== undefined).map((t) => `${t.schema}\u0000${t.name}`));
  if (qualifiedNames.size === 0) return text;
  return renameRelations(text, (rel) => (rel.schema !== undefined && qualifiedNames.has(`${rel.schema}\u0000${rel.name}`) ? `pg_temp.${quote(rel.name)}` : undefined)) ?? text;
}

/** A measurement's label with the parameter values it was measured with. */
function withParams(label: string, params: readonly PgParamValue[]): string {
  return params.length === 0 ? label : `${label}, with ${params.map((v) => `$${v.n} = ${v.literal}`).join(', ')}`;
}

/** The name of a table as written, quoted, for to_regclass. */
function qualified(schema: string | undefined, name: string): string {
  return `${schema !== undefined ? `${quote(schema)}.` : ''}${quote(name)}`;
}

/**
 * The statement with its $n parameters bound to values chosen from the statistics of the columns they
 * are compared to (stats.ts, as `qpi check` binds them before PostgreSQL 16), read on the measurement's
 * connection, and its shape read again; or why it cannot be, in one sentence.
 */
async function bindFromStatistics(client: pg.Client, sql: string): Promise<{ sql: string; shape: PgShape; values: PgParamValue[] } | { why: string }> {
  const bound = await pgBindFromStatistics({ read: async (text, params) => (await pgSend(client, text, params)).rows }, sql);
  if (!bound.ok) return { why: bound.why.replace(/\.$/, '') };
  const again = await parsePostgresQuery(bound.sql);
  const shape = again.ok ? mergedPgShape(again.shapes) : undefined;
  if (!shape || shape.maxParam > 0) return { why: 'The statement could not be read again with values in place of its parameters' };
  return { sql: bound.sql, shape, values: bound.values };
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function blocks(plan: Plan): number {
  const b = plan.root.metrics.buffers ?? {};
  return (b.sharedHit ?? 0) + (b.sharedRead ?? 0) + (b.localHit ?? 0) + (b.localRead ?? 0);
}

function measuredOf(plan: Plan): MeasuredWork {
  const sorts = plan.nodes.filter((n) => n.kind === 'Sort' || n.kind === 'Incremental Sort');
  const sorted = sorts.reduce((acc, n) => acc + (n.children[0]?.metrics.rowsReturned ?? 0), 0);
  const buffers = blocks(plan);
  const out: MeasuredWork = { work: buffers, buffers, rows: plan.totals.rows ?? plan.root.metrics.rowsReturned ?? 0, blockingSort: sorts.length > 0, sorted, plan: planShape(plan) };
  if (plan.totals.executionTimeMs !== undefined) out.timeMs = plan.totals.executionTimeMs;
  const ix = plan.nodes.find((n) => n.details.indexName !== undefined)?.details.indexName;
  if (ix !== undefined) out.index = ix;
  return out;
}

/**
 * A run that read fewer buffers than this is run again and the lesser figure kept. The first index scan
 * of a session that needs an operator family's support procedures looks them up in the catalog, and
 * those catalog buffers are counted in the plan's Buffers: on PostgreSQL 18, `a = 42 AND c > 10 ORDER BY
 * b LIMIT 50` reads 7 buffers with (a, b, c) on its first run and 4 on every run after, so whichever
 * candidate was measured first could lose by those 3. Above this figure, 3 buffers are within the 10%
 * that is noise anyway.
 */
const RERUN_BELOW_BUFFERS = 50;

/** Measures `run`, twice when its first figure is small enough for the catalog's buffers to matter. */
async function settled(run: () => Promise<Plan>): Promise<MeasuredWork> {
  const first = measuredOf(await run());
  if (first.work >= RERUN_BELOW_BUFFERS) return first;
  const again = measuredOf(await run());
  return again.work < first.work ? again : first;
}

/** The DDL of a spec on the sample: no schema (the temp table shadows the name), no CONCURRENTLY, a name. */
function ddlOnSample(spec: PgIndexSpec, name: string): string {
  const { schema: _schema, ...rest } = spec;
  void _schema;
  return createIndexSql(rest).replace(/^CREATE INDEX CONCURRENTLY ON/, `CREATE INDEX ${quote(name)} ON`).replace(/;\s*$/, '');
}

function existingSpec(ix: ExistingPgIndex): PgIndexSpec | undefined {
  const method = ix.method ?? 'btree';
  if ((method !== 'btree' && method !== 'gin' && method !== 'gist') || ix.invalid) return undefined;
  const spec: PgIndexSpec = { engine: 'postgres', table: ix.table, method, keys: ix.columns.map((c) => ({ column: c.column ?? c.expression ?? '', ...(c.column === undefined ? { expression: true } : {}), ...(c.desc ? { desc: true } : {}), ...(c.nullsFirst !== undefined ? { nullsFirst: c.nullsFirst } : {}) })) };
  if (ix.include?.length) spec.include = ix.include;
  if (ix.predicate) spec.predicate = ix.predicate;
  return spec;
}

/** What a measurement runs on the scratch connection: statements, and the query under EXPLAIN (ANALYZE, BUFFERS). */
interface ScratchRun {
  q(text: string): Promise<pg.QueryResult>;
  /**
   * Runs `body` with the extensions named created inside the transaction and undone after it (the door's
   * pgTrialExtensions: only btree_gin and pg_trgm, checked gone afterwards).
   */
  withExtensions<T>(names: readonly string[], body: () => Promise<T>): Promise<T>;
  /**
   * Runs `asRun` (the statement pointed at the copies) under EXPLAIN (ANALYZE, BUFFERS), once `text` (the
   * statement as the user wrote it, naming the real tables) is known to run nothing the rollback does
   * not undo: otherwise throws kind 'side-effects' and runs nothing.
   */
  explain(text: string, asRun?: string): Promise<Plan>;
  /**
   * Copies a table (or a sample of it) into a temporary table of the same name, outside any transaction
   * so it can be vacuumed like the real one: VACUUM sets the visibility map, without which the planner
   * costs an index-only scan as if it read the table too and picks otherwise than it would on the real
   * table. Vacuumed when most of the real table's pages are all-visible, else only analysed. Dropped when
   * `onScratch` ends (and by the server with the connection). Returns the rows copied.
   */
  copy(realName: string, name: string, samplePct: number): Promise<number>;
}

/**
 * Runs `body` on the scratch connection: Cancel ends the statement on the server, a BEGIN the body sent
 * is always rolled back, a cancel or a time limit becomes an AdapterError, and any other failure is
 * handed to `failed` (the measurement falls back to the estimates).
 */
async function onScratch<T>(scratch: PgScratch, conn: PostgresConnection, clearance: Clearance, signal: AbortSignal | undefined, failed: (err: unknown) => T, body: (run: ScratchRun) => Promise<T>): Promise<T> {
  const client = scratch.client;
  // The statement's own clearance, given; a text built from it (a rewrite) is asked of the catalog once.
  const cleared = new Map<string, Clearance>([[clearance.statement, clearance]]);
  let began = false;
  const temps: string[] = [];
  const q = async (text: string): Promise<pg.QueryResult> => {
    if (signal?.aborted) throw new AdapterError('cancelled', 'The measurement was cancelled.');
    if (text === 'BEGIN') began = true;
    return pgSend(client, text);
  };
  const copy = async (realName: string, name: string, samplePct: number): Promise<number> => {
    const vis = await q(`SELECT c.relpages::float8 AS pages, c.relallvisible::float8 AS visible FROM pg_class c WHERE c.oid = ${pg.escapeLiteral(realName)}::regclass`);
    const row = vis.rows[0] as { pages?: number; visible?: number } | undefined;
    temps.push(name);
    // BERNOULLI keeps rows at random from every page; the table is only read, as a SELECT reads it.
    // eslint-disable-next-line no-restricted-properties -- SQL, not a sentence: TABLESAMPLE takes a plain decimal.
    await q(`CREATE TEMP TABLE ${quote(name)} AS SELECT * FROM ${realName}${samplePct < 100 ? ` TABLESAMPLE BERNOULLI (${samplePct.toFixed(4)})` : ''}`);
    // The copy's statistics at the resolution of the real table's (the longest histogram or list of
    // common values there): with coarser ones the planner may pick another join or scan than it would.
    const res = await q(`SELECT coalesce(max(greatest(coalesce(array_length(s.histogram_bounds, 1) - 1, 0), coalesce(array_length(s.most_common_freqs, 1), 0))), 0)::int AS n FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = s.schemaname WHERE c.oid = ${pg.escapeLiteral(realName)}::regclass`);
    const target = Math.min(10_000, Math.max(100, Number((res.rows[0] as { n?: number } | undefined)?.n ?? 0)));
    await q(`SET default_statistics_target = ${target}`);
    const pages = Number(row?.pages ?? 0);
    await q(`${pages > 0 && Number(row?.visible ?? 0) / pages >= 0.5 ? 'VACUUM (ANALYZE)' : 'ANALYZE'} pg_temp.${quote(name)}`);
    await q('RESET default_statistics_target');
    return Number(((await q(`SELECT count(*)::float8 AS n FROM pg_temp.${quote(name)}`)).rows[0] as { n: number }).n);
  };
  const explain = async (text: string, asRun = text): Promise<Plan> => {
    let clearance = cleared.get(text);
    if (!clearance) {
      const verdict = await conn.verdict(text);
      const items = [...verdict.effects.execution, ...verdict.effects.planning];
      if (!verdict.clearance) throw new AdapterError('side-effects', sideEffectsSentence(items), { sideEffects: items });
      clearance = verdict.clearance;
      cleared.set(text, clearance);
    }
    if (signal?.aborted) throw new AdapterError('cancelled', 'The measurement was cancelled.');
    const r = await pgExecute(client, clearance, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${asRun}`);
    const raw = (r.rows[0] as Record<string, unknown>)['QUERY PLAN'];
    const loaded = loadPlan(typeof raw === 'string' ? raw : JSON.stringify(raw));
    if (!loaded.ok) throw new AdapterError('server', loaded.refusal);
    return loaded.plan;
  };
  const onAbort = (): void => void scratch.cancel().catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const withExtensions = <T>(names: readonly string[], fn: () => Promise<T>): Promise<T> => {
      if (signal?.aborted) throw new AdapterError('cancelled', 'The measurement was cancelled.');
      return names.length === 0 ? fn() : pgTrialExtensions(client, names, fn);
    };
    return await afterCancel(body({ q, explain, copy, withExtensions }), signal, CANCEL_GRACE_MS, async () => {
      scratch.abandon();
      return new AdapterError('cancelled', `The measurement was cancelled; the server did not stop it within ${formatSeconds(CANCEL_GRACE_MS)}, so its connection was closed and the backend asked to end.`);
    });
  } catch (err) {
    if (err instanceof AdapterError) throw err;
    if (signal?.aborted) throw new AdapterError('cancelled', 'The measurement was cancelled and stopped on the server.');
    const code = (err as { code?: string }).code;
    if (code === '57014') throw new AdapterError('timeout', `The measurement ran past its time limit (statement_timeout): ${firstLine(err)}.`, { code });
    const lost = pgLostError(err, 'while the measurement ran');
    if (lost) throw lost;
    return failed(err);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    for (let attempt = 0; began && attempt < 3; attempt++) {
      if (await pgSend(client, 'ROLLBACK').then(() => true, () => false)) break;
    }
    for (const t of temps) await pgSend(client, `DROP TABLE IF EXISTS pg_temp.${quote(t)}`).catch(() => undefined);
    await pgSend(client, 'RESET statement_timeout; RESET default_statistics_target').catch(() => undefined);
  }
}

/**
 * Builds today's indexes of `table` on its temporary copy, under their own names (the temp schema is
 * another namespace); one that cannot be built there is left out. Returns name -> canonical key.
 */
async function copyIndexes(q: ScratchRun['q'], existing: ExistingPgIndex[], table: string, signal: AbortSignal | undefined): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const ix of existing.filter((x) => x.table === table)) {
    const spec = existingSpec(ix);
    if (!spec) continue;
    await q('SAVEPOINT ix');
    try {
      await q(ddlOnSample(spec, ix.name));
      await q('RELEASE SAVEPOINT ix');
      names.set(ix.name, canonicalPgKey(spec));
    } catch (err) {
      if (signal?.aborted) throw err;
      await q('ROLLBACK TO SAVEPOINT ix');
    }
  }
  return names;
}

/**
 * Measures every candidate for a single-table SELECT and rewrites the advice's suggestions in measured order;
 * returns a report without a tournament when the statement is not one it judges. Throws AdapterError
 * for a cancel or a lost connection; the transaction is rolled back in every case.
 */
export async function measurePgCandidates(conn: PostgresConnection, scratch: PgScratch, sql: string, shape: PgShape, advice: Advice, opts: PgCandidatesOptions): Promise<PgCandidatesReport> {
  const report: PgCandidatesReport = { notes: [] };
  const notMeasured = (why: string): PgCandidatesReport => {
    report.reason = `${why}, so it was not measured: the suggestions were checked with the planner's estimates instead.`;
    report.notes.push(report.reason);
    return report;
  };
  // Code binds $n at run time: the statement is measured with values from the columns' statistics.
  let params: PgParamValue[] = [];
  if (shape.statement === 'select' && shape.maxParam > 0) {
    const bound = await bindFromStatistics(scratch.client, sql);
    if ('why' in bound) return notMeasured(bound.why);
    ({ sql, shape, values: params } = bound);
    report.notes.push(`Measured with ${params.map((v) => v.why).join('; ')}.`);
  }
  const refusal = pgCandidatesRefusal(shape);
  if (refusal !== undefined) return notMeasured(refusal);
  // The measurement executes the statement: not one that would change what the rollback does not undo.
  const verdict = await clearedOrRefused(conn, sql, report);
  if (!('clearance' in verdict)) return verdict;
  const clearance = verdict.clearance;
  // Several tables, or one table under several aliases (joined with itself, or in an EXISTS of its own).
  if (shape.tables.length > 1) return measurePgJoinCandidates(conn, scratch, clearance, sql, shape, advice, opts, report, params);
  const only = shape.tables[0]!;
  const ts = opts.stats?.tables?.[only.name] ?? opts.stats?.tables?.[only.key];
  const set = pgCandidates(shape, { advice, existing: opts.existing, ...(opts.cap !== undefined ? { cap: opts.cap } : {}), ...(ts ? { stats: ts } : {}) });
  if (!set || set.candidates.length === 0) return notMeasured('No index could be proposed for this statement');
  const table = set.table;
  const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? 30_000));
  const signal = opts.signal;
  const total = Math.max(0, Math.round(ts?.rows ?? 0));

  // HypoPG: a shortlist by the planner's estimate on the real table, the rules' picks always kept.
  let candidates = set.candidates;
  const hypo = await conn.hypopg();
  if (hypo.installed && candidates.length > SHORTLIST) {
    const costed: { c: PgCandidate; cost: number }[] = [];
    for (const c of candidates) {
      if (c.spec.method !== 'btree' || c.existing !== undefined) {
        costed.push({ c, cost: -1 });
        continue;
      }
      try {
        const r = await conn.explain(sql, { timeoutMs, indexes: { ddl: [c.ddl], mode: 'hypothetical' }, ...(signal ? { signal } : {}) });
        costed.push({ c, cost: r.load.ok ? (r.load.plan.root.metrics.totalCost ?? Infinity) : Infinity });
      } catch (err) {
        if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network')) throw err;
        costed.push({ c, cost: Infinity });
      }
    }
    const keep = costed.filter((x) => x.cost < 0 || x.c.ruleRank !== undefined);
    const rest = costed.filter((x) => !keep.includes(x)).sort((a, b) => a.cost - b.cost).slice(0, Math.max(0, SHORTLIST - keep.length));
    candidates = [...keep, ...rest].map((x) => x.c);
    report.notes.push(`HypoPG shortlisted ${candidates.length} of ${set.candidates.length} candidates by the planner's estimated cost (nothing built).`);
  }

  const size = tournamentSampleSize(total, ts?.result, {
    ...(shape.limit !== undefined ? { limit: shape.limit + (shape.offset ?? 0) } : {}),
    min: opts.minSample ?? PG_MIN_SAMPLE,
    ...(opts.maxSample !== undefined ? { max: opts.maxSample } : {}),
  });
  const pct = total > 0 ? Math.min(100, (100 * size) / total) : 100;
  const failed = (err: unknown): PgCandidatesReport => {
    report.reason = `The measurement on a sample failed, so the suggestions were checked with the planner's estimates instead: ${firstLine(err)}.`;
    report.notes.push(report.reason);
    return report;
  };
  const budget = new MeasureBudget(opts.until, timeoutMs);
  return onScratch(scratch, conn, clearance, signal, failed, async ({ q, explain: run, copy, withExtensions }) => {
    const explain = (text = sql): Promise<Plan> => run(text, onCopies(text, shape));
    // Extensions a candidate needs (btree_gin, pg_trgm): installed, available to create inside the
    // transaction (and undone with it), or missing from the server.
    const wanted = [...new Set(candidates.flatMap((c) => pgExtensionsFor(c.spec)))];
    const ext = new Map<string, 'installed' | 'available'>();
    if (wanted.length > 0) {
      const r = await q(`SELECT name, installed_version IS NOT NULL AS installed FROM pg_available_extensions WHERE name IN (${wanted.map((n) => pg.escapeLiteral(n)).join(', ')})`);
      for (const row of r.rows as { name: string; installed: boolean }[]) ext.set(row.name, row.installed ? 'installed' : 'available');
    }
    const toCreate = (spec: PgIndexSpec): string[] => pgExtensionsFor(spec).filter((n) => ext.get(n) === 'available');
    const missing = (spec: PgIndexSpec): string[] => pgExtensionsFor(spec).filter((n) => !ext.has(n));
    const created = new Set<string>();
    const real = await realTables(q, shape);
    if (typeof real === 'string') return notMeasured(real);
    const realName = real.get(table.name)!;
    await q(`SET statement_timeout = ${timeoutMs}`);
    const inSample = await copy(realName, table.name, pct);
    await q('BEGIN');
    // Today's indexes on the sample, under their own names (the temp schema is another namespace).
    const todayNames = await copyIndexes(q, opts.existing, table.name, signal);
    const today = await settled(() => explain());

    // Each candidate alone, as a hint would run it: today's copies dropped and no sequential scan, so
    // the plan uses the candidate wherever it can (the sample is small, and the planner would often
    // scan it whole where it would not scan the whole table). The savepoint brings the copies back.
    const entries: TournamentEntry[] = [];
    const named = candidates.map((c, i) => ({ c, name: `qpi_c${i}` }));
    // Rewrites the rules recommend, measured as the user would run them, with their index.
    const rewrites = advice.suggestions.flatMap((s) => {
      if (s.servesQueryAsWritten || s.action !== 'create' || s.index?.engine !== 'postgres' || s.index.table !== table.name) return [];
      const rw = s.rewrites.map((r) => ({ ...r, text: bindPgParams(r.text, params) })).find((r) => (r.parameters ?? []).length === 0 && !/\$\d/.test(r.text));
      return rw ? [{ s, index: s.index, text: rw.text }] : [];
    });
    // Each candidate, each rewrite, and the table scan.
    const of = named.length + rewrites.length + 1;
    let done = 0;
    opts.onProgress?.({ measured: 0, of });
    const alone = async (e: TournamentEntry, build: string | undefined, keep: string | undefined, text: string): Promise<void> => {
      if (budget.spent()) {
        e.error = budget.skipped();
        return;
      }
      const lacking = e.index?.engine === 'postgres' && build !== undefined ? missing(e.index) : [];
      if (lacking.length > 0) {
        e.error = `needs the extension${lacking.length > 1 ? 's' : ''} ${lacking.join(' and ')}, which this server does not have (PostgreSQL's contrib modules)`;
        opts.onProgress?.({ measured: ++done, of });
        return;
      }
      const extensions = e.index?.engine === 'postgres' && build !== undefined ? toCreate(e.index) : [];
      await q('SAVEPOINT c');
      try {
        for (const n of todayNames.keys()) if (n !== keep) await q(`DROP INDEX pg_temp.${quote(n)}`);
        await withExtensions(extensions, async () => {
          if (build !== undefined) await q(build);
          await q(`SET LOCAL enable_seqscan = off; SET LOCAL statement_timeout = ${budget.limit()}`);
          e.measured = await settled(() => explain(text));
        });
        for (const n of extensions) created.add(n);
      } catch (err) {
        if (signal?.aborted) throw err;
        e.error = budget.errorText(err);
      } finally {
        await q('ROLLBACK TO SAVEPOINT c');
        opts.onProgress?.({ measured: ++done, of });
      }
    };
    for (const { c, name } of named) {
      const e: TournamentEntry = { label: c.label, origin: c.origin, index: c.spec };
      if (c.ruleRank !== undefined) e.ruleRank = c.ruleRank;
      if (c.rule !== undefined) e.rule = c.rule;
      entries.push(e);
      if (c.existing !== undefined) {
        e.existing = c.existing;
        if (todayNames.has(c.existing)) await alone(e, undefined, c.existing, sql);
        else e.error = `${c.existing} could not be copied onto the sample`;
        continue;
      }
      e.createText = createIndexSql(c.spec);
      await alone(e, ddlOnSample(c.spec, name), undefined, sql);
    }
    for (const { s, index, text } of rewrites) {
      const e: TournamentEntry = { label: `rule ${s.rule} (rewritten query)`, origin: 'rewrite', index, ruleRank: s.rank, rule: s.rule, rewrite: text };
      if (s.createText !== undefined) e.createText = s.createText;
      entries.push(e);
      await alone(e, ddlOnSample(index, 'qpi_rw'), undefined, text);
    }
    await q('SAVEPOINT scan');
    try {
      const scan: TournamentEntry = { label: 'table scan', origin: 'scan' };
      if (budget.spent()) scan.error = budget.skipped();
      else {
        await q(`SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL statement_timeout = ${budget.limit()}`);
        scan.measured = await settled(() => explain());
      }
      entries.push(scan);
    } catch (err) {
      if (signal?.aborted || (err as { code?: string }).code !== '57014') throw err;
      entries.push({ label: 'table scan', origin: 'scan', error: budget.errorText(err) });
    } finally {
      await q('ROLLBACK TO SAVEPOINT scan');
      opts.onProgress?.({ measured: ++done, of });
    }
    let plannerChoice: string | undefined;
    await q('SAVEPOINT every');
    try {
      if (budget.spent()) throw new Error(budget.skipped());
      await q(`SET LOCAL statement_timeout = ${budget.limit()}`);
      // Every candidate built together, each behind a savepoint of its own so one that fails leaves the others.
      const all = await withExtensions([...created], async () => {
        for (const { c, name } of named) {
          if (c.existing !== undefined || missing(c.spec).length > 0 || toCreate(c.spec).some((n) => !created.has(n))) continue;
          await q('SAVEPOINT one');
          await q(ddlOnSample(c.spec, name)).then(() => q('RELEASE SAVEPOINT one'), () => q('ROLLBACK TO SAVEPOINT one'));
        }
        return measuredOf(await explain());
      });
      const picked = named.find((x) => x.name === all.index);
      plannerChoice = all.index === undefined ? 'table scan' : picked ? indexLabel(picked.c.spec) : all.index;
    } catch (err) {
      if (signal?.aborted) throw err;
    } finally {
      await q('ROLLBACK TO SAVEPOINT every').catch(() => undefined);
    }

    const scaled = inSample < total;
    const factor = inSample > 0 ? total / inSample : 1;
    // The table scan and the rules' rewrites are measured beside the generated indexes.
    const generated = set.generated + 1 + entries.filter((e) => e.origin === 'rewrite').length;
    for (const e of entries) {
      if (e.measured && scaled && scalesWithData(e.measured, shape.limit)) e.scaledWork = Math.round(e.measured.work * factor);
    }
    const label = budget.labelled(withParams(scaled ? `measured from a sample of ${formatCount(inSample)} of about ${formatCount(total)} rows` : `measured on all ${formatCount(inSample)} rows`, params), entries);
    const input: TournamentInput = {
      engine: 'postgres',
      unit: PG_WORK_UNIT,
      sample: { size: inSample, total, ...(ts?.result !== undefined ? { matching: ts.result } : {}), scaled },
      label,
      generated,
      entries,
      today,
      ...(plannerChoice !== undefined ? { plannerChoice } : {}),
      facts: { ...(ts?.matching ? { matching: ts.matching } : {}), total },
      existing: { postgres: opts.existing },
    };
    report.tournament = applyTournament(advice, input);
    attachFigures(advice, report.tournament);
    report.notes.push(...extensionNotes(entries, report.tournament, ext, created));
    report.notes.push(`${entries.length} candidates, the table scan among them (${generated} generated${set.generated > set.candidates.length ? `, capped at ${set.cap}` : ''}) ${label}, copied into a temporary table (dropped afterwards), each index built inside a transaction that was rolled back: nothing remains.`);
    return report;
  });
}

/**
 * What the measurement did with extensions, and what it could not: an index measured with an extension
 * created for it inside the rolled-back transaction (enable it before building the index), and an
 * index that needs one the server lacks or that could not be created (named, with the command).
 */
function extensionNotes(entries: readonly TournamentEntry[], t: Tournament, ext: ReadonlyMap<string, 'installed' | 'available'>, created: ReadonlySet<string>): string[] {
  const notes: string[] = [];
  if (created.size > 0) {
    notes.push(`${[...created].join(' and ')} ${created.size > 1 ? 'were' : 'was'} created inside the measurement's transaction for the candidates that need ${created.size > 1 ? 'them' : 'it'}, and rolled back with it: nothing remains.`);
  }
  const winner = t.winner?.index;
  const needed = winner?.engine === 'postgres' ? pgExtensionsFor(winner).filter((n) => ext.get(n) === 'available') : [];
  if (needed.length > 0) notes.push(`${indexLabel(winner)} needs ${needed.join(' and ')}, not installed in this database: run ${needed.map((n) => `CREATE EXTENSION IF NOT EXISTS ${n};`).join(' ')} before building it (trusted extensions: a role with CREATE on the database may run it).`);
  for (const e of entries) {
    if (e.measured || e.index?.engine !== 'postgres' || e.error === undefined) continue;
    const needs = pgExtensionsFor(e.index);
    if (needs.length === 0) continue;
    notes.push(`${indexLabel(e.index)} may be the better option but was not measured (${e.error}): enable ${needs.join(' and ')} with ${needs.map((n) => `CREATE EXTENSION IF NOT EXISTS ${n};`).join(' ')} and measure again.`);
  }
  return notes;
}

/** Rows the tables of a join may hold together for the join to be measured on whole copies of them. */
const JOIN_COPY_MAX_ROWS = 1_000_000;

/**
 * A statement over several tables: sampling one side of a join changes what the join does, so the
 * tables are copied whole into temporary tables of the same names (dropped at the end; the user's tables
 * are only read), today's indexes rebuilt on the copies inside a transaction that is always rolled back,
 * and the query run
 * under EXPLAIN (ANALYZE, BUFFERS) as today and with each candidate index added to today's (an index on
 * one table of a join works beside the indexes of the others, it does not replace them). The candidates
 * (core pgJoinCandidates) put each table's join columns before, after or without its own filters, since
 * the planner's join method decides which of them serves, and only the measurement shows which it picks.
 * Bounded by JOIN_COPY_MAX_ROWS rows in all and DEFAULT_PG_JOIN_CANDIDATE_CAP candidates.
 */
async function measurePgJoinCandidates(conn: PostgresConnection, scratch: PgScratch, clearance: Clearance, sql: string, shape: PgShape, advice: Advice, opts: PgCandidatesOptions, report: PgCandidatesReport, params: PgParamValue[]): Promise<PgCandidatesReport> {
  const estimates = (why: string): PgCandidatesReport => {
    report.reason = `${why}: the suggestions were checked with the planner's estimates instead.`;
    report.notes.push(report.reason);
    return report;
  };
  const names = [...new Set(shape.tables.map((t) => t.name))];
  const set = pgJoinCandidates(shape, { advice, existing: opts.existing, ...(opts.cap !== undefined ? { cap: opts.cap } : {}) });
  const keeps = advice.suggestions.filter((s) => s.action === 'keep' && s.keep);
  if (set.candidates.length === 0) return estimates('No index beyond today\'s could be proposed for this statement');
  const rows = names.map((n) => opts.stats?.tables?.[n]?.rows);
  if (rows.some((r) => r === undefined)) return estimates('A statement over several tables is measured on copies of its tables, and the size of one of them is not known');
  const total = rows.reduce((a: number, b) => a + Math.max(0, Math.round(b!)), 0);
  if (total > JOIN_COPY_MAX_ROWS) return estimates(`A statement over several tables is measured on whole copies of its tables, and these hold about ${formatCount(total)} rows (more than ${formatCount(JOIN_COPY_MAX_ROWS)})`);
  const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? 30_000));
  const failed = (err: unknown): PgCandidatesReport => estimates(`The measurement on copies of the tables failed (${firstLine(err)})`);
  const budget = new MeasureBudget(opts.until, timeoutMs);
  return onScratch(scratch, conn, clearance, opts.signal, failed, async ({ q, explain: run, copy }) => {
    const signal = opts.signal;
    const onCopy = onCopies(sql, shape);
    const explain = (): Promise<Plan> => run(sql, onCopy);
    const of = set.candidates.length + 1;
    let done = 0;
    opts.onProgress?.({ measured: 0, of });
    const real = await realTables(q, shape);
    if (typeof real === 'string') return estimates(real);
    await q(`SET statement_timeout = ${timeoutMs}`);
    let copied = 0;
    for (const [n, realName] of real) copied += await copy(realName, n, 100);
    await q('BEGIN');
    for (const n of real.keys()) await copyIndexes(q, opts.existing, n, signal);
    // One run under a time limit of its own: once a candidate has run, a run ten times slower than the
    // fastest (and a second more) cannot win, so it is stopped there instead of running on for minutes
    // (today's plan without the index a nested loop needs can scan a table once per outer row).
    let fastest = Infinity;
    const timed = async (e: TournamentEntry, build: string | undefined): Promise<MeasuredWork | undefined> => {
      if (budget.spent()) {
        e.error = budget.skipped();
        opts.onProgress?.({ measured: ++done, of });
        return undefined;
      }
      await q('SAVEPOINT c');
      let limit = timeoutMs;
      try {
        if (build !== undefined) await q(build);
        limit = Math.min(budget.limit(), Number.isFinite(fastest) ? Math.ceil(fastest * 10 + 1_000) : timeoutMs);
        await q(`SET LOCAL statement_timeout = ${limit}`);
        const m = await settled(() => explain());
        if (m.timeMs !== undefined) fastest = Math.min(fastest, m.timeMs);
        return m;
      } catch (err) {
        if (signal?.aborted) throw err;
        e.error = (err as { code?: string }).code === '57014' && budget.spent() ? budget.skipped()
          : (err as { code?: string }).code === '57014' && limit < timeoutMs ? `stopped after ${formatMs(limit)}, more than ten times the fastest candidate's time` : firstLine(err);
        return undefined;
      } finally {
        await q('ROLLBACK TO SAVEPOINT c');
        opts.onProgress?.({ measured: ++done, of });
      }
    };
    const entries: TournamentEntry[] = [];
    for (const [i, c] of set.candidates.entries()) {
      const spec = c.spec;
      const e: TournamentEntry = { label: c.ruleRank !== undefined ? indexLabel(spec) : c.label, origin: c.origin, index: spec, createText: createIndexSql(spec) };
      if (c.ruleRank !== undefined) e.ruleRank = c.ruleRank;
      if (c.rule !== undefined) e.rule = c.rule;
      const rule = c.ruleRank !== undefined ? advice.suggestions.find((s) => s.rank === c.ruleRank) : undefined;
      if (rule?.createText !== undefined) e.createText = rule.createText;
      entries.push(e);
      const m = await timed(e, ddlOnSample(spec, `qpi_j${i}`));
      if (m) e.measured = m;
    }
    // Today's indexes last, under the same limit: the rules' "keep" stands for them.
    const keep = keeps[0];
    const todayEntry: TournamentEntry = keep?.keep
      ? { label: `today's indexes (${keep.keep.name} among them)`, origin: 'existing', existing: keep.keep.name, ruleRank: keep.rank, ...(keep.index ? { index: keep.index } : {}), ...(keep.rule !== undefined ? { rule: keep.rule } : {}) }
      : { label: "today's indexes", origin: 'scan' };
    const today = await timed(todayEntry, undefined);
    if (today) todayEntry.measured = today;
    entries.unshift(todayEntry);
    const label = budget.labelled(withParams(`measured on whole copies of ${names.join(' and ')} (${formatCount(copied)} rows)`, params), entries);
    const input: TournamentInput = {
      engine: 'postgres',
      unit: PG_WORK_UNIT,
      sample: { size: copied, total: copied, scaled: false },
      label,
      generated: set.generated + 1,
      entries,
      ...(today ? { today } : {}),
      facts: { total: copied },
      existing: { postgres: opts.existing },
    };
    report.tournament = applyTournament(advice, input);
    attachFigures(advice, report.tournament);
    report.notes.push(`${entries.length} candidates (today's indexes, and each candidate index added to them; ${set.generated + 1} generated${set.generated > set.candidates.length ? `, capped at ${set.cap}` : ''}) ${label}, copied into temporary tables (dropped afterwards), each index built inside a transaction that was rolled back: nothing remains.`);
    return report;
  });
}

/** The one sentence for a statement the measurement does not run. */
export function sideEffectsSentence(items: readonly string[]): string {
  return `Not measured: running the statement would ${listPhrases(items)}, which the rollback does not undo; the candidates were ranked by the planner's estimates without running it.`;
}

/**
 * The side-effect verdict, asked of the catalog once, before anything is copied or run: the clearance to
 * execute the statement, or the report of a measurement that does not run it because running it would
 * change what the rollback does not undo (a sequence, a volatile function's writes, a trigger).
 */
async function clearedOrRefused(conn: PostgresConnection, sql: string, report: PgCandidatesReport): Promise<{ clearance: Clearance } | PgCandidatesReport> {
  const verdict = await conn.verdict(sql);
  if (verdict.clearance) return { clearance: verdict.clearance };
  const items = [...verdict.effects.execution, ...verdict.effects.planning];
  report.sideEffects = items;
  report.reason = sideEffectsSentence(items);
  report.notes.push(report.reason);
  return report;
}
