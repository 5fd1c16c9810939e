// Placeholder until the PostgreSQL reader lands (issue 2): refuses everything.
import type { LoadResult } from '../model';
export function parsePostgresXml(_text: string): LoadResult {
  return { ok: false, refusal: 'Reading PostgreSQL xml plans is not implemented yet.' };
}
