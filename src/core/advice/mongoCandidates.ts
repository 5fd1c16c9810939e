// The MongoDB candidates a tournament measures: many index key orders read from the query's shape, not
// only the one the rules prefer. The rules (ESR, ERS, explode-for-sort) are good guesses, but selectivity,
// multikey bounds and the planner's own rewrites decide what really does the least work, so the
// candidates are generous: every ordering of the predicate fields with the sort in front or behind,
// prefixes, variants leaving out each $in, range or array field, covered variants, the indexes that exist
// and their extensions. Deduplicated (an index and its full reverse serve the same plans) and capped, in
// the order that keeps the likely winners when the cap cuts.

import { effectiveSort } from './mongoFit';
import type { MongoPredicate, MongoShape } from './mongoShape';
import type { Advice, ExistingMongoIndex, MongoIndexKey, MongoStats } from './types';

/** Where a candidate comes from, for the verdict's explanation. */
export type MongoCandidateOrigin =
  | 'rule'        // a create suggestion of the rule-based advisor (its rule is in `rule`)
  | 'existing'    // an index that exists today
  | 'extension'   // an existing index with the query's missing fields appended
  | 'esr' | 'ers' | 'er' | 'es'
  | 'prefix'
  | 'without'     // ESR/ERS leaving out one $in, range or array field
  | 'covered'
  | 'single'      // one predicate or sort field alone
  | 'ordering';   // another ordering of the predicate fields

export interface MongoCandidate {
  keys: MongoIndexKey[];
  keyPattern: Record<string, 1 | -1>;
  origin: MongoCandidateOrigin;
  /** A few words: "ESR", "ERS", "without status ($in)", "extends tenant_1". */
  label: string;
  /** The rule-based advisor's rank and rule, when it suggested this index. */
  ruleRank?: number;
  rule?: string;
  /** The name of the existing index with these keys. */
  existing?: string;
}

export interface MongoCandidateSet {
  candidates: MongoCandidate[];
  /** Distinct candidates generated before the cap. */
  generated: number;
  cap: number;
}

/** Candidates measured per query when the caller does not say: enough for the orderings of four fields. */
export const DEFAULT_CANDIDATE_CAP = 24;
/** Orderings are enumerated for at most this many predicate fields (5! = 120 before the cap). */
const MAX_PERMUTED_FIELDS = 5;

/** The key pattern both ways a scan can read it: {a: 1, b: -1} and {a: -1, b: 1} serve the same plans. */
export function canonicalKey(keys: readonly MongoIndexKey[]): string {
  const flip = keys[0]?.direction === -1 ? -1 : 1;
  return keys.map((k) => `${k.field}:${k.direction * flip}`).join(',');
}

function pattern(keys: readonly MongoIndexKey[]): Record<string, 1 | -1> {
  const out: Record<string, 1 | -1> = {};
  for (const k of keys) out[k.field] = k.direction;
  return out;
}

function existingKeys(ix: ExistingMongoIndex): MongoIndexKey[] | undefined {
  const keys: MongoIndexKey[] = [];
  for (const [field, d] of Object.entries(ix.key)) {
    if (d !== 1 && d !== -1) return undefined;
    keys.push({ field, direction: d });
  }
  return keys;
}

/** Every ordering of a few items (n! of them: callers bound n). */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [items.slice()];
  const out: T[][] = [];
  items.forEach((x, i) => {
    for (const rest of permutations([...items.slice(0, i), ...items.slice(i + 1)])) out.push([x, ...rest]);
  });
  return out;
}

/**
 * The candidates for one query shape without a top-level $or over different fields. `advice` gives the
 * rule-based suggestions, which go first so a cap never drops the rules' pick; `existing` the indexes
 * that exist. Pure: nothing is measured here.
 */
