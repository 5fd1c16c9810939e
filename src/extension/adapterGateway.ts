// The Gateway backed by the database adapters (src/adapters). Loaded lazily by main.ts on the first
// command that needs a server (or when the extension warms it), so activation never loads a driver. One
// advice session per connection, kept open between Explains (connections/sessions.ts): an Explain explains
// on it, hands the plan over, runs the live advisor (src/adapters/advise.ts: the indexes that exist,
// bounded selectivity) and gives it back. A measurement (Verify) opens its own session when the user asks for it from the panel, on the advice
// the panel shows. Cancel aborts the running operation, which the adapters turn into a kill on the server
// (pg_cancel_backend / killOp); a MongoDB trial's scratch collection is dropped anyway.

import type { LiveAdvice, MongoAdviceSession, PostgresAdviceSession } from '../adapters/advise';
import type { AdviceService } from '../adapters/adviceService';
import type { ExplainResult } from '../adapters/types';
import type { FamilyMember, Suggestion } from '../core/index';
import { suggestionsToTry } from './adviceView';
import { UserError } from './commands';
import { explainSessions, explainFingerprint, keepsSession, lostConnection, openExplainSession, type ExplainSession, type SessionLease } from './connections/sessions';
import type { AdviceOutcome, ExplainOutcome, ExplainRequest, FamilyRequest, Gateway, RunningExplain, RunningMeasure, ServerInfo, MeasureOutcome, MeasureRequest } from './gateway';
import type { Log } from './log';

