// The plan view: builds the page, listens for the host's messages (each validated and handled inside
// try/catch), draws the plan tree and its side panel, and answers with typed messages. It says `ready`
// once it listens, so the host never has to guess with a delay.

import type { Finding, Plan, PlanNode } from '../src/core/view';
import {
  isViewMessageType, parseHostMessage, WEBVIEW_PROTOCOL_VERSION,
  type HostToViewMessage, type SaveFileMessage, type ShowComparisonMessage, type ShowPlanMessage, type SuggestionView, type ThemeKind,
} from '../src/protocol/webview';
import { availableHeat, defaultHeat, HEAT_LABELS, type HeatMetric } from './cards';
import { CompareView, renderCompareFindings, renderCompareNode, sharedScale, type CompareLinks, type Side } from './compare';
import { append, button, clear, el } from './dom';
import { download, exportJson, exportSvg, fileNameFor, svgToPng } from './export';
import { formatCount, formatMs } from '../src/core/view';
import { connectHost } from './host';
import { renderDetails, renderFindings, renderPlanInfo, renderRaw, type PanelActions } from './panels';
import { TreeView } from './tree';
import { TABS, ViewStore, type CompareMode, type SearchHit, type Tab } from './store';

const host = connectHost();
const store = new ViewStore(host.getState(), (prefs) => host.setState(prefs));
const view = store.state;

// ---- page ----------------------------------------------------------------------------------------

const app = document.getElementById('app') ?? document.body.appendChild(el('div'));
app.className = 'app';

const toolbar = el('header', 'toolbar');
const titleEl = el('h1', 'title', 'Query plan');
const summaryEl = el('span', 'summary');
const heatLabel = el('label', 'heat');
const heatSelect = el('select');
heatSelect.setAttribute('aria-label', 'Colour nodes by');
append(heatLabel, el('span', 'label-text', 'Heat'), heatSelect);
const searchBox = el('div', 'search');
const searchInput = el('input');
searchInput.type = 'search';
searchInput.placeholder = 'Find node  /';
searchInput.setAttribute('aria-label', 'Find nodes by name');
const searchCount = el('span', 'search-count');
searchCount.setAttribute('aria-live', 'polite');
append(searchBox, searchInput, searchCount);
const fitButton = button('Fit', 'secondary', () => (compareView.active ? compareView.fit() : tree.fit()), 'Zoom to show the whole tree');
const resetButton = button('Reset', 'secondary', () => (compareView.active ? compareView.resetCollapse() : tree.resetCollapse()), 'Collapse back to the opening view');
const exportMenu = el('details', 'menu export');
const exportSummary = el('summary', 'secondary', 'Export');
const exportPanel = el('div', 'menu-panel');
const placeholderLabel = el('label', 'check');
const placeholderBox = el('input');
placeholderBox.type = 'checkbox';
placeholderBox.checked = view.prefs.placeholders ?? false;
placeholderBox.addEventListener('change', () => store.savePrefs({ placeholders: placeholderBox.checked }));
append(placeholderLabel, placeholderBox, el('span', undefined, 'Replace literal values with ?'));
const exportButtons = el('div', 'menu-buttons');
append(
  exportButtons,
  button('SVG', 'secondary', () => void runExport('svg'), 'Export the drawing as SVG'),
  button('PNG', 'secondary', () => void runExport('png'), 'Export the drawing as PNG'),
  button('JSON', 'secondary', () => void runExport('json'), 'Export the plan as JSON'),
);
append(exportPanel, placeholderLabel, exportButtons);
append(exportMenu, exportSummary, exportPanel);
const sideButton = button('Panel', 'secondary toggle-side', () => setSideHidden(!app.classList.contains('side-hidden')), 'Show or hide the side panel');
const spacer = el('span', 'spacer');
append(toolbar, titleEl, summaryEl, spacer, heatLabel, searchBox, fitButton, resetButton, exportMenu, sideButton);

