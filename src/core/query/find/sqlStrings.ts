// SQL held in strings of a script: the text passed to node-postgres (`client.query('...')`,
// `pool.query({ text, values })`) and `sql`...`` tagged templates. `${...}` parts become $n parameters
// and every character of the SQL maps back to the file, escapes included.

import type { Extractor, CallReader } from './extractor';
import { isMember, keyName, propertyName, range, unwrap, type BNode } from './syntax';
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

/** `sql`...`` (and `x.sql`...``) tagged templates. */
export const sqlTags: CallReader = {
  read(n, ex) {
    if (n.type !== 'TaggedTemplateExpression') return false;
    const tag = unwrap(n.tag!);
    const name = tag.type === 'Identifier' ? tag.name : isMember(tag) ? propertyName(tag) : undefined;
    if (name !== 'sql' && name !== 'SQL') return false;
    const found = sqlFromLiteral(ex, n.quasi!, 'tagged-template', range(n));
    if (found) ex.push(found);
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
  const found = sqlFromLiteral(ex, lit, lit.type === 'TemplateLiteral' ? 'template' : 'string', range(call));
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
  let built: { sql: string; runs: SqlRun[]; params: SqlParameter[] };
  if (lit.type === 'StringLiteral') {
    built = { ...cookWithMap(ex.source, lit.start + 1, lit.end - 1), params: [] };
  } else if (lit.type === 'TemplateLiteral') {
    const quasis = lit.quasis ?? [];
    const exprs = lit.expressions ?? [];
    built = { sql: '', runs: [], params: [] };
    // $n numbers continue after the highest one written in the text itself.
    const written = Math.max(0, ...quasis.map((q) => maxDollarParam(ex.source.slice(q.start, q.end))));
    for (let i = 0; i < quasis.length; i++) {
      const q = quasis[i]!;
      const part = cookWithMap(ex.source, q.start, q.end);
      for (const [s, f, l, fl] of part.runs) built.runs.push([s + built.sql.length, f, l, fl]);
      built.sql += part.sql;
      const expr = exprs[i];
      if (expr) {
        const n = written + i + 1;
        // The hole is `${ ... }`: from the end of this chunk to the start of the next.
        const hole = { start: q.end, end: quasis[i + 1]?.start ?? expr.end };
        const name = `$${n}`;
        built.params.push({ n, text: ex.source.slice(expr.start, expr.end), range: hole });
        built.runs.push([built.sql.length, hole.start, name.length, hole.end - hole.start]);
        built.sql += name;
      }
    }
  } else return undefined;
  if (!SQL_KEYWORD.test(built.sql)) return undefined;
  const textRange = { start: lit.start + 1, end: lit.end - 1 };
  return { engine: 'postgres', origin, range: callRange, sql: built.sql, runs: built.runs, textRange, params: built.params, warnings: [] };
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
