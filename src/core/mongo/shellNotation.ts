// Reads mongosh and legacy mongo shell notation (what `db.c.explain().find()` prints, and what people
// write as query arguments) into plain data WITHOUT evaluating it: the text is parsed by Babel (the
// parser the query finder uses, so one parser reads every piece of JavaScript) and only literal syntax
// and a fixed list of BSON constructors are interpreted. Anything else (an identifier, a call of an
// unknown function, a member access, a getter, a template with expressions) is refused or, when asked,
// kept as a placeholder. Nothing in the input is ever run. This is the one reader of shell values: the
// query-text reader, the createIndex reader and the query finder read values through it.
//
// Value representation (MongoDB Extended JSON v2, so values survive JSON.stringify to the webview):
//   ObjectId("h"), ObjectID("h") -> { $oid: "h" }
//   ISODate("s"), new Date("s") -> { $date: "s" } (text as written); new Date(ms) -> { $date: ISO string }
//   Long / NumberLong           -> { $numberLong: "digits" } (a JS number cannot hold every int64)
//   NumberDecimal / Decimal128  -> { $numberDecimal: "text" }
//   NumberInt / Int32 / Double  -> a plain number (relaxed mode: no precision is lost)
//   Infinity, -Infinity, NaN    -> { $numberDouble: "Infinity" | "-Infinity" | "NaN" }
//   Timestamp(t, i)             -> { $timestamp: { t, i } } (also Timestamp({ t, i }))
//   BinData(n, "b64")           -> { $binary: { base64: "b64", subType: "hex" } }; HexData(n, "hex") too
//   UUID("u")                   -> { $uuid: "u" }
//   MinKey, MaxKey (with or without parentheses) -> { $minKey: 1 }, { $maxKey: 1 }
//   /re/flags, RegExp("re", "f") -> { $regex: "re", $options: "flags" } (the query-operator form)
//   undefined                   -> { $undefined: true }
//   DBRef("c", id[, "db"])      -> { $ref: "c", $id: id, $db?: "db" }
// `shellNumber` turns the numeric forms back into a JS number for plan figures such as
// `totalKeysExamined: Long("10")`.

import { parseExpression, type ParserOptions } from '@babel/parser';
import { cookedOf, type BNode } from '../query/find/syntax';
import { formatCount } from '../format';
import { lineColumn } from '../text';

export type ShellResult = { ok: true; value: unknown } | { ok: false; error: string };

export interface ShellEvalOptions {
  /** Turn any non-literal into `{ $placeholder: "<source text>" }` instead of an error. */
  placeholders?: boolean;
  /** The text the node was parsed from: used for line/column in errors and for placeholder text. */
  source?: string;
}

/** Deepest nesting read; real explain output stays far below this, hostile input is refused. */
export const MAX_SHELL_DEPTH = 400;

/**
 * Most values (objects, arrays, elements) a text may hold, counted by their punctuation before parsing:
 * the syntax tree costs far more memory than the text, so millions of tiny values are refused at once
 * instead of exhausting the heap. Real shell output has one such mark per ~30 characters, so this
 * admits about 15 MB of it.
 */
export const MAX_SHELL_VALUES = 500_000;

/** Counts `{`, `[` and `,`: an upper bound on the values in the text, in one pass without allocation. */
function countValueMarks(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b || c === 0x2c) n++;
  }
  return n;
}

/** Reads a whole shell-notation text (one value, optionally followed by `;` and comments). */
export function readShellNotation(text: string): ShellResult {
  if (typeof text !== 'string') return { ok: false, error: 'The shell notation is not text.' };
  if (text.trim() === '') return { ok: false, error: 'The shell notation is empty.' };
  if (countValueMarks(text) > MAX_SHELL_VALUES) {
    return { ok: false, error: `The shell notation holds more than ${formatCount(MAX_SHELL_VALUES)} values, more than this reader takes; save the explain output as JSON (EJSON.stringify in mongosh) to read it.` };
  }
  const parsed = parseOneExpression(text);
  if ('syntaxError' in parsed) return { ok: false, error: syntaxError(text, parsed.syntaxError) };
  if ('trailingAt' in parsed) {
    const { line, column } = lineColumn(text, parsed.trailingAt);
    return { ok: false, error: `The shell notation has unexpected text after the value at line ${line}, column ${column}.` };
  }
  return evaluateShellExpression(parsed.node, { source: text });
}

