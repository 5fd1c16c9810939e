// PostgreSQL rules: rows read and thrown away (sequential scans, filters, join filters, rechecks),
// blocking and spilling sorts, hashes in batches, OFFSET, estimates, parallel workers, heap fetches,
// index searches (PostgreSQL 18 skip scans),
// JIT and planning time. The thresholds are documented in docs/findings.md.

import type { Finding, PlanNode, Severity } from '../model';
import {
  brief,
  type Ctx,
  descendants,
  lower,
  MAX_MISESTIMATES,
  parentOf,
  positionOf,
  ratioOf,
  type NodeRule,
  type PlanRule,
  type Scored,
  timeShare,
  wasteSeverity,
} from './util';
import { formatCount, formatKb, formatMs, formatRatio, formatShare, plural } from '../format';

/** Rules run on every node of the drawn tree. */
export const postgresNodeRules: NodeRule[] = [
  { code: 'pg.seq-scan', run: (ctx, n) => (isSeqScan(n.kind) ? seqScan(ctx, n) : undefined) },
  { code: 'pg.rows-removed-by-filter', run: (ctx, n) => (isSeqScan(n.kind) ? undefined : rowsRemovedByFilter(ctx, n)) },
  { code: 'pg.rows-removed-by-join-filter', run: rowsRemovedByJoinFilter },
  { code: 'pg.index-recheck', run: indexRecheck },
  { code: 'pg.sort', run: (ctx, n) => (n.kind === 'Sort' || n.kind === 'Incremental Sort' ? sort(ctx, n) : undefined) },
  { code: 'pg.offset-reads', run: (_ctx, n) => (n.kind === 'Limit' ? offsetReads(n) : undefined) },
  { code: 'pg.hash-batches', run: (ctx, n) => (n.kind === 'Hash' || isHashAggregate(n) ? hashBatches(ctx, n) : undefined) },
  { code: 'pg.heap-fetches', run: (_ctx, n) => (n.kind === 'Index Only Scan' ? heapFetches(n) : undefined) },
  { code: 'pg.index-searches', run: indexSearches },
  { code: 'pg.workers-not-launched', run: (_ctx, n) => workersNotLaunched(n) },
  { code: 'pg.misestimate', run: misestimate },
  { code: 'pg.never-executed', run: neverExecuted },
  { code: 'pg.temp-spill', run: tempSpill },
];

/** Rules run once on the whole plan. */
export const postgresPlanRules: PlanRule[] = [
  { code: 'pg.jit-time', run: jitTime },
  { code: 'pg.planning-time', run: planningTime },
  {
    code: 'pg.not-analyzed',
    run: (ctx) =>
      ctx.executed
        ? undefined
        : {
            score: 0,
            finding: {
              code: 'pg.not-analyzed',
              severity: 'info',
              title: 'Estimates only',
              message:
                "This is EXPLAIN without ANALYZE: every figure is the planner's estimate, so rows read for nothing cannot be measured. Run EXPLAIN (ANALYZE, BUFFERS) for actual figures (inside a transaction you roll back if the statement writes).",
              numbers: {},
            },
          },
  },
];

// ---------------------------------------------------------------------------------------------
// Shared readings

function isSeqScan(kind: string): boolean {
  return kind === 'Seq Scan' || kind === 'Parallel Seq Scan';
}

function isHashAggregate(node: PlanNode): boolean {
  return node.kind === 'HashAggregate' || (node.kind === 'Aggregate' && /^Hashed$/i.test(node.details.strategy ?? ''));
}

function ran(node: PlanNode): boolean {
  return node.metrics.rowsReturned !== undefined && node.metrics.neverExecuted !== true;
}

/**
 * PostgreSQL prints "Rows Removed by ..." as an average per loop; the model keeps the printed figure,
 * so the total is that times the loops.
 */
function perLoopTotal(node: PlanNode, perLoop: number | undefined): number | undefined {
  if (perLoop === undefined) return undefined;
  return Math.round(perLoop * Math.max(node.metrics.loops ?? 1, 1));
}

function where(node: PlanNode): string {
  const d = node.details;
  const rel = d.relationName ? ` on ${d.schema && d.schema !== 'public' ? `${d.schema}.` : ''}${d.relationName}${d.alias && d.alias !== d.relationName ? ` ${d.alias}` : ''}` : '';
  const idx = d.indexName ? ` using ${d.indexName}` : '';
  return `${node.kind}${idx}${rel}`;
}

