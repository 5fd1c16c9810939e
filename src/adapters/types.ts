// What every adapter returns from an explain: the server's answer kept as text (the Raw tab, Compare,
// saved files), the plan read from that same text by the core, and how the run went.

import type { LoadResult } from '../core/index';

export interface ExplainResult {
  engine: 'mongodb' | 'postgres';
  /** The explain output as the server returned it, serialised as JSON. */
  rawText: string;
  /** `loadPlan(rawText)`: the plan, or a refusal in one sentence (e.g. a compatible API's own shape). */
  load: LoadResult;
  serverVersion: string;
  /** Wall time of the explain round trip in milliseconds (not the server's own figure). */
  durationMs: number;
  /** PostgreSQL: the statement ran inside a transaction that was rolled back (always the case with ANALYZE). */
  rolledBack: boolean;
  /** The statement writes (INSERT/UPDATE/DELETE/MERGE, a writing CTE, $out/$merge). */
  writes: boolean;
  /** Sentences the user should read about this run (rolled back, compatible API, options ignored...). */
  notes: string[];
  /**
   * PostgreSQL: the explain's parts in the order they ran, in milliseconds: the statement read, the
   * transaction's BEGIN with the side-effect check on the catalog, the EXPLAIN, the plan read.
   */
  phases?: { label: string; ms: number }[];
}
