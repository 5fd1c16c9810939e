// The workspace's files as the finder follows imports into them (core/query/find/workspace.ts asks, this
// answers from the file system): a file's text, kept while its modification time is the same, and the
// rules an import is resolved by: the nearest tsconfig.json's (or jsconfig.json's) `paths` and `baseUrl`
// (merged over the files it extends), the nearest package.json's subpath imports (`#db/*`), and the
// workspace's packages by name (a monorepo's `@app/database` is its folder's source, not its build); and
// its script files, listed for the finder's index of what each file imports (a function's callers).

import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { resolveSpecifier, type WorkspaceModules } from '../core/index';

/**
 * The largest file the finder reads when it follows an import or a `.sql` file a script loads: above the
 * 600,000 characters the language server reads of an open document, so the work per file stays bounded.
 */
export const MAX_READ_BYTES = 1_000_000;

/** Folders never searched for packages. */
const SKIP = new Set(['node_modules', '.git', 'dist', 'build', 'out', 'coverage', '.next', 'vendor', '.cache']);

export function nodeWorkspaceModules(root: string): WorkspaceModules {
  const texts = new Map<string, { mtime: number; text: string | undefined }>();
  const statedThisTurn = new Set<string>();
  const resolved = new Map<string, string | undefined>();
  const exists = new Map<string, boolean>();
  const tsconfigs = new Map<string, { pattern: string; targets: string[] }[]>();
  const packageImports = new Map<string, { pattern: string; targets: string[] }[]>();
  let packages: Map<string, { dir: string; entry?: string }> | undefined;

  const isFile = (file: string): boolean => {
    const known = exists.get(file);
    if (known !== undefined) return known;
    let yes = false;
    try {
      yes = statSync(file).isFile();
    } catch {
      yes = false;
    }
    if (exists.size > 50_000) {
      exists.clear();
      resolved.clear();
    }
    exists.set(file, yes);
    return yes;
  };

  const pathsFor = (file: string): { pattern: string; targets: string[] }[] => {
    const dir = dirname(file);
    const known = tsconfigs.get(dir);
    if (known) return known;
    let found: { pattern: string; targets: string[] }[] = [];
    // A JavaScript project writes its paths in jsconfig.json, which the editor reads as it reads tsconfig.json.
    const config = ['tsconfig.json', 'jsconfig.json'].map((name) => join(dir, name)).find(isFile);
    if (config) found = readPaths(config);
    else if (dir !== dirname(dir) && dir.startsWith(root)) found = pathsFor(dir);
    tsconfigs.set(dir, found);
    return found;
  };

  const subpathsFor = (file: string): { pattern: string; targets: string[] }[] => {
    const dir = dirname(file);
    const known = packageImports.get(dir);
    if (known) return known;
    let found: { pattern: string; targets: string[] }[] = [];
    // Node's subpath imports (`import x from '#db/users.js'`): the `imports` of the nearest package.json.
    if (isFile(join(dir, 'package.json'))) found = readSubpathImports(dir);
    else if (dir !== dirname(dir) && dir.startsWith(root)) found = subpathsFor(dir);
    packageImports.set(dir, found);
    return found;
  };

  let listed: { at: number; files: string[] } | undefined;

  return {
    files() {
      // Listed again at most every 30 seconds: the finder's index of imports asks no more often than that.
      if (!listed || Date.now() - listed.at > 30_000) listed = { at: Date.now(), files: listScripts(root) };
      return listed.files;
    },
    resolve(fromFile, specifier) {
      // What a specifier resolves to is made only of what is cached above (files found, tsconfig paths,
      // packages), so it is kept with them: a reading of a file asks the same thousands of times.
      const key = `${fromFile}\u0000${specifier}`;
      if (resolved.has(key)) return resolved.get(key);
      packages ??= findPackages(root);
      const paths = specifier.startsWith('#') ? [...subpathsFor(fromFile), ...pathsFor(fromFile)] : pathsFor(fromFile);
      const target = resolveSpecifier({ exists: isFile, paths, packages }, fromFile, specifier);
      if (resolved.size > 50_000) resolved.clear();
      resolved.set(key, target);
      return target;
    },
    read(file) {
      const known = texts.get(file);
      // Asked again in the same turn of the event loop (one reading of a file asks for the same module many
      // times): the text stat'ed in this turn. A change on disk is seen from the next turn on.
      if (known && statedThisTurn.has(file)) return known.text;
      let mtime = -1;
      try {
        const st = statSync(file);
        // A file far larger than any module or statement (a database dump a seed script loads) is not read.
        if (st.size > MAX_READ_BYTES) return undefined;
        mtime = st.mtimeMs;
      } catch {
        return undefined;
      }
      if (statedThisTurn.size === 0) setImmediate(() => statedThisTurn.clear());
      statedThisTurn.add(file);
      if (known && known.mtime === mtime) return known.text;
      let text: string | undefined;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        text = undefined;
      }
      if (texts.size > 2_000) texts.clear();
      texts.set(file, { mtime, text });
      return text;
    },
  };
}

