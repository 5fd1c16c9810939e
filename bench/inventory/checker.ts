// An inventory of query call sites from the TypeScript checker's types of call receivers, a source the
// finder (src/core/query/find) does not share: nothing here imports it. A repository folder becomes one
// Program (allowJs, checkJs off) whose imports of the query libraries resolve to their own declarations
// (installed by types.ts); a call is a site when the method it calls is declared by a library on the
// type that runs queries (mongodb's Collection, mongoose's and Sequelize's Model, pg's clients and pools,
// a Knex chain started from a Knex instance or transaction, TypeORM's Repository, EntityManager,
// BaseEntity and QueryRunner, a Prisma model delegate, a postgres.js tag or `unsafe`).
//
// What the checker cannot type, the inventory cannot see: a receiver that is `any` (JavaScript whose
// values come from no typed import, a module that does not resolve) gives no site. Such calls with a
// query method's name are counted apart (`untyped`) so the size of that blind spot is shown.

import ts from 'typescript';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { ensureTypes } from './types';

export type Library = 'mongodb-driver' | 'mongoose' | 'prisma' | 'knex' | 'typeorm' | 'sequelize' | 'node-postgres' | 'postgres.js';
export const LIBRARIES: readonly Library[] = ['mongodb-driver', 'mongoose', 'prisma', 'knex', 'typeorm', 'sequelize', 'node-postgres', 'postgres.js'];

export interface Site {
  library: Library;
  /** Path relative to the repository folder, with forward slashes. */
  file: string;
  start: number;
  end: number;
  line: number;
  test: boolean;
  /** The declaring type and method, `Collection.find`. */
  api: string;
  text: string;
}

export interface InventoryResult {
  sites: Site[];
  /** The files read (relative paths), which the finder is run on too. */
  files: string[];
  /** Calls with a query method's name whose receiver the checker types as `any`: what the inventory cannot see. */
  untyped: { app: number; test: number };
  /** Left out: Knex inserts, and SQL given as text that starts no query (DDL, SET, BEGIN). */
  leftOut: { inserts: number; otherStatements: number };
  /** Files skipped for their size. */
  skipped: number;
  ms: number;
}

/** Inserts are left out, as the finder reports none for MongoDB, Mongoose and Prisma. */
const MONGO_OPS = new Set(['find', 'findOne', 'aggregate', 'countDocuments', 'count', 'distinct', 'estimatedDocumentCount', 'updateOne', 'updateMany', 'deleteOne',
  'deleteMany', 'findOneAndUpdate', 'findOneAndDelete', 'findOneAndReplace', 'replaceOne', 'bulkWrite']);
const MONGOOSE_OPS = new Set(['find', 'findOne', 'findById', 'countDocuments', 'count', 'estimatedDocumentCount', 'aggregate', 'updateOne', 'updateMany', 'deleteOne',
  'deleteMany', 'findOneAndUpdate', 'findByIdAndUpdate', 'findByIdAndDelete', 'findByIdAndRemove', 'findOneAndDelete', 'findOneAndRemove', 'findOneAndReplace',
  'distinct', 'exists', 'replaceOne', 'bulkWrite', 'where']);
const PRISMA_OPS = new Set(['findMany', 'findFirst', 'findFirstOrThrow', 'findUnique', 'findUniqueOrThrow', 'count', 'aggregate', 'groupBy', 'update', 'updateMany',
  'updateManyAndReturn', 'upsert', 'delete', 'deleteMany']);
const PRISMA_RAW = new Set(['$queryRaw', '$executeRaw', '$queryRawUnsafe', '$executeRawUnsafe']);
const TYPEORM_OPS = new Set(['find', 'findOne', 'findBy', 'findOneBy', 'findAndCount', 'findAndCountBy', 'findOneOrFail', 'findOneByOrFail', 'findByIds', 'count',
  'countBy', 'exist', 'exists', 'existsBy', 'delete', 'update', 'softDelete', 'restore', 'increment', 'decrement', 'sum', 'average', 'minimum', 'maximum',
  'createQueryBuilder', 'query']);
const TYPEORM_TYPES = new Set(['Repository', 'TreeRepository', 'EntityManager', 'BaseEntity', 'QueryRunner', 'DataSource', 'Connection']);
const SEQUELIZE_OPS = new Set(['findAll', 'findOne', 'findByPk', 'findAndCountAll', 'findOrCreate', 'count', 'max', 'min', 'sum', 'aggregate', 'destroy', 'update',
  'increment', 'decrement']);
