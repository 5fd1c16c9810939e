// The queries of an open document as the core's finder sees them, kept per document text so the
// CodeLens, Explain and the connection picker do not read the same text again (a version number alone
// starts again at 1 when a changed file is opened again). Prisma calls are read with the workspace's
// Prisma schemas, so Explain runs them on the tables and columns they map to.

import * as vscode from 'vscode';
import { querySourceKind, readRepositorySchema, scriptDialect, type PrismaModels, type QuerySourceKind } from '../core/index';
import { explainTargets, type QueryTarget } from '../core/index';

const prisma: { models: PrismaModels | undefined; read: Promise<void> } = { models: undefined, read: Promise.resolve() };

/** Reads the workspace's Prisma schemas now and again whenever one changes. */
export function watchPrismaSchemas(context: vscode.ExtensionContext): void {
  const load = () => {
    prisma.read = readPrismaModels().then((models) => {
      prisma.models = models;
      cache.clear();
    }, () => undefined);
  };
  const watcher = vscode.workspace.createFileSystemWatcher('**/*.prisma');
  context.subscriptions.push(watcher, watcher.onDidChange(load), watcher.onDidCreate(load), watcher.onDidDelete(load));
  load();
}

/** Settles when the Prisma schemas being read are read (Explain waits for it, the CodeLens does not). */
export function prismaSchemasRead(): Promise<void> {
  return prisma.read;
}

async function readPrismaModels(): Promise<PrismaModels | undefined> {
  const uris = await vscode.workspace.findFiles('**/*.prisma', '**/node_modules/**', 20);
  if (uris.length === 0) return undefined;
  const files = await Promise.all(uris.map(async (u) => ({ path: vscode.workspace.asRelativePath(u), text: new TextDecoder().decode(await vscode.workspace.fs.readFile(u)) })));
  return readRepositorySchema(files).prismaModels;
}

const cache = new Map<string, { text: string; targets: QueryTarget[] }>();
/** Documents remembered at most; the least recently read is dropped first. */
const MAX_CACHED = 32;

export function queryKind(doc: vscode.TextDocument): QuerySourceKind {
  return querySourceKind(doc.languageId, doc.fileName);
}

/** The queries of a document; SQL files need the parser loaded (loadSqlParser) first. */
export function targetsOf(doc: vscode.TextDocument): QueryTarget[] {
  const key = doc.uri.toString();
  const text = doc.getText();
  const hit = cache.get(key);
  if (hit && hit.text === text) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.targets;
  }
  const targets = explainTargets(text, queryKind(doc), scriptDialect(doc.languageId, doc.fileName), { prismaModels: prisma.models });
  cache.delete(key);
  cache.set(key, { text, targets });
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
  return targets;
}
