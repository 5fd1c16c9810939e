import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { adviseMongo } from '../../src/core/advice/mongoAdvisor';
import { mongoShape, type MongoShape } from '../../src/core/advice/mongoShape';
import { fromMongoCommand } from '../../src/core/advice/fromMongoCommand';
import { parseMongoQuery } from '../../src/core/query/mongoShell';
import type { MongoIndexSpec, MongoQueryInput, Suggestion } from '../../src/core/advice/types';

function shapeOf(q: MongoQueryInput): MongoShape {
  const r = mongoShape(q);
  assert.ok(r.ok, r.ok ? '' : r.refusal);
  return r.shape;
}

function kinds(filter: Record<string, unknown>): Record<string, string> {
  const s = shapeOf({ collection: 'c', filter });
  return Object.fromEntries(s.predicates.map((p) => [p.path, `${p.kind}:${p.detail}`]));
}

function pattern(s: Suggestion | undefined): Record<string, number> | undefined {
  return s?.index ? (s.index as MongoIndexSpec).keyPattern : undefined;
}

describe('advice: MongoDB query shapes', () => {
  it('classifies the operators that bound an index loosely as ranges, naming each', () => {
    assert.deepEqual(kinds({
      a: { $ne: 1 }, b: { $nin: [1, 2] }, c: { $exists: true }, d: { $type: 'string' }, e: { $not: { $gt: 1 } },
      f: { $gt: 1, $lt: 5 }, g: null, h: { $exists: false }, i: { $size: 2 },
    }), {
      a: 'range:$ne', b: 'range:$nin', c: 'range:$exists', d: 'range:$type', e: 'range:$not', f: 'range:$gt/$lt',
      g: 'equality:null', h: 'equality:$exists: false (null bounds)', i: 'unindexable:$size (no useful bounds)',
    });
  });

  it('tells anchored prefix regexes (tight) from unanchored and case-insensitive ones, in every notation', () => {
    const s = shapeOf({
      collection: 'c',
      filter: {
        a: { $regularExpression: { pattern: '^ab', options: '' } },
        b: { $regex: 'ab', $options: '' },
        c: /^ab/i,
        d: { $regex: '^.*x' },
        e: /^ab/m,
      },
    });
    const by = Object.fromEntries(s.predicates.map((p) => [p.path, [p.detail, p.tight]]));
    assert.deepEqual(by, {
      a: ['anchored regex', true],
      b: ['unanchored regex', false],
      c: ['case-insensitive regex', false],
      d: ['anchored regex without a literal prefix', false],
      e: ['unanchored regex', false],
    });
  });

  it('counts distinct $in values; a one-value $in is an equality; a regex inside $in is a range', () => {
    assert.deepEqual(kinds({ a: { $in: [1, 2, 2, 3] }, b: { $in: [7] }, c: { $in: [/^x/, 'y'] } }), {
      a: 'in:$in', b: 'equality:=', c: 'range:regex in $in',
    });
    assert.equal(shapeOf({ collection: 'c', filter: { a: { $in: [1, 2, 2, 3] } } }).predicates[0]!.values, 3);
  });

  it('reads $or on one field as an $in with its point count, and $or over fields as branches', () => {
    const one = shapeOf({ collection: 'c', filter: { $or: [{ r: 10 }, { r: { $in: [30, 40] } }] } });
    assert.equal(one.predicates[0]!.kind, 'in');
    assert.equal(one.predicates[0]!.values, 3);
    const two = shapeOf({ collection: 'c', filter: { e: 1, $or: [{ a: 1 }, { b: { $gt: 2 } }] } });
    assert.equal(two.orBranches.length, 2);
    assert.deepEqual(two.predicates.map((p) => p.path), ['e']);
  });

  it('expands $elemMatch on documents into dotted paths bound to one element, and on scalars into one range', () => {
    const s = shapeOf({ collection: 'c', filter: { items: { $elemMatch: { sku: 'x', qty: { $gte: 2 } } }, ratings: { $elemMatch: { $gt: 90, $lt: 95 } } } });
    const by = Object.fromEntries(s.predicates.map((p) => [p.path, [p.kind, p.elemMatch]]));
    assert.deepEqual(by, { 'items.sku': ['equality', 'items'], 'items.qty': ['range', 'items'], ratings: ['range', undefined] });
  });

  it('merges $and conditions on one path, equality winning', () => {
    const s = shapeOf({ collection: 'c', filter: { $and: [{ a: { $gt: 1 } }, { a: 5 }] } });
    assert.equal(s.predicates.length, 1);
    assert.equal(s.predicates[0]!.kind, 'equality');
  });

  it('takes the leading $match/$sort/$limit of a pipeline and stops at $group', () => {
    const s = shapeOf({ collection: 'c', pipeline: [{ $match: { a: 1 } }, { $sort: { b: -1 } }, { $limit: 5 }, { $group: { _id: '$x' } }, { $match: { z: 1 } }] });
    assert.deepEqual(s.predicates.map((p) => p.path), ['a']);
    assert.deepEqual(s.sort, [{ path: 'b', direction: -1 }]);
    assert.equal(s.limit, 5);
    assert.ok(s.notes.some((n) => /after \$group/.test(n)));
  });

  it('finds a $match hidden by a renaming $project and rewrites the pipeline to match on the original path', () => {
    const s = shapeOf({ collection: 'c', pipeline: [{ $project: { email: '$contact.email', n: { $toUpper: '$name' } } }, { $match: { email: 'x', n: 'Y' } }] });
    assert.equal(s.hiddenMatches.length, 1);
    const hm = s.hiddenMatches[0]!;
    assert.deepEqual(hm.renames, { email: 'contact.email' });
    assert.deepEqual(hm.computed, ['n']);
    assert.deepEqual(hm.rewritten, [{ $match: { 'contact.email': 'x' } }, { $project: { email: '$contact.email', n: { $toUpper: '$name' } } }, { $match: { n: 'Y' } }]);
  });

  it('refuses, in one sentence, what it cannot read', () => {
    for (const q of [{ collection: '' }, { collection: 'c', filter: 5 as unknown as Record<string, unknown> }, { collection: 'c', filter: { $placeholder: 'f' } }, { collection: 'c', operation: 'aggregate' as const }]) {
      const r = adviseMongo(q);
      assert.ok(r.refusal && /^[A-Z].*\.$/.test(r.refusal), JSON.stringify(r));
      assert.equal(r.suggestions.length, 0);
    }
  });
});

