// Connections: the ones a user saved, metadata in globalState (a list of ConnectionSpec, which has no
// password field), and the ones defined in settings (`queryPlanInspector.connections`, read again when
// the settings or the folders change, read-only here). Passwords of both are in SecretStorage under
// `queryPlanInspector.password.<id>`, joined by id only when a connection is opened. Also remembers each
// connection's last known state for the tree view.

import * as vscode from 'vscode';
import type { Gateway } from '../gateway';
import type { Log } from '../log';
import { askingPasswords, readSettingsConnections, settingsDefault, SETTINGS_KEY, type SettingsProblem } from './settings';
import type { ConnectionEngine, ConnectionSpec, SettingsOrigin } from './spec';

const LIST_KEY = 'queryPlanInspector.connections';
/** Ids of settings connections that have a password in SecretStorage (settings cannot say it). */
const SETTINGS_PASSWORDS_KEY = 'queryPlanInspector.settingsPasswords';
const secretKey = (id: string) => `queryPlanInspector.password.${id}`;

export type ConnectionState =
  | { kind: 'unknown' }
  | { kind: 'testing' }
  | { kind: 'ok'; serverVersion?: string; detail?: string; at: number }
  | { kind: 'failed'; error: string; at: number };

/** What the Connections view and the status bar show of a state: all of it but its time. */
function shownOf(state: ConnectionState): string {
  const { at: _at, ...shown } = state as ConnectionState & { at?: number };
  return JSON.stringify(shown);
}

