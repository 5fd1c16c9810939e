// TypeORM: repository and entity calls (`repo.find({ where, order, take, skip, select })`, `findOne`,
// `findBy`, `findOneBy`, `findAndCount`, `count`, `countBy`, `update(criteria, values)`, `delete`,
// `restore`, `increment`/`decrement`, `sum`/`average`/`minimum`/`maximum`, 0.2's `findByIds`), and query builders
// (`repo.createQueryBuilder('u').where('u.email = :email', { email }).orderBy(...).take(10)`), read as the
// SQL TypeORM sends. The entity comes first from what the receiver is (origin.ts: `Repository<User>` in an
// annotation, an application's alias or a method's declared return, a class that extends
// `Repository<User>`, `Container.get(UserRepository)`; a manager under any name takes the entity first),
// then from `@InjectRepository(User)`, `getRepository(User)`, `manager.find(User, ...)`, a repository's
// name (`userRepository`), the entity itself (`User.findBy`, and `getRepository(this)` or
// `this.getRepository()` in its static methods), the last class argument of an application's wrapper on a
// connection (`connection.getRepository(ctx, User)`), the key that picks it from an object of entities
// (`getRepository(entities['User'])`, with a note), or a field the class's construction gives
// (`manager.find(this.entityTarget, ...)` where a subclass calls `super(Token, unitOfWork)`); a manager's
// call whose entity is chosen at run time (in the generic base class itself) is read with its table
// unknown, where what the receiver is says it is a manager; its table and columns are
// the ones the repository declares (`context.entities`), else the `@Entity('name')` the file declares,
// else the name TypeORM's DefaultNamingStrategy gives the class (typeormTableName). `.query(sql)` is read
// by sqlStrings.ts.
//
// One library per call: `X.findOne({ where })` is read as the library that declares X (declaredEntity:
// the file's own declaration of X, else the repository's entities); only when nothing says where X
// comes from do the readers fall back to what the file imports. A call whose first argument is a
// function (`list.find((x) => ...)`) is an array's, never a query.

import type { CallReader, ChainCall, Extractor } from './extractor';
import { activeRecordClass, callersNote, declaredReturnOrigin, libraryOf, originOf, thisRepository, type Library } from './origin';
import { hasUnknownMembers, members, SqlWriter, type SelectParts } from './sqlBuild';
import { quoteIdent, quoteQualified } from '../../postgres/names';
import { isCall, isMember, keyName, propertyName, range, unwrap, type BNode } from './syntax';
import type { DeclaredEntity } from './types';

/**
 * The table TypeORM's DefaultNamingStrategy gives an entity class without a name of its own:
 * `tableName(targetName, undefined)` is `snakeCase(targetName)`, whose two steps are these (typeorm's
 * util/StringUtils: `ABc` -> `a_bc`, then `aC` -> `a_c`, then lower case). `OrderLine` -> `order_line`,
 * `HTTPRequest` -> `http_request`, `User2FA` -> `user2_fa`.
 */
