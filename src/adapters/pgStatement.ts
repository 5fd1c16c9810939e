// What a SQL text is, before anything of it is sent: exactly one statement, its kind, whether it writes,
// and the functions, operators and relations it names (for the side-effect verdict), read with
// PostgreSQL's own parser (libpg-query through the core). Also the one CREATE INDEX statement an index
// build runs. Refusals are AdapterErrors of one sentence. No connection: nothing here reaches a server.

import { EXPLAINABLE, KIND_WORDS, parseSql, SqlError, statementKind, treeWrites, WRITING } from '../core/index';
import { lineColumn } from '../core/index';
import { AdapterError, firstLine } from './errors';
import { statementReferences, type StatementReferences } from './pgSideEffects';

/** What the parser says about a statement before it is sent. */
export interface StatementInfo {
  /** The statement to explain (an EXPLAIN prefix the user wrote is removed). */
  sql: string;
  /** Parse-tree node name of the statement: SelectStmt, UpdateStmt... */
  kind: string;
  /** INSERT/UPDATE/DELETE/MERGE anywhere in it (a CTE too), SELECT INTO, CREATE TABLE AS. */
  writes: boolean;
  /** SELECT INTO or CREATE TABLE AS: running it creates a table. */
  createsTable?: boolean;
  /** INSERT, UPDATE, DELETE, MERGE: the name of the table it writes (without its schema). */
  target?: string;
  /** Functions, operators and relations it names, for the side-effect check before it runs. */
  refs: StatementReferences;
}

/** What the parser says about a CREATE INDEX statement before it is run. */
export interface CreateIndexStatement {
  /** The statement as given, without trailing semicolons. */
  sql: string;
  /** The index name when the statement gives one (the server picks one otherwise). */
  name?: string;
  schema?: string;
  table: string;
  concurrent: boolean;
  unique: boolean;
  ifNotExists: boolean;
}
/** "an ALTER TABLE", "a SELECT": the statement's keywords with the article they are read with. */
export function statementWord(kind: string): string {
  // Parse-tree names the table does not list read as their keywords: AlterRoleStmt is ALTER ROLE.
  const word = KIND_WORDS[kind] ?? kind.replace(/Stmt$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase();
  return `${/^[AEIOU]/i.test(word) ? 'an' : 'a'} ${word}`;
}

/**
 * Checks that a text is one explainable statement and says whether it writes. Pure apart from the WASM
 * parser; throws AdapterError (syntax or unsupported) in one sentence.
 */
export async function inspectStatement(text: string): Promise<StatementInfo> {
  let sql = text.replace(/[\s;]+$/, '');
  if (sql.trim() === '') throw new AdapterError('syntax', 'The SQL is empty: give one statement to explain.');
  for (let pass = 0; pass < 2; pass++) {
    const stmts = await statementsOf(sql);
    if (stmts.length === 0) throw new AdapterError('syntax', 'The SQL holds only comments: give one statement to explain.');
    if (stmts.length > 1) throw new AdapterError('unsupported', `The SQL holds ${stmts.length} statements; explain them one at a time.`);
    const stmt = stmts[0]!;
    const kind = statementKind(stmt);
    if (kind === 'ExplainStmt' && pass === 0) {
      // The user pasted "EXPLAIN (...) query": explain the query with the options asked of the adapter.
      const inner = /^\s*explain\b\s*(?:\((?:[^()]|\([^()]*\))*\)\s*|(?:analy[sz]e|verbose)\b\s*)*/i.exec(sql);
      if (!inner) throw new AdapterError('unsupported', 'The SQL is an EXPLAIN whose options could not be removed; give the query without EXPLAIN.');
      sql = sql.slice(inner[0].length);
      continue;
    }
    if (!EXPLAINABLE.has(kind)) {
      throw new AdapterError('unsupported', `EXPLAIN cannot show a plan for ${statementWord(kind)} statement; give a SELECT, INSERT, UPDATE, DELETE, MERGE or VALUES query.`);
    }
    const out: StatementInfo = { sql, kind, writes: treeWrites(stmt), refs: statementReferences(stmt) };
    const into = (stmt.SelectStmt as { intoClause?: unknown } | undefined)?.intoClause;
    if (kind === 'CreateTableAsStmt' || (kind === 'SelectStmt' && into)) out.createsTable = true;
    const target = (stmt[kind] as { relation?: { relname?: unknown } } | undefined)?.relation?.relname;
    if (WRITING.has(kind) && typeof target === 'string') out.target = target;
    return out;
  }
  throw new AdapterError('unsupported', 'The SQL is an EXPLAIN of an EXPLAIN; give the query alone.');
}

/**
 * Checks that a text is exactly one CREATE INDEX statement and reads its table, name and CONCURRENTLY.
 * Anything else is refused in one sentence (AdapterError) before it can reach the server.
 */
export async function inspectCreateIndex(text: string): Promise<CreateIndexStatement> {
  const sql = typeof text === 'string' ? text.replace(/[\s;]+$/, '') : '';
  if (sql.trim() === '') throw new AdapterError('syntax', 'The index statement is empty: give one CREATE INDEX statement.');
  const stmts = await statementsOf(sql);
  if (stmts.length === 0) throw new AdapterError('syntax', 'The SQL holds only comments: give one CREATE INDEX statement.');
  if (stmts.length > 1) throw new AdapterError('unsupported', `The SQL holds ${stmts.length} statements; only one CREATE INDEX statement is run.`);
  const stmt = stmts[0]!;
  const kind = statementKind(stmt);
  if (kind !== 'IndexStmt') {
    throw new AdapterError('unsupported', `Only a CREATE INDEX statement is run here, and this is ${statementWord(kind)} statement.`);
  }
  const ix = stmt.IndexStmt as { idxname?: string; relation?: { relname?: string; schemaname?: string }; concurrent?: boolean; unique?: boolean; if_not_exists?: boolean };
  const table = ix.relation?.relname;
  if (!table) throw new AdapterError('syntax', 'The CREATE INDEX statement names no table.');
  const out: CreateIndexStatement = { sql, table, concurrent: ix.concurrent === true, unique: ix.unique === true, ifNotExists: ix.if_not_exists === true };
  if (ix.idxname) out.name = ix.idxname;
  if (ix.relation?.schemaname) out.schema = ix.relation.schemaname;
  return out;
}

/** The statements of a text, parsed; a syntax error becomes the one sentence the user sees. */
export async function statementsOf(sql: string): Promise<Record<string, unknown>[]> {
  try {
    return ((await parseSql(sql)).stmts ?? []).map((s) => s.stmt ?? {});
  } catch (err) {
    throw sqlSyntaxError(sql, err);
  }
}

function sqlSyntaxError(sql: string, err: unknown): AdapterError {
  if (err instanceof SqlError) {
    const pos = err.sqlDetails?.cursorPosition;
    const where = typeof pos === 'number' && pos >= 0 ? ` at ${position(sql, pos)}` : '';
    return new AdapterError('syntax', `The SQL has an error${where}: ${firstLine(err.sqlDetails?.message ?? err.message)}.`);
  }
  return new AdapterError('syntax', `The SQL could not be parsed: ${firstLine(err)}.`);
}

export function position(text: string, pos: number): string {
  const { line, column } = lineColumn(text, pos);
  return `line ${line}, column ${column}`;
}
