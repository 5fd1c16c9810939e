// Values for the variables of a MongoDB query the CI gate explains. A query that takes values from the code
// (`{ user_id: userId }`, `{ _id: { $in: ids } }`, `{ $set: { seen: now } }`) cannot be sent as written; the
// gate explains it with, for each variable, a value the CI database holds in the field it is compared to,
// or a stand-in where no document has one. MongoDB chooses among the indexes on the query's fields, not on
// its values, so the plan shows what the query's shape gets: the index, a collection scan, a blocking sort.
// A variable that decides the shape (the whole filter, a sort, an operator inside $expr or a stage other
// than $match) leaves the query not explainable, with the reason. Pure: the adapter reads the values.

import { shellValue } from '../advice/mongoText';
import { explainText, explainValues, fillExplainValues, placeholderNames } from '../lint/explainText';
import { isPlaceholder, type FoundQuery } from '../query/find/index';
import type { MongoCommand } from '../query/mongoShell';

/** How a variable is given a value: from the data in `field`, or a stand-in of the kind its operator takes. */
export interface MongoVariable {
  name: string;
  /** The field it is compared to, where the data can give a value. */
  field?: string;
  /** value: one value of the field; list: a list of one value ($in, $nin, $all); the others, a stand-in. */
  kind: 'value' | 'list' | 'string' | 'number' | 'boolean' | 'null' | 'document';
}

export type MongoVariables = { ok: true; variables: MongoVariable[] } | { ok: false; why: string };

/** The stand-in of a variable the data gives no value for. */
export const STAND_IN = 'qpi';

/** Operators whose operand is one value compared to the field. */
const COMPARISONS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte']);
/** Operators whose operand is a list of values. */
const LISTS = new Set(['$in', '$nin', '$all']);
/** Update operators whose fields take a number, and those that take any value. */
const NUMERIC_UPDATES = new Set(['$inc', '$mul']);
const VALUE_UPDATES = new Set(['$set', '$setOnInsert', '$unset', '$push', '$addToSet', '$pull', '$min', '$max']);

/**
 * The variables of `cmd` and how each is given a value; not ok, with the reason, when one of them decides
 * the query's shape. Variables in the filter, in a pipeline's $match stages and in an update's operators.
 */
export function mongoVariables(cmd: MongoCommand): MongoVariables {
  const out: MongoVariable[] = [];
  const add = (v: MongoVariable): void => {
    if (!out.some((o) => o.name === v.name)) out.push(v);
  };
  // A projection from the code is left out before this (withStandInParts): which fields come back does not choose the index.
  for (const [part, value] of [['sort', cmd.sort], ['hint', cmd.hint], ['collation', cmd.collation]] as const) {
    const name = firstVariable(value);
    if (name !== undefined) return { ok: false, why: `The ${part} is built from ${name}, a value of the code, which decides the plan` };
  }
  if (cmd.filter !== undefined) {
    const why = filterVariables(cmd.filter, undefined, add, 0);
    if (why) return { ok: false, why };
  }
  for (const [i, stage] of (cmd.pipeline ?? []).entries()) {
    if (isPlaceholder(stage)) return { ok: false, why: `Stage ${i + 1} of the pipeline is ${stage.$placeholder}, a value of the code` };
    const [op, body] = Object.entries(stage)[0] ?? [];
    if (op === '$match') {
      const why = filterVariables(body, undefined, add, 0);
      if (why) return { ok: false, why };
    } else {
      const name = firstVariable(stage);
      if (name !== undefined) return { ok: false, why: `The ${op ?? 'pipeline'} stage takes ${name}, a value of the code, which may decide the plan` };
    }
  }
  if (cmd.update !== undefined) {
    const why = updateVariables(cmd.update, add);
    if (why) return { ok: false, why };
  }
  return { ok: true, variables: out };
}

/** A query whose variables can be given values: them, and its shell text with the values put in. */
export interface BindableMongo {
  ok: true;
  variables: MongoVariable[];
  /** A projection the code gives was left out, or a skip or a limit given a stand-in (withStandInParts). */
  standInParts: boolean;
  text(valueOf: (v: MongoVariable) => unknown): string;
}

