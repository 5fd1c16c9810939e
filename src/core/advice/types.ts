// The index advisor's contract: what goes in (a query shape, the indexes that already exist, optional
// selectivity figures) and what comes out (`Advice`). Front ends (language server hovers and code actions,
// the plan panel, `qpi advise`) read only these types. The advisor is pure: adapters gather the existing
// indexes and the statistics, and later fill `Suggestion.verification` (HypoPG, a trial index inside a
// rolled-back transaction, or a hinted explain on a sample).

import type { ExistingMongoIndex, ExistingPgIndex, PgIndexColumn } from '../schema/types';

// The index lists are the schema's vocabulary (what exists, declared or read from a server).
export type { ExistingMongoIndex, ExistingPgIndex, PgIndexColumn };

/** A MongoDB value as the shell-notation reader gives it: Extended JSON v2 ({$oid}, {$date}, {$regex}...). */
export type MongoDoc = Record<string, unknown>;

// ---- MongoDB input ------------------------------------------------------------------------------------

/** What kind of command the query is; the index needs are read from its filter, sort and projection. */
export type MongoQueryOperation = 'find' | 'count' | 'distinct' | 'update' | 'delete' | 'aggregate';

/**
 * A MongoDB query in structured form. The shell-text reader's `MongoCommand` maps onto it with
 * `fromMongoCommand`; the truth cases' `query.structured` objects are already of this form.
 */
export interface MongoQueryInput {
  collection: string;
  /** Defaults to 'find' (or 'aggregate' when only a pipeline is given). */
  operation?: MongoQueryOperation;
  filter?: MongoDoc | null;
  /** Field -> 1 | -1, in sort order. */
  sort?: MongoDoc | null;
  projection?: MongoDoc | null;
  limit?: number | null;
  skip?: number | null;
  /** aggregate: the stages in order. */
  pipeline?: MongoDoc[] | null;
  /** distinct: the field whose values are asked for. */
  field?: string | null;
  /** count: set by the truth cases' structured form (`count: true`); same as operation 'count'. */
  count?: boolean;
}

/**
 * Selectivity figures for MongoDB, all optional. The live-connection path fills them with
 * `countDocuments` on the user's collection (or a sample scaled up); without them the advisor gives its
 * static advice and states the condition that would change it.
 */
export interface MongoStats {
  /** Documents in the collection. */
  total?: number;
  /**
   * Documents matching the conjunction of the query's predicates on a set of fields, keyed by the field
   * paths joined with '+' in any order ("tenant", "tenant+status"). A field's key alone is its predicate alone.
   */
  matching?: Record<string, number>;
  /** Documents matching every equality predicate together (the E of ESR). */
  equality?: number;
  /** Documents matching every predicate of the filter (the result before skip/limit). */
  result?: number;
  /** Distinct values per field (skip-scan seeks, equality order). */
  distinct?: Record<string, number>;
  /** Paths known to hold arrays in some document (multikey). */
  arrays?: string[];
}

// ---- PostgreSQL input ---------------------------------------------------------------------------------

/** pg_class/pg_stats-like estimates for PostgreSQL, per table name (unqualified, as written in the query). */
export interface PgTableStats {
  /** pg_class.reltuples. */
  rows?: number;
  /** pg_class.relpages (8 kB pages). */
  pages?: number;
  /** Rows matching the conjunction of this table's predicates on a set of columns, keyed like MongoStats.matching. */
  matching?: Record<string, number>;
  /** Rows matching every equality predicate of this table together. */
  equality?: number;
  /** Rows matching every predicate of this table. */
  result?: number;
  /** pg_stats.n_distinct turned into a count. */
  distinct?: Record<string, number>;
  /** pg_stats.correlation of a column with the physical order, -1..1. */
  correlation?: Record<string, number>;
}

export interface PgStats {
  tables?: Record<string, PgTableStats>;
}

// ---- Output -------------------------------------------------------------------------------------------

/** One key of a MongoDB index, in order. */
export interface MongoIndexKey {
  field: string;
  direction: 1 | -1;
}

export interface MongoIndexSpec {
  engine: 'mongodb';
  collection: string;
  keys: MongoIndexKey[];
  /** The key pattern as an ordered object ({country_id: 1, created_at: -1}). */
  keyPattern: Record<string, 1 | -1>;
}

export interface PgIndexKey {
  /** A column name, or an expression such as lower(email) (already parenthesised in createText). */
  column: string;
  expression?: boolean;
  desc?: boolean;
  /** Set only when it differs from the default for the direction (ASC: NULLS LAST, DESC: NULLS FIRST). */
  nullsFirst?: boolean;
}

export interface PgIndexSpec {
  engine: 'postgres';
  table: string;
  schema?: string;
  method: 'btree' | 'gin' | 'gist';
  keys: PgIndexKey[];
  include?: string[];
  /** Operator class of the last key when not the default (jsonb_path_ops for @> only, gin_trgm_ops). */
  opclass?: string;
  /** The WHERE of a partial index, as SQL text. */
  predicate?: string;
}

