import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPlan, type Plan } from '../../src/core/index';

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
