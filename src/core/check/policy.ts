// The gate's decision: each query's findings and its plan compared with the lock, under the
// configuration, the waivers and the inline ignores. Default policy: a query new to the lock fails on a
// structural finding that holds whatever the data (no index can serve its filter or its order, deep
// skip/OFFSET paging); a query in the lock fails when its plan got worse (an index it read is no longer
// read, it now sorts in memory, a deterministic counter grew by more than the threshold); an expired
// waiver fails. A query that cannot be explained is reported with why, and fails nothing.

import type { InlineIgnore, LineRange } from './collect';
import { formatCount, formatShare } from '../format';
import { CheckRules, ruleInfo, type Level, type Tier } from './rules';
import { DiagnosticCodes } from '../lint/codes';
import { canonicalJson, type Lock, type LockEntry, type Waiver } from './lock';
import type { PlanCounters, PlanSignature } from './signature';
import { coverJustification, coverOf, expiredOf, expiredSentence, waiversOf } from './waivers';

/** One finding of the editor's rules on one query, with its tier. */
export interface CheckFinding {
  rule: string;
  tier: Tier;
  severity: 'warning' | 'information' | 'hint';
  message: string;
  range: LineRange;
  /** The index that would fix it, as the statement that builds it. */
  suggestion?: string;
}

/** One query after the finder and the explain. */
export interface QueryRun {
  key: string;
  engine: 'mongodb' | 'postgres';
  file: string;
  scope?: string;
  shape: string;
  title: string;
  range: LineRange;
  ignores: InlineIgnore[];
  status: 'explained' | 'not-explainable';
  /** With not-explainable: why, one sentence. */
  why?: string;
  signature?: PlanSignature;
  counters?: PlanCounters;
  findings: CheckFinding[];
  /** `qpi check --measure`: the measured advice on a query that failed the gate, or why it was not measured. */
  measurement?: CheckMeasurement;
}

/** What one measured run did, as the advice service measured it: the work figure in `unit`, in words, and the plan. */
export interface MeasuredFigures {
  work: number;
  text: string;
  plan: string;
}

/**
 * The measured advice `qpi check --measure` attaches to a query that failed the gate: the measured first
 * suggestion (the one `qpi advise --uri` prints first) with today's work and the work with its index, or
 * why nothing was measured.
 */
export type CheckMeasurement =
  | {
      status: 'measured';
      /** The index in words: `orders (status)`, `{user_id: 1, created_at: -1}`. */
      index: string;
      /** The statement that builds it; absent when the first suggestion keeps an existing index or builds none. */
      createIndex?: string;
      /** create: a new index; keep: an existing index already serves; none: no index does less work. */
      action: 'create' | 'keep' | 'none';
      /** How it was measured: "measured from a sample of 5,000 of 5,000 documents". */
      label: string;
      /** The unit of `work`: "keys + documents examined", "buffers". */
      unit: string;
      /** The query as it runs today, and with the suggested index. */
      before?: MeasuredFigures;
      after?: MeasuredFigures;
      /** The measurement confirms the finding: the index it suggests does less work than today's plan. */
      confirms: boolean;
    }
  | { status: 'not-measured'; reason: string };

/** The deterministic counters a threshold can be set on, per engine. */
export const GATED_COUNTERS = ['cost', 'sharedBlocks', 'keysPerReturned', 'docsPerReturned'] as const;
export type GatedCounter = (typeof GATED_COUNTERS)[number];

export interface RuleConfig {
  /** Fail the gate on this rule (for a new query; for a regression rule, on the regression); default per rule. */
  fail?: boolean;
  /** The level the rule is reported at when it does not fail. */
  level?: Level;
  /**
   * qpi.check.counters-worse: the growth that fails, as a fraction (0.1 is 10%), for every counter or
   * per counter (a counter not named keeps the default).
   */
  threshold?: number | Partial<Record<GatedCounter, number>>;
}

/** What a configuration says about some queries: the same rules and ignores, for those queries only. */
export interface QueryConfig {
  rules?: Record<string, RuleConfig>;
  ignore?: string[];
}

/** qpi.config.json. */
export interface CheckConfig {
  rules?: Record<string, RuleConfig>;
  /** Rules never reported as failures (listed as suppressed). */
  ignore?: string[];
  /**
   * Per query: a selector (a path relative to the configuration's folder, a file or a folder ending in
   * `/`, optionally followed by the rest of a lock key, word by word: engine, scope, hash; `*` for any
   * word) to the rules and ignores that apply to the queries it selects. A longer selector wins.
   */
  queries?: Record<string, QueryConfig>;
  /** The configuration's folder relative to the lock's (repository-relative, '/' separated; '' at the root). Set by the reader, not written in the file. */
  base?: string;
}

