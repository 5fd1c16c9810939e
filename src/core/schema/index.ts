// The schema a repository declares, read from its files' text (the language server reads the files; this
// stays pure): SQL schema files and migrations, Prisma schemas, Mongoose model files, TypeORM entities,
// Sequelize models, createIndex calls. Offline, these are the indexes and keys that exist; a connection's own lists take
// precedence over them.

import { scriptDialect } from '../query/find/types';
import { readMongooseSchemas } from './mongoose';
import { mayCreateMongoIndexes, readMongoIndexCalls } from './mongoIndexes';
import { readPrismaSchema } from './prisma';
import { readSqlSchema } from './sql';
import { mayDeclareEntity, readTypeormEntities } from './typeorm';
import { mayDefineSequelizeModel, readSequelizeModels } from './sequelize';
import { emptySchema, type Catalog, type CatalogRelation, type RepositorySchema, type SchemaFile } from './types';

export { emptySchema, type DeclaredMongoIndex, type DeclaredPgIndex, type RepositorySchema, type SchemaFile } from './types';
export { readSqlSchema } from './sql';
export { readPrismaSchema } from './prisma';
export { readMongooseSchemas } from './mongoose';
export { readMongoIndexCalls } from './mongoIndexes';
export { readTypeormEntities } from './typeorm';
export { readSequelizeModels } from './sequelize';

/** Which reader a file goes to, by its name; undefined when none does. */
export function schemaFileKind(path: string): 'sql' | 'prisma' | 'script' | undefined {
  const lower = path.toLowerCase();
  if (lower.endsWith('.prisma')) return 'prisma';
  // A down migration undoes its up migration: applied in name order it would drop what the up built.
  if (lower.endsWith('.sql')) return /(^|[/._-])down\.sql$|(^|\/)down\//.test(lower) ? undefined : 'sql';
  if (/\.(c|m)?[jt]sx?$/.test(lower) && !lower.endsWith('.d.ts')) return 'script';
  return undefined;
}

/** Whether a script's text may declare a Mongoose schema, before it is parsed. */
export function mayDeclareMongooseSchema(text: string): boolean {
  return text.includes('Schema') && text.includes('model');
}

/**
 * Whether a script creates tables in a way no reader here reads: a Knex, Sequelize, TypeORM or
 * node-pg-migrate migration (`createTable(`), or SQL text that creates a table. Then the tables the
 * repository declares are only some of them, and none is said not to exist.
 */
