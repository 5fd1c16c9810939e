// The connection commands: add, edit, test, remove, choose for the current folder. Connections from
// settings are read-only here: editing one opens its settings or sets its password, removing one is
// refused, and testing one asks for its password when the server wants one.

import * as vscode from 'vscode';
import type { MeasureChoice, MeasureChoices } from './measureChoice';
import { Dismissed, UserError } from '../commands';
import { passwordFor } from '../connectionChoice';
import type { Gateway } from '../gateway';
import type { Log } from '../log';
import { ENGINE_LABEL, engineOfDocument, type Bindings } from './bindings';
import { asksForPassword, MAX_ASKS, passwordReason } from './settings';
import { connectionUri, type ConnectionEngine, type ConnectionSpec } from './spec';
import { openSettingsOf, type ConnectionStore } from './store';
import { connectionFromInput, pickConnection, type ConnectionInput } from './ui';

/** What the connection commands are built with (main.ts). */
export interface ConnectionParts {
  store: ConnectionStore;
  bindings: Bindings;
  log: Log;
  gateway: () => Promise<Gateway>;
  /** MongoDB: whether each connection measures its suggestions on Explain. */
  measureChoices: MeasureChoices;
}

export interface TestResult {
  ok: boolean;
  serverVersion?: string;
  error?: string;
}

function settingsTimeout(): number {
  return Math.max(1, vscode.workspace.getConfiguration('queryPlanInspector').get<number>('connectTimeoutSeconds', 10)) * 1000;
}

/** Adds a connection (prompting for what `input` lacks unless `input.silent`), then tests it. */
export async function addConnection(s: ConnectionParts, input: (ConnectionInput & { silent?: boolean; test?: boolean }) | undefined): Promise<ConnectionSpec | undefined> {
  const silent = input?.silent ?? (input !== undefined && (input.uri !== undefined || input.host !== undefined));
  const { spec, password } = await connectionFromInput(s.store, input ?? {}, undefined, silent);
  await s.store.save(spec, password);
  s.log.info(`Saved the ${ENGINE_LABEL[spec.engine]} connection ${spec.name}.`);
  const saved = s.store.get(spec.id)!;
  if (input?.test !== false) {
    const r = await testConnection(s, saved, !silent);
    if (!silent && r.ok) void vscode.window.showInformationMessage(`Connected to ${saved.name} (${ENGINE_LABEL[saved.engine]}${r.serverVersion ? ` ${r.serverVersion}` : ''}).`);
  }
  return saved;
}

/** The connection a tree item, an id, or a prompt designates. */
async function designated(s: ConnectionParts, arg: ConnectionSpec | string | { id: string } | undefined, title: string): Promise<ConnectionSpec> {
  const id = typeof arg === 'string' ? arg : arg?.id;
  if (id) {
    const spec = s.store.get(id);
    if (!spec) throw new UserError('That connection no longer exists.');
    return spec;
  }
  if (s.store.list().length === 0) throw new UserError('No connection is saved yet: add one first.');
  const pick = await pickConnection(s.store, undefined, title);
  if (pick === 'add') throw new Dismissed();
  return pick;
}

export async function editConnection(s: ConnectionParts, arg?: ConnectionSpec | string | ({ id: string } & ConnectionInput)): Promise<ConnectionSpec> {
  const existing = await designated(s, arg, 'Edit which connection?');
  const input: ConnectionInput = typeof arg === 'object' && arg !== null && !('engine' in arg && 'form' in arg) ? arg : {};
  if (existing.origin) return editSettingsConnection(s, existing, input);
  const silent = Object.keys(input).some((k) => k !== 'id');
  const { spec, password } = await connectionFromInput(s.store, { ...input, ...(silent ? {} : { name: undefined }) }, existing, silent);
  if (!silent) {
    spec.name = (await vscode.window.showInputBox({ title: 'Name', value: existing.name, ignoreFocusOut: true })) || existing.name;
  }
  await s.store.save(spec, password);
  s.log.info(`Updated the connection ${spec.name}.`);
  return s.store.get(spec.id)!;
}

/**
 * A connection from settings: given a password (the command's argument), keeps it; otherwise offers to
 * open the settings that define it, to set its password, or to forget the kept one.
 */
