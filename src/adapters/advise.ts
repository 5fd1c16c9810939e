// Index advice with a connection: the indexes that exist, bounded selectivity from the server, and the
// pure advisor (the rules), with the catalog's word on targets that take no index. Measuring the
// suggestions on the server is the measuring module's (measure/); the advice service (adviceService.ts)
// asks here first and there after, so every face gets the same advice and the same verdicts.
//
// A session holds the adapter's connection (explain with time limits, server-side cancel, listIndexes,
// HypoPG) and one more driver handle for what the adapter does not do: counts and $sample for MongoDB (and
// a measurement's scratch collection), read-only catalog queries for PostgreSQL, and for PostgreSQL a third
// connection, opened on first use, for a measurement's rolled-back transaction.

import { MongoClient, type Db } from 'mongodb';
import pg from 'pg';
import { adviseMongo, catalogTargets, explainedLead, isCollectionFamily, lookupAdvice, missingNames, missingReason, mongoLookups, withExplainedLead } from '../core/index';
import { fromMongoCommand } from '../core/index';
import { formatCount, mongoShape } from '../core/index';
import { advisePostgresShapes } from '../core/index';
import { parsePostgresQuery, type PgShape } from '../core/index';
import type { Advice, Catalog, ExistingMongoIndex, ExistingPgIndex, Measurement, MongoQueryInput, MongoStats, PgIndexColumn, PgStats } from '../core/index';
import type { MongoCommand } from '../core/index';
import { AdapterError, describeHost, firstLine, pgLostError, scrub, uriSecrets } from './errors';
import { listPhrases } from './pgSideEffects';
import { mongoOpError } from './mongoOps';
import { connectMongo, mongoClientConfig, type MongoConnectOptions, type MongoConnection, type MongoIndexInfo } from './mongodb';
import { connectPostgres, hangUp, postgresClientConfig, type PostgresConnectOptions, type PostgresConnection, type PostgresIndexInfo } from './postgres';
import { mongoClientDatabase, mongoDatabase, pgBackendActive, pgCancelBackend, pgExecute, pgSend, pgTerminateBackend, type Clearance } from './door';
import { mongoStats, postgresStats, type PgCatalog } from './stats';

export interface AdviseOptions {
  /** Documents in the random sample that selectivity of a big collection is counted on. Default 1,000. */
  sampleSize?: number;
  /** Consent to exact counts on whole collections and tables, whatever their size. */
  exactCounts?: boolean;
  /** Time limit of each server operation. Default 30 s. */
  timeoutMs?: number;
  /** Aborting stops the running operation on the server. */
  signal?: AbortSignal;
  /** MongoDB: database when the query does not name one; default the URI's. */
  database?: string;
  /**
   * The connection's name as a sentence says it ("orders_v2 does not exist on shop-dev"); default the
   * session's host and database.
   */
  where?: string;
}

export interface LiveAdvice {
  advice: Advice;
  engine: 'mongodb' | 'postgres';
  serverVersion: string;
  /** Names of the indexes that exist on the collection or tables advised on. */
  existingIndexes: string[];
  /** The selectivity figures the advisor was given. */
  stats?: MongoStats | PgStats;
  statsMethod?: 'exact' | 'sampled' | 'estimated';
  /** How the suggestions were verified, and on how many documents for a MongoDB trial or tournament. */
  verification: { method: 'tournament' | 'sampled-trial' | 'hypopg' | 'trial-index' | 'none'; sampleSize?: number; collectionSize?: number };
  /** Whether the suggestions stand on measurement: the tournament's ranking, or why nothing was measured (absent: not measured). */
  measurement?: Measurement;
  /** What the connection's catalog says the query's tables or collection are (absent: not looked up). */
  catalog?: Catalog;
  /**
   * The catalog's sentence when a target takes no index there (it does not exist, or it is a view):
   * nothing is measured, and the panel shows the sentence in place of a suggestion.
   */
  notIndexable?: string;
}

// ---- sessions -----------------------------------------------------------------------------------------

export interface MongoAdviceSession {
  conn: MongoConnection;
  db: Db;
  /** The server and database, as a sentence names them when no connection name is given ("localhost:27017/shop"). */
  where?: string;
  close(): Promise<void>;
}