describe('advice: MongoDB candidates', () => {
  it('explodes $in lists for the sort up to 200 point combinations, placing the rest after the sort', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => i);
    const a = adviseMongo({ collection: 'c', filter: { a: { $in: list(10) }, b: { $in: list(20) } }, sort: { s: 1 }, limit: 5 });
    assert.deepEqual(Object.keys(pattern(a.suggestions[0])!), ['a', 'b', 's']);
    assert.equal(a.suggestions[0]!.rule, 'explode-in');
    assert.match(a.suggestions[0]!.expectedPlan, /SORT_MERGE over 200 IXSCANs/);
    const b = adviseMongo({ collection: 'c', filter: { a: { $in: list(15) }, b: { $in: list(16) } }, sort: { s: 1 }, limit: 5 });
    assert.deepEqual(Object.keys(pattern(b.suggestions[0])!), ['a', 's', 'b']);
    assert.ok(b.notes.some((n) => /16 values/.test(n) && /200 point combinations/.test(n)));
  });

  it('keeps sort directions as asked and drops sort fields pinned by an equality', () => {
    const a = adviseMongo({ collection: 'c', filter: { e: 1 }, sort: { e: 1, x: -1, y: 1 } });
    assert.deepEqual(pattern(a.suggestions[0]), { e: 1, x: -1, y: 1 });
    assert.match(a.suggestions[0]!.expectedPlan, /no blocking SORT/);
  });

  it('offers a covered variant when the projection names a field outside the ESR index', () => {
    const a = adviseMongo({ collection: 'c', filter: { e: 1 }, sort: { s: 1 }, projection: { _id: 0, s: 1, t: 1 } });
    assert.deepEqual(pattern(a.suggestions[0]), { e: 1, s: 1 });
    const cov = a.suggestions.find((s) => s.rule === 'covered');
    assert.deepEqual(pattern(cov), { e: 1, s: 1, t: 1 });
    assert.match(cov!.expectedPlan, /PROJECTION_COVERED/);
  });

  it('gives counts over one interval a COUNT_SCAN index', () => {
    const a = adviseMongo({ collection: 'c', operation: 'count', filter: { e: 1, r: { $gt: 2 } } });
    assert.equal(a.suggestions[0]!.rule, 'count-scan');
    assert.match(a.suggestions[0]!.expectedPlan, /^COUNT_SCAN/);
  });

  it('gives distinct the equality fields then the distinct field, read by DISTINCT_SCAN', () => {
    const a = adviseMongo({ collection: 'c', operation: 'distinct', field: 'city', filter: { country: 'FR' } });
    assert.deepEqual(pattern(a.suggestions[0]), { country: 1, city: 1 });
    assert.match(a.suggestions[0]!.expectedPlan, /DISTINCT_SCAN/);
  });

  it('advises nothing for a query with nothing to bound', () => {
    const a = adviseMongo({ collection: 'c', filter: {} });
    assert.equal(a.suggestions[0]!.action, 'none');
  });

  it('advises one index per $or branch, each with the shared conditions first', () => {
    const a = adviseMongo({ collection: 'c', filter: { t: 1, $or: [{ a: 1 }, { b: { $gt: 2 } }] } });
    const creates = a.suggestions.filter((s) => s.rule === 'or-branch');
    assert.deepEqual(creates.map(pattern), [{ t: 1, a: 1 }, { t: 1, b: 1 }]);
  });

  it('computes the ESR/ERS threshold from the equality count alone, and decides only with the range count', () => {
    const q: MongoQueryInput = { collection: 'c', filter: { e: 1, r: { $gt: 5 } }, sort: { s: 1 } };
    const partial = adviseMongo(q, { stats: { total: 1000, equality: 300 } }).suggestions[0]!.conditions[0]!;
    assert.equal(partial.threshold, 100);
    assert.equal(partial.decided, undefined);
    const decided = adviseMongo(q, { stats: { total: 1000, equality: 300, result: 20 } });
    assert.equal(decided.suggestions[0]!.rule, 'ers');
  });

  it('writes keyset pagination for skip over two sort keys as an $or after the last page', () => {
    const a = adviseMongo({ collection: 'c', filter: { e: 1 }, sort: { d: -1, _id: 1 }, skip: 100, limit: 10 });
    const rw = a.suggestions[0]!.rewrites.find((r) => r.rule === 'keyset')!;
    assert.equal(rw.text, 'db.c.find({e: 1, $or: [{d: {$lt: lastD}}, {d: lastD, _id: {$gt: last_id}}]}).sort({d: -1, _id: 1}).limit(10)');
    assert.equal(rw.caveat, undefined);
  });
});

