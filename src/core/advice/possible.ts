// Only indexes that can exist and add something: the one rule every surface's advice goes through (both
// advisors hand their advice back through possibleOnly, so the panel, the language server, `qpi lint`,
// `qpi advise` and `qpi check` say the same). An advisor reads names from the query, and some of them are
// not tables or columns an index can be built on: a CTE or a subquery in FROM (also LATERAL), an output
// alias (`count(*) AS total`), an expression written where a column goes or one that holds a parameter
// (`POSITION($1 IN title)`), a name the finder wrote for one
// chosen at run time, a placeholder schema (`schema.orders`), a system catalog. Others exist already or
// add nothing: MongoDB's `_id` (always indexed), exactly a declared primary or unique key, an index led by
// the whole primary key (one row per key: the columns after it narrow nothing). An index for the other
// engine (MongoDB DDL for SQL code) is never suggested. A name the catalog does not have, or a view, is
// said by catalog.ts. Each dropped suggestion leaves a note saying why.

import { parseSqlSync, sqlParserLoaded } from '../sql/parser';
import { forEachNode } from '../sql/tree';
import { againstCatalog, type Catalog } from './catalog';
import type { Advice, ExistingMongoIndex, ExistingPgIndex, PgIndexSpec, Suggestion } from './types';

/** Keys the schema declares, by table (or collection): each entry is one key's columns in order. */
export interface KnownKeys {
  primaryKeys?: Record<string, string[][]>;
  /** Unique keys (not partial, columns only), by table or collection. */
  uniqueKeys?: Record<string, string[][]>;
  /** What exists where the advice is given (a connection's catalog, the repository's declared schema). */
  catalog?: Catalog;
  /** The engine the code around the query is written for (its library's): an index for the other engine is never suggested. */
  engine?: 'mongodb' | 'postgres';
}

/** Names a query writes in place of a schema it chooses at run time (`${schema}.orders` read as `schema.orders`). */
const PLACEHOLDER_SCHEMA = /^(schema|schema_?name|your_?schema|my_?schema|db_?schema|\$\{?\w*\}?|:\w+|\?)$/i;

/**
 * The keys the indexes that exist declare (a primary key, a unique index that is not partial), joined
 * to the keys already known: the connection's own index lists and the repository's declared ones give
 * the same rule.
 */
export function withExistingKeys(known: KnownKeys | undefined, existing: readonly (ExistingPgIndex | ExistingMongoIndex)[]): KnownKeys {
  const out: KnownKeys = { ...known, primaryKeys: { ...known?.primaryKeys }, uniqueKeys: { ...known?.uniqueKeys } };
  const add = (into: Record<string, string[][]>, target: string, cols: string[]) => {
    const list = (into[target] = [...(into[target] ?? [])]);
    if (!list.some((k) => k.length === cols.length && k.every((c, i) => c === cols[i]))) list.push(cols);
  };
  for (const ix of existing) {
    if ('columns' in ix) {
      if (!ix.unique || ix.predicate || ix.invalid || ix.columns.some((c) => c.column === undefined)) continue;
      add(ix.primary ? out.primaryKeys! : out.uniqueKeys!, ix.table, ix.columns.map((c) => c.column!));
    } else if (ix.unique && !ix.partialFilterExpression && !ix.sparse) {
      // A collection's own indexes come without its name: they are kept under '' and asked for by any collection.
      add(out.uniqueKeys!, '', Object.keys(ix.key));
    }
  }
  return out;
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
  if (advice.suggestions.length === 0 && (!known.catalog || advice.refusal !== undefined)) return advice;
  const names = sql !== undefined ? queryNames(sql) : undefined;
  if (names) for (const n of standIns) names.standIns.add(n.toLowerCase());
  const kept: Suggestion[] = [];
  const notes: string[] = [];
  for (const s of advice.suggestions) {
    const engine = known.engine ?? advice.engine;
    const why = s.index && s.index.engine !== engine
      ? `No ${s.index.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'} index is suggested: the code is written for ${engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'}.`
      : impossible(s, names, known);
    if (why === undefined) kept.push(s);
    else notes.push(why);
  }
  const checked = known.catalog ? againstCatalog({ ...advice, suggestions: kept }, known.catalog) : undefined;
  if (notes.length === 0 && (!checked || checked.suggestions.length === kept.length && !checked.refusal && checked.notes.length === advice.notes.length)) return advice;
  const out = checked ?? { ...advice, suggestions: kept };
  out.suggestions.forEach((s, i) => {
    s.rank = i + 1;
  });
  return { ...out, notes: [...new Set([...out.notes, ...notes])] };
}

