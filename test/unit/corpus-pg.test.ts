// Every PostgreSQL explain of the corpus goes through loadPlan and is analysed (all are real plans), with
// no warning: every line is understood. Each file's expectations pin what that file is about, with
// figures read from the file itself. The JSON/text pair of one plan must give the same model, and the
// truth plans measured on a real PostgreSQL 15 must give the figures recorded with them in case.json.

import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadPlan } from '../../src/core/load';
import type { Plan, PlanFormat, PlanNode } from '../../src/core/model';
import { CONDITION_KEYS } from '../../src/core/postgres/shape';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');
const TRUTH = join(__dirname, '..', 'fixtures', 'truth-plans');

function loadText(text: string, what: string): Plan {
  const r = loadPlan(text);
  if (!r.ok) assert.fail(`expected ${what} to be analysed, got: ${r.refusal}`);
  return r.plan;
}

/** The i-th node (preorder) with this label. */
function at(p: Plan, label: string, i = 0): PlanNode {
  const found = p.nodes.filter((n) => n.label === label);
  assert.ok(found.length > i, `a node labelled "${label}" (#${i}) in ${p.nodes.map((n) => n.label).join(' | ')}`);
  return found[i]!;
}

function kinds(p: Plan): string[] {
  const out: string[] = [];
  for (const n of p.nodes) if (!out.includes(n.kind)) out.push(n.kind);
  return out;
}

function parentOf(p: Plan, node: PlanNode): PlanNode | undefined {
  return p.nodes.find((n) => n.children.includes(node));
}

