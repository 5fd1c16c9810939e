// The workspace's qpi.lock.json files, read by the language server itself (as workspaceSchema.ts reads
// the schema files), so the editor shows the waivers `qpi check` honours. `qpi check` reads the lock of
// the folder it runs in and names files relative to it; the editor takes, for each document, the nearest
// qpi.lock.json in the folders above it up to its workspace folder (a repository's root lock, or a
// monorepo package's own). The text goes to the pure reader in src/core/check/lock.ts; a lock is read
// again when the editor's file watcher reports it created, changed or deleted.

import { readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatBytes, parseLock } from '../core/index';
import type { WorkspaceLock } from './covers';

export const LOCK_FILE = 'qpi.lock.json';

/** A lock larger than this is not read (a lock of ten thousand queries is a few megabytes). */
const MAX_LOCK_BYTES = 32_000_000;

export class WorkspaceLocks {
  /** Locks read, by their folder (absolute, the platform's separators). */
  private readonly locks = new Map<string, WorkspaceLock>();
  /** Folders already looked in for a lock. */
  private readonly looked = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending = new Set<string>();

  constructor(
    private readonly folders: string[],
    private readonly publish: (locks: WorkspaceLock[]) => void,
    private readonly log: (message: string) => void,
    /** Wait after a change before reading, so a burst (a branch checkout, `qpi check --update`) is read once. */
    private readonly delayMs = 300,
  ) {}

  /** Folder URIs (file: only) as the client sends them in `initialize`. */
  static fromUris(uris: string[], publish: (locks: WorkspaceLock[]) => void, log: (message: string) => void, delayMs?: number): WorkspaceLocks {
    return new WorkspaceLocks(uris.filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u)), publish, log, delayMs);
  }

  /** Reads the lock at the root of each workspace folder. */
  async load(): Promise<WorkspaceLock[]> {
    for (const f of this.folders) await this.look(f);
    return this.emit();
  }

  /**
   * A document was opened: the folders from its own up to its workspace folder are looked in (each
   * once), so a package's lock is found without walking the workspace.
   */
  async opened(uri: string): Promise<WorkspaceLock[] | undefined> {
    if (!uri.startsWith('file:')) return undefined;
    const path = fileURLToPath(uri);
    const folder = this.folderOf(path);
    if (folder === undefined) return undefined;
    let found = false;
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      if (!this.looked.has(dir) && (await this.look(dir))) found = true;
      if (dir === folder || dirname(dir) === dir) break;
    }
    return found ? this.emit() : undefined;
  }

  /** Files were created, changed or deleted (the client's file watcher): the locks among them are read again. */
  changed(uris: string[]): void {
    let any = false;
    for (const u of uris) {
      if (!u.startsWith('file:')) continue;
      const path = fileURLToPath(u);
      if (path.split(sep).pop() !== LOCK_FILE || this.folderOf(path) === undefined) continue;
      this.pending.add(dirname(path));
      any = true;
    }
    if (!any) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.applyChanges();
    }, this.delayMs);
  }

  /** Resolves when the changes reported so far have been read and published (tests wait on it). */
  async applyChanges(): Promise<WorkspaceLock[]> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const dirs = [...this.pending];
    this.pending.clear();
    for (const d of dirs) await this.look(d);
    return this.emit();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  private folderOf(path: string): string | undefined {
    return this.folders.find((f) => {
      const rel = relative(f, path);
      return !rel.startsWith('..') && !rel.split(sep).includes('node_modules');
    });
  }

  /** Reads the lock of one folder; true when what is known of it changed. */
  private async look(dir: string): Promise<boolean> {
    this.looked.add(dir);
    const path = join(dir, LOCK_FILE);
    const had = this.locks.has(dir);
    let text: string;
    try {
      if ((await stat(path)).size > MAX_LOCK_BYTES) {
        this.log(`${path} is over ${formatBytes(MAX_LOCK_BYTES)} and is not read: its waivers are not shown.`);
        this.locks.delete(dir);
        return had;
      }
      text = await readFile(path, 'utf8');
    } catch {
      // Not there (or gone): no lock for this folder.
      this.locks.delete(dir);
      return had;
    }
    const parsed = parseLock(text);
    if (!parsed.ok) {
      this.log(`${path}: ${parsed.error} Its waivers are not shown until it reads again.`);
      this.locks.delete(dir);
      return had;
    }
    this.locks.set(dir, { dir: dir.split(sep).join('/'), lock: parsed.lock });
    return true;
  }

  private emit(): WorkspaceLock[] {
    const locks = [...this.locks.values()];
    this.publish(locks);
    return locks;
  }
}
