// Wires the service to an LSP connection: the capabilities the server answers initialize with, the
// document sync, the standard features, the workspace's schema files and locks, and the custom messages
// of src/protocol/languageServer.ts, handled and sent only through their typed descriptors.

import { CodeLensRefreshRequest, DidChangeWatchedFilesNotification, TextDocumentSyncKind, type Connection, type InitializeResult } from 'vscode-languageserver';
import { fileURLToPath } from 'node:url';
import { loadSqlParser } from '../core/index';
import { typedMessages } from '../protocol/messages';
import { ClearAdvice, ClearSchema, LANGUAGE_SERVER_PROTOCOL_VERSION, ListQueries, SetAdvice, SetPlans, SetSchema, type ServerInitOptions } from '../protocol/languageServer';
import { WorkspaceSchema } from '../node/workspaceSchema';
import { nodeWorkspaceModules } from '../node/workspaceModules';
import { DEFAULT_OPTIONS, InlineAdviceService } from './service';
import { WorkspaceLocks } from './workspaceLock';

/** What the server uses of a connection (a fake one in the unit tests). */
export type ServerConnection = Pick<Connection,
  'onInitialize' | 'onInitialized' | 'onDidChangeWatchedFiles' | 'onDidOpenTextDocument' | 'onDidChangeTextDocument' | 'onDidCloseTextDocument'
  | 'onHover' | 'onCodeAction' | 'onCodeLens' | 'onRequest' | 'onNotification' | 'sendRequest' | 'sendNotification' | 'sendDiagnostics' | 'console' | 'client'>;

