// The query libraries' own type declarations, which the checker inventory types receivers with. The fetched
// repositories have no node_modules, so the libraries are installed once, at pinned versions, into an
// ignored cache folder (`.cache/inventory-types/`), never into the project's dependencies.
//
// Prisma's generated client (`.prisma/client`) is made by `prisma generate` from each application's
// schema and is in no repository; in its place a small declaration written here gives `PrismaClient` a
// delegate per model name (`prisma.user.findMany`) with the operations Prisma documents, so Prisma calls
// are typed through the client only: models and their arguments are not checked, and a client the
// application wraps in its own types reaches the delegate only where TypeScript can follow it.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Exact versions; a change here reinstalls. */
export const TYPED_LIBRARIES: Readonly<Record<string, string>> = {
  mongodb: '6.22.0',
  mongoose: '8.24.10',
  pg: '8.23.1',
  '@types/pg': '8.23.1',
  knex: '3.1.0',
  typeorm: '0.3.31',
  sequelize: '6.37.8',
  '@prisma/client': '6.19.3',
  postgres: '3.4.7',
  '@types/node': '20.19.25',
};

/** The folder by its real path: the checker's files are named so, and a cache reached through a link would not match. */
export const TYPES_DIR = (() => {
  const dir = resolve('.cache/inventory-types');
  return existsSync(dir) ? realpathSync(dir) : dir;
})();

/** What a generated Prisma client declares that the inventory needs: a delegate per model and raw queries. */
const PRISMA_STUB = `// Written by bench/inventory/types.ts in place of the client \`prisma generate\` makes from a schema.
export interface PrismaModelDelegate {
  findMany(args?: any): any; findFirst(args?: any): any; findFirstOrThrow(args?: any): any;
  findUnique(args?: any): any; findUniqueOrThrow(args?: any): any; count(args?: any): any;
  aggregate(args?: any): any; groupBy(args?: any): any; create(args?: any): any; createMany(args?: any): any;
  createManyAndReturn(args?: any): any; update(args?: any): any; updateMany(args?: any): any;
  updateManyAndReturn(args?: any): any; upsert(args?: any): any; delete(args?: any): any; deleteMany(args?: any): any;
}
export declare class PrismaClient {
  constructor(options?: any);
  [model: string]: PrismaModelDelegate;
  $transaction<R>(fn: (tx: PrismaClient) => R, options?: any): R;
  $transaction(queries: any[], options?: any): any;
  $queryRaw(query: TemplateStringsArray | any, ...values: any[]): any;
  $executeRaw(query: TemplateStringsArray | any, ...values: any[]): any;
  $queryRawUnsafe(query: string, ...values: any[]): any;
  $executeRawUnsafe(query: string, ...values: any[]): any;
  $connect(): any; $disconnect(): any; $extends(extension: any): any; $on(event: any, cb: any): any; $use(cb: any): any;
}
export declare const Prisma: any;
export type Prisma = any;
`;

/** Installs the libraries into the cache folder when they are missing or at other versions. */
export function ensureTypes(): string {
  const stamp = join(TYPES_DIR, 'installed.json');
  const wanted = JSON.stringify(TYPED_LIBRARIES);
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== wanted) {
    mkdirSync(TYPES_DIR, { recursive: true });
    writeFileSync(join(TYPES_DIR, 'package.json'), '{"private":true}\n');
    const specs = Object.entries(TYPED_LIBRARIES).map(([n, v]) => `${n}@${v}`);
    // No install scripts: @prisma/client's would try to generate a client.
    execFileSync('npm', ['install', '--prefix', TYPES_DIR, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', ...specs], { stdio: 'inherit' });
    writeFileSync(stamp, wanted);
  }
  const stub = join(TYPES_DIR, 'node_modules/.prisma/client');
  mkdirSync(stub, { recursive: true });
  for (const f of ['default.d.ts', 'index.d.ts']) writeFileSync(join(stub, f), PRISMA_STUB);
  writeFileSync(join(stub, 'package.json'), '{"name":".prisma/client","types":"index.d.ts"}\n');
  return TYPES_DIR;
}
