// Reads a structured MongoDB query into the shape the advisor ranks indexes for: each filtered field
// classified as equality, $in (with its point count), range (naming what kind) or unindexable, the sort,
// the projection, limit/skip, and for pipelines the leading stages the query layer can take plus the
// $match stages a $project or $addFields hid from the indexes.
//
// The classification follows how MongoDB bounds an index, not how the operator reads: $ne, $nin, $exists
// and $type bound it loosely, so they are ranges; an anchored prefix regex gives tight bounds but is still
// a range for ESR; $in and a $or on one field are equality only while the planner can explode them.

import type { MongoDoc, MongoQueryInput, MongoQueryOperation, PredicateClass } from './types';
import { createIndexText, shellKey, shellValue } from './mongoText';

/** MongoDB's internalQueryMaxScansToExplode: more point-interval combinations and the sort is lost. */
export const MAX_SCANS_TO_EXPLODE = 200;

export interface MongoPredicate {
  path: string;
  kind: PredicateClass;
  /** '=', 'null', '$in', '$or', '$gt/$lt', '$ne', '$nin', 'anchored regex', 'case-insensitive regex', ... */
  detail: string;
  /** Point intervals of an $in / single-field $or, when the list is literal. */
  values?: number;
  /** Range with tight bounds (comparisons, anchored prefix regex) as opposed to a loose scan. */
  tight?: boolean;
  /** The index alone cannot answer it (null also matches missing fields; $exists: false): no covered plan. */
  needsFetch?: boolean;
  /** The array path of the $elemMatch this predicate sits in: predicates of one $elemMatch share an element. */
  elemMatch?: string;
  /** The predicate in shell text, for sentences: `tenant: 7`, `name: /^ab/`. */
  text: string;
  /** The condition as written (the value, or the operator object). */
  condition: unknown;
}

export interface MongoProjection {
  /** True for an inclusion projection of plain fields (the only kind that can be covered). */
  coverable: boolean;
  /** Fields the projection returns (inclusion), dotted. */
  fields: string[];
  /** _id is returned (the default unless `_id: 0`). */
  includesId: boolean;
}

/** A $match an earlier $project/$addFields/$set hid from the indexes, and how to move it first. */
export interface HiddenMatch {
  stageIndex: number;
  /** Renamed field -> original dotted path. */
  renames: Record<string, string>;
  /** Fields the $match uses that are computed by an expression (cannot move). */
  computed: string[];
  /** The pipeline with the movable part of the $match placed first, on the original paths. */
  rewritten: MongoDoc[];
  /** The filter of the moved $match, on original paths. */
  movedFilter: MongoDoc;
  /** Set when the $match follows another stage than a rename: the rewrite's description and caveat. */
  description?: string;
  caveat?: string;
}

export interface MongoShape {
  collection: string;
  operation: MongoQueryOperation;
  /** Conjunctive predicates, one per path. */
  predicates: MongoPredicate[];
  /** A top-level $or over different fields: each branch is a conjunction of its own predicates. */
  orBranches: MongoPredicate[][];
  sort: { path: string; direction: 1 | -1 }[];
  projection?: MongoProjection;
  limit?: number;
  skip?: number;
  /** distinct: the field. */
  distinctField?: string;
  /** The filter the index serves, as written (after merging leading $match stages). */
  filter: MongoDoc;
  hiddenMatches: HiddenMatch[];
  /** The pipeline's $lookup stages by localField/foreignField; absent for other operations. */
  lookups?: MongoLookup[];
  notes: string[];
  warnings: string[];
}

export type MongoShapeResult = { ok: true; shape: MongoShape } | { ok: false; refusal: string };

/** A $lookup that joins by localField/foreignField, with where the other collection is read. */
export interface MongoLookup {
  /** 1-based stage number in the pipeline as written. */
  stage: number;
  /** The other collection (`from`). */
  from: string;
  localField: string;
  foreignField: string;
  /** The note this shape gave for it offline; advice with a connection replaces it with what the other collection has. */
  note: string;
}

/**
 * What the server's explain of a pipeline shows it gives the collection scan: the filter it pushed down
 * (parsedQuery) and the sort the query layer does, when the plan shows one. Read by mongoPipeline.ts.
 */
export interface ExplainedLead {
  filter: MongoDoc;
  sort?: MongoDoc;
}

/** The key a query carries its explained lead under (withExplainedLead), so the advisor reads it with the query. */
export const EXPLAINED_LEAD: unique symbol = Symbol('explained lead');

/** A query with the lead its server's explain shows. */
export type ExplainedQuery = MongoQueryInput & { [EXPLAINED_LEAD]?: ExplainedLead };

