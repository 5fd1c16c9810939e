// Indexes and keys declared in SQL (schema files and migrations): CREATE TABLE (PRIMARY KEY, UNIQUE on a
// column or the table), CREATE [UNIQUE] INDEX, ALTER TABLE ... ADD [CONSTRAINT] PRIMARY KEY / UNIQUE,
// ADD COLUMN ... UNIQUE, DROP CONSTRAINT, DROP INDEX and DROP TABLE, read from PostgreSQL's own parse tree
// in the order they are written, so a later statement wins. Names not written are the ones PostgreSQL
// gives (orders_pkey, orders_email_key, orders_status_idx).

import { ByteMap } from '../sql/bytes';
import { parseSqlSync, scanSqlSync, sqlParserLoaded, type RawStatement } from '../sql/parser';
import type { DeclaredPgIndex, PgIndexColumn, RepositorySchema } from './types';

type Node = Record<string, unknown>;

/** Text that creates a table (CREATE [UNLOGGED|TEMP|FOREIGN...] TABLE). */
const CREATES_TABLE = /\bcreate\s+(?:[a-z]+\s+){0,3}table\b/i;
interface Constraint { contype?: string; conname?: string; keys?: Node[]; including?: Node[]; indexname?: string }
interface ColumnDef { colname?: string; constraints?: { Constraint?: Constraint }[] }
interface IndexElem { name?: string; expr?: Node; ordering?: string; nulls_ordering?: string }

/** Applies the DDL of one SQL text to `into`, statement by statement. */
export function readSqlSchema(text: string, source: string, into: RepositorySchema): void {
  if (!sqlParserLoaded()) {
    into.warnings.push(`${source}: the SQL parser is not loaded, so the file was not read.`);
    return;
  }
  const bytes = new ByteMap(text);
  let stmts: RawStatement[];
  try {
    stmts = parseSqlSync(text).stmts ?? [];
  } catch {
    // A file with one statement PostgreSQL does not take (a psql command, another dialect) still gives
    // the others: each piece between the scanner's semicolons is parsed alone.
    stmts = [];
    let skipped = 0;
    for (const piece of splitAtSemicolons(text, bytes)) {
      const read = parsePiece(piece.text);
      if (!read) {
        skipped++;
        if (CREATES_TABLE.test(piece.text)) into.partial?.push(`${source}: a statement that creates a table did not parse, so the tables the repository declares may be only some of them.`);
        continue;
      }
      for (const st of read.stmts) stmts.push({ ...st, stmt_location: piece.startByte + read.skippedBytes + (st.stmt_location ?? 0), stmt_len: st.stmt_len || read.length - (st.stmt_location ?? 0) });
    }
    if (skipped > 0) into.warnings.push(`${source}: ${skipped} statement${skipped === 1 ? '' : 's'} did not parse and ${skipped === 1 ? 'was' : 'were'} skipped.`);
  }
  for (const st of stmts) {
    const start = st.stmt_location ?? 0;
    const end = st.stmt_len ? start + st.stmt_len : bytes.byteLength;
    apply(st.stmt ?? {}, text.slice(bytes.char(start), bytes.char(end)), source, into);
  }
}

/**
 * A piece's statements; when it does not parse, again without its first lines (a psql command such as
 * `\connect` has no semicolon, so it sits in front of the next statement), a few lines at most.
 */
function parsePiece(piece: string): { stmts: RawStatement[]; skippedBytes: number; length: number } | undefined {
  let from = 0;
  for (let tries = 0; tries < 8 && from < piece.length; tries++) {
    const rest = piece.slice(from);
    try {
      const stmts = parseSqlSync(rest).stmts ?? [];
      return { stmts, skippedBytes: new ByteMap(piece.slice(0, from)).byteLength, length: new ByteMap(rest).byteLength };
    } catch {
      const nl = piece.indexOf('\n', from);
      if (nl < 0) return undefined;
      from = nl + 1;
    }
  }
  return undefined;
}

