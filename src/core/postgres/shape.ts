// The vocabulary shared by the PostgreSQL readers. Text, YAML and XML outputs are first rewritten into the
// shape of `EXPLAIN (FORMAT JSON)` (same key names, same value types), so that one converter (json.ts)
// builds the model and the same plan gives the same model whatever format it was printed in.

/** One explain node or document in the JSON format's shape. */
export type Doc = Record<string, unknown>;

export function isObj(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A number from a JSON number or a numeric string (YAML, XML and text give strings). */
export function num(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/.test(v)) return Number(v);
  return undefined;
}

export function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return undefined;
}

export function bool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return undefined;
}

/**
 * A list of strings; a lone string counts as a list of one (some converters collapse lists). A list that
 * holds only strings is returned as it is, shared with the raw fields rather than copied.
 */
export function strList(v: unknown): string[] | undefined {
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v)) return undefined;
  let strings = true;
  for (let i = 0; i < v.length && strings; i++) strings = typeof v[i] === 'string';
  if (strings) return v as string[];
  const out: string[] = [];
  for (const x of v) {
    const s = str(x);
    if (s !== undefined) out.push(s);
  }
  return out;
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** The buffer counters every node carries under ANALYZE + BUFFERS in the non-text formats. */
export const BUFFER_COUNTER_KEYS = [
  'Shared Hit Blocks',
  'Shared Read Blocks',
  'Shared Dirtied Blocks',
  'Shared Written Blocks',
  'Local Hit Blocks',
  'Local Read Blocks',
  'Local Dirtied Blocks',
  'Local Written Blocks',
  'Temp Read Blocks',
  'Temp Written Blocks',
] as const;

/** I/O timing keys by server generation: up to 14, 15 and 16, 17 and later. */
export const IO_TIMING_KEYS_14 = ['I/O Read Time', 'I/O Write Time'] as const;
export const IO_TIMING_KEYS_15 = ['I/O Read Time', 'I/O Write Time', 'Temp I/O Read Time', 'Temp I/O Write Time'] as const;
export const IO_TIMING_KEYS_17 = [
  'Shared I/O Read Time',
  'Shared I/O Write Time',
  'Local I/O Read Time',
  'Local I/O Write Time',
  'Temp I/O Read Time',
  'Temp I/O Write Time',
] as const;

export const WAL_KEYS = ['WAL Records', 'WAL FPI', 'WAL Bytes'] as const;

/** Keys whose values are numbers (used to type YAML/XML/text values). */
export const NUMERIC_KEYS: ReadonlySet<string> = new Set([
  'Startup Cost',
  'Total Cost',
  'Plan Rows',
  'Plan Width',
  'Actual Startup Time',
  'Actual Total Time',
  'Actual Rows',
  'Actual Loops',
  'Rows Removed by Filter',
  'Rows Removed by Join Filter',
  'Rows Removed by Index Recheck',
  'Rows Removed by Conflict Filter',
  'Heap Fetches',
  'Index Searches',
  'Workers Planned',
  'Workers Launched',
  'Worker Number',
  ...BUFFER_COUNTER_KEYS,
  ...IO_TIMING_KEYS_15,
  ...IO_TIMING_KEYS_17,
  'Sort Space Used',
  'Hash Buckets',
  'Original Hash Buckets',
  'Hash Batches',
  'Original Hash Batches',
  'Peak Memory Usage',
  'Planned Partitions',
  'HashAgg Batches',
  'Disk Usage',
  'Exact Heap Blocks',
  'Lossy Heap Blocks',
  ...WAL_KEYS,
  'WAL Buffers Full',
  'Cache Hits',
  'Cache Misses',
  'Cache Evictions',
  'Cache Overflows',
  'Subplans Removed',
  'Planning Time',
  'Execution Time',
  'Total Runtime',
  'Time',
  'Calls',
  'Functions',
  'Generation',
  'Deform',
  'Inlining',
  'Optimization',
  'Emission',
  'Total',
  'Group Count',
  'Average Sort Space Used',
  'Peak Sort Space Used',
  'Memory Used',
  'Memory Allocated',
  'Output Volume',
  'Maximum Storage',
  'Conflicting Tuples',
  'Tuples Inserted',
  'Tuples Updated',
  'Tuples Deleted',
  'Tuples Skipped',
]);

