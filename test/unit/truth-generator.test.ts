// The truth generator (bench/truth) must give the same cases for the same seeds on every machine, keep
// the tuning and checking sets apart by seed, and write queries the product's own readers accept.

import assert from 'node:assert/strict';
import { loadModule, parseSync } from 'libpg-query';
import { gorders, gusers, orders } from '../../bench/truth/datasets';
import { MONGO_CATEGORIES, PG_CATEGORIES, generateCase, setOf, type Engine } from '../../bench/truth/generate';
import { parseMongoQuery } from '../../src/core/query/mongoShell';

const SEEDS = Array.from({ length: 480 }, (_, i) => i + 1);

function firstOf<T>(gen: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(gen.next().value as T);
  return out;
}

describe('truth generator', () => {
  for (const engine of ['mongodb', 'postgres'] as Engine[]) {
    it(`${engine}: one seed always gives the same case, and seeds give different queries`, () => {
      const a = SEEDS.map((s) => generateCase(engine, s));
      const b = [...SEEDS].reverse().map((s) => generateCase(engine, s)).reverse();
      assert.deepEqual(a, b);
      assert.ok(new Set(a.map((c) => c.query)).size > SEEDS.length * 0.9, 'too many repeated queries');
    });

    it(`${engine}: seeds divisible by 4 are the checking set, the rest tuning, and both sets hold every category`, () => {
      const cases = SEEDS.map((s) => generateCase(engine, s));
      for (const c of cases) assert.equal(c.set, c.seed % 4 === 0 ? 'checking' : 'tuning');
      const checking = cases.filter((c) => c.set === 'checking');
      assert.equal(checking.length, SEEDS.length / 4);
      const categories = engine === 'mongodb' ? MONGO_CATEGORIES : PG_CATEGORIES;
      for (const set of ['checking', 'tuning']) {
        const seen = new Set(cases.filter((c) => c.set === set).map((c) => c.category));
        assert.deepEqual([...seen].sort(), [...categories].sort(), `${set} set misses a category`);
      }
    });
  }

  it('names the set of a seed the same way for both engines', () => {
    assert.equal(setOf(8), 'checking');
    assert.equal(setOf(9), 'tuning');
    assert.equal(generateCase('mongodb', 12).set, generateCase('postgres', 12).set);
  });

  it('every MongoDB query is read by the shell reader, with the fields it references', () => {
    for (const s of SEEDS) {
      const c = generateCase('mongodb', s);
      const parsed = parseMongoQuery(c.query);
      assert.ok(parsed.ok, `seed ${s}: ${c.query}: ${parsed.ok ? '' : parsed.error}`);
      assert.equal(parsed.command.collection, c.mongo!.collection);
      assert.ok(c.mongo!.fields.length + c.mongo!.sort.length > 0, `seed ${s} references no field`);
    }
  });

  it('every SQL query is accepted by the PostgreSQL parser', async () => {
    await loadModule();
    for (const s of SEEDS) {
      const c = generateCase('postgres', s);
      assert.doesNotThrow(() => parseSync(c.query), `seed ${s}: ${c.query}`);
      assert.ok(c.pg!.every((t) => ['orders', 'customers', 'order_items'].includes(t.table)));
    }
  });

  it('the data generators are deterministic', () => {
    assert.deepEqual(firstOf(gorders(), 50), firstOf(gorders(), 50));
    assert.deepEqual(firstOf(gusers(), 50), firstOf(gusers(), 50));
    assert.deepEqual(firstOf(orders(), 50), firstOf(orders(), 50));
    assert.notDeepEqual(firstOf(gorders(), 5), firstOf(gusers(), 5));
  });
});
