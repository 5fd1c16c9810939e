// Reads SQL with PostgreSQL's own parser (libpg-query, WASM) into the shape the advisor ranks indexes
// for: per table, the WHERE conjuncts classified (=, IN/ANY with their values, ranges, LIKE prefix or
// not, IS NULL, functions wrapping a column, jsonb/array operators for GIN), ORDER BY with directions
// and NULLS, LIMIT/OFFSET, join keys (JOIN ... ON, USING, EXISTS and IN subqueries), and the columns the
// statement reads (for index-only scans). A subquery of a select list, of a SELECT without FROM (`SELECT
// EXISTS (...)`, an INSERT's `SELECT ... WHERE NOT EXISTS (...)`), of VALUES or of an UPDATE's SET is a
// query of its own. The parser is loaded once, asynchronously; after that every
// read is synchronous. Offsets the parser reports are bytes; they are turned into string indexes here so
// rewrites can splice the user's own text.

import { formatBytes } from '../format';
import { ByteMap } from '../sql/bytes';
import { loadSqlParser, parseSqlSync, scanSqlSync, sqlParserLoaded } from '../sql/parser';
import type { PredicateClass } from './types';

export { loadSqlParser, sqlParserLoaded };

export interface Span {
  start: number;
  end: number;
}

export interface PgTable {
  /** The name the query uses for it: the alias, else the table name. */
  key: string;
  name: string;
  schema?: string;
  alias?: string;
  /** from: a FROM item; semi/anti: inside EXISTS / IN (subquery) / NOT EXISTS; target: UPDATE/DELETE. */
  role: 'from' | 'semi' | 'anti' | 'target';
}

export type PgPredicateKind = PredicateClass | 'gin';

export interface PgPredicate {
  /** PgTable.key. */
  table: string;
  /** Column name, or the expression text when a function wraps the column (lower(email)). */
  column: string;
  expression?: boolean;
  kind: PgPredicateKind;
  /** '=', 'IN', '= ANY', '<, >', 'BETWEEN', 'LIKE prefix', "LIKE '%...'", 'IS NULL', '@>', ... */
  detail: string;
  /** IN / ANY: number of values when literal. */
  values?: number;
  /** IN / ANY: the values as SQL text, when literal. */
  valueTexts?: string[];
  /** = ANY($1): the array parameter's text (with its cast), when not literal. */
  arrayParamText?: string;
  /** GIN operator ('@>', '?', '&&', ...). */
  operator?: string;
  /** A pattern match a pg_trgm GIN index can serve (LIKE '%...', ILIKE, ~, ~*). */
  trigram?: boolean;
  /** The conjunct's text in the statement, and its position among the top-level WHERE conjuncts. */
  text: string;
  span?: Span;
  conjunct?: number;
}

export interface PgJoin {
  kind: 'inner' | 'outer' | 'semi' | 'anti';
  /** The side that is probed (inner side of a semi-join, or either side of a join). */
  table: string;
  column: string;
  otherTable: string;
  otherColumn: string;
}

export interface PgOrder {
  table?: string;
  column: string;
  expression?: boolean;
  desc: boolean;
  /** Effective NULLS FIRST (the default for DESC). */
  nullsFirst: boolean;
  /** NULLS was written explicitly. */
  explicitNulls: boolean;
}

export interface PgShape {
  sql: string;
  statement: 'select' | 'update' | 'delete';
  tables: PgTable[];
  predicates: PgPredicate[];
  joins: PgJoin[];
  orderBy: PgOrder[];
  limit?: number;
  limitParam?: string;
  offset?: number;
  offsetParam?: string;
  /** Tables whose every column is read (SELECT * or t.*). */
  selectAll: string[];
  /** Columns read per table key, anywhere in the statement. */
  referenced: Record<string, string[]>;
  /** A plain top-level SELECT whose text the advisor may splice for rewrites. */
  rewritable: boolean;
  /** Clause positions in `sql` (string indexes), for rewrites. */
  clauses: { where?: Span; conjuncts?: Span[]; whereIsAnd: boolean; whereIsOr: boolean; orderBy?: Span; offset?: Span; end: number };
  /** Highest $n parameter number used. */
  maxParam: number;
  /** Output column names of the select list (for ORDER BY in an outer query). */
  outputNames: string[];
  notes: string[];
  warnings: string[];
}

export type PgParseResult = { ok: true; shapes: PgShape[]; warnings: string[] } | { ok: false; refusal: string };

/** Longest SQL text read. */
export const MAX_SQL_TEXT = 1024 * 1024;

export async function parsePostgresQuery(sql: string): Promise<PgParseResult> {
  try {
    await loadSqlParser();
  } catch {
    return { ok: false, refusal: 'The SQL parser (libpg-query) could not be loaded.' };
  }
  return parsePostgresQuerySync(sql);
}

/** The refusal of a statement written for another database, with what shows it. */
export function otherDatabaseRefusal(database: string, shownBy: string): string {
  return `The SQL is written for ${database} (${shownBy}), which PostgreSQL does not read, so it is not advised here.`;
}

/** Whether a refusal is one of a statement written for another database. */
export function isOtherDatabase(refusal: string): boolean {
  return refusal.startsWith('The SQL is written for ');
}

/** The refusal of a statement with backquoted names, MySQL's and SQLite's quoting. */
export const OTHER_DATABASE = otherDatabaseRefusal('MySQL or SQLite', '`backquoted` names');

/** The refusal of a statement with bracketed names, SQL Server's quoting. */
const SQL_SERVER = otherDatabaseRefusal('SQL Server', '`[bracketed]` names');

