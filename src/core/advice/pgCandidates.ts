// The PostgreSQL candidates a tournament measures for one table of a statement: B-tree orders of the
// columns the statement filters and sorts on (equality, IN, ranges, ORDER BY with its DESC and NULLS),
// ESR and ERS, prefixes, variants leaving out each IN or range column, INCLUDE variants for an
// index-only scan, a partial index on an equality, expression keys as written, GIN where the operators
// call for it (jsonb_path_ops for containment alone), the indexes that exist and their extensions, and
// the rules' own suggestions first. Deduplicated (an index and its full reverse, DESC and NULLS flipped
// together, serve the same scans) and capped.

import { permutations } from './mongoCandidates';
import { createIndexSql } from './pgAdvisor';
import type { PgOrder, PgPredicate, PgShape, PgTable } from './pgShape';
import type { Advice, ExistingPgIndex, PgIndexKey, PgIndexSpec, PgTableStats } from './types';

export interface PgCandidate {
  spec: PgIndexSpec;
  /** CREATE INDEX without CONCURRENTLY (a trial runs it inside a transaction). */
  ddl: string;
  origin: string;
  label: string;
  ruleRank?: number;
  rule?: string;
  existing?: string;
}

export interface PgCandidateSet {
  table: PgTable;
  candidates: PgCandidate[];
  generated: number;
  cap: number;
}

export const DEFAULT_PG_CANDIDATE_CAP = 24;
/** Distinct values a column may have for a partial index on one of them to be a candidate. */
const PARTIAL_MAX_DISTINCT = 32;
const MAX_PERMUTED = 4;

/** One key both ways a scan reads it: the full reverse (DESC and NULLS flipped together) is the same index. */
export function canonicalPgKey(spec: PgIndexSpec): string {
  const flip = spec.keys[0]?.desc === true;
  const keys = spec.keys.map((k) => {
    const desc = (k.desc === true) !== flip;
    const nullsFirst = (k.nullsFirst ?? k.desc === true) !== flip;
    return `${k.expression ? 'expr:' : ''}${k.column}:${desc ? 'd' : 'a'}:${nullsFirst ? 'nf' : 'nl'}`;
  });
  return `${spec.method}|${spec.opclass ?? ''}|${keys.join(',')}|${(spec.include ?? []).join(',')}|${spec.predicate ?? ''}`;
}


function keyOfPredicate(p: PgPredicate): PgIndexKey {
  return p.expression ? { column: p.column, expression: true } : { column: p.column };
}

function keyOfOrder(o: PgOrder): PgIndexKey {
  const k: PgIndexKey = { column: o.column };
  if (o.expression) k.expression = true;
  if (o.desc) k.desc = true;
  // Only a NULLS that differs from the direction's default is written.
  if (o.nullsFirst !== o.desc) k.nullsFirst = o.nullsFirst;
  return k;
}

function existingSpec(ix: ExistingPgIndex): PgIndexSpec | undefined {
  if ((ix.method ?? 'btree') !== 'btree' || ix.predicate || ix.invalid) return undefined;
  const keys: PgIndexKey[] = [];
  for (const c of ix.columns) {
    const k: PgIndexKey = c.column !== undefined ? { column: c.column } : { column: c.expression ?? '', expression: true };
    if (c.desc) k.desc = true;
    if (c.nullsFirst !== undefined) k.nullsFirst = c.nullsFirst;
    keys.push(k);
  }
  const spec: PgIndexSpec = { engine: 'postgres', table: ix.table, method: 'btree', keys };
  if (ix.schema !== undefined) spec.schema = ix.schema;
  if (ix.include?.length) spec.include = ix.include;
  return spec;
}

/**
 * Collects candidates once each (an index and its full reverse are one, keys deduplicated, INCLUDE
 * without the keys), counting every distinct one generated and keeping the first `cap`.
 */
