// SQL a script reads from a `.sql` file of the workspace and hands to a query: `readFileSync(join(__dirname,
// 'sql', 'orders-by-customer.sql'), 'utf8')` in place, held by a constant or an object's property, or
// returned by a loader called with the file's name (`sql('orders-by-customer')` where the loader joins
// `${name}.sql` to a folder), or given for a key by a module's registry of files (`queries.get('orders_latest')`
// where that module maps `orders_latest` to `'orders/latest.sql'` in a constant object and reads
// `join(__dirname, FILES[key])`). The path is read only when the code shows all of it: anchored at the module's
// own folder (`__dirname`, `import.meta.dirname`, `dirname(fileURLToPath(import.meta.url))`, `new URL(...,
// import.meta.url)`), and its other parts literals or constants. A path relative to the process's working
// folder, or one with a part chosen at run time, is not read: which file it names is not in the code.
// The file is read through the host (WorkspaceModules.read); the query maps to the call that loads it and
// is never written back.

import { forEachNode } from '../../sql/tree';
import type { Extractor } from './extractor';
import { runsElsewhere } from './ranges';
import { onlyStatementQuery } from './sqlFiles';
import { isCall, isMember, propertyName, range, unwrap, type BNode } from './syntax';
import type { FoundSqlQuery, SourceRange } from './types';
import { dirOf, joinPath } from './workspace';

const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises', 'fs-extra']);
const PATH_MODULES = new Set(['path', 'node:path', 'path/posix', 'node:path/posix']);
const URL_MODULES = new Set(['url', 'node:url']);
const READERS = new Set(['readFileSync', 'readFile']);
/** The longest `.sql` file read for its one statement, in characters. */
export const MAX_STATEMENT_FILE = 100_000;

/** A path as far as the code shows it: `anchored` when it starts at the module's own folder. */
interface PathRead {
  path: string;
  anchored: boolean;
}

/** The module a name (or the root of `fs.promises`) is imported from. */
function rootSource(ex: Extractor, e: BNode): string | undefined {
  let cur = unwrap(e);
  while (isMember(cur)) cur = unwrap(cur.object!);
  return cur.type === 'Identifier' ? ex.importSource(cur.name!) : undefined;
}

/** The `readFileSync(path)` / `await readFile(path)` a value is, also with `.toString()` after it. */
function fileRead(ex: Extractor, e: BNode): BNode | undefined {
  let n = unwrap(e);
  if (n.type === 'AwaitExpression' && n.argument) n = unwrap(n.argument);
  if (isCall(n) && isMember(unwrap(n.callee!)) && propertyName(unwrap(n.callee!)) === 'toString') {
    const inner = unwrap(unwrap(n.callee!).object!);
    n = inner.type === 'AwaitExpression' && inner.argument ? unwrap(inner.argument) : inner;
  }
  if (!isCall(n) || !n.arguments?.[0]) return undefined;
  const callee = unwrap(n.callee!);
  const name = callee.type === 'Identifier' ? callee.name : isMember(callee) ? propertyName(callee) : undefined;
  if (!name || !READERS.has(name)) return undefined;
  const from = rootSource(ex, callee);
  return from && FS_MODULES.has(from) ? n : undefined;
}

/** Whether a node is the module's own folder: `__dirname`, `import.meta.dirname`, `dirname(fileURLToPath(import.meta.url))`. */
function ownFolder(ex: Extractor, e: BNode, depth: number): boolean {
  const n = unwrap(e);
  if (n.type === 'Identifier' && n.name === '__dirname' && !ex.isIdentifierKnown('__dirname')) return true;
  if (isMember(n) && propertyName(n) === 'dirname' && unwrap(n.object!).type === 'MetaProperty') return true;
  if (isCall(n) && n.arguments?.length === 1 && pathFunction(ex, n.callee!) === 'dirname') return ownFile(ex, n.arguments[0]!, depth + 1);
  if (n.type === 'Identifier' && depth < 4) {
    const init = ex.constInit(n.name!);
    return init !== undefined && ownFolder(ex, init, depth + 1);
  }
  return false;
}

