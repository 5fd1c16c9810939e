// The side panel's tabs: findings (and suggestions), the selected node's details with every raw field,
// the raw explain text, and the plan summary with rejected plans. All text goes in with textContent.

import type { Finding, NodeMetrics, Plan, PlanNode, RejectedPlan, Severity } from '../src/core/view';
import type { SuggestionVerdict, SuggestionView } from '../src/protocol/webview';
import { cardSpec } from './cards';
import { activatable, append, button, clear, el, factTable } from './dom';
import { formatBytes, formatCount, formatKb, formatMs, formatRatio } from '../src/core/view';

const SEVERITY_ORDER: Severity[] = ['high', 'medium', 'low', 'info'];
/** Findings listed at first, and added by each "Show more" (see renderFindings). */
export const FINDINGS_PAGE = 100;
const SEVERITY_LABEL: Record<Severity, string> = { high: 'High', medium: 'Medium', low: 'Low', info: 'Info' };

export interface PanelActions {
  focusNode(id: number): void;
  copy(text: string, what: string): void;
  verify(id: string): void;
  /** Asks the host to build a verified suggestion's index (it confirms with the user first). */
  createIndex(id: string): void;
  openNode(node: PlanNode): void;
  /** Draws a rejected plan, by its position in plan.rejectedPlans, or with undefined the winning plan. */
  showRejected(position: number | undefined): void;
}

/** Short name of a node for links: 'Index Scan on orders', 'IXSCAN { a: 1 }'. */
export function nodeName(node: PlanNode, plan: Plan): string {
  const spec = cardSpec(node, plan);
  return spec.subtitle ? `${spec.title} ${spec.subtitle}` : spec.title;
}

function sortFindings(findings: Finding[]): Finding[] {
  return [...findings].sort((a, b) => {
    if (!!a.good !== !!b.good) return a.good ? 1 : -1;
    return SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity);
  });
}

function findingItem(f: Finding, plan: Plan, act: PanelActions): HTMLLIElement {
  const li = el('li', `finding sev-${f.good ? 'good' : f.severity}`);
  li.dataset.code = f.code;
  const head = el('div', 'f-head');
  append(head, el('span', 'sev-pill', f.good ? 'Good' : SEVERITY_LABEL[f.severity]), el('span', 'f-title', f.title));
  li.append(head, el('div', 'f-message', f.message));
  const node = f.nodeId !== undefined ? plan.nodes[f.nodeId] : undefined;
  if (node) {
    li.dataset.nodeId = String(node.id);
    li.setAttribute('aria-label', `${f.title}: show ${nodeName(node, plan)}`);
    li.appendChild(el('div', 'f-node', `at ${nodeName(node, plan)}`));
    activatable(li, () => act.focusNode(node.id));
  }
  return li;
}

const FIGURE_LABEL: Record<string, string> = {
  keysExamined: 'Keys examined',
  docsExamined: 'Documents examined',
  sortedInMemory: 'Sorted in memory',
  returned: 'Returned',
};

const count = (n: number | undefined): string => (n === undefined ? '' : formatCount(n));

/** The figures a verification measured, before and after, in one small table. */
function verdictTable(v: SuggestionVerdict): HTMLElement {
  const box = el('div', 'suggestion-verdict');
  const t = el('table', 'compare verdict-figures');
  const head = el('tr');
  append(head, el('th'), el('th', undefined, v.beforeLabel), el('th', undefined, v.afterLabel));
  const body = el('tbody');
  const row = (label: string, a: string, b: string, className?: string): void => {
    if (a === '' && b === '') return;
    const tr = el('tr', className);
    append(tr, el('th', undefined, label), el('td', undefined, a), el('td', undefined, b));
    body.appendChild(tr);
  };
  row(v.unit === 'estimated cost' ? 'Estimated cost' : 'Work', count(v.before), count(v.after), 'total');
  const keys = [...new Set([...Object.keys(v.figuresBefore ?? {}), ...Object.keys(v.figuresAfter ?? {})])];
  for (const k of keys) row(FIGURE_LABEL[k] ?? k, count(v.figuresBefore?.[k]), count(v.figuresAfter?.[k]));
  row('Plan', v.planBefore ?? '', v.planAfter ?? '', 'plan');
  t.append(el('thead'), body);
  t.tHead!.appendChild(head);
  box.appendChild(t);
  const facts = [`Measured with ${v.how}.`];
  if (v.unit && v.unit !== 'estimated cost') facts.push(`Work counts ${v.unit}.`);
  if (v.usedByPlanner === true) facts.push('The planner chose it without a hint.');
  if (v.usedByPlanner === false) facts.push('The planner did not choose it by itself.');
  box.appendChild(el('div', 'verdict-how', facts.join(' ')));
  return box;
}

