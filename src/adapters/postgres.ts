// PostgreSQL adapter: connect, EXPLAIN one statement, list indexes, report the server and HypoPG, cancel.
//
// Safety rules, all enforced here:
// - The text must be ONE statement (checked with PostgreSQL's own parser, and sent with the extended
//   protocol, which the server itself refuses to run with several statements).
// - Every explain runs inside BEGIN ... ROLLBACK with a local statement_timeout, so EXPLAIN ANALYZE of
//   an INSERT/UPDATE/DELETE/MERGE (or of a CTE that writes) changes no rows; the result says so.
// - Cancel stops the work on the server: pg_cancel_backend() from a second connection.
// - The password is given by the caller, kept only in the driver's config, and never put in a message.

import pg from 'pg';
import { formatLimit, formatMs, formatSeconds, loadPlan } from '../core/index';
import { KIND_WORDS, statementKind, WRITING } from '../core/index';
import type { Catalog, CatalogRelation, IndexCreationResult, RelationKind } from '../core/index';
import { parse as parseConnectionString, toClientConfig } from 'pg-connection-string';
import { AdapterError, describeHost, firstLine, isNetworkCode, misplacedAt, networkReason, pgLostError, portProblem, scrub, uriSecrets } from './errors';
import { afterCancel, CANCEL_GRACE_MS, graceFor, withDeadline } from './deadline';
import { listPhrases } from './pgSideEffects';
import { canForceGenericPlan, pgBegin, pgBeginVerdict, pgCancelBackend, pgConsent, pgExecute, pgSend, pgTerminateBackend, pgVerdict, type Clearance, type Verdict } from './door';
import { inspectCreateIndex, inspectStatement, position, statementsOf, type StatementInfo } from './pgStatement';
import type { ExplainResult } from './types';

export interface PostgresConnectOptions {
  /** postgresql://user@host:port/db?...; a password in it is accepted but better given apart. */
  uri: string;
  /** Overrides any password in the URI. */
  password?: string;
  connectTimeoutMs?: number;
  applicationName?: string;
  /** Aborting (Ctrl-C) stops a connect at once. */
  signal?: AbortSignal;
}

export interface PostgresExplainOptions {
  analyze?: boolean;
  /** Buffers counters; sent with ANALYZE, or alone from PostgreSQL 13 on (planning buffers). */
  buffers?: boolean;
  /** Non-default planner settings (PostgreSQL 12 and later). */
  settings?: boolean;
  verbose?: boolean;
  /** statement_timeout for the explain, in ms. Default 30 s. */
  timeoutMs?: number;
  /** Values for $1, $2... placeholders. */
  params?: unknown[];
  /** A generic plan, $n parameters left unbound (EXPLAIN GENERIC_PLAN, PostgreSQL 16 on; sent by the simple protocol, which binds nothing). */
  genericPlan?: boolean;
  /** Aborting cancels the statement on the server. */
  signal?: AbortSignal;
  /**
   * Run even when explaining would change what the rollback does not undo (see pgSideEffects.ts); without
   * it such an explain is refused with kind 'side-effects' before anything runs. It also lifts READ ONLY.
   */
  allowSideEffects?: boolean;
  /**
   * Indexes to try for this explain only, as CREATE INDEX statements. 'hypothetical' uses HypoPG (plain
   * EXPLAIN only: ANALYZE ignores hypothetical indexes); 'transaction' really builds them inside the
   * rolled-back transaction (exact, but it locks writes on the table while it builds).
   */
  indexes?: { ddl: string[]; mode: 'hypothetical' | 'transaction' };
}

export interface PostgresIndexColumn {
  /** Column name, or the expression for an expression index. */
  expression: string;
  descending: boolean;
  nullsFirst: boolean;
}

export interface PostgresIndexInfo {
  schema: string;
  table: string;
  name: string;
  /** btree, hash, gin, gist, brin... */
  method: string;
  unique: boolean;
  primary: boolean;
  valid: boolean;
  /** CREATE INDEX statement as pg_get_indexdef prints it. */
  definition: string;
  /** WHERE clause of a partial index. */
  predicate?: string;
  columns: PostgresIndexColumn[];
  /** INCLUDE columns. */
  include: string[];
  sizeBytes: number;
}

