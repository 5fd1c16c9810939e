// Two plans side by side. The view computes the comparison itself with core's comparePlans (pure, no
// DOM, no driver), so the host only posts the two plans it already has; the message stays as it was.
// Each plan gets its own tree; cards are marked changed, added or removed, changed cards carry the
// figures that moved, and selecting a node in one tree highlights its partner in the other and brings
// it into view ("p" on a focused card moves the focus to the partner). Both trees colour heat on one
// scale, so the same colour means the same amount on either side. All text goes in as textContent.

import {
  changeText, comparePlans, deltaText, deltaValue, entryOfAfter, entryOfBefore,
  type ComparedPlans, type MetricDelta, type NodeComparison,
} from '../src/core/view';
import type { Finding, Plan, PlanMaxima, PlanNode } from '../src/core/view';
import type { ShowComparisonMessage } from '../src/protocol/webview';
import type { CardRow, HeatMetric, Level } from './cards';
import { activatable, append, button, clear, el } from './dom';
import type { Side } from './store';
import { formatCount } from '../src/core/view';
import type { CardDecoration } from './cardGeom';
import { TreeView } from './tree';

/** Which of the two plans. */
export type { Side };

export interface CompareCallbacks {
  /** A node was selected in one tree by the user (not by the partner link). */
  onSelect(side: Side, node: PlanNode): void;
  /** A node was double-clicked. */
  onOpen(side: Side, node: PlanNode): void;
  /** A card was clicked on one side. */
  onClickNode?(side: Side, node: PlanNode): void;
}

const STATUS_WORD: Record<NodeComparison['status'], string> = { unchanged: 'unchanged', changed: 'changed', added: 'added', removed: 'removed' };

/** Rows a changed card gets: what changed, then the figures that moved most. */
const MAX_DELTA_ROWS = 3;

function other(side: Side): Side {
  return side === 'before' ? 'after' : 'before';
}

function levelOf(d: MetricDelta): Level {
  if (d.trend === 'better') return 'good';
  if (d.trend === 'worse') return 'bad';
  return 'muted';
}

/** How far a figure moved, for choosing which deltas a card shows: one-sided ones count as large. */
function movement(d: MetricDelta): number {
  if (d.before === undefined || d.after === undefined) return 50;
  const hi = Math.max(d.before, d.after);
  const lo = Math.min(d.before, d.after);
  return lo <= 0 ? 40 : Math.log(hi / lo);
}

function maxima(a: PlanMaxima, b: PlanMaxima): PlanMaxima {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof PlanMaxima)[]) out[k] = Math.max(a[k], b[k]);
  return out;
}

/** Both plans with the maxima of the two, so heat reads on one scale. */
export function sharedScale(m: ShowComparisonMessage): { before: Plan; after: Plan } {
  const both = maxima(m.before.plan.maxima, m.after.plan.maxima);
  return { before: { ...m.before.plan, maxima: both }, after: { ...m.after.plan, maxima: both } };
}

function decorationFor(e: NodeComparison | undefined): CardDecoration | undefined {
  if (!e) return undefined;
  if (e.status === 'unchanged') return { className: 'cmp-unchanged', label: 'unchanged' };
  if (e.status === 'added') return { className: 'cmp-added', tag: 'added', label: 'added: not in the before plan' };
  if (e.status === 'removed') return { className: 'cmp-removed', tag: 'removed', label: 'removed: not in the after plan' };
  const rows: CardRow[] = [];
  if (e.differences.length > 0) rows.push({ label: 'change', value: e.differences.join(' · '), level: 'muted' });
  const moved = e.deltas.filter((d) => d.material).sort((a, b) => movement(b) - movement(a)).slice(0, MAX_DELTA_ROWS);
  for (const d of moved) rows.push({ label: d.label, value: `${deltaValue(d, 'before')} → ${deltaValue(d, 'after')}`, level: levelOf(d) });
  return { className: 'cmp-changed', tag: 'changed', rows, label: `changed: ${[...e.differences, ...moved.map((d) => `${d.label} ${deltaText(d)}`)].join('; ')}` };
}

interface Pane {
  section: HTMLElement;
  canvas: HTMLElement;
  tree: TreeView;
  plan: Plan;
}

