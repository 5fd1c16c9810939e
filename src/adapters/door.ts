// The one door to a user's server. Every statement the product sends to PostgreSQL, and every command it
// sends to MongoDB, goes through a function of this module; `npm run lint` reports a driver's query
// method called anywhere else (eslint.config.mjs, shown by test/unit/layers.test.ts). What it applies, in
// one place:
// - The side-effect verdict. The user's statement is executed (EXPLAIN ANALYZE, a count of its
//   predicates) only through pgExecute, with a Clearance that only pgVerdict (the catalog found nothing a
//   rollback does not undo) or pgConsent (the user said to run it anyway) gives; a text built from the
//   statement (pointed at temporary copies, its predicates counted) may call no function or operator the
//   cleared statement does not, and may write nothing. pgSend, the door for the product's own statements,
//   refuses a text that would execute a statement under EXPLAIN ANALYZE.
// - READ ONLY where possible: pgBegin opens the explain's transaction READ ONLY unless the statement
//   writes, locks rows, or the user consented to its side effects.
// - Cancellation on the server: pgCancelBackend and pgTerminateBackend from a second connection;
//   MongoDB operations carry a comment tag and are killed by it (mongoOps.ts `killable`).
// - The error sentence: a refusal here is an AdapterError of one sentence; driver errors keep their code
//   for the caller's sentence (pgError in postgres.ts, mongoOpError in mongoOps.ts).

import type {
  AggregateOptions, CountDocumentsOptions, CreateCollectionOptions, CreateIndexesOptions, Db, Document, DropCollectionOptions,
  EstimatedDocumentCountOptions, ListCollectionsOptions, ListIndexesOptions, MongoClient, RunCommandOptions,
} from 'mongodb';
import pg from 'pg';
import { treeWrites } from '../core/index';
import { AdapterError } from './errors';
import { readSideEffects, sideEffectsQuery, statementReferences, type CatalogRow, type SideEffects } from './pgSideEffects';
import { inspectStatement, statementsOf, type StatementInfo } from './pgStatement';

// ---- PostgreSQL ---------------------------------------------------------------------------------------

/** What the door sends through: a connection of the adapter, of the measurement or of the catalog. */
export type PgClient = pg.Client;

/**
 * Leave to execute one statement of the user's: given by pgVerdict when the catalog found nothing a
 * rollback does not undo, or by pgConsent when the user agreed. Only this module makes them.
 */
export interface Clearance {
  readonly statement: string;
  readonly by: 'verdict' | 'consent';
  /** The functions and operators the statement calls, by name: what a text built from it may call. */
  readonly calls: ReadonlySet<string>;
}

const minted = new WeakSet<Clearance>();

function mint(statement: string, by: Clearance['by'], info: StatementInfo | undefined): Clearance {
  const calls = new Set<string>();
  for (const f of info?.refs.functions ?? []) calls.add(`f:${f.name}`);
  for (const o of info?.refs.operators ?? []) calls.add(`o:${o.name}`);
  const c: Clearance = Object.freeze({ statement, by, calls });
  minted.add(c);
  return c;
}

/** The side-effect verdict on one statement, and its clearance when it runs nothing a rollback does not undo. */
export interface Verdict {
  info: StatementInfo;
  effects: SideEffects;
  clearance?: Clearance;
}

/**
 * Reads the statement (one explainable statement, or an AdapterError) and asks the catalog, in one
 * read-only query on `client`, what running it could change that the rollback does not undo.
 */
export async function pgVerdict(client: PgClient, statement: string): Promise<Verdict> {
  const info = await inspectStatement(statement);
  return judged(info, await askCatalog(client, info, '', {}));
}

/**
 * How the server plans the catalog query. `generic` (plan_cache_mode, PostgreSQL 12 on): one plan for
 * every execution on the connection from the first. Left to itself the server plans the query again at
 * each of its first five executions (3 to 5 ms where the cached plan takes 1) before it settles on the
 * same generic plan, so the first Explains of each kept session waited on planning the check. The mode is
 * set in a savepoint rolled back as soon as the rows are in: the user's statement is planned as the
 * session plans it, whatever the session, its role or its database set.
 */
