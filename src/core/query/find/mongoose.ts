// Mongoose models: `Order.find(filter, projection, options)`, `findOne`, `findById`, `countDocuments`,
// `aggregate`, `updateMany`, `deleteMany`, `findByIdAndUpdate`... with the query methods chained after
// them (`.sort('-createdAt')`, `.select('a b')`, `.limit`, `.skip`, `.lean()`, `.populate()`, `.exec()`).
// The model is known when the file defines it (`mongoose.model('Order', schema)`, with a `collection`
// option or third argument), when NestJS injects it (`@InjectModel(Order.name) orderModel`), or when it is
// imported under a capitalised name in a file that uses no SQL library. Its collection is the one the
// repository declares for the model (context.entities: `model('Order', schema, 'orders_v2')`, the schema's
// `collection` option), else the model name by Mongoose's pluralisation rules (`Order` -> `orders`,
// `Category` -> `categories`, `Person` -> `people`). A name TypeORM or Sequelize declares is not a model
// (one library per call, typeorm.ts declaredEntity). A model a factory function returns (`const Users =
// getUserModel(mongoose)`, here or in another module) is the one every return names; `this` in a schema's
// static (written in place, a function of the module or of another one given by its name, or a static
// method of a class the schema loads with `loadClass`) is the model made from that schema; a discriminator
// (`Form.discriminator('Encrypted', schema)`) keeps its documents in its base model's collection, and its
// queries carry its key and value. An update written without operators is sent under `$set`, as Mongoose
// sends it.

import type { MongoCommand, MongoOperation } from '../mongoShell';
import type { CallReader, ChainCall, Extractor } from './extractor';
import { MongoReader, SQL_LIBRARIES, type FoundCollection } from './mongoDriver';
import { forEachNode } from '../../sql/tree';
import { requiredModule } from './scope';
import { callersOf, importersOf } from './callers';
import { callersPlace, classMemberOf, libraryOf, originOf } from './origin';
import { givesThis, isCall, isMember, keyName, pathTo, propertyName, range, unwrap, type BNode } from './syntax';
import { declaredEntity, functionArgument } from './typeorm';
import { foreignModule } from './workspace';

/** Model methods and the operation each runs. */
const MODEL_METHODS: Record<string, MongoOperation> = {
  find: 'find', findOne: 'findOne', findById: 'findOne', exists: 'findOne', countDocuments: 'countDocuments', count: 'count',
  estimatedDocumentCount: 'count', aggregate: 'aggregate', distinct: 'distinct', updateOne: 'updateOne', updateMany: 'updateMany', update: 'updateMany', replaceOne: 'replaceOne',
  deleteOne: 'deleteOne', deleteMany: 'deleteMany', remove: 'deleteMany', findOneAndUpdate: 'findOneAndUpdate', findOneAndDelete: 'findOneAndDelete',
  findOneAndRemove: 'findOneAndDelete', findOneAndReplace: 'findOneAndReplace', findByIdAndUpdate: 'findOneAndUpdate',
  findByIdAndDelete: 'findOneAndDelete', findByIdAndRemove: 'findOneAndDelete',
};
/** Query methods that shape the query. */
const SHAPING = new Set(['sort', 'limit', 'skip', 'select', 'projection', 'hint', 'collation', 'where', 'equals', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'ne']);
/** Query methods that change how results come back, not which documents are read. */
const PASSING = new Set(['lean', 'populate', 'exec', 'session', 'maxTimeMS', 'comment', 'batchSize', 'allowDiskUse', 'read', 'setOptions', 'cursor', 'orFail', 'cache', 'then', 'catch']);

/** Mongoose's own pluralisation rules (lib/helpers/pluralize.js since Mongoose 6), first match wins. */
const PLURAL_RULES: [RegExp, string][] = [
  [/(m)an$/i, '$1en'], [/(pe)rson$/i, '$1ople'], [/(child)$/i, '$1ren'], [/^(ox)$/i, '$1en'],
  [/(ax|test)is$/i, '$1es'], [/(octop|vir)us$/i, '$1i'], [/(alias|status)$/i, '$1es'], [/(bu)s$/i, '$1ses'],
  [/(buffal|tomat|potat)o$/i, '$1oes'], [/([ti])um$/i, '$1a'], [/sis$/i, 'ses'], [/(?:([^f])fe|([lr])f)$/i, '$1$2ves'],
  [/(hive)$/i, '$1s'], [/([^aeiouy]|qu)y$/i, '$1ies'], [/(x|ch|ss|sh)$/i, '$1es'], [/(matr|vert|ind)ix|ex$/i, '$1ices'],
  [/([m|l])ouse$/i, '$1ice'], [/(kn|w|l)ife$/i, '$1ives'], [/(quiz)$/i, '$1zes'], [/^goose$/i, 'geese'], [/s$/i, 's'], [/([^a-z])$/, '$1'], [/$/, 's'],
];
const UNCOUNTABLE = new Set(['advice', 'energy', 'excretion', 'digestion', 'cooperation', 'health', 'justice', 'labour', 'machinery', 'equipment',
  'information', 'pollution', 'sewage', 'paper', 'money', 'species', 'series', 'rain', 'rice', 'fish', 'sheep', 'moose', 'deer', 'news',
  'expertise', 'status', 'media']);

/**
 * The collection Mongoose gives a model name. Written out rather than imported: the package that holds
 * these rules declares Mongoose itself as a peer dependency, which would install all of Mongoose.
 */
