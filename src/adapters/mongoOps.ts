// Small pieces shared by the MongoDB statistics and the sampled trial: values from the query reader turned
// into BSON, driver operations that a cancel stops on the server (their own session killed, and whatever
// carries their comment, as the adapter's explain does), and driver errors turned into the adapters'
// one-sentence errors.

import { randomBytes } from 'node:crypto';
import { BSON, type ClientSession, type Db, type Document } from 'mongodb';
import { mongoCommand, mongoDatabase } from './door';
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
 * Stops this tool's own operations on the server, as any user may: killSessions on the sessions given
 * and on the session of each operation that currentOp shows with `tag` as its comment, killOp besides.
 * currentOp with $ownOps needs no privilege (without it, the inprog privilege, which a readWrite user
 * lacks), and a user may always kill its own sessions; killOp of one's own operation is refused to a
 * readWrite user by some servers (6.0 among them), so it is only the second means, for root and for
 * servers without sessions. Resolves true when the server took a kill (of a session given, or of an
 * operation found); never throws.
 */
export async function stopOwnOperations(admin: Db, tag: string, sessions: readonly ClientSession[] = []): Promise<boolean> {
  const ids = sessions.filter((s) => !s.hasEnded).map((s) => s.id).filter((id): id is NonNullable<typeof id> => id !== undefined);
  const killed = ids.length > 0 && (await mongoCommand(admin, { killSessions: ids }).then(() => true, () => false));
  const ops = await mongoCommand(admin, { currentOp: true, $ownOps: true, 'command.comment': tag }).then((r) => (r.inprog ?? []) as Document[], () => [] as Document[]);
  for (const op of ops) {
    const lsid = (op.lsid as Document | undefined)?.id;
    if (lsid !== undefined) await mongoCommand(admin, { killSessions: [{ id: lsid }] }).catch(() => {});
    await mongoCommand(admin, { killOp: 1, op: op.opid }).catch(() => {});
  }
  return killed || ops.length > 0;
}

/**
 * Runs one driver operation tagged with `tag` as its comment, on a session of its own that `run` is
 * given. When `signal` aborts, the operation is stopped on the server (stopOwnOperations), not only
 * abandoned here, and the abort is repeated until the operation has answered: a cancel that comes
 * before the server registered it still stops it.
 */
export async function killable<T>(db: Db, tag: string, signal: AbortSignal | undefined, run: (session: ClientSession) => Promise<T>): Promise<T> {
  if (signal?.aborted) throw new AdapterError('cancelled', 'The operation was cancelled before it was sent to the server.');
  let settled = false;
  const session = db.client.startSession();
  const kill = async (): Promise<void> => {
    const admin = mongoDatabase(db, 'admin');
    for (let attempt = 0; attempt < 100 && !settled; attempt++) {
      await stopOwnOperations(admin, tag, [session]);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const onAbort = (): void => void kill();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await run(session);
  } catch (err) {
    throw mongoOpError(err, signal?.aborted === true);
  } finally {
    settled = true;
    signal?.removeEventListener('abort', onAbort);
    await session.endSession().catch(() => {});
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
