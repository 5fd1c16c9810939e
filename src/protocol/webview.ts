// The messages between the extension host and the plan view (webview/), in both directions, plus the
// runtime guards each side runs on what it receives and the page skeleton with its Content Security
// Policy. Messages cross a process boundary as structured clones, so nothing here is trusted by type
// alone: the view validates every inbound message with `parseHostMessage` and the host should run
// `parseViewMessage` on what the view sends back.

import * as v from 'valibot';
import type { Engine, Finding, Plan, PlanNode, Severity } from '../core/index';

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
  /**
   * The nodes' `raw` fields are not in this message: every node's `raw` is empty here (see
   * `wirePlanWithoutRaw`), and the host sends them with `nodeRaw` once the page says `planDrawn`, so the
   * message that draws the plan carries only what the cards need. The page shows a loading line where
   * they belong until they arrive, never an empty list.
   */
  nodeRawLater?: boolean;
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

/**
 * Sent by the host when a measurement ranked the suggestions anew (Verify ran a tournament): the list
 * replaces the one `showPlan` gave, in measured order, with each suggestion's verification; ids follow
 * the new list, so later `verifySuggestion` and `createIndex` name the suggestions shown here.
 */
export interface SetSuggestionsMessage {
  type: 'setSuggestions';
  suggestions: SuggestionView[];
}

/** Sent by the host in answer to `rawTextWanted`: the explain output of the plan shown. */
export interface RawTextMessage {
  type: 'rawText';
  text: string;
}

/**
 * Sent by the host after `planDrawn`, for a plan whose `showPlan` said `nodeRawLater`: every node's `raw`
 * fields, in preorder (the drawn tree's by PlanNode.id, each rejected plan's in the preorder of its own
 * tree). The page puts them into the nodes it shows and fills the Node tab's raw fields.
 */
export interface NodeRawMessage {
  type: 'nodeRaw';
  /** The drawn tree's nodes' raw fields; `nodes[i]` belongs to the node with id i. */
  nodes: Record<string, unknown>[];
  /** Each rejected plan's nodes' raw fields, by its position in `plan.rejectedPlans`, each list in preorder. */
  rejected: Record<string, unknown>[][];
}

export type HostToViewMessage =
  | RawTextMessage
  | NodeRawMessage
  | ShowPlanMessage
  | ShowComparisonMessage
  | SetThemeMessage
  | FocusNodeMessage
  | SuggestionStatusMessage
  | SetSuggestionsMessage;

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

/**
 * Sent when the page has drawn a plan and filled its side panel after the first frame: the host starts the
 * work that follows a plan (the advice, its queries on the server) only then, so none of it shares the
 * machine with the message's way to the page and the page's own work. A plan sent with `nodeRawLater`
 * gets its nodes' raw fields (`nodeRaw`) in answer, before that work starts.
 */
export interface PlanDrawnMessage {
  type: 'planDrawn';
}

export type ViewToHostMessage =
  | RawTextWantedMessage
  | PlanDrawnMessage
  | ReadyMessage
  | CopyTextMessage
  | VerifySuggestionMessage
  | CreateIndexMessage
  | OpenNodeMessage
  | ReportErrorMessage
  | SaveFileMessage;

// ---- guards --------------------------------------------------------------------------------------
// Each message's shape is a valibot schema; what a schema cannot say (unique ids, preorder numbering,
// a finding's node inside the plan, a bounded tree walked without recursion) is checked after it. The
// schemas only judge: a valid message is returned as it arrived, so a plan's tree keeps its identity.

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

/** Runs a schema; the first problem becomes "path what", with the path written as in TypeScript. */
function check(schema: v.GenericSchema, value: unknown, path: string): void {
  const r = v.safeParse(schema, value, { abortEarly: true });
  if (r.success) return;
  const issue = r.issues[0];
  const where = (issue.path ?? []).map((p) => (typeof p.key === 'number' ? `[${p.key}]` : `.${String(p.key)}`)).join('');
  fail(path + where, issue.message);
}

