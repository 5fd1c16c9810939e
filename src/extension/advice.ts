// The plan panel's Verify, for both engines: the advice service measures the suggestions the panel shows
// (src/adapters/adviceService.ts). PostgreSQL measures every candidate on a copy, else checks with HypoPG
// when it is installed (nothing is built, nothing to ask), otherwise after a modal that asks to build
// inside a rolled-back transaction, since the build locks writes; MongoDB has no hypothetical indexes,
// so a modal asks before measuring on a sample (a random sample copied to a scratch collection on the
// same server, indexed, queried, dropped). Both run under a progress notification whose
// Cancel stops the work on the server. The verdict goes back to the panel as suggestionStatus messages,
// for every suggestion the run verified, with its figures.

import * as vscode from 'vscode';
import type { HostToViewMessage } from '../protocol/webview';
import {
  buildQuestion, findSuggestion, statusOf, suggestionId, suggestionViews, measureQuestion, measureStepText, unverifiableReason,
  type AdviceContext, type ConsentQuestion,
} from './adviceView';
import type { Gateway, RunningMeasure } from './gateway';
import type { Log } from './log';
import type { MeasureHow } from './planPanel';

/** Asks the user before the extension writes or builds on their server; true when they agreed. */
export type ConsentPrompt = (question: ConsentQuestion) => Promise<boolean>;

/** The modal a user answers; tests answer in its place through Prompts.consent. */
export const modalConsent: ConsentPrompt = async (q) =>
  (await vscode.window.showWarningMessage(q.message, { modal: true, detail: q.detail }, q.accept)) === q.accept;

export interface MeasurerSettings {
  sampleSize: number;
  timeoutMs: number;
  connectTimeoutMs: number;
}

export interface MeasurerSetup {
  log: Log;
  gateway: () => Promise<Gateway>;
  ctx: AdviceContext;
  /** Connection URI, password included; never logged. */
  uri: string;
  /** The query as written. */
  text: string;
  connectionName: string;
  /** Read at each Verify, so a changed setting applies without explaining again. */
  settings: () => MeasurerSettings;
  /** Read at each Verify, so tests can answer the modal. */
  consent: () => ConsentPrompt;
  /** The notification's Cancel, published while a verification runs (the extension handle presses it in tests). */
  running: { cancel?: () => void };
  /** Called when a verification gave verdicts (and perhaps a new order): the other faces show them. */
  measured?: () => void;
}

type Post = (m: HostToViewMessage) => void;

