// The sessions Explain keeps open between two Explains, one per connection, so that no Explain pays the
// connect (without the editor API or a driver, unit-tested in Node). A session is lent to one Explain at a
// time, from the explain to the end of its advice, and given back when nothing went wrong on it; an idle
// one is closed after IDLE_MS. One that was lost while it waited (a server restart, a terminated backend,
// an idle timeout on the server) is closed and another opened in its place, so the user sees nothing of it;
// when the server is down, that open fails with the adapter's own sentence. A connection that is removed
// or changed has its session closed (changedConnections), and so has every one when the extension stops.

import type { MongoAdviceSession, PostgresAdviceSession } from '../../adapters/advise';

/** How long an unused session stays open. */
export const IDLE_MS = 5 * 60_000;

export interface PooledSession {
  close(): Promise<void>;
}

/** A session lent to one Explain: `release(true)` gives it back for the next one, `release(false)` closes it. */
export interface SessionLease<S> {
  session: S;
  /** It was open before this Explain asked (kept from an earlier one, or warmed). */
  reused: boolean;
  release(keep: boolean): void;
}

/** How a pool opens, checks and times its sessions; `alive` says whether a kept session can still be used. */
export interface PoolOptions<S> {
  alive: (session: S) => boolean;
  idleMs?: number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

interface Kept<S> {
  /** What the session was opened with (the URI, password included, and the limits); never logged. */
  fingerprint: string;
  session: Promise<S>;
  timer?: unknown;
}

export class SessionPool<S extends PooledSession> {
  private readonly kept = new Map<string, Kept<S>>();
  /** Bumped when a connection's sessions are dropped, so a session lent before comes back only to be closed. */
  private readonly generation = new Map<string, number>();
  private closed = false;
  private readonly idleMs: number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (timer: unknown) => void;

  constructor(private readonly options: PoolOptions<S>) {
    this.idleMs = options.idleMs ?? IDLE_MS;
    this.setTimer = options.setTimer ?? ((fn, ms) => {
      const t = setTimeout(fn, ms);
      // An idle session does not keep a process (a test, the CLI) alive.
      (t as { unref?: () => void }).unref?.();
      return t;
    });
    this.clearTimer = options.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  }

  /** How many sessions are kept (idle or being opened by a warm-up). */
  get size(): number {
    return this.kept.size;
  }

  /**
   * The connection's kept session when it was opened with the same fingerprint and is still alive (a warm-up
   * still connecting is waited for), else a new one from `open`.
   */
  async acquire<T extends S>(id: string, fingerprint: string, open: () => Promise<T>): Promise<SessionLease<T>> {
    const kept = this.take(id);
    if (kept && kept.fingerprint === fingerprint) {
      // The same fingerprint was opened by the same opener: the session is a T.
      const session = (await kept.session.catch(() => undefined)) as T | undefined;
      if (session && this.options.alive(session)) return this.lease(id, fingerprint, session, true);
      if (session) void session.close().catch(() => undefined);
    } else if (kept) {
      void kept.session.then((s) => s.close()).catch(() => undefined);
    }
    return this.lease(id, fingerprint, await open(), false);
  }

  /**
   * Opens the connection's session ahead of its first Explain, unless one is kept already; never throws.
   * True when this call opened one.
   */
  warm(id: string, fingerprint: string, open: () => Promise<S>): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    const kept = this.kept.get(id);
    if (kept?.fingerprint === fingerprint) return Promise.resolve(false);
    if (kept) this.drop(id);
    const session = open();
    const entry: Kept<S> = { fingerprint, session };
    this.kept.set(id, entry);
    this.idle(id, entry);
    // A warm-up that fails leaves nothing: the Explain opens its own session and says why it cannot.
    return session.then(() => true, () => {
      if (this.kept.get(id) === entry) this.take(id);
      return false;
    });
  }

  /** Closes the connection's kept session, and the one lent out when it comes back. */
  forget(id: string): void {
    this.generation.set(id, (this.generation.get(id) ?? 0) + 1);
    this.drop(id);
  }

