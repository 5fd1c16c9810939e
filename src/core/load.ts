// The single entry from text to plan: detect the engine and the format, hand the text to the right
// reader, complete the plan with derive(). Never throws: a bad input becomes a refusal in one sentence.

import { formatBytes } from './format';
import { derive } from './metrics';
import { lineColumn } from './text';
import { MAX_PLAN_NODES, TOO_MANY_NODES, type LoadResult } from './model';
import { readShellNotation } from './mongo/shellNotation';
import { parseMongoExplain } from './mongo/parse';
import { parsePostgresJson } from './postgres/json';
import { parsePostgresText } from './postgres/text';
import { parsePostgresYaml } from './postgres/yaml';
import { parsePostgresXml } from './postgres/xml';

/** Largest text the reader accepts (bytes of UTF-16 text); bigger inputs are refused, not hung on. */
export const MAX_PLAN_TEXT = 64 * 1024 * 1024;

export { MAX_PLAN_NODES };

/**
 * Counts the marks every node carries in each format (a PostgreSQL "Node Type" key or element, a text
 * plan's "->", a MongoDB "stage"), so a text of millions of tiny nodes is refused in one pass instead of
 * being parsed for minutes. Text that JSON.parse reads is not scanned: the parse is linear and the
 * readers count the nodes they build, which spares a second pass over the bytes.
 */
function countNodeMarks(text: string): number {
  let n = 0;
  for (const _ of text.matchAll(/Node[ -]Type|->|\bstage\b/g)) n++;
  return n;
}

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
  // A table's rules put a utility statement's name ("Notify") beside the plans: the first object decides.
  const first = Array.isArray(doc) ? doc.find((x) => typeof x === 'object' && x !== null) : doc;
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

/**
 * Where JSON.parse stopped. V8 names the offset in most messages but not in "Unexpected token"; then the
 * offset is read from the quoted context when it occurs once in the text, else found by parsing prefixes
 * (halving): a prefix that ends before the fault only runs out of input, one that reaches it fails there.
 */
function jsonFaultOffset(text: string, err: unknown): number {
  const msg = err instanceof Error ? err.message : String(err);
  const pos = /at position (\d+)/.exec(msg);
  if (pos) return Number(pos[1]);
  // In a long text V8 quotes ten characters before the token and a few after: found once, that is the place.
  const quoted = /^Unexpected token [\s\S]*?, \.\.\."([\s\S]+)"(?:\.\.\.)? is not valid JSON$/.exec(msg);
  if (quoted) {
    const at = text.indexOf(quoted[1]!);
    if (at >= 0 && text.indexOf(quoted[1]!, at + 1) < 0) return at + 10;
  }
  const endsEarly = (len: number): boolean => {
    try {
      JSON.parse(text.slice(0, len));
      return true;
    } catch (e) {
      const m = e instanceof Error ? e.message : String(e);
      const p = /at position (\d+)/.exec(m);
      return /end of JSON input|Unterminated string/i.test(m) || (p !== null && Number(p[1]) >= len);
    }
  };
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (endsEarly(mid + 1)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The character at an offset, named for a sentence. */
function nameOf(c: string): string {
  const code = c.codePointAt(0)!;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) ? `the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `"${c}"`;
}

/** True when an unquoted name stands where JSON wants a quoted key: shell notation, not broken JSON. */
function unquotedKeyAt(text: string, offset: number): boolean {
  if (!/[A-Za-z_$]/.test(text.charAt(offset))) return false;
  const before = text.slice(Math.max(0, offset - 200), offset).trimEnd();
  return before.endsWith('{') || before.endsWith(',');
}

/** The one sentence for text that JSON.parse refused, in our words, with line and column. */
function jsonRefusal(text: string, offset: number): string {
  const end = text.trimEnd().length;
  if (offset >= end) return `The JSON ends early at position ${end}: the plan looks truncated, copy it again in full.`;
  const { line, column } = lineColumn(text, offset);
  const c = String.fromCodePoint(text.codePointAt(offset)!);
  const before = text.slice(Math.max(0, offset - 200), offset).trimEnd();
  let what: string;
  if ((c === '}' || c === ']') && before.endsWith(',')) what = `a comma before the closing ${c}`;
  else if (c === "'") what = 'a string in single quotes, where JSON wants double quotes';
  else if (unquotedKeyAt(text, offset)) what = 'a key without double quotes';
  else if (c.charCodeAt(0) < 0x20 && /"[^"]*$/.test(before)) what = `${nameOf(c)} inside a string`;
  else what = `unexpected ${nameOf(c)}`;
  return `The JSON is malformed at line ${line}, column ${column}: ${what}.`;
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
    return { ok: false, refusal: `The plan is ${formatBytes(input.length)}, larger than the ${formatBytes(MAX_PLAN_TEXT)} this reader accepts.` };
  }
  // Neither a copy nor a trim of a text of megabytes: a BOM is sliced off, emptiness is one regex test.
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  if (!/\S/.test(text)) return { ok: false, refusal: 'The input is empty: paste or open an explain output.' };
  const format = detectFormat(text);
  if (format !== 'unknown' && format !== 'json' && countNodeMarks(text) > MAX_PLAN_NODES) return { ok: false, refusal: TOO_MANY_NODES };
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
        if (countNodeMarks(text) > MAX_PLAN_NODES) return { ok: false, refusal: TOO_MANY_NODES };
        const offset = jsonFaultOffset(text, err);
        const shell = readShellNotation(text);
        if (shell.ok) {
          if (looksLikeMongo(shell.value)) return finish(parseMongoExplain(shell.value, 'mongodb-shell'));
          return { ok: false, refusal: 'This is not an explain output of MongoDB or PostgreSQL.' };
        }
        // Prefer the JSON message unless the text is shell notation: constructors, or unquoted keys.
        if (unquotedKeyAt(text, offset) || /\b(ObjectId|ISODate|Long|NumberLong|NumberInt|NumberDecimal|Timestamp|BinData|Decimal128|Int32|Double|UUID|MinKey|MaxKey)\s*\(/.test(text)) {
          return { ok: false, refusal: shell.error };
        }
        return { ok: false, refusal: jsonRefusal(text, offset) };
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