export interface ExpressionOptions {
  /** Accept `await` before the expression, as a script's query is often written. */
  allowAwait?: boolean;
  /** Where the text starts in a larger text: node offsets are then offsets into that text. */
  startIndex?: number;
}

/** The parser error's position: Babel puts it on the error it throws. */
export interface ParseError {
  error: unknown;
  /** Offset of the error in the text, when the parser gave one. */
  pos?: number;
  line?: number;
  /** 1-based. */
  column?: number;
}

/**
 * Parses a text that holds one expression, optionally followed by `;` and comments, with Babel (the
 * parser the query finder uses too). Gives the parser's error, or where unexpected text follows the
 * expression, for the caller to put in its own words.
 */
export function parseOneExpression(text: string, options: ExpressionOptions = {}): { node: BNode } | { syntaxError: ParseError } | { trailingAt: number } {
  const base = options.startIndex ?? 0;
  const first = parseWhole(text, options);
  if ('node' in first) return first;
  // Babel reads the whole text as one expression; where it stops at a token that cannot continue the
  // expression, the text before that token is read on its own, and what follows is trailing text.
  const pos = first.syntaxError.pos;
  if (pos === undefined || pos - base >= text.trimEnd().length || pos <= base) return first;
  const head = parseWhole(text.slice(0, pos - base), options);
  if (!('node' in head)) return first;
  const rest = text.slice(head.node.end - base);
  const tail = /^(?:\s|;|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/.exec(rest)![0];
  return tail.length < rest.length ? { trailingAt: head.node.end + tail.length } : { node: head.node };
}

function parseWhole(text: string, options: ExpressionOptions): { node: BNode } | { syntaxError: ParseError } {
  const babel: ParserOptions = { sourceType: 'script', attachComment: false, allowAwaitOutsideFunction: options.allowAwait === true };
  if (options.startIndex !== undefined) babel.startIndex = options.startIndex;
  try {
    return { node: parseExpression(text, babel) as unknown as BNode };
  } catch (err) {
    const e = err as { loc?: { line?: number; column?: number; index?: number }; pos?: number };
    const pos = typeof e.loc?.index === 'number' ? e.loc.index : typeof e.pos === 'number' ? e.pos : undefined;
    const out: ParseError = { error: err };
    if (pos !== undefined) out.pos = pos;
    if (typeof e.loc?.line === 'number' && typeof e.loc.column === 'number') {
      out.line = e.loc.line;
      out.column = e.loc.column + 1;
    }
    return { syntaxError: out };
  }
}

/**
 * Turns one parsed expression into data. Never evaluates: only literals and the known constructors are
 * read. Used by readShellNotation, the query-text reader for the arguments of find/aggregate, and the
 * createIndex reader; the query finder reads literals and constructors in code through shellLiteral and
 * this function.
 */
export function evaluateShellExpression(node: BNode, options: ShellEvalOptions = {}): ShellResult {
  const ev = new Evaluator(options);
  try {
    return { ok: true, value: ev.value(node, 0) };
  } catch (err) {
    if (err instanceof ShellRefusal) return { ok: false, error: err.message };
    if (err instanceof RangeError) return { ok: false, error: 'The shell notation is nested too deeply to read.' };
    throw err;
  }
}

/** A shell or Extended JSON number as a JS number, or undefined when the value is not numeric. */
export function shellNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  for (const key of ['$numberLong', '$numberInt', '$numberDouble', '$numberDecimal']) {
    const s = v[key];
    if (typeof s === 'string' && Object.keys(v).length === 1) {
      const n = Number(s);
      if (!Number.isNaN(n) || s === 'NaN') return n;
    }
  }
  return undefined;
}

/** What shellLiteral gives for a node that is not a literal. */
export const NOT_LITERAL: unique symbol = Symbol('not a literal');

/**
 * The value of a literal node: strings, numbers, booleans, null, regular expressions ($regex/$options),
 * BigInt ($numberLong), a template without expressions, and the names Infinity, NaN, undefined, MinKey
 * and MaxKey. NOT_LITERAL for anything else.
 */
