// .sql files: statements at the places PostgreSQL's parser reports, kept between edits.

import { ByteMap } from '../../sql/bytes';
import { QUERY_KINDS } from '../../sql/kinds';
import { parseSqlSync, scanSqlSync, sqlParserLoaded } from '../../sql/parser';
import { normalisePlaceholders } from './placeholders';
import { IncrementalIndex } from './incremental';
import { shiftQuery, type KnownChange, type TouchedSpan } from './ranges';
import type { FindResult, FoundSqlQuery } from './types';


/** First words of the statements worth advising, for a file split at semicolons when it does not parse. */
const SQL_QUERY_KEYWORDS = new Set(['select', 'with', 'update', 'delete', 'insert', 'merge', 'values', 'table', 'explain']);

/**
 * Splits a .sql file into statements at the locations PostgreSQL's parser reports. When some statement
 * does not parse, the file is split at the `;` tokens of PostgreSQL's own scanner instead (which knows
 * quotes, comments and dollar quoting), so the other statements are still found.
 */
export function findSqlStatements(text: string): FindResult {
  if (!sqlParserLoaded()) return { queries: [], warnings: ['The SQL parser is not loaded yet.'] };
  const r = sqlChunks(text, 0, true);
  return { queries: r.chunks.flatMap((c) => (c.query ? [c.query] : [])), warnings: r.warnings };
}

/**
 * The query of a .sql file that holds one statement and nothing else; undefined for a file of several (a
 * schema or a migration run whole), one that does not parse, or one whose statement is no query.
 */
export function onlyStatementQuery(text: string): FoundSqlQuery | undefined {
  if (!sqlParserLoaded()) return undefined;
  const chunks = sqlChunks(text, 0, false)?.chunks;
  return chunks?.length === 1 ? chunks[0]!.query : undefined;
}

/** One statement of a .sql file (trimmed of comments and the semicolon), with its query if it is one. */
interface SqlChunk {
  start: number;
  end: number;
  query?: FoundSqlQuery;
}

/**
 * The statements of `text` (which sits at `offset` in the file). With `fallback`, a text that does not
 * parse is split at the scanner's semicolons; without, it gives undefined (the caller reads more).
 */
function sqlChunks(text: string, offset: number, fallback: true): { chunks: SqlChunk[]; warnings: string[] };
function sqlChunks(text: string, offset: number, fallback: false): { chunks: SqlChunk[]; warnings: string[] } | undefined;
function sqlChunks(text: string, offset: number, fallback: boolean): { chunks: SqlChunk[]; warnings: string[] } | undefined {
  const bytes = new ByteMap(text);
  const spans: { start: number; end: number; kind?: string }[] = [];
  const warnings: string[] = [];
  try {
    const tree = parseSqlSync(text);
    for (const st of tree.stmts ?? []) {
      const loc = st.stmt_location ?? 0;
      const end = st.stmt_len === undefined || st.stmt_len === 0 ? bytes.byteLength : loc + st.stmt_len;
      spans.push({ start: bytes.char(loc), end: bytes.char(end), kind: Object.keys(st.stmt ?? {})[0] ?? '' });
    }
  } catch (err) {
    if (!fallback) return undefined;
    const e = err as { message?: string };
    warnings.push(`The SQL file does not parse as a whole (${e.message ?? 'syntax error'}); its statements were split at semicolons and -- name: lines.`);
    spans.push(...splitWithScanner(text, bytes));
  }
  const chunks: SqlChunk[] = [];
  for (const sp of spans) {
    const start = sp.start + leadingTrivia(text.slice(sp.start, sp.end));
    let end = sp.end;
    while (end > start && /[\s;]/.test(text[end - 1]!)) end--;
    if (end <= start) continue;
    const sql = text.slice(start, end);
    const chunk: SqlChunk = { start: start + offset, end: end + offset };
    const isQuery = sp.kind !== undefined ? QUERY_KINDS.has(sp.kind) : SQL_QUERY_KEYWORDS.has(firstWord(sql));
    if (isQuery) {
      const s0 = start + offset;
      const e0 = end + offset;
      const q: FoundSqlQuery = { engine: 'postgres', origin: 'sql-file', range: { start: s0, end: e0 }, sql, runs: [[0, s0, sql.length, sql.length]], textRange: { start: s0, end: e0 }, params: [], warnings: [] };
      // A statement that did not parse may use another placeholder style (`:id`, `?`, `%s`, `@p`).
      chunk.query = sp.kind === undefined ? normalisePlaceholders(q) : q;
    }
    chunks.push(chunk);
  }
  return { chunks, warnings };
}

