// The findings the query lint gives, each with a stable code (the `code` of every diagnostic the language
// server publishes and of every line `qpi lint` prints; docs/language-server.md lists them), and what the
// lint needs of a plan when a background explain ran.

/** Stable diagnostic codes (the `code` of every diagnostic this server publishes); docs/language-server.md lists them. */
export const DiagnosticCodes = {
  /** A $match on a field a $project/$addFields/$set renamed from a dotted path: the index on the path is not used. */
  matchAfterRename: 'qpi.match-after-rename',
  /** skip()/$skip/OFFSET pagination: every page reads all the rows it skips. */
  skipPagination: 'qpi.skip-pagination',
  /** A regex without a ^ anchor: every key of the index (or every document) is read. */
  unanchoredRegex: 'qpi.regex-unanchored',
  /** A case-insensitive regex: no tight index bounds, even when anchored. */
  caseInsensitiveRegex: 'qpi.regex-case-insensitive',
  /** $ne/$nin leading the filter: nothing bounds the scan. */
  leadingNegation: 'qpi.leading-negation',
  /** $in over 200 values with a sort: the planner no longer merges per value, so it sorts in memory. */
  inTooLargeForSort: 'qpi.in-over-200-with-sort',
  /** A function wraps a column in WHERE: a plain index on the column cannot be used. */
  functionOnColumn: 'qpi.function-on-column',
  /** LIKE/ILIKE with a leading wildcard: a B-tree cannot seek it. */
  leadingWildcard: 'qpi.like-leading-wildcard',
  /**
   * With a connection (or, for PostgreSQL, a repository whose schema declares every table): the table or
   * collection the query reads does not exist there, so no index is suggested for it.
   */
  doesNotExist: 'qpi.does-not-exist',
  /** With a connection: no existing index bounds the filter, so the whole collection or table is read. */
  collectionScan: 'qpi.collection-scan',
  /** With a connection: the query sorts and no usable index gives the order. */
  blockingSort: 'qpi.blocking-sort',
  /** With a connection: an existing index already serves the query. */
  indexServes: 'qpi.index-serves',
  /** With a connection and a background explain: the server's own plan reads the whole collection or table. */
  planFullScan: 'qpi.plan-full-scan',
  /** With a connection and a background explain: the server's own plan sorts in memory. */
  planBlockingSort: 'qpi.plan-blocking-sort',
  /** With a connection and a background explain: the server's own plan uses these indexes and no in-memory sort. */
  planUsesIndex: 'qpi.plan-uses-index',
} as const;

export type DiagnosticCode = (typeof DiagnosticCodes)[keyof typeof DiagnosticCodes];

/** What the server needs of a plan: read by the extension from the plan model, so no plan crosses over. */
export interface PlanSummary {
  /** Node kinds of the winning plan, root first ('LIMIT', 'FETCH', 'IXSCAN'; 'Limit', 'Index Scan'). */
  stages: string[];
  /** The collection or table read in full (COLLSCAN / Seq Scan), if any. */
  fullScan?: string;
  /** The plan sorts in memory (a SORT stage / a Sort node). */
  blockingSort: boolean;
  /** Indexes the plan reads. */
  indexes: string[];
}