export function shellLiteral(n: BNode): unknown {
  switch (n.type) {
    case 'StringLiteral':
    case 'BooleanLiteral':
      return n.value;
    case 'NumericLiteral': {
      const v = n.value as number;
      return Number.isFinite(v) ? v : { $numberDouble: v > 0 ? 'Infinity' : '-Infinity' };
    }
    case 'NullLiteral':
      return null;
    case 'RegExpLiteral':
      return { $regex: n.pattern ?? '', $options: n.flags ?? '' };
    case 'BigIntLiteral':
      return { $numberLong: String(n.value) };
    case 'TemplateLiteral':
      if ((n.expressions?.length ?? 0) > 0) return NOT_LITERAL;
      return (n.quasis ?? []).map(cookedOf).join('');
    case 'Identifier':
      switch (n.name) {
        case 'Infinity':
          return { $numberDouble: 'Infinity' };
        case 'NaN':
          return { $numberDouble: 'NaN' };
        case 'undefined':
          return { $undefined: true };
        case 'MinKey':
          return { $minKey: 1 };
        case 'MaxKey':
          return { $maxKey: 1 };
        default:
          return NOT_LITERAL;
      }
    default:
      return NOT_LITERAL;
  }
}

/**
 * A unary + or - applied to a value read: a number, or an Extended JSON number with its sign changed.
 * Undefined when the value is not a number.
 */
export function signed(operator: string, v: unknown): unknown {
  if (operator !== '-' && operator !== '+') return undefined;
  if (typeof v === 'number') return operator === '+' ? v : -v;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    for (const key of ['$numberDouble', '$numberLong', '$numberDecimal']) {
      const s = o[key];
      if (typeof s === 'string' && Object.keys(o).length === 1) {
        if (operator === '+' || s === 'NaN') return { [key]: s };
        return { [key]: s.startsWith('-') ? s.slice(1) : `-${s}` };
      }
    }
  }
  return undefined;
}

class ShellRefusal extends Error {}

/**
 * The constructors read as data. ObjectID is the Node driver's former name of ObjectId, which code
 * read by the query finder still uses.
 */
const CONSTRUCTORS = new Set([
  'ObjectId', 'ObjectID', 'ISODate', 'Date', 'Long', 'NumberLong', 'NumberInt', 'Int32', 'Double', 'NumberDecimal',
  'Decimal128', 'Timestamp', 'BinData', 'HexData', 'UUID', 'MinKey', 'MaxKey', 'RegExp', 'DBRef',
]);

/** True when a call or `new` names one of the constructors read as data. */
export function isShellConstructor(name: string | undefined): boolean {
  return name !== undefined && CONSTRUCTORS.has(name);
}

class Evaluator {
  constructor(private readonly options: ShellEvalOptions) {}

  value(n: BNode, depth: number): unknown {
    if (depth > MAX_SHELL_DEPTH) throw new ShellRefusal(`The shell notation is nested more than ${MAX_SHELL_DEPTH} levels deep${this.at(n)}, which this reader refuses.`);
    const literal = shellLiteral(n);
    if (literal !== NOT_LITERAL) {
      if (n.type === 'RegExpLiteral') this.checkPattern(n);
      return literal;
    }
    switch (n.type) {
      case 'ObjectExpression':
        return this.object(n, depth);
      case 'ArrayExpression': {
        const out: unknown[] = [];
        for (const el of n.elements ?? []) {
          if (el === null) throw this.refuse(n, 'has an empty array slot');
          if (el.type === 'SpreadElement') throw this.refuse(el, 'uses a spread (...)');
          out.push(this.value(el, depth + 1));
        }
        return out;
      }
      case 'TemplateLiteral':
        return this.nonLiteral(n, 'has a template literal with ${...} expressions');
      case 'UnaryExpression': {
        if (n.operator !== '-' && n.operator !== '+') return this.nonLiteral(n, `uses the operator ${n.operator}`);
        const v = signed(n.operator, this.value(n.argument!, depth + 1));
        return v !== undefined ? v : this.nonLiteral(n, `applies ${n.operator} to something that is not a number`);
      }
      case 'BinaryExpression': {
        if (n.operator !== '+') return this.nonLiteral(n, `uses the operator ${n.operator}`);
        const left = n.left!.type === 'PrivateName' ? undefined : this.value(n.left!, depth + 1);
        const right = this.value(n.right!, depth + 1);
        if (typeof left === 'string' && typeof right === 'string') return left + right;
        return this.nonLiteral(n, 'adds values that are not both strings');
      }
      case 'Identifier':
        return this.nonLiteral(n, `refers to the name ${n.name}`);
      case 'CallExpression':
      case 'OptionalCallExpression':
      case 'NewExpression':
        return this.call(n, depth);
      default:
        return this.nonLiteral(n, describe(n));
    }
  }