/** Same as parsePostgresQuery once loadSqlParser() has resolved. */
export function parsePostgresQuerySync(sql: string): PgParseResult {
  if (typeof sql !== 'string') return { ok: false, refusal: 'The SQL is not text.' };
  if (sql.trim() === '') return { ok: false, refusal: 'The SQL is empty.' };
  if (sql.length > MAX_SQL_TEXT) return { ok: false, refusal: `The SQL is ${formatBytes(sql.length)} long, more than the ${formatBytes(MAX_SQL_TEXT)} this reader accepts.` };
  if (!sqlParserLoaded()) return { ok: false, refusal: 'The SQL parser is not loaded yet: call loadSqlParser() first.' };
  let tree: unknown;
  let tokens: { start: number; end: number }[];
  try {
    tree = parseSqlSync(sql);
    tokens = scanSqlSync(sql);
  } catch (err) {
    const e = err as { message?: string; sqlDetails?: { cursorPosition?: number } };
    const pos = e.sqlDetails?.cursorPosition;
    // Backquoted names are MySQL's and SQLite's (a TypeORM or Knex migration for another database); say so
    // rather than quote the parser's error at the first backquote.
    if (/`[^`\n]+`/.test(sql)) return { ok: false, refusal: OTHER_DATABASE };
    // `[name]` where a name stands (not a subscript: `tags[1]`, `ARRAY[...]`) is SQL Server's quoting.
    if (/(^|[\s,(.=])\[[A-Za-z_][\w ]*\]/.test(sql)) return { ok: false, refusal: SQL_SERVER };
    return { ok: false, refusal: `The SQL does not parse: ${e.message ?? 'syntax error'}${pos !== undefined ? ` (at character ${pos})` : ''}.` };
  }
  const text = new SourceText(sql, tokens);
  const stmts = arr(get(tree, 'stmts'));
  if (stmts.length === 0) return { ok: false, refusal: 'The SQL holds no statement.' };
  const warnings: string[] = [];
  if (stmts.length > 1) warnings.push(`The SQL holds ${stmts.length} statements; only the first is advised.`);
  const stmt = get(stmts[0], 'stmt');
  const shapes: PgShape[] = [];
  const refusal = readStatement(stmt, text, shapes, true);
  if (refusal) return { ok: false, refusal };
  if (shapes.length === 0) return { ok: false, refusal: 'The statement has no table to index.' };
  return { ok: true, shapes, warnings };
}

// ---- source text ---------------------------------------------------------------------------------------

/** Byte offsets (the parser's) to string indexes, and token-based spans. */
class SourceText {
  private readonly bytes: ByteMap;
  readonly tokens: { start: number; end: number; text: string }[];

  constructor(readonly sql: string, rawTokens: { start: number; end: number }[]) {
    this.bytes = new ByteMap(sql);
    this.tokens = rawTokens.map((t) => {
      const start = this.char(t.start);
      const end = this.char(t.end);
      return { start, end, text: sql.slice(start, end) };
    });
  }

  char(byte: number): number {
    return this.bytes.char(byte);
  }

  /** The text span of a node: from its first location to the end of its last token, parentheses balanced. */
  span(node: unknown): Span | undefined {
    const locs: number[] = [];
    collectLocations(node, locs);
    if (locs.length === 0) return undefined;
    const start = this.char(Math.min(...locs));
    const last = this.char(Math.max(...locs));
    let ti = this.tokens.findIndex((t) => t.start <= last && last < t.end);
    if (ti < 0) ti = this.tokens.findIndex((t) => t.start >= last);
    if (ti < 0) return { start, end: this.sql.length };
    let si = this.tokens.findIndex((t) => t.start >= start);
    if (si < 0) si = 0;
    // Balance parentheses and brackets: extend the end over closers, the start over openers.
    let depth = 0;
    for (let i = si; i <= ti; i++) depth += delta(this.tokens[i]!.text);
    while (depth > 0 && ti + 1 < this.tokens.length) {
      ti++;
      depth += delta(this.tokens[ti]!.text);
    }
    // A trailing array-type suffix (::int[]) belongs to the expression.
    while (ti + 2 < this.tokens.length && this.tokens[ti + 1]!.text === '[' && this.tokens[ti + 2]!.text === ']') ti += 2;
    while (depth < 0 && si > 0) {
      si--;
      depth += delta(this.tokens[si]!.text);
    }
    return { start: this.tokens[si]!.start, end: this.tokens[ti]!.end };
  }

  slice(span: Span | undefined): string {
    return span ? this.sql.slice(span.start, span.end) : '';
  }
}

function delta(tok: string): number {
  return tok === '(' || tok === '[' ? 1 : tok === ')' || tok === ']' ? -1 : 0;
}

function collectLocations(node: unknown, out: number[]): void {
  if (Array.isArray(node)) {
    for (const n of node) collectLocations(n, out);
    return;
  }
  if (!isObj(node)) return;
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'location' || k === 'list_start') && typeof v === 'number' && v >= 0) out.push(v);
    else if (k === 'list_end' && typeof v === 'number' && v >= 0) out.push(v);
    else if (typeof v === 'object') collectLocations(v, out);
  }
}

// ---- statements ---------------------------------------------------------------------------------------

function readStatement(stmt: unknown, text: SourceText, out: PgShape[], top: boolean): string | undefined {
  if (!isObj(stmt)) return 'The statement is empty.';
  if ('SelectStmt' in stmt) {
    readSelect(stmt['SelectStmt'], text, out, top, undefined);
    return undefined;
  }
  if ('ExplainStmt' in stmt) return readStatement(get(stmt['ExplainStmt'], 'query'), text, out, false);
  // `DECLARE c CURSOR FOR SELECT ...`: the rows are the query's, read as the cursor is fetched.
  if ('DeclareCursorStmt' in stmt) return readStatement(get(stmt['DeclareCursorStmt'], 'query'), text, out, false);
  if ('InsertStmt' in stmt) {
    const sel = get(stmt['InsertStmt'], 'selectStmt');
    if (isObj(sel) && 'SelectStmt' in sel) readSelect(sel['SelectStmt'], text, out, false, undefined);
    if (out.length === 0) return 'An INSERT without a SELECT reads no rows, so it has no index advice.';
    return undefined;
  }
  if ('UpdateStmt' in stmt || 'DeleteStmt' in stmt) {
    const isUpdate = 'UpdateStmt' in stmt;
    const body = isUpdate ? stmt['UpdateStmt'] : stmt['DeleteStmt'];
    const shape = emptyShape(text.sql, isUpdate ? 'update' : 'delete', false);
    const scope = new Scope(undefined);
    const rel = get(body, 'relation');
    if (isObj(rel)) scope.add(tableOf(rel, 'target'), shape);
    for (const item of arr(get(body, isUpdate ? 'fromClause' : 'usingClause'))) addFrom(item, scope, shape, text, out);
    const where = get(body, 'whereClause');
    if (where !== undefined) readWhere(where, scope, shape, text, out, false);
    // `SET total = (SELECT sum(price) FROM items WHERE ...)`: the subquery is a read of its own.
    if (isUpdate) readSubqueries(get(body, 'targetList'), scope, text, out);
    out.push(shape);
    return undefined;
  }
  const kind = Object.keys(stmt)[0] ?? 'unknown';
  return `Only SELECT, UPDATE, DELETE and INSERT ... SELECT have index advice; this is ${kind.replace(/Stmt$/, '').toUpperCase()}.`;
}

function emptyShape(sql: string, statement: PgShape['statement'], rewritable: boolean): PgShape {
  return {
    sql, statement, tables: [], predicates: [], joins: [], orderBy: [], selectAll: [], referenced: {}, rewritable,
    clauses: { whereIsAnd: false, whereIsOr: false, end: sql.length }, maxParam: 0, outputNames: [], notes: [], warnings: [],
  };
}

class Scope {
  readonly tables: PgTable[] = [];
  constructor(readonly parent: Scope | undefined) {}

  add(t: PgTable, shape: PgShape): void {
    this.tables.push(t);
    shape.tables.push(t);
  }

  /** The table a column reference belongs to, searching outward; undefined when it cannot be told. */
  resolve(qualifier: string | undefined): { table?: PgTable; ambiguous: boolean; local: boolean } {
    if (qualifier !== undefined) {
      const t = this.tables.find((x) => x.key === qualifier || (x.alias === undefined && x.name === qualifier));
      if (t) return { table: t, ambiguous: false, local: true };
      if (!this.parent) return { ambiguous: false, local: false };
      return { ...this.parent.resolve(qualifier), local: false };
    }
    if (this.tables.length === 1) return { table: this.tables[0]!, ambiguous: false, local: true };
    if (this.tables.length === 0 && this.parent) {
      const r = this.parent.resolve(undefined);
      return { ...r, local: false };
    }
    return { ambiguous: this.tables.length > 1, local: true };
  }
}

function tableOf(rv: Record<string, unknown>, role: PgTable['role']): PgTable {
  const name = str(rv['relname']) ?? '?';
  const alias = str(get(rv['alias'], 'aliasname'));
  const schema = str(rv['schemaname']);
  const t: PgTable = { key: alias ?? name, name, role };
  if (alias !== undefined) t.alias = alias;
  if (schema !== undefined) t.schema = schema;
  return t;
}

function readSelect(sel: unknown, text: SourceText, out: PgShape[], top: boolean, parent: Scope | undefined): void {
  if (!isObj(sel)) return;
  for (const cte of arr(get(get(sel, 'withClause'), 'ctes'))) {
    const q = get(get(cte, 'CommonTableExpr'), 'ctequery');
    if (isObj(q) && 'SelectStmt' in q) readSelect(q['SelectStmt'], text, out, false, undefined);
  }
  const op = str(sel['op']);
  if (op !== undefined && op !== 'SETOP_NONE') {
    readSelect(get(sel, 'larg'), text, out, false, parent);
    readSelect(get(sel, 'rarg'), text, out, false, parent);
    return;
  }
  if (arr(sel['valuesLists']).length > 0) {
    // `VALUES ((SELECT id FROM t WHERE ...), $2)`: each subquery is a read of its own.
    readSubqueries(sel['valuesLists'], parent, text, out);
    return;
  }
  const hasWith = get(sel, 'withClause') !== undefined;
  const shape = emptyShape(text.sql, 'select', top && !hasWith);
  const scope = new Scope(parent);
  for (const item of arr(sel['fromClause'])) addFrom(item, scope, shape, text, out);
  if (scope.tables.length === 0) {
    // No table of its own (`SELECT EXISTS (SELECT 1 FROM t WHERE ...)`, `SELECT ... WHERE NOT EXISTS (...)`):
    // what it reads is in its subqueries, each advised on its own.
    readSubqueries([sel['targetList'], sel['whereClause']], parent, text, out);
    return;
  }
  // A subquery of the select list is advised on its own, its references to this query's tables one value per row.
  if (readSubqueries(sel['targetList'], scope, text, out)) shape.notes.push('A subquery of the select list is advised on its own.');

  // Select list: columns read, and whole-row reads.
  for (const target of arr(sel['targetList'])) {
    const rt = get(target, 'ResTarget');
    const val = get(rt, 'val');
    const name = str(get(rt, 'name'));
    const ref = get(val, 'ColumnRef');
    if (isObj(ref)) {
      const fields = arr(ref['fields']);
      if (fields.some((f) => isObj(f) && 'A_Star' in f)) {
        const q = fields.length > 1 ? str(get(get(fields[0], 'String'), 'sval')) : undefined;
        for (const t of q === undefined ? scope.tables : scope.tables.filter((x) => x.key === q)) if (!shape.selectAll.includes(t.key)) shape.selectAll.push(t.key);
        shape.outputNames.push('*');
        continue;
      }
      const col = str(get(fields[fields.length - 1], 'String', 'sval'));
      shape.outputNames.push(name ?? col ?? '?');
    } else {
      shape.outputNames.push(name ?? '?');
    }
  }

  const where = sel['whereClause'];
  if (where !== undefined) readWhere(where, scope, shape, text, out, shape.rewritable);

  for (const sb of arr(sel['sortClause'])) {
    const s = get(sb, 'SortBy');
    if (!isObj(s)) continue;
    let node = s['node'];
    const ordinal = num(get(get(node, 'A_Const'), 'ival', 'ival'));
    if (ordinal !== undefined) node = get(get(arr(sel['targetList'])[ordinal - 1], 'ResTarget'), 'val');
    const side = operand(node, scope, text);
    const dir = str(s['sortby_dir']);
    const nulls = str(s['sortby_nulls']);
    const desc = dir === 'SORTBY_DESC';
    if (side.kind !== 'column' || side.table === undefined) {
      shape.notes.push(`ORDER BY ${text.slice(text.span(s['node']))} is not a column of one table; no index can give that order.`);
      shape.orderBy.push({ column: text.slice(text.span(s['node'])), expression: true, desc, nullsFirst: nulls === 'SORTBY_NULLS_FIRST' || (nulls !== 'SORTBY_NULLS_LAST' && desc), explicitNulls: nulls !== 'SORTBY_NULLS_DEFAULT' && nulls !== undefined });
      continue;
    }
    const o: PgOrder = {
      table: side.table,
      column: side.column,
      desc,
      nullsFirst: nulls === 'SORTBY_NULLS_FIRST' || (nulls !== 'SORTBY_NULLS_LAST' && desc),
      explicitNulls: nulls === 'SORTBY_NULLS_FIRST' || nulls === 'SORTBY_NULLS_LAST',
    };
    if (side.expression) o.expression = true;
    shape.orderBy.push(o);
    if (dir === 'SORTBY_USING') shape.notes.push('ORDER BY ... USING an operator is read as ascending.');
  }
  const limit = sel['limitCount'];
  if (limit !== undefined) {
    const n = constNumber(limit);
    if (n !== undefined) shape.limit = n;
    else if (!isObj(get(limit, 'A_Const')) || get(limit, 'A_Const', 'isnull') !== true) shape.limitParam = text.slice(text.span(limit));
  }
  const offset = sel['limitOffset'];
  if (offset !== undefined) {
    const n = constNumber(offset);
    if (n !== undefined) {
      if (n > 0) shape.offset = n;
    } else {
      shape.offsetParam = text.slice(text.span(offset));
    }
  }
  for (const clause of ['groupClause', 'havingClause', 'distinctClause']) {
    if (arr(sel[clause]).length > 0 || (clause === 'havingClause' && sel[clause] !== undefined)) shape.rewritable = false;
  }

  // Every column read, for index-only scans.
  const refs: Record<string, Set<string>> = {};
  collectColumnRefs(sel, scope, refs);
  for (const [k, v] of Object.entries(refs)) shape.referenced[k] = [...v];
  shape.maxParam = maxParam(sel);
  if (shape.rewritable) locateClauses(shape, text, sel);
  out.push(shape);
}

function addFrom(item: unknown, scope: Scope, shape: PgShape, text: SourceText, out: PgShape[]): void {
  if (!isObj(item)) return;
  if ('RangeVar' in item && isObj(item['RangeVar'])) {
    scope.add(tableOf(item['RangeVar'], 'from'), shape);
    return;
  }
  if ('JoinExpr' in item) {
    const j = item['JoinExpr'];
    addFrom(get(j, 'larg'), scope, shape, text, out);
    const before = scope.tables.length;
    addFrom(get(j, 'rarg'), scope, shape, text, out);
    const outer = str(get(j, 'jointype')) !== 'JOIN_INNER';
    const quals = get(j, 'quals');
    if (quals !== undefined) {
      for (const c of flattenAnd(quals)) classify(c, scope, shape, text, out, undefined, outer ? 'outer' : 'inner');
    }
    const using = arr(get(j, 'usingClause')).map((u) => str(get(u, 'String', 'sval'))).filter((s): s is string => s !== undefined);
    const right = scope.tables[before];
    const left = scope.tables[before - 1];
    if (right && left) {
      for (const col of using) {
        shape.joins.push({ kind: outer ? 'outer' : 'inner', table: right.key, column: col, otherTable: left.key, otherColumn: col });
        shape.joins.push({ kind: outer ? 'outer' : 'inner', table: left.key, column: col, otherTable: right.key, otherColumn: col });
      }
    }
    return;
  }
  if ('RangeSubselect' in item) {
    const sub = get(item['RangeSubselect'], 'subquery', 'SelectStmt');
    // LATERAL sees the tables before it: its references to them are one value per outer row.
    const lateral = get(item['RangeSubselect'], 'lateral') === true;
    readSelect(sub, text, out, false, lateral ? scope : undefined);
    shape.notes.push(lateral ? 'A LATERAL subquery is advised on its own, its references to the tables before it read as one value per row of theirs.' : 'A subquery in FROM is advised on its own.');
    shape.rewritable = false;
    return;
  }
  shape.rewritable = false;
}

// ---- WHERE --------------------------------------------------------------------------------------------

function flattenAnd(node: unknown): unknown[] {
  const b = get(node, 'BoolExpr');
  if (isObj(b) && b['boolop'] === 'AND_EXPR') return arr(b['args']).flatMap(flattenAnd);
  return [node];
}

function readWhere(where: unknown, scope: Scope, shape: PgShape, text: SourceText, out: PgShape[], top: boolean): void {
  const b = get(where, 'BoolExpr');
  const isAnd = isObj(b) && b['boolop'] === 'AND_EXPR';
  const conjuncts = isAnd ? arr(b['args']) : [where];
  if (top) {
    shape.clauses.whereIsAnd = isAnd;
    shape.clauses.whereIsOr = isObj(b) && b['boolop'] === 'OR_EXPR';
  }
  conjuncts.forEach((c, i) => {
    for (const part of flattenAnd(c)) classify(part, scope, shape, text, out, top && flattenAnd(c).length === 1 ? i : undefined, 'where');
  });
}

type Operand =
  | { kind: 'column'; table?: string; column: string; expression?: boolean; local: boolean; ambiguous: boolean }
  | { kind: 'value'; text: string }
  | { kind: 'other' };

/** A side of a comparison: a column (or an expression over one column of one table), a value, or other. */
function operand(node: unknown, scope: Scope, text: SourceText): Operand {
  const refs: { table?: PgTable; column: string; ambiguous: boolean; local: boolean }[] = [];
  let hasSublink = false;
  walkRefs(node, (fields) => {
    const names = fields.map((f) => str(get(f, 'String', 'sval')));
    if (names.some((n) => n === undefined)) return;
    const column = names[names.length - 1]!;
    const qualifier = names.length >= 2 ? names[names.length - 2] : undefined;
    const r = scope.resolve(qualifier);
    const ref: { table?: PgTable; column: string; ambiguous: boolean; local: boolean } = { column, ambiguous: r.ambiguous, local: r.local };
    if (r.table) ref.table = r.table;
    refs.push(ref);
  }, () => {
    hasSublink = true;
  });
  if (hasSublink) return { kind: 'other' };
  if (refs.length === 0) return { kind: 'value', text: text.slice(text.span(node)) };
  const tables = new Set(refs.map((r) => r.table?.key ?? '?'));
  if (tables.size !== 1) return { kind: 'other' };
  const first = refs[0]!;
  const isPlain = isObj(node) && 'ColumnRef' in node;
  if (!isPlain && new Set(refs.map((r) => r.column)).size !== 1) return { kind: 'other' };
  const o: Operand = { kind: 'column', column: isPlain ? first.column : text.slice(text.span(node)), local: first.local, ambiguous: first.ambiguous };
  if (first.table) o.table = first.table.key;
  if (!isPlain) o.expression = true;
  return o;
}

function walkRefs(node: unknown, onRef: (fields: unknown[]) => void, onSublink: () => void): void {
  if (Array.isArray(node)) {
    for (const n of node) walkRefs(n, onRef, onSublink);
    return;
  }
  if (!isObj(node)) return;
  if ('SubLink' in node) {
    onSublink();
    return;
  }
  if ('ColumnRef' in node) {
    const fields = arr(get(node, 'ColumnRef', 'fields'));
    if (!fields.some((f) => isObj(f) && 'A_Star' in f)) onRef(fields);
    return;
  }
  for (const v of Object.values(node)) if (typeof v === 'object') walkRefs(v, onRef, onSublink);
}

const MIRRORED: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

const GIN_OPERATORS = new Set(['@>', '<@', '?', '?|', '?&', '&&', '@@', '@?']);

/** Classifies one conjunct: a predicate on one table, a join key, a sub-query, or something unindexable. */
function classify(node: unknown, scope: Scope, shape: PgShape, text: SourceText, out: PgShape[], conjunct: number | undefined, where: 'where' | 'inner' | 'outer'): void {
  const span = text.span(node);
  const source = text.slice(span);
  const push = (col: Extract<Operand, { kind: 'column' }>, kind: PgPredicateKind, detail: string, extra: Partial<PgPredicate> = {}) => {
    if (col.table === undefined) {
      if (col.ambiguous) shape.warnings.push(`Column ${col.column} in "${source}" is not qualified and the query reads several tables; qualify it to get advice for it.`);
      return;
    }
    const p: PgPredicate = { table: col.table, column: col.column, kind, detail, text: source, ...extra };
    if (col.expression) p.expression = true;
    if (span) p.span = span;
    if (conjunct !== undefined) p.conjunct = conjunct;
    shape.predicates.push(p);
  };

  if (isObj(node) && 'SubLink' in node) {
    readSublink(node['SubLink'], false, scope, shape, text, out);
    return;
  }
  const b = get(node, 'BoolExpr');
  if (isObj(b)) {
    if (b['boolop'] === 'NOT_EXPR') {
      const inner = arr(b['args'])[0];
      if (isObj(inner) && 'SubLink' in inner) {
        readSublink(inner['SubLink'], true, scope, shape, text, out);
        return;
      }
      shape.notes.push(`NOT (...) cannot use index bounds: ${source}.`);
      return;
    }
    if (b['boolop'] === 'OR_EXPR') {
      // OR of equalities on one column is an IN list; otherwise one index per branch (BitmapOr).
      const args = arr(b['args']);
      const sides = args.map((a) => equalityOf(a, scope, text));
      if (sides.every((s) => s !== undefined) && new Set(sides.map((s) => `${s!.col.table}.${s!.col.column}`)).size === 1) {
        push(sides[0]!.col, 'in', 'OR of =', { values: sides.length, valueTexts: sides.map((s) => s!.value) });
        return;
      }
      shape.notes.push(`The OR in "${source}" needs an index per branch (a BitmapOr) or a rewrite as UNION; it is left out of the composite index.`);
      return;
    }
    return;
  }
  // The parser's location of a NullTest or BooleanTest ends at IS, so the test's text is written out:
  // the operand as written (in parentheses when it is an expression), then the test's words.
  const testText = (col: Operand, arg: unknown, words: string): string => {
    const written = text.slice(text.span(arg));
    return `${col.kind === 'column' && col.expression ? `(${written})` : written} ${words}`;
  };
  const nt = get(node, 'NullTest');
  if (isObj(nt)) {
    const col = operand(nt['arg'], scope, text);
    const test = nt['nulltesttype'] === 'IS_NULL' ? 'IS NULL' : 'IS NOT NULL';
    if (col.kind === 'column') push(col, nt['nulltesttype'] === 'IS_NULL' ? 'equality' : 'range', test, { text: testText(col, nt['arg'], test) });
    return;
  }
  const bt = get(node, 'BooleanTest');
  if (isObj(bt)) {
    const col = operand(bt['arg'], scope, text);
    const t = str(bt['booltesttype']);
    if (col.kind === 'column') push(col, t === 'IS_TRUE' || t === 'IS_FALSE' ? 'equality' : 'unindexable', t ?? 'boolean test', t !== undefined ? { text: testText(col, bt['arg'], t.replace(/_/g, ' ')) } : {});
    return;
  }
  if (isObj(node) && 'ColumnRef' in node) {
    const col = operand(node, scope, text);
    if (col.kind === 'column') push(col, 'equality', 'boolean column');
    return;
  }
  const e = get(node, 'A_Expr');
  if (!isObj(e)) {
    shape.notes.push(`Not used for index bounds: ${source}.`);
    return;
  }
  const kind = str(e['kind']);
  const op = str(get(arr(e['name'])[arr(e['name']).length - 1], 'String', 'sval')) ?? '';
  let left = operand(e['lexpr'], scope, text);
  let right = operand(e['rexpr'], scope, text);
  let leftNode = e['lexpr'];
  let rightNode = e['rexpr'];
  let swapped = false;
  if (left.kind !== 'column' && right.kind === 'column' && kind === 'AEXPR_OP') {
    [left, right] = [right, left];
    [leftNode, rightNode] = [rightNode, leftNode];
    swapped = true;
  }
  if (left.kind !== 'column') {
    shape.notes.push(`Not used for index bounds: ${source}.`);
    return;
  }
  switch (kind) {
    case 'AEXPR_OP': {
      if (right.kind === 'column') {
        // A column of an enclosing query whose table is not part of this shape (a LATERAL subquery's or a
        // correlated subquery's outer row) is one value per outer row: to this shape it is a constant.
        if (right.table !== undefined && !right.local && !shape.tables.some((t) => t.key === right.table) && left.table !== undefined && !left.expression) {
          if (op === '=') push(left, 'equality', '= a column of the enclosing query');
          else if (['<', '>', '<=', '>='].includes(op)) push(left, 'range', `${op} a column of the enclosing query`);
          return;
        }
        if (op === '=' && right.table !== undefined && left.table !== undefined && right.table !== left.table && !left.expression && !right.expression) {
          const jk: PgJoin['kind'] = where === 'outer' ? 'outer' : 'inner';
          shape.joins.push({ kind: jk, table: left.table, column: left.column, otherTable: right.table, otherColumn: right.column });
          shape.joins.push({ kind: jk, table: right.table, column: right.column, otherTable: left.table, otherColumn: left.column });
        } else {
          shape.notes.push(`Compares two columns, not usable as index bounds: ${source}.`);
        }
        return;
      }
      if (right.kind !== 'value') return;
      if (op === '=') push(left, 'equality', '=');
      // "$1 < created_at" bounds created_at from below: the detail says it as the column sees it.
      else if (['<', '>', '<=', '>='].includes(op)) push(left, 'range', swapped ? MIRRORED[op]! : op);
      else if (op === '<>' || op === '!=') push(left, 'unindexable', '<> (a B-tree cannot seek a "not equal")');
      else if (GIN_OPERATORS.has(op)) push(left, 'gin', op, { operator: op });
      else if (op === '~' || op === '~*') push(left, 'unindexable', `regular expression ${op} (a pg_trgm GIN index can serve it)`, { trigram: true });
      else push(left, 'unindexable', `operator ${op}`);
      return;
    }
    case 'AEXPR_OP_ANY': {
      if (op !== '=') {
        push(left, op === '<' || op === '>' || op === '<=' || op === '>=' ? 'range' : 'unindexable', `${op} ANY`);
        return;
      }
      const values = arrayValues(rightNode, text);
      const extra: Partial<PgPredicate> = {};
      if (values) {
        extra.values = values.length;
        extra.valueTexts = values;
      } else {
        extra.arrayParamText = text.slice(text.span(rightNode));
      }
      if (values && values.length === 1) push(left, 'equality', '= ANY (one value)', extra);
      else push(left, 'in', '= ANY', extra);
      return;
    }
    case 'AEXPR_OP_ALL':
      push(left, 'unindexable', `${op} ALL`);
      return;
    case 'AEXPR_IN': {
      const items = arr(get(rightNode, 'List', 'items'));
      if (op !== '=') {
        push(left, 'unindexable', 'NOT IN');
        return;
      }
      const texts = items.map((i) => text.slice(text.span(i)));
      if (texts.length === 1) push(left, 'equality', 'IN (one value)', { values: 1, valueTexts: texts });
      else push(left, 'in', 'IN', { values: texts.length, valueTexts: texts });
      return;
    }
    case 'AEXPR_BETWEEN':
    case 'AEXPR_BETWEEN_SYM':
      push(left, 'range', 'BETWEEN');
      return;
    case 'AEXPR_NOT_BETWEEN':
    case 'AEXPR_NOT_BETWEEN_SYM':
      push(left, 'unindexable', 'NOT BETWEEN');
      return;
    case 'AEXPR_LIKE': {
      if (op === '!~~') {
        push(left, 'unindexable', 'NOT LIKE');
        return;
      }
      const pattern = str(get(rightNode, 'A_Const', 'sval', 'sval')) ?? str(get(rightNode, 'TypeCast', 'arg', 'A_Const', 'sval', 'sval'));
      if (pattern === undefined) push(left, 'range', 'LIKE with a parameter (a prefix only if the value has no leading wildcard)');
      else if (/^[%_]/.test(pattern)) push(left, 'unindexable', "LIKE '%...' (a B-tree cannot seek it; a pg_trgm GIN index can)", { trigram: true });
      else if (/^[^%_\\]+$/.test(pattern)) push(left, 'equality', 'LIKE without wildcard');
      else push(left, 'range', 'LIKE prefix');
      return;
    }
    case 'AEXPR_ILIKE':
      push(left, 'unindexable', op === '!~~*' ? 'NOT ILIKE' : 'ILIKE (an index on lower(column) with LIKE, or pg_trgm)', op === '!~~*' ? {} : { trigram: true });
      return;
    case 'AEXPR_SIMILAR':
      push(left, 'unindexable', 'SIMILAR TO');
      return;
    case 'AEXPR_DISTINCT':
    case 'AEXPR_NOT_DISTINCT':
      push(left, kind === 'AEXPR_NOT_DISTINCT' ? 'equality' : 'unindexable', kind === 'AEXPR_NOT_DISTINCT' ? 'IS NOT DISTINCT FROM' : 'IS DISTINCT FROM');
      return;
    default:
      shape.notes.push(`Not used for index bounds: ${source}.`);
  }
}

function equalityOf(node: unknown, scope: Scope, text: SourceText): { col: Extract<Operand, { kind: 'column' }>; value: string } | undefined {
  const e = get(node, 'A_Expr');
  if (!isObj(e) || e['kind'] !== 'AEXPR_OP') return undefined;
  if (str(get(arr(e['name'])[0], 'String', 'sval')) !== '=') return undefined;
  let l = operand(e['lexpr'], scope, text);
  let r = operand(e['rexpr'], scope, text);
  if (l.kind !== 'column') [l, r] = [r, l];
  if (l.kind !== 'column' || r.kind !== 'value') return undefined;
  return { col: l, value: r.text };
}

/** The values of an array literal: '{1,2,3}', ARRAY[1,2,3], or either with a cast; undefined for a parameter. */
function arrayValues(node: unknown, text: SourceText): string[] | undefined {
  let n = node;
  if (isObj(get(n, 'TypeCast'))) n = get(n, 'TypeCast', 'arg');
  const arrExpr = get(n, 'A_ArrayExpr');
  if (isObj(arrExpr)) return arr(arrExpr['elements']).map((el) => text.slice(text.span(el)));
  const s = str(get(n, 'A_Const', 'sval', 'sval'));
  if (s === undefined) return undefined;
  const body = s.trim();
  if (!body.startsWith('{') || !body.endsWith('}')) return undefined;
  const inner = body.slice(1, -1).trim();
  if (inner === '') return [];
  const items: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i]!;
    if (ch === '"' && inner[i - 1] !== '\\') quoted = !quoted;
    else if (ch === ',' && !quoted) {
      items.push(cur.trim());
      cur = '';
      continue;
    }
    cur += ch;
  }
  items.push(cur.trim());
  return items.map((v) => (/^-?\d+(\.\d+)?$/.test(v) ? v : `'${v.replace(/^"|"$/g, '').replace(/'/g, "''")}'`));
}

