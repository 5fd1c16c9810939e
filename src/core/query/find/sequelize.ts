// Sequelize models: `User.findAll({ where, order, limit, offset, attributes })`, `findOne`, `findByPk`,
// `findAndCountAll`, `count`, `update(values, { where })`, `destroy({ where })`, read as the SQL Sequelize
// sends. The table is the model's `tableName` when the file defines the model (`sequelize.define('user',
// attributes, { tableName })`, `User.init(attributes, { tableName })`), else the model name pluralised by
// the same library Sequelize uses (inflection), as Sequelize does by default. A model the repository
// declares (context.entities) gives its table and its attributes' columns; a name TypeORM or Mongoose
// declares is not read here (one library per call, typeorm.ts declaredEntity). `sequelize.query(sql)` is
// read by sqlStrings.ts.

import { pluralize, underscore } from 'inflection';
import type { CallReader, ChainCall, Extractor } from './extractor';
import { members, SqlWriter, type SelectParts } from './sqlBuild';
import { quoteIdent } from '../../postgres/names';
import { isCall, isMember, propertyName, unwrap, type BNode } from './syntax';
import { declaredEntity, functionArgument } from './typeorm';

const METHODS: Record<string, SelectParts['kind']> = {
  findAll: 'select', findOne: 'select', findByPk: 'select', findAndCountAll: 'select', count: 'count', update: 'update', destroy: 'delete',
  findOrCreate: 'select', max: 'select', min: 'select', sum: 'select',
};
/** Methods only Sequelize models have. */
const SEQUELIZE_ONLY = new Set(['findAll', 'findByPk', 'findAndCountAll', 'destroy', 'findOrCreate']);

