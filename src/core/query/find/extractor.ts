// Walks one top-level statement with its scopes and hands every call and tagged template to the
// readers of each library (mongoDriver.ts, mongoose.ts, sqlStrings.ts, ...). The first reader that
// recognises a call takes it; calls it consumed (the cursor methods of a chain) are not read again.
// The readers share what the walk knows: constants in scope, strings they hold, the source text.

import { cookedOf, children, isCall, isMember, propertyName, unwrap, type BNode } from './syntax';
import { declareNames, declareStatements, Scope, type Binding, type ModuleScope } from './scope';
import type { FoundQuery, SourceRange } from './types';

export const MAX_RESOLVE_DEPTH = 16;

/** A reader of one library's calls. */
export interface CallReader {
  /** Reads the call (or tagged template) `n`; true when it recognised it, so no later reader sees it. */
  read(n: BNode, ex: Extractor): boolean;
}

/** A call of a chain `a.b(x).c(y)`: its method name, the call, and the name's node. */
export type ChainCall = { name: string; call: BNode; nameNode: BNode };

export class Extractor {
  private scope: Scope | undefined;
  private readonly consumed = new Set<BNode>();
  private readonly out: FoundQuery[] = [];

  constructor(
    readonly source: string,
    private readonly module: ModuleScope,
    private readonly uses: Set<string>,
    private readonly localMutated: Set<string>,
    readonly kind: 'mongodb-playground' | 'script',
    private readonly readers: readonly CallReader[],
  ) {}

  run(root: BNode): FoundQuery[] {
    this.walk(root);
    return this.out.sort((a, b) => a.range.start - b.range.start);
  }

  /** Records a query found by a reader. */
  push(q: FoundQuery): void {
    this.out.push(q);
  }

  /** Marks calls as read, so the walk does not offer them to the readers again. */
  consume(...calls: BNode[]): void {
    for (const c of calls) this.consumed.add(c);
  }

  // -- traversal with scopes --

  private walk(root: BNode): void {
    // An explicit stack of enter/leave steps, so deep files cannot overflow the call stack.
    type Step = { node: BNode; leave?: Scope | undefined; pushed?: boolean };
    const stack: Step[] = [{ node: root }];
    while (stack.length > 0) {
      const step = stack.pop()!;
      if (step.pushed) {
        this.scope = step.leave;
        continue;
      }
      const n = step.node;
      const scoped = this.opensScope(n);
      if (scoped) {
        stack.push({ node: n, leave: this.scope, pushed: true });
        this.scope = scoped;
      }
      if (isCall(n) || n.type === 'TaggedTemplateExpression') this.visitCall(n);
      const kids: BNode[] = [];
      children(n, (c) => kids.push(c));
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i]! });
    }
  }

  /** A new scope for blocks and functions, holding what they declare directly. */
  private opensScope(n: BNode): Scope | undefined {
    switch (n.type) {
      case 'BlockStatement':
      case 'StaticBlock':
      case 'Program': {
        const s = new Scope(this.scope);
        declareStatements(Array.isArray(n.body) ? n.body : [], s.names);
        return s;
      }
      case 'SwitchStatement': {
        const s = new Scope(this.scope);
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
        const s = new Scope(this.scope);
        for (const p of n.params ?? []) declareNames(p, s.names);
        if (n.type === 'FunctionExpression' && n.id) s.names.set(n.id.name!, { unknown: true });
        if (n.type === 'ArrowFunctionExpression' && n.body && !Array.isArray(n.body) && n.body.type !== 'BlockStatement') return s;
        return s;
      }
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement': {
        const s = new Scope(this.scope);
        const decl = (n as unknown as { init?: BNode; left?: BNode }).init ?? n.left;
        if (decl?.type === 'VariableDeclaration') for (const d of decl.declarations ?? []) declareNames(d.id, s.names);
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

  /** The binding of a name where it is used: the innermost scope, then the module. */
  lookup(name: string): { binding: Binding; mutated: boolean } | undefined {
    for (let s = this.scope; s; s = s.parent) {
      const b = s.names.get(name);
      if (b) return { binding: b, mutated: this.localMutated.has(name) };
    }
    this.uses.add(name);
    const b = this.module.names.get(name);
    if (b) this.module.owner.get(name)?.flush();
    return b ? { binding: b, mutated: this.module.mutated.has(name) } : undefined;
  }

  constInit(name: string): BNode | undefined {
    const r = this.lookup(name);
    if (!r || r.mutated || !('init' in r.binding)) return undefined;
    return r.binding.init;
  }

  // -- calls --

  private visitCall(n: BNode): void {
    if (this.consumed.has(n)) return;
    for (const r of this.readers) if (r.read(n, this)) return;
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

  /** A string written as a literal or held by a local constant. */
  stringOf(e: BNode, depth: number): string | undefined {
    if (depth > MAX_RESOLVE_DEPTH) return undefined;
    e = unwrap(e);
    if (e.type === 'StringLiteral') return e.value as string;
    if (e.type === 'TemplateLiteral' && (e.expressions?.length ?? 0) === 0) return cookedOf(e.quasis![0]!);
    if (e.type === 'Identifier') {
      const init = this.constInit(e.name!);
      return init ? this.stringOf(init, depth + 1) : undefined;
    }
    return undefined;
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

  text(r: SourceRange): string {
    return this.source.slice(r.start, r.end);
  }

  isIdentifierKnown(name: string): boolean {
    return this.constInit(name) !== undefined;
  }
}
