// What the language server says about one query: the findings that hold whatever the data (a $match
// hidden behind a rename, skip/OFFSET pagination, unanchored or case-insensitive regex, a leading
// $ne/$nin, a $in too long to explode for the sort, a function around a column, LIKE '%x'), and with the
// indexes of a live database the findings that depend on them (a collection scan, a blocking sort, an
// index that serves). Also the hover text and the suggestion the CodeLens offers.
//
// Positions are kept as anchors to the query's own range objects (which the finder moves in place when
// text before them changes) or as offsets into the SQL text (mapped through the query's runs), so one
// analysis stays right across edits elsewhere in the file and is computed once per query.

import {
  adviseMongo, advisePostgresShapes, fromMongoCommand, mongoShape, parsePostgresQuerySync, MAX_SCANS_TO_EXPLODE, DEEP_OFFSET,
  type Advice, type ExistingMongoIndex, type ExistingPgIndex, type MongoShape, type MongoStats, type PgShape, type PgTableStats, type Suggestion,
} from '../advice/index';
import { classifyRegex } from '../advice/mongoShape';
import { effectiveSort, fitIndex } from '../advice/mongoFit';
import { escapeKey, sqlRangeToSource, type FoundMongoQuery, type FoundQuery, type FoundSqlQuery, type Located, type SourceRange } from '../query/find';
import { declaredPrimaryKeys, repositoryCatalog, type DeclaredMongoIndex, type RepositorySchema } from '../schema/index';
import { missingNames, notThere, type Catalog, type CatalogRelation } from '../advice/catalog';
import { catalogTargets } from '../advice/possible';
import { gridFsIndexes } from '../query/find/family';
import { detached } from '../query/find/ranges';
import { DiagnosticCodes, type DiagnosticCode, type PlanSummary } from './codes';
import { explainText, otherDatabaseProblem } from './explainText';

/** Where a finding is: a live file range of the query, or a span of its SQL text. */
export type Anchor = { file: SourceRange } | { sql: [number, number] };

export type FindingSeverity = 'warning' | 'information' | 'hint';

export interface InlineFinding {
  code: DiagnosticCode;
  severity: FindingSeverity;
  anchor: Anchor;
  message: string;
  suggestion?: { createText: string; target: string; keys: string; rule: string };
  keep?: string;
  /**
   * `declare`: a name the edits use that the code must be given (the keyset rewrite's last value), declared
   * by the code action where the query is (src/core/lint/declare.ts), so the fixed code compiles.
   */
  fix?: { title: string; edits: { anchor: Anchor; newText: string }[]; declare?: { name: string; offset: number; why: string } };
  rewriteText?: string;
}

/**
 * The indexes and statistics of one collection or table, as the extension sent them, and what the
 * connection's catalog says it is (`null`: it does not exist there; absent: not looked up).
 */
export interface MongoTarget { indexes: ExistingMongoIndex[]; stats?: MongoStats; relation?: CatalogRelation | null }
export interface PgTarget { indexes: ExistingPgIndex[]; stats?: PgTableStats; relation?: CatalogRelation | null }

/** The connection's catalog for these targets, from what the extension sent; undefined when nothing was looked up. */
function connectionCatalog(where: string, targets: readonly string[], lists: Map<string, { relation?: CatalogRelation | null }>): Catalog | undefined {
  const relations: Record<string, CatalogRelation | null> = {};
  for (const t of targets) {
    const r = lists.get(t)?.relation;
    if (r !== undefined) relations[t] = r;
  }
  return Object.keys(relations).length > 0 ? { where, relations } : undefined;
}

/** The finding that a query's table or collection is not there, in place of any index advice for it. */
function missingFinding(name: string, catalog: Catalog, anchor: Anchor, severity: FindingSeverity): InlineFinding {
  return {
    code: DiagnosticCodes.doesNotExist,
    severity,
    anchor,
    message: `${notThere([name], catalog).replace(/\.$/, '')}: the query cannot run there as written, so no index is suggested for it.`,
  };
}

/** A document's schema: per collection name and per table name; `connection` names it in messages. */
export interface DocumentSchema {
  connection: { mongodb?: string; postgres?: string };
  collections: Map<string, MongoTarget>;
  tables: Map<string, PgTarget>;
  /** Plans of a background explain, by `planKey(engine, text)`. */
  plans: Map<string, PlanSummary>;
  /**
   * The extension's advice service's answers, by `planKey(engine, text)`: when one is here, it is the
   * verdict (the panel's), and the server's own rules only place it in the text.
   */
  advice: Map<string, Advice>;
}

/** The advice service's answer for a query, if the extension sent one. */
export function servedAdvice(q: FoundQuery, schema: DocumentSchema | undefined): Advice | undefined {
  if (!schema || schema.advice.size === 0) return undefined;
  const t = explainText(q);
  return t.ok ? schema.advice.get(planKey(q.engine, t.text)) : undefined;
}

export function planKey(engine: 'mongodb' | 'postgres', text: string): string {
  return `${engine}\u0000${text}`;
}

export interface QueryAnalysis {
  engine: 'mongodb' | 'postgres';
  targets: string[];
  findings: InlineFinding[];
  /** Markdown for the hover over the query. */
  hover: string;
  /** The first suggestion: an index to build, or the existing one to keep. */
  /** The first suggestion; `measured` is the server's verdict on it (the tournament's winner), when it was measured. */
  top?: { createText?: string; keep?: string; keys: string; rule: string; target: string; rewriteOnly?: boolean; measured?: string };
  /** Whether the findings used a schema from a connection. */
  connected: boolean;
  /**
   * Set when only the findings were computed (`findingsOnly`): their codes, places and messages are
   * final, but `top`, the hover, and what a finding offers as a code action (its suggestion, fix,
   * rewrite) are not there; analyzeQuery without the option computes them.
   */
  findingsOnly?: true;
}

/**
 * Advice is pure and depends only on the query's content and the schema: cached across documents. So are
 * the shapes the findings are read from, apart, since the findings are wanted before the advice.
 */
const adviceCache = new Map<string, Advice>();
const shapeCache = new Map<string, { shape?: MongoShape } | PgParsed>();
const CACHE_LIMIT = 4000;

/** A SQL text's shapes, or why it has none. */
interface PgParsed { shapes: PgShape[]; warnings?: string[]; refusal?: string }

function cached<T>(cache: Map<string, T>, key: string, make: () => T): T {
  const hit = cache.get(key);
  if (hit) return hit;
  const v = make();
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, v);
  return v;
}

/**
 * `repo` is the schema the repository's files declare: the indexes and keys of the collections and tables
 * the connection (when there is one) sent no list for. It changes the rules' advice (an index the repository
 * declares is kept, a declared primary key is never suggested) but makes no scan or sort findings: a
 * repository may not declare every index its database has.
 *
 * `findingsOnly`: without a connection's schema no finding's code, place or message depends on the advice
 * (the index to build, the keyset rewrite), which is most of a query's analysis; the language server
 * publishes a document's diagnostics from these and asks for the whole analysis when a hover, a lens or a
 * code action needs it. With a schema the findings name the index to build, so it is computed whole.
 */
