// The real-code truth set (bench/truth/realcode/): each repository's file names its source and commit and
// the set docs/truth.md fixed for it, each case's query is one the product's readers accept and reads only
// what the data holds, and the data is the same on every machine with the skew its specification asks for.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModule, parseSync } from 'libpg-query';
import { mongoCandidates, pgCandidates } from '../../bench/truth/candidates';
import { asGenerated, caseSeed, documentOf, pgText, readRealcode, rowsOf, uuidOf, type Gen } from '../../bench/truth/realcode';
import { parseMongoQuery } from '../../src/core/query/mongoShell';

const repos = readRealcode();

function take<T>(gen: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  for (const x of gen) {
    if (out.length === n) break;
    out.push(x);
  }
  return out;
}

describe('real-code truth set', () => {
  before(async () => {
    await loadModule();
  });

  it('every repository is in the split docs/truth.md fixed, with its commit, and each has cases', () => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'truth.md'), 'utf8');
    const split = new Map([...doc.matchAll(/^\| (tuning|checking) \| ([\w.-]+\/[\w.-]+) \| ([0-9a-f]{12}) \|/gm)].map((m) => [m[2]!, { set: m[1]!, commit: m[3]! }]));
    assert.ok(repos.length >= 4);
    for (const r of repos) {
      const fixed = split.get(r.repository);
      assert.ok(fixed, `${r.repository} is not in docs/truth.md's split`);
      assert.equal(r.set, fixed.set, r.repository);
      assert.match(r.commit, /^[0-9a-f]{40}$/);
      assert.ok(r.commit.startsWith(fixed.commit), `${r.repository}: commit ${r.commit} is not ${fixed.commit}`);
      assert.ok(r.cases.length > 0);
    }
    assert.ok(repos.some((r) => r.set === 'checking' && r.engine === 'mongodb') && repos.some((r) => r.set === 'checking' && r.engine === 'postgres'));
  });

  it('case ids and their cache keys are unique', () => {
    const ids = repos.flatMap((r) => r.cases.map((c) => c.id));
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(new Set(ids.map(caseSeed)).size, ids.length);
  });

  for (const r of repos) {
    it(`${r.repository}: each query parses and names only collections, tables and fields its data holds`, () => {
      for (const c of r.cases) {
        if (r.engine === 'mongodb') {
          const parsed = parseMongoQuery(c.query);
          assert.ok(parsed.ok, `${c.id}: ${parsed.ok ? '' : parsed.error}`);
          assert.equal(parsed.command.collection, c.collection, c.id);
          const spec = r.collections!.find((x) => x.name === c.collection);
          assert.ok(spec, `${c.id}: no data for ${c.collection}`);
          for (const f of [...(c.fields ?? []), ...(c.sort ?? []).map(([f]) => f)]) {
            assert.ok(f === '_id' || f in spec.fields, `${c.id}: ${f} is not in the data of ${c.collection}`);
            assert.ok(c.query.includes(f), `${c.id}: ${f} is not in the query`);
          }
          assert.ok(mongoCandidates(asGenerated(r, c)).length > 1, c.id);
        } else {
          assert.equal(parseSync(c.query).stmts?.length, 1, c.id);
          for (const t of c.tables ?? []) {
            const spec = r.tables!.find((x) => x.name === t.table);
            assert.ok(spec, `${c.id}: no data for ${t.table}`);
            for (const col of [...t.columns, ...(t.sort ?? []).map(([col]) => col), ...(t.jsonb ?? [])]) {
              assert.ok(spec.columns.some((x) => x.name === col), `${c.id}: ${t.table}.${col} is not in its data`);
              assert.ok(c.query.includes(col), `${c.id}: ${col} is not in the query`);
            }
          }
          // A name the schema spells in capitals is quoted in the candidates, as the query writes it.
          for (const ddl of pgCandidates(asGenerated(r, c)).slice(1)) assert.equal(parseSync(ddl).stmts?.length, 1, ddl);
        }
      }
    });

    it(`${r.repository}: the data is the same on every run, and every column's text is what PostgreSQL reads`, () => {
      for (const spec of [...(r.collections ?? []).map((x) => ({ seed: x.seed, fields: x.fields })), ...(r.tables ?? []).map((t) => ({ seed: t.seed, fields: Object.fromEntries(t.columns.map((x) => [x.name, x.gen])) }))]) {
        const a = take(rowsOf(spec.seed, 1000, spec.fields), 200).map(documentOf);
        const b = take(rowsOf(spec.seed, 1000, spec.fields), 200).map(documentOf);
        assert.deepEqual(a, b);
      }
      for (const t of r.tables ?? []) {
        const row = take(rowsOf(t.seed, t.rows, Object.fromEntries(t.columns.map((x) => [x.name, x.gen]))), 1)[0]!;
        // Every value goes in as text cast to its column's type: the cast must parse.
        for (const c of t.columns) {
          const text = pgText(row[c.name]);
          if (text !== null) assert.equal(parseSync(`SELECT ${`'${text.replace(/'/g, "''")}'`}::${c.type}`).stmts?.length, 1, `${t.name}.${c.name}`);
        }
      }
    });
  }

  it('draws the skew, correlation, nulls and missing fields the specifications ask for', () => {
    const fields: Record<string, Gen> = {
      org: { zipf: 100, s: 1.1, prefix: 'o' },
      user: { within: 'org', zipf: 10, prefix: 'u' },
      created: { seq: 1_000_000, step: 1000, date: true },
      seen: { copy: 'created', plus: [0, 500] },
      flag: { phases: [{ until: 0.5, gen: { oneOf: [true] } }, { until: 1, gen: { oneOf: [false] } }] },
      'a.b': { uniform: [1, 3], missing: 0.3 },
      note: { letters: 4, nulls: 0.2 },
      id: { seq: 7, uuid: true },
    };
    const rows = take(rowsOf(9, 10_000, fields), 10_000);
    const top = rows.filter((x) => x.org === 'o0').length / rows.length;
    assert.ok(top > 0.15 && top < 0.3, `the most frequent of 100 Zipf(1.1) values holds ${top}`);
    for (const [i, x] of rows.entries()) {
      assert.ok(String(x.user).startsWith(`${String(x.org)}:u`));
      const d = (x.seen as Date).getTime() - (x.created as Date).getTime();
      assert.ok(d >= 0 && d <= 500);
      assert.equal(x.flag, i < 5000);
    }
    const docs = rows.map(documentOf);
    const missing = docs.filter((d) => d.a === undefined).length / docs.length;
    assert.ok(missing > 0.25 && missing < 0.35, `missing ${missing}`);
    assert.ok(docs.every((d) => d.a === undefined || [1, 2, 3].includes((d.a as { b: number }).b)));
    const nulls = rows.filter((x) => x.note === null).length / rows.length;
    assert.ok(nulls > 0.15 && nulls < 0.25, `nulls ${nulls}`);
    assert.equal(rows[0]!.id, uuidOf(7));
    assert.equal(pgText(['a', 'b"c']), '{"a","b\\"c"}');
    assert.equal(pgText(new Date(0)), '1970-01-01T00:00:00.000Z');
    assert.equal(pgText({ k: 1 }), '{"k":1}');
  });
});
