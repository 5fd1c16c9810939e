// Stand-ins for the parts of a statement its code does not show. A `${...}` read as a $n parameter is a
// value in most places, but where the grammar wants a name (`FROM ${table}`) or a whole piece of SQL (`WHERE
// ${conditions}`, `SET ${assignments}`, `VALUES ${rows}`, a clause built by a helper of another module),
// the statement does not parse or reads as something it is not. Such parts are given what their place in
// the grammar can take and the rest of the statement is analysed: a name after the expression as
// written, a condition that is always true, nothing for a clause, a row of DEFAULTs, an assignment of a
// column the statement names to itself. None of those can become an index's key (TRUE, DEFAULT and an
// assignment's target are never read as one), and the hover says which part was not read.

import { ByteMap } from '../../sql/bytes';
import { parseSqlSync, scanSqlSync, sqlParserLoaded } from '../../sql/parser';
import { replaceInSql } from './ranges';
import { quoteIdent } from '../../postgres/names';
import type { FoundSqlQuery, SqlParameter } from './types';

/** The last name in what is written (`tables.orders` gives orders), quoted where PostgreSQL would read a keyword (`table`). */
export function standInName(text: string): string {
  return quoteIdent(standInBare(text));
}

/** The stand-in's name as the parser reads it (unquoted): of a list joined in place, the list's (`cols.join(', ')` gives cols). */
export function standInBare(text: string): string {
  let t = text;
  for (let i = 0; i < 3; i++) t = t.replace(/\.(join|map|toString|trim)\((?:[^()]|\([^()]*\))*\)\s*$/, '');
  return (/([A-Za-z_][A-Za-z0-9_]*)\W*$/.exec(t)?.[1] ?? 'name').toLowerCase();
}

/** An expression as a hover quotes it: on one line, and cut when long. */
export function quoted(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return `\${${one.length > 60 ? `${one.slice(0, 57)}...` : one}}`;
}

export function standInWarning(texts: string[]): string {
  const unique = [...new Set(texts)];
  return `${unique.map(quoted).join(', ')} ${unique.length === 1 ? 'names' : 'name'} a schema, table or column chosen at run time; ${unique.length === 1 ? 'it was' : 'they were'} read as ${unique.map(standInName).join(', ')} to analyse the rest.`;
}

export function parses(sql: string): boolean {
  try {
    parseSqlSync(sql);
    return true;
  } catch {
    return false;
  }
}

/** What a `${...}` stands for, by its place in the statement. */
type Role = 'name' | 'condition' | 'order' | 'assignments' | 'values' | 'clause' | 'subquery' | 'insert';

const ROLE_WORDS: Record<Exclude<Role, 'name'>, string> = {
  condition: 'a condition',
  order: 'the order',
  assignments: 'assignments',
  values: 'the rows',
  clause: 'a clause',
  subquery: 'a subquery',
  insert: 'the columns and rows',
};

interface Tok {
  start: number;
  end: number;
  name: string;
  /** The token's text in lower case, and as written. */
  w: string;
  text: string;
}

/** Words after which a whole condition stands. */
const CONDITION_BEFORE = new Set(['where', 'and', 'or', 'having', 'on']);
/** Words that end a condition or a clause. */
const ENDS = new Set([';', ')', 'and', 'or', 'order', 'group', 'limit', 'offset', 'returning', 'having', 'window', 'union', 'except', 'intersect', 'for', 'fetch']);
/** Words a clause starts with, besides the ends. */
const CLAUSE_START = new Set(['where', 'join', 'left', 'right', 'inner', 'full', 'cross', 'natural', 'on']);
/** Words and signs after which an expression is still to come, so what follows is not a clause of its own. */
const EXPECTS = new Set(['select', 'from', 'where', 'and', 'or', 'not', 'on', 'set', 'values', 'by', 'in', 'is', 'as', 'join', 'into', 'update',
  'using', 'table', 'distinct', 'case', 'when', 'then', 'else', 'like', 'ilike', 'between', 'limit', 'offset', 'having', 'returning', 'with', '(', ',']);
/** Words that end a SET list when reading back from inside it. */
const NOT_SET = new Set(['where', 'from', 'select', 'values', 'returning', 'on', 'into', 'update', 'with', 'order', 'group', 'limit', 'join', 'having']);
/** Words after which a name stands. */
const NAME_BEFORE = new Set(['from', 'join', 'update', 'into', 'table', 'using', 'as']);

