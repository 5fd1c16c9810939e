// What a value is, from where it comes: a Knex instance, a node-postgres client or pool, a postgres.js
// `sql`, a MongoDB collection or database, a TypeORM repository (and its entity) or entity manager,
// followed through what the code says of it rather than its name: a TypeScript annotation or assertion
// (`trx: Knex.Transaction`, `#db: PostgresDB` where another module declares `type PostgresDB =
// postgres.Sql`), the library call that made it (`knex(config)`, `new Pool()`, `postgres(url)`,
// `dataSource.getRepository(User)`), a class's field (`this.db`, `service.db` of a field typed by a class),
// a function's return or a method's declared return type, and imports of the workspace's modules. A class
// of the application that extends a library's (`class PrismaService extends PrismaClient`, `class
// UserRepository extends Repository<User>`) is that library's. A reader asks before it falls back on
// names, so a call is read as the library its receiver comes from and never by the file's other imports.

import { callersOf, filesDeclaringGlobal, filesImporting, type Callers } from './callers';
import type { Extractor } from './extractor';
import { typeAnnotationOf } from './scope';
import { heldAt, isCall, isMember, propertyName, pushChildren, unwrap, type BNode } from './syntax';
import { exportedBinding, foreignModule } from './workspace';

export type Library = 'knex' | 'pg' | 'postgres' | 'mongodb-collection' | 'mongodb-db' | 'prisma' | 'mongoose-model' | 'typeorm-repository' | 'typeorm-manager';

/**
 * A value's origin: a library's query object (with the entity class a TypeORM repository is of, when the
 * code names it), or a class or object of the application whose members are followed.
 */
export type Origin = { library: Library; entity?: string; namedBy?: string } | { holder: BNode; ex: Extractor };

/** Types each library declares for its query objects, by module and name (a namespace's `Knex.Transaction` by its last name). */
const LIBRARY_TYPES: Record<string, Record<string, Library>> = {
  knex: { Knex: 'knex', Transaction: 'knex', QueryBuilder: 'knex', QueryInterface: 'knex' },
  pg: { Pool: 'pg', PoolClient: 'pg', Client: 'pg', ClientBase: 'pg' },
  postgres: { Sql: 'postgres', TransactionSql: 'postgres', ReservedSql: 'postgres' },
  mongodb: { Collection: 'mongodb-collection', Db: 'mongodb-db' },
  '@prisma/client': { PrismaClient: 'prisma', TransactionClient: 'prisma' },
  mongoose: { Model: 'mongoose-model' },
  // A TypeORM repository of an entity (`Repository<User>`), and what takes the entity as an argument or
  // hands out repositories and managers (an EntityManager, a DataSource or 0.2's Connection, a QueryRunner).
  typeorm: {
    Repository: 'typeorm-repository', TreeRepository: 'typeorm-repository', EntityManager: 'typeorm-manager', DataSource: 'typeorm-manager',
    Connection: 'typeorm-manager', QueryRunner: 'typeorm-manager',
  },
};
/** Calls and constructors of each library that make one: `knex(config)`, `new Pool()`, `postgres(url)`. */
const LIBRARY_MAKERS: Record<string, Record<string, Library>> = {
  knex: { default: 'knex', knex: 'knex', Knex: 'knex' },
  pg: { Pool: 'pg', Client: 'pg' },
  postgres: { default: 'postgres' },
  '@prisma/client': { PrismaClient: 'prisma' },
  typeorm: { DataSource: 'typeorm-manager', Connection: 'typeorm-manager', getManager: 'typeorm-manager', getConnection: 'typeorm-manager', createConnection: 'typeorm-manager' },
};
/** TypeORM calls on a manager, a data source or a connection (and the global functions of 0.2) that give an entity's repository. */
const TYPEORM_REPOSITORY_CALLS = new Set(['getRepository', 'getTreeRepository']);
/** Members of a data source or query runner that are its entity manager, and calls that give one. */
const TYPEORM_MANAGER_MEMBERS = new Set(['manager']);
const TYPEORM_MANAGER_CALLS = new Set(['createQueryRunner', 'createEntityManager']);
/** Types that keep their first argument's members: `Pick<PrismaService, 'user'>`, `Readonly<Db>`. */
const SAME_MEMBERS = new Set(['Promise', 'Readonly', 'Pick', 'Omit', 'Partial', 'Required', 'NonNullable']);
const MAX_DEPTH = 12;

/** The library a value comes from, when the code says it; undefined when nothing says. */
export function libraryOf(ex: Extractor, e: BNode): Library | undefined {
  const o = originOf(ex, e, 0);
  return o && 'library' in o ? o.library : undefined;
}

export function originOf(ex: Extractor, e: BNode, depth: number): Origin | undefined {
  if (depth > MAX_DEPTH) return undefined;
  // `db as TeamDB`, `<Repository<User>>x`: what the code says the value is.
  const asserted = e.type === 'TSAsExpression' || e.type === 'TSTypeAssertion' ? (e as unknown as { typeAnnotation?: BNode }).typeAnnotation : undefined;
  const typed = asserted ? typeOrigin(ex, asserted, depth + 1) : undefined;
  if (typed) return typed;
  e = unwrap(e);
  if (e.type === 'AwaitExpression' && e.argument) return originOf(ex, e.argument, depth + 1);
  if (e.type === 'Identifier') return nameOrigin(ex, e.name!, depth);
  if (e.type === 'ObjectExpression') return { holder: e, ex };
  // `(transaction || this.connection)`, `trx ?? db`: what both sides are, when they are the same library's.
  if (e.type === 'LogicalExpression' && (e.operator === '||' || e.operator === '??') && e.left && e.right) {
    const a = originOf(ex, e.left, depth + 1);
    const b = a && 'library' in a ? originOf(ex, e.right, depth + 1) : undefined;
    return a && b && 'library' in a && 'library' in b && a.library === b.library && a.entity === b.entity ? a : undefined;
  }
  if (e.type === 'NewExpression' || isCall(e)) return callOrigin(ex, e, depth);
  if (isMember(e)) {
    const name = propertyName(e);
    if (name === undefined) return undefined;
    const obj = unwrap(e.object!);
    if (obj.type === 'ThisExpression') {
      const cls = ex.enclosingClassNode();
      return cls ? memberOrigin(ex, cls, name, depth) : undefined;
    }
    if (obj.type === 'Identifier') {
      const ns = ex.importedMember(obj.name!, name);
      if (ns) return bindingOrigin(ns.ex, ns.local, depth + 1);
    }
    const holder = originOf(ex, obj, depth + 1);
    // `dataSource.manager`, `queryRunner.manager`, `repo.manager`: TypeORM's entity manager.
    if (holder && 'library' in holder) return (holder.library === 'typeorm-manager' || holder.library === 'typeorm-repository') && TYPEORM_MANAGER_MEMBERS.has(name) ? { library: 'typeorm-manager' } : undefined;
    return holder && 'holder' in holder ? memberOrigin(holder.ex, holder.holder, name, depth + 1) : undefined;
  }
  return undefined;
}

/**
 * The class member a member expression names on a value of an application's class (`this.customers.Model`
 * where `customers: CustomersService`), with the extractor of the module that declares the class, and the
 * member's first decorator (`@InjectModel(Customer.name)`), if any.
 */