function suggestionItem(s: SuggestionView, act: PanelActions): HTMLLIElement {
  const li = el('li', `suggestion status-${s.status ?? 'unverified'}`);
  li.dataset.id = s.id;
  if (s.rule) li.dataset.rule = s.rule;
  const head = el('div', 'f-head');
  if (s.rule) head.appendChild(el('span', 'sev-pill rule', s.rule));
  head.appendChild(el('span', 'f-title', s.title));
  li.appendChild(head);
  if (s.detail) li.appendChild(el('div', 'f-message', s.detail));
  if (s.ddl) li.appendChild(el('pre', 'ddl', s.ddl));
  // The index's own actions sit under its text; the rewrites below have theirs.
  const bar = el('div', 'actions');
  if (s.ddl) bar.appendChild(button('Copy', 'secondary', () => act.copy(s.ddl!, 'the index definition')));
  if (s.verifiable) {
    const b = button(s.status === 'verifying' ? 'Verifying…' : 'Verify', 'primary', () => act.verify(s.id), 'Check the suggestion against the server');
    b.disabled = s.status === 'verifying';
    bar.appendChild(b);
  }
  // Building the index is offered only once Verify measured that it helps.
  if (s.ddl && (s.status === 'verified' || s.status === 'creating')) {
    const b = button(s.status === 'creating' ? 'Creating…' : 'Create Index', 'primary create-index', () => act.createIndex(s.id), 'Build this index on the server (asks first)');
    b.disabled = s.status === 'creating';
    bar.appendChild(b);
  }
  if (s.nodeIds && s.nodeIds.length > 0) {
    const first = s.nodeIds[0]!;
    bar.appendChild(button('Show node', 'secondary', () => act.focusNode(first)));
  }
  li.appendChild(bar);
  // The verification's outcome sits under the button that asked for it.
  if (s.status && s.status !== 'unverified') {
    const word = `${s.status[0]!.toUpperCase()}${s.status.slice(1)}`;
    // "Verified: Verified on a sample..." says it twice: a detail that starts with the status stands alone.
    const text = !s.statusDetail ? word : s.statusDetail.startsWith(word) ? s.statusDetail : `${word}: ${s.statusDetail}`;
    li.appendChild(el('div', 'status', text));
  } else if (s.statusDetail) {
    li.appendChild(el('div', 'status', s.statusDetail));
  }
  if (s.verdict && (s.status === 'verified' || s.status === 'rejected' || s.status === 'creating' || s.status === 'created')) li.appendChild(verdictTable(s.verdict));
  // The index to keep is already the title.
  const rows: [string, string | undefined][] = [
    ['Expected plan', s.expectedPlan],
    ['Trade-off', s.tradeOff],
    ['Replaces', s.replaces?.join(', ')],
  ];
  if (rows.some(([, v]) => v)) li.appendChild(factTable(rows, 'facts suggestion-facts'));
  if (s.conditions && s.conditions.length > 0) {
    const ul = el('ul', 'conditions');
    for (const c of s.conditions) ul.appendChild(el('li', undefined, c));
    li.append(el('div', 'sub-head', 'Depends on the data'), ul);
  }
  for (const r of s.rewrites ?? []) {
    const box = el('div', 'rewrite');
    box.dataset.rule = r.rule;
    append(box, el('div', 'sub-head', `Rewrite (${r.rule})`), el('div', 'f-message', r.description));
    // The rewrite is already shown as the text to copy when there is no index to build.
    if (r.text !== s.ddl) {
      box.appendChild(el('pre', 'ddl', r.text));
      box.appendChild(button('Copy rewrite', 'secondary', () => act.copy(r.text, 'the rewritten query')));
    }
    if (r.caveat) box.appendChild(el('div', 'caveat', r.caveat));
    li.appendChild(box);
  }
  return li;
}

