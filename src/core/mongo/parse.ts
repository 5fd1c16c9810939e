// Reads a MongoDB explain document (already parsed from JSON or shell notation) into the plan model.
//
// Shapes read, from MongoDB 3.0 to 8.x:
// - find, count, distinct, update, delete, findAndModify: `queryPlanner.winningPlan` (+ `executionStats`).
//   With executionStats the drawn tree is `executionStats.executionStages` (the executed plan, same shape
//   as the winning plan plus figures); without it, the winning plan.
// - slot-based engine (explainVersion "2"): the drawn tree is `winningPlan.queryPlan`; `slotBasedPlan` is
//   kept verbatim in plan.mongo.slotBasedPlan. With executionStats the server prints figures only on the
//   slot-based stages (`executionStats.executionStages` is the SBE tree), each tagged with the
//   `planNodeId` of the queryPlan stage it implements. Figures are mapped back by that id: rows, time and
//   isEOF come from the shallowest SBE stage of the id (the one whose output is the stage's output);
//   keys examined and seeks are summed over its index stages (ixscan/ixseek: `keysExamined`, else
//   `numReads`), documents examined over its scan/seek/fetch stages (`numReads`), dupsTested/dupsDropped
//   and usedDisk over all of its stages. The SBE tree itself is kept in plan.mongo.slotBasedExecutionStages.
// - aggregate: `stages[]`, drawn as data flow like PostgreSQL: the last stage is the root, each stage's
//   child is the previous stage, and `$cursor` / `$geoNearCursor` hold the query layer's plan as their
//   child. A pipeline pushed down entirely prints a top-level queryPlanner and is read like find.
//   Totals: keys and documents examined are the cursor's; nReturned is the last stage's output when
//   stage figures were printed (the pipeline's result), else the cursor's.
// - sharded: mongos find (`winningPlan.shards[]` under SHARD_MERGE / SINGLE_SHARD / SHARD_MERGE_SORT) and
//   mongos aggregate (`shards{}` + `splitPipeline`): one child per shard, role 'shard'.
// - rejected plans, with trial figures from allPlansExecution matched by plan shape, then by position.
// Pre-3.0 output and compatible APIs that print no stage tree are refused with one sentence.

import type { LoadResult, MongoMeta, NodeDetails, NodeMetrics, Plan, PlanFormat, PlanNode, PlanTotals, RejectedPlan } from '../model';
import { emptyMaxima, makeNode, MAX_PLAN_NODES, TOO_MANY_NODES } from '../model';
import { walk } from '../metrics';
import { shellNumber } from './shellNotation';

type Obj = Record<string, unknown>;

/** Keys under which a stage holds its inputs, in drawing order. */
const CHILD_KEYS = ['inputStage', 'inputStages', 'outerStage', 'innerStage', 'thenStage', 'elseStage'] as const;

/** Deepest stage nesting drawn; real plans stay far below, a hostile document is cut here. */
const MAX_DEPTH = 400;

/** Classic query stages (queryPlanner and executionStages) and mongos stages this reader knows. */
const KNOWN_STAGES = new Set([
  'AND_HASH', 'AND_SORTED', 'BATCHED_DELETE', 'CACHED_PLAN', 'CLUSTERED_IXSCAN', 'COLLSCAN', 'COUNT', 'COUNT_SCAN',
  'DELETE', 'DISTINCT_SCAN', 'ENSURE_SORTED', 'EOF', 'EQ_LOOKUP', 'EQ_LOOKUP_UNWIND', 'EXPRESS_CLUSTERED_IXSCAN',
  'EXPRESS_DELETE', 'EXPRESS_IDHACK', 'EXPRESS_IXSCAN', 'EXPRESS_UPDATE', 'FETCH', 'GEO_NEAR_2D', 'GEO_NEAR_2DSPHERE',
  'GROUP', 'IDHACK', 'IXSCAN', 'KEEP_MUTATIONS', 'LIMIT', 'MATCH', 'MULTI_ITERATOR', 'MULTI_PLAN', 'OR', 'PROJECTION',
  'PROJECTION_COVERED', 'PROJECTION_DEFAULT', 'PROJECTION_SIMPLE', 'QUEUED_DATA', 'RECORD_STORE_FAST_COUNT',
  'REPLACE_ROOT', 'RETURN_KEY', 'SAMPLE_FROM_TIMESERIES_BUCKET', 'SEARCH', 'SENTINEL', 'SHARDING_FILTER', 'SHARD_MERGE',
  'SHARD_MERGE_SORT', 'SHARD_WRITE', 'SINGLE_SHARD', 'SKIP', 'SORT', 'SORT_KEY_GENERATOR', 'SORT_MERGE', 'SPOOL',
  'SUBPLAN', 'TEXT', 'TEXT_MATCH', 'TEXT_OR', 'TIMESERIES_MODIFY', 'TRIAL', 'UNPACK_SAMPLED_TS_BUCKET',
  'UNPACK_TIMESERIES_BUCKET', 'UNPACK_TS_BUCKET', 'UNWIND', 'UPDATE', 'VIRTUAL_SCAN', 'WINDOW', 'GEO_2D', '2D', '2DSPHERE',
]);

/** Stage names Amazon DocumentDB documents in its explain output and MongoDB never prints. */
const DOCUMENTDB_STAGES = new Set(['LIMIT_SKIP', 'SUBSCAN', 'IXONLYSCAN', 'HASH_AGGREGATE', 'SORT_AGGREGATE', 'HASH_JOIN', 'MERGE_JOIN', 'NESTED_LOOP_JOIN', 'MATERIALIZE']);

/** Index stages of the slot-based engine: their reads are index keys. */
const SBE_INDEX_STAGE = /^(ix|simpleIndexScan|indexScan)/i;
/** Record stages of the slot-based engine: their reads are documents. */
const SBE_RECORD_STAGES = new Set(['scan', 'seek', 'fetch', 'pscan', 'parallel_scan']);

interface Ctx {
  warnings: string[];
  unknownKinds: Set<string>;
  documentDb: boolean;
  sawExecutionStats: boolean;
  sawAllPlans: boolean;
  sawStageFigures: boolean;
  sbe: boolean;
  classic: boolean;
  depthCut: boolean;
  unmatchedSbe: number;
  /** First query layer's facts, for the plan-wide meta. */
  first?: { namespace?: string; parsedQuery?: unknown; queryHash?: string; planCacheKey?: string };
  slotBasedPlans: { shardName?: string; plan: unknown; stages?: unknown }[];
  /** Stages built so far, against MAX_PLAN_NODES; past it the reader stops and refuses. */
  nodes: number;
  tooMany: boolean;
  /** The stage objects that became nodes' raw fields, whose inputs stripInputs takes off. */
  drawn: Obj[];
}

interface Layer {
  root: PlanNode;
  rejected: RejectedPlan[];
  totals: PlanTotals;
}

/**
 * Reads a parsed explain document. The document becomes part of the plan (its stage objects are the
 * nodes' `raw`, without their inputs): pass one nobody else holds.
 */
