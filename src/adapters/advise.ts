// Index advice with a connection: the indexes that exist, bounded selectivity from the server, the pure
// advisor, then verification on the server. Front ends (`qpi advise --uri`, the extension) call
// adviseMongoLive / advisePostgresLive with a session opened here; the pieces are in stats.ts and verify.ts.
// A front end that verifies only when the user asks (the plan panel's Verify) gives the advice first and
// later passes it to verifyMongoLive / verifyPostgresLive, so the verdict is on the suggestion it showed.
//
// A session holds the adapter's connection (explain with time limits, server-side cancel, listIndexes,
// HypoPG) and one more driver handle for what the adapter does not do: counts and $sample for MongoDB (and
// the trial's scratch collection), read-only catalog queries for PostgreSQL.

import { MongoClient, type Db } from 'mongodb';
import pg from 'pg';
import { adviseMongo, catalogTargets, isCollectionFamily, missingNames, missingReason } from '../core/index';
import { fromMongoCommand } from '../core/index';
import { mongoShape } from '../core/index';
import { advisePostgres, advisePostgresShapes } from '../core/index';
import { mergedPgShape, parsePostgresQuery, type PgShape } from '../core/index';
import type { Advice, Catalog, ExistingMongoIndex, ExistingPgIndex, Measurement, MongoStats, PgIndexColumn, PgStats } from '../core/index';
import type { MongoCommand } from '../core/index';
import { AdapterError, describeHost, firstLine, pgLostError, scrub, uriSecrets } from './errors';
import { listPhrases } from './pgSideEffects';
import { mongoOpError } from './mongoOps';
import { connectMongo, mongoClientConfig, type MongoConnectOptions, type MongoConnection, type MongoIndexInfo } from './mongodb';
import { connectPostgres, hangUp, postgresClientConfig, type PostgresConnectOptions, type PostgresConnection, type PostgresIndexInfo } from './postgres';
import { mongoClientDatabase, mongoDatabase, pgBackendActive, pgCancelBackend, pgExecute, pgSend, pgTerminateBackend, type Clearance } from './door';
import { mongoStats, postgresStats, type PgCatalog } from './stats';
import { pgTournament, type MeasureProgress, type PgScratch } from './pgTournament';
import { mongoTournament, tournamentApplies } from './tournament';
import { dropStaleTrials, mongoTrial, verifyPostgres, writeRefused, type TrialStep } from './verify';

