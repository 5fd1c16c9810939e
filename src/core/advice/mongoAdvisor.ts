// The MongoDB index advisor. From a query shape it builds the textbook ESR index (equality, sort, range;
// an $in counts as equality only while the planner can explode it for the sort), the ERS alternative
// when a range might be selective, a covered variant when the projection allows, and for counts the
// single-interval COUNT_SCAN index. It then looks at the indexes that exist (keep one that serves, extend
// one instead of adding a sibling, never propose a duplicate or a prefix), and, when statistics are given,
// decides the data-dependent choices (ESR or ERS, index or collection scan) instead of only stating them.

import { distinctRanked } from './served';
import { possibleOnly, withExistingKeys, type KnownKeys } from './possible';
import { arrayOf, effectiveSort, estimateFit, fitIndex, selectivity, type FitContext, type IndexFit, type MongoEstimate } from './mongoFit';
import { MAX_SCANS_TO_EXPLODE, isPlainObject, mongoShape, type MongoPredicate, type MongoShape } from './mongoShape';
import { aggregateText, createIndexText, findText, keyPatternText, shellKey } from './mongoText';
import { formatCount, formatShare } from '../format';
import type {
  Advice, AdviceRule, DecidingCondition, ExistingMongoIndex, MongoDoc, MongoIndexKey, MongoIndexSpec, MongoQueryInput,
  MongoStats, Rewrite, ShapeSummary, Suggestion,
} from './types';

export interface MongoAdviceOptions {
  /** The collection's indexes (listIndexes), with multikey facts when known. */
  existing?: ExistingMongoIndex[];
  /** Counts that decide the data-dependent choices; see MongoStats. */
  stats?: MongoStats;
  /** Keys and the catalog where the advice is given (possible.ts): no index is suggested that cannot exist. */
  known?: KnownKeys;
}

/** Above this share of the collection, fetching matches through an index reads more than a scan. */
export const COLLSCAN_SHARE = 0.3;
/** A blocking sort of more documents than this is not "a handful sorted in memory". */
export const SMALL_SORT = 10_000;
/** ERS must read at most half of what ESR reads to be worth its in-memory sort. */
const ERS_ADVANTAGE = 2;

interface Candidate {
  rule: AdviceRule;
  keys: MongoIndexKey[];
  fit: IndexFit;
  est?: MongoEstimate;
  ruleText: string;
  tradeOff: string;
  conditions: DecidingCondition[];
  rewrites: Rewrite[];
  servesAsWritten: boolean;
}

interface Context extends FitContext {
  shape: MongoShape;
  preds: MongoPredicate[];
  stats?: MongoStats;
  notes: string[];
  /** Key patterns of the existing indexes, to order equality fields so a new index extends one. */
  existingKeys: MongoIndexKey[][];
}

/** Advice for one MongoDB query. Never throws on bad input: an unreadable query gets a refusal sentence. */
export function adviseMongo(query: MongoQueryInput, options: MongoAdviceOptions = {}): Advice {
  const read = mongoShape(query);
  if (!read.ok) return { engine: 'mongodb', shapes: [], suggestions: [], rewrites: [], notes: [], warnings: [], refusal: read.refusal };
  const shape = read.shape;
  const existing = (options.existing ?? []).filter((ix) => ix && typeof ix.name === 'string' && isPlainObject(ix.key));
  const arrays = new Set<string>(options.stats?.arrays ?? []);
  for (const ix of existing) {
    for (const paths of Object.values(ix.multikeyPaths ?? {})) for (const p of paths) arrays.add(p);
  }
  const notes = [...shape.notes];
  const warnings = [...shape.warnings];
  const advice: Advice = { engine: 'mongodb', shapes: [summary(shape)], suggestions: [], rewrites: [], notes, warnings };

  const suggestions: Suggestion[] = [];
  const allRewrites: Rewrite[] = [];

  // A $match hidden behind a renaming $project: advise the pipeline with the $match moved first.
  const hiddenFirst: Candidate[] = [];
  for (const hm of shape.hiddenMatches) {
    const renamed = Object.entries(hm.renames).map(([to, from]) => `${to} (from ${from})`).join(', ');
    if (Object.keys(hm.movedFilter).length === 0) {
      notes.push(`The $match at stage ${hm.stageIndex + 1} filters on fields computed by an earlier stage (${hm.computed.join(', ')}); no index can serve it.`);
      continue;
    }
    const rewrite: Rewrite = {
      rule: 'match-first',
      description: hm.description ?? `The $match at stage ${hm.stageIndex + 1} filters on ${renamed}, a field an earlier stage renamed, so the optimizer cannot move it before that stage and the collection is scanned. Matching on the original path first lets an index serve it.`,
      text: aggregateText(shape.collection, hm.rewritten),
      structured: { collection: shape.collection, operation: 'aggregate', pipeline: hm.rewritten },
      caveat: hm.caveat ?? 'Equivalent when the renamed path holds a single value per document; if it runs through arrays, the stage turned it into an array of values and the two forms can return different documents, so check the results.',
    };
    allRewrites.push(rewrite);
    const moved = mongoShape({ collection: shape.collection, operation: 'aggregate', pipeline: hm.rewritten });
    if (!moved.ok) continue;
    const ctx = context(moved.shape, moved.shape.predicates, arrays, options.stats, notes, existing);
    for (const c of candidatesFor(ctx)) {
      c.servesAsWritten = false;
      c.rewrites = [rewrite, ...c.rewrites];
      c.ruleText = `After moving the $match first: ${c.ruleText}`;
      if (c.rule !== 'collection-scan') c.rule = 'match-first';
      hiddenFirst.push(c);
    }
  }

  let useBranches = shape.orBranches.length > 0;
  if (useBranches && shape.orBranches.some((b) => !b.some((p) => p.kind !== 'unindexable'))) {
    notes.push('A $or branch has no condition an index can bound, so the $or scans the collection whatever the indexes; the advice covers the conditions outside the $or.');
    useBranches = false;
  }
  const branches = useBranches ? shape.orBranches : [[]];
  const main: Candidate[] = [];
  for (const [b, branch] of branches.entries()) {
    const preds = [...shape.predicates, ...branch];
    const ctx = context(shape, preds, arrays, options.stats, notes, existing);
    let cands = candidatesFor(ctx);
    if (useBranches) {
      cands = cands.filter((c) => c.rule !== 'collection-scan');
      for (const c of cands) {
        c.rule = 'or-branch';
        c.ruleText = `$or branch ${b + 1} of ${branches.length}: ${c.ruleText} Every branch needs an index of its own, or the whole $or scans the collection.`;
      }
    }
    main.push(...cands);
  }
  for (const c of main) for (const r of c.rewrites) if (!allRewrites.includes(r)) allRewrites.push(r);

  const asWrittenUsable = main.some((c) => c.fit.usable && c.rule !== 'collection-scan');
  const ordered = asWrittenUsable ? [...main, ...hiddenFirst] : [...hiddenFirst, ...main.filter((c) => c.rule !== 'collection-scan' || hiddenFirst.length === 0)];

  for (const c of ordered) suggestions.push(toSuggestion(c, shape));
  applyExisting(suggestions, ordered, shape, existing, arrays, options.stats, notes);
  advice.suggestions = distinctRanked(suggestions);
  advice.rewrites = allRewrites;
  if (existing.length > 0) advice.writeCost = writeCostText(shape.collection, existing.length);
  return possibleOnly(advice, undefined, withExistingKeys(options.known, existing));
}

