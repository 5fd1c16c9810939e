// The plan panel's view of the live advisor's answer, without the editor API (unit-tested in Node): each
// Suggestion flattened to a SuggestionView with its rule, expected plan, trade-off, conditions, rewrites
// and verification; which suggestions the server can verify and why not; the verdict of a verification
// as figures; and the questions asked before anything is written or built on the user's server.

import type { LiveAdvice } from '../adapters/advise';
import type { MeasuredNumbers, MeasuredVerdict, MeasureStep } from '../adapters/adviceService';
import type { Advice, Suggestion } from '../core/index';
import type { MongoCommand } from '../core/index';
import { explainWouldWrite, indexLabel, tournamentSampleSize } from '../core/index';
import type { SuggestionStatus, SuggestionVerdict, SuggestionView } from '../protocol/webview';
import { formatCount } from '../core/index';

export type AdviceEngine = 'mongodb' | 'postgres';

/** What the panel's suggestions were made from: the live advice, and for MongoDB the command it read. */
export interface AdviceContext {
  engine: AdviceEngine;
  live: LiveAdvice;
  /** MongoDB: the parsed command (the trial runs it on the sample). */
  command?: MongoCommand;
}

export const suggestionId = (s: Suggestion): string => `s${s.rank}`;

export function findSuggestion(advice: Advice, id: string): Suggestion | undefined {
  return advice.suggestions.find((s) => suggestionId(s) === id);
}

/** True when a value holds a variable of the code ({$placeholder: text}), which no server can run. */
function hasPlaceholder(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasPlaceholder);
  if (value !== null && typeof value === 'object') {
    if (typeof (value as Record<string, unknown>)['$placeholder'] === 'string') return true;
    return Object.values(value as Record<string, unknown>).some(hasPlaceholder);
  }
  return false;
}

/**
 * Why the server cannot verify this suggestion, as one sentence, or undefined when it can. The reasons
 * mirror what measuring skips, so a Verify button never leads to "not tried".
 */
export function unverifiableReason(s: Suggestion, ctx: AdviceContext): string | undefined {
  const { live } = ctx;
  if (live.advice.refusal !== undefined) return 'There is no advice to verify.';
  if (ctx.engine === 'mongodb') {
    const cmd = ctx.command;
    if (!cmd) return 'The query was not read as a MongoDB command.';
    // Without selectivity figures the server was a compatible API (another planner) or answered nothing to count.
    if (live.stats === undefined) return 'The server is not MongoDB itself, so a measurement there would see another planner.';
    if ((live.stats as { total?: number }).total === 0) return 'The collection is empty, so there is nothing to try the index on.';
    if (cmd.hasPlaceholders) return 'The query holds values that are variables in the code, so it cannot run on a sample.';
    if (explainWouldWrite(cmd)) return 'The pipeline writes with $out or $merge, so it is not run on a sample.';
    if (s.action === 'create') {
      if (s.index?.engine !== 'mongodb') return 'There is no index to build.';
      if (s.servesQueryAsWritten) return undefined;
      const rw = s.rewrites.find((r) => r.structured !== undefined);
      if (!rw?.structured || hasPlaceholder(rw.structured)) return 'The index serves only the rewritten query, which needs values known only at run time.';
      return undefined;
    }
    if (s.action === 'keep') return s.keep ? undefined : 'There is no index to keep.';
    return live.advice.suggestions.some((x) => x.action === 'create' && unverifiableReason(x, ctx) === undefined)
      ? undefined
      : 'No index could be tried to compare a collection scan with.';
  }
  if (s.action === 'create') {
    if (!s.createText || s.index?.engine !== 'postgres') return 'There is no index to build.';
    if (!s.servesQueryAsWritten && !s.rewrites.some((r) => (r.parameters ?? []).length === 0)) {
      return 'The index serves only the rewritten query, which needs values from the previous page.';
    }
    return undefined;
  }
  if (s.action === 'keep') return s.keep ? undefined : 'There is no index to keep.';
  const next = live.advice.suggestions.find((x) => x.rank > s.rank && x.action === 'create' && x.servesQueryAsWritten && x.createText && x.index?.engine === 'postgres');
  return next ? undefined : 'No index could be tried to compare the plan without one with.';
}