/** The query with its explained lead: the shape's filter is then what the server pushed down, not the rules' split. */
export function withExplainedLead(query: MongoQueryInput, lead: ExplainedLead): ExplainedQuery {
  return { ...query, [EXPLAINED_LEAD]: lead };
}

/** The $lookup stages of a pipeline that join by localField/foreignField (none for other operations). */
export function mongoLookups(query: MongoQueryInput): MongoLookup[] {
  const read = mongoShape(query);
  return read.ok ? read.shape.lookups ?? [] : [];
}

/** Reads the structured query. Never throws on bad input: a query it cannot read gets one sentence. */
export function mongoShape(query: MongoQueryInput): MongoShapeResult {
  if (query === null || typeof query !== 'object') return { ok: false, refusal: 'The query is not an object with a collection and a filter.' };
  if (typeof query.collection !== 'string' || query.collection === '') {
    return { ok: false, refusal: 'The query names no collection.' };
  }
  const operation: MongoQueryOperation = query.operation ?? (query.count ? 'count' : query.pipeline ? 'aggregate' : 'find');
  const shape: MongoShape = {
    collection: query.collection,
    operation,
    predicates: [],
    orBranches: [],
    sort: [],
    filter: {},
    hiddenMatches: [],
    notes: [],
    warnings: [],
  };

  let filter: MongoDoc = isPlainObject(query.filter) ? query.filter : {};
  if (query.filter !== undefined && query.filter !== null && !isPlainObject(query.filter)) {
    return { ok: false, refusal: 'The filter is not a document.' };
  }
  if (typeof filter['$placeholder'] === 'string') {
    return { ok: false, refusal: `The filter is the variable ${filter['$placeholder']}, so the fields it tests are unknown here.` };
  }
  let sort = isPlainObject(query.sort) ? query.sort : undefined;
  let projection = isPlainObject(query.projection) ? query.projection : undefined;
  let limit = positiveNumber(query.limit);
  let skip = positiveNumber(query.skip);

  if (operation === 'aggregate') {
    if (!Array.isArray(query.pipeline)) return { ok: false, refusal: 'The aggregate has no pipeline array.' };
    const lead = readPipeline(query.pipeline, shape, (query as ExplainedQuery)[EXPLAINED_LEAD]);
    filter = lead.filter;
    sort = lead.sort;
    projection = lead.projection;
    limit = lead.limit;
    skip = lead.skip;
  }
  if (operation === 'distinct' && typeof query.field === 'string') shape.distinctField = query.field;

  shape.filter = filter;
  readFilter(filter, shape);
  if (sort) shape.sort = readSort(sort, shape);
  if (projection) shape.projection = readProjection(projection);
  if (limit !== undefined) shape.limit = limit;
  if (skip !== undefined) shape.skip = skip;
  return { ok: true, shape };
}

// ---- filter -------------------------------------------------------------------------------------------

function readFilter(filter: MongoDoc, shape: MongoShape): void {
  const collected: MongoPredicate[] = [];
  collectConjunction(filter, '', undefined, collected, shape);
  shape.predicates = mergeSamePath(collected);
}

/** Walks one conjunction (a filter document), pushing one predicate per condition. */
function collectConjunction(doc: MongoDoc, prefix: string, elemMatch: string | undefined, out: MongoPredicate[], shape: MongoShape): void {
  for (const [key, value] of Object.entries(doc)) {
    if (key === '$and') {
      if (Array.isArray(value)) for (const sub of value) if (isPlainObject(sub)) collectConjunction(sub, prefix, elemMatch, out, shape);
      continue;
    }
    if (key === '$or') {
      readOr(value, prefix, elemMatch, out, shape);
      continue;
    }
    if (key === '$nor') {
      shape.notes.push('$nor cannot use index bounds: its fields are checked after the scan.');
      continue;
    }
    if (key === '$comment') continue;
    if (key === '$text') {
      shape.notes.push('$text needs a text index; the advice covers the other predicates only.');
      continue;
    }
    if (key === '$expr') {
      shape.notes.push('$expr is evaluated on each document; only plain field predicates give index bounds.');
      continue;
    }
    if (key === '$where' || key === '$jsonSchema') {
      shape.notes.push(`${key} runs on each fetched document and cannot use an index.`);
      continue;
    }
    if (key.startsWith('$')) {
      shape.warnings.push(`The top-level operator ${key} is not understood; it was left out of the advice.`);
      continue;
    }
    const path = prefix === '' ? key : `${prefix}.${key}`;
    classifyCondition(path, value, elemMatch, out, shape);
  }
}