export function mongooseCollection(model: string): string {
  const s = model.toLowerCase();
  if (UNCOUNTABLE.has(s)) return s;
  for (const [re, to] of PLURAL_RULES) if (re.test(s)) return s.replace(re, to);
  return s;
}

/** What a model expression names: the model and, when the code says it, the collection. */
interface ModelName {
  model: string;
  collection?: string;
  /** Where the name is written, for the query's collection range. */
  at: BNode;
  /** The calls a parameter's model was taken from, when its function's callers name it (callers.ts). */
  namedBy?: string;
  /** A discriminator's key and value, which Mongoose adds to each query of the model (`{ kind: 'Refund' }`). */
  discriminator?: { key: string; value: string };
}

export const mongooseCalls: CallReader = {
  read(n, ex) {
    if (!isCall(n)) return false;
    const chain = ex.flatten(n);
    const opIndex = chain.findIndex((c) => MODEL_METHODS[c.name] !== undefined);
    if (opIndex < 0) return false;
    const op = chain[opIndex]!;
    if (functionArgument(op.call)) return false;
    const model = modelOf(ex, unwrap(unwrap(op.call.callee!).object!), op);
    if (!model) return false;
    readModelChain(ex, model, chain, opIndex);
    return true;
  },
};

function readModelChain(ex: Extractor, model: ModelName, chain: ChainCall[], opIndex: number): void {
  const op = chain[opIndex]!;
  const cursor: ChainCall[] = [];
  let i = opIndex + 1;
  for (; i < chain.length && (SHAPING.has(chain[i]!.name) || PASSING.has(chain[i]!.name)); i++) {
    const c = chain[i]!;
    if (SHAPING.has(c.name)) cursor.push(mongooseCursor(ex, c));
  }
  for (const c of chain.slice(0, i)) ex.consume(c.call);
  const declared = ex.context.entities?.get(model.model);
  const coll: FoundCollection = { name: model.collection ?? (declared?.library === 'mongoose' ? declared.table : undefined) ?? mongooseCollection(model.model), flavour: 'shell', nameRange: range(model.at), ...(model.namedBy !== undefined ? { namedBy: model.namedBy } : {}) };
  const call = byIdCall(op);
  const q = new MongoReader(ex, coll, { ...op, call }, cursor.filter((c) => c.name !== 'where'), MODEL_METHODS[op.name]).read();
  q.range = { start: q.range.start, end: chain[i - 1]!.call.end };
  if (model.discriminator && op.name !== 'estimatedDocumentCount') withDiscriminator(q.command, model.discriminator);
  if (q.engine === 'mongodb') withSetOperator(q.command);
  ex.push(q);
}

/**
 * What Mongoose sends for an update written without operators (`updateOne({ _id }, { name })`): the fields
 * under `$set`, with the operators written beside them, as Mongoose casts an update unless `overwrite` is set.
 */
function withSetOperator(cmd: MongoCommand): void {
  const u = cmd.update;
  if (!SET_WRAPPED.has(cmd.operation) || !u || Array.isArray(u) || '$placeholder' in u || cmd.options?.['overwrite'] === true) return;
  const fields = Object.entries(u).filter(([k]) => !k.startsWith('$'));
  if (fields.length === 0) return;
  const set = u['$set'];
  if (set !== undefined && (typeof set !== 'object' || set === null || Array.isArray(set) || '$placeholder' in set)) return;
  const ops = Object.fromEntries(Object.entries(u).filter(([k]) => k.startsWith('$')));
  cmd.update = { ...ops, $set: { ...(set as Record<string, unknown> | undefined), ...Object.fromEntries(fields) } };
}

/** The operations whose update Mongoose wraps in `$set` (findByIdAndUpdate is read as findOneAndUpdate). */
const SET_WRAPPED = new Set<string>(['updateOne', 'updateMany', 'findOneAndUpdate']);

/**
 * What Mongoose sends for a discriminator's query: its filter with the discriminator's key and value added
 * (an aggregate's pipeline with a `$match` on them first), unless the code writes that key itself or the
 * filter is a value chosen at run time.
 */
function withDiscriminator(cmd: MongoCommand, d: { key: string; value: string }): void {
  if (cmd.operation === 'aggregate') {
    if (Array.isArray(cmd.pipeline)) cmd.pipeline = [{ $match: { [d.key]: d.value } }, ...cmd.pipeline];
    return;
  }
  const filter = cmd.filter ?? {};
  if (typeof filter !== 'object' || Array.isArray(filter) || '$placeholder' in filter || d.key in filter) return;
  cmd.filter = { [d.key]: d.value, ...filter };
}

/**
 * `findById(id)` is `findOne({ _id: id })`: the call is read with a filter document built around the
 * argument, which keeps its own place in the file.
 */
function byIdCall(op: ChainCall): BNode {
  // estimatedDocumentCount(options) counts the whole collection: its argument is no filter.
  if (op.name === 'estimatedDocumentCount') return { ...op.call, arguments: [] };
  if (!op.name.startsWith('findById') || !op.call.arguments?.[0]) return op.call;
  const arg = op.call.arguments[0];
  const key: BNode = { type: 'Identifier', name: '_id', start: arg.start, end: arg.start };
  const filter: BNode = { type: 'ObjectExpression', start: arg.start, end: arg.end, properties: [{ type: 'ObjectProperty', start: arg.start, end: arg.end, key, value: arg } as BNode] };
  return { ...op.call, arguments: [filter, ...op.call.arguments.slice(1)] };
}

