// Every candidate measured: advice decided by measurement on the user's own server. The rules' candidates and many
// more (core/advice/mongoCandidates.ts) are each built on a sample of the user's data and the query is
// run against each; the candidates are ranked by the work the server did (core/advice/tournament.ts).
//
// MongoDB: a random sample sized for this query (enough matching documents to separate the candidates,
// from the selectivity counts; bounded in size and by maxTimeMS) is copied into a scratch collection
// with today's indexes; the query runs there unhinted (today's plan), then every candidate is built and
// the query runs hinted on each at executionStats, and once more unhinted (the planner's own choice).
// Work = keys examined + documents examined + documents sorted in memory. A $or over different fields
// is measured by groups of indexes (one per branch) instead, since a hint names one index for the whole
// query: all built once, each group run unhinted with the other indexes hidden. The scratch collection is
// created with its marker (mongoScratch.ts) before the copy, and dropped after success, error and cancel; a
// cancel, or the end of the measurement's time budget, stops the running operation on the server.

import type { Db, Document } from 'mongodb';
import { canonicalKey, mongoCandidates, mongoOrCandidates, type MongoCandidate } from '../../core/index';
import type { MongoShape } from '../../core/index';
import { createIndexText } from '../../core/index';
import { formatCount, indexSpec } from '../../core/index';
import { applyTournament, indexLabel, scalesWithData, tournamentSampleSize, type TournamentInput } from '../../core/index';
import type { Advice, ExistingMongoIndex, MongoStats, Tournament, TournamentEntry } from '../../core/index';
import type { MongoCommand } from '../../core/index';
import { MeasureBudget } from '../deadline';
import { AdapterError } from '../errors';
import { mongoAggregate, mongoCountDocuments, mongoEstimatedCount, mongoListIndexes, mongoScratchCollMod } from '../door';
import type { MongoConnection, MongoIndexInfo } from '../mongodb';
import { attachFigures, measuredWork, MONGO_WORK_UNIT, mongoNumbers, type MeasuredNumbers, type MeasureProgress, type MeasureStep } from './figures';
import { buildIndexes, createScratch, indexSpecOf, inScratch, measurementBudget, measurementCancelled, MongoMeasurement, sampleRefusal, scratchName } from './mongoScratch';

/** MongoDB allows 64 indexes per collection; _id and today's indexes take their share. */
const MAX_INDEXES = 64;

export interface MongoCandidatesOptions {
  /** The selectivity figures the advisor had (matching counts size the sample). */
  stats?: MongoStats;
  /** Today's indexes, rebuilt on the sample so today's plan is measured as it runs. */
  existing: MongoIndexInfo[];
  existingForAdvice: ExistingMongoIndex[];
  /** Candidates measured at most. */
  cap?: number;
  /** Documents in the sample at least (the user's setting); the query's selectivity may ask for more. */
  minSample?: number;
  /** Documents in the sample at most. */
  maxSample?: number;
  timeoutMs?: number;
  /** Time the whole measurement may take; past it its operations are stopped on the server. Default measurementBudget(timeoutMs). */
  budgetMs?: number;
  /**
   * When the measurement should end (epoch ms): no candidate starts after it, each explain's limit is cut
   * to what is left, and the candidates measured by then are ranked, the rest named as not measured.
   */
  until?: number;
  /** Called as candidates are measured: how many of how many. */
  onProgress?: (p: MeasureProgress) => void;
  signal?: AbortSignal;
  onStep?: (step: MeasureStep) => void;
}

export interface MongoCandidatesReport {
  tournament?: Tournament;
  scratch: string;
  dropped: boolean;
  notes: string[];
  warnings: string[];
}

/** True when every candidate can be measured for this query: one conjunction the query layer runs as written. */
export function candidatesMeasurable(shape: MongoShape): boolean {
  return shape.hiddenMatches.length === 0 && ['find', 'count', 'aggregate', 'distinct'].includes(shape.operation);
}

