// How one MongoDB index key pattern serves one query shape: which leading fields get point bounds, whether
// the index gives the sort (directly, or through SORT_MERGE over exploded $in points), which range is
// bounded, which predicates are only checked on keys after a skip, which need the document, and whether
// the plan is covered. With statistics, the same walk estimates keys and documents examined, in the unit
// the truth cases measure (keysExamined + docsExamined), so candidates and existing indexes compare.

import { MAX_SCANS_TO_EXPLODE, type MongoPredicate, type MongoShape } from './mongoShape';
import type { MongoIndexKey, MongoStats } from './types';

export interface IndexFit {
  keys: MongoIndexKey[];
  /** Leading fields with point bounds (equalities and $in lists). */
  pointFields: string[];
  /** $in fields among pointFields. */
  inFields: string[];
  /** Point-interval combinations of the leading $in fields (1 without $in; Infinity when a list is unknown). */
  combos: number;
  /** No sort asked, or the index gives it. */
  sortServed: boolean;
  /** The sort comes from merging one scan per point combination. */
  sortMerge: boolean;
  /** The query sorts and the index does not give the order: a blocking SORT stage. */
  blockingSort: boolean;
  /** The range field whose bounds narrow the scan (right after the points, or the first sort field). */
  boundedRange?: string;
  /** Predicate fields present later in the index: checked on keys, skipping with extra seeks. */
  filteredInIndex: string[];
  /** Index fields without bounds that precede a filtered field (each of their values costs a seek). */
  scanGaps: string[];
  /** Indexable predicate fields absent from the index: checked on each fetched document. */
  missing: string[];
  /** Fields whose bounds are lost because they sit in the same array as an earlier key, without $elemMatch. */
  multikeyLost: string[];
  /** No document is fetched (covered projection or count over keys). */
  covered: boolean;
  /** The index bounds at least one predicate or gives the sort. */
  usable: boolean;
}

export interface FitContext {
  /** Paths known to hold arrays. */
  arrays: ReadonlySet<string>;
}

/** The array path `path` lies under, among the known arrays (longest match), if any. */
export function arrayOf(path: string, arrays: ReadonlySet<string>): string | undefined {
  let best: string | undefined;
  for (const a of arrays) {
    if ((path === a || path.startsWith(`${a}.`)) && (best === undefined || a.length > best.length)) best = a;
  }
  return best;
}

/** The sort the index must give: sort fields with a plain equality are constant and drop out. */
export function effectiveSort(shape: MongoShape, preds: readonly MongoPredicate[]): { path: string; direction: 1 | -1 }[] {
  const constant = new Set(preds.filter((p) => p.kind === 'equality').map((p) => p.path));
  return shape.sort.filter((s) => !constant.has(s.path));
}

