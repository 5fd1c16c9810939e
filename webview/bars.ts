// The bars around the tree, each made and kept by its component: the notice, the comparison's mode
// buttons, the rejected plan's bar and the heat legend.

import type { RejectedPlan } from '../src/core/view';
import { HEAT_LABELS, type HeatMetric } from './cards';
import { append, button, clear, el } from './dom';
import type { CompareMode } from './store';

/** One sentence for the user (a refused comparison, a malformed message, a failed export), with Dismiss. */
export class Notice {
  readonly element = el('div', 'notice');
  private readonly text = el('span', 'notice-text');

  constructor() {
    this.element.setAttribute('role', 'status');
    this.element.hidden = true;
    append(this.element, this.text, button('Dismiss', 'link', () => (this.element.hidden = true)));
  }

  show(text: string): void {
    this.text.textContent = text;
    this.element.hidden = false;
  }

  /** Hides the notice if it still says `text` (a later sentence stays). */
  hide(text: string): void {
    if (this.text.textContent === text) this.element.hidden = true;
  }
}

/** The buttons that show a comparison side by side or one of its plans alone. */
export class CompareBar {
  readonly element = el('div', 'compare-bar');

  constructor() {
    this.element.hidden = true;
  }

  show(mode: CompareMode, labels: { before: string; after: string }, choose: (mode: CompareMode) => void): void {
    clear(this.element);
    const modes: [CompareMode, string, string][] = [
      ['both', 'Side by side', 'Both plans, nodes matched'],
      ['before', `Before: ${labels.before}`, 'The before plan alone'],
      ['after', `After: ${labels.after}`, 'The after plan alone'],
    ];
    for (const [k, label, tip] of modes) {
      const b = button(label, k === mode ? 'primary' : 'secondary', () => choose(k), tip);
      b.setAttribute('aria-pressed', String(k === mode));
      b.dataset.mode = k;
      this.element.appendChild(b);
    }
    this.element.hidden = false;
  }

  hide(): void {
    this.element.hidden = true;
  }
}

/** Says that a rejected plan is drawn, with the way back to the winning plan. */
export class RejectedBar {
  readonly element = el('div', 'rejected-bar');

  constructor() {
    this.element.hidden = true;
  }

  show(r: RejectedPlan, back: () => void): void {
    clear(this.element);
    append(
      this.element,
      el('span', undefined, `Showing rejected plan #${r.index + 1}${r.shardName ? ` on shard ${r.shardName}` : ''}: its figures are from the planner's trial run.`),
      button('Back to the winning plan', 'link', back),
    );
    this.element.hidden = false;
  }

  hide(): void {
    this.element.hidden = true;
  }
}

/** What the heat colours and the edge widths mean, and the keys the tree answers. */
export class Legend {
  readonly element = el('div', 'legend');

  render(metric: HeatMetric, comparing: boolean): void {
    clear(this.element);
    if (metric !== 'none') {
      append(this.element, el('span', 'legend-label', HEAT_LABELS[metric]), el('span', 'legend-ramp'), el('span', 'legend-label', 'max'));
    }
    append(this.element, el('span', 'legend-edge'), el('span', 'legend-label', 'edge width: rows'), el('span', 'legend-hint', `scroll zoom · drag pan · / find · arrows move · Enter folds${comparing ? ' · p matching node' : ''}`));
  }
}
