// The queries of one file as the gate sees them: the finder's queries (the same finder as the editor and
// `qpi lint`), each with its identity, its place as lines and columns, the text to explain or why it
// cannot be explained, and the `qpi-ignore` comments on the line before it.

import { findQueries, querySourceKind, scriptDialect, type FinderContext, type FoundQuery } from '../query/find';
import { targetOf } from '../query/targets';
import { DiagnosticCodes } from '../lint/codes';
import { identityKeys, mongoQueryShape, scopeAt, scriptScopes, sqlShape, type QueryIdentity } from './identity';
import { CheckRules, RULES } from './rules';

/** 1-based lines and columns, as editors, SARIF and JUnit count them. */
export interface LineRange {
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

/**
 * `qpi-ignore RULE -- reason`: in the comment lines right above a query, or in a comment at the end of
 * the line it starts on.
 */
export interface InlineIgnore {
  /** A rule id, or `*` for every rule. */
  rule: string;
  reason: string;
  line: number;
}

export interface CheckQuery extends QueryIdentity {
  /** The key in the lock (identity plus order among equals). */
  key: string;
  /** A short name for people: `orders.find`, or the statement's first words. */
  title: string;
  range: LineRange;
  /** What to explain (mongo shell notation or one SQL statement), or why it cannot be explained. */
  explain: { ok: true; text: string } | { ok: false; problem: string };
  ignores: InlineIgnore[];
  /** The finder's query, for the editor's findings. */
  found: FoundQuery;
}

export interface CollectedFile {
  queries: CheckQuery[];
  /** What could not be read (a syntax error), one sentence each. */
  warnings: string[];
}

/** Whether the finder reads a file of this name. */
export function checksFile(fileName: string): boolean {
  return querySourceKind('', fileName) !== 'other';
}

/**
 * Every query of a file's text. `file` is the repository-relative path the identity carries; the SQL
 * parser must be loaded first. Never throws on bad input.
 */
export function collectQueries(text: string, file: string, context: FinderContext = {}): CollectedFile {
  const kind = querySourceKind('', file);
  if (kind === 'other') return { queries: [], warnings: [] };
  const dialect = scriptDialect('', file);
  const found = findQueries(text, kind, dialect, { file, ...context });
  const warnings = [...found.warnings];
  const placed = placeQueries(text, file, found.queries);
  const partial: Omit<CheckQuery, 'key'>[] = [];
  for (const p of placed) {
    for (const i of p.ignores) {
      if (i.rule !== '*' && !KNOWN_RULES.has(i.rule)) warnings.push(`line ${i.line}: qpi-ignore names "${i.rule}", which is no rule of qpi check, so it ignores nothing.`);
    }
    partial.push({ ...p.id, title: p.title, range: p.range, explain: p.explain, ignores: p.ignores, found: p.q });
  }
  const keys = identityKeys(placed.map((p) => p.id));
  return { queries: partial.map((p, i) => ({ ...p, key: keys[i]! })), warnings };
}

/**
 * The keys the lock knows a file's queries by, for queries the finder already found (the language
 * server's): computed as `collectQueries` computes them. `file` is relative to the lock's folder.
 */
export function queryKeys(text: string, file: string, queries: readonly FoundQuery[]): string[] {
  if (querySourceKind('', file) === 'other') return queries.map(() => '');
  return identityKeys(placeQueries(text, file, queries).map((p) => p.id));
}

/** The `qpi-ignore` comments of each query, as `qpi check` reads them (without its identity, which costs a parse). */
export function queryIgnores(text: string, queries: readonly FoundQuery[]): InlineIgnore[][] {
  const lines = lineStarts(text);
  return queries.map((q) => {
    const start = startOfCode(text, q.range.start, q.range.end);
    return ignoresAt(text, lines, at(lines, start).line, start);
  });
}

interface Placed {
  q: FoundQuery;
  id: QueryIdentity;
  title: string;
  range: LineRange;
  explain: CheckQuery['explain'];
  ignores: InlineIgnore[];
}

/** Each query's identity, place, explain text and `qpi-ignore` comments. */
function placeQueries(text: string, file: string, queries: readonly FoundQuery[]): Placed[] {
  const kind = querySourceKind('', file);
  const dialect = scriptDialect('', file);
  const scopes = kind === 'sql' ? [] : scriptScopes(text, dialect, kind === 'mongodb-playground');
  const lines = lineStarts(text);
  return queries.map((q) => {
    const target = targetOf(q, text);
    const explain = target.problem === undefined ? { ok: true as const, text: target.text } : { ok: false as const, problem: target.problem };
    const start = startOfCode(text, q.range.start, q.range.end);
    const scope = scopeAt(scopes, start);
    const id: QueryIdentity = {
      engine: q.engine,
      file,
      ...(scope !== undefined ? { scope } : {}),
      shape: q.engine === 'mongodb' ? mongoQueryShape(q.command) : sqlShape(explain.ok ? explain.text : q.sql),
    };
    const from = at(lines, start);
    const to = at(lines, Math.max(start, q.range.end));
    const range: LineRange = { startLine: from.line, startColumn: from.column, endLine: to.line, endColumn: to.column };
    return { q, id, title: target.title, range, explain, ignores: ignoresAt(text, lines, range.startLine, start) };
  });
}

/** Offsets where each line starts. */
function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}

