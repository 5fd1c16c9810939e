// One advice service behind every face: the lens, the squiggle and the hover of the language server, the
// plan panel's suggestions and its Verify, `qpi advise` and `qpi check --measure`. Each asks here, so the
// same query on the same connection, with the same indexes and statistics, gets the same verdict
// wherever it is shown.
//
// Three acts, one word each: advise (the rules' suggestion with the live indexes and statistics,
// advise.ts), measure (the server runs the candidates, measure/: this service is its one caller outside
// it) and build (Create Index, the extension's). The service owns consistency, not ranking: it asks the
// advisor (ADVISOR below), then applies the one rule every face must keep (no suggestion of an index that
// exists or that an existing one serves: "keep using X"), and caches the answer; measuring waits for the
// user's Verify or the CLI's flags, since it writes on the server (a scratch collection, a rolled-back
// build). The cache key is the query (its parsed command, or its SQL with the spacing normalised), the
// connection, the index lists of its collection or tables and a fingerprint of their statistics (document
// count / reltuples and the last ANALYZE). The index lists and the fingerprint are read from the server on
// every request (cheap catalog calls), so an index built or dropped by anyone is seen the next time any
// face asks; `invalidate` drops entries at once after Create Index, a connection switch or Refresh.

import { adviseMongo, advisePostgres, fromMongoCommand, keepServedIndexes, mongoLookups } from '../core/index';
import { parsePostgresQuery } from '../core/index';
import type { Advice, ExistingMongoIndex, ExistingPgIndex, Measurement, MongoStats } from '../core/index';
import type { MongoCommand } from '../core/index';
import {
  existingMongo, existingPg, liveMongoAdvice, livePostgresAdvice, NOT_REQUESTED, refused,
  type AdviseOptions, type LiveAdvice, type MongoAdviceSession, type PostgresAdviceSession,
} from './advise';
import { mongoDatabase, mongoEstimatedCount } from './door';
import { AdapterError } from './errors';
import { measureMongo, measurePostgres, type MeasureOptions } from './measure/index';

export { mongoNumbers, type MeasuredNumbers, type MeasuredVerdict, type MeasureProgress, type MeasureStep, type MeasureOptions } from './measure/index';

/**
 * What a face may ask of the advice: the advisor's options, the measurement's, and `measure`, whether
 * the server measures the candidates at all (MongoDB: only with the user's consent, since it writes a
 * scratch collection, default false; PostgreSQL: default true, on a copy in a rolled-back transaction).
 */
export type LiveAdviceOptions = AdviseOptions & MeasureOptions & { measure?: boolean };

// ---- the one entry point ----------------------------------------------------------------------------

/** What to advise on: a MongoDB command or one SQL statement, with a session when connected. */
export type AdviceTarget =
  | { engine: 'mongodb'; command: MongoCommand; session?: MongoAdviceSession }
  | { engine: 'postgres'; sql: string; session?: PostgresAdviceSession };

/**
 * The advisor's verdict, the same for every face (CLI, lens, squiggle, panel, Verify): suggestions in
 * order (by measured work when `measurement.status` is 'measured', else the rules' order), and what the
 * order stands on. `measurement.tournament` holds the runner-up, today's figures, the candidates measured
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
 * on the server (MongoDB: on a sampled scratch collection, which writes and so needs the user's
 * consent, default false; PostgreSQL: on a sample in a temporary table inside a transaction that is
 * always rolled back, default true; `estimatesOnly` leaves the planner's estimates with HypoPG). Throws
 * AdapterError for server failures and a cancel; a query that cannot be read comes back as
 * `advice.refusal`.
 */
export async function adviseQuery(target: AdviceTarget, opts: LiveAdviceOptions = {}): Promise<AdvisorResult> {
  if (target.engine === 'mongodb') {
    if (!target.session) {
      const input = fromMongoCommand(target.command);
      if (!input.ok) return { advice: refused('mongodb', input.refusal), measurement: OFFLINE };
      const advice = adviseMongo(input.query);
      advice.notes.unshift(...input.notes);
      return { advice, measurement: OFFLINE };
    }
    const live = await adviseMongoLive(target.session, target.command, opts);
    return { advice: live.advice, measurement: live.measurement ?? NOT_REQUESTED, live };
  }
  if (!target.session) return { advice: await advisePostgres(target.sql), measurement: OFFLINE };
  const live = await advisePostgresLive(target.session, target.sql, opts);
  return { advice: live.advice, measurement: live.measurement ?? NOT_REQUESTED, live };
}

/**
 * Advice for one MongoDB command on a live collection, measured on a sample when `measure` gives the
 * user's consent (not on an empty collection, where the advice used no counts, nor on a server that is
 * not MongoDB itself). Throws AdapterError for server failures (lost connection, cancel, refused login);
 * a query the advisor cannot read comes back as a refusal.
 */
