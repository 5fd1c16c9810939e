// Placeholder styles other than PostgreSQL's $n, as query files and libraries write them: `?` (Knex,
// Sequelize, JDBC), `:name` (yesql, aiosql, Sequelize replacements), `%s` and `%(name)s` (psycopg),
// `@name` (SQL Server style, some query-file tools). They are read as $1, $2... so the statement parses,
// and a warning says which were rewritten; `::` casts, quoted text and comments are left alone.

import { replaceInSql } from './ranges';
import type { FoundSqlQuery } from './types';

const NAMED = /^(?::(?!:)([A-Za-z_]\w*)|%\(([A-Za-z_]\w*)\)s|@([A-Za-z_]\w*)|%s|\?(?![?|&]))/;

/** The query with its `?`, `:name`, `%s`, `%(name)s` and `@name` placeholders as $n parameters. */
export function normalisePlaceholders(q: FoundSqlQuery): FoundSqlQuery {
  const sql = q.sql;
  const edits: { start: number; end: number; text: string }[] = [];
  const byName = new Map<string, string>();
  let n = Math.max(0, ...[...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  const seen: string[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const close = sql.indexOf(c, i + 1);
      i = close < 0 ? sql.length : close + 1;
      continue;
    }
    if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl;
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close < 0 ? sql.length : close + 2;
      continue;
    }
    if (c === ':' && sql[i - 1] === ':') {
      i++;
      continue;
    }
    const m = c === ':' || c === '%' || c === '@' || c === '?' ? NAMED.exec(sql.slice(i, i + 64)) : null;
    // `@` and `?` are also operators (`@>`, `?|`): only take them where a value can stand.
    if (m && !(c === '@' && /[\w)]\s*$/.test(sql.slice(0, i)) && !/[=(,<>]\s*$/.test(sql.slice(0, i)))) {
      const name = m[1] ?? m[2] ?? m[3];
      let text: string;
      if (name !== undefined && byName.has(name)) text = byName.get(name)!;
      else {
        text = `$${++n}`;
        if (name !== undefined) byName.set(name, text);
      }
      edits.push({ start: i, end: i + m[0].length, text });
      if (!seen.includes(m[0])) seen.push(m[0]);
      i += m[0].length;
      continue;
    }
    i++;
  }
  if (edits.length === 0) return q;
  const out = replaceInSql(q, edits);
  out.warnings = [...q.warnings, `The placeholders ${seen.slice(0, 4).join(', ')}${seen.length > 4 ? '...' : ''} were read as $1, $2... parameters.`];
  return out;
}
