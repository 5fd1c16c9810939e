// The PostgreSQL index advisor. Per table of a parsed statement: a B-tree on the equality columns, then
// the ORDER BY columns (matching ASC/DESC and NULLS, or all reversed), then the range columns; the ERS
// alternative when a range may be selective; INCLUDE columns for an index-only scan; GIN for jsonb and
// array operators; an expression index when a function wraps the column; for joins, the filter columns
// then the join key on the probed side. Two rewrites are generated as text: `= ANY(...) ORDER BY ...
// LIMIT` as one LIMITed branch per value (PostgreSQL has no explode-for-sort), and OFFSET as keyset
// pagination. Existing indexes are looked at first, as for MongoDB.

import { distinctRanked } from './served';
import { possibleOnly, withExistingKeys, type KnownKeys } from './possible';
import { COLLSCAN_SHARE, SMALL_SORT } from './mongoAdvisor';
import { formatCount, formatShare } from '../format';
import { quoteIdent } from '../postgres/names';
import { parsePostgresQuery, parsePostgresQuerySync, type PgOrder, type PgPredicate, type PgShape } from './pgShape';
import type {
  Advice, AdviceRule, DecidingCondition, ExistingPgIndex, PgIndexKey, PgIndexSpec, PgStats, PgTableStats, Rewrite, ShapeSummary, Suggestion,
} from './types';

export interface PgAdviceOptions {
  existing?: ExistingPgIndex[];
  stats?: PgStats;
  /** Keys the repository's schema declares (no index is suggested that one of them already is). */
  known?: KnownKeys;
  /** Names the query was read with in place of ones its code chooses at run time (the finder's stand-ins): no index is suggested on them. */
  standIns?: readonly string[];
}

/** An OFFSET at least this deep reads more rows through an index than a typical table has pages. */
export const DEEP_OFFSET = 1000;
/** Up to this many literal values the rewrite is a UNION ALL; above, a LATERAL join over unnest(). */
const UNION_MAX_VALUES = 10;
const ERS_ADVANTAGE = 2;

interface PgCandidate {
  rule: AdviceRule;
  table: string;
  spec: PgIndexSpec;
  fit: PgFit;
  ruleText: string;
  expectedPlan: string;
  tradeOff: string;
  conditions: DecidingCondition[];
  rewrites: Rewrite[];
  servesAsWritten: boolean;
  rows?: number;
}

interface PgFit {
  points: string[];
  sortServed: boolean;
  boundedRange?: string;
  filtered: string[];
  missing: string[];
  indexOnly: boolean;
  usable: boolean;
}

/** Parses the SQL (loading the parser on first use) and advises. */
export async function advisePostgres(sql: string, options: PgAdviceOptions = {}): Promise<Advice> {
  const parsed = await parsePostgresQuery(sql);
  if (!parsed.ok) return refusal(parsed.refusal);
  return advisePostgresShapes(parsed.shapes, options, parsed.warnings);
}

/** Same as advisePostgres once the parser is loaded (loadSqlParser()), for synchronous callers. */
export function advisePostgresSync(sql: string, options: PgAdviceOptions = {}): Advice {
  const parsed = parsePostgresQuerySync(sql);
  if (!parsed.ok) return refusal(parsed.refusal);
  return advisePostgresShapes(parsed.shapes, options, parsed.warnings);
}

function refusal(text: string): Advice {
  return { engine: 'postgres', shapes: [], suggestions: [], rewrites: [], notes: [], warnings: [], refusal: text };
}

export function advisePostgresShapes(shapes: PgShape[], options: PgAdviceOptions = {}, warnings: string[] = []): Advice {
  const advice: Advice = { engine: 'postgres', shapes: [], suggestions: [], rewrites: [], notes: [], warnings: [...warnings] };
  const existing = (options.existing ?? []).filter((ix) => ix && typeof ix.name === 'string' && Array.isArray(ix.columns));
  const candidates: PgCandidate[] = [];
  const standIns = new Set((options.standIns ?? []).map((n) => n.toLowerCase()));
  for (const written of shapes) {
    const shape = standIns.size > 0 ? withoutStandIns(written, standIns, advice.notes) : written;
    advice.shapes.push(...summaries(shape));
    advice.notes.push(...shape.notes);
    advice.warnings.push(...shape.warnings);
    candidates.push(...shapeCandidates(shape, options.stats, advice.notes, existing));
  }
  const suggestions = candidates.map((c) => toSuggestion(c));
  applyExisting(suggestions, candidates, shapes, existing);
  advice.suggestions = distinctRanked(openTablesFirst(suggestions));
  for (const c of candidates) for (const r of c.rewrites) if (!advice.rewrites.some((x) => x.text === r.text)) advice.rewrites.push(r);
  advice.notes = [...new Set(advice.notes)];
  const tables = new Set(advice.suggestions.filter((s) => s.action === 'create' && s.index?.engine === 'postgres').map((s) => (s.index as PgIndexSpec).table));
  if (existing.length > 0 && tables.size > 0) {
    advice.writeCost = [...tables].map((t) => writeCostText(t, existing.filter((ix) => ix.table === t).length)).join(' ');
  }
  return possibleOnly(advice, shapes[0]?.sql, withExistingKeys(options.known, existing), options.standIns);
}

/**
 * The shape without the columns the finder wrote in place of ones chosen at run time: their conditions
 * are left out, the order is kept up to its first such column, and covering lists do not name them, so
 * the index suggested serves what the query is known to ask.
 */
function withoutStandIns(shape: PgShape, standIns: ReadonlySet<string>, notes: string[]): PgShape {
  const isStandIn = (column: string, expression?: boolean) => !expression && standIns.has(column.toLowerCase());
  const predicates = shape.predicates.filter((p) => !isStandIn(p.column, p.expression));
  const cut = shape.orderBy.findIndex((o) => isStandIn(o.column, o.expression));
  const orderBy = cut < 0 ? shape.orderBy : shape.orderBy.slice(0, cut);
  const left = [...new Set([...shape.predicates.filter((p) => !predicates.includes(p)), ...shape.orderBy.slice(orderBy.length)].map((x) => x.column))];
  if (left.length === 0) return shape;
  notes.push(`${left.join(', ')} ${left.length === 1 ? 'stands' : 'stand'} in for a column the code chooses at run time: the suggestions leave ${left.length === 1 ? 'it' : 'them'} out.`);
  const referenced = Object.fromEntries(Object.entries(shape.referenced).map(([k, cols]) => [k, cols.filter((c) => !isStandIn(c))]));
  return { ...shape, predicates, orderBy, referenced };
}

// ---- candidates per shape -----------------------------------------------------------------------------

