// Measuring: the server runs the candidate indexes and the suggestions are ranked, or given their
// verdicts, by the work it did. The advice service (adviceService.ts) is the one caller outside this
// folder; it gives the advice (advise.ts) first and hands it here, so the verdict is on the suggestion a
// face showed.
//
// MongoDB: every candidate measured on a sample in a scratch collection that is always dropped
// (mongoCandidates.ts, mongoScratch.ts), or, for a pipeline the rules rewrite, the rules' suggestions
// measured together on a sample (mongoSuggestions.ts). PostgreSQL: every candidate measured on a TEMP copy
// inside a transaction that is always rolled back (pgCandidates.ts), else the planner's estimates with
// HypoPG or a rolled-back build (pgEstimates.ts). What a measurement reports: figures.ts. Every statement
// reaches the server through the one door (door.ts).

import type { Advice, MongoCommand, MongoStats, PgStats } from '../../core/index';
import { formatCount, fromMongoCommand, mergedPgShape, mongoShape, parsePostgresQuery } from '../../core/index';
import { existingMongo, existingPg, type LiveAdvice, type MongoAdviceSession, type PostgresAdviceSession } from '../advise';
import { mongoDatabase } from '../door';
import type { MongoIndexInfo } from '../mongodb';
import type { MeasureProgress, MeasureStep } from './figures';
import { candidatesMeasurable, measureMongoCandidates } from './mongoCandidates';
import { dropStaleScratch, writeRefused } from './mongoScratch';
import { measureMongoSuggestions } from './mongoSuggestions';
import { measurePgCandidates } from './pgCandidates';
import { measurePgEstimates } from './pgEstimates';

export { mongoNumbers, type MeasuredNumbers, type MeasuredVerdict, type MeasureProgress, type MeasureStep } from './figures';

export interface MeasureOptions {
  /** MongoDB: documents in the random sample (at least, for every candidate). Default 1,000. */
  sampleSize?: number;
  /** Suggestions measured, in rank order, when the rules' suggestions are measured (default 3; the branches of an $or together). */
  maxSuggestions?: number;
  /** Candidates measured at most (default 24). */
  maxCandidates?: number;
  /** PostgreSQL: the planner's estimates only (HypoPG, or a rolled-back build), without the candidates run on a copy. */
  estimatesOnly?: boolean;
  /**
   * PostgreSQL: false stops when the candidates cannot be run on a copy, without the planner's estimates
   * (which may need a build on the user's table): the caller asks for that build's consent only then.
   */
  fallback?: boolean;
  /** PostgreSQL without HypoPG: consent to build each index inside a rolled-back transaction (it locks writes). */
  allowBuild?: boolean;
  /** Time limit of each server operation. Default 30 s. */
  timeoutMs?: number;
  /**
   * When the measurement must end (epoch ms), however many candidates are left: none starts after it,
   * each statement's limit is cut to what is left, and the best of those measured is given, labelled so.
   */
  until?: number;
  /** Called as candidates are measured (how many of how many), for a progress line. */
  onProgress?: (p: MeasureProgress) => void;
  /** MongoDB: called at each step of the measurement. */
  onStep?: (step: MeasureStep) => void;
  /** Aborting stops the running operation on the server; a scratch collection is dropped anyway. */
  signal?: AbortSignal;
  /** MongoDB: database when the query does not name one; default the session's. */
  database?: string;
  /**
   * True leaves the suggestions in the measured order (the command line prints them best first); a front
   * end that finds the suggestions it shows by rank leaves it unset, and the measured order is in
   * `live.measurement`.
   */
  measuredOrder?: boolean;
}

/**
 * Measures the suggestions of MongoDB advice given earlier (the user consented: it writes a scratch
 * collection): fills their verdicts in place and returns the same LiveAdvice. The indexes are listed
 * again, since they may have changed since the advice was given. Throws AdapterError for server
 * failures and a cancel; the scratch collection is dropped in every case.
 */
export async function measureMongo(session: MongoAdviceSession, cmd: MongoCommand, live: LiveAdvice, opts: MeasureOptions = {}): Promise<LiveAdvice> {
  const advice = live.advice;
  if (advice.refusal !== undefined || live.notIndexable !== undefined) return live;
  const conn = session.conn;
  if (conn.server.kind === 'compatible') {
    advice.notes.push(`The suggestions were not tried: ${conn.server.detail.replace(/\.$/, '')}, and a measurement there would see another planner.`);
    return live;
  }
  const dbName = cmd.database ?? opts.database ?? session.db.databaseName;
  const indexes = await conn.listIndexes(cmd.collection, dbName);
  const putBack = setAsideElsewhere(advice, cmd.collection);
  const shown = opts.measuredOrder ? undefined : shownOrder(advice);
  try {
    await onSample(session, { ...cmd, database: dbName }, live, indexes, opts);
  } finally {
    shown?.();
    putBack();
  }
  return live;
}

/**
 * Takes out the suggestions on another collection than the queried one (a $lookup's other collection):
 * a measurement copies a sample of the queried collection only, so an index there would be built on the
 * wrong documents. Returns the function that puts them back after the measured ones, unmeasured, with a
 * note saying so.
 */
