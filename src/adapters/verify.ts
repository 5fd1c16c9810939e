// Verification of the advisor's suggestions on a live server, before any is offered as verified. It fills
// each Suggestion.verification the pure advisor left 'not-run'.
//
// MongoDB has no hypothetical indexes, so the check is a sampled trial, run only with the user's consent:
// a bounded random sample of the collection ($sample) is copied into a scratch collection on the same
// server, the collection's own indexes and the candidates are built there, and the query is explained at
// executionStats: without a hint (what the planner does with today's indexes) and with a hint on each
// candidate. Work is keys examined + documents examined + documents a blocking SORT holds. The scratch
// collection is always dropped, after success, error or cancel. It is created empty first, carrying a
// marker in its options (the run that made it and the time by which that run is over), then filled: a
// run killed before it could drop it leaves a marked collection that a later run's sweep drops once that
// time has passed, and the sweep never touches a collection without the marker, whatever its name. A
// measurement has a time budget; past it, as on a cancel, its operations are stopped on the server.
//
// PostgreSQL: plain EXPLAIN without and with the index, hypothetical through HypoPG when it is installed
// (nothing is built), otherwise, only when the user allows it, built inside a transaction that is rolled
// back (the build locks writes to the table while it runs).

import type { ClientSession, Db, Document } from 'mongodb';
import type { Advice, MongoIndexSpec, MongoQueryInput, PgIndexSpec, Suggestion, Verification } from '../core/index';
import type { Plan, PlanNode } from '../core/index';
import type { MongoCommand } from '../core/index';
import { explainWouldWrite } from '../core/index';
import { formatMs } from './deadline';
import { mongoAggregate, mongoCountDocuments, mongoCreateScratch, mongoDropScratch, mongoEstimatedCount, mongoListCollections, mongoScratchIndexes, scratchMarkerOf, type ScratchMarker } from './door';
import { AdapterError } from './errors';
import { hasPlaceholder, killable, mongoOpError, operationTag } from './mongoOps';
import type { MongoConnection, MongoIndexInfo } from './mongodb';
import type { PostgresConnection } from './postgres';
import { boundedSampleSize, DEFAULT_SAMPLE_SIZE } from './stats';
import { formatCount } from '../core/index';

/** What one explain of the trial measured. */
export interface TrialNumbers {
  keysExamined: number;
  docsExamined: number;
  nReturned: number;
  /** Documents (or keys) that entered a blocking SORT; 0 without one. */
  sorted: number;
  blockingSort: boolean;
  /** keysExamined + docsExamined + sorted: the unit the trial compares. */
  work: number;
  /** The stages, as "LIMIT > FETCH > IXSCAN {a: 1}". */
  plan: string;
  /** The index scanned, or undefined for a collection scan. */
  index?: string;
}

/** A verification with the facts behind its numbers (a subtype of the advisor's Verification). */
export type LiveVerification = Extract<Verification, { status: 'verified' | 'refuted' | 'failed' }> & {
  /** MongoDB trial: documents in the sample the numbers rest on, and the collection's size. */
  sampleSize?: number;
  collectionSize?: number;
  /** The plan without the index and with it. */
  planBefore?: string;
  planAfter?: string;
  /** The planner chose the index by itself (MongoDB: unhinted once it existed; PostgreSQL: in the plan). */
  usedByPlanner?: boolean;
  numbersBefore?: TrialNumbers;
  numbersAfter?: TrialNumbers;
};

export const TRIAL_PREFIX = 'qpi_trial_';
const DEFAULT_TIMEOUT_MS = 30_000;
const WORK_UNIT = 'keys + documents examined + documents sorted in memory';
/** An index must cut the work (or the estimated cost) by at least this share to count as an improvement. */
const BETTER = 0.9;

const fmt = formatCount;

// ---- plans --------------------------------------------------------------------------------------------

/** The plan's stages as one line: "LIMIT > FETCH > IXSCAN {a: 1}", branches in parentheses. */
export function planShape(plan: Plan): string {
  const label = (n: PlanNode): string => {
    if (plan.engine === 'mongodb') {
      const kp = n.details.keyPattern;
      return kp ? `${n.kind} {${Object.entries(kp).map(([k, v]) => `${k}: ${v}`).join(', ')}}` : n.kind;
    }
    const on = n.details.indexName !== undefined ? ` using ${n.details.indexName}` : n.details.relationName !== undefined ? ` on ${n.details.relationName}` : '';
    return `${n.kind}${on}`;
  };
  const draw = (n: PlanNode): string => {
    if (n.children.length === 0) return label(n);
    if (n.children.length === 1) return `${label(n)} > ${draw(n.children[0]!)}`;
    return `${label(n)}(${n.children.map(draw).join(', ')})`;
  };
  return draw(plan.root);
}

