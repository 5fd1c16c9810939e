// Client-side deadlines: a server's own limit (statement_timeout, maxTimeMS, connect timeouts) stops the
// work only while the server still answers. A backend that stops answering, a socket that hangs, or
// server-side JavaScript that ignores maxTimeMS would keep the caller waiting forever; past the limit
// plus a grace, the adapter stops the work through another connection, closes its own, and says so.

import { firstLine } from './errors';

/** Longest delay a Node timer takes; a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The grace after a server-side limit before the client gives up: 2 s plus a tenth of the limit, at most 10 s. */
export function graceFor(limitMs: number): number {
  return Math.min(10_000, 2_000 + Math.floor(limitMs / 10));
}

const GIVE_UP = Symbol('give up');

/**
 * The work's result, unless `giveUp` resolves first: then the work is abandoned (it settles later, rejected
 * when its connection closes, and nothing may wait on it) and the error `onGiveUp` returns is thrown.
 */
async function unlessGivenUp<T>(work: Promise<T>, giveUp: Promise<typeof GIVE_UP>, onGiveUp: () => Promise<Error>): Promise<T> {
  try {
    const first = await Promise.race([work, giveUp]);
    if (first === GIVE_UP) {
      work.catch(() => {});
      throw await onGiveUp();
    }
    return first as T;
  } catch (err) {
    work.catch(() => {});
    throw err;
  }
}

/**
 * Waits for `work` for at most `ms`. Past it, `onExpire` stops the work (on the server, then the
 * connection) and returns the error thrown here; `work` is abandoned. An abort of `signal` stops the wait
 * at once with the error `onAbort` returns (for waits the server cannot cancel, such as a connect).
 */
export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  onExpire: () => Promise<Error>,
  abort?: { signal: AbortSignal | undefined; onAbort: () => Error },
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stops = new Promise<typeof GIVE_UP>((resolve, reject) => {
    timer = setTimeout(() => resolve(GIVE_UP), Math.min(Math.max(1, ms), MAX_TIMER_MS));
    if (abort?.signal) {
      onAbort = () => reject(abort.onAbort());
      if (abort.signal.aborted) onAbort();
      else abort.signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  try {
    return await unlessGivenUp(work, stops, onExpire);
  } finally {
    clearTimeout(timer);
    if (onAbort) abort?.signal?.removeEventListener('abort', onAbort);
  }
}

/** How long a cancelled statement may take to stop before its connection is given up: a cancel the server honours ends it in milliseconds. */
export const CANCEL_GRACE_MS = 1_500;

/**
 * Waits for `work`; once `signal` aborts (the caller has already asked the server to cancel), waits at
 * most `graceMs` more. A backend that does not answer its cancel (a frozen process, a network that
 * stopped delivering) would keep the caller waiting until the deadline: past the grace `onGiveUp` closes
 * what the work runs on and returns the error thrown here, and `work` is abandoned.
 */
export async function afterCancel<T>(work: Promise<T>, signal: AbortSignal | undefined, graceMs: number, onGiveUp: () => Promise<Error>): Promise<T> {
  if (!signal) return work;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const late = new Promise<typeof GIVE_UP>((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve(GIVE_UP), graceMs);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await unlessGivenUp(work, late, onGiveUp);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The time a whole measurement may take (`until`, epoch ms): each statement's limit is cut to what is
 * left, and no candidate starts once it is spent; a tournament cut short says so in its label.
 */
export class MeasureBudget {
  private cut = 0;
  constructor(private readonly until: number | undefined, private readonly timeoutMs: number) {}

  /** The statement_timeout for the next statement: the per-statement limit, or less when the budget ends sooner. */
  limit(): number {
    if (this.until === undefined) return this.timeoutMs;
    return Math.max(1, Math.min(this.timeoutMs, Math.floor(this.until - Date.now())));
  }

  spent(): boolean {
    return this.until !== undefined && Date.now() >= this.until;
  }

  skipped(): string {
    this.cut++;
    return 'not measured: the time budget ran out before it';
  }

  /** What a run that failed is said to have done: cut by the budget (a statement timeout once it is spent), or its own error. */
  errorText(err: unknown): string {
    const code = (err as { code?: unknown } | undefined)?.code;
    return (code === '57014' || code === 50 || (err as { kind?: string }).kind === 'timeout') && this.spent() ? this.skipped() : firstLine(err);
  }

  /** The label, with how many candidates were measured when the budget cut the measurement short. */
  labelled(label: string, entries: readonly { measured?: unknown }[]): string {
    if (this.cut === 0) return label;
    const measured = entries.filter((e) => e.measured !== undefined).length;
    return `${label}, stopped at the time budget with ${measured} of ${entries.length} candidates measured (the best of those)`;
  }
}
