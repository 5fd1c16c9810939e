// The single entry from text to plan: detect the engine and the format, hand the text to the right
// reader, complete the plan with derive(). Never throws: a bad input becomes a refusal in one sentence.

import { derive } from './metrics';
import { lineColumn } from './text';
import type { LoadResult } from './model';
import { readShellNotation } from './mongo/shellNotation';
import { parseMongoExplain } from './mongo/parse';
import { parsePostgresJson } from './postgres/json';
import { parsePostgresText } from './postgres/text';
import { parsePostgresYaml } from './postgres/yaml';
import { parsePostgresXml } from './postgres/xml';

/** Largest text the reader accepts (bytes of UTF-16 text); bigger inputs are refused, not hung on. */
export const MAX_PLAN_TEXT = 64 * 1024 * 1024;

export type DetectedFormat = 'json' | 'mongodb-shell' | 'postgres-text' | 'postgres-yaml' | 'postgres-xml' | 'unknown';

/** Guesses the format of a text from its first significant characters; cheap, no parsing. */
export function detectFormat(text: string): DetectedFormat {
  const t = text.trimStart();
  if (t.startsWith('<')) return 'postgres-xml';
  if (/^-\s+Plan:/.test(t) || /^Plan:\s*$/m.test(t.slice(0, 200))) return 'postgres-yaml';
  if (t.startsWith('{') || t.startsWith('[')) {
    // Shell notation: constructor calls or unquoted keys outside strings. JSON.parse decides for sure.
    return 'json';
  }
  if (/\b(cost=|actual time=|actual rows=|never executed|Seq Scan|Index Scan|Result\b)/.test(t.slice(0, 20000))) return 'postgres-text';
  if (/^"/.test(t) && /(cost=|actual )/.test(t.slice(0, 20000))) return 'postgres-text';
  // COSTS OFF without ANALYZE prints bare node names; the "->" of child nodes still gives it away.
  if (/^\s*->\s{2}\S/m.test(t.slice(0, 20000))) return 'postgres-text';
  if (/^(QUERY PLAN|Query Text:|.*duration: [\d.]+ ms\s+plan:)/m.test(t.slice(0, 2000))) return 'postgres-text';
  return 'unknown';
}

function looksLikePostgresJson(doc: unknown): boolean {
  const first = Array.isArray(doc) ? doc[0] : doc;
  // Clients also save the bare plan node, or wrap the document in a "QUERY PLAN" column.
  return typeof first === 'object' && first !== null && ('Plan' in first || 'QUERY PLAN' in first || 'Node Type' in first);
}

function looksLikeMongo(doc: unknown): boolean {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
  const keys = Object.keys(doc);
  return keys.some((k) =>
    ['queryPlanner', 'stages', 'shards', 'executionStats', 'explainVersion', 'cursor', 'nscanned', 'clusteredType', 'serverInfo', 'command', 'ok'].includes(k),
  );
}

/** Turns JSON.parse's message into the one sentence the user reads (never V8's multi-line snippet). */
function jsonRefusal(text: string, err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const pos = /position (\d+)/.exec(msg);
  const end = text.trimEnd().length;
  if (/end of JSON input|Unterminated string/i.test(msg) || (pos && Number(pos[1]) >= end - 1)) {
    return `The JSON ends early at position ${end}: the plan looks truncated, copy it again in full.`;
  }
  const what = msg
    .replace(/,\s*".*$/s, '')
    .replace(/\s*in JSON at position \d+.*$/s, '')
    .replace(/\s+/g, ' ')
    .replace(/[.\s]+$/, '')
    .slice(0, 120);
  if (pos) {
    const { line, column } = lineColumn(text, Number(pos[1]));
    return `The JSON is malformed at line ${line}, column ${column}: ${what}.`;
  }
  return `The JSON is malformed: ${what}.`;
}

/** Reads a saved or pasted explain output of either engine. Never throws. */
export function loadPlan(text: string): LoadResult {
  try {
    return loadPlanUnsafe(text);
  } catch (err) {
    // A throw here is a bug in a reader; the user still gets one sentence and nothing else breaks.
    const msg = err instanceof Error ? err.message : String(err);
    return { ok: false, refusal: `The plan could not be read because of an internal error (${msg.slice(0, 200)}).` };
  }
}

function finish(result: LoadResult): LoadResult {
  if (result.ok) derive(result.plan);
  return result;
}

function loadPlanUnsafe(input: string): LoadResult {
  if (typeof input !== 'string') return { ok: false, refusal: 'The input is not text.' };
  if (input.length > MAX_PLAN_TEXT) {
    return { ok: false, refusal: `The plan is ${Math.round(input.length / 1048576)} MB, larger than the ${MAX_PLAN_TEXT / 1048576} MB this reader accepts.` };
  }
  const text = input.replace(/^\uFEFF/, '');
  if (text.trim() === '') return { ok: false, refusal: 'The input is empty: paste or open an explain output.' };
  const format = detectFormat(text);
  switch (format) {
    case 'postgres-xml':
      return finish(parsePostgresXml(text));
    case 'postgres-yaml':
      return finish(parsePostgresYaml(text));
    case 'postgres-text':
      return finish(parsePostgresText(text));
    case 'json': {
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch (err) {
        const shell = readShellNotation(text);
        if (shell.ok) {
          if (looksLikeMongo(shell.value)) return finish(parseMongoExplain(shell.value, 'mongodb-shell'));
          return { ok: false, refusal: 'This is not an explain output of MongoDB or PostgreSQL.' };
        }
        // Prefer the JSON message for text that has no shell constructors in it.
        if (/\b(ObjectId|ISODate|Long|NumberLong|NumberInt|NumberDecimal|Timestamp|BinData|Decimal128|Int32|Double|UUID|MinKey|MaxKey)\s*\(/.test(text)) {
          return { ok: false, refusal: shell.error };
        }
        return { ok: false, refusal: jsonRefusal(text, err) };
      }
      if (looksLikePostgresJson(doc)) return finish(parsePostgresJson(doc, 'postgres-json'));
      if (looksLikeMongo(doc)) return finish(parseMongoExplain(doc, 'mongodb-json'));
      return { ok: false, refusal: 'This JSON is not an explain output of MongoDB or PostgreSQL (no queryPlanner, stages or Plan key).' };
    }
    case 'mongodb-shell': {
      const shell = readShellNotation(text);
      if (!shell.ok) return { ok: false, refusal: shell.error };
      return finish(parseMongoExplain(shell.value, 'mongodb-shell'));
    }
    default:
      return { ok: false, refusal: 'This is not an explain output of MongoDB or PostgreSQL.' };
  }
}
