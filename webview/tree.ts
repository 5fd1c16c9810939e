// The plan tree's d3 renderer: draws the cards the tree model shows (treeModel.ts) where the layout
// places them (treeLayout.ts), in SVG, with zoom, pan, heat colouring and keyboard navigation, and turns
// clicks and keys into the model's transitions. Only shown nodes are laid out and drawn, and a fresh
// plan opens with a budget of visible cards, so plans of many thousands of nodes stay responsive. All
// plan text is set with d3's .text(), never parsed as markup.

import { select, type Selection } from 'd3-selection';
import { zoom, zoomIdentity, type ZoomBehavior, type ZoomTransform } from 'd3-zoom';
import type { Finding, Plan, PlanNode } from '../src/core/view';
import { formatCompact, formatCount } from '../src/core/view';
import { heatFraction, type HeatMetric } from './cards';
import { computeGeom, FAR_DETAIL_PX, FAR_TITLE_PX, HEAT_BAR_H, PAD_X, WASTE_H, type CardDecoration, type CardGeom } from './cardGeom';
import { Measurer } from './measure';
import { edgePath, edgeWidth, extentOf, laneBoxes, layoutTree, neighbour, type Laid as Placed } from './treeLayout';
import { CHILD_PAGE, TreeModel, type FindingMark } from './treeModel';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Below this zoom cards show their overview text instead of their rows. */
const FAR_ZOOM = 0.65;
/** The opening view never zooms out further than this; a wider tree opens on its root. */
const MIN_OPEN_ZOOM = 0.3;

type G = Selection<SVGGElement, unknown, null, undefined>;
type Laid = Placed<CardGeom>;

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

