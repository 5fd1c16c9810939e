// An application's own query-builder class: `const q = new QueryBuilder('SELECT ... FROM t')`, then
// `q.equal('owner', id)`, `q.addCondition('...')`, `q.append('ORDER BY ...')`, and `db.query(q.buildString())`.
// The statement is what the class's methods make of the text the calling function gives them, read by
// following the methods' bodies without running them: fields that hold text (`this.base += text`) or lists
// of text (`this.conditions.push(column + ' = ' + this.addVariable(value))`), and the method that joins them
// (`'WHERE ' + this.conditions.join(' AND ')`). A method's call inside an expression (`this.addVariable(v)`)
// is a value, a $n; of an if the first branch that does not throw, unless the test asks how long a field is
// or whether it holds text, which the state answers; a loop over a list the caller writes out runs once per
// element. Anything else the class does (a field of another shape, a loop over what is not written out) leaves
// the statement unread. A function of the module or the workspace the builder is handed to
// (`buildFilters(params, q, 'asset.owner')`) is read the same way, its other parameters holding the call's
// arguments; one whose calls on it are not read so (in a loop) is named, and what it adds is left out.

import type { Extractor } from './extractor';
import { isCall, isMember, propertyName, pushChildren, unwrap, type BNode } from './syntax';

/**
 * A piece of the statement: text the class writes (`lit`), an expression of the calling file to read as
 * the finder reads any part of a statement (`node`), or a value the builder adds at run time (`value`).
 * Each is mapped to `at`, the call in the calling file that made it.
 */
export type Atom = { lit: string; at: BNode } | { node: BNode; at: BNode } | { value: true; at: BNode };

export interface ClassBuilt {
  atoms: Atom[];
  /** Calls of the calling function that hand the builder on (`addFilters(params, q)`), whose additions are not read. */
  left: BNode[];
}

/** A field: text, or a list of texts. */
type Value = { text: Atom[] } | { list: Atom[][] };

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
const MAX_STEPS = 400;

class Unread extends Error {}

/** The statement `call` (`q.buildString()`) builds, when `q` is a constant made with `new` of a class of the workspace. */
export function classBuilt(ex: Extractor, call: BNode): ClassBuilt | undefined {
  const callee = unwrap(call.callee!);
  if (!isMember(callee) || (call.arguments?.length ?? 0) > 0) return undefined;
  const obj = unwrap(callee.object!);
  const method = propertyName(callee);
  if (obj.type !== 'Identifier' || method === undefined) return undefined;
  const made = ex.constInit(obj.name!);
  const ctor = made ? unwrap(made) : undefined;
  if (ctor?.type !== 'NewExpression' || unwrap(ctor.callee!).type !== 'Identifier') return undefined;
  const cls = ex.classOf(ctor.callee!, 0);
  if (!cls) return undefined;
  const members = (cls.node as unknown as { body?: { body?: BNode[] } }).body?.body ?? [];
  const methodNamed = (name: string) => members.find((m) => m.type === 'ClassMethod' && m.kind === 'method' && !m.computed && m.key?.name === name);
  const build = methodNamed(method);
  // Only a method that returns something; what it returns must then read as a statement (sqlStrings.ts).
  if (!build || !returnsValue(build)) return undefined;
  const scopeNode = ex.declaringNode(obj.name!);
  if (!scopeNode) return undefined;
  const run = new Run(methodNamed);
  try {
    const ctorFn = members.find((m) => m.type === 'ClassMethod' && m.kind === 'constructor');
    for (const m of members) {
      // Fields declared with a value: `private conditions: string[] = []`, `private ending = ''`.
      if (m.type === 'ClassProperty' && !m.computed && m.key?.name && m.value) run.fields.set(m.key.name, run.initial(unwrap(m.value as BNode), ctor));
    }
    const given = (args: BNode[], at: BNode) => args.map((a): Atom[] => [{ node: unwrap(a), at }]);
    if (ctorFn) run.call(ctorFn, given(ctor.arguments ?? [], ctor), ctor);
    const left: BNode[] = [];
    for (const step of stepsOn(scopeNode, obj.name!, ctor.end, call.start)) {
      if (step.handedOn) {
        if (!handedTo(ex, step.call, obj.name!, run, methodNamed, 0)) left.push(step.call);
        continue;
      }
      const fn = methodNamed(step.method!);
      if (!fn) throw new Unread();
      run.call(fn, given(step.call.arguments ?? [], step.call), step.call);
    }
    const atoms = run.call(build, [], call);
    return atoms ? { atoms, left } : undefined;
  } catch (e) {
    if (e instanceof Unread) return undefined;
    throw e;
  }
}