export type IndexSpec = MongoIndexSpec | PgIndexSpec;

/** Stable names of the rules that produce suggestions; tools key on them, the sentence is in `ruleText`. */
export type AdviceRule =
  | 'esr'              // equality, sort, range
  | 'ers'              // equality, range, sort: the selective-range alternative
  | 'er'               // equality then range, nothing to sort
  | 'explode-in'       // $in / $or counted as equality because the planner explodes it for the sort
  | 'covered'          // ESR plus projected fields, so no document is fetched
  | 'count-scan'       // count over one contiguous interval
  | 'multikey-single'  // array subfields without $elemMatch: only one bound can be used
  | 'or-branch'        // one index per $or branch
  | 'match-first'      // aggregate: $match moved before the stage that hid the field
  | 'keyset'           // skip/OFFSET replaced by keyset pagination
  | 'union-all'        // PostgreSQL = ANY + ORDER BY + LIMIT as one LIMITed branch per value
  | 'semi-join'        // index on the subquery side: filter columns then the join key
  | 'join-key'         // index on the join key of the inner side
  | 'gin'              // jsonb containment/existence, array operators
  | 'expression'       // a function wraps the column
  | 'index-only'       // INCLUDE columns so PostgreSQL reads only the index
  | 'existing'         // an index that exists already serves the query
  | 'collection-scan'; // no index beats reading the whole collection/table

/**
 * A choice that depends on the data, stated so a reader can check it: "ERS if fewer than about 700
 * documents match tenant = 7 and name /^ab/". With statistics the advisor decides and says which side.
 */
export interface DecidingCondition {
  /** What is counted, in words: "documents matching tenant = 7 and name /^ab/". */
  quantity: string;
  /** The threshold in the same unit when the advisor could compute it. */
  threshold?: number;
  /** The threshold as a formula of named counts when the numbers are missing: "E / 3". */
  formula: string;
  /** What to do when the count is below the threshold, and above. */
  below: string;
  above: string;
  /** The whole condition as one sentence. */
  text: string;
  /** With statistics: the observed count and the side it falls on. */
  observed?: number;
  decided?: 'below' | 'above';
}

/** A rewrite of the query text that the advice recommends or requires. */
export interface Rewrite {
  rule: 'keyset' | 'union-all' | 'lateral-unnest' | 'match-first' | 'elem-match';
  /** One or two sentences: what changes and why it reads less. */
  description: string;
  /** The rewritten query text, ready to paste (parameters named in `parameters`). */
  text: string;
  /** Values the caller must supply, e.g. the last row's sort key for keyset pagination. */
  parameters?: string[];
  /** What to check before using it (semantics that may differ). */
  caveat?: string;
  /** MongoDB: the rewritten query in structured form (parameters as {$placeholder: name}), ready to explain. */
  structured?: MongoQueryInput;
}

/** Figures the advisor estimated from statistics; absent without statistics. */
export interface WorkEstimate {
  keysExamined?: number;
  docsExamined?: number;
  /** PostgreSQL: rows read from the table or index. */
  rowsRead?: number;
  blockingSort: boolean;
}

/**
 * Filled later by an adapter that tried the index: HypoPG (plain EXPLAIN, cost before/after), a real
 * index inside BEGIN ... ROLLBACK, or a hinted explain on a sample. The advisor always leaves 'not-run'.
 */
export type Verification =
  | { status: 'not-run' }
  | {
      status: 'verified' | 'refuted' | 'failed';
      method: 'hypopg' | 'trial-index' | 'hinted-explain' | 'sampled';
      /** Cost or work before and after, in the method's unit. */
      before?: number;
      after?: number;
      unit?: string;
      /** One sentence for the user. */
      message: string;
    };

export interface Suggestion {
  /** 1 for the best. */
  rank: number;
  /** create: build `index`; keep: the existing `keep` index already serves; none: no index helps. */
  action: 'create' | 'keep' | 'none';
  /** The index to create, or the existing one to keep using; absent for 'none'. */
  index?: IndexSpec;
  /** db.c.createIndex({...}) or CREATE INDEX ...; absent for 'keep' and 'none'. */
  createText?: string;
  rule: AdviceRule;
  /** The rule in one sentence, applied to this query. */
  ruleText: string;
  /** The plan the index should give: "LIMIT > FETCH > IXSCAN, no blocking SORT". */
  expectedPlan: string;
  /** What it costs or risks, in one or two sentences. */
  tradeOff: string;
  /** The existing index to keep using (action 'keep'). */
  keep?: { name: string; reason: string };
  /** Existing indexes this one makes redundant (drop them after the new one is built). */
  replaces?: string[];
  /** Rewrites that go with this index. */
  rewrites: Rewrite[];
  /** False when the index serves only the rewritten query (see `rewrites`). */
  servesQueryAsWritten: boolean;
  /** Conditions on the data that would change this choice. */
  conditions: DecidingCondition[];
  estimate?: WorkEstimate;
  verification: Verification;
}