export function analyzeQuery(q: FoundQuery, text: string, schema: DocumentSchema | undefined, repo?: RepositorySchema, options?: { findingsOnly?: boolean }): QueryAnalysis {
  const adviseToo = !options?.findingsOnly || schema !== undefined;
  const a = q.engine === 'mongodb' ? analyzeMongo(q, text, schema, repo, adviseToo) : analyzeSql(q, text, schema, repo, adviseToo);
  if (a.findingsOnly) return a;
  // What the finder could not read (a relation it does not join, a name chosen at run time) is said in the hover.
  if (q.warnings.length > 0) a.hover += `\n\n${q.warnings.map((w) => `_${w}_`).join('\n\n')}`;
  if (schema && schema.plans.size > 0) {
    const t = explainText(q);
    const plan = t.ok ? schema.plans.get(planKey(q.engine, t.text)) : undefined;
    if (plan) planFindings(q, a, plan, schema);
  }
  return a;
}

/**
 * The server's own plan (a background queryPlanner / plain EXPLAIN) replaces what the index lists
 * suggested: it is what the planner really chose, with the data as it is.
 */
function planFindings(q: FoundQuery, a: QueryAnalysis, plan: PlanSummary, schema: DocumentSchema): void {
  const connection = schema.connection[q.engine] ?? 'the connection';
  const fromIndexes = new Set<DiagnosticCode>([DiagnosticCodes.collectionScan, DiagnosticCodes.blockingSort, DiagnosticCodes.indexServes]);
  let suggestion = a.findings.find((f) => f.suggestion)?.suggestion ?? (a.top?.createText ? { createText: a.top.createText, target: a.top.target, keys: a.top.keys, rule: a.top.rule } : undefined);
  // An index with the suggested keys may exist already, unusable as the query is written (a $match
  // behind a rename): then the fix is the rewrite, not the index.
  const existing = q.engine === 'mongodb' && suggestion
    ? (schema.collections.get(q.command.collection)?.indexes ?? []).find((ix) => `{ ${Object.entries(ix.key).map(([f, d]) => `${f}: ${d}`).join(', ')} }` === suggestion!.keys)
    : undefined;
  if (existing) suggestion = undefined;
  // The same when the advice already said "keep using X" for the rewritten query only.
  const unusableName = existing?.name ?? (a.top?.keep && a.top.rewriteOnly ? a.top.keep : undefined);
  const unusable = unusableName ? ` The index ${unusableName} has the keys it needs, but the query as written cannot use it.` : '';
  a.findings = a.findings.filter((f) => !fromIndexes.has(f.code));
  const where: Anchor = { file: q.engine === 'mongodb' ? q.command.ranges.operation ?? q.range : q.range };
  const shape = plan.stages.join(' > ');
  const how = q.engine === 'mongodb' ? 'queryPlanner' : 'EXPLAIN';
  if (plan.fullScan !== undefined) {
    const f: InlineFinding = {
      code: DiagnosticCodes.planFullScan,
      severity: 'warning',
      anchor: where,
      message: q.engine === 'mongodb'
        ? `The plan ${connection} chose reads the whole ${plan.fullScan} collection (${shape}, ${how}).${suggestion ? ` ${suggestion.createText} would let it seek.` : unusable}`
        : `The plan ${connection} chose reads all of ${plan.fullScan} (${shape}, ${how}); on a small table that is the fastest way, on a large one an index should serve the filter.${suggestion ? ` ${suggestion.createText} would.` : ''}`,
    };
    if (suggestion) f.suggestion = suggestion;
    a.findings.push(f);
  }
  if (plan.blockingSort) {
    const f: InlineFinding = {
      code: DiagnosticCodes.planBlockingSort,
      severity: 'warning',
      anchor: where,
      message: `The plan ${connection} chose sorts in memory (${shape}, ${how}): every match is read and sorted before the first is returned.${suggestion ? ` ${suggestion.createText} would give the order.` : ''}`,
    };
    if (suggestion) f.suggestion = suggestion;
    a.findings.push(f);
  }
  if (plan.fullScan === undefined && !plan.blockingSort && plan.indexes.length > 0) {
    a.findings.push({
      code: DiagnosticCodes.planUsesIndex,
      severity: 'hint',
      anchor: where,
      keep: plan.indexes[0]!,
      message: `The plan ${connection} chose reads ${plan.indexes.join(', ')} and sorts nothing in memory (${shape}, ${how}).`,
    });
  }
  a.hover += `\n\nPlan on ${connection} (${how}): \`${shape}\``;
}

// ---- MongoDB ------------------------------------------------------------------------------------------

function analyzeMongo(q: FoundMongoQuery, text: string, schema: DocumentSchema | undefined, repo: RepositorySchema | undefined, adviseToo: boolean): QueryAnalysis {
  const cmd = q.command;
  const target = cmd.collection;
  const out: QueryAnalysis = { engine: 'mongodb', targets: [target], findings: [], hover: '', connected: false };
  if (target === '') {
    // The finder's warning says why: the collection's name is chosen at run time.
    out.targets = [];
    out.hover = `**MongoDB** \`${cmd.operation}\``;
    return out;
  }
  const input = fromMongoCommand(cmd);
  if (!input.ok) {
    out.hover = `**MongoDB** \`${target}.${cmd.operation}\`\n\n${input.refusal}`;
    return out;
  }
  const contentKey = JSON.stringify([input.query, cmd.skip]);
  const { shape } = cached(shapeCache, `m:${contentKey}`, () => {
    const shapeRead = mongoShape(input.query);
    return shapeRead.ok ? { shape: shapeRead.shape } : {};
  }) as { shape?: MongoShape };
  if (!adviseToo) {
    if (shape) mongoFindings(q, shape, text, undefined, out.findings);
    out.findingsOnly = true;
    return out;
  }
  const collectionSchema = schema?.collections.get(target);
  const declared = collectionSchema ? undefined : declaredMongoIndexes(repo, target);
  let advice = cached(adviceCache, `m:${contentKey}`, () => adviseMongo(input.query));
  const served = servedAdvice(q, schema);
  // What the connection's catalog says the collection is: one that is not there gets no index advice.
  const catalog = collectionSchema ? connectionCatalog(schema!.connection.mongodb ?? 'the connection', [target], schema!.collections) : undefined;
  const missing = catalog ? missingNames([target], catalog).length > 0 : false;
  const unindexable = missing || collectionSchema?.relation?.kind === 'view';
  if (served && collectionSchema) {
    advice = served;
    out.connected = true;
  } else if (collectionSchema) {
    advice = cached(adviceCache, `m:${contentKey}:${JSON.stringify(collectionSchema)}:${JSON.stringify(catalog ?? null)}`, () => adviseMongo(input.query, { existing: collectionSchema.indexes, ...(collectionSchema.stats ? { stats: collectionSchema.stats } : {}), ...(catalog ? { known: { catalog } } : {}) }));
    out.connected = true;
  } else if (declared && declared.length > 0) {
    advice = cached(adviceCache, `m:${contentKey}:repo:${JSON.stringify(declared)}`, () => adviseMongo(input.query, { existing: declared }));
  }
  const top = advice.suggestions[0];
  const suggestion = suggestionData(top, target);
  if (top) out.top = { ...(top.createText ? { createText: top.createText } : {}), ...(top.keep ? { keep: top.keep.name } : {}), ...(top.servesQueryAsWritten ? {} : { rewriteOnly: true }), ...measuredOf(top), keys: keysText(top), rule: top.rule, target };
  if (missing) out.findings.push(missingFinding(target, catalog!, { file: q.command.ranges.collection ?? q.command.ranges.operation ?? q.range }, 'warning'));
  if (shape) {
    mongoFindings(q, shape, text, advice, out.findings, suggestion);
    if (collectionSchema && !unindexable) connectedMongoFindings(q, shape, advice, collectionSchema, schema!.connection.mongodb ?? 'the connection', out.findings);
  }
  out.hover = mongoHover(q, advice, shape, collectionSchema ? schema!.connection.mongodb : undefined, declared ?? []);
  return out;
}

