// The source files of a public repository's git directory at HEAD, read without a work tree: what the
// real-code benchmarks measure. Nothing read here is kept.

import { execFileSync } from 'node:child_process';
import { posix } from 'node:path';

export interface RepoFile {
  path: string;
  text: string;
}

/**
 * JavaScript/TypeScript (and, with `sql`, .sql) files under 400 KB, without vendored or built folders. The
 * size comes from the tree, so a large file a fetched snapshot lists but does not hold is never read.
 */
export function gitFiles(dir: string, options: { sql?: boolean } = {}): RepoFile[] {
  const wanted = options.sql ? /\.((c|m)?(j|t)sx?|sql)$/ : /\.(c|m)?(j|t)sx?$/;
  const entries = execFileSync('git', ['--git-dir', dir, 'ls-tree', '-r', '-l', 'HEAD'], { maxBuffer: 1 << 28 }).toString().split('\n')
    .map((line) => /^\d+ blob \w+\s+(\d+)\t(.+)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && Number(m[1]) < 400_000)
    .map((m) => m[2]!)
    .filter((p) => wanted.test(p) && !/(^|\/)(node_modules|dist|build|vendor|coverage)\//.test(p) && !/\.d\.ts$|\.min\.js$/.test(p));
  const out: RepoFile[] = [];
  for (const path of entries) {
    const text = execFileSync('git', ['--git-dir', dir, 'show', `HEAD:${path}`], { maxBuffer: 1 << 26 }).toString();
    if (text.length < 400_000) out.push({ path, text });
  }
  return out;
}

/** The repository's name as owner/name from a fetched git directory's path, and its HEAD commit. */
export function repoLabel(dir: string): string {
  const commit = execFileSync('git', ['--git-dir', dir, 'rev-parse', 'HEAD']).toString().trim();
  return `${dir.replace(/.*\/([^/]+)\+([^/]+)\/repo$/, '$1/$2')} @ ${commit.slice(0, 12)}`;
}

/**
 * The dependencies (of all kinds) each package.json of the repository names, by its folder ('' for the
 * root), or undefined when the repository has none.
 */
export function repoDependencies(dir: string): Map<string, Set<string>> | undefined {
  const names = execFileSync('git', ['--git-dir', dir, 'ls-tree', '-r', '--name-only', 'HEAD'], { maxBuffer: 1 << 28 }).toString().split('\n')
    .filter((p) => /(^|\/)package\.json$/.test(p) && !/(^|\/)node_modules\//.test(p));
  if (names.length === 0) return undefined;
  const out = new Map<string, Set<string>>();
  for (const path of names) {
    const deps = new Set<string>();
    try {
      const pkg = JSON.parse(execFileSync('git', ['--git-dir', dir, 'show', `HEAD:${path}`], { maxBuffer: 1 << 26 }).toString()) as Record<string, unknown>;
      for (const k of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
        for (const d of Object.keys((pkg[k] as Record<string, string> | undefined) ?? {})) deps.add(d);
      }
    } catch {
      // A package.json that is a template or not JSON names nothing.
    }
    out.set(path.replace(/\/?package\.json$/, ''), deps);
  }
  return out;
}

/** The dependencies of the package a file belongs to: its nearest package.json's with the root's. */
export function dependenciesOf(all: Map<string, Set<string>>, file: string): Set<string> {
  const out = new Set(all.get('') ?? []);
  for (let d = posix.dirname(file); d !== '.' && d !== '/'; d = posix.dirname(d)) {
    const deps = all.get(d);
    if (deps) {
      for (const x of deps) out.add(x);
      break;
    }
  }
  return out;
}