/** EXISTS / NOT EXISTS / IN (subquery): the subquery's tables join the scope as semi/anti sides. */
function readSublink(link: unknown, negated: boolean, scope: Scope, shape: PgShape, text: SourceText, out: PgShape[]): void {
  const type = str(get(link, 'subLinkType'));
  const sub = get(link, 'subselect', 'SelectStmt');
  if (!isObj(sub) || (type !== 'EXISTS_SUBLINK' && type !== 'ANY_SUBLINK')) {
    readSelect(sub, text, out, false, scope);
    shape.notes.push('A scalar subquery is advised on its own.');
    return;
  }
  const inner = new Scope(scope);
  const role: PgTable['role'] = negated ? 'anti' : 'semi';
  for (const item of arr(sub['fromClause'])) {
    if (isObj(item) && isObj(item['RangeVar'])) inner.add(tableOf(item['RangeVar'], role), shape);
    else addFrom(item, inner, shape, text, out);
  }
  const where = sub['whereClause'];
  const before = shape.joins.length;
  if (where !== undefined) for (const c of flattenAnd(where)) classify(c, inner, shape, text, out, undefined, 'inner');
  for (let i = before; i < shape.joins.length; i++) shape.joins[i]!.kind = negated ? 'anti' : 'semi';
  if (type === 'ANY_SUBLINK') {
    const test = operand(get(link, 'testexpr'), scope, text);
    const target = get(arr(sub['targetList'])[0], 'ResTarget', 'val');
    const col = operand(target, inner, text);
    if (test.kind === 'column' && col.kind === 'column' && test.table && col.table && !test.expression && !col.expression) {
      shape.joins.push({ kind: negated ? 'anti' : 'semi', table: col.table, column: col.column, otherTable: test.table, otherColumn: test.column });
      shape.joins.push({ kind: negated ? 'anti' : 'semi', table: test.table, column: test.column, otherTable: col.table, otherColumn: col.column });
    }
  }
}

