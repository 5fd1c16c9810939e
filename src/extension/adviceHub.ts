// The one advice service (src/adapters/adviceService.ts), loaded with the adapters on first use, and what
// tells every face (panel, lens, squiggles, hover) that its advice changed: dropped after Create Index, a
// connection switch or Refresh, or measured in place by Verify.

import * as vscode from 'vscode';
import type { AdviceService } from '../adapters/adviceService';

/** What an invalidation covers: a connection (all when absent), and only these collections or tables when given. */
export interface AdviceScope {
  connection?: string;
  targets?: string[];
}

export class AdviceHub implements vscode.Disposable {
  private loaded: Promise<AdviceService> | undefined;
  private readonly invalidated = new vscode.EventEmitter<AdviceScope>();
  private readonly measuredInPlace = new vscode.EventEmitter<void>();
  /** Fired once advice was dropped; the language client makes the server ask again. */
  readonly onInvalidated = this.invalidated.event;
  /** Fired by measured(); the language client has the server ask for the cached advice again. */
  readonly onMeasured = this.measuredInPlace.event;

  /** The service, loaded on first use. */
  service(): Promise<AdviceService> {
    return (this.loaded ??= import('../adapters/adviceService').then((m) => {
      const service = new m.AdviceService();
      service.onInvalidate((scope) => this.invalidated.fire(scope));
      return service;
    }));
  }

  /** Drops cached advice so every face asks again. */
  invalidate(scope: AdviceScope): void {
    // Before the service is first loaded nothing is cached, but the server's lists may still be stale.
    if (this.loaded) void this.loaded.then((a) => a.invalidate(scope));
    else this.invalidated.fire(scope);
  }

  /**
   * A cached answer changed in place (Verify measured it): the faces ask again and get the measured
   * verdict from the cache, which is kept.
   */
  measured(): void {
    this.measuredInPlace.fire();
  }

  dispose(): void {
    this.invalidated.dispose();
    this.measuredInPlace.dispose();
  }
}
