// The truth generator (bench/truth) must give the same cases for the same seeds on every machine, keep
// the tuning and checking sets apart by seed, and write queries the product's own readers accept.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadModule, parseSync } from 'libpg-query';
import { COLLSCAN, mongoCandidates, mongoKey, orderings, pgKey } from '../../bench/truth/candidates';
import { gorders, gusers, orders } from '../../bench/truth/datasets';
import { MONGO_CATEGORIES, PG_CATEGORIES, generateCase, setOf, type Engine } from '../../bench/truth/generate';
import { handmadeCorrect, readHandmade, recordedKeys, recordedWork } from '../../bench/truth/handmade';
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

describe('truth oracle keys', () => {
  it('a CREATE INDEX as the advice prints it and as the oracle builds it give one key', () => {
    assert.equal(pgKey('CREATE INDEX CONCURRENTLY ON esr (a, b DESC, c);'), pgKey('CREATE INDEX ON esr (a, b DESC, c)'));
    assert.equal(pgKey('CREATE INDEX CONCURRENTLY ON public.orders (status ASC NULLS LAST) INCLUDE (total);'), 'orders(status) include(total)');
    assert.notEqual(pgKey('CREATE INDEX ON orders (status) WHERE status = \'Paid\''), pgKey('CREATE INDEX ON orders (status) WHERE status = \'paid\''));
    // A name spelled in capitals keeps them inside its quotes; one that needs no quotes is the same name without.
    assert.equal(pgKey('CREATE INDEX CONCURRENTLY ON "Link" ("createdById");'), '"Link"("createdById")');
    assert.equal(pgKey('CREATE INDEX ON "action" ("project_id", last_active)'), pgKey('CREATE INDEX ON action (project_id, last_active)'));
    assert.equal(pgKey('CREATE INDEX ON "user" (id)'), '"user"(id)');
    assert.equal(mongoKey({ a: -1, b: 1 }), mongoKey({ a: 1, b: -1 }));
    assert.notEqual(mongoKey({ a: 1, b: 1 }), mongoKey({ a: 1, b: -1 }));
  });

  it('candidates: every ordering of every subset of the referenced fields, sort fields in the query\'s direction', () => {
    assert.equal(orderings(['a', 'b', 'c']).length, 3 + 6 + 6);
    const c = generateCase('mongodb', 5);
    const keys = mongoCandidates(c);
    assert.equal(keys[0], COLLSCAN);
    const fields = new Set([...c.mongo!.fields, ...c.mongo!.sort.map(([f]) => f)]);
    assert.equal(keys.length, 1 + orderings([...fields]).length);
    for (const [f, d] of c.mongo!.sort) assert.ok(keys.includes(mongoKey({ [f]: d })));
  });

  it('recorded candidates of the hand-made cases share a key only with their mirror image, measured alike; each oracle is among them', () => {
    for (const c of readHandmade(join(__dirname, '..', 'fixtures', 'truth'))) {
      const keys = recordedKeys(c);
      const single = c.candidates.filter((x) => !(typeof x.index === 'string' && x.index.includes('+')));
      if (c.id.startsWith('p')) assert.equal(keys.size, single.length, `${c.id}: two different indexes share a key`);
      for (const x of single) {
        if (typeof x.index !== 'object') continue;
        const same = keys.get(mongoKey(x.index as Record<string, number>))!;
        assert.ok(Math.abs(recordedWork(c, same) - recordedWork(c, x)) <= 0.1 * recordedWork(c, x), `${c.id}: mirror images measured differently`);
      }
      const o = c.oracle.index;
      const found = typeof o === 'object' ? keys.has(mongoKey(o as Record<string, number>)) : [...keys.values()].some((x) => x.index === o);
      assert.ok(found, `${c.id}: oracle not found`);
      assert.ok(handmadeCorrect(c, c.oracle.metrics), `${c.id}: the oracle is not judged correct`);
    }
  });
});