export function parseMongoExplain(doc: unknown, format: PlanFormat): LoadResult {
  if (!isObj(doc)) return refuse('This is not a MongoDB explain output: a document was expected.');
  const refusal = refuseForeign(doc);
  if (refusal) return refuse(refusal);

  const ctx: Ctx = {
    warnings: [], unknownKinds: new Set(), documentDb: looksLikeDocumentDb(doc), sawExecutionStats: false, sawAllPlans: false,
    sawStageFigures: false, sbe: false, classic: false, depthCut: false, unmatchedSbe: 0, slotBasedPlans: [],
    nodes: 0, tooMany: false, drawn: [],
  };
  if (ctx.documentDb) {
    ctx.warnings.push('This explain looks like Amazon DocumentDB (MongoDB-compatible, not MongoDB): its stages and figures are drawn as printed, but its planner and indexes behave differently.');
  }

  let root: PlanNode | undefined;
  let rejected: RejectedPlan[] = [];
  let totals: PlanTotals = {};
  let sharded = false;
  const qp = isObj(doc.queryPlanner) ? doc.queryPlanner : undefined;

  if (qp && isObj(qp.winningPlan) && Array.isArray(qp.winningPlan.shards)) {
    const r = readShardedQuery(doc, qp, ctx);
    ({ root, rejected, totals } = r);
    sharded = true;
  } else if (isObj(doc.shards) && !Array.isArray(doc.shards)) {
    const r = readShardedAggregate(doc, doc.shards, ctx);
    if (!r) return refuse('This sharded explain lists no shard with a plan to draw.');
    ({ root, rejected, totals } = r);
    sharded = true;
  } else if (Array.isArray(doc.stages)) {
    if (doc.stages.length === 0) return refuse('This aggregate explain has an empty stages list, so there is no plan to draw.');
    const r = readPipeline(doc.stages, ctx, undefined);
    root = r.root;
    rejected = r.rejected;
    totals = r.totals;
  } else if (qp) {
    if (!isObj(qp.winningPlan)) return refuse('The queryPlanner section has no winningPlan, so there is no plan tree to draw.');
    const layer = readLayer(qp, isObj(doc.executionStats) ? doc.executionStats : undefined, ctx, undefined);
    root = layer.root;
    rejected = layer.rejected;
    totals = layer.totals;
  } else if (doc.ok === 0 || typeof doc.errmsg === 'string') {
    const msg = typeof doc.errmsg === 'string' ? oneLine(doc.errmsg) : 'no message';
    return refuse(`The server answered with an error instead of a plan: ${msg}.`);
  } else {
    return refuse('This MongoDB output has no queryPlanner, stages or shards section, so there is no plan tree to draw.');
  }
  if (ctx.tooMany) return refuse(TOO_MANY_NODES);
  if (!root) return refuse('This explain output holds no stage to draw.');
  stripInputs(ctx.drawn);

  if (ctx.unknownKinds.size > 0) {
    const kinds = [...ctx.unknownKinds];
    ctx.warnings.push(`${kinds.length === 1 ? 'Stage' : 'Stages'} ${kinds.join(', ')} ${kinds.length === 1 ? 'is' : 'are'} not known to this reader and ${kinds.length === 1 ? 'is' : 'are'} drawn with the figures as printed.`);
  }
  if (ctx.unmatchedSbe > 0) {
    ctx.warnings.push(`${ctx.unmatchedSbe} slot-based plan ${ctx.unmatchedSbe === 1 ? 'stage has' : 'stages have'} no execution figures with a matching planNodeId, so ${ctx.unmatchedSbe === 1 ? 'it shows' : 'they show'} none.`);
  }
  if (ctx.depthCut) ctx.warnings.push(`The plan is nested more than ${MAX_DEPTH} stages deep; the deeper stages are not drawn.`);

  const meta = buildMeta(doc, ctx, sharded);
  const plan: Plan = {
    engine: 'mongodb',
    format,
    root,
    nodes: [],
    rejectedPlans: rejected,
    totals,
    maxima: emptyMaxima(),
    mongo: meta,
    warnings: ctx.warnings,
  };
  const version = serverVersion(doc);
  if (version !== undefined) plan.serverVersion = version;
  return { ok: true, plan };
}

/**
 * Takes the input stages off the stage objects that became raw fields, once nothing reads the document's
 * trees any more (shapes and trial figures are matched on them). MongoDB prints the inputs last, and
 * removing an object's last property keeps it in V8's fast mode.
 */
function stripInputs(drawn: Obj[]): void {
  for (const o of drawn) {
    if ('inputStage' in o) delete o.inputStage;
    if ('inputStages' in o) delete o.inputStages;
    if ('outerStage' in o) delete o.outerStage;
    if ('innerStage' in o) delete o.innerStage;
    if ('thenStage' in o) delete o.thenStage;
    if ('elseStage' in o) delete o.elseStage;
  }
}

// ---- refusals of what is not (supported) MongoDB explain output ------------------------------------

function refuse(sentence: string): LoadResult {
  return { ok: false, refusal: sentence };
}

/** Pre-3.0 output, compatible servers without a stage tree, and documents that are not explains. */
function refuseForeign(doc: Obj): string | undefined {
  const serverInfo = isObj(doc.serverInfo) ? doc.serverInfo : undefined;
  const ferret = str(serverInfo?.ferretdbVersion) ?? str(doc.ferretdbVersion);
  if (ferret !== undefined) {
    if (!isObj(doc.queryPlanner) && !Array.isArray(doc.stages)) {
      return `This is FerretDB ${ferret} server information (buildInfo), not an explain output, so there is no plan to draw.`;
    }
    const inner = isObj(doc.queryPlanner) ? doc.queryPlanner.Plan : undefined;
    const backend = Array.isArray(inner) ? ' on SQLite' : isObj(inner) && 'Node Type' in inner ? ' on PostgreSQL' : '';
    return `This explain comes from FerretDB ${ferret}${backend}, a MongoDB-compatible server whose output has no winningPlan or executionStats stage tree to analyse.`;
  }
  if (isObj(doc.queryPlanner) && 'Plan' in doc.queryPlanner && !('winningPlan' in doc.queryPlanner)) {
    return 'This explain comes from a MongoDB-compatible server that prints a SQL plan instead of a winningPlan or executionStats stage tree, so there is nothing to analyse.';
  }
  const cosmosStages = Array.isArray(doc.stages) && doc.stages.some((s) => isObj(s) && s.stage === '$query' && ('timeInclusiveMS' in s || 'details' in s));
  if (cosmosStages || 'estimatedDelayFromRateLimitingInMilliseconds' in doc) {
    return 'This explain looks like Azure Cosmos DB for MongoDB (request-unit model), whose output reports a $query stage with document counts but no winningPlan or executionStats stage tree to analyse.';
  }
  const legacyShards = isObj(doc.shards) && Object.values(doc.shards).some((v) => Array.isArray(v) && v.some((e) => isObj(e) && ('cursor' in e || 'nscanned' in e)));
  if (!('queryPlanner' in doc) && !('stages' in doc) && (typeof doc.cursor === 'string' || 'nscanned' in doc || 'clusteredType' in doc || legacyShards)) {
    return 'This is the pre-3.0 explain format (cursor and nscanned, with no queryPlanner stage tree), which this reader does not support: re-run explain on MongoDB 3.0 or later.';
  }
  return undefined;
}

function looksLikeDocumentDb(doc: Obj): boolean {
  const es = isObj(doc.executionStats) ? doc.executionStats : undefined;
  if (es && ('planningTimeMillis' in es || typeof es.executionTimeMillis === 'string')) return true;
  const qp = isObj(doc.queryPlanner) ? doc.queryPlanner : undefined;
  const stage = qp && isObj(qp.winningPlan) ? qp.winningPlan.stage : undefined;
  return typeof stage === 'string' && DOCUMENTDB_STAGES.has(stage);
}

// ---- the query layer: winning plan, executed stages, rejected plans -------------------------------

