// What the finder returns: the kinds of source file, and each found query with where its parts are.

import type { MongoCommand, MongoCommandPart, SourceRange } from '../mongoShell';

export type { SourceRange };

/** What kind of file a text is: decides which finder runs. */
export type QuerySourceKind = 'sql' | 'mongodb-playground' | 'script' | 'other';

export function querySourceKind(languageId: string, fileName: string): QuerySourceKind {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.mongodb.js') || lower.endsWith('.mongodb') || languageId === 'mongodb') return 'mongodb-playground';
  if (['sql', 'postgres', 'pgsql'].includes(languageId) || /\.(sql|psql|pgsql)$/.test(lower)) return 'sql';
  if (['javascript', 'typescript', 'javascriptreact', 'typescriptreact'].includes(languageId) || /\.(c|m)?(j|t)sx?$/.test(lower)) return 'script';
  return 'other';
}

/** A value's position in the file, and for an object member the whole `key: value` as well. */
export interface Located {
  value: SourceRange;
  /** The property `key: value` (or the array element) that holds the value. */
  member?: SourceRange;
  /** The key alone. */
  key?: SourceRange;
}

/**
 * How the collection was reached: `shell` for `db.c` / `db.getCollection('c')` (mongosh argument
 * order: find(filter, projection)), `driver` for `x.collection('c')` (Node driver order: find(filter, options)).
 */
export type MongoFlavour = 'shell' | 'driver';

export interface FoundMongoQuery {
  engine: 'mongodb';
  /** The whole call chain, from the collection to the last cursor method read. */
  range: SourceRange;
  flavour: MongoFlavour;
  /** The command as the core's advisor reads it; its `ranges` are offsets into the file. */
  command: MongoCommand;
  /** Positions of every part and member read, keyed by path ("filter/name/$regex", "pipeline/0/$match"). */
  locations: Record<string, Located>;
  /** Parts given as a whole by something that is not a literal (`skip(page * size)` gives 'skip'). */
  variableParts: MongoCommandPart[];
  /** Objects that were only partly read (a spread of something that is not a local constant). */
  partial: boolean;
  /** Cursor or option names this reader kept but does not interpret. */
  warnings: string[];
  /**
   * Where an operation written apart from the call that runs it is run from: the `bulkWrite(ops)` calls
   * of an operation pushed into `ops` (`ops.push({ updateOne: ... })`).
   */
  calledFrom?: SourceRange[];
}

/** Where the SQL text came from. */
export type SqlOrigin = 'sql-file' | 'string' | 'template' | 'tagged-template' | 'builder';

export interface SqlParameter {
  /** The $n the `${...}` part became. */
  n: number;
  /** The expression inside `${...}` as written. */
  text: string;
  /** The `${...}` in the file. */
  range: SourceRange;
}

export interface FoundSqlQuery {
  engine: 'postgres';
  origin: SqlOrigin;
  /** The statement in a .sql file, or the call (`pool.query(...)`, the tagged template) in a script. */
  range: SourceRange;
  /** The SQL text as the server would receive it, `${...}` parts replaced by $n. */
  sql: string;
  /**
   * Where the characters of `sql` are in the file, as runs of [sqlStart, fileStart, sqlLength, fileLength]:
   * plain text has equal lengths; an escape (\n, \u00e9) is one character from several; a $n stands for its `${...}`.
   */
  runs: SqlRun[];
  /** The file range of the SQL text itself (inside the quotes). */
  textRange: SourceRange;
  params: SqlParameter[];
  /**
   * Names written in place of a schema, table or column the code chooses at run time (`FROM ${table}` read
   * as `FROM "table"`), as the parser reads them: the advisor suggests no index on them.
   */
  standInNames?: string[];
  /** Literal values bound to $1, $2... where the call gives them all (`pool.query(sql, [42, 'x'])`). */
  values?: SqlValue[];
  /**
   * Another database the SQL is written for, named from the module its tag comes from (`import { sql }
   * from './clickhouse-client'`, `by: 'tag'`) or, for a `query` call, the only database client the file
   * imports (`surrealdb`, `mysql2`: `by: 'client'`): such a statement is found, and its hover says why it
   * is not advised.
   */
  otherDatabase?: { name: string; module: string; by: 'tag' | 'client' };
  /** The workspace's `.sql` file the text was read from, for a statement a script loads (loadedSql.ts). */
  readFrom?: string;
  warnings: string[];
}

export type SqlValue = string | number | boolean | null;

export type SqlRun = [number, number, number, number];

export type FoundQuery = FoundMongoQuery | FoundSqlQuery;

/**
 * A Prisma model as schema.prisma declares it: the table it maps to (`@@map`, else the model's name) and
 * the column of each field whose `@map` names another.
 */
export interface PrismaModelNames {
  table: string;
  columns: Record<string, string>;
}

/** The models of the workspace's Prisma schema, by model name. */
export type PrismaModels = ReadonlyMap<string, PrismaModelNames>;

/**
 * A class or model the repository's code declares as mapped to a table or collection (a TypeORM
 * `@Entity`, a Sequelize `define`/`init`, a Mongoose `model(...)`).
 */
export interface DeclaredEntity {
  library: 'typeorm' | 'sequelize' | 'mongoose';
  /** The table or collection it maps to. */
  table: string;
  /** Property name to column name, where they differ. */
  columns: Record<string, string>;
  /** TypeORM: the class extends BaseEntity, so its statics run queries (`User.find(...)`). */
  activeRecord?: boolean;
  /** The file that declares it. */
  source?: string;
}

export type DeclaredEntities = ReadonlyMap<string, DeclaredEntity>;

/**
 * What the finder may know beyond the text it reads: the workspace's Prisma schema, the file's own path
 * and the workspace's other modules (so an imported helper, client or collection is followed to what it
 * is: modules.ts). Everything is optional: without it the finder reads the file alone.
 */
export interface FinderContext {
  prismaModels?: PrismaModels;
  /** Classes and models the repository's code maps to tables and collections, by class or model name. */
  entities?: DeclaredEntities;
  /** The file's path, as `modules` resolves imports from it. */
  file?: string;
  /** The workspace's modules, read when an import is followed. */
  modules?: WorkspaceModules;
}

/**
 * The workspace's source files as the finder follows imports into them. Implemented outside the core
 * (the language server, the CLI and the bench read files); the core only asks.
 */
export interface WorkspaceModules {
  /** The file an import specifier names from `fromFile` (relative, a tsconfig path, a workspace package), or undefined for a library or a file not found. */
  resolve(fromFile: string, specifier: string): string | undefined;
  /** A file's text, or undefined when it cannot be read. */
  read(file: string): string | undefined;
  /**
   * The workspace's script files (bounded, build and dependency folders left out), where the host can list
   * them: the files a function's callers are looked for in (callers.ts). Without it, only the function's own file.
   */
  files?(): readonly string[];
}

export interface FindResult {
  queries: FoundQuery[];
  /** Sentences about what could not be read (a syntax error, the SQL parser not loaded). */
  warnings: string[];
}

/** Which syntax a script is written in: TypeScript, TypeScript with JSX, or JavaScript (with JSX). */
export type ScriptDialect = 'ts' | 'tsx' | 'js';

export function scriptDialect(languageId: string, fileName: string): ScriptDialect {
  const lower = fileName.toLowerCase();
  if (languageId === 'typescriptreact' || lower.endsWith('.tsx')) return 'tsx';
  if (languageId === 'typescript' || /\.(c|m)?ts$/.test(lower)) return 'ts';
  return 'js';
}
