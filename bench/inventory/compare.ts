// The finder against the checker inventory (checker.ts), on the same files of each repository: per
// library, the inventory's sites in application code and in tests, how many the finder found (a found
// query whose range overlaps the site's call), and the finder's detections that overlap no site of the
// inventory (possible spurious detections, or queries of what the inventory does not type). A site is
// analysable when a query found on it is one the advisor reads and advises on (one it reads and finds
// nothing an index could serve in, an INSERT of values or a SELECT of no table, is counted apart as "read,
// nothing to index"), and the indexes suggested for every query found that cannot exist are counted, both as bench/realcode.ts counts them (readable.ts). The sites
// missed, the extra detections and those suggestions are written to .cache/inventory/<owner+name>.txt.
//
// Each argument is a fetched git directory (.../owner+name/repo); its files at HEAD are written once to
// .cache/realcode/<owner+name>/ and read from there. Nothing of them is kept in the project.
//
// The finder is given the workspace's modules (src/node/workspaceModules.ts), as the language server and
// the CLI give them, so imports are followed; `--single-file` reads each file alone, as before that.
// The inventory of a commit is kept in .cache/inventory/<owner+name>.sites.json and read again on the next
// run (`--fresh` takes it again).
//
// `--inventory-only` takes and prints the inventory's sites per library and runs no finder: how a repository
// is counted before it is named for a checking set, with nothing of the finder seen.
//
// Run: npm run bench:inventory -- <git dir>... [--single-file] [--fresh] [--inventory-only]

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { findQueries, querySourceKind, scriptDialect, type FoundQuery } from '../../src/core/query/find/index';
import { LIBRARIES, inventory, type InventoryResult, type Library, type Site } from './checker';
import { nodeWorkspaceModules } from '../../src/node/workspaceModules';
import { fromMongoCommand, loadSqlParser } from '../../src/core/index';
import { analysable, impossibleCount } from './readable';

/** The inventory of a commit, taken once and kept (the checker takes seconds to minutes per repository). */
function cachedInventory(name: string, commit: string, folder: string, fresh: boolean): InventoryResult {
  const file = join('.cache/inventory', `${name.replace('/', '+')}.sites.json`);
  if (!fresh && existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { commit: string; inventory: InventoryResult };
    if (kept.commit === commit) return kept.inventory;
  }
  const inv = inventory(folder);
  writeFileSync(file, JSON.stringify({ commit, inventory: inv }));
  return inv;
}

/** Per library: sites, those found, and those found whose query the advisor reads (readable.ts analysable). */
interface Row { app: number; test: number; appFound: number; testFound: number; appAnalysable: number; testAnalysable: number; appNothing: number }

/** The repository's files at HEAD in a folder of the cache, written once per commit. */
function checkout(gitDir: string): { name: string; commit: string; folder: string } {
  const name = gitDir.replace(/\/+$/, '').replace(/.*\/([^/]+)\/repo$/, '$1');
  const commit = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', 'HEAD']).toString().trim();
  const folder = resolve('.cache/realcode', name);
  // Only the source files and the package and tsconfig files beside them; then, kept apart so a folder
  // taken before gains them, the .sql files the finder reads where a script loads one by a path it shows
  // (find/loadedSql.ts), as an editor's workspace holds them.
  writeBlobs(gitDir, commit, folder, '.inventory-commit', /\.(c|m)?(j|t)sx?$|(^|\/)(package\.json|[tj]sconfig[\w.-]*\.json)$/);
  writeBlobs(gitDir, commit, folder, '.sql-commit', /\.sql$/i);
  return { name: name.replace('+', '/'), commit: commit.slice(0, 12), folder };
}

/**
 * The files of a commit whose paths `wanted` matches, written under `folder` once per commit (its stamp
 * file says which), read blob by blob: a snapshot lacks its largest files, which `git archive` would stop at.
 */