export interface LiveAdviceOptions {
  /**
   * MongoDB: the user's consent to the sampled trial (a random sample is copied into a scratch collection
   * on the server, indexed, queried, and dropped). PostgreSQL verifies with HypoPG whenever it can, since
   * that builds nothing; this flag changes nothing there.
   */
  verify?: boolean;
  /**
   * PostgreSQL: false leaves the suggestions unverified, for a front end that verifies later on request
   * (verifyPostgresLive). By default they are verified, with HypoPG when it is installed.
   */
  verifyPostgres?: boolean;
  /** Suggestions tried, in rank order (default 3; the branches of an $or are tried together). */
  maxSuggestions?: number;
  /** Candidates a tournament measures at most (default 24). */
  maxCandidates?: number;
  /** PostgreSQL: false checks the suggestions with the planner's estimates only, without the tournament on a sample. */
  measure?: boolean;
  /**
   * PostgreSQL: false stops after the tournament when it cannot run, without the planner's check (which
   * may need a build on the user's table): the caller asks for that build's consent only then.
   */
  fallback?: boolean;
  /** PostgreSQL without HypoPG: consent to build each index inside a rolled-back transaction (it locks writes). */
  allowBuild?: boolean;
  /** Documents in the random sample (selectivity of big collections, and the trial). Default 1,000. */
  sampleSize?: number;
  /** Consent to exact counts on whole collections and tables, whatever their size. */
  exactCounts?: boolean;
  /** Time limit of each server operation. Default 30 s. */
  timeoutMs?: number;
  /**
   * When the measurement must end (epoch ms), however many candidates are left: none starts after it,
   * each statement's limit is cut to what is left, and the best of those measured is given, labelled so.
   */
  until?: number;
  /** Called as candidates are measured (how many of how many), for a progress line. */
  onProgress?: (p: MeasureProgress) => void;
  /** Aborting stops the running operation on the server; a trial's scratch collection is dropped anyway. */
  signal?: AbortSignal;
  /** MongoDB: database when the query does not name one; default the URI's. */
  database?: string;
  /** MongoDB: called at each step of the trial. */
  onTrialStep?: (step: TrialStep) => void;
  /**
   * Verify on advice given earlier: true leaves the suggestions in the measured order (the command line
   * prints them best first); a front end that finds the suggestions it shows by rank leaves it unset.
   */
  measuredOrder?: boolean;
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

// ---- the one entry point ----------------------------------------------------------------------------

/** What to advise on: a MongoDB command or one SQL statement, with a session when connected. */
export type AdviceTarget =
  | { engine: 'mongodb'; command: MongoCommand; session?: MongoAdviceSession }
  | { engine: 'postgres'; sql: string; session?: PostgresAdviceSession };

/**
 * The advisor's verdict, the same for every face (CLI, lens, squiggle, panel, Verify): suggestions in
 * order (by measured work when `measurement.status` is 'measured', else the rules' order), and what the
 * order stands on. `measurement.tournament` holds the runner-up, today's figures, the candidates tried
 * and the sample ("measured from a sample of N of M documents"); offline it says "not measured".
 */
export interface AdvisorResult {
  advice: Advice;
  measurement: Measurement;
  /** Connected: the indexes, statistics and server the advice used. */
  live?: LiveAdvice;
}

const OFFLINE: Measurement = { status: 'not-measured', label: 'not measured', reason: 'Offline: the rules alone, without the data or the server.' };

/**
 * Advice for one query. Without a session the rules answer alone ("not measured"). With one, the
 * indexes and selectivity of the live data are used, and with `measure` the candidates are measured
 * on the server (MongoDB: a tournament on a sampled scratch collection, which writes and so needs the
 * user's consent; PostgreSQL: a tournament on a sample in a temporary table inside a transaction that
 * is always rolled back, unless `measure` is false, which leaves the planner's estimates with HypoPG). Throws AdapterError for server
 * failures and a cancel; a query that cannot be read comes back as `advice.refusal`.
 */
export async function adviseQuery(target: AdviceTarget, opts: LiveAdviceOptions & { measure?: boolean } = {}): Promise<AdvisorResult> {
  if (target.engine === 'mongodb') {
    if (!target.session) {
      const input = fromMongoCommand(target.command);
      if (!input.ok) return { advice: refused('mongodb', input.refusal), measurement: OFFLINE };
      const advice = adviseMongo(input.query);
      advice.notes.unshift(...input.notes);
      return { advice, measurement: OFFLINE };
    }
    const live = await adviseMongoLive(target.session, target.command, { ...opts, verify: opts.measure ?? opts.verify ?? false });
    return { advice: live.advice, measurement: live.measurement ?? NOT_REQUESTED, live };
  }
  if (!target.session) return { advice: await advisePostgres(target.sql), measurement: OFFLINE };
  const live = await advisePostgresLive(target.session, target.sql, opts);
  return { advice: live.advice, measurement: live.measurement ?? NOT_REQUESTED, live };
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
  /** A connection of its own for the tournament's rolled-back transaction, opened on first use. */
  scratch?: () => Promise<PgScratch>;
  close(): Promise<void>;
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
  const conn = await connectPostgres(options);
  const client = new pg.Client(postgresClientConfig(options));
  client.on('error', () => {});
  const secrets = [options.password, ...uriSecrets(options.uri)];
  try {
    await client.connect();
    // The catalog connection only reads: the server refuses any write on it.
    await pgSend(client, `SET default_transaction_read_only = on; SET statement_timeout = ${Math.max(1, Math.floor(options.timeoutMs ?? 30_000))}`);
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

const NOT_REQUESTED: Measurement = { status: 'not-measured', label: 'not measured', reason: 'Measurement was not asked for: the suggestions are the rules\' ranking.' };

function refused(engine: 'mongodb' | 'postgres', sentence: string): Advice {
  return { engine, shapes: [], suggestions: [], rewrites: [], notes: [], warnings: [], refusal: sentence };
}

/**
 * Advice for one MongoDB command on a live collection. Throws AdapterError for server failures (lost
 * connection, cancel, refused login); a query the advisor cannot read comes back as a refusal.
 */
export async function adviseMongoLive(session: MongoAdviceSession, cmd: MongoCommand, opts: LiveAdviceOptions = {}): Promise<LiveAdvice> {
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
  const stats = await mongoStats(db, cmd.collection, shape.shape, { ...common, ...(opts.sampleSize ? { sampleSize: opts.sampleSize } : {}), ...(opts.exactCounts ? { exactCounts: true } : {}) });
  const empty = (stats.stats.total ?? 0) === 0;
  const advice = adviseMongo(input.query, { existing: indexes.map(existingMongo), ...(empty ? {} : { stats: stats.stats }), ...known });
  advice.notes.unshift(...input.notes);
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
  if (advice.refusal !== undefined || !opts.verify || empty) return live;
  return trialOnSample(db, conn, { ...cmd, database: dbName }, live, indexes, opts);
}

/**
 * The sampled trial of advice given earlier by adviseMongoLive without it, once the user consents (the
 * plan panel's Verify): fills the suggestions' verification in place and returns the same LiveAdvice.
 * The indexes are listed again, since they may have changed since the advice was given. Throws
 * AdapterError like adviseMongoLive; the scratch collection is dropped in every case.
 */
export async function verifyMongoLive(session: MongoAdviceSession, cmd: MongoCommand, live: LiveAdvice, opts: Omit<LiveAdviceOptions, 'verify'> = {}): Promise<LiveAdvice> {
  const advice = live.advice;
  if (advice.refusal !== undefined || live.notIndexable !== undefined) return live;
  const conn = session.conn;
  if (conn.server.kind === 'compatible') {
    advice.notes.push(`The suggestions were not tried: ${conn.server.detail.replace(/\.$/, '')}, and a trial there would measure another planner.`);
    return live;
  }
  const dbName = cmd.database ?? opts.database ?? session.db.databaseName;
  const db = dbName === session.db.databaseName ? session.db : mongoDatabase(session.db, dbName);
  const indexes = await conn.listIndexes(cmd.collection, dbName);
  const shown = opts.measuredOrder ? undefined : shownOrder(advice);
  await trialOnSample(db, conn, { ...cmd, database: dbName }, live, indexes, opts);
  shown?.();
  return live;
}

/**
 * Verify on advice a front end already shows (the panel's Verify) fills in the verdicts, but keeps the
 * suggestions it shows in their order and ranks, since the front end finds them by rank; the measured
 * order is in `live.measurement`. Returns the function that puts the order back after measuring.
 */
function shownOrder(advice: Advice): () => void {
  const shown = advice.suggestions.map((s) => ({ s, rank: s.rank }));
  return () => {
    for (const { s, rank } of shown) s.rank = rank;
    advice.suggestions = shown.map((x) => x.s);
  };
}

/** Why a MongoDB measurement did not run for a user without write access, after "Not measured: ". */
const NEEDS_WRITE = 'needs write access (readWrite) for a scratch copy.';

async function trialOnSample(db: Db, conn: MongoConnection, cmd: MongoCommand, live: LiveAdvice, indexes: MongoIndexInfo[], opts: LiveAdviceOptions): Promise<LiveAdvice> {
  const advice = live.advice;
  // Leftovers of a run that was killed before it could drop its scratch collection.
  const stale = await dropStaleTrials(db).catch(() => [] as string[]);
  if (stale.length > 0) advice.notes.push(`Dropped ${stale.length} scratch collection${stale.length > 1 ? 's' : ''} left by an earlier interrupted trial: ${stale.join(', ')}.`);
  const input = fromMongoCommand(cmd);
  const shape = input.ok ? mongoShape(input.query) : undefined;
  // A user who may only read gets the rules' advice, and one sentence on why it was not measured: the
  // scratch collection is refused at its creation, before the server has copied anything.
  const readOnly = (err: unknown): undefined => {
    if (!writeRefused(err)) throw err;
    advice.notes.push(`Not measured: ${NEEDS_WRITE}`);
    live.measurement = { status: 'not-measured', label: 'not measured', reason: NEEDS_WRITE };
    return undefined;
  };
  if (shape?.ok && tournamentApplies(shape.shape)) {
    const stats = live.stats as MongoStats | undefined;
    const report = await mongoTournament(db, conn, cmd, shape.shape, advice, {
      existing: indexes,
      existingForAdvice: indexes.map(existingMongo),
      timeoutMs: opts.timeoutMs ?? 30_000,
      ...(stats ? { stats } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.sampleSize ? { minSample: opts.sampleSize } : {}),
      ...(opts.maxCandidates ? { cap: opts.maxCandidates } : {}),
      ...(opts.onTrialStep ? { onStep: opts.onTrialStep } : {}),
      ...(opts.until !== undefined ? { until: opts.until } : {}),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    }).catch((err: unknown) => readOnly(err));
    if (!report) return live;
    advice.notes.push(...report.notes);
    advice.warnings.push(...report.warnings);
    const t = report.tournament;
    if (t && t.winner === undefined) {
      live.measurement = { status: 'not-measured', label: 'not measured', reason: t.verdict };
    } else if (t) {
      live.verification = { method: 'tournament', sampleSize: t.sample.size, collectionSize: t.sample.total };
      live.measurement = { status: 'measured', label: t.label, tournament: t };
    } else {
      live.measurement = { status: 'not-measured', label: 'not measured', reason: report.notes[report.notes.length - 1] ?? 'Nothing could be measured.' };
    }
    return live;
  }
  // A pipeline the rules rewrite: the rules' suggestions tried together.
  const trial = await mongoTrial(db, conn, cmd, advice, {
    timeoutMs: opts.timeoutMs ?? 30_000,
    existing: indexes,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.sampleSize ? { sampleSize: opts.sampleSize } : {}),
    ...(opts.maxSuggestions ? { maxSuggestions: opts.maxSuggestions } : {}),
    ...(opts.onTrialStep ? { onStep: opts.onTrialStep } : {}),
  }).catch((err: unknown) => readOnly(err));
  if (!trial) return live;
  advice.notes.push(...trial.notes);
  advice.warnings.push(...trial.warnings);
  live.verification = { method: trial.sampleSize > 0 ? 'sampled-trial' : 'none', sampleSize: trial.sampleSize, collectionSize: trial.collectionSize };
  live.measurement = trial.sampleSize > 0
    ? { status: 'not-measured', label: `tried on a sample of ${trial.sampleSize.toLocaleString('en-US')} documents`, reason: 'A pipeline the rules rewrite ($match moved first): the rules\' suggestions were tried on a sample, not ranked by a tournament.' }
    : { status: 'not-measured', label: 'not measured', reason: trial.notes[0] ?? 'Nothing could be tried.' };
  return live;
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
export async function advisePostgresLive(session: PostgresAdviceSession, sql: string, opts: LiveAdviceOptions = {}): Promise<LiveAdvice> {
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
  if (advice.refusal !== undefined || opts.verifyPostgres === false || notIndexable !== undefined) return live;
  return verifyPostgresNow(session, sql, live, opts);
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
        counted.push(`${p.text}: ${Math.round(n).toLocaleString('en-US')}`);
      } catch (err) {
        if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth')) throw err;
        warnings.push(`The range ${p.text} could not be counted (${firstLine(err)}); its order among the ranges follows the planner's estimate.`);
      }
    }
    if (counted.length > 0) notes.push(`Ranges on ${table.name} counted with count(*) to put the most selective first (${counted.join('; ')} of about ${Math.round(ts.rows ?? 0).toLocaleString('en-US')} rows).`);
  }
  return warnings;
}