/**
 * Reads one query layer (a find, a $cursor, or one shard's part): draws the executed stages when they
 * were printed, else the winning plan, and reads the rejected plans with their trial figures.
 */
function readLayer(qp: Obj, es: Obj | undefined, ctx: Ctx, shardName: string | undefined): Layer {
  noteFirst(ctx, qp);
  const wp = isObj(qp.winningPlan) ? qp.winningPlan : {};
  const ns = str(qp.namespace);
  const exec = es && isObj(es.executionStages) ? es.executionStages : undefined;
  if (es) ctx.sawExecutionStats = true;
  if (es && Array.isArray(es.allPlansExecution)) ctx.sawAllPlans = true;

  let root: PlanNode;
  if (isObj(wp.queryPlan)) {
    ctx.sbe = true;
    root = buildStage(wp.queryPlan, undefined, ctx, ns, 0);
    if ('slotBasedPlan' in wp) ctx.slotBasedPlans.push({ shardName, plan: wp.slotBasedPlan, stages: exec });
    if (exec && looksSlotBased(exec)) attachSbeFigures(root, exec, ctx);
    else if (exec) {
      // Some servers print a classic executionStages next to a queryPlan (the query fell back to the
      // classic engine): that tree carries the figures, so it is the one drawn.
      root = buildStage(exec, undefined, ctx, ns, 0);
    }
  } else {
    if (typeof wp.stage === 'string') ctx.classic = true;
    const drawExec = exec !== undefined && typeof exec.stage === 'string';
    const shape: ShapeCheck = { differs: false, unsure: false };
    root = buildStage(drawExec ? exec : wp, undefined, ctx, ns, 0, drawExec ? wp : undefined, drawExec ? shape : undefined);
    const differs = shape.differs || (shape.unsure && !sameShape(exec!, wp, 0));
    if (drawExec && typeof wp.stage === 'string' && differs) {
      ctx.warnings.push('The executed stages differ in shape from the winning plan; the executed stages are drawn.');
    }
  }

  const totals = totalsOf(es);
  const trials = es && Array.isArray(es.allPlansExecution) ? es.allPlansExecution : undefined;
  const rejected = readRejected(qp, wp, trials, ctx, ns, shardName);
  return { root, rejected, totals };
}

function noteFirst(ctx: Ctx, qp: Obj): void {
  if (ctx.first) return;
  const first: NonNullable<Ctx['first']> = {};
  if (str(qp.namespace) !== undefined) first.namespace = str(qp.namespace);
  if ('parsedQuery' in qp) first.parsedQuery = qp.parsedQuery;
  if (str(qp.queryHash) !== undefined) first.queryHash = str(qp.queryHash);
  if (str(qp.planCacheKey) !== undefined) first.planCacheKey = str(qp.planCacheKey);
  ctx.first = first;
}

/**
 * Rejected plans in their printed order. Trial figures (allPlansExecution lists every candidate, the
 * winner included, in an order of its own) are matched by plan shape, then by the indexes the plan
 * reads, and only then by position among the entries still unmatched.
 */
function readRejected(qp: Obj, wp: Obj, trials: unknown[] | undefined, ctx: Ctx, ns: string | undefined, shardName: string | undefined): RejectedPlan[] {
  const list = Array.isArray(qp.rejectedPlans) ? qp.rejectedPlans : [];
  const entries = (trials ?? []).filter(isObj);
  const used = new Set<number>();
  const candidateSig = (p: Obj): { shape: string; access: string } => {
    const tree = isObj(p.queryPlan) ? p.queryPlan : p;
    return { shape: shapeOf(tree), access: accessOf(tree) };
  };
  const entrySig = (e: Obj): { shape: string; access: string } => {
    const stages = isObj(e.executionStages) ? e.executionStages : {};
    return looksSlotBased(stages) ? { shape: '', access: accessOf(stages) } : { shape: shapeOf(stages), access: accessOf(stages) };
  };
  const sigs = entries.map(entrySig);
  // Trial entries by signature, in order, so each candidate finds its own in constant time.
  const byLevel = { shape: new Map<string, number[]>(), access: new Map<string, number[]>() };
  sigs.forEach((s, i) => {
    for (const level of ['shape', 'access'] as const) {
      if (!s[level]) continue;
      const list = byLevel[level].get(s[level]);
      if (list) list.push(i);
      else byLevel[level].set(s[level], [i]);
    }
  });
  const take = (sig: { shape: string; access: string }): number | undefined => {
    for (const level of ['shape', 'access'] as const) {
      if (!sig[level]) continue;
      const hit = byLevel[level].get(sig[level])?.find((i) => !used.has(i));
      if (hit !== undefined) return hit;
    }
    return undefined;
  };
  // The winner's own trial is taken out first so that it is never given to a rejected plan.
  if (entries.length > 0) {
    const w = take(candidateSig(wp));
    if (w !== undefined) used.add(w);
    else if (entries.length === list.length + 1) used.add(0);
  }
  const matches: (number | undefined)[] = list.map((p) => {
    if (!isObj(p)) return undefined;
    const i = take(candidateSig(p));
    if (i !== undefined) used.add(i);
    return i;
  });
  let guessed = false;
  for (let r = 0; r < matches.length; r++) {
    if (matches[r] !== undefined || !isObj(list[r])) continue;
    const free = sigs.findIndex((_s, i) => !used.has(i));
    if (free < 0) break;
    matches[r] = free;
    used.add(free);
    guessed = true;
  }
  if (guessed) ctx.warnings.push('Some rejected plans were matched to their trial figures by position because their shapes did not identify them.');

  const out: RejectedPlan[] = [];
  list.forEach((p, index) => {
    if (!isObj(p)) return;
    const entry = matches[index] !== undefined ? entries[matches[index]!] : undefined;
    const stages = entry && isObj(entry.executionStages) ? entry.executionStages : undefined;
    let root: PlanNode;
    if (isObj(p.queryPlan)) {
      root = buildStage(p.queryPlan, undefined, ctx, ns, 0);
      if (stages && looksSlotBased(stages)) attachSbeFigures(root, stages, ctx);
    } else {
      const drawTrial = stages !== undefined && typeof stages.stage === 'string';
      root = buildStage(drawTrial ? stages : p, undefined, ctx, ns, 0, drawTrial ? p : undefined);
    }
    const rej: RejectedPlan = { index, root };
    if (shardName !== undefined) rej.shardName = shardName;
    if (entry) {
      const trial: NonNullable<RejectedPlan['trial']> = {};
      setNum(trial, 'nReturned', entry.nReturned);
      setNum(trial, 'keysExamined', entry.totalKeysExamined);
      setNum(trial, 'docsExamined', entry.totalDocsExamined);
      if (stages) setNum(trial, 'works', stages.works);
      setNum(trial, 'score', entry.score);
      rej.trial = trial;
    }
    out.push(rej);
  });
  return out;
}

// ---- classic stages ----------------------------------------------------------------------------------

/**
 * Draws one classic stage and its inputs. `twin` is the same stage in the winning plan when `obj` comes
 * from executionStages: some servers (8.0 express stages) print descriptive fields such as keyPattern
 * only there, so details missing from the executed stage are taken from it.
 */
