// `qpi check [PATH...] --uri URI`: the CI gate. The finder of `qpi lint` and the editor reads the
// repository's files; every query it can explain is explained on the CI database of its engine; the
// editor's findings, the plan's signature and its counters are compared with qpi.lock.json under the
// policy (src/core/check/policy.ts); the result is written for people and for CI (SARIF, JUnit,
// markdown, JSON). Exit codes: 0 passed, 3 the gate failed, 4 an environment problem (a database
// unreachable, or a server version other than the lock's), 2 an input refused, 64 a usage error.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import {
  analyzeQuery, anchorRange, bindableMongo, formatCount, formatSeconds, plural, explainValues, mongoVariableValue, canonicalJson, notThere, causeOfLostIndex, collectQueries, decide, DiagnosticCodes, gateCounts, indexTables, lineColumn, loadSqlParser, nextLock, parseLock, planCounters, planSignature,
  querySourceKind, readScriptDdl, readSqlDdl, scriptDialect, serializeLock, sqlTables, stableHash, toGitlab, toJsonDocument, toJunit, toMarkdown, toSarif, touchedTargets, measurementSentence, versionNumber,
  type CheckFinding, type CheckQuery, type DdlStatement, type DecideOptions, type DocumentSchema, type GateDecision, type Lock, type PlanSignature, type QueryRun,
} from '../../core/index';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, readFailure, readOrSay, strictFlags, type Io } from '../io';
import { expandPaths, EXIT_FINDINGS, isFolder, PrismaSchemas } from '../lint';
import { engineOfUri } from '../explain';
import { nodeWorkspaceModules } from '../../node/workspaceModules';
import { WorkspaceSchema } from '../../node/workspaceSchema';
import { Configs, parseConfig } from './config';
import { changedSince, GitProblem, type ChangedFiles } from './git';
import { HELP_BASE, runMerge, TOOL_VERSION } from './merge';
import { DEFAULT_MEASURE_BUDGET_MS, measureRuns, runsToMeasure } from './measure';
import { CiDatabases, ENGINE_NAME, EnvironmentProblem, type Engine } from './servers';

export const EXIT_GATE_FAILED = EXIT_FINDINGS;
export const EXIT_ENVIRONMENT = 4;

export const CHECK_USAGE = `  qpi check [PATH...] --uri URI [--uri URI] [--lock FILE] [--update] [--config FILE] [--schema PATH]
            [--changed-since REF] [--shard I/N] [--sarif FILE] [--junit FILE] [--markdown FILE]
            [--gitlab FILE] [--json] [--timeout-ms N] [--measure [--measure-budget-ms N]]
                                       the CI gate: every query the finder sees under PATH (default .)
                                       explained on the CI database of its engine (one --uri each;
                                       plain EXPLAIN, MongoDB executionStats), compared with qpi.lock.json;
                                       --update writes the lock (exit 0 unless an expired waiver
                                       still fails); exit 3 when the gate fails, 4 when a database is
                                       unreachable or its version is not the lock's; --measure
                                       measures the advice on the queries that fail, as qpi advise
                                       --uri (--verify) does, within --measure-budget-ms (default 60 s)
  qpi check merge FILE... [--sarif FILE] [--junit FILE] [--markdown FILE] [--gitlab FILE] [--lock FILE] [--json]
                                       the outputs of --shard runs (--json documents, SARIF, JUnit,
                                       locks) joined as one run would have written them
`;


interface Options {
  paths: string[];
  schema: string[];
  changedSince?: string;
  shard?: { index: number; count: number };
  gitlab?: string;
  uris: Partial<Record<Engine, string>>;
  lock: string;
  update: boolean;
  config?: string;
  sarif?: string;
  junit?: string;
  markdown?: string;
  json: boolean;
  timeoutMs: number;
  /** --measure: the measured advice on the queries that fail, within this many milliseconds in all. */
  measureBudgetMs?: number;
}

