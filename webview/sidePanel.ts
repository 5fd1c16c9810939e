// The side panel: four tabs (Findings, Node, Raw, Plan) and their panels, made and kept here. The open
// tab is the store's; main.ts fills the panels and decides what opening a tab asks of the host.

import { append, button, el } from './dom';
import { TABS, type Tab, type ViewStore } from './store';

export class SidePanel {
  readonly element = el('aside', 'side');
  /** Each tab's panel, for main.ts to fill. */
  readonly panels: Record<Tab, HTMLElement> = {
    findings: el('section', 'tab-panel findings-panel'),
    node: el('section', 'tab-panel node-panel'),
    raw: el('section', 'tab-panel raw-panel'),
    plan: el('section', 'tab-panel plan-panel'),
  };
  private readonly buttons: Record<Tab, HTMLButtonElement>;

  /** `open` is what a click or an arrow key on the tabs asks for. */
  constructor(
    private readonly store: ViewStore,
    open: (t: Tab) => void,
  ) {
    const tabs = el('div', 'tabs');
    tabs.setAttribute('role', 'tablist');
    this.buttons = {
      findings: button('Findings', 'tab', () => open('findings')),
      node: button('Node', 'tab', () => open('node')),
      raw: button('Raw', 'tab', () => open('raw')),
      plan: button('Plan', 'tab', () => open('plan')),
    };
    for (const t of TABS) {
      const b = this.buttons[t];
      b.setAttribute('role', 'tab');
      b.id = `tab-${t}`;
      b.dataset.tab = t;
      this.panels[t].setAttribute('role', 'tabpanel');
      this.panels[t].setAttribute('aria-labelledby', b.id);
      this.panels[t].tabIndex = 0;
      tabs.appendChild(b);
    }
    tabs.addEventListener('keydown', (ev) => {
      let next: Tab | undefined;
      if (ev.key === 'ArrowRight') next = store.nextTab(1);
      else if (ev.key === 'ArrowLeft') next = store.nextTab(-1);
      if (next) {
        ev.preventDefault();
        open(next);
        this.buttons[next].focus();
      }
    });
    append(this.element, tabs, ...Object.values(this.panels));
  }

  /** Shows the store's open tab and hides the others. */
  showOpenTab(): void {
    const t = this.store.state.activeTab;
    for (const k of TABS) {
      this.buttons[k].setAttribute('aria-selected', String(k === t));
      this.buttons[k].tabIndex = k === t ? 0 : -1;
      this.panels[k].hidden = k !== t;
    }
  }

  /** The Findings tab counts what it lists. */
  setFindingCount(count: number): void {
    this.buttons.findings.textContent = count > 0 ? `Findings ${count}` : 'Findings';
  }

  /** A new plan opens every panel at its top. */
  scrollToTop(): void {
    for (const p of Object.values(this.panels)) p.scrollTop = 0;
  }
}