/** Keys, documents and in-memory sort of a MongoDB executionStats plan. */
export function mongoNumbers(plan: Plan): TrialNumbers {
  const t = plan.totals;
  const keys = t.keysExamined ?? sum(plan.nodes, (n) => n.metrics.keysExamined);
  const docs = t.docsExamined ?? sum(plan.nodes, (n) => n.metrics.docsExamined);
  const sorts = plan.nodes.filter((n) => n.kind === 'SORT' || n.kind === 'SORT_KEY_GENERATOR' || n.kind === '$sort');
  const sorted = sorts.reduce((acc, n) => acc + (n.children[0]?.metrics.rowsReturned ?? n.metrics.rowsReturned ?? 0), 0);
  const scans = plan.nodes.filter((n) => n.details.indexName !== undefined);
  const out: TrialNumbers = {
    keysExamined: keys,
    docsExamined: docs,
    nReturned: t.nReturned ?? plan.root.metrics.rowsReturned ?? 0,
    sorted,
    blockingSort: sorts.length > 0,
    work: keys + docs + sorted,
    plan: planShape(plan),
  };
  if (scans.length > 0) out.index = scans[0]!.details.indexName!;
  return out;
}

function sum(nodes: PlanNode[], f: (n: PlanNode) => number | undefined): number {
  return nodes.reduce((acc, n) => acc + (f(n) ?? 0), 0);
}

function numbersText(n: TrialNumbers): string {
  return `${fmt(n.keysExamined)} keys + ${fmt(n.docsExamined)} documents${n.blockingSort ? ` + ${fmt(n.sorted)} sorted in memory` : ''} = ${fmt(n.work)}`;
}

// ---- MongoDB sampled trial ----------------------------------------------------------------------------

export type TrialStep = 'copy' | 'indexes' | 'explain' | 'drop';

export interface MongoTrialOptions {
  /** Documents copied into the scratch collection. Default 1,000. */
  sampleSize?: number;
  /** maxTimeMS of each operation. Default 30 s. */
  timeoutMs?: number;
  /** Time the whole trial may take; past it its operations are stopped on the server. Default measurementBudget(timeoutMs). */
  budgetMs?: number;
  /** Aborting kills the running operation on the server; the scratch collection is dropped anyway. */
  signal?: AbortSignal;
  /** Suggestions tried, in rank order. Default 3. */
  maxSuggestions?: number;
  /** The collection's indexes (listIndexes), rebuilt on the sample so the "before" plan is today's. */
  existing?: MongoIndexInfo[];
  /** Called as the trial moves from one step to the next. */
  onStep?: (step: TrialStep) => void;
}

export interface MongoTrialReport {
  /** The scratch collection's name (dropped by the time this returns). */
  scratch: string;
  /** Documents the sample held. */
  sampleSize: number;
  collectionSize: number;
  /** False only when dropping failed; the warnings then say which collection to drop by hand. */
  dropped: boolean;
  notes: string[];
  warnings: string[];
}

/** A name that says what the collection is, unique per run, with its creation time. */
export function scratchName(collection: string): string {
  const base = collection.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
  return `${TRIAL_PREFIX}${base}_${Date.now().toString(36)}_${operationTag('x').slice(-6)}`;
}

/** Time a run's scratch collection is left alone after the run's budget, for the run's own drop. */
export const SCRATCH_GRACE_MS = 5 * 60_000;

/** The time a whole measurement may take: ten times the limit of one operation, from 1 to 30 minutes. */
export function measurementBudget(maxTimeMS: number): number {
  return Math.min(30 * 60_000, Math.max(60_000, 10 * maxTimeMS));
}

/** The one sentence of a measurement a user stopped: true to what had been sent to the server. */
export function measurementCancelled(begun: boolean): AdapterError {
  return begun
    ? new AdapterError('cancelled', 'The measurement was cancelled and stopped on the server.')
    : new AdapterError('cancelled', 'The measurement was cancelled before it started.');
}

/**
 * One MongoDB measurement (a tournament or a trial): its operations' comment tag, the signal that stops
 * them (the caller's cancel, or the end of the time budget), whether any work was sent to the server, and
 * the marker of its scratch collection. Every server operation goes through `op` or is preceded by
 * `began()`, and `failure` turns whatever stopped the run into the sentence that is true of it.
 */
