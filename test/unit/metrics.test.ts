import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { textReport } from '../../src/cli/report';
import { analyze, loadPlan, type Plan } from '../../src/core/index';

const corpus = join(__dirname, '..', 'fixtures', 'corpus');
function load(file: string): Plan {
  const r = loadPlan(readFileSync(join(corpus, file), 'utf8'));
  if (!r.ok) assert.fail(r.refusal);
  return r.plan;
}

describe('derive(): exclusive time', () => {
  it('shows a CTE\'s time once: on its own nodes, not again on the CTE Scan that reads it', () => {
    const plan = load('pg-text-analyze-buffers-recursive-cte-worktable-lockrows-hash-semi-join-15.txt');
    const scan = plan.nodes.find((n) => n.kind === 'CTE Scan' && n.details.cteName === 'picked')!;
    const cte = plan.nodes.find((n) => n.details.subplanName === 'CTE picked')!;
    // CTE Scan on picked: 0.505 ms inclusive, of which 0.471 ms is the CTE's LockRows subtree.
    assert.equal(scan.metrics.inclusiveTimeMs, 0.505);
    assert.equal(cte.metrics.inclusiveTimeMs, 0.471);
    assert.equal(scan.metrics.exclusiveTimeMs, 0.034);
    // The Aggregate on top is not charged the InitPlan a second time: 0.516 - 0.505 of its own.
    assert.equal(plan.root.metrics.exclusiveTimeMs, 0.011);
  });

  it('never leaves a negative exclusive time or buffer count on any corpus plan', () => {
    for (const f of ['pg-text-analyze-verbose-buffers-wal-merge-cte-external-sort-jit-15.txt', 'pg-text-analyze-recursive-union-worktable-cte-anti-semi-joins-subplan.txt', 'pg-json-very-large-plan-hash-joins-190kb.json']) {
      for (const n of load(f).nodes) {
        assert.ok((n.metrics.exclusiveTimeMs ?? 0) >= 0, `${f} node ${n.id}`);
        assert.ok((n.metrics.exclusiveSharedBlocks ?? 0) >= 0, `${f} node ${n.id}`);
      }
    }
  });

  it('gives every node its preorder id and the plan its maxima', () => {
    const plan = load('pg-json-analyze-buffers-nested-loop-memoize-15.json');
    plan.nodes.forEach((n, i) => assert.equal(n.id, i));
    assert.equal(plan.maxima.exclusiveTimeMs, Math.max(...plan.nodes.map((n) => n.metrics.exclusiveTimeMs ?? 0)));
    assert.equal(plan.maxima.rowsReturned, Math.max(...plan.nodes.map((n) => n.metrics.rowsReturned ?? 0)));
  });
});

describe('derive(): wasted reads, charged to the node that read', () => {
  it('charges a collection scan for the documents a $match above it dropped (MongoDB 5.0 aggregate)', () => {
    // COLLSCAN read 100 documents under a pushed-down LIMIT 100; $cursor passed them on; $match kept 20.
    const plan = load('mongo-agg-lookup-limit-unwind-match-collscan-5.0.json');
    const scan = plan.nodes.find((n) => n.kind === 'COLLSCAN')!;
    assert.equal(scan.metrics.docsExamined, 100);
    assert.equal(scan.metrics.wastedReads, 80);
    assert.equal(plan.nodes.find((n) => n.kind === '$match')!.metrics.wastedReads, undefined, 'a stage that reads nothing is charged nothing');
    assert.equal(plan.maxima.wastedReads, 80);
  });

  it('stops at a stage that reshapes the stream: $unwind multiplies documents, so its $match says nothing about the scan', () => {
    const plan = load('mongo-shell-agg-tpch-q3-collscan-unwind-group-sort-4.4.js');
    const scan = plan.nodes.find((n) => n.kind === 'COLLSCAN')!;
    assert.equal(scan.metrics.wastedReads, 150_000 - 29_752);
  });

  it('counts a document read through its key once (EXPRESS_IXSCAN reads 1 key and 1 document to return 1)', () => {
    const plan = load('mongo-find-express-ixscan-limit1-8.0.json');
    const express = plan.nodes.find((n) => n.kind === 'EXPRESS_IXSCAN')!;
    assert.equal(express.metrics.wastedReads, 0);
  });

  it('charges FETCH for its own documents and the IXSCAN below it for nothing it passed on', () => {
    const plan = load('mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json');
    for (const fetch of plan.nodes.filter((n) => n.kind === 'FETCH' && n.metrics.docsExamined !== undefined)) {
      assert.equal(fetch.metrics.wastedReads, fetch.metrics.docsExamined! - fetch.metrics.rowsReturned!);
    }
  });

  it('counts PostgreSQL rows removed per loop over all loops, rounded like the rows returned', () => {
    const plan = load('pg-text-analyze-buffers-fractional-rows-nestloop-limit-18.txt');
    // Seq Scan on data: Rows Removed by Filter: 6 on each of 4 loops.
    const scan = plan.nodes.find((n) => n.kind === 'Seq Scan')!;
    assert.equal(scan.metrics.wastedReads, 24);
    assert.equal(plan.nodes.find((n) => n.kind === 'Limit')!.metrics.wastedReads, undefined);
  });

  it('gives a rejected MongoDB candidate its own maxima, so it can be drawn alone', () => {
    const plan = load('mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json');
    assert.ok(plan.rejectedPlans.length > 0);
    for (const r of plan.rejectedPlans) {
      const nodes: Plan['nodes'] = [];
      const stack = [r.root];
      while (stack.length > 0) {
        const n = stack.pop()!;
        nodes.push(n);
        stack.push(...n.children);
      }
      assert.equal(r.maxima?.keysExamined, Math.max(0, ...nodes.map((n) => n.metrics.keysExamined ?? 0)));
      assert.equal(r.maxima?.wastedReads, Math.max(0, ...nodes.map((n) => n.metrics.wastedReads ?? 0)));
    }
  });
});