function shapeCandidates(shape: PgShape, stats: PgStats | undefined, notes: string[], existing: ExistingPgIndex[]): PgCandidate[] {
  const semi: PgCandidate[] = [];
  const driving: PgCandidate[] = [];
  const others: PgCandidate[] = [];
  const orderTables = new Set(shape.orderBy.map((o) => o.table));
  const sortTable = shape.orderBy.length > 0 && orderTables.size === 1 && !orderTables.has(undefined) ? [...orderTables][0] : undefined;
  const drivingKey = sortTable ?? shape.tables.find((t) => t.role === 'from' || t.role === 'target')?.key;
  const single = shape.tables.length === 1;

  // The many side of a many-to-one join (`o.customer_id = c.id`, or a subquery's `i.order_id = o.id`)
  // is probed once per row of the one side; the one side's probes are served by its key. When the one
  // side has filters of its own it can drive, and the index that pays is the many side's filters then
  // its join column: that candidate leads, unless the many side's own ORDER BY ... LIMIT can stop a walk
  // in order early (then it follows the walk's index: which wins depends on how selective the one
  // side's filter is, which only the data can say).
  const lead: PgCandidate[] = [];
  const filteredKeys = new Set(shape.predicates.filter((p) => p.kind !== 'unindexable').map((p) => p.table));
  const manySide = (key: string): boolean => {
    const js = shape.joins.filter((j) => j.table === key && j.kind !== 'outer' && j.kind !== 'anti');
    return js.length > 0 && js.every((j) => j.column !== 'id' && j.otherColumn === 'id' && filteredKeys.has(j.otherTable));
  };
  for (const table of shape.tables) {
    const preds = shape.predicates.filter((p) => p.table === table.key);
    const joins = shape.joins.filter((j) => j.table === table.key);
    const isDriving = table.key === drivingKey;
    if (!single && manySide(table.key) && table.role !== 'anti') {
      const c = joinCandidate(shape, table.key, table.name, table.schema, preds, joins, table.role === 'semi' ? 'semi-join' : 'join-key');
      if (c) (table.key === sortTable && shape.limit !== undefined ? others : lead).push(c);
      if (!isDriving) continue;
    }
    const order = table.key === sortTable ? shape.orderBy : [];
    const tstats = stats?.tables?.[table.name] ?? stats?.tables?.[table.key];
    if (preds.length === 0 && order.length === 0 && joins.length === 0) continue;
    if (table.role === 'semi' || table.role === 'anti') {
      const c = joinCandidate(shape, table.key, table.name, table.schema, preds, joins, 'semi-join');
      if (c) (preds.some((p) => p.kind === 'equality' || p.kind === 'in') ? semi : others).push(c);
      continue;
    }
    if (!isDriving && !single) {
      const c = joinCandidate(shape, table.key, table.name, table.schema, preds, joins, 'join-key');
      if (c) others.push(c);
      continue;
    }
    driving.push(...tableCandidates(shape, table.key, table.name, table.schema, preds, order, tstats, notes, single, existing.filter((ix) => ix.table === table.name)));
  }
  // A filtered subquery side first: its index serves every join strategy. The driving table's order index
  // helps only when the rows that pass the semi-join are spread evenly along the order.
  if (semi.length > 0 && driving.length > 0 && shape.limit !== undefined && shape.orderBy.length > 0) {
    const d = driving[0]!;
    const s = semi[0]!;
    d.conditions.push({
      quantity: `rows of ${d.table} read in ${orderText(shape.orderBy)} order before ${shape.limit} of them pass the subquery on ${s.table}`,
      formula: `${shape.limit} ÷ the share of ${d.table} rows that have a match in ${s.table}`,
      below: `${specText(d.spec)}: walk ${d.table} in order and probe ${s.table} per row`,
      above: `only ${specText(s.spec)}: a hash semi-join and a top-${shape.limit} sort`,
      text: `${specText(d.spec)} pays only if rows with a match in ${s.table} are spread evenly along ${orderText(shape.orderBy)}: the walk reads about ${shape.limit} ÷ (their share) rows and probes ${s.table} for each. If matches cluster elsewhere in the order (old rows, a rare value), the walk reads far more, and a hash semi-join over ${s.table}'s index plus a top-${shape.limit} sort is cheaper; with both indexes the planner may still choose the walk, so check with EXPLAIN ANALYZE.`,
    });
    d.tradeOff += ` Its benefit depends on how the subquery's matches are spread (see the condition).`;
    return [...lead, ...semi, ...driving, ...others];
  }
  return [...lead, ...driving, ...semi, ...others];
}

function isOrderable(p: PgPredicate): boolean {
  return p.kind === 'equality' || p.kind === 'in' || p.kind === 'range';
}

function keyOf(p: PgPredicate | PgOrder, desc = false, nullsFirst?: boolean): PgIndexKey {
  const k: PgIndexKey = { column: p.column };
  if (p.expression) k.expression = true;
  if (desc) k.desc = true;
  if (nullsFirst !== undefined && nullsFirst !== desc) k.nullsFirst = nullsFirst;
  return k;
}

function spec(table: string, schema: string | undefined, keys: PgIndexKey[], include?: string[]): PgIndexSpec {
  const s: PgIndexSpec = { engine: 'postgres', table, method: 'btree', keys };
  if (schema !== undefined) s.schema = schema;
  if (include && include.length > 0) s.include = include;
  return s;
}

function dedupe(keys: PgIndexKey[]): PgIndexKey[] {
  const seen = new Set<string>();
  return keys.filter((k) => (seen.has(k.column) ? false : (seen.add(k.column), true)));
}

function joinCandidate(shape: PgShape, key: string, name: string, schema: string | undefined, preds: PgPredicate[], joins: PgShape['joins'], rule: AdviceRule): PgCandidate | undefined {
  const eq = preds.filter((p) => p.kind === 'equality' || p.kind === 'in');
  const ranges = preds.filter((p) => p.kind === 'range');
  const joinCols = [...new Set(joins.map((j) => j.column))];
  const keys = dedupe([...eq.map((p) => keyOf(p)), ...joinCols.map((c) => ({ column: c })), ...ranges.map((p) => keyOf(p))]);
  if (keys.length === 0) return undefined;
  const s = spec(name, schema, keys);
  const covered = new Set([...preds.map((p) => p.column), ...joinCols]);
  const refs = shape.referenced[key] ?? [];
  const indexOnly = !shape.selectAll.includes(key) && [...covered, ...(rule === 'semi-join' ? [] : refs)].every((c) => keys.some((k) => k.column === c));
  const fit: PgFit = { points: eq.map((p) => p.column), sortServed: true, filtered: [], missing: [], indexOnly, usable: true };
  const scan = indexOnly ? 'Index Only Scan' : 'Index Scan';
  const eqText = eq.length > 0 ? `the filter${eq.length > 1 ? 's' : ''} ${eq.map((p) => p.text).join(' AND ')}, then ` : '';
  return {
    rule,
    table: name,
    spec: s,
    fit,
    ruleText: rule === 'semi-join'
      ? `The subquery side of the ${joins[0]?.kind === 'anti' ? 'anti' : 'semi'}-join: ${eqText}the join key ${joinCols.join(', ')}, so ${name} is read from the index alone whether the planner hashes it or probes it per outer row.`
      : `The inner side of the join: ${eqText}the join key ${joinCols.join(', ')}, so each probe is one index search.`,
    expectedPlan: `${scan} using the new index on ${name} (${eq.map((p) => p.text).join(' AND ') || joinCols.join(', ')}), feeding a hash ${rule === 'semi-join' ? 'semi-' : ''}join or probed once per outer row in a nested loop`,
    tradeOff: 'One more index to maintain on writes to this table.',
    conditions: [],
    rewrites: [],
    servesAsWritten: true,
  };
}

