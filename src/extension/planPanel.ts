// The plan panel: one webview that shows the plan view (dist/webview/webview.js). It runs under the
// strict policy of src/protocol/webview.ts with a fresh crypto nonce per page, may read only
// dist/webview, and is not kept alive when hidden: when it becomes visible again the view reloads,
// says `ready`, and the panel posts the current message again. Every inbound message is validated and
// handled inside try/catch, so a bad message costs one log line, never the panel.

import * as vscode from 'vscode';
import type { Finding, Plan } from '../core/index';
import {
  nodeRawOf, parseViewMessage, webviewHtml, wirePlan, wirePlanWithoutRaw, WEBVIEW_PROTOCOL_VERSION,
  type HostToViewMessage, type ShowComparisonMessage, type ShowPlanMessage, type SuggestionView, type ViewToHostMessage,
} from '../protocol/webview';
import type { Log } from './log';

/** Where a plan came from, so a node can be revealed in the query it explains. */
export interface PlanSource {
  uri?: vscode.Uri;
  range?: vscode.Range;
}

/** How a measurement was asked for. */
export interface MeasureHow {
  /** Measuring at once after an explain (a setting asked for it): no modal, and nothing built on the user's table. */
  unattended?: boolean;
}

/** Posts to the view for the plan an action was asked on. */
export type PanelPost = (m: HostToViewMessage) => void;

/** What the buttons of one plan do: its session (planSession.ts), kept by the panel with the plan it shows. */
export interface PanelActions {
  /** Verify (`verifySuggestion`): measures the suggestion; answers with suggestionStatus messages through `post`. */
  measure(id: string, post: PanelPost, how?: MeasureHow): Promise<void>;
  /** Create Index (`createIndex`, the button the view shows once Verify succeeded): builds the index after asking. */
  build(id: string): Promise<{ status: 'created' | 'declined' | 'failed'; detail?: string }>;
}

export class PlanPanel implements vscode.Disposable {
  private static current: PlanPanel | undefined;
  static readonly viewType = 'queryPlanInspector.plan';

  /** Messages the view sent, newest last (tests read them). */
  readonly received: ViewToHostMessage[] = [];
  private readonly panel: vscode.WebviewPanel;
  private readonly disposables: vscode.Disposable[] = [];
  private message: ShowPlanMessage | ShowComparisonMessage | undefined;
  /** The explain output of the plan shown, sent only when the view asks (the Raw tab). */
  private rawText: string | undefined;
  /** The plan shown, with its nodes' raw fields, which go to the page once it says it drew the plan (`nodeRaw`). */
  private rawOf: Plan | undefined;
  private ready = false;
  private source: PlanSource | undefined;
  /** The actions of the plan shown (undefined for a comparison or a plan opened from a file). */
  private actions: PanelActions | undefined;
  private readyWaiters: ((ok: boolean) => void)[] = [];
  private drawnWaiters: (() => void)[] = [];