/** Whether a node is the module's own file path: `__filename`, `fileURLToPath(import.meta.url)`. */
function ownFile(ex: Extractor, e: BNode, depth: number): boolean {
  const n = unwrap(e);
  if (n.type === 'Identifier' && n.name === '__filename' && !ex.isIdentifierKnown('__filename')) return true;
  if (isCall(n) && n.arguments?.length === 1) {
    const callee = unwrap(n.callee!);
    const name = callee.type === 'Identifier' ? callee.name : isMember(callee) ? propertyName(callee) : undefined;
    const from = rootSource(ex, callee);
    return name === 'fileURLToPath' && from !== undefined && URL_MODULES.has(from) && metaUrl(n.arguments[0]!);
  }
  if (n.type === 'Identifier' && depth < 4) {
    const init = ex.constInit(n.name!);
    return init !== undefined && ownFile(ex, init, depth + 1);
  }
  return false;
}

const metaUrl = (e: BNode) => {
  const n = unwrap(e);
  return isMember(n) && propertyName(n) === 'url' && unwrap(n.object!).type === 'MetaProperty';
};

/** `join`, `resolve` or `dirname` of the path module (imported whole or by name). */
function pathFunction(ex: Extractor, callee: BNode): string | undefined {
  const c = unwrap(callee);
  const name = c.type === 'Identifier' ? c.name : isMember(c) ? propertyName(c) : undefined;
  const from = rootSource(ex, c);
  return name && from && PATH_MODULES.has(from) && ['join', 'resolve', 'dirname'].includes(name) ? name : undefined;
}

/** A part of a path whose text is given from outside (a registry's entry for one key), not read from the code. */
interface Given {
  node: BNode;
  path: string;
}

/** The path a node writes, when every part of it is shown (or `given`); undefined otherwise. */
function pathOf(ex: Extractor, e: BNode, depth = 0, given?: Given): PathRead | undefined {
  if (depth > 8) return undefined;
  const n = unwrap(e);
  if (given && n === given.node) return { path: given.path, anchored: false };
  if (ownFolder(ex, n, depth)) return { path: dirOf(ex.context.file ?? ''), anchored: ex.context.file !== undefined };
  const s = ex.stringOf(n, 0);
  if (s !== undefined) return { path: s, anchored: false };
  if (n.type === 'TemplateLiteral') {
    let out = '';
    let anchored = false;
    for (let i = 0; i < (n.quasis ?? []).length; i++) {
      out += (n.quasis![i]!.value as { cooked?: string } | undefined)?.cooked ?? '';
      const x = n.expressions?.[i];
      if (!x) continue;
      const part = pathOf(ex, x, depth + 1, given);
      if (!part) return undefined;
      if (part.anchored && i === 0 && out === '') anchored = true;
      out += part.path;
    }
    return { path: out, anchored };
  }
  if (n.type === 'BinaryExpression' && n.operator === '+') {
    const [a, b] = [pathOf(ex, n.left!, depth + 1, given), pathOf(ex, n.right!, depth + 1, given)];
    return a && b ? { path: a.path + b.path, anchored: a.anchored } : undefined;
  }
  if (n.type === 'NewExpression' && unwrap(n.callee!).type === 'Identifier' && unwrap(n.callee!).name === 'URL' && n.arguments?.length === 2 && metaUrl(n.arguments[1]!)) {
    const rel = ex.stringOf(n.arguments[0]!, 0);
    return rel !== undefined && ex.context.file !== undefined ? { path: joinPath(dirOf(ex.context.file), rel), anchored: true } : undefined;
  }
  if (isCall(n)) {
    const fn = pathFunction(ex, n.callee!);
    if (fn === 'join' || fn === 'resolve') {
      let acc: PathRead | undefined;
      for (const a of n.arguments ?? []) {
        const part = a.type === 'SpreadElement' ? undefined : pathOf(ex, a, depth + 1, given);
        if (!part) return undefined;
        if (!acc || (fn === 'resolve' && part.path.startsWith('/'))) acc = { ...part };
        else acc = { path: `${acc.path}/${part.path}`, anchored: acc.anchored };
      }
      return acc ? { path: acc.anchored ? joinPath(acc.path, '.') : acc.path, anchored: acc.anchored } : undefined;
    }
  }
  if (n.type === 'Identifier') {
    const init = ex.constInit(n.name!);
    return init ? pathOf(ex, init, depth + 1, given) : undefined;
  }
  return undefined;
}

