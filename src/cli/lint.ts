// `qpi lint FILE...`: the language server's inline advice from a terminal or a CI job. Each file is read
// with the same finder and rules the editor uses, without a database (findings that hold whatever the
// data: skip/OFFSET pagination, unanchored regexes, functions around columns, $match after a rename...).

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { lintText, loadSqlParser, querySourceKind, type LintResult } from '../core/index';
import { EXIT_OK, EXIT_REFUSED, readFailure, type Io } from './io';

/** Exit code when --fail-on-warning is given and a finding of warning severity was reported. */
export const EXIT_FINDINGS = 3;

/** Folders the walk never enters: dependencies, version control and build output. */
const SKIPPED = new Set(['node_modules', '.git', 'dist', 'out', 'build', 'coverage', '.cache', '.next']);

/** The files to lint: files as given, folders walked for the kinds of file the finder reads. */
export function expandPaths(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let dir = false;
    try {
      dir = statSync(p).isDirectory();
    } catch {
      // Not there: reading it reports that in one sentence.
    }
    if (!dir) {
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

export async function runLint(paths: string[], json: boolean, failOnWarning: boolean, io: Io): Promise<number> {
  await loadSqlParser();
  const files = expandPaths(paths);
  const results: (LintResult & { file: string })[] = [];
  let unreadable = 0;
  for (const file of files) {
    let text: string;
    try {
      text = await io.readFile(file);
    } catch (err) {
      io.stderr(`${readFailure(file, err)}\n`);
      unreadable++;
      continue;
    }
    const r = lintText(text, file);
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
  else io.stderr(`${results.length} file${results.length === 1 ? '' : 's'}, ${queries} quer${queries === 1 ? 'y' : 'ies'}, ${findings} finding${findings === 1 ? '' : 's'} (without a database: the rules that hold whatever the data).\n`);
  if (unreadable > 0) return EXIT_REFUSED;
  if (failOnWarning && results.some((r) => r.findings.some((f) => f.severity === 'warning'))) return EXIT_FINDINGS;
  return EXIT_OK;
}
