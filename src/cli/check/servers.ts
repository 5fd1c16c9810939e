// The CI databases of one run: one connection per engine, each query explained on it (plain EXPLAIN on
// PostgreSQL, inside the adapter's rolled-back transaction: planning only, nothing runs; executionStats on
// MongoDB through the explain command, which changes no document and refuses $out/$merge), and the
// index lists the editor's findings are computed with. With --measure (and only then), the measured
// advice on the queries that fail, from the advice service `qpi advise --uri` asks (measure.ts).

import { existingMongo, existingPg, openMongoAdvice, openPostgresAdvice, type LiveAdvice, type MongoAdviceSession, type PostgresAdviceSession } from '../../adapters/advise';
import { AdviceService, type LiveAdviceOptions } from '../../adapters/adviceService';
import { isAdapterError } from '../../adapters/errors';
import { connectMongo, type MongoConnection } from '../../adapters/mongodb';
import type { PostgresConnection } from '../../adapters/postgres';
import { pgBindFromStatistics, type PgCatalog } from '../../adapters/stats';
import type { BindableMongo, Catalog, ExistingMongoIndex, ExistingPgIndex, Plan, PlanSignature } from '../../core/index';
import { catalogTargets, isCollectionFamily, versionNumber, missingNames, mongoVariableValue, parseMongoQuery, parsePostgresQuery } from '../../core/index';

export type Engine = 'mongodb' | 'postgres';

export const ENGINE_NAME: Record<Engine, string> = { mongodb: 'MongoDB', postgres: 'PostgreSQL' };

/** A database that cannot be used: the run stops with exit 4. */
export class EnvironmentProblem extends Error {}

export type Explained = { ok: true; plan: Plan; collection?: string; parameters?: PlanSignature['parameters'] } | { ok: false; why: string };

/** EXPLAIN (GENERIC_PLAN) arrived in PostgreSQL 16. */
const GENERIC_PLAN_FROM = 160000;

export class CiDatabases {
  private pg?: PostgresConnection;
  /** The catalog connection beside it (read-only): the statistics $n parameters are bound from before PostgreSQL 16. */
  private catalog?: PgCatalog;
  private mongo?: MongoConnection;
  private pgTables?: Map<string, ExistingPgIndex[]>;
  private readonly mongoIndexes = new Map<string, ExistingMongoIndex[]>();
  private readonly mongoCatalogs = new Map<string, Catalog>();

  private closeSession?: () => Promise<void>;
  /** The advice sessions `--measure` asks the advice service on (PostgreSQL's is the one the explains run on). */
  private pgSession?: PostgresAdviceSession;
  private mongoSession?: MongoAdviceSession;
  private readonly service = new AdviceService();

  constructor(private readonly timeoutMs: number) {}

  /**
   * Connects to each URI; an unreachable server or a refused login is an EnvironmentProblem. With
   * `measure`, MongoDB is opened as an advice session too, so the advice service can measure on it.
   */
  async connect(uris: Partial<Record<Engine, string>>, password: string | undefined, measure = false): Promise<void> {
    for (const engine of ['postgres', 'mongodb'] as const) {
      const uri = uris[engine];
      if (uri === undefined) continue;
      try {
        if (engine === 'postgres') {
          const session = await openPostgresAdvice({ uri, ...(password ? { password } : {}), applicationName: 'qpi check', connectTimeoutMs: 10_000, timeoutMs: this.timeoutMs });
          this.pg = session.conn;
          this.catalog = session.catalog;
          this.pgSession = session;
          this.closeSession = () => session.close();
        } else if (measure) {
          this.mongoSession = await openMongoAdvice({ uri, ...(password ? { password } : {}), appName: 'qpi check', connectTimeoutMs: 10_000 });
          this.mongo = this.mongoSession.conn;
        } else this.mongo = await connectMongo({ uri, ...(password ? { password } : {}), appName: 'qpi check', connectTimeoutMs: 10_000 });
      } catch (err) {
        if (isAdapterError(err)) throw new EnvironmentProblem(`The ${ENGINE_NAME[engine]} database cannot be used: ${err.message}`);
        throw err;
      }
    }
  }