/**
 * `buildFilters(params, q, 'asset.owner')`: what a function of the module or of the workspace does to the
 * builder it is handed, as the calling function's own calls are read (every optional call present, of an if
 * ... else whose first branch calls on it the first), its other parameters holding the call's arguments: an
 * if the arguments decide (`if (columns.collectionName)` of `{ collectionName: 'c.name' }`, `if (dateColumn)`
 * of `null`) takes the branch they choose. Its text is mapped to the call. False, the fields as they were,
 * when anything it does to the builder is not read so (a loop, another shape of statement).
 */
function handedTo(ex: Extractor, call: BNode, name: string, run: Run, methodNamed: (n: string) => BNode | undefined, depth: number): boolean {
  const callee = unwrap(call.callee!);
  if (depth > 2 || callee.type !== 'Identifier') return false;
  const fn = functionNamed(ex, callee.name!);
  const at = (call.arguments ?? []).findIndex((a) => unwrap(a).type === 'Identifier' && unwrap(a).name === name);
  const param = fn?.params?.[at] ? unwrap(fn.params[at]!) : undefined;
  if (!fn || param?.type !== 'Identifier' || (fn.body as BNode).type !== 'BlockStatement') return false;
  const scope: Scope = new Map();
  (fn.params ?? []).forEach((p, i) => {
    const id = unwrap(p.type === 'AssignmentPattern' ? p.left! : p);
    const arg = call.arguments?.[i];
    if (id.type === 'Identifier' && i !== at && arg) scope.set(id.name!, [{ node: unwrap(arg), at: call }]);
  });
  // A parameter the function assigns again (`options = { ...defaults, ...options }`) holds what the call gave only until then.
  const stack: BNode[] = [fn.body as BNode];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'AssignmentExpression' && unwrap(n.left!).type === 'Identifier') scope.delete(unwrap(n.left!).name!);
    pushChildren(n, stack);
  }
  const saved = run.snapshot();
  try {
    if (walk(fn.body as BNode, param.name!, scope, call, run, methodNamed)) return true;
  } catch (e) {
    if (!(e instanceof Unread)) throw e;
  }
  run.restore(saved);
  return false;
}

/** A function this module declares or imports from another module of the workspace, by its name. */
function functionNamed(ex: Extractor, name: string): BNode | undefined {
  const r = ex.lookup(name);
  const local = r && 'fn' in r.binding ? r.binding.fn : r && 'init' in r.binding ? unwrap(r.binding.init) : undefined;
  if (local) return FUNCTIONS.has(local.type) ? local : undefined;
  const other = ex.imported(name);
  const b = other ? other.ex.module.names.get(other.local) : undefined;
  const f = b ? ('fn' in b ? b.fn : 'init' in b ? unwrap(b.init) : undefined) : undefined;
  return f && FUNCTIONS.has(f.type) ? f : undefined;
}

