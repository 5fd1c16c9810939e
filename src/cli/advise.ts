// `qpi advise --query TEXT [--uri URI]`: index advice for one MongoDB shell query or SQL statement.
// Offline (no --uri) the advice is static: the engine is read from the text (or --engine) and nothing is
// counted. With --uri the advice uses the indexes that exist and bounded selectivity counts from the
// server, from the same advice service the editor's lens, squiggle and panel ask. On PostgreSQL the
// candidates are then measured on the server, as the panel measures them after an explain: each on a
// temporary copy (HypoPG, or a build inside a rolled-back transaction with --allow-build, where it
// cannot run); --rules-only stops at the rules. On MongoDB the measurement writes a scratch collection (a
// sample, dropped afterwards), so it runs only with --verify, as the panel's Verify asks first. The
// password may come from QPI_PASSWORD; it never appears in any output.

import { openMongoAdvice, openPostgresAdvice, type LiveAdvice } from '../adapters/advise';
import { AdviceService, adviseQuery, type MeasureProgress } from '../adapters/adviceService';
import { isAdapterError } from '../adapters/errors';
import { formatCount, formatLimit, formatSeconds, indexLabel, workText } from '../core/index';
import type { Advice, Measurement, MongoIndexSpec, PgIndexSpec, Suggestion, TournamentEntry } from '../core/index';
import { parseMongoQuery } from '../core/index';
import { engineOfUri, onStopSignals, timeoutOf } from './explain';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, type Io } from './io';

const MAX_SAMPLE = 100_000;

