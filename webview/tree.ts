// The plan tree: node cards laid out with d3-flextree (cards differ in size), drawn in SVG, with zoom,
// pan, collapse, heat colouring and keyboard navigation. Only expanded nodes are laid out and drawn,
// and a fresh plan opens with a budget of visible cards, so plans of many thousands of nodes stay
// responsive. All plan text is set with d3's .text(), never parsed as markup.

import { select, type Selection } from 'd3-selection';
import { zoom, zoomIdentity, type ZoomBehavior, type ZoomTransform } from 'd3-zoom';
import { flextree, type FlexHierarchyNode } from 'd3-flextree';
import type { Finding, Plan, PlanNode, Severity } from '../src/core/view';
import { cardSpec, heatFraction, type CardRow, type CardSpec, type HeatMetric, type Level } from './cards';
import { formatCompact, formatCount, formatRatio } from '../src/core/view';
import { Measurer, FONT_PX } from './measure';

const SVG_NS = 'http://www.w3.org/2000/svg';
const PAD_X = 9;
const MIN_W = 150;
const MAX_W = 340;
const ROW_H = 15;
const GAP_Y = 38;
const GAP_X = 16;
const LANE_GAP = 44;
const HEAT_BAR_H = 4;
const WASTE_H = 19;

/** Below this zoom cards show their overview text instead of their rows. */
const FAR_ZOOM = 0.65;
/** The opening view never zooms out further than this; a wider tree opens on its root. */
const MIN_OPEN_ZOOM = 0.3;
const FAR_TITLE_PX = 26;
const FAR_DETAIL_PX = 21;
const FAR_MIN_PX = 17;

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

type G = Selection<SVGGElement, unknown, null, undefined>;

interface RowGeom {
  label: string;
  value: string;
  level: Level;
  y: number;
}

/** A card's text cut to its width, and where each line sits. */
export interface CardGeom {
  w: number;
  h: number;
  spec: CardSpec;
  tag?: string;
  tagY: number;
  title: string;
  titleY: number;
  subtitle?: string;
  subY: number;
  rows: RowGeom[];
  wasteY?: number;
  wasteText?: string;
  ratioText?: string;
  tooltip: string;
  /** Overview text for low zoom: the title and one figure, in large type. */
  farTitle: string;
  farTitlePx: number;
  farDetail?: string;
  farLevel: Level;
  decoration?: CardDecoration;
}

interface Laid {
  node: PlanNode;
  x: number;
  y: number;
  geom: CardGeom;
  parent?: Laid;
  children: Laid[];
  depth: number;
}

interface FindingMark {
  count: number;
  worst: Severity;
  good: boolean;
}

const SEVERITY_RANK: Record<Severity, number> = { high: 3, medium: 2, low: 1, info: 0 };

/** What a caller adds to a node's card: the comparison marks a card changed, added or removed. */
export interface CardDecoration {
  /** A class on the card's group, for the stylesheet. */
  className?: string;
  /** A word shown above the title, before the card's own tag. */
  tag?: string;
  /** Rows drawn after the card's own. */
  rows?: CardRow[];
  /** Words appended to the card's accessible name. */
  label?: string;
}

export interface TreeCallbacks {
  /** The active node changed by click, keyboard or a finding link. */
  onSelect(node: PlanNode): void;
  /** The user double-clicked a node. */
  onOpen(node: PlanNode): void;
  /** The user clicked a node's card (not its fold toggle): the view shows the node's details. */
  onClickNode?(node: PlanNode): void;
  /** Extra marks for a node's card; asked once per node and plan. */
  decorate?(node: PlanNode): CardDecoration | undefined;
}

function heatClass(frac: number): string {
  if (!(frac > 0)) return 'heat-0';
  if (frac < 0.05) return 'heat-0';
  if (frac < 0.2) return 'heat-1';
  if (frac < 0.45) return 'heat-2';
  if (frac < 0.75) return 'heat-3';
  return 'heat-4';
}

export class TreeView {
  readonly element: SVGSVGElement;
  private readonly svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private readonly viewport: G;
  private readonly lanesG: G;
  private readonly edgesG: G;
  private readonly cardsG: G;
  private readonly zoomer: ZoomBehavior<SVGSVGElement, unknown>;
  private transform: ZoomTransform = zoomIdentity;
  private measurer: Measurer | undefined;

  private plan: Plan | undefined;
  private byId = new Map<number, PlanNode>();
  private parentOf = new Map<number, number>();
  private descendants = new Map<number, number>();
  private shardOf = new Map<number, number>();
  private geoms = new Map<number, CardGeom>();
  private laid = new Map<number, Laid>();
  private order: Laid[] = [];
  private collapsed = new Set<number>();
  /** Wide nodes: the window of their children that is drawn, [from, to) (absent: the first CHILD_PAGE). */
  private shownChildren = new Map<number, { from: number; to: number }>();
  private marks = new Map<number, FindingMark>();
  private matches = new Set<number>();
  private heat: HeatMetric = 'none';
  private activeId = 0;
  private highlighted: number | undefined;
  private highlightTimer: number | undefined;

