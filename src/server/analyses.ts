// What each query's advice and findings are: the core's analysis of a query, cached per query and schema
// version, so an edit re-analyses only the statements it touched.

import { analyzeQuery } from '../core/index';
import type { FoundQuery, QueryAnalysis, RepositorySchema } from '../core/index';
import type { CachedAnalysis, DocState } from './documents';

export class Analyses {
  constructor(
    private readonly log: (message: string) => void,
    /** The indexes and keys the workspace's schema files declare. */
    private readonly repository: () => RepositorySchema | undefined,
  ) {}

  /** A query's whole analysis: findings, advice and hover. */
  of(state: DocState, q: FoundQuery): QueryAnalysis {
    return this.cached(state, q).analysis;
  }

  /**
   * The analysis of a query where it is now. Findings and their anchors move with the query's own ranges,
   * so diagnostics take the cached analysis wherever the query moved; a fix's edits and declarations are
   * file offsets of the text the query was analysed in, so code actions ask again once it moved.
   */
  placed(state: DocState, q: FoundQuery): QueryAnalysis {
    const entry = this.cached(state, q);
    if (entry.start === q.range.start) return entry.analysis;
    const published = entry.published;
    const fresh = this.cached(state, q, true);
    if (published) fresh.published = published;
    return fresh.analysis;
  }

  /**
   * `findings`: only the findings are wanted (the diagnostics), so a document without a connection's
   * schema is not advised yet: the advice, the hover and the code actions are computed when a hover, a
   * lens or a code action asks, and the diagnostics published meanwhile are kept, since those findings
   * are the same.
   */
  cached(state: DocState, q: FoundQuery, again = false, findings = false): CachedAnalysis {
    const hit = state.analyses.get(q);
    const current = hit !== undefined && hit.schemaVersion === state.schemaVersion && !again;
    if (current && (findings || !hit.analysis.findingsOnly)) return hit;
    let analysis: QueryAnalysis;
    try {
      analysis = analyzeQuery(q, state.doc.getText(), state.schema, this.repository(), { findingsOnly: findings });
    } catch (err) {
      this.log(`A rule failed on a query at offset ${q.range.start} of ${state.uri}: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      analysis = { engine: q.engine, targets: [], findings: [], hover: '', connected: false };
    }
    const entry: CachedAnalysis = { schemaVersion: state.schemaVersion, analysis, start: q.range.start };
    if (current && hit.published) entry.published = hit.published;
    state.analyses.set(q, entry);
    return entry;
  }
}
