// The Babel syntax tree as the script readers use it, and small helpers over it.

import type { SourceRange } from '../../text';
import { VISITOR_KEYS } from './visitorKeys';


/**
 * The Babel syntax tree as this reader uses it: only the fields it reads, all optional, so no type
 * package of the parser is needed. Offsets are string indexes into the whole file.
 */
export interface BNode {
  type: string;
  start: number;
  end: number;
  callee?: BNode;
  arguments?: BNode[];
  object?: BNode;
  property?: BNode;
  computed?: boolean;
  optional?: boolean;
  expression?: BNode;
  name?: string;
  value?: unknown;
  properties?: BNode[];
  elements?: (BNode | null)[];
  key?: BNode;
  shorthand?: boolean;
  argument?: BNode;
  operator?: string;
  left?: BNode;
  right?: BNode;
  quasis?: BNode[];
  expressions?: BNode[];
  tag?: BNode;
  quasi?: BNode;
  declarations?: BNode[];
  declaration?: BNode | null;
  id?: BNode | null;
  init?: BNode | null;
  kind?: string;
  body?: BNode | BNode[];
  params?: BNode[];
  param?: BNode | null;
  pattern?: string;
  flags?: string;
  elementsPattern?: BNode[];
  test?: BNode;
  consequent?: BNode;
  alternate?: BNode;
  /** The literal as written (`raw`), kept by Babel beside the value. */
  extra?: { raw?: string };
  loc?: { start: { line: number; column: number } };
}

/** Keys that hold only types, decorators or Flow/TypeScript syntax: nothing a query reads is under them. */
const TYPE_KEYS = new Set(['typeAnnotation', 'returnType', 'typeParameters', 'superTypeParameters', 'typeArguments', 'superTypeArguments', 'implements', 'decorators']);

/** The child keys of each node type (Babel's visitor keys), types left out, built once. */
const CHILD_KEYS = new Map<string, readonly string[]>(Object.entries(VISITOR_KEYS).map(([type, keys]) => [type, keys.filter((k) => !TYPE_KEYS.has(k))]));

const SKIP_KEYS = new Set([...TYPE_KEYS, 'loc', 'extra', 'leadingComments', 'trailingComments', 'innerComments', 'errors', 'comments', 'tokens']);

export function isNode(v: unknown): v is BNode {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

/** Pushes the child nodes of `n` onto `out`, in source order. */
export function pushChildren(n: BNode, out: BNode[]): void {
  const keys = CHILD_KEYS.get(n.type);
  const rec = n as unknown as Record<string, unknown>;
  if (keys === undefined) {
    // A node type newer than the table: every key that holds a node.
    for (const key in n) {
      if (SKIP_KEYS.has(key)) continue;
      const v = rec[key];
      if (Array.isArray(v)) {
        for (const x of v) if (isNode(x)) out.push(x);
      } else if (isNode(v)) out.push(v);
    }
    return;
  }
  for (let i = 0; i < keys.length; i++) {
    const v = rec[keys[i]!];
    if (v === null || v === undefined) continue;
    if (Array.isArray(v)) {
      for (let j = 0; j < v.length; j++) if (isNode(v[j])) out.push(v[j] as BNode);
    } else if (isNode(v)) out.push(v);
  }
}

/** TypeScript's type-only wrappers and parentheses change nothing a query reads. */
export function unwrap(n: BNode): BNode {
  let cur = n;
  for (let i = 0; i < 64; i++) {
    switch (cur.type) {
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSNonNullExpression':
      case 'TSTypeAssertion':
      case 'TSInstantiationExpression':
      case 'ParenthesizedExpression':
        cur = cur.expression!;
        continue;
      default:
        return cur;
    }
  }
  return cur;
}

export function propertyName(n: BNode): string | undefined {
  const p = n.property;
  if (!p) return undefined;
  if (!n.computed && p.type === 'Identifier') return p.name;
  // this.#db: a private field, named as the class declares it (without its #).
  if (!n.computed && p.type === 'PrivateName') return p.name ?? (p as unknown as { id?: { name?: string } }).id?.name;
  if (n.computed && p.type === 'StringLiteral') return p.value as string;
  return undefined;
}

export function isMember(n: BNode): boolean {
  return n.type === 'MemberExpression' || n.type === 'OptionalMemberExpression';
}

export function isCall(n: BNode): boolean {
  return n.type === 'CallExpression' || n.type === 'OptionalCallExpression';
}


export function keyName(k: BNode): string | undefined {
  if (k.type === 'Identifier') return k.name;
  if (k.type === 'StringLiteral') return k.value as string;
  if (k.type === 'NumericLiteral') return String(k.value);
  return undefined;
}

/**
 * What an object or array literal holds under a key: a property's value (`{ users }`, `{ users: x }`), or
 * for an index ("1") an array's element, up to the first spread; undefined for anything else.
 */
export function heldAt(holder: BNode, key: string): BNode | undefined {
  if (holder.type === 'ObjectExpression') {
    const p = (holder.properties ?? []).find((x) => x.type === 'ObjectProperty' && !x.computed && x.key && keyName(x.key) === key);
    return p ? ((p.shorthand ? p.key : p.value) as BNode) : undefined;
  }
  if (holder.type === 'ArrayExpression' && /^\d+$/.test(key)) {
    const elements = (holder as unknown as { elements?: (BNode | null)[] }).elements ?? [];
    const i = Number(key);
    if (elements.slice(0, i + 1).some((x) => x?.type === 'SpreadElement')) return undefined;
    return elements[i] ?? undefined;
  }
  return undefined;
}

export function range(n: BNode): SourceRange {
  return { start: n.start, end: n.end };
}


export function cookedOf(q: BNode): string {
  const v = q.value as { cooked?: string | null; raw: string };
  return v.cooked ?? v.raw;
}

/** The nodes from a top-level statement down to (not including) `target`, as Extractor.within takes them; undefined when no statement holds it. */
export function pathTo(statements: readonly BNode[], target: BNode): BNode[] | undefined {
  for (const st of statements) {
    if (target.start < st.start || target.end > st.end) continue;
    const path: BNode[] = [];
    let cur: BNode | undefined = st;
    while (cur && cur !== target) {
      path.push(cur);
      const children: BNode[] = [];
      pushChildren(cur, children);
      cur = children.find((c) => c === target) ?? children.find((c) => c.start <= target.start && target.end <= c.end);
    }
    return cur === target ? path : undefined;
  }
  return undefined;
}

/** Functions that give their body a `this` of its own (an arrow function keeps the one around it). */
const GIVES_THIS = new Set(['FunctionExpression', 'FunctionDeclaration', 'ObjectMethod']);

/** True for a function (not a class's method) whose `this` is the one it is called on. */
export function givesThis(n: BNode): boolean {
  return GIVES_THIS.has(n.type);
}