export class MongoMeasurement {
  readonly tag: string;
  readonly signal: AbortSignal;
  readonly marker: ScratchMarker;
  readonly budgetMs: number;
  /** True once an operation was sent to the server. */
  begun = false;
  private expired = false;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort: () => void;

  constructor(what: string, private readonly caller: AbortSignal | undefined, budgetMs: number) {
    this.tag = operationTag(what);
    this.budgetMs = budgetMs;
    this.signal = this.controller.signal;
    this.marker = { run: this.tag, until: Date.now() + budgetMs + SCRATCH_GRACE_MS };
    this.onAbort = () => this.controller.abort();
    if (caller?.aborted) this.controller.abort();
    else caller?.addEventListener('abort', this.onAbort, { once: true });
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort();
    }, budgetMs);
  }

  /** Marks that work goes to the server now (an explain through the adapter's own connection). */
  began(): void {
    if (!this.signal.aborted) this.begun = true;
  }

  /** One server operation of the measurement, stopped on the server when the measurement is stopped. */
  op<T>(db: Db, run: (session: ClientSession) => Promise<T>): Promise<T> {
    this.began();
    return killable(db, this.tag, this.signal, run);
  }

  /** What to throw for an error that ended the run: the cancel or the budget when either stopped it. */
  failure(err: unknown): unknown {
    if (this.expired) return new AdapterError('timeout', `The measurement ran past its time budget of ${formatMs(this.budgetMs)} and was stopped on the server.`);
    if (this.caller?.aborted) return measurementCancelled(this.begun);
    return err;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onAbort);
  }
}

/**
 * Creates the scratch collection empty, with its marker, before anything is copied into it: a user who
 * may not write is refused here (code 13), before the server has done any work.
 */
export async function createScratch(db: Db, m: MongoMeasurement, scratch: string, maxTimeMS: number, report: { scratchMayExist: boolean }): Promise<void> {
  // From here the collection may exist (a cancel or a lost connection leaves it unknown), unless the
  // server refused to create it.
  report.scratchMayExist = true;
  try {
    await m.op(db, (session) => mongoCreateScratch(db, scratch, m.marker, { session, comment: m.tag, maxTimeMS }));
  } catch (err) {
    if (writeRefused(err)) report.scratchMayExist = false;
    throw err;
  }
}

/** True for the server's refusal of a write to a user without write access (code 13, Unauthorized). */
export function writeRefused(err: unknown): boolean {
  return err instanceof AdapterError && err.kind === 'auth' && err.code === 13;
}

/** The sample's description: "a random sample of 1,000 of 20,000 documents", or all of them when the whole collection was copied. */
export function sampleWords(inSample: number, total: number): string {
  return inSample >= total ? `all ${fmt(inSample)} documents` : `a random sample of ${fmt(inSample)} of ${fmt(total)} documents`;
}

/** The structured form of a rewrite as a command the adapter can explain, when it has every value. */
function commandFromInput(q: MongoQueryInput, base: MongoCommand): MongoCommand | undefined {
  if (hasPlaceholder(q)) return undefined;
  const cmd: MongoCommand = { collection: q.collection, operation: 'find', hasPlaceholders: false, ranges: {} };
  if (base.database !== undefined) cmd.database = base.database;
  if (q.operation === 'aggregate' || (q.operation === undefined && q.pipeline)) {
    cmd.operation = 'aggregate';
    cmd.pipeline = q.pipeline ?? [];
    return cmd;
  }
  if (q.operation !== undefined && q.operation !== 'find') return undefined;
  if (q.filter) cmd.filter = q.filter;
  if (q.sort) cmd.sort = q.sort;
  if (q.projection) cmd.projection = q.projection;
  if (typeof q.limit === 'number') cmd.limit = q.limit;
  if (typeof q.skip === 'number') cmd.skip = q.skip;
  return cmd;
}

/** Index options worth copying onto the sample: what changes which documents an index holds or how it compares. */
export function indexSpecOf(ix: MongoIndexInfo): Document {
  const spec: Document = { key: ix.key, name: ix.name };
  if (ix.sparse) spec['sparse'] = true;
  if (ix.hidden) spec['hidden'] = true;
  if (ix.partialFilterExpression) spec['partialFilterExpression'] = ix.partialFilterExpression;
  if (ix.collation) spec['collation'] = ix.collation;
  for (const k of ['weights', 'default_language', 'language_override', 'textIndexVersion', '2dsphereIndexVersion', 'bits', 'min', 'max', 'wildcardProjection']) {
    if (ix.options[k] !== undefined) spec[k] = ix.options[k];
  }
  return spec;
}

