// The plan view's state in one place: what the host sent, which tree is drawn, the open tab, the
// selected node, the search hits and the preferences kept across reloads. Every change goes through a
// named transition below, so the drawing code in main.ts reads the state and keeps no copy of its own.
// Pure (no DOM), so the transitions are tested in Node.

import { emptyMaxima, type Finding, type Plan, type PlanNode } from '../src/core/view';
import { fillNodeRaw, type NodeRawMessage, type ShowComparisonMessage, type ShowPlanMessage, type SuggestionStatus, type SuggestionVerdict, type SuggestionView } from '../src/protocol/webview';

export type Tab = 'findings' | 'node' | 'raw' | 'plan';
export const TABS: readonly Tab[] = ['findings', 'node', 'raw', 'plan'];
/** How a comparison is shown: the two trees side by side, or one of the plans alone. */
export type CompareMode = 'both' | 'before' | 'after';
export type Side = 'before' | 'after';

/** Preferences the view keeps across reloads of the panel. */
export interface ViewState {
  heat?: string;
  sideHidden?: boolean;
  placeholders?: boolean;
}

/** What the host last asked the view to show. */
export interface Shown {
  title: string;
  plan: Plan;
  findings: Finding[];
  rawText?: string;
  /** The host holds the raw text and sends it when asked (the Raw tab); `rawAsked` once asked. */
  hasRawText?: boolean;
  rawAsked?: boolean;
  /** The nodes' raw fields are on their way (`nodeRaw`): until then every node's `raw` is empty, not known to be. */
  nodeRawLater?: boolean;
  suggestions: SuggestionView[];
  comparison?: { before: ShowComparisonMessage['before']; after: ShowComparisonMessage['after']; side: CompareMode };
}

/** The tree being drawn: the shown plan, or one of its rejected plans. */
export interface Drawn {
  plan: Plan;
  findings: Finding[];
  rejected?: number;
}

/** A search hit; `side` is set when the comparison's two trees are searched. */
export interface SearchHit {
  id: number;
  side?: Side;
}

export interface ViewModel {
  shown?: Shown;
  drawn?: Drawn;
  activeTab: Tab;
  selected?: PlanNode;
  searchHits: SearchHit[];
  searchPos: number;
  prefs: ViewState;
}

export class ViewStore {
  private model: ViewModel;

  /** `persist` receives the preferences each time they change (the host's setState). */
  constructor(prefs: ViewState, private readonly persist: (prefs: ViewState) => void) {
    this.model = { activeTab: 'findings', searchHits: [], searchPos: -1, prefs };
  }

  get state(): Readonly<ViewModel> {
    return this.model;
  }

  savePrefs(patch: Partial<ViewState>): void {
    this.model.prefs = { ...this.model.prefs, ...patch };
    this.persist(this.model.prefs);
  }

  /** A new plan replaces whatever was shown; its raw text is either in the message or held by the host. */
  showPlan(m: ShowPlanMessage): void {
    const shown: Shown = { title: m.title, plan: m.plan, findings: m.findings, suggestions: m.suggestions ?? [] };
    if (m.rawText !== undefined) shown.rawText = m.rawText;
    else if (m.hasRawText) shown.hasRawText = true;
    if (m.nodeRawLater) shown.nodeRawLater = true;
    this.model.shown = shown;
    this.model.drawn = { plan: m.plan, findings: m.findings };
  }

  /** Two plans, shown as `side` says; the side's own plan is the one the panels describe. */
  showComparison(m: ShowComparisonMessage, side: CompareMode): Drawn {
    const pick = m[side === 'before' ? 'before' : 'after'];
    this.model.shown = { title: m.title, plan: pick.plan, findings: pick.findings, suggestions: [], comparison: { before: m.before, after: m.after, side } };
    this.model.drawn = { plan: pick.plan, findings: pick.findings };
    return this.model.drawn;
  }

