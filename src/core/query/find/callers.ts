// A function's parameter as its callers give it: `configureFiltersModule({ Filters })` passes the collection
// its caller made with `db.collection('filters')`. The calls are looked for in the function's own file (in
// the block that declares it, the class of a private method called as `this.<name>(...)`, or the whole file
// for a module-level function) and, for a module-level one, in the workspace's files that import it by name
// or reach it through a namespace they import (`new lib.locks.Lock(...)`) (a reverse index of the names each
// file imports, and of the names a file importing a namespace calls as members, built on the first ask and
// kept for a while, so an edit does not read the workspace again; it also lists the files that declare a
// global's type, `declare global { var App: AppGlobal }`). The answer is every call's value, or
// nothing when a call cannot be read (a spread, a value the function is handed to as a callback, more calls
// or files than the caps): a reader then names the collection only when every value names the same one, and
// never guesses.

import type { Extractor } from './extractor';
import { mutationsOf, requiredModule } from './scope';
import { isCall, isMember, keyName, propertyName, pushChildren, unwrap, type BNode } from './syntax';
import type { WorkspaceModules } from './types';
import { exportedBinding, foreignModule, importedName, type ForeignModule } from './workspace';

/** Calls of one function read at most, over all files. */
export const MAX_CALLS = 24;
/** Files (other than the function's own) that import it, read at most. */
export const MAX_CALLER_FILES = 16;
/** How long the workspace's index of imported names is kept before its files are checked again (the language server's files change). */
const INDEX_TTL_MS = 30_000;
/** Files the index reads at most. */
const MAX_INDEXED_FILES = 10_000;

/** One call's value for the parameter, read in the scopes around the call. */
export interface CallerValue {
  /** The file the call is in (undefined for the function's own file when it has no path). */
  file: string | undefined;
  /** Runs `read` on the value the call gives the parameter, with an extractor of the caller's file in the call's scopes. */
  read<T>(read: (ex: Extractor, value: BNode) => T): T;
}

export interface Callers {
  /** The name the function is declared under (`new X` for a class's constructor), as a sentence names its calls. */
  fnName: string;
  values: CallerValue[];
}

/** A function whose callers are read: its parameter's place and the keys a pattern takes it by, the name it is called by (with `member`, a class's static method called as `<fnName>.<member>(...)`). */
interface CalledAs { fn: BNode; index: number; path: string[]; fnName: string; declaredIn?: BNode; label?: string; isClass?: boolean; member?: string; viaThis?: boolean }

/** Functions whose callers are being read, so a call inside one (recursion, or callers that call each other) ends. */
const reading = new Set<BNode>();

/**
 * What the callers of the function whose parameter `name` is give it, when `name` is a parameter (plain or
 * taken apart by a pattern) of a function declared under a name; undefined when it is not one, when no
 * call is found, or when one call or use of the function cannot be read.
 */
export function callersOf(ex: Extractor, name: string): Callers | undefined {
  if (ex.isForeign) return undefined;
  const p = ex.parameterOf(name);
  if (p?.viaThis) return callersOfParameter(ex, { fn: p.fn, index: p.index, path: p.path, fnName: p.fnName, declaredIn: p.declaredIn, label: `this.${p.fnName}`, viaThis: true });
  return p ? callersOfParameter(ex, p.member !== undefined ? { ...p, label: `${p.fnName}.${p.member}`, isClass: true } : p) : undefined;
}

/**
 * What the places that make instances of the class the walk is in (`new TicketStore(db.collection('tickets'))`)
 * give the field `this.<field>`, when its constructor takes it as a parameter (`constructor(private tickets:
 * Collection)`, or `this.tickets = tickets`) and the class is declared at the module's top level.
 */
