// Starts the language server (dist/server.js, node IPC) that gives inline index advice while coding, and
// is the server's only window on live databases: when the server asks for the schema of the collections
// and tables an open document uses, and that document's folder has a connection bound (this never
// prompts for one), the extension connects through the adapters, lists the indexes and sends them with
// the typed messages of src/protocol/languageServer.ts. No address or password ever reaches the server.
// Also registers the commands the server's code actions and lenses run: copy text, suggest index,
// create index (shows the exact command and the connection, asks first, then builds it and refreshes the
// index lists so the diagnostics follow).

import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import type { ExistingMongoIndex, ExistingPgIndex } from '../core/advice/types';
import { parseMongoQuery } from '../core/query/mongoShell';
import {
  ClearSchema, ClientCommands, ExplainWanted, LANGUAGE_SERVER_PROTOCOL_VERSION, SchemaNeeded, SetPlans, SetSchema,
  type CreateIndexArgs, type ExplainWantedParams, type InlineExplainArgs, type SchemaNeededParams, type SetPlansParams, type ServerInitOptions, type SetSchemaParams, type SetSchemaResult,
} from '../protocol/languageServer';
import { parseMongoCreateIndex, type IndexCreationResult } from '../core/query/createIndex';
import { Commands } from './commands';
import { connectionUri, type ConnectionSpec } from './connections/spec';
import { summarize } from './planSummary';
import { findQueries, sourceKind } from './queries';
import { passwordFor, SETTINGS, type Services } from './explain';

/** How long a fetched index list is trusted before the server's next request fetches it again. */
const SCHEMA_TTL_MS = 5 * 60_000;

const SELECTOR: LanguageClientOptions['documentSelector'] = [
  ...['file', 'untitled'].flatMap((scheme) => ['sql', 'javascript', 'typescript', 'javascriptreact', 'typescriptreact'].map((language) => ({ scheme, language }))),
  { pattern: '**/*.mongodb.js' },
];

/** Starts the client and server; resolves once the server answered initialize (or undefined when it could not start). */
export async function startLanguageClient(context: vscode.ExtensionContext, services: Services): Promise<LanguageClient | undefined> {
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
    documentSelector: SELECTOR,
    initializationOptions: init,
    middleware: {
      // The extension draws "Explain" above the queries its own finder sees; the server's "Explain" is
      // kept only for the others (a collection held in a constant, a filter in a variable...).
      provideCodeLenses: async (doc, token, next) => {
        if (!vscode.workspace.getConfiguration(SETTINGS).get<boolean>('codeLens.enabled', true)) return [];
        const lenses = (await next(doc, token)) ?? [];
        const text = doc.getText();
        const drawn = new Set(findQueries(text, sourceKind(doc.languageId, doc.fileName)).map((q) => doc.positionAt(q.start).line));
        return lenses.filter((l) => l.command?.command !== ClientCommands.explainInline || !drawn.has(l.range.start.line));
      },
    },
  });
  const schemas = new SchemaFetcher(client, services);
  registerCommands(context, services, schemas);
  context.subscriptions.push(
    client,
    client.onNotification(SchemaNeeded, (p: SchemaNeededParams) => void schemas.fetch(p)),
    client.onNotification(ExplainWanted, (p: ExplainWantedParams) => void schemas.explain(p)),
    // Another connection for a folder: the server forgets what it knew and asks again.
    services.bindings.onDidChange(() => {
      schemas.forget();
      void client.sendNotification(ClearSchema, {});
    }),
  );
  try {
    await client.start();
    services.log.info('The language server started: inline index advice is on for SQL, JavaScript, TypeScript and .mongodb.js files.');
    return client;
  } catch (err) {
    services.log.error('The language server could not start; inline advice is off', err);
    return undefined;
  }
}

/** Fetches index lists for the server, at most once per connection and target in SCHEMA_TTL_MS. */
class SchemaFetcher {
  private readonly fetched = new Map<string, number>();

  constructor(private readonly client: LanguageClient, private readonly s: Services) {}

  forget(): void {
    this.fetched.clear();
  }