function tableCandidates(shape: PgShape, key: string, name: string, schema: string | undefined, preds: PgPredicate[], order: PgOrder[],
  stats: PgTableStats | undefined, notes: string[], single: boolean, existing: ExistingPgIndex[]): PgCandidate[] {
  const out: PgCandidate[] = [];
  const sortCols = new Set(order.map((o) => o.column));
  const eq = preds.filter((p) => p.kind === 'equality' && !sortCols.has(p.column));
  const ins = preds.filter((p) => p.kind === 'in');
  // Sort columns pinned by an equality are constant: they drop out of the order the index must give.
  const constant = new Set(preds.filter((p) => p.kind === 'equality').map((p) => p.column));
  const sort = order.filter((o) => !constant.has(o.column));
  const insAsEq = sort.length === 0 ? ins : [];
  const insAsRange = sort.length === 0 ? [] : ins.filter((p) => !sortCols.has(p.column));
  const ranges = preds.filter((p) => p.kind === 'range' && !sortCols.has(p.column));
  const R = [...insAsRange, ...orderRanges(ranges, stats)];
  const E = reuseOrder([...eq, ...insAsEq], existing);
  const gin = preds.filter((p) => p.kind === 'gin');
  const sKeys = sort.map((o) => keyOf(o, o.desc, o.nullsFirst));
  const keys = dedupe([...E.map((p) => keyOf(p)), ...sKeys, ...R.map((p) => keyOf(p))]);
  for (const p of preds.filter((x) => x.kind === 'unindexable')) notes.push(`Not usable by a B-tree, checked on each row: ${p.text} (${p.detail}).`);

  if (keys.length > 0) {
    const fitOf = (k: PgIndexKey[], include: string[] = []) => pgFit(k, include, shape, key, preds, sort);
    const esrFit = fitOf(keys);
    let rule: AdviceRule = sort.length > 0 ? 'esr' : R.length > 0 ? 'er' : 'esr';
    if (keys.some((k) => k.expression)) rule = 'expression';
    const esr: PgCandidate = {
      rule,
      table: name,
      spec: spec(name, schema, keys),
      fit: esrFit,
      ruleText: esrText(E, sort, R, keys),
      expectedPlan: planText(shape, name, esrFit, sort.length > 0),
      tradeOff: esrTradeOff(sort, R, preds),
      conditions: [],
      rewrites: [],
      servesAsWritten: true,
    };

    let ers: PgCandidate | undefined;
    const realRanges = R.filter((p) => p.kind === 'range');
    if (sort.length > 0 && realRanges.length > 0) {
      const first = realRanges[0]!;
      const ersKeys = dedupe([...E.map((p) => keyOf(p)), keyOf(first), ...sKeys, ...R.filter((p) => p !== first).map((p) => keyOf(p))]);
      const ersFit = fitOf(ersKeys);
      ers = {
        rule: 'ers',
        table: name,
        spec: spec(name, schema, ersKeys),
        fit: ersFit,
        ruleText: `Equality, then the range ${first.text}, then the ORDER BY: reads only the rows inside the range and sorts them.`,
        expectedPlan: planText(shape, name, ersFit, true),
        tradeOff: 'A Sort node over every row in the range: cheap for a handful (top-N heapsort in memory), costly for many; nothing is returned before the range is read.',
        conditions: [],
        rewrites: [],
        servesAsWritten: true,
      };
      const cond = ersCondition(esr, ers, E, first, shape, stats);
      esr.conditions.push(cond);
      ers.conditions.push(cond);
    }

    // Index-only: the other columns the query reads as INCLUDE, when there are few of them.
    let included: PgCandidate | undefined;
    if (!esrFit.indexOnly && !shape.selectAll.includes(key) && shape.statement === 'select') {
      const refs = shape.referenced[key] ?? [];
      const extra = refs.filter((c) => !keys.some((k) => k.column === c));
      if (extra.length > 0 && extra.length <= 3) {
        const fit = fitOf(keys, extra);
        included = {
          rule: 'index-only',
          table: name,
          spec: spec(name, schema, keys, extra),
          fit,
          ruleText: `The same keys with INCLUDE (${extra.join(', ')}): every column the query reads is in the index, so an Index Only Scan skips the table (Heap Fetches stay near 0 while the visibility map is current).`,
          expectedPlan: planText(shape, name, fit, sort.length > 0),
          tradeOff: 'A wider index: more to write and cache, and the gain needs VACUUM to keep the visibility map current.',
          conditions: [],
          rewrites: [],
          servesAsWritten: true,
        };
      }
    }

    // = ANY before the ORDER BY: PostgreSQL merges nothing, so offer the per-value rewrite.
    let union: PgCandidate | undefined;
    const anyPred = insAsRange.length === 1 ? insAsRange[0]! : undefined;
    if (anyPred && shape.limit !== undefined && single && shape.offset === undefined) {
      const rw = unionRewrite(shape, anyPred);
      if (rw) {
        const uKeys = dedupe([...E.map((p) => keyOf(p)), keyOf(anyPred), ...sKeys, ...R.filter((p) => p !== anyPred).map((p) => keyOf(p))]);
        union = {
          rule: 'union-all',
          table: name,
          spec: spec(name, schema, uKeys),
          fit: fitOf(uKeys),
          ruleText: `PostgreSQL does not merge one ordered scan per value of ${anyPred.text} the way MongoDB's SORT_MERGE does, so an index on (${uKeys.map((k) => k.column).join(', ')}) still sorts; rewritten as one LIMITed branch per value, each branch reads at most ${shape.limit} rows in order and a Merge Append combines them.`,
          expectedPlan: `Limit > Merge Append > one Limit > Index Scan per value on ${name}; no Sort`,
          tradeOff: `Reads at most ${anyPred.values !== undefined ? `${anyPred.values} × ${shape.limit}` : `${shape.limit} per value`} rows whatever the data, but only after the query text is changed.`,
          conditions: [],
          rewrites: [rw],
          servesAsWritten: false,
        };
        esr.ruleText += ` The ${anyPred.detail} list on ${anyPred.column} is placed after the ORDER BY columns: the index walks ${orderText(sort)} and checks ${anyPred.column} inside the index.`;
        esr.conditions.push({
          quantity: `share of ${name} rows matching ${anyPred.text}`,
          formula: `about ${shape.limit} ÷ that share rows read`,
          below: `the rewrite with ${specText(union.spec)}`,
          above: `${specText(esr.spec)} for the query as written`,
          text: `As written, walking ${orderText(sort)} reads about ${shape.limit} ÷ (the share of rows matching ${anyPred.text}) index entries: fine when the values are common, slow when they are rare; the rewrite reads at most ${shape.limit} per value either way.`,
        });
      }
    }

    // OFFSET: keyset pagination reads only the page.
    if ((shape.offset !== undefined || shape.offsetParam !== undefined) && sort.length > 0) {
      const rw = keysetRewrite(shape, order);
      if (rw) esr.rewrites.push(rw);
      const deep = offsetDecision(shape, stats);
      esr.conditions.push(deep.condition);
      if (deep.asWritten === false && rw) {
        esr.servesAsWritten = false;
        esr.ruleText = `With keyset pagination: ${esr.ruleText}`;
        esr.tradeOff = `As written, OFFSET ${shape.offset ?? 0} makes any index read ${(shape.offset ?? 0) + (shape.limit ?? 0)} rows in order and throw ${shape.offset ?? 0} away: past about the table's page count a sequential scan and a top-N sort read less. With the keyset rewrite the same index reads only the page.`;
      }
    }

    // Ranking, with statistics when given. The walk in order as written reads about LIMIT ÷ share rows,
    // the rewrite at most LIMIT per value: the rewrite leads only when the counts say the values are
    // rare (share under 1 ÷ the number of values). Without counts the query as written leads, since it
    // needs no change to the code, and the condition says when to rewrite.
    const ranked: PgCandidate[] = [esr];
    if (union) {
      const cond = esr.conditions.find((c) => c.below.startsWith('the rewrite'));
      const base = E.length > 0 ? stats?.equality : stats?.rows;
      const values = anyPred?.values;
      if (cond && stats?.result !== undefined && base !== undefined && base > 0 && values !== undefined && values > 0) {
        const share = stats.result / base;
        cond.observed = Math.round((shape.limit ?? 0) / Math.max(share, 1e-9));
        cond.decided = share < 1 / values ? 'below' : 'above';
      }
      if (cond?.decided === 'below') ranked.unshift(union);
      else ranked.push(union);
    }
    if (ers) {
      if (ers.conditions[0]?.decided === 'below') ranked.unshift(ers);
      else ranked.push(ers);
    }
    if (included) ranked.splice(ranked.indexOf(esr) + 1, 0, included);
    const scan = seqScanCondition(esr, shape, preds, stats, name, sort.length > 0);
    if (scan) {
      esr.conditions.push(scan);
      if (scan.decided === 'above') {
        ranked.unshift({
          rule: 'collection-scan',
          table: name,
          spec: esr.spec,
          fit: esrFit,
          ruleText: `About ${formatCount(scan.observed!)} of ${formatCount(Math.round(stats!.rows!))} rows match: reading them through an index visits more pages than a sequential scan of ${name}.`,
          expectedPlan: `Seq Scan on ${name}`,
          tradeOff: 'No index to build or maintain; each run reads the whole table.',
          conditions: [scan],
          rewrites: [],
          servesAsWritten: true,
        });
      }
    }
    out.push(...ranked);
  }

  // Equality columns a GIN can hold beside a jsonb, array or text column, through btree_gin's B-tree
  // operator classes for GIN (= only: a GIN scan does not walk an IN list).
  const ginScalars = eq.filter((p) => !p.expression && !p.trigram).map((p) => ({ column: p.column }));
  for (const p of gin) {
    if (p.expression || ginScalars.length === 0) continue;
    const pathOps = gin.every((g) => g.column === p.column && g.operator === '@>');
    const keysG = dedupe([...ginScalars, { column: p.column }]);
    const s: PgIndexSpec = { engine: 'postgres', table: name, method: 'gin', keys: keysG };
    if (pathOps) s.opclass = 'jsonb_path_ops';
    if (schema !== undefined) s.schema = schema;
    const cols = ginScalars.map((k) => k.column).join(', ');
    out.push({
      rule: 'gin',
      table: name,
      spec: s,
      fit: { points: ginScalars.map((k) => k.column), sortServed: order.length === 0, filtered: [], missing: [], indexOnly: false, usable: true },
      ruleText: `One GIN over ${cols} and ${p.column} applies ${eq.filter((x) => ginScalars.some((k) => k.column === x.column)).map((x) => x.text).join(' AND ')} and ${p.text} in one Bitmap Index Scan: a B-tree on ${cols} reads every row that matches ${ginScalars.length > 1 ? 'them' : 'it'} and checks ${p.column} on each, and a GIN on ${p.column} alone reads every row holding the value. ${cols} ${ginScalars.length > 1 ? 'go' : 'goes'} into the GIN through the btree_gin extension.`,
      expectedPlan: `Bitmap Heap Scan on ${name} > Bitmap Index Scan on the GIN index (${cols} and ${p.column} both as index conditions)`,
      tradeOff: `Needs the btree_gin extension: ${enableExtensions(['btree_gin'])} GIN is slower to update than a B-tree and serves no ORDER BY.`,
      conditions: [],
      rewrites: [],
      servesAsWritten: true,
    });
  }

  // A pattern a B-tree cannot seek (a leading wildcard, ILIKE, a regular expression): no B-tree on the
  // column is suggested, since none would be used for it. A trigram GIN (pg_trgm) finds the rows that hold
  // the pattern's trigrams, and the equality columns go into the same GIN through btree_gin.
  for (const p of preds.filter((x) => x.trigram && !x.expression)) {
    const scalars = ginScalars.filter((k) => k.column !== p.column);
    const s: PgIndexSpec = { engine: 'postgres', table: name, method: 'gin', keys: [...scalars, { column: p.column }], opclass: 'gin_trgm_ops' };
    if (schema !== undefined) s.schema = schema;
    const needs = scalars.length > 0 ? ['pg_trgm', 'btree_gin'] : ['pg_trgm'];
    const cols = scalars.map((k) => k.column).join(', ');
    const c: PgCandidate = {
      rule: 'gin',
      table: name,
      spec: s,
      fit: { points: scalars.map((k) => k.column), sortServed: sort.length === 0, filtered: [], missing: [], indexOnly: false, usable: true },
      ruleText: `${p.text} ${patternWhy(p)}, so no B-tree on ${p.column} can serve it: a B-tree seeks by the start of the value, in its exact case. A trigram GIN (pg_trgm's gin_trgm_ops) finds the rows that hold the pattern's three-letter pieces${scalars.length > 0 ? `, and ${cols} ${scalars.length > 1 ? 'go' : 'goes'} into the same GIN through btree_gin, so one Bitmap Index Scan applies both` : ''}.`,
      expectedPlan: `Bitmap Heap Scan on ${name} (Recheck Cond) > Bitmap Index Scan on the trigram GIN index`,
      tradeOff: `Needs ${needs.join(' and ')}: ${enableExtensions(needs)} A pattern with fewer than three characters between its wildcards has no trigram to look up and reads the whole index; GIN is slower to update than a B-tree.`,
      conditions: [],
      rewrites: [],
      servesAsWritten: true,
    };
    if (keys.length === 0 || sort.length === 0) out.unshift(c);
    else out.push(c);
  }

  for (const p of gin) {
    const pathOps = gin.every((g) => g.column === p.column && g.operator === '@>');
    const s: PgIndexSpec = { engine: 'postgres', table: name, method: 'gin', keys: [keyOf(p)] };
    if (schema !== undefined) s.schema = schema;
    const c: PgCandidate = {
      rule: 'gin',
      table: name,
      spec: s,
      fit: { points: [], sortServed: order.length === 0, filtered: [], missing: [], indexOnly: false, usable: true },
      ruleText: `${p.text} uses the ${p.operator} operator, which a B-tree cannot serve: a GIN index on ${p.column} can (for jsonb and arrays).`,
      expectedPlan: `Bitmap Heap Scan on ${name} > Bitmap Index Scan on the GIN index`,
      tradeOff: `GIN indexes are slower to update than B-trees (pending-list flushes).${pathOps ? ' For jsonb queried only with @>, the jsonb_path_ops operator class is smaller and faster.' : ''}`,
      conditions: [],
      rewrites: [],
      servesAsWritten: true,
    };
    if (!out.some((o) => o.spec.method === 'gin' && o.spec.keys[0]!.column === p.column)) {
      if (E.length === 0) out.unshift(c);
      else out.push(c);
    }
  }
  return out;
}