function writeBlobs(gitDir: string, commit: string, folder: string, stampName: string, wanted: RegExp): void {
  const stamp = join(folder, stampName);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === commit) return;
  const entries = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-l', 'HEAD'], { maxBuffer: 1 << 28 }).toString().split('\n')
    .map((l) => /^\d+ blob ([0-9a-f]+)\s+(\d+)\t(.*)$/.exec(l)).filter((m): m is RegExpExecArray => m !== null)
    .filter((m) => wanted.test(m[3]!) && Number(m[2]) <= 400_000 && !/(^|\/)node_modules\//.test(m[3]!));
  if (entries.length > 0) {
    const batch = execFileSync('git', ['--git-dir', gitDir, 'cat-file', '--batch'], { input: entries.map((m) => m[1]).join('\n') + '\n', maxBuffer: 1 << 30 });
    let at = 0;
    for (const m of entries) {
      const eol = batch.indexOf(10, at);
      const header = batch.subarray(at, eol).toString().split(' ');
      at = eol + 1;
      if (header[1] !== 'blob') continue;
      const size = Number(header[2]);
      const path = join(folder, m[3]!);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, batch.subarray(at, at + size));
      at += size + 1;
    }
  }
  mkdirSync(folder, { recursive: true });
  writeFileSync(stamp, commit);
}

const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end;
const pct = (n: number, of: number) => (of === 0 ? '-' : `${Math.round((100 * n) / of)}%`);

function describe(q: FoundQuery): string {
  return q.engine === 'mongodb' ? `mongodb ${q.command.collection || '?'}` : `postgres ${q.origin}`;
}

// An extra detection's own verdict, so that one the finder found and could not read stands out.
function extraVerdict(q: FoundQuery): string {
  if (q.engine === 'mongodb') return '';
  const v = analysable(q);
  return v === true ? '' : ` -- ${String(v).slice(0, 80)}`;
}

