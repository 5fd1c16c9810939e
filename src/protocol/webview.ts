// The messages between the extension host and the plan view (webview/), in both directions, plus the
// runtime guards each side runs on what it receives and the page skeleton with its Content Security
// Policy. Messages cross a process boundary as structured clones, so nothing here is trusted by type
// alone: the view validates every inbound message with `parseHostMessage` and the host should run
// `parseViewMessage` on what the view sends back.

import type { Engine, Finding, Plan, PlanNode, Severity } from '../core/model';

/** Bumped when a message changes shape; the view reports it in `ready` so a host can refuse a stale view. */
export const WEBVIEW_PROTOCOL_VERSION = 1;

// ---- host -> view --------------------------------------------------------------------------------

/**
 * An index or rewrite suggestion as the view lists it: the advisor's Suggestion (src/core/advice/types.ts)
 * flattened to display text by the host, so the view needs no advice types. Every field but id and title
 * is optional; the view shows what is there.
 */
export interface SuggestionView {
  /** Stable within one showPlan; echoed back in `verifySuggestion`. */
  id: string;
  /** "CREATE INDEX ...", "Keep using orders_pkey", "No new index: ...". */
  title: string;
  /** Plain-words reason, one to three sentences (the rule applied to this query). */
  detail?: string;
  /** The statement to run: `db.c.createIndex({...})` or `CREATE INDEX ...`. */
  ddl?: string;
  /** The advisor's rule name (esr, ers, explode-in, keyset, union-all, existing...). */
  rule?: string;
  /** The plan the index should give: "LIMIT > FETCH > IXSCAN, no blocking SORT". */
  expectedPlan?: string;
  /** What the index costs or risks, in one or two sentences. */
  tradeOff?: string;
  /** Conditions on the data that would change the choice, one sentence each. */
  conditions?: string[];
  /** The existing index that already serves the query ("keep using X"). */
  keep?: string;
  /** Existing indexes the new one makes redundant. */
  replaces?: string[];
  /** Rewrites of the query that go with the suggestion; `text` is ready to paste. */
  rewrites?: SuggestionRewrite[];
  /** Nodes the suggestion would change, by PlanNode.id. */
  nodeIds?: number[];
  /** Whether the host can verify it (hypothetical index, a rolled-back build, or a sampled trial). */
  verifiable?: boolean;
  /** Last known verification state; updated by `suggestionStatus`. */
  status?: SuggestionStatus;
  statusDetail?: string;
  /** The measured figures behind the status, once verified or rejected. */
  verdict?: SuggestionVerdict;
}

export interface SuggestionRewrite {
  rule: string;
  description: string;
  text: string;
  /** What to check before using it. */
  caveat?: string;
}

/**
 * What a verification measured, in the method's unit: estimated cost for PostgreSQL, keys + documents
 * examined + documents sorted in memory for a MongoDB trial on a sample.
 */
export interface SuggestionVerdict {
  /** sampled (MongoDB trial on a scratch collection), hypopg, trial-index (built and rolled back), hinted-explain. */
  method: string;
  /** In words: "a random sample of 1,000 of 20,000 documents", "a hypothetical index (HypoPG)". */
  how: string;
  unit?: string;
  /** What `before` and `after` were measured on: "today" / "with the index", "collection scan" / "through X". */
  beforeLabel: string;
  afterLabel: string;
  before?: number;
  after?: number;
  planBefore?: string;
  planAfter?: string;
  /** MongoDB: keys examined, documents examined, sorted in memory, returned, before and after. */
  figuresBefore?: Record<string, number>;
  figuresAfter?: Record<string, number>;
  /** MongoDB trial: documents in the sample, and in the collection. */
  sampleSize?: number;
  collectionSize?: number;
  /** The planner chose the index by itself (without a hint). */
  usedByPlanner?: boolean;
}

/**
 * Where a suggestion stands. After `verified` the view offers Create Index; the host then reports
 * `creating` while the index builds and `created` (or `failed`, with the reason in `detail`) when it ends.
 */
export type SuggestionStatus = 'unverified' | 'verifying' | 'verified' | 'rejected' | 'failed' | 'creating' | 'created';

