// The canvas the trees are drawn in, with the note shown before the first plan and the heat legend.
// The trees are fitted to it: when the panel is resized (a group split, the side panel hidden), `refit`
// runs once the size settles.

import { Legend } from './bars';
import { append, el } from './dom';

export class PlanCanvas {
  readonly element = el('div', 'canvas');
  readonly legend = new Legend();
  private readonly emptyNote = el('div', 'empty-state', 'Waiting for a plan…');
  private lastSize = '';
  private refitTimer: number | undefined;

  constructor(refit: () => void) {
    append(this.element, this.emptyNote, this.legend.element);
    new ResizeObserver(() => {
      const size = `${this.element.clientWidth}x${this.element.clientHeight}`;
      if (size === this.lastSize || this.element.clientWidth === 0) return;
      this.lastSize = size;
      if (this.refitTimer !== undefined) window.clearTimeout(this.refitTimer);
      this.refitTimer = window.setTimeout(refit, 100);
    }).observe(this.element);
  }

  /** A plan is drawn: the waiting note goes. */
  hideEmptyNote(): void {
    this.emptyNote.hidden = true;
  }
}