/**
 * Reads each subquery written in an expression (not those inside it, which their own query reads) as a
 * query of its own, in the scope around it; whether there was one.
 */
function readSubqueries(node: unknown, scope: Scope | undefined, text: SourceText, out: PgShape[]): boolean {
  let found = false;
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) {
      n.forEach(walk);
      return;
    }
    if (!isObj(n)) return;
    if ('SubLink' in n) {
      const sub = get(n['SubLink'], 'subselect', 'SelectStmt');
      if (isObj(sub)) {
        found = true;
        readSelect(sub, text, out, false, scope);
      }
      walk(get(n['SubLink'], 'testexpr'));
      return;
    }
    for (const v of Object.values(n)) if (typeof v === 'object') walk(v);
  };
  walk(node);
  return found;
}

// ---- columns read, parameters, clause positions --------------------------------------------------------

function collectColumnRefs(node: unknown, scope: Scope, out: Record<string, Set<string>>): void {
  walkRefs(node, (fields) => {
    const names = fields.map((f) => str(get(f, 'String', 'sval')));
    if (names.some((n) => n === undefined)) return;
    const r = scope.resolve(names.length >= 2 ? names[names.length - 2] : undefined);
    if (!r.table) return;
    (out[r.table.key] ??= new Set()).add(names[names.length - 1]!);
  }, () => undefined);
}

