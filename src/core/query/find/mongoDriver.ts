// MongoDB calls written against the shell (`db.orders.find(...)`, `db.getCollection('x')`) or the Node
// driver (`client.db('shop').collection('orders').find(...)`), with their cursor chains; the shell's
// legacy `update`/`remove` and the driver's `bulkWrite` operations. A collection is recognised where it
// is written, through constants, class fields (`this.orders = db.collection('orders')`) and properties of
// constant objects that hold it, and as a property of something named `db` or `collections`
// (`app.db.orders.find(...)`, a `db` imported from the application's own module, or a `db` parameter in a
// file that shows a db holding collections) in a file that uses no SQL library; fields declared empty and
// assigned a collection elsewhere; a parameter typed `Collection<T>` (found; its caller picks it, and the
// collections its callers give are named when they differ), or called for one (`coll()`, read by the
// functions its callers give). A field a base class keeps is named in each subclass by what its super
// call gives, what its calls of the base class's set-up method give (`super.open('votes')`) or the name it
// declares, and a field injected by a token (`@Inject(ORDERS)`) by the one provider of that token. A
// variable given several collections in turn holds the one the order of the code gives it where it is read.
// An object of collections a function returns is read through a constant that keeps it (`cols.Orders`) and
// through a module loaded where the function is called (`(await import('./db')).getCollections(db)`). A
// member of an instance of an application's class (`store.orders`, `this.view.archive`) is what the class's
// field, constructor or getter holds; a name a method returns (`db.collection(this.itemsName(id))`) is read
// there, a family (`items_*`) when it joins a literal to a run-time value, and an application's own
// `getCollection` or `collection` method (`storage.getCollection(tenant.id, 'users')`) is read through its
// body with the call's arguments, not as the shell's or the driver's; a bulkWrite of a field the
// class's methods push operations into (or of a property an object literal's methods push into) reads
// each where it is pushed. An instance of an application's class that says `implements Collection<T>`
// and is made from a collection (`new Logged(db.collection('orders'), log)`) is that collection.

import type { Doc, MongoCommand, MongoCommandPart, MongoOperation } from '../mongoShell';
import { Extractor, MAX_RESOLVE_DEPTH, type CallReader, type ChainCall } from './extractor';
import { heldAt, pathTo, pushChildren, isCall, isMember, keyName, propertyName, range, unwrap, type BNode } from './syntax';
import type { FoundMongoQuery, Located, MongoFlavour, SourceRange } from './types';
import { isPlaceholder, isUndefinedValue, isDoc, ValueReader } from './values';
import { escapeKey } from './ranges';
import { familyIn, familySentence, joinedIn } from './family';
import { exportedBinding, isForeign } from './workspace';
import { functionOf, globalMemberType, libraryOf, originOf, overridesOf, signatureReturnOrigin, typeofTarget } from './origin';
import { callersOf, constructorCallersOf, importersOf, type Callers } from './callers';
import { requiredModule } from './scope';

/** A path's last part: `a.ts` of `src/a.ts`. */
function baseName(file: string): string {
  return file.slice(file.lastIndexOf('/') + 1);
}

export const MONGO_OPERATIONS = new Set<string>(['find', 'findOne', 'aggregate', 'countDocuments', 'count', 'distinct', 'updateOne', 'updateMany',
  'deleteOne', 'deleteMany', 'findOneAndUpdate', 'findOneAndDelete', 'findOneAndReplace', 'replaceOne', 'update', 'remove', 'bulkWrite', 'estimatedDocumentCount']);
/** Modules whose presence says a `db.x.count()` is not MongoDB. */
export const SQL_LIBRARIES = ['@prisma/client', 'knex', 'sequelize', 'sequelize-typescript', 'typeorm', 'drizzle-orm', 'kysely', 'pg', 'postgres', 'slonik', 'mysql', 'mysql2', '@mikro-orm/core', 'objection'];
/** Names of a collection chosen at run time (`req.collection`, a `coll` parameter). */
const RUNTIME_COLLECTION = /^(collection|coll|col|mongoCollection)$/;
/** A name that says which collection it holds or names: `usersCollection`, `ordersColl`, `env.entries_collection`, `EVENTS_COLLECTION_NAME`. */
const NAMED_FOR_COLLECTION = /^(\w+?)(?:_coll(?:ection)?(?:_?name)?|Coll(?:ection)?(?:Name)?)$/i;
/** Names of things that hold collections as properties. */
const COLLECTION_HOLDERS = /^(db|database|mongo|mongodb|collections?)$/i;
/** Methods of the shell's `db` that are not collection names (`db.getName()`, `db.runCommand(...)`). */
const DB_METHODS = new Set(['getCollection', 'getSiblingDB', 'getDB', 'collection', 'runCommand', 'adminCommand', 'getName', 'createCollection',
  'dropDatabase', 'getCollectionNames', 'getCollectionInfos', 'aggregate', 'watch', 'command', 'stats', 'admin', 'listCollections', 'db']);
/** Cursor methods the reader takes into the query. */
export const CURSOR_METHODS = new Set(['sort', 'limit', 'skip', 'project', 'projection', 'hint', 'collation', 'maxTimeMS', 'comment', 'batchSize',
  'allowDiskUse', 'min', 'max', 'explain']);

/** A collection as a reader found it: its name, database, argument order, and where the name is written. */
export interface FoundCollection {
  /** Empty when the name is chosen at run time (`db.collection(name)`, a `collection` parameter). */
  name: string;
  database?: string;
  flavour: MongoFlavour;
  nameRange: SourceRange;
  /** Where the name was taken from a variable's or property's name (`env.entries_collection`), that name. */
  namedAfter?: string;
  /**
   * Where the name is a holder's property (`collections.users`, `app.db.orders`) whose object is not in the
   * files read, so the collection is taken to be the property's name: the property as written.
   */
  heldAs?: string;
  /**
   * Where the code chooses between collections at run time (`archived ? db.collection('old_orders') :
   * db.collection('orders')`), the others: the query is read on the first, and the hover names them.
   */
  alternatives?: string[];
  /** Where the name is a parameter's default (`{ collectionName = 'entries' }`), the parameter. */
  defaultOf?: string;
  /** Where the collection is a parameter typed `Collection<T>` (`orders: Collection<Order>`), the parameter. */
  typedAs?: string;
  /** Where the name is a family's (`app_users*`, family.ts), the code that builds it (`'app_users' + appId`). */
  family?: string;
  /** Where the collection is a parameter every caller gives the same one, the calls (`the 2 calls of configureX in a.ts, b.ts`). */
  namedBy?: string;
  /**
   * Where the collection is a parameter its callers give different collections (`removeDuplicates(orders())` and
   * `removeDuplicates(archivedOrders())`): the parameter and the collections, in the order the calls give them.
   * The name stays empty: the query runs on each of them.
   */
  givenAmong?: { parameter: string; names: string[] };
  /**
   * Where the collection is what an abstract method returns (`store.tables(id)`), the subclasses'
   * implementations that were read and the collections they name, in their order.
   */
  implementedBy?: { method: string; by: string; names: string[] };
}

/** The fact (ModuleScope.shows) that some statement of the file uses a `db` as a holder of collections. */
export const DB_HOLDS_COLLECTIONS = 'a db holding collections as properties';
/**
 * Methods of the driver's collections that no other library read here has on a lowercase property of a
 * `db` (Mongoose's models are capitalised and imported, Prisma says createMany, Sequelize bulkCreate).
 */
const DRIVER_ONLY = new Set(['insertOne', 'insertMany', 'bulkWrite', 'countDocuments', 'estimatedDocumentCount', 'findOneAndUpdate', 'findOneAndDelete',
  'findOneAndReplace', 'replaceOne', 'createIndex', 'initializeUnorderedBulkOp', 'initializeOrderedBulkOp']);

/**
 * True when a node shows a `db` holding collections as properties: `db.users = db.collection('users')`,
 * `const db = req.app.db`, a driver-only method on one of its properties (`db.users.insertMany(...)`), or
 * a cursor's `toArray()` on a chain that starts at one (`db.products.find(q).toArray()`).
 */
export function showsDbHoldingCollections(n: BNode): boolean {
  if (n.type === 'AssignmentExpression') {
    const left = unwrap(n.left!);
    const right = unwrap(n.right!);
    return isMember(left) && isDb(unwrap(left.object!)) && isCall(right) && isMember(unwrap(right.callee!)) && propertyName(unwrap(right.callee!)) === 'collection';
  }
  if (n.type === 'VariableDeclarator') {
    const init = n.init ? unwrap(n.init) : undefined;
    return n.id?.type === 'Identifier' && n.id.name === 'db' && init !== undefined && isMember(init) && propertyName(init) === 'db';
  }
  if (!isCall(n)) return false;
  const callee = unwrap(n.callee!);
  if (!isMember(callee)) return false;
  const m = propertyName(callee);
  if (m !== undefined && DRIVER_ONLY.has(m)) return isDbProperty(unwrap(callee.object!));
  if (m !== 'toArray') return false;
  let cur = unwrap(callee.object!);
  for (let i = 0; i < 32 && isCall(cur) && isMember(unwrap(cur.callee!)); i++) cur = unwrap(unwrap(cur.callee!).object!);
  return isDbProperty(cur);
}

/** `db` or `x.db`. */
function isDb(e: BNode): boolean {
  return (e.type === 'Identifier' && e.name === 'db') || (isMember(e) && propertyName(e) === 'db');
}

/** `db.users`, `app.db.users`: a lowercase property of a `db`, not computed. */
function isDbProperty(e: BNode): boolean {
  return isMember(e) && !e.computed && /^[a-z_]/.test(propertyName(e) ?? '') && isDb(unwrap(e.object!));
}

/** The legacy bulk API: `coll.initializeUnorderedBulkOp()` / `initializeOrderedBulkOp()`. */
const BULK_INIT = new Set(['initializeUnorderedBulkOp', 'initializeOrderedBulkOp']);
/** What `bulk.find(filter)` is followed by, as the operation it queues. */
const BULK_OPERATIONS: Record<string, MongoOperation> = {
  update: 'updateMany', updateOne: 'updateOne', replaceOne: 'replaceOne', deleteOne: 'deleteOne', delete: 'deleteMany', removeOne: 'deleteOne', remove: 'deleteMany',
};

/** The shell's and the driver's calls on a collection. */
export const mongoCalls: CallReader = {
  read(n, ex) {
    if (!isCall(n)) return false;
    const chain = ex.flatten(n);
    if (chain[0] && (chain[0].name === 'find' || BULK_OPERATIONS[chain[0].name] || chain[0].name === 'upsert') && readBulkFind(ex, chain)) return true;
    const opIndex = chain.findIndex((c) => MONGO_OPERATIONS.has(c.name));
    if (opIndex < 0) return false;
    const op = chain[opIndex]!;
    // An array's `find(fn)`, `findIndex`-like calls given a function: never a collection's.
    const arg0 = op.call.arguments?.[0] ? unwrap(op.call.arguments[0]) : undefined;
    if (arg0 && (arg0.type === 'ArrowFunctionExpression' || arg0.type === 'FunctionExpression')) return false;
    const coll = new Collections(ex).of(unwrap(unwrap(op.call.callee!).object!), 0);
    if (!coll || (coll.flavour === 'driver' && ormOptions(ex, op.call.arguments?.[0]))) return false;
    if (op.name === 'bulkWrite') return readBulkWrite(ex, coll, chain, opIndex);
    // estimatedDocumentCount(options) counts the whole collection: its argument is no filter.
    if (op.name === 'estimatedDocumentCount') {
      const whole = chain.map((c, i) => (i === opIndex ? { ...c, call: { ...c.call, arguments: [] } } : c));
      readMongoChain(ex, coll, whole, opIndex, 'count');
      return true;
    }
    readMongoChain(ex, coll, chain, opIndex, legacyOperation(ex, op));
    return true;
  },
};

/** `{ where: ... }` as a first argument: an ORM's options (Sequelize, TypeORM, Prisma), not a MongoDB filter. */
function ormOptions(ex: Extractor, arg: BNode | undefined): boolean {
  const o = arg ? ex.resolve(arg) : undefined;
  return o?.type === 'ObjectExpression' && (o.properties ?? []).some((p) => p.type === 'ObjectProperty' && p.key !== undefined && keyName(p.key) === 'where');
}

/**
 * The shell's legacy `update(filter, update, { multi })` and `remove(filter, justOne)` as the operations
 * they run; undefined for the others.
 */
function legacyOperation(ex: Extractor, op: ChainCall): MongoOperation | undefined {
  const args = op.call.arguments ?? [];
  if (op.name === 'update') {
    const opts = args[2] ? ex.resolve(args[2]) : undefined;
    const multi = opts?.type === 'ObjectExpression' && (opts.properties ?? []).some((p) => p.key && keyName(p.key) === 'multi' && unwrap(p.value as BNode).type === 'BooleanLiteral' && (unwrap(p.value as BNode).value as boolean));
    return multi ? 'updateMany' : 'updateOne';
  }
  if (op.name === 'remove') {
    const second = args[1] ? ex.resolve(args[1]) : undefined;
    const justOne = second?.type === 'BooleanLiteral' ? (second.value as boolean)
      : second?.type === 'ObjectExpression' && (second.properties ?? []).some((p) => p.key && keyName(p.key) === 'justOne');
    return justOne ? 'deleteOne' : 'deleteMany';
  }
  return undefined;
}

/**
 * The legacy bulk API, `bulk.find(filter).upsert().updateOne(update)` on a `bulk` made by
 * `coll.initializeUnorderedBulkOp()`: one query per queued operation that has a filter
 * (`bulk.insert(doc)` has none, as `insertOne` has none).
 */
