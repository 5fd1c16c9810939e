// The finder with the repository's declared entities: the real table and column names, TypeORM's
// BaseEntity statics, one library per call decided by who declares the receiver, and no array find(fn).
import assert from 'node:assert/strict';
import { findQueries, type FoundMongoQuery, type FoundQuery, type FoundSqlQuery } from '../../src/core/query/find/index';
import { typeormTableName } from '../../src/core/query/find/typeorm';
import { mongooseCollection } from '../../src/core/query/find/mongoose';
import type { FinderContext } from '../../src/core/query/find/types';
import { loadSqlParser } from '../../src/core/sql/index';
import { readRepositorySchema } from '../../src/core/schema/index';

const find = (text: string, context: FinderContext = {}): FoundQuery[] => findQueries(text, 'script', 'ts', context).queries;
const sqlOf = (qs: FoundQuery[]) => qs.filter((q): q is FoundSqlQuery => q.engine === 'postgres').map((q) => q.sql);
const mongoOf = (qs: FoundQuery[]) => qs.filter((q): q is FoundMongoQuery => q.engine === 'mongodb').map((q) => `${q.command.collection}.${q.command.operation}`);

const ENTITIES = [
  {
    path: 'src/entities/ban.entity.ts',
    text: [
      "import { BaseEntity, Column, Entity, PrimaryGeneratedColumn } from 'typeorm';",
      "@Entity('bans')",
      'export class Ban extends BaseEntity {',
      '  @PrimaryGeneratedColumn() id: number;',
      "  @Column({ name: 'user_id' }) userId: string;",
      "  @Column({ name: 'expires_at' }) expiresAt: Date;",
      '}',
      '@Entity()',
      'export class UserSession extends BaseEntity {',
      '  @PrimaryGeneratedColumn() id: number;',
      '  @Column() token: string;',
      '}',
      "@Entity({ name: 'users' })",
      'export class User {',
      '  @PrimaryGeneratedColumn() id: number;',
      "  @Column({ name: 'email_address', unique: true }) email: string;",
      '}',
    ].join('\n'),
  },
  {
    path: 'src/models/order.js',
    text: [
      "const { DataTypes } = require('sequelize');",
      'module.exports = (sequelize) => {',
      "  const Order = sequelize.define('Order', { customerId: { type: DataTypes.INTEGER, field: 'customer_id' }, status: DataTypes.STRING }, { tableName: 'shop_orders' });",
      '  return Order;',
      '};',
    ].join('\n'),
  },
  {
    path: 'src/models/product.js',
    text: [
      "const mongoose = require('mongoose');",
      'const productSchema = new mongoose.Schema({ sku: { type: String, unique: true }, price: Number });',
      "const ProductModel = mongoose.model('Product', productSchema, 'catalogue');",
      'module.exports = ProductModel;',
    ].join('\n'),
  },
];

