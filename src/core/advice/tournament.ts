// Verdicts from a tournament: candidates measured on a sample of the user's data, ranked by the work the
// server really did. "Verified" then means the least work among the candidates measured, shown beside
// the runner-up's and today's figures; an index that exists and does as well is kept rather than built
// again; and where the rules' first pick lost, the verdict says which rule lost and why, from the
// figures themselves (an in-memory sort, keys a range or an array field could not bound, documents
// fetched to filter). Pure: the adapters measure, this decides and writes the sentences.

import { formatCount, formatMs, formatRatio } from '../format';
import { mongoIndexServing, pgIndexServing } from './served';
import type { Advice, ExistingMongoIndex, ExistingPgIndex, IndexSpec, MeasuredWork, Suggestion, Tournament, TournamentEntry, Verification } from './types';

/** Within this share of the best, a candidate does as well (noise on a sample is larger than this). */
export const SAME_WORK = 1.1;
/**
 * Nor does a difference of this much work or less tell two runs apart on a sample, however small the
 * figures: one key at a bound, one document more or less in the sample. Two or more is a difference: on
 * the tuning set of the truth generator a floor of two made the advice pick a larger index over one that
 * read a buffer less (84/90 connected against 86/90 with one).
 */
export const NOISE_FLOOR = 1;
/**
 * The floor where the whole table was measured (PostgreSQL up to 200,000 rows, copied whole): the buffers
 * are what the index will read, and a buffer is a page. On a query that reads two or three pages one is a
 * third of the work (`orders(customer_id)` reads 3 where `orders(customer_id, priority)` reads 2), so only
 * the 10% counts: with a floor of one the smallest index won such ties, and the truth generator's tuning set
 * fell from 89/90 connected to 86/90.
 */
export const WHOLE_TABLE_NOISE_FLOOR = 0;
/** A run slower than today's by this factor and by SLOWER_MS at least is slower, not noise. */
const SLOWER_FACTOR = 1.5;
const SLOWER_MS = 5;

/** Whether two measured figures differ by no more than noise: 10% of the smaller, or the floor (NOISE_FLOOR). */
export function withinNoise(a: number, b: number, floor = NOISE_FLOOR): boolean {
  return Math.abs(a - b) <= Math.max(floor, (SAME_WORK - 1) * Math.min(a, b));
}

/** Whether `a` is less work than `b` beyond noise. */
export function clearlyLess(a: number, b: number, floor = NOISE_FLOOR): boolean {
  return a < b && !withinNoise(a, b, floor);
}

/** The noise floor of a tournament: none on a PostgreSQL table measured whole, NOISE_FLOOR on a sample. */
export function noiseFloor(input: Pick<TournamentInput, 'engine' | 'sample'>): number {
  return input.engine === 'postgres' && !input.sample.scaled && input.sample.size >= input.sample.total ? WHOLE_TABLE_NOISE_FLOOR : NOISE_FLOOR;
}

const fmt = (n: number): string => formatCount(Math.round(n));

export function indexLabel(ix: IndexSpec | undefined): string {
  if (!ix) return 'no index (full scan)';
  if (ix.engine === 'mongodb') return `{${ix.keys.map((k) => `${k.field}: ${k.direction}`).join(', ')}}`;
  const cols = ix.keys.map((k) => `${k.column}${k.desc ? ' DESC' : ''}${k.nullsFirst !== undefined ? (k.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST') : ''}`).join(', ');
  return `${ix.table}${ix.method !== 'btree' ? ` USING ${ix.method}` : ''} (${cols})${ix.include?.length ? ` INCLUDE (${ix.include.join(', ')})` : ''}${ix.predicate ? ` WHERE ${ix.predicate}` : ''}`;
}

/** What a candidate built: its index, or the indexes it built together ("{a: 1} + {b: 1}"). */
export function entryLabel(e: TournamentEntry): string {
  return e.set ? e.set.map((m) => indexLabel(m.index)).join(' + ') : indexLabel(e.index);
}

