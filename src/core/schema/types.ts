// The schema a repository declares: the indexes and keys its SQL files, migrations, Prisma schema and
// Mongoose models say exist. Each index remembers the file that declared it, so the hover can say where
// an index came from.

import type { ExistingMongoIndex, ExistingPgIndex } from '../advice/types';
import type { DeclaredEntity, PrismaModelNames } from '../query/find/types';

export type DeclaredPgIndex = ExistingPgIndex & { source: string };
export type DeclaredMongoIndex = ExistingMongoIndex & { source: string };

/** Index lists by table name (unqualified, as a query writes it) and by collection name. */
export interface RepositorySchema {
  tables: Map<string, DeclaredPgIndex[]>;
  collections: Map<string, DeclaredMongoIndex[]>;
  /** The Prisma schema's models with their tables and columns, for the SQL the finder writes for Prisma calls. */
  prismaModels: Map<string, PrismaModelNames>;
  /** Classes and models the code maps to tables and collections (TypeORM, Sequelize, Mongoose), by name. */
  entities: Map<string, DeclaredEntity>;
  /** What could not be read, one sentence each, with the file. */
  warnings: string[];
  /** Views and materialized views the SQL files or the Prisma schema declare, by name: relations that are not tables. */
  views?: Map<string, 'view' | 'materialized view'>;
  /**
   * The files that declare a whole engine's tables (a Prisma schema's models, SQL CREATE TABLE
   * statements), for the rule that says a table is not there (repositoryCatalog in index.ts).
   */
  tableSources?: Set<string>;
  /** Why the declared tables may be only some of them, one sentence each (a migration no reader reads, files left unread). */
  partial?: string[];
}

export function emptySchema(): RepositorySchema {
  return { tables: new Map(), collections: new Map(), prismaModels: new Map(), entities: new Map(), warnings: [], views: new Map(), tableSources: new Set(), partial: [] };
}

/** One file of the repository, by its path relative to the workspace folder. */
export interface SchemaFile {
  path: string;
  text: string;
}