function sameKey(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return JSON.stringify(Object.entries(a)) === JSON.stringify(Object.entries(b));
}

/**
 * Tries the advice's suggestions on a random sample of the collection and fills their verification.
 * Throws AdapterError when the sample cannot be made (no write permission, cancelled...); the scratch
 * collection is dropped in every case.
 */
export async function mongoTrial(db: Db, conn: MongoConnection, cmd: MongoCommand, advice: Advice, opts: MongoTrialOptions = {}): Promise<MongoTrialReport> {
  const sampleSize = Math.max(1, Math.floor(opts.sampleSize ?? DEFAULT_SAMPLE_SIZE));
  const maxTimeMS = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS));
  const scratch = scratchName(cmd.collection);
  const report: MongoTrialReport = { scratch, sampleSize: 0, collectionSize: 0, dropped: true, notes: [], warnings: [] };
  const refusal = sampleRefusal(cmd);
  if (refusal !== undefined) {
    report.notes.push(`${refusal}: the suggestions were not tried.`);
    return report;
  }
  if (opts.signal?.aborted) throw measurementCancelled(false);
  const m = new MongoMeasurement('trial', opts.signal, opts.budgetMs ?? measurementBudget(maxTimeMS));
  const signal = m.signal;
  const tag = m.tag;
  const made = { scratchMayExist: false };
  try {
    opts.onStep?.('copy');
    report.collectionSize = await m.op(db, (session) => mongoEstimatedCount(db, cmd.collection, { maxTimeMS, comment: tag, session }));
    // $sample reads only what it returns (a random cursor) while that is under 5% of the collection; a
    // bigger share reads the whole collection, which only a small collection may cost.
    const size = boundedSampleSize(sampleSize, report.collectionSize);
    if (size < sampleSize) report.notes.push(`The trial sample was cut to ${fmt(size)} documents: from 5% of the collection on, $sample reads all of it.`);
    await createScratch(db, m, scratch, maxTimeMS, made);
    // $out into the marked collection replaces its documents and keeps its options, the marker with them.
    await m.op(db, (session) => mongoAggregate(db, cmd.collection, [{ $sample: { size } }, { $out: scratch }], { maxTimeMS, comment: tag, session }));
    report.sampleSize = await m.op(db, (session) => mongoCountDocuments(db, scratch, {}, { maxTimeMS, comment: tag, session }));
    if (report.sampleSize === 0) {
      report.notes.push(`${cmd.collection} holds no documents, so there was nothing to try the indexes on.`);
      return report;
    }

    opts.onStep?.('indexes');
    const existing = (opts.existing ?? []).filter((ix) => ix.name !== '_id_');
    await buildIndexes(db, m, scratch, existing.map(indexSpecOf), maxTimeMS, report);

    opts.onStep?.('explain');
    const on = (c: MongoCommand, hint?: Document): MongoCommand => {
      const out: MongoCommand = { ...c, collection: scratch, hasPlaceholders: false };
      delete out.explain;
      if (hint) out.hint = hint;
      else delete out.hint;
      return out;
    };
    const database = db.databaseName;
    const run = async (c: MongoCommand): Promise<{ numbers: TrialNumbers; ok: true } | { ok: false; message: string }> => {
      try {
        m.began();
        const r = await conn.explain(c, { verbosity: 'executionStats', timeoutMs: maxTimeMS, database, signal });
        if (!r.load.ok) return { ok: false, message: r.load.refusal };
        return { ok: true, numbers: mongoNumbers(r.load.plan) };
      } catch (err) {
        if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth')) throw err;
        return { ok: false, message: err instanceof Error ? err.message : String(err) };
      }
    };
    const before = await run(on(cmd));

    // The candidates: create suggestions in rank order, the query as written or a rewrite with all its values.
    const tried: { s: Suggestion; query: MongoCommand; key: Record<string, 1 | -1> }[] = [];
    for (const s of advice.suggestions) {
      // The branches of an $or work together: all of them are tried, whatever the limit.
      if (tried.length >= (opts.maxSuggestions ?? 3) && s.rule !== 'or-branch') continue;
      if (s.action !== 'create' || s.index?.engine !== 'mongodb') continue;
      let query: MongoCommand | undefined = cmd;
      if (!s.servesQueryAsWritten) {
        const rw = s.rewrites.find((r) => r.structured !== undefined);
        query = rw?.structured ? commandFromInput(rw.structured, cmd) : undefined;
        if (!query) {
          report.notes.push(`Suggestion ${s.rank} serves only the rewritten query, which needs values known only at run time (such as the previous page's last key): it was not tried.`);
          continue;
        }
      }
      tried.push({ s, query, key: (s.index as MongoIndexSpec).keyPattern });
    }
    const toBuild = tried.filter((t, i) => !existing.some((ix) => sameKey(ix.key, t.key)) && tried.findIndex((u) => sameKey(u.key, t.key)) === i);
    opts.onStep?.('indexes');
    await buildIndexes(db, m, scratch, toBuild.map((t) => ({ key: t.key })), maxTimeMS, report);
    opts.onStep?.('explain');

    const base = { method: 'sampled' as const, unit: WORK_UNIT, sampleSize: report.sampleSize, collectionSize: report.collectionSize };
    const where = `on ${sampleWords(report.sampleSize, report.collectionSize)}`;
    const collscan = await run(on(cmd, { $natural: 1 }));
    const measured = new Map<Suggestion, TrialNumbers>();
    for (const t of tried) {
      // A hint forces one index on every $or branch; the branch indexes are judged by the planner's own plan.
      const orBranch = t.s.rule === 'or-branch';
      const after = await run(orBranch ? on(t.query) : on(t.query, t.key));
      // Before is always the query as written today; a rewrite is judged by what it saves against that.
      const baseline = before;
      if (!after.ok || !baseline.ok) {
        const why = !after.ok ? after.message : !baseline.ok ? baseline.message : '';
        setVerification(t.s, { status: 'failed', ...base, message: `The trial ${where} failed: ${why}` });
        continue;
      }
      measured.set(t.s, after.numbers);
      const unhinted = await run(on(t.query));
      const b = baseline.numbers;
      const a = after.numbers;
      const better = a.work < b.work * BETTER || (a.work <= b.work && b.blockingSort && !a.blockingSort);
      const v: LiveVerification = {
        status: better ? 'verified' : 'refuted',
        ...base,
        before: b.work,
        after: a.work,
        planBefore: b.plan,
        planAfter: a.plan,
        numbersBefore: b,
        numbersAfter: a,
        message: `${better ? 'Verified' : 'Not better'} ${where}, copied to a scratch collection: ${numbersText(b)} today (${b.plan}), ${numbersText(a)} with ${orBranch ? "the $or branches' indexes" : 'the index'}${t.query === cmd ? '' : ' and the rewritten query'} (${a.plan}).`,
      };
      if (orBranch) {
        v.usedByPlanner = a.plan.includes(`IXSCAN {${Object.entries(t.key).map(([k, d]) => `${k}: ${d}`).join(', ')}}`);
      } else if (unhinted.ok) {
        v.usedByPlanner = sameIndex(unhinted.numbers, a);
        if (!v.usedByPlanner) v.message += ' Without a hint the planner chose another plan on the sample.';
      }
      t.s.verification = v;
    }

    // "Keep using X": the existing index against a collection scan, and whether the planner picks it.
    for (const s of advice.suggestions) {
      if (s.action !== 'keep' || !s.keep || s.index?.engine !== 'mongodb') continue;
      const ix = existing.find((e) => e.name === s.keep!.name) ?? (opts.existing ?? []).find((e) => e.name === s.keep!.name);
      if (!ix || !collscan.ok || !before.ok) continue;
      const kept = await run(on(cmd, ix.key as Document));
      if (!kept.ok) continue;
      const k = kept.numbers;
      const c = collscan.numbers;
      const good = k.work <= c.work;
      setVerification(s, {
        status: good ? 'verified' : 'refuted',
        ...base,
        before: c.work,
        after: k.work,
        planBefore: c.plan,
        planAfter: k.plan,
        numbersBefore: c,
        numbersAfter: k,
        usedByPlanner: before.numbers.index === ix.name,
        message: `${good ? 'Verified' : 'Not better than a collection scan'} ${where}: ${numbersText(k)} through ${ix.name} against ${numbersText(c)} for a collection scan${before.numbers.index === ix.name ? '; the planner already chooses it' : `; the planner chose ${before.numbers.index ?? 'a collection scan'} on the sample`}.`,
      });
    }

    // "No index": the collection scan against the best index tried.
    for (const s of advice.suggestions) {
      if (s.action !== 'none' || !collscan.ok) continue;
      const best = [...measured.values()].sort((x, y) => x.work - y.work)[0];
      if (!best) continue;
      const c = collscan.numbers;
      const good = c.work <= best.work / BETTER;
      setVerification(s, {
        status: good ? 'verified' : 'refuted',
        ...base,
        before: best.work,
        after: c.work,
        planBefore: best.plan,
        planAfter: c.plan,
        numbersBefore: best,
        numbersAfter: c,
        message: `${good ? 'Verified' : 'Refuted'} ${where}: a collection scan does ${numbersText(c)}, the best index tried ${numbersText(best)}.`,
      });
    }
    report.notes.push(report.sampleSize >= report.collectionSize
      ? `The suggestions were tried ${where}, copied to a scratch collection that was then dropped.`
      : `The suggestions were tried ${where}, copied to a scratch collection that was then dropped: figures are for the sample, not the whole collection.`);
    return report;
  } catch (err) {
    throw m.failure(err);
  } finally {
    m.dispose();
    opts.onStep?.('drop');
    if (made.scratchMayExist) await dropScratch(db, scratch, tag, report);
  }
}

