// The plan view: builds the page, listens for the host's messages (each validated and handled inside
// try/catch), draws the plan tree and its side panel, and answers with typed messages. It says `ready`
// once it listens, so the host never has to guess with a delay.

import type { Finding, Plan, PlanNode } from '../src/core/view';
import {
  isViewMessageType, parseHostMessage, WEBVIEW_PROTOCOL_VERSION,
  type HostToViewMessage, type SaveFileMessage, type ShowComparisonMessage, type ShowPlanMessage, type SuggestionView, type ThemeKind,
} from '../src/protocol/webview';
import type { HeatMetric } from './cards';
import { CompareBar, Notice, RejectedBar } from './bars';
import { PlanCanvas } from './canvas';
import { CompareView, renderCompareFindings, renderCompareNode, sharedScale, type CompareLinks, type Side } from './compare';
import { append, clear, el, layOutNow } from './dom';
import { download, exportJson, exportSvg, fileNameFor, svgToPng } from './export';
import { formatCount, formatMs } from '../src/core/view';
import { connectHost } from './host';
import { renderDetails, renderFindings, renderPlanInfo, renderRaw, type PanelActions } from './panels';
import { SidePanel } from './sidePanel';
import { Toolbar, type ExportKind } from './toolbar';
import { TreeView } from './tree';
import { ViewStore, type CompareMode, type SearchHit, type Tab } from './store';

const host = connectHost();
const store = new ViewStore(host.getState(), (prefs) => host.setState(prefs));
const view = store.state;

// ---- page ----------------------------------------------------------------------------------------
// Each part of the page is a component that makes and keeps its own elements (toolbar.ts, bars.ts,
// sidePanel.ts, tree.ts, compare.ts); this file wires them to the store and the host.

const app = document.getElementById('app') ?? document.body.appendChild(el('div'));
app.className = 'app';

const toolbar = new Toolbar(
  store,
  {
    fit: () => (compareView.active ? compareView.fit() : tree.fit()),
    reset: () => (compareView.active ? compareView.resetCollapse() : tree.resetCollapse()),
    export: (kind) => void runExport(kind),
    toggleSide: () => setSideHidden(!app.classList.contains('side-hidden')),
    heat: (m) => {
      tree.setHeat(m);
      compareView.setHeat(m);
      renderLegend(m);
      store.savePrefs({ heat: m });
    },
  },
  {
    run: () => runSearch(),
    step: (dir) => gotoHit(dir),
    leave: () => activeTree().focusActive(),
    enter: () => {
      const hit = view.searchHits[view.searchPos];
      (hit?.side ? (compareView.tree(hit.side) ?? tree) : tree).focusActive();
    },
  },
);
const notice = new Notice();
const compareBar = new CompareBar();
const rejectedBar = new RejectedBar();

const canvas = new PlanCanvas(() => {
  if (compareView.active) compareView.fit();
  else if (view.drawn) tree.fit();
});
const sidePanel = new SidePanel(store, (t) => selectTab(t));
const panels = sidePanel.panels;
const body = el('main', 'body');
append(body, canvas.element, sidePanel.element);
const compareView = new CompareView(canvas.element, {
  onSelect: (side, node) => {
    store.select(node);
    renderCompareNodePanel(side, node);
  },
  onOpen: (_side, node) => host.post({ type: 'openNode', nodeId: node.id, kind: node.kind, label: node.label }),
  onClickNode: () => selectTab('node'),
});
const exportStage = el('div', 'export-stage');
exportStage.setAttribute('aria-hidden', 'true');
append(app, toolbar.element, notice.element, compareBar.element, compareView.head, rejectedBar.element, body, exportStage);

