// Walks one top-level statement with its scopes and hands every call and tagged template to the
// readers of each library (mongoDriver.ts, mongoose.ts, sqlStrings.ts, ...). The first reader that
// recognises a call takes it; calls it consumed (the cursor methods of a chain) are not read again.
// The readers share what the walk knows: constants in scope, strings they hold, the source text.

import { cookedOf, givesThis, pushChildren, isCall, isMember, propertyName, unwrap, type BNode } from './syntax';
import { classFields, declareNames, declareStatements, fieldKey, mutationsOf, requiredModule, Scope, typeAnnotationOf, type Binding, type ModuleScope, type Part } from './scope';
export { forgetMutations } from './scope';
import type { FinderContext, FoundQuery, PrismaModels, SourceRange } from './types';
import { detached } from './ranges';
import { exportedBinding, FOREIGN_BASE, MAX_IMPORT_DEPTH, namespaceModule, type ForeignModule } from './workspace';

export const MAX_RESOLVE_DEPTH = 16;
/** The name each function the walks met is declared under (`const f = () => ...`, `function f() {}`). */
const FUNCTION_NAMES = new WeakMap<BNode, string>();
const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
/** Methods whose function argument is given a transaction of the receiver: Knex, Prisma Client, postgres.js. */
const TRANSACTION_METHODS = new Set(['transaction', '$transaction', 'begin']);

/** A reader of one library's calls. */
export interface CallReader {
  /** Reads the call (or tagged template) `n`; true when it recognised it, so no later reader sees it. */
  read(n: BNode, ex: Extractor): boolean;
}

/** A call of a chain `a.b(x).c(y)`: its method name, the call, and the name's node. */
export type ChainCall = { name: string; call: BNode; nameNode: BNode };

/** The scope to go back to when the walk leaves a node that opened one. */
class Leave {
  constructor(readonly scope: Scope | undefined) {}
}

/** The mark, among the names a statement used, of a function or class whose calls named its queries (usesCallsOf). */
export const CALLS_OF = '\u0000calls of ';

/**
 * What a walk leaves behind for reading one statement of the tree again later (ScriptQueryIndex's
 * readInside): the call each query was read from, the calls a reader took or marked as read, and the
 * queries recorded at nodes other readers may reach again.
 */
export interface WalkTrace {
  producers: Map<FoundQuery, BNode>;
  taken: BNode[];
  consumed: Set<BNode>;
  byNode: Map<BNode, FoundQuery>;
}

export class Extractor {
  private scope: Scope | undefined;
  private readonly consumed = new Set<BNode>();
  private readonly out: FoundQuery[] = [];
  private readonly producers = new Map<FoundQuery, BNode>();
  private readonly taken: BNode[] = [];
  /** The call the readers are reading. */
  private current: BNode | undefined;
  /** Functions given to a `transaction(fn)` call, with the call's receiver. */
  private readonly transactionOf = new WeakMap<BNode, BNode>();
  /** Functions given as an argument to any call, with the call and the argument's place. */
  private readonly argumentOf = new WeakMap<BNode, { call: BNode; index: number }>();

  constructor(
    readonly source: string,
    readonly module: ModuleScope,
    private readonly uses: Set<string>,
    private readonly localMutated: Set<string>,
    readonly kind: 'mongodb-playground' | 'script',
    private readonly readers: readonly CallReader[],
    /** What is known beyond the text (types.ts FinderContext). */
    readonly context: FinderContext = {},
    /** How many imports were followed to reach this module: 0 for the file being read. */
    readonly importDepth = 0,
  ) {}

  /** True when this extractor reads a module the file imports, not the file itself. */
  get isForeign(): boolean {
    return this.importDepth > 0;
  }

  /**
   * What an imported name is in the workspace module it comes from: an extractor of that module and the
   * name there (`import { getCollection } from '../util/mongo'`, `const { db } = require('./db')`).
   * Undefined for a library, a module not in the workspace, or without the workspace's modules.
   */
  imported(name: string): { ex: Extractor; local: string } | undefined {
    const found = this.importedExport(name);
    return found && 'ex' in found ? found : undefined;
  }

  /**
   * What `name` is in the workspace module a call loads by its path (`(await import('./db')).getCollections`,
   * `require('./db').getCollections`): an extractor of that module and the name there.
   */
  exportOf(spec: string, name: string): { ex: Extractor; local: string } | undefined {
    const { modules, file } = this.context;
    if (!modules || file === undefined || this.importDepth >= MAX_IMPORT_DEPTH) return undefined;
    const target = modules.resolve(file, spec);
    const found = target ? exportedBinding(modules, target, name) : undefined;
    return found && !('library' in found) ? { ex: this.readerOf(found.module), local: found.local } : undefined;
  }

  /** A library's export that a module of the workspace passes on (`export type { Knex } from 'knex'`), imported here under `name`. */
  importedLibrary(name: string): { library: string; name: string } | undefined {
    const found = this.importedExport(name);
    return found && 'library' in found ? found : undefined;
  }

  private importedExport(name: string): { ex: Extractor; local: string } | { library: string; name: string } | undefined {
    const { modules, file } = this.context;
    if (!modules || file === undefined || this.importDepth >= MAX_IMPORT_DEPTH) return undefined;
    const r = this.lookup(name);
    if (!r) return undefined;
    let from: string | undefined;
    let importedAs: string | undefined;
    if ('from' in r.binding && r.binding.from !== undefined) {
      from = r.binding.from;
      importedAs = r.binding.imported ?? 'default';
    } else if ('init' in r.binding) {
      from = requiredModule(r.binding.init);
      const init = unwrap(r.binding.init);
      importedAs = isMember(init) ? propertyName(init) : 'default';
    }
    if (from === undefined || importedAs === undefined || importedAs === '*') return undefined;
    const target = modules.resolve(file, from);
    if (!target) return undefined;
    const found = exportedBinding(modules, target, importedAs);
    if (!found) return undefined;
    if ('library' in found) return found;
    return { ex: this.readerOf(found.module), local: found.local };
  }

  /** An extractor of a module of the workspace (a file that calls a function of this one), one import deeper, reading values only. */
  forModule(module: ForeignModule): Extractor {
    return this.readerOf(module);
  }

  /**
   * An extractor of this same file for reading another of its statements (a call of a function of this
   * one), values only: the names that statement mutates are `mutated`, what it looks up is used here too.
   */
  sibling(mutated: Set<string>): Extractor {
    return new Extractor(this.source, this.module, this.uses, mutated, this.kind, [], this.context, this.importDepth);
  }

  /** Runs `read` with the scopes the nodes of `path` (from a top-level statement down) open, as the walk opens them. */
  within<T>(path: readonly BNode[], read: () => T): T {
    const saved = this.scope;
    try {
      for (const n of path) this.scope = this.opensScope(n) ?? this.scope;
      return read();
    } finally {
      this.scope = saved;
    }
  }