/** How one predicate bounds an index, after classification. */
export type PredicateClass = 'equality' | 'in' | 'range' | 'unindexable';

/** A field or column with its classification, for display and for tests. */
export interface ShapeField {
  path: string;
  /** equality; in (a list, with `values`); range; unindexable (needs another kind of index or none). */
  kind: PredicateClass;
  /** The operator family in words: '$gt/$lt', '$ne', 'unanchored regex', 'LIKE prefix', 'IS NULL', ... */
  detail: string;
  /** For $in/$or/IN/ANY: how many values (point intervals), when known. */
  values?: number;
  /** Counts as equality for the sort (explode-for-sort); set only for 'in'. */
  explodes?: boolean;
}

export interface ShapeSummary {
  /** Collection or table. */
  target: string;
  fields: ShapeField[];
  sort: { path: string; direction: 1 | -1; nullsFirst?: boolean }[];
  limit?: number;
  skip?: number;
  /** Free-form facts: "pipeline: $match on a field renamed by $project", "covered projection possible". */
  notes: string[];
}

export interface Advice {
  engine: 'mongodb' | 'postgres';
  /** The query as the advisor understood it, one entry per collection/table it advises on. */
  shapes: ShapeSummary[];
  /** Ranked, best first. Empty when the query could not be read (see refusal). */
  suggestions: Suggestion[];
  /** Rewrites worth making whatever index is chosen (also attached to the suggestions they serve). */
  rewrites: Rewrite[];
  /** What every new index costs, given the indexes that exist; absent when none were given. */
  writeCost?: string;
  /** Facts the reader should know (unindexable predicates, assumptions made). */
  notes: string[];
  warnings: string[];
  /** Set when no advice can be given, as one sentence; suggestions is then empty. */
  refusal?: string;
}

// ---- Tournament ---------------------------------------------------------------------------------------

/** What one measured run of the query did (MongoDB executionStats, PostgreSQL EXPLAIN ANALYZE BUFFERS). */
export interface MeasuredWork {
  /** The figure candidates are ranked by: MongoDB keys + documents + documents sorted in memory; PostgreSQL buffers. */
  work: number;
  keysExamined?: number;
  docsExamined?: number;
  /** Documents (or rows) a blocking sort held. */
  sorted?: number;
  /** PostgreSQL: shared and local buffers hit + read. */
  buffers?: number;
  /** Documents or rows returned. */
  rows: number;
  /** Execution time on the sample, milliseconds. */
  timeMs?: number;
  blockingSort: boolean;
  /** The stages in one line: "LIMIT > FETCH > IXSCAN {a: 1}". */
  plan: string;
  /** The index the plan scanned, when it used one. */
  index?: string;
}

/** One candidate of a tournament with what was measured for it. */
export interface TournamentEntry {
  /** A few words: "ESR", "extends tenant_1", "collection scan". */
  label: string;
  /** How the candidate was generated (rule, existing, extension, esr, ers, prefix, without, covered...). */
  origin: string;
  /** The index measured; absent for the collection or table scan. */
  index?: IndexSpec;
  createText?: string;
  /**
   * Indexes measured together, the query run without a hint (a MongoDB $or over different fields needs
   * one per branch, and a hint names one index for the whole query); `index` is the first of them.
   */
  set?: { index: IndexSpec; createText?: string; existing?: string }[];
  /** The index exists today under this name. */
  existing?: string;
  /** The rule-based advisor's rank and rule when it suggested this index. */
  ruleRank?: number;
  rule?: string;
  /** On the sample; absent when the run failed (see error). */
  measured?: MeasuredWork;
  /** `measured.work` scaled to the whole collection or table, when scaling means something. */
  scaledWork?: number;
  /** The rewritten query text this candidate was measured with (what the user would run instead). */
  rewrite?: string;
  error?: string;
}

/**
 * The result of measuring candidates on a sample of the user's data: the ranking, today's figures and
 * the planner's own choice. Suggestions built from it are ordered by measured work.
 */
export interface Tournament {
  engine: 'mongodb' | 'postgres';
  /** The unit of `work`, in words. */
  unit: string;
  sample: { size: number; total: number; matching?: number; scaled: boolean };
  /** "measured from a sample of 20,000 of 200,000 documents". */
  label: string;
  /** Distinct candidates generated before the cap, and those measured. */
  generated: number;
  tried: number;
  /** The query as it runs today (the existing indexes only). */
  today?: MeasuredWork;
  /** The index the planner picked by itself once every candidate existed. */
  plannerChoice?: string;
  /** Ordered by measured work, least first; failed runs last. */
  ranking: TournamentEntry[];
  winner?: TournamentEntry;
  runnerUp?: TournamentEntry;
  /** One or two sentences: the verdict. */
  verdict: string;
  /** Set when the rules' first pick lost: which rule, by how much, and why. */
  overturned?: string;
}

/** Whether advice stands on measurement, for every face that shows it. */
export type Measurement =
  | { status: 'measured'; label: string; tournament: Tournament }
  | { status: 'not-measured'; label: string; reason: string };
