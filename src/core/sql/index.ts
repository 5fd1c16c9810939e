// SQL in the core: PostgreSQL's parser loaded once, byte offsets to string indexes, statement kinds and
// "does it write?" from the parse tree, and query-text placeholders.
export { loadSqlParser, sqlParserLoaded, parseSql, parseSqlSync, scanSqlSync, SqlError, type RawStatement, type SqlToken } from './parser';
export { ByteMap } from './bytes';
export { EXPLAINABLE, WRITING, QUERY_KINDS, KIND_WORDS, kindWord, statementKind, statementInfo, treeWrites, type StatementInfo } from './kinds';
export { inlineParameters, sqlLiteral, sqlParams, type SqlLiteralValue, type SqlParam } from './placeholders';
export { forEachNode, someNode } from './tree';
export { renameRelations, type SqlRelation } from './relations';
