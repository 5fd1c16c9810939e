// Placeholder until the PostgreSQL reader lands (issue 2): refuses everything.
import type { LoadResult } from '../model';
export function parsePostgresYaml(_text: string): LoadResult {
  return { ok: false, refusal: 'Reading PostgreSQL yaml plans is not implemented yet.' };
}
