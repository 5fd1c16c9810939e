// Whether the language server's incremental reading of a script gives what reading it whole gives, on
// real code: in the JavaScript and TypeScript files of each repository (a git directory, read at HEAD;
// the first 60 files over 3,000 characters), a character is typed at a random place, twelve times per
// file, and after each edit the incremental index's queries are compared with a whole read of the same
// text. An edit that leaves the file unreadable is undone, as the next keystrokes would. Prints the
// edits compared, how many were read by a statement inside a top-level statement and how many of those
// alone, and every mismatch (the figure that must be 0).
//
// Run: node --import tsx bench/incremental.ts <git dir>...

import { gitFiles, repoLabel } from './git-files';
import { findQueries, loadSqlParser, ScriptQueryIndex, scriptDialect } from '../src/core/query/find';
import { fuzzRandom } from '../test/fuzz-seed';

const INSERTS = ['x', ' ', '1', "'", '(', ';', '\n'];

async function main(): Promise<void> {
  await loadSqlParser();
  const rnd = fuzzRandom(5);
  const total = { files: 0, compared: 0, inner: 0, alone: 0, mismatches: 0 };
  for (const repo of process.argv.slice(2)) {
    const counts = { files: 0, compared: 0, inner: 0, alone: 0, mismatches: 0 };
    const files = gitFiles(repo).filter((f) => f.text.length > 3000).slice(0, 60);
    for (const f of files) {
      const language = /\.(c|m)?tsx$/.test(f.path) ? 'typescriptreact' : /\.(c|m)?ts$/.test(f.path) ? 'typescript' : 'javascript';
      const dialect = scriptDialect(language, f.path);
      let index = new ScriptQueryIndex('script', dialect);
      let text = f.text;
      index.update(text);
      if (index.result().warnings.length > 0) continue;
      counts.files++;
      for (let k = 0; k < 12; k++) {
        const at = Math.floor(rnd() * text.length);
        const next = text.slice(0, at) + INSERTS[Math.floor(rnd() * INSERTS.length)]! + text.slice(at);
        index.update(next);
        const whole = findQueries(next, 'script', dialect);
        if (whole.warnings.length > 0) {
          index.update(text);
          continue;
        }
        counts.compared++;
        if (index.lastUpdate.inner) counts.inner++;
        if (index.lastUpdate.alone) counts.alone++;
        if (JSON.stringify(index.result()) !== JSON.stringify(whole)) {
          counts.mismatches++;
          console.log(`  mismatch: ${f.path} after typing at offset ${at}`);
          // Go on from a fresh reading, so one mismatch is not counted again at every later edit.
          index = new ScriptQueryIndex('script', dialect);
          index.update(next);
        }
        text = next;
      }
    }
    console.log(`${repoLabel(repo)}: ${counts.files} files, ${counts.compared} edits compared, ${counts.inner} read inside a top-level statement (${counts.alone} of them alone), ${counts.mismatches} mismatches`);
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += counts[k];
  }
  console.log(`all: ${total.files} files, ${total.compared} edits compared, ${total.inner} read inside a top-level statement (${total.alone} alone), ${total.mismatches} mismatches`);
}

void main();