/** Equality columns in any order read the same rows: start with those an existing index starts with. */
function reuseOrder(E: PgPredicate[], existing: ExistingPgIndex[]): PgPredicate[] {
  let lead: string[] = [];
  for (const ix of existing) {
    if (ix.predicate || (ix.method ?? 'btree') !== 'btree') continue;
    const prefix: string[] = [];
    for (const c of ix.columns) {
      const name = c.column ?? c.expression;
      if (name === undefined || !E.some((p) => p.column === name && p.kind === 'equality')) break;
      prefix.push(name);
    }
    if (prefix.length > lead.length) lead = prefix;
  }
  return [...lead.map((c) => E.find((p) => p.column === c)!), ...E.filter((p) => !lead.includes(p.column))];
}

function orderRanges(ranges: PgPredicate[], stats: PgTableStats | undefined): PgPredicate[] {
  const rows = stats?.rows;
  const sel = (p: PgPredicate): number | undefined => (rows && stats?.matching?.[p.column] !== undefined ? stats.matching[p.column]! / rows : undefined);
  return ranges.map((p, i) => ({ p, i, s: sel(p) })).sort((a, b) => {
    if (a.s !== undefined && b.s !== undefined && a.s !== b.s) return a.s - b.s;
    const ta = a.p.detail === 'LIKE prefix' || ['<', '>', '<=', '>=', 'BETWEEN'].includes(a.p.detail) ? 0 : 1;
    const tb = b.p.detail === 'LIKE prefix' || ['<', '>', '<=', '>=', 'BETWEEN'].includes(b.p.detail) ? 0 : 1;
    return ta - tb || a.i - b.i;
  }).map((x) => x.p);
}

