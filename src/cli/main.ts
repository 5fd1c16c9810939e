// `qpi`: the command-line front end over core (+ adapters for live servers).
// Exit codes: 0 analysed, 2 refused or a database error (one sentence on stderr), 64 usage error.
// Anything else (a stack trace, exit 1) is a bug.

import { readFileSync } from 'node:fs';
import { analyze, loadPlan } from '../core/index';
import { jsonReport, textReport } from './report';

const USAGE = `Usage:
  qpi analyze FILE|- [--json]          read a saved MongoDB or PostgreSQL explain output and report on it
  qpi explain --uri URI --query TEXT [--json] [--verbosity queryPlanner|executionStats|allPlansExecution]
              [--analyze] [--buffers] [--timeout-ms N]
                                       explain a query on a live server (mongodb:// or postgres:// URI)
  qpi advise --query TEXT [--uri URI] [--engine mongodb|postgres] [--json] [--verify] [--sample N]
             [--allow-build] [--exact-counts] [--timeout-ms N]
                                       index advice; with --uri it uses the existing indexes, the data's
                                       selectivity, and verifies on the server
  qpi compare BEFORE AFTER [--json]    compare two saved explain outputs of one query: nodes matched,
                                       what changed, the figures before and after, and a verdict
  qpi help                             this text
`;

export const EXIT_OK = 0;
export const EXIT_REFUSED = 2;
export const EXIT_USAGE = 64;

interface Io {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  readStdin: () => string;
  readFile: (path: string) => string;
}

/**
 * Text from a plan or a server (index names, filters, error messages) reaches a terminal: control
 * characters are written as visible \uXXXX escapes so none of them can move the cursor, clear the
 * screen or retitle the window. Inside JSON strings the escape reads back as the same character.
 */
export function inert(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const processIo: Io = {
  stdout: (s) => process.stdout.write(inert(s)),
  stderr: (s) => process.stderr.write(inert(s)),
  readStdin: () => readFileSync(0, 'utf8'),
  readFile: (p) => readFileSync(p, 'utf8'),
};

function parseFlags(args: string[]): { positional: string[]; flags: Map<string, string | true> } | string {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  const valued = new Set(['--uri', '--query', '--verbosity', '--timeout-ms', '--engine', '--sample']);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(0, eq) : a;
      if (valued.has(name)) {
        const v = eq > 0 ? a.slice(eq + 1) : args[++i];
        if (v === undefined) return `${name} needs a value.`;
        flags.set(name, v);
      } else if (['--json', '--analyze', '--buffers', '--settings', '--allow-write-stages', '--verify', '--allow-build', '--exact-counts'].includes(name)) flags.set(name, true);
      else return `Unknown option ${name}.`;
    } else positional.push(a);
  }
  return { positional, flags };
}

export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
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
      let text: string;
      try {
        text = file === '-' ? io.readStdin() : io.readFile(file);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        io.stderr(`${code === 'ENOENT' ? `There is no file ${file}.` : code === 'EISDIR' ? `${file} is a folder, not a plan file.` : `${file} could not be read (${code ?? 'unknown error'}).`}\n`);
        return EXIT_REFUSED;
      }
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
      return runCompare(positional, flags.has('--json'), io);
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

/** Loads, analyses and prints; shared by `analyze` and `explain`. */
export function report(text: string, source: string | undefined, json: boolean, io: Io): number {
  const loaded = loadPlan(text);
  if (!loaded.ok) {
    io.stderr(`${loaded.refusal}\n`);
    return EXIT_REFUSED;
  }
  const findings = analyze(loaded.plan);
  if (json) io.stdout(JSON.stringify(jsonReport(loaded.plan, findings), null, 2) + '\n');
  else io.stdout(textReport(loaded.plan, findings, source));
  return EXIT_OK;
}

export type { Io };

if (require.main === module) {
  run(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`qpi failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