const notice = el('div', 'notice');
notice.setAttribute('role', 'status');
notice.hidden = true;
const noticeText = el('span', 'notice-text');
append(notice, noticeText, button('Dismiss', 'link', () => (notice.hidden = true)));

const compareBar = el('div', 'compare-bar');
compareBar.hidden = true;
const compareHead = el('section', 'compare-head');
compareHead.setAttribute('aria-label', 'Comparison');
compareHead.hidden = true;
const rejectedBar = el('div', 'rejected-bar');
rejectedBar.hidden = true;

const body = el('main', 'body');
const canvas = el('div', 'canvas');
const emptyNote = el('div', 'empty-state', 'Waiting for a plan…');
const legend = el('div', 'legend');
const side = el('aside', 'side');
const tabs = el('div', 'tabs');
tabs.setAttribute('role', 'tablist');
const panels: Record<Tab, HTMLElement> = {
  findings: el('section', 'tab-panel findings-panel'),
  node: el('section', 'tab-panel node-panel'),
  raw: el('section', 'tab-panel raw-panel'),
  plan: el('section', 'tab-panel plan-panel'),
};
const tabButtons: Record<Tab, HTMLButtonElement> = {
  findings: button('Findings', 'tab', () => selectTab('findings')),
  node: button('Node', 'tab', () => selectTab('node')),
  raw: button('Raw', 'tab', () => selectTab('raw')),
  plan: button('Plan', 'tab', () => selectTab('plan')),
};
for (const t of Object.keys(tabButtons) as Tab[]) {
  const b = tabButtons[t];
  b.setAttribute('role', 'tab');
  b.id = `tab-${t}`;
  b.dataset.tab = t;
  panels[t].setAttribute('role', 'tabpanel');
  panels[t].setAttribute('aria-labelledby', b.id);
  panels[t].tabIndex = 0;
  tabs.appendChild(b);
}
append(side, tabs, ...Object.values(panels));
append(canvas, emptyNote, legend);
append(body, canvas, side);
const exportStage = el('div', 'export-stage');
exportStage.setAttribute('aria-hidden', 'true');
append(app, toolbar, notice, compareBar, compareHead, rejectedBar, body, exportStage);

const tree = new TreeView(canvas, {
  onSelect: (node) => {
    store.select(node);
    if (view.drawn) renderDetails(panels.node, node, view.drawn.plan, view.drawn.findings, actions);
  },
  onOpen: (node) => host.post({ type: 'openNode', nodeId: node.id, kind: node.kind, label: node.label }),
  onClickNode: () => selectTab('node'),
});

/**
 * The suggestion the user last pressed Verify or Create Index on. Only its news moves the list: the
 * verdicts a measurement sends on its own (after an Explain) leave the panel where the user is, which
 * after opening is its top, the plan and the summary, not the last verdict to arrive.
 */
let askedFor: string | undefined;

// The tree is fitted to the canvas it was drawn in: when the panel is resized (a group split, the side
// panel hidden), it is fitted again, once the size settles.
let lastSize = '';
let refit: number | undefined;
new ResizeObserver(() => {
  const size = `${canvas.clientWidth}x${canvas.clientHeight}`;
  if (size === lastSize || canvas.clientWidth === 0) return;
  lastSize = size;
  if (refit !== undefined) window.clearTimeout(refit);
  refit = window.setTimeout(() => {
    if (compareView.active) compareView.fit();
    else if (view.drawn) tree.fit();
  }, 100);
}).observe(canvas);

const actions: PanelActions = {
  focusNode: (id) => {
    if (view.drawn?.rejected !== undefined) showRejected(undefined);
    if (tree.focusNode(id, { highlight: true })) {
      const n = tree.node(id);
      if (n) {
        store.select(n);
        if (view.drawn) renderDetails(panels.node, n, view.drawn.plan, view.drawn.findings, actions);
      }
    }
  },
  copy: (text, what) => host.post({ type: 'copyText', text, what }),
  verify: (id) => {
    askedFor = id;
    setSuggestionStatus(id, 'verifying');
    host.post({ type: 'verifySuggestion', id });
  },
  createIndex: (id) => {
    askedFor = id;
    setSuggestionStatus(id, 'creating');
    host.post({ type: 'createIndex', id });
  },
  openNode: (node) => host.post({ type: 'openNode', nodeId: node.id, kind: node.kind, label: node.label }),
  showRejected: (index) => showRejected(index),
};