/**
 * The findings of a MongoDB query that hold whatever the indexes (a $match behind a $project, skip
 * paging, regexes, negations and long $in lists). `advice` gives what the code actions offer (the keyset
 * rewrite), `suggestion` the index to build; the codes, places and messages depend on neither.
 */
function mongoFindings(q: FoundMongoQuery, shape: MongoShape, text: string, advice: Advice | undefined, out: InlineFinding[], suggestion?: InlineFinding['suggestion']): void {
  hiddenMatchFindings(q, shape, text, out, suggestion);
  skipFindings(q, shape, text, out, advice);
  conditionFindings(q, shape, out);
}

/**
 * The indexes a collection has without a connection to ask: those the repository declares for it (or for
 * its family, `app_users*`), and GridFS's own on a bucket's files and chunks.
 */
function declaredMongoIndexes(repo: RepositorySchema | undefined, target: string): DeclaredMongoIndex[] | undefined {
  const listed = repo?.collections.get(target);
  const gridFs = gridFsIndexes(target).filter((ix) => !listed?.some((x) => JSON.stringify(x.key) === JSON.stringify(ix.key)));
  if (gridFs.length === 0) return listed;
  return [...(listed ?? []), ...gridFs.map((ix) => ({ ...ix, source: 'GridFS (the driver builds it on each bucket)' }))];
}

/** The measurement's sentence on a suggestion the server verified as the least work of those measured. */
function measuredOf(s: Suggestion): { measured?: string } {
  return s.verification.status === 'verified' && s.verification.method === 'sampled' ? { measured: s.verification.message } : {};
}

function suggestionData(s: Suggestion | undefined, target: string): InlineFinding['suggestion'] | undefined {
  if (!s || s.action !== 'create' || !s.createText) return undefined;
  return { createText: s.createText, target, keys: keysText(s), rule: s.rule };
}

function keysText(s: Suggestion): string {
  const ix = s.index;
  if (!ix) return '';
  if (ix.engine === 'mongodb') return `{ ${ix.keys.map((k) => `${k.field}: ${k.direction}`).join(', ')} }`;
  return `(${ix.keys.map((k) => `${k.column}${k.desc ? ' DESC' : ''}`).join(', ')})`;
}

function loc(q: FoundMongoQuery, path: string): Located | undefined {
  return q.locations[path];
}

/** The anchor when it lies in the query itself; else (a constant declared elsewhere) the operation name. */
function inQuery(q: FoundMongoQuery, a: Anchor): Anchor {
  if ('file' in a && a.file.start >= q.range.start && a.file.end <= q.range.end) return a;
  return { file: q.command.ranges.operation ?? q.range };
}

/** The part of the file a whole command part occupies, or the operation name when it is not written. */
function anchorOf(q: FoundMongoQuery, ...paths: string[]): Anchor {
  for (const p of paths) {
    const l = loc(q, p);
    if (l) return { file: l.key ?? l.member ?? l.value };
  }
  return { file: q.command.ranges.operation ?? q.range };
}

function hiddenMatchFindings(q: FoundMongoQuery, shape: MongoShape, text: string, out: InlineFinding[], suggestion: InlineFinding['suggestion']): void {
  const pipeline = q.command.pipeline ?? [];
  for (const hm of shape.hiddenMatches) {
    const renamed = Object.entries(hm.renames);
    if (renamed.length === 0) continue;
    const stageName = (i: number) => Object.keys(pipeline[i] ?? {})[0] ?? 'stage';
    const byStage = pipeline.findIndex((st, i) => i < hm.stageIndex && ['$project', '$addFields', '$set'].includes(Object.keys(st)[0]!));
    const what = renamed.map(([to, from]) => `${to} (renamed from ${from}${byStage >= 0 ? ` by ${stageName(byStage)}` : ''})`).join(', ');
    const first = renamed[0]![0];
    const finding: InlineFinding = {
      code: DiagnosticCodes.matchAfterRename,
      severity: 'warning',
      anchor: anchorOf(q, `pipeline/${hm.stageIndex}/$match/${escapeKey(first)}`, `pipeline/${hm.stageIndex}/$match`),
      message: `This $match filters on ${what}, so no index on the original path can serve it and the collection is scanned. Match on ${renamed.map(([, from]) => from).join(', ')} before the ${byStage >= 0 ? stageName(byStage) : 'stage that renames it'} instead (if the path runs through arrays, the renamed field is an array and the results can differ).`,
    };
    if (suggestion) finding.suggestion = suggestion;
    const fix = moveMatchFix(q, hm.stageIndex, hm.renames, hm.computed, text);
    if (fix) finding.fix = fix;
    out.push(finding);
  }
}