export function renderFindings(root: HTMLElement, plan: Plan, findings: Finding[], suggestions: SuggestionView[], act: PanelActions): void {
  clear(root);
  const suggestionList = (): void => {
    if (suggestions.length === 0) return;
    root.appendChild(el('h3', undefined, `Suggestions (${suggestions.length})`));
    const ul = el('ul', 'suggestions');
    for (const s of suggestions) ul.appendChild(suggestionItem(s, act));
    root.appendChild(ul);
  };
  // A high-severity finding is the news: it comes before the suggestions that answer it, so a narrow
  // panel does not push it below the fold.
  const urgent = findings.some((f) => f.severity === 'high' && !f.good);
  if (!urgent) suggestionList();
  root.appendChild(el('h3', undefined, findings.length === 0 ? 'Findings' : `Findings (${findings.length})`));
  if (findings.length === 0) {
    root.appendChild(el('p', 'empty', 'No findings for this plan.'));
  } else {
    const ul = el('ul', 'findings');
    const sorted = sortFindings(findings);
    let shown = 0;
    // A plan of thousands of nodes can carry thousands of findings: they are listed a page at a time,
    // the most severe first, so the panel opens at once; the button lists the next page.
    const more = button('', 'link more-findings', () => showPage(true));
    const showPage = (focus: boolean): void => {
      const end = Math.min(sorted.length, shown + FINDINGS_PAGE);
      const first = shown;
      for (; shown < end; shown++) ul.appendChild(findingItem(sorted[shown]!, plan, act));
      const left = sorted.length - shown;
      if (left > 0) more.textContent = `Show ${formatCount(Math.min(left, FINDINGS_PAGE))} more of ${formatCount(left)} findings`;
      else more.remove();
      if (focus) (ul.children[first] as HTMLElement | undefined)?.focus();
    };
    root.appendChild(ul);
    root.appendChild(more);
    showPage(false);
  }
  if (urgent) suggestionList();
}

