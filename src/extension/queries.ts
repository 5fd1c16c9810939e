// Finds the queries a developer can explain in a source file: mongo shell calls in JavaScript and
// TypeScript (and `.mongodb.js` playgrounds), driver calls such as `db.collection('x').find(...)`, SQL
// statements in `.sql` files, and SQL string literals passed to `client.query(...)` / `pool.query(...)`.
// Pure text scanning (no vscode, no parser of the host language), so it also works on TypeScript and on
// files that do not compile yet; the query text itself is parsed later by the core.

export type QueryEngine = 'mongodb' | 'postgres';

export interface DetectedQuery {
  engine: QueryEngine;
  /** Offsets of the query in the document text: the CodeLens and the highlight cover [start, end). */
  start: number;
  end: number;
  /** The text to explain: mongo shell notation (`db.getCollection('c').find(...)`) or one SQL statement. */
  text: string;
  /** Why the text needed care before it can run, one sentence; undefined when it can run as is. */
  problem?: string;
}

/** What kind of file this is, from its language id and name. */
export type SourceKind = 'sql' | 'mongodb-playground' | 'script' | 'other';

export function sourceKind(languageId: string, fileName: string): SourceKind {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.mongodb.js') || lower.endsWith('.mongodb') || languageId === 'mongodb') return 'mongodb-playground';
  if (languageId === 'sql' || languageId === 'postgres' || languageId === 'pgsql' || /\.(sql|psql|pgsql)$/.test(lower)) return 'sql';
  if (['javascript', 'typescript', 'javascriptreact', 'typescriptreact'].includes(languageId) || /\.(c|m)?(j|t)sx?$/.test(lower)) return 'script';
  return 'other';
}

/** Every query found in a file, in text order. */
export function findQueries(text: string, kind: SourceKind): DetectedQuery[] {
  if (kind === 'sql') return findSqlStatements(text);
  if (kind === 'mongodb-playground' || kind === 'script') {
    const found = [...findMongoCalls(text), ...(kind === 'script' ? findSqlInQueryCalls(text) : [])];
    return found.sort((a, b) => a.start - b.start);
  }
  return [];
}

/** The query containing the offset, or the nearest one on the same line. */
export function queryAt(queries: DetectedQuery[], offset: number, text: string): DetectedQuery | undefined {
  const inside = queries.filter((q) => q.start <= offset && offset <= q.end);
  if (inside.length > 0) return inside.reduce((a, b) => (b.end - b.start < a.end - a.start ? b : a));
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  let lineEnd = text.indexOf('\n', offset);
  if (lineEnd < 0) lineEnd = text.length;
  return queries.find((q) => q.start >= lineStart && q.start <= lineEnd);
}

/**
 * Reads a selection the user made: decides the engine and returns the query text to explain. A
 * selection may be a whole statement, a mongo call, or a string literal holding SQL.
 */
export function classifySelection(selected: string, kind: SourceKind): DetectedQuery | undefined {
  const trimmed = selected.trim();
  if (trimmed === '') return undefined;
  const offset = selected.indexOf(trimmed);
  if (kind === 'sql') return { engine: 'postgres', start: offset, end: offset + trimmed.length, text: stripSemicolon(trimmed) };
  const mongo = findMongoCalls(trimmed);
  if (mongo.length > 0) {
    const q = mongo[0]!;
    return { ...q, start: q.start + offset, end: q.end + offset };
  }
  const literal = readStringLiteral(trimmed, 0);
  if (literal && literal.end === trimmed.length && looksLikeSql(literal.value)) {
    return { engine: 'postgres', start: offset, end: offset + trimmed.length, text: stripSemicolon(literal.value.trim()), ...(literal.problem ? { problem: literal.problem } : {}) };
  }
  if (looksLikeSql(trimmed)) return { engine: 'postgres', start: offset, end: offset + trimmed.length, text: stripSemicolon(trimmed) };
  if (kind === 'mongodb-playground') return { engine: 'mongodb', start: offset, end: offset + trimmed.length, text: trimmed };
  return undefined;
}

