// Starts the language server (dist/server.js, node IPC) that gives inline index advice while coding, and
// is the server's only window on live databases: when the server asks for the schema of the collections
// and tables an open document uses, and that document's folder has a connection bound (this never
// prompts for one), the extension connects through the adapters, lists the indexes and sends them with
// the typed messages of src/protocol/languageServer.ts. No address or password ever reaches the server.
// Also registers the commands the server's code actions and lenses run: copy text, suggest index,
// create index (build.ts).

import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type ServerOptions } from 'vscode-languageclient/node';
import type { Catalog, CatalogRelation, ExistingMongoIndex, ExistingPgIndex } from '../core/index';
import { parseMongoQuery } from '../core/index';
import {
  AdviceWanted, CapReached, ClearAdvice, ClearSchema, ClientCommands, ExplainWanted, LANGUAGE_SERVER_PROTOCOL_VERSION, ListQueries, SchemaNeeded, SetAdvice, SetPlans, SetSchema,
  type AdviceWantedParams, type SetAdviceParams, type CreateIndexArgs, type ExplainWantedParams, type InlineExplainArgs, type SchemaNeededParams, type SetPlansParams, type ServerInitOptions, type SetSchemaParams,
} from '../protocol/languageServer';
import { typedMessages, type TypedMessages } from '../protocol/messages';
import { isCollectionFamily } from '../core/index';
import { Commands } from './commands';
import { connectionUri, type ConnectionSpec } from './connections/spec';
import type { AdviceHub } from './adviceHub';
import type { IndexBuilder } from './build';
import type { CapStatus } from './capStatus';
import { SETTINGS } from './config';
import type { ConnectionChoice } from './connectionChoice';
import type { Bindings } from './connections/bindings';
import { summarize } from './planSummary';
import { SERVER_DOCUMENTS } from './documentQueries';
import type { DocumentQueries } from './documentQueries';
import type { Log } from './log';

/** Starts the client and server; resolves once the server answered initialize (or undefined when it could not start). */
/** What the language client is built with (main.ts). */
export interface ClientParts {
  log: Log;
  /** The connection bound to a document's folder: the only one the server's requests are answered on. */
  bindings: Bindings;
  connections: ConnectionChoice;
  advice: AdviceHub;
  caps: CapStatus;
  queries: DocumentQueries;
  builder: IndexBuilder;
}

export async function startLanguageClient(context: vscode.ExtensionContext, services: ClientParts): Promise<LanguageClient | undefined> {
  const module = context.asAbsolutePath('dist/server.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const init: ServerInitOptions = {
    protocolVersion: LANGUAGE_SERVER_PROTOCOL_VERSION,
    codeLens: vscode.workspace.getConfiguration(SETTINGS).get<boolean>('codeLens.enabled', true),
  };
  const client = new LanguageClient('queryPlanInspector', 'Query Plan Inspector Language Server', serverOptions, {
    documentSelector: SERVER_DOCUMENTS,
    initializationOptions: init,
    middleware: {
      // The setting is read at each request, so turning the lenses off needs no restart of the server.
      provideCodeLenses: async (doc, token, next) => (vscode.workspace.getConfiguration(SETTINGS).get<boolean>('codeLens.enabled', true) ? next(doc, token) : []),
    },
  });
  // The custom messages go through their typed descriptors (src/protocol/languageServer.ts).
  const server = typedMessages<'client'>(client);
  const schemas = new SchemaFetcher(server, services);
  registerCommands(context, services);
  context.subscriptions.push(
    client,
    server.onNotification(SchemaNeeded, (p) => void schemas.fetch(p)),
    server.onNotification(ExplainWanted, (p) => void schemas.explain(p)),
    server.onNotification(AdviceWanted, (p) => void schemas.advise(p)),
    server.onNotification(CapReached, (p) => services.caps.report(p)),
    // Another connection for a folder: every face asks again.
    services.bindings.onDidChange(() => services.advice.invalidate({})),
    // Advice dropped (Create Index, Refresh Connections, an index change the advice service saw, a
    // connection switch): the server forgets the index lists, plans and verdicts of every document and
    // asks again, so the lens and the squiggles follow the panel.
    services.advice.onInvalidated(() => void server.notify(ClearSchema, {})),
    // A measurement changed a cached answer in place: the index lists and plans still hold, so the
    // server only drops its verdicts and asks the advice service again, which answers from its cache.
    services.advice.onMeasured(() => void server.notify(ClearAdvice, {})),
  );
  try {
    await client.start();
    // Explain at the cursor picks from the queries the server's Explain lens is drawn above.
    context.subscriptions.push(services.queries.serve((uri) => server.request(ListQueries, { uri })));
    services.log.info('The language server started: inline index advice is on for SQL, JavaScript, TypeScript and .mongodb.js files.');
    return client;
  } catch (err) {
    services.log.error('The language server could not start; inline advice is off', err);
    return undefined;
  }
}