/** Mongoose's string forms: `sort('-createdAt name')`, `select('a -b')` become documents. */
function mongooseCursor(ex: Extractor, c: ChainCall): ChainCall {
  const arg = c.call.arguments?.[0];
  const name = c.name === 'select' ? 'project' : c.name;
  if (!arg || (c.name !== 'sort' && c.name !== 'select') || (c.call.arguments?.length ?? 0) !== 1) return { ...c, name };
  const text = ex.stringOf(arg, 0);
  if (text === undefined) return { ...c, name };
  const props: BNode[] = [];
  for (const m of text.matchAll(/[+-]?[^\s+-][^\s]*/g)) {
    const word = m[0];
    const field = word.replace(/^[+-]/, '');
    const dir = word.startsWith('-') ? (c.name === 'sort' ? -1 : 0) : 1;
    const at = arg.start + 1 + (m.index ?? 0);
    props.push({ type: 'ObjectProperty', start: at, end: at + word.length, key: { type: 'StringLiteral', value: field, start: at, end: at + word.length }, value: { type: 'NumericLiteral', value: dir, start: at, end: at + word.length } } as BNode);
  }
  const doc: BNode = { type: 'ObjectExpression', start: arg.start, end: arg.end, properties: props };
  return { ...c, name, call: { ...c.call, arguments: [doc] } };
}

/** The model an expression stands for, or undefined when it is not (recognisably) a Mongoose model. */
function modelOf(ex: Extractor, e: BNode, op: ChainCall, depth = 0): ModelName | undefined {
  if (depth > 8) return undefined;
  e = unwrap(e);
  // One library per call: a name the file or the repository declares is Mongoose's only when Mongoose declares it.
  const named = e.type === 'Identifier' ? e.name : isMember(e) && unwrap(e.object!).type !== 'ThisExpression' ? propertyName(e) : undefined;
  const declared = named !== undefined && /^[A-Z]/.test(named) ? declaredEntity(ex, named) : undefined;
  if (declared && declared.library !== 'mongoose') return undefined;
  if (declared?.entity && !declared.local) return { model: named!.replace(/(.)Model$/, '$1'), collection: declared.entity.table, at: e.type === 'Identifier' ? e : e.property! };
  // An argument with `where` is an SQL ORM's find (Sequelize, TypeORM), not Mongoose.
  const first = op.call.arguments?.[0] ? ex.resolve(op.call.arguments[0]) : undefined;
  if (first?.type === 'ObjectExpression' && (first.properties ?? []).some((p) => p.key && keyName(p.key) === 'where')) return undefined;
  // mongoose.model('Order'), connection.model('Order', schema), mongoose.models.Order
  const defined = modelDefinition(ex, e, depth);
  if (defined) return defined;
  // `this` in a schema's static (`schema.statics.byOwner = function () { return this.find(...) }`): the model made from that schema.
  if (e.type === 'ThisExpression') return staticsModel(ex, e, op, depth);
  if (e.type === 'Identifier') {
    const init = ex.constInit(e.name!);
    if (init && !requiredModule(init)) {
      const d = modelDefinition(ex, unwrap(init), depth);
      if (d) return { ...d, at: e };
      if (unwrap(init).type === 'Identifier' || isMember(unwrap(init))) return modelOf(ex, init, op, depth + 1);
      // `const Users = getUserModel(mongoose)`: the model the function (here or in another module) returns.
      const returned = isCall(unwrap(init)) ? returnedModel(ex, unwrap(init), depth) : undefined;
      return returned ? { ...returned, at: e } : undefined;
    }
    // `function listOpen(Model) { return Model.find(...) }`: the model every call of the function passes.
    const passed = init ? undefined : callersModel(ex, e, op, depth);
    if (passed) return passed;
    if (!/^[A-Z]/.test(e.name!) || !ex.importSource(e.name!) || usesSqlOrm(ex) || !importedModel(ex, e.name!)) return undefined;
    return { model: e.name!.replace(/(.)Model$/, '$1'), at: e };
  }
  if (isMember(e)) {
    const name = propertyName(e);
    if (name === undefined) return undefined;
    const obj = unwrap(e.object!);
    if (obj.type === 'ThisExpression') {
      const field = ex.thisField(name);
      const injected = field ? injectedModel(ex, field) : undefined;
      if (injected) return { model: injected, at: e.property! };
      const fromField = field ? modelOf(ex, field, op, depth + 1) : undefined;
      if (fromField) return fromField;
      const cls = ex.enclosingClassNode();
      const passed = cls ? passedModel(ex, cls, name, op, depth) : undefined;
      if (passed) return { ...passed, at: e.property! };
      // this.orderModel: named for its model; `this.MongooseModel` names the library, not a model.
      const stem = name.replace(/Model$/, '');
      if (!field && /.Model$/.test(name) && !GENERIC_MODEL_NAMES.test(stem) && !usesSqlOrm(ex)) return { model: capitalise(stem), at: e.property! };
      // `protected model: Model<T>` in a base class that each subclass gives its own: a model chosen at run time.
      if (libraryOf(ex, e) === 'mongoose-model') return { model: '', collection: '', at: e.property! };
      return undefined;
    }
    // models.Order, db.models.Order
    if (ex.lastName(obj) === 'models' && /^[A-Z]/.test(name)) return { model: name, at: e.property! };
    // `import * as models from './models'; models.badge.find()`: the model the module exports under that name.
    const exported = obj.type === 'Identifier' && ex.isNamespaceImport(obj.name!) ? ex.importedMember(obj.name!, name) : undefined;
    const fromModule = exported ? modelOf(exported.ex, { type: 'Identifier', name: exported.local, start: e.start, end: e.end } as BNode, op, depth + 1) : undefined;
    if (fromModule) return { ...fromModule, at: e.property! };
    // jobRepository._model: a repository of a class whose base holds the model its constructor is given.
    const holder = originOf(ex, obj, 0);
    const passed = holder && 'holder' in holder ? passedModel(holder.ex, holder.holder, name, op, depth) : undefined;
    if (passed) return { ...passed, at: e.property! };
    // this.customersService.CustomerModel: a model another class has injected (`@InjectModel(Customer.name)`),
    // on a field typed by that class.
    const member = classMemberOf(ex, e);
    const injected = member?.decorator ? injectedModel(member.ex, member.decorator) : undefined;
    if (injected) return { model: injected, at: e.property! };
  }
  return undefined;
}