function parseOptions(argv: string[]): Options | string {
  const parsed = strictFlags(argv, {
    uri: { type: 'string', multiple: true },
    schema: { type: 'string', multiple: true },
    'changed-since': { type: 'string' },
    shard: { type: 'string' },
    gitlab: { type: 'string' },
    lock: { type: 'string' },
    update: { type: 'boolean' },
    config: { type: 'string' },
    sarif: { type: 'string' },
    junit: { type: 'string' },
    markdown: { type: 'string' },
    json: { type: 'boolean' },
    'timeout-ms': { type: 'string' },
    measure: { type: 'boolean' },
    'measure-budget-ms': { type: 'string' },
  });
  if (typeof parsed === 'string') return parsed;
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
  let measureBudgetMs: number | undefined;
  if (v['measure-budget-ms'] !== undefined && v.measure !== true) return '--measure-budget-ms bounds the measurement: give --measure with it.';
  if (v.measure === true) {
    measureBudgetMs = DEFAULT_MEASURE_BUDGET_MS;
    if (v['measure-budget-ms'] !== undefined) {
      measureBudgetMs = /^\d+$/.test(v['measure-budget-ms']) ? Number(v['measure-budget-ms']) : NaN;
      if (!Number.isSafeInteger(measureBudgetMs) || measureBudgetMs < 1 || measureBudgetMs > 2 ** 31 - 1) return '--measure-budget-ms must be a whole number of milliseconds from 1 to 2147483647.';
    }
  }
  let shard: Options['shard'];
  if (v.shard !== undefined) {
    const m = /^(\d+)\/(\d+)$/.exec(v.shard);
    const index = m ? Number(m[1]) : NaN;
    const count = m ? Number(m[2]) : NaN;
    if (!(count >= 1 && count <= 1000 && index >= 1 && index <= count)) return '--shard must be I/N with 1 <= I <= N <= 1000 (--shard 2/4 is the second of four).';
    shard = { index, count };
  }
  if (v['changed-since'] !== undefined && (v['changed-since'] === '' || v['changed-since'].startsWith('-'))) return '--changed-since needs a git revision (a branch, a tag or a commit).';
  return {
    paths: parsed.positionals.length > 0 ? parsed.positionals : ['.'],
    schema: v.schema ?? [],
    ...(v['changed-since'] !== undefined ? { changedSince: v['changed-since'] } : {}),
    ...(shard ? { shard } : {}),
    ...(v.gitlab !== undefined ? { gitlab: v.gitlab } : {}),
    uris,
    lock: resolve(v.lock ?? 'qpi.lock.json'),
    update: v.update === true,
    json: v.json === true,
    timeoutMs,
    ...(measureBudgetMs !== undefined ? { measureBudgetMs } : {}),
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
  if (argv[0] === 'merge') return runMerge(argv.slice(1), io);
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
    const text = readDiskOrSay(io, o.lock);
    if (text === undefined) return EXIT_REFUSED;
    const parsed = parseLock(text);
    if (!parsed.ok) {
      io.stderr(`${rel(o.lock)}: ${parsed.error}\n`);
      return EXIT_REFUSED;
    }
    previous = parsed.lock;
  }
  let configs: Configs;
  if (o.config !== undefined) {
    const text = readDiskOrSay(io, o.config);
    if (text === undefined) return EXIT_REFUSED;
    const c = parseConfig(text, o.config);
    if (typeof c === 'string') {
      io.stderr(`${c}\n`);
      return EXIT_REFUSED;
    }
    configs = new Configs(root, { config: c, path: o.config });
  } else configs = new Configs(root);

  let changed: ChangedFiles | undefined;
  if (o.changedSince !== undefined) {
    try {
      changed = changedSince(o.changedSince, root);
    } catch (err) {
      if (!(err instanceof GitProblem)) throw err;
      io.stderr(`${err.message}\n`);
      return EXIT_REFUSED;
    }
  }

  const started = Date.now();
  await loadSqlParser();
  const all: (CheckQuery & { source: string })[] = [];
  const absOf = new Map<string, string>();
  const statements: DdlStatement[] = [];
  const files = expandPaths(o.paths);
  // Imports are followed into the repository's other files, as the language server follows them.
  const modules = nodeWorkspaceModules(resolve(root));
  // Prisma calls are written with the tables and columns the nearest schema.prisma maps, as `qpi lint` and the editor write them.
  const prisma = new PrismaSchemas(io, undefined);
  // The entities the repository's code declares (TypeORM, Sequelize, Mongoose), read as the language server
  // reads them, so a query has the same shape, and the same lock key, in the editor and in CI.
  const repository = await new WorkspaceSchema([resolve(root)], () => undefined, () => undefined).load().catch(() => undefined);
  const entities = repository?.entities;
  for (const file of files) {
    const r = rel(file);
    // A shard reads only its own files: the others are another shard's.
    if (o.shard && shardOf(r, o.shard.count) !== o.shard.index) continue;
    const text = await readOrSay(io, file);
    if (text === undefined) return EXIT_REFUSED;
    absOf.set(r, resolve(file));
    const prismaModels = querySourceKind('', file) === 'script' ? await prisma.modelsFor(file) : undefined;
    const collected = collectQueries(text, r, { file: resolve(file).split(sep).join('/'), modules, ...(prismaModels ? { prismaModels } : {}), ...(entities ? { entities } : {}) });
    for (const w of collected.warnings) io.stderr(`${r}: ${w}\n`);
    for (const q of collected.queries) all.push(Object.assign(q, { source: text }));
    if (r.endsWith('.sql')) statements.push(...readSqlDdl(text, r));
  }
  // Migrations and schema files (--schema): what they do to tables, collections and indexes.
  const schemaFiles = new Set<string>();
  for (const file of expandSchemaPaths(o.schema)) {
    const r = rel(file);
    if (absOf.has(r) || schemaFiles.has(r)) continue;
    const text = await readOrSay(io, file);
    if (text === undefined) return EXIT_REFUSED;
    schemaFiles.add(r);
    statements.push(...ddlOf(text, r));
  }
  statements.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  // Every configuration is read before any database is asked, so a broken one stops the run at once.
  for (const abs of absOf.values()) configs.forFile(abs);
  if (configs.errors.length > 0) {
    for (const e of configs.errors) io.stderr(`${e}\n`);
    return EXIT_REFUSED;
  }

  // The part of the repository this run judges: a shard's files, and under --changed-since the changed
  // files and the queries on what changed migrations and schema files touch.
  const fileOfKey = (key: string): string => previous?.queries[key]?.file ?? key.split(' ')[0]!;
  let queries = all;
  let touched: Set<string> | undefined;
  if (changed) {
    const c = changed;
    const changedDdl = statements.filter((st) => c.files.has(st.file));
    const before: DdlStatement[] = [];
    for (const f of new Set([...c.files].filter((x) => schemaFiles.has(x) || x.endsWith('.sql') || (absOf.has(x) && statements.some((st) => st.file === x))))) {
      const old = c.textAtBase(f);
      if (old !== undefined) before.push(...ddlOf(old, f));
    }
    const owners = indexTables([...before, ...statements]);
    touched = touchedTargets([...before, ...changedDdl], owners);
    const t = touched;
    queries = all.filter((q) => c.files.has(q.file) || targetsOf(q, previous).some((x) => t.has(x)));
  }
  const selected = new Set(queries.map((q) => q.key));
  const inShard = (key: string): boolean => !o.shard || shardOf(fileOfKey(key), o.shard.count) === o.shard.index;
  const inChanged = (key: string): boolean => !changed || selected.has(key) || changed.files.has(fileOfKey(key));
  const part: DecideOptions = { inPart: (key) => inShard(key) && inChanged(key) };
  const partName = [o.shard ? `shard ${o.shard.index}/${o.shard.count}` : '', changed ? `changed since ${o.changedSince} (${changed.base.slice(0, 12)})` : ''].filter(Boolean).join(', ') || undefined;
  if (changed) {
    io.stderr(`--changed-since ${o.changedSince}: ${changed.files.size} changed file${changed.files.size === 1 ? '' : 's'}${touched && touched.size > 0 ? `; migrations and schema files touch ${[...touched].sort().join(', ')}` : ''}; ${queries.length} of ${all.length} queries checked.\n`);
  }

  const configOf = (file: string) => configs.forFile(absOf.get(file) ?? resolve(root, file));
  const dbs = new CiDatabases(o.timeoutMs);
  const runs: QueryRun[] = [];
  const environment: Lock['environment'] = {};
  try {
    await dbs.connect(o.uris, env.QPI_PASSWORD || undefined, o.measureBudgetMs !== undefined);
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
      runs.push(await runQuery(q, dbs));
    }
    // --measure: the measured advice on the queries that fail against the lock, before the connections close
    // (--update makes what it finds the baseline, so nothing fails and nothing is measured).
    if (o.measureBudgetMs !== undefined && !o.update) {
      const failing = runsToMeasure(decide(runs, previous, configOf, today(), part));
      const textOf = new Map(queries.map((q) => [q.key, q.explain.ok ? q.explain.text : undefined]));
      await measureRuns(failing, dbs, { textOf: (key) => textOf.get(key), budgetMs: o.measureBudgetMs, timeoutMs: o.timeoutMs, ...(io.progress ? { progress: io.progress } : {}) });
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

  const checkedAgainstPrevious = withCauses(decide(runs, previous, configOf, today(), part), statements);
  // --update records what the run found as the new baseline: the gate is then decided again against the
  // lock it wrote, so its exit code is the one the next `qpi check` will give (only an expired waiver,
  // which a person must renew, still fails).
  let decision = checkedAgainstPrevious;
  let written: Lock | undefined;
  if (o.update) {
    // A shard's lock holds its own part (qpi check merge joins the shards'); otherwise the entries outside
    // the part checked are kept as they were.
    const keep = (key: string): boolean => (o.shard ? inShard(key) : true) && !part.inPart!(key);
    written = nextLock(runs, previous, environment, { inPart: (key) => !keep(key) });
    decision = withCauses(decide(runs, written, configOf, today(), part), statements);
  }
  const seconds = formatSeconds(Date.now() - started);
  const lockRel = rel(o.lock);
  const code = decision.passed ? EXIT_OK : EXIT_GATE_FAILED;
  try {
    if (o.sarif) write(o.sarif, toSarif(decision, { toolVersion: TOOL_VERSION, helpBase: HELP_BASE, lockFile: lockRel }));
    if (o.junit) write(o.junit, toJunit(decision));
    if (o.markdown) write(o.markdown, toMarkdown(decision));
    if (o.gitlab) write(o.gitlab, toGitlab(decision, lockRel));
    if (written) write(o.lock, serializeLock(written));
  } catch (err) {
    io.stderr(`${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_REFUSED;
  }
  const counts = gateCounts(decision);
  const update = written ? updateSummary(checkedAgainstPrevious, decision, previous, written) : undefined;
  if (o.json) {
    const doc = toJsonDocument(decision, code, environment, partName);
    io.stdout(`${JSON.stringify(update ? { ...doc, update: { lock: lockRel, ...update } } : doc, null, 2)}\n`);
  } else {
    if (update) for (const a of update.accepted) io.stdout(`${a.file}:${a.line}:${a.column} accepted ${a.rule} (${a.tier}) ${a.message}\n`);
    printText(decision, io);
  }
  const head = `${plural(counts.queries, 'query', 'queries')} in ${plural(new Set(queries.map((q) => q.file)).size, 'file')}${partName ? ` (${partName})` : ''}: ${formatCount(counts.explained)} explained, ${formatCount(counts.notExplainable)} not explainable; ${formatCount(counts.failed)} failed, ${formatCount(counts.passed)} passed (${seconds}). `;
  if (update) {
    const accepted = update.accepted.length;
    io.stderr(`${head}${lockRel} written: ${update.added} added, ${update.updated} updated, ${update.removed} removed, ${update.unchanged} unchanged. `
      + (accepted > 0 ? `${accepted} failure${accepted === 1 ? '' : 's'} of the check against the previous lock ${accepted === 1 ? 'is' : 'are'} now the baseline (the "accepted" lines): review them in the lock's diff. ` : '')
      + (decision.passed ? 'A check against the written lock passes.\n' : 'A check against the written lock still fails: --update does not renew an expired waiver; extend it in the lock or fix the query.\n'));
  } else io.stderr(`${head}The gate ${decision.passed ? 'passed' : 'failed'}.\n`);
  return code;
}

/** The shard (1..count) a file belongs to: by the hash of its path, so a file stays in its shard whatever else changes. */
export function shardOf(file: string, count: number): number {
  return (parseInt(stableHash(file).slice(0, 8), 16) % count) + 1;
}

/** A file's text as it is on disk (the lock, the configuration), or undefined after one sentence on stderr saying why it could not be read. */
function readDiskOrSay(io: Io, file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    io.stderr(`${readFailure(file, err)}\n`);
    return undefined;
  }
}

