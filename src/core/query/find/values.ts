// Values read from syntax, never evaluated: literals, objects, arrays, BSON constructors with literal
// arguments, and constants in scope. Anything else becomes `{ $placeholder: "<source text>" }`. Literals
// and constructors are read by the shell-notation reader itself, on the same syntax tree; this reader adds
// what code has and shell output has not: constants in scope, spreads, and where each value is written.

import { evaluateShellExpression, isShellConstructor, NOT_LITERAL, shellLiteral, signed } from '../../mongo/shellNotation';
import type { Doc } from '../mongoShell';
import type { Extractor } from './extractor';
import { escapeKey } from './ranges';
import { keyName, range, unwrap, type BNode } from './syntax';
import type { Located } from './types';

const MAX_VALUE_DEPTH = 200;

/** Reads a value from syntax, recording where each member is; non-literals become placeholders. */
export class ValueReader {
  private readonly resolving = new Set<BNode>();

  constructor(
    private readonly ex: Extractor,
    private readonly locs: Record<string, Located>,
    private readonly onPlaceholder: () => void,
    private readonly onPartial: () => void,
  ) {}

  read(node: BNode, path: string): unknown {
    return this.value(node, path, 0);
  }

  private placeholder(n: BNode): unknown {
    this.onPlaceholder();
    return { $placeholder: this.ex.text(range(n)).trim() };
  }

  private value(node: BNode, path: string, depth: number): unknown {
    const n = unwrap(node);
    if (!(path in this.locs)) this.locs[path] = { value: range(n) };
    else this.locs[path]!.value = range(n);
    if (depth > MAX_VALUE_DEPTH) return this.placeholder(n);
    if (n.type === 'Identifier') return this.identifier(n, path, depth);
    const literal = shellLiteral(n);
    if (literal !== NOT_LITERAL) return literal;
    switch (n.type) {
      case 'TemplateLiteral':
        return this.placeholder(n);
      case 'ObjectExpression':
        return this.object(n, path, depth);
      case 'ArrayExpression':
        return this.array(n, path, depth);
      case 'UnaryExpression': {
        if ((n.operator === '-' || n.operator === '+') && n.argument) {
          const v = this.value(n.argument, path, depth + 1);
          this.locs[path]!.value = range(n);
          const s = signed(n.operator, v);
          if (s !== undefined) return s;
          if (isPlaceholder(v)) return { $placeholder: this.ex.text(range(n)) };
        }
        return this.placeholder(n);
      }
      case 'CallExpression':
      case 'NewExpression': {
        const callee = unwrap(n.callee!);
        // Only constructor calls whose arguments are all literals can be read; others are variables.
        if (callee.type === 'Identifier' && isShellConstructor(callee.name) && (n.arguments ?? []).every(isLiteralArgument)) {
          const r = evaluateShellExpression(n);
          if (r.ok) return r.value;
        }
        if (callee.type === 'Identifier' && callee.name === 'RegExp' && n.arguments?.[0]) {
          // new RegExp(variable, 'i'): the pattern is unknown, the flags are not.
          const flags = n.arguments[1] ? this.ex.stringOf(n.arguments[1], 0) : '';
          if (flags !== undefined) {
            this.onPlaceholder();
            return { $regex: { $placeholder: this.ex.text(range(n.arguments[0])) }, $options: flags };
          }
        }
        return this.placeholder(n);
      }
      case 'MemberExpression':
      case 'OptionalMemberExpression': {
        // `Status.ACTIVE`, `from: Collections.USERS`: a string an enum's member, a constant object's property
        // or another module's export holds (extractor.ts stringOf); a property of anything else is unknown.
        const held = !n.computed && unwrap(n.object!).type === 'Identifier' ? this.ex.stringOf(n, 0) : undefined;
        return held ?? this.placeholder(n);
      }
      case 'BinaryExpression': {
        if (n.operator === '+') {
          const l = this.ex.stringOf(n.left!, 0);
          const r = this.ex.stringOf(n.right!, 0);
          if (l !== undefined && r !== undefined) return l + r;
        }
        return this.placeholder(n);
      }
      default:
        return this.placeholder(n);
    }
  }