export async function adviseMongoLive(session: MongoAdviceSession, cmd: MongoCommand, opts: LiveAdviceOptions = {}): Promise<LiveAdvice> {
  const live = await liveMongoAdvice(session, cmd, opts);
  if (!opts.measure || live.stats === undefined || ((live.stats as MongoStats).total ?? 0) === 0) return live;
  return measureMongo(session, cmd, live, { ...opts, measuredOrder: true });
}

/**
 * Advice for one SQL statement on a live PostgreSQL database, measured unless `measure` is false.
 * Throws AdapterError for server failures; SQL the advisor cannot read comes back as a refusal.
 */
export async function advisePostgresLive(session: PostgresAdviceSession, sql: string, opts: LiveAdviceOptions = {}): Promise<LiveAdvice> {
  const live = await livePostgresAdvice(session, sql, opts);
  if (opts.measure === false) return live;
  return measurePostgres(session, sql, live, { ...opts, measuredOrder: true });
}

/**
 * The advisor as the service asks it, without measurement: measurement writes on the server (a scratch
 * collection, a rolled-back build) and so waits for the user's Verify or the CLI's flags.
 */
export const ADVISOR = {
  async mongodb(session: MongoAdviceSession, cmd: MongoCommand, opts: LiveAdviceOptions): Promise<LiveAdvice> {
    const r = await adviseQuery({ engine: 'mongodb', command: cmd, session }, { ...opts, measure: false });
    return r.live ?? { advice: r.advice, engine: 'mongodb', serverVersion: session.conn.server.version, existingIndexes: [], verification: { method: 'none' }, measurement: r.measurement };
  },
  async postgres(session: PostgresAdviceSession, sql: string, opts: LiveAdviceOptions): Promise<LiveAdvice> {
    const r = await adviseQuery({ engine: 'postgres', sql, session }, { ...opts, measure: false });
    return r.live ?? { advice: r.advice, engine: 'postgres', serverVersion: session.conn.serverVersion, existingIndexes: [], verification: { method: 'none' }, measurement: r.measurement };
  },
};

export interface ServiceRequest {
  /** A stable id of the connection (the extension's connection id, or the URI without its password). */
  connection: string;
  options?: LiveAdviceOptions;
}

interface Entry {
  key: string;
  connection: string;
  targets: string[];
  live: Promise<LiveAdvice>;
  at: number;
}

/** What a cached answer was computed from, for tests and the log. */
export interface AdviceKeyParts {
  query: string;
  connection: string;
  indexes: string;
  stats: string;
}

const LIMIT = 500;

/** Two significant digits: a count that moves a little keeps its verdict, a table ten times bigger does not. */
function rounded(n: number): string {
  if (!Number.isFinite(n) || n <= 0) return '0';
  const p = 10 ** Math.max(0, Math.floor(Math.log10(n)) - 1);
  return String(Math.round(n / p) * p);
}

/**
 * A $lookup's other collection that cannot be listed (missing, or not the user's to list) keys the answer
 * with no indexes, as the advisor then reads it; a cancel or a time limit still ends the request.
 */
function unlisted(err: unknown): [] {
  if (err instanceof AdapterError && (err.kind === 'auth' || err.kind === 'server')) return [];
  throw err;
}

export function normalizedSql(sql: string): string {
  return sql.replace(/\s+/g, ' ').replace(/\s*;\s*$/, '').trim();
}

export class AdviceService {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners: ((e: { connection?: string; targets?: string[] }) => void)[] = [];
  /** Answers computed by the advisor (cache misses), for tests and the log. */
  computed = 0;
  /** The key parts of the last answer given. */
  lastKey: AdviceKeyParts | undefined;

  /** Called after entries were dropped, so the faces that showed them ask again. */
  onInvalidate(fn: (e: { connection?: string; targets?: string[] }) => void): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Drops the answers of a connection (all connections when absent), or only those about these collections/tables. */
  invalidate(scope: { connection?: string; targets?: string[] } = {}): void {
    for (const [key, e] of this.entries) {
      if (scope.connection !== undefined && e.connection !== scope.connection) continue;
      if (scope.targets && !scope.targets.some((t) => e.targets.includes(t))) continue;
      this.entries.delete(key);
    }
    for (const fn of [...this.listeners]) fn(scope);
  }

