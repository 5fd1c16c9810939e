// The rules the gate reports, each with its tier and the metadata code scanning shows beside an alert.
// Tiers say how far a finding can be trusted on a CI database: `structural` holds whatever the data
// (no index can serve the filter, skip paging), `statistical` is the planner's choice on the CI data's
// statistics (a sequential scan on a table an index could serve), `measured` comes from counting the
// work a run did (MongoDB's keys and documents examined).

import { DiagnosticCodes } from '../lint/codes';

export type Tier = 'structural' | 'statistical' | 'measured';
export type Level = 'error' | 'warning' | 'note';

export const CheckRules = {
  /** A query in the lock whose plan no longer reads an index it read. */
  lostIndex: 'qpi.check.lost-index',
  /** A query in the lock that now sorts in memory. */
  newBlockingSort: 'qpi.check.new-blocking-sort',
  /** A query in the lock whose deterministic counters got worse beyond the threshold. */
  countersWorse: 'qpi.check.counters-worse',
  /** A waiver in the lock past its expiry date. */
  waiverExpired: 'qpi.check.waiver-expired',
  /** A query the lock holds a plan of that can no longer be explained. */
  noLongerExplained: 'qpi.check.no-longer-explained',
} as const;

export interface RuleInfo {
  id: string;
  name: string;
  tier: Tier;
  short: string;
  full: string;
  help: string;
  /** A query that is new with this finding fails the gate by default. */
  failsNew: boolean;
  level: Level;
  precision: 'very-high' | 'high' | 'medium' | 'low';
}

const PRECISION = { structural: 'very-high', measured: 'high', statistical: 'medium' } as const;

function rule(id: string, name: string, tier: Tier, level: Level, failsNew: boolean, short: string, full: string, help: string): RuleInfo {
  return { id, name, tier, level, failsNew, short, full, help, precision: PRECISION[tier] };
}

const D = DiagnosticCodes;

