// A pipeline as the server rewrites it, and the other collections its $lookup stages read.
//
// explainedLead reads an aggregate's explain for what the query layer was given: the filter the
// optimizer pushed down to the collection scan (parsedQuery, after it moved and split the $match stages)
// and the sort it does there. The advice with a connection hands it to the advisor with the query
// (withExplainedLead), so the index suggested is for what the rewritten $match can use on that server,
// whatever its version. lookupAdvice turns the offline note of a $lookup into a suggestion on the other
// collection when the connection shows no index there that leads with its foreignField.

import type { Advice, ExistingMongoIndex, MongoDoc, Suggestion } from './types';
import { isPlainObject, type ExplainedLead, type MongoLookup } from './mongoShape';
import { createIndexText } from './mongoText';
import { indexSpec } from './mongoAdvisor';

/** The server's internal comparisons that $expr adds to parsedQuery, as the operators whose bounds they give. */
const INTERNAL_EXPR: Record<string, string> = {
  $_internalExprEq: '$eq',
  $_internalExprGt: '$gt',
  $_internalExprGte: '$gte',
  $_internalExprLt: '$lt',
  $_internalExprLte: '$lte',
};

/**
 * The filter and sort an aggregate's explain shows the query layer was given, or undefined when the
 * explain has no query layer to read (a $geoNear or $search cursor, a compatible server's own shape).
 * Classic engine: `stages[0].$cursor.queryPlanner`; slot-based engine (explainVersion "2"): the same, or
 * `queryPlanner` at the top when the whole pipeline was pushed down; sharded: the first shard's.
 */
export function explainedLead(explain: unknown): ExplainedLead | undefined {
  if (!isPlainObject(explain)) return undefined;
  const planner = queryPlannerOf(explain);
  if (!planner || !isPlainObject(planner['parsedQuery'])) return undefined;
  const lead: ExplainedLead = { filter: normalised(planner['parsedQuery']) as MongoDoc };
  const sort = sortOf(planner['winningPlan']);
  if (sort) lead.sort = sort;
  return lead;
}

function queryPlannerOf(explain: MongoDoc): MongoDoc | undefined {
  const stages = explain['stages'];
  if (Array.isArray(stages)) {
    const first: unknown = stages[0];
    if (!isPlainObject(first)) return undefined;
    const cursor = first['$cursor'];
    return isPlainObject(cursor) && isPlainObject(cursor['queryPlanner']) ? cursor['queryPlanner'] : undefined;
  }
  if (isPlainObject(explain['queryPlanner'])) {
    const planner = explain['queryPlanner'];
    // A sharded explain's planner holds the shards' own; each shard was given the same pipeline.
    const winning = planner['winningPlan'];
    if (isPlainObject(winning) && Array.isArray(winning['shards']) && isPlainObject(winning['shards'][0])) return winning['shards'][0] as MongoDoc;
    return planner;
  }
  const shards = explain['shards'];
  if (isPlainObject(shards)) {
    const first = Object.values(shards)[0];
    return isPlainObject(first) ? queryPlannerOf(first) : undefined;
  }
  return undefined;
}

/** Stages of a pipeline the slot-based engine runs inside the query layer: a SORT above one sorts their output. */
const PIPELINE_STAGES = new Set(['GROUP', 'EQ_LOOKUP', 'UNWIND', 'REPLACE_ROOT', 'WINDOW', 'SEARCH']);

function children(plan: MongoDoc): unknown[] {
  const inputs = plan['inputStages'];
  return [plan['queryPlan'], plan['inputStage'], ...(Array.isArray(inputs) ? inputs : [])];
}

function holdsPipelineStage(plan: unknown): boolean {
  if (!isPlainObject(plan)) return false;
  return PIPELINE_STAGES.has(String(plan['stage'])) || children(plan).some(holdsPipelineStage);
}

/**
 * The pattern of the winning plan's SORT of the collection's documents (the slot-based engine's plan is
 * under `queryPlan`); a SORT of what a pushed-down $group or $lookup made is not one an index can give.
 */