function readOr(value: unknown, prefix: string, elemMatch: string | undefined, out: MongoPredicate[], shape: MongoShape): void {
  if (!Array.isArray(value) || value.length === 0) {
    shape.warnings.push('$or needs a non-empty array; it was left out of the advice.');
    return;
  }
  const branches: MongoPredicate[][] = [];
  for (const branch of value) {
    const preds: MongoPredicate[] = [];
    if (isPlainObject(branch)) collectConjunction(branch, prefix, elemMatch, preds, shape);
    branches.push(mergeSamePath(preds));
  }
  // $or of equalities on one field is rewritten by the planner into $in, and explodes the same way.
  const single = branches.every((b) => b.length === 1 && (b[0]!.kind === 'equality' || b[0]!.kind === 'in'))
    && new Set(branches.map((b) => b[0]!.path)).size === 1;
  if (single) {
    const path = branches[0]![0]!.path;
    let count = 0;
    let known = true;
    for (const b of branches) {
      const p = b[0]!;
      if (p.kind === 'equality') count += 1;
      else if (p.values !== undefined) count += p.values;
      else known = false;
    }
    const texts = branches.map((b) => `{${b[0]!.text}}`);
    const pred: MongoPredicate = {
      path,
      kind: count === 1 && known ? 'equality' : 'in',
      detail: '$or',
      text: `$or: [${texts.join(', ')}]`,
      condition: value,
    };
    if (known) pred.values = count;
    if (branches.some((b) => b[0]!.needsFetch)) pred.needsFetch = true;
    if (elemMatch !== undefined) pred.elemMatch = elemMatch;
    out.push(pred);
    return;
  }
  if (shape.orBranches.length > 0) {
    shape.notes.push('Only the first top-level $or is advised branch by branch; the others are checked after the scan.');
    return;
  }
  shape.orBranches = branches;
}

/** Classifies `path: value` and pushes its predicates (an $elemMatch on documents pushes several). */
function classifyCondition(path: string, value: unknown, elemMatch: string | undefined, out: MongoPredicate[], shape: MongoShape): void {
  const push: Push = (p) => {
    const pred: MongoPredicate = { path, condition: value, text: p.text ?? `${shellKey(path)}: ${shellValue(value, true)}`, kind: p.kind, detail: p.detail };
    if (p.values !== undefined) pred.values = p.values;
    if (p.tight !== undefined) pred.tight = p.tight;
    if (p.needsFetch) pred.needsFetch = true;
    if (elemMatch !== undefined) pred.elemMatch = elemMatch;
    out.push(pred);
  };

  const regex = regexOf(value);
  if (regex) {
    push(classifyRegex(regex.pattern, regex.options));
    return;
  }
  if (value === null) {
    push({ kind: 'equality', detail: 'null', needsFetch: true });
    return;
  }
  if (!isPlainObject(value) || isValueWrapper(value)) {
    push({ kind: 'equality', detail: '=' });
    return;
  }
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((k) => k.startsWith('$'))) {
    // A whole sub-document compared for equality (field order matters to MongoDB).
    push({ kind: 'equality', detail: 'sub-document equality' });
    return;
  }
  if (keys.includes('$elemMatch')) {
    const em = value['$elemMatch'];
    if (isPlainObject(em)) {
      const emKeys = Object.keys(em);
      if (emKeys.length > 0 && emKeys.every((k) => k.startsWith('$'))) {
        // $elemMatch over scalars: both bounds apply to one element, so they intersect.
        classifyOperators(path, em, push, { elemMatchScalar: true });
      } else {
        collectConjunction(em, path, path, out, shape);
      }
    }
    const rest = Object.fromEntries(Object.entries(value).filter(([k]) => k !== '$elemMatch'));
    if (Object.keys(rest).length > 0) classifyOperators(path, rest, push, {});
    return;
  }
  classifyOperators(path, value, push, {});
}

type Push = (p: Omit<MongoPredicate, 'path' | 'condition' | 'text'> & { text?: string }) => void;

