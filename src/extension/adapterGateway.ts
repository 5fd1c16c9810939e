// The Gateway backed by the database adapters (src/adapters). Loaded lazily by main.ts on the first
// command that needs a server, so activation never loads a driver.

import { UserError } from './commands';
import type { ExplainOutcome, ExplainRequest, Gateway, RunningExplain, ServerInfo } from './gateway';
import type { Log } from './log';
import type { ExplainResult } from '../adapters/types';

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

export function createGateway(log: Log): Gateway {
  return {
    async test(engine, uri, connectTimeoutMs): Promise<ServerInfo> {
      if (engine === 'postgres') {
        const pg = await import('../adapters/postgres');
        const conn = await pg.connectPostgres({ uri, connectTimeoutMs });
        try {
          const hypo = await conn.hypopg().catch(() => undefined);
          return { serverVersion: conn.serverVersion.split(' ')[0]!, detail: hypo?.installed ? 'HypoPG is installed: suggested indexes can be checked without building them.' : undefined };
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
      let done: Promise<ExplainOutcome>;
      if (request.engine === 'postgres') {
        done = import('../adapters/postgres').then(async (pg) => {
          const result = await pg.explainPostgres(
            { uri: request.uri, connectTimeoutMs: request.connectTimeoutMs },
            request.text,
            { analyze: request.analyze, buffers: request.buffers, timeoutMs: request.timeoutMs, signal: controller.signal },
          );
          return outcomeOf(result);
        });
      } else {
        const command = request.command;
        if (!command) throw new Error('a MongoDB explain request needs its parsed command');
        done = import('../adapters/mongodb').then(async (mongo) => {
          const result = await mongo.explainMongo(
            { uri: request.uri, connectTimeoutMs: request.connectTimeoutMs },
            command,
            { verbosity: request.verbosity, timeoutMs: request.timeoutMs, signal: controller.signal, allowWrites: request.allowWrites },
          );
          return outcomeOf(result);
        });
      }
      return {
        done,
        cancel: async () => {
          log.info('Cancel requested: stopping the statement on the server.');
          controller.abort();
        },
      };
    },
  };
}