const str = v.string('is not a string');
const optStr = v.optional(str);
const num = v.number('is not a number');
const int = v.pipe(v.number('is not an integer'), v.integer('is not an integer'));
const bool = v.boolean('is not a boolean');
const list = <T extends v.GenericSchema>(item: T) => v.array(item, 'is not a list');
const strList = list(str);
/** valibot takes arrays for objects; the messages never carry an array where an object belongs. */
const plainObject = v.custom<Record<string, unknown>>(isRecord, 'is not an object');
/** A missing field is reported as its own schema would report `undefined` ("title is not a string"). */
const missing = (entries: v.ObjectEntries) => (issue: v.BaseIssue<unknown>): string => {
  const key = issue.path?.at(-1)?.key;
  const entry = typeof key === 'string' ? entries[key] : undefined;
  const r = entry ? v.safeParse(entry, undefined, { abortEarly: true }) : undefined;
  return r && !r.success ? r.issues[0].message : 'is not an object';
};
const obj = <T extends v.ObjectEntries>(entries: T) => v.pipe(plainObject, v.looseObject(entries, missing(entries)));
const withRest = <T extends v.ObjectEntries, R extends v.GenericSchema>(entries: T, rest: R) =>
  v.pipe(plainObject, v.objectWithRest(entries, rest, missing(entries)));
const recordOf = <T extends v.GenericSchema>(value: T) => v.pipe(plainObject, v.record(v.string(), value));
const numRecord = recordOf(num);
const opt = <T extends v.GenericSchema>(s: T) => v.optional(s);

const ENGINES: readonly Engine[] = ['mongodb', 'postgres'];
const SEVERITIES: readonly Severity[] = ['high', 'medium', 'low', 'info'];
const THEMES: readonly ThemeKind[] = ['light', 'dark', 'high-contrast', 'high-contrast-light'];
const STATUSES: readonly SuggestionStatus[] = ['unverified', 'verifying', 'verified', 'rejected', 'failed', 'creating', 'created'];
const status = v.picklist(STATUSES, 'is not a known status');

const sortFigures = { buffers: opt(numRecord), sortMethod: optStr, sortSpaceType: optStr };
const METRICS = withRest({
  neverExecuted: opt(bool), isEOF: opt(bool), usedDisk: opt(bool), stoppedEarly: opt(bool), estimateDirection: optStr, ...sortFigures,
  workers: opt(list(withRest(sortFigures, opt(num)))),
}, opt(num));

const keyOrder = recordOf(v.union([v.number(), v.string()], 'is not a number or a string'));
const DETAILS = obj({
  indexName: optStr, direction: optStr, relationName: optStr, schema: optStr, alias: optStr, joinType: optStr, strategy: optStr,
  operation: optStr, parentRelationship: optStr, subplanName: optStr, cteName: optStr, shardName: optStr,
  sortKey: opt(strList), groupKey: opt(strList), presortedKey: opt(strList), output: opt(strList),
  isMultiKey: opt(bool), parallelAware: opt(bool), keyPattern: opt(keyOrder), sortPattern: opt(keyOrder),
  indexBounds: opt(recordOf(strList)), multiKeyPaths: opt(recordOf(strList)), conditions: opt(recordOf(str)),
});

/** One node without its subtree: the walk below visits children itself, so depth costs no stack. */
const NODE = obj({ id: int, kind: str, label: str, role: optStr, metrics: METRICS, details: DETAILS, raw: plainObject, children: list(v.unknown()) });

const MAXIMA_KEYS = ['exclusiveTimeMs', 'rowsReturned', 'keysExamined', 'docsExamined', 'sharedBlocks', 'estimateFactor', 'wastedReads'] as const;
const PLAN = obj({
  engine: v.picklist(ENGINES, 'is neither mongodb nor postgres'),
  format: str,
  serverVersion: optStr,
  rejectedPlans: list(obj({ index: int, shardName: optStr, trial: opt(numRecord), maxima: opt(numRecord) })),
  totals: withRest({ buffers: opt(numRecord) }, opt(num)),
  maxima: withRest(Object.fromEntries(MAXIMA_KEYS.map((k) => [k, num])), num),
  mongo: opt(plainObject),
  postgres: opt(plainObject),
  warnings: strList,
});

const FINDINGS = list(obj({
  code: str, severity: v.picklist(SEVERITIES, 'is not high, medium, low or info'), good: opt(bool), nodeId: opt(int),
  title: str, message: str, numbers: numRecord,
}));

const VERDICT = obj({
  method: str, how: str, beforeLabel: str, afterLabel: str, unit: optStr, planBefore: optStr, planAfter: optStr,
  before: opt(num), after: opt(num), sampleSize: opt(num), collectionSize: opt(num),
  figuresBefore: opt(numRecord), figuresAfter: opt(numRecord), usedByPlanner: opt(bool),
});

const SUGGESTIONS = list(obj({
  id: str, title: str, detail: optStr, ddl: optStr, statusDetail: optStr, nodeIds: opt(list(int)), verifiable: opt(bool),
  status: opt(status), rule: optStr, expectedPlan: optStr, tradeOff: optStr, keep: optStr, conditions: opt(strList),
  replaces: opt(strList), rewrites: opt(list(obj({ rule: str, description: str, text: str, caveat: optStr }))), verdict: opt(VERDICT),
}));

