// Placeholders for exports: literals go, structure stays, on real corpus plans of both engines.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPlan } from '../../src/core/index';
import type { Plan } from '../../src/core/model';
import { redactInterval, redactMongoValue, redactPlan, redactSql } from '../../webview/redact';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

function plan(name: string): Plan {
  const r = loadPlan(readFileSync(join(CORPUS, name), 'utf8'));
  if (!r.ok) throw new Error(r.refusal);
  return r.plan;
}

describe('export placeholders', () => {
  it('replaces SQL literals and keeps identifiers, operators, casts and parameters', () => {
    assert.equal(
      redactSql("((rel_users_exams.exam_id = 1) AND ((rel_users_exams.user_username)::text = 'nicolas1'::text))"),
      '((rel_users_exams.exam_id = ?) AND ((rel_users_exams.user_username)::text = ?::text))',
    );
    assert.equal(redactSql('(t1.a > 2.5e3) AND (b = $1) AND ("Col 9" <> E\'it\\\'s\')'), '(t1.a > ?) AND (b = $1) AND ("Col 9" <> ?)');
    assert.equal(redactSql("(x = ANY ('{1,2,3}'::integer[]))"), '(x = ANY (?::integer[]))');
    assert.equal(redactSql('sum(t2.v) OVER w1'), 'sum(t2.v) OVER w1');
  });

  it('replaces bound values and keeps unbounded ends', () => {
    assert.equal(redactInterval('[33, 40]'), '[?, ?]');
    assert.equal(redactInterval('[MinKey, MaxKey]'), '[MinKey, MaxKey]');
    assert.equal(redactInterval('("a, b", inf.0]'), '(?, inf.0]');
    assert.equal(redactInterval('[new Date(1383732013000), new Date(9223372036854775807)]'), '[?, ?]');
  });

  it('replaces filter values and keeps fields, operators and $field references', () => {
    assert.deepEqual(redactMongoValue({ age: { $gt: 30 }, name: 'x', tags: { $in: ['a', 'b'] }, $expr: { $eq: ['$a', '$b'] }, f: { $exists: true } }), {
      age: { $gt: '?' },
      name: '?',
      tags: { $in: ['?', '?'] },
      $expr: { $eq: ['$a', '$b'] },
      f: { $exists: true },
    });
  });

  it('leaves no filter literal in a PostgreSQL plan and keeps its shape', () => {
    const p = plan('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json');
    const before = JSON.stringify(p);
    const r = redactPlan(p);
    const text = JSON.stringify(r);
    assert.ok(before.includes('nicolas1'));
    assert.ok(!text.includes('nicolas1'));
    assert.equal(JSON.stringify(p), before, 'the original was changed');
    assert.deepEqual(r.nodes.map((n) => n.kind), p.nodes.map((n) => n.kind));
    assert.deepEqual(r.nodes.map((n) => n.metrics), p.nodes.map((n) => n.metrics));
    assert.ok(text.includes('rel_users_exams'));
  });

  it('leaves no bound or filter value in a MongoDB plan', () => {
    const p = plan('mongo-find-ixscan-fetch-range-3.2.json');
    const r = redactPlan(p);
    const text = JSON.stringify(r);
    assert.ok(JSON.stringify(p).includes('[33, 40]'));
    assert.ok(!text.includes('33, 40'));
    assert.ok(text.includes('"age"'));
    for (const n of r.nodes) if (n.details.indexBounds) assert.deepEqual(Object.keys(n.details.indexBounds), Object.keys(p.nodes[n.id]!.details.indexBounds!));
  });
});