function buildStage(obj: Obj, role: string | undefined, ctx: Ctx, ns: string | undefined, depth: number, twin?: Obj, shape?: ShapeCheck): PlanNode {
  const kind = typeof obj.stage === 'string' ? obj.stage : '(unnamed stage)';
  if (shape && twin && !shape.differs) compareStage(obj, twin, shape);
  if (!KNOWN_STAGES.has(kind) && !(ctx.documentDb && DOCUMENTDB_STAGES.has(kind)) && !looksSbeName(kind)) ctx.unknownKinds.add(kind);
  if (++ctx.nodes > MAX_PLAN_NODES) ctx.tooMany = true;
  // The stage's own object becomes its raw fields: its inputs are taken off it once the whole document
  // has been read (see stripInputs), instead of copying the other fields of every stage.
  ctx.drawn.push(obj);
  const node = makeNode(kind, '', obj, role);
  readStageFigures(node.metrics, obj, kind);
  if (twin && twin.stage === obj.stage) readStageDetails(node.details, twin);
  readStageDetails(node.details, obj);
  node.label = stageLabel(kind, obj, node.details, ns);
  if (depth >= MAX_DEPTH || ctx.tooMany) {
    if (!ctx.tooMany && CHILD_KEYS.some((k) => k in obj)) ctx.depthCut = true;
    return node;
  }
  for (const key of CHILD_KEYS) {
    const v = obj[key];
    const t = twin && twin.stage === obj.stage ? twin[key] : undefined;
    if (isObj(v)) node.children.push(buildStage(v, key, ctx, ns, depth + 1, isObj(t) ? t : undefined, shape));
    else if (Array.isArray(v)) {
      const twins = Array.isArray(t) ? t : undefined;
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        const tc: unknown = twins?.[i];
        if (isObj(c)) node.children.push(buildStage(c, key, ctx, ns, depth + 1, isObj(tc) ? tc : undefined, shape));
      }
    }
  }
  return node;
}

/**
 * Whether the executed stages have the winning plan's shape (sameShape), found while the executed tree is
 * drawn with the winning plan as its twin: each pair of stages is compared as sameShape compares them.
 * Where the two trees hold their inputs differently (under other keys), the pairs drawn are not the ones
 * sameShape compares: `unsure` says so, and sameShape decides.
 */
interface ShapeCheck {
  differs: boolean;
  unsure: boolean;
}

function compareStage(a: Obj, b: Obj, shape: ShapeCheck): void {
  if (a.stage !== b.stage) {
    if (String(a.stage ?? '?') !== String(b.stage ?? '?')) shape.differs = true;
    // Equal as text but not the same value: the inputs are not drawn with their twins.
    else shape.unsure = true;
    return;
  }
  const ai = typeof a.indexName === 'string' ? a.indexName : undefined;
  const bi = typeof b.indexName === 'string' ? b.indexName : undefined;
  const ab = 'indexBounds' in a;
  if (ai !== bi || ab !== 'indexBounds' in b || (ab && !sameBounds(a.indexBounds, b.indexBounds))) {
    shape.differs = true;
    return;
  }
  for (const key of CHILD_KEYS) {
    const va = a[key];
    const vb = b[key];
    if (va === undefined && vb === undefined) continue;
    if (isObj(va) && isObj(vb)) continue;
    if (Array.isArray(va) && Array.isArray(vb) && va.length === vb.length && va.every(isObj) && vb.every(isObj)) continue;
    shape.unsure = true;
  }
}

/** Slot-based stage names are lower case ('nlj', 'ixseek'); a queryPlan never prints them. */
function looksSbeName(kind: string): boolean {
  return /^[a-z]/.test(kind);
}

function readStageFigures(m: NodeMetrics, o: Obj, kind: string): void {
  setNum(m, 'rowsReturned', o.nReturned);
  setNum(m, 'inclusiveTimeMs', o.executionTimeMillisEstimate);
  // mongos merge stages print their wall time without "Estimate".
  if (m.inclusiveTimeMs === undefined && /^SHARD_|^SINGLE_SHARD$/.test(kind)) setNum(m, 'inclusiveTimeMs', o.executionTimeMillis);
  setNum(m, 'keysExamined', o.keysExamined);
  setNum(m, 'docsExamined', o.docsExamined);
  setNum(m, 'seeks', o.seeks);
  setNum(m, 'works', o.works);
  setNum(m, 'advanced', o.advanced);
  setNum(m, 'needTime', o.needTime);
  setNum(m, 'needYield', o.needYield);
  setNum(m, 'dupsTested', o.dupsTested);
  setNum(m, 'dupsDropped', o.dupsDropped);
  // MongoDB up to 4.2 prints memUsage; 4.4+ prints totalDataSizeSorted, the bytes the sort held.
  setNum(m, 'memUsageBytes', o.memUsage ?? o.totalDataSizeSorted);
  setNum(m, 'skipAmount', o.skipAmount);
  setNum(m, 'limitAmount', o.limitAmount);
  const eof = flag(o.isEOF);
  if (eof !== undefined) m.isEOF = eof;
  const disk = flag(o.usedDisk);
  if (disk !== undefined) m.usedDisk = disk;
}

function readStageDetails(d: NodeDetails, o: Obj): void {
  const indexName = str(o.indexName);
  if (indexName !== undefined) d.indexName = indexName;
  const kp = pattern(o.keyPattern);
  if (kp) d.keyPattern = kp;
  const bounds = boundsOf(o.indexBounds);
  if (bounds) d.indexBounds = bounds;
  const mk = flag(o.isMultiKey);
  if (mk !== undefined) d.isMultiKey = mk;
  const mkp = stringLists(o.multiKeyPaths);
  if (mkp) d.multiKeyPaths = mkp;
  const dir = str(o.direction);
  if (dir !== undefined) d.direction = dir;
  if ('filter' in o) d.filter = o.filter;
  const sp = pattern(o.sortPattern);
  if (sp) d.sortPattern = sp;
}

function stageLabel(kind: string, o: Obj, d: NodeDetails, ns: string | undefined): string {
  if (d.keyPattern && /IXSCAN|COUNT_SCAN|DISTINCT_SCAN|GEO_NEAR|^TEXT$|IXONLYSCAN/.test(kind)) return `${kind} ${formatPattern(d.keyPattern)}`;
  if (d.indexName && /IXSCAN|COUNT_SCAN|DISTINCT_SCAN|GEO_NEAR|^TEXT|IXONLYSCAN/.test(kind)) return `${kind} ${d.indexName}`;
  const coll = collectionOf(ns);
  if ((kind === 'COLLSCAN' || /^(UPDATE|DELETE|BATCHED_DELETE|EXPRESS_UPDATE|EXPRESS_DELETE)$/.test(kind)) && coll) return `${kind} ${coll}`;
  if ((kind === 'SORT' || kind === 'SORT_MERGE') && d.sortPattern) {
    const limit = num(o.limitAmount);
    return `${kind} ${formatPattern(d.sortPattern)}${kind === 'SORT' && limit ? ` limit ${limit}` : ''}`;
  }
  if (kind === 'LIMIT' && num(o.limitAmount) !== undefined) return `LIMIT ${num(o.limitAmount)}`;
  if (kind === 'SKIP' && num(o.skipAmount) !== undefined) return `SKIP ${num(o.skipAmount)}`;
  return kind;
}

// ---- slot-based engine figures --------------------------------------------------------------------

function looksSlotBased(stages: Obj): boolean {
  let found = false;
  walkSbe(stages, (s) => {
    if (typeof s.stage === 'string' && looksSbeName(s.stage)) found = true;
  });
  return found;
}