/**
 * Measures every candidate for one MongoDB query and rewrites the advice's suggestions in measured order.
 * Throws AdapterError for a cancel, a lost connection or a refused write; the scratch collection is
 * dropped in every case.
 */
export async function measureMongoCandidates(db: Db, conn: MongoConnection, cmd: MongoCommand, shape: MongoShape, advice: Advice, opts: MongoCandidatesOptions): Promise<MongoCandidatesReport> {
  const maxTimeMS = Math.max(1, Math.floor(opts.timeoutMs ?? 30_000));
  const scratch = scratchName(cmd.collection);
  const report: MongoCandidatesReport = { scratch, dropped: true, notes: [], warnings: [] };
  const refusal = sampleRefusal(cmd);
  if (refusal !== undefined) {
    report.notes.push(`${refusal}: nothing was measured.`);
    return report;
  }
  if (opts.signal?.aborted) throw measurementCancelled(false);
  const m = new MongoMeasurement('tournament', opts.signal, opts.budgetMs ?? measurementBudget(maxTimeMS));
  const budget = new MeasureBudget(opts.until, maxTimeMS);
  const signal = m.signal;
  const tag = m.tag;
  return inScratch(db, m, scratch, report, opts.onStep, async (made) => {
    opts.onStep?.('copy');
    const total = await m.op(db, (session) => mongoEstimatedCount(db, cmd.collection, { maxTimeMS, comment: tag, session }));
    const matching = opts.stats?.result ?? opts.stats?.equality;
    const size = tournamentSampleSize(total, matching, {
      ...(shape.limit !== undefined ? { limit: shape.limit + (shape.skip ?? 0) } : {}),
      ...(opts.minSample !== undefined ? { min: opts.minSample } : {}),
      ...(opts.maxSample !== undefined ? { max: opts.maxSample } : {}),
    });
    if (size === 0) {
      report.notes.push(`${cmd.collection} holds no documents, so there was nothing to measure on.`);
      return report;
    }
    const whole = size >= total;
    // $sample reads only what it returns while that is under 5% of the collection; beyond, it sorts the
    // whole collection randomly, and a $rand filter gets about the same share in one pass without a sort.
    const share = size / Math.max(1, total);
    // The $rand filter's share is about `size`; the $limit makes it at most that, as the user was told.
    const pick: Document[] = whole ? [] : share < 0.049 ? [{ $sample: { size } }] : [{ $match: { $expr: { $lt: [{ $rand: {} }, share] } } }, { $limit: size }];
    await createScratch(db, m, scratch, maxTimeMS, made);
    // $out into the marked collection replaces its documents and keeps its options, the marker with them.
    await m.op(db, (session) => mongoAggregate(db, cmd.collection, [...pick, { $out: scratch }], { maxTimeMS, comment: tag, session }));
    const inSample = await m.op(db, (session) => mongoCountDocuments(db, scratch, {}, { maxTimeMS, comment: tag, session }));

    opts.onStep?.('indexes');
    const existing = opts.existing.filter((ix) => ix.name !== '_id_');
    await buildIndexes(db, m, scratch, existing.map(indexSpecOf), maxTimeMS, report);

    const on = (hint?: Document | string): MongoCommand => {
      const out: MongoCommand = { ...cmd, collection: scratch, hasPlaceholders: false };
      delete out.explain;
      if (hint !== undefined) out.hint = hint as Document;
      else delete out.hint;
      return out;
    };
    const run = async (c: MongoCommand): Promise<{ ok: true; numbers: MeasuredNumbers } | { ok: false; message: string }> => {
      try {
        m.began();
        const r = await conn.explain(c, { verbosity: 'executionStats', timeoutMs: budget.limit(), database: db.databaseName, signal });
        if (!r.load.ok) return { ok: false, message: r.load.refusal };
        return { ok: true, numbers: mongoNumbers(r.load.plan) };
      } catch (err) {
        if (err instanceof AdapterError && (err.kind === 'cancelled' || err.kind === 'network' || err.kind === 'auth')) throw err;
        return { ok: false, message: budget.errorText(err) };
      }
    };
    opts.onStep?.('explain');
    const today = await run(on());

    const room = Math.max(1, MAX_INDEXES - 1 - existing.length);
    const factor = inSample > 0 ? total / inSample : 1;
    const scale = (n: MeasuredNumbers): number | undefined => {
      if (inSample >= total || !scalesWithData(measuredWork(n), shape.limit)) return undefined;
      return Math.round(n.work * factor);
    };
    // A candidate's run: its figures (scaled to the whole collection when they grow with the data), or why it failed.
    const record = (e: TournamentEntry, r: Awaited<ReturnType<typeof run>>): void => {
      if (!r.ok) {
        e.error = r.message;
        return;
      }
      e.measured = measuredWork(r.numbers);
      const s = scale(r.numbers);
      if (s !== undefined) e.scaledWork = s;
    };
    const entryOf = (c: MongoCandidate): TournamentEntry => {
      const e: TournamentEntry = { label: c.label, origin: c.origin, index: indexSpec(shape.collection, c.keys) };
      if (c.existing !== undefined) e.existing = c.existing;
      else e.createText = createIndexText(shape.collection, c.keys);
      if (c.ruleRank !== undefined) e.ruleRank = c.ruleRank;
      if (c.rule !== undefined) e.rule = c.rule;
      return e;
    };
    const isOr = shape.orBranches.length > 0;
    const groups = isOr ? mongoOrCandidates(shape, { advice, existing: opts.existingForAdvice, ...(opts.stats ? { stats: opts.stats } : {}) }) : undefined;
    const set = groups
      ? { candidates: groups.groups.flatMap((g) => g.members), generated: groups.generated, cap: groups.cap }
      : mongoCandidates(shape, { advice, existing: opts.existingForAdvice, ...(opts.stats ? { stats: opts.stats } : {}), cap: Math.min(opts.cap ?? 24, room) });
    // One name per distinct index: a $or's groups share indexes.
    const nameOf = new Map<string, string>();
    for (const c of set.candidates) if (!nameOf.has(canonicalKey(c.keys))) nameOf.set(canonicalKey(c.keys), c.existing ?? `qpi_c${nameOf.size}`);
    const named = set.candidates.map((c) => ({ c, name: nameOf.get(canonicalKey(c.keys))! }));
    opts.onStep?.('indexes');
    const toBuild = [...new Map(named.filter((x) => x.c.existing === undefined).map((x) => [x.name, { key: x.c.keyPattern, name: x.name }])).values()].slice(0, room);
    await buildIndexes(db, m, scratch, toBuild, maxTimeMS, report);
    const built = new Set((await m.op(db, (session) => mongoListIndexes(db, scratch, { session }))).map((ix) => String(ix['name'])));

    opts.onStep?.('explain');
    const entries: TournamentEntry[] = [];
    const of = (groups ? groups.groups.length : named.length) + 1;
    let done = 0;
    const progress = (): void => opts.onProgress?.({ measured: Math.min(of, done++), of });
    progress();
    if (groups) {
      // Each group alone: its indexes visible and every other one hidden (the planner ignores a hidden
      // index), the query run without a hint, its work summed over the branches as the server reports it.
      const hidden = new Set<string>();
      const show = async (names: Set<string>): Promise<void> => {
        for (const n of built) {
          if (n === '_id_' || hidden.has(n) === !names.has(n)) continue;
          await m.op(db, (session) => mongoScratchCollMod(db, scratch, { index: { name: n, hidden: !names.has(n) }, comment: tag }, { session }));
          if (names.has(n)) hidden.delete(n);
          else hidden.add(n);
        }
      };
      for (const g of groups.groups) {
        // New indexes first, so the suggestion that leads the group is one to create.
        const members = [...g.members].sort((a, b) => Number(a.existing !== undefined) - Number(b.existing !== undefined));
        const e: TournamentEntry = { ...entryOf(members[0]!), label: g.label, origin: g.origin };
        if (g.ruleRank !== undefined) e.ruleRank = g.ruleRank;
        if (g.rule !== undefined) e.rule = g.rule;
        if (members.length > 1) {
          delete e.existing;
          e.set = members.map((m) => ({ index: indexSpec(shape.collection, m.keys), ...(m.existing !== undefined ? { existing: m.existing } : { createText: createIndexText(shape.collection, m.keys) }) }));
        }
        entries.push(e);
        const names = new Set(members.map((m) => nameOf.get(canonicalKey(m.keys))!));
        if ([...names].some((n) => !built.has(n))) {
          e.error = 'an index of the group could not be built on the sample';
          continue;
        }
        if (budget.spent()) {
          e.error = budget.skipped();
          continue;
        }
        await show(names);
        const r = await run(on());
        progress();
        record(e, r);
      }
      await show(new Set(built));
    }
    for (const { c, name } of groups ? [] : named) {
      const e = entryOf(c);
      entries.push(e);
      if (!built.has(name)) {
        e.error = 'the index could not be built on the sample';
        continue;
      }
      if (budget.spent()) {
        e.error = budget.skipped();
        continue;
      }
      const r = await run(on(name));
      progress();
      record(e, r);
    }
    const scan = budget.spent() ? { ok: false as const, message: budget.skipped() } : await run(on({ $natural: 1 }));
    progress();
    if (scan.ok) {
      const e: TournamentEntry = { label: 'collection scan', origin: 'scan', measured: measuredWork(scan.numbers) };
      const s = scale(scan.numbers);
      if (s !== undefined) e.scaledWork = s;
      entries.push(e);
    }
    // A $or's planner choice is a set of indexes, one per branch: the groups' runs already show it.
    const planner = groups || budget.spent() ? undefined : await run(on());

    // The whole collection copied is no sample: it says so, as PostgreSQL's "measured on all N rows".
    const label = budget.labelled(whole ? `measured on all ${formatCount(inSample)} documents` : `measured from a sample of ${formatCount(inSample)} of ${formatCount(total)} documents`, entries);
    const input: TournamentInput = {
      engine: 'mongodb',
      unit: MONGO_WORK_UNIT,
      sample: { size: inSample, total, ...(matching !== undefined ? { matching } : {}), scaled: !whole },
      label,
      generated: set.generated + 1,
      entries,
      facts: { ...(opts.stats?.arrays ? { arrays: opts.stats.arrays } : {}), ...(opts.stats?.matching ? { matching: opts.stats.matching } : {}), total },
      existing: { mongodb: opts.existingForAdvice },
    };
    if (today.ok) input.today = measuredWork(today.numbers);
    if (planner?.ok) {
      const picked = entries.find((e) => e.index && e.measured?.index !== undefined && e.measured.index === planner.numbers.index);
      input.plannerChoice = planner.numbers.index === undefined ? 'collection scan' : picked ? indexLabel(picked.index) : planner.numbers.index;
    }
    const t = applyTournament(advice, input);
    report.tournament = t;
    attachFigures(advice, t);
    const tried = groups ? groups.groups.length : set.candidates.length;
    report.notes.push(`${entries.length} candidates${groups ? ' (groups of indexes built together, one per $or branch, or one serving the conditions outside the $or; each run without a hint with only its own indexes visible)' : ''}, the collection scan among them (${set.generated + 1} generated${set.generated > tried ? `, capped at ${set.cap}` : ''}) ${label}, copied to a scratch collection that was then dropped.`);
    if (t.plannerChoice !== undefined && t.winner !== undefined && t.plannerChoice !== indexLabel(t.winner.index)) {
      report.notes.push(`With every candidate built, the planner picked ${t.plannerChoice} by itself, not the winner: it judges by a short trial run, the measurement by the whole run.`);
    }
    return report;
  });
}