export function typeormTableName(className: string): string {
  return className.replace(/([A-Z])([A-Z])([a-z])/g, '$1_$2$3').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** What says which library a model or entity name belongs to. */
export interface EntityDeclaration {
  library: DeclaredEntity['library'];
  /** The repository's entry for it (table, columns), when the repository's schema lists it for this library. */
  entity?: DeclaredEntity;
  /** TypeORM: the class extends BaseEntity, so its statics are queries. */
  activeRecord?: boolean;
  /** Declared in this file, not only in the repository. */
  local: boolean;
}

/** A function written as an argument: `find((x) => ...)` is an array's method. */
export function functionArgument(call: BNode): boolean {
  const a = call.arguments?.[0] ? unwrap(call.arguments[0]) : undefined;
  return a !== undefined && (a.type === 'ArrowFunctionExpression' || a.type === 'FunctionExpression');
}

/**
 * Which library declares `name` (a class or a model, `User`, `UserModel`): the file's own declaration
 * (`@Entity` / sequelize-typescript's `@Table` on a class, `sequelize.define(...)`, `Model.init(...)`,
 * `mongoose.model(...)`), else the repository's entities (context.entities, from its other files);
 * undefined when nothing says.
 */
export function declaredEntity(ex: Extractor, name: string): EntityDeclaration | undefined {
  const repo = ex.context.entities;
  const listed = (library: DeclaredEntity['library']): DeclaredEntity | undefined => {
    const e = repo?.get(name) ?? repo?.get(name.replace(/(.)Model$/, '$1'));
    return e?.library === library ? e : undefined;
  };
  const init = ex.constInit(name);
  if (init) {
    const d = unwrap(init);
    const callee = isCall(d) ? unwrap(d.callee!) : undefined;
    const fn = callee?.type === 'Identifier' ? callee.name : callee && isMember(callee) ? propertyName(callee) : undefined;
    if (callee && d.arguments?.[0] && ex.stringOf(d.arguments[0], 0) !== undefined) {
      if (fn === 'model') return withEntity({ library: 'mongoose', local: true }, listed('mongoose'));
      if (fn === 'define' && isMember(callee)) return withEntity({ library: 'sequelize', local: true }, listed('sequelize'));
    }
  }
  const cls = localClass(ex, name);
  if (cls) {
    if (cls.decorators.includes('Entity')) return withEntity({ library: 'typeorm', local: true, ...(cls.activeRecord ? { activeRecord: true } : {}) }, listed('typeorm'));
    if (cls.decorators.includes('Table') && ex.imports('sequelize-typescript')) return withEntity({ library: 'sequelize', local: true }, listed('sequelize'));
  }
  const init2 = /^[A-Z]/.test(name) ? ex.moduleCall(name, 'init') : undefined;
  if (init2 && init2.arguments?.[1] && members(ex, init2.arguments[1])?.has('sequelize')) return withEntity({ library: 'sequelize', local: true }, listed('sequelize'));
  const e = repo?.get(name) ?? (/.Model$/.test(name) ? repo?.get(name.replace(/Model$/, '')) : undefined);
  if (!e) return undefined;
  return { library: e.library, entity: e, local: false, ...(e.activeRecord ? { activeRecord: true } : {}) };
}

function withEntity(d: EntityDeclaration, e: DeclaredEntity | undefined): EntityDeclaration {
  if (!e) return d;
  return { ...d, entity: e, ...(e.activeRecord || d.activeRecord ? { activeRecord: true } : {}) };
}

const classCache = new WeakMap<Extractor, Map<string, { decorators: string[]; activeRecord: boolean } | null>>();

/**
 * A class the file declares, with the decorators written before it and whether it extends BaseEntity
 * (or a class of the file that does). Read from the text around `class Name`: the extractor keeps the
 * classes' trees for the statements it has read, not for the whole file.
 */
function localClass(ex: Extractor, name: string, depth = 0): { decorators: string[]; activeRecord: boolean } | undefined {
  let cache = classCache.get(ex);
  if (!cache) classCache.set(ex, (cache = new Map()));
  if (cache.has(name)) return cache.get(name) ?? undefined;
  cache.set(name, null);
  const m = new RegExp(`\\bclass\\s+${name.replace(/[$]/g, '\\$')}\\b(?:\\s*<[^>{]*>)?(?:\\s+extends\\s+([\\w$.]+))?`).exec(ex.source);
  if (!m) return undefined;
  // The decorators are the text between the statement before and the class: after the last `;` or a
  // closing brace at the start of a line.
  const before = ex.source.slice(Math.max(0, m.index - 2000), m.index);
  const cut = Math.max(before.lastIndexOf(';'), before.lastIndexOf('\n}'));
  const decorators = [...before.slice(cut + 1).matchAll(/@([A-Za-z_$][\w$]*)/g)].map((d) => d[1]!);
  const parent = m[1]?.split('.').pop();
  const activeRecord = parent !== undefined && (/BaseEntity$/.test(parent) || (depth < 8 && localClass(ex, parent, depth + 1)?.activeRecord === true));
  const out = { decorators, activeRecord };
  cache.set(name, out);
  return out;
}

const METHODS: Record<string, SelectParts['kind']> = {
  find: 'select', findOne: 'select', findBy: 'select', findOneBy: 'select', findAndCount: 'select', findAndCountBy: 'select', findOneOrFail: 'select',
  findOneByOrFail: 'select', count: 'count', countBy: 'count', exist: 'count', exists: 'count', existsBy: 'count', update: 'update', delete: 'delete',
  softDelete: 'update', restore: 'update', findByIds: 'select', increment: 'update', decrement: 'update', sum: 'select', average: 'select', minimum: 'select',
  maximum: 'select',
};
/** `increment(where, property, by)` and `decrement(...)`: the property moved by the value. */
const STEPS: Record<string, string> = { increment: '+', decrement: '-' };
/** `sum(property, where)` and the other aggregates of a column: the SQL function TypeORM selects. */
const AGGREGATES: Record<string, string> = { sum: 'SUM', average: 'AVG', minimum: 'MIN', maximum: 'MAX' };
/** Methods whose first argument is the where itself, not `{ where }`. */
const WHERE_FIRST = new Set(['findBy', 'findOneBy', 'findAndCountBy', 'findOneByOrFail', 'countBy', 'existsBy', 'update', 'delete', 'softDelete', 'restore', 'increment', 'decrement']);
const TYPEORM_ONLY = new Set(['findBy', 'findOneBy', 'findAndCount', 'findAndCountBy', 'findOneOrFail', 'findOneByOrFail', 'countBy', 'existsBy', 'createQueryBuilder']);
const FIND_OPERATORS: Record<string, string> = { MoreThan: '>', MoreThanOrEqual: '>=', LessThan: '<', LessThanOrEqual: '<=', Equal: '=', Like: 'LIKE', ILike: 'ILIKE' };
/** Keys of a find options object (anything else means the object is the where itself). */
const FIND_OPTIONS = new Set(['where', 'order', 'take', 'skip', 'select', 'relations', 'join', 'cache', 'lock', 'withDeleted', 'loadRelationIds', 'loadEagerRelations', 'transaction', 'comment', 'relationLoadStrategy']);
/** The table written for an entity the code does not show: a stand-in, never an index's table (sqlBuild.ts UNKNOWN_TABLE for builders). */
const UNKNOWN_ENTITY = 'unknown_entity';

/** Query builder methods that end a chain by running it. */
const RUNS = new Set(['getMany', 'getOne', 'getOneOrFail', 'getRawMany', 'getRawOne', 'getCount', 'getManyAndCount', 'getRawAndEntities', 'getExists', 'execute', 'stream']);

export const typeormCalls: CallReader = {
  read(n, ex) {
    if (!isCall(n)) return false;
    const chain = ex.flatten(n);
    const qb = chain.findIndex((c) => c.name === 'createQueryBuilder');
    if (qb >= 0) {
      // The builder's receiver: a repository, or the call that returns one (`dataSource.getRepository(User)`);
      // a manager or data source names the entity first and the alias second (`manager.createQueryBuilder(User, 'u')`).
      const qbCall = chain[qb]!.call;
      const receiver = unwrap(unwrap(qbCall.callee!).object!);
      const first = qbCall.arguments?.[0] && unwrap(qbCall.arguments[0]).type === 'Identifier' ? entityArgument(ex, qbCall.arguments[0]) : undefined;
      const managerEntity = first && (/manager$/i.test(ex.lastName(receiver) ?? '') || receiverLibrary(ex, receiver) === 'typeorm-manager') ? first : undefined;
      const entity = managerEntity ?? entityOf(ex, receiver, undefined);
      // Without an entity, the builder is TypeORM's where the file imports it or the receiver comes from it
      // (`dbManager.connection.createQueryBuilder().update(Plan)` where `connection` is a DataSource).
      const typeormReceiver = (l: string | undefined) => l === 'typeorm-manager' || l === 'typeorm-repository';
      if (!entity && !ex.imports('typeorm') && !typeormReceiver(receiverLibrary(ex, receiver))) return false;
      for (const c of chain) ex.consume(c.call);
      const q = readBuilder(ex, entity, chain.slice(qb), managerEntity !== undefined ? 1 : 0);
      // A builder kept in a variable gets more conditions and runs later: what is added there is not read.
      if (!chain.some((c) => RUNS.has(c.name))) q.warnings.push('The query builder is kept and run elsewhere, so conditions added to it later are not read here.');
      const note = callersNote(ex, receiver);
      if (note) q.warnings.push(note);
      ex.push(q);
      return true;
    }
    const op = chain.find((c) => METHODS[c.name] !== undefined);
    if (!op || functionArgument(op.call)) return false;
    const receiver = unwrap(unwrap(op.call.callee!).object!);
    // manager.find(User, { where }) names the entity first: on a value named for a manager, or one whose
    // origin is TypeORM's EntityManager, DataSource or Connection under any name.
    const arg0 = op.call.arguments?.[0];
    const first = arg0 ? entityArgument(ex, arg0) : undefined;
    const named = /manager$/i.test(ex.lastName(receiver) ?? '');
    let managerEntity = first && (named || receiverLibrary(ex, receiver) === 'typeorm-manager') ? first : undefined;
    let entity = managerEntity ?? entityOf(ex, receiver, op);
    let unknownEntity = false;
    // `manager.find(this.entityTarget, ...)`: the entity the class's construction gives the field; in a
    // generic base class, whose subclasses give it each another, the table is unknown, and the call is read
    // so where what the receiver is (not its name) says it is a manager. Asked only of a call shaped as a
    // manager's, its entity then its criteria or a field of `this` first: what a receiver is costs more to
    // ask than its name (`map.delete(key)` is not asked).
    const field = arg0 !== undefined && isMember(unwrap(arg0)) && unwrap(unwrap(arg0).object!).type === 'ThisExpression';
    if (!entity && arg0 && unwrap(arg0).type !== 'ObjectExpression' && (field || (op.call.arguments?.length ?? 0) >= 2)) {
      const library = receiverLibrary(ex, receiver);
      if (named || library === 'typeorm-manager') entity = managerEntity = constructedEntity(ex, arg0);
      unknownEntity = !entity && library === 'typeorm-manager';
    }
    if (!entity && !unknownEntity) return false;
    for (const c of chain) ex.consume(c.call);
    const q = readRepository(ex, entity, op, managerEntity !== undefined || unknownEntity ? 1 : 0);
    const note = callersNote(ex, receiver);
    if (note) q.warnings.push(note);
    ex.push(q);
    return true;
  },
};

/** An entity, and how it was taken when that is not certain (from a key of an object of entities). */
interface Entity {
  name: string;
  note?: string;
}

/** An entity class named by an expression: `User`, `User.name` is not one. */
function entityName(ex: Extractor, node: BNode): string | undefined {
  const e = unwrap(node);
  if (e.type === 'Identifier' && /^[A-Z]/.test(e.name!)) return e.name;
  return ex.stringOf(e, 0);
}

/**
 * The entity an argument names: a class, a string, `this` in a class (an entity's static method), or a
 * key of an object of entities (`databaseEntities['ChatFlow']`, whose object is not read: the key is
 * taken for the class's name).
 */
function entityArgument(ex: Extractor, node: BNode): Entity | undefined {
  const e = unwrap(node);
  if (e.type === 'ThisExpression') {
    const cls = ex.enclosingClass();
    return cls !== undefined ? { name: cls } : undefined;
  }
  const named = entityName(ex, e);
  if (named !== undefined) return { name: named };
  // `manager.find(this.OrderLine, ...)`: a field named for the entity class it holds, set at run time.
  if (isMember(e) && !e.computed && unwrap(e.object!).type === 'ThisExpression' && /^[A-Z]\w*$/.test(propertyName(e) ?? '')) {
    const field = propertyName(e)!;
    return { name: field, note: `The entity is taken to be ${field} from the field this.${field}, which is given its class at run time.` };
  }
  if (isMember(e) && /entities$/i.test(ex.lastName(unwrap(e.object!)) ?? '')) {
    const key = e.computed ? ex.stringOf(e.property!, 0) : propertyName(e);
    if (key !== undefined && /^[A-Z]\w*$/.test(key)) {
      return { name: key, note: `The entity is taken to be ${key} from the key of ${ex.text(range(e))}; the object it is picked from is not read here.` };
    }
  }
  return undefined;
}

/**
 * What a receiver is (origin.ts), also where a method of another value declares what it returns
 * (`const manager = this.unitOfWork.getTransactionManager()` where the method is declared `: EntityManager`):
 * asked here, where a call's reading depends on it, and not for every receiver.
 */
function receiverLibrary(ex: Extractor, receiver: BNode): Library | undefined {
  const known = libraryOf(ex, receiver);
  if (known !== undefined) return known;
  let made = unwrap(receiver);
  if (made.type === 'Identifier') {
    const init = ex.constInit(made.name!);
    if (!init) return undefined;
    made = unwrap(init);
  }
  if (made.type === 'AwaitExpression' && made.argument) made = unwrap(made.argument);
  const callee = isCall(made) ? unwrap(made.callee!) : undefined;
  const o = callee && isMember(callee) ? declaredReturnOrigin(ex, callee) : undefined;
  return o && 'library' in o ? o.library : undefined;
}

/**
 * The entity a field holds by the construction of the class the walk is in: the `super(Token, unitOfWork)`
 * of a subclass, given to a base class that keeps it (`constructor(protected readonly entityTarget:
 * EntityTarget<T>)`), or the field's own initializer. Asked only of a manager's call, whose first argument
 * is an entity: the class's lineage is read.
 */
function constructedEntity(ex: Extractor, node: BNode): Entity | undefined {
  const e = unwrap(node);
  const cls = isMember(e) && !e.computed && unwrap(e.object!).type === 'ThisExpression' ? ex.enclosingClassNode() : undefined;
  const field = cls ? propertyName(e) : undefined;
  const held = cls && field !== undefined ? ex.fieldGiven(cls, field) : undefined;
  const given = held && held.ex === ex ? entityName(ex, held.node) : undefined;
  return given !== undefined ? { name: given } : undefined;
}

/** Receivers of an application's own `getRepository(ctx, Entity)` wrapper: a connection, a data source, a manager. */
const CONNECTION_LIKE = /(connection|datasource|manager|database|db)$/i;

function entityOf(ex: Extractor, e: BNode, op: ChainCall | undefined, depth = 0): Entity | undefined {
  e = unwrap(e);
  if (depth > 8) return undefined;
  if (e.type === 'AwaitExpression' && e.argument) return entityOf(ex, e.argument, op, depth + 1);
  // `this.find(...)` in a custom repository.
  if (e.type === 'ThisExpression') {
    const own = thisRepository(ex);
    if (own && 'library' in own && own.entity !== undefined) return { name: own.entity };
  }
  const typeorm = ex.imports('typeorm', '@nestjs/typeorm') || [...ex.modules()].some((m) => /typeorm/.test(m));
  // getRepository(User), dataSource.getRepository(User), manager.getRepository(User)
  if (isCall(e)) {
    const callee = unwrap(e.callee!);
    const fn = callee.type === 'Identifier' ? callee.name : isMember(callee) ? propertyName(callee) : undefined;
    const args = e.arguments ?? [];
    if (fn === 'getRepository' && args.length > 1 && isMember(callee)) {
      // connection.getRepository(ctx, User): an application's wrapper takes its context first, the entity last.
      const on = unwrap(callee.object!);
      const connection = on.type === 'ThisExpression' || CONNECTION_LIKE.test(ex.lastName(on) ?? '');
      return connection ? entityArgument(ex, args[args.length - 1]!) : undefined;
    }
    if ((fn === 'getRepository' || fn === 'getCustomRepository' || fn === 'withRepository') && args[0]) return entityArgument(ex, args[0]);
    // this.getRepository() in an entity's static method (BaseEntity), User.getRepository().
    if (fn === 'getRepository' && args.length === 0 && isMember(callee)) {
      const on = unwrap(callee.object!);
      if (on.type === 'ThisExpression') return entityArgument(ex, on);
      return on.type === 'Identifier' && /^[A-Z]/.test(on.name!) ? { name: on.name! } : undefined;
    }
    // Any other call: what it returns, where the code says it (a function that returns
    // `dataSource.getRepository(User)`, a method of another value declared `Promise<Repository<User>>`).
    const o = originOf(ex, e, 0) ?? (isMember(callee) ? declaredReturnOrigin(ex, callee) : undefined);
    return o && 'library' in o && o.library === 'typeorm-repository' && o.entity !== undefined ? { name: o.entity } : undefined;
  }
  // ctx ? connection.getRepository(ctx, Role) : connection.rawConnection.getRepository(Role): both name Role.
  if (e.type === 'ConditionalExpression') {
    const a = entityOf(ex, e.consequent!, op, depth + 1);
    const b = entityOf(ex, e.alternate!, op, depth + 1);
    return a && b && a.name === b.name ? a : undefined;
  }
  if (isMember(e) && unwrap(e.object!).type === 'ThisExpression') {
    const name = propertyName(e);
    const field = name ? ex.thisField(name) : undefined;
    const d = field ? unwrap(field) : undefined;
    if (d && isCall(d) && unwrap(d.callee!).type === 'Identifier' && unwrap(d.callee!).name === 'InjectRepository' && d.arguments?.[0]) return entityArgument(ex, d.arguments[0]);
    // A field set from elsewhere (`@OrmRepository() repo`) is known by its name, below.
    const held = field ? entityOf(ex, field, op, depth + 1) : undefined;
    if (held) return held;
  }
  // What the value is, where the code says it: a repository of an entity (`Repository<User>`, a custom
  // repository class, a method that returns one), or another library's object, whose calls are not TypeORM's.
  if (e.type === 'Identifier' || isMember(e) || isCall(e)) {
    const o = originOf(ex, e, 0);
    if (o && 'library' in o) {
      if (o.library === 'typeorm-repository' && o.entity !== undefined) return { name: o.entity };
      if (o.library !== 'typeorm-repository') return undefined;
    }
  }
  // An active record: a class that extends TypeORM's BaseEntity, through the application's own base
  // classes in any module of the workspace (`Ban extends BaseClass`, `BaseClass extends BaseEntity`).
  if (e.type === 'Identifier' && /^[A-Z]/.test(e.name!) && activeRecordClass(ex, e.name!)) return { name: e.name! };
  // One library per call: an entity the file or the repository declares is TypeORM's only when TypeORM
  // declares it, and its statics are queries only when it is an active record (extends BaseEntity).
  const own = e.type === 'Identifier' && /^[A-Z]/.test(e.name!) ? declaredEntity(ex, e.name!) : undefined;
  if (own) return own.library === 'typeorm' && own.activeRecord ? { name: e.name! } : undefined;
  if (e.type === 'Identifier') {
    const init = ex.constInit(e.name!);
    if (init) return entityOf(ex, init, op, depth + 1);
  }
  const name = ex.lastName(e);
  if (name === undefined) return undefined;
  const repo = /^(\w+?)(Repository|Repo)$/i.exec(name);
  if (repo && (typeorm || TYPEORM_ONLY.has(op?.name ?? '') || (op && hasWhereArg(ex, op)))) {
    const base = repo[1]!.replace(/^(get|this)/, '');
    return { name: base.charAt(0).toUpperCase() + base.slice(1) };
  }
  // Active record: User.findBy({...}), User.find({ where }) in a file that uses TypeORM.
  if (e.type === 'Identifier' && /^[A-Z]/.test(name) && op && (TYPEORM_ONLY.has(op.name) || (typeorm && hasWhereArg(ex, op)))) return { name };
  return undefined;
}

function hasWhereArg(ex: Extractor, op: ChainCall): boolean {
  const o = op.call.arguments?.[0] ? ex.resolve(op.call.arguments[0]) : undefined;
  return o?.type === 'ObjectExpression' && (o.properties ?? []).some((p) => p.key && ['where', 'order', 'take', 'skip', 'relations'].includes(keyName(p.key) ?? ''));
}

/** An entity's table and the columns of its properties, as the repository or the file declares them. */
interface EntityNames {
  table: string;
  column: (property: string) => string;
}

/**
 * The entity's table: the repository's declaration (context.entities), else `@Entity('name')` or
 * `@Entity({ name })` on a class of this file, else the DefaultNamingStrategy's name for the class.
 * Columns are the declared ones (`@Column({ name })`), else the property's name, as TypeORM names them.
 */
function namesOf(ex: Extractor, entity: string): EntityNames {
  const d = declaredEntity(ex, entity);
  const declared = d?.library === 'typeorm' ? d.entity : undefined;
  const local = d?.local ? ex.entityTable(entity) : undefined;
  const table = local ?? declared?.table ?? classTable(ex, entity) ?? typeormTableName(entity);
  const columns = declared && declared.table === table ? declared.columns : {};
  return { table, column: (p) => columns[p] ?? p };
}

/**
 * The table an entity class's `@Entity('name')` or `@Entity({ name })` declares, in this file or in the
 * module of the workspace it is imported from.
 */
function classTable(ex: Extractor, entity: string): string | undefined {
  const own = ex.entityTable(entity);
  if (own !== undefined || ex.module.classes.has(entity)) return own;
  const cls = ex.classNamed(entity);
  const local = cls ? (cls.node as unknown as { id?: BNode }).id?.name : undefined;
  return cls && local ? cls.ex.entityTable(local) : undefined;
}

function readRepository(ex: Extractor, entity: Entity | undefined, op: ChainCall, first: number) {
  const w = new SqlWriter(ex);
  if (entity?.note !== undefined) w.warnings.push(entity.note);
  const names: EntityNames = entity ? namesOf(ex, entity.name) : { table: UNKNOWN_ENTITY, column: (p) => p };
  if (!entity) {
    w.warnings.push('The entity of this call is chosen at run time, so its table is not known and no index is suggested for it.');
    w.standIns.push(names.table);
  }
  const col = (k: string) => quoteIdent(names.column(k));
  const parts: SelectParts = { table: names.table, where: [], orderBy: [], kind: METHODS[op.name]! };
  const arg = op.call.arguments?.[first];
  const aggregate = AGGREGATES[op.name];
  if (aggregate !== undefined) {
    // sum('price', { where }): the column first, then the where itself.
    const property = arg ? ex.stringOf(arg, 0) : undefined;
    if (property === undefined) w.warnings.push(`The column ${op.name} reads is not a literal here, so it is not known.`);
    parts.columns = [`${aggregate}(${property !== undefined ? col(property) : '*'})`];
    const where = op.call.arguments?.[first + 1];
    if (where) whereOf(w, where, parts.where, col);
  } else if (op.name === 'findByIds') {
    // 0.2's findByIds(ids): the primary key in a list.
    if (arg) parts.where.push(`${col('id')} = ANY(${w.value(arg)})`);
  } else if (WHERE_FIRST.has(op.name)) {
    if (arg) whereOf(w, arg, parts.where, col);
  } else {
    const opts = members(ex, arg);
    if (arg && !opts) w.warnings.push('The find options are not written out here, so the filter and order are not known.');
    // Before TypeORM 0.3, findOne({ id }) took the conditions themselves.
    const legacy = opts !== undefined && opts.size > 0 && ![...opts.keys()].some((k) => FIND_OPTIONS.has(k));
    const where = legacy ? arg : opts?.get('where');
    if (where) whereOf(w, where, parts.where, col);
    for (const [k, d] of members(ex, opts?.get('order')) ?? []) {
      const dir = ex.stringOf(d, 0) ?? (members(ex, d)?.get('direction') ? ex.stringOf(members(ex, d)!.get('direction')!, 0) : undefined);
      if (dir === undefined) w.warnings.push(`The order on ${k} goes through a relation or is not a literal direction, so it is left out.`);
      else parts.orderBy.push(`${col(k)}${/^desc/i.test(dir) ? ' DESC' : ''}`);
    }
    if (opts?.get('take')) parts.limit = w.value(opts.get('take')!);
    if (opts?.get('skip')) parts.offset = w.value(opts.get('skip')!);
    if (opts?.get('relations')) w.warnings.push('The relations it loads are joined by metadata this reader does not know, so only the main table is read.');
  }
  if (op.name.startsWith('findOne') || op.name.startsWith('exist')) parts.limit = '1';
  if (op.name === 'update') {
    const values = members(ex, op.call.arguments?.[first + 1]);
    parts.set = values ? [...values.entries()].map(([k, v]) => `${col(k)} = ${w.value(v)}`) : [];
  }
  const step = STEPS[op.name];
  if (step !== undefined) {
    const property = op.call.arguments?.[first + 1] ? ex.stringOf(op.call.arguments[first + 1]!, 0) : undefined;
    const by = op.call.arguments?.[first + 2];
    if (property === undefined) w.warnings.push(`The column it ${op.name}s is not a literal here, so it is not known.`);
    parts.set = property !== undefined ? [`${col(property)} = ${col(property)} ${step} ${by ? w.value(by) : '1'}`] : [];
  }
  if (op.name === 'softDelete') parts.set = [`${col('deletedAt')} = now()`];
  if (op.name === 'restore') parts.set = [`${col('deletedAt')} = NULL`];
  return w.build(parts, op.call);
}

/** A where object (or an array of them, ORed), with TypeORM's find operators. A bare value is the primary key. */
function whereOf(w: SqlWriter, node: BNode, out: string[], col: (k: string) => string): void {
  const v = w.ex.resolve(node);
  if (v.type === 'ArrayExpression') {
    const alts = (v.elements ?? []).filter((x): x is BNode => x !== null).map((x) => {
      const sub: string[] = [];
      whereOf(w, x, sub, col);
      return sub.length > 0 ? `(${sub.join(' AND ')})` : 'TRUE';
    });
    if (alts.length > 0) out.push(`(${alts.join(' OR ')})`);
    return;
  }
  const m = members(w.ex, node);
  if (!m) {
    if (v.type === 'StringLiteral' || v.type === 'NumericLiteral' || v.type === 'Identifier' || v.type === 'MemberExpression') out.push(`${col('id')} = ${w.value(node)}`);
    else w.warnings.push('The criteria are not written out here, so the filter is not known.');
    return;
  }
  for (const [k, x] of m) {
    const c = col(k);
    const val = w.ex.resolve(x);
    if (val.type === 'NullLiteral') out.push(`${c} IS NULL`);
    else if (val.type === 'ObjectExpression') w.warnings.push(`The condition on ${k} filters through a relation, which this reader does not join, so it is left out.`);
    else if (isCall(val) && unwrap(val.callee!).type === 'Identifier') out.push(operator(w, c, unwrap(val.callee!).name!, val.arguments ?? []) ?? `${c} = ${w.value(x)}`);
    else out.push(`${c} = ${w.value(x)}`);
  }
}

function operator(w: SqlWriter, c: string, fn: string, args: BNode[]): string | undefined {
  if (FIND_OPERATORS[fn] && args[0]) return `${c} ${FIND_OPERATORS[fn]} ${w.value(args[0])}`;
  if (fn === 'In' && args[0]) return `${c} IN ${w.list(args[0])}`;
  if (fn === 'IsNull') return `${c} IS NULL`;
  if (fn === 'Between' && args[0] && args[1]) return `${c} BETWEEN ${w.value(args[0])} AND ${w.value(args[1])}`;
  if (fn === 'Any' && args[0]) return `${c} = ANY(${w.value(args[0])})`;
  if (fn === 'Not' && args[0]) {
    const inner = unwrap(args[0]);
    if (isCall(inner) && unwrap(inner.callee!).type === 'Identifier') {
      const o = operator(w, c, unwrap(inner.callee!).name!, inner.arguments ?? []);
      return o ? `NOT (${o})` : undefined;
    }
    return `${c} <> ${w.value(args[0])}`;
  }
  return undefined;
}

/** A query builder chain from `createQueryBuilder(alias)` to the call that runs it. */
function readBuilder(ex: Extractor, entity: Entity | undefined, chain: ChainCall[], aliasAt = 0) {
  const w = new SqlWriter(ex);
  if (entity?.note !== undefined) w.warnings.push(entity.note);
  const aliasArg = chain[0]!.call.arguments?.[aliasAt];
  const alias = aliasArg ? ex.stringOf(aliasArg, 0) : undefined;
  let names = entity ? namesOf(ex, entity.name) : undefined;
  const parts: SelectParts = { table: names?.table ?? '', ...(alias ? { alias } : {}), where: [], orderBy: [], kind: 'select' };
  // `u.createdAt` on the main alias names the entity's property: written as its column.
  const paths = (text: string) => propertyPaths(text, parts.alias, names?.column);
  const joined = new Set<string>();
  // `update(User)`, `into(User)`: the entity the call names, when it names one, is the statement's table.
  const takeEntity = (arg: BNode | undefined) => {
    const name = arg ? entityName(ex, arg) : undefined;
    if (name === undefined) return;
    names = namesOf(ex, name);
    parts.table = names.table;
  };
  for (const c of chain.slice(1)) {
    const a = c.call.arguments ?? [];
    switch (c.name) {
      case 'from':
        if (a[0]) {
          names = namesOf(ex, entityName(ex, a[0]) ?? '');
          parts.table = names.table;
        }
        if (a[1]) parts.alias = ex.stringOf(a[1], 0) ?? parts.alias;
        break;
      case 'update':
        // createQueryBuilder().update(User).set({ ... }): an UPDATE of the entity it names.
        takeEntity(a[0]);
        parts.kind = 'update';
        break;
      case 'set': {
        const values = members(ex, a[0]);
        if (!values) w.warnings.push('The values it sets are not written out here.');
        parts.set = values ? [...values.entries()].map(([k, v]) => `${quoteIdent(names?.column(k) ?? k)} = ${w.value(v)}`) : [];
        break;
      }
      case 'delete':
        // createQueryBuilder().delete().from(User): a DELETE of the entity `from` names.
        parts.kind = 'delete';
        break;
      case 'insert':
        // createQueryBuilder().insert().into(User).values({ ... }): an INSERT, which reads no rows.
        parts.kind = 'insert';
        break;
      case 'into':
        takeEntity(a[0]);
        break;
      case 'values': {
        // One object, or an array of objects with the same properties: their columns and rows.
        const v = a[0] ? ex.resolve(a[0]) : undefined;
        const objects = v?.type === 'ArrayExpression' ? (v.elements ?? []) : v ? [v] : [];
        const rows = objects.map((o) => (o && o.type !== 'SpreadElement' && !hasUnknownMembers(ex, o) ? members(ex, o) : undefined));
        const keys = rows[0] ? [...rows[0].keys()] : [];
        const same = rows.length > 0 && keys.length > 0 && rows.every((r) => r !== undefined && r.size === keys.length && keys.every((k) => r.has(k)));
        if (same) parts.insert = { columns: keys.map((k) => quoteIdent(names?.column(k) ?? k)), rows: rows.map((r) => keys.map((k) => w.value(r!.get(k)!))) };
        else w.warnings.push('The values it inserts are not written out here, so DEFAULT VALUES stands for them.');
        break;
      }
      case 'orIgnore':
        parts.orIgnore = true;
        break;
      case 'where':
      case 'andWhere':
      case 'orWhere': {
        const cond = a[0] ? ex.stringOf(a[0], 0) : undefined;
        if (cond === undefined) {
          w.warnings.push(`A ${c.name} condition is not a string this reader can read (a Brackets or a function), so it is left out.`);
          break;
        }
        const text = `(${namedParams(w, paths(cond), a[1])})`;
        if (c.name === 'orWhere' && parts.where.length > 0) parts.where = [`(${parts.where.join(' AND ')} OR ${text})`];
        else parts.where.push(text);
        break;
      }
      case 'orderBy':
      case 'addOrderBy': {
        const col = a[0] ? ex.stringOf(a[0], 0) : undefined;
        const dir = a[1] ? ex.stringOf(a[1], 0) : undefined;
        if (col === undefined) break;
        if (c.name === 'orderBy') parts.orderBy = [];
        parts.orderBy.push(`${/^\w+\.\w+$/.test(col) ? paths(col) : quoteQualified(col)}${dir && /^desc/i.test(dir) ? ' DESC' : ''}`);
        break;
      }
      case 'take':
      case 'limit':
        if (a[0]) parts.limit = w.value(a[0]);
        break;
      case 'skip':
      case 'offset':
        if (a[0]) parts.offset = w.value(a[0]);
        break;
      case 'getCount':
        parts.kind = 'count';
        break;
      default:
        if (/join/i.test(c.name)) {
          const joinAlias = a[1] ? ex.stringOf(a[1], 0) : undefined;
          if (joinAlias) joined.add(joinAlias);
        }
    }
  }
  if (joined.size > 0) {
    // Conditions on joined aliases name tables this reader cannot resolve: they are left out rather than guessed.
    const names = [...joined];
    const before = parts.where.length;
    parts.where = parts.where.filter((x) => !names.some((j) => new RegExp(`(^|[^\\w."])"?${j}"?\\.`).test(x)));
    const orderBefore = parts.orderBy.length;
    parts.orderBy = parts.orderBy.filter((x) => !names.some((j) => x.startsWith(`${quoteIdent(j)}.`)));
    w.warnings.push(`The joins (${names.join(', ')}) follow relations this reader does not know, so ${parts.where.length < before || parts.orderBy.length < orderBefore ? 'their conditions are left out and ' : ''}only the main table is read.`);
  }
  if (!parts.table) {
    w.warnings.push('The entity of this query builder is not known here, so its table is not known and no index is suggested for it.');
    parts.table = UNKNOWN_ENTITY;
    w.standIns.push(parts.table);
  }
  return w.build(parts, chain[chain.length - 1]!.call);
}

/** `u.createdAt` as TypeORM writes it: property names with capitals quoted, the main alias's properties as their columns. */
function propertyPaths(cond: string, alias?: string, column?: (property: string) => string): string {
  return cond.replace(/\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\b/g, (_m, a: string, b: string) => `${quoteIdent(a)}.${quoteIdent(a === alias && column ? column(b) : b)}`);
}

/** `:email` and `:...ids` parameters with the values object given beside the condition. */
function namedParams(w: SqlWriter, cond: string, valuesNode: BNode | undefined): string {
  const values = members(w.ex, valuesNode);
  return cond.replace(/(?<!:):(\.\.\.)?([A-Za-z_]\w*)/g, (m, spread: string | undefined, name: string) => {
    const v = values?.get(name);
    if (!v) return w.named(m, valuesNode);
    return spread ? w.list(v).replace(/^\(|\)$/g, '') : w.value(v);
  });
}
