// The one bounded wait on a condition that every suite uses instead of a fixed sleep. `check` runs until
// it gives a value (anything but undefined, null or false) or the deadline passes; the short pause between
// tries keeps a polled server from being flooded and is no wait for anything: the test moves on as soon
// as the condition holds, and fails naming the condition when it never does.

/** What a check gives while its condition does not hold yet. */
type NotYet = undefined | null | false;

export interface UntilOptions {
  /** How long the condition has to hold, in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** The pause between two tries, in milliseconds (default 50). */
  pauseMs?: number;
}

/** Runs `check` until it gives a value and returns that value; throws naming `what` after the deadline. */
export async function until<T>(what: string | (() => string), check: () => T | NotYet | Promise<T | NotYet>, options: UntilOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, options.pauseMs ?? 50));
  }
}