/**
 * The statement with each `${...}` that cannot be a value given a stand-in by its place in the grammar:
 * applied when the statement does not parse as it is, and for whole conditions and orders even when it
 * does (a `WHERE $1` parses but says nothing of the condition the code builds). Unchanged when no
 * stand-in makes it parse, or when what is left would read no table (its FROM was the unknown part).
 */
export function withStandIns(found: FoundSqlQuery): FoundSqlQuery {
  if (found.params.length === 0 || !sqlParserLoaded()) return found;
  const q = withinNames(found);
  if (q.params.length === 0) return q;
  const parsed = parses(q.sql);
  // Most statements parse and have no $n where a whole condition or order stands: nothing to scan for.
  if (parsed && !/\b(where|and|or|having|on|by)\s+\$\d/i.test(q.sql)) return q;
  const toks = tokens(q.sql);
  if (!toks) return q;
  const byN = new Map(q.params.map((p) => [p.n, p]));
  // Token indexes of the $n that stand for a `${...}` (not those written in the SQL itself).
  const holes = toks.flatMap((t, i) => (t.name === 'PARAM' && byN.has(Number(t.w.slice(1))) ? [i] : []));
  if (holes.length === 0) return q;
  const roles = new Map<number, Role>();
  for (const i of holes) {
    const role = roleOf(q.sql, toks, i);
    if (role && (!parsed || role === 'condition' || role === 'order')) roles.set(i, role);
  }
  if (parsed && roles.size === 0) return q;
  // Where the first reading still does not parse, the $n the parser stopped at is read as a clause left out.
  let edits = editsFor(toks, roles, byN);
  for (let round = 0; edits && round < 8; round++) {
    const out = render(q.sql, edits);
    const stop = errorAt(out.sql);
    if (stop === undefined) break;
    const at = holes.find((i) => !roles.has(i) && out.at(toks[i]!.start) <= stop && stop < out.at(toks[i]!.end));
    if (at === undefined) return q;
    roles.set(at, 'clause');
    edits = editsFor(toks, roles, byN);
  }
  if (!edits) return q;
  const out = replaceInSql(q, edits);
  if (!parses(out.sql) || losesFrom(q.sql, out.sql, [...roles.values()].some((r) => r !== 'name'))) return q;
  const read = new Set(holes.filter((i) => roles.has(i)).map((i) => Number(toks[i]!.w.slice(1))));
  const left = holes.filter((i) => !roles.has(i)).map((i) => Number(toks[i]!.w.slice(1)));
  out.params = q.params.filter((p) => !read.has(p.n) || left.includes(p.n));
  const named: string[] = [];
  const unknown: string[] = [];
  for (const [i, role] of [...roles].sort((a, b) => a[0] - b[0])) {
    const p = byN.get(Number(toks[i]!.w.slice(1)))!;
    if (role === 'name') named.push(p.text);
    else unknown.push(`${quoted(p.text)} (${ROLE_WORDS[role]})`);
  }
  out.warnings = [...q.warnings];
  if (named.length > 0) {
    out.warnings.push(standInWarning(named));
    out.standInNames = [...new Set([...(q.standInNames ?? []), ...named.map(standInBare)])];
  }
  if (unknown.length > 0) {
    const list = [...new Set(unknown)];
    out.warnings.push(`The SQL of ${list.length === 1 ? list[0] : `${list.slice(0, -1).join(', ')} and ${list.at(-1)!}`} is built where this file does not show it; the statement was read without it, so the advice does not cover it.`);
  }
  return out;
}

/**
 * A `${...}` inside a name (`"${table}"`, `orders_${year}`, `"Orders_${year}"`) is part of that name, chosen at
 * run time: the name is read with the stand-in in it, and the whole name is one the advice never suggests
 * an index on. Read as a value it would be a name nothing has (`orders_$2`).
 */
