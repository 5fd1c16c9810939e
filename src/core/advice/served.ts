// The last word before any front end shows advice: never ask for an index that exists, or that an
// existing index already serves. Whatever ranked the suggestions (the rules, or a measurement), a
// suggestion whose keys an existing index starts with (same order, same directions or all of them
// reversed, which a B-tree reads backwards) becomes "keep using X". This covers the suggestions that come
// with a rewrite too (UNION ALL per value, $match moved first): the rewritten query needs the same keys,
// and an index that has them is as good as a new one.

import type { Advice, ExistingMongoIndex, ExistingPgIndex, MongoIndexSpec, PgIndexSpec, Suggestion } from './types';

/** The existing MongoDB index whose leading keys are the suggestion's, if one is usable by the planner. */
export function mongoIndexServing(spec: MongoIndexSpec, existing: ExistingMongoIndex[]): ExistingMongoIndex | undefined {
  return existing.find((ix) => {
    if (ix.hidden || ix.sparse || ix.partialFilterExpression) return false;
    const keys = Object.entries(ix.key);
    if (keys.length < spec.keys.length) return false;
    const same = spec.keys.every((k, i) => keys[i]![0] === k.field && Number(keys[i]![1]) === k.direction);
    const reversed = spec.keys.every((k, i) => keys[i]![0] === k.field && Number(keys[i]![1]) === -k.direction);
    return same || reversed;
  });
}

function pgColumnText(c: { column?: string; expression?: string }): string {
  return (c.column ?? c.expression ?? '').replace(/^\((.*)\)$/, '$1').replace(/\s+/g, '').toLowerCase();
}

/** The existing PostgreSQL index whose leading columns are the suggestion's, with every INCLUDE column it asks for. */
export function pgIndexServing(spec: PgIndexSpec, existing: ExistingPgIndex[]): ExistingPgIndex | undefined {
  return existing.find((ix) => {
    if (ix.invalid || ix.predicate || ix.table !== spec.table || (ix.method ?? 'btree') !== spec.method) return false;
    if (spec.schema !== undefined && ix.schema !== undefined && ix.schema !== spec.schema) return false;
    if (ix.columns.length < spec.keys.length) return false;
    const names = spec.keys.map((k, i) => pgColumnText(ix.columns[i]!) === pgColumnText({ column: k.column }));
    if (!names.every(Boolean)) return false;
    if (spec.method === 'btree') {
      const same = spec.keys.every((k, i) => (ix.columns[i]!.desc === true) === (k.desc === true));
      const reversed = spec.keys.every((k, i) => (ix.columns[i]!.desc === true) !== (k.desc === true));
      if (!same && !reversed) return false;
    }
    const covered = new Set([...ix.columns.map(pgColumnText), ...(ix.include ?? []).map((c) => pgColumnText({ column: c }))]);
    return (spec.include ?? []).every((c) => covered.has(pgColumnText({ column: c })));
  });
}

/**
 * Turns every suggestion an existing index already serves into "keep using" that index, drops the
 * repeats this makes, and numbers the suggestions again. Changes `advice` in place and returns it. With
 * `collection`, the MongoDB indexes are that collection's, and a suggestion on another one is kept as it is.
 */
export function keepServedIndexes(advice: Advice, existing: { mongodb?: ExistingMongoIndex[]; postgres?: ExistingPgIndex[] }, collection?: string): Advice {
  const out: Suggestion[] = [];
  const kept = new Set<string>();
  for (const s of advice.suggestions) {
    // `existing.mongodb` are the queried collection's indexes: a suggestion on another collection (a
    // $lookup's) was checked against that collection's own when it was made.
    const elsewhere = collection !== undefined && s.index?.engine === 'mongodb' && s.index.collection !== collection;
    if (s.action === 'create' && s.index && !elsewhere) {
      const ix = s.index.engine === 'mongodb' ? mongoIndexServing(s.index, existing.mongodb ?? []) : pgIndexServing(s.index, existing.postgres ?? []);
      if (ix) {
        if (kept.has(ix.name)) continue;
        kept.add(ix.name);
        const rewritten = !s.servesQueryAsWritten && s.rewrites.length > 0;
        const reason = rewritten
          ? `Keep using ${ix.name}: it already has the keys the rewritten query needs (${s.rewrites.map((r) => r.rule).join(', ')}), so only the rewrite is left to do.`
          : `Keep using ${ix.name}: it already has these keys, so a new index would only repeat it.`;
        const keep: Suggestion = { ...s, action: 'keep', rule: 'existing', keep: { name: ix.name, reason } };
        delete keep.createText;
        delete keep.replaces;
        out.push(keep);
        continue;
      }
    }
    if (s.action === 'keep' && s.keep) {
      if (kept.has(s.keep.name)) continue;
      kept.add(s.keep.name);
    }
    out.push(s);
  }
  out.forEach((s, i) => (s.rank = i + 1));
  advice.suggestions = out;
  return advice;
}

/** The suggestions without repeats (same action, index or rule, and reach), ranked 1.. in their order. */
export function distinctRanked(suggestions: Suggestion[]): Suggestion[] {
  const seen = new Set<string>();
  const out = suggestions.filter((s) => {
    const k = `${s.action}:${s.index ? JSON.stringify(s.index) : s.rule}:${s.servesQueryAsWritten}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  out.forEach((s, i) => {
    s.rank = i + 1;
  });
  return out;
}
