// `qpi`: the command-line front end over core (+ adapters for live servers).
// Exit codes: 0 analysed, 2 refused or a database error (one sentence on stderr), 3 findings under
// `lint --fail-on-warning` and a failed `check` gate, 4 an environment problem under `check`, 64 usage error.
// Anything else (a stack trace, exit 1) is a bug.

import { parseArgs } from 'node:util';
import { endQuietlyOnClosedPipe, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, processIo, readOrSay, type Io } from './io';
import { report } from './report';

export type { Io } from './io';

const USAGE = `Usage:
  qpi analyze FILE|- [--json]          read a saved MongoDB or PostgreSQL explain output and report on it
  qpi explain --uri URI --query TEXT [--json] [--verbosity queryPlanner|executionStats|allPlansExecution]
              [--analyze] [--buffers] [--timeout-ms N] [--allow-side-effects] [--allow-write-stages]
                                       explain a query on a live server (mongodb:// or postgres:// URI)
  qpi advise --query TEXT [--uri URI] [--engine mongodb|postgres] [--json] [--verify] [--sample N]
             [--rules-only] [--allow-build] [--exact-counts] [--timeout-ms N]
                                       index advice; with --uri it uses the existing indexes and the
                                       data's selectivity, and measures the candidates on the server
                                       (PostgreSQL at once, MongoDB with --verify: it writes a scratch
                                       collection); --rules-only skips the measurement
  qpi compare BEFORE AFTER [--json]    compare two saved explain outputs of one query: nodes matched,
                                       what changed, the figures before and after, and a verdict
  qpi lint FILE... [--json] [--fail-on-warning] [--schema schema.prisma]
                                       the editor's inline advice on source files (.sql, .js/.ts,
                                       .mongodb.js) without a database; exit 3 with --fail-on-warning
                                       when a warning is found; Prisma calls use the tables and columns
                                       of --schema, else of the nearest prisma/schema.prisma above
  qpi check [PATH...] --uri URI [--uri URI] [--lock FILE] [--update] [--config FILE] [--sarif FILE]
            [--junit FILE] [--markdown FILE] [--json] [--timeout-ms N]
                                       the CI gate: every query under PATH explained on the CI
                                       database of its engine and compared with qpi.lock.json; exit 3
                                       when it fails, 4 on an environment problem (docs/cli.md)
  qpi stats export --uri URI [--schema NAME]... [--table NAME]... [--out FILE]
  qpi stats import --uri URI FILE [--match-pages] [--json]
                                       carry PostgreSQL planner statistics from production into a CI
                                       database (PostgreSQL 18), so qpi check plans there as production
  qpi help                             this text
`;

const VALUED = ['uri', 'query', 'verbosity', 'timeout-ms', 'engine', 'sample', 'schema'] as const;
const SWITCHES = ['json', 'analyze', 'buffers', 'settings', 'allow-write-stages', 'allow-side-effects', 'verify', 'rules-only', 'allow-build', 'exact-counts', 'fail-on-warning'] as const;
const OPTIONS = Object.fromEntries([
  ...VALUED.map((name) => [name, { type: 'string' as const }]),
  ...SWITCHES.map((name) => [name, { type: 'boolean' as const }]),
]);

/**
 * Flags by node's parseArgs. Its strict mode is not used because it refuses an option value that starts
 * with a dash (`--query "-- a comment\nSELECT ..."`); the tokens are checked here instead, with the same
 * sentences the commands have always printed. Short-dash words stay positional, as they always were.
 */
function parseFlags(args: string[]): { positional: string[]; flags: Map<string, string | true> } | string {
  const { tokens } = parseArgs({ args, options: OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  const shortSeen = new Set<number>();
  for (const t of tokens) {
    if (t.kind === 'positional') positional.push(t.value);
    else if (t.kind === 'option-terminator') continue;
    else if (!t.rawName.startsWith('--')) {
      if (!shortSeen.has(t.index)) positional.push(args[t.index]!);
      shortSeen.add(t.index);
    } else if ((VALUED as readonly string[]).includes(t.name)) {
      if (t.value === undefined) return `${t.rawName} needs a value.`;
      flags.set(t.rawName, t.value);
    } else if ((SWITCHES as readonly string[]).includes(t.name)) {
      if (t.inlineValue) return `${t.rawName} takes no value.`;
      flags.set(t.rawName, true);
    } else return `Unknown option ${t.rawName}.`;
  }
  return { positional, flags };
}

/** The commands `qpi COMMAND --help` prints the usage of. */
const COMMANDS = new Set(['analyze', 'explain', 'advise', 'compare', 'lint', 'check', 'stats']);

/** `--help` or `-h` among a command's arguments, before a `--` that ends the options. */
function asksHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== undefined && COMMANDS.has(command) && asksHelp(rest)) {
    // check and stats read their own options, and say them in full.
    if (command === 'check') io.stdout(`Usage:\n${(await import('./check/index')).CHECK_USAGE}`);
    else if (command === 'stats') io.stdout(`Usage:\n${(await import('./stats')).STATS_USAGE}`);
    else io.stdout(USAGE);
    return EXIT_OK;
  }
  // `check` reads its own options (--uri is given once per engine).
  if (command === 'check') return (await import('./check/index')).runCheck(rest, io);
  if (command === 'stats') return (await import('./stats')).runStats(rest, io);
  const parsed = parseFlags(rest);
  if (typeof parsed === 'string') {
    io.stderr(`${parsed}\n${USAGE}`);
    return EXIT_USAGE;
  }
  const { positional, flags } = parsed;
  switch (command) {
    case 'analyze': {
      const file = positional[0];
      if (file === undefined || positional.length > 1) {
        io.stderr(`qpi analyze takes one file (or - for standard input).\n${USAGE}`);
        return EXIT_USAGE;
      }
      const text = await readOrSay(io, file, { dashIsStdin: true });
      if (text === undefined) return EXIT_REFUSED;
      return report(text, file === '-' ? undefined : file, flags.has('--json'), io);
    }
    case 'explain': {
      const { runExplain } = await import('./explain');
      return runExplain(flags, io);
    }
    case 'advise': {
      if (positional.length > 0) {
        io.stderr(`qpi advise takes the query with --query, not as an argument.\n${USAGE}`);
        return EXIT_USAGE;
      }
      const { runAdvise } = await import('./advise');
      return runAdvise(flags, io);
    }
    case 'compare': {
      const { runCompare } = await import('./compare');
      return await runCompare(positional, flags.has('--json'), io);
    }
    case 'lint': {
      if (positional.length === 0) {
        io.stderr(`qpi lint takes one or more source files.\n${USAGE}`);
        return EXIT_USAGE;
      }
      const { runLint } = await import('./lint');
      const schema = flags.get('--schema');
      return runLint(positional, flags.has('--json'), flags.has('--fail-on-warning'), io, typeof schema === 'string' ? schema : undefined);
    }
    case 'help':
    case '--help':
    case '-h':
    case undefined:
      io.stdout(USAGE);
      return command === undefined ? EXIT_USAGE : EXIT_OK;
    default:
      io.stderr(`Unknown command ${command}.\n${USAGE}`);
      return EXIT_USAGE;
  }
}

if (require.main === module) {
  endQuietlyOnClosedPipe();
  run(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // The answer is written: a socket a driver still holds open (a server that never answered) must not
      // keep qpi waiting for it.
      setTimeout(() => process.exit(code), 500).unref();
    },
    (err: unknown) => {
      process.stderr.write(`qpi failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
