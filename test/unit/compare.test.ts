// Plan comparison on real plan pairs: the truth plans measured on MongoDB 6.0.5 and PostgreSQL 15
// (one query, one index per plan: the oracle against the losers), rewrites across cases (skip against
// keyset pagination, = ANY against UNION ALL), corpus pairs (an update before and after its index, one
// plan printed as text and as JSON), and a real plan with its join sides swapped. Each verdict is written
// out by hand as a user would read it, and the figures it quotes are checked against the plans first.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { comparePlans, deltaText, entryOfAfter, entryOfBefore, MAX_CELLS, type ComparedPlans, type NodeComparison } from '../../src/core/compare';
import { derive, loadPlan } from '../../src/core/index';
import type { Plan, PlanNode } from '../../src/core/model';
import { bigPostgresText } from '../browser/plans';

const TRUTH = join(__dirname, '..', 'fixtures', 'truth-plans');
const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

function truthPlan(caseId: string, file: string): Plan {
  const doc = JSON.parse(readFileSync(join(TRUTH, caseId, file), 'utf8')) as { hinted_explain?: unknown; natural?: unknown };
  const r = loadPlan(JSON.stringify(doc.hinted_explain ?? doc.natural));
  if (!r.ok) assert.fail(`${caseId}/${file} should load: ${r.refusal}`);
  return r.plan;
}

function corpusPlan(file: string): Plan {
  const r = loadPlan(readFileSync(join(CORPUS, file), 'utf8'));
  if (!r.ok) assert.fail(`${file} should load: ${r.refusal}`);
  return r.plan;
}

function truthFile(caseId: string, prefix: string): string {
  const f = readdirSync(join(TRUTH, caseId)).find((x) => x.startsWith(prefix));
  assert.ok(f, `${caseId} has no ${prefix} plan`);
  return f;
}

function compare(before: Plan, after: Plan): ComparedPlans {
  const c = comparePlans(before, after);
  if (!c.ok) assert.fail(`the comparison was refused: ${c.refusal}`);
  return c;
}

function node(plan: Plan, id: number | undefined): PlanNode {
  assert.ok(id !== undefined);
  const n = plan.nodes[id];
  assert.ok(n);
  return n;
}

/** Every node of both plans is in exactly one entry, and the entries agree with the status counts. */
function assertConsistent(c: ComparedPlans, before: Plan, after: Plan): void {
  const seenBefore = new Set<number>();
  const seenAfter = new Set<number>();
  for (const e of c.nodes) {
    if (e.beforeId !== undefined) {
      assert.ok(!seenBefore.has(e.beforeId), `before node ${e.beforeId} is in two entries`);
      seenBefore.add(e.beforeId);
    }
    if (e.afterId !== undefined) {
      assert.ok(!seenAfter.has(e.afterId), `after node ${e.afterId} is in two entries`);
      seenAfter.add(e.afterId);
    }
    assert.equal(e.status === 'added', e.beforeId === undefined);
    assert.equal(e.status === 'removed', e.afterId === undefined);
  }
  assert.equal(seenBefore.size, before.nodes.length);
  assert.equal(seenAfter.size, after.nodes.length);
  for (const n of before.nodes) assert.equal(entryOfBefore(c, n.id)?.beforeId, n.id);
  for (const n of after.nodes) assert.equal(entryOfAfter(c, n.id)?.afterId, n.id);
  const counted = c.counts.unchanged + c.counts.changed + c.counts.added + c.counts.removed;
  assert.equal(counted, c.nodes.length);
  assert.ok(!c.verdict.includes('\n'));
  assert.match(c.verdict, /\.$/);
}

function byKind(c: ComparedPlans, status: NodeComparison['status'], kind: string): NodeComparison[] {
  return c.nodes.filter((e) => e.status === status && e.kind === kind);
}