function context(shape: MongoShape, preds: MongoPredicate[], arrays: Set<string>, stats: MongoStats | undefined, notes: string[], existing: ExistingMongoIndex[] = []): Context {
  const exKeys = existing.map(existingKeys).filter((k): k is MongoIndexKey[] => k !== undefined);
  const ctx: Context = { shape, preds, arrays, notes, existingKeys: exKeys };
  if (stats) ctx.stats = stats;
  return ctx;
}

// ---- candidates ---------------------------------------------------------------------------------------

function candidatesFor(ctx: Context): Candidate[] {
  const { shape, preds } = ctx;
  const sort = effectiveSort(shape, preds);
  const out: Candidate[] = [];
  const conditionsAll: DecidingCondition[] = [];

  // Array siblings without $elemMatch: with known arrays, only one can carry bounds; without, say so.
  const lostSiblings = new Set<string>();
  const siblingNotes: DecidingCondition[] = [];
  const groups = new Map<string, MongoPredicate[]>();
  for (const p of preds) {
    if (p.kind === 'unindexable' || !p.path.includes('.')) continue;
    const known = arrayOf(p.path, ctx.arrays);
    const parent = known ?? p.path.slice(0, p.path.indexOf('.'));
    const list = groups.get(parent) ?? [];
    list.push(p);
    groups.set(parent, list);
  }
  for (const [parent, list] of groups) {
    if (list.length < 2) continue;
    const elem = list[0]!.elemMatch;
    if (elem !== undefined && list.every((p) => p.elemMatch === elem)) continue;
    const ranked = [...list].sort((a, b) => kindOrder(a) - kindOrder(b));
    const keepField = ranked[0]!;
    if (ctx.arrays.has(parent)) {
      for (const p of ranked.slice(1)) lostSiblings.add(p.path);
    } else {
      siblingNotes.push({
        quantity: `documents whose ${parent} is an array`,
        threshold: 0,
        formula: 'any',
        below: `the compound index on ${list.map((p) => p.path).join(', ')}`,
        above: `an index on ${keepField.path} alone (or $elemMatch if one element must match all of them)`,
        text: `If ${parent} holds arrays, the conditions on ${list.map((p) => p.path).join(' and ')} may match different elements, so only ${keepField.path} keeps index bounds: index {${shellKey(keepField.path)}: 1} alone, or write $elemMatch if one element must match them all.`,
      });
    }
  }

  const usable = preds.filter((p) => p.kind !== 'unindexable' && !lostSiblings.has(p.path));
  const eqs = usable.filter((p) => p.kind === 'equality');
  const ins = usable.filter((p) => p.kind === 'in');
  const sortPaths = new Set(sort.map((s) => s.path));
  let exploded: MongoPredicate[] = [];
  let notExploded: MongoPredicate[] = [];
  if (sort.length === 0) {
    exploded = ins;
  } else {
    let combos = 1;
    for (const p of [...ins].sort((a, b) => (a.values ?? Infinity) - (b.values ?? Infinity))) {
      const v = p.values;
      if (v === undefined) {
        exploded.push(p);
        conditionsAll.push({
          quantity: `values in the list of ${p.path}`,
          threshold: MAX_SCANS_TO_EXPLODE,
          formula: `${MAX_SCANS_TO_EXPLODE} point combinations`,
          below: `${p.path} as an equality before the sort (SORT_MERGE)`,
          above: `${p.path} after the sort fields, like a range`,
          text: `The $in on ${p.path} counts as equality only while the list (times the other $in lists) has at most ${MAX_SCANS_TO_EXPLODE} values; with more, the planner cannot merge the scans in order and ${p.path} belongs after the sort fields.`,
        });
      } else if (combos * v <= MAX_SCANS_TO_EXPLODE) {
        combos *= v;
        exploded.push(p);
      } else {
        notExploded.push(p);
      }
    }
    notExploded = notExploded.filter((p) => !sortPaths.has(p.path));
    for (const p of notExploded) {
      ctx.notes.push(`The $in on ${p.path} lists ${p.values} values: with the sort, more than ${MAX_SCANS_TO_EXPLODE} point combinations cannot be merged in order, so it is placed after the sort fields, like a range.`);
    }
  }
  const E = orderEqualities([...eqs, ...exploded.filter((p) => !sortPaths.has(p.path))], ctx);
  const rangePreds = usable.filter((p) => p.kind === 'range' && !sortPaths.has(p.path));
  const R = [...notExploded, ...orderRanges(rangePreds, ctx)];
  const S = sort;

  const eKeys: MongoIndexKey[] = E.map((p) => ({ field: p.path, direction: 1 }));
  const sKeys: MongoIndexKey[] = S.map((s) => ({ field: s.path, direction: s.direction }));
  const rKeys: MongoIndexKey[] = R.map((p) => ({ field: p.path, direction: 1 }));
  let esrKeys = dedupeKeys([...eKeys, ...sKeys, ...rKeys]);
  if (shape.distinctField !== undefined && !esrKeys.some((k) => k.field === shape.distinctField)) {
    esrKeys = dedupeKeys([...eKeys, { field: shape.distinctField, direction: 1 }, ...sKeys, ...rKeys]);
  }

  esrKeys = withoutParallelArrays(esrKeys, ctx);

  if (esrKeys.length === 0) {
    out.push(noneCandidate(ctx, shape.operation === 'count' && preds.length === 0
      ? 'A count without a filter reads the collection metadata; no index is needed.'
      : 'The query has no predicate or sort an index can serve: it reads every document whatever the indexes.'));
    return out;
  }
  if (preds.some((p) => p.kind === 'unindexable')) {
    ctx.notes.push(`Checked on each document, whatever the index: ${preds.filter((p) => p.kind === 'unindexable').map((p) => `${p.path} (${p.detail})`).join(', ')}.`);
  }

  const esrFit = fitIndex(esrKeys, shape, preds, ctx);
  const esr: Candidate = {
    rule: 'esr',
    keys: esrKeys,
    fit: esrFit,
    ruleText: esrRuleText(E, S, R, shape),
    tradeOff: esrTradeOff(E, S, R),
    conditions: [...conditionsAll, ...siblingNotes],
    rewrites: [],
    servesAsWritten: true,
  };
  if (lostSiblings.size > 0) {
    esr.rule = 'multikey-single';
    esr.ruleText = `${[...lostSiblings].join(', ')} ${lostSiblings.size > 1 ? 'lie' : 'lies'} in the same array as another condition without $elemMatch, so its bounds cannot be combined: it is left out of the index and checked on the documents. ${esr.ruleText}`;
    const rw = elemMatchRewrite(shape, preds, lostSiblings, ctx);
    if (rw) esr.rewrites.push(rw);
  } else if (S.length > 0 && exploded.length > 0) {
    esr.rule = 'explode-in';
  } else if (S.length === 0 && R.length > 0) {
    esr.rule = 'er';
  }
  if (shape.operation === 'count' && esrFit.covered && exploded.length === 0 && R.length <= 1) esr.rule = 'count-scan';
  out.push(esr);

  // ERS: the first range before the sort, for when it is selective.
  let ers: Candidate | undefined;
  if (S.length > 0 && R.length > 0) {
    const ersKeys = dedupeKeys([...eKeys, rKeys[0]!, ...sKeys, ...rKeys.slice(1)]);
    ers = {
      rule: 'ers',
      keys: ersKeys,
      fit: fitIndex(ersKeys, shape, preds, ctx),
      ruleText: `Equality, then the range on ${R[0]!.path}, then the sort: the scan reads only the keys inside the range and sorts those in memory.`,
      tradeOff: 'A blocking SORT of every matching document: cheap for a handful, costly for many (and limited to 100 MB in memory); nothing is returned before the whole range is read.',
      conditions: [],
      rewrites: [],
      servesAsWritten: true,
    };
    const cond = ersCondition(esr, ers, E, R[0]!, ctx);
    esr.conditions.push(cond);
    ers.conditions.push(cond);
  }

  // Covered: the projection's fields appended so no document is fetched.
  let covered: Candidate | undefined;
  const proj = shape.projection;
  if (proj?.coverable && !esrFit.covered && shape.operation === 'find') {
    const extra = [...proj.fields, ...(proj.includesId ? ['_id'] : [])].filter((f) => !esrKeys.some((k) => k.field === f));
    const blocked = preds.some((p) => p.needsFetch || p.kind === 'unindexable') || [...esrKeys.map((k) => k.field), ...extra].some((f) => arrayOf(f, ctx.arrays) !== undefined);
    if (extra.length > 0 && extra.length <= 3 && !blocked) {
      const keys = [...esrKeys, ...extra.map((f) => ({ field: f, direction: 1 as const }))];
      covered = {
        rule: 'covered',
        keys,
        fit: fitIndex(keys, shape, preds, ctx),
        ruleText: `The ESR index plus the projected field${extra.length > 1 ? 's' : ''} ${extra.join(', ')}: the query is answered from the index alone, without fetching documents.`,
        tradeOff: 'A wider index: more memory and more bytes written per insert, in exchange for no document fetches.',
        conditions: [],
        rewrites: [],
        servesAsWritten: true,
      };
    }
  } else if (proj?.coverable && esrFit.covered) {
    esr.ruleText += ' Every projected field is in the index, so the plan is covered (no FETCH).';
  }

  const pagination = keysetRewrite(shape);
  if (pagination) esr.rewrites.push(pagination);

  // Ranking: statistics decide ESR or ERS and index or scan; without them ESR leads, the others follow.
  const stats = ctx.stats;
  const all = [esr, ...(ers ? [ers] : []), ...(covered ? [covered] : [])];
  for (const c of all) {
    const est = estimateFit(c.fit, shape, preds, stats);
    if (est) c.est = est;
  }
  let ranked = [esr, ...(covered ? [covered] : []), ...(ers ? [ers] : [])];
  if (ers && decidedSide(ers.conditions[0]) === 'below') ranked = [ers, esr, ...(covered ? [covered] : [])];
  else if (covered && covered.est && esr.est && covered.est.work < esr.est.work * 0.9) ranked = [covered, esr, ...(ers ? [ers] : [])];

  const scan = collscanCondition(ranked[0]!, ctx);
  if (scan) {
    ranked[0]!.conditions.push(scan);
    if (scan.decided === 'above') {
      const none = noneCandidate(ctx, `Fewer than ${formatShare(COLLSCAN_SHARE)} of documents would need to match for an index to read less than a collection scan; here about ${formatShare(scan.observed! / stats!.total!)} do.`);
      none.conditions.push(scan);
      const scanEst = estimateFit('collscan', shape, preds, stats);
      if (scanEst) none.est = scanEst;
      ranked = [none, ...ranked];
    }
  }
  return ranked;
}

