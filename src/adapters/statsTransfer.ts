// Planner statistics carried from one PostgreSQL database to another, so a CI database with little data
// plans like production (`qpi stats export` / `qpi stats import`).
//
// Export reads pg_class (pages, rows, all-visible and all-frozen pages of every table, materialized view
// and index) and pg_stats (each column's null fraction, width, distinct values, most common values and
// histograms) on a read-only connection: a read like any catalog query. Import writes them with
// PostgreSQL 18's pg_restore_relation_stats and pg_restore_attribute_stats through the door
// (pgRestoreStatistics), the one write of statistics the product makes, because the user ran the command;
// a server before 18 has neither function and is refused in one sentence before anything is sent.
//
// The planner does not take reltuples as it is: it keeps the row density (reltuples / relpages) and
// multiplies it by the table's real size on disk, so statistics on a CI table of a few pages are scaled
// down to a few rows, and an empty table is planned as empty whatever they say. Import compares the two
// sizes and says so per table; `matchPages` writes the CI table's own page count instead of
// production's, so the density, and with it the row estimate, is production's.

import pg from 'pg';
import { formatCount, versionNumber } from '../core/index';
import { AdapterError, firstLine, scrub, uriSecrets } from './errors';
import { pgRestoreStatistics, pgSend, pgStatisticsConsent, type PgClient } from './door';
import { connectPostgres, hangUp, postgresClientConfig, type PostgresConnectOptions } from './postgres';

/** The version of the file's format. */
export const STATS_FORMAT = 1;
/** pg_restore_relation_stats and pg_restore_attribute_stats arrived in PostgreSQL 18. */
export const RESTORE_FROM = 180000;

/** One column's statistics as pg_stats shows them; arrays of values as the server prints them (text). */
export interface ColumnStats {
  attname: string;
  inherited: boolean;
  null_frac: number | null;
  avg_width: number | null;
  n_distinct: number | null;
  most_common_vals: string | null;
  most_common_freqs: number[] | null;
  histogram_bounds: string | null;
  correlation: number | null;
  most_common_elems: string | null;
  most_common_elem_freqs: number[] | null;
  elem_count_histogram: number[] | null;
  /** PostgreSQL 17 and later. */
  range_length_histogram?: string | null;
  range_empty_frac?: number | null;
  range_bounds_histogram?: string | null;
}

export interface RelationStats {
  schema: string;
  name: string;
  kind: 'table' | 'partitioned table' | 'materialized view' | 'index';
  /** For an index: its table. */
  table?: string;
  relpages: number;
  reltuples: number;
  relallvisible: number;
  /** PostgreSQL 18 and later. */
  relallfrozen?: number;
  columns: ColumnStats[];
}

/** What `qpi stats export` writes. */
export interface StatsFile {
  qpiStats: typeof STATS_FORMAT;
  /** The server the statistics were read on: its version and server_version_num, and the database. */
  server: string;
  serverVersionNum: number;
  database: string;
  relations: RelationStats[];
}

export interface ExportOptions extends PostgresConnectOptions {
  /** Only these schemas (default: every schema but the system's). */
  schemas?: string[];
  /** Only these tables (with their indexes), by name or schema.name. */
  tables?: string[];
  timeoutMs?: number;
}

const KINDS: Record<string, RelationStats['kind']> = { r: 'table', p: 'partitioned table', m: 'materialized view', i: 'index' };

