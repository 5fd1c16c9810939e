// Only indexes that can exist. An advisor reads names from the query, and some of them are not tables
// or columns an index can be built on: a CTE or a subquery in FROM (also LATERAL), an output alias
// (`count(*) AS total`), an expression written where a column goes, MongoDB's `_id` (always indexed), a
// primary key the schema already declares, a system catalog. Each such suggestion is dropped here, with
// a note saying why, in the place the PostgreSQL advisor hands its advice back.

import { parseSqlSync, sqlParserLoaded } from '../sql/parser';
import { forEachNode } from '../sql/tree';
import type { Advice, PgIndexSpec, Suggestion } from './types';

/** Keys the schema declares, by table (or collection): each entry is one key's columns in order. */
export interface KnownKeys {
  primaryKeys?: Record<string, string[][]>;
}

/** Names in an SQL text that are not tables or columns: CTEs, FROM-subquery and function aliases, output aliases. */
export interface QueryNames {
  ctes: Set<string>;
  derived: Set<string>;
  /** Output aliases whose expression is not the same-named column. */
  outputs: Set<string>;
  /** Names written in place of a table or column the code chooses at run time: they may not exist. */
  standIns: Set<string>;
}

/** The advice without suggestions that cannot exist, each dropped one said in a note. */
export function possibleOnly(advice: Advice, sql?: string, known: KnownKeys = {}, standIns: readonly string[] = []): Advice {
  if (advice.suggestions.length === 0) return advice;
  const names = sql !== undefined ? queryNames(sql) : undefined;
  if (names) for (const n of standIns) names.standIns.add(n.toLowerCase());
  const kept: Suggestion[] = [];
  const notes: string[] = [];
  for (const s of advice.suggestions) {
    const why = impossible(s, names, known);
    if (why === undefined) kept.push(s);
    else notes.push(why);
  }
  if (notes.length === 0) return advice;
  kept.forEach((s, i) => {
    s.rank = i + 1;
  });
  return { ...advice, suggestions: kept, notes: [...new Set([...advice.notes, ...notes])] };
}

/** Why a suggestion's index cannot exist (or exists already by construction), or undefined. */
export function impossible(s: Suggestion, names: QueryNames | undefined, known: KnownKeys = {}): string | undefined {
  if (s.action !== 'create' || !s.index) return undefined;
  if (s.index.engine === 'mongodb') {
    const first = s.index.keys[0]?.field;
    if (first === '_id') return `No index is suggested on ${s.index.collection} starting with _id: MongoDB always indexes _id, and that index serves it.`;
    return primaryKeyReason(s.index.collection, s.index.keys.map((k) => k.field), known);
  }
  const ix: PgIndexSpec = s.index;
  const bare = ix.table.toLowerCase();
  if (ix.schema === 'pg_catalog' || ix.schema === 'information_schema' || /^pg_/.test(bare)) return `No index is suggested on ${ix.schema ? `${ix.schema}.` : ''}${ix.table}: it is a system catalog or view, which takes no index of yours.`;
  if (names?.ctes.has(bare)) return `No index is suggested on ${ix.table}: it is a CTE (WITH ${ix.table} AS ...) of the query, not a table; index the table it reads.`;
  if (names?.derived.has(bare)) return `No index is suggested on ${ix.table}: it names a subquery or function in FROM, not a table.`;
  if (names?.standIns.has(bare)) return `No index is suggested on ${ix.table}: the code chooses the table at run time, and ${ix.table} only stands in for it.`;
  for (const c of ix.include ?? []) if (names?.standIns.has(c.toLowerCase())) return `No index is suggested on ${ix.table} including ${c}: the code chooses the column at run time, and ${c} only stands in for it.`;
  for (const k of ix.keys) {
    if (!k.expression && /[()\s]/.test(k.column)) return `No index is suggested on ${ix.table} (${k.column}): an expression can only be indexed as an expression index.`;
    if (!k.expression && names?.standIns.has(k.column.toLowerCase())) return `No index is suggested on ${ix.table} (${k.column}): the code chooses the column at run time, and ${k.column} only stands in for it.`;
    if (!k.expression && names?.outputs.has(k.column.toLowerCase())) return `No index is suggested on ${ix.table} (${k.column}): ${k.column} is an output alias of the select list, not a column of the table.`;
  }
  return primaryKeyReason(ix.table, ix.keys.filter((k) => !k.expression).map((k) => k.column), known);
}

function primaryKeyReason(table: string, columns: string[], known: KnownKeys): string | undefined {
  for (const key of known.primaryKeys?.[table] ?? []) {
    // An index whose leading columns are exactly a declared key adds nothing the key's own index does not give.
    if (key.length > 0 && key.length <= columns.length && key.every((c, i) => columns[i] === c) && columns.length === key.length) {
      return `No index is suggested on ${table} (${columns.join(', ')}): the schema declares it as a key, which is indexed already.`;
    }
  }
  return undefined;
}

/** CTE names, FROM-item aliases that are not tables, and output aliases, anywhere in the statement. */
export function queryNames(sql: string): QueryNames {
  const out: QueryNames = { ctes: new Set(), derived: new Set(), outputs: new Set(), standIns: new Set() };
  if (!sqlParserLoaded()) return out;
  let tree: unknown;
  try {
    tree = parseSqlSync(sql);
  } catch {
    return out;
  }
  forEachNode(tree, (o) => {
    const cte = o['CommonTableExpr'] as { ctename?: string } | undefined;
    if (cte?.ctename) out.ctes.add(cte.ctename.toLowerCase());
    for (const k of ['RangeSubselect', 'RangeFunction', 'RangeTableFunc', 'JoinExpr']) {
      const alias = (o[k] as { alias?: { aliasname?: string } } | undefined)?.alias?.aliasname;
      if (alias) out.derived.add(alias.toLowerCase());
    }
    // Only a SELECT's list names outputs: an UPDATE's SET and an INSERT's columns name real columns.
    const select = o['SelectStmt'] as { targetList?: { ResTarget?: { name?: string; val?: { ColumnRef?: { fields?: { String?: { sval?: string } }[] } } } }[] } | undefined;
    for (const item of select?.targetList ?? []) {
      const target = item.ResTarget;
      if (!target?.name) continue;
      const fields = target.val?.ColumnRef?.fields ?? [];
      const same = fields.length > 0 && fields[fields.length - 1]?.String?.sval?.toLowerCase() === target.name.toLowerCase();
      if (!same) out.outputs.add(target.name.toLowerCase());
    }
  });
  return out;
}