/** Why a query cannot run on a sample (values known only at run time, a pipeline that writes), if so. */
export function sampleRefusal(cmd: MongoCommand): string | undefined {
  if (cmd.hasPlaceholders) return 'The query holds values that are variables in the code, so it cannot run on a sample';
  if (explainWouldWrite(cmd)) return 'The pipeline writes with $out or $merge, so it is not run on a sample';
  return undefined;
}

/**
 * Drops a scratch collection, not tied to any signal: it goes even when the run was cancelled. A
 * failure is reported as a warning naming the collection to drop by hand.
 */
export async function dropScratch(db: Db, scratch: string, tag: string, report: { dropped: boolean; warnings: string[] }): Promise<void> {
  try {
    await mongoDropScratch(db, scratch, { comment: tag });
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code !== 26 && !/ns not found/i.test(String((err as Error).message))) {
      report.dropped = false;
      report.warnings.push(`The scratch collection ${scratch} could not be dropped (${mongoOpError(err).message.replace(/\.$/, '')}): drop it by hand.`);
    }
  }
}

/** Stores a verification with its extra facts (LiveVerification is a subtype of the advisor's Verification). */
function setVerification(s: Suggestion, v: LiveVerification): void {
  s.verification = v;
}

function sameIndex(unhinted: TrialNumbers, hinted: TrialNumbers): boolean {
  return unhinted.index !== undefined && unhinted.index === hinted.index;
}

