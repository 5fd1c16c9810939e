// `qpi check [PATH...] --uri URI`: the CI gate. The finder of `qpi lint` and the editor reads the
// repository's files; every query it can explain is explained on the CI database of its engine; the
// editor's findings, the plan's signature and its counters are compared with qpi.lock.json under the
// policy (src/core/check/policy.ts); the result is written for people and for CI (SARIF, JUnit,
// markdown, JSON). Exit codes: 0 passed, 3 the gate failed, 4 an environment problem (a database
// unreachable, or a server version other than the lock's), 2 an input refused, 64 a usage error.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import {
  analyzeQuery, anchorRange, collectQueries, decide, DiagnosticCodes, gateCounts, lineColumn, loadSqlParser, nextLock, parseLock, planCounters, planSignature,
  serializeLock, toJunit, toMarkdown, toSarif, versionNumber,
  type CheckFinding, type CheckQuery, type DocumentSchema, type GateDecision, type Lock, type PlanSignature, type QueryRun,
} from '../../core/index';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, readFailure, type Io } from '../io';
import { expandPaths, EXIT_FINDINGS } from '../lint';
import { engineOfUri } from '../explain';
import { Configs, parseConfig } from './config';
import { CiDatabases, ENGINE_NAME, EnvironmentProblem, type Engine } from './servers';

export const EXIT_GATE_FAILED = EXIT_FINDINGS;
export const EXIT_ENVIRONMENT = 4;

export const CHECK_USAGE = `  qpi check [PATH...] --uri URI [--uri URI] [--lock FILE] [--update] [--config FILE] [--sarif FILE]
            [--junit FILE] [--markdown FILE] [--json] [--timeout-ms N]
                                       the CI gate: every query the finder sees under PATH (default .)
                                       explained on the CI database of its engine (one --uri each;
                                       plain EXPLAIN, MongoDB executionStats), compared with qpi.lock.json;
                                       --update writes the lock; exit 3 when the gate fails, 4 when a
                                       database is unreachable or its version is not the lock's
`;

const HELP_BASE = 'https://marketplace.visualstudio.com/items?itemName=query-plan-inspector.query-plan-inspector';
const TOOL_VERSION = '0.1.0';

interface Options {
  paths: string[];
  uris: Partial<Record<Engine, string>>;
  lock: string;
  update: boolean;
  config?: string;
  sarif?: string;
  junit?: string;
  markdown?: string;
  json: boolean;
  timeoutMs: number;
}

function parseOptions(argv: string[]): Options | string {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        uri: { type: 'string', multiple: true },
        lock: { type: 'string' },
        update: { type: 'boolean' },
        config: { type: 'string' },
        sarif: { type: 'string' },
        junit: { type: 'string' },
        markdown: { type: 'string' },
        json: { type: 'boolean' },
        'timeout-ms': { type: 'string' },
      },
    });
  } catch (err) {
    return err instanceof Error ? err.message.split('\n')[0]! : String(err);
  }
  const v = parsed.values;
  const uris: Partial<Record<Engine, string>> = {};
  for (const uri of v.uri ?? []) {
    const engine = engineOfUri(uri);
    if (engine === undefined) return 'A --uri must start with mongodb://, mongodb+srv://, postgres:// or postgresql://.';
    if (uris[engine] !== undefined) return `--uri is given twice for ${ENGINE_NAME[engine]}: one database per engine.`;
    uris[engine] = uri;
  }
  let timeoutMs = 30_000;
  if (v['timeout-ms'] !== undefined) {
    timeoutMs = /^\d+$/.test(v['timeout-ms']) ? Number(v['timeout-ms']) : NaN;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2 ** 31 - 1) return '--timeout-ms must be a whole number of milliseconds from 1 to 2147483647.';
  }
  return {
    paths: parsed.positionals.length > 0 ? parsed.positionals : ['.'],
    uris,
    lock: resolve(v.lock ?? 'qpi.lock.json'),
    update: v.update === true,
    json: v.json === true,
    timeoutMs,
    ...(v.config !== undefined ? { config: v.config } : {}),
    ...(v.sarif !== undefined ? { sarif: v.sarif } : {}),
    ...(v.junit !== undefined ? { junit: v.junit } : {}),
    ...(v.markdown !== undefined ? { markdown: v.markdown } : {}),
  };
}