export function constructorCallersOf(ex: Extractor, field: string): Callers | undefined {
  if (ex.isForeign) return undefined;
  const cls = ex.enclosingClassNode();
  const className = cls?.id?.name;
  if (!cls || className === undefined || !ex.module.classes.has(className)) return undefined;
  const ctor = ((cls as unknown as { body?: { body?: BNode[] } }).body?.body ?? []).find((m) => m.type === 'ClassMethod' && m.kind === 'constructor');
  if (!ctor) return undefined;
  const params = ctor.params ?? [];
  let index = params.findIndex((q) => q.type === 'TSParameterProperty' && paramName((q as unknown as { parameter: BNode }).parameter) === field);
  let path: string[] = [];
  if (index < 0) {
    // `constructor(tickets) { this.tickets = tickets }`, assigned once.
    const stmts = ctor.body && !Array.isArray(ctor.body) ? (ctor.body.body as BNode[] | undefined) ?? [] : [];
    const given = stmts.map((st) => (st.type === 'ExpressionStatement' ? unwrap(st.expression!) : undefined)).filter((a): a is BNode =>
      a?.type === 'AssignmentExpression' && a.operator === '=' && isMember(unwrap(a.left!)) && unwrap(unwrap(a.left!).object!).type === 'ThisExpression' && propertyName(unwrap(a.left!)) === field);
    const right = given.length === 1 ? unwrap(given[0]!.right!) : undefined;
    // `constructor(options) { this.tickets = options.tickets }`: that property of what the calls give.
    const key = right && isMember(right) && !right.computed && unwrap(right.object!).type === 'Identifier' ? propertyName(right) : undefined;
    const base = key !== undefined ? unwrap(right!.object!) : right;
    index = base?.type === 'Identifier' ? params.findIndex((q) => paramName(q) === base.name) : -1;
    if (key !== undefined) path = [key];
  }
  return index < 0 ? undefined : callersOfParameter(ex, { fn: ctor, index, path, fnName: className, label: `new ${className}`, isClass: true });
}

/** A plain parameter's name (`x`, `x = 1`, `private x`). */
function paramName(p: BNode): string | undefined {
  const id = p.type === 'AssignmentPattern' ? p.left : p.type === 'TSParameterProperty' ? (p as unknown as { parameter: BNode }).parameter : p;
  const inner = id?.type === 'AssignmentPattern' ? id.left : id;
  return inner?.type === 'Identifier' ? inner.name : undefined;
}

/** What one extractor (one statement's reading) found of each function's callers, so the queries of one function look once. */
const found = new WeakMap<Extractor, Map<string, Callers | undefined>>();

function callersOfParameter(ex: Extractor, p: CalledAs): Callers | undefined {
  let memo = found.get(ex);
  if (!memo) found.set(ex, (memo = new Map()));
  const key = `${p.fn.start}:${p.index}:${p.path.join('.')}`;
  if (memo.has(key)) return memo.get(key);
  const answer = readCallers(ex, p);
  memo.set(key, answer);
  return answer;
}

function readCallers(ex: Extractor, p: CalledAs): Callers | undefined {
  if (reading.has(p.fn)) return undefined;
  if (!p.declaredIn) ex.usesCallsOf(p.fnName);
  reading.add(p.fn);
  try {
    const values: CallerValue[] = [];
    const own = p.declaredIn ? [p.declaredIn] : ex.module.statements?.() ?? [];
    const here = p.viaThis ? thisCallsIn(own, p.fnName) : callsIn(own, p.fnName, p.isClass, p.member);
    if (!here) return undefined;
    const ownFile = ex.context.file;
    for (const c of here) {
      const top = c.path[0] ?? c.call;
      values.push(valueAt(ex.sibling(mutationsOf(top)), c.path, c.call, p.index, p.path, ownFile));
    }
    if (!p.declaredIn) {
      const elsewhere = importersCalls(ex, p.fnName, p.index, p.path, p.isClass, p.member);
      if (!elsewhere) return undefined;
      values.push(...elsewhere);
    }
    if (values.length === 0 || values.length > MAX_CALLS) return undefined;
    return { fnName: p.label ?? p.fnName, values };
  } finally {
    reading.delete(p.fn);
  }
}