const compareLinks: CompareLinks = {
  focus: (side, id) => {
    if (!compareView.focus(side, id)) showNotice(`The ${side} plan has no node ${id}.`);
  },
};

/** Panel actions for a node of one side of the comparison. */
function sideActions(side: Side): PanelActions {
  return { ...actions, focusNode: (id) => compareLinks.focus(side, id) };
}

const compareView = new CompareView(canvas, compareHead, {
  onSelect: (side, node) => {
    store.select(node);
    renderCompareNodePanel(side, node);
  },
  onOpen: (_side, node) => host.post({ type: 'openNode', nodeId: node.id, kind: node.kind, label: node.label }),
  onClickNode: () => selectTab('node'),
});

function renderCompareNodePanel(side: Side, node: PlanNode): void {
  const plan = compareView.plan(side);
  if (!plan) return;
  clear(panels.node);
  const cmpBox = el('div', 'cmp-node-box');
  const detailBox = el('div', 'node-details-box');
  append(panels.node, cmpBox, detailBox);
  renderCompareNode(cmpBox, compareView, side, node, compareLinks);
  renderDetails(detailBox, node, plan, compareView.findings(side), sideActions(side));
}

// ---- small helpers -------------------------------------------------------------------------------

function showNotice(text: string): void {
  noticeText.textContent = text;
  notice.hidden = false;
}

function setSideHidden(hidden: boolean): void {
  app.classList.toggle('side-hidden', hidden);
  sideButton.setAttribute('aria-pressed', String(!hidden));
  store.savePrefs({ sideHidden: hidden });
}
setSideHidden(view.prefs.sideHidden ?? false);

function selectTab(t: Tab): void {
  store.selectTab(t);
  for (const k of TABS) {
    tabButtons[k].setAttribute('aria-selected', String(k === t));
    tabButtons[k].tabIndex = k === t ? 0 : -1;
    panels[k].hidden = k !== t;
  }
  const shown = view.shown;
  if (t === 'raw' && shown && !panels.raw.dataset.filled) {
    if (!shown.comparison && shown.rawText === undefined && shown.hasRawText) {
      // Asked for once per plan; the answer (`rawText`) fills the tab.
      if (store.askRawText()) host.post({ type: 'rawTextWanted' });
      renderRaw(panels.raw, undefined, view.drawn?.plan ?? shown.plan, true);
      return;
    }
    renderRaw(panels.raw, shown.comparison ? undefined : shown.rawText, view.drawn?.plan ?? shown.plan);
    panels.raw.dataset.filled = '1';
  }
}

tabs.addEventListener('keydown', (ev) => {
  let next: Tab | undefined;
  if (ev.key === 'ArrowRight') next = store.nextTab(1);
  else if (ev.key === 'ArrowLeft') next = store.nextTab(-1);
  if (next) {
    ev.preventDefault();
    selectTab(next);
    tabButtons[next].focus();
  }
});

function applyTheme(kind: ThemeKind): void {
  const classes: Record<ThemeKind, string> = {
    light: 'vscode-light',
    dark: 'vscode-dark',
    'high-contrast': 'vscode-high-contrast',
    'high-contrast-light': 'vscode-high-contrast-light',
  };
  document.body.classList.remove(...Object.values(classes));
  document.body.classList.add(classes[kind]);
  if (kind === 'high-contrast-light') document.body.classList.add('vscode-high-contrast');
  document.body.dataset.vscodeThemeKind = classes[kind];
  // Card sizes depend on the font, which a theme can change: redraw.
  if (compareView.active) compareView.redraw();
  else if (view.drawn) drawTree(view.drawn.plan, view.drawn.findings, false);
}