export interface CatalogPlan {
  generic?: boolean;
}

/** Whether a server of this server_version_num has plan_cache_mode (PostgreSQL 12 on). */
export function canForceGenericPlan(serverVersionNum: number): boolean {
  return serverVersionNum >= 120000;
}

/**
 * Opens the explain's transaction (READ ONLY when `readOnly`, under `timeoutMs`) and asks the catalog
 * the side-effect verdict on `info` inside it, in one message: one round trip where BEGIN and the
 * check took two. The statement itself is not in the message; it runs only once the verdict has been
 * read and judged, with the clearance it gives. On an error the transaction may be open (and aborted):
 * the caller rolls it back, as after any failed explain.
 */
export async function pgBeginVerdict(client: PgClient, info: StatementInfo, readOnly: boolean, timeoutMs: number, plan: CatalogPlan = {}): Promise<Verdict> {
  return judged(info, await askCatalog(client, info, `${beginText(readOnly, timeoutMs)}; `, plan));
}

function judged(info: StatementInfo, rows: readonly CatalogRow[]): Verdict {
  const effects = readSideEffects(rows);
  const verdict: Verdict = { info, effects };
  if (effects.execution.length === 0 && effects.planning.length === 0) verdict.clearance = mint(info.sql, 'verdict', info);
  return verdict;
}

/** The catalog queries prepared on each connection (SQL PREPARE lasts as long as the connection, whatever is rolled back). */
const preparedOn = new WeakMap<PgClient, Set<string>>();

/**
 * Sends `before` (transaction control of ours, or nothing) and the side-effect query on `info` as one
 * simple-query message, and returns the query's rows. The query is prepared with SQL PREPARE under its
 * name, in the same message the first time on a connection (each of its two texts never changes): each
 * Explain on a kept session is planned from the parse and analysis of the first, and still reads the
 * catalog rows as they are now. Its values, JSON of the names the statement uses, go in as escaped
 * literals: a simple-query message carries no parameters.
 */
async function askCatalog(client: PgClient, info: StatementInfo, before: string, plan: CatalogPlan): Promise<CatalogRow[]> {
  const q = sideEffectsQuery(info.refs);
  const prepared = preparedOn.get(client) ?? new Set<string>();
  preparedOn.set(client, prepared);
  let execute = `EXECUTE ${q.name}(${q.values.map((v) => client.escapeLiteral(v).trim()).join(', ')})`;
  // Only inside the explain's transaction (`before` opens it): the savepoint's rollback undoes the SET
  // LOCAL and nothing else, the check having read only.
  if (plan.generic && before !== '') execute = `SAVEPOINT qpi_check; SET LOCAL plan_cache_mode = force_generic_plan; ${execute}; ROLLBACK TO SAVEPOINT qpi_check; RELEASE SAVEPOINT qpi_check`;
  const send = async (prepare: boolean): Promise<CatalogRow[]> => {
    const r = (await client.query(`${prepare ? `PREPARE ${q.name} AS ${q.text};\n` : ''}${before}${execute}`)) as unknown as pg.QueryResult<CatalogRow> | pg.QueryResult<CatalogRow>[];
    prepared.add(q.name);
    // The rows of the EXECUTE: the one statement of the message that returns rows.
    return (Array.isArray(r) ? r.filter((one) => one.command === 'SELECT').at(-1)! : r).rows;
  };
  if (prepared.has(q.name)) return send(false);
  try {
    return await send(true);
  } catch (err) {
    // Prepared already by a message that failed after its PREPARE: the PREPARE comes first, so nothing
    // else of this message ran; send it again without.
    if ((err as { code?: string }).code !== '42P05') throw err;
    return send(false);
  }
}

function beginText(readOnly: boolean, timeoutMs: number): string {
  return `${readOnly ? 'BEGIN READ ONLY' : 'BEGIN'}; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`;
}

/** The user's consent to run a statement whatever it changes (`--allow-side-effects`, the editor's question). */
export function pgConsent(info: StatementInfo): Clearance {
  return mint(info.sql, 'consent', info);
}

