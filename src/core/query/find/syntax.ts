// The Babel syntax tree as the script readers use it, and small helpers over it.

import type { SourceRange } from '../mongoShell';


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
  consequent?: BNode;
  alternate?: BNode;
  /** The literal as written (`raw`), kept by Babel beside the value. */
  extra?: { raw?: string };
  loc?: { start: { line: number; column: number } };
}

const SKIP_KEYS = new Set(['loc', 'extra', 'leadingComments', 'trailingComments', 'innerComments', 'typeAnnotation', 'returnType',
  'typeParameters', 'superTypeParameters', 'implements', 'decorators', 'errors', 'comments', 'tokens']);

export function isNode(v: unknown): v is BNode {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

export function children(n: BNode, visit: (c: BNode) => void): void {
  for (const key in n) {
    if (SKIP_KEYS.has(key)) continue;
    const v = (n as unknown as Record<string, unknown>)[key];
    if (Array.isArray(v)) {
      for (const x of v) if (isNode(x)) visit(x);
    } else if (isNode(v)) visit(v);
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
  if (!n.computed && (p.type === 'Identifier' || p.type === 'PrivateName')) return p.name;
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

export function range(n: BNode): SourceRange {
  return { start: n.start, end: n.end };
}


export function cookedOf(q: BNode): string {
  const v = q.value as { cooked?: string | null; raw: string };
  return v.cooked ?? v.raw;
}