/** Runs the calls a helper's statements make on its parameter `name`; false when one is not read. */
function walk(n: BNode, name: string, scope: Scope, call: BNode, run: Run, methodNamed: (m: string) => BNode | undefined): boolean {
  switch (n.type) {
    case 'BlockStatement':
      return (n.body as BNode[]).every((s) => walk(s, name, scope, call, run, methodNamed));
    case 'IfStatement': {
      const known = decided(unwrap(n.test!), scope);
      if (known === false) return n.alternate ? walk(n.alternate, name, scope, call, run, methodNamed) : true;
      if (!walk(n.consequent!, name, scope, call, run, methodNamed)) return false;
      return known === true || !n.alternate || callsOn(n.consequent!, name) ? true : walk(n.alternate, name, scope, call, run, methodNamed);
    }
    case 'ExpressionStatement': {
      let e = unwrap(n.expression!);
      if (e.type === 'AwaitExpression') e = unwrap(e.argument!);
      const chain = chainOn(e, name);
      if (!chain) return !callsOn(n, name) && !handsOn(n, name);
      for (const c of chain) {
        const fn = methodNamed(propertyName(unwrap(c.callee!)) ?? '');
        if (!fn) return false;
        run.call(fn, (c.arguments ?? []).map((a) => run.read(unwrap(a), scope, call)), call);
      }
      return true;
    }
    default:
      // Any other statement may do anything to the builder; one that calls on it or hands it on is not read.
      return !callsOn(n, name) && !handsOn(n, name);
  }
}

/** Whether a call under `node` is given the builder itself (`buildListingFilter(values, q)`). */
function handsOn(node: BNode, name: string): boolean {
  const stack: BNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (isCall(n) && (n.arguments ?? []).some((a) => unwrap(a).type === 'Identifier' && unwrap(a).name === name)) return true;
    if (FUNCTIONS.has(n.type)) continue;
    pushChildren(n, stack);
  }
  return false;
}

/** What the helper's arguments say of a test: `columns.collectionName` of `{ collectionName: 'x' }`, a `null` column. */
function decided(t: BNode, scope: Scope): boolean | undefined {
  if (t.type === 'UnaryExpression' && t.operator === '!') {
    const v = decided(unwrap(t.argument!), scope);
    return v === undefined ? undefined : !v;
  }
  if (t.type === 'LogicalExpression' && (t.operator === '&&' || t.operator === '||')) {
    const l = decided(unwrap(t.left!), scope);
    const r = decided(unwrap(t.right!), scope);
    if (t.operator === '&&') return l === false || r === false ? false : l === true && r === true ? true : undefined;
    return l === true || r === true ? true : l === false && r === false ? false : undefined;
  }
  const given = (e: BNode): BNode | undefined => {
    const v = e.type === 'Identifier' ? scope.get(e.name!) : undefined;
    const one = v?.length === 1 ? v[0]! : undefined;
    return one && 'node' in one ? unwrap(one.node) : undefined;
  };
  const truth = (v: BNode | undefined): boolean | undefined => {
    if (!v) return undefined;
    if (v.type === 'StringLiteral') return v.value !== '';
    if (v.type === 'NullLiteral' || (v.type === 'Identifier' && v.name === 'undefined')) return false;
    if (v.type === 'ObjectExpression' || v.type === 'ArrayExpression') return true;
    return undefined;
  };
  if (t.type === 'Identifier') return truth(given(t));
  // `columns.account?.length`, `columns.collectionName`: of an object the call writes out, a property it lacks is undefined.
  let m = t;
  if (isMember(m) && propertyName(m) === 'length' && isMember(unwrap(m.object!))) m = unwrap(m.object!);
  if (isMember(m) && unwrap(m.object!).type === 'Identifier') {
    const obj = given(unwrap(m.object!));
    if (obj?.type !== 'ObjectExpression') return undefined;
    const key = propertyName(m);
    const prop = (obj.properties ?? []).find((p) => p.type === 'ObjectProperty' && !p.computed && (p.key?.name ?? p.key?.value) === key);
    if (!prop) return (obj.properties ?? []).some((p) => p.type !== 'ObjectProperty') ? undefined : false;
    return m === t ? truth(unwrap(prop.value as BNode)) : undefined;
  }
  return undefined;
}

