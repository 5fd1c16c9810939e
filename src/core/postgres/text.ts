// Placeholder until the PostgreSQL reader lands (issue 2): refuses everything.
import type { LoadResult } from '../model';
export function parsePostgresText(_text: string): LoadResult {
  return { ok: false, refusal: 'Reading PostgreSQL text plans is not implemented yet.' };
}