const OPS: Record<string, string> = { eq: '=', ne: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=', like: 'LIKE', iLike: 'ILIKE', notLike: 'NOT LIKE', notILike: 'NOT ILIKE', startsWith: 'LIKE', endsWith: 'LIKE', substring: 'LIKE' };

export const sequelizeCalls: CallReader = {
  read(n, ex) {
    if (!isCall(n)) return false;
    const chain = ex.flatten(n);
    const op = chain.find((c) => METHODS[c.name] !== undefined);
    if (!op || functionArgument(op.call)) return false;
    const table = tableOf(ex, unwrap(unwrap(op.call.callee!).object!), op);
    if (!table) return false;
    for (const c of chain) ex.consume(c.call);
    ex.push(readSequelize(ex, table, op));
    return true;
  },
};

interface ModelTable {
  table: string;
  underscored: boolean;
  /** Attribute to column, where the model's definition says they differ. */
  columns?: Record<string, string>;
}

function tableOf(ex: Extractor, e: BNode, op: ChainCall): ModelTable | undefined {
  // `import * as Flags from 'flags-client'; Flags.destroy()`: a module's namespace is no model.
  if (e.type === 'Identifier' && ex.isNamespaceImport(e.name!)) return undefined;
  const named = ex.lastName(e);
  const modelLike = named !== undefined && (/^[A-Z]/.test(named) || (isMember(e) && /^(models|db)$/i.test(ex.lastName(unwrap(e.object!)) ?? '')));
  const declared = modelLike ? declaredEntity(ex, named) : undefined;
  if (declared && declared.library !== 'sequelize') return undefined;
  const found = ownTable(ex, e, op, declared !== undefined);
  const entity = declared?.entity;
  if (!entity) return found;
  // The repository's definition of the model names its table and columns; the file's own definition, when it has one, agrees.
  if (found && declared!.local) return { ...found, columns: entity.table === found.table ? entity.columns : {} };
  return { table: entity.table, underscored: false, columns: entity.columns };
}

function ownTable(ex: Extractor, e: BNode, op: ChainCall, declared: boolean): ModelTable | undefined {
  const imported = declared || ex.imports('sequelize', 'sequelize-typescript');
  const args = members(ex, op.call.arguments?.[op.name === 'update' ? 1 : 0]);
  const ormArgs = args !== undefined && ['where', 'order', 'attributes', 'include', 'limit', 'offset', 'raw'].some((k) => args.has(k));
  if (ex.imports('typeorm') && !imported) return undefined;
  if (!imported && !SEQUELIZE_ONLY.has(op.name) && !ormArgs) return undefined;
  const name = ex.lastName(e);
  if (name === undefined) return undefined;
  if (e.type === 'Identifier') {
    const init = ex.constInit(name);
    const defined = init ? definition(ex, unwrap(init)) : undefined;
    if (defined) return defined;
  }
  const init = initOptions(ex, name);
  if (init) return init;
  if (!/^[A-Z]/.test(name) && !(isMember(e) && /^(models|db)$/i.test(ex.lastName(unwrap(e.object!)) ?? ''))) return undefined;
  if (['Op', 'Sequelize', 'Promise', 'Object', 'Array', 'JSON', 'Math'].includes(name)) return undefined;
  return { table: pluralize(name), underscored: false };
}

/** `sequelize.define('user', attributes, { tableName, freezeTableName, underscored })`. */
function definition(ex: Extractor, e: BNode): ModelTable | undefined {
  if (!isCall(e)) return undefined;
  const callee = unwrap(e.callee!);
  if (!isMember(callee) || propertyName(callee) !== 'define' || !e.arguments?.[0]) return undefined;
  const model = ex.stringOf(e.arguments[0], 0);
  if (model === undefined) return undefined;
  return fromOptions(ex, model, e.arguments[2]);
}

/** `User.init(attributes, { tableName, modelName, sequelize })` anywhere in the file's top level. */
function initOptions(ex: Extractor, name: string): ModelTable | undefined {
  const call = ex.moduleCall(name, 'init');
  if (!call || !call.arguments?.[1]) return undefined;
  const opts = members(ex, call.arguments[1]);
  const modelName = opts?.get('modelName') ? ex.stringOf(opts.get('modelName')!, 0) : undefined;
  return fromOptions(ex, modelName ?? name, call.arguments[1]);
}

function fromOptions(ex: Extractor, model: string, node: BNode | undefined): ModelTable {
  const opts = members(ex, node);
  const flag = (k: string) => {
    const v = opts?.get(k) ? ex.resolve(opts.get(k)!) : undefined;
    return v?.type === 'BooleanLiteral' && v.value === true;
  };
  const tableName = opts?.get('tableName') ? ex.stringOf(opts.get('tableName')!, 0) : undefined;
  const underscored = flag('underscored');
  return { table: sequelizeTable(model, tableName, flag('freezeTableName'), underscored), underscored };
}

/** The table Sequelize gives a model: its `tableName`, else the model's name (pluralised unless frozen, in snake_case when underscored). */
export function sequelizeTable(model: string, tableName: string | undefined, freezeTableName: boolean, underscored: boolean): string {
  return tableName ?? (freezeTableName ? model : underscored ? underscore(pluralize(model)) : pluralize(model));
}

function readSequelize(ex: Extractor, model: ModelTable, op: ChainCall) {
  const w = new SqlWriter(ex);
  const col = (k: string) => quoteIdent(model.columns?.[k] ?? (model.underscored ? underscore(k) : k));
  const argIndex = op.name === 'update' ? 1 : op.name === 'findByPk' || op.name === 'max' || op.name === 'min' || op.name === 'sum' ? 1 : 0;
  const args = members(ex, op.call.arguments?.[argIndex]);
  const parts: SelectParts = { table: model.table, where: [], orderBy: [], kind: METHODS[op.name]! };
  if (op.name === 'findByPk' && op.call.arguments?.[0]) {
    parts.where.push(`${col('id')} = ${w.value(op.call.arguments[0])}`);
    w.warnings.push('findByPk is read as a lookup by `id`, the primary key Sequelize adds when the model declares none.');
  }
  if (op.name === 'findOne' || op.name === 'findByPk') parts.limit = '1';
  const where = args?.get('where');
  if (where) whereOf(w, where, parts.where, col, 0);
  const order = args?.get('order');
  if (order) orderOf(w, order, parts.orderBy, col);
  if (args?.get('limit')) parts.limit = w.value(args.get('limit')!);
  if (args?.get('offset')) parts.offset = w.value(args.get('offset')!);
  const attrs = args?.get('attributes') ? ex.resolve(args.get('attributes')!) : undefined;
  if (attrs?.type === 'ArrayExpression' && parts.kind === 'select') {
    const names = (attrs.elements ?? []).map((x) => (x ? ex.stringOf(x, 0) : undefined));
    if (names.every((x) => x !== undefined)) parts.columns = (names as string[]).map(col);
  }
  if (args?.get('include')) w.warnings.push('The models in `include` are joined by associations this reader does not know, so only the main table is read.');
  if (op.name === 'update') {
    const values = members(ex, op.call.arguments?.[0]);
    parts.set = values ? [...values.entries()].map(([k, v]) => `${col(k)} = ${w.value(v)}`) : [];
  }
  return w.build(parts, op.call);
}

function opName(k: string): string | undefined {
  if (k.startsWith('Op.')) return k.slice(3);
  if (k.startsWith('$')) return k.slice(1);
  return undefined;
}

function whereOf(w: SqlWriter, node: BNode, out: string[], col: (k: string) => string, depth: number): void {
  const m = members(w.ex, node);
  if (!m || depth > 8) {
    w.warnings.push(`The condition ${w.ex.text({ start: unwrap(node).start, end: unwrap(node).end }).slice(0, 40)} is not written out here, so it is left out.`);
    return;
  }
  for (const [k, v] of m) {
    const top = opName(k);
    if (top === 'or' || top === 'and' || top === 'not') {
      const arr = w.ex.resolve(v);
      const items = arr.type === 'ArrayExpression' ? (arr.elements ?? []).filter((x): x is BNode => x !== null) : [v];
      const parts = items.map((it) => {
        const sub: string[] = [];
        whereOf(w, it, sub, col, depth + 1);
        return sub.length > 0 ? `(${sub.join(' AND ')})` : 'TRUE';
      });
      if (parts.length > 0) out.push(top === 'or' ? `(${parts.join(' OR ')})` : top === 'not' ? `NOT (${parts.join(' AND ')})` : parts.join(' AND '));
      continue;
    }
    const c = col(k);
    const value = w.ex.resolve(v);
    if (value.type === 'NullLiteral') out.push(`${c} IS NULL`);
    else if (value.type === 'ArrayExpression') out.push(`${c} IN ${w.list(v)}`);
    else if (value.type === 'ObjectExpression') {
      for (const [o, x] of members(w.ex, v) ?? []) {
        const name = opName(o);
        if (name === undefined) {
          w.warnings.push(`The condition on ${k}.${o} reads a nested attribute or an association this reader does not translate, so it is left out.`);
        } else if (name === 'in' || name === 'notIn') out.push(`${c} ${name === 'in' ? 'IN' : 'NOT IN'} ${w.list(x)}`);
        else if (name === 'is' || (name === 'ne' && w.ex.resolve(x).type === 'NullLiteral')) out.push(`${c} IS ${name === 'ne' ? 'NOT ' : ''}NULL`);
        else if (name === 'between' && w.ex.resolve(x).type === 'ArrayExpression') {
          const [a, b] = w.ex.resolve(x).elements ?? [];
          if (a && b) out.push(`${c} BETWEEN ${w.value(a)} AND ${w.value(b)}`);
        } else if (OPS[name]) {
          const s = w.ex.stringOf(x, 0);
          const lit = name === 'startsWith' && s !== undefined ? `'${s.replace(/'/g, "''")}%'` : name === 'endsWith' && s !== undefined ? `'%${s.replace(/'/g, "''")}'` : name === 'substring' && s !== undefined ? `'%${s.replace(/'/g, "''")}%'` : w.value(x);
          out.push(`${c} ${OPS[name]} ${lit}`);
        } else w.warnings.push(`The operator ${o} on ${k} is not translated, so that condition is left out.`);
      }
    } else out.push(`${c} = ${w.value(v)}`);
  }
}

function orderOf(w: SqlWriter, node: BNode, out: string[], col: (k: string) => string): void {
  const v = w.ex.resolve(node);
  const items = v.type === 'ArrayExpression' ? (v.elements ?? []).filter((x): x is BNode => x !== null) : [node];
  for (const it of items) {
    const r = w.ex.resolve(it);
    const single = w.ex.stringOf(r, 0);
    if (single !== undefined) {
      out.push(col(single));
      continue;
    }
    if (r.type === 'ArrayExpression') {
      const [f, d] = (r.elements ?? []).map((x) => (x ? w.ex.stringOf(x, 0) : undefined));
      if (f !== undefined && (r.elements?.length ?? 0) <= 2) {
        out.push(`${col(f)}${d && /^desc/i.test(d) ? ' DESC' : ''}`);
        continue;
      }
    }
    w.warnings.push('An order item is not a column name with a direction (an association or a function), so it is left out.');
  }
}
