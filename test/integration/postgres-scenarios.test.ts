// The PostgreSQL scenarios the product teaches, run on a real PostgreSQL 15 with seeded orders and
// order lines, asserting what the server reports as the core reads it (loadPlan): OFFSET reads what it
// skips while keyset pagination reads one page; `= ANY(...) ORDER BY ... LIMIT` sorts every match while
// the UNION ALL rewrite merges pre-sorted branches; HypoPG and in-transaction trial indexes.

import { strict as assert } from 'node:assert';
import pg from 'pg';
import { connectPostgres, type PostgresConnection } from '../../src/adapters/postgres';
import type { Plan } from '../../src/core/model';
import { env, nodesOf, onlyNode, planOf, shape } from './support/env';
import { orderDocs } from './support/seed';

const ORDERS = 80_000;

/** Shared blocks (hit + read) the whole plan touched, as PostgreSQL reports them at the root. */
function sharedBlocks(plan: Plan): number {
  const b = plan.root.metrics.buffers;
  assert.ok(b, 'BUFFERS were reported');
  return (b.sharedHit ?? 0) + (b.sharedRead ?? 0);
}

describe('PostgreSQL scenarios on a real server', function () {
  let admin: pg.Client;
  let conn: PostgresConnection;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query('DROP TABLE IF EXISTS order_details; DROP TABLE IF EXISTS orders');
    await admin.query(`CREATE TABLE orders (id int PRIMARY KEY, country_id int NOT NULL, created_at timestamptz NOT NULL);
      CREATE TABLE order_details (order_id int NOT NULL REFERENCES orders, line int NOT NULL, product_id int NOT NULL, quantity int NOT NULL, PRIMARY KEY (order_id, line))`);
    const docs = orderDocs(ORDERS);
    for (let i = 0; i < docs.length; i += 10_000) {
      const batch = docs.slice(i, i + 10_000);
      await admin.query('INSERT INTO orders SELECT * FROM unnest($1::int[], $2::int[], $3::timestamptz[])', [
        batch.map((d) => d._id), batch.map((d) => d.country_id), batch.map((d) => d.created_at.toISOString()),
      ]);
      const lines = batch.flatMap((d) => d.order_details.map((l) => [d._id, l.line, l.product_id, l.quantity] as const));
      await admin.query('INSERT INTO order_details SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::int[])', [0, 1, 2, 3].map((k) => lines.map((l) => l[k])));
    }
    await admin.query('CREATE INDEX orders_country_created ON orders (country_id, created_at, id)');
    await admin.query('VACUUM ANALYZE orders');
    await admin.query('VACUUM ANALYZE order_details');
    conn = await connectPostgres({ uri: env.pgUri });
  });

  after(async function () {
    await conn?.close();
    await admin?.query('DROP TABLE IF EXISTS order_details; DROP TABLE IF EXISTS orders').catch(() => {});
    await admin?.end();
  });

  it('reports the server version and HypoPG', async function () {
    assert.match(conn.serverVersion, /^15\./);
    assert.ok(conn.serverVersionNum >= 150000 && conn.serverVersionNum < 160000);
    const h = await conn.hypopg();
    assert.equal(h.installed, true);
    assert.match(h.installedVersion!, /^\d+\.\d+/);
  });

  describe('pagination', function () {
    it('OFFSET 10000 LIMIT 20 reads 10,020 index entries to return 20 rows', async function () {
      const result = await conn.explain('SELECT id, created_at FROM orders WHERE country_id = 1 ORDER BY created_at DESC, id DESC OFFSET 10000 LIMIT 20', { analyze: true, buffers: true });
      const plan = planOf(result);
      assert.equal(nodesOf(plan, 'Sort').length, 0, shape(plan));
      const scan = plan.nodes.find((n) => /Index/.test(n.kind))!;
      assert.ok(scan, shape(plan));
      assert.equal(scan.details.indexName, 'orders_country_created');
      assert.equal(scan.metrics.rowsReturned, 10_020);
      assert.equal(plan.root.kind, 'Limit');
      assert.equal(plan.root.metrics.rowsReturned, 20);
      assert.equal(result.rolledBack, false, 'a SELECT changes nothing to roll back');
    });

    it('keyset pagination from the last row seen reads 20 entries and far fewer buffers', async function () {
      const last = (await admin.query('SELECT id, created_at FROM orders WHERE country_id = 1 ORDER BY created_at DESC, id DESC OFFSET 9999 LIMIT 1')).rows[0];
      const keyset = planOf(await conn.explain(
        'SELECT id, created_at FROM orders WHERE country_id = 1 AND (created_at, id) < ($1, $2) ORDER BY created_at DESC, id DESC LIMIT 20',
        { analyze: true, buffers: true, params: [last.created_at, last.id] },
      ));
      const offset = planOf(await conn.explain('SELECT id, created_at FROM orders WHERE country_id = 1 ORDER BY created_at DESC, id DESC OFFSET 10000 LIMIT 20', { analyze: true, buffers: true }));
      assert.equal(nodesOf(keyset, 'Sort').length, 0, shape(keyset));
      const scan = keyset.nodes.find((n) => /Index/.test(n.kind))!;
      assert.equal(scan.details.indexName, 'orders_country_created');
      assert.equal(scan.metrics.rowsReturned, 20);
      assert.ok(sharedBlocks(keyset) * 10 < sharedBlocks(offset), `keyset ${sharedBlocks(keyset)} blocks, offset ${sharedBlocks(offset)}`);
    });
  });

  describe('= ANY(...) with ORDER BY ... LIMIT', function () {
    it('sorts every matching row even with an index on (country_id, created_at)', async function () {
      const matches = Number((await admin.query('SELECT count(*) FROM orders WHERE country_id = ANY($1)', [[1, 2, 3]])).rows[0].count);
      const plan = planOf(await conn.explain("SELECT * FROM orders WHERE country_id = ANY('{1,2,3}') ORDER BY created_at DESC LIMIT 10", { analyze: true, buffers: true }));
      const sort = onlyNode(plan, 'Sort');
      assert.deepEqual(sort.details.sortKey, ['created_at DESC']);
      assert.equal(sort.children[0]!.metrics.rowsReturned, matches, `every one of the ${matches} matches is read and sorted`);
      assert.ok(matches > 30_000);
      assert.equal(plan.root.metrics.rowsReturned, 10);
    });

    it('the UNION ALL rewrite merges three LIMITed index scans: Merge Append, no Sort, at most 30 rows read', async function () {
      const sql = `(SELECT * FROM orders WHERE country_id = 1 ORDER BY created_at DESC LIMIT 10)
        UNION ALL (SELECT * FROM orders WHERE country_id = 2 ORDER BY created_at DESC LIMIT 10)
        UNION ALL (SELECT * FROM orders WHERE country_id = 3 ORDER BY created_at DESC LIMIT 10)
        ORDER BY created_at DESC LIMIT 10`;
      const plan = planOf(await conn.explain(sql, { analyze: true, buffers: true }));
      assert.equal(nodesOf(plan, 'Sort').length, 0, shape(plan));
      assert.equal(nodesOf(plan, 'Merge Append').length, 1, shape(plan));
      const scans = plan.nodes.filter((n) => n.kind === 'Index Scan' || n.kind === 'Index Only Scan');
      assert.equal(scans.length, 3, shape(plan));
      const read = scans.reduce((sum, n) => sum + (n.metrics.rowsReturned ?? 0), 0);
      assert.ok(read <= 30, `${read} rows read`);
      assert.equal(plan.root.metrics.rowsReturned, 10);
    });
  });

  describe('indexes', function () {
    it('lists the indexes of a table with their columns, directions and definitions', async function () {
      const indexes = await conn.listIndexes({ table: 'orders' });
      assert.deepEqual(indexes.map((i) => i.name), ['orders_country_created', 'orders_pkey']);
      const ix = indexes[0]!;
      assert.equal(ix.method, 'btree');
      assert.deepEqual(ix.columns.map((c) => c.expression), ['country_id', 'created_at', 'id']);
      assert.equal(ix.definition, 'CREATE INDEX orders_country_created ON public.orders USING btree (country_id, created_at, id)');
      assert.equal(indexes[1]!.primary, true);
      assert.ok(ix.sizeBytes > 0);
    });

    it('tries a hypothetical index with HypoPG: plain EXPLAIN uses it, nothing is built', async function () {
      const sql = 'SELECT * FROM order_details WHERE product_id = 5 ORDER BY order_id DESC LIMIT 10';
      const before = planOf(await conn.explain(sql));
      assert.equal(before.nodes.filter((n) => /Index/.test(n.kind) && /product/.test(n.details.indexName ?? '')).length, 0, shape(before));
      const result = await conn.explain(sql, { indexes: { ddl: ['CREATE INDEX ON order_details (product_id, order_id)'], mode: 'hypothetical' } });
      const after = planOf(result);
      const scan = after.nodes.find((n) => /Index/.test(n.kind))!;
      assert.match(scan.details.indexName ?? '', /btree_order_details_product_id_order_id/, shape(after));
      assert.ok(after.root.metrics.totalCost! < before.root.metrics.totalCost!, 'the hypothetical index lowers the estimated cost');
      assert.ok(result.notes.some((n) => /hypothetical/.test(n)));
      assert.equal((await conn.listIndexes({ table: 'order_details' })).length, 1, 'only the primary key exists');
    });

    it('builds a trial index inside the rolled-back transaction: ANALYZE uses it, then it is gone', async function () {
      const result = await conn.explain('SELECT * FROM order_details WHERE product_id = 5 ORDER BY order_id DESC LIMIT 10', {
        analyze: true, buffers: true, indexes: { ddl: ['CREATE INDEX trial_product_order ON order_details (product_id, order_id)'], mode: 'transaction' },
      });
      const plan = planOf(result);
      const scan = plan.nodes.find((n) => /Index/.test(n.kind))!;
      assert.equal(scan.details.indexName, 'trial_product_order', shape(plan));
      assert.equal(scan.metrics.rowsReturned, 10);
      assert.deepEqual((await conn.listIndexes({ table: 'order_details' })).map((i) => i.name), ['order_details_pkey']);
    });
  });
});
