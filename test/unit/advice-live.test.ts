// The parts of advice-with-a-connection that need no server: the work a trial reads from an explain
// (checked against the figures the truth cases recorded for the same real plans), the predicate sets that
// are counted and their filters, the bound on sample sizes, existing PostgreSQL indexes as the advisor
// reads them, and the DDL a trial may run.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BSON, BSONRegExp } from 'mongodb';
import { existingPg } from '../../src/adapters/advise';
import type { PostgresIndexInfo } from '../../src/adapters/postgres';
import { boundedSampleSize, mongoCountSets, mongoSetFilter } from '../../src/adapters/stats';
import { emptySampleNote, mongoNumbers, planShape, type MeasuredNumbers } from '../../src/adapters/measure/figures';
import { rolledBackDdl } from '../../src/adapters/measure/pgEstimates';
import { mongoShape } from '../../src/core/advice/mongoShape';
import { loadPlan } from '../../src/core/load';
import type { Plan } from '../../src/core/model';

const plans = join(__dirname, '..', 'fixtures', 'truth-plans');

function truthPlan(caseId: string, file: string, key: 'hinted_explain' | 'natural'): Plan {
  const raw = JSON.parse(readFileSync(join(plans, caseId, file), 'utf8')) as Record<string, unknown>;
  const loaded = loadPlan(JSON.stringify(raw[key]));
  if (!loaded.ok) assert.fail(loaded.refusal);
  return loaded.plan;
}

interface MeasuredCandidate { index: unknown; keysExamined: number; docsExamined: number; nReturned: number; blockingSort: boolean }

function measured(caseId: string, index: Record<string, number>): MeasuredCandidate {
  const c = JSON.parse(readFileSync(join(plans, caseId, 'case.json'), 'utf8')) as { candidates: MeasuredCandidate[] };
  const found = c.candidates.find((x) => JSON.stringify(x.index) === JSON.stringify(index));
  assert.ok(found);
  return found;
}

function shapeOf(filter: Record<string, unknown>) {
  const r = mongoShape({ collection: 'c', filter });
  assert.ok(r.ok);
  return r.shape;
}