/** What a Knex instance is called with that starts no statement of its own. */
const KNEX_NOT_STATEMENTS = new Set(['transaction', 'transactionProvider', 'destroy', 'initialize', 'ref', 'batchInsert', 'fn', 'client', 'on', 'once', 'off',
  'commit', 'rollback', 'savepoint', 'withUserParams', 'userParams', 'isTransaction', 'executionPromise', 'emit', 'removeListener', 'setMaxListeners']);
const ALL_NAMES = new Set([...MONGO_OPS, ...MONGOOSE_OPS, ...PRISMA_OPS, ...PRISMA_RAW, ...TYPEORM_OPS, ...SEQUELIZE_OPS, 'query', 'unsafe']);
const STATEMENT = /^\s*\(?\s*(select|with|insert|update|delete|merge|values|table)\b/i;

const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', 'out', 'coverage', 'vendor', '.next', '.git', '.turbo', '.cache', '.nuxt', '.output']);
const MAX_FILE = 400_000;
const MAX_FILES = 12_000;

/** Test code by its path: a test folder, a spec folder, `*.test.*`, `*.spec.*`. */
export function isTestPath(path: string): boolean {
  return /(^|\/)(test|tests|__tests__|spec|specs)\//.test(path) || /\.(test|spec)\.[cm]?[jt]sx?$/.test(path);
}

function listFiles(root: string): { files: string[]; skipped: number } {
  const files: string[] = [];
  let skipped = 0;
  const stack = [root];
  while (stack.length > 0 && files.length < MAX_FILES) {
    const dir = stack.pop()!;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) stack.push(p);
      } else if (e.isFile() && /\.(c|m)?(j|t)sx?$/.test(e.name) && !/\.min\.js$/.test(e.name)) {
        if (statSync(p).size > MAX_FILE) skipped++;
        else files.push(p);
      }
    }
  }
  return { files: files.sort(), skipped };
}

/** The package a declaration file belongs to: the last `node_modules/<name>` of its path. */
function packageOf(fileName: string): string | undefined {
  const m = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(fileName.split(sep).join('/'));
  return m?.[1];
}

const PACKAGE_LIBRARY: Record<string, Library> = {
  mongodb: 'mongodb-driver', mongoose: 'mongoose', pg: 'node-postgres', '@types/pg': 'node-postgres', knex: 'knex', typeorm: 'typeorm', sequelize: 'sequelize',
  '.prisma': 'prisma', '@prisma/client': 'prisma', postgres: 'postgres.js',
};

