// The Gateway backed by the database adapters (src/adapters). Loaded lazily by main.ts on the first
// command that needs a server (or when the extension warms it), so activation never loads a driver. One
// advice session per explain: it explains, hands the plan over, runs the live advisor
// (src/adapters/advise.ts: the indexes that exist, bounded selectivity) and closes. Verification opens its own session when the user asks for it from the panel, on the advice
// the panel shows. Cancel aborts the running operation, which the adapters turn into a kill on the server
// (pg_cancel_backend / killOp); a MongoDB trial's scratch collection is dropped anyway.

import type { LiveAdvice } from '../adapters/advise';
import type { AdviceService } from '../adapters/adviceService';
import type { ExplainResult } from '../adapters/types';
import type { FamilyMember, Suggestion } from '../core/index';
import { suggestionsToTry } from './adviceView';
import { UserError } from './commands';
import type { AdviceOutcome, ExplainOutcome, ExplainRequest, FamilyRequest, Gateway, RunningExplain, RunningVerify, ServerInfo, VerifyOutcome, VerifyRequest } from './gateway';
import type { Log } from './log';

/** Turns an adapter result into what the extension shows; a plan the core refuses is one sentence. */
function outcomeOf(result: ExplainResult): ExplainOutcome {
  if (!result.load.ok) throw new UserError(result.load.refusal);
  const outcome: ExplainOutcome = {
    plan: result.load.plan, rawText: result.rawText, durationMs: result.durationMs, rolledBack: result.rolledBack && result.writes, notes: result.notes,
  };
  // PostgreSQL prints "15.20 (Debian 15.20-0+deb12u1)": the number is what a list has room for.
  if (result.serverVersion) outcome.serverVersion = result.serverVersion.split(' ')[0]!;
  return outcome;
}

/**
 * The live advice after an explain. Advice must not cost the user the plan: a failure becomes one
 * sentence beside it, except a cancel, which stops the whole command.
 */
async function adviceAfter(log: Log, signal: AbortSignal, advise: () => Promise<LiveAdvice>): Promise<AdviceOutcome> {
  const t0 = performance.now();
  try {
    return { advice: await advise(), adviseMs: performance.now() - t0 };
  } catch (err) {
    if (signal.aborted) throw err;
    const sentence = err instanceof Error ? err.message.split('\n')[0]!.trim() : String(err);
    const adviceError = /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
    log.warn(`No index advice: ${adviceError}`);
    return { adviceError, adviseMs: performance.now() - t0 };
  }
}

/**
 * Runs one explain session: the plan settles `done` as soon as it exists; the advice runs on after it on
 * the same session, which closes when the advice is in (or the explain failed).
 */
function planThenAdvice<S extends { close(): Promise<void> }>(
  log: Log, signal: AbortSignal, open: () => Promise<S>, explain: (session: S) => Promise<ExplainResult>, advise: (session: S) => Promise<LiveAdvice>,
): { done: Promise<ExplainOutcome>; advice: Promise<AdviceOutcome> } {
  let adviceDone!: (a: Promise<AdviceOutcome>) => void;
  const advice = new Promise<AdviceOutcome>((resolve) => (adviceDone = resolve));
  const done = (async () => {
    const t = stepClock();
    const session = await open();
    t.lap('connectMs');
    let outcome: ExplainOutcome;
    try {
      outcome = outcomeOf(await explain(session));
      t.lap('explainMs');
      outcome.steps = t.steps;
    } catch (err) {
      await session.close();
      throw err;
    }
    adviceDone(adviceAfter(log, signal, () => advise(session)).finally(() => session.close()));
    return outcome;
  })();
  // An explain that failed has no advice: the same error, for whoever waits on both.
  done.catch((err: unknown) => adviceDone(Promise.reject(err)));
  advice.catch(() => undefined);
  return { done, advice };
}

/** Times the steps of one explain, each from the end of the one before. */
function stepClock(): { steps: NonNullable<ExplainOutcome['steps']>; lap(step: keyof NonNullable<ExplainOutcome['steps']>): void } {
  let last = performance.now();
  const steps = { connectMs: 0, explainMs: 0 };
  return {
    steps,
    lap(step) {
      const now = performance.now();
      steps[step] = now - last;
      last = now;
    },
  };
}

/** The PostgreSQL suggestion whose index a check builds: itself, or for "no new index" the next index it is weighed against. */
function indexChecked(live: LiveAdvice, s: Suggestion): Suggestion | undefined {
  if (s.action === 'create') return s;
  if (s.action === 'none') return live.advice.suggestions.find((x) => x.rank > s.rank && x.action === 'create' && x.servesQueryAsWritten && x.createText && x.index?.engine === 'postgres');
  return undefined;
}