const SQL_START = /^\s*(\(\s*)*(select|with|insert|update|delete|merge|values|table)\b/i;

export function looksLikeSql(text: string): boolean {
  return SQL_START.test(stripSqlComments(text));
}

function stripSemicolon(sql: string): string {
  return sql.replace(/;\s*$/, '').trim();
}

function stripSqlComments(text: string): string {
  return text.replace(/^(\s*(--[^\n]*\n|\/\*[\s\S]*?\*\/))*/, '');
}

// ---- SQL files ---------------------------------------------------------------------------------

/** Splits a SQL file into statements, honouring quotes, comments and dollar quoting. */
export function findSqlStatements(text: string): DetectedQuery[] {
  const out: DetectedQuery[] = [];
  let stmtStart = 0;
  let i = 0;
  const push = (end: number) => {
    const raw = text.slice(stmtStart, end);
    const lead = leadingTrivia(raw);
    const body = raw.slice(lead).trimEnd();
    if (body !== '' && looksLikeSql(body)) out.push({ engine: 'postgres', start: stmtStart + lead, end: stmtStart + lead + body.length, text: body });
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '-' && text[i + 1] === '-') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl + 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? text.length : close + 2;
    } else if (c === "'" || c === '"') {
      i = skipQuoted(text, i, c);
    } else if (c === '$') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i, i + 64));
      if (tag && !/[A-Za-z0-9_]/.test(text[i - 1] ?? '')) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        i = close < 0 ? text.length : close + tag[0].length;
      } else i++;
    } else if (c === ';') {
      push(i);
      stmtStart = i + 1;
      i++;
    } else i++;
  }
  push(text.length);
  return out;
}

/** Length of the whitespace and comments that start a statement. */
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

function skipQuoted(text: string, i: number, quote: string): number {
  let j = i + 1;
  while (j < text.length) {
    if (text[j] === quote) {
      if (text[j + 1] === quote) j += 2;
      else return j + 1;
    } else j++;
  }
  return text.length;
}

// ---- JavaScript / TypeScript scanning ----------------------------------------------------------

const MONGO_METHODS = new Set([
  'find', 'findOne', 'aggregate', 'countDocuments', 'count', 'distinct', 'updateOne', 'updateMany', 'deleteOne',
  'deleteMany', 'findOneAndUpdate', 'findOneAndDelete', 'findOneAndReplace', 'replaceOne', 'estimatedDocumentCount',
]);
/** Cursor methods that belong to the query; `.toArray()`, `.explain()` and the like end it. */
const CHAIN_METHODS = new Set(['sort', 'limit', 'skip', 'project', 'projection', 'hint', 'min', 'max', 'collation', 'comment', 'maxTimeMS', 'batchSize', 'allowDiskUse']);

/**
 * Positions in a JS/TS text that are code, i.e. not inside strings, comments, regex or template text.
 * Returns a function answering "is this offset code?" computed once per text.
 */
function codeMask(text: string): Uint8Array {
  const mask = new Uint8Array(text.length + 1);
  let i = 0;
  const templateDepth: number[] = [];
  let braceDepth = 0;
  let lastSignificant = '';
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
      continue;
    }
    if (c === '/' && next === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? text.length : close + 2;
      continue;
    }
    if (c === "'" || c === '"') {
      i = skipJsString(text, i);
      lastSignificant = c;
      continue;
    }
    if (c === '`' || (c === '}' && templateDepth.length > 0 && templateDepth[templateDepth.length - 1] === braceDepth)) {
      if (c === '}') templateDepth.pop();
      // Template text until `${` or the closing backtick.
      let j = i + 1;
      while (j < text.length && text[j] !== '`') {
        if (text[j] === '\\') j += 2;
        else if (text[j] === '$' && text[j + 1] === '{') break;
        else j++;
      }
      if (j < text.length && text[j] === '$') {
        templateDepth.push(braceDepth);
        i = j + 2;
      } else i = j + 1;
      lastSignificant = '`';
      continue;
    }
    if (c === '/' && regexAllowedAfter(lastSignificant)) {
      const end = skipRegex(text, i);
      if (end > 0) {
        i = end;
        lastSignificant = '/';
        continue;
      }
    }
    if (c === '{') braceDepth++;
    if (c === '}') braceDepth--;
    mask[i] = 1;
    if (!/\s/.test(c)) lastSignificant = /[A-Za-z0-9_$]/.test(c) ? 'a' : c;
    i++;
  }
  return mask;
}

function regexAllowedAfter(prev: string): boolean {
  return prev === '' || '(,=:[!&|?{};+-*%<>~^'.includes(prev);
}