function maxParam(node: unknown): number {
  let max = 0;
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) {
      n.forEach(walk);
      return;
    }
    if (!isObj(n)) return;
    const p = get(n, 'ParamRef', 'number');
    if (typeof p === 'number') max = Math.max(max, p);
    for (const v of Object.values(n)) if (typeof v === 'object') walk(v);
  };
  walk(node);
  return max;
}

const CLAUSE_WORDS = new Set(['WHERE', 'GROUP', 'HAVING', 'WINDOW', 'ORDER', 'LIMIT', 'OFFSET', 'FETCH', 'FOR', 'UNION', 'INTERSECT', 'EXCEPT', ';']);

/** Positions of WHERE (and its top-level conjuncts), ORDER BY and OFFSET at parenthesis depth 0. */
function locateClauses(shape: PgShape, text: SourceText, sel: Record<string, unknown>): void {
  const toks = text.tokens;
  const top: { i: number; word: string }[] = [];
  let depth = 0;
  let end = text.sql.length;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const d = delta(t.text);
    if (d < 0) depth += d;
    if (depth === 0) {
      const w = t.text.toUpperCase();
      if (w === ';') {
        end = t.start;
        break;
      }
      if (CLAUSE_WORDS.has(w)) top.push({ i, word: w });
    }
    if (d > 0) depth += d;
  }
  shape.clauses.end = end;
  const next = (after: number): number => {
    const n = top.find((t) => t.i > after && t.word !== 'WHERE');
    return n ? toks[n.i]!.start : end;
  };
  const where = top.find((t) => t.word === 'WHERE');
  if (where && sel['whereClause'] !== undefined) {
    const start = toks[where.i + 1]?.start ?? end;
    const stop = next(where.i);
    const span: Span = { start, end: trimEnd(text.sql, start, stop) };
    shape.clauses.where = span;
    // Split at top-level AND, skipping the AND of BETWEEN.
    const parts: Span[] = [];
    let partStart = start;
    let d = 0;
    let between = false;
    for (let i = where.i + 1; i < toks.length && toks[i]!.start < stop; i++) {
      const t = toks[i]!;
      const w = t.text.toUpperCase();
      const dd = delta(t.text);
      if (dd < 0) d += dd;
      if (d === 0 && w === 'BETWEEN') between = true;
      else if (d === 0 && w === 'AND') {
        if (between) between = false;
        else {
          parts.push({ start: partStart, end: trimEnd(text.sql, partStart, t.start) });
          partStart = toks[i + 1]?.start ?? stop;
        }
      }
      if (dd > 0) d += dd;
    }
    parts.push({ start: partStart, end: span.end });
    const nConj = shape.clauses.whereIsAnd ? arr(get(sel['whereClause'], 'BoolExpr', 'args')).length : 1;
    if (parts.length === nConj) shape.clauses.conjuncts = parts;
  }
  const order = top.find((t) => t.word === 'ORDER');
  if (order) shape.clauses.orderBy = { start: toks[order.i]!.start, end: trimEnd(text.sql, toks[order.i]!.start, next(order.i + 1)) };
  const off = top.find((t) => t.word === 'OFFSET');
  if (off) {
    const stop = top.find((t) => t.i > off.i);
    shape.clauses.offset = { start: toks[off.i]!.start, end: trimEnd(text.sql, toks[off.i]!.start, stop ? toks[stop.i]!.start : end) };
  }
}

