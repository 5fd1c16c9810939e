// MongoDB rules. Each looks at one kind of stage and reports the waste where it happens: the COLLSCAN
// that reads the collection, the IXSCAN that examines keys it does not return, the FETCH whose filter
// throws documents away, the SORT that blocks, the SKIP that reads what it discards. The thresholds are
// documented in docs/findings.md.

import type { PlanNode, Severity } from '../model';
import {
  brief,
  type Ctx,
  descendants,
  isRecord,
  listNames,
  num,
  parentOf,
  ratioOf,
  lower,
  type NodeRule,
  type PlanRule,
  type Scored,
  wasteSeverity,
} from './util';
import { formatCount, formatRatio, formatShare, plural } from '../format';

/** MongoDB merges in order at most this many point scans (internalQueryMaxScansToExplode). */
const MAX_SCANS_TO_EXPLODE = 200;

const INDEX_SCANS = new Set(['IXSCAN', 'EXPRESS_IXSCAN']);

/** Rules run on every node of the drawn tree. */
export const mongoNodeRules: NodeRule[] = [
  { code: 'mongo.collscan', run: (ctx, n) => (n.kind === 'COLLSCAN' ? collscan(ctx, n) : undefined) },
  { code: 'mongo.keys-examined-ratio', run: (ctx, n) => (INDEX_SCANS.has(n.kind) && !underGeoNear(ctx, n) ? indexScan(ctx, n) : undefined) },
  { code: 'mongo.residual-fetch-filter', run: (_ctx, n) => (n.kind === 'FETCH' ? residualFetchFilter(n) : undefined) },
  { code: 'mongo.docs-examined-ratio', run: (_ctx, n) => docsExaminedRatio(n) },
  { code: 'mongo.blocking-sort', run: (ctx, n) => (n.kind === 'SORT' || n.kind === '$sort' ? blockingSort(ctx, n) : undefined) },
  { code: 'mongo.sort-merge-explode', run: (_ctx, n) => (n.kind === 'SORT_MERGE' ? sortMerge(n) : undefined) },
  { code: 'mongo.skip-reads', run: (ctx, n) => (skipAmountOf(ctx, n) !== undefined ? skipReads(ctx, n) : undefined) },
];

/** Rules run once on the whole plan. */
export const mongoPlanRules: PlanRule[] = [
  { code: 'mongo.project-before-match', run: (ctx) => projectBeforeMatch(ctx) },
  {
    code: 'mongo.no-execution-stats',
    run: (ctx) =>
      ctx.executed
        ? undefined
        : {
            score: 0,
            finding: {
              code: 'mongo.no-execution-stats',
              severity: 'info',
              title: 'No execution statistics',
              message:
                'This explain ran at queryPlanner verbosity, so it shows the chosen plan but not how many keys and documents it read. Explain with "executionStats" to measure the waste.',
              numbers: {},
            },
          },
  },
];


// ---------------------------------------------------------------------------------------------
// Reading stage fields: typed details first, the raw server fields as a fallback.

function keyPatternOf(node: PlanNode): Record<string, unknown> | undefined {
  const k = node.details.keyPattern ?? node.raw['keyPattern'];
  return isRecord(k) ? k : undefined;
}

function boundsOf(node: PlanNode): Record<string, string[]> | undefined {
  const b = node.details.indexBounds ?? node.raw['indexBounds'];
  if (!isRecord(b)) return undefined;
  const out: Record<string, string[]> = {};
  for (const [field, list] of Object.entries(b)) {
    if (Array.isArray(list)) out[field] = list.every((x) => typeof x === 'string') ? (list as string[]) : list.map((x) => String(x));
  }
  return out;
}

function filterOf(node: PlanNode): unknown {
  return node.details.filter ?? node.raw['filter'];
}

function indexNameOf(node: PlanNode): string | undefined {
  const n = node.details.indexName ?? node.raw['indexName'];
  return typeof n === 'string' ? n : undefined;
}

function sortPatternOf(node: PlanNode): Record<string, unknown> | undefined {
  const p = node.details.sortPattern ?? node.raw['sortPattern'];
  if (isRecord(p)) return p;
  const agg = node.raw['$sort'];
  if (isRecord(agg) && isRecord(agg['sortKey'])) return agg['sortKey'];
  return undefined;
}