/** Every rule the gate can report, by id. */
export const RULES: ReadonlyMap<string, RuleInfo> = new Map([
  rule(D.collectionScan, 'CollectionScan', 'structural', 'error', true,
    'No index can serve the filter: the whole collection or table is read.',
    'No existing index has the filtered fields as its leading keys, so every document or row is read whatever the data: the cost grows with the collection.',
    'Build the index the message names (the equality fields first, then the sort, then the ranges), or waive the query in the lock with a reason when the collection stays small.'),
  rule(D.doesNotExist, 'DoesNotExist', 'structural', 'error', true,
    'The table or collection the query reads does not exist on the CI database.',
    'The CI database has no table, view or collection of this name, so the query cannot run there as written: it is neither explained nor advised, and no index is suggested for it. Either the name is wrong (a default table name the ORM does not use, a typo) or the CI database lacks a migration.',
    'Name the table or collection the application really uses, or apply the migration that creates it before qpi check runs; set "fail": false for this rule in qpi.config.json to report it without failing.'),
  rule(D.blockingSort, 'BlockingSort', 'structural', 'error', true,
    'No index gives the order: every match is sorted in memory.',
    'The query sorts and no usable index provides the order, so every matching document or row is read and sorted before the first is returned, even with a limit.',
    'Build an index whose keys give the order after the equality fields (the message names one), or drop the sort.'),
  rule(D.skipPagination, 'SkipPagination', 'structural', 'error', true,
    'skip/OFFSET pagination reads every row it skips.',
    'A page reached by skip(n), $skip or OFFSET reads and discards n documents or rows first: deep pages cost as much as reading everything before them.',
    'Page by the last key seen (keyset pagination: a range on the sort key) instead of a count to skip.'),
  rule(D.planFullScan, 'PlanFullScan', 'statistical', 'note', false,
    'The plan the CI database chose reads a whole collection or table.',
    'An index could serve the filter, but the planner chose a full scan on the CI data (a small table is read faster whole). This depends on the statistics, not the code.',
    'Check the plan on data of production size, or load production statistics into the CI database.'),
  rule(D.planBlockingSort, 'PlanBlockingSort', 'statistical', 'note', false,
    'The plan the CI database chose sorts in memory.',
    'An index could give the order, but the planner chose to sort in memory on the CI data.',
    'Check the plan on data of production size.'),
  rule(D.matchAfterRename, 'MatchAfterRename', 'structural', 'warning', false,
    'A $match on a renamed field cannot use the index on its source path.',
    'A $project/$addFields/$set renamed a dotted path before the $match, so the index on the path is not used.',
    'Match on the original path before the stage that renames it.'),
  rule(D.unanchoredRegex, 'UnanchoredRegex', 'structural', 'warning', false,
    'A regex without an anchored literal prefix cannot seek.',
    'Every key of an index on the field, or every document without one, is read.',
    'Anchor the regex (^abc) when values start with the text, or use a text search index.'),
  rule(D.caseInsensitiveRegex, 'CaseInsensitiveRegex', 'structural', 'warning', false,
    'A case-insensitive regex gives no tight index bounds.',
    'Even anchored, a case-insensitive regex reads the whole index range.',
    'Store a normalised copy of the field and match it, or use a collation index.'),
  rule(D.leadingNegation, 'LeadingNegation', 'structural', 'warning', false,
    '$ne/$nin leading the filter bounds nothing.',
    'A negation cannot bound an index scan, so nearly the whole index or collection is read.',
    'Filter on a positive condition first.'),
  rule(D.inTooLargeForSort, 'InTooLargeForSort', 'structural', 'warning', false,
    '$in over 200 values with a sort is sorted in memory.',
    'Past 200 values the planner no longer merges one scan per value, so it sorts in memory.',
    'Split the list, or sort on the client.'),
  rule(D.functionOnColumn, 'FunctionOnColumn', 'structural', 'warning', false,
    'A function around a column hides it from a plain index.',
    'A plain index on the column cannot be used for a condition on a function of it.',
    'Build an expression index on the function, or rewrite the condition on the column itself.'),
  rule(D.leadingWildcard, 'LeadingWildcard', 'structural', 'warning', false,
    'LIKE with a leading wildcard cannot seek a B-tree.',
    'A pattern starting with % or _ reads every row or index entry.',
    'Use a trigram index (pg_trgm) or full-text search.'),
  rule(CheckRules.lostIndex, 'LostIndex', 'structural', 'error', false,
    'The plan no longer reads an index it read when the lock was written.',
    'A collection or table this query reached through an index is now reached another way: the index was dropped, changed, or no longer matches the query.',
    'Restore the index (look for the migration that dropped or changed it), or run qpi check --update if the change is intended.'),
  rule(CheckRules.newBlockingSort, 'NewBlockingSort', 'structural', 'error', false,
    'The plan sorts in memory, which it did not when the lock was written.',
    'The index that gave the order is no longer used, so every match is sorted before the first is returned.',
    'Restore the index that gave the order, or run qpi check --update if the change is intended.'),
  rule(CheckRules.countersWorse, 'CountersWorse', 'statistical', 'error', false,
    'The plan does more work than when the lock was written.',
    'A deterministic counter (PostgreSQL: estimated cost; MongoDB: keys or documents examined per document returned) grew beyond the threshold (10% unless the configuration says otherwise). Time is never compared.',
    'Look at the plan excerpt; restore the index or rewrite the query, or run qpi check --update if the change is intended.'),
  rule(CheckRules.waiverExpired, 'WaiverExpired', 'structural', 'error', false,
    'A waiver in the lock has expired.',
    'A waiver lets a known finding pass until its expiry date; past it the finding fails again so that someone decides anew.',
    'Fix the query, or extend the waiver in qpi.lock.json with a new date, reason and owner.'),
  rule(CheckRules.noLongerExplained, 'NoLongerExplained', 'structural', 'error', false,
    'The query was explained when the lock was written and cannot be explained now.',
    'The lock holds a plan of this query, and the check could not explain it this time (a table or collection gone, a column renamed, a value the query needs): a gate that let it pass would stop guarding it without saying so.',
    'Read why it cannot be explained; fix the schema or the query, or run qpi check --update if the change is intended.'),
].map((r) => [r.id, r]));

export function ruleInfo(id: string): RuleInfo {
  return RULES.get(id) ?? rule(id, id, 'structural', 'warning', false, id, id, id);
}