function condition(node: PlanNode, name: string): string | undefined {
  const c = node.details.conditions?.[name];
  return typeof c === 'string' && c.trim() !== '' ? c : undefined;
}

/** A parallel-aware node's loops are the processes sharing one scan, not repeated executions. */
function isParallel(node: PlanNode): boolean {
  return node.details.parallelAware === true || node.kind.startsWith('Parallel ');
}

function loopsNote(node: PlanNode): string {
  const loops = node.metrics.loops ?? 1;
  if (loops <= 1) return '';
  return isParallel(node) ? ` across ${formatCount(loops)} parallel processes` : ` over ${formatCount(loops)} loops`;
}

/** Lowers a severity when the node took under 5% of the time, raises medium to high at 50% or more. */
function weigh(sev: Severity, share: number | undefined): Severity {
  if (share === undefined) return sev;
  if (share < 0.05) return lower(sev);
  if (share >= 0.5 && sev === 'medium') return 'high';
  return sev;
}

function shareNote(share: number | undefined): string {
  if (share === undefined) return '';
  return share >= 0.005 ? `, ${formatShare(share)} of the execution time` : '';
}

function maybe(numbers: Record<string, number>, key: string, v: number | undefined): void {
  if (v !== undefined) numbers[key] = v;
}

/** The node's share of the execution time, to three decimals, when it is known. */
function maybeShare(numbers: Record<string, number>, share: number | undefined): void {
  maybe(numbers, 'timeShare', share !== undefined ? Math.round(share * 1000) / 1000 : undefined);
}

interface Removed {
  /** Rows the condition removed, over all loops. */
  removed: number;
  kept: number;
  /** Rows the condition was tested on: kept + removed. */
  read: number;
  share: number | undefined;
}

/** What a node's condition removed (a per-loop "Rows Removed by ..." figure); undefined when it removed none or the node never ran. */
function removedBy(ctx: Ctx, node: PlanNode, perLoop: number | undefined): Removed | undefined {
  const removed = perLoopTotal(node, perLoop);
  if (removed === undefined || removed <= 0 || !ran(node)) return undefined;
  const kept = node.metrics.rowsReturned!;
  return { removed, kept, read: kept + removed, share: timeShare(ctx, node) };
}

/** The figures of rows a condition removed: what it was tested on under `readKey`, kept, removed under `removedKey`, the ratio and the time share. */
function removedNumbers(r: Removed, readKey: string, removedKey: string): Record<string, number> {
  const numbers: Record<string, number> = { [readKey]: r.read, rowsReturned: r.kept, [removedKey]: r.removed, ratio: ratioOf(r.read, r.kept) };
  maybeShare(numbers, r.share);
  return numbers;
}

/** A finding on rows a condition removed: scored by the rows removed, as severe as the waste and the node's time share. */
function removedFinding(node: PlanNode, r: Removed, code: string, title: string, message: string, numbers: Record<string, number>): Scored {
  return { score: r.removed, finding: { code, severity: weigh(wasteSeverity(r.read, r.kept), r.share), nodeId: node.id, title, message, numbers } };
}

// ---------------------------------------------------------------------------------------------
// Rows read for nothing

/** A sequential scan that is expected or not measured: named, scored nothing. */
function seqScanFinding(node: PlanNode, severity: Severity, title: string, message: string, numbers: Record<string, number>): Scored {
  return { score: 0, finding: { code: 'pg.seq-scan', severity, nodeId: node.id, title, message, numbers } };
}