/**
 * Fetches index lists for the server whenever it asks (once per document and target, and again after
 * every invalidation): a list kept per connection would leave a document opened later without one.
 */
class SchemaFetcher {
  constructor(private readonly server: TypedMessages<'client'>, private readonly s: ClientParts) {}

  async fetch(p: SchemaNeededParams): Promise<void> {
    const uri = vscode.Uri.parse(p.uri);
    try {
      for (const engine of ['mongodb', 'postgres'] as const) {
        const spec = (engine === 'mongodb' ? p.mongodb : p.postgres).length > 0 ? this.s.bindings.get(uri, engine) : undefined;
        if (!spec) continue;
        // Said first, so the lens waits for the connection's verdict instead of guessing without it.
        await this.server.request(SetSchema, { uris: [p.uri], engine, connectionName: spec.name, ...(engine === 'mongodb' ? { collections: [] } : { tables: [] }) });
        if (engine === 'mongodb') await this.mongo(p.uri, spec, p.mongodb);
        else await this.postgres(p.uri, spec, p.postgres.map((t) => t.table));
      }
    } catch (err) {
      // Background work: a server that is down costs a log line, not a notification.
      this.s.log.warn(`Inline advice without index lists: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * Plain explains the server asked for, on the folder's connection: queryPlanner for MongoDB, EXPLAIN
   * without ANALYZE for PostgreSQL, so nothing is executed. Only a summary of each plan is sent back.
   */
  async explain(p: ExplainWantedParams): Promise<void> {
    const uri = vscode.Uri.parse(p.uri);
    for (const engine of ['mongodb', 'postgres'] as const) {
      const queries = p.queries.filter((q) => q.engine === engine);
      const spec = queries.length > 0 ? this.s.bindings.get(uri, engine) : undefined;
      if (!spec) continue;
      const plans: SetPlansParams['plans'] = [];
      try {
        const connectUri = connectionUri(spec, await this.s.connections.password(spec));
        if (engine === 'mongodb') {
          const mongo = await import('../adapters/mongodb');
          const conn = await mongo.connectMongo({ uri: connectUri, connectTimeoutMs: 10_000 });
          try {
            for (const q of queries) {
              const cmd = parseMongoQuery(q.text);
              if (!cmd.ok) {
                plans.push({ engine, text: q.text, error: cmd.error });
                continue;
              }
              const r = await conn.explain(cmd.command, { verbosity: 'queryPlanner', timeoutMs: 5_000 }).catch((err: unknown) => err as Error);
              plans.push(planEntry(engine, q.text, r));
            }
          } finally {
            await conn.close();
          }
        } else {
          const pg = await import('../adapters/postgres');
          const conn = await pg.connectPostgres({ uri: connectUri, connectTimeoutMs: 10_000 });
          try {
            for (const q of queries) {
              const r = await conn.explain(q.text, { analyze: false, buffers: false, timeoutMs: 5_000 }).catch((err: unknown) => err as Error);
              plans.push(planEntry(engine, q.text, r));
            }
          } finally {
            await conn.close();
          }
        }
        await this.server.request(SetPlans, { uris: [p.uri], connectionName: spec.name, plans });
        this.s.log.info(`Inline advice: ${plans.filter((x) => x.summary).length} of ${queries.length} queries explained without running them on ${spec.name}.`);
      } catch (err) {
        this.s.log.warn(`Inline advice without background plans: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /**
   * The advice service's verdicts for queries of a connected document (the same service and cache the
   * plan panel uses), sent to the server for its lens, squiggles and hover. A query that cannot be
   * advised here is sent back with the reason, and the server's own rules answer for it.
   */
  async advise(p: AdviceWantedParams): Promise<void> {
    const uri = vscode.Uri.parse(p.uri);
    for (const engine of ['mongodb', 'postgres'] as const) {
      const queries = p.queries.filter((q) => q.engine === engine);
      if (queries.length === 0) continue;
      const spec = this.s.bindings.get(uri, engine);
      const entries: SetAdviceParams['entries'] = [];
      const fail = (error: string) => entries.push(...queries.filter((q) => !entries.some((e) => e.text === q.text)).map((q) => ({ engine, text: q.text, error })));
      try {
        if (!spec) {
          fail('no connection is bound to this folder');
        } else {
          const service = await this.s.advice.service();
          const connectUri = connectionUri(spec, await this.s.connections.password(spec));
          const adv = await import('../adapters/advise');
          const options = { timeoutMs: 15_000, where: spec.name };
          if (engine === 'mongodb') {
            const session = await adv.openMongoAdvice({ uri: connectUri, connectTimeoutMs: 10_000 });
            try {
              for (const q of queries) {
                const cmd = parseMongoQuery(q.text);
                if (!cmd.ok) {
                  entries.push({ engine, text: q.text, error: cmd.error });
                  continue;
                }
                const live = await service.mongo(session, cmd.command, { connection: spec.id, options }).catch((err: unknown) => err as Error);
                entries.push(live instanceof Error ? { engine, text: q.text, error: live.message } : { engine, text: q.text, advice: live.advice });
              }
            } finally {
              await session.close();
            }
          } else {
            const session = await adv.openPostgresAdvice({ uri: connectUri, connectTimeoutMs: 10_000, timeoutMs: options.timeoutMs });
            try {
              for (const q of queries) {
                const live = await service.postgres(session, q.text, { connection: spec.id, options }).catch((err: unknown) => err as Error);
                entries.push(live instanceof Error ? { engine, text: q.text, error: live.message } : { engine, text: q.text, advice: live.advice });
              }
            } finally {
              await session.close();
            }
          }
        }
      } catch (err) {
        fail(err instanceof Error ? err.message : String(err));
      }
      await this.server.request(SetAdvice, { uris: [p.uri], connectionName: spec?.name ?? '', entries });
      const given = entries.filter((e) => e.advice).length;
      this.s.log.info(`Inline advice: ${given} of ${queries.length} ${engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'} queries advised by the connection's advice service${spec ? ` on ${spec.name}` : ''}.`);
    }
  }

  private async mongo(docUri: string, spec: ConnectionSpec, todo: { database?: string; collection: string }[]): Promise<void> {
    if (todo.length === 0) return;
    const mongo = await import('../adapters/mongodb');
    const conn = await mongo.connectMongo({ uri: connectionUri(spec, await this.s.connections.password(spec)), connectTimeoutMs: 10_000 });
    try {
      const collections: NonNullable<SetSchemaParams['collections']> = [];
      for (const t of todo) {
        const relation = await relationOf(() => conn.catalog([t.collection], spec.name, t.database), t.collection);
        const list = await conn.listIndexes(t.collection, t.database);
        const indexes = list.map((ix) => {
          const e: ExistingMongoIndex = { name: ix.name, key: ix.key, unique: ix.unique, sparse: ix.sparse, hidden: ix.hidden };
          if (ix.partialFilterExpression) e.partialFilterExpression = ix.partialFilterExpression;
          return e;
        });
        collections.push({ name: t.collection, indexes, ...(t.database !== undefined ? { database: t.database } : {}), ...(relation !== undefined ? { relation } : {}) });
      }
      const r = await this.server.request(SetSchema, { uris: [docUri], engine: 'mongodb', connectionName: spec.name, collections });
      this.s.log.info(`Inline advice: index lists of ${collections.map((c) => c.name).join(', ')} from ${spec.name} (${r.advised} queries advised with them).`);
    } finally {
      await conn.close();
    }
  }

  private async postgres(docUri: string, spec: ConnectionSpec, todo: string[]): Promise<void> {
    if (todo.length === 0) return;
    const pg = await import('../adapters/postgres');
    const conn = await pg.connectPostgres({ uri: connectionUri(spec, await this.s.connections.password(spec)), connectTimeoutMs: 10_000 });
    try {
      const all = await conn.listIndexes();
      const byTable = new Map<string, ExistingPgIndex[]>(todo.map((t) => [t, []]));
      for (const ix of all) {
        const list = byTable.get(ix.table);
        if (!list) continue;
        const e: ExistingPgIndex = {
          name: ix.name, table: ix.table, schema: ix.schema, method: ix.method, unique: ix.unique, primary: ix.primary, invalid: !ix.valid,
          columns: ix.columns.map((c) => (/^[A-Za-z_][A-Za-z0-9_]*$|^"[^"]+"$/.test(c.expression)
            ? { column: c.expression.replace(/^"|"$/g, ''), desc: c.descending, nullsFirst: c.nullsFirst }
            : { expression: c.expression, desc: c.descending, nullsFirst: c.nullsFirst })),
        };
        if (ix.include.length > 0) e.include = ix.include;
        if (ix.predicate) e.predicate = ix.predicate;
        list.push(e);
      }
      // What each table is on the connection (a table, a view, nothing), read with the index lists.
      const catalog = await conn.catalog(todo.map((table) => ({ table })), spec.name).catch(() => undefined);
      const tablesParam = [...byTable].map(([name, indexes]) => ({ name, indexes, ...(catalog && name in catalog.relations ? { relation: catalog.relations[name] ?? null } : {}) }));
      const r = await this.server.request(SetSchema, { uris: [docUri], engine: 'postgres', connectionName: spec.name, tables: tablesParam });
      this.s.log.info(`Inline advice: index lists of ${todo.join(', ')} from ${spec.name} (${r.advised} queries advised with them).`);
    } finally {
      await conn.close();
    }
  }
}

function registerCommands(context: vscode.ExtensionContext, s: ClientParts): void {
  const reg = (id: string, fn: (...args: never[]) => Promise<unknown> | unknown) => {
    context.subscriptions.push(vscode.commands.registerCommand(id, async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        s.log.error(`${id} failed`, err);
        void vscode.window.showErrorMessage(`${err instanceof Error ? err.message : String(err)}`.replace(/([^.!?])$/, '$1.'));
        return undefined;
      }
    }));
  };
  reg(ClientCommands.copyText, async (args: { text: string; what?: string }) => {
    await vscode.env.clipboard.writeText(args.text);
    vscode.window.setStatusBarMessage(`${args.what ?? 'The text'} is on the clipboard.`, 4000);
  });
  reg(ClientCommands.suggestIndex, async (args: CreateIndexArgs) => {
    const choice = await vscode.window.showInformationMessage(`This query on ${args.target} wants the index: ${args.createText}`, 'Copy', 'Create Index...');
    if (choice === 'Copy') await vscode.commands.executeCommand(ClientCommands.copyText, { text: args.createText, what: 'The index command' });
    if (choice === 'Create Index...') await vscode.commands.executeCommand(ClientCommands.createIndex, args);
  });
  reg(ClientCommands.createIndex, async (args: CreateIndexArgs) => s.builder.create(args));
  reg(ClientCommands.explainInline, (args: InlineExplainArgs) => explainInline(args));
}

/**
 * The server's Explain lens: Explain at the query's place, which picks it from the server's queries as
 * Explain at the cursor does (the text with its constants resolved, or the values it asks for).
 */
function explainInline(args: InlineExplainArgs): Thenable<unknown> {
  return vscode.commands.executeCommand(Commands.explainQueryAt, { uri: args.uri, start: args.start, end: args.end });
}

/** What the catalog says one collection is; undefined when it could not be read (the lists are sent without it). */
async function relationOf(read: () => Promise<Catalog>, name: string): Promise<CatalogRelation | null | undefined> {
  if (isCollectionFamily(name)) return undefined;
  const catalog = await read().catch(() => undefined);
  return catalog && name in catalog.relations ? catalog.relations[name] ?? null : undefined;
}

/** What the server is told about one background explain: the plan's summary, or why there is none. */
function planEntry(engine: 'mongodb' | 'postgres', text: string, r: Error | { load: { ok: true; plan: Parameters<typeof summarize>[0] } | { ok: false; refusal: string } }): SetPlansParams['plans'][number] {
  if (r instanceof Error) return { engine, text, error: r.message };
  return r.load.ok ? { engine, text, summary: summarize(r.load.plan) } : { engine, text, error: r.load.refusal };
}