/**
 * Verifies the suggestions of advice given by advisePostgresLive: plain EXPLAIN with each index,
 * hypothetical through HypoPG, or built inside a rolled-back transaction when `allowBuild` says the user
 * agreed. Fills their verification in place and returns the same LiveAdvice.
 */
export async function verifyPostgresLive(session: PostgresAdviceSession, sql: string, live: LiveAdvice, opts: Omit<LiveAdviceOptions, 'verify' | 'verifyPostgres'> = {}): Promise<LiveAdvice> {
  const shown = opts.measuredOrder ? undefined : shownOrder(live.advice);
  await verifyPostgresNow(session, sql, live, opts);
  shown?.();
  return live;
}

async function verifyPostgresNow(session: PostgresAdviceSession, sql: string, live: LiveAdvice, opts: Omit<LiveAdviceOptions, 'verify' | 'verifyPostgres'>): Promise<LiveAdvice> {
  const advice = live.advice;
  if (advice.refusal !== undefined || live.notIndexable !== undefined) return live;
  if (session.scratch && opts.measure !== false) {
    const parsed = await parsePostgresQuery(sql);
    const shape = parsed.ok ? mergedPgShape(parsed.shapes) : undefined;
    if (shape) {
      const indexes = await Promise.all(shape.tables.map((t) => session.conn.listIndexes({ table: t.name, ...(t.schema !== undefined ? { schema: t.schema } : {}) })));
      const report = await pgTournament(session.conn, await session.scratch(), sql, shape, advice, {
        existing: indexes.flat().map(existingPg),
        timeoutMs: opts.timeoutMs ?? 30_000,
        ...(live.stats ? { stats: live.stats as PgStats } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.maxCandidates ? { cap: opts.maxCandidates } : {}),
        ...(opts.until !== undefined ? { until: opts.until } : {}),
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      });
      advice.notes.push(...report.notes);
      if (report.tournament && report.tournament.winner === undefined) {
        report.reason = report.tournament.verdict;
        delete report.tournament;
      }
      if (report.tournament) {
        const t = report.tournament;
        live.verification = { method: 'tournament', sampleSize: t.sample.size, collectionSize: t.sample.total };
        live.measurement = { status: 'measured', label: t.label, tournament: t };
        return live;
      }
      if (report.reason !== undefined) live.measurement = { status: 'not-measured', label: 'not measured', reason: report.reason };
    }
  }
  if (opts.fallback === false) return live;
  const report = await verifyPostgres(session.conn, sql, advice, {
    timeoutMs: opts.timeoutMs ?? 30_000,
    existingNames: live.existingIndexes,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.allowBuild ? { allowBuild: true } : {}),
    ...(opts.maxSuggestions ? { maxSuggestions: opts.maxSuggestions } : {}),
  });
  advice.notes.push(...report.notes);
  advice.warnings.push(...report.warnings);
  live.verification = { method: report.method };
  return live;
}