function valueAt(ex: Extractor, path: BNode[], call: BNode, index: number, keys: string[], file: string | undefined): CallerValue {
  return {
    file,
    read: <T>(read: (x: Extractor, value: BNode) => T): T => ex.within(path, () => {
      const arg = call.arguments?.[index];
      let v: BNode | undefined = arg && arg.type !== 'SpreadElement' ? arg : undefined;
      for (const k of keys) {
        const o: BNode | undefined = v ? ex.follow(v) : undefined;
        if (o?.type !== 'ObjectExpression' || (o.properties ?? []).some((x) => x.type === 'SpreadElement')) {
          v = undefined;
          break;
        }
        const prop: BNode | undefined = (o.properties ?? []).find((x) => x.type === 'ObjectProperty' && !x.computed && x.key !== undefined && keyName(x.key) === k);
        v = prop ? ((prop.shorthand ? prop.key : prop.value) as BNode) : undefined;
      }
      // Nothing given: the reader is handed an identifier no scope declares, which names nothing.
      return read(ex, v ?? { type: 'Identifier', name: '\u0000nothing', start: call.start, end: call.start });
    }),
  };
}

/** Calls of the function in the workspace's files that import it by name; undefined when one cannot be read or there are too many. */
function importersCalls(ex: Extractor, fnName: string, index: number, keys: string[], isClass = false, member?: string): CallerValue[] | undefined {
  const importers = importersOf(ex, fnName);
  if (!importers) return undefined;
  const out: CallerValue[] = [];
  for (const { module: m, reader, local } of importers) {
    const calls = callsIn((m.program.body as BNode[] | undefined) ?? [], local, isClass, member);
    if (!calls) return undefined;
    for (const c of calls) out.push(valueAt(reader, c.path, c.call, index, keys, m.file));
    if (out.length > MAX_CALLS) return undefined;
  }
  if (member !== undefined) return out;
  const through = namespaceCallers(ex, fnName);
  if (!through) return undefined;
  for (const { module: m, reader, calls } of through) {
    for (const c of calls) out.push(valueAt(reader, c.path, c.call, index, keys, m.file));
    if (out.length > MAX_CALLS) return undefined;
  }
  return out;
}

/**
 * The calls of this module's top-level `name` that other files of the workspace make through a namespace
 * they import (`import * as lib from '@app/lib'`, then `new lib.locks.Lock(...)`, the module reached
 * through `export * as locks` and `export *`), each file with a reader of it; undefined when a file uses
 * the name otherwise than calling it (handed on, its calls are not all seen) or past the caps.
 */
function namespaceCallers(ex: Extractor, name: string): { module: ForeignModule; reader: Extractor; calls: { call: BNode; path: BNode[] }[] }[] | undefined {
  const { modules, file } = ex.context;
  if (!modules || file === undefined || !modules.files) return [];
  const out: { module: ForeignModule; reader: Extractor; calls: { call: BNode; path: BNode[] }[] }[] = [];
  const candidates = filesImporting(modules, `.${name}`).filter((x) => x !== file);
  if (candidates.length > MAX_CALLER_FILES) return undefined;
  for (const f of candidates) {
    const m = foreignModule(modules, f);
    if (!m) continue;
    const namespaces = new Map<string, string>();
    for (const [local, b] of m.scope.names) {
      if ('from' in b && b.from !== undefined && importedName(m.program, local) === '*') namespaces.set(local, b.from);
    }
    if (namespaces.size === 0) continue;
    const reaches = (chain: string[]): boolean => {
      let target = modules.resolve(f, namespaces.get(chain[0]!)!);
      for (const part of chain.slice(1, -1)) target = target ? namespaceAt(modules, target, part, 0) : undefined;
      const found = target ? exportedBinding(modules, target, name) : undefined;
      return found !== undefined && 'module' in found && found.module.file === file && found.local === name;
    };
    const calls = chainCallsIn((m.program.body as BNode[] | undefined) ?? [], namespaces, name, reaches);
    if (!calls) return undefined;
    if (calls.length > 0) out.push({ module: m, reader: ex.forModule(m), calls });
  }
  return out;
}

