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

async function ask<T>(p: Thenable<T | undefined>): Promise<T> {
  const v = await p;
  if (v === undefined) throw new Dismissed();
  return v;
}

/** Builds a spec from answers, prompting for what is missing (unless `silent`). */
export async function connectionFromInput(
  store: ConnectionStore,
  input: ConnectionInput,
  existing: ConnectionSpec | undefined,
  silent: boolean,
): Promise<{ spec: ConnectionSpec; password: string | undefined | null }> {
  let engine = input.engine ?? existing?.engine ?? (input.uri ? (parseConnectionString(input.uri) as { ok: boolean; value?: { engine: ConnectionEngine } }).value?.engine : undefined);
  if (!engine) {
    if (silent) throw new UserError('A connection needs an engine: mongodb or postgres.');
    const pick = await ask(vscode.window.showQuickPick(
      [
        { label: 'MongoDB', engine: 'mongodb' as const, detail: 'mongod or mongos, 3.6 or later' },
        { label: 'PostgreSQL', engine: 'postgres' as const, detail: 'PostgreSQL 9.6 or later' },
      ],
      { title: 'New connection (1/4): database engine', placeHolder: 'Which database does this connection reach?' },
    ));
    engine = pick.engine;
  }

  let form: 'uri' | 'fields' = input.uri ? 'uri' : input.host ? 'fields' : existing?.form ?? 'uri';
  if (!silent && !input.uri && !input.host) {
    const pick = await ask(vscode.window.showQuickPick(
      [
        { label: 'Connection string', form: 'uri' as const, detail: engine === 'mongodb' ? 'mongodb://user@host:27017/db?tls=true' : 'postgresql://user@host:5432/db?sslmode=require' },
        { label: 'Host and port', form: 'fields' as const, detail: 'Enter host, port, database and user one by one' },
      ],
      { title: 'New connection (2/4): how to reach it' },
    ));
    form = pick.form;
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
      uri = await ask(vscode.window.showInputBox({
        title: 'New connection (3/4): connection string',
        prompt: 'The password, if you include it, is kept in the secret storage and removed from the saved string.',
        value: existing?.uri ?? (engine === 'mongodb' ? 'mongodb://localhost:27017/' : 'postgresql://postgres@localhost:5432/postgres'),
        ignoreFocusOut: true,
        validateInput: (v) => {
          const p = parseConnectionString(v);
          if (!p.ok) return p.error;
          return p.value.engine !== engine ? `This is a ${ENGINE_LABEL[p.value.engine]} connection string.` : undefined;
        },
      }));
    }
    const parsed = parseConnectionString(uri);
    if (!parsed.ok) throw new UserError(parsed.error);
    if (parsed.value.password !== undefined && password === undefined) password = parsed.value.password;
    spec.uri = withoutPassword(uri);
    if (!input.tls) spec.tls = tlsFromUri(parsed.value);
    if (parsed.value.user && password === undefined && !spec.hasPassword && !silent) {
      const typed = await vscode.window.showInputBox({ title: `Password for ${parsed.value.user}`, prompt: 'Leave empty if the server asks for none. It is kept in the secret storage.', password: true, ignoreFocusOut: true });
      if (typed === undefined) throw new Dismissed();
      password = typed === '' ? null : typed;
    }
  } else {
    spec.host = input.host ?? existing?.host;
    spec.port = input.port ?? existing?.port;
    spec.database = input.database ?? existing?.database;
    spec.user = input.user ?? existing?.user;
    if (!silent && !input.host) {
      spec.host = await ask(vscode.window.showInputBox({ title: 'Host', value: spec.host ?? 'localhost', ignoreFocusOut: true, validateInput: (v) => (v.trim() ? undefined : 'A host is required.') }));
      const port = await ask(vscode.window.showInputBox({
        title: 'Port', value: String(spec.port ?? defaultPort(engine)), ignoreFocusOut: true,
        validateInput: (v) => (/^\d+$/.test(v) && Number(v) > 0 && Number(v) < 65536 ? undefined : 'The port must be a number between 1 and 65535.'),
      }));
      spec.port = Number(port);
      spec.database = (await ask(vscode.window.showInputBox({ title: 'Database', value: spec.database ?? (engine === 'postgres' ? 'postgres' : 'test'), ignoreFocusOut: true }))) || undefined;
      spec.user = (await ask(vscode.window.showInputBox({ title: 'User (empty for none)', value: spec.user ?? '', ignoreFocusOut: true }))) || undefined;
      if (spec.user) {
        const typed = await ask(vscode.window.showInputBox({
          title: `Password for ${spec.user}`, password: true, ignoreFocusOut: true,
          prompt: existing?.hasPassword ? 'Leave empty to keep the saved password.' : 'It is kept in the secret storage, never in settings.',
        }));
        password = typed === '' ? (existing?.hasPassword ? undefined : null) : typed;
      }
    }
    if (spec.port === undefined) spec.port = defaultPort(engine);
    if (!silent && !input.tls) {
      const pick = await ask(vscode.window.showQuickPick(
        [
          { label: 'No TLS', tls: { enabled: false } },
          { label: 'TLS', detail: 'Verify the server certificate', tls: { enabled: true } },
          { label: 'TLS with a CA file...', detail: 'Trust a certificate authority from a file', tls: { enabled: true, caFile: '?' } },
          { label: 'TLS, accept any certificate', detail: 'For self-signed test servers only', tls: { enabled: true, allowInvalidCertificates: true } },
        ],
        { title: 'New connection (3/4): TLS' },
      ));
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
    spec.name = silent ? suggested : await ask(vscode.window.showInputBox({ title: 'New connection (4/4): name', value: suggested, ignoreFocusOut: true, validateInput: (v) => (v.trim() ? undefined : 'A connection needs a name.') }));
  }
  const problem = validateSpec(spec);
  if (problem) throw new UserError(problem);
  return { spec, password };
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