// ---- drawing -------------------------------------------------------------------------------------

function fillHeatOptions(plan: Plan): HeatMetric {
  clear(heatSelect);
  const avail = availableHeat(plan);
  const options: HeatMetric[] = ['none', ...avail];
  for (const h of options) {
    const o = el('option', undefined, HEAT_LABELS[h]);
    o.value = h;
    heatSelect.appendChild(o);
  }
  const wanted = view.prefs.heat as HeatMetric | undefined;
  const metric = wanted && options.includes(wanted) ? wanted : defaultHeat(plan);
  heatSelect.value = metric;
  return metric;
}

function renderLegend(metric: HeatMetric): void {
  clear(legend);
  if (metric !== 'none') {
    append(legend, el('span', 'legend-label', HEAT_LABELS[metric]), el('span', 'legend-ramp'), el('span', 'legend-label', 'max'));
  }
  append(legend, el('span', 'legend-edge'), el('span', 'legend-label', 'edge width: rows'), el('span', 'legend-hint', `scroll zoom · drag pan · / find · arrows move · Enter folds${compareView.active ? ' · p matching node' : ''}`));
}

heatSelect.addEventListener('change', () => {
  const m = heatSelect.value as HeatMetric;
  tree.setHeat(m);
  compareView.setHeat(m);
  renderLegend(m);
  store.savePrefs({ heat: m });
});

