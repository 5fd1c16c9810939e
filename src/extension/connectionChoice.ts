// Which connection a query runs on (the folder's, or the one the user picks and the folder remembers),
// its password from SecretStorage, and on MongoDB the collection of a family (`app_users*`) to run on.

import * as vscode from 'vscode';
import { chooseFamilyMember } from '../core/index';
import { Dismissed, UserError } from './commands';
import { settings } from './config';
import { ENGINE_LABEL } from './connections/bindings';
import type { ConnectionEngine, ConnectionSpec } from './connections/spec';
import { pickConnection } from './connections/ui';
import type { Gateway } from './gateway';
import type { Services } from './services';

/** The connection to use, asking (and remembering the answer for the folder) when none is bound. */
export async function connectionFor(s: Services, engine: ConnectionEngine, uri: vscode.Uri | undefined, connectionId?: string): Promise<ConnectionSpec> {
  if (connectionId) {
    const spec = s.store.get(connectionId);
    if (!spec) throw new UserError('That connection no longer exists: choose another one.');
    return spec;
  }
  const bound = s.bindings.get(uri, engine);
  if (bound) return bound;
  const existing = s.store.list(engine);
  let spec: ConnectionSpec | undefined;
  if (existing.length === 0) {
    const choice = await vscode.window.showInformationMessage(`No ${ENGINE_LABEL[engine]} connection is saved yet. Add one to explain this query.`, 'Add Connection');
    if (choice !== 'Add Connection') throw new Dismissed();
    spec = await s.addConnection(engine);
  } else {
    const pick = await pickConnection(s.store, engine, `Explain on which ${ENGINE_LABEL[engine]} connection?`);
    spec = pick === 'add' ? await s.addConnection(engine) : pick;
  }
  if (!spec) throw new Dismissed();
  await s.bindings.set(uri, spec);
  return spec;
}

export async function passwordFor(s: Services, spec: ConnectionSpec): Promise<string | undefined> {
  const password = spec.hasPassword ? await s.store.password(spec.id) : undefined;
  s.log.addSecret(password);
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