function at(lines: readonly number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lines[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - lines[lo]! + 1 };
}

/**
 * Where a query's code starts: a statement of a .sql file may begin with the blank lines and comments
 * after the statement before it, which are not the query.
 */
function startOfCode(text: string, start: number, end: number): number {
  let i = start;
  for (;;) {
    while (i < end && /\s/.test(text[i]!)) i++;
    if (text.startsWith('--', i)) {
      const nl = text.indexOf('\n', i);
      if (nl === -1 || nl >= end) return i;
      i = nl + 1;
    } else if (text.startsWith('/*', i)) {
      const close = text.indexOf('*/', i + 2);
      if (close === -1 || close >= end) return i;
      i = close + 2;
    } else return i;
  }
}

const IGNORE = /(?:\/\/|--|\/\*|^\s*\*)\s*qpi-ignore\s+([\w.*-]+(?:\s*,\s*[\w.*-]+)*)(?:\s+--\s*(.*?))?\s*(?:\*\/)?\s*$/;
// A line that is only a comment: a line comment, the start of a block comment, or a line inside one.
const COMMENT_LINE = /^\s*(?:\/\/|--|\/\*|\*)/;

const KNOWN_RULES = new Set<string>([...RULES.keys(), ...Object.values(DiagnosticCodes), ...Object.values(CheckRules)]);

/**
 * The `qpi-ignore` comments of the query starting at `line` (1-based) and `offset`: those of the comment
 * lines right above it (a block of several comment lines is read whole), and one after the query's start
 * on its own line (`client.query(sql) // qpi-ignore RULE -- reason`).
 */
function ignoresAt(text: string, lines: readonly number[], line: number, offset: number): InlineIgnore[] {
  const out: InlineIgnore[] = [];
  const lineText = (n: number): string => text.slice(lines[n - 1]!, n < lines.length ? lines[n]! - 1 : text.length);
  const read = (n: number, from: string): void => {
    const m = IGNORE.exec(from);
    if (!m) return;
    const reason = (m[2] ?? '').trim();
    for (const r of m[1]!.split(',')) out.push({ rule: r.trim(), reason, line: n });
  };
  for (let n = line - 1; n >= 1 && COMMENT_LINE.test(lineText(n)); n--) read(n, lineText(n));
  // After the query's start only: a comment before it on the same line belongs to something else.
  const own = lineText(line).slice(offset - lines[line - 1]!);
  const trailing = /(?:\/\/|--|\/\*)\s*qpi-ignore\b.*$/.exec(own);
  if (trailing) read(line, trailing[0]);
  return out;
}
