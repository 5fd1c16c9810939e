// `qpi stats export --uri PROD > stats.json` and `qpi stats import --uri CI stats.json`: a production
// database's planner statistics carried into a CI database (PostgreSQL 18), so `qpi check` plans there as
// production does. Export only reads; import writes statistics and nothing else, and running it is the
// user's consent to that write (src/adapters/statsTransfer.ts). Exit codes: 0 done, 2 refused (a server
// before 18, a file that is not a statistics file, a database error), 64 a usage error.

import { writeFileSync } from 'node:fs';
import { isAdapterError } from '../adapters/errors';
import { exportPgStats, importPgStats, parseStatsFile, scaleWarning } from '../adapters/statsTransfer';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, readOrSay, strictFlags, type Io } from './io';

export const STATS_USAGE = `  qpi stats export --uri URI [--schema NAME]... [--table NAME]... [--out FILE] [--timeout-ms N]
                                       a PostgreSQL database's planner statistics (pg_class, pg_stats)
                                       as JSON, on standard output or in FILE; it holds production
                                       values (most common values, histogram bounds)
  qpi stats import --uri URI FILE [--match-pages] [--json] [--timeout-ms N]
                                       writes them into a CI database (PostgreSQL 18 and later:
                                       pg_restore_relation_stats, pg_restore_attribute_stats) and
                                       nothing else; warns where the CI table's real size makes the
                                       planner scale them; --match-pages writes the CI tables' own page
                                       counts so the planner keeps production's row estimates
`;

function usage(io: Io, sentence: string): number {
  io.stderr(`${sentence}\nUsage:\n${STATS_USAGE}`);
  return EXIT_USAGE;
}

export async function runStats(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb !== 'export' && verb !== 'import') return usage(io, verb === undefined ? 'qpi stats needs export or import.' : `Unknown qpi stats command ${verb}.`);
  const parsed = strictFlags(rest, {
    uri: { type: 'string' },
    schema: { type: 'string', multiple: true },
    table: { type: 'string', multiple: true },
    out: { type: 'string' },
    'match-pages': { type: 'boolean' },
    json: { type: 'boolean' },
    'timeout-ms': { type: 'string' },
  });
  if (typeof parsed === 'string') return usage(io, parsed);
  const v = parsed.values;
  if (v.uri === undefined) return usage(io, `qpi stats ${verb} needs --uri postgres://...`);
  if (!/^postgres(ql)?:\/\//i.test(v.uri)) return usage(io, 'Statistics are carried between PostgreSQL databases: --uri must start with postgres:// or postgresql://. MongoDB has no statistics to import; its planner tries plans on the data at hand.');
  let timeoutMs = 60_000;
  if (v['timeout-ms'] !== undefined) {
    timeoutMs = /^\d+$/.test(v['timeout-ms']) ? Number(v['timeout-ms']) : NaN;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2 ** 31 - 1) return usage(io, '--timeout-ms must be a whole number of milliseconds from 1 to 2147483647.');
  }
  const connect = { uri: v.uri, applicationName: `qpi stats ${verb}`, connectTimeoutMs: 10_000, timeoutMs, ...(env.QPI_PASSWORD ? { password: env.QPI_PASSWORD } : {}) };
  try {
    if (verb === 'export') {
      if (parsed.positionals.length > 0) return usage(io, 'qpi stats export takes no file: it writes to standard output, or to --out FILE.');
      if (v['match-pages']) return usage(io, '--match-pages is an option of qpi stats import.');
      const file = await exportPgStats({ ...connect, ...(v.schema ? { schemas: v.schema } : {}), ...(v.table ? { tables: v.table } : {}) });
      const text = `${JSON.stringify(file, null, 2)}\n`;
      if (v.out !== undefined) writeFileSync(v.out, text);
      else io.stdout(text);
      const columns = file.relations.reduce((n, r) => n + r.columns.length, 0);
      io.stderr(`Statistics of ${file.relations.length} relation${file.relations.length === 1 ? '' : 's'} and ${columns} column${columns === 1 ? '' : 's'} read from ${file.database} on PostgreSQL ${file.server}.${file.serverVersionNum < 180000 ? ' They can be imported into PostgreSQL 18 or later only.' : ''}\n`);
      return EXIT_OK;
    }
    const path = parsed.positionals[0];
    if (path === undefined || parsed.positionals.length > 1) return usage(io, 'qpi stats import takes one file written by qpi stats export (or - for standard input).');
    if (v.schema || v.table || v.out !== undefined) return usage(io, '--schema, --table and --out are options of qpi stats export.');
    const text = await readOrSay(io, path, { dashIsStdin: true });
    if (text === undefined) return EXIT_REFUSED;
    const file = parseStatsFile(text);
    if (!file.ok) {
      io.stderr(`${path}: ${file.error}\n`);
      return EXIT_REFUSED;
    }
    const report = await importPgStats({ ...connect, matchPages: v['match-pages'] === true }, file.file);
    const warnings = report.scaled.map(scaleWarning);
    if (v.json) io.stdout(`${JSON.stringify({ ...report, warnings }, null, 2)}\n`);
    for (const w of warnings) io.stderr(`warning: ${w}\n`);
    for (const n of report.notes) io.stderr(`${n}\n`);
    if (report.skipped.length > 0) io.stderr(`Skipped: ${report.skipped.join('; ')}.\n`);
    io.stderr(`Statistics of ${report.relations} relation${report.relations === 1 ? '' : 's'} and ${report.columns} column${report.columns === 1 ? '' : 's'} written into PostgreSQL ${report.server}${v['match-pages'] ? ', with the CI tables\' own page counts' : ''}. An ANALYZE of these tables, by hand or by autovacuum, replaces them: import after the CI data is loaded and analysed.\n`);
    return EXIT_OK;
  } catch (err) {
    if (!isAdapterError(err)) throw err;
    io.stderr(`${err.message}\n`);
    return EXIT_REFUSED;
  }
}