/** Nodes the source itself declares, counted without the reader: the independent check of the tree. */
function declaredNodes(file: string, text: string): number {
  if (file.endsWith('.json')) return text.match(/"Node Type"/g)?.length ?? 0;
  if (file.endsWith('.yaml')) return text.match(/Node Type:/g)?.length ?? 0;
  if (file.endsWith('.xml')) return text.match(/<Node-Type>/g)?.length ?? 0;
  return (text.match(/^[\s"]*->/gm)?.length ?? 0) + 1;
}

interface Expect {
  format: PlanFormat;
  root: string;
  kinds?: string[];
  check?: (p: Plan) => void;
  /** Warnings a real plan earns, written out: a paste without its footer. */
  warnings?: string[];
}

const EXPECT: Record<string, Expect> = {
  // ---- JSON ---------------------------------------------------------------------------------
  'pg-json-analyze-buffers-hash-join-temp-table-local-blocks-16.json': {
    format: 'postgres-json',
    root: 'Hash Join',
    kinds: ['Hash Join', 'Seq Scan', 'Hash'],
    check: (p) => {
      // The temp table is read through local buffers, the regular one through shared buffers.
      assert.equal(at(p, 'Seq Scan on tmp_buf t').metrics.buffers?.localHit, 8);
      assert.equal(at(p, 'Seq Scan on tmp_buf t').metrics.buffers?.sharedHit, 0);
      assert.equal(at(p, 'Seq Scan on reg_buf r').metrics.buffers?.sharedHit, 29);
      assert.equal(p.root.metrics.buffers?.localHit, 8);
      assert.equal(at(p, 'Hash').metrics.peakMemoryKb, 69);
      assert.equal(p.postgres?.planningBuffers?.sharedHit, 54);
      assert.deepEqual([p.totals.planningTimeMs, p.totals.executionTimeMs, p.totals.rows], [0.077, 0.402, 1500]);
    },
  },
  'pg-json-analyze-buffers-job-1a-merge-joins-external-merge-sorts-temp-blocks.json': {
    format: 'postgres-json',
    root: 'Aggregate',
    kinds: ['Aggregate', 'Merge Join', 'Sort', 'Seq Scan', 'Materialize'],
    check: (p) => {
      const sorts = p.nodes.filter((n) => n.kind === 'Sort');
      assert.equal(sorts.length, 7);
      assert.deepEqual(
        sorts.filter((s) => s.metrics.sortSpaceType === 'Disk').map((s) => [s.metrics.sortMethod, s.metrics.sortSpaceKb]),
        [['external merge', 70032], ['external merge', 80248], ['external merge', 18912], ['external merge', 24312], ['external merge', 91416]],
      );
      assert.deepEqual([p.root.metrics.buffers?.tempRead, p.root.metrics.buffers?.tempWritten, p.root.metrics.buffers?.sharedRead], [35615, 35710, 63235]);
      assert.equal(at(p, 'Materialize').metrics.rowsReturned, 4340031);
      assert.deepEqual([p.totals.planningTimeMs, p.totals.executionTimeMs], [2193.321, 11420.404]);
    },
  },
  'pg-json-analyze-buffers-skip-scan-index-searches-18.json': {
    format: 'postgres-json',
    root: 'Index Only Scan using events_region_created_at on events',
    check: (p) => {
      assert.deepEqual([p.root.metrics.indexSearches, p.root.metrics.heapFetches, p.root.metrics.rowsReturned], [10, 0, 240]);
      assert.equal(p.root.raw['Index Searches'], 10);
    },
  },
  'pg-text-analyze-buffers-skip-scan-index-searches-18.txt': {
    format: 'postgres-text',
    root: 'Index Only Scan using events_region_created_at on events',
    check: (p) => assert.deepEqual([p.root.metrics.indexSearches, p.root.metrics.rowsReturned, p.root.metrics.actualRowsPerLoop], [10, 240, 240]),
  },
  'pg-json-analyze-buffers-index-searches-any-list-18.json': {
    format: 'postgres-json',
    root: 'Index Only Scan using events_region_created_at on events',
    check: (p) => assert.deepEqual([p.root.metrics.indexSearches, p.root.metrics.rowsReturned], [3, 90]),
  },
  'pg-json-analyze-buffers-memory-serialize-seqscan-18.json': {
    format: 'postgres-json',
    root: 'Seq Scan on people',
    check: (p) => {
      assert.equal(p.root.metrics.actualRowsPerLoop, 100);
      assert.equal(p.root.raw.Disabled, false);
      assert.deepEqual(p.postgres?.planningMemory, { 'Memory Used': 6, 'Memory Allocated': 8 });
      assert.equal(p.postgres?.serialization?.Time, 25.481);
      assert.equal(p.postgres?.serialization?.['Output Volume'], 31251);
      assert.equal(p.postgres?.serialization?.Format, 'text');
      assert.equal(p.totals.executionTimeMs, 25.577);
    },
  },
  'pg-json-analyze-buffers-merge-join-two-sorts.json': {
    format: 'postgres-json',
    root: 'Merge Join',
    kinds: ['Merge Join', 'Sort', 'Seq Scan'],
    check: (p) => {
      assert.deepEqual(p.root.children.map((c) => c.role), ['Outer', 'Inner']);
      assert.ok(p.root.details.conditions?.['Merge Cond']);
      assert.deepEqual(p.nodes.filter((n) => n.kind === 'Sort').map((s) => [s.metrics.sortMethod, s.metrics.sortSpaceKb, s.metrics.sortSpaceType]), [
        ['quicksort', 12477, 'Memory'],
        ['quicksort', 2188779, 'Memory'],
      ]);
      assert.equal(p.totals.rows, 3688793);
      assert.deepEqual([p.totals.buffers?.sharedHit, p.totals.buffers?.sharedRead], [7, 162620]);
    },
  },
  'pg-json-analyze-buffers-nested-loop-index-scans.json': {
    format: 'postgres-json',
    root: 'Nested Loop',
    check: (p) => {
      const inner = at(p, 'Index Scan using movie_id_movie_info on movie_info mi');
      assert.deepEqual([inner.role, inner.metrics.loops, inner.metrics.actualRowsPerLoop, inner.metrics.rowsReturned, inner.metrics.plannedRows], ['Inner', 100, 12, 1200, 900]);
      assert.deepEqual([inner.metrics.buffers?.sharedHit, inner.metrics.buffers?.sharedRead], [218, 666]);
      assert.equal(inner.details.direction, 'Forward');
    },
  },
  'pg-json-analyze-buffers-nested-loop-memoize-15.json': {
    format: 'postgres-json',
    root: 'Nested Loop',
    kinds: ['Nested Loop', 'Index Scan', 'Memoize'],
    check: (p) => {
      const memo = at(p, 'Memoize');
      assert.equal(memo.details.conditions?.['Cache Key'], '(o.customer_id % 50)');
      assert.deepEqual([memo.raw['Cache Hits'], memo.raw['Cache Misses'], memo.metrics.peakMemoryKb, memo.metrics.loops], [19949, 50, 6, 19999]);
      assert.equal(at(p, 'Index Scan using kv_pkey on kv k').metrics.loops, 50);
      assert.equal(p.postgres?.planningBuffers?.sharedHit, 282);
      assert.equal(p.postgres?.planningBuffers?.ioReadTimeMs, 0);
    },
  },
  'pg-json-analyze-sort-hashjoins-seqscans-missing-index.json': {
    format: 'postgres-json',
    root: 'Sort',
    check: (p) => {
      assert.deepEqual([p.root.metrics.sortMethod, p.root.metrics.sortSpaceKb], ['quicksort', 409]);
      assert.equal(at(p, 'Hash Right Join').details.joinType, 'Right');
      assert.equal(at(p, 'Seq Scan on question question_1').metrics.rowsRemovedByFilter, 2637);
      assert.equal(at(p, 'Seq Scan on rel_users_exams').metrics.rowsRemovedByFilter, 56);
      assert.equal(p.nodes.filter((n) => n.kind === 'Seq Scan').length, 4);
    },
  },
  'pg-json-analyze-verbose-buffers-nestloop-bitmap-materialize.json': {
    format: 'postgres-json',
    root: 'Nested Loop Left Join',
    kinds: ['Nested Loop', 'Bitmap Heap Scan', 'Bitmap Index Scan', 'Materialize', 'Index Scan'],
    check: (p) => {
      assert.equal(at(p, 'Materialize').metrics.neverExecuted, true);
      assert.equal(at(p, 'Index Scan using exam_pkey on exam exam_1').metrics.neverExecuted, true);
      assert.equal(p.root.raw['Inner Unique'], true);
    },
  },
  'pg-json-analyze-verbose-buffers-settings-wal-bitmap-heap-lossy-recheck-17.json': {
    format: 'postgres-json',
    root: 'Bitmap Heap Scan on recheck_t',
    check: (p) => {
      const m = p.root.metrics;
      assert.deepEqual([m.rowsRemovedByIndexRecheck, m.exactHeapBlocks, m.lossyHeapBlocks], [1982, 582, 8268]);
      assert.deepEqual(p.postgres?.settings, { enable_seqscan: 'off', work_mem: '64kB' });
      assert.deepEqual([m.walRecords, m.walFpi, m.walBytes], [0, 0, 0]);
    },
  },
  'pg-json-analyze-verbose-buffers-settings-wal-gather-partial-aggregate-workers-16.json': {
    format: 'postgres-json',
    root: 'Aggregate (Finalize)',
    check: (p) => {
      const gather = at(p, 'Gather');
      assert.deepEqual([gather.metrics.workersPlanned, gather.metrics.workersLaunched], [2, 2]);
      const scan = at(p, 'Parallel Seq Scan on t_items');
      assert.equal(scan.details.parallelAware, true);
      assert.deepEqual(scan.metrics.workers?.map((w) => w.worker), [0, 1]);
      assert.equal(at(p, 'Aggregate (Partial)').details.strategy, 'Plain');
      assert.equal(p.postgres?.settings?.search_path, 'joecap');
    },
  },
  'pg-json-analyze-verbose-buffers-settings-wal-gather-workers-18.json': {
    format: 'postgres-json',
    root: 'Aggregate (Finalize)',
    check: (p) => {
      const scan = at(p, 'Parallel Seq Scan on t_items');
      assert.deepEqual([scan.metrics.loops, scan.metrics.actualRowsPerLoop, scan.metrics.rowsReturned], [3, 167, 501]);
      // The Gather's child ran in 3 participants: time x loops / 3 is the time per participant.
      assert.equal(scan.metrics.inclusiveTimeMs, 0.065);
      assert.equal(p.root.raw['WAL Buffers Full'], 0);
      assert.equal(p.root.raw.Disabled, false);
    },
  },
  'pg-json-analyze-verbose-buffers-settings-wal-hashagg-spill-planned-partitions-16.json': {
    format: 'postgres-json',
    root: 'HashAggregate',
    check: (p) => {
      assert.equal(p.root.details.strategy, 'Hashed');
      assert.deepEqual([p.root.metrics.hashBatches, p.root.metrics.diskUsageKb, p.root.metrics.peakMemoryKb, p.root.raw['Planned Partitions']], [1, 0, 24, 0]);
      assert.deepEqual(p.root.details.groupKey, ['t_items.val']);
    },
  },
  'pg-json-analyze-verbose-buffers-settings-wal-insert-modifytable-18.json': {
    format: 'postgres-json',
    root: 'Insert on t_items',
    kinds: ['ModifyTable', 'Result'],
    check: (p) => {
      assert.equal(p.root.details.operation, 'Insert');
      assert.deepEqual([p.root.metrics.walRecords, p.root.metrics.walFpi, p.root.metrics.walBytes], [2, 0, 127]);
      assert.equal(p.root.metrics.buffers?.sharedHit, 50);
    },
  },
  'pg-json-analyze-verbose-buffers-settings-wal-windowagg-run-condition-17.json': {
    format: 'postgres-json',
    root: 'WindowAgg',
    check: (p) => {
      assert.equal(p.root.details.conditions?.['Run Condition'], '((row_number() OVER (?) <= 10) AND (rank() OVER (?) <= 20))');
      assert.deepEqual([p.root.metrics.rowsReturned, p.root.metrics.plannedRows], [10, 50157]);
      assert.equal(at(p, 'Index Scan using idx_items_val on items').metrics.rowsReturned, 11);
    },
  },
  'pg-json-analyze-verbose-gather-merge-sort-workers.json': {
    format: 'postgres-json',
    root: 'Gather Merge',
    check: (p) => {
      const sort = at(p, 'Sort');
      assert.deepEqual([sort.metrics.sortMethod, sort.metrics.sortSpaceKb, sort.metrics.sortSpaceType], ['external merge', 123600, 'Disk']);
      assert.deepEqual(sort.metrics.workers?.map((w) => [w.worker, w.sortSpaceKb, w.sortSpaceType]), [[0, 73744, 'Disk'], [1, 75672, 'Disk']]);
      assert.equal(sort.metrics.inclusiveTimeMs, 2020.558);
      assert.equal(at(p, 'Parallel Seq Scan on t1').metrics.rowsReturned, 9999999);
    },
  },
  'pg-json-plain-subquery-scan-limit-seqscan-no-analyze-14.json': {
    format: 'postgres-json',
    root: 'Subquery Scan on foo',
    kinds: ['Subquery Scan', 'Limit', 'Seq Scan'],
    check: (p) => {
      assert.equal(p.postgres?.analyzed, false);
      assert.equal(p.nodes[1]!.role, 'Subquery');
      assert.equal(p.root.details.conditions?.Filter, "(foo.relname = 'aa'::name)");
      assert.ok(p.nodes.every((n) => n.metrics.rowsReturned === undefined && n.metrics.inclusiveTimeMs === undefined));
      assert.deepEqual(p.nodes.map((n) => n.metrics.plannedRows), [1, 40, 410]);
    },
  },
  'pg-json-very-large-plan-hash-joins-190kb.json': {
    format: 'postgres-json',
    root: 'Hash Left Join',
    check: (p) => {
      assert.equal(p.nodes.length, 72);
      const cte = p.nodes.find((n) => n.details.subplanName === 'CTE q');
      assert.ok(cte, 'the CTE q subplan');
      assert.equal(cte.role, 'InitPlan');
      assert.ok(p.nodes.some((n) => n.kind === 'CTE Scan' && n.details.cteName === 'q'));
      assert.equal(p.totals.buffers?.sharedHit, 218101);
      assert.equal(p.totals.executionTimeMs, undefined, 'the bare object carries no footer times');
    },
  },

  // ---- text ---------------------------------------------------------------------------------
  'pg-text-all-options-merge-io-timings-wal-settings-memory-serialize-17.txt': {
    format: 'postgres-text',
    root: 'Merge on tb',
    check: (p) => {
      const b = p.root.metrics.buffers!;
      assert.deepEqual([b.sharedHit, b.sharedRead, b.sharedDirtied, b.sharedWritten, b.tempRead, b.tempWritten], [7731564, 22226, 27295, 38115, 9593, 27592]);
      // 17's I/O syntax: shared and local times add up, temp times stay apart.
      assert.deepEqual([b.ioReadTimeMs, b.ioWriteTimeMs, b.tempIoReadTimeMs, b.tempIoWriteTimeMs], [22.96, 186.426, 17.017, 119.861]);
      assert.equal(at(p, 'Insert on tblog').metrics.buffers?.ioWriteTimeMs, 68.19);
      assert.equal(at(p, 'Insert on tblog').metrics.buffers?.localHit, 494411);
      assert.deepEqual([p.root.metrics.walRecords, p.root.metrics.walFpi, p.root.metrics.walBytes], [5049414, 5192, 416135793]);
      assert.deepEqual(p.root.children.filter((c) => c.role === 'InitPlan').map((c) => c.details.subplanName), ['CTE tbl', 'CTE tabb', 'CTE tab']);
      assert.deepEqual([p.root.raw['Tuples Inserted'], p.root.raw['Tuples Updated'], p.root.raw['Tuples Deleted']], [9995, 9679, 326]);
      const ios = at(p, 'Index Only Scan Backward using tb_pkey on tb tb_2');
      assert.deepEqual([ios.details.direction, ios.metrics.heapFetches, ios.metrics.rowsRemovedByFilter], ['Backward', 39, 38]);
      assert.equal(at(p, 'Result').details.subplanName, 'InitPlan 3');
      assert.equal(at(p, 'Seq Scan on ta2 ta_2').metrics.neverExecuted, true);
      const sorts = p.nodes.filter((n) => n.kind === 'Sort').map((s) => [s.metrics.sortMethod, s.metrics.sortSpaceKb, s.metrics.sortSpaceType]);
      assert.deepEqual(sorts, [['external merge', 12472, 'Disk'], ['external merge', 73440, 'Disk']]);
      const pg = p.postgres!;
      assert.equal(pg.settings?.work_mem, '3MB');
      assert.equal(Object.keys(pg.settings ?? {}).length, 6);
      assert.deepEqual(pg.planningMemory, { 'Memory Used': 165, 'Memory Allocated': 264 });
      assert.deepEqual([pg.planningBuffers?.sharedHit, pg.planningBuffers?.sharedRead, pg.planningBuffers?.ioReadTimeMs], [26, 1, 0.003]);
      assert.deepEqual(pg.triggers, [
        { name: 'RI_ConstraintTrigger_a_18153', relation: 'tb', timeMs: 4399.335, calls: 326 },
        { name: 'RI_ConstraintTrigger_a_18161', relation: 'tc1', timeMs: 6000.01, calls: 326 },
      ]);
      assert.deepEqual([pg.jit?.functions, pg.jit?.timingMs?.Deform, pg.jit?.timingMs?.Total, pg.jit?.options?.Inlining], [31, 0.303, 149.572, true]);
      assert.deepEqual(pg.serialization, { Time: 0, 'Output Volume': 0, Format: 'text' });
      assert.deepEqual([p.totals.planningTimeMs, p.totals.executionTimeMs, p.totals.jitTimeMs, p.totals.triggerTimeMs], [0.289, 18733.542, 149.572, 10399.345]);
    },
  },
  'pg-text-analyze-buffers-bitmapor-three-bitmap-index-scans-15.txt': {
    format: 'postgres-text',
    root: 'Bitmap Heap Scan on orders',
    kinds: ['Bitmap Heap Scan', 'BitmapOr', 'Bitmap Index Scan'],
    check: (p) => {
      assert.deepEqual([p.root.metrics.rowsRemovedByFilter, p.root.metrics.exactHeapBlocks, p.root.metrics.lossyHeapBlocks], [19, 20, 0]);
      assert.deepEqual(at(p, 'BitmapOr').children.map((c) => [c.role, c.details.indexName]), [
        ['Member', 'orders_customer_idx'],
        ['Member', 'orders_customer_idx'],
        ['Member', 'orders_amount_idx'],
      ]);
      assert.equal(p.root.metrics.buffers?.ioReadTimeMs, 0.025);
      assert.equal(p.postgres?.planningBuffers?.sharedHit, 178);
    },
  },
  'pg-text-analyze-buffers-delete-triggers-any-subquery.txt': {
    format: 'postgres-text',
    root: 'Delete on emailmessages',
    kinds: ['ModifyTable', 'Nested Loop', 'Aggregate', 'Subquery Scan', 'Limit', 'Index Only Scan', 'Index Scan'],
    check: (p) => {
      assert.equal(p.root.details.operation, 'Delete');
      assert.equal(at(p, 'Index Only Scan using emailmessages_pkey on emailmessages emailmessages_1').metrics.heapFetches, 609);
      assert.deepEqual(at(p, 'Subquery Scan on "ANY_subquery"').details.alias, 'ANY_subquery');
      assert.deepEqual(at(p, 'HashAggregate').details.groupKey, ['"ANY_subquery".emailmessageid']);
      const triggers = p.postgres?.triggers ?? [];
      assert.equal(triggers.length, 7);
      assert.deepEqual(triggers[2], { name: 'constraint attachemessageref', timeMs: 158945.774, calls: 5000 });
      assert.deepEqual([p.totals.planningTimeMs, p.totals.executionTimeMs, p.totals.triggerTimeMs], [2.482, 381072.164, 163900.503]);
    },
  },
  'pg-text-analyze-buffers-fractional-rows-nestloop-limit-18.txt': {
    format: 'postgres-text',
    root: 'Nested Loop',
    check: (p) => {
      const limit = at(p, 'Limit');
      assert.deepEqual([limit.metrics.actualRowsPerLoop, limit.metrics.loops, limit.metrics.rowsReturned], [0.25, 4, 1]);
      const scan = at(p, 'Seq Scan on data');
      assert.deepEqual([scan.metrics.actualRowsPerLoop, scan.metrics.rowsRemovedByFilter, scan.metrics.buffers?.sharedHit], [0.25, 6, 4]);
      assert.equal(at(p, 'Function Scan on unnest w').metrics.actualRowsPerLoop, 4);
    },
  },
  'pg-text-analyze-buffers-generic-plan-parallel-append-subplans-removed-15.txt': {
    format: 'postgres-text',
    root: 'Aggregate (Finalize)',
    check: (p) => {
      const append = at(p, 'Parallel Append');
      assert.equal(append.raw['Subplans Removed'], 3);
      const scan = at(p, 'Parallel Seq Scan on events_2023q2 events_1');
      assert.deepEqual([scan.role, scan.metrics.loops, scan.metrics.rowsRemovedByFilter], ['Member', 2, 60480]);
      // 6.425 ms x 2 loops shared by the 3 participants of the Gather.
      assert.equal(scan.metrics.inclusiveTimeMs, 4.283);
      assert.equal(scan.details.conditions?.Filter, '((ts >= $1) AND (ts < $2))');
    },
  },
  'pg-text-analyze-buffers-hash-batches-originally-jit-deform-18.txt': {
    format: 'postgres-text',
    root: 'Aggregate',
    check: (p) => {
      const hash = at(p, 'Hash');
      assert.deepEqual([hash.metrics.hashBuckets, hash.metrics.hashBatches, hash.metrics.originalHashBatches, hash.metrics.peakMemoryKb], [262144, 2048, 8, 35157]);
      assert.equal(hash.metrics.buffers?.tempWritten, 2930);
      assert.equal(at(p, 'Seq Scan on r').metrics.rowsReturned, 10000000);
      assert.deepEqual(p.postgres?.jit?.timingMs, { Generation: 0.492, Deform: 0.134, Inlining: 0, Optimization: 0.266, Emission: 3.684, Total: 4.442 });
      assert.deepEqual([p.postgres?.planningBuffers?.sharedHit, p.postgres?.planningBuffers?.sharedRead], [83, 9]);
    },
  },
  'pg-text-analyze-buffers-hash-join-batches-temp-io-timings-17.txt': {
    format: 'postgres-text',
    root: 'Hash Join',
    check: (p) => {
      const b = p.root.metrics.buffers!;
      assert.deepEqual([b.sharedRead, b.tempRead, b.tempWritten, b.ioReadTimeMs, b.tempIoReadTimeMs, b.tempIoWriteTimeMs], [282899, 246065, 246065, 242.957, 317.342, 830.025]);
      assert.deepEqual([at(p, 'Hash').metrics.hashBatches, at(p, 'Hash').metrics.hashBuckets], [16, 1048576]);
      assert.equal(at(p, 'Seq Scan on entetes').metrics.rowsRemovedByFilter, 101);
    },
  },
  'pg-text-analyze-buffers-initplan-hashed-subplan-semi-anti-join-correlated-subplan-15.txt': {
    format: 'postgres-text',
    root: 'Limit',
    check: (p) => {
      assert.deepEqual(p.root.children.map((c) => [c.role, c.label]), [
        ['InitPlan', 'Aggregate'],
        ['Outer', 'Nested Loop Semi Join'],
      ]);
      assert.equal(p.root.children[0]!.details.subplanName, 'InitPlan 3 (returns $3)');
      const c = at(p, 'Seq Scan on customers c');
      assert.deepEqual(c.children.map((x) => [x.role, x.details.subplanName, x.label]), [['SubPlan', 'SubPlan 2', 'Seq Scan on kv']]);
      const semi = at(p, 'Nested Loop Semi Join');
      assert.deepEqual(semi.children.map((x) => x.role), ['Outer', 'Inner', 'SubPlan']);
      assert.equal(semi.children[2]!.metrics.loops, 100);
      assert.deepEqual([at(p, 'Index Scan using orders_customer_idx on orders o_1').metrics.loops, at(p, 'Index Scan using orders_customer_idx on orders o_1').metrics.rowsRemovedByFilter], [401, 8]);
      assert.equal(at(p, 'Bitmap Heap Scan on orders o2').metrics.exactHeapBlocks, 800);
    },
  },
  'pg-text-analyze-buffers-limit-incremental-sort-index-scan-15.txt': {
    format: 'postgres-text',
    root: 'Limit',
    kinds: ['Limit', 'Incremental Sort', 'Index Scan'],
    check: (p) => {
      const s = at(p, 'Incremental Sort');
      assert.deepEqual(s.details.sortKey, ['ordered_at', 'amount']);
      assert.deepEqual(s.details.presortedKey, ['ordered_at']);
      assert.deepEqual([s.metrics.sortMethod, s.metrics.sortSpaceKb, s.metrics.sortSpaceType], ['quicksort', 27, 'Memory']);
      assert.deepEqual(s.raw['Full-sort Groups'], { 'Group Count': 2, 'Sort Methods Used': ['quicksort'], 'Sort Space Memory': { 'Average Sort Space Used': 27, 'Peak Sort Space Used': 27 } });
    },
  },
  'pg-text-analyze-buffers-merge-join-parallel-index-only-scan-gather-merge-15.txt': {
    format: 'postgres-text',
    root: 'GroupAggregate (Finalize)',
    check: (p) => {
      const sort = at(p, 'Sort');
      assert.deepEqual(sort.metrics.workers?.map((w) => [w.worker, w.sortMethod, w.sortSpaceKb]), [[0, 'quicksort', 25], [1, 'quicksort', 25]]);
      const agg = at(p, 'HashAggregate (Partial)');
      assert.deepEqual([agg.metrics.hashBatches, agg.metrics.peakMemoryKb], [1, 24]);
      const ios = at(p, 'Parallel Index Only Scan using orders_customer_idx on orders o');
      assert.deepEqual([ios.details.parallelAware, ios.metrics.heapFetches, ios.metrics.loops], [true, 0, 3]);
      assert.equal(at(p, 'Merge Join').details.conditions?.['Merge Cond'], '(o.customer_id = c.id)');
    },
  },
  'pg-text-analyze-buffers-recursive-cte-worktable-lockrows-hash-semi-join-15.txt': {
    format: 'postgres-text',
    root: 'Aggregate',
    check: (p) => {
      assert.deepEqual(p.root.children.map((c) => [c.role, c.details.subplanName ?? null, c.label]), [
        ['InitPlan', 'CTE r', 'Recursive Union'],
        ['InitPlan', 'CTE picked', 'LockRows'],
        ['Outer', null, 'CTE Scan on picked'],
      ]);
      assert.deepEqual(at(p, 'Recursive Union').children.map((c) => c.role), ['Outer', 'Inner']);
      assert.equal(at(p, 'WorkTable Scan on r').metrics.loops, 100);
      assert.equal(at(p, 'Hash Semi Join').details.joinType, 'Semi');
      assert.equal(at(p, 'CTE Scan on r r_1').details.cteName, 'r');
    },
  },
  'pg-text-analyze-buffers-settings-append-partitions-io-timings-17.txt': {
    format: 'postgres-text',
    root: 'Append',
    check: (p) => {
      assert.deepEqual(p.root.children.map((c) => c.role), ['Member', 'Member', 'Member']);
      const seq = at(p, 'Seq Scan on pgbench_accounts_3 pgbench_accounts_2');
      assert.deepEqual([seq.metrics.buffers?.sharedRead, seq.metrics.buffers?.ioReadTimeMs], [40952, 32.345]);
      assert.deepEqual(p.postgres?.settings, { jit: 'off' });
      assert.equal(p.totals.rows, 4000001);
    },
  },
  'pg-text-analyze-buffers-sort-external-merge-hash-32-batches-temp-io-jit-15.txt': {
    format: 'postgres-text',
    root: 'Sort',
    check: (p) => {
      assert.deepEqual([p.root.metrics.sortMethod, p.root.metrics.sortSpaceKb, p.root.metrics.sortSpaceType], ['external merge', 20736, 'Disk']);
      const b = p.root.metrics.buffers!;
      assert.deepEqual([b.tempRead, b.tempWritten, b.tempIoReadTimeMs, b.tempIoWriteTimeMs], [13419, 14277, 22.42, 49.063]);
      assert.equal(at(p, 'Hash').metrics.hashBatches, 32);
      assert.deepEqual([p.postgres?.jit?.functions, p.totals.jitTimeMs], [10, 9.476]);
    },
  },
  'pg-text-analyze-buffers-sort-hash-left-join-io-timings-read-write-13-14.txt': {
    format: 'postgres-text',
    root: 'Sort',
    check: (p) => {
      // The oldest I/O syntax: "read=.. write=.." without a shared/local/temp split.
      assert.deepEqual([p.root.metrics.buffers?.ioReadTimeMs, p.root.metrics.buffers?.ioWriteTimeMs, p.root.metrics.buffers?.sharedWritten], [77240.327, 222.281, 10900]);
      const hash = at(p, 'Hash');
      assert.deepEqual([hash.metrics.hashBuckets, hash.raw['Original Hash Buckets'], hash.metrics.hashBatches, hash.metrics.originalHashBatches], [262144, 4096, 1, 1]);
      assert.equal(at(p, 'Index Scan using persons_pkey on persons p').metrics.rowsRemovedByFilter, 347);
      assert.deepEqual(p.root.details.sortKey, ['s.max_strength DESC NULLS LAST', 'p.id']);
      const pb = p.postgres?.planningBuffers;
      assert.deepEqual([pb?.sharedHit, pb?.sharedRead, pb?.sharedWritten, pb?.ioReadTimeMs, pb?.ioWriteTimeMs], [540, 11, 3, 0.059, 0.366]);
    },
  },
  'pg-text-analyze-buffers-tid-range-scan-14.txt': {
    format: 'postgres-text',
    root: 'Tid Range Scan on test',
    check: (p) => {
      assert.equal(p.root.details.conditions?.['TID Cond'], "(ctid > '(400,0)'::tid)");
      assert.deepEqual([p.root.metrics.rowsReturned, p.root.metrics.buffers?.sharedHit], [9600, 43]);
    },
  },
  'pg-text-analyze-buffers-wal-insert-function-scan-jit.txt': {
    format: 'postgres-text',
    root: 'Insert on tutu',
    check: (p) => {
      assert.deepEqual([p.root.metrics.walRecords, p.root.metrics.walFpi, p.root.metrics.walBytes], [10000000, 1, 590001027]);
      const f = at(p, 'Function Scan on generate_series i');
      assert.deepEqual([f.metrics.buffers?.tempRead, f.metrics.buffers?.tempWritten, f.metrics.walRecords], [17090, 17090, 0]);
      assert.equal(p.postgres?.jit?.functions, 2);
    },
  },
  'pg-text-analyze-buffers-windowagg-sort-bitmap-heap-15.txt': {
    format: 'postgres-text',
    root: 'WindowAgg',
    kinds: ['WindowAgg', 'Sort', 'Bitmap Heap Scan', 'Bitmap Index Scan'],
    check: (p) => {
      assert.deepEqual(at(p, 'Sort').details.sortKey, ['customer_id', 'amount DESC']);
      assert.deepEqual([at(p, 'Sort').metrics.sortMethod, at(p, 'Sort').metrics.sortSpaceKb], ['quicksort', 1259]);
      assert.equal(at(p, 'Bitmap Heap Scan on orders').metrics.exactHeapBlocks, 5129);
      assert.equal(at(p, 'Bitmap Index Scan on orders_customer_idx').metrics.buffers?.sharedRead, 21);
    },
  },
  'pg-text-analyze-cte-scan-function-scan-hashagg-old-planning-time.txt': {
    format: 'postgres-text',
    root: 'Nested Loop',
    check: (p) => {
      // Windows line endings and a lower-case "Planning time" (9.4 to 10).
      const cte = at(p, 'CTE Scan on acl_row');
      assert.equal(cte.metrics.loops, 4379);
      assert.deepEqual(cte.children.map((c) => [c.role, c.details.subplanName, c.label, c.metrics.loops]), [['InitPlan', 'CTE acl_row', 'Result', 4379]]);
      assert.equal(at(p, 'Hash').metrics.hashBatches, 4);
      assert.deepEqual(at(p, 'HashAggregate').details.groupKey, ['m.principal_id']);
      assert.deepEqual([p.totals.planningTimeMs, p.totals.executionTimeMs], [0.65, 2999.94]);
    },
  },
  'pg-text-analyze-hashagg-planned-partitions-disk-usage-13.txt': {
    format: 'postgres-text',
    root: 'HashAggregate',
    check: (p) => {
      const m = p.root.metrics;
      assert.deepEqual([m.hashBatches, m.diskUsageKb, m.peakMemoryKb, p.root.raw['Planned Partitions']], [193, 31752, 4153, 32]);
      assert.deepEqual(p.root.details.groupKey, ['name']);
    },
  },
  'pg-text-analyze-hashsetop-except-intersect-append-subquery-scans-15.txt': {
    format: 'postgres-text',
    root: 'HashSetOp Except',
    check: (p) => {
      assert.deepEqual([p.root.kind, p.root.details.strategy, p.root.raw.Command], ['SetOp', 'Hashed', 'Except']);
      assert.equal(at(p, 'HashSetOp Intersect').raw.Command, 'Intersect');
      const sub = at(p, 'Subquery Scan on "*SELECT* 2"');
      assert.deepEqual([sub.details.alias, sub.children[0]!.role], ['*SELECT* 2', 'Subquery']);
      assert.equal(at(p, 'Seq Scan on customers').metrics.rowsRemovedByFilter, 40000);
    },
  },
  'pg-text-analyze-initplan-bitmap-lossy-rows-removed-by-index-recheck.txt': {
    format: 'postgres-text',
    root: 'Aggregate',
    check: (p) => {
      const init2 = p.root.children[0]!;
      assert.deepEqual([init2.role, init2.details.subplanName, init2.label], ['InitPlan', 'InitPlan 2 (returns $1)', 'Result']);
      const init1 = init2.children[0]!;
      assert.deepEqual([init1.role, init1.details.subplanName], ['InitPlan', 'InitPlan 1 (returns $0)']);
      assert.deepEqual([init1.metrics.rowsRemovedByIndexRecheck, init1.metrics.exactHeapBlocks, init1.metrics.lossyHeapBlocks], [14687029, 38322, 79844]);
      assert.equal(at(p, 'Index Scan using pk_vendor on vendor v').details.conditions?.['Index Cond'], '(id = ANY ($1))');
    },
  },
  'pg-text-analyze-no-costs-async-foreign-scan-append-14.txt': {
    format: 'postgres-text',
    root: 'Aggregate',
    kinds: ['Aggregate', 'Append', 'Foreign Scan'],
    check: (p) => {
      const scans = p.nodes.filter((n) => n.kind === 'Foreign Scan');
      assert.equal(scans.length, 18);
      assert.equal(scans[0]!.label, 'Async Foreign Scan on population_frara population_1');
      assert.ok(scans.every((s) => s.raw['Async Capable'] === true && s.metrics.rowsReturned === 1000));
      assert.ok(p.nodes.every((n) => n.metrics.totalCost === undefined), 'COSTS OFF prints no cost');
      assert.equal(at(p, 'Async Foreign Scan on population_frguf population_8').metrics.inclusiveTimeMs, 14.045);
    },
  },
  'pg-text-analyze-no-costs-cte-append-function-scan-pg_sleep.txt': {
    format: 'postgres-text',
    root: 'Append',
    check: (p) => {
      assert.deepEqual(p.root.children.map((c) => [c.role, c.label]), [
        ['InitPlan', 'Append'],
        ['Member', 'Limit'],
        ['Member', 'CTE Scan on init'],
      ]);
      assert.deepEqual(p.root.children[0]!.children.map((c) => c.label), ['Function Scan on pg_sleep pg_sleep_for', 'Function Scan on pg_sleep pg_sleep_for_1']);
      assert.equal(at(p, 'CTE Scan on init init_1').details.alias, 'init_1');
    },
  },
  'pg-text-analyze-old-initplan-subplan-subquery-scan-topn-heapsort.txt': {
    format: 'postgres-text',
    root: 'Limit',
    check: (p) => {
      assert.deepEqual([at(p, 'Sort').metrics.sortMethod, at(p, 'Sort').metrics.sortSpaceKb], ['top-N heapsort', 50]);
      // Before 9.x the InitPlan header carries no number and covers both subplans below it.
      assert.deepEqual(at(p, 'Result').children.map((c) => [c.role, c.details.subplanName]), [['InitPlan', 'InitPlan'], ['InitPlan', 'InitPlan']]);
      const sub = p.nodes.find((n) => n.role === 'SubPlan');
      assert.deepEqual([sub?.label, sub?.metrics.loops], ['Limit', 22035]);
      assert.equal(at(p, 'Subquery Scan on poly_inter_1').details.alias, 'poly_inter_1');
      assert.deepEqual([p.totals.executionTimeMs, p.totals.planningTimeMs], [1352.834, undefined]);
    },
  },
  'pg-text-analyze-old-merge-join-subplan-external-sort-function-scan.txt': {
    format: 'postgres-text',
    root: 'Sort',
    check: (p) => {
      const ext = p.nodes.filter((n) => n.metrics.sortSpaceType === 'Disk');
      assert.deepEqual(ext.map((s) => [s.metrics.sortMethod, s.metrics.sortSpaceKb]), [['external sort', 11312]]);
      const merge = at(p, 'Merge Join');
      assert.ok(merge.details.conditions?.['Merge Cond'] && merge.details.conditions['Join Filter']);
      const sub = p.nodes.find((n) => n.details.subplanName === 'SubPlan 1');
      assert.deepEqual([sub?.label, sub?.metrics.loops, sub?.role], ['Aggregate', 11341, 'SubPlan']);
      assert.equal(p.totals.executionTimeMs, 987.935);
    },
  },
  'pg-text-analyze-old-total-runtime-index-scan-backward-nestloop.txt': {
    format: 'postgres-text',
    root: 'Limit',
    check: (p) => {
      const back = at(p, 'Index Scan Backward using index_stories_on_published_at on stories');
      assert.deepEqual([back.details.direction, back.metrics.rowsReturned, back.details.conditions?.Filter], ['Backward', 10157, '(NOT hidden)']);
      assert.equal(p.totals.executionTimeMs, 126.625);
    },
  },
  'pg-text-analyze-recursive-union-worktable-cte-anti-semi-joins-subplan.txt': {
    format: 'postgres-text',
    root: 'Subquery Scan on location_state_templates',
    // The page this plan was copied from shows it without its "Execution Time" footer.
    warnings: ['The plan has actual times but no "Execution Time" line after it: the text may have been cut short, and what is missing is not shown.'],
    check: (p) => {
      assert.equal(p.root.children[0]!.details.subplanName, 'CTE nested_templates');
      const nested = p.nodes.find((n) => n.details.subplanName === 'CTE nested_level');
      assert.equal(parentOf(p, nested!)?.label, 'Append');
      assert.deepEqual(p.root.children.map((c) => c.role), ['InitPlan', 'Subquery', 'SubPlan']);
      assert.equal(p.root.children[2]!.details.subplanName, 'SubPlan 3');
      assert.deepEqual(p.nodes.filter((n) => n.metrics.sortSpaceType === 'Disk').map((n) => n.metrics.sortSpaceKb), [1488, 4632]);
      assert.equal(at(p, 'WorkTable Scan on nested_templates nt').metrics.loops, 2);
      assert.deepEqual([p.totals.planningTimeMs, p.totals.executionTimeMs], [undefined, undefined]);
    },
  },
  'pg-text-analyze-tpch-parallel-gather-merge-finalize-groupagg-4workers.txt': {
    format: 'postgres-text',
    root: 'Limit',
    check: (p) => {
      const gm = at(p, 'Gather Merge');
      assert.deepEqual([gm.metrics.workersPlanned, gm.metrics.workersLaunched], [4, 4]);
      const sort = at(p, 'Sort');
      assert.deepEqual(sort.metrics.workers?.map((w) => w.sortSpaceKb), [2064, 2384, 2264, 2336]);
      assert.equal(sort.metrics.sortSpaceKb, 2304);
      assert.deepEqual([at(p, 'Parallel Hash Join').kind, at(p, 'Parallel Hash').metrics.hashBatches], ['Hash Join', 256]);
      assert.equal(at(p, 'Parallel Seq Scan on lineitem').metrics.rowsRemovedByFilter, 11934691);
    },
  },
  'pg-text-analyze-tpch-q3-limit-topn-gather-merge-nested-loops-12.txt': {
    format: 'postgres-text',
    root: 'Limit',
    check: (p) => {
      const inner = at(p, 'Index Scan using customer_pkey on customer');
      // 0.459 ms x 621 loops run by 3 participants.
      assert.deepEqual([inner.metrics.loops, inner.metrics.inclusiveTimeMs], [621, 95.013]);
      const sorts = p.nodes.filter((n) => n.kind === 'Sort');
      assert.deepEqual(sorts[1]!.metrics.workers?.map((w) => [w.worker, w.sortSpaceKb]), [[0, 38], [1, 34]]);
      assert.deepEqual([sorts[0]!.metrics.sortMethod, sorts[0]!.metrics.sortSpaceKb], ['top-N heapsort', 26]);
    },
  },
  'pg-text-analyze-tpch-q4-nested-loop-semi-join-gather-merge-12.txt': {
    format: 'postgres-text',
    root: 'GroupAggregate (Finalize)',
    check: (p) => {
      assert.equal(at(p, 'Nested Loop Semi Join').details.joinType, 'Semi');
      assert.deepEqual([at(p, 'Index Scan using lineitem_pkey on lineitem').metrics.loops, at(p, 'Parallel Seq Scan on orders').metrics.rowsRemovedByFilter], [56741, 481086]);
    },
  },
  'pg-text-analyze-verbose-buffers-gather-in-nestloop-parallel-bitmap-heap-disabled-seqscan.txt': {
    format: 'postgres-text',
    root: 'Aggregate',
    check: (p) => {
      const gather = at(p, 'Gather');
      assert.deepEqual([gather.metrics.loops, gather.metrics.workersLaunched, gather.metrics.inclusiveTimeMs], [10, 4, 91.08]);
      const heap = at(p, 'Parallel Bitmap Heap Scan on tenk1');
      // 50 loops = 10 rescans x 5 participants: 0.868 ms x 50 / 5.
      assert.deepEqual([heap.metrics.loops, heap.metrics.inclusiveTimeMs, heap.metrics.exactHeapBlocks], [50, 8.68, 1160]);
      assert.deepEqual(heap.metrics.workers?.map((w) => [w.worker, w.loops, w.buffers?.sharedHit]), [[0, 10, 322], [1, 10, 166], [2, 10, 837], [3, 10, 965]]);
      const seq = at(p, 'Seq Scan on tenk2');
      assert.deepEqual([seq.metrics.startupCost, seq.metrics.rowsRemovedByFilter, seq.details.schema], [10000000000, 9990, 'public']);
    },
  },
  'pg-text-analyze-verbose-buffers-nestloop-bitmap-materialize-never-executed.txt': {
    format: 'postgres-text',
    root: 'Nested Loop Left Join',
    check: (p) => {
      const mat = at(p, 'Materialize');
      assert.deepEqual([mat.metrics.neverExecuted, mat.metrics.loops, mat.metrics.inclusiveTimeMs], [true, 0, 0]);
      assert.equal(p.root.details.conditions?.['Join Filter'], '(exam_1.id = rel_users_exams.exam_id)');
      assert.equal(p.root.details.output?.length, 13);
    },
  },
  'pg-text-analyze-verbose-buffers-parallel-append-partitions-4-workers-15.txt': {
    format: 'postgres-text',
    root: 'GroupAggregate (Finalize)',
    check: (p) => {
      const sort = at(p, 'Sort');
      assert.deepEqual(sort.metrics.workers?.map((w) => [w.worker, w.actualRows, w.sortMethod, w.buffers?.sharedHit]), [
        [0, 200, 'quicksort', 1254],
        [1, 200, 'quicksort', 654],
        [2, 200, 'quicksort', 628],
        [3, 200, 'quicksort', 1002],
      ]);
      const append = at(p, 'Parallel Append');
      assert.equal(append.children.length, 4);
      assert.deepEqual(append.children.map((c) => c.metrics.loops), [2, 5, 2, 2]);
      assert.equal(at(p, 'Parallel Seq Scan on events_2023q1 events_1').metrics.rowsRemovedByFilter, 51178);
    },
  },
  'pg-text-analyze-verbose-buffers-settings-index-only-scan-quoted-index-name.txt': {
    format: 'postgres-text',
    root: 'Aggregate',
    check: (p) => {
      const ios = p.root.children[0]!;
      assert.deepEqual([ios.details.indexName, ios.details.relationName, ios.details.schema], ['mytable:2020-12-09_coalesce_coalesce1_col1_col2_idx', 'mytable:2020-12-09', 'public']);
      assert.equal(ios.metrics.heapFetches, 0);
      assert.equal(Object.keys(p.postgres?.settings ?? {}).length, 11);
      assert.deepEqual([p.postgres?.settings?.work_mem, p.postgres?.settings?.effective_cache_size], ['32MB', '30GB']);
    },
  },
  'pg-text-analyze-verbose-buffers-sort-external-merge-append-temp-table-query-id-14.txt': {
    format: 'postgres-text',
    root: 'Sort',
    check: (p) => {
      assert.equal(p.postgres?.queryIdentifier, '-5424821330993577306');
      assert.deepEqual([p.root.metrics.sortMethod, p.root.metrics.sortSpaceKb], ['external merge', 1151688]);
      const b = p.root.metrics.buffers!;
      assert.deepEqual([b.localRead, b.localDirtied, b.localWritten, b.tempRead, b.tempWritten, b.ioReadTimeMs], [16394, 16394, 16394, 778130, 780004, 1116.067]);
      assert.equal(at(p, 'Seq Scan on pp').details.schema, 'pg_temp_5');
      assert.deepEqual([p.postgres?.planningBuffers?.sharedRead, p.postgres?.planningBuffers?.ioReadTimeMs], [8, 0.073]);
    },
  },
  'pg-text-analyze-verbose-buffers-sort-hashagg-gather-parallel-seqscan-15.txt': {
    format: 'postgres-text',
    root: 'Sort',
    check: (p) => {
      assert.deepEqual([at(p, 'HashAggregate').metrics.hashBatches, at(p, 'HashAggregate').metrics.peakMemoryKb], [1, 5649]);
      const scan = at(p, 'Parallel Seq Scan on orders');
      assert.deepEqual([scan.metrics.rowsRemovedByFilter, scan.metrics.loops, scan.metrics.rowsReturned], [80010, 3, 159969]);
      assert.deepEqual(scan.metrics.workers?.map((w) => [w.actualRows, w.buffers?.sharedHit]), [[82083, 2639], [67047, 2145]]);
      assert.equal(p.root.details.output?.[1], '(count(*))');
    },
  },
  'pg-text-analyze-verbose-buffers-wal-merge-cte-external-sort-jit-15.txt': {
    format: 'postgres-text',
    root: 'Merge on t1',
    check: (p) => {
      assert.equal(p.root.raw['Tuples Deleted'], 2499999);
      assert.equal(p.root.metrics.walRecords, 2500630);
      assert.deepEqual(p.root.children.map((c) => c.details.subplanName ?? c.role), ['CTE t2bb', 'CTE t2b', 'Outer']);
      assert.equal(at(p, 'Update on t2').metrics.buffers?.localHit, 7541658);
      assert.equal(at(p, 'Merge Left Join').details.joinType, 'Left');
      assert.deepEqual(p.nodes.filter((n) => n.metrics.sortSpaceType === 'Disk').map((n) => n.metrics.sortSpaceKb), [141936, 115072, 215352]);
      assert.deepEqual([p.postgres?.jit?.functions, p.totals.jitTimeMs], [20, 245.045]);
    },
  },
  'pg-text-analyze-verbose-gather-24-planned-7-launched-function-scan.txt': {
    format: 'postgres-text',
    root: 'Aggregate (Finalize)',
    check: (p) => {
      const g = at(p, 'Gather');
      assert.deepEqual([g.metrics.workersPlanned, g.metrics.workersLaunched], [24, 7]);
      assert.equal(at(p, 'Aggregate (Partial)').metrics.workers?.length, 7);
      const f = at(p, 'Function Scan on generate_series j');
      // 100000 loops over 8 participants (7 workers and the leader): 0.084 ms x 100000 / 8.
      assert.deepEqual([f.metrics.loops, f.metrics.inclusiveTimeMs, f.details.schema], [100000, 1050, 'pg_catalog']);
      assert.equal(f.details.conditions?.['Function Call'], 'generate_series(1, expensive(((blah.i + 10) - blah.i)))');
      assert.ok((at(p, 'Nested Loop').metrics.exclusiveTimeMs ?? -1) > 20);
    },
  },
  'pg-text-analyze-verbose-grouping-sets-groupagg-multiple-group-keys-15.txt': {
    format: 'postgres-text',
    root: 'GroupAggregate',
    check: (p) => {
      assert.deepEqual(p.root.raw['Grouping Sets'], [
        { 'Group Keys': [['orders.status'], []] },
        { 'Sort Key': ["date_trunc('month'::text, orders.ordered_at)"], 'Group Keys': [["date_trunc('month'::text, orders.ordered_at)"]] },
      ]);
      assert.deepEqual(p.root.details.groupKey, ['orders.status', "date_trunc('month'::text, orders.ordered_at)"]);
    },
  },
  'pg-text-analyze-verbose-parallel-bitmap-heap-workers-12.txt': {
    format: 'postgres-text',
    root: 'Aggregate (Finalize)',
    check: (p) => {
      assert.deepEqual(at(p, 'Aggregate (Partial)').metrics.workers?.map((w) => w.loops), [1, 1, 1, 1]);
      assert.equal(at(p, 'Parallel Bitmap Heap Scan on tenk1').metrics.exactHeapBlocks, 345);
      const idx = at(p, 'Bitmap Index Scan on tenk1_hundred');
      assert.deepEqual([idx.metrics.loops, idx.metrics.rowsReturned], [1, 9800]);
    },
  },
  'pg-text-auto-explain-log-query-text-hash-join.txt': {
    format: 'postgres-text',
    root: 'Aggregate',
    check: (p) => {
      assert.equal(p.postgres?.queryText, 'SELECT count(*)\nFROM pg_class, pg_index\nWHERE oid = indrelid AND indisunique;');
      assert.deepEqual([at(p, 'Hash').metrics.hashBuckets, at(p, 'Hash').metrics.peakMemoryKb], [1024, 4]);
      assert.equal(at(p, 'Seq Scan on pg_index').details.conditions?.Filter, 'indisunique');
    },
  },
  'pg-text-pgadmin-quoted-lines-limit-nestloop-subplan.txt': {
    format: 'postgres-text',
    root: 'Limit',
    check: (p) => {
      const nl = p.root.children[0]!;
      assert.deepEqual(nl.children.map((c) => [c.role, c.details.subplanName ?? null]), [['Outer', null], ['Inner', null], ['SubPlan', 'SubPlan 1'], ['SubPlan', 'SubPlan 2']]);
      const people = at(p, 'Index Scan using ref_people_xperf1 on ref_people');
      assert.deepEqual([people.metrics.loops, people.metrics.rowsRemovedByFilter], [4, 4]);
      assert.deepEqual([p.totals.planningTimeMs, p.totals.executionTimeMs], [2.916, 2.9]);
    },
  },
  'pg-text-plain-parallel-finalize-aggregate-12-workers-jit.txt': {
    format: 'postgres-text',
    root: 'Aggregate (Finalize)',
    check: (p) => {
      assert.equal(p.postgres?.analyzed, false);
      assert.deepEqual([at(p, 'Gather').metrics.workersPlanned, at(p, 'Gather').metrics.workersLaunched], [12, undefined]);
      assert.deepEqual(p.postgres?.jit, { functions: 4, options: { Inlining: true, Optimization: true, Expressions: true, Deforming: true } });
      assert.equal(at(p, 'Parallel Seq Scan on bigtable').metrics.plannedRows, 41666667);
    },
  },

  // ---- XML, YAML ----------------------------------------------------------------------------
  'pg-xml-analyze-nested-loop-index-scan-15.xml': {
    format: 'postgres-xml',
    root: 'Nested Loop',
    kinds: ['Nested Loop', 'Index Scan', 'Bitmap Heap Scan', 'Bitmap Index Scan'],
    check: (p) => {
      assert.equal(at(p, 'Index Scan using customers_pkey on customers c').details.conditions?.['Index Cond'], '((id >= 100) AND (id <= 110))');
      const heap = at(p, 'Bitmap Heap Scan on orders o');
      assert.deepEqual([heap.role, heap.metrics.loops, heap.metrics.rowsReturned, heap.metrics.exactHeapBlocks], ['Inner', 11, 88, 88]);
      assert.equal(p.root.raw['Inner Unique'], false);
      assert.deepEqual([p.totals.planningTimeMs, p.totals.executionTimeMs], [1.322, 1.08]);
    },
  },
  'pg-yaml-analyze-buffers-hash-join-15.yaml': {
    format: 'postgres-yaml',
    root: 'Hash Join',
    check: (p) => {
      assert.equal(at(p, 'Seq Scan on customers c').metrics.rowsRemovedByFilter, 40000);
      assert.deepEqual([p.root.metrics.buffers?.sharedHit, p.root.metrics.buffers?.sharedRead, p.root.metrics.buffers?.ioReadTimeMs], [3067, 10, 0.102]);
      assert.deepEqual([at(p, 'Hash').metrics.hashBuckets, at(p, 'Hash').metrics.peakMemoryKb], [16384, 596]);
      assert.deepEqual([p.postgres?.planningBuffers?.sharedHit, p.postgres?.planningBuffers?.sharedRead], [309, 3]);
    },
  },
};

describe('PostgreSQL JSON reader', () => {
  it('keeps every condition key the formats share, in their order', () => {
    const node: Record<string, unknown> = { 'Node Type': 'Result' };
    CONDITION_KEYS.forEach((k, i) => {
      node[k] = `(c${i})`;
    });
    const plan = loadText(JSON.stringify([{ Plan: node }]), 'a node with every condition');
    assert.deepEqual(Object.entries(plan.root.details.conditions ?? {}), CONDITION_KEYS.map((k, i) => [k, `(c${i})`]));
  });
});

describe('PostgreSQL corpus', () => {
  const files = readdirSync(CORPUS).filter((f) => f.startsWith('pg-'));

  it('has an expectation for every pg-* file', () => {
    assert.deepEqual(files.filter((f) => !EXPECT[f]), []);
    assert.deepEqual(Object.keys(EXPECT).filter((f) => !files.includes(f)), []);
  });

  for (const file of files) {
    it(file, () => {
      const text = readFileSync(join(CORPUS, file), 'utf8');
      const p = loadText(text, file);
      const e = EXPECT[file]!;
      assert.equal(p.engine, 'postgres');
      assert.equal(p.format, e.format);
      assert.deepEqual(p.warnings, e.warnings ?? [], 'every line of a real plan is understood');
      assert.equal(p.root.label, e.root);
      assert.equal(p.nodes.length, declaredNodes(file, text), 'one model node per node the source declares');
      assert.ok(p.nodes.every((n, i) => n.id === i && n.kind !== 'Unknown'));
      if (e.kinds) assert.deepEqual(kinds(p), e.kinds);
      if (p.root.metrics.rowsReturned !== undefined) assert.equal(p.totals.rows, p.root.metrics.rowsReturned);
      if (p.postgres?.analyzed) assert.ok(p.nodes.every((n) => n.metrics.loops !== undefined), 'every node of an analysed plan has its loops');
      e.check?.(p);
    });
  }

  it('inside every Gather, parents take at least as long as their children (exclusive time is real)', () => {
    let sections = 0;
    for (const file of files) {
      const p = loadText(readFileSync(join(CORPUS, file), 'utf8'), file);
      for (const g of p.nodes.filter((n) => (n.kind === 'Gather' || n.kind === 'Gather Merge') && n.metrics.inclusiveTimeMs !== undefined)) {
        sections++;
        const stack = [...g.children];
        while (stack.length > 0) {
          const n = stack.pop()!;
          stack.push(...n.children);
          const children = n.children.reduce((s, c) => s + (c.metrics.inclusiveTimeMs ?? 0), 0);
          // PostgreSQL rounds each printed time to the microsecond, hence the small tolerance.
          assert.ok(children <= (n.metrics.inclusiveTimeMs ?? 0) + 0.01, `${file}: ${n.label} ${n.metrics.inclusiveTimeMs} ms < children ${children} ms`);
        }
        const top = g.children.find((c) => c.role === 'Outer') ?? g.children[0]!;
        assert.ok((top.metrics.inclusiveTimeMs ?? 0) <= g.metrics.inclusiveTimeMs! + 0.01, `${file}: the Gather covers its section`);
      }
    }
    assert.ok(sections >= 12, `parallel sections checked: ${sections}`);
  });

  it('reads the JSON and the text output of the same plan into the same model', () => {
    const json = loadText(readFileSync(join(CORPUS, 'pg-json-analyze-verbose-buffers-nestloop-bitmap-materialize.json'), 'utf8'), 'json');
    const text = loadText(readFileSync(join(CORPUS, 'pg-text-analyze-verbose-buffers-nestloop-bitmap-materialize-never-executed.txt'), 'utf8'), 'text');
    // The two files come from two runs of the query: only the measured times differ.
    const timeKeys = /time/i;
    const strip = (o: object): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([k]) => !timeKeys.test(k)));
    assert.equal(json.nodes.length, 5);
    assert.equal(text.nodes.length, json.nodes.length);
    for (let i = 0; i < json.nodes.length; i++) {
      const a = json.nodes[i]!;
      const b = text.nodes[i]!;
      assert.deepEqual([b.kind, b.label, b.role, b.children.length], [a.kind, a.label, a.role, a.children.length], `node ${i}`);
      assert.deepEqual(strip(b.metrics), strip(a.metrics), `metrics of ${a.label}`);
      assert.deepEqual(b.details, a.details, `details of ${a.label}`);
      assert.deepEqual(strip(b.raw), strip(a.raw), `fields of ${a.label}`);
    }
    assert.equal(text.nodes[3]!.metrics.neverExecuted, true);
    assert.equal(text.nodes[3]!.metrics.inclusiveTimeMs, json.nodes[3]!.metrics.inclusiveTimeMs);
    assert.deepEqual(strip(text.totals), strip(json.totals));
  });
});

/** "Limit>Sort>Hash Join(Seq Scan[orders], Hash>Index Only Scan[idx])", as case.json writes shapes. */
function shape(n: PlanNode): string {
  const tag = n.details.indexName ?? n.details.relationName;
  const self = tag ? `${n.kind}[${tag}]` : n.kind;
  if (n.children.length === 0) return self;
  if (n.children.length === 1) return `${self}>${shape(n.children[0]!)}`;
  return `${self}(${n.children.map(shape).join(', ')})`;
}

describe('PostgreSQL truth plans (measured on a real PostgreSQL 15)', () => {
  const cases = readdirSync(TRUTH).filter((d) => /^p\d/.test(d));

  it('covers every PostgreSQL case', () => {
    assert.ok(cases.length >= 8, `cases: ${cases.join(', ')}`);
  });

  for (const c of cases) {
    const caseDoc = JSON.parse(readFileSync(join(TRUTH, c, 'case.json'), 'utf8')) as {
      plans: { file: string; candidate: string; role: string }[];
      candidates: {
        index: string;
        buffers: number;
        rows: number;
        rowsRemovedByFilter: number;
        rowsRemovedByIndexRecheck: number;
        heapFetches: number;
        sortNode: boolean;
        sortMethods: string[];
        shape: string;
      }[];
    };
    for (const entry of caseDoc.plans) {
      it(`${c}: ${entry.role} ${entry.candidate}`, () => {
        const saved = JSON.parse(readFileSync(join(TRUTH, c, entry.file.replace(/^plans\//, '')), 'utf8')) as { natural: unknown };
        // The harness saved the server's EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) document under "natural".
        const p = loadText(JSON.stringify(saved.natural), entry.file);
        const want = caseDoc.candidates.find((x) => x.index === entry.candidate)!;
        assert.ok(want, `case.json lists ${entry.candidate}`);
        const b = p.totals.buffers!;
        assert.equal((b.sharedHit ?? 0) + (b.sharedRead ?? 0), want.buffers, 'shared hit+read at the root');
        assert.equal(p.totals.rows, want.rows);
        const sum = (f: (n: PlanNode) => number | undefined): number => p.nodes.reduce((s, n) => s + (f(n) ?? 0), 0);
        assert.equal(sum((n) => n.metrics.rowsRemovedByFilter), want.rowsRemovedByFilter);
        assert.equal(sum((n) => n.metrics.rowsRemovedByIndexRecheck), want.rowsRemovedByIndexRecheck);
        assert.equal(sum((n) => n.metrics.heapFetches), want.heapFetches);
        const sorts = p.nodes.filter((n) => n.kind === 'Sort' || n.kind === 'Incremental Sort');
        assert.equal(sorts.length > 0, want.sortNode, 'a Sort node exactly when case.json says so');
        assert.deepEqual(sorts.map((s) => s.metrics.sortMethod), want.sortMethods);
        assert.equal(shape(p.root), want.shape);
      });
    }
  }
});
