// The schema files of the workspace's folders, read by the language server itself (it is a Node process
// on the same machine as the files): SQL schema files and migrations, Prisma schemas, and the scripts that
// may declare Mongoose schemas or TypeORM entities. The text goes to the pure readers in src/core/schema; the result reaches
// the service as the repository's schema. Bounded: folders such as node_modules are skipped, and the
// walk, the files and their sizes have limits, past which the rest is left unread and the log says so.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mayDeclareScriptSchema, readRepositorySchema, schemaFileKind, type RepositorySchema, type SchemaFile } from '../core/index';

export interface SchemaLimits {
  /** Directory entries looked at in one walk. */
  entries: number;
  /** Files read (SQL, Prisma, scripts). */
  files: number;
  /** Bytes of one file; a larger one (a dump, a bundle) is not read. */
  fileBytes: number;
  /** Bytes kept in all. */
  totalBytes: number;
}

export const DEFAULT_SCHEMA_LIMITS: SchemaLimits = { entries: 50_000, files: 3_000, fileBytes: 1_000_000, totalBytes: 32_000_000 };

/** Folders that hold no schema of the project's own: dependencies, build output, caches. */
const SKIPPED = new Set(['node_modules', 'bower_components', 'vendor', 'dist', 'build', 'out', 'coverage', 'tmp', 'target']);

export class WorkspaceSchema {
  /** The kept texts by absolute path, with the path shown in hovers. */
  private readonly files = new Map<string, SchemaFile>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending = new Set<string>();
  /** Why the files kept may be only some of the schema's (a limit of the walk, a file too large to read). */
  private stopped: string | undefined;
  private readonly tooLarge = new Set<string>();

  constructor(
    private readonly folders: string[],
    private readonly publish: (schema: RepositorySchema) => void,
    private readonly log: (message: string) => void,
    private readonly limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS,
    /** Wait after a file change before reading, so a burst (a branch checkout) is read once. */
    private readonly delayMs = 300,
  ) {}

  /** Folder URIs (file: only) as the client sends them in `initialize`. */
  static fromUris(uris: string[], publish: (schema: RepositorySchema) => void, log: (message: string) => void, limits?: SchemaLimits, delayMs?: number): WorkspaceSchema {
    const folders = uris.filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
    return new WorkspaceSchema(folders, publish, log, limits, delayMs);
  }

  /** Walks the folders, reads the schema files and publishes what they declare. */
  async load(): Promise<RepositorySchema> {
    this.files.clear();
    this.tooLarge.clear();
    let entries = 0;
    let bytes = 0;
    let stopped: string | undefined;
    for (const folder of this.folders) {
      const stack = [folder];
      while (stack.length > 0 && stopped === undefined) {
        const dir = stack.pop()!;
        let list;
        try {
          list = await readdir(dir, { withFileTypes: true });
        } catch {
          continue;
        }
        for (const e of list) {
          if (++entries > this.limits.entries) {
            stopped = `${this.limits.entries} entries`;
            break;
          }
          const path = join(dir, e.name);
          if (e.isDirectory()) {
            if (!e.name.startsWith('.') && !SKIPPED.has(e.name)) stack.push(path);
            continue;
          }
          if (!e.isFile() || schemaFileKind(e.name) === undefined) continue;
          if (this.files.size >= this.limits.files) {
            stopped = `${this.limits.files} schema files`;
            break;
          }
          const file = await this.read(path);
          if (!file) continue;
          if (bytes + file.text.length > this.limits.totalBytes) {
            stopped = `${this.limits.totalBytes} bytes`;
            break;
          }
          bytes += file.text.length;
          this.files.set(path, file);
        }
      }
    }
    if (stopped) this.log(`The workspace's schema files were read up to ${stopped}; the rest is not used for offline advice.`);
    this.stopped = stopped;
    return this.build();
  }

  /** A file was created, changed or deleted (the client's file watcher): read again after a short pause. */
  changed(uris: string[]): void {
    for (const u of uris) if (u.startsWith('file:')) this.pending.add(fileURLToPath(u));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.applyChanges();
    }, this.delayMs);
  }

  /** Resolves when the changes reported so far have been read and published (tests wait on it). */
  async applyChanges(): Promise<RepositorySchema> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const paths = [...this.pending];
    this.pending.clear();
    for (const path of paths) {
      if (!this.inWorkspace(path) || schemaFileKind(path) === undefined) continue;
      const file = await this.read(path);
      if (file) this.files.set(path, file);
      else this.files.delete(path);
    }
    return this.build();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  private inWorkspace(path: string): boolean {
    return this.folders.some((f) => {
      const rel = relative(f, path);
      return rel !== '' && !rel.startsWith('..') && !rel.split(sep).some((part) => part.startsWith('.') || SKIPPED.has(part));
    });
  }

  /** The file's text when it is a schema file within the limits, else undefined (also when it is gone). */
  private async read(path: string): Promise<SchemaFile | undefined> {
    try {
      this.tooLarge.delete(path);
      if ((await stat(path)).size > this.limits.fileBytes) {
        this.tooLarge.add(path);
        return undefined;
      }
      const text = await readFile(path, 'utf8');
      // A script is kept only when it may declare a Mongoose schema or a TypeORM entity: most of a project's scripts do not.
      if (schemaFileKind(path) === 'script' && !mayDeclareScriptSchema(text)) return undefined;
      return { path: this.shown(path), text };
    } catch {
      return undefined;
    }
  }

  /** The path relative to its folder ('/' separated), prefixed with the folder's name when there are several. */
  private shown(path: string): string {
    const folder = this.folders.find((f) => !relative(f, path).startsWith('..')) ?? '';
    const rel = relative(folder, path).split(sep).join('/');
    return this.folders.length > 1 ? `${folder.split(sep).pop()}/${rel}` : rel;
  }

  private build(): RepositorySchema {
    const schema = readRepositorySchema([...this.files.values()]);
    // A schema read in part never says a table is not there (repositoryCatalog).
    if (this.stopped) schema.partial?.push(`The workspace's schema files were read up to ${this.stopped}.`);
    if (this.tooLarge.size > 0) schema.partial?.push(`${this.tooLarge.size} schema file${this.tooLarge.size === 1 ? ' was' : 's were'} over ${this.limits.fileBytes} bytes and not read.`);
    for (const w of schema.warnings.slice(0, 20)) this.log(w);
    this.publish(schema);
    return schema;
  }
}