function collector(cap: number, existingName: (canonical: string) => string | undefined) {
  const out: PgCandidate[] = [];
  const seen = new Set<string>();
  let generated = 0;
  const normalized = (spec: PgIndexSpec): PgIndexSpec | undefined => {
    const keys: PgIndexKey[] = [];
    for (const k of spec.keys) if (!keys.some((u) => u.column === k.column)) keys.push(k);
    if (keys.length === 0 || keys.length > 32) return undefined;
    const s: PgIndexSpec = { ...spec, keys };
    if (s.include) {
      s.include = s.include.filter((c) => !keys.some((k) => k.column === c));
      if (s.include.length === 0) delete s.include;
    }
    return s;
  };
  return {
    out,
    generated: (): number => generated,
    /** Marks an index as seen without making it a candidate. */
    skip(spec: PgIndexSpec): void {
      const s = normalized(spec);
      if (s) seen.add(`${s.table}|${canonicalPgKey(s)}`);
    },
    add(spec: PgIndexSpec, origin: string, label: string, extra: Partial<PgCandidate> = {}): void {
      const s = normalized(spec);
      if (!s) return;
      const c = canonicalPgKey(s);
      if (seen.has(`${s.table}|${c}`)) return;
      seen.add(`${s.table}|${c}`);
      generated++;
      if (out.length >= cap) return;
      const cand: PgCandidate = { spec: s, ddl: createIndexSql(s).replace(/\bCONCURRENTLY\s+/i, '').replace(/;\s*$/, ''), origin, label, ...extra };
      const ex = existingName(c);
      if (ex !== undefined) cand.existing = ex;
      out.push(cand);
    },
  };
}

/**
 * The candidates for the one table of a single-table statement (a statement over several tables gives
 * none: sampling one side of a join changes what the join does). Pure: nothing is measured here.
 */
