// Knex: builder chains (`knex('orders').where({ status }).orderBy('created_at', 'desc').limit(10)`,
// `knex.select('*').from('orders')`, `first`, `count`, `update`, `del`, joins) read as the SQL Knex sends,
// and `knex.raw('... ?', [value])` with its `?` bindings as $n parameters.

import type { CallReader, ChainCall, Extractor } from './extractor';
import { literalValues, sqlFromLiteral } from './sqlStrings';
import { members, SqlWriter, UNKNOWN_TABLE, type SelectParts } from './sqlBuild';
import { quoteQualified } from '../../postgres/names';
import { standInBare, standInWarning } from './standIns';
import { isCall, isMember, propertyName, range, unwrap, type BNode } from './syntax';
import { replaceInSql } from './ranges';
import { callersNote, libraryOf } from './origin';

/** Names a Knex instance usually has; with an import of knex any name is taken. */
const INSTANCE = /^(knex|db|trx|tx|k|database|connection|conn|pg|qb|builder|query|client|sql)$/i;
const BUILDER = new Set(['select', 'column', 'columns', 'from', 'table', 'where', 'andWhere', 'orWhere', 'whereIn', 'whereNotIn', 'whereNull',
  'whereNotNull', 'whereBetween', 'whereRaw', 'whereLike', 'whereILike', 'orderBy', 'limit', 'offset', 'first', 'count', 'update', 'del',
  'delete', 'join', 'innerJoin', 'leftJoin', 'leftOuterJoin', 'rightJoin', 'pluck', 'distinct', 'groupBy', 'having', 'returning', 'modify',
  'forUpdate', 'max', 'min', 'sum', 'avg', 'timeout', 'clone', 'as', 'orderByRaw', 'whereExists', 'whereNot', 'increment', 'decrement',
  ...['distinctOn', 'joinRaw', 'orWhereIn', 'orWhereNull', 'orWhereNotNull', 'whereNotExists', 'orWhereRaw', 'havingRaw', 'groupByRaw']]);
/** Builder calls read as the query without them: the advice does not cover what they add. */
const LEFT_OUT = new Set(['joinRaw', 'orWhereIn', 'orWhereNull', 'orWhereNotNull', 'whereNotExists', 'orWhereRaw', 'whereExists']);
/** Calls that make a chain something other than a query to advise. */
const NOT_A_QUERY = new Set(['insert', 'schema', 'migrate', 'seed', 'destroy', 'transaction', 'raw', 'fn', 'ref', 'onConflict']);

export const knexCalls: CallReader = {
  read(n, ex) {
    if (!isCall(n)) return false;
    const callee = unwrap(n.callee!);
    // knex.raw('...', bindings)
    if (isMember(callee) && propertyName(callee) === 'raw' && isKnex(ex, unwrap(callee.object!), true)) {
      const lit = n.arguments?.[0] ? ex.resolve(n.arguments[0]) : undefined;
      const found = lit ? sqlFromLiteral(ex, lit, lit.type === 'TemplateLiteral' ? 'template' : 'string', range(n)) : undefined;
      if (!found) return false;
      const bindings = n.arguments?.[1] ? literalValues(ex, n.arguments[1]) : undefined;
      const q = questionMarks(found);
      if (bindings) q.values = bindings;
      ex.push(q);
      return true;
    }
    const chain = flattenWithBase(ex, n);
    if (!chain) return false;
    const { base, calls } = chain;
    if (calls.some((c) => NOT_A_QUERY.has(c.name))) return false;
    if (calls.length === 0 || !calls.every((c) => BUILDER.has(c.name) || ['then', 'catch', 'toString', 'toSQL'].includes(c.name))) return false;
    for (const c of calls) ex.consume(c.call);
    if (base.call) ex.consume(base.call);
    const q = readChain(ex, base.table, calls, n);
    // A Knex instance a function is given: what its callers pass, when they name it.
    const note = callersNote(ex, base.call ? unwrap(base.call.callee!) : ex.chainBase(calls)!);
    if (note) q.warnings.push(note);
    ex.push(q);
    return true;
  },
};