/** Keys whose values are booleans. */
export const BOOLEAN_KEYS: ReadonlySet<string> = new Set([
  'Parallel Aware',
  'Async Capable',
  'Inner Unique',
  'Single Copy',
  'Disabled',
  'Expressions',
  'Deforming',
]);

/** Keys whose values are lists of expressions. */
export const LIST_KEYS: ReadonlySet<string> = new Set([
  'Output',
  'Sort Key',
  'Group Key',
  'Presorted Key',
  'Hash Key',
  'Sort Methods Used',
  'Sampling Parameters',
  'Conflict Arbiter Indexes',
]);

/** Keys whose values are condition expressions; the model keeps them in `details.conditions`. */
export const CONDITION_KEYS = [
  'Filter',
  'Index Cond',
  'Recheck Cond',
  'Join Filter',
  'Hash Cond',
  'Merge Cond',
  'TID Cond',
  'One-Time Filter',
  'Order By',
  'Run Condition',
  'Cache Key',
  'Conflict Filter',
  'Function Call',
  'Table Function Call',
] as const;

/** Other string keys, listed so that the XML reader can turn escaped tag names back into key names. */
const STRING_KEYS = [
  'Node Type',
  'Parent Relationship',
  'Subplan Name',
  'Custom Plan Provider',
  'Strategy',
  'Partial Mode',
  'Operation',
  'Command',
  'Join Type',
  'Scan Direction',
  'Index Name',
  'Relation Name',
  'Function Name',
  'CTE Name',
  'Tuplestore Name',
  'Table Function Name',
  'Schema',
  'Alias',
  'Sort Method',
  'Sort Space Type',
  'Cache Mode',
  'Storage',
  'Sampling Method',
  'Repeatable Seed',
  'Conflict Resolution',
  'Trigger Name',
  'Constraint Name',
  'Relation',
  'Format',
  'Query Text',
  'Query Identifier',
  'Query Parameters',
  'Remote SQL',
  'Relations',
  'Window',
  'Plans',
  'Plan',
  'Planning',
  'Triggers',
  'Trigger',
  'JIT',
  'Options',
  'Timing',
  'Settings',
  'Serialization',
  'Workers',
  'Worker',
  'Grouping Sets',
  'Grouping Set',
  'Group Keys',
  'Hash Keys',
  'Full-sort Groups',
  'Pre-sorted Groups',
  'Sort Space Memory',
  'Sort Space Disk',
  'Target Tables',
];

/** Every key name this reader knows, for reverse lookups. */
export const KNOWN_KEYS: readonly string[] = [
  ...NUMERIC_KEYS,
  ...BOOLEAN_KEYS,
  ...LIST_KEYS,
  ...CONDITION_KEYS,
  ...STRING_KEYS,
];

/**
 * Splits an expression list at the commas that are not inside parentheses, brackets or quotes, the way
 * PostgreSQL joins Output, Sort Key and Group Key items with ", ".
 */
export function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote !== null) {
      if (c === quote) {
        // A doubled quote is an escaped quote inside the literal or identifier.
        if (s[i + 1] === quote) i++;
        else quote = null;
      }
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = s.slice(start).trim();
  if (last !== '' || out.length > 0) out.push(last);
  return out;
}

/** Splits on runs of spaces outside double quotes (identifier tokens of a node line). */
export function splitIdentTokens(s: string): string[] {
  return splitOutsideQuotes(s, ' ').filter((t) => t !== '');
}

/** Splits `schema.name` at the dot outside quotes; a plain name gives one part. */
export function splitQualified(token: string): string[] {
  return splitOutsideQuotes(token, '.');
}

/** Splits at every `sep` outside double-quoted identifiers (whose doubled quotes stay as written). */
function splitOutsideQuotes(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '"') {
      if (quoted && s[i + 1] === '"') {
        cur += '""';
        i++;
        continue;
      }
      quoted = !quoted;
      cur += c;
    } else if (c === sep && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/** Removes the double quotes PostgreSQL puts around identifiers that need them. */
export function unquoteIdent(s: string): string {
  if (s.length >= 2 && s.startsWith('"') && s.endsWith('"')) return s.slice(1, -1).replace(/""/g, '"');
  return s;
}