/**
 * The names the measurement gives the indexes it builds on its copies (qpi_c0, qpi_j1, qpi_rw, in the
 * temporary schema) mean nothing to a user: each measured plan holds only the index of its own
 * candidate, so the name becomes that index's table and key columns.
 */
const SCRATCH_INDEX = /\b(?:pg_temp(?:_\d+)?\.)?qpi_(?:[cj]\d+|rw)\b/g;

export function plainIndexNames(text: string, s: Suggestion): string {
  if (!SCRATCH_INDEX.test(text)) return text;
  SCRATCH_INDEX.lastIndex = 0;
  const name = s.index ? indexLabel(s.index) : 'the index tried';
  return text.replace(SCRATCH_INDEX, name);
}

/** The same for a text that compares two candidates' plans, where a name cannot be told apart. */
function plainAnyIndexNames(text: string): string {
  return text.replace(SCRATCH_INDEX, 'an index tried');
}

function titleOf(s: Suggestion): string {
  if (s.action === 'keep' && s.keep) return `Keep using ${s.keep.name}`;
  if (s.action === 'none') return 'No new index: reading the whole collection or table costs less';
  return s.createText ?? s.ruleText;
}

/** One suggestion as the panel shows it, with its verification so far. */
export function suggestionView(s: Suggestion, ctx: AdviceContext): SuggestionView {
  const view: SuggestionView = { id: suggestionId(s), title: titleOf(s), rule: s.rule };
  const why = s.action === 'keep' && s.keep ? s.keep.reason : s.ruleText;
  const asWritten = s.servesQueryAsWritten ? '' : ' This index serves the rewritten query below, not the query as written.';
  if (why || asWritten) view.detail = plainAnyIndexNames(`${why}${asWritten}`.trim());
  if (s.createText) view.ddl = s.createText;
  // With nothing to build, the text worth copying is the rewritten query (keyset pagination, UNION ALL...).
  else if (s.action !== 'keep' && s.rewrites[0]?.text) view.ddl = s.rewrites[0].text;
  if (s.expectedPlan) view.expectedPlan = plainIndexNames(s.expectedPlan, s);
  if (s.tradeOff) view.tradeOff = s.tradeOff;
  if (s.conditions.length > 0) view.conditions = s.conditions.map((c) => c.text);
  if (s.keep) view.keep = s.keep.name;
  if (s.replaces && s.replaces.length > 0) view.replaces = [...s.replaces];
  if (s.rewrites.length > 0) {
    view.rewrites = s.rewrites.map((r) => ({ rule: r.rule, description: r.description, text: r.text, ...(r.caveat ? { caveat: r.caveat } : {}) }));
  }
  const reason = unverifiableReason(s, ctx);
  view.verifiable = reason === undefined;
  const st = statusOf(s);
  if (view.verifiable || st.status !== 'unverified') {
    view.status = st.status;
    if (st.detail) view.statusDetail = st.detail;
    if (st.verdict) view.verdict = st.verdict;
  }
  return view;
}

export function suggestionViews(ctx: AdviceContext | undefined): SuggestionView[] {
  // A table or collection the connection does not have, or a view: the catalog's sentence in place of an index.
  if (ctx?.live.notIndexable !== undefined && ctx.live.advice.suggestions.length === 0) return [{ id: 'not-indexable', title: ctx.live.notIndexable, rule: 'catalog', verifiable: false }];
  if (!ctx || ctx.live.advice.refusal !== undefined) return [];
  return ctx.live.advice.suggestions.map((s) => suggestionView(s, ctx));
}

const fmt = formatCount;