function isKnex(ex: Extractor, e: BNode, strict: boolean): boolean {
  // What the code says the value is (an annotation, the call that made it, an import followed) decides first.
  const lib = libraryOf(ex, e);
  if (lib !== undefined) return lib === 'knex';
  const name = ex.lastName(e);
  if (name === undefined) return false;
  if (ex.importSource(name) === 'knex') return true;
  if (e.type === 'Identifier') {
    const init = ex.constInit(name);
    const i = init ? unwrap(init) : undefined;
    if (i && isCall(i)) {
      const c = unwrap(i.callee!);
      if ((c.type === 'Identifier' && /^knex$/i.test(c.name!)) || (isCall(c) && unwrap(c.callee!).type === 'Identifier' && unwrap(c.callee!).name === 'require')) return true;
    }
  }
  if (INSTANCE.test(name)) return !strict || ex.imports('knex') || /knex/i.test(name) || fieldInstance(ex, e);
  return /[a-z](Db|Database|Knex)$/.test(name) && fieldInstance(ex, e);
}

/**
 * `this.db` (or a property named for a database, `testDb.rawDatabase`) in a file that imports no other
 * query builder: a class given its Knex instance by whoever made it (a store typed with the application's
 * own `Db` type imports nothing of Knex's).
 */
function fieldInstance(ex: Extractor, e: BNode): boolean {
  return isMember(e) && (unwrap(e.object!).type === 'ThisExpression' || /(db|database|knex)$/i.test(propertyName(e) ?? '')) && !ex.imports('drizzle-orm', 'kysely', '@mikro-orm', 'typeorm', 'sequelize', 'objection', 'mongodb', 'mongoose');
}

/** The calls of a chain from its base: `knex('orders')` (the table) or `knex.select(...)` (no table yet). */
function flattenWithBase(ex: Extractor, outer: BNode): { base: { table?: BNode; call?: BNode }; calls: ChainCall[] } | undefined {
  const calls = ex.flatten(outer);
  if (calls.length === 0) return undefined;
  const root = ex.chainBase(calls)!;
  // knex('orders').where(...)
  if (isCall(root) && root.arguments?.length === 1 && isKnex(ex, unwrap(root.callee!), false)) {
    return { base: { table: root.arguments[0]!, call: root }, calls };
  }
  // this.db('orders').where(...): a class holding its Knex instance in a field calls it as a method of `this`.
  const first = calls[0]!;
  const firstCallee = unwrap(first.call.callee!);
  if (isMember(firstCallee) && unwrap(firstCallee.object!).type === 'ThisExpression' && first.call.arguments?.length === 1 && isKnex(ex, firstCallee, false)) {
    return { base: { table: first.call.arguments[0]!, call: first.call }, calls: calls.slice(1) };
  }
  // db.knex('orders'), service.db('orders'): a Knex instance held by a property, called for its table.
  if (isMember(firstCallee) && first.call.arguments?.length === 1 && libraryOf(ex, firstCallee) === 'knex') {
    return { base: { table: first.call.arguments[0]!, call: first.call }, calls: calls.slice(1) };
  }
  // knex.select('*').from('orders'), knex.from('orders')
  if (isKnex(ex, root, true) && (calls[0]!.name === 'select' || calls[0]!.name === 'from' || calls[0]!.name === 'table')) return { base: {}, calls };
  // A chain that starts elsewhere on a value the code says is Knex: `trx.update({...}).from('t')`,
  // `knex.queryBuilder().from('t')`.
  if (libraryOf(ex, root) === 'knex') {
    const rest = calls[0]!.name === 'queryBuilder' ? calls.slice(1) : calls;
    if (rest.length > 0 && BUILDER.has(rest[0]!.name)) {
      if (rest !== calls) ex.consume(calls[0]!.call);
      return { base: {}, calls: rest };
    }
  }
  return undefined;
}