const EXPLAIN_ANALYZE = /^\s*explain\s*(?:\((?:[^()]|\([^()]*\))*\banaly[sz]e\b(?:[^()]|\([^()]*\))*\)|analy[sz]e\b)/i;

function textOf(query: string | pg.QueryConfig): string {
  return typeof query === 'string' ? query : query.text;
}

/**
 * The product's own statements: catalog reads, transaction control, settings, the measurement's copies
 * and their indexes, an index build the user asked for. A text that executes a statement under EXPLAIN
 * ANALYZE is refused here: it goes through pgExecute with a clearance.
 */
export function pgSend<R extends pg.QueryResultRow = pg.QueryResultRow>(client: PgClient, query: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>> {
  if (EXPLAIN_ANALYZE.test(textOf(query))) {
    return Promise.reject(new AdapterError('side-effects', 'A statement runs under EXPLAIN ANALYZE only once the side-effect check has cleared it.'));
  }
  if (EXTENSION_DDL.test(textOf(query))) {
    return Promise.reject(new AdapterError('side-effects', 'An extension is created only for a measurement, inside its transaction, and rolled back with it (pgTrialExtensions).'));
  }
  return values === undefined ? client.query<R>(query) : client.query<R>(query as string, values);
}

/**
 * Executes the user's statement, or a text built from it, with its clearance: the statement itself (the
 * explain of a write runs only as cleared), or a text that writes nothing and calls no function or
 * operator the statement does not (count() aside), such as the statement pointed at temporary copies.
 */
export async function pgExecute<R extends pg.QueryResultRow = pg.QueryResultRow>(client: PgClient, clearance: Clearance, query: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>> {
  if (!minted.has(clearance)) throw new AdapterError('side-effects', 'A statement runs only once the side-effect check has cleared it.');
  const text = textOf(query).replace(/[\s;]+$/, '');
  // The statement itself under EXPLAIN's options: what was cleared, as it was cleared.
  const own = text.endsWith(clearance.statement) && EXPLAIN_PREFIX.test(text.slice(0, text.length - clearance.statement.length));
  if (!own) {
    const stmts = await statementsOf(text);
    const extra = stmts.length === 1 ? beyond(stmts[0]!, clearance) : 'holds more than one statement';
    if (extra !== undefined) throw new AdapterError('side-effects', `A text built from the statement was not run: it ${extra}, which the side-effect check did not clear.`);
  }
  return values === undefined ? client.query<R>(query) : client.query<R>(query as string, values);
}

/** CREATE, ALTER or DROP EXTENSION anywhere in a text (a multi-statement text included). */
const EXTENSION_DDL = /(?:^|;)\s*(?:create|alter|drop)\s+extension\b/i;

/**
 * The extensions a measurement may create for a candidate index: trusted contrib modules that add
 * operator classes (btree_gin: B-tree classes for GIN, so equality columns join a jsonb or trigram GIN;
 * pg_trgm: trigram classes for LIKE '%...%', ILIKE and regular expressions). Nothing else.
 */
export const TRIAL_EXTENSIONS: ReadonlySet<string> = new Set(['btree_gin', 'pg_trgm']);

/**
 * Runs `body` with the extensions named created inside the open transaction, then undoes them: a
 * savepoint before, CREATE EXTENSION for each that is not installed, `body`, and ROLLBACK TO the
 * savepoint whatever happened; then the catalog is read again and an extension still present that was
 * not before is an error (the caller's transaction must then be rolled back). Only TRIAL_EXTENSIONS are
 * created, and only inside a transaction: the savepoint fails outside one, before anything is created.
 * `body` receives the extensions that were created for it.
 */
export async function pgTrialExtensions<T>(client: PgClient, names: readonly string[], body: (created: readonly string[]) => Promise<T>): Promise<T> {
  const unknown = names.find((n) => !TRIAL_EXTENSIONS.has(n));
  if (unknown !== undefined) throw new AdapterError('side-effects', `The extension ${unknown} is not one a measurement may create (only ${[...TRIAL_EXTENSIONS].join(' and ')}).`);
  const installed = async (): Promise<Set<string>> => new Set((await client.query<{ extname: string }>('SELECT extname FROM pg_extension WHERE extname = ANY($1::text[])', [[...names]])).rows.map((r) => r.extname));
  // Outside a transaction block the server refuses a savepoint: nothing below runs then.
  await client.query('SAVEPOINT qpi_extensions');
  let before = new Set<string>();
  const created: string[] = [];
  let outcome: { value: T } | { error: unknown };
  try {
    before = await installed();
    for (const n of names) {
      if (before.has(n) || created.includes(n)) continue;
      // The name is one of TRIAL_EXTENSIONS, checked above: a plain identifier.
      await client.query(`CREATE EXTENSION ${n}`);
      created.push(n);
    }
    outcome = { value: await body(created) };
  } catch (err) {
    outcome = { error: err };
  }
  try {
    await client.query('ROLLBACK TO SAVEPOINT qpi_extensions');
    await client.query('RELEASE SAVEPOINT qpi_extensions');
    const left = [...(await installed())].filter((n) => !before.has(n));
    if (left.length > 0) throw new AdapterError('server', `The extension ${left.join(', ')} created for the measurement was still present after its rollback.`);
  } catch (err) {
    // The body's own failure comes first; a connection that is gone took its transaction with it.
    if (!('error' in outcome)) throw err;
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

/** EXPLAIN and its options, before the statement. */
const EXPLAIN_PREFIX = /^\s*explain\s*\((?:[^()]|\([^()]*\))*\)\s*$/i;

/** What a text does beyond its clearance, in a few words, or undefined. */
function beyond(tree: Record<string, unknown>, clearance: Clearance): string | undefined {
  const refs = statementReferences(tree);
  const fn = refs.functions.find((f) => !clearance.calls.has(`f:${f.name}`) && f.name !== 'count');
  if (fn) return `calls ${fn.name}()`;
  const op = refs.operators.find((o) => !clearance.calls.has(`o:${o.name}`));
  if (op) return `uses the operator ${op.name}`;
  if (treeWrites(tree)) return 'writes';
  return undefined;
}

/** Opens the explain's transaction: READ ONLY when nothing in it should write, so the server refuses what the check missed. */
export async function pgBegin(client: PgClient, readOnly: boolean, timeoutMs: number): Promise<void> {
  // One round trip: the server runs both in order, and SET LOCAL inside the transaction BEGIN opened.
  await client.query(beginText(readOnly, timeoutMs));
}

/**
 * Stops the statement a backend runs: pg_cancel_backend from a second connection, as the server requires,
 * repeated while `running` says it still runs (a cancel that arrives between statements is lost), at
 * most `attempts` times, waiting `pause()` between two.
 */
export async function pgCancelBackend(config: pg.ClientConfig, pid: number, running: (other: PgClient) => boolean | Promise<boolean>, pause: () => Promise<unknown>, attempts = 40): Promise<void> {
  const other = new pg.Client(config);
  other.on('error', () => {});
  try {
    await other.connect();
    for (let attempt = 0; attempt < attempts && (await running(other)); attempt++) {
      await other.query('SELECT pg_cancel_backend($1)', [pid]);
      await pause();
    }
  } finally {
    await other.end().catch(() => {});
  }
}

/** Whether a backend is running a statement, asked from a connection of its own (`client`). */
export async function pgBackendActive(client: PgClient, pid: number): Promise<boolean> {
  const r = await client.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [pid]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * Ends a backend from a second connection (pg_terminate_backend, which also rolls its transaction back
 * and frees its locks as soon as the process runs). Resolves whether the server said it did, within 6 s.
 */
export async function pgTerminateBackend(config: pg.ClientConfig, pid: number, connectTimeoutMs: number): Promise<boolean> {
  const other = new pg.Client({ ...config, connectionTimeoutMillis: Math.min(config.connectionTimeoutMillis ?? connectTimeoutMs, 5000) });
  other.on('error', () => {});
  const terminate = (async () => {
    await other.connect();
    const r = await other.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
    return r.rows[0]?.ok === true;
  })().catch(() => false);
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([terminate, new Promise<false>((r) => (timer = setTimeout(() => r(false), 6000)))]);
  clearTimeout(timer);
  void other.end().catch(() => {});
  return stopped;
}

// ---- Statistics written at the user's request ------------------------------------------------------------
//
// `qpi stats import` writes a production database's planner statistics into a CI database: the one write
// of statistics the product makes, and only because the user ran that command (the command is the
// consent). The door builds the call itself, pg_restore_relation_stats or pg_restore_attribute_stats
// (PostgreSQL 18) with argument names from a fixed list and every value bound as a parameter, so nothing
// but the statistics of a relation or a column can be written through it.

/** The user's request to write statistics into a database; only pgStatisticsConsent makes one. */
export interface StatisticsConsent {
  readonly by: 'command';
}

const statisticsConsents = new WeakSet<StatisticsConsent>();

/** The consent `qpi stats import` gives by being run. */
export function pgStatisticsConsent(): StatisticsConsent {
  const c: StatisticsConsent = Object.freeze({ by: 'command' as const });
  statisticsConsents.add(c);
  return c;
}

/** The arguments each restore function takes, and their types (PostgreSQL 18's documentation). */
const RESTORE_ARGUMENTS = {
  relation: { schemaname: 'text', relname: 'text', version: 'integer', relpages: 'integer', reltuples: 'real', relallvisible: 'integer', relallfrozen: 'integer' },
  attribute: {
    schemaname: 'text', relname: 'text', attname: 'text', attnum: 'smallint', inherited: 'boolean', version: 'integer', null_frac: 'real', avg_width: 'integer', n_distinct: 'real',
    most_common_vals: 'text', most_common_freqs: 'real[]', histogram_bounds: 'text', correlation: 'real', most_common_elems: 'text', most_common_elem_freqs: 'real[]',
    elem_count_histogram: 'real[]', range_length_histogram: 'text', range_empty_frac: 'real', range_bounds_histogram: 'text',
  },
} as const satisfies Record<string, Record<string, string>>;

/**
 * Writes the statistics of one relation (pages, rows, visible pages) or of one column (pg_statistic)
 * with PostgreSQL 18's restore functions. Arguments whose value is undefined or null are left out.
 * Resolves what the function returned: false when the server took only part of it (it says why in a
 * WARNING notice).
 */
export async function pgRestoreStatistics(client: PgClient, consent: StatisticsConsent, kind: 'relation' | 'attribute', args: Readonly<Record<string, unknown>>): Promise<boolean> {
  if (!statisticsConsents.has(consent)) throw new AdapterError('side-effects', 'Statistics are written only by qpi stats import, which the user runs to write them.');
  const types: Record<string, string> | undefined = RESTORE_ARGUMENTS[kind];
  if (types === undefined) throw new AdapterError('side-effects', 'Only relation and column statistics are written.');
  const parts: string[] = [];
  const values: unknown[] = [];
  for (const [key, value] of Object.entries(args)) {
    const type = types[key];
    if (type === undefined) throw new AdapterError('side-effects', `${key} is no argument of pg_restore_${kind}_stats, so it is not sent.`);
    if (value === undefined || value === null) continue;
    values.push(value);
    parts.push(`'${key}', $${values.length}::${type}`);
  }
  const r = await client.query<{ ok: boolean }>(`SELECT pg_restore_${kind}_stats(${parts.join(', ')}) AS ok`, values);
  return r.rows[0]?.ok === true;
}

// ---- MongoDB ------------------------------------------------------------------------------------------
//
// What the product sends to MongoDB: reads of the user's collections (counts, a $sample, the listings),
// the explain command (whose verdict on writing stages is mongoExplain's), the scratch collection of a
// measurement (created with a marker, filled by $out, indexed, dropped), the user's own index build after
// consent, and the means to stop our own operations. A command not in these is refused here, and a
// collection is dropped only when it carries the scratch marker.

/** How a scratch collection's validator comment starts; the rest is the marker as JSON. */
const SCRATCH_MARK = 'qpi-scratch ';

/** What a scratch collection carries from its creation: the run that made it, and when that run is over. */
export interface ScratchMarker {
  run: string;
  /** Milliseconds since the epoch: the run's start, its time budget and a grace. */
  until: number;
}

/**
 * The collection options that mark a scratch collection: a validator that is only a comment (it matches
 * every document, and validationLevel 'off' keeps the server from even applying it), which
 * listCollections returns with the collection's options and which $out keeps when it replaces the
 * collection's contents.
 */
export function scratchOptions(marker: ScratchMarker): Document {
  return { validator: { $comment: `${SCRATCH_MARK}${JSON.stringify(marker)}` }, validationLevel: 'off' };
}

/** The marker in a collection's options (from listCollections), or undefined when it has none. */
export function scratchMarkerOf(options: unknown): ScratchMarker | undefined {
  const comment = ((options as Document | undefined)?.['validator'] as Document | undefined)?.['$comment'];
  if (typeof comment !== 'string' || !comment.startsWith(SCRATCH_MARK)) return undefined;
  try {
    const m = JSON.parse(comment.slice(SCRATCH_MARK.length)) as Partial<ScratchMarker>;
    return typeof m.run === 'string' && typeof m.until === 'number' && Number.isFinite(m.until) ? { run: m.run, until: m.until } : undefined;
  } catch {
    return undefined;
  }
}

/** Commands the door sends as they are: they read, explain, or stop our own operations. */
const MONGO_COMMANDS = new Set(['hello', 'isMaster', 'buildInfo', 'currentOp', 'killOp', 'killSessions']);

/** Scratch collections this process made, by database and name: the only targets of $out and collMod. */
const scratches = new Set<string>();
/** Indexes this process built on a user's collection, by database, collection and name: the only ones it may drop. */
const built = new Set<string>();

const nsKey = (db: Db, ...parts: string[]): string => [db.databaseName, ...parts].join('\u0000');

function refuse(what: string): Promise<never> {
  return Promise.reject(new AdapterError('side-effects', `${what}: the product does not send that to your server.`));
}

/** Another database of the same connection (the admin database among them). */
export function mongoDatabase(db: Db, name: string): Db {
  return db.client.db(name);
}

/** The default database of a connection, or the one named. */
export function mongoClientDatabase(client: MongoClient, name?: string): Db {
  return name === undefined ? client.db() : client.db(name);
}

/** A command that reads or stops our own operations (hello, buildInfo, currentOp, killOp, killSessions). */
export function mongoCommand(db: Db, command: Document, options: RunCommandOptions = {}): Promise<Document> {
  const name = Object.keys(command)[0] ?? '';
  if (!MONGO_COMMANDS.has(name)) return refuse(`The command ${name}`);
  return db.command(command, options);
}

/**
 * The explain command. A pipeline with $out or $merge writes when it runs, so it is explained beyond
 * queryPlanner only with the user's consent (`allowWrites`), or into a scratch collection of ours.
 */
export function mongoExplain(db: Db, explain: Document, options: RunCommandOptions & { allowWrites?: boolean } = {}): Promise<Document> {
  const { allowWrites, ...rest } = options;
  const inner = explain['explain'] as Document | undefined;
  const target = writeTarget(inner?.['pipeline']);
  if (target !== undefined && explain['verbosity'] !== 'queryPlanner' && allowWrites !== true && !scratches.has(nsKey(db, target))) {
    return refuse(`An explain that runs a pipeline writing to ${target}`);
  }
  return db.command(explain, rest);
}

/** The collection a pipeline's $out or $merge writes, or undefined when it writes nothing. */
function writeTarget(pipeline: unknown): string | undefined {
  if (!Array.isArray(pipeline)) return undefined;
  for (const stage of pipeline as Document[]) {
    const out = stage?.['$out'] ?? stage?.['$merge'];
    if (out === undefined) continue;
    if (typeof out === 'string') return out;
    const into = (out as Document)['into'] ?? (out as Document)['coll'];
    return typeof into === 'string' ? into : typeof (into as Document | undefined)?.['coll'] === 'string' ? String((into as Document)['coll']) : '(a collection)';
  }
  return undefined;
}

/** An aggregation on a collection, its results read; $out or $merge only into a scratch collection of ours. */
export function mongoAggregate(db: Db, collection: string, pipeline: Document[], options: AggregateOptions = {}): Promise<Document[]> {
  const target = writeTarget(pipeline);
  if (target !== undefined && !scratches.has(nsKey(db, target))) return refuse(`A pipeline writing to ${target}`);
  return db.collection(collection).aggregate(pipeline, options).toArray();
}

export function mongoCountDocuments(db: Db, collection: string, filter: Document, options: CountDocumentsOptions = {}): Promise<number> {
  return db.collection(collection).countDocuments(filter, options);
}

export function mongoEstimatedCount(db: Db, collection: string, options: EstimatedDocumentCountOptions = {}): Promise<number> {
  return db.collection(collection).estimatedDocumentCount(options);
}

export function mongoListCollections(db: Db, filter: Document, options: ListCollectionsOptions = {}): Promise<Document[]> {
  return db.listCollections(filter, options).toArray();
}

export function mongoListIndexes(db: Db, collection: string, options: ListIndexesOptions = {}): Promise<Document[]> {
  return db.collection(collection).listIndexes(options).toArray();
}

/** Creates a scratch collection with its marker; from then on $out, indexes and collMod may reach it. */
export async function mongoCreateScratch(db: Db, name: string, marker: ScratchMarker, options: CreateCollectionOptions = {}): Promise<void> {
  scratches.add(nsKey(db, name));
  await db.createCollection(name, { ...scratchOptions(marker), ...options });
}

/** Builds indexes on a scratch collection of ours. */
export function mongoScratchIndexes(db: Db, scratch: string, specs: Document[], options: CreateIndexesOptions = {}): Promise<string[]> {
  if (!scratches.has(nsKey(db, scratch))) return refuse(`Indexes on ${scratch}, which is not a scratch collection of this run,`);
  return db.collection(scratch).createIndexes(specs as never, options);
}

/** Hides or shows an index of a scratch collection of ours (collMod). */
export function mongoScratchCollMod(db: Db, scratch: string, change: Document, options: RunCommandOptions = {}): Promise<Document> {
  if (!scratches.has(nsKey(db, scratch))) return refuse(`collMod of ${scratch}, which is not a scratch collection of this run,`);
  return db.command({ collMod: scratch, ...change }, options);
}

/**
 * Drops a scratch collection: only when the server shows it with the scratch marker, whatever its name
 * and whoever made it (a sweep drops those of killed runs). Resolves whether it was dropped; a collection
 * that is gone already is not an error.
 */
export async function mongoDropScratch(db: Db, name: string, options: DropCollectionOptions = {}): Promise<boolean> {
  const listed = await db.listCollections({ name }, {}).toArray();
  const info = listed[0];
  if (!info) return false;
  if (scratchMarkerOf((info as Document)['options']) === undefined) return refuse(`Dropping ${name}, which carries no scratch marker,`);
  const ok = await db.collection(name).drop(options);
  scratches.delete(nsKey(db, name));
  return ok;
}

/** The user's index build, after their consent (the createIndexes command as written for it). */
export function mongoBuildIndex(db: Db, command: Document, options: RunCommandOptions = {}): Promise<Document> {
  if (typeof command['createIndexes'] !== 'string') return refuse('An index build without its collection');
  for (const ix of (command['indexes'] as Document[] | undefined) ?? []) if (typeof ix['name'] === 'string') built.add(nsKey(db, command['createIndexes'], ix['name']));
  return db.command(command, options);
}

/** Drops an index this process built (an index build cancelled or failed half-way), never another. */
export function mongoDropBuiltIndex(db: Db, collection: string, name: string, options: RunCommandOptions = {}): Promise<Document> {
  if (!built.has(nsKey(db, collection, name))) return refuse(`Dropping the index ${name}, which this run did not build,`);
  return db.command({ dropIndexes: collection, index: name }, options);
}
