// Reads `EXPLAIN (FORMAT JSON)` output, of any server from 9.x to 18 and any option set, into the plan
// model. The text, YAML and XML readers rewrite their input into this same JSON shape and call
// `planFromQuery`, so this file is the single place where PostgreSQL fields become model fields.

import {
  emptyMaxima,
  makeNode,
  MAX_PLAN_NODES,
  TOO_MANY_NODES,
  type Buffers,
  type LoadResult,
  type NodeDetails,
  type NodeMetrics,
  type Plan,
  type PlanFormat,
  type PlanNode,
  type PostgresMeta,
  type WorkerStats,
} from '../model';
import { bool, isObj, num, round3, str, strList, type Doc } from './shape';
import { quoteIdent } from './names';

/** Plans nested deeper than this are refused rather than risking the call stack. */
export const MAX_DEPTH = 1000;

/**
 * Reads a parsed JSON explain document (array form, bare object, or a client's "QUERY PLAN" wrapper).
 * The document becomes part of the plan (its node objects are the nodes' `raw`, without "Plans"): pass
 * one nobody else holds.
 */
export function parsePostgresJson(doc: unknown, format: PlanFormat): LoadResult {
  const warnings: string[] = [];
  const query = findQuery(doc, warnings, 0);
  if (typeof query === 'string') return { ok: false, refusal: query };
  return planFromQuery(query, format, warnings);
}

/**
 * Finds the one query object ({ Plan, Planning Time, ... }) in what a client saved. Returns a refusal
 * sentence when there is none.
 */
function findQuery(doc: unknown, warnings: string[], depth: number): Doc | string {
  const none = 'This JSON has no PostgreSQL plan in it: no "Plan" object with a "Node Type" was found.';
  if (depth > 3) return none;
  if (typeof doc === 'string') {
    // Some clients export the QUERY PLAN column as a string holding the JSON document.
    try {
      return findQuery(JSON.parse(doc), warnings, depth + 1);
    } catch {
      return none;
    }
  }
  if (Array.isArray(doc)) {
    if (doc.length === 0) return 'The JSON array is empty: it holds no plan.';
    const found: Doc[] = [];
    let firstRefusal: string | undefined;
    for (const item of doc) {
      const q = findQuery(item, [], depth + 1);
      if (typeof q !== 'string') found.push(q);
      else firstRefusal ??= q;
    }
    if (found.length === 0) return firstRefusal ?? none;
    // A table's rules add actions to a statement: one plan each, and a utility statement by its name.
    const utilities = doc.filter((x): x is string => typeof x === 'string' && /^[A-Z][A-Za-z ]*$/.test(x));
    if (found.length > 1 || utilities.length > 0) {
      const parts = [`${found.length} plan${found.length === 1 ? '' : 's'}`, ...utilities.map((u) => `a ${u.toUpperCase()} (no plan)`)];
      warnings.push(`The output holds ${parts.join(' and ')}, one per statement or per action a table's rules add; only the first plan is shown.`);
    }
    return found[0]!;
  }
  if (!isObj(doc)) return none;
  if ('Plan' in doc) {
    if (!isObj(doc.Plan)) return 'The JSON\'s "Plan" is not an object, so it is not an explain output.';
    if (typeof doc.Plan['Node Type'] !== 'string') return 'The JSON\'s "Plan" has no "Node Type", so it is not an explain output.';
    return doc;
  }
  if (typeof doc['Node Type'] === 'string') {
    warnings.push('The JSON is a bare plan node without its explain document, so planning and execution times are unknown.');
    return { Plan: doc };
  }
  if ('QUERY PLAN' in doc) return findQuery(doc['QUERY PLAN'], warnings, depth + 1);
  return none;
}

/** What the conversion of one tree counts: the nodes built so far (against MAX_PLAN_NODES), those without a type. */
interface Ctx {
  nodes: number;
  unknown: number;
}