function seqScan(ctx: Ctx, node: PlanNode): Scored | undefined {
  const m = node.metrics;
  if (m.neverExecuted) return undefined;
  const filter = condition(node, 'Filter');
  if (!ran(node)) {
    const planned = m.plannedRows;
    if (filter) {
      return seqScanFinding(node, 'low', 'Sequential scan with a filter', `${where(node)} reads the whole table and tests ${brief(filter, 70)} on every row${planned !== undefined ? ` to keep an estimated ${formatCount(planned)}` : ''}. Without ANALYZE the rows it throws away are not measured.`, planned !== undefined ? { plannedRows: planned } : {});
    }
    if (planned !== undefined && planned >= 10_000) {
      return seqScanFinding(node, 'info', 'Sequential scan', `${where(node)} reads the whole table (an estimated ${formatCount(planned)} rows); that is expected when the query needs every row.`, { plannedRows: planned });
    }
    return undefined;
  }
  const kept = m.rowsReturned!;
  const removed = perLoopTotal(node, m.rowsRemovedByFilter) ?? 0;
  const read = kept + removed;
  const share = timeShare(ctx, node);
  const numbers: Record<string, number> = { rowsRead: read, rowsReturned: kept, rowsRemovedByFilter: removed };
  maybe(numbers, 'loops', m.loops && m.loops > 1 ? m.loops : undefined);
  maybeShare(numbers, share);
  const loops = loopsNote(node);
  if (removed <= 0) {
    if (read < 10_000) return undefined;
    return seqScanFinding(node, 'info', 'Sequential scan', `${where(node)} read all ${plural(read, 'row')}${loops} and kept every one: expected when the query needs them all (for example the input of a hash join or an aggregate).`, numbers);
  }
  let severity: Severity;
  let message: string;
  const pct = formatShare(kept / Math.max(read, 1));
  const filt = filter ? ` the filter ${brief(filter, 70)}` : ' its filter';
  if (read < 1_000) {
    severity = 'info';
    message = `${where(node)} read ${plural(read, 'row')}${loops} to keep ${formatCount(kept)}. The table is small, so this costs little today; it grows with the table.`;
  } else if (kept * 2 >= read) {
    severity = removed * 100 < read ? 'info' : 'low';
    message = `${where(node)} read ${plural(read, 'row')}${loops} to keep ${formatCount(kept)} (${pct}):${filt} keeps most rows, so an index would not read much less.`;
  } else {
    severity = weigh(wasteSeverity(read, kept), share);
    message = `${where(node)} read ${plural(read, 'row')}${loops} to keep ${formatCount(kept)} (${pct}${shareNote(share)}):${filt} removed ${formatCount(removed)}. An index on the filtered columns would read only the matching rows.`;
    if ((m.loops ?? 1) > 1 && !isParallel(node)) message += ' The scan runs once per outer row of a join, so the whole table is read again each time.';
  }
  return { score: removed, finding: { code: 'pg.seq-scan', severity, nodeId: node.id, title: 'Sequential scan with a filter', message, numbers } };
}

function rowsRemovedByFilter(ctx: Ctx, node: PlanNode): Scored | undefined {
  const r = removedBy(ctx, node, node.metrics.rowsRemovedByFilter);
  if (!r) return undefined;
  const filter = condition(node, 'Filter');
  const isIndex = /Index Scan|Index Only Scan|Bitmap Heap Scan/.test(node.kind);
  const advice = isIndex
    ? ' The index finds rows by its condition and the filter then drops them; with the filtered columns in the index (after the equality columns) they would not be read.'
    : '';
  return removedFinding(node, r, 'pg.rows-removed-by-filter', 'Rows removed by a filter',
    `${where(node)} produced ${plural(r.read, 'row')}${loopsNote(node)} and its filter${filter ? ` ${brief(filter, 70)}` : ''} removed ${formatCount(r.removed)}, keeping ${formatCount(r.kept)} (${formatRatio(r.read / Math.max(r.kept, 1))}${shareNote(r.share)}).${advice}`,
    removedNumbers(r, 'rowsRead', 'rowsRemovedByFilter'));
}

function rowsRemovedByJoinFilter(ctx: Ctx, node: PlanNode): Scored | undefined {
  const r = removedBy(ctx, node, node.metrics.rowsRemovedByJoinFilter);
  if (!r) return undefined;
  const jf = condition(node, 'Join Filter');
  return removedFinding(node, r, 'pg.rows-removed-by-join-filter', 'Row pairs removed by a join filter',
    `${node.kind} built ${plural(r.read, 'row pair')}${loopsNote(node)} and its join filter${jf ? ` ${brief(jf, 70)}` : ''} removed ${formatCount(r.removed)}, keeping ${formatCount(r.kept)}${shareNote(r.share)}. A condition the join can use directly (an equality for a hash or merge join, or an index condition on the inner side) avoids building these pairs.`,
    removedNumbers(r, 'pairsTested', 'rowsRemovedByJoinFilter'));
}