export class ConnectionStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly settingsChanged = new vscode.EventEmitter<void>();
  /** The connections defined in settings changed (so may the folders' defaults). */
  readonly onDidChangeSettings = this.settingsChanged.event;
  private readonly states = new Map<string, ConnectionState>();
  private fromSettings: ConnectionSpec[] = [];
  private problems: SettingsProblem[] = [];
  /** Problems already shown in a notification this session, so a reload does not repeat them. */
  private readonly shownProblems = new Set<string>();
  private readonly subscriptions: vscode.Disposable[] = [];
  /**
   * Answers the password question of a settings connection instead of the input box (tests set it);
   * undefined means dismissed.
   */
  promptPassword?: (spec: ConnectionSpec, reason: string) => Promise<string | undefined>;

  constructor(
    private readonly globalState: vscode.Memento,
    private readonly secrets: vscode.SecretStorage,
  ) {
    this.loadSettings();
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`queryPlanInspector.${SETTINGS_KEY}`)) this.reloadSettings();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.reloadSettings()),
    );
  }

  private saved(): ConnectionSpec[] {
    return this.globalState.get<ConnectionSpec[]>(LIST_KEY, []);
  }

  /** Saved connections first (by name), then those from settings in the order they are written. */
  list(engine?: ConnectionEngine): ConnectionSpec[] {
    const withPassword = new Set(this.globalState.get<string[]>(SETTINGS_PASSWORDS_KEY, []));
    const all = [...this.saved(), ...this.fromSettings.map((c) => ({ ...c, hasPassword: withPassword.has(c.id) }))];
    return engine ? all.filter((c) => c.engine === engine) : all;
  }

  get(id: string): ConnectionSpec | undefined {
    return this.list().find((c) => c.id === id);
  }

  /** The entries of the settings that cannot be used, each with its sentence. */
  settingsProblems(): readonly SettingsProblem[] {
    return this.problems;
  }

  /** The settings connection a folder uses for an engine when the user chose none (folder URI, or ''). */
  settingsDefault(folder: string, engine: ConnectionEngine): ConnectionSpec | undefined {
    const id = settingsDefault(this.fromSettings, folder, engine)?.id;
    return id ? this.get(id) : undefined;
  }

  /** Adds or replaces a saved connection; the password (when given) goes to SecretStorage only. */
  async save(spec: ConnectionSpec, password: string | undefined | null): Promise<void> {
    if (spec.origin) throw new Error('a connection from settings cannot be saved: only its password is kept');
    // `null` removes a stored password; `undefined` keeps whatever is stored.
    if (typeof password === 'string' && password !== '') await this.secrets.store(secretKey(spec.id), password);
    if (password === null || password === '') await this.secrets.delete(secretKey(spec.id));
    const hasPassword = typeof password === 'string' ? password !== '' : password === null ? false : spec.hasPassword;
    const clean: ConnectionSpec = { ...spec, hasPassword };
    // A defensive copy that cannot carry a password even if a caller smuggled one in.
    delete (clean as unknown as Record<string, unknown>).password;
    const list = this.saved().filter((c) => c.id !== spec.id);
    list.push(clean);
    list.sort((a, b) => a.name.localeCompare(b.name));
    await this.globalState.update(LIST_KEY, list);
    this.states.set(spec.id, { kind: 'unknown' });
    this.changed.fire();
  }

  /** Keeps (or, with null, forgets) the password of a connection from settings. */
  async setSettingsPassword(id: string, password: string | null): Promise<void> {
    const ids = new Set(this.globalState.get<string[]>(SETTINGS_PASSWORDS_KEY, []));
    if (password) {
      await this.secrets.store(secretKey(id), password);
      ids.add(id);
    } else {
      await this.secrets.delete(secretKey(id));
      ids.delete(id);
    }
    await this.globalState.update(SETTINGS_PASSWORDS_KEY, [...ids]);
    this.changed.fire();
  }

  /** Removes a saved connection and its password (a settings connection only loses its password). */
  async remove(id: string): Promise<void> {
    if (this.fromSettings.some((c) => c.id === id)) return this.setSettingsPassword(id, null);
    await this.secrets.delete(secretKey(id));
    await this.globalState.update(LIST_KEY, this.saved().filter((c) => c.id !== id));
    this.states.delete(id);
    this.changed.fire();
  }

  password(id: string): Thenable<string | undefined> {
    return this.secrets.get(secretKey(id));
  }

  state(id: string): ConnectionState {
    return this.states.get(id) ?? { kind: 'unknown' };
  }

  /**
   * Records a connection's state. Listeners (the Connections view, the status bar) hear of it only when
   * what they show changes: an Explain that finds the connection as it was redraws nothing while its plan
   * is on its way to the panel.
   */
  setState(id: string, state: ConnectionState): void {
    const was = this.states.get(id);
    this.states.set(id, state);
    if (!was || shownOf(was) !== shownOf(state)) this.changed.fire();
  }

  newId(): string {
    const bytes = new Uint8Array(8);
    globalThis.crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  /**
   * Asks for the password of a settings connection, keeps it in SecretStorage and masks it in the log;
   * undefined when the user dismissed the question.
   */
  async askSettingsPassword(spec: ConnectionSpec, reason: string, log: Log): Promise<string | undefined> {
    const typed = this.promptPassword
      ? await this.promptPassword(spec, reason)
      : await vscode.window.showInputBox({
        title: `Password for ${spec.name}`,
        prompt: `${reason} It is kept in the secret storage under this connection, never in the settings.`,
        password: true,
        ignoreFocusOut: true,
      });
    if (!typed) return undefined;
    log.addSecret(typed);
    await this.setSettingsPassword(spec.id, typed);
    return typed;
  }

  /** The gateway through which settings connections ask for their password when the server wants one. */
  askingPasswords(gateway: Gateway, log: Log): Gateway {
    return askingPasswords(gateway, {
      connections: () => this.list(),
      password: (id) => this.password(id),
      ask: (spec, reason) => this.askSettingsPassword(spec, reason, log),
    });
  }

  private reloadSettings(): void {
    this.loadSettings();
    this.settingsChanged.fire();
    this.changed.fire();
  }

  /**
   * Reads the setting at every place it can be written. In a single-folder window the workspace settings
   * are that folder's settings; in a multi-root workspace each folder has its own, and the workspace file
   * has the workspace's. Relative CA files are relative to the folder (or the workspace file's folder).
   */
  private loadSettings(): void {
    const specs: ConnectionSpec[] = [];
    const problems: SettingsProblem[] = [];
    const add = (value: unknown, origin: SettingsOrigin, base: vscode.Uri | undefined) => {
      const resolve = (p: string) => (base && !/^([/\\]|[a-zA-Z]:[/\\]|~)/.test(p) ? vscode.Uri.joinPath(base, p).fsPath : p);
      const read = readSettingsConnections(value, origin, resolve);
      specs.push(...read.specs);
      problems.push(...read.problems);
    };
    const top = vscode.workspace.getConfiguration('queryPlanInspector').inspect<unknown>(SETTINGS_KEY);
    add(top?.globalValue, { scope: 'user', where: 'the user settings' }, undefined);
    const folders = vscode.workspace.workspaceFolders ?? [];
    const file = vscode.workspace.workspaceFile;
    if (file) {
      add(top?.workspaceValue, { scope: 'workspace', where: 'the workspace settings' }, file.scheme === 'file' ? vscode.Uri.joinPath(file, '..') : undefined);
      for (const f of folders) {
        const value = vscode.workspace.getConfiguration('queryPlanInspector', f.uri).inspect<unknown>(SETTINGS_KEY)?.workspaceFolderValue;
        add(value, { scope: 'folder', folder: f.uri.toString(), where: `the settings of the folder ${f.name}` }, f.uri);
      }
    } else if (folders[0]) {
      const f = folders[0];
      add(top?.workspaceValue, { scope: 'folder', folder: f.uri.toString(), where: `the settings of the folder ${f.name}` }, f.uri);
    }
    this.fromSettings = specs;
    this.problems = problems;
    for (const p of problems) {
      if (this.shownProblems.has(p.error)) continue;
      this.shownProblems.add(p.error);
      void vscode.window.showWarningMessage(p.error, 'Open Settings').then((c) => {
        if (c) void openSettingsOf(p.origin);
      });
    }
  }

  dispose(): void {
    this.changed.dispose();
    this.settingsChanged.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

/** Opens the settings file that defines a settings connection. */
export async function openSettingsOf(origin: SettingsOrigin): Promise<void> {
  if (origin.scope === 'user') {
    await vscode.commands.executeCommand('workbench.action.openSettingsJson');
  } else if (origin.scope === 'workspace' && vscode.workspace.workspaceFile) {
    await vscode.window.showTextDocument(vscode.workspace.workspaceFile);
  } else if (origin.folder) {
    const file = vscode.Uri.joinPath(vscode.Uri.parse(origin.folder), '.vscode', 'settings.json');
    await vscode.window.showTextDocument(file);
  }
}