export async function buildIndexes(db: Db, m: MongoMeasurement, scratch: string, specs: Document[], maxTimeMS: number, report: { notes: string[] }): Promise<void> {
  if (specs.length === 0) return;
  const tag = m.tag;
  try {
    await m.op(db, (session) => mongoScratchIndexes(db, scratch, specs, { maxTimeMS, comment: tag, session }));
    return;
  } catch (err) {
    if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth' || err.kind === 'timeout')) throw err;
  }
  // One bad specification fails the whole batch: build them one by one and name those that fail.
  for (const spec of specs) {
    try {
      await m.op(db, (session) => mongoScratchIndexes(db, scratch, [spec], { maxTimeMS, comment: tag, session }));
    } catch (err) {
      if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth' || err.kind === 'timeout')) throw err;
      report.notes.push(`The index ${JSON.stringify(spec['key'])} could not be built on the sample (${err instanceof Error ? err.message.replace(/\.$/, '') : String(err)}), so the trial went on without it.`);
    }
  }
}

/**
 * Drops the scratch collections of earlier runs that were killed before they could drop them: only a
 * collection that carries the marker written at its creation, and only once the time its run gave itself
 * is past (that run is over, or stopped by its own budget). A collection without the marker is never
 * dropped, whatever its name.
 */
export async function dropStaleTrials(db: Db, now: number = Date.now()): Promise<string[]> {
  const listed = await mongoListCollections(db, { name: { $regex: `^${TRIAL_PREFIX}` }, type: 'collection' });
  const dropped: string[] = [];
  for (const c of listed) {
    const marker = scratchMarkerOf((c as Document)['options']);
    if (marker === undefined || marker.until > now) continue;
    await mongoDropScratch(db, String(c['name'])).then((ok) => ok && dropped.push(String(c['name'])), () => {});
  }
  return dropped;
}