export function serve(connection: ServerConnection): void {
  const messages = typedMessages<'server'>(connection);
  let service: InlineAdviceService | undefined;
  let lensRefresh = false;
  let workspaceSchema: WorkspaceSchema | undefined;
  let workspaceLocks: WorkspaceLocks | undefined;
  let watchRegistration = false;
  /** Imports are followed into the workspace's files: a saved one may change what an open script's queries are. */
  let followsModules = false;

  connection.onInitialize(async (params): Promise<InitializeResult> => {
    const init = (params.initializationOptions ?? {}) as Partial<ServerInitOptions>;
    lensRefresh = params.capabilities.workspace?.codeLens?.refreshSupport === true;
    watchRegistration = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    if (init.protocolVersion !== undefined && init.protocolVersion !== LANGUAGE_SERVER_PROTOCOL_VERSION) {
      connection.console.warn(`The extension speaks protocol ${init.protocolVersion}, this server ${LANGUAGE_SERVER_PROTOCOL_VERSION}; custom messages may be ignored.`);
    }
    // The SQL parser is WASM and loads asynchronously; after this every read is synchronous.
    await loadSqlParser().catch((err: unknown) => connection.console.error(`The SQL parser could not be loaded, so SQL is not analysed: ${String(err)}`));
    service = new InlineAdviceService(
      {
        sendDiagnostics: (p) => void connection.sendDiagnostics(p),
        sendNotification: (type, p) => void messages.notify(type, p),
        log: (m) => connection.console.log(m),
        // Lenses are pulled by the editor: without this they would change only at the next edit or scroll.
        refreshLenses: () => {
          if (lensRefresh) void connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
        },
      },
      {
        ...DEFAULT_OPTIONS,
        ...(typeof init.debounceMs === 'number' && init.debounceMs >= 0 ? { debounceMs: init.debounceMs } : {}),
        ...(typeof init.codeLens === 'boolean' ? { codeLens: init.codeLens } : {}),
        ...(init.backgroundExplain === false ? { explainDelayMs: 0 } : {}),
        snippets: params.capabilities.workspace?.workspaceEdit?.snippetEditSupport === true,
      },
    );
    const roots = (params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : [])).filter((u) => u.startsWith('file:'));
    // Imports are followed into the first folder's files (the finder reads them on demand, kept per text).
    if (roots[0]) {
      followsModules = true;
      const modules = nodeWorkspaceModules(fileURLToPath(roots[0]));
      service.setWorkspaceModules(modules, (uri) => (uri.startsWith('file:') ? fileURLToPath(uri).split('\\').join('/') : undefined));
    }
    const folders = params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : []);
    if (init.repositorySchema !== false) {
      workspaceSchema = WorkspaceSchema.fromUris(folders, (schema) => service?.setRepositorySchema(schema), (m) => connection.console.log(m));
    }
    // The waivers of qpi.lock.json, so a finding `qpi check` lets pass shows as waived here too.
    workspaceLocks = WorkspaceLocks.fromUris(folders, (locks) => service?.setLocks(locks), (m) => connection.console.log(m));
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        codeActionProvider: { codeActionKinds: ['quickfix', ''] },
        codeLensProvider: { resolveProvider: false },
      },
      serverInfo: { name: 'Query Plan Inspector', version: '0.1.0' },
    };
  });

  connection.onInitialized(() => {
    // The editor watches the schema files, the scripts and the locks for the server, so a saved migration
    // or model changes the advice, a saved helper or caller changes the queries of the open files that
    // import it or that it imports, and a lock written by `qpi check --update` or edited by hand changes
    // the waivers.
    if (watchRegistration) {
      const watchers = [{ globPattern: '**/qpi.lock.json' }, ...(workspaceSchema || followsModules ? [{ globPattern: '**/*.{sql,prisma,js,jsx,ts,tsx,mjs,cjs,mts,cts}' }] : [])];
      void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers }).catch(() => undefined);
    }
    void workspaceLocks?.load().catch((err: unknown) => connection.console.error(`The workspace's qpi.lock.json could not be read: ${String(err)}`));
    void workspaceSchema?.load().catch((err: unknown) => connection.console.error(`The workspace's schema files could not be read: ${String(err)}`));
  });
  connection.onDidChangeWatchedFiles((p) => {
    const uris = p.changes.map((c) => c.uri);
    workspaceSchema?.changed(uris);
    workspaceLocks?.changed(uris);
    service?.workspaceFilesChanged(uris);
  });

  // The service keeps its own copy of each document it analyses and edits it with the editor's changes
  // (no document manager beside it: a second copy of every open file, and a comparison of the whole text
  // after each keystroke to find what changed).
  connection.onDidOpenTextDocument((p) => {
    service?.open(p.textDocument.uri, p.textDocument.languageId, p.textDocument.version, p.textDocument.text);
    // A lock in a folder between the document and the workspace's root (a monorepo package's).
    void workspaceLocks?.opened(p.textDocument.uri).catch(() => undefined);
  });
  connection.onDidChangeTextDocument((p) => service?.applyChanges(p.textDocument.uri, p.textDocument.version, p.contentChanges));
  connection.onDidCloseTextDocument((p) => service?.close(p.textDocument.uri));

  connection.onHover((p) => service?.hover(p.textDocument.uri, p.position) ?? null);
  connection.onCodeAction((p) => service?.codeActions(p) ?? []);
  connection.onCodeLens((p) => service?.codeLenses(p.textDocument.uri) ?? []);

  // The custom messages the extension sends (src/protocol/languageServer.ts).
  messages.onRequest(SetSchema, (p) => service?.setSchema(p) ?? { advised: 0 });
  messages.onRequest(SetPlans, (p) => service?.setPlans(p));
  messages.onNotification(ClearSchema, (p) => service?.clearSchema(p ?? {}));
  messages.onRequest(SetAdvice, (p) => service?.setAdvice(p));
  messages.onNotification(ClearAdvice, (p) => service?.clearAdvice(p ?? {}));
  messages.onRequest(ListQueries, async (p) => {
    await service?.settled(p.uri);
    return service?.listQueries(p.uri) ?? [];
  });
}
