// What the plan tree shows, apart from how it is drawn: which nodes are folded, which page of a wide
// node's children is open, which node is active, which match a search, and what revealing a node
// opens. Pure (no DOM, no d3), so the rules are tested in Node (test/unit/webview-tree-model.test.ts);
// treeLayout.ts places what this says is visible and tree.ts draws it.

import type { Finding, Plan, PlanNode, Severity } from '../src/core/view';

/**
 * Cards shown when a plan opens; deeper or wider parts start collapsed. A card costs about a millisecond
 * to build, measure and lay out the first time, and a first view cannot show more than this many
 * readably: with 150 a 10,000-node plan is interactive in well under a second.
 */
export const INITIAL_BUDGET = 150;
/** Cards revealed at most by one expand of a collapsed node (its direct children always show). */
export const EXPAND_BUDGET = 150;
/**
 * Children drawn at first below a wide node (an Append or Gather over thousands of partitions, an OR of
 * thousands of branches); the rest wait behind a "+N more" button under the card, a page per click.
 */
export const CHILD_PAGE = 50;

/** The findings on one node, for its badge. */
export interface FindingMark {
  count: number;
  worst: Severity;
  good: boolean;
}

/** The children of a wide node that are drawn: [from, to). */
export interface ChildWindow {
  from: number;
  to: number;
}

const SEVERITY_RANK: Record<Severity, number> = { high: 3, medium: 2, low: 1, info: 0 };

export class TreeModel {
  private readonly byId = new Map<number, PlanNode>();
  private readonly parentOf = new Map<number, number>();
  private readonly descendants = new Map<number, number>();
  private readonly shards = new Map<number, number>();
  private readonly marks = new Map<number, FindingMark>();
  private readonly collapsed = new Set<number>();
  /** Wide nodes: the window of their children that is drawn (absent: the first CHILD_PAGE). */
  private readonly windows = new Map<number, ChildWindow>();
  private matches = new Set<number>();
  private activeId: number;

  /** A plan as it opens: about INITIAL_BUDGET cards, breadth first, its root active; `findings` mark their nodes. */
  constructor(
    readonly plan: Plan,
    findings: readonly Finding[] = [],
  ) {
    this.activeId = plan.root.id;
    // Index the tree without recursion: plans can be thousands of levels deep.
    const post: PlanNode[] = [];
    const stack: { n: PlanNode; shard: number | undefined }[] = [{ n: plan.root, shard: undefined }];
    while (stack.length > 0) {
      const { n, shard } = stack.pop()!;
      this.byId.set(n.id, n);
      post.push(n);
      const own = n.details.shardName !== undefined ? n.id : shard;
      if (own !== undefined) this.shards.set(n.id, own);
      for (const c of n.children) {
        this.parentOf.set(c.id, n.id);
        stack.push({ n: c, shard: own });
      }
    }
    for (let i = post.length - 1; i >= 0; i--) {
      const n = post[i]!;
      let d = 0;
      for (const c of n.children) d += 1 + (this.descendants.get(c.id) ?? 0);
      this.descendants.set(n.id, d);
    }
    for (const f of findings) {
      if (f.nodeId === undefined || !this.byId.has(f.nodeId)) continue;
      const m = this.marks.get(f.nodeId);
      if (!m) this.marks.set(f.nodeId, { count: 1, worst: f.severity, good: f.good === true });
      else {
        m.count++;
        if (SEVERITY_RANK[f.severity] > SEVERITY_RANK[m.worst]) m.worst = f.severity;
        m.good = m.good && f.good === true;
      }
    }
    this.applyBudget(plan.root.id, INITIAL_BUDGET);
  }

  node(id: number): PlanNode | undefined {
    return this.byId.get(id);
  }

  parent(id: number): number | undefined {
    return this.parentOf.get(id);
  }

  /** Nodes below a node, at any depth (what a collapsed card's toggle counts). */
  descendantCount(id: number): number {
    return this.descendants.get(id) ?? 0;
  }

  /** The shard node whose subtree holds a node, if any: nodes of different shards are laid apart. */
  shardOf(id: number): number | undefined {
    return this.shards.get(id);
  }

  /** The findings on a node, or undefined when it has none. */
  mark(id: number): FindingMark | undefined {
    return this.marks.get(id);
  }

  // ---- selection and search --------------------------------------------------------------------

  /** The active node: the one the keyboard moves from and the side panel describes. */
  get active(): number {
    return this.activeId;
  }

  /** Makes a node of this plan active; false for an id the plan does not have. */
  select(id: number): boolean {
    if (!this.byId.has(id)) return false;
    this.activeId = id;
    return true;
  }

  setMatches(ids: Iterable<number>): void {
    this.matches = new Set(ids);
  }

  isMatch(id: number): boolean {
    return this.matches.has(id);
  }

  // ---- folding and paging ----------------------------------------------------------------------

  isCollapsed(id: number): boolean {
    return this.collapsed.has(id);
  }

  /** The drawn window of a node's children; all of them when the node is not wide. */
  childWindow(id: number): ChildWindow {
    const n = this.byId.get(id);
    const count = n?.children.length ?? 0;
    if (count <= CHILD_PAGE) return { from: 0, to: count };
    return this.windows.get(id) ?? { from: 0, to: CHILD_PAGE };
  }

  /** The children drawn below a node: none when it is collapsed or a leaf, else its open page. */
  shownChildren(n: PlanNode): readonly PlanNode[] {
    if (n.children.length === 0 || this.collapsed.has(n.id)) return [];
    return this.drawnChildren(n);
  }