// ---- PostgreSQL ---------------------------------------------------------------------------------------

export interface PgVerifyOptions {
  /** Without HypoPG: build each index inside a transaction that is rolled back (it locks writes while it builds). */
  allowBuild?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Suggestions tried, in rank order. Default 3. */
  maxSuggestions?: number;
  /** Names of the indexes that exist, so a new index is told apart in the plan. */
  existingNames?: string[];
}

export interface PgVerifyReport {
  method: 'hypopg' | 'trial-index' | 'none';
  notes: string[];
  warnings: string[];
}

function rootCost(plan: Plan): number {
  return plan.root.metrics.totalCost ?? NaN;
}

function indexNames(plan: Plan): Set<string> {
  return new Set(plan.nodes.map((n) => n.details.indexName).filter((x): x is string => x !== undefined));
}

/** The CREATE INDEX a trial can run: CONCURRENTLY cannot run inside a transaction, and one statement has no semicolon. */
export function trialDdl(createText: string): string {
  return createText.replace(/\bCONCURRENTLY\s+/i, '').replace(/;\s*$/, '');
}

/**
 * Fills the verification of the PostgreSQL suggestions: plain EXPLAIN of the statement without and with
 * each index (HypoPG, or a trial build when allowed). Throws AdapterError only for a lost connection or
 * a cancel; a failed check is reported on its suggestion.
 */