function skipAmountOf(ctx: Ctx, node: PlanNode): number | undefined {
  // The command the explain kept says the skip the code wrote.
  const written = node.kind === 'SKIP' ? commandSkip(ctx) : undefined;
  if (written !== undefined) return written;
  const s = node.metrics.skipAmount ?? num(node.raw['skipAmount']) ?? (node.kind === '$skip' ? num(node.raw['$skip']) : undefined);
  const input = node.children[0]?.metrics.rowsReturned;
  const ret = node.metrics.rowsReturned;
  // The classic engine's executed SKIP counts its amount down while it runs and prints what is left:
  // 0 once it has skipped everything, the rest when its input ran out first (skip(5000) over 2,561
  // entries prints 2439). The slot-based engine's drawn SKIP is the planner's, which prints the amount.
  const countsDown = node.kind === 'SKIP' && ctx.plan.mongo?.engineKind !== 'sbe' && input !== undefined && ret !== undefined;
  if (s !== undefined && s > 0) return countsDown && ret === 0 ? s + input! : s;
  if ((node.kind === 'SKIP' || node.kind === '$skip') && input !== undefined && ret !== undefined && input > ret) return input - ret;
  return undefined;
}

/** The skip of a find command the explain kept, when it has one. */
function commandSkip(ctx: Ctx): number | undefined {
  const cmd = ctx.plan.mongo?.command;
  if (!isRecord(cmd) || !('find' in cmd)) return undefined;
  const s = num(cmd['skip']);
  return s !== undefined && s > 0 ? s : undefined;
}

/** +1 or -1: the order a field is sorted in, from the command's sort, else from the index scan's walk. */
function sortDirection(ctx: Ctx, field: string, scan: PlanNode | undefined): 1 | -1 {
  const cmd = ctx.plan.mongo?.command;
  let sort: Record<string, unknown> | undefined;
  if (isRecord(cmd) && isRecord(cmd['sort'])) sort = cmd['sort'];
  else if (isRecord(cmd) && Array.isArray(cmd['pipeline'])) {
    const st = (cmd['pipeline'] as unknown[]).find((x) => isRecord(x) && isRecord(x['$sort']));
    if (isRecord(st)) sort = st['$sort'] as Record<string, unknown>;
  }
  const given = sort ? num(sort[field]) : undefined;
  if (given !== undefined && given !== 0) return given < 0 ? -1 : 1;
  const k = num(scan ? keyPatternOf(scan)?.[field] : undefined);
  if (k === undefined || k === 0) return 1;
  const backward = scan?.details.direction === 'backward' || scan?.raw['direction'] === 'backward';
  return (k < 0) !== backward ? -1 : 1;
}

