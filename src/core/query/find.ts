// Finds the database queries a source file holds, for the language server: MongoDB calls in JavaScript,
// TypeScript and `.mongodb.js` playgrounds, and PostgreSQL statements in `.sql` files and in strings
// passed to node-postgres (`client.query(...)`, `pool.query(...)`) or tagged `sql`...``. Scripts are
// read with @babel/parser (JavaScript and TypeScript with error recovery), SQL with libpg-query (the
// server's own grammar). Nothing is evaluated: values are read from literal syntax and from local
// constants, and anything else becomes a placeholder `{ $placeholder: "<source text>" }`, never a guess.
//
// Every result maps back to the file: the whole call, each command part, each filter key and value (by
// a path such as `filter/name/$regex` or `pipeline/1/$match/email`), and every character of an SQL
// text, also inside template literals with escapes and `${...}` parts (which become $n parameters).
//
// `ScriptQueryIndex` keeps a file split into its top-level statements and re-reads only the statements
// an edit touched (plus those that used a module-level constant the edit changed), so a 5,000-line file
// costs a few lines of parsing per keystroke.

import { parse as babelParse, type ParserPlugin } from '@babel/parser';
import { parseSync as pgParseSync, scanSync as pgScanSync } from 'libpg-query';
import { readShellNotation } from '../mongo/shellNotation';
import { loadSqlParser, sqlParserLoaded } from '../advice/pgShape';
import type { Doc, MongoCommand, MongoCommandPart, MongoOperation, SourceRange } from './mongoShell';

export { loadSqlParser, sqlParserLoaded };
export type { SourceRange };

/** What kind of file a text is: decides which finder runs. */
export type QuerySourceKind = 'sql' | 'mongodb-playground' | 'script' | 'other';

export function querySourceKind(languageId: string, fileName: string): QuerySourceKind {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.mongodb.js') || lower.endsWith('.mongodb') || languageId === 'mongodb') return 'mongodb-playground';
  if (['sql', 'postgres', 'pgsql'].includes(languageId) || /\.(sql|psql|pgsql)$/.test(lower)) return 'sql';
  if (['javascript', 'typescript', 'javascriptreact', 'typescriptreact'].includes(languageId) || /\.(c|m)?(j|t)sx?$/.test(lower)) return 'script';
  return 'other';
}

/** A value's position in the file, and for an object member the whole `key: value` as well. */
export interface Located {
  value: SourceRange;
  /** The property `key: value` (or the array element) that holds the value. */
  member?: SourceRange;
  /** The key alone. */
  key?: SourceRange;
}

/**
 * How the collection was reached: `shell` for `db.c` / `db.getCollection('c')` (mongosh argument
 * order: find(filter, projection)), `driver` for `x.collection('c')` (Node driver order: find(filter, options)).
 */
export type MongoFlavour = 'shell' | 'driver';

export interface FoundMongoQuery {
  engine: 'mongodb';
  /** The whole call chain, from the collection to the last cursor method read. */
  range: SourceRange;
  flavour: MongoFlavour;
  /** The command as the core's advisor reads it; its `ranges` are offsets into the file. */
  command: MongoCommand;
  /** Positions of every part and member read, keyed by path ("filter/name/$regex", "pipeline/0/$match"). */
  locations: Record<string, Located>;
  /** Parts given as a whole by something that is not a literal (`skip(page * size)` gives 'skip'). */
  variableParts: MongoCommandPart[];
  /** Objects that were only partly read (a spread of something that is not a local constant). */
  partial: boolean;
  /** Cursor or option names this reader kept but does not interpret. */
  warnings: string[];
}

/** Where the SQL text came from. */
export type SqlOrigin = 'sql-file' | 'string' | 'template' | 'tagged-template';

export interface SqlParameter {
  /** The $n the `${...}` part became. */
  n: number;
  /** The expression inside `${...}` as written. */
  text: string;
  /** The `${...}` in the file. */
  range: SourceRange;
}

export interface FoundSqlQuery {
  engine: 'postgres';
  origin: SqlOrigin;
  /** The statement in a .sql file, or the call (`pool.query(...)`, the tagged template) in a script. */
  range: SourceRange;
  /** The SQL text as the server would receive it, `${...}` parts replaced by $n. */
  sql: string;
  /**
   * Where the characters of `sql` are in the file, as runs of [sqlStart, fileStart, sqlLength, fileLength]:
   * plain text has equal lengths; an escape (\n, \u00e9) is one character from several; a $n stands for its `${...}`.
   */
  runs: SqlRun[];
  /** The file range of the SQL text itself (inside the quotes). */
  textRange: SourceRange;
  params: SqlParameter[];
  warnings: string[];
}

export type SqlRun = [number, number, number, number];

export type FoundQuery = FoundMongoQuery | FoundSqlQuery;

export interface FindResult {
  queries: FoundQuery[];
  /** Sentences about what could not be read (a syntax error, the SQL parser not loaded). */
  warnings: string[];
}

/** The file range holding character `i` of `q.sql`. */
export function sqlCharToSource(q: Pick<FoundSqlQuery, 'runs' | 'textRange'>, i: number): SourceRange {
  const runs = q.runs;
  let lo = 0;
  let hi = runs.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid]![0] <= i) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (best < 0) return { start: q.textRange.start, end: q.textRange.start };
  const [s, f, len, flen] = runs[best]!;
  if (i >= s + len) return { start: f + flen, end: f + flen };
  if (len === flen) return { start: f + (i - s), end: f + (i - s) + 1 };
  return { start: f, end: f + flen };
}

/** A range of `q.sql` as a file range. */
export function sqlRangeToSource(q: Pick<FoundSqlQuery, 'runs' | 'textRange'>, start: number, end: number): SourceRange {
  const a = sqlCharToSource(q, start);
  if (end <= start) return { start: a.start, end: a.start };
  const b = sqlCharToSource(q, end - 1);
  return { start: a.start, end: Math.max(a.start, b.end) };
}

/** Every query of a text, in text order. Never throws on bad input. */
export function findQueries(text: string, kind: QuerySourceKind, dialect: ScriptDialect = 'ts'): FindResult {
  if (kind === 'sql') return findSqlStatements(text);
  if (kind === 'mongodb-playground' || kind === 'script') {
    const index = new ScriptQueryIndex(kind, dialect);
    index.update(text);
    return index.result();
  }
  return { queries: [], warnings: [] };
}

// ---- SQL files ----------------------------------------------------------------------------------------

/** Statement kinds worth advising; DDL, transaction control and the like are not queries. */
const SQL_QUERY_STATEMENTS = new Set(['SelectStmt', 'UpdateStmt', 'DeleteStmt', 'InsertStmt', 'MergeStmt', 'ExplainStmt']);
const SQL_QUERY_KEYWORDS = new Set(['select', 'with', 'update', 'delete', 'insert', 'merge', 'values', 'table', 'explain']);

/**
 * Splits a .sql file into statements at the locations PostgreSQL's parser reports. When some statement
 * does not parse, the file is split at the `;` tokens of PostgreSQL's own scanner instead (which knows
 * quotes, comments and dollar quoting), so the other statements are still found.
 */
export function findSqlStatements(text: string): FindResult {
  if (!sqlParserLoaded()) return { queries: [], warnings: ['The SQL parser is not loaded yet.'] };
  const r = sqlChunks(text, 0, true);
  return { queries: r.chunks.flatMap((c) => (c.query ? [c.query] : [])), warnings: r.warnings };
}

/**
 * Where two versions of a text differ: `p` is the length of their common prefix, `oldEnd` the end of the
 * changed part in the old text (its common suffix follows). Compares in blocks first, natively.
 */
export function changedSpan(old: string, text: string): { p: number; oldEnd: number } {
  const max = Math.min(old.length, text.length);
  const BLOCK = 2048;
  let p = 0;
  while (p + BLOCK <= max && old.slice(p, p + BLOCK) === text.slice(p, p + BLOCK)) p += BLOCK;
  while (p < max && old.charCodeAt(p) === text.charCodeAt(p)) p++;
  let s = 0;
  while (s + BLOCK <= max - p && old.slice(old.length - s - BLOCK, old.length - s) === text.slice(text.length - s - BLOCK, text.length - s)) s += BLOCK;
  while (s < max - p && old.charCodeAt(old.length - 1 - s) === text.charCodeAt(text.length - 1 - s)) s++;
  return { p, oldEnd: old.length - s };
}

/** One statement of a .sql file (trimmed of comments and the semicolon), with its query if it is one. */
interface SqlChunk {
  start: number;
  end: number;
  query?: FoundSqlQuery;
}