  /**
   * The function whose parameter a name is, where the name is one (plain or taken apart by a pattern): the
   * function, the parameter's place, the keys the pattern takes it by, the name the function is declared
   * under, and the node of the block or function that declares that name when it is not the module's.
   */
  parameterOf(name: string): { fn: BNode; index: number; path: string[]; fnName: string; declaredIn?: BNode; member?: string; viaThis?: boolean } | undefined {
    let s = this.scope;
    while (s && !s.names.has(name)) s = s.parent;
    const fn = s?.node;
    const isStatic = fn?.type === 'ClassMethod' && fn.kind === 'method' && (fn as unknown as { static?: boolean }).static === true && !fn.computed;
    // `private prune(logs: Collection)`: called only as `this.prune(...)`, in its own class.
    const isPrivate = fn?.type === 'ClassMethod' && fn.kind === 'method' && !isStatic && !fn.computed && (fn as unknown as { accessibility?: string }).accessibility === 'private';
    if (isPrivate) {
      const member = fn.key?.name;
      let cls = s!.parent;
      while (cls && !cls.fields) cls = cls.parent;
      const index = (fn.params ?? []).findIndex((p) => {
        const names = new Map<string, Binding>();
        declareNames(p, names);
        return names.has(name);
      });
      const b = s!.names.get(name)!;
      if (index < 0 || member === undefined || !cls?.classNode || !('unknown' in b)) return undefined;
      return { fn, index, path: b.part?.path ?? [], fnName: member, member, declaredIn: cls.classNode, viaThis: true };
    }
    if (!s || !fn || !(FUNCTIONS.has(fn.type) || fn.type === 'ObjectMethod' || isStatic)) return undefined;
    const b = s.names.get(name)!;
    if (!('unknown' in b)) return undefined;
    const index = (fn.params ?? []).findIndex((p) => {
      const names = new Map<string, Binding>();
      declareNames(p, names);
      return names.has(name);
    });
    if (isStatic) {
      // `static create(store: Collection)` of a class declared at the module's top level: called as `Inbox.create(...)`.
      const member = fn.key?.name;
      let cls = s.parent;
      while (cls && !cls.fields) cls = cls.parent;
      const className = cls?.className;
      if (index < 0 || member === undefined || className === undefined || !this.module.classes.has(className)) return undefined;
      return { fn, index, path: b.part?.path ?? [], fnName: className, member };
    }
    const fnName = FUNCTION_NAMES.get(fn);
    if (index < 0 || fnName === undefined) return undefined;
    let declaredIn: BNode | undefined;
    for (let up = s.parent; up; up = up.parent) {
      if (up.names.has(fnName)) {
        declaredIn = up.node ?? fn;
        break;
      }
    }
    if (declaredIn === undefined && !this.module.names.has(fnName)) return undefined;
    return { fn, index, path: b.part?.path ?? [], fnName, ...(declaredIn ? { declaredIn } : {}) };
  }

  /** An extractor of a module this file's imports reach, one import deeper (no readers: it resolves values only). */
  private readerOf(module: ForeignModule): Extractor {
    return new Extractor(module.text, module.scope, new Set(), new Set(), this.kind, [], { ...this.context, file: module.file }, this.importDepth + 1);
  }

  /** Whether a name is a module's namespace (`import * as x from 'm'`): an object of exports, never a class or an instance. */
  isNamespaceImport(name: string): boolean {
    const r = this.lookup(name);
    return r !== undefined && 'from' in r.binding && r.binding.imported === '*';
  }

  /** Whether a named import is a module's namespace another module of the workspace exports (`export * as Orders from './orders'`). */
  isReexportedNamespace(name: string): boolean {
    const { modules, file } = this.context;
    const r = modules && file !== undefined && this.importDepth < MAX_IMPORT_DEPTH ? this.lookup(name) : undefined;
    if (!r || !('from' in r.binding) || r.binding.from === undefined || r.binding.imported === '*') return false;
    const from = modules!.resolve(file!, r.binding.from);
    return from !== undefined && namespaceModule(modules!, from, r.binding.imported ?? 'default') !== undefined;
  }

  /** A namespace import's member (`import * as db from './db'; db.knex`): the module's export of that name. */
  importedMember(ns: string, member: string): { ex: Extractor; local: string } | undefined {
    const { modules, file } = this.context;
    if (!modules || file === undefined || this.importDepth >= MAX_IMPORT_DEPTH) return undefined;
    const r = this.lookup(ns);
    if (!r || !('from' in r.binding) || r.binding.from === undefined) return undefined;
    const from = modules.resolve(file, r.binding.from);
    // `import { Orders } from './models'` where that module writes `export * as Orders from './orders'`.
    const target = r.binding.imported === '*' || !from ? from : namespaceModule(modules, from, r.binding.imported ?? 'default');
    const found = target ? exportedBinding(modules, target, member) : undefined;
    if (!found || 'library' in found) return undefined;
    return { ex: this.readerOf(found.module), local: found.local };
  }

  /** The workspace's Prisma models, when its schema.prisma is known. */
  get prismaModels(): PrismaModels | undefined {
    return this.context.prismaModels;
  }

  run(root: BNode): FoundQuery[] {
    this.walk(root);
    return this.out.sort((a, b) => a.range.start - b.range.start);
  }

  /**
   * Reads one statement of a tree read before: `path` is the nodes from the tree's root down to the
   * statement's parent (their scopes are opened as the whole walk opens them), `before` what stays of
   * the last walk outside the statement (its queries recorded at nodes are reached again through
   * queryAt). The trace then holds both.
   */
  runInside(path: readonly BNode[], statement: BNode, before: WalkTrace): FoundQuery[] {
    for (const [q, n] of before.producers) this.producers.set(q, n);
    for (const n of before.consumed) this.consumed.add(n);
    for (const [n, q] of before.byNode) this.byNode.set(n, q);
    this.taken.push(...before.taken);
    for (const n of path) this.scope = this.opensScope(n) ?? this.scope;
    return this.run(statement);
  }

  /** What the walk leaves for reading a statement again (see WalkTrace). */
  trace(): WalkTrace {
    return { producers: this.producers, taken: this.taken, consumed: this.consumed, byNode: this.byNode };
  }

  /** Records a query found by a reader. */
  push(q: FoundQuery): void {
    this.out.push(q);
    if (this.current) this.producers.set(q, this.current);
  }

  /** Marks every call and tagged template inside a node as read (the fragments of a template). */
  consumeInside(n: BNode): void {
    const stack: BNode[] = [];
    pushChildren(n, stack);
    while (stack.length > 0) {
      const x = stack.pop()!;
      if (isCall(x) || x.type === 'TaggedTemplateExpression') this.consumed.add(x);
      pushChildren(x, stack);
    }
  }

  /** Marks calls as read, so the walk does not offer them to the readers again. */
  consume(...calls: BNode[]): void {
    for (const c of calls) this.consumed.add(c);
  }

  // -- traversal with scopes --

  private walk(root: BNode): void {
    // An explicit stack, so deep files cannot overflow the call stack: nodes to visit, and the scope to
    // go back to when a node that opened one is left.
    const stack: (BNode | Leave)[] = [root];
    while (stack.length > 0) {
      const top = stack.pop()!;
      if (top instanceof Leave) {
        this.scope = top.scope;
        continue;
      }
      const scoped = this.opensScope(top);
      if (scoped) {
        stack.push(new Leave(this.scope));
        this.scope = scoped;
      }
      if (isCall(top) || top.type === 'TaggedTemplateExpression') this.visitCall(top);
      // Children go on in source order and are reversed in place, so the first is visited first.
      const from = stack.length;
      pushChildren(top, stack as BNode[]);
      for (let i = from, j = stack.length - 1; i < j; i++, j--) {
        const t = stack[i]!;
        stack[i] = stack[j]!;
        stack[j] = t;
      }
    }
  }

  /** `db.knex.transaction(async (trx) => ...)`: the function's receiver, asked for when its scope opens. */
  private noteTransaction(call: BNode): void {
    (call.arguments ?? []).forEach((a, index) => {
      const f = unwrap(a);
      if (f.type === 'ArrowFunctionExpression' || f.type === 'FunctionExpression') this.argumentOf.set(f, { call, index });
    });
    const callee = unwrap(call.callee!);
    if (!isMember(callee) || !TRANSACTION_METHODS.has(propertyName(callee) ?? '')) return;
    for (const a of call.arguments ?? []) {
      const f = unwrap(a);
      if (f.type === 'ArrowFunctionExpression' || f.type === 'FunctionExpression') this.transactionOf.set(f, unwrap(callee.object!));
    }
  }

  /**
   * What began the transaction a name is given, when it is the first parameter of a function given to a
   * `transaction(fn)`, `$transaction(fn)` or `begin(fn)` call (origin.ts asks what the receiver is).
   */
  transactionReceiver(name: string): BNode | undefined {
    for (let sc = this.scope; sc; sc = sc.parent) {
      if (!sc.names.has(name)) continue;
      const fn = sc.node;
      const first = fn?.params?.[0];
      return fn && first?.type === 'Identifier' && first.name === name && !typeAnnotationOf(first) ? this.transactionOf.get(fn) : undefined;
    }
    return undefined;
  }

  /**
   * The call a function is given to, when `name` is one of that function's plain parameters with no
   * annotation (`m` in `this.run(manager, m => m.findOne(...))`): the call, the argument's place and the
   * parameter's.
   */
  callbackParameter(name: string): { call: BNode; argument: number; parameter: number } | undefined {
    for (let sc = this.scope; sc; sc = sc.parent) {
      if (!sc.names.has(name)) continue;
      const fn = sc.node;
      const at = fn ? this.argumentOf.get(fn) : undefined;
      const parameter = (fn?.params ?? []).findIndex((p) => p.type === 'Identifier' && p.name === name && !typeAnnotationOf(p));
      return at && parameter >= 0 ? { call: at.call, argument: at.index, parameter } : undefined;
    }
    return undefined;
  }

