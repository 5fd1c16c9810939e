// Replaces literal values by placeholders before a plan leaves the machine in an export: index bounds,
// filters, conditions and query text can hold customer data, while the shape of the plan (stages,
// fields, operators, figures) is what a colleague needs to read it. Works on a copy; never mutates.

import type { Plan, PlanNode } from '../src/core/view';

export const PLACEHOLDER = '?';

/**
 * SQL text with string and numeric literals replaced: `(amount > 100) AND (name = 'x'::text)` becomes
 * `(amount > ?) AND (name = ?::text)`. Identifiers in double quotes and $n parameters stay.
 */
export function redactSql(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === "'" || ((c === 'E' || c === 'e') && s[i + 1] === "'" && !/[\w$]/.test(s[i - 1] ?? ''))) {
      // A string literal, with '' as an escaped quote; an E'' literal may also escape with a backslash.
      const escapes = c !== "'";
      let j = i + (escapes ? 2 : 1);
      while (j < s.length) {
        if (escapes && s[j] === '\\') j += 2;
        else if (s[j] === "'" && s[j + 1] === "'") j += 2;
        else if (s[j] === "'") break;
        else j++;
      }
      out += PLACEHOLDER;
      i = j + 1;
      continue;
    }
    if (c === '"') {
      const j = s.indexOf('"', i + 1);
      const end = j < 0 ? s.length : j + 1;
      out += s.slice(i, end);
      i = end;
      continue;
    }
    if (/[0-9]/.test(c) && !/[\w$.]/.test(s[i - 1] ?? '')) {
      const m = /^\d+(\.\d+)?(e[+-]?\d+)?/i.exec(s.slice(i));
      const lit = m ? m[0] : c;
      if (!/[\w]/.test(s[i + lit.length] ?? '')) {
        out += PLACEHOLDER;
        i += lit.length;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

const OPEN_KEEP = new Set(['MinKey', 'MaxKey', 'inf', '-inf', 'Infinity', '-Infinity', 'minKey', 'maxKey']);

/** Splits at top-level commas, respecting quotes and brackets. */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/**
 * A MongoDB index bound interval with its end points replaced unless they are unbounded:
 * `[42, 42]` -> `[?, ?]`, `[MinKey, MaxKey]` stays, `("a", inf.0]` -> `(?, inf.0]`.
 */
export function redactInterval(interval: string): string {
  const t = interval.trim();
  const open = t[0];
  const close = t[t.length - 1];
  if ((open !== '[' && open !== '(') || (close !== ']' && close !== ')')) return PLACEHOLDER;
  const ends = splitTopLevel(t.slice(1, -1)).map((e) => {
    const v = e.trim();
    return OPEN_KEEP.has(v) || /^-?inf(\.0)?$/i.test(v) ? v : PLACEHOLDER;
  });
  return `${open}${ends.join(', ')}${close}`;
}

/** Keys whose values are structure (operators' options, sort orders), not data. */
const KEEP_VALUE_KEYS = new Set(['$exists', '$type', '$options', '$meta', '$size']);

/**
 * A MongoDB filter or query value with every literal replaced by a placeholder: field names, operators
 * and `$field` references stay, so `{age: {$gt: 30}, name: "x"}` becomes `{age: {$gt: "?"}, name: "?"}`.
 */
export function redactMongoValue(v: unknown, key?: string): unknown {
  if (key !== undefined && KEEP_VALUE_KEYS.has(key)) return v;
  if (Array.isArray(v)) return v.map((x) => redactMongoValue(x));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = redactMongoValue(x, k);
    return out;
  }
  if (typeof v === 'string' && v.startsWith('$') && /^\$[A-Za-z_][\w.]*$/.test(v)) return v;
  return PLACEHOLDER;
}

/** Pipeline stages whose arguments are shape (field paths, sort orders, amounts), kept verbatim. */
const SHAPE_STAGES = new Set(['$sort', '$project', '$unset', '$limit', '$skip', '$unwind', '$count', '$group', '$sortByCount', '$replaceRoot', '$replaceWith', '$out', '$merge', '$lookup']);

/** One stage's argument: shape stages are kept, the others have their literals replaced. */
function redactStage(name: string, arg: unknown): unknown {
  if (name === '$lookup' && arg && typeof arg === 'object' && !Array.isArray(arg)) {
    const l = { ...(arg as Record<string, unknown>) };
    if ('pipeline' in l) l.pipeline = redactPipeline(l.pipeline);
    return l;
  }
  return SHAPE_STAGES.has(name) ? arg : redactMongoValue(arg);
}

function redactPipeline(p: unknown): unknown {
  if (!Array.isArray(p)) return redactMongoValue(p);
  return p.map((stage) => {
    if (stage === null || typeof stage !== 'object' || Array.isArray(stage)) return redactMongoValue(stage);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(stage as Record<string, unknown>)) out[k] = redactStage(k, x);
    return out;
  });
}