/**
 * Sent by the host after `ready`, and again whenever the user explains another query: draws the plan,
 * its findings and suggestions. Replaces whatever the view showed. Post the plan through `wirePlan`:
 * VS Code serialises messages as JSON, and `plan.nodes` would repeat every subtree once per ancestor.
 */
export interface ShowPlanMessage {
  type: 'showPlan';
  /** Panel heading, e.g. the collection or the first words of the query. */
  title: string;
  plan: Plan;
  findings: Finding[];
  /**
   * The explain output as the user gave it, shown verbatim in the Raw tab. The extension does not send
   * it here: it sets `hasRawText` and answers `rawTextWanted` with `rawText` when the tab is opened, so
   * the message that draws the plan stays smaller than the plan's own text.
   */
  rawText?: string;
  /** The host holds the explain output and sends it on `rawTextWanted`. */
  hasRawText?: boolean;
  suggestions?: SuggestionView[];
}

/**
 * Sent by the host to show two plans of the same query (before/after an index, a rewrite, or two runs).
 * The view computes the comparison itself with core's comparePlans (pure code, no DOM and no driver, so
 * the host posts only the plans it already has) and draws the two trees side by side with nodes matched,
 * changed nodes marked, the verdict and the totals; buttons switch to either plan alone.
 */
export interface ShowComparisonMessage {
  type: 'showComparison';
  title: string;
  before: { label: string; plan: Plan; findings: Finding[] };
  after: { label: string; plan: Plan; findings: Finding[] };
}

export type ThemeKind = 'light' | 'dark' | 'high-contrast' | 'high-contrast-light';

/**
 * Sent by a host that renders the view outside VS Code (tests, a browser preview). Inside VS Code the
 * view follows the body classes VS Code sets and this message is not needed.
 */
export interface SetThemeMessage {
  type: 'setTheme';
  kind: ThemeKind;
}

/** Sent by the host when something outside the panel (a CodeLens, a diagnostic) points at a node. */
export interface FocusNodeMessage {
  type: 'focusNode';
  nodeId: number;
}

/**
 * Sent by the host when a verification asked for by `verifySuggestion`, or an index build asked for by
 * `createIndex`, progresses or ends. A verdict sent with `verified` stays shown through `creating` and
 * `created` when later messages carry none.
 */
export interface SuggestionStatusMessage {
  type: 'suggestionStatus';
  id: string;
  status: SuggestionStatus;
  /** One sentence with the measured difference or the reason it failed. */
  detail?: string;
  /** The figures behind a verified or rejected status. */
  verdict?: SuggestionVerdict;
}

/** Sent by the host in answer to `rawTextWanted`: the explain output of the plan shown. */
export interface RawTextMessage {
  type: 'rawText';
  text: string;
}

export type HostToViewMessage =
  | RawTextMessage
  | ShowPlanMessage
  | ShowComparisonMessage
  | SetThemeMessage
  | FocusNodeMessage
  | SuggestionStatusMessage;

// ---- view -> host --------------------------------------------------------------------------------

/**
 * Sent once by the view when its script has loaded and it listens for messages: the host waits for it
 * before the first `showPlan` instead of guessing with a delay.
 */
export interface ReadyMessage {
  type: 'ready';
  protocolVersion: number;
}

/** Sent when the user clicks a Copy button; the host writes the text to the clipboard (the view may not). */
export interface CopyTextMessage {
  type: 'copyText';
  text: string;
  /** What was copied, for the confirmation the host shows ("Copied the index definition"). */
  what?: string;
}

/** Sent when the user asks to check a suggestion against the server; answered by `suggestionStatus`. */
export interface VerifySuggestionMessage {
  type: 'verifySuggestion';
  id: string;
}

/**
 * Sent when the user clicks Create Index under a suggestion whose Verify succeeded. The host builds the
 * suggestion's own `ddl` (never text from the view), after asking the user to confirm with the connection
 * named, and answers with `suggestionStatus`: `creating`, then `created` or `failed`. A cancelled
 * confirmation is answered with `verified` so the button comes back.
 */
export interface CreateIndexMessage {
  type: 'createIndex';
  id: string;
}