  /**
   * Draws the shown plan's rejected plan at `position`, or the winning plan again when undefined.
   * Returns what is now drawn, or undefined when there is no such plan.
   */
  drawRejected(position: number | undefined): Drawn | undefined {
    const shown = this.model.shown;
    if (!shown) return undefined;
    const base = shown.plan;
    if (position === undefined) {
      this.model.drawn = { plan: base, findings: shown.findings };
      return this.model.drawn;
    }
    const r = base.rejectedPlans[position];
    if (!r) return undefined;
    const nodes: PlanNode[] = [];
    const stack = [r.root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      nodes.push(n);
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
    nodes.sort((a, b) => a.id - b.id);
    const plan: Plan = { ...base, root: r.root, nodes, rejectedPlans: base.rejectedPlans, maxima: r.maxima ?? emptyMaxima(), totals: {} };
    this.model.drawn = { plan, findings: [], rejected: position };
    return this.model.drawn;
  }

  select(node: PlanNode | undefined): void {
    this.model.selected = node;
  }

  selectTab(tab: Tab): void {
    this.model.activeTab = tab;
  }

  /** The tab after (+1) or before (-1) the open one, wrapping around. */
  nextTab(step: 1 | -1): Tab {
    const i = TABS.indexOf(this.model.activeTab);
    return TABS[(i + step + TABS.length) % TABS.length]!;
  }

  /** Whether the Raw tab must ask the host for the text: true once per plan, the first time. */
  askRawText(): boolean {
    const shown = this.model.shown;
    if (!shown || shown.rawAsked) return false;
    shown.rawAsked = true;
    return true;
  }

  /** The host's answer to `rawTextWanted`; ignored while a comparison is shown. Returns whether it was kept. */
  setRawText(text: string): boolean {
    const shown = this.model.shown;
    if (!shown || shown.comparison) return false;
    shown.rawText = text;
    return true;
  }

  /** Whether the nodes drawn now wait for their raw fields (a comparison carries its own). */
  get nodeRawLater(): boolean {
    return this.model.shown?.nodeRawLater === true;
  }

  /**
   * The host's `nodeRaw` for the plan shown: its fields go into the plan's nodes (the drawn tree's and its
   * rejected plans', the objects every tree and panel holds). Returns whether they were taken: not when no
   * plan waits for them, or when they do not match its trees.
   */
  setNodeRaw(m: NodeRawMessage): boolean {
    const shown = this.model.shown;
    if (!shown?.nodeRawLater || shown.comparison || !fillNodeRaw(shown.plan, m)) return false;
    delete shown.nodeRawLater;
    return true;
  }

  setSearchHits(hits: SearchHit[]): void {
    this.model.searchHits = hits;
    this.model.searchPos = -1;
  }

  /** Moves to the next (+1) or previous (-1) hit, wrapping around; undefined when there are none. */
  stepSearch(step: 1 | -1): SearchHit | undefined {
    const hits = this.model.searchHits;
    if (hits.length === 0) return undefined;
    this.model.searchPos = (this.model.searchPos + step + hits.length) % hits.length;
    return hits[this.model.searchPos];
  }

  /**
   * A suggestion's verification or build progressed. Returns false when the shown plan has no such
   * suggestion (the host answered about a plan the view no longer shows).
   */
  /** A measurement's order replaces the suggestions of the plan shown; false when no plan is shown. */
  setSuggestions(list: SuggestionView[]): boolean {
    if (!this.model.shown || this.model.shown.comparison) return false;
    this.model.shown.suggestions = list;
    return true;
  }

  setSuggestionStatus(id: string, status: SuggestionStatus | undefined, detail?: string, verdict?: SuggestionVerdict): boolean {
    const s = this.model.shown?.suggestions.find((x) => x.id === id);
    if (!s) return false;
    if (status !== undefined) s.status = status;
    if (detail !== undefined) s.statusDetail = detail;
    else delete s.statusDetail;
    // Building the index does not measure again: the verdict that justified it stays.
    if (verdict !== undefined) s.verdict = verdict;
    else if (status !== 'creating' && status !== 'created') delete s.verdict;
    return true;
  }
}