export interface PostgresAdviceSession {
  conn: PostgresConnection;
  catalog: PgCatalog;
  /** The server and database, as a sentence names them when no connection name is given ("localhost:5432/shop"). */
  where?: string;
  /** A connection of its own for a measurement's rolled-back transaction, opened on first use. */
  scratch?: () => Promise<PgScratch>;
  close(): Promise<void>;
}

/** A connection of its own for a measurement's transaction, and a way to stop what it runs. */
export interface PgScratch {
  client: pg.Client;
  /** pg_cancel_backend on the scratch connection, from another connection. */
  cancel(): Promise<void>;
  /** Gives the connection up: closed at once, its backend ended from another connection. */
  abandon(): void;
}

/** Connects for advice; throws AdapterError like connectMongo. */
export async function openMongoAdvice(options: MongoConnectOptions & { database?: string }): Promise<MongoAdviceSession> {
  const conn = await connectMongo(options);
  const { uri, clientOptions } = mongoClientConfig(options);
  const client = new MongoClient(uri, clientOptions);
  try {
    await client.connect();
  } catch (err) {
    await conn.close();
    await client.close().catch(() => {});
    throw mongoOpError(err, false, [options.password, ...uriSecrets(options.uri)]);
  }
  const db = mongoClientDatabase(client, options.database);
  return {
    conn,
    db,
    where: placeOf(options.uri, db.databaseName),
    async close() {
      await conn.close();
      await client.close().catch(() => {});
    },
  };
}

/** "host:port/database" from a URI, never its user or password; the database given wins over the URI's. */
export function placeOf(uri: string | undefined, database?: string): string {
  const host = uri !== undefined ? describeHost(uri) : 'the server';
  let db = database;
  if (db === undefined && uri !== undefined) {
    const path = /^[a-z+]+:\/\/[^/?#]*\/([^?#]*)/i.exec(uri)?.[1];
    if (path) {
      try {
        db = decodeURIComponent(path);
      } catch {
        db = path;
      }
    }
  }
  return db ? `${host}/${db}` : host;
}

/**
 * What the connection's catalog says of a query's targets, or undefined when it cannot tell (the user
 * may not list them): the advice is then given as before, without it. A cancel or a lost connection is
 * thrown as any other failure.
 */
async function readCatalog(read: () => Promise<Catalog>): Promise<Catalog | undefined> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof AdapterError && (err.kind === 'auth' || err.kind === 'server')) return undefined;
    throw err;
  }
}