function readBulkFind(ex: Extractor, chain: ChainCall[]): boolean {
  let base = ex.chainBase(chain);
  // `const c = bulk.find(filter); c.updateOne(update)`: the find kept in a constant, the operation queued on it.
  const kept = chain[0]!.name !== 'find' && base?.type === 'Identifier' ? ex.constInit(base.name!) ?? onlyValue(ex, base.name!) : undefined;
  if (kept) {
    const head = ex.flatten(kept);
    if (head[0]?.name !== 'find') return false;
    chain = [...head, ...chain];
    base = ex.chainBase(head);
  } else if (chain[0]!.name !== 'find') return false;
  const coll = base ? new Collections(ex).bulkOf(base, 0) : undefined;
  if (!coll) return false;
  for (const c of chain) ex.consume(c.call);
  const opIndex = chain.findIndex((c) => BULK_OPERATIONS[c.name] !== undefined);
  if (opIndex < 0) return true;
  const op = chain[opIndex]!;
  const operation = BULK_OPERATIONS[op.name]!;
  const filter = chain[0]!.call.arguments?.[0];
  const args = [filter, ...(op.call.arguments ?? []).slice(0, 1)].filter((x): x is BNode => x !== undefined);
  // It reads like `operation(filter, update)` called on the bulk: the name is the method that queued it.
  const call: BNode = { type: 'CallExpression', start: base!.start, end: op.call.end, arguments: args, callee: { type: 'MemberExpression', start: base!.start, end: op.nameNode.end, object: base!, property: op.nameNode } };
  const q = new MongoReader(ex, coll, { name: op.name, call, nameNode: op.nameNode }, [], operation).read();
  if (chain.slice(1, opIndex).some((c) => c.name === 'upsert')) q.command.options = { ...(q.command.options ?? {}), upsert: true };
  ex.push(q);
  return true;
}

/** The one value a local name is ever given where it is declared (a name of the same spelling assigned elsewhere in the file does not count). */
function onlyValue(ex: Extractor, name: string): BNode | undefined {
  const w = ex.writesTo(name);
  return w?.values.length === 1 && w.pushed.length === 0 ? w.values[0] : undefined;
}

/** `bulkWrite([{ updateOne: { filter, update } }, { deleteMany: { filter } }, ...])`: one query per operation that reads. */
function readBulkWrite(ex: Extractor, coll: FoundCollection, chain: ChainCall[], opIndex: number): boolean {
  const op = chain[opIndex]!;
  for (const c of chain) ex.consume(c.call);
  const arg = op.call.arguments?.[0];
  for (const doc of arg ? bulkOperations(ex, arg) : []) {
    for (const p of doc.properties ?? []) {
      const kind = p.type === 'ObjectProperty' && p.key ? keyName(p.key) : undefined;
      if (kind !== 'updateOne' && kind !== 'updateMany' && kind !== 'deleteOne' && kind !== 'deleteMany' && kind !== 'replaceOne') continue;
      // An operation pushed into an array two bulkWrite calls run is one query, run from both.
      const inside = p.start >= op.call.start && p.end <= op.call.end;
      const known = ex.queryAt(p);
      if (known?.engine === 'mongodb') {
        if (!inside) known.calledFrom = [...(known.calledFrom ?? []), range(op.call)];
        continue;
      }
      // An operation pushed in another method of the class is read in the scopes around it there.
      const path = inside ? undefined : pathTo(ex.module.statements?.() ?? [], p);
      if (path) ex.within(path, () => readBulkOperation(ex, coll, op, p, kind, inside));
      else readBulkOperation(ex, coll, op, p, kind, inside);
    }
  }
  return true;
}

/** One operation of a bulkWrite (`{ updateOne: { filter, update } }`), read as a call and recorded at its place. */
function readBulkOperation(ex: Extractor, coll: FoundCollection, op: ChainCall, p: BNode, kind: MongoOperation, inside: boolean): void {
  const body = ex.resolve(p.value as BNode);
  if (body.type !== 'ObjectExpression') return;
  const member = (k: string) => (body.properties ?? []).find((x) => x.type === 'ObjectProperty' && x.key && keyName(x.key) === k)?.value as BNode | undefined;
  const filter = member('filter');
  const update = member('update') ?? member('replacement');
  const args = [filter, ...(update ? [update] : [])].filter((x): x is BNode => x !== undefined);
  // The operation reads like a call `updateOne(filter, update)` whose name is the key and whose arguments are the members.
  const call: BNode = { type: 'CallExpression', start: p.start, end: p.end, arguments: args, callee: { type: 'MemberExpression', start: p.start, end: p.key!.end, object: op.call.callee!, property: p.key! } };
  const q = new MongoReader(ex, coll, { name: kind, call, nameNode: p.key! }, [], kind).read();
  q.range = { start: p.start, end: p.end };
  q.command.ranges.whole = { start: p.start, end: p.end };
  if (!inside) q.calledFrom = [range(op.call)];
  ex.pushAt(p, q);
}

/**
 * The operation documents a bulkWrite is given: an array literal, or an array built in the same function
 * from literal operations (`const ops = []; ops.push({ updateOne: ... })`, `items.map((i) => ({ ... }))`,
 * `await coll.find(q).map((d) => ({ ... })).toArray()`), or returned by a function or method of the same
 * file (`bulkWrite(rankOperations(players))`, `Promise.all(docs.map((d) => this.toOperation(d)))`), or
 * given by the calls of a local function whose parameter it is; a property of each element of an array
 * mapped (`group.map((e) => e.operation)`), the elements as elementsOf reads them.
 */
function bulkOperations(ex: Extractor, arg: BNode): BNode[] {
  const out: BNode[] = [];
  const seen = new Set<BNode>();
  const add = (e: BNode | null | undefined, depth: number): void => {
    if (!e || depth > MAX_RESOLVE_DEPTH || seen.has(e)) return;
    seen.add(e);
    const v = ex.resolve(e);
    if ((v.type === 'SpreadElement' || v.type === 'AwaitExpression') && v.argument) return add(v.argument, depth + 1);
    // cursor.map((d) => ({ updateOne: ... })).toArray(): the mapped documents, collected.
    if (isCall(v) && isMember(unwrap(v.callee!)) && propertyName(unwrap(v.callee!)) === 'toArray') return add(unwrap(v.callee!).object, depth + 1);
    if (v.type === 'ObjectExpression') {
      out.push(v);
      return;
    }
    if (v.type === 'ArrayExpression') {
      for (const el of v.elements ?? []) add(el, depth + 1);
      return;
    }
    // items.map((item) => ({ updateOne: ... })), items.map(toOperation), items.flatMap(...): what the function returns for each item.
    if (isCall(v) && isMember(unwrap(v.callee!)) && (propertyName(unwrap(v.callee!)) === 'map' || propertyName(unwrap(v.callee!)) === 'flatMap')) {
      const given = v.arguments?.[0] ? unwrap(v.arguments[0]) : undefined;
      const r = given?.type === 'Identifier' ? ex.lookup(given.name!) : undefined;
      const named = r && 'fn' in r.binding ? r.binding.fn : r && 'init' in r.binding && !r.mutated ? r.binding.init : undefined;
      const fn = named ?? given;
      const first = fn && ['ArrowFunctionExpression', 'FunctionExpression', 'FunctionDeclaration'].includes(unwrap(fn).type) ? unwrap(fn).params?.[0] : undefined;
      for (const x of returnedValues(fn)) {
        // groups.map((entry) => entry.operation): that property of each element of the array mapped.
        const ux = unwrap(x);
        const key = first?.type === 'Identifier' && isMember(ux) && !ux.computed && unwrap(ux.object!).type === 'Identifier' && unwrap(ux.object!).name === first.name ? propertyName(ux) : undefined;
        if (key === undefined) add(x, depth + 1);
        else for (const el of elementsOf(ex, unwrap(v.callee!).object!, new Set())) add(heldAt(ex.resolve(el), key), depth + 1);
      }
      return;
    }
    if (isCall(v)) {
      const callee = unwrap(v.callee!);
      const m = isMember(callee) ? propertyName(callee) : undefined;
      // ops.filter((o) => o !== null), ops.slice(0, n): the operations they keep.
      if (m === 'filter' || m === 'slice') return add(callee.object, depth + 1);
      // Promise.all(docs.map(async (d) => ...)): the operations the promises give.
      if (m === 'all' && isMember(callee) && unwrap(callee.object!).type === 'Identifier' && unwrap(callee.object!).name === 'Promise') return add(v.arguments?.[0], depth + 1);
      // rankOperations(players), this.toOperation(doc): what a function or method of this file returns; a
      // method of the object literal whose method makes the call (`this.toOperation(doc)` in `export default { ... }`).
      const target = functionOf(ex, callee) ?? objectMethodAt(ex, callee);
      if (target && target.ex === ex) for (const x of returnedValues(target.fn)) add(x, depth + 1);
      return;
    }
    // this.pending where the class's methods push operations into the field (`this.pending.push({ updateOne: ... })`),
    // or the methods of the object literal the bulkWrite's method is one of (`export default { pending: [], ... }`).
    if (isMember(v) && !v.computed && unwrap(v.object!).type === 'ThisExpression') {
      const holder = ex.enclosingClassNode() ?? thisObjectAt(ex, v);
      const field = propertyName(v);
      if (holder && field !== undefined) for (const x of fieldPushes(holder, field)) add(x, depth + 1);
      return;
    }
    if (v.type === 'Identifier') {
      const writes = ex.writesTo(v.name!);
      for (const x of [...(writes?.values ?? []), ...(writes?.pushed ?? [])]) add(x, depth + 1);
      // `const flush = (batch) => coll.bulkWrite(batch)` declared inside a function and called there with an
      // array the function pushes operations into: what its calls give it (never calls in other statements).
      const param = writes?.pushed.length ? undefined : ex.parameterOf(v.name!);
      if (param?.declaredIn !== undefined && param.path.length === 0) {
        for (const c of callersOf(ex, v.name!)?.values ?? []) {
          if (c.file !== undefined && c.file !== ex.context.file) continue;
          for (const doc of c.read((cex, value) => bulkOperations(cex, value))) if (!out.includes(doc)) out.push(doc);
        }
      }
    }
  };
  add(arg, 0);
  return out;
}

/**
 * The elements an array holds, as the code shows them: an array literal's; a field's, pushed by the class's
 * methods (fieldPushes); a local's, from the arrays it is given and what is pushed into it; and a group of
 * elements collected by key in a local Map (`const groups = new Map(); for (const op of this.pending) {
 * const g = groups.get(k) ?? []; g.push(op); groups.set(k, g); } for (const ops of groups.values()) ...`),
 * the elements pushed into the arrays the map is given. An element that is a loop's variable over an array
 * stands for that array's elements. At most 64.
 */
function elementsOf(ex: Extractor, e: BNode, seen: Set<BNode>): BNode[] {
  const v = unwrap(e);
  if (seen.has(v) || seen.size > 64) return [];
  seen.add(v);
  const out: BNode[] = [];
  const items = (x: BNode) => {
    const u = unwrap(x);
    if (u.type === 'SpreadElement' && u.argument) out.push(...elementsOf(ex, u.argument, seen));
    else if (u.type === 'Identifier' && loopOver(ex, u.name!)) out.push(...elementsOf(ex, loopOver(ex, u.name!)!, seen));
    else out.push(u);
  };
  if (v.type === 'ArrayExpression') for (const el of v.elements ?? []) if (el) items(el);
  // `existing ?? []`: what either side holds.
  if (v.type === 'LogicalExpression') for (const side of [v.left!, v.right!]) out.push(...elementsOf(ex, side, seen));
  if (isMember(v) && !v.computed && unwrap(v.object!).type === 'ThisExpression') {
    const cls = ex.enclosingClassNode();
    const field = propertyName(v);
    for (const x of cls && field !== undefined ? fieldPushes(cls, field) : []) {
      if (unwrap(x).type === 'ArrayExpression') out.push(...elementsOf(ex, x, seen));
      else items(x);
    }
  }
  // groups.values(), groups.get(k): the arrays the Map is given by `groups.set(k, g)`, each group's elements.
  const callee = isCall(v) ? unwrap(v.callee!) : undefined;
  if (callee && isMember(callee) && !callee.computed && (propertyName(callee) === 'get' || propertyName(callee) === 'values')) {
    // Each group read in the scopes around its `set` (the block that fills the Map, not the one that reads it).
    const statements = ex.module.statements?.() ?? [];
    for (const g of mapGroups(ex, unwrap(callee.object!))) {
      const path = pathTo(statements, g);
      if (path) out.push(...ex.within(path, () => elementsOf(ex, g, seen)));
    }
  }
  if (v.type === 'Identifier') {
    const over = loopOver(ex, v.name!);
    // `for (const ops of groups.values())`: one group of the Map, whose elements any group's are.
    if (over) {
      const c = isCall(unwrap(over)) ? unwrap(unwrap(over).callee!) : undefined;
      if (c && isMember(c) && propertyName(c) === 'values') out.push(...elementsOf(ex, unwrap(over), seen));
    } else {
      const writes = ex.writesTo(v.name!);
      for (const x of writes?.values ?? []) out.push(...elementsOf(ex, x, seen));
      for (const x of writes?.pushed ?? []) items(x);
    }
  }
  return out.slice(0, 64);
}

/** What a `for (const x of ...)` loop's variable runs over, when `name` is one. */
function loopOver(ex: Extractor, name: string): BNode | undefined {
  const at = ex.declaringNode(name);
  const left = at?.type === 'ForOfStatement' ? (at as unknown as { left?: BNode }).left : undefined;
  const id = left?.type === 'VariableDeclaration' && left.declarations?.length === 1 ? left.declarations[0]!.id : undefined;
  return id?.type === 'Identifier' && id.name === name ? (at as unknown as { right: BNode }).right : undefined;
}

/** The values a local `new Map()` is given by its `set(key, value)` calls in the block that declares it; none for anything else. */
function mapGroups(ex: Extractor, m: BNode): BNode[] {
  const init = m.type === 'Identifier' ? ex.constInit(m.name!) : undefined;
  const at = m.type === 'Identifier' ? ex.declaringNode(m.name!) : undefined;
  if (!init || unwrap(init).type !== 'NewExpression' || unwrap(unwrap(init).callee!).type !== 'Identifier' || unwrap(unwrap(init).callee!).name !== 'Map' || !at) return [];
  const out: BNode[] = [];
  const stack: BNode[] = [at];
  while (stack.length > 0 && out.length < 64) {
    const n = stack.pop()!;
    const c = isCall(n) ? unwrap(n.callee!) : undefined;
    if (c && isMember(c) && !c.computed && propertyName(c) === 'set' && unwrap(c.object!).type === 'Identifier' && unwrap(c.object!).name === m.name && n.arguments?.[1]) out.push(n.arguments[1]);
    pushChildren(n, stack);
  }
  return out;
}