/** Whether a method returns a value (not only `return;`). */
function returnsValue(fn: BNode): boolean {
  const stack: BNode[] = [fn.body as BNode];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'ReturnStatement' && n.argument) return true;
    if (FUNCTIONS.has(n.type)) continue;
    pushChildren(n, stack);
  }
  return false;
}

interface Step {
  call: BNode;
  method?: string;
  handedOn?: boolean;
}

/**
 * The calls of the calling function on the builder between where it is made and where it is built, in the
 * order written: `q.m(...)` as a statement of its own (also chained, `q.a(x).b(y)`), every optional one
 * present; of an if ... else chain whose first branch calls on it, the first branch's. A call that hands the
 * builder to another function is noted.
 */
function stepsOn(scope: BNode, name: string, from: number, to: number): Step[] {
  const out: Step[] = [];
  const elses = new Set<BNode>();
  const stack: BNode[] = [scope];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.end <= from || n.start >= to) continue;
    if (n.type === 'IfStatement' && n.alternate && callsOn(n.consequent!, name)) elses.add(n.alternate);
    if ([...elses].some((e) => e.start <= n.start && n.end <= e.end)) continue;
    if (n.type === 'ExpressionStatement') {
      let e = unwrap(n.expression!);
      if (e.type === 'AwaitExpression') e = unwrap(e.argument!);
      const chain = chainOn(e, name);
      if (chain) {
        out.push(...chain.map((c) => ({ call: c, method: propertyName(unwrap(c.callee!))! })));
        continue;
      }
    }
    if (isCall(n) && !isMember(unwrap(n.callee!)) && (n.arguments ?? []).some((a) => unwrap(a).type === 'Identifier' && unwrap(a).name === name)) out.push({ call: n, handedOn: true });
    if (FUNCTIONS.has(n.type)) continue;
    pushChildren(n, stack);
  }
  return out.sort((a, b) => a.call.start - b.call.start);
}

/** `q.a(x).b(y)` on `name`: the calls [a(x), b(y)], inside out. */
function chainOn(e: BNode, name: string): BNode[] | undefined {
  const calls: BNode[] = [];
  let cur = e;
  while (isCall(cur) && isMember(unwrap(cur.callee!))) {
    calls.unshift(cur);
    cur = unwrap(unwrap(cur.callee!).object!);
  }
  return calls.length > 0 && cur.type === 'Identifier' && cur.name === name ? calls : undefined;
}

function callsOn(node: BNode, name: string): boolean {
  const stack: BNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (isCall(n) && chainOn(n, name)) return true;
    if (FUNCTIONS.has(n.type)) continue;
    pushChildren(n, stack);
  }
  return false;
}

/** Thrown through a method's statements when it returns, with what it returns. */
class Returned {
  constructor(readonly value: Atom[] | undefined) {}
}

type Scope = Map<string, Atom[]>;

/** The instance's fields as the calls so far left them, and the methods' bodies read against them. */
class Run {
  readonly fields = new Map<string, Value>();
  private steps = 0;
  private depth = 0;

  constructor(private readonly methodNamed: (name: string) => BNode | undefined) {}

  snapshot(): Map<string, Value> {
    return new Map([...this.fields].map(([k, v]) => [k, 'list' in v ? { list: v.list.map((i) => [...i]) } : { text: [...v.text] }]));
  }

  restore(saved: Map<string, Value>): void {
    this.fields.clear();
    for (const [k, v] of saved) this.fields.set(k, v);
  }

  /** An expression of a helper the builder is handed to, as pieces (see expr). */
  read(e: BNode, scope: Scope, at: BNode): Atom[] {
    return this.expr(e, scope, at);
  }

  /** A field's declared value (`= []`, `= ''`), its text mapped to `at`, where the instance is made. */
  initial(v: BNode, at: BNode): Value {
    if (v.type === 'ArrayExpression' && (v.elements ?? []).length === 0) return { list: [] };
    if (v.type === 'StringLiteral') return { text: v.value ? [{ lit: v.value as string, at }] : [] };
    return { text: [{ value: true, at }] };
  }