function summaryOf(plan: Plan): string {
  const parts: string[] = [];
  parts.push(plan.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL');
  if (plan.serverVersion) parts[0] += ` ${plan.serverVersion}`;
  const t = plan.totals;
  if (t.executionTimeMs !== undefined) parts.push(formatMs(t.executionTimeMs));
  if (plan.engine === 'mongodb') {
    if (t.nReturned !== undefined) parts.push(`${formatCount(t.nReturned)} returned`);
    if (t.keysExamined !== undefined) parts.push(`${formatCount(t.keysExamined)} keys`);
    if (t.docsExamined !== undefined) parts.push(`${formatCount(t.docsExamined)} docs`);
  } else if (t.rows !== undefined) parts.push(`${formatCount(t.rows)} rows`);
  parts.push(`${formatCount(plan.nodes.length)} nodes`);
  return parts.join(' · ');
}

function drawTree(plan: Plan, findings: Finding[], resetSelection = true): void {
  emptyNote.hidden = true;
  const metric = fillHeatOptions(plan);
  tree.setPlan(plan, findings, metric);
  renderLegend(metric);
  summaryEl.textContent = summaryOf(plan);
  summaryEl.title = summaryEl.textContent;
  const kept = resetSelection || !view.selected ? undefined : tree.node(view.selected.id);
  const selected = kept ?? plan.root;
  store.select(selected);
  renderDetails(panels.node, selected, plan, findings, actions);
  runSearch();
}

function renderSide(): void {
  const { shown, drawn } = view;
  if (!shown || !drawn) return;
  if (compareView.active) renderCompareFindings(panels.findings, compareView, compareLinks);
  else renderFindings(panels.findings, shown.plan, shown.findings, shown.suggestions, actions);
  const cmp = shown.comparison;
  renderPlanInfo(
    panels.plan,
    shown.plan,
    drawn.rejected,
    actions,
    cmp ? { before: cmp.before.plan, after: cmp.after.plan, beforeLabel: cmp.before.label, afterLabel: cmp.after.label } : undefined,
  );
  delete panels.raw.dataset.filled;
  if (view.activeTab === 'raw') selectTab('raw');
  const changedFindings = compareView.comparison ? compareView.comparison.findings.appeared.length + compareView.comparison.findings.disappeared.length : undefined;
  const findingCount = changedFindings ?? shown.findings.length;
  tabButtons.findings.textContent = findingCount > 0 ? `Findings ${findingCount}` : 'Findings';
}

function showRejected(position: number | undefined): void {
  if (!view.shown) return;
  // Rejected plans are drawn alone: leave the side-by-side view for the after plan first.
  const cmpMsg = compareView.message;
  if (cmpMsg) showComparison(cmpMsg, 'after');
  const drawn = store.drawRejected(position);
  if (!drawn) return;
  if (drawn.rejected === undefined) {
    rejectedBar.hidden = true;
  } else {
    const r = view.shown.plan.rejectedPlans[drawn.rejected]!;
    clear(rejectedBar);
    append(
      rejectedBar,
      el('span', undefined, `Showing rejected plan #${r.index + 1}${r.shardName ? ` on shard ${r.shardName}` : ''}: its figures are from the planner's trial run.`),
      button('Back to the winning plan', 'link', () => showRejected(undefined)),
    );
    rejectedBar.hidden = false;
  }
  drawTree(drawn.plan, drawn.findings);
  renderSide();
}

function showPlan(m: ShowPlanMessage): void {
  store.showPlan(m);
  askedFor = undefined;
  // A new plan opens at its top: the summary and the plan first.
  for (const p of Object.values(panels)) p.scrollTop = 0;
  document.scrollingElement?.scrollTo(0, 0);
  titleEl.textContent = m.title;
  titleEl.title = m.title;
  document.title = m.title;
  compareView.hide();
  compareBar.hidden = true;
  rejectedBar.hidden = true;
  drawTree(m.plan, m.findings);
  renderSide();
  selectTab(view.activeTab);
}

/**
 * Shows two plans: side by side by default, or one of them alone (the buttons switch). The comparison is
 * computed here from the two plans (see compare.ts); plans that cannot be compared fall back to the
 * after plan alone with the reason in the notice bar.
 */
function showComparison(m: ShowComparisonMessage, mode: CompareMode = 'both'): void {
  let side = mode;
  if (side === 'both') {
    const refusal = compareView.show(m, heatFor(sharedScale(m).after));
    if (refusal !== undefined) {
      showNotice(refusal);
      side = 'after';
    }
  }
  if (side !== 'both') compareView.hide();
  const pick = store.showComparison(m, side);
  titleEl.textContent = m.title;
  titleEl.title = m.title;
  document.title = m.title;
  clear(compareBar);
  const modes: [CompareMode, string, string][] = [
    ['both', 'Side by side', 'Both plans, nodes matched'],
    ['before', `Before: ${m.before.label}`, 'The before plan alone'],
    ['after', `After: ${m.after.label}`, 'The after plan alone'],
  ];
  for (const [k, label, tip] of modes) {
    const b = button(label, k === side ? 'primary' : 'secondary', () => showComparison(m, k), tip);
    b.setAttribute('aria-pressed', String(k === side));
    b.dataset.mode = k;
    compareBar.appendChild(b);
  }
  compareBar.hidden = false;
  rejectedBar.hidden = true;
  if (side === 'both') {
    emptyNote.hidden = true;
    renderLegend(heatSelect.value as HeatMetric);
    const engine = m.after.plan.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL';
    summaryEl.textContent = `${engine} · before ${formatCount(m.before.plan.nodes.length)} nodes · after ${formatCount(m.after.plan.nodes.length)} nodes`;
    summaryEl.title = summaryEl.textContent;
    store.select(m.after.plan.root);
    renderCompareNodePanel('after', m.after.plan.root);
    runSearch();
  } else {
    drawTree(pick.plan, pick.findings);
  }
  renderSide();
  selectTab(view.activeTab);
}

/** Fills the heat menu for a plan and returns the metric to draw with. */
function heatFor(plan: Plan): HeatMetric {
  return fillHeatOptions(plan);
}

function setSuggestionStatus(id: string, status: SuggestionView['status'], detail?: string, verdict?: SuggestionView['verdict']): void {
  if (!store.setSuggestionStatus(id, status, detail, verdict) || !view.shown) return;
  const shown = view.shown;
  // Redrawing the list would reset its scroll: keep it, and keep the suggestion the user acted on in view.
  const top = panels.findings.scrollTop;
  renderFindings(panels.findings, shown.plan, shown.findings, shown.suggestions, actions);
  panels.findings.scrollTop = top;
  if (id !== askedFor) return;
  const item = panels.findings.querySelector<HTMLElement>(`li.suggestion[data-id="${CSS.escape(id)}"]`);
  if (item) keepInView(panels.findings, item);
}

/**
 * Scrolls the list (and only the list: scrollIntoView would scroll the page too, moving the plan out of
 * a narrow panel) so that the item is visible.
 */
function keepInView(list: HTMLElement, item: HTMLElement): void {
  const box = list.getBoundingClientRect();
  const at = item.getBoundingClientRect();
  if (at.top < box.top) list.scrollTop -= box.top - at.top;
  else if (at.bottom > box.bottom) list.scrollTop += Math.min(at.bottom - box.bottom, at.top - box.top);
}

// ---- search --------------------------------------------------------------------------------------

function searchText(n: PlanNode): string {
  const d = n.details;
  return [n.kind, n.label, d.relationName, d.indexName, d.alias, d.cteName, d.subplanName, d.shardName, d.schema].filter(Boolean).join(' ').toLowerCase();
}

function hitsIn(root: PlanNode, q: string, side?: Side): SearchHit[] {
  const out: SearchHit[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (searchText(n).includes(q)) out.push(side ? { id: n.id, side } : { id: n.id });
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out.sort((a, b) => a.id - b.id);
}

function runSearch(): void {
  const q = searchInput.value.trim().toLowerCase();
  let hits: SearchHit[] = [];
  if (compareView.active) {
    for (const side of ['before', 'after'] as const) {
      const plan = compareView.plan(side);
      const sideHits = q && plan ? hitsIn(plan.root, q, side) : [];
      compareView.setMatches(side, sideHits.map((h) => h.id));
      hits.push(...sideHits);
    }
  } else {
    if (q && view.drawn) hits = hitsIn(view.drawn.plan.root, q);
    tree.setMatches(hits.map((h) => h.id));
  }
  store.setSearchHits(hits);
  searchCount.textContent = q ? (hits.length === 0 ? 'no match' : `${hits.length} found`) : '';
}

function gotoHit(step: 1 | -1): void {
  const hit = store.stepSearch(step);
  if (!hit) return;
  if (hit.side) compareView.focus(hit.side, hit.id, { highlight: true, focus: false });
  else tree.focusNode(hit.id, { highlight: true, focus: false });
  searchCount.textContent = `${view.searchPos + 1} of ${view.searchHits.length}`;
}

let searchTimer: number | undefined;
searchInput.addEventListener('input', () => {
  if (searchTimer !== undefined) window.clearTimeout(searchTimer);
  searchTimer = window.setTimeout(runSearch, 120);
});
searchInput.addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter') {
    ev.preventDefault();
    if (searchTimer !== undefined) {
      window.clearTimeout(searchTimer);
      searchTimer = undefined;
      runSearch();
    }
    gotoHit(ev.shiftKey ? -1 : 1);
  } else if (ev.key === 'Escape') {
    ev.preventDefault();
    if (searchInput.value === '') activeTree().focusActive();
    searchInput.value = '';
    runSearch();
  } else if (ev.key === 'ArrowDown' && view.searchPos >= 0) {
    ev.preventDefault();
    const hit = view.searchHits[view.searchPos];
    (hit?.side ? (compareView.tree(hit.side) ?? tree) : tree).focusActive();
  }
});

