// The index advisor's public surface: MongoDB advice from a structured query (or a shell command read by
// src/core/query), PostgreSQL advice from SQL text. Types are documented in types.ts.
export * from './types';
export { adviseMongo, COLLSCAN_SHARE, SMALL_SORT, type MongoAdviceOptions } from './mongoAdvisor';
export { mongoShape, MAX_SCANS_TO_EXPLODE, type MongoShape, type MongoPredicate, type MongoShapeResult } from './mongoShape';
export { fromMongoCommand, type MongoInputResult } from './fromMongoCommand';
export { advisePostgres, advisePostgresSync, advisePostgresShapes, createIndexSql, DEEP_OFFSET, type PgAdviceOptions } from './pgAdvisor';
export { loadSqlParser, sqlParserLoaded, parsePostgresQuery, parsePostgresQuerySync, OTHER_DATABASE, otherDatabaseRefusal, isOtherDatabase, mergedPgShape, type PgShape, type PgPredicate, type PgParseResult } from './pgShape';