/** Visits an SBE tree in preorder with depths; SBE stages hold inputs under several keys. */
function walkSbe(root: Obj, visit: (s: Obj, depth: number) => void): void {
  const stack: { s: Obj; depth: number }[] = [{ s: root, depth: 0 }];
  let steps = 0;
  while (stack.length > 0 && steps++ < 200000) {
    const { s, depth } = stack.pop()!;
    visit(s, depth);
    const kids: Obj[] = [];
    for (const v of Object.values(s)) {
      if (isObj(v) && typeof v.stage === 'string') kids.push(v);
      else if (Array.isArray(v)) for (const c of v) if (isObj(c) && typeof c.stage === 'string') kids.push(c);
    }
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ s: kids[i]!, depth: depth + 1 });
  }
}

/** Maps the SBE execution figures onto the drawn queryPlan by planNodeId (see the header). */
function attachSbeFigures(root: PlanNode, sbe: Obj, ctx: Ctx): void {
  const groups = new Map<number, { top: Obj; topDepth: number; all: Obj[] }>();
  walkSbe(sbe, (s, depth) => {
    const id = num(s.planNodeId);
    if (id === undefined) return;
    const g = groups.get(id);
    if (!g) groups.set(id, { top: s, topDepth: depth, all: [s] });
    else {
      g.all.push(s);
      if (depth < g.topDepth) {
        g.top = s;
        g.topDepth = depth;
      }
    }
  });
  walk(root, (node) => {
    const id = num(node.raw.planNodeId);
    const g = id === undefined ? undefined : groups.get(id);
    if (!g) {
      ctx.unmatchedSbe++;
      return;
    }
    const m = node.metrics;
    setNum(m, 'rowsReturned', g.top.nReturned);
    setNum(m, 'inclusiveTimeMs', g.top.executionTimeMillisEstimate);
    const eof = flag(g.top.isEOF);
    if (eof !== undefined) m.isEOF = eof;
    let keys: number | undefined;
    let docs: number | undefined;
    let seeks: number | undefined;
    let dupsTested: number | undefined;
    let dupsDropped: number | undefined;
    let disk: boolean | undefined;
    const add = (a: number | undefined, b: number | undefined): number | undefined => (b === undefined ? a : (a ?? 0) + b);
    for (const s of g.all) {
      const name = typeof s.stage === 'string' ? s.stage : '';
      if (SBE_INDEX_STAGE.test(name)) {
        keys = add(keys, num(s.keysExamined) ?? num(s.numReads));
        seeks = add(seeks, num(s.seeks));
      } else if (SBE_RECORD_STAGES.has(name)) {
        docs = add(docs, num(s.docsExamined) ?? num(s.numReads));
      }
      dupsTested = add(dupsTested, num(s.dupsTested));
      dupsDropped = add(dupsDropped, num(s.dupsDropped));
      const d = flag(s.usedDisk);
      if (d !== undefined) disk = (disk ?? false) || d;
    }
    if (keys !== undefined) m.keysExamined = keys;
    if (docs !== undefined) m.docsExamined = docs;
    if (seeks !== undefined) m.seeks = seeks;
    if (dupsTested !== undefined) m.dupsTested = dupsTested;
    if (dupsDropped !== undefined) m.dupsDropped = dupsDropped;
    if (disk !== undefined) m.usedDisk = disk;
  });
}

// ---- aggregation pipelines ------------------------------------------------------------------------

interface PipelineResult {
  root: PlanNode;
  rejected: RejectedPlan[];
  totals: PlanTotals;
}

/** Draws `stages[]` as data flow: the last stage is the root, each stage's input the previous one. */
function readPipeline(stages: unknown[], ctx: Ctx, shardName: string | undefined, depth = 0): PipelineResult {
  let prev: PlanNode | undefined;
  let rejected: RejectedPlan[] = [];
  let totals: PlanTotals = {};
  let cursorSeen = false;
  for (const s of stages) {
    if (!isObj(s)) {
      ctx.warnings.push('A pipeline stage that is not a document was skipped.');
      continue;
    }
    const name = Object.keys(s).find((k) => k.startsWith('$'));
    if (name === undefined) {
      ctx.unknownKinds.add(typeof s.stage === 'string' ? s.stage : '(unnamed pipeline stage)');
    }
    const kind = name ?? (typeof s.stage === 'string' ? s.stage : '(unnamed pipeline stage)');
    if (++ctx.nodes > MAX_PLAN_NODES) {
      ctx.tooMany = true;
      break;
    }
    const body = name !== undefined ? s[name] : undefined;
    let node: PlanNode;
    if ((name === '$cursor' || name === '$geoNearCursor') && isObj(body)) {
      const qp = isObj(body.queryPlanner) ? body.queryPlanner : undefined;
      const es = isObj(body.executionStats) ? body.executionStats : undefined;
      node = makeNode(kind, kind, { ...s, [kind]: stripLayer(body) });
      readPipelineFigures(node, s, kind, body);
      if (qp && isObj(qp.winningPlan)) {
        const layer = readLayer(qp, es, ctx, shardName);
        layer.root.role = 'inputStage';
        node.children.push(layer.root);
        if (!cursorSeen) {
          rejected = layer.rejected;
          totals = layer.totals;
          cursorSeen = true;
        } else rejected = rejected.concat(layer.rejected);
      } else {
        ctx.warnings.push(`The ${kind} stage has no queryPlanner with a winningPlan, so its query plan is not drawn.`);
      }
    } else {
      node = makeNode(kind, pipelineLabel(kind, body), s);
      readPipelineFigures(node, s, kind, body);
      if (depth < 8) addSubPipelines(node, kind, body, ctx, shardName, depth);
    }
    if (prev) {
      prev.role = 'inputStage';
      node.children.unshift(prev);
    }
    prev = node;
  }
  if (!prev) prev = makeNode('(empty pipeline)', '(empty pipeline)', {});
  // The pipeline's result is what its last stage returned (a $match after the cursor may keep 1 of
  // 100000 documents: that gap is the waste to show). Its time is cumulative at the last stage; the
  // cursor's executionTimeMillis may be smaller, so the larger of the two is reported.
  totals = { ...totals };
  if (prev.metrics.rowsReturned !== undefined) totals.nReturned = prev.metrics.rowsReturned;
  const last = prev.metrics.inclusiveTimeMs;
  if (last !== undefined && (totals.executionTimeMs === undefined || last > totals.executionTimeMs)) totals.executionTimeMs = last;
  return { root: prev, rejected, totals };
}

/** The $cursor's own fields without the plan trees that become child nodes. */
function stripLayer(body: Obj): Obj {
  const out: Obj = { ...body };
  if (isObj(body.queryPlanner)) {
    const { winningPlan: _w, rejectedPlans: _r, ...rest } = body.queryPlanner;
    out.queryPlanner = rest;
  }
  if (isObj(body.executionStats)) {
    const { executionStages: _e, allPlansExecution: _a, ...rest } = body.executionStats;
    out.executionStats = rest;
  }
  return out;
}

function readPipelineFigures(node: PlanNode, s: Obj, kind: string, body: unknown): void {
  const m = node.metrics;
  setNum(m, 'rowsReturned', s.nReturned);
  setNum(m, 'inclusiveTimeMs', s.executionTimeMillisEstimate);
  const disk = flag(s.usedDisk);
  if (disk !== undefined) m.usedDisk = disk;
  if (kind !== '$cursor' && kind !== '$geoNearCursor') {
    // $lookup, $unionWith and search stages print the work they did on other collections.
    const b = isObj(body) ? body : {};
    setNum(m, 'keysExamined', s.totalKeysExamined ?? b.totalKeysExamined);
    setNum(m, 'docsExamined', s.totalDocsExamined ?? b.totalDocsExamined);
  }
  if (kind === '$sort') {
    setNum(m, 'memUsageBytes', s.totalDataSizeSortedBytesEstimate);
    if (isObj(body)) {
      const sp = pattern(body.sortKey);
      if (sp) node.details.sortPattern = sp;
      setNum(m, 'limitAmount', body.limit);
    }
  }
  if (kind === '$limit') setNum(m, 'limitAmount', body);
  if (kind === '$skip') setNum(m, 'skipAmount', body);
  if (kind === '$match') node.details.filter = body;
}