function skipRegex(text: string, i: number): number {
  let j = i + 1;
  let inClass = false;
  while (j < text.length) {
    const c = text[j]!;
    if (c === '\n') return -1;
    if (c === '\\') j += 2;
    else if (c === '[') {
      inClass = true;
      j++;
    } else if (c === ']') {
      inClass = false;
      j++;
    } else if (c === '/' && !inClass) {
      j++;
      while (j < text.length && /[a-z]/i.test(text[j]!)) j++;
      return j;
    } else j++;
  }
  return -1;
}

function skipJsString(text: string, i: number): number {
  const q = text[i];
  let j = i + 1;
  while (j < text.length) {
    if (text[j] === '\\') j += 2;
    else if (text[j] === q) return j + 1;
    else if (text[j] === '\n') return j;
    else j++;
  }
  return text.length;
}

/** Index just past the bracket matching the one at `open`, skipping strings, comments and templates. */
function matchBracket(text: string, open: number): number {
  const pairs: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
  const stack: string[] = [];
  let i = open;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      i = skipJsString(text, i);
      continue;
    }
    if (c === '`') {
      i = skipTemplate(text, i);
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? text.length : close + 2;
      continue;
    }
    if (c === '/') {
      const prev = previousSignificant(text, i);
      if (regexAllowedAfter(prev)) {
        const end = skipRegex(text, i);
        if (end > 0) {
          i = end;
          continue;
        }
      }
    }
    if (c in pairs) stack.push(pairs[c]!);
    else if (c === ')' || c === ']' || c === '}') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

function skipTemplate(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    if (text[j] === '\\') j += 2;
    else if (text[j] === '`') return j + 1;
    else if (text[j] === '$' && text[j + 1] === '{') {
      const end = matchBracket(text, j + 1);
      if (end < 0) return text.length;
      j = end;
    } else j++;
  }
  return text.length;
}

function previousSignificant(text: string, i: number): string {
  let j = i - 1;
  while (j >= 0 && /\s/.test(text[j]!)) j--;
  if (j < 0) return '';
  return /[A-Za-z0-9_$)\]]/.test(text[j]!) ? 'a' : text[j]!;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

function readIdentifier(text: string, i: number): { name: string; end: number } | undefined {
  const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(text.slice(i, i + 128));
  return m ? { name: m[0], end: i + m[0].length } : undefined;
}

interface StringLiteral {
  value: string;
  end: number;
  /** Set when a template literal has `${...}` parts, which are replaced by placeholders. */
  problem?: string;
}

/** Reads a JS string or template literal starting at i (after optional spaces). */
function readStringLiteral(text: string, i: number): StringLiteral | undefined {
  i = skipSpace(text, i);
  const q = text[i];
  if (q === "'" || q === '"') {
    const end = skipJsString(text, i);
    if (text[end - 1] !== q) return undefined;
    return { value: unescapeJs(text.slice(i + 1, end - 1)), end };
  }
  if (q === '`') {
    const end = skipTemplate(text, i);
    const body = text.slice(i + 1, end - 1);
    const parts: string[] = [];
    let k = 0;
    let holes = 0;
    while (k < body.length) {
      if (body[k] === '\\') {
        parts.push(body.slice(k, k + 2));
        k += 2;
      } else if (body[k] === '$' && body[k + 1] === '{') {
        const close = matchBracket(body, k + 1);
        holes++;
        parts.push(`$${holes}`);
        k = close < 0 ? body.length : close;
      } else parts.push(body[k++]!);
    }
    const value = unescapeJs(parts.join(''));
    return holes > 0 ? { value, end, problem: 'The SQL is built with ${...} parts, which cannot be explained without values: select a query with literal values.' } : { value, end };
  }
  return undefined;
}

function unescapeJs(s: string): string {
  return s.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\s\S])/g, (_m, e: string) => {
    if (e[0] === 'u' && e[1] === '{') return String.fromCodePoint(parseInt(e.slice(2, -1), 16));
    if (e[0] === 'u' && e.length === 5) return String.fromCharCode(parseInt(e.slice(1), 16));
    if (e[0] === 'x' && e.length === 3) return String.fromCharCode(parseInt(e.slice(1), 16));
    return ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0', '\n': '' } as Record<string, string>)[e] ?? e;
  });
}

/**
 * Finds `db.<name>.<method>(...)`, `db.getCollection('x').<method>(...)` and driver calls
 * `<expr>.collection('x').<method>(...)`, with the cursor methods chained after them. The returned text
 * is shell notation the core's query parser reads: driver calls are rewritten to `db.getCollection(..)`.
 */