  /** Children of a wide node still waiting behind its "+N more" button. */
  hiddenChildren(id: number): number {
    const n = this.byId.get(id);
    if (!n || this.collapsed.has(id)) return 0;
    return n.children.length - this.drawnChildren(n).length;
  }

  /** Opens the next page of a wide node's children (or the previous one once the last page shows); false when nothing changed. */
  showMoreChildren(id: number): boolean {
    const n = this.byId.get(id);
    if (!n || this.hiddenChildren(id) === 0) return false;
    const w = this.windows.get(id) ?? { from: 0, to: CHILD_PAGE };
    if (w.to < n.children.length) this.windows.set(id, { from: w.from, to: Math.min(n.children.length, w.to + CHILD_PAGE) });
    else this.windows.set(id, { from: Math.max(0, w.from - CHILD_PAGE), to: w.to });
    this.keepActiveShown();
    return true;
  }

  /** Collapses an expanded node or expands a collapsed one (within the expand budget); false for a leaf. */
  toggle(id: number): boolean {
    const n = this.byId.get(id);
    if (!n || n.children.length === 0) return false;
    if (this.collapsed.has(id)) {
      this.collapsed.delete(id);
      this.applyBudget(id, EXPAND_BUDGET);
    } else {
      this.collapsed.add(id);
    }
    this.keepActiveShown();
    return true;
  }

  /** Back to the folding the plan opened with (the pages of wide nodes stay where they are). */
  reset(): void {
    this.collapsed.clear();
    this.applyBudget(this.plan.root.id, INITIAL_BUDGET);
    this.keepActiveShown();
  }

  /**
   * Opens the ancestors of a node so it is drawn, showing the siblings off its path collapsed, and the
   * node itself collapsed. False when the node is already shown or not in the plan.
   */
  reveal(id: number): boolean {
    if (!this.byId.has(id)) return false;
    const before = this.visibleIds();
    if (before.has(id)) return false;
    const path = this.pathTo(id);
    for (let i = 0; i < path.length - 1; i++) {
      const a = path[i]!;
      const next = path[i + 1]!;
      const parent = this.byId.get(a)!;
      const at = parent.children.findIndex((c) => c.id === next);
      if (parent.children.length > CHILD_PAGE) {
        // The page that holds the node, alone: drawing every child before it could be thousands of cards.
        const w = this.windows.get(a) ?? { from: 0, to: CHILD_PAGE };
        if (at < w.from || at >= w.to) {
          const from = Math.floor(at / CHILD_PAGE) * CHILD_PAGE;
          this.windows.set(a, { from, to: Math.min(parent.children.length, from + CHILD_PAGE) });
        }
      }
      if (this.collapsed.has(a) || !before.has(next)) {
        this.collapsed.delete(a);
        for (const c of parent.children) {
          if (c.id !== next && c.children.length > 0 && !before.has(c.id)) this.collapsed.add(c.id);
        }
      }
    }
    const target = this.byId.get(id)!;
    if (target.children.length > 0) this.collapsed.add(id);
    this.keepActiveShown();
    return true;
  }

  /** Whether a node is drawn: every ancestor expanded, and each on its parent's open page. */
  isShown(id: number): boolean {
    if (!this.byId.has(id)) return false;
    let child = id;
    for (let p = this.parentOf.get(child); p !== undefined; child = p, p = this.parentOf.get(p)) {
      if (this.collapsed.has(p)) return false;
      const parent = this.byId.get(p)!;
      if (parent.children.length > CHILD_PAGE) {
        const at = parent.children.findIndex((c) => c.id === child);
        const w = this.childWindow(p);
        if (at < w.from || at >= w.to) return false;
      }
    }
    return true;
  }

  /** Every node drawn now. */
  visibleIds(): Set<number> {
    const out = new Set<number>();
    const stack = [this.plan.root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      out.add(n.id);
      for (const c of this.shownChildren(n)) stack.push(c);
    }
    return out;
  }

  /** The ids from the root down to a node. */
  pathTo(id: number): number[] {
    const path = [id];
    let cur = this.parentOf.get(id);
    while (cur !== undefined) {
      path.push(cur);
      cur = this.parentOf.get(cur);
    }
    return path.reverse();
  }

  /** The children drawn below an expanded node: all of them, or the open page of a wide node. */
  private drawnChildren(n: PlanNode): PlanNode[] {
    if (n.children.length <= CHILD_PAGE) return n.children;
    const w = this.windows.get(n.id) ?? { from: 0, to: CHILD_PAGE };
    return n.children.slice(w.from, w.to);
  }

  /** A folded-away active node gives the activity back to the root. */
  private keepActiveShown(): void {
    if (!this.isShown(this.activeId)) this.activeId = this.plan.root.id;
  }

  /**
   * Marks nodes collapsed breadth-first below `rootId` so that at most about `budget` cards appear
   * under it. The root's own children always show: the user asked for them.
   */
  private applyBudget(rootId: number, budget: number): void {
    let shown = 0;
    const queue = [rootId];
    for (let qi = 0; qi < queue.length; qi++) {
      const id = queue[qi]!;
      const n = this.byId.get(id)!;
      if (n.children.length === 0) continue;
      if (id !== rootId && this.collapsed.has(id)) continue;
      const kids = this.drawnChildren(n);
      if (id !== rootId && shown + kids.length > budget) {
        this.collapsed.add(id);
        continue;
      }
      shown += kids.length;
      for (const c of kids) queue.push(c.id);
    }
  }
}