/** Why a suggestion's index cannot exist (or exists already by construction), or undefined. */
export function impossible(s: Suggestion, names: QueryNames | undefined, known: KnownKeys = {}): string | undefined {
  if (s.action !== 'create' || !s.index) return undefined;
  if (s.index.engine === 'mongodb') {
    const first = s.index.keys[0]?.field;
    if (first === '_id') return `No index is suggested on ${s.index.collection} starting with _id: MongoDB always indexes _id, and that index serves it.`;
    return keyReason(s.index.collection, s.index.keys.map((k) => k.field), known);
  }
  const ix: PgIndexSpec = s.index;
  const bare = ix.table.toLowerCase();
  if (ix.schema === 'pg_catalog' || ix.schema === 'information_schema' || /^pg_/.test(bare)) return `No index is suggested on ${ix.schema ? `${ix.schema}.` : ''}${ix.table}: it is a system catalog or view, which takes no index of yours.`;
  if (ix.schema !== undefined && (PLACEHOLDER_SCHEMA.test(ix.schema) || names?.standIns.has(ix.schema.toLowerCase()))) {
    return `No index is suggested on ${ix.schema}.${ix.table}: ${ix.schema} stands in for a schema the code chooses at run time, so the index's place is not known.`;
  }
  if (names?.ctes.has(bare)) return `No index is suggested on ${ix.table}: it is a CTE (WITH ${ix.table} AS ...) of the query, not a table; index the table it reads.`;
  if (names?.derived.has(bare)) return `No index is suggested on ${ix.table}: it names a subquery or function in FROM, not a table.`;
  if (names?.standIns.has(bare)) return `No index is suggested on ${ix.table}: the code chooses the table at run time, and ${ix.table} only stands in for it.`;
  for (const c of ix.include ?? []) if (names?.standIns.has(c.toLowerCase())) return `No index is suggested on ${ix.table} including ${c}: the code chooses the column at run time, and ${c} only stands in for it.`;
  for (const k of ix.keys) {
    if (!k.expression && /[()\s]/.test(k.column)) return `No index is suggested on ${ix.table} (${k.column}): an expression can only be indexed as an expression index.`;
    if (!k.expression && names?.standIns.has(k.column.toLowerCase())) return `No index is suggested on ${ix.table} (${k.column}): the code chooses the column at run time, and ${k.column} only stands in for it.`;
    // `POSITION($1 IN name)`: a value given at each run, which no index can hold.
    if (k.expression && /\$\d/.test(k.column)) return `No index is suggested on ${ix.table} (${k.column}): the expression holds a parameter, a value given at each run, which an index cannot hold.`;
    if (!k.expression && names?.outputs.has(k.column.toLowerCase())) return `No index is suggested on ${ix.table} (${k.column}): ${k.column} is an output alias of the select list, not a column of the table.`;
  }
  // An expression key is not a column of a key: only an index of plain columns can be one.
  if (ix.keys.some((k) => k.expression)) return undefined;
  return keyReason(ix.table, ix.keys.map((k) => k.column), known);
}

/** Exactly a declared primary or unique key, or led by the whole primary key: indexed already, or nothing to add. */
function keyReason(table: string, columns: string[], known: KnownKeys): string | undefined {
  const same = (key: string[]) => key.length === columns.length && key.every((c, i) => columns[i] === c);
  for (const key of known.primaryKeys?.[table] ?? []) {
    if (key.length === 0) continue;
    if (same(key)) return `No index is suggested on ${table} (${columns.join(', ')}): it is the table's primary key, which is indexed already.`;
    // The primary key gives at most one row per value: columns after it in an index narrow nothing.
    if (key.length < columns.length && key.every((c, i) => columns[i] === c)) {
      return `No index is suggested on ${table} (${columns.join(', ')}): it starts with the primary key (${key.join(', ')}), which finds at most one row by itself.`;
    }
  }
  for (const key of [...(known.uniqueKeys?.[table] ?? []), ...(known.uniqueKeys?.[''] ?? [])]) {
    if (key.length > 0 && same(key)) return `No index is suggested on ${table} (${columns.join(', ')}): a unique key on it exists already, and its index serves it.`;
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

/** Schemas whose relations are the server's own: never looked up, never said to be missing. */
const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema', 'pg_toast']);

/**
 * The tables of a statement a catalog is asked about (a connection's or the repository's): its relations
 * without its CTEs (which a shape lists as tables), the system catalogs and names the finder wrote for
 * ones chosen at run time, each once.
 */
export function catalogTargets(sql: string | undefined, tables: readonly { name: string; schema?: string }[], standIns: readonly string[] = []): { table: string; schema?: string }[] {
  const names = sql !== undefined ? queryNames(sql) : undefined;
  const stand = new Set(standIns.map((n) => n.toLowerCase()));
  const out = new Map<string, { table: string; schema?: string }>();
  for (const t of tables) {
    const bare = t.name.toLowerCase();
    if (names?.ctes.has(bare) || names?.derived.has(bare) || stand.has(bare) || /^pg_/.test(bare)) continue;
    if (t.schema !== undefined && (SYSTEM_SCHEMAS.has(t.schema.toLowerCase()) || PLACEHOLDER_SCHEMA.test(t.schema) || stand.has(t.schema.toLowerCase()))) continue;
    out.set(`${t.schema ?? ''}.${t.name}`, { table: t.name, ...(t.schema !== undefined ? { schema: t.schema } : {}) });
  }
  return [...out.values()];
}