/**
 * How the gate can explain a MongoDB query that takes values from the code: its variables and its text
 * with values; not ok, with the reason, when a variable decides its shape; undefined when it cannot take
 * values at all (a spread object, a limit from the code), whose own reason then stands.
 */
export function bindableMongo(found: Extract<FoundQuery, { engine: 'mongodb' }>): BindableMongo | { ok: false; why: string } | undefined {
  const q = withStandInParts(found);
  const standInParts = q !== found;
  const template = explainValues(q);
  if (!template) {
    // Only a projection, a skip or a limit came from the code: with their stand-ins the query is literal.
    const literal = standInParts ? explainText(q) : undefined;
    return literal?.ok ? { ok: true, variables: [], standInParts, text: () => literal.text } : undefined;
  }
  const read = mongoVariables(q.command);
  if (!read.ok) return read;
  const byName = new Map(read.variables.map((v) => [v.name, v]));
  if (template.names.some((n) => !byName.has(n))) return undefined;
  return { ok: true, variables: read.variables, standInParts, text: (valueOf) => fillExplainValues(template, template.names.map((n) => shellValue(valueOf(byName.get(n)!)))) };
}

/** The page a query given skip and limit from the code is explained with: the first, of this many. */
export const STAND_IN_LIMIT = 20;

/**
 * The query as the gate explains it when the code gives it a projection, a skip or a limit: without the
 * projection (which fields come back does not choose the index), at skip 0 and limit STAND_IN_LIMIT (a
 * limit keeps its place in the plan, which one does not change it).
 */
function withStandInParts(q: Extract<FoundQuery, { engine: 'mongodb' }>): Extract<FoundQuery, { engine: 'mongodb' }> {
  const standIn = new Set(['projection', 'skip', 'limit']);
  const projected = q.command.projection !== undefined && firstVariable(q.command.projection) !== undefined;
  if (!projected && !q.variableParts.some((p) => standIn.has(p))) return q;
  const command = { ...q.command };
  if (projected || q.variableParts.includes('projection')) delete command.projection;
  if (q.variableParts.includes('skip')) command.skip = 0;
  if (q.variableParts.includes('limit')) command.limit = STAND_IN_LIMIT;
  return { ...q, command, variableParts: q.variableParts.filter((p) => !standIn.has(p)) };
}

/** The value a variable is explained with: the data's (`fromData`, the field's value in one document) or a stand-in. */
export function mongoVariableValue(v: MongoVariable, fromData: unknown): unknown {
  // An array field: equality to one of its elements is what the query's value usually is.
  const one = Array.isArray(fromData) ? fromData.find((x) => x !== null && x !== undefined) : fromData;
  const data = one === null || one === undefined ? undefined : one;
  switch (v.kind) {
    case 'value': return data ?? STAND_IN;
    case 'list': return [data ?? STAND_IN];
    case 'string': return STAND_IN;
    case 'number': return 1;
    case 'boolean': return true;
    case 'document': return {};
    case 'null': return null;
  }
}

