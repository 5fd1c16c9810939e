// `qpi explain --uri URI --query TEXT`: explain on a live server through the adapters, then report on
// the plan exactly like `qpi analyze`. The password may come from the URI or from QPI_PASSWORD (so it
// stays out of shell history); it never appears in any output.

import { explainMongo } from '../adapters/mongodb';
import { explainPostgres } from '../adapters/postgres';
import { isAdapterError } from '../adapters/errors';
import type { ExplainResult } from '../adapters/types';
import { parseMongoQuery, type ExplainVerbosity } from '../core/index';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, type Io } from './io';
import { report } from './report';

const VERBOSITIES: readonly ExplainVerbosity[] = ['queryPlanner', 'executionStats', 'allPlansExecution'];

export function engineOfUri(uri: string): 'mongodb' | 'postgres' | undefined {
  if (/^mongodb(\+srv)?:\/\//i.test(uri)) return 'mongodb';
  if (/^postgres(ql)?:\/\//i.test(uri)) return 'postgres';
  return undefined;
}

/** Largest time limit both servers and Node timers accept: 2^31-1 ms (about 24.8 days). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** --timeout-ms as a number, or the usage sentence when it is not a whole number of ms in 1..2^31-1. */
export function timeoutOf(flags: Map<string, string | true>): number | string {
  const raw = flags.get('--timeout-ms');
  if (raw === undefined) return 30_000;
  const n = typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_TIMEOUT_MS) return `--timeout-ms must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}.`;
  return n;
}

/** The adapter's sentence with what the user can do about it, still one sentence. */
function withSideEffectsHint(message: string, analyze: boolean): string {
  const hint = analyze ? 'give --allow-side-effects to run it anyway, or leave out --analyze' : 'give --allow-side-effects to explain it anyway';
  return `${message.replace(/\.$/, '')}; ${hint}.`;
}

/**
 * Aborts `abort` on SIGINT, SIGTERM or SIGHUP (once: a second signal ends the process as usual), so that
 * the adapters cancel on the server before qpi exits. Returns the function that removes the handlers.
 */
export function onStopSignals(abort: AbortController): () => void {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const stop = (): void => {
    for (const sig of signals) process.removeListener(sig, stop);
    abort.abort();
  };
  for (const sig of signals) process.on(sig, stop);
  return () => {
    for (const sig of signals) process.removeListener(sig, stop);
  };
}

export async function runExplain(flags: Map<string, string | true>, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const uri = flags.get('--uri');
  const query = flags.get('--query');
  if (typeof uri !== 'string' || typeof query !== 'string') {
    io.stderr('qpi explain needs --uri URI and --query TEXT.\n');
    return EXIT_USAGE;
  }
  const engine = engineOfUri(uri);
  if (engine === undefined) {
    io.stderr('The URI must start with mongodb://, mongodb+srv://, postgres:// or postgresql://.\n');
    return EXIT_USAGE;
  }
  const timeoutMs = timeoutOf(flags);
  if (typeof timeoutMs === 'string') {
    io.stderr(`${timeoutMs}\n`);
    return EXIT_USAGE;
  }
  const password = env.QPI_PASSWORD || undefined;
  // Ctrl-C, SIGTERM and SIGHUP stop the work on the server, not only the wait.
  const abort = new AbortController();
  const stopOnSignal = onStopSignals(abort);
  let result: ExplainResult;
  try {
    if (engine === 'mongodb') {
      const parsed = parseMongoQuery(query);
      if (!parsed.ok) {
        io.stderr(`${parsed.error}\n`);
        return EXIT_REFUSED;
      }
      const v = flags.get('--verbosity');
      if (v !== undefined && !VERBOSITIES.includes(v as ExplainVerbosity)) {
        io.stderr(`--verbosity must be one of ${VERBOSITIES.join(', ')}.\n`);
        return EXIT_USAGE;
      }
      result = await explainMongo(
        { uri, ...(password ? { password } : {}), appName: 'qpi' },
        parsed.command,
        { timeoutMs, signal: abort.signal, allowWrites: flags.has('--allow-write-stages'), ...(v ? { verbosity: v as ExplainVerbosity } : {}) },
      );
    } else {
      result = await explainPostgres({ uri, ...(password ? { password } : {}), applicationName: 'qpi' }, query, {
        analyze: flags.has('--analyze'),
        buffers: flags.has('--buffers'),
        settings: flags.has('--settings'),
        timeoutMs,
        signal: abort.signal,
        allowSideEffects: flags.has('--allow-side-effects'),
      });
    }
  } catch (err) {
    if (isAdapterError(err)) {
      io.stderr(`${err.kind === 'side-effects' ? withSideEffectsHint(err.message, flags.has('--analyze')) : err.message}\n`);
      return EXIT_REFUSED;
    }
    throw err;
  } finally {
    stopOnSignal();
  }
  for (const note of result.notes) io.stderr(`note: ${note}\n`);
  const code = report(result.rawText, `${engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'} ${result.serverVersion}`, flags.has('--json'), io);
  return code === EXIT_OK ? EXIT_OK : code;
}