/** A connection of our own for the statistics, after connectPostgres has given the server's version (and its sentences for a refused connection). */
async function open(options: PostgresConnectOptions, timeoutMs: number, readOnly: boolean): Promise<{ client: PgClient; version: string; versionNum: number; database: string }> {
  const probe = await connectPostgres(options);
  const version = versionNumber(probe.serverVersion);
  const versionNum = probe.serverVersionNum;
  await probe.close();
  const client = new pg.Client(postgresClientConfig(options));
  client.on('error', () => {});
  try {
    await client.connect();
    await pgSend(client, `SET statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    if (readOnly) await pgSend(client, 'SET default_transaction_read_only = on');
    const db = (await pgSend<{ db: string }>(client, 'SELECT current_database() AS db')).rows[0]!.db;
    return { client, version, versionNum, database: db };
  } catch (err) {
    hangUp(client);
    throw new AdapterError('network', `The PostgreSQL connection for the statistics failed: ${scrub(firstLine(err), [options.password, ...uriSecrets(options.uri)])}.`);
  }
}

function serverError(err: unknown, options: PostgresConnectOptions, what: string): AdapterError {
  if (err instanceof AdapterError) return err;
  const code = (err as { code?: string }).code;
  const msg = scrub(firstLine(err), [options.password, ...uriSecrets(options.uri)]);
  if (code === '42501') return new AdapterError('auth', `PostgreSQL refused ${what}: ${msg} (the role needs the MAINTAIN privilege on each table, or to own it).`, { code });
  return new AdapterError('server', `PostgreSQL refused ${what}: ${msg}.`, code !== undefined ? { code } : {});
}

/** Reads the statistics of every table, materialized view and index the options select. */
export async function exportPgStats(options: ExportOptions): Promise<StatsFile> {
  const { client, version, versionNum, database } = await open(options, options.timeoutMs ?? 60_000, true);
  try {
    const frozen = versionNum >= 180000 ? 'c.relallfrozen' : 'NULL::int';
    const rels = (await pgSend<{ schema: string; name: string; relkind: string; tbl: string | null; relpages: number; reltuples: number; relallvisible: number; relallfrozen: number | null }>(client,
      `SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS relkind, t.relname AS tbl,
              c.relpages, c.reltuples::float8 AS reltuples, c.relallvisible, ${frozen} AS relallfrozen
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_index x ON x.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = x.indrelid
        WHERE c.relkind IN ('r', 'p', 'm', 'i') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND n.nspname !~ '^pg_(toast|temp_)' AND c.relpersistence = 'p'
          AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))
          AND ($2::text[] IS NULL OR coalesce(t.relname, c.relname) = ANY($2::text[]) OR n.nspname || '.' || coalesce(t.relname, c.relname) = ANY($2::text[]))
        ORDER BY n.nspname, c.relname`,
      [options.schemas && options.schemas.length > 0 ? options.schemas : null, options.tables && options.tables.length > 0 ? options.tables : null])).rows;
    const ranges = versionNum >= 170000 ? 'range_length_histogram::text AS range_length_histogram, range_empty_frac, range_bounds_histogram::text AS range_bounds_histogram' : 'NULL AS range_length_histogram, NULL AS range_empty_frac, NULL AS range_bounds_histogram';
    const cols = (await pgSend<ColumnStats & { schemaname: string; tablename: string }>(client,
      `SELECT schemaname::text AS schemaname, tablename::text AS tablename, attname::text AS attname, inherited, null_frac, avg_width, n_distinct,
              most_common_vals::text AS most_common_vals, most_common_freqs, histogram_bounds::text AS histogram_bounds, correlation,
              most_common_elems::text AS most_common_elems, most_common_elem_freqs, elem_count_histogram, ${ranges}
         FROM pg_stats WHERE schemaname = ANY($1::text[]) ORDER BY schemaname, tablename, attname, inherited`,
      [[...new Set(rels.map((r) => r.schema))]])).rows;
    const byRel = new Map<string, ColumnStats[]>();
    for (const c of cols) {
      const { schemaname, tablename, ...column } = c;
      if (versionNum < 170000) {
        delete column.range_length_histogram;
        delete column.range_empty_frac;
        delete column.range_bounds_histogram;
      }
      const key = `${schemaname}.${tablename}`;
      byRel.set(key, [...(byRel.get(key) ?? []), column]);
    }
    return {
      qpiStats: STATS_FORMAT,
      server: version,
      serverVersionNum: versionNum,
      database,
      relations: rels.map((r) => ({
        schema: r.schema,
        name: r.name,
        kind: KINDS[r.relkind] ?? 'table',
        ...(r.tbl !== null ? { table: r.tbl } : {}),
        relpages: r.relpages,
        reltuples: r.reltuples,
        relallvisible: r.relallvisible,
        ...(r.relallfrozen !== null ? { relallfrozen: r.relallfrozen } : {}),
        columns: byRel.get(`${r.schema}.${r.name}`) ?? [],
      })),
    };
  } catch (err) {
    throw serverError(err, options, 'a read of the statistics');
  } finally {
    await client.end().catch(() => {});
  }
}

/** Reads a statistics file; a sentence when it is not one. */
export function parseStatsFile(text: string): { ok: true; file: StatsFile } | { ok: false; error: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `It is not JSON (${firstLine(err)}).` };
  }
  const f = v as Partial<StatsFile> | null;
  if (typeof f !== 'object' || f === null || f.qpiStats !== STATS_FORMAT) return { ok: false, error: `It is not a file of qpi stats export (no "qpiStats": ${STATS_FORMAT}).` };
  if (!Array.isArray(f.relations) || typeof f.serverVersionNum !== 'number') return { ok: false, error: 'It has no relations or no serverVersionNum.' };
  for (const r of f.relations as unknown[]) {
    const x = r as Partial<RelationStats> | null;
    if (typeof x !== 'object' || x === null || typeof x.schema !== 'string' || typeof x.name !== 'string' || typeof x.relpages !== 'number' || typeof x.reltuples !== 'number' || !Array.isArray(x.columns)) {
      return { ok: false, error: 'A relation lacks its schema, name, relpages, reltuples or columns.' };
    }
    for (const c of x.columns as unknown[]) {
      if (typeof (c as ColumnStats | null)?.attname !== 'string' || typeof (c as ColumnStats).inherited !== 'boolean') return { ok: false, error: `A column of ${x.schema}.${x.name} lacks its attname or inherited.` };
    }
  }
  return { ok: true, file: f as StatsFile };
}

export interface ImportOptions extends PostgresConnectOptions {
  /** Write the CI relation's own page count (and visible pages in proportion), so the planner keeps production's row estimate. */
  matchPages?: boolean;
  timeoutMs?: number;
}

/** What the planner will estimate for one table after the import, from its real size. */
export interface SizeCheck {
  relation: string;
  /** Production's pages and rows. */
  pages: number;
  rows: number;
  /** The CI relation's pages on disk. */
  ciPages: number;
  /** The rows the planner will take the table to hold: rows / pages x the CI pages (0 when it is empty). */
  plannedRows: number;
}

export interface ImportReport {
  server: string;
  relations: number;
  columns: number;
  /** Relations and columns of the file the CI database does not have, skipped. */
  skipped: string[];
  /** Tables whose real size makes the planner scale the imported row count by more than half. */
  scaled: SizeCheck[];
  /** Sentences for the user: warnings of the server, what was written where. */
  notes: string[];
}

/** Past this factor either way, the planner's row estimate is not production's: warned about. */
const SCALE_WARNING = 2;

/** The planner's row estimate for a relation of `ciPages` real pages with these statistics (table_block_relation_estimate_size). */
export function plannedRows(rows: number, pages: number, ciPages: number): number {
  if (ciPages === 0) return 0;
  if (pages <= 0 || rows < 0) return rows;
  return Math.round((rows / pages) * ciPages);
}

/** The warning for a table whose real size scales the imported rows away, one sentence. */
export function scaleWarning(s: SizeCheck): string {
  const n = formatCount;
  if (s.ciPages === 0) {
    return `${s.relation} is empty in the CI database, so the planner takes it to hold no rows whatever its statistics say (production: ${n(s.rows)} rows): load some rows (a page is enough with --match-pages).`;
  }
  return `${s.relation} has ${n(s.ciPages)} page${s.ciPages === 1 ? '' : 's'} in the CI database against ${n(s.pages)} in production, so the planner scales the imported ${n(s.rows)} rows to ${n(s.plannedRows)}: import with --match-pages to keep production's row estimate, or load data of production's size.`;
}

/**
 * Writes a statistics file into the database of `options` (PostgreSQL 18 and later), relation by
 * relation and column by column, in one transaction. Relations and columns the database does not have
 * are skipped and named; nothing but statistics is written.
 */
export async function importPgStats(options: ImportOptions, file: StatsFile): Promise<ImportReport> {
  const { client, version, versionNum } = await open(options, options.timeoutMs ?? 60_000, false);
  const notes: string[] = [];
  client.on('notice', (m: { severity?: string; message?: string }) => {
    if (m.severity === 'WARNING' && m.message) notes.push(`PostgreSQL: ${m.message}.`);
  });
  try {
    if (versionNum < RESTORE_FROM) {
      throw new AdapterError('unsupported', `PostgreSQL ${version} cannot take statistics in: pg_restore_relation_stats and pg_restore_attribute_stats arrived in PostgreSQL 18, so run the CI database on 18 or later.`);
    }
    const consent = pgStatisticsConsent();
    const skipped: string[] = [];
    const scaled: SizeCheck[] = [];
    let relations = 0;
    let columns = 0;
    await pgSend(client, 'BEGIN');
    for (const r of file.relations) {
      const name = `${r.schema}.${r.name}`;
      const here = (await pgSend<{ pages: number; relkind: string }>(client,
        `SELECT (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages, c.relkind::text AS relkind
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`, [r.schema, r.name])).rows[0];
      if (!here) {
        skipped.push(`${name} (not in the CI database)`);
        continue;
      }
      const ciPages = Number(here.pages);
      const size: SizeCheck = { relation: name, pages: r.relpages, rows: r.reltuples, ciPages, plannedRows: plannedRows(r.reltuples, r.relpages, ciPages) };
      // A partitioned table has no pages of its own; its partitions carry the rows.
      const sized = here.relkind !== 'p' && r.reltuples > 0;
      const match = options.matchPages === true && sized && ciPages > 0;
      const pages = match ? ciPages : r.relpages;
      const visible = match && r.relpages > 0 ? Math.min(ciPages, Math.round((r.relallvisible * ciPages) / r.relpages)) : r.relallvisible;
      const frozen = r.relallfrozen === undefined ? undefined : match && r.relpages > 0 ? Math.min(visible, Math.round((r.relallfrozen * ciPages) / r.relpages)) : r.relallfrozen;
      await pgRestoreStatistics(client, consent, 'relation', {
        schemaname: r.schema, relname: r.name, version: file.serverVersionNum, relpages: pages, reltuples: r.reltuples, relallvisible: visible, relallfrozen: frozen,
      });
      relations++;
      const planned = match ? r.reltuples : size.plannedRows;
      if (sized && r.kind !== 'index' && (planned * SCALE_WARNING < r.reltuples || planned > r.reltuples * SCALE_WARNING)) scaled.push({ ...size, plannedRows: planned });
      const have = new Set((await pgSend<{ attname: string }>(client,
        `SELECT a.attname::text AS attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped`, [r.schema, r.name])).rows.map((x) => x.attname));
      for (const c of r.columns) {
        if (!have.has(c.attname)) {
          skipped.push(`${name}.${c.attname} (no such column in the CI database)`);
          continue;
        }
        const { attname, inherited, ...stats } = c;
        await pgRestoreStatistics(client, consent, 'attribute', { schemaname: r.schema, relname: r.name, attname, inherited, version: file.serverVersionNum, ...stats });
        columns++;
      }
    }
    await pgSend(client, 'COMMIT');
    return { server: version, relations, columns, skipped, scaled, notes };
  } catch (err) {
    await pgSend(client, 'ROLLBACK').catch(() => {});
    throw serverError(err, options, 'the statistics import');
  } finally {
    await client.end().catch(() => {});
  }
}
