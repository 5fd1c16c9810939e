// What Explain, the CodeLens and the demo act on: each query the finder sees in a file, as the text to
// explain (mongo shell notation with constants resolved, or one SQL statement with the literal values the
// code binds), or the one sentence saying why it cannot be explained as written. The language server's
// diagnostics read the same finder, so every front end sees the same queries.

import { parseExpression } from '@babel/parser';
import { statementInfo } from '../sql/kinds';
import { explainText, explainValues, type ExplainValues } from '../lint/explainText';
import { findQueries } from './find/index';
import type { FinderContext, FoundQuery, QuerySourceKind, ScriptDialect } from './find/types';

export interface QueryTarget {
  engine: 'mongodb' | 'postgres';
  /** Offsets of the query in the text: the CodeLens and the highlight cover [start, end). */
  start: number;
  end: number;
  /** What to explain: mongo shell notation or one SQL statement; the source text when `problem` is set. */
  text: string;
  /** A short name for titles: `orders.find`, or the statement's first words. */
  title: string;
  /** Why the query cannot be explained as written, one sentence; undefined when it can. */
  problem?: string;
  /** With `problem`: the values from the code Explain can ask the user for, to explain it anyway. */
  values?: ExplainValues;
}

/**
 * Every query of a file as something to explain, in text order. Never throws on bad input.
 * `context`: the workspace's Prisma schema (so Prisma calls name the tables and columns it maps) and modules.
 */
export function explainTargets(text: string, kind: QuerySourceKind, dialect: ScriptDialect = 'ts', context: FinderContext = {}): QueryTarget[] {
  return findQueries(text, kind, dialect, context).queries.map((q) => targetOf(q, text));
}

/** One found query as something to explain. */
export function targetOf(q: FoundQuery, source: string): QueryTarget {
  const t = explainText(q);
  const base = { engine: q.engine, start: q.range.start, end: q.range.end };
  const text = t.ok ? t.text : source.slice(q.range.start, q.range.end);
  const title = q.engine === 'mongodb' ? `${q.command.collection}.${q.command.operation}` : sqlTitle(t.ok ? t.text : q.sql);
  if (t.ok) return { ...base, text, title };
  const values = explainValues(q);
  return { ...base, text, title, problem: t.problem, ...(values ? { values } : {}) };
}

/** The query containing the offset (the innermost), or the first one starting on the same line. */
export function queryAt<T extends { start: number; end: number }>(queries: T[], offset: number, text: string): T | undefined {
  const inside = queries.filter((q) => q.start <= offset && offset <= q.end);
  if (inside.length > 0) return inside.reduce((a, b) => (b.end - b.start < a.end - a.start ? b : a));
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  let lineEnd = text.indexOf('\n', offset);
  if (lineEnd < 0) lineEnd = text.length;
  return queries.find((q) => q.start >= lineStart && q.start <= lineEnd);
}

const SQL_START = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*\(*\s*(select|with|insert|update|delete|merge|values|table|explain)\b/i;

/**
 * Reads a selection the user made, or text given to the command: a whole statement, a mongo call, or a
 * string literal holding SQL. Offsets are within `selected`.
 */
export function classifySelection(selected: string, kind: QuerySourceKind): QueryTarget | undefined {
  const trimmed = selected.trim();
  if (trimmed === '') return undefined;
  const offset = selected.indexOf(trimmed);
  const at = (t: Omit<QueryTarget, 'start' | 'end'>, len = trimmed.length): QueryTarget => ({ ...t, start: offset, end: offset + len });
  if (kind === 'sql') return at(sqlTarget(trimmed));
  const found = findQueries(trimmed, kind === 'mongodb-playground' ? 'mongodb-playground' : 'script', 'ts').queries[0];
  if (found) {
    const t = targetOf(found, trimmed);
    return { ...t, start: t.start + offset, end: t.end + offset };
  }
  const literal = stringLiteral(trimmed);
  if (literal !== undefined && SQL_START.test(literal.value)) {
    const t = sqlTarget(literal.value.trim());
    return at(literal.holes ? { ...t, problem: 'The SQL is built with ${...} parts, which cannot be explained without values: select a query with literal values.' } : t);
  }
  if (SQL_START.test(trimmed) || statementInfo(trimmed) !== undefined) return at(sqlTarget(trimmed));
  if (kind === 'mongodb-playground') return at({ engine: 'mongodb', text: trimmed, title: sqlTitle(trimmed) });
  return undefined;
}

function sqlTarget(sql: string): Omit<QueryTarget, 'start' | 'end'> {
  const text = sql.replace(/[\s;]+$/, '');
  return { engine: 'postgres', text, title: sqlTitle(text) };
}

function sqlTitle(sql: string): string {
  const one = sql.replace(/\s+/g, ' ').trim();
  return one.length > 48 ? `${one.slice(0, 47)}…` : one;
}

/** The value of a text that is exactly one JavaScript string or template literal (`${...}` kept as $n). */
function stringLiteral(text: string): { value: string; holes: boolean } | undefined {
  if (!/^["'`]/.test(text)) return undefined;
  try {
    const e = parseExpression(text) as unknown as { type: string; value?: string; start: number; end: number; quasis?: { value: { cooked?: string | null; raw: string } }[] };
    if (e.end !== text.length) return undefined;
    if (e.type === 'StringLiteral') return { value: e.value ?? '', holes: false };
    if (e.type === 'TemplateLiteral') {
      const q = e.quasis ?? [];
      return { value: q.map((x, i) => (x.value.cooked ?? x.value.raw) + (i < q.length - 1 ? `$${i + 1}` : '')).join(''), holes: q.length > 1 };
    }
  } catch {
    return undefined;
  }
  return undefined;
}