/** The module a module passes on as a namespace under `name` (`export * as name from './x'`, also through `export *`). */
function namespaceAt(modules: WorkspaceModules, file: string, name: string, depth: number): string | undefined {
  const m = depth > 4 ? undefined : foreignModule(modules, file);
  if (!m) return undefined;
  const e = m.exports.get(name);
  if (e) return 'from' in e && e.name === '*' ? modules.resolve(file, e.from) : undefined;
  for (const s of m.star) {
    const target = modules.resolve(file, s);
    const found = target ? namespaceAt(modules, target, name, depth + 1) : undefined;
    if (found) return found;
  }
  return undefined;
}

/**
 * The calls (and `new`s) whose callee is a chain from a namespace import to `name` (`lib.locks.Lock`) that
 * `reaches` says is the function, each with the nodes from the top-level statement down to it; undefined
 * when such a chain is used otherwise than called.
 */
function chainCallsIn(roots: readonly BNode[], namespaces: Map<string, string>, name: string, reaches: (chain: string[]) => boolean): { call: BNode; path: BNode[] }[] | undefined {
  const chainOf = (e: BNode): string[] | undefined => {
    const parts: string[] = [];
    let cur = unwrap(e);
    for (let i = 0; i < 8 && isMember(cur) && !cur.computed; i++) {
      parts.unshift(propertyName(cur) ?? '');
      cur = unwrap(cur.object!);
    }
    return cur.type === 'Identifier' && namespaces.has(cur.name!) && parts.length > 0 && parts[parts.length - 1] === name ? [cur.name!, ...parts] : undefined;
  };
  const out: { call: BNode; path: BNode[] }[] = [];
  const called = new Set<BNode>();
  const whole = walkWithPath(roots, (n, path) => {
    if ((isCall(n) || n.type === 'NewExpression') && n.callee) {
      const chain = chainOf(n.callee);
      if (chain && reaches(chain)) {
        called.add(unwrap(n.callee));
        out.push({ call: n, path: [...path] });
        if (out.length > MAX_CALLS) return 'stop';
      }
    } else if (isMember(n) && !called.has(n)) {
      const chain = chainOf(n);
      if (chain && reaches(chain)) return 'stop';
    }
    return undefined;
  });
  return whole ? out : undefined;
}

/**
 * Visits `roots` depth first, in source order, with the nodes from the top-level statement down to each
 * node (`path`, the node itself left out): `visit` answers 'skip' to leave out a node's children and 'stop'
 * to end the walk, which then returns false.
 */
function walkWithPath(roots: readonly BNode[], visit: (n: BNode, path: readonly BNode[]) => 'skip' | 'stop' | undefined): boolean {
  const EXIT = { type: '\u0000exit' } as BNode;
  const path: BNode[] = [];
  const stack: BNode[] = [...roots].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n === EXIT) {
      path.pop();
      continue;
    }
    const said = visit(n, path);
    if (said === 'stop') return false;
    if (said === 'skip') continue;
    const children: BNode[] = [];
    pushChildren(n, children);
    if (children.length === 0) continue;
    path.push(n);
    stack.push(EXIT);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return true;
}

/**
 * The workspace's files (other than this one) that import this module's top-level `name`, through
 * re-exports, each with the local name it is imported under and a reader of it; undefined past
 * MAX_CALLER_FILES. Only the files the index of imported names lists for `name` are parsed. `exported`
 * is the name the module exports it under where that is another (`default`: the files that import it
 * under its own name, or import a module named as this file is, whatever name they give it).
 */
export function importersOf(ex: Extractor, name: string, exported = name): { module: ForeignModule; reader: Extractor; local: string }[] | undefined {
  const { modules, file } = ex.context;
  if (!modules || file === undefined || !modules.files) return [];
  const out: { module: ForeignModule; reader: Extractor; local: string }[] = [];
  // A default export is imported under any name: also the files that import a module of this one's name.
  const listed = exported === 'default' ? [...new Set([...filesImporting(modules, name), ...filesImporting(modules, importedModuleKey(file))])] : filesImporting(modules, exported);
  for (const f of listed.filter((x) => x !== file)) {
    const m = foreignModule(modules, f);
    if (!m) continue;
    for (const [local, b] of m.scope.names) {
      const from = 'from' in b ? b.from : 'init' in b ? requiredModule(b.init) : undefined;
      if (from === undefined) continue;
      const imported = importedName(m.program, local);
      if (imported !== exported) continue;
      const target = modules.resolve(f, from);
      const found = target ? exportedBinding(modules, target, imported) : undefined;
      if (!found || !('module' in found) || found.module.file !== file || found.local !== name) continue;
      if (out.length >= MAX_CALLER_FILES) return undefined;
      out.push({ module: m, reader: ex.forModule(m), local });
    }
  }
  return out;
}

