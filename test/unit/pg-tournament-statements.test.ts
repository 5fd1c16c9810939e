// The pure parts that let the PostgreSQL tournament run statements as code writes them: which column each
// $n parameter is compared to and the value chosen for it from that column's statistics, the statement
// with the values in place, and table names written with their schema pointed at the temporary copies.

import assert from 'node:assert/strict';
import { bindPgParams, pgParamSlots, pgParamValue, type PgColumnValues } from '../../src/core/advice/pgParams';
import { loadSqlParser, parsePostgresQuery, type PgShape } from '../../src/core/advice/pgShape';
import { renameRelations } from '../../src/core/sql/relations';

async function shapes(sql: string): Promise<PgShape[]> {
  const r = await parsePostgresQuery(sql);
  if (!r.ok) assert.fail(r.refusal);
  return r.shapes;
}

const ints: PgColumnValues = { type: 'integer', common: ['7', '3', '11', '5', '2'], ordered: ['1', '10', '20', '30', '40', '50', '60', '70', '80', '90', '100'] };
const texts: PgColumnValues = { type: 'text', common: ["o'k", 'new', 'paid'], ordered: ['new', "o'k", 'paid'] };
const times: PgColumnValues = { type: 'timestamp with time zone', common: [], ordered: ['2024-01-01 00:00:00+00', '2024-02-01 00:00:00+00', '2024-03-01 00:00:00+00'] };

describe('PostgreSQL tournament: $n parameters', () => {
  before(() => loadSqlParser());

  it('finds the column and role of each parameter: equality, IN items, = ANY, bounds either side, BETWEEN, LIMIT/OFFSET', async () => {
    const { slots, unknown } = pgParamSlots(await shapes('SELECT * FROM app.orders o WHERE o.customer_id = $1 AND $2 < o.created_at AND o.total BETWEEN $3 AND $4 AND o.region IN ($5, $6) AND o.status = ANY($7::text[]) AND o.score <= $8 ORDER BY o.created_at LIMIT $9 OFFSET $10'));
    assert.deepEqual(unknown, []);
    const brief = slots.map((s) => `${s.n}:${s.role}:${s.schema ?? ''}.${s.table ?? ''}.${s.column ?? ''}${s.item !== undefined ? `#${s.item}` : ''}`);
    assert.deepEqual(brief, [
      '1:equal:app.orders.customer_id',
      // "$2 < created_at" bounds created_at from below.
      '2:low:app.orders.created_at',
      '3:between-low:app.orders.total',
      '4:between-high:app.orders.total',
      '5:item:app.orders.region#0',
      '6:item:app.orders.region#1',
      '7:array:app.orders.status',
      '8:high:app.orders.score',
      '9:limit:..',
      '10:offset:..',
    ]);
  });

  it('names the parameters it cannot give a value: in a function, LIKE, the select list', async () => {
    const { slots, unknown } = pgParamSlots(await shapes("SELECT $3 AS tag FROM t WHERE lower(email) = $1 AND name LIKE $2 AND id = $4"));
    assert.deepEqual(slots.map((s) => s.n), [4]);
    assert.deepEqual(unknown.map((u) => u.n), [1, 2, 3]);
    assert.equal(unknown[0]!.where, 'lower(email) = $1');
    assert.equal(unknown[1]!.where, 'name LIKE $2');
  });

  it('chooses values from the statistics and says how', () => {
    assert.deepEqual(pgParamValue({ n: 1, role: 'equal', table: 'orders', column: 'customer_id' }, ints), { n: 1, literal: '11', why: '$1 = 11, a common value of orders.customer_id' });
    // Without common values, the middle of the histogram; a text value is quoted.
    assert.equal(pgParamValue({ n: 1, role: 'equal', table: 'orders', column: 'created_at' }, times)!.literal, "'2024-02-01 00:00:00+00'");
    assert.equal(pgParamValue({ n: 2, role: 'low', table: 'orders', column: 'total' }, ints)!.literal, '90');
    assert.equal(pgParamValue({ n: 2, role: 'high', table: 'orders', column: 'total' }, ints)!.literal, '10');
    assert.deepEqual([pgParamValue({ n: 3, role: 'between-low', table: 't', column: 'x' }, ints)!.literal, pgParamValue({ n: 4, role: 'between-high', table: 't', column: 'x' }, ints)!.literal], ['50', '60']);
    assert.deepEqual([0, 1].map((item) => pgParamValue({ n: 5 + item, role: 'item', table: 't', column: 'x', item }, ints)!.literal), ['7', '3']);
    assert.equal(pgParamValue({ n: 7, role: 'array', table: 't', column: 's' }, texts)!.literal, `'{"o''k","new","paid"}'`);
    assert.equal(pgParamValue({ n: 9, role: 'limit' }, undefined)!.literal, '20');
    // A column the statistics say nothing of gives no value.
    assert.equal(pgParamValue({ n: 1, role: 'equal', table: 't', column: 'x' }, { type: 'integer', common: [], ordered: [] }), undefined);
    assert.equal(pgParamValue({ n: 1, role: 'equal', table: 't', column: 'x' }, undefined), undefined);
  });

  it('puts the literals in place of the parameters, not inside strings or comments', () => {
    const sql = "SELECT '$1' AS s FROM t WHERE a = $1 AND b > $2 -- $2\nLIMIT $3";
    assert.equal(bindPgParams(sql, [{ n: 1, literal: '42', why: '' }, { n: 2, literal: "'x'", why: '' }]), "SELECT '$1' AS s FROM t WHERE a = 42 AND b > 'x' -- $2\nLIMIT $3");
  });
});

describe('PostgreSQL tournament: tables named with their schema', () => {
  before(() => loadSqlParser());

  it('points qualified names at the copies, keeping the rest as written', () => {
    const sql = 'SELECT o.id FROM app.orders o JOIN "Sales" . "Orders" s ON s."Id" = o.id WHERE EXISTS (SELECT 1 FROM app.orders x WHERE x.id = o.id) AND o.id IN (SELECT id FROM orders)';
    const out = renameRelations(sql, (r) => (r.schema !== undefined ? `pg_temp."${r.name}"` : undefined));
    assert.equal(out, 'SELECT o.id FROM pg_temp."orders" o JOIN pg_temp."Orders" s ON s."Id" = o.id WHERE EXISTS (SELECT 1 FROM pg_temp."orders" x WHERE x.id = o.id) AND o.id IN (SELECT id FROM orders)');
    assert.equal(renameRelations('SELECT FROM WHERE', () => 'x'), undefined);
  });
});