/**
 * The statements of `text` (which sits at `offset` in the file). With `fallback`, a text that does not
 * parse is split at the scanner's semicolons; without, it gives undefined (the caller reads more).
 */
function sqlChunks(text: string, offset: number, fallback: true): { chunks: SqlChunk[]; warnings: string[] };
function sqlChunks(text: string, offset: number, fallback: false): { chunks: SqlChunk[]; warnings: string[] } | undefined;
function sqlChunks(text: string, offset: number, fallback: boolean): { chunks: SqlChunk[]; warnings: string[] } | undefined {
  const bytes = new ByteMap(text);
  const spans: { start: number; end: number; kind?: string }[] = [];
  const warnings: string[] = [];
  try {
    const tree = pgParseSync(text) as { stmts?: { stmt?: Record<string, unknown>; stmt_location?: number; stmt_len?: number }[] };
    for (const st of tree.stmts ?? []) {
      const loc = st.stmt_location ?? 0;
      const end = st.stmt_len === undefined || st.stmt_len === 0 ? bytes.byteLength : loc + st.stmt_len;
      spans.push({ start: bytes.char(loc), end: bytes.char(end), kind: Object.keys(st.stmt ?? {})[0] ?? '' });
    }
  } catch (err) {
    if (!fallback) return undefined;
    const e = err as { message?: string };
    warnings.push(`The SQL file does not parse as a whole (${e.message ?? 'syntax error'}); its statements were split at semicolons.`);
    spans.push(...splitWithScanner(text, bytes));
  }
  const chunks: SqlChunk[] = [];
  for (const sp of spans) {
    const start = sp.start + leadingTrivia(text.slice(sp.start, sp.end));
    let end = sp.end;
    while (end > start && /[\s;]/.test(text[end - 1]!)) end--;
    if (end <= start) continue;
    const sql = text.slice(start, end);
    const chunk: SqlChunk = { start: start + offset, end: end + offset };
    const isQuery = sp.kind !== undefined ? SQL_QUERY_STATEMENTS.has(sp.kind) : SQL_QUERY_KEYWORDS.has(firstWord(sql));
    if (isQuery) {
      const s0 = start + offset;
      const e0 = end + offset;
      chunk.query = { engine: 'postgres', origin: 'sql-file', range: { start: s0, end: e0 }, sql, runs: [[0, s0, sql.length, sql.length]], textRange: { start: s0, end: e0 }, params: [], warnings: [] };
    }
    chunks.push(chunk);
  }
  return { chunks, warnings };
}

/**
 * The statements of a .sql file, kept between edits: an edit re-parses only the statements it touched
 * (from the end of the untouched one before to the start of the untouched one after), and the others
 * keep their query objects, moved if the edit was before them.
 */
export class SqlQueryIndex {
  private chunks: SqlChunk[] = [];
  private text = '';
  private warnings: string[] = [];
  lastUpdate = { reparsed: 0, full: true };

  result(): FindResult {
    return { queries: this.chunks.flatMap((c) => (c.query ? [c.query] : [])), warnings: [...this.warnings] };
  }

  update(text: string): void {
    if (!sqlParserLoaded()) {
      this.text = '';
      this.chunks = [];
      this.warnings = ['The SQL parser is not loaded yet.'];
      return;
    }
    const old = this.text;
    if (old === '' || this.warnings.length > 0 || this.chunks.length === 0) {
      this.full(text);
      return;
    }
    const { p, oldEnd } = changedSpan(old, text);
    if (p === old.length && p === text.length) return;
    const delta = text.length - old.length;
    let first = this.chunks.findIndex((c) => c.end >= p);
    if (first < 0) first = this.chunks.length;
    let last = first - 1;
    for (let i = first; i < this.chunks.length && this.chunks[i]!.start <= oldEnd; i++) last = i;
    // One more statement on each side: removing a semicolon merges two statements.
    first = Math.max(0, first - 1);
    last = Math.min(this.chunks.length - 1, last + 1);
    const from = first > 0 ? this.chunks[first - 1]!.end : 0;
    const to = Math.max(last + 1 < this.chunks.length ? this.chunks[last + 1]!.start : old.length, oldEnd);
    const region = sqlChunks(text.slice(from, to + delta), from, false);
    if (!region) {
      this.full(text);
      return;
    }
    const after = this.chunks.slice(last + 1);
    for (const c of after) {
      c.start += delta;
      c.end += delta;
      if (c.query) shiftQuery(c.query, delta, oldEnd);
    }
    this.chunks = [...this.chunks.slice(0, first), ...region.chunks, ...after];
    this.text = text;
    this.lastUpdate = { reparsed: region.chunks.length, full: false };
  }

  private full(text: string): void {
    const r = sqlChunks(text, 0, true);
    this.chunks = r.chunks;
    this.warnings = r.warnings;
    this.text = text;
    this.lastUpdate = { reparsed: r.chunks.length, full: true };
  }
}

function splitWithScanner(text: string, bytes: ByteMap): { start: number; end: number }[] {
  let tokens: { start: number; end: number; tokenName: string }[];
  try {
    tokens = pgScanSync(text).tokens as { start: number; end: number; tokenName: string }[];
  } catch {
    return [{ start: 0, end: text.length }];
  }
  const out: { start: number; end: number }[] = [];
  let first: number | undefined;
  let last = 0;
  for (const t of tokens) {
    if (t.tokenName === 'SQL_COMMENT' || t.tokenName === 'C_COMMENT') continue;
    if (t.tokenName === 'ASCII_59') {
      if (first !== undefined) out.push({ start: bytes.char(first), end: bytes.char(last) });
      first = undefined;
      continue;
    }
    if (first === undefined) first = t.start;
    last = t.end;
  }
  if (first !== undefined) out.push({ start: bytes.char(first), end: bytes.char(last) });
  return out;
}

function firstWord(sql: string): string {
  return /^\(*\s*([A-Za-z]+)/.exec(sql)?.[1]?.toLowerCase() ?? '';
}

/** Length of the whitespace and comments that open a text. */
function leadingTrivia(s: string): number {
  let i = 0;
  for (;;) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (s.startsWith('--', i)) {
      const nl = s.indexOf('\n', i);
      i = nl < 0 ? s.length : nl + 1;
    } else if (s.startsWith('/*', i)) {
      const close = s.indexOf('*/', i + 2);
      i = close < 0 ? s.length : close + 2;
    } else return i;
  }
}

/** libpg-query reports UTF-8 byte offsets; this turns them into string indexes. */
class ByteMap {
  private readonly map: Int32Array | undefined;
  readonly byteLength: number;

  constructor(text: string) {
    if (!/[^\x00-\x7f]/.test(text)) {
      this.byteLength = text.length;
      return;
    }
    const out: number[] = [];
    for (let i = 0; i < text.length; i++) {
      const cp = text.codePointAt(i)!;
      const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      for (let b = 0; b < n; b++) out.push(i);
      if (cp >= 0x10000) i++;
    }
    out.push(text.length);
    this.map = Int32Array.from(out);
    this.byteLength = out.length - 1;
  }

  char(byte: number): number {
    if (!this.map) return byte;
    return this.map[Math.max(0, Math.min(byte, this.map.length - 1))]!;
  }
}

// ---- scripts: the syntax tree -------------------------------------------------------------------------

/**
 * The Babel syntax tree as this reader uses it: only the fields it reads, all optional, so no type
 * package of the parser is needed. Offsets are string indexes into the whole file.
 */
interface BNode {
  type: string;
  start: number;
  end: number;
  callee?: BNode;
  arguments?: BNode[];
  object?: BNode;
  property?: BNode;
  computed?: boolean;
  optional?: boolean;
  expression?: BNode;
  name?: string;
  value?: unknown;
  properties?: BNode[];
  elements?: (BNode | null)[];
  key?: BNode;
  shorthand?: boolean;
  argument?: BNode;
  operator?: string;
  left?: BNode;
  right?: BNode;
  quasis?: BNode[];
  expressions?: BNode[];
  tag?: BNode;
  quasi?: BNode;
  declarations?: BNode[];
  declaration?: BNode | null;
  id?: BNode | null;
  init?: BNode | null;
  kind?: string;
  body?: BNode | BNode[];
  params?: BNode[];
  param?: BNode | null;
  pattern?: string;
  flags?: string;
  elementsPattern?: BNode[];
}

