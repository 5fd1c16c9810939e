// What a statement is, read from the parse tree: its kind, the verb a person would say, whether EXPLAIN
// accepts it, and whether running it changes data (a data-changing CTE or SELECT INTO included). The
// extension, the adapter and the finder all ask here instead of matching words in the text.

import { parseSqlSync, sqlParserLoaded } from './parser';

/** Statements EXPLAIN accepts. */
export const EXPLAINABLE = new Set(['SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'ExecuteStmt', 'DeclareCursorStmt', 'CreateTableAsStmt']);
/** Statement kinds that change rows when run. */
export const WRITING = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'CreateTableAsStmt']);
/** Statement kinds worth finding in a file and advising; DDL, transaction control and the like are not queries. */
export const QUERY_KINDS = new Set(['SelectStmt', 'UpdateStmt', 'DeleteStmt', 'InsertStmt', 'MergeStmt', 'ExplainStmt']);

export const KIND_WORDS: Record<string, string> = {
  SelectStmt: 'SELECT', InsertStmt: 'INSERT', UpdateStmt: 'UPDATE', DeleteStmt: 'DELETE', MergeStmt: 'MERGE',
  ExecuteStmt: 'EXECUTE', DeclareCursorStmt: 'DECLARE', CreateTableAsStmt: 'CREATE TABLE AS', IndexStmt: 'CREATE INDEX',
  CreateStmt: 'CREATE TABLE', DropStmt: 'DROP', TruncateStmt: 'TRUNCATE', AlterTableStmt: 'ALTER TABLE',
  VacuumStmt: 'VACUUM', TransactionStmt: 'transaction control', VariableSetStmt: 'SET', CopyStmt: 'COPY', ExplainStmt: 'EXPLAIN',
};

/** The kind of a statement node (`{ SelectStmt: {...} }` gives 'SelectStmt'). */
export function statementKind(stmt: Record<string, unknown> | undefined): string {
  return Object.keys(stmt ?? {})[0] ?? 'unknown';
}

/** The word for a kind: 'SELECT', 'CREATE INDEX'...; an unknown kind loses its `Stmt` suffix. */
export function kindWord(kind: string): string {
  return KIND_WORDS[kind] ?? kind.replace(/Stmt$/, '');
}

/** True when a parse tree holds a data-changing statement anywhere (CTEs included) or a SELECT INTO. */
export function treeWrites(tree: unknown): boolean {
  return firstWrite(tree) !== undefined;
}

/** The first data-changing statement kind of a tree, breadth first (the outermost), or 'intoClause' for SELECT INTO. */
function firstWrite(tree: unknown): string | undefined {
  const queue: unknown[] = [tree];
  for (let i = 0; i < queue.length; i++) {
    const x = queue[i];
    if (Array.isArray(x)) queue.push(...x);
    else if (typeof x === 'object' && x !== null) {
      for (const [k, v] of Object.entries(x)) {
        if (WRITING.has(k)) return k;
        if (k === 'intoClause' && v) return k;
        queue.push(v);
      }
    }
  }
  return undefined;
}

export interface StatementInfo {
  kind: string;
  /** 'SELECT', 'UPDATE'...; for a SELECT whose CTE writes, the writing verb inside. */
  verb: string;
  writes: boolean;
}

/**
 * The first statement of a text, read with the parser (which must be loaded). Undefined when the text
 * does not parse or holds no statement.
 */
export function statementInfo(sql: string): StatementInfo | undefined {
  if (!sqlParserLoaded()) return undefined;
  let stmt: Record<string, unknown> | undefined;
  try {
    stmt = parseSqlSync(sql).stmts?.[0]?.stmt;
  } catch {
    return undefined;
  }
  if (!stmt) return undefined;
  const kind = statementKind(stmt);
  const write = firstWrite(stmt);
  const verb = kind === 'SelectStmt' && write !== undefined && write !== 'intoClause' ? kindWord(write) : kindWord(kind);
  return { kind, verb, writes: write !== undefined };
}