  /** Runs a method with its parameters bound to `args` (each as pieces); what it returns, if text. */
  call(fn: BNode, args: Atom[][], at: BNode): Atom[] | undefined {
    if (++this.depth > 6) throw new Unread();
    const scope: Scope = new Map();
    (fn.params ?? []).forEach((p, i) => {
      let param = unwrap(p);
      // `readonly view: string` in a constructor: a field set from the argument.
      const property = param.type === 'TSParameterProperty';
      if (property) param = unwrap((param as unknown as { parameter: BNode }).parameter);
      const fallback = param.type === 'AssignmentPattern' ? unwrap(param.right!) : undefined;
      const id = param.type === 'AssignmentPattern' ? unwrap(param.left!) : param;
      if (id.type !== 'Identifier') return;
      const value: Atom[] = args[i] ?? (fallback?.type === 'StringLiteral' ? [{ lit: fallback.value as string, at }] : [{ value: true, at }]);
      scope.set(id.name!, value);
      if (property) this.fields.set(id.name!, { text: value });
    });
    try {
      this.block(fn.body as BNode, scope, at);
      return undefined;
    } catch (r) {
      if (r instanceof Returned) return r.value;
      throw r;
    } finally {
      this.depth--;
    }
  }

  private block(n: BNode, scope: Scope, at: BNode): void {
    if (++this.steps > MAX_STEPS) throw new Unread();
    switch (n.type) {
      case 'BlockStatement':
        for (const s of n.body as unknown as BNode[]) this.block(s, scope, at);
        return;
      case 'EmptyStatement':
        return;
      case 'ExpressionStatement':
        this.statement(unwrap(n.expression!), scope, at);
        return;
      case 'ReturnStatement': {
        const arg = n.argument ? unwrap(n.argument) : undefined;
        if (!arg || arg.type === 'ThisExpression') throw new Returned(undefined);
        // `return this.equal(column, values[0])`: that method runs, and returns this.
        if (isCall(arg) && this.ownMethod(arg)) {
          this.statement(arg, scope, at);
          throw new Returned(undefined);
        }
        throw new Returned(this.expr(arg, scope, at));
      }
      case 'VariableDeclaration':
        for (const d of (n as unknown as { declarations: { id: BNode; init?: BNode }[] }).declarations) {
          const id = unwrap(d.id);
          if (id.type !== 'Identifier') throw new Unread();
          scope.set(id.name!, d.init ? this.expr(unwrap(d.init), scope, at) : []);
        }
        return;
      case 'IfStatement': {
        const known = this.test(unwrap(n.test!));
        if (known !== undefined) {
          const b = known ? n.consequent! : n.alternate;
          if (b) this.block(b, scope, at);
          return;
        }
        // A branch that throws is not the one that builds a statement; else the first.
        for (const b of [n.consequent!, n.alternate]) {
          if (!b || throws(b)) continue;
          this.block(b, scope, at);
          return;
        }
        return;
      }
      case 'ForOfStatement': {
        const left = unwrap(n.left!);
        const decl = left.type === 'VariableDeclaration' ? unwrap((left as unknown as { declarations: { id: BNode }[] }).declarations[0]!.id) : left;
        const list = elementsOf(unwrap(n.right!), scope);
        if (decl.type !== 'Identifier' || !list) throw new Unread();
        for (const el of list) {
          scope.set(decl.name!, el);
          this.block(n.body as BNode, scope, at);
        }
        return;
      }
      default:
        throw new Unread();
    }
  }

  /** The method of this class a call `this.m(...)` runs, if it is one. */
  private ownMethod(c: BNode): BNode | undefined {
    const callee = unwrap(c.callee!);
    return isMember(callee) && unwrap(callee.object!).type === 'ThisExpression' ? this.methodNamed(propertyName(callee) ?? '') : undefined;
  }

