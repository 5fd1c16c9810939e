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
