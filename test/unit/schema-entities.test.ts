// The classes and models the code maps to tables and collections, read from the code as written, with
// the keys they declare; and the declared schema as the catalog the advice says "does not exist" against.
import assert from 'node:assert/strict';
import { advisePostgres, loadSqlParser } from '../../src/core/index';
import { declaredCatalog, readRepositorySchema } from '../../src/core/schema/index';

describe('schema: entities declared in code', () => {
  before(async () => {
    await loadSqlParser();
  });

  const schema = readRepositorySchema([
    {
      path: 'src/entity/LoginAttempt.ts',
      text: [
        "import { BaseEntity, Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';",
        'abstract class Base extends BaseEntity {}',
        '@Entity()',
        "@Unique(['ip', 'at'])",
        'export class LoginAttempt extends Base {',
        "  @PrimaryColumn({ name: 'attempt_id' }) id: string;",
        '  @Index() @Column() ip: string;',
        '  @Column() at: Date;',
        '}',
      ].join('\n'),
    },
    {
      path: 'models/user.js',
      text: [
        "const { Model, DataTypes } = require('sequelize');",
        'class User extends Model {}',
        "User.init({ email: { type: DataTypes.STRING, unique: true }, createdAt: DataTypes.DATE }, { sequelize, underscored: true, indexes: [{ fields: ['createdAt'] }] });",
        "const Tag = sequelize.define('tag', { label: DataTypes.STRING }, { freezeTableName: true });",
      ].join('\n'),
    },
    {
      path: 'models/person.js',
      text: "const mongoose = require('mongoose');\nconst s = new mongoose.Schema({ name: String });\ns.index({ name: 1 });\nmodule.exports = mongoose.model('Person', s);",
    },
  ]);

  it('reads TypeORM\'s default table name, keys, and an active record through a base class', () => {
    assert.deepEqual(schema.entities.get('LoginAttempt'), { library: 'typeorm', table: 'login_attempt', columns: { id: 'attempt_id' }, activeRecord: true, source: 'src/entity/LoginAttempt.ts' });
    const ix = schema.tables.get('login_attempt')!.map((x) => `${x.primary ? 'PK' : x.unique ? 'UQ' : 'IX'} ${x.columns.map((c) => c.column).join(',')}`).sort();
    assert.deepEqual(ix, ['IX ip', 'PK attempt_id', 'UQ ip,at']);
  });

  it('reads Sequelize\'s plural and frozen tables, underscored columns and the added primary key', () => {
    assert.deepEqual(schema.entities.get('User'), { library: 'sequelize', table: 'users', columns: { createdAt: 'created_at' }, source: 'models/user.js' });
    assert.equal(schema.entities.get('tag')?.table, 'tag');
    assert.equal(schema.entities.get('Tag')?.table, 'tag');
    const ix = schema.tables.get('users')!.map((x) => `${x.primary ? 'PK' : x.unique ? 'UQ' : 'IX'} ${x.columns.map((c) => c.column).join(',')}`).sort();
    assert.deepEqual(ix, ['IX created_at', 'PK id', 'UQ email']);
  });

  it('reads a Mongoose model\'s collection by Mongoose\'s rule', () => {
    assert.equal(schema.entities.get('Person')?.table, 'people');
    assert.deepEqual(schema.collections.get('people')?.map((x) => x.key), [{ name: 1 }]);
  });

  it('is the catalog the advice says "does not exist" against, per engine', async () => {
    const catalog = declaredCatalog(schema, 'postgres', ['users', 'user'])!;
    assert.deepEqual(catalog.relations, { users: { kind: 'table' }, user: null });
    const advice = await advisePostgres('SELECT * FROM "user" WHERE email = $1', { known: { catalog } });
    assert.equal(advice.refusal, "user does not exist on the repository's declared schema.");
    assert.deepEqual(declaredCatalog(schema, 'mongodb', ['people', 'persons'])!.relations, { people: { kind: 'collection' }, persons: null });
    assert.equal(declaredCatalog(readRepositorySchema([]), 'postgres', ['users']), undefined);
  });
});
