// MongoDB adapter: connect, explain a MongoCommand, list indexes, say what server this is, cancel.
//
// Safety rules, all enforced here:
// - Every operation, writes included, goes through the `explain` command: an update or delete is
//   planned (and at executionStats run) without changing a document.
// - A pipeline with $out or $merge is not explained with execution unless the caller passes consent.
// - maxTimeMS bounds the explain on the server; cancel kills the explain's own session (killSessions) and
//   whatever carries its comment in currentOp, so the work stops on the server and not only the wait, for
//   any user: a user may always see ($ownOps) and kill its own sessions, without the inprog privilege.
// - The password is given by the caller, handed to the driver only, and never put in a message.

import { randomBytes } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { BSON, MongoClient, type ClientSession, type Db, type Document, type MongoClientOptions } from 'mongodb';
import { formatLimit, formatSeconds, loadPlan } from '../core/index';
import type { Catalog, CatalogRelation, FamilyMember, IndexCreationResult, MongoIndexCreation } from '../core/index';
import type { ExplainVerbosity, MongoCommand } from '../core/index';
import { explainWouldWrite, familyMembers, isCollectionFamily, missingReason, toServerCommand, writingStages } from '../core/index';
import { ConnectionString } from 'mongodb-connection-string-url';
import { AdapterError, describeHost, firstLine, isNetworkCode, misplacedAt, networkReason, portProblem, scrub, uriSecrets } from './errors';
import { graceFor, withDeadline } from './deadline';
import { stopOwnOperations } from './mongoOps';
import { mongoAggregate, mongoBuildIndex, mongoClientDatabase, mongoCommand, mongoDropBuiltIndex, mongoEstimatedCount, mongoExplain, mongoListCollections, mongoListIndexes } from './door';
import type { ExplainResult } from './types';

export interface MongoConnectOptions {
  /** mongodb:// or mongodb+srv:// URI; a password in it is accepted but better given apart. */
  uri: string;
  /** With password: the user to log in as (default: the user named in the URI). */
  username?: string;
  password?: string;
  connectTimeoutMs?: number;
  appName?: string;
  /** Aborting (Ctrl-C) stops a connect at once. */
  signal?: AbortSignal;
}

export interface MongoExplainOptions {
  /** Default: what the query text asked for (`.explain(...)`), else queryPlanner. */
  verbosity?: ExplainVerbosity;
  /** maxTimeMS of the explain. Default 30 s. */
  timeoutMs?: number;
  /** Aborting kills the operation on the server. */
  signal?: AbortSignal;
  /** The user agreed that a $out/$merge pipeline may run (executionStats and above). */
  allowWrites?: boolean;
  /** Database to use when the query does not name one (getSiblingDB); default: the URI's, else "test". */
  database?: string;
}

export interface MongoCreateIndexOptions {
  /** maxTimeMS of the build. Default 10 minutes. */
  timeoutMs?: number;
  /** Aborting kills the build on the server. */
  signal?: AbortSignal;
  /** Database to use when the text does not name one (getSiblingDB); default: the URI's, else "test". */
  database?: string;
}

export type MongoServerKind = 'mongod' | 'mongos' | 'compatible';

export interface MongoServerInfo {
  /** buildInfo.version (a compatible API reports the MongoDB version it imitates). */
  version: string;
  kind: MongoServerKind;
  /** MongoDB, or the product behind a compatible API. */
  product: string;
  /** The product's own version when it reports one (FerretDB). */
  productVersion?: string;
  replicaSet?: string;
  maxWireVersion?: number;
  /** One sentence for the user about what can be analysed on this server. */
  detail: string;
}

