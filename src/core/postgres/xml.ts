// Reads `EXPLAIN (FORMAT XML)`: elements in the explain namespace whose names are the JSON format's keys
// with every character outside [A-Za-z0-9_.-] turned into "-" ("I/O Read Time" is <I-O-Read-Time>).
// The tree is turned back into the JSON shape (keys restored, repeated elements as arrays, numbers and
// booleans typed by key) and handed to the JSON converter.

import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { LoadResult } from '../model';
import { MAX_DEPTH, parsePostgresJson } from './json';
import { BOOLEAN_KEYS, KNOWN_KEYS, NUMERIC_KEYS, bool, isObj, num, type Doc } from './shape';

const KEY_BY_TAG = new Map(KNOWN_KEYS.map((k) => [k.replace(/[^A-Za-z0-9_.-]/g, '-'), k]));

/** Elements that hold a list of one repeated child element. */
const CONTAINERS: Record<string, string> = {
  Plans: 'Plan',
  Workers: 'Worker',
  Triggers: 'Trigger',
  'Grouping Sets': 'Grouping-Set',
  'Group Keys': 'Group-Key',
  'Hash Keys': 'Hash-Key',
};

/** Elements nested deeper than this are refused before parsing: the validator and parser recurse. */
const MAX_ELEMENT_DEPTH = 4 * MAX_DEPTH;

/**
 * One linear pass over the tags, before any parser sees the text: a plan nested deeper than the JSON
 * reader follows is refused with the JSON reader's sentence, and any element nesting deeper than a plan
 * of that depth could have is refused too, so neither the validator nor the parser overflows its stack.
 */
function tooDeep(text: string): string | undefined {
  let plans = 0;
  let elements = 0;
  for (const m of text.matchAll(/<(\/?)(?:[\w.-]+:)?([\w.-]+)[^>]*?(\/?)>/g)) {
    if (m[3]) continue;
    const isPlan = m[2] === 'Plan';
    if (m[1]) {
      elements--;
      if (isPlan) plans--;
      continue;
    }
    elements++;
    if (isPlan && ++plans > MAX_DEPTH) return `The plan is nested more than ${MAX_DEPTH} levels deep, more than this reader follows.`;
    if (elements > MAX_ELEMENT_DEPTH) return `The XML is nested more than ${MAX_ELEMENT_DEPTH} elements deep, more than a plan this reader follows can be.`;
  }
  return undefined;
}

export function parsePostgresXml(text: string): LoadResult {
  const deep = tooDeep(text);
  if (deep) return { ok: false, refusal: deep };
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    const { msg, line } = valid.err;
    if (isCutShort(text)) {
      const lastLine = text.trimEnd().split(/\r\n|\r|\n/).length;
      return { ok: false, refusal: `The XML plan stops at line ${lastLine} before its closing </explain>: it looks truncated, copy it again in full.` };
    }
    return { ok: false, refusal: `The XML is malformed at line ${line}: ${msg.replace(/\.$/, '')}.` };
  }
  let parsed: unknown;
  try {
    parsed = new XMLParser({
      ignoreAttributes: true,
      removeNSPrefix: true,
      parseTagValue: false,
      trimValues: true,
      ignoreDeclaration: true,
      ignorePiTags: true,
      maxNestedTags: 10000,
    }).parse(text);
  } catch (err) {
    return { ok: false, refusal: `The XML could not be read: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}.` };
  }
  if (!isObj(parsed) || !isObj(parsed.explain)) {
    const rootName = isObj(parsed) ? Object.keys(parsed)[0] : undefined;
    return { ok: false, refusal: `This XML is not a PostgreSQL explain output: its root element is <${rootName ?? '?'}>, not <explain>.` };
  }
  const queries = asArray(parsed.explain.Query).map((q) => convert(q, 'Query', undefined));
  if (queries.length === 0) return { ok: false, refusal: 'The XML explain output holds no <Query> element.' };
  return parsePostgresJson(queries, 'postgres-xml');
}

/** True when the document does not end with the closing </explain>. */
function isCutShort(text: string): boolean {
  return !/<\/(\w+:)?explain>$/.test(text.trimEnd().slice(-64));
}

function asArray(v: unknown): unknown[] {
  if (v === undefined || v === '') return [];
  return Array.isArray(v) ? v : [v];
}

function convert(value: unknown, key: string, parentKey: string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => convert(v, key, parentKey));
  const child = CONTAINERS[key];
  if (child !== undefined) {
    const items = isObj(value) ? asArray(value[child]) : [];
    const childKey = KEY_BY_TAG.get(child) ?? child;
    return items.map((v) => convert(v, childKey, key));
  }
  if (isObj(value)) {
    const keys = Object.keys(value);
    // A list property (Output, Sort Key, ...) is a run of <Item> elements.
    if (keys.length === 1 && keys[0] === 'Item') return asArray(value.Item).map((v) => (typeof v === 'string' ? v : String(v)));
    const out: Doc = {};
    for (const tag of keys) {
      // Setting names are GUC names, printed as they are.
      const k = key === 'Settings' ? tag : (KEY_BY_TAG.get(tag) ?? tag.replace(/-/g, ' '));
      out[k] = convert(value[tag], k, key);
    }
    return out;
  }
  if (typeof value !== 'string') return value;
  if (key === 'Group-Key' || key === 'Hash-Key' || parentKey === 'Group Keys' || parentKey === 'Hash Keys') return value === '' ? [] : [value];
  if (NUMERIC_KEYS.has(key)) {
    const n = num(value);
    if (n !== undefined) return n;
  }
  if (BOOLEAN_KEYS.has(key) || parentKey === 'Options') {
    const b = bool(value);
    if (b !== undefined) return b;
  }
  return value;
}
