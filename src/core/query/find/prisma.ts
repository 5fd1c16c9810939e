// Prisma Client: `prisma.order.findMany({ where, orderBy, take, skip, select })`, `findFirst`,
// `findUnique`, `count`, `updateMany`, `deleteMany`, `update`, `delete`, `aggregate`, `groupBy`, read as
// the SQL Prisma sends: table and columns as the workspace's schema.prisma maps them (`@@map`, `@map`)
// when it is known, else the model's and the fields' names; and raw SQL: `$queryRaw`...``, `$executeRaw`...``, `$queryRawUnsafe('...')`.

import type { CallReader, ChainCall, Extractor } from './extractor';
import { sqlFromLiteral } from './sqlStrings';
import { members, SqlWriter, type SelectParts } from './sqlBuild';
import { quoteIdent } from '../../postgres/names';
import { libraryOf } from './origin';
import { isCall, isMember, propertyName, range, unwrap, type BNode } from './syntax';
import type { PrismaModelNames } from './types';

const READS: Record<string, SelectParts['kind']> = {
  findMany: 'select', findFirst: 'select', findFirstOrThrow: 'select', findUnique: 'select', findUniqueOrThrow: 'select',
  count: 'count', aggregate: 'select', groupBy: 'select', updateMany: 'update', update: 'update', deleteMany: 'delete', delete: 'delete',
  upsert: 'select', updateManyAndReturn: 'update',
};
/** Methods no other library has on `x.model`: these alone say it is Prisma. */
const PRISMA_ONLY = new Set(['findMany', 'findFirst', 'findFirstOrThrow', 'findUnique', 'findUniqueOrThrow', 'upsert', 'groupBy', 'createMany', 'updateManyAndReturn']);
const RAW = new Set(['$queryRaw', '$executeRaw', '$queryRawUnsafe', '$executeRawUnsafe']);

const OPERATORS: Record<string, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=', equals: '=', not: '<>' };

export const prismaCalls: CallReader = {
  read(n, ex) {
    if (n.type === 'TaggedTemplateExpression') {
      const tag = unwrap(n.tag!);
      if (!isMember(tag) || !RAW.has(propertyName(tag) ?? '')) return false;
      const found = sqlFromLiteral(ex, n.quasi!, 'tagged-template', range(n));
      if (found) ex.push(found);
      return true;
    }
    if (!isCall(n)) return false;
    const callee = unwrap(n.callee!);
    if (!isMember(callee)) return false;
    const name = propertyName(callee);
    if (name === '$queryRawUnsafe' || name === '$executeRawUnsafe') {
      const lit = n.arguments?.[0] ? ex.resolve(n.arguments[0]) : undefined;
      const found = lit ? sqlFromLiteral(ex, lit, lit.type === 'TemplateLiteral' ? 'template' : 'string', range(n)) : undefined;
      if (found) ex.push(found);
      return found !== undefined;
    }
    const chain = ex.flatten(n);
    const op = chain.find((c) => READS[c.name] !== undefined);
    if (!op) return false;
    const accessor = modelAccessor(ex, unwrap(unwrap(op.call.callee!).object!), op);
    if (!accessor) return false;
    for (const c of chain) ex.consume(c.call);
    ex.push(readPrisma(ex, modelNames(ex, accessor), op));
    return true;
  },
};

/**
 * `prisma.orderItem` gives the accessor `orderItem` when the receiver is a Prisma client: named for
 * Prisma, named like a client in a file that imports Prisma, or imported under any name from the
 * application's own module (`import { p } from 'src/prismaClient'`) when that module's name says Prisma
 * or the method is one only Prisma has. The module that makes the client (`new PrismaClient()`) is another
 * file, which a reader of one file does not see: the names are the evidence there is.
 */