/** The panel's status for a suggestion's verification, with its sentence and figures. */
export function statusOf(s: Suggestion): { status: SuggestionStatus; detail?: string; verdict?: SuggestionVerdict } {
  const v = s.verification;
  if (v.status === 'not-run') return { status: 'unverified' };
  const status: SuggestionStatus = v.status === 'verified' ? 'verified' : v.status === 'refuted' ? 'rejected' : 'failed';
  const out: { status: SuggestionStatus; detail?: string; verdict?: SuggestionVerdict } = { status, detail: plainAnyIndexNames(v.message) };
  const verdict = verdictOf(s);
  if (verdict) out.verdict = verdict;
  return out;
}

function figures(n: MeasuredNumbers): Record<string, number> {
  const out: Record<string, number> = { keysExamined: n.keysExamined, docsExamined: n.docsExamined, returned: n.nReturned };
  if (n.blockingSort) out.sortedInMemory = n.sorted;
  return out;
}

const finite = (n: number | undefined): n is number => typeof n === 'number' && Number.isFinite(n);

/**
 * The figures behind a verified or refuted suggestion, labelled for what before and after mean for its
 * action. Numbers that are not finite are left out: messages to the view are JSON, where NaN is null.
 */
export function verdictOf(s: Suggestion): SuggestionVerdict | undefined {
  const v = s.verification as MeasuredVerdict | { status: 'not-run' };
  if (v.status === 'not-run' || v.status === 'failed') return undefined;
  let how: string;
  if (v.method === 'sampled') {
    const n = v.sampleSize;
    const part = n !== undefined && v.collectionSize !== undefined && v.collectionSize > n;
    // How many were copied, when the verdict says (a verdict without the count says "the").
    const howMany = n === undefined ? 'the' : part ? `a sample of ${fmt(n)} of ${fmt(v.collectionSize!)}` : `all ${fmt(n)}`;
    // Each engine in its own words: rows in a temporary table on PostgreSQL, documents in a scratch collection on MongoDB.
    const postgres = s.index?.engine === 'postgres' || (s.index === undefined && v.unit !== undefined && /buffers/.test(v.unit));
    how = postgres
      ? `${howMany} rows, copied into a temporary table that was then dropped (each index built inside a transaction that was rolled back)`
      : `${part ? `a random ${howMany.slice(2)}` : howMany} documents, copied to a scratch collection that was then dropped`;
  } else if (v.method === 'hypopg') how = 'a hypothetical index (HypoPG): nothing was built';
  else if (v.method === 'trial-index') how = 'the index built inside a transaction that was rolled back';
  else how = 'a plain EXPLAIN of the statement';
  const sampled = v.method === 'sampled';
  let beforeLabel = 'today';
  let afterLabel = s.servesQueryAsWritten ? 'with the index' : 'with the index and the rewrite';
  if (s.action === 'keep') {
    beforeLabel = sampled ? 'collection scan' : 'today';
    afterLabel = `through ${s.keep?.name ?? 'the index'}`;
  } else if (s.action === 'none') {
    beforeLabel = 'best index tried';
    afterLabel = sampled ? 'collection scan' : 'without a new index';
  }
  const out: SuggestionVerdict = { method: v.method, how, beforeLabel, afterLabel };
  if (v.unit) out.unit = v.unit;
  if (finite(v.before)) out.before = v.before;
  if (finite(v.after)) out.after = v.after;
  if (v.planBefore) out.planBefore = plainAnyIndexNames(v.planBefore);
  if (v.planAfter) out.planAfter = plainIndexNames(v.planAfter, s);
  if (v.numbersBefore) out.figuresBefore = figures(v.numbersBefore);
  if (v.numbersAfter) out.figuresAfter = figures(v.numbersAfter);
  if (finite(v.sampleSize)) out.sampleSize = v.sampleSize;
  if (finite(v.collectionSize)) out.collectionSize = v.collectionSize;
  if (v.usedByPlanner !== undefined) out.usedByPlanner = v.usedByPlanner;
  return out;
}

