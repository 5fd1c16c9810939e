// The add / edit / remove / choose flows of connections, as quick picks and input boxes. Each flow also
// accepts its answers as an argument object, which is how tests and other extensions drive it without
// prompts. A password typed in a connection string is moved to SecretStorage and removed from the
// stored string.

import * as vscode from 'vscode';
import { Dismissed, UserError } from '../commands';
import { ENGINE_LABEL } from './bindings';
import {
  defaultPort, describe, parseConnectionString, tlsFromUri, validateSpec, withoutPassword,
  type ConnectionEngine, type ConnectionSpec, type TlsOptions,
} from './spec';
import { StepFlow } from './steps';
import type { ConnectionStore } from './store';

/** What `queryPlanInspector.addConnection` / `editConnection` accept instead of prompting. */
export interface ConnectionInput {
  name?: string;
  engine?: ConnectionEngine;
  /** A connection string; a password inside it is moved to SecretStorage. */
  uri?: string;
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  password?: string;
  tls?: TlsOptions;
}

/** Builds a spec from answers, prompting for what is missing (unless `silent`), all in one quick input. */
export async function connectionFromInput(
  store: ConnectionStore,
  input: ConnectionInput,
  existing: ConnectionSpec | undefined,
  silent: boolean,
): Promise<{ spec: ConnectionSpec; password: string | undefined | null }> {
  const flow = new StepFlow(4);
  try {
    return await fromInput(flow, store, input, existing, silent);
  } finally {
    flow.dispose();
  }
}