document.addEventListener('keydown', (ev) => {
  const t = ev.target as HTMLElement | null;
  const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
  if (ev.key === '/' && !typing) {
    ev.preventDefault();
    searchInput.focus();
    searchInput.select();
  }
});

// ---- export --------------------------------------------------------------------------------------

/** The tree the toolbar acts on: the after plan's when the two are side by side. */
function activeTree(): TreeView {
  return compareView.tree('after') ?? tree;
}

async function runExport(kind: 'svg' | 'png' | 'json'): Promise<void> {
  const { shown, drawn } = view;
  if (!shown || !drawn) {
    showNotice('There is no plan to export yet.');
    return;
  }
  const placeholders = placeholderBox.checked;
  exportMenu.open = false;
  try {
    let msg: SaveFileMessage;
    if (kind === 'json') {
      msg = { type: 'saveFile', fileName: fileNameFor(shown.title, 'json'), mimeType: 'application/json', encoding: 'utf8', content: exportJson(drawn.plan, drawn.findings, shown.title, placeholders) };
    } else {
      const svg = exportSvg(activeTree(), drawn.plan, placeholders, exportStage);
      if (kind === 'svg') {
        msg = { type: 'saveFile', fileName: fileNameFor(shown.title, 'svg'), mimeType: 'image/svg+xml', encoding: 'utf8', content: svg.text };
      } else {
        const png = await svgToPng(svg.text, svg.width, svg.height);
        msg = { type: 'saveFile', fileName: fileNameFor(shown.title, 'png'), mimeType: 'image/png', encoding: 'base64', content: png };
      }
    }
    host.post(msg);
    if (!host.embedded) download(msg);
  } catch (err) {
    reportError(`The ${kind.toUpperCase()} export failed`, err);
  }
}

