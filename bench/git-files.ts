// The source files of a public repository's git directory at HEAD, read without a work tree: what the
// real-code benchmarks measure. Nothing read here is kept.

import { execFileSync } from 'node:child_process';

export interface RepoFile {
  path: string;
  text: string;
}

/** JavaScript/TypeScript (and, with `sql`, .sql) files under 400 KB, without vendored or built folders. */
export function gitFiles(dir: string, options: { sql?: boolean } = {}): RepoFile[] {
  const wanted = options.sql ? /\.((c|m)?(j|t)sx?|sql)$/ : /\.(c|m)?(j|t)sx?$/;
  const names = execFileSync('git', ['--git-dir', dir, 'ls-tree', '-r', '--name-only', 'HEAD'], { maxBuffer: 1 << 28 }).toString().split('\n')
    .filter((p) => wanted.test(p) && !/(^|\/)(node_modules|dist|build|vendor|coverage)\//.test(p) && !/\.d\.ts$|\.min\.js$/.test(p));
  const out: RepoFile[] = [];
  for (const path of names) {
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