  has(engine: Engine): boolean {
    return engine === 'postgres' ? this.pg !== undefined : this.mongo !== undefined;
  }

  serverVersion(engine: Engine): string | undefined {
    return engine === 'postgres' ? this.pg?.serverVersion : this.mongo?.serverVersion;
  }

  /** Explains one query's text; a server that stops answering is an EnvironmentProblem. */
  async explain(engine: Engine, text: string): Promise<Explained> {
    try {
      if (engine === 'postgres') {
        const r = await this.pg!.explain(text, { timeoutMs: this.timeoutMs });
        return r.load.ok ? { ok: true, plan: r.load.plan } : { ok: false, why: r.load.refusal };
      }
      const parsed = parseMongoQuery(text);
      if (!parsed.ok) return { ok: false, why: parsed.error };
      const r = await this.mongo!.explain(parsed.command, { verbosity: 'executionStats', timeoutMs: this.timeoutMs });
      return r.load.ok ? { ok: true, plan: r.load.plan, collection: parsed.command.collection } : { ok: false, why: r.load.refusal };
    } catch (err) {
      if (!isAdapterError(err)) throw err;
      if (err.kind === 'network' || err.kind === 'auth') throw new EnvironmentProblem(`The ${ENGINE_NAME[engine]} database stopped answering: ${err.message}`);
      return { ok: false, why: err.message };
    }
  }

  /**
   * Explains a statement with $n parameters the code binds at run time: from PostgreSQL 16 as a generic
   * plan (EXPLAIN GENERIC_PLAN: the plan a prepared statement is given for every value), before that with
   * values chosen from the statistics of the columns the parameters are compared to. `parameters` says
   * which, for the lock.
   */
  async explainWithParameters(sql: string): Promise<Explained> {
    const generic = (this.pg!.serverVersionNum ?? 0) >= GENERIC_PLAN_FROM;
    try {
      if (generic) {
        const r = await this.pg!.explain(sql, { timeoutMs: this.timeoutMs, genericPlan: true });
        return r.load.ok ? { ok: true, plan: r.load.plan, parameters: 'generic plan' } : { ok: false, why: r.load.refusal };
      }
      const bound = await pgBindFromStatistics(this.catalog!, sql);
      if (!bound.ok) return { ok: false, why: `The SQL has $n parameters bound at run time, and PostgreSQL ${versionNumber(this.pg!.serverVersion)} has no generic plan (16 and later): ${lowerFirst(bound.why)}` };
      const r = await this.pg!.explain(bound.sql, { timeoutMs: this.timeoutMs });
      return r.load.ok ? { ok: true, plan: r.load.plan, parameters: 'bound from statistics' } : { ok: false, why: r.load.refusal };
    } catch (err) {
      if (!isAdapterError(err)) throw err;
      if (err.kind === 'network' || err.kind === 'auth') throw new EnvironmentProblem(`The PostgreSQL database stopped answering: ${err.message}`);
      return { ok: false, why: err.message };
    }
  }

  /**
   * Explains a MongoDB query that takes values from the code with, for each variable, a value of the field it
   * is compared to in one document of the CI database, or a stand-in where no document has one.
   * `parameters` says which, for the lock.
   */
  async explainWithValues(collection: string, database: string | undefined, bindable: BindableMongo): Promise<Explained> {
    const fields = [...new Set(bindable.variables.flatMap((v) => (v.field !== undefined && (v.kind === 'value' || v.kind === 'list') ? [v.field] : [])))];
    let data: Map<string, unknown>;
    try {
      data = await this.mongo!.fieldValues(collection, fields, database, this.timeoutMs);
    } catch (err) {
      if (!isAdapterError(err)) throw err;
      if (err.kind === 'network' || err.kind === 'auth') throw new EnvironmentProblem(`The MongoDB database stopped answering: ${err.message}`);
      return { ok: false, why: err.message };
    }
    const fromData = !bindable.standInParts && fields.every((f) => data.has(f));
    const r = await this.explain('mongodb', bindable.text((v) => mongoVariableValue(v, v.field !== undefined ? data.get(v.field) : undefined)));
    return r.ok ? { ...r, parameters: fromData ? 'bound from data' : 'stand-in values' } : r;
  }

