// Which connection each workspace folder uses, one per engine: the one the user chose, kept in
// workspaceState (keyed by the folder's URI, so multi-root workspaces bind each folder separately), or
// else the first connection of that engine in the settings that apply to the folder. Also the status bar
// item that shows the connection for the file in the active editor; one click changes it.

import * as vscode from 'vscode';
import { Commands } from '../commands';
import { queryKind, targetsOf } from '../targets';
import { underCharacterCap } from '../caps';
import type { ConnectionStore } from './store';
import type { ConnectionEngine, ConnectionSpec } from './spec';

const KEY = 'queryPlanInspector.bindings';
type BindingMap = Record<string, Partial<Record<ConnectionEngine, string>>>;

export const ENGINE_LABEL: Record<ConnectionEngine, string> = { mongodb: 'MongoDB', postgres: 'PostgreSQL' };

/** The key of the folder a document belongs to ('' outside any folder). */
export function folderKey(uri: vscode.Uri | undefined): string {
  if (!uri) return '';
  return vscode.workspace.getWorkspaceFolder(uri)?.uri.toString() ?? '';
}

export class Bindings implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  private readonly sub: vscode.Disposable;

  constructor(
    private readonly workspaceState: vscode.Memento,
    private readonly store: ConnectionStore,
  ) {
    // A folder's default may come from the settings: when they change, so may its connection.
    this.sub = store.onDidChangeSettings(() => this.changed.fire());
  }

  private all(): BindingMap {
    return this.workspaceState.get<BindingMap>(KEY, {});
  }

  /**
   * The connection the folder of `uri` uses for this engine: the one chosen for the folder if it still
   * exists, else the settings' default for the folder, else the one chosen outside any folder.
   */
  get(uri: vscode.Uri | undefined, engine: ConnectionEngine): ConnectionSpec | undefined {
    return this.resolve(uri, engine)?.spec;
  }

  /** The connection and why it is the one: chosen by the user, or the default from the settings. */
  resolve(uri: vscode.Uri | undefined, engine: ConnectionEngine): { spec: ConnectionSpec; chosen: boolean } | undefined {
    const key = folderKey(uri);
    const chosen = this.all()[key]?.[engine];
    const spec = chosen ? this.store.get(chosen) : undefined;
    if (spec) return { spec, chosen: true };
    const fromSettings = this.store.settingsDefault(key, engine);
    if (fromSettings) return { spec: fromSettings, chosen: false };
    const outside = key ? this.all()['']?.[engine] : undefined;
    const other = outside ? this.store.get(outside) : undefined;
    return other ? { spec: other, chosen: true } : undefined;
  }

  async set(uri: vscode.Uri | undefined, spec: ConnectionSpec): Promise<void> {
    const map = this.all();
    const key = folderKey(uri);
    map[key] = { ...map[key], [spec.engine]: spec.id };
    await this.workspaceState.update(KEY, map);
    this.changed.fire();
  }

  /** Forgets a removed connection everywhere. */
  async forget(id: string): Promise<void> {
    const map = this.all();
    for (const key of Object.keys(map)) {
      for (const engine of Object.keys(map[key]!) as ConnectionEngine[]) if (map[key]![engine] === id) delete map[key]![engine];
    }
    await this.workspaceState.update(KEY, map);
    this.changed.fire();
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}

/** The engine the queries of a document run on, when it can be told from its kind or its content. */
export function engineOfDocument(doc: vscode.TextDocument): ConnectionEngine | undefined {
  const kind = queryKind(doc);
  if (kind === 'sql') return 'postgres';
  if (kind === 'mongodb-playground') return 'mongodb';
  if (kind === 'script' && underCharacterCap(doc.getText().length)) return targetsOf(doc)[0]?.engine;
  return undefined;
}

export class ConnectionStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly bindings: Bindings,
    private readonly store: ConnectionStore,
  ) {
    this.item = vscode.window.createStatusBarItem('queryPlanInspector.connection', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Query Plan Inspector connection';
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
      bindings.onDidChange(() => this.update()),
      store.onDidChange(() => this.update()),
    );
    this.update();
  }

  /** Shown only for files that hold queries, so it does not take room everywhere. */
  update(): void {
    const editor = vscode.window.activeTextEditor;
    const engine = editor ? engineOfDocument(editor.document) : undefined;
    if (!editor || !engine) {
      this.item.hide();
      return;
    }
    const bound = this.bindings.resolve(editor.document.uri, engine);
    const spec = bound?.spec;
    const state = spec ? this.store.state(spec.id) : undefined;
    const icon = state?.kind === 'failed' ? '$(warning)' : '$(database)';
    this.item.text = spec ? `${icon} ${spec.name}` : `$(database) No ${ENGINE_LABEL[engine]} connection`;
    const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri);
    this.item.tooltip = spec
      ? `Queries in ${folder ? `the folder ${folder.name}` : 'this file'} are explained on ${spec.name} (${ENGINE_LABEL[engine]})${bound.chosen ? '' : `, the default from ${spec.origin?.where ?? 'the settings'}`}. Click to change.`
      : `Choose the ${ENGINE_LABEL[engine]} connection used to explain queries${folder ? ` in ${folder.name}` : ''}.`;
    this.item.command = { command: Commands.selectConnection, title: 'Choose connection', arguments: [engine] };
    this.item.show();
  }

  /** The text shown, for tests. */
  get text(): string {
    return this.item.text;
  }

  dispose(): void {
    this.item.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
