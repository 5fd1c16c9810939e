// Placeholder until the MongoDB reader lands (issue 2): refuses everything.
import type { LoadResult, PlanFormat } from '../model';
export function parseMongoExplain(_doc: unknown, _format: PlanFormat): LoadResult {
  return { ok: false, refusal: 'Reading MongoDB explain output is not implemented yet.' };
}
