// PostgreSQL's own parser (libpg-query, compiled to WASM), loaded once for the whole core. Every reader
// of SQL (the advisor's shapes, the query finder, the statement kinds) calls the synchronous functions
// here after `loadSqlParser()` has resolved, so there is one loader and one place that knows the module.

import { loadModule, parseSync, scanSync } from 'libpg-query';

/** The parser's syntax error; `sqlDetails.cursorPosition` is where it stopped (0-based, bytes). */
export { SqlError } from 'libpg-query';

let loading: Promise<void> | undefined;
let loaded = false;

/** Loads the WASM parser once; every later call returns the same promise. */
export function loadSqlParser(): Promise<void> {
  loading ??= loadModule().then(() => {
    loaded = true;
  });
  return loading;
}

export function sqlParserLoaded(): boolean {
  return loaded;
}

/** One statement of a parse tree: the node keyed by its kind, and where it sits (bytes). */
export interface RawStatement {
  stmt?: Record<string, unknown>;
  stmt_location?: number;
  stmt_len?: number;
}

export interface SqlToken {
  start: number;
  end: number;
  tokenName: string;
}

/**
 * The trees of the last texts parsed, or their errors. One statement is read by several readers in turn
 * (the finder checks it parses, the findings read its shape, the advice its names): the parse is done once.
 * Readers only read a tree, never change it (`test/unit/sql-parse-cache.test.ts`). Only statement-sized
 * texts are kept (a whole .sql file is parsed once), and as many as a long file's statements.
 */
const recent = new Map<string, { tree: { stmts?: RawStatement[] } } | { error: unknown }>();
const RECENT_LIMIT = 1000;
const RECENT_MAX_TEXT = 8192;

/** The parse tree of a text; throws the parser's error on a syntax error. Needs loadSqlParser() first. */
export function parseSqlSync(sql: string): { stmts?: RawStatement[] } {
  const hit = recent.get(sql);
  if (hit) {
    if ('error' in hit) throw hit.error;
    return hit.tree;
  }
  let entry: { tree: { stmts?: RawStatement[] } } | { error: unknown };
  try {
    entry = { tree: parseSync(sql) as { stmts?: RawStatement[] } };
  } catch (error) {
    entry = { error };
  }
  if (sql.length <= RECENT_MAX_TEXT) {
    if (recent.size >= RECENT_LIMIT) recent.delete(recent.keys().next().value!);
    recent.set(sql, entry);
  }
  if ('error' in entry) throw entry.error;
  return entry.tree;
}

/** The parse tree of a text, loading the parser first if needed; rejects with the parser's error. */
export async function parseSql(sql: string): Promise<{ stmts?: RawStatement[] }> {
  await loadSqlParser();
  return parseSqlSync(sql);
}

/** The scanner's tokens (byte offsets); throws when the text cannot be scanned. Needs loadSqlParser() first. */
export function scanSqlSync(sql: string): SqlToken[] {
  return scanSync(sql).tokens as SqlToken[];
}
