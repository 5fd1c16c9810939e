// Indexes declared by Mongoose schemas in a model file, as Mongoose documents them: a path's `index: true`
// (or 1, -1, 'hashed', '2dsphere', 'text'), `unique: true` and `sparse: true`, nested paths and arrays of
// subdocuments, and `schema.index({ a: 1, b: -1 }, { unique, sparse, name })`. The collection is the one
// the finder's Mongoose reader gives the model: `mongoose.model('Order', schema)` -> `orders` by
// Mongoose's pluralisation, or the schema's `collection` option, or model()'s third argument. A schema
// whose model is made in another file is not read (its collection is not known here). Each model is
// listed in the schema's `entities` under its name and the name that holds it (`const OrderModel =
// model('Order', ...)`), with its collection, for the finder; `_id`'s own index is always there.

import { mongooseCollection } from '../query/find/mongoose';
import type { ScriptDialect } from '../query/find/types';
import type { BNode } from '../query/find/syntax';
import { forEachNode } from '../sql/tree';
import { booleanValue, keyOf, parseScript, property, stringValue } from './script';
import type { DeclaredMongoIndex, RepositorySchema } from './types';

interface SchemaDef { fields?: BNode; options?: BNode; calls: BNode[] }

export function readMongooseSchemas(text: string, source: string, dialect: ScriptDialect, into: RepositorySchema): void {
  const program = parseScript(text, dialect, source, into, 'Mongoose schemas');
  if (!program) return;
  const schemas = new Map<string, SchemaDef>();
  const models: { model: string; schema: BNode; collection?: string; holder?: string }[] = [];
  const heldBy = new Map<BNode, string>();
  const indexCalls: BNode[] = [];
  forEachNode(program, (o) => {
    const n = o as unknown as BNode;
    // const s = new Schema({...}, {...})
    if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier' && n.init) heldBy.set(n.init, n.id.name!);
    if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier' && n.init && isSchema(n.init)) {
      schemas.set(n.id.name!, schemaDef(n.init));
    } else if (n.type === 'AssignmentExpression' && n.left?.type === 'Identifier' && n.right && isSchema(n.right)) {
      schemas.set(n.left.name!, schemaDef(n.right));
    } else if (n.type === 'CallExpression' && n.callee) {
      const callee = n.callee;
      const method = callee.type === 'Identifier' ? callee.name : callee.type === 'MemberExpression' && !callee.computed ? callee.property?.name : undefined;
      // s.index({...}, {...}) is collected after the walk: the declaration may come later in the file.
      if (method === 'index' && callee.type === 'MemberExpression' && callee.object?.type === 'Identifier') indexCalls.push(n);
      if (method === 'model' && n.arguments?.[0] && n.arguments[1]) {
        const model = stringValue(n.arguments[0]);
        const third = n.arguments[2] ? stringValue(n.arguments[2]) : undefined;
        const holder = heldBy.get(n);
        if (model !== undefined) models.push({ model, schema: n.arguments[1], ...(third !== undefined ? { collection: third } : {}), ...(holder !== undefined ? { holder } : {}) });
      }
    }
  });
  for (const call of indexCalls) schemas.get(call.callee!.object!.name!)?.calls.push(call);
  for (const m of models) {
    const def = m.schema.type === 'Identifier' ? schemas.get(m.schema.name!) : isSchema(m.schema) ? schemaDef(m.schema) : undefined;
    const collection = m.collection ?? (def?.options ? stringValue(property(def.options, 'collection')) : undefined) ?? mongooseCollection(m.model);
    const entity = { library: 'mongoose' as const, table: collection, columns: {}, source };
    into.entities.set(m.model, entity);
    if (m.holder !== undefined && m.holder !== m.model) into.entities.set(m.holder, entity);
    if (!def) continue;
    const list = (into.collections.get(collection) ?? []).filter((ix) => ix.source !== source);
    for (const ix of indexesOf(def, source)) if (!list.some((x) => x.name === ix.name)) list.push(ix);
    into.collections.set(collection, list);
  }
}

