// The core's public surface for the plan view (webview/): the plan model, the number formatter and the
// comparison of two plans. All of it is pure and small, so the browser bundle carries none of the
// parsers the rest of the core loads (PostgreSQL's WASM parser, Babel); core/index re-exports it all.
export * from './model';
export * from './format';
export { changeText, comparePlans, deltaText, deltaValue, entryOfAfter, entryOfBefore, timesText, type ComparedPlans, type CompareOptions, type DeltaUnit, type FlagDelta, type FindingsDelta, type MetricDelta, type NodeComparison, type NodeStatus, type PlanComparison, type Trend } from './compare';