  /** A new scope for blocks and functions, holding what they declare directly. */
  private opensScope(n: BNode): Scope | undefined {
    if (isCall(n)) this.noteTransaction(n);
    // `const configure = ({ Orders }) => ...`: the name a function is declared under, for its callers (callers.ts).
    if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier' && n.init) {
      const f = unwrap(n.init);
      if (FUNCTIONS.has(f.type)) FUNCTION_NAMES.set(f, n.id.name!);
    } else if (n.type === 'FunctionDeclaration' && n.id?.name) FUNCTION_NAMES.set(n, n.id.name);
    switch (n.type) {
      case 'BlockStatement':
      case 'StaticBlock':
      case 'Program': {
        const s = new Scope(this.scope, n);
        declareStatements(Array.isArray(n.body) ? n.body : [], s.names);
        return s;
      }
      case 'SwitchStatement': {
        const s = new Scope(this.scope, n);
        for (const c of (n as unknown as { cases?: { consequent?: BNode[] }[] }).cases ?? []) declareStatements(c.consequent ?? [], s.names);
        return s;
      }
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
      case 'ObjectMethod':
      case 'ClassMethod':
      case 'ClassPrivateMethod':
      case 'TSDeclareMethod': {
        const s = new Scope(this.scope, n);
        for (const p of n.params ?? []) declareNames(p, s.names);
        if (n.type === 'FunctionExpression' && n.id) s.names.set(n.id.name!, { unknown: true });
        if (n.type === 'ArrowFunctionExpression' && n.body && !Array.isArray(n.body) && n.body.type !== 'BlockStatement') return s;
        return s;
      }
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement': {
        const s = new Scope(this.scope, n);
        const decl = (n as unknown as { init?: BNode; left?: BNode }).init ?? n.left;
        if (decl?.type === 'VariableDeclaration') for (const d of decl.declarations ?? []) declareNames(d.id, s.names);
        return s;
      }
      case 'ClassDeclaration':
      case 'ClassExpression': {
        const s = new Scope(this.scope);
        s.fields = classFields(n);
        s.classNode = n;
        if (n.id?.name) s.className = n.id.name;
        return s;
      }
      case 'CatchClause': {
        const s = new Scope(this.scope);
        declareNames(n.param, s.names);
        return s;
      }
      default:
        return undefined;
    }
  }

  /**
   * Notes that this statement's queries were named by the calls of `name` (a function or a class) in this
   * file: an edited statement that mentions it makes this one read again (ScriptQueryIndex).
   */
  usesCallsOf(name: string): void {
    this.uses.add(CALLS_OF + name);
  }

  /** The binding of a name where it is used: the innermost scope, then the module. */
  lookup(name: string): { binding: Binding; mutated: boolean } | undefined {
    for (let s = this.scope; s; s = s.parent) {
      const b = s.names.get(name);
      // A local of a function another statement or module declares (read through a call of it) is assigned
      // among the module's names, not among the names of the statement being read.
      if (b) return { binding: b, mutated: (this.localMutated.has(name) || this.module.mutated.has(name)) && this.mutatedIn(s, name) };
    }
    this.uses.add(name);
    const b = this.module.names.get(name);
    if (b) this.module.owner.get(name)?.flush();
    return b ? { binding: b, mutated: this.module.mutated.has(name) } : undefined;
  }

  /**
   * Whether the block or function that declares a name assigns it again: the statement's mutations are
   * counted over all of it, so a `let sql` appended to in one method does not make another method's
   * `const sql` unknown.
   */
  private mutatedIn(s: Scope, name: string): boolean {
    if (!s.node) return true;
    return mutationsOf(s.node).has(name);
  }

  /** Where a destructured name came from (`const { Orders } = context.collections`), if it was destructured. */
  partOf(name: string): Part | undefined {
    const r = this.lookup(name);
    return r && !r.mutated && 'part' in r.binding ? r.binding.part : undefined;
  }

  /**
   * What a local name is given in the block or function that declares it: its initializer and the values
   * later assigned to it (`let bulk; ... bulk = coll.initializeUnorderedBulkOp()`), and what is pushed
   * into it (`ops.push({ updateOne: ... })`). Undefined for a module-level name or one not declared.
   */
  /** The function or block that declares a local name (not the module's top level). */
  declaringNode(name: string): BNode | undefined {
    let s = this.scope;
    while (s && !s.names.has(name)) s = s.parent;
    return s?.node && s.node.type !== 'Program' ? s.node : undefined;
  }

  writesTo(name: string): Writes | undefined {
    let s = this.scope;
    while (s && !s.names.has(name)) s = s.parent;
    if (!s?.node || !this.scope || s.node.type === 'Program') return undefined;
    let byName = this.writes.get(s.node);
    if (!byName) this.writes.set(s.node, (byName = new Map()));
    const known = byName.get(name);
    if (known) return known;
    const b = s.names.get(name)!;
    const out: Writes = { values: 'init' in b ? [b.init] : [], pushed: [], appended: [], run: [], otherBranch: new Set() };
    const stack: BNode[] = [s.node];
    // The else branches of an if whose first branch appends: `if (a) sql += ' ...a'; else if (b) sql += ' ...b'`
    // runs one of them, so what the later branches append is noted apart.
    const elses = new Set<BNode>();
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n.type === 'IfStatement' && n.alternate && appendsTo(n.consequent!, name)) elses.add(n.alternate);
      // A block or function inside that declares the name again has its own (not the body of the function
      // whose scope it is, where a function read through a call declares its names).
      if (n !== s.node && n !== (s.node as { body?: unknown }).body && shadows(n, name)) continue;
      if (n.type === 'AssignmentExpression' && n.operator === '=' && unwrap(n.left!).type === 'Identifier' && unwrap(n.left!).name === name) out.values.push(n.right!);
      else if (n.type === 'AssignmentExpression' && n.operator === '+=' && unwrap(n.left!).type === 'Identifier' && unwrap(n.left!).name === name) {
        out.appended.push(n.right!);
        if ([...elses].some((e) => e.start <= n.start && n.end <= e.end)) out.otherBranch.add(n.right!);
      }
      else if (isCall(n) && isMember(unwrap(n.callee!))) {
        const callee = unwrap(n.callee!);
        const obj = unwrap(callee.object!);
        const method = propertyName(callee);
        if (obj.type === 'Identifier' && obj.name === name && (method === 'push' || method === 'unshift')) out.pushed.push(...(n.arguments ?? []));
        // sql-template-strings: `statement.append(SQL\`...\`)` adds to the statement in place.
        else if (obj.type === 'Identifier' && obj.name === name && method === 'append' && n.arguments?.length === 1) out.appended.push(n.arguments[0]!);
        else if (method === 'query' && n.arguments?.[0] && passes(unwrap(n.arguments[0]), name)) out.run.push(n);
      }
      pushChildren(n, stack);
    }
    byName.set(name, out);
    return out;
  }

  /**
   * The value a local name holds where `at` reads it, when the order of the code says so without running
   * it: the last write before `at` is a statement of a block that also holds `at` in a later statement
   * (`let c = db.collection('a'); await c.find(); c = db.collection('b'); await c.find()`), so every way
   * to `at` passes through it. Undefined when that write is inside a branch, a loop or another function,
   * is not a plain `=`, or a block inside declares the name again.
   */
  reachingValue(name: string, at: BNode): BNode | undefined {
    let s = this.scope;
    while (s && !s.names.has(name)) s = s.parent;
    if (!s?.node || !this.scope || s.node.type === 'Program') return undefined;
    interface Write { start: number; end: number; value?: BNode; list?: BNode[]; index?: number }
    const writes: Write[] = [];
    let unsure = false;
    const visit = (n: BNode, list: BNode[] | undefined, index: number, inFunction: boolean): void => {
      if (unsure) return;
      if (n !== s!.node && n !== (s!.node as { body?: unknown }).body && shadows(n, name)) {
        unsure = true;
        return;
      }
      const nested = inFunction || (n !== s!.node && FUNCTIONS.has(n.type));
      const lhs = n.type === 'AssignmentExpression' ? unwrap(n.left!) : undefined;
      if (lhs?.type === 'Identifier' && lhs.name === name) {
        if (n.operator !== '=' || nested) unsure = true;
        writes.push({ start: n.start, end: n.end, value: n.right! });
      } else if (n.type === 'UpdateExpression' && unwrap(n.argument!).type === 'Identifier' && unwrap(n.argument!).name === name) unsure = true;
      else if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier' && n.id.name === name && n.init) writes.push({ start: n.start, end: n.end, value: n.init });
      walkChildren(n, nested);
      // The statement that is the write itself, `c = ...;` or `let c = ...;`, written directly in a block.
      const only = list === undefined ? undefined : n.type === 'ExpressionStatement' ? unwrap(n.expression!) : n.type === 'VariableDeclaration' && n.declarations?.length === 1 ? n.declarations[0] : undefined;
      const w = only ? writes.find((x) => x.start === only.start && x.end === only.end) : undefined;
      if (w) {
        w.list = list;
        w.index = index;
      }
    };
    const walkChildren = (n: BNode, nested: boolean): void => {
      const body = (n as { body?: unknown }).body;
      const lists: BNode[][] = [];
      if ((n.type === 'BlockStatement' || n.type === 'Program' || n.type === 'StaticBlock') && Array.isArray(body)) lists.push(body as BNode[]);
      if (n.type === 'SwitchCase' && Array.isArray(n.consequent)) lists.push(n.consequent as unknown as BNode[]);
      if (lists.length > 0) {
        for (const l of lists) l.forEach((st, i) => visit(st, l, i, nested));
        if (n.type === 'SwitchCase' && n.test) visit(n.test, undefined, 0, nested);
        return;
      }
      const children: BNode[] = [];
      pushChildren(n, children);
      children.sort((a, b) => a.start - b.start);
      for (const c of children) visit(c, undefined, 0, nested);
    };
    visit(s.node, undefined, 0, false);
    if (unsure) return undefined;
    const before = writes.filter((w) => w.end <= at.start).sort((a, b) => a.end - b.end);
    const last = before[before.length - 1];
    if (!last?.list || last.index === undefined || last.value === undefined) return undefined;
    // `at` in a later statement of the same block (a write between them would be later than `last`), and no
    // write after `at` in that statement, which a loop around both could bring back to it.
    const holding = last.list.slice(last.index + 1).find((st) => st.start <= at.start && at.end <= st.end);
    if (!holding || writes.some((w) => w.start >= at.end && w.end <= holding.end)) return undefined;
    return last.value;
  }

  private readonly writes = new Map<BNode, Map<string, Writes>>();

  /**
   * The local function a push into `name` is written in, when it is not where `name` is declared (`const add =
   * (clause, v) => { where.push(...) }` beside `const where = []`), with its calls by name in that block or
   * function, in order: what it pushes is read once per call, with the call's arguments.
   */
  helperAround(name: string, node: BNode): { fn: BNode; calls: BNode[] } | undefined {
    let s = this.scope;
    while (s && !s.names.has(name)) s = s.parent;
    if (!s?.node || !this.scope || s.node.type === 'Program') return undefined;
    let helper: { fn: BNode; name: string } | undefined;
    const stack: BNode[] = [s.node];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n !== s.node && FUNCTIONS.has(n.type) && !(n.start <= node.start && node.end <= n.end)) continue;
      const fn = n === s.node ? undefined : n.type === 'VariableDeclarator' && unwrap(n.id!).type === 'Identifier' && n.init ? unwrap(n.init) : n.type === 'FunctionDeclaration' ? n : undefined;
      const fnName = n.type === 'VariableDeclarator' ? unwrap(n.id!).name : n.id?.name;
      if (fn && FUNCTIONS.has(fn.type) && fnName !== undefined && fn.start <= node.start && node.end <= fn.end) {
        // The innermost one counts; one inside another helper is not followed.
        if (helper) return undefined;
        helper = { fn, name: fnName };
      }
      pushChildren(n, stack);
    }
    if (!helper) return undefined;
    const calls: BNode[] = [];
    const walk: BNode[] = [s.node];
    while (walk.length > 0) {
      const n = walk.pop()!;
      if (n === helper.fn || (n !== s.node && shadows(n, helper.name))) continue;
      if (isCall(n) && unwrap(n.callee!).type === 'Identifier' && unwrap(n.callee!).name === helper.name) calls.push(n);
      pushChildren(n, walk);
    }
    return { fn: helper.fn, calls: calls.sort((a, b) => a.start - b.start) };
  }

  /** Runs `read` on `node`, written in the function `fn` of this file, with its parameters holding what `call` gives. */
  throughBody<T>(call: BNode, fn: BNode, node: BNode, read: (v: BNode, ex: Extractor) => T | undefined): T | undefined {
    return this.returnsOf(fn, call, this, read, node);
  }

  /**
   * What the file assigns to a field `x.f` or `this.f` anywhere (`self.db = await apos.db.collection('x')`
   * in one method, `self.db.findOne(...)` in another), when the field is not followed otherwise.
   */
  assignedField(e: BNode): BNode[] | undefined {
    const key = fieldKey(unwrap(e));
    const list = key !== undefined ? this.module.fields.get(key) : undefined;
    if (!list) return undefined;
    this.uses.add(key!.slice(0, key!.indexOf('.')));
    for (const f of list) f.flush();
    return list.map((f) => f.node);
  }

  /**
   * What a module-level variable is given: its initializer and every value the file assigns it, in any
   * function (`let users; ... async init(conn) { users = conn.db().collection('users') }`). Undefined
   * when the name is declared in an enclosing function or block, or not at module level.
   */
  moduleValues(name: string): BNode[] | undefined {
    for (let s = this.scope; s; s = s.parent) if (s.names.has(name)) return undefined;
    const r = this.lookup(name);
    if (!r) return undefined;
    const assigned = this.module.fields.get(name) ?? [];
    for (const f of assigned) f.flush();
    return [...('init' in r.binding ? [r.binding.init] : []), ...assigned.map((f) => f.node)];
  }

  /** True when some statement of the file shows `fact` (ModuleScope.shows); the statement is read again when that changes. */
  fileShows(fact: string): boolean {
    this.uses.add(fact);
    return this.module.shows.has(fact);
  }

  private readonly byNode = new Map<BNode, FoundQuery>();

  /** The query already read from a node (an operation two bulkWrite calls run), else undefined. */
  queryAt(n: BNode): FoundQuery | undefined {
    return this.byNode.get(n);
  }

  /** Records a query read from a node other readers may reach again. */
  pushAt(n: BNode, q: FoundQuery): void {
    this.byNode.set(n, q);
    this.push(q);
  }

  /** A parameter's default (`{ collectionName = 'entries' }`) when the name is never assigned again. */
  fallbackOf(name: string): BNode | undefined {
    const r = this.lookup(name);
    return r && !r.mutated && 'fallback' in r.binding ? r.binding.fallback : undefined;
  }

  /** The type a name's annotation names (`coll: Collection<Order>` as "Collection"), for a name not given a value where declared. */
  typeOf(name: string): string | undefined {
    const r = this.lookup(name);
    return r && 'type' in r.binding ? r.binding.type : undefined;
  }

  constInit(name: string): BNode | undefined {
    const r = this.lookup(name);
    if (!r || r.mutated || !('init' in r.binding)) return undefined;
    return r.binding.init;
  }

  // -- calls --

  private visitCall(n: BNode): void {
    if (this.consumed.has(n)) return;
    this.current = n;
    for (const r of this.readers) {
      if (r.read(n, this)) {
        this.taken.push(n);
        break;
      }
    }
    this.current = undefined;
  }

  /** `a.b(x).c(y)` as the calls [b(x), c(y)] from the inside out, stopping at the first non-call. */
  flatten(outer: BNode): ChainCall[] {
    const calls: ChainCall[] = [];
    let cur: BNode = outer;
    for (let i = 0; i < 128; i++) {
      cur = unwrap(cur);
      if (cur.type === 'AwaitExpression' && cur.argument) {
        cur = cur.argument;
        continue;
      }
      if (!isCall(cur)) break;
      const callee = unwrap(cur.callee!);
      if (!isMember(callee)) break;
      const name = propertyName(callee);
      if (name === undefined) break;
      calls.push({ name, call: cur, nameNode: callee.property! });
      cur = callee.object!;
    }
    return calls.reverse();
  }

  /** What a chain starts from: the object below its innermost call (`db.collection('x')` for `db.collection('x').find().sort()`). */
  chainBase(chain: ChainCall[]): BNode | undefined {
    const first = chain[0];
    return first ? unwrap(unwrap(first.call.callee!).object!) : undefined;
  }

  /** The name a reader is looking at, for a bare identifier or `this.x` / `a.b.x` (the last property). */
  lastName(e: BNode): string | undefined {
    e = unwrap(e);
    if (e.type === 'Identifier') return e.name;
    if (isMember(e)) return propertyName(e);
    return undefined;
  }

  /**
   * Runs `read` on what a call of a function declared in the file returns (`api()` where
   * `function api() { return db.collection('x') }`), with the function's parameters holding the call's
   * arguments; the first return `read` answers for wins.
   */
  throughCall<T>(call: BNode, read: (returned: BNode, ex: Extractor) => T | undefined): T | undefined {
    const callee = unwrap(call.callee!);
    if (callee.type !== 'Identifier') return undefined;
    // A function given properties (`api.list = list`) still returns what it returns: `mutated` is not asked.
    const r = this.lookup(callee.name!);
    if (!r) return undefined;
    const fn = 'fn' in r.binding ? r.binding.fn : 'init' in r.binding ? unwrap(r.binding.init) : undefined;
    if (fn && FUNCTIONS.has(fn.type)) return this.returnsOf(fn, call, this, read);
    // A function of another module of the workspace (`import { getCollection } from '../util/mongo'`).
    const other = this.imported(callee.name!);
    const b = other ? other.ex.module.names.get(other.local) : undefined;
    const foreignFn = b ? ('fn' in b ? b.fn : 'init' in b ? unwrap(b.init) : undefined) : undefined;
    return other && foreignFn && FUNCTIONS.has(foreignFn.type) ? this.returnsOf(foreignFn, call, other.ex, read) : undefined;
  }

  /**
   * Runs `read` on what a method of another value's class returns (`mongo.tenants()` where `mongo` is typed by
   * a class, or by an interface a class implements: origin.ts functionOf), with its parameters holding the
   * call's arguments and `this` its class.
   */
  throughFunction<T>(call: BNode, target: { ex: Extractor; fn: BNode; cls?: BNode }, read: (returned: BNode, ex: Extractor) => T | undefined): T | undefined {
    const run = () => this.returnsOf(target.fn, call, target.ex, read);
    return target.cls ? target.ex.inClass(target.cls, run) : run();
  }

  /**
   * Runs `read` on `value`, written in the constructor `target.fn` of a class (`this.items = db.collection(name)`),
   * with the constructor's parameters holding what `call` (a subclass's `super(db, 'items')`) gives.
   */
  throughConstructor<T>(call: BNode, target: { ex: Extractor; fn: BNode; cls: BNode }, value: BNode, read: (v: BNode, ex: Extractor) => T | undefined): T | undefined {
    return target.ex.inClass(target.cls, () => this.returnsOf(target.fn, call, target.ex, read, value));
  }

  /**
   * `makeCollection('tenants')(db)`: runs `read` on what the function the inner call returns returns, its
   * parameters holding the outer call's arguments and the inner function's the inner call's.
   */
  throughCurried<T>(call: BNode, read: (returned: BNode, ex: Extractor) => T | undefined): T | undefined {
    const inner = unwrap(call.callee!);
    if (!isCall(inner)) return undefined;
    return this.throughCall(inner, (ret, inModule) => {
      const fn = unwrap(ret);
      return FUNCTIONS.has(fn.type) ? this.returnsOf(fn, call, inModule, read) : undefined;
    });
  }

  /**
   * Runs `read` on each return of `fn` (declared in the module `ex` reads), with its parameters holding
   * the call's arguments: as written when `ex` is this extractor, else as this file's constants resolve
   * them (a string, an object), so the other module reads values and not names it cannot see.
   */
  private returnsOf<T>(fn: BNode, call: BNode, ex: Extractor, read: (returned: BNode, ex: Extractor) => T | undefined, only?: BNode): T | undefined {
    if (!fn.body || Array.isArray(fn.body)) return undefined;
    // The function's own scope: a name it declares is assigned again only if the function assigns it.
    const s = new Scope(ex.scope, fn);
    (fn.params ?? []).forEach((p, i) => {
      const arg = call.arguments?.[i];
      const given = arg && arg.type !== 'SpreadElement' ? (ex === this ? arg : this.foreignArgument(arg)) : undefined;
      const target = p.type === 'AssignmentPattern' ? p.left : p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : p;
      if (target?.type === 'Identifier' && given && (ex === this || given.type !== 'Identifier')) s.names.set(target.name!, { init: given });
      else declareNames(p, s.names);
    });
    // Each return with the blocks between the body and it (`try { const c = db.collection('a'); return c; }`),
    // whose declarations it sees.
    const returns: { ret: BNode; blocks: BNode[] }[] = [];
    if (only) {
      // One value the function's top-level statements compute (a field its constructor assigns).
      if (fn.body.type === 'BlockStatement') declareStatements(Array.isArray(fn.body.body) ? fn.body.body : [], s.names);
      returns.push({ ret: only, blocks: [] });
    } else if (fn.body.type !== 'BlockStatement') returns.push({ ret: fn.body, blocks: [] });
    else {
      declareStatements(Array.isArray(fn.body.body) ? fn.body.body : [], s.names);
      const stack: { n: BNode; blocks: BNode[] }[] = [{ n: fn.body, blocks: [] }];
      while (stack.length > 0 && returns.length < 8) {
        const { n, blocks } = stack.pop()!;
        if (n.type === 'ReturnStatement' && n.argument) returns.push({ ret: n.argument, blocks });
        // A nested function's returns are its own.
        else if (!FUNCTIONS.has(n.type) && n.type !== 'ClassMethod' && n.type !== 'ObjectMethod') {
          const inner = n !== fn.body && n.type === 'BlockStatement' ? [...blocks, n] : blocks;
          const children: BNode[] = [];
          pushChildren(n, children);
          for (const c of children) stack.push({ n: c, blocks: inner });
        }
      }
    }
    returns.sort((a, b) => a.ret.start - b.ret.start);
    const saved = ex.scope;
    ex.scope = s;
    try {
      for (const { ret, blocks } of returns) {
        const v = blocks.length > 0 ? ex.within(blocks, () => read(ret, ex)) : read(ret, ex);
        if (v !== undefined) return v;
      }
      return undefined;
    } finally {
      ex.scope = saved;
    }
  }

  /**
   * An argument as another module reads it: a string this file's constants and imports name
   * (`descriptor.collectionName`) as that string, written where the argument is, since the other module
   * cannot look up this file's names; else the node a constant holds; nothing for a property of this file's own objects.
   */
  private foreignArgument(arg: BNode): BNode | undefined {
    const followed = this.follow(arg);
    if (followed.type === 'StringLiteral') return followed;
    const value = this.stringOf(arg, 0);
    const at = unwrap(arg);
    if (value !== undefined) return { type: 'StringLiteral', value, start: at.start, end: at.end } as unknown as BNode;
    // A property of this file's object (`cfg.coll`): the other module would read it by its own names.
    return isMember(followed) ? undefined : followed;
  }

  /** The function that gives `this` where the walk is (not an arrow function, which keeps its outer `this`); none in a class. */
  thisFunction(): BNode | undefined {
    for (let s = this.scope; s; s = s.parent) {
      if (s.fields) return undefined;
      if (s.node && givesThis(s.node)) return s.node;
    }
    return undefined;
  }

  /** The static method of a class whose `this` is the one where the walk is (an arrow function keeps its outer `this`). */
  staticMethod(): BNode | undefined {
    for (let s = this.scope; s; s = s.parent) {
      if (s.fields) return undefined;
      if (!s.node || s.node.type === 'ArrowFunctionExpression' || !(FUNCTIONS.has(s.node.type) || s.node.type === 'ObjectMethod' || s.node.type === 'ClassMethod' || s.node.type === 'ClassPrivateMethod')) continue;
      return s.node.type === 'ClassMethod' && s.node.kind === 'method' && (s.node as unknown as { static?: boolean }).static === true ? s.node : undefined;
    }
    return undefined;
  }

  /** The class the walk is in, if any. */
  enclosingClassNode(): BNode | undefined {
    for (let s = this.scope; s; s = s.parent) if (s.fields) return s.classNode;
    return undefined;
  }

  /** A class of this module or imported from another module of the workspace, with the extractor of its module. */
  classNamed(name: string): { ex: Extractor; node: BNode } | undefined {
    const c = this.module.classes.get(name);
    if (c) {
      c.flush();
      return { ex: this, node: c.node };
    }
    const other = this.imported(name);
    if (!other) return undefined;
    const oc = other.ex.module.classes.get(other.local);
    return oc ? { ex: other.ex, node: oc.node } : undefined;
  }

  /** The return type a function declares (`function getDb(): Knex`), here or in the module it is imported from. */
  declaredReturn(name: string): { ex: Extractor; type: BNode } | undefined {
    const r = this.lookup(name);
    const local = r && 'fn' in r.binding ? r.binding.fn : r && 'init' in r.binding ? unwrap(r.binding.init) : undefined;
    const typeOfFn = (fn: BNode | undefined) => (fn && FUNCTIONS.has(fn.type) ? (fn as unknown as { returnType?: { typeAnnotation?: BNode } }).returnType?.typeAnnotation : undefined);
    const t = typeOfFn(local);
    if (t) return { ex: this, type: t };
    if (local) return undefined;
    const other = this.imported(name);
    const b = other ? other.ex.module.names.get(other.local) : undefined;
    const ft = b ? typeOfFn('fn' in b ? b.fn : 'init' in b ? unwrap(b.init) : undefined) : undefined;
    return ft && other ? { ex: other.ex, type: ft } : undefined;
  }

  /** Runs `read` as inside a class's body (`this.x` names its members), from this module's top level. */
  inClass<T>(cls: BNode, read: () => T): T {
    const saved = this.scope;
    const s = new Scope(undefined);
    s.fields = classFields(cls);
    s.classNode = cls;
    this.scope = s;
    try {
      return read();
    } finally {
      this.scope = saved;
    }
  }

  /** Runs `read` as inside a method of a class, its parameters declared (not given values). */
  inFunction<T>(cls: BNode, fn: BNode, read: () => T): T {
    return this.inClass(cls, () => {
      const s = new Scope(this.scope, fn);
      for (const p of fn.params ?? []) declareNames(p, s.names);
      const saved = this.scope;
      this.scope = s;
      try {
        return read();
      } finally {
        this.scope = saved;
      }
    });
  }

  /** The name of the class the walk is in, if it has one. */
  enclosingClass(): string | undefined {
    for (let s = this.scope; s; s = s.parent) if (s.fields) return s.className;
    return undefined;
  }

  /** What `this.name` holds in the enclosing class, when a field or the constructor sets it. */
  thisField(name: string): BNode | undefined {
    for (let s = this.scope; s; s = s.parent) if (s.fields) return s.fields.get(name);
    return undefined;
  }

  /** The module a name was imported from (`import x from 'm'`, `const x = require('m')`), if any. */
  importSource(name: string): string | undefined {
    const r = this.lookup(name);
    if (!r) return undefined;
    if ('from' in r.binding) return r.binding.from;
    if ('init' in r.binding) return requiredModule(r.binding.init);
    return undefined;
  }

  private modulesCache: Set<string> | undefined;

  /** A top-level call `name.method(...)` of the file (`User.init(...)`), if one was written. */
  moduleCall(name: string, method: string): BNode | undefined {
    const c = this.module.calls.get(`${name}.${method}`);
    if (!c) return undefined;
    this.uses.add(name);
    c.flush();
    return c.node;
  }

  /** The table an entity class of this file declares with `@Entity('name')`, `@Entity({ name })` or `@Table({ tableName })`. */
  entityTable(name: string): string | undefined {
    const c = this.module.classes.get(name);
    if (!c) return undefined;
    this.uses.add(name);
    c.flush();
    for (const d of (c.node as unknown as { decorators?: { expression: BNode }[] }).decorators ?? []) {
      const e = unwrap(d.expression);
      if (!isCall(e) || unwrap(e.callee!).type !== 'Identifier' || !['Entity', 'Table'].includes(unwrap(e.callee!).name!) || !e.arguments?.[0]) continue;
      const a = unwrap(e.arguments[0]);
      const direct = this.stringOf(a, 0);
      if (direct !== undefined) return direct;
      for (const p of a.properties ?? []) {
        const k = p.key && (p.key.name ?? p.key.value);
        if ((k === 'name' || k === 'tableName') && p.value) return this.stringOf(p.value as BNode, 0);
      }
    }
    return undefined;
  }

  /** Every module the file imports at its top level. */
  modules(): Set<string> {
    if (this.modulesCache) return this.modulesCache;
    const out = new Set<string>();
    for (const b of this.module.names.values()) {
      const m = 'from' in b ? b.from : 'init' in b ? requiredModule(b.init) : undefined;
      if (m !== undefined) out.add(m);
    }
    this.modulesCache = out;
    return out;
  }

  /** True when the file imports a module whose name is one of `names` or starts with one of them and a '/'. */
  imports(...names: string[]): boolean {
    for (const m of this.modules()) if (names.some((n) => m === n || m.startsWith(`${n}/`))) return true;
    return false;
  }

  /**
   * Follows constants, `this.x` fields and properties of constant objects (`collections.orders`) to the
   * node they hold; stops at anything else.
   */
  follow(e: BNode, depth = 0): BNode {
    let cur = this.resolve(e);
    if (depth > MAX_RESOLVE_DEPTH || !isMember(cur)) return cur;
    const name = propertyName(cur);
    if (name === undefined) return cur;
    const obj = unwrap(cur.object!);
    if (obj.type === 'ThisExpression') {
      const f = this.thisField(name);
      // A field declared `= undefined` or `= null` holds nothing yet: what the file assigns it later is what it holds.
      return f && !isNothing(f) ? this.follow(f, depth + 1) : cur;
    }
    const holder = this.follow(obj, depth + 1);
    if (holder.type === 'ObjectExpression') {
      const prop = (holder.properties ?? []).find((p) => p.type === 'ObjectProperty' && !p.computed && p.key && (p.key.name ?? p.key.value) === name);
      if (prop) {
        cur = this.follow((prop.shorthand ? prop.key : prop.value) as BNode, depth + 1);
      }
    }
    return cur;
  }

  /** A string written as a literal or held by a local constant. */
  stringOf(e: BNode, depth: number): string | undefined {
    if (depth > MAX_RESOLVE_DEPTH) return undefined;
    e = unwrap(e);
    if (e.type === 'StringLiteral') return e.value as string;
    if (e.type === 'TemplateLiteral' && (e.expressions?.length ?? 0) === 0) return cookedOf(e.quasis![0]!);
    if (e.type === 'Identifier') {
      const init = this.constInit(e.name!);
      if (init) return this.stringOf(init, depth + 1);
      // A constant another module of the workspace exports (`import { COLLECTION } from './names'`).
      const held = this.importedHeld(e);
      return held ? held.ex.stringOf(held.node, depth + 1) : undefined;
    }
    // collections.WALLETS where `const collections = { WALLETS: 'wallets' }`.
    if (isMember(e)) {
      const held = this.follow(e);
      if (held !== e) return this.stringOf(held, depth + 1);
      const declared = this.enumMember(e);
      if (declared) return this.stringOf(declared, depth + 1);
      return this.importedProperty(e, depth) ?? this.configured(e, depth);
    }
    return undefined;
  }

  /**
   * `Collections.USERS` where this module declares `enum Collections { USERS = 'users' }` (or `const enum`):
   * the string the member is given, when it is written as one (a member given another member, a number or
   * nothing is left unread).
   */
  private enumMember(e: BNode): BNode | undefined {
    const name = propertyName(e);
    const obj = unwrap(e.object!);
    const b = name !== undefined && obj.type === 'Identifier' ? this.lookup(obj.name!)?.binding : undefined;
    return b && 'unknown' in b && b.enumDecl ? enumInitializer(b.enumDecl, name!) : undefined;
  }

  /**
   * `descriptor.collectionName` where `descriptor` is imported from a module of the workspace that exports
   * an object (`export default { collectionName }` beside `const collectionName = 'orders'`), or
   * `names.ORDERS` where `import * as names`: the string that property holds there.
   */
  private importedProperty(e: BNode, depth: number): string | undefined {
    const held = depth > MAX_RESOLVE_DEPTH ? undefined : this.importedHeld(e);
    return held ? held.ex.stringOf(held.node, depth + 1) : undefined;
  }

  /**
   * What another module of the workspace holds under an imported name (`import { byOwner }`, `const {
   * byOwner } = require('./queries')`) or a property of an object it exports (`queries.byOwner` of
   * `module.exports = queries` or `export default {...}`, `names.ORDERS` of `import * as names`): that
   * module's reader and the node there, unless the module assigns the name again.
   */
  importedHeld(e: BNode): { ex: Extractor; node: BNode } | undefined {
    e = unwrap(e);
    if (e.type === 'Identifier') {
      const other = this.imported(e.name!);
      const b = other ? other.ex.module.names.get(other.local) : undefined;
      return other && b && 'init' in b && !other.ex.module.mutated.has(other.local) ? { ex: other.ex, node: b.init } : undefined;
    }
    const name = isMember(e) && !e.computed ? propertyName(e) : undefined;
    const obj = name === undefined ? undefined : unwrap(e.object!);
    // `names.Collections.USERS` where `import * as names` and that module exports `enum Collections`.
    const outer = obj && isMember(obj) && !obj.computed ? propertyName(obj) : undefined;
    const ns = outer === undefined ? undefined : unwrap(obj!.object!);
    if (name !== undefined && outer !== undefined && ns?.type === 'Identifier') {
      const holder = this.importedMember(ns.name!, outer);
      const b = holder ? holder.ex.module.names.get(holder.local) : undefined;
      const declared = b && 'unknown' in b && b.enumDecl ? enumInitializer(b.enumDecl, name) : undefined;
      return declared ? { ex: holder!.ex, node: declared } : undefined;
    }
    if (name === undefined || obj?.type !== 'Identifier') return undefined;
    const member = this.importedMember(obj.name!, name);
    if (member) {
      const b = member.ex.module.names.get(member.local);
      return b && 'init' in b && !member.ex.module.mutated.has(member.local) ? { ex: member.ex, node: b.init } : undefined;
    }
    const other = this.imported(obj.name!);
    const b = other ? other.ex.module.names.get(other.local) : undefined;
    // `Collections.USERS` of `export enum Collections { USERS = 'users' }` in that module.
    const declared = other && b && 'unknown' in b && b.enumDecl ? enumInitializer(b.enumDecl, name) : undefined;
    if (declared) return { ex: other!.ex, node: declared };
    if (!other || !b || !('init' in b) || other.ex.module.mutated.has(other.local)) return undefined;
    const holder = other.ex.resolve(b.init);
    if (holder.type !== 'ObjectExpression') return undefined;
    const prop = (holder.properties ?? []).find((p) => p.type === 'ObjectProperty' && !p.computed && p.key && (p.key.name ?? p.key.value) === name);
    return prop ? { ex: other.ex, node: (prop.shorthand ? prop.key : prop.value) as BNode } : undefined;
  }

  /**
   * `this.config.collectionName` in a method a class inherits: the `collectionName: '...'` its own class
   * gives where it is built (`class Orders extends MakeModel({ collectionName: 'orders' })`, or
   * `super({ collectionName: 'orders' })` in its constructor).
   */
  private configured(e: BNode, depth: number): string | undefined {
    const name = propertyName(e);
    let root = unwrap(e.object!);
    while (isMember(root)) root = unwrap(root.object!);
    if (name === undefined || root.type !== 'ThisExpression') return undefined;
    const view = this.viewedFrom ?? { ex: this as Extractor, cls: this.enclosingClassNode() };
    if (!view.cls) return undefined;
    // `this.collectionName` that the calling class declares (`collectionName = 'orders'`), a base class leaving it abstract.
    // A parameter the base class keeps (`constructor(protected collectionName: string)`): what the calling
    // class's `super('orders', ...)` gives it.
    if (unwrap(e.object!).type === 'ThisExpression' && view.cls !== this.enclosingClassNode()) {
      const held = view.ex.fieldGiven(view.cls, name);
      if (held !== undefined) return held ? held.ex.stringOf(held.node, depth + 1) : undefined;
    }
    for (const o of constructionObjects(view.cls, (n) => view.ex.resolve(n))) {
      const p = (o.properties ?? []).find((x) => x.type === 'ObjectProperty' && !x.computed && x.key && (x.key.name ?? x.key.value) === name);
      if (p) return view.ex.stringOf((p.shorthand ? p.key : p.value) as BNode, depth + 1);
    }
    return undefined;
  }

  /**
   * What `this.name` holds in a class (`cls`, of this module) by its construction: the field's initializer in
   * the class or a class it extends, or what the `super(...)` of the class below gives a parameter the base
   * class keeps (`constructor(protected entityTarget: EntityTarget<T>)`, `super(Token, unitOfWork)`), with
   * the extractor of the module that holds it; null when a method of the lineage assigns the field again,
   * undefined when the construction does not say.
   */
  fieldGiven(cls: BNode, name: string): { ex: Extractor; node: BNode } | null | undefined {
    let sub: { ex: Extractor; node: BNode } | undefined;
    for (const at of this.lineage(cls)) {
      // A field a method of the class assigns again (`setCollectionName(n) { this.collectionName = n }`) is not its first value.
      if (assignsField(at.node, name)) return null;
      const own = classFields(at.node).get(name);
      if (own) return { ex: at.ex, node: own };
      const index = sub ? parameterPropertyIndex(at.node, name) : -1;
      const given = index >= 0 && sub ? superCall(sub.node)?.arguments?.[index] : undefined;
      if (given && sub && given.type !== 'SpreadElement') return { ex: sub.ex, node: given };
      sub = at;
    }
    return undefined;
  }

  /** Set while reading a method a class inherits: the class the call was made in, whose construction names its configuration. */
  private viewedFrom: { ex: Extractor; cls: BNode | undefined } | undefined;

  /**
   * A method of the class the walk is in, or of a class it extends (through a constant, a function that
   * returns a class, an import): the extractor of the module that declares it, the class and the method.
   */
  methodOf(name: string, kind: 'method' | 'get' = 'method'): { ex: Extractor; cls: BNode; fn: BNode } | undefined {
    const enclosing = this.enclosingClassNode();
    if (!enclosing) return undefined;
    for (const at of this.lineage(enclosing)) {
      for (const m of (at.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
        const key = m.key && !m.computed ? m.key.name : undefined;
        if ((m.type === 'ClassMethod' || m.type === 'ClassPrivateMethod') && m.kind === kind && key === name) return { ex: at.ex, cls: at.node, fn: m };
      }
    }
    return undefined;
  }

  /**
   * A class of this module and the classes it extends, nearest first, each with the extractor of the module
   * that declares it (a superclass is followed as classOf follows it): at most 8. The next class is looked
   * up only when the walk asks for it.
   */
  *lineage(cls: BNode): Generator<{ ex: Extractor; node: BNode }> {
    let at: { ex: Extractor; node: BNode } | undefined = { ex: this, node: cls };
    for (let i = 0; at && i < 8; i++) {
      yield at;
      const sup: BNode | undefined = (at.node as unknown as { superClass?: BNode }).superClass;
      at = sup ? at.ex.classOf(sup, 0) : undefined;
    }
  }

  /** The class an expression stands for: a class declared here or imported, a constant holding one, a function's returned class. */
  classOf(e: BNode, depth: number): { ex: Extractor; node: BNode } | undefined {
    if (depth > 6) return undefined;
    e = unwrap(e);
    if (e.type === 'ClassExpression' || e.type === 'ClassDeclaration') return { ex: this, node: e };
    if (e.type === 'Identifier') {
      const named = this.classNamed(e.name!);
      if (named) return named;
      // A class declared in the function being read (`function make() { class Model extends Base {} return Model }`).
      const b = this.lookup(e.name!)?.binding;
      if (b && 'cls' in b && b.cls) return { ex: this, node: b.cls };
      const init = this.constInit(e.name!);
      if (init) return this.classOf(init, depth + 1);
      return undefined;
    }
    if (isCall(e)) return this.throughCall(e, (ret, inModule) => inModule.classOf(ret, depth + 1));
    return undefined;
  }

  /**
   * Runs `read` on what a method of the class returns (`this._getCollection()`, declared here or in a
   * class this one extends), with its parameters holding the call's arguments and `this` its class; a
   * configuration the method reads from `this` is looked up where the calling class is built.
   */
  throughMethod<T>(call: BNode, name: string, read: (returned: BNode, ex: Extractor) => T | undefined, kind: 'method' | 'get' = 'method'): T | undefined {
    const m = this.methodOf(name, kind);
    if (!m) return undefined;
    const view: { ex: Extractor; cls: BNode | undefined } = { ex: this, cls: this.enclosingClassNode() };
    const savedView = m.ex.viewedFrom;
    m.ex.viewedFrom = m.ex === this && m.cls === view.cls ? savedView : (savedView ?? view);
    try {
      return m.ex.inClass(m.cls, () => this.returnsOf(m.fn, call, m.ex, read));
    } finally {
      m.ex.viewedFrom = savedView;
    }
  }

  /** Resolves an identifier to the node its constant holds (through several constants). */
  resolve(e: BNode): BNode {
    let cur = unwrap(e);
    for (let i = 0; i < MAX_RESOLVE_DEPTH && cur.type === 'Identifier'; i++) {
      const init = this.constInit(cur.name!);
      if (!init) break;
      cur = unwrap(init);
    }
    return cur;
  }

  /** The source text of a range, as a string of its own (see `detached`). */
  text(r: SourceRange): string {
    // A module read through an import is parsed at offsets from FOREIGN_BASE.
    const base = this.importDepth > 0 ? FOREIGN_BASE : 0;
    return detached(this.source.slice(r.start - base, r.end - base));
  }

  isIdentifierKnown(name: string): boolean {
    return this.constInit(name) !== undefined;
  }
}

