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

/** The parse tree of a text; throws the parser's error on a syntax error. Needs loadSqlParser() first. */
export function parseSqlSync(sql: string): { stmts?: RawStatement[] } {
  return parseSync(sql) as { stmts?: RawStatement[] };
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
