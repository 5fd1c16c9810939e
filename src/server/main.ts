// The language server process (dist/server.js): inline index advice while coding. The extension starts
// it over node IPC (src/extension/languageClient.ts). It reads the open documents, what the extension
// sends through the messages of src/protocol/languageServer.ts, and the workspace's schema files
// (src/node/workspaceSchema.ts); it has no database driver and never sees a connection string or a password.

import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { serve } from './connection';

const connection = createConnection(ProposedFeatures.all);
serve(connection);
connection.listen();
