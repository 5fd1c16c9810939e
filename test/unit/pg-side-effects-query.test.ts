// Which catalog query the side-effect check asks (adapters/pgSideEffects.ts): the shorter one, without
// its parts about written tables, only for a statement that writes and inserts nothing; the whole one
// for any write, a CTE's included. test/integration/side-effects.test.ts checks on a server that both
// answer the same for statements that write nothing.

import { strict as assert } from 'node:assert';
import { sideEffectsQuery } from '../../src/adapters/pgSideEffects';
import { inspectStatement } from '../../src/adapters/pgStatement';

const refsOf = async (sql: string) => (await inspectStatement(sql)).refs;

describe('the side-effect check\'s catalog query', function () {
  it('is the shorter one, with four parameters, for statements that write nothing', async function () {
    for (const sql of ['SELECT * FROM orders WHERE id = $1', "SELECT nextval('s')", 'SELECT * FROM v FOR UPDATE', 'VALUES (1)', 'SELECT 1::dom']) {
      const q = sideEffectsQuery(await refsOf(sql));
      assert.equal(q.name, 'qpi_side_effects_reads', sql);
      assert.equal(q.values.length, 4, sql);
      assert.doesNotMatch(q.text, /\b(written|ins|filled|pg_trigger|pg_attrdef ad)\b|\$[56]/, sql);
      assert.match(q.text, /\$4::jsonb/);
    }
  });

  it('is the whole one for a write, a CTE that writes, or when asked', async function () {
    for (const sql of ['INSERT INTO orders (v) VALUES (1)', 'UPDATE orders SET v = 1', 'DELETE FROM orders', 'WITH d AS (DELETE FROM log RETURNING 1) SELECT * FROM d', 'MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE']) {
      const q = sideEffectsQuery(await refsOf(sql));
      assert.equal(q.name, 'qpi_side_effects', sql);
      assert.equal(q.values.length, 6, sql);
      assert.match(q.text, /pg_trigger/);
    }
    const whole = sideEffectsQuery(await refsOf('SELECT 1'), true);
    assert.equal(whole.name, 'qpi_side_effects');
    assert.equal(whole.values.length, 6);
  });

  it('asks the same names in both, the casts last', async function () {
    const refs = await refsOf("SELECT lower(name)::text FROM orders WHERE a = b AND c = d");
    const short = sideEffectsQuery(refs);
    const whole = sideEffectsQuery(refs, true);
    assert.deepEqual(short.values, [whole.values[0], whole.values[1], whole.values[2], whole.values[5]]);
  });
});
