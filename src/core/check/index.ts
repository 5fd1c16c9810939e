// `qpi check`, the pure part: identities, plan signatures, the lock, the policy and the CI formats.
// src/cli/check reads the files, explains on the servers and writes what these return.

export { stableHash } from './hash';
export { fingerprintOf, identityKey, identityKeys, mongoQueryShape, scopeAt, scriptScopes, sqlShape, type QueryIdentity } from './identity';
export { checksFile, collectQueries, queryIgnores, queryKeys, type CheckQuery, type CollectedFile, type InlineIgnore, type LineRange } from './collect';
export { bindableMongo, mongoVariables, mongoVariableValue, STAND_IN, type BindableMongo, type MongoVariable, type MongoVariables } from './mongoValues';
export { planCounters, planSignature, planSummaryOf, type AccessPath, type PlanCounters, type PlanSignature } from './signature';
export { canonicalJson, emptyLock, LOCK_VERSION, parseLock, serializeLock, versionNumber, type Lock, type LockEntry, type Waiver } from './lock';
export { CheckRules, RULES, ruleInfo, type Level, type RuleInfo, type Tier } from './rules';
export {
  configForQuery, decide, DEFAULT_THRESHOLD, GATED_COUNTERS, nextLock, regressions, selects,
  type BaselineState, type CheckConfig, type CheckFinding, type CheckMeasurement, type MeasuredFigures, type DecideOptions, type GatedCounter, type GateDecision, type GateResult, type QueryConfig, type QueryRun, type QueryVerdict, type RelatedPlace, type RuleConfig, type Suppression,
} from './policy';
export { decisionFromJson, gateCounts, MARKDOWN_LIMIT, measurementSentence, toGitlab, toJsonDocument, toJunit, toMarkdown, toSarif, type CheckJson, type CheckJsonQuery, type GateCounts, type SarifOptions } from './report';
export { causeOfLostIndex, indexTables, readScriptDdl, readSqlDdl, sqlTables, touchedTargets, type DdlAction, type DdlStatement } from './schemaChanges';
export { isCheckJson, mergeJsonDocuments, mergeJunit, mergeLocks, mergeSarif, type Merged } from './merge';
export { coverJustification, coverOf, expiredOf, expiredSentence, waiversOf, type Cover } from './waivers';
