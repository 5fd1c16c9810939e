// Small pieces shared by the MongoDB statistics and the sampled trial: values from the query reader turned
// into BSON, driver operations that a cancel kills on the server (found by their comment, as the adapter's
// explain does), and driver errors turned into the adapters' one-sentence errors.

import { randomBytes } from 'node:crypto';
import { BSON, type Db, type Document } from 'mongodb';
import { AdapterError, firstLine, isNetworkCode, networkReason, scrub } from './errors';

/**
 * Extended JSON (as the shell-notation reader gives values) into BSON values the driver sends. A RegExp
 * object, which hand-written structured queries may hold, becomes the Extended JSON regex first, since
 * the EJSON reader would turn it into an empty document.
 */
export function toBson<T = Document>(value: unknown): T {
  return BSON.EJSON.deserialize(regexToEjson(value) as Document, { relaxed: false }) as T;
}

function regexToEjson(value: unknown): unknown {
  if (value instanceof RegExp) return { $regularExpression: { pattern: value.source, options: value.flags } };
  if (Array.isArray(value)) return value.map(regexToEjson);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, regexToEjson(v)]));
  }
  return value;
}

/** True when a value holds a variable of the code ({$placeholder: text}): it cannot be sent to a server. */
export function hasPlaceholder(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasPlaceholder);
  if (value !== null && typeof value === 'object') {
    if (typeof (value as Record<string, unknown>)['$placeholder'] === 'string') return true;
    return Object.values(value as Record<string, unknown>).some(hasPlaceholder);
  }
  return false;
}

/** A comment that finds this tool's operations in currentOp. */
export function operationTag(what: string): string {
  return `qpi-${what}-${randomBytes(6).toString('hex')}`;
}

/**
 * Runs one driver operation tagged with `tag` as its comment. When `signal` aborts, the operation is
 * killed on the server (killOp on what currentOp finds with that comment), not only abandoned here.
 */
export async function killable<T>(db: Db, tag: string, signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
  if (signal?.aborted) throw new AdapterError('cancelled', 'The operation was cancelled before it started.');
  let settled = false;
  const kill = async (): Promise<void> => {
    const admin = db.client.db('admin');
    // The operation may not be registered yet when the cancel comes early: look again until it ends.
    for (let attempt = 0; attempt < 40 && !settled; attempt++) {
      const ops = await admin.command({ currentOp: true, 'command.comment': tag }).catch(() => ({ inprog: [] }) as Document);
      for (const op of (ops.inprog ?? []) as Document[]) await admin.command({ killOp: 1, op: op.opid }).catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const onAbort = (): void => void kill();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await run();
  } catch (err) {
    throw mongoOpError(err, signal?.aborted === true);
  } finally {
    settled = true;
    signal?.removeEventListener('abort', onAbort);
  }
}

/** A driver error as one AdapterError sentence, without credentials. */
export function mongoOpError(err: unknown, cancelled = false, secrets: readonly (string | undefined)[] = []): AdapterError {
  if (err instanceof AdapterError) return err;
  const e = err as { name?: string; code?: number | string; message?: string; cause?: { code?: string } };
  const msg = scrub(firstLine(e?.message ?? err), secrets);
  const code = e?.code;
  if (code === 11601 || code === 11600 || code === 11602) {
    return cancelled
      ? new AdapterError('cancelled', 'The operation was cancelled and killed on the server.', { code })
      : new AdapterError('server', `The operation was interrupted on the server: ${msg}.`, { code });
  }
  if (code === 50 || code === 262) return new AdapterError('timeout', `The operation ran longer than its time limit (maxTimeMS) and was stopped on the server: ${msg}.`, { code });
  if (code === 13 || code === 18) return new AdapterError('auth', `MongoDB refused the operation: ${msg}.`, { code });
  if (/Network|ServerSelection|Topology|PoolClosed/.test(e?.name ?? '') || isNetworkCode(e?.cause?.code)) {
    return new AdapterError('network', `The connection to MongoDB was lost: ${isNetworkCode(e?.cause?.code) ? networkReason(e!.cause!.code!) : msg}.`);
  }
  if (typeof code === 'number') return new AdapterError('server', `MongoDB reported an error: ${msg}.`, { code });
  return new AdapterError('server', `The MongoDB operation failed: ${msg}.`);
}