/**
 * What a function or block does to a name it declares: the values assigned to it, what is pushed into it,
 * what is appended to it (`+=`, or sql-template-strings' `append`), and the `query(...)` calls it is
 * handed to (`client.query(statement)`, `client.query(statement.text, statement.values)`).
 */
export interface Writes {
  values: BNode[];
  pushed: BNode[];
  appended: BNode[];
  run: BNode[];
  /** What `+=` appends in an else branch of an if whose first branch appends too: another choice, not an optional part. */
  otherBranch: Set<BNode>;
}

/** Whether `+=` appends to `name` somewhere in a statement. */
function appendsTo(node: BNode, name: string): boolean {
  const stack: BNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'AssignmentExpression' && n.operator === '+=' && unwrap(n.left!).type === 'Identifier' && unwrap(n.left!).name === name) return true;
    if (FUNCTIONS.has(n.type)) continue;
    pushChildren(n, stack);
  }
  return false;
}

/** `name`, `name.text`, or `{ text: name.text, ... }`: an argument that hands over a statement held by `name`. */
function passes(a: BNode, name: string): boolean {
  if (a.type === 'Identifier') return a.name === name;
  if (isMember(a)) return propertyName(a) === 'text' && unwrap(a.object!).type === 'Identifier' && unwrap(a.object!).name === name;
  if (a.type === 'ObjectExpression') return (a.properties ?? []).some((p) => p.type === 'ObjectProperty' && !p.computed && (p.key?.name ?? p.key?.value) === 'text' && passes(unwrap(p.value as BNode), name));
  return false;
}