/** Renders a key or sort pattern the way the shell prints it: { s: 1, r: -1 }. */
function pattern(p: Record<string, unknown>): string {
  const parts = Object.entries(p).map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${brief(v, 20)}`);
  return `{ ${parts.join(', ')} }`;
}

/** The first index scan under a node, not looking past a SORT (nor past another FETCH when asked). */
function indexScanBelow(node: PlanNode, stopAtFetch: boolean): PlanNode | undefined {
  return descendants(node, (n) => (stopAtFetch && n.kind === 'FETCH') || n.kind === 'SORT').find((n) => INDEX_SCANS.has(n.kind));
}

/**
 * Field paths a query filter reads, in order of appearance: through $and/$or/$nor/$not, and into
 * $elemMatch sub-documents ("order_details.product_id").
 */
export function filterFields(filter: unknown, prefix = ''): string[] {
  const out: string[] = [];
  const add = (f: string): void => {
    if (!out.includes(f)) out.push(f);
  };
  const visit = (f: unknown, pre: string): void => {
    if (Array.isArray(f)) {
      for (const x of f) visit(x, pre);
      return;
    }
    if (!isRecord(f)) return;
    for (const [k, v] of Object.entries(f)) {
      if (k === '$and' || k === '$or' || k === '$nor') visit(v, pre);
      else if (k === '$not') visit(v, pre);
      else if (k.startsWith('$')) continue;
      else {
        const path = pre ? `${pre}.${k}` : k;
        const elem = isRecord(v) ? v['$elemMatch'] : undefined;
        if (isRecord(elem) && Object.keys(elem).some((x) => !x.startsWith('$'))) visit(elem, path);
        else add(path);
      }
    }
  };
  visit(filter, prefix);
  return out;
}

type BoundKind = 'point' | 'points' | 'full' | 'range';

function classify(intervals: string[]): BoundKind {
  if (intervals.length === 1 && /^\[(MinKey|MaxKey), (MinKey|MaxKey)\]$/.test(intervals[0]!) && intervals[0] !== '[MinKey, MinKey]' && intervals[0] !== '[MaxKey, MaxKey]') {
    return 'full';
  }
  const points = intervals.every((i) => {
    const m = /^\[(.*), (.*)\]$/.exec(i);
    return m !== null && m[1] === m[2];
  });
  if (points) return intervals.length === 1 ? 'point' : 'points';
  return 'range';
}

/** Number of point-interval combinations the bounds enumerate (the scans an explode would need). */
function pointCombinations(bounds: Record<string, string[]>): number {
  let n = 1;
  for (const list of Object.values(bounds)) {
    if (classify(list) === 'points') n *= list.length;
  }
  return n;
}

/** Why an index scan seeks: the field whose values the scan hops over, and the words for it. */
function hopReason(node: PlanNode): { field: string; kind: BoundKind; later: { field: string; kind: BoundKind }[]; text: string } | undefined {
  const bounds = boundsOf(node);
  if (!bounds) return undefined;
  const fields = Object.keys(keyPatternOf(node) ?? bounds).filter((f) => bounds[f] !== undefined);
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const list = bounds[f]!;
    const kind = classify(list);
    if (kind === 'point') continue;
    const later = fields.slice(i + 1).filter((g) => classify(bounds[g]!) !== 'full');
    if (later.length === 0) {
      // Nothing bounded follows: the seeks go from one interval of this field to the next.
      if (list.length > 1) return { field: f, kind, later: [], text: `${f} has ${formatCount(list.length)} separate intervals (${brief(list.join(', '), 40)}) and the scan seeks to each` };
      continue;
    }
    const what =
      kind === 'full'
        ? `${f} is not bounded (${list[0]})`
        : kind === 'points'
          ? `${f} has ${formatCount(list.length)} separate values`
          : `${f} is a range (${brief(list.join(', '), 40)})`;
    return { field: f, kind, later: later.map((g) => ({ field: g, kind: classify(bounds[g]!) })), text: `${what} ahead of ${listNames(later)} in the index, so the scan jumps from one ${f} value to the next to apply the bounds on ${listNames(later)}` };
  }
  return undefined;
}

/** The fields the query sorts on, from the command (find or the first $sort of a pipeline). */
function querySortFields(ctx: Ctx): string[] {
  const cmd = ctx.plan.mongo?.command;
  if (!isRecord(cmd)) return [];
  if (isRecord(cmd['sort'])) return Object.keys(cmd['sort']);
  if (Array.isArray(cmd['pipeline'])) {
    for (const st of cmd['pipeline'] as unknown[]) {
      if (isRecord(st) && isRecord(st['$sort'])) return Object.keys(st['$sort']);
    }
  }
  return [];
}

// ---------------------------------------------------------------------------------------------
// Rules

const PASS_THROUGH = /^(PROJECTION_|PROJECTION$|SHARDING_FILTER$|\$project$|\$addFields$|\$set$|\$unset$|\$match$|\$cursor$)/;

/** What the query keeps of a scan's output: its own count, or that of a $match above it in the pipeline. */
function keptAfterScan(ctx: Ctx, node: PlanNode): { kept: number | undefined; match?: PlanNode } {
  let kept = node.metrics.rowsReturned;
  let match: PlanNode | undefined;
  let p = parentOf(ctx, node);
  while (p && PASS_THROUGH.test(p.kind)) {
    if (p.kind === '$match' && p.metrics.rowsReturned !== undefined) {
      kept = p.metrics.rowsReturned;
      match = p;
    }
    p = parentOf(ctx, p);
  }
  return match ? { kept, match } : { kept };
}

function collscan(ctx: Ctx, node: PlanNode): Scored | undefined {
  const examined = node.metrics.docsExamined;
  const { kept, match } = keptAfterScan(ctx, node);
  const raw = filterOf(node);
  const filter = isRecord(raw) && Object.keys(raw).length === 0 ? undefined : raw;
  const hasFilter = filter !== undefined || match !== undefined;
  const ns = ctx.plan.mongo?.namespace ? ` of ${ctx.plan.mongo.namespace}` : '';
  const title = 'Collection scan';
  if (examined === undefined || kept === undefined) {
    return {
      score: 0,
      finding: {
        code: 'mongo.collscan',
        severity: hasFilter ? 'medium' : 'low',
        nodeId: node.id,
        title,
        message: `Reads every document${ns}${filter !== undefined ? ` and applies the filter ${brief(filter, 60)} to each` : ''}: no index is used. Without execution statistics the number of documents read is unknown.`,
        numbers: {},
      },
    };
  }
  if (examined === 0) return undefined;
  const numbers = { docsExamined: examined, returned: kept, ratio: ratioOf(examined, kept) };
  let severity: Severity;
  let message: string;
  if (examined < 1_000) {
    severity = 'info';
    message = `Read ${plural(examined, 'document')}${ns} to keep ${formatCount(kept)}. The collection is small, so this costs little today; it grows with the collection.`;
  } else if (!hasFilter) {
    severity = 'info';
    message = `Read ${plural(examined, 'document')}${ns} without a filter: the query asks for all of them, so an index would only help to return them in order or to stop early.`;
  } else if (kept * 2 >= examined) {
    severity = 'low';
    message = `Read ${plural(examined, 'document')}${ns} to keep ${formatCount(kept)} (${formatShare(kept / examined)}). The filter keeps most documents, so an index would not read much less: a collection scan is a fair plan here.`;
  } else {
    severity = wasteSeverity(examined, kept);
    const ratio = formatRatio(examined / Math.max(kept, 1));
    message = match
      ? `Read ${plural(examined, 'document')}${ns} to keep ${formatCount(kept)} (${ratio}): the $match that filters them runs in the pipeline after the scan, so no index narrows the read.`
      : `Read ${plural(examined, 'document')}${ns} to keep ${formatCount(kept)} (${ratio}): no index serves the filter, so every document is loaded and tested. An index on the filtered fields would read only the matching ones.`;
  }
  return { score: examined - kept, finding: { code: 'mongo.collscan', severity, nodeId: node.id, title, message, numbers } };
}

/** Index scans feeding a $near search read ring after ring by design; their extra keys are not waste. */
function underGeoNear(ctx: Ctx, node: PlanNode): boolean {
  for (let p = parentOf(ctx, node); p; p = parentOf(ctx, p)) {
    if (/^GEO_NEAR/.test(p.kind)) return true;
  }
  return false;
}

/** True for a plain btree key pattern (every value 1 or -1); 2dsphere, text and hashed keys seek by cells or tokens. */
function ordinaryKeys(node: PlanNode): boolean {
  const kp = keyPatternOf(node);
  return kp === undefined || Object.values(kp).every((v) => v === 1 || v === -1 || v === 1.0);
}

function indexScan(ctx: Ctx, node: PlanNode): Scored | undefined {
  const m = node.metrics;
  const keys = m.keysExamined;
  const ret = m.rowsReturned;
  if (keys === undefined || ret === undefined) return undefined;
  const seeks = m.seeks;
  const name = indexNameOf(node);
  const idx = name ? ` on ${name}` : '';
  if (seeks !== undefined && seeks > 1 && keys > ret && ordinaryKeys(node)) {
    const reason = hopReason(node);
    let severity = wasteSeverity(keys, ret);
    const extra = keys - ret;
    // An unbounded field the query sorts on is there on purpose (Equality, Sort, Range): the hops are
    // the price of returning documents in order without a blocking SORT.
    const forSort =
      reason !== undefined && reason.kind === 'full' && querySortFields(ctx).includes(reason.field) && !ctx.nodes.some((n) => n.kind === 'SORT');
    const equalitiesAfter = reason !== undefined && reason.later.length > 0 && reason.later.every((l) => l.kind === 'point' || l.kind === 'points');
    let advice: string;
    if (extra <= 10 || keys <= ret * 1.5) {
      advice = ' So few extra keys make this index good enough: it is cheaper to keep it than to add another index for this query.';
    } else if (forSort && equalitiesAfter) {
      const eq = listNames(reason!.later.map((l) => l.field));
      advice = ` Equality fields go before the sort field (Equality, Sort, Range): with ${eq} ahead of ${reason!.field} the scan would read only the keys it returns, still in order.`;
    } else if (forSort) {
      severity = lower(severity);
      const rng = listNames(reason!.later.map((l) => l.field));
      advice = ` The index puts the sort field ${reason!.field} before the range on ${rng} so that no blocking SORT is needed (Equality, Sort, Range); with the range first it would read fewer keys but sort them in memory, a trade-off that pays when the range is very selective.`;
    } else if (reason !== undefined && equalitiesAfter) {
      const eq = listNames(reason.later.map((l) => l.field));
      advice = ` Equality fields go before range fields: with ${eq} ahead of ${reason.field} the scan would read one contiguous run of keys.`;
    } else {
      advice = ' An index with the bounded fields together, right after the equality fields, would read them in one seek.';
    }
    return {
      score: extra / 10,
      finding: {
        code: 'mongo.skip-scan-seeks',
        severity,
        nodeId: node.id,
        title: 'Index scan hops between key ranges',
        message: `Examined ${plural(keys, 'index key')}${idx} to return ${formatCount(ret)}, with ${formatCount(seeks)} seeks${reason ? `: ${reason.text}` : ': the key order makes the scan skip over entries'}.${advice}`,
        numbers: { keysExamined: keys, returned: ret, seeks, ratio: ratioOf(keys, ret) },
      },
    };
  }
  const dups = m.dupsDropped ?? 0;
  if (keys - dups > ret + 1) {
    const filter = filterOf(node);
    const fields = filter !== undefined ? filterFields(filter) : [];
    const why =
      fields.length > 0
        ? `the condition on ${listNames(fields)} is not part of the index bounds, so it is tested key by key`
        : 'the index bounds admit many keys the query does not want';
    const dupNote = dups > 0 ? ` (${formatCount(dups)} of them were duplicate entries of multikey documents)` : '';
    return {
      score: (keys - ret) / 10,
      finding: {
        code: 'mongo.keys-examined-ratio',
        severity: wasteSeverity(keys - dups, ret),
        nodeId: node.id,
        title: 'Index keys examined but not returned',
        message: `Examined ${plural(keys, 'index key')}${idx} to return ${formatCount(ret)} (${formatRatio(keys / Math.max(ret, 1))})${dupNote}: ${why}.`,
        numbers: { keysExamined: keys, returned: ret, ratio: ratioOf(keys, ret), ...(dups > 0 ? { dupsDropped: dups } : {}) },
      },
    };
  }
  return undefined;
}

function residualFetchFilter(node: PlanNode): Scored | undefined {
  const docs = node.metrics.docsExamined;
  const ret = node.metrics.rowsReturned;
  const filter = filterOf(node);
  if (docs === undefined || ret === undefined || docs <= ret || filter === undefined) return undefined;
  const scan = indexScanBelow(node, true);
  if (!scan) return undefined;
  const keyFields = Object.keys(keyPatternOf(scan) ?? {});
  const fields = filterFields(filter);
  const missing = fields.filter((f) => !keyFields.includes(f));
  const name = indexNameOf(scan) ?? 'the index';
  let message = `Fetched ${plural(docs, 'document')} and kept ${formatCount(ret)} (${formatRatio(docs / Math.max(ret, 1))}): the filter ${brief(filter, 70)} is applied after the index scan. `;
  if (missing.length > 0) {
    message += `${name} does not contain ${listNames(missing)}; with ${missing.length === 1 ? 'it' : 'them'} in the index the scan would skip those documents.`;
    const multikey = multikeyPrefix(scan, missing);
    if (multikey) message += ` Because ${multikey} is an array, both conditions bound the index together only under $elemMatch.`;
  } else {
    message += `${name} has these fields but its bounds could not express the condition (an array field without $elemMatch, or an operator the bounds cannot take), so each document is checked after fetching.`;
  }
  return {
    score: docs - ret,
    finding: {
      code: 'mongo.residual-fetch-filter',
      severity: wasteSeverity(docs, ret),
      nodeId: node.id,
      title: 'Filter applied after fetching',
      message,
      numbers: { docsExamined: docs, returned: ret, ratio: ratioOf(docs, ret), fieldsNotInIndex: missing.length },
    },
  };
}

/** The array path shared by a multikey index field and one of the given fields, if any. */
function multikeyPrefix(scan: PlanNode, fields: string[]): string | undefined {
  const paths = scan.details.multiKeyPaths ?? (isRecord(scan.raw['multiKeyPaths']) ? (scan.raw['multiKeyPaths'] as Record<string, unknown>) : undefined);
  if (!paths) return undefined;
  for (const list of Object.values(paths)) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (typeof p === 'string' && fields.some((f) => f.startsWith(`${p}.`))) return p;
    }
  }
  return undefined;
}

function docsExaminedRatio(node: PlanNode): Scored | undefined {
  // Collection scans, index scans and FETCH stages with a residual filter have their own findings.
  if (node.kind === 'COLLSCAN' || INDEX_SCANS.has(node.kind)) return undefined;
  if (node.kind === 'FETCH' && residualFetchFilter(node) !== undefined) return undefined;
  const docs = node.metrics.docsExamined;
  const ret = node.metrics.rowsReturned;
  if (docs === undefined || ret === undefined || docs <= ret) return undefined;
  return {
    score: docs - ret,
    finding: {
      code: 'mongo.docs-examined-ratio',
      severity: wasteSeverity(docs, ret),
      nodeId: node.id,
      title: 'Documents examined but not returned',
      message: `${node.kind} examined ${plural(docs, 'document')} to return ${formatCount(ret)} (${formatRatio(docs / Math.max(ret, 1))}): the rest were loaded and then discarded.`,
      numbers: { docsExamined: docs, returned: ret, ratio: ratioOf(docs, ret) },
    },
  };
}

function blockingSort(ctx: Ctx, node: PlanNode): Scored | undefined {
  const m = node.metrics;
  const input = node.children[0]?.metrics.rowsReturned ?? previousStageRows(ctx, node);
  const out = m.rowsReturned;
  const usedDisk = m.usedDisk === true || node.raw['usedDisk'] === true || (num(node.raw['spills']) ?? 0) > 0;
  const limit = m.limitAmount ?? num(node.raw['limitAmount']) ?? (isRecord(node.raw['$sort']) ? num(node.raw['$sort']['limit']) : undefined);
  const sortPattern = sortPatternOf(node);
  const order = sortPattern ? ` ${pattern(sortPattern)}` : '';
  const direct = node.kind !== '$sort' || feedsFromQueryLayer(node);
  const scan = direct ? indexScanBelow(node, false) : undefined;
  const collscanBelow = direct && descendants(node, (n) => n.kind === 'SORT').some((n) => n.kind === 'COLLSCAN');
  if (input === 0 && !usedDisk) return undefined;
  // A $sort after $group, $unwind or $lookup can never take its order from an index: only its size matters.
  const lateInPipeline = node.kind === '$sort' && !scan && !collscanBelow;
  let severity: Severity;
  if (usedDisk) severity = 'high';
  else if (input === undefined) severity = lateInPipeline ? 'low' : 'medium';
  else if (input >= 100_000) severity = 'high';
  else if (input >= 1_000) severity = 'medium';
  else severity = lateInPipeline ? 'info' : 'low';
  const numbers: Record<string, number> = {};
  if (input !== undefined) numbers['sortedDocs'] = input;
  if (out !== undefined) numbers['returned'] = out;
  if (limit !== undefined) numbers['limitAmount'] = limit;
  const mem = m.memUsageBytes ?? num(node.raw['totalDataSizeSorted']) ?? num(node.raw['totalDataSizeSortedBytesEstimate']);
  if (mem !== undefined) numbers['bytesSorted'] = mem;
  numbers['usedDisk'] = usedDisk ? 1 : 0;

  const parts: string[] = [];
  const where = usedDisk ? 'and spilled to disk' : 'in memory';
  if (input !== undefined) {
    parts.push(`Sorted ${plural(input, 'document')} ${where}${out !== undefined ? ` to return ${formatCount(out)}` : ''}${limit !== undefined ? ` (top-${formatCount(limit)} sort)` : ''}.`);
  } else {
    parts.push(`Sorts the results${order} ${where} before returning the first one.`);
  }
  const name = scan ? indexNameOf(scan) : undefined;
  if (scan) {
    const bounds = boundsOf(scan);
    const combos = bounds ? pointCombinations(bounds) : 1;
    const keyFields = Object.keys(keyPatternOf(scan) ?? {});
    const sortFirst = sortPattern ? Object.keys(sortPattern)[0] : undefined;
    if (combos > MAX_SCANS_TO_EXPLODE && sortFirst !== undefined && keyFields.includes(sortFirst)) {
      numbers['pointScans'] = combos;
      parts.push(
        `The $in list makes ${formatCount(combos)} point scans on ${name ?? 'the index'}, more than the ${MAX_SCANS_TO_EXPLODE} MongoDB merges in order (explode-for-sort), so the index order is lost; for the index rule this $in counts as a range, after the sort fields.`,
      );
    } else {
      parts.push(
        `${name ?? 'The index'} does not deliver the order${order}, so every match is read before the first result; an index with the sort fields right after the equality fields (ESR) would return them in order.`,
      );
    }
  } else if (collscanBelow) {
    parts.push(`No index provides the order${order}; an index on the equality fields followed by the sort fields would return them in order.`);
  } else if (node.kind === '$sort') {
    parts.push('The $sort runs in the pipeline after stages that could not be pushed to the query layer, so no index can provide its order.');
  }
  return {
    score: input ?? 0,
    finding: { code: 'mongo.blocking-sort', severity, nodeId: node.id, title: usedDisk ? 'Blocking sort spilled to disk' : 'Blocking sort', message: parts.join(' '), numbers },
  };
}

/** True when a pipeline stage's input comes from the query layer through stages that keep documents as they are. */
function feedsFromQueryLayer(node: PlanNode): boolean {
  for (let n = node.children[0]; n; n = n.children[0]) {
    if (n.kind === '$cursor' || !n.kind.startsWith('$')) return true;
    if (!PASS_THROUGH.test(n.kind)) return false;
  }
  return false;
}

/** For pipeline stages drawn as siblings, the rows the previous stage produced. */
function previousStageRows(ctx: Ctx, node: PlanNode): number | undefined {
  const parent = parentOf(ctx, node);
  if (!parent) return undefined;
  const i = parent.children.indexOf(node);
  return i > 0 ? parent.children[i - 1]!.metrics.rowsReturned : undefined;
}

function sortMerge(node: PlanNode): Scored {
  const scans = descendants(node).filter((n) => INDEX_SCANS.has(n.kind));
  const names = [...new Set(scans.map(indexNameOf).filter((x): x is string => x !== undefined))];
  const sortPattern = sortPatternOf(node);
  const order = sortPattern ? ` ${pattern(sortPattern)}` : '';
  const keys = scans.reduce((s, n) => s + (n.metrics.keysExamined ?? 0), 0);
  const branches = Math.max(scans.length, node.children.length);
  const on = names.length === 1 ? ` on ${names[0]}` : names.length > 1 ? ` on ${listNames(names)}` : '';
  const numbers: Record<string, number> = { branches };
  if (node.metrics.rowsReturned !== undefined) numbers['returned'] = node.metrics.rowsReturned;
  if (scans.some((s) => s.metrics.keysExamined !== undefined)) numbers['keysExamined'] = keys;
  return {
    score: 0,
    finding: {
      code: 'mongo.sort-merge-explode',
      severity: 'info',
      good: true,
      nodeId: node.id,
      title: 'Explode-for-sort: merged index scans, no blocking sort',
      message: `The $in or $or values were split into ${formatCount(branches)} index scans${on}, each already in the order${order}, and merged: no blocking sort is needed, and a limit stops every scan early. MongoDB does this for up to ${MAX_SCANS_TO_EXPLODE} point scans; a longer list falls back to a blocking SORT.`,
      numbers,
    },
  };
}

function skipReads(ctx: Ctx, node: PlanNode): Scored | undefined {
  const skip = skipAmountOf(ctx, node)!;
  const ret = node.metrics.rowsReturned;
  const input = node.children[0]?.metrics.rowsReturned;
  if (ret === undefined) return undefined;
  const skipped = input !== undefined ? Math.max(0, Math.min(skip, input - ret)) : skip;
  if (skipped <= 0) return undefined;
  const below = descendants(node, (n) => n.kind === 'SORT' || n.kind === 'FETCH' || n.kind === 'COLLSCAN');
  const scans = below.filter((n) => INDEX_SCANS.has(n.kind));
  const keys = scans.length > 0 ? scans.reduce((s, n) => s + (n.metrics.keysExamined ?? 0), 0) : undefined;
  const readWhat = keys !== undefined && keys > 0 ? plural(keys, 'index key') : plural(input ?? skipped + ret, 'document');
  const severity: Severity = skipped >= 10_000 ? 'high' : skipped >= 1_000 ? 'medium' : 'low';
  const numbers: Record<string, number> = { skipAmount: skip, skipped, returned: ret };
  if (keys !== undefined) numbers['keysExamined'] = keys;
  if (input !== undefined) numbers['read'] = input;
  // The field the pages advance on: the first index field that is not fixed to one value.
  const scanBounds = scans[0] ? boundsOf(scans[0]) : undefined;
  const pageField = scanBounds ? Object.keys(scanBounds).find((f) => classify(scanBounds[f]!) !== 'point') : undefined;
  // A descending sort continues below the last value seen, an ascending one above it.
  const op = pageField && sortDirection(ctx, pageField, scans[0]) < 0 ? '$lt' : '$gt';
  const keyset = pageField
    ? `{ ${pageField}: { ${op}: <last ${pageField}> } } with the same sort`
    : `{ sortField: { $gt: lastValue } } with the same sort ($lt for a descending sort)`;
  return {
    score: skipped,
    finding: {
      code: 'mongo.skip-reads',
      severity,
      nodeId: node.id,
      title: 'skip() reads what it skips',
      message: `Read ${readWhat} to return ${formatCount(ret)}: skip(${skip}) discards what it reads, and each later page reads more. Paginate on the sort key instead (${keyset}) so each page reads only its own entries.`,
      numbers,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// $project/$addFields/$set before $match

const RESHAPE_STAGES = ['$project', '$addFields', '$set'];

/** Fields a projection computes, with the path they come from when it is a plain "$path" reference. */
function computedFields(stage: string, spec: unknown): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  if (!isRecord(spec)) return out;
  for (const [field, value] of Object.entries(spec)) {
    if (field === '_id' && (value === 0 || value === 1 || value === true || value === false)) continue;
    const inclusion = value === 0 || value === 1 || value === true || value === false;
    if (stage === '$project' && inclusion) continue;
    if (stage === '$project' && isRecord(value) && isInclusionTree(value)) continue;
    out.set(field, typeof value === 'string' && value.startsWith('$') && !value.startsWith('$$') ? value.slice(1) : undefined);
  }
  return out;
}

function isInclusionTree(v: Record<string, unknown>): boolean {
  return Object.entries(v).every(([k, x]) => !k.startsWith('$') && (x === 0 || x === 1 || x === true || x === false || (isRecord(x) && isInclusionTree(x))));
}

interface Reshape {
  stage: string;
  fields: Map<string, string | undefined>;
  node?: PlanNode;
}

function projectBeforeMatch(ctx: Ctx): Scored | undefined {
  // The user's pipeline, in order, when the explain kept the command; otherwise the stages drawn.
  const reshapes: Reshape[] = [];
  let matchFilter: unknown;
  let matchNode: PlanNode | undefined;
  const command = ctx.plan.mongo?.command;
  const pipeline = isRecord(command) && Array.isArray(command['pipeline']) ? (command['pipeline'] as unknown[]) : undefined;
  // Only reshaping stages may precede the $match: after a $unwind, $group or $lookup the $match could
  // not move to the query layer anyway, and the advice would be wrong.
  if (pipeline) {
    for (const st of pipeline) {
      if (!isRecord(st)) break;
      const name = Object.keys(st)[0];
      if (name === '$match') {
        if (reshapes.length > 0) matchFilter = st[name];
        break;
      }
      if (name === undefined || !RESHAPE_STAGES.includes(name)) break;
      reshapes.push({ stage: name, fields: computedFields(name, st[name]) });
    }
    if (matchFilter !== undefined) matchNode = ctx.nodes.find((n) => n.kind === '$match' && feedsFromQueryLayer(n));
  }
  if (matchFilter === undefined) {
    reshapes.length = 0;
    matchNode = ctx.nodes.find((n) => n.kind === '$match' && feedsFromQueryLayer(n));
    if (!matchNode) return undefined;
    matchFilter = matchNode.details.filter ?? matchNode.raw['$match'];
    for (let n = matchNode.children[0]; n; n = n.children[0]) {
      if (/^PROJECTION_/.test(n.kind) && isRecord(n.raw['transformBy'])) {
        reshapes.push({ stage: '$project', fields: computedFields('$project', n.raw['transformBy']), node: n });
      } else if (RESHAPE_STAGES.includes(n.kind)) {
        reshapes.push({ stage: n.kind, fields: computedFields(n.kind, n.raw[n.kind]), node: n });
      }
    }
  }
  if (matchFilter === undefined || reshapes.length === 0) return undefined;
  const matched = filterFields(matchFilter);
  let hit: { field: string; computed: string; computedFrom: string | undefined; source: string | undefined; stage: string } | undefined;
  for (const f of matched) {
    for (const r of reshapes) {
      // The matched path itself, or the computed field it reads into ("lineitems" for "lineitems.date").
      const parts = f.split('.');
      for (let i = parts.length; i >= 1 && !hit; i--) {
        const key = parts.slice(0, i).join('.');
        if (!r.fields.has(key)) continue;
        const src = r.fields.get(key);
        const rest = parts.slice(i).join('.');
        hit = { field: f, computed: key, computedFrom: src, source: src !== undefined && rest ? `${src}.${rest}` : src, stage: r.stage };
      }
      if (hit) break;
    }
    if (hit) break;
  }
  if (!hit) return undefined;
  const scan = ctx.nodes.find((n) => n.kind === 'COLLSCAN');
  // An index scan over its whole range (a hint, or an index picked for another reason) serves the
  // $match no better than a collection scan.
  const indexScans = ctx.nodes.filter((n) => INDEX_SCANS.has(n.kind));
  const wholeIndex = indexScans.length > 0 && indexScans.every((n) => Object.values(boundsOf(n) ?? {}).every((list) => classify(list) === 'full'));
  const input = matchNode?.children[0]?.metrics.rowsReturned;
  const kept = matchNode?.metrics.rowsReturned;
  const discards = input !== undefined && kept !== undefined && kept < input;
  if (!scan && !wholeIndex && !discards) return undefined;
  const examined = scan?.metrics.docsExamined ?? ctx.plan.totals.docsExamined ?? input;
  const numbers: Record<string, number> = {};
  if (examined !== undefined) numbers['docsExamined'] = examined;
  if (kept !== undefined) numbers['returned'] = kept;
  const severity: Severity = examined !== undefined && kept !== undefined ? maxSeverity(wasteSeverity(examined, kept), 'medium') : 'medium';
  const src = hit.source;
  const read = examined !== undefined ? `: ${plural(examined, 'document')}${kept !== undefined ? ` to keep ${formatCount(kept)}` : ''}` : '';
  const origin = hit.computedFrom ? ` from "${hit.computedFrom}"` : '';
  const fix = src
    ? `Match on "${src}" before the ${hit.stage}: MongoDB will not move the $match itself, because when ${src.split('.')[0]} holds arrays (or arrays of arrays) the computed field matches differently from the original path.`
    : `Match on the original fields before the ${hit.stage}: MongoDB cannot move a $match across a stage that computes the field it tests.`;
  return {
    score: examined !== undefined && kept !== undefined ? examined - kept : 0,
    finding: {
      code: 'mongo.project-before-match',
      severity,
      nodeId: (matchNode ?? scan)?.id,
      title: `${hit.stage} before $match hides the index`,
      message: `The $match on ${hit.field} comes after a ${hit.stage} that computes ${hit.computed}${origin}, so it cannot use an index and every document is read${read}. ${fix}`,
      numbers,
    },
  };
}

function maxSeverity(a: Severity, b: Severity): Severity {
  const order: Severity[] = ['high', 'medium', 'low', 'info'];
  return order[Math.min(order.indexOf(a), order.indexOf(b))]!;
}
