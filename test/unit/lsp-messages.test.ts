// The custom messages between the extension and the language server as typed descriptors: each method
// string names one message, the server handles every message the client sends (read from its
// registrations on a fake connection) and none of its own, a request goes through the server and back,
// and a wrong parameter or result type, or a message sent by the side that should handle it, does not compile (the @ts-expect-error lines fail the type check
// if the descriptors stop carrying their types).

import assert from 'node:assert/strict';
import type { InitializeParams } from 'vscode-languageserver';
import * as protocol from '../../src/protocol/languageServer';
import { CapReached, ClearSchema, LANGUAGE_SERVER_PROTOCOL_VERSION, ListQueries, SchemaNeeded, SetSchema, type ListedQuery, type SchemaNeededParams, type SetSchemaResult } from '../../src/protocol/languageServer';
import { typedMessages, type MessageConnection, type MessageType } from '../../src/protocol/messages';
import { serve, type ServerConnection } from '../../src/server/connection';
import { readFixture } from './lsp-fixtures';

const DESCRIPTORS = Object.entries(protocol as Record<string, unknown>).filter((e): e is [string, MessageType] => {
  const v = e[1] as Partial<MessageType> | null;
  return typeof v === 'object' && v !== null && (v.kind === 'request' || v.kind === 'notification') && typeof v.method === 'string';
});

type Handler = (params: unknown) => unknown;
const none = { dispose(): void {} };

/** The parts of an LSP connection the server uses, recording what it registers and sends. */
class FakeConnection {
  readonly requests = new Map<string, Handler>();
  readonly notifications = new Map<string, Handler>();
  readonly sent: { method: string; params: unknown }[] = [];
  initialize?: (params: InitializeParams) => Promise<unknown>;
  didOpen?: Handler;
  readonly console = { log(): void {}, info(): void {}, warn(): void {}, error(): void {} };
  readonly client = { register: async () => none };
  onInitialize(h: (params: InitializeParams) => Promise<unknown>) {
    this.initialize = h;
    return none;
  }
  onDidOpenTextDocument(h: Handler) {
    this.didOpen = h;
    return none;
  }
  onRequest(method: string, h: Handler) {
    assert.ok(!this.requests.has(method), `${method} registered twice`);
    this.requests.set(method, h);
    return none;
  }
  onNotification(method: string, h: Handler) {
    assert.ok(!this.notifications.has(method), `${method} registered twice`);
    this.notifications.set(method, h);
    return none;
  }
  async sendNotification(method: string, params: unknown): Promise<void> {
    this.sent.push({ method, params });
  }
  async sendRequest(): Promise<unknown> {
    return null;
  }
  sendDiagnostics(): Promise<void> {
    return Promise.resolve();
  }
  onInitialized() {
    return none;
  }
  onDidChangeWatchedFiles() {
    return none;
  }
  onDidChangeTextDocument() {
    return none;
  }
  onDidCloseTextDocument() {
    return none;
  }
  onHover() {
    return none;
  }
  onCodeAction() {
    return none;
  }
  onCodeLens() {
    return none;
  }
}

function served(): FakeConnection {
  const fake = new FakeConnection();
  serve(fake as unknown as ServerConnection);
  return fake;
}

describe('language server messages', () => {
  it('declares every message of the protocol file as a descriptor with its own method string', () => {
    assert.ok(DESCRIPTORS.length >= 10, `only ${DESCRIPTORS.length} descriptors found`);
    const seen = new Map<string, string>();
    for (const [name, d] of DESCRIPTORS) {
      assert.match(d.method, /^queryPlanInspector\/[a-zA-Z]+$/, `${name}: a custom method outside the LSP's own names`);
      assert.ok(!seen.has(d.method), `${name} and ${seen.get(d.method)} share ${d.method}`);
      seen.set(d.method, name);
    }
  });

  it('registers a handler for each message the client sends, and for none the server sends', () => {
    const fake = served();
    for (const [name, d] of DESCRIPTORS) {
      const registered = (d.kind === 'request' ? fake.requests : fake.notifications).has(d.method);
      const elsewhere = (d.kind === 'request' ? fake.notifications : fake.requests).has(d.method);
      assert.equal(registered, d.sender === 'client', `${name} (${d.kind} from the ${d.sender})`);
      assert.ok(!elsewhere, `${name} registered as the wrong kind of message`);
    }
    const declared = new Set(DESCRIPTORS.map(([, d]) => d.method));
    for (const method of [...fake.requests.keys(), ...fake.notifications.keys()]) assert.ok(declared.has(method), `${method} is handled but not declared`);
  });

  it('answers a request through its descriptor and sends its notifications with theirs', async () => {
    const fake = served();
    const init = { processId: null, rootUri: null, workspaceFolders: null, capabilities: {}, initializationOptions: { protocolVersion: LANGUAGE_SERVER_PROTOCOL_VERSION, debounceMs: 0, backgroundExplain: false } };
    await fake.initialize!(init);
    const uri = 'file:///fixtures/driver.ts';
    fake.didOpen!({ textDocument: { uri, languageId: 'typescript', version: 1, text: readFixture('driver.ts') } });
    const queries = (await fake.requests.get(ListQueries.method)!({ uri })) as ListedQuery[];
    assert.ok(queries.length > 0 && queries.every((q) => q.start < q.end), JSON.stringify(queries));
    const need = fake.sent.filter((s) => s.method === SchemaNeeded.method).map((s) => s.params as SchemaNeededParams);
    assert.equal(need.length, 1);
    assert.ok(need[0]!.mongodb.some((c) => c.collection === 'orders'), JSON.stringify(need));
    const mongo = queries.filter((q) => q.engine === 'mongodb' && q.targets.includes('orders')).length;
    const answer = (await fake.requests.get(SetSchema.method)!({ uris: [uri], engine: 'mongodb', connectionName: 'Local', collections: [{ name: 'orders', indexes: [] }] })) as SetSchemaResult;
    assert.ok(answer.advised >= mongo && mongo > 0, `${answer.advised} advised, ${mongo} queries on orders`);
  });

  it('types each side by the descriptor: parameters, result and direction', async () => {
    const calls: { method: string; params: unknown }[] = [];
    const connection: MessageConnection = {
      sendRequest: async (method, params) => {
        calls.push({ method, params });
        return { advised: 3 };
      },
      sendNotification: async (method, params) => void calls.push({ method, params }),
      onRequest: () => none,
      onNotification: () => none,
    };
    const client = typedMessages<'client'>(connection);
    const server = typedMessages<'server'>(connection);
    const r: SetSchemaResult = await client.request(SetSchema, { uris: ['file:///a.ts'], engine: 'postgres', connectionName: 'pg', tables: [] });
    assert.equal(r.advised, 3);
    // @ts-expect-error SetSchema's parameters name the engine and the connection.
    await client.request(SetSchema, { uris: [] });
    // @ts-expect-error ListQueries answers with the queries, not a sentence.
    server.onRequest(ListQueries, () => 'none');
    // @ts-expect-error CapReached names the document it is about.
    await server.notify(CapReached, { cap: null });
    // @ts-expect-error the client does not send CapReached, the server does.
    await client.notify(CapReached, { uri: 'file:///a.ts', cap: null });
    // @ts-expect-error the server does not handle its own notifications.
    server.onNotification(SchemaNeeded, () => undefined);
    // @ts-expect-error ClearSchema goes from the client to the server.
    await server.notify(ClearSchema, {});
    assert.deepEqual(calls.map((c) => c.method), [SetSchema.method, SetSchema.method, CapReached.method, CapReached.method, ClearSchema.method]);
  });
});
