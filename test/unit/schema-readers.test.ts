// The schema a repository declares, read from fixtures written here from each format's documentation
// (PostgreSQL's CREATE TABLE / CREATE INDEX / ALTER TABLE pages, Prisma's schema reference, Mongoose's
// schema and index guides, TypeORM's entity and index decorators, Sequelize's model definition).
import assert from 'node:assert/strict';
import { declaredPrimaryKeys, readRepositorySchema, schemaFileKind } from '../../src/core/schema/index';
import { loadSqlParser } from '../../src/core/sql/index';

const brief = (list: { name: string; columns?: { column?: string; expression?: string; desc?: boolean }[]; key?: Record<string, unknown>; unique?: boolean; primary?: boolean; source: string }[] | undefined) =>
  (list ?? []).map((ix) => ({ name: ix.name, ...(ix.columns ? { columns: ix.columns.map((c) => `${c.column ?? `(${c.expression})`}${c.desc ? ' DESC' : ''}`).join(', ') } : {}), ...(ix.key ? { key: ix.key } : {}), ...(ix.unique ? { unique: true } : {}), ...(ix.primary ? { primary: true } : {}), source: ix.source }));

describe('schema in the repository: readers', () => {
  before(async () => {
    await loadSqlParser();
  });

  describe('SQL', () => {
    it('reads keys, unique constraints and indexes, with PostgreSQL\'s own default names', () => {
      const s = readRepositorySchema([{ path: 'db/schema.sql', text: [
        'CREATE TABLE orders (',
        '  id bigserial PRIMARY KEY,',
        '  email text UNIQUE,',
        '  tenant int, number int,',
        '  CONSTRAINT orders_tenant_number UNIQUE (tenant, number)',
        ');',
        'CREATE TABLE order_lines (order_id bigint, line int, sku text, PRIMARY KEY (order_id, line));',
        'CREATE INDEX orders_status_idx ON public.orders USING btree (status, created_at DESC) INCLUDE (total);',
        "CREATE UNIQUE INDEX ON orders ((lower(email)) DESC, sku text_pattern_ops) WHERE status <> 'gone, really';",
      ].join('\n') }]);
      assert.deepEqual(brief(s.tables.get('orders')), [
        { name: 'orders_pkey', columns: 'id', unique: true, primary: true, source: 'db/schema.sql' },
        { name: 'orders_email_key', columns: 'email', unique: true, source: 'db/schema.sql' },
        { name: 'orders_tenant_number', columns: 'tenant, number', unique: true, source: 'db/schema.sql' },
        { name: 'orders_status_idx', columns: 'status, created_at DESC', source: 'db/schema.sql' },
        { name: 'orders_expr_sku_idx', columns: '(lower(email)) DESC, sku', unique: true, source: 'db/schema.sql' },
      ]);
      const partial = s.tables.get('orders')!.find((ix) => ix.name === 'orders_expr_sku_idx')!;
      assert.equal(partial.predicate, "status <> 'gone, really'");
      assert.deepEqual(s.tables.get('orders')!.find((ix) => ix.name === 'orders_status_idx')!.include, ['total']);
      assert.deepEqual(declaredPrimaryKeys(s), { orders: [['id']], order_lines: [['order_id', 'line']] });
    });

    it('applies migrations in the order they run: ALTER TABLE adds, DROP removes, down migrations are not applied', () => {
      const s = readRepositorySchema([
        { path: 'migrations/10_drop.sql', text: 'DROP INDEX IF EXISTS public.users_name_idx;\nALTER TABLE users DROP CONSTRAINT users_email_key;' },
        { path: 'migrations/2_keys.sql', text: 'ALTER TABLE users ADD PRIMARY KEY (id), ADD COLUMN handle text UNIQUE;\nALTER TABLE users ADD CONSTRAINT users_email_key UNIQUE (email);\nCREATE INDEX users_name_idx ON users (name);' },
        { path: 'migrations/2_keys.down.sql', text: 'DROP TABLE users;' },
        { path: 'migrations/1_init.sql', text: 'CREATE TABLE users (id int, email text, name text, handle text);' },
      ]);
      assert.deepEqual(brief(s.tables.get('users')), [
        { name: 'users_pkey', columns: 'id', unique: true, primary: true, source: 'migrations/2_keys.sql' },
        { name: 'users_handle_key', columns: 'handle', unique: true, source: 'migrations/2_keys.sql' },
      ]);
      assert.equal(schemaFileKind('migrations/2_keys.down.sql'), undefined);
    });

    it('reads the other statements of a file with one PostgreSQL does not take, and says so', () => {
      const s = readRepositorySchema([{ path: 'setup.sql', text: '\\connect shop\nCREATE TABLE t (id int PRIMARY KEY);\nCREATE WIDGET w;\nCREATE INDEX t_x ON t (x);' }]);
      assert.deepEqual(brief(s.tables.get('t')).map((ix) => ix.name), ['t_pkey', 't_x']);
      assert.match(s.warnings.join(' '), /setup\.sql: 1 statement did not parse/);
    });
  });

  describe('Prisma', () => {
    it('reads @id, @unique, @@id, @@unique and @@index under the model\'s names and the mapped database names', () => {
      const s = readRepositorySchema([{ path: 'prisma/schema.prisma', text: [
        'datasource db {',
        '  provider = "postgresql"',
        '  url      = env("DATABASE_URL")',
        '}',
        '/// A customer.',
        'model User {',
        '  id        Int      @id @default(autoincrement())',
        '  email     String   @unique @map("email_address") // login',
        '  lastName  String?',
        '  firstName String?',
        '  posts     Post[]',
        '  @@unique([firstName, lastName], name: "fullName")',
        '  @@index([lastName(sort: Desc), email], map: "users_by_name")',
        '  @@map("users")',
        '}',
        '',
        'model Post {',
        '  authorId Int',
        '  slug     String',
        '  title    String @db.VarChar(200)',
        '  author   User   @relation(fields: [authorId], references: [id])',
        '  @@id([authorId, slug])',
        '  @@index(fields: [title], type: Hash)',
        '}',
      ].join('\n') }]);
      assert.deepEqual(brief(s.tables.get('users')), [
        { name: 'users_pkey', columns: 'id', unique: true, primary: true, source: 'prisma/schema.prisma' },
        { name: 'users_email_address_key', columns: 'email_address', unique: true, source: 'prisma/schema.prisma' },
        { name: 'users_firstName_lastName_key', columns: 'firstName, lastName', unique: true, source: 'prisma/schema.prisma' },
        { name: 'users_by_name', columns: 'lastName DESC, email_address', source: 'prisma/schema.prisma' },
      ]);
      assert.deepEqual(brief(s.tables.get('User')).map((ix) => ix.columns), ['id', 'email', 'firstName, lastName', 'lastName DESC, email']);
      assert.deepEqual(brief(s.tables.get('Post')), [
        { name: 'Post_pkey', columns: 'authorId, slug', unique: true, primary: true, source: 'prisma/schema.prisma' },
        { name: 'Post_title_idx', columns: 'title', source: 'prisma/schema.prisma' },
      ]);
      assert.equal(s.tables.get('Post')![1]!.method, 'hash');
      assert.equal(s.tables.has('db'), false);
    });
  });

  describe('Mongoose', () => {
    it('reads index: true, unique, nested paths, arrays of subdocuments and schema.index(), under the model\'s collection', () => {
      const s = readRepositorySchema([{ path: 'src/models/order.ts', text: [
        "import mongoose, { Schema } from 'mongoose';",
        'const orderSchema = new Schema({',
        '  status: { type: String, index: true },',
        '  email: { type: String, unique: true, sparse: true },',
        '  address: { city: { type: String, index: -1 } },',
        '  items: [{ sku: { type: String, index: true }, qty: Number }],',
        '  note: String,',
        '});',
        "orderSchema.index({ status: 1, createdAt: -1 }, { name: 'by_status' });",
        "export const Order = mongoose.model('Order', orderSchema);",
        "mongoose.model('Category', new mongoose.Schema({ slug: { type: String, unique: true } }, { collection: 'shop_categories' }));",
        "const personSchema = mongoose.Schema({ handle: { type: String, index: 'hashed' } });",
        "mongoose.model('Person', personSchema);",
        "const unused = new Schema({ x: { type: String, index: true } });",
      ].join('\n') }]);
      assert.deepEqual(brief(s.collections.get('orders')), [
        { name: 'status_1', key: { status: 1 }, source: 'src/models/order.ts' },
        { name: 'email_1', key: { email: 1 }, unique: true, source: 'src/models/order.ts' },
        { name: 'address.city_-1', key: { 'address.city': -1 }, source: 'src/models/order.ts' },
        { name: 'items.sku_1', key: { 'items.sku': 1 }, source: 'src/models/order.ts' },
        { name: 'by_status', key: { status: 1, createdAt: -1 }, source: 'src/models/order.ts' },
      ]);
      assert.deepEqual(brief(s.collections.get('shop_categories')).map((ix) => ix.name), ['slug_1']);
      assert.deepEqual(brief(s.collections.get('people')).map((ix) => ix.key), [{ handle: 'hashed' }]);
      assert.equal(s.collections.size, 3);
    });
  });

  describe('TypeORM', () => {
    it('reads entity tables, primary and unique columns, @Index and @Unique, with column names from name options and join columns', () => {
      const s = readRepositorySchema([{ path: 'src/entities/order.entity.ts', text: [
        "import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';",
        '@Entity({ name: \'orders\' })',
        "@Index(['status', 'createdAt'])",
        "@Unique('orders_customer_ref', (o) => [o.customer, o.reference])",
        'export class Order {',
        '  @PrimaryGeneratedColumn() id: number;',
        "  @Column({ unique: true, name: 'order_number' }) number: string;",
        '  @Index() @Column() status: string;',
        "  @Column({ name: 'created_at' }) createdAt: Date;",
        '  @Column() reference: string;',
        "  @ManyToOne(() => Customer) @JoinColumn({ name: 'customer_id' }) customer: Customer;",
        '}',
        '@Entity()',
        'export class OrderLine {',
        '  @PrimaryColumn() orderId: number;',
        '  @PrimaryColumn() line: number;',
        '  @ManyToOne(() => Product) @Index(\'order_line_product\') product: Product;',
        '}',
      ].join('\n') }]);
      assert.deepEqual(brief(s.tables.get('orders')), [
        { name: 'UQ_orders_order_number', columns: 'order_number', unique: true, source: 'src/entities/order.entity.ts' },
        { name: 'IDX_orders_status', columns: 'status', source: 'src/entities/order.entity.ts' },
        { name: 'PK_orders', columns: 'id', unique: true, primary: true, source: 'src/entities/order.entity.ts' },
        { name: 'IDX_orders_status_created_at', columns: 'status, created_at', source: 'src/entities/order.entity.ts' },
        { name: 'orders_customer_ref', columns: 'customer_id, reference', unique: true, source: 'src/entities/order.entity.ts' },
      ]);
      assert.deepEqual(brief(s.tables.get('order_line')), [
        { name: 'order_line_product', columns: 'productId', source: 'src/entities/order.entity.ts' },
        { name: 'PK_order_line', columns: 'orderId, line', unique: true, primary: true, source: 'src/entities/order.entity.ts' },
      ]);
      assert.deepEqual(declaredPrimaryKeys(s)['orders'], [['id']]);
    });
  });

  describe('Sequelize', () => {
    it('reads define and init models: primary keys (or the id Sequelize adds), unique attributes and the indexes option', () => {
      const s = readRepositorySchema([{ path: 'models/user.js', text: [
        "const { DataTypes, Model } = require('sequelize');",
        "const Order = sequelize.define('Order', {",
        '  status: DataTypes.STRING,',
        "  createdAt: { type: DataTypes.DATE, field: 'created_at' },",
        "  reference: { type: DataTypes.STRING, unique: true },",
        "}, { indexes: [{ fields: ['status', { name: 'createdAt', order: 'DESC' }] }, { name: 'orders_ref_status', unique: true, fields: ['reference', 'status'] }] });",
        'class Membership extends Model {}',
        'Membership.init({',
        '  userId: { type: DataTypes.INTEGER, primaryKey: true },',
        '  groupId: { type: DataTypes.INTEGER, primaryKey: true },',
        "  email: { type: DataTypes.STRING, unique: 'member_email_group' },",
        "  group: { type: DataTypes.STRING, unique: 'member_email_group' },",
        "}, { sequelize, underscored: true, modelName: 'GroupMember' });",
        'class Tag extends Model {',
        "  static init(sequelize) { return super.init({ label: { type: DataTypes.STRING, unique: true } }, { sequelize, tableName: 'tags' }); }",
        '}',
      ].join('\n') }]);
      assert.deepEqual(brief(s.tables.get('Orders')), [
        { name: 'Orders_pkey', columns: 'id', unique: true, primary: true, source: 'models/user.js' },
        { name: 'Orders_reference_key', columns: 'reference', unique: true, source: 'models/user.js' },
        { name: 'Orders_status_created_at', columns: 'status, created_at DESC', source: 'models/user.js' },
        { name: 'orders_ref_status', columns: 'reference, status', unique: true, source: 'models/user.js' },
      ]);
      assert.deepEqual(brief(s.tables.get('group_members')), [
        { name: 'group_members_pkey', columns: 'user_id, group_id', unique: true, primary: true, source: 'models/user.js' },
        { name: 'member_email_group', columns: 'email, group', unique: true, source: 'models/user.js' },
      ]);
      assert.deepEqual(brief(s.tables.get('tags')).map((ix) => `${ix.name} ${ix.columns}`), ['tags_pkey id', 'tags_label_key label']);
    });
  });
});
