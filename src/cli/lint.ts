// `qpi lint FILE...`: the language server's inline advice from a terminal or a CI job. Each file is read
// with the same finder and rules the editor uses, without a database (findings that hold whatever the
// data: skip/OFFSET pagination, unanchored regexes, functions around columns, $match after a rename...).
// A script's Prisma calls are written with the tables and columns its repository's schema.prisma maps
// them to (`--schema FILE`, else the nearest `prisma/schema.prisma` or `schema.prisma` above the file),
// as the language server writes them from the workspace's schema.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { nodeWorkspaceModules } from '../node/workspaceModules';
import { lintText, loadSqlParser, plural, querySourceKind, readRepositorySchema, type LintResult, type PrismaModels } from '../core/index';
import { EXIT_OK, EXIT_REFUSED, readFailure, readOrSay, type Io } from './io';

/** Exit code when --fail-on-warning is given and a finding of warning severity was reported. */
export const EXIT_FINDINGS = 3;

/** Folders the walk never enters: dependencies, version control and build output. */
const SKIPPED = new Set(['node_modules', '.git', 'dist', 'out', 'build', 'coverage', '.cache', '.next']);

/** Whether a path is a folder. One that is not there is not: reading it reports that in one sentence. */
export function isFolder(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The files to lint: files as given, folders walked for the kinds of file the finder reads. */
export function expandPaths(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (!isFolder(p)) {
      out.push(p);
      continue;
    }
    const found = (readdirSync(p, { recursive: true, encoding: 'utf8' }) as string[])
      .filter((rel) => !rel.split(/[\\/]/).some((part) => SKIPPED.has(part)))
      .filter((rel) => querySourceKind('', rel) !== 'other')
      .map((rel) => join(p, rel))
      .filter((f) => statSync(f).isFile());
    out.push(...found.sort());
  }
  return out;
}

/** The Prisma models that apply to each file, each schema read once (`qpi lint` and `qpi check`). */
export class PrismaSchemas {
  private readonly read = new Map<string, Promise<PrismaModels | undefined>>();
  private readonly nearest = new Map<string, string | undefined>();

  constructor(private readonly io: Io, private readonly given: string | undefined) {}

  /** The models of the schema for `file`; a schema that cannot be read is said once on stderr. */
  modelsFor(file: string): Promise<PrismaModels | undefined> {
    const path = this.given ?? this.schemaAbove(dirname(resolve(file)));
    if (path === undefined) return Promise.resolve(undefined);
    let models = this.read.get(path);
    if (!models) {
      models = this.load(path);
      this.read.set(path, models);
    }
    return models;
  }

  private async load(path: string): Promise<PrismaModels | undefined> {
    try {
      // Read as a Prisma schema whatever the file is called.
      const schema = readRepositorySchema([{ path: path.endsWith('.prisma') ? path : `${path}.prisma`, text: await this.io.readFile(path) }]);
      for (const w of schema.warnings) this.io.stderr(`${w}\n`);
      return schema.prismaModels;
    } catch (err) {
      this.io.stderr(`${readFailure(path, err)} Prisma calls are written with the models' own names.\n`);
      return undefined;
    }
  }

  /** The nearest `prisma/schema.prisma` or `schema.prisma` from a folder up to the file system's root. */
  private schemaAbove(dir: string): string | undefined {
    if (this.nearest.has(dir)) return this.nearest.get(dir);
    const here = [join(dir, 'prisma', 'schema.prisma'), join(dir, 'schema.prisma')].find((p) => existsSync(p));
    const parent = dirname(dir);
    const found = here ?? (parent === dir ? undefined : this.schemaAbove(parent));
    this.nearest.set(dir, found);
    return found;
  }
}

export async function runLint(paths: string[], json: boolean, failOnWarning: boolean, io: Io, schemaFile?: string): Promise<number> {
  await loadSqlParser();
  const prisma = new PrismaSchemas(io, schemaFile);
  const files = expandPaths(paths);
  // Imports are followed into the files under the current folder, as the language server follows them in its workspace.
  const modules = nodeWorkspaceModules(process.cwd());
  const results: (LintResult & { file: string })[] = [];
  let unreadable = 0;
  for (const file of files) {
    const text = await readOrSay(io, file);
    if (text === undefined) {
      unreadable++;
      continue;
    }
    const models = querySourceKind('', file) === 'script' ? await prisma.modelsFor(file) : undefined;
    const r = lintText(text, file, undefined, { prismaModels: models, file: resolve(file).split('\\').join('/'), modules });
    results.push({ file, ...r });
    if (json) continue;
    for (const w of r.warnings) io.stderr(`${file}: ${w}\n`);
    for (const f of r.findings) {
      io.stdout(`${file}:${f.line}:${f.column} ${f.severity} ${f.code} ${f.message}${f.suggestion ? ` Suggested: ${f.suggestion}` : ''}\n`);
    }
  }
  const findings = results.reduce((n, r) => n + r.findings.length, 0);
  const queries = results.reduce((n, r) => n + r.queries, 0);
  if (json) io.stdout(`${JSON.stringify({ files: results }, null, 2)}\n`);
  else io.stderr(`${plural(results.length, 'file')}, ${plural(queries, 'query', 'queries')}, ${plural(findings, 'finding')} (without a database: the rules that hold whatever the data).\n`);
  if (unreadable > 0) return EXIT_REFUSED;
  if (failOnWarning && results.some((r) => r.findings.some((f) => f.severity === 'warning'))) return EXIT_FINDINGS;
  return EXIT_OK;
}