/** `new Schema(...)`, `new mongoose.Schema(...)`, or the same called without `new` (Mongoose allows it). */
function isSchema(n: BNode): boolean {
  if ((n.type !== 'NewExpression' && n.type !== 'CallExpression') || !n.callee) return false;
  const c = n.callee;
  return (c.type === 'Identifier' && c.name === 'Schema') || (c.type === 'MemberExpression' && !c.computed && c.property?.name === 'Schema');
}

function schemaDef(n: BNode): SchemaDef {
  const [fields, options] = n.arguments ?? [];
  return { ...(fields?.type === 'ObjectExpression' ? { fields } : {}), ...(options?.type === 'ObjectExpression' ? { options } : {}), calls: [] };
}

function indexesOf(def: SchemaDef, source: string): DeclaredMongoIndex[] {
  const out: DeclaredMongoIndex[] = [];
  if (def.fields) paths(def.fields, '', out, source, 0);
  for (const call of def.calls) {
    const [keys, options] = call.arguments ?? [];
    const ix = keysIndex(keys, options, source);
    if (ix) out.push(ix);
  }
  return out;
}

/** The schema's paths, with the index each one declares. */
function paths(obj: BNode, prefix: string, out: DeclaredMongoIndex[], source: string, depth: number): void {
  if (depth > 16) return;
  for (const p of obj.properties ?? []) {
    const name = keyOf(p);
    let v = p.value as BNode | undefined;
    if (name === undefined || !v) continue;
    const path = prefix === '' ? name : `${prefix}.${name}`;
    if (v.type === 'ArrayExpression') v = (v.elements?.[0] as BNode | null | undefined) ?? undefined;
    if (!v) continue;
    if (isSchema(v)) {
      const inner = schemaDef(v).fields;
      if (inner) paths(inner, path, out, source, depth + 1);
      continue;
    }
    if (v.type !== 'ObjectExpression') continue;
    const typed = property(v, 'type') !== undefined;
    if (!typed) {
      paths(v, path, out, source, depth + 1);
      continue;
    }
    const index = property(v, 'index');
    const unique = booleanValue(property(v, 'unique'));
    const sparse = booleanValue(property(v, 'sparse'));
    const dir = index ? (index.type === 'ObjectExpression' ? 1 : booleanValue(index) === true ? 1 : indexDirection(index)) : undefined;
    if (dir === undefined && !unique) continue;
    const ix = declaredIndex({ [path]: dir ?? 1 }, index?.type === 'ObjectExpression' ? index : undefined, source);
    if (unique) ix.unique = true;
    if (sparse) ix.sparse = true;
    out.push(ix);
  }
}

/** An index from a keys document (`{ a: 1, b: -1 }`) and its options; undefined when a key is not written out. */
export function keysIndex(keys: BNode | undefined, options: BNode | undefined, source: string): DeclaredMongoIndex | undefined {
  if (keys?.type !== 'ObjectExpression') return undefined;
  const key: Record<string, number | string> = {};
  for (const p of keys.properties ?? []) {
    const name = keyOf(p);
    const dir = p.value ? indexDirection(p.value as BNode) : undefined;
    if (name === undefined || dir === undefined) return undefined;
    key[name] = dir;
  }
  return Object.keys(key).length > 0 ? declaredIndex(key, options?.type === 'ObjectExpression' ? options : undefined, source) : undefined;
}

/** One declared index from its keys and the options document that names it and says unique or sparse. */
export function declaredIndex(key: Record<string, number | string>, options: BNode | undefined, source: string): DeclaredMongoIndex {
  const name = (options ? stringValue(property(options, 'name')) : undefined) ?? Object.entries(key).map(([f, d]) => `${f}_${d}`).join('_');
  const ix: DeclaredMongoIndex = { name, key, source };
  if (options && booleanValue(property(options, 'unique'))) ix.unique = true;
  if (options && booleanValue(property(options, 'sparse'))) ix.sparse = true;
  return ix;
}

/** 1, -1, 'hashed', '2dsphere', 'text'. */
export function indexDirection(n: BNode): number | string | undefined {
  if (n.type === 'NumericLiteral') return n.value as number;
  if (n.type === 'UnaryExpression' && n.operator === '-' && n.argument?.type === 'NumericLiteral') return -(n.argument.value as number);
  return stringValue(n);
}