export class CompareView {
  /** The comparison's head (verdict, counts, totals), over the canvas; hidden while no comparison is shown. */
  readonly head = el('section', 'compare-head');
  private panes: Record<Side, Pane> | undefined;
  private container: HTMLElement | undefined;
  private cmp: ComparedPlans | undefined;
  private msg: ShowComparisonMessage | undefined;
  private heat: HeatMetric = 'none';
  /** Set while one tree follows the other, so the follower does not answer back. */
  private syncing = false;

  constructor(
    private readonly canvas: HTMLElement,
    private readonly cb: CompareCallbacks,
  ) {
    this.head.setAttribute('aria-label', 'Comparison');
    this.head.hidden = true;
  }

  get active(): boolean {
    return this.panes !== undefined;
  }

  get comparison(): ComparedPlans | undefined {
    return this.cmp;
  }

  get message(): ShowComparisonMessage | undefined {
    return this.msg;
  }

  tree(side: Side): TreeView | undefined {
    return this.panes?.[side].tree;
  }

  plan(side: Side): Plan | undefined {
    return this.msg?.[side].plan;
  }

  findings(side: Side): Finding[] {
    return this.msg?.[side].findings ?? [];
  }

  entry(side: Side, id: number): NodeComparison | undefined {
    if (!this.cmp) return undefined;
    return side === 'before' ? entryOfBefore(this.cmp, id) : entryOfAfter(this.cmp, id);
  }

  /** The node paired with a node of one side, in the other plan. */
  partner(side: Side, id: number): PlanNode | undefined {
    const e = this.entry(side, id);
    const pid = side === 'before' ? e?.afterId : e?.beforeId;
    return pid === undefined ? undefined : this.panes?.[other(side)].tree.node(pid);
  }

  /**
   * Draws the comparison; returns the refusal sentence instead when the plans cannot be compared
   * (different engines), leaving the view as it was.
   */
  show(m: ShowComparisonMessage, heat: HeatMetric): string | undefined {
    const c = comparePlans(m.before.plan, m.after.plan, { beforeFindings: m.before.findings, afterFindings: m.after.findings });
    if (!c.ok) return c.refusal;
    this.hide();
    this.cmp = c;
    this.msg = m;
    this.heat = heat;
    this.renderHead(m, c);
    const container = el('div', 'compare-panes');
    container.setAttribute('role', 'group');
    container.setAttribute('aria-label', 'The two plans side by side');
    this.container = container;
    this.canvas.classList.add('comparing');
    // First in the canvas, so the heat legend that follows stays drawn over the panes.
    this.canvas.prepend(container);
    const scaled = sharedScale(m);
    const make = (side: Side): Pane => {
      const section = el('section', `pane pane-${side}`);
      section.dataset.side = side;
      section.setAttribute('aria-label', `${side === 'before' ? 'Before' : 'After'}: ${m[side].label}`);
      const header = el('header', 'pane-head');
      const count = c.counts;
      const marks = side === 'before' ? `${count.removed} removed` : `${count.added} added`;
      append(
        header,
        el('span', 'pane-side', side === 'before' ? 'Before' : 'After'),
        el('span', 'pane-label', m[side].label),
        el('span', 'pane-meta', `${formatCount(m[side].plan.nodes.length)} nodes · ${count.changed} changed · ${marks}`),
      );
      const paneCanvas = el('div', 'pane-canvas');
      append(section, header, paneCanvas);
      container.appendChild(section);
      const tree = new TreeView(paneCanvas, {
        onSelect: (node) => this.selected(side, node),
        onOpen: (node) => this.cb.onOpen(side, node),
        onClickNode: (node) => this.cb.onClickNode?.(side, node),
        decorate: (node) => decorationFor(this.entry(side, node.id)),
      });
      tree.element.setAttribute('aria-label', `${side === 'before' ? 'Before' : 'After'} plan`);
      section.addEventListener('keydown', (ev) => {
        if ((ev.key === 'p' || ev.key === 'P') && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
          const partner = this.partner(side, tree.active);
          if (partner) {
            ev.preventDefault();
            this.panes?.[other(side)].tree.focusNode(partner.id, { highlight: true });
          }
        }
      });
      return { section, canvas: paneCanvas, tree, plan: scaled[side] };
    };
    this.panes = { before: make('before'), after: make('after') };
    this.draw();
    return undefined;
  }

  private draw(): void {
    if (!this.panes || !this.msg) return;
    for (const side of ['before', 'after'] as const) {
      const p = this.panes[side];
      p.tree.setPlan(p.plan, this.msg[side].findings, this.heat);
    }
  }

