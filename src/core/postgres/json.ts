// Placeholder until the PostgreSQL reader lands (issue 2): refuses everything.
import type { LoadResult, PlanFormat } from '../model';
export function parsePostgresJson(_doc: unknown, _format: PlanFormat): LoadResult {
  return { ok: false, refusal: 'Reading PostgreSQL json plans is not implemented yet.' };
}
