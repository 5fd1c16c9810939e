// The core's public surface. Everything outside src/core imports from here, never from deeper files.
export * from './model';
export { loadPlan, detectFormat, MAX_PLAN_TEXT } from './load';
export { derive, walk } from './metrics';
export * from './format';
export { analyze, summarize } from './findings/index';
export { changeText, comparePlans, deltaText, deltaValue, entryOfAfter, entryOfBefore, timesText, type ComparedPlans, type CompareOptions, type DeltaUnit, type FlagDelta, type FindingsDelta, type MetricDelta, type NodeComparison, type NodeStatus, type PlanComparison, type Trend } from './compare';
export * from './advice/index';
export { parseMongoQuery, type MongoCommand, type ExplainVerbosity } from './query/mongoShell';
export { querySourceKind, type QuerySourceKind } from './query/find';
export { lintText, type LintFinding, type LintResult } from './lint/lintText';
export { declaredPrimaryKeys, emptySchema, mayDeclareMongooseSchema, readRepositorySchema, schemaFileKind, type DeclaredMongoIndex, type DeclaredPgIndex, type RepositorySchema, type SchemaFile } from './schema/index';
export { fillExplainValues, type ExplainValues } from './lint/explainText';
