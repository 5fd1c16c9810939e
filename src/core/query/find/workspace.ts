// The workspace's other modules as the finder follows an import into them: `import { getCollection }
// from '../util/mongo'` is read in mongo.ts, where `getCollection(name)` returns
// `db.collection(name)`; `import type { PostgresDB } from './pg'` is the alias pg.ts declares. A module is
// parsed once per text (kept while its text is the same), its top-level names are declared as a file's
// are (scope.ts), and its nodes sit at offsets from FOREIGN_BASE on, so a range read in it is never taken
// for one of the file being read: a reader that finds one puts the call site's range in its place.
//
// Nothing is read from disk here: the host (language server, CLI, bench) gives `WorkspaceModules`, and
// resolveSpecifier below gives it the resolution rules, written over a file-exists test.

import { parse as babelParse, type ParserPlugin } from '@babel/parser';
import { collectMutations, declareStatements, ModuleScope } from './scope';
import { isCall, isMember, propertyName, unwrap, type BNode } from './syntax';
import type { ScriptDialect, WorkspaceModules } from './types';

/** As scriptIndex.ts parses a file of each dialect. */
const PLUGINS: Record<ScriptDialect, ParserPlugin[]> = { ts: ['typescript', 'decorators-legacy'], tsx: ['typescript', 'jsx', 'decorators-legacy'], js: ['jsx', 'decorators-legacy'] };

/** Offsets of nodes read in another module start here: no file the finder reads is this long. */
export const FOREIGN_BASE = 2 ** 30;

/** How many imports deep the finder follows a value (a re-export counts as one). */
export const MAX_IMPORT_DEPTH = 4;

/** A module of the workspace, parsed, with its top-level names. */
export interface ForeignModule {
  file: string;
  text: string;
  program: BNode;
  scope: ModuleScope;
  /** Exported name to what it is: a local name, or a name of another module (`export { x } from './y'`). */
  exports: Map<string, { local: string } | { from: string; name: string }>;
  /** `export * from './y'`. */
  star: string[];
}

/** True for a range read in another module. */
export function isForeign(start: number): boolean {
  return start >= FOREIGN_BASE;
}

const cache = new WeakMap<WorkspaceModules, Map<string, ForeignModule | null>>();
/** Files parsed per WorkspaceModules at most: a workspace's helpers, not all of it. */
const MAX_MODULES = 400;

/** The module a file holds, parsed (undefined when it cannot be read or is not a script). */
export function foreignModule(modules: WorkspaceModules, file: string): ForeignModule | undefined {
  let byFile = cache.get(modules);
  if (!byFile) cache.set(modules, (byFile = new Map()));
  const text = modules.read(file);
  const known = byFile.get(file);
  if (known !== undefined && (known === null || known.text === text)) return known ?? undefined;
  if (text === undefined || !/\.(c|m)?(j|t)sx?$/i.test(file) || text.length > 2_000_000) {
    byFile.set(file, null);
    return undefined;
  }
  if (byFile.size >= MAX_MODULES) byFile.clear();
  const m = parseModule(file, text);
  byFile.set(file, m ?? null);
  return m;
}

function dialectOf(file: string): ScriptDialect {
  const lower = file.toLowerCase();
  if (lower.endsWith('.tsx')) return 'tsx';
  if (/\.(c|m)?ts$/.test(lower)) return 'ts';
  return 'js';
}

