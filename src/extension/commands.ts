// Every command id in one place, and the one wrapper they are registered through: a failing command
// shows one sentence with a "Show Log" button, writes the details to the log, and leaves the extension
// working. Tests read `lastError` to check the sentence a user saw.

import * as vscode from 'vscode';
import type { Log } from './log';

export const Commands = {
  explainQuery: 'queryPlanInspector.explainQuery',
  explainQueryAt: 'queryPlanInspector.explainQueryAt',
  openPlan: 'queryPlanInspector.openPlan',
  openPlanFromClipboard: 'queryPlanInspector.openPlanFromClipboard',
  compareWithPrevious: 'queryPlanInspector.compareWithPrevious',
  comparePlans: 'queryPlanInspector.comparePlans',
  addConnection: 'queryPlanInspector.addConnection',
  editConnection: 'queryPlanInspector.editConnection',
  removeConnection: 'queryPlanInspector.removeConnection',
  testConnection: 'queryPlanInspector.testConnection',
  measureOnExplain: 'queryPlanInspector.measureOnExplain',
  selectConnection: 'queryPlanInspector.selectConnection',
  useConnectionHere: 'queryPlanInspector.useConnectionHere',
  refreshConnections: 'queryPlanInspector.refreshConnections',
  showLog: 'queryPlanInspector.showLog',
  explainSample: 'queryPlanInspector.explainSample',
  showPlan: 'queryPlanInspector.showPlan',
  verifySuggestion: 'queryPlanInspector.verifySuggestion',
  createSuggestedIndex: 'queryPlanInspector.createSuggestedIndex',
} as const;

export type CommandId = (typeof Commands)[keyof typeof Commands];

/** An error whose message is already the one sentence the user should read. */
export class UserError extends Error {
  constructor(sentence: string) {
    super(sentence);
    this.name = 'UserError';
  }
}

/** The user dismissed a prompt: not an error, nothing to show. */
export class Dismissed extends Error {
  constructor() {
    super('dismissed');
    this.name = 'Dismissed';
  }
}

/** Turns any failure into the one sentence a user reads. */
export function sentenceOf(err: unknown, action: string): string {
  if (err instanceof Error) {
    const msg = err.message.trim().split('\n')[0]!.trim();
    // Typed errors from the adapters and UserError carry a finished sentence.
    if (err instanceof UserError || (err as { kind?: unknown }).kind !== undefined) return ensureSentence(msg);
    return ensureSentence(`${action} failed: ${msg || err.name}`);
  }
  return ensureSentence(`${action} failed: ${String(err)}`);
}

function ensureSentence(s: string): string {
  const t = s.length > 300 ? `${s.slice(0, 297)}...` : s;
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

export interface CommandState {
  /** The last sentence a failing command showed (for tests and the log). */
  lastError?: string;
}

export const commandState: CommandState = {};

/** Registers a command so that its failure becomes one sentence plus "Show Log". */
export function registerCommand<A extends unknown[], R>(
  context: vscode.ExtensionContext,
  log: Log,
  id: CommandId,
  title: string,
  handler: (...args: A) => Promise<R> | R,
): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await handler(...(args as A));
      } catch (err) {
        if (err instanceof Dismissed) return undefined;
        const sentence = log.clean(sentenceOf(err, title));
        commandState.lastError = sentence;
        log.error(`${title}: ${sentence}`, err instanceof UserError ? undefined : err);
        void vscode.window.showErrorMessage(sentence, 'Show Log').then((choice) => {
          if (choice === 'Show Log') log.show();
        });
        return undefined;
      }
    }),
  );
}