/** Script files the workspace lists at most. */
const MAX_LISTED = 10_000;

/** The workspace's script files (not declarations), build and dependency folders left out, up to MAX_LISTED. */
function listScripts(root: string): string[] {
  const out: string[] = [];
  const stack = [root];
  while (stack.length > 0 && out.length < MAX_LISTED) {
    const dir = stack.pop()!;
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.name.startsWith('.') || SKIP.has(e.name)) continue;
      if (e.isDirectory()) stack.push(join(dir, e.name));
      else if (e.isFile() && /\.(c|m)?(j|t)sx?$/i.test(e.name) && !/\.d\.(c|m)?ts$/i.test(e.name)) out.push(join(dir, e.name));
    }
  }
  return out;
}

/**
 * A tsconfig's `paths`, made absolute, then its `baseUrl` itself, under which TypeScript looks for a bare
 * name that no path maps (`import getUser from 'src/models/user'` with `"baseUrl": "."`), before it looks
 * in node_modules. The options are merged over what the file extends as TypeScript merges them: each of
 * `baseUrl` and `paths` is taken from the nearest file in the chain that sets it, a `baseUrl` is relative
 * to the file that sets it, and `paths` are relative to the `baseUrl` so found, or, without one, to the
 * file that sets them.
 */
function readPaths(file: string): { pattern: string; targets: string[] }[] {
  const { baseUrl, paths } = mergedOptions(file, 0);
  const underBase = baseUrl !== undefined ? [{ pattern: '*', targets: [join(baseUrl, '*')] }] : [];
  if (!paths) return underBase;
  const base = baseUrl ?? paths.dir;
  // A hand-edited file may hold anything: a pattern whose targets are not a list of strings maps nothing.
  const mapped = Object.entries(paths.map).map(([pattern, targets]) => ({ pattern, targets: (Array.isArray(targets) ? targets : []).filter((t) => typeof t === 'string').map((t) => resolvePath(base, t)) }));
  return [...mapped, ...underBase];
}

/** `baseUrl` (absolute) and `paths` (with the folder of the file that sets them) after `extends`; relative `extends` only, a list's later entries over its earlier ones. */
function mergedOptions(file: string, depth: number): { baseUrl?: string; paths?: { map: Record<string, string[]>; dir: string } } {
  const json = readJsonc(file) as { extends?: string | string[]; compilerOptions?: { baseUrl?: string; paths?: Record<string, string[]> } } | undefined;
  if (!json) return {};
  let merged: ReturnType<typeof mergedOptions> = {};
  const parents = typeof json.extends === 'string' ? [json.extends] : Array.isArray(json.extends) ? json.extends : [];
  for (const parent of parents) {
    if (typeof parent !== 'string' || !parent.startsWith('.') || depth >= 3) continue;
    const from = mergedOptions(resolvePath(dirname(file), parent.endsWith('.json') ? parent : `${parent}.json`), depth + 1);
    merged = { ...merged, ...from };
  }
  const options = json.compilerOptions;
  if (typeof options?.baseUrl === 'string') merged = { ...merged, baseUrl: resolvePath(dirname(file), options.baseUrl) };
  if (options?.paths && typeof options.paths === 'object') merged = { ...merged, paths: { map: options.paths, dir: dirname(file) } };
  return merged;
}

/**
 * A package's subpath imports (`"imports": { "#db/*": "./src/db/*" }`), as paths made absolute from its
 * folder: a target by its `types`, `import`, `node`, `require` or `default` condition where it names several,
 * each tried in that order; a target outside the package (another package's name) is left out.
 */