// ---- fit ----------------------------------------------------------------------------------------------

/** How index keys serve the table's predicates and order (PostgreSQL 15 B-tree; no skip scan). */
function pgFit(keys: readonly PgIndexKey[], include: readonly string[], shape: PgShape, tableKey: string, preds: readonly PgPredicate[], sort: readonly PgOrder[]): PgFit {
  const byCol = new Map(preds.map((p) => [p.column, p]));
  const fit: PgFit = { points: [], sortServed: sort.length === 0, filtered: [], missing: [], indexOnly: false, usable: false };
  let i = 0;
  while (i < keys.length) {
    const p = byCol.get(keys[i]!.column);
    if (!p || !(p.kind === 'equality' || (p.kind === 'in' && sort.length === 0))) break;
    fit.points.push(p.column);
    i++;
  }
  let unbounded = false;
  if (sort.length > 0) {
    const slice = keys.slice(i, i + sort.length);
    const rel = slice.length === sort.length && slice.every((k, j) => k.column === sort[j]!.column)
      ? slice.map((k, j) => {
        const kd = !!k.desc;
        const kn = k.nullsFirst ?? kd;
        const same = kd === sort[j]!.desc && kn === sort[j]!.nullsFirst;
        const flipped = kd !== sort[j]!.desc && kn !== sort[j]!.nullsFirst;
        return same ? 1 : flipped ? -1 : 0;
      })
      : [];
    if (rel.length > 0 && (rel.every((r) => r === 1) || rel.every((r) => r === -1))) {
      fit.sortServed = true;
      const first = byCol.get(sort[0]!.column);
      if (first && first.kind === 'range') fit.boundedRange = first.column;
      else unbounded = true;
      i += sort.length;
    }
  }
  if (!unbounded && fit.boundedRange === undefined && i < keys.length) {
    const p = byCol.get(keys[i]!.column);
    if (p && isOrderable(p)) {
      fit.boundedRange = p.column;
      i++;
    }
  }
  for (const k of keys.slice(i)) if (byCol.has(k.column) && isOrderable(byCol.get(k.column)!)) fit.filtered.push(k.column);
  const inIndex = new Set([...keys.map((k) => k.column), ...include]);
  fit.missing = preds.filter((p) => isOrderable(p) && !inIndex.has(p.column)).map((p) => p.column);
  const refs = shape.referenced[tableKey] ?? [];
  fit.indexOnly = !shape.selectAll.includes(tableKey) && shape.statement === 'select' && refs.every((c) => inIndex.has(c)) && preds.every((p) => inIndex.has(p.column));
  fit.usable = fit.points.length > 0 || fit.boundedRange !== undefined || (sort.length > 0 && fit.sortServed);
  return fit;
}

// ---- conditions ---------------------------------------------------------------------------------------

function rowsMatching(stats: PgTableStats | undefined, cols: string[], preds: PgPredicate[]): number | undefined {
  if (!stats) return undefined;
  const set = [...new Set(cols)].sort().join('+');
  for (const [k, v] of Object.entries(stats.matching ?? {})) if (k.split('+').map((s) => s.trim()).sort().join('+') === set) return v;
  const eq = preds.filter((p) => p.kind === 'equality' || p.kind === 'in').map((p) => p.column).sort().join('+');
  const all = preds.filter(isOrderable).map((p) => p.column).sort().join('+');
  if (stats.result !== undefined && set === all) return stats.result;
  if (stats.equality !== undefined && set === eq) return stats.equality;
  return undefined;
}

/** ESR or ERS in rows read: the same trade-off and formulas as MongoDB's, with heap rows for documents. */
function ersCondition(esr: PgCandidate, ers: PgCandidate, E: PgPredicate[], range: PgPredicate, shape: PgShape, stats: PgTableStats | undefined): DecidingCondition {
  const limit = shape.limit !== undefined ? shape.limit + (shape.offset ?? 0) : undefined;
  const tablePreds = [...E, range];
  const e = E.length > 0 ? rowsMatching(stats, E.map((p) => p.column), tablePreds) : stats?.rows;
  const formulaShort = limit === undefined ? 'E / 3' : '(√(L² + 8·L·E) − L) / 4';
  const formula = `${formulaShort}, E = rows matching the equality columns${limit === undefined ? '' : `, L = ${limit}`}`;
  let threshold: number | undefined;
  if (e !== undefined) {
    const raw = limit === undefined ? e / 3 : (Math.sqrt(limit * limit + 8 * limit * e) - limit) / 4;
    threshold = Math.max(0, Math.min(SMALL_SORT, Math.floor(raw)));
  }
  const what = tablePreds.map((p) => p.text).join(' AND ');
  const cond: DecidingCondition = {
    quantity: `rows matching ${what}`,
    formula,
    below: `ERS ${specText(ers.spec)}: read the range, sort the few rows`,
    above: `ESR ${specText(esr.spec)}: no Sort node`,
    text: `ERS ${specText(ers.spec)} reads less when ${threshold !== undefined ? `fewer than about ${formatCount(threshold)} rows match ${what}` : `the rows matching ${what} number fewer than about ${formulaShort}, E being the rows matching ${E.map((p) => p.text).join(' AND ') || 'no equality (the whole table)'}${limit === undefined ? '' : ` and L = ${limit}`}`}; above that, ESR ${specText(esr.spec)} avoids the Sort.`,
  };
  if (threshold !== undefined) cond.threshold = threshold;
  const r = rowsMatching(stats, tablePreds.map((p) => p.column), tablePreds);
  if (r !== undefined && e !== undefined && e > 0) {
    cond.observed = Math.round(r);
    const esrWork = limit === undefined ? e + r : Math.min(e, (limit * e) / Math.max(r, 1)) + Math.min(r, limit);
    const ersWork = 2 * r;
    cond.decided = r <= SMALL_SORT && ersWork * ERS_ADVANTAGE <= esrWork ? 'below' : 'above';
  }
  return cond;
}