function classifyOperators(path: string, ops: MongoDoc, push: Push, ctx: { elemMatchScalar?: boolean }): void {
  const keys = Object.keys(ops);
  const text = `${shellKey(path)}: ${shellValue(ctx.elemMatchScalar ? { $elemMatch: ops } : ops, true)}`;
  if ('$eq' in ops) {
    const v = ops['$eq'];
    const r = regexOf(v);
    if (v === null) push({ kind: 'equality', detail: 'null', needsFetch: true, text });
    else if (r) push({ ...classifyRegex(r.pattern, r.options), text });
    else push({ kind: 'equality', detail: '=', text });
    return;
  }
  if ('$in' in ops) {
    const list = ops['$in'];
    if (Array.isArray(list)) {
      if (list.some((v) => regexOf(v) !== undefined)) {
        push({ kind: 'range', detail: 'regex in $in', tight: false, text });
      } else if (list.length === 1) {
        push({ kind: 'equality', detail: list[0] === null ? 'null' : '=', needsFetch: list[0] === null, text });
      } else {
        push({ kind: 'in', detail: '$in', values: new Set(list.map((v) => JSON.stringify(v))).size, needsFetch: list.includes(null), text });
      }
    } else {
      // A placeholder list: the count is unknown until run time.
      push({ kind: 'in', detail: '$in', text });
    }
    return;
  }
  if ('$all' in ops) {
    push({ kind: 'equality', detail: '$all (bounds on its first value)', text });
    return;
  }
  const ranges = keys.filter((k) => ['$gt', '$gte', '$lt', '$lte'].includes(k));
  if (ranges.length > 0) {
    push({ kind: 'range', detail: ctx.elemMatchScalar ? '$elemMatch range' : '$gt/$lt', tight: true, text });
    return;
  }
  if ('$regex' in ops) {
    const pattern = ops['$regex'];
    const r = regexOf(pattern);
    const options = typeof ops['$options'] === 'string' ? ops['$options'] : r?.options ?? '';
    const source = r ? r.pattern : typeof pattern === 'string' ? pattern : '';
    push({ ...classifyRegex(source, options), text });
    return;
  }
  if ('$ne' in ops) {
    push({ kind: 'range', detail: ops['$ne'] === null ? '$ne: null' : '$ne', tight: false, text });
    return;
  }
  if ('$nin' in ops) {
    push({ kind: 'range', detail: '$nin', tight: false, text });
    return;
  }
  if ('$exists' in ops) {
    if (ops['$exists'] === false || ops['$exists'] === 0) push({ kind: 'equality', detail: '$exists: false (null bounds)', needsFetch: true, text });
    else push({ kind: 'range', detail: '$exists', tight: false, text });
    return;
  }
  if ('$type' in ops) {
    push({ kind: 'range', detail: '$type', tight: false, text });
    return;
  }
  if ('$not' in ops) {
    push({ kind: 'range', detail: '$not', tight: false, text });
    return;
  }
  for (const geo of ['$near', '$nearSphere', '$geoWithin', '$geoIntersects']) {
    if (geo in ops) {
      push({ kind: 'unindexable', detail: `${geo} (needs a 2dsphere or 2d index)`, text });
      return;
    }
  }
  if ('$size' in ops || '$mod' in ops || keys.some((k) => k.startsWith('$bits'))) {
    push({ kind: 'unindexable', detail: `${keys[0]} (no useful bounds)`, text });
    return;
  }
  push({ kind: 'unindexable', detail: `${keys.join(', ')} (not understood)`, text });
}

/** Anchored prefix without case folding: tight bounds; otherwise the whole field is scanned. */
export function classifyRegex(pattern: string, options: string): { kind: PredicateClass; detail: string; tight: boolean } {
  const anchored = pattern.startsWith('^') || pattern.startsWith('\\A');
  if (options.includes('i')) return { kind: 'range', detail: 'case-insensitive regex', tight: false };
  if (anchored && !options.includes('m')) {
    const body = pattern.startsWith('^') ? pattern.slice(1) : pattern.slice(2);
    const prefix = /^(?:[^\\^$.|?*+()[\]{}]|\\[^A-Za-z0-9])*/.exec(body)![0];
    if (prefix.length > 0) return { kind: 'range', detail: 'anchored regex', tight: true };
    return { kind: 'range', detail: 'anchored regex without a literal prefix', tight: false };
  }
  return { kind: 'range', detail: 'unanchored regex', tight: false };
}

function regexOf(value: unknown): { pattern: string; options: string } | undefined {
  if (value instanceof RegExp) return { pattern: value.source, options: value.flags };
  if (!isPlainObject(value)) return undefined;
  const re = value['$regularExpression'];
  if (isPlainObject(re) && typeof re['pattern'] === 'string') {
    return { pattern: re['pattern'], options: typeof re['options'] === 'string' ? re['options'] : '' };
  }
  const keys = Object.keys(value);
  if (typeof value['$regex'] === 'string' && keys.every((k) => k === '$regex' || k === '$options')) {
    return { pattern: value['$regex'], options: typeof value['$options'] === 'string' ? value['$options'] : '' };
  }
  return undefined;
}

