// SQL written for an ORM's or a query builder's call (Prisma, Sequelize, TypeORM, Knex), so the same
// advisor reads it as any other statement. Values that are literals in the code are written as SQL
// literals; anything else becomes a $n parameter that remembers its source text, never a guess. The
// whole statement maps to the call in the file: a finding on any part of it points at the call.

import type { Extractor } from './extractor';
import { range, unwrap, type BNode } from './syntax';
import type { FoundSqlQuery, SqlParameter } from './types';
import { quoteIdent, quoteQualified } from '../../postgres/names';

export interface SelectParts {
  table: string;
  alias?: string;
  /** SELECT list; `*` when empty. */
  columns?: string[];
  where: string[];
  orderBy: string[];
  limit?: string;
  offset?: string;
  kind: 'select' | 'count' | 'update' | 'delete' | 'insert';
  /** For update: `column = value` items. */
  set?: string[];
  /** For insert: the columns and each row's values (none: the values are not written out, DEFAULT VALUES stands). */
  insert?: { columns: string[]; rows: string[][] };
  /** For insert: `ON CONFLICT DO NOTHING`. */
  orIgnore?: boolean;
  /** Extra FROM text after the table (joins written as SQL). */
  joins?: string[];
}

/** The table written when a builder's table is not shown at all: a stand-in, never an index's table. */
export const UNKNOWN_TABLE = 'unknown_table';

/** Collects parameters while conditions are written, then builds the statement. */
export class SqlWriter {
  readonly params: SqlParameter[] = [];
  readonly warnings: string[] = [];
  /** Names written for a table or column the code chooses at run time (FoundSqlQuery.standInNames): no index is suggested on them. */
  readonly standIns: string[] = [];

  constructor(readonly ex: Extractor) {}

  /** A value from the code: an SQL literal when it is one, else a $n parameter. */
  value(node: BNode): string {
    const v = this.ex.resolve(node);
    switch (v.type) {
      case 'StringLiteral':
        return `'${String(v.value).replace(/'/g, "''")}'`;
      case 'NumericLiteral':
        return String(v.value);
      case 'BooleanLiteral':
        return v.value ? 'TRUE' : 'FALSE';
      case 'NullLiteral':
        return 'NULL';
      case 'UnaryExpression':
        if (v.operator === '-' && unwrap(v.argument!).type === 'NumericLiteral') return `-${String(unwrap(v.argument!).value)}`;
        break;
      case 'TemplateLiteral':
        if ((v.expressions?.length ?? 0) === 0) return `'${(this.ex.stringOf(v, 0) ?? '').replace(/'/g, "''")}'`;
        break;
      default:
        break;
    }
    return this.param(node);
  }

  /** A $n parameter standing for an expression of the code. */
  param(node: BNode): string {
    const n = this.params.length + 1;
    const r = range(unwrap(node));
    this.params.push({ n, text: this.ex.text(r).trim(), range: r });
    return `$${n}`;
  }

  /** A $n parameter for a name whose value is not in the code (`:email` with no values object), placed at `near`. */
  named(text: string, near: BNode | undefined): string {
    const n = this.params.length + 1;
    const r = near ? range(unwrap(near)) : { start: 0, end: 0 };
    this.params.push({ n, text, range: r });
    return `$${n}`;
  }

  /** A list of values `(a, b, $1)`, or a parameter standing for the whole list. */
  list(node: BNode): string {
    const v = this.ex.resolve(node);
    if (v.type === 'ArrayExpression') {
      const items = (v.elements ?? []).filter((x): x is BNode => x !== null && x.type !== 'SpreadElement').map((x) => this.value(x));
      return items.length > 0 ? `(${items.join(', ')})` : '(NULL)';
    }
    return `(${this.param(node)})`;
  }

  /** The statement, mapped to the call it was read from. */
  build(p: SelectParts, call: BNode): FoundSqlQuery {
    const from = `${quoteQualified(p.table)}${p.alias ? ` ${quoteIdent(p.alias)}` : ''}${p.joins?.length ? ` ${p.joins.join(' ')}` : ''}`;
    const where = p.where.length > 0 ? ` WHERE ${p.where.join(' AND ')}` : '';
    let sql: string;
    if (p.kind === 'update') sql = `UPDATE ${from} SET ${(p.set?.length ? p.set : ['id = id']).join(', ')}${where}`;
    else if (p.kind === 'delete') sql = `DELETE FROM ${from}${where}`;
    else if (p.kind === 'insert') {
      const rows = p.insert?.rows ?? [];
      const values = rows.length > 0 && p.insert!.columns.length > 0 ? `(${p.insert!.columns.join(', ')}) VALUES ${rows.map((r) => `(${r.join(', ')})`).join(', ')}` : 'DEFAULT VALUES';
      sql = `INSERT INTO ${quoteQualified(p.table)} ${values}${p.orIgnore ? ' ON CONFLICT DO NOTHING' : ''}`;
    }
    else {
      const cols = p.kind === 'count' ? 'count(*)' : p.columns?.length ? p.columns.join(', ') : '*';
      sql = `SELECT ${cols} FROM ${from}${where}`;
      if (p.orderBy.length > 0) sql += ` ORDER BY ${p.orderBy.join(', ')}`;
      if (p.limit !== undefined) sql += ` LIMIT ${p.limit}`;
      if (p.offset !== undefined) sql += ` OFFSET ${p.offset}`;
    }
    const r = range(call);
    return {
      engine: 'postgres', origin: 'builder', range: r, sql, runs: [[0, r.start, sql.length, r.end - r.start]], textRange: { ...r },
      params: this.params, warnings: this.warnings, ...(this.standIns.length ? { standInNames: [...this.standIns] } : {}),
    };
  }
}

/** The members of an object literal (after following constants), by name; undefined when it is not one. */
export function members(ex: Extractor, node: BNode | undefined): Map<string, BNode> | undefined {
  if (!node) return undefined;
  const o = ex.resolve(node);
  if (o.type !== 'ObjectExpression') return undefined;
  const out = new Map<string, BNode>();
  for (const p of o.properties ?? []) {
    if (p.type !== 'ObjectProperty' || !p.key) continue;
    const k = p.computed ? ex.stringOf(p.key, 0) ?? computedName(p.key) : p.key.type === 'Identifier' ? p.key.name : p.key.type === 'StringLiteral' || p.key.type === 'NumericLiteral' ? String(p.key.value) : undefined;
    if (k !== undefined) out.set(k, (p.shorthand ? p.key : p.value) as BNode);
  }
  return out;
}

/** `[Op.gt]` gives 'Op.gt'. */
function computedName(k: BNode): string | undefined {
  const u = unwrap(k);
  if (u.type === 'MemberExpression' && !u.computed && u.property?.type === 'Identifier' && unwrap(u.object!).type === 'Identifier') return `${unwrap(u.object!).name}.${u.property.name}`;
  return undefined;
}

/** True when an object literal has spreads or computed keys this reader could not name. */
export function hasUnknownMembers(ex: Extractor, node: BNode | undefined): boolean {
  const o = node ? ex.resolve(node) : undefined;
  return o?.type === 'ObjectExpression' && (o.properties ?? []).some((p) => p.type !== 'ObjectProperty');
}
