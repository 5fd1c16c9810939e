// Latency of the language server's diagnostics after an edit, measured against the real server process
// (dist/server.js, spoken to over node IPC with JSON-RPC, as VS Code does): a 5,000-line TypeScript file
// full of MongoDB and SQL queries is opened, then edited one keystroke-sized change at a time, and the
// time from sending didChange to receiving the publishDiagnostics of that version is recorded. Same for
// a 5,000-line .sql file. Prints p50/p95/max; asserts nothing (the target is 50 ms at p95).
//
// With `--repo <git dir>...` it measures real code instead: every JavaScript, TypeScript and SQL file of
// each repository at HEAD is opened (the open time of each is recorded), and in up to 40 files per
// repository with query calls a character is typed after a call and deleted again, six edits per file.
//
// With `--baseline <server.js>` (a copy of dist/server.js built before a change) each file is measured on
// that server too, right before this build's, and the ratios of this build's figures to it are printed.
//
// The open is timed from didOpen to the diagnostics of version 1, and to the answer to the lenses the
// editor asks for. The first file a server opens pays for its code not compiled yet; with `--fresh` every
// file is opened by a newly started server (and baseline), so each open is such a first one.
//
// `--opens N` measures only that: each file is opened by N newly started servers (with a baseline, N of
// each, started in pairs, the build that goes first alternating), and the medians are printed.
//
// With `--workspace` (and --repo) each repository's server is started with its folder as the workspace
// (the files the inventory bench writes to .cache/realcode/<owner+name>/), and its documents are opened
// at their paths there, so the server follows imports into the workspace's modules as in the editor.
//
// Run: node scripts/build.mjs && node --import tsx bench/lsp.ts [--edits N] [--fresh | --opens N] [--baseline <server.js>] [--workspace] [--repo <git dir>...]
// (QPI_BENCH_SLOW=1 with --repo prints each edit over 50 ms with its file, to find what is slow;
// QPI_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>" passes options to the server processes, to profile
// them; QPI_BENCH_NODE=<node binary> runs them on another Node, such as the one the editor runs them on.)

import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMessageConnection, IPCMessageReader, IPCMessageWriter } from 'vscode-jsonrpc/node';
import { LANGUAGE_SERVER_PROTOCOL_VERSION, SchemaNeeded } from '../src/protocol/languageServer';
import { gitFiles, repoLabel } from './git-files';
import { scriptFile, sqlFile } from './generate';

const ROOT = join(__dirname, '..');
const SERVER = join(ROOT, 'dist', 'server.js');
const editsArg = process.argv.indexOf('--edits');
const EDITS = editsArg > 0 ? Number(process.argv[editsArg + 1]) : 120;
const repoArg = process.argv.indexOf('--repo');
const baselineArg = process.argv.indexOf('--baseline');
/** Another build of the server (a copy of dist/server.js from before a change) to compare with. */
const BASELINE = baselineArg > 0 ? process.argv[baselineArg + 1] : undefined;
/** Every file opened by a newly started server: each open is the server's first. */
const FRESH = process.argv.includes('--fresh');
const opensArg = process.argv.indexOf('--opens');
/** How many newly started servers open each file, when only the first open is measured. */
const OPENS = opensArg > 0 ? Number(process.argv[opensArg + 1]) : 0;
const REPOS = repoArg > 0 ? process.argv.slice(repoArg + 1).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--baseline' && all[i - 1] !== '--edits' && all[i - 1] !== '--opens') : [];
/** The server's debounce window; edits are spaced past it so each one is the first after a pause. */
const DEBOUNCE_MS = 150;
/** Open each repository's files in its folder of .cache/realcode, with that folder as the server's workspace. */
const WORKSPACE = process.argv.includes('--workspace');

const ms = (x: number) => `${x.toFixed(1)} ms`;

/**
 * The CPU time a process has used so far, all its threads, in ms (Linux's /proc; undefined elsewhere): on a
 * machine other work loads, the wall time of an open moves with that work, its CPU time much less.
 */
function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return undefined;
  // Fields 14 and 15, after the command name in parentheses: user and system time in clock ticks (100 a second).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