/** What a class's methods push into one of its fields (`this.pending.push(op)`) and the array literals it is given: at most 64 values. */
function fieldPushes(cls: BNode, field: string): BNode[] {
  const out: BNode[] = [];
  const isField = (x: BNode | undefined) => x !== undefined && isMember(unwrap(x)) && !unwrap(x).computed && unwrap(unwrap(x).object!).type === 'ThisExpression' && propertyName(unwrap(x)) === field;
  const members = cls.type === 'ObjectExpression' ? cls.properties ?? [] : (cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
  // An object literal's own property (`pending: [] as Op[]`): the array it starts with.
  for (const m of cls.type === 'ObjectExpression' ? members : []) {
    const value = m.type === 'ObjectProperty' && m.key && !m.computed && keyName(m.key) === field ? unwrap(m.value as BNode) : undefined;
    if (value?.type === 'ArrayExpression') out.push(value);
  }
  const stack: BNode[] = [...members];
  while (stack.length > 0 && out.length < 64) {
    const n = stack.pop()!;
    if (n.type === 'ClassDeclaration' || n.type === 'ClassExpression') continue;
    if (isCall(n) && isMember(unwrap(n.callee!)) && propertyName(unwrap(n.callee!)) === 'push' && isField(unwrap(n.callee!).object)) out.push(...(n.arguments ?? []));
    const value = n.type === 'ClassProperty' && n.key && !n.computed && keyName(n.key) === field ? (n as unknown as { value?: BNode | null }).value
      : n.type === 'AssignmentExpression' && n.operator === '=' && isField(n.left) ? n.right : undefined;
    if (value && unwrap(value).type === 'ArrayExpression') out.push(unwrap(value));
    pushChildren(n, stack);
  }
  return out;
}

/**
 * The object literal whose method the node is in, when `this` there is that object: the nearest function
 * around the node that is not an arrow function is one of the object's methods (`flush() { ... }`,
 * `flush: async function () { ... }`). Looked for only when a bulkWrite is given a `this.<property>` outside a class.
 */
function thisObjectAt(ex: Extractor, node: BNode): BNode | undefined {
  const path = pathTo(ex.module.statements?.() ?? [], node);
  for (let i = (path?.length ?? 0) - 1; path && i > 0; i--) {
    const n = path[i]!;
    if (n.type === 'ArrowFunctionExpression') continue;
    if (n.type === 'ObjectMethod' && n.kind === 'method') return path[i - 1]!.type === 'ObjectExpression' ? path[i - 1] : undefined;
    if (n.type === 'FunctionExpression') return path[i - 1]!.type === 'ObjectProperty' && path[i - 2]?.type === 'ObjectExpression' ? path[i - 2] : undefined;
    if (n.type === 'FunctionDeclaration' || n.type === 'ClassMethod' || n.type === 'ClassDeclaration' || n.type === 'ClassExpression') return undefined;
  }
  return undefined;
}

/** `this.toOperation(doc)` in a method of an object literal: that object's method of the name. */
function objectMethodAt(ex: Extractor, callee: BNode): { ex: Extractor; fn: BNode } | undefined {
  if (!isMember(callee) || callee.computed || unwrap(callee.object!).type !== 'ThisExpression') return undefined;
  const name = propertyName(callee);
  const obj = name !== undefined ? thisObjectAt(ex, callee) : undefined;
  for (const m of obj?.properties ?? []) {
    if (!m.key || m.computed || keyName(m.key) !== name) continue;
    if (m.type === 'ObjectMethod' && m.kind === 'method') return { ex, fn: m };
    const value = m.type === 'ObjectProperty' ? unwrap(m.value as BNode) : undefined;
    if (value && (value.type === 'FunctionExpression' || value.type === 'ArrowFunctionExpression')) return { ex, fn: value };
  }
  return undefined;
}

/** The values a function returns (its expression body, or its own return statements). */
function returnedValues(fn: BNode | undefined): BNode[] {
  const f = fn ? unwrap(fn) : undefined;
  if (!f || !['ArrowFunctionExpression', 'FunctionExpression', 'FunctionDeclaration', 'ClassMethod', 'ObjectMethod'].includes(f.type) || !f.body || Array.isArray(f.body)) return [];
  if (f.body.type !== 'BlockStatement') return [f.body];
  const out: BNode[] = [];
  const stack: BNode[] = [f.body];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'ReturnStatement' && n.argument) out.push(n.argument);
    else if (!['ArrowFunctionExpression', 'FunctionExpression', 'FunctionDeclaration', 'ObjectMethod', 'ClassMethod'].includes(n.type)) pushChildren(n, stack);
  }
  return out;
}

/** Reads an operation and the cursor methods after it, and records the query. */
export function readMongoChain(ex: Extractor, coll: FoundCollection, chain: ChainCall[], opIndex: number, operation?: MongoOperation): FoundMongoQuery {
  for (const c of chain) ex.consume(c.call);
  const cursor: ChainCall[] = [];
  for (let i = opIndex + 1; i < chain.length && CURSOR_METHODS.has(chain[i]!.name); i++) cursor.push(chain[i]!);
  const q = new MongoReader(ex, coll, chain[opIndex]!, cursor, operation).read();
  ex.push(q);
  return q;
}

/** Tells what collection an expression stands for. */
/** A collection read in another module, its name's range moved to the call of this file when it was written there. */
/** What a parameter is without its callers, and its name as the hover writes it (`coll`, or `coll()` for one called). */
interface Unnamed { found: FoundCollection; parameter: string; called?: boolean }

/** What the argument of `db.collection(...)` names, without where: a FoundCollection's name and how it was known. */
type CollectionName = Omit<FoundCollection, 'flavour' | 'nameRange' | 'database'>;

/** `f()` for a function `f` a caller gives: a call written where `f` is, with no arguments. */
function calledWithNothing(f: BNode): BNode {
  return { type: 'CallExpression', callee: f, arguments: [], start: f.start, end: f.end } as unknown as BNode;
}

function atCall(found: FoundCollection | undefined, call: BNode): FoundCollection | undefined {
  return found && isForeign(found.nameRange.start) ? { ...found, nameRange: range(call) } : found;
}