export function mayCreateTables(text: string): boolean {
  return /\bcreateTable\s*\(|\bcreate\s+(?:[a-z]+\s+){0,3}table\b/i.test(text);
}

/** Whether a script's text may declare a schema (a Mongoose schema, a TypeORM entity, a Sequelize model, a createIndex call, a migration), before it is parsed. */
export function mayDeclareScriptSchema(text: string): boolean {
  return mayDeclareMongooseSchema(text) || mayDeclareEntity(text) || mayDefineSequelizeModel(text) || mayCreateMongoIndexes(text) || mayCreateTables(text);
}

/**
 * The schema the files declare. Files are applied in path order with numbers compared as numbers
 * (migrations 2_, 10_ and timestamps sort as they run), so a later statement wins over an earlier one.
 */
export function readRepositorySchema(files: SchemaFile[]): RepositorySchema {
  const out = emptySchema();
  const sorted = [...files].sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
  for (const f of sorted) {
    const kind = schemaFileKind(f.path);
    if (kind === 'sql') readSqlSchema(f.text, f.path, out);
    else if (kind === 'prisma') readPrismaSchema(f.text, f.path, out);
    else if (kind === 'script') {
      if (mayDeclareMongooseSchema(f.text)) readMongooseSchemas(f.text, f.path, scriptDialect('', f.path), out);
      if (mayDeclareEntity(f.text)) readTypeormEntities(f.text, f.path, scriptDialect('', f.path), out);
      if (mayDefineSequelizeModel(f.text)) readSequelizeModels(f.text, f.path, scriptDialect('', f.path), out);
      if (mayCreateMongoIndexes(f.text)) readMongoIndexCalls(f.text, f.path, scriptDialect('', f.path), out);
      if (mayCreateTables(f.text)) out.partial!.push(`${f.path} creates tables in code, which is not read, so the tables the repository declares may be only some of them.`);
    }
  }
  return out;
}

/** The primary keys the schema declares, per table, for the advisor's "only indexes that can exist" filter. */
export function declaredPrimaryKeys(schema: RepositorySchema): Record<string, string[][]> {
  const out: Record<string, string[][]> = {};
  for (const [table, list] of schema.tables) {
    const keys = list.filter((ix) => ix.primary && ix.columns.every((c) => c.column !== undefined)).map((ix) => ix.columns.map((c) => c.column!));
    if (keys.length > 0) out[table] = keys;
  }
  return out;
}

/**
 * The repository's declared schema as the catalog the advice is checked against (core/advice/catalog.ts):
 * each name asked about is a table (or collection) when a file declares it, else null ("does not exist
 * on the repository's declared schema"). Undefined when the repository declares nothing for the engine:
 * then nothing says a name is missing.
 */
export function declaredCatalog(schema: RepositorySchema, engine: 'postgres' | 'mongodb', names: readonly string[]): Catalog | undefined {
  const declared = new Set<string>(engine === 'postgres' ? schema.tables.keys() : schema.collections.keys());
  for (const e of schema.entities.values()) if ((e.library === 'mongoose') === (engine === 'mongodb')) declared.add(e.table);
  if (declared.size === 0) return undefined;
  const relations: Record<string, CatalogRelation | null> = {};
  for (const n of names) relations[n] = declared.has(n) ? { kind: engine === 'postgres' ? 'table' : 'collection' } : null;
  return { where: "the repository's declared schema", relations };
}

/** What the repository's schema is called in a sentence: "the repository's schema (prisma/schema.prisma, db/migrations/...)". */
function schemaPlace(sources: ReadonlySet<string>): string {
  const list = [...sources].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const shown = list.length <= 2 ? list.join(', ') : `${list[0]} and ${list.length - 1} more files`;
  return `the repository's schema (${shown})`;
}

/**
 * The repository's declared schema as a catalog that may say a table is not there, offline. Only for
 * PostgreSQL, and only when the declaration is complete: a Prisma schema (whose models are every table
 * its client reads) or SQL files that create tables (schema files, migrations) declare them, and nothing
 * says they are only some: no script creates tables in code (a Knex, Sequelize, TypeORM or
 * node-pg-migrate migration), no statement that creates one failed to parse or sits in a function, no
 * schema file was left unread (`partial`). Entities (TypeORM, Sequelize) and index calls alone never
 * make it complete: an application may read tables it has no entity for. A MongoDB collection is created
 * by its first write, so no file declares them all: undefined for MongoDB. The names looked up are the
 * caller's (catalogTargets: no CTE, no system catalog); a name in another schema is not judged.
 */
export function repositoryCatalog(schema: RepositorySchema, engine: 'postgres' | 'mongodb', names: readonly { table: string; schema?: string }[]): Catalog | undefined {
  if (engine !== 'postgres' || !schema.tableSources || schema.tableSources.size === 0 || (schema.partial?.length ?? 0) > 0) return undefined;
  const declared = new Set<string>(schema.tables.keys());
  for (const m of schema.prismaModels.values()) declared.add(m.table);
  for (const e of schema.entities.values()) if (e.library !== 'mongoose') declared.add(e.table);
  const relations: Record<string, CatalogRelation | null> = {};
  for (const n of names) {
    if (n.schema !== undefined && n.schema !== 'public') continue;
    const view = schema.views?.get(n.table);
    relations[n.table] = view ? { kind: view } : declared.has(n.table) ? { kind: 'table' } : null;
  }
  return { where: schemaPlace(schema.tableSources), preposition: 'in', relations };
}