const tree = new TreeView(canvas.element, {
  onSelect: (node) => {
    store.select(node);
    if (view.drawn) renderDetails(panels.node, node, view.drawn.plan, view.drawn.findings, actions, store.nodeRawLater);
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

const actions: PanelActions = {
  focusNode: (id) => {
    if (view.drawn?.rejected !== undefined) showRejected(undefined);
    if (tree.focusNode(id, { highlight: true })) {
      const n = tree.node(id);
      if (n) {
        store.select(n);
        if (view.drawn) renderDetails(panels.node, n, view.drawn.plan, view.drawn.findings, actions, store.nodeRawLater);
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
  notice.show(text);
}

function setSideHidden(hidden: boolean): void {
  app.classList.toggle('side-hidden', hidden);
  toolbar.setSideShown(!hidden);
  store.savePrefs({ sideHidden: hidden });
}
setSideHidden(view.prefs.sideHidden ?? false);

function selectTab(t: Tab): void {
  store.selectTab(t);
  sidePanel.showOpenTab();
  const shown = view.shown;
  if (t === 'raw' && shown && !panels.raw.dataset.filled) {
    if (!shown.comparison && shown.rawText === undefined && shown.hasRawText) {
      // Asked for once per plan; the answer (`rawText`) fills the tab.
      if (store.askRawText()) host.post({ type: 'rawTextWanted' });
      renderRaw(panels.raw, undefined, view.drawn?.plan ?? shown.plan, true);
      return;
    }
    if (shown.rawText === undefined && store.nodeRawLater) {
      // The plan as read, shown when there is no text, waits for its nodes' raw fields (`nodeRaw`).
      renderRaw(panels.raw, undefined, view.drawn?.plan ?? shown.plan, true);
      return;
    }
    renderRaw(panels.raw, shown.comparison ? undefined : shown.rawText, view.drawn?.plan ?? shown.plan);
    panels.raw.dataset.filled = '1';
  }
}

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

function renderLegend(metric: HeatMetric): void {
  canvas.legend.render(metric, compareView.active);
}

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

/**
 * Draws a plan's cards, legend and summary, and selects its root (or keeps the selected node). The Node
 * panel is filled at once, or with `sideLater` after the first frame of the new cards is painted.
 */
function drawTree(plan: Plan, findings: Finding[], resetSelection = true, sideLater = false): void {
  canvas.hideEmptyNote();
  const metric = toolbar.fillHeat(plan);
  tree.setPlan(plan, findings, metric);
  renderLegend(metric);
  toolbar.setSummary(summaryOf(plan));
  const kept = resetSelection || !view.selected ? undefined : tree.node(view.selected.id);
  const selected = kept ?? plan.root;
  store.select(selected);
  if (!sideLater) renderDetails(panels.node, selected, plan, findings, actions, store.nodeRawLater);
  runSearch();
}

/** The side panel's filling of the plan shown last, while it waits for the first frame of its cards. */
let sideFill: { cancel(): void } | undefined;

/**
 * Runs `fill` once the frame after this task has been painted (a frame, then a task after it; a page
 * that draws no frames, hidden, gets it after 100 ms). A later call replaces a fill not yet run.
 */
function afterFirstPaint(fill: () => void): void {
  sideFill?.cancel();
  let done = false;
  const stop = () => {
    done = true;
    cancelAnimationFrame(frame);
    clearTimeout(fallback);
  };
  const run = () => {
    if (done) return;
    stop();
    sideFill = undefined;
    fill();
  };
  const frame = requestAnimationFrame(() => setTimeout(run, 0));
  const fallback = setTimeout(run, 100);
  sideFill = {
    cancel: () => {
      stop();
      sideFill = undefined;
    },
  };
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
  sidePanel.setFindingCount(changedFindings ?? shown.findings.length);
}

function showRejected(position: number | undefined): void {
  if (!view.shown) return;
  // Rejected plans are drawn alone: leave the side-by-side view for the after plan first.
  const cmpMsg = compareView.message;
  if (cmpMsg) showComparison(cmpMsg, 'after');
  const drawn = store.drawRejected(position);
  if (!drawn) return;
  if (drawn.rejected === undefined) rejectedBar.hide();
  else rejectedBar.show(view.shown.plan.rejectedPlans[drawn.rejected]!, () => showRejected(undefined));
  drawTree(drawn.plan, drawn.findings);
  renderSide();
}

/**
 * Shows a plan: its cards, toolbar and summary in this task, laid out at its end so the next frame only
 * paints them; the side panel (the Node panel, findings and suggestions, the plan's details) after that
 * frame, so the cards do not wait for it.
 */
function showPlan(m: ShowPlanMessage): void {
  store.showPlan(m);
  askedFor = undefined;
  document.scrollingElement?.scrollTo(0, 0);
  toolbar.setTitle(m.title);
  compareView.hide();
  compareBar.hide();
  rejectedBar.hide();
  drawTree(m.plan, m.findings, true, true);
  layOutNow();
  afterFirstPaint(() => {
    const { shown, drawn, selected } = view;
    if (shown && !shown.comparison && drawn) {
      // A new plan opens at its top: the summary and the plan first.
      sidePanel.scrollToTop();
      renderDetails(panels.node, selected ?? drawn.plan.root, drawn.plan, drawn.findings, actions, store.nodeRawLater);
      renderSide();
      selectTab(view.activeTab);
    }
    host.post({ type: 'planDrawn' });
  });
}

/**
 * Shows two plans: side by side by default, or one of them alone (the buttons switch). The comparison is
 * computed here from the two plans (see compare.ts); plans that cannot be compared fall back to the
 * after plan alone with the reason in the notice bar.
 */
function showComparison(m: ShowComparisonMessage, mode: CompareMode = 'both'): void {
  sideFill?.cancel();
  let side = mode;
  if (side === 'both') {
    const refusal = compareView.show(m, toolbar.fillHeat(sharedScale(m).after));
    if (refusal !== undefined) {
      showNotice(refusal);
      side = 'after';
    }
  }
  if (side !== 'both') compareView.hide();
  const pick = store.showComparison(m, side);
  toolbar.setTitle(m.title);
  compareBar.show(side, { before: m.before.label, after: m.after.label }, (k) => showComparison(m, k));
  rejectedBar.hide();
  if (side === 'both') {
    canvas.hideEmptyNote();
    renderLegend(toolbar.heat);
    const engine = m.after.plan.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL';
    toolbar.setSummary(`${engine} · before ${formatCount(m.before.plan.nodes.length)} nodes · after ${formatCount(m.after.plan.nodes.length)} nodes`);
    store.select(m.after.plan.root);
    renderCompareNodePanel('after', m.after.plan.root);
    runSearch();
  } else {
    drawTree(pick.plan, pick.findings);
  }
  renderSide();
  selectTab(view.activeTab);
  layOutNow();
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
  const q = toolbar.search.query;
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
  toolbar.search.setCount(q ? (hits.length === 0 ? 'no match' : `${hits.length} found`) : '');
}

function gotoHit(step: 1 | -1): void {
  const hit = store.stepSearch(step);
  if (!hit) return;
  if (hit.side) compareView.focus(hit.side, hit.id, { highlight: true, focus: false });
  else tree.focusNode(hit.id, { highlight: true, focus: false });
  toolbar.search.setCount(`${view.searchPos + 1} of ${view.searchHits.length}`);
}

document.addEventListener('keydown', (ev) => {
  const t = ev.target as HTMLElement | null;
  const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
  if (ev.key === '/' && !typing) {
    ev.preventDefault();
    toolbar.search.focus();
  }
});

// ---- export --------------------------------------------------------------------------------------

/** The tree the toolbar acts on: the after plan's when the two are side by side. */
function activeTree(): TreeView {
  return compareView.tree('after') ?? tree;
}

/** Those waiting for the nodes' raw fields of the plan shown (an export of the plan); see handle(). */
const rawWaiters: (() => void)[] = [];

/** How long an export waits for the nodes' raw fields before it gives up and says so. */
const RAW_FIELDS_WAIT_MS = 10_000;

/**
 * Whether the nodes shown have their raw fields: at once, or when `nodeRaw` (or a plan that carries them)
 * arrives; false when they have not come within RAW_FIELDS_WAIT_MS.
 */
function nodeRawThere(): Promise<boolean> {
  if (!store.nodeRawLater) return Promise.resolve(true);
  return new Promise((resolve) => {
    const waiter = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      const at = rawWaiters.indexOf(waiter);
      if (at >= 0) rawWaiters.splice(at, 1);
      resolve(false);
    }, RAW_FIELDS_WAIT_MS);
    rawWaiters.push(waiter);
  });
}

async function runExport(kind: ExportKind): Promise<void> {
  if (!view.shown || !view.drawn) {
    showNotice('There is no plan to export yet.');
    return;
  }
  const placeholders = toolbar.placeholders;
  toolbar.closeExportMenu();
  // The JSON holds every node's raw fields; the drawing shows none of them. What is drawn once they are
  // there is exported (a plan that came in the meantime has its own).
  if (kind === 'json' && store.nodeRawLater) {
    const waiting = 'The JSON export waits for the plan\'s raw fields from the extension…';
    showNotice(waiting);
    if (!(await nodeRawThere())) {
      const what = `The JSON export was not saved: the plan's raw fields did not come from the extension within ${RAW_FIELDS_WAIT_MS / 1000} s`;
      showNotice(`${what}. Nothing was written; try again, or Explain the query again.`);
      host.post({ type: 'reportError', message: what, detail: 'The page asked for an export before the extension sent the nodes\' raw fields (nodeRaw), and they did not come.' });
      return;
    }
    notice.hide(waiting);
  }
  const { shown, drawn } = view;
  if (!shown || !drawn) return;
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
    case 'nodeRaw':
      if (store.setNodeRaw(m)) showNodeRaw();
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
  if (!store.nodeRawLater) for (const w of rawWaiters.splice(0)) w();
}

/**
 * The nodes' raw fields arrived: the Node tab and the Raw tab's plan as read show them. Before the side
 * panel's first filling (the fields came early) that filling shows them; nothing to draw again.
 */
function showNodeRaw(): void {
  const { shown, drawn, selected } = view;
  if (sideFill || !shown || !drawn) return;
  const top = panels.node.scrollTop;
  renderDetails(panels.node, selected ?? drawn.plan.root, drawn.plan, drawn.findings, actions);
  panels.node.scrollTop = top;
  if (shown.rawText === undefined && !shown.hasRawText) {
    delete panels.raw.dataset.filled;
    if (view.activeTab === 'raw') selectTab('raw');
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