function noteStageFigures(ctx: Ctx, s: Obj): void {
  if (s.nReturned !== undefined || s.executionTimeMillisEstimate !== undefined) ctx.sawStageFigures = true;
}

/** $unionWith and $facet carry explained sub-pipelines: they are drawn as further inputs. */
function addSubPipelines(node: PlanNode, kind: string, body: unknown, ctx: Ctx, shardName: string | undefined, depth: number): void {
  if (!isObj(body)) return;
  const isStageList = (v: unknown): v is unknown[] => Array.isArray(v) && v.length > 0 && v.every((x) => isObj(x) && Object.keys(x).some((k) => k.startsWith('$')));
  // The drawn sub-pipelines leave the stage's raw fields, like every child stage does.
  if (kind === '$unionWith' && isStageList(body.pipeline)) {
    const sub = readPipeline(body.pipeline, ctx, shardName, depth + 1);
    sub.root.role = 'unionWith';
    node.children.push(sub.root);
    const { pipeline: _p, ...rest } = body;
    node.raw = { ...node.raw, [kind]: rest };
  } else if (kind === '$facet') {
    const rest: Obj = {};
    for (const [facet, stages] of Object.entries(body)) {
      if (!isStageList(stages)) {
        rest[facet] = stages;
        continue;
      }
      const sub = readPipeline(stages, ctx, shardName, depth + 1);
      sub.root.role = `facet ${facet}`;
      node.children.push(sub.root);
    }
    node.raw = { ...node.raw, [kind]: rest };
  }
}

function pipelineLabel(kind: string, body: unknown): string {
  const b = isObj(body) ? body : undefined;
  switch (kind) {
    case '$lookup':
      return b && str(b.from) ? `$lookup ${str(b.from)}` : kind;
    case '$unwind': {
      const path = typeof body === 'string' ? body : b ? str(b.path) : undefined;
      return path ? `$unwind ${path}` : kind;
    }
    case '$limit':
    case '$skip':
      return num(body) !== undefined ? `${kind} ${num(body)}` : kind;
    case '$sort': {
      const sp = b ? pattern(b.sortKey) : undefined;
      return sp ? `$sort ${formatPattern(sp)}${b && num(b.limit) ? ` limit ${num(b.limit)}` : ''}` : kind;
    }
    case '$unionWith':
      return b && str(b.coll) ? `$unionWith ${str(b.coll)}` : typeof body === 'string' ? `$unionWith ${body}` : kind;
    case '$out':
      return typeof body === 'string' ? `$out ${body}` : b && str(b.coll) ? `$out ${str(b.coll)}` : kind;
    case '$merge': {
      const into = b ? b.into : undefined;
      const coll = typeof into === 'string' ? into : isObj(into) ? str(into.coll) : undefined;
      return coll ? `$merge into ${coll}` : kind;
    }
    default:
      return kind;
  }
}

// ---- sharded explains -----------------------------------------------------------------------------

/** mongos find/count/distinct/write: winningPlan.shards[] and executionStats.executionStages.shards[]. */
function readShardedQuery(doc: Obj, qp: Obj, ctx: Ctx): Layer {
  const wp = qp.winningPlan as Obj;
  const es = isObj(doc.executionStats) ? doc.executionStats : undefined;
  const exec = es && isObj(es.executionStages) ? es.executionStages : undefined;
  if (es) ctx.sawExecutionStats = true;
  if (es && Array.isArray(es.allPlansExecution)) ctx.sawAllPlans = true;
  const top = exec && typeof exec.stage === 'string' ? exec : wp;
  const { shards: _s, ...ownFields } = top;
  const kind = str(top.stage) ?? 'SHARD_MERGE';
  if (!KNOWN_STAGES.has(kind)) ctx.unknownKinds.add(kind);
  const root = makeNode(kind, kind, ownFields);
  readStageFigures(root.metrics, top, kind);
  readStageDetails(root.details, top);

  const execShards = exec && Array.isArray(exec.shards) ? exec.shards.filter(isObj) : [];
  const trialShards = es && Array.isArray(es.allPlansExecution) ? es.allPlansExecution.filter(isObj) : [];
  const rejected: RejectedPlan[] = [];
  const summed: PlanTotals = {};
  (wp.shards as unknown[]).forEach((s, i) => {
    if (!isObj(s)) return;
    const name = str(s.shardName) ?? `shard ${i + 1}`;
    const se = execShards.find((x) => x.shardName === name) ?? execShards[i];
    const trials = trialShards.find((x) => x.shardName === name);
    const shardEs: Obj | undefined = se || trials
      ? { ...(se ?? {}), ...(trials && Array.isArray(trials.allPlans) ? { allPlansExecution: trials.allPlans } : {}) }
      : undefined;
    if (!isObj(s.winningPlan)) {
      ctx.warnings.push(`Shard ${name} has no winningPlan, so its plan is not drawn.`);
      return;
    }
    const layer = readLayer(s, shardEs, ctx, name);
    layer.root.role = 'shard';
    layer.root.details.shardName = name;
    root.children.push(layer.root);
    rejected.push(...layer.rejected);
    addTotals(summed, layer.totals);
  });

  const totals = totalsOf(es);
  // mongos prints the sums itself; the shards' own figures fill in whatever it left out.
  for (const k of ['nReturned', 'keysExamined', 'docsExamined', 'executionTimeMs'] as const) {
    if (totals[k] === undefined && summed[k] !== undefined) totals[k] = summed[k];
  }
  return { root, rejected, totals };
}

/** mongos aggregate: `shards{name: {stages | queryPlanner}}` with `splitPipeline` for the merging part. */
function readShardedAggregate(doc: Obj, shards: Obj, ctx: Ctx): Layer | undefined {
  const shardRoots: PlanNode[] = [];
  const rejected: RejectedPlan[] = [];
  const totals: PlanTotals = {};
  for (const [name, s] of Object.entries(shards)) {
    if (!isObj(s)) continue;
    let root: PlanNode | undefined;
    let t: PlanTotals = {};
    if (Array.isArray(s.stages)) {
      const r = readPipeline(s.stages, ctx, name);
      root = r.root;
      rejected.push(...r.rejected);
      t = r.totals;
    } else if (isObj(s.queryPlanner) && isObj(s.queryPlanner.winningPlan)) {
      const layer = readLayer(s.queryPlanner, isObj(s.executionStats) ? s.executionStats : undefined, ctx, name);
      root = layer.root;
      rejected.push(...layer.rejected);
      t = layer.totals;
    } else {
      ctx.warnings.push(`Shard ${name} printed neither stages nor a queryPlanner, so its plan is not drawn.`);
      continue;
    }
    root.role = 'shard';
    root.details.shardName = name;
    shardRoots.push(root);
    addTotals(totals, t);
  }
  if (shardRoots.length === 0) return undefined;

  const split = isObj(doc.splitPipeline) ? doc.splitPipeline : undefined;
  const merger = split && Array.isArray(split.mergerPart) ? split.mergerPart.filter(isObj) : [];
  let mergeNode: PlanNode;
  let top: PlanNode;
  const mergeFields: Obj = {};
  if ('mergeType' in doc) mergeFields.mergeType = doc.mergeType;
  if ('splitPipeline' in doc) mergeFields.splitPipeline = doc.splitPipeline;
  if (merger.length > 0 && Object.keys(merger[0]!)[0] === '$mergeCursors') {
    // The merging half runs on mongos (or a shard) without figures; its first stage gathers the shards.
    const r = readPipeline(merger, ctx, undefined);
    top = r.root;
    mergeNode = top;
    while (mergeNode.children.length > 0 && mergeNode.children[0]!.role === 'inputStage') mergeNode = mergeNode.children[0]!;
  } else {
    // Without a merging pipeline mongos passes the shards' results through; the node stands for that.
    const kind = shardRoots.length === 1 ? 'SINGLE_SHARD' : 'SHARD_MERGE';
    mergeNode = makeNode(kind, kind, mergeFields);
    top = mergeNode;
    if (merger.length > 0) {
      const r = readPipeline(merger, ctx, undefined);
      let first = r.root;
      while (first.children.length > 0 && first.children[0]!.role === 'inputStage') first = first.children[0]!;
      mergeNode.role = 'inputStage';
      first.children.unshift(mergeNode);
      top = r.root;
    }
  }
  mergeNode.children.push(...shardRoots);
  return { root: top, rejected, totals };
}

