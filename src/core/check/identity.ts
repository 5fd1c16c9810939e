// The identity of a query in the lock and in code scanning: its engine, its file (relative to the
// repository, '/' separated), the function or export it is written in when there is one, and its
// normalised shape (literal values taken out, spacing and keyword case folded). Never the line number: a
// query keeps its identity when code above it moves, and two queries of one shape in one scope are told
// apart by their order (`#2`).

import { parse as babelParse } from '@babel/parser';
import type { MongoCommand } from '../query/mongoShell';
import { scriptParseOptions } from '../query/find/scriptIndex';
import { pushChildren, type BNode } from '../query/find/syntax';
import type { ScriptDialect } from '../query/find/types';
import { scanSqlSync } from '../sql/parser';
import { stableHash } from './hash';

export interface QueryIdentity {
  engine: 'mongodb' | 'postgres';
  /** Repository-relative, '/' separated. */
  file: string;
  /** The enclosing function, method or exported name (`OrderRepo.byCustomer`), when the query is in one. */
  scope?: string;
  /** The normalised query: see sqlShape and mongoQueryShape. */
  shape: string;
}

/** The key of a query in the lock: readable, sortable, and the same whatever line the query is on. */
export function identityKey(id: QueryIdentity, ordinal: number): string {
  return `${id.file} ${id.engine} ${id.scope ?? '-'} ${stableHash(id.shape)}${ordinal > 1 ? ` #${ordinal}` : ''}`;
}

/** Keys for a file's queries in text order: the second query of one identity gets `#2`, and so on. */
export function identityKeys(ids: readonly QueryIdentity[]): string[] {
  const seen = new Map<string, number>();
  return ids.map((id) => {
    const base = identityKey(id, 1);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return identityKey(id, n);
  });
}

/** The fingerprint code scanning tracks an alert by: one query, one rule; no line in it. */
export function fingerprintOf(key: string, rule: string): string {
  return `${stableHash(`${key}\u0000${rule}`)}:1`;
}

const SQL_CONSTANTS = new Set(['SCONST', 'ICONST', 'FCONST', 'BCONST', 'XCONST', 'USCONST']);

/**
 * A SQL statement with its constants as `?`, keywords lower case, identifiers as written, one space
 * between tokens. Without the parser's scanner (text it cannot read) the spacing alone is folded.
 */
export function sqlShape(sql: string): string {
  let tokens;
  try {
    tokens = scanSqlSync(sql);
  } catch {
    return sql.replace(/\s+/g, ' ').trim();
  }
  const out: string[] = [];
  for (const t of tokens) {
    if (t.tokenName === 'SQL_COMMENT' || t.tokenName === 'C_COMMENT' || t.tokenName === 'ASCII_59') continue;
    const text = sql.slice(t.start, t.end);
    if (SQL_CONSTANTS.has(t.tokenName)) out.push('?');
    else if (t.tokenName === 'IDENT' || t.tokenName === 'PARAM') out.push(text);
    else out.push(/^[A-Za-z_]+$/.test(text) ? text.toLowerCase() : text);
  }
  return out.join(' ');
}

/** Keys whose values are part of the shape as written (directions, names), not values a user passes. */
const SHAPE_VALUES = new Set(['sort', '$sort', 'projection', '$project', 'hint']);

/**
 * A MongoDB command as its collection, operation and the structure of its documents: every key and
 * operator kept in order, scalar values as `?`, a list of scalars as one `[?]`; sort and projection
 * documents kept whole (a direction is part of the shape); limit and skip as present or not.
 */
export function mongoQueryShape(cmd: MongoCommand): string {
  const parts: Record<string, unknown> = { c: cmd.collection, op: cmd.operation };
  if (cmd.database !== undefined) parts.db = cmd.database;
  if (cmd.filter !== undefined) parts.filter = mask(cmd.filter);
  if (cmd.sort !== undefined) parts.sort = cmd.sort;
  if (cmd.projection !== undefined) parts.projection = cmd.projection;
  if (cmd.pipeline !== undefined) parts.pipeline = cmd.pipeline.map((s) => mask(s));
  if (cmd.update !== undefined) parts.update = mask(cmd.update);
  if (cmd.field !== undefined) parts.field = cmd.field;
  if (cmd.hint !== undefined) parts.hint = cmd.hint;
  if (cmd.limit !== undefined) parts.limit = '?';
  if (cmd.skip !== undefined) parts.skip = '?';
  return JSON.stringify(parts);
}