export function fitIndex(keys: readonly MongoIndexKey[], shape: MongoShape, preds: readonly MongoPredicate[], ctx: FitContext): IndexFit {
  const byPath = new Map(preds.map((p) => [p.path, p]));
  const sort = effectiveSort(shape, preds);
  const fit: IndexFit = {
    keys: [...keys],
    pointFields: [],
    inFields: [],
    combos: 1,
    sortServed: sort.length === 0,
    sortMerge: false,
    blockingSort: false,
    filteredInIndex: [],
    scanGaps: [],
    missing: [],
    multikeyLost: [],
    covered: false,
    usable: false,
  };

  // Multikey: without $elemMatch, two keys in one array may match different elements, so only the first
  // key under that array keeps its bounds.
  const boundArrays = new Map<string, string | undefined>();
  const lost = new Set<string>();
  for (const k of keys) {
    const p = byPath.get(k.field);
    const arr = arrayOf(k.field, ctx.arrays);
    if (!p || arr === undefined) continue;
    if (boundArrays.has(arr)) {
      const firstElem = boundArrays.get(arr);
      if (p.elemMatch === undefined || p.elemMatch !== firstElem) lost.add(k.field);
    } else {
      boundArrays.set(arr, p.elemMatch);
    }
  }
  fit.multikeyLost = [...lost];

  let i = 0;
  while (i < keys.length) {
    const f = keys[i]!.field;
    const p = byPath.get(f);
    if (!p || lost.has(f) || (p.kind !== 'equality' && p.kind !== 'in')) break;
    fit.pointFields.push(f);
    if (p.kind === 'in') {
      fit.inFields.push(f);
      fit.combos *= p.values ?? Infinity;
    }
    i++;
  }

  let unboundedSeen = false;
  if (sort.length > 0) {
    const slice = keys.slice(i, i + sort.length);
    const sameOrder = slice.length === sort.length && slice.every((k, j) => k.field === sort[j]!.path);
    const dirs = sameOrder ? slice.map((k, j) => k.direction * sort[j]!.direction) : [];
    const consistent = sameOrder && (dirs.every((d) => d === 1) || dirs.every((d) => d === -1));
    if (consistent && (fit.inFields.length === 0 || fit.combos <= MAX_SCANS_TO_EXPLODE)) {
      fit.sortServed = true;
      fit.sortMerge = fit.inFields.length > 0;
      const first = byPath.get(sort[0]!.path);
      if (first && !lost.has(first.path) && first.kind === 'range') fit.boundedRange = first.path;
      else unboundedSeen = true;
      i += sort.length;
    } else {
      fit.blockingSort = true;
    }
  }
  if (!unboundedSeen && fit.boundedRange === undefined && i < keys.length) {
    const p = byPath.get(keys[i]!.field);
    if (p && !lost.has(p.path) && (p.kind === 'range' || p.kind === 'in' || p.kind === 'equality')) {
      fit.boundedRange = p.path;
      i++;
    }
  }
  const rest = keys.slice(i);
  const pending: string[] = [];
  if (unboundedSeen) pending.push(...sort.filter((s) => !byPath.has(s.path)).map((s) => s.path));
  if (fit.boundedRange !== undefined && byPath.get(fit.boundedRange)?.kind === 'range') pending.push(fit.boundedRange);
  for (const k of rest) {
    const p = byPath.get(k.field);
    if (p && p.kind !== 'unindexable' && !lost.has(k.field)) {
      fit.filteredInIndex.push(k.field);
      fit.scanGaps.push(...pending);
      pending.length = 0;
    } else {
      pending.push(k.field);
    }
  }
  fit.scanGaps = [...new Set(fit.scanGaps)];
  const inIndex = new Set(keys.map((k) => k.field));
  fit.missing = preds.filter((p) => p.kind !== 'unindexable' && (!inIndex.has(p.path) || lost.has(p.path))).map((p) => p.path);
  fit.usable = fit.pointFields.length > 0 || fit.boundedRange !== undefined || (sort.length > 0 && fit.sortServed);

  const anyArray = keys.some((k) => arrayOf(k.field, ctx.arrays) !== undefined);
  const noFetchNeeded = fit.missing.length === 0 && preds.every((p) => !p.needsFetch) && preds.every((p) => p.kind !== 'unindexable') && !anyArray;
  if (shape.operation === 'count') {
    fit.covered = noFetchNeeded;
  } else if (shape.operation === 'distinct' && shape.distinctField !== undefined) {
    fit.covered = noFetchNeeded && inIndex.has(shape.distinctField);
  } else if (shape.projection?.coverable) {
    const needed = [...shape.projection.fields, ...(shape.projection.includesId ? ['_id'] : [])];
    fit.covered = noFetchNeeded && needed.every((f) => inIndex.has(f));
  }
  return fit;
}

// ---- estimates ----------------------------------------------------------------------------------------

export interface MongoEstimate {
  keys: number;
  docs: number;
  /** Documents the query returns before skip/limit (the R of ESR's trade-off). */
  result: number;
  /** Documents the blocking sort must hold, 0 without one. */
  sorted: number;
  work: number;
}