function indexRecheck(ctx: Ctx, node: PlanNode): Scored | undefined {
  const m = node.metrics;
  const r = removedBy(ctx, node, m.rowsRemovedByIndexRecheck);
  if (!r) return undefined;
  const lossy = m.lossyHeapBlocks ?? 0;
  const numbers: Record<string, number> = { rowsRemovedByIndexRecheck: r.removed, rowsReturned: r.kept };
  maybe(numbers, 'lossyHeapBlocks', m.lossyHeapBlocks);
  maybe(numbers, 'exactHeapBlocks', m.exactHeapBlocks);
  const why =
    lossy > 0
      ? `the bitmap became lossy (${plural(lossy, 'heap block')} kept as whole pages) because work_mem was too small to remember each row, so every row on those pages is rechecked. Raising work_mem keeps the bitmap exact.`
      : 'the index answers the condition only approximately (a lossy operator or index type), so each row it points to is rechecked against the table.';
  return removedFinding(node, r, 'pg.index-recheck', 'Rows removed by the index recheck',
    `${where(node)} fetched ${plural(r.removed, 'row')} that the recheck then removed, keeping ${formatCount(r.kept)}: ${why}`,
    numbers);
}

function heapFetches(node: PlanNode): Scored | undefined {
  const m = node.metrics;
  const fetches = m.heapFetches;
  if (fetches === undefined || fetches <= 0 || !ran(node)) return undefined;
  // Rows a filter removed were fetched too: compare with every row the scan read.
  const rows = m.rowsReturned! + (perLoopTotal(node, m.rowsRemovedByFilter) ?? 0);
  const frac = fetches / Math.max(rows, 1);
  return {
    score: fetches,
    finding: {
      code: 'pg.heap-fetches',
      severity: fetches >= 1_000 && frac >= 0.1 ? 'medium' : 'low',
      nodeId: node.id,
      title: 'Index-only scan visits the table',
      message: `${where(node)} had to visit the table for ${plural(fetches, 'row')} of the ${formatCount(rows)} it read (Heap Fetches): the visibility map does not mark those pages all-visible. VACUUM the table so the scan can answer from the index alone.`,
      numbers: { heapFetches: fetches, rowsRead: rows },
    },
  };
}

const INDEX_SCANS = new Set(['Index Scan', 'Index Only Scan', 'Bitmap Index Scan']);

/**
 * PostgreSQL 18 prints how many times an index scan descended the btree ("Index Searches"), the
 * counterpart of MongoDB's seeks. More than one search per loop means the scan hopped: over the values of
 * a leading column the condition does not fix (a skip scan), or from one value of an `= ANY (...)` list
 * to the next. Each search is a descent from the root, so many searches for few rows cost reads that an
 * index leading with the fixed columns would not.
 */
