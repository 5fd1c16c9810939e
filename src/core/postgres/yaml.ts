// Reads `EXPLAIN (FORMAT YAML)`: the same keys and nesting as the JSON format, so the parsed document goes
// straight to the JSON converter.

import { parseDocument } from 'yaml';
import type { LoadResult } from '../model';
import { parsePostgresJson } from './json';
import { isObj } from './shape';

export function parsePostgresYaml(text: string): LoadResult {
  let value: unknown;
  try {
    const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false });
    const err = doc.errors[0];
    if (err) {
      const line = err.linePos?.[0]?.line;
      const what = err.message.split('\n')[0]!.replace(/\.$/, '');
      const cut = /unexpected end|missing closing|not properly closed|unterminated/i.test(what);
      return {
        ok: false,
        refusal: cut
          ? `The YAML plan stops in the middle${line ? ` at line ${line}` : ''}: it looks truncated, copy it again in full.`
          : `The YAML is malformed${line ? ` at line ${line}` : ''}: ${what}.`,
      };
    }
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { ok: false, refusal: `The YAML could not be read: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}.` };
  }
  const cut = truncatedTree(text, value);
  if (cut) return { ok: false, refusal: cut };
  restoreQueryIdentifiers(text, value);
  const result = parsePostgresJson(value, 'postgres-yaml');
  if (!result.ok && /^This JSON/.test(result.refusal)) {
    return { ok: false, refusal: 'This YAML has no PostgreSQL plan in it: no "Plan" mapping with a "Node Type" was found.' };
  }
  return result;
}

/**
 * A YAML document cut at a line boundary still parses. psql's list form of an ANALYZE plan always ends
 * with "Execution Time" at the top level, so an analysed plan whose text ends deep inside the tree
 * without it has lost its tail.
 */
function truncatedTree(text: string, value: unknown): string | undefined {
  if (!Array.isArray(value) || !/^[ \t]*Actual Loops:/m.test(text) || /^[ \t]*Execution Time:/m.test(text)) return undefined;
  const lines = text.split(/\r\n|\r|\n/);
  let lastNo = lines.length;
  while (lastNo > 0 && lines[lastNo - 1]!.trim() === '') lastNo--;
  const last = lines[lastNo - 1] ?? '';
  const indent = last.length - last.trimStart().length;
  if (indent <= 2) return undefined;
  return `The YAML plan ends at line ${lastNo} inside the plan tree, without its Execution Time: it looks truncated, copy it again in full.`;
}

/** Query identifiers are 64-bit and lose digits as YAML numbers; the text keeps them exact. */
function restoreQueryIdentifiers(text: string, value: unknown): void {
  const ids = [...text.matchAll(/^[ \t]*(?:-[ \t]+)?Query Identifier:[ \t]*(-?\d+)[ \t]*$/gm)].map((m) => m[1]!);
  const queries = Array.isArray(value) ? value : [value];
  let i = 0;
  for (const q of queries) {
    if (isObj(q) && q['Query Identifier'] !== undefined && i < ids.length) q['Query Identifier'] = ids[i++];
  }
}