/**
 * Sent when the user activates a node (double-click, or the Reveal button in the details panel): the
 * host may reveal the matching text of the explain output or the query in an editor.
 */
export interface OpenNodeMessage {
  type: 'openNode';
  nodeId: number;
  kind: string;
  label: string;
}

/** Sent when the view hits an error of its own (a bug), so the host can log it; the user sees one line. */
export interface ReportErrorMessage {
  type: 'reportError';
  message: string;
  detail?: string;
}

/**
 * Sent when the user exports the drawing or the plan: the view renders the bytes and the host asks
 * where to save them (a webview cannot write files).
 */
export interface SaveFileMessage {
  type: 'saveFile';
  /** Suggested file name, no directory. */
  fileName: string;
  mimeType: 'image/svg+xml' | 'image/png' | 'application/json';
  /** 'utf8' for SVG and JSON text, 'base64' for PNG bytes. */
  encoding: 'utf8' | 'base64';
  content: string;
}

/** Sent when the user opens the Raw tab of a plan whose message said `hasRawText`; answered by `rawText`. */
export interface RawTextWantedMessage {
  type: 'rawTextWanted';
}

export type ViewToHostMessage =
  | RawTextWantedMessage
  | ReadyMessage
  | CopyTextMessage
  | VerifySuggestionMessage
  | CreateIndexMessage
  | OpenNodeMessage
  | ReportErrorMessage
  | SaveFileMessage;

// ---- guards --------------------------------------------------------------------------------------

export type Parsed<T> = { ok: true; message: T } | { ok: false; reason: string };

/** Largest tree a message may carry; deeper structures are refused rather than walked forever. */
const MAX_NODES = 500_000;

class Invalid extends Error {}

