// Scopes and constants: which names a statement declares, which it mutates, and what a constant holds.

import { children, isCall, isMember, propertyName, unwrap, type BNode } from './syntax';


/** A name in scope: a constant with its initializer, or something whose value is not known here. */
export type Binding = { init: BNode } | { unknown: true };

export class Scope {
  readonly names = new Map<string, Binding>();
  constructor(readonly parent: Scope | undefined) {}
}

/** Module-level names shared by all top-level statements, with who declared them. */
export class ModuleScope {
  readonly names = new Map<string, Binding>();
  /** The statement that declares each name, so its tree can be brought up to date before it is read. */
  readonly owner = new Map<string, { flush(): void }>();
  /** Names some statement mutates (`x.push(...)`, `x.a = ...`): their constant value is not trusted. */
  readonly mutated = new Set<string>();
}

export function declareNames(pattern: BNode | null | undefined, into: Map<string, Binding>, init?: BNode | null, isConst = false): void {
  if (!pattern) return;
  switch (pattern.type) {
    case 'Identifier':
      into.set(pattern.name!, isConst && init ? { init } : { unknown: true });
      return;
    case 'ObjectPattern':
      for (const p of pattern.properties ?? []) declareNames(p.type === 'RestElement' ? p.argument : p.value as BNode, into);
      return;
    case 'ArrayPattern':
      for (const e of pattern.elements ?? []) declareNames(e, into);
      return;
    case 'AssignmentPattern':
      declareNames(pattern.left, into);
      return;
    case 'RestElement':
      declareNames(pattern.argument, into);
      return;
    case 'TSParameterProperty':
      declareNames((pattern as unknown as { parameter?: BNode }).parameter, into);
      return;
    default:
      return;
  }
}

/** Declarations made directly by a list of statements (var/let/const, functions, classes, imports). */
export function declareStatements(stmts: BNode[], into: Map<string, Binding>): void {
  for (let s of stmts) {
    if ((s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration') && s.declaration) s = s.declaration;
    if (s.type === 'VariableDeclaration') {
      for (const d of s.declarations ?? []) declareNames(d.id, into, d.init, s.kind === 'const');
    } else if ((s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration' || s.type === 'TSEnumDeclaration') && s.id) {
      into.set(s.id.name!, { unknown: true });
    } else if (s.type === 'ImportDeclaration') {
      for (const sp of (s as unknown as { specifiers?: { local?: BNode }[] }).specifiers ?? []) if (sp.local?.name) into.set(sp.local.name, { unknown: true });
    }
  }
}

const MUTATING_METHODS = new Set(['push', 'unshift', 'splice', 'pop', 'shift', 'fill', 'reverse', 'copyWithin']);

/** Names whose object or array is changed after it was declared, anywhere in the tree. */
export function collectMutations(root: BNode, into: Set<string>): void {
  const stack: BNode[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    // Line/column objects are never read (offsets are): dropping them halves what a kept tree costs.
    (n as { loc?: unknown }).loc = undefined;
    if (n.type === 'AssignmentExpression' || n.type === 'UpdateExpression') {
      const target = unwrap((n.type === 'AssignmentExpression' ? n.left : n.argument)!);
      const base = rootIdentifier(target);
      if (base && isMember(target)) into.add(base);
    } else if (n.type === 'UnaryExpression' && n.operator === 'delete' && n.argument) {
      const base = rootIdentifier(unwrap(n.argument));
      if (base) into.add(base);
    } else if (isCall(n) && n.callee && isMember(unwrap(n.callee))) {
      const callee = unwrap(n.callee);
      const name = propertyName(callee);
      const base = rootIdentifier(unwrap(callee.object!));
      if (base && name !== undefined && MUTATING_METHODS.has(name)) into.add(base);
      if (name === 'assign' && callee.object?.type === 'Identifier' && callee.object.name === 'Object') {
        const first = n.arguments?.[0] && rootIdentifier(unwrap(n.arguments[0]));
        if (first) into.add(first);
      }
    }
    children(n, (c) => stack.push(c));
  }
}

export function rootIdentifier(n: BNode): string | undefined {
  let cur = n;
  for (let i = 0; i < 64; i++) {
    cur = unwrap(cur);
    if (cur.type === 'Identifier') return cur.name;
    if (isMember(cur)) cur = cur.object!;
    else return undefined;
  }
  return undefined;
}