function readChain(ex: Extractor, tableNode: BNode | undefined, calls: ChainCall[], whole: BNode) {
  const w = new SqlWriter(ex);
  const tableText = tableNode ? ex.stringOf(tableNode, 0) : undefined;
  const parts: SelectParts = { table: '', where: [], orderBy: [], kind: 'select', joins: [] };
  const setTable = (t: string | undefined) => {
    if (t === undefined) return;
    const m = /^\s*([\w.]+)(?:\s+as\s+(\w+))?\s*$/i.exec(t);
    parts.table = m ? m[1]! : t;
    if (m?.[2]) parts.alias = m[2];
  };
  // A table named by an expression (`knex(this.options.tablename)`) is read as a stand-in named after it.
  const standIn = (node: BNode) => {
    const text = ex.text(range(unwrap(node)));
    // A later `.from(...)` names the table instead of the first one.
    if (parts.table) w.standIns.splice(0, w.standIns.length, ...w.standIns.filter((n) => n !== parts.table));
    parts.table = standInBare(text);
    parts.alias = undefined;
    w.standIns.push(parts.table);
    w.warnings.push(standInWarning([text]));
  };
  setTable(tableText);
  if (tableNode && tableText === undefined) standIn(tableNode);
  for (const c of calls) {
    const a = c.call.arguments ?? [];
    const str = (i: number) => (a[i] ? ex.stringOf(a[i]!, 0) : undefined);
    switch (c.name) {
      case 'from':
      case 'table':
        if (a[0] && str(0) === undefined && unwrap(a[0]).type !== 'ArrowFunctionExpression' && unwrap(a[0]).type !== 'FunctionExpression') standIn(a[0]);
        else setTable(str(0));
        break;
      case 'select':
      case 'column':
      case 'columns': {
        const cols = a.map((x) => ex.stringOf(x, 0));
        if (cols.length > 0 && cols.every((x) => x !== undefined)) parts.columns = (cols as string[]).map((x) => x === '*' ? '*' : quoteQualified(x.replace(/\s+as\s+.*$/i, '')));
        break;
      }
      case 'where':
      case 'andWhere':
      case 'orWhere':
      case 'whereNot': {
        const cond = condition(w, a);
        if (!cond) break;
        const text = c.name === 'whereNot' ? `NOT (${cond})` : cond;
        if (c.name === 'orWhere' && parts.where.length > 0) parts.where = [`(${parts.where.join(' AND ')} OR ${text})`];
        else parts.where.push(text);
        break;
      }
      case 'whereIn':
      case 'whereNotIn':
        if (str(0) !== undefined && a[1]) parts.where.push(`${quoteQualified(str(0)!)} ${c.name === 'whereIn' ? 'IN' : 'NOT IN'} ${w.list(a[1])}`);
        break;
      case 'whereNull':
      case 'whereNotNull':
        if (str(0) !== undefined) parts.where.push(`${quoteQualified(str(0)!)} IS ${c.name === 'whereNull' ? '' : 'NOT '}NULL`);
        break;
      case 'whereBetween': {
        const r = a[1] ? ex.resolve(a[1]) : undefined;
        const [lo, hi] = r?.type === 'ArrayExpression' ? r.elements ?? [] : [];
        if (str(0) !== undefined && lo && hi) parts.where.push(`${quoteQualified(str(0)!)} BETWEEN ${w.value(lo)} AND ${w.value(hi)}`);
        break;
      }
      case 'whereLike':
      case 'whereILike':
        if (str(0) !== undefined && a[1]) parts.where.push(`${quoteQualified(str(0)!)} ${c.name === 'whereLike' ? 'LIKE' : 'ILIKE'} ${w.value(a[1])}`);
        break;
      case 'whereRaw':
        if (str(0) !== undefined) parts.where.push(`(${questionText(w, str(0)!, a[1])})`);
        else w.warnings.push('A whereRaw condition is not a literal, so it is left out.');
        break;
      case 'orderBy':
        if (str(0) !== undefined) parts.orderBy.push(`${quoteQualified(str(0)!)}${/^desc/i.test(str(1) ?? '') ? ' DESC' : ''}`);
        else {
          const r = a[0] ? ex.resolve(a[0]) : undefined;
          for (const el of r?.type === 'ArrayExpression' ? r.elements ?? [] : []) {
            const col = el ? ex.stringOf(el, 0) ?? (members(ex, el)?.get('column') ? ex.stringOf(members(ex, el)!.get('column')!, 0) : undefined) : undefined;
            const order = el && members(ex, el)?.get('order') ? ex.stringOf(members(ex, el)!.get('order')!, 0) : undefined;
            if (col !== undefined) parts.orderBy.push(`${quoteQualified(col)}${/^desc/i.test(order ?? '') ? ' DESC' : ''}`);
          }
        }
        break;
      case 'limit':
        if (a[0]) parts.limit = w.value(a[0]);
        break;
      case 'offset':
        if (a[0]) parts.offset = w.value(a[0]);
        break;
      case 'first':
        parts.limit = '1';
        break;
      case 'count':
        parts.kind = 'count';
        break;
      case 'update':
      case 'increment':
      case 'decrement': {
        parts.kind = 'update';
        const values = members(ex, a[0]);
        parts.set = values ? [...values.entries()].map(([k, v]) => `${quoteQualified(k)} = ${w.value(v)}`) : str(0) !== undefined ? [`${quoteQualified(str(0)!)} = ${quoteQualified(str(0)!)}`] : [];
        break;
      }
      case 'del':
      case 'delete':
        parts.kind = 'delete';
        break;
      case 'join':
      case 'innerJoin':
      case 'leftJoin':
      case 'leftOuterJoin':
      case 'rightJoin': {
        const t = str(0);
        const l = str(1);
        const op = a.length >= 4 ? str(2) : '=';
        const r = a.length >= 4 ? str(3) : str(2);
        const kind = c.name === 'leftJoin' || c.name === 'leftOuterJoin' ? 'LEFT JOIN' : c.name === 'rightJoin' ? 'RIGHT JOIN' : 'JOIN';
        if (t !== undefined && l !== undefined && r !== undefined && op !== undefined) {
          const tm = /^\s*([\w.]+)(?:\s+as\s+(\w+))?\s*$/i.exec(t);
          parts.joins!.push(`${kind} ${tm ? `${quoteQualified(tm[1]!)}${tm[2] ? ` ${tm[2]}` : ''}` : t} ON ${quoteQualified(l)} ${op} ${quoteQualified(r)}`);
        } else w.warnings.push(`A ${c.name} is not written with literal names, so it is left out.`);
        break;
      }
      default:
        if (LEFT_OUT.has(c.name)) w.warnings.push(`The ${c.name}(...) of this query is not read, so the advice leaves it out.`);
        break;
    }
  }
  if (!parts.table) {
    w.warnings.push('The table of this query is not known here, so no index is suggested for it.');
    parts.table = UNKNOWN_TABLE;
    w.standIns.push(UNKNOWN_TABLE);
  }
  return w.build(parts, whole);
}

