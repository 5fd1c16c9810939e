// What the advisor makes of a found query, for the benches: whether it reads it (analysable), and how many
// of the indexes it suggests for it cannot exist, checked from the statement's own parse tree and the
// found query, not by the advisor's own filter. PostgreSQL's parser must be loaded first (loadSqlParser).

import { advisePostgresShapes, adviseMongo, fromMongoCommand, isOtherDatabase, parsePostgresQuerySync } from '../../src/core/index';
import type { FoundQuery } from '../../src/core/query/find/index';
import { parseSqlSync } from '../../src/core/sql/parser';

export function analysable(q: FoundQuery): boolean | 'nothing to index' | 'another database' {
  if (q.engine === 'mongodb') return q.command.collection !== '' && fromMongoCommand(q.command).ok;
  if (q.otherDatabase) return 'another database';
  const parsed = parsePostgresQuerySync(q.sql);
  if (parsed.ok) return true;
  if (isOtherDatabase(parsed.refusal)) return 'another database';
  return /reads no rows|has no table to index/.test(parsed.refusal) ? 'nothing to index' : false;
}

/** Suggestions naming something that is not a table or column, checked from the statement's own tree. */
export function impossibleCount(q: FoundQuery, list?: (line: string) => void): number {
  if (q.engine === 'mongodb') {
    const input = fromMongoCommand(q.command);
    if (!input.ok) return 0;
    return adviseMongo(input.query).suggestions.filter((s) => s.action === 'create' && s.index?.engine === 'mongodb' && s.index.keys[0]?.field === '_id').length;
  }
  if (q.otherDatabase) return 0;
  const parsed = parsePostgresQuerySync(q.sql);
  if (!parsed.ok) return 0;
  // As the language server asks: with the names the finder wrote for ones chosen at run time.
  const standIns = q.standInNames ?? [];
  const advice = advisePostgresShapes(parsed.shapes, standIns.length > 0 ? { standIns } : {});
  const tables = new Set<string>();
  const ctes = new Set<string>();
  const outputs = new Set<string>();
  const stack: unknown[] = [parseSqlSync(q.sql)];
  while (stack.length > 0) {
    const x = stack.pop();
    if (Array.isArray(x)) stack.push(...x);
    else if (typeof x === 'object' && x !== null) {
      const o = x as Record<string, { relname?: string; ctename?: string; name?: string; val?: Record<string, unknown> }>;
      // A relation is a RangeVar, wrapped in FROM lists and bare as an UPDATE's or DELETE's target.
      const relname = (x as { relname?: unknown }).relname;
      if (typeof relname === 'string') tables.add(relname);
      if (o['CommonTableExpr']?.ctename) ctes.add(o['CommonTableExpr'].ctename);
      const list = (o['SelectStmt'] as unknown as { targetList?: { ResTarget?: { name?: string; val?: Record<string, unknown> } }[] } | undefined)?.targetList ?? [];
      for (const t of list) if (t.ResTarget?.name && !('ColumnRef' in (t.ResTarget.val ?? {}))) outputs.add(t.ResTarget.name);
      stack.push(...Object.values(x));
    }
  }
  let bad = 0;
  for (const s of advice.suggestions) {
    if (s.action !== 'create' || s.index?.engine !== 'postgres') continue;
    const ix = s.index;
    // System catalogs and information_schema views take no user index either.
    const system = ix.schema === 'pg_catalog' || ix.schema === 'information_schema' || /^pg_/.test(ix.table);
    // A stand-in (`FROM ${table}` read as `FROM "table"`) is in the tree but names nothing that exists.
    // So is the name a builder reader writes when the code shows no table at all.
    // And so is a name with a $n in it: a value chosen at run time read into a name (`"$2"`, `orders_$2`).
    const madeUp = (name: string) => /\$\d/.test(name);
    const standIn = standIns.includes(ix.table.toLowerCase()) || /^unknown_(table|entity)$/.test(ix.table) || madeUp(ix.table) || ix.keys.some((k) => !k.expression && (standIns.includes(k.column.toLowerCase()) || k.column === 'unknown_column' || madeUp(k.column)));
    if (system || standIn || ctes.has(ix.table) || !tables.has(ix.table) || ix.keys.some((k) => !k.expression && outputs.has(k.column))) {
      bad++;
      list?.(`  impossible ${s.createText} for ${q.sql.replace(/\s+/g, ' ').slice(0, 100)}`);
    }
  }
  return bad;
}