/** `advice` is the extension's one advice service: the panel's suggestions come from it, like the lenses'. */
export function createGateway(log: Log, advice: AdviceService): Gateway {
  return {
    async test(engine, uri, connectTimeoutMs): Promise<ServerInfo> {
      if (engine === 'postgres') {
        const pg = await import('../adapters/postgres');
        const conn = await pg.connectPostgres({ uri, connectTimeoutMs });
        try {
          const hypo = await conn.hypopg().catch(() => undefined);
          const info: ServerInfo = { serverVersion: conn.serverVersion.split(' ')[0]! };
          if (hypo?.installed) info.detail = 'HypoPG is installed: suggested indexes are checked without building them';
          return info;
        } finally {
          await conn.close();
        }
      }
      const mongo = await import('../adapters/mongodb');
      const conn = await mongo.connectMongo({ uri, connectTimeoutMs });
      try {
        return { serverVersion: conn.server.version, detail: conn.server.detail };
      } finally {
        await conn.close();
      }
    },

    async familyCollections(request: FamilyRequest): Promise<FamilyMember[]> {
      const mongo = await import('../adapters/mongodb');
      const conn = await mongo.connectMongo({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs });
      try {
        return await conn.familyCollections(request.family, request.database);
      } finally {
        await conn.close();
      }
    },

    explain(request: ExplainRequest): RunningExplain {
      const controller = new AbortController();
      const signal = controller.signal;
      const timeoutMs = request.timeoutMs;
      let running: { done: Promise<ExplainOutcome>; advice: Promise<AdviceOutcome> };
      // One session per explain: the adapter's connection explains, then the live advisor reads the
      // indexes and bounded counts on the same session after the plan is handed over; Cancel aborts
      // whichever runs.
      if (request.engine === 'postgres') {
        running = planThenAdvice(
          log, signal,
          () => import('../adapters/advise').then((adv) => adv.openPostgresAdvice({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs, timeoutMs, signal })),
          (session) => session.conn.explain(request.text, { analyze: request.analyze, buffers: request.buffers, timeoutMs, signal, allowSideEffects: request.allowSideEffects === true }),
          (session) => advice.postgres(session, request.text, { connection: request.connectionId, options: { timeoutMs, signal } }),
        );
      } else {
        const command = request.command;
        if (!command) throw new Error('a MongoDB explain request needs its parsed command');
        running = planThenAdvice(
          log, signal,
          () => import('../adapters/advise').then((adv) => adv.openMongoAdvice({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs, signal })),
          (session) => session.conn.explain(command, { verbosity: request.verbosity, timeoutMs, signal, allowWrites: request.allowWrites }),
          (session) => advice.mongo(session, command, { connection: request.connectionId, options: { timeoutMs, signal } }),
        );
      }
      return {
        ...running,
        cancel: async () => {
          controller.abort();
        },
      };
    },

    verify(request: VerifyRequest): RunningVerify {
      const controller = new AbortController();
      const signal = controller.signal;
      const live = request.live;
      const asked = live.advice.suggestions.find((x) => x.rank === request.rank);
      // In measured order: the panel is sent the new list (setSuggestions), and the lens and squiggle
      // read the same cached answer, so every face shows the measured verdict first.
      const opts = { timeoutMs: request.timeoutMs, signal, measuredOrder: true, ...(asked ? { maxSuggestions: suggestionsToTry(live.advice, asked) } : {}) };
      // The notes and warnings of this run are those added to the advice while it ran.
      const since = { notes: live.advice.notes.length, warnings: live.advice.warnings.length };
      const outcome = (declined: boolean): VerifyOutcome => ({
        declined, notes: live.advice.notes.slice(since.notes), warnings: live.advice.warnings.slice(since.warnings),
      });
      const done = import('../adapters/advise').then(async (adv): Promise<VerifyOutcome> => {
        if (request.engine === 'mongodb') {
          const command = request.command;
          if (!command) throw new Error('a MongoDB verify request needs its parsed command');
          const session = await adv.openMongoAdvice({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs });
          try {
            await advice.verifyMongo(session, command, live, { ...opts, sampleSize: request.sampleSize, ...(request.onStep ? { onTrialStep: request.onStep } : {}) });
            return outcome(false);
          } finally {
            await session.close();
          }
        }
        const session = await adv.openPostgresAdvice({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs, timeoutMs: request.timeoutMs });
        try {
          // The tournament first: it builds only on temporary copies, so it needs nobody's consent.
          await advice.verifyPostgres(session, request.text, live, { ...opts, fallback: false });
          if (live.measurement?.status === 'measured') return outcome(false);
          // Where it cannot run, the planner's check: hypothetical, or a build on the table after asking.
          const target = asked ? indexChecked(live, asked) : undefined;
          let allowBuild = false;
          if (target?.index?.engine === 'postgres') {
            const hypo = await session.conn.hypopg();
            // HypoPG simulates btree indexes only; anything else is checked by building it, after asking.
            if (!(hypo.installed && target.index.method === 'btree')) {
              allowBuild = (await request.confirmBuild?.([target.index.table], hypo.installed)) === true;
              if (!allowBuild) return outcome(true);
            }
          }
          await advice.verifyPostgres(session, request.text, live, { ...opts, measure: false, allowBuild });
          return outcome(false);
        } finally {
          await session.close();
        }
      });
      return { done, cancel: () => controller.abort() };
    },
  };
}