export interface HypopgStatus {
  /** CREATE EXTENSION hypopg was run in this database. */
  installed: boolean;
  installedVersion?: string;
  /** The extension files are on the server (it could be created). */
  available: boolean;
  availableVersion?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_BUILD_TIMEOUT_MS = 600_000;

export interface PostgresCreateIndexOptions {
  /** statement_timeout of the build, in ms. Default 10 minutes. */
  timeoutMs?: number;
  /** Aborting cancels the build on the server (and drops the invalid index a CONCURRENTLY build leaves). */
  signal?: AbortSignal;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** Connects and reads the server version; throws AdapterError (network, auth, config). */
export async function connectPostgres(options: PostgresConnectOptions): Promise<PostgresConnection> {
  const config = postgresClientConfig(options);
  const client = new pg.Client(config);
  // An idle connection dropped by the server emits 'error'; without a listener Node would crash.
  client.on('error', () => {});
  const connectMs = config.connectionTimeoutMillis ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const host = describeHost(options.uri);
  const close = (): void => hangUp(client);
  try {
    // The driver's connect timeout covers the handshake; the deadline also covers a server that accepts
    // the connection and then stops answering.
    const row = await withDeadline(
      (async () => {
        await client.connect();
        const r = await pgSend<{ v: string; n: string; pid: number }>(client,
          "SELECT current_setting('server_version') AS v, current_setting('server_version_num') AS n, pg_backend_pid() AS pid",
        );
        return r.rows[0]!;
      })(),
      connectMs + graceFor(connectMs),
      async () => {
        close();
        return new AdapterError('network', `PostgreSQL at ${host} did not answer within ${formatSeconds(connectMs + graceFor(connectMs))} of connecting, so the connection was closed.`);
      },
      { signal: options.signal, onAbort: () => (close(), new AdapterError('cancelled', `Connecting to PostgreSQL at ${host} was cancelled.`)) },
    );
    return new PostgresConnection(client, config, options, row.v, Number(row.n), row.pid);
  } catch (err) {
    close();
    throw pgError(err, options, { when: 'while connecting' });
  }
}

/**
 * Closes a client without waiting for the server: end() only half-closes a socket that is still
 * connecting or waiting, and a server that never answers would keep it (and the process) open.
 */
export function hangUp(client: pg.Client): void {
  void client.end().catch(() => {});
  (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

/** The driver config of a connection; exported for the advice session's catalog connection. */
export function postgresClientConfig(options: PostgresConnectOptions): pg.ClientConfig {
  const uri = typeof options.uri === 'string' ? options.uri.trim() : '';
  if (!/^postgres(ql)?:\/\//i.test(uri)) {
    throw new AdapterError('config', 'The PostgreSQL connection must be a URI starting with postgresql://.');
  }
  const malformed = (): AdapterError => new AdapterError('config', `The PostgreSQL URI for ${describeHost(uri)} is malformed (an '@', '/', '#' or '?' in the user name or password must be percent-encoded, '@' as %40).`);
  const badPort = portProblem(uri);
  if (badPort) throw new AdapterError('config', `The PostgreSQL URI for ${describeHost(uri)} cannot be used: ${badPort}.`);
  if (misplacedAt(uri)) throw malformed();
  let parsed: ReturnType<typeof parseConnectionString>;
  try {
    // Parse now so that a malformed URI is a config error, not a late driver exception.
    new URL(uri);
    parsed = parseConnectionString(withoutSslModeAlias(uri));
  } catch {
    throw malformed();
  }
  // The config is built from the parsed fields rather than passed as a connection string, so that a
  // password given apart is sent exactly as given (a connection string would percent-decode it).
  let config: pg.ClientConfig;
  try {
    config = toClientConfig(parsed) as pg.ClientConfig;
  } catch {
    throw malformed();
  }
  if (options.password !== undefined) config.password = options.password;
  // connect_timeout in the URI (seconds, as libpq reads it) is kept; otherwise the caller's or ours.
  const uriTimeout = Number((parsed as Record<string, unknown>)['connect_timeout']);
  config.connectionTimeoutMillis = Number.isFinite(uriTimeout) && uriTimeout > 0 ? uriTimeout * 1000 : options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  config.application_name = (parsed as Record<string, unknown>)['application_name'] as string | undefined ?? options.applicationName ?? 'query-plan-inspector';
  return config;
}

/**
 * pg 8 treats sslmode=prefer, require and verify-ca as verify-full and prints a multi-line warning saying
 * so the first time it sees one. The URI is read with that same meaning, spelt out, so no warning reaches
 * the terminal before our own sentence; uselibpqcompat=true keeps libpq's weaker meanings, unchanged.
 */
function withoutSslModeAlias(uri: string): string {
  if (/[?&]uselibpqcompat=true\b/i.test(uri)) return uri;
  return uri.replace(/([?&]sslmode=)(prefer|require|verify-ca)\b/gi, '$1verify-full');
}

type PgErrorContext = {
  cancelled?: boolean;
  timeoutMs?: number;
  sql?: string;
  prefixLength?: number;
  /** When the work ran, for a lost connection's sentence: "while the explain ran". */
  when?: string;
};

/** Turns whatever pg threw into one AdapterError; no piece of the password survives in its sentence. */
function pgError(err: unknown, options: PostgresConnectOptions, context: PgErrorContext = {}): AdapterError {
  const error = pgErrorSentence(err, options, context);
  const clean = scrub(error.message, [options.password, ...uriSecrets(options.uri)]);
  return clean === error.message ? error : new AdapterError(error.kind, clean, codeOf(error));
}

function pgErrorSentence(err: unknown, options: PostgresConnectOptions, context: PgErrorContext): AdapterError {
  if (err instanceof AdapterError) return err;
  const secrets = [options.password, ...uriSecrets(options.uri)];
  const e = err as { code?: string; message?: string; position?: string; severity?: string };
  const msg = scrub(firstLine(e?.message ?? err), secrets);
  const host = describeHost(options.uri);
  const code = typeof e?.code === 'string' ? e.code : undefined;
  // The server's own sentence names the user; ours does not.
  if (code === '28P01') return new AdapterError('auth', `PostgreSQL at ${host} refused the login: wrong user name or password.`, { code });
  if (code === '28000') {
    const why = /pg_hba/i.test(msg) ? 'no pg_hba.conf entry allows this user, database and address' : 'this role does not exist or may not log in';
    return new AdapterError('auth', `PostgreSQL at ${host} refused the login: ${why}.`, { code });
  }
  if (code === '42501') return new AdapterError('auth', `PostgreSQL refused the statement: ${msg}.`, { code });
  if (code === '57014') {
    if (context.cancelled) return new AdapterError('cancelled', 'The explain was cancelled and the statement stopped on the server.', { code });
    if (/statement timeout/i.test(msg) || context.timeoutMs !== undefined) {
      return new AdapterError('timeout', `The statement ran longer than the ${formatLimit(context.timeoutMs)} limit (statement_timeout) and was stopped on the server.`, { code });
    }
    return new AdapterError('cancelled', `The statement was cancelled on the server: ${msg}.`, { code });
  }
  if (code === '55P03') return new AdapterError('timeout', `The statement waited too long for a lock: ${msg}.`, { code });
  if (code === '3D000') return new AdapterError('config', `PostgreSQL at ${host} has no such database: ${msg}.`, { code });
  if (code === '57P03' || code === '53300') return new AdapterError('network', `PostgreSQL at ${host} is not accepting connections: ${msg}.`, { code });
  if (!/connection timeout/i.test(msg)) {
    const lost = pgLostError(err, context.when ?? 'while a statement ran', host);
    if (lost) return lost;
  }
  // A table the database does not have is said as the advice says it: "orders_v2 does not exist on host/db".
  const missing = code === '42P01' ? /relation "([^"]+)" does not exist/.exec(msg)?.[1] : undefined;
  if (missing !== undefined) {
    const db = /^[a-z]+:\/\/[^/?#]*\/([^?#/]+)/i.exec(options.uri ?? '')?.[1];
    return new AdapterError('syntax', `${missing} does not exist on ${host}${db ? `/${db}` : ''}: PostgreSQL cannot plan the statement (${msg}).`, { code });
  }
  if (code !== undefined && /^(42|22|2[0-9A-Z]|0A)/.test(code) && code.length === 5) {
    const kind = code.startsWith('42') ? 'syntax' : code === '0A000' ? 'unsupported' : 'server';
    // The server counts from the start of the EXPLAIN text; the user knows only their statement.
    const pos = Number(e.position) - 1 - (context.prefixLength ?? 0);
    const where = e.position && context.sql && pos >= 0 ? ` (at ${position(context.sql, pos)})` : '';
    const verb = kind === 'server' ? 'stopped the statement with an error' : 'rejected the statement';
    return new AdapterError(kind, `PostgreSQL ${verb}${where}: ${msg}.`, { code });
  }
  if (isNetworkCode(code)) return new AdapterError('network', `Cannot reach PostgreSQL at ${host}: ${networkReason(code!)}.`, { code });
  if (/timeout expired|Connection terminated due to connection timeout/i.test(msg)) {
    return new AdapterError('network', `Cannot reach PostgreSQL at ${host}: no answer within the connect timeout.`);
  }
  if (/Connection terminated|connection is closed|Client was closed|not queryable/i.test(msg)) {
    return new AdapterError('network', `The connection to PostgreSQL at ${host} was lost: ${msg}.`);
  }
  if (/password|SASL|SCRAM/i.test(msg) && code === undefined) {
    return new AdapterError('auth', `PostgreSQL at ${host} needs a password for this user, and none or an unusable one was given.`);
  }
  if (code !== undefined) return new AdapterError('server', `PostgreSQL reported an error: ${msg}.`, { code });
  return new AdapterError('server', `The PostgreSQL operation failed: ${msg}.`);
}


export class PostgresConnection {
  /** One explain at a time: its BEGIN ... ROLLBACK must not interleave with another's. */
  private queue: Promise<unknown> = Promise.resolve();
  private running: { promise: Promise<unknown>; cancelled: boolean; settled: boolean } | null = null;
  private closed = false;
  /** The server ended the connection. */
  private lost = false;

  constructor(
    private readonly client: pg.Client,
    private readonly config: pg.ClientConfig,
    private readonly options: PostgresConnectOptions,
    /** server_version as the server prints it, e.g. "15.20 (Debian 15.20-0+deb12u1)". */
    readonly serverVersion: string,
    /** server_version_num, e.g. 150020. */
    readonly serverVersionNum: number,
    /** Backend process id of this connection (what pg_cancel_backend needs). */
    readonly backendPid: number,
  ) {
    // A connection the server ended while it waited (a restart, pg_terminate_backend, an idle timeout)
    // says so at once, so a session kept between Explains is opened again instead of failing.
    const lost = (): void => void (this.lost = true);
    client.once('end', lost);
    client.on('error', lost);
  }

  /** Not closed, and the server has not ended it: a statement sent now reaches the server. */
  get usable(): boolean {
    return !this.closed && !this.lost;
  }

  /** Explains one statement; see PostgresExplainOptions. Throws AdapterError. */
  explain(text: string, opts: PostgresExplainOptions = {}): Promise<ExplainResult> {
    const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    // The plan may come before the explain's turn on the connection ends (handOver, below): the
    // connection stays with this explain until its ROLLBACK has answered.
    let handOver!: (r: ExplainResult) => void;
    const handed = new Promise<ExplainResult>((resolve) => (handOver = resolve));
    const done = this.serial(() => withDeadline(
      afterCancel(this.explainNow(text, opts, handOver), opts.signal, CANCEL_GRACE_MS, () => this.abandonCancelled()),
      timeoutMs + graceFor(timeoutMs),
      () => this.abandon(timeoutMs),
    ));
    return Promise.race([handed, done]);
  }

  /**
   * A cancel the server did not honour within CANCEL_GRACE_MS (a backend that does not run, a network
   * that stopped delivering): this connection is closed at once and the backend ended from a second one
   * (which takes effect when its process runs again). Returns the sentence to throw.
   */
  private async abandonCancelled(): Promise<AdapterError> {
    this.closed = true;
    hangUp(this.client);
    void pgTerminateBackend(this.config, this.backendPid, DEFAULT_CONNECT_TIMEOUT_MS);
    return new AdapterError('cancelled', `The explain was cancelled; the server did not stop the statement within ${formatSeconds(CANCEL_GRACE_MS)}, so this connection was closed and the backend asked to end.`);
  }

  /**
   * Past the client-side deadline: the backend is ended from a second connection (pg_terminate_backend,
   * which also rolls its transaction back and frees its locks, as soon as the process runs again), and this
   * connection is closed without waiting for it. Returns the sentence to throw.
   */
  private async abandon(timeoutMs: number): Promise<AdapterError> {
    const waited = formatSeconds(timeoutMs + graceFor(timeoutMs));
    const host = describeHost(this.options.uri);
    this.closed = true;
    hangUp(this.client);
    const stopped = await pgTerminateBackend(this.config, this.backendPid, DEFAULT_CONNECT_TIMEOUT_MS);
    return new AdapterError('timeout', stopped
      ? `PostgreSQL at ${host} gave no answer within ${waited} (the ${formatLimit(timeoutMs)} limit and a grace): the statement was stopped on the server through a second connection and this connection was closed.`
      : `PostgreSQL at ${host} gave no answer within ${waited} (the ${formatLimit(timeoutMs)} limit and a grace), and a second connection could not stop the statement on the server; this connection was closed.`);
  }

  /**
   * `handOver` gets the plan as soon as the ROLLBACK that ends its transaction is sent, one round trip
   * before it answers: the driver sends one statement at a time in the order asked, so anything asked on
   * this connection after the plan (the advice) runs after the ROLLBACK, and `serial` holds the next
   * explain until the ROLLBACK has answered. Not with indexes tried: HypoPG's are reset after it.
   */
  private async explainNow(text: string, opts: PostgresExplainOptions, handOver?: (r: ExplainResult) => void): Promise<ExplainResult> {
    let lap = performance.now();
    const phases: { label: string; ms: number }[] = [];
    const phase = (label: string): void => {
      const now = performance.now();
      phases.push({ label, ms: now - lap });
      lap = now;
    };
    const info = await inspectStatement(text);
    phase('statement read');
    const analyze = opts.analyze === true;
    const v = this.serverVersionNum;
    const notes: string[] = [];
    const parts = ['FORMAT JSON'];
    if (analyze) parts.push('ANALYZE');
    if (opts.buffers && (analyze || v >= 130000)) parts.push('BUFFERS');
    else if (opts.buffers) notes.push('BUFFERS needs ANALYZE before PostgreSQL 13, so buffer counters were not asked for.');
    if (opts.settings && v >= 120000) parts.push('SETTINGS');
    if (opts.verbose) parts.push('VERBOSE');
    if (opts.genericPlan) parts.push('GENERIC_PLAN');
    const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    const indexes = opts.indexes;
    if (indexes && indexes.mode === 'hypothetical' && analyze) {
      throw new AdapterError('unsupported', 'Hypothetical indexes are ignored by EXPLAIN ANALYZE; try them with a plain EXPLAIN, or build them inside the rolled-back transaction.');
    }
    const ddl = indexes ? await Promise.all(indexes.ddl.map(checkIndexDdl)) : [];
    // A SELECT that locks no rows runs READ ONLY: the server itself then refuses any write this check missed.
    const readOnly = !info.writes && !info.refs.locks && opts.allowSideEffects !== true && indexes === undefined;
    if (opts.signal?.aborted) throw new AdapterError('cancelled', 'The explain was cancelled before it started.');

    // Until the EXPLAIN is sent there is nothing to wait on: a pending promise makes cancel pace itself.
    const state = { promise: new Promise<unknown>(() => {}), cancelled: false, settled: false };
    // A failed cancel surfaces through the explain itself; it must not become an unhandled rejection.
    const onAbort = (): void => void this.cancel().catch(() => {});
    let hypothetical = false;
    let began = false;
    let planned: ExplainResult | undefined;
    let listening = false;
    try {
      // The BEGIN and the verdict's catalog query go in one message, so the check runs inside the
      // transaction (READ ONLY where it applies, under its statement_timeout) in one round trip. The
      // verdict clears the statement to run under ANALYZE, or the user's consent does; the statement
      // itself is sent only below, once the verdict has been read and judged. A refused statement has its
      // empty transaction rolled back in `finally`.
      began = true;
      let clearance: Clearance | undefined;
      if (opts.allowSideEffects === true) {
        await pgBegin(this.client, readOnly, timeoutMs);
        clearance = pgConsent(info);
      } else {
        clearance = await this.refuseSideEffects(info, analyze, readOnly, timeoutMs);
      }
      if (opts.signal?.aborted) throw new AdapterError('cancelled', 'The explain was cancelled before it started.');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      listening = true;
      this.running = state;
      const started = Date.now();
      phase('BEGIN and side-effect check');
      if (indexes?.mode === 'transaction') {
        for (const d of ddl) await pgSend(this.client, d);
      } else if (indexes?.mode === 'hypothetical') {
        hypothetical = true;
        for (const d of ddl) await pgSend(this.client, 'SELECT * FROM hypopg_create_index($1)', [d]);
      }
      if (state.cancelled) throw new AdapterError('cancelled', 'The explain was cancelled before the statement started.');
      const query = (opts.genericPlan ? { text: `EXPLAIN (${parts.join(', ')}) ${info.sql}` } : { text: `EXPLAIN (${parts.join(', ')}) ${info.sql}`, values: opts.params ?? [], queryMode: 'extended' }) as pg.QueryConfig;
      const run = analyze ? pgExecute(this.client, clearance!, query) : pgSend(this.client, query);
      state.promise = run;
      void run.then(() => (state.settled = true), () => (state.settled = true));
      const result = await run;
      const durationMs = Date.now() - started;
      phase(analyze ? 'EXPLAIN ANALYZE' : 'EXPLAIN');
      const value = (result.rows[0] as Record<string, unknown> | undefined)?.['QUERY PLAN'];
      const rawText = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
      const rules = ruleActions(value, info);
      if (rules) notes.push(rules.note);
      if (analyze && info.createsTable) {
        const what = info.kind === 'SelectStmt' ? 'SELECT INTO' : 'CREATE TABLE AS';
        notes.push(`The ${what} really ran and created its table, inside a transaction that was rolled back: the table no longer exists${opts.allowSideEffects === true ? ', but what a rollback does not undo (sequences, volatile functions) was allowed to run' : ''}.`);
      } else if (analyze && info.writes) {
        const what = WRITING.has(info.kind) ? `${KIND_WORDS[info.kind] ?? 'statement'}` : 'statement (its WITH clause writes)';
        notes.push(opts.allowSideEffects === true
          ? `The ${what} really ran, inside a transaction that was rolled back: no rows changed, but what a rollback does not undo (sequences, volatile functions) was allowed to run, and dead row versions remain until vacuum.`
          : `The ${what} really ran, inside a transaction that was rolled back: no rows changed, and dead row versions remain until vacuum.`);
      }
      if (indexes?.mode === 'transaction' && ddl.length > 0) {
        notes.push(ddl.length === 1
          ? 'The index was built inside the rolled-back transaction and no longer exists.'
          : `The ${ddl.length} indexes were built inside the rolled-back transaction and no longer exist.`);
      }
      if (hypothetical) notes.push('The plan uses hypothetical indexes (HypoPG): costs are estimates and nothing was built.');
      planned = {
        engine: 'postgres',
        rawText,
        load: rules ? loadPlan(JSON.stringify([rules.own])) : loadPlan(rawText),
        serverVersion: this.serverVersion,
        durationMs,
        rolledBack: analyze && info.writes,
        writes: info.writes,
        notes,
        phases,
      };
      phase('plan read');
      return planned;
    } catch (err) {
      throw pgError(err, this.options, { cancelled: state.cancelled, timeoutMs, sql: info.sql, prefixLength: `EXPLAIN (${parts.join(', ')}) `.length, when: 'while the explain ran' });
    } finally {
      if (listening) opts.signal?.removeEventListener('abort', onAbort);
      // A cancel sent just as the statement ended can land on the ROLLBACK: try again so that no
      // transaction is ever left open on this connection.
      for (let attempt = 0; began && attempt < 3; attempt++) {
        const rolledBack = pgSend(this.client, 'ROLLBACK').then(() => true, () => false);
        if (attempt === 0 && planned && indexes === undefined) handOver?.(planned);
        const ok = await rolledBack;
        if (ok) break;
      }
      if (hypothetical) await pgSend(this.client, 'SELECT hypopg_reset()').catch(() => {});
      this.running = null;
    }
  }

  /**
   * The side-effect verdict on `text`: what running it under EXPLAIN ANALYZE could change that the
   * rollback does not undo (`effects.execution`), what planning it could evaluate (`effects.planning`),
   * from the catalog (one read-only query, nothing of the statement runs), and the clearance to execute it
   * when there is nothing. The measurement asks this before it executes a statement.
   */
  verdict(text: string): Promise<Verdict> {
    return this.serial(async () => {
      try {
        return await pgVerdict(this.client, text);
      } catch (err) {
        throw pgError(err, this.options);
      }
    });
  }

  /**
   * Opens the explain's transaction with the verdict on `info` asked inside it (one round trip). Throws
   * kind 'side-effects' when explaining would change what the rollback does not undo; else the
   * clearance to run the statement (undefined for a plain EXPLAIN of a statement ANALYZE could not run).
   */
  private async refuseSideEffects(info: StatementInfo, analyze: boolean, readOnly: boolean, timeoutMs: number): Promise<Clearance | undefined> {
    let verdict: Verdict;
    try {
      verdict = await pgBeginVerdict(this.client, info, readOnly, timeoutMs, { generic: canForceGenericPlan(this.serverVersionNum) });
    } catch (err) {
      throw pgError(err, this.options);
    }
    const found = verdict.effects;
    if (analyze) {
      const items = [...found.execution, ...found.planning];
      if (items.length > 0) throw new AdapterError('side-effects', `EXPLAIN ANALYZE would ${listPhrases(items)}, which the rollback does not undo.`, { sideEffects: items });
    } else if (found.planning.length > 0) {
      throw new AdapterError('side-effects', `EXPLAIN would ${listPhrases(found.planning)}, which could change data if a function is not what it is declared.`, { sideEffects: found.planning });
    }
    return verdict.clearance;
  }

  /**
   * Stops the running explain on the server with pg_cancel_backend from a second connection, and
   * waits until it has stopped. Resolves false when nothing was running.
   */
  async cancel(): Promise<boolean> {
    const state = this.running;
    if (!state) return false;
    state.cancelled = true;
    try {
      // A cancel that arrives between statements is lost, so repeat it until the statement has stopped.
      await pgCancelBackend(this.config, this.backendPid, () => this.running === state && !state.settled, () => Promise.race([state.promise.catch(() => {}), new Promise((r) => setTimeout(r, 250))]));
    } catch (err) {
      throw pgError(err, this.options);
    }
    return true;
  }

  /**
   * Runs one CREATE INDEX statement (checked by inspectCreateIndex) as written, under a statement_timeout.
   * CONCURRENTLY runs outside any transaction; when such a build fails or is cancelled it leaves an
   * INVALID index behind, which is found and dropped here, and the error says so. Throws AdapterError.
   */
  createIndex(text: string, opts: PostgresCreateIndexOptions = {}): Promise<IndexCreationResult> {
    return this.serial(() => this.createIndexNow(text, opts));
  }

  private async createIndexNow(text: string, opts: PostgresCreateIndexOptions): Promise<IndexCreationResult> {
    const info = await inspectCreateIndex(text);
    if (opts.signal?.aborted) throw new AdapterError('cancelled', 'The index build was cancelled before it started.');
    const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_BUILD_TIMEOUT_MS));
    const qualified = `${info.schema ? `${quoteName(info.schema)}.` : ''}${quoteName(info.table)}`;
    const indexesOf = async (): Promise<{ name: string; schema: string; valid: boolean }[]> => {
      const r = await pgSend(this.client, 
        `SELECT i.relname AS name, n.nspname AS schema, x.indisvalid AS valid
           FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
          WHERE x.indrelid = to_regclass($1)`,
        [qualified],
      );
      return r.rows as { name: string; schema: string; valid: boolean }[];
    };
    const state = { promise: new Promise<unknown>(() => {}), cancelled: false, settled: false };
    const onAbort = (): void => void this.cancel().catch(() => {});
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let before: Set<string> = new Set();
    let target = `${info.schema ? `${info.schema}.` : ''}${info.table}`;
    const started = Date.now();
    let timeoutSet = false;
    try {
      this.running = state;
      before = new Set((await indexesOf()).map((x) => x.name));
      // Messages name the table as schema.table, the schema being the one search_path resolves to.
      const resolved = await pgSend<{ schema: string | null }>(this.client, 'SELECT (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)) AS schema', [qualified]);
      target = `${resolved.rows[0]?.schema ?? info.schema ?? 'public'}.${info.table}`;
      await pgSend(this.client, `SET statement_timeout = ${timeoutMs}`);
      timeoutSet = true;
      if (state.cancelled) throw new AdapterError('cancelled', 'The index build was cancelled before it started.');
      const run = pgSend(this.client, { text: info.sql, queryMode: 'extended' } as pg.QueryConfig);
      state.promise = run;
      void run.then(() => (state.settled = true), () => (state.settled = true));
      await run;
      const durationMs = Date.now() - started;
      const after = await indexesOf();
      const made = after.filter((x) => !before.has(x.name));
      const name = made[0]?.name ?? info.name ?? '';
      const notes: string[] = [];
      if (info.concurrent) notes.push('CREATE INDEX CONCURRENTLY ran outside a transaction: writes to the table went on during the build, and the index is in place now.');
      else notes.push(`CREATE INDEX blocked writes to ${target} while it built (${formatMs(durationMs)}).`);
      if (made.length === 0) notes.push(`An index named ${name} already existed on ${target} (IF NOT EXISTS): nothing was built.`);
      return { engine: 'postgres', name, target, created: made.length > 0, durationMs, notes };
    } catch (err) {
      let error = pgError(err, this.options, { cancelled: state.cancelled, timeoutMs, sql: info.sql, when: 'while the index was built' });
      if (error.kind === 'cancelled') error = new AdapterError('cancelled', `The index build on ${target} was cancelled and stopped on the server.`, codeOf(error));
      else if (error.kind === 'timeout' && error.code === '57014') error = new AdapterError('timeout', `The index build on ${target} ran longer than the ${formatLimit(timeoutMs)} limit (statement_timeout) and was stopped on the server.`, codeOf(error));
      else if (error.code === '42P07') error = new AdapterError('server', `PostgreSQL did not create the index: ${scrub(firstLine((err as Error).message), [this.options.password])}.`, codeOf(error));
      else if (error.code === '23505') error = new AdapterError('server', `The unique index cannot be built on ${target}: ${scrub(firstLine((err as Error).message), [this.options.password])}.`, codeOf(error));
      if (info.concurrent && error.kind !== 'network') {
        const dropped = await this.dropInvalid(indexesOf, before);
        if (dropped.length > 0) {
          const what = dropped.length === 1 ? `the invalid index ${dropped[0]} it left was dropped` : `the invalid indexes ${dropped.join(', ')} it left were dropped`;
          error = new AdapterError(error.kind, `${error.message.replace(/\.$/, '')}, and ${what}.`, codeOf(error));
        }
      }
      throw error;
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      this.running = null;
      for (let attempt = 0; timeoutSet && attempt < 3; attempt++) {
        if (await pgSend(this.client, 'RESET statement_timeout').then(() => true, () => false)) break;
      }
    }
  }

