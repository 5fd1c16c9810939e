// The text Explain needs for a query the finder found: mongo shell notation for
// a MongoDB call (the driver's `orders.find(filter, { sort })` becomes `db.orders.find({...}).sort({...})`,
// constants resolved) and the SQL itself for PostgreSQL. A query with values that are variables in the
// code cannot be explained as written: it gets a sentence saying which, instead of a guess.

import { shellCollection, shellValue } from '../advice/mongoText';
import { otherDatabaseRefusal } from '../advice/pgShape';
import { inlineParameters, sqlParams } from '../sql/placeholders';
import { isPlaceholder, type FoundQuery, type FoundSqlQuery } from '../query/find/index';

export type ExplainText = { ok: true; text: string } | { ok: false; problem: string };

/**
 * A query that takes values from the code, as a text with one mark per value: Explain asks the user for
 * each (`names`, in order) and puts them in with `fillExplainValues`. The marks cannot appear in code.
 */
export interface ExplainValues {
  names: string[];
  template: string;
}

const mark = (i: number) => `\u0000${i}\u0000`;

export function explainText(q: FoundQuery): ExplainText {
  if (q.engine === 'postgres') {
    if (q.otherDatabase) return { ok: false, problem: otherDatabaseProblem(q.otherDatabase) };
    if (q.values && q.params.length === 0) {
      // pool.query(sql, [42, 'x']): the values are in the code, so the statement can run as written.
      const sql = inlineParameters(q.sql, q.values);
      if (sqlParams(sql).length === 0) return { ok: true, text: sql };
    }
    if (q.params.length > 0) {
      return { ok: false, problem: `The SQL takes ${q.params.map((p) => p.text).join(', ')} from the code as parameters, so it cannot be explained without values: explain it from a .sql file or with literal values.` };
    }
    if (sqlParams(q.sql).length > 0) return { ok: false, problem: 'The SQL has $n parameters bound at run time, so Explain asks for their values.' };
    return { ok: true, text: q.sql };
  }
  const cmd = q.command;
  const variables = placeholderNames([cmd.filter, cmd.sort, cmd.projection, cmd.pipeline, cmd.update, cmd.hint]);
  for (const p of q.variableParts) if (!variables.includes(p)) variables.push(p);
  if (variables.length > 0 || q.partial) {
    const asks = q.variableParts.length === 0 && !q.partial;
    return { ok: false, problem: `The query uses values from the code (${variables.slice(0, 4).join(', ') || 'a spread object'}), so it cannot be explained as written: ${asks ? 'Explain asks for their values' : 'copy it into a playground with literal values'}.` };
  }
  return { ok: true, text: mongoText(cmd) };
}

/** The values Explain must ask for, or undefined when the query needs none or cannot take them. */
export function explainValues(q: FoundQuery): ExplainValues | undefined {
  if (q.engine === 'postgres') {
    if (q.otherDatabase) return undefined;
    // The values the code binds are put in first; the parameters left are asked for.
    const sql = q.values && q.params.length === 0 ? inlineParameters(q.sql, q.values) : q.sql;
    const params = sqlParams(sql);
    if (params.length === 0) return undefined;
    const ns = [...new Set(params.map((p) => p.n))].sort((a, b) => a - b);
    let template = '';
    let at = 0;
    for (const p of params) {
      template += sql.slice(at, p.start) + mark(ns.indexOf(p.n));
      at = p.end;
    }
    template += sql.slice(at);
    return { names: ns.map((n) => { const from = q.params.find((p) => p.n === n)?.text; return from ? `$${n} (${from})` : `$${n}`; }), template };
  }
  if (q.variableParts.length > 0 || q.partial) return undefined;
  const names: string[] = [];
  const swap = (x: unknown, depth: number): unknown => {
    if (depth > 64) return x;
    if (isPlaceholder(x)) {
      let i = names.indexOf(x.$placeholder);
      if (i < 0) i = names.push(x.$placeholder) - 1;
      return { $placeholder: mark(i) };
    }
    if (Array.isArray(x)) return x.map((y) => swap(y, depth + 1));
    if (typeof x === 'object' && x !== null && Object.getPrototypeOf(x) === Object.prototype) return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, swap(y, depth + 1)]));
    return x;
  };
  const cmd = swap(q.command, 0) as typeof q.command;
  return names.length > 0 ? { names, template: mongoText(cmd) } : undefined;
}

/** The template with the user's values in place of its marks: shell notation for MongoDB, SQL literals for PostgreSQL. */
export function fillExplainValues(v: ExplainValues, values: readonly string[]): string {
  return v.template.replace(/\u0000(\d+)\u0000/g, (_, i: string) => `(${values[Number(i)] ?? 'null'})`);
}

function mongoText(cmd: Extract<FoundQuery, { engine: 'mongodb' }>['command']): string {
  const v = (x: unknown) => shellValue(x);
  const base = shellCollection(cmd.collection);
  const filter = v(cmd.filter ?? {});
  let text: string;
  switch (cmd.operation) {
    case 'find':
    case 'findOne':
      text = `${base}.find(${filter}${cmd.projection ? `, ${v(cmd.projection)}` : ''})`;
      if (cmd.sort) text += `.sort(${v(cmd.sort)})`;
      if (cmd.skip !== undefined) text += `.skip(${cmd.skip})`;
      if (cmd.limit !== undefined) text += `.limit(${cmd.limit})`;
      if (cmd.hint !== undefined) text += `.hint(${v(cmd.hint)})`;
      break;
    case 'aggregate':
      text = `${base}.aggregate(${v(cmd.pipeline ?? [])})`;
      break;
    case 'distinct':
      text = `${base}.distinct(${v(cmd.field ?? '')}, ${filter})`;
      break;
    case 'count':
    case 'countDocuments':
    case 'deleteOne':
    case 'deleteMany':
    case 'findOneAndDelete':
      text = `${base}.${cmd.operation}(${filter}${cmd.sort && cmd.operation === 'findOneAndDelete' ? `, ${v({ sort: cmd.sort })}` : ''})`;
      break;
    default:
      text = `${base}.${cmd.operation}(${filter}, ${v(cmd.update ?? {})}${cmd.sort && cmd.operation.startsWith('findOneAnd') ? `, ${v({ sort: cmd.sort })}` : ''})`;
  }
  if (cmd.database !== undefined) text = text.replace(/^db\./, `db.getSiblingDB(${JSON.stringify(cmd.database)}).`);
  return text;
}

/** The names of the variables of the code (`{$placeholder: name}`) in `values`, in their order, at most `limit`. */
export function placeholderNames(values: unknown[], limit = 8): string[] {
  const out: string[] = [];
  const stack = [...values];
  while (stack.length > 0 && out.length < limit) {
    const x = stack.pop();
    if (isPlaceholder(x)) out.push(x.$placeholder);
    else if (Array.isArray(x)) stack.push(...x);
    else if (typeof x === 'object' && x !== null) stack.push(...Object.values(x));
  }
  return out.reverse();
}

/** Why SQL written for another database (a `sql` tag of a ClickHouse client) is neither explained nor advised. */
export function otherDatabaseProblem(other: NonNullable<FoundSqlQuery['otherDatabase']>): string {
  return otherDatabaseRefusal(other.name, other.by === 'tag' ? `its \`sql\` tag comes from ${other.module}` : `the file's database client is ${other.module}`);
}