/**
 * The calls `this.<name>(...)` of a class's private method in the class, each with the nodes from the class
 * down to it; undefined when `this.<name>` is used otherwise than called (handed on, so calls not seen here
 * may give it anything) or there are more calls than the cap.
 */
function thisCallsIn(roots: readonly BNode[], name: string): { call: BNode; path: BNode[] }[] | undefined {
  const out: { call: BNode; path: BNode[] }[] = [];
  const called = new Set<BNode>();
  const isThisMember = (e: BNode) => isMember(e) && !e.computed && propertyName(e) === name && unwrap(e.object!).type === 'ThisExpression';
  const whole = walkWithPath(roots, (n, path) => {
    if (isCall(n) && isThisMember(unwrap(n.callee!))) {
      called.add(unwrap(n.callee!));
      out.push({ call: n, path: [...path] });
      if (out.length > MAX_CALLS) return 'stop';
    } else if (isThisMember(n) && !called.has(n)) return 'stop';
    return undefined;
  });
  return whole ? out : undefined;
}

/** Nodes whose identifiers are no use of a value: types, imports and exports by name. */
const NOT_VALUES = new Set(['TSTypeAnnotation', 'TSTypeAliasDeclaration', 'TSInterfaceDeclaration', 'TSTypeQuery', 'TSTypeParameterInstantiation', 'TSDeclareFunction',
  'ImportDeclaration', 'ExportSpecifier', 'TSTypeReference']);

/** Members of a class that hand it, or what it makes, to code not seen here. */
const HANDS_ON = new Set(['prototype', 'call', 'apply', 'bind']);

/**
 * The calls `name(...)` (and `new name(...)`) in `roots`, each with the nodes from its top-level statement
 * down to it; undefined when the name is used otherwise than called (handed on as a value, so calls not
 * seen here may give it anything), or when there are more calls than the cap. For a class, a static
 * member read on its name (`Worker.create(...)`) hands nothing on; `extends`, `.call` or `.bind` do.
 */
function callsIn(roots: readonly BNode[], name: string, isClass = false, member?: string): { call: BNode; path: BNode[] }[] | undefined {
  const out: { call: BNode; path: BNode[] }[] = [];
  const notUse = new Set<BNode>();
  const whole = walkWithPath(roots, (n, path) => {
    if (NOT_VALUES.has(n.type)) return 'skip';
    if (n.type === 'Identifier') return n.name === name && !notUse.has(n) ? 'stop' : 'skip';
    if (isCall(n) || n.type === 'NewExpression') {
      const callee = unwrap(n.callee!);
      const called = member === undefined ? callee.type === 'Identifier' && callee.name === name
        : isCall(n) && isMember(callee) && !callee.computed && propertyName(callee) === member && unwrap(callee.object!).type === 'Identifier' && unwrap(callee.object!).name === name;
      // A static method called through `this` (in another static method) or `super` is called where no name shows it.
      if (member !== undefined && isMember(callee) && propertyName(callee) === member && ['ThisExpression', 'Super'].includes(unwrap(callee.object!).type)) return 'stop';
      // Its class made (`new Inbox(...)`) is no hand-off of the static method.
      if (member !== undefined && callee.type === 'Identifier' && callee.name === name) notUse.add(callee);
      if (called) {
        notUse.add(member === undefined ? callee : unwrap(callee.object!));
        out.push({ call: n, path: [...path] });
        if (out.length > MAX_CALLS) return 'stop';
      }
    }
    if (isMember(n) && !n.computed && n.property) {
      notUse.add(n.property);
      const obj = unwrap(n.object!);
      if (isClass && obj.type === 'Identifier' && obj.name === name && !HANDS_ON.has(propertyName(n) ?? '')) notUse.add(obj);
    }
    if ((n.type === 'ObjectProperty' || n.type === 'ObjectMethod' || n.type === 'ClassMethod' || n.type === 'ClassProperty' || n.type === 'TSPropertySignature') && !n.computed && n.key) {
      // `{ name }` written short uses the value; its key does not.
      if (!(n.type === 'ObjectProperty' && n.shorthand)) notUse.add(n.key);
      else if (n.value !== n.key) notUse.add(n.key);
    }
    if (n.type === 'VariableDeclarator' && n.id) notUse.add(n.id);
    if ((n.type === 'FunctionDeclaration' || n.type === 'ClassDeclaration' || n.type === 'FunctionExpression') && n.id) notUse.add(n.id);
    if (n.type === 'ExportNamedDeclaration' && !n.declaration) return 'skip';
    // `const { name } = require('./m')`: an import.
    if (n.type === 'VariableDeclarator' && n.init && requiredModule(n.init) !== undefined) return 'skip';
    return undefined;
  });
  return whole ? out : undefined;
}