/**
 * Equality fields read the same keys in any order (measured: all orders tie), so the order is chosen for
 * reuse: first the fields an existing index starts with, so the new index extends it; then, with
 * statistics, the most selective first, so the index's own prefixes stay useful to other queries.
 */
function orderEqualities(E: MongoPredicate[], ctx: Context): MongoPredicate[] {
  let lead: string[] = [];
  for (const keys of ctx.existingKeys) {
    const prefix: string[] = [];
    for (const k of keys) {
      if (!E.some((p) => p.path === k.field && p.kind === 'equality')) break;
      prefix.push(k.field);
    }
    if (prefix.length > lead.length) lead = prefix;
  }
  const rest = E.filter((p) => !lead.includes(p.path));
  const sel = (p: MongoPredicate) => selectivity([p.path], ctx.preds, ctx.stats);
  const sorted = rest.every((p) => sel(p) !== undefined) ? [...rest].sort((a, b) => sel(a)! - sel(b)!) : rest;
  return [...lead.map((f) => E.find((p) => p.path === f)!), ...sorted];
}

/** MongoDB cannot build a compound index over two different arrays: keep the first array path only. */
function withoutParallelArrays(keys: MongoIndexKey[], ctx: Context): MongoIndexKey[] {
  const seen: string[] = [];
  const related = (a: string, b: string) => a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
  return keys.filter((k) => {
    const arr = arrayOf(k.field, ctx.arrays);
    if (arr === undefined) return true;
    const clash = seen.find((s) => !related(s, arr));
    if (clash === undefined) {
      seen.push(arr);
      return true;
    }
    ctx.notes.push(`${k.field} is left out of the index: ${clash} and ${arr} both hold arrays, and MongoDB cannot index two parallel arrays in one compound index.`);
    return false;
  });
}

