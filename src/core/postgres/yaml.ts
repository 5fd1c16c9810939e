// Reads `EXPLAIN (FORMAT YAML)`: the same keys and nesting as the JSON format, so the parsed document goes
// straight to the JSON converter.

import { load, type YAMLException } from 'js-yaml';
import type { LoadResult } from '../model';
import { parsePostgresJson } from './json';
import { isObj } from './shape';

/**
 * Plan levels a YAML plan may have. Each level indents by four more spaces, so the indentation is checked
 * in one pass before parsing; the parser recurses per level and would exhaust the stack well before the
 * JSON reader's limit.
 */
const MAX_YAML_DEPTH = 400;

function deepestIndent(text: string): number {
  let deepest = 0;
  for (const m of text.matchAll(/^ +/gm)) if (m[0].length > deepest) deepest = m[0].length;
  return deepest;
}

export function parsePostgresYaml(text: string): LoadResult {
  const tooDeep = `The YAML plan is nested more than ${MAX_YAML_DEPTH} levels deep, more than this reader follows.`;
  if (deepestIndent(text) > 4 * MAX_YAML_DEPTH + 8) return { ok: false, refusal: tooDeep };
  let value: unknown;
  try {
    // js-yaml rather than a document model: it builds the values directly, several times faster on big
    // plans. PostgreSQL never writes anchors, so aliases are refused (no expansion bombs), and repeated
    // keys keep the last value as in JSON.
    value = load(text, { json: true, maxAliases: 0, maxDepth: 2 * MAX_YAML_DEPTH + 8 });
  } catch (err) {
    if (err instanceof RangeError) return { ok: false, refusal: tooDeep };
    const e = err as Partial<YAMLException>;
    const what = (e.reason ?? (err instanceof Error ? err.message : String(err))).split('\n')[0]!.replace(/\.$/, '');
    const line = e.mark ? e.mark.line + 1 : undefined;
    if (/maxDepth/.test(what)) return { ok: false, refusal: tooDeep };
    if (/maxAliases/.test(what)) return { ok: false, refusal: `The YAML uses an alias${line ? ` at line ${line}` : ''}, which a PostgreSQL plan never has.` };
    const cut = /unexpected end|missing closing|not properly closed|unterminated/i.test(what);
    return {
      ok: false,
      refusal: cut
        ? `The YAML plan stops in the middle${line ? ` at line ${line}` : ''}: it looks truncated, copy it again in full.`
        : `The YAML is malformed${line ? ` at line ${line}` : ''}: ${what}.`,
    };
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