function setAsideElsewhere(advice: Advice, collection: string): () => void {
  const elsewhere = advice.suggestions.filter((s) => s.index?.engine === 'mongodb' && s.index.collection !== collection);
  if (elsewhere.length === 0) return () => undefined;
  advice.suggestions = advice.suggestions.filter((s) => !elsewhere.includes(s));
  return () => {
    for (const s of elsewhere) {
      s.rank = advice.suggestions.length + 1;
      advice.suggestions.push(s);
    }
    const names = [...new Set(elsewhere.map((s) => (s.index?.engine === 'mongodb' ? s.index.collection : '')))];
    advice.notes.push(`The suggestion${elsewhere.length > 1 ? 's' : ''} on ${names.join(' and ')} ${elsewhere.length > 1 ? 'were' : 'was'} not measured: a measurement copies a sample of ${collection} only.`);
  };
}

/**
 * Measures the suggestions of PostgreSQL advice given earlier: every candidate on a copy in a
 * rolled-back transaction when the session has a connection for it, else (or with `estimatesOnly`) the
 * planner's estimates, hypothetical through HypoPG or built inside a rolled-back transaction when
 * `allowBuild` says the user agreed. Fills their verdicts in place and returns the same LiveAdvice.
 */
export async function measurePostgres(session: PostgresAdviceSession, sql: string, live: LiveAdvice, opts: MeasureOptions = {}): Promise<LiveAdvice> {
  const shown = opts.measuredOrder ? undefined : shownOrder(live.advice);
  await measurePostgresNow(session, sql, live, opts);
  shown?.();
  return live;
}

/**
 * A front end that shows the advice finds its suggestions by rank: measuring fills in the verdicts but
 * keeps the order and ranks it shows. Returns the function that puts the order back after measuring.
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

/**
 * The measurement of MongoDB advice on a sample: every candidate when they can be measured, else (a
 * pipeline the rules rewrite) the rules' suggestions together. A user who may only read gets the rules'
 * advice and one sentence on why it was not measured.
 */
async function onSample(session: MongoAdviceSession, cmd: MongoCommand & { database: string }, live: LiveAdvice, indexes: MongoIndexInfo[], opts: MeasureOptions): Promise<LiveAdvice> {
  const advice = live.advice;
  const conn = session.conn;
  const db = cmd.database === session.db.databaseName ? session.db : mongoDatabase(session.db, cmd.database);
  // Leftovers of a run that was killed before it could drop its scratch collection.
  const stale = await dropStaleScratch(db).catch(() => [] as string[]);
  if (stale.length > 0) advice.notes.push(`Dropped ${stale.length} scratch collection${stale.length > 1 ? 's' : ''} left by an earlier interrupted measurement: ${stale.join(', ')}.`);
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
  if (shape?.ok && candidatesMeasurable(shape.shape)) {
    const stats = live.stats as MongoStats | undefined;
    const report = await measureMongoCandidates(db, conn, cmd, shape.shape, advice, {
      existing: indexes,
      existingForAdvice: indexes.map(existingMongo),
      timeoutMs: opts.timeoutMs ?? 30_000,
      ...(stats ? { stats } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.sampleSize ? { minSample: opts.sampleSize } : {}),
      ...(opts.maxCandidates ? { cap: opts.maxCandidates } : {}),
      ...(opts.onStep ? { onStep: opts.onStep } : {}),
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
  const measured = await measureMongoSuggestions(db, conn, cmd, advice, {
    timeoutMs: opts.timeoutMs ?? 30_000,
    existing: indexes,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.sampleSize ? { sampleSize: opts.sampleSize } : {}),
    ...(opts.maxSuggestions ? { maxSuggestions: opts.maxSuggestions } : {}),
    ...(opts.onStep ? { onStep: opts.onStep } : {}),
  }).catch((err: unknown) => readOnly(err));
  if (!measured) return live;
  advice.notes.push(...measured.notes);
  advice.warnings.push(...measured.warnings);
  live.verification = { method: measured.sampleSize > 0 ? 'sampled-trial' : 'none', sampleSize: measured.sampleSize, collectionSize: measured.collectionSize };
  live.measurement = measured.sampleSize > 0
    ? { status: 'not-measured', label: `tried on a sample of ${formatCount(measured.sampleSize)} documents`, reason: 'the rules\' suggestions for the pipeline they rewrite ($match moved first) were tried together on the sample, not ranked against each other.' }
    : { status: 'not-measured', label: 'not measured', reason: measured.notes[0] ?? 'Nothing could be tried.' };
  return live;
}

async function measurePostgresNow(session: PostgresAdviceSession, sql: string, live: LiveAdvice, opts: MeasureOptions): Promise<LiveAdvice> {
  const advice = live.advice;
  if (advice.refusal !== undefined || live.notIndexable !== undefined) return live;
  if (session.scratch && !opts.estimatesOnly) {
    const parsed = await parsePostgresQuery(sql);
    const shape = parsed.ok ? mergedPgShape(parsed.shapes) : undefined;
    if (shape) {
      const indexes = await Promise.all(shape.tables.map((t) => session.conn.listIndexes({ table: t.name, ...(t.schema !== undefined ? { schema: t.schema } : {}) })));
      const report = await measurePgCandidates(session.conn, await session.scratch(), sql, shape, advice, {
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
  const report = await measurePgEstimates(session.conn, sql, advice, {
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
