// Finds the database queries a source file holds: MongoDB calls in JavaScript, TypeScript and
// `.mongodb.js` playgrounds (the shell, the Node driver), and PostgreSQL statements in `.sql` files and
// in strings passed to node-postgres (`client.query(...)`) or tagged `sql`...``. Scripts are read with
// @babel/parser (JavaScript and TypeScript with error recovery), SQL with libpg-query (the server's own
// grammar). Nothing is evaluated: values are read from literal syntax and from local constants, and
// anything else becomes a placeholder `{ $placeholder: "<source text>" }`, never a guess.
//
// Every result maps back to the file: the whole call, each command part, each filter key and value (by
// a path such as `filter/name/$regex` or `pipeline/1/$match/email`), and every character of an SQL
// text, also inside template literals with escapes and `${...}` parts (which become $n parameters).
//
// One file per concern: types.ts (what is returned), sqlFiles.ts, scriptIndex.ts (incremental reading of
// scripts), extractor.ts (the walk that offers each call to the readers), one reader per library
// (mongoDriver.ts, sqlStrings.ts, ...), values.ts, ranges.ts.

import { findSqlStatements } from './sqlFiles';
import { ScriptQueryIndex } from './scriptIndex';
import type { FindResult, FinderContext, QuerySourceKind, ScriptDialect } from './types';

export * from './types';
export { loadSqlParser, sqlParserLoaded } from '../../sql/parser';
export { sqlCharToSource, sqlRangeToSource, changedSpan, escapeKey, locationPath, type KnownChange } from './ranges';
export { findSqlStatements, SqlQueryIndex } from './sqlFiles';
export { ScriptQueryIndex } from './scriptIndex';
export { isPlaceholder } from './values';

/**
 * Every query of a text, in text order. Never throws on bad input. `context`: what is known beyond the text
 * (the workspace's Prisma schema, so Prisma calls are written with the database's table and column names;
 * the file's path and the workspace's modules, so imports are followed).
 */
export function findQueries(text: string, kind: QuerySourceKind, dialect: ScriptDialect = 'ts', context: FinderContext = {}): FindResult {
  if (kind === 'sql') return findSqlStatements(text);
  if (kind === 'mongodb-playground' || kind === 'script') {
    const index = new ScriptQueryIndex(kind, dialect, context);
    index.update(text);
    return index.result();
  }
  return { queries: [], warnings: [] };
}
