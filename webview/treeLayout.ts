// Where the cards the tree model shows go: d3-flextree places cards of different sizes, then the edges
// between them, the shard lanes around subtrees and the extent of it all are plain geometry. No DOM:
// tree.ts draws what this returns. The reference brings the package's types (it ships none) to the
// Node tests that compile this file under tsconfig.json as well.

// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- an ambient module's types are not importable
/// <reference path="./d3-flextree.d.ts" />
import { flextree, type FlexHierarchyNode } from 'd3-flextree';
import type { PlanNode } from '../src/core/view';
import type { TreeModel } from './treeModel';

const GAP_Y = 38;
const GAP_X = 16;
const LANE_GAP = 44;

/** What a card needs for its place: its size. */
export interface Box {
  w: number;
  h: number;
}

/** A card placed: its top-left corner, and the placed cards above and below it. */
export interface Laid<B extends Box = Box> {
  node: PlanNode;
  x: number;
  y: number;
  geom: B;
  parent?: Laid<B>;
  children: Laid<B>[];
  depth: number;
}

export interface TreeLayout<B extends Box> {
  /** The placed cards in preorder (the root first). */
  order: Laid<B>[];
  byId: Map<number, Laid<B>>;
}

/** A band behind a shard's subtree. */
export interface LaneBox {
  id: number;
  name: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** Places the nodes the model shows; `geomOf` gives each card's size. */
export function layoutTree<B extends Box>(model: TreeModel, geomOf: (n: PlanNode) => B): TreeLayout<B> {
  const layout = flextree<PlanNode>({
    children: (n) => {
      const kids = model.shownChildren(n);
      return kids.length === 0 ? null : (kids as PlanNode[]);
    },
    nodeSize: (h) => {
      const g = geomOf(h.data);
      return [g.w + GAP_X, g.h + GAP_Y];
    },
    spacing: (a, b) => (model.shardOf(a.data.id) !== model.shardOf(b.data.id) ? LANE_GAP : a.parent === b.parent ? 0 : GAP_X / 2),
  });
  const root = layout.hierarchy(model.plan.root);
  layout(root);
  const byId = new Map<number, Laid<B>>();
  const order: Laid<B>[] = [];
  // Preorder without recursion.
  const stack: { h: FlexHierarchyNode<PlanNode>; parent: Laid<B> | undefined }[] = [{ h: root, parent: undefined }];
  while (stack.length > 0) {
    const { h, parent } = stack.pop()!;
    const geom = geomOf(h.data);
    const l: Laid<B> = { node: h.data, x: h.x - geom.w / 2, y: h.y, geom, children: [], depth: h.depth };
    if (parent) {
      l.parent = parent;
      parent.children.push(l);
    }
    byId.set(h.data.id, l);
    order.push(l);
    const kids = h.children ?? [];
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ h: kids[i]!, parent: l });
  }
  return { order, byId };
}

/** Rounded bands behind shard subtrees: each shard node's box grown to hold its placed subtree. */
export function laneBoxes(laid: Iterable<Laid>): LaneBox[] {
  const lanes: LaneBox[] = [];
  for (const l of laid) {
    const name = l.node.details.shardName;
    if (name === undefined) continue;
    let x0 = l.x;
    let x1 = l.x + l.geom.w;
    let y1 = l.y + l.geom.h;
    const stack = [...l.children];
    while (stack.length > 0) {
      const c = stack.pop()!;
      x0 = Math.min(x0, c.x);
      x1 = Math.max(x1, c.x + c.geom.w);
      y1 = Math.max(y1, c.y + c.geom.h);
      stack.push(...c.children);
    }
    lanes.push({ id: l.node.id, name, x0: x0 - 14, x1: x1 + 14, y0: l.y - 14, y1: y1 + 34 });
  }
  return lanes;
}

/** The box around every placed card (and the lanes' margins when there are lanes). */
export function extentOf(order: readonly Laid[], hasLanes: boolean): { x0: number; y0: number; x1: number; y1: number } {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const l of order) {
    x0 = Math.min(x0, l.x);
    y0 = Math.min(y0, l.y);
    x1 = Math.max(x1, l.x + l.geom.w);
    y1 = Math.max(y1, l.y + l.geom.h + 10);
  }
  if (hasLanes) {
    y0 -= 16;
    x0 -= 18;
    x1 += 18;
    y1 += 36;
  }
  return { x0, y0, x1, y1 };
}

/** The curve from a parent's bottom edge to a child's top edge. */
export function edgePath(p: Laid, c: Laid): string {
  const x0 = p.x + p.geom.w / 2;
  const y0 = p.y + p.geom.h;
  const x1 = c.x + c.geom.w / 2;
  const y1 = c.y;
  const my = (y0 + y1) / 2;
  return `M${x0},${y0}C${x0},${my} ${x1},${my} ${x1},${y1}`;
}

/** Edge width by rows flowing up from the child, on a log scale against the plan's maximum. */
export function edgeWidth(rows: number | undefined, maxRows: number): number {
  if (rows === undefined || !(maxRows > 0)) return 1.5;
  return Math.round((1.5 + 10 * (Math.log1p(Math.max(0, rows)) / Math.log1p(maxRows))) * 10) / 10;
}

/** The nearest placed card on the same level as `l`, to its left (-1) or right (1): a sibling first. */
export function neighbour<B extends Box>(order: readonly Laid<B>[], l: Laid<B>, dir: -1 | 1): Laid<B> | undefined {
  if (l.parent) {
    const sibs = l.parent.children;
    const i = sibs.indexOf(l);
    const s = sibs[i + dir];
    if (s) return s;
  }
  // No sibling that way: the nearest card on the same level.
  const cx = l.x + l.geom.w / 2;
  let best: Laid<B> | undefined;
  let bestDist = Infinity;
  for (const o of order) {
    if (o.depth !== l.depth || o === l) continue;
    const ox = o.x + o.geom.w / 2;
    const dist = (ox - cx) * dir;
    if (dist > 0 && dist < bestDist) {
      best = o;
      bestDist = dist;
    }
  }
  return best;
}