export function mongoCandidates(shape: MongoShape, opts: { advice?: Advice; existing?: ExistingMongoIndex[]; stats?: MongoStats; cap?: number } = {}): MongoCandidateSet {
  const cap = Math.max(1, Math.floor(opts.cap ?? DEFAULT_CANDIDATE_CAP));
  const preds = shape.predicates.filter((p) => p.kind !== 'unindexable');
  const sort = effectiveSort(shape, preds);
  const arrays = new Set(opts.stats?.arrays ?? []);
  const isArray = (path: string): boolean => [...arrays].some((a) => path === a || path.startsWith(`${a}.`));
  const up = (path: string): MongoIndexKey => ({ field: path, direction: 1 });
  const eq = preds.filter((p) => p.kind === 'equality');
  const ins = preds.filter((p) => p.kind === 'in');
  const ranges = preds.filter((p) => p.kind === 'range');
  const sortKeys: MongoIndexKey[] = sort.map((s) => ({ field: s.path, direction: s.direction }));
  const sortPaths = new Set(sort.map((s) => s.path));
  // A predicate on a sort field is bounded by the sort key itself; it is not repeated as a range key.
  const keyOf = (ps: readonly MongoPredicate[]): MongoIndexKey[] => ps.filter((p) => !sortPaths.has(p.path)).map((p) => up(p.path));

  const out: MongoCandidate[] = [];
  const seen = new Set<string>();
  const existingByKey = new Map<string, string>();
  for (const ix of opts.existing ?? []) {
    const k = existingKeys(ix);
    if (k && !ix.partialFilterExpression && !ix.sparse && !ix.hidden) existingByKey.set(canonicalKey(k), ix.name);
  }
  let generated = 0;
  const add = (keys: readonly MongoIndexKey[], origin: MongoCandidateOrigin, label: string, extra: Partial<MongoCandidate> = {}): void => {
    const unique: MongoIndexKey[] = [];
    for (const k of keys) if (!unique.some((u) => u.field === k.field)) unique.push(k);
    if (unique.length === 0 || unique.length > 32) return;
    const c = canonicalKey(unique);
    if (seen.has(c)) return;
    seen.add(c);
    generated++;
    if (out.length >= cap) return;
    const cand: MongoCandidate = { keys: unique, keyPattern: pattern(unique), origin, label, ...extra };
    const ex = existingByKey.get(c);
    if (ex !== undefined) cand.existing = ex;
    out.push(cand);
  };

  // The rules' own picks first: the tournament must measure what the rules would have said.
  for (const s of opts.advice?.suggestions ?? []) {
    if (s.action !== 'create' || s.index?.engine !== 'mongodb' || !s.servesQueryAsWritten) continue;
    add(s.index.keys, 'rule', `rule ${s.rule}`, { ruleRank: s.rank, rule: s.rule });
  }
  // Today's indexes that touch the query: "keep using X" must be measured against the new ones.
  const touched = new Set([...preds.map((p) => p.path), ...sortPaths]);
  const parsedExisting = (opts.existing ?? []).map((ix) => ({ ix, keys: existingKeys(ix) })).filter((e): e is { ix: ExistingMongoIndex; keys: MongoIndexKey[] } => e.keys !== undefined && e.ix.name !== '_id_');
  for (const { ix, keys } of parsedExisting) {
    if (ix.partialFilterExpression || ix.sparse || ix.hidden) continue;
    if (touched.has(keys[0]!.field)) add(keys, 'existing', `existing ${ix.name}`);
  }

  const E = keyOf(eq);
  const I = keyOf(ins);
  const R = keyOf(ranges);
  const esr = [...E, ...I, ...sortKeys, ...R];
  const ers = [...E, ...I, ...R, ...sortKeys];
  // Existing indexes extended (before the textbook orders, so an extension is named as one) with what the query needs and they lack.
  for (const { ix, keys } of parsedExisting) {
    if (!touched.has(keys[0]!.field) || ix.partialFilterExpression || ix.sparse || ix.hidden || ix.unique) continue;
    const missing = esr.filter((k) => !keys.some((x) => x.field === k.field));
    if (missing.length > 0) add([...keys, ...missing], 'extension', `extends ${ix.name}`);
  }

  add(esr, 'esr', 'ESR');
  add(ers, 'ers', 'ERS');
  add([...E, ...sortKeys, ...I, ...R], 'esr', 'ESR with $in after the sort');
  add([...E, ...I, ...R], 'er', 'equality and range, no sort');
  add([...E, ...I, ...sortKeys], 'es', 'equality and sort, no range');

  // Leaving out one field the rules may be wrong to include: an $in that breaks the sort, a range that
  // matches most documents, an array path whose bounds a multikey index cannot combine.
  const droppable = [...ins, ...ranges, ...eq.filter((p) => isArray(p.path))];
  for (const p of droppable) {
    if (sortPaths.has(p.path)) continue;
    const why = isArray(p.path) ? 'array' : p.kind === 'in' ? '$in' : 'range';
    add(esr.filter((k) => k.field !== p.path), 'without', `ESR without ${p.path} (${why})`);
    add(ers.filter((k) => k.field !== p.path), 'without', `ERS without ${p.path} (${why})`);
  }

  // Covered: the projection's fields after the keys, so no document is fetched.
  if (shape.projection?.coverable && !shape.projection.includesId) {
    const extra = shape.projection.fields.filter((f) => !esr.some((k) => k.field === f)).map(up);
    if (extra.length > 0) {
      add([...esr, ...extra], 'covered', 'ESR, covered');
      add([...ers, ...extra], 'covered', 'ERS, covered');
    }
  }

  // Prefixes of ESR and ERS: a shorter index when the later keys filter little.
  for (const base of [esr, ers]) for (let n = base.length - 1; n >= 1; n--) add(base.slice(0, n), 'prefix', `first ${n} key${n > 1 ? 's' : ''} of ${base === esr ? 'ESR' : 'ERS'}`);

  // Each predicate or sort field alone, most selective first when counts are known.
  const matching = opts.stats?.matching ?? {};
  const single = [...preds].sort((a, b) => (matching[a.path] ?? Infinity) - (matching[b.path] ?? Infinity));
  for (const p of single) add([sortPaths.has(p.path) ? sortKeys.find((k) => k.field === p.path)! : up(p.path)], 'single', `${p.path} alone`);
  if (sortKeys.length > 0) add(sortKeys, 'single', 'the sort alone');

  // Every ordering of the predicate fields, with the sort in front and behind.
  const fields = [...E, ...I, ...R].slice(0, MAX_PERMUTED_FIELDS);
  for (const order of permutations(fields)) {
    add([...order, ...sortKeys], 'ordering', 'another field order, sort last');
    if (sortKeys.length > 0) add([...sortKeys, ...order], 'ordering', 'sort first, then the fields');
  }
  return { candidates: out, generated, cap };
}