  private statement(e: BNode, scope: Scope, at: BNode): void {
    if (isCall(e)) {
      const callee = unwrap(e.callee!);
      if (!isMember(callee)) throw new Unread();
      // this.m(...): another method, run for what it does to the fields.
      const own = this.ownMethod(e);
      if (own) {
        this.call(own, (e.arguments ?? []).map((a) => this.expr(unwrap(a), scope, at)), at);
        return;
      }
      const field = this.thisField(unwrap(callee.object!));
      if (field === undefined || propertyName(callee) !== 'push') throw new Unread();
      const v = this.fields.get(field);
      // this.conditions.push(text); a push into a field that is no list of text (`this.values.push(v)`) adds nothing to it.
      if (v && 'list' in v) for (const a of e.arguments ?? []) v.list.push(this.expr(unwrap(a), scope, at));
      return;
    }
    if (e.type !== 'AssignmentExpression' || (e.operator !== '=' && e.operator !== '+=')) throw new Unread();
    const target = unwrap(e.left!);
    const field = this.thisField(target);
    const local = target.type === 'Identifier' ? target.name! : undefined;
    const right = unwrap(e.right!);
    if (e.operator === '+=') {
      const add = this.expr(right, scope, at);
      const v = field !== undefined ? this.fields.get(field) : undefined;
      if (local !== undefined && scope.has(local)) scope.set(local, [...scope.get(local)!, ...add]);
      else if (v && 'text' in v) v.text.push(...add);
      else throw new Unread();
      return;
    }
    if (local !== undefined) {
      scope.set(local, this.expr(right, scope, at));
      return;
    }
    if (field === undefined) throw new Unread();
    // `this.aggregations = [...this.aggregations, ...columns]`
    if (right.type === 'ArrayExpression') {
      const items: Atom[][] = [];
      for (const el of right.elements ?? []) {
        if (!el) continue;
        if (el.type !== 'SpreadElement') {
          items.push(this.expr(unwrap(el), scope, at));
          continue;
        }
        const from = unwrap(el.argument!);
        const f = this.thisField(from);
        const v = f !== undefined ? this.fields.get(f) : undefined;
        const listed = v && 'list' in v ? v.list : elementsOf(from, scope);
        if (!listed) throw new Unread();
        items.push(...listed);
      }
      this.fields.set(field, { list: items });
      return;
    }
    const prior = this.fields.get(field);
    if (prior && 'list' in prior) throw new Unread();
    this.fields.set(field, { text: this.expr(right, scope, at) });
  }

  /** `this.name`, the field's name. */
  private thisField(e: BNode): string | undefined {
    return isMember(e) && unwrap(e.object!).type === 'ThisExpression' ? propertyName(e) : undefined;
  }

  /** A test the fields decide: `this.list.length > 0`, `this.list.length`, `this.text`, `!this.text`; else undefined. */
  private test(t: BNode): boolean | undefined {
    if (t.type === 'UnaryExpression' && t.operator === '!') {
      const inner = this.test(unwrap(t.argument!));
      return inner === undefined ? undefined : !inner;
    }
    const size = (e: BNode): number | undefined => {
      const lengthOf = isMember(e) && propertyName(e) === 'length' ? this.thisField(unwrap(e.object!)) : undefined;
      if (lengthOf !== undefined) {
        const v = this.fields.get(lengthOf);
        return v && 'list' in v ? v.list.length : undefined;
      }
      const f = this.thisField(e);
      const v = f !== undefined ? this.fields.get(f) : undefined;
      // Text that holds anything but empty strings is there.
      return v && 'text' in v ? (v.text.some((a) => !('lit' in a) || a.lit !== '') ? 1 : 0) : undefined;
    };
    if (t.type === 'BinaryExpression' && t.right && unwrap(t.right).type === 'NumericLiteral') {
      const n = size(unwrap(t.left!));
      const k = unwrap(t.right).value as number;
      if (n === undefined) return undefined;
      if (t.operator === '>') return n > k;
      if (t.operator === '>=') return n >= k;
      if (t.operator === '===' || t.operator === '==') return n === k;
      if (t.operator === '!==' || t.operator === '!=') return n !== k;
      return undefined;
    }
    const n = size(t);
    return n === undefined ? undefined : n > 0;
  }