function modelAccessor(ex: Extractor, e: BNode, op: ChainCall): string | undefined {
  if (!isMember(e)) return undefined;
  const accessor = propertyName(e);
  if (accessor === undefined || accessor.startsWith('$') || !/^[a-z]/.test(accessor)) return undefined;
  const object = unwrap(e.object!);
  // What the receiver is, where the code says it: a PrismaClient, or the application's class that extends
  // one (`this.prisma` typed `PrismaService`, `this.repo.model` typed `Pick<PrismaService, 'post'>`).
  const lib = libraryOf(ex, object);
  if (lib === 'prisma') return accessor;
  if (lib !== undefined) return undefined;
  const client = ex.lastName(object);
  const named = client !== undefined && /prisma/i.test(client);
  const imported = ex.imports('@prisma/client') || [...ex.modules()].some((m) => /prisma/i.test(m));
  const clientLike = client !== undefined && CLIENT_LIKE.test(client);
  if (named || (imported && clientLike) || (clientLike && PRISMA_ONLY.has(op.name)) || fromOwnModule(ex, object, op)) return accessor;
  // `ctx.db.post.count()` where the file also calls `ctx.db.post.findMany(...)`: the client is Prisma's.
  if (clientLike && !ex.imports('drizzle-orm') && ex.fileShows(PRISMA_CLIENT)) return accessor;
  return undefined;
}

const CLIENT_LIKE = /^(tx|trx|db|client|ctx|prisma\w*|\w*Prisma\w*|database)$/;

export const PRISMA_CLIENT = 'a client calling a method only Prisma has';

/** True when a node is a call of a method only Prisma has on a model of a client (`ctx.db.post.findMany(...)`). */
export function showsPrismaClient(n: BNode): boolean {
  if (!isCall(n)) return false;
  const callee = unwrap(n.callee!);
  if (!isMember(callee) || !PRISMA_ONLY.has(propertyName(callee) ?? '')) return false;
  const model = unwrap(callee.object!);
  if (!isMember(model) || !/^[a-z]/.test(propertyName(model) ?? '')) return false;
  const client = unwrap(model.object!);
  const name = client.type === 'Identifier' ? client.name : isMember(client) ? propertyName(client) : undefined;
  return name !== undefined && CLIENT_LIKE.test(name);
}