describe('derive(): row estimates of nodes read only until their consumer had enough', () => {
  const UNION = [
    'Limit  (cost=0.86..2.20 rows=10 width=12) (actual time=0.030..0.060 rows=10 loops=1)',
    '  ->  Merge Append  (cost=0.86..40.86 rows=30 width=12) (actual time=0.029..0.057 rows=10 loops=1)',
    '        Sort Key: orders.created_at DESC',
    '        ->  Limit  (cost=0.29..1.20 rows=10 width=12) (actual time=0.010..0.015 rows=4 loops=1)',
    '              ->  Index Scan Backward using orders_country_created on orders  (cost=0.29..335.00 rows=3665 width=12) (actual time=0.009..0.013 rows=4 loops=1)',
    '                    Index Cond: (country_id = 1)',
    '        ->  Limit  (cost=0.29..1.20 rows=10 width=12) (actual time=0.010..0.015 rows=10 loops=1)',
    '              ->  Index Scan Backward using orders_country_created on orders orders_1  (cost=0.29..335.00 rows=5 width=12) (actual time=0.009..0.013 rows=10 loops=1)',
    '                    Index Cond: (country_id = 2)',
    'Planning Time: 0.140 ms',
    'Execution Time: 0.096 ms',
  ].join('\n');
  const JOIN = [
    'Hash Join  (cost=10.00..200.00 rows=5000 width=8) (actual time=0.100..0.400 rows=10 loops=1)',
    '  Hash Cond: (a.id = b.a_id)',
    '  ->  Seq Scan on a  (cost=0.00..80.00 rows=5000 width=4) (actual time=0.010..0.200 rows=10 loops=1)',
    '  ->  Hash  (cost=5.00..5.00 rows=100 width=4) (actual time=0.050..0.050 rows=100 loops=1)',
    '        ->  Seq Scan on b  (cost=0.00..5.00 rows=100 width=4) (actual time=0.005..0.030 rows=100 loops=1)',
    'Execution Time: 0.500 ms',
  ].join('\n');
  const plan = (text: string) => {
    const r = loadPlan(text);
    if (!r.ok) assert.fail(r.refusal);
    return r.plan;
  };

  it('gives no over-estimate under a Limit, where the planned rows are the whole scan\'s, and says why', () => {
    const p = plan(UNION);
    const [first, second] = p.nodes.filter((n) => n.kind === 'Index Scan');
    assert.equal(first!.metrics.plannedRows, 3665);
    assert.equal(first!.metrics.stoppedEarly, true);
    assert.equal(first!.metrics.estimateFactor, undefined, 'planned 3,665 for the whole scan, 4 read: no misestimate');
    // More rows than planned for the whole scan is an estimate error even under a Limit.
    assert.equal(second!.metrics.estimateDirection, 'under');
    assert.equal(second!.metrics.estimateFactor, 2);
    assert.equal(p.root.metrics.stoppedEarly, undefined);
    assert.doesNotMatch(textReport(p, analyze(p)), /misestimate x916/);
    assert.ok(!analyze(p).some((f) => f.code === 'pg.misestimate'));
  });

  it('reads what a Sort under a Limit sorts to its end: the scan below keeps its over-estimate', () => {
    const p = plan([
      'Limit  (cost=500.00..500.02 rows=10 width=12) (actual time=0.300..0.302 rows=10 loops=1)',
      '  ->  Sort  (cost=500.00..512.50 rows=5000 width=12) (actual time=0.300..0.301 rows=10 loops=1)',
      '        Sort Key: created_at DESC',
      '        Sort Method: top-N heapsort  Memory: 25kB',
      '        ->  Seq Scan on events  (cost=0.00..80.00 rows=5000 width=12) (actual time=0.010..0.200 rows=40 loops=1)',
      '              Filter: (kind = 3)',
      'Execution Time: 0.350 ms',
    ].join('\n'));
    const sort = p.nodes.find((n) => n.kind === 'Sort')!;
    const scan = p.nodes.find((n) => n.kind === 'Seq Scan')!;
    assert.equal(sort.metrics.stoppedEarly, true, 'the Limit takes 10 of what the Sort would give');
    assert.equal(sort.metrics.estimateFactor, undefined);
    assert.equal(scan.metrics.stoppedEarly, undefined, 'the Sort read every row of the scan');
    assert.equal(scan.metrics.estimateDirection, 'over');
    assert.equal(scan.metrics.estimateFactor, 125);
  });

  it('keeps the over-estimate of a node read to its end', () => {
    const p = plan(JOIN);
    const scan = p.nodes.find((n) => n.kind === 'Seq Scan' && n.details.relationName === 'a')!;
    assert.equal(scan.metrics.stoppedEarly, undefined);
    assert.equal(scan.metrics.estimateDirection, 'over');
    assert.equal(scan.metrics.estimateFactor, 500);
    assert.match(textReport(p, analyze(p)), /misestimate x500 over/);
  });
});