function splitAtSemicolons(text: string, bytes: ByteMap): { text: string; startByte: number }[] {
  let tokens: { start: number; end: number; tokenName: string }[];
  try {
    tokens = scanSqlSync(text);
  } catch {
    return [];
  }
  const out: { text: string; startByte: number }[] = [];
  let from = 0;
  for (const t of tokens) {
    if (t.tokenName !== 'ASCII_59') continue;
    out.push({ text: text.slice(bytes.char(from), bytes.char(t.start)), startByte: from });
    from = t.end;
  }
  if (from < bytes.byteLength) out.push({ text: text.slice(bytes.char(from)), startByte: from });
  return out;
}

function apply(stmt: Node, sql: string, source: string, into: RepositorySchema): void {
  const kind = Object.keys(stmt)[0];
  const body = (kind ? stmt[kind] : undefined) as Node | undefined;
  if (!kind || !body) return;
  // A table created inside a function or a DO block is not read: the tables declared are then only some.
  if ((kind === 'DoStmt' || kind === 'CreateFunctionStmt') && CREATES_TABLE.test(sql)) {
    into.partial?.push(`${source}: a function or DO block creates a table, which is not read, so the tables the repository declares may be only some of them.`);
    return;
  }
  if (kind === 'CreateStmt' || kind === 'CreateForeignTableStmt') {
    const def = (kind === 'CreateStmt' ? body : body['base']) as Node | undefined;
    const table = relname(def?.['relation']);
    if (!def || !table) return;
    // A temporary table lives for one session: it is no table of the schema.
    if ((def['relation'] as { relpersistence?: string } | undefined)?.relpersistence === 't') return;
    into.tableSources?.add(source);
    into.views?.delete(table);
    if (def['if_not_exists'] === true && into.tables.has(table)) return;
    into.tables.set(table, []);
    for (const el of (def['tableElts'] as Node[] | undefined) ?? []) {
      if (el['ColumnDef']) columnConstraints(table, el['ColumnDef'] as ColumnDef, source, into);
      if (el['Constraint']) addConstraint(table, el['Constraint'] as Constraint, source, into);
    }
  } else if (kind === 'ViewStmt') {
    const view = relname(body['view']);
    if (view) into.views?.set(view, 'view');
  } else if (kind === 'CreateTableAsStmt') {
    const name = relname((body['into'] as Node | undefined)?.['rel']);
    if (!name) return;
    if (body['objtype'] === 'OBJECT_MATVIEW') into.views?.set(name, 'materialized view');
    else if (!into.tables.has(name)) into.tables.set(name, []);
  } else if (kind === 'IndexStmt') {
    const table = relname(body['relation']);
    if (!table) return;
    const elems = ((body['indexParams'] as { IndexElem?: IndexElem }[] | undefined) ?? []).map((e) => e.IndexElem ?? {});
    const texts = elementTexts(sql);
    const columns: PgIndexColumn[] = elems.map((e, i) => {
      const c: PgIndexColumn = e.name !== undefined ? { column: e.name } : { expression: expressionText(texts.elements[i] ?? '') };
      if (e.ordering === 'SORTBY_DESC') c.desc = true;
      if (e.nulls_ordering === 'SORTBY_NULLS_FIRST') c.nullsFirst = true;
      if (e.nulls_ordering === 'SORTBY_NULLS_LAST') c.nullsFirst = false;
      return c;
    });
    const name = (body['idxname'] as string | undefined) ?? defaultName(table, columns.map((c) => c.column ?? 'expr'), 'idx');
    const list = into.tables.get(table) ?? [];
    if (body['if_not_exists'] === true && list.some((ix) => ix.name === name)) return;
    const include = ((body['indexIncludingParams'] as { IndexElem?: IndexElem }[] | undefined) ?? []).map((e) => e.IndexElem?.name).filter((n): n is string => n !== undefined);
    const ix: DeclaredPgIndex = { name, table, columns, source, method: (body['accessMethod'] as string | undefined) ?? 'btree' };
    if (body['unique'] === true) ix.unique = true;
    if (include.length > 0) ix.include = include;
    if (body['whereClause'] && texts.where !== undefined) ix.predicate = texts.where;
    put(into, table, ix);
  } else if (kind === 'AlterTableStmt') {
    const table = relname(body['relation']);
    if (!table || (body['objtype'] !== undefined && body['objtype'] !== 'OBJECT_TABLE')) return;
    for (const c of (body['cmds'] as { AlterTableCmd?: Node }[] | undefined) ?? []) {
      const cmd = c.AlterTableCmd;
      if (!cmd) continue;
      const def = cmd['def'] as Node | undefined;
      if (cmd['subtype'] === 'AT_AddConstraint' && def?.['Constraint']) addConstraint(table, def['Constraint'] as Constraint, source, into);
      else if (cmd['subtype'] === 'AT_AddColumn' && def?.['ColumnDef']) columnConstraints(table, def['ColumnDef'] as ColumnDef, source, into);
      else if (cmd['subtype'] === 'AT_DropConstraint' && typeof cmd['name'] === 'string') dropIndex(into, cmd['name'], table);
    }
  } else if (kind === 'DropStmt') {
    const type = body['removeType'];
    for (const o of (body['objects'] as Node[] | undefined) ?? []) {
      const items = ((o['List'] as { items?: Node[] } | undefined)?.items ?? []).map((i) => (i['String'] as { sval?: string } | undefined)?.sval);
      const name = items[items.length - 1];
      if (!name) continue;
      if (type === 'OBJECT_INDEX') dropIndex(into, name);
      else if (type === 'OBJECT_TABLE' || type === 'OBJECT_FOREIGN_TABLE') into.tables.delete(name);
      else if (type === 'OBJECT_VIEW' || type === 'OBJECT_MATVIEW') into.views?.delete(name);
    }
  } else if (kind === 'RenameStmt' && (body['renameType'] === 'OBJECT_VIEW' || body['renameType'] === 'OBJECT_MATVIEW')) {
    const from = relname(body['relation']);
    const to = body['newname'];
    const was = from !== undefined ? into.views?.get(from) : undefined;
    if (from && typeof to === 'string' && was) {
      into.views!.delete(from);
      into.views!.set(to, was);
    }
  } else if (kind === 'RenameStmt' && body['renameType'] === 'OBJECT_TABLE') {
    const from = relname(body['relation']);
    const to = body['newname'];
    if (from && typeof to === 'string' && into.tables.has(from)) {
      into.tables.set(to, into.tables.get(from)!.map((ix) => ({ ...ix, table: to })));
      into.tables.delete(from);
    }
  }
}

