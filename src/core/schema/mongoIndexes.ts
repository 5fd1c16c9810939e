// Indexes a script builds with the driver or the shell, as their documentation writes them:
// `db.collection('x').createIndex({ a: 1 }, { unique: true, name })`, `createIndexes([{ key, name }])`,
// the shell's `db.x.createIndex(...)` and legacy `ensureIndex`, also on a constant holding the collection.
// A collection named by a literal and a run-time value (`db.collection('app_users' + appId)`) declares
// the index for its family (`app_users*`, find/family.ts), where the finder's queries of it look.

import { collectionFamily } from '../query/find/family';
import type { BNode } from '../query/find/syntax';
import type { ScriptDialect } from '../query/find/types';
import { forEachNode } from '../sql/tree';
import { keysIndex } from './mongoose';
import { parseScript, property, stringValue } from './script';
import type { RepositorySchema } from './types';

const CREATE = new Set(['createIndex', 'ensureIndex', 'createIndexes']);

/** Whether a script's text may build an index, before it is parsed. */
export function mayCreateMongoIndexes(text: string): boolean {
  return text.includes('createIndex') || text.includes('ensureIndex');
}

export function readMongoIndexCalls(text: string, source: string, dialect: ScriptDialect, into: RepositorySchema): void {
  const program = parseScript(text, dialect, source, into, 'createIndex calls');
  if (!program) return;
  // A name declared once in the file, with what it is given: `const users = db.collection('users')`.
  const declared = new Map<string, BNode | null>();
  const calls: BNode[] = [];
  forEachNode(program, (o) => {
    const n = o as unknown as BNode;
    if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier') declared.set(n.id.name!, declared.has(n.id.name!) ? null : n.init ?? null);
    else if (n.type === 'CallExpression' && n.callee?.type === 'MemberExpression' && !n.callee.computed && CREATE.has(n.callee.property?.name ?? '')) calls.push(n);
  });
  const held = (e: BNode): BNode => {
    for (let i = 0; i < 8 && e.type === 'Identifier'; i++) {
      const init = declared.get(e.name!);
      if (!init) break;
      e = init.type === 'AwaitExpression' && init.argument ? init.argument : init;
    }
    return e;
  };
  const nameOf = (e: BNode): string | undefined => stringValue(held(e));
  for (const call of calls) {
    const collection = collectionOf(held(call.callee!.object!), held, nameOf);
    if (collection === undefined) continue;
    const method = call.callee!.property!.name!;
    const specs = method === 'createIndexes'
      ? (call.arguments?.[0]?.type === 'ArrayExpression' ? (call.arguments[0].elements ?? []) : []).flatMap((el) => (el?.type === 'ObjectExpression' ? [{ keys: property(el, 'key'), options: el }] : []))
      : [{ keys: call.arguments?.[0], options: call.arguments?.[1] }];
    for (const { keys, options } of specs) {
      const ix = keysIndex(keys, options, source);
      if (!ix) continue;
      // As on the server, building an index that exists (a Mongoose schema's, another script's) changes nothing.
      const list = into.collections.get(collection) ?? [];
      if (list.some((x) => x.name === ix.name || JSON.stringify(x.key) === JSON.stringify(ix.key))) continue;
      into.collections.set(collection, [...list, ix]);
    }
  }
}

/** `db.collection(x)`, `db.getCollection(x)`, the shell's `db.x`: the collection's name or family. */
function collectionOf(e: BNode, held: (e: BNode) => BNode, nameOf: (e: BNode) => string | undefined): string | undefined {
  if (e.type === 'AwaitExpression' && e.argument) e = e.argument;
  if (e.type === 'CallExpression' && e.callee?.type === 'MemberExpression' && !e.callee.computed) {
    const m = e.callee.property?.name;
    const arg = e.arguments?.[0];
    if ((m !== 'collection' && m !== 'getCollection') || !arg) return undefined;
    return nameOf(arg) ?? collectionFamily(held(arg), nameOf);
  }
  if (e.type === 'MemberExpression' && !e.computed && e.object?.type === 'Identifier' && e.object.name === 'db') return e.property?.name;
  return undefined;
}