function seqScanCondition(best: PgCandidate, shape: PgShape, preds: PgPredicate[], stats: PgTableStats | undefined, name: string, sorted: boolean): DecidingCondition | undefined {
  if (shape.limit !== undefined && (best.fit.sortServed || !sorted)) return undefined;
  if (sorted && best.fit.sortServed) return undefined;
  const used = preds.filter(isOrderable);
  if (used.length === 0) return undefined;
  const rows = stats?.rows;
  const what = used.map((p) => p.text).join(' AND ');
  const cond: DecidingCondition = {
    quantity: `rows of ${name} matching ${what}`,
    formula: `${formatShare(COLLSCAN_SHARE)} of the table`,
    below: `the index ${specText(best.spec)}`,
    above: `no index: a sequential scan reads less`,
    text: `The index pays only if fewer than about ${rows !== undefined ? formatCount(Math.round(rows * COLLSCAN_SHARE)) : `${formatShare(COLLSCAN_SHARE)} of the`} rows match ${what}; above that, PostgreSQL reads the table sequentially anyway.`,
  };
  if (rows !== undefined) cond.threshold = Math.round(rows * COLLSCAN_SHARE);
  const r = rowsMatching(stats, used.map((p) => p.column), used);
  if (r !== undefined && rows !== undefined) {
    cond.observed = Math.round(r);
    cond.decided = r > rows * COLLSCAN_SHARE ? 'above' : 'below';
  }
  return cond;
}

function offsetDecision(shape: PgShape, stats: PgTableStats | undefined): { condition: DecidingCondition; asWritten: boolean } {
  if (shape.offset === undefined) {
    const param = shape.offsetParam ?? '?';
    return {
      condition: {
        quantity: `rows read and discarded by OFFSET ${param}`,
        formula: "the table's page count (pg_class.relpages)",
        below: 'the index serves the query as written',
        above: 'keyset pagination (the index alone reads every skipped row)',
        text: `OFFSET ${param} is only known at run time: every page reads all the rows before it, so deep pages cost the most; past about the table's page count a sequential scan reads less. Keyset pagination reads only the page at any depth.`,
      },
      asWritten: true,
    };
  }
  const offset = shape.offset;
  const read = offset + (shape.limit ?? 0);
  const pages = stats?.pages;
  const cond: DecidingCondition = {
    quantity: `rows read and discarded by OFFSET ${offset} LIMIT ${shape.limit ?? 'ALL'}`,
    formula: "the table's page count (pg_class.relpages)",
    below: 'the index serves the query as written',
    above: 'keyset pagination (the index alone reads every skipped row)',
    text: `As written, an index reads OFFSET + LIMIT = ${formatCount(read)} rows in order, one random heap visit each; that beats a sequential scan and top-N sort only while it stays below about the table's page count${pages !== undefined ? ` (${formatCount(pages)})` : ''}. Keyset pagination reads only the ${shape.limit ?? ''} rows of the page at any depth.`,
  };
  if (pages !== undefined) {
    cond.threshold = pages;
    cond.observed = read;
    cond.decided = read < pages ? 'below' : 'above';
    return { condition: cond, asWritten: read < pages };
  }
  return { condition: cond, asWritten: offset < DEEP_OFFSET };
}

// ---- texts --------------------------------------------------------------------------------------------

/** The statement that enables trusted extensions (a role with CREATE on the database may run it since PostgreSQL 13). */
export function enableExtensions(names: readonly string[]): string {
  return `${names.map((n) => `CREATE EXTENSION IF NOT EXISTS ${n};`).join(' ')} (trusted extensions: a role with CREATE on the database may run ${names.length > 1 ? 'them' : 'it'}).`;
}

/** Why a pattern escapes a B-tree, in a few words. */
function patternWhy(p: PgPredicate): string {
  if (/^ILIKE/.test(p.detail)) return 'matches without regard to case';
  if (/^regular expression/.test(p.detail)) return 'is a regular expression';
  return 'starts with a wildcard';
}

function orderText(order: readonly PgOrder[]): string {
  return order.map((o) => `${o.column}${o.desc ? ' DESC' : ''}${o.explicitNulls ? (o.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST') : ''}`).join(', ');
}

function keyText(k: PgIndexKey): string {
  const col = k.expression ? `(${k.column})` : quoteIdent(k.column);
  const nulls = k.nullsFirst === undefined ? '' : k.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST';
  return `${col}${k.desc ? ' DESC' : ''}${nulls}`;
}

export function specText(s: PgIndexSpec): string {
  return `${s.table} (${s.keys.map(keyText).join(', ')})${s.include ? ` INCLUDE (${s.include.map(quoteIdent).join(', ')})` : ''}`;
}

export function createIndexSql(s: PgIndexSpec): string {
  const table = `${s.schema ? `${quoteIdent(s.schema)}.` : ''}${quoteIdent(s.table)}`;
  const using = s.method !== 'btree' ? ` USING ${s.method}` : '';
  // The operator class belongs to the last key: in a GIN over scalar columns and one jsonb or text
  // column (btree_gin), the scalar keys keep their default class.
  const cols = s.keys.map((k, i) => `${keyText(k)}${s.opclass && i === s.keys.length - 1 ? ` ${s.opclass}` : ''}`).join(', ');
  return `CREATE INDEX CONCURRENTLY ON ${table}${using} (${cols})${s.include ? ` INCLUDE (${s.include.map(quoteIdent).join(', ')})` : ''}${s.predicate ? ` WHERE ${s.predicate}` : ''};`;
}

function esrText(E: PgPredicate[], sort: PgOrder[], R: PgPredicate[], keys: PgIndexKey[]): string {
  const parts: string[] = [];
  if (E.length > 0) parts.push(`equality columns first (${E.map((p) => p.column).join(', ')})`);
  if (sort.length > 0) parts.push(`then the ORDER BY (${orderText(sort)}) so no Sort node is needed`);
  if (R.length > 0) parts.push(`then the range${R.length > 1 ? 's' : ''} (${R.map((p) => `${p.column}: ${p.detail}`).join(', ')})`);
  if (parts.length > 0) parts[0] = parts[0]!.replace(/^then /, '');
  let text = sort.length === 0 && R.length > 0 ? `ER: ${parts.join(', ')}: one index range, nothing to sort.` : `ESR: ${parts.join(', ')}.`;
  const exprs = keys.filter((k) => k.expression);
  if (exprs.length > 0) text += ` ${exprs.map((k) => k.column).join(', ')} wraps the column in a function, so an index on the bare column cannot be used for it: the index is built on that expression, and the query must use exactly the same expression.`;
  return text;
}

function esrTradeOff(sort: PgOrder[], R: PgPredicate[], preds: PgPredicate[]): string {
  const parts: string[] = [];
  if (sort.length > 0 && R.length > 0) parts.push('The range columns after the ORDER BY are checked inside the index, so the scan may read many index entries before the LIMIT is met when the range is selective (see the condition).');
  if (preds.some((p) => p.detail === 'LIKE prefix')) parts.push("LIKE 'prefix%' uses a B-tree only under the C collation; otherwise declare the column with text_pattern_ops in the index.");
  if (parts.length === 0) parts.push('One more index to maintain on writes to this table.');
  return parts.join(' ');
}