/** Reads a filter document under `field` (undefined at its top); returns why it cannot be bound, if it cannot. */
function filterVariables(doc: unknown, field: string | undefined, add: (v: MongoVariable) => void, depth: number): string | undefined {
  if (depth > 32) return 'The filter is nested too deeply to give its variables values';
  if (isPlaceholder(doc)) {
    if (field === undefined) return `The filter is ${doc.$placeholder}, a value of the code, so the fields it tests are not known`;
    add({ name: doc.$placeholder, field, kind: 'value' });
    return undefined;
  }
  if (Array.isArray(doc)) {
    for (const x of doc) {
      const why = filterVariables(x, field, add, depth + 1);
      if (why) return why;
    }
    return undefined;
  }
  if (doc === null || typeof doc !== 'object') return undefined;
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    let why: string | undefined;
    if (!k.startsWith('$')) why = filterVariables(v, field === undefined ? k : `${field}.${k}`, add, depth + 1);
    else if (k === '$and' || k === '$or' || k === '$nor') why = isPlaceholder(v) ? `The ${k} list is ${v.$placeholder}, a value of the code` : filterVariables(v, undefined, add, depth + 1);
    else if (field === undefined) why = firstVariable(v) === undefined ? undefined : `${k} takes ${firstVariable(v)}, a value of the code, which may decide the plan`;
    else if (COMPARISONS.has(k)) why = filterVariables(v, field, add, depth + 1);
    else if (LISTS.has(k)) {
      if (isPlaceholder(v)) add({ name: v.$placeholder, field, kind: 'list' });
      else why = filterVariables(v, field, add, depth + 1);
    } else if (k === '$not' || k === '$elemMatch') why = isPlaceholder(v) ? `${k} is ${v.$placeholder}, a value of the code` : filterVariables(v, field, add, depth + 1);
    else if (k === '$regex' || k === '$options' || k === '$type') why = standIn(v, 'string', add);
    else if (k === '$exists') why = standIn(v, 'boolean', add);
    else if (k === '$size') why = standIn(v, 'number', add);
    else why = firstVariable(v) === undefined ? undefined : `${k} takes ${firstVariable(v)}, a value of the code, which may decide the plan`;
    if (why) return why;
  }
  return undefined;
}

/** A variable as an operator's whole operand, given a stand-in of `kind`; a variable inside it cannot be. */
function standIn(v: unknown, kind: MongoVariable['kind'], add: (v: MongoVariable) => void): string | undefined {
  if (isPlaceholder(v)) {
    add({ name: v.$placeholder, kind });
    return undefined;
  }
  const inner = firstVariable(v);
  return inner === undefined ? undefined : `An operand built from ${inner}, a value of the code, cannot be given a value`;
}

/** The variables of an update document: the values its operators write do not change the plan. */
function updateVariables(update: unknown, add: (v: MongoVariable) => void): string | undefined {
  if (isPlaceholder(update)) return `The update is ${update.$placeholder}, a value of the code, so what it is (operators, a replacement or a pipeline) is not known`;
  if (Array.isArray(update)) return firstVariable(update) === undefined ? undefined : 'The update pipeline takes values of the code';
  if (update === null || typeof update !== 'object') return undefined;
  const entries = Object.entries(update as Record<string, unknown>);
  // A replacement document: what it holds does not change the plan.
  if (!entries.some(([k]) => k.startsWith('$'))) {
    for (const name of allVariables(update)) add({ name, kind: 'null' });
    return undefined;
  }
  for (const [op, fields] of entries) {
    if (isPlaceholder(fields)) {
      // `{ $set: changes }`: an empty $set is a valid update (MongoDB 5.0 on), and the plan is the filter's.
      if (VALUE_UPDATES.has(op)) {
        add({ name: fields.$placeholder, kind: 'document' });
        continue;
      }
      return `${op} takes ${fields.$placeholder}, a value of the code`;
    }
    if (!NUMERIC_UPDATES.has(op) && !VALUE_UPDATES.has(op)) {
      if (firstVariable(fields) !== undefined) return `${op} takes ${firstVariable(fields)}, a value of the code`;
      continue;
    }
    for (const [, value] of Object.entries(fields ?? {})) {
      // `{ $push: { tags: { $each: newTags } } }`: $each takes a list.
      const each = value !== null && typeof value === 'object' && !isPlaceholder(value) ? (value as Record<string, unknown>)['$each'] : undefined;
      if (isPlaceholder(each)) add({ name: each.$placeholder, kind: 'list' });
      for (const name of allVariables(value)) add({ name, kind: NUMERIC_UPDATES.has(op) ? 'number' : 'null' });
    }
  }
  return undefined;
}

function firstVariable(value: unknown): string | undefined {
  return placeholderNames([value], 1)[0];
}

function allVariables(value: unknown): string[] {
  return placeholderNames([value], 64);
}