/**
 * The configuration that applies to one query: the file's rules and ignores, overridden field by field
 * by every selector in `queries` that selects the query, shorter selectors first.
 */
export function configForQuery(config: CheckConfig, key: string): CheckConfig {
  if (!config.queries) return config;
  const hits = Object.keys(config.queries).filter((s) => selects(s, key, config.base ?? '')).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  if (hits.length === 0) return config;
  const rules: Record<string, RuleConfig> = { ...config.rules };
  const ignore = new Set(config.ignore ?? []);
  for (const s of hits) {
    const q = config.queries[s]!;
    for (const [id, r] of Object.entries(q.rules ?? {})) rules[id] = { ...rules[id], ...r };
    for (const id of q.ignore ?? []) ignore.add(id);
  }
  return { ...config, rules, ignore: [...ignore].sort() };
}

/** Whether a selector selects the query of `key`; its path is relative to `base`. */
export function selects(selector: string, key: string, base: string): boolean {
  const words = selector.trim().split(/\s+/);
  const path = words[0]!.replace(/^\.\//, '');
  const full = base === '' || path.startsWith('/') ? path.replace(/^\//, '') : `${base}/${path}`;
  const keyWords = key.split(' ');
  const file = keyWords[0]!;
  const fileOk = full.endsWith('/') ? file.startsWith(full) : file === full || (words.length === 1 && file.startsWith(`${full}/`));
  if (!fileOk) return false;
  // The key's words after the file: engine, scope, hash, and `#n` for the n-th of one shape.
  const rest = keyWords.slice(1);
  for (let i = 1; i < words.length; i++) if (words[i] !== '*' && words[i] !== rest[i - 1]) return false;
  return true;
}

export interface Suppression {
  kind: 'inSource' | 'external';
  justification: string;
}

/** One thing said about one query: a finding or a regression. */
export interface GateResult {
  rule: string;
  tier: Tier;
  level: Level;
  message: string;
  range: LineRange;
  /** It fails the gate (after suppressions: a suppressed result never fails). */
  fails: boolean;
  suppressed?: Suppression;
  suggestion?: string;
  /** qpi.check.lost-index: the table or collection and the index it no longer reads. */
  lost?: { target: string; index: string };
  /** Where the cause is written: the migration or schema statement that dropped the index. */
  related?: RelatedPlace[];
  /** `qpi check --measure`: the measured advice on the failing query this result is about. */
  measured?: CheckMeasurement;
}

/** A line of a migration or schema file, and what it did. */
export interface RelatedPlace {
  file: string;
  line: number;
  column: number;
  message: string;
}

export type BaselineState = 'new' | 'unchanged' | 'updated';

export interface QueryVerdict {
  run: QueryRun;
  outcome: 'failed' | 'passed' | 'not-explainable';
  baselineState: BaselineState;
  results: GateResult[];
  /** The lock's entry it was compared with. */
  baseline?: LockEntry;
}

export interface GateDecision {
  verdicts: QueryVerdict[];
  /** Expired waivers whose query is not among those checked: they fail too. */
  expiredWaivers: Waiver[];
  passed: boolean;
}

export const DEFAULT_THRESHOLD = 0.1;

export interface DecideOptions {
  /**
   * Whether a lock key belongs to the part of the repository this run checks; the rest (other files
   * under --changed-since, other shards) is neither judged nor reported missing. Default: every key.
   */
  inPart?: (key: string) => boolean;
}

/**
 * Decides the gate. `configOf` gives the configuration that applies to a file (the nearest
 * qpi.config.json); `today` is YYYY-MM-DD (a waiver holds through its expiry day).
 */
export function decide(runs: readonly QueryRun[], lock: Lock | undefined, configOf: (file: string) => CheckConfig, today: string, opts: DecideOptions = {}): GateDecision {
  const verdicts = runs.map((run) => decideQuery(run, lock, configForQuery(configOf(run.file), run.key), today));
  const checked = new Set(runs.map((r) => r.key));
  // A waiver of a query outside this run's part (--changed-since, --shard) is another run's to judge.
  const inPart = opts.inPart ?? (() => true);
  const expiredWaivers = (lock?.waivers ?? []).filter((w) => w.expires < today && !checked.has(w.query) && inPart(w.query));
  return { verdicts, expiredWaivers, passed: expiredWaivers.length === 0 && verdicts.every((v) => v.outcome !== 'failed') };
}

function decideQuery(run: QueryRun, lock: Lock | undefined, config: CheckConfig, today: string): QueryVerdict {
  const baseline = lock?.queries[run.key];
  const explained = run.status === 'explained';
  const results: GateResult[] = [];
  const failsByDefault = (rule: string): boolean => config.rules?.[rule]?.fail ?? ruleInfo(rule).failsNew;
  for (const f of run.findings) {
    // New: the query is not in the lock. Gained: it is, without a finding of this rule.
    const newHere = !baseline || !baseline.findings.includes(f.rule);
    // A table the CI database does not have is why the query was not explained: it may fail the gate all the same.
    const fails = (explained || f.rule === DiagnosticCodes.doesNotExist) && newHere && f.tier === 'structural' && f.severity === 'warning' && failsByDefault(f.rule);
    results.push(result(f.rule, f.tier, f.message, f.range, fails, config, f.severity, f.suggestion));
  }
  if (explained && baseline?.signature && run.signature) {
    for (const r of regressions(run, baseline, config)) {
      const fails = config.rules?.[r.rule]?.fail ?? true;
      results.push({ ...result(r.rule, r.tier, r.message, run.range, fails, config, 'warning'), ...(r.lost ? { lost: r.lost } : {}) });
    }
  }
  // A plan the lock holds that cannot be had now: the gate would stop guarding the query without a word.
  if (!explained && baseline?.signature) {
    results.push(result(CheckRules.noLongerExplained, 'structural', `This query was explained when the lock was written and cannot be now: ${run.why ?? 'no reason given'}.`, run.range, true, config, 'warning'));
  }
  const waivers = waiversOf(lock, run.key);
  for (const w of expiredOf(waivers, today)) {
    results.push(result(CheckRules.waiverExpired, 'structural', expiredSentence(w), run.range, true, config, 'warning'));
  }
  for (const r of results) {
    if (r.rule === CheckRules.waiverExpired) continue;
    const s = suppression(r.rule, run.ignores, waivers, config, today);
    if (s) {
      r.suppressed = s;
      r.fails = false;
      if (r.level === 'error') r.level = 'warning';
    }
  }
  if (run.measurement) attachMeasurement(results, run.measurement);
  const failed = results.some((r) => r.fails);
  const outcome = failed ? 'failed' : explained ? 'passed' : 'not-explainable';
  const state: BaselineState = !baseline ? 'new' : sameAsBaseline(run, baseline) ? 'unchanged' : 'updated';
  return { run, outcome, baselineState: state, results, ...(baseline ? { baseline } : {}) };
}

/** The results a measurement speaks to: a finding of a missing index or a plan that got worse, not the gate's own bookkeeping. */
const NOT_MEASURED_RULES = new Set<string>([CheckRules.noLongerExplained, CheckRules.waiverExpired, DiagnosticCodes.doesNotExist]);

/**
 * `qpi check --measure`: each failing result of the query carries the measured advice; where the
 * measurement confirms it (the measured first suggestion builds an index that does less work than today's
 * plan), its tier becomes measured and its suggestion the measured index.
 */
function attachMeasurement(results: GateResult[], m: CheckMeasurement): void {
  for (const r of results) {
    if (!r.fails || NOT_MEASURED_RULES.has(r.rule)) continue;
    r.measured = m;
    if (m.status !== 'measured' || !m.confirms) continue;
    r.tier = 'measured';
    if (m.createIndex !== undefined) r.suggestion = m.createIndex;
  }
}

function result(rule: string, tier: Tier, message: string, range: LineRange, fails: boolean, config: CheckConfig, severity: CheckFinding['severity'], suggestion?: string): GateResult {
  const info = ruleInfo(rule);
  const quiet: Level = severity === 'warning' ? (info.level === 'error' ? 'warning' : info.level) : 'note';
  const level: Level = fails ? 'error' : config.rules?.[rule]?.level ?? quiet;
  return { rule, tier, level, message, range, fails, ...(suggestion ? { suggestion } : {}) };
}

function suppression(rule: string, ignores: readonly InlineIgnore[], waivers: readonly Waiver[], config: CheckConfig, today: string): Suppression | undefined {
  const cover = coverOf(rule, ignores, waivers, today);
  if (cover) return { kind: cover.by === 'ignore' ? 'inSource' : 'external', justification: coverJustification(cover) };
  if (config.ignore?.includes(rule)) return { kind: 'external', justification: 'Ignored by qpi.config.json.' };
  return undefined;
}

interface Regression {
  rule: string;
  tier: Tier;
  message: string;
  lost?: { target: string; index: string };
}

const INDEXED = new Set(['index-scan', 'index-only', 'bitmap', 'id-lookup']);

/** How the plan got worse than the lock's: lost indexes, a new in-memory sort, counters beyond the threshold. */
export function regressions(run: QueryRun, baseline: LockEntry, config: CheckConfig): Regression[] {
  const out: Regression[] = [];
  const before = baseline.signature!;
  const now = run.signature!;
  const thing = run.engine === 'mongodb' ? 'collection' : 'table';
  for (const a of before.access) {
    if (!INDEXED.has(a.path) || a.index === undefined) continue;
    const still = now.access.filter((b) => b.target === a.target);
    if (still.some((b) => INDEXED.has(b.path))) continue;
    const how = still.length === 0 ? 'is not read the same way' : still.some((b) => b.path === 'full-scan') ? 'is read in full' : `is read by ${still.map((b) => b.path).join(', ')}`;
    out.push({ rule: CheckRules.lostIndex, tier: 'structural', message: `The ${thing} ${a.target} was read through the index ${a.index} when the lock was written; it now ${how} (${now.stages}).`, lost: { target: a.target, index: a.index } });
  }
  if (!before.blockingSort && now.blockingSort) {
    out.push({ rule: CheckRules.newBlockingSort, tier: 'structural', message: `The plan now sorts in memory (${now.stages}); when the lock was written it did not (${before.stages}).` });
  }
  const given = config.rules?.[CheckRules.countersWorse]?.threshold;
  const thresholdOf = (name: GatedCounter): number => (typeof given === 'number' ? given : given?.[name]) ?? DEFAULT_THRESHOLD;
  const was = baseline.counters ?? {};
  const is = run.counters ?? {};
  const worse: string[] = [];
  const compare = (name: GatedCounter, label: string, floor: number): void => {
    const a = (was as Record<string, number | undefined>)[name];
    const b = (is as Record<string, number | undefined>)[name];
    if (a === undefined || b === undefined) return;
    const threshold = thresholdOf(name);
    if (b > a * (1 + threshold) && b - a > floor) worse.push(`${label} ${formatCount(a)} -> ${formatCount(b)} (+${formatShare(a === 0 ? 1 : (b - a) / a)}, threshold ${formatShare(threshold)})`);
  };
  if (run.engine === 'postgres') {
    compare('cost', 'estimated cost', 0.01);
    compare('sharedBlocks', 'shared blocks', 1);
  } else {
    compare('keysPerReturned', 'keys examined per returned', 0.5);
    compare('docsPerReturned', 'documents examined per returned', 0.5);
  }
  if (worse.length > 0) {
    out.push({
      rule: CheckRules.countersWorse,
      tier: run.engine === 'mongodb' ? 'measured' : 'statistical',
      message: `The plan does more work than when the lock was written, beyond the threshold: ${worse.join('; ')}.`,
    });
  }
  return out;
}

function sameAsBaseline(run: QueryRun, baseline: LockEntry): boolean {
  const rules = [...new Set(run.findings.map((f) => f.rule))].sort();
  return canonicalJson(rules) === canonicalJson(baseline.findings)
    && canonicalJson(run.signature ?? null) === canonicalJson(baseline.signature ?? null)
    && canonicalJson(run.counters ?? null) === canonicalJson(baseline.counters ?? null);
}

/**
 * The lock `--update` writes: every query checked, with its signature, counters and finding rules; the
 * waivers of the previous lock kept as people wrote them.
 */
export function nextLock(runs: readonly QueryRun[], previous: Lock | undefined, environment: Lock['environment'], opts: DecideOptions = {}): Lock {
  const queries: Record<string, LockEntry> = {};
  // Entries of the part of the repository this run did not check are kept as they were.
  if (opts.inPart) for (const [k, e] of Object.entries(previous?.queries ?? {})) if (!opts.inPart(k)) queries[k] = e;
  for (const r of runs) {
    queries[r.key] = {
      engine: r.engine,
      file: r.file,
      ...(r.scope !== undefined ? { scope: r.scope } : {}),
      shape: r.shape,
      ...(r.signature ? { signature: r.signature } : {}),
      ...(r.counters ? { counters: r.counters } : {}),
      findings: [...new Set(r.findings.map((f) => f.rule))].sort(),
      ...(r.status === 'not-explainable' && r.why ? { notExplainable: r.why } : {}),
    };
  }
  return { version: 1, environment: { ...previous?.environment, ...environment }, queries, waivers: previous?.waivers ?? [] };
}