/**
 * The statements of a .sql file, kept between edits: an edit re-parses only the statements it touched
 * (from the end of the untouched one before to the start of the untouched one after), and the others
 * keep their query objects, moved if the edit was before them.
 */
export class SqlQueryIndex extends IncrementalIndex<SqlChunk> {
  lastUpdate = { reparsed: 0, full: true };
  /** How many statements the last region read again held. */
  private parsedInRegion = 0;

  result(): FindResult {
    return { queries: this.pieces.flatMap((c) => (c.query ? [c.query] : [])), warnings: [...this.warnings] };
  }

  override update(text: string, known?: KnownChange): void {
    if (!sqlParserLoaded()) {
      this.text = '';
      this.pieces = [];
      this.warnings = ['The SQL parser is not loaded yet.'];
      return;
    }
    super.update(text, known);
  }

  protected mustReadAll(): boolean {
    return this.text === '' || this.warnings.length > 0 || this.pieces.length === 0;
  }

  protected readRegion(slice: string, offset: number, span: TouchedSpan): SqlChunk[] | undefined {
    const chunks = sqlChunks(slice, offset, false)?.chunks;
    if (!chunks) return undefined;
    this.parsedInRegion = chunks.length;
    // A statement the edit did not change keeps its query object, so its analysis is kept too.
    return chunks.map((c) => this.unchangedPiece(span, slice, offset, c.start, c.end) ?? c);
  }

  protected regionUnreadable(text: string): void {
    this.readAll(text);
  }

  protected move(c: SqlChunk, delta: number, oldEnd: number): void {
    c.start += delta;
    c.end += delta;
    if (c.query) shiftQuery(c.query, delta, oldEnd);
  }

  protected spliced(): void {
    this.lastUpdate = { reparsed: this.parsedInRegion, full: false };
  }

  protected readAll(text: string): void {
    const r = sqlChunks(text, 0, true);
    this.pieces = r.chunks;
    this.warnings = r.warnings;
    this.text = text;
    this.lastUpdate = { reparsed: r.chunks.length, full: true };
  }
}

function splitWithScanner(text: string, bytes: ByteMap): { start: number; end: number }[] {
  let tokens: { start: number; end: number; tokenName: string }[];
  try {
    tokens = scanSqlSync(text);
  } catch {
    return [{ start: 0, end: text.length }];
  }
  const out: { start: number; end: number }[] = [];
  let first: number | undefined;
  let last = 0;
  for (const t of tokens) {
    if (t.tokenName === 'SQL_COMMENT' || t.tokenName === 'C_COMMENT') {
      // `-- name: getUser` opens the next query of a query file, with or without a semicolon before it.
      if (/^--\s*name\s*:/i.test(text.slice(bytes.char(t.start), bytes.char(t.end))) && first !== undefined) {
        out.push({ start: bytes.char(first), end: bytes.char(last) });
        first = undefined;
      }
      continue;
    }
    if (t.tokenName === 'ASCII_59') {
      if (first !== undefined) out.push({ start: bytes.char(first), end: bytes.char(last) });
      first = undefined;
      continue;
    }
    if (first === undefined) first = t.start;
    last = t.end;
  }
  if (first !== undefined) out.push({ start: bytes.char(first), end: bytes.char(last) });
  return out;
}

function firstWord(sql: string): string {
  return /^\(*\s*([A-Za-z]+)/.exec(sql)?.[1]?.toLowerCase() ?? '';
}

/** Length of the whitespace and comments that open a text. */
function leadingTrivia(s: string): number {
  let i = 0;
  for (;;) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (s.startsWith('--', i)) {
      const nl = s.indexOf('\n', i);
      i = nl < 0 ? s.length : nl + 1;
    } else if (s.startsWith('/*', i)) {
      const close = s.indexOf('*/', i + 2);
      i = close < 0 ? s.length : close + 2;
    } else return i;
  }
}