/** Module resolution: the libraries from the cache, the repository's own modules by its tsconfig paths and workspace packages. */
function makeResolver(root: string, typesDir: string, host: ts.ModuleResolutionHost) {
  const libOptions: ts.CompilerOptions = { moduleResolution: ts.ModuleResolutionKind.Bundler, module: ts.ModuleKind.ESNext, allowJs: true };
  const cacheProbe = join(typesDir, 'index.ts');
  const configs = new Map<string, ts.CompilerOptions>();
  const configHost: ts.ParseConfigHost = { ...ts.sys, readDirectory: () => [] };
  /** The nearest tsconfig.json or jsconfig.json above a folder, for its `paths` and `baseUrl`. */
  const optionsFor = (dir: string): ts.CompilerOptions => {
    const known = configs.get(dir);
    if (known) return known;
    let options: ts.CompilerOptions | undefined;
    for (const name of ['tsconfig.json', 'jsconfig.json']) {
      const p = join(dir, name);
      if (!existsSync(p)) continue;
      const read = ts.readConfigFile(p, ts.sys.readFile);
      if (read.error) continue;
      const parsed = ts.parseJsonConfigFileContent(read.config, configHost, dir, undefined, p);
      options = { ...libOptions, paths: parsed.options.paths, baseUrl: parsed.options.baseUrl, pathsBasePath: parsed.options['pathsBasePath'] } as ts.CompilerOptions;
      break;
    }
    if (!options) options = dir === root || dirname(dir) === dir ? libOptions : optionsFor(dirname(dir));
    configs.set(dir, options);
    return options;
  };
  // Workspace packages by name (`@acme/shared` -> packages/shared), whose built output is not in the repository.
  const workspace = new Map<string, string>();
  const walkPackages = (dir: string, depth: number) => {
    if (depth > 4) return;
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        const name = (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name;
        if (typeof name === 'string' && !workspace.has(name)) workspace.set(name, dir);
      } catch {
        // A package.json that is a template names nothing.
      }
    }
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory() && !SKIP_DIRS.has(e.name) && !e.name.startsWith('.')) walkPackages(join(dir, e.name), depth + 1);
  };
  walkPackages(root, 0);
  const tryFile = (base: string): string | undefined => {
    for (const ext of ['', '.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs', '/index.ts', '/index.tsx', '/index.js']) {
      const p = base + ext;
      if (existsSync(p) && statSync(p).isFile()) return p;
    }
    return undefined;
  };
  const fromWorkspace = (name: string): string | undefined => {
    const parts = name.split('/');
    const n = name.startsWith('@') ? 2 : 1;
    const dir = workspace.get(parts.slice(0, n).join('/'));
    if (!dir) return undefined;
    const sub = parts.slice(n).join('/');
    if (sub) return tryFile(join(dir, 'src', sub)) ?? tryFile(join(dir, sub)) ?? tryFile(join(dir, 'lib', sub));
    let entry: string | undefined;
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { types?: string; main?: string };
      const declared = pkg.types ?? pkg.main;
      if (declared) entry = tryFile(join(dir, declared.replace(/^\.\//, '').replace(/^(dist|build|lib|out)\//, 'src/').replace(/\.(d\.ts|js|cjs|mjs)$/, '')));
    } catch {
      // As above.
    }
    return entry ?? tryFile(join(dir, 'src/index')) ?? tryFile(join(dir, 'index')) ?? tryFile(join(dir, 'lib/index'));
  };
  const installed = (name: string): boolean => {
    const parts = name.split('/');
    const pkg = parts.slice(0, name.startsWith('@') ? 2 : 1).join('/');
    return pkg !== '' && !name.startsWith('.') && (existsSync(join(typesDir, 'node_modules', pkg, 'package.json')) || existsSync(join(typesDir, 'node_modules/@types', pkg, 'package.json')));
  };
  return (name: string, containingFile: string): ts.ResolvedModuleFull | undefined => {
    if (containingFile.startsWith(typesDir)) return ts.resolveModuleName(name, containingFile, libOptions, host).resolvedModule;
    if (installed(name)) return ts.resolveModuleName(name, cacheProbe, libOptions, host).resolvedModule;
    const local = ts.resolveModuleName(name, containingFile, optionsFor(dirname(containingFile)), host).resolvedModule;
    if (local && !local.resolvedFileName.includes(`${sep}node_modules${sep}`)) return local;
    if (name.startsWith('.')) return undefined;
    const file = fromWorkspace(name);
    if (!file) return undefined;
    const extension = file.endsWith('.d.ts') ? ts.Extension.Dts : (`.${file.split('.').pop()!}` as ts.Extension);
    return { resolvedFileName: file, extension, isExternalLibraryImport: false };
  };
}

/** The call sites of a repository folder, by the checker's types of their receivers. */
export function inventory(root: string): InventoryResult {
  const began = Date.now();
  const typesDir = ensureTypes();
  const { files, skipped } = listFiles(root);
  const options: ts.CompilerOptions = {
    allowJs: true, checkJs: false, noEmit: true, skipLibCheck: true, strict: false, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler, jsx: ts.JsxEmit.Preserve, experimentalDecorators: true, esModuleInterop: true,
    allowSyntheticDefaultImports: true, allowImportingTsExtensions: true, resolveJsonModule: false, types: ['node'],
    typeRoots: [join(typesDir, 'node_modules/@types')], lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'], maxNodeModuleJsDepth: 0,
  };
  const host = ts.createCompilerHost(options, true);
  const resolve = makeResolver(root, typesDir, host);
  host.resolveModuleNameLiterals = (literals, containingFile) => literals.map((l) => ({ resolvedModule: resolve(l.text, containingFile) }));
  const program = ts.createProgram({ rootNames: files, options, host });
  const checker = program.getTypeChecker();
  const sites: Site[] = [];
  const untyped = { app: 0, test: 0 };
  const leftOut = { inserts: 0, otherStatements: 0 };

  /** The package and container (`Collection`, `Model`) of each declaration of a symbol. */
  const declared = (symbol: ts.Symbol | undefined): { pkg: string; container: string }[] => {
    const out: { pkg: string; container: string }[] = [];
    for (const d of symbol?.declarations ?? []) {
      const pkg = packageOf(d.getSourceFile().fileName);
      if (!pkg) continue;
      const parent = d.parent;
      const container = (ts.isClassDeclaration(parent) || ts.isInterfaceDeclaration(parent)) && parent.name ? parent.name.text : '';
      out.push({ pkg, container });
    }
    return out;
  };
  const signaturePackage = (node: ts.CallLikeExpression): string | undefined => {
    const decl = checker.getResolvedSignature(node)?.declaration;
    return decl ? packageOf(decl.getSourceFile().fileName) : undefined;
  };
  const isKnexCall = (node: ts.Node): boolean => ts.isCallExpression(node) && signaturePackage(node) === 'knex';
  const isKnexInstance = (node: ts.Expression): boolean => {
    const t = checker.getTypeAtLocation(node);
    return (t.isUnion() ? t.types : [t]).some((x) => {
      const s = x.aliasSymbol ?? x.getSymbol();
      return !!s && ['Knex', 'Transaction'].includes(s.getName()) && declared(s).some((d) => d.pkg === 'knex');
    });
  };
  const strip = (e: ts.Expression): ts.Expression => {
    let x = e;
    while (ts.isParenthesizedExpression(x) || ts.isNonNullExpression(x) || ts.isAwaitExpression(x) || ts.isAsExpression(x)) x = x.expression;
    return x;
  };
  /** A Knex site: the outermost call of a chain that starts at an instance, not a part of another Knex call. */
  const knexSite = (call: ts.CallExpression): string | undefined => {
    const parent = call.parent;
    if (ts.isPropertyAccessExpression(parent) && parent.expression === call && ts.isCallExpression(parent.parent) && isKnexCall(parent.parent)) return undefined;
    let cur: ts.CallExpression = call;
    let first: string | undefined;
    const methods: string[] = [];
    for (;;) {
      const callee = strip(cur.expression);
      if (ts.isPropertyAccessExpression(callee)) methods.push(callee.name.text);
      if (isKnexInstance(callee)) {
        first = '(table)';
        break;
      }
      if (!ts.isPropertyAccessExpression(callee)) return undefined;
      const obj = strip(callee.expression);
      if (ts.isCallExpression(obj) && isKnexCall(obj)) {
        cur = obj;
        continue;
      }
      if (!isKnexInstance(obj)) return undefined;
      first = callee.name.text;
      break;
    }
    if (KNEX_NOT_STATEMENTS.has(first)) return undefined;
    // An insert has nothing to look up; the finder reads none, nor MongoDB's or Prisma's (left out there too).
    if (methods.includes('insert')) {
      leftOut.inserts++;
      return undefined;
    }
    // `knex.raw` with a literal that is DDL or another statement that is no query.
    if (first === 'raw' && !isStatementText(cur.arguments[0])) return undefined;
    // A chain given to another Knex call (a subquery, `knex.raw` as a column) is a part of that query.
    for (let n: ts.Node = call; n.parent && !ts.isSourceFile(n.parent); n = n.parent) {
      if (ts.isFunctionLike(n.parent)) break;
      if (ts.isCallExpression(n.parent) && n.parent.arguments.includes(n as ts.Expression) && isKnexCall(n.parent)) return undefined;
    }
    return first;
  };
  /**
   * SQL given as text: a literal (or a constant of a literal type) that does not start a query (DDL in a
   * migration, SET, BEGIN) is left out and counted; text the checker cannot see is kept.
   */
  const isStatementText = (arg: ts.Expression | undefined): boolean => {
    if (!arg) return true;
    let text: string | undefined;
    if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) text = arg.text;
    else if (ts.isTemplateExpression(arg)) text = arg.head.text;
    else {
      const t = checker.getTypeAtLocation(arg);
      if (t.isStringLiteral()) text = t.value;
    }
    if (text === undefined || STATEMENT.test(text)) return true;
    leftOut.otherStatements++;
    return false;
  };
  const postgresTag = (node: ts.TaggedTemplateExpression): boolean => signaturePackage(node) === 'postgres';

  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || sf.fileName.startsWith(typesDir) || !sf.fileName.startsWith(root)) continue;
    const file = relative(root, sf.fileName).split(sep).join('/');
    const test = isTestPath(file);
    const add = (library: Library, node: ts.Node, api: string) => {
      const start = node.getStart(sf);
      sites.push({ library, file, start, end: node.end, line: sf.getLineAndCharacterOfPosition(start).line + 1, test, api, text: sf.text.slice(start, Math.min(node.end, start + 100)).replace(/\s+/g, ' ') });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isTaggedTemplateExpression(node)) {
        const tagName = ts.isPropertyAccessExpression(node.tag) ? node.tag.name.text : '';
        if (PRISMA_RAW.has(tagName) && declared(checker.getSymbolAtLocation((node.tag as ts.PropertyAccessExpression).name)).some((d) => PACKAGE_LIBRARY[d.pkg] === 'prisma')) add('prisma', node, `PrismaClient.${tagName}`);
        else if (postgresTag(node)) {
          const text = node.template.getText(sf).slice(1);
          let nested = false;
          for (let p: ts.Node = node.parent; !ts.isSourceFile(p); p = p.parent) {
            if (ts.isFunctionLike(p)) break;
            if (ts.isTemplateSpan(p) && ts.isTemplateExpression(p.parent) && ts.isTaggedTemplateExpression(p.parent.parent) && postgresTag(p.parent.parent)) nested = true;
          }
          // A fragment (`sql\`and x = ${x}\``) joined into a statement elsewhere is not a query of its own.
          if (!nested && STATEMENT.test(text)) add('postgres.js', node, 'Sql`...`');
        }
      } else if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (isKnexCall(node)) {
          const first = knexSite(node);
          if (first !== undefined) add('knex', node, `Knex.${first}`);
        } else if (ts.isPropertyAccessExpression(callee) && ALL_NAMES.has(callee.name.text)) {
          const m = callee.name.text;
          const decls = declared(checker.getSymbolAtLocation(callee.name));
          const lib = (want: Library, containers: readonly string[], ops: ReadonlySet<string>) =>
            ops.has(m) && decls.some((d) => PACKAGE_LIBRARY[d.pkg] === want && containers.includes(d.container));
          const hit =
            (lib('mongodb-driver', ['Collection'], MONGO_OPS) && (['mongodb-driver', 'Collection'] as const)) ||
            // A legacy bulk's `find(filter)` queues an update or a delete (`bulk.find(q).deleteOne()`).
            (lib('mongodb-driver', ['BulkOperationBase'], new Set(['find'])) && (['mongodb-driver', 'BulkOperationBase'] as const)) ||
            (lib('mongoose', ['Model'], MONGOOSE_OPS) && (['mongoose', 'Model'] as const)) ||
            (lib('prisma', ['PrismaModelDelegate'], PRISMA_OPS) && (['prisma', 'delegate'] as const)) ||
            (lib('prisma', ['PrismaClient'], PRISMA_RAW) && (['prisma', 'PrismaClient'] as const)) ||
            (lib('node-postgres', ['ClientBase', 'Client', 'Pool', 'PoolClient'], new Set(['query'])) && (['node-postgres', 'Client'] as const)) ||
            (lib('sequelize', ['Model'], SEQUELIZE_OPS) && (['sequelize', 'Model'] as const)) ||
            (lib('sequelize', ['Sequelize'], new Set(['query'])) && (['sequelize', 'Sequelize'] as const)) ||
            (lib('postgres.js', ['Sql', 'TransactionSql', 'ReservedSql'], new Set(['unsafe'])) && (['postgres.js', 'Sql'] as const));
          const typeorm = TYPEORM_OPS.has(m) ? decls.find((d) => d.pkg === 'typeorm' && TYPEORM_TYPES.has(d.container)) : undefined;
          const sqlText = m === 'query' || m === 'unsafe' || m.endsWith('Unsafe');
          if ((hit || typeorm) && sqlText && !isStatementText(node.arguments[0])) {
            // DDL or another statement given as text: counted in leftOut.
          } else if (hit) add(hit[0], node, `${hit[1]}.${m}`);
          else if (typeorm) add('typeorm', node, `${typeorm.container}.${m}`);
          else if (decls.length === 0 && (checker.getTypeAtLocation(callee.expression).flags & ts.TypeFlags.Any) !== 0) untyped[test ? 'test' : 'app']++;
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  const read = program.getSourceFiles().filter((sf) => !sf.isDeclarationFile && sf.fileName.startsWith(root)).map((sf) => relative(root, sf.fileName).split(sep).join('/'));
  return { sites, files: read, untyped, leftOut, skipped, ms: Date.now() - began };
}