function kindOrder(p: MongoPredicate): number {
  return p.kind === 'equality' ? 0 : p.kind === 'in' ? 1 : p.kind === 'range' ? 2 : 3;
}

/** Ranges: most selective first with statistics, else tight bounds before loose ones, as written. */
function orderRanges(ranges: MongoPredicate[], ctx: Context): MongoPredicate[] {
  const withSel = ranges.map((p, i) => ({ p, i, sel: selectivity([p.path], ctx.preds, ctx.stats) }));
  return withSel.sort((a, b) => {
    if (a.sel !== undefined && b.sel !== undefined && a.sel !== b.sel) return a.sel - b.sel;
    const ta = a.p.tight ? 0 : 1;
    const tb = b.p.tight ? 0 : 1;
    return ta - tb || a.i - b.i;
  }).map((x) => x.p);
}

function dedupeKeys(keys: MongoIndexKey[]): MongoIndexKey[] {
  const seen = new Set<string>();
  return keys.filter((k) => (seen.has(k.field) ? false : (seen.add(k.field), true)));
}

function noneCandidate(ctx: Context, why: string): Candidate {
  return {
    rule: 'collection-scan',
    keys: [],
    fit: fitIndex([], ctx.shape, ctx.preds, ctx),
    ruleText: why,
    tradeOff: 'No index to build or maintain; the query reads the whole collection each time it runs.',
    conditions: [],
    rewrites: [],
    servesAsWritten: true,
  };
}

// ---- conditions ---------------------------------------------------------------------------------------

function predicateList(preds: readonly MongoPredicate[]): string {
  return preds.map((p) => p.text).join(', ');
}

function decidedSide(c: DecidingCondition | undefined): 'below' | 'above' | undefined {
  return c?.decided;
}

/**
 * ESR or ERS. Without a limit, ESR reads the whole equality group (E keys) and fetches R documents; ERS
 * reads and fetches R and sorts them, so ERS pays when 2·2R ≤ E + R, that is R ≤ E/3. With a limit L, ESR
 * stops after about L·E/R keys and L documents while ERS reads R keys and fetches L after sorting keys:
 * 2(R + L) ≤ L·E/R + L gives R ≤ (√(L² + 8·L·E) − L) / 4. Either way the sort must stay small.
 */