  /** Drops the INVALID indexes a failed CONCURRENTLY build left on the table; returns their names. */
  private async dropInvalid(indexesOf: () => Promise<{ name: string; schema: string; valid: boolean }[]>, before: Set<string>): Promise<string[]> {
    // A cancel sent just as the build ended can land on these statements: each is tried again.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const left = (await indexesOf()).filter((x) => !x.valid && !before.has(x.name));
        for (const x of left) await pgSend(this.client, `DROP INDEX CONCURRENTLY IF EXISTS ${quoteName(x.schema)}.${quoteName(x.name)}`);
        return left.map((x) => x.name);
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return [];
  }

  /** Indexes of one table, of one schema, or of every user table. */
  listIndexes(filter: { table?: string; schema?: string } = {}): Promise<PostgresIndexInfo[]> {
    return this.serial(async () => {
      try {
        const r = await pgSend(this.client, LIST_INDEXES_SQL, [filter.table ?? null, filter.schema ?? null]);
        return r.rows.map((row: Record<string, unknown>) => {
          const all = row.columns as string[];
          const options = (row.options as number[] | null) ?? [];
          const nKey = Number(row.nkey);
          const info: PostgresIndexInfo = {
            schema: row.schema as string,
            table: row.table as string,
            name: row.name as string,
            method: row.method as string,
            unique: row.unique as boolean,
            primary: row.primary as boolean,
            valid: row.valid as boolean,
            definition: row.definition as string,
            columns: all.slice(0, nKey).map((expression, k) => ({
              expression,
              // indoption bit 0 is DESC, bit 1 is NULLS FIRST (pg_index.h).
              descending: ((options[k] ?? 0) & 1) === 1,
              nullsFirst: ((options[k] ?? 0) & 2) === 2,
            })),
            include: all.slice(nKey),
            sizeBytes: Number(row.size_bytes),
          };
          if (row.predicate) info.predicate = row.predicate as string;
          return info;
        });
      } catch (err) {
        throw pgError(err, this.options, { when: 'while the indexes were listed' });
      }
    });
  }

