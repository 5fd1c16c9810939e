// What the gate lets pass: the workspace's qpi.lock.json waivers and the qpi-ignore comments of each query,
// read as `qpi check` reads them, so the editor and the gate give one verdict.

import { fileURLToPath } from 'node:url';
import { coverJustification, coverOf, expiredOf, expiredSentence, queryIgnores, queryKeys, waiversOf, type Cover, type Lock } from '../core/index';
import type { FoundQuery, QueryAnalysis } from '../core/index';
import type { DocState, QueryCovers } from './documents';

/** A `qpi.lock.json` of the workspace: its folder (absolute, '/' separated), whose files its keys name. */
export interface WorkspaceLock {
  dir: string;
  lock: Lock;
}

export class Covers {
  /** The workspace's qpi.lock.json files (workspaceLock.ts reads them), and how often they changed. */
  private locks: WorkspaceLock[] = [];
  private version = 0;

  constructor(
    private readonly log: (message: string) => void,
    /** Today as the lock's waivers write it (YYYY-MM-DD, UTC). */
    readonly today: () => string,
  ) {}

  setLocks(locks: readonly WorkspaceLock[]): void {
    this.locks = locks.map((l) => ({ dir: l.dir.replace(/\\/g, '/').replace(/\/+$/, ''), lock: l.lock }));
    this.version++;
  }

  /** The nearest lock above a document and the document's path relative to the lock's folder, as its keys write it. */
  private lockOf(uri: string): { lock: Lock; file: string; lockFile: string } | undefined {
    if (this.locks.length === 0 || !uri.startsWith('file:')) return undefined;
    let path: string;
    try {
      path = fileURLToPath(uri).replace(/\\/g, '/');
    } catch {
      return undefined;
    }
    let best: WorkspaceLock | undefined;
    for (const l of this.locks) if (path.startsWith(`${l.dir}/`) && (!best || l.dir.length > best.dir.length)) best = l;
    if (!best) return undefined;
    const file = path.slice(best.dir.length + 1);
    const nested = this.locks.filter((l) => l.dir.length > 0 && path.startsWith(`${l.dir}/`)).length > 1;
    return { lock: best.lock, file, lockFile: nested ? `${best.dir.split('/').pop()}/qpi.lock.json` : 'qpi.lock.json' };
  }

  /**
   * Each query's `qpi-ignore` comments and the lock's waivers of its key, as `qpi check` reads them. The
   * keys (which parse the file for its functions' names) are computed only when the lock waives
   * something in this file.
   */
  of(state: DocState): Map<FoundQuery, QueryCovers> {
    const today = this.today();
    const c = state.covers;
    if (c && c.version === state.doc.version && c.locks === this.version && c.today === today && state.queries.every((q) => c.byQuery.has(q))) return c.byQuery;
    const byQuery = new Map<FoundQuery, QueryCovers>();
    const text = state.doc.getText();
    const ignores = queryIgnores(text, state.queries);
    const lock = this.lockOf(state.uri);
    const prefix = lock ? `${lock.file} ` : undefined;
    const waived = lock && prefix ? lock.lock.waivers.some((w) => w.query.startsWith(prefix)) : false;
    let keys: string[] | undefined;
    if (waived) {
      try {
        keys = queryKeys(text, lock!.file, state.queries);
      } catch (err) {
        this.log(`The lock's keys of ${state.uri} could not be computed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    state.queries.forEach((q, i) => {
      const waivers = keys ? waiversOf(lock!.lock, keys[i]!) : [];
      const own = ignores[i] ?? [];
      const sig = own.length === 0 && waivers.length === 0 ? '' : JSON.stringify([own.map((x) => [x.rule, x.reason, x.line]), waivers, today]);
      byQuery.set(q, { ignores: own, waivers, ...(lock ? { lockFile: lock.lockFile } : {}), sig });
    });
    state.covers = { version: state.doc.version, locks: this.version, today, byQuery };
    return byQuery;
  }

  /** The hover's part on the gate: what waives or ignores the query's findings, and its expired waivers. */
  hover(state: DocState, q: FoundQuery, a: QueryAnalysis): string {
    const covers = this.of(state).get(q);
    if (!covers || covers.sig === '') return '';
    const today = this.today();
    const lines: string[] = [];
    for (const code of new Set(a.findings.map((f) => f.code))) {
      const c = coverOf(code, covers.ignores, covers.waivers, today);
      if (c) lines.push(`- \`${code}\`: ${coverSentence(c, covers.lockFile)}`);
    }
    for (const w of expiredOf(covers.waivers, today)) lines.push(`- **Expired:** ${expiredSentence(w)} \`qpi check\` fails on it.`);
    if (lines.length === 0) return '';
    return `**qpi check**\n\n${lines.join('\n')}`;
  }
}

/** What covers a finding, as the editor says it after the finding's message. */
export function coverSentence(c: Cover, lockFile = 'qpi.lock.json'): string {
  if (c.by === 'ignore') return `Ignored by a qpi-ignore comment (line ${c.ignore.line}): ${c.ignore.reason || 'no reason given'}.`;
  return `${coverJustification(c).replace('in the lock', `in ${lockFile}`)}.`;
}