/** Indexes measured together as one candidate of a $or tournament: one index per branch, or one alone. */
export interface MongoCandidateGroup {
  members: MongoCandidate[];
  origin: MongoCandidateOrigin;
  label: string;
  ruleRank?: number;
  rule?: string;
}

/** Candidate groups a $or tournament measures when the caller does not say. */
export const DEFAULT_OR_GROUP_CAP = 12;
/** Candidates read per branch: the groups take the first, the second... of every branch together. */
const PER_BRANCH = 5;

/**
 * The candidates for a query with a top-level $or over different fields. A hint names one index for the
 * whole query, so a branch's index cannot be measured alone: each candidate is a group of indexes built
 * together and the query run without a hint, as the user would run it once they exist. The groups: the
 * rules' one index per branch, then the first, second... candidate of every branch together (each
 * branch read as the conditions outside the $or plus its own), then single indexes on the conditions
 * outside the $or, which serve every branch at once. Deduplicated, capped; a group of indexes that all
 * exist is today's and is left out. Pure: nothing is measured here.
 */
export function mongoOrCandidates(shape: MongoShape, opts: { advice?: Advice; existing?: ExistingMongoIndex[]; stats?: MongoStats; cap?: number } = {}): { groups: MongoCandidateGroup[]; generated: number; cap: number } {
  const cap = Math.max(1, Math.floor(opts.cap ?? DEFAULT_OR_GROUP_CAP));
  const groups: MongoCandidateGroup[] = [];
  const seen = new Set<string>();
  let generated = 0;
  const base = { ...(opts.existing ? { existing: opts.existing } : {}), ...(opts.stats ? { stats: opts.stats } : {}) };
  const add = (members: MongoCandidate[], origin: MongoCandidateOrigin, label: string, extra: Partial<MongoCandidateGroup> = {}): void => {
    const unique = members.filter((m, i) => members.findIndex((x) => canonicalKey(x.keys) === canonicalKey(m.keys)) === i);
    if (unique.length === 0 || unique.every((m) => m.existing !== undefined)) return;
    const key = unique.map((m) => canonicalKey(m.keys)).sort().join(' + ');
    if (seen.has(key)) return;
    seen.add(key);
    generated++;
    if (groups.length < cap) groups.push({ members: unique, origin, label, ...extra });
  };
  const rules = (opts.advice?.suggestions ?? []).filter((s) => s.action === 'create' && s.rule === 'or-branch' && s.index?.engine === 'mongodb');
  if (rules.length > 0) {
    const members = rules.map((s) => {
      const keys = s.index!.engine === 'mongodb' ? s.index!.keys : [];
      const m: MongoCandidate = { keys, keyPattern: pattern(keys), origin: 'rule', label: `rule ${s.rule}`, ruleRank: s.rank, rule: s.rule };
      const ex = (opts.existing ?? []).find((ix) => { const k = existingKeys(ix); return k !== undefined && canonicalKey(k) === canonicalKey(keys); });
      if (ex) m.existing = ex.name;
      return m;
    });
    add(members, 'rule', 'the rules\' index per branch', { ruleRank: Math.min(...rules.map((s) => s.rank)), rule: 'or-branch' });
  }
  const perBranch = shape.orBranches.map((branch) => mongoCandidates({ ...shape, predicates: [...shape.predicates, ...branch], orBranches: [] }, { ...base, cap: PER_BRANCH }).candidates);
  if (perBranch.every((c) => c.length > 0)) {
    const rounds = Math.max(...perBranch.map((c) => c.length));
    for (let i = 0; i < rounds; i++) {
      const members = perBranch.map((c) => c[Math.min(i, c.length - 1)]!);
      add(members, members[0]!.origin, `one index per branch: ${[...new Set(members.map((m) => m.label))].join(', ')}`);
    }
  }
  if (shape.predicates.some((p) => p.kind !== 'unindexable')) {
    for (const c of mongoCandidates({ ...shape, orBranches: [] }, { ...base, cap: 4 }).candidates) add([c], c.origin, `${c.label} on the conditions outside the $or`);
  }
  return { groups, generated, cap };
}