function readSubpathImports(dir: string): { pattern: string; targets: string[] }[] {
  const pkg = readJsonc(join(dir, 'package.json')) as { imports?: unknown } | undefined;
  if (typeof pkg?.imports !== 'object' || pkg.imports === null || Array.isArray(pkg.imports)) return [];
  const targetsOf = (v: unknown, depth: number): string[] => {
    if (typeof v === 'string') return v.startsWith('./') ? [resolvePath(dir, v)] : [];
    if (typeof v !== 'object' || v === null || Array.isArray(v) || depth > 3) return [];
    const o = v as Record<string, unknown>;
    return ['types', 'import', 'node', 'require', 'default'].flatMap((c) => targetsOf(o[c], depth + 1));
  };
  return Object.entries(pkg.imports as Record<string, unknown>)
    .filter(([pattern]) => pattern.startsWith('#'))
    .map(([pattern, v]) => ({ pattern, targets: targetsOf(v, 0) }))
    .filter((p) => p.targets.length > 0);
}

/** JSON with comments and trailing commas (tsconfig.json), or undefined. */
function readJsonc(file: string): unknown {
  try {
    const text = readFileSync(file, 'utf8');
    const noComments = text.replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_m, str: string | undefined) => str ?? '');
    return JSON.parse(noComments.replace(/,(\s*[}\]])/g, '$1'));
  } catch {
    return undefined;
  }
}

/** Folders read at most when looking for the workspace's packages: a bound on the first bare import's wait. */
const MAX_PACKAGE_FOLDERS = 5_000;

/**
 * The workspace's own packages (folders with a package.json, five levels deep at most), by name. Read
 * level by level, so a bound reached in a deep tree still leaves the shallower packages found.
 */
function findPackages(root: string): Map<string, { dir: string; entry?: string }> {
  const out = new Map<string, { dir: string; entry?: string }>();
  const queue: [string, number][] = [[root, 0]];
  for (let i = 0; i < queue.length; i++) {
    const [dir, depth] = queue[i]!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    if (entries.some((e) => e.name === 'package.json' && !e.isDirectory())) {
      const pkg = readJsonc(join(dir, 'package.json')) as PackageFields | undefined;
      if (pkg?.name && !out.has(pkg.name)) out.set(pkg.name, { dir, ...entryOf(dir, pkg) });
    }
    // A monorepo's packages sit up to five folders down (`foundations/core/packages/core`).
    if (depth >= 5) continue;
    for (const e of entries) {
      if (queue.length >= MAX_PACKAGE_FOLDERS) break;
      if (SKIP.has(e.name) || e.name.startsWith('.')) continue;
      try {
        // The entry's own type, read with the folder; a link is followed to what it names.
        if (e.isDirectory() || (e.isSymbolicLink() && statSync(join(dir, e.name)).isDirectory())) queue.push([join(dir, e.name), depth + 1]);
      } catch {
        // unreadable: skipped
      }
    }
  }
  return out;
}

/** The package.json fields that say where a package's entry is. */
interface PackageFields { name?: string; main?: string; types?: string; source?: string; exports?: unknown }

/**
 * The file `exports` gives the package's root (`"exports": "./dist/index.js"`, or its `"."` entry), by its
 * `types`, `import`, `require` or `default` condition when it names several.
 */
function rootExport(exports: unknown, depth = 0): string | undefined {
  if (typeof exports === 'string') return exports;
  if (typeof exports !== 'object' || exports === null || Array.isArray(exports) || depth > 3) return undefined;
  const o = exports as Record<string, unknown>;
  if ('.' in o) return rootExport(o['.'], depth + 1);
  for (const condition of ['types', 'import', 'require', 'default']) {
    const found = rootExport(o[condition], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A package's entry as source: `source`, else `types`, `main` or the root of `exports` moved from its build folder (dist, build,
 * out, lib, or a declarations folder: types, typings) to `src` or `lib`, each field tried in turn, else the
 * first field as written (or none: index).
 */
function entryOf(dir: string, pkg: PackageFields): { entry?: string } {
  if (pkg.source) return { entry: resolvePath(dir, pkg.source) };
  const fields = [pkg.types, pkg.main, rootExport(pkg.exports)].filter((f): f is string => typeof f === 'string' && f !== '');
  if (fields.length === 0) return {};
  for (const main of fields) {
    // `lib/` is a build folder as often as a source one: both are tried, the source folder first.
    const asSource = main.replace(/^\.?\/?(dist|build|out|lib|types|typings)\//, '').replace(/\.d\.ts$|\.(c|m)?js$/, '');
    for (const base of ['src', 'lib', '.']) {
      const candidate = resolvePath(dir, base, asSource);
      for (const ext of ['.ts', '.tsx', '.js', '.mjs', '.cjs']) {
        try {
          if (statSync(candidate + ext).isFile()) return { entry: candidate };
        } catch {
          // not there
        }
      }
    }
  }
  return { entry: resolvePath(dir, fields[0]!.replace(/\.d\.ts$|\.(c|m)?js$/, '')) };
}