/**
 * The query a `.sql` file holds when it is the file's one statement; undefined for a file of several (a
 * schema or a migration run whole: its one UPDATE among the DDL is not what the call sends) or none.
 */
function fileQuery(ex: Extractor, file: string): string | undefined {
  const text = ex.context.modules?.read(file);
  // One statement is never this long: a longer file (a dump, a schema) is not parsed for one.
  const query = text === undefined || text.length > MAX_STATEMENT_FILE ? undefined : onlyStatementQuery(text);
  return query?.engine === 'postgres' ? query.sql : undefined;
}

/**
 * The query a value that reads a `.sql` file holds (see the file's header), mapped to `at` (the loader's call
 * or the read); `via` names the loader for the hover. Undefined when the path is not all shown or the file
 * holds no single query.
 */
export function loadedSql(ex: Extractor, e: BNode, callRange: SourceRange, at: BNode = e, via?: string): FoundSqlQuery | undefined {
  const read = fileRead(ex, e);
  if (!read || !ex.context.modules) return undefined;
  const p = pathOf(ex, read.arguments![0]!);
  if (!p?.anchored || !p.path.toLowerCase().endsWith('.sql')) return undefined;
  const sql = fileQuery(ex, p.path);
  if (sql === undefined) return undefined;
  const r = range(at);
  const shown = relativeTo(ex.context.file ?? '', p.path);
  return {
    engine: 'postgres', origin: 'string', range: callRange, sql,
    // Every character maps to the call that loads the file: the text is the file's, never written back here.
    runs: runsElsewhere(sql.length, r),
    textRange: { start: r.start, end: r.end }, params: [], readFrom: p.path,
    warnings: [`The SQL is read from ${shown}${via ? `, which ${via}() loads` : ''}; edit it there.`],
  };
}

/** A path as the hover shows it: relative to the module's folder (`./sql/x.sql`, `../../sql/x.sql`). */
export function relativeTo(file: string, path: string): string {
  const from = dirOf(file).split('/').filter(Boolean);
  const to = path.split('/').filter(Boolean);
  if (!file.startsWith('/') || !path.startsWith('/')) return path;
  let common = 0;
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++;
  const up = from.length - common;
  return `${up === 0 ? './' : '../'.repeat(up)}${to.slice(common).join('/')}`;
}

/**
 * `sql('orders-by-customer')` where `sql` (of this module or imported) returns what it reads from a `.sql`
 * file: the query that file holds, read with the call's arguments.
 */
export function loaderSql(ex: Extractor, call: BNode, callRange: SourceRange): FoundSqlQuery | undefined {
  const callee = unwrap(call.callee!);
  if (callee.type !== 'Identifier') return undefined;
  return ex.throughCall(call, (ret, inModule) => loadedSql(inModule, inModule.resolve(ret), callRange, call, callee.name));
}

/**
 * A module's registry of `.sql` files: a constant object of keys to paths (`const FILES = { orders_latest:
 * 'orders/latest.sql' }`) and the one read of a file through it, anchored at the module's folder
 * (`readFileSync(join(__dirname, FILES[key]))`), wherever in the module that read is written.
 */
interface Registry {
  ex: Extractor;
  /** The constant's keys and their paths as written. */
  entries: Map<string, string>;
  /** The read, and the `FILES[key]` in its path. */
  read: BNode;
  hole: BNode;
}

/** The registries of each module, found once per version of its statements (the same statement nodes). */
const registriesOf = new WeakMap<object, { statements: BNode[]; found: Registry[] }>();