/** Checks one tree: shapes, unique ids, no cycles, bounded size. Returns the number of nodes. */
function tree(root: unknown, path: string, budget: { left: number }): number {
  const seenObjects = new Set<object>();
  const ids = new Set<number>();
  const stack: { v: unknown; p: string }[] = [{ v: root, p: path }];
  let count = 0;
  while (stack.length > 0) {
    const { v: n, p } = stack.pop()!;
    check(NODE, n, p);
    const node = n as PlanNode;
    if (seenObjects.has(node)) fail(p, 'appears twice in the tree');
    seenObjects.add(node);
    if (--budget.left < 0) fail(path, `has more than ${MAX_NODES} nodes`);
    count++;
    if (ids.has(node.id)) fail(`${p}.id`, `repeats id ${node.id}`);
    ids.add(node.id);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push({ v: node.children[i], p: `${p}.children[${i}]` });
  }
  return count;
}

function plan(value: unknown, path: string): Plan {
  check(PLAN, value, path);
  const p = value as Record<string, unknown> & Pick<Plan, 'rejectedPlans'>;
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
  p.rejectedPlans.forEach((r, i) => tree(r.root, `${path}.rejectedPlans[${i}].root`, budget));
  return value as Plan;
}

function findings(value: unknown, path: string, nodeCount: number): Finding[] {
  check(FINDINGS, value, path);
  const list = value as Finding[];
  list.forEach((f, i) => {
    if (f.nodeId !== undefined && (f.nodeId < 0 || f.nodeId >= nodeCount)) fail(`${path}[${i}].nodeId`, `points at no node (${f.nodeId})`);
  });
  return list;
}

function suggestions(value: unknown, path: string): void {
  check(SUGGESTIONS, value, path);
  const ids = new Set<string>();
  (value as SuggestionView[]).forEach((s, i) => {
    if (ids.has(s.id)) fail(`${path}[${i}].id`, `repeats id ${s.id}`);
    ids.add(s.id);
  });
}

function planWithFindings(value: unknown, path: string): void {
  const pl = plan((value as { plan: unknown }).plan, `${path}.plan`);
  findings((value as { findings: unknown }).findings, `${path}.findings`, pl.nodes.length);
}

const SIDE = obj({ label: str, plan: v.unknown(), findings: v.unknown() });

/**
 * Host-to-view messages: the schema of each, and what is checked after it (plans and findings hold
 * trees and cross-references a schema does not walk).
 */
const HOST_MESSAGES: { [K in HostToViewMessage['type']]: { schema: v.GenericSchema; then?: (m: Record<string, unknown>) => void } } = {
  showPlan: {
    schema: obj({ title: str, plan: v.unknown(), findings: v.unknown(), rawText: optStr, hasRawText: opt(bool), nodeRawLater: opt(bool), suggestions: opt(SUGGESTIONS) }),
    then: (m) => {
      const pl = plan(m.plan, 'showPlan.plan');
      findings(m.findings, 'showPlan.findings', pl.nodes.length);
      if (m.suggestions !== undefined) suggestions(m.suggestions, 'showPlan.suggestions');
    },
  },
  showComparison: {
    schema: obj({ title: str, before: SIDE, after: SIDE }),
    then: (m) => {
      planWithFindings(m.before, 'showComparison.before');
      planWithFindings(m.after, 'showComparison.after');
    },
  },
  rawText: { schema: obj({ text: str }) },
  nodeRaw: { schema: obj({ nodes: list(plainObject), rejected: list(list(plainObject)) }) },
  setTheme: { schema: obj({ kind: v.picklist(THEMES, 'is not a known theme kind') }) },
  focusNode: { schema: obj({ nodeId: int }) },
  suggestionStatus: { schema: obj({ id: str, status, detail: optStr, verdict: opt(VERDICT) }) },
  setSuggestions: { schema: obj({ suggestions: SUGGESTIONS }), then: (m) => suggestions(m.suggestions, 'setSuggestions.suggestions') },
};

const plainFileName = v.pipe(str, v.check((name) => name.length > 0 && name.length <= 200 && !/[\\/]|^\.\.?$/.test(name), 'is not a plain file name'));

