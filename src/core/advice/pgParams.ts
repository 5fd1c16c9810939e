// Values for the $n parameters of a statement the tournament measures. Code sends SQL with parameters
// ($1, $2) and binds them at run time, so the statement cannot run as written; it is measured with
// values chosen from the statistics of the column each parameter is compared to (pg_stats: the most
// common values, the histogram), so the sample is asked what the code's calls ask. A parameter compared
// to no known column (inside a function, LIKE, a select list only) has no value to choose, and the
// statement is then not measured. Pure: the adapter reads the statistics and hands them in.

import { sqlLiteral, sqlParams } from '../sql/placeholders';
import type { PgShape } from './pgShape';

/** How a parameter is used: compared for equality, one of an IN list, an array for = ANY, a bound, LIMIT/OFFSET. */
export type PgParamRole = 'equal' | 'item' | 'array' | 'low' | 'high' | 'between-low' | 'between-high' | 'limit' | 'offset';

export interface PgParamSlot {
  n: number;
  role: PgParamRole;
  /** The table (name and schema as written) and column compared to the parameter; absent for LIMIT/OFFSET. */
  table?: string;
  schema?: string;
  column?: string;
  /** An item of an IN list: its place among the list's parameters, so the items get different values. */
  item?: number;
}

export interface PgParamSlots {
  slots: PgParamSlot[];
  /** Parameters with no column to take a value from, each with the text that uses it. */
  unknown: { n: number; where: string }[];
}

/** What the statistics say of one column: its type, its common values (most common first), its ordered values. */
export interface PgColumnValues {
  /** format_type() of the column. */
  type: string;
  /** pg_stats.most_common_vals as text, most common first. */
  common: string[];
  /** pg_stats.histogram_bounds as text, else the common values in order. */
  ordered: string[];
}

/** A value chosen for a parameter: the SQL literal put in its place, and how it was chosen, for the note. */
export interface PgParamValue {
  n: number;
  literal: string;
  why: string;
}

/** LIMIT and OFFSET parameters have no column: a page of 20 rows from the first, as a listing's first call asks. */
export const PARAM_LIMIT = 20;
export const PARAM_OFFSET = 0;
/** Values put in an array bound to = ANY($n). */
const ARRAY_VALUES = 3;

/**
 * Which column each $n parameter of the statement is compared to, from the shapes' predicates (a
 * parameter inside a predicate's text takes that predicate's column and role) and LIMIT/OFFSET.
 */
export function pgParamSlots(shapes: readonly PgShape[]): PgParamSlots {
  const sql = shapes[0]?.sql ?? '';
  const params = sqlParams(sql);
  const slots = new Map<number, PgParamSlot>();
  const set = (slot: PgParamSlot): void => {
    if (!slots.has(slot.n)) slots.set(slot.n, slot);
  };
  for (const shape of shapes) {
    const tableOf = new Map(shape.tables.map((t) => [t.key, t]));
    for (const p of shape.predicates) {
      const t = tableOf.get(p.table);
      if (!p.span || !t || p.expression) continue;
      const inside = params.filter((x) => x.start >= p.span!.start && x.end <= p.span!.end);
      if (inside.length === 0) continue;
      const at = { table: t.name, column: p.column, ...(t.schema !== undefined ? { schema: t.schema } : {}) };
      if (p.kind === 'equality' && (p.detail === '=' || p.detail.startsWith('IN (one') || p.detail === 'IS NOT DISTINCT FROM')) {
        for (const x of inside) set({ n: x.n, role: 'equal', ...at });
      } else if (p.kind === 'in' && p.arrayParamText !== undefined && inside.length === 1) {
        set({ n: inside[0]!.n, role: 'array', ...at });
      } else if (p.kind === 'in' && p.arrayParamText === undefined) {
        inside.forEach((x, i) => set({ n: x.n, role: 'item', item: i, ...at }));
      } else if (p.kind === 'range' && p.detail === 'BETWEEN' && inside.length === 2) {
        set({ n: inside[0]!.n, role: 'between-low', ...at });
        set({ n: inside[1]!.n, role: 'between-high', ...at });
      } else if (p.kind === 'range' && inside.length === 1 && (p.detail === '>' || p.detail === '>=')) {
        set({ n: inside[0]!.n, role: 'low', ...at });
      } else if (p.kind === 'range' && inside.length === 1 && (p.detail === '<' || p.detail === '<=')) {
        set({ n: inside[0]!.n, role: 'high', ...at });
      }
    }
    const lim = /^\$(\d+)$/.exec(shape.limitParam ?? '');
    if (lim) set({ n: Number(lim[1]), role: 'limit' });
    const off = /^\$(\d+)$/.exec(shape.offsetParam ?? '');
    if (off) set({ n: Number(off[1]), role: 'offset' });
  }
  const unknown: PgParamSlots['unknown'] = [];
  for (const x of params) {
    if (slots.has(x.n) || unknown.some((u) => u.n === x.n)) continue;
    const around = shapes.flatMap((s) => s.predicates).find((p) => p.span && x.start >= p.span.start && x.end <= p.span.end);
    unknown.push({ n: x.n, where: around?.text ?? sql.slice(Math.max(0, x.start - 30), x.end + 10).replace(/\s+/g, ' ').trim() });
  }
  return { slots: [...slots.values()].sort((a, b) => a.n - b.n), unknown: unknown.sort((a, b) => a.n - b.n) };
}