export function pgCandidates(shape: PgShape, opts: { advice?: Advice; existing?: ExistingPgIndex[]; cap?: number; stats?: PgTableStats } = {}): PgCandidateSet | undefined {
  if (shape.tables.length !== 1) return undefined;
  const table = shape.tables[0]!;
  const cap = Math.max(1, Math.floor(opts.cap ?? DEFAULT_PG_CANDIDATE_CAP));
  const preds = shape.predicates.filter((p) => p.table === table.key);
  const eq = preds.filter((p) => p.kind === 'equality');
  const ins = preds.filter((p) => p.kind === 'in');
  const ranges = preds.filter((p) => p.kind === 'range');
  const gins = preds.filter((p) => p.kind === 'gin');
  const order = shape.orderBy.filter((o) => o.table === undefined || o.table === table.key);
  const sortKeys = order.map(keyOfOrder);
  const sortCols = new Set(order.map((o) => o.column));
  const keysOf = (ps: readonly PgPredicate[]): PgIndexKey[] => ps.filter((p) => !sortCols.has(p.column)).map(keyOfPredicate);
  const base = (keys: PgIndexKey[], extra: Partial<PgIndexSpec> = {}): PgIndexSpec => {
    const spec: PgIndexSpec = { engine: 'postgres', table: table.name, method: 'btree', keys, ...extra };
    if (table.schema !== undefined) spec.schema = table.schema;
    return spec;
  };

  const existingByKey = new Map<string, string>();
  const parsedExisting = (opts.existing ?? []).filter((ix) => ix.table === table.name).map((ix) => ({ ix, spec: existingSpec(ix) })).filter((e): e is { ix: ExistingPgIndex; spec: PgIndexSpec } => e.spec !== undefined);
  for (const { ix, spec } of parsedExisting) existingByKey.set(canonicalPgKey(spec), ix.name);
  const collect = collector(cap, (c) => existingByKey.get(c));
  const { out, add } = collect;

  for (const s of opts.advice?.suggestions ?? []) {
    if (s.action !== 'create' || s.index?.engine !== 'postgres' || !s.servesQueryAsWritten || s.index.table !== table.name) continue;
    add(s.index, 'rule', `rule ${s.rule}`, { ruleRank: s.rank, rule: s.rule });
  }
  const touched = new Set([...preds.map((p) => p.column), ...sortCols]);
  // An index that exists is measured when any of its keys is one the statement uses, not only the first:
  // PostgreSQL 18 skips through a leading column (skip scan), and only the measurement tells whether it pays.
  for (const { ix, spec } of parsedExisting) if (spec.keys.some((k) => touched.has(k.column))) add(spec, 'existing', `existing ${ix.name}`);

  const E = keysOf(eq);
  const I = keysOf(ins);
  const R = keysOf(ranges);
  const esr = [...E, ...I, ...sortKeys, ...R];
  const ers = [...E, ...I, ...R, ...sortKeys];
  for (const { ix, spec } of parsedExisting) {
    if (!touched.has(spec.keys[0]!.column) || ix.unique || ix.primary) continue;
    const missing = esr.filter((k) => !spec.keys.some((x) => x.column === k.column));
    if (missing.length > 0) add(base([...spec.keys, ...missing]), 'extension', `extends ${ix.name}`);
  }
  add(base(esr), 'esr', 'ESR');
  add(base(ers), 'ers', 'ERS');
  add(base([...E, ...sortKeys, ...I, ...R]), 'esr', 'ESR with IN after the ORDER BY');
  add(base([...E, ...I, ...R]), 'er', 'equality and range, no sort');
  add(base([...E, ...I, ...sortKeys]), 'es', 'equality and ORDER BY, no range');
  for (const p of [...ins, ...ranges]) {
    if (sortCols.has(p.column)) continue;
    add(base(esr.filter((k) => k.column !== p.column)), 'without', `ESR without ${p.column} (${p.kind === 'in' ? 'IN' : 'range'})`);
    add(base(ers.filter((k) => k.column !== p.column)), 'without', `ERS without ${p.column} (${p.kind === 'in' ? 'IN' : 'range'})`);
  }

  // INCLUDE the other columns the statement reads, for an index-only scan.
  const read = (shape.referenced[table.key] ?? []).filter((c) => !esr.some((k) => k.column === c));
  if (!shape.selectAll.includes(table.key) && read.length > 0 && read.length <= 4) {
    add(base(esr, { include: read }), 'covered', 'ESR INCLUDE the columns read');
    add(base(ers, { include: read }), 'covered', 'ERS INCLUDE the columns read');
  }
  // A partial index on one equality: the rest of the keys for the rows it keeps. Only on a column of few
  // values (a status, a flag, IS NULL): on an id or a date the literal is one of many the code will send,
  // and an index for that one value serves no other call.
  for (const p of eq) {
    if (p.expression || !/^[^;]{1,200}$/.test(p.text)) continue;
    const distinct = opts.stats?.distinct?.[p.column];
    if (!(p.detail === 'IS NULL' || p.detail === 'boolean column' || p.detail.startsWith('IS_') || (distinct !== undefined && distinct <= PARTIAL_MAX_DISTINCT))) continue;
    const rest = esr.filter((k) => k.column !== p.column);
    if (rest.length > 0) add(base(rest, { predicate: p.text }), 'partial', `partial WHERE ${p.text}`);
  }
  // GIN for containment and existence operators; jsonb_path_ops serves @> alone, smaller and faster.
  for (const p of gins) {
    if (p.expression) continue;
    add(base([{ column: p.column }], { method: 'gin' }), 'gin', `GIN on ${p.column}`);
    if (p.operator === '@>' && gins.filter((g) => g.column === p.column).every((g) => g.operator === '@>')) add(base([{ column: p.column }], { method: 'gin', opclass: 'jsonb_path_ops' }), 'gin', `GIN jsonb_path_ops on ${p.column}`);
  }
  // GiST for the same operators on range and geometric types (GIN has no class for them, GiST none for
  // jsonb: the one that cannot be built on the column's type fails on the copy and drops out), and a GIN
  // over the equality columns and the GIN column together, which needs the btree_gin extension.
  for (const p of gins) {
    if (p.expression) continue;
    if (p.operator === '&&' || p.operator === '@>' || p.operator === '<@') add(base([{ column: p.column }], { method: 'gist' }), 'gist', `GiST on ${p.column}`);
    const scalars = E.filter((k) => !k.expression && k.column !== p.column).map((k) => ({ column: k.column }));
    if (scalars.length > 0) add(base([...scalars, { column: p.column }], { method: 'gin' }), 'btree_gin', `GIN on ${[...scalars.map((k) => k.column), p.column].join(', ')} (btree_gin)`);
  }
  // Pattern matches with a leading wildcard, ILIKE and regular expressions: a trigram GIN (pg_trgm).
  for (const p of preds) {
    if (p.trigram && !p.expression) add(base([{ column: p.column }], { method: 'gin', opclass: 'gin_trgm_ops' }), 'trigram', `GIN gin_trgm_ops on ${p.column} (pg_trgm)`);
  }
  for (let n = esr.length - 1; n >= 1; n--) add(base(esr.slice(0, n)), 'prefix', `first ${n} column${n > 1 ? 's' : ''} of ESR`);
  for (const p of preds) if (p.kind !== 'gin' && p.kind !== 'unindexable') add(base([sortCols.has(p.column) ? sortKeys.find((k) => k.column === p.column)! : keyOfPredicate(p)]), 'single', `${p.column} alone`);
  if (sortKeys.length > 0) add(base(sortKeys), 'single', 'the ORDER BY alone');
  for (const perm of permutations([...E, ...I, ...R].slice(0, MAX_PERMUTED))) {
    add(base([...perm, ...sortKeys]), 'ordering', 'another column order, ORDER BY last');
    if (sortKeys.length > 0) add(base([...sortKeys, ...perm]), 'ordering', 'ORDER BY first, then the columns');
  }
  return { table, candidates: out, generated: collect.generated(), cap };
}

