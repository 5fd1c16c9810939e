// The rules' suggestions of a pipeline the rules rewrite ($match moved first), measured together on a
// sample of the collection in a scratch collection (mongoScratch.ts): the query is explained at
// executionStats without a hint (what the planner does with today's indexes) and with a hint on each
// suggestion. Work is keys examined + documents examined + documents a blocking SORT holds. Every other
// MongoDB query has all its candidates measured instead (mongoCandidates.ts).

import type { Db, Document } from 'mongodb';
import type { Advice, MongoCommand, MongoIndexSpec, MongoQueryInput, Suggestion } from '../../core/index';
import { mongoAggregate, mongoCountDocuments, mongoEstimatedCount } from '../door';
import { AdapterError } from '../errors';
import { hasPlaceholder } from '../mongoOps';
import type { MongoConnection, MongoIndexInfo } from '../mongodb';
import { boundedSampleSize, DEFAULT_SAMPLE_SIZE } from '../stats';
import { BETTER, emptySampleNote, fmt, mongoNumbers, MONGO_WORK_UNIT, numbersText, setVerdict, type MeasuredNumbers, type MeasuredVerdict, type MeasureStep } from './figures';
import { buildIndexes, createScratch, indexSpecOf, inScratch, measurementBudget, measurementCancelled, MongoMeasurement, sampleRefusal, scratchName } from './mongoScratch';

const DEFAULT_TIMEOUT_MS = 30_000;

export interface MongoSuggestionsOptions {
  /** Documents copied into the scratch collection. Default 1,000. */
  sampleSize?: number;
  /** maxTimeMS of each operation. Default 30 s. */
  timeoutMs?: number;
  /** Time the whole measurement may take; past it its operations are stopped on the server. Default measurementBudget(timeoutMs). */
  budgetMs?: number;
  /** Aborting kills the running operation on the server; the scratch collection is dropped anyway. */
  signal?: AbortSignal;
  /** Suggestions tried, in rank order. Default 3. */
  maxSuggestions?: number;
  /** The collection's indexes (listIndexes), rebuilt on the sample so the "before" plan is today's. */
  existing?: MongoIndexInfo[];
  /** Called as the measurement moves from one step to the next. */
  onStep?: (step: MeasureStep) => void;
}

export interface MongoSuggestionsReport {
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

/** The sample's description: "a random sample of 1,000 of 20,000 documents", or all of them when the whole collection was copied. */
function sampleWords(inSample: number, total: number): string {
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


function sameKey(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return JSON.stringify(Object.entries(a)) === JSON.stringify(Object.entries(b));
}

/**
 * Measures the advice's suggestions on a random sample of the collection and fills their verdicts.
 * Throws AdapterError when the sample cannot be made (no write permission, cancelled...); the scratch
 * collection is dropped in every case.
 */
export async function measureMongoSuggestions(db: Db, conn: MongoConnection, cmd: MongoCommand, advice: Advice, opts: MongoSuggestionsOptions = {}): Promise<MongoSuggestionsReport> {
  const sampleSize = Math.max(1, Math.floor(opts.sampleSize ?? DEFAULT_SAMPLE_SIZE));
  const maxTimeMS = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS));
  const scratch = scratchName(cmd.collection);
  const report: MongoSuggestionsReport = { scratch, sampleSize: 0, collectionSize: 0, dropped: true, notes: [], warnings: [] };
  const refusal = sampleRefusal(cmd);
  if (refusal !== undefined) {
    report.notes.push(`${refusal}: the suggestions were not tried.`);
    return report;
  }
  if (opts.signal?.aborted) throw measurementCancelled(false);
  const m = new MongoMeasurement('trial', opts.signal, opts.budgetMs ?? measurementBudget(maxTimeMS));
  const signal = m.signal;
  const tag = m.tag;
  return inScratch(db, m, scratch, report, opts.onStep, async (made) => {
    opts.onStep?.('copy');
    report.collectionSize = await m.op(db, (session) => mongoEstimatedCount(db, cmd.collection, { maxTimeMS, comment: tag, session }));
    // $sample reads only what it returns (a random cursor) while that is under 5% of the collection; a
    // bigger share reads the whole collection, which only a small collection may cost.
    const size = boundedSampleSize(sampleSize, report.collectionSize);
    if (size < sampleSize) report.notes.push(`The measured sample was cut to ${fmt(size)} documents: from 5% of the collection on, $sample reads all of it.`);
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
    const run = async (c: MongoCommand): Promise<{ numbers: MeasuredNumbers; ok: true } | { ok: false; message: string }> => {
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

    const base = { method: 'sampled' as const, unit: MONGO_WORK_UNIT, sampleSize: report.sampleSize, collectionSize: report.collectionSize };
    const where = `on ${sampleWords(report.sampleSize, report.collectionSize)}`;
    const collscan = await run(on(cmd, { $natural: 1 }));
    const measured = new Map<Suggestion, MeasuredNumbers>();
    for (const t of tried) {
      // A hint forces one index on every $or branch; the branch indexes are judged by the planner's own plan.
      const orBranch = t.s.rule === 'or-branch';
      const after = await run(orBranch ? on(t.query) : on(t.query, t.key));
      // Before is always the query as written today; a rewrite is judged by what it saves against that.
      const baseline = before;
      if (!after.ok || !baseline.ok) {
        const why = !after.ok ? after.message : !baseline.ok ? baseline.message : '';
        setVerdict(t.s, { status: 'failed', ...base, message: `The measurement ${where} failed: ${why}` });
        continue;
      }
      measured.set(t.s, after.numbers);
      const unhinted = await run(on(t.query));
      const b = baseline.numbers;
      const a = after.numbers;
      const better = a.work < b.work * BETTER || (a.work <= b.work && b.blockingSort && !a.blockingSort);
      const v: MeasuredVerdict = {
        status: better ? 'verified' : 'refuted',
        ...base,
        before: b.work,
        after: a.work,
        planBefore: b.plan,
        planAfter: a.plan,
        numbersBefore: b,
        numbersAfter: a,
        message: `${better ? 'Verified' : 'Not better'} ${where}, copied to a scratch collection: ${numbersText(b)} today (${b.plan}), ${numbersText(a)} with ${orBranch ? "the $or branches' indexes" : 'the index'}${t.query === cmd ? '' : ' and the rewritten query'} (${a.plan}).${emptySampleNote(b, a)}`,
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
      setVerdict(s, {
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
      setVerdict(s, {
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
  });
}


function sameIndex(unhinted: MeasuredNumbers, hinted: MeasuredNumbers): boolean {
  return unhinted.index !== undefined && unhinted.index === hinted.index;
}