function mask(v: unknown, depth = 0): unknown {
  if (depth > 64) return '?';
  if (Array.isArray(v)) {
    const inner = v.map((x) => mask(x, depth + 1));
    return inner.every((x) => x === '?') ? (inner.length > 0 ? ['?'] : []) : inner;
  }
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    // Extended JSON values ({$oid}, {$date}...) and placeholders for values the code passes are values.
    if (keys.length === 1 && /^\$(oid|date|numberLong|numberInt|numberDouble|numberDecimal|binary|uuid|timestamp|regularExpression|placeholder|symbol|minKey|maxKey)$/.test(keys[0]!)) return '?';
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = SHAPE_VALUES.has(k) ? o[k] : mask(o[k], depth + 1);
    return out;
  }
  return '?';
}

interface Scope {
  start: number;
  end: number;
  name: string;
}

/**
 * The named functions, methods, classes and exported values of a script, for `scopeAt`. A file that does
 * not parse gives none (its queries are then known by file and shape alone).
 */
export function scriptScopes(text: string, dialect: ScriptDialect, playground: boolean): Scope[] {
  let program: BNode;
  try {
    const file = babelParse(text, scriptParseOptions(playground ? 'js' : dialect)) as unknown as { program: BNode };
    program = file.program;
  } catch {
    return [];
  }
  const scopes: Scope[] = [];
  // An explicit stack: deep files must not exhaust the call stack.
  const stack: { node: BNode; prefix: string }[] = [{ node: program, prefix: '' }];
  while (stack.length > 0) {
    const { node, prefix } = stack.pop()!;
    const name = scopeName(node);
    const here = name !== undefined ? (prefix ? `${prefix}.${name}` : name) : prefix;
    if (name !== undefined) scopes.push({ start: node.start, end: node.end, name: here });
    const children: BNode[] = [];
    pushChildren(node, children);
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, prefix: here });
  }
  return scopes;
}

/** The name a node gives the code inside it, if any. */
function scopeName(n: BNode): string | undefined {
  switch (n.type) {
    case 'FunctionDeclaration':
    case 'ClassDeclaration':
    case 'ClassExpression':
    case 'FunctionExpression':
      return n.id?.name;
    case 'ClassMethod':
    case 'ClassPrivateMethod':
    case 'ObjectMethod':
      return n.key && !n.computed ? keyText(n.key) : undefined;
      // A property or a variable names a scope only when it holds a function or a class: the variable a
    // result is assigned to is no part of the query's identity.
    case 'ClassProperty':
    case 'ObjectProperty':
      return n.key && !n.computed && holdsCode(n.value) ? keyText(n.key) : undefined;
    // An object of methods (`const repo = { async byId() {...} }`) names them as `repo.byId`.
    case 'VariableDeclarator':
      return n.id?.type === 'Identifier' && (holdsCode(n.init) || n.init?.type === 'ObjectExpression') ? n.id.name : undefined;
    case 'ExportDefaultDeclaration':
      return 'default';
    default:
      return undefined;
  }
}

function holdsCode(v: unknown): boolean {
  const t = (v as BNode | null | undefined)?.type;
  return t === 'ArrowFunctionExpression' || t === 'FunctionExpression' || t === 'ClassExpression';
}

function keyText(k: BNode): string | undefined {
  if (k.type === 'Identifier' || k.type === 'PrivateName') return k.name ?? (k as unknown as { id?: { name?: string } }).id?.name;
  if (k.type === 'StringLiteral' || k.type === 'NumericLiteral') return String(k.value);
  return undefined;
}

/** The innermost named scope around an offset. */
export function scopeAt(scopes: readonly Scope[], offset: number): string | undefined {
  let best: Scope | undefined;
  for (const s of scopes) {
    if (s.start <= offset && offset < s.end && (!best || s.end - s.start <= best.end - best.start)) best = s;
  }
  return best?.name;
}