const SCHEMA_EXTENSIONS = /\.(sql|js|mjs|cjs|ts|mts|cts)$/;

/** The files under --schema paths that may hold migrations (SQL, or scripts that build and drop MongoDB indexes). */
function expandSchemaPaths(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (!isFolder(p)) out.push(p);
    else out.push(...expandPaths([p]).filter((f) => SCHEMA_EXTENSIONS.test(f)));
  }
  return out;
}

function ddlOf(text: string, file: string): DdlStatement[] {
  if (file.endsWith('.sql')) return readSqlDdl(text, file);
  if (SCHEMA_EXTENSIONS.test(file)) return readScriptDdl(text, file, scriptDialect('', file));
  return [];
}

/** The tables or collections a query reads: from its text, and from the plan the lock holds of it. */
function targetsOf(q: CheckQuery, lock: Lock | undefined): string[] {
  const out = new Set<string>();
  if (q.found.engine === 'mongodb') {
    const c = q.found.command;
    if (c.collection) out.add(c.collection);
    for (const st of c.pipeline ?? []) {
      for (const k of ['$lookup', '$graphLookup', '$unionWith']) {
        const v = (st as Record<string, unknown>)[k];
        const from = typeof v === 'string' ? v : (v as { from?: unknown; coll?: unknown } | undefined)?.from ?? (v as { coll?: unknown } | undefined)?.coll;
        if (typeof from === 'string') out.add(from);
      }
    }
  } else for (const t of sqlTables(q.explain.ok ? q.explain.text : q.found.sql)) out.add(t);
  for (const a of lock?.queries[q.key]?.signature?.access ?? []) out.add(a.target);
  return [...out];
}