/** The catalog's sentence for the first target that takes no index there (missing, or a view). */
function notIndexableOf(targets: readonly string[], catalog: Catalog | undefined): string | undefined {
  if (!catalog) return undefined;
  const missing = missingNames(targets, catalog);
  if (missing.length > 0) return missingReason(missing[0]!, catalog);
  for (const t of targets) {
    const why = missingReason(t, catalog);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** A statistics query's failure in one sentence. */
function statisticsError(err: unknown, secrets: readonly (string | undefined)[]): AdapterError {
  if (err instanceof AdapterError) return err;
  const code = (err as { code?: string }).code;
  const msg = scrub(firstLine(err), secrets);
  if (code === '57014') return new AdapterError('timeout', `A statistics query ran past its time limit (statement_timeout): ${msg}.`, { code });
  const lost = pgLostError(err, 'while a statistics query ran');
  if (lost) return lost;
  return new AdapterError(code === '42501' ? 'auth' : 'server', `PostgreSQL refused a statistics query: ${msg}.`, code !== undefined ? { code } : {});
}

/** Connects for advice; the catalog connection is read-only and bounded by statement_timeout. */
export async function openPostgresAdvice(options: PostgresConnectOptions & { timeoutMs?: number }): Promise<PostgresAdviceSession> {
  const client = new pg.Client(postgresClientConfig(options));
  client.on('error', () => {});
  const secrets = [options.password, ...uriSecrets(options.uri)];
  // The two connections are opened side by side; the adapter's error, when both fail, is the one said.
  const catalogReady = (async () => {
    await client.connect();
    // The catalog connection only reads: the server refuses any write on it.
    await pgSend(client, `SET default_transaction_read_only = on; SET statement_timeout = ${Math.max(1, Math.floor(options.timeoutMs ?? 30_000))}`);
  })();
  catalogReady.catch(() => {});
  let conn: PostgresConnection;
  try {
    conn = await connectPostgres(options);
  } catch (err) {
    hangUp(client);
    throw err;
  }
  try {
    await catalogReady;
  } catch (err) {
    await conn.close();
    await client.end().catch(() => {});
    throw pgLostError(err, 'while the catalog connection was opened') ?? new AdapterError('network', `The second PostgreSQL connection (for the catalog) failed: ${scrub(firstLine(err), secrets)}.`);
  }
  let scratch: Promise<PgScratch> | undefined;
  const openScratch = async (): Promise<PgScratch> => {
    const c = new pg.Client(postgresClientConfig(options));
    c.on('error', () => {});
    try {
      await c.connect();
    } catch (err) {
      await c.end().catch(() => {});
      throw pgLostError(err, 'while the measurement connection was opened') ?? new AdapterError('network', `The PostgreSQL connection for the measurement failed: ${scrub(firstLine(err), secrets)}.`);
    }
    const pid = Number(((await pgSend(c, 'SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid);
    return {
      client: c,
      async cancel() {
        // From another connection, as the server requires; repeated briefly since a cancel between statements is lost.
        let first = true;
        await pgCancelBackend(postgresClientConfig(options), pid, async (other) => first || (await pgBackendActive(other, pid)), () => {
          first = false;
          return new Promise((r) => setTimeout(r, 50));
        }, 5);
      },
      abandon() {
        // The next measurement opens a connection of its own.
        scratch = undefined;
        hangUp(c);
        void pgTerminateBackend(postgresClientConfig(options), pid, 5_000);
      },
    };
  };
  return {
    conn,
    where: placeOf(options.uri),
    scratch: () => (scratch ??= openScratch()),
    catalog: {
      async read(sql, values) {
        try {
          return (await pgSend(client, sql, values)).rows as Record<string, unknown>[];
        } catch (err) {
          throw statisticsError(err, secrets);
        }
      },
      async count(clearance, sql) {
        try {
          return (await pgExecute(client, clearance, sql)).rows as Record<string, unknown>[];
        } catch (err) {
          throw statisticsError(err, secrets);
        }
      },
    },
    async close() {
      await conn.close();
      await client.end().catch(() => {});
      if (scratch) await scratch.then((x) => x.client.end(), () => {}).catch(() => {});
    },
  };
}

// ---- MongoDB ------------------------------------------------------------------------------------------

export function existingMongo(ix: MongoIndexInfo): ExistingMongoIndex {
  const out: ExistingMongoIndex = { name: ix.name, key: ix.key };
  if (ix.unique) out.unique = true;
  if (ix.sparse) out.sparse = true;
  if (ix.hidden) out.hidden = true;
  if (ix.partialFilterExpression) out.partialFilterExpression = ix.partialFilterExpression;
  return out;
}

export const NOT_REQUESTED: Measurement = { status: 'not-measured', label: 'not measured', reason: 'Measurement was not asked for: the suggestions are the rules\' ranking.' };

export function refused(engine: 'mongodb' | 'postgres', sentence: string): Advice {
  return { engine, shapes: [], suggestions: [], rewrites: [], notes: [], warnings: [], refusal: sentence };
}

/**
 * Advice for one MongoDB command on a live collection. Throws AdapterError for server failures (lost
 * connection, cancel, refused login); a query the advisor cannot read comes back as a refusal.
 */
export async function liveMongoAdvice(session: MongoAdviceSession, cmd: MongoCommand, opts: AdviseOptions = {}): Promise<LiveAdvice> {
  const conn = session.conn;
  const base: LiveAdvice = { advice: refused('mongodb', ''), engine: 'mongodb', serverVersion: conn.server.version, existingIndexes: [], verification: { method: 'none' }, measurement: NOT_REQUESTED };
  const input = fromMongoCommand(cmd);
  if (!input.ok) return { ...base, advice: refused('mongodb', input.refusal) };
  const shape = mongoShape(input.query);
  if (!shape.ok) return { ...base, advice: refused('mongodb', shape.refusal) };
  const dbName = cmd.database ?? opts.database ?? session.db.databaseName;
  const db = dbName === session.db.databaseName ? session.db : mongoDatabase(session.db, dbName);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const common = { timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) };

  // A collection the database does not have gets no index, and nothing is counted or measured on it; a
  // family (`app_users*`) is no name the catalog has.
  const catalog = isCollectionFamily(cmd.collection) ? undefined : await readCatalog(() => conn.catalog([cmd.collection], opts.where ?? session.where ?? dbName, dbName));
  const known = catalog ? { known: { catalog } } : {};
  const notIndexable = notIndexableOf([cmd.collection], catalog);
  if (catalog && notIndexable !== undefined) {
    const advice = adviseMongo(input.query, known);
    advice.notes.unshift(...input.notes);
    return { ...base, advice, catalog, notIndexable, measurement: { status: 'not-measured', label: 'not measured', reason: notIndexable } };
  }
  const indexes = await conn.listIndexes(cmd.collection, dbName);
  if (conn.server.kind === 'compatible') {
    // Counts, $sample and a trial would measure another engine's planner: the advice stays static.
    const advice = adviseMongo(input.query, { existing: indexes.map(existingMongo), ...known });
    advice.notes.unshift(...input.notes);
    advice.warnings.push(conn.server.detail);
    return { ...base, advice, existingIndexes: indexes.map((ix) => ix.name) };
  }
  // A pipeline is advised as the server rewrites it: the filter its explain shows pushed to the collection scan.
  const explained = await explainedPipeline(session, cmd, input.query, dbName, common);
  const query = explained.query;
  const read = query === input.query ? shape : mongoShape(query);
  const stats = await mongoStats(db, cmd.collection, read.ok ? read.shape : shape.shape, { ...common, ...(opts.sampleSize ? { sampleSize: opts.sampleSize } : {}), ...(opts.exactCounts ? { exactCounts: true } : {}) });
  const empty = (stats.stats.total ?? 0) === 0;
  let advice = adviseMongo(query, { existing: indexes.map(existingMongo), ...(empty ? {} : { stats: stats.stats }), ...known });
  advice = await withLookups(session, advice, query, dbName, opts.where ?? session.where ?? dbName);
  advice.notes.unshift(...input.notes);
  advice.warnings.push(...explained.warnings);
  if (empty) advice.notes.push(`${cmd.collection} is empty or does not exist in ${dbName}, so the advice is static: it uses no counts.`);
  else advice.notes.push(...stats.notes);
  const live: LiveAdvice = {
    ...base,
    advice,
    existingIndexes: indexes.map((ix) => ix.name),
    stats: stats.stats,
    statsMethod: stats.method,
    ...(catalog ? { catalog } : {}),
  };
  return live;
}

/**
 * An aggregate with the lead its explain shows (queryPlanner: nothing runs), or the query as it is for
 * another operation or one that cannot be explained, or with a warning when the server would not explain it. A cancel, a time limit or a
 * lost connection is thrown as any other failure.
 */
async function explainedPipeline(session: MongoAdviceSession, cmd: MongoCommand, query: MongoQueryInput, database: string, common: { timeoutMs: number; signal?: AbortSignal }): Promise<{ query: MongoQueryInput; warnings: string[] }> {
  // A family (`app_users*`) or values known only at run time cannot be explained: the rules' reading stands.
  if (cmd.operation !== 'aggregate' || cmd.hasPlaceholders || isCollectionFamily(cmd.collection)) return { query, warnings: [] };
  try {
    const result = await session.conn.explain({ ...cmd, explain: 'queryPlanner' }, { verbosity: 'queryPlanner', database, ...common });
    const lead = explainedLead(JSON.parse(result.rawText) as unknown);
    return { query: lead ? withExplainedLead(query, lead) : query, warnings: [] };
  } catch (err) {
    if (err instanceof AdapterError && (err.kind === 'server' || err.kind === 'syntax' || err.kind === 'unsupported')) {
      return { query, warnings: [`The server did not explain the pipeline (${err.message.replace(/\.$/, '')}), so the advice follows the rules' reading of it.`] };
    }
    throw err;
  }
}

/**
 * The advice with each $lookup's other collection looked at on the connection: its indexes (listIndexes)
 * and whether it exists (the catalog). A collection the user may not list keeps the offline note.
 */
async function withLookups(session: MongoAdviceSession, advice: Advice, query: MongoQueryInput, database: string, where: string): Promise<Advice> {
  const lookups = mongoLookups(query);
  if (lookups.length === 0) return advice;
  const froms = [...new Set(lookups.map((l) => l.from))];
  const catalog = await readCatalog(() => session.conn.catalog(froms, where, database));
  const foreign: Record<string, ExistingMongoIndex[]> = {};
  const missing: Record<string, string> = {};
  for (const from of froms) {
    const why = catalog ? missingReason(from, catalog) : undefined;
    if (catalog && catalog.relations[from] === null && why !== undefined) {
      missing[from] = why;
      continue;
    }
    // A view's indexes are its collection's; the join then reads through the view's pipeline.
    if (catalog?.relations[from]?.kind === 'view') continue;
    try {
      foreign[from] = (await session.conn.listIndexes(from, database)).map(existingMongo);
    } catch (err) {
      if (!(err instanceof AdapterError && (err.kind === 'auth' || err.kind === 'server'))) throw err;
    }
  }
  return lookupAdvice(advice, lookups, foreign, missing);
}

// ---- PostgreSQL ---------------------------------------------------------------------------------------

/** One column of pg_get_indexdef: a plain (maybe quoted) name is a column, anything else an expression. */
function pgColumn(c: PostgresIndexInfo['columns'][number]): PgIndexColumn {
  const e = c.expression.trim();
  const out: PgIndexColumn = /^[a-z_][a-z0-9_$]*$/.test(e) ? { column: e } : /^"(?:[^"]|"")+"$/.test(e) ? { column: e.slice(1, -1).replace(/""/g, '"') } : { expression: e };
  if (c.descending) out.desc = true;
  if (c.nullsFirst !== c.descending) out.nullsFirst = c.nullsFirst;
  return out;
}

export function existingPg(ix: PostgresIndexInfo): ExistingPgIndex {
  const out: ExistingPgIndex = { name: ix.name, table: ix.table, schema: ix.schema, method: ix.method, columns: ix.columns.map(pgColumn) };
  if (ix.include.length > 0) out.include = ix.include;
  if (ix.unique) out.unique = true;
  if (ix.primary) out.primary = true;
  if (ix.predicate) out.predicate = ix.predicate;
  if (!ix.valid) out.invalid = true;
  return out;
}

/**
 * Advice for one SQL statement on a live PostgreSQL database. Throws AdapterError for server failures;
 * SQL the advisor cannot read comes back as a refusal.
 */
export async function livePostgresAdvice(session: PostgresAdviceSession, sql: string, opts: AdviseOptions = {}): Promise<LiveAdvice> {
  const conn = session.conn;
  const base: LiveAdvice = { advice: refused('postgres', ''), engine: 'postgres', serverVersion: conn.serverVersion, existingIndexes: [], verification: { method: 'none' }, measurement: NOT_REQUESTED };
  const parsed = await parsePostgresQuery(sql);
  if (!parsed.ok) return { ...base, advice: refused('postgres', parsed.refusal) };
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const common = { timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) };

  // A table the database does not have, or a view, gets no index, and nothing is counted or measured.
  const looked = catalogTargets(sql, parsed.shapes.flatMap((s) => s.tables));
  const catalog = looked.length > 0 ? await readCatalog(() => conn.catalog(looked, opts.where ?? session.where ?? 'the database')) : undefined;
  const notIndexable = notIndexableOf(looked.map((t) => (t.schema !== undefined ? `${t.schema}.${t.table}` : t.table)), catalog);
  if (catalog && notIndexable !== undefined && missingNames(Object.keys(catalog.relations), catalog).length > 0) {
    const advice = advisePostgresShapes(parsed.shapes, { known: { catalog } }, parsed.warnings);
    return { ...base, advice, catalog, notIndexable, measurement: { status: 'not-measured', label: 'not measured', reason: notIndexable } };
  }
  const indexes: PostgresIndexInfo[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const shape of parsed.shapes) {
    for (const t of shape.tables) {
      const id = `${t.schema ?? ''}.${t.name}`;
      if (seen.has(id)) continue;
      seen.add(id);
      indexes.push(...(await conn.listIndexes({ table: t.name, ...(t.schema !== undefined ? { schema: t.schema } : {}) })));
    }
  }
  // Exact counts run the statement's predicates on the tables: not when they would call what the
  // rollback does not undo (a read-only transaction refuses nextval(), not a function writing elsewhere).
  let counting: Clearance | undefined;
  if (opts.exactCounts === true) {
    const verdict = await conn.verdict(sql);
    counting = verdict.clearance;
    const items = [...verdict.effects.execution, ...verdict.effects.planning];
    if (!counting) warnings.push(`Selectivity was not counted exactly: counting would ${listPhrases(items)}, which the rollback does not undo; the planner's estimates were used.`);
  }
  const stats = await postgresStats(conn, session.catalog, parsed.shapes, { ...common, ...(counting ? { exactCounts: counting } : {}) });
  if (!counting) warnings.push(...(await countRanges(session, sql, parsed.shapes, stats.stats, stats.notes)));
  const advice = advisePostgresShapes(parsed.shapes, { existing: indexes.map(existingPg), stats: stats.stats, ...(catalog ? { known: { catalog } } : {}) }, parsed.warnings);
  advice.notes.push(...stats.notes);
  advice.warnings.push(...warnings);
  const live: LiveAdvice = { ...base, advice, existingIndexes: indexes.map((ix) => ix.name), stats: stats.stats, statsMethod: stats.method, ...(catalog ? { catalog } : {}), ...(notIndexable !== undefined ? { notIndexable } : {}) };
  if (notIndexable !== undefined) live.measurement = { status: 'not-measured', label: 'not measured', reason: notIndexable };
  return live;
}

/** Tables up to this many rows have two or more ranges counted exactly to order them. */
const RANGE_COUNT_MAX_ROWS = 2_000_000;

/**
 * Two or more ranges on one table: only the first an index reaches bounds the scan, the others are
 * checked on every key it reads, so the most selective goes first, and the planner's estimate of a range
 * (a histogram, or a default third of the table for an expression it cannot read, such as
 * now() - interval '1 day') is not enough to tell which. Each range is counted alone with count(*) on
 * the catalog connection, with the statement's clearance (the count runs the statement's own
 * predicate, nothing else), on tables up to RANGE_COUNT_MAX_ROWS rows; the counts replace the estimates.
 * Returns the warnings for a count that could not run.
 */
async function countRanges(session: PostgresAdviceSession, sql: string, shapes: readonly PgShape[], stats: PgStats, notes: string[]): Promise<string[]> {
  const work: { shape: PgShape; table: PgShape['tables'][number]; ranges: PgShape['predicates'] }[] = [];
  for (const shape of shapes) {
    for (const t of shape.tables) {
      const ranges = shape.predicates.filter((p) => p.table === t.key && p.kind === 'range' && !/\$\d/.test(p.text) && !/enclosing query/.test(p.detail));
      if (new Set(ranges.map((p) => p.column)).size < 2) continue;
      const rows = stats.tables?.[t.name]?.rows;
      if (rows === undefined || rows > RANGE_COUNT_MAX_ROWS) continue;
      work.push({ shape, table: t, ranges });
    }
  }
  if (work.length === 0) return [];
  const verdict = await session.conn.verdict(sql);
  if (!verdict.clearance) {
    const items = [...verdict.effects.execution, ...verdict.effects.planning];
    return [`The ranges were not counted to order them: counting would ${listPhrases(items)}, which the rollback does not undo; the planner's estimates were used.`];
  }
  const warnings: string[] = [];
  for (const { table, ranges } of work) {
    const ts = (stats.tables ??= {})[table.name] ??= {};
    const from = `${table.schema !== undefined ? `${pg.escapeIdentifier(table.schema)}.` : ''}${pg.escapeIdentifier(table.name)}${table.alias !== undefined ? ` AS ${pg.escapeIdentifier(table.alias)}` : ''}`;
    const counted: string[] = [];
    for (const p of ranges) {
      try {
        const r = await session.catalog.count(verdict.clearance, `SELECT count(*)::float8 AS n FROM ${from} WHERE (${p.text})`);
        const n = Number(r[0]?.['n']);
        if (!Number.isFinite(n)) continue;
        (ts.matching ??= {})[p.column] = n;
        counted.push(`${p.text}: ${formatCount(Math.round(n))}`);
      } catch (err) {
        if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth')) throw err;
        warnings.push(`The range ${p.text} could not be counted (${firstLine(err)}); its order among the ranges follows the planner's estimate.`);
      }
    }
    if (counted.length > 0) notes.push(`Ranges on ${table.name} counted with count(*) to put the most selective first (${counted.join('; ')} of about ${formatCount(Math.round(ts.rows ?? 0))} rows).`);
  }
  return warnings;
}