interface Published {
  uri: string;
  version?: number;
  diagnostics: unknown[];
}

interface Server {
  conn: ReturnType<typeof createMessageConnection>;
  child: ReturnType<typeof fork>;
  published(uri: string, version: number): Promise<Published>;
}

/** Starts a server bundle and initializes it as the editor would. */
async function startServer(path: string, rootUri: string | null = null): Promise<Server> {
  const execArgv = process.env.QPI_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const execPath = process.env.QPI_BENCH_NODE;
  const child = fork(path, ['--node-ipc'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], execArgv, ...(execPath ? { execPath } : {}) });
  const conn = createMessageConnection(new IPCMessageReader(child), new IPCMessageWriter(child));
  const waiting = new Map<string, { version: number; resolve: (p: Published) => void }>();
  conn.onNotification('textDocument/publishDiagnostics', (p: Published) => {
    const w = waiting.get(p.uri);
    if (w && p.version === w.version) {
      waiting.delete(p.uri);
      w.resolve(p);
    }
  });
  conn.onNotification(SchemaNeeded.method, () => undefined);
  conn.onNotification('window/logMessage', () => undefined);
  conn.listen();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri, capabilities: {}, initializationOptions: { protocolVersion: LANGUAGE_SERVER_PROTOCOL_VERSION, debounceMs: DEBOUNCE_MS, repositorySchema: false } });
  await conn.sendNotification('initialized', {});
  return { conn, child, published: (uri, version) => new Promise<Published>((resolve) => waiting.set(uri, { version, resolve })) };
}

async function stopServer(s: Server): Promise<void> {
  await s.conn.sendRequest('shutdown');
  const exited = new Promise((resolve) => s.child.once('exit', resolve));
  await s.conn.sendNotification('exit');
  // The server leaves by itself on `exit` (a profile asked for with QPI_BENCH_NODE_ARGS is written then).
  const stop = setTimeout(() => s.child.kill(), 5_000);
  await exited;
  clearTimeout(stop);
  s.conn.dispose();
}