const VIEW_MESSAGES: { [K in ViewToHostMessage['type']]: v.GenericSchema } = {
  ready: obj({ protocolVersion: int }),
  rawTextWanted: obj({}),
  planDrawn: obj({}),
  copyText: obj({ text: str, what: optStr }),
  verifySuggestion: obj({ id: str }),
  createIndex: obj({ id: str }),
  openNode: obj({ nodeId: int, kind: str, label: str }),
  reportError: obj({ message: str, detail: optStr }),
  saveFile: obj({
    fileName: plainFileName,
    mimeType: v.picklist(['image/svg+xml', 'image/png', 'application/json'], 'is not an export type'),
    encoding: v.picklist(['utf8', 'base64'], 'is neither utf8 nor base64'),
    content: str,
  }),
};

/** Whether a value carries the type of a message the view sends (a standalone page may echo them back). */
export function isViewMessageType(type: unknown): boolean {
  return typeof type === 'string' && Object.hasOwn(VIEW_MESSAGES, type);
}

function guard<T>(run: () => T): Parsed<T> {
  try {
    return { ok: true, message: run() };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, reason: err.message };
    if (err instanceof RangeError) return { ok: false, reason: 'the message is nested too deeply' };
    throw err;
  }
}

function messageType(m: Record<string, unknown>, known: object, knower: string): string {
  if (typeof m.type === 'string' && Object.hasOwn(known, m.type)) return m.type;
  return fail('message.type', typeof m.type === 'string' ? `"${m.type.slice(0, 40)}" is not a message the ${knower} knows` : 'is missing');
}

/** Validates a message the view received; never throws on bad data, only on bugs. */
export function parseHostMessage(data: unknown): Parsed<HostToViewMessage> {
  return guard(() => {
    check(plainObject, data, 'message');
    const m = data as Record<string, unknown>;
    const rule = HOST_MESSAGES[messageType(m, HOST_MESSAGES, 'view') as HostToViewMessage['type']];
    check(rule.schema, m, m.type as string);
    rule.then?.(m);
    return m as unknown as HostToViewMessage;
  });
}

/** Validates a message the host received from the view; never throws on bad data. */
export function parseViewMessage(data: unknown): Parsed<ViewToHostMessage> {
  return guard(() => {
    check(plainObject, data, 'message');
    const m = data as Record<string, unknown>;
    check(VIEW_MESSAGES[messageType(m, VIEW_MESSAGES, 'host') as ViewToHostMessage['type']], m, m.type as string);
    return m as unknown as ViewToHostMessage;
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

/** A copy of a tree with every node's `raw` empty, made without recursion; the nodes' other fields are shared. */
function withoutRaw(root: PlanNode): PlanNode {
  const copy = (n: PlanNode): PlanNode => ({ ...n, raw: {}, children: [] });
  const top = copy(root);
  const stack: [PlanNode, PlanNode][] = [[root, top]];
  while (stack.length > 0) {
    const [from, to] = stack.pop()!;
    for (const c of from.children) {
      const d = copy(c);
      to.children.push(d);
      stack.push([c, d]);
    }
  }
  return top;
}

/**
 * The plan as a `showPlan` with `nodeRawLater` carries it: `wirePlan`, and every node's `raw` empty, in
 * the drawn tree and in the rejected plans. The plan given is left as it is; `nodeRawOf` takes the fields.
 */
export function wirePlanWithoutRaw(plan: Plan): Plan {
  return {
    ...wirePlan(plan),
    root: withoutRaw(plan.root),
    rejectedPlans: plan.rejectedPlans.map((r) => ({ ...r, root: withoutRaw(r.root) })),
  };
}

/** The `nodeRaw` message for a plan sent with `wirePlanWithoutRaw`. */
export function nodeRawOf(plan: Plan): NodeRawMessage {
  return {
    type: 'nodeRaw',
    nodes: preorder(plan.root).map((n) => n.raw),
    rejected: plan.rejectedPlans.map((r) => preorder(r.root).map((n) => n.raw)),
  };
}

/**
 * Puts a `nodeRaw` message's fields into the plan a `showPlan` with `nodeRawLater` drew, in place (the
 * nodes the page holds are these objects). Returns false, changing nothing, when the lists do not match
 * the plan's trees node for node.
 */
export function fillNodeRaw(plan: Plan, m: NodeRawMessage): boolean {
  const trees = [preorder(plan.root), ...plan.rejectedPlans.map((r) => preorder(r.root))];
  const lists = [m.nodes, ...m.rejected];
  if (lists.length !== trees.length || trees.some((t, i) => t.length !== lists[i]!.length)) return false;
  trees.forEach((t, i) => t.forEach((n, j) => (n.raw = lists[i]![j]!)));
  return true;
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