async function editSettingsConnection(s: ConnectionParts, spec: ConnectionSpec, input: ConnectionInput): Promise<ConnectionSpec> {
  const where = spec.origin!.where;
  const fields = Object.keys(input).filter((k) => k !== 'id');
  if (fields.length > 0) {
    if (fields.some((k) => k !== 'password')) throw new UserError(`${spec.name} is defined in ${where}: change it there, only its password is kept here.`);
    if (input.password) s.log.addSecret(input.password);
    await s.store.setSettingsPassword(spec.id, input.password || null);
    s.store.setState(spec.id, { kind: 'unknown' });
    return s.store.get(spec.id)!;
  }
  const items: (vscode.QuickPickItem & { act: 'open' | 'password' | 'forget' })[] = [
    { label: '$(go-to-file) Open the settings that define it', act: 'open' },
    { label: '$(key) Set the password...', detail: 'Kept in the secret storage under this connection, never in the settings.', act: 'password' },
  ];
  if (spec.hasPassword) items.push({ label: '$(trash) Forget the kept password', act: 'forget' });
  const pick = await vscode.window.showQuickPick(items, { title: `${spec.name} is defined in ${where}` });
  if (!pick) throw new Dismissed();
  if (pick.act === 'open') {
    await openSettingsOf(spec.origin!);
  } else if (pick.act === 'password') {
    const typed = await s.store.askSettingsPassword(spec, `Type the password ${spec.name} logs in with.`, s.log);
    if (!typed) throw new Dismissed();
    s.store.setState(spec.id, { kind: 'unknown' });
  } else {
    await s.store.setSettingsPassword(spec.id, null);
    s.log.info(`Forgot the password kept for ${spec.name}.`);
  }
  return s.store.get(spec.id)!;
}

export async function removeConnection(s: ConnectionParts, arg?: ConnectionSpec | string | { id: string; confirm?: boolean }): Promise<boolean> {
  const spec = await designated(s, arg, 'Remove which connection?');
  if (spec.origin) throw new UserError(`${spec.name} is defined in ${spec.origin.where}: remove it there.`);
  const confirm = typeof arg === 'object' && arg !== null && 'confirm' in arg ? arg.confirm !== false : true;
  if (confirm) {
    const ok = await vscode.window.showWarningMessage(`Remove the connection ${spec.name} and its saved password?`, { modal: true }, 'Remove');
    if (ok !== 'Remove') return false;
  }
  await s.store.remove(spec.id);
  await s.bindings.forget(spec.id);
  s.log.info(`Removed the connection ${spec.name}.`);
  return true;
}

/**
 * Whether Explain measures a MongoDB connection's suggestions at once (on a scratch copy of a sample):
 * Always, Ask each time (the question comes at the next Explain), or Never; kept per connection.
 */
export async function chooseMongoMeasure(s: ConnectionParts, arg?: ConnectionSpec | string | { id: string; choice?: MeasureChoice | 'ask' }): Promise<MeasureChoice | 'ask' | undefined> {
  const spec = await designated(s, arg, 'Measure suggestions on which connection?');
  if (spec.engine !== 'mongodb') throw new UserError(`${spec.name} is a PostgreSQL connection: its suggestions are measured on Explain without writing (queryPlanInspector.postgres.measureOnExplain).`);
  const given = typeof arg === 'object' && arg !== null && 'choice' in arg ? arg.choice : undefined;
  const now = s.measureChoices.get(spec.id) ?? 'ask';
  const picked = given ?? (await vscode.window.showQuickPick([
    { label: 'Always', choice: 'always' as const, description: 'measure on a scratch copy of a sample at every Explain' },
    { label: 'Ask', choice: 'ask' as const, description: 'ask at the next Explain' },
    { label: 'Never', choice: 'never' as const, description: "show the rules' verdict only; Verify still measures when pressed" },
  ].map((o) => ({ ...o, picked: o.choice === now })), { title: `Measure MongoDB suggestions on ${spec.name} when explaining (now: ${now})` }))?.choice;
  if (picked === undefined) return undefined;
  await s.measureChoices.set(spec.id, picked === 'ask' ? undefined : picked);
  s.log.info(`MongoDB suggestions on ${spec.name} are measured on Explain: ${picked}.`);
  return picked;
}