/** What the index knows of the workspace: each file's text when read and the names it imports; the files by name imported. */
interface ImportIndex {
  /** Each file's text as a fingerprint (its texts are not kept), and the names it imports. */
  byFile: Map<string, { print: string; names: Set<string> }>;
  byName: Map<string, Set<string>>;
  /** The listing being checked again, where the check is, and when the last full pass ended. */
  files: readonly string[];
  cursor: number;
  at: number;
}

/** The workspace's index of the names each file imports, per WorkspaceModules. */
const indexes = new WeakMap<WorkspaceModules, ImportIndex>();
/** Files checked again per ask once the index is older than INDEX_TTL_MS, so no one edit pays for the whole workspace. */
const RECHECK_PER_ASK = 250;

/**
 * The workspace's files whose imports name `name` (`import { name } from ...`, `const { name } = require(...)`).
 * The first ask reads every listed file (up to MAX_INDEXED_FILES); later asks, once the index is older than
 * INDEX_TTL_MS, check RECHECK_PER_ASK files each, in turn, reading again only a file whose text changed.
 */
export function filesImporting(modules: WorkspaceModules, name: string): string[] {
  let index = indexes.get(modules);
  if (!index) {
    index = { byFile: new Map(), byName: new Map(), files: (modules.files?.() ?? []).slice(0, MAX_INDEXED_FILES), cursor: 0, at: Date.now() };
    for (const f of index.files) recheck(modules, index, f);
    indexes.set(modules, index);
  } else if (Date.now() - index.at > INDEX_TTL_MS) {
    if (index.cursor === 0) index.files = (modules.files?.() ?? []).slice(0, MAX_INDEXED_FILES);
    const end = Math.min(index.files.length, index.cursor + RECHECK_PER_ASK);
    for (let i = index.cursor; i < end; i++) recheck(modules, index, index.files[i]!);
    index.cursor = end;
    if (end >= index.files.length) {
      index.cursor = 0;
      index.at = Date.now();
    }
  }
  return [...(index.byName.get(name) ?? [])];
}

/**
 * A file of the workspace was saved, created or deleted: its imports are read into the index at once (a
 * new file joins it), so the calls it makes count without waiting for the index's next pass.
 */
export function workspaceFileChanged(modules: WorkspaceModules, file: string): void {
  const index = indexes.get(modules);
  if (!index) return;
  if (!index.byFile.has(file) && index.files.length < MAX_INDEXED_FILES && !index.files.includes(file)) index.files = [...index.files, file];
  recheck(modules, index, file);
}