function planText(shape: PgShape, name: string, fit: PgFit, sorted: boolean): string {
  const stages: string[] = [];
  if (shape.limit !== undefined) stages.push('Limit');
  if (sorted && !fit.sortServed) stages.push(shape.limit !== undefined ? 'Sort (top-N heapsort)' : 'Sort');
  stages.push(`${fit.indexOnly ? 'Index Only Scan' : 'Index Scan'} using the new index on ${name}`);
  const facts: string[] = [];
  if (sorted) facts.push(fit.sortServed ? 'no Sort node' : 'a Sort node remains');
  if (fit.filtered.length > 0) facts.push(`${fit.filtered.join(', ')} checked inside the index (only Buffers show that work)`);
  if (fit.missing.length > 0) facts.push(`${fit.missing.join(', ')} filtered on the heap rows (Rows Removed by Filter)`);
  if (!sorted && shape.limit === undefined && !fit.indexOnly) facts.push('or a Bitmap Heap Scan when many rows match');
  return `${stages.join(' > ')}${facts.length > 0 ? `; ${facts.join(', ')}` : ''}`;
}

function toSuggestion(c: PgCandidate): Suggestion {
  const s: Suggestion = {
    rank: 0,
    action: c.rule === 'collection-scan' ? 'none' : 'create',
    rule: c.rule,
    ruleText: c.ruleText,
    expectedPlan: c.expectedPlan,
    tradeOff: c.tradeOff,
    rewrites: c.rewrites,
    servesQueryAsWritten: c.servesAsWritten,
    conditions: c.conditions,
    verification: { status: 'not-run' },
  };
  if (s.action === 'create') {
    s.index = c.spec;
    s.createText = createIndexSql(c.spec);
  }
  return s;
}

function summaries(shape: PgShape): ShapeSummary[] {
  return shape.tables.map((t) => {
    const preds = shape.predicates.filter((p) => p.table === t.key);
    const s: ShapeSummary = {
      target: t.alias ? `${t.name} ${t.alias}` : t.name,
      fields: preds.map((p) => {
        const f: ShapeSummary['fields'][number] = { path: p.column, kind: p.kind === 'gin' ? 'unindexable' : p.kind, detail: p.detail };
        if (p.values !== undefined) f.values = p.values;
        if (p.kind === 'in') f.explodes = false;
        return f;
      }),
      sort: shape.orderBy.filter((o) => o.table === t.key).map((o) => {
        const x: ShapeSummary['sort'][number] = { path: o.column, direction: o.desc ? -1 : 1 };
        if (o.explicitNulls) x.nullsFirst = o.nullsFirst;
        return x;
      }),
      notes: [],
    };
    if (shape.limit !== undefined) s.limit = shape.limit;
    if (shape.offset !== undefined) s.skip = shape.offset;
    if (t.role === 'semi' || t.role === 'anti') s.notes.push(`${t.role}-join side (EXISTS / IN subquery)`);
    for (const j of shape.joins.filter((x) => x.table === t.key)) s.notes.push(`join key ${j.column} = ${j.otherTable}.${j.otherColumn}`);
    return s;
  });
}

// ---- rewrites -----------------------------------------------------------------------------------------

function outputHas(shape: PgShape, table: string, column: string): boolean {
  return shape.selectAll.includes(table) || shape.outputNames.includes(column);
}