describe('advice: MongoDB existing indexes', () => {
  const q: MongoQueryInput = { collection: 'c', filter: { e: 42, r: { $gt: 10 } }, sort: { s: 1 }, limit: 10 };

  it('keeps an existing index the ideal one is a prefix of, or its mirror image', () => {
    const keys: Record<string, number>[] = [{ e: 1, s: 1, r: 1, x: 1 }, { e: -1, s: -1, r: -1 }];
    for (const key of keys) {
      const a = adviseMongo(q, { existing: [{ name: '_id_', key: { _id: 1 } }, { name: 'ix', key }] });
      const s = a.suggestions[0]!;
      assert.equal(s.action, 'keep', JSON.stringify(key));
      assert.equal(s.keep!.name, 'ix');
      assert.equal(s.createText, undefined);
    }
  });

  it('extends an index that is a prefix of the new one, never a unique one, and states the write cost', () => {
    const a = adviseMongo(q, { existing: [{ name: '_id_', key: { _id: 1 } }, { name: 'e_1', key: { e: 1 } }, { name: 'u', key: { e: 1, s: 1 }, unique: true }] });
    const s = a.suggestions[0]!;
    assert.equal(s.action, 'create');
    assert.deepEqual(s.replaces, ['e_1']);
    assert.match(a.writeCost!, /has 3 indexes/);
    const many = adviseMongo(q, { existing: ['a', 'b', 'd', 'f', 'g'].map((f) => ({ name: `${f}_1`, key: { [f]: 1 } })) });
    assert.match(many.writeCost!, /extend an existing index/);
  });

  it('keeps an index that serves through a skip scan when the skipped field has few values', () => {
    const er: MongoQueryInput = { collection: 'c', filter: { e: 42, r: { $gt: 10 } } };
    const existing = [{ name: 'e_x_r', key: { e: 1, x: 1, r: 1 } }];
    const withStats = adviseMongo(er, { existing, stats: { total: 100_000, equality: 10_000, result: 500, distinct: { x: 3 } } });
    assert.equal(withStats.suggestions[0]!.action, 'keep');
    assert.match(withStats.suggestions[0]!.keep!.reason, /skip scan over x/);
    const without = adviseMongo(er, { existing });
    assert.equal(without.suggestions[0]!.action, 'create');
    assert.ok(without.notes.some((n) => /e_x_r could serve through a skip scan over x/.test(n)));
  });

  it('does not count a partial index whose filter the query does not imply, nor a hidden one', () => {
    const a = adviseMongo(q, { existing: [{ name: 'p', key: { e: 1, s: 1, r: 1 }, partialFilterExpression: { status: 'A' } }, { name: 'h', key: { e: 1, s: 1, r: 1 }, hidden: true }] });
    assert.equal(a.suggestions[0]!.action, 'create');
  });

  it('orders equality fields so the new index extends an existing one', () => {
    const a = adviseMongo({ collection: 'c', filter: { tenant: 7, status: 'x' }, sort: { created: -1 } }, { existing: [{ name: 'status_1', key: { status: 1 } }] });
    assert.deepEqual(pattern(a.suggestions[0]), { status: 1, tenant: 1, created: -1 });
    assert.deepEqual(a.suggestions[0]!.replaces, ['status_1']);
  });

  it('never puts two parallel arrays in one compound index', () => {
    const a = adviseMongo({ collection: 'c', filter: { tags: 'x', 'sizes.v': 3 } }, { stats: { arrays: ['tags', 'sizes'] } });
    assert.deepEqual(pattern(a.suggestions[0]), { tags: 1 });
    assert.ok(a.notes.some((n) => /parallel arrays/.test(n)));
  });

  it('reads multikey paths from existing indexes to keep array siblings apart', () => {
    const a = adviseMongo({ collection: 'o', filter: { 'd.p': 5, 'd.q': { $gte: 9 } } }, { existing: [{ name: 'd.p_1', key: { 'd.p': 1 }, multikey: true, multikeyPaths: { 'd.p': ['d'] } }] });
    assert.equal(a.suggestions[0]!.action, 'keep');
    assert.equal(a.suggestions[0]!.keep!.name, 'd.p_1');
  });
});

