// The core's public surface. Everything outside src/core imports from here, never from deeper files.
export * from './model';
export { loadPlan, detectFormat, MAX_PLAN_TEXT } from './load';
export { derive, walk } from './metrics';
export { analyze, summarize } from './findings/index';
export * from './advice/index';
export { parseMongoQuery, type MongoCommand, type ExplainVerbosity } from './query/mongoShell';