/** The model a parameter holds when every call of its function (callers.ts) passes the same one. */
function callersModel(ex: Extractor, e: BNode, op: ChainCall, depth: number): ModelName | undefined {
  if (depth > 4) return undefined;
  const callers = callersOf(ex, e.name!);
  if (!callers) return undefined;
  let first: ModelName | undefined;
  for (const v of callers.values) {
    const m = v.read((x, value) => modelOf(x, value, op, depth + 2));
    if (!m || m.model === '' || m.collection === '') return undefined;
    const coll = (x: ModelName) => x.collection ?? mongooseCollection(x.model);
    if (first && (m.model !== first.model || coll(m) !== coll(first))) return undefined;
    first ??= m;
  }
  return first ? { model: first.model, ...(first.collection !== undefined ? { collection: first.collection } : {}), at: e, namedBy: callersPlace(callers) } : undefined;
}

const MONGOOSE_MODULES = ['mongoose', '@nestjs/mongoose', '@typegoose/typegoose'];
/** What a field named `<stem>Model` says when it names no model of its own. */
const GENERIC_MODEL_NAMES = /^_*(mongoose|base|db|data|the|my|this|current)$/i;

/**
 * The model a member holds when a base class sets it from a parameter of its constructor and each class
 * below passes its own model to `super(...)` (`class JobRepository extends BaseRepository { constructor()
 * { super(Job, JobEntity) } }`, the base `constructor(protected model: Model<T>) { this._model = model }`):
 * the argument the nearest class below gives, followed down while it is a parameter again.
 */
function passedModel(ex: Extractor, cls: BNode, name: string, op: ChainCall, depth: number): ModelName | undefined {
  if (depth > 8) return undefined;
  const chain = [...ex.lineage(cls)];
  for (let k = 1; k < chain.length; k++) {
    let index = setFromParameter(chain[k]!.node, name);
    if (index === undefined) continue;
    for (let j = k - 1; j >= 0 && index !== undefined; j--) {
      const below = chain[j]!;
      const ctor = constructorOf(below.node);
      if (!ctor) continue;
      const arg = superArguments(ctor)?.[index];
      if (!arg) return undefined;
      const a = unwrap(arg);
      const p = a.type === 'Identifier' ? parameterNames(ctor).indexOf(a.name!) : -1;
      if (p >= 0) {
        index = p;
        continue;
      }
      const m = below.ex.inClass(below.node, () => modelOf(below.ex, a, op, depth + 1));
      return m ? { model: m.model, ...(m.collection !== undefined ? { collection: m.collection } : {}), at: a } : undefined;
    }
    return undefined;
  }
  return undefined;
}