// ---- messages ------------------------------------------------------------------------------------

function reportError(what: string, err: unknown): void {
  const detail = err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err);
  showNotice(`${what}; the details went to the extension's log.`);
  host.post({ type: 'reportError', message: what, detail });
}

function handle(m: HostToViewMessage): void {
  switch (m.type) {
    case 'showPlan':
      showPlan(m);
      break;
    case 'showComparison':
      showComparison(m);
      break;
    case 'rawText':
      if (store.setRawText(m.text)) {
        delete panels.raw.dataset.filled;
        if (view.activeTab === 'raw') selectTab('raw');
      }
      break;
    case 'setTheme':
      applyTheme(m.kind);
      break;
    case 'focusNode':
      if (compareView.active) {
        // The host's node ids are the after plan's, the one it explained last.
        if (!compareView.focus('after', m.nodeId)) showNotice(`The plan has no node ${m.nodeId}.`);
        break;
      }
      if (view.drawn?.rejected !== undefined) showRejected(undefined);
      if (!tree.focusNode(m.nodeId, { highlight: true })) showNotice(`The plan has no node ${m.nodeId}.`);
      break;
    case 'suggestionStatus':
      setSuggestionStatus(m.id, m.status, m.detail, m.verdict);
      break;
    case 'setSuggestions':
      if (store.setSuggestions(m.suggestions) && view.shown) {
        const top = panels.findings.scrollTop;
        renderFindings(panels.findings, view.shown.plan, view.shown.findings, view.shown.suggestions, actions);
        panels.findings.scrollTop = top;
      }
      break;
  }
}

window.addEventListener('message', (ev: MessageEvent) => {
  try {
    const data: unknown = ev.data;
    // Standalone, a parent page may echo our own messages back; they are not for us.
    if (data && typeof data === 'object' && isViewMessageType((data as { type?: unknown }).type)) return;
    const parsed = parseHostMessage(data);
    if (!parsed.ok) {
      showNotice(`Ignored a malformed message: ${parsed.reason}.`);
      return;
    }
    handle(parsed.message);
  } catch (err) {
    reportError('The view failed to show a message', err);
  }
});

window.addEventListener('error', (ev) => {
  host.post({ type: 'reportError', message: 'Uncaught error in the plan view', detail: String(ev.message) });
});

selectTab('findings');
renderLegend('none');
host.post({ type: 'ready', protocolVersion: WEBVIEW_PROTOCOL_VERSION });

