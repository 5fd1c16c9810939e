// `qpi check`, the pure part: identities, plan signatures, the lock, the policy and the CI formats.
// src/cli/check reads the files, explains on the servers and writes what these return.

export { stableHash } from './hash';
export { fingerprintOf, identityKey, identityKeys, mongoQueryShape, scopeAt, scriptScopes, sqlShape, type QueryIdentity } from './identity';
export { checksFile, collectQueries, type CheckQuery, type CollectedFile, type InlineIgnore, type LineRange } from './collect';
export { planCounters, planSignature, planSummaryOf, type AccessPath, type PlanCounters, type PlanSignature } from './signature';
export { canonicalJson, emptyLock, LOCK_VERSION, parseLock, serializeLock, versionNumber, type Lock, type LockEntry, type Waiver } from './lock';
export { CheckRules, RULES, ruleInfo, type Level, type RuleInfo, type Tier } from './rules';
export { decide, DEFAULT_THRESHOLD, nextLock, regressions, type BaselineState, type CheckConfig, type CheckFinding, type GateDecision, type GateResult, type QueryRun, type QueryVerdict, type RuleConfig, type Suppression } from './policy';
export { gateCounts, MARKDOWN_LIMIT, toJunit, toMarkdown, toSarif, type GateCounts, type SarifOptions } from './report';