  /** The parser checks a regular expression's flags, not its pattern: a pattern JavaScript rejects is refused here. */
  private checkPattern(n: BNode): void {
    try {
      new RegExp(n.pattern ?? '', n.flags ?? '');
    } catch (err) {
      throw this.refuse(n, `has an invalid regular expression (${String((err as Error).message).replace(/\.$/, '')})`);
    }
  }

  private object(n: BNode, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const p of n.properties ?? []) {
      if (p.type === 'SpreadElement') throw this.refuse(p, 'uses a spread (...)');
      if (p.type === 'ObjectMethod') throw this.refuse(p, p.kind === 'get' || p.kind === 'set' ? `defines a ${p.kind}ter` : 'defines a method');
      if (p.computed) throw this.refuse(p, 'has a computed [key]');
      const k = p.key!;
      let key: string;
      if (k.type === 'Identifier') key = k.name!;
      else if (k.type === 'StringLiteral' || k.type === 'NumericLiteral') key = String(k.value);
      else throw this.refuse(k, 'has a key that is not a name, string or number');
      const v = p.value as BNode;
      const value = p.shorthand ? this.nonLiteral(v, `names ${key} without a value`) : this.value(v, depth + 1);
      // defineProperty keeps "__proto__" an ordinary key instead of replacing the prototype.
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  private call(n: BNode, depth: number): unknown {
    const isNew = n.type === 'NewExpression';
    const callee = n.callee!;
    if (callee.type !== 'Identifier' || !CONSTRUCTORS.has(callee.name!)) {
      const name = callee.type === 'Identifier' ? callee.name : undefined;
      return this.nonLiteral(n, name ? `calls the unknown function ${name}` : 'calls something that is not a known constructor');
    }
    if (n.optional) return this.nonLiteral(n, 'uses an optional call');
    const name = callee.name === 'ObjectID' ? 'ObjectId' : callee.name!;
    const args: unknown[] = [];
    for (const a of n.arguments ?? []) {
      if (a.type === 'SpreadElement') throw this.refuse(a, 'uses a spread (...)');
      args.push(this.value(a, depth + 1));
    }
    const raw = (n.arguments ?? []).map((a) => (a.type === 'NumericLiteral' ? a.extra?.raw : undefined));
    const arity = (min: number, max: number): void => {
      if (args.length < min || args.length > max) {
        const want = min === max ? `${min}` : `${min} to ${max}`;
        throw this.refuse(n, `calls ${name} with ${args.length} argument${args.length === 1 ? '' : 's'} where ${want} are read`);
      }
    };
    const str = (i: number, what: string): string => {
      const v = args[i];
      if (typeof v !== 'string') throw this.refuse(n, `calls ${name} with a ${what} that is not a string`);
      return v;
    };
    switch (name) {
      case 'ObjectId':
        if (args.length === 0) return this.nonLiteral(n, 'calls ObjectId() without a value, which makes a new id each time');
        arity(1, 1);
        if (typeof args[0] === 'string') return { $oid: args[0] };
        if (isPlain(args[0], '$oid')) return args[0];
        throw this.refuse(n, 'calls ObjectId with a value that is not a hex string');
      case 'ISODate':
      case 'Date': {
        if (name === 'Date' && !isNew) return this.nonLiteral(n, 'calls Date() without new, which gives the current time as text');
        if (args.length === 0) return this.nonLiteral(n, `calls ${isNew ? 'new ' : ''}${name}() without a value, which means the current time`);
        arity(1, 1);
        const v = args[0];
        if (typeof v === 'string') return { $date: v };
        if (typeof v === 'number') {
          const d = new Date(v);
          if (Number.isNaN(d.getTime())) throw this.refuse(n, `calls ${name} with a time outside the dates JavaScript can hold`);
          return { $date: d.toISOString() };
        }
        throw this.refuse(n, `calls ${name} with a value that is not a string or a number`);
      }
      case 'Long':
      case 'NumberLong': {
        arity(1, 2);
        if (args.length === 2) {
          // Long(low, high): the two 32-bit halves, as the legacy shell's NumberLong printing never does but mongosh accepts.
          const [lo, hi] = args;
          if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isInteger(lo) || !Number.isInteger(hi)) throw this.refuse(n, `calls ${name} with halves that are not integers`);
          const big = (BigInt.asIntN(32, BigInt(hi)) << 32n) | BigInt.asUintN(32, BigInt(lo));
          return { $numberLong: big.toString() };
        }
        const v = args[0];
        const text = typeof v === 'string' ? v.trim() : typeof v === 'number' ? (raw[0] !== undefined && /^\d+$/.test(raw[0]) ? raw[0] : String(v)) : undefined;
        const negText = isPlain(v, '$numberDouble') || isPlain(v, '$numberLong') ? Object.values(v as object)[0] as string : undefined;
        const t = text ?? negText;
        if (t === undefined || !/^-?\d+$/.test(t)) throw this.refuse(n, `calls ${name} with a value that is not an integer`);
        return { $numberLong: t.replace(/^(-?)0+(?=\d)/, '$1') };
      }
      case 'NumberInt':
      case 'Int32':
      case 'Double': {
        arity(1, 1);
        const v = typeof args[0] === 'string' ? Number(args[0]) : shellNumber(args[0]);
        if (v === undefined || (Number.isNaN(v) && args[0] !== 'NaN')) throw this.refuse(n, `calls ${name} with a value that is not a number`);
        if (name === 'Double') return Number.isFinite(v) ? v : { $numberDouble: Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity' };
        return Math.trunc(v) | 0;
      }
      case 'NumberDecimal':
      case 'Decimal128': {
        arity(1, 1);
        const v = args[0];
        if (typeof v === 'string') return { $numberDecimal: v };
        if (typeof v === 'number') return { $numberDecimal: raw[0] ?? String(v) };
        const num = shellNumber(v);
        if (num !== undefined) return { $numberDecimal: Object.values(v as object)[0] as string };
        throw this.refuse(n, `calls ${name} with a value that is not a number or a string`);
      }
      case 'Timestamp': {
        if (args.length === 1 && typeof args[0] === 'object' && args[0] !== null) {
          const o = args[0] as Record<string, unknown>;
          const t = shellNumber(o.t);
          const i = shellNumber(o.i);
          if (t === undefined || i === undefined) throw this.refuse(n, 'calls Timestamp with an object that lacks numeric t and i');
          return { $timestamp: { t, i } };
        }
        if (args.length === 0) return { $timestamp: { t: 0, i: 0 } };
        arity(2, 2);
        const t = shellNumber(args[0]);
        const i = shellNumber(args[1]);
        if (t === undefined || i === undefined) throw this.refuse(n, 'calls Timestamp with values that are not numbers');
        return { $timestamp: { t, i } };
      }
      case 'BinData': {
        arity(2, 2);
        const sub = shellNumber(args[0]);
        if (sub === undefined || !Number.isInteger(sub) || sub < 0 || sub > 255) throw this.refuse(n, 'calls BinData with a subtype that is not a number from 0 to 255');
        return { $binary: { base64: str(1, 'payload'), subType: sub.toString(16).padStart(2, '0') } };
      }
      case 'HexData': {
        arity(2, 2);
        const sub = shellNumber(args[0]);
        const hex = str(1, 'payload');
        if (sub === undefined || !Number.isInteger(sub) || sub < 0 || sub > 255) throw this.refuse(n, 'calls HexData with a subtype that is not a number from 0 to 255');
        if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw this.refuse(n, 'calls HexData with a payload that is not hex digits');
        return { $binary: { base64: hexToBase64(hex), subType: sub.toString(16).padStart(2, '0') } };
      }
      case 'UUID':
        if (args.length === 0) return this.nonLiteral(n, 'calls UUID() without a value, which makes a new id each time');
        arity(1, 1);
        return { $uuid: str(0, 'value') };
      case 'MinKey':
        arity(0, 0);
        return { $minKey: 1 };
      case 'MaxKey':
        arity(0, 0);
        return { $maxKey: 1 };
      case 'RegExp': {
        arity(1, 2);
        const v = args[0];
        if (isPlain(v, '$regex') || (typeof v === 'object' && v !== null && '$regex' in v && '$options' in v)) {
          const re = v as { $regex: string; $options: string };
          return { $regex: re.$regex, $options: args.length === 2 ? str(1, 'flags') : re.$options };
        }
        return { $regex: str(0, 'pattern'), $options: args.length === 2 ? str(1, 'flags') : '' };
      }
      case 'DBRef': {
        arity(2, 3);
        const ref: Record<string, unknown> = { $ref: str(0, 'collection name'), $id: args[1] };
        if (args.length === 3) ref.$db = str(2, 'database name');
        return ref;
      }
      default:
        return this.nonLiteral(n, `calls the unknown function ${name}`);
    }
  }