describe('advice: from the shell-text reader', () => {
  const truthDir = join(__dirname, '..', 'fixtures', 'truth');
  for (const id of readdirSync(truthDir).filter((d) => d.startsWith('m')).sort()) {
    it(`${id}: the query text gives the same advice as its structured form`, () => {
      const c = JSON.parse(readFileSync(join(truthDir, id, 'case.json'), 'utf8')) as { query: { text: string; structured: MongoQueryInput } };
      const read = parseMongoQuery(c.query.text);
      assert.ok(read.ok, read.ok ? '' : read.error);
      const mapped = fromMongoCommand(read.command);
      assert.ok(mapped.ok);
      const fromText = adviseMongo(mapped.query).suggestions.map((s) => [s.action, pattern(s)]);
      const fromStructured = adviseMongo(c.query.structured).suggestions.map((s) => [s.action, pattern(s)]);
      assert.deepEqual(fromText, fromStructured);
    });
  }

  it('maps writes onto their filter and findOneAnd... onto filter and sort', () => {
    const r = parseMongoQuery('db.c.findOneAndUpdate({a: 1}, {$set: {b: 2}}, {sort: {t: -1}})');
    assert.ok(r.ok);
    const m = fromMongoCommand(r.command);
    assert.ok(m.ok);
    assert.deepEqual(m.query, { collection: 'c', operation: 'update', filter: { a: 1 }, sort: { t: -1 }, limit: 1 });
  });

  it('keeps variables as unknown values: an $in of unknown length is assumed explodable and says so', () => {
    const r = parseMongoQuery('db.c.find({a: {$in: ids}}).sort({s: 1}).limit(5)', { placeholders: true });
    assert.ok(r.ok);
    const m = fromMongoCommand(r.command);
    assert.ok(m.ok);
    const a = adviseMongo(m.query);
    assert.deepEqual(pattern(a.suggestions[0]), { a: 1, s: 1 });
    assert.ok(a.suggestions[0]!.conditions.some((c) => /at most 200 values/.test(c.text)));
  });
});

describe('advice: MongoDB never throws on odd input', () => {
  it('returns advice or a refusal for arbitrary filters, sorts and pipelines', () => {
    const key = fc.constantFrom('a', 'b', 'c.d', '$or', '$and', '$in', '$gt', '$elemMatch', '$ne', '$regex', '$options', '$exists', '$nor', '$expr', '$placeholder', '$regularExpression', 'pattern', '$not', '$all', '$eq');
    const val: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, fc.integer(), fc.string(), fc.constant(null), fc.boolean(), fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(key, tie('v'), { maxKeys: 4 })),
    })).v;
    const stage = fc.dictionary(fc.constantFrom('$match', '$project', '$sort', '$limit', '$group', '$skip', '$addFields'), val, { maxKeys: 1 });
    fc.assert(fc.property(fc.dictionary(key, val, { maxKeys: 5 }), fc.dictionary(key, fc.oneof(fc.constant(1), fc.constant(-1), val), { maxKeys: 3 }),
      fc.array(stage, { maxLength: 4 }), fc.option(fc.integer()), (filter, sort, pipeline, limit) => {
        const options = { stats: { total: 100, equality: 10, result: 3, arrays: ['c'] }, existing: [{ name: 'x', key: { a: 1, b: -1 } }] };
        for (const q of [
          { collection: 'c', filter, sort, limit, skip: limit, projection: sort },
          { collection: 'c', operation: 'aggregate' as const, pipeline },
        ] as MongoQueryInput[]) {
          const a = adviseMongo(q, options);
          assert.ok(a.refusal !== undefined || a.suggestions.length > 0);
          assert.doesNotThrow(() => JSON.stringify(a));
        }
      }), { numRuns: Number(process.env['QPI_FUZZ_RUNS'] ?? 300) });
  });
});