  /**
   * What each name is in this database (a table, a view and the tables it reads, a materialized view...)
   * or null when there is no such relation, as the search path finds it (or in the schema given): the
   * catalog the advice is checked against (core/advice/catalog.ts), so it says "orders_v2 does not exist
   * on <where>" instead of an index.
   */
  catalog(names: readonly { table: string; schema?: string }[], where: string): Promise<Catalog> {
    return this.serial(async () => {
      const relations: Record<string, CatalogRelation | null> = {};
      if (names.length === 0) return { where, relations };
      try {
        const r = await pgSend<{ name: string; schema: string | null; kind: string | null; bases: string[] | null }>(this.client, CATALOG_SQL, [names.map((n) => n.table), names.map((n) => n.schema ?? null)]);
        for (const row of r.rows) {
          const kind = row.kind === null ? undefined : RELKINDS[row.kind];
          // A name given with its schema is answered under `schema.name`, the bare one under its name.
          relations[row.schema !== null ? `${row.schema}.${row.name}` : row.name] = kind === undefined ? null : { kind, ...(kind === 'view' ? { baseTables: row.bases ?? [] } : {}) };
        }
        return { where, relations };
      } catch (err) {
        throw pgError(err, this.options, { when: 'while the tables were looked up' });
      }
    });
  }