function ersCondition(esr: Candidate, ers: Candidate, E: MongoPredicate[], range: MongoPredicate, ctx: Context): DecidingCondition {
  const { shape, stats, preds } = ctx;
  const limit = shape.limit !== undefined ? shape.limit + (shape.skip ?? 0) : undefined;
  const n = stats?.total;
  const selE = E.length > 0 ? selectivity(E.map((p) => p.path), preds, stats) : 1;
  const eCount = n !== undefined && selE !== undefined ? n * selE : undefined;
  const formulaShort = limit === undefined ? 'E / 3' : `(√(L² + 8·L·E) − L) / 4`;
  const formula = `${formulaShort}, E = documents matching the equality fields${limit === undefined ? '' : `, L = ${limit}`}`;
  let threshold: number | undefined;
  if (eCount !== undefined) {
    const raw = limit === undefined ? eCount / 3 : (Math.sqrt(limit * limit + 8 * limit * eCount) - limit) / 4;
    threshold = Math.max(0, Math.min(SMALL_SORT, Math.floor(raw)));
  }
  const where = [...E, range];
  const quantity = `documents matching ${predicateList(where)}`;
  const esrText = keyPatternText(esr.keys);
  const ersText = keyPatternText(ers.keys);
  const eText = E.length > 0 ? predicateList(E) : 'no equality (the whole collection)';
  const amount = threshold !== undefined
    ? `fewer than about ${formatCount(threshold)} documents match ${predicateList(where)}`
    : `the documents matching ${predicateList(where)} number fewer than about ${formulaShort}, E being the documents matching ${eText}${limit === undefined ? '' : ` and L = ${limit}`}`;
  const cond: DecidingCondition = {
    quantity,
    formula,
    below: `ERS ${ersText}: read only the range, sort the few matches in memory`,
    above: `ESR ${esrText}: no in-memory sort`,
    text: `ERS ${ersText} reads less when ${amount} (and at most ${formatCount(SMALL_SORT)} need sorting); above that, ESR ${esrText} avoids the in-memory sort.`,
  };
  if (threshold !== undefined) cond.threshold = threshold;
  // Observed: the range's matches within the equality group, and the decision by estimated work.
  const selR = selectivity(where.map((p) => p.path), preds, stats);
  if (n !== undefined && selR !== undefined) {
    cond.observed = Math.round(n * selR);
    const a = estimateFit(esr.fit, shape, preds, stats);
    const b = estimateFit(ers.fit, shape, preds, stats);
    if (a && b) {
      const ersWins = b.sorted <= SMALL_SORT && b.work * ERS_ADVANTAGE <= a.work;
      cond.decided = ersWins ? 'below' : 'above';
    } else {
      cond.decided = threshold !== undefined && cond.observed < threshold ? 'below' : 'above';
    }
  }
  return cond;
}

/** Index or collection scan: attached when the index's work grows with the number of matches. */
function collscanCondition(best: Candidate, ctx: Context): DecidingCondition | undefined {
  const { shape, preds, stats } = ctx;
  if (best.rule === 'collection-scan') return undefined;
  const boundedByLimit = shape.limit !== undefined && !best.fit.blockingSort;
  if (boundedByLimit) return undefined;
  if (shape.sort.length > 0 && best.fit.sortServed && !best.fit.blockingSort) return undefined;
  const indexable = preds.filter((p) => p.kind !== 'unindexable');
  if (indexable.length === 0) return undefined;
  const n = stats?.total;
  const cond: DecidingCondition = {
    quantity: `documents matching ${predicateList(indexable)}`,
    formula: `${formatShare(COLLSCAN_SHARE)} of the collection`,
    below: `the index ${keyPatternText(best.keys)}`,
    above: 'no index: a collection scan reads less',
    text: `The index pays only if fewer than about ${n !== undefined ? formatCount(Math.round(n * COLLSCAN_SHARE)) : `${formatShare(COLLSCAN_SHARE)} of the`} documents match ${predicateList(indexable)}; above that, fetching them through the index reads more than a collection scan.`,
  };
  if (n !== undefined) cond.threshold = Math.round(n * COLLSCAN_SHARE);
  const est = best.est;
  if (n !== undefined && est) {
    cond.observed = Math.round(est.result);
    cond.decided = est.work > 2 * COLLSCAN_SHARE * n ? 'above' : 'below';
  }
  return cond;
}

// ---- texts --------------------------------------------------------------------------------------------