describe('advice with a connection: the parts without a server', () => {
  describe('work read from a MongoDB executionStats plan', () => {
    it('counts the documents entering a blocking SORT, as in the ERS plan of m02b', () => {
      const plan = truthPlan('m02b_esr_sort_range64', 'loser2_bestWithBlockingSort__e_1_r_1.json', 'hinted_explain');
      const m = measured('m02b_esr_sort_range64', { e: 1, r: 1 });
      const n = mongoNumbers(plan);
      assert.equal(n.keysExamined, m.keysExamined);
      assert.equal(n.docsExamined, m.docsExamined);
      assert.equal(n.blockingSort, true);
      assert.equal(n.sorted, m.nReturned);
      assert.equal(n.work, m.keysExamined + m.docsExamined + m.nReturned);
      assert.equal(n.plan, 'SORT > FETCH > IXSCAN {e: 1, r: 1}');
      assert.equal(n.index, 'e_1_r_1');
    });

    it('adds nothing for a plan that gives the order, as the ESR oracle of m02b', () => {
      const plan = truthPlan('m02b_esr_sort_range64', 'oracle__e_1_s_1_r_1.json', 'hinted_explain');
      const m = measured('m02b_esr_sort_range64', { e: 1, s: 1, r: 1 });
      const n = mongoNumbers(plan);
      assert.equal(n.blockingSort, false);
      assert.equal(n.sorted, 0);
      assert.equal(n.work, m.keysExamined + m.docsExamined);
    });

    it('draws a PostgreSQL plan as one line', () => {
      const plan = truthPlan('p10c1_esr_limit_range64', 'loser2_bestWithSort__none_PK_only_.json', 'natural');
      assert.equal(planShape(plan), 'Limit > Sort > Seq Scan on esr');
    });
  });

  describe('what is counted', () => {
    it('each predicate, the equalities together, each range with them, and all of them', () => {
      const sets = mongoCountSets(shapeOf({ e: 42, t: { $in: [1, 2] }, r: { $gt: 10 }, s: /^ab/ }));
      assert.deepEqual(sets.sets.map((s) => s.key).sort(), ['e', 'e+r+s+t', 'e+r+t', 'e+s+t', 'e+t', 'r', 's', 't'].sort());
      assert.equal(sets.equalityKey, 'e+t');
      assert.equal(sets.resultKey, 'e+r+s+t');
    });

    it('leaves out predicates no index bounds and values that are variables in the code', () => {
      const sets = mongoCountSets(shapeOf({ e: 42, g: { $size: 3 }, v: { $placeholder: 'userId' } }));
      assert.deepEqual(sets.sets.map((s) => s.key), ['e']);
    });

    it('gives $or branches their own sets and no query-wide equality or result', () => {
      const sets = mongoCountSets(shapeOf({ e: 42, $or: [{ a: 1 }, { b: { $gt: 2 } }] }));
      assert.ok(sets.sets.some((s) => s.key === 'a+e'));
      assert.ok(sets.sets.some((s) => s.key === 'b+e'));
      assert.equal(sets.equalityKey, undefined);
      assert.equal(sets.resultKey, undefined);
    });

    it('keeps the predicates of one $elemMatch on one element, and turns Extended JSON into BSON', () => {
      const shape = shapeOf({ country_id: 1, order_details: { $elemMatch: { product_id: 5, quantity: { $gt: 2 } } }, name: { $regex: '^ab', $options: '' }, when: { $gte: { $date: '2024-01-01T00:00:00Z' } } });
      const f = mongoSetFilter(shape.predicates);
      const clauses = f['$and'] as Record<string, unknown>[];
      assert.ok(clauses.some((c) => JSON.stringify(c) === JSON.stringify({ order_details: { $elemMatch: { product_id: 5, quantity: { $gt: 2 } } } })));
      const when = clauses.find((c) => 'when' in c)!['when'] as Record<string, unknown>;
      assert.ok(when['$gte'] instanceof Date);
      const regex = mongoSetFilter(shapeOf({ name: /^ab/i }).predicates)['name'];
      assert.ok(regex instanceof BSONRegExp);
      assert.equal(regex.pattern, '^ab');
      const or = mongoSetFilter(shapeOf({ $or: [{ r: 10 }, { r: 30 }] }).predicates);
      assert.deepEqual(BSON.EJSON.serialize(or, { relaxed: true }), { $or: [{ r: 10 }, { r: 30 }] });
    });
  });

  it('says a trial on a sample that holds no matching document shows the plans, not their work on matches', () => {
    const n = (nReturned: number, docsExamined: number): MeasuredNumbers =>
      ({ keysExamined: 0, docsExamined, nReturned, sorted: 0, blockingSort: false, work: docsExamined, plan: 'COLLSCAN' });
    assert.match(emptySampleNote(n(0, 1000), n(0, 0)), /^ The sample holds no document the query returns/);
    assert.equal(emptySampleNote(n(1, 1000), n(1, 1)), '');
    assert.equal(emptySampleNote(n(0, 1000), n(2, 2)), '', 'either side returning documents is a measurement of work on them');
  });

  it('keeps a sample under 5% of a big collection, and lets a small one be read whole', () => {
    assert.equal(boundedSampleSize(1000, 50_000), 1000);
    assert.equal(boundedSampleSize(50_000, 60_000), 50_000);
    assert.equal(boundedSampleSize(20_000, 200_000), 9_800);
    assert.equal(boundedSampleSize(20_000, 200_000, 100_000, true), 20_000);
  });

  it('reads existing PostgreSQL index columns: names, quoted names, expressions, DESC and NULLS', () => {
    const info: PostgresIndexInfo = {
      schema: 'public', table: 'users', name: 'users_mixed', method: 'btree', unique: false, primary: false, valid: true,
      definition: 'CREATE INDEX users_mixed ON public.users USING btree (tenant, "Created" DESC NULLS LAST, lower(email)) INCLUDE (name)',
      columns: [
        { expression: 'tenant', descending: false, nullsFirst: false },
        { expression: '"Created"', descending: true, nullsFirst: false },
        { expression: 'lower(email)', descending: false, nullsFirst: false },
      ],
      include: ['name'],
      sizeBytes: 8192,
    };
    assert.deepEqual(existingPg(info), {
      name: 'users_mixed', table: 'users', schema: 'public', method: 'btree',
      columns: [{ column: 'tenant' }, { column: 'Created', desc: true, nullsFirst: false }, { expression: 'lower(email)' }],
      include: ['name'],
    });
    assert.equal(existingPg({ ...info, valid: false, predicate: 'deleted_at IS NULL' }).invalid, true);
  });

  it('turns the suggested CREATE INDEX into one a transaction can run', () => {
    assert.equal(rolledBackDdl('CREATE INDEX CONCURRENTLY ON esr (a, b, c);'), 'CREATE INDEX ON esr (a, b, c)');
    assert.equal(rolledBackDdl('CREATE INDEX ON t USING gin (doc jsonb_path_ops)'), 'CREATE INDEX ON t USING gin (doc jsonb_path_ops)');
  });
});