export function findMongoCalls(text: string): DetectedQuery[] {
  const mask = codeMask(text);
  const out: DetectedQuery[] = [];
  const re = /\bdb\s*\.|\.\s*collection\s*\(/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    if (!mask[m.index]) continue;
    let collectionText: string | undefined;
    let start: number;
    let i: number;
    if (m[0].startsWith('db')) {
      if (m.index > 0 && /[A-Za-z0-9_$.]/.test(text[m.index - 1]!)) continue;
      start = m.index;
      i = skipSpace(text, m.index + m[0].length);
      const id = readIdentifier(text, i);
      if (!id) continue;
      if (id.name === 'getCollection' || id.name === 'collection') {
        const open = skipSpace(text, id.end);
        if (text[open] !== '(') continue;
        const close = matchBracket(text, open);
        if (close < 0) continue;
        const lit = readStringLiteral(text, open + 1);
        if (!lit || skipSpace(text, lit.end) !== close - 1) continue;
        collectionText = lit.value;
        i = close;
      } else if (MONGO_METHODS.has(id.name) || CHAIN_METHODS.has(id.name)) {
        continue;
      } else {
        collectionText = id.name;
        i = id.end;
      }
    } else {
      // `.collection(` of a driver handle: the query starts at the receiver expression; the span starts
      // at the `.collection` call since the receiver (client.db('x')) is not part of the query.
      const open = m.index + m[0].length - 1;
      const close = matchBracket(text, open);
      if (close < 0) continue;
      const lit = readStringLiteral(text, open + 1);
      if (!lit || skipSpace(text, lit.end) !== close - 1) continue;
      collectionText = lit.value;
      start = receiverStart(text, m.index);
      i = close;
    }
    // The operation.
    let j = skipSpace(text, i);
    if (text[j] !== '.') continue;
    j = skipSpace(text, j + 1);
    const method = readIdentifier(text, j);
    if (!method || !MONGO_METHODS.has(method.name)) continue;
    let open = skipSpace(text, method.end);
    if (text[open] !== '(') continue;
    let end = matchBracket(text, open);
    if (end < 0) continue;
    const parts = [`.${method.name}${text.slice(open, end)}`];
    // Chained cursor methods.
    for (;;) {
      const dot = skipSpace(text, end);
      if (text[dot] !== '.') break;
      const chained = readIdentifier(text, skipSpace(text, dot + 1));
      if (!chained || !CHAIN_METHODS.has(chained.name)) break;
      open = skipSpace(text, chained.end);
      if (text[open] !== '(') break;
      const close = matchBracket(text, open);
      if (close < 0) break;
      parts.push(`.${chained.name}${text.slice(open, close)}`);
      end = close;
    }
    const collection = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(collectionText) ? `db.${collectionText}` : `db.getCollection(${JSON.stringify(collectionText)})`;
    out.push({ engine: 'mongodb', start, end, text: collection + parts.join('') });
    re.lastIndex = end;
  }
  return out;
}

/** Start of `a.b('x').c` style receiver chains that end at `dot` (the `.collection` call). */
function receiverStart(text: string, dot: number): number {
  let i = dot;
  for (;;) {
    let j = i - 1;
    while (j >= 0 && /\s/.test(text[j]!)) j--;
    if (j >= 0 && text[j] === ')') {
      // Walk back over a balanced call's arguments.
      let depth = 0;
      let k = j;
      for (; k >= 0; k--) {
        if (text[k] === ')') depth++;
        else if (text[k] === '(') {
          depth--;
          if (depth === 0) break;
        }
      }
      if (k < 0) return i;
      j = k - 1;
      while (j >= 0 && /\s/.test(text[j]!)) j--;
    }
    let k = j;
    while (k >= 0 && /[A-Za-z0-9_$]/.test(text[k]!)) k--;
    if (k === j) return i;
    const identStart = k + 1;
    let p = k;
    while (p >= 0 && /\s/.test(text[p]!)) p--;
    if (p >= 0 && text[p] === '.') i = p;
    else return identStart;
  }
}

/**
 * Finds SQL string literals passed as the first argument of `.query(...)` (node-postgres `client.query`,
 * `pool.query`). Literal parameter arrays (`[1, 'x']`) are inlined for `$1`, `$2`... so the statement
 * can be explained; parameters bound to variables are reported as a problem.
 */