  /** Whether HypoPG is installed in this database or could be. */
  hypopg(): Promise<HypopgStatus> {
    return this.serial(async () => {
      try {
        const r = await pgSend<{ installed: string | null; available: string | null }>(this.client,
          "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'hypopg') AS installed, (SELECT default_version FROM pg_available_extensions WHERE name = 'hypopg') AS available",
        );
        const row = r.rows[0]!;
        const status: HypopgStatus = { installed: row.installed !== null, available: row.available !== null };
        if (row.installed !== null) status.installedVersion = row.installed;
        if (row.available !== null) status.availableVersion = row.available;
        return status;
      } catch (err) {
        throw pgError(err, this.options, { when: 'while HypoPG was looked up' });
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.end().catch(() => {});
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new AdapterError('network', 'The PostgreSQL connection is closed.'));
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }
}

/**
 * A table's rules (CREATE RULE ... DO ALSO) add actions to a statement, and EXPLAIN prints one entry per
 * action beside the statement's own plan: a plan for each query, the command's name for a utility
 * statement ("Notify"). The statement's own plan is the one that modifies its target table (the last such
 * for UPDATE and DELETE, whose actions run first; the first for INSERT, whose actions run after), and the
 * note names the others. Undefined when the output holds one plan.
 */
function ruleActions(value: unknown, info: StatementInfo): { own: unknown; note: string } | undefined {
  if (!Array.isArray(value) || value.length < 2) return undefined;
  const node = (entry: unknown): Record<string, unknown> | undefined => {
    const plan = (entry as { Plan?: unknown } | null)?.Plan;
    return typeof plan === 'object' && plan !== null ? plan as Record<string, unknown> : undefined;
  };
  const operation: Record<string, string> = { InsertStmt: 'Insert', UpdateStmt: 'Update', DeleteStmt: 'Delete', MergeStmt: 'Merge' };
  const op = operation[info.kind];
  const target = op ? info.target : undefined;
  const indexes = value.map((_, i) => i).filter((i) => node(value[i]) !== undefined);
  if (indexes.length === 0) return undefined;
  const matching = indexes.filter((i) => {
    const n = node(value[i])!;
    return n['Node Type'] === 'ModifyTable' && n.Operation === op && (target === undefined || n['Relation Name'] === target);
  });
  const own = op === undefined || matching.length === 0 ? indexes[0]! : op === 'Insert' ? matching[0]! : matching[matching.length - 1]!;
  const others = value
    .map((entry, i) => {
      if (i === own) return undefined;
      if (typeof entry === 'string') return `a ${entry.toUpperCase()}`;
      const n = node(entry);
      if (!n) return undefined;
      const rel = typeof n['Relation Name'] === 'string' ? ` on ${n['Relation Name']}` : '';
      return n['Node Type'] === 'ModifyTable' && typeof n.Operation === 'string' ? `${/^[AEIOU]/i.test(n.Operation) ? 'an' : 'a'} ${n.Operation.toUpperCase()}${rel}` : `a query (${String(n['Node Type'])})`;
    })
    .filter((x): x is string => x !== undefined);
  const word = KIND_WORDS[info.kind] ?? 'statement';
  const listed = others.length === 1 ? others[0]! : `${others.slice(0, -1).join(', ')} and ${others[others.length - 1]}`;
  return {
    own: value[own],
    note: `The table's rules add ${others.length === 1 ? 'an action' : `${others.length} actions`} to the ${word} (${listed}), each explained apart: the plan shown is the ${word}'s own, and the raw output holds them all.`,
  };
}

function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function codeOf(err: AdapterError): { code?: string | number } {
  return err.code !== undefined ? { code: err.code } : {};
}

/** A CREATE INDEX statement given for a trial: exactly one, and nothing else. */
async function checkIndexDdl(ddl: string): Promise<string> {
  const sql = ddl.replace(/[\s;]+$/, '');
  const stmts = await statementsOf(sql);
  if (stmts.length !== 1 || statementKind(stmts[0]) !== 'IndexStmt') {
    throw new AdapterError('unsupported', 'An index to try must be given as one CREATE INDEX statement.');
  }
  if (/\bconcurrently\b/i.test(sql)) throw new AdapterError('unsupported', 'CREATE INDEX CONCURRENTLY cannot run inside the explain transaction; give it without CONCURRENTLY.');
  return sql;
}

const LIST_INDEXES_SQL = `
SELECT n.nspname AS schema, t.relname AS table, i.relname AS name, am.amname AS method,
       ix.indisunique AS unique, ix.indisprimary AS primary, ix.indisvalid AS valid,
       pg_get_indexdef(ix.indexrelid) AS definition,
       pg_get_expr(ix.indpred, ix.indrelid, true) AS predicate,
       ix.indnkeyatts AS nkey,
       ARRAY(SELECT pg_get_indexdef(ix.indexrelid, k, true) FROM generate_series(1, ix.indnatts) AS k ORDER BY k) AS columns,
       ix.indoption::int2[] AS options,
       pg_relation_size(ix.indexrelid) AS size_bytes
  FROM pg_index ix
  JOIN pg_class i ON i.oid = ix.indexrelid
  JOIN pg_class t ON t.oid = ix.indrelid
  JOIN pg_namespace n ON n.oid = t.relnamespace
  JOIN pg_am am ON am.oid = i.relam
 WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
   AND ($1::text IS NULL OR t.relname = $1) AND ($2::text IS NULL OR n.nspname = $2)
 ORDER BY n.nspname, t.relname, i.relname`;

/** Connects, explains one statement, closes. The CLI's one-shot path. */
/** pg_class.relkind, as the advice names it; an index or a sequence is no relation a query reads rows from. */
const RELKINDS: Record<string, RelationKind> = { r: 'table', p: 'partitioned table', f: 'foreign table', v: 'view', m: 'materialized view' };

/**
 * Each name resolved as the server resolves it (quote_ident: the name as written, its case kept), its
 * relkind, and for a view the relations its rewrite rule reads (pg_depend of its _RETURN rule).
 */
const CATALOG_SQL = `
SELECT q.name, q.schema, c.relkind::text AS kind,
       (SELECT array_agg(DISTINCT t.relname::text ORDER BY t.relname::text)
          FROM pg_rewrite rw
          JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = rw.oid AND d.refclassid = 'pg_class'::regclass
          JOIN pg_class t ON t.oid = d.refobjid
         WHERE c.relkind = 'v' AND rw.ev_class = c.oid AND t.oid <> c.oid AND t.relkind IN ('r', 'p', 'f', 'm', 'v')) AS bases
  FROM unnest($1::text[], $2::text[]) AS q(name, schema)
  LEFT JOIN pg_class c ON c.oid = to_regclass(CASE WHEN q.schema IS NULL THEN quote_ident(q.name) ELSE quote_ident(q.schema) || '.' || quote_ident(q.name) END)`;

export async function explainPostgres(connect: PostgresConnectOptions, sql: string, opts: PostgresExplainOptions = {}): Promise<ExplainResult> {
  const conn = await connectPostgres({ ...connect, ...(opts.signal ? { signal: opts.signal } : {}) });
  try {
    return await conn.explain(sql, opts);
  } finally {
    await conn.close();
  }
}
