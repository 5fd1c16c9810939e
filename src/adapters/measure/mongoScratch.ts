// The scratch collection a MongoDB measurement runs in. MongoDB has no hypothetical indexes, so a bounded
// random sample of the collection ($sample) is copied into a scratch collection on the same server, the
// collection's own indexes and the candidates are built there, and the query is explained at
// executionStats. The scratch collection is always dropped, after success, error or cancel. It is created
// empty first, carrying a marker in its options (the run that made it and the time by which that run is
// over), then filled: a run killed before it could drop it leaves a marked collection that a later run's
// sweep drops once that time has passed, and the sweep never touches a collection without the marker,
// whatever its name. A measurement has a time budget; past it, as on a cancel, its operations are stopped
// on the server.

import type { ClientSession, Db, Document } from 'mongodb';
import type { MongoCommand } from '../../core/index';
import { explainWouldWrite, formatLimit } from '../../core/index';
import { mongoCreateScratch, mongoDropScratch, mongoListCollections, mongoScratchIndexes, scratchMarkerOf, type ScratchMarker } from '../door';
import { AdapterError } from '../errors';
import { killable, mongoOpError, operationTag } from '../mongoOps';
import type { MongoIndexInfo } from '../mongodb';
import type { MeasureStep } from './figures';

/** The name every scratch collection starts with (the consent question shows it; the sweep looks for it). */
export const SCRATCH_PREFIX = 'qpi_trial_';

/** A name that says what the collection is, unique per run, with its creation time. */
export function scratchName(collection: string): string {
  const base = collection.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
  return `${SCRATCH_PREFIX}${base}_${Date.now().toString(36)}_${operationTag('x').slice(-6)}`;
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
 * One MongoDB measurement (of every candidate, or of the rules' suggestions of a pipeline): its operations' comment tag, the signal that stops
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
    if (this.expired) return new AdapterError('timeout', `The measurement ran past its time budget of ${formatLimit(this.budgetMs)} and was stopped on the server.`);
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

/**
 * Runs a measurement's work on its scratch collection: whatever stopped it becomes the sentence true of
 * it (MongoMeasurement.failure), and the collection is dropped in every case once it may exist.
 */
export async function inScratch<T>(db: Db, m: MongoMeasurement, scratch: string, report: { dropped: boolean; warnings: string[] }, onStep: ((step: MeasureStep) => void) | undefined, body: (made: { scratchMayExist: boolean }) => Promise<T>): Promise<T> {
  const made = { scratchMayExist: false };
  try {
    return await body(made);
  } catch (err) {
    throw m.failure(err);
  } finally {
    m.dispose();
    onStep?.('drop');
    if (made.scratchMayExist) await dropScratch(db, scratch, m.tag, report);
  }
}

/** True for the server's refusal of a write to a user without write access (code 13, Unauthorized). */
export function writeRefused(err: unknown): boolean {
  return err instanceof AdapterError && err.kind === 'auth' && err.code === 13;
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
async function dropScratch(db: Db, scratch: string, tag: string, report: { dropped: boolean; warnings: string[] }): Promise<void> {
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
      report.notes.push(`The index ${JSON.stringify(spec['key'])} could not be built on the sample (${err instanceof Error ? err.message.replace(/\.$/, '') : String(err)}), so the measurement went on without it.`);
    }
  }
}

/**
 * Drops the scratch collections of earlier runs that were killed before they could drop them: only a
 * collection that carries the marker written at its creation, and only once the time its run gave itself
 * is past (that run is over, or stopped by its own budget). A collection without the marker is never
 * dropped, whatever its name.
 */
export async function dropStaleScratch(db: Db, now: number = Date.now()): Promise<string[]> {
  const listed = await mongoListCollections(db, { name: { $regex: `^${SCRATCH_PREFIX}` }, type: 'collection' });
  const dropped: string[] = [];
  for (const c of listed) {
    const marker = scratchMarkerOf((c as Document)['options']);
    if (marker === undefined || marker.until > now) continue;
    await mongoDropScratch(db, String(c['name'])).then((ok) => ok && dropped.push(String(c['name'])), () => {});
  }
  return dropped;
}