/** The pipeline array rewritten with the renamed part of the $match first, built from the user's own text. */
function moveMatchFix(q: FoundMongoQuery, stageIndex: number, renames: Record<string, string>, computed: string[], text: string): InlineFinding['fix'] | undefined {
  const pl = loc(q, 'pipeline');
  if (!pl || q.partial || q.variableParts.includes('pipeline')) return undefined;
  const arrayText = quote(text, pl.value.start, pl.value.end);
  if (!arrayText.startsWith('[') || !arrayText.endsWith(']')) return undefined;
  const stages = q.command.pipeline ?? [];
  const stageTexts: string[] = [];
  for (let i = 0; i < stages.length; i++) {
    const l = loc(q, `pipeline/${i}`);
    if (!l) return undefined;
    stageTexts.push(quote(text, l.value.start, l.value.end));
  }
  const match = stages[stageIndex]?.['$match'];
  if (typeof match !== 'object' || match === null) return undefined;
  const moved: string[] = [];
  const kept: string[] = [];
  for (const field of Object.keys(match)) {
    const l = loc(q, `pipeline/${stageIndex}/$match/${escapeKey(field)}`);
    if (!l?.member) return undefined;
    const cond = quote(text, l.value.start, l.value.end);
    if (field in renames) moved.push(`${JSON.stringify(renames[field]).replace(/^"|"$/g, "'")}: ${cond}`);
    else if (computed.includes(field) || field.startsWith('$')) kept.push(quote(text, l.member.start, l.member.end));
    else moved.push(quote(text, l.member.start, l.member.end));
  }
  if (moved.length === 0) return undefined;
  const out = [`{ $match: { ${moved.join(', ')} } }`];
  stageTexts.forEach((t, i) => {
    if (i !== stageIndex) out.push(t);
    else if (kept.length > 0) out.push(`{ $match: { ${kept.join(', ')} } }`);
  });
  const firstStage = loc(q, 'pipeline/0');
  const lead = firstStage ? quote(text, pl.value.start + 1, firstStage.value.start) : '';
  const multiline = lead.includes('\n');
  const indent = multiline ? lead.slice(lead.lastIndexOf('\n')) : ' ';
  const closing = multiline ? quote(text, loc(q, `pipeline/${stages.length - 1}`)!.value.end, pl.value.end - 1) : ' ';
  const newText = multiline ? `[${indent}${out.join(`,${indent}`)}${closing}]` : `[${out.join(', ')}]`;
  return { title: 'Move $match before $project', edits: [{ anchor: { file: pl.value }, newText }] };
}

function skipFindings(q: FoundMongoQuery, shape: MongoShape, text: string, out: InlineFinding[], advice: Advice | undefined): void {
  const cmd = q.command;
  const variable = q.variableParts.includes('skip');
  const pipeSkip = (cmd.pipeline ?? []).findIndex((st) => '$skip' in st);
  if (!(cmd.skip !== undefined && cmd.skip > 0) && !variable && pipeSkip < 0) return;
  const amount = cmd.skip !== undefined ? String(cmd.skip) : variable ? quote(text, cmd.ranges.skip!.start, cmd.ranges.skip!.end) : String((cmd.pipeline![pipeSkip] as { $skip: unknown }).$skip);
  const deep = variable || (cmd.skip ?? 0) >= DEEP_OFFSET;
  const keysetRewrite = advice?.rewrites.find((r) => r.rule === 'keyset');
  const f: InlineFinding = {
    code: DiagnosticCodes.skipPagination,
    severity: deep ? 'warning' : 'information',
    anchor: pipeSkip >= 0 && cmd.skip === undefined && !variable ? anchorOf(q, `pipeline/${pipeSkip}/$skip`) : anchorOf(q, 'skip'),
    message: `skip(${amount}) still reads the ${variable ? 'keys and documents it skips' : `${amount} keys or documents it skips`}, so every page costs more than the one before. Keyset pagination (a range on the sort key after the last page) reads only the page.`,
  };
  if (keysetRewrite) f.rewriteText = keysetRewrite.text;
  const fix = keysetFix(q, shape, text);
  if (fix) f.fix = fix;
  out.push(f);
}

/**
 * `.skip(n)` after a sort on one field, with the filter written as an object here: remove the skip and
 * add `field: { $gt: lastField }` to the filter. The code action declares `lastField` (a parameter of
 * the enclosing function, or a constant before the statement).
 */