async function fromInput(
  flow: StepFlow,
  store: ConnectionStore,
  input: ConnectionInput,
  existing: ConnectionSpec | undefined,
  silent: boolean,
): Promise<{ spec: ConnectionSpec; password: string | undefined | null }> {
  let engine = input.engine ?? existing?.engine ?? (input.uri ? (parseConnectionString(input.uri) as { ok: boolean; value?: { engine: ConnectionEngine } }).value?.engine : undefined);
  const askName = !input.name && !existing?.name;
  // Steps already known to come: engine, form, then the branch's own (estimated as the connection string and the name).
  let before = 0;
  if (!engine) {
    if (silent) throw new UserError('A connection needs an engine: mongodb or postgres.');
    flow.expect(4);
    const pick = await flow.pick(
      [
        { label: 'MongoDB', engine: 'mongodb' as const, detail: 'mongod or mongos, 3.6 or later' },
        { label: 'PostgreSQL', engine: 'postgres' as const, detail: 'PostgreSQL 9.6 or later' },
      ],
      { title: 'New connection: database engine', placeholder: 'Which database does this connection reach?' },
    );
    engine = pick.engine;
    before++;
  }

  let form: 'uri' | 'fields' = input.uri ? 'uri' : input.host ? 'fields' : existing?.form ?? 'uri';
  if (!silent && !input.uri && !input.host) {
    flow.expect(before + 1 + 1 + (askName ? 1 : 0));
    const pick = await flow.pick(
      [
        { label: 'Connection string', form: 'uri' as const, detail: engine === 'mongodb' ? 'mongodb://user@host:27017/db?tls=true' : 'postgresql://user@host:5432/db?sslmode=require' },
        { label: 'Host and port', form: 'fields' as const, detail: 'Enter host, port, database and user one by one' },
      ],
      { title: 'New connection: how to reach it' },
    );
    form = pick.form;
    before++;
  }

  let password: string | undefined | null = input.password;
  const spec: ConnectionSpec = {
    id: existing?.id ?? store.newId(),
    name: input.name ?? existing?.name ?? '',
    engine,
    form,
    tls: input.tls ?? existing?.tls ?? { enabled: false },
    hasPassword: existing?.hasPassword ?? false,
  };

  if (form === 'uri') {
    let uri = input.uri ?? (silent ? existing?.uri : undefined);
    if (uri === undefined) {
      if (silent) throw new UserError('A connection string is required.');
      flow.expect(before + 1 + (askName ? 1 : 0));
      const chosen = engine;
      uri = await flow.input({
        title: 'New connection: connection string',
        prompt: 'The password, if you include it, is kept in the secret storage and removed from the saved string.',
        value: existing?.uri ?? (engine === 'mongodb' ? 'mongodb://localhost:27017/' : 'postgresql://postgres@localhost:5432/postgres'),
        validate: (v) => {
          const p = parseConnectionString(v);
          if (!p.ok) return p.error;
          return p.value.engine !== chosen ? `This is a ${ENGINE_LABEL[p.value.engine]} connection string.` : undefined;
        },
      });
      before++;
    }
    const parsed = parseConnectionString(uri);
    if (!parsed.ok) throw new UserError(parsed.error);
    if (parsed.value.password !== undefined && password === undefined) password = parsed.value.password;
    spec.uri = withoutPassword(uri);
    if (!input.tls) spec.tls = tlsFromUri(parsed.value);
    if (parsed.value.user && password === undefined && !spec.hasPassword && !silent) {
      flow.expect(before + 1 + (askName ? 1 : 0));
      const typed = await flow.input({ title: `Password for ${parsed.value.user}`, prompt: 'Leave empty if the server asks for none. It is kept in the secret storage.', password: true });
      password = typed === '' ? null : typed;
    }
  } else {
    spec.host = input.host ?? existing?.host;
    spec.port = input.port ?? existing?.port;
    spec.database = input.database ?? existing?.database;
    spec.user = input.user ?? existing?.user;
    if (!silent && !input.host) {
      // Host, port, database, user, password, TLS and the name; the password step is dropped from the
      // count when no user is given, so the total does not grow under the user's eyes.
      const tlsStep = input.tls ? 0 : 1;
      flow.expect(before + 5 + tlsStep + (askName ? 1 : 0));
      spec.host = await flow.input({ title: 'New connection: host', value: spec.host ?? 'localhost', validate: (v) => (v.trim() ? undefined : 'A host is required.') });
      const port = await flow.input({
        title: 'New connection: port', value: String(spec.port ?? defaultPort(engine)),
        validate: (v) => (/^\d+$/.test(v) && Number(v) > 0 && Number(v) < 65536 ? undefined : 'The port must be a number between 1 and 65535.'),
      });
      spec.port = Number(port);
      spec.database = (await flow.input({ title: 'New connection: database', value: spec.database ?? (engine === 'postgres' ? 'postgres' : 'test') })) || undefined;
      spec.user = (await flow.input({ title: 'New connection: user (empty for none)', value: spec.user ?? '' })) || undefined;
      if (!spec.user) flow.expect(before + 4 + tlsStep + (askName ? 1 : 0));
      if (spec.user) {
        const typed = await flow.input({
          title: `Password for ${spec.user}`, password: true,
          prompt: existing?.hasPassword ? 'Leave empty to keep the saved password.' : 'It is kept in the secret storage, never in settings.',
        });
        password = typed === '' ? (existing?.hasPassword ? undefined : null) : typed;
      }
    }
    if (spec.port === undefined) spec.port = defaultPort(engine);
    if (!silent && !input.tls) {
      const pick = await flow.pick(
        [
          { label: 'No TLS', tls: { enabled: false } },
          { label: 'TLS', detail: 'Verify the server certificate', tls: { enabled: true } },
          { label: 'TLS with a CA file...', detail: 'Trust a certificate authority from a file', tls: { enabled: true, caFile: '?' } },
          { label: 'TLS, accept any certificate', detail: 'For self-signed test servers only', tls: { enabled: true, allowInvalidCertificates: true } },
        ],
        { title: 'New connection: TLS' },
      );
      spec.tls = pick.tls;
      if (spec.tls.caFile === '?') {
        const files = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: 'Trust this CA', filters: { Certificates: ['pem', 'crt', 'cer'] } });
        if (!files?.[0]) throw new Dismissed();
        spec.tls = { enabled: true, caFile: files[0].fsPath };
      }
    }
  }

  if (!spec.name) {
    const suggested = describe(spec);
    spec.name = silent ? suggested : await flow.input({ title: 'New connection: name', value: suggested, validate: (v) => (v.trim() ? undefined : 'A connection needs a name.') });
  }
  const problem = validateSpec(spec);
  if (problem) throw new UserError(problem);
  return { spec, password };
}

async function ask<T>(p: Thenable<T | undefined>): Promise<T> {
  const v = await p;
  if (v === undefined) throw new Dismissed();
  return v;
}

/** Lets the user pick one saved connection of an engine, with "Add connection..." at the end. */
export async function pickConnection(store: ConnectionStore, engine: ConnectionEngine | undefined, title: string, current?: ConnectionSpec): Promise<ConnectionSpec | 'add'> {
  const items: (vscode.QuickPickItem & { spec?: ConnectionSpec })[] = store.list(engine).map((spec) => ({
    label: `${spec.id === current?.id ? '$(check) ' : ''}${spec.name}`,
    description: `${ENGINE_LABEL[spec.engine]} · ${describe(spec)}${spec.origin ? ` · from ${spec.origin.where.replace(/^the /, '')}` : ''}`,
    spec,
  }));
  items.push({ label: `$(add) Add ${engine ? `${ENGINE_LABEL[engine]} ` : ''}connection...` });
  const pick = await ask(vscode.window.showQuickPick(items, { title, placeHolder: 'Connection' }));
  return pick.spec ?? 'add';
}
