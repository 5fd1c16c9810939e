// What the plan tree shows (webview/treeModel.ts) and where the layout puts it (webview/treeLayout.ts),
// in Node: folding, the opening budget, pages of a wide node's children, revealing a node, the active
// node and the search matches, without a browser. Plans are generated PostgreSQL JSON read by the core.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { loadPlan } from '../../src/core/index';
import type { Finding, Plan, PlanNode } from '../../src/core/model';
import { extentOf, laneBoxes, layoutTree, neighbour } from '../../webview/treeLayout';
import { CHILD_PAGE, EXPAND_BUDGET, INITIAL_BUDGET, TreeModel } from '../../webview/treeModel';

/** A PostgreSQL JSON plan node: `kids` below it. */
interface Shape {
  kids?: Shape[];
}

function pgNode(s: Shape, counter: { n: number }): Record<string, unknown> {
  const i = counter.n++;
  const kids = s.kids ?? [];
  const node: Record<string, unknown> = kids.length > 0
    ? { 'Node Type': 'Append', 'Startup Cost': 0, 'Total Cost': 10 + i, 'Plan Rows': 10, 'Plan Width': 4 }
    : { 'Node Type': 'Seq Scan', 'Relation Name': `t${i}`, Alias: `t${i}`, 'Startup Cost': 0, 'Total Cost': 10 + i, 'Plan Rows': 10, 'Plan Width': 4 };
  if (kids.length > 0) node['Plans'] = kids.map((k) => ({ ...pgNode(k, counter), 'Parent Relationship': 'Member' }));
  return node;
}

function planOf(shape: Shape): Plan {
  const r = loadPlan(JSON.stringify([{ Plan: pgNode(shape, { n: 0 }) }]));
  if (!r.ok) throw new Error(r.refusal);
  return r.plan;
}

const chain = (depth: number): Shape => (depth === 0 ? {} : { kids: [chain(depth - 1)] });
const wide = (n: number, each: () => Shape = () => ({})): Shape => ({ kids: Array.from({ length: n }, each) });

function corpus(name: string): Plan {
  const r = loadPlan(readFileSync(join(__dirname, '..', 'fixtures', 'corpus', name), 'utf8'));
  if (!r.ok) throw new Error(r.refusal);
  return r.plan;
}

function byLabel(plan: Plan, test: (n: PlanNode) => boolean): PlanNode {
  const n = plan.nodes.find(test);
  assert.ok(n, 'no such node');
  return n;
}

/** The nodes shown, walked from the root the way the layout walks them. */
function shownInPreorder(m: TreeModel): number[] {
  const out: number[] = [];
  const stack = [m.plan.root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n.id);
    const kids = m.shownChildren(n);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out;
}

