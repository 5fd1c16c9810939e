// Which connection a query runs on (the folder's, or the one the user picks and the folder remembers),
// its password from SecretStorage, and on MongoDB the collection of a family (`app_users*`) to run on.

import * as vscode from 'vscode';
import { chooseFamilyMember } from '../core/index';
import { Dismissed, UserError } from './commands';
import { settings } from './config';
import { ENGINE_LABEL, type Bindings } from './connections/bindings';
import type { ConnectionEngine, ConnectionSpec } from './connections/spec';
import { pickConnection } from './connections/ui';
import type { Gateway } from './gateway';
import type { ConnectionStore } from './connections/store';
import type { Log } from './log';

/** Picks and remembers the connection of a query, and reads its password. */
export class ConnectionChoice {
  constructor(
    private readonly store: ConnectionStore,
    private readonly bindings: Bindings,
    private readonly log: Log,
    /** The Add Connection flow, when a query needs a connection and none exists. */
    private readonly add: (engine: ConnectionEngine) => Promise<ConnectionSpec | undefined>,
  ) {}

  /** The connection to use, asking (and remembering the answer for the folder) when none is bound. */
  async for(engine: ConnectionEngine, uri: vscode.Uri | undefined, connectionId?: string): Promise<ConnectionSpec> {
    if (connectionId) {
      const spec = this.store.get(connectionId);
      if (!spec) throw new UserError('That connection no longer exists: choose another one.');
      return spec;
    }
    const bound = this.bindings.get(uri, engine);
    if (bound) return bound;
    const existing = this.store.list(engine);
    let spec: ConnectionSpec | undefined;
    if (existing.length === 0) {
      const choice = await vscode.window.showInformationMessage(`No ${ENGINE_LABEL[engine]} connection is saved yet. Add one to explain this query.`, 'Add Connection');
      if (choice !== 'Add Connection') throw new Dismissed();
      spec = await this.add(engine);
    } else {
      const pick = await pickConnection(this.store, engine, `Explain on which ${ENGINE_LABEL[engine]} connection?`);
      spec = pick === 'add' ? await this.add(engine) : pick;
    }
    if (!spec) throw new Dismissed();
    await this.bindings.set(uri, spec);
    return spec;
  }

  /** The connection's password from SecretStorage, kept out of the log from now on. */
  password(spec: ConnectionSpec): Promise<string | undefined> {
    return passwordFor(this.store, this.log, spec);
  }
}

/** A connection's password from SecretStorage, kept out of the log from now on. */
export async function passwordFor(store: ConnectionStore, log: Log, spec: ConnectionSpec): Promise<string | undefined> {
  const password = spec.hasPassword ? await store.password(spec.id) : undefined;
  log.addSecret(password);
  return password;
}

/**
 * The collection of a family (`app_users*`) on the connection to explain or build on: the one asked for,
 * else the largest; a UserError when the database holds none of them.
 */
export async function familyMember(gateway: Gateway, spec: ConnectionSpec, uri: string, family: string, database: string | undefined, asked?: string): Promise<{ name: string; why: string; sentence: string; others: string[] }> {
  const members = await gateway.familyCollections({ uri, family, connectTimeoutMs: settings().connectTimeoutMs, ...(database !== undefined ? { database } : {}) });
  const choice = chooseFamilyMember(family, members, asked);
  if (!choice) throw new UserError(`No collection of the family ${family} is on ${spec.name}${database !== undefined ? ` in the database ${database}` : ''}, so there is none to run it on.`);
  return { ...choice, others: members.map((m) => m.name).filter((n) => n !== choice.name) };
}