function sortOf(plan: unknown): MongoDoc | undefined {
  if (!isPlainObject(plan)) return undefined;
  if (plan['stage'] === 'SORT' && isPlainObject(plan['sortPattern']) && !holdsPipelineStage(plan)) return plan['sortPattern'];
  for (const child of children(plan)) {
    const found = sortOf(child);
    if (found) return found;
  }
  return undefined;
}

/** parsedQuery with the server's internal $expr comparisons written as the operators they bound like. */
function normalised(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalised);
  if (!isPlainObject(value)) return value;
  const out: MongoDoc = {};
  for (const [k, v] of Object.entries(value)) {
    const op = INTERNAL_EXPR[k];
    if (op !== undefined && !(op in value)) out[op] = v;
    else if (op === undefined) out[k] = normalised(v);
  }
  return out;
}

/**
 * The advice with each $lookup's other collection looked at. `foreign` holds the indexes of each `from`
 * collection the connection listed (absent: offline, or not listed), and `missing` the sentence for a
 * `from` the database does not have. A lookup whose other collection has no index leading with its
 * foreignField gets a suggestion on that collection after the others, with the reason in one sentence;
 * one that has such an index gets a note naming it; offline, the shape's note stays as it is.
 */
export function lookupAdvice(advice: Advice, lookups: readonly MongoLookup[], foreign: Readonly<Record<string, readonly ExistingMongoIndex[]>>, missing: Readonly<Record<string, string>> = {}): Advice {
  if (advice.refusal !== undefined) return advice;
  const notes = [...advice.notes];
  const suggestions: Suggestion[] = [...advice.suggestions];
  const suggested = new Set<string>();
  for (const lookup of lookups) {
    const at = notes.indexOf(lookup.note);
    const replace = (sentence: string): void => {
      if (at >= 0) notes[at] = sentence;
      else notes.push(sentence);
    };
    if (missing[lookup.from] !== undefined) {
      replace(`The $lookup at stage ${lookup.stage} joins nothing: ${missing[lookup.from]!.replace(/\.$/, '')}, so no index is advised for it.`);
      continue;
    }
    const indexes = foreign[lookup.from];
    if (indexes === undefined) continue;
    // A hidden, partial or text index does not serve every lookup.
    const leading = indexes.find((ix) => !ix.hidden && ix.partialFilterExpression === undefined && isPlainObject(ix.key)
      && Object.keys(ix.key)[0] === lookup.foreignField && ix.key[lookup.foreignField] !== 'text');
    if (leading) {
      replace(`The $lookup at stage ${lookup.stage} reads ${lookup.from} by ${lookup.foreignField} through its index ${leading.name}, which leads with that field.`);
      continue;
    }
    const id = `${lookup.from}\u0000${lookup.foreignField}`;
    if (suggested.has(id)) {
      if (at >= 0) notes.splice(at, 1);
      continue;
    }
    suggested.add(id);
    if (at >= 0) notes.splice(at, 1);
    const keys = [{ field: lookup.foreignField, direction: 1 as const }];
    suggestions.push({
      rank: suggestions.length + 1,
      action: 'create',
      index: indexSpec(lookup.from, keys),
      createText: createIndexText(lookup.from, keys),
      rule: 'join-key',
      ruleText: `The $lookup at stage ${lookup.stage} looks up ${lookup.from} by ${lookup.foreignField} once for each document that reaches it, and ${lookup.from} has no index that leads with ${lookup.foreignField}, so each lookup scans ${lookup.from}.`,
      expectedPlan: `each lookup: FETCH > IXSCAN on ${lookup.from} { ${lookup.foreignField}: 1 }`,
      tradeOff: `An index on the other collection, ${lookup.from}: it serves the join, not this collection's filter, and every write to ${lookup.from} maintains it.`,
      rewrites: [],
      servesQueryAsWritten: true,
      conditions: [],
      verification: { status: 'not-run' },
    });
  }
  return { ...advice, notes, suggestions };
}
