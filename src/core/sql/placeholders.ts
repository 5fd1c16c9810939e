// Parameters in SQL text: finding them with PostgreSQL's own scanner (so a `$1` inside a string or a
// comment is left alone) and replacing them by literal values when the code gives them.

import { ByteMap } from './bytes';
import { scanSqlSync, sqlParserLoaded } from './parser';

export type SqlLiteralValue = string | number | boolean | null;

/** A `$n` parameter of a text, with its string range. */
export interface SqlParam {
  n: number;
  start: number;
  end: number;
}

/** The `$n` parameters of a text in order; empty when the parser is not loaded or the text cannot be scanned. */
export function sqlParams(sql: string): SqlParam[] {
  if (!sqlParserLoaded()) return [];
  let tokens;
  try {
    tokens = scanSqlSync(sql);
  } catch {
    return [];
  }
  const bytes = new ByteMap(sql);
  const out: SqlParam[] = [];
  for (const t of tokens) {
    if (t.tokenName !== 'PARAM') continue;
    const start = bytes.char(t.start);
    const end = bytes.char(t.end);
    out.push({ n: Number(sql.slice(start + 1, end)), start, end });
  }
  return out;
}

/** Replaces each `$n` that has a value by that value as an SQL literal; others stay. */
export function inlineParameters(sql: string, values: readonly SqlLiteralValue[]): string {
  let out = '';
  let at = 0;
  for (const p of sqlParams(sql)) {
    if (p.n < 1 || p.n > values.length) continue;
    out += sql.slice(at, p.start) + sqlLiteral(values[p.n - 1]!);
    at = p.end;
  }
  return out + sql.slice(at);
}

/** A value as an SQL literal. */
export function sqlLiteral(v: SqlLiteralValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : `'${String(v)}'::float8`;
  return `'${v.replace(/'/g, "''")}'`;
}
