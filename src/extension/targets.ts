// The queries of an open document as the core's finder sees them, kept per document text so the
// CodeLens, Explain and the connection picker do not read the same text again (a version number alone
// starts again at 1 when a changed file is opened again).

import type * as vscode from 'vscode';
import { querySourceKind, scriptDialect, type QuerySourceKind } from '../core/index';
import { explainTargets, type QueryTarget } from '../core/index';

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
  const targets = explainTargets(text, queryKind(doc), scriptDialect(doc.languageId, doc.fileName));
  cache.delete(key);
  cache.set(key, { text, targets });
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
  return targets;
}
