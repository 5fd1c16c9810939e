// Reads the one index-building text the user saw and agreed to, `db.coll.createIndex({...}[, {...}])`,
// into data, WITHOUT evaluating it: it is parsed as one expression and only the shell-notation reader interprets
// the two arguments. Anything else (another method, a second call, a variable, a third argument) is
// refused in one sentence, so nothing but this one index ever reaches the server.

import { evaluateShellExpression, parseOneExpression } from '../mongo/shellNotation';
import type { BNode } from './find/syntax';

/** What the MongoDB adapter needs to build one index. */
export interface MongoIndexCreation {
  collection: string;
  /** From `db.getSiblingDB('x')`; otherwise the caller's default database applies. */
  database?: string;
  /** Key pattern in key order, Extended JSON values as the shell-notation reader gives them. */
  keys: Record<string, unknown>;
  /** The second argument as written (name, unique, partialFilterExpression...); {} when absent. */
  options: Record<string, unknown>;
  /** The index name: options.name, else the name MongoDB derives from the keys. */
  name: string;
}

export type MongoIndexCreationResult = { ok: true; value: MongoIndexCreation } | { ok: false; error: string };

/** What an adapter reports after building an index. */
export interface IndexCreationResult {
  engine: 'mongodb' | 'postgres';
  /** The index name (the one the server chose when the text named none). */
  name: string;
  /** db.collection or schema.table. */
  target: string;
  /** False when the index already existed (IF NOT EXISTS) and nothing was built. */
  created: boolean;
  /** Wall time of the build in milliseconds. */
  durationMs: number;
  /** Sentences the user should read about the build (outside a transaction, an invalid index dropped...). */
  notes: string[];
}

const MAX_TEXT = 64 * 1024;

/** Key values MongoDB accepts besides a non-zero number. */
const KEY_TYPES = new Set(['text', '2dsphere', '2d', 'hashed', 'geoHaystack']);

/** Reads `db.c.createIndex(keys[, options])` (also `db.getCollection('c')`, `db['c']`, `db.getSiblingDB('d').c`). */
export function parseMongoCreateIndex(text: string): MongoIndexCreationResult {
  if (typeof text !== 'string' || text.trim() === '') return { ok: false, error: 'The index command is empty: give one such as db.orders.createIndex({country_id: 1}).' };
  if (text.length > MAX_TEXT) return { ok: false, error: 'The index command is too long to be one createIndex call.' };
  const parsed = parseOneExpression(text);
  if ('syntaxError' in parsed) return { ok: false, error: 'The index command is not valid shell syntax: give one db.<collection>.createIndex({...}) call.' };
  if ('trailingAt' in parsed) return { ok: false, error: 'The index command has more text after the createIndex call: give one index at a time.' };
  const node = parsed.node;
  const callee = node.callee;
  if (node.type !== 'CallExpression' || callee?.type !== 'MemberExpression' || callee.object?.type === 'Super') {
    return { ok: false, error: 'The index command must be one db.<collection>.createIndex({...}) call.' };
  }
  const method = propertyName(callee);
  if (method !== 'createIndex') {
    const what = method === 'createIndexes' || method === 'ensureIndex' ? `${method} is not accepted` : 'only createIndex is run';
    return { ok: false, error: `The index command must be one db.<collection>.createIndex({...}) call: ${what}.` };
  }
  const where = collectionOf(callee.object!);
  if (typeof where === 'string') return { ok: false, error: where };
  const args = node.arguments ?? [];
  if (args.length < 1 || args.length > 2) return { ok: false, error: 'createIndex takes the key pattern and, optionally, an options document.' };
  if (args.some((a) => a.type === 'SpreadElement')) return { ok: false, error: 'The createIndex arguments must be written out, not spread.' };
  const keysRead = evaluateShellExpression(args[0]!, { source: text });
  if (!keysRead.ok) return { ok: false, error: keysRead.error };
  const keys = keysRead.value;
  if (!isPlainObject(keys) || Object.keys(keys).length === 0) return { ok: false, error: 'The key pattern must be a document with at least one field, such as {country_id: 1}.' };
  for (const [field, v] of Object.entries(keys)) {
    const ok = (typeof v === 'number' && v !== 0 && Number.isFinite(v)) || (typeof v === 'string' && KEY_TYPES.has(v));
    if (!ok) return { ok: false, error: `The key ${field} must be 1, -1 or an index type such as "text" or "hashed".` };
  }
  let options: Record<string, unknown> = {};
  if (args[1]) {
    const read = evaluateShellExpression(args[1], { source: text });
    if (!read.ok) return { ok: false, error: read.error };
    if (!isPlainObject(read.value)) return { ok: false, error: 'The second argument of createIndex must be an options document.' };
    options = read.value;
  }
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name === '')) {
    return { ok: false, error: 'The index name must be a non-empty string.' };
  }
  const name = typeof options.name === 'string' ? options.name : defaultMongoIndexName(keys);
  const value: MongoIndexCreation = { collection: where.collection, keys, options, name };
  if (where.database !== undefined) value.database = where.database;
  return { ok: true, value };
}

/** The name MongoDB gives an index without one: each field and its value joined by underscores. */
export function defaultMongoIndexName(keys: Record<string, unknown>): string {
  return Object.entries(keys).map(([k, v]) => `${k}_${String(v)}`).join('_');
}

function propertyName(m: BNode): string | undefined {
  const p = m.property;
  if (!m.computed && p?.type === 'Identifier') return p.name;
  if (m.computed && p?.type === 'StringLiteral') return p.value as string;
  return undefined;
}

/** The collection (and database) a createIndex call is made on, or the sentence refusing it. */
function collectionOf(n: BNode): { collection: string; database?: string } | string {
  const refuse = 'The index command must start from db: db.<collection>, db.getCollection("name") or db.getSiblingDB("db").<collection>.';
  let database: string | undefined;
  let collectionNode: BNode;
  let collection: string | undefined;
  if (n.type === 'CallExpression' && n.callee?.type === 'MemberExpression' && propertyName(n.callee) === 'getCollection') {
    collection = stringArgument(n.arguments ?? []);
    collectionNode = n.callee.object!;
  } else if (n.type === 'MemberExpression') {
    collection = propertyName(n);
    collectionNode = n.object!;
  } else {
    return refuse;
  }
  if (collection === undefined || collection === '') return refuse;
  if (collectionNode.type === 'CallExpression' && collectionNode.callee?.type === 'MemberExpression' && propertyName(collectionNode.callee) === 'getSiblingDB') {
    database = stringArgument(collectionNode.arguments ?? []);
    if (database === undefined || database === '') return 'getSiblingDB must name its database as a string.';
    collectionNode = collectionNode.callee.object!;
  }
  if (collectionNode.type !== 'Identifier' || collectionNode.name !== 'db') return refuse;
  return database !== undefined ? { collection, database } : { collection };
}

function stringArgument(args: readonly BNode[]): string | undefined {
  if (args.length !== 1) return undefined;
  const a = args[0]!;
  if (a.type === 'StringLiteral') return a.value as string;
  if (a.type === 'TemplateLiteral' && a.expressions?.length === 0) return (a.quasis?.[0]?.value as { cooked?: string | null } | undefined)?.cooked ?? undefined;
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