describe('comparePlans', () => {
  describe('MongoDB truth plans: orders in country 1 with product 5, newest first', () => {
    const id = 'm01_orders_elemmatch_sort';
    const oracle = truthPlan(id, truthFile(id, 'oracle'));
    const measured = JSON.parse(readFileSync(join(TRUTH, id, 'case.json'), 'utf8')) as { oracle: { metrics: { keysExamined: number; docsExamined: number } } };

    it('a collection scan and its in-memory sort against the E,E,S index', () => {
      const scan = truthPlan(id, truthFile(id, 'loser3_COLLSCAN'));
      const c = compare(scan, oracle);
      assertConsistent(c, scan, oracle);
      assert.equal(c.direction, 'better');
      // The scan's SORT goes, LIMIT and FETCH appear, and the COLLSCAN is the node the IXSCAN replaces.
      assert.equal(byKind(c, 'removed', 'SORT').length, 1);
      assert.equal(byKind(c, 'added', 'LIMIT').length, 1);
      assert.equal(byKind(c, 'added', 'FETCH').length, 1);
      const [ix] = byKind(c, 'changed', 'IXSCAN');
      assert.ok(ix);
      assert.equal(node(scan, ix.beforeId).kind, 'COLLSCAN');
      assert.ok(ix.differences.includes('COLLSCAN → IXSCAN'));
      const docs = ix.deltas.find((d) => d.key === 'docsExamined');
      assert.equal(docs?.before, scan.totals.docsExamined);
      assert.equal(docs?.material, true);
      // Keys examined going from none to some while keys and documents together fall is the index at
      // work, not a regression.
      const keysTotal = c.totals.find((d) => d.key === 'keysExamined');
      assert.equal(keysTotal?.before, 0);
      assert.ok((keysTotal?.after ?? 0) > 0);
      assert.equal(keysTotal?.trend, 'neutral');
      assert.equal(c.totals.find((d) => d.key === 'docsExamined')?.trend, 'better');
      // The verdict quotes the measured figures and both shape changes.
      assert.equal(oracle.totals.keysExamined, measured.oracle.metrics.keysExamined);
      assert.deepEqual([measured.oracle.metrics.keysExamined, measured.oracle.metrics.docsExamined, scan.totals.docsExamined], [10, 10, 200_000]);
      assert.equal(c.verdict, 'After examines 10 keys and 10 documents instead of 0 and 200,000 (10,000x less work), no longer sorts in memory and no longer scans the whole collection.');
      assert.match(c.verdict, /no longer sorts in memory/);
      assert.match(c.verdict, /no longer scans the whole collection/);
      assert.deepEqual(c.findings.disappeared.map((f) => f.code).sort(), ['mongo.blocking-sort', 'mongo.collscan']);
      assert.ok(c.findings.appeared.some((f) => f.code === 'mongo.efficient'));
      const flag = c.flags.find((f) => f.key === 'blockingSort');
      assert.deepEqual([flag?.before, flag?.after, flag?.trend], [true, false, 'better']);
    });

    it('the same shape on a worse index: every node paired, the figures say which reads less', () => {
      const loser = truthPlan(id, truthFile(id, 'loser4'));
      const c = compare(loser, oracle);
      assertConsistent(c, loser, oracle);
      assert.deepEqual(c.nodes.map((e) => [e.kind, e.beforeId, e.afterId]), oracle.nodes.map((n) => [n.kind, n.id, n.id]));
      assert.equal(c.counts.added + c.counts.removed, 0);
      const limit = entryOfAfter(c, 0)!;
      assert.equal(limit.status, 'unchanged');
      const keys = c.totals.find((d) => d.key === 'keysExamined')!;
      assert.equal(keys.before, loser.totals.keysExamined);
      assert.equal(keys.trend, 'better');
      assert.deepEqual([oracle.totals.keysExamined, oracle.totals.docsExamined, loser.totals.keysExamined, loser.totals.docsExamined], [10, 10, 10_222, 10_222]);
      assert.equal(c.verdict, 'After examines 10 keys and 10 documents instead of 10,222 and 10,222 (1,022x less work).');
      const ix = entryOfAfter(c, 2)!;
      assert.equal(ix.status, 'changed');
      assert.ok(ix.differences.some((d) => d.startsWith('index country_id_1_created_at_-1 → ')));
    });

    it('read the other way round, the same pair is worse and the added nodes are removed', () => {
      const scan = truthPlan(id, truthFile(id, 'loser3_COLLSCAN'));
      const forward = compare(scan, oracle);
      const back = compare(oracle, scan);
      assertConsistent(back, oracle, scan);
      assert.equal(back.direction, 'worse');
      assert.match(back.verdict, /^Worse: after /);
      assert.match(back.verdict, /now sorts in memory/);
      assert.equal(back.counts.added, forward.counts.removed);
      assert.equal(back.counts.removed, forward.counts.added);
      assert.deepEqual(back.findings.appeared.map((f) => f.code).sort(), forward.findings.disappeared.map((f) => f.code).sort());
    });

    it('one key read instead of many, with the ratio as the verdict prints it', () => {
      const loser = truthPlan(id, truthFile(id, 'loser1'));
      const c = compare(loser, oracle);
      const k0 = loser.totals.keysExamined!;
      const k1 = oracle.totals.keysExamined!;
      assert.equal(loser.totals.docsExamined, oracle.totals.docsExamined);
      assert.deepEqual([k1, k0], [10, 97]);
      assert.equal(c.verdict, 'After reads 10 keys instead of 97 (9.7x fewer).');
      const ix = byKind(c, 'changed', 'IXSCAN')[0]!;
      assert.equal(ix.deltas.find((d) => d.key === 'seeks')?.trend, 'better');
    });
  });

  describe('plans without execution figures (queryPlanner verbosity)', () => {
    /** The same measured explain with its executionStats section removed, as queryPlanner prints it. */
    function plannerOnly(caseId: string, prefix: string): Plan {
      const doc = JSON.parse(readFileSync(join(TRUTH, caseId, truthFile(caseId, prefix)), 'utf8')) as { hinted_explain: Record<string, unknown> };
      const { executionStats: _dropped, ...rest } = doc.hinted_explain;
      const r = loadPlan(JSON.stringify(rest));
      if (!r.ok) assert.fail(r.refusal);
      return r.plan;
    }
    const id = 'm01_orders_elemmatch_sort';

    it('judges by shape when the shape says something: the sort and the collection scan go', () => {
      const scan = plannerOnly(id, 'loser3_COLLSCAN');
      const oracle = plannerOnly(id, 'oracle');
      assert.equal(scan.totals.keysExamined, undefined);
      const c = compare(scan, oracle);
      assertConsistent(c, scan, oracle);
      assert.equal(c.verdict, 'After no longer sorts in memory and no longer scans the whole collection.');
      assert.ok(c.notes.some((n) => /^Neither plan has execution figures/.test(n)));
    });

    it('says the work cannot be compared when only the index differs', () => {
      const loser = plannerOnly(id, 'loser4');
      const oracle = plannerOnly(id, 'oracle');
      const c = compare(loser, oracle);
      assert.equal(c.direction, 'unmeasured');
      assert.equal(c.verdict, 'The plans differ in shape (1 node changed, added or removed), but without execution figures on both sides the work cannot be compared.');
    });
  });

  describe('a rewrite: skip pagination against keyset pagination (MongoDB)', () => {
    const skip = truthPlan('m05a_skip_pagination', truthFile('m05a_skip_pagination', 'oracle'));
    const keyset = truthPlan('m05b_keyset_pagination', truthFile('m05b_keyset_pagination', 'oracle'));

    it('drops the SKIP, narrows the bounds and says the queries differ', () => {
      const c = compare(skip, keyset);
      assertConsistent(c, skip, keyset);
      assert.equal(byKind(c, 'removed', 'SKIP').length, 1);
      const ix = byKind(c, 'changed', 'IXSCAN')[0]!;
      assert.ok(ix.differences.some((d) => d.startsWith('bounds ')), ix.differences.join('; '));
      const k0 = skip.totals.keysExamined!;
      const k1 = keyset.totals.keysExamined!;
      assert.deepEqual([k1, k0], [20, 5_020]);
      assert.equal(c.verdict, 'After reads 20 keys instead of 5,020 (251x fewer).');
      assert.ok(c.notes.some((n) => /filters differ/.test(n)));
      assert.ok(c.findings.disappeared.some((f) => f.code === 'mongo.skip-reads'));
    });
  });

  describe('PostgreSQL truth plans', () => {
    it('offset pagination: fewer buffers but slower is a mixed result, and the Sort appears', () => {
      const id = 'p10e1_offset_pagination';
      const textbook = truthPlan(id, truthFile(id, 'loser2_textbook'));
      const oracle = truthPlan(id, truthFile(id, 'oracle'));
      const c = compare(textbook, oracle);
      assertConsistent(c, textbook, oracle);
      assert.equal(c.direction, 'mixed');
      assert.equal(byKind(c, 'added', 'Sort').length, 1);
      const scan = byKind(c, 'changed', 'Seq Scan')[0]!;
      assert.equal(node(textbook, scan.beforeId).kind, 'Index Scan');
      const b0 = (textbook.totals.buffers?.sharedHit ?? 0) + (textbook.totals.buffers?.sharedRead ?? 0);
      const b1 = (oracle.totals.buffers?.sharedHit ?? 0) + (oracle.totals.buffers?.sharedRead ?? 0);
      assert.deepEqual([b1, b0], [1_082, 10_043]);
      assert.equal(c.verdict, 'Mixed: after touches 1,082 buffers instead of 10,043 (9.3x fewer) but runs in 18.8 ms instead of 4.71 ms (4x slower) and now sorts.');
      const removed = c.totals.find((d) => d.key === 'rowsRemoved')!;
      assert.equal(removed.after, oracle.nodes.find((n) => n.kind === 'Seq Scan')!.metrics.rowsRemovedByFilter);
    });

    it('offset against keyset pagination with the (a, b) index: the OFFSET finding goes away', () => {
      const offset = truthPlan('p10e1_offset_pagination', truthFile('p10e1_offset_pagination', 'loser2_textbook'));
      const keyset = truthPlan('p10e2_keyset_pagination', truthFile('p10e2_keyset_pagination', 'oracle'));
      const c = compare(offset, keyset);
      assertConsistent(c, offset, keyset);
      assert.equal(c.direction, 'better');
      assert.equal(c.counts.unchanged + c.counts.changed, offset.nodes.length);
      const scan = entryOfAfter(c, 1)!;
      assert.ok(scan.differences.some((d) => d.startsWith('Index Cond ')));
      assert.match(c.verdict, /^After runs in .* and touches \d+ buffers instead of [\d,]+ \(\d+x fewer\)\.$/);
      assert.ok(c.findings.disappeared.some((f) => f.code === 'pg.offset-reads'));
    });

    it('= ANY with a sort against its UNION ALL rewrite: the Sort goes, a Merge Append comes', () => {
      const any = truthPlan('p10d1_any_sort_limit', truthFile('p10d1_any_sort_limit', 'loser2_textbook'));
      const union = truthPlan('p10d2_union_all_rewrite', truthFile('p10d2_union_all_rewrite', 'oracle'));
      const c = compare(any, union);
      assertConsistent(c, any, union);
      assert.equal(byKind(c, 'removed', 'Sort').length, 1);
      assert.equal(byKind(c, 'added', 'Merge Append').length, 1);
      assert.equal(byKind(c, 'removed', 'Bitmap Index Scan').length, 1);
      // The bitmap scan of the one table becomes the first branch's index scan.
      const first = byKind(c, 'changed', 'Index Scan')[0]!;
      assert.equal(node(any, first.beforeId).kind, 'Bitmap Heap Scan');
      assert.match(c.verdict, /and no longer sorts\.$/);
      assert.equal(c.direction, 'better');
    });

    it('an index that changes nothing measurable is "no material change", node by node too', () => {
      const id = 'p10e2_keyset_pagination';
      const runnerUp = truthPlan(id, truthFile(id, 'loser1'));
      const oracle = truthPlan(id, truthFile(id, 'oracle'));
      const c = compare(runnerUp, oracle);
      assert.equal(c.direction, 'same');
      assert.match(c.verdict, /^No material change \(/);
      assert.equal(entryOfAfter(c, 0)!.status, 'unchanged');
      // The index name is the only thing the scan changed: shown as a difference, no material figure.
      const scan = entryOfAfter(c, 1)!;
      assert.equal(scan.status, 'changed');
      assert.ok(scan.deltas.every((d) => !d.material));
    });

    it('every truth pair compares without a refusal and with consistent entries', () => {
      let pairs = 0;
      for (const id of readdirSync(TRUTH)) {
        const files = readdirSync(join(TRUTH, id)).filter((f) => f !== 'case.json');
        const oracle = truthPlan(id, files.find((f) => f.startsWith('oracle'))!);
        for (const f of files.filter((x) => !x.startsWith('oracle'))) {
          const loser = truthPlan(id, f);
          const c = compare(loser, oracle);
          assertConsistent(c, loser, oracle);
          assert.equal(c.matching, 'edit-distance');
          pairs++;
        }
      }
      assert.ok(pairs >= 60, `only ${pairs} pairs`);
    });
  });

  describe('corpus pairs', () => {
    it('an update before and after its index: the COLLSCAN becomes FETCH over IXSCAN', () => {
      const before = corpusPlan('mongosh-update-explain-update-collscan-6.0.js');
      const after = corpusPlan('mongosh-update-explain-update-fetch-ixscan-6.0.js');
      const c = compare(before, after);
      assertConsistent(c, before, after);
      assert.equal(entryOfAfter(c, 0)!.kind, 'UPDATE');
      assert.equal(entryOfAfter(c, 0)!.status, 'unchanged');
      assert.equal(byKind(c, 'added', 'FETCH').length, 1);
      assert.equal(node(before, byKind(c, 'changed', 'IXSCAN')[0]!.beforeId).kind, 'COLLSCAN');
      assert.equal(before.totals.docsExamined, 1_678);
      assert.equal(c.verdict, 'After examines 1 key and 1 document instead of 0 and 1,678 (839x less work) and no longer scans the whole collection.');
    });

    it('one plan printed as text and as JSON: every node unchanged', () => {
      const text = corpusPlan('pg-text-analyze-verbose-buffers-nestloop-bitmap-materialize-never-executed.txt');
      const json = corpusPlan('pg-json-analyze-verbose-buffers-nestloop-bitmap-materialize.json');
      const c = compare(text, json);
      assertConsistent(c, text, json);
      assert.equal(c.counts.unchanged, json.nodes.length);
      assert.equal(c.direction, 'same');
    });

    it('a plan against itself is unchanged everywhere, and the big one stays quick', () => {
      const file = 'pg-json-very-large-plan-hash-joins-190kb.json';
      const a = corpusPlan(file);
      const b = corpusPlan(file);
      const t0 = performance.now();
      const c = compare(a, b);
      const elapsed = performance.now() - t0;
      assert.equal(c.counts.unchanged, a.nodes.length);
      assert.match(c.verdict, /^No material change/);
      assert.deepEqual(c.findings.appeared, []);
      assert.ok(elapsed < 2000, `${Math.round(elapsed)} ms`);
    });

    it('a hash join whose sides swapped still pairs each table with itself', () => {
      const file = 'pg-yaml-analyze-buffers-hash-join-15.yaml';
      const before = corpusPlan(file);
      const after = corpusPlan(file);
      const join = after.nodes.find((n) => n.kind === 'Hash Join' && n.children.length === 2);
      assert.ok(join, 'the plan has a hash join');
      join.children.reverse();
      derive(after);
      const c = compare(before, after);
      assertConsistent(c, before, after);
      for (const e of c.nodes) {
        assert.ok(e.beforeId !== undefined && e.afterId !== undefined, `${e.kind} was not paired`);
        const a = node(before, e.beforeId);
        const b = node(after, e.afterId);
        assert.equal(a.kind, b.kind);
        assert.equal(a.details.relationName, b.details.relationName);
      }
    });

    it('plans of different engines are refused in one sentence', () => {
      const c = comparePlans(corpusPlan('mongosh-update-explain-update-collscan-6.0.js'), corpusPlan('pg-yaml-analyze-buffers-hash-join-15.yaml'));
      assert.equal(c.ok, false);
      if (c.ok) return;
      assert.match(c.refusal, /^The plans come from different engines \(MongoDB before, PostgreSQL after\) and cannot be compared\.$/);
    });

    it('plans past the edit-distance budget are matched top-down and say so', () => {
      const n = Math.ceil(Math.sqrt(MAX_CELLS)) + 100;
      const a = loadPlan(bigPostgresText(n).text);
      const b = loadPlan(bigPostgresText(n).text);
      assert.ok(a.ok && b.ok);
      const c = compare(a.plan, b.plan);
      assert.equal(c.matching, 'top-down');
      assert.equal(c.counts.unchanged, a.plan.nodes.length);
      assert.ok(c.notes.some((x) => /matched top-down/.test(x)));
    });
  });

  describe('deltaText', () => {
    it('writes before → after with the ratio in the metric\'s words', () => {
      const id = 'm01_orders_elemmatch_sort';
      const c = compare(truthPlan(id, truthFile(id, 'loser4')), truthPlan(id, truthFile(id, 'oracle')));
      const keys = c.totals.find((d) => d.key === 'keysExamined')!;
      assert.deepEqual([keys.before, keys.after], [10_222, 10]);
      assert.equal(deltaText(keys), '10,222 → 10 (1,022x fewer)');
      const time = c.totals.find((d) => d.key === 'executionTime')!;
      assert.match(deltaText(time), / ms → /);
    });
  });
});