/** Builds the model from one query object in the JSON shape. Never throws on bad values. */
export function planFromQuery(query: Doc, format: PlanFormat, warnings: string[]): LoadResult {
  const planDoc = query.Plan;
  if (!isObj(planDoc)) return { ok: false, refusal: 'The explain output has no "Plan" object.' };
  const ctx: Ctx = { nodes: 0, unknown: 0 };
  const root = convertNode(planDoc, 1, ctx, 0);
  if (typeof root === 'string') return { ok: false, refusal: root };
  if (ctx.unknown > 0) warnings.push(`${ctx.unknown} plan node(s) had no "Node Type" and are shown as "Unknown".`);

  const meta = readMeta(query, root);
  const plan: Plan = {
    engine: 'postgres',
    format,
    root,
    nodes: [],
    rejectedPlans: [],
    totals: {},
    maxima: emptyMaxima(),
    postgres: meta,
    warnings,
  };
  const t = plan.totals;
  if (meta.planningTimeMs !== undefined) t.planningTimeMs = meta.planningTimeMs;
  if (meta.executionTimeMs !== undefined) t.executionTimeMs = meta.executionTimeMs;
  if (root.metrics.rowsReturned !== undefined) t.rows = root.metrics.rowsReturned;
  if (root.metrics.buffers) t.buffers = { ...root.metrics.buffers };
  const jitTotal = meta.jit?.timingMs?.Total;
  if (jitTotal !== undefined) t.jitTimeMs = jitTotal;
  if (meta.triggers && meta.triggers.some((x) => x.timeMs !== undefined)) {
    t.triggerTimeMs = round3(meta.triggers.reduce((s, x) => s + (x.timeMs ?? 0), 0));
  }
  return { ok: true, plan };
}

/**
 * `divisor` is the number of participants sharing the work of the node, 1 outside parallel sections (see
 * parallelDivisor).
 */
function convertNode(o: Doc, divisor: number, ctx: Ctx, depth: number): PlanNode | string {
  if (depth > MAX_DEPTH) return `The plan is nested more than ${MAX_DEPTH} levels deep, more than this reader follows.`;
  if (++ctx.nodes > MAX_PLAN_NODES) return TOO_MANY_NODES;
  // The node's own object becomes its raw fields: the children are taken off it instead of copying the
  // rest (the document is the reader's to change, see parsePostgresJson). "Plans" is printed last, and
  // removing an object's last property keeps it in V8's fast mode.
  const childDocs = o.Plans;
  if (childDocs !== undefined) delete o.Plans;
  const raw = o;
  let kind = str(o['Node Type']);
  if (kind === undefined || kind === '') {
    kind = 'Unknown';
    ctx.unknown++;
  }
  const node = makeNode(kind, buildLabel(o, kind), raw, str(o['Parent Relationship']), readMetrics(o, divisor), readDetails(o));
  if (!Array.isArray(childDocs) || childDocs.length === 0) return node;

  const plans = childDocs.every(isObj) ? (childDocs as Doc[]) : childDocs.filter(isObj);
  const childDivisor = parallelDivisor(o, kind, plans) ?? divisor;
  for (const child of plans) {
    // InitPlans and SubPlans hung on a Gather run in the leader alone, outside the parallel section.
    const rel = str(child['Parent Relationship']);
    const c = convertNode(child, rel === 'InitPlan' || rel === 'SubPlan' ? divisor : childDivisor, ctx, depth + 1);
    if (typeof c === 'string') return c;
    node.children.push(c);
  }
  return node;
}

/**
 * Inside a Gather or Gather Merge every participant (the workers and, usually, the leader) runs the
 * nodes below, and PostgreSQL reports for each node the sum of all participants' times divided by the
 * sum of their loops; `loops` counts participants times rescans. So `time x loops` is the time summed
 * over participants (CPU time, not elapsed time): taken as is, a section run by 3 processes would look
 * three times longer than the Gather above it. The rule used here divides every node of the section by
 * the same number of participants, measured as the loops of the Gather's outer child per loop of the
 * Gather (it already tells whether the leader took part and how many workers were launched), or, when
 * that is missing, workers launched + 1. The result is each node's average share of the section's
 * elapsed time; one divisor for the whole section keeps every parent's time at least the sum of its
 * children's (the sums preserve that order), so exclusive time stays non-negative. A node run by only one
 * participant (a Bitmap Index Scan feeding a Parallel Bitmap Heap Scan) is shown below its own elapsed
 * time by that factor; its per-worker figures, when VERBOSE printed them, give the exact split.
 */