  private constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly log: Log,
  ) {
    const root = vscode.Uri.joinPath(extensionUri, 'dist', 'webview');
    this.panel = vscode.window.createWebviewPanel(PlanPanel.viewType, 'Query Plan', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
      enableScripts: true,
      localResourceRoots: [root],
      retainContextWhenHidden: false,
      enableFindWidget: true,
    });
    this.panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'activity.svg');
    this.panel.webview.html = this.html();
    this.disposables.push(
      this.panel.webview.onDidReceiveMessage((data: unknown) => void this.receive(data)),
      this.panel.onDidDispose(() => this.dispose()),
      this.panel.onDidChangeViewState(() => {
        // A hidden webview loses its page; the reloaded page says `ready` again.
        if (!this.panel.visible) this.ready = false;
      }),
    );
  }

  /** Shows a plan in the panel (creating or revealing it). */
  static showPlan(extensionUri: vscode.Uri, log: Log, m: { title: string; plan: Plan; findings: Finding[]; rawText?: string; suggestions?: SuggestionView[] }, source?: PlanSource, actions?: PanelActions): PlanPanel {
    const panel = PlanPanel.reveal(extensionUri, log);
    // Slim on the wire: the `nodes` index would repeat every subtree in JSON; the view rebuilds it. The
    // nodes' raw fields, a third of the rest, follow once the plan is drawn: the cards do not show them.
    const message: ShowPlanMessage = { type: 'showPlan', title: m.title, plan: wirePlanWithoutRaw(m.plan), findings: m.findings, nodeRawLater: true };
    // The text goes over only when the Raw tab asks for it: the plan itself is already the larger part.
    if (m.rawText !== undefined) message.hasRawText = true;
    if (m.suggestions) message.suggestions = m.suggestions;
    panel.setMessage(message, m.title, source, actions, m.rawText, m.plan);
    return panel;
  }

  /**
   * Opens the panel before there is a plan to show, when none is open: its page loads (and says "Waiting
   * for a plan…") while the explain connects and runs, instead of after it, which on the first Explain of
   * a window is the larger part of the wait. Returns what closes it again if no plan or comparison ever
   * reached it (the explain failed or was dismissed); undefined when a panel was already open.
   */
  static prepare(extensionUri: vscode.Uri, log: Log): (() => void) | undefined {
    if (PlanPanel.current) return undefined;
    const panel = PlanPanel.reveal(extensionUri, log);
    return () => {
      if (PlanPanel.current === panel && panel.message === undefined) panel.dispose();
    };
  }

  static showComparison(extensionUri: vscode.Uri, log: Log, m: Omit<ShowComparisonMessage, 'type'>): PlanPanel {
    const panel = PlanPanel.reveal(extensionUri, log);
    const before = { ...m.before, plan: wirePlan(m.before.plan) };
    const after = { ...m.after, plan: wirePlan(m.after.plan) };
    panel.setMessage({ type: 'showComparison', ...m, before, after }, `Compare: ${m.title}`, undefined, undefined);
    return panel;
  }

  static get active(): PlanPanel | undefined {
    return PlanPanel.current;
  }

  private static reveal(extensionUri: vscode.Uri, log: Log): PlanPanel {
    if (PlanPanel.current) {
      // Never over the file being edited: a panel that sits in the active editor's group (the user moved
      // one or the other) goes beside it; otherwise it stays where the user put it.
      PlanPanel.current.show();
      return PlanPanel.current;
    }
    PlanPanel.current = new PlanPanel(extensionUri, log);
    return PlanPanel.current;
  }

  private setMessage(message: ShowPlanMessage | ShowComparisonMessage, title: string, source: PlanSource | undefined, actions: PanelActions | undefined, rawText?: string, rawOf?: Plan): void {
    this.message = message;
    this.actions = actions;
    this.rawText = rawText;
    this.rawOf = rawOf;
    this.source = source;
    this.panel.title = title.length > 40 ? `${title.slice(0, 39)}…` : title;
    if (this.ready) this.post(message);
  }

  /** Resolves once the view has said `ready` for the current page (tests and callers that need it). */
  whenReady(timeoutMs = 30_000): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.readyWaiters.push((ok) => {
        clearTimeout(timer);
        resolve(ok);
      });
    });
  }

  /**
   * Resolves when the page says it has drawn the plan just posted (`planDrawn`), after `boundMs` at the
   * latest, or when the panel closes. A page still loading has the plan only once it is `ready`: then the
   * promise resolves on the next timer turn, after the extension host has written its messages, so the
   * work that waits on it overlaps the page's loading instead of adding to it.
   */
  drawn(boundMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        const i = this.drawnWaiters.indexOf(done);
        if (i >= 0) this.drawnWaiters.splice(i, 1);
        resolve();
      };
      const timer = setTimeout(done, this.ready ? boundMs : 0);
      this.drawnWaiters.push(done);
    });
  }

  get title(): string {
    return this.panel.title;
  }

  /**
   * For the plan shown now: gives it its suggestions when the advice comes, after the plan was drawn.
   * Returns false (and shows nothing) when another plan or a comparison is shown by then.
   */
  laterSuggestions(): (list: SuggestionView[]) => boolean {
    const shown = this.message;
    const showing = this.stillShowing();
    return (list) => {
      if (!showing() || shown?.type !== 'showPlan') return false;
      this.postStatus({ type: 'setSuggestions', suggestions: list }, shown);
      return true;
    };
  }

  /** For the plan or comparison shown now: true while it is still the one shown (no later Explain replaced it). */
  stillShowing(): () => boolean {
    const shown = this.message;
    return () => this.message === shown;
  }

  /** Brings the panel into view beside the file being edited, without taking the keyboard. */
  show(): void {
    const editing = vscode.window.activeTextEditor?.viewColumn;
    // Already in view beside the file: nothing to move, and no reveal for the workbench to lay out
    // while the next plan is on its way to the page.
    if (this.panel.visible && (editing === undefined || this.panel.viewColumn !== editing)) return;
    this.panel.reveal(editing !== undefined && this.panel.viewColumn === editing ? vscode.ViewColumn.Beside : undefined, true);
  }

  /** The suggestions of the plan shown, best first (empty for a comparison). */
  get suggestions(): SuggestionView[] {
    return this.message?.type === 'showPlan' ? this.message.suggestions ?? [] : [];
  }

  /** The actions of the plan shown now: its session (undefined for a comparison or a plan opened from a file). */
  get session(): PanelActions | undefined {
    return this.actions;
  }

  /** Does what the view's Verify button does, for the walkthrough's "Verify" step. */
  measureSuggestion(id: string): Promise<void> {
    return this.receive({ type: 'verifySuggestion', id });
  }

  /**
   * Measures the suggestions of the plan shown without asking anything (the measurement at once after an
   * explain): the same run as Verify, its progress and verdicts shown the same way. Nothing when another
   * plan is shown by now than the one this session belongs to.
   */
  async measure(session: PanelActions, id: string): Promise<void> {
    const shown = this.message;
    if (this.actions !== session) return;
    try {
      await session.measure(id, (reply) => this.postStatus(reply, shown), { unattended: true });
    } catch (err) {
      this.log.error('Measuring the suggestions failed', err);
    }
  }

  /** Does what the view's Create Index button does, for the walkthrough and the command palette. */
  buildIndex(id: string): Promise<void> {
    return this.receive({ type: 'createIndex', id });
  }

  /**
   * Builds a suggestion's index (the session's build asks first), telling the view `creating`, then `created` or
   * `failed`; a declined confirmation puts the suggestion back as it was, so its button comes back.
   */
  private async build(id: string, post: PanelPost, shown: ShowPlanMessage | ShowComparisonMessage | undefined, actions: PanelActions | undefined): Promise<void> {
    const was = shown?.type === 'showPlan' ? shown.suggestions?.find((x) => x.id === id) : undefined;
    if (!actions) {
      post({ type: 'suggestionStatus', id, status: 'failed', detail: 'Creating an index needs a live connection: explain the query from its source file.' });
      return;
    }
    const status = was?.status ?? 'unverified';
    const detail = was?.statusDetail;
    post({ type: 'suggestionStatus', id, status: 'creating', detail: 'Waiting for your answer, then building the index…' });
    try {
      const r = await actions.build(id);
      if (r.status === 'declined') post({ type: 'suggestionStatus', id, status, ...(detail !== undefined ? { detail } : {}) });
      else post({ type: 'suggestionStatus', id, status: r.status, ...(r.detail !== undefined ? { detail: r.detail } : {}) });
    } catch (err) {
      post({ type: 'suggestionStatus', id, status: 'failed', detail: err instanceof Error ? err.message : String(err) });
    }
  }

  get lastMessage(): ShowPlanMessage | ShowComparisonMessage | undefined {
    return this.message;
  }

  post(message: HostToViewMessage): void {
    void this.panel.webview.postMessage(message).then(undefined, (err: unknown) => this.log.error('Posting to the plan view failed', err));
  }

  /**
   * Posts a verification's progress for the plan it was asked on, and keeps it in that plan's message,
   * so a view reloaded after being hidden shows the verdict again. Replies for a plan the panel no longer
   * shows are dropped: the ids of another plan's suggestions may be the same.
   */
  private postStatus(reply: HostToViewMessage, shown: ShowPlanMessage | ShowComparisonMessage | undefined): void {
    if (this.message !== shown) return;
    if (reply.type === 'suggestionStatus' && shown?.type === 'showPlan') {
      const s = shown.suggestions?.find((x) => x.id === reply.id);
      if (s) {
        s.status = reply.status;
        if (reply.detail !== undefined) s.statusDetail = reply.detail;
        else delete s.statusDetail;
        if (reply.verdict !== undefined) s.verdict = reply.verdict;
        else delete s.verdict;
      }
      // The walkthrough's Verify step is done however the verdict came (its button or the panel's).
      if (reply.verdict !== undefined) void vscode.commands.executeCommand('setContext', 'queryPlanInspector.verified', true);
    }
    // A measured order replaces the list, also for a view reloaded after being hidden.
    if (reply.type === 'setSuggestions' && shown?.type === 'showPlan') shown.suggestions = reply.suggestions;
    this.post(reply);
  }

  private async receive(data: unknown): Promise<void> {
    try {
      const parsed = parseViewMessage(data);
      if (!parsed.ok) {
        this.log.warn(`The plan view sent a message that was ignored: ${parsed.reason}.`);
        return;
      }
      const m = parsed.message;
      // A button acts on the plan it was pressed on, with that plan's session, whatever is shown by the time it answers.
      const shown = this.message;
      const actions = this.actions;
      this.received.push(m);
      if (this.received.length > 200) this.received.shift();
      switch (m.type) {
        case 'ready':
          if (m.protocolVersion !== WEBVIEW_PROTOCOL_VERSION) this.log.warn(`The plan view speaks protocol ${m.protocolVersion}, the extension ${WEBVIEW_PROTOCOL_VERSION}.`);
          this.ready = true;
          if (this.message) this.post(this.message);
          for (const w of this.readyWaiters.splice(0)) w(true);
          break;
        case 'planDrawn':
          // The page that said it holds the message shown now (messages keep their order both ways).
          if (this.rawOf && this.ready) this.post(nodeRawOf(this.rawOf));
          for (const w of this.drawnWaiters.slice()) w();
          break;
        case 'rawTextWanted':
          if (this.rawText !== undefined) this.post({ type: 'rawText', text: this.rawText });
          break;
        case 'copyText':
          await vscode.env.clipboard.writeText(m.text);
          void vscode.window.setStatusBarMessage(`Copied ${m.what ?? 'the text'}.`, 3000);
          break;
        case 'saveFile':
          await this.save(m.fileName, m.encoding, m.content);
          break;
        case 'openNode':
          if (this.source?.uri) {
            const doc = await vscode.workspace.openTextDocument(this.source.uri);
            // Where the file is already shown, else in a group other than the panel's, so the plan stays in view.
            const shown = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === doc.uri.toString())?.viewColumn;
            const column = shown ?? (this.panel.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Beside : vscode.ViewColumn.One);
            const editor = await vscode.window.showTextDocument(doc, { viewColumn: column, preserveFocus: false });
            if (this.source.range) {
              editor.selection = new vscode.Selection(this.source.range.start, this.source.range.end);
              editor.revealRange(this.source.range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
            }
          }
          break;
        case 'verifySuggestion':
          if (actions) await actions.measure(m.id, (reply) => this.postStatus(reply, shown));
          else this.post({ type: 'suggestionStatus', id: m.id, status: 'failed', detail: 'Verification needs a live connection: explain the query from its source file.' });
          break;
        case 'createIndex':
          await this.build(m.id, (reply) => this.postStatus(reply, shown), shown, actions);
          break;
        case 'reportError':
          this.log.error(`Plan view: ${m.message}`, m.detail);
          break;
      }
    } catch (err) {
      this.log.error('Handling a message from the plan view failed', err);
    }
  }

  private async save(fileName: string, encoding: 'utf8' | 'base64', content: string): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({ defaultUri: folder ? vscode.Uri.joinPath(folder, fileName) : undefined, saveLabel: 'Export' });
    if (!target) return;
    const bytes = encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
    await vscode.workspace.fs.writeFile(target, bytes);
    void vscode.window.setStatusBarMessage(`Exported ${fileName}.`, 3000);
  }

  private html(): string {
    const webview = this.panel.webview;
    const root = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    const bytes = new Uint8Array(18);
    globalThis.crypto.getRandomValues(bytes);
    const nonce = Buffer.from(bytes).toString('base64').replace(/[^A-Za-z0-9]/g, '');
    return webviewHtml({
      cspSource: webview.cspSource,
      nonce,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(root, 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(root, 'style.css')).toString(),
      title: 'Query Plan',
    });
  }

  dispose(): void {
    if (PlanPanel.current === this) PlanPanel.current = undefined;
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
    for (const w of this.readyWaiters.splice(0)) w(false);
    for (const w of this.drawnWaiters.slice()) w();
  }
}