  /** Every PostgreSQL table's indexes, read once; `tables` read by a plan are added with none if they have none. */
  async pgIndexes(tables: readonly string[]): Promise<Map<string, ExistingPgIndex[]>> {
    if (!this.pgTables) {
      this.pgTables = new Map();
      for (const ix of await this.pg!.listIndexes()) {
        const e = existingPg(ix);
        this.pgTables.set(e.table, [...(this.pgTables.get(e.table) ?? []), e]);
      }
    }
    for (const t of tables) if (!this.pgTables.has(t)) this.pgTables.set(t, []);
    return this.pgTables;
  }

  /**
   * The tables or the collection a query reads that the CI database does not have (`where` names it in
   * the sentence), read from its catalog once per name; none when the catalog cannot be read.
   */
  async missing(engine: Engine, text: string, where: string): Promise<{ names: string[]; catalog?: Catalog }> {
    try {
      if (engine === 'postgres') {
        const parsed = await parsePostgresQuery(text);
        const names = parsed.ok ? catalogTargets(text, parsed.shapes.flatMap((s) => s.tables)) : [];
        if (names.length === 0) return { names: [] };
        const catalog = await this.pg!.catalog(names, where);
        return { names: missingNames(Object.keys(catalog.relations), catalog), catalog };
      }
      const parsed = parseMongoQuery(text);
      if (!parsed.ok || isCollectionFamily(parsed.command.collection)) return { names: [] };
      const { collection, database } = parsed.command;
      const key = `${database ?? ''}\u0000${collection}`;
      let catalog = this.mongoCatalogs.get(key);
      if (!catalog) {
        catalog = await this.mongo!.catalog([collection], where, database);
        this.mongoCatalogs.set(key, catalog);
      }
      return { names: missingNames([collection], catalog), catalog };
    } catch (err) {
      if (!isAdapterError(err) || err.kind === 'network') throw err;
      return { names: [] };
    }
  }

  /** One collection's indexes, read once. */
  async mongoIndexesOf(collection: string, database?: string): Promise<ExistingMongoIndex[]> {
    const key = `${database ?? ''}\u0000${collection}`;
    let list = this.mongoIndexes.get(key);
    if (!list) {
      try {
        list = (await this.mongo!.listIndexes(collection, database)).map(existingMongo);
      } catch (err) {
        if (!isAdapterError(err) || err.kind === 'network') throw err;
        list = [];
      }
      this.mongoIndexes.set(key, list);
    }
    return list;
  }

  /**
   * The measured advice `qpi advise --uri` gives for one query's text, from the same advice service:
   * PostgreSQL's candidates measured on temporary copies in a rolled-back transaction; MongoDB's on a
   * sample in a scratch collection that is always dropped (the caller's --measure is the consent, as --verify is for
   * qpi advise). Suggestions come back best measured first; a text the reader refuses comes back as its
   * sentence. Throws AdapterError.
   */
  async measure(engine: Engine, text: string, options: LiveAdviceOptions): Promise<LiveAdvice | string> {
    if (engine === 'postgres') {
      const session = this.pgSession!;
      const live = await this.service.postgres(session, text, { connection: 'qpi check', options });
      return this.service.measurePostgres(session, text, live, { ...options, measuredOrder: true });
    }
    const session = this.mongoSession;
    if (!session) return 'MongoDB was connected without --measure.';
    const parsed = parseMongoQuery(text, { placeholders: true });
    if (!parsed.ok) return parsed.error;
    const live = await this.service.mongo(session, parsed.command, { connection: 'qpi check', options });
    return this.service.measureMongo(session, parsed.command, live, { ...options, measuredOrder: true });
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.closeSession ? this.closeSession() : this.pg?.close(), this.mongoSession ? this.mongoSession.close() : this.mongo?.close()]);
  }
}

function lowerFirst(s: string): string {
  return s.length > 0 && !/^[A-Z]{2}/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}