  /** Redraws both trees (a theme change alters the font, hence card sizes). */
  redraw(): void {
    this.draw();
  }

  hide(): void {
    this.container?.remove();
    this.container = undefined;
    this.panes = undefined;
    this.cmp = undefined;
    this.msg = undefined;
    this.canvas.classList.remove('comparing');
    clear(this.head);
    this.head.hidden = true;
  }

  setHeat(metric: HeatMetric): void {
    this.heat = metric;
    if (!this.panes) return;
    this.panes.before.tree.setHeat(metric);
    this.panes.after.tree.setHeat(metric);
  }

  fit(): void {
    this.panes?.before.tree.fit();
    this.panes?.after.tree.fit();
  }

  resetCollapse(): void {
    this.panes?.before.tree.resetCollapse();
    this.panes?.after.tree.resetCollapse();
  }

  setMatches(side: Side, ids: number[]): void {
    this.panes?.[side].tree.setMatches(ids);
  }

  /** Focuses a node of one side (from a finding, a search hit or the host), its partner following. */
  focus(side: Side, id: number, opts: { highlight?: boolean; focus?: boolean } = { highlight: true }): boolean {
    const t = this.panes?.[side].tree;
    return t ? t.focusNode(id, opts) : false;
  }

  private selected(side: Side, node: PlanNode): void {
    if (this.syncing || !this.panes) return;
    const partner = this.partner(side, node.id);
    if (partner) {
      this.syncing = true;
      try {
        this.panes[other(side)].tree.focusNode(partner.id, { highlight: true, focus: false });
      } finally {
        this.syncing = false;
      }
    }
    this.cb.onSelect(side, node);
  }

  // ---- the head: verdict, counts, notes, totals --------------------------------------------------

  private renderHead(m: ShowComparisonMessage, c: ComparedPlans): void {
    clear(this.head);
    this.head.hidden = false;
    const summary = el('div', 'cmp-summary');
    const verdict = el('p', `verdict dir-${c.direction}`, c.verdict);
    verdict.setAttribute('role', 'status');
    summary.appendChild(verdict);
    const counts = el('div', 'cmp-counts');
    for (const s of ['changed', 'added', 'removed', 'unchanged'] as const) {
      const chip = el('span', `chip cmp-${s}`, `${c.counts[s]} ${STATUS_WORD[s]}`);
      chip.dataset.status = s;
      counts.appendChild(chip);
    }
    const f = c.findings;
    if (f.disappeared.length > 0 || f.appeared.length > 0) {
      counts.appendChild(el('span', 'cmp-findings', `findings: ${f.disappeared.length} resolved, ${f.appeared.length} new`));
    }
    summary.appendChild(counts);
    if (c.notes.length > 0) {
      const ul = el('ul', 'cmp-notes');
      for (const n of c.notes) ul.appendChild(el('li', undefined, n));
      summary.appendChild(ul);
    }
    const box = el('div', 'cmp-totals-box');
    const t = el('table', 'cmp-totals');
    const headRow = el('tr');
    // The labels can be long (file names, index definitions): the panes' headers show them in full.
    const side = (word: string, label: string): HTMLElement => {
      const th = el('th', 'cmp-col', word);
      th.title = label;
      return th;
    };
    append(headRow, el('th'), side('before', m.before.label), side('after', m.after.label), el('th', 'change', 'change'));
    const thead = el('thead');
    thead.appendChild(headRow);
    const tbody = el('tbody');
    for (const d of c.totals) {
      // Identical figures say nothing, except the rows returned: that both return the same is the point.
      if (d.before === d.after && d.key !== 'returned' && d.key !== 'rows') continue;
      const tr = el('tr', d.material ? `material trend-${d.trend}` : 'quiet');
      tr.dataset.key = d.key;
      append(tr, el('th', undefined, d.label), el('td', undefined, deltaValue(d, 'before')), el('td', undefined, deltaValue(d, 'after')), el('td', 'change', changeText(d)));
      tbody.appendChild(tr);
    }
    for (const fl of c.flags) {
      if (!fl.before && !fl.after) continue;
      const tr = el('tr', fl.before !== fl.after ? `material trend-${fl.trend}` : 'quiet');
      tr.dataset.key = fl.key;
      append(tr, el('th', undefined, fl.label), el('td', undefined, fl.before ? 'yes' : 'no'), el('td', undefined, fl.after ? 'yes' : 'no'), el('td', 'change', fl.before === fl.after ? '' : fl.trend));
      tbody.appendChild(tr);
    }
    append(t, thead, tbody);
    box.appendChild(t);
    append(this.head, summary, box);
  }
}

