// The Gateway backed by the database adapters (src/adapters). Loaded lazily by main.ts on the first
// command that needs a server, so activation never loads a driver. One connection per explain: it
// explains, lists the indexes the advisor must know about, and closes; Cancel aborts the explain, which
// the adapters turn into a kill on the server (pg_cancel_backend / killOp).

import type { ExistingMongoIndex, ExistingPgIndex } from '../core/advice/types';
import type { Plan } from '../core/model';
import type { ExplainResult } from '../adapters/types';
import type { PostgresIndexInfo } from '../adapters/postgres';
import type { MongoIndexInfo } from '../adapters/mongodb';
import { UserError } from './commands';
import type { ExplainOutcome, ExplainRequest, Gateway, IndexCheck, RunningExplain, ServerInfo } from './gateway';
import type { Log } from './log';

/** Turns an adapter result into what the extension shows; a plan the core refuses is one sentence. */
function outcomeOf(result: ExplainResult): ExplainOutcome {
  if (!result.load.ok) throw new UserError(result.load.refusal);
  const outcome: ExplainOutcome = {
    plan: result.load.plan, rawText: result.rawText, durationMs: result.durationMs, rolledBack: result.rolledBack && result.writes, notes: result.notes,
  };
  // PostgreSQL prints "15.20 (Debian 15.20-0+deb12u1)": the number is what a list has room for.
  if (result.serverVersion) outcome.serverVersion = result.serverVersion.split(' ')[0]!;
  return outcome;
}

function mongoExisting(list: MongoIndexInfo[]): ExistingMongoIndex[] {
  return list.map((ix) => {
    const e: ExistingMongoIndex = { name: ix.name, key: ix.key, unique: ix.unique, sparse: ix.sparse, hidden: ix.hidden };
    if (ix.partialFilterExpression) e.partialFilterExpression = ix.partialFilterExpression;
    return e;
  });
}

function pgExisting(list: PostgresIndexInfo[]): ExistingPgIndex[] {
  return list.map((ix) => {
    const e: ExistingPgIndex = {
      name: ix.name, table: ix.table, schema: ix.schema, method: ix.method, unique: ix.unique, primary: ix.primary, invalid: !ix.valid,
      columns: ix.columns.map((c) => (/^[A-Za-z_][A-Za-z0-9_]*$|^"[^"]+"$/.test(c.expression)
        ? { column: c.expression.replace(/^"|"$/g, ''), desc: c.descending, nullsFirst: c.nullsFirst }
        : { expression: c.expression, desc: c.descending, nullsFirst: c.nullsFirst })),
    };
    if (ix.include.length > 0) e.include = ix.include;
    if (ix.predicate) e.predicate = ix.predicate;
    return e;
  });
}

function rootCost(plan: Plan): number {
  return plan.root.metrics.totalCost ?? Number.NaN;
}

export function createGateway(log: Log): Gateway {
  return {
    async test(engine, uri, connectTimeoutMs): Promise<ServerInfo> {
      if (engine === 'postgres') {
        const pg = await import('../adapters/postgres');
        const conn = await pg.connectPostgres({ uri, connectTimeoutMs });
        try {
          const hypo = await conn.hypopg().catch(() => undefined);
          const info: ServerInfo = { serverVersion: conn.serverVersion.split(' ')[0]! };
          if (hypo?.installed) info.detail = 'HypoPG is installed: suggested indexes are checked without building them';
          return info;
        } finally {
          await conn.close();
        }
      }
      const mongo = await import('../adapters/mongodb');
      const conn = await mongo.connectMongo({ uri, connectTimeoutMs });
      try {
        return { serverVersion: conn.server.version, detail: conn.server.detail };
      } finally {
        await conn.close();
      }
    },

    explain(request: ExplainRequest): RunningExplain {
      const controller = new AbortController();
      const signal = controller.signal;
      let done: Promise<ExplainOutcome>;
      if (request.engine === 'postgres') {
        done = import('../adapters/postgres').then(async (pg) => {
          const conn = await pg.connectPostgres({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs });
          try {
            const result = await conn.explain(request.text, { analyze: request.analyze, buffers: request.buffers, timeoutMs: request.timeoutMs, signal });
            const outcome = outcomeOf(result);
            try {
              outcome.existing = { postgres: pgExisting(await conn.listIndexes()) };
            } catch (err) {
              log.warn(`Listing the indexes failed, so the advice ignores them: ${(err as Error).message}`);
            }
            return outcome;
          } finally {
            await conn.close();
          }
        });
      } else {
        const command = request.command;
        if (!command) throw new Error('a MongoDB explain request needs its parsed command');
        done = import('../adapters/mongodb').then(async (mongo) => {
          const conn = await mongo.connectMongo({ uri: request.uri, connectTimeoutMs: request.connectTimeoutMs });
          try {
            const result = await conn.explain(command, { verbosity: request.verbosity, timeoutMs: request.timeoutMs, signal, allowWrites: request.allowWrites });
            const outcome = outcomeOf(result);
            try {
              outcome.existing = { mongodb: mongoExisting(await conn.listIndexes(command.collection, command.database)) };
            } catch (err) {
              log.warn(`Listing the indexes failed, so the advice ignores them: ${(err as Error).message}`);
            }
            return outcome;
          } finally {
            await conn.close();
          }
        });
      }
      return {
        done,
        cancel: async () => {
          controller.abort();
        },
      };
    },

    async checkIndex(uri, sql, createIndex, allowTrialBuild, timeoutMs): Promise<IndexCheck> {
      const pg = await import('../adapters/postgres');
      const conn = await pg.connectPostgres({ uri });
      try {
        const hypo = await conn.hypopg();
        const method = hypo.installed ? 'hypopg' : 'trial-index';
        if (method === 'trial-index' && !allowTrialBuild) throw new UserError('HypoPG is not installed on this server, and building the index inside a rolled-back transaction was not allowed.');
        const before = await conn.explain(sql, { timeoutMs });
        const after = await conn.explain(sql, { timeoutMs, indexes: { ddl: [createIndex], mode: method === 'hypopg' ? 'hypothetical' : 'transaction' } });
        if (!before.load.ok) throw new UserError(before.load.refusal);
        if (!after.load.ok) throw new UserError(after.load.refusal);
        // The new index shows up in the plan under a name the plan without it does not have.
        const namesBefore = new Set(before.load.plan.nodes.map((n) => n.details.indexName).filter((x) => x !== undefined));
        const used = after.load.plan.nodes.some((n) => n.details.indexName !== undefined && !namesBefore.has(n.details.indexName));
        return { method, costBefore: rootCost(before.load.plan), costAfter: rootCost(after.load.plan), used };
      } finally {
        await conn.close();
      }
    },
  };
}
