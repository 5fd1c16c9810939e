import assert from 'node:assert/strict';
import { advisePostgres, loadSqlParser, type Suggestion } from '../../src/core/index';
import { impossible, queryNames } from '../../src/core/advice/possible';

/** A create suggestion with only what the check reads. */
function pg(table: string, columns: (string | { column: string; expression: true })[]): Suggestion {
  return {
    rank: 1, action: 'create', rule: 'esr', ruleText: '', expectedPlan: '', tradeOff: '', rewrites: [], servesQueryAsWritten: true, conditions: [],
    index: { engine: 'postgres', table, method: 'btree', keys: columns.map((c) => (typeof c === 'string' ? { column: c } : c)) },
  } as unknown as Suggestion;
}

describe('advice: only indexes that can exist', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('suggests nothing on a CTE, only on the table it reads', async () => {
    const a = await advisePostgres('WITH recent AS (SELECT * FROM orders WHERE created_at > now()) SELECT * FROM recent WHERE status = 1 ORDER BY total');
    assert.deepEqual(a.suggestions.map((s) => s.createText), ['CREATE INDEX CONCURRENTLY ON orders (created_at);']);
    assert.ok(a.notes.some((n) => /recent: it is a CTE/.test(n)), a.notes.join(' | '));
  });

  it('reads CTE, subquery, LATERAL and function aliases, and output aliases of the select list only', () => {
    const n = queryNames(`WITH w AS (SELECT 1) SELECT count(*) AS total, o.status AS status FROM orders o, LATERAL (SELECT 1) l, generate_series(1, 3) g JOIN (SELECT 1) s ON true`);
    assert.deepEqual([...n.ctes], ['w']);
    assert.deepEqual([...n.derived].sort(), ['g', 'l', 's']);
    assert.deepEqual([...n.outputs], ['total']);
    assert.deepEqual([...queryNames(`UPDATE orders SET status = 'x' WHERE id = 1`).outputs], []);
  });

  it('refuses subquery aliases, output aliases and bare expressions; keeps real tables and expression indexes', () => {
    const names = queryNames('SELECT count(*) AS total FROM orders o, LATERAL (SELECT * FROM items i WHERE i.order_id = o.id) l');
    assert.match(impossible(pg('l', ['x']), names) ?? '', /subquery or function in FROM/);
    assert.match(impossible(pg('orders', ['total']), names) ?? '', /output alias/);
    assert.match(impossible(pg('orders', ['lower(email)']), names) ?? '', /expression index/);
    assert.equal(impossible(pg('orders', [{ column: 'lower(email)', expression: true }]), names), undefined);
    assert.equal(impossible(pg('items', ['order_id']), names), undefined);
  });

  it('refuses an expression index whose expression holds a parameter', async () => {
    const a = await advisePostgres('SELECT id FROM notes WHERE owner = $1 AND POSITION($2 IN title) > 0');
    assert.ok(a.suggestions.every((s) => !/\$2/.test(s.createText ?? '')), a.suggestions.map((s) => s.createText).join(' | '));
    assert.ok(a.notes.some((n) => /holds a parameter/.test(n)), a.notes.join(' | '));
    assert.equal(impossible(pg('notes', [{ column: 'lower(title)', expression: true }]), undefined), undefined);
    assert.match(impossible(pg('notes', [{ column: 'POSITION($1 IN title)', expression: true }]), undefined) ?? '', /holds a parameter/);
  });

  it('refuses an index that is a declared primary key or starts with it, not one that merely contains it', () => {
    const known = { primaryKeys: { users: [['id']] } };
    assert.match(impossible(pg('users', ['id']), undefined, known) ?? '', /primary key, which is indexed already/);
    assert.match(impossible(pg('users', ['id', 'created_at']), undefined, known) ?? '', /starts with the primary key \(id\)/);
    assert.equal(impossible(pg('users', ['created_at', 'id']), undefined, known), undefined);
    assert.equal(impossible(pg('accounts', ['id']), undefined, known), undefined);
  });

  it('refuses a MongoDB index starting with _id', () => {
    const s = { ...pg('x', []), index: { engine: 'mongodb', collection: 'orders', keys: [{ field: '_id', direction: 1 }], keyPattern: { _id: 1 } } } as unknown as Suggestion;
    assert.match(impossible(s, undefined) ?? '', /always indexes _id/);
  });
});