/** The figures of one run in words: "120 keys + 40 documents = 160" or "35 buffers, 10 rows, 0.4 ms". */
export function workText(m: MeasuredWork): string {
  if (m.buffers !== undefined) return `${fmt(m.buffers)} buffers, ${fmt(m.rows)} rows${m.timeMs !== undefined ? `, ${formatMs(m.timeMs)}` : ''}${m.blockingSort ? `, ${fmt(m.sorted ?? 0)} rows sorted` : ''}`;
  return `${fmt(m.keysExamined ?? 0)} keys + ${fmt(m.docsExamined ?? 0)} documents${m.blockingSort ? ` + ${fmt(m.sorted ?? 0)} sorted in memory` : ''} = ${fmt(m.work)}`;
}

function keyCount(e: TournamentEntry): number {
  const count = (ix: IndexSpec | undefined): number => (ix ? ix.keys.length + (ix.engine === 'postgres' ? (ix.include?.length ?? 0) : 0) : 0);
  return e.set ? e.set.reduce((n, m) => n + count(m.index), 0) : count(e.index);
}

/**
 * The work a candidate would do on the whole collection or table: the sample's figure scaled up, except
 * for a scan that stopped at the limit (it reads about as much whatever the size).
 */
export function wholeWork(e: TournamentEntry): number {
  return e.scaledWork ?? e.measured?.work ?? Infinity;
}

/** Whether a run's work grows with the data: not when it stopped at the limit without sorting first. */
export function scalesWithData(m: MeasuredWork, limit: number | undefined): boolean {
  return !(limit !== undefined && m.rows >= limit && !m.blockingSort);
}

/** Least work first; among equals an existing index, then the smaller index, then the rules' order. */
export function rankEntries(entries: readonly TournamentEntry[]): TournamentEntry[] {
  const ok = entries.filter((e) => e.measured !== undefined);
  const failed = entries.filter((e) => e.measured === undefined);
  ok.sort((a, b) => {
    const d = wholeWork(a) - wholeWork(b);
    if (d !== 0) return d;
    if ((a.existing !== undefined) !== (b.existing !== undefined)) return a.existing !== undefined ? -1 : 1;
    const k = keyCount(a) - keyCount(b);
    if (k !== 0) return k;
    return (a.ruleRank ?? Infinity) - (b.ruleRank ?? Infinity);
  });
  return [...ok, ...failed];
}

/** Why the rules' pick did more work than the winner, read from the two runs' figures. */
export function whyRuleLost(pick: TournamentEntry, winner: TournamentEntry, facts: { arrays?: string[]; matching?: Record<string, number>; total?: number } = {}): string {
  const p = pick.measured!;
  const w = winner.measured!;
  const reasons: string[] = [];
  if (p.blockingSort && !w.blockingSort) reasons.push(`it sorts ${fmt(p.sorted ?? 0)} ${p.buffers !== undefined ? 'rows' : 'documents'} in memory, where the winner reads them in order`);
  const fields = (e: TournamentEntry): string[] => (e.index?.engine === 'mongodb' ? e.index.keys.map((k) => k.field) : e.index?.engine === 'postgres' ? e.index.keys.map((k) => k.column) : []);
  const arrays = (facts.arrays ?? []).filter((a) => fields(pick).some((f) => f === a || f.startsWith(`${a}.`)));
  if ((p.keysExamined ?? 0) > (w.keysExamined ?? 0) * 2 && (p.keysExamined ?? 0) > 10) {
    if (arrays.length > 0) reasons.push(`it examines ${fmt(p.keysExamined!)} keys against ${fmt(w.keysExamined ?? 0)}: ${arrays.join(', ')} hold${arrays.length === 1 ? 's' : ''} arrays, and a multikey index cannot combine the bounds of fields in one array`);
    else {
      // A field the winner bounds before the pick's sort: the selectivity of a range beat the order.
      const wf = fields(winner);
      const pf = fields(pick);
      const earlier = wf.find((f, i) => pf.indexOf(f) > i || !pf.includes(f));
      const m = earlier !== undefined ? facts.matching?.[earlier] : undefined;
      reasons.push(`it examines ${fmt(p.keysExamined!)} keys against ${fmt(w.keysExamined ?? 0)}${earlier !== undefined ? `: bounding ${earlier} earlier is more selective${m !== undefined && facts.total ? ` (${fmt(m)} of ${fmt(facts.total)} match it)` : ''}` : ''}`);
    }
  }
  if ((p.docsExamined ?? 0) > (w.docsExamined ?? 0) * 2 && (p.docsExamined ?? 0) > 10) reasons.push(`it fetches ${fmt(p.docsExamined!)} documents against ${fmt(w.docsExamined ?? 0)}, filtering on them what the winner filters on its keys`);
  if (p.buffers !== undefined && w.buffers !== undefined && reasons.length === 0) reasons.push(`it reads ${fmt(p.buffers)} buffers against ${fmt(w.buffers)} (plan ${p.plan} against ${w.plan})`);
  if (p.index !== undefined && pick.index && reasons.length === 0 && w.plan !== p.plan) reasons.push(`the server ran it as ${p.plan}, the winner as ${w.plan}`);
  if (reasons.length === 0) reasons.push(`it did ${fmt(p.work)} against ${fmt(w.work)}`);
  return reasons.join('; ');
}