/**
 * How many suggestions the measurement must try so that the one asked for is among them: a pipeline's
 * suggestions on a MongoDB sample and the PostgreSQL planner's estimates try the first three indexes to
 * create, in rank order.
 */
export function suggestionsToTry(advice: Advice, s: Suggestion): number {
  const before = advice.suggestions.filter((x) => x.action === 'create' && x.rank <= s.rank).length;
  return Math.max(3, before);
}

// ---- consent ------------------------------------------------------------------------------------------

/** A question asked before the extension writes or builds anything on the user's server. */
export interface ConsentQuestion {
  kind: 'mongo-trial' | 'pg-build';
  /** The modal's sentence. */
  message: string;
  /** What exactly happens, shown under it. */
  detail: string;
  /** The button that agrees; anything else declines. */
  accept: string;
}

/**
 * The most documents a MongoDB measurement copies for the setting `sampleSize`: the sizing of the
 * measurement of every candidate when almost nothing matches the query (it then copies the most, to see
 * enough matches); the measurement of a pipeline's suggestions copies at most `sampleSize`.
 */
export function mostCopied(sampleSize: number): number {
  return tournamentSampleSize(Number.MAX_SAFE_INTEGER, 0, { min: sampleSize });
}

/** How many documents the sample holds, in words: "2,500 documents, more when few of them match the query (at most 20,000)". */
function copiedWords(sampleSize: number): string {
  const most = mostCopied(sampleSize);
  return most > sampleSize ? `${fmt(sampleSize)} documents, more when few of them match the query (at most ${fmt(most)})` : `up to ${fmt(sampleSize)} documents`;
}

export function measureQuestion(collection: string, database: string | undefined, sampleSize: number): ConsentQuestion {
  const where = database ? `${database}.${collection}` : collection;
  return {
    kind: 'mongo-trial',
    message: `Measure the suggested indexes on a random sample of ${where}?`,
    detail:
      `MongoDB has no hypothetical indexes, so the suggestions are measured on a copy: a random sample of ${copiedWords(sampleSize)}, or the whole ` +
      `collection when it holds fewer, is copied to a scratch collection (qpi_trial_…) on the same server, the suggested and existing ` +
      `indexes are built there, the query is explained with each, and the scratch collection is dropped, also on error or Cancel. ` +
      `${collection} itself and its indexes are not changed.`,
    accept: 'Measure on a Sample',
  };
}

export function buildQuestion(tables: string[], hypopgInstalled: boolean): ConsentQuestion {
  const on = tables.length > 0 ? tables.join(', ') : 'the table';
  return {
    kind: 'pg-build',
    message: `Build the index inside a transaction that is rolled back? It locks writes to ${on} while it builds.`,
    detail:
      `${hypopgInstalled ? 'HypoPG cannot simulate this kind of index' : 'HypoPG is not installed in this database'}, so the index can only be checked ` +
      `by building it: BEGIN; CREATE INDEX ...; EXPLAIN ...; ROLLBACK. Nothing remains afterwards, but while the index builds, ` +
      `inserts, updates and deletes on ${on} wait.`,
    accept: 'Build and Roll Back',
  };
}

/** What the progress notification says at each step of a MongoDB measurement. */
export function measureStepText(step: MeasureStep, collection: string, sampleSize: number): string {
  switch (step) {
    case 'copy':
      return mostCopied(sampleSize) > sampleSize
        ? `copying a random sample of ${fmt(sampleSize)} documents of ${collection} or more (at most ${fmt(mostCopied(sampleSize))}) to a scratch collection`
        : `copying a random sample of up to ${fmt(sampleSize)} documents of ${collection} to a scratch collection`;
    case 'indexes':
      return 'building the indexes on the sample';
    case 'explain':
      return 'running the query on the sample with each index';
    case 'drop':
      return 'dropping the scratch collection';
  }
}