/** Reads a file's imports into the index again when its text is not the one read last. */
function recheck(modules: WorkspaceModules, index: ImportIndex, file: string): void {
  const text = modules.read(file);
  const print = text === undefined ? '' : fingerprint(text);
  const known = index.byFile.get(file);
  if (known && known.print === print) return;
  for (const n of known?.names ?? []) index.byName.get(n)?.delete(file);
  const names = text !== undefined && text.length <= 2_000_000 ? importedNames(text) : new Set<string>();
  if (text !== undefined && text.length <= 2_000_000) for (const n of [...namespaceCalledNames(text), ...declaredGlobals(text)]) names.add(n);
  index.byFile.set(file, { print, names });
  for (const n of names) {
    const set = index.byName.get(n);
    if (set) set.add(file);
    else index.byName.set(n, new Set([file]));
  }
}

/** `import * as name from '...'`: a namespace import. */
const NAMESPACE_IMPORT = /\bimport\s+\*\s+as\s+[\w$]+\s+from\s*['"]/;
/** `.name(`, `.name<T>(`: a name called as a member. */
const MEMBER_CALL = /\.\s*([A-Za-z_$][\w$]*)\s*[(<]/g;

/**
 * In a file that imports a namespace, the names it calls as members, each as `.name` (`lib.locks.Lock(`
 * gives `.Lock`): the files that may call a function or class through a namespace, for importersOf.
 */
function namespaceCalledNames(text: string): Set<string> {
  const out = new Set<string>();
  if (!NAMESPACE_IMPORT.test(text)) return out;
  MEMBER_CALL.lastIndex = 0;
  for (let m = MEMBER_CALL.exec(text); m; m = MEMBER_CALL.exec(text)) out.add(`.${m[1]!}`);
  return out;
}

/** `declare global { ... }`: a module that declares globals. */
const DECLARE_GLOBAL = /\bdeclare\s+global\s*\{/;
/** `var App: AppGlobal`: a variable declared with its type (in a `declare global` block, the parse says). */
const TYPED_VAR = /\b(?:var|let|const)\s+([A-Za-z_$][\w$]*)\s*:/g;

/**
 * In a file that writes `declare global`, the variables it may declare there, each as `global name`:
 * the files that may declare a global's type, for filesDeclaringGlobal.
 */
function declaredGlobals(text: string): Set<string> {
  const out = new Set<string>();
  if (!DECLARE_GLOBAL.test(text)) return out;
  TYPED_VAR.lastIndex = 0;
  for (let m = TYPED_VAR.exec(text); m; m = TYPED_VAR.exec(text)) out.add(`global ${m[1]!}`);
  return out;
}

/**
 * The workspace's files that may declare the global `name` with its type (`declare global { var App:
 * AppGlobal }`), from the same index as filesImporting; the caller reads each file's syntax to be sure.
 */
export function filesDeclaringGlobal(modules: WorkspaceModules, name: string): string[] {
  return filesImporting(modules, `global ${name}`);
}

/** A text's length and a 32-bit FNV-1a hash of it. */
function fingerprint(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return `${text.length}:${h >>> 0}`;
}

const IMPORT_CLAUSE = /\bimport\s+(?:type\s+)?([\w$\s{},*]+?)\s+from\s*['"]([^'"\n]*)/g;
const REQUIRE_CLAUSE = /\b(?:const|let|var)\s+(\{[^}]*\}|[\w$]+)\s*=\s*(?:await\s+)?require\s*\(\s*(?:['"`]([^'"`\n]*))?/g;

/**
 * The names a file's import statements and `require` declarations take (both sides of an `as`), and each
 * module it imports as `from <name>` (importedModuleKey), for a default export imported under another name.
 */
export function importedNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const re of [IMPORT_CLAUSE, REQUIRE_CLAUSE]) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      for (const w of m[1]!.match(/[\w$]+/g) ?? []) if (w !== 'as' && w !== 'type') out.add(w);
      const from = m[2]?.split('/').pop()?.replace(/\.[cm]?[jt]sx?$/, '');
      if (from && from !== '.' && from !== '..') out.add(`from ${from}`);
    }
  }
  return out;
}

/** The key importedNames gives an import of `file`'s module: its name, or its folder's for an index file. */
function importedModuleKey(file: string): string {
  const parts = file.split(/[\\/]/);
  const base = (parts.pop() ?? '').replace(/\.[cm]?[jt]sx?$/, '');
  return `from ${base === 'index' ? parts.pop() ?? base : base}`;
}