function trimEnd(sql: string, start: number, end: number): number {
  let e = end;
  while (e > start && /\s/.test(sql[e - 1]!)) e--;
  return e;
}

// ---- JSON helpers ------------------------------------------------------------------------------------

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function get(v: unknown, ...path: string[]): unknown {
  let cur = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** An integer constant (A_Const ival; zero is printed as an empty ival). */
function constNumber(node: unknown): number | undefined {
  const c = get(node, 'A_Const');
  if (!isObj(c)) return undefined;
  if (isObj(c['ival'])) return num(get(c, 'ival', 'ival')) ?? 0;
  const f = str(get(c, 'fval', 'fval'));
  return f !== undefined ? Number(f) : undefined;
}

/**
 * The shapes of one SELECT read as one statement for a measurement that runs the whole text (a LATERAL or
 * correlated subquery is its own shape): their tables, filters, joins and orders together. Undefined when
 * they cannot be told apart: two shapes use one alias for different tables, or one is not a SELECT.
 */
export function mergedPgShape(shapes: readonly PgShape[]): PgShape | undefined {
  if (shapes.length === 0 || shapes.some((s) => s.statement !== 'select')) return undefined;
  if (shapes.length === 1) return shapes[0];
  const merged = emptyShape(shapes[0]!.sql, 'select', false);
  for (const s of shapes) {
    for (const t of s.tables) {
      const same = merged.tables.find((x) => x.key === t.key);
      if (same && same.name !== t.name) return undefined;
      if (!same) merged.tables.push(t);
    }
    merged.predicates.push(...s.predicates);
    merged.joins.push(...s.joins);
    merged.orderBy.push(...s.orderBy);
    for (const k of s.selectAll) if (!merged.selectAll.includes(k)) merged.selectAll.push(k);
    for (const [k, cols] of Object.entries(s.referenced)) merged.referenced[k] = [...new Set([...(merged.referenced[k] ?? []), ...cols])];
    merged.maxParam = Math.max(merged.maxParam, s.maxParam);
  }
  return merged;
}