/**
 * The extensions an index needs beyond the server's own operator classes: pg_trgm for a trigram class,
 * btree_gin for a GIN with a column beside its jsonb, array or text column (B-tree classes for GIN).
 */
export function pgExtensionsFor(spec: PgIndexSpec): string[] {
  if (spec.method !== 'gin') return [];
  const out: string[] = [];
  if (spec.opclass === 'gin_trgm_ops') out.push('pg_trgm');
  if (spec.keys.length > 1) out.push('btree_gin');
  return out;
}

/** Candidates a join measures at most, beside today's indexes: each costs a build on a whole copy. */
export const DEFAULT_PG_JOIN_CANDIDATE_CAP = 16;

/**
 * The candidates for a statement over several tables, each an index added to today's: for every table,
 * its join columns first (the inner side of a nested loop looks rows up by them), after its equalities,
 * or left out (the side that drives the join, or a hash join, wants its own filter only), with its ORDER
 * BY where it has one. The rules' suggestions go first so a cap never drops them; an index that exists is
 * left out (today's plan already has it). Pure: nothing is measured here.
 */
export function pgJoinCandidates(shape: PgShape, opts: { advice?: Advice; existing?: ExistingPgIndex[]; cap?: number } = {}): { candidates: PgCandidate[]; generated: number; cap: number } {
  const cap = Math.max(1, Math.floor(opts.cap ?? DEFAULT_PG_JOIN_CANDIDATE_CAP));
  const collect = collector(cap, () => undefined);
  const { out, add } = collect;
  // An index that exists is today's already: measuring it again adds nothing.
  for (const ix of opts.existing ?? []) {
    const spec = existingSpec(ix);
    if (spec) collect.skip({ ...spec, table: ix.table });
  }
  const names = new Set(shape.tables.map((t) => t.name));
  for (const s of opts.advice?.suggestions ?? []) {
    if (s.action !== 'create' || s.index?.engine !== 'postgres' || !s.servesQueryAsWritten || !names.has(s.index.table)) continue;
    add(s.index, 'rule', `rule ${s.rule}`, { ruleRank: s.rank, rule: s.rule });
  }
  // Round by round across the tables, so a cap keeps the most likely shapes of every table.
  const rounds: (() => void)[][] = [];
  for (const table of shape.tables) {
    const preds = shape.predicates.filter((p) => p.table === table.key && !p.expression);
    const keyOf = (p: PgPredicate): PgIndexKey => ({ column: p.column });
    const order = shape.orderBy.filter((o) => o.table === table.key && !o.expression).map(keyOfOrder);
    const E = preds.filter((p) => p.kind === 'equality').map(keyOf);
    const I = preds.filter((p) => p.kind === 'in').map(keyOf);
    const R = preds.filter((p) => p.kind === 'range').map(keyOf);
    const J = [...new Set(shape.joins.filter((j) => j.table === table.key).map((j) => j.column))].map((column) => ({ column }));
    const base = (keys: PgIndexKey[]): PgIndexSpec => ({ engine: 'postgres', table: table.name, method: 'btree', keys, ...(table.schema !== undefined ? { schema: table.schema } : {}) });
    const mine: (() => void)[] = [
      () => add(base([...J, ...E, ...I, ...order, ...R]), 'join', `${table.name}: join columns, then its filters`),
      () => add(base([...E, ...J, ...I, ...R]), 'join', `${table.name}: equalities, then join columns`),
      () => add(base([...E, ...I, ...order, ...R]), 'esr', `${table.name}: its own filters (ESR)`),
      () => add(base(J), 'join', `${table.name}: join columns alone`),
      () => add(base([...E, ...I, ...R, ...J]), 'join', `${table.name}: its filters, then join columns`),
      () => add(base([...J, ...E]), 'join', `${table.name}: join columns and equalities`),
      () => add(base([...E, ...J]), 'join', `${table.name}: equalities and join columns`),
      () => add(base(order), 'single', `${table.name}: the ORDER BY alone`),
      () => add(base([...E, ...order]), 'es', `${table.name}: equalities and the ORDER BY`),
      () => add(base([...E, ...I, ...R]), 'er', `${table.name}: equality and range, no sort`),
    ];
    mine.forEach((f, i) => (rounds[i] ??= []).push(f));
  }
  for (const round of rounds) for (const f of round) f();
  return { candidates: out, generated: collect.generated(), cap };
}
