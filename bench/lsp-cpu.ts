// The language server's work per edit as CPU time, in process: the service (find, analyse, build the
// diagnostics) and the JSON the editor and the server write and read for the published diagnostics. CPU
// time is far less moved by other work on the machine than bench/lsp.ts's wall-clock latency, so this is
// the figure to compare two builds with on a shared machine; bench/lsp.ts says what a user waits.
//
// With `--baseline <checkout>` (another source tree of the project, e.g. a worktree of an older commit
// with its dependencies installed) the same edits are made on that tree's service too, in this process,
// the two taking each edit in turn, and the ratios of this tree's medians to it are printed.
//
// With node's --expose-gc it also prints the heap kept per edit (after a full collection, the heap after
// the edits less the heap after the open, over the edits): what a long editing session accumulates.
//
// Run: node [--expose-gc] --import tsx bench/lsp-cpu.ts [--edits N] [--baseline <checkout>]

import { join } from 'node:path';
import { scriptFile, sqlFile } from './generate';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const EDITS = Number(arg('--edits') ?? 120);
const BASELINE = arg('--baseline');
/** Edits before this many are the warm-up (the JIT, the caches), not measured. */
const WARM_UP = 10;

interface Port {
  last: unknown;
  sendDiagnostics(p: unknown): void;
  sendNotification(): void;
  log(): void;
}

interface Service {
  open(uri: string, languageId: string, version: number, text: string): void;
  change(uri: string, version: number, text: string): void;
  settled(uri: string): Promise<void>;
}

interface Tree {
  label: string;
  service: new (port: Port, options: object) => Service;
}

async function load(root: string, label: string): Promise<Tree> {
  const server = (await import(join(root, 'src', 'server', 'service.ts'))) as { InlineAdviceService: Tree['service'] };
  const find = (await import(join(root, 'src', 'core', 'query', 'find', 'index.ts'))) as { loadSqlParser(): Promise<void> };
  await find.loadSqlParser();
  return { label, service: server.InlineAdviceService };
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Result {
  service: number;
  json: number;
  bytes: number;
  keptKb?: number;
}

/** A service with the file open, and what it last published. */
async function opened(tree: Tree, name: string, languageId: string, text: string): Promise<{ service: Service; port: Port; uri: string }> {
  const port: Port = { last: undefined, sendDiagnostics(p) { this.last = p; }, sendNotification() {}, log() {} };
  const service = new tree.service(port, { debounceMs: 0, codeLens: true, maxTextLength: 4_000_000 });
  const uri = `file:///bench/${tree.label}/${name}`;
  service.open(uri, languageId, 1, text);
  await service.settled(uri);
  return { service, port, uri };
}

/** The texts of the edits: a character typed after a marker somewhere in the file, then deleted again. */
function* edits(text: string, marker: string, count: number): Generator<string> {
  let current = text;
  let at = 0;
  for (let i = 0; i < count; i++) {
    // The same character is deleted: deleting the one after another marker could leave `tenant: ,`, a
    // file that does not parse.
    if (i % 2 === 0) at = current.indexOf(marker, (i * 9973) % (current.length - 100)) + marker.length;
    current = i % 2 === 0 ? `${current.slice(0, at)}1${current.slice(at)}` : `${current.slice(0, at)}${current.slice(at + 1)}`;
    yield current;
  }
}

/**
 * Medians over the measured edits, for each tree: the service's CPU time and the JSON round trip of what
 * it published. The trees take each edit in turn (first one, then the other, the order swapped at every
 * edit), so a change of the machine's load during the run reaches both alike.
 */
async function measure(trees: Tree[], name: string, languageId: string, text: string, marker: string): Promise<Result[]> {
  const open = await Promise.all(trees.map((t) => opened(t, name, languageId, text)));
  const work: number[][] = trees.map(() => []);
  const json: number[][] = trees.map(() => []);
  const bytes: number[] = trees.map(() => 0);
  let i = 0;
  for (const current of edits(text, marker, EDITS + WARM_UP)) {
    const order = i % 2 === 0 ? open.keys() : [...open.keys()].reverse();
    for (const k of order) {
      const { service, port, uri } = open[k]!;
      const t0 = process.cpuUsage();
      service.change(uri, i + 2, current);
      await service.settled(uri);
      const t1 = process.cpuUsage(t0);
      const t2 = process.cpuUsage();
      const written = JSON.stringify(port.last);
      JSON.parse(written);
      const t3 = process.cpuUsage(t2);
      if (i < WARM_UP) continue;
      work[k]!.push(cpuMs(t1));
      json[k]!.push(cpuMs(t3));
      bytes[k] = written.length;
    }
    i++;
  }
  const results: Result[] = trees.map((_, k) => ({ service: median(work[k]!), json: median(json[k]!), bytes: bytes[k]! }));
  if (heapUsed() === undefined) return results;
  // The heap each tree keeps is measured alone, one tree after the other.
  for (const [k, tree] of trees.entries()) {
    const { service, uri } = await opened(tree, `${name}.heap`, languageId, text);
    const before = heapUsed()!;
    let version = 2;
    for (const current of edits(text, marker, EDITS)) {
      service.change(uri, version++, current);
      await service.settled(uri);
    }
    results[k]!.keptKb = (heapUsed()! - before) / EDITS / 1e3;
  }
  return results;
}

/** The heap in use after a full collection, when node runs with --expose-gc. */
function heapUsed(): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return undefined;
  gc();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const trees = [...(BASELINE ? [await load(BASELINE, 'baseline')] : []), await load(join(__dirname, '..'), 'this')];
  const files: [string, string, string, string][] = [
    ['service.ts', 'typescript', scriptFile(5000, 10), 'tenant: '],
    ['service-dense.ts', 'typescript', scriptFile(5000, 1), 'tenant: '],
    ['reports.sql', 'sql', sqlFile(5000, 10), "status = 's"],
    ['reports-dense.sql', 'sql', sqlFile(5000, 1), "status = 's"],
  ];
  for (const [name, languageId, text, marker] of files) {
    const results = await measure(trees, name, languageId, text, marker);
    for (const [k, tree] of trees.entries()) {
      const r = results[k]!;
      console.log(`${tree.label === 'baseline' ? 'baseline ' : ''}${name}: CPU per edit (median of ${EDITS}): service ${r.service.toFixed(1)} ms, diagnostics JSON written and read ${r.json.toFixed(1)} ms (${(r.bytes / 1e6).toFixed(2)} MB)${r.keptKb !== undefined ? `; heap kept per edit ${r.keptKb.toFixed(0)} KB` : ''}`);
    }
    if (results.length === 2) {
      const [a, b] = results as [typeof results[0], typeof results[0]];
      console.log(`${name}: this tree / baseline: service x${(b.service / a.service).toFixed(2)}, JSON x${(b.json / a.json).toFixed(2)}, size x${(b.bytes / a.bytes).toFixed(2)}`);
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