const NUMERIC = /^(smallint|integer|bigint|numeric|real|double precision|oid)\b/;

function literalOf(type: string, v: string): string {
  return NUMERIC.test(type) && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v) ? v : sqlLiteral(v);
}

/** An element of an array literal ('{...}'), quoted so commas, braces and quotes stay inside it. */
function arrayElement(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The value at a share (0..1) of the ordered values. */
function at(ordered: readonly string[], share: number): string {
  return ordered[Math.min(ordered.length - 1, Math.max(0, Math.round(share * (ordered.length - 1))))]!;
}

/**
 * The value for one parameter from its column's statistics, or undefined when they hold none. Equality:
 * a common value of middling frequency (the most common one is the worst case, not the usual call), else
 * the middle of the histogram; an IN list: that many different common values; a one-sided range: the
 * bound leaving about a tenth of the rows (the histogram's 90th or 10th percentile); BETWEEN: the middle
 * tenth. LIMIT and OFFSET: a first page of PARAM_LIMIT rows.
 */
export function pgParamValue(slot: PgParamSlot, values: PgColumnValues | undefined): PgParamValue | undefined {
  const n = slot.n;
  if (slot.role === 'limit') return { n, literal: String(PARAM_LIMIT), why: `LIMIT $${n} = ${PARAM_LIMIT}, a first page` };
  if (slot.role === 'offset') return { n, literal: String(PARAM_OFFSET), why: `OFFSET $${n} = ${PARAM_OFFSET}, the first page` };
  if (!values) return undefined;
  const col = `${slot.table}.${slot.column}`;
  const pool = values.common.length > 0 ? values.common : values.ordered;
  if (pool.length === 0) return undefined;
  const fromCommon = values.common.length > 0;
  const text = (v: string): string => literalOf(values.type, v);
  switch (slot.role) {
    case 'equal': {
      const v = at(pool, 0.5);
      return { n, literal: text(v), why: `$${n} = ${text(v)}, ${fromCommon ? 'a common value' : 'a value from the middle of the histogram'} of ${col}` };
    }
    case 'item': {
      const v = pool[(slot.item ?? 0) % pool.length]!;
      return { n, literal: text(v), why: `$${n} = ${text(v)}, ${fromCommon ? 'a common value' : 'a value from the histogram'} of ${col}` };
    }
    case 'array': {
      const vs = pool.slice(0, ARRAY_VALUES);
      const literal = sqlLiteral(`{${vs.map(arrayElement).join(',')}}`);
      return { n, literal, why: `$${n} = ${literal}, ${vs.length} ${fromCommon ? 'common values' : 'values from the histogram'} of ${col}` };
    }
    default: {
      const ordered = values.ordered.length > 0 ? values.ordered : pool;
      const share = { low: 0.9, high: 0.1, 'between-low': 0.45, 'between-high': 0.55 }[slot.role];
      const v = text(at(ordered, share));
      const kept = slot.role === 'low' ? `above it` : slot.role === 'high' ? `below it` : 'between the two';
      return { n, literal: v, why: `$${n} = ${v}, about a tenth of ${col} ${kept} by its statistics` };
    }
  }
}

/** The statement with each parameter that has a value replaced by its literal (the scanner finds them). */
export function bindPgParams(sql: string, values: readonly PgParamValue[]): string {
  const byN = new Map(values.map((v) => [v.n, v.literal]));
  let out = '';
  let last = 0;
  for (const p of sqlParams(sql)) {
    const lit = byN.get(p.n);
    if (lit === undefined) continue;
    out += `${sql.slice(last, p.start)}${lit}`;
    last = p.end;
  }
  return out + sql.slice(last);
}