function withinNames(q: FoundSqlQuery): FoundSqlQuery {
  if (!/[\w"]\$\d|\$\d+("|[A-Za-z_])/.test(q.sql)) return q;
  const toks = tokens(q.sql);
  if (!toks) return q;
  const byN = new Map(q.params.map((p) => [p.n, p]));
  const edits: Edit[] = [];
  const texts: string[] = [];
  const names: string[] = [];
  const read = new Set<number>();
  for (let i = 0; i < toks.length; i++) {
    let t = toks[i]!;
    // `${filter}s`, `${prefix}_orders`: the scanner reads the hole and the name written on after it as two tokens.
    const after = toks[i + 1];
    if (t.name === 'PARAM' && byN.has(Number(t.w.slice(1))) && after && after.start === t.end && /^[A-Za-z_]/.test(after.text)) {
      t = { ...after, start: t.start, name: 'IDENT', text: t.text + after.text, w: (t.text + after.text).toLowerCase() };
      i++;
    }
    if (t.name !== 'IDENT' || !/\$\d/.test(t.text)) continue;
    let holes = 0;
    const text = t.text.replace(/\$(\d+)(?!\d)/g, (m: string, d: string) => {
      const p = byN.get(Number(d));
      if (!p) return m;
      holes++;
      read.add(p.n);
      texts.push(p.text);
      return standInBare(p.text);
    });
    if (holes === 0) continue;
    edits.push({ start: t.start, end: t.end, text });
    names.push(text);
  }
  if (edits.length === 0) return q;
  const out = replaceInSql(q, edits);
  out.params = q.params.filter((p) => !read.has(p.n));
  const unique = [...new Set(texts)];
  out.warnings = [...q.warnings, `${unique.map(quoted).join(', ')} ${unique.length === 1 ? 'names' : 'name'} a schema, table or column chosen at run time, or a part of one; ${unique.length === 1 ? 'it was' : 'they were'} read as ${[...new Set(names)].join(', ')} to analyse the rest.`];
  // As the parser reads them: a quoted name as written, any other in lower case.
  const bare = names.map((n) => (n.startsWith('"') ? n.slice(1, -1).replace(/""/g, '"') : n).toLowerCase());
  out.standInNames = [...new Set([...(q.standInNames ?? []), ...bare])];
  return out;
}

function tokens(sql: string): Tok[] | undefined {
  let raw;
  try {
    raw = scanSqlSync(sql);
  } catch {
    return undefined;
  }
  const bytes = new ByteMap(sql);
  const out: Tok[] = [];
  for (const t of raw) {
    if (t.tokenName === 'SQL_COMMENT' || t.tokenName === 'C_COMMENT') continue;
    const start = bytes.char(t.start);
    const end = bytes.char(t.end);
    const text = sql.slice(start, end);
    out.push({ start, end, name: t.tokenName, w: text.toLowerCase(), text });
  }
  return out;
}