/** Each lost index given the migration or schema line that dropped it, when one of the files read says so. */
function withCauses(d: GateDecision, statements: readonly DdlStatement[]): GateDecision {
  if (statements.length === 0) return d;
  for (const v of d.verdicts) {
    for (const r of v.results) {
      if (!r.lost) continue;
      const cause = causeOfLostIndex(statements, r.lost.target, r.lost.index);
      if (cause) r.related = [cause];
    }
  }
  return d;
}

interface UpdateSummary {
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
  /** What failed against the previous lock and passes against the written one. */
  accepted: { key: string; file: string; line: number; column: number; rule: string; tier: string; message: string }[];
}

function updateSummary(before: GateDecision, after: GateDecision, previous: Lock | undefined, written: Lock): UpdateSummary {
  const stillFails = new Set(after.verdicts.flatMap((v) => v.results.filter((r) => r.fails).map((r) => `${v.run.key}\u0000${r.rule}`)));
  const accepted: UpdateSummary['accepted'] = [];
  for (const v of before.verdicts) {
    for (const r of v.results) {
      if (r.fails && !stillFails.has(`${v.run.key}\u0000${r.rule}`)) accepted.push({ key: v.run.key, file: v.run.file, line: r.range.startLine, column: r.range.startColumn, rule: r.rule, tier: r.tier, message: r.message });
    }
  }
  const was = previous?.queries ?? {};
  const now = written.queries;
  let added = 0;
  let updated = 0;
  let unchanged = 0;
  for (const [k, e] of Object.entries(now)) {
    if (!(k in was)) added++;
    else if (canonicalJson(e) === canonicalJson(was[k])) unchanged++;
    else updated++;
  }
  const removed = Object.keys(was).filter((k) => !(k in now)).length;
  return { added, updated, removed, unchanged, accepted };
}