/** The objects a class is given where it is built: arguments of the call it extends, and of `super(...)` in its constructor. */
function constructionObjects(cls: BNode, resolve: (n: BNode) => BNode): BNode[] {
  const out: BNode[] = [];
  const written = (cls as unknown as { superClass?: BNode }).superClass;
  const sup = written ? resolve(written) : undefined;
  if (sup && isCall(unwrap(sup))) for (const a of unwrap(sup).arguments ?? []) if (unwrap(a).type === 'ObjectExpression') out.push(unwrap(a));
  for (const m of (cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []) {
    if (m.type !== 'ClassMethod' || m.kind !== 'constructor' || !m.body || Array.isArray(m.body)) continue;
    for (const st of (m.body.body as BNode[] | undefined) ?? []) {
      const c = st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined;
      if (c && isCall(c) && unwrap(c.callee!).type === 'Super') for (const a of c.arguments ?? []) if (unwrap(a).type === 'ObjectExpression') out.push(unwrap(a));
    }
  }
  return out;
}

/** The `super(...)` call a class's constructor makes, if it makes one as a statement. */
function superCall(cls: BNode): BNode | undefined {
  const ctor = ((cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).find((m) => m.type === 'ClassMethod' && m.kind === 'constructor');
  const body = ctor?.body && !Array.isArray(ctor.body) ? (ctor.body.body as BNode[] | undefined) ?? [] : [];
  return body.map((st) => (st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined)).find((c): c is BNode => c !== undefined && isCall(c) && unwrap(c.callee!).type === 'Super');
}

/** The place of a class's constructor parameter that declares the field `name` (`constructor(protected name: string)`), or -1. */
function parameterPropertyIndex(cls: BNode, name: string): number {
  const ctor = ((cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).find((m) => m.type === 'ClassMethod' && m.kind === 'constructor');
  return (ctor?.params ?? []).findIndex((p) => {
    if (p.type !== 'TSParameterProperty') return false;
    const q = (p as unknown as { parameter: BNode }).parameter;
    const id = q.type === 'AssignmentPattern' ? q.left : q;
    return id?.type === 'Identifier' && id.name === name;
  });
}

function isNothing(e: BNode): boolean {
  const v = unwrap(e);
  return v.type === 'NullLiteral' || (v.type === 'Identifier' && v.name === 'undefined');
}

/** True when a block or function declares `name` itself (a parameter, a var/let/const, a function). */
function shadows(n: BNode, name: string): boolean {
  const names = new Map<string, Binding>();
  if (FUNCTIONS.has(n.type) || n.type === 'ObjectMethod' || n.type === 'ClassMethod' || n.type === 'CatchClause') {
    for (const p of n.params ?? []) declareNames(p, names);
    if (n.type === 'CatchClause') declareNames(n.param, names);
  } else if (n.type === 'BlockStatement') declareStatements(Array.isArray(n.body) ? n.body : [], names);
  else return false;
  return names.has(name);
}

/** The fields each class's methods assign (assignsField), kept per class node: a parsed tree does not change. */
const assignedFields = new WeakMap<BNode, Set<string>>();

/** True when a method of the class (its constructor aside) assigns `this.<field> = ...`. */
function assignsField(cls: BNode, field: string): boolean {
  let names = assignedFields.get(cls);
  if (!names) {
    names = new Set<string>();
    const stack: BNode[] = ((cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).filter((m) => !(m.type === 'ClassMethod' && m.kind === 'constructor'));
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n.type === 'ClassDeclaration' || n.type === 'ClassExpression') continue;
      const left = n.type === 'AssignmentExpression' ? unwrap(n.left!) : undefined;
      const key = left && isMember(left) && !left.computed && unwrap(left.object!).type === 'ThisExpression' ? propertyName(left) : undefined;
      if (key !== undefined) names.add(key);
      pushChildren(n, stack);
    }
    assignedFields.set(cls, names);
  }
  return names.has(field);
}

/** The string an enum's member is given as a literal (`USERS = 'users'`), the node written; undefined for any other member. */
function enumInitializer(decl: BNode, name: string): BNode | undefined {
  const members = (decl as unknown as { members?: { id?: BNode; initializer?: BNode }[] }).members ?? [];
  const m = members.find((x) => x.id && (x.id.name ?? x.id.value) === name);
  const init = m?.initializer ? unwrap(m.initializer) : undefined;
  return init && (init.type === 'StringLiteral' || (init.type === 'TemplateLiteral' && (init.expressions?.length ?? 0) === 0)) ? init : undefined;
}