/** What each figure is called in the Node tab: words a reader knows, not the model's field names. */
const METRIC_LABEL: Record<string, string> = {
  rowsReturned: 'Rows returned', inclusiveTimeMs: 'Time, with children', exclusiveTimeMs: 'Own time',
  plannedRows: 'Rows planned', estimateFactor: 'Estimate off by', estimateDirection: 'Estimate was',
  neverExecuted: 'Never executed', stoppedEarly: 'Read until enough rows (planned rows are the whole result)', keysExamined: 'Keys examined', docsExamined: 'Documents examined',
  seeks: 'Index seeks', works: 'Work units', advanced: 'Advanced', needTime: 'Needed time', needYield: 'Yields',
  isEOF: 'Reached the end', dupsTested: 'Duplicates tested', dupsDropped: 'Duplicates dropped',
  memUsageBytes: 'Memory used', usedDisk: 'Spilled to disk', skipAmount: 'Skip', limitAmount: 'Limit',
  actualRowsPerLoop: 'Rows per loop', loops: 'Loops', planRowsPerLoop: 'Rows planned per loop',
  startupCost: 'Startup cost', totalCost: 'Total cost', actualStartupTimeMs: 'First row after',
  actualTotalTimeMs: 'Last row after (per loop)', rowsRemovedByFilter: 'Rows removed by filter (per loop)',
  rowsRemovedByJoinFilter: 'Rows removed by join filter (per loop)', rowsRemovedByIndexRecheck: 'Rows removed by recheck (per loop)',
  heapFetches: 'Heap fetches', indexSearches: 'Index searches', sortMethod: 'Sort method', sortSpaceKb: 'Sort space',
  sortSpaceType: 'Sort space kind', hashBatches: 'Hash batches', originalHashBatches: 'Hash batches planned',
  hashBuckets: 'Hash buckets', diskUsageKb: 'Disk used', peakMemoryKb: 'Peak memory', workersPlanned: 'Workers planned',
  workersLaunched: 'Workers launched', exactHeapBlocks: 'Exact heap blocks', lossyHeapBlocks: 'Lossy heap blocks',
  walRecords: 'WAL records', walFpi: 'WAL full-page images', walBytes: 'WAL written',
  exclusiveSharedBlocks: 'Shared buffers, own', wastedReads: 'Read for nothing',
  sharedHit: 'Shared buffers hit', sharedRead: 'Shared buffers read', sharedDirtied: 'Shared buffers dirtied',
  sharedWritten: 'Shared buffers written', localHit: 'Local buffers hit', localRead: 'Local buffers read',
  localDirtied: 'Local buffers dirtied', localWritten: 'Local buffers written', tempRead: 'Temp buffers read',
  tempWritten: 'Temp buffers written', ioReadTimeMs: 'Time reading', ioWriteTimeMs: 'Time writing',
  tempIoReadTimeMs: 'Time reading temp files', tempIoWriteTimeMs: 'Time writing temp files',
};

/** A figure's label; an unknown key (a newer reader's field) is spelled out from its camel case. */
export function metricLabel(key: string): string {
  const known = METRIC_LABEL[key];
  if (known) return known;
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function metricText(key: keyof NodeMetrics | string, v: unknown): string {
  if (typeof v === 'number') {
    if (/TimeMs$/.test(key)) return formatMs(v);
    if (key === 'memUsageBytes' || key === 'walBytes') return formatBytes(v);
    if (/Kb$/.test(key)) return formatKb(v);
    if (key === 'estimateFactor') return formatRatio(v);
    return formatCount(v);
  }
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** JSON for display: strings bare, everything else indented. */
function show(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v, null, 2) ?? String(v);
  } catch {
    return String(v);
  }
}

function fieldList(title: string, entries: [string, unknown][], className: string): HTMLElement {
  const sec = el('section', className);
  sec.appendChild(el('h3', undefined, title));
  const dl = el('dl', 'fields');
  for (const [k, v] of entries) {
    if (v === undefined) continue;
    const dt = el('dt', undefined, k);
    const text = show(v);
    const dd = el('dd');
    if (text.includes('\n') || text.length > 60) dd.appendChild(el('pre', undefined, text));
    else dd.textContent = text;
    dl.append(dt, dd);
  }
  sec.appendChild(dl);
  return sec;
}

/**
 * The Node tab for one node. With `rawLater` the node's raw fields are still on their way from the host
 * (`nodeRaw`): a loading line stands where they go and Copy raw waits, until the tab is drawn again.
 */
