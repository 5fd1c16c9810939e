// Renders MongoDB values back into mongosh text for the advice: createIndex commands, rewritten queries,
// and the short predicate texts quoted in conditions. Values are Extended JSON v2 as the shell-notation
// reader produces them; each wrapper goes back to the constructor the shell would print.

import type { MongoDoc, MongoIndexKey } from './types';
import { eachOfFamily } from '../query/find/family';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A key as the shell accepts it unquoted, else double-quoted. */
export function shellKey(key: string): string {
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

/** `db.name` when the name is a plain identifier, `db.getCollection("name")` otherwise. */
export function shellCollection(name: string): string {
  return IDENTIFIER.test(name) && !name.startsWith('$') ? `db.${name}` : `db.getCollection(${JSON.stringify(name)})`;
}

/** Values longer than this are cut in messages (never in rewrites, which must stay exact). */
const SHORT_LIMIT = 60;

/** One value in shell notation. `short` cuts long arrays and strings for sentences. */
export function shellValue(value: unknown, short = false): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') {
    const s = JSON.stringify(value);
    return short && s.length > SHORT_LIMIT ? `${s.slice(0, SHORT_LIMIT - 4)}..."` : s;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof RegExp) return `/${value.source}/${value.flags}`;
  if (Array.isArray(value)) {
    if (short && value.length > 6) {
      return `[${value.slice(0, 3).map((v) => shellValue(v, true)).join(', ')}, ... ${value.length} values]`;
    }
    return `[${value.map((v) => shellValue(v, short)).join(', ')}]`;
  }
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const wrapped = wrapperText(o, short);
    if (wrapped !== undefined) return wrapped;
    const entries = Object.entries(o);
    if (entries.length === 0) return '{}';
    return `{${entries.map(([k, v]) => `${shellKey(k)}: ${shellValue(v, short)}`).join(', ')}}`;
  }
  return typeof value === 'symbol' || typeof value === 'function' ? '?' : String(value);
}

function wrapperText(o: Record<string, unknown>, short: boolean): string | undefined {
  const keys = Object.keys(o);
  if (keys.length === 1) {
    const k = keys[0]!;
    const v = o[k];
    switch (k) {
      case '$oid': return `ObjectId(${JSON.stringify(v)})`;
      case '$date': return typeof v === 'string' ? `ISODate(${JSON.stringify(v)})` : `ISODate(${shellValue(v, short)})`;
      case '$numberLong': return `Long(${JSON.stringify(v)})`;
      case '$numberDecimal': return `Decimal128(${JSON.stringify(v)})`;
      case '$numberInt':
      case '$numberDouble':
        return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
      case '$uuid': return `UUID(${JSON.stringify(v)})`;
      case '$minKey': return 'MinKey';
      case '$maxKey': return 'MaxKey';
      // The query-text reader puts the source text of a non-literal here; anything else is shown as data.
      case '$placeholder': return typeof v === 'string' ? v : undefined;
      case '$regularExpression': {
        const r = v as { pattern?: unknown; options?: unknown } | null;
        if (r && typeof r.pattern === 'string') return `/${r.pattern}/${typeof r.options === 'string' ? r.options : ''}`;
        return undefined;
      }
      default: return undefined;
    }
  }
  if (keys.length <= 2 && typeof o['$regex'] === 'string' && keys.every((k) => k === '$regex' || k === '$options')) {
    return `/${o['$regex']}/${typeof o['$options'] === 'string' ? o['$options'] : ''}`;
  }
  return undefined;
}

/** `{a: 1, "b.c": -1}` from ordered keys. */
export function keyPatternText(keys: readonly MongoIndexKey[]): string {
  return `{${keys.map((k) => `${shellKey(k.field)}: ${k.direction}`).join(', ')}}`;
}

/**
 * `db.c.createIndex({...})`; for a family of collections (`app_users*`), the command that builds the index
 * on each collection of it, so that a copy run in mongosh never makes a collection named with the `*`.
 */
export function createIndexText(collection: string, keys: readonly MongoIndexKey[]): string {
  if (collection.includes('*')) return `${eachOfFamily(collection)}createIndex(${keyPatternText(keys)}))`;
  return `${shellCollection(collection)}.createIndex(${keyPatternText(keys)})`;
}

/** The find call with its cursor methods, as a user would write it. */
export function findText(collection: string, filter: MongoDoc, sort: MongoDoc | undefined, limit: number | undefined, projection?: MongoDoc): string {
  let text = `${shellCollection(collection)}.find(${shellValue(filter)}${projection ? `, ${shellValue(projection)}` : ''})`;
  if (sort && Object.keys(sort).length > 0) text += `.sort(${shellValue(sort)})`;
  if (limit !== undefined) text += `.limit(${limit})`;
  return text;
}

export function aggregateText(collection: string, pipeline: readonly MongoDoc[]): string {
  return `${shellCollection(collection)}.aggregate(${shellValue(pipeline)})`;
}
