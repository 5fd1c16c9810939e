// The Connections view: one item per connection with its engine, address and last known state
// (untested, testing, connected with the server version, or the one-sentence failure). Connections from
// settings say so and where; a settings entry that cannot be used shows as a warning with its sentence,
// and opens the settings that hold it.

import * as vscode from 'vscode';
import { Commands } from '../commands';
import { ENGINE_LABEL } from './bindings';
import type { SettingsProblem } from './settings';
import { describe, type ConnectionSpec } from './spec';
import { openSettingsOf, type ConnectionStore } from './store';

type Node = ConnectionSpec | SettingsProblem;

/** Runs from a problem item: opens the settings file that holds the entry. */
export const OPEN_SETTINGS_COMMAND = 'queryPlanInspector.connections.openSettings';

function isProblem(node: Node): node is SettingsProblem {
  return 'error' in node;
}

export class ConnectionsTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subs: vscode.Disposable[];

  constructor(private readonly store: ConnectionStore) {
    this.subs = [
      store.onDidChange(() => this.changed.fire(undefined)),
      // Not in the palette (package.json lists the palette's commands): only problem items run it.
      vscode.commands.registerCommand(OPEN_SETTINGS_COMMAND, (p: SettingsProblem) => openSettingsOf(p.origin)),
    ];
  }

  getChildren(element?: Node): Node[] {
    return element ? [] : [...this.store.list(), ...this.store.settingsProblems()];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return isProblem(node) ? this.problemItem(node) : this.connectionItem(node);
  }

  private problemItem(p: SettingsProblem): vscode.TreeItem {
    const item = new vscode.TreeItem(p.name ?? 'Connection in settings', vscode.TreeItemCollapsibleState.None);
    item.id = p.id;
    item.contextValue = 'settingsProblem';
    item.description = `${p.engine ? `${ENGINE_LABEL[p.engine]} · ` : ''}not usable · ${p.origin.where}`;
    item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'));
    item.tooltip = p.error;
    item.command = { command: OPEN_SETTINGS_COMMAND, title: 'Open Settings', arguments: [p] };
    return item;
  }

  private connectionItem(spec: ConnectionSpec): vscode.TreeItem {
    const item = new vscode.TreeItem(spec.name, vscode.TreeItemCollapsibleState.None);
    item.id = spec.id;
    const state = this.store.state(spec.id);
    const where = describe(spec);
    // Menus match /^connection\./; the suffix lets a menu tell a read-only settings connection apart.
    item.contextValue = `connection.${spec.engine}${spec.origin ? '.settings' : ''}`;
    const origin = spec.origin ? ` · from ${spec.origin.where.replace(/^the /, '')}` : '';
    const defined = spec.origin ? ` Defined in ${spec.origin.where} (edit it there; only its password is kept here).` : '';
    switch (state.kind) {
      case 'ok':
        item.description = `${ENGINE_LABEL[spec.engine]} ${state.serverVersion ?? ''} · ${where}${origin}`.replace(/\s+·/, ' ·');
        item.iconPath = new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'));
        item.tooltip = `${spec.name}: connected to ${ENGINE_LABEL[spec.engine]}${state.serverVersion ? ` ${state.serverVersion}` : ''} at ${where}.${state.detail ? ` ${state.detail}` : ''}${defined}`;
        break;
      case 'failed':
        item.description = `${ENGINE_LABEL[spec.engine]} · ${where}${origin}`;
        item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'));
        item.tooltip = `${spec.name}: ${state.error}${defined}`;
        break;
      case 'testing':
        item.description = `${ENGINE_LABEL[spec.engine]} · ${where}${origin}`;
        item.iconPath = new vscode.ThemeIcon('loading~spin');
        item.tooltip = `${spec.name}: testing the connection...`;
        break;
      default:
        item.description = `${ENGINE_LABEL[spec.engine]} · ${where}${origin}`;
        item.iconPath = new vscode.ThemeIcon(spec.origin ? 'settings-gear' : 'database');
        item.tooltip = `${spec.name}: not tested in this session. Right-click to test it.${defined}`;
    }
    item.command = { command: Commands.testConnection, title: 'Test Connection', arguments: [spec] };
    return item;
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.changed.dispose();
  }
}
