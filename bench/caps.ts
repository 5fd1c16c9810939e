// What the language server does with files past its caps, against the real server process (dist/server.js,
// node IPC, as VS Code starts it): generated files of 20 MB, of 100,000 queries and of 53,000 queries are
// each opened by a newly started server, which is asked for the file's lenses as soon as its diagnostics
// come. Printed per file, the median of the runs: the time from didOpen to the diagnostics and to the
// lenses, the server's peak memory (VmHWM, Linux), and the cap the server said it hit. The same server
// opening a 5,000-line file (bench/generate.ts) is the baseline each figure is printed beside. The target
// is 2 s and 300 MB for a file of any size; this prints, it asserts nothing.
//
// Run: node scripts/build.mjs && node --import tsx bench/caps.ts [--runs N]

import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMessageConnection, IPCMessageReader, IPCMessageWriter } from 'vscode-jsonrpc/node';
import { CapReached, type CapReachedParams, LANGUAGE_SERVER_PROTOCOL_VERSION, SchemaNeeded } from '../src/protocol/languageServer';
import { scriptFile } from './generate';

const SERVER = join(__dirname, '..', 'dist', 'server.js');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3;

interface Case {
  name: string;
  languageId: string;
  text: string;
}

/** A TypeScript file of handlers (bench/generate.ts) grown to `bytes`, or cut before a handler to stay under `under`. */
function bigScript(bytes: number, under = Infinity): string {
  const unit = scriptFile(5_000, 7);
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    // Each copy's functions renamed, so the file declares each name once.
    const copy = unit.replace(/handler(\d+)/g, `handler${i}_$1`);
    parts.push(i === 0 ? copy : copy.split('\n').slice(6).join('\n'));
    size += copy.length;
  }
  const text = parts.join('\n');
  return text.length < under ? text : text.slice(0, text.lastIndexOf('\nexport async function', under));
}

/** A playground file of `count` short MongoDB queries, one a line (at most `chars` characters). */
function manyMongo(count: number, chars = Infinity): string {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; i < count; i++) {
    const line = `db.orders.find({ status: 's${i % 13}', n: ${i} }).sort({ created_at: -1 }).limit(5);`;
    if ((size += line.length + 1) > chars) break;
    out.push(line);
  }
  return out.join('\n');
}

/** A SQL file of `count` short statements (at most `chars` characters). */
function manySql(count: number, chars = Infinity): string {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; i < count; i++) {
    const line = `SELECT id FROM orders WHERE status = 's${i % 13}' AND n = ${i};`;
    if ((size += line.length + 1) > chars) break;
    out.push(line);
  }
  return out.join('\n');
}

/** The most memory the process has held, in MB (Linux's /proc; undefined elsewhere). */
function peakMb(pid: number | undefined): number | undefined {
  if (pid === undefined || !existsSync(`/proc/${pid}/status`)) return undefined;
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : undefined;
}

interface Result {
  diagnosticsMs: number;
  lensMs: number;
  lenses: number;
  diagnostics: number;
  peakMb: number | undefined;
  caps: string[];
}

/** One newly started server opens the file; it is stopped afterwards. */
async function openOnce(c: Case): Promise<Result> {
  const child = fork(SERVER, ['--node-ipc'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const conn = createMessageConnection(new IPCMessageReader(child), new IPCMessageWriter(child));
  const uri = `file:///bench/${c.name}`;
  const caps: string[] = [];
  let published: (p: { uri: string; diagnostics: unknown[] }) => void = () => undefined;
  const diagnostics = new Promise<{ uri: string; diagnostics: unknown[] }>((resolve) => (published = resolve));
  conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: unknown[] }) => {
    if (p.uri === uri) published(p);
  });
  conn.onNotification(CapReached.method, (p: CapReachedParams) => {
    if (p.cap) caps.push(`${p.limit!.toLocaleString('en-US')} ${p.cap}`);
  });
  conn.onNotification(SchemaNeeded.method, () => undefined);
  conn.onNotification('window/logMessage', () => undefined);
  conn.listen();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {}, initializationOptions: { protocolVersion: LANGUAGE_SERVER_PROTOCOL_VERSION } });
  await conn.sendNotification('initialized', {});
  // The server's own start is not the file's: it is done before the clock starts.
  const t0 = performance.now();
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: c.languageId, version: 1, text: c.text } });
  const d = await diagnostics;
  const diagnosticsMs = performance.now() - t0;
  const lenses = ((await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as unknown[] | null)?.length ?? 0;
  const lensMs = performance.now() - t0;
  const peak = peakMb(child.pid);
  await conn.sendRequest('shutdown');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await conn.sendNotification('exit');
  const stop = setTimeout(() => child.kill(), 5_000);
  await exited;
  clearTimeout(stop);
  conn.dispose();
  return { diagnosticsMs, lensMs, lenses, diagnostics: d.diagnostics.length, peakMb: peak, caps };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (x: number) => Math.round(x).toLocaleString('en-US');

async function main(): Promise<void> {
  if (!existsSync(SERVER)) throw new Error('dist/server.js is missing: run node scripts/build.mjs first.');
  const cases: Case[] = [
    { name: 'baseline-5000-lines.ts', languageId: 'typescript', text: scriptFile(5_000, 7) },
    { name: 'big-20MB.ts', languageId: 'typescript', text: bigScript(20_000_000) },
    { name: 'queries-100000.sql', languageId: 'sql', text: manySql(100_000) },
    { name: 'queries-100000.mongodb.js', languageId: 'javascript', text: manyMongo(100_000) },
    { name: 'queries-53000.mongodb.js', languageId: 'javascript', text: manyMongo(53_000) },
    { name: 'queries-53000.sql', languageId: 'sql', text: manySql(53_000) },
    // As many queries as fit under the cap of characters: the most work a file the server reads can ask.
    { name: 'under-the-cap.sql', languageId: 'sql', text: manySql(Infinity, 600_000) },
    { name: 'under-the-cap.mongodb.js', languageId: 'javascript', text: manyMongo(Infinity, 600_000) },
    { name: 'under-the-cap.ts', languageId: 'typescript', text: bigScript(600_000, 600_000) },
  ];
  let baseline: number | undefined;
  for (const c of cases) {
    const results: Result[] = [];
    for (let i = 0; i < RUNS; i++) results.push(await openOnce(c));
    const diag = median(results.map((r) => r.diagnosticsMs));
    const lens = median(results.map((r) => r.lensMs));
    const peaks = results.map((r) => r.peakMb).filter((x): x is number => x !== undefined);
    baseline ??= lens;
    const last = results.at(-1)!;
    console.log(
      `${c.name}: ${fmt(c.text.length)} characters; diagnostics ${fmt(diag)} ms, lenses ${fmt(lens)} ms (${(lens / baseline).toFixed(1)}x the 5,000-line file), ` +
      `${last.diagnostics} diagnostics, ${last.lenses} lenses, peak ${peaks.length ? `${fmt(median(peaks))} MB` : 'n/a'}; caps said: ${last.caps.join(', ') || 'none'} (median of ${RUNS})`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
