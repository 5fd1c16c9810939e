// Candidate indexes for a generated case, enumerated from the fields the query references and nothing
// else: every ordering of every subset of them (up to four keys), sort keys in the query's directions,
// the rest ascending, plus GIN for jsonb containment. This is deliberately independent of the advisor's
// own candidate generator, so that the oracle is not the advisor grading itself.

import type { GeneratedCase, PgTableShape } from './generate';

const MAX_FIELDS = 4;

/** Orderings of every non-empty subset of `xs` (all k-permutations for k = 1..xs.length). */
export function orderings<T>(xs: readonly T[]): T[][] {
  const out: T[][] = [];
  const walk = (prefix: T[], rest: T[]): void => {
    for (let i = 0; i < rest.length; i++) {
      const next = [...prefix, rest[i]!];
      out.push(next);
      walk(next, [...rest.slice(0, i), ...rest.slice(i + 1)]);
    }
  };
  walk([], [...xs]);
  return out;
}

/** Sort fields first in the cut, so a query with many fields keeps the ones that decide the order. */
function capped(fields: string[], sortFields: string[]): string[] {
  const all = [...new Set([...sortFields, ...fields])];
  return all.length <= MAX_FIELDS ? [...new Set([...fields, ...sortFields])] : all.slice(0, MAX_FIELDS);
}

/** A MongoDB key pattern as a stable string; a mirror image (all directions inverted) gives the same key. */
export function mongoKey(pattern: Record<string, number>): string {
  const entries = Object.entries(pattern);
  const flip = entries.length > 0 && entries[0]![1] < 0 ? -1 : 1;
  return JSON.stringify(Object.fromEntries(entries.map(([k, v]) => [k, Math.sign(v) * flip])));
}

export const COLLSCAN = '$natural';

/** Key strings of the MongoDB candidates (mongoKey form), with the collection scan first. */
export function mongoCandidates(c: GeneratedCase): string[] {
  const shape = c.mongo!;
  const sortDir = new Map(shape.sort);
  const fields = capped(shape.fields, shape.sort.map(([f]) => f));
  const keys = orderings(fields).map((o) => mongoKey(Object.fromEntries(o.map((f) => [f, sortDir.get(f) ?? 1]))));
  return [COLLSCAN, ...new Set(keys)];
}

/** Lower-case words a name must keep its quotes for (the ones a schema is likely to use as a name). */
const RESERVED = new Set(['order', 'group', 'table', 'select', 'from', 'where', 'limit', 'offset', 'end', 'all', 'desc', 'asc', 'default', 'check', 'primary', 'references', 'column', 'constraint', 'to', 'and', 'or', 'not', 'null', 'true', 'false', 'case', 'when', 'then', 'else', 'user', 'current_user', 'session_user', 'analyse', 'analyze', 'using', 'on', 'in', 'is', 'as', 'by', 'distinct', 'having', 'into', 'union', 'unique', 'window', 'with']);

/** A CREATE INDEX statement reduced to what makes two indexes the same: table, method, keys, INCLUDE. */
export function pgKey(ddl: string): string {
  // Lower case outside string literals and quoted identifiers only, so a partial index's WHERE keeps its
  // values and a table or column the schema spells in capitals ("Link", "createdById") keeps its name; a
  // quoted name that needs no quotes is written without them, as the other spelling of the same name.
  let s = ddl.replace(/;\s*$/, '').replace(/\s+/g, ' ').trim().split(/('(?:[^']|'')*'|"(?:[^"]|"")*")/).map((part, i) => {
    if (i % 2 === 0) return part.toLowerCase();
    return /^"[a-z_][a-z0-9_]*"$/.test(part) && !RESERVED.has(part.slice(1, -1)) ? part.slice(1, -1) : part;
  }).join('');
  s = s.replace(/^create (unique )?index (concurrently )?(if not exists )?("?[\w$]+"? )?on (only )?/, '');
  s = s.replace(/\bpublic\./g, '').replace(/ using btree/, '').replace(/ asc\b/g, '').replace(/ desc nulls first/g, ' desc').replace(/ nulls last/g, '');
  return s.replace(/\s*\(\s*/g, '(').replace(/\s*\)/g, ')').replace(/\s*,\s*/g, ', ');
}

/** The primary keys the tables already have: a candidate equal to one adds nothing. */
const PRIMARY: Record<string, string> = { customers: 'customers(id)', orders: 'orders(id)', order_items: 'order_items(order_id, line)' };

export const NO_INDEX = 'none';

/** CREATE INDEX statements of the PostgreSQL candidates, with "none" (primary keys only) first. */
export function pgCandidates(c: GeneratedCase): string[] {
  const out = new Set<string>();
  for (const t of c.pg! as PgTableShape[]) {
    const dir = new Map(t.sort);
    const cols = capped(t.columns, t.sort.map(([col]) => col));
    for (const o of orderings(cols)) {
      const ddl = `CREATE INDEX ON ${t.table} (${o.map((col) => `${col}${dir.get(col) === 'desc' ? ' DESC' : ''}`).join(', ')})`;
      if (pgKey(ddl) !== PRIMARY[t.table]) out.add(ddl);
    }
    for (const j of t.jsonb) {
      out.add(`CREATE INDEX ON ${t.table} USING gin (${j})`);
      out.add(`CREATE INDEX ON ${t.table} USING gin (${j} jsonb_path_ops)`);
    }
  }
  return [NO_INDEX, ...out];
}