  /** An expression's text as pieces; a call inside an expression, or anything that is not text, is a value. */
  private expr(e: BNode, scope: Scope, at: BNode): Atom[] {
    if (++this.steps > MAX_STEPS) throw new Unread();
    if (e.type === 'StringLiteral') return [{ lit: e.value as string, at }];
    if (e.type === 'TemplateLiteral') {
      const out: Atom[] = [];
      (e.quasis ?? []).forEach((q, i) => {
        const cooked = (q.value as { cooked?: string } | undefined)?.cooked;
        if (cooked === undefined) throw new Unread();
        if (cooked) out.push({ lit: cooked, at });
        const x = e.expressions?.[i];
        if (x) out.push(...this.expr(unwrap(x), scope, at));
      });
      return out;
    }
    if (e.type === 'BinaryExpression' && e.operator === '+') return [...this.expr(unwrap(e.left!), scope, at), ...this.expr(unwrap(e.right!), scope, at)];
    // Of constants chosen at run time (`isInt ? 'BIGINT' : 'TEXT'`), the first.
    if (e.type === 'ConditionalExpression') return this.expr(unwrap(e.consequent!), scope, at);
    if (e.type === 'Identifier' && scope.has(e.name!)) return [...scope.get(e.name!)!];
    // `columns.collectionName` of a `{ collectionName: 'c.name' }` the calling file writes out.
    if (isMember(e) && unwrap(e.object!).type === 'Identifier') {
      const v = scope.get(unwrap(e.object!).name!);
      const one = v?.length === 1 ? v[0]! : undefined;
      const obj = one && 'node' in one ? unwrap(one.node) : undefined;
      const key = propertyName(e);
      const prop = obj?.type === 'ObjectExpression' ? (obj.properties ?? []).find((p) => p.type === 'ObjectProperty' && !p.computed && (p.key?.name ?? p.key?.value) === key) : undefined;
      if (prop) return [{ node: unwrap(prop.value as BNode), at: one!.at }];
    }
    const f = this.thisField(e);
    const v = f !== undefined ? this.fields.get(f) : undefined;
    if (v && 'text' in v) return [...v.text];
    // `this.list.join(' AND ')`: the list's pieces with the separator between them.
    const callee = isCall(e) ? unwrap(e.callee!) : undefined;
    if (callee && isMember(callee) && propertyName(callee) === 'join') {
      const lf = this.thisField(unwrap(callee.object!));
      const lv = lf !== undefined ? this.fields.get(lf) : undefined;
      const sep = e.arguments?.[0] ? unwrap(e.arguments[0]) : undefined;
      if (lv && 'list' in lv && (!sep || sep.type === 'StringLiteral')) {
        const s = sep ? (sep.value as string) : ',';
        return lv.list.flatMap((item, i) => (i === 0 ? item : [{ lit: s, at: item[0]?.at ?? at }, ...item]));
      }
    }
    return [{ value: true, at }];
  }
}

/** The elements of a list the calling file writes out (`['a', 'b']`), handed in as one piece. */
function elementsOf(e: BNode, scope: Scope): Atom[][] | undefined {
  const v = e.type === 'Identifier' ? scope.get(e.name!) : undefined;
  const one = v?.length === 1 ? v[0]! : undefined;
  const arr = one && 'node' in one ? unwrap(one.node) : undefined;
  if (arr?.type !== 'ArrayExpression' || (arr.elements ?? []).some((x) => !x || x.type === 'SpreadElement')) return undefined;
  return (arr.elements ?? []).map((x) => [{ node: x!, at: one!.at }]);
}

function throws(b: BNode): boolean {
  const body = b.type === 'BlockStatement' ? (b.body as unknown as BNode[]) : [b];
  return body.some((s) => s.type === 'ThrowStatement');
}