function constructorOf(cls: BNode): BNode | undefined {
  return ((cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).find((m) => m.type === 'ClassMethod' && m.kind === 'constructor');
}

function parameterNames(fn: BNode): (string | undefined)[] {
  return (fn.params ?? []).map((p) => {
    const param = p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : p;
    const id = param.type === 'AssignmentPattern' ? param.left : param;
    return id?.type === 'Identifier' ? id.name : undefined;
  });
}

/** The index of the constructor's parameter a class sets its member `name` from (a parameter property, `this.name = param`). */
function setFromParameter(cls: BNode, name: string): number | undefined {
  const ctor = constructorOf(cls);
  if (!ctor) return undefined;
  const params = parameterNames(ctor);
  const own = (ctor.params ?? []).findIndex((p, i) => p.type === 'TSParameterProperty' && params[i] === name);
  if (own >= 0) return own;
  for (const st of (ctor.body && !Array.isArray(ctor.body) ? (ctor.body.body as BNode[] | undefined) : undefined) ?? []) {
    const a = st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined;
    if (a?.type !== 'AssignmentExpression' || a.operator !== '=') continue;
    const left = unwrap(a.left!);
    const right = unwrap(a.right!);
    if (isMember(left) && unwrap(left.object!).type === 'ThisExpression' && propertyName(left) === name && right.type === 'Identifier') {
      const i = params.indexOf(right.name!);
      if (i >= 0) return i;
    }
  }
  return undefined;
}

/** The arguments of the `super(...)` call a constructor makes. */
function superArguments(ctor: BNode): BNode[] | undefined {
  for (const st of (ctor.body && !Array.isArray(ctor.body) ? (ctor.body.body as BNode[] | undefined) : undefined) ?? []) {
    const c = st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined;
    if (c && isCall(c) && unwrap(c.callee!).type === 'Super') return c.arguments ?? [];
  }
  return undefined;
}

function usesSqlOrm(ex: Extractor): boolean {
  return !ex.imports(...MONGOOSE_MODULES) && ex.imports(...SQL_LIBRARIES);
}

/**
 * Whether a capitalised imported name can be a model, where the workspace shows what it is: the module that
 * declares it uses Mongoose (a model is made from a Schema); a name from a package the workspace does not
 * hold (`import NProgress from 'nprogress'`) is a library's, not the application's model. Without the
 * workspace's modules, or where the declaring module is not read, the name is taken as before.
 */
function importedModel(ex: Extractor, name: string): boolean {
  const other = ex.imported(name);
  if (other) return other.ex.imports(...MONGOOSE_MODULES);
  // `import { Orders } from './models'` where it writes `export * as Orders from './orders'`: a module's functions.
  if (ex.importedLibrary(name) || ex.isReexportedNamespace(name)) return false;
  const from = ex.importSource(name);
  return !(ex.context.modules && ex.context.file !== undefined && from !== undefined && /^(@[\w.-]+\/)?[\w.-]+$/.test(from) && !ex.context.modules.resolve(ex.context.file, from));
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * `mongoose.model('Order', schema, 'orders')`, `model('Order')`, `conn.model(...)`, with the schema's
 * `collection` option; `model('Encrypted')` where the module makes `Form.discriminator('Encrypted', schema)`
 * is a discriminator, whose documents are in its base model's collection.
 */
function modelDefinition(ex: Extractor, e: BNode, depth = 0): ModelName | undefined {
  if (!isCall(e)) return undefined;
  const callee = unwrap(e.callee!);
  const fn = callee.type === 'Identifier' ? callee.name : isMember(callee) ? propertyName(callee) : undefined;
  if (fn !== 'model' || !e.arguments?.[0]) return undefined;
  const model = ex.stringOf(e.arguments[0], 0);
  if (model === undefined) return undefined;
  if (!e.arguments[1]) {
    const registered = registeredModel(ex, model, depth);
    if (registered === null) return undefined;
    if (registered) return { ...registered, model, at: e.arguments[0] };
  }
  const third = e.arguments[2] ? ex.stringOf(e.arguments[2], 0) : undefined;
  const option = e.arguments[1] ? schemaCollection(ex, e.arguments[1]) : undefined;
  const collection = third ?? option;
  return { model, at: e.arguments[0], ...(collection !== undefined ? { collection } : {}) };
}

/** The `collection` option of `new Schema({...}, { collection: 'x' })`. */
function schemaCollection(ex: Extractor, schema: BNode): string | undefined {
  const s = ex.resolve(schema);
  if (s.type !== 'NewExpression' && !isCall(s)) return undefined;
  const opts = s.arguments?.[1] ? ex.resolve(s.arguments[1]) : undefined;
  const prop = opts?.type === 'ObjectExpression' ? (opts.properties ?? []).find((p) => p.key && keyName(p.key) === 'collection') : undefined;
  return prop ? ex.stringOf(prop.value as BNode, 0) : undefined;
}

/** `@InjectModel(Order.name)` or `@InjectModel('Order')` on a constructor parameter: the model's name. */
function injectedModel(ex: Extractor, decorator: BNode): string | undefined {
  const d = unwrap(decorator);
  if (!isCall(d)) return undefined;
  const callee = unwrap(d.callee!);
  if (callee.type !== 'Identifier' || callee.name !== 'InjectModel' || !d.arguments?.[0]) return undefined;
  const arg = unwrap(d.arguments[0]);
  if (isMember(arg) && propertyName(arg) === 'name' && unwrap(arg.object!).type === 'Identifier') return unwrap(arg.object!).name;
  return ex.stringOf(arg, 0);
}

/** What the collection of a model read elsewhere is: the one it names, the one the repository declares, else Mongoose's plural. */
function collectionOf(ex: Extractor, m: ModelName): string {
  const declared = ex.context.entities?.get(m.model);
  return m.collection ?? (declared?.library === 'mongoose' ? declared.table : undefined) ?? mongooseCollection(m.model);
}

/**
 * The model a function returns where every return names one (`getUserModel(db)` returning
 * `db.model('User')` and, when that throws, `compileUserModel(db)`), from a module that uses Mongoose;
 * returns naming different collections are a model chosen at run time.
 */
function returnedModel(ex: Extractor, call: BNode, depth: number): ModelName | undefined {
  if (depth > 6) return undefined;
  const seen: ModelName[] = [];
  let unread = false;
  ex.throughCall(call, (ret, inModule) => {
    // `kind === 'a' ? getA(db) : getB(db)`: each branch is a value the function returns.
    const r = unwrap(ret);
    for (const v of r.type === 'ConditionalExpression' ? [r.consequent!, r.alternate!] : [r]) {
      const m = inModule.imports(...MONGOOSE_MODULES) ? returnedValue(inModule, unwrap(v), depth) : undefined;
      if (m) seen.push({ ...m, collection: m.collection === '' ? '' : collectionOf(inModule, m) });
      else unread = true;
    }
    return undefined;
  });
  if (unread || seen.length === 0) return undefined;
  if (seen.some((m) => m.collection !== seen[0]!.collection)) return { model: '', collection: '', at: call };
  // Discriminators of one base chosen at run time: the collection is known, the key's value is not.
  const d = seen[0]!.discriminator;
  const same = seen.every((m) => m.discriminator?.key === d?.key && m.discriminator?.value === d?.value);
  const { discriminator: _, ...first } = seen[0]!;
  return same ? seen[0] : first;
}

/** One value a model factory returns: a model made or looked up, a name holding one, or another factory's call. */
function returnedValue(ex: Extractor, r: BNode, depth: number): ModelName | undefined {
  if (r.type === 'AwaitExpression' && r.argument) r = unwrap(r.argument);
  const d = modelDefinition(ex, r, depth + 1);
  if (d) return d;
  if (r.type === 'Identifier') {
    const init = ex.constInit(r.name!);
    return init && !requiredModule(init) ? returnedValue(ex, unwrap(init), depth + 1) : undefined;
  }
  return isCall(r) && unwrap(r.callee!).type === 'Identifier' ? returnedModel(ex, r, depth + 1) : undefined;
}

/** A module's schema statics and the calls that make models from its schemas, found once per version of its statements. */
interface ModuleModels {
  statements: BNode[];
  /** Functions a schema takes as statics, by the name of the schema's variable. */
  statics: Map<BNode, string>;
  /** Functions imported from another module that a schema takes as statics: the local name to the schema's. */
  importedStatics: Map<string, string>;
  /**
   * Classes a schema loads (`schema.loadClass(UserClass)`), whose static methods are its statics: the class
   * (its name, or the class expression) to the schema's name.
   */
  loadedClasses: Map<BNode | string, string>;
  /** `model(name, schema)` and `Base.discriminator(name, schema)` calls, in the order the module writes them. */
  makers: BNode[];
}
const modelsOf = new WeakMap<object, ModuleModels>();

function moduleModels(ex: Extractor): ModuleModels | undefined {
  if (!ex.module.statements || !ex.imports(...MONGOOSE_MODULES)) return undefined;
  const statements = ex.module.statements();
  const known = modelsOf.get(ex.module);
  if (known && known.statements.length === statements.length && known.statements.every((n, i) => n === statements[i])) return known;
  const found: ModuleModels = { statements, statics: new Map(), importedStatics: new Map(), loadedClasses: new Map(), makers: [] };
  // A static written in place, a function of the module given by its name (`statics.byEmail = byEmail`), or
  // one imported from another module, whose `this` is read there (exportedStaticModels).
  const give = (value: BNode, schema: string): boolean => {
    if (givesThis(value)) {
      found.statics.set(value, schema);
      return true;
    }
    const b = value.type === 'Identifier' ? ex.lookup(value.name!)?.binding : undefined;
    const f = !b ? undefined : 'init' in b ? unwrap(b.init) : b.fn;
    if (f && givesThis(f)) found.statics.set(f, schema);
    else if (b && ex.importSource(value.name!) !== undefined) found.importedStatics.set(value.name!, schema);
    else return false;
    return true;
  };
  const takeAll = (obj: BNode | undefined, schema: string) => {
    for (const p of obj?.type === 'ObjectExpression' ? obj.properties ?? [] : []) {
      if (p.type === 'ObjectMethod') found.statics.set(p, schema);
      else if (p.type === 'ObjectProperty') give(unwrap(p.value as BNode), schema);
    }
  };
  forEachNode(statements, (o) => {
    const n = o as unknown as BNode;
    if (n.type === 'AssignmentExpression' && n.operator === '=' && isMember(unwrap(n.left!))) {
      // schema.statics.byOwner = function () {...}; schema.statics = { byOwner() {...} }
      const left = unwrap(n.left!);
      const right = unwrap(n.right!);
      const obj = unwrap(left.object!);
      const given = isMember(obj) && propertyName(obj) === 'statics' && unwrap(obj.object!).type === 'Identifier' && give(right, unwrap(obj.object!).name!);
      if (!given && propertyName(left) === 'statics' && obj.type === 'Identifier') takeAll(right, obj.name!);
    } else if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier' && n.init) {
      // new Schema(fields, { statics: { byOwner() {...} } })
      const init = unwrap(n.init);
      const options = (init.type === 'NewExpression' || isCall(init)) && schemaCallee(init) ? init.arguments?.[1] : undefined;
      const prop = options?.type === 'ObjectExpression' ? (options.properties ?? []).find((p) => p.type === 'ObjectProperty' && p.key && keyName(p.key) === 'statics') : undefined;
      if (prop) takeAll(unwrap(prop.value as BNode), n.id.name!);
    } else if (isCall(n) && isMember(unwrap(n.callee!))) {
      const callee = unwrap(n.callee!);
      const name = propertyName(callee);
      const obj = unwrap(callee.object!);
      const [a, b] = n.arguments ?? [];
      // schema.static('byOwner', function () {...}), schema.static({ byOwner() {...} })
      if (name === 'static' && obj.type === 'Identifier') {
        if (!(b && give(unwrap(b), obj.name!))) takeAll(a ? unwrap(a) : undefined, obj.name!);
      } else if ((name === 'model' || name === 'discriminator') && a && b) found.makers.push(n);
      else if (name === 'loadClass' && obj.type === 'Identifier' && a) {
        // schema.loadClass(UserClass), schema.loadClass(class extends Model { static byEmail() {...} })
        const c = unwrap(a);
        if (c.type === 'Identifier') found.loadedClasses.set(c.name!, obj.name!);
        else if (c.type === 'ClassExpression') found.loadedClasses.set(c, obj.name!);
      }
    } else if (isCall(n) && n.arguments?.[1] && isMongooseModelFunction(ex, unwrap(n.callee!))) {
      // import { model } from 'mongoose'; model('User', UserSchema)
      found.makers.push(n);
    }
  });
  modelsOf.set(ex.module, found);
  return found;
}

/** `model` imported from Mongoose (`import { model } from 'mongoose'`, `const { model } = require('mongoose')`), called by that name. */
function isMongooseModelFunction(ex: Extractor, callee: BNode): boolean {
  if (callee.type !== 'Identifier' || callee.name !== 'model') return false;
  const from = ex.importSource('model');
  return from !== undefined && MONGOOSE_MODULES.includes(from);
}

function schemaCallee(n: BNode): boolean {
  const c = unwrap(n.callee!);
  return (c.type === 'Identifier' && c.name === 'Schema') || (isMember(c) && propertyName(c) === 'Schema');
}

/**
 * The model `this` is in a static of a schema (a function given as one, or a static method of a class the
 * schema loads): the one `model(name, schema)` or `Base.discriminator(name, schema)` makes from it, here or
 * in the modules that import it, when every such call names the same collection.
 */
function staticsModel(ex: Extractor, e: BNode, op: ChainCall, depth: number): ModelName | undefined {
  const fn = ex.thisFunction();
  const models = fn || ex.staticMethod() ? moduleModels(ex) : undefined;
  let made: ({ ex: Extractor; model: ModelName } | undefined)[] | undefined;
  if (fn) {
    const schema = models?.statics.get(fn);
    made = models && schema !== undefined ? schemaModels(ex, models, schema, op, depth) : exportedStaticModels(ex, fn, op, depth);
  } else {
    // A static method of a class the schema loads: `this` is the model, as in a static.
    const cls = models ? ex.enclosingClassNode() : undefined;
    const schema = cls ? models!.loadedClasses.get(cls) ?? (cls.id?.name ? models!.loadedClasses.get(cls.id.name) : undefined) : undefined;
    if (schema === undefined) return undefined;
    made = schemaModels(ex, models!, schema, op, depth);
  }
  const first = made?.[0];
  if (!first || made!.some((m) => !m || !sameModel(first, m))) return undefined;
  return { ...first.model, collection: collectionOf(first.ex, first.model), at: e };
}

/**
 * The models made from this module's schema `schema`: here, or, made nowhere here, by the modules that
 * import the schema (`model('User', UserSchema)` in user.model.ts); an undefined entry is one not read.
 */
function schemaModels(ex: Extractor, models: ModuleModels, schema: string, op: ChainCall, depth: number): ({ ex: Extractor; model: ModelName } | undefined)[] | undefined {
  // `const DocSchema = FormSchema as Schema<FormDoc>`: statics given through another name of the schema.
  const names = new Set([schema]);
  for (let init = declaredSchema(ex, schema); init?.type === 'Identifier' && names.size < 8; init = declaredSchema(ex, init.name!)) names.add(init.name!);
  const here = models.makers.filter((call) => names.has(unwrap(call.arguments![1]!).name!));
  return here.length > 0
    ? here.map((call) => {
      const m = madeModel(ex, models, call, op, depth);
      return m && { ex, model: m };
    })
    : importedSchemaModels(ex, names, op, depth);
}

/**
 * A function this module exports that other modules give a schema as a static (`export function byEmail(this:
 * UserModel, ...)` here, `UserSchema.static('byEmail', byEmail)` in user.model.ts): the models made from
 * those schemas, read in the modules that give it. Empty when no module is seen giving it; undefined when
 * one of them cannot be read, or the importers are past the cap.
 */
function exportedStaticModels(ex: Extractor, fn: BNode, op: ChainCall, depth: number): ({ ex: Extractor; model: ModelName } | undefined)[] | undefined {
  const { modules, file } = ex.context;
  const own = modules && file !== undefined && depth <= 6 ? foreignModule(modules, file) : undefined;
  if (!own) return [];
  const out: ({ ex: Extractor; model: ModelName } | undefined)[] = [];
  for (const [exported, what] of own.exports) {
    if (!('local' in what)) continue;
    const b = ex.lookup(what.local)?.binding;
    if (!b || ('init' in b ? unwrap(b.init) : b.fn) !== fn) continue;
    const importers = importersOf(ex, what.local, exported);
    if (!importers) return undefined;
    for (const { reader, local } of importers) {
      const theirs = moduleModels(reader);
      const schema = theirs?.importedStatics.get(local);
      if (schema === undefined) continue;
      const made = schemaModels(reader, theirs!, schema, op, depth + 1);
      if (!made) return undefined;
      out.push(...made);
    }
  }
  return out;
}

function sameModel(a: { ex: Extractor; model: ModelName }, b: { ex: Extractor; model: ModelName }): boolean {
  return collectionOf(a.ex, a.model) === collectionOf(b.ex, b.model) && a.model.discriminator?.value === b.model.discriminator?.value;
}

/**
 * The models the workspace's other modules make from a schema this module exports (under one of `names`),
 * each read in its own module; undefined when one of them cannot be read, or the importers are past the
 * cap. Empty when no module is seen making one.
 */
function importedSchemaModels(ex: Extractor, names: ReadonlySet<string>, op: ChainCall, depth: number): { ex: Extractor; model: ModelName }[] | undefined {
  const { modules, file } = ex.context;
  const own = modules && file !== undefined && depth <= 6 ? foreignModule(modules, file) : undefined;
  if (!own) return [];
  const out: { ex: Extractor; model: ModelName }[] = [];
  for (const [exported, what] of own.exports) {
    if (!('local' in what) || !names.has(what.local)) continue;
    const importers = importersOf(ex, what.local, exported);
    if (!importers) return undefined;
    for (const { reader, local } of importers) {
      const theirs = moduleModels(reader);
      for (const call of theirs?.makers ?? []) {
        const schema = unwrap(call.arguments![1]!);
        if (schema.type !== 'Identifier' || schema.name !== local) continue;
        const m = madeModel(reader, theirs!, call, op, depth + 1);
        if (!m) return undefined;
        out.push({ ex: reader, model: m });
      }
    }
  }
  return out;
}

/**
 * What a schema's name is declared with: its statics and indexes are given to it afterwards (`schema.statics.x =
 * ...`, `schema.index(...)`), so the name counts as changed, but neither changes which schema it is or its options.
 */
function declaredSchema(ex: Extractor, name: string): BNode | undefined {
  const b = ex.lookup(name)?.binding;
  return b && 'init' in b ? unwrap(b.init) : undefined;
}

/** What a `model(name, schema)` or `Base.discriminator(name, schema)` call of the module makes, read in the scopes around it. */
function madeModel(ex: Extractor, models: ModuleModels, call: BNode, op: ChainCall, depth: number): ModelName | undefined {
  if (depth > 6) return undefined;
  const path = pathTo(models.statements, call);
  if (!path) return undefined;
  return ex.within(path, () => {
    const callee = unwrap(call.callee!);
    if (propertyName(callee) === 'model' || isMongooseModelFunction(ex, callee)) return ex.imports(...MONGOOSE_MODULES) ? modelDefinition(ex, call, depth + 1) : undefined;
    const name = ex.stringOf(call.arguments![0]!, 0);
    const baseNode = unwrap(callee.object!);
    const base = name === undefined ? undefined : modelOf(ex, baseNode, op, depth + 1);
    if (!base || base.collection === '') return undefined;
    const key = discriminatorKey(ex, baseNode);
    // The value is the name unless the third argument gives one (`'refund'` or `{ value: 'refund' }`).
    const third = call.arguments![2] ? ex.resolve(call.arguments![2]) : undefined;
    const option = third?.type === 'ObjectExpression' ? (third.properties ?? []).find((p) => p.type === 'ObjectProperty' && p.key && keyName(p.key) === 'value') : undefined;
    const value = !third ? name : option ? ex.stringOf(option.value as BNode, 0) : third.type === 'ObjectExpression' ? name : ex.stringOf(third, 0);
    return { model: name!, collection: collectionOf(ex, base), at: call.arguments![0]!, ...(key !== undefined && value !== undefined ? { discriminator: { key, value } } : {}) };
  });
}

/**
 * The discriminator key of a base model made here (`const Ticket = db.model('Ticket', TicketSchema)`): its
 * schema's `discriminatorKey` option, else Mongoose's `__t`; unknown when the schema or its options are not read.
 */
function discriminatorKey(ex: Extractor, base: BNode): string | undefined {
  const made = base.type === 'Identifier' ? ex.constInit(base.name!) : base;
  const call = made ? unwrap(made) : undefined;
  if (!call || !isCall(call) || !call.arguments?.[1]) return undefined;
  const arg = unwrap(call.arguments[1]);
  const schema = arg.type === 'Identifier' ? declaredSchema(ex, arg.name!) ?? arg : arg;
  if ((schema.type !== 'NewExpression' && !isCall(schema)) || !schemaCallee(schema)) return undefined;
  const options = schema.arguments?.[1] ? ex.resolve(schema.arguments[1]) : undefined;
  if (!options) return '__t';
  if (options.type !== 'ObjectExpression') return undefined;
  const prop = (options.properties ?? []).find((p) => p.type === 'ObjectProperty' && p.key && keyName(p.key) === 'discriminatorKey');
  if ((options.properties ?? []).some((p) => p.type !== 'ObjectProperty')) return undefined;
  return prop ? ex.stringOf(prop.value as BNode, 0) : '__t';
}

/**
 * The collection of a model a module looks up by name (`db.model('Feedback')`) where it also makes a model
 * under that name: `model('Feedback', schema, 'feedback')`'s (its third argument or schema option, else the
 * plural), or a discriminator's (`Form.discriminator('Encrypted', schema)`), its base model's; null when the
 * module makes one under that name whose collection is not known, or a discriminator whose name is not read.
 */
function registeredModel(ex: Extractor, name: string, depth: number): ModelName | null | undefined {
  const models = depth > 6 ? undefined : moduleModels(ex);
  if (!models) return undefined;
  // A discriminator whose name is not read may be the one looked up: its collection is then not known.
  let unread = false;
  for (const call of models.makers) {
    const path = pathTo(models.statements, call);
    const made = path ? ex.within(path, () => ex.stringOf(call.arguments![0]!, 0)) : undefined;
    if (made === undefined && propertyName(unwrap(call.callee!)) === 'discriminator') unread = true;
    if (made !== name) continue;
    const m = madeModel(ex, models, call, { name: 'find', call, nameNode: call }, depth + 1);
    return m ? { ...m, collection: collectionOf(ex, m) } : null;
  }
  return unread ? null : undefined;
}