/** Today as the waivers write it, in UTC. */
function today(): string {
  return new Date().toISOString().slice(0, 10);
}

export async function runCheck(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const o = parseOptions(argv);
  if (typeof o === 'string') {
    io.stderr(`${o}\nUsage:\n${CHECK_USAGE}`);
    return EXIT_USAGE;
  }
  if (Object.keys(o.uris).length === 0) {
    io.stderr(`qpi check needs a database: --uri postgres://... and/or --uri mongodb://...\nUsage:\n${CHECK_USAGE}`);
    return EXIT_USAGE;
  }
  // Paths in the lock and in SARIF are relative to the lock's folder: the repository's root in CI.
  const root = dirname(o.lock);
  const rel = (p: string): string => relative(root, resolve(p)).split(sep).join('/');

  let previous: Lock | undefined;
  if (existsSync(o.lock)) {
    let text: string;
    try {
      text = readFileSync(o.lock, 'utf8');
    } catch (err) {
      io.stderr(`${readFailure(o.lock, err)}\n`);
      return EXIT_REFUSED;
    }
    const parsed = parseLock(text);
    if (!parsed.ok) {
      io.stderr(`${rel(o.lock)}: ${parsed.error}\n`);
      return EXIT_REFUSED;
    }
    previous = parsed.lock;
  }
  let configs: Configs;
  if (o.config !== undefined) {
    let text: string;
    try {
      text = readFileSync(o.config, 'utf8');
    } catch (err) {
      io.stderr(`${readFailure(o.config, err)}\n`);
      return EXIT_REFUSED;
    }
    const c = parseConfig(text, o.config);
    if (typeof c === 'string') {
      io.stderr(`${c}\n`);
      return EXIT_REFUSED;
    }
    configs = new Configs({ config: c, path: o.config });
  } else configs = new Configs();

  const started = Date.now();
  await loadSqlParser();
  const queries: CheckQuery[] = [];
  const absOf = new Map<string, string>();
  for (const file of expandPaths(o.paths)) {
    let text: string;
    try {
      text = await io.readFile(file);
    } catch (err) {
      io.stderr(`${readFailure(file, err)}\n`);
      return EXIT_REFUSED;
    }
    const r = rel(file);
    absOf.set(r, resolve(file));
    const collected = collectQueries(text, r);
    for (const w of collected.warnings) io.stderr(`${r}: ${w}\n`);
    for (const q of collected.queries) queries.push(Object.assign(q, { source: text }));
  }
  // Every configuration is read before any database is asked, so a broken one stops the run at once.
  for (const abs of absOf.values()) configs.forFile(abs);
  if (configs.errors.length > 0) {
    for (const e of configs.errors) io.stderr(`${e}\n`);
    return EXIT_REFUSED;
  }

  const dbs = new CiDatabases(o.timeoutMs);
  const runs: QueryRun[] = [];
  const environment: Lock['environment'] = {};
  try {
    await dbs.connect(o.uris, env.QPI_PASSWORD || undefined);
    for (const engine of ['mongodb', 'postgres'] as const) {
      const version = dbs.serverVersion(engine);
      if (version === undefined) continue;
      environment[engine] = { server: versionNumber(version) };
      const locked = previous?.environment[engine]?.server;
      if (!o.update && locked !== undefined && locked !== environment[engine]!.server) {
        throw new EnvironmentProblem(`The ${ENGINE_NAME[engine]} server is ${environment[engine]!.server}, but the lock was written on ${locked}: plans are only compared on the server version they were recorded on. This is not a regression: run the check on a ${locked} server, or write the lock again with --update.`);
      }
    }
    for (const [i, q] of queries.entries()) {
      io.progress?.(`qpi check: ${i + 1}/${queries.length} ${q.file}`);
      runs.push(await runQuery(q as CheckQuery & { source: string }, dbs));
    }
  } catch (err) {
    if (err instanceof EnvironmentProblem) {
      io.progress?.('');
      io.stderr(`${err.message}\n`);
      return EXIT_ENVIRONMENT;
    }
    throw err;
  } finally {
    await dbs.close();
  }
  io.progress?.('');

  const decision = decide(runs, previous, (file) => configs.forFile(absOf.get(file) ?? resolve(root, file)), today());
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const lockRel = rel(o.lock);
  try {
    if (o.sarif) write(o.sarif, toSarif(decision, { toolVersion: TOOL_VERSION, helpBase: HELP_BASE, lockFile: lockRel }));
    if (o.junit) write(o.junit, toJunit(decision));
    if (o.markdown) write(o.markdown, toMarkdown(decision));
    if (o.update) write(o.lock, serializeLock(nextLock(runs, previous, environment)));
  } catch (err) {
    io.stderr(`${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_REFUSED;
  }
  const code = o.update || decision.passed ? EXIT_OK : EXIT_GATE_FAILED;
  const counts = gateCounts(decision);
  if (o.json) io.stdout(`${JSON.stringify(jsonDocument(decision, code, environment), null, 2)}\n`);
  else printText(decision, io);
  io.stderr(`${counts.queries} quer${counts.queries === 1 ? 'y' : 'ies'} in ${absOf.size} file${absOf.size === 1 ? '' : 's'}: ${counts.explained} explained, ${counts.notExplainable} not explainable; ${counts.failed} failed, ${counts.passed} passed (${seconds} s). `
    + (o.update ? `${lockRel} written.\n` : `The gate ${decision.passed ? 'passed' : 'failed'}.\n`));
  return code;
}

function write(path: string, text: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, text);
}

/** One query explained, its plan read into a signature and counters, and the editor's findings on it. */
async function runQuery(q: CheckQuery & { source: string }, dbs: CiDatabases): Promise<QueryRun> {
  const base = { key: q.key, engine: q.engine, file: q.file, ...(q.scope !== undefined ? { scope: q.scope } : {}), shape: q.shape, title: q.title, range: q.range, ignores: q.ignores };
  const notExplainable = (why: string): QueryRun => ({ ...base, status: 'not-explainable', why, findings: findingsOf(q, undefined) });
  if (!q.explain.ok) return notExplainable(q.explain.problem);
  if (!dbs.has(q.engine)) return notExplainable(`no --uri for ${ENGINE_NAME[q.engine]} was given`);
  const r = await dbs.explain(q.engine, q.explain.text);
  if (!r.ok) return notExplainable(r.why);
  const signature = planSignature(r.plan, r.collection);
  const schema: DocumentSchema = { connection: { mongodb: 'the CI database', postgres: 'the CI database' }, collections: new Map(), tables: new Map(), plans: new Map(), advice: new Map() };
  if (q.engine === 'postgres') {
    for (const [t, indexes] of await dbs.pgIndexes(signature.access.map((a) => a.target))) schema.tables.set(t, { indexes });
  } else if (q.found.engine === 'mongodb' && q.found.command.collection !== '') {
    schema.collections.set(q.found.command.collection, { indexes: await dbs.mongoIndexesOf(q.found.command.collection, q.found.command.database) });
  }
  const findings = findingsOf(q, schema, signature);
  return { ...base, status: 'explained', signature, counters: planCounters(r.plan), findings };
}

const STRUCTURAL_FROM_INDEXES = new Set<string>([DiagnosticCodes.collectionScan, DiagnosticCodes.blockingSort]);

/**
 * The editor's findings on a query: with the CI database's index lists, those that hold whatever the data
 * (tier structural); the plan's own full scan or in-memory sort where the index lists did not predict it
 * is the planner's choice on the CI data (tier statistical). Sets the signature's ESR verdict.
 */
function findingsOf(q: CheckQuery & { source: string }, schema: DocumentSchema | undefined, signature?: PlanSignature): CheckFinding[] {
  const a = analyzeQuery(q.found, q.source, schema, undefined, schema ? {} : { findingsOnly: true });
  const out: CheckFinding[] = [];
  for (const f of a.findings) {
    if (f.code === DiagnosticCodes.indexServes) continue;
    const r = anchorRange(q.found, f.anchor);
    out.push({ rule: f.code, tier: 'structural', severity: f.severity, message: f.message, range: lineRange(q.source, r.start, r.end), ...(f.suggestion ? { suggestion: f.suggestion.createText } : {}) });
  }
  if (signature) {
    const fromIndexes = new Set(out.filter((f) => STRUCTURAL_FROM_INDEXES.has(f.rule)).map((f) => f.rule));
    const full = signature.access.find((x) => x.path === 'full-scan');
    const planned = a.top?.createText;
    if (full && !fromIndexes.has(DiagnosticCodes.collectionScan) && hasFilter(q)) {
      out.push({ rule: DiagnosticCodes.planFullScan, tier: 'statistical', severity: 'information', range: q.range, message: `The plan the CI database chose reads all of ${full.target} (${signature.stages}) although an index could serve the filter: the planner's choice on the CI data.` });
    }
    if (signature.blockingSort && !fromIndexes.has(DiagnosticCodes.blockingSort)) {
      out.push({ rule: DiagnosticCodes.planBlockingSort, tier: 'statistical', severity: 'information', range: q.range, message: `The plan the CI database chose sorts in memory (${signature.stages}).` });
    }
    if (a.top?.keep) signature.esr = 'serves';
    else if (planned) signature.esr = signature.indexes.length > 0 ? 'improvable' : 'no-index';
  }
  return out;
}

