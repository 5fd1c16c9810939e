// The toolbar over the plan: its title and summary, the heat menu, the node search, Fit, Reset, the
// Export menu and the side panel's button. Each element is made and kept here; main.ts hands it what
// the buttons do and reads the preferences from the store.

import type { Plan } from '../src/core/view';
import { availableHeat, defaultHeat, HEAT_LABELS, type HeatMetric } from './cards';
import { append, button, clear, el } from './dom';
import type { ViewStore } from './store';

export type ExportKind = 'svg' | 'png' | 'json';

export interface ToolbarActions {
  fit(): void;
  reset(): void;
  export(kind: ExportKind): void;
  toggleSide(): void;
  /** The user chose another heat metric. */
  heat(metric: HeatMetric): void;
}

export interface SearchActions {
  /** The query changed (after typing stops, or at once on Enter and Escape). */
  run(): void;
  /** Enter and Shift+Enter: the next or previous hit. */
  step(dir: 1 | -1): void;
  /** Escape in an empty box: back to the tree. */
  leave(): void;
  /** Arrow down on a hit: into the tree at that hit. */
  enter(): void;
}

/** The node search: a box and its count of hits. The query runs once typing pauses. */
export class SearchBox {
  readonly element = el('div', 'search');
  private readonly input = el('input');
  private readonly count = el('span', 'search-count');
  private timer: number | undefined;

  constructor(
    private readonly store: ViewStore,
    on: SearchActions,
  ) {
    this.input.type = 'search';
    this.input.placeholder = 'Find node  /';
    this.input.setAttribute('aria-label', 'Find nodes by name');
    this.count.setAttribute('aria-live', 'polite');
    append(this.element, this.input, this.count);
    this.input.addEventListener('input', () => {
      if (this.timer !== undefined) window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => on.run(), 120);
    });
    this.input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        if (this.timer !== undefined) {
          window.clearTimeout(this.timer);
          this.timer = undefined;
          on.run();
        }
        on.step(ev.shiftKey ? -1 : 1);
      } else if (ev.key === 'Escape') {
        ev.preventDefault();
        if (this.input.value === '') on.leave();
        this.input.value = '';
        on.run();
      } else if (ev.key === 'ArrowDown' && this.store.state.searchPos >= 0) {
        ev.preventDefault();
        on.enter();
      }
    });
  }

  /** The query, trimmed and lower-cased; empty when there is none. */
  get query(): string {
    return this.input.value.trim().toLowerCase();
  }

  setCount(text: string): void {
    this.count.textContent = text;
  }

  /** Puts the cursor in the box with its text selected ('/' anywhere on the page). */
  focus(): void {
    this.input.focus();
    this.input.select();
  }
}

export class Toolbar {
  readonly element = el('header', 'toolbar');
  readonly search: SearchBox;
  private readonly title = el('h1', 'title', 'Query plan');
  private readonly summary = el('span', 'summary');
  private readonly heatSelect = el('select');
  private readonly exportMenu = el('details', 'menu export');
  private readonly placeholderBox = el('input');
  private readonly sideButton: HTMLButtonElement;

  constructor(
    private readonly store: ViewStore,
    on: ToolbarActions,
    search: SearchActions,
  ) {
    this.search = new SearchBox(store, search);
    const heatLabel = el('label', 'heat');
    this.heatSelect.setAttribute('aria-label', 'Colour nodes by');
    append(heatLabel, el('span', 'label-text', 'Heat'), this.heatSelect);
    this.heatSelect.addEventListener('change', () => on.heat(this.heat));
    const fitButton = button('Fit', 'secondary', () => on.fit(), 'Zoom to show the whole tree');
    const resetButton = button('Reset', 'secondary', () => on.reset(), 'Collapse back to the opening view');
    const exportPanel = el('div', 'menu-panel');
    const placeholderLabel = el('label', 'check');
    this.placeholderBox.type = 'checkbox';
    this.placeholderBox.checked = store.state.prefs.placeholders ?? false;
    this.placeholderBox.addEventListener('change', () => store.savePrefs({ placeholders: this.placeholderBox.checked }));
    append(placeholderLabel, this.placeholderBox, el('span', undefined, 'Replace literal values with ?'));
    const exportButtons = el('div', 'menu-buttons');
    append(
      exportButtons,
      button('SVG', 'secondary', () => on.export('svg'), 'Export the drawing as SVG'),
      button('PNG', 'secondary', () => on.export('png'), 'Export the drawing as PNG'),
      button('JSON', 'secondary', () => on.export('json'), 'Export the plan as JSON'),
    );
    append(exportPanel, placeholderLabel, exportButtons);
    append(this.exportMenu, el('summary', 'secondary', 'Export'), exportPanel);
    this.sideButton = button('Panel', 'secondary toggle-side', () => on.toggleSide(), 'Show or hide the side panel');
    append(this.element, this.title, this.summary, el('span', 'spacer'), heatLabel, this.search.element, fitButton, resetButton, this.exportMenu, this.sideButton);
  }

  /** The title of what is shown, also the page's. */
  setTitle(text: string): void {
    // The next Explain of the same query has the same title: leave the page's title alone then.
    if (this.title.textContent === text && document.title === text) return;
    this.title.textContent = text;
    this.title.title = text;
    document.title = text;
  }

  setSummary(text: string): void {
    this.summary.textContent = text;
    this.summary.title = text;
  }

  /** Fills the heat menu with the metrics a plan has and returns the one to draw with: the kept preference, or the plan's default. */
  fillHeat(plan: Plan): HeatMetric {
    const options: HeatMetric[] = ['none', ...availableHeat(plan)];
    // The next plan of the same engine and kind usually has the same metrics: the menu stays as it is.
    const current = Array.from(this.heatSelect.options, (o) => o.value);
    if (current.length !== options.length || current.some((v, i) => v !== options[i])) {
      clear(this.heatSelect);
      for (const h of options) {
        const o = el('option', undefined, HEAT_LABELS[h]);
        o.value = h;
        this.heatSelect.appendChild(o);
      }
    }
    const wanted = this.store.state.prefs.heat as HeatMetric | undefined;
    const metric = wanted && options.includes(wanted) ? wanted : defaultHeat(plan);
    // Setting a form control's value, even to the one it has, has the browser look at the form again
    // (a layout of the page in a task of its own).
    if (this.heatSelect.value !== metric) this.heatSelect.value = metric;
    return metric;
  }

  get heat(): HeatMetric {
    return this.heatSelect.value as HeatMetric;
  }

  /** Whether exports replace literal values with placeholders. */
  get placeholders(): boolean {
    return this.placeholderBox.checked;
  }

  closeExportMenu(): void {
    this.exportMenu.open = false;
  }

  /** The side panel's button shows whether the panel is shown. */
  setSideShown(shown: boolean): void {
    this.sideButton.setAttribute('aria-pressed', String(shown));
  }
}