function keysetFix(q: FoundMongoQuery, shape: MongoShape, text: string): InlineFinding['fix'] | undefined {
  const cmd = q.command;
  if (cmd.operation !== 'find' || shape.sort.length !== 1 || !cmd.ranges.skip) return undefined;
  const skipLoc = loc(q, 'skip');
  if (!skipLoc || skipLoc.member) return undefined; // given in an options document: not a chained call
  const { path, direction } = shape.sort[0]!;
  if (cmd.filter && path in cmd.filter) return undefined;
  // The `.skip(` before the argument and the `)` after it.
  const dot = text.lastIndexOf('.', cmd.ranges.skip.start);
  const close = text.indexOf(')', cmd.ranges.skip.end);
  if (dot < q.range.start || close < 0 || close >= q.range.end || !/^\.\s*skip\s*\($/.test(text.slice(dot, cmd.ranges.skip.start).replace(/\s+$/, ''))) return undefined;
  const name = `last${path.split(/[._]/).map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('').replace(/[^A-Za-z0-9$]/g, '')}`;
  const key = /^[A-Za-z_$][\w$]*$/.test(path) ? path : `'${path}'`;
  const cond = `${key}: { ${direction === 1 ? '$gt' : '$lt'}: ${name} }`;
  const edits: { anchor: Anchor; newText: string }[] = [];
  const fl = loc(q, 'filter');
  if (fl) {
    const ft = quote(text, fl.value.start, fl.value.end);
    if (!ft.startsWith('{') || !ft.endsWith('}') || fl.value.start < q.range.start || fl.value.end > q.range.end) return undefined;
    const inner = ft.slice(1, -1).trim();
    edits.push({ anchor: { file: fl.value }, newText: inner === '' ? `{ ${cond} }` : `{ ${inner.replace(/,$/, '')}, ${cond} }` });
  } else {
    // find() without a filter: put one in.
    const open = text.indexOf('(', cmd.ranges.operation!.end);
    if (open < 0 || text.slice(open + 1, open + 2) !== ')') return undefined;
    edits.push({ anchor: { file: { start: open + 1, end: open + 1 } }, newText: `{ ${cond} }` });
  }
  edits.push({ anchor: { file: { start: dot, end: close + 1 } }, newText: '' });
  return { title: `Rewrite to keyset pagination (after ${name})`, edits, declare: { name, offset: q.range.start, why: `the ${path} of the last document of the previous page` } };
}

/** Regexes, negations and long $in lists, found by walking the filter as written, with their positions. */
function conditionFindings(q: FoundMongoQuery, shape: MongoShape, out: InlineFinding[]): void {
  const roots: { doc: Record<string, unknown>; path: string }[] = [];
  const cmd = q.command;
  if (cmd.operation === 'aggregate') {
    (cmd.pipeline ?? []).forEach((st, i) => {
      const m = st['$match'];
      if (isDoc(m)) roots.push({ doc: m, path: `pipeline/${i}/$match` });
    });
  } else if (cmd.filter) roots.push({ doc: cmd.filter, path: 'filter' });
  const negations: Anchor[] = [];
  const sorts = effectiveSort(shape, shape.predicates).length > 0;
  const visit = (doc: Record<string, unknown>, path: string, prefix: string, depth: number) => {
    if (depth > 32) return;
    for (const [k, v] of Object.entries(doc)) {
      const p = `${path}/${escapeKey(k)}`;
      if (k === '$and' || k === '$or' || k === '$nor') {
        if (Array.isArray(v)) v.forEach((x, j) => isDoc(x) && visit(x, `${p}/${j}`, prefix, depth + 1));
        continue;
      }
      if (k.startsWith('$')) continue;
      const field = prefix === '' ? k : `${prefix}.${k}`;
      const re = regexOf(v);
      if (re) {
        regexFinding(field, re.pattern, re.options, { file: (loc(q, p)?.value) ?? q.range }, out);
        continue;
      }
      if (!isDoc(v)) continue;
      const keys = Object.keys(v);
      if (!keys.every((x) => x.startsWith('$'))) continue;
      if ('$elemMatch' in v && isDoc(v['$elemMatch'])) {
        const em = v['$elemMatch'];
        if (Object.keys(em).some((x) => !x.startsWith('$'))) visit(em, `${p}/$elemMatch`, field, depth + 1);
      }
      if ('$regex' in v) {
        const r = regexOf(v['$regex']);
        const pattern = r ? r.pattern : typeof v['$regex'] === 'string' ? v['$regex'] : undefined;
        const options = typeof v['$options'] === 'string' ? v['$options'] : r?.options ?? '';
        // new RegExp(variable, 'i'): the pattern is unknown but the flags are not.
        if (pattern !== undefined || options.includes('i')) regexFinding(field, pattern ?? '', options, loc(q, `${p}/$regex`) ? anchorOf(q, `${p}/$regex`) : { file: loc(q, p)?.value ?? q.range }, out);
      }
      for (const neg of ['$ne', '$nin']) if (neg in v) negations.push(anchorOf(q, `${p}/${neg}`, p));
      const list = v['$in'];
      if (Array.isArray(list) && list.length > MAX_SCANS_TO_EXPLODE && sorts) {
        out.push({
          code: DiagnosticCodes.inTooLargeForSort,
          severity: 'warning',
          anchor: anchorOf(q, `${p}/$in`, p),
          message: `This $in lists ${list.length} values, more than the ${MAX_SCANS_TO_EXPLODE} the planner explodes into one index scan per value merged in order, so the sort is done in memory (a blocking SORT) and the index must place ${field} like a range (after the sort fields).`,
        });
      }
    }
  };
  for (const r of roots) visit(r.doc, r.path, '', 0);
  const bounded = shape.predicates.some((p) => p.kind === 'equality' || p.kind === 'in' || (p.kind === 'range' && p.tight));
  if (!bounded && shape.orBranches.length === 0) {
    for (const a of negations) {
      out.push({
        code: DiagnosticCodes.leadingNegation,
        severity: 'warning',
        anchor: a,
        message: 'Nothing but $ne/$nin bounds this filter: an index on the field is read almost entirely (every value but the excluded ones), and without one the collection is scanned. Add an equality or a range on a selective field, or match the values you want instead of excluding some.',
      });
    }
  }
}

function regexFinding(field: string, pattern: string, options: string, anchor: Anchor, out: InlineFinding[]): void {
  const c = classifyRegex(pattern, options);
  if (c.detail === 'case-insensitive regex') {
    out.push({
      code: DiagnosticCodes.caseInsensitiveRegex,
      severity: 'warning',
      anchor,
      message: `A case-insensitive regex on ${field} gets no tight index bounds, even anchored: every key of an index on ${field} is checked. Store a lower-cased copy and match an anchored prefix on it, or use an index with a case-insensitive collation and an equality.`,
    });
  } else if (c.detail === 'unanchored regex' || c.detail === 'anchored regex without a literal prefix') {
    out.push({
      code: DiagnosticCodes.unanchoredRegex,
      severity: 'warning',
      anchor,
      message: `The regex on ${field} has no anchored literal prefix (^abc), so it cannot seek: every key of an index on ${field} is read, or every document without one. Anchor it if the values start with the text; for a search inside values use a text or Atlas Search index.`,
    });
  }
}

function connectedMongoFindings(q: FoundMongoQuery, shape: MongoShape, advice: Advice, target: MongoTarget, connection: string, out: InlineFinding[]): void {
  const top = advice.suggestions[0];
  const opAnchor: Anchor = { file: q.command.ranges.operation ?? q.range };
  if (top?.action === 'keep' && top.keep) {
    out.push({ code: DiagnosticCodes.indexServes, severity: 'hint', anchor: opAnchor, keep: top.keep.name, message: `Index ${top.keep.name} serves this query on ${connection}: ${top.keep.reason.replace(/^Keep using [^:]+: /, '')}` });
    return;
  }
  if (shape.orBranches.length > 0) return;
  const suggestion = suggestionData(advice.suggestions.find((s) => s.action === 'create'), q.command.collection);
  const arrays = new Set<string>();
  for (const ix of target.indexes) for (const paths of Object.values(ix.multikeyPaths ?? {})) for (const p of paths) arrays.add(p);
  const fits = target.indexes
    .filter((ix) => !ix.hidden && Object.values(ix.key).every((d) => typeof d === 'number'))
    .map((ix) => ({ ix, fit: fitIndex(Object.entries(ix.key).map(([field, d]) => ({ field, direction: (d as number) < 0 ? -1 : 1 as const })), shape, shape.predicates, { arrays }) }));
  const filtered = shape.predicates.some((p) => p.kind !== 'unindexable');
  const usable = fits.filter((f) => f.fit.usable && f.fit.pointFields.length + (f.fit.boundedRange ? 1 : 0) > 0);
  if (filtered && usable.length === 0) {
    const f: InlineFinding = {
      code: DiagnosticCodes.collectionScan,
      severity: 'warning',
      anchor: inQuery(q, anchorOf(q, 'filter', 'pipeline')),
      message: `No index on ${q.command.collection} supports this filter on ${connection}: the query reads the whole collection (COLLSCAN).${suggestion ? ` ${suggestion.createText} would serve it.` : ''}`,
    };
    if (suggestion) f.suggestion = suggestion;
    out.push(f);
  }
  const sort = effectiveSort(shape, shape.predicates);
  if (sort.length > 0 && !fits.some((f) => f.fit.usable && f.fit.sortServed)) {
    const f: InlineFinding = {
      code: DiagnosticCodes.blockingSort,
      severity: 'warning',
      anchor: inQuery(q, anchorOf(q, 'sort', 'pipeline')),
      message: `No index on ${q.command.collection} provides this order on ${connection}: the documents are sorted in memory (a blocking SORT, limited to 100 MB) before the first one is returned.${suggestion ? ` ${suggestion.createText} would give the order.` : ''}`,
    };
    if (suggestion) f.suggestion = suggestion;
    out.push(f);
  }
}

function mongoHover(q: FoundMongoQuery, advice: Advice, shape: MongoShape | undefined, connection: string | undefined, declared: Declared[]): string {
  const cmd = q.command;
  const lines: string[] = [`**MongoDB** \`${cmd.collection}.${cmd.operation}\``, ''];
  if (advice.refusal) return [...lines, advice.refusal].join('\n');
  const s = advice.shapes[0];
  if (s && (s.fields.length > 0 || s.sort.length > 0)) {
    lines.push('| field | classified as |', '|---|---|');
    for (const f of s.fields) lines.push(`| \`${f.path}\` | ${fieldClass(f)} |`);
    for (const o of s.sort) lines.push(`| \`${o.path}\` | sort ${o.direction === 1 ? 'ascending' : 'descending'} |`);
    lines.push('');
  }
  if (shape && (shape.limit !== undefined || shape.skip !== undefined)) lines.push(`${shape.skip !== undefined ? `skip ${shape.skip} ` : ''}${shape.limit !== undefined ? `limit ${shape.limit}` : ''}`.trim(), '');
  lines.push(...suggestionLines(advice, connection, declared));
  if (q.variableParts.length > 0 || cmd.hasPlaceholders) lines.push('', '_Values that are variables in the code are read as placeholders; their operators still count._');
  return lines.join('\n');
}

function fieldClass(f: { kind: string; detail: string; values?: number; explodes?: boolean }): string {
  switch (f.kind) {
    case 'equality':
      return `equality (${f.detail})`;
    case 'in':
      return f.explodes
        ? `${f.detail} of ${f.values ?? 'unknown'} values, exploded for the sort: counts as equality`
        : `${f.detail} of ${f.values ?? 'unknown'} values, over ${MAX_SCANS_TO_EXPLODE}: placed like a range`;
    case 'range':
      return `range (${f.detail})`;
    default:
      return `not indexable by a B-tree (${f.detail})`;
  }
}

/** An index the repository declares: its name and the file that declares it. */
type Declared = { name: string; source: string };

function suggestionLines(advice: Advice, connection: string | undefined, declared: Declared[] = []): string[] {
  const top = advice.suggestions[0];
  const lines: string[] = [];
  if (!top) {
    if (advice.notes.length > 0) lines.push(advice.notes[0]!);
    lines.push(...declaredLines(declared));
    return lines;
  }
  const keepSource = top.keep ? declared.find((d) => d.name === top.keep!.name)?.source : undefined;
  if (top.action === 'keep' && top.keep) {
    lines.push(`**Index ${top.keep.name} serves this query**${connection ? ` on ${connection}` : keepSource ? ` (declared in ${keepSource})` : ''}. ${top.keep.reason}`);
  } else if (top.action === 'create' && top.createText) {
    lines.push(`**Index it wants** (key order ${ruleName(top.rule)}): \`${keysText(top)}\``, '', '```', top.createText, '```');
  } else {
    lines.push(top.ruleText);
  }
  if (top.expectedPlan) lines.push('', `Expected plan: ${top.expectedPlan}`);
  if (top.action === 'create') lines.push('', top.ruleText);
  for (const c of top.conditions) lines.push('', `_${c.text}_`);
  lines.push('', `Verification: ${top.verification.status === 'not-run' ? 'not measured yet (Explain on a connection measures it; on MongoDB, Verify in the plan view)' : top.verification.message}`);
  lines.push(...declaredLines(declared));
  return lines;
}

/** Where the indexes used without a connection came from: "`orders_pkey` from db/schema.sql". */
function declaredLines(declared: Declared[]): string[] {
  if (declared.length === 0) return [];
  const shown = declared.slice(0, 8).map((d) => `\`${d.name}\` from ${d.source}`);
  const more = declared.length > shown.length ? `, and ${declared.length - shown.length} more` : '';
  return ['', `_Indexes the repository declares (no connection): ${shown.join(', ')}${more}._`];
}

function ruleName(rule: string): string {
  return ({ esr: 'equality, sort, range', ers: 'equality, range, sort', er: 'equality, range', 'explode-in': 'equality with the $in exploded, then sort', covered: 'equality, sort, range, covering the projection' } as Record<string, string>)[rule] ?? rule;
}

// ---- PostgreSQL ---------------------------------------------------------------------------------------

function analyzeSql(q: FoundSqlQuery, text: string, schema: DocumentSchema | undefined, repo: RepositorySchema | undefined, adviseToo: boolean): QueryAnalysis {
  const out: QueryAnalysis = { engine: 'postgres', targets: [], findings: [], hover: '', connected: false };
  // Names the finder wrote for ones chosen at run time take no index; they are part of what advice depends on.
  const standIns = q.standInNames?.length ? { standIns: q.standInNames } : {};
  const sqlKey = `${q.sql}\u0000${q.standInNames?.join(',') ?? ''}\u0000${q.otherDatabase?.module ?? ''}`;
  const parsed = cached(shapeCache, `p:${sqlKey}`, (): PgParsed => {
    const read = q.otherDatabase ? { ok: false as const, refusal: otherDatabaseProblem(q.otherDatabase) } : parsePostgresQuerySync(q.sql);
    return read.ok ? { shapes: read.shapes, ...(read.warnings ? { warnings: read.warnings } : {}) } : { shapes: [], refusal: read.refusal };
  }) as PgParsed;
  const shapes = parsed.shapes;
  out.targets = [...new Set(shapes.flatMap((s) => s.tables.map((t) => t.name)))];
  // What exists where the advice is given: the connection's catalog for the tables it sent, else the
  // repository's schema when it declares every table (repositoryCatalog). A table that is not there is
  // said so, in place of any index or scan finding on it; the same with findings alone.
  const looked = catalogTargets(q.sql, shapes.flatMap((s) => s.tables), q.standInNames ?? []);
  const tables = schema ? out.targets.filter((t) => schema.tables.has(t)) : [];
  const catalog = schema && tables.length > 0
    ? connectionCatalog(schema.connection.postgres ?? 'the connection', looked.map((t) => t.table).filter((t) => tables.includes(t)), schema.tables)
    : repo && looked.length > 0 ? repositoryCatalog(repo, 'postgres', looked) : undefined;
  const missing = catalog ? missingNames([...new Set(looked.map((t) => t.table))], catalog) : [];
  for (const name of missing) out.findings.push(missingFinding(name, catalog!, { sql: nameSpan(q.sql, name) }, schema && tables.length > 0 ? 'warning' : 'information'));
  const knownCatalog = catalog ? { catalog } : {};
  if (!adviseToo) {
    sqlFindings(q, text, shapes, undefined, undefined, out.findings);
    out.findingsOnly = true;
    return out;
  }
  let advice = cached(adviceCache, `p:${sqlKey}:${catalog && !(schema && tables.length > 0) ? JSON.stringify(catalog) : ''}`, (): Advice => parsed.refusal !== undefined
    ? { engine: 'postgres', shapes: [], suggestions: [], rewrites: [], notes: [], warnings: [], refusal: parsed.refusal }
    : advisePostgresShapes(shapes, { ...standIns, ...(catalog && !(schema && tables.length > 0) ? { known: { catalog } } : {}) }, parsed.warnings));
  // A connection's own list wins, table by table, over what the repository declares.
  const declaredTables = repo ? out.targets.filter((t) => !tables.includes(t) && repo.tables.has(t)) : [];
  const declared = declaredTables.flatMap((t) => repo!.tables.get(t)!);
  const known = declared.length > 0 ? { primaryKeys: Object.fromEntries(Object.entries(declaredPrimaryKeys(repo!)).filter(([t]) => declaredTables.includes(t))) } : undefined;
  const served = servedAdvice(q, schema);
  if (schema && tables.length > 0) {
    const existing = [...tables.flatMap((t) => schema.tables.get(t)!.indexes), ...declared];
    const stats = Object.fromEntries(tables.filter((t) => schema.tables.get(t)!.stats).map((t) => [t, schema.tables.get(t)!.stats!]));
    advice = served ?? cached(adviceCache, `p:${sqlKey}:${JSON.stringify([existing, stats, catalog ?? null])}`, () => advisePostgresShapes(shapes, { existing, stats: { tables: stats }, ...(known || catalog ? { known: { ...known, ...knownCatalog } } : {}), ...standIns }));
    out.connected = true;
  } else if (declared.length > 0) {
    advice = cached(adviceCache, `p:${sqlKey}:repo:${JSON.stringify([declared, catalog ?? null])}`, () => advisePostgresShapes(shapes, { existing: declared, known: { ...known!, ...knownCatalog }, ...standIns }));
  }
  const top = advice.suggestions[0];
  const topTarget = top?.index?.engine === 'postgres' ? top.index.table : out.targets[0] ?? '';
  const suggestion = suggestionData(top, topTarget);
  if (top) out.top = { ...(top.createText ? { createText: top.createText } : {}), ...(top.keep ? { keep: top.keep.name } : {}), ...(top.servesQueryAsWritten ? {} : { rewriteOnly: true }), ...measuredOf(top), keys: keysText(top), rule: top.rule, target: topTarget };
  sqlFindings(q, text, shapes, schema, advice, out.findings, suggestion);
  if (schema && tables.length > 0) connectedSqlFindings(q, shapes, advice, schema, out.findings, suggestion, new Set(missing));
  out.hover = sqlHover(advice, schema?.connection.postgres && tables.length > 0 ? schema.connection.postgres : undefined, declared);
  return out;
}

/**
 * The findings of a query's SQL that hold whatever the indexes (a function around a column, a leading
 * wildcard, OFFSET paging); with a schema, said of the table's own indexes. `advice` gives what the code
 * actions offer (the keyset rewrite); the codes, places and messages do not depend on it.
 */
function sqlFindings(q: FoundSqlQuery, text: string, shapes: PgShape[], schema: DocumentSchema | undefined, advice: Advice | undefined, out: InlineFinding[], suggestion?: InlineFinding['suggestion']): void {
  for (const shape of shapes) {
    for (const p of shape.predicates) {
      if (!p.span) continue;
      const anchor: Anchor = { sql: [p.span.start, p.span.end] };
      if (p.expression && p.kind !== 'gin') {
        // With the table's indexes: say which index the function hides, and say nothing when an
        // expression index on the same expression exists.
        const table = shape.tables.find((t) => t.key === p.table)?.name;
        const indexes = table && schema ? schema.tables.get(table)?.indexes ?? [] : [];
        const norm = (x: string) => x.replace(/\s+/g, '').replace(/^\((.*)\)$/, '$1').toLowerCase();
        const served = indexes.some((ix) => ix.columns[0]?.expression !== undefined && norm(ix.columns[0].expression) === norm(p.column));
        const hidden = indexes.find((ix) => ix.columns[0]?.column !== undefined && new RegExp(`\\b${ix.columns[0].column.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(p.column));
        if (!served) {
          const f: InlineFinding = {
            code: DiagnosticCodes.functionOnColumn,
            severity: 'warning',
            anchor,
            message: hidden
              ? `${p.column} wraps ${hidden.columns[0]!.column} in a function or cast, so the index ${hidden.name} on it cannot be used for this condition. Compare the bare column (move the function to the other side), or create an expression index on ${p.column}.`
              : `${p.column} wraps the column in a function or cast, so a plain index on the column cannot be used for this condition. Compare the bare column (move the function to the other side), or create an expression index on ${p.column}.`,
          };
          if (suggestion) f.suggestion = suggestion;
          out.push(f);
        }
      }
      if (/^I?LIKE '%/.test(p.detail) || /\bI?LIKE\s+(E?')[%_]/i.test(p.text)) {
        out.push({
          code: DiagnosticCodes.leadingWildcard,
          severity: 'warning',
          anchor,
          message: `${p.text.replace(/\s+/g, ' ')} starts with a wildcard, so a B-tree index on ${p.column} cannot seek it and every row (or every index entry) is read. Search a prefix, or index it with pg_trgm (CREATE INDEX ... USING gin (${p.column} gin_trgm_ops)).`,
        });
      }
    }
    if (shape.offset !== undefined || shape.offsetParam !== undefined) {
      const span = shape.clauses.offset;
      const amount = shape.offset !== undefined ? String(shape.offset) : shape.offsetParam!;
      const f: InlineFinding = {
        code: DiagnosticCodes.skipPagination,
        severity: shape.offsetParam !== undefined || (shape.offset ?? 0) >= DEEP_OFFSET ? 'warning' : 'information',
        anchor: span ? { sql: [span.start, span.end] } : { file: q.range },
        message: `OFFSET ${amount} still reads and throws away the rows it skips, so every page costs more than the one before. Keyset pagination (WHERE (sort key) > (last row's key)) reads only the page.`,
      };
      const keyset = advice?.rewrites.find((r) => r.rule === 'keyset');
      if (keyset) {
        f.rewriteText = keyset.text;
        const fix = sqlReplaceFix(q, text, keyset.text, 'Rewrite to keyset pagination');
        if (fix) f.fix = fix;
      }
      out.push(f);
    }
  }
}

/**
 * Replaces the whole SQL text when that is safe to write back: every character of it written as itself, in
 * one piece (no escapes, no `${...}`, no fragment chosen from several or pieces joined with +), and no
 * clash with the quotes.
 */
function sqlReplaceFix(q: FoundSqlQuery, text: string, sql: string, title: string): InlineFinding['fix'] | undefined {
  if (q.params.length > 0 || !writtenWhole(q)) return undefined;
  if (q.origin !== 'sql-file') {
    const quote = text[q.textRange.start - 1];
    if (quote === '`' ? /`|\$\{/.test(sql) : quote !== undefined && (sql.includes(quote) || sql.includes('\\') || sql.includes('\n'))) return undefined;
  }
  return { title, edits: [{ anchor: { file: q.textRange }, newText: sql }] };
}

/** Whether the SQL's runs are its file text character for character, each starting where the one before ends. */
function writtenWhole(q: FoundSqlQuery): boolean {
  const runs = [...q.runs].sort((a, b) => a[0] - b[0]);
  for (let i = 0; i < runs.length; i++) {
    const [s, f, l, fl] = runs[i]!;
    if (l !== fl) return false;
    const before = runs[i - 1];
    if (before && (s !== before[0] + before[2] || f !== before[1] + before[3])) return false;
  }
  return true;
}

/** Where a table's name is written in the statement (a word, any case), else the whole statement. */
function nameSpan(sql: string, name: string): [number, number] {
  const m = new RegExp(`(^|[^\\w$"])"?(${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})"?(?![\\w$])`, 'i').exec(sql);
  if (!m) return [0, sql.length];
  const start = m.index + m[1]!.length + (m[0].slice(m[1]!.length).startsWith('"') ? 1 : 0);
  return [start, start + name.length];
}

function connectedSqlFindings(q: FoundSqlQuery, shapes: PgShape[], advice: Advice, schema: DocumentSchema, out: InlineFinding[], suggestion: InlineFinding['suggestion'], missing: ReadonlySet<string> = new Set()): void {
  const connection = schema.connection.postgres ?? 'the connection';
  const top = advice.suggestions[0];
  const whole: Anchor = { sql: [0, q.sql.length] };
  if (top?.action === 'keep' && top.keep) {
    out.push({ code: DiagnosticCodes.indexServes, severity: 'hint', anchor: whole, keep: top.keep.name, message: `Index ${top.keep.name} serves this query on ${connection}: ${top.keep.reason.replace(/^Keep using [^:]+: /, '')}` });
    return;
  }
  for (const shape of shapes) {
    for (const t of shape.tables) {
      const info = schema.tables.get(t.name);
      // Not there, or a view (no index of its own): no scan or sort is said of it.
      if (!info || missing.has(t.name) || info.relation === null || info.relation?.kind === 'view') continue;
      const preds = shape.predicates.filter((p) => p.table === t.key && (p.kind === 'equality' || p.kind === 'in' || p.kind === 'range') && !p.expression);
      const indexes = info.indexes.filter((ix) => !ix.invalid && (ix.method ?? 'btree') === 'btree');
      const leading = (ix: ExistingPgIndex) => ix.columns[0]?.column;
      const usable = indexes.filter((ix) => preds.some((p) => p.column === leading(ix)));
      if (preds.length > 0 && usable.length === 0) {
        const first = preds[0]!;
        const f: InlineFinding = {
          code: DiagnosticCodes.collectionScan,
          severity: 'warning',
          anchor: first.span ? { sql: [first.span.start, first.span.end] } : whole,
          message: `No index on ${t.name} supports this filter on ${connection}: the table is read in full (a sequential scan), unless it is small.${suggestion && suggestion.target === t.name ? ` ${suggestion.createText} would serve it.` : ''}`,
        };
        if (suggestion) f.suggestion = suggestion;
        out.push(f);
      }
      const order = shape.orderBy.filter((o) => o.table === t.key || (o.table === undefined && shape.tables.length === 1));
      if (order.length > 0 && order.length === shape.orderBy.length) {
        const eq = new Set(shape.predicates.filter((p) => p.table === t.key && p.kind === 'equality').map((p) => p.column));
        const gives = indexes.some((ix) => {
          const cols = ix.columns.filter((c) => c.column !== undefined);
          let i = 0;
          while (i < cols.length && eq.has(cols[i]!.column!) && !order.some((o) => o.column === cols[i]!.column)) i++;
          const rel = order.map((o, k) => {
            const c = cols[i + k];
            if (!c || c.column !== o.column || o.expression) return 0;
            return (c.desc === true) === o.desc ? 1 : -1;
          });
          return rel.every((r) => r === 1) || rel.every((r) => r === -1);
        });
        if (!gives) {
          const span = shape.clauses.orderBy;
          const f: InlineFinding = {
            code: DiagnosticCodes.blockingSort,
            severity: shape.limit !== undefined ? 'warning' : 'information',
            anchor: span ? { sql: [span.start, span.end] } : whole,
            message: `No index on ${t.name} provides this order on ${connection}: every matching row is read and sorted before the first is returned${shape.limit !== undefined ? `, even for LIMIT ${shape.limit}` : ''}.${suggestion && suggestion.target === t.name ? ` ${suggestion.createText} would give the order.` : ''}`,
          };
          if (suggestion) f.suggestion = suggestion;
          out.push(f);
        }
      }
    }
  }
}

function sqlHover(advice: Advice, connection: string | undefined, declared: Declared[]): string {
  const lines: string[] = ['**PostgreSQL**', ''];
  if (advice.refusal) return [...lines, advice.refusal].join('\n');
  for (const s of advice.shapes) {
    if (s.fields.length === 0 && s.sort.length === 0) continue;
    lines.push(`Table \`${s.target}\``, '', '| column | classified as |', '|---|---|');
    for (const f of s.fields) lines.push(`| \`${f.path}\` | ${fieldClass(f)} |`);
    for (const o of s.sort) lines.push(`| \`${o.path}\` | ORDER BY ${o.direction === 1 ? 'ASC' : 'DESC'}${o.nullsFirst !== undefined ? (o.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST') : ''} |`);
    lines.push('');
  }
  lines.push(...suggestionLines(advice, connection, declared));
  return lines.join('\n');
}

// ---- helpers ------------------------------------------------------------------------------------------

/** A file range for an anchor of this query. */
export function anchorRange(q: FoundQuery, a: Anchor): SourceRange {
  if ('file' in a) return a.file;
  if (q.engine !== 'postgres') return q.range;
  return sqlRangeToSource(q, a.sql[0], a.sql[1]);
}

/**
 * The source text of [start, end) as a string of its own: messages and fixes that quote the source live
 * as long as their query's cached analysis, and a plain slice would keep the whole file's text of that
 * version alive with them (see `detached`).
 */
function quote(text: string, start: number, end: number): string {
  return detached(text.slice(start, end));
}

function isDoc(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function regexOf(v: unknown): { pattern: string; options: string } | undefined {
  if (!isDoc(v)) return undefined;
  const keys = Object.keys(v);
  if (typeof v['$regex'] === 'string' && keys.every((k) => k === '$regex' || k === '$options')) {
    return { pattern: v['$regex'], options: typeof v['$options'] === 'string' ? v['$options'] : '' };
  }
  return undefined;
}