/** A card's own classes, on screen and in an export: heat, waste, never executed, the caller's mark. */
function cardClasses(geom: CardGeom, heatFrac: number): string[] {
  const cls = ['card', heatClass(heatFrac)];
  if (geom.spec.waste && geom.spec.waste.level !== 'muted') cls.push(`waste-${geom.spec.waste.level}`);
  if (geom.spec.neverExecuted) cls.push('never');
  if (geom.decoration?.className) cls.push(geom.decoration.className);
  return cls;
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

  /** What is shown: folding, pages, the active node, the matches. */
  private model: TreeModel | undefined;
  private geoms = new Map<number, CardGeom>();
  /** Each drawn card's join key: its node and everything drawCard draws, so an identical card is kept. */
  private readonly cardKeys = new WeakMap<Laid, string>();
  private laid = new Map<number, Laid>();
  private order: Laid[] = [];
  private heat: HeatMetric = 'none';
  private highlighted: number | undefined;
  private highlightTimer: number | undefined;
  /**
   * The tree's size as last laid out, from a ResizeObserver. The opening view uses it instead of reading
   * the size: a read in the message's task lays the page out once for the read and again for the frame
   * (the side panel is filled after the tree, and SVG text is laid out anew under a new zoom).
   */
  private box: { w: number; h: number } | undefined;
  /** The size the opening view was computed for, until the next layout confirms it or the user moves. */
  private opening: { w: number; h: number } | undefined;

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
      // d3's own extent reads the SVG's percentage width, which lays the page out on every transform
      // set; the last layout's size is the same figure (it centres the zoom buttons' steps).
      .extent(() => {
        const { w, h } = this.box && this.box.w > 0 ? this.box : this.size();
        return [[0, 0], [w, h]];
      })
      .on('zoom', (ev: { transform: ZoomTransform; sourceEvent?: unknown }) => {
        // The user moved the view: it is no longer the opening view to correct.
        if (ev.sourceEvent) this.opening = undefined;
        this.transform = ev.transform;
        this.viewport.attr('transform', ev.transform.toString());
        // Zoomed out, card text is too small to read: cards switch to one large title and one figure.
        this.element.classList.toggle('far', ev.transform.k < FAR_ZOOM);
      });
    this.svg.call(this.zoomer).on('dblclick.zoom', null);
    this.element.addEventListener('keydown', (ev) => this.onKey(ev));
    this.element.addEventListener('click', (ev) => this.onClick(ev));
    this.element.addEventListener('dblclick', (ev) => {
      const n = this.nodeOf(ev.target);
      if (n && !(ev.target as Element).closest('.toggle')) this.cb.onOpen(n);
    });
    // Observations come after the frame's layout and before its paint: an opening view computed for a
    // size the layout changed is computed again before anyone sees it.
    new ResizeObserver((entries) => {
      const b = entries[entries.length - 1]!.borderBoxSize[0];
      if (!b) return;
      this.box = { w: b.inlineSize, h: b.blockSize };
      const used = this.opening;
      this.opening = undefined;
      if (used && (used.w !== this.box.w || used.h !== this.box.h) && this.box.w > 0 && this.order.length > 0) this.initialView();
    }).observe(this.element);
    this.element.addEventListener('focusin', (ev) => {
      const id = this.cardIdOf(ev.target);
      if (id !== undefined && id !== this.model?.active) this.activate(id, false);
    });
  }

  /** Shows a plan; `findings` put badges on their nodes. Resets collapse state and view. */
  setPlan(plan: Plan, findings: Finding[], heat: HeatMetric): void {
    this.measurer = measurerFor(this.element);
    this.model = new TreeModel(plan, findings);
    this.geoms.clear();
    this.heat = heat;
    this.highlighted = undefined;
    // A card of the last plan with the same node and the same drawing is kept rather than drawn again
    // (the next Explain of a query mostly changes figures); as before, no card keeps the focus.
    const focused = document.activeElement;
    if (focused instanceof SVGElement && this.cardsG.node()!.contains(focused)) focused.blur();
    this.edgesG.selectAll('*').remove();
    this.lanesG.selectAll('*').remove();
    this.render();
    this.initialView(true);
  }

  node(id: number): PlanNode | undefined {
    return this.model?.node(id);
  }

  get active(): number {
    return this.model?.active ?? 0;
  }

  setHeat(metric: HeatMetric): void {
    this.heat = metric;
    this.updateCards(this.cardsG.selectAll<SVGGElement, Laid>('g.card'));
  }

  setMatches(ids: Iterable<number>): void {
    const model = this.model;
    if (!model) return;
    model.setMatches(ids);
    this.cardsG.selectAll<SVGGElement, Laid>('g.card').classed('match', (d) => model.isMatch(d.node.id));
  }

  /** Collapses an expanded node or expands a collapsed one (within the expand budget). */
  toggle(id: number): void {
    if (!this.model?.toggle(id)) return;
    this.render();
    this.ensureVisible(id);
  }

  /** Draws the next page of a wide node's children (or the previous one once the last page shows). */
  private showMoreChildren(id: number): void {
    if (this.model?.showMoreChildren(id)) this.render();
  }

  /** Back to the state and view the plan opened with. */
  resetCollapse(): void {
    if (!this.model) return;
    this.model.reset();
    this.render();
    this.initialView(true);
  }

  /** The card geometry of a node of this plan, computed once per plan. */
  private geom(node: PlanNode): CardGeom {
    const cached = this.geoms.get(node.id);
    if (cached) return cached;
    const g = computeGeom(node, this.model!.plan, this.measurer!, this.model!.mark(node.id) !== undefined, undefined, this.cb.decorate?.(node));
    this.geoms.set(node.id, g);
    return g;
  }

  // ---- drawing ---------------------------------------------------------------------------------

  /** Lays out what the model shows and joins it with the SVG. */
  render(): void {
    const model = this.model;
    if (!model) return;
    const { order, byId } = layoutTree(model, (n) => this.geom(n));
    this.order = order;
    this.laid = byId;
    const maxRows = model.plan.maxima.rowsReturned;
    const edges = this.order.filter((l) => l.parent);
    this.edgesG
      .selectAll<SVGPathElement, Laid>('path.edge')
      .data(edges, (d) => String(d.node.id))
      .join('path')
      .attr('class', (d) => `edge${d.node.metrics.neverExecuted ? ' never' : ''}`)
      .attr('d', (d) => edgePath(d.parent!, d))
      .attr('stroke-width', (d) => edgeWidth(d.node.metrics.rowsReturned, maxRows));
    this.drawLanes(this.lanesG, this.laid.values());
    for (const l of this.order) this.cardKeys.set(l, cardKey(l, model.mark(l.node.id)));
    const cards = this.cardsG
      .selectAll<SVGGElement, Laid>('g.card')
      .data(this.order, (d) => this.cardKeys.get(d) ?? '')
      .join(
        (enter) =>
          enter.append('g').each((d, i, nodes) => {
            const g = select(nodes[i]!) as unknown as G;
            g.attr('class', 'card')
              .attr('data-id', d.node.id)
              .attr('tabindex', -1)
              .attr('role', 'treeitem')
              .attr('aria-label', `${d.geom.title}${d.geom.subtitle ? ` ${d.geom.subtitle}` : ''}${d.geom.decoration?.label ? `, ${d.geom.decoration.label}` : ''}`);
            drawCard(g, d.geom, model.mark(d.node.id));
          }),
        (update) => update,
        (exit) => exit.remove(),
      );
    this.updateCards(cards);
    this.syncTabIndex();
  }

  private updateCards(cards: Selection<SVGGElement, Laid, SVGGElement, unknown>): void {
    const model = this.model;
    if (!model) return;
    const plan = model.plan;
    cards
      .attr('transform', (d) => `translate(${d.x},${d.y})`)
      .attr('aria-level', (d) => d.depth + 1)
      .attr('aria-expanded', (d) => (d.node.children.length === 0 ? null : String(!model.isCollapsed(d.node.id))))
      .attr('class', (d) => {
        const cls = cardClasses(d.geom, heatFraction(d.node, plan, this.heat));
        if (model.isCollapsed(d.node.id)) cls.push('collapsed');
        if (d.node.id === model.active) cls.push('active');
        if (model.isMatch(d.node.id)) cls.push('match');
        if (d.node.id === this.highlighted) cls.push('flash');
        return cls.join(' ');
      })
      .each((d, i, nodes) => {
        const g = select(nodes[i]!);
        const frac = heatFraction(d.node, plan, this.heat);
        g.select('rect.heat-bar').attr('width', Math.max(0, (d.geom.w - 2) * frac));
        this.drawToggle(g as unknown as G, d, model);
      });
  }

  private drawToggle(g: G, d: Laid, model: TreeModel): void {
    const n = d.node;
    g.selectAll('g.toggle').remove();
    if (n.children.length === 0) return;
    const collapsed = model.isCollapsed(n.id);
    const label = collapsed ? `+${formatCompact(model.descendantCount(n.id))}` : '−';
    const w = Math.max(20, this.measurer!.width(label, this.measurer!.fonts.small) + 12);
    const t = g
      .append('g')
      .attr('class', `toggle${collapsed ? ' closed' : ''}`)
      .attr('transform', `translate(${d.geom.w / 2},${d.geom.h})`);
    t.append('title').text(collapsed ? `Expand (${model.descendantCount(n.id)} nodes below)` : 'Collapse');
    t.append('rect').attr('x', -w / 2).attr('y', -8).attr('width', w).attr('height', 16).attr('rx', 8);
    t.append('text').attr('class', 'toggle-text').attr('text-anchor', 'middle').attr('y', 3.5).text(label);
    const hidden = model.hiddenChildren(n.id);
    if (hidden > 0) {
      // A wide node: the count of the children not drawn yet, and a button that draws the next page.
      const moreLabel = `+${formatCount(hidden)} more`;
      const mw = this.measurer!.width(moreLabel, this.measurer!.fonts.small) + 14;
      const more = g
        .append('g')
        .attr('class', 'toggle more-children')
        .attr('transform', `translate(${d.geom.w / 2 + w / 2 + 6 + mw / 2},${d.geom.h})`);
      const win = model.childWindow(n.id);
      const next = win.to < n.children.length ? 'the next' : 'the previous';
      more.append('title').text(`Children ${formatCount(win.from + 1)}–${formatCount(win.to)} of ${formatCount(n.children.length)} are drawn: show ${next} ${formatCount(Math.min(hidden, CHILD_PAGE))}`);
      more.append('rect').attr('x', -mw / 2).attr('y', -8).attr('width', mw).attr('height', 16).attr('rx', 8);
      more.append('text').attr('class', 'toggle-text').attr('text-anchor', 'middle').attr('y', 3.5).text(moreLabel);
    }
  }

  /** Rounded bands behind shard subtrees, labelled with the shard name. */
  private drawLanes(target: G, laid: Iterable<Laid>): void {
    const sel = target
      .selectAll<SVGGElement, ReturnType<typeof laneBoxes>[number]>('g.lane')
      .data(laneBoxes(laid), (d) => String(d.id))
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
    return extentOf(this.order, this.lanesG.select('g.lane').size() > 0);
  }

  private setTransform(t: ZoomTransform): void {
    this.svg.call(this.zoomer.transform, t);
  }

  /** Zooms so every drawn card is in view (never above 100%). */
  fit(): void {
    this.opening = undefined;
    this.fitTo(this.size());
  }

  private fitTo({ w, h }: { w: number; h: number }): void {
    if (this.order.length === 0) return;
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
  private initialView(fromLastLayout = false): void {
    // The last layout's size while the tree is shown; read (laying the page out) when it has none.
    const known = fromLastLayout && this.box !== undefined && this.box.w > 0 && this.box.h > 0;
    const size = known ? { w: Math.max(100, this.box!.w), h: Math.max(100, this.box!.h) } : this.size();
    const opening = known ? { ...this.box! } : undefined;
    this.opening = opening;
    // No observation by the end of the next frame: the layout kept the size, the view stands.
    if (opening) requestAnimationFrame(() => setTimeout(() => {
      if (this.opening === opening) this.opening = undefined;
    }, 0));
    const { w, h } = size;
    const e = this.extent();
    const kFit = Math.min((w - 48) / (e.x1 - e.x0), (h - 68) / (e.y1 - e.y0));
    if (kFit >= MIN_OPEN_ZOOM) {
      this.fitTo(size);
      return;
    }
    const root = this.laid.get(this.model!.plan.root.id)!;
    const k = MIN_OPEN_ZOOM;
    this.setTransform(zoomIdentity.translate(w / 2 - (root.x + root.geom.w / 2) * k, 24 - root.y * k).scale(k));
  }

  zoomBy(factorK: number): void {
    this.opening = undefined;
    this.svg.call(this.zoomer.scaleBy, factorK);
  }

  /** Pans (and zooms in if the view is too small to read) so a drawn card is on screen. */
  ensureVisible(id: number, center = false): void {
    const l = this.laid.get(id);
    if (!l) return;
    this.opening = undefined;
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

  private nodeOf(target: EventTarget | null): PlanNode | undefined {
    const id = this.cardIdOf(target);
    return id === undefined ? undefined : this.model?.node(id);
  }

  private cardElement(id: number): SVGGElement | null {
    return this.cardsG.select<SVGGElement>(`g.card[data-id="${id}"]`).node();
  }

  private syncTabIndex(): void {
    this.cardsG.selectAll<SVGGElement, Laid>('g.card').attr('tabindex', (d) => (d.node.id === this.model?.active ? 0 : -1));
  }

  private activate(id: number, moveFocus: boolean): void {
    if (!this.model?.select(id)) return;
    this.cardsG.selectAll<SVGGElement, Laid>('g.card').classed('active', (d) => d.node.id === id);
    this.syncTabIndex();
    if (moveFocus) this.cardElement(id)?.focus({ preventScroll: true });
    this.ensureVisible(id);
    const n = this.model.node(id);
    if (n) this.cb.onSelect(n);
  }

  /** Reveals a node (expanding its ancestors), centres it, focuses it and optionally flashes it. */
  focusNode(id: number, opts: { highlight?: boolean; focus?: boolean } = {}): boolean {
    if (!this.model?.node(id)) return false;
    if (!this.laid.has(id) && this.model.reveal(id)) this.render();
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
    if (this.model) this.cardElement(this.model.active)?.focus({ preventScroll: true });
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
    const n = this.model?.node(id);
    if (n) this.cb.onClickNode?.(n);
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
        if (this.model!.isCollapsed(id) && l.node.children.length > 0) {
          this.toggle(id);
          next = this.laid.get(id)?.children[0];
        } else next = l.children[0];
        break;
      case 'ArrowLeft':
        next = neighbour(this.order, l, -1);
        break;
      case 'ArrowRight':
        next = neighbour(this.order, l, 1);
        break;
      case 'Home':
        next = this.order[0];
        break;
      case 'Enter':
      case '+':
      case '-':
        if (ev.key === '+' && !this.model!.isCollapsed(id)) break;
        if (ev.key === '-' && this.model!.isCollapsed(id)) break;
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
    const model = this.model!;
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
      const geom = computeGeom(n, textPlan, this.measurer!, model.mark(n.id) !== undefined, l.geom.w, l.geom.decoration);
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
    this.drawLanes(lanes, laid.values());
    for (const l of laid.values()) {
      if (l.parent) {
        edges
          .append('path')
          .attr('class', 'edge')
          .attr('d', edgePath(l.parent, l))
          .attr('stroke-width', edgeWidth(l.node.metrics.rowsReturned, textPlan.maxima.rowsReturned));
      }
      const frac = heatFraction(l.node, textPlan, this.heat);
      const g = cards.append('g').attr('class', cardClasses(l.geom, frac).join(' ')).attr('transform', `translate(${l.x},${l.y})`) as unknown as G;
      drawCard(g, l.geom, model.mark(l.node.id), false);
      g.select('rect.heat-bar').attr('width', Math.max(0, (l.geom.w - 2) * frac));
      if (l.node.children.length > 0 && model.isCollapsed(l.node.id)) {
        const label = `+${formatCompact(model.descendantCount(l.node.id))}`;
        const t = g.append('g').attr('class', 'toggle closed').attr('transform', `translate(${l.geom.w / 2},${l.geom.h})`);
        const tw = Math.max(20, this.measurer!.width(label, this.measurer!.fonts.small) + 12);
        t.append('rect').attr('x', -tw / 2).attr('y', -8).attr('width', tw).attr('height', 16).attr('rx', 8);
        t.append('text').attr('class', 'toggle-text').attr('text-anchor', 'middle').attr('y', 3.5).text(label);
      }
    }
    return { svg: svgEl, width, height };
  }
}

/**
 * One measurer per font family, kept across plans so a plan of the same kinds and figures as the last
 * measures nothing anew. The family is read from the stylesheet again only after the page's theme or
 * style attributes changed (a theme switch, or the editor's font variables set on the root element):
 * reading it otherwise recalculates the page's styles in the middle of a message.
 */
let fontFamilyStale = true;
let lastFamily = '';
let lastMeasurer: Measurer | undefined;
let fontWatch: MutationObserver | undefined;

function measurerFor(element: SVGSVGElement): Measurer {
  if (!fontWatch) {
    fontWatch = new MutationObserver(() => {
      fontFamilyStale = true;
    });
    const attributeFilter = ['class', 'style'];
    fontWatch.observe(document.documentElement, { attributes: true, attributeFilter });
    fontWatch.observe(document.body, { attributes: true, attributeFilter });
  }
  // Mutation records arrive after the task that made them: take any pending ones now.
  if (fontWatch.takeRecords().length > 0) fontFamilyStale = true;
  if (fontFamilyStale || !lastMeasurer) {
    const cs = getComputedStyle(element);
    const family = cs.getPropertyValue('--qpi-font').trim() || cs.fontFamily || 'sans-serif';
    fontFamilyStale = false;
    if (family !== lastFamily || !lastMeasurer) lastMeasurer = new Measurer(family);
    lastFamily = family;
  }
  return lastMeasurer;
}

/** What drawCard draws for a card, with its node: equal keys draw equal cards. */
function cardKey(l: Laid, mark: FindingMark | undefined): string {
  const g = l.geom;
  const drawn = [
    g.tooltip, g.w, g.h, g.tag, g.tagY, g.title, g.titleY, g.subtitle, g.subY, g.rows, g.wasteY, g.spec.waste?.level ?? null,
    g.wasteText, g.ratioText, g.farTitle, g.farTitlePx, g.farDetail, g.farLevel, g.decoration?.label, mark ?? null,
  ];
  return `${l.node.id}\u0000${JSON.stringify(drawn)}`;
}

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