export function classMemberOf(ex: Extractor, e: BNode): { ex: Extractor; cls: BNode; name: string; decorator?: BNode } | undefined {
  e = unwrap(e);
  if (!isMember(e)) return undefined;
  const name = propertyName(e);
  const obj = unwrap(e.object!);
  if (name === undefined || obj.type === 'ThisExpression') return undefined;
  const holder = originOf(ex, obj, 0);
  if (!holder || !('holder' in holder)) return undefined;
  for (let cls: BNode | undefined = holder.holder, x = holder.ex, i = 0; cls && i < 8; i++) {
    const decorator = memberDecorator(cls, name);
    if (decorator !== undefined) return { ex: x, cls, name, ...(decorator ? { decorator } : {}) };
    const sup: BNode | undefined = (cls as unknown as { superClass?: BNode }).superClass;
    const next: { ex: Extractor; node: BNode } | undefined = sup && unwrap(sup).type === 'Identifier' ? x.classNamed(unwrap(sup).name!) : undefined;
    cls = next?.node;
    if (next) x = next.ex;
  }
  return undefined;
}

/** A class's member `name`: its first decorator's expression, null when it has none, undefined when the class has no such member. */
function memberDecorator(cls: BNode, name: string): BNode | null | undefined {
  const firstOf = (n: BNode) => ((n as unknown as { decorators?: { expression: BNode }[] }).decorators ?? [])[0]?.expression ?? null;
  for (const m of (cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
    const key = m.key && !m.computed ? m.key.name ?? (m.key as unknown as { id?: BNode }).id?.name : undefined;
    if ((m.type === 'ClassProperty' || m.type === 'ClassPrivateProperty') && key === name) return firstOf(m);
    if (m.type === 'ClassMethod' && m.kind === 'constructor') {
      for (const p of m.params ?? []) {
        const param = p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : p;
        const id = param.type === 'AssignmentPattern' ? param.left : param;
        if (p.type === 'TSParameterProperty' && id?.type === 'Identifier' && id.name === name) return firstOf(p) ?? firstOf(param);
      }
    }
  }
  return undefined;
}

function nameOrigin(ex: Extractor, name: string, depth: number): Origin | undefined {
  const r = ex.lookup(name);
  if (!r) return undefined;
  const b = r.binding;
  // A parameter typed by something else than a library's type is not given one: its callers are not asked.
  if ('unknown' in b && b.typeNode) return typeOrigin(ex, b.typeNode, depth + 1);
  // `db.knex.transaction(async (trx) => ...)`: a transaction of what began it, for the libraries whose
  // transaction takes the same queries (Knex, Prisma Client, postgres.js).
  const began = 'unknown' in b && !b.part ? ex.transactionReceiver(name) : undefined;
  if (began) {
    const o = originOf(ex, began, depth + 1);
    if (o && 'library' in o && (o.library === 'typeorm-manager' || o.library === 'typeorm-repository')) return { library: 'typeorm-manager' };
    return o && 'library' in o && (o.library === 'knex' || o.library === 'prisma' || o.library === 'postgres') ? o : undefined;
  }
  // `this.run(manager, m => m.findOne(User, ...))`: the type the called function declares for its callback's parameter.
  const given = 'unknown' in b && !b.part && !b.typeNode ? ex.callbackParameter(name) : undefined;
  const contextual = given ? callbackParameterType(ex, given, depth) : undefined;
  if (contextual) return contextual;
  // `const { Orders } = await collections(db)`, `({ Orders }: { Orders: Collection<Order> }) => ...`: the
  // member of what the pattern takes apart.
  if ('unknown' in b && b.part && (b.part.of || b.part.typeNode)) {
    // `const { mongo } = await createFixtures()`: the member read inside the function's scopes, where the
    // object it returns names its values.
    const made = b.part.of ? returnedPart(ex, b.part.of, b.part.path, depth) : undefined;
    if (made) return made;
    let o = b.part.of ? originOf(ex, b.part.of, depth + 1) : typeOrigin(ex, b.part.typeNode!, depth + 1);
    for (const key of b.part.path) o = o && 'holder' in o ? memberOrigin(o.ex, o.holder, key, depth + 1) : undefined;
    return o;
  }
  if ('init' in b) {
    if (r.mutated) return undefined;
    return originOf(ex, b.init, depth + 1);
  }
  const other = ex.imported(name);
  if (other) return bindingOrigin(other.ex, other.local, depth + 1);
  // A parameter nothing here says more of: what every call of its function passes.
  return 'unknown' in b && depth <= CALLERS_DEPTH ? callersOrigin(ex, name, depth) : undefined;
}

/**
 * What a callback's parameter is, from the type the called function declares for that argument: a function
 * or method of the application (`run(tx, op: (manager: EntityManager) => Promise<T>)`), or a field of the
 * class typed by a function type or the application's alias of one (`_run: RunInTransaction`).
 */
function callbackParameterType(ex: Extractor, given: { call: BNode; argument: number; parameter: number }, depth: number): Origin | undefined {
  if (depth > MAX_DEPTH - 2) return undefined;
  const callee = unwrap(given.call.callee!);
  let argType: { ex: Extractor; t: BNode } | undefined;
  const target = functionOf(ex, callee, depth + 1);
  const param = target?.fn.params?.[given.argument];
  const annotated = param ? typeAnnotationOf(param.type === 'AssignmentPattern' ? param.left! : param) : undefined;
  if (target && annotated) argType = { ex: target.ex, t: annotated };
  else if (!target && isMember(callee) && unwrap(callee.object!).type === 'ThisExpression') {
    // `this._run(...)` where the class declares `_run: RunInTransaction`.
    const field = fieldType(ex, propertyName(callee));
    const fnType = field ? functionType(ex, field, 0) : undefined;
    const p = fnType ? ((fnType.t as unknown as { parameters?: BNode[]; params?: BNode[] }).parameters ?? fnType.t.params ?? [])[given.argument] : undefined;
    const t = p ? typeAnnotationOf(p) : undefined;
    if (fnType && t) argType = { ex: fnType.ex, t };
  }
  const callback = argType ? functionType(argType.ex, argType.t, 0) : undefined;
  const p = callback ? ((callback.t as unknown as { parameters?: BNode[]; params?: BNode[] }).parameters ?? callback.t.params ?? [])[given.parameter] : undefined;
  const t = p ? typeAnnotationOf(p) : undefined;
  const o = callback && t ? typeOrigin(callback.ex, t, depth + 1) : undefined;
  return o && 'library' in o ? o : undefined;
}

/** The annotation of a field of the class the walk is in (a property or a constructor's parameter property). */
function fieldType(ex: Extractor, name: string | undefined): BNode | undefined {
  const cls = ex.enclosingClassNode();
  if (!cls || name === undefined) return undefined;
  for (const m of (cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
    const key = m.key && !m.computed ? m.key.name : undefined;
    if ((m.type === 'ClassProperty' || m.type === 'ClassPrivateProperty') && key === name) return typeAnnotationOf(m);
    if (m.type === 'ClassMethod' && m.kind === 'constructor') {
      for (const p of m.params ?? []) {
        const param = p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : undefined;
        const id = param?.type === 'AssignmentPattern' ? param.left : param;
        if (id?.type === 'Identifier' && id.name === name) return typeAnnotationOf(id);
      }
    }
  }
  return undefined;
}

/** A function type, written or named by an alias of this module or of the module it is imported from. */
function functionType(ex: Extractor, t: BNode, depth: number): { ex: Extractor; t: BNode } | undefined {
  if (depth > 4) return undefined;
  if (t.type === 'TSFunctionType') return { ex, t };
  // `op: ((manager: EntityManager) => Promise<T>)`
  if (t.type === 'TSParenthesizedType') {
    const inner = (t as unknown as { typeAnnotation?: BNode }).typeAnnotation;
    return inner ? functionType(ex, inner, depth + 1) : undefined;
  }
  if (t.type === 'TSUnionType') {
    for (const member of (t as unknown as { types: BNode[] }).types) {
      const f = functionType(ex, member, depth + 1);
      if (f) return f;
    }
    return undefined;
  }
  const typeName = t.type === 'TSTypeReference' ? (t as unknown as { typeName: BNode }).typeName : undefined;
  if (typeName?.type !== 'Identifier') return undefined;
  const own = ex.module.names.get(typeName.name!);
  if (own && 'unknown' in own && own.typeNode) return functionType(ex, own.typeNode, depth + 1);
  const other = ex.imported(typeName.name!);
  const b = other ? other.ex.module.names.get(other.local) : undefined;
  return other && b && 'unknown' in b && b.typeNode ? functionType(other.ex, b.typeNode, depth + 1) : undefined;
}

/** How deep in one origin's reading a parameter's callers are still looked for. */
const CALLERS_DEPTH = 4;

/**
 * A parameter's origin as every call of its function gives it (callers.ts): the library (and the entity of a
 * TypeORM repository) when every call's value is the same library's, or the same object of the application;
 * undefined when one call's value says nothing, or two disagree.
 */
function callersOrigin(ex: Extractor, name: string, depth: number): Origin | undefined {
  const callers = callersOf(ex, name);
  if (!callers) return undefined;
  let first: Origin | undefined;
  for (const v of callers.values) {
    const o = v.read((x, value) => originOf(x, value, depth + 2));
    if (!o) return undefined;
    if (first) {
      const same = 'library' in first ? 'library' in o && o.library === first.library && o.entity === first.entity : 'holder' in o && o.holder === first.holder;
      if (!same) return undefined;
    }
    first ??= o;
  }
  if (!first || !('library' in first)) return first;
  const { namedBy: _, ...lib } = first;
  return { ...lib, namedBy: callersPlace(callers) };
}

/** Where the callers' values were taken from, as a sentence names them: `the 2 calls of list in a.ts, b.ts`. */
export function callersPlace(callers: Callers): string {
  const files = new Set(callers.values.map((v) => (v.file !== undefined ? v.file.slice(v.file.lastIndexOf('/') + 1) : 'this file')));
  const n = callers.values.length;
  return `the ${n === 1 ? 'call' : `${n} calls`} of ${callers.fnName} in ${[...files].join(', ')}`;
}

/** What the hover says of a receiver a function's callers give (a Knex instance, a pg client...), when they do. */
export function callersNote(ex: Extractor, e: BNode): string | undefined {
  const o = originOf(ex, e, 0);
  if (!o || !('library' in o) || o.namedBy === undefined) return undefined;
  return `The ${LIBRARY_WORDS[o.library]} is a parameter, named by the function's callers: taken from ${o.namedBy}.`;
}

const LIBRARY_WORDS: Record<Library, string> = {
  knex: 'Knex instance', pg: 'node-postgres client', postgres: 'postgres.js instance', 'mongodb-collection': 'collection', 'mongodb-db': 'database',
  prisma: 'Prisma client', 'mongoose-model': 'model', 'typeorm-repository': 'TypeORM repository', 'typeorm-manager': 'TypeORM entity manager',
};

/** The member at `path` of the object a call of a function of the workspace returns, read in the function's scopes. */
function returnedPart(ex: Extractor, of: BNode, path: string[], depth: number): Origin | undefined {
  let call = unwrap(of);
  if (call.type === 'AwaitExpression' && call.argument) call = unwrap(call.argument);
  if (!isCall(call) || unwrap(call.callee!).type !== 'Identifier' || depth > MAX_DEPTH - 2) return undefined;
  return ex.throughCall(call, (ret, inModule) => {
    const held = unwrap(ret);
    if (held.type !== 'ObjectExpression' && held.type !== 'ArrayExpression') return undefined;
    let o: Origin | undefined = { holder: held, ex: inModule };
    for (const key of path) o = o && 'holder' in o ? memberOrigin(o.ex, o.holder, key, depth + 1) : undefined;
    return o;
  });
}

/** What a module-level name of `ex`'s module is. */
function bindingOrigin(ex: Extractor, local: string, depth: number): Origin | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const b = ex.module.names.get(local);
  if (!b) return undefined;
  if ('init' in b) return ex.module.mutated.has(local) && !isCall(unwrap(b.init)) ? undefined : originOf(ex, b.init, depth + 1);
  if (b.typeNode) return typeOrigin(ex, b.typeNode, depth + 1);
  const cls = ex.module.classes.get(local);
  if (cls) return classOrigin(ex, cls.node, depth + 1);
  const other = ex.imported(local);
  return other ? bindingOrigin(other.ex, other.local, depth + 1) : undefined;
}

/**
 * A class of the application as a value's origin: the library whose class it extends, directly or
 * through classes of the workspace (`class PrismaService extends PrismaClient`), else the class itself,
 * whose members are followed.
 */
function classOrigin(ex: Extractor, cls: BNode, depth: number): Origin {
  let i = 0;
  for (const at of ex.lineage(cls)) {
    if (depth + i++ > MAX_DEPTH) break;
    const sup: BNode | undefined = (at.node as unknown as { superClass?: BNode }).superClass;
    if (!sup) break;
    const made = makerOf(at.ex, unwrap(sup));
    if (made) return { library: made };
    const repository = typeormRepositoryClass(at.ex, at.node, unwrap(sup));
    if (repository) return repository;
  }
  return { holder: cls, ex };
}

/**
 * `class UserRepository extends Repository<User>` (a custom repository, also with `@EntityRepository(User)`):
 * a TypeORM repository of the entity its type argument or decorator names.
 */
function typeormRepositoryClass(ex: Extractor, cls: BNode, sup: BNode): Origin | undefined {
  if (sup.type !== 'Identifier') return undefined;
  const r = ex.lookup(sup.name!);
  const b = r?.binding;
  if (!b || !('from' in b) || b.from !== 'typeorm' || LIBRARY_TYPES.typeorm![b.imported ?? sup.name!] !== 'typeorm-repository') return undefined;
  const typeArg = (cls as unknown as { superTypeParameters?: { params?: BNode[] } }).superTypeParameters?.params?.[0];
  const decorated = ((cls as unknown as { decorators?: { expression: BNode }[] }).decorators ?? []).map((d) => unwrap(d.expression)).find((d) => isCall(d) && unwrap(d.callee!).type === 'Identifier' && unwrap(d.callee!).name === 'EntityRepository');
  const entity = (typeArg ? typeEntity(typeArg) : undefined) ?? (decorated?.arguments?.[0] ? entityNamed(decorated.arguments[0]) : undefined);
  return { library: 'typeorm-repository', ...(entity ? { entity } : {}) };
}

/** `this` in a custom repository (`class UserRepository extends Repository<User>`), written in this module. */
export function thisRepository(ex: Extractor): Origin | undefined {
  const cls = ex.enclosingClassNode();
  const sup = cls ? (cls as unknown as { superClass?: BNode }).superClass : undefined;
  return cls && sup ? typeormRepositoryClass(ex, cls, unwrap(sup)) : undefined;
}

/**
 * An active record: the class `name` stands for (declared here or imported from a module of the workspace,
 * through re-exports) when it extends TypeORM's `BaseEntity`, directly or through the application's own
 * classes in any of the workspace's modules (`class Ban extends BaseClass`, `class BaseClass extends
 * BaseEntity` in another file). With the extractor of its module, where its `@Entity` says its table.
 */
export function activeRecordClass(ex: Extractor, name: string): { ex: Extractor; node: BNode; local: string } | undefined {
  const cls = ex.classNamed(name);
  if (!cls) return undefined;
  for (const at of cls.ex.lineage(cls.node)) {
    const sup: BNode | undefined = (at.node as unknown as { superClass?: BNode }).superClass;
    if (!sup) return undefined;
    if (typeormExport(at.ex, unwrap(sup)) === 'BaseEntity') {
      const local = (cls.node as unknown as { id?: BNode }).id?.name ?? name;
      return { ...cls, local };
    }
  }
  return undefined;
}

/** The name TypeORM exports that an expression stands for (`BaseEntity`, `typeorm.BaseEntity`), when it is one of TypeORM's. */
function typeormExport(ex: Extractor, e: BNode): string | undefined {
  if (e.type === 'Identifier') {
    const r = ex.lookup(e.name!);
    const b = r?.binding;
    if (b && 'from' in b && b.from === 'typeorm') return b.imported === 'default' || b.imported === '*' ? undefined : b.imported ?? e.name;
    return ex.importedLibrary(e.name!)?.library === 'typeorm' ? ex.importedLibrary(e.name!)!.name : undefined;
  }
  if (isMember(e)) {
    const obj = unwrap(e.object!);
    return obj.type === 'Identifier' && ex.importSource(obj.name!) === 'typeorm' ? propertyName(e) : undefined;
  }
  return undefined;
}

/** The entity class a type names: `User` in `Repository<User>`. */
function typeEntity(t: BNode): string | undefined {
  const name = t.type === 'TSTypeReference' ? (t as unknown as { typeName: BNode }).typeName : undefined;
  return name?.type === 'Identifier' && /^[A-Z]/.test(name.name!) ? name.name : undefined;
}

/** The entity class an argument names: `getRepository(User)`. */
function entityNamed(a: BNode): string | undefined {
  const e = unwrap(a);
  return e.type === 'Identifier' && /^[A-Z]/.test(e.name!) ? e.name : undefined;
}

/**
 * TypeORM calls that give a repository or a manager: `getRepository(User)` of 0.2 and
 * `dataSource.getRepository(User)` / `manager.getRepository(User)` on what is a manager,
 * `manager.withRepository(repo)`, `dataSource.createQueryRunner()`.
 */
function typeormCallOrigin(ex: Extractor, e: BNode, callee: BNode, depth: number): Origin | undefined {
  const args = e.arguments ?? [];
  if (callee.type === 'Identifier') {
    if (!TYPEORM_REPOSITORY_CALLS.has(callee.name!) || ex.importSource(callee.name!) !== 'typeorm') return undefined;
    const entity = args[0] ? entityNamed(args[0]) : undefined;
    return { library: 'typeorm-repository', ...(entity ? { entity } : {}) };
  }
  if (!isMember(callee)) return undefined;
  const name = propertyName(callee);
  if (name === undefined || !(TYPEORM_REPOSITORY_CALLS.has(name) || TYPEORM_MANAGER_CALLS.has(name) || name === 'withRepository')) return undefined;
  const on = originOf(ex, unwrap(callee.object!), depth + 1);
  if (!on || !('library' in on) || (on.library !== 'typeorm-manager' && on.library !== 'typeorm-repository')) return undefined;
  if (TYPEORM_MANAGER_CALLS.has(name)) return { library: 'typeorm-manager' };
  if (name === 'withRepository') return args[0] ? originOf(ex, args[0], depth + 1) : undefined;
  const entity = args.length === 1 ? entityNamed(args[0]!) : undefined;
  return { library: 'typeorm-repository', ...(entity ? { entity } : {}) };
}

/** Dependency-injection containers whose `Container.get(Class)` gives an instance of the class (typedi, and n8n's fork of it). */
const CONTAINERS = new Set(['typedi', '@n8n/di']);

/** `Container.get(UserRepository)`: an instance of the class the container is asked for. */
function containerInstance(ex: Extractor, e: BNode, callee: BNode, depth: number): Origin | undefined {
  if (!isMember(callee) || propertyName(callee) !== 'get') return undefined;
  const obj = unwrap(callee.object!);
  const arg = e.arguments?.[0] ? unwrap(e.arguments[0]) : undefined;
  if (obj.type !== 'Identifier' || arg?.type !== 'Identifier' || !CONTAINERS.has(ex.importSource(obj.name!) ?? '')) return undefined;
  const cls = ex.classNamed(arg.name!);
  return cls ? classOrigin(cls.ex, cls.node, depth + 1) : undefined;
}

/**
 * What a method of the application returns: `this.getUserRepo()` or `service.repo()`, by the return type
 * it declares (`Promise<Repository<User>>`).
 */
export function declaredReturnOrigin(ex: Extractor, callee: BNode, depth = 0): Origin | undefined {
  const name = propertyName(callee);
  if (name === undefined) return undefined;
  const target = functionOf(ex, callee, depth + 1);
  const declared = target ? (target.fn as unknown as { returnType?: { typeAnnotation?: BNode } }).returnType?.typeAnnotation : undefined;
  return target && declared ? typeOrigin(target.ex, declared, depth + 1) : undefined;
}

function callOrigin(ex: Extractor, e: BNode, depth: number): Origin | undefined {
  const callee = unwrap(e.callee!);
  // knex(config), new Pool(), postgres(url), new pg.Pool()
  const made = makerOf(ex, callee);
  if (made) return { library: made };
  if (e.type !== 'NewExpression') {
    const typeorm = typeormCallOrigin(ex, e, callee, depth);
    if (typeorm) return typeorm;
    const injected = containerInstance(ex, e, callee, depth);
    if (injected) return injected;
    // `this.getUserRepo()`: a method of the class the walk is in. A method of another value is asked for
    // by a reader that needs it (declaredReturnOrigin): following every receiver's class costs too much.
    if (isMember(callee)) {
      const obj = unwrap(callee.object!);
      // `storage.open(url)`: what a function of a module imported as a namespace returns.
      if (obj.type === 'Identifier' && ex.isNamespaceImport(obj.name!) && depth < MAX_DEPTH) {
        const target = functionOf(ex, callee, depth + 1);
        return target ? ex.throughFunction(e, target, (ret, inModule) => originOf(inModule, ret, depth + 1)) : undefined;
      }
      return (obj.type === 'ThisExpression' || obj.type === 'Super') && depth < MAX_DEPTH ? declaredReturnOrigin(ex, callee, depth + 1) : undefined;
    }
  }
  if (e.type === 'NewExpression') {
    if (callee.type !== 'Identifier') return undefined;
    const cls = ex.classNamed(callee.name!);
    if (cls) return classOrigin(cls.ex, cls.node, depth + 1);
    return undefined;
  }
  if (callee.type === 'Identifier') {
    const declared = ex.declaredReturn(callee.name!);
    if (declared) {
      const t = typeOrigin(declared.ex, declared.type, depth + 1);
      if (t) return t;
    }
    return ex.throughCall(e, (ret, inModule) => originOf(inModule, ret, depth + 1));
  }
  return undefined;
}

function makerOf(ex: Extractor, callee: BNode): Library | undefined {
  if (callee.type === 'Identifier') {
    const r = ex.lookup(callee.name!);
    if (!r || !('from' in r.binding) || r.binding.from === undefined) {
      const from = ex.importSource(callee.name!);
      return from !== undefined ? LIBRARY_MAKERS[libraryModule(from)]?.default : undefined;
    }
    return LIBRARY_MAKERS[libraryModule(r.binding.from)]?.[r.binding.imported ?? 'default'];
  }
  if (isMember(callee)) {
    const obj = unwrap(callee.object!);
    const from = obj.type === 'Identifier' ? ex.importSource(obj.name!) : undefined;
    const name = propertyName(callee);
    return from !== undefined && name !== undefined ? LIBRARY_MAKERS[libraryModule(from)]?.[name] : undefined;
  }
  return undefined;
}

/**
 * The library a module specifier stands for: itself, or `@prisma/client` for a Prisma client generated
 * elsewhere (`output` in schema.prisma: `../generated/prisma`, `@app/prisma/client`), which exports the
 * same `PrismaClient` and `Prisma` types.
 */
function libraryModule(from: string): string {
  return from !== '@prisma/client' && /(^|[/.@-])prisma([/-]client)?$|generated\/prisma(\/client)?$/i.test(from) ? '@prisma/client' : from;
}

/** What a type names: a library's query object, or a class or interface of the application. */
export function typeOrigin(ex: Extractor, t: BNode, depth: number): Origin | undefined {
  if (depth > MAX_DEPTH) return undefined;
  // `Repository<User> & UserRepositoryExtras`: what a member of the union or intersection is.
  if (t.type === 'TSUnionType' || t.type === 'TSIntersectionType') {
    for (const member of (t as unknown as { types: BNode[] }).types) {
      const o = typeOrigin(ex, member, depth + 1);
      if (o) return o;
    }
    return undefined;
  }
  if (t.type === 'TSTypeLiteral' || t.type === 'TSInterfaceBody') return { holder: t, ex };
  // `type Store = typeof store`: what the value is.
  if (t.type === 'TSTypeQuery') {
    const of = (t as unknown as { exprName?: BNode }).exprName;
    return of?.type === 'Identifier' ? originOf(ex, of, depth + 1) : undefined;
  }
  // `import('mongodb').Collection<T>`: a library's type named where it is used, without an import statement.
  if (t.type === 'TSImportType') {
    const it = t as unknown as { argument?: BNode & { literal?: BNode }; qualifier?: BNode; typeParameters?: { params?: BNode[] } };
    const source = it.argument?.type === 'TSLiteralType' ? it.argument.literal : it.argument;
    const lib = source?.type === 'StringLiteral' ? LIBRARY_TYPES[libraryModule(source.value as string)] : undefined;
    const q = it.qualifier;
    const last = q?.type === 'Identifier' ? q.name : q?.type === 'TSQualifiedName' ? (q as unknown as { right: BNode }).right.name : undefined;
    return lib && last !== undefined ? libraryType(lib, last, it.typeParameters?.params?.[0]) : undefined;
  }
  if (t.type !== 'TSTypeReference') return undefined;
  const typeName = (t as unknown as { typeName: BNode }).typeName;
  const params = (t as unknown as { typeParameters?: { params?: BNode[] } }).typeParameters?.params ?? [];
  let root = typeName;
  let last: string | undefined;
  if (typeName.type === 'TSQualifiedName') {
    last = (typeName as unknown as { right: BNode }).right.name;
    root = (typeName as unknown as { left: BNode }).left;
    while (root.type === 'TSQualifiedName') root = (root as unknown as { left: BNode }).left;
  }
  if (root.type !== 'Identifier') return undefined;
  const name = root.name!;
  if (last === undefined && SAME_MEMBERS.has(name) && params[0]) return typeOrigin(ex, params[0], depth + 1);
  const r = ex.lookup(name);
  if (r && 'from' in r.binding && r.binding.from !== undefined) {
    const lib = LIBRARY_TYPES[libraryModule(r.binding.from)];
    if (lib) return libraryType(lib, last ?? (r.binding.imported === 'default' || r.binding.imported === '*' ? name : r.binding.imported ?? name), params[0]);
    // A type of another module of the workspace: what that module declares (an alias, a class), or a
    // library's type it passes on (`export type { Knex } from 'knex'`, then `Knex.Transaction` here).
    const passed = ex.importedLibrary(name);
    if (passed) {
      const passedLib = LIBRARY_TYPES[passed.library];
      return passedLib ? libraryType(passedLib, last ?? passed.name) : undefined;
    }
    const other = ex.imported(name);
    if (other && last === undefined) return typeBindingOrigin(other.ex, other.local, depth + 1);
    return undefined;
  }
  if (last !== undefined) return undefined;
  return typeBindingOrigin(ex, name, depth + 1);
}

/** What the global object is called: `global.App`, `globalThis.App`. */
const GLOBAL_OBJECTS = new Set(['global', 'globalThis']);

/**
 * The type the workspace declares for a value read from a global (`global.App.models.orders`,
 * `App.models.orders`, `const { orders } = global.App.models`, where a module writes `declare global {
 * var App: AppGlobal }`): the last member's declared type, followed through the interfaces and type
 * literals of the module that declares the global and the modules it imports them from. Undefined when no
 * module or more than one declares the global, or a member's type is not written.
 */
export function globalMemberType(ex: Extractor, e: BNode): { ex: Extractor; type: BNode } | undefined {
  const chain = globalChain(ex, e, 0);
  if (!chain || chain.length === 0) return undefined;
  let at = declaredGlobal(ex, chain[0]!);
  for (const member of chain.slice(1)) at = at ? memberType(at.ex, at.type, member, 0) : undefined;
  return at;
}

/** The names from a global down to a value (`global.App.models` and `const { orders } = ...` give App, models, orders). */
function globalChain(ex: Extractor, e: BNode, depth: number): string[] | undefined {
  const parts: string[] = [];
  let cur = unwrap(e);
  for (let i = 0; i < 8 && isMember(cur) && !cur.computed; i++) {
    parts.unshift(propertyName(cur) ?? '');
    cur = unwrap(cur.object!);
  }
  if (cur.type !== 'Identifier' || depth > 3) return undefined;
  const r = ex.lookup(cur.name!);
  // A name no scope or module declares: a global (`global` itself, or `App` read bare).
  if (!r) return GLOBAL_OBJECTS.has(cur.name!) ? parts : [cur.name!, ...parts];
  const part = ex.partOf(cur.name!);
  const base = part?.of ? globalChain(ex, part.of, depth + 1) : 'init' in r.binding && !r.mutated ? globalChain(ex, r.binding.init, depth + 1) : undefined;
  return base ? [...base, ...(part?.path ?? []), ...parts] : undefined;
}

/** The type of the global `name` the one module of the workspace that declares it writes (`declare global { var name: T }`). */
function declaredGlobal(ex: Extractor, name: string): { ex: Extractor; type: BNode } | undefined {
  const { modules } = ex.context;
  if (!modules?.files || ex.isForeign) return undefined;
  let found: { ex: Extractor; type: BNode } | undefined;
  for (const f of filesDeclaringGlobal(modules, name)) {
    const m = foreignModule(modules, f);
    for (const st of (m?.program.body as BNode[] | undefined) ?? []) {
      if (st.type !== 'TSModuleDeclaration' || (st as unknown as { kind?: string }).kind !== 'global') continue;
      for (const d of ((st as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).filter((x) => x.type === 'VariableDeclaration')) {
        for (const v of d.declarations ?? []) {
          const t = v.id?.type === 'Identifier' && v.id.name === name ? typeAnnotationOf(v.id) : undefined;
          if (!t) continue;
          if (found) return undefined;
          found = { ex: ex.forModule(m!), type: t };
        }
      }
    }
  }
  return found;
}

/** The declared type of a member of a type: a property of an interface or a type literal, through aliases, imports and Omit-like wrappers. */
function memberType(ex: Extractor, t: BNode, name: string, depth: number): { ex: Extractor; type: BNode } | undefined {
  if (depth > MAX_DEPTH) return undefined;
  if (t.type === 'TSTypeReference') {
    const typeName = (t as unknown as { typeName: BNode }).typeName;
    const params = (t as unknown as { typeParameters?: { params?: BNode[] } }).typeParameters?.params ?? [];
    if (typeName.type !== 'Identifier') return undefined;
    if (SAME_MEMBERS.has(typeName.name!)) return params[0] ? memberType(ex, params[0], name, depth + 1) : undefined;
    const b = ex.module.names.get(typeName.name!);
    if (b && 'unknown' in b && b.typeNode) return memberType(ex, b.typeNode, name, depth + 1);
    const other = ex.imported(typeName.name!);
    const ob = other ? other.ex.module.names.get(other.local) : undefined;
    return other && ob && 'unknown' in ob && ob.typeNode ? memberType(other.ex, ob.typeNode, name, depth + 1) : undefined;
  }
  const members = t.type === 'TSInterfaceDeclaration' ? (t as unknown as { body: { body: BNode[] } }).body.body
    : t.type === 'TSTypeLiteral' ? (t as unknown as { members: BNode[] }).members : undefined;
  const m = members?.find((x) => x.type === 'TSPropertySignature' && x.key && !x.computed && (x.key.name ?? x.key.value) === name);
  const declared = m ? typeAnnotationOf(m) : undefined;
  return declared ? { ex, type: declared } : undefined;
}

/**
 * What a `typeof` type names: a class (`typeof import('./orders').default`, `typeof Orders`) or a module's
 * namespace (`typeof import('./orders')`, also inside Omit, Pick and the like): the class with the extractor
 * of its module, or the module's file; undefined for anything else.
 */
export function typeofTarget(ex: Extractor, t: BNode, depth = 0): { ex: Extractor; cls: BNode } | { namespace: string } | undefined {
  if (depth > 4) return undefined;
  if (t.type === 'TSTypeReference') {
    const typeName = (t as unknown as { typeName: BNode }).typeName;
    const params = (t as unknown as { typeParameters?: { params?: BNode[] } }).typeParameters?.params ?? [];
    return typeName.type === 'Identifier' && SAME_MEMBERS.has(typeName.name!) && params[0] ? typeofTarget(ex, params[0], depth + 1) : undefined;
  }
  if (t.type !== 'TSTypeQuery') return undefined;
  const of = (t as unknown as { exprName?: BNode }).exprName;
  if (of?.type === 'Identifier') {
    const cls = ex.classOf(of, 0);
    return cls ? { ex: cls.ex, cls: cls.node } : undefined;
  }
  if (of?.type !== 'TSImportType') return undefined;
  const it = of as unknown as { argument?: BNode & { literal?: BNode }; qualifier?: BNode | null };
  const source = it.argument?.type === 'TSLiteralType' ? it.argument.literal : it.argument;
  const { modules, file } = ex.context;
  const target = source?.type === 'StringLiteral' && modules && file !== undefined ? modules.resolve(file, source.value as string) : undefined;
  if (!target || !modules) return undefined;
  if (!it.qualifier) return { namespace: target };
  if (it.qualifier.type !== 'Identifier') return undefined;
  const found = exportedBinding(modules, target, it.qualifier.name!);
  if (!found || !('module' in found)) return undefined;
  const cls = ex.forModule(found.module).classNamed(found.local);
  return cls ? { ex: cls.ex, cls: cls.node } : undefined;
}

function libraryType(lib: Record<string, Library>, name: string, typeArg?: BNode): { library: Library; entity?: string } | undefined {
  const l = lib[name];
  if (!l) return undefined;
  const entity = l === 'typeorm-repository' && typeArg ? typeEntity(typeArg) : undefined;
  return entity ? { library: l, entity } : { library: l };
}

/** A type name declared in `ex`'s module: an alias, an interface, a class. */
function typeBindingOrigin(ex: Extractor, name: string, depth: number): Origin | undefined {
  const b = ex.module.names.get(name) ?? ex.lookup(name)?.binding;
  if (!b) return undefined;
  if ('unknown' in b && b.typeNode) {
    const tn = b.typeNode;
    if (tn.type === 'TSInterfaceDeclaration') return { holder: tn, ex };
    return typeOrigin(ex, tn, depth + 1);
  }
  const cls = ex.module.classes.get(name);
  if (cls) return classOrigin(ex, cls.node, depth + 1);
  if ('from' in b && b.from !== undefined) {
    const lib = LIBRARY_TYPES[libraryModule(b.from)];
    if (lib) return libraryType(lib, b.imported ?? name);
    const other = ex.imported(name);
    return other ? typeBindingOrigin(other.ex, other.local, depth + 1) : undefined;
  }
  return undefined;
}

/**
 * A member of a class, interface or object literal: a field's annotation or value, a constructor's
 * parameter property, an assignment `this.x = ...` in the constructor, a getter's declared return type or
 * the value its one `return` gives; then the class it extends.
 */
function memberOrigin(ex: Extractor, holder: BNode, name: string, depth: number): Origin | undefined {
  if (depth > MAX_DEPTH) return undefined;
  if (holder.type === 'ObjectExpression' || holder.type === 'ArrayExpression') {
    const v = heldAt(holder, name);
    return v ? originOf(ex, v, depth + 1) : undefined;
  }
  if (holder.type === 'TSInterfaceDeclaration' || holder.type === 'TSTypeLiteral' || holder.type === 'TSInterfaceBody') {
    const body = holder.type === 'TSInterfaceDeclaration' ? ((holder as unknown as { body: { body: BNode[] } }).body.body) : ((holder as unknown as { members?: BNode[]; body?: BNode[] }).members ?? (holder as unknown as { body?: BNode[] }).body ?? []);
    for (const m of body) {
      if (m.type === 'TSPropertySignature' && m.key && !m.computed && (m.key.name ?? m.key.value) === name) {
        const t = typeAnnotationOf(m);
        return t ? typeOrigin(ex, t, depth + 1) : undefined;
      }
    }
    return undefined;
  }
  const body = (holder as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
  for (const m of body) {
    const key = m.key && !m.computed ? m.key.name ?? (m.key as unknown as { id?: BNode }).id?.name : undefined;
    if ((m.type === 'ClassProperty' || m.type === 'ClassPrivateProperty' || m.type === 'ClassAccessorProperty') && key === name) {
      // An annotation that names nothing followed here (`ReturnType<typeof knex>`) leaves the value and the constructor to say.
      const t = typeAnnotationOf(m);
      const typed = t ? typeOrigin(ex, t, depth + 1) : undefined;
      if (typed) return typed;
      const v = (m as unknown as { value?: BNode }).value;
      if (v) return ex.inClass(holder, () => originOf(ex, v, depth + 1));
    }
    if (m.type === 'ClassMethod' && m.kind === 'constructor') {
      for (const p of m.params ?? []) {
        if (p.type !== 'TSParameterProperty') continue;
        const param = (p as unknown as { parameter: BNode }).parameter;
        const id = param.type === 'AssignmentPattern' ? param.left : param;
        if (id?.type === 'Identifier' && id.name === name) {
          const t = typeAnnotationOf(id);
          if (t) return typeOrigin(ex, t, depth + 1);
        }
      }
      const stmts = m.body && !Array.isArray(m.body) ? (m.body.body as BNode[] | undefined) ?? [] : [];
      for (const st of stmts) {
        const a = st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined;
        if (a?.type !== 'AssignmentExpression' || a.operator !== '=') continue;
        const left = unwrap(a.left!);
        if (isMember(left) && unwrap(left.object!).type === 'ThisExpression' && propertyName(left) === name) {
          return ex.inFunction(holder, m, () => originOf(ex, a.right!, depth + 1));
        }
      }
    }
    if (m.type === 'ClassMethod' && m.kind === 'get' && key === name) {
      const t = (m as unknown as { returnType?: { typeAnnotation?: BNode } }).returnType?.typeAnnotation;
      if (t) return typeOrigin(ex, t, depth + 1);
      // `get connection() { return this._connection; }`: what its one statement returns, `this` its class.
      const stmts = m.body && !Array.isArray(m.body) ? (m.body.body as BNode[] | undefined) ?? [] : [];
      const returned = stmts.length === 1 && stmts[0]!.type === 'ReturnStatement' ? stmts[0]!.argument : undefined;
      if (returned) return ex.inClass(holder, () => originOf(ex, returned, depth + 1));
    }
  }
  const sup = (holder as unknown as { superClass?: BNode }).superClass;
  if (sup && unwrap(sup).type === 'Identifier') {
    const cls = ex.classNamed(unwrap(sup).name!);
    if (cls) return memberOrigin(cls.ex, cls.node, name, depth + 1);
  }
  return undefined;
}

/** The class a name is bound to: declared in the scopes around, or imported from the workspace's module that declares it. */
function classBehind(ex: Extractor, name: string): { ex: Extractor; node: BNode } | undefined {
  const r = ex.lookup(name);
  if (r && 'cls' in r.binding && r.binding.cls) return { ex, node: r.binding.cls };
  return r && !('from' in r.binding && r.binding.from !== undefined) ? undefined : ex.classNamed(name);
}

export function functionOf(ex: Extractor, callee: BNode, depth = 0): { ex: Extractor; fn: BNode; cls?: BNode } | undefined {
  callee = unwrap(callee);
  if (callee.type === 'Identifier') {
    const r = ex.lookup(callee.name!);
    const local = r && 'fn' in r.binding ? r.binding.fn : r && 'init' in r.binding && !r.mutated ? unwrap(r.binding.init) : undefined;
    if (local) return isFunction(local) ? { ex, fn: local } : undefined;
    const other = ex.imported(callee.name!);
    const b = other ? other.ex.module.names.get(other.local) : undefined;
    const fn = b ? ('fn' in b ? b.fn : 'init' in b ? unwrap(b.init) : undefined) : undefined;
    return other && fn && isFunction(fn) ? { ex: other.ex, fn } : undefined;
  }
  if (!isMember(callee)) return undefined;
  const name = propertyName(callee);
  if (name === undefined) return undefined;
  const obj = unwrap(callee.object!);
  if (obj.type === 'ThisExpression' || obj.type === 'Super') {
    const m = ex.methodOf(name);
    return m ? { ex: m.ex, fn: m.fn } : undefined;
  }
  // `storage.open(url)` where `import * as storage from './storage'`: the function that module exports.
  const member = obj.type === 'Identifier' && ex.isNamespaceImport(obj.name!) ? ex.importedMember(obj.name!, name) : undefined;
  if (member) {
    const b = member.ex.module.names.get(member.local);
    const fn = b ? ('fn' in b ? b.fn : 'init' in b ? unwrap(b.init) : undefined) : undefined;
    return fn && isFunction(fn) ? { ex: member.ex, fn } : undefined;
  }
  // `Worker.open(db)`: a static method of a class declared here or imported from the workspace.
  const statics = obj.type === 'Identifier' ? classBehind(ex, obj.name!) : undefined;
  // `(store as ShardStore).items(1)`: the value as the code asserts it.
  const holder = statics ? { holder: statics.node, ex: statics.ex } : originOf(ex, callee.object!, depth);
  if (!holder || !('holder' in holder)) return undefined;
  // `mongo.tenants()` where `mongo: MongoContext`, an interface: the method of the one class of the
  // workspace that implements it.
  const start = holder.holder.type === 'TSInterfaceDeclaration' ? implementationOf(holder.ex, holder.holder, name) : { ex: holder.ex, node: holder.holder };
  if (!start) return undefined;
  for (const at of start.ex.lineage(start.node)) {
    for (const m of (at.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
      const key = m.key && !m.computed ? m.key.name : undefined;
      if (statics && !(m as unknown as { static?: boolean }).static) continue;
      if (m.type === 'ClassMethod' && m.kind === 'method' && key === name) return { ex: at.ex, fn: m, cls: at.node };
      if (m.type === 'ClassProperty' && key === name && (m as unknown as { value?: BNode }).value && isFunction(unwrap((m as unknown as { value: BNode }).value))) {
        return { ex: at.ex, fn: unwrap((m as unknown as { value: BNode }).value) };
      }
    }
    if (at.node.type === 'ObjectExpression') {
      const p = (at.node.properties ?? []).find((x) => (x.type === 'ObjectMethod' || x.type === 'ObjectProperty') && !x.computed && x.key && (x.key.name ?? x.key.value) === name);
      if (p?.type === 'ObjectMethod') return { ex: at.ex, fn: p };
      const v = p?.type === 'ObjectProperty' ? unwrap(p.value as BNode) : undefined;
      return v && isFunction(v) ? { ex: at.ex, fn: v } : undefined;
    }
  }
  return undefined;
}

/** Files whose text is read, at most, for a class that implements an interface; of those, files parsed. */
const MAX_IMPLEMENTER_TEXTS = 400;
const MAX_IMPLEMENTER_FILES = 8;

/** What was found of each interface's implementing classes, per method name. */
const implementations = new WeakMap<BNode, Map<string, { ex: Extractor; node: BNode } | undefined>>();

/**
 * The class that implements an interface (`class MongoContextImpl implements MongoContext`) and declares the
 * method `method`: in the interface's own module, else in the workspace's files that import the interface's
 * name; undefined when none does, or more than one.
 */
export function implementationOf(ex: Extractor, iface: BNode, method: string): { ex: Extractor; node: BNode } | undefined {
  let memo = implementations.get(iface);
  if (!memo) implementations.set(iface, (memo = new Map()));
  if (memo.has(method)) return memo.get(method);
  const found = findImplementation(ex, iface, method);
  memo.set(method, found);
  return found;
}

function findImplementation(ex: Extractor, iface: BNode, method: string): { ex: Extractor; node: BNode } | undefined {
  const name = (iface as unknown as { id?: BNode }).id?.name;
  if (name === undefined) return undefined;
  const own = implementing(ex, name, method);
  if (own.length > 0) return own.length === 1 ? own[0] : undefined;
  const mentions = new RegExp(`\\bimplements\\b[^{]*\\b${name.replace(/\$/g, '\\$')}\\b`);
  const readers = importersMentioning(ex, ex, name, mentions, MAX_IMPLEMENTER_FILES, MAX_IMPLEMENTER_TEXTS);
  if (!readers) return undefined;
  const out: { ex: Extractor; node: BNode }[] = [];
  for (const reader of readers) {
    // The name it implements must be this interface, imported from where the interface is declared.
    const target = reader.imported(name);
    if (!target || target.ex.context.file !== ex.context.file) continue;
    out.push(...implementing(reader, name, method));
  }
  return out.length === 1 ? out[0] : undefined;
}

/** The module-level classes of `ex`'s module that say they implement `name` and declare the method `method`. */
function implementing(ex: Extractor, name: string, method: string): { ex: Extractor; node: BNode }[] {
  const out: { ex: Extractor; node: BNode }[] = [];
  for (const [, c] of ex.module.classes) {
    const list = (c.node as unknown as { implements?: BNode[] }).implements ?? [];
    const says = list.some((i) => {
      const t = (i as unknown as { expression?: BNode; typeName?: BNode }).expression ?? (i as unknown as { typeName?: BNode }).typeName;
      return t?.type === 'Identifier' && t.name === name;
    });
    if (!says) continue;
    const body = (c.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
    if (body.some((m) => m.type === 'ClassMethod' && m.kind === 'method' && !m.computed && m.key?.name === method)) out.push({ ex, node: c.node });
  }
  return out;
}

/** Files whose text is read, at most, for the classes that extend a class; of those, files parsed. */
const MAX_SUBCLASS_FILES = 8;

/** What was found of each class's subclasses that declare a method, per method name. */
const overrides = new WeakMap<BNode, Map<string, { ex: Extractor; node: BNode; fn: BNode }[] | undefined>>();

/**
 * The workspace's files other than `ex`'s that import `name` and whose text `mentions` matches, each read
 * as a module from `reader` (as few imports deep as it is); undefined past `maxFiles` such files, or past
 * `maxTexts` texts read to find them.
 */
function importersMentioning(ex: Extractor, reader: Extractor, name: string, mentions: RegExp, maxFiles: number, maxTexts = Infinity): Extractor[] | undefined {
  const { modules, file } = ex.context;
  if (!modules?.files) return [];
  const out: Extractor[] = [];
  let texts = 0;
  let parsed = 0;
  for (const f of filesImporting(modules, name)) {
    if (f === file) continue;
    if (++texts > maxTexts) return undefined;
    const text = modules.read(f);
    if (text === undefined || !mentions.test(text)) continue;
    if (++parsed > maxFiles) return undefined;
    const m = foreignModule(modules, f);
    if (m) out.push(reader.forModule(m));
  }
  return out;
}

/**
 * The classes that extend `cls` (declared in `ex`'s module) directly and declare the method `method`: in
 * its own module, and in the workspace's files that import its name, read from `from` (the file being read,
 * so they are as few imports deep as can be); undefined past the caps.
 */
export function overridesOf(ex: Extractor, cls: BNode, method: string, from: Extractor): { ex: Extractor; node: BNode; fn: BNode }[] | undefined {
  let memo = overrides.get(cls);
  if (!memo) overrides.set(cls, (memo = new Map()));
  if (memo.has(method)) return memo.get(method);
  const found = findOverrides(ex, cls, method, from);
  memo.set(method, found);
  return found;
}

function findOverrides(ex: Extractor, cls: BNode, method: string, from: Extractor): { ex: Extractor; node: BNode; fn: BNode }[] | undefined {
  const name = (cls as unknown as { id?: BNode }).id?.name;
  if (name === undefined) return undefined;
  const declaring = (reader: Extractor, extendsName: (sup: BNode) => boolean): { ex: Extractor; node: BNode; fn: BNode }[] => {
    const out: { ex: Extractor; node: BNode; fn: BNode }[] = [];
    for (const [, c] of reader.module.classes) {
      const sup = (c.node as unknown as { superClass?: BNode }).superClass;
      if (!sup || unwrap(sup).type !== 'Identifier' || !extendsName(unwrap(sup))) continue;
      const fn = ((c.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).find((m) => m.type === 'ClassMethod' && m.kind === 'method' && !m.computed && m.key?.name === method);
      if (fn) out.push({ ex: reader, node: c.node, fn });
    }
    return out;
  };
  const out = declaring(ex, (sup) => sup.name === name);
  const readers = importersMentioning(ex, from, name, new RegExp(`\\bextends\\s+${name.replace(/\$/g, '\\$')}\\b`), MAX_SUBCLASS_FILES);
  if (!readers) return undefined;
  // The name it extends must be this class, imported from where the class is declared.
  for (const reader of readers) out.push(...declaring(reader, (sup) => reader.imported(sup.name!)?.ex.context.file === ex.context.file));
  // In the order of their files' paths, so a hover names them the same way however the workspace is listed.
  return out.sort((a, b) => (a.ex.context.file ?? '').localeCompare(b.ex.context.file ?? '') || a.node.start - b.node.start);
}

/**
 * What a method of an interface of the application, or an abstract method of its class, declares it returns
 * (`tenants(): Collection<Tenant>`), when `callee` is a method of a value typed by it: its origin, or undefined.
 */
export function signatureReturnOrigin(ex: Extractor, callee: BNode): Origin | undefined {
  callee = unwrap(callee);
  const name = isMember(callee) ? propertyName(callee) : undefined;
  if (name === undefined || unwrap(callee.object!).type === 'ThisExpression') return undefined;
  const holder = originOf(ex, unwrap(callee.object!), 0);
  if (!holder || !('holder' in holder)) return undefined;
  // `abstract tables(id: number): Collection<Table>` of a class or one it extends: what each subclass's
  // implementation returns is chosen by the instance, so the declared type is what is known.
  if (holder.holder.type === 'ClassDeclaration' || holder.holder.type === 'ClassExpression') {
    for (const at of holder.ex.lineage(holder.holder)) {
      for (const m of (at.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
        if (m.type !== 'TSDeclareMethod' || m.computed || m.key?.name !== name) continue;
        const declared = (m as unknown as { returnType?: { typeAnnotation?: BNode } }).returnType?.typeAnnotation;
        return declared ? typeOrigin(at.ex, declared, 1) : undefined;
      }
    }
    return undefined;
  }
  if (holder.holder.type !== 'TSInterfaceDeclaration') return undefined;
  for (const m of (holder.holder as unknown as { body: { body: BNode[] } }).body.body) {
    if (m.type !== 'TSMethodSignature' || m.computed || m.key?.name !== name) continue;
    const t = (m as unknown as { typeAnnotation?: { typeAnnotation?: BNode }; returnType?: { typeAnnotation?: BNode } });
    const declared = (t.returnType ?? t.typeAnnotation)?.typeAnnotation;
    return declared ? typeOrigin(holder.ex, declared, 1) : undefined;
  }
  return undefined;
}

function isFunction(n: BNode): boolean {
  return n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression' || n.type === 'ClassMethod' || n.type === 'ObjectMethod';
}

/** Methods that run their first argument as SQL: node-postgres and the ORMs' `query`, postgres.js `unsafe`, Knex `raw`. */
const RUNS_SQL = new Set(['query', 'unsafe', 'raw', 'execute', 'many', 'any', 'one', 'oneOrNone', 'manyOrNone', 'none']);

/**
 * Which parameter of a function it runs as SQL, if its body hands one, unchanged, to a method that runs
 * SQL (`getRows(sql, params) { return this.client.query(sql, params) }`): the application's own wrapper.
 */
export function sqlParameterOf(fn: BNode): number | undefined {
  const params = (fn.params ?? []).map((p) => {
    const id = p.type === 'AssignmentPattern' ? p.left : p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : p;
    return id?.type === 'Identifier' ? id.name : undefined;
  });
  if (params.every((p) => p === undefined) || !fn.body) return undefined;
  const stack: BNode[] = [fn.body as unknown as BNode];
  let seen = 0;
  while (stack.length > 0 && seen++ < 5_000) {
    const n = stack.pop()!;
    if (isCall(n) && isMember(unwrap(n.callee!)) && RUNS_SQL.has(propertyName(unwrap(n.callee!)) ?? '')) {
      const a = n.arguments?.[0] ? unwrap(n.arguments[0]) : undefined;
      const i = a?.type === 'Identifier' ? params.indexOf(a.name) : -1;
      if (i >= 0) return i;
    }
    pushChildren(n, stack);
  }
  return undefined;
}