  /** A non-literal: an error, or a placeholder holding its source text when placeholders are on. */
  private nonLiteral(node: BNode, what: string): unknown {
    if (this.options.placeholders) {
      const src = this.options.source;
      const text = src !== undefined ? src.slice(node.start, node.end) : describe(node);
      return { $placeholder: text };
    }
    throw this.refuse(node, what);
  }

  private refuse(node: BNode, what: string): ShellRefusal {
    return new ShellRefusal(`The shell notation ${what}${this.at(node)}, and only literal values and known constructors such as ObjectId(...) are read.`);
  }

  private at(node: BNode): string {
    if (this.options.source !== undefined) {
      const { line, column } = lineColumn(this.options.source, node.start);
      return ` at line ${line}, column ${column}`;
    }
    if (node.loc) return ` at line ${node.loc.start.line}, column ${node.loc.start.column + 1}`;
    return '';
  }
}

function isPlain(v: unknown, key: string): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && typeof (v as Record<string, unknown>)[key] === 'string';
}

function describe(n: BNode): string {
  switch (n.type) {
    case 'MemberExpression':
    case 'OptionalMemberExpression':
      return 'reads a property of something (a.b)';
    case 'FunctionExpression':
    case 'ArrowFunctionExpression':
      return 'defines a function';
    case 'AssignmentExpression':
      return 'assigns a value';
    case 'TaggedTemplateExpression':
      return 'calls a tagged template';
    case 'SequenceExpression':
      return 'has several values separated by commas';
    case 'ConditionalExpression':
      return 'has a conditional (?:)';
    case 'ThisExpression':
      return 'refers to this';
    case 'ClassExpression':
      return 'defines a class';
    case 'AwaitExpression':
    case 'YieldExpression':
      return `has an ${n.type === 'AwaitExpression' ? 'await' : 'yield'}`;
    default:
      return `has an expression (${n.type}) that is not a literal value`;
  }
}