  constructor(
    container: HTMLElement,
    private readonly cb: TreeCallbacks,
  ) {
    this.element = document.createElementNS(SVG_NS, 'svg');
    this.element.setAttribute('class', 'tree');
    this.element.setAttribute('role', 'tree');
    this.element.setAttribute('aria-label', 'Query plan');
    container.appendChild(this.element);
    this.svg = select(this.element);
    this.viewport = this.svg.append('g').attr('class', 'viewport');
    this.lanesG = this.viewport.append('g').attr('class', 'lanes');
    this.edgesG = this.viewport.append('g').attr('class', 'edges');
    this.cardsG = this.viewport.append('g').attr('class', 'cards');
    this.zoomer = zoom<SVGSVGElement, unknown>()
      .scaleExtent([0.03, 3])
      .on('zoom', (ev: { transform: ZoomTransform }) => {
        this.transform = ev.transform;
        this.viewport.attr('transform', ev.transform.toString());
        // Zoomed out, card text is too small to read: cards switch to one large title and one figure.
        this.element.classList.toggle('far', ev.transform.k < FAR_ZOOM);
      });
    this.svg.call(this.zoomer).on('dblclick.zoom', null);
    this.element.addEventListener('keydown', (ev) => this.onKey(ev));
    this.element.addEventListener('click', (ev) => this.onClick(ev));
    this.element.addEventListener('dblclick', (ev) => {
      const id = this.cardIdOf(ev.target);
      if (id !== undefined && !(ev.target as Element).closest('.toggle')) this.cb.onOpen(this.byId.get(id)!);
    });
    this.element.addEventListener('focusin', (ev) => {
      const id = this.cardIdOf(ev.target);
      if (id !== undefined && id !== this.activeId) this.activate(id, false);
    });
  }

  private fontFamily(): string {
    const cs = getComputedStyle(this.element);
    return cs.getPropertyValue('--qpi-font').trim() || cs.fontFamily || 'sans-serif';
  }