  /** Closes every session, now and as each lent one comes back. */
  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.kept.keys()].map((id) => this.take(id)!.session.then((s) => s.close(), () => undefined));
    await Promise.all(all.map((p) => p.catch(() => undefined)));
  }

  private lease<T extends S>(id: string, fingerprint: string, session: T, reused: boolean): SessionLease<T> {
    const generation = this.generation.get(id) ?? 0;
    let released = false;
    return {
      session,
      reused,
      release: (keep) => {
        if (released) return;
        released = true;
        // One kept session per connection: a second one, lent while the first was busy, is closed.
        if (keep && !this.closed && generation === (this.generation.get(id) ?? 0) && !this.kept.has(id) && this.options.alive(session)) {
          const entry: Kept<S> = { fingerprint, session: Promise.resolve(session) };
          this.kept.set(id, entry);
          this.idle(id, entry);
        } else {
          void session.close().catch(() => undefined);
        }
      },
    };
  }

  private idle(id: string, entry: Kept<S>): void {
    entry.timer = this.setTimer(() => {
      if (this.kept.get(id) === entry) this.drop(id);
    }, this.idleMs);
  }

  private take(id: string): Kept<S> | undefined {
    const entry = this.kept.get(id);
    if (!entry) return undefined;
    this.kept.delete(id);
    if (entry.timer !== undefined) this.clearTimer(entry.timer);
    return entry;
  }

  private drop(id: string): void {
    const entry = this.take(id);
    if (entry) void entry.session.then((s) => s.close()).catch(() => undefined);
  }
}

/**
 * The connections whose sessions must close: those removed since `before` and those whose settings changed
 * (`before` and the returned map: each connection's id and its settings as text).
 */
export function changedConnections(before: ReadonlyMap<string, string>, now: readonly { id: string }[]): { gone: string[]; seen: Map<string, string> } {
  const seen = new Map(now.map((spec) => [spec.id, JSON.stringify(spec)]));
  const gone = [...before].filter(([id, text]) => seen.get(id) !== text).map(([id]) => id);
  return { gone, seen };
}

/** Errors after which the session is as it was before the explain (nothing on the connection went wrong). */
const KEEPS_SESSION = new Set(['syntax', 'side-effects', 'unsupported', 'config']);

/** Whether a session that failed an explain with `err` may serve the next Explain. */
export function keepsSession(err: unknown): boolean {
  const e = err as { kind?: unknown; name?: unknown } | undefined;
  // A plan the reader refuses is the extension's UserError: the server answered.
  return e?.name === 'UserError' || (typeof e?.kind === 'string' && KEEPS_SESSION.has(e.kind));
}

/** A kept session whose connection turned out lost when the explain was sent: the explain is sent again on a new one. */
export function lostConnection(err: unknown): boolean {
  return (err as { kind?: unknown } | undefined)?.kind === 'network';
}

/** What Explain keeps of a session: the adapters' connections say whether the server still holds them. */
export interface ExplainSession extends PooledSession {
  conn: { readonly usable: boolean };
}

/** The extension's sessions, shared by the gateway that lends them and the watcher that warms and closes them. */
export const explainSessions = new SessionPool<ExplainSession>({ alive: (s) => s.conn.usable });

/** A connection's session as Explain and a warm-up open it. */
export interface SessionRequest {
  engine: 'postgres' | 'mongodb';
  connectionId: string;
  /** Password included; never logged. */
  uri: string;
  timeoutMs: number;
  connectTimeoutMs: number;
}

/** What a kept session was opened with: another engine, URI (password included) or limit opens another. */
export function explainFingerprint(request: Pick<SessionRequest, 'engine' | 'uri' | 'timeoutMs'>): string {
  return `${request.engine}\n${request.timeoutMs}\n${request.uri}`;
}

/** Opens the advice session of the adapters (loaded now, the first time): the explain's connection and the catalog's. */
export async function openExplainSession(request: SessionRequest, signal?: AbortSignal): Promise<PostgresAdviceSession | MongoAdviceSession> {
  const adv = await import('../../adapters/advise');
  const connect = { uri: request.uri, connectTimeoutMs: request.connectTimeoutMs, ...(signal ? { signal } : {}) };
  return request.engine === 'postgres' ? adv.openPostgresAdvice({ ...connect, timeoutMs: request.timeoutMs }) : adv.openMongoAdvice(connect);
}

/**
 * Opens the connection's session before its first Explain (a connection chosen, a query file opened), so
 * the Explain finds it open; a failure is left for the Explain to say. True when it opened one now.
 */
export function warmExplainSession(request: SessionRequest): Promise<boolean> {
  return explainSessions.warm(request.connectionId, explainFingerprint(request), async () => {
    const session = await openExplainSession(request);
    // PostgreSQL: the side-effect query prepared, and the catalog read once, on a statement that names
    // nothing, so the first Explain's check is as quick as the next ones.
    if ('catalog' in session) await session.conn.verdict('SELECT 1').catch(() => undefined);
    return session;
  });
}