function relname(r: unknown): string | undefined {
  const name = (r as { relname?: unknown } | undefined)?.relname;
  return typeof name === 'string' ? name : undefined;
}

function columnConstraints(table: string, col: ColumnDef, source: string, into: RepositorySchema): void {
  if (!col.colname) return;
  for (const c of col.constraints ?? []) if (c.Constraint) addConstraint(table, { ...c.Constraint, keys: [{ String: { sval: col.colname } }] }, source, into);
}

function addConstraint(table: string, c: Constraint, source: string, into: RepositorySchema): void {
  if (c.contype !== 'CONSTR_PRIMARY' && c.contype !== 'CONSTR_UNIQUE') return;
  const cols = (c.keys ?? []).map((k) => (k['String'] as { sval?: string } | undefined)?.sval).filter((s): s is string => s !== undefined);
  // ADD CONSTRAINT ... PRIMARY KEY USING INDEX x turns an index that exists into the key.
  if (cols.length === 0 && c.indexname) {
    const existing = into.tables.get(table)?.find((ix) => ix.name === c.indexname);
    if (existing && c.contype === 'CONSTR_PRIMARY') existing.primary = true;
    if (existing) existing.unique = true;
    return;
  }
  if (cols.length === 0) return;
  const primary = c.contype === 'CONSTR_PRIMARY';
  const name = c.conname ?? (primary ? `${table}_pkey` : defaultName(table, cols, 'key'));
  const ix: DeclaredPgIndex = { name, table, columns: cols.map((column) => ({ column })), unique: true, source, method: 'btree' };
  if (primary) ix.primary = true;
  const include = (c.including ?? []).map((k) => (k['String'] as { sval?: string } | undefined)?.sval).filter((s): s is string => s !== undefined);
  if (include.length > 0) ix.include = include;
  // A table has one primary key: a second declaration (ALTER TABLE ... ADD PRIMARY KEY) replaces it.
  if (primary) into.tables.set(table, (into.tables.get(table) ?? []).filter((x) => !x.primary));
  put(into, table, ix);
}

