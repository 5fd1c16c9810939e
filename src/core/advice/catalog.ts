// What exists where the advice is given: the tables, views and collections of a connection's catalog
// (read by the adapters) or of the repository's declared schema. An index is advised only on something
// that exists and takes one: on a name that is not there the advice says "<name> does not exist on
// <where>"; a view takes no index, its base tables do; a materialized view is indexed itself. The rule
// is applied by possibleOnly (possible.ts), the one place every advisor hands its advice back through.

import type { Advice, Suggestion } from './types';
import type { Catalog, CatalogRelation, RelationKind } from '../schema/types';

// What exists is the schema's vocabulary (a connection's catalog or the repository's declared schema).
export type { Catalog, CatalogRelation, RelationKind };

/** "does not exist on shop-dev" / "do not exist in the repository's schema (...)". */
export function notThere(names: readonly string[], catalog: Catalog): string {
  return `${names.join(', ')} ${names.length === 1 ? 'does' : 'do'} not exist ${catalog.preposition ?? 'on'} ${catalog.where}.`;
}

/** The names the catalog says are not there, of those given. */
export function missingNames(names: readonly string[], catalog: Catalog): string[] {
  return names.filter((n) => Object.prototype.hasOwnProperty.call(catalog.relations, n) && catalog.relations[n] === null);
}

/** The sentence for a name the catalog does not have, or a view; undefined when an index can go on it. */
export function missingReason(name: string, catalog: Catalog): string | undefined {
  if (!Object.prototype.hasOwnProperty.call(catalog.relations, name)) return undefined;
  const r = catalog.relations[name];
  if (r === null || r === undefined) return notThere([name], catalog);
  if (r.kind === 'view') {
    const bases = r.baseTables ?? [];
    return `${name} is a view ${catalog.preposition ?? 'on'} ${catalog.where}, which takes no index${bases.length > 0 ? `: index what it reads, ${bases.join(', ')}` : ''}.`;
  }
  return undefined;
}

/** The target of a suggestion: its table or collection. */
export function suggestionTarget(s: Suggestion): string | undefined {
  if (!s.index) return undefined;
  return s.index.engine === 'mongodb' ? s.index.collection : s.index.table;
}

/**
 * The advice said against the catalog: suggestions on a name that does not exist or is a view are
 * dropped, each with its sentence; when no target of the query exists at all, the sentence is the
 * advice's refusal, so every face says it instead of an index.
 */
export function againstCatalog(advice: Advice, catalog: Catalog): Advice {
  const notes: string[] = [];
  const kept = advice.suggestions.filter((s) => {
    const target = suggestionTarget(s);
    const why = target !== undefined ? missingReason(target, catalog) : undefined;
    if (why !== undefined) notes.push(why);
    return why === undefined;
  });
  // A PostgreSQL shape's target is written `table alias`.
  const targets = [...new Set(advice.shapes.map((s) => s.target.split(' ')[0]!))];
  const absent = missingNames(targets, catalog);
  for (const t of absent) notes.push(notThere([t], catalog));
  if (notes.length === 0) return advice;
  kept.forEach((s, i) => {
    s.rank = i + 1;
  });
  const out: Advice = { ...advice, suggestions: kept, notes: [...new Set([...notes, ...advice.notes])] };
  if (targets.length > 0 && absent.length === targets.length) {
    out.suggestions = [];
    out.refusal = notThere(absent, catalog);
  }
  return out;
}