/** Extended JSON scalar wrappers are values, not operator objects. */
function isValueWrapper(o: MongoDoc): boolean {
  const keys = Object.keys(o);
  if (keys.length === 0) return false;
  const wrappers = ['$oid', '$date', '$numberLong', '$numberDecimal', '$numberInt', '$numberDouble', '$binary', '$uuid',
    '$timestamp', '$minKey', '$maxKey', '$placeholder', '$undefined', '$symbol', '$code', '$ref', '$id', '$db'];
  return keys.every((k) => wrappers.includes(k));
}

/** Two conditions on one path (through $and) become one: equality beats $in beats range. */
function mergeSamePath(preds: MongoPredicate[]): MongoPredicate[] {
  const order: PredicateClass[] = ['equality', 'in', 'range', 'unindexable'];
  const byPath = new Map<string, MongoPredicate>();
  for (const p of preds) {
    const prev = byPath.get(p.path);
    if (!prev) {
      byPath.set(p.path, p);
      continue;
    }
    const better = order.indexOf(p.kind) < order.indexOf(prev.kind) ? p : prev;
    const merged: MongoPredicate = { ...better, text: `${prev.text}, ${p.text}` };
    if (prev.needsFetch || p.needsFetch) merged.needsFetch = true;
    byPath.set(p.path, merged);
  }
  return [...byPath.values()];
}

// ---- sort and projection ------------------------------------------------------------------------------

function readSort(sort: MongoDoc, shape: MongoShape): { path: string; direction: 1 | -1 }[] {
  const out: { path: string; direction: 1 | -1 }[] = [];
  for (const [path, dir] of Object.entries(sort)) {
    if (isPlainObject(dir)) {
      shape.notes.push(`The sort on ${path} by ${Object.keys(dir).join(', ')} cannot come from a B-tree index.`);
      continue;
    }
    const n = typeof dir === 'number' ? dir : typeof dir === 'string' ? (/^(desc|descending|-1)$/i.test(dir) ? -1 : 1) : 1;
    out.push({ path, direction: n < 0 ? -1 : 1 });
  }
  return out;
}

function readProjection(projection: MongoDoc): MongoProjection {
  const fields: string[] = [];
  let includesId = true;
  let inclusion = false;
  let coverable = true;
  for (const [k, v] of Object.entries(projection)) {
    if (k === '_id') {
      if (v === 0 || v === false) includesId = false;
      continue;
    }
    if (v === 1 || v === true) {
      inclusion = true;
      fields.push(k);
    } else if (v === 0 || v === false) {
      coverable = false;
    } else if (typeof v === 'string' && v.startsWith('$') && !v.startsWith('$$')) {
      inclusion = true;
      fields.push(v.slice(1));
    } else {
      inclusion = true;
      coverable = false;
    }
  }
  return { coverable: coverable && inclusion, fields, includesId };
}

// ---- pipelines ----------------------------------------------------------------------------------------

interface PipelineLead {
  filter: MongoDoc;
  sort?: MongoDoc;
  projection?: MongoDoc;
  limit?: number;
  skip?: number;
}

/** Stages after which a $match no longer reaches the collection's indexes. */
const BARRIER_STAGES = new Set(['$group', '$unwind', '$lookup', '$graphLookup', '$facet', '$bucket', '$bucketAuto',
  '$sortByCount', '$replaceRoot', '$replaceWith', '$unionWith', '$setWindowFields', '$densify', '$fill', '$redact', '$sample', '$count']);

/**
 * Reads the stages the query layer takes from the front of a pipeline: $match (merged), then $sort,
 * $skip, $limit, and a plain inclusion $project for covering. A $match after a $project/$addFields/$set
 * that renamed or computed its fields is recorded as hidden, with the pipeline rewritten to match first.
 */