function put(into: RepositorySchema, table: string, ix: DeclaredPgIndex): void {
  const list = (into.tables.get(table) ?? []).filter((x) => x.name !== ix.name);
  list.push(ix);
  into.tables.set(table, list);
}

function dropIndex(into: RepositorySchema, name: string, table?: string): void {
  for (const [t, list] of into.tables) {
    if (table !== undefined && t !== table) continue;
    const kept = list.filter((ix) => ix.name !== name);
    if (kept.length !== list.length) into.tables.set(t, kept);
  }
}

/** PostgreSQL's own choice of name: table, columns and a suffix, cut to 63 bytes. */
function defaultName(table: string, cols: string[], suffix: string): string {
  return `${table}_${cols.join('_')}_${suffix}`.slice(0, 63);
}

/**
 * The text of each element of a CREATE INDEX's column list and of its WHERE, found with PostgreSQL's
 * scanner (so parentheses and commas inside strings do not count): the parse tree does not keep the text
 * of an expression.
 */
function elementTexts(sql: string): { elements: string[]; where?: string } {
  let tokens: { start: number; end: number; tokenName: string }[];
  try {
    tokens = scanSqlSync(sql);
  } catch {
    return { elements: [] };
  }
  const bytes = new ByteMap(sql);
  // The scanner names punctuation but not keywords: a keyword is known by its text.
  const word = (t: { start: number; end: number }) => sql.slice(bytes.char(t.start), bytes.char(t.end)).toUpperCase();
  const elements: string[] = [];
  let i = tokens.findIndex((t) => word(t) === 'ON');
  if (i < 0) return { elements };
  while (i < tokens.length && tokens[i]!.tokenName !== 'ASCII_40') i++;
  let depth = 0;
  let from = -1;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.tokenName === 'ASCII_40') {
      depth++;
      if (depth === 1) {
        from = t.end;
        continue;
      }
    } else if (t.tokenName === 'ASCII_41') {
      depth--;
      if (depth === 0) {
        elements.push(sql.slice(bytes.char(from), bytes.char(t.start)).trim());
        break;
      }
    } else if (t.tokenName === 'ASCII_44' && depth === 1) {
      elements.push(sql.slice(bytes.char(from), bytes.char(t.start)).trim());
      from = t.end;
    }
  }
  const where = tokens.slice(i).find((t) => word(t) === 'WHERE');
  return { elements, ...(where ? { where: sql.slice(bytes.char(where.end)).replace(/[\s;]+$/, '').trim() } : {}) };
}

/** `(lower(email)) DESC` and `lower(email) text_pattern_ops` give `lower(email)`. */
function expressionText(element: string): string {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < element.length; i++) {
    const ch = element[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) {
      const whole = element.slice(0, i + 1);
      return whole.startsWith('(') ? whole.slice(1, -1).trim() : whole;
    }
  }
  return element;
}