function sentence(text: string): string {
  const t = text.trim().split('\n')[0]!.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

const capital = (t: string): string => `${t[0]!.toUpperCase()}${t.slice(1)}`;

/** The panel's verify hook for the suggestions of one explain. */
export function measurer(setup: MeasurerSetup): (id: string, post: Post, how?: MeasureHow) => Promise<void> {
  const { log, ctx } = setup;
  const advice = ctx.live.advice;

  const postStatus = (post: Post, id: string): void => {
    const s = findSuggestion(advice, id);
    if (!s) return;
    const st = statusOf(s);
    post({ type: 'suggestionStatus', id, status: st.status, ...(st.detail ? { detail: st.detail } : {}), ...(st.verdict ? { verdict: st.verdict } : {}) });
  };

  const titleOf = (id: string): string => {
    const s = findSuggestion(advice, id);
    return s?.keep ? `keep using ${s.keep.name}` : `suggestion ${id}`;
  };

  const run = async (id: string, post: Post, how: MeasureHow): Promise<void> => {
    const s = findSuggestion(advice, id);
    if (!s) {
      post({ type: 'suggestionStatus', id, status: 'failed', detail: 'This suggestion is no longer shown: explain the query again.' });
      return;
    }
    const reason = unverifiableReason(s, ctx);
    if (reason !== undefined) {
      post({ type: 'suggestionStatus', id, status: 'unverified', detail: reason });
      return;
    }
    const opts = setup.settings();
    const mongo = ctx.engine === 'mongodb';
    const collection = ctx.command?.collection ?? '';
    // Unattended (measuring at once after an explain), the setting that asked for it is the consent.
    if (mongo && !how.unattended && !(await setup.consent()(measureQuestion(collection, ctx.command?.database, opts.sampleSize)))) {
      post({ type: 'suggestionStatus', id, status: 'unverified', detail: 'Not verified: the measurement on a sample was declined.' });
      return;
    }
    post({ type: 'suggestionStatus', id, status: 'verifying' });
    const shownBefore = advice.suggestions.map((x) => ({ x, rank: x.rank }));
    const gateway = await setup.gateway();
    const title = how.unattended
      ? `Measuring the suggested indexes on ${mongo ? `a sample of ${collection}` : setup.connectionName}`
      : mongo ? `Trying the suggested indexes on a sample of ${collection}` : `Checking the suggested index on ${setup.connectionName}`;
    let cancelled = false;
    let running: RunningMeasure | undefined;
    const cancel = (): void => {
      if (cancelled) return;
      cancelled = true;
      log.info(`Cancelling the verification of ${s.createText ?? titleOf(id)} on the server.`);
      running?.cancel();
    };
    try {
      const outcome = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        async (progress, token) => {
          running = gateway.measure({
            engine: ctx.engine,
            uri: setup.uri,
            text: setup.text,
            ...(ctx.command ? { command: ctx.command } : {}),
            live: ctx.live,
            rank: s.rank,
            sampleSize: opts.sampleSize,
            timeoutMs: opts.timeoutMs,
            connectTimeoutMs: opts.connectTimeoutMs,
            onStep: (step) => {
              const what = measureStepText(step, collection, opts.sampleSize);
              progress.report({ message: what });
              if (!cancelled) post({ type: 'suggestionStatus', id, status: 'verifying', detail: `${capital(what)}…` });
            },
            // A build on the user's own table locks its writes: never without asking, so never unattended.
            confirmBuild: (tables, hypopg) => (how.unattended ? Promise.resolve(false) : setup.consent()(buildQuestion(tables, hypopg))),
          });
          setup.running.cancel = cancel;
          const sub = token.onCancellationRequested(cancel);
          try {
            return await running.done;
          } finally {
            sub.dispose();
            if (setup.running.cancel === cancel) delete setup.running.cancel;
          }
        },
      );
      for (const n of outcome.notes) log.info(`Verify: ${n}`);
      for (const w of outcome.warnings) {
        log.warn(`Verify: ${w}`);
        void vscode.window.showWarningMessage(w);
      }
      if (outcome.declined) {
        const detail = how.unattended
          ? 'Not measured: the index can be checked here only by building it on the table, which locks its writes; press Verify to choose.'
          : 'Not verified: the index can be checked only by building it, and the build inside a rolled-back transaction was declined.';
        post({ type: 'suggestionStatus', id, status: 'unverified', detail });
        return;
      }
      // A measurement that ranked the suggestions anew (every candidate measured) replaces the panel's list, in
      // measured order, with every verdict; the lens and the squiggle then read the same order.
      const reordered = advice.suggestions.length !== shownBefore.length || advice.suggestions.some((x, i) => x !== shownBefore[i]!.x || x.rank !== shownBefore[i]!.rank);
      if (reordered) {
        post({ type: 'setSuggestions', suggestions: suggestionViews(ctx) });
        // Each verdict also as a status of its new id, as a view that missed the list would need it.
        for (const x of advice.suggestions) if (x.verification.status !== 'not-run') postStatus(post, suggestionId(x));
        const first = advice.suggestions[0];
        if (first) log.info(`Measured: ${first.keep ? `keep using ${first.keep.name}` : first.createText ?? first.rule} first${'message' in first.verification ? `: ${first.verification.message}` : ''}`);
        setup.measured?.();
        return;
      }
      // The same order, with verdicts now: the lens and the hover say what was measured.
      setup.measured?.();
      const now = findSuggestion(advice, id) ?? s;
      // One run verifies several suggestions (a pipeline's suggestions are measured together): show every verdict.
      for (const x of advice.suggestions) {
        if (x !== now && x.verification.status !== 'not-run') postStatus(post, suggestionId(x));
      }
      if (now.verification.status === 'not-run') {
        const why = outcome.notes.find((n) => n.includes(`Suggestion ${now.rank} `)) ?? outcome.notes[0] ?? 'The server did not verify this suggestion.';
        post({ type: 'suggestionStatus', id, status: 'unverified', detail: sentence(why) });
      } else {
        postStatus(post, id);
        log.info(`Verified ${now.createText ?? titleOf(id)}: ${now.verification.message}`);
      }
    } catch (err) {
      const kind = (err as { kind?: string }).kind;
      if (cancelled || kind === 'cancelled') {
        const dropped = mongo ? ', and the scratch collection was dropped' : '';
        post({ type: 'suggestionStatus', id, status: 'unverified', detail: `Cancelled: the work stopped on the server${dropped}.` });
        log.info(`The verification was cancelled${dropped}.`);
        return;
      }
      const text = log.clean(sentence(err instanceof Error ? err.message : String(err)));
      log.error(`Verifying ${s.createText ?? titleOf(id)} failed`, err);
      post({ type: 'suggestionStatus', id, status: 'failed', detail: text });
    }
  };

  // One verification at a time: a click while one runs waits for it, and needs no run of its own when
  // the running one (it may measure several indexes together) verified its suggestion meanwhile.
  let queue: Promise<void> = Promise.resolve();
  let pending = 0;
  return (id, post, how = {}) => {
    const seen = findSuggestion(advice, id)?.verification;
    const waited = pending > 0;
    if (waited) post({ type: 'suggestionStatus', id, status: 'verifying', detail: 'Waiting for the verification already running…' });
    pending++;
    const job = queue.then(async () => {
      const s = findSuggestion(advice, id);
      if (waited && s && s.verification !== seen && s.verification.status !== 'not-run') postStatus(post, id);
      else await run(id, post, how);
    }).finally(() => {
      pending--;
    });
    queue = job.catch(() => undefined);
    return job;
  };
}