function readPipeline(pipeline: MongoDoc[], shape: MongoShape, explained?: ExplainedLead): PipelineLead {
  const lead: PipelineLead = { filter: {} };
  const splits: Split[] = [];
  const lookups: MongoLookup[] = [];
  const filters: MongoDoc[] = [];
  /** Field -> '$original.path' for renames, or null for computed values, from shaping stages so far. */
  const defined = new Map<string, string | null>();
  let shaped = false;
  let barrier: string | undefined;
  let barrierAt = -1;
  let sorted = false;

  for (let i = 0; i < pipeline.length; i++) {
    const stage = pipeline[i];
    if (!isPlainObject(stage) || Object.keys(stage).length !== 1) {
      shape.warnings.push(`Pipeline stage ${i + 1} is not a one-key document; the advice stops before it.`);
      break;
    }
    const [name, body] = Object.entries(stage)[0]!;
    if (name === '$lookup') {
      const lookup = lookupOf(i, body);
      if (lookup) {
        lookups.push(lookup);
        shape.notes.push(lookup.note);
      }
    }
    if (barrier !== undefined) {
      if (name === '$match' && isPlainObject(body) && i === barrierAt + 1 && !shaped && lead.limit === undefined && lead.skip === undefined
        && (barrier === '$group' || barrier === '$unwind' || barrier === '$lookup')) {
        const split = splitAfter(pipeline, barrierAt, i, body);
        if (Object.keys(split.moved).length > 0) filters.push(split.moved);
        shape.notes.push(...split.notes);
        if (split.hidden) shape.hiddenMatches.push(split.hidden);
        splits.push({ stage: i + 1, after: barrier, moved: Object.keys(split.moved), note: split.notes[0] });
      } else if (name === '$match') shape.notes.push(`The $match at stage ${i + 1} comes after ${barrier} and filters documents in memory, not through an index.`);
      continue;
    }
    if (BARRIER_STAGES.has(name)) {
      barrier = name;
      barrierAt = i;
      continue;
    }
    if (name === '$match' && isPlainObject(body)) {
      const used = Object.keys(body).filter((k) => !k.startsWith('$'));
      const touched = used.filter((f) => definesField(defined, f) !== undefined);
      if (lead.limit !== undefined || lead.skip !== undefined) {
        // The optimizer cannot move a $match across $limit/$skip: it would change which documents count.
        shape.notes.push(`The $match at stage ${i + 1} comes after $limit/$skip and filters only the documents they let through.`);
        barrier = '$limit/$skip';
        continue;
      }
      if (!shaped || touched.length === 0) {
        filters.push(body);
        continue;
      }
      shape.hiddenMatches.push(hiddenMatch(pipeline, i, body, defined));
      continue;
    }
    if (name === '$sort' && isPlainObject(body)) {
      if (!sorted && lead.limit === undefined && lead.skip === undefined && Object.keys(body).every((f) => definesField(defined, f) === undefined)) {
        lead.sort = body;
        sorted = true;
      }
      continue;
    }
    if (name === '$limit' && typeof body === 'number') {
      lead.limit = lead.limit === undefined ? body : Math.min(lead.limit, body);
      continue;
    }
    if (name === '$skip' && typeof body === 'number') {
      if (lead.limit === undefined) lead.skip = (lead.skip ?? 0) + body;
      continue;
    }
    if ((name === '$project' || name === '$addFields' || name === '$set' || name === '$unset') && (isPlainObject(body) || typeof body === 'string' || Array.isArray(body))) {
      if (name === '$project' && !shaped && isPlainObject(body) && lead.projection === undefined) lead.projection = body;
      recordDefinitions(name, body, defined);
      shaped = true;
      continue;
    }
    // Any other stage ($geoNear, $search, $out, ...) ends what this advisor reads.
    barrier = name;
  }
  lead.filter = filters.length === 0 ? {} : filters.length === 1 ? filters[0]! : { $and: filters };
  shape.lookups = lookups;
  if (explained && isPlainObject(explained.filter)) followExplain(lead, explained, splits, shape);
  return lead;
}

/** A $match the rules split after $group/$unwind/$lookup: the fields they moved before the stage. */
interface Split {
  stage: number;
  after: string;
  moved: string[];
  /** The note that says the server moves them, when some moved. */
  note: string | undefined;
}

/** The filtered paths of a filter, $or branches included, sorted. */
function filterPaths(filter: MongoDoc): string[] {
  const probe: MongoShape = { collection: '', operation: 'find', predicates: [], orBranches: [], sort: [], filter, hiddenMatches: [], notes: [], warnings: [] };
  const preds: MongoPredicate[] = [];
  collectConjunction(filter, '', undefined, preds, probe);
  return [...new Set([...preds, ...probe.orBranches.flat()].map((p) => p.path))].sort();
}

function fieldsText(paths: readonly string[]): string {
  return paths.length === 0 ? 'no field' : paths.join(', ');
}

/**
 * Where the server's explain and the rules' reading of a pipeline disagree on what reaches the
 * collection scan, the explain wins: the lead filter (and the sort, when the plan shows one) become the
 * server's, a split the server did not make is said to filter in memory, a hidden $match the server moved
 * needs no rewrite, and one note says so.
 */
