// SQL held in strings of a script: the text passed to node-postgres (`client.query('...')`,
// `pool.query({ text, values })`, also TypeORM's and Sequelize's `.query(sql)`), and tagged templates of
// `sql`, postgres.js (`sql`/`tx` tags, fragments, `sql.unsafe`) and slonik. `${...}` parts become $n
// parameters and every character of the SQL maps back to the file, escapes included.

import type { Extractor, CallReader } from './extractor';
import { parseSqlSync, sqlParserLoaded } from '../../sql/parser';
import { normalisePlaceholders } from './placeholders';
import { replaceInSql } from './ranges';
import { quoteIdent } from './sqlBuild';
import { cookedOf, isCall, isMember, keyName, propertyName, range, unwrap, type BNode } from './syntax';
import type { FoundSqlQuery, SourceRange, SqlOrigin, SqlParameter, SqlRun, SqlValue } from './types';

const SQL_KEYWORD = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*\(*\s*(select|with|insert|update|delete|merge|values|table|explain)\b/i;

/** `x.query('SELECT ...')` in a script, the node-postgres way. */
export const pgQueryCalls: CallReader = {
  read(n, ex) {
    if (ex.kind !== 'script' || n.type === 'TaggedTemplateExpression') return false;
    const callee = unwrap(n.callee!);
    if (!isMember(callee) || propertyName(callee) !== 'query') return false;
    return pgQuery(n, ex);
  },
};

/**
 * Tagged templates that make SQL: `sql`...``, postgres.js instances (`tx`...``, a tag imported from
 * postgres), slonik's `sql.type(...)`...`` and `sql.unsafe`...``; and postgres.js `sql.unsafe('...')`.
 */
export const sqlTags: CallReader = {
  read(n, ex) {
    if (n.type !== 'TaggedTemplateExpression') {
      const callee = isCall(n) ? unwrap(n.callee!) : undefined;
      if (!callee || !isMember(callee) || propertyName(callee) !== 'unsafe' || sqlTagName(ex, callee.object!) === undefined) return false;
      const lit = n.arguments?.[0] ? ex.resolve(n.arguments[0]) : undefined;
      const found = lit ? sqlFromLiteral(ex, lit, lit.type === 'TemplateLiteral' ? 'template' : 'string', range(n)) : undefined;
      if (!found) return false;
      const values = n.arguments?.[1] ? literalValues(ex, n.arguments[1]) : undefined;
      if (values) found.values = values;
      ex.push(found);
      return true;
    }
    if (sqlTagName(ex, n.tag!) === undefined) return false;
    const found = sqlFromLiteral(ex, n.quasi!, 'tagged-template', range(n));
    if (found) ex.push(found);
    // Fragments inside it are part of it, not queries of their own.
    ex.consumeInside(n);
    return true;
  },
};

function pgQuery(call: BNode, ex: Extractor): boolean {
  const arg0 = call.arguments?.[0];
  if (!arg0) return true;
  let lit = ex.resolve(arg0);
  let valuesNode = call.arguments?.[1];
  if (lit.type === 'ObjectExpression') {
    // client.query({ text: '...', values: [...] })
    const prop = (k: string) => (lit.properties ?? []).find((p) => p.type === 'ObjectProperty' && !p.computed && keyName(p.key!) === k);
    const textProp = prop('text');
    if (!textProp) return true;
    valuesNode = (prop('values')?.value as BNode | undefined) ?? valuesNode;
    lit = ex.resolve(textProp.value as BNode);
  }
  let found = sqlFromLiteral(ex, lit, lit.type === 'TemplateLiteral' ? 'template' : 'string', range(call));
  // Sequelize's query() binds `?` and `:name` replacements.
  if (found && /sequelize/i.test(ex.lastName(unwrap(unwrap(call.callee!).object!)) ?? '')) found = normalisePlaceholders(found);
  if (found) {
    const values = valuesNode ? literalValues(ex, valuesNode) : undefined;
    if (values) found.values = values;
    ex.consume(call);
    ex.push(found);
  }
  return true;
}

/** The values of `[1, 'a', true, null]` when every element is a literal (or a constant holding one). */
export function literalValues(ex: Extractor, node: BNode): SqlValue[] | undefined {
  const arr = ex.resolve(node);
  if (arr.type !== 'ArrayExpression') return undefined;
  const out: SqlValue[] = [];
  for (const el of arr.elements ?? []) {
    if (!el) return undefined;
    const v = ex.resolve(el);
    if (v.type === 'NumericLiteral' || v.type === 'BooleanLiteral') out.push(v.value as number | boolean);
    else if (v.type === 'NullLiteral') out.push(null);
    else if (v.type === 'UnaryExpression' && v.operator === '-' && v.argument?.type === 'NumericLiteral') out.push(-(v.argument.value as number));
    else {
      const str = ex.stringOf(v, 0);
      if (str === undefined) return undefined;
      out.push(str);
    }
  }
  return out;
}

export function sqlFromLiteral(ex: Extractor, lit: BNode, origin: SqlOrigin, callRange: SourceRange): FoundSqlQuery | undefined {
  let built: Built;
  if (lit.type === 'StringLiteral') {
    built = { ...cookWithMap(ex.source, lit.start + 1, lit.end - 1), params: [] };
  } else if (lit.type === 'TemplateLiteral') {
    built = { sql: '', runs: [], params: [] };
    // $n numbers continue after the highest one written in the text itself.
    const written = Math.max(0, ...(lit.quasis ?? []).map((q) => maxDollarParam(ex.source.slice(q.start, q.end))));
    appendTemplate(ex, lit, built, { next: written + 1 }, 0);
  } else return undefined;
  if (!SQL_KEYWORD.test(built.sql)) return undefined;
  const textRange = { start: lit.start + 1, end: lit.end - 1 };
  const found: FoundSqlQuery = { engine: 'postgres', origin, range: callRange, sql: built.sql, runs: built.runs, textRange, params: built.params, warnings: [] };
  if (built.standIns?.length) found.warnings.push(standInWarning(built.standIns));
  return standIns(found);
}

/** The SQL built so far; `standIns`: identifier helpers given a name chosen at run time (`sql(table)`), as written. */
type Built = { sql: string; runs: SqlRun[]; params: SqlParameter[]; standIns?: string[] };

/** The name of a tag that makes SQL: `sql`, postgres.js instances (`tx`, `db`...), slonik's `sql.type(...)`, `sql.unsafe`. */
export function sqlTagName(ex: Extractor, tag: BNode): string | undefined {
  const t = unwrap(tag);
  if (t.type === 'Identifier') {
    if (SQL_TAGS.test(t.name!)) return t.name;
    return ex.importSource(t.name!) === 'postgres' || ex.importSource(t.name!) === 'slonik' ? t.name : undefined;
  }
  if (isMember(t)) {
    const p = propertyName(t);
    if (p === 'sql' || p === 'SQL') return p;
    if ((p === 'unsafe' || p === 'fragment') && sqlTagName(ex, t.object!) !== undefined) return p;
    return undefined;
  }
  // slonik: sql.type(schema)`...`, sql.typeAlias('id')`...`
  if (isCall(t)) {
    const c = unwrap(t.callee!);
    if (isMember(c) && ['type', 'typeAlias'].includes(propertyName(c) ?? '') && sqlTagName(ex, c.object!) !== undefined) return 'sql';
  }
  return undefined;
}

const SQL_TAGS = /^(sql|SQL|tx|trx|psql|pgsql)$/;

/** Appends a template's text; `${sql`...`}` fragments are read in place and `${sql('name')}` identifiers written out. */
function appendTemplate(ex: Extractor, lit: BNode, built: Built, counter: { next: number }, depth: number): void {
  const quasis = lit.quasis ?? [];
  const exprs = lit.expressions ?? [];
  for (let i = 0; i < quasis.length; i++) {
    const q = quasis[i]!;
    const part = cookWithMap(ex.source, q.start, q.end);
    for (const [s, f, l, fl] of part.runs) built.runs.push([s + built.sql.length, f, l, fl]);
    built.sql += part.sql;
    const expr = exprs[i];
    if (!expr) continue;
    // The hole is `${ ... }`: from the end of this chunk to the start of the next.
    const hole = { start: q.end, end: quasis[i + 1]?.start ?? expr.end };
    const e = unwrap(expr);
    if (e.type === 'TaggedTemplateExpression' && depth < 8 && sqlTagName(ex, e.tag!) !== undefined) {
      appendTemplate(ex, e.quasi!, built, counter, depth + 1);
      continue;
    }
    // `${cond ? sql`AND x = ${v}` : sql``}`: read with the fragment that adds a condition.
    if (e.type === 'ConditionalExpression' && depth < 8) {
      const branch = [unwrap(e.consequent!), unwrap(e.alternate!)].find((b) => b.type === 'TaggedTemplateExpression' && sqlTagName(ex, b.tag!) !== undefined && (b.quasi?.quasis ?? []).some((x) => cookedOf(x).trim() !== ''));
      if (branch) {
        appendTemplate(ex, branch.quasi!, built, counter, depth + 1);
        continue;
      }
    }
    const ident = identifierOf(ex, e);
    if (ident?.standIn !== undefined) (built.standIns ??= []).push(ident.standIn);
    const text = ident?.text ?? `$${counter.next}`;
    if (ident === undefined) built.params.push({ n: counter.next++, text: ex.source.slice(expr.start, expr.end), range: hole });
    built.runs.push([built.sql.length, hole.start, text.length, hole.end - hole.start]);
    built.sql += text;
  }
}

/**
 * `sql('orders')`, `sql.identifier(['public', 'orders'])` (postgres.js's and slonik's identifier helpers):
 * the quoted identifier; with a name chosen at run time (`sql(table)`), a stand-in named after the
 * argument (`standIn` holds the call as written).
 */
function identifierOf(ex: Extractor, e: BNode): { text: string; standIn?: string } | undefined {
  if (!isCall(e) || !e.arguments?.[0] || e.arguments.length > 1) return undefined;
  const c = unwrap(e.callee!);
  const isHelper = (c.type === 'Identifier' && sqlTagName(ex, c) !== undefined) || (isMember(c) && propertyName(c) === 'identifier' && sqlTagName(ex, c.object!) !== undefined);
  if (!isHelper) return undefined;
  const arg = e.arguments[0];
  const a = ex.resolve(arg);
  // postgres.js also takes an object or a list of objects (`sql(rows)`) to insert: not a name.
  if (a.type === 'ObjectExpression' || (a.type === 'ArrayExpression' && (a.elements ?? []).some((x) => x && ex.resolve(x).type === 'ObjectExpression'))) return undefined;
  const names = a.type === 'ArrayExpression' ? (a.elements ?? []).map((x) => (x ? ex.stringOf(x, 0) : undefined)) : [ex.stringOf(a, 0)];
  if (names.length > 0 && names.every((x) => x !== undefined)) return { text: (names as string[]).map((x) => `"${x.replace(/"/g, '""')}"`).join('.') };
  return { text: standInName(ex.text(range(arg))), standIn: ex.text(range(e)) };
}

function standInWarning(texts: string[]): string {
  const unique = [...new Set(texts)];
  return `${unique.map((t) => `\${${t}}`).join(', ')} ${unique.length === 1 ? 'names' : 'name'} a schema, table or column chosen at run time; ${unique.length === 1 ? 'it was' : 'they were'} read as ${unique.map(standInName).join(', ')} to analyse the rest.`;
}

/**
 * A `${...}` that stands for a name (`FROM ${schema}.orders`) makes the statement unparseable as a
 * value parameter. When the SQL parses only with names there, those parts are read as stand-in names
 * and a warning says so.
 */
function standIns(q: FoundSqlQuery): FoundSqlQuery {
  if (q.params.length === 0 || !sqlParserLoaded() || parses(q.sql)) return q;
  const edits: { start: number; end: number; text: string }[] = [];
  const named: SqlParameter[] = [];
  for (const p of q.params) {
    const re = new RegExp(`\\$${p.n}(?!\\d)`, 'g');
    for (const m of q.sql.matchAll(re)) {
      const at = m.index ?? 0;
      const before = q.sql.slice(Math.max(0, at - 12), at);
      const after = q.sql[at + m[0].length] ?? '';
      if (after === '.' || /(\.|\b(from|join|update|into|table)\s+)$/i.test(before) || inInsertColumns(q.sql, at)) {
        edits.push({ start: at, end: at + m[0].length, text: standInName(p.text) });
        if (!named.includes(p)) named.push(p);
      }
    }
  }
  if (edits.length === 0) return q;
  const out = replaceInSql(q, edits);
  if (!parses(out.sql)) return q;
  out.params = q.params.filter((p) => !named.includes(p));
  out.warnings = [...q.warnings, standInWarning(named.map((p) => p.text))];
  return out;
}

/** Whether a position is inside the column list of `INSERT INTO t (a, b)`, where only names may stand. */
function inInsertColumns(sql: string, at: number): boolean {
  const head = /\binsert\s+into\s+[^\s(]+\s*\(([^()]*)$/i.exec(sql.slice(Math.max(0, at - 400), at));
  return head !== null && /^\d*\s*[,)]/.test(sql.slice(at + 1));
}

/** The last name in what is written (`tables.orders` gives orders), quoted where PostgreSQL would read a keyword (`table`). */
function standInName(text: string): string {
  const last = /([A-Za-z_][A-Za-z0-9_]*)\W*$/.exec(text)?.[1] ?? 'name';
  return quoteIdent(last.toLowerCase());
}

function parses(sql: string): boolean {
  try {
    parseSqlSync(sql);
    return true;
  } catch {
    return false;
  }
}

function maxDollarParam(s: string): number {
  let max = 0;
  for (const m of s.matchAll(/\$(\d+)/g)) max = Math.max(max, Number(m[1]));
  return max;
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
