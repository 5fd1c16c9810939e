// `--changed-since REF`: the files a branch changed, from git through child_process (the CLI's only use
// of git). Changed means: different in the working tree from the commit where HEAD left REF (the merge
// base, as a pull request's diff is), plus files git does not track yet; a file's text at that commit is
// read for schema files, so a migration edited or deleted still says what it touched.

import { execFileSync } from 'node:child_process';
import { relative, resolve, sep } from 'node:path';

export class GitProblem extends Error {}

function git(cwd: string, args: string[]): string {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; code?: string; message?: string };
    if (e.code === 'ENOENT') throw new GitProblem('--changed-since needs git, and git is not on the PATH.');
    const why = (e.stderr ?? e.message ?? '').trim().split('\n')[0] ?? '';
    throw new GitProblem(`git ${args[0]} failed: ${why}`);
  }
}

export interface ChangedFiles {
  /** The merge base of REF and HEAD. */
  base: string;
  /** Changed files, relative to `root`, '/' separated (files outside it are left out). */
  files: Set<string>;
  /** A changed file's text at the merge base, or undefined when it did not exist there. */
  textAtBase(file: string): string | undefined;
}

/** The files changed since REF, relative to `root` (the lock's folder). */
export function changedSince(ref: string, root: string): ChangedFiles {
  const top = git(root, ['rev-parse', '--show-toplevel']).trim();
  let base: string;
  try {
    base = git(root, ['merge-base', ref, 'HEAD']).trim();
  } catch (err) {
    throw new GitProblem(`--changed-since ${ref}: git knows no commit shared by ${ref} and HEAD (${err instanceof Error ? err.message : String(err)}). Fetch the branch first (actions/checkout with fetch-depth: 0).`);
  }
  const names = [
    ...git(top, ['diff', '--name-only', '--no-renames', '-z', base, '--']).split('\0'),
    ...git(top, ['ls-files', '--others', '--exclude-standard', '-z']).split('\0'),
  ].filter((n) => n !== '');
  const files = new Set<string>();
  const fromTop = new Map<string, string>();
  for (const n of names) {
    const r = relative(root, resolve(top, n)).split(sep).join('/');
    if (r.startsWith('../')) continue;
    files.add(r);
    fromTop.set(r, n);
  }
  return {
    base,
    files,
    textAtBase(file: string): string | undefined {
      const n = fromTop.get(file);
      if (n === undefined) return undefined;
      try {
        return git(top, ['show', `${base}:${n}`]);
      } catch {
        return undefined;
      }
    },
  };
}