/** Turns an adapter result into what the extension shows; a plan the core refuses is one sentence. */
function outcomeOf(result: ExplainResult): ExplainOutcome {
  if (!result.load.ok) throw new UserError(result.load.refusal);
  const outcome: ExplainOutcome = {
    plan: result.load.plan, rawText: result.rawText, durationMs: result.durationMs, rolledBack: result.rolledBack && result.writes, notes: result.notes,
  };
  // PostgreSQL prints "15.20 (Debian 15.20-0+deb12u1)": the number is what a list has room for.
  if (result.serverVersion) outcome.serverVersion = result.serverVersion.split(' ')[0]!;
  if (result.phases) outcome.phases = result.phases;
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
 * Runs one explain on the connection's kept session (sessions.ts): the plan settles `done` as soon as it
 * exists; the advice runs on after it on the same session once `planShown` has settled. The session goes
 * back to be kept when both went well (and is closed otherwise). A kept session whose connection turns out
 * lost is replaced once by a new one when sending the explain again changes nothing the first could have
 * (`resend`).
 */
function planThenAdvice<S extends ExplainSession>(
  log: Log, signal: AbortSignal, lease: (fresh: boolean) => Promise<SessionLease<S>>, explain: (session: S) => Promise<ExplainResult>, advise: (session: S) => Promise<LiveAdvice>, resend: boolean,
  planShown: Promise<void>,
): { done: Promise<ExplainOutcome>; advice: Promise<AdviceOutcome> } {
  let adviceDone!: (a: Promise<AdviceOutcome>) => void;
  const advice = new Promise<AdviceOutcome>((resolve) => (adviceDone = resolve));
  const done = (async () => {
    const t = stepClock();
    let held = await lease(false);
    t.lap('connectMs');
    let outcome: ExplainOutcome;
    for (;;) {
      try {
        outcome = outcomeOf(await explain(held.session));
        break;
      } catch (err) {
        const again = held.reused && resend && lostConnection(err) && !signal.aborted;
        held.release(!again && keepsSession(err));
        if (!again) throw err;
        log.info('The kept connection was lost; explaining on a new one.');
        held = await lease(true);
      }
    }
    t.lap('explainMs');
    outcome.steps = t.steps;
    const session = held;
    adviceDone(planShown.then(() => adviceAfter(log, signal, () => advise(session.session))).then(
      (a) => (session.release(a.adviceError === undefined && !signal.aborted), a),
      (err: unknown) => (session.release(false), Promise.reject(err)),
    ));
    return outcome;
  })();
  // An explain that failed has no advice: the same error, for whoever waits on both.
  done.catch((err: unknown) => adviceDone(Promise.reject(err)));
  advice.catch(() => undefined);
  return { done, advice };
}

/** Lends the connection's kept session, or opens one (`fresh`: a new one, the kept one having been lost). */
function leaseOf<S extends ExplainSession>(connectionId: string, print: string, open: () => Promise<S>): (fresh: boolean) => Promise<SessionLease<S>> {
  return (fresh) => {
    if (fresh) explainSessions.forget(connectionId);
    return explainSessions.acquire(connectionId, print, open);
  };
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

    explain(request: ExplainRequest, planShown: Promise<void> = Promise.resolve()): RunningExplain {
      const controller = new AbortController();
      const signal = controller.signal;
      const timeoutMs = request.timeoutMs;
      let running: { done: Promise<ExplainOutcome>; advice: Promise<AdviceOutcome> };
      // The connection's kept session: the adapter's connection explains, then the live advisor reads
      // the indexes and bounded counts on the same session after the plan is handed over; Cancel aborts
      // whichever runs.
      const print = explainFingerprint(request);
      if (request.engine === 'postgres') {
        running = planThenAdvice(
          log, signal,
          leaseOf(request.connectionId, print, () => openExplainSession(request, signal) as Promise<PostgresAdviceSession>),
          (session) => session.conn.explain(request.text, { analyze: request.analyze, buffers: request.buffers, timeoutMs, signal, allowSideEffects: request.allowSideEffects === true }),
          (session) => advice.postgres(session, request.text, { connection: request.connectionId, options: { timeoutMs, signal } }),
          // Sent again only when nothing of it ran beyond the rollback.
          request.allowSideEffects !== true,
          planShown,
        );
      } else {
        const command = request.command;
        if (!command) throw new Error('a MongoDB explain request needs its parsed command');
        running = planThenAdvice(
          log, signal,
          leaseOf(request.connectionId, print, () => openExplainSession(request, signal) as Promise<MongoAdviceSession>),
          (session) => session.conn.explain(command, { verbosity: request.verbosity, timeoutMs, signal, allowWrites: request.allowWrites }),
          (session) => advice.mongo(session, command, { connection: request.connectionId, options: { timeoutMs, signal } }),
          // A pipeline that writes is not run twice.
          request.allowWrites !== true,
          planShown,
        );
      }
      return {
        ...running,
        cancel: async () => {
          controller.abort();
        },
      };
    },

    measure(request: MeasureRequest): RunningMeasure {
      const controller = new AbortController();
      const signal = controller.signal;
      const live = request.live;
      const asked = live.advice.suggestions.find((x) => x.rank === request.rank);
      // In measured order: the panel is sent the new list (setSuggestions), and the lens and squiggle
      // read the same cached answer, so every face shows the measured verdict first.
      const opts = { timeoutMs: request.timeoutMs, signal, measuredOrder: true, ...(asked ? { maxSuggestions: suggestionsToTry(live.advice, asked) } : {}) };
      // The notes and warnings of this run are those added to the advice while it ran.
      const since = { notes: live.advice.notes.length, warnings: live.advice.warnings.length };
      const outcome = (declined: boolean): MeasureOutcome => ({
        declined, notes: live.advice.notes.slice(since.notes), warnings: live.advice.warnings.slice(since.warnings),
      });
      const done = import('../adapters/advise').then(async (adv): Promise<MeasureOutcome> => {
        if (request.engine === 'mongodb') {
          const command = request.command;
          if (!command) throw new Error('a MongoDB measure request needs its parsed command');
          const session = await adv.openMongoAdvice({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs });
          try {
            await advice.measureMongo(session, command, live, { ...opts, sampleSize: request.sampleSize, ...(request.onStep ? { onStep: request.onStep } : {}) });
            return outcome(false);
          } finally {
            await session.close();
          }
        }
        const session = await adv.openPostgresAdvice({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs, timeoutMs: request.timeoutMs });
        try {
          // The tournament first: it builds only on temporary copies, so it needs nobody's consent.
          await advice.measurePostgres(session, request.text, live, { ...opts, fallback: false });
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
          await advice.measurePostgres(session, request.text, live, { ...opts, estimatesOnly: true, allowBuild });
          return outcome(false);
        } finally {
          await session.close();
        }
      });
      return { done, cancel: () => controller.abort() };
    },
  };
}