export interface TournamentInput {
  engine: 'mongodb' | 'postgres';
  unit: string;
  sample: Tournament['sample'];
  label: string;
  generated: number;
  entries: TournamentEntry[];
  today?: MeasuredWork;
  plannerChoice?: string;
  /** For the explanation of a lost rule. */
  facts?: { arrays?: string[]; matching?: Record<string, number>; total?: number };
  /**
   * The indexes that exist: a new index whose keys one of them starts with (a prefix, or the same keys)
   * is never the winner, however little it reads: it would only repeat that index (its figure comes from
   * being narrower, and it costs every write).
   */
  existing?: { mongodb?: ExistingMongoIndex[]; postgres?: ExistingPgIndex[] };
}

/**
 * The suggestion for a measured candidate. A suggestion the rules gave is updated in place, so a front
 * end that holds it (the panel's Verify) sees its verdict; a candidate the rules did not give is new.
 */
function measuredSuggestion(e: TournamentEntry, base: Suggestion | undefined): Suggestion {
  const s: Suggestion = base
    ?? {
        rank: 0,
        action: e.index ? 'create' : 'none',
        rule: e.index ? 'esr' : 'collection-scan',
        ruleText: e.index ? `Measured candidate (${e.label}).` : 'Measured: a full scan without any index.',
        expectedPlan: e.measured?.plan ?? '',
        tradeOff: e.index ? 'One more index to maintain on every write.' : 'Nothing to build.',
        rewrites: [],
        servesQueryAsWritten: true,
        conditions: [],
        verification: { status: 'not-run' },
      };
  if (e.index) {
    s.index = e.index;
    if (e.createText !== undefined) s.createText = e.createText;
  }
  if (e.measured) s.expectedPlan = `${e.measured.plan.replace(/\b(?:pg_temp\.)?qpi_(?:[cj]\d+|rw)\b/g, entryLabel(e))} (measured)`;
  return s;
}

/**
 * Ranks the measured candidates, writes the verdict, and rebuilds the advice's suggestions in measured
 * order: the winner first ("keep using X" when it exists, or when an existing index does as well), then
 * the runner-up and the rest of the measured ones, then what could not be measured (rewrites that need
 * run-time values) as the rules ranked them.
 */
/** The label ("measured from a sample of ...") as the start of a sentence. */
function sentenceStart(label: string): string {
  return `${label.charAt(0).toUpperCase()}${label.slice(1)}`;
}