function parseModule(file: string, text: string): ForeignModule | undefined {
  let program: BNode;
  try {
    program = (babelParse(text, {
      sourceType: 'unambiguous', startIndex: FOREIGN_BASE, errorRecovery: true, attachComment: false, allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true, allowImportExportEverywhere: true, allowUndeclaredExports: true, allowSuperOutsideMethod: true,
      plugins: PLUGINS[dialectOf(file)],
    }) as unknown as { program: BNode }).program;
  } catch {
    return undefined;
  }
  const body = (program.body as BNode[] | undefined) ?? [];
  const scope = new ModuleScope();
  scope.statements = () => body;
  declareStatements(body, scope.names);
  const fields: [string, BNode][] = [];
  collectMutations(program, scope.mutated, fields);
  for (const [k, v] of fields) {
    const list = scope.fields.get(k) ?? [];
    list.push({ node: v, flush: () => undefined });
    scope.fields.set(k, list);
  }
  const exports = new Map<string, { local: string } | { from: string; name: string }>();
  const star: string[] = [];
  for (const s of body) {
    const decl = (s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration') ? s.declaration : undefined;
    if (decl?.type === 'ClassDeclaration' && decl.id?.name) scope.classes.set(decl.id.name, { node: decl, flush: () => undefined });
    if (s.type === 'ClassDeclaration' && s.id?.name) scope.classes.set(s.id.name, { node: s, flush: () => undefined });
    const source = (s as unknown as { source?: { value?: string } }).source?.value;
    if (s.type === 'ExportAllDeclaration' && source !== undefined) {
      star.push(source);
    } else if (s.type === 'ExportNamedDeclaration') {
      if (decl) for (const name of declaredNames(decl)) exports.set(name, { local: name });
      for (const sp of (s as unknown as { specifiers?: { type?: string; local?: BNode; exported?: BNode }[] }).specifiers ?? []) {
        // `export * as orders from './orders'`, `export * as driver from 'mongodb'`: the other module's namespace,
        // a workspace module's (namespaceModule) or a library's, whose types are read through it.
        const local = sp.type === 'ExportNamespaceSpecifier' ? '*' : sp.local?.name ?? (sp.local?.value as string | undefined);
        const exported = sp.exported?.name ?? (sp.exported?.value as string | undefined);
        if (local === undefined || exported === undefined) continue;
        exports.set(exported, source !== undefined ? { from: source, name: local } : { local });
      }
    } else if (s.type === 'ExportDefaultDeclaration' && s.declaration) {
      const d = unwrap(s.declaration);
      if (d.type === 'Identifier') exports.set('default', { local: d.name! });
      else if ((d.type === 'FunctionDeclaration' || d.type === 'ClassDeclaration') && d.id?.name) exports.set('default', { local: d.id.name });
      else {
        scope.names.set('default', { init: d });
        exports.set('default', { local: 'default' });
      }
    } else if (s.type === 'TSExportAssignment') {
      const e = unwrap((s as unknown as { expression: BNode }).expression);
      if (e.type === 'Identifier') exports.set('default', { local: e.name! });
    } else if (s.type === 'ExpressionStatement') {
      commonJsExport(unwrap(s.expression!), scope, exports);
    }
  }
  return { file, text, program, scope, exports, star };
}

/** `module.exports = x`, `module.exports = { a, b: c }`, `exports.a = x`, `module.exports.a = x`. */
function commonJsExport(e: BNode, scope: ModuleScope, exports: ForeignModule['exports']): void {
  if (e.type !== 'AssignmentExpression' || e.operator !== '=') return;
  const left = unwrap(e.left!);
  const right = unwrap(e.right!);
  if (!isMember(left)) return;
  const obj = unwrap(left.object!);
  const prop = propertyName(left);
  if (obj.type === 'Identifier' && obj.name === 'module' && prop === 'exports') {
    if (right.type === 'Identifier') exports.set('default', { local: right.name! });
    else {
      scope.names.set('default', { init: right });
      exports.set('default', { local: 'default' });
    }
    if (right.type === 'ObjectExpression') {
      for (const p of right.properties ?? []) {
        if (p.type !== 'ObjectProperty' || p.computed || !p.key) continue;
        const key = p.key.name ?? (p.key.value as string | undefined);
        const v = unwrap(p.value as BNode);
        if (key === undefined) continue;
        if (v.type === 'Identifier') exports.set(key, { local: v.name! });
        else {
          scope.names.set(`exports.${key}`, { init: v });
          exports.set(key, { local: `exports.${key}` });
        }
      }
    }
    return;
  }
  const isExports = (obj.type === 'Identifier' && obj.name === 'exports') || (isMember(obj) && unwrap(obj.object!).type === 'Identifier' && unwrap(obj.object!).name === 'module' && propertyName(obj) === 'exports');
  if (isExports && prop !== undefined) {
    if (right.type === 'Identifier') exports.set(prop, { local: right.name! });
    else {
      scope.names.set(`exports.${prop}`, { init: right });
      exports.set(prop, { local: `exports.${prop}` });
    }
  }
}

function declaredNames(decl: BNode): string[] {
  const names = new Map<string, unknown>();
  if (decl.type === 'VariableDeclaration' || decl.type === 'FunctionDeclaration' || decl.type === 'ClassDeclaration') {
    declareStatements([decl], names as never);
    return [...names.keys()];
  }
  const id = decl.id;
  return id?.name ? [id.name] : [];
}

export type Exported = { module: ForeignModule; local: string } | { library: string; name: string };

/**
 * What a module exports under a name: the module that declares it and the local name there, or a
 * library's export it passes on (`export type { Knex } from 'knex'`).
 */
export function exportedBinding(modules: WorkspaceModules, file: string, name: string, depth = 0): Exported | undefined {
  if (depth > MAX_IMPORT_DEPTH) return undefined;
  const m = foreignModule(modules, file);
  if (!m) return undefined;
  const e = m.exports.get(name);
  if (e && 'local' in e) {
    // `import { x } from './y'; export { x }`: declared by another module.
    const b = m.scope.names.get(e.local);
    if (b && 'from' in b && b.from !== undefined) {
      const target = modules.resolve(file, b.from);
      const imported = importedName(m.program, e.local);
      if (!target && imported !== undefined) return { library: b.from, name: imported };
      if (target && imported !== undefined) return exportedBinding(modules, target, imported, depth + 1) ?? { module: m, local: e.local };
    }
    return { module: m, local: e.local };
  }
  if (e && 'from' in e) {
    const target = modules.resolve(file, e.from);
    return target ? exportedBinding(modules, target, e.name, depth + 1) : { library: e.from, name: e.name };
  }
  for (const s of m.star) {
    const target = modules.resolve(file, s);
    const found = target ? exportedBinding(modules, target, name, depth + 1) : undefined;
    if (found) return found;
  }
  return undefined;
}

/**
 * The module a name `file` exports is the namespace of (`export * as orders from './orders'`, or `import *
 * as orders` exported again), followed through re-exports; undefined for anything else.
 */
export function namespaceModule(modules: WorkspaceModules, file: string, name: string, depth = 0): string | undefined {
  const m = depth > MAX_IMPORT_DEPTH ? undefined : foreignModule(modules, file);
  const e = m?.exports.get(name);
  if (!m) return undefined;
  if (!e) {
    for (const star of m.star) {
      const target = modules.resolve(file, star);
      const found = target ? namespaceModule(modules, target, name, depth + 1) : undefined;
      if (found) return found;
    }
    return undefined;
  }
  if ('from' in e) {
    const target = modules.resolve(file, e.from);
    return target && e.name === '*' ? target : target ? namespaceModule(modules, target, e.name, depth + 1) : undefined;
  }
  const b = m.scope.names.get(e.local);
  if (!b || !('from' in b) || b.from === undefined) return undefined;
  const imported = importedName(m.program, e.local);
  const target = modules.resolve(file, b.from);
  return target && imported === '*' ? target : target && imported !== undefined ? namespaceModule(modules, target, imported, depth + 1) : undefined;
}

/** The name an import declaration takes from its module for a local name: `import { a as b }` gives "a" for b, a default import "default". */
export function importedName(program: BNode, local: string): string | undefined {
  for (const s of (program.body as BNode[] | undefined) ?? []) {
    if (s.type === 'ImportDeclaration') {
      for (const sp of (s as unknown as { specifiers?: { type: string; local?: BNode; imported?: BNode }[] }).specifiers ?? []) {
        if (sp.local?.name !== local) continue;
        if (sp.type === 'ImportDefaultSpecifier') return 'default';
        if (sp.type === 'ImportNamespaceSpecifier') return '*';
        return sp.imported?.name ?? (sp.imported?.value as string | undefined);
      }
    } else if (s.type === 'VariableDeclaration') {
      // const { a: b } = require('./m'); const b = require('./m')
      for (const d of s.declarations ?? []) {
        if (!d.init) continue;
        const init = unwrap(d.init);
        const isRequire = isCall(init) && unwrap(init.callee!).type === 'Identifier' && unwrap(init.callee!).name === 'require';
        if (!isRequire) continue;
        if (d.id?.type === 'Identifier' && d.id.name === local) return 'default';
        for (const p of d.id?.properties ?? []) {
          const v = p.value ? unwrap(p.value as BNode) : undefined;
          if (v?.type === 'Identifier' && v.name === local) return p.key?.name ?? (p.key?.value as string | undefined);
        }
      }
    }
  }
  return undefined;
}

/** An import's, a re-export's, a `require`'s or a dynamic import's specifier, read from the text (no parse: this runs on every save). */
const SPECIFIER = /\b(?:from|import|require)\s*\(?\s*(['"])([^'"\n]+)\1/g;

/** The specifiers a module's text imports, re-exports from or requires. */
function moduleSpecifiers(text: string): string[] {
  const out: string[] = [];
  SPECIFIER.lastIndex = 0;
  for (let m = SPECIFIER.exec(text); m; m = SPECIFIER.exec(text)) out.push(m[2]!);
  return out;
}

/** Files one import closure visits at most. */
const MAX_CLOSURE_FILES = 200;

/**
 * The workspace files `file` imports, directly or through others up to `depth` imports deep (bounded);
 * `direct` keeps each file's own imports, read once however many closures pass through it.
 */
function importClosure(modules: WorkspaceModules, file: string, depth: number, direct: Map<string, string[]>): Set<string> {
  const importsOf = (f: string): string[] => {
    let known = direct.get(f);
    if (!known) {
      const text = modules.read(f);
      const specs = text !== undefined && text.length <= 2_000_000 ? moduleSpecifiers(text) : [];
      direct.set(f, (known = specs.map((spec) => modules.resolve(f, spec)).filter((t): t is string => t !== undefined)));
    }
    return known;
  };
  const seen = new Set<string>();
  let level = [file];
  for (let d = 0; d < depth && level.length > 0 && seen.size < MAX_CLOSURE_FILES; d++) {
    const next: string[] = [];
    for (const f of level) {
      for (const target of importsOf(f)) {
        if (target === file || seen.has(target) || seen.size >= MAX_CLOSURE_FILES) continue;
        seen.add(target);
        next.push(target);
      }
    }
    level = next;
  }
  return seen;
}

/** Saved files at most whose imports are followed; past it every open file is taken to depend on them (a branch switched). */
const MAX_CHANGED_FOLLOWED = 100;

/**
 * Whether what the finder reads in a file may depend on one of `changed`, files of the workspace just saved:
 * the file imports one (a helper, a client, a collection, a base class followed into it, also through the
 * modules in between), or one imports the file, directly or through a module that passes it on (the calls
 * of a function or class there may name its collection). Each import closure is walked once however many
 * files are asked about. The editor reads an open file again when the answer is yes.
 */
export function savedFilesReach(modules: WorkspaceModules, changed: readonly string[]): (file: string) => boolean {
  const importers = new Map<string, Set<string>>();
  const direct = new Map<string, string[]>();
  return (file) => {
    if (changed.length > MAX_CHANGED_FOLLOWED) return true;
    const imports = importClosure(modules, file, MAX_IMPORT_DEPTH, direct);
    if (changed.some((c) => c !== file && imports.has(c))) return true;
    return changed.some((c) => {
      if (c === file) return false;
      let reach = importers.get(c);
      if (!reach) importers.set(c, (reach = importClosure(modules, c, 2, direct)));
      return reach.has(file);
    });
  };
}

/** Extensions tried for an import without one, in TypeScript's order. */
const EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts'];

/** What the resolution needs to know of the workspace. */
export interface SpecifierRules {
  exists(file: string): boolean;
  /** tsconfig `paths` with their base folder: pattern ("@/*") to targets ("src/*"), absolute. */
  paths?: { pattern: string; targets: string[] }[];
  /** Workspace packages by name, to their source folder and entry file (absolute). */
  packages?: Map<string, { dir: string; entry?: string }>;
}

/**
 * The file an import names, or undefined for a library or a file not found: a relative path (with
 * TypeScript's extensions, `.js` written for a `.ts` file, a folder's index), a tsconfig path, a
 * workspace package (its entry, or a path inside it). Paths are POSIX-style.
 */
export function resolveSpecifier(rules: SpecifierRules, fromFile: string, specifier: string): string | undefined {
  if (specifier.startsWith('.')) return withExtensions(rules, joinPath(dirOf(fromFile), specifier));
  if (specifier.startsWith('/')) return withExtensions(rules, normalise(specifier));
  for (const { pattern, targets } of rules.paths ?? []) {
    const star = pattern.indexOf('*');
    const matched = star < 0 ? (specifier === pattern ? '' : undefined)
      : specifier.startsWith(pattern.slice(0, star)) && specifier.endsWith(pattern.slice(star + 1)) ? specifier.slice(star, specifier.length - (pattern.length - star - 1)) : undefined;
    if (matched === undefined) continue;
    for (const t of targets) {
      const found = withExtensions(rules, t.replace('*', matched));
      if (found) return found;
    }
  }
  if (rules.packages) {
    const parts = specifier.split('/');
    const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
    const pkg = rules.packages.get(name);
    if (pkg) {
      const rest = specifier.slice(name.length + 1);
      if (!rest) return pkg.entry ? withExtensions(rules, pkg.entry) : withExtensions(rules, joinPath(pkg.dir, 'index'));
      return withExtensions(rules, joinPath(pkg.dir, rest)) ?? withExtensions(rules, joinPath(pkg.dir, `src/${rest}`)) ?? withExtensions(rules, joinPath(pkg.dir, `lib/${rest}`));
    }
  }
  return undefined;
}

function withExtensions(rules: SpecifierRules, base: string): string | undefined {
  if (/\.(c|m)?(j|t)sx?$/.test(base) && rules.exists(base)) return base;
  // `./x.js` written for x.ts (TypeScript's ESM style).
  const bare = base.replace(/\.(c|m)?js$/, '');
  for (const ext of EXTENSIONS) if (rules.exists(bare + ext)) return bare + ext;
  for (const ext of EXTENSIONS) if (rules.exists(`${base}/index${ext}`)) return `${base}/index${ext}`;
  return undefined;
}

export function dirOf(file: string): string {
  const i = file.lastIndexOf('/');
  return i <= 0 ? (i === 0 ? '/' : '.') : file.slice(0, i);
}

export function joinPath(dir: string, rel: string): string {
  return normalise(`${dir}/${rel}`);
}

function normalise(path: string): string {
  const abs = path.startsWith('/');
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!abs) out.push('..');
    } else out.push(part);
  }
  return (abs ? '/' : '') + out.join('/');
}