/** The plan-wide figures executionStats prints (none without it). */
function totalsOf(es: Obj | undefined): PlanTotals {
  const totals: PlanTotals = {};
  if (es) {
    setNum(totals, 'nReturned', es.nReturned);
    setNum(totals, 'keysExamined', es.totalKeysExamined);
    setNum(totals, 'docsExamined', es.totalDocsExamined);
    setNum(totals, 'executionTimeMs', es.executionTimeMillis);
  }
  return totals;
}

function addTotals(into: PlanTotals, t: PlanTotals): void {
  for (const k of ['nReturned', 'keysExamined', 'docsExamined', 'executionTimeMs'] as const) {
    if (t[k] !== undefined) into[k] = (into[k] ?? 0) + t[k]!;
  }
}

// ---- plan-wide facts ------------------------------------------------------------------------------

function buildMeta(doc: Obj, ctx: Ctx, sharded: boolean): MongoMeta {
  const meta: MongoMeta = {};
  const ev = str(doc.explainVersion) ?? (typeof doc.explainVersion === 'number' ? String(doc.explainVersion) : undefined);
  if (ev !== undefined) meta.explainVersion = ev;
  const stageLists: unknown[][] = [];
  if (Array.isArray(doc.stages)) stageLists.push(doc.stages);
  if (isObj(doc.shards) && !Array.isArray(doc.shards)) for (const s of Object.values(doc.shards)) if (isObj(s) && Array.isArray(s.stages)) stageLists.push(s.stages);
  for (const list of stageLists) for (const s of list) if (isObj(s)) noteStageFigures(ctx, s);
  // Stage figures (nReturned, executionTimeMillisEstimate) are printed only at executionStats or above.
  meta.verbosity = ctx.sawAllPlans ? 'allPlansExecution' : ctx.sawExecutionStats || ctx.sawStageFigures ? 'executionStats' : 'queryPlanner';
  if (ctx.first?.namespace !== undefined) meta.namespace = ctx.first.namespace;
  if ('command' in doc) meta.command = doc.command;
  if (ctx.first && 'parsedQuery' in ctx.first) meta.parsedQuery = ctx.first.parsedQuery;
  if (ctx.sbe || ev === '2') meta.engineKind = 'sbe';
  else if (ctx.classic || ev === '1') meta.engineKind = 'classic';
  if (ctx.slotBasedPlans.length === 1 && ctx.slotBasedPlans[0]!.shardName === undefined) {
    meta.slotBasedPlan = ctx.slotBasedPlans[0]!.plan;
    if (ctx.slotBasedPlans[0]!.stages !== undefined) meta.slotBasedExecutionStages = ctx.slotBasedPlans[0]!.stages;
  } else if (ctx.slotBasedPlans.length > 0) {
    // Several query layers (shards, or more than one cursor): each plan is kept under its shard's name
    // (or its position when there is no shard).
    const plans: Record<string, unknown> = {};
    const stages: Record<string, unknown> = {};
    ctx.slotBasedPlans.forEach((p, i) => {
      const key = p.shardName ?? String(i);
      plans[key] = p.plan;
      if (p.stages !== undefined) stages[key] = p.stages;
    });
    meta.slotBasedPlan = plans;
    if (Object.keys(stages).length > 0) meta.slotBasedExecutionStages = stages;
  }
  meta.sharded = sharded;
  const pipeline = pipelineNames(doc);
  if (pipeline) meta.pipeline = pipeline;
  if (ctx.first?.queryHash !== undefined) meta.queryHash = ctx.first.queryHash;
  if (ctx.first?.planCacheKey !== undefined) meta.planCacheKey = ctx.first.planCacheKey;
  return meta;
}

/**
 * The aggregation's stage names: the command's pipeline as the user wrote it when the explain printed
 * the command, else the stages the server printed.
 */
function pipelineNames(doc: Obj): string[] | undefined {
  const cmd = isObj(doc.command) ? doc.command : undefined;
  const firstKey = (s: unknown): string | undefined => (isObj(s) ? Object.keys(s).find((k) => k.startsWith('$')) : undefined);
  if (cmd && 'aggregate' in cmd && Array.isArray(cmd.pipeline)) return cmd.pipeline.map(firstKey).filter((k): k is string => k !== undefined);
  if (Array.isArray(doc.stages)) return doc.stages.map(firstKey).filter((k): k is string => k !== undefined);
  if (isObj(doc.shards) && !Array.isArray(doc.shards)) {
    const first = Object.values(doc.shards).find((s) => isObj(s) && Array.isArray(s.stages)) as Obj | undefined;
    if (first) return (first.stages as unknown[]).map(firstKey).filter((k): k is string => k !== undefined);
  }
  return undefined;
}

function serverVersion(doc: Obj): string | undefined {
  if (isObj(doc.serverInfo) && str(doc.serverInfo.version) !== undefined) return str(doc.serverInfo.version);
  const qp = isObj(doc.queryPlanner) ? doc.queryPlanner : undefined;
  const shards = qp && isObj(qp.winningPlan) && Array.isArray(qp.winningPlan.shards) ? qp.winningPlan.shards : [];
  for (const s of shards) if (isObj(s) && isObj(s.serverInfo) && str(s.serverInfo.version) !== undefined) return str(s.serverInfo.version);
  return undefined;
}

// ---- plan shape signatures (for matching trial figures) ---------------------------------------------

/** Stage names, index names and bounds in preorder: equal for the same candidate plan. */
function shapeOf(o: Obj, depth = 0): string {
  if (depth > MAX_DEPTH) return '';
  const parts = [String(o.stage ?? '?')];
  if (typeof o.indexName === 'string') parts.push(`[${o.indexName}]`);
  if ('indexBounds' in o) parts.push(boundsSignature(o.indexBounds));
  const kids: string[] = [];
  for (const key of CHILD_KEYS) {
    const v = o[key];
    if (isObj(v)) kids.push(shapeOf(v, depth + 1));
    else if (Array.isArray(v)) for (const c of v) if (isObj(c)) kids.push(shapeOf(c, depth + 1));
  }
  return parts.join('') + (kids.length > 0 ? `(${kids.join(',')})` : '');
}