export function findSqlInQueryCalls(text: string): DetectedQuery[] {
  const mask = codeMask(text);
  const out: DetectedQuery[] = [];
  const re = /\.\s*query\s*(<[^>()]*>)?\s*\(/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    if (!mask[m.index]) continue;
    const open = m.index + m[0].length - 1;
    const close = matchBracket(text, open);
    if (close < 0) continue;
    const argStart = skipSpace(text, open + 1);
    let lit = readStringLiteral(text, argStart);
    let litStart = argStart;
    if (!lit && text[argStart] === '{') {
      // client.query({ text: '...', values: [...] })
      const t = /\btext\s*:\s*/.exec(text.slice(argStart, close));
      if (t) {
        litStart = argStart + t.index + t[0].length;
        lit = readStringLiteral(text, litStart);
      }
    }
    if (!lit || !looksLikeSql(lit.value)) continue;
    let sql = stripSemicolon(lit.value.trim());
    let problem = lit.problem;
    if (!problem && /\$\d+/.test(sql)) {
      const values = readLiteralArray(text, lit.end, close);
      if (values) sql = inlineParameters(sql, values);
      if (!values || /\$\d+/.test(sql)) problem = 'The SQL has parameters ($1, $2...) bound to variables, which cannot be explained without values: select a query with literal values.';
    }
    const q: DetectedQuery = { engine: 'postgres', start: skipSpace(text, litStart), end: lit.end, text: sql };
    if (problem) q.problem = problem;
    out.push(q);
  }
  return out;
}

type SqlValue = string | number | boolean | null;

/** Reads `, [1, 'a', true, null]` after the SQL literal when every element is a literal. */
function readLiteralArray(text: string, from: number, limit: number): SqlValue[] | undefined {
  let i = skipSpace(text, from);
  if (text[i] === ',') i = skipSpace(text, i + 1);
  else if (text[i] === '}') {
    // Object form: find `values:`
    return undefined;
  }
  const valuesKey = /\bvalues\s*:\s*/.exec(text.slice(from, limit));
  if (text[i] !== '[' && valuesKey) i = from + valuesKey.index + valuesKey[0].length;
  if (text[i] !== '[') return undefined;
  const close = matchBracket(text, i);
  if (close < 0 || close > limit) return undefined;
  const values: SqlValue[] = [];
  let k = skipSpace(text, i + 1);
  while (k < close - 1) {
    const lit = readStringLiteral(text, k);
    if (lit && !lit.problem) {
      values.push(lit.value);
      k = lit.end;
    } else {
      const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)\b/.exec(text.slice(k, close));
      if (!m) return undefined;
      values.push(m[0] === 'true' ? true : m[0] === 'false' ? false : m[0] === 'null' ? null : Number(m[0]));
      k += m[0].length;
    }
    k = skipSpace(text, k);
    if (text[k] === ',') k = skipSpace(text, k + 1);
    else if (k !== close - 1) return undefined;
  }
  return values;
}

/** Replaces $n outside quotes by SQL literals of the given values. */
export function inlineParameters(sql: string, values: SqlValue[]): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = skipQuoted(sql, i, c);
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    const m = c === '$' ? /^\$(\d+)/.exec(sql.slice(i)) : null;
    if (m && Number(m[1]) >= 1 && Number(m[1]) <= values.length) {
      out += sqlLiteral(values[Number(m[1]) - 1]!);
      i += m[0].length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

function sqlLiteral(v: SqlValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'number') return String(v);
  return `'${v.replace(/'/g, "''")}'`;
}

/** True when a mongo command would write through `$out` or `$merge` (it must not run at executionStats without consent). */
export function writesThroughPipeline(mongoText: string): boolean {
  return /["']?\$(out|merge)["']?\s*:/.test(mongoText);
}

/** The SQL verb of a statement: 'SELECT', 'UPDATE', ... ('WITH' statements report the data-changing verb inside, if any). */
export function sqlVerb(sql: string): string {
  const body = stripSqlComments(sql).trim();
  const first = /^\(*\s*([A-Za-z]+)/.exec(body)?.[1]?.toUpperCase() ?? '';
  if (first === 'WITH') {
    const dml = /\b(INSERT|UPDATE|DELETE|MERGE)\b/i.exec(body.replace(/'(?:[^']|'')*'/g, "''"));
    return dml ? dml[1]!.toUpperCase() : 'SELECT';
  }
  return first;
}

export function isDataChanging(sql: string): boolean {
  return ['INSERT', 'UPDATE', 'DELETE', 'MERGE'].includes(sqlVerb(sql));
}