export function applyTournament(advice: Advice, input: TournamentInput): Tournament {
  const ranking = rankEntries(input.entries);
  const floor = noiseFloor(input);
  // A new index an existing one already serves is measured, listed, and never suggested.
  const redundant = (e: TournamentEntry): boolean => e.existing === undefined && !e.set && e.index !== undefined && servedBy(e.index, input.existing) !== undefined;
  const runs = ranking.filter((e) => e.measured !== undefined);
  const measured = runs.some((e) => !redundant(e)) ? runs.filter((e) => !redundant(e)) : runs;
  const narrower = runs[0] && runs[0] !== measured[0] && redundant(runs[0]) ? runs[0] : undefined;
  if (narrower?.index && measured[0] && clearlyLess(wholeWork(narrower), wholeWork(measured[0]), floor)) {
    advice.notes.push(`${entryLabel(narrower)} read less (${workText(narrower.measured!)}) only by being narrower: ${servedBy(narrower.index, input.existing)} already starts with its keys, so it is not suggested.`);
  }
  const t: Tournament = {
    engine: input.engine,
    unit: input.unit,
    sample: input.sample,
    label: input.label,
    generated: input.generated,
    tried: input.entries.length,
    ranking,
    verdict: '',
  };
  if (input.today) t.today = input.today;
  if (input.plannerChoice !== undefined) t.plannerChoice = input.plannerChoice;
  if (measured.length === 0) {
    t.verdict = `No candidate could be measured ${input.label}.`;
    return t;
  }
  // Within noise of the best, an existing index is kept and a scan without a new index stands (nothing
  // new to build and maintain: an index that saves under a tenth of the work does not pay for itself),
  // and otherwise: on PostgreSQL, measured on the whole table (up to 200,000 rows), a figure is what the
  // index will do, so the smallest index (the cheapest to keep up on every write) wins; on MongoDB,
  // measured on a sample whose figures underrate what grows with the data (a walk until the limit's
  // matches, a sort), the rules' pick stands, since it orders keys for the whole collection. Then the
  // label: the choice inside the noise never depends on the noise.
  const best = measured[0]!;
  const close = measured.filter((e) => e === best || withinNoise(wholeWork(e), wholeWork(best), floor));
  const keepable = close.find((e) => e.existing !== undefined);
  const nothing = close.find((e) => e.origin === 'scan' && e.index === undefined);
  const ruled = close.filter((e) => e.ruleRank !== undefined).sort((a, b) => a.ruleRank! - b.ruleRank!)[0];
  const steady = [...close].sort((a, b) => keyCount(a) - keyCount(b)
    || (a.ruleRank ?? Infinity) - (b.ruleRank ?? Infinity)
    || (entryLabel(a) < entryLabel(b) ? -1 : entryLabel(a) > entryLabel(b) ? 1 : 0))[0]!;
  let winner = keepable ?? nothing ?? (input.engine === 'mongodb' ? ruled : undefined) ?? steady;
  const today = input.today;
  /** A verdict from the sampled measurement: this candidate's work after, today's before. */
  const sampled = (status: 'verified' | 'refuted', e: TournamentEntry, message: string): Verification =>
    ({ status, method: 'sampled', unit: input.unit, after: e.measured!.work, ...(today ? { before: today.work } : {}), message });
  // A new index is verified only when it does less work than today's plan beyond noise, and does not
  // run clearly slower: otherwise today's plan stays (its index kept, or no new index).
  let todayStays: string | undefined;
  if (today && winner.existing === undefined && winner.index !== undefined && winner.measured) {
    const w = winner.measured;
    const slower = w.timeMs !== undefined && today.timeMs !== undefined && w.timeMs > today.timeMs * SLOWER_FACTOR && w.timeMs - today.timeMs > SLOWER_MS;
    if (!clearlyLess(w.work, today.work, floor) || slower) {
      todayStays = slower && clearlyLess(w.work, today.work, floor)
        ? `${entryLabel(winner)} does less work than today's plan (${workText(w)} against ${workText(today)}) but ran slower, so today's plan stays`
        : `${entryLabel(winner)} does no less work than today's plan beyond noise (${workText(w)} against ${workText(today)}), so today's plan stays`;
      const own = (today.index !== undefined ? measured.find((e) => e.existing === today.index) : measured.find((e) => e.origin === 'scan' && e.index === undefined))
        ?? { label: today.index !== undefined ? `today's index ${today.index}` : "today's plan", origin: today.index !== undefined ? 'existing' : 'scan', ...(today.index !== undefined ? { existing: today.index } : {}), measured: today };
      winner = own;
    }
  }
  const rest = measured.filter((e) => e !== winner);
  t.winner = winner;
  if (rest[0]) t.runnerUp = rest[0];
  const n = measured.length;

  const bySpec = (e: TournamentEntry): Suggestion | undefined =>
    (e.ruleRank !== undefined ? advice.suggestions.find((s) => s.rank === e.ruleRank) : undefined)
    ?? advice.suggestions.find((s) => s.action === 'create' && s.servesQueryAsWritten && e.index !== undefined && JSON.stringify(s.index) === JSON.stringify(e.index));
  const fig = (e: TournamentEntry): string => `${workText(e.measured!)}${e.scaledWork !== undefined ? ` (about ${fmt(e.scaledWork)} on the whole ${input.engine === 'mongodb' ? 'collection' : 'table'})` : ''}`;
  const todayText = today ? `today ${workText(today)} (${today.plan})` : 'today not measured';
  const runnerText = t.runnerUp ? `runner-up ${entryLabel(t.runnerUp)} ${fig(t.runnerUp)}` : 'no runner-up';

  const out: Suggestion[] = [];
  const keptBefore = winner.existing !== undefined ? advice.suggestions.find((s) => s.action === 'keep' && s.keep?.name === winner.existing) : undefined;
  const head = measuredSuggestion(winner, winner.existing === undefined ? bySpec(winner) : keptBefore);
  const verifiedText = todayStays !== undefined
    ? `Verified: today's plan, within noise of the best of ${n} candidate${n === 1 ? '' : 's'} ${input.label}: ${todayStays}; ${runnerText}.`
    : wholeWork(winner) > wholeWork(best)
      ? `Verified: within noise of the least work of ${n} candidate${n === 1 ? '' : 's'}, ${input.label}: ${fig(winner)}; ${runnerText}; ${todayText}.`
      : `Verified: least work of ${n} candidate${n === 1 ? '' : 's'}, ${input.label}: ${fig(winner)}; ${runnerText}; ${todayText}.`;
  // The count agrees with the header's "N candidates measured": those an existing index already serves were measured too.
  const setAside = runs.length - measured.length;
  const countedText = setAside > 0 ? `${verifiedText} ${setAside} more, which an existing index already serves, ${setAside === 1 ? 'was' : 'were'} measured and not suggested.` : verifiedText;
  if (winner.existing !== undefined) {
    head.action = 'keep';
    head.rule = 'existing';
    head.keep = { name: winner.existing, reason: `Keep using ${winner.existing}: measured, it does ${todayStays !== undefined || keepable !== best ? 'as well as the best new index, within noise' : 'the least work of the candidates'}.` };
    head.ruleText = `The existing index ${winner.existing}${winner.index ? ` ${indexLabel(winner.index)}` : ''} already serves this query: measured ${input.label}, no candidate does clearly less work.`;
    head.tradeOff = 'Nothing to build: no new index to maintain on writes.';
    delete head.createText;
  } else if (!winner.index) {
    head.action = 'none';
    head.rule = 'collection-scan';
  }
  head.verification = sampled('verified', winner, countedText);
  out.push(head);
  // A group measured together is suggested whole: its other indexes follow the first, with its verdict.
  if (winner.set && head.action === 'create') head.rule = 'or-branch';
  for (const m of winner.set?.slice(1) ?? []) {
    const s = measuredSuggestion({ ...winner, index: m.index, ...(m.createText !== undefined ? { createText: m.createText } : {}) }, advice.suggestions.find((x) => x.action === 'create' && JSON.stringify(x.index) === JSON.stringify(m.index)));
    s.rule = 'or-branch';
    s.verification = { ...head.verification };
    if (m.existing !== undefined) {
      s.action = 'keep';
      s.keep = { name: m.existing, reason: `Keep using ${m.existing}: it serves one branch of the $or beside the indexes measured with it.` };
      delete s.createText;
    }
    out.push(s);
  }
  for (const e of rest.slice(0, 2)) {
    // Another group, or an index the rules gave for one branch, is not a suggestion on its own; nor is an
    // index an existing one already serves.
    if (e.existing !== undefined || !e.index || e.set || (winner.set && bySpec(e)?.rule === 'or-branch') || redundant(e)) continue;
    const s = measuredSuggestion(e, bySpec(e));
    const ratio = wholeWork(winner) > 0 ? wholeWork(e) / wholeWork(winner) : Infinity;
    if (withinNoise(wholeWork(e), wholeWork(winner), floor)) {
      // As good as the first within noise: not rejected, only second (the first is kept, or smaller).
      s.verification = sampled('verified', e, `Within noise of the first, ${input.label}: ${fig(e)} against ${fig(winner)}; the first is preferred (${winner.existing !== undefined ? 'it exists' : !winner.index ? 'nothing to build' : winner === ruled ? "the rules' pick" : keyCount(winner) < keyCount(e) ? 'a smaller index' : 'the first of equals by name'}).`);
      out.push(s);
      continue;
    }
    s.verification = sampled('refuted', e, `${sentenceStart(input.label)}: ${fig(e)}, ${Number.isFinite(ratio) ? formatRatio(ratio) : 'more than'} the work of the best; ${todayText}.`);
    out.push(s);
  }
  // The rules' other suggestions that were measured keep their figures, though they leave the list.
  for (const s of advice.suggestions) {
    if (out.includes(s) || s.verification.status !== 'not-run') continue;
    const e = measured.find((x) => x !== winner && (x.ruleRank === s.rank || (s.action === 'create' && s.servesQueryAsWritten && x.rewrite === undefined && JSON.stringify(x.index) === JSON.stringify(s.index))));
    if (!e) continue;
    s.verification = sampled('refuted', e, `${sentenceStart(input.label)}: ${fig(e)}, more work than ${entryLabel(winner)} (${fig(winner)}).`);
  }
  // Rewrites that were not measured follow, as the rules ranked them.
  const used = new Set(out);
  const measuredRanks = new Set(input.entries.filter((e) => e.rewrite !== undefined).map((e) => e.ruleRank));
  for (const s of advice.suggestions) if (!s.servesQueryAsWritten && !measuredRanks.has(s.rank) && !used.has(s)) out.push(s);
  out.forEach((s, i) => { s.rank = i + 1; });
  advice.suggestions = out;

  const rulePick = input.entries.find((e) => e.ruleRank !== undefined && e.measured !== undefined && e.ruleRank === Math.min(...input.entries.filter((x) => x.ruleRank !== undefined).map((x) => x.ruleRank!)));
  const clearlyWorse = rulePick !== undefined && clearlyLess(wholeWork(winner), wholeWork(rulePick), floor);
  if (rulePick && rulePick !== winner && (clearlyWorse || winner === nothing || winner === keepable || todayStays !== undefined)) {
    const why = clearlyWorse ? whyRuleLost(rulePick, winner, input.facts)
      : todayStays !== undefined ? `it does no less work than today's plan beyond noise, or runs slower`
        : `it saves under a tenth of the work of ${winner === nothing ? 'no new index' : `the existing ${winner.existing}`}, which does not pay for one more index to maintain on every write`;
    t.overturned = `The rules' pick ${entryLabel(rulePick)} (${rulePick.rule ?? rulePick.origin}) lost: ${workText(rulePick.measured!)} against ${workText(winner.measured!)} for ${winner.index ? entryLabel(winner) : winner.label}, because ${why}.`;
    advice.notes.push(t.overturned);
  }
  t.verdict = winner.existing !== undefined
    ? `Keep using ${winner.existing}: ${countedText.replace(/^Verified: /, '')}`
    : `${winner.index ? `Create ${entryLabel(winner)}` : 'No new index'}. ${countedText}`;
  return t;
}