const SKIP_KEYS = new Set(['loc', 'extra', 'leadingComments', 'trailingComments', 'innerComments', 'typeAnnotation', 'returnType',
  'typeParameters', 'superTypeParameters', 'implements', 'decorators', 'errors', 'comments', 'tokens']);

function isNode(v: unknown): v is BNode {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

function children(n: BNode, visit: (c: BNode) => void): void {
  for (const key in n) {
    if (SKIP_KEYS.has(key)) continue;
    const v = (n as unknown as Record<string, unknown>)[key];
    if (Array.isArray(v)) {
      for (const x of v) if (isNode(x)) visit(x);
    } else if (isNode(v)) visit(v);
  }
}

/** TypeScript's type-only wrappers and parentheses change nothing a query reads. */
function unwrap(n: BNode): BNode {
  let cur = n;
  for (let i = 0; i < 64; i++) {
    switch (cur.type) {
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSNonNullExpression':
      case 'TSTypeAssertion':
      case 'TSInstantiationExpression':
      case 'ParenthesizedExpression':
        cur = cur.expression!;
        continue;
      default:
        return cur;
    }
  }
  return cur;
}

function propertyName(n: BNode): string | undefined {
  const p = n.property;
  if (!p) return undefined;
  if (!n.computed && (p.type === 'Identifier' || p.type === 'PrivateName')) return p.name;
  if (n.computed && p.type === 'StringLiteral') return p.value as string;
  return undefined;
}

function isMember(n: BNode): boolean {
  return n.type === 'MemberExpression' || n.type === 'OptionalMemberExpression';
}

function isCall(n: BNode): boolean {
  return n.type === 'CallExpression' || n.type === 'OptionalCallExpression';
}

// ---- scripts: scopes and constants --------------------------------------------------------------------

/** A name in scope: a constant with its initializer, or something whose value is not known here. */
type Binding = { init: BNode } | { unknown: true };

class Scope {
  readonly names = new Map<string, Binding>();
  constructor(readonly parent: Scope | undefined) {}
}

/** Module-level names shared by all top-level statements, with who declared them. */
class ModuleScope {
  readonly names = new Map<string, Binding>();
  /** The statement that declares each name, so its tree can be brought up to date before it is read. */
  readonly owner = new Map<string, { flush(): void }>();
  /** Names some statement mutates (`x.push(...)`, `x.a = ...`): their constant value is not trusted. */
  readonly mutated = new Set<string>();
}

function declareNames(pattern: BNode | null | undefined, into: Map<string, Binding>, init?: BNode | null, isConst = false): void {
  if (!pattern) return;
  switch (pattern.type) {
    case 'Identifier':
      into.set(pattern.name!, isConst && init ? { init } : { unknown: true });
      return;
    case 'ObjectPattern':
      for (const p of pattern.properties ?? []) declareNames(p.type === 'RestElement' ? p.argument : p.value as BNode, into);
      return;
    case 'ArrayPattern':
      for (const e of pattern.elements ?? []) declareNames(e, into);
      return;
    case 'AssignmentPattern':
      declareNames(pattern.left, into);
      return;
    case 'RestElement':
      declareNames(pattern.argument, into);
      return;
    case 'TSParameterProperty':
      declareNames((pattern as unknown as { parameter?: BNode }).parameter, into);
      return;
    default:
      return;
  }
}

/** Declarations made directly by a list of statements (var/let/const, functions, classes, imports). */
function declareStatements(stmts: BNode[], into: Map<string, Binding>): void {
  for (let s of stmts) {
    if ((s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration') && s.declaration) s = s.declaration;
    if (s.type === 'VariableDeclaration') {
      for (const d of s.declarations ?? []) declareNames(d.id, into, d.init, s.kind === 'const');
    } else if ((s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration' || s.type === 'TSEnumDeclaration') && s.id) {
      into.set(s.id.name!, { unknown: true });
    } else if (s.type === 'ImportDeclaration') {
      for (const sp of (s as unknown as { specifiers?: { local?: BNode }[] }).specifiers ?? []) if (sp.local?.name) into.set(sp.local.name, { unknown: true });
    }
  }
}

const MUTATING_METHODS = new Set(['push', 'unshift', 'splice', 'pop', 'shift', 'fill', 'reverse', 'copyWithin']);

/** Names whose object or array is changed after it was declared, anywhere in the tree. */
function collectMutations(root: BNode, into: Set<string>): void {
  const stack: BNode[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    // Line/column objects are never read (offsets are): dropping them halves what a kept tree costs.
    (n as { loc?: unknown }).loc = undefined;
    if (n.type === 'AssignmentExpression' || n.type === 'UpdateExpression') {
      const target = unwrap((n.type === 'AssignmentExpression' ? n.left : n.argument)!);
      const base = rootIdentifier(target);
      if (base && isMember(target)) into.add(base);
    } else if (n.type === 'UnaryExpression' && n.operator === 'delete' && n.argument) {
      const base = rootIdentifier(unwrap(n.argument));
      if (base) into.add(base);
    } else if (isCall(n) && n.callee && isMember(unwrap(n.callee))) {
      const callee = unwrap(n.callee);
      const name = propertyName(callee);
      const base = rootIdentifier(unwrap(callee.object!));
      if (base && name !== undefined && MUTATING_METHODS.has(name)) into.add(base);
      if (name === 'assign' && callee.object?.type === 'Identifier' && callee.object.name === 'Object') {
        const first = n.arguments?.[0] && rootIdentifier(unwrap(n.arguments[0]));
        if (first) into.add(first);
      }
    }
    children(n, (c) => stack.push(c));
  }
}

function rootIdentifier(n: BNode): string | undefined {
  let cur = n;
  for (let i = 0; i < 64; i++) {
    cur = unwrap(cur);
    if (cur.type === 'Identifier') return cur.name;
    if (isMember(cur)) cur = cur.object!;
    else return undefined;
  }
  return undefined;
}

// ---- scripts: the index of top-level statements -------------------------------------------------------

interface Chunk {
  start: number;
  end: number;
  /** The top-level statement's tree (offsets into the file as it was when it was parsed). */
  node: BNode;
  /** Names this statement declares at module level. */
  declares: Map<string, Binding>;
  mutates: Set<string>;
  /** Module-level names its queries looked up (found or not). */
  uses: Set<string>;
  queries: FoundQuery[];
  /** The file text of the statement, to tell whether it changed. */
  text: string;
  /** How far the statement moved since its tree's offsets were last brought up to date. */
  pending: number;
}

/** Which syntax a script is written in: TypeScript, TypeScript with JSX, or JavaScript (with JSX). */
export type ScriptDialect = 'ts' | 'tsx' | 'js';

export function scriptDialect(languageId: string, fileName: string): ScriptDialect {
  const lower = fileName.toLowerCase();
  if (languageId === 'typescriptreact' || lower.endsWith('.tsx')) return 'tsx';
  if (languageId === 'typescript' || /\.(c|m)?ts$/.test(lower)) return 'ts';
  return 'js';
}

const BABEL_PLUGINS: Record<ScriptDialect, ParserPlugin[]> = {
  ts: ['typescript', 'decorators-legacy'],
  tsx: ['typescript', 'jsx', 'decorators-legacy'],
  js: ['jsx', 'decorators-legacy'],
};

/**
 * The queries of one script, kept per top-level statement. `update(text)` re-reads only what an edit
 * touched: the statements overlapping the changed span, and the statements whose queries used a
 * module-level name that the changed statements declare or mutate.
 */
export class ScriptQueryIndex {
  private chunks: Chunk[] = [];
  private text = '';
  private warnings: string[] = [];
  private readonly module = new ModuleScope();
  /** What the last update did: statements parsed again and whether the whole file was read. */
  lastUpdate = { reparsed: 0, reextracted: 0, full: true };

  constructor(private readonly kind: 'mongodb-playground' | 'script', private readonly dialect: ScriptDialect = 'ts') {}

  result(): FindResult {
    const queries: FoundQuery[] = [];
    for (const c of this.chunks) queries.push(...c.queries);
    return { queries, warnings: [...this.warnings] };
  }

  update(text: string): void {
    if (this.chunks.length === 0 || this.text === '') {
      this.full(text);
      return;
    }
    const old = this.text;
    // The changed span: the longest common prefix and suffix of the old and new texts.
    const { p, oldEnd } = changedSpan(old, text);
    if (p === old.length && p === text.length) {
      this.lastUpdate = { reparsed: 0, reextracted: 0, full: false };
      return;
    }
    const delta = text.length - old.length;
    // Statements touching [p, oldEnd] in the old text (touching their ends too: typing right after one).
    let first = this.chunks.findIndex((c) => c.end >= p);
    if (first < 0) first = this.chunks.length;
    let last = first - 1;
    for (let i = first; i < this.chunks.length && this.chunks[i]!.start <= oldEnd; i++) last = i;
    // Re-read one more statement on each side (a removed separator can merge statements), from the end
    // of the untouched statement before them to the start of the untouched one after.
    first = Math.max(0, first - 1);
    last = Math.min(this.chunks.length - 1, last + 1);
    const from = first > 0 ? this.chunks[first - 1]!.end : 0;
    const to = Math.max(last + 1 < this.chunks.length ? this.chunks[last + 1]!.start : old.length, oldEnd);
    const parsed = this.parse(text.slice(from, to + delta), from);
    if (!parsed.ok) {
      // The edit left this part unreadable (an unclosed bracket, a comment opened): the whole file may
      // still read (a template or comment now spans statements); if not, keep the other statements.
      const whole = this.parse(text, 0);
      if (whole.ok) {
        this.fullFrom(text, whole.statements);
        return;
      }
      this.splice(text, first, last, [], oldEnd, delta);
      this.warnings = [parsed.error];
      return;
    }
    this.splice(text, first, last, parsed.statements, oldEnd, delta);
  }

  /** Replaces statements first..last by new ones, moves the later ones, and re-reads what depended on the change. */
  private splice(text: string, first: number, last: number, statements: BNode[], oldEnd: number, delta: number): void {
    const removed = this.chunks.slice(first, last + 1);
    const added = statements.map((n) => this.makeChunk(n, text));
    const before = this.chunks.slice(0, first);
    const after = this.chunks.slice(last + 1);
    for (const c of after) shiftChunk(c, delta);
    this.chunks = [...before, ...added, ...after];
    this.text = text;
    this.warnings = [];
    const changed = new Set<string>();
    for (const c of [...removed, ...added]) {
      for (const n of c.declares.keys()) changed.add(n);
      for (const n of c.mutates) changed.add(n);
    }
    this.rebuildModule();
    let reextracted = 0;
    for (const c of this.chunks) {
      if (added.includes(c) || [...c.uses].some((n) => changed.has(n))) {
        this.extract(c);
        reextracted++;
      } else {
        // Results of untouched statements may point into later statements (a module constant declared
        // further down): those positions move with the text after the edit.
        for (const q of c.queries) shiftQuery(q, delta, oldEnd);
      }
    }
    this.lastUpdate = { reparsed: added.length, reextracted, full: false };
  }

  private full(text: string): void {
    const parsed = this.parse(text, 0);
    if (!parsed.ok) {
      this.text = text;
      this.chunks = [];
      this.warnings = [parsed.error];
      this.rebuildModule();
      this.lastUpdate = { reparsed: 0, reextracted: 0, full: true };
      return;
    }
    this.fullFrom(text, parsed.statements);
  }

  private fullFrom(text: string, statements: BNode[]): void {
    this.text = text;
    this.warnings = [];
    this.chunks = statements.map((n) => this.makeChunk(n, text));
    this.rebuildModule();
    for (const c of this.chunks) this.extract(c);
    this.lastUpdate = { reparsed: this.chunks.length, reextracted: this.chunks.length, full: true };
  }

  private parse(slice: string, offset: number): { ok: true; statements: BNode[] } | { ok: false; error: string } {
    try {
      const file = babelParse(slice, {
        sourceType: 'unambiguous',
        startIndex: offset,
        errorRecovery: true,
        attachComment: false,
        allowReturnOutsideFunction: true,
        allowAwaitOutsideFunction: true,
        allowImportExportEverywhere: true,
        allowUndeclaredExports: true,
        allowNewTargetOutsideFunction: true,
        allowSuperOutsideMethod: true,
        plugins: BABEL_PLUGINS[this.kind === 'script' ? this.dialect : 'js'],
      }) as unknown as { program: { body: BNode[] } };
      return { ok: true, statements: file.program.body };
    } catch (err) {
      if (err instanceof RangeError) return { ok: false, error: 'The file is nested too deeply to read.' };
      if (!(err instanceof SyntaxError)) throw err;
      const pos = (err as SyntaxError & { pos?: number }).pos;
      const msg = err.message.replace(/\s*\(\d+:\d+\)$/, '').replace(/\.$/, '');
      return { ok: false, error: `The file does not parse${typeof pos === 'number' ? ` at offset ${pos}` : ''}: ${msg}.` };
    }
  }

  private makeChunk(node: BNode, text: string): Chunk {
    const declares = new Map<string, Binding>();
    declareStatements([node], declares);
    const mutates = new Set<string>();
    collectMutations(node, mutates);
    return { start: node.start, end: node.end, node, declares, mutates, uses: new Set(), queries: [], text: text.slice(node.start, node.end), pending: 0 };
  }

  private rebuildModule(): void {
    this.module.names.clear();
    this.module.mutated.clear();
    this.module.owner.clear();
    for (const c of this.chunks) {
      for (const [k, v] of c.declares) {
        this.module.names.set(k, this.module.names.has(k) ? { unknown: true } : v);
        this.module.owner.set(k, { flush: () => flushChunk(c) });
      }
      for (const m of c.mutates) this.module.mutated.add(m);
    }
  }

  private extract(c: Chunk): void {
    flushChunk(c);
    c.uses = new Set();
    const ex = new Extractor(this.text, this.module, c.uses, c.mutates, this.kind);
    c.queries = ex.run(c.node);
  }
}

/**
 * Moves a statement by `delta` (the edit happened before it). Its tree is moved only when it is read
 * again (flushChunk): most statements never are, and walking every tree after each keystroke would cost
 * more than the rest of the update.
 */
function shiftChunk(c: Chunk, delta: number): void {
  if (delta === 0) return;
  c.start += delta;
  c.end += delta;
  c.pending += delta;
}

function flushChunk(c: Chunk): void {
  const delta = c.pending;
  if (delta === 0) return;
  c.pending = 0;
  const stack: BNode[] = [c.node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    n.start += delta;
    n.end += delta;
    children(n, (x) => stack.push(x));
  }
}

/** Moves the positions of a query that were at or after `oldEnd` in the old text by `delta`. */
function shiftQuery(q: FoundQuery, delta: number, oldEnd: number): void {
  if (delta === 0) return;
  // Every range object of a query is its own (none is shared), so each is moved once.
  const move = (r: SourceRange | undefined) => {
    if (!r || r.start < oldEnd) return;
    r.start += delta;
    r.end += delta;
  };
  move(q.range);
  if (q.engine === 'mongodb') {
    const ranges = q.command.ranges;
    for (const k in ranges) move(ranges[k as MongoCommandPart]);
    const locs = q.locations;
    for (const k in locs) {
      const l = locs[k]!;
      move(l.value);
      move(l.member);
      move(l.key);
    }
  } else {
    move(q.textRange);
    for (const r of q.runs) if (r[1] >= oldEnd) r[1] += delta;
    for (const p of q.params) move(p.range);
  }
}

// ---- scripts: reading queries -------------------------------------------------------------------------

const MONGO_OPERATIONS = new Set<string>(['find', 'findOne', 'aggregate', 'countDocuments', 'count', 'distinct', 'updateOne', 'updateMany',
  'deleteOne', 'deleteMany', 'findOneAndUpdate', 'findOneAndDelete', 'findOneAndReplace', 'replaceOne']);
/** Methods of the shell's `db` that are not collection names (`db.getName()`, `db.runCommand(...)`). */
const DB_METHODS = new Set(['getCollection', 'getSiblingDB', 'getDB', 'collection', 'runCommand', 'adminCommand', 'getName', 'createCollection',
  'dropDatabase', 'getCollectionNames', 'getCollectionInfos', 'aggregate', 'watch', 'command', 'stats', 'admin', 'listCollections', 'db']);
/** Cursor methods the reader takes into the query. */
const CURSOR_METHODS = new Set(['sort', 'limit', 'skip', 'project', 'projection', 'hint', 'collation', 'maxTimeMS', 'comment', 'batchSize',
  'allowDiskUse', 'min', 'max', 'explain']);
const SQL_KEYWORD = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*\(*\s*(select|with|insert|update|delete|merge|values|table|explain)\b/i;
const MAX_RESOLVE_DEPTH = 16;
const MAX_VALUE_DEPTH = 200;

class Extractor {
  private scope: Scope | undefined;
  private readonly consumed = new Set<BNode>();
  private readonly out: FoundQuery[] = [];

  constructor(
    private readonly src: string,
    private readonly module: ModuleScope,
    private readonly uses: Set<string>,
    private readonly localMutated: Set<string>,
    private readonly kind: 'mongodb-playground' | 'script',
  ) {}

  run(root: BNode): FoundQuery[] {
    this.walk(root);
    return this.out.sort((a, b) => a.range.start - b.range.start);
  }

  // -- traversal with scopes --

  private walk(root: BNode): void {
    // An explicit stack of enter/leave steps, so deep files cannot overflow the call stack.
    type Step = { node: BNode; leave?: Scope | undefined; pushed?: boolean };
    const stack: Step[] = [{ node: root }];
    while (stack.length > 0) {
      const step = stack.pop()!;
      if (step.pushed) {
        this.scope = step.leave;
        continue;
      }
      const n = step.node;
      const scoped = this.opensScope(n);
      if (scoped) {
        stack.push({ node: n, leave: this.scope, pushed: true });
        this.scope = scoped;
      }
      if (isCall(n) || n.type === 'TaggedTemplateExpression') this.visitCall(n);
      const kids: BNode[] = [];
      children(n, (c) => kids.push(c));
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i]! });
    }
  }

  /** A new scope for blocks and functions, holding what they declare directly. */
  private opensScope(n: BNode): Scope | undefined {
    switch (n.type) {
      case 'BlockStatement':
      case 'StaticBlock':
      case 'Program': {
        const s = new Scope(this.scope);
        declareStatements(Array.isArray(n.body) ? n.body : [], s.names);
        return s;
      }
      case 'SwitchStatement': {
        const s = new Scope(this.scope);
        for (const c of (n as unknown as { cases?: { consequent?: BNode[] }[] }).cases ?? []) declareStatements(c.consequent ?? [], s.names);
        return s;
      }
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
      case 'ObjectMethod':
      case 'ClassMethod':
      case 'ClassPrivateMethod':
      case 'TSDeclareMethod': {
        const s = new Scope(this.scope);
        for (const p of n.params ?? []) declareNames(p, s.names);
        if (n.type === 'FunctionExpression' && n.id) s.names.set(n.id.name!, { unknown: true });
        if (n.type === 'ArrowFunctionExpression' && n.body && !Array.isArray(n.body) && n.body.type !== 'BlockStatement') return s;
        return s;
      }
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement': {
        const s = new Scope(this.scope);
        const decl = (n as unknown as { init?: BNode; left?: BNode }).init ?? n.left;
        if (decl?.type === 'VariableDeclaration') for (const d of decl.declarations ?? []) declareNames(d.id, s.names);
        return s;
      }
      case 'CatchClause': {
        const s = new Scope(this.scope);
        declareNames(n.param, s.names);
        return s;
      }
      default:
        return undefined;
    }
  }

  /** The binding of a name where it is used: the innermost scope, then the module. */
  private lookup(name: string): { binding: Binding; mutated: boolean } | undefined {
    for (let s = this.scope; s; s = s.parent) {
      const b = s.names.get(name);
      if (b) return { binding: b, mutated: this.localMutated.has(name) };
    }
    this.uses.add(name);
    const b = this.module.names.get(name);
    if (b) this.module.owner.get(name)?.flush();
    return b ? { binding: b, mutated: this.module.mutated.has(name) } : undefined;
  }

  private constInit(name: string): BNode | undefined {
    const r = this.lookup(name);
    if (!r || r.mutated || !('init' in r.binding)) return undefined;
    return r.binding.init;
  }

  // -- calls --

  private visitCall(n: BNode): void {
    if (this.consumed.has(n)) return;
    if (n.type === 'TaggedTemplateExpression') {
      this.taggedSql(n);
      return;
    }
    const callee = unwrap(n.callee!);
    if (!isMember(callee)) return;
    const name = propertyName(callee);
    if (name === 'query' && this.kind === 'script') {
      this.pgQuery(n);
      return;
    }
    // The outermost call of a chain: find the operation inside it.
    const chain = this.flatten(n);
    const opIndex = chain.findIndex((c) => MONGO_OPERATIONS.has(c.name));
    if (opIndex < 0) return;
    const op = chain[opIndex]!;
    const coll = this.collectionOf(unwrap(unwrap(op.call.callee!).object!), 0);
    if (!coll) return;
    for (const c of chain) this.consumed.add(c.call);
    const cursor: typeof chain = [];
    for (let i = opIndex + 1; i < chain.length && CURSOR_METHODS.has(chain[i]!.name); i++) cursor.push(chain[i]!);
    this.out.push(new MongoReader(this, coll, op, cursor).read());
  }

  /** `a.b(x).c(y)` as the calls [b(x), c(y)] from the inside out, stopping at the first non-call. */
  private flatten(outer: BNode): { name: string; call: BNode; nameNode: BNode }[] {
    const calls: { name: string; call: BNode; nameNode: BNode }[] = [];
    let cur: BNode = outer;
    for (let i = 0; i < 128; i++) {
      cur = unwrap(cur);
      if (cur.type === 'AwaitExpression' && cur.argument) {
        cur = cur.argument;
        continue;
      }
      if (!isCall(cur)) break;
      const callee = unwrap(cur.callee!);
      if (!isMember(callee)) break;
      const name = propertyName(callee);
      if (name === undefined) break;
      calls.push({ name, call: cur, nameNode: callee.property! });
      cur = callee.object!;
    }
    return calls.reverse();
  }

  /** The collection an expression stands for, if it is one this reader recognises. */
  collectionOf(e: BNode, depth: number): { name: string; database?: string; flavour: MongoFlavour; nameRange: SourceRange } | undefined {
    if (depth > MAX_RESOLVE_DEPTH) return undefined;
    e = unwrap(e);
    if (e.type === 'AwaitExpression' && e.argument) return this.collectionOf(e.argument, depth + 1);
    if (e.type === 'Identifier') {
      const init = this.constInit(e.name!);
      return init ? this.collectionOf(init, depth + 1) : undefined;
    }
    if (isCall(e)) {
      const callee = unwrap(e.callee!);
      if (!isMember(callee)) return undefined;
      const m = propertyName(callee);
      if ((m === 'collection' || m === 'getCollection') && e.arguments?.length) {
        const arg = e.arguments[0]!;
        const name = this.stringOf(arg, 0);
        if (name === undefined) return undefined;
        const flavour: MongoFlavour = m === 'collection' ? 'driver' : 'shell';
        const database = this.databaseOf(unwrap(callee.object!), depth + 1);
        return { name, flavour, nameRange: range(unwrap(arg)), ...(database !== undefined ? { database } : {}) };
      }
      return undefined;
    }
    if (isMember(e)) {
      const name = propertyName(e);
      if (name === undefined || DB_METHODS.has(name) || MONGO_OPERATIONS.has(name)) return undefined;
      const obj = unwrap(e.object!);
      if (this.isShellDb(obj)) {
        const database = this.databaseOf(obj, depth + 1);
        return { name, flavour: 'shell', nameRange: range(e.property!), ...(database !== undefined ? { database } : {}) };
      }
      // db.a.b names the collection "a.b" in the shell.
      if (isMember(obj) && !obj.computed) {
        const inner = this.collectionOf(obj, depth + 1);
        if (inner && inner.flavour === 'shell' && !e.computed) return { ...inner, name: `${inner.name}.${name}`, nameRange: { start: inner.nameRange.start, end: e.property!.end } };
      }
    }
    return undefined;
  }

  /** The shell's `db`, `db.getSiblingDB('x')`, or a constant holding one of them. */
  private isShellDb(e: BNode): boolean {
    e = unwrap(e);
    if (e.type === 'Identifier') {
      if (e.name === 'db') {
        // The shell's global db; a declared `db` (a driver Db, an ORM client) is not the shell's.
        const r = this.lookup('db');
        return !r || ('init' in r.binding && this.isShellDbInit(r.binding.init));
      }
      const init = this.constInit(e.name!);
      return init !== undefined && this.isShellDbInit(init);
    }
    return this.isShellDbInit(e);
  }

  private isShellDbInit(e: BNode): boolean {
    e = unwrap(e);
    if (!isCall(e)) return false;
    const callee = unwrap(e.callee!);
    const m = isMember(callee) ? propertyName(callee) : undefined;
    return (m === 'getSiblingDB' || m === 'getDB') && unwrap(callee.object!).type === 'Identifier' && unwrap(callee.object!).name === 'db';
  }

  private databaseOf(e: BNode, depth: number): string | undefined {
    if (depth > MAX_RESOLVE_DEPTH) return undefined;
    e = unwrap(e);
    if (e.type === 'Identifier') {
      const init = this.constInit(e.name!);
      return init ? this.databaseOf(init, depth + 1) : undefined;
    }
    if (isCall(e)) {
      const callee = unwrap(e.callee!);
      const m = isMember(callee) ? propertyName(callee) : undefined;
      if ((m === 'db' || m === 'getSiblingDB' || m === 'getDB') && e.arguments?.length) return this.stringOf(e.arguments[0]!, 0);
    }
    return undefined;
  }

  /** A string written as a literal or held by a local constant. */
  stringOf(e: BNode, depth: number): string | undefined {
    if (depth > MAX_RESOLVE_DEPTH) return undefined;
    e = unwrap(e);
    if (e.type === 'StringLiteral') return e.value as string;
    if (e.type === 'TemplateLiteral' && (e.expressions?.length ?? 0) === 0) return cookedOf(e.quasis![0]!);
    if (e.type === 'Identifier') {
      const init = this.constInit(e.name!);
      return init ? this.stringOf(init, depth + 1) : undefined;
    }
    return undefined;
  }

  /** Resolves an identifier to the node its constant holds (through several constants). */
  resolve(e: BNode): BNode {
    let cur = unwrap(e);
    for (let i = 0; i < MAX_RESOLVE_DEPTH && cur.type === 'Identifier'; i++) {
      const init = this.constInit(cur.name!);
      if (!init) break;
      cur = unwrap(init);
    }
    return cur;
  }

  text(r: SourceRange): string {
    return this.src.slice(r.start, r.end);
  }

  isIdentifierKnown(name: string): boolean {
    return this.constInit(name) !== undefined;
  }

  // -- SQL in scripts --

  private pgQuery(call: BNode): void {
    const arg0 = call.arguments?.[0];
    if (!arg0) return;
    let lit = this.resolve(arg0);
    if (lit.type === 'ObjectExpression') {
      // client.query({ text: '...', values: [...] })
      const textProp = (lit.properties ?? []).find((p) => p.type === 'ObjectProperty' && !p.computed && keyName(p.key!) === 'text');
      if (!textProp) return;
      lit = this.resolve(textProp.value as BNode);
    }
    const found = this.sqlFromLiteral(lit, lit.type === 'TemplateLiteral' ? 'template' : 'string', range(call));
    if (found) {
      this.consumed.add(call);
      this.out.push(found);
    }
  }

  private taggedSql(n: BNode): void {
    const tag = unwrap(n.tag!);
    const name = tag.type === 'Identifier' ? tag.name : isMember(tag) ? propertyName(tag) : undefined;
    if (name !== 'sql' && name !== 'SQL') return;
    const found = this.sqlFromLiteral(n.quasi!, 'tagged-template', range(n));
    if (found) this.out.push(found);
  }

  private sqlFromLiteral(lit: BNode, origin: SqlOrigin, callRange: SourceRange): FoundSqlQuery | undefined {
    let built: { sql: string; runs: SqlRun[]; params: SqlParameter[] };
    if (lit.type === 'StringLiteral') {
      built = { ...cookWithMap(this.src, lit.start + 1, lit.end - 1), params: [] };
    } else if (lit.type === 'TemplateLiteral') {
      const quasis = lit.quasis ?? [];
      const exprs = lit.expressions ?? [];
      built = { sql: '', runs: [], params: [] };
      // $n numbers continue after the highest one written in the text itself.
      const written = Math.max(0, ...quasis.map((q) => maxDollarParam(this.src.slice(q.start, q.end))));
      for (let i = 0; i < quasis.length; i++) {
        const q = quasis[i]!;
        const part = cookWithMap(this.src, q.start, q.end);
        for (const [s, f, l, fl] of part.runs) built.runs.push([s + built.sql.length, f, l, fl]);
        built.sql += part.sql;
        const ex = exprs[i];
        if (ex) {
          const n = written + i + 1;
          // The hole is `${ ... }`: from the end of this chunk to the start of the next.
          const hole = { start: q.end, end: quasis[i + 1]?.start ?? ex.end };
          const name = `$${n}`;
          built.params.push({ n, text: this.src.slice(ex.start, ex.end), range: hole });
          built.runs.push([built.sql.length, hole.start, name.length, hole.end - hole.start]);
          built.sql += name;
        }
      }
    } else return undefined;
    if (!SQL_KEYWORD.test(built.sql)) return undefined;
    const textRange = { start: lit.start + 1, end: lit.end - 1 };
    return { engine: 'postgres', origin, range: callRange, sql: built.sql, runs: built.runs, textRange, params: built.params, warnings: [] };
  }
}

function keyName(k: BNode): string | undefined {
  if (k.type === 'Identifier') return k.name;
  if (k.type === 'StringLiteral') return k.value as string;
  if (k.type === 'NumericLiteral') return String(k.value);
  return undefined;
}

function range(n: BNode): SourceRange {
  return { start: n.start, end: n.end };
}

function maxDollarParam(s: string): number {
  let max = 0;
  for (const m of s.matchAll(/\$(\d+)/g)) max = Math.max(max, Number(m[1]));
  return max;
}

function cookedOf(q: BNode): string {
  const v = q.value as { cooked?: string | null; raw: string };
  return v.cooked ?? v.raw;
}

/**
 * The value of a string literal's or template chunk's source text [from, to), with where each of its
 * characters sits in the file: an escape (\n, \x41, \u{1F600}) maps to the whole escape; a line
 * continuation produces nothing.
 */
function cookWithMap(src: string, from: number, to: number): { sql: string; runs: SqlRun[] } {
  const runs: SqlRun[] = [];
  let out = '';
  let runStart = -1;
  let runSql = 0;
  const close = (i: number) => {
    if (runStart >= 0) runs.push([runSql, runStart, i - runStart, i - runStart]);
    runStart = -1;
  };
  let i = from;
  while (i < to) {
    const c = src[i]!;
    if (c !== '\\') {
      if (runStart < 0) {
        runStart = i;
        runSql = out.length;
      }
      out += c;
      i++;
      continue;
    }
    close(i);
    const e = src[i + 1] ?? '';
    let value: string;
    let len = 2;
    if (e === 'u' && src[i + 2] === '{') {
      const end = src.indexOf('}', i + 3);
      value = String.fromCodePoint(Math.min(0x10ffff, parseInt(src.slice(i + 3, end), 16) || 0));
      len = end - i + 1;
    } else if (e === 'u') {
      value = String.fromCharCode(parseInt(src.slice(i + 2, i + 6), 16) || 0);
      len = 6;
    } else if (e === 'x') {
      value = String.fromCharCode(parseInt(src.slice(i + 2, i + 4), 16) || 0);
      len = 4;
    } else if (e === '\r' && src[i + 2] === '\n') {
      value = '';
      len = 3;
    } else if (e === '\n' || e === '\r' || e === '\u2028' || e === '\u2029') {
      value = '';
    } else {
      value = ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0' } as Record<string, string>)[e] ?? e;
    }
    if (value !== '') {
      runs.push([out.length, i, value.length, len]);
      out += value;
    }
    i += len;
  }
  close(i);
  return { sql: out, runs };
}

// ---- MongoDB calls ------------------------------------------------------------------------------------

type ChainCall = { name: string; call: BNode; nameNode: BNode };

/** Options each operation accepts in its options document, by the command part they fill. */
const OPTION_PARTS: Record<string, MongoCommandPart> = { sort: 'sort', projection: 'projection', limit: 'limit', skip: 'skip', hint: 'hint', collation: 'collation' };

class MongoReader {
  private readonly locations: Record<string, Located> = {};
  private readonly variableParts: MongoCommandPart[] = [];
  private readonly warnings: string[] = [];
  private partial = false;
  private placeholders = false;
  private readonly cmd: MongoCommand;

  constructor(
    private readonly ex: Extractor,
    private readonly coll: { name: string; database?: string; flavour: MongoFlavour; nameRange: SourceRange },
    private readonly op: ChainCall,
    private readonly cursor: ChainCall[],
  ) {
    const operation = (op.name === 'count' ? 'count' : op.name) as MongoOperation;
    this.cmd = { collection: coll.name, operation, hasPlaceholders: false, ranges: {} };
    if (coll.database !== undefined) this.cmd.database = coll.database;
  }

  read(): FoundMongoQuery {
    const cmd = this.cmd;
    const last = this.cursor.length > 0 ? this.cursor[this.cursor.length - 1]!.call : this.op.call;
    const opCallee = unwrap(this.op.call.callee!);
    const start = unwrap(opCallee.object!).start;
    cmd.ranges.whole = { start, end: last.end };
    cmd.ranges.collection = this.coll.nameRange;
    cmd.ranges.operation = range(this.op.nameNode);
    this.operationArgs(this.op.call.arguments ?? []);
    for (const c of this.cursor) this.cursorMethod(c);
    cmd.hasPlaceholders = this.placeholders;
    return {
      engine: 'mongodb', range: { start, end: last.end }, flavour: this.coll.flavour, command: cmd, locations: this.locations,
      variableParts: this.variableParts, partial: this.partial, warnings: this.warnings,
    };
  }

  private operationArgs(args: BNode[]): void {
    const cmd = this.cmd;
    const driver = this.coll.flavour === 'driver';
    const a = (i: number) => args[i];
    switch (cmd.operation) {
      case 'find':
      case 'findOne':
        this.part('filter', a(0));
        if (a(1)) {
          // The driver takes options second; the shell takes a projection second and options third.
          if (driver || this.looksLikeOptions(a(1)!)) this.options(a(1)!, ['sort', 'projection', 'limit', 'skip', 'hint', 'collation']);
          else this.part('projection', a(1));
        }
        if (a(2)) this.options(a(2)!, ['sort', 'projection', 'limit', 'skip', 'hint', 'collation']);
        if (cmd.operation === 'findOne') cmd.limit = 1;
        return;
      case 'aggregate':
        this.part('pipeline', a(0));
        if (a(1)) this.options(a(1)!, ['hint', 'collation']);
        return;
      case 'count':
      case 'countDocuments':
        this.part('filter', a(0));
        if (a(1)) this.options(a(1)!, ['limit', 'skip', 'hint', 'collation']);
        return;
      case 'deleteOne':
      case 'deleteMany':
        this.part('filter', a(0));
        if (a(1)) this.options(a(1)!, ['hint', 'collation']);
        return;
      case 'findOneAndDelete':
        this.part('filter', a(0));
        if (a(1)) this.options(a(1)!, ['sort', 'projection', 'hint', 'collation']);
        return;
      case 'distinct':
        if (a(0)) {
          const f = this.ex.stringOf(a(0)!, 0);
          if (f !== undefined) cmd.field = f;
          else this.variable('field');
          cmd.ranges.field = range(unwrap(a(0)!));
        }
        this.part('filter', a(1));
        if (a(2)) this.options(a(2)!, ['hint', 'collation']);
        return;
      default:
        // updateOne/updateMany/replaceOne/findOneAnd{Update,Replace}: filter, update, options.
        this.part('filter', a(0));
        if (a(1)) this.part('update', a(1));
        if (a(2)) this.options(a(2)!, cmd.operation.startsWith('findOneAnd') ? ['sort', 'projection', 'hint', 'collation'] : ['hint', 'collation']);
    }
  }

  private looksLikeOptions(e: BNode): boolean {
    const o = this.ex.resolve(e);
    if (o.type !== 'ObjectExpression') return false;
    const keys = (o.properties ?? []).map((p) => (p.key ? keyName(p.key) : undefined));
    return keys.length > 0 && keys.some((k) => k === 'projection' || k === 'sort' || k === 'limit' || k === 'skip' || k === 'hint');
  }

  private variable(p: MongoCommandPart): void {
    if (!this.variableParts.includes(p)) this.variableParts.push(p);
    this.placeholders = true;
  }

  /** Reads one command part from an argument and stores it on the command. */
  private part(p: MongoCommandPart, node: BNode | undefined): void {
    if (!node) return;
    const v = new ValueReader(this.ex, this.locations, () => {
      this.placeholders = true;
    }, () => {
      this.partial = true;
    }).read(node, p);
    // A copy: every range object belongs to one place, so moving them after an edit moves each once.
    const r = { ...this.locations[p]!.value };
    this.cmd.ranges[p] = r;
    if (isPlaceholder(v)) this.variable(p);
    const cmd = this.cmd;
    switch (p) {
      case 'filter':
        if (v === undefined || v === null || isUndefinedValue(v)) {
          delete cmd.ranges.filter;
          return;
        }
        if (isDoc(v)) cmd.filter = v;
        return;
      case 'projection':
        if (isDoc(v)) cmd.projection = v;
        return;
      case 'sort':
        if (isDoc(v) && !isPlaceholder(v)) cmd.sort = v;
        else if (Array.isArray(v)) cmd.sort = sortFromPairs(v);
        return;
      case 'pipeline':
        if (Array.isArray(v)) cmd.pipeline = v.filter(isDoc);
        else cmd.pipeline = [];
        return;
      case 'update':
        if (isDoc(v)) cmd.update = v;
        else if (Array.isArray(v)) cmd.update = v.filter(isDoc);
        return;
      case 'limit':
      case 'skip': {
        const n = typeof v === 'number' ? v : undefined;
        if (n !== undefined && Number.isInteger(n)) cmd[p] = Math.abs(n);
        else if (!isPlaceholder(v)) this.variable(p);
        return;
      }
      case 'hint':
        if (typeof v === 'string' || isDoc(v)) cmd.hint = v;
        return;
      case 'collation':
        if (isDoc(v)) cmd.collation = v;
        return;
      default:
        return;
    }
  }

  /** An options document: the parts it names are read as parts (with their own paths), the rest kept. */
  private options(node: BNode, allowed: string[]): void {
    const o = this.ex.resolve(node);
    this.cmd.ranges.options = range(unwrap(node));
    if (o.type !== 'ObjectExpression') {
      this.warnings.push(`The options ${this.ex.text(range(node))} are not written out here, so a sort, limit or skip in them is not known.`);
      this.partial = true;
      return;
    }
    for (const p of o.properties ?? []) {
      if (p.type !== 'ObjectProperty' || p.computed) {
        this.partial = true;
        continue;
      }
      const k = keyName(p.key!);
      if (k === undefined) continue;
      const value = (p.shorthand ? p.key : p.value) as BNode;
      if (allowed.includes(k) && OPTION_PARTS[k]) {
        const partName = OPTION_PARTS[k]!;
        this.part(partName, value);
        this.locations[partName]!.member = range(p);
        this.locations[partName]!.key = range(p.key!);
      } else {
        const v = new ValueReader(this.ex, this.locations, () => undefined, () => undefined).read(value, `options/${escapeKey(k)}`);
        this.cmd.options = { ...(this.cmd.options ?? {}), [k]: v };
      }
    }
  }

  private cursorMethod(c: ChainCall): void {
    const args = c.call.arguments ?? [];
    switch (c.name) {
      case 'sort':
        if (args.length === 2) {
          // The driver's sort('field', -1).
          const f = this.ex.stringOf(args[0]!, 0);
          const d = this.ex.resolve(args[1]!);
          if (f !== undefined) {
            const dir = d.type === 'NumericLiteral' ? (d.value as number) : d.type === 'UnaryExpression' && d.operator === '-' ? -1 : d.type === 'StringLiteral' ? (/^desc/i.test(d.value as string) ? -1 : 1) : 1;
            this.cmd.sort = { [f]: dir < 0 ? -1 : 1 };
            this.cmd.ranges.sort = { start: args[0]!.start, end: args[1]!.end };
            this.locations['sort'] = { value: { ...this.cmd.ranges.sort } };
            return;
          }
        }
        if (args[0]?.type === 'StringLiteral') {
          this.cmd.sort = { [args[0].value as string]: 1 };
          this.cmd.ranges.sort = range(args[0]);
          this.locations['sort'] = { value: range(args[0]) };
          return;
        }
        this.part('sort', args[0]);
        return;
      case 'project':
      case 'projection':
        this.part('projection', args[0]);
        return;
      case 'limit':
      case 'skip':
      case 'hint':
      case 'collation':
        this.part(c.name, args[0]);
        return;
      case 'explain':
        this.cmd.explain = 'queryPlanner';
        this.cmd.ranges.explain = { start: c.nameNode.start, end: c.call.end };
        return;
      default:
        if (args[0]) {
          const v = new ValueReader(this.ex, this.locations, () => undefined, () => undefined).read(args[0], `options/${c.name}`);
          this.cmd.options = { ...(this.cmd.options ?? {}), [c.name]: v };
        } else this.cmd.options = { ...(this.cmd.options ?? {}), [c.name]: true };
    }
  }
}

function sortFromPairs(v: unknown[]): Doc | undefined {
  // The driver also accepts [['a', 1], ['b', -1]].
  const out: Doc = {};
  for (const p of v) {
    if (!Array.isArray(p) || typeof p[0] !== 'string') return undefined;
    out[p[0]] = typeof p[1] === 'number' && p[1] < 0 ? -1 : 1;
  }
  return out;
}

/** Path segments escape '/' and '~' as JSON Pointer does. */
export function escapeKey(k: string): string {
  return k.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The path of a member below a part: locationPath('filter', 'contact.email', '$regex'). */
export function locationPath(...segments: (string | number)[]): string {
  return segments.map((s) => escapeKey(String(s))).join('/');
}

const BSON_CONSTRUCTORS = new Set(['ObjectId', 'ISODate', 'Date', 'Long', 'NumberLong', 'NumberInt', 'Int32', 'Double', 'NumberDecimal',
  'Decimal128', 'Timestamp', 'BinData', 'HexData', 'UUID', 'MinKey', 'MaxKey', 'RegExp', 'DBRef', 'ObjectID']);

/** Reads a value from syntax, recording where each member is; non-literals become placeholders. */
class ValueReader {
  private readonly resolving = new Set<BNode>();

  constructor(
    private readonly ex: Extractor,
    private readonly locs: Record<string, Located>,
    private readonly onPlaceholder: () => void,
    private readonly onPartial: () => void,
  ) {}

  read(node: BNode, path: string): unknown {
    return this.value(node, path, 0);
  }

  private placeholder(n: BNode): unknown {
    this.onPlaceholder();
    return { $placeholder: this.ex.text(range(n)).trim() };
  }

  private value(node: BNode, path: string, depth: number): unknown {
    const n = unwrap(node);
    if (!(path in this.locs)) this.locs[path] = { value: range(n) };
    else this.locs[path]!.value = range(n);
    if (depth > MAX_VALUE_DEPTH) return this.placeholder(n);
    switch (n.type) {
      case 'StringLiteral':
      case 'NumericLiteral':
      case 'BooleanLiteral':
        return n.value;
      case 'NullLiteral':
        return null;
      case 'RegExpLiteral':
        return { $regex: n.pattern ?? '', $options: n.flags ?? '' };
      case 'BigIntLiteral':
        return { $numberLong: String(n.value) };
      case 'TemplateLiteral':
        if ((n.expressions?.length ?? 0) > 0) return this.placeholder(n);
        return cookedOf(n.quasis![0]!);
      case 'ObjectExpression':
        return this.object(n, path, depth);
      case 'ArrayExpression':
        return this.array(n, path, depth);
      case 'Identifier':
        return this.identifier(n, path, depth);
      case 'UnaryExpression': {
        if ((n.operator === '-' || n.operator === '+') && n.argument) {
          const v = this.value(n.argument, path, depth + 1);
          this.locs[path]!.value = range(n);
          if (typeof v === 'number') return n.operator === '-' ? -v : v;
          if (isPlaceholder(v)) return { $placeholder: this.ex.text(range(n)) };
        }
        return this.placeholder(n);
      }
      case 'CallExpression':
      case 'NewExpression': {
        const callee = unwrap(n.callee!);
        // Only constructor calls whose arguments are all literals can be read; others are variables.
        if (callee.type === 'Identifier' && BSON_CONSTRUCTORS.has(callee.name!) && (n.arguments ?? []).every(isLiteralArgument)) {
          const text = this.ex.text(range(n)).replace(/^new\s+ObjectID\b/, 'new ObjectId').replace(/^ObjectID\b/, 'ObjectId');
          const r = readShellNotation(text);
          if (r.ok) return r.value;
        }
        if (callee.type === 'Identifier' && callee.name === 'RegExp' && n.arguments?.[0]) {
          // new RegExp(variable, 'i'): the pattern is unknown, the flags are not.
          const flags = n.arguments[1] ? this.ex.stringOf(n.arguments[1], 0) : '';
          if (flags !== undefined) {
            this.onPlaceholder();
            return { $regex: { $placeholder: this.ex.text(range(n.arguments[0])) }, $options: flags };
          }
        }
        return this.placeholder(n);
      }
      case 'BinaryExpression': {
        if (n.operator === '+') {
          const l = this.ex.stringOf(n.left!, 0);
          const r = this.ex.stringOf(n.right!, 0);
          if (l !== undefined && r !== undefined) return l + r;
        }
        return this.placeholder(n);
      }
      default:
        return this.placeholder(n);
    }
  }

  private identifier(n: BNode, path: string, depth: number): unknown {
    switch (n.name) {
      case 'undefined':
        return { $undefined: true };
      case 'Infinity':
        return { $numberDouble: 'Infinity' };
      case 'NaN':
        return { $numberDouble: 'NaN' };
      case 'MinKey':
        return { $minKey: 1 };
      case 'MaxKey':
        return { $maxKey: 1 };
      default:
        break;
    }
    const init = this.ex.isIdentifierKnown(n.name!) ? this.ex.resolve(n) : undefined;
    if (!init || init.type === 'Identifier' || this.resolving.has(init)) return this.placeholder(n);
    this.resolving.add(init);
    try {
      const v = this.value(init, path, depth + 1);
      return v;
    } finally {
      this.resolving.delete(init);
    }
  }

  private object(n: BNode, path: string, depth: number): unknown {
    const out: Doc = {};
    for (const p of n.properties ?? []) {
      if (p.type === 'SpreadElement') {
        const target = this.ex.resolve(p.argument!);
        if (target.type === 'ObjectExpression' && !this.resolving.has(target)) {
          this.resolving.add(target);
          const v = this.object(target, path, depth + 1);
          this.resolving.delete(target);
          if (isDoc(v)) for (const [k, x] of Object.entries(v)) define(out, k, x);
        } else {
          this.onPartial();
          this.onPlaceholder();
        }
        continue;
      }
      if (p.type !== 'ObjectProperty') {
        this.onPartial();
        continue;
      }
      let k: string | undefined;
      if (p.computed) k = this.ex.stringOf(p.key!, 0);
      else k = keyName(p.key!);
      if (k === undefined) {
        this.onPartial();
        this.onPlaceholder();
        continue;
      }
      const sub = `${path}/${escapeKey(k)}`;
      const valueNode = (p.shorthand ? p.key : p.value) as BNode;
      this.locs[sub] = { value: range(unwrap(valueNode)), member: range(p), key: range(p.key!) };
      define(out, k, this.value(valueNode, sub, depth + 1));
    }
    return out;
  }

  private array(n: BNode, path: string, depth: number): unknown[] {
    const out: unknown[] = [];
    for (const el of n.elements ?? []) {
      if (el === null) {
        out.push(null);
        continue;
      }
      if (el.type === 'SpreadElement') {
        const target = this.ex.resolve(el.argument!);
        if (target.type === 'ArrayExpression' && !this.resolving.has(target)) {
          this.resolving.add(target);
          for (const x of this.array(target, `${path}/${out.length}`, depth + 1)) out.push(x);
          this.resolving.delete(target);
        } else {
          this.onPartial();
          this.onPlaceholder();
          out.push({ $placeholder: this.ex.text(range(el)) });
        }
        continue;
      }
      const sub = `${path}/${out.length}`;
      this.locs[sub] = { value: range(unwrap(el)), member: range(el) };
      out.push(this.value(el, sub, depth + 1));
    }
    return out;
  }
}

function isLiteralArgument(n: BNode): boolean {
  const u = unwrap(n);
  switch (u.type) {
    case 'StringLiteral':
    case 'NumericLiteral':
    case 'BooleanLiteral':
    case 'NullLiteral':
    case 'BigIntLiteral':
    case 'RegExpLiteral':
      return true;
    case 'TemplateLiteral':
      return (u.expressions?.length ?? 0) === 0;
    case 'UnaryExpression':
      return u.argument !== undefined && isLiteralArgument(u.argument);
    case 'ObjectExpression':
      return (u.properties ?? []).every((p) => p.type === 'ObjectProperty' && !p.computed && isLiteralArgument(p.value as BNode));
    default:
      return false;
  }
}

function define(o: Doc, k: string, v: unknown): void {
  // defineProperty keeps "__proto__" an ordinary key instead of replacing the prototype.
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function isDoc(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isPlaceholder(v: unknown): v is { $placeholder: string } {
  return isDoc(v) && typeof v['$placeholder'] === 'string' && Object.keys(v).length === 1;
}

function isUndefinedValue(v: unknown): boolean {
  return isDoc(v) && v['$undefined'] === true && Object.keys(v).length === 1;
}