  /** Fetches these index lists again now, whatever was fetched before (after an index was built). */
  async refresh(p: SchemaNeededParams): Promise<void> {
    for (const key of [...this.fetched.keys()]) {
      const [, a, b] = key.split('\u0000');
      const stale = p.mongodb.some((t) => b !== undefined && a === (t.database ?? '') && b === t.collection)
        || p.postgres.some((t) => b === undefined && a === t.table);
      if (stale) this.fetched.delete(key);
    }
    await this.fetch(p);
  }

  async fetch(p: SchemaNeededParams): Promise<void> {
    const uri = vscode.Uri.parse(p.uri);
    try {
      if (p.mongodb.length > 0) {
        const spec = this.s.bindings.get(uri, 'mongodb');
        if (spec) await this.mongo(p.uri, spec, p.mongodb);
      }
      if (p.postgres.length > 0) {
        const spec = this.s.bindings.get(uri, 'postgres');
        if (spec) await this.postgres(p.uri, spec, p.postgres.map((t) => t.table));
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
        const connectUri = connectionUri(spec, await passwordFor(this.s, spec));
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
              plans.push(r instanceof Error ? { engine, text: q.text, error: r.message } : r.load.ok ? { engine, text: q.text, summary: summarize(r.load.plan) } : { engine, text: q.text, error: r.load.refusal });
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
              plans.push(r instanceof Error ? { engine, text: q.text, error: r.message } : r.load.ok ? { engine, text: q.text, summary: summarize(r.load.plan) } : { engine, text: q.text, error: r.load.refusal });
            }
          } finally {
            await conn.close();
          }
        }
        await this.client.sendRequest(SetPlans, { uris: [p.uri], connectionName: spec.name, plans } satisfies SetPlansParams);
        this.s.log.info(`Inline advice: ${plans.filter((x) => x.summary).length} of ${queries.length} queries explained without running them on ${spec.name}.`);
      } catch (err) {
        this.s.log.warn(`Inline advice without background plans: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  private fresh(key: string): boolean {
    const at = this.fetched.get(key);
    if (at !== undefined && Date.now() - at < SCHEMA_TTL_MS) return true;
    this.fetched.set(key, Date.now());
    return false;
  }

  private async mongo(docUri: string, spec: ConnectionSpec, targets: { database?: string; collection: string }[]): Promise<void> {
    const todo = targets.filter((t) => !this.fresh(`${spec.id}\u0000${t.database ?? ''}\u0000${t.collection}`));
    if (todo.length === 0) return;
    const mongo = await import('../adapters/mongodb');
    const conn = await mongo.connectMongo({ uri: connectionUri(spec, await passwordFor(this.s, spec)), connectTimeoutMs: 10_000 });
    try {
      const collections: NonNullable<SetSchemaParams['collections']> = [];
      for (const t of todo) {
        const list = await conn.listIndexes(t.collection, t.database);
        const indexes = list.map((ix) => {
          const e: ExistingMongoIndex = { name: ix.name, key: ix.key, unique: ix.unique, sparse: ix.sparse, hidden: ix.hidden };
          if (ix.partialFilterExpression) e.partialFilterExpression = ix.partialFilterExpression;
          return e;
        });
        collections.push({ name: t.collection, indexes, ...(t.database !== undefined ? { database: t.database } : {}) });
      }
      const r = await this.client.sendRequest<SetSchemaResult>(SetSchema, { uris: [docUri], engine: 'mongodb', connectionName: spec.name, collections } satisfies SetSchemaParams);
      this.s.log.info(`Inline advice: index lists of ${collections.map((c) => c.name).join(', ')} from ${spec.name} (${r.advised} queries advised with them).`);
    } finally {
      await conn.close();
    }
  }

  private async postgres(docUri: string, spec: ConnectionSpec, tables: string[]): Promise<void> {
    const todo = tables.filter((t) => !this.fresh(`${spec.id}\u0000${t}`));
    if (todo.length === 0) return;
    const pg = await import('../adapters/postgres');
    const conn = await pg.connectPostgres({ uri: connectionUri(spec, await passwordFor(this.s, spec)), connectTimeoutMs: 10_000 });
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
      const tablesParam = [...byTable].map(([name, indexes]) => ({ name, indexes }));
      const r = await this.client.sendRequest<SetSchemaResult>(SetSchema, { uris: [docUri], engine: 'postgres', connectionName: spec.name, tables: tablesParam } satisfies SetSchemaParams);
      this.s.log.info(`Inline advice: index lists of ${todo.join(', ')} from ${spec.name} (${r.advised} queries advised with them).`);
    } finally {
      await conn.close();
    }
  }
}

function registerCommands(context: vscode.ExtensionContext, s: Services, schemas: SchemaFetcher): void {
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
  reg(ClientCommands.createIndex, async (args: CreateIndexArgs) => createIndex(s, schemas, args));
  reg(ClientCommands.explainInline, async (args: InlineExplainArgs) => explainInline(s, args));
}

/**
 * Explains a query the server found. The server's text has its constants resolved, so it is preferred,
 * on the connection bound to the document's folder; a query the server could only read with variables is
 * handed to the extension's own Explain at its position (which asks for literal values the same way).
 */
async function explainInline(s: Services, args: InlineExplainArgs): Promise<unknown> {
  if (args.text !== undefined) {
    const spec = s.bindings.get(vscode.Uri.parse(args.uri), args.engine);
    return vscode.commands.executeCommand(Commands.explainQueryAt, { text: args.text, engine: args.engine, ...(spec ? { connectionId: spec.id } : {}) });
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(args.uri));
  const seen = findQueries(doc.getText(), sourceKind(doc.languageId, doc.fileName)).some((q) => q.start <= args.start && args.start <= q.end);
  if (seen) return vscode.commands.executeCommand(Commands.explainQueryAt, { uri: args.uri, start: args.start, end: args.end });
  throw new Error(args.problem ?? 'This query cannot be explained as written: give it literal values.');
}

/**
 * Shows the exact command and the connection it would run on, and asks before anything happens. "Create
 * Index" builds it through the adapters under a cancellable progress notification (cancel stops the build
 * on the server), then fetches the index lists again so the server re-advises with the new index. The
 * command can also be copied, or opened as a script for the user's own shell or client.
 */
async function createIndex(s: Services, schemas: SchemaFetcher, args: CreateIndexArgs): Promise<void> {
  const docUri = vscode.Uri.parse(args.uri);
  let spec = s.bindings.get(docUri, args.engine);
  const engineName = args.engine === 'postgres' ? 'PostgreSQL' : 'MongoDB';
  if (!spec) {
    const pick = await vscode.window.showWarningMessage(
      `No ${engineName} connection is bound to this file's folder, so the index cannot be created here yet.`,
      'Choose Connection', 'Copy Command',
    );
    if (pick === 'Copy Command') {
      await vscode.env.clipboard.writeText(args.createText);
      vscode.window.setStatusBarMessage('The index command is on the clipboard.', 4000);
      return;
    }
    if (pick !== 'Choose Connection') return;
    spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.selectConnection, { engine: args.engine, uri: args.uri });
    if (!spec) return;
  }
  const where = ` on ${spec.name}`;
  const lock = args.engine === 'postgres'
    ? /\bconcurrently\b/i.test(args.createText)
      ? 'CREATE INDEX CONCURRENTLY does not block writes but takes longer, and runs outside a transaction; if it fails or is cancelled, the invalid index it leaves is dropped.'
      : 'CREATE INDEX blocks writes to the table while it builds; CREATE INDEX CONCURRENTLY does not, but takes longer.'
    : 'The build reads the whole collection and uses memory and I/O while it runs; writes go on meanwhile.';
  const message = `Create this index${where}?`;
  const detail = `${args.createText}\n\n${lock}${args.reason ? `\n\n${args.reason}` : ''}`;
  let choice: string | undefined;
  if (s.consent) {
    // Tests answer the modal through the consent hook: agreeing means "Create Index".
    choice = (await s.consent({ kind: args.engine === 'postgres' ? 'pg-build' : 'mongo-trial', message, detail, accept: 'Create Index' })) ? 'Create Index' : undefined;
  } else {
    choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Create Index', 'Copy Command', 'Open as Script');
  }
  if (choice === 'Create Index') {
    await buildIndex(s, schemas, args, spec);
  } else if (choice === 'Copy Command') {
    await vscode.env.clipboard.writeText(args.createText);
    vscode.window.setStatusBarMessage('The index command is on the clipboard.', 4000);
  } else if (choice === 'Open as Script') {
    const content = args.engine === 'mongodb'
      ? `// Run in mongosh${where} (or a MongoDB playground).\n${args.database ? `use('${args.database}');\n` : ''}${args.createText}\n`
      : `-- Run with psql${where}.\n${args.createText.replace(/;?$/, ';')}\n`;
    const doc = await vscode.workspace.openTextDocument({ language: args.engine === 'mongodb' ? 'javascript' : 'sql', content });
    await vscode.window.showTextDocument(doc);
  }
}