export async function verifyPostgres(conn: PostgresConnection, sql: string, advice: Advice, opts: PgVerifyOptions = {}): Promise<PgVerifyReport> {
  const report: PgVerifyReport = { method: 'none', notes: [], warnings: [] };
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const common = { timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) };
  const hypo = await conn.hypopg();
  const pass = (err: unknown): void => {
    if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth')) throw err;
  };
  let before: Plan;
  try {
    const r = await conn.explain(sql, common);
    if (!r.load.ok) {
      report.notes.push(`The plan of the statement could not be read, so nothing was verified: ${r.load.refusal}`);
      return report;
    }
    before = r.load.plan;
  } catch (err) {
    pass(err);
    report.notes.push(`The statement could not be explained, so nothing was verified: ${err instanceof Error ? err.message : String(err)}`);
    return report;
  }
  const known = new Set([...(opts.existingNames ?? []), ...indexNames(before)]);
  const costBefore = rootCost(before);
  const shapeBefore = planShape(before);
  const tables = new Set<string>();
  let declined = false;

  /** The statement's plan with one index added; `declined` without HypoPG and without consent to build. */
  const withIndex = async (spec: PgIndexSpec, ddl: string, text: string): Promise<{ plan: Plan; method: 'hypopg' | 'trial-index' } | { error: string } | 'declined'> => {
    const hypothetical = hypo.installed && spec.method === 'btree';
    if (!hypothetical && !opts.allowBuild) {
      declined = true;
      return 'declined';
    }
    try {
      const r = await conn.explain(text, { ...common, indexes: { ddl: [ddl], mode: hypothetical ? 'hypothetical' : 'transaction' } });
      if (!r.load.ok) return { error: r.load.refusal };
      if (!hypothetical) tables.add(spec.table);
      return { plan: r.load.plan, method: hypothetical ? 'hypopg' : 'trial-index' };
    } catch (err) {
      pass(err);
      return { error: err instanceof Error ? err.message : String(err) };
    }
  };
  const how = (m: 'hypopg' | 'trial-index') => (m === 'hypopg' ? 'a hypothetical index (HypoPG, nothing built)' : 'the index built inside a transaction that was rolled back');

  let tried = 0;
  const measured: { s: Suggestion; used: boolean; cost: number; plan: Plan; method: 'hypopg' | 'trial-index' }[] = [];
  for (const s of advice.suggestions) {
    if (tried >= (opts.maxSuggestions ?? 3)) break;
    if (s.action !== 'create' || !s.createText || s.index?.engine !== 'postgres') continue;
    let text = sql;
    if (!s.servesQueryAsWritten) {
      const rw = s.rewrites.find((r) => (r.parameters ?? []).length === 0);
      if (!rw) {
        report.notes.push(`Suggestion ${s.rank} serves only the rewritten query, which needs values from the previous page: it was not verified.`);
        continue;
      }
      text = rw.text;
    }
    tried++;
    const got = await withIndex(s.index, trialDdl(s.createText), text);
    if (got === 'declined') continue;
    if ('error' in got) {
      s.verification = { status: 'failed', method: hypo.installed && s.index.method === 'btree' ? 'hypopg' : 'trial-index', message: `The check failed: ${got.error}` };
      continue;
    }
    const after = got.plan;
    const newNames = [...indexNames(after)].filter((n) => !known.has(n));
    const used = newNames.length > 0;
    const costAfter = rootCost(after);
    const better = used && costAfter < costBefore * BETTER;
    const rewritten = text !== sql ? ' (the rewritten query)' : '';
    const v: LiveVerification = {
      status: better ? 'verified' : 'refuted',
      method: got.method === 'hypopg' ? 'hypopg' : 'trial-index',
      before: costBefore,
      after: costAfter,
      unit: 'estimated cost',
      planBefore: shapeBefore,
      planAfter: planShape(after),
      usedByPlanner: used,
      message: used
        ? `${better ? 'Verified' : 'Not better'} with ${how(got.method)}: estimated cost ${fmt(costBefore)} → ${fmt(costAfter)}${rewritten}; plan ${shapeBefore} → ${planShape(after)}.`
        : `The planner did not use the index${rewritten}: estimated cost ${fmt(costBefore)} without it, ${fmt(costAfter)} with ${how(got.method)}; the plan stays ${planShape(after)}.`,
    };
    s.verification = v;
    measured.push({ s, used, cost: costAfter, plan: after, method: got.method });
  }

  for (const s of advice.suggestions) {
    if (s.action === 'keep' && s.keep) {
      const uses = indexNames(before).has(s.keep.name);
      setVerification(s, {
        status: uses ? 'verified' : 'refuted',
        method: 'hinted-explain',
        before: costBefore,
        after: costBefore,
        unit: 'estimated cost',
        planBefore: shapeBefore,
        planAfter: shapeBefore,
        usedByPlanner: uses,
        message: uses
          ? `Verified: the planner already uses ${s.keep.name} (estimated cost ${fmt(costBefore)}; plan ${shapeBefore}).`
          : `The planner does not choose ${s.keep.name} for this statement today (plan ${shapeBefore}, estimated cost ${fmt(costBefore)}).`,
      });
    }
    if (s.action === 'none') {
      const next = advice.suggestions.find((x) => x.rank > s.rank && x.action === 'create' && x.servesQueryAsWritten && x.createText && x.index?.engine === 'postgres');
      if (!next) continue;
      const m = measured.find((x) => x.s === next);
      const got = m ? { plan: m.plan, method: m.method } : await withIndex(next.index as PgIndexSpec, trialDdl(next.createText!), sql);
      if (got === 'declined' || 'error' in got) continue;
      const used = [...indexNames(got.plan)].some((n) => !known.has(n));
      const costWith = rootCost(got.plan);
      const good = !used || costWith >= costBefore * BETTER;
      setVerification(s, {
        status: good ? 'verified' : 'refuted',
        method: got.method === 'hypopg' ? 'hypopg' : 'trial-index',
        before: costWith,
        after: costBefore,
        unit: 'estimated cost',
        planBefore: planShape(got.plan),
        planAfter: shapeBefore,
        usedByPlanner: !used,
        message: good
          ? `Verified with ${how(got.method)}: ${used ? `the index would cost ${fmt(costWith)} against ${fmt(costBefore)} without it` : `even with the index the planner keeps ${shapeBefore} (estimated cost ${fmt(costBefore)})`}.`
          : `Refuted with ${how(got.method)}: the planner would use the index, at an estimated cost of ${fmt(costWith)} against ${fmt(costBefore)} without it.`,
      });
    }
  }

  if (measured.some((m) => m.method === 'trial-index') || tables.size > 0) {
    report.method = 'trial-index';
    report.warnings.push(`Each trial index was built inside a transaction that was rolled back, so nothing remains; while it was being built it locked writes to ${[...tables].join(', ')}.`);
  } else if (measured.length > 0) {
    report.method = 'hypopg';
  }
  if (declined) {
    report.notes.push(hypo.installed
      ? 'Some suggestions were not verified: HypoPG cannot simulate them, and a trial build inside a rolled-back transaction needs your consent because it locks writes to the table while it builds.'
      : `The suggestions were not verified: HypoPG is not installed in this database${hypo.available ? ' (CREATE EXTENSION hypopg would add it)' : ''}, and a trial build inside a rolled-back transaction needs your consent because it locks writes to the table while it builds.`);
  }
  return report;
}
