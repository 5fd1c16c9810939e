// Scopes and constants: which names a statement declares, which it mutates, and what a constant holds.

import { pushChildren, isCall, isMember, keyName, propertyName, unwrap, type BNode } from './syntax';


/**
 * A name in scope: a constant with its initializer, or something whose value is not known here (`from`:
 * the module it was imported from; `fn`: the function a declaration names, whose returns can be read;
 * `fallback`: a parameter's default, `{ name = 'x' }`, what it holds when the caller gives nothing;
 * `type`: the type a TypeScript annotation names, `coll: Collection<Order>` as "Collection", and
 * `typeNode` the annotation itself; `imported`: the name the module exports it under, "default" or "*"
 * for a default or namespace import).
 */
export type Binding = { init: BNode } | { unknown: true; from?: string; imported?: string; fn?: BNode; cls?: BNode; enumDecl?: BNode; part?: Part; fallback?: BNode; type?: string; typeNode?: BNode };

/**
 * Where a destructured name came from: `const { Orders } = context.collections` is `Orders` of
 * `context.collections`; `function f({ collections: { Orders } })` is `Orders` of `collections` of an
 * unknown parameter (`of` absent).
 */
export interface Part {
  of?: BNode;
  path: string[];
  /** The pattern's annotation where nothing is given (`({ Orders }: { Orders: Collection<Order> }) => ...`). */
  typeNode?: BNode;
}

export class Scope {
  readonly names = new Map<string, Binding>();
  /** For a class body: what its fields hold (`x = init`, `this.x = init` in the constructor, an injected `@InjectModel('Order') x`). */
  fields?: Map<string, BNode>;
  /** For a class body: the class's name, what `this` is in its static methods (`getRepository(this)` in an entity). */
  className?: string;
  /** For a class body: the class itself, whose members `this.x` names (origin.ts). */
  classNode?: BNode;
  /** `node`: the block or function that opened the scope, where what its names are given later is written. */
  constructor(readonly parent: Scope | undefined, readonly node?: BNode) {}
}

/** Module-level names shared by all top-level statements, with who declared them. */
export class ModuleScope {
  readonly names = new Map<string, Binding>();
  /** The statement that declares each name, so its tree can be brought up to date before it is read. */
  readonly owner = new Map<string, { flush(): void }>();
  /** Names some statement mutates or assigns again (`x.push(...)`, `x.a = ...`, `x = ...`): their initial value is not trusted. */
  readonly mutated = new Set<string>();
  /** Top-level calls `name.method(...)` (a model's `User.init(...)`), by "name.method". */
  readonly calls = new Map<string, { node: BNode; flush(): void }>();
  /** Classes declared at the top level, by name (an entity's `@Entity('orders')` is read from them). */
  readonly classes = new Map<string, { node: BNode; flush(): void }>();
  /**
   * What the file's statements assign to a field of a name or of `this` (`self.db = ...`,
   * `this.orders = ...`), by "name.field", and to a name (`users = ...`), by "name", wherever in the file
   * that is written.
   */
  readonly fields = new Map<string, { node: BNode; flush(): void }[]>();
  /**
   * What some statement of the file shows about names a reader cannot see declared (a `db` parameter that
   * other statements use as a holder of collections): facts named by the readers that look for them.
   */
  readonly shows = new Set<string>();
  /** The file's top-level statements, brought up to date, where the index keeps them (a function's callers are looked for in them). */
  statements?: () => BNode[];
}

/** "x.f" for `x.f` and "this.f" for `this.f`; undefined for anything deeper or computed at run time. */
export function fieldKey(e: BNode): string | undefined {
  if (!isMember(e)) return undefined;
  const name = propertyName(e);
  const obj = unwrap(e.object!);
  if (name === undefined) return undefined;
  if (obj.type === 'ThisExpression') return `this.${name}`;
  return obj.type === 'Identifier' ? `${obj.name!}.${name}` : undefined;
}