async function main(): Promise<void> {
  if (!existsSync(SERVER)) throw new Error('dist/server.js is missing: run node scripts/build.mjs first.');
  if (BASELINE && !existsSync(BASELINE)) throw new Error(`The baseline server ${BASELINE} is missing.`);
  let server = await startServer(SERVER);
  let baseline = BASELINE ? await startServer(BASELINE) : undefined;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  type Edit = (i: number, text: string) => { offset: number; length: number; insert: string };
  async function run(name: string, languageId: string, text: string, editAt: Edit, edits = EDITS, quiet = false, on: Server = server, lenses = !quiet, at?: string) {
    const { conn, published } = on;
    const uri = at ?? `file:///bench/${name}`;
    const cpu0 = cpuMs(on.child.pid);
    let t0 = performance.now();
    let wait = published(uri, 1);
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
    const first = await wait;
    const openMs = performance.now() - t0;
    const openCpuMs = cpu0 === undefined ? undefined : cpuMs(on.child.pid)! - cpu0;
    // The editor asks for the lenses of a document it shows: asked when the diagnostics came, timed from the open.
    const lensCount = !lenses ? 0 : ((await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as unknown[] | null)?.length ?? 0;
    const lensMs = performance.now() - t0;
    const latencies: number[] = [];
    let current = text;
    let diagnostics = first.diagnostics.length;
    for (let i = 0; i < edits; i++) {
      await sleep(DEBOUNCE_MS + 20);
      const e = editAt(i, current);
      const before = current.slice(0, e.offset);
      const line = before.split('\n').length - 1;
      const character = e.offset - (before.lastIndexOf('\n') + 1);
      const endText = current.slice(0, e.offset + e.length);
      const endLine = endText.split('\n').length - 1;
      const endChar = e.offset + e.length - (endText.lastIndexOf('\n') + 1);
      current = before + e.insert + current.slice(e.offset + e.length);
      const version = i + 2;
      wait = published(uri, version);
      t0 = performance.now();
      await conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ range: { start: { line, character }, end: { line: endLine, character: endChar } }, text: e.insert }],
      });
      const p = await wait;
      latencies.push(performance.now() - t0);
      diagnostics = p.diagnostics.length;
    }
    await conn.sendNotification('textDocument/didClose', { textDocument: { uri } });
    if (!quiet) console.log(`${on === baseline ? 'baseline ' : ''}${name}: ${current.split('\n').length} lines, ${diagnostics} diagnostics; open ${ms(openMs)} (${lensCount} lenses at ${ms(lensMs)}); after an edit (${latencies.length} edits): p50 ${ms(percentile(latencies, 50))}, p95 ${ms(percentile(latencies, 95))}, max ${ms(Math.max(...latencies))}`);
    return { openMs, openCpuMs, lensMs, latencies, diagnostics };
  }

  if (REPOS.length > 0) {
    // A call a query library makes, or a SQL statement's first word: where a user would be typing.
    const CALL = /\.(find\w*|aggregate|count\w*|update\w*|delete\w*|insert\w*|query|raw|where|select|orderBy|\$queryRaw)\(|\b(SELECT|select|UPDATE|DELETE)\s/g;
    const atCalls = (text: string): Edit => {
      const spots = [...text.matchAll(CALL)].map((m) => m.index! + m[0].length);
      let last = -1;
      return (i) => {
        if (i % 2 === 1) return { offset: last, length: 1, insert: '' };
        last = spots[(i * 7919) % spots.length]!;
        return { offset: last, length: 0, insert: ' ' };
      };
    };
    const languageOf = (path: string) => (path.endsWith('.sql') ? 'sql' : /\.(c|m)?tsx?$/.test(path) ? (path.endsWith('x') ? 'typescriptreact' : 'typescript') : 'javascript');
    const allEdits: number[] = [];
    let slowestOpen = { ms: 0, file: '' };
    for (const dir of REPOS) {
      const files = gitFiles(dir, { sql: true });
      const folder = join(ROOT, '.cache', 'realcode', dir.replace(/\/+$/, '').replace(/.*\/([^/]+)\/repo$/, '$1'));
      if (WORKSPACE) {
        if (!existsSync(folder)) throw new Error(`${folder} is missing: run npm run bench:inventory on ${dir} first.`);
        await stopServer(server);
        server = await startServer(SERVER, `file://${folder}`);
      }
      const opens: number[] = [];
      const edited = files.filter((f) => f.text.match(CALL));
      const step = Math.max(1, Math.ceil(edited.length / 40));
      const chosen = new Set(edited.filter((_, i) => i % step === 0).map((f) => f.path));
      const latencies: number[] = [];
      let diagnostics = 0;
      for (const f of files) {
        const r = await run(f.path.replace(/[^\w.]/g, '_'), languageOf(f.path), f.text, atCalls(f.text), chosen.has(f.path) ? 6 : 0, true, server, false, WORKSPACE ? `file://${folder}/${f.path}` : undefined);
        opens.push(r.openMs);
        latencies.push(...r.latencies);
        if (process.env.QPI_BENCH_SLOW) for (const [i, l] of r.latencies.entries()) if (l > 50) console.log(`  slow edit ${i} of ${f.path}: ${ms(l)}`);
        diagnostics += r.diagnostics;
        if (r.openMs > slowestOpen.ms) slowestOpen = { ms: r.openMs, file: `${dir.replace(/.*\/([^/]+)\+([^/]+)\/repo$/, '$1/$2')}:${f.path}` };
      }
      allEdits.push(...latencies);
      console.log(`${repoLabel(dir)}: ${files.length} files, ${diagnostics} diagnostics; open p50 ${ms(percentile(opens, 50))}, max ${ms(Math.max(...opens))}; after an edit (${latencies.length} edits in ${chosen.size} files): p50 ${ms(percentile(latencies, 50))}, p95 ${ms(percentile(latencies, 95))}, max ${ms(Math.max(...latencies))}`);
    }
    console.log(`all repositories: after an edit (${allEdits.length} edits) p50 ${ms(percentile(allEdits, 50))}, p95 ${ms(percentile(allEdits, 95))}; slowest open ${ms(slowestOpen.ms)} (${slowestOpen.file})`);
  } else {

  // Edits as typing makes them: a digit typed into a value somewhere in the file (a different function
  // each time), then deleted again by the next edit, so the text after the edit moves both ways.
  const typing = (marker: string) => {
    let last = -1;
    return Object.assign((i: number, text: string) => {
      if (i % 2 === 1) return { offset: last, length: 1, insert: '' };
      const anchor = text.indexOf(marker, Math.floor((((i * 7919) % 1000) / 1000) * text.length));
      last = (anchor < 0 ? text.indexOf(marker) : anchor) + marker.length;
      return { offset: last, length: 0, insert: String((i % 9) + 1) };
    }, { marker });
  };
  // A realistic file (problems in one handler of ten) and a stress case (problems in every handler).
  const cases: [string, string, string, ReturnType<typeof typing>][] = [
    ['service.ts', 'typescript', scriptFile(5000, 10), typing('tenant: ')],
    ['service-dense.ts', 'typescript', scriptFile(5000, 1), typing('tenant: ')],
    ['reports.sql', 'sql', sqlFile(5000, 10), typing("status = 's")],
    ['reports-dense.sql', 'sql', sqlFile(5000, 1), typing("status = 's")],
  ];
  if (OPENS > 0) {
    await stopServer(server);
    if (baseline) await stopServer(baseline);
    const median = (xs: number[]) => percentile(xs, 50);
    for (const [name, languageId, text, edit] of cases) {
      const mine = { open: [] as number[], cpu: [] as number[], lenses: [] as number[] };
      const theirs = { open: [] as number[], cpu: [] as number[], lenses: [] as number[] };
      for (let r = 0; r < OPENS; r++) {
        server = await startServer(SERVER);
        baseline = BASELINE ? await startServer(BASELINE) : undefined;
        const order: [Server, typeof mine][] = [[server, mine]];
        if (baseline) order.splice(r % 2, 0, [baseline, theirs]);
        for (const [on, into] of order) {
          const x = await run(name, languageId, text, edit, 0, true, on, true);
          into.open.push(x.openMs);
          if (x.openCpuMs !== undefined) into.cpu.push(x.openCpuMs);
          into.lenses.push(x.lensMs);
        }
        await stopServer(server);
        if (baseline) await stopServer(baseline);
      }
      const cpu = (who: typeof mine) => (who.cpu.length > 0 ? ` (the server's CPU ${ms(median(who.cpu))})` : '');
      const line = (who: typeof mine) => `open median ${ms(median(who.open))}${cpu(who)} (${ms(Math.min(...who.open))} to ${ms(Math.max(...who.open))}), lenses median ${ms(median(who.lenses))}`;
      if (baseline) console.log(`baseline ${name}: first open of ${OPENS} servers: ${line(theirs)}`);
      console.log(`${name}: first open of ${OPENS} servers: ${line(mine)}${baseline ? `; this build / baseline: open x${(median(mine.open) / median(theirs.open)).toFixed(2)}${mine.cpu.length > 0 ? ` (CPU x${(median(mine.cpu) / median(theirs.cpu)).toFixed(2)})` : ''}, lenses x${(median(mine.lenses) / median(theirs.lenses)).toFixed(2)}` : ''}`);
    }
    return;
  }
  for (const [i, [name, languageId, text, edit]] of cases.entries()) {
    if (FRESH && i > 0) {
      await stopServer(server);
      if (baseline) await stopServer(baseline);
      server = await startServer(SERVER);
      baseline = BASELINE ? await startServer(BASELINE) : undefined;
    }
    // With a baseline both servers measure the same file one right after the other, on the same machine.
    if (!baseline) {
      await run(name, languageId, text, edit);
      continue;
    }
    const a = await run(name, languageId, text, typing(edit.marker), EDITS, false, baseline);
    const b = await run(name, languageId, text, typing(edit.marker));
    const ratio = (p: number) => (percentile(b.latencies, p) / percentile(a.latencies, p)).toFixed(2);
    console.log(`${name}: this build / baseline: p50 x${ratio(50)}, p95 x${ratio(95)}, open x${(b.openMs / a.openMs).toFixed(2)}, lenses x${(b.lensMs / a.lensMs).toFixed(2)}`);
  }
  }

  await stopServer(server);
  if (baseline) await stopServer(baseline);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