function followExplain(lead: PipelineLead, explained: ExplainedLead, splits: readonly Split[], shape: MongoShape): void {
  const rules = filterPaths(lead.filter);
  const server = filterPaths(explained.filter);
  const sortDiffers = explained.sort !== undefined && JSON.stringify(explained.sort) !== JSON.stringify(lead.sort ?? {});
  if (JSON.stringify(rules) === JSON.stringify(server) && !sortDiffers) return;
  const reached = new Set(server);
  const served = (f: string): boolean => reached.has(f) || server.some((p) => p.startsWith(`${f}.`));
  const moveNotes = new Set(splits.map((s) => s.note).filter((n): n is string => n !== undefined));
  shape.notes = shape.notes.filter((n) => !moveNotes.has(n));
  for (const split of splits) {
    const moved = split.moved.filter(served);
    const stays = split.moved.filter((f) => !served(f));
    if (moved.length > 0) shape.notes.push(`The server moves the part of the $match at stage ${split.stage} on ${moved.join(', ')} before ${split.after}, so an index can serve it.`);
    if (stays.length > 0) shape.notes.push(`The $match at stage ${split.stage} on ${stays.join(', ')} stays after ${split.after} on this server and filters in memory: no index can help that stage.`);
  }
  shape.hiddenMatches = shape.hiddenMatches.filter((hm) => !Object.keys(hm.movedFilter).every(served) || hm.description !== undefined);
  const sortText = sortDiffers ? ` and sorts by ${Object.keys(explained.sort!).join(', ')}` : '';
  shape.notes.push(`The server's explain shows the collection scan filtered on ${fieldsText(server)}${sortText} where the rules' reading of the pipeline gives ${fieldsText(rules)}: the advice follows the explain.`);
  lead.filter = explained.filter;
  if (sortDiffers) lead.sort = explained.sort!;
}

/** A $lookup by localField/foreignField on a collection of this database, with its offline note. */
function lookupOf(index: number, body: unknown): MongoLookup | undefined {
  if (!isPlainObject(body)) return undefined;
  const { from, localField, foreignField } = body;
  if (typeof from !== 'string' || from === '' || typeof localField !== 'string' || typeof foreignField !== 'string' || foreignField === '') return undefined;
  const stage = index + 1;
  const note = foreignField === '_id'
    ? `The $lookup at stage ${stage} finds its documents in ${from} by _id, which the _id index serves.`
    : `The $lookup at stage ${stage} reads ${from} by ${foreignField} once per document it joins: an index on ${from} that leads with ${foreignField} serves it (${createIndexText(from, [{ field: foreignField, direction: 1 }])}).`;
  return { stage, from, localField, foreignField, note };
}

/**
 * A $match right after $group, $unwind or $lookup, split as the server splits it (MongoDB 6.0 and later
 * move these parts before the stage, where the query layer and its indexes see them): a condition on
 * $group's key (`_id`, or `_id.k` of a key document) becomes one on the field the key is made of; after
 * $unwind, a condition on another field than the unwound path; after $lookup, one on another field than
 * the array it adds. What stays after the stage is filtered in memory, and the notes say so: an
 * accumulator of $group or the array of $lookup cannot be indexed on this collection; a condition on the
 * unwound elements can be repeated before $unwind with $elemMatch (the later $match kept), which an index
 * on the array's path serves: that is offered as a rewrite.
 */
