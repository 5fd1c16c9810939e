// The core's public surface. Everything outside src/core imports from here, never from deeper files; the
// plan view imports the smaller ./view (lint enforces both, see eslint.config.mjs).
export * from './view';
export { loadPlan, detectFormat, MAX_PLAN_TEXT } from './load';
export { derive, walk } from './metrics';
export { analyze, summarize } from './findings/index';
export * from './advice/index';
export { parseMongoQuery, type MongoCommand, type ExplainVerbosity } from './query/mongoShell';
export { lintText, type LintFinding, type LintResult } from './lint/lintText';
export { declaredPrimaryKeys, emptySchema, mayDeclareScriptSchema, readRepositorySchema, schemaFileKind, type DeclaredMongoIndex, type DeclaredPgIndex, type RepositorySchema, type SchemaFile } from './schema/index';
export { indexSpec } from './advice/mongoAdvisor';
export { type MongoCandidate, type MongoCandidateGroup, mongoCandidates, mongoOrCandidates, canonicalKey } from './advice/mongoCandidates';
export { createIndexText } from './advice/mongoText';
export { type PgCandidate, canonicalPgKey, pgCandidates, pgJoinCandidates } from './advice/pgCandidates';
export { bindPgParams, pgParamSlots, pgParamValue, type PgColumnValues, type PgParamSlot, type PgParamValue } from './advice/pgParams';
export { type PgTable } from './advice/pgShape';
export { keepServedIndexes } from './advice/served';
export { type TournamentInput, applyTournament, entryLabel, indexLabel, scalesWithData, tournamentSampleSize, workText } from './advice/tournament';
export { type Anchor, type DocumentSchema, type InlineFinding, type QueryAnalysis, analyzeQuery, anchorRange, planKey } from './lint/analysis';
export { type DiagnosticCode, DiagnosticCodes, type PlanSummary } from './lint/codes';
export { declareEdit } from './lint/declare';
export { explainText, explainValues, fillExplainValues, type ExplainValues } from './lint/explainText';
export { type IndexCreationResult, type MongoIndexCreation, parseMongoCreateIndex } from './query/createIndex';
export { querySourceKind, ScriptQueryIndex, SqlQueryIndex, type FoundQuery, type PrismaModels, type QuerySourceKind, type SourceRange } from './query/find';
export { scriptDialect } from './query/find/types';
export { explainWouldWrite, toServerCommand, writingStages } from './query/mongoServerCommand';
export { type QueryTarget, classifySelection, explainTargets, queryAt } from './query/targets';
export { EXPLAINABLE, KIND_WORDS, SqlError, WRITING, forEachNode, parseSql, someNode, statementInfo, statementKind, treeWrites, renameRelations } from './sql/index';
export { lineColumn } from './text';
