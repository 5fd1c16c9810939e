// The extension's one output channel. Every line passes through `redact` first, so a password that
// reached an error message (a driver echoing a URI, say) never lands in the log.

import * as vscode from 'vscode';
import { redact } from './connections/spec';

export class Log implements vscode.Disposable {
  private readonly channel: vscode.LogOutputChannel;
  /** Passwords read from SecretStorage during this session; removed from every logged line. */
  private readonly secrets = new Set<string>();

  constructor(name: string) {
    this.channel = vscode.window.createOutputChannel(name, { log: true });
  }

  /** Registers a secret so that it is masked in everything logged afterwards. */
  addSecret(secret: string | undefined): void {
    if (secret) this.secrets.add(secret);
  }

  clean(text: string): string {
    return redact(text, this.secrets);
  }

  info(message: string): void {
    this.channel.info(this.clean(message));
  }

  warn(message: string): void {
    this.channel.warn(this.clean(message));
  }

  error(message: string, err?: unknown): void {
    const detail = err instanceof Error ? `${err.message}${err.stack ? `\n${err.stack}` : ''}` : err === undefined ? '' : String(err);
    this.channel.error(this.clean(detail ? `${message}\n${detail}` : message));
  }

  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