/** `col = ANY(...)` ORDER BY ... LIMIT n -> one LIMITed branch per value, merged (Merge Append). */
function unionRewrite(shape: PgShape, p: PgPredicate): Rewrite | undefined {
  if (!shape.rewritable || p.conjunct === undefined || !shape.clauses.conjuncts) return undefined;
  const span = shape.clauses.conjuncts[p.conjunct];
  if (!span || shape.clauses.orderBy === undefined) return undefined;
  const sql = shape.sql;
  const end = shape.clauses.end;
  const col = p.expression ? p.column : quoteIdent(p.column);
  const branch = (value: string) => `${sql.slice(0, span.start)}${col} = ${value}${sql.slice(span.end, end)}`.trim();
  const missing = shape.orderBy.filter((o) => !outputHas(shape, p.table, o.column));
  const caveat = missing.length > 0 ? `The select list must include ${missing.map((o) => o.column).join(', ')} for the outer ORDER BY.` : undefined;
  const outerOrder = `ORDER BY ${orderText(shape.orderBy)} LIMIT ${shape.limit}`;
  if (p.valueTexts && p.valueTexts.length <= UNION_MAX_VALUES) {
    const text = `${p.valueTexts.map((v) => `(${branch(v)})`).join('\nUNION ALL\n')}\n${outerOrder}`;
    const r: Rewrite = {
      rule: 'union-all',
      description: `One branch per value of ${p.text}, each ORDER BY ... LIMIT ${shape.limit}, merged in order: PostgreSQL reads at most ${shape.limit} rows per value from an index on (${p.column}, ${shape.orderBy.map((o) => o.column).join(', ')}) and needs no Sort.`,
      text,
    };
    if (caveat) r.caveat = caveat;
    return r;
  }
  const array = p.valueTexts ? `ARRAY[${p.valueTexts.join(', ')}]` : p.arrayParamText;
  if (!array) return undefined;
  const inner = branch('v.val');
  const r: Rewrite = {
    rule: 'lateral-unnest',
    description: `A LATERAL join over the values of ${p.text}: for each value the subquery reads at most ${shape.limit} rows in order from an index on (${p.column}, ${shape.orderBy.map((o) => o.column).join(', ')}), and the outer query keeps the first ${shape.limit}.`,
    text: `SELECT t.* FROM unnest(${array}) AS v(val)\nCROSS JOIN LATERAL (${inner}) AS t\nORDER BY ${shape.orderBy.map((o) => `t.${o.column}${o.desc ? ' DESC' : ''}${o.explicitNulls ? (o.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST') : ''}`).join(', ')} LIMIT ${shape.limit}`,
    caveat: `${p.arrayParamText && !/::/.test(p.arrayParamText) ? 'Cast the array parameter to the column type (e.g. $1::int[]) so unnest() knows its element type. ' : ''}${caveat ?? ''}`.trim(),
  };
  if (r.caveat === '') delete r.caveat;
  return r;
}

/** OFFSET n -> a row-value comparison with the last row of the previous page. */
/** The texts before and after a removed clause, joined with the space of one of them, not both. */
function withoutClause(before: string, after: string): string {
  return /\s$/.test(before) ? `${before}${after.replace(/^[ \t]+/, '')}` : `${before}${after}`;
}

function keysetRewrite(shape: PgShape, order: readonly PgOrder[]): Rewrite | undefined {
  if (!shape.rewritable || shape.clauses.offset === undefined || shape.clauses.orderBy === undefined) return undefined;
  if (order.some((o) => o.expression)) return undefined;
  const sql = shape.sql;
  const cols = order.map((o) => quoteIdent(o.column));
  const params = order.map((_, i) => `$${shape.maxParam + i + 1}`);
  const allAsc = order.every((o) => !o.desc);
  const allDesc = order.every((o) => o.desc);
  let cond: string;
  if (order.length === 1) cond = `${cols[0]} ${order[0]!.desc ? '<' : '>'} ${params[0]}`;
  else if (allAsc || allDesc) cond = `(${cols.join(', ')}) ${allDesc ? '<' : '>'} (${params.join(', ')})`;
  else {
    cond = `(${order.map((o, i) => [...order.slice(0, i).map((_, j) => `${cols[j]} = ${params[j]}`), `${cols[i]} ${o.desc ? '<' : '>'} ${params[i]}`].join(' AND ')).map((b) => `(${b})`).join(' OR ')})`;
  }
  const off = shape.clauses.offset;
  let text: string;
  const w = shape.clauses.where;
  if (w) {
    const whereText = sql.slice(w.start, w.end);
    const newWhere = shape.clauses.whereIsOr ? `(${whereText}) AND ${cond}` : `${whereText} AND ${cond}`;
    text = `${sql.slice(0, w.start)}${newWhere}${withoutClause(sql.slice(w.end, off.start), sql.slice(off.end, shape.clauses.end))}`;
  } else {
    const ob = shape.clauses.orderBy;
    text = `${sql.slice(0, ob.start)}WHERE ${cond} ${withoutClause(sql.slice(ob.start, off.start), sql.slice(off.end, shape.clauses.end))}`;
  }
  text = text.replace(/[ \t]+$/gm, '').trim();
  return {
    rule: 'keyset',
    description: `OFFSET ${shape.offset ?? shape.offsetParam ?? ''} reads and discards every row before the page on every call, so deep pages cost the most. Keyset pagination continues after the last row of the previous page and reads only the page, at any depth, through the same index.`,
    text,
    parameters: order.map((o, i) => `${params[i]}: the ${o.column} of the last row of the previous page`),
    caveat: `${shape.offsetParam !== undefined ? `The OFFSET parameter ${shape.offsetParam} is gone: renumber the parameters or stop passing it. ` : ''}The ORDER BY must be unique to page without gaps or repeats: add the primary key as its last column (and to the comparison) if ${order.map((o) => o.column).join(', ')} can repeat. Rows with NULL in a sort column are never reached by the comparison.`,
  };
}

// ---- existing indexes ---------------------------------------------------------------------------------

function existingKeys(ix: ExistingPgIndex): PgIndexKey[] {
  return ix.columns.map((c) => {
    const k: PgIndexKey = { column: c.column ?? c.expression ?? '?' };
    if (c.column === undefined && c.expression !== undefined) k.expression = true;
    if (c.desc) k.desc = true;
    if (c.nullsFirst !== undefined && c.nullsFirst !== !!c.desc) k.nullsFirst = c.nullsFirst;
    return k;
  });
}

function sameKey(a: PgIndexKey, b: PgIndexKey): 1 | -1 | 0 {
  const norm = (s: string) => s.replace(/\s+/g, '').replace(/^\((.*)\)$/, '$1').toLowerCase();
  if (norm(a.column) !== norm(b.column)) return 0;
  const ad = !!a.desc;
  const bd = !!b.desc;
  const an = a.nullsFirst ?? ad;
  const bn = b.nullsFirst ?? bd;
  if (ad === bd && an === bn) return 1;
  if (ad !== bd && an !== bn) return -1;
  return 0;
}

function prefixOf(prefix: readonly PgIndexKey[], keys: readonly PgIndexKey[]): boolean {
  if (prefix.length > keys.length) return false;
  const rel = prefix.map((k, i) => sameKey(k, keys[i]!));
  return rel.every((r) => r === 1) || rel.every((r) => r === -1);
}

function applyExisting(suggestions: Suggestion[], candidates: PgCandidate[], shapes: PgShape[], existing: ExistingPgIndex[]): void {
  if (existing.length === 0) return;
  for (let i = 0; i < suggestions.length; i++) {
    const s = suggestions[i]!;
    const c = candidates[i]!;
    if (s.action !== 'create' || !s.index || s.index.engine !== 'postgres') continue;
    const want = s.index;
    const shape = shapes.find((sh) => sh.tables.some((t) => t.name === want.table))!;
    const table = shape.tables.find((t) => t.name === want.table)!;
    const preds = shape.predicates.filter((p) => p.table === table.key);
    const sort = shape.orderBy.filter((o) => o.table === table.key);
    const constant = new Set(preds.filter((p) => p.kind === 'equality').map((p) => p.column));
    const effSort = want.method === 'btree' && c.fit.sortServed ? sort.filter((o) => !constant.has(o.column)) : [];
    for (const ix of existing) {
      if (ix.table !== want.table || ix.invalid || (ix.predicate !== undefined && ix.predicate !== '')) continue;
      if ((ix.method ?? 'btree') !== want.method) continue;
      const keys = existingKeys(ix);
      let reason: string | undefined;
      if (prefixOf(want.keys, keys) && (want.include ?? []).every((col) => keys.some((k) => k.column === col) || (ix.include ?? []).includes(col))) {
        reason = keys.length === want.keys.length ? 'it has the same key columns' : `(${want.keys.map((k) => k.column).join(', ')}) is a prefix of it, so it serves the query the same way`;
      } else if (want.method === 'btree') {
        const fit = pgFit(keys, ix.include ?? [], shape, table.key, preds, effSort);
        const ideal = c.fit;
        if (fit.usable && fit.sortServed === ideal.sortServed && fit.points.length >= ideal.points.length
          && (ideal.boundedRange === undefined || fit.boundedRange === ideal.boundedRange || fit.points.length > ideal.points.length)
          && fit.missing.every((m) => ideal.missing.includes(m)) && (!ideal.indexOnly || fit.indexOnly)
          && fit.filtered.length >= ideal.filtered.length - (fit.points.length - ideal.points.length)) {
          reason = 'it bounds the same columns and gives the same order';
        }
      }
      if (reason) {
        suggestions[i] = {
          ...s,
          action: 'keep',
          rule: 'existing',
          index: { ...want, keys, ...(ix.include ? { include: ix.include } : {}) },
          keep: { name: ix.name, reason: `Keep using ${ix.name}: ${reason}.` },
          ruleText: `The existing index ${ix.name} already serves this query: ${reason}.`,
          tradeOff: 'Nothing to build: no new index to maintain on writes.',
        };
        delete suggestions[i]!.createText;
        break;
      }
    }
    if (suggestions[i]!.action === 'create') {
      const replaces = existing.filter((ix) => ix.table === want.table && !ix.unique && !ix.primary && !ix.predicate && (ix.method ?? 'btree') === want.method
        && ix.columns.length < want.keys.length && prefixOf(existingKeys(ix), want.keys)).map((ix) => ix.name);
      if (replaces.length > 0) {
        s.replaces = replaces;
        s.tradeOff += ` It extends ${replaces.join(', ')}: build it, then drop ${replaces.length > 1 ? 'those' : 'that one'} (DROP INDEX CONCURRENTLY), since every query that used ${replaces.length > 1 ? 'them' : 'it'} can use the longer index.`;
      }
    }
  }
}

/**
 * In a join, a table an existing index already serves needs nothing built: the tables that still need an
 * index come first (stable otherwise), so the first suggestion is the one that changes the plan, not the
 * "keep using" of a table that was never the problem.
 */
function openTablesFirst(suggestions: Suggestion[]): Suggestion[] {
  const tableOf = (s: Suggestion): string | undefined => (s.index?.engine === 'postgres' ? s.index.table : undefined);
  const kept = new Set(suggestions.filter((s) => s.action === 'keep').map(tableOf).filter((t) => t !== undefined));
  if (kept.size === 0 || !suggestions.some((s) => s.action === 'create' && !kept.has(tableOf(s) ?? ''))) return suggestions;
  const served = (s: Suggestion): number => (kept.has(tableOf(s) ?? '') ? 1 : 0);
  return [...suggestions].sort((a, b) => served(a) - served(b));
}

function writeCostText(table: string, count: number): string {
  const base = `${table} has ${count} index${count === 1 ? '' : 'es'}: every INSERT writes ${count} index entr${count === 1 ? 'y' : 'ies'}, one more index adds one more, and an UPDATE of an indexed column can no longer be a HOT update, so it writes every index again.`;
  return count >= 5 ? `${base} With ${count} already, extend an existing index rather than add one.` : base;
}