export function renderDetails(root: HTMLElement, node: PlanNode | undefined, plan: Plan, findings: Finding[], act: PanelActions, rawLater = false): void {
  clear(root);
  if (!node) {
    root.appendChild(el('p', 'empty', 'Select a node to see its figures and raw fields.'));
    return;
  }
  const spec = cardSpec(node, plan);
  root.appendChild(el('h2', 'node-title', spec.title));
  if (spec.subtitle) root.appendChild(el('div', 'node-sub', spec.subtitle));
  if (node.label !== spec.title && node.label !== `${spec.title} ${spec.subtitle ?? ''}`.trim()) root.appendChild(el('div', 'node-label', node.label));
  const bar = el('div', 'actions');
  const copyRaw = button('Copy raw', 'secondary', () => act.copy(show(node.raw), 'the node’s raw fields'));
  copyRaw.disabled = rawLater;
  bar.append(button('Reveal', 'secondary', () => act.openNode(node), 'Show this node in the explain output'), copyRaw);
  root.appendChild(bar);
  if (spec.waste) {
    root.appendChild(el('div', `waste-note level-${spec.waste.level ?? 'muted'}`, `Examined ${formatCount(spec.waste.examined)} ${spec.waste.unit}, ${spec.waste.verb} ${formatCount(spec.waste.returned)}: ${formatRatio(spec.waste.ratio)}.`));
  }
  const mine = findings.filter((f) => f.nodeId === node.id);
  if (mine.length > 0) {
    const ul = el('ul', 'findings compact');
    for (const f of sortFindings(mine)) {
      const li = el('li', `finding sev-${f.good ? 'good' : f.severity}`);
      append(li, el('span', 'sev-pill', f.good ? 'Good' : SEVERITY_LABEL[f.severity]), el('span', 'f-title', f.title));
      li.appendChild(el('div', 'f-message', f.message));
      ul.appendChild(li);
    }
    root.appendChild(ul);
  }
  const m = node.metrics;
  const figures: [string, string | undefined][] = [];
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined || k === 'buffers' || k === 'workers') continue;
    figures.push([metricLabel(k), metricText(k, v)]);
  }
  if (m.buffers) for (const [k, v] of Object.entries(m.buffers)) if (v !== undefined) figures.push([metricLabel(k), metricText(k, v)]);
  if (figures.length > 0) {
    const sec = el('section', 'figures');
    sec.appendChild(el('h3', undefined, 'Figures'));
    sec.appendChild(factTable(figures));
    root.appendChild(sec);
  }
  if (m.workers && m.workers.length > 0) root.appendChild(fieldList('Workers', m.workers.map((w) => [`worker ${w.worker}`, w]), 'workers'));
  const det = Object.entries(node.details).filter(([, v]) => v !== undefined);
  if (det.length > 0) root.appendChild(fieldList('Details', det, 'details'));
  if (!rawLater) root.appendChild(fieldList('Raw fields', Object.entries(node.raw), 'raw-fields'));
  else {
    const sec = el('section', 'raw-fields loading');
    append(sec, el('h3', undefined, 'Raw fields'), el('div', 'raw-note', 'Loading the raw fields…'));
    root.appendChild(sec);
  }
}

export function renderRaw(root: HTMLElement, rawText: string | undefined, plan: Plan, loading = false): void {
  clear(root);
  if (loading) {
    root.appendChild(el('div', 'raw-note', 'Loading the explain output…'));
    return;
  }
  const text = rawText ?? JSON.stringify({ ...plan, nodes: undefined }, null, 2);
  root.appendChild(el('div', 'raw-note', rawText !== undefined ? 'The explain output as given.' : 'No raw text was given; this is the plan as read.'));
  root.appendChild(el('pre', 'raw', text));
}