/** Builds the index on the connection, then refreshes the index lists of the document's targets. */
async function buildIndex(s: Services, schemas: SchemaFetcher, args: CreateIndexArgs, spec: ConnectionSpec): Promise<IndexCreationResult | undefined> {
  const mongoSpec = args.engine === 'mongodb' ? parseMongoCreateIndex(args.createText) : undefined;
  if (mongoSpec && !mongoSpec.ok) throw new Error(mongoSpec.error);
  const connectUri = connectionUri(spec, await passwordFor(s, spec));
  s.log.info(`Creating an index on ${spec.name}: ${args.createText}`);
  let result: IndexCreationResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Creating the index on ${args.target} (${spec.name})`, cancellable: true },
      async (_progress, token) => {
        const controller = new AbortController();
        const sub = token.onCancellationRequested(() => controller.abort());
        try {
          if (mongoSpec?.ok) {
            const mongo = await import('../adapters/mongodb');
            const conn = await mongo.connectMongo({ uri: connectUri, connectTimeoutMs: 10_000 });
            try {
              return await conn.createIndex(mongoSpec.value, { signal: controller.signal, ...(args.database !== undefined ? { database: args.database } : {}) });
            } finally {
              await conn.close();
            }
          }
          const pg = await import('../adapters/postgres');
          const conn = await pg.connectPostgres({ uri: connectUri, connectTimeoutMs: 10_000 });
          try {
            return await conn.createIndex(args.createText, { signal: controller.signal });
          } finally {
            await conn.close();
          }
        } finally {
          sub.dispose();
        }
      },
    );
  } catch (err) {
    const sentence = s.log.clean(`${err instanceof Error ? err.message : String(err)}`.replace(/([^.!?])$/, '$1.'));
    s.log.error(`Create Index on ${spec.name} failed: ${sentence}`, err);
    const cancelled = (err as { kind?: unknown }).kind === 'cancelled';
    const shown = cancelled ? vscode.window.showInformationMessage(sentence, 'Show Log') : vscode.window.showErrorMessage(sentence, 'Show Log');
    void shown.then((c) => c === 'Show Log' && s.log.show());
    return undefined;
  }
  for (const note of result.notes) s.log.info(note);
  const seconds = result.durationMs < 1000 ? `${result.durationMs} ms` : `${(result.durationMs / 1000).toFixed(1)} s`;
  const line = result.created
    ? `Index ${result.name} created on ${result.target} (${spec.name}) in ${seconds}.`
    : `Index ${result.name} already existed on ${result.target} (${spec.name}); nothing was built.`;
  s.log.info(line);
  void vscode.window.showInformationMessage(line);
  const database = mongoSpec?.ok ? mongoSpec.value.database ?? args.database : undefined;
  const pgTable = args.engine === 'postgres' ? result.target.split('.').pop() : undefined;
  await schemas.refresh({
    uri: args.uri,
    mongodb: mongoSpec?.ok ? [{ collection: mongoSpec.value.collection, ...(database !== undefined ? { database } : {}) }] : [],
    postgres: pgTable ? [{ table: pgTable }] : [],
  });
  return result;
}
