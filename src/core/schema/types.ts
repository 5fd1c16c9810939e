// The schema a repository declares: the indexes and keys its SQL files, migrations, Prisma schema and
// Mongoose models say exist. Each index remembers the file that declared it, so the hover can say where
// an index came from.

import type { DeclaredEntity, PrismaModelNames } from '../query/find/types';

/** An index as `listIndexes` reports it, plus the multikey facts an explain or $indexStats gives. */
export interface ExistingMongoIndex {
  name: string;
  key: Record<string, number | string>;
  unique?: boolean;
  sparse?: boolean;
  hidden?: boolean;
  partialFilterExpression?: Record<string, unknown>;
  /** True when some document holds an array in an indexed path. */
  multikey?: boolean;
  multikeyPaths?: Record<string, string[]>;
}

/** One key column of an existing index: a column name, or an expression text such as lower(email). */
export interface PgIndexColumn {
  column?: string;
  expression?: string;
  desc?: boolean;
  /** NULLS FIRST (the default for DESC) or NULLS LAST (the default for ASC). */
  nullsFirst?: boolean;
}

/** An index as pg_index/pg_indexes describe it. */
export interface ExistingPgIndex {
  name: string;
  table: string;
  schema?: string;
  /** 'btree' when absent. */
  method?: string;
  columns: PgIndexColumn[];
  include?: string[];
  unique?: boolean;
  primary?: boolean;
  /** The WHERE of a partial index, as text. */
  predicate?: string;
  /** pg_index.indisvalid false: the index exists but the planner cannot use it. */
  invalid?: boolean;
}

/** What a name is, as the catalog says. */
export type RelationKind = 'table' | 'partitioned table' | 'foreign table' | 'view' | 'materialized view' | 'collection' | 'timeseries';

export interface CatalogRelation {
  kind: RelationKind;
  /** A view's tables or collections (PostgreSQL's view dependencies, a MongoDB view's `viewOn`). */
  baseTables?: string[];
}

/** The names looked up and what each one is; `null` for a name that does not exist there. */
export interface Catalog {
  /** Where they were looked up, as a sentence says it: a connection's name, "the repository's declared schema". */
  where: string;
  /** How a sentence joins `where`: "does not exist on shop-dev" (a connection, the default), "in the repository's schema". */
  preposition?: 'on' | 'in';
  relations: Record<string, CatalogRelation | null>;
}

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