function indexSearches(ctx: Ctx, node: PlanNode): Scored | undefined {
  const m = node.metrics;
  const searches = m.indexSearches;
  if (searches === undefined || !INDEX_SCANS.has(node.kind) || !ran(node)) return undefined;
  const loops = Math.max(m.loops ?? 1, 1);
  if (searches <= loops) return undefined;
  const rows = m.rowsReturned!;
  const cond = condition(node, 'Index Cond');
  const list = cond !== undefined && /= ANY \(/.test(cond);
  const perLoop = loops > 1 ? ` (${formatCount(Math.round((searches / loops) * 10) / 10)} per loop)` : '';
  const numbers: Record<string, number> = { indexSearches: searches, rowsReturned: rows };
  maybe(numbers, 'loops', loops > 1 ? loops : undefined);
  if (list) {
    return {
      score: 0,
      finding: {
        code: 'pg.index-searches',
        severity: 'info',
        nodeId: node.id,
        title: 'One index search per listed value',
        message: `${where(node)} searched the index ${plural(searches, 'time')}${perLoop} to return ${plural(rows, 'row')}: once per value of the list in ${brief(cond, 70)}, as MongoDB seeks to each interval of an $in.`,
        numbers,
      },
    };
  }
  const share = timeShare(ctx, node);
  // Hops are cheap while each one finds several rows; a scan that searches more often than it finds a
  // row is descending the tree for nothing most of the time.
  const base: Severity = searches >= 10_000 && searches > rows ? 'medium' : searches >= 100 && searches > rows ? 'low' : 'info';
  const severity = base === 'info' ? 'info' : weigh(base, share);
  const cheap = searches <= rows;
  return {
    score: searches - loops,
    finding: {
      code: 'pg.index-searches',
      severity,
      nodeId: node.id,
      title: 'Skip scan: the index is searched again and again',
      message: `${where(node)} searched the index ${plural(searches, 'time')}${perLoop} to return ${plural(rows, 'row')}${shareNote(share)}: its condition ${cond ? `${brief(cond, 70)} ` : ''}does not fix the index's leading column, so the scan hops from one value of that column to the next (a skip scan, what MongoDB counts as seeks). ${cheap ? 'Each search finds rows, so the hops cost little; an index that starts with the columns the condition fixes would read one range instead.' : 'Most searches find nothing: an index that starts with the columns the condition fixes would read one range instead of descending the tree each time.'}`,
      numbers,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Sorts, hashes, spills

function sort(ctx: Ctx, node: PlanNode): Scored | undefined {
  const m = node.metrics;
  if (m.neverExecuted) return undefined;
  const methods = [m.sortMethod, ...(m.workers ?? []).map((w) => w.sortMethod)].filter((x): x is string => typeof x === 'string');
  const spaceTypes = [m.sortSpaceType, ...(m.workers ?? []).map((w) => w.sortSpaceType)].filter((x): x is string => typeof x === 'string');
  const disk = methods.some((x) => /external/i.test(x)) || spaceTypes.some((x) => /disk/i.test(x));
  const input = node.children[0]?.metrics.rowsReturned;
  const out = m.rowsReturned;
  const share = timeShare(ctx, node);
  const keys = node.details.sortKey ?? [];
  const keyText = keys.length > 0 ? ` by ${brief(keys.join(', '), 60)}` : '';
  const numbers: Record<string, number> = {};
  maybe(numbers, 'rowsSorted', input);
  maybe(numbers, 'rowsReturned', out);
  maybeShare(numbers, share);
  const incremental = node.kind === 'Incremental Sort';

  if (disk) {
    const diskKb = Math.max(
      m.sortSpaceType && /disk/i.test(m.sortSpaceType) ? (m.sortSpaceKb ?? 0) : 0,
      ...(m.workers ?? []).map((w) => (w.sortSpaceType && /disk/i.test(w.sortSpaceType) ? (w.sortSpaceKb ?? 0) : 0)),
      m.sortSpaceKb !== undefined && m.sortSpaceType === undefined ? m.sortSpaceKb : 0,
    );
    maybe(numbers, 'diskKb', diskKb > 0 ? diskKb : undefined);
    const severity: Severity = (share !== undefined && share >= 0.3) || diskKb >= 100 * 1024 ? 'high' : 'medium';
    const what = input !== undefined ? `Sorting ${plural(input, 'row')}${keyText}` : `The sort${keyText}`;
    return {
      score: input ?? diskKb,
      finding: {
        code: 'pg.sort-disk',
        severity,
        nodeId: node.id,
        title: 'Sort spilled to disk',
        message: `${what} did not fit in work_mem and spilled to disk (${methods.find((x) => /external/i.test(x)) ?? 'external sort'}${diskKb > 0 ? `, ${formatKb(diskKb)}` : ''}${shareNote(share)}). Raise work_mem for this query, or let an index return the rows in order so no sort is needed.`,
        numbers,
      },
    };
  }

  let severity: Severity;
  if (!ran(node)) severity = 'low';
  else if (incremental) severity = 'info';
  // An in-memory sort is medium at most: high is kept for sorts that spill to disk.
  else if ((input !== undefined && input >= 100_000) || (share !== undefined && share >= 0.3)) severity = share !== undefined && share < 0.05 ? 'low' : 'medium';
  else if (input !== undefined && input < 1_000 && (share === undefined || share < 0.1)) severity = 'info';
  else severity = 'low';
  const parts: string[] = [];
  const topN = methods.some((x) => /top-N/i.test(x));
  if (input !== undefined) {
    parts.push(
      `${incremental ? 'Incremental sort of' : 'Sorted'} ${plural(input, 'row')}${keyText} in memory${out !== undefined && out < input ? ` to return ${formatCount(out)}` : ''}${shareNote(share)}${topN ? ': the top-N heapsort keeps only the first rows, but every input row is still read' : ''}.`,
    );
  } else {
    parts.push(`Sorts${keyText} before returning the first row (estimate: ${formatCount(m.plannedRows ?? 0)} rows).`);
  }
  if (incremental) {
    parts.push('The input already comes ordered by the leading keys, so only small groups are sorted.');
  } else if (anyArrayCondition(node)) {
    parts.push(
      'PostgreSQL does not merge per-value index scans for = ANY(...): rewriting the query as a UNION ALL of one ORDER BY ... LIMIT branch per value gives a Merge Append over index scans and no sort.',
    );
  } else {
    parts.push('An index on the equality columns followed by the sort columns would return the rows already in order.');
  }
  return {
    score: input ?? 0,
    finding: { code: 'pg.sort', severity, nodeId: node.id, title: incremental ? 'Incremental sort' : 'Blocking sort', message: parts.join(' '), numbers },
  };
}

/** True when the sort's input is a scan (through single-input nodes) whose condition is `= ANY(...)`. */
function anyArrayCondition(node: PlanNode): boolean {
  for (let n: PlanNode | undefined = node.children[0]; n; n = n.children.length === 1 ? n.children[0] : undefined) {
    const c = n.details.conditions ?? {};
    if (['Index Cond', 'Filter', 'Recheck Cond'].some((k) => /=\s*ANY\s*\(/i.test(c[k] ?? ''))) return true;
  }
  return false;
}

function offsetReads(node: PlanNode): Scored | undefined {
  if (!ran(node)) return undefined;
  const child = node.children[0];
  const input = child?.metrics.rowsReturned;
  const out = node.metrics.rowsReturned!;
  if (input === undefined || child?.metrics.neverExecuted) return undefined;
  const skipped = input - out;
  // A Limit pulls exactly offset + count rows from its input (one more under WITH TIES), so more
  // than one extra row means an OFFSET was read and thrown away.
  if (skipped < 2) return undefined;
  const severity: Severity = skipped >= 10_000 ? 'high' : skipped >= 1_000 ? 'medium' : 'low';
  const sortKeys = descendants(node, (n) => n.kind === 'Sort').find((n) => n.kind === 'Sort')?.details.sortKey;
  const keyset = sortKeys && sortKeys.length > 0 ? sortKeys.join(', ') : 'the sort key';
  return {
    score: skipped,
    finding: {
      code: 'pg.offset-reads',
      severity,
      nodeId: node.id,
      title: 'OFFSET reads what it skips',
      message: `Read ${plural(input, 'row')} to return ${formatCount(out)}: OFFSET ${skipped} discards what it reads, and each later page reads more. Paginate with a keyset condition instead (WHERE (${keyset}) > (last values seen) ORDER BY ${keyset} LIMIT n) and an index on ${keyset}.`,
      numbers: { rowsRead: input, rowsReturned: out, offset: skipped },
    },
  };
}

function hashBatches(ctx: Ctx, node: PlanNode): Scored | undefined {
  const m = node.metrics;
  const batches = m.hashBatches;
  if (batches === undefined || batches <= 1 || !ran(node)) return undefined;
  const original = m.originalHashBatches;
  const parent = parentOf(ctx, node);
  const share = node.kind === 'Hash' && parent ? timeShare(ctx, parent) : timeShare(ctx, node);
  const numbers: Record<string, number> = { batches };
  maybe(numbers, 'originalBatches', original);
  maybe(numbers, 'peakMemoryKb', m.peakMemoryKb);
  maybe(numbers, 'diskUsageKb', m.diskUsageKb);
  const grew = original !== undefined && original < batches ? ` (the planner expected ${formatCount(original)}, so the input was larger than estimated)` : '';
  const what = node.kind === 'Hash' ? 'The hash table of this join' : 'The hash aggregate';
  const disk = m.diskUsageKb !== undefined && m.diskUsageKb > 0 ? `, writing ${formatKb(m.diskUsageKb)} to disk` : '';
  return {
    score: node.children[0]?.metrics.rowsReturned ?? batches,
    finding: {
      code: 'pg.hash-batches',
      severity: share !== undefined && share >= 0.3 ? 'high' : 'medium',
      nodeId: node.id,
      title: 'Hash split into batches on disk',
      message: `${what} did not fit in work_mem and was split into ${formatCount(batches)} batches${grew}${disk}; each batch is written to temporary files and read back. Raise work_mem (or hash_mem_multiplier) for this query, or hash a smaller input.`,
      numbers,
    },
  };
}

function tempSpill(ctx: Ctx, node: PlanNode): Scored | undefined {
  const own = node.metrics.buffers?.tempWritten;
  if (own === undefined || own <= 0) return undefined;
  const kind = node.kind;
  if (kind === 'Sort' || kind === 'Incremental Sort' || kind === 'Hash' || isHashAggregate(node)) return undefined;
  if (node.children.some((c) => c.kind === 'Hash' && (c.metrics.hashBatches ?? 1) > 1)) return undefined;
  const children = node.children.reduce((s, c) => s + (c.metrics.buffers?.tempWritten ?? 0), 0);
  const exclusive = own - children;
  if (exclusive <= 0) return undefined;
  const kb = exclusive * 8;
  const share = timeShare(ctx, node);
  return {
    score: exclusive,
    finding: {
      code: 'pg.temp-spill',
      severity: weigh('medium', share),
      nodeId: node.id,
      title: 'Temporary files written',
      message: `${where(node)} wrote ${plural(exclusive, 'temporary block')} (${formatKb(kb)}) to disk${shareNote(share)}: its working set did not fit in work_mem. Raise work_mem for this query, or reduce the rows reaching this node.`,
      numbers: { tempWrittenBlocks: exclusive },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Estimates, parallelism, never-executed parts

/** Nodes whose row count merely repeats their input's, so their estimate error is not their own. */
const ESTIMATE_PASSTHROUGH = new Set(['Hash', 'Materialize', 'Memoize', 'Gather', 'Gather Merge', 'Sort', 'Incremental Sort', 'Unique', 'LockRows']);

function misestimate(ctx: Ctx, node: PlanNode): Scored | undefined {
  const m = node.metrics;
  const factor = m.estimateFactor;
  const dir = m.estimateDirection;
  if (factor === undefined || factor < 10 || dir === undefined || dir === 'exact' || m.neverExecuted) return undefined;
  if (ESTIMATE_PASSTHROUGH.has(node.kind) || node.kind === 'Limit' || node.kind === 'ModifyTable') return undefined;
  // An estimate matters for the decisions taken above it: join methods and orders, hash and sort
  // memory. With none of those above, being wrong changed nothing.
  if (!hasDecisionAbove(ctx, node)) return undefined;
  const actual = m.rowsReturned;
  const planned = m.plannedRows;
  if (actual === undefined || planned === undefined || Math.max(actual, planned) < 100) return undefined;
  // Report where an error starts, not every node it travels through: a child already off by at least
  // half this factor in the same direction carries the blame.
  const inherited = node.children.some((c) => c.metrics.estimateDirection === dir && (c.metrics.estimateFactor ?? 1) * 2 >= factor);
  if (inherited) return undefined;
  if (!amongLargestFactors(ctx, factor)) return undefined;
  let severity: Severity = factor >= 1000 ? 'medium' : factor >= 100 ? 'low' : 'info';
  const incl = m.inclusiveTimeMs;
  if (factor >= 100 && incl !== undefined && ctx.totalTimeMs !== undefined && incl / ctx.totalTimeMs >= 0.3) severity = severity === 'medium' ? 'high' : 'medium';
  const bucket = factor >= 1000 ? 1000 : factor >= 100 ? 100 : 10;
  const words = dir === 'under' ? 'under-estimate' : 'over-estimate';
  const finding: Finding = {
    code: 'pg.misestimate',
    severity,
    nodeId: node.id,
    title: `Row estimate off by more than x${bucket}`,
    message: '',
    numbers: { plannedRows: planned, actualRows: actual, factor, under: dir === 'under' ? 1 : 0 },
  };
  // A plan of thousands of nodes has hundreds of these and only the largest are kept: the sentence is
  // written for those alone.
  const finish = (): void => {
    finding.message = `${where(node)}: the planner expected ${plural(planned, 'row')} and got ${formatCount(actual)} (${formatRatio(factor)} ${words}). Estimates this far off lead to the wrong join method, join order or memory size above this node; refresh statistics (ANALYZE), or raise the statistics target or add extended statistics for correlated columns.`;
  };
  return { score: Math.abs(actual - planned), finding, finish };
}

/** The largest factors reported so far in this plan, largest first, at most MAX_MISESTIMATES of them. */
const largestFactors = new WeakMap<Ctx, number[]>();

/**
 * Only the MAX_MISESTIMATES largest estimate errors are kept (see analyze), the first ones in plan order
 * among equals: a factor no larger than the smallest of as many reported before it cannot be kept, so no
 * finding is made for it. Plans of thousands of nodes have hundreds of these.
 */
function amongLargestFactors(ctx: Ctx, factor: number): boolean {
  let top = largestFactors.get(ctx);
  if (!top) largestFactors.set(ctx, (top = []));
  if (top.length === MAX_MISESTIMATES && factor <= top[MAX_MISESTIMATES - 1]!) return false;
  let at = top.length;
  while (at > 0 && top[at - 1]! < factor) at--;
  top.splice(at, 0, factor);
  if (top.length > MAX_MISESTIMATES) top.pop();
  return true;
}

const DECISIONS = /Join|Nested Loop|^Hash$|Sort|Aggregate|HashAggregate|GroupAggregate|SetOp|Memoize|Materialize|Unique|WindowAgg/;

/**
 * Whether some ancestor of each node takes a decision from its row estimate (a join method or order, hash
 * or sort memory), computed in one preorder pass per plan so deep trees stay linear: by position in ctx.nodes.
 * (Where an over-estimate only means the node was read until its consumer stopped, derive() gives none:
 * NodeMetrics.stoppedEarly.)
 */
const decisionCache = new WeakMap<Ctx, Uint8Array>();

/** A regular expression's test, remembered per text. */
function memoTest(re: RegExp): (text: string) => boolean {
  const seen = new Map<string, boolean>();
  return (text) => {
    let r = seen.get(text);
    if (r === undefined) seen.set(text, (r = re.test(text)));
    return r;
  };
}

function hasDecisionAbove(ctx: Ctx, node: PlanNode): boolean {
  let facts = decisionCache.get(ctx);
  if (!facts) {
    facts = new Uint8Array(ctx.nodes.length);
    // Whether a parent decides depends on its kind: tested once per name.
    const decides = memoTest(DECISIONS);
    for (let i = 1; i < ctx.nodes.length; i++) {
      const pi = ctx.parentAt[i]!;
      facts[i] = facts[pi] === 1 || decides(ctx.nodes[pi]!.kind) ? 1 : 0;
    }
    decisionCache.set(ctx, facts);
  }
  const at = positionOf(ctx, node);
  return at >= 0 && facts[at] === 1;
}

function neverExecuted(ctx: Ctx, node: PlanNode): Scored | undefined {
  if (!node.metrics.neverExecuted) return undefined;
  const parent = parentOf(ctx, node);
  if (parent?.metrics.neverExecuted) return undefined;
  const below = descendants(node).length;
  return {
    score: 0,
    finding: {
      code: 'pg.never-executed',
      severity: 'info',
      nodeId: node.id,
      title: 'Never executed',
      message: `${where(node)}${below > 0 ? ` and the ${plural(below, 'node')} below it` : ''} never ran: the rows that would have driven it never came, so its cost did not count this time. With other parameters or data it may run.`,
      numbers: { nodes: below + 1 },
    },
  };
}

function workersNotLaunched(node: PlanNode): Scored | undefined {
  const planned = node.metrics.workersPlanned;
  const launched = node.metrics.workersLaunched;
  if (planned === undefined || launched === undefined || launched >= planned) return undefined;
  return {
    score: planned - launched,
    finding: {
      code: 'pg.workers-not-launched',
      severity: launched === 0 ? 'medium' : 'low',
      nodeId: node.id,
      title: 'Parallel workers not launched',
      message: `Planned ${plural(planned, 'parallel worker')} but ${launched === 0 ? 'none started' : `only ${formatCount(launched)} started`}: the server's worker limits (max_parallel_workers, max_worker_processes) were used up by other work, so this part ran with less parallelism than the plan assumed.`,
      numbers: { workersPlanned: planned, workersLaunched: launched },
    },
  };
}

function jitTime(ctx: Ctx): Scored | undefined {
  const total = ctx.plan.postgres?.jit?.timingMs?.['Total'] ?? ctx.plan.totals.jitTimeMs;
  const exec = ctx.totalTimeMs;
  if (total === undefined || exec === undefined || total <= 0) return undefined;
  const share = Math.min(1, total / exec);
  if (share < 0.1) return undefined;
  const severity: Severity = share >= 0.2 && total >= 50 ? 'medium' : 'low';
  return {
    score: total,
    finding: {
      code: 'pg.jit-time',
      severity,
      title: 'JIT compilation time',
      message: `JIT compilation took ${formatMs(total)} of the ${formatMs(exec)} execution (${formatShare(share)}). For a query this short, compiling costs more than it saves: raise jit_above_cost or turn jit off for it.`,
      numbers: { jitMs: total, executionMs: exec },
    },
  };
}

function planningTime(ctx: Ctx): Scored | undefined {
  const planning = ctx.plan.totals.planningTimeMs ?? ctx.plan.postgres?.planningTimeMs;
  const exec = ctx.plan.totals.executionTimeMs ?? ctx.plan.postgres?.executionTimeMs;
  if (planning === undefined || exec === undefined || planning < 10 || planning <= exec) return undefined;
  return {
    score: planning,
    finding: {
      code: 'pg.planning-time',
      severity: 'low',
      title: 'Planning takes longer than execution',
      message: `Planning took ${formatMs(planning)}, longer than the ${formatMs(exec)} execution. For a statement run often, a prepared statement plans once and saves this each time.`,
      numbers: { planningMs: planning, executionMs: exec },
    },
  };
}