/** `where({ a: 1 })`, `where('a', 1)`, `where('a', '>', 5)`, `where('a', null)`; a callback is noted and left out. */
function condition(w: SqlWriter, a: BNode[]): string | undefined {
  const ex = w.ex;
  const obj = members(ex, a[0]);
  if (obj) {
    const out = [...obj.entries()].map(([k, v]) => (ex.resolve(v).type === 'NullLiteral' ? `${quoteQualified(k)} IS NULL` : `${quoteQualified(k)} = ${w.value(v)}`));
    return out.length > 0 ? out.join(' AND ') : undefined;
  }
  const col = a[0] ? ex.stringOf(a[0], 0) : undefined;
  if (col === undefined) {
    w.warnings.push('A where condition given as a function or a variable is left out.');
    return undefined;
  }
  if (a.length === 2) return ex.resolve(a[1]!).type === 'NullLiteral' ? `${quoteQualified(col)} IS NULL` : `${quoteQualified(col)} = ${w.value(a[1]!)}`;
  const op = a[1] ? ex.stringOf(a[1], 0) : undefined;
  if (a.length >= 3 && op !== undefined && /^(=|<>|!=|<|<=|>|>=|like|ilike|not like|in|not in)$/i.test(op.trim())) {
    return /in$/i.test(op.trim()) ? `${quoteQualified(col)} ${op.toUpperCase()} ${w.list(a[2]!)}` : `${quoteQualified(col)} ${op} ${w.value(a[2]!)}`;
  }
  return undefined;
}

/** A raw condition with `?` bindings: literal values written in, the others $n parameters. */
function questionText(w: SqlWriter, sql: string, bindingsNode: BNode | undefined): string {
  const r = bindingsNode ? w.ex.resolve(bindingsNode) : undefined;
  const items = r?.type === 'ArrayExpression' ? r.elements ?? [] : [];
  let i = 0;
  return sql.replace(/\?\??/g, (m) => {
    const node = items[i++];
    if (m === '??') {
      const name = node ? w.ex.stringOf(node, 0) : undefined;
      if (name !== undefined) return name;
      // An identifier binding the code fills at run time: a stand-in, never an index's key.
      if (!w.standIns.includes('unknown_column')) {
        w.standIns.push('unknown_column');
        w.warnings.push(`A ?? binding${node ? ` (${w.ex.text(range(unwrap(node)))})` : ''} names a column chosen at run time; it was read as unknown_column to analyse the rest.`);
      }
      return 'unknown_column';
    }
    return node ? w.value(node) : w.named('?', bindingsNode);
  });
}

/** Knex's `?` placeholders as $1, $2... in a raw statement found from a string. */
function questionMarks(q: ReturnType<typeof sqlFromLiteral> & object) {
  const edits: { start: number; end: number; text: string }[] = [];
  let n = q.params.length;
  let quote: string | undefined;
  for (let i = 0; i < q.sql.length; i++) {
    const c = q.sql[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '?' && q.sql[i + 1] !== '?' && q.sql[i - 1] !== '?') edits.push({ start: i, end: i + 1, text: `$${++n}` });
  }
  return edits.length > 0 ? replaceInSql(q, edits) : q;
}