function registries(ex: Extractor): Registry[] {
  // A module that names no `.sql` file keeps none; one whose statements the index does not keep is not read.
  if (!ex.module.statements || !ex.source.includes('.sql')) return [];
  const statements = ex.module.statements();
  const known = registriesOf.get(ex.module);
  if (known && known.statements.length === statements.length && known.statements.every((n, i) => n === statements[i])) return known.found;
  const found: Registry[] = [];
  forEachNode(statements, (node) => {
    const read = fileRead(ex, node as unknown as BNode);
    if (!read) return;
    forEachNode(read.arguments![0], (inner) => {
      const m = inner as unknown as BNode;
      if (!isMember(m) || !(m as { computed?: boolean }).computed) return;
      const holder = unwrap(m.object!);
      const init = holder.type === 'Identifier' ? ex.constInit(holder.name!) : undefined;
      const entries = init ? sqlEntries(unwrap(init)) : undefined;
      if (entries) found.push({ ex, entries, read, hole: m });
    });
  });
  registriesOf.set(ex.module, { statements, found });
  return found;
}

/** An object literal's keys whose values are string paths to `.sql` files; undefined when it has none. */
function sqlEntries(obj: BNode): Map<string, string> | undefined {
  if (obj.type !== 'ObjectExpression') return undefined;
  const out = new Map<string, string>();
  for (const p of (obj as { properties?: BNode[] }).properties ?? []) {
    if (p.type !== 'ObjectProperty' || (p as { computed?: boolean }).computed) continue;
    const key = unwrap(p.key!);
    const name = key.type === 'Identifier' ? key.name : key.type === 'StringLiteral' ? (key.value as string) : undefined;
    const value = unwrap((p as { value?: BNode }).value ?? p);
    const path = value.type === 'StringLiteral' ? (value.value as string) : value.type === 'TemplateLiteral' && (value.expressions?.length ?? 0) === 0 ? (value.quasis?.[0]?.value as { cooked?: string } | undefined)?.cooked : undefined;
    if (name !== undefined && path !== undefined && path.toLowerCase().endsWith('.sql')) out.set(name, path);
  }
  return out.size > 0 ? out : undefined;
}

/** The module a call's callee comes from: `q('k')`, `queries.get('k')`, `sql.queries.get('k')`, imported or of this module. */
function calleeModule(ex: Extractor, callee: BNode): Extractor | undefined {
  let root = unwrap(callee);
  let first: string | undefined;
  while (isMember(root)) {
    first = propertyName(root);
    root = unwrap(root.object!);
  }
  if (root.type !== 'Identifier') return undefined;
  if (ex.isNamespaceImport(root.name!)) return first !== undefined ? ex.importedMember(root.name!, first)?.ex : undefined;
  const other = ex.imported(root.name!);
  if (other) return other.ex;
  // Not imported (a library's name is imported too): a name of this module.
  return ex.importSource(root.name!) === undefined ? ex : undefined;
}

/**
 * `queries.get('orders_latest')` where `queries` comes from a module with a registry of `.sql` files (see
 * Registry) that maps the literal key to a file: the query that file holds, mapped to the call. The key
 * must be one of the registry's; a module with two registries that disagree on it gives nothing.
 */
export function keyedSql(ex: Extractor, call: BNode, callRange: SourceRange): FoundSqlQuery | undefined {
  const arg = call.arguments?.[0];
  const key = arg && arg.type !== 'SpreadElement' ? ex.stringOf(arg, 0) : undefined;
  const home = key !== undefined ? calleeModule(ex, call.callee!) : undefined;
  if (key === undefined || !home) return undefined;
  const paths = new Set<string>();
  for (const r of registries(home)) {
    const rel = r.entries.get(key);
    const p = rel === undefined ? undefined : pathOf(r.ex, r.read.arguments![0]!, 0, { node: r.hole, path: rel });
    if (p?.anchored && p.path.toLowerCase().endsWith('.sql')) paths.add(p.path);
  }
  if (paths.size !== 1) return undefined;
  const [path] = [...paths];
  const sql = fileQuery(home, path!);
  if (sql === undefined) return undefined;
  const r = range(call);
  const registry = home === ex ? 'this module' : relativeTo(ex.context.file ?? '', home.context.file ?? '');
  return {
    engine: 'postgres', origin: 'string', range: callRange, sql,
    runs: runsElsewhere(sql.length, r),
    textRange: { start: r.start, end: r.end }, params: [], readFrom: path!,
    warnings: [`The SQL is read from ${relativeTo(ex.context.file ?? '', path!)}, the file ${registry} maps '${key}' to; edit it there.`],
  };
}