function write(path: string, text: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, text);
}

/** One query explained, its plan read into a signature and counters, and the editor's findings on it. */
async function runQuery(q: CheckQuery & { source: string }, dbs: CiDatabases): Promise<QueryRun> {
  const base = { key: q.key, engine: q.engine, file: q.file, ...(q.scope !== undefined ? { scope: q.scope } : {}), shape: q.shape, title: q.title, range: q.range, ignores: q.ignores };
  const notExplainable = (why: string): QueryRun => ({ ...base, status: 'not-explainable', why, findings: findingsOf(q, undefined) });
  // A statement with $n parameters the code binds at run time: a generic plan, or values from the statistics.
  const parameterized = q.explain.ok ? undefined : withParameters(q);
  // A collection the code chooses at run time (a `collection` parameter): there is nothing to explain on.
  if (q.found.engine === 'mongodb' && q.found.command.collection === '') return notExplainable('The collection is chosen at run time, so which one the query reads is not known.');
  // A MongoDB query with values from the code: values of their fields in the CI database, or stand-ins.
  const bindable = q.explain.ok || q.found.engine !== 'mongodb' ? undefined : bindableMongo(q.found);
  if (bindable?.ok === false) return notExplainable(`${bindable.why}.`);
  if (!q.explain.ok && parameterized === undefined && bindable === undefined) return notExplainable(q.explain.problem);
  if (!dbs.has(q.engine)) return notExplainable(`no --uri for ${ENGINE_NAME[q.engine]} was given`);
  const text = q.explain.ok ? q.explain.text : parameterized ?? bindable!.text((v) => mongoVariableValue(v, undefined));
  // A table or collection the CI database does not have: said so under its own rule, never a scan (an
  // explain on MongoDB reads nothing there) nor only "not explainable".
  const absent = await dbs.missing(q.engine, text, CI_DATABASE);
  if (absent.names.length > 0 && absent.catalog) {
    const sentence = notThere(absent.names, absent.catalog).replace(/\.$/, '');
    const run = notExplainable(sentence);
    run.findings.unshift({ rule: DiagnosticCodes.doesNotExist, tier: 'structural', severity: 'warning', range: q.range, message: `${sentence}: the query cannot run there as written, so it is neither explained nor advised.` });
    return run;
  }
  const r = parameterized !== undefined ? await dbs.explainWithParameters(parameterized)
    : bindable !== undefined && q.found.engine === 'mongodb' ? await dbs.explainWithValues(q.found.command.collection, q.found.command.database, bindable)
      : await dbs.explain(q.engine, text);
  if (!r.ok) return notExplainable(r.why);
  const signature = planSignature(r.plan, r.collection);
  if (r.parameters !== undefined) signature.parameters = r.parameters;
  const schema: DocumentSchema = { connection: { mongodb: CI_DATABASE, postgres: CI_DATABASE }, collections: new Map(), tables: new Map(), plans: new Map(), advice: new Map() };
  if (q.engine === 'postgres') {
    for (const [t, indexes] of await dbs.pgIndexes(signature.access.map((a) => a.target))) schema.tables.set(t, { indexes });
  } else if (q.found.engine === 'mongodb' && q.found.command.collection !== '') {
    schema.collections.set(q.found.command.collection, { indexes: await dbs.mongoIndexesOf(q.found.command.collection, q.found.command.database) });
  }
  const findings = findingsOf(q, schema, signature);
  return { ...base, status: 'explained', signature, counters: planCounters(r.plan), findings };
}

/** How the findings name the database a run checks against. */
const CI_DATABASE = 'the CI database';

/**
 * A PostgreSQL statement whose $n parameters the code binds at run time, with them as $n (the values the
 * code writes in put in first), for a generic plan or values from the statistics; undefined for any other
 * query that cannot be explained as written.
 */
function withParameters(q: CheckQuery): string | undefined {
  if (q.found.engine !== 'postgres') return undefined;
  const v = explainValues(q.found);
  if (!v) return undefined;
  const ns = v.names.map((name) => /^\$(\d+)/.exec(name)?.[1]);
  if (ns.some((n) => n === undefined)) return undefined;
  return v.template.replace(/\u0000(\d+)\u0000/g, (_, i: string) => `$${ns[Number(i)]}`);
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
      if (r.measured) io.stdout(`  ${measurementSentence(r.measured)}\n`);
    }
  }
}