function fail(path: string, what: string): never {
  throw new Invalid(`${path} ${what}`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function record(v: unknown, path: string): Record<string, unknown> {
  if (!isRecord(v)) fail(path, 'is not an object');
  return v;
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string') fail(path, 'is not a string');
  return v;
}

function optStr(v: unknown, path: string): void {
  if (v !== undefined) str(v, path);
}

function num(v: unknown, path: string): number {
  if (typeof v !== 'number' || Number.isNaN(v)) fail(path, 'is not a number');
  return v;
}

function int(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(path, 'is not an integer');
  return v;
}

function strArray(v: unknown, path: string): void {
  if (!Array.isArray(v)) fail(path, 'is not a list');
  v.forEach((s, i) => str(s, `${path}[${i}]`));
}

const BOOLEAN_METRICS = new Set(['neverExecuted', 'isEOF', 'usedDisk']);
const STRING_METRICS = new Set(['estimateDirection', 'sortMethod', 'sortSpaceType']);
const STRING_DETAILS = new Set([
  'indexName', 'direction', 'relationName', 'schema', 'alias', 'joinType', 'strategy', 'operation',
  'parentRelationship', 'subplanName', 'cteName', 'shardName',
]);
const STRING_LIST_DETAILS = new Set(['sortKey', 'groupKey', 'presortedKey', 'output']);

function numberRecord(v: unknown, path: string): void {
  const r = record(v, path);
  for (const [k, x] of Object.entries(r)) num(x, `${path}.${k}`);
}

function metrics(v: unknown, path: string): void {
  const m = record(v, path);
  for (const [k, x] of Object.entries(m)) {
    if (x === undefined) continue;
    const p = `${path}.${k}`;
    if (BOOLEAN_METRICS.has(k)) {
      if (typeof x !== 'boolean') fail(p, 'is not a boolean');
    } else if (STRING_METRICS.has(k)) {
      str(x, p);
    } else if (k === 'buffers') {
      numberRecord(x, p);
    } else if (k === 'workers') {
      if (!Array.isArray(x)) fail(p, 'is not a list');
      x.forEach((w, i) => {
        const wr = record(w, `${p}[${i}]`);
        for (const [wk, wx] of Object.entries(wr)) {
          if (wx === undefined) continue;
          if (wk === 'buffers') numberRecord(wx, `${p}[${i}].buffers`);
          else if (wk === 'sortMethod' || wk === 'sortSpaceType') str(wx, `${p}[${i}].${wk}`);
          else num(wx, `${p}[${i}].${wk}`);
        }
      });
    } else {
      num(x, p);
    }
  }
}

function details(v: unknown, path: string): void {
  const d = record(v, path);
  for (const [k, x] of Object.entries(d)) {
    if (x === undefined) continue;
    const p = `${path}.${k}`;
    if (STRING_DETAILS.has(k)) str(x, p);
    else if (STRING_LIST_DETAILS.has(k)) strArray(x, p);
    else if (k === 'isMultiKey' || k === 'parallelAware') {
      if (typeof x !== 'boolean') fail(p, 'is not a boolean');
    } else if (k === 'keyPattern' || k === 'sortPattern') {
      for (const [kk, kv] of Object.entries(record(x, p))) {
        if (typeof kv !== 'number' && typeof kv !== 'string') fail(`${p}.${kk}`, 'is not a number or a string');
      }
    } else if (k === 'indexBounds' || k === 'multiKeyPaths') {
      for (const [kk, kv] of Object.entries(record(x, p))) strArray(kv, `${p}.${kk}`);
    } else if (k === 'conditions') {
      for (const [kk, kv] of Object.entries(record(x, p))) str(kv, `${p}.${kk}`);
    }
  }
}

/** Checks one tree: shapes, unique ids, no cycles, bounded size. Returns the number of nodes. */
function tree(root: unknown, path: string, budget: { left: number }): number {
  const seenObjects = new Set<object>();
  const ids = new Set<number>();
  const stack: { v: unknown; p: string }[] = [{ v: root, p: path }];
  let count = 0;
  while (stack.length > 0) {
    const { v, p } = stack.pop()!;
    const n = record(v, p);
    if (seenObjects.has(n)) fail(p, 'appears twice in the tree');
    seenObjects.add(n);
    if (--budget.left < 0) fail(path, `has more than ${MAX_NODES} nodes`);
    count++;
    const id = int(n.id, `${p}.id`);
    if (ids.has(id)) fail(`${p}.id`, `repeats id ${id}`);
    ids.add(id);
    str(n.kind, `${p}.kind`);
    str(n.label, `${p}.label`);
    optStr(n.role, `${p}.role`);
    metrics(n.metrics, `${p}.metrics`);
    details(n.details, `${p}.details`);
    record(n.raw, `${p}.raw`);
    if (!Array.isArray(n.children)) fail(`${p}.children`, 'is not a list');
    for (let i = n.children.length - 1; i >= 0; i--) stack.push({ v: n.children[i], p: `${p}.children[${i}]` });
  }
  return count;
}

const ENGINES: readonly Engine[] = ['mongodb', 'postgres'];
const SEVERITIES: readonly Severity[] = ['high', 'medium', 'low', 'info'];
const THEMES: readonly ThemeKind[] = ['light', 'dark', 'high-contrast', 'high-contrast-light'];
const STATUSES: readonly SuggestionStatus[] = ['unverified', 'verifying', 'verified', 'rejected', 'failed', 'creating', 'created'];

function plan(v: unknown, path: string): Plan {
  const p = record(v, path);
  if (!ENGINES.includes(p.engine as Engine)) fail(`${path}.engine`, 'is neither mongodb nor postgres');
  str(p.format, `${path}.format`);
  optStr(p.serverVersion, `${path}.serverVersion`);
  const budget = { left: MAX_NODES };
  const count = tree(p.root, `${path}.root`, budget);
  const order = preorder(p.root as PlanNode);
  order.forEach((n, i) => {
    if (n.id !== i) fail(`${path}.root`, `numbers node ${n.id} at preorder position ${i}`);
  });
  if (p.nodes === undefined || (Array.isArray(p.nodes) && p.nodes.length === 0 && count > 0)) {
    // Sent slim (see wirePlan): the index is rebuilt here, in the same preorder derive() uses.
    p.nodes = order;
  } else {
    if (!Array.isArray(p.nodes)) fail(`${path}.nodes`, 'is not a list');
    if (p.nodes.length !== count) fail(`${path}.nodes`, `lists ${p.nodes.length} nodes but the tree has ${count}`);
    p.nodes.forEach((n, i) => {
      if (!isRecord(n) || n.id !== i) fail(`${path}.nodes[${i}]`, 'does not have id ' + i);
    });
  }
  if (!Array.isArray(p.rejectedPlans)) fail(`${path}.rejectedPlans`, 'is not a list');
  p.rejectedPlans.forEach((r, i) => {
    const rp = record(r, `${path}.rejectedPlans[${i}]`);
    int(rp.index, `${path}.rejectedPlans[${i}].index`);
    optStr(rp.shardName, `${path}.rejectedPlans[${i}].shardName`);
    tree(rp.root, `${path}.rejectedPlans[${i}].root`, budget);
    if (rp.trial !== undefined) numberRecord(rp.trial, `${path}.rejectedPlans[${i}].trial`);
    if (rp.maxima !== undefined) numberRecord(rp.maxima, `${path}.rejectedPlans[${i}].maxima`);
  });
  const totals = record(p.totals, `${path}.totals`);
  for (const [k, x] of Object.entries(totals)) {
    if (x === undefined) continue;
    if (k === 'buffers') numberRecord(x, `${path}.totals.buffers`);
    else num(x, `${path}.totals.${k}`);
  }
  numberRecord(p.maxima, `${path}.maxima`);
  for (const k of ['exclusiveTimeMs', 'rowsReturned', 'keysExamined', 'docsExamined', 'sharedBlocks', 'estimateFactor', 'wastedReads']) {
    num((p.maxima as Record<string, unknown>)[k], `${path}.maxima.${k}`);
  }
  if (p.mongo !== undefined) record(p.mongo, `${path}.mongo`);
  if (p.postgres !== undefined) record(p.postgres, `${path}.postgres`);
  strArray(p.warnings, `${path}.warnings`);
  return p as unknown as Plan;
}

function findings(v: unknown, path: string, nodeCount: number): Finding[] {
  if (!Array.isArray(v)) fail(path, 'is not a list');
  v.forEach((f, i) => {
    const p = `${path}[${i}]`;
    const r = record(f, p);
    str(r.code, `${p}.code`);
    if (!SEVERITIES.includes(r.severity as Severity)) fail(`${p}.severity`, 'is not high, medium, low or info');
    if (r.good !== undefined && typeof r.good !== 'boolean') fail(`${p}.good`, 'is not a boolean');
    if (r.nodeId !== undefined) {
      const id = int(r.nodeId, `${p}.nodeId`);
      if (id < 0 || id >= nodeCount) fail(`${p}.nodeId`, `points at no node (${id})`);
    }
    str(r.title, `${p}.title`);
    str(r.message, `${p}.message`);
    numberRecord(r.numbers, `${p}.numbers`);
  });
  return v as Finding[];
}

function suggestions(v: unknown, path: string): void {
  if (!Array.isArray(v)) fail(path, 'is not a list');
  const ids = new Set<string>();
  v.forEach((s, i) => {
    const p = `${path}[${i}]`;
    const r = record(s, p);
    const id = str(r.id, `${p}.id`);
    if (ids.has(id)) fail(`${p}.id`, `repeats id ${id}`);
    ids.add(id);
    str(r.title, `${p}.title`);
    optStr(r.detail, `${p}.detail`);
    optStr(r.ddl, `${p}.ddl`);
    optStr(r.statusDetail, `${p}.statusDetail`);
    if (r.nodeIds !== undefined) {
      if (!Array.isArray(r.nodeIds)) fail(`${p}.nodeIds`, 'is not a list');
      r.nodeIds.forEach((n, j) => int(n, `${p}.nodeIds[${j}]`));
    }
    if (r.verifiable !== undefined && typeof r.verifiable !== 'boolean') fail(`${p}.verifiable`, 'is not a boolean');
    if (r.status !== undefined && !STATUSES.includes(r.status as SuggestionStatus)) fail(`${p}.status`, 'is not a known status');
    optStr(r.rule, `${p}.rule`);
    optStr(r.expectedPlan, `${p}.expectedPlan`);
    optStr(r.tradeOff, `${p}.tradeOff`);
    optStr(r.keep, `${p}.keep`);
    if (r.conditions !== undefined) strArray(r.conditions, `${p}.conditions`);
    if (r.replaces !== undefined) strArray(r.replaces, `${p}.replaces`);
    if (r.rewrites !== undefined) {
      if (!Array.isArray(r.rewrites)) fail(`${p}.rewrites`, 'is not a list');
      r.rewrites.forEach((w, j) => {
        const q = `${p}.rewrites[${j}]`;
        const rw = record(w, q);
        str(rw.rule, `${q}.rule`);
        str(rw.description, `${q}.description`);
        str(rw.text, `${q}.text`);
        optStr(rw.caveat, `${q}.caveat`);
      });
    }
    if (r.verdict !== undefined) verdict(r.verdict, `${p}.verdict`);
  });
}

function verdict(v: unknown, path: string): void {
  const r = record(v, path);
  str(r.method, `${path}.method`);
  str(r.how, `${path}.how`);
  str(r.beforeLabel, `${path}.beforeLabel`);
  str(r.afterLabel, `${path}.afterLabel`);
  optStr(r.unit, `${path}.unit`);
  optStr(r.planBefore, `${path}.planBefore`);
  optStr(r.planAfter, `${path}.planAfter`);
  for (const k of ['before', 'after', 'sampleSize', 'collectionSize']) if (r[k] !== undefined) num(r[k], `${path}.${k}`);
  if (r.figuresBefore !== undefined) numberRecord(r.figuresBefore, `${path}.figuresBefore`);
  if (r.figuresAfter !== undefined) numberRecord(r.figuresAfter, `${path}.figuresAfter`);
  if (r.usedByPlanner !== undefined && typeof r.usedByPlanner !== 'boolean') fail(`${path}.usedByPlanner`, 'is not a boolean');
}

function planWithFindings(v: unknown, path: string): void {
  const r = record(v, path);
  str(r.label, `${path}.label`);
  const pl = plan(r.plan, `${path}.plan`);
  findings(r.findings, `${path}.findings`, pl.nodes.length);
}

function guard<T>(check: () => T): Parsed<T> {
  try {
    return { ok: true, message: check() };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, reason: err.message };
    if (err instanceof RangeError) return { ok: false, reason: 'the message is nested too deeply' };
    throw err;
  }
}

/** Validates a message the view received; never throws on bad data, only on bugs. */
export function parseHostMessage(data: unknown): Parsed<HostToViewMessage> {
  return guard(() => {
    const m = record(data, 'message');
    switch (m.type) {
      case 'showPlan': {
        str(m.title, 'showPlan.title');
        const pl = plan(m.plan, 'showPlan.plan');
        findings(m.findings, 'showPlan.findings', pl.nodes.length);
        optStr(m.rawText, 'showPlan.rawText');
        if (m.hasRawText !== undefined && typeof m.hasRawText !== 'boolean') fail('showPlan.hasRawText', 'is not a boolean');
        if (m.suggestions !== undefined) suggestions(m.suggestions, 'showPlan.suggestions');
        return m as unknown as ShowPlanMessage;
      }
      case 'showComparison':
        str(m.title, 'showComparison.title');
        planWithFindings(m.before, 'showComparison.before');
        planWithFindings(m.after, 'showComparison.after');
        return m as unknown as ShowComparisonMessage;
      case 'rawText':
        str(m.text, 'rawText.text');
        return m as unknown as RawTextMessage;
      case 'setTheme':
        if (!THEMES.includes(m.kind as ThemeKind)) fail('setTheme.kind', 'is not a known theme kind');
        return m as unknown as SetThemeMessage;
      case 'focusNode':
        int(m.nodeId, 'focusNode.nodeId');
        return m as unknown as FocusNodeMessage;
      case 'suggestionStatus':
        str(m.id, 'suggestionStatus.id');
        if (!STATUSES.includes(m.status as SuggestionStatus)) fail('suggestionStatus.status', 'is not a known status');
        optStr(m.detail, 'suggestionStatus.detail');
        if (m.verdict !== undefined) verdict(m.verdict, 'suggestionStatus.verdict');
        return m as unknown as SuggestionStatusMessage;
      default:
        return fail('message.type', typeof m.type === 'string' ? `"${m.type.slice(0, 40)}" is not a message the view knows` : 'is missing');
    }
  });
}

/** Validates a message the host received from the view; never throws on bad data. */
export function parseViewMessage(data: unknown): Parsed<ViewToHostMessage> {
  return guard(() => {
    const m = record(data, 'message');
    switch (m.type) {
      case 'ready':
        int(m.protocolVersion, 'ready.protocolVersion');
        return m as unknown as ReadyMessage;
      case 'rawTextWanted':
        return m as unknown as RawTextWantedMessage;
      case 'copyText':
        str(m.text, 'copyText.text');
        optStr(m.what, 'copyText.what');
        return m as unknown as CopyTextMessage;
      case 'verifySuggestion':
        str(m.id, 'verifySuggestion.id');
        return m as unknown as VerifySuggestionMessage;
      case 'createIndex':
        str(m.id, 'createIndex.id');
        return m as unknown as CreateIndexMessage;
      case 'openNode':
        int(m.nodeId, 'openNode.nodeId');
        str(m.kind, 'openNode.kind');
        str(m.label, 'openNode.label');
        return m as unknown as OpenNodeMessage;
      case 'reportError':
        str(m.message, 'reportError.message');
        optStr(m.detail, 'reportError.detail');
        return m as unknown as ReportErrorMessage;
      case 'saveFile': {
        const name = str(m.fileName, 'saveFile.fileName');
        if (/[\\/]|^\.\.?$/.test(name) || name.length === 0 || name.length > 200) fail('saveFile.fileName', 'is not a plain file name');
        if (!['image/svg+xml', 'image/png', 'application/json'].includes(m.mimeType as string)) fail('saveFile.mimeType', 'is not an export type');
        if (m.encoding !== 'utf8' && m.encoding !== 'base64') fail('saveFile.encoding', 'is neither utf8 nor base64');
        str(m.content, 'saveFile.content');
        return m as unknown as SaveFileMessage;
      }
      default:
        return fail('message.type', typeof m.type === 'string' ? `"${m.type.slice(0, 40)}" is not a message the host knows` : 'is missing');
    }
  });
}

/** Nodes of a tree in preorder, without recursion (plans can be thousands of levels deep). */
function preorder(root: PlanNode): PlanNode[] {
  const out: PlanNode[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

/**
 * The plan as it should cross the boundary: `nodes` emptied, because it repeats the tree and JSON
 * serialisation would copy each subtree once per ancestor. The view's guard rebuilds it.
 */
export function wirePlan(plan: Plan): Plan {
  return { ...plan, nodes: [] };
}

/** Counts nodes of a tree; exported for hosts that want to warn before posting a huge plan. */
export function countNodes(root: PlanNode): number {
  let n = 0;
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    n++;
    for (const c of node.children) stack.push(c);
  }
  return n;
}

// ---- page ----------------------------------------------------------------------------------------

/**
 * The policy the view runs under, in VS Code and in the browser tests alike. Nothing inline is
 * allowed: scripts need the nonce, styles come only from the stylesheet file (the view sets element
 * style properties from script, which this policy permits), and images only from data: URLs (the PNG
 * export draws the SVG through one).
 */
export function webviewCsp(cspSource: string, nonce: string): string {
  return `default-src 'none'; img-src data: ${cspSource}; style-src ${cspSource}; script-src 'nonce-${nonce}';`;
}

/** Escapes text for an HTML attribute value in double quotes. */
function attr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The page that hosts the view. `scriptUri` and `styleUri` point at dist/webview/webview.js and
 * style.css as the host can serve them (webview.asWebviewUri in VS Code, http in tests); `nonce` must
 * be fresh random text for every page. No plan data goes into the page: it arrives by message.
 */
export function webviewHtml(opts: { cspSource: string; nonce: string; scriptUri: string; styleUri: string; title?: string }): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${attr(webviewCsp(opts.cspSource, opts.nonce))}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<link rel="stylesheet" href="${attr(opts.styleUri)}">`,
    `<title>${attr(opts.title ?? 'Query Plan')}</title>`,
    '</head>',
    '<body>',
    '<div id="app"></div>',
    `<script nonce="${attr(opts.nonce)}" src="${attr(opts.scriptUri)}"></script>`,
    '</body>',
    '</html>',
  ].join('\n');
}