function esrRuleText(E: MongoPredicate[], S: { path: string; direction: 1 | -1 }[], R: MongoPredicate[], shape: MongoShape): string {
  const parts: string[] = [];
  if (E.length > 0) {
    const ins = E.filter((p) => p.kind === 'in');
    parts.push(`equality first (${E.map((p) => p.path).join(', ')})`);
    if (ins.length > 0 && S.length > 0) {
      parts.push(`the ${ins.map((p) => `${p.detail} on ${p.path}${p.values !== undefined ? ` (${p.values} values)` : ''}`).join(' and ')} counting as equality because the planner runs one scan per value and merges them in sort order (SORT_MERGE), which it does up to ${MAX_SCANS_TO_EXPLODE} point combinations`);
    }
  }
  if (S.length > 0) parts.push(`then the sort (${S.map((s) => `${s.path}: ${s.direction}`).join(', ')}) so no blocking SORT is needed`);
  if (R.length > 0) parts.push(`then the range${R.length > 1 ? 's' : ''} (${R.map((p) => `${p.path}: ${p.kind === 'in' ? `${p.detail} of ${p.values} values, past the explode limit` : p.detail}`).join(', ')})`);
  if (parts.length > 0) parts[0] = parts[0]!.replace(/^then /, '');
  let text = `ESR: ${parts.join(', ')}.`;
  if (S.length === 0 && R.length > 0) text = `ER: ${parts.join(', ')}: one contiguous scan, nothing to sort.`;
  if (shape.operation === 'count') text += ' A count over one contiguous interval reads keys only (COUNT_SCAN).';
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function esrTradeOff(E: MongoPredicate[], S: unknown[], R: MongoPredicate[]): string {
  if (S.length > 0 && R.length > 0) {
    return 'The range is checked on the keys after the sort field, so the scan reads every key of the equality group until the limit is met; if the range is very selective, ERS reads far less (see the condition).';
  }
  if (E.some((p) => p.kind === 'in') && S.length > 0) {
    return `Each value costs one seek; past ${MAX_SCANS_TO_EXPLODE} point combinations the planner abandons the merge and a blocking SORT returns.`;
  }
  if (R.some((p) => !p.tight)) {
    return `The ${R.filter((p) => !p.tight).map((p) => p.detail).join(', ')} condition bounds the index loosely: the scan reads every key of the equality group and filters them, which is still cheaper than fetching the documents.`;
  }
  return 'One more index to update on every insert and on updates of its fields.';
}

function expectedPlanText(c: Candidate, shape: MongoShape): string {
  if (c.rule === 'collection-scan') return shape.sort.length > 0 ? 'SORT > COLLSCAN' : 'COLLSCAN';
  const f = c.fit;
  const stages: string[] = [];
  if (shape.operation === 'count') stages.push('COUNT');
  if (shape.limit !== undefined && shape.operation !== 'count') stages.push('LIMIT');
  if (shape.skip !== undefined) stages.push('SKIP');
  if (f.blockingSort) stages.push('SORT');
  const leaf = f.sortMerge ? `SORT_MERGE over ${Number.isFinite(f.combos) ? f.combos : 'one'} IXSCAN${f.combos === 1 ? '' : 's'}` : 'IXSCAN';
  if (shape.operation === 'count' && f.covered && f.inFields.length === 0 && f.filteredInIndex.length === 0) {
    return `COUNT_SCAN ${keyPatternText(c.keys)} (keys only, no FETCH)`;
  }
  const elem = [...new Set(shape.predicates.filter((p) => p.elemMatch !== undefined).map((p) => p.elemMatch!))];
  const fetchFilter = [...f.missing, ...elem.map((e) => `$elemMatch on ${e}`)];
  if (shape.operation === 'distinct' && f.covered) {
    return `PROJECTION_COVERED > DISTINCT_SCAN ${keyPatternText(c.keys)} (one key per distinct value, no FETCH)`;
  }
  if (!f.covered) stages.push(fetchFilter.length > 0 ? `FETCH (filter: ${fetchFilter.join(', ')})` : 'FETCH');
  else if (shape.operation !== 'count') stages.push('PROJECTION_COVERED');
  stages.push(`${leaf} ${keyPatternText(c.keys)}`);
  const facts: string[] = [];
  if (shape.sort.length > 0) facts.push(f.blockingSort ? 'blocking SORT in memory' : 'no blocking SORT');
  if (f.missing.length === 0 && f.filteredInIndex.length === 0 && !f.blockingSort) {
    facts.push(shape.skip !== undefined ? `keys examined ≈ skip + limit (the ${shape.skip} skipped keys are read too)` : 'keys examined ≈ documents returned');
  }
  if (f.filteredInIndex.length > 0) facts.push(`${f.filteredInIndex.join(', ')} checked on keys (extra seeks)`);
  return `${stages.join(' > ')}${facts.length > 0 ? `; ${facts.join(', ')}` : ''}`;
}

function toSuggestion(c: Candidate, shape: MongoShape): Suggestion {
  const s: Suggestion = {
    rank: 0,
    action: c.rule === 'collection-scan' ? 'none' : 'create',
    rule: c.rule,
    ruleText: c.ruleText,
    expectedPlan: expectedPlanText(c, shape),
    tradeOff: c.tradeOff,
    rewrites: c.rewrites,
    servesQueryAsWritten: c.servesAsWritten,
    conditions: c.conditions,
    verification: { status: 'not-run' },
  };
  if (c.rule !== 'collection-scan') {
    s.index = indexSpec(shape.collection, c.keys);
    s.createText = createIndexText(shape.collection, c.keys);
  }
  if (c.est) {
    s.estimate = { keysExamined: Math.round(c.est.keys), docsExamined: Math.round(c.est.docs), blockingSort: c.fit.blockingSort || (c.rule === 'collection-scan' && shape.sort.length > 0) };
  }
  return s;
}

export function indexSpec(collection: string, keys: readonly MongoIndexKey[]): MongoIndexSpec {
  const keyPattern: Record<string, 1 | -1> = {};
  for (const k of keys) keyPattern[k.field] = k.direction;
  return { engine: 'mongodb', collection, keys: [...keys], keyPattern };
}

function summary(shape: MongoShape): ShapeSummary {
  const fields = [...shape.predicates, ...shape.orBranches.flat()].map((p) => {
    const f: ShapeSummary['fields'][number] = { path: p.path, kind: p.kind, detail: p.detail };
    if (p.values !== undefined) f.values = p.values;
    if (p.kind === 'in') f.explodes = shape.sort.length === 0 || (p.values !== undefined && p.values <= MAX_SCANS_TO_EXPLODE);
    return f;
  });
  const s: ShapeSummary = { target: shape.collection, fields, sort: shape.sort.map((x) => ({ ...x })), notes: [] };
  if (shape.limit !== undefined) s.limit = shape.limit;
  if (shape.skip !== undefined) s.skip = shape.skip;
  if (shape.projection?.coverable) s.notes.push(`projection of ${shape.projection.fields.join(', ')}${shape.projection.includesId ? ' and _id' : ''}: a covered plan is possible`);
  if (shape.hiddenMatches.length > 0) s.notes.push('pipeline: a $match on a field an earlier stage renamed or computed');
  if (shape.orBranches.length > 0) s.notes.push(`$or over different fields: ${shape.orBranches.length} branches`);
  return s;
}

// ---- rewrites -----------------------------------------------------------------------------------------

/** skip(n) reads n keys it throws away; a range on the sort key after the last page reads only the page. */
function keysetRewrite(shape: MongoShape): Rewrite | undefined {
  if (shape.skip === undefined || shape.skip <= 0) return undefined;
  if (shape.sort.length === 0 || shape.operation !== 'find') return undefined;
  const sort = shape.sort;
  const names = sort.map((s) => `last${s.path.split('.').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('').replace(/[^A-Za-z0-9_$]/g, '')}`);
  const placeholder = (i: number): unknown => ({ $placeholder: names[i] });
  let page: MongoDoc;
  if (sort.length === 1) {
    page = { [sort[0]!.path]: { [sort[0]!.direction === 1 ? '$gt' : '$lt']: placeholder(0) } };
  } else {
    // (a, b) after (A, B): a beyond A, or a equal to A and b beyond B, and so on.
    page = {
      $or: sort.map((s, i) => {
        const branch: MongoDoc = {};
        for (let j = 0; j < i; j++) branch[sort[j]!.path] = placeholder(j);
        branch[s.path] = { [s.direction === 1 ? '$gt' : '$lt']: placeholder(i) };
        return branch;
      }),
    };
  }
  // Merge into the filter when no key collides; otherwise AND the two documents.
  const simple = Object.keys(page).every((k) => !(k in shape.filter));
  const filter: MongoDoc = Object.keys(shape.filter).length === 0 ? page : simple ? { ...shape.filter, ...page } : { $and: [shape.filter, page] };
  const sortDoc: MongoDoc = Object.fromEntries(sort.map((s) => [s.path, s.direction]));
  const unique = sort.some((s) => s.path === '_id');
  return {
    rule: 'keyset',
    description: `skip(${shape.skip}) still examines the ${shape.skip} index keys it skips, so every page costs more than the one before. Keyset pagination starts after the last sort key of the previous page and reads only the page.`,
    text: findText(shape.collection, filter, sortDoc, shape.limit),
    structured: { collection: shape.collection, operation: 'find', filter, sort: sortDoc, ...(shape.limit !== undefined ? { limit: shape.limit } : {}) },
    parameters: names.map((n, i) => `${n}: the ${sort[i]!.path} of the last document of the previous page`),
    ...(unique ? {} : { caveat: `If ${sort.map((s) => s.path).join(', ')} can repeat, add _id as the last sort key (and to the condition) so no document is skipped or shown twice between pages.` }),
  };
}

/** When one array element must satisfy the conditions together, $elemMatch lets the bounds combine. */
function elemMatchRewrite(shape: MongoShape, preds: readonly MongoPredicate[], lost: Set<string>, ctx: Context): Rewrite | undefined {
  if (shape.operation !== 'find') return undefined;
  const first = preds.find((p) => lost.has(p.path));
  if (!first) return undefined;
  const arr = arrayOf(first.path, ctx.arrays);
  if (arr === undefined) return undefined;
  const group = preds.filter((p) => arrayOf(p.path, ctx.arrays) === arr && p.path !== arr && p.elemMatch === undefined);
  if (group.length < 2) return undefined;
  const inner: MongoDoc = {};
  for (const p of group) inner[p.path.slice(arr.length + 1)] = p.condition;
  const filter: MongoDoc = {};
  for (const [k, v] of Object.entries(shape.filter)) {
    if (!group.some((p) => p.path === k)) filter[k] = v;
  }
  filter[arr] = { $elemMatch: inner };
  const sortDoc = shape.sort.length > 0 ? Object.fromEntries(shape.sort.map((s) => [s.path, s.direction])) : undefined;
  const keys = group.map((p) => `${shellKey(p.path)}: 1`).join(', ');
  return {
    rule: 'elem-match',
    description: `If one element of ${arr} must satisfy ${group.map((p) => p.path).join(' and ')} together, say so with $elemMatch: the bounds then combine and an index {${keys}} reads only matching elements.`,
    text: findText(shape.collection, filter, sortDoc, shape.limit),
    structured: { collection: shape.collection, operation: 'find', filter, ...(sortDoc ? { sort: sortDoc } : {}), ...(shape.limit !== undefined ? { limit: shape.limit } : {}) },
    caveat: `Not the same query: without $elemMatch the conditions may be met by different elements of ${arr}. Use it only if that is what you meant.`,
  };
}

// ---- existing indexes ---------------------------------------------------------------------------------

function existingKeys(ix: ExistingMongoIndex): MongoIndexKey[] | undefined {
  const keys: MongoIndexKey[] = [];
  for (const [field, dir] of Object.entries(ix.key)) {
    if (typeof dir !== 'number' || dir === 0) return undefined;
    keys.push({ field, direction: dir < 0 ? -1 : 1 });
  }
  return keys;
}

/** Whether a partial or sparse index can answer this query at all. */
function indexApplies(ix: ExistingMongoIndex, keys: MongoIndexKey[], preds: readonly MongoPredicate[]): boolean {
  if (ix.hidden) return false;
  if (ix.partialFilterExpression && isPlainObject(ix.partialFilterExpression)) {
    for (const [field, cond] of Object.entries(ix.partialFilterExpression)) {
      const p = preds.find((q) => q.path === field);
      if (!p) return false;
      const same = JSON.stringify(p.condition) === JSON.stringify(cond);
      const existsOnly = isPlainObject(cond) && cond['$exists'] === true && p.kind === 'equality' && !p.needsFetch;
      if (!same && !existsOnly) return false;
    }
  }
  if (ix.sparse) return keys.some((k) => preds.some((p) => p.path === k.field && !p.needsFetch && p.kind !== 'unindexable'));
  return true;
}

/** Same fields in order, directions equal or all inverted on the compared part. */
function isPrefixOf(prefix: readonly MongoIndexKey[], keys: readonly MongoIndexKey[]): boolean {
  if (prefix.length > keys.length) return false;
  const rel = prefix.map((k, i) => (keys[i]!.field === k.field ? k.direction * keys[i]!.direction : 0));
  return rel.every((d) => d === 1) || rel.every((d) => d === -1);
}

/** The existing index serves at least as well as the candidate, judged by structure alone. */
function servesAsWell(ex: IndexFit, ideal: IndexFit, shape: MongoShape): boolean {
  if (!ex.usable) return false;
  if (shape.sort.length > 0 && ideal.sortServed && !ex.sortServed) return false;
  if (ex.pointFields.length < ideal.pointFields.length) return false;
  if (ideal.boundedRange !== undefined && ex.boundedRange !== ideal.boundedRange && ex.pointFields.length === ideal.pointFields.length) return false;
  if (ex.missing.some((f) => !ideal.missing.includes(f))) return false;
  if (ex.scanGaps.length > ideal.scanGaps.length) return false;
  if (ideal.covered && !ex.covered) return false;
  return true;
}

function applyExisting(suggestions: Suggestion[], candidates: Candidate[], shape: MongoShape, existing: ExistingMongoIndex[], arrays: Set<string>,
  stats: MongoStats | undefined, notes: string[]): void {
  if (existing.length === 0 || suggestions.length === 0) return;
  const parsed = existing.map((ix) => ({ ix, keys: existingKeys(ix) })).filter((e): e is { ix: ExistingMongoIndex; keys: MongoIndexKey[] } => e.keys !== undefined);
  for (let i = 0; i < suggestions.length; i++) {
    const s = suggestions[i]!;
    const c = candidates[i]!;
    if (s.action !== 'create') continue;
    const preds = [...shape.predicates, ...(c.rule === 'or-branch' ? branchOf(shape, c) : [])];
    const ctx: FitContext = { arrays };
    let keep: { ix: ExistingMongoIndex; reason: string } | undefined;
    for (const { ix, keys } of parsed) {
      if (!c.servesAsWritten) break;
      if (!indexApplies(ix, keys, preds)) continue;
      const fit = fitIndex(keys, shape, preds, ctx);
      const exEst = estimateFit(fit, shape, preds, stats);
      let good = false;
      let reason = '';
      if (isPrefixOf(c.keys, keys)) {
        good = true;
        reason = keys.length === c.keys.length ? `it has the same keys as ${keyPatternText(c.keys)}` : `${keyPatternText(c.keys)} is a prefix of it, so it serves the query the same way`;
      } else if (exEst && c.est && !(fit.blockingSort && !c.fit.blockingSort && (exEst.sorted > SMALL_SORT))) {
        if (exEst.work <= c.est.work * 1.1 + 10) {
          good = true;
          reason = `by the statistics it examines about ${formatCount(Math.round(exEst.keys + exEst.docs))} keys and documents, against ${formatCount(Math.round(c.est.work))} for the ideal index${fit.scanGaps.length > 0 ? ` (a skip scan over ${fit.scanGaps.join(', ')}, few extra seeks)` : ''}`;
        }
      } else if (servesAsWell(fit, c.fit, shape)) {
        good = true;
        reason = 'it bounds the same fields and gives the same order';
      }
      if (good) {
        keep = { ix, reason };
        break;
      }
      if (!exEst && fit.scanGaps.length > c.fit.scanGaps.length && fit.pointFields.length >= c.fit.pointFields.length && fit.sortServed === c.fit.sortServed) {
        const gaps = fit.scanGaps.filter((g) => !c.fit.scanGaps.includes(g));
        notes.push(`${ix.name} could serve through a skip scan over ${gaps.join(', ')}: keep it instead of adding ${keyPatternText(c.keys)} if ${gaps.join(', ')} ${gaps.length > 1 ? 'have' : 'has'} only a few distinct values (one seek each).`);
      }
    }
    if (keep) {
      const exKeys = existingKeys(keep.ix)!;
      suggestions[i] = {
        ...s,
        action: 'keep',
        rule: 'existing',
        index: indexSpec(shape.collection, exKeys),
        keep: { name: keep.ix.name, reason: `Keep using ${keep.ix.name}: ${keep.reason}.` },
        ruleText: `The existing index ${keep.ix.name} ${keyPatternText(exKeys)} already serves this query: ${keep.reason}.`,
        expectedPlan: expectedPlanText({ ...c, keys: exKeys, fit: fitIndex(exKeys, shape, preds, ctx) }, shape),
        tradeOff: 'Nothing to build: no new index to maintain on writes.',
      };
      delete suggestions[i]!.createText;
      continue;
    }
    const replaces = parsed.filter(({ ix, keys }) => ix.name !== '_id_' && !ix.unique && !ix.partialFilterExpression && !ix.sparse && !ix.hidden
      && keys.length < c.keys.length && isPrefixOf(keys, c.keys)).map(({ ix }) => ix.name);
    if (replaces.length > 0) {
      s.replaces = replaces;
      s.tradeOff += ` It extends ${replaces.join(', ')}: build it, then drop ${replaces.length > 1 ? 'those' : 'that one'}, since every query that used ${replaces.length > 1 ? 'them' : 'it'} can use the longer index.`;
    }
  }
}

function branchOf(shape: MongoShape, c: Candidate): MongoPredicate[] {
  const fields = new Set(c.keys.map((k) => k.field));
  return shape.orBranches.find((b) => b.some((p) => fields.has(p.path))) ?? [];
}

function writeCostText(collection: string, count: number): string {
  const base = `${collection} has ${count} index${count === 1 ? '' : 'es'}: every insert writes ${count} index entr${count === 1 ? 'y' : 'ies'}, one more index adds one more to every insert and to every update of its fields, and once the indexes outgrow memory each one adds random reads to every write.`;
  return count >= 5 ? `${base} With ${count} already, extend an existing index rather than add one, and check whether a near match with a few extra seeks is good enough.` : base;
}