/** Declares the names a pattern binds; an identifier given an initializer holds it (a later assignment is caught by collectMutations). */
export function declareNames(pattern: BNode | null | undefined, into: Map<string, Binding>, init?: BNode | null, part?: Part): void {
  if (!pattern) return;
  switch (pattern.type) {
    case 'Identifier': {
      const type = annotatedType(pattern);
      const typeNode = typeAnnotationOf(pattern);
      into.set(pattern.name!, init ? { init } : { unknown: true, ...(part && part.path.length > 0 ? { part } : {}), ...(type !== undefined ? { type } : {}), ...(typeNode ? { typeNode } : {}) });
      return;
    }
    case 'ObjectPattern': {
      const annotation = init ? undefined : typeAnnotationOf(pattern);
      const base: Part = part ?? (init ? { of: init, path: [] } : { path: [], ...(annotation ? { typeNode: annotation } : {}) });
      for (const p of pattern.properties ?? []) {
        if (p.type === 'RestElement') {
          declareNames(p.argument, into);
          continue;
        }
        const key = p.computed || !p.key ? undefined : keyName(p.key);
        const value = p.value as BNode;
        const target = value.type === 'AssignmentPattern' ? value.left : value;
        declareNames(target, into, undefined, key !== undefined ? { ...base, path: [...base.path, key] } : undefined);
        if (value.type === 'AssignmentPattern') withFallback(target, value.right!, into);
      }
      return;
    }
    case 'ArrayPattern': {
      // `const [users, logs] = await openCollections(db)`: each name is the element of that index ("0",
      // "1") of what is taken apart, where something is given; a parameter's elements stay unknown.
      const base: Part | undefined = part ?? (init ? { of: init, path: [] } : undefined);
      (pattern.elements ?? []).forEach((e, i) => {
        if (!e) return;
        if (!base || e.type === 'RestElement') {
          declareNames(e, into);
          return;
        }
        const target = e.type === 'AssignmentPattern' ? e.left : e;
        declareNames(target, into, undefined, { ...base, path: [...base.path, String(i)] });
        if (e.type === 'AssignmentPattern') withFallback(target, e.right!, into);
      });
      return;
    }
    case 'AssignmentPattern':
      declareNames(pattern.left, into);
      withFallback(pattern.left, pattern.right!, into);
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

/** The type an annotation names (`x: Collection<T>` and `x: mongodb.Collection<T>` as "Collection"), not a union or literal type. */
function annotatedType(id: BNode): string | undefined {
  const t = (id as unknown as { typeAnnotation?: { typeAnnotation?: { type: string; typeName?: { type: string; name?: string; right?: { name?: string } } } } }).typeAnnotation?.typeAnnotation;
  if (t?.type !== 'TSTypeReference' || !t.typeName) return undefined;
  return t.typeName.type === 'Identifier' ? t.typeName.name : t.typeName.right?.name;
}

/** The TypeScript type an identifier or a class member is annotated with (`x: Knex.Transaction`), if any. */
export function typeAnnotationOf(n: BNode): BNode | undefined {
  return (n as unknown as { typeAnnotation?: { typeAnnotation?: BNode } }).typeAnnotation?.typeAnnotation;
}

/** Keeps a default (`name = 'x'`) on the name it was declared for. */
function withFallback(target: BNode | undefined, fallback: BNode, into: Map<string, Binding>): void {
  const b = target?.type === 'Identifier' ? into.get(target.name!) : undefined;
  if (b && 'unknown' in b) into.set(target!.name!, { ...b, fallback });
}

/** Declarations made directly by a list of statements (var/let/const, functions, classes, imports). */
export function declareStatements(stmts: BNode[], into: Map<string, Binding>): void {
  for (let s of stmts) {
    if ((s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration') && s.declaration) s = s.declaration;
    if (s.type === 'VariableDeclaration') {
      for (const d of s.declarations ?? []) {
        // let and var count as constants too unless some statement assigns them again (collectMutations).
        declareNames(d.id, into, d.init);
        // `const { Order } = require('./models')`: the names come from that module.
        const from = d.init ? requiredModule(d.init) : undefined;
        if (from !== undefined && d.id?.type !== 'Identifier') {
          const names = new Map<string, Binding>();
          declareNames(d.id, names);
          const keys = new Map<string, string>();
          for (const p of d.id?.properties ?? []) {
            const v = p.value ? unwrap(p.value as BNode) : undefined;
            const k = p.key && !p.computed ? keyName(p.key) : undefined;
            if (v?.type === 'Identifier' && k !== undefined) keys.set(v.name!, k);
          }
          for (const k of names.keys()) into.set(k, { unknown: true, from, ...(keys.has(k) ? { imported: keys.get(k)! } : {}) });
        }
      }
    } else if (s.type === 'FunctionDeclaration' && s.id) {
      into.set(s.id.name!, { unknown: true, fn: s });
    } else if (s.type === 'ClassDeclaration' && s.id) {
      into.set(s.id.name!, { unknown: true, cls: s });
    } else if (s.type === 'TSEnumDeclaration' && s.id) {
      // `enum Collections { USERS = 'users' }`: its members' strings are read (enumMember), the name holds no value.
      into.set(s.id.name!, { unknown: true, enumDecl: s });
    } else if (s.type === 'TSTypeAliasDeclaration' && s.id?.name && !into.has(s.id.name)) {
      // `type PostgresDB = postgres.Sql<...>`: a type's name, followed by origin.ts.
      const t = (s as unknown as { typeAnnotation?: BNode }).typeAnnotation;
      into.set(s.id.name, { unknown: true, ...(t ? { typeNode: t } : {}) });
    } else if (s.type === 'TSInterfaceDeclaration' && s.id?.name && !into.has(s.id.name)) {
      into.set(s.id.name, { unknown: true, typeNode: s });
    } else if (s.type === 'ImportDeclaration') {
      const from = (s as unknown as { source?: { value?: string } }).source?.value;
      for (const sp of (s as unknown as { specifiers?: { type: string; local?: BNode; imported?: BNode }[] }).specifiers ?? []) {
        if (!sp.local?.name) continue;
        const imported = sp.type === 'ImportDefaultSpecifier' ? 'default' : sp.type === 'ImportNamespaceSpecifier' ? '*' : sp.imported?.name ?? (sp.imported?.value as string | undefined);
        into.set(sp.local.name, from !== undefined ? { unknown: true, from, ...(imported !== undefined ? { imported } : {}) } : { unknown: true });
      }
    }
  }
}

/**
 * The names each block, function or top-level statement assigns again, by its node, shared by every reader
 * of the statement and every call read through it (a caller's statement is walked once, not once per
 * function it calls). A statement parsed again in place of one inside a block (scriptIndex.ts readInside)
 * changes what the blocks around it assign: forgetMutations drops theirs.
 */
const scopeMutations = new WeakMap<BNode, Set<string>>();

/** What `node` assigns again (collectMutations), counted once per node. The set is shared: never change it. */
export function mutationsOf(node: BNode): Set<string> {
  let set = scopeMutations.get(node);
  if (!set) {
    set = new Set();
    collectMutations(node, set);
    scopeMutations.set(node, set);
  }
  return set;
}

/** Forgets what the blocks and functions of `around` assign, after a statement inside them was replaced. */
export function forgetMutations(around: readonly BNode[]): void {
  for (const n of around) scopeMutations.delete(n);
}

const MUTATING_METHODS = new Set(['push', 'unshift', 'splice', 'pop', 'shift', 'fill', 'reverse', 'copyWithin']);

/**
 * Names assigned again, or whose object or array is changed, after they were declared, anywhere in the
 * tree; with `fields`, also every `x.f = value` and `this.f = value` as ["x.f", value], and `x = value` as
 * ["x", value]. `visit` sees every node of the same walk, so facts about the file are read without another;
 * `written`, when given, receives every node counted as a change (an assignment, `x.push(...)`, ...).
 */
export function collectMutations(root: BNode, into: Set<string>, fields?: [string, BNode][], visit?: (n: BNode) => void, written?: BNode[]): void {
  const stack: BNode[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    visit?.(n);
    // Line/column objects are never read (offsets are): dropping them halves what a kept tree costs.
    if (n.loc !== undefined) (n as { loc?: unknown }).loc = undefined;
    if (n.type === 'AssignmentExpression' || n.type === 'UpdateExpression') {
      written?.push(n);
      const target = unwrap((n.type === 'AssignmentExpression' ? n.left : n.argument)!);
      const key = fields && n.type === 'AssignmentExpression' && n.operator === '=' ? (target.type === 'Identifier' ? target.name : fieldKey(target)) : undefined;
      if (key !== undefined) fields!.push([key, n.right!]);
      const base = rootIdentifier(target);
      if (base && isMember(target)) into.add(base);
      // `this.x = ...`: statements reading a field the file assigns are read again when it changes.
      else if (isMember(target) && unwrap(target.object!).type === 'ThisExpression') into.add('this');
      else assignedNames(target, into);
    } else if ((n.type === 'ForInStatement' || n.type === 'ForOfStatement') && n.left && n.left.type !== 'VariableDeclaration') {
      written?.push(n.left);
      assignedNames(unwrap(n.left), into);
    } else if (n.type === 'UnaryExpression' && n.operator === 'delete' && n.argument) {
      written?.push(n);
      const base = rootIdentifier(unwrap(n.argument));
      if (base) into.add(base);
    } else if (isCall(n) && n.callee && isMember(unwrap(n.callee))) {
      const callee = unwrap(n.callee);
      const name = propertyName(callee);
      const base = rootIdentifier(unwrap(callee.object!));
      if (base && name !== undefined && MUTATING_METHODS.has(name)) {
        written?.push(n);
        into.add(base);
      } else if (name !== undefined && MUTATING_METHODS.has(name) && isMember(unwrap(callee.object!)) && unwrap(unwrap(callee.object!).object!).type === 'ThisExpression') {
        // `this.pending.push(op)`: a bulkWrite of another method may read what it pushes.
        written?.push(n);
      }
      if (name === 'assign' && callee.object?.type === 'Identifier' && callee.object.name === 'Object') {
        written?.push(n);
        const first = n.arguments?.[0] && rootIdentifier(unwrap(n.arguments[0]));
        if (first) into.add(first);
      }
    }
    pushChildren(n, stack);
  }
}

/** The names an assignment's target (`x`, `[a, b]`, `{ c }`) gives new values. */
function assignedNames(target: BNode, into: Set<string>): void {
  const names = new Map<string, Binding>();
  declareNames(target, names);
  for (const k of names.keys()) into.add(k);
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


/** The module of `require('x')`, `require('x').y`, `await import('x')`, or undefined. */
export function requiredModule(e: BNode): string | undefined {
  let cur = unwrap(e);
  for (let i = 0; i < 8; i++) {
    if (cur.type === 'AwaitExpression' && cur.argument) cur = unwrap(cur.argument);
    else if (isMember(cur)) cur = unwrap(cur.object!);
    else break;
  }
  if (isCall(cur)) {
    const callee = unwrap(cur.callee!);
    const arg = cur.arguments?.[0];
    if ((callee.type === 'Identifier' && callee.name === 'require') || callee.type === 'Import') {
      if (arg?.type === 'StringLiteral') return arg.value as string;
    }
  }
  if (cur.type === 'ImportExpression') {
    const src = (cur as unknown as { source?: BNode }).source;
    if (src?.type === 'StringLiteral') return src.value as string;
  }
  return undefined;
}

/** The fields of a class: property initializers, `this.x = ...` in the constructor, decorated constructor parameters. */
export function classFields(cls: BNode): Map<string, BNode> {
  const out = new Map<string, BNode>();
  const body = (cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
  for (const m of body) {
    const key = m.key && !m.computed && (m.key.type === 'Identifier' || m.key.type === 'PrivateName') ? m.key.name ?? (m.key as unknown as { id?: BNode }).id?.name : undefined;
    if ((m.type === 'ClassProperty' || m.type === 'ClassPrivateProperty') && key && (m as unknown as { value?: BNode }).value) {
      out.set(key, (m as unknown as { value: BNode }).value);
    }
    if (m.type === 'ClassMethod' && m.kind === 'constructor') {
      for (const p of m.params ?? []) {
        const param = p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : p;
        const decorators = (p as unknown as { decorators?: { expression: BNode }[] }).decorators ?? (param as unknown as { decorators?: { expression: BNode }[] }).decorators ?? [];
        const name = param.type === 'Identifier' ? param.name : param.type === 'AssignmentPattern' ? param.left?.name : undefined;
        if (name && decorators[0]) out.set(name, decorators[0].expression);
      }
      const stmts = m.body && !Array.isArray(m.body) ? (m.body.body as BNode[] | undefined) ?? [] : [];
      for (const st of stmts) {
        const e = st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined;
        if (e?.type !== 'AssignmentExpression' || e.operator !== '=') continue;
        const left = unwrap(e.left!);
        if (isMember(left) && unwrap(left.object!).type === 'ThisExpression') {
          const name = propertyName(left);
          if (name) out.set(name, e.right!);
        }
      }
    }
  }
  return out;
}