function totalsRows(plan: Plan): [string, string | undefined][] {
  const t = plan.totals;
  const rows: [string, string | undefined][] = [
    ['Engine', plan.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'],
    ['Format', plan.format],
    ['Server version', plan.serverVersion],
    ['Namespace', plan.mongo?.namespace],
    ['Verbosity', plan.mongo?.verbosity],
    ['Query engine', plan.mongo?.engineKind === 'sbe' ? 'slot-based (SBE)' : plan.mongo?.engineKind],
    ['Sharded', plan.mongo?.sharded ? 'yes' : undefined],
    ['Execution time', t.executionTimeMs !== undefined ? formatMs(t.executionTimeMs) : undefined],
    ['Planning time', t.planningTimeMs !== undefined ? formatMs(t.planningTimeMs) : undefined],
    ['JIT time', t.jitTimeMs !== undefined ? formatMs(t.jitTimeMs) : undefined],
    ['Trigger time', t.triggerTimeMs !== undefined ? formatMs(t.triggerTimeMs) : undefined],
    ['Returned', t.nReturned !== undefined ? formatCount(t.nReturned) : t.rows !== undefined ? formatCount(t.rows) : undefined],
    ['Keys examined', t.keysExamined !== undefined ? formatCount(t.keysExamined) : undefined],
    ['Docs examined', t.docsExamined !== undefined ? formatCount(t.docsExamined) : undefined],
    ['Nodes', formatCount(plan.nodes.length)],
  ];
  return rows;
}

function trialText(r: RejectedPlan): string {
  const t = r.trial;
  if (!t) return 'not executed in the trial';
  const parts: string[] = [];
  if (t.nReturned !== undefined) parts.push(`returned ${formatCount(t.nReturned)}`);
  if (t.keysExamined !== undefined) parts.push(`keys ${formatCount(t.keysExamined)}`);
  if (t.docsExamined !== undefined) parts.push(`docs ${formatCount(t.docsExamined)}`);
  if (t.works !== undefined) parts.push(`works ${formatCount(t.works)}`);
  if (t.score !== undefined) parts.push(`score ${t.score}`);
  return parts.join(' · ');
}

export function renderPlanInfo(root: HTMLElement, plan: Plan, showing: number | undefined, act: PanelActions, comparison?: { before: Plan; after: Plan; beforeLabel: string; afterLabel: string }): void {
  clear(root);
  if (comparison) {
    root.appendChild(el('h3', undefined, 'Comparison'));
    const t = el('table', 'compare');
    const head = el('tr');
    append(head, el('th'), el('th', undefined, comparison.beforeLabel), el('th', undefined, comparison.afterLabel));
    t.appendChild(head);
    const a = new Map(totalsRows(comparison.before));
    const b = new Map(totalsRows(comparison.after));
    for (const k of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(k) === undefined && b.get(k) === undefined) continue;
      const tr = el('tr');
      append(tr, el('th', undefined, k), el('td', undefined, a.get(k) ?? '—'), el('td', undefined, b.get(k) ?? '—'));
      t.appendChild(tr);
    }
    root.appendChild(t);
  }
  root.appendChild(el('h3', undefined, 'Plan'));
  root.appendChild(factTable(totalsRows(plan)));
  if (plan.warnings.length > 0) {
    root.appendChild(el('h3', undefined, 'Reader notes'));
    const ul = el('ul', 'warnings');
    for (const w of plan.warnings) ul.appendChild(el('li', undefined, w));
    root.appendChild(ul);
  }
  if (plan.rejectedPlans.length > 0) {
    root.appendChild(el('h3', undefined, `Rejected plans (${plan.rejectedPlans.length})`));
    const ul = el('ul', 'rejected');
    if (showing !== undefined) {
      const li = el('li', 'winning');
      li.appendChild(button('Show the winning plan', 'primary', () => act.showRejected(undefined)));
      ul.appendChild(li);
    }
    // Positions, not `index`: each shard numbers its own candidates from 0.
    plan.rejectedPlans.forEach((r, pos) => {
      const li = el('li', showing === pos ? 'rejected-plan shown' : 'rejected-plan');
      li.dataset.position = String(pos);
      const chain: string[] = [];
      let n: PlanNode | undefined = r.root;
      while (n && chain.length < 6) {
        chain.push(n.label || n.kind);
        n = n.children[0];
      }
      append(
        li,
        el('div', 'f-title', `#${r.index + 1}${r.shardName ? ` on shard ${r.shardName}` : ''}`),
        el('div', 'chain', chain.join(' ← ')),
        el('div', 'f-message', trialText(r)),
      );
      if (showing !== pos) li.appendChild(button('Draw', 'secondary', () => act.showRejected(pos)));
      ul.appendChild(li);
    });
    root.appendChild(ul);
  }
  const meta = plan.engine === 'mongodb' ? plan.mongo : plan.postgres;
  if (meta) {
    const entries = Object.entries(meta).filter(([k, v]) => v !== undefined && k !== 'slotBasedPlan');
    if (entries.length > 0) root.appendChild(fieldList('Explain metadata', entries, 'meta'));
  }
}

export { SEVERITY_LABEL };