async function main(): Promise<void> {
  const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (dirs.length === 0) {
    console.error('Give one or more fetched git directories.');
    process.exitCode = 2;
    return;
  }
  mkdirSync('.cache/inventory', { recursive: true });
  await loadSqlParser();
  for (const dir of dirs) {
    const repo = checkout(dir);
    const inv = cachedInventory(repo.name, repo.commit, repo.folder, process.argv.includes('--fresh'));
    if (process.argv.includes('--inventory-only')) {
      const counts = new Map<Library, { app: number; test: number }>();
      for (const s of inv.sites) {
        const c = counts.get(s.library) ?? { app: 0, test: 0 };
        c[s.test ? 'test' : 'app']++;
        counts.set(s.library, c);
      }
      console.log(`${repo.name} @ ${repo.commit}: ${inv.files.length} files, inventory ${(inv.ms / 1000).toFixed(1)} s`);
      for (const [lib, c] of counts) console.log(`  ${lib.padEnd(15)} sites app ${String(c.app).padStart(4)} test ${String(c.test).padStart(4)}`);
      continue;
    }
    const modules = process.argv.includes('--single-file') ? undefined : nodeWorkspaceModules(repo.folder);
    const began = Date.now();
    const rows = new Map<Library, Row>(LIBRARIES.map((l) => [l, { app: 0, test: 0, appFound: 0, testFound: 0, appAnalysable: 0, testAnalysable: 0, appNothing: 0 }]));
    let impossible = 0;
    const missed: Site[] = [];
    const unread: string[] = [];
    const extras: string[] = [];
    const extraCount = { app: 0, test: 0 };
    const byFile = new Map<string, Site[]>();
    for (const s of inv.sites) byFile.set(s.file, [...(byFile.get(s.file) ?? []), s]);
    for (const file of inv.files) {
      const text = readFileSync(join(repo.folder, file), 'utf8');
      let found: FoundQuery[] = [];
      try {
        found = findQueries(text, querySourceKind('', file), scriptDialect('', file), modules ? { file: join(repo.folder, file), modules } : {}).queries;
      } catch (e) {
        extras.push(`finder threw on ${file}: ${String(e).slice(0, 200)}`);
      }
      const sites = byFile.get(file) ?? [];
      for (const s of sites) {
        const row = rows.get(s.library)!;
        // A bulkWrite of operations pushed elsewhere is found when one of them names this call as one that runs it.
        const hits = found.filter((q) => overlaps(q.range, s) || (q.engine === 'mongodb' && (q.calledFrom ?? []).some((r) => overlaps(r, s))));
        const read = hits.some((q) => analysable(q) === true);
        if (s.test) {
          row.test++;
          if (hits.length > 0) row.testFound++;
          if (read) row.testAnalysable++;
        } else {
          row.app++;
          if (hits.length > 0) row.appFound++;
          if (read) row.appAnalysable++;
          // Read, with nothing an index could serve (an INSERT of values, a SELECT of no table): apart.
          else if (hits.some((q) => analysable(q) === 'nothing to index')) row.appNothing++;
        }
        if (hits.length === 0) missed.push(s);
        else if (!read && !s.test) {
          const q = hits[0]!;
          const why = q.engine === 'mongodb' ? (fromMongoCommand(q.command) as { refusal?: string }).refusal ?? '' : String(analysable(q));
          unread.push(`  unread ${s.library.padEnd(15)} ${describe(q).padEnd(24)} ${s.file}:${s.line} [${s.api}] ${s.text} -- ${why.slice(0, 80)}`);
        }
      }
      for (const q of found) impossible += impossibleCount(q, (l) => extras.push(`${l} (${file})`));
      for (const q of found) {
        if (sites.some((s) => overlaps(q.range, s) || (q.engine === 'mongodb' && (q.calledFrom ?? []).some((r) => overlaps(r, s))))) continue;
        const test = sites[0]?.test ?? /(^|\/)(test|tests|__tests__|spec|specs)\/|\.(test|spec)\.[cm]?[jt]sx?$/.test(file);
        extraCount[test ? 'test' : 'app']++;
        const line = text.slice(0, q.range.start).split('\n').length;
        extras.push(`  extra  ${describe(q).padEnd(24)} ${test ? 'test' : 'app '} ${file}:${line} ${text.slice(q.range.start, Math.min(q.range.end, q.range.start + 100)).replace(/\s+/g, ' ')}${extraVerdict(q)}`);
      }
    }
    const finderMs = Date.now() - began;
    const out: string[] = [`${repo.name} @ ${repo.commit}: ${inv.files.length} files (${inv.skipped} over 400 KB skipped), inventory ${(inv.ms / 1000).toFixed(1)} s, finder ${(finderMs / 1000).toFixed(1)} s`];
    for (const [lib, r] of rows) {
      if (r.app + r.test === 0) continue;
      out.push(`  ${lib.padEnd(15)} sites app ${String(r.app).padStart(4)} test ${String(r.test).padStart(4)}   found app ${String(r.appFound).padStart(4)} (${pct(r.appFound, r.app).padStart(4)}) test ${String(r.testFound).padStart(4)} (${pct(r.testFound, r.test).padStart(4)})` +
        `   analysable app ${String(r.appAnalysable).padStart(4)} (${pct(r.appAnalysable, r.app).padStart(4)}) test ${String(r.testAnalysable).padStart(4)} (${pct(r.testAnalysable, r.test).padStart(4)})` +
        (r.appNothing > 0 ? `   read, nothing to index: app ${r.appNothing}` : ''));
    }
    out.push(`  suggested indexes that cannot exist (readable.ts impossibleCount, every query found): ${impossible}`);
    out.push(`  finder detections on no inventory site: app ${extraCount.app}, test ${extraCount.test}`);
    out.push(`  left out of the inventory: ${inv.leftOut.inserts} Knex inserts, ${inv.leftOut.otherStatements} SQL texts that start no query (DDL, SET, ...)`);
    out.push(`  calls with a query method's name on a receiver typed any (not in the inventory): app ${inv.untyped.app}, test ${inv.untyped.test}`);
    console.log(out.join('\n'));
    const listing = [...out, '', 'Inventory sites the finder did not find:',
      ...missed.map((s) => `  missed ${s.library.padEnd(15)} ${s.test ? 'test' : 'app '} ${s.file}:${s.line} [${s.api}] ${s.text}`), '',
      'Application sites found and not analysable (the first query found on each):', ...unread, '', 'Finder detections on no inventory site:', ...extras];
    const path = join('.cache/inventory', `${repo.name.replace('/', '+')}.txt`);
    writeFileSync(path, `${listing.join('\n')}\n`);
    writeFileSync(path.replace(/\.txt$/, '.json'), JSON.stringify({ repo, rows: Object.fromEntries(rows), impossible, extras: extraCount, untyped: inv.untyped, leftOut: inv.leftOut, inventoryMs: inv.ms, finderMs, files: inv.files.length }, null, 1));
    console.log(`  listed in ${path}`);
  }
}

void main();