/** Command keys that carry data; the rest (collection, limit, sort, projection, hint) are kept. */
const COMMAND_DATA_KEYS = new Set(['filter', 'query', 'q', 'update', 'u', 'updates', 'deletes', 'let', 'collation', 'documents', 'min', 'max']);

function redactCommand(cmd: unknown): unknown {
  if (cmd === null || typeof cmd !== 'object' || Array.isArray(cmd)) return cmd;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(cmd as Record<string, unknown>)) {
    if (k === 'pipeline') out[k] = redactPipeline(x);
    else if (COMMAND_DATA_KEYS.has(k)) out[k] = redactMongoValue(x);
    else out[k] = x;
  }
  return out;
}

/** PostgreSQL keys whose text is an expression that may contain literals. */
const PG_EXPRESSION_KEY = /(Cond|Filter|Key|Output|Condition|Call|Values|Expression|Params)$/;

/** Mongo raw keys that hold literal values. */
const MONGO_DATA_KEYS = new Set(['filter', 'indexBounds', 'parsedQuery', 'query', 'queryFilter', 'matchExpression', 'boundsVerbose']);

function redactBounds(b: unknown): unknown {
  if (b === null || typeof b !== 'object' || Array.isArray(b)) return typeof b === 'string' ? PLACEHOLDER : b;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(b as Record<string, unknown>)) {
    out[k] = Array.isArray(x) ? x.map((i) => (typeof i === 'string' ? redactInterval(i) : PLACEHOLDER)) : PLACEHOLDER;
  }
  return out;
}

function redactNode(node: PlanNode, engine: Plan['engine']): void {
  const d = node.details;
  if (engine === 'mongodb') {
    if (d.indexBounds) {
      const b: Record<string, string[]> = {};
      for (const [k, list] of Object.entries(d.indexBounds)) b[k] = list.map(redactInterval);
      d.indexBounds = b;
    }
    if (d.filter !== undefined) d.filter = redactMongoValue(d.filter);
    for (const k of Object.keys(node.raw)) {
      if (k === 'indexBounds') node.raw[k] = redactBounds(node.raw[k]);
      else if (MONGO_DATA_KEYS.has(k)) node.raw[k] = redactMongoValue(node.raw[k]);
      else if (k === 'slotBasedPlan') node.raw[k] = PLACEHOLDER;
      else if (k === 'pipeline') node.raw[k] = redactPipeline(node.raw[k]);
      else if (k.startsWith('$') && k !== '$cursor') node.raw[k] = redactStage(k, node.raw[k]);
    }
  } else {
    if (d.conditions) {
      const c: Record<string, string> = {};
      for (const [k, x] of Object.entries(d.conditions)) c[k] = redactSql(x);
      d.conditions = c;
    }
    for (const key of ['sortKey', 'groupKey', 'presortedKey', 'output'] as const) {
      const list = d[key];
      if (list) d[key] = list.map(redactSql);
    }
    for (const k of Object.keys(node.raw)) {
      if (PG_EXPRESSION_KEY.test(k) || k === 'Group Keys' || k === 'Sort Keys' || k === 'Grouping Sets') node.raw[k] = redactPgDeep(node.raw[k]);
    }
  }
  // Labels are built from stage names, index names and key patterns, never from values; they stay.
}

function redactPgDeep(v: unknown): unknown {
  if (typeof v === 'string') return redactSql(v);
  if (Array.isArray(v)) return v.map(redactPgDeep);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = redactPgDeep(x);
    return out;
  }
  return v;
}

function eachNode(root: PlanNode, visit: (n: PlanNode) => void): void {
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    visit(n);
    for (const c of n.children) stack.push(c);
  }
}

/** A deep copy of the plan with literal values replaced by placeholders. */
export function redactPlan(plan: Plan): Plan {
  const copy = structuredClone(plan);
  const all: PlanNode[] = [];
  eachNode(copy.root, (n) => all.push(n));
  for (const r of copy.rejectedPlans) eachNode(r.root, (n) => all.push(n));
  for (const n of all) redactNode(n, copy.engine);
  if (copy.mongo) {
    if (copy.mongo.parsedQuery !== undefined) copy.mongo.parsedQuery = redactMongoValue(copy.mongo.parsedQuery);
    if (copy.mongo.command !== undefined) copy.mongo.command = redactCommand(copy.mongo.command);
    if (copy.mongo.slotBasedPlan !== undefined) copy.mongo.slotBasedPlan = PLACEHOLDER;
  }
  if (copy.postgres) {
    if (copy.postgres.queryText !== undefined) copy.postgres.queryText = redactSql(copy.postgres.queryText);
  }
  return copy;
}