  private identifier(n: BNode, path: string, depth: number): unknown {
    const constant = shellLiteral(n);
    if (constant !== NOT_LITERAL) return constant;
    const init = this.ex.isIdentifierKnown(n.name!) ? this.ex.resolve(n) : undefined;
    if (!init || init.type === 'Identifier' || this.resolving.has(init)) return this.placeholder(n);
    this.resolving.add(init);
    try {
      const v = this.value(init, path, depth + 1);
      return v;
    } finally {
      this.resolving.delete(init);
    }
  }

  private object(n: BNode, path: string, depth: number): unknown {
    const out: Doc = {};
    for (const p of n.properties ?? []) {
      if (p.type === 'SpreadElement') {
        const target = this.ex.resolve(p.argument!);
        if (target.type === 'ObjectExpression' && !this.resolving.has(target)) {
          this.resolving.add(target);
          const v = this.object(target, path, depth + 1);
          this.resolving.delete(target);
          if (isDoc(v)) for (const [k, x] of Object.entries(v)) define(out, k, x);
        } else {
          this.onPartial();
          this.onPlaceholder();
        }
        continue;
      }
      if (p.type !== 'ObjectProperty') {
        this.onPartial();
        continue;
      }
      let k: string | undefined;
      if (p.computed) k = this.ex.stringOf(p.key!, 0);
      else k = keyName(p.key!);
      if (k === undefined) {
        this.onPartial();
        this.onPlaceholder();
        continue;
      }
      const sub = `${path}/${escapeKey(k)}`;
      const valueNode = (p.shorthand ? p.key : p.value) as BNode;
      this.locs[sub] = { value: range(unwrap(valueNode)), member: range(p), key: range(p.key!) };
      define(out, k, this.value(valueNode, sub, depth + 1));
    }
    return out;
  }

  private array(n: BNode, path: string, depth: number): unknown[] {
    const out: unknown[] = [];
    for (const el of n.elements ?? []) {
      if (el === null) {
        out.push(null);
        continue;
      }
      if (el.type === 'SpreadElement') {
        const target = this.ex.resolve(el.argument!);
        if (target.type === 'ArrayExpression' && !this.resolving.has(target)) {
          this.resolving.add(target);
          for (const x of this.array(target, `${path}/${out.length}`, depth + 1)) out.push(x);
          this.resolving.delete(target);
        } else {
          this.onPartial();
          this.onPlaceholder();
          out.push({ $placeholder: this.ex.text(range(el)) });
        }
        continue;
      }
      const sub = `${path}/${out.length}`;
      this.locs[sub] = { value: range(unwrap(el)), member: range(el) };
      out.push(this.value(el, sub, depth + 1));
    }
    return out;
  }
}

export function isLiteralArgument(n: BNode): boolean {
  const u = unwrap(n);
  switch (u.type) {
    case 'StringLiteral':
    case 'NumericLiteral':
    case 'BooleanLiteral':
    case 'NullLiteral':
    case 'BigIntLiteral':
    case 'RegExpLiteral':
      return true;
    case 'TemplateLiteral':
      return (u.expressions?.length ?? 0) === 0;
    case 'UnaryExpression':
      return u.argument !== undefined && isLiteralArgument(u.argument);
    case 'ObjectExpression':
      return (u.properties ?? []).every((p) => p.type === 'ObjectProperty' && !p.computed && isLiteralArgument(p.value as BNode));
    default:
      return false;
  }
}

export function define(o: Doc, k: string, v: unknown): void {
  // defineProperty keeps "__proto__" an ordinary key instead of replacing the prototype.
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

export function isDoc(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isPlaceholder(v: unknown): v is { $placeholder: string } {
  return isDoc(v) && typeof v['$placeholder'] === 'string' && Object.keys(v).length === 1;
}

export function isUndefinedValue(v: unknown): boolean {
  return isDoc(v) && v['$undefined'] === true && Object.keys(v).length === 1;
}
