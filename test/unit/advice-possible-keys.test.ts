// The one rule every surface's advice goes through: no index that exists already, adds nothing, cannot be
// placed, is for the other engine, or names something the catalog does not have.
import assert from 'node:assert/strict';
import { adviseMongo, advisePostgres, loadSqlParser, type Suggestion } from '../../src/core/index';
import { impossible, possibleOnly, withExistingKeys } from '../../src/core/advice/possible';
import { againstCatalog, missingReason, type Catalog } from '../../src/core/advice/catalog';

function pg(table: string, columns: string[], schema?: string): Suggestion {
  return {
    rank: 1, action: 'create', rule: 'esr', ruleText: '', expectedPlan: '', tradeOff: '', rewrites: [], servesQueryAsWritten: true, conditions: [],
    index: { engine: 'postgres', table, ...(schema ? { schema } : {}), method: 'btree', keys: columns.map((column) => ({ column })) },
  } as unknown as Suggestion;
}

describe('advice: only indexes that can exist and add something', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('refuses exactly a declared unique key, and an index led by a composite primary key', () => {
    const known = { primaryKeys: { lines: [['order_id', 'line']] }, uniqueKeys: { users: [['email']] } };
    assert.match(impossible(pg('users', ['email']), undefined, known) ?? '', /unique key on it exists already/);
    assert.equal(impossible(pg('users', ['email', 'created_at']), undefined, known), undefined);
    assert.match(impossible(pg('lines', ['order_id', 'line', 'sku']), undefined, known) ?? '', /starts with the primary key \(order_id, line\)/);
    assert.equal(impossible(pg('lines', ['order_id', 'sku']), undefined, known), undefined);
  });

  it('refuses a placeholder schema and a schema the code chooses at run time', () => {
    assert.match(impossible(pg('desires', ['user_id'], 'schema'), undefined) ?? '', /stands in for a schema/);
    assert.match(impossible(pg('desires', ['user_id'], 'your_schema'), undefined) ?? '', /stands in for a schema/);
    assert.equal(impossible(pg('desires', ['user_id'], 'billing'), undefined), undefined);
  });

  it('takes the keys from the indexes that exist: a connection\'s primary key and unique indexes, not partial ones', async () => {
    const existing = [
      { name: 'users_pkey', table: 'users', columns: [{ column: 'id' }], primary: true, unique: true },
      { name: 'users_email_key', table: 'users', columns: [{ column: 'email' }], unique: true },
      { name: 'users_live_handle', table: 'users', columns: [{ column: 'handle' }], unique: true, predicate: 'deleted_at IS NULL' },
    ];
    const keys = withExistingKeys(undefined, existing);
    assert.deepEqual(keys.primaryKeys, { users: [['id']] });
    assert.deepEqual(keys.uniqueKeys, { users: [['email']] });
    const a = await advisePostgres('SELECT * FROM users WHERE id = $1 AND status = $2', { existing });
    assert.equal(a.suggestions.filter((s) => s.action === 'create').length, 0);
    assert.match(a.notes.join(' '), /starts with the primary key \(id\)/);
  });

  it('never suggests an index on _id, nor a declared unique MongoDB key', () => {
    const byId = adviseMongo({ collection: 'orders', operation: 'find', filter: { _id: 'x', userId: 'u' }, limit: 1 });
    assert.ok(byId.suggestions.every((s) => s.action !== 'create' || (s.index?.engine === 'mongodb' && s.index.keys[0]?.field !== '_id')));
    const unique = adviseMongo({ collection: 'users', operation: 'find', filter: { email: 'a@b' } }, { existing: [{ name: 'email_1', key: { email: 1 }, unique: true }] });
    assert.ok(unique.suggestions.every((s) => s.action !== 'create'));
  });

  it('refuses the other engine\'s index for the code\'s engine', async () => {
    const a = await advisePostgres('SELECT * FROM orders WHERE status = $1');
    assert.equal(a.suggestions[0]?.action, 'create');
    const b = possibleOnly(a, undefined, { engine: 'mongodb' });
    assert.equal(b.suggestions.length, 0);
    assert.match(b.notes.join(' '), /No PostgreSQL index is suggested: the code is written for MongoDB/);
  });

  describe('what is not there', () => {
    const catalog: Catalog = {
      where: 'shop-dev',
      relations: {
        orders: { kind: 'table' },
        orders_v2: null,
        order_totals: { kind: 'view', baseTables: ['orders', 'order_lines'] },
        daily_sales: { kind: 'materialized view' },
      },
    };

    it('says a name does not exist, and a view is a view with its base tables', () => {
      assert.equal(missingReason('orders_v2', catalog), 'orders_v2 does not exist on shop-dev.');
      assert.equal(missingReason('order_totals', catalog), 'order_totals is a view on shop-dev, which takes no index: index what it reads, orders, order_lines.');
      assert.equal(missingReason('daily_sales', catalog), undefined);
      assert.equal(missingReason('orders', catalog), undefined);
      assert.equal(missingReason('unasked', catalog), undefined);
    });

    it('gives "does not exist" instead of an index, on both engines, through the advisors\' own options', async () => {
      const pgAdvice = await advisePostgres('SELECT * FROM orders_v2 WHERE status = $1', { known: { catalog } });
      assert.deepEqual(pgAdvice.suggestions, []);
      assert.equal(pgAdvice.refusal, 'orders_v2 does not exist on shop-dev.');
      const mongoAdvice = adviseMongo({ collection: 'orders_v2', operation: 'find', filter: { status: 'x' } }, { known: { catalog } });
      assert.deepEqual(mongoAdvice.suggestions, []);
      assert.equal(mongoAdvice.refusal, 'orders_v2 does not exist on shop-dev.');
    });

    it('advises a materialized view itself, and a view\'s base tables instead of the view', async () => {
      const mat = await advisePostgres('SELECT * FROM daily_sales WHERE day = $1', { known: { catalog } });
      assert.equal(mat.suggestions[0]?.action, 'create');
      assert.match(mat.suggestions[0]?.createText ?? '', /ON daily_sales/);
      const view = await advisePostgres('SELECT * FROM order_totals WHERE customer_id = $1', { known: { catalog } });
      assert.equal(view.suggestions.filter((s) => s.action === 'create').length, 0);
      assert.match(view.notes.join(' '), /order_totals is a view on shop-dev.*orders, order_lines/);
    });

    it('keeps the suggestions on the tables that exist when only one of a join\'s tables is missing', async () => {
      const a = await advisePostgres('SELECT * FROM orders o JOIN orders_v2 v ON v.id = o.v_id WHERE o.status = $1', { known: { catalog } });
      assert.equal(a.refusal, undefined);
      assert.ok(a.suggestions.some((s) => s.index?.engine === 'postgres' && s.index.table === 'orders'));
      assert.ok(a.suggestions.every((s) => s.index?.engine !== 'postgres' || s.index.table !== 'orders_v2'));
      assert.match(a.notes.join(' '), /orders_v2 does not exist on shop-dev/);
      assert.equal(againstCatalog(a, catalog).suggestions.length, a.suggestions.length);
    });
  });
});
