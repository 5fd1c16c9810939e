// Connected to a real server, the advice says what is not there: a table or collection the catalog does
// not have gets "<name> does not exist on <connection>" instead of an index, a view is named as a view
// with what it reads, a materialized view is indexed itself. The catalog is read by the adapters from
// PostgreSQL 15 and MongoDB 6.0 started by scripts/with-servers.mjs; the sentence comes from the core's
// one rule (possibleOnly with the catalog), which every face's advice goes through.

import { strict as assert } from 'node:assert';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { connectMongo, type MongoConnection } from '../../src/adapters/mongodb';
import { connectPostgres, type PostgresConnection } from '../../src/adapters/postgres';
import { adviseMongo, advisePostgres, type ExistingPgIndex } from '../../src/core/index';
import { env } from './support/env';

const DB = 'qpi_does_not_exist';

function uriFor(base: string, db: string): string {
  const u = new URL(base);
  u.pathname = `/${db}`;
  return u.toString();
}

describe('advice on a connection: what is not there (PostgreSQL)', function () {
  let admin: pg.Client;
  let client: pg.Client;
  let conn: PostgresConnection;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.query(`CREATE DATABASE ${DB}`);
    client = new pg.Client({ connectionString: uriFor(env.pgUri, DB) });
    await client.connect();
    await client.query(`
      CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE order_lines (order_id bigint NOT NULL REFERENCES orders, line int NOT NULL, amount numeric NOT NULL, PRIMARY KEY (order_id, line));
      CREATE VIEW order_totals AS SELECT o.id, o.customer_id, sum(l.amount) AS total FROM orders o JOIN order_lines l ON l.order_id = o.id GROUP BY o.id, o.customer_id;
      CREATE MATERIALIZED VIEW daily_sales AS SELECT created_at::date AS day, count(*) AS n FROM orders GROUP BY 1;
      CREATE TABLE "CamelCase" (id int PRIMARY KEY, kind text);
    `);
    conn = await connectPostgres({ uri: uriFor(env.pgUri, DB) });
  });

  after(async function () {
    await conn?.close();
    await client?.end();
    await admin?.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin?.end();
  });

  async function existing(table: string): Promise<ExistingPgIndex[]> {
    return (await conn.listIndexes({ table })).map((ix) => ({
      name: ix.name, table: ix.table, schema: ix.schema, unique: ix.unique, primary: ix.primary,
      columns: ix.columns.map((c) => ({ column: c.expression.replace(/^"|"$/g, '') })),
    }));
  }

  it('reads what each name is from the catalog: tables, a view with its tables, a materialized view, and nothing', async () => {
    const catalog = await conn.catalog([{ table: 'orders' }, { table: 'orders_v2' }, { table: 'order_totals' }, { table: 'daily_sales' }, { table: 'CamelCase' }, { table: 'orders', schema: 'archive' }], 'shop-dev');
    assert.equal(catalog.where, 'shop-dev');
    assert.deepEqual(catalog.relations['orders_v2'], null);
    assert.deepEqual(catalog.relations['order_totals'], { kind: 'view', baseTables: ['order_lines', 'orders'] });
    assert.deepEqual(catalog.relations['daily_sales'], { kind: 'materialized view' });
    assert.deepEqual(catalog.relations['CamelCase'], { kind: 'table' });
    assert.deepEqual(catalog.relations['orders'], { kind: 'table' });
    assert.deepEqual(catalog.relations['archive.orders'], null);
  });

  it('says "does not exist on" the connection instead of an index', async () => {
    const catalog = await conn.catalog([{ table: 'orders_v2' }], 'shop-dev');
    const advice = await advisePostgres('SELECT * FROM orders_v2 WHERE status = $1 ORDER BY created_at DESC LIMIT 20', { existing: await existing('orders_v2'), known: { catalog } });
    assert.deepEqual(advice.suggestions, []);
    assert.equal(advice.refusal, 'orders_v2 does not exist on shop-dev.');
  });

  it('indexes a table that exists, never its primary key or an index that starts with it', async () => {
    const catalog = await conn.catalog([{ table: 'orders' }], 'shop-dev');
    const byStatus = await advisePostgres('SELECT * FROM orders WHERE status = $1 ORDER BY created_at DESC LIMIT 20', { existing: await existing('orders'), known: { catalog } });
    assert.equal(byStatus.refusal, undefined);
    assert.match(byStatus.suggestions[0]?.createText ?? '', /ON orders \(status, created_at DESC\)/);
    const byId = await advisePostgres('SELECT * FROM orders WHERE id = $1 AND status = $2', { existing: await existing('orders'), known: { catalog } });
    assert.ok(byId.suggestions.every((s) => s.action !== 'create'), JSON.stringify(byId.suggestions.map((s) => s.createText)));
  });

  it('names a view as a view with the tables it reads, and indexes a materialized view itself', async () => {
    const catalog = await conn.catalog([{ table: 'order_totals' }, { table: 'daily_sales' }], 'shop-dev');
    const view = await advisePostgres('SELECT * FROM order_totals WHERE customer_id = $1', { known: { catalog } });
    assert.ok(view.suggestions.every((s) => s.action !== 'create'));
    assert.match(view.notes.join(' '), /order_totals is a view on shop-dev, which takes no index: index what it reads, order_lines, orders\./);
    const mat = await advisePostgres('SELECT * FROM daily_sales WHERE day = $1', { existing: await existing('daily_sales'), known: { catalog } });
    assert.match(mat.suggestions[0]?.createText ?? '', /ON daily_sales \(day\)/);
  });
});