/** What a class's static property is initialised with (`static coll = db.collection('orders')`). */
function staticValue(cls: BNode, name: string): BNode | undefined {
  for (const m of (cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
    const p = m as unknown as { static?: boolean; value?: BNode | null };
    if (m.type === 'ClassProperty' && p.static === true && !m.computed && m.key?.type === 'Identifier' && m.key.name === name && p.value) return p.value;
  }
  return undefined;
}

/** `undefined` or `null`: a variable's value before it is given one. */
function isNothingValue(e: BNode): boolean {
  const v = unwrap(e);
  return v.type === 'NullLiteral' || (v.type === 'Identifier' && v.name === 'undefined');
}

/** A value as the module that writes it holds it: a constant of this module or one another module of the workspace exports. */
function valueOf(ex: Extractor, e: BNode, depth: number): { ex: Extractor; node: BNode } | undefined {
  if (depth > MAX_RESOLVE_DEPTH) return undefined;
  e = unwrap(e);
  if (e.type === 'AwaitExpression' && e.argument) return valueOf(ex, e.argument, depth + 1);
  if (e.type !== 'Identifier') return { ex, node: e };
  const init = ex.constInit(e.name!);
  if (init) return valueOf(ex, init, depth + 1);
  const other = ex.imported(e.name!);
  const b = other ? other.ex.module.names.get(other.local) : undefined;
  return other && b && 'init' in b && !other.ex.module.mutated.has(other.local) ? valueOf(other.ex, b.init, depth + 1) : undefined;
}

/**
 * The `new` an expression's value is made by (`this.store.collections.guilds` where the class of `store`
 * sets `collections` in its constructor to what a function returns, `{ guilds: new GuildsCollection(...) }`),
 * with the extractor of the module that writes it; followed through constants, imports, function returns,
 * objects and the fields of the application's classes.
 */
function newOf(ex: Extractor, e: BNode, depth: number): { ex: Extractor; node: BNode } | undefined {
  if (depth > MAX_RESOLVE_DEPTH) return undefined;
  const v = valueOf(ex, e, depth + 1);
  if (!v) return undefined;
  const n = v.node;
  if (n.type === 'NewExpression') return v;
  if (isCall(n)) {
    const target = functionOf(v.ex, unwrap(n.callee!));
    const returned = target ? returnedValues(target.fn) : [];
    return returned.length === 1 ? newOf(target!.ex, returned[0]!, depth + 1) : undefined;
  }
  if (!isMember(n) || n.computed) return undefined;
  const name = propertyName(n);
  if (name === undefined) return undefined;
  const held = v.ex.follow(n);
  if (held !== n) return newOf(v.ex, held, depth + 1);
  const obj = unwrap(n.object!);
  const objValue = obj.type === 'Identifier' ? valueOf(v.ex, obj, depth + 1) : undefined;
  if (objValue?.node.type === 'ObjectExpression') {
    const at = heldAt(objValue.node, name);
    return at ? newOf(objValue.ex, at, depth + 1) : undefined;
  }
  const holder = originOf(v.ex, obj, 0);
  if (!holder || !('holder' in holder)) return undefined;
  if (holder.holder.type === 'ObjectExpression') {
    const at = heldAt(holder.holder, name);
    return at ? newOf(holder.ex, at, depth + 1) : undefined;
  }
  // A field of the application's class: its initialiser, or what its constructor assigns it.
  for (const m of (holder.holder as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
    const key = m.key && !m.computed ? m.key.name : undefined;
    const value = (m as unknown as { value?: BNode | null }).value;
    if (m.type === 'ClassProperty' && key === name && value) return newOf(holder.ex, value, depth + 1);
    if (m.type === 'ClassMethod' && m.kind === 'constructor') {
      const assigned = thisAssignments(m, name);
      if (assigned.length === 1) return newOf(holder.ex, assigned[0]!, depth + 1);
    }
  }
  return undefined;
}

/** What a constructor's own statements assign to `this.<field>`. */
function thisAssignments(ctor: BNode, field: string): BNode[] {
  const stmts = ctor.body && !Array.isArray(ctor.body) ? (ctor.body.body as BNode[] | undefined) ?? [] : [];
  return stmts.map((st) => (st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined)).filter((a): a is BNode =>
    a?.type === 'AssignmentExpression' && a.operator === '=' && isMember(unwrap(a.left!)) && unwrap(unwrap(a.left!).object!).type === 'ThisExpression' && propertyName(unwrap(a.left!)) === field)
    .map((a) => a.right!);
}

/**
 * `instance.name` where the instance is made by a `new` the workspace shows and its class (or the class it
 * extends, when the class declares no constructor) sets `this.name` in its constructor from the arguments
 * (`this.name = meta.name`, `new GuildsCollection(store, guildsMeta)`) or to a literal: that string.
 */
function instanceString(ex: Extractor, e: BNode): string | undefined {
  const field = propertyName(e);
  const made = field !== undefined && !e.computed ? newOf(ex, e.object!, 0) : undefined;
  if (!made || field === undefined) return undefined;
  const cls = made.ex.classOf(unwrap(made.node.callee!), 0) ?? classAt(made.ex, unwrap(made.node.callee!));
  if (!cls) return undefined;
  // The arguments as the modules that write them hold them (an imported constant object), so the class's module reads values.
  const args = (made.node.arguments ?? []).map((a) => (a.type === 'SpreadElement' ? a : valueOf(made.ex, a, 0)?.node ?? a));
  const call = { ...made.node, arguments: args } as BNode;
  for (const at of cls.ex.lineage(cls.node)) {
    const ctor = constructorOf(at.node);
    const own = (at.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
    const init = own.find((m) => m.type === 'ClassProperty' && m.key && !m.computed && m.key.name === field && (m as unknown as { value?: BNode | null }).value);
    const assigned = ctor ? thisAssignments(ctor, field) : [];
    if (assigned.length === 1 && ctor) return made.ex.throughConstructor(call, { ex: at.ex, fn: ctor, cls: at.node }, assigned[0]!, (v, inModule) => inModule.stringOf(v, 0));
    if (init) return at.ex.stringOf((init as unknown as { value: BNode }).value, 0);
    // `get collectionName() { return this.options.collection; }` over the constructor's `private options`: its
    // one return, read with the constructor's parameters holding what the `new` gives.
    const getter = own.find((m) => m.type === 'ClassMethod' && m.kind === 'get' && m.key && !m.computed && m.key.name === field);
    const returned = getter ? returnedValues(getter) : [];
    if (getter) return returned.length === 1 && ctor ? made.ex.throughConstructor(call, { ex: at.ex, fn: ctor, cls: at.node }, parameterFields(returned[0]!, ctor), (v, inModule) => inModule.stringOf(v, 0)) : undefined;
    // A class that declares its own constructor passes on what its super call gives: not followed further.
    if (ctor) return undefined;
  }
  return undefined;
}

/** `this.options.collection` where `options` is a parameter property of the constructor: `options.collection`, so the parameter's value is read. */
function parameterFields(e: BNode, ctor: BNode): BNode {
  const u = unwrap(e);
  if (!isMember(u) || u.computed) return e;
  const obj = unwrap(u.object!);
  if (obj.type !== 'ThisExpression') return { ...u, object: parameterFields(obj, ctor) } as BNode;
  const name = propertyName(u);
  const isParameter = (ctor.params ?? []).some((p) => p.type === 'TSParameterProperty' && paramName((p as unknown as { parameter: BNode }).parameter) === name);
  return isParameter ? ({ type: 'Identifier', name, start: u.start, end: u.end } as BNode) : e;
}

/** `new meta.classConstructor(...)`: the class a constant object's property holds, here or in the module that exports it. */
function classAt(ex: Extractor, callee: BNode): { ex: Extractor; node: BNode } | undefined {
  if (!isMember(callee) || callee.computed) return undefined;
  const name = propertyName(callee);
  const obj = valueOf(ex, callee.object!, 0);
  const held = obj && name !== undefined && obj.node.type === 'ObjectExpression' ? heldAt(obj.node, name) : undefined;
  return held && obj ? obj.ex.classOf(held, 0) : undefined;
}

/** A class's constructor, if it declares one. */
function constructorOf(cls: BNode): BNode | undefined {
  return ((cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).find((m) => m.type === 'ClassMethod' && m.kind === 'constructor');
}

/** `(await import('./db')).getCollections`, `require('./db').getCollections`: the function that module of the workspace exports. */
function loadedFunction(ex: Extractor, callee: BNode): { ex: Extractor; fn: BNode } | undefined {
  const name = propertyName(callee);
  let obj = unwrap(callee.object!);
  if (obj.type === 'AwaitExpression' && obj.argument) obj = unwrap(obj.argument);
  const spec = name !== undefined && isCall(obj) ? requiredModule(obj) : undefined;
  const other = spec !== undefined ? ex.exportOf(spec, name!) : undefined;
  const b = other ? other.ex.module.names.get(other.local) : undefined;
  const fn = b ? ('fn' in b ? b.fn : 'init' in b ? unwrap(b.init) : undefined) : undefined;
  return other && fn && ['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression'].includes(fn.type) ? { ex: other.ex, fn } : undefined;
}

/** A plain parameter's name (`x`, `x = 1`). */
function paramName(p: BNode): string | undefined {
  const inner = p.type === 'AssignmentPattern' ? p.left : p;
  return inner?.type === 'Identifier' ? inner.name : undefined;
}

/** Decorators that inject a provider by its token (NestJS's `@Inject(TOKEN)`). */
const INJECT_DECORATOR = /^[Ii]nject$/;

/** The token a class's field or constructor parameter is injected by (`@Inject(ORDERS) private orders`), when it is a name. */
function injectionToken(cls: BNode | undefined, field: string): string | undefined {
  const members = (cls as unknown as { body?: { body?: BNode[] } } | undefined)?.body?.body ?? [];
  const decorated: BNode[] = [];
  for (const m of members) {
    const key = m.key && !m.computed ? keyName(m.key) : undefined;
    if (m.type === 'ClassProperty' && key === field) decorated.push(m);
    if (m.type === 'ClassMethod' && m.kind === 'constructor') {
      for (const p of m.params ?? []) {
        const param = p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : undefined;
        const id = param?.type === 'AssignmentPattern' ? param.left : param;
        if (id?.type === 'Identifier' && id.name === field) decorated.push(p, param!);
      }
    }
  }
  for (const d of decorated.flatMap((n) => (n as unknown as { decorators?: { expression: BNode }[] }).decorators ?? [])) {
    const x = unwrap(d.expression);
    const callee = isCall(x) ? unwrap(x.callee!) : undefined;
    const arg = x.arguments?.[0] ? unwrap(x.arguments[0]) : undefined;
    if (callee?.type === 'Identifier' && INJECT_DECORATOR.test(callee.name!) && arg?.type === 'Identifier') return arg.name;
  }
  return undefined;
}

/** The providers of a token among a module's statements: object literals `{ provide: token, useFactory }` or `{ provide: token, useValue }`. */
function providersOf(statements: readonly BNode[], token: string): { factory?: BNode; value?: BNode }[] {
  const out: { factory?: BNode; value?: BNode }[] = [];
  const stack: BNode[] = [...statements];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'ObjectExpression') {
      const prop = (k: string) => (n.properties ?? []).find((p) => (p.type === 'ObjectProperty' || p.type === 'ObjectMethod') && !p.computed && p.key && keyName(p.key) === k);
      const provide = prop('provide');
      const v = provide?.type === 'ObjectProperty' ? unwrap(provide.value as BNode) : undefined;
      if (v?.type === 'Identifier' && v.name === token) {
        const f = prop('useFactory');
        const factory = f?.type === 'ObjectMethod' ? f : f ? unwrap(f.value as BNode) : undefined;
        const value = prop('useValue');
        out.push(factory && ['ArrowFunctionExpression', 'FunctionExpression', 'ObjectMethod'].includes(factory.type) ? { factory }
          : value?.type === 'ObjectProperty' ? { value: value.value as BNode } : {});
      }
    }
    pushChildren(n, stack);
  }
  return out;
}

class Collections {
  /** Fields being followed through what the file assigns them, so `self.db = self.db || x` ends. */
  private readonly following = new Set<string>();

  constructor(private readonly ex: Extractor) {}

  /** The collection a legacy bulk (`coll.initializeUnorderedBulkOp()`, or a name given one) queues operations on. */
  bulkOf(e: BNode, depth: number): FoundCollection | undefined {
    if (depth > MAX_RESOLVE_DEPTH) return undefined;
    e = unwrap(e);
    if (e.type === 'AwaitExpression' && e.argument) return this.bulkOf(e.argument, depth + 1);
    if (isCall(e)) {
      const callee = unwrap(e.callee!);
      return isMember(callee) && BULK_INIT.has(propertyName(callee) ?? '') ? this.of(callee.object!, depth + 1) : undefined;
    }
    if (e.type === 'Identifier') {
      const init = this.ex.constInit(e.name!);
      if (init) return this.bulkOf(init, depth + 1);
      // `let bulk; ... bulk = coll.initializeUnorderedBulkOp()`: every value it is given names one collection.
      return this.agreeing(this.ex.writesTo(e.name!)?.values ?? [], (v) => this.bulkOf(v, depth + 1));
    }
    if (isMember(e)) {
      const held = this.ex.follow(e);
      if (held !== e) return this.bulkOf(held, depth + 1);
      return this.agreeing(this.ex.assignedField(e) ?? [], (v) => this.bulkOf(v, depth + 1));
    }
    return undefined;
  }

  /** The collection every one of `values` names, when they all name the same one. */
  private agreeing(values: BNode[], read: (v: BNode) => FoundCollection | undefined): FoundCollection | undefined {
    let first: FoundCollection | undefined;
    for (const v of values) {
      const c = read(v);
      if (!c || (first && (c.name !== first.name || c.database !== first.database))) return undefined;
      first ??= c;
    }
    return first;
  }

  /**
   * A `let users` every value of which is the same collection, wherever it is assigned: in the function
   * or block that declares it (`let movies; beforeAll(async () => { movies = db.collection('movies') })`),
   * or anywhere in the file for a module-level one (an `init(conn)` function that assigns it). One given
   * several collections in turn holds, where it is read, the one the order of the code gives it there.
   */
  private assignedVariable(e: BNode, depth: number): FoundCollection | undefined {
    const key = e.name!;
    if (this.following.has(key)) return undefined;
    // `let _col = undefined` (or null) holds nothing yet: what it is given later is what it holds.
    const values = (this.ex.writesTo(key)?.values ?? this.ex.moduleValues(key))?.filter((v) => !isNothingValue(v));
    if (!values?.length) return undefined;
    this.following.add(key);
    try {
      // `let c = db.collection('a'); ...; c = db.collection('b')`: the value the order of the code gives where it is read.
      const reaching = values.length > 1 ? this.ex.reachingValue(key, e) : undefined;
      const here = reaching && !isNothingValue(reaching) ? this.of(reaching, depth + 1) : undefined;
      if (here) return here;
      return this.agreeing(values, (v) => this.of(v, depth + 1));
    } finally {
      this.following.delete(key);
    }
  }

  /** A field `self.db` or `this.orders` the file assigns a collection to, wherever that is written. */
  private assigned(e: BNode, depth: number): FoundCollection | undefined {
    const key = this.ex.text(range(e));
    if (this.following.has(key)) return undefined;
    const values = this.ex.assignedField(e);
    if (!values) return undefined;
    this.following.add(key);
    try {
      return this.agreeing(values, (v) => this.of(v, depth + 1));
    } finally {
      this.following.delete(key);
    }
  }

  /**
   * `new Wrapper(inner, ...)` where the class (or a class it extends) says `implements Collection<T>`, the
   * driver's interface, and its constructor takes a parameter typed `Collection<T>`: the collection that
   * argument is. A class that does not say so, or takes no collection, is not read as one.
   */
  private wrapped(e: BNode, depth: number): FoundCollection | undefined {
    const cls = depth < MAX_RESOLVE_DEPTH - 2 ? this.ex.classOf(e.callee!, depth + 1) : undefined;
    if (!cls) return undefined;
    const driverCollection = (ex: Extractor, t: BNode | undefined) => t?.type === 'Identifier' && t.name === 'Collection' && ex.importSource(t.name) === 'mongodb';
    let says = false;
    let ctor: { ex: Extractor; fn: BNode } | undefined;
    for (const at of cls.ex.lineage(cls.node)) {
      const list = (at.node as unknown as { implements?: BNode[] }).implements ?? [];
      if (list.some((i) => driverCollection(at.ex, (i as unknown as { expression?: BNode; typeName?: BNode }).expression ?? (i as unknown as { typeName?: BNode }).typeName))) says = true;
      const own = ((at.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).find((m) => m.type === 'ClassMethod' && m.kind === 'constructor');
      if (!ctor && own) ctor = { ex: at.ex, fn: own };
    }
    if (!says || !ctor) return undefined;
    const index = (ctor.fn.params ?? []).findIndex((p) => {
      const q = p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : p;
      const t = (q as unknown as { typeAnnotation?: { typeAnnotation?: BNode } }).typeAnnotation?.typeAnnotation as unknown as { type: string; typeName?: BNode } | undefined;
      return t?.type === 'TSTypeReference' && driverCollection(ctor!.ex, t.typeName);
    });
    const arg = index >= 0 ? e.arguments?.[index] : undefined;
    return arg && arg.type !== 'SpreadElement' ? this.of(arg, depth + 1) : undefined;
  }

  /** The collection an expression stands for, if it is one this reader recognises. */
  of(e: BNode, depth: number): FoundCollection | undefined {
    if (depth > MAX_RESOLVE_DEPTH) return undefined;
    e = unwrap(e);
    if (e.type === 'AwaitExpression' && e.argument) return this.of(e.argument, depth + 1);
    // `ready ? db.collection('a') : await setUp(db)`, `cached || db.collection('a')`: the branch that names one.
    if (e.type === 'ConditionalExpression') return this.either([e.consequent!, e.alternate!], depth);
    if (e.type === 'LogicalExpression') return this.either([e.left!, e.right!], depth);
    // new SessionCollection(db.collection('orders'), session): an application's class that says it implements
    // the driver's Collection and is made from one is read as the collection it wraps.
    const wrapped = e.type === 'NewExpression' ? this.wrapped(e, depth) : undefined;
    if (wrapped) return wrapped;
    if (e.type === 'Identifier') {
      // `let _col = undefined` holds nothing yet: what the code assigns it later says what it holds.
      const written = this.ex.constInit(e.name!);
      const init = written && !isNothingValue(written) ? written : undefined;
      const held = (init ? this.of(init, depth + 1) : this.destructured(e, depth) ?? this.assignedVariable(e, depth)) ?? this.exported(e, depth);
      if (held || this.ex.imports(...SQL_LIBRARIES)) return held;
      const guessed = this.unnamed(e);
      // A parameter the function's callers give: the collection every one of them names, or the several they name between them.
      return guessed ? this.fromCallers(e, depth, { found: guessed, parameter: e.name! }) ?? guessed : undefined;
    }
    if (isCall(e)) {
      const callee = unwrap(e.callee!);
      // api() where `function api() { return db.collection('entries') }`.
      // getCollection(COLLECTION) where another module of the workspace declares `getCollection(name)`: read
      // there, with the name this file gives; a name written in that module is shown at the call.
      if (callee.type === 'Identifier') {
        const through = this.ex.throughCall(e, (ret, inModule) => inModule === this.ex ? this.of(ret, depth + 1) : atCall(new Collections(inModule).of(ret, depth + 1), callee));
        return through ?? this.madeFunction(e, callee, depth) ?? this.calledParameter(e, callee, depth);
      }
      // createCollection('tenants')(this.live): what the function the inner call returns returns.
      if (isCall(callee)) return this.ex.throughCurried(e, (ret, inModule) => inModule === this.ex ? this.of(ret, depth + 1) : atCall(new Collections(inModule).of(ret, depth + 1), callee));
      if (!isMember(callee)) return undefined;
      const m = propertyName(callee);
      // this._getCollection(): a method of the class or of a class it extends, here or in another module.
      const self = unwrap(callee.object!).type;
      if ((self === 'ThisExpression' || self === 'Super') && m !== undefined) {
        // `this.getCollection()`: the class's own method of that name (the shell's is `db.getCollection('x')`).
        const own = this.ex.throughMethod(e, m, (ret, inModule) => inModule === this.ex ? this.of(ret, depth + 1) : atCall(new Collections(inModule).of(ret, depth + 1), callee));
        if (own || (m !== 'collection' && m !== 'getCollection')) return own;
      }
      // store.getCollection(tenant, 'users') where `store` is an application's class whose own method of that
      // name opens the collection: read through that method, with the call's arguments.
      const own = (m === 'collection' || m === 'getCollection') && self !== 'ThisExpression' && self !== 'Super' && depth < MAX_RESOLVE_DEPTH - 2 ? functionOf(this.ex, callee) : undefined;
      if (own) {
        const got = this.ex.throughFunction(e, own, (ret, inModule) => inModule === this.ex ? this.of(ret, depth + 1) : atCall(new Collections(inModule).of(ret, depth + 1), callee));
        // One it leaves unnamed is read as the library's own method below.
        if (got && got.name !== '') return got;
      }
      if ((m === 'collection' || m === 'getCollection') && e.arguments?.length) {
        const arg = e.arguments[0]!;
        const flavour: MongoFlavour = m === 'collection' ? 'driver' : 'shell';
        const database = this.databaseOf(unwrap(callee.object!), depth + 1);
        const where = { flavour, nameRange: range(unwrap(arg)), ...(database !== undefined ? { database } : {}) };
        return { ...this.nameIn(arg, depth + 1), ...where };
      }
      // mongo.tenants(): a method of the application's own object, typed by a class or by an interface a
      // class of the workspace implements, read by what its implementation returns; else by the type the
      // interface declares it returns (a collection the code does not name here).
      if (m !== undefined && self !== 'ThisExpression' && self !== 'Super' && depth < MAX_RESOLVE_DEPTH - 2) {
        const target = functionOf(this.ex, callee);
        const got = target ? this.ex.throughFunction(e, target, (ret, inModule) => inModule === this.ex ? this.of(ret, depth + 1) : atCall(new Collections(inModule).of(ret, depth + 1), callee)) : undefined;
        if (got) return got;
        const declared = target ? undefined : signatureReturnOrigin(this.ex, callee);
        if (declared && 'library' in declared && declared.library === 'mongodb-collection') return this.implemented(e, callee, m, depth) ?? { name: '', flavour: 'driver', nameRange: range(callee.property!) };
      }
      return undefined;
    }
    if (isMember(e)) {
      const name = propertyName(e);
      const obj = unwrap(e.object!);
      const followed = this.ex.follow(e) !== e;
      // self.db, this.orders: a field the file assigns a collection to elsewhere (another method, an init function).
      const assigned = followed ? undefined : this.assigned(e, depth);
      // A base class's field assigned from its constructor's parameters: what this subclass's super call gives.
      if (assigned) return assigned.name === '' && obj.type === 'ThisExpression' && name !== undefined ? this.fromSuper(e, name, depth) ?? assigned : assigned;
      // Orders.coll where the class declares `static coll = db.collection('orders')`; orders.coll through `import * as orders`.
      const declared = obj.type === 'Identifier' && name !== undefined && !e.computed && !followed ? this.declaredOn(obj, name, e, depth) : undefined;
      if (declared) return declared;
      // orders.coll where `const { orders } = global.App.models`: what the global's declared type says it is.
      const fromGlobal = name !== undefined && !e.computed && !followed ? this.globalMember(obj, name, e, depth) : undefined;
      if (fromGlobal) return fromGlobal;
      // this.collection where the class's constructor assigns it (`this.collection = db.collection('counters')`):
      // what it holds, not the driver's method.
      const own = name !== undefined && DB_METHODS.has(name) && obj.type === 'ThisExpression' && followed ? this.of(this.ex.follow(e), depth + 1) : undefined;
      if (own && own.name !== '') return own;
      // this.collection where a class of the lineage declares `get collection() { return this.db.collection(this.collectionName); }`.
      const viaGetter = name !== undefined && obj.type === 'ThisExpression' && !followed && depth < MAX_RESOLVE_DEPTH - 2
        ? this.ex.throughMethod({ ...e, type: 'CallExpression', callee: e, arguments: [] } as BNode, name, (ret, inModule) => inModule === this.ex ? this.of(ret, depth + 1) : atCall(new Collections(inModule).of(ret, depth + 1), e), 'get') : undefined;
      if (viaGetter && (viaGetter.name !== '' || !own)) return viaGetter;
      // this.collection where the class declares `collection: Collection<T>`: its field, not the driver's method;
      // named by the places that make the class's instances when they all give the same collection.
      if (name !== undefined && DB_METHODS.has(name) && obj.type === 'ThisExpression' && libraryOf(this.ex, e) === 'mongodb-collection') {
        return this.agreed(constructorCallersOf(this.ex, name), e, depth) ?? this.injected(e, name, depth) ?? this.fromSuper(e, name, depth) ?? own ?? { name: '', flavour: 'driver', nameRange: range(e.property!), typedAs: this.ex.text(range(e)) };
      }
      // req.collection, this.coll: a collection chosen at run time, unless the class's instances are all
      // made with the same one (`constructor(private coll: Collection)`, `new Store(db.collection('x'))`).
      if (name !== undefined && RUNTIME_COLLECTION.test(name) && !this.isShellDb(obj) && !followed && !this.ex.imports(...SQL_LIBRARIES)) {
        const made = obj.type === 'ThisExpression' ? this.agreed(constructorCallersOf(this.ex, name), e, depth) ?? this.injected(e, name, depth) ?? this.fromSuper(e, name, depth)
          : !e.computed && depth < MAX_RESOLVE_DEPTH - 2 ? this.classMember(obj, name, e, depth) ?? (obj.type === 'Identifier' || isCall(obj) ? this.returnedMember(obj, [name], e, depth) : undefined) : undefined;
        return made ?? { name: '', flavour: 'driver', nameRange: range(e.property!) };
      }
      if (name === undefined || DB_METHODS.has(name) || MONGO_OPERATIONS.has(name)) return undefined;
      if (this.isShellDb(obj)) {
        const database = this.databaseOf(obj, depth + 1);
        return { name, flavour: 'shell', nameRange: range(e.property!), ...(database !== undefined ? { database } : {}) };
      }
      // A field or a property of a constant object that holds a collection; when what it holds says nothing
      // (a constructor's parameter), its name and its declared type still may.
      const held = this.ex.follow(e);
      const heldCollection = held !== e ? this.of(held, depth + 1) : undefined;
      // `constructor(coll) { this.coll = coll; }`: what every `new` of the class gives, when they agree.
      if (heldCollection?.name === '' && obj.type === 'ThisExpression' && name !== undefined) {
        const made = this.agreed(constructorCallersOf(this.ex, name), e, depth);
        if (made) return made;
      }
      if (heldCollection) return heldCollection;
      // collections.users where another module of the workspace exports `collections = { users: db.collection('Users') }`.
      const exported = held === e && obj.type === 'Identifier' && !e.computed ? this.exportedProperty(obj, name, e, depth) : undefined;
      if (exported) return exported;
      // cols.Orders where `const cols = getCollections(db)`, and getCollections(db).Orders: what the function puts
      // under that key of the object it returns.
      const returned = held === e && (obj.type === 'Identifier' || isCall(obj) || obj.type === 'AwaitExpression') && !e.computed && depth < MAX_RESOLVE_DEPTH - 2
        ? this.returnedMember(obj, [name], e, depth) : undefined;
      if (returned) return returned;
      // store.orders, this.db.archive where the value is an instance of an application's class: what the
      // class's field, its constructor's assignment or its getter holds, read where the class is written.
      const member = held === e && obj.type !== 'ThisExpression' && !e.computed && depth < MAX_RESOLVE_DEPTH - 2 ? this.classMember(obj, name, e, depth) : undefined;
      if (member) return member;
      // usersCollection, this.ordersColl: a collection named after what it holds.
      const named = NAMED_FOR_COLLECTION.exec(name);
      if (named && !this.ex.imports(...SQL_LIBRARIES)) return { name: named[1]!, flavour: 'driver', nameRange: range(e.property!), namedAfter: this.ex.text(range(e)) };
      // app.db.orders, this.collections.orders: collections kept as properties of a holder.
      const holder = this.ex.lastName(obj);
      if (holder !== undefined && COLLECTION_HOLDERS.test(holder) && (isMember(obj) || holder !== 'db' || this.appDb(obj, name)) && !this.ex.imports(...SQL_LIBRARIES)) {
        return { name, flavour: 'driver', nameRange: range(e.property!), heldAs: this.ex.text(range(e)) };
      }
      // db.a.b names the collection "a.b" in the shell.
      if (isMember(obj) && !obj.computed) {
        const inner = this.of(obj, depth + 1);
        if (inner && inner.flavour === 'shell' && !e.computed) return { ...inner, name: `${inner.name}.${name}`, nameRange: { start: inner.nameRange.start, end: e.property!.end } };
      }
      // this.plans where the class declares `plans: Collection<Plan>` (or a field of a field typed by a class that does);
      // named by the places that make the class's instances, when they all give the same collection.
      if (libraryOf(this.ex, e) === 'mongodb-collection') {
        const made = obj.type === 'ThisExpression' && name !== undefined ? this.agreed(constructorCallersOf(this.ex, name), e, depth) ?? this.injected(e, name, depth) ?? this.fromSuper(e, name, depth) : undefined;
        return made ?? { name: '', flavour: 'driver', nameRange: range(e.property!), typedAs: this.ex.text(range(e)) };
      }
    }
    return undefined;
  }

  /**
   * `Orders.coll` where `Orders` is a class, declared here or in the module it is imported from, that
   * declares `static coll = db.collection('orders')` (or a class it extends does), and `orders.coll` where
   * `import * as orders` names a module that exports `const coll = db.collection('orders')`: the collection
   * read where it is written, shown at `at`. Undefined when the file assigns that property again.
   */
  private declaredOn(obj: BNode, name: string, at: BNode, depth: number): FoundCollection | undefined {
    if (depth > MAX_RESOLVE_DEPTH - 2 || this.ex.assignedField(at)) return undefined;
    const member = this.ex.importedMember(obj.name!, name);
    if (member) {
      const b = member.ex.module.names.get(member.local);
      return b && 'init' in b && !member.ex.module.mutated.has(member.local) ? atCall(new Collections(member.ex).of(b.init, depth + 1), at) : undefined;
    }
    // Only a name that is a class here or an import: a parameter or a local of the same name is something else.
    const binding = this.ex.lookup(obj.name!)?.binding;
    if (!binding || !('unknown' in binding) || (binding.cls === undefined && binding.from === undefined)) return undefined;
    const cls = this.ex.classOf(obj, 0);
    return cls ? this.staticOn(cls, name, at, depth) : undefined;
  }

  /** The collection a class's static property (or that of a class it extends) opens, read where it is written, shown at `at`. */
  private staticOn(cls: { ex: Extractor; node: BNode }, name: string, at: BNode, depth: number): FoundCollection | undefined {
    for (const c of cls.ex.lineage(cls.node)) {
      const value = staticValue(c.node, name);
      if (!value) continue;
      // `Orders.coll = db.collection('archive')` in the class's own module: not the initialiser alone.
      if (c.ex !== this.ex && c.ex.module.fields.has(`${c.node.id?.name ?? ''}.${name}`)) return undefined;
      const reader = c.ex === this.ex ? this : new Collections(c.ex);
      return atCall(c.ex.inClass(c.node, () => reader.of(value, depth + 1)), at);
    }
    return undefined;
  }

  /**
   * `orders.coll` where `const { orders } = global.App.models` (or `App.models.orders.coll`) and the module
   * that declares the global types that member `typeof import('./orders').default` (a class: its static
   * property) or `typeof import('./orders')` (a module: its exported constant): the collection read where
   * it is written, shown at `at`.
   */
  private globalMember(obj: BNode, name: string, at: BNode, depth: number): FoundCollection | undefined {
    if (depth > MAX_RESOLVE_DEPTH - 2 || this.ex.assignedField(at)) return undefined;
    const declared = globalMemberType(this.ex, obj);
    const target = declared ? typeofTarget(declared.ex, declared.type) : undefined;
    if (!target) return undefined;
    if ('cls' in target) return this.staticOn({ ex: target.ex, node: target.cls }, name, at, depth);
    const { modules } = this.ex.context;
    const found = modules ? exportedBinding(modules, target.namespace, name) : undefined;
    if (!found || !('module' in found)) return undefined;
    const reader = this.ex.forModule(found.module);
    const b = reader.module.names.get(found.local);
    return b && 'init' in b && !reader.module.mutated.has(found.local) ? atCall(new Collections(reader).of(b.init, depth + 1), at) : undefined;
  }

  /**
   * `import { Authors } from './authors'` (or `require`d) where that module of the workspace exports
   * `const Authors = db.collection('Authors')`: the collection it holds there, shown at this file's name.
   */
  private exported(e: BNode, depth: number): FoundCollection | undefined {
    if (depth > MAX_RESOLVE_DEPTH - 2) return undefined;
    const other = this.ex.imported(e.name!);
    const b = other ? other.ex.module.names.get(other.local) : undefined;
    if (!other || !b || !('init' in b) || other.ex.module.mutated.has(other.local)) return undefined;
    return atCall(new Collections(other.ex).of(b.init, depth + 1), e);
  }

  /**
   * `store.tables(id)` where `tables` is an abstract method of the value's class: what the subclasses of the
   * workspace that implement it return (origin.ts overridesOf), the collection when they all name the same
   * one; else unnamed, with the collections they name between them for the hover. Undefined when one of
   * them names none.
   */
  private implemented(e: BNode, callee: BNode, method: string, depth: number): FoundCollection | undefined {
    const holder = originOf(this.ex, callee.object!, 0);
    if (!holder || !('holder' in holder) || (holder.holder.type !== 'ClassDeclaration' && holder.holder.type !== 'ClassExpression')) return undefined;
    let declaring: { ex: Extractor; node: BNode } | undefined;
    for (const at of holder.ex.lineage(holder.holder)) {
      const body = (at.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
      if (body.some((m) => m.type === 'TSDeclareMethod' && !m.computed && m.key?.name === method)) declaring = at;
      if (declaring) break;
    }
    const subclasses = declaring ? overridesOf(declaring.ex, declaring.node, method, this.ex) : undefined;
    if (!subclasses || subclasses.length === 0) return undefined;
    const names: string[] = [];
    const files = new Set<string>();
    let first: FoundCollection | undefined;
    for (const o of subclasses) {
      const c = this.ex.throughFunction(e, { ex: o.ex, fn: o.fn, cls: o.node }, (ret, inModule) => inModule === this.ex ? this.of(ret, depth + 1) : atCall(new Collections(inModule).of(ret, depth + 1), callee));
      if (!c || c.name === '' || c.typedAs !== undefined || c.namedAfter !== undefined || c.heldAs !== undefined || c.alternatives !== undefined || c.defaultOf !== undefined || c.givenAmong !== undefined) return undefined;
      first ??= c;
      if (!names.includes(c.name)) names.push(c.name);
      files.add(o.ex.context.file !== undefined ? baseName(o.ex.context.file) : 'this file');
    }
    const n = subclasses.length;
    const implementedBy = { method, by: `${n === 1 ? 'the implementation' : `the ${n} implementations`} of ${method} in ${[...files].join(', ')}`, names };
    if (names.length === 1 && first) return { ...first, nameRange: range(callee.property!), implementedBy };
    return { name: '', flavour: 'driver', nameRange: range(callee.property!), implementedBy };
  }

  /**
   * What the argument of `db.collection(...)` names: a string, a field an instance's class sets, names a
   * conditional chooses between, a family, a name a function returns, the names a parameter's callers give
   * it, a parameter's default, else a guess from the argument's own name, or nothing (chosen at run time).
   */
  private nameIn(arg: BNode, depth: number): CollectionName {
    const name = this.ex.stringOf(arg, 0);
    if (name !== undefined) return { name };
    // db.collection(this.store.collections.guilds.name): a field the instance's class sets from what its `new` gives.
    const fromInstance = unwrap(arg).type === 'MemberExpression' ? instanceString(this.ex, unwrap(arg)) : undefined;
    if (fromInstance !== undefined) return { name: fromInstance };
    // db.collection(dps ? 'leaderboard_dps' : 'leaderboard_hps'): one of the names, chosen at run time.
    const between = this.namesBetween(arg);
    if (between) return { name: between[0]!, ...(between.length > 1 ? { alternatives: between.slice(1) } : {}) };
    // db.collection(`${PREFIX}_orders`), `app.${name}` given 'users': the one name its known parts write.
    const joined = joinedIn(this.ex, arg);
    if (joined !== undefined) return { name: joined };
    // db.collection('app_users' + appId): one collection of a family, named for it (`app_users*`).
    const family = familyIn(this.ex, arg);
    if (family !== undefined) return { name: family, family: this.ex.text(range(this.ex.resolve(arg))) };
    // db.collection(this.itemsName(tenant)): the name, or the family, a function or method returns.
    const returned = this.calledName(arg, depth);
    if (returned) return returned;
    // db.collection(collectionName) where every call of the function gives the parameter the same name.
    const given = this.givenName(arg, depth);
    if (given) return given;
    // db.collection(collectionName) where `{ collectionName = 'entries' }` is a parameter.
    const fallback = unwrap(arg).type === 'Identifier' ? this.ex.fallbackOf(unwrap(arg).name!) : undefined;
    const byDefault = fallback ? this.ex.stringOf(fallback, 0) : undefined;
    if (byDefault !== undefined) return { name: byDefault, defaultOf: unwrap(arg).name! };
    // db.collection(env.entries_collection): a name set at run time, but named for the collection.
    const argName = this.ex.lastName(arg);
    const named = argName !== undefined ? NAMED_FOR_COLLECTION.exec(argName) : null;
    return named ? { name: named[1]!, namedAfter: this.ex.text(range(unwrap(arg))) } : { name: '' };
  }

  /**
   * `db.collection(collectionName)` where `collectionName` is a parameter of a function declared under a
   * name: the name every call of it gives (read as nameIn reads it where the call is, so a caller's own
   * parameter is named by its callers in turn), or, where the calls name different collections, none, the
   * hover naming them.
   */
  private givenName(arg: BNode, depth: number): CollectionName | undefined {
    const a = unwrap(arg);
    if (a.type !== 'Identifier' || depth > MAX_RESOLVE_DEPTH - 2 || !this.ex.parameterOf(a.name!)) return undefined;
    const unnamed: Unnamed = { found: { name: '', flavour: 'driver', nameRange: range(a) }, parameter: a.name! };
    const found = this.agreed(callersOf(this.ex, a.name!), a, depth, unnamed, (ex, value) => ({ ...new Collections(ex).nameIn(value, depth + 1), flavour: 'driver', nameRange: range(value) }));
    if (!found) return undefined;
    const { flavour: _f, nameRange: _r, ...name } = found;
    return name;
  }

  /**
   * The collection's name a call returns (`this.itemsName(tenant)` where the method returns
   * `` `items_${tenant}` ``): a literal or a family, read where the function or method is written (this
   * file, a class it extends, a class of the value it is called on, another module of the workspace),
   * through the calls it returns in turn.
   */
  private calledName(arg: BNode, depth: number): { name: string; family?: string } | undefined {
    const call = this.ex.resolve(arg);
    if (!isCall(call) || depth > MAX_RESOLVE_DEPTH - 2) return undefined;
    const callee = unwrap(call.callee!);
    const read = (ret: BNode, inModule: Extractor): { name: string; family?: string } | undefined => {
      const name = inModule.stringOf(ret, 0) ?? joinedIn(inModule, ret);
      if (name !== undefined) return { name };
      const family = familyIn(inModule, ret);
      if (family !== undefined) return { name: family, family: inModule.text(range(inModule.resolve(ret))) };
      return (inModule === this.ex ? this : new Collections(inModule)).calledName(ret, depth + 1);
    };
    if (callee.type === 'Identifier') return this.ex.throughCall(call, read);
    if (!isMember(callee) || callee.computed) return undefined;
    const m = propertyName(callee);
    const self = unwrap(callee.object!).type;
    if (m !== undefined && (self === 'ThisExpression' || self === 'Super')) return this.ex.throughMethod(call, m, read);
    const target = functionOf(this.ex, callee);
    return target ? this.ex.throughFunction(call, target, read) : undefined;
  }

  /**
   * `store.orders` where `store` is an instance of an application's class (a parameter or field typed by it,
   * or what a function returns by `new`): the collection the class gives that member by its field's
   * initialiser, its constructor's one assignment (`this.orders = db.collection('orders')`, read with the
   * constructor's constants) or its getter's return, in the class or one it extends; shown at `at`. Only a
   * named collection: one the class takes from its constructor's parameters is left to the other readings.
   */
  private classMember(obj: BNode, name: string, at: BNode, depth: number): FoundCollection | undefined {
    // The class itself (`Orders.coll`): its static properties are declaredOn's, which also knows when the
    // class's module assigns one again; an instance's member is never a static one.
    if (obj.type === 'Identifier' && this.ex.classOf(obj, 0)) return undefined;
    const holder = originOf(this.ex, obj, 0);
    if (!holder || !('holder' in holder) || (holder.holder.type !== 'ClassDeclaration' && holder.holder.type !== 'ClassExpression')) return undefined;
    const read = (v: BNode, inModule: Extractor) => (inModule === this.ex ? this.of(v, depth + 1) : atCall(new Collections(inModule).of(v, depth + 1), at));
    const named = (c: FoundCollection | undefined) => (c && c.name !== '' ? c : undefined);
    const call = calledWithNothing(at);
    for (const c of holder.ex.lineage(holder.holder)) {
      let declared = false;
      for (const m of (c.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
        if (!m.key || m.computed || keyName(m.key) !== name || (m as unknown as { static?: boolean }).static === true) continue;
        const value = (m as unknown as { value?: BNode | null }).value;
        if (m.type === 'ClassProperty' && value) return named(c.ex.inClass(c.node, () => read(value, c.ex)));
        if (m.type === 'ClassProperty') declared = true;
        if (m.type === 'ClassMethod' && m.kind === 'get') return named(this.ex.throughFunction(call, { ex: c.ex, fn: m, cls: c.node }, read));
      }
      const ctor = constructorOf(c.node);
      const assigned = ctor ? thisAssignments(ctor, name) : [];
      if (ctor && assigned.length === 1) return named(this.ex.throughConstructor(call, { ex: c.ex, fn: ctor, cls: c.node }, assigned[0]!, read));
      const parameter = (ctor?.params ?? []).some((p) => p.type === 'TSParameterProperty' && paramName((p as unknown as { parameter: BNode }).parameter) === name);
      if (declared || parameter || assigned.length > 1) return undefined;
    }
    return undefined;
  }

  /**
   * `collections.users` where `collections` is an object another module of the workspace exports: what that
   * property holds there, or what that module assigns it (`collections.users = db.collection('Users')` in
   * the function that connects, read with the scopes around the assignment) when every value names the
   * same collection; shown at `at`.
   */
  private exportedProperty(obj: BNode, name: string, at: BNode, depth: number): FoundCollection | undefined {
    const other = depth > MAX_RESOLVE_DEPTH - 2 ? undefined : this.ex.imported(obj.name!);
    if (!other) return undefined;
    const v = valueOf(this.ex, obj, 0);
    const held = v?.node.type === 'ObjectExpression' ? heldAt(v.node, name) : undefined;
    if (v && held) return atCall(new Collections(v.ex).of(held, depth + 1), at);
    const assigned = other.ex.module.fields.get(`${other.local}.${name}`)?.map((f) => f.node) ?? [];
    const statements = other.ex.module.statements?.() ?? [];
    if (assigned.length === 0 || assigned.length > 4) return undefined;
    const reader = new Collections(other.ex);
    return atCall(this.agreeing(assigned, (value) => {
      const path = pathTo(statements, value);
      return path ? other.ex.within(path, () => reader.of(value, depth + 1)) : undefined;
    }), at);
  }

  /**
   * `users()` where `users` is a constant made by a call, here or in another module of the workspace
   * (`export const users = getCollectionFn('users')`, a function that returns a function opening and
   * keeping that collection): read as `getCollectionFn('users')()` where the constant is written, shown at
   * the call. Only a call given no arguments, so nothing of this file is read in the other module.
   */
  private madeFunction(e: BNode, callee: BNode, depth: number): FoundCollection | undefined {
    if (depth > MAX_RESOLVE_DEPTH - 2 || (e.arguments?.length ?? 0) > 0) return undefined;
    const v = valueOf(this.ex, callee, 0);
    if (!v || !isCall(v.node)) return undefined;
    const call = { type: 'CallExpression', callee: v.node, arguments: [], start: v.node.start, end: v.node.end } as unknown as BNode;
    const found = v.ex.throughCurried(call, (ret, inModule) => new Collections(inModule).of(ret, depth + 1));
    return v.ex === this.ex ? found : atCall(found, callee);
  }

  /**
   * The names a conditional chooses between (`dps ? c.dps.name : 'hps'`, also through a constant), when each
   * branch names one, in the order written; undefined when one does not.
   */
  private namesBetween(arg: BNode): string[] | undefined {
    const v = this.ex.resolve(arg);
    if (v.type !== 'ConditionalExpression') return undefined;
    const names: string[] = [];
    for (const branch of [v.consequent!, v.alternate!]) {
      const b = unwrap(branch);
      const name = this.ex.stringOf(b, 0) ?? (b.type === 'MemberExpression' ? instanceString(this.ex, b) : undefined);
      if (name === undefined) return undefined;
      if (!names.includes(name)) names.push(name);
    }
    return names;
  }

  /** A name that holds a collection the code does not name here: named for it, typed by the driver, or named as one chosen at run time. */
  private unnamed(e: BNode): FoundCollection | undefined {
    // A parameter or variable named for what it holds: a collection whose name is not known here, or named in its own name.
    const named = NAMED_FOR_COLLECTION.exec(e.name!);
    if (named) return { name: named[1]!, flavour: 'driver', nameRange: range(e), namedAfter: e.name! };
    // `orders: Collection<Order>`: a parameter typed as the driver's collection, which the caller picks.
    if ((this.ex.typeOf(e.name!) === 'Collection' && this.ex.imports('mongodb')) || libraryOf(this.ex, e) === 'mongodb-collection') return { name: '', flavour: 'driver', nameRange: range(e), typedAs: e.name! };
    return RUNTIME_COLLECTION.test(e.name!) ? { name: '', flavour: 'driver', nameRange: range(e) } : undefined;
  }

  /**
   * `configureFiltersModule({ Filters })` where every call of the function (in this file, or in the
   * workspace's files that import it) passes the same collection, named where it is made: that collection.
   * Undefined when a call passes another, one chosen at run time, or one whose name is a guess.
   */
  private fromCallers(e: BNode, depth: number, unnamed: Unnamed): FoundCollection | undefined {
    return depth > MAX_RESOLVE_DEPTH - 2 ? undefined : this.agreed(callersOf(this.ex, e.name!), e, depth, unnamed);
  }

  /**
   * `collection()` where `collection` is a parameter its callers give a function that returns a collection
   * (`refresh(ordersDb)`, where `ordersDb = () => db.collection('orders')`): the collection every one of them
   * returns, or none when they differ (the hover names them). Undefined when a caller gives anything else.
   */
  private calledParameter(e: BNode, callee: BNode, depth: number): FoundCollection | undefined {
    if ((e.arguments?.length ?? 0) > 0 || depth > MAX_RESOLVE_DEPTH - 2 || this.ex.imports(...SQL_LIBRARIES)) return undefined;
    const unnamed: Unnamed = { found: { name: '', flavour: 'driver', nameRange: range(e) }, parameter: `${callee.name!}()`, called: true };
    return this.agreed(callersOf(this.ex, callee.name!), e, depth, unnamed);
  }

  /**
   * `@Inject(ORDERS) private readonly orders: Collection<Order>` (a constructor's parameter or a field of the
   * class): the collection the one provider of that token gives, in the module that declares the token
   * (this one, or the workspace's module it is imported from) or else in the workspace's modules that
   * import it (a `*.module.ts`'s `providers`): `{ provide: ORDERS, useFactory: (client: MongoClient) =>
   * client.db().collection('orders'), inject: [...] }`, or `useValue`.
   */
  private injected(e: BNode, field: string, depth: number): FoundCollection | undefined {
    if (depth > MAX_RESOLVE_DEPTH - 2) return undefined;
    const token = injectionToken(this.ex.enclosingClassNode(), field);
    if (token === undefined) return undefined;
    const declared = this.ex.imported(token) ?? (this.ex.lookup(token) ? { ex: this.ex, local: token } : undefined);
    if (!declared) return undefined;
    let provided = providersOf(declared.ex.module.statements?.() ?? [], declared.local).map((p) => ({ ...p, ex: declared.ex }));
    // `providers: [{ provide: ORDERS, useFactory }]` in a module of the workspace that imports the token.
    if (provided.length === 0) {
      const importers = importersOf(declared.ex, declared.local) ?? [];
      provided = importers.flatMap((i) => providersOf((i.module.program.body as BNode[] | undefined) ?? [], i.local).map((p) => ({ ...p, ex: i.reader })));
    }
    if (provided.length !== 1) return undefined;
    const { value, factory, ex } = provided[0]!;
    const read = (v: BNode, inModule: Extractor) => inModule === this.ex ? this.of(v, depth + 1) : atCall(new Collections(inModule).of(v, depth + 1), e);
    if (value) return read(value, ex);
    // The factory's parameters are what its `inject` list gives: not read, so a value made of them names nothing.
    const call = { type: 'CallExpression', callee: factory, arguments: [], start: e.start, end: e.end } as unknown as BNode;
    return factory ? this.ex.throughFunction(call, { ex, fn: factory }, read) : undefined;
  }

  /**
   * `this.collection` in a subclass whose constructor calls `super(db.collection('users'))` (or `super(db,
   * 'users')`), where the class it extends takes the field as that parameter (`constructor(protected collection:
   * Collection<T>)`) or assigns it from its parameters (`this.collection = db.collection(name)`): what the
   * super call gives. In the base class's own methods the field stays chosen by each subclass.
   */
  private fromSuper(e: BNode, field: string, depth: number): FoundCollection | undefined {
    if (depth > MAX_RESOLVE_DEPTH - 2) return undefined;
    const cls = this.ex.enclosingClassNode();
    if (!cls) return undefined;
    return this.fromSuperCall(e, field, depth, cls) ?? this.fromSetUp(e, field, depth, cls);
  }

  private fromSuperCall(e: BNode, field: string, depth: number, cls: BNode): FoundCollection | undefined {
    const ctor = constructorOf(cls);
    const body = ctor?.body && !Array.isArray(ctor.body) ? (ctor.body.body as BNode[] | undefined) ?? [] : [];
    const sup = body.map((st) => (st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined)).find((x) => x !== undefined && isCall(x) && unwrap(x.callee!).type === 'Super');
    if (!ctor || !sup) return undefined;
    const base = [...this.ex.lineage(cls)][1];
    const baseCtor = base ? constructorOf(base.node) : undefined;
    if (!base || !baseCtor) return undefined;
    const params = baseCtor.params ?? [];
    const index = params.findIndex((p) => p.type === 'TSParameterProperty' && paramName((p as unknown as { parameter: BNode }).parameter) === field);
    if (index >= 0) {
      const arg = sup.arguments?.[index];
      if (!arg || arg.type === 'SpreadElement') return undefined;
      return this.ex.inFunction(cls, ctor, () => this.ex.within([ctor.body as BNode], () => this.of(arg, depth + 1)));
    }
    const stmts = baseCtor.body && !Array.isArray(baseCtor.body) ? (baseCtor.body.body as BNode[] | undefined) ?? [] : [];
    const assigned = stmts.map((st) => (st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined)).filter((a): a is BNode =>
      a?.type === 'AssignmentExpression' && a.operator === '=' && isMember(unwrap(a.left!)) && unwrap(unwrap(a.left!).object!).type === 'ThisExpression' && propertyName(unwrap(a.left!)) === field);
    if (assigned.length !== 1) return undefined;
    const read = (v: BNode, inModule: Extractor) => inModule === this.ex ? this.of(v, depth + 1) : atCall(new Collections(inModule).of(v, depth + 1), e);
    const found = this.ex.throughConstructor(sup, { ex: base.ex, fn: baseCtor, cls: base.node }, assigned[0]!.right!, read);
    return found && found.name !== '' ? found : undefined;
  }

  /**
   * `this.collection` in a subclass that calls the base class's set-up method (`await super.open('holders')`,
   * `this.open('votes')`), where that method, the one place of the base class that assigns the field, opens
   * it from its parameters (`this.collection = client.db(x).collection(name)`): what the subclass's calls
   * give, when they all name the same collection. Calls that name different ones leave it unnamed.
   */
  private fromSetUp(e: BNode, field: string, depth: number, cls: BNode): FoundCollection | undefined {
    const base = [...this.ex.lineage(cls)][1];
    if (!base) return undefined;
    const members = (c: BNode) => (c as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
    const assignments: { method: BNode; value: BNode }[] = [];
    for (const m of members(base.node)) {
      if (m.type !== 'ClassMethod' || !m.body || Array.isArray(m.body)) continue;
      const stack: BNode[] = [m.body];
      while (stack.length > 0) {
        const n = stack.pop()!;
        if (n.type === 'AssignmentExpression' && n.operator === '=' && isMember(unwrap(n.left!)) && unwrap(unwrap(n.left!).object!).type === 'ThisExpression' && propertyName(unwrap(n.left!)) === field) {
          assignments.push({ method: m, value: n.right! });
        } else if (!['ArrowFunctionExpression', 'FunctionExpression', 'FunctionDeclaration', 'ClassMethod', 'ObjectMethod'].includes(n.type) || n === m.body) pushChildren(n, stack);
      }
    }
    const only = assignments.length === 1 ? assignments[0]! : undefined;
    const method = only && only.method.kind === 'method' ? only.method : undefined;
    const name = method ? keyName(method.key!) : undefined;
    if (!only || !method || name === undefined) return undefined;
    // A subclass that declares the method itself: `this.open(...)` is its own.
    const overrides = members(cls).some((m) => m.type === 'ClassMethod' && m.kind === 'method' && m.key !== undefined && keyName(m.key) === name);
    const calls: BNode[] = [];
    const stack: BNode[] = [...members(cls)];
    while (stack.length > 0 && calls.length <= 8) {
      const n = stack.pop()!;
      const callee = isCall(n) ? unwrap(n.callee!) : undefined;
      if (callee && isMember(callee) && propertyName(callee) === name) {
        const on = unwrap(callee.object!).type;
        if (on === 'Super' || (on === 'ThisExpression' && !overrides)) calls.push(n);
      }
      pushChildren(n, stack);
    }
    if (calls.length === 0) return undefined;
    calls.sort((a, b) => a.start - b.start);
    const read = (v: BNode, inModule: Extractor) => inModule === this.ex ? this.of(v, depth + 1) : atCall(new Collections(inModule).of(v, depth + 1), e);
    let first: FoundCollection | undefined;
    let differ = false;
    const names: string[] = [];
    for (const call of calls) {
      const found = this.ex.throughConstructor(call, { ex: base.ex, fn: method, cls: base.node }, only.value, read);
      if (!found || found.name === '' || found.givenAmong !== undefined) return undefined;
      if (first && (found.name !== first.name || found.database !== first.database)) differ = true;
      first ??= found;
      if (!names.includes(found.name)) names.push(found.name);
    }
    if (!differ) return first;
    // Calls that open different collections: unnamed, and the hover names them when the method opens it by its parameter.
    const value = unwrap(only.value);
    const arg = isCall(value) && isMember(unwrap(value.callee!)) && propertyName(unwrap(value.callee!)) === 'collection' && value.arguments?.[0] ? unwrap(value.arguments[0]) : undefined;
    const parameter = arg?.type === 'Identifier' && (method.params ?? []).some((p) => paramName(p) === arg.name) ? arg.name : undefined;
    if (parameter === undefined || !first) return undefined;
    const file = this.ex.context.file !== undefined ? baseName(this.ex.context.file) : 'this file';
    return { name: '', flavour: first.flavour, nameRange: range(e.property ?? e), namedBy: `the ${calls.length} calls of ${name} in ${file}`, givenAmong: { parameter, names } };
  }

  /**
   * The collection every one of the callers' values names, shown at `e`. With `unnamed` (what the parameter
   * is without its callers), callers that each name a collection but not the same one give `unnamed` with
   * the collections they name between them (givenAmong): still no name, never one of them. With
   * `unnamed.called`, each value is a function the parameter is called as, read by what it returns; with
   * `readValue`, each value is read by it (a collection's name a parameter is given: givenName).
   */
  private agreed(callers: Callers | undefined, e: BNode, depth: number, unnamed?: Unnamed, readValue?: (ex: Extractor, value: BNode) => FoundCollection | undefined): FoundCollection | undefined {
    if (!callers || depth > MAX_RESOLVE_DEPTH - 2) return undefined;
    let first: FoundCollection | undefined;
    let differ = false;
    const names: string[] = [];
    const files = new Set<string>();
    const read = readValue ?? ((ex: Extractor, value: BNode) => new Collections(ex).of(unnamed?.called ? calledWithNothing(value) : value, depth + 1));
    for (const v of callers.values) {
      const c = v.read(read);
      if (!c || c.name === '' || c.typedAs !== undefined || c.namedAfter !== undefined || c.heldAs !== undefined || c.alternatives !== undefined || c.defaultOf !== undefined || c.givenAmong !== undefined) return undefined;
      if (first && (c.name !== first.name || c.database !== first.database || c.flavour !== first.flavour)) {
        if (!unnamed) return undefined;
        differ = true;
      }
      first ??= c;
      if (!names.includes(c.name)) names.push(c.name);
      files.add(v.file !== undefined ? baseName(v.file) : 'this file');
    }
    if (!first) return undefined;
    const n = callers.values.length;
    const namedBy = `the ${n === 1 ? 'call' : `${n} calls`} of ${callers.fnName} in ${[...files].join(', ')}`;
    if (differ && unnamed) return { ...unnamed.found, namedBy, givenAmong: { parameter: unnamed.parameter, names } };
    if (differ) return undefined;
    // Every call gives one family (`bucket_data_${id}`): the family, as where it is made.
    return { name: first.name, flavour: first.flavour, nameRange: range(e), namedBy, ...(first.database !== undefined ? { database: first.database } : {}), ...(first.family !== undefined ? { family: first.family } : {}) };
  }

  /**
   * A name destructured from what holds collections: `const { Orders } = collections` and
   * `const { collections: { Orders } } = context` name the collection Orders, as `collections.Orders`
   * does; from a constant object, the collection its property holds.
   */
  private destructured(e: BNode, depth: number): FoundCollection | undefined {
    const part = this.ex.partOf(e.name!);
    if (!part) return undefined;
    const key = part.path[part.path.length - 1]!;
    let holder: BNode | undefined = part.of ? this.ex.follow(part.of) : undefined;
    for (const k of part.path) {
      const held = holder ? heldAt(holder, k) : undefined;
      holder = held ? this.ex.follow(held) : undefined;
    }
    if (holder) return this.of(holder, depth + 1);
    const fromCall = part.of ? this.returnedMember(part.of, part.path, e, depth) : undefined;
    if (fromCall) return fromCall;
    // An element of an array (`const [a] = ...`) is not named by what holds it.
    if (/^\d+$/.test(key)) return undefined;
    const holderName = part.path.length > 1 ? part.path[part.path.length - 2] : part.of ? this.ex.lastName(part.of) : undefined;
    // A bare `db` is the shell's or a driver Db, which holds no collections as properties; `app.db` may.
    const bareDb = holderName === 'db' && part.path.length === 1 && part.of?.type === 'Identifier';
    return holderName !== undefined && COLLECTION_HOLDERS.test(holderName) && !bareDb ? { name: key, flavour: 'driver', nameRange: range(e) } : undefined;
  }

  /**
   * `const { Products } = await ProductsCollection(db)`: the collection the function (here or in another
   * module of the workspace) puts under that key of the object it returns, read where it is made.
   */
  private returnedMember(of: BNode, path: string[], at: BNode, depth: number): FoundCollection | undefined {
    let call = unwrap(of);
    // `const cols = getCollections(db); const { Orders } = cols` (or `cols.Orders`): the call the constant keeps.
    const kept = call.type === 'Identifier' ? this.ex.constInit(call.name!) : undefined;
    if (kept) call = unwrap(kept);
    // `const first = none ? null : build(lookup)`: the call, where it is made.
    if (call.type === 'ConditionalExpression' && (isNothingValue(call.consequent!) || isNothingValue(call.alternate!))) call = unwrap(isNothingValue(call.consequent!) ? call.alternate! : call.consequent!);
    if (call.type === 'AwaitExpression' && call.argument) call = unwrap(call.argument);
    if (!isCall(call)) return undefined;
    const read = (ret: BNode, inModule: Extractor): FoundCollection | undefined => {
      let held: BNode | undefined = inModule.follow(ret);
      for (const k of path) {
        const v: BNode | undefined = held ? heldAt(held, k) : undefined;
        held = v ? inModule.follow(v) : undefined;
      }
      if (!held) return undefined;
      return inModule === this.ex ? this.of(held, depth + 1) : atCall(new Collections(inModule).of(held, depth + 1), at);
    };
    const callee = unwrap(call.callee!);
    if (callee.type === 'Identifier') return this.ex.throughCall(call, read);
    // `const [users, logs] = await Worker.openCollections(db)`: a method of a class or object; or a function
    // of a module of the workspace loaded where it is called (`(await import('./db')).getCollections(db)`).
    if (!isMember(callee) || depth > MAX_RESOLVE_DEPTH - 2) return undefined;
    const target = loadedFunction(this.ex, callee) ?? functionOf(this.ex, callee);
    return target ? this.ex.throughFunction(call, target, read) : undefined;
  }

  /**
   * A `db` whose properties are collections (`db.users.findOne(...)`): one the application's own module
   * exports (`import { db } from '../infrastructure/mongodb'`), or one taken from a parameter or an object
   * (`async ({ db }) => ...`, `const { db } = client`, `const db = app.db`), a property of something else as
   * `app.db` is; the driver's own Db holds no collections as properties. A bare parameter
   * (`(db) => db.menu.findOne({})`, `initDb(url, (err, db) => ...)`) is one when the file imports the driver
   * or a statement of it shows a db holding collections (showsDbHoldingCollections): nothing else tells
   * it from an ORM's client passed around. A capitalised property is left alone: a Sequelize
   * `models/index.js` exports its models the same way (`db.User.findAll(...)`).
   */
  private appDb(obj: BNode, name: string): boolean {
    if (obj.type !== 'Identifier' || !/^[a-z_]/.test(name)) return false;
    if (this.ex.partOf(obj.name!)?.path.at(-1) === 'db') return true;
    // `const db = ChatApp.db`: a property of something else too.
    const init = this.ex.constInit(obj.name!);
    if (init && isMember(unwrap(init)) && propertyName(unwrap(init)) === 'db') return true;
    const from = this.ex.importSource(obj.name!);
    if (from !== undefined) return /^(\.|@\/|~\/)/.test(from);
    const b = this.ex.lookup(obj.name!)?.binding;
    const bare = b !== undefined && 'unknown' in b && b.fn === undefined && b.part === undefined;
    return bare && (this.ex.imports('mongodb') || this.ex.fileShows(DB_HOLDS_COLLECTIONS));
  }

  /** The first of several expressions that names a collection, else the first that is one chosen at run time. */
  private either(options: BNode[], depth: number): FoundCollection | undefined {
    const found = options.map((o) => this.of(o, depth + 1));
    const first = found.find((c) => c !== undefined && c.name !== '') ?? found.find((c) => c !== undefined);
    // Two collections the code chooses between: read on the first, the others named beside it, never taken for it.
    const others = [...new Set(found.flatMap((c) => (c && c.name !== '' && first && c.name !== first.name ? [c.name, ...(c.alternatives ?? [])] : [])))].filter((n) => n !== first?.name);
    return first && others.length > 0 ? { ...first, alternatives: [...new Set([...(first.alternatives ?? []), ...others])] } : first;
  }

  /** The shell's `db`, `db.getSiblingDB('x')`, or a constant holding one of them. */
  private isShellDb(e: BNode): boolean {
    e = unwrap(e);
    if (e.type === 'Identifier') {
      if (e.name === 'db') {
        // The shell's global db; a declared `db` (a driver Db, an ORM client) is not the shell's.
        const r = this.ex.lookup('db');
        return !r || ('init' in r.binding && this.isShellDbInit(r.binding.init));
      }
      const init = this.ex.constInit(e.name!);
      return init !== undefined && this.isShellDbInit(init);
    }
    return this.isShellDbInit(e);
  }

  private isShellDbInit(e: BNode): boolean {
    e = unwrap(e);
    if (!isCall(e)) return false;
    const callee = unwrap(e.callee!);
    const m = isMember(callee) ? propertyName(callee) : undefined;
    return (m === 'getSiblingDB' || m === 'getDB') && unwrap(callee.object!).type === 'Identifier' && unwrap(callee.object!).name === 'db';
  }

  private databaseOf(e: BNode, depth: number): string | undefined {
    if (depth > MAX_RESOLVE_DEPTH) return undefined;
    e = unwrap(e);
    if (e.type === 'Identifier') {
      const init = this.ex.constInit(e.name!);
      return init ? this.databaseOf(init, depth + 1) : undefined;
    }
    if (isCall(e)) {
      const callee = unwrap(e.callee!);
      const m = isMember(callee) ? propertyName(callee) : undefined;
      if ((m === 'db' || m === 'getSiblingDB' || m === 'getDB') && e.arguments?.length) return this.ex.stringOf(e.arguments[0]!, 0);
    }
    return undefined;
  }

}


/** What the hover says about a collection not named by a literal: chosen at run time, of a family, taken from a name. */
function collectionSentence(coll: FoundCollection): string | undefined {
  if (coll.givenAmong !== undefined && coll.namedBy !== undefined) {
    return `The collection is the parameter ${coll.givenAmong.parameter}, which ${coll.namedBy} give as ${coll.givenAmong.names.join(' or ')}: the query runs on each, so no index can be named for one of them here.`;
  }
  if (coll.implementedBy !== undefined && coll.name === '') {
    return `The collection is what ${coll.implementedBy.method} returns, which ${coll.implementedBy.by} give as ${coll.implementedBy.names.join(' or ')}: the query runs on each, so no index can be named for one of them here.`;
  }
  if (coll.implementedBy !== undefined && coll.family === undefined) return `The collection is ${coll.name}, what ${coll.implementedBy.by} return.`;
  if (coll.alternatives !== undefined && coll.name !== '') return `The collection is chosen at run time between ${[coll.name, ...coll.alternatives].join(', ')}: the query is read on ${coll.name}.`;
  if (coll.typedAs !== undefined) return `The collection is the parameter ${coll.typedAs}, typed Collection: the caller chooses it at run time, so no index can be named for it here.`;
  if (coll.name === '') return 'The collection is chosen at run time, so no index can be named for it here.';
  if (coll.family !== undefined) return familySentence(coll.name, coll.family);
  if (coll.namedAfter !== undefined) return `The collection is taken to be ${coll.name} from the name ${coll.namedAfter}; its value is set at run time.`;
  if (coll.heldAs !== undefined) return `The collection is taken to be ${coll.name}, the name of the property ${coll.heldAs}: the object that holds it is not in the files read, so the collection it holds may be named otherwise.`;
  if (coll.namedBy !== undefined) return `The collection is ${coll.name}, named by the function's callers: taken from ${coll.namedBy}.`;
  if (coll.defaultOf !== undefined) return `The collection is taken to be ${coll.name}, the default of ${coll.defaultOf}; a caller may name another.`;
  return undefined;
}

/** Options each operation accepts in its options document, by the command part they fill. */
const OPTION_PARTS: Record<string, MongoCommandPart> = { sort: 'sort', projection: 'projection', limit: 'limit', skip: 'skip', hint: 'hint', collation: 'collation' };

export class MongoReader {
  private readonly locations: Record<string, Located> = {};
  private readonly variableParts: MongoCommandPart[] = [];
  private readonly warnings: string[] = [];
  private partial = false;
  private placeholders = false;
  private readonly cmd: MongoCommand;

  constructor(
    private readonly ex: Extractor,
    private readonly coll: FoundCollection,
    private readonly op: ChainCall,
    private readonly cursor: ChainCall[],
    operationAs?: MongoOperation,
  ) {
    const operation = operationAs ?? (op.name as MongoOperation);
    this.cmd = { collection: coll.name, operation, hasPlaceholders: false, ranges: {} };
    if (coll.database !== undefined) this.cmd.database = coll.database;
  }

  read(): FoundMongoQuery {
    const cmd = this.cmd;
    const last = this.cursor.length > 0 ? this.cursor[this.cursor.length - 1]!.call : this.op.call;
    const opCallee = unwrap(this.op.call.callee!);
    const start = unwrap(opCallee.object!).start;
    cmd.ranges.whole = { start, end: last.end };
    cmd.ranges.collection = this.coll.nameRange;
    cmd.ranges.operation = range(this.op.nameNode);
    this.operationArgs(this.op.call.arguments ?? []);
    for (const c of this.cursor) this.cursorMethod(c);
    cmd.hasPlaceholders = this.placeholders;
    const named = collectionSentence(this.coll);
    if (named) this.warnings.push(named);
    return {
      engine: 'mongodb', range: { start, end: last.end }, flavour: this.coll.flavour, command: cmd, locations: this.locations,
      variableParts: this.variableParts, partial: this.partial, warnings: this.warnings,
    };
  }

  private operationArgs(args: BNode[]): void {
    const cmd = this.cmd;
    const driver = this.coll.flavour === 'driver';
    const a = (i: number) => args[i];
    switch (cmd.operation) {
      case 'find':
      case 'findOne':
        this.part('filter', a(0));
        if (a(1)) {
          // The driver takes options second; the shell takes a projection second and options third.
          if (driver || this.looksLikeOptions(a(1)!)) this.options(a(1)!, ['sort', 'projection', 'limit', 'skip', 'hint', 'collation']);
          else this.part('projection', a(1));
        }
        if (a(2)) this.options(a(2)!, ['sort', 'projection', 'limit', 'skip', 'hint', 'collation']);
        if (cmd.operation === 'findOne') cmd.limit = 1;
        return;
      case 'aggregate':
        this.part('pipeline', a(0));
        if (a(1)) this.options(a(1)!, ['hint', 'collation']);
        return;
      case 'count':
      case 'countDocuments':
        this.part('filter', a(0));
        if (a(1)) this.options(a(1)!, ['limit', 'skip', 'hint', 'collation']);
        return;
      case 'deleteOne':
      case 'deleteMany':
        this.part('filter', a(0));
        if (a(1)) this.options(a(1)!, ['hint', 'collation']);
        return;
      case 'findOneAndDelete':
        this.part('filter', a(0));
        if (a(1)) this.options(a(1)!, ['sort', 'projection', 'hint', 'collation']);
        return;
      case 'distinct':
        if (a(0)) {
          const f = this.ex.stringOf(a(0)!, 0);
          if (f !== undefined) cmd.field = f;
          else this.variable('field');
          cmd.ranges.field = range(unwrap(a(0)!));
        }
        this.part('filter', a(1));
        if (a(2)) this.options(a(2)!, ['hint', 'collation']);
        return;
      default:
        // updateOne/updateMany/replaceOne/findOneAnd{Update,Replace}: filter, update, options.
        this.part('filter', a(0));
        if (a(1)) this.part('update', a(1));
        if (a(2)) this.options(a(2)!, cmd.operation.startsWith('findOneAnd') ? ['sort', 'projection', 'hint', 'collation'] : ['hint', 'collation']);
    }
  }

  private looksLikeOptions(e: BNode): boolean {
    const o = this.ex.resolve(e);
    if (o.type !== 'ObjectExpression') return false;
    const keys = (o.properties ?? []).map((p) => (p.key ? keyName(p.key) : undefined));
    return keys.length > 0 && keys.some((k) => k === 'projection' || k === 'sort' || k === 'limit' || k === 'skip' || k === 'hint');
  }

  private variable(p: MongoCommandPart): void {
    if (!this.variableParts.includes(p)) this.variableParts.push(p);
    this.placeholders = true;
  }

  /** Reads one command part from an argument and stores it on the command. */
  private part(p: MongoCommandPart, node: BNode | undefined): void {
    if (!node) return;
    const v = new ValueReader(this.ex, this.locations, () => {
      this.placeholders = true;
    }, () => {
      this.partial = true;
    }).read(node, p);
    // A copy: every range object belongs to one place, so moving them after an edit moves each once.
    const r = { ...this.locations[p]!.value };
    this.cmd.ranges[p] = r;
    if (isPlaceholder(v)) this.variable(p);
    const cmd = this.cmd;
    switch (p) {
      case 'filter':
        if (v === undefined || v === null || isUndefinedValue(v)) {
          delete cmd.ranges.filter;
          return;
        }
        if (isDoc(v)) cmd.filter = v;
        return;
      case 'projection':
        if (isDoc(v)) cmd.projection = v;
        return;
      case 'sort':
        if (isDoc(v) && !isPlaceholder(v)) cmd.sort = v;
        else if (Array.isArray(v)) cmd.sort = sortFromPairs(v);
        return;
      case 'pipeline':
        if (Array.isArray(v)) cmd.pipeline = v.filter(isDoc);
        else cmd.pipeline = [];
        return;
      case 'update':
        if (isDoc(v)) cmd.update = v;
        else if (Array.isArray(v)) cmd.update = v.filter(isDoc);
        return;
      case 'limit':
      case 'skip': {
        const n = typeof v === 'number' ? v : undefined;
        if (n !== undefined && Number.isInteger(n)) cmd[p] = Math.abs(n);
        else if (!isPlaceholder(v)) this.variable(p);
        return;
      }
      case 'hint':
        if (typeof v === 'string' || isDoc(v)) cmd.hint = v;
        return;
      case 'collation':
        if (isDoc(v)) cmd.collation = v;
        return;
      default:
        return;
    }
  }

  /** An options document: the parts it names are read as parts (with their own paths), the rest kept. */
  private options(node: BNode, allowed: string[]): void {
    const o = this.ex.resolve(node);
    this.cmd.ranges.options = range(unwrap(node));
    if (o.type !== 'ObjectExpression') {
      this.warnings.push(`The options ${this.ex.text(range(node))} are not written out here, so a sort, limit or skip in them is not known.`);
      this.partial = true;
      return;
    }
    for (const p of o.properties ?? []) {
      if (p.type !== 'ObjectProperty' || p.computed) {
        this.partial = true;
        continue;
      }
      const k = keyName(p.key!);
      if (k === undefined) continue;
      const value = (p.shorthand ? p.key : p.value) as BNode;
      if (allowed.includes(k) && OPTION_PARTS[k]) {
        const partName = OPTION_PARTS[k]!;
        this.part(partName, value);
        this.locations[partName]!.member = range(p);
        this.locations[partName]!.key = range(p.key!);
      } else {
        const v = new ValueReader(this.ex, this.locations, () => undefined, () => undefined).read(value, `options/${escapeKey(k)}`);
        this.cmd.options = { ...(this.cmd.options ?? {}), [k]: v };
      }
    }
  }

  private cursorMethod(c: ChainCall): void {
    const args = c.call.arguments ?? [];
    switch (c.name) {
      case 'sort':
        if (args.length === 2) {
          // The driver's sort('field', -1).
          const f = this.ex.stringOf(args[0]!, 0);
          const d = this.ex.resolve(args[1]!);
          if (f !== undefined) {
            const dir = d.type === 'NumericLiteral' ? (d.value as number) : d.type === 'UnaryExpression' && d.operator === '-' ? -1 : d.type === 'StringLiteral' ? (/^desc/i.test(d.value as string) ? -1 : 1) : 1;
            this.cmd.sort = { [f]: dir < 0 ? -1 : 1 };
            this.cmd.ranges.sort = { start: args[0]!.start, end: args[1]!.end };
            this.locations['sort'] = { value: { ...this.cmd.ranges.sort } };
            return;
          }
        }
        if (args[0]?.type === 'StringLiteral') {
          this.cmd.sort = { [args[0].value as string]: 1 };
          this.cmd.ranges.sort = range(args[0]);
          this.locations['sort'] = { value: range(args[0]) };
          return;
        }
        this.part('sort', args[0]);
        return;
      case 'project':
      case 'projection':
        this.part('projection', args[0]);
        return;
      case 'limit':
      case 'skip':
      case 'hint':
      case 'collation':
        this.part(c.name, args[0]);
        return;
      case 'explain':
        this.cmd.explain = 'queryPlanner';
        this.cmd.ranges.explain = { start: c.nameNode.start, end: c.call.end };
        return;
      default:
        if (args[0]) {
          const v = new ValueReader(this.ex, this.locations, () => undefined, () => undefined).read(args[0], `options/${c.name}`);
          this.cmd.options = { ...(this.cmd.options ?? {}), [c.name]: v };
        } else this.cmd.options = { ...(this.cmd.options ?? {}), [c.name]: true };
    }
  }
}

function sortFromPairs(v: unknown[]): Doc | undefined {
  // The driver also accepts [['a', 1], ['b', -1]].
  const out: Doc = {};
  for (const p of v) {
    if (!Array.isArray(p) || typeof p[0] !== 'string') return undefined;
    out[p[0]] = typeof p[1] === 'number' && p[1] < 0 ? -1 : 1;
  }
  return out;
}
