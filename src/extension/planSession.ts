// One plan shown in the plan panel, from the Explain that made it: its connection, its query, its plan,
// the advice that joins it after the plan is shown, and what the panel's buttons do with them. Verify
// measures this query's suggestions on this connection, Create Index builds one of them there, Compare
// shows this query's previous run beside it. The panel keeps the session with the plan it shows, so a
// button acts on the query of the plan it belongs to, whatever Explain ran since.

import * as vscode from 'vscode';
import type { Finding, Plan } from '../core/index';
import { ClientCommands, type CreateIndexArgs } from '../protocol/languageServer';
import { measurer, type ConsentPrompt } from './advice';
import { findSuggestion, type AdviceContext } from './adviceView';
import type { CreateIndexOutcome } from './build';
import { Commands, UserError } from './commands';
import { settings } from './config';
import type { ConnectionSpec } from './connections/spec';
import type { Gateway } from './gateway';
import type { Log } from './log';
import type { MeasureHow, PanelActions, PanelPost } from './planPanel';
import { history } from './runHistory';

/** What every session is given by the composition root: the same for all of them. */
export interface SessionParts {
  log: Log;
  gateway: () => Promise<Gateway>;
  /** Read at each measure or build, so tests can answer the modal. */
  consent: () => ConsentPrompt;
  /** A measurement gave verdicts: the other faces (lens, squiggles, hover) ask again. */
  measured: () => void;
  /** The notification's Cancel, published while a measurement runs. */
  running: { cancel?: () => void };
}

/** The query a session explained, and where. */
export interface ExplainedQuery {
  title: string;
  /** The query as explained (on a family's member, for a family). */
  text: string;
  plan: Plan;
  findings: Finding[];
  connection: ConnectionSpec;
  /** The URI to connect with, password included; never logged. */
  connectUri: string;
  /** The file the query came from, if any. */
  source?: vscode.Uri;
  /** MongoDB: the family (`app_users*`) the query named, and the other collections of it. */
  family?: CreateIndexArgs['family'];
  /** The keys its runs are kept under (runHistory.ts), for Compare. */
  runKeys: string[];
}

export class PlanSession implements PanelActions {
  private advice: AdviceContext | undefined;
  private measuring: ReturnType<typeof measurer> | undefined;

  constructor(private readonly parts: SessionParts, readonly query: ExplainedQuery) {}

  /** The advice joins the plan once the advisor answered on the explain's session; undefined when it gave none. */
  advise(ctx: AdviceContext | undefined): void {
    this.advice = ctx;
    this.measuring = ctx
      ? measurer({
        log: this.parts.log, gateway: this.parts.gateway, ctx, uri: this.query.connectUri, text: this.query.text,
        connectionName: this.query.connection.name, running: this.parts.running,
        settings: () => {
          const now = settings();
          return { sampleSize: now.trialSampleSize, timeoutMs: now.timeoutMs, connectTimeoutMs: now.connectTimeoutMs };
        },
        consent: this.parts.consent,
        measured: this.parts.measured,
      })
      : undefined;
  }

  /** True once advice with suggestions to measure or build joined the plan. */
  get advised(): boolean {
    return this.advice !== undefined;
  }

  /** Verify: the server measures the suggestion's candidates for this query on this connection. */
  async measure(id: string, post: PanelPost, how?: MeasureHow): Promise<void> {
    if (!this.measuring) {
      post({ type: 'suggestionStatus', id, status: 'failed', detail: 'Verification needs a live connection: explain the query from its source file.' });
      return;
    }
    await this.measuring(id, post, how);
  }

  /** Create Index: builds the suggestion's index on this connection, after the Create Index command asked. */
  async build(id: string): Promise<CreateIndexOutcome> {
    const ctx = this.advice;
    if (!ctx) return { status: 'failed', detail: 'Creating an index needs a live connection: explain the query from its source file.' };
    const s = findSuggestion(ctx.live.advice, id);
    if (!s?.createText || !s.index) throw new UserError('This suggestion has no index to create.');
    const target = s.index.engine === 'postgres' ? s.index.table : s.index.collection;
    const uri = this.query.source ?? vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!uri) throw new UserError('Open the file or folder of this query first: the index is created on its connection.');
    const args: CreateIndexArgs = {
      uri: uri.toString(), engine: ctx.engine, createText: s.createText, target, reason: s.ruleText,
      ...(ctx.command?.database !== undefined ? { database: ctx.command.database } : {}), ...(this.query.family ? { family: this.query.family } : {}),
    };
    return (await vscode.commands.executeCommand<CreateIndexOutcome | undefined>(ClientCommands.createIndex, args)) ?? { status: 'failed', detail: 'The index could not be created: see the log.' };
  }

  /** Compare: this query's last two runs side by side. */
  compare(): Thenable<unknown> {
    return vscode.commands.executeCommand(Commands.compareWithPrevious, { key: history.find(this.query.runKeys, 2) });
  }
}