function parallelDivisor(o: Doc, kind: string, plans: Doc[]): number | undefined {
  if (kind !== 'Gather' && kind !== 'Gather Merge') return undefined;
  const loops = num(o['Actual Loops']);
  if (loops === undefined || loops <= 0) return undefined;
  const outer = plans.find((p) => str(p['Parent Relationship']) === 'Outer') ?? plans.find((p) => p['Parent Relationship'] === undefined);
  const childLoops = outer ? num(outer['Actual Loops']) : undefined;
  if (childLoops !== undefined && childLoops > 0) return Math.max(1, Math.round(childLoops / loops));
  const workers = num(o['Workers Launched']) ?? num(o['Workers Planned']);
  return workers !== undefined ? workers + 1 : undefined;
}

const AGG_NAMES: Record<string, string> = { Hashed: 'HashAggregate', Sorted: 'GroupAggregate', Mixed: 'MixedAggregate', Plain: 'Aggregate' };
const JOIN_BASES: Record<string, string> = { 'Nested Loop': 'Nested Loop', 'Hash Join': 'Hash', 'Merge Join': 'Merge' };

/** The one-line label, close to PostgreSQL's own text rendering so users recognise it. */
export function buildLabel(o: Doc, kind: string): string {
  let name = kind;
  const strategy = str(o.Strategy);
  const op = str(o.Operation);
  if (kind === 'Aggregate') {
    name = (strategy && AGG_NAMES[strategy]) ?? 'Aggregate';
    const partial = str(o['Partial Mode']);
    if (partial && partial !== 'Simple') name += ` (${partial})`;
  } else if (kind === 'SetOp') {
    name = strategy === 'Hashed' ? 'HashSetOp' : 'SetOp';
    const cmd = str(o.Command);
    if (cmd) name += ` ${cmd}`;
  } else if (kind === 'ModifyTable') {
    name = op ?? kind;
  } else if (kind === 'Foreign Scan' && op && op !== 'Select') {
    name = `Foreign ${op}`;
  } else if (kind === 'Custom Scan') {
    const provider = str(o['Custom Plan Provider']);
    if (provider) name = `Custom Scan (${provider})`;
  } else if (JOIN_BASES[kind]) {
    const jt = str(o['Join Type']);
    if (jt && jt !== 'Inner') name = `${JOIN_BASES[kind]} ${jt} Join`;
  }
  if (bool(o['Async Capable']) === true) name = `Async ${name}`;
  if (bool(o['Parallel Aware']) === true) name = `Parallel ${name}`;

  const index = str(o['Index Name']);
  if (kind === 'Index Scan' || kind === 'Index Only Scan') {
    if (str(o['Scan Direction']) === 'Backward') name += ' Backward';
    if (index) name += ` using ${quoteIdent(index)}`;
  } else if (kind === 'Bitmap Index Scan' && index) {
    name += ` on ${quoteIdent(index)}`;
  }
  const target =
    str(o['Relation Name']) ?? str(o['Function Name']) ?? str(o['CTE Name']) ?? str(o['Tuplestore Name']) ?? str(o['Table Function Name']);
  const alias = str(o.Alias);
  if (target !== undefined) {
    name += ` on ${quoteIdent(target)}`;
    if (alias !== undefined && alias !== target) name += ` ${quoteIdent(alias)}`;
  } else if (alias !== undefined) {
    name += ` on ${quoteIdent(alias)}`;
  }
  return name;
}