  /** Shows a plan; `findings` put badges on their nodes. Resets collapse state and view. */
  setPlan(plan: Plan, findings: Finding[], heat: HeatMetric): void {
    this.plan = plan;
    this.measurer = new Measurer(this.fontFamily());
    this.byId.clear();
    this.parentOf.clear();
    this.descendants.clear();
    this.shardOf.clear();
    this.geoms.clear();
    this.collapsed.clear();
    this.shownChildren.clear();
    this.matches.clear();
    this.marks.clear();
    this.heat = heat;
    this.activeId = plan.root.id;
    this.highlighted = undefined;
    // Index the tree without recursion: plans can be thousands of levels deep.
    const post: PlanNode[] = [];
    const stack: { n: PlanNode; shard: number | undefined }[] = [{ n: plan.root, shard: undefined }];
    while (stack.length > 0) {
      const { n, shard } = stack.pop()!;
      this.byId.set(n.id, n);
      post.push(n);
      const own = n.details.shardName !== undefined ? n.id : shard;
      if (own !== undefined) this.shardOf.set(n.id, own);
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
    this.cardsG.selectAll('*').remove();
    this.edgesG.selectAll('*').remove();
    this.lanesG.selectAll('*').remove();
    this.render();
    this.initialView();
  }

  get currentPlan(): Plan | undefined {
    return this.plan;
  }

  node(id: number): PlanNode | undefined {
    return this.byId.get(id);
  }

  get active(): number {
    return this.activeId;
  }

  /** Number of cards drawn now. */
  get visibleCount(): number {
    return this.order.length;
  }

  isVisible(id: number): boolean {
    return this.laid.has(id);
  }

  isCollapsed(id: number): boolean {
    return this.collapsed.has(id);
  }

  setHeat(metric: HeatMetric): void {
    this.heat = metric;
    this.updateCards(this.cardsG.selectAll<SVGGElement, Laid>('g.card'));
  }

  setMatches(ids: Iterable<number>): void {
    this.matches = new Set(ids);
    this.cardsG.selectAll<SVGGElement, Laid>('g.card').classed('match', (d) => this.matches.has(d.node.id));
  }

  // ---- collapse state --------------------------------------------------------------------------

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

  /** The children drawn below an expanded node: all of them, or the first pages of a wide node. */
  private drawnChildren(n: PlanNode): PlanNode[] {
    if (n.children.length <= CHILD_PAGE) return n.children;
    const w = this.shownChildren.get(n.id) ?? { from: 0, to: CHILD_PAGE };
    return n.children.slice(w.from, w.to);
  }

  /** Children of a wide node still waiting behind its "+N more" button. */
  hiddenChildren(id: number): number {
    const n = this.byId.get(id);
    if (!n || this.collapsed.has(id)) return 0;
    return n.children.length - this.drawnChildren(n).length;
  }

  /** Draws the next page of a wide node's children (or the previous one once the last page shows). */
  showMoreChildren(id: number): void {
    const n = this.byId.get(id);
    if (!n || this.hiddenChildren(id) === 0) return;
    const w = this.shownChildren.get(id) ?? { from: 0, to: CHILD_PAGE };
    if (w.to < n.children.length) this.shownChildren.set(id, { from: w.from, to: Math.min(n.children.length, w.to + CHILD_PAGE) });
    else this.shownChildren.set(id, { from: Math.max(0, w.from - CHILD_PAGE), to: w.to });
    this.render();
  }

  private visibleIds(): Set<number> {
    const out = new Set<number>();
    if (!this.plan) return out;
    const stack = [this.plan.root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      out.add(n.id);
      if (!this.collapsed.has(n.id)) for (const c of this.drawnChildren(n)) stack.push(c);
    }
    return out;
  }

  private pathTo(id: number): number[] {
    const path = [id];
    let cur = this.parentOf.get(id);
    while (cur !== undefined) {
      path.push(cur);
      cur = this.parentOf.get(cur);
    }
    return path.reverse();
  }

  /** Expands the ancestors of a node so it is drawn, showing off-path siblings collapsed. */
  private reveal(id: number): void {
    const before = this.visibleIds();
    if (before.has(id)) return;
    const path = this.pathTo(id);
    for (let i = 0; i < path.length - 1; i++) {
      const a = path[i]!;
      const next = path[i + 1]!;
      const parent = this.byId.get(a)!;
      const at = parent.children.findIndex((c) => c.id === next);
      if (parent.children.length > CHILD_PAGE) {
        // The page that holds the node, alone: drawing every child before it could be thousands of cards.
        const w = this.shownChildren.get(a) ?? { from: 0, to: CHILD_PAGE };
        if (at < w.from || at >= w.to) {
          const from = Math.floor(at / CHILD_PAGE) * CHILD_PAGE;
          this.shownChildren.set(a, { from, to: Math.min(parent.children.length, from + CHILD_PAGE) });
        }
      }
      if (this.collapsed.has(a) || !before.has(next)) {
        this.collapsed.delete(a);
        for (const c of this.byId.get(a)!.children) {
          if (c.id !== next && c.children.length > 0 && !before.has(c.id)) this.collapsed.add(c.id);
        }
      }
    }
    const target = this.byId.get(id)!;
    if (target.children.length > 0) this.collapsed.add(id);
  }

  /** Collapses an expanded node or expands a collapsed one (within the expand budget). */
  toggle(id: number): void {
    const n = this.byId.get(id);
    if (!n || n.children.length === 0) return;
    if (this.collapsed.has(id)) {
      this.collapsed.delete(id);
      this.applyBudget(id, EXPAND_BUDGET);
    } else {
      this.collapsed.add(id);
    }
    this.render();
    this.ensureVisible(id);
  }

  /** Back to the state and view the plan opened with. */
  resetCollapse(): void {
    if (!this.plan) return;
    this.collapsed.clear();
    this.applyBudget(this.plan.root.id, INITIAL_BUDGET);
    this.render();
    this.initialView();
  }

  // ---- geometry --------------------------------------------------------------------------------

  /** The card geometry of a node of this plan (cached), or of another plan with a forced width. */
  geom(node: PlanNode, plan: Plan = this.plan!, forceWidth?: number): CardGeom {
    const cached = forceWidth === undefined ? this.geoms.get(node.id) : undefined;
    if (cached) return cached;
    const g = computeGeom(node, plan, this.measurer!, this.marks.has(node.id), forceWidth, this.cb.decorate?.(node));
    if (forceWidth === undefined) this.geoms.set(node.id, g);
    return g;
  }

  private layout(): void {
    const plan = this.plan!;
    const layout = flextree<PlanNode>({
      children: (n) => (this.collapsed.has(n.id) || n.children.length === 0 ? null : this.drawnChildren(n)),
      nodeSize: (h) => {
        const g = this.geom(h.data);
        return [g.w + GAP_X, g.h + GAP_Y];
      },
      spacing: (a, b) => (this.shardOf.get(a.data.id) !== this.shardOf.get(b.data.id) ? LANE_GAP : a.parent === b.parent ? 0 : GAP_X / 2),
    });
    const root = layout.hierarchy(plan.root);
    layout(root);
    this.laid.clear();
    this.order = [];
    const visit = (h: FlexHierarchyNode<PlanNode>, parent: Laid | undefined): Laid => {
      const geom = this.geom(h.data);
      const l: Laid = { node: h.data, x: h.x - geom.w / 2, y: h.y, geom, children: [], depth: h.depth };
      if (parent) l.parent = parent;
      this.laid.set(h.data.id, l);
      this.order.push(l);
      return l;
    };
    // Preorder without recursion.
    const stack: { h: FlexHierarchyNode<PlanNode>; parent: Laid | undefined }[] = [{ h: root, parent: undefined }];
    while (stack.length > 0) {
      const { h, parent } = stack.pop()!;
      const l = visit(h, parent);
      if (parent) parent.children.push(l);
      const kids = h.children ?? [];
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ h: kids[i]!, parent: l });
    }
  }

  // ---- drawing ---------------------------------------------------------------------------------

  /** Lays out the expanded tree and joins it with the SVG. */
  render(): void {
    if (!this.plan) return;
    this.layout();
    const plan = this.plan;
    const maxRows = plan.maxima.rowsReturned;
    const edges = this.order.filter((l) => l.parent);
    this.edgesG
      .selectAll<SVGPathElement, Laid>('path.edge')
      .data(edges, (d) => String(d.node.id))
      .join('path')
      .attr('class', (d) => `edge${d.node.metrics.neverExecuted ? ' never' : ''}`)
      .attr('d', (d) => edgePath(d.parent!, d))
      .attr('stroke-width', (d) => edgeWidth(d.node.metrics.rowsReturned, maxRows));
    this.drawLanes(this.lanesG, plan);
    const cards = this.cardsG
      .selectAll<SVGGElement, Laid>('g.card')
      .data(this.order, (d) => String(d.node.id))
      .join(
        (enter) =>
          enter.append('g').each((d, i, nodes) => {
            const g = select(nodes[i]!) as unknown as G;
            g.attr('class', 'card')
              .attr('data-id', d.node.id)
              .attr('tabindex', -1)
              .attr('role', 'treeitem')
              .attr('aria-label', `${d.geom.title}${d.geom.subtitle ? ` ${d.geom.subtitle}` : ''}${d.geom.decoration?.label ? `, ${d.geom.decoration.label}` : ''}`);
            drawCard(g, d.geom, this.marks.get(d.node.id));
          }),
        (update) => update,
        (exit) => exit.remove(),
      );
    this.updateCards(cards);
    if (!this.laid.has(this.activeId)) this.activeId = plan.root.id;
    this.syncTabIndex();
  }

  private updateCards(cards: Selection<SVGGElement, Laid, SVGGElement, unknown>): void {
    const plan = this.plan;
    if (!plan) return;
    cards
      .attr('transform', (d) => `translate(${d.x},${d.y})`)
      .attr('aria-level', (d) => d.depth + 1)
      .attr('aria-expanded', (d) => (d.node.children.length === 0 ? null : String(!this.collapsed.has(d.node.id))))
      .attr('class', (d) => {
        const cls = ['card', heatClass(heatFraction(d.node, plan, this.heat))];
        if (d.geom.spec.waste && d.geom.spec.waste.level !== 'muted') cls.push(`waste-${d.geom.spec.waste.level}`);
        if (d.geom.spec.neverExecuted) cls.push('never');
        if (d.geom.decoration?.className) cls.push(d.geom.decoration.className);
        if (this.collapsed.has(d.node.id)) cls.push('collapsed');
        if (d.node.id === this.activeId) cls.push('active');
        if (this.matches.has(d.node.id)) cls.push('match');
        if (d.node.id === this.highlighted) cls.push('flash');
        return cls.join(' ');
      })
      .each((d, i, nodes) => {
        const g = select(nodes[i]!);
        const frac = heatFraction(d.node, plan, this.heat);
        g.select('rect.heat-bar').attr('width', Math.max(0, (d.geom.w - 2) * frac));
        this.drawToggle(g as unknown as G, d);
      });
  }

  private drawToggle(g: G, d: Laid): void {
    const n = d.node;
    g.selectAll('g.toggle').remove();
    if (n.children.length === 0) return;
    const collapsed = this.collapsed.has(n.id);
    const label = collapsed ? `+${formatCompact(this.descendants.get(n.id) ?? 0)}` : '−';
    const w = Math.max(20, this.measurer!.width(label, this.measurer!.fonts.small) + 12);
    const t = g
      .append('g')
      .attr('class', `toggle${collapsed ? ' closed' : ''}`)
      .attr('transform', `translate(${d.geom.w / 2},${d.geom.h})`);
    t.append('title').text(collapsed ? `Expand (${this.descendants.get(n.id)} nodes below)` : 'Collapse');
    t.append('rect').attr('x', -w / 2).attr('y', -8).attr('width', w).attr('height', 16).attr('rx', 8);
    t.append('text').attr('class', 'toggle-text').attr('text-anchor', 'middle').attr('y', 3.5).text(label);
    const hidden = this.hiddenChildren(n.id);
    if (hidden > 0) {
      // A wide node: the count of the children not drawn yet, and a button that draws the next page.
      const moreLabel = `+${formatCount(hidden)} more`;
      const mw = this.measurer!.width(moreLabel, this.measurer!.fonts.small) + 14;
      const more = g
        .append('g')
        .attr('class', 'toggle more-children')
        .attr('transform', `translate(${d.geom.w / 2 + w / 2 + 6 + mw / 2},${d.geom.h})`);
      const win = this.shownChildren.get(n.id) ?? { from: 0, to: CHILD_PAGE };
      const next = win.to < n.children.length ? 'the next' : 'the previous';
      more.append('title').text(`Children ${formatCount(win.from + 1)}–${formatCount(win.to)} of ${formatCount(n.children.length)} are drawn: show ${next} ${formatCount(Math.min(hidden, CHILD_PAGE))}`);
      more.append('rect').attr('x', -mw / 2).attr('y', -8).attr('width', mw).attr('height', 16).attr('rx', 8);
      more.append('text').attr('class', 'toggle-text').attr('text-anchor', 'middle').attr('y', 3.5).text(moreLabel);
    }
  }

  /** Rounded bands behind shard subtrees, labelled with the shard name. */
  private drawLanes(target: G, plan: Plan, laid: Map<number, Laid> = this.laid): void {
    const lanes: { id: number; name: string; x0: number; x1: number; y0: number; y1: number }[] = [];
    for (const l of laid.values()) {
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
    void plan;
    const sel = target
      .selectAll<SVGGElement, (typeof lanes)[number]>('g.lane')
      .data(lanes, (d) => String(d.id))
      .join((enter) => {
        const g = enter.append('g').attr('class', 'lane');
        g.append('rect').attr('rx', 8);
        g.append('text').attr('class', 'lane-label');
        return g;
      });
    sel.classed('odd', (_d, i) => i % 2 === 1);
    sel
      .select('rect')
      .attr('x', (d) => d.x0)
      .attr('y', (d) => d.y0)
      .attr('width', (d) => d.x1 - d.x0)
      .attr('height', (d) => d.y1 - d.y0);
    sel
      .select('text')
      .attr('x', (d) => d.x0 + 10)
      .attr('y', (d) => d.y1 - 9)
      .text((d) => `shard ${d.name}`);
  }

  // ---- view ------------------------------------------------------------------------------------

  private size(): { w: number; h: number } {
    const r = this.element.getBoundingClientRect();
    return { w: Math.max(100, r.width), h: Math.max(100, r.height) };
  }

  private extent(): { x0: number; y0: number; x1: number; y1: number } {
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -Infinity;
    let y1 = -Infinity;
    for (const l of this.order) {
      x0 = Math.min(x0, l.x);
      y0 = Math.min(y0, l.y);
      x1 = Math.max(x1, l.x + l.geom.w);
      y1 = Math.max(y1, l.y + l.geom.h + 10);
    }
    if (this.lanesG.select('g.lane').size() > 0) {
      y0 -= 16;
      x0 -= 18;
      x1 += 18;
      y1 += 36;
    }
    return { x0, y0, x1, y1 };
  }

  private setTransform(t: ZoomTransform): void {
    this.svg.call(this.zoomer.transform, t);
  }

  /** Zooms so every drawn card is in view (never above 100%). */
  fit(): void {
    if (this.order.length === 0) return;
    const { w, h } = this.size();
    const e = this.extent();
    const m = 24;
    // The legend sits over the bottom edge: leave it room.
    const k = Math.max(0.03, Math.min(1, (w - 2 * m) / (e.x1 - e.x0), (h - 2 * m - 20) / (e.y1 - e.y0)));
    const tx = (w - (e.x1 - e.x0) * k) / 2 - e.x0 * k;
    const ty = m - e.y0 * k;
    this.setTransform(zoomIdentity.translate(tx, ty).scale(k));
  }

  /**
   * Opening view: the whole tree, where heat shows at a glance where the work went (cards switch to
   * overview text when small); a tree too big even for that opens on its root.
   */
  private initialView(): void {
    const { w, h } = this.size();
    const e = this.extent();
    const kFit = Math.min((w - 48) / (e.x1 - e.x0), (h - 68) / (e.y1 - e.y0));
    if (kFit >= MIN_OPEN_ZOOM) {
      this.fit();
      return;
    }
    const root = this.laid.get(this.plan!.root.id)!;
    const k = MIN_OPEN_ZOOM;
    this.setTransform(zoomIdentity.translate(w / 2 - (root.x + root.geom.w / 2) * k, 24 - root.y * k).scale(k));
  }

  zoomBy(factorK: number): void {
    this.svg.call(this.zoomer.scaleBy, factorK);
  }

  /** Pans (and zooms in if the view is too small to read) so a drawn card is on screen. */
  ensureVisible(id: number, center = false): void {
    const l = this.laid.get(id);
    if (!l) return;
    const { w, h } = this.size();
    const t = this.transform;
    const k = center && t.k < 0.6 ? 0.85 : t.k;
    if (k === t.k) {
      const margin = 20;
      const inside =
        t.applyX(l.x) >= margin && t.applyY(l.y) >= margin && t.applyX(l.x + l.geom.w) <= w - margin && t.applyY(l.y + l.geom.h) <= h - margin;
      if (inside) return;
    }
    const cx = l.x + l.geom.w / 2;
    const cy = l.y + l.geom.h / 2;
    this.setTransform(zoomIdentity.translate(w / 2 - cx * k, h / 2 - cy * k).scale(k));
  }

  // ---- focus and keys --------------------------------------------------------------------------

  private cardIdOf(target: EventTarget | null): number | undefined {
    if (!(target instanceof Element)) return undefined;
    const g = target.closest('g.card');
    if (!g) return undefined;
    const id = Number(g.getAttribute('data-id'));
    return Number.isInteger(id) ? id : undefined;
  }

  private cardElement(id: number): SVGGElement | null {
    return this.cardsG.select<SVGGElement>(`g.card[data-id="${id}"]`).node();
  }

  private syncTabIndex(): void {
    this.cardsG.selectAll<SVGGElement, Laid>('g.card').attr('tabindex', (d) => (d.node.id === this.activeId ? 0 : -1));
  }

  private activate(id: number, moveFocus: boolean): void {
    this.activeId = id;
    this.cardsG.selectAll<SVGGElement, Laid>('g.card').classed('active', (d) => d.node.id === id);
    this.syncTabIndex();
    if (moveFocus) this.cardElement(id)?.focus({ preventScroll: true });
    this.ensureVisible(id);
    const n = this.byId.get(id);
    if (n) this.cb.onSelect(n);
  }

  /** Reveals a node (expanding its ancestors), centres it, focuses it and optionally flashes it. */
  focusNode(id: number, opts: { highlight?: boolean; focus?: boolean } = {}): boolean {
    if (!this.byId.has(id)) return false;
    if (!this.laid.has(id)) {
      this.reveal(id);
      this.render();
    }
    if (opts.highlight) {
      this.highlighted = id;
      if (this.highlightTimer !== undefined) window.clearTimeout(this.highlightTimer);
      this.cardsG.selectAll<SVGGElement, Laid>('g.card').classed('flash', (d) => d.node.id === id);
      this.highlightTimer = window.setTimeout(() => {
        this.highlighted = undefined;
        this.cardsG.selectAll('g.card.flash').classed('flash', false);
      }, 2400);
    }
    this.ensureVisible(id, true);
    this.activate(id, opts.focus !== false);
    return true;
  }

  /** Focuses the active card (after '/' search returns, or a tab switch). */
  focusActive(): void {
    this.cardElement(this.activeId)?.focus({ preventScroll: true });
  }

  private onClick(ev: MouseEvent): void {
    const id = this.cardIdOf(ev.target);
    if (id === undefined) return;
    if ((ev.target as Element).closest('.more-children')) {
      this.activate(id, true);
      this.showMoreChildren(id);
      return;
    }
    if ((ev.target as Element).closest('.toggle')) {
      this.activate(id, true);
      this.toggle(id);
      return;
    }
    this.activate(id, true);
    const n = this.byId.get(id);
    if (n) this.cb.onClickNode?.(n);
  }

  private neighbour(l: Laid, dir: -1 | 1): Laid | undefined {
    if (l.parent) {
      const sibs = l.parent.children;
      const i = sibs.indexOf(l);
      const s = sibs[i + dir];
      if (s) return s;
    }
    // No sibling that way: the nearest card on the same level.
    const cx = l.x + l.geom.w / 2;
    let best: Laid | undefined;
    let bestDist = Infinity;
    for (const o of this.order) {
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

  private onKey(ev: KeyboardEvent): void {
    const id = this.cardIdOf(ev.target);
    if (id === undefined) return;
    const l = this.laid.get(id);
    if (!l) return;
    let next: Laid | undefined;
    switch (ev.key) {
      case 'ArrowUp':
        next = l.parent;
        break;
      case 'ArrowDown':
        if (this.collapsed.has(id) && l.node.children.length > 0) {
          this.toggle(id);
          next = this.laid.get(id)?.children[0];
        } else next = l.children[0];
        break;
      case 'ArrowLeft':
        next = this.neighbour(l, -1);
        break;
      case 'ArrowRight':
        next = this.neighbour(l, 1);
        break;
      case 'Home':
        next = this.order[0];
        break;
      case 'Enter':
      case '+':
      case '-':
        if (ev.key === '+' && !this.collapsed.has(id)) break;
        if (ev.key === '-' && this.collapsed.has(id)) break;
        this.toggle(id);
        this.cardElement(id)?.focus({ preventScroll: true });
        ev.preventDefault();
        return;
      case ' ':
        this.cb.onSelect(l.node);
        ev.preventDefault();
        return;
      default:
        return;
    }
    ev.preventDefault();
    if (next) this.activate(next.node.id, true);
  }

  // ---- export ----------------------------------------------------------------------------------

  /**
   * A standalone SVG of every drawn card, with text taken from `textPlan` (the same plan, possibly with
   * literals replaced) and positions from the current layout. Styles are still classes here; the
   * exporter inlines them.
   */
  buildExportSvg(textPlan: Plan): { svg: SVGSVGElement; width: number; height: number } {
    const e = this.extent();
    const m = 20;
    const width = Math.ceil(e.x1 - e.x0 + 2 * m);
    const height = Math.ceil(e.y1 - e.y0 + 2 * m);
    const svgEl = document.createElementNS(SVG_NS, 'svg');
    svgEl.setAttribute('xmlns', SVG_NS);
    svgEl.setAttribute('class', 'tree export');
    svgEl.setAttribute('width', String(width));
    svgEl.setAttribute('height', String(height));
    svgEl.setAttribute('viewBox', `0 0 ${width} ${height}`);
    const root = select(svgEl);
    root.append('rect').attr('class', 'export-bg').attr('width', width).attr('height', height);
    const vp = root.append('g').attr('transform', `translate(${m - e.x0},${m - e.y0})`);
    const lanes = vp.append('g').attr('class', 'lanes');
    const edges = vp.append('g').attr('class', 'edges');
    const cards = vp.append('g').attr('class', 'cards');
    // Relay out with the text plan's geometry at the live widths, so positions match the screen.
    const laid = new Map<number, Laid>();
    for (const l of this.order) {
      const n = textPlan.nodes[l.node.id] ?? l.node;
      const geom = computeGeom(n, textPlan, this.measurer!, this.marks.has(n.id), l.geom.w, l.geom.decoration);
      const copy: Laid = { node: n, x: l.x, y: l.y, geom, children: [], depth: l.depth };
      laid.set(n.id, copy);
    }
    for (const l of this.order) {
      if (l.parent) {
        const c = laid.get(l.node.id)!;
        const p = laid.get(l.parent.node.id)!;
        c.parent = p;
        p.children.push(c);
      }
    }
    this.drawLanes(lanes, textPlan, laid);
    for (const l of laid.values()) {
      if (l.parent) {
        edges
          .append('path')
          .attr('class', 'edge')
          .attr('d', edgePath(l.parent, l))
          .attr('stroke-width', edgeWidth(l.node.metrics.rowsReturned, textPlan.maxima.rowsReturned));
      }
      const frac = heatFraction(l.node, textPlan, this.heat);
      const g = cards.append('g').attr('class', `card ${heatClass(frac)}`).attr('transform', `translate(${l.x},${l.y})`) as unknown as G;
      if (l.geom.spec.waste && l.geom.spec.waste.level !== 'muted') g.classed(`waste-${l.geom.spec.waste.level}`, true);
      if (l.geom.spec.neverExecuted) g.classed('never', true);
      if (l.geom.decoration?.className) g.classed(l.geom.decoration.className, true);
      drawCard(g, l.geom, this.marks.get(l.node.id), false);
      g.select('rect.heat-bar').attr('width', Math.max(0, (l.geom.w - 2) * frac));
      if (l.node.children.length > 0 && this.collapsed.has(l.node.id)) {
        const label = `+${formatCompact(this.descendants.get(l.node.id) ?? 0)}`;
        const t = g.append('g').attr('class', 'toggle closed').attr('transform', `translate(${l.geom.w / 2},${l.geom.h})`);
        const tw = Math.max(20, this.measurer!.width(label, this.measurer!.fonts.small) + 12);
        t.append('rect').attr('x', -tw / 2).attr('y', -8).attr('width', tw).attr('height', 16).attr('rx', 8);
        t.append('text').attr('class', 'toggle-text').attr('text-anchor', 'middle').attr('y', 3.5).text(label);
      }
    }
    return { svg: svgEl, width, height };
  }
}

function edgePath(p: Laid, c: Laid): string {
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

/** Computes a card's size and its text lines cut to fit. */
export function computeGeom(node: PlanNode, plan: Plan, ms: Measurer, hasBadge: boolean, forceWidth?: number, decoration?: CardDecoration): CardGeom {
  const spec = decorated(cardSpec(node, plan), decoration);
  const f = ms.fonts;
  const badgeW = hasBadge ? 22 : 0;
  const labelGap = 12;
  let want = MIN_W;
  want = Math.max(want, ms.width(spec.title, f.title) + 2 * PAD_X + badgeW);
  if (spec.subtitle) want = Math.max(want, ms.width(spec.subtitle, f.body) + 2 * PAD_X);
  if (spec.tag) want = Math.max(want, ms.width(spec.tag, f.small) + 2 * PAD_X);
  const valueFont = (level: Level): string => (level === 'bad' || level === 'warn' ? f.bodyBold : f.body);
  for (const r of spec.rows) want = Math.max(want, ms.width(r.label, f.body) + labelGap + ms.width(r.value, valueFont(r.level)) + 2 * PAD_X);
  let ratioText: string | undefined;
  let wasteText: string | undefined;
  if (spec.waste) {
    ratioText = formatRatio(spec.waste.ratio);
    wasteText = spec.waste.text;
    want = Math.max(want, ms.width(wasteText, f.bodyBold) + labelGap + ms.width(ratioText, f.title) + 2 * PAD_X);
  }
  const w = Math.ceil(forceWidth ?? Math.min(MAX_W, want));
  const inner = w - 2 * PAD_X;
  let y = HEAT_BAR_H + 2;
  let tagY = 0;
  if (spec.tag) {
    tagY = y + FONT_PX.small + 1;
    y = tagY + 2;
  }
  const titleY = y + FONT_PX.title + 3;
  y = titleY;
  let subY = 0;
  if (spec.subtitle) {
    subY = y + FONT_PX.body + 4;
    y = subY;
  }
  y += 4;
  const rows: RowGeom[] = [];
  for (const r of spec.rows) {
    y += ROW_H;
    const lw = ms.width(r.label, f.body);
    const value = ms.fit(r.value, valueFont(r.level), Math.max(30, inner - lw - labelGap));
    const label = lw > inner - 40 ? ms.fit(r.label, f.body, inner - 40) : r.label;
    rows.push({ label, value, level: r.level, y });
  }
  let wasteY: number | undefined;
  if (spec.waste) {
    y += 6;
    wasteY = y;
    y += WASTE_H;
    wasteText = ms.fit(`${wasteText}`, f.bodyBold, inner - ms.width(ratioText!, f.title) - labelGap);
  }
  // The fold toggle sits on the bottom edge: a card with children keeps its last line clear of it.
  const h = Math.ceil(y + (node.children.length > 0 ? 14 : 8));
  const farFont = `700 ${FAR_TITLE_PX}px ${f.title.replace(/^\d+ \d+px /, '')}`;
  const farDetailFont = `600 ${FAR_DETAIL_PX}px ${f.title.replace(/^\d+ \d+px /, '')}`;
  let farDetail: string | undefined;
  let farLevel: Level;
  if (spec.waste && spec.waste.level !== 'muted') {
    farDetail = `${ratioText} ${spec.waste.unit === 'rows' ? 'read/kept' : 'read/returned'}`;
    farLevel = spec.waste.level;
  } else {
    // PostgreSQL: where the time went; MongoDB: how many documents flowed (its times are estimates).
    const returned = spec.rows.find((r) => r.label === 'returned');
    const pick = spec.rows.find((r) => r.label === 'own time') ?? spec.rows[0];
    if (returned) farDetail = `${returned.value} returned`;
    else if (pick) {
      farDetail = pick.value;
      farLevel = pick.level;
    }
  }
  const geom: CardGeom = {
    w,
    h,
    spec,
    tagY,
    title: ms.fit(spec.title, f.title, inner - badgeW),
    titleY,
    subY,
    rows,
    tooltip: [node.label, spec.subtitle].filter(Boolean).join('\n'),
    farTitle: spec.title,
    farTitlePx: FAR_TITLE_PX,
    farLevel,
  };
  // A long title shrinks before it is cut: at overview zoom the kind is the whole message.
  const titleW = ms.width(spec.title, farFont);
  if (titleW > w - 2 * PAD_X) {
    const px = Math.max(FAR_MIN_PX, Math.floor((FAR_TITLE_PX * (w - 2 * PAD_X)) / titleW));
    geom.farTitlePx = px;
    geom.farTitle = ms.fit(spec.title, farFont.replace(`${FAR_TITLE_PX}px`, `${px}px`), w - 2 * PAD_X);
  }
  if (farDetail !== undefined && h >= 54) geom.farDetail = ms.fit(farDetail, farDetailFont, w - 2 * PAD_X);
  if (spec.tag) geom.tag = ms.fit(spec.tag, f.small, inner);
  if (decoration) geom.decoration = decoration;
  if (spec.subtitle) geom.subtitle = ms.fit(spec.subtitle, f.body, inner);
  if (wasteY !== undefined) {
    geom.wasteY = wasteY;
    geom.wasteText = wasteText!;
    geom.ratioText = ratioText!;
  }
  return geom;
}

function decorated(spec: CardSpec, d: CardDecoration | undefined): CardSpec {
  if (!d) return spec;
  const out: CardSpec = { ...spec, rows: d.rows ? [...spec.rows, ...d.rows] : spec.rows };
  if (d.tag) out.tag = spec.tag ? `${d.tag} · ${spec.tag}` : d.tag;
  return out;
}

/** Draws a card's static parts into an empty group; `far` adds the overview text for low zoom. */
function drawCard(g: G, geom: CardGeom, mark: FindingMark | undefined, far = true): void {
  g.append('title').text(geom.tooltip);
  g.append('rect').attr('class', 'card-bg').attr('width', geom.w).attr('height', geom.h).attr('rx', 4);
  g.append('rect').attr('class', 'heat-bar').attr('x', 1).attr('y', 1).attr('height', HEAT_BAR_H).attr('width', 0);
  if (geom.tag) g.append('text').attr('class', 'card-tag').attr('x', PAD_X).attr('y', geom.tagY).text(geom.tag);
  g.append('text').attr('class', 'card-title').attr('x', PAD_X).attr('y', geom.titleY).text(geom.title);
  if (geom.subtitle) g.append('text').attr('class', 'card-sub').attr('x', PAD_X).attr('y', geom.subY).text(geom.subtitle);
  for (const r of geom.rows) {
    g.append('text').attr('class', 'row-label').attr('x', PAD_X).attr('y', r.y).text(r.label);
    g.append('text')
      .attr('class', `row-value${r.level ? ` level-${r.level}` : ''}`)
      .attr('x', geom.w - PAD_X)
      .attr('y', r.y)
      .attr('text-anchor', 'end')
      .text(r.value);
  }
  if (geom.wasteY !== undefined && geom.spec.waste) {
    const lvl = geom.spec.waste.level ?? 'muted';
    g.append('rect')
      .attr('class', `waste-bg level-${lvl}`)
      .attr('x', 1)
      .attr('y', geom.wasteY)
      .attr('width', geom.w - 2)
      .attr('height', WASTE_H);
    g.append('text')
      .attr('class', `waste-text level-${lvl}`)
      .attr('x', PAD_X)
      .attr('y', geom.wasteY + 13.5)
      .text(geom.wasteText ?? '');
    g.append('text')
      .attr('class', `waste-ratio level-${lvl}`)
      .attr('x', geom.w - PAD_X)
      .attr('y', geom.wasteY + 13.5)
      .attr('text-anchor', 'end')
      .text(geom.ratioText ?? '');
  }
  if (far) {
    const cy = geom.farDetail ? geom.h / 2 - 2 : geom.h / 2 + FAR_TITLE_PX / 3;
    g.append('text')
      .attr('class', 'far far-title')
      .attr('x', geom.w / 2)
      .attr('y', cy)
      .attr('text-anchor', 'middle')
      .attr('font-size', geom.farTitlePx)
      .text(geom.farTitle);
    if (geom.farDetail) {
      g.append('text')
        .attr('class', `far far-detail${geom.farLevel ? ` level-${geom.farLevel}` : ''}`)
        .attr('x', geom.w / 2)
        .attr('y', cy + FAR_DETAIL_PX + 1)
        .attr('text-anchor', 'middle')
        .text(geom.farDetail);
    }
  }
  if (mark) {
    const b = g
      .append('g')
      .attr('class', `badge sev-${mark.good ? 'good' : mark.worst}`)
      .attr('transform', `translate(${geom.w - PAD_X - 8},${geom.titleY - 4})`);
    b.append('title').text(`${mark.count} finding${mark.count === 1 ? '' : 's'}`);
    b.append('circle').attr('r', 8);
    b.append('text').attr('class', 'badge-text').attr('text-anchor', 'middle').attr('y', 3.5).text(String(mark.count));
  }
}