function splitAfter(pipeline: MongoDoc[], at: number, index: number, body: MongoDoc): { moved: MongoDoc; notes: string[]; hidden?: HiddenMatch } {
  const [stage, spec] = Object.entries(pipeline[at]!)[0]!;
  const moved: MongoDoc = {};
  const kept: MongoDoc = {};
  const notes: string[] = [];
  const under = (field: string, path: string): boolean => field === path || field.startsWith(`${path}.`);
  let keyOf: (field: string) => string | undefined = () => undefined;
  let inStage: (field: string) => boolean = () => false;
  let unwound: string | undefined;
  if (stage === '$group' && isPlainObject(spec)) {
    const id = spec['_id'];
    keyOf = (field) => {
      if (field === '_id' && typeof id === 'string' && /^\$[^$]/.test(id)) return id.slice(1);
      const m = /^_id\.([^.]+)$/.exec(field);
      const part = m && isPlainObject(id) ? id[m[1]!] : undefined;
      return typeof part === 'string' && /^\$[^$]/.test(part) ? part.slice(1) : undefined;
    };
    inStage = () => true;
  } else if (stage === '$unwind') {
    const path = typeof spec === 'string' ? spec : isPlainObject(spec) ? spec['path'] : undefined;
    const idx = isPlainObject(spec) ? spec['includeArrayIndex'] : undefined;
    if (typeof path === 'string' && path.startsWith('$')) unwound = path.slice(1);
    inStage = (f) => (unwound === undefined || under(f, unwound) || (typeof idx === 'string' && under(f, idx)));
  } else if (stage === '$lookup' && isPlainObject(spec)) {
    const as = spec['as'];
    inStage = (f) => typeof as !== 'string' || under(f, as);
  }
  for (const [field, cond] of Object.entries(body)) {
    if (field.startsWith('$')) {
      kept[field] = cond;
      continue;
    }
    const source = keyOf(field);
    if (source !== undefined) moved[source] = cond;
    else if (inStage(field)) kept[field] = cond;
    else moved[field] = cond;
  }
  const n = index + 1;
  const movedText = Object.keys(moved).join(', ');
  if (movedText !== '') notes.push(`The server moves the part of the $match at stage ${n} on ${movedText} before ${stage}, so an index can serve it.`);
  const keptFields = Object.keys(kept);
  if (keptFields.length === 0) return { moved, notes };
  if (stage === '$group') {
    notes.push(`The $match at stage ${n} on ${keptFields.join(', ')} filters what $group computed: no index can help that stage${movedText === '' ? '; a condition on the group key (_id) would move before $group' : ''}.`);
    return { moved, notes };
  }
  if (stage === '$lookup') {
    notes.push(`The $match at stage ${n} on ${keptFields.join(', ')} filters the documents $lookup joined in: no index on this collection can help it.`);
    return { moved, notes };
  }
  notes.push(`The $match at stage ${n} on ${keptFields.join(', ')} filters each element $unwind produced, in memory.`);
  if (unwound === undefined) return { moved, notes };
  const elem: MongoDoc = {};
  for (const f of keptFields) {
    if (f === unwound || !f.startsWith(`${unwound}.`) || isPlainObject(kept[f]) && Object.keys(kept[f] as MongoDoc).some((k) => k === '$exists' || k === '$ne' || k === '$nin' || k === '$not')) return { moved, notes };
    elem[f.slice(unwound.length + 1)] = kept[f];
  }
  const copy: MongoDoc = { ...moved, [unwound]: { $elemMatch: elem } };
  const rewritten: MongoDoc[] = [{ $match: copy }, ...pipeline.slice(0, at), pipeline[at]!, { $match: kept }, ...pipeline.slice(index + 1)];
  return {
    moved,
    notes,
    hidden: {
      stageIndex: index,
      renames: {},
      computed: [],
      rewritten,
      movedFilter: copy,
      description: `The $match at stage ${n} on ${keptFields.join(', ')} runs after $unwind, on every element, in memory. Repeating it before $unwind as ${unwound}: {$elemMatch: ...} keeps the result (the later $match still picks the elements) and lets an index on ${keptFields.join(', ')} find the documents that hold such an element.`,
      caveat: 'The $match after $unwind must stay: the $elemMatch before it only keeps the documents with at least one matching element.',
    },
  };
}

function recordDefinitions(stage: string, body: unknown, defined: Map<string, string | null>): void {
  if (stage === '$unset') return;
  if (!isPlainObject(body)) return;
  for (const [field, v] of Object.entries(body)) {
    if (field === '_id' && (v === 0 || v === false)) continue;
    if (v === 1 || v === true || v === 0 || v === false) continue;
    if (typeof v === 'string' && v.startsWith('$') && !v.startsWith('$$')) defined.set(field, v.slice(1));
    else defined.set(field, null);
  }
}

/** The definition that changed `field` (or a parent of it), if any: a source path, or null for computed. */
function definesField(defined: Map<string, string | null>, field: string): string | null | undefined {
  for (const [name, source] of defined) {
    if (field === name) return source;
    if (field.startsWith(`${name}.`)) return source === null ? null : `${source}${field.slice(name.length)}`;
  }
  return undefined;
}

function hiddenMatch(pipeline: MongoDoc[], index: number, body: MongoDoc, defined: Map<string, string | null>): HiddenMatch {
  const renames: Record<string, string> = {};
  const computed: string[] = [];
  const moved: MongoDoc = {};
  const kept: MongoDoc = {};
  for (const [field, cond] of Object.entries(body)) {
    if (field.startsWith('$')) {
      kept[field] = cond;
      continue;
    }
    const source = definesField(defined, field);
    if (source === undefined) {
      moved[field] = cond;
    } else if (source === null) {
      computed.push(field);
      kept[field] = cond;
    } else {
      renames[field] = source;
      moved[source] = cond;
    }
  }
  const rewritten: MongoDoc[] = [];
  if (Object.keys(moved).length > 0) rewritten.push({ $match: moved });
  pipeline.forEach((stage, i) => {
    if (i !== index) rewritten.push(stage);
    else if (Object.keys(kept).length > 0) rewritten.push({ $match: kept });
  });
  return { stageIndex: index, renames, computed, rewritten, movedFilter: moved };
}

// ---- helpers ------------------------------------------------------------------------------------------

export function isPlainObject(v: unknown): v is MongoDoc {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RegExp) && !(v instanceof Date);
}

function positiveNumber(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined;
}