// The readers below name each field literally rather than looping over a table of names: a literal key
// is a property load V8 caches per node shape, where a key taken from a table is a hash lookup, and these
// run once per node of plans with tens of thousands of nodes.

function readDetails(o: Doc): NodeDetails {
  const d: NodeDetails = {};
  let v: string | undefined;
  if ((v = str(o['Index Name'])) !== undefined) d.indexName = v;
  if ((v = str(o['Scan Direction'])) !== undefined) d.direction = v;
  if ((v = str(o['Relation Name'])) !== undefined) d.relationName = v;
  if ((v = str(o.Schema)) !== undefined) d.schema = v;
  if ((v = str(o.Alias)) !== undefined) d.alias = v;
  if ((v = str(o['Join Type'])) !== undefined) d.joinType = v;
  if ((v = str(o.Strategy)) !== undefined) d.strategy = v;
  if ((v = str(o.Operation)) !== undefined) d.operation = v;
  if ((v = str(o['Parent Relationship'])) !== undefined) d.parentRelationship = v;
  if ((v = str(o['Subplan Name'])) !== undefined) d.subplanName = v;
  if ((v = str(o['CTE Name'])) !== undefined) d.cteName = v;
  // CONDITION_KEYS, in its order, each named literally (see above).
  let c: Record<string, string> | undefined;
  if ((v = str(o.Filter)) !== undefined) (c ??= {}).Filter = v;
  if ((v = str(o['Index Cond'])) !== undefined) (c ??= {})['Index Cond'] = v;
  if ((v = str(o['Recheck Cond'])) !== undefined) (c ??= {})['Recheck Cond'] = v;
  if ((v = str(o['Join Filter'])) !== undefined) (c ??= {})['Join Filter'] = v;
  if ((v = str(o['Hash Cond'])) !== undefined) (c ??= {})['Hash Cond'] = v;
  if ((v = str(o['Merge Cond'])) !== undefined) (c ??= {})['Merge Cond'] = v;
  if ((v = str(o['TID Cond'])) !== undefined) (c ??= {})['TID Cond'] = v;
  if ((v = str(o['One-Time Filter'])) !== undefined) (c ??= {})['One-Time Filter'] = v;
  if ((v = str(o['Order By'])) !== undefined) (c ??= {})['Order By'] = v;
  if ((v = str(o['Run Condition'])) !== undefined) (c ??= {})['Run Condition'] = v;
  if ((v = str(o['Cache Key'])) !== undefined) (c ??= {})['Cache Key'] = v;
  if ((v = str(o['Conflict Filter'])) !== undefined) (c ??= {})['Conflict Filter'] = v;
  if ((v = str(o['Function Call'])) !== undefined) (c ??= {})['Function Call'] = v;
  if ((v = str(o['Table Function Call'])) !== undefined) (c ??= {})['Table Function Call'] = v;
  if (c) d.conditions = c;
  const sortKey = strList(o['Sort Key']);
  if (sortKey) d.sortKey = sortKey;
  const groupKey = strList(o['Group Key']) ?? groupingSetKeys(o['Grouping Sets']);
  if (groupKey) d.groupKey = groupKey;
  const presorted = strList(o['Presorted Key']);
  if (presorted) d.presortedKey = presorted;
  const output = strList(o.Output);
  if (output) d.output = output;
  const pa = bool(o['Parallel Aware']);
  if (pa !== undefined) d.parallelAware = pa;
  return d;
}

/** The distinct keys of all grouping sets, in order of first appearance. */
function groupingSetKeys(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const keys: string[] = [];
  for (const set of v) {
    if (!isObj(set)) continue;
    for (const field of ['Group Keys', 'Hash Keys']) {
      const lists = set[field];
      if (!Array.isArray(lists)) continue;
      for (const list of lists) for (const k of strList(list) ?? []) if (!keys.includes(k)) keys.push(k);
    }
  }
  return keys;
}

