// The Connections view: one item per saved connection with its engine, address and last known state
// (untested, testing, connected with the server version, or the one-sentence failure).

import * as vscode from 'vscode';
import { Commands } from '../commands';
import { ENGINE_LABEL } from './bindings';
import { describe, type ConnectionSpec } from './spec';
import type { ConnectionStore } from './store';

export class ConnectionsTree implements vscode.TreeDataProvider<ConnectionSpec>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<ConnectionSpec | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly store: ConnectionStore) {
    this.sub = store.onDidChange(() => this.changed.fire(undefined));
  }

  getChildren(element?: ConnectionSpec): ConnectionSpec[] {
    return element ? [] : this.store.list();
  }

  getTreeItem(spec: ConnectionSpec): vscode.TreeItem {
    const item = new vscode.TreeItem(spec.name, vscode.TreeItemCollapsibleState.None);
    item.id = spec.id;
    const state = this.store.state(spec.id);
    const where = describe(spec);
    item.contextValue = `connection.${spec.engine}`;
    switch (state.kind) {
      case 'ok':
        item.description = `${ENGINE_LABEL[spec.engine]} ${state.serverVersion ?? ''} · ${where}`.replace(/\s+·/, ' ·');
        item.iconPath = new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'));
        item.tooltip = `${spec.name}: connected to ${ENGINE_LABEL[spec.engine]}${state.serverVersion ? ` ${state.serverVersion}` : ''} at ${where}.${state.detail ? ` ${state.detail}` : ''}`;
        break;
      case 'failed':
        item.description = `${ENGINE_LABEL[spec.engine]} · ${where}`;
        item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'));
        item.tooltip = `${spec.name}: ${state.error}`;
        break;
      case 'testing':
        item.description = `${ENGINE_LABEL[spec.engine]} · ${where}`;
        item.iconPath = new vscode.ThemeIcon('loading~spin');
        item.tooltip = `${spec.name}: testing the connection...`;
        break;
      default:
        item.description = `${ENGINE_LABEL[spec.engine]} · ${where}`;
        item.iconPath = new vscode.ThemeIcon('database');
        item.tooltip = `${spec.name}: not tested in this session. Right-click to test it.`;
    }
    item.command = { command: Commands.testConnection, title: 'Test Connection', arguments: [spec] };
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}