// ---- side panel ---------------------------------------------------------------------------------

export interface CompareLinks {
  focus(side: Side, id: number): void;
}

function findingLi(f: Finding, side: Side, plan: Plan | undefined, links: CompareLinks): HTMLLIElement {
  const li = el('li', `finding sev-${f.good ? 'good' : f.severity}`);
  li.dataset.code = f.code;
  const head = el('div', 'f-head');
  append(head, el('span', 'sev-pill', side === 'before' ? 'Before' : 'After'), el('span', 'f-title', f.title));
  li.append(head, el('div', 'f-message', f.message));
  const node = f.nodeId !== undefined ? plan?.nodes[f.nodeId] : undefined;
  if (node) {
    li.appendChild(el('div', 'f-node', `at ${node.label}`));
    activatable(li, () => links.focus(side, node.id));
  }
  return li;
}

/** The Findings tab of a comparison: what the after plan no longer has, what it gained, what stayed. */
export function renderCompareFindings(root: HTMLElement, view: CompareView, links: CompareLinks): void {
  clear(root);
  const c = view.comparison;
  if (!c) return;
  const sections: [string, string, Finding[], Side][] = [
    ['resolved', 'Resolved', c.findings.disappeared, 'before'],
    ['new', 'New', c.findings.appeared, 'after'],
    ['kept', 'Still there', view.findings('after').filter((f) => c.findings.kept.includes(f.code)), 'after'],
  ];
  for (const [key, title, list, side] of sections) {
    const sec = el('section', `cmp-findings-${key}`);
    sec.appendChild(el('h3', undefined, `${title} (${list.length})`));
    if (list.length === 0) sec.appendChild(el('p', 'empty', key === 'resolved' ? 'No finding of the before plan went away.' : key === 'new' ? 'The after plan has no finding the before plan did not have.' : 'No finding is common to both plans.'));
    else {
      const ul = el('ul', 'findings');
      for (const f of list) ul.appendChild(findingLi(f, side, view.plan(side), links));
      sec.appendChild(ul);
    }
    root.appendChild(sec);
  }
}

/** The top of the Node tab for a node of a comparison: its status, what changed, the figures side by side. */
export function renderCompareNode(root: HTMLElement, view: CompareView, side: Side, node: PlanNode, links: CompareLinks): void {
  clear(root);
  const e = view.entry(side, node.id);
  const msg = view.message;
  if (!e || !msg) return;
  const sec = el('section', `cmp-node cmp-${e.status}`);
  sec.appendChild(el('h3', undefined, 'Comparison'));
  const partner = view.partner(side, node.id);
  const where = side === 'before' ? 'after' : 'before';
  const status =
    e.status === 'added'
      ? 'Added: the before plan has no node doing this work.'
      : e.status === 'removed'
        ? 'Removed: the after plan has no node doing this work.'
        : e.status === 'changed'
          ? `Changed between ${msg.before.label} and ${msg.after.label}.`
          : 'Unchanged: the same node with the same figures in both plans.';
  sec.appendChild(el('p', 'cmp-status', status));
  if (e.differences.length > 0) {
    const ul = el('ul', 'cmp-differences');
    for (const d of e.differences) ul.appendChild(el('li', undefined, d));
    sec.appendChild(ul);
  }
  if (e.deltas.length > 0 && e.status !== 'added' && e.status !== 'removed') {
    const t = el('table', 'compare cmp-node-deltas');
    const head = el('tr');
    append(head, el('th'), el('th', undefined, 'before'), el('th', undefined, 'after'));
    t.appendChild(head);
    for (const d of e.deltas) {
      const tr = el('tr', d.material ? `material trend-${d.trend}` : 'quiet');
      append(tr, el('th', undefined, d.label), el('td', undefined, deltaValue(d, 'before')), el('td', undefined, deltaValue(d, 'after')));
      t.appendChild(tr);
    }
    sec.appendChild(t);
  }
  if (partner) {
    const bar = el('div', 'actions');
    bar.appendChild(button(`Show it in the ${where} plan`, 'secondary', () => links.focus(other(side), partner.id), `Focus the matching node of the ${where} plan`));
    sec.appendChild(bar);
  }
  root.appendChild(sec);
}