export interface MongoIndexInfo {
  name: string;
  /** Key pattern in key order: 1, -1, "text", "2dsphere", "hashed"... */
  key: Record<string, number | string>;
  unique: boolean;
  sparse: boolean;
  hidden: boolean;
  partialFilterExpression?: Document;
  expireAfterSeconds?: number;
  collation?: Document;
  /** Every other field the server returned, as is (weights, 2dsphereIndexVersion, v...). */
  options: Document;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_BUILD_TIMEOUT_MS = 600_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** maxTimeMS of reading one field's value for the CI gate. */
const DEFAULT_FIELD_VALUE_TIMEOUT_MS = 5_000;

/** Connects, reads hello and buildInfo; throws AdapterError (network, auth, config). */
export async function connectMongo(options: MongoConnectOptions): Promise<MongoConnection> {
  const { uri, clientOptions } = mongoClientConfig(options);
  let client: MongoClient;
  try {
    client = new MongoClient(uri, clientOptions);
  } catch (err) {
    // The constructor only parses the URI and options: whatever it rejects is a settings problem.
    const msg = scrub(firstLine(err), [options.password, ...uriSecrets(uri)]);
    throw new AdapterError('config', `The MongoDB connection settings are not valid: ${msg}.`);
  }
  const host = describeHost(uri);
  const close = (): void => void client.close(true).catch(() => {});
  // Server selection retries a refused port until its timeout; when every server the topology knows has
  // refused the connection there is nothing to wait for.
  const refused = new Promise<never>((_, reject) => {
    client.on('topologyDescriptionChanged', (ev) => {
      const servers = [...ev.newDescription.servers.values()];
      const isRefused = (sd: (typeof servers)[number]): boolean => sd.type === 'Unknown' && /ECONNREFUSED/.test(`${sd.error?.message ?? ''} ${String((sd.error?.cause as { code?: unknown } | undefined)?.code ?? '')}`);
      if (servers.length > 0 && servers.every(isRefused)) reject(new AdapterError('network', `Cannot reach MongoDB at ${host}: ${networkReason('ECONNREFUSED')}.`));
    });
  });
  refused.catch(() => {});
  const probe = foreignProtocol(uri, client.options.connectTimeoutMS).then((foreign) => {
    if (foreign) throw new AdapterError('network', `The server at ${host} does not speak the MongoDB protocol (is it the right port?): ${foreign}.`);
  });
  probe.catch(() => {});
  const selectionMs = client.options.serverSelectionTimeoutMS;
  try {
    const waitMs = selectionMs + graceFor(selectionMs);
    const connected = withDeadline(
      (async () => {
        await client.connect();
        const admin = mongoClientDatabase(client, 'admin');
        const hello = await mongoCommand(admin, { hello: 1 }).catch(() => mongoCommand(admin, { isMaster: 1 }));
        const buildInfo = await mongoCommand(admin, { buildInfo: 1 }).catch(() => ({}) as Document);
        return { hello, buildInfo };
      })(),
      waitMs,
      async () => {
        close();
        return new AdapterError('network', `MongoDB at ${host} did not answer within ${formatSeconds(waitMs)} of connecting, so the connection was closed.`);
      },
      { signal: options.signal, onAbort: () => (close(), new AdapterError('cancelled', `Connecting to MongoDB at ${host} was cancelled.`)) },
    );
    const { hello, buildInfo } = await Promise.race([connected, refused, probe.then(() => connected)]);
    return new MongoConnection(client, options, describeServer(uri, hello, buildInfo));
  } catch (err) {
    close();
    throw mongoError(err, options);
  }
}

/** OP_MSG, the wire protocol's message of every command since MongoDB 3.6; OP_REPLY, the old reply. */
const OP_MSG = 2013;
const OP_REPLY = 1;
/** How long the probe waits for an answer; a server that has not answered by then is left to the driver. */
const PROBE_MS = 2000;

/**
 * Why the server of a plain mongodb:// URI is not a MongoDB server, or undefined when it is, when it could
 * not be told in time, or when the URI is not one the probe can read (SRV, TLS, several hosts, a proxy).
 * The driver would wait its whole connect timeout on a port that answers in another protocol (random
 * bytes read as a message length it waits for), so one hello is sent on a socket of our own and the
 * header of the answer read: a MongoDB server answers with a message of a sane length, in reply to it.
 */
async function foreignProtocol(uri: string, connectTimeoutMs: number): Promise<string | undefined> {
  let cs: ConnectionString;
  try {
    cs = new ConnectionString(uri);
  } catch {
    return undefined;
  }
  const params = cs.searchParams;
  const on = (name: string): boolean => [...params.keys()].some((k) => k.toLowerCase() === name.toLowerCase() && /^(true|1)$/i.test(params.get(k) ?? ''));
  if (cs.isSRV || cs.hosts.length !== 1 || on('tls') || on('ssl') || [...params.keys()].some((k) => /^proxy/i.test(k))) return undefined;
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(cs.hosts[0]!);
  if (!m || m[1]!.includes('/') || m[1]!.endsWith('.sock')) return undefined;
  const host = m[1]!.replace(/^\[|\]$/g, '');
  const port = Number(m[2] ?? 27017);
  const requestId = randomBytes(4).readInt32LE(0) & 0x7fffffff;
  const body = BSON.serialize({ hello: 1, $db: 'admin' });
  // Header (length, id, responseTo, opCode), flag bits, then one section of kind 0 holding the command.
  const header = Buffer.alloc(20);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(0, 8);
  header.writeInt32LE(OP_MSG, 12);
  header.writeUInt32LE(0, 16);
  const message = Buffer.concat([header, Buffer.from([0]), body]);
  message.writeInt32LE(message.length, 0);
  return new Promise((resolve) => {
    let got = Buffer.alloc(0);
    let settled = false;
    const socket = netConnect({ host, port });
    const done = (why: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    // Connecting is the driver's to time; the answer gets PROBE_MS once the connection is open.
    let timer = setTimeout(() => done(undefined), connectTimeoutMs);
    socket.on('error', () => done(undefined));
    socket.on('connect', () => {
      clearTimeout(timer);
      timer = setTimeout(() => done(undefined), PROBE_MS);
      socket.write(message);
    });
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (/^HTTP\/\d/.test(got.subarray(0, 6).toString('latin1'))) return done('it answered in HTTP');
      if (got.length < 16) return;
      const length = got.readInt32LE(0);
      const responseTo = got.readInt32LE(8);
      const opCode = got.readInt32LE(12);
      done(length >= 16 && length <= 48 * 1024 * 1024 && responseTo === requestId && (opCode === OP_MSG || opCode === OP_REPLY) ? undefined : 'it answered a hello with bytes that are not a MongoDB reply');
    });
    socket.on('close', () => done(got.length > 0 && got.length < 16 ? 'it answered a hello with a few bytes that are not a MongoDB reply' : got.length === 0 ? 'it closed the connection without answering a hello, or it expects TLS (add tls=true)' : undefined));
  });
}