/** The existing index whose leading keys are the spec's, when one is given. */
function servedBy(ix: IndexSpec, existing: TournamentInput['existing']): string | undefined {
  if (!existing) return undefined;
  return ix.engine === 'mongodb' ? mongoIndexServing(ix, existing.mongodb ?? [])?.name : pgIndexServing(ix, existing.postgres ?? [])?.name;
}

/** Matching documents (or rows) a sample should hold so the candidates' work differs by more than noise. */
export const TARGET_MATCHES = 200;
/** The sample never holds fewer than this many documents (or the whole collection when smaller). */
export const MIN_TOURNAMENT_SAMPLE = 2_000;
/** Nor more than this many, whatever the selectivity: the copy and the index builds must stay quick. */
export const MAX_TOURNAMENT_SAMPLE = 20_000;

/**
 * The sample size for a tournament: enough documents for about TARGET_MATCHES of them to match the query
 * (four times the limit when that is more), from the selectivity counts, between the bounds.
 */
export function tournamentSampleSize(total: number, matching: number | undefined, opts: { limit?: number; min?: number; max?: number } = {}): number {
  const t = Math.max(0, Math.floor(total));
  const lo = Math.min(t, Math.max(1, Math.floor(opts.min ?? MIN_TOURNAMENT_SAMPLE)));
  const hi = Math.min(t, Math.max(lo, Math.floor(opts.max ?? MAX_TOURNAMENT_SAMPLE)));
  const target = Math.max(TARGET_MATCHES, (opts.limit ?? 0) * 4);
  const share = matching !== undefined && t > 0 ? Math.max(matching, 0.5) / t : 1;
  const wanted = Math.ceil(target / Math.min(1, share));
  return Math.max(lo, Math.min(hi, wanted));
}