/** Selectivity (0..1) of the predicates on `fields` together, from the statistics, when they say it. */
export function selectivity(fields: readonly string[], preds: readonly MongoPredicate[], stats: MongoStats | undefined): number | undefined {
  if (!stats || !stats.total || stats.total <= 0) return undefined;
  const n = stats.total;
  const set = [...new Set(fields)].sort();
  if (set.length === 0) return 1;
  const key = set.join('+');
  const direct = lookupMatching(stats, set);
  if (direct !== undefined) return clamp(direct / n);
  const all = preds.filter((p) => p.kind !== 'unindexable').map((p) => p.path).sort();
  const eq = preds.filter((p) => p.kind === 'equality' || p.kind === 'in').map((p) => p.path).sort();
  if (stats.result !== undefined && key === all.join('+')) return clamp(stats.result / n);
  if (stats.equality !== undefined && eq.length > 0 && key === eq.join('+')) return clamp(stats.equality / n);
  // Otherwise combine: the equality group as measured, the rest as independent predicates.
  let sel = 1;
  let rest = set;
  if (stats.equality !== undefined && eq.length > 0 && eq.every((f) => set.includes(f))) {
    sel = stats.equality / n;
    rest = set.filter((f) => !eq.includes(f));
    // A range measured together with the equalities (result) covers the rest when it is all that is left.
    if (stats.result !== undefined && all.every((f) => set.includes(f)) && set.every((f) => all.includes(f))) return clamp(stats.result / n);
  }
  for (const f of rest) {
    const m = lookupMatching(stats, [f]);
    if (m === undefined) {
      // With only the equality and the result measured, a lone range's share of the equality group is known.
      if (rest.length === 1 && stats.result !== undefined && stats.equality !== undefined && stats.equality > 0
        && all.length === eq.length + 1 && all.includes(f)) {
        sel *= stats.result / stats.equality;
        continue;
      }
      return undefined;
    }
    sel *= m / n;
  }
  return clamp(sel);
}

function lookupMatching(stats: MongoStats, set: readonly string[]): number | undefined {
  if (!stats.matching) return undefined;
  const want = [...set].sort().join('+');
  for (const [k, v] of Object.entries(stats.matching)) {
    if (k.split('+').map((s) => s.trim()).sort().join('+') === want) return v;
  }
  return undefined;
}

function clamp(x: number): number {
  return Math.max(0, Math.min(1, x));
}

/**
 * Keys and documents one index would examine, under the usual independence assumptions, or undefined
 * when the statistics do not say enough. A collection scan is `keys: 0, docs: total`.
 */
export function estimateFit(fit: IndexFit | 'collscan', shape: MongoShape, preds: readonly MongoPredicate[], stats: MongoStats | undefined): MongoEstimate | undefined {
  const n = stats?.total;
  if (n === undefined || n <= 0) return undefined;
  const indexable = preds.filter((p) => p.kind !== 'unindexable').map((p) => p.path);
  const selAll = selectivity(indexable, preds, stats);
  if (selAll === undefined) return undefined;
  const result = n * selAll;
  const want = (shape.limit ?? Infinity) + (shape.skip ?? 0);
  const sortAsked = shape.sort.length > 0;
  if (fit === 'collscan') {
    const docs = sortAsked || want === Infinity ? n : Math.min(n, result > 0 ? (want / result) * n : n);
    return { keys: 0, docs, result, sorted: sortAsked ? result : 0, work: docs };
  }
  const bound = [...fit.pointFields, ...(fit.boundedRange !== undefined ? [fit.boundedRange] : [])];
  const selBound = selectivity(bound, preds, stats);
  const selIndex = selectivity([...bound, ...fit.filteredInIndex], preds, stats);
  if (selBound === undefined || selIndex === undefined) return undefined;
  let keys = n * selBound;
  const passing = n * selIndex;
  if (fit.filteredInIndex.length > 0 && fit.scanGaps.length > 0 && stats?.distinct) {
    // A skip scan: each distinct value of an unbounded field costs a seek, not a key per document.
    const d = fit.scanGaps.reduce((acc, f) => acc * (stats.distinct?.[f] ?? Infinity), 1);
    if (Number.isFinite(d)) keys = Math.min(keys, passing + d * Math.max(1, Number.isFinite(fit.combos) ? fit.combos : 1));
  }
  let docs = fit.covered ? 0 : passing;
  let sorted = 0;
  if (fit.blockingSort) {
    sorted = passing;
    // MongoDB sorts index keys before fetching when every predicate and sort field is in the index.
    const sortInKeys = shape.sort.every((s) => fit.keys.some((k) => k.field === s.path));
    if (!fit.covered && fit.missing.length === 0 && sortInKeys && want !== Infinity) docs = Math.min(passing, want);
  } else if (want !== Infinity && result > 0) {
    const scans = fit.sortMerge || (!sortAsked && fit.inFields.length > 0) ? Math.max(1, fit.combos) : 1;
    const frac = Math.min(1, (scans * want) / result);
    keys *= frac;
    // Skip runs on keys before the fetch when no predicate waits for the document; otherwise after it.
    if (!fit.covered) docs = fit.missing.length === 0 ? Math.min(passing, shape.limit ?? passing) : passing * frac;
  }
  return { keys, docs, result, sorted, work: keys + docs };
}
