// Says a per-file cap once: an Output line when the language server reports that a document hit one
// (CapReached), and a status bar hint naming the file and the cap while that document's editor is active.

import * as vscode from 'vscode';
import type { CapReachedParams } from '../protocol/languageServer';
import { Commands } from './commands';
import { capHint, capSentence, type Cap } from './caps';
import type { Log } from './log';

export class CapStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  /** Documents over a cap, by URI. */
  private readonly capped = new Map<string, { cap: Cap; limit: number; size: number }>();
  private readonly sub: vscode.Disposable;

  constructor(private readonly log: Log) {
    this.item = vscode.window.createStatusBarItem('queryPlanInspector.cap', vscode.StatusBarAlignment.Left, 49);
    this.item.name = 'Query Plan Inspector file cap';
    this.sub = vscode.window.onDidChangeActiveTextEditor(() => this.update());
  }

  /** The server's report: logged once per document and cap, and shown while the document is active. */
  report(p: CapReachedParams): void {
    if (!p.cap || p.limit === undefined || p.size === undefined) {
      this.capped.delete(p.uri);
    } else {
      const before = this.capped.get(p.uri);
      if (before?.cap !== p.cap) this.log.info(capSentence(p.uri, p.cap, p.limit, p.size));
      this.capped.set(p.uri, { cap: p.cap, limit: p.limit, size: p.size });
    }
    this.update();
  }

  private update(): void {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    const c = uri !== undefined ? this.capped.get(uri) : undefined;
    if (!uri || !c) {
      this.item.hide();
      return;
    }
    this.item.text = capHint(uri, c.cap, c.limit);
    this.item.tooltip = `${capSentence(uri, c.cap, c.limit, c.size)} Click to show the log.`;
    this.item.command = Commands.showLog;
    this.item.show();
  }

  /** The text shown, or undefined when hidden (the extension's tests read it). */
  get text(): string | undefined {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    return uri !== undefined && this.capped.has(uri) ? this.item.text : undefined;
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