describe('advice on a connection: what is not there (MongoDB)', function () {
  let client: MongoClient;
  let conn: MongoConnection;

  before(async function () {
    client = await MongoClient.connect(env.mongoUri);
    const db = client.db(DB);
    await db.dropDatabase();
    await db.collection('orders').insertMany([{ status: 'new', userId: 'u1' }, { status: 'paid', userId: 'u2' }]);
    await db.createCollection('paid_orders', { viewOn: 'orders', pipeline: [{ $match: { status: 'paid' } }] });
    conn = await connectMongo({ uri: env.mongoUri });
  });

  after(async function () {
    await conn?.close();
    await client?.db(DB).dropDatabase().catch(() => {});
    await client?.close();
  });

  it('reads what each name is: a collection, a view on a collection, and nothing', async () => {
    const catalog = await conn.catalog(['orders', 'orders_v2', 'paid_orders'], 'shop-mongo', DB);
    assert.deepEqual(catalog.relations, { orders: { kind: 'collection' }, orders_v2: null, paid_orders: { kind: 'view', baseTables: ['orders'] } });
  });

  it('says "does not exist on" the connection instead of an index, and never indexes _id', async () => {
    const catalog = await conn.catalog(['orders_v2', 'orders'], 'shop-mongo', DB);
    const missing = adviseMongo({ collection: 'orders_v2', operation: 'find', filter: { status: 'new' } }, { existing: [], known: { catalog } });
    assert.deepEqual(missing.suggestions, []);
    assert.equal(missing.refusal, 'orders_v2 does not exist on shop-mongo.');
    const indexes = (await conn.listIndexes('orders', DB)).map((ix) => ({ name: ix.name, key: ix.key, unique: ix.unique }));
    const byId = adviseMongo({ collection: 'orders', operation: 'find', filter: { _id: 'x', userId: 'u1' }, limit: 1 }, { existing: indexes, known: { catalog } });
    assert.equal(byId.refusal, undefined);
    assert.ok(byId.suggestions.every((s) => s.action !== 'create' || (s.index?.engine === 'mongodb' && s.index.keys[0]?.field !== '_id')));
    const byStatus = adviseMongo({ collection: 'orders', operation: 'find', filter: { status: 'new' } }, { existing: indexes, known: { catalog } });
    assert.match(byStatus.suggestions[0]?.createText ?? '', /orders.*status: 1/);
  });

  it('names a view as a view on the collection it reads', async () => {
    const catalog = await conn.catalog(['paid_orders'], 'shop-mongo', DB);
    const advice = adviseMongo({ collection: 'paid_orders', operation: 'find', filter: { userId: 'u2' } }, { known: { catalog } });
    assert.ok(advice.suggestions.every((s) => s.action !== 'create'));
    assert.match(advice.notes.join(' '), /paid_orders is a view on shop-mongo, which takes no index: index what it reads, orders\./);
  });
});