/** A client imported from the application's own module: one named for Prisma, or any with a method only Prisma has. */
function fromOwnModule(ex: Extractor, object: BNode, op: ChainCall): boolean {
  const from = object.type === 'Identifier' ? ex.importSource(object.name!) : undefined;
  if (from === undefined) return false;
  if (/prisma/i.test(from)) return true;
  // Drizzle's relational queries have findMany and findFirst too.
  return /^(\.|@\/|~\/|#|\$lib\/|src\/)/.test(from) && PRISMA_ONLY.has(op.name) && !ex.imports('drizzle-orm');
}

/**
 * The model an accessor names (Prisma Client's accessor is the model's name with its first letter in
 * lower case) with its table and columns from the workspace's schema; without the schema, the model
 * named as the accessor with a capital, unmapped.
 */
function modelNames(ex: Extractor, accessor: string): PrismaModelNames {
  for (const [model, names] of ex.prismaModels ?? []) {
    if (model.charAt(0).toLowerCase() + model.slice(1) === accessor) return names;
  }
  return { table: accessor.charAt(0).toUpperCase() + accessor.slice(1), columns: {} };
}

function readPrisma(ex: Extractor, model: PrismaModelNames, op: ChainCall) {
  const w = new SqlWriter(ex);
  const col = (field: string) => quoteIdent(model.columns[field] ?? field);
  const args = members(ex, op.call.arguments?.[0]);
  if (op.call.arguments?.[0] && !args) w.warnings.push(`The arguments ${ex.text(range(unwrap(op.call.arguments[0]))).slice(0, 40)} are not written out here, so the filter and order are not known.`);
  const parts: SelectParts = { table: model.table, where: [], orderBy: [], kind: READS[op.name]! };
  const where = args?.get('where');
  if (where) whereOf(w, col, where, parts.where, 0);
  const orderBy = args?.get('orderBy');
  if (orderBy) orderOf(w, col, orderBy, parts.orderBy);
  const take = args?.get('take');
  if (take) parts.limit = w.value(take).replace(/^-/, '');
  else if (op.name.startsWith('findFirst') || op.name.startsWith('findUnique')) parts.limit = '1';
  const skip = args?.get('skip');
  if (skip) parts.offset = w.value(skip);
  const select = members(ex, args?.get('select'));
  if (select && parts.kind === 'select') parts.columns = [...select.entries()].filter(([, v]) => ex.resolve(v).type === 'BooleanLiteral' && ex.resolve(v).value === true).map(([k]) => col(k));
  if (parts.kind === 'update') {
    const data = members(ex, args?.get('data'));
    parts.set = data ? [...data.entries()].map(([k, v]) => `${col(k)} = ${w.value(v)}`) : [];
  }
  return w.build(parts, op.call);
}

/** Prisma's where: fields with values or operators, AND/OR/NOT. Relation filters are noted, not guessed. */
function whereOf(w: SqlWriter, column: (field: string) => string, node: BNode, out: string[], depth: number): void {
  const m = members(w.ex, node);
  if (!m || depth > 8) {
    out.push(`${w.param(node)}::boolean`);
    return;
  }
  for (const [k, v] of m) {
    if (k === 'AND' || k === 'OR' || k === 'NOT') {
      const items = w.ex.resolve(v).type === 'ArrayExpression' ? (w.ex.resolve(v).elements ?? []).filter((x): x is BNode => x !== null) : [v];
      const parts = items.map((it) => {
        const sub: string[] = [];
        whereOf(w, column, it, sub, depth + 1);
        return sub.length > 0 ? `(${sub.join(' AND ')})` : 'TRUE';
      });
      if (parts.length === 0) continue;
      if (k === 'OR') out.push(`(${parts.join(' OR ')})`);
      else if (k === 'NOT') out.push(`NOT (${parts.join(' AND ')})`);
      else out.push(...parts);
      continue;
    }
    const col = column(k);
    const ops = members(w.ex, v);
    if (!ops) {
      out.push(w.ex.resolve(v).type === 'NullLiteral' ? `${col} IS NULL` : `${col} = ${w.value(v)}`);
      continue;
    }
    for (const [o, x] of ops) {
      if (OPERATORS[o]) out.push(w.ex.resolve(x).type === 'NullLiteral' ? `${col} IS ${o === 'not' ? 'NOT ' : ''}NULL` : `${col} ${OPERATORS[o]} ${w.value(x)}`);
      else if (o === 'in' || o === 'notIn') out.push(`${col} ${o === 'in' ? 'IN' : 'NOT IN'} ${w.list(x)}`);
      else if (o === 'contains' || o === 'startsWith' || o === 'endsWith') {
        const like = ops.get('mode') && w.ex.stringOf(ops.get('mode')!, 0) === 'insensitive' ? 'ILIKE' : 'LIKE';
        const s = w.ex.stringOf(x, 0);
        const pattern = s !== undefined ? `'${o === 'startsWith' ? '' : '%'}${s.replace(/'/g, "''")}${o === 'endsWith' ? '' : '%'}'` : o === 'startsWith' ? `${w.param(x)} || '%'` : `'%' || ${w.param(x)}${o === 'contains' ? " || '%'" : ''}`;
        out.push(`${col} ${like} ${pattern}`);
      } else if (o === 'mode') continue;
      else {
        w.warnings.push(`The condition ${k}: { ${o} } filters through a relation or an operator this reader does not translate, so it is left out.`);
      }
    }
  }
}

function orderOf(w: SqlWriter, column: (field: string) => string, node: BNode, out: string[]): void {
  const v = w.ex.resolve(node);
  const items = v.type === 'ArrayExpression' ? (v.elements ?? []).filter((x): x is BNode => x !== null) : [node];
  for (const it of items) {
    for (const [k, d] of members(w.ex, it) ?? []) {
      const dir = w.ex.stringOf(d, 0);
      if (dir === undefined) {
        w.warnings.push(`The order on ${k} is not a literal 'asc' or 'desc' (or orders through a relation), so it is left out.`);
        continue;
      }
      out.push(`${column(k)}${dir.toLowerCase() === 'desc' ? ' DESC' : ''}`);
    }
  }
}
