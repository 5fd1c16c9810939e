// The language server process (dist/server.js): inline index advice while coding. The extension starts
// it over node IPC (src/extension/languageClient.ts). It reads the open documents, what the extension
// sends through the messages of src/protocol/languageServer.ts, and the workspace's schema files
// (src/node/workspaceSchema.ts); it has no database driver and never sees a connection string or a password.

import { CodeLensRefreshRequest, createConnection, DidChangeWatchedFilesNotification, ProposedFeatures, TextDocumentSyncKind, type InitializeResult } from 'vscode-languageserver/node';
import { loadSqlParser } from '../core/index';
import {
  ClearAdvice, ClearSchema, ListQueries, SetAdvice, SetPlans, SetSchema, LANGUAGE_SERVER_PROTOCOL_VERSION,
  type ClearAdviceParams, type ClearSchemaParams, type ListQueriesParams, type ServerInitOptions, type SetAdviceParams, type SetPlansParams, type SetSchemaParams,
} from '../protocol/languageServer';
import { DEFAULT_OPTIONS, InlineAdviceService } from './service';
import { WorkspaceSchema } from '../node/workspaceSchema';
import { WorkspaceLocks } from './workspaceLock';
import { nodeWorkspaceModules } from '../node/workspaceModules';
import { fileURLToPath } from 'node:url';

const connection = createConnection(ProposedFeatures.all);
let service: InlineAdviceService | undefined;
let lensRefresh = false;
let workspaceSchema: WorkspaceSchema | undefined;
let workspaceLocks: WorkspaceLocks | undefined;
let watchRegistration = false;

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
      sendNotification: (method, p) => void connection.sendNotification(method, p),
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
    const modules = nodeWorkspaceModules(fileURLToPath(roots[0]));
    service!.setWorkspaceModules(modules, (uri) => (uri.startsWith('file:') ? fileURLToPath(uri).split('\\').join('/') : undefined));
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
  // The editor watches the schema files and the locks for the server, so a saved migration or model
  // changes the advice, and a lock written by `qpi check --update` or edited by hand changes the waivers.
  if (watchRegistration) {
    const watchers = [{ globPattern: '**/qpi.lock.json' }, ...(workspaceSchema ? [{ globPattern: '**/*.{sql,prisma,js,jsx,ts,tsx,mjs,cjs,mts,cts}' }] : [])];
    void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers }).catch(() => undefined);
  }
  void workspaceLocks?.load().catch((err: unknown) => connection.console.error(`The workspace's qpi.lock.json could not be read: ${String(err)}`));
  void workspaceSchema?.load().catch((err: unknown) => connection.console.error(`The workspace's schema files could not be read: ${String(err)}`));
});
connection.onDidChangeWatchedFiles((p) => {
  const uris = p.changes.map((c) => c.uri);
  workspaceSchema?.changed(uris);
  workspaceLocks?.changed(uris);
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
connection.onRequest(SetSchema, (p: SetSchemaParams) => service?.setSchema(p) ?? { advised: 0 });
connection.onRequest(SetPlans, (p: SetPlansParams) => service?.setPlans(p));
connection.onNotification(ClearSchema, (p: ClearSchemaParams) => service?.clearSchema(p ?? {}));
connection.onRequest(SetAdvice, (p: SetAdviceParams) => service?.setAdvice(p));
connection.onNotification(ClearAdvice, (p: ClearAdviceParams) => service?.clearAdvice(p ?? {}));
connection.onRequest(ListQueries, async (p: ListQueriesParams) => {
  await service?.settled(p.uri);
  return service?.listQueries(p.uri) ?? [];
});

connection.listen();