describe('webview tree model', () => {
  it('opens about the budget of cards, breadth first, with the root and its children shown', () => {
    // Twelve branches, each a chain 40 deep: 493 nodes.
    const plan = planOf(wide(12, () => chain(40)));
    const m = new TreeModel(plan);
    const shown = m.visibleIds();
    assert.ok(shown.size <= INITIAL_BUDGET + 1 + 12, `${shown.size} cards shown`);
    assert.ok(shown.size > INITIAL_BUDGET - 12, `${shown.size} cards shown`);
    for (const c of plan.root.children) assert.ok(shown.has(c.id));
    // Breadth first: every branch is open to the same depth, give or take one level.
    const depths = plan.root.children.map((c) => {
      let d = 0;
      let n = c;
      while (!m.isCollapsed(n.id) && n.children.length > 0) {
        n = n.children[0]!;
        d++;
      }
      return d;
    });
    assert.ok(Math.max(...depths) - Math.min(...depths) <= 1, `branch depths ${depths.join(',')}`);
    // A collapsed card counts what it hides.
    const folded = plan.nodes.find((n) => shown.has(n.id) && m.isCollapsed(n.id))!;
    assert.ok(folded.children.length > 0);
    assert.equal(m.descendantCount(folded.id), plan.nodes.filter((n) => m.pathTo(n.id).includes(folded.id)).length - 1);
    assert.equal(m.active, plan.root.id);
  });

  it('shows a small plan whole', () => {
    const plan = planOf(wide(3, () => chain(3)));
    const m = new TreeModel(plan);
    assert.equal(m.visibleIds().size, plan.nodes.length);
    assert.equal(plan.nodes.filter((n) => m.isCollapsed(n.id)).length, 0);
  });

  it('folds and unfolds a node, and a folded-away active node gives the activity back to the root', () => {
    const plan = planOf(wide(3, () => chain(3)));
    const m = new TreeModel(plan);
    const branch = plan.root.children[1]!;
    const deep = branch.children[0]!.children[0]!;
    assert.equal(m.select(deep.id), true);
    assert.equal(m.toggle(branch.id), true);
    assert.equal(m.isCollapsed(branch.id), true);
    assert.equal(m.isShown(deep.id), false);
    assert.equal(m.visibleIds().size, plan.nodes.length - 3);
    assert.equal(m.active, plan.root.id, 'the hidden node is no longer active');
    assert.equal(m.toggle(branch.id), true);
    assert.equal(m.isShown(deep.id), true);
    const leaf = byLabel(plan, (n) => n.children.length === 0);
    assert.equal(m.toggle(leaf.id), false, 'a leaf does not fold');
    assert.equal(m.toggle(-1), false);
  });

  it('unfolds a folded node within the expand budget, its own page of children always', () => {
    // Three wide branches of 100 chains: the third does not fit the opening budget.
    const plan = planOf(wide(3, () => wide(100, () => chain(3))));
    const m = new TreeModel(plan);
    const third = plan.root.children[2]!;
    assert.equal(m.isCollapsed(third.id), true);
    assert.equal(m.toggle(third.id), true);
    assert.equal(m.isCollapsed(third.id), false);
    for (const c of third.children.slice(0, CHILD_PAGE)) assert.ok(m.isShown(c.id), `child ${c.id} shown`);
    const below = plan.nodes.filter((n) => n.id !== third.id && m.pathTo(n.id).includes(third.id) && m.isShown(n.id)).length;
    assert.ok(below >= CHILD_PAGE && below <= EXPAND_BUDGET, `${below} cards shown below the unfolded node`);
    assert.equal(m.hiddenChildren(third.id), 100 - CHILD_PAGE);
  });

  it('pages through the children of a wide node, then back', () => {
    const plan = planOf(wide(3000));
    const m = new TreeModel(plan);
    const root = plan.root.id;
    assert.deepEqual(m.childWindow(root), { from: 0, to: CHILD_PAGE });
    assert.equal(m.hiddenChildren(root), 3000 - CHILD_PAGE);
    assert.equal(m.showMoreChildren(root), true);
    assert.deepEqual(m.childWindow(root), { from: 0, to: 2 * CHILD_PAGE });
    assert.equal(m.visibleIds().size, 1 + 2 * CHILD_PAGE);
    while (m.childWindow(root).to < 3000) m.showMoreChildren(root);
    assert.equal(m.hiddenChildren(root), 0);
    assert.equal(m.showMoreChildren(root), false, 'every child is drawn: nothing more to show');
    // A node whose window was moved by a reveal pages back towards the first child.
    const m2 = new TreeModel(plan);
    m2.reveal(plan.root.children[2999]!.id);
    assert.deepEqual(m2.childWindow(root), { from: 2950, to: 3000 });
    assert.equal(m2.showMoreChildren(root), true);
    assert.deepEqual(m2.childWindow(root), { from: 2900, to: 3000 });
    const small = planOf(wide(CHILD_PAGE));
    assert.equal(new TreeModel(small).hiddenChildren(small.root.id), 0);
  });

  it('reveals a node: its page alone, its path open, the siblings off the path folded, itself folded', () => {
    // 3,000 partitions, each with a chain of 3 below it.
    const plan = planOf(wide(3000, () => chain(3)));
    const m = new TreeModel(plan);
    const partition = plan.root.children[1234]!;
    const target = partition.children[0]!;
    assert.equal(m.isShown(target.id), false);
    assert.equal(m.reveal(target.id), true);
    assert.equal(m.isShown(target.id), true);
    assert.deepEqual(m.childWindow(plan.root.id), { from: 1200, to: 1250 });
    assert.equal(m.isCollapsed(target.id), true, 'the revealed node itself stays folded');
    for (const c of plan.root.children.slice(1200, 1250)) {
      if (c.id !== partition.id) assert.equal(m.isCollapsed(c.id), true, `sibling ${c.id} folded`);
    }
    assert.equal(m.isShown(plan.root.children[0]!.id), false, 'the first page is no longer drawn');
    assert.ok(m.visibleIds().size <= 1 + CHILD_PAGE + 1, `${m.visibleIds().size} shown`);
    assert.equal(m.reveal(target.id), false, 'a shown node needs no reveal');
    assert.equal(m.reveal(-1), false);
    // The reset folds back to the opening budget; the page stays where the reveal put it.
    m.reset();
    assert.equal(m.isCollapsed(partition.id), false);
    assert.equal(m.isShown(partition.children[0]!.children[0]!.children[0]!.id), false, 'the opening budget ends above the leaves');
    assert.deepEqual(m.childWindow(plan.root.id), { from: 1200, to: 1250 });
  });

  it('keeps the active node and the search matches', () => {
    const plan = planOf(wide(4));
    const m = new TreeModel(plan);
    const c = plan.root.children[2]!;
    assert.equal(m.select(c.id), true);
    assert.equal(m.active, c.id);
    assert.equal(m.select(999), false);
    assert.equal(m.active, c.id, 'an unknown id leaves the active node');
    m.setMatches([c.id, plan.root.id]);
    assert.equal(m.isMatch(c.id), true);
    assert.equal(m.isMatch(plan.root.children[0]!.id), false);
    m.setMatches([]);
    assert.equal(m.isMatch(c.id), false);
  });

  it('marks a node with the count and worst severity of its findings', () => {
    const plan = planOf(wide(3));
    const [a, b] = plan.root.children;
    const f = (nodeId: number | undefined, severity: Finding['severity'], good?: boolean): Finding => ({ code: 'x', severity, nodeId, title: 't', message: 'm', numbers: {}, ...(good ? { good } : {}) });
    const m = new TreeModel(plan, [f(a!.id, 'low'), f(a!.id, 'high'), f(a!.id, 'medium'), f(b!.id, 'info', true), f(undefined, 'high'), f(4242, 'high')]);
    assert.deepEqual(m.mark(a!.id), { count: 3, worst: 'high', good: false });
    assert.deepEqual(m.mark(b!.id), { count: 1, worst: 'info', good: true });
    assert.equal(m.mark(plan.root.id), undefined);
  });

  it('knows the shard of every node of a sharded MongoDB plan', () => {
    const plan = corpus('mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json');
    const m = new TreeModel(plan);
    const shards = plan.nodes.filter((n) => n.details.shardName !== undefined);
    assert.ok(shards.length >= 2);
    for (const s of shards) {
      for (const n of plan.nodes) if (m.pathTo(n.id).includes(s.id)) assert.equal(m.shardOf(n.id), s.id);
    }
    assert.equal(m.shardOf(plan.root.id), undefined);
  });

  it('says a node is shown exactly when the walk from the root reaches it, after any folding, paging and reveal', () => {
    const plan = planOf({ kids: [wide(130, () => chain(2)), chain(30), wide(60, () => wide(3))] });
    const ids = plan.nodes.map((n) => n.id);
    const step = fc.oneof(
      fc.record({ op: fc.constant('toggle' as const), id: fc.constantFrom(...ids) }),
      fc.record({ op: fc.constant('more' as const), id: fc.constantFrom(...ids) }),
      fc.record({ op: fc.constant('reveal' as const), id: fc.constantFrom(...ids) }),
      fc.record({ op: fc.constant('select' as const), id: fc.constantFrom(...ids) }),
      fc.record({ op: fc.constant('reset' as const), id: fc.constant(0) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 25 }), (steps) => {
        const m = new TreeModel(plan);
        for (const s of steps) {
          if (s.op === 'toggle') m.toggle(s.id);
          else if (s.op === 'more') m.showMoreChildren(s.id);
          else if (s.op === 'reveal') {
            m.reveal(s.id);
            assert.ok(m.isShown(s.id), `node ${s.id} revealed`);
          } else if (s.op === 'select') {
            if (m.isShown(s.id)) m.select(s.id);
          } else m.reset();
          const shown = m.visibleIds();
          for (const id of ids) assert.equal(m.isShown(id), shown.has(id), `node ${id}`);
          assert.ok(shown.has(m.active), 'the active node is shown');
          assert.ok(shown.has(plan.root.id));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('lays out exactly the shown nodes, in preorder, without two cards of a level overlapping', () => {
    const plan = planOf({ kids: [wide(70, () => chain(2)), chain(6), wide(5, () => wide(3))] });
    const m = new TreeModel(plan);
    m.reveal(plan.root.children[0]!.children[66]!.children[0]!.id);
    const size = (n: PlanNode) => ({ w: 150 + (n.id % 5) * 20, h: 60 + (n.id % 3) * 15 });
    const { order, byId } = layoutTree(m, size);
    assert.deepEqual(order.map((l) => l.node.id), shownInPreorder(m));
    assert.equal(byId.size, order.length);
    for (const l of order) {
      if (l.parent) assert.ok(l.y >= l.parent.y + l.parent.geom.h, `card ${l.node.id} sits below its parent`);
      const right = neighbour(order, l, 1);
      if (right) assert.ok(right.x >= l.x + l.geom.w, `card ${right.node.id} overlaps ${l.node.id}`);
    }
    const e = extentOf(order, false);
    for (const l of order) assert.ok(l.x >= e.x0 && l.x + l.geom.w <= e.x1 && l.y >= e.y0 && l.y + l.geom.h <= e.y1);
  });

  it('draws a lane around each shard subtree, apart from the lanes of the other shards', () => {
    const plan = corpus('mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json');
    const m = new TreeModel(plan);
    const { order } = layoutTree(m, (n) => ({ w: 160 + (n.id % 4) * 30, h: 70 }));
    const lanes = laneBoxes(order);
    assert.deepEqual(lanes.map((l) => l.id).sort((a, b) => a - b), plan.nodes.filter((n) => n.details.shardName !== undefined).map((n) => n.id).sort((a, b) => a - b));
    for (const lane of lanes) {
      for (const l of order.filter((o) => m.shardOf(o.node.id) === lane.id)) {
        assert.ok(l.x > lane.x0 && l.x + l.geom.w < lane.x1 && l.y > lane.y0 && l.y + l.geom.h < lane.y1, `card ${l.node.id} inside the lane of shard ${lane.name}`);
      }
    }
    const byX = [...lanes].sort((a, b) => a.x0 - b.x0);
    for (let i = 1; i < byX.length; i++) assert.ok(byX[i]!.x0 > byX[i - 1]!.x1, `lanes ${byX[i - 1]!.name} and ${byX[i]!.name} overlap`);
    assert.ok(extentOf(order, true).x0 < extentOf(order, false).x0, 'the extent makes room for the lanes');
  });
});