/** mongodb when the text is a shell call on `db`, else postgres: each reader then refuses what it cannot read. */
export function detectEngine(text: string): 'mongodb' | 'postgres' {
  const code = text.replace(/^(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*/, '');
  return /^(?:db|\(\s*db)\s*[.[]|^use\s+\w+\s*;?\s*\n\s*db\b/.test(code) ? 'mongodb' : 'postgres';
}

export async function runAdvise(flags: Map<string, string | true>, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const usage = (sentence: string): number => {
    io.stderr(`${sentence}\n`);
    return EXIT_USAGE;
  };
  const query = flags.get('--query');
  if (typeof query !== 'string') return usage('qpi advise needs --query TEXT (mongo shell text or SQL).');
  const uri = flags.get('--uri');
  const engineFlag = flags.get('--engine');
  if (engineFlag !== undefined && engineFlag !== 'mongodb' && engineFlag !== 'postgres') return usage('--engine must be mongodb or postgres.');
  const uriEngine = typeof uri === 'string' ? engineOfUri(uri) : undefined;
  if (typeof uri === 'string' && uriEngine === undefined) return usage('The URI must start with mongodb://, mongodb+srv://, postgres:// or postgresql://.');
  if (engineFlag !== undefined && uriEngine !== undefined && engineFlag !== uriEngine) return usage(`--engine ${engineFlag} does not match the ${uriEngine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'} URI.`);
  const liveOnly = ['--verify', '--rules-only', '--sample', '--allow-build', '--exact-counts'].filter((f) => flags.has(f));
  if (flags.has('--rules-only') && (flags.has('--verify') || flags.has('--allow-build'))) return usage('--rules-only skips the measurement that --verify and --allow-build ask for: give one or the other.');
  if (uri === undefined && liveOnly.length > 0) return usage(`${liveOnly.join(', ')} need${liveOnly.length > 1 ? '' : 's'} a connection: give --uri.`);
  let sampleSize: number | undefined;
  const sampleRaw = flags.get('--sample');
  if (sampleRaw !== undefined) {
    sampleSize = Number(sampleRaw);
    if (!Number.isInteger(sampleSize) || sampleSize < 1 || sampleSize > MAX_SAMPLE) return usage(`--sample must be a whole number of documents from 1 to ${formatCount(MAX_SAMPLE)}.`);
  }
  const timeoutMs = timeoutOf(flags);
  if (typeof timeoutMs === 'string') return usage(timeoutMs);
  const engine = uriEngine ?? (engineFlag as 'mongodb' | 'postgres' | undefined) ?? detectEngine(query);
  const json = flags.has('--json');

  let advice: Advice;
  let live: LiveAdvice | undefined;
  // --timeout-ms bounds the whole command: the measurement stops starting candidates when it is spent
  // and gives the best of those measured, labelled so.
  const started = Date.now();
  const until = started + timeoutMs;
  const progress = json ? undefined : io.progress;
  const seconds = (): string => formatSeconds(Date.now() - started);
  progress?.(`qpi advise: reading the indexes and statistics (at most ${formatLimit(timeoutMs)})`);
  const onProgress = progress ? (p: MeasureProgress): void => progress(`qpi advise: measuring candidates, ${p.measured} of ${p.of} (${seconds()})`) : undefined;
  const abort = new AbortController();
  const stopOnSignal = onStopSignals(abort);
  try {
    const password = env.QPI_PASSWORD || undefined;
    if (engine === 'mongodb') {
      const parsed = parseMongoQuery(query, { placeholders: true });
      if (!parsed.ok) {
        io.stderr(`${parsed.error}\n`);
        return EXIT_REFUSED;
      }
      if (typeof uri === 'string') {
        const session = await openMongoAdvice({ uri, appName: 'qpi', signal: abort.signal, ...(password ? { password } : {}) });
        try {
          // The same service the editor's faces ask, so the CLI's verdict is theirs.
          const service = new AdviceService();
          const options = {
            exactCounts: flags.has('--exact-counts'),
            timeoutMs,
            until,
            signal: abort.signal,
            ...(sampleSize !== undefined ? { sampleSize } : {}),
            ...(onProgress ? { onProgress } : {}),
          };
          live = await service.mongo(session, parsed.command, { connection: 'cli', options });
          if (flags.has('--verify')) await service.measureMongo(session, parsed.command, live, { ...options, measuredOrder: true });
        } finally {
          await session.close();
        }
        advice = live!.advice;
      } else {
        advice = (await adviseQuery({ engine, command: parsed.command })).advice;
      }
    } else if (typeof uri === 'string') {
      const session = await openPostgresAdvice({ uri, applicationName: 'qpi', timeoutMs, signal: abort.signal, ...(password ? { password } : {}) });
      try {
        const service = new AdviceService();
        const options = { exactCounts: flags.has('--exact-counts'), timeoutMs, until, signal: abort.signal, ...(onProgress ? { onProgress } : {}) };
        live = await service.postgres(session, query, { connection: 'cli', options });
        if (measuresPostgres(flags)) await service.measurePostgres(session, query, live, { ...options, allowBuild: flags.has('--allow-build'), measuredOrder: true });
      } finally {
        await session.close();
      }
      advice = live!.advice;
    } else {
      advice = (await adviseQuery({ engine, sql: query })).advice;
    }
  } catch (err) {
    if (isAdapterError(err)) {
      io.stderr(`${err.message}\n`);
      return EXIT_REFUSED;
    }
    throw err;
  } finally {
    stopOnSignal();
    progress?.('');
  }
  if (advice.refusal !== undefined) {
    io.stderr(`${advice.refusal}\n`);
    return EXIT_REFUSED;
  }
  const hints = cliHints(advice, live, flags);
  const rulesOnly = rulesOnlyVerdict(advice, live, flags);
  if (json) io.stdout(`${JSON.stringify(adviceJson(advice, live, hints, rulesOnly), null, 2)}\n`);
  else io.stdout(adviceText(advice, live, hints, rulesOnly));
  return EXIT_OK;
}

/** PostgreSQL's measurement leaves nothing behind and writes nothing of the user's: it runs unless --rules-only. */
function measuresPostgres(flags: Map<string, string | true>): boolean {
  return !flags.has('--rules-only');
}

/**
 * When the verdicts are the rules' only (nothing measured them), what says so and how to measure them:
 * offline, give a connection; MongoDB without --verify, add it (the measurement copies a sample into a
 * scratch collection, so it runs only when asked); PostgreSQL with --rules-only, leave it out.
 */
export interface RulesOnly {
  /** One sentence: the order and verdicts are the rules', not measured. */
  text: string;
  /** The command line flags that measure them. */
  howToMeasure: string;
}

export function rulesOnlyVerdict(advice: Advice, live: LiveAdvice | undefined, flags: Map<string, string | true>): RulesOnly | undefined {
  if (advice.suggestions.length === 0 || measurementOf(live).status === 'measured') return undefined;
  const rules = advice.engine === 'mongodb' ? 'ESR, ERS, explode-for-sort' : 'ESR, ERS and the planner\'s statistics';
  const text = `The rules' verdict only (${rules}): no candidate was measured on your data, so the order below is the rules' and the first suggestion may not be the least work.`;
  if (!live) return { text, howToMeasure: advice.engine === 'mongodb' ? 'Give --uri and --verify to measure the candidates on a sample of the collection.' : 'Give --uri to measure the candidates on a temporary copy of the table.' };
  if (advice.engine === 'mongodb' && !flags.has('--verify')) return { text, howToMeasure: 'Add --verify to measure the candidates on a random sample copied into a scratch collection (dropped afterwards; --sample N sets its size).' };
  if (advice.engine === 'postgres' && !measuresPostgres(flags)) return { text, howToMeasure: 'Leave out --rules-only to measure the candidates on a temporary copy of the table (each index built inside a transaction that is rolled back).' };
  return undefined;
}

/** What the user could add on the command line to learn more, as sentences (how to measure is in RulesOnly). */
function cliHints(advice: Advice, live: LiveAdvice | undefined, flags: Map<string, string | true>): string[] {
  const hints: string[] = [];
  if (!live) {
    hints.push('Offline advice: give --uri to use the indexes that exist and the selectivity of your data, and to verify the suggestions on the server.');
  } else if (advice.engine === 'postgres' && !flags.has('--allow-build') && advice.notes.some((n) => /needs your consent/.test(n))) {
    hints.push('--allow-build builds each index inside a transaction that is rolled back, to verify it without HypoPG; the build locks writes to the table while it runs.');
  }
  return hints;
}

// ---- JSON ---------------------------------------------------------------------------------------------

/** The documented `--json` document (docs/cli.md, "qpi advise"). */
export function adviceJson(advice: Advice, live: LiveAdvice | undefined, hints: string[] = [], rulesOnly?: RulesOnly): Record<string, unknown> {
  return {
    schemaVersion: 1,
    engine: advice.engine,
    connected: live !== undefined,
    serverVersion: live?.serverVersion ?? null,
    targets: advice.shapes.map((s) => s.target),
    suggestions: advice.suggestions.map(suggestionJson),
    rewrites: advice.rewrites.map((r) => ({ rule: r.rule, description: r.description, text: r.text, parameters: r.parameters ?? [], caveat: r.caveat ?? null })),
    existingIndexes: live ? live.existingIndexes : null,
    stats: live?.stats ?? null,
    statsMethod: live?.statsMethod ?? null,
    measurement: { ...measurementJson(live), rulesOnly: rulesOnly !== undefined || measurementOf(live).status === 'not-measured', howToMeasure: rulesOnly?.howToMeasure ?? null },
    verificationMethod: live?.verification.method ?? null,
    sampleSize: live?.verification.sampleSize ?? null,
    writeCost: advice.writeCost ?? null,
    notIndexable: live?.notIndexable ?? null,
    notes: [...advice.notes, ...hints],
    warnings: advice.warnings,
  };
}

/** Offline advice is the rules alone; connected advice says whether a tournament measured it. */
export function measurementOf(live: LiveAdvice | undefined): Measurement {
  if (!live) return { status: 'not-measured', label: 'not measured', reason: 'Offline: the rules alone, without the data or the server.' };
  return live.measurement ?? { status: 'not-measured', label: 'not measured', reason: 'The suggestions were not measured on the server.' };
}

function entryJson(e: TournamentEntry | undefined): Record<string, unknown> | null {
  if (!e) return null;
  const ix = e.index;
  const m = e.measured;
  return {
    label: e.label,
    origin: e.origin,
    index: ix === undefined ? null : ix.engine === 'mongodb' ? { collection: ix.collection, keyPattern: ix.keyPattern } : { table: ix.table, schema: ix.schema ?? null, text: indexLabel(ix) },
    createIndex: e.createText ?? null,
    existing: e.existing ?? null,
    rule: e.rule ?? null,
    ruleRank: e.ruleRank ?? null,
    work: m?.work ?? null,
    scaledWork: e.scaledWork ?? null,
    measured: m ?? null,
    error: e.error ?? null,
  };
}

function measurementJson(live: LiveAdvice | undefined): Record<string, unknown> {
  const m = measurementOf(live);
  if (m.status === 'not-measured') return { status: m.status, label: m.label, reason: m.reason };
  const t = m.tournament;
  return {
    status: m.status,
    label: m.label,
    unit: t.unit,
    sample: t.sample,
    generated: t.generated,
    tried: t.tried,
    today: t.today ?? null,
    plannerChoice: t.plannerChoice ?? null,
    winner: entryJson(t.winner),
    runnerUp: entryJson(t.runnerUp),
    verdict: t.verdict,
    overturned: t.overturned ?? null,
    ranking: t.ranking.map(entryJson),
  };
}

function suggestionJson(s: Suggestion): Record<string, unknown> {
  const out: Record<string, unknown> = { rank: s.rank, action: s.action, rule: s.rule };
  const ix = s.index;
  if (ix?.engine === 'mongodb') {
    out['collection'] = ix.collection;
    out['keyPattern'] = ix.keyPattern;
  } else if (ix?.engine === 'postgres') {
    out['table'] = ix.table;
    out['schema'] = ix.schema ?? null;
    out['method'] = ix.method;
    out['columns'] = ix.keys.map((k) => ({
      column: k.column,
      expression: k.expression === true,
      direction: k.desc ? 'desc' : 'asc',
      nulls: (k.nullsFirst ?? !!k.desc) ? 'first' : 'last',
    }));
    out['include'] = ix.include ?? [];
  }
  out['createIndex'] = s.createText ?? null;
  out['keep'] = s.keep ?? null;
  out['replaces'] = s.replaces ?? [];
  out['servesQueryAsWritten'] = s.servesQueryAsWritten;
  out['ruleText'] = s.ruleText;
  out['expectedPlan'] = s.expectedPlan;
  out['tradeOff'] = s.tradeOff;
  out['conditions'] = s.conditions.map((c) => ({
    text: c.text,
    quantity: c.quantity,
    threshold: c.threshold ?? null,
    observed: c.observed ?? null,
    decided: c.decided ?? null,
  }));
  out['rewrites'] = s.rewrites.map((r) => ({ rule: r.rule, text: r.text, parameters: r.parameters ?? [] }));
  out['estimate'] = s.estimate ?? null;
  out['verification'] = s.verification;
  return out;
}

// ---- text ---------------------------------------------------------------------------------------------

function indexText(s: Suggestion): string {
  const ix = s.index;
  if (!ix) return '';
  if (ix.engine === 'mongodb') return `{${(ix as MongoIndexSpec).keys.map((k) => `${/^[A-Za-z_$][\w$]*$/.test(k.field) ? k.field : JSON.stringify(k.field)}: ${k.direction}`).join(', ')}}`;
  const p = ix as PgIndexSpec;
  return `${p.table} (${p.keys.map((k) => `${k.column}${k.desc ? ' DESC' : ''}`).join(', ')})${p.include ? ` INCLUDE (${p.include.join(', ')})` : ''}`;
}

function headline(s: Suggestion): string {
  if (s.action === 'keep' && s.keep) return `Keep using ${s.keep.name} ${indexText(s)}`;
  if (s.action === 'none') return 'No new index: a full scan reads less';
  return s.createText ?? `Create ${indexText(s)}`;
}

const wrap = (label: string, text: string): string => `   ${label}: ${text}\n`;

export function adviceText(advice: Advice, live: LiveAdvice | undefined, hints: string[] = [], rulesOnly?: RulesOnly): string {
  const engine = advice.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL';
  const where = live ? `${engine} ${live.serverVersion}, ${live.existingIndexes.length} existing index${live.existingIndexes.length === 1 ? '' : 'es'}` : `${engine}, offline`;
  let out = `Index advice for ${advice.shapes.map((s) => s.target).join(', ') || 'the query'} (${where})\n`;
  const m = measurementOf(live);
  if (m.status === 'measured') {
    const t = m.tournament;
    out += `Measured: ${t.tried} candidate${t.tried === 1 ? '' : 's'} (of ${t.generated} generated) ${t.label}.\n`;
    if (t.today) out += `Today: ${workText(t.today)} (${t.today.plan}).\n`;
    if (t.plannerChoice !== undefined) out += `The planner's own choice with every candidate built: ${t.plannerChoice}.\n`;
  } else {
    // A trial on a sample is said as one ("Tried on a sample of 1,000 documents: ..."), never as "Not measured".
    const head = m.label === 'not measured' ? 'Not measured' : m.label.charAt(0).toUpperCase() + m.label.slice(1);
    out += `${head}: ${m.reason}\n`;
  }
  if (rulesOnly) out += `${rulesOnly.text} ${rulesOnly.howToMeasure}\n`;
  out += '\n';
  if (advice.suggestions.length === 0) out += live?.notIndexable !== undefined ? `No suggestion: ${live.notIndexable}\n` : 'No suggestion: nothing in the query can use an index.\n';
  for (const s of advice.suggestions) {
    out += `${s.rank}. ${headline(s)}\n`;
    out += wrap(`Why (${s.rule})`, s.action === 'keep' && s.keep ? s.keep.reason : s.ruleText);
    if (s.expectedPlan) out += wrap('Expected plan', s.expectedPlan);
    out += wrap('Trade-off', s.tradeOff);
    if (!s.servesQueryAsWritten) out += wrap('Note', 'this index serves the rewritten query below, not the query as written.');
    for (const c of s.conditions) out += wrap(c.decided ? `Condition (${c.decided === 'below' ? 'met' : 'not met'}, observed ${c.observed !== undefined ? formatCount(c.observed) : '?'})` : 'Condition', c.text);
    for (const r of s.rewrites) out += wrap(`Rewrite (${r.rule})`, `${r.description}\n${indent(r.text, 6)}`);
    const v = s.verification;
    out += wrap('Verification', v.status === 'not-run' ? (rulesOnly ? "not run: the rules' verdict only" : 'not run') : `${v.status}: ${v.message}`);
    out += '\n';
  }
  const listed = new Set(advice.suggestions.flatMap((s) => s.rewrites.map((r) => r.text)));
  for (const r of advice.rewrites.filter((x) => !listed.has(x.text))) out += `Rewrite (${r.rule}): ${r.description}\n${indent(r.text, 3)}\n\n`;
  if (advice.writeCost) out += `Write cost: ${advice.writeCost}\n`;
  for (const n of [...advice.notes, ...hints]) out += `note: ${n}\n`;
  for (const w of advice.warnings) out += `warning: ${w}\n`;
  return out;
}

function indent(text: string, n: number): string {
  return text.split('\n').map((l) => `${' '.repeat(n)}${l}`).join('\n');
}