describe('finder: the entities the repository declares', () => {
  before(async () => {
    await loadSqlParser();
  });
  const schema = readRepositorySchema(ENTITIES);
  const context: FinderContext = { entities: schema.entities };

  it('names a TypeORM entity without a name as DefaultNamingStrategy does', () => {
    assert.equal(typeormTableName('UserSession'), 'user_session');
    assert.equal(typeormTableName('HTTPRequest'), 'http_request');
    assert.equal(typeormTableName('User2FA'), 'user2_fa');
    assert.equal(schema.entities.get('UserSession')?.table, 'user_session');
  });

  it('lists every library\'s entities with their tables, renamed columns and active records', () => {
    assert.deepEqual(schema.entities.get('Ban'), { library: 'typeorm', table: 'bans', columns: { userId: 'user_id', expiresAt: 'expires_at' }, activeRecord: true, source: 'src/entities/ban.entity.ts' });
    assert.equal(schema.entities.get('User')?.activeRecord, undefined);
    assert.deepEqual(schema.entities.get('Order'), { library: 'sequelize', table: 'shop_orders', columns: { customerId: 'customer_id' }, source: 'src/models/order.js' });
    assert.equal(schema.entities.get('Product')?.table, 'catalogue');
    assert.equal(schema.entities.get('ProductModel')?.table, 'catalogue');
  });

  it('reads BaseEntity statics of a declared active record with the real table and columns', () => {
    const text = [
      "import { Ban } from '../entities/ban.entity';",
      "import { UserSession } from '../entities/ban.entity';",
      'export async function active(userId: string) {',
      '  const bans = await Ban.find({ where: { userId }, order: { expiresAt: "DESC" } });',
      '  await UserSession.update({ token: "x" }, { token: "y" });',
      '  await Ban.delete({ userId });',
      '  return Ban.findOneBy({ userId });',
      '}',
    ].join('\n');
    const got = sqlOf(find(text, context));
    assert.equal(got.length, 4);
    assert.match(got[0]!, /FROM bans WHERE user_id = \$1 ORDER BY expires_at DESC/);
    assert.match(got[1]!, /^UPDATE user_session SET token = .* WHERE token = /);
    assert.match(got[2]!, /^DELETE FROM bans WHERE user_id = \$1/);
    assert.match(got[3]!, /FROM bans WHERE user_id = \$1 LIMIT 1/);
  });

  it('does not read a declared entity that is no active record as one', () => {
    const text = "import { User } from '../entities/ban.entity';\nexport const f = (email: string) => User.findOne({ where: { email } });";
    assert.deepEqual(find(text, context), []);
  });

  it('reads a repository of a declared entity with its table and columns', () => {
    const text = [
      "import { getRepository } from 'typeorm';",
      "import { User } from '../entities/ban.entity';",
      'export const byEmail = (email: string) => getRepository(User).findOne({ where: { email } });',
    ].join('\n');
    assert.match(sqlOf(find(text, context))[0] ?? '', /FROM users WHERE email_address = \$1 LIMIT 1/);
  });

  it('reads X.findOne({ where }) as the library that declares X, whatever else the file imports', () => {
    const text = [
      "import mongoose from 'mongoose';",
      "import { Repository } from 'typeorm';",
      "const Order = require('../models/order');",
      "const Product = require('../models/product');",
      'export async function f(id: number) {',
      '  await Order.findOne({ where: { customerId: id } });',
      '  await Product.findOne({ sku: "a" });',
      '}',
    ].join('\n');
    const qs = find(text, context);
    assert.deepEqual(sqlOf(qs).map((s) => /FROM (\w+) WHERE (\w+)/.exec(s)?.slice(1)), [['shop_orders', 'customer_id']]);
    assert.deepEqual(mongoOf(qs), ['catalogue.findOne']);
  });

  it('reads a Mongoose model held under another name with its declared collection', () => {
    const text = "const ProductModel = require('./product');\nexports.list = () => ProductModel.find({ price: { $gt: 1 } }).sort('-price');";
    assert.deepEqual(mongoOf(find(text, context)), ['catalogue.find']);
  });

  it('falls back to today\'s rules when nothing says where a name comes from', () => {
    const text = "import { Sequelize } from 'sequelize';\nexport const f = () => Invoice.findAll({ where: { paid: false } });";
    assert.match(sqlOf(find(text))[0] ?? '', /FROM "Invoices" WHERE paid = false/i);
    assert.equal(mongooseCollection('Goose'), 'geese');
    assert.equal(mongooseCollection('Human'), 'humen');
  });

  it('never reads an array\'s find(fn) as a query', () => {
    const text = [
      "import { Entity, BaseEntity } from 'typeorm';",
      "import mongoose from 'mongoose';",
      '@Entity() class Ban extends BaseEntity {}',
      'export const f = (Bans: Ban[]) => [Bans.find((b) => b.id === 1), Ban.find(function (b) { return b; }), Order.findOne((o) => o.id)];',
    ].join('\n');
    assert.deepEqual(find(text, context), []);
  });

  it('reads an active record declared in the same file without the repository', () => {
    const text = [
      "import { BaseEntity, Column, Entity, PrimaryGeneratedColumn } from 'typeorm';",
      "@Entity('audit_log')",
      'export class AuditEntry extends BaseEntity {',
      '  @PrimaryGeneratedColumn() id: number;',
      '  static recent() { return AuditEntry.find({ where: { kind: "login" }, take: 10 }); }',
      '}',
    ].join('\n');
    assert.match(sqlOf(find(text))[0] ?? '', /FROM audit_log WHERE kind = 'login' LIMIT 10/);
  });
});