function roleOf(sql: string, toks: Tok[], i: number): Role | undefined {
  const prev = toks[i - 1]?.w ?? '';
  const prev2 = toks[i - 2]?.w ?? '';
  const next = toks[i + 1];
  const nw = next?.w ?? '';
  const ends = !next || ENDS.has(nw) || next.name === 'PARAM';
  const inSet = inSetList(toks, i);
  if (nw === '.' || prev === '.' || NAME_BEFORE.has(prev) || inInsertColumns(sql, toks[i]!.start) || inConflictTarget(toks, i) || inFromList(toks, i) || (inSet && nw === '=')) return 'name';
  const listEnds = !next || [',', 'where', 'from', 'returning', ';', ')'].includes(nw);
  if (inSet && (prev === 'set' || prev === ',') && listEnds) return 'assignments';
  // `UPDATE t ${set} WHERE ...`: the whole SET clause.
  if (prev2 === 'update' && ['IDENT', 'PARAM'].includes(toks[i - 1]!.name) && listEnds && nw !== ',') return 'assignments';
  if (prev === 'values' && (!next || [';', ')', 'returning', 'on'].includes(nw))) return 'values';
  // `INSERT INTO t ${sql(row)}`: postgres.js writes the columns and the row there.
  if (prev2 === 'into' && toks[i - 3]?.w === 'insert' && /^(\w+|"[^"]+")$/.test(prev) && (!next || [';', 'returning', 'on'].includes(nw))) return 'insert';
  // `WITH x AS (${query})`, `FROM (${query}) s`: a whole query built elsewhere.
  if (prev === '(' && nw === ')' && ['as', 'from', 'join', 'exists', 'lateral'].includes(prev2)) return 'subquery';
  if (prev === 'by' && prev2 === 'order' && ends && nw !== 'and' && nw !== 'or') return 'order';
  if (CONDITION_BEFORE.has(prev) && ends) return 'condition';
  const prevTok = toks[i - 1];
  const afterExpression = prevTok !== undefined && !EXPECTS.has(prev) && (prevTok.name !== 'Op' && !/^[-+*/<>=~!@#%^&|?:]+$/.test(prev) || prev === '*');
  if (afterExpression && (ends || CLAUSE_START.has(nw))) return 'clause';
  return undefined;
}

/** Whether token i stands at the top level of an UPDATE's (or ON CONFLICT's) SET list. */
function inSetList(toks: Tok[], i: number): boolean {
  let depth = 0;
  for (let j = i - 1; j >= 0; j--) {
    const w = toks[j]!.w;
    if (w === ')') depth++;
    else if (w === '(') {
      if (--depth < 0) return false;
    } else if (depth === 0) {
      if (w === 'set') return true;
      if (NOT_SET.has(w)) return false;
    }
  }
  return false;
}

/** Whether token i, after a comma, is another table of a FROM list (`FROM nodes AS p, ${table} AS c`). */
function inFromList(toks: Tok[], i: number): boolean {
  if (toks[i - 1]?.w !== ',') return false;
  for (let j = i - 2; j >= 0; j--) {
    const t = toks[j]!;
    if (t.w === 'from') return true;
    if (t.w !== ',' && t.w !== '.' && t.w !== 'as' && t.name !== 'IDENT' && t.name !== 'PARAM') return false;
  }
  return false;
}

/** Whether token i is inside `ON CONFLICT (a, b)`, where only column names stand. */
function inConflictTarget(toks: Tok[], i: number): boolean {
  for (let j = i - 1; j >= 1; j--) {
    const w = toks[j]!.w;
    if (w === '(') return toks[j - 1]!.w === 'conflict';
    if (w !== ',' && toks[j]!.name !== 'PARAM' && toks[j]!.name !== 'IDENT') return false;
  }
  return false;
}

/** Whether a position is inside the column list of `INSERT INTO t (a, b)`, where only names may stand. */
function inInsertColumns(sql: string, at: number): boolean {
  const head = /\binsert\s+into\s+[^\s(]+\s*\(([^()]*)$/i.exec(sql.slice(Math.max(0, at - 400), at));
  return head !== null && /^\$\d*\s*[,)]/.test(sql.slice(at));
}

type Edit = { start: number; end: number; text: string };

function editsFor(toks: Tok[], roles: Map<number, Role>, byN: Map<number, SqlParameter>): Edit[] | undefined {
  const out: Edit[] = [];
  for (const [i, role] of roles) {
    const t = toks[i]!;
    const p = byN.get(Number(t.w.slice(1)))!;
    switch (role) {
      case 'name':
        out.push({ start: t.start, end: t.end, text: standInName(p.text) });
        break;
      case 'condition':
        out.push({ start: t.start, end: t.end, text: 'TRUE' });
        break;
      case 'order':
        out.push({ start: toks[i - 2]!.start, end: t.end, text: '' });
        break;
      case 'clause':
        out.push({ start: t.start, end: t.end, text: '' });
        break;
      case 'insert':
        out.push({ start: t.start, end: t.end, text: 'DEFAULT VALUES' });
        break;
      case 'subquery':
        out.push({ start: t.start, end: t.end, text: 'SELECT NULL' });
        break;
      case 'values':
        out.push({ start: t.start, end: t.end, text: `(${Array.from({ length: toks[i - 2]?.w === '(' ? 1 : insertArity(toks, i) }, () => (toks[i - 2]?.w === '(' ? 'NULL' : 'DEFAULT')).join(', ')})` });
        break;
      case 'assignments': {
        // Beside other assignments it is left out with its comma; alone, a column is set to itself.
        if (toks[i - 1]!.w === ',') out.push({ start: toks[i - 1]!.start, end: t.end, text: '' });
        else if (toks[i + 1]?.w === ',') out.push({ start: t.start, end: toks[i + 1]!.end, text: '' });
        else {
          // With no column named, any other would be a guess the statement's table may not have.
          const col = namedColumn(toks, i);
          if (col !== undefined) out.push({ start: t.start, end: t.end, text: `${toks[i - 1]!.w === 'set' ? '' : 'SET '}${col} = ${col}` });
          else if (toks[i - 1]!.w === 'set' && toks[i - 2]?.w === 'update' && toks[i - 3]?.w === 'do') {
            // An upsert's `DO UPDATE SET ${sets}`, with its WHERE: the action on a conflict reads no rows to index, so
            // it is read as DO NOTHING.
            out.push({ start: toks[i - 2]!.start, end: conflictActionEnd(toks, i), text: 'NOTHING' });
          } else return undefined;
        }
        break;
      }
    }
  }
  // Two edits of one comma (`$1, $2` both left out) keep the first.
  out.sort((a, b) => a.start - b.start);
  return out.filter((e, k) => k === 0 || e.start >= out[k - 1]!.end);
}

/** Where the action of `ON CONFLICT ... DO UPDATE SET` that token i stands in ends: before RETURNING or `;`, or at the end. */
function conflictActionEnd(toks: Tok[], i: number): number {
  let depth = 0;
  for (let j = i + 1; j < toks.length; j++) {
    const w = toks[j]!.w;
    if (w === '(') depth++;
    else if (w === ')') depth--;
    if (depth < 0 || (depth === 0 && (w === 'returning' || w === ';'))) return toks[j - 1]!.end;
  }
  return toks[toks.length - 1]!.end;
}

/** The number of columns an INSERT names before token i (its VALUES), 1 when it names none. */
function insertArity(toks: Tok[], i: number): number {
  let j = i - 1;
  while (j >= 0 && toks[j]!.w !== ')' && toks[j]!.w !== 'into') j--;
  if (j < 0 || toks[j]!.w !== ')') return 1;
  let n = 1;
  let depth = 0;
  for (j--; j >= 0; j--) {
    const w = toks[j]!.w;
    if (w === ')') depth++;
    else if (w === '(' && depth-- === 0) return n;
    else if (w === ',' && depth === 0) n++;
  }
  return 1;
}

/** A column the statement's WHERE or RETURNING names unqualified after token i: one its table has. */
function namedColumn(toks: Tok[], i: number): string | undefined {
  let clause = false;
  for (let j = i + 1; j < toks.length; j++) {
    const t = toks[j]!;
    if (t.w === 'where' || t.w === 'returning') clause = true;
    else if (clause && isColumnName(toks, j) && toks[j + 1]?.w !== '.' && toks[j + 1]?.w !== '(' && toks[j - 1]?.w !== '.' && toks[j - 1]?.w !== '::') return t.text;
  }
  return undefined;
}

/**
 * Whether token j is a column's name: an identifier, or a word the scanner reads as a keyword that
 * PostgreSQL takes as a name where a comparison follows it (`WHERE name = $1`, `AND state IN (...)`).
 */
function isColumnName(toks: Tok[], j: number): boolean {
  const t = toks[j]!;
  if (t.name === 'IDENT') return true;
  return /^[a-z_][a-z0-9_]*$/.test(t.w) && ['where', 'and', 'or', '('].includes(toks[j - 1]?.w ?? '') && /^(=|<>|!=|<|>|<=|>=|in|is|like|ilike)$/.test(toks[j + 1]?.w ?? '');
}

/** The SQL with edits applied, and where a position of the original now is. */
function render(sql: string, edits: Edit[]): { sql: string; at: (pos: number) => number } {
  let out = '';
  let from = 0;
  const moves: [number, number][] = [];
  for (const e of edits) {
    out += sql.slice(from, e.start);
    moves.push([e.end, out.length + e.text.length - e.end]);
    out += e.text;
    from = e.end;
  }
  out += sql.slice(from);
  return {
    sql: out,
    at: (pos) => {
      let shift = 0;
      for (const [end, d] of moves) if (pos >= end) shift = d;
      return pos + shift;
    },
  };
}

/** Where the parser stopped reading a text (a string index), or undefined when it parses. */
function errorAt(sql: string): number | undefined {
  try {
    parseSqlSync(sql);
    return undefined;
  } catch (e) {
    const byte = (e as { sqlDetails?: { cursorPosition?: number } }).sqlDetails?.cursorPosition;
    return byte === undefined ? -1 : new ByteMap(sql).char(byte);
  }
}

/**
 * A SELECT left with no FROM where its tables may have been in a part not read (`SELECT count(*)
 * ${from}`), so nothing of it could be analysed. A SELECT that never had one and lost only names (`SELECT
 * ${schema}.add_job(...)`, a call of a function in a schema chosen at run time) loses nothing.
 */
function losesFrom(before: string, after: string, clauseLeftOut: boolean): boolean {
  const noFrom = (sql: string) => {
    const toks = tokens(sql);
    return toks !== undefined && toks[0]?.w === 'select' && !toks.some((t) => t.w === 'from');
  };
  return noFrom(after) && (clauseLeftOut || !noFrom(before));
}