function readMetrics(o: Doc, divisor: number): NodeMetrics {
  const m: NodeMetrics = {};
  let v: number | undefined;
  if ((v = num(o['Startup Cost'])) !== undefined) m.startupCost = v;
  if ((v = num(o['Total Cost'])) !== undefined) m.totalCost = v;
  if ((v = num(o['Plan Rows'])) !== undefined) m.planRowsPerLoop = v;
  if ((v = num(o['Actual Startup Time'])) !== undefined) m.actualStartupTimeMs = v;
  if ((v = num(o['Actual Total Time'])) !== undefined) m.actualTotalTimeMs = v;
  if ((v = num(o['Actual Rows'])) !== undefined) m.actualRowsPerLoop = v;
  if ((v = num(o['Actual Loops'])) !== undefined) m.loops = v;
  const loops = m.loops;
  if (loops !== undefined) {
    if (loops === 0) m.neverExecuted = true;
    if (m.actualRowsPerLoop !== undefined) m.rowsReturned = Math.round(m.actualRowsPerLoop * loops);
    if (m.actualTotalTimeMs !== undefined) m.inclusiveTimeMs = round3((m.actualTotalTimeMs * loops) / divisor);
  }
  if (m.planRowsPerLoop !== undefined) {
    // A node that never ran keeps the planner's figure for one execution, so the view can still show it.
    m.plannedRows = loops !== undefined && loops > 0 ? Math.round(m.planRowsPerLoop * loops) : m.planRowsPerLoop;
  }
  // "Rows Removed by ..." are printed as an average per loop and kept as printed.
  if ((v = num(o['Rows Removed by Filter'])) !== undefined) m.rowsRemovedByFilter = v;
  if ((v = num(o['Rows Removed by Join Filter'])) !== undefined) m.rowsRemovedByJoinFilter = v;
  if ((v = num(o['Rows Removed by Index Recheck'])) !== undefined) m.rowsRemovedByIndexRecheck = v;
  if ((v = num(o['Heap Fetches'])) !== undefined) m.heapFetches = v;
  if ((v = num(o['Index Searches'])) !== undefined) m.indexSearches = v;
  const buffers = readBuffers(o);
  if (buffers) m.buffers = buffers;
  readSort(o, m);
  if ((v = num(o['Hash Buckets'])) !== undefined) m.hashBuckets = v;
  if ((v = num(o['Hash Batches']) ?? num(o['HashAgg Batches'])) !== undefined) m.hashBatches = v;
  if ((v = num(o['Original Hash Batches'])) !== undefined) m.originalHashBatches = v;
  if ((v = num(o['Disk Usage'])) !== undefined) m.diskUsageKb = v;
  if ((v = num(o['Peak Memory Usage'])) !== undefined) m.peakMemoryKb = v;
  if ((v = num(o['Workers Planned'])) !== undefined) m.workersPlanned = v;
  if ((v = num(o['Workers Launched'])) !== undefined) m.workersLaunched = v;
  if ((v = num(o['Exact Heap Blocks'])) !== undefined) m.exactHeapBlocks = v;
  if ((v = num(o['Lossy Heap Blocks'])) !== undefined) m.lossyHeapBlocks = v;
  if ((v = num(o['WAL Records'])) !== undefined) m.walRecords = v;
  if ((v = num(o['WAL FPI'])) !== undefined) m.walFpi = v;
  if ((v = num(o['WAL Bytes'])) !== undefined) m.walBytes = v;
  if (Array.isArray(o.Workers)) {
    const workers = o.Workers.filter(isObj).map(readWorker);
    if (workers.length > 0) m.workers = workers;
  }
  return m;
}

