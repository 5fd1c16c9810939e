// Saved connections: metadata in globalState (a list of ConnectionSpec, which has no password field),
// passwords in SecretStorage under `queryPlanInspector.password.<id>`, joined by id only when a
// connection is opened. Also remembers each connection's last known state for the tree view.

import * as vscode from 'vscode';
import type { ConnectionEngine, ConnectionSpec } from './spec';

const LIST_KEY = 'queryPlanInspector.connections';
const secretKey = (id: string) => `queryPlanInspector.password.${id}`;

export type ConnectionState =
  | { kind: 'unknown' }
  | { kind: 'testing' }
  | { kind: 'ok'; serverVersion?: string; detail?: string; at: number }
  | { kind: 'failed'; error: string; at: number };

export class ConnectionStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly states = new Map<string, ConnectionState>();

  constructor(
    private readonly globalState: vscode.Memento,
    private readonly secrets: vscode.SecretStorage,
  ) {}

  list(engine?: ConnectionEngine): ConnectionSpec[] {
    const all = this.globalState.get<ConnectionSpec[]>(LIST_KEY, []);
    return engine ? all.filter((c) => c.engine === engine) : all;
  }

  get(id: string): ConnectionSpec | undefined {
    return this.list().find((c) => c.id === id);
  }

  /** Adds or replaces a connection; the password (when given) goes to SecretStorage only. */
  async save(spec: ConnectionSpec, password: string | undefined | null): Promise<void> {
    // `null` removes a stored password; `undefined` keeps whatever is stored.
    if (typeof password === 'string' && password !== '') await this.secrets.store(secretKey(spec.id), password);
    if (password === null || password === '') await this.secrets.delete(secretKey(spec.id));
    const hasPassword = typeof password === 'string' ? password !== '' : password === null ? false : spec.hasPassword;
    const clean: ConnectionSpec = { ...spec, hasPassword };
    // A defensive copy that cannot carry a password even if a caller smuggled one in.
    delete (clean as unknown as Record<string, unknown>).password;
    const list = this.list().filter((c) => c.id !== spec.id);
    list.push(clean);
    list.sort((a, b) => a.name.localeCompare(b.name));
    await this.globalState.update(LIST_KEY, list);
    this.states.set(spec.id, { kind: 'unknown' });
    this.changed.fire();
  }

  async remove(id: string): Promise<void> {
    await this.secrets.delete(secretKey(id));
    await this.globalState.update(LIST_KEY, this.list().filter((c) => c.id !== id));
    this.states.delete(id);
    this.changed.fire();
  }

  password(id: string): Thenable<string | undefined> {
    return this.secrets.get(secretKey(id));
  }

  state(id: string): ConnectionState {
    return this.states.get(id) ?? { kind: 'unknown' };
  }

  setState(id: string, state: ConnectionState): void {
    this.states.set(id, state);
    this.changed.fire();
  }

  newId(): string {
    const bytes = new Uint8Array(8);
    globalThis.crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  dispose(): void {
    this.changed.dispose();
  }
}