function syntaxError(text: string, parsed: ParseError): string {
  const err = parsed.error;
  if (err instanceof RangeError) return 'The shell notation is nested too deeply to read.';
  if (err instanceof SyntaxError && /stack space/i.test(err.message)) return 'The shell notation is nested too deeply to read.';
  if (err instanceof SyntaxError) {
    const msg = err.message.replace(/\s*\(\d+:\d+\)\s*$/, '').replace(/\.$/, '');
    const where = parsed.line !== undefined && parsed.column !== undefined ? { line: parsed.line, column: parsed.column } : lineColumn(text, parsed.pos ?? 0);
    const atEnd = parsed.pos !== undefined && parsed.pos >= text.trimEnd().length;
    if (atEnd) return `The shell notation ends early at line ${where.line}, column ${where.column}: the output looks truncated, copy it again in full.`;
    return `The shell notation is malformed at line ${where.line}, column ${where.column}: ${msg.charAt(0).toLowerCase()}${msg.slice(1)}.`;
  }
  throw err;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Hex digits to base64 without Buffer (the core runs in the browser too). */
function hexToBase64(hex: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < hex.length; i += 2) bytes.push(parseInt(hex.slice(i, i + 2), 16));
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a, b, c] = [bytes[i]!, bytes[i + 1], bytes[i + 2]];
    const n = (a << 16) | ((b ?? 0) << 8) | (c ?? 0);
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]! + (b === undefined ? '=' : B64[(n >> 6) & 63]!) + (c === undefined ? '=' : B64[n & 63]!);
  }
  return out;
}