/** shapeOf(a) === shapeOf(b), compared stage by stage without building either string. */
function sameShape(a: Obj, b: Obj, depth: number): boolean {
  if (depth > MAX_DEPTH) return true;
  if (a.stage !== b.stage && String(a.stage ?? '?') !== String(b.stage ?? '?')) return false;
  const ai = typeof a.indexName === 'string' ? a.indexName : undefined;
  const bi = typeof b.indexName === 'string' ? b.indexName : undefined;
  if (ai !== bi) return false;
  const ab = 'indexBounds' in a;
  if (ab !== 'indexBounds' in b || (ab && !sameBounds(a.indexBounds, b.indexBounds))) return false;
  // Inputs under the same keys are compared in place; only differently keyed inputs are listed.
  for (const key of CHILD_KEYS) {
    const va = a[key];
    const vb = b[key];
    if (va === undefined && vb === undefined) continue;
    if (isObj(va) && isObj(vb)) {
      if (!sameShape(va, vb, depth + 1)) return false;
      continue;
    }
    if (Array.isArray(va) && Array.isArray(vb) && va.length === vb.length && va.every(isObj) && vb.every(isObj)) {
      for (let i = 0; i < va.length; i++) if (!sameShape(va[i] as Obj, vb[i] as Obj, depth + 1)) return false;
      continue;
    }
    return sameChildren(childStages(a), childStages(b), depth);
  }
  return true;
}

function sameChildren(ak: Obj[], bk: Obj[], depth: number): boolean {
  if (ak.length !== bk.length) return false;
  for (let i = 0; i < ak.length; i++) if (!sameShape(ak[i]!, bk[i]!, depth + 1)) return false;
  return true;
}

/** boundsSignature(a) === boundsSignature(b), without building either string for the usual bounds. */
function sameBounds(a: unknown, b: unknown): boolean {
  if (!isObj(a) || !isObj(b)) return boundsSignature(a) === boundsSignature(b);
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i]) return false;
    const la = a[k];
    const lb = b[k];
    if (Array.isArray(la) && Array.isArray(lb)) {
      if (la.length !== lb.length || String(la[0]) !== String(lb[0]) || String(la[la.length - 1]) !== String(lb[lb.length - 1])) return false;
    } else if (Array.isArray(la) || Array.isArray(lb) || JSON.stringify(la) !== JSON.stringify(lb)) return false;
  }
  return true;
}

/** The child stages of a stage, in CHILD_KEYS order. */
function childStages(o: Obj): Obj[] {
  const out: Obj[] = [];
  for (const key of CHILD_KEYS) {
    const v = o[key];
    if (isObj(v)) out.push(v);
    else if (Array.isArray(v)) for (const c of v) if (isObj(c)) out.push(c);
  }
  return out;
}

/**
 * Index bounds reduced to what tells candidate plans apart (per field: the interval count and the first
 * and last interval), so that a plan with an `$in` of 50,000 values is not serialised whole to compare it.
 */
function boundsSignature(b: unknown): string {
  if (!isObj(b)) return JSON.stringify(b ?? null);
  let out = '{';
  for (const k in b) {
    const list = b[k];
    out += Array.isArray(list) ? `${k}:${list.length}:${String(list[0])}:${String(list[list.length - 1])};` : `${k}:${JSON.stringify(list)};`;
  }
  return `${out}}`;
}

/** The indexes (and collection scans) a plan reads, sorted: comparable across classic and SBE trees. */
function accessOf(o: Obj): string {
  const out: string[] = [];
  walkSbe(o, (s) => {
    const stage = typeof s.stage === 'string' ? s.stage : '';
    if (typeof s.indexName === 'string') out.push(`ix:${s.indexName}`);
    else if (stage === 'COLLSCAN' || stage === 'scan') out.push('collscan');
  });
  return out.sort().join(',');
}

// ---- small readers ------------------------------------------------------------------------------------

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A number as MongoDB prints it: plain, Extended JSON ($numberLong...), or a numeric string (DocumentDB). */
function num(v: unknown): number | undefined {
  const n = shellNumber(v);
  if (n !== undefined) return Number.isFinite(n) ? n : undefined;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim())) return Number(v);
  return undefined;
}

function setNum<T extends object>(target: T, key: keyof T, v: unknown): void {
  const n = num(v);
  if (n !== undefined) (target as Record<keyof T, unknown>)[key] = n;
}

/** Booleans printed as true/false or 1/0. */
function flag(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  const n = num(v);
  return n === undefined ? undefined : n !== 0;
}

function pattern(v: unknown): Record<string, number | string> | undefined {
  if (typeof v === 'string') return patternFromText(v);
  if (!isObj(v)) return undefined;
  // The usual pattern is already in the model's form: kept, shared with the raw fields, not copied.
  let plain = true;
  for (const k in v) {
    const x = v[k];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      plain = false;
      break;
    }
  }
  if (plain) return v as Record<string, number>;
  const out: Record<string, number | string> = {};
  for (const k in v) {
    const x = v[k];
    const n = num(x);
    if (n !== undefined) out[k] = n;
    else if (typeof x === 'string') out[k] = x;
    else if (isObj(x) && '$meta' in x) out[k] = `$meta:${String(x.$meta)}`;
    else return undefined;
  }
  return out;
}

/** MongoDB 8.0 express stages print the key pattern as text: `{ a: 1, 'b.c': -1 }`. */
function patternFromText(text: string): Record<string, number | string> | undefined {
  const inner = /^\s*\{(.*)\}\s*$/s.exec(text);
  if (!inner) return undefined;
  const out: Record<string, number | string> = {};
  if (inner[1]!.trim() === '') return out;
  for (const part of inner[1]!.split(',')) {
    const m = /^\s*(?:"([^"]*)"|'([^']*)'|([^:\s]+))\s*:\s*(?:(-?\d+(?:\.\d+)?)|"([^"]*)"|'([^']*)')\s*$/.exec(part);
    if (!m) return undefined;
    const key = m[1] ?? m[2] ?? m[3]!;
    out[key] = m[4] !== undefined ? Number(m[4]) : (m[5] ?? m[6])!;
  }
  return out;
}

/** Lists of strings per field, kept as printed (shared with the raw fields, not copied). */
function boundsOf(v: unknown): Record<string, string[]> | undefined {
  if (!isObj(v)) return undefined;
  for (const k in v) {
    const x = v[k];
    if (!Array.isArray(x)) return undefined;
    for (let i = 0; i < x.length; i++) if (typeof x[i] !== 'string') return undefined;
  }
  return v as Record<string, string[]>;
}

function stringLists(v: unknown): Record<string, string[]> | undefined {
  return boundsOf(v);
}

/** `{ a: 1, 'b.c': -1, loc: '2dsphere' }`, the way mongosh prints a key pattern. */
export function formatPattern(p: Record<string, number | string>): string {
  const parts = Object.entries(p).map(([k, v]) => {
    const key = /^[A-Za-z_$][\w$]*$/.test(k) ? k : `'${k.replace(/'/g, "\\'")}'`;
    return `${key}: ${typeof v === 'number' ? v : `'${v}'`}`;
  });
  return parts.length > 0 ? `{ ${parts.join(', ')} }` : '{}';
}

function collectionOf(ns: string | undefined): string | undefined {
  if (!ns) return undefined;
  const dot = ns.indexOf('.');
  return dot >= 0 ? ns.slice(dot + 1) : ns;
}

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim().replace(/[.!]+$/, '');
  return t.length > 300 ? `${t.slice(0, 300)}...` : t || 'no message';
}