/** Connects, reads the server version, disconnects; the tree shows the outcome. */
export async function testConnection(s: ConnectionParts, arg?: ConnectionSpec | string | { id: string }, notify = true): Promise<TestResult> {
  const spec = await designated(s, arg, 'Test which connection?');
  s.store.setState(spec.id, { kind: 'testing' });
  let password = await passwordFor(s.store, s.log, spec);
  try {
    const gateway = await s.gateway();
    let info: Awaited<ReturnType<typeof gateway.test>>;
    for (let asked = 0; ; asked++) {
      try {
        info = await gateway.test(spec.engine, connectionUri(spec, password), settingsTimeout());
        break;
      } catch (err) {
        // A connection from settings has no password until the server asks for one.
        if (!spec.origin || asked >= MAX_ASKS || !asksForPassword(err, spec)) throw err;
        const typed = await s.store.askSettingsPassword(spec, passwordReason(spec, password !== undefined), s.log);
        if (!typed) throw err;
        password = typed;
      }
    }
    s.store.setState(spec.id, { kind: 'ok', ...(info.serverVersion ? { serverVersion: info.serverVersion } : {}), ...(info.detail ? { detail: info.detail } : {}), at: Date.now() });
    s.log.info(`Connection ${spec.name}: ${ENGINE_LABEL[spec.engine]} ${info.serverVersion ?? ''}${info.detail ? `, ${info.detail}` : ''}.`);
    if (notify && typeof arg === 'object') void vscode.window.setStatusBarMessage(`$(pass) ${spec.name}: connected${info.serverVersion ? ` (${info.serverVersion})` : ''}.`, 4000);
    const result: TestResult = { ok: true };
    if (info.serverVersion) result.serverVersion = info.serverVersion;
    return result;
  } catch (err) {
    const sentence = s.log.clean(err instanceof Error ? err.message : String(err));
    s.store.setState(spec.id, { kind: 'failed', error: sentence, at: Date.now() });
    s.log.error(`Connection ${spec.name} failed`, err);
    if (notify) {
      void vscode.window.showErrorMessage(`${spec.name}: ${sentence}`, 'Edit Connection', 'Show Log').then((c) => {
        if (c === 'Show Log') s.log.show();
        if (c === 'Edit Connection') void vscode.commands.executeCommand('queryPlanInspector.editConnection', spec);
      });
    }
    return { ok: false, error: sentence };
  }
}

/** Chooses the connection the current folder uses for an engine (the status bar item runs this). */
export async function selectConnection(s: ConnectionParts, arg?: ConnectionEngine | { engine?: ConnectionEngine; id?: string; uri?: string }): Promise<ConnectionSpec | undefined> {
  const editor = vscode.window.activeTextEditor;
  const uri = typeof arg === 'object' && arg.uri ? vscode.Uri.parse(arg.uri) : editor?.document.uri;
  let engine = typeof arg === 'string' ? arg : arg?.engine;
  if (typeof arg === 'object' && arg.id) {
    const spec = s.store.get(arg.id);
    if (!spec) throw new UserError('That connection no longer exists.');
    await s.bindings.set(uri, spec);
    return spec;
  }
  if (!engine && editor) engine = engineOfDocument(editor.document);
  const current = engine ? s.bindings.get(uri, engine) : undefined;
  const pick = await pickConnection(s.store, engine, `Connection for ${uri ? vscode.workspace.getWorkspaceFolder(uri)?.name ?? 'this file' : 'this workspace'}`, current);
  const spec = pick === 'add' ? await addConnection(s, engine ? { engine } : undefined) : pick;
  if (!spec) return undefined;
  await s.bindings.set(uri, spec);
  return spec;
}

/** From the tree: use this connection for the active editor's folder. */
export async function useConnectionHere(s: ConnectionParts, arg?: ConnectionSpec | string): Promise<ConnectionSpec> {
  const spec = await designated(s, arg, 'Use which connection here?');
  await s.bindings.set(vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri, spec);
  void vscode.window.setStatusBarMessage(`Queries here are explained on ${spec.name}.`, 3000);
  return spec;
}
