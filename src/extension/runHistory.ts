// The runs of each query in this window, for "Compare with previous run": the last two, kept under the
// query's text and its place in its file, and moved with the place when the file is edited above it.

import * as vscode from 'vscode';
import type { Finding, Plan } from '../core/index';
import type { ConnectionEngine } from './connections/spec';
import { lineAfter } from './runPlaces';

export interface Run {
  title: string;
  plan: Plan;
  findings: Finding[];
  at: number;
  label: string;
}

/**
 * The last two runs of each query, for "Compare with previous run". A run is kept under its text and,
 * when it came from a file, under its place there (the file and the line it starts on), so that a query
 * rewritten in place (a quick fix, an edit) compares with its run before the rewrite.
 */
export class RunHistory {
  private readonly runs = new Map<string, Run[]>();
  lastKey: string | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  static key(engine: ConnectionEngine, text: string): string {
    return `${engine}\u0000${text.replace(/\s+/g, ' ').trim()}`;
  }

  static placeKey(engine: ConnectionEngine, uri: vscode.Uri, line: number): string {
    return `${engine}\u0000@${uri.toString()}#${line}`;
  }

  /** The keys of a query, its place first (when known), then its text. */
  static keys(engine: ConnectionEngine, text: string, place?: { uri: vscode.Uri; line: number }): string[] {
    return [...(place ? [RunHistory.placeKey(engine, place.uri, place.line)] : []), RunHistory.key(engine, text)];
  }

  /**
   * Adds a run under each of its keys; `lastKey` is the first (the place, when known). Listeners hear of
   * it only when a key gets its second run (what "Compare with previous run" needs) or the first run of
   * all: an Explain of a query that ran twice already changes no lens.
   */
  add(keys: string | string[], run: Run): void {
    const all = typeof keys === 'string' ? [keys] : keys;
    const changes = this.lastKey === undefined || all.some((key) => (this.runs.get(key)?.length ?? 0) < 2);
    for (const key of all) {
      const list = this.runs.get(key) ?? [];
      if (list.at(-1) !== run) list.push(run);
      if (list.length > 2) list.shift();
      this.runs.set(key, list);
    }
    this.lastKey = all[0];
    if (changes) this.changed.fire();
  }

  /**
   * Moves the runs kept under places of an edited file to the lines their queries start on now, so a
   * fix that inserts lines above a query (the keyset fix's declaration) still finds its previous run.
   */
  follow(uri: vscode.Uri, changes: readonly vscode.TextDocumentContentChangeEvent[]): void {
    if (changes.length === 0) return;
    const prefix = `\u0000@${uri.toString()}#`;
    const moved: [string, string, Run[]][] = [];
    const plain = changes.map((c) => ({ startLine: c.range.start.line, startCharacter: c.range.start.character, endLine: c.range.end.line, endCharacter: c.range.end.character, text: c.text }));
    for (const [key, runs] of this.runs) {
      const at = key.indexOf(prefix);
      if (at < 0) continue;
      const line = Number(key.slice(at + prefix.length));
      const now = lineAfter(line, plain);
      if (now !== line) moved.push([key, `${key.slice(0, at + prefix.length)}${now}`, runs]);
    }
    for (const [from] of moved) this.runs.delete(from);
    for (const [from, to, runs] of moved) {
      this.runs.set(to, runs);
      if (this.lastKey === from) this.lastKey = to;
    }
    if (moved.length > 0) this.changed.fire();
  }

  get(key: string | undefined): Run[] {
    return key ? this.runs.get(key) ?? [] : [];
  }

  /** The first of these keys that has at least `count` runs. */
  find(keys: string[], count: number): string | undefined {
    return keys.find((k) => this.get(k).length >= count);
  }
}

export const history = new RunHistory();