  async mongo(session: MongoAdviceSession, cmd: MongoCommand, req: ServiceRequest): Promise<LiveAdvice> {
    const dbName = cmd.database ?? req.options?.database ?? session.db.databaseName;
    const indexes = (await session.conn.listIndexes(cmd.collection, dbName)).map(existingMongo);
    // The other collections a $lookup reads: their index lists decide the advice on them too, so an index
    // built there (by anyone) is a new answer as one built on the queried collection is.
    const input = fromMongoCommand(cmd);
    const others = input.ok ? [...new Set(mongoLookups(input.query).map((l) => l.from))].filter((c) => c !== cmd.collection) : [];
    const otherIndexes: Record<string, ExistingMongoIndex[]> = {};
    for (const c of others) otherIndexes[c] = (await session.conn.listIndexes(c, dbName).catch(unlisted)).map(existingMongo);
    const db = dbName === session.db.databaseName ? session.db : mongoDatabase(session.db, dbName);
    const count = await mongoEstimatedCount(db, cmd.collection, { maxTimeMS: 5_000 }).catch(() => -1);
    // The command without where it was written (its source ranges), so spacing does not count.
    const { database: _db, ranges: _ranges, explain: _explain, ...rest } = cmd;
    const parts: AdviceKeyParts = {
      query: JSON.stringify({ ...rest, database: dbName }),
      connection: req.connection,
      indexes: JSON.stringify(others.length > 0 ? { [cmd.collection]: indexes, ...otherIndexes } : indexes),
      stats: rounded(count),
    };
    return this.answer(parts, [cmd.collection, ...others], async () => {
      const live = await ADVISOR.mongodb(session, cmd, req.options ?? {});
      keepServedIndexes(live.advice, { mongodb: indexes }, cmd.collection);
      return live;
    });
  }

  async postgres(session: PostgresAdviceSession, sql: string, req: ServiceRequest): Promise<LiveAdvice> {
    const parsed = await parsePostgresQuery(sql);
    const tables = parsed.ok ? [...new Map(parsed.shapes.flatMap((s) => s.tables).map((t) => [`${t.schema ?? ''}.${t.name}`, t])).values()] : [];
    const indexes: ExistingPgIndex[] = [];
    const stats: string[] = [];
    for (const t of tables) {
      indexes.push(...(await session.conn.listIndexes({ table: t.name, ...(t.schema !== undefined ? { schema: t.schema } : {}) })).map(existingPg));
      const rows = await session.catalog.read(
        'SELECT c.reltuples::float8 AS n, greatest(s.last_analyze, s.last_autoanalyze)::text AS analysed FROM pg_class c LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid WHERE c.oid = to_regclass($1)',
        [t.schema !== undefined ? `${t.schema}.${t.name}` : t.name],
      ).catch(() => [] as Record<string, unknown>[]);
      const r = rows[0];
      stats.push(r ? `${t.name}:${rounded(Number(r.n))}:${String(r.analysed ?? '')}` : `${t.name}:?`);
    }
    const parts: AdviceKeyParts = { query: normalizedSql(sql), connection: req.connection, indexes: JSON.stringify(indexes), stats: stats.join(',') };
    return this.answer(parts, tables.map((t) => t.name), async () => {
      const live = await ADVISOR.postgres(session, sql, req.options ?? {});
      keepServedIndexes(live.advice, { postgres: indexes });
      return live;
    });
  }

  /**
   * Measures a MongoDB answer given here on a sample (fills its suggestions' verdicts in place); nothing
   * to measure on an empty collection, where the advice used no counts.
   */
  async measureMongo(session: MongoAdviceSession, cmd: MongoCommand, live: LiveAdvice, opts: MeasureOptions = {}): Promise<LiveAdvice> {
    if (live.stats !== undefined && ((live.stats as MongoStats).total ?? 0) === 0) return live;
    return measureMongo(session, cmd, live, opts);
  }

  /** Measures a PostgreSQL answer given here: the candidates on a copy, or the planner's estimates. */
  async measurePostgres(session: PostgresAdviceSession, sql: string, live: LiveAdvice, opts: MeasureOptions = {}): Promise<LiveAdvice> {
    return measurePostgres(session, sql, live, opts);
  }

  private answer(parts: AdviceKeyParts, targets: string[], make: () => Promise<LiveAdvice>): Promise<LiveAdvice> {
    const key = JSON.stringify(parts);
    this.lastKey = parts;
    const hit = this.entries.get(key);
    if (hit) return hit.live;
    // Answers for an older index list or statistics of the same query and connection are dead now; an
    // index list that changed under them (built or dropped by anyone) is news for every face.
    let indexesChanged = false;
    for (const k of [...this.entries.keys()]) {
      const p = JSON.parse(k) as AdviceKeyParts;
      if (p.query !== parts.query || p.connection !== parts.connection) continue;
      this.entries.delete(k);
      if (p.indexes !== parts.indexes) indexesChanged = true;
    }
    if (indexesChanged) this.invalidate({ connection: parts.connection, targets });
    this.computed++;
    const live = make();
    const entry: Entry = { key, connection: parts.connection, targets, live, at: Date.now() };
    this.entries.set(key, entry);
    // A failed answer is not kept: the next request tries again.
    live.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    if (this.entries.size > LIMIT) this.entries.delete(this.entries.keys().next().value!);
    return live;
  }
}