/** Whether the query filters at all: reading a whole table for an unfiltered query is no finding. */
function hasFilter(q: CheckQuery): boolean {
  if (q.found.engine === 'mongodb') {
    const c = q.found.command;
    return (c.filter !== undefined && Object.keys(c.filter).length > 0) || (c.pipeline ?? []).some((s) => '$match' in s);
  }
  return /\bwhere\b/i.test(q.shape);
}

function lineRange(text: string, start: number, end: number): CheckFinding['range'] {
  const s = lineColumn(text, start);
  const e = lineColumn(text, Math.max(start, end));
  return { startLine: s.line, startColumn: s.column, endLine: e.line, endColumn: e.column };
}

function printText(d: GateDecision, io: Io): void {
  for (const w of d.expiredWaivers) io.stdout(`error qpi.check.waiver-expired the waiver of ${w.rule} on ${w.query} expired on ${w.expires} (${w.owner}: ${w.reason}).\n`);
  for (const v of d.verdicts) {
    const at = `${v.run.file}:${v.run.range.startLine}:${v.run.range.startColumn}`;
    if (v.outcome === 'not-explainable') io.stdout(`${at} note not explainable: ${v.run.why}\n`);
    for (const r of v.results) {
      if (!r.fails && (r.level === 'note' || r.suppressed)) continue;
      io.stdout(`${v.run.file}:${r.range.startLine}:${r.range.startColumn} ${r.fails ? 'FAIL' : r.level} ${r.rule} (${r.tier}) ${r.message}\n`);
    }
  }
}

function jsonDocument(d: GateDecision, exitCode: number, environment: Lock['environment']): unknown {
  return {
    schemaVersion: 1,
    passed: d.passed,
    exitCode,
    counts: gateCounts(d),
    environment,
    expiredWaivers: d.expiredWaivers,
    queries: d.verdicts.map((v) => ({
      key: v.run.key,
      file: v.run.file,
      line: v.run.range.startLine,
      column: v.run.range.startColumn,
      engine: v.run.engine,
      ...(v.run.scope !== undefined ? { scope: v.run.scope } : {}),
      title: v.run.title,
      outcome: v.outcome,
      baselineState: v.baselineState,
      ...(v.run.why !== undefined ? { notExplainable: v.run.why } : {}),
      ...(v.run.signature ? { signature: v.run.signature } : {}),
      ...(v.run.counters ? { counters: v.run.counters } : {}),
      results: v.results,
    })),
  };
}