/** The URI and driver options of a connection; exported for the advice session's own client. */
export function mongoClientConfig(options: MongoConnectOptions): { uri: string; clientOptions: MongoClientOptions } {
  const uri = typeof options.uri === 'string' ? options.uri.trim() : '';
  if (!/^mongodb(\+srv)?:\/\//i.test(uri)) throw new AdapterError('config', 'The MongoDB connection must be a URI starting with mongodb:// or mongodb+srv://.');
  const malformed = (): AdapterError => new AdapterError('config', `The MongoDB URI for ${describeHost(uri)} is malformed (an '@', '/', ':', '#' or '?' in the user name or password must be percent-encoded, '@' as %40).`);
  const badPort = portProblem(uri);
  if (badPort) throw new AdapterError('config', `The MongoDB URI for ${describeHost(uri)} cannot be used: ${badPort}.`);
  if (misplacedAt(uri)) throw malformed();
  let parsed: ConnectionString;
  try {
    parsed = new ConnectionString(uri);
  } catch {
    throw malformed();
  }
  const timeout = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const params = parsed.searchParams;
  // Time limits written in the URI are the user's: ours only fill in the ones it does not give.
  const given = (name: string): boolean => [...params.keys()].some((k) => k.toLowerCase() === name.toLowerCase());
  const clientOptions: MongoClientOptions = {
    appName: options.appName ?? 'query-plan-inspector',
    // One explain and one cancel at a time need few sockets.
    maxPoolSize: 4,
    retryReads: false,
    retryWrites: false,
  };
  if (!given('serverSelectionTimeoutMS')) clientOptions.serverSelectionTimeoutMS = timeout;
  if (!given('connectTimeoutMS')) clientOptions.connectTimeoutMS = timeout;
  if (options.password !== undefined) {
    const username = options.username ?? userOf(uri);
    if (!username) throw new AdapterError('config', 'A MongoDB password was given without a user name.');
    clientOptions.auth = { username, password: options.password };
  }
  return { uri, clientOptions };
}

function userOf(uri: string): string | undefined {
  try {
    const user = new ConnectionString(uri).username;
    return user ? decodeURIComponent(user) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What kind of server answers: mongod, mongos, or a compatible API (FerretDB, Amazon DocumentDB,
 * Azure Cosmos DB, Oracle's MongoDB API) from buildInfo fields and the host name. Exported for tests.
 */
export function describeServer(uri: string, hello: Document, buildInfo: Document): MongoServerInfo {
  const version = typeof buildInfo.version === 'string' ? buildInfo.version : 'unknown';
  const host = describeHost(uri).toLowerCase();
  const base: Pick<MongoServerInfo, 'version' | 'maxWireVersion' | 'replicaSet'> = { version };
  if (typeof hello.maxWireVersion === 'number') base.maxWireVersion = hello.maxWireVersion;
  if (typeof hello.setName === 'string') base.replicaSet = hello.setName;
  const compatible = (product: string, productVersion?: string): MongoServerInfo => {
    const info: MongoServerInfo = {
      ...base,
      kind: 'compatible',
      product,
      detail: `This is ${product}${productVersion ? ` ${productVersion}` : ''}, which speaks the MongoDB protocol but plans queries its own way: its explain output and index abilities differ from MongoDB's, so plans can be shown only as far as they resemble MongoDB's and index advice does not apply as is.`,
    };
    if (productVersion) info.productVersion = productVersion;
    return info;
  };
  if (typeof buildInfo.ferretdbVersion === 'string' || buildInfo.ferretdbFeatures !== undefined) {
    return compatible('FerretDB', typeof buildInfo.ferretdbVersion === 'string' ? buildInfo.ferretdbVersion : undefined);
  }
  if (/\.docdb(-elastic)?\.amazonaws\.com\b/.test(host) || /\.docdb(-elastic)?\.amazonaws\.com\.cn\b/.test(host)) return compatible('Amazon DocumentDB');
  if (/\.(mongo\.)?cosmos\.azure\.com\b|\.mongocluster\.cosmos\.azure\.com\b|\.documents\.azure\.com\b/.test(host)) return compatible('Azure Cosmos DB');
  if (/oraclecloudapps\.com\b|\.oraclecloud\.com\b/.test(host)) return compatible("Oracle Database API for MongoDB");
  if (hello.msg === 'isdbgrid') {
    return { ...base, kind: 'mongos', product: 'MongoDB', detail: `This is a mongos router of a sharded MongoDB ${version} cluster: explain shows each shard's plan.` };
  }
  return { ...base, kind: 'mongod', product: 'MongoDB', detail: `This is MongoDB ${version}${base.replicaSet ? ` (replica set ${base.replicaSet})` : ''}.` };
}

/** Error codes MongoDB returns when the query itself is malformed. */
const QUERY_ERROR_CODES = new Set([2, 9, 14, 15, 17, 28, 31, 72, 168, 40323, 40324, 40352, 40353, 31249, 17276, 51024, 4822819]);

type MongoErrorContext = { cancelled?: boolean; timeoutMs?: number };

/** Turns whatever the driver threw into one AdapterError; no piece of the password survives in its sentence. */
function mongoError(err: unknown, options: MongoConnectOptions, context: MongoErrorContext = {}): AdapterError {
  const error = mongoErrorSentence(err, options, context);
  const clean = scrub(error.message, [options.password, ...uriSecrets(options.uri)]);
  if (clean === error.message) return error;
  return new AdapterError(error.kind, clean, { ...(error.code !== undefined ? { code: error.code } : {}), ...(error.partialRawText !== undefined ? { partialRawText: error.partialRawText } : {}) });
}

function mongoErrorSentence(err: unknown, options: MongoConnectOptions, context: MongoErrorContext): AdapterError {
  if (err instanceof AdapterError) return err;
  const e = err as { name?: string; code?: number | string; codeName?: string; message?: string; errmsg?: string; cause?: { code?: string } };
  const secrets = [options.password, ...uriSecrets(options.uri)];
  const msg = scrub(firstLine(e?.message ?? err), secrets);
  const host = describeHost(options.uri);
  const code = e?.code;
  const name = e?.name ?? '';
  if (name === 'MongoParseError' || name === 'MongoInvalidArgumentError' || name === 'MongoAPIError') {
    return new AdapterError('config', `The MongoDB connection settings are not valid: ${msg}.`);
  }
  if (code === 18 || code === 'AuthenticationFailed' || name === 'MongoMissingCredentialsError') {
    return new AdapterError('auth', `MongoDB at ${host} refused the login: wrong user name or password, or the wrong authentication database.`, { code: 18 });
  }
  if (code === 13) return new AdapterError('auth', `MongoDB refused the command: ${msg}.`, { code });
  if (code === 50 || code === 262) {
    return new AdapterError('timeout', `The explain ran longer than the ${formatLimit(context.timeoutMs)} limit (maxTimeMS) and was stopped on the server.`, { code });
  }
  if (code === 11601 || code === 11600 || code === 11602) {
    if (context.cancelled) return new AdapterError('cancelled', 'The explain was cancelled and the operation killed on the server.', { code });
    return new AdapterError('server', `The operation was interrupted on the server: ${msg}.`, { code });
  }
  if (code === 59 || code === 115) return new AdapterError('unsupported', `This server cannot run that command: ${msg}.`, { code });
  if (typeof code === 'number' && (QUERY_ERROR_CODES.has(code) || (e.codeName ?? '').startsWith('Location'))) {
    return new AdapterError('syntax', `MongoDB rejected the query: ${msg}.`, { code });
  }
  if (/Network|ServerSelection|Topology|PoolClosed|Timeout/.test(name) || isNetworkCode(e?.cause?.code)) {
    const reasonCode = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET)\b/.exec(msg)?.[1] ?? e?.cause?.code;
    const reason = reasonCode ? networkReason(reasonCode) : /timed out|timeout/i.test(msg) ? 'no answer within the connect timeout' : msg;
    return new AdapterError('network', `Cannot reach MongoDB at ${host}: ${reason}.`);
  }
  if (typeof code === 'number') return new AdapterError('server', `MongoDB reported an error: ${msg}.`, { code });
  return new AdapterError('server', `The MongoDB operation failed: ${msg}.`);
}


/** Finds a failed execution inside an explain (top level, per shard, or in an aggregate's $cursor). */
function failedExecution(doc: unknown): { errorCode?: number; errorMessage?: string } | undefined {
  const stack: { v: unknown; depth: number }[] = [{ v: doc, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (depth > 6 || typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const x of v) stack.push({ v: x, depth: depth + 1 });
      continue;
    }
    const o = v as Document;
    if (o.executionSuccess === false) return { errorCode: o.errorCode as number, errorMessage: o.errorMessage as string };
    for (const key of ['executionStats', 'shards', 'stages', '$cursor']) {
      if (key in o) stack.push({ v: o[key], depth: depth + 1 });
    }
    if (!Array.isArray(o.shards) && typeof o.shards === 'object' && o.shards !== null) {
      for (const s of Object.values(o.shards as Document)) stack.push({ v: s, depth: depth + 1 });
    }
  }
  return undefined;
}

/** The operation a connection runs: killed by its session and its comment tag, and marked when cancelled. */
interface RunningOperation {
  tag: string;
  /** The session the operation runs on, its own: killing it stops the operation and nothing else. */
  session: ClientSession;
  promise: Promise<unknown>;
  cancelled: boolean;
}

/** Collections of a family counted to find the largest; a database with more per-tenant collections is rare. */
const FAMILY_COUNTED = 500;

export class MongoConnection {
  private running: RunningOperation | null = null;
  private closed = false;

  constructor(
    private readonly client: MongoClient,
    private readonly options: MongoConnectOptions,
    readonly server: MongoServerInfo,
  ) {}

  get serverVersion(): string {
    return this.server.version;
  }

  /** Not closed (the driver itself reconnects after a server restart). */
  get usable(): boolean {
    return !this.closed;
  }

  /** The database a command that names none runs on (the URI's, else the driver's default). */
  get databaseName(): string {
    return mongoClientDatabase(this.client, undefined).databaseName;
  }

  /** Explains one command; see MongoExplainOptions. Throws AdapterError. */
  async explain(cmd: MongoCommand, opts: MongoExplainOptions = {}): Promise<ExplainResult> {
    if (this.closed) throw new AdapterError('network', 'The MongoDB connection is closed.');
    if (this.running) throw new AdapterError('unsupported', 'Another explain is still running on this connection; wait for it or cancel it.');
    const verbosity: ExplainVerbosity = opts.verbosity ?? cmd.explain ?? 'queryPlanner';
    if (verbosity !== 'queryPlanner' && explainWouldWrite(cmd) && opts.allowWrites !== true) {
      const stage = writingStages(cmd)[0];
      throw new AdapterError('unsupported', `The pipeline has ${stage}, which writes to a collection when it runs; explain it at queryPlanner, or agree explicitly to let it run.`);
    }
    const built = toServerCommand(cmd);
    if (!built.ok) throw new AdapterError('syntax', built.error);
    const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    const tag = `qpi-explain-${randomBytes(8).toString('hex')}`;
    const inner = BSON.EJSON.deserialize(built.command, { relaxed: false }) as Document;
    const explainCmd: Document = { explain: inner, verbosity, maxTimeMS: timeoutMs };
    // The comment finds the operation in currentOp for cancel; servers before 4.4 (wire 9) refuse it there.
    if ((this.server.maxWireVersion ?? 0) >= 9) explainCmd.comment = tag;
    const db = this.database(cmd, opts);
    if (opts.signal?.aborted) throw new AdapterError('cancelled', 'The explain was cancelled before it started.');
    // A failed cancel surfaces through the explain itself; it must not become an unhandled rejection.
    const onAbort = (): void => void this.cancel().catch(() => {});
    return this.operation(tag, opts.signal, onAbort, async (state) => {
      const started = Date.now();
      try {
        const run = mongoExplain(db, explainCmd, { session: state.session, allowWrites: opts.allowWrites === true });
        state.promise = run;
        const javascript = /"\$(where|function|accumulator)"/.test(JSON.stringify(built.command));
        const result = await withDeadline(run, timeoutMs + graceFor(timeoutMs), () => this.abandon(state, timeoutMs, javascript));
        const durationMs = Date.now() - started;
        const rawText = BSON.EJSON.stringify(result, undefined, 2, { relaxed: true });
        const failed = failedExecution(result);
        if (failed) {
          // Explain reports a time limit or a kill inside executionStats instead of failing the command.
          const err = mongoError({ code: failed.errorCode, message: failed.errorMessage ?? 'the execution failed' }, this.options, { cancelled: state.cancelled, timeoutMs });
          throw new AdapterError(err.kind, err.message, { ...(err.code !== undefined ? { code: err.code } : {}), partialRawText: rawText });
        }
        if (state.cancelled) throw new AdapterError('cancelled', 'The explain was cancelled; it had already finished on the server.');
        const notes: string[] = [];
        const writes = explainWouldWrite(cmd) || /^(update|replace|delete|findOneAnd)/.test(cmd.operation);
        if (writes && !explainWouldWrite(cmd)) {
          notes.push(`The ${cmd.operation} was explained through the explain command, which ${verbosity === 'queryPlanner' ? 'plans' : 'plans and runs'} it without changing any document.`);
        }
        if (explainWouldWrite(cmd) && verbosity !== 'queryPlanner') notes.push(`The pipeline's ${writingStages(cmd).join(' and ')} ran with your consent and may have written to its target collection.`);
        if (this.server.kind === 'compatible') notes.push(this.server.detail);
        notes.push(...built.warnings);
        return { engine: 'mongodb', rawText, load: loadPlan(rawText), serverVersion: this.server.version, durationMs, rolledBack: false, writes, notes };
      } catch (err) {
        throw mongoError(err, this.options, { cancelled: state.cancelled, timeoutMs });
      }
    });
  }

  /**
   * Runs one server operation as this connection's running one: cancel() finds it by its tag, an abort
   * of `signal` calls `onAbort`, and the connection takes the next operation once this one settles.
   */
  private async operation<T>(tag: string, signal: AbortSignal | undefined, onAbort: () => void, run: (state: RunningOperation) => Promise<T>): Promise<T> {
    const state: RunningOperation = { tag, session: this.client.startSession(), promise: Promise.resolve(), cancelled: false };
    signal?.addEventListener('abort', onAbort, { once: true });
    this.running = state;
    try {
      return await run(state);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.running = null;
      if (!this.closed) await state.session.endSession().catch(() => {});
    }
  }

  /**
   * Past the client-side deadline: the operation's session killed, and the operation found by its
   * comment killed, through another pooled connection; then this client is closed without waiting for
   * the answer. Returns the sentence to throw.
   */
  private async abandon(state: RunningOperation, timeoutMs: number, javascript: boolean): Promise<AdapterError> {
    const waited = formatSeconds(timeoutMs + graceFor(timeoutMs));
    const admin = mongoClientDatabase(this.client, 'admin');
    const kill = stopOwnOperations(admin, state.tag, [state.session]);
    let timer: NodeJS.Timeout | undefined;
    const killed = await Promise.race([kill, new Promise<false>((r) => (timer = setTimeout(() => r(false), 5000)))]);
    clearTimeout(timer);
    this.closed = true;
    void this.client.close(true).catch(() => {});
    const why = javascript ? ', as server-side JavaScript ($where, $function, $accumulator) does not stop at maxTimeMS' : '';
    return new AdapterError('timeout', killed
      ? `The explain passed its deadline of ${waited} (the ${formatLimit(timeoutMs)} maxTimeMS limit and a grace) without an answer${why}: killOp was sent for it through another connection and this connection was closed.`
      : `The explain passed its deadline of ${waited} (the ${formatLimit(timeoutMs)} maxTimeMS limit and a grace) without an answer${why}, and killOp could not reach it; this connection was closed.`);
  }

  /**
   * Stops the running explain on the server: its own session killed (killSessions, which any user may
   * do to its own sessions), and what currentOp shows of this user's operations ($ownOps) with its
   * comment killed too; waits until it has stopped. Resolves false when nothing was running.
   */
  async cancel(): Promise<boolean> {
    const state = this.running;
    if (!state) return false;
    state.cancelled = true;
    const admin = mongoClientDatabase(this.client, 'admin');
    const old = (this.server.maxWireVersion ?? 0) < 9;
    // The operation may not be registered yet when cancel comes early: kill again until it stops.
    for (let attempt = 0; attempt < 40 && this.running === state; attempt++) {
      await stopOwnOperations(admin, state.tag, [state.session]);
      if (old) {
        // Servers before 4.4 do not show the comment: this connection's explain or build, by its appName.
        const filter = { $ownOps: true, appName: this.options.appName ?? 'query-plan-inspector', $or: [{ 'command.explain': { $exists: true } }, { 'command.createIndexes': { $exists: true } }] };
        const ops = await mongoCommand(admin, { currentOp: true, ...filter }).then((r) => (r.inprog ?? []) as Document[], () => [] as Document[]);
        for (const op of ops) await mongoCommand(admin, { killOp: 1, op: op.opid }).catch(() => {});
      }
      await Promise.race([state.promise.catch(() => {}), new Promise((r) => setTimeout(r, 100))]);
    }
    return true;
  }

  /**
   * Builds one index, read from the text the user agreed to (parseMongoCreateIndex), with the
   * createIndexes command. Throws AdapterError: a name or key pattern already taken is one sentence, a
   * cancel kills the build on the server (killOp) and the index is not left behind.
   */
  async createIndex(spec: MongoIndexCreation, opts: MongoCreateIndexOptions = {}): Promise<IndexCreationResult> {
    if (this.closed) throw new AdapterError('network', 'The MongoDB connection is closed.');
    if (this.running) throw new AdapterError('unsupported', 'Another operation is still running on this connection; wait for it or cancel it.');
    if (opts.signal?.aborted) throw new AdapterError('cancelled', 'The index build was cancelled before it started.');
    const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? DEFAULT_BUILD_TIMEOUT_MS));
    const tag = `qpi-create-index-${randomBytes(8).toString('hex')}`;
    const databaseName = spec.database ?? opts.database;
    const db = mongoClientDatabase(this.client, databaseName);
    const target = `${db.databaseName}.${spec.collection}`;
    let index: Document;
    try {
      index = BSON.EJSON.deserialize({ ...spec.options, key: spec.keys, name: spec.name }, { relaxed: false }) as Document;
    } catch (err) {
      throw new AdapterError('syntax', `The index options cannot be sent to MongoDB: ${firstLine(err)}.`);
    }
    const command: Document = { createIndexes: spec.collection, indexes: [index], maxTimeMS: timeoutMs };
    if ((this.server.maxWireVersion ?? 0) >= 9) command.comment = tag;
    const existed = (await this.listIndexes(spec.collection, db.databaseName)).some((ix) => ix.name === spec.name);
    const onAbort = (): void => {
      void this.cancel().catch(() => {});
      // On replica sets the build outlives a killed command; dropping the index is what aborts it there.
      if (!existed) void new Promise((r) => setTimeout(r, 300)).then(() => mongoDropBuiltIndex(db, spec.collection, spec.name)).catch(() => {});
    };
    return this.operation(tag, opts.signal, onAbort, async (state) => {
      const started = Date.now();
      try {
        const run = mongoBuildIndex(db, command, { session: state.session });
        state.promise = run;
        const reply = await run;
        const durationMs = Date.now() - started;
        if (state.cancelled) {
          // The build finished before the kill reached it: undo it, since the user asked to stop.
          if (!existed) await mongoDropBuiltIndex(db, spec.collection, spec.name).catch(() => {});
          throw new AdapterError('cancelled', `The index build on ${target} was cancelled; it had already finished, so ${spec.name} was dropped again.`);
        }
        // The server answers "all indexes already exist" (note) when the same index is there under that name.
        const created = !existed && !(typeof reply.note === 'string' && /already exist/i.test(reply.note));
        const notes = created ? [] : [`An identical index ${spec.name} already existed on ${target}: nothing was built.`];
        return { engine: 'mongodb', name: spec.name, target, created, durationMs, notes };
      } catch (err) {
        if (err instanceof AdapterError) throw err;
        const code = (err as { code?: unknown }).code;
        const msg = scrub(firstLine(err), [this.options.password, ...uriSecrets(this.options.uri)]);
        if (state.cancelled && (code === 11601 || code === 11600 || code === 11602 || code === 276)) {
          throw new AdapterError('cancelled', `The index build on ${target} was cancelled and killed on the server; ${spec.name} was not created.`, { code });
        }
        if (code === 50 || code === 262) {
          throw new AdapterError('timeout', `The index build on ${target} ran longer than the ${formatLimit(timeoutMs)} limit (maxTimeMS) and was stopped on the server.`, { code });
        }
        if (code === 85 || code === 86 || code === 68) {
          throw new AdapterError('server', `MongoDB did not create the index on ${target}: ${msg}.`, { code });
        }
        if (code === 11000) throw new AdapterError('server', `The unique index cannot be built on ${target}: ${msg}.`, { code });
        if (typeof code === 'number' && code !== 13 && code !== 18) {
          throw new AdapterError('syntax', `MongoDB refused the index on ${target}: ${msg}.`, { code });
        }
        throw mongoError(err, this.options, { cancelled: state.cancelled, timeoutMs });
      }
    });
  }

  /**
   * The collections of a family (`app_users*`, core's familyMembers) in the database, largest first by
   * the count the collection's metadata keeps (estimatedDocumentCount: no scan). Views are left out: an
   * index is built on a collection. At most FAMILY_COUNTED are counted; the rest follow by name.
   */
  async familyCollections(family: string, database?: string): Promise<FamilyMember[]> {
    try {
      const db = mongoClientDatabase(this.client, database);
      const listed = await mongoListCollections(db, { type: 'collection' }, { nameOnly: true });
      const names = familyMembers(family, listed.map((c) => String(c.name))).sort();
      const counted = await Promise.all(names.slice(0, FAMILY_COUNTED).map(async (name) => ({ name, documents: await mongoEstimatedCount(db, name) })));
      counted.sort((a, b) => b.documents - a.documents || a.name.localeCompare(b.name));
      return [...counted, ...names.slice(FAMILY_COUNTED).map((name) => ({ name }))];
    } catch (err) {
      throw mongoError(err, this.options);
    }
  }

  /**
   * What each name is in the database (a collection, a time series, a view and the collection it is on)
   * or null when there is none: the catalog the advice is checked against (core/advice/catalog.ts), so it
   * says "orders_v2 does not exist on <where>" instead of an index. listIndexes cannot tell: it gives no
   * indexes for a collection that is not there.
   */
  async catalog(names: readonly string[], where: string, database?: string): Promise<Catalog> {
    const relations: Record<string, CatalogRelation | null> = {};
    for (const n of names) relations[n] = null;
    if (names.length === 0) return { where, relations };
    try {
      const db = mongoClientDatabase(this.client, database);
      const listed = await mongoListCollections(db, { name: { $in: [...names] } }, { nameOnly: false, authorizedCollections: true });
      for (const c of listed) {
        const name = String(c.name);
        const on = (c.options as { viewOn?: unknown } | undefined)?.viewOn;
        relations[name] = c.type === 'view' ? { kind: 'view', ...(typeof on === 'string' ? { baseTables: [on] } : {}) } : { kind: c.type === 'timeseries' ? 'timeseries' : 'collection' };
      }
      return { where, relations };
    } catch (err) {
      throw mongoError(err, this.options);
    }
  }

  /**
   * One value of each field path in the collection, as relaxed extended JSON (none for a path no document
   * has, or holds only null in): what the CI gate explains a query's variables with. One aggregate per
   * path, reading until the first document that has it; nothing is written. Bounded and stopped as an
   * explain is: maxTimeMS, the client-side deadline, and cancel() by the operation's comment.
   */
  async fieldValues(collection: string, paths: readonly string[], database?: string, timeoutMs = DEFAULT_FIELD_VALUE_TIMEOUT_MS): Promise<Map<string, unknown>> {
    if (this.closed) throw new AdapterError('network', 'The MongoDB connection is closed.');
    if (this.running) throw new AdapterError('unsupported', 'Another operation is still running on this connection; wait for it or cancel it.');
    const limit = Math.max(1, Math.floor(timeoutMs));
    const tag = `qpi-values-${randomBytes(8).toString('hex')}`;
    const commented = (this.server.maxWireVersion ?? 0) >= 9;
    const db = mongoClientDatabase(this.client, database);
    return this.operation(tag, undefined, () => {}, async (state) => {
      const out = new Map<string, unknown>();
      try {
        for (const path of paths) {
          // A path the aggregation language cannot name ($-prefixed parts, empty parts) gets no value.
          if (path.split('.').some((p) => p === '' || p.startsWith('$'))) continue;
          const pipeline = [{ $match: { [path]: { $exists: true, $ne: null } } }, { $limit: 1 }, { $project: { _id: 0, v: `$${path}` } }];
          const run = mongoAggregate(db, collection, pipeline, { maxTimeMS: limit, session: state.session, ...(commented ? { comment: tag } : {}) });
          state.promise = run;
          const rows = await withDeadline(run, limit + graceFor(limit), () => this.abandon(state, limit, false));
          const v = rows[0]?.['v'];
          if (v !== undefined && v !== null) out.set(path, BSON.EJSON.serialize(v as Document, { relaxed: true }));
        }
        return out;
      } catch (err) {
        if ((err as { code?: number }).code === 26) return out;
        throw mongoError(err, this.options, { cancelled: state.cancelled, timeoutMs: limit });
      }
    });
  }

  /** Indexes of a collection (none when it does not exist). */
  async listIndexes(collection: string, database?: string): Promise<MongoIndexInfo[]> {
    try {
      const db = mongoClientDatabase(this.client, database);
      const raw = await mongoListIndexes(db, collection);
      return raw.map((ix) => {
        const { name, key, unique, sparse, hidden, partialFilterExpression, expireAfterSeconds, collation, ...rest } = ix as Document;
        const info: MongoIndexInfo = {
          name: String(name),
          key: key as Record<string, number | string>,
          unique: unique === true,
          sparse: sparse === true,
          hidden: hidden === true,
          options: rest,
        };
        if (partialFilterExpression !== undefined) info.partialFilterExpression = partialFilterExpression as Document;
        if (typeof expireAfterSeconds === 'number') info.expireAfterSeconds = expireAfterSeconds;
        if (collation !== undefined) info.collation = collation as Document;
        return info;
      });
    } catch (err) {
      if ((err as { code?: number }).code === 26) return [];
      throw mongoError(err, this.options);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close().catch(() => {});
  }

  private database(cmd: MongoCommand, opts: MongoExplainOptions): Db {
    const name = cmd.database ?? opts.database;
    return mongoClientDatabase(this.client, name);
  }
}

/** Connects, explains one command, closes. The CLI's one-shot path. */
export async function explainMongo(connect: MongoConnectOptions, cmd: MongoCommand, opts: MongoExplainOptions = {}): Promise<ExplainResult> {
  const conn = await connectMongo({ ...connect, ...(opts.signal ? { signal: opts.signal } : {}) });
  try {
    const result = await conn.explain(cmd, opts);
    // A collection that is not there explains as an empty plan (EOF): say why, as the advice says it.
    if (!isCollectionFamily(cmd.collection)) {
      const where = `${describeHost(connect.uri ?? '')}/${cmd.database ?? conn.databaseName}`;
      const catalog = await conn.catalog([cmd.collection], where, cmd.database).catch(() => undefined);
      const why = catalog ? missingReason(cmd.collection, catalog) : undefined;
      if (why !== undefined) result.notes.unshift(catalog!.relations[cmd.collection] === null ? `${why.replace(/\.$/, '')}: the plan reads nothing, and no index is advised for it.` : why);
    }
    return result;
  } finally {
    await conn.close();
  }
}