/** Sort method and space of a Sort node, or the summary of an Incremental Sort's groups. */
function readSort(o: Doc, m: NodeMetrics | WorkerStats): void {
  const method = str(o['Sort Method']);
  if (method !== undefined) m.sortMethod = method;
  const space = num(o['Sort Space Used']);
  if (space !== undefined) m.sortSpaceKb = space;
  const type = str(o['Sort Space Type']);
  if (type !== undefined) m.sortSpaceType = type;
  if (method !== undefined) return;
  if (o['Full-sort Groups'] === undefined && o['Pre-sorted Groups'] === undefined) return;
  const methods: string[] = [];
  let peakMem: number | undefined;
  let peakDisk: number | undefined;
  for (const groupKey of ['Full-sort Groups', 'Pre-sorted Groups']) {
    const g = o[groupKey];
    if (!isObj(g)) continue;
    for (const x of strList(g['Sort Methods Used']) ?? []) if (!methods.includes(x)) methods.push(x);
    const mem = isObj(g['Sort Space Memory']) ? num(g['Sort Space Memory']['Peak Sort Space Used']) : undefined;
    const disk = isObj(g['Sort Space Disk']) ? num(g['Sort Space Disk']['Peak Sort Space Used']) : undefined;
    if (mem !== undefined) peakMem = Math.max(peakMem ?? 0, mem);
    if (disk !== undefined) peakDisk = Math.max(peakDisk ?? 0, disk);
  }
  if (methods.length > 0) m.sortMethod = methods.join(', ');
  if (peakDisk !== undefined) {
    m.sortSpaceKb = peakDisk;
    m.sortSpaceType = 'Disk';
  } else if (peakMem !== undefined) {
    m.sortSpaceKb = peakMem;
    m.sortSpaceType = 'Memory';
  }
}

function readWorker(w: Doc): WorkerStats {
  const s: WorkerStats = { worker: num(w['Worker Number']) ?? -1 };
  const rows = num(w['Actual Rows']);
  if (rows !== undefined) s.actualRows = rows;
  const time = num(w['Actual Total Time']);
  if (time !== undefined) s.actualTotalTimeMs = time;
  const loops = num(w['Actual Loops']);
  if (loops !== undefined) s.loops = loops;
  const buffers = readBuffers(w);
  if (buffers) s.buffers = buffers;
  readSort(w, s);
  return s;
}

/** Buffer counters and I/O times of a node, a worker or the planning phase; undefined when none. */
export function readBuffers(o: Doc): Buffers | undefined {
  let b: Buffers | undefined;
  let v: number | undefined;
  if ((v = num(o['Shared Hit Blocks'])) !== undefined) (b ??= {}).sharedHit = v;
  if ((v = num(o['Shared Read Blocks'])) !== undefined) (b ??= {}).sharedRead = v;
  if ((v = num(o['Shared Dirtied Blocks'])) !== undefined) (b ??= {}).sharedDirtied = v;
  if ((v = num(o['Shared Written Blocks'])) !== undefined) (b ??= {}).sharedWritten = v;
  if ((v = num(o['Local Hit Blocks'])) !== undefined) (b ??= {}).localHit = v;
  if ((v = num(o['Local Read Blocks'])) !== undefined) (b ??= {}).localRead = v;
  if ((v = num(o['Local Dirtied Blocks'])) !== undefined) (b ??= {}).localDirtied = v;
  if ((v = num(o['Local Written Blocks'])) !== undefined) (b ??= {}).localWritten = v;
  if ((v = num(o['Temp Read Blocks'])) !== undefined) (b ??= {}).tempRead = v;
  if ((v = num(o['Temp Written Blocks'])) !== undefined) (b ??= {}).tempWritten = v;
  if ((v = num(o['Temp I/O Read Time'])) !== undefined) (b ??= {}).tempIoReadTimeMs = v;
  if ((v = num(o['Temp I/O Write Time'])) !== undefined) (b ??= {}).tempIoWriteTimeMs = v;
  // Up to 16 one pair of I/O times covers shared and local blocks; from 17 they are split.
  const read = num(o['I/O Read Time']) ?? sumDefined(num(o['Shared I/O Read Time']), num(o['Local I/O Read Time']));
  const write = num(o['I/O Write Time']) ?? sumDefined(num(o['Shared I/O Write Time']), num(o['Local I/O Write Time']));
  if (read !== undefined) (b ??= {}).ioReadTimeMs = read;
  if (write !== undefined) (b ??= {}).ioWriteTimeMs = write;
  return b;
}

function sumDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined && b === undefined) return undefined;
  return round3((a ?? 0) + (b ?? 0));
}

function readMeta(q: Doc, root: PlanNode): PostgresMeta {
  const meta: PostgresMeta = {};
  const planning = num(q['Planning Time']);
  if (planning !== undefined) meta.planningTimeMs = planning;
  const execution = num(q['Execution Time']) ?? num(q['Total Runtime']);
  if (execution !== undefined) meta.executionTimeMs = execution;
  meta.analyzed = root.metrics.loops !== undefined || root.metrics.actualRowsPerLoop !== undefined;
  const planningDoc = isObj(q.Planning) ? q.Planning : undefined;
  const planningBuffers = planningDoc ? readBuffers(planningDoc) : undefined;
  if (planningBuffers) meta.planningBuffers = planningBuffers;
  meta.buffersReported = planningBuffers !== undefined || anyBuffers(root);
  if (planningDoc && (planningDoc['Memory Used'] !== undefined || planningDoc['Memory Allocated'] !== undefined)) {
    const mem: Record<string, unknown> = {};
    for (const k of ['Memory Used', 'Memory Allocated']) if (planningDoc[k] !== undefined) mem[k] = num(planningDoc[k]) ?? planningDoc[k];
    meta.planningMemory = mem;
  }
  if (isObj(q.Settings)) {
    const settings: Record<string, string> = {};
    for (const [k, v] of Object.entries(q.Settings)) settings[k] = str(v) ?? JSON.stringify(v);
    meta.settings = settings;
  }
  if (isObj(q.JIT)) meta.jit = readJit(q.JIT);
  if (Array.isArray(q.Triggers)) {
    const triggers = q.Triggers.filter(isObj).map((t) => {
      const constraint = str(t['Constraint Name']);
      const out: { name: string; relation?: string; timeMs?: number; calls?: number } = {
        name: str(t['Trigger Name']) ?? (constraint ? `constraint ${constraint}` : 'trigger'),
      };
      const rel = str(t.Relation);
      if (rel !== undefined) out.relation = rel;
      const time = num(t.Time);
      if (time !== undefined) out.timeMs = time;
      const calls = num(t.Calls);
      if (calls !== undefined) out.calls = calls;
      return out;
    });
    if (triggers.length > 0) meta.triggers = triggers;
  }
  const text = str(q['Query Text']);
  if (text !== undefined) meta.queryText = text;
  const id = str(q['Query Identifier']);
  if (id !== undefined) meta.queryIdentifier = id;
  if (isObj(q.Serialization)) meta.serialization = { ...q.Serialization };
  return meta;
}

function anyBuffers(node: PlanNode): boolean {
  if (node.metrics.buffers) return true;
  return node.children.some(anyBuffers);
}

function readJit(j: Doc): NonNullable<PostgresMeta['jit']> {
  const jit: NonNullable<PostgresMeta['jit']> = {};
  const functions = num(j.Functions);
  if (functions !== undefined) jit.functions = functions;
  if (isObj(j.Options)) {
    const options: Record<string, boolean> = {};
    for (const [k, v] of Object.entries(j.Options)) {
      const b = bool(v);
      if (b !== undefined) options[k] = b;
    }
    jit.options = options;
  }
  if (isObj(j.Timing)) {
    const timing: Record<string, number> = {};
    for (const [k, v] of Object.entries(j.Timing)) {
      if (isObj(v)) {
        // From 17 "Generation" is a group holding its total and the deform part of it.
        const total = num(v.Total);
        if (total !== undefined) timing[k] = total;
        for (const [k2, v2] of Object.entries(v)) {
          const n = num(v2);
          if (k2 !== 'Total' && n !== undefined) timing[k2] = n;
        }
      } else {
        const n = num(v);
        if (n !== undefined) timing[k] = n;
      }
    }
    jit.timingMs = timing;
  }
  return jit;
}
