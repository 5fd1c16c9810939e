import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { evaluateShellExpression, parseOneExpression, readShellNotation, shellNumber } from '../../src/core/mongo/shellNotation';
import { findQueries, type FoundMongoQuery } from '../../src/core/query/find/index';
import type { BNode } from '../../src/core/query/find/syntax';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

function read(text: string): unknown {
  const r = readShellNotation(text);
  if (!r.ok) assert.fail(`expected to read ${JSON.stringify(text.slice(0, 80))} but got: ${r.error}`);
  return r.value;
}

function refused(text: string): string {
  const r = readShellNotation(text);
  assert.equal(r.ok, false, `expected a refusal for ${JSON.stringify(text.slice(0, 80))}`);
  const error = (r as { ok: false; error: string }).error;
  assert.match(error, /\.$/, 'the error is one sentence ending with a full stop');
  assert.doesNotMatch(error, /\n/, 'the error has no newline');
  return error;
}

function expr(text: string): BNode {
  const parsed = parseOneExpression(text);
  assert.ok('node' in parsed, `expected ${text} to parse`);
  return parsed.node;
}

describe('mongo shell notation', () => {
  describe('literals', () => {
    it('reads objects, arrays, strings, numbers, booleans and null with quoted and unquoted keys', () => {
      assert.deepEqual(read(`{ a: 1, 'b': "two", "c": [true, false, null], d: { e: -2.5 }, 7: 'seven' }`), {
        a: 1, b: 'two', c: [true, false, null], d: { e: -2.5 }, 7: 'seven',
      });
    });

    it('joins string concatenation the way mongosh wraps long strings', () => {
      assert.deepEqual(read(`{ s: 'scan [' +\n 'a] ' + "b" }`), { s: 'scan [a] b' });
    });

    it('reads a template literal without expressions as a string', () => {
      assert.deepEqual(read('{ s: `plain` }'), { s: 'plain' });
    });

    it('reads Infinity, NaN, undefined and their negatives as Extended JSON', () => {
      assert.deepEqual(read('[Infinity, -Infinity, NaN, undefined, +3]'), [
        { $numberDouble: 'Infinity' }, { $numberDouble: '-Infinity' }, { $numberDouble: 'NaN' }, { $undefined: true }, 3,
      ]);
    });

    it('reads regular expressions as $regex/$options', () => {
      assert.deepEqual(read('{ a: /^ab[c]/i, b: /x/, c: RegExp("y", "m"), d: new RegExp("z") }'), {
        a: { $regex: '^ab[c]', $options: 'i' }, b: { $regex: 'x', $options: '' }, c: { $regex: 'y', $options: 'm' }, d: { $regex: 'z', $options: '' },
      });
    });

    it('accepts a trailing semicolon and comments after the value', () => {
      assert.deepEqual(read('{ a: 1 }; // done\n/* more */'), { a: 1 });
    });

    it('keeps __proto__ an ordinary key instead of changing the prototype', () => {
      const v = read('{ __proto__: { polluted: 1 }, a: 1 }') as Record<string, unknown>;
      assert.equal(Object.getPrototypeOf(v), Object.prototype);
      assert.deepEqual(Object.keys(v), ['__proto__', 'a']);
      assert.equal((v as { polluted?: unknown }).polluted, undefined);
      assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    });
  });

  describe('BSON constructors', () => {
    it('reads ids, dates and numbers', () => {
      assert.deepEqual(
        read(`{
          id: ObjectId("5f1d7a3b2c4e5f6a7b8c9d0e"), nid: new ObjectId('5f1d7a3b2c4e5f6a7b8c9d0f'),
          d1: ISODate("2022-04-18T00:00:00.000Z"), d2: new Date("2022-04-19"), d3: new Date(0),
          l1: Long("10"), l2: NumberLong(42), l3: NumberLong("-7"), l4: NumberLong(9007199254740993), l5: Long(-3),
          i1: NumberInt(5), i2: Int32("6"), f: Double(1.5), m1: NumberDecimal("1.10"), m2: Decimal128("2.5")
        }`),
        {
          id: { $oid: '5f1d7a3b2c4e5f6a7b8c9d0e' }, nid: { $oid: '5f1d7a3b2c4e5f6a7b8c9d0f' },
          d1: { $date: '2022-04-18T00:00:00.000Z' }, d2: { $date: '2022-04-19' }, d3: { $date: '1970-01-01T00:00:00.000Z' },
          l1: { $numberLong: '10' }, l2: { $numberLong: '42' }, l3: { $numberLong: '-7' }, l4: { $numberLong: '9007199254740993' }, l5: { $numberLong: '-3' },
          i1: 5, i2: 6, f: 1.5, m1: { $numberDecimal: '1.10' }, m2: { $numberDecimal: '2.5' },
        },
      );
    });

    it('reads Timestamp in both forms, BinData, HexData, UUID, DBRef, MinKey and MaxKey', () => {
      assert.deepEqual(
        read(`[Timestamp(1637232324, 1), Timestamp({ t: 1637232325, i: 2 }), BinData(0, "AAEC"), HexData(4, "ff00"),
          UUID("0e8b1a4e-7a3c-4d3e-9d55-0c1d2e3f4a5b"), DBRef("c", 5), MinKey, MaxKey, MinKey(), MaxKey()]`),
        [
          { $timestamp: { t: 1637232324, i: 1 } }, { $timestamp: { t: 1637232325, i: 2 } },
          { $binary: { base64: 'AAEC', subType: '00' } }, { $binary: { base64: '/wA=', subType: '04' } },
          { $uuid: '0e8b1a4e-7a3c-4d3e-9d55-0c1d2e3f4a5b' }, { $ref: 'c', $id: 5 },
          { $minKey: 1 }, { $maxKey: 1 }, { $minKey: 1 }, { $maxKey: 1 },
        ],
      );
    });

    it('turns every numeric form back into a number with shellNumber', () => {
      assert.equal(shellNumber(read('Long("10")')), 10);
      assert.equal(shellNumber(read('NumberLong(0)')), 0);
      assert.equal(shellNumber(read('NumberDecimal("2.5")')), 2.5);
      assert.equal(shellNumber(read('-Infinity')), -Infinity);
      assert.equal(shellNumber(12), 12);
      assert.equal(shellNumber({ $numberInt: '3' }), 3);
      assert.equal(shellNumber('12'), undefined);
      assert.equal(shellNumber({ $numberLong: '1', extra: 1 }), undefined);
      assert.equal(shellNumber(read('ObjectId("5f1d7a3b2c4e5f6a7b8c9d0e")')), undefined);
    });

    it('refuses constructors that would need the current time or a fresh id', () => {
      assert.match(refused('{ a: new Date() }'), /current time/);
      assert.match(refused('{ a: ObjectId() }'), /new id/);
      assert.match(refused('{ a: Date() }'), /without new/);
    });

    it('refuses constructors with the wrong arguments', () => {
      assert.match(refused('NumberLong("ten")'), /not an integer/);
      assert.match(refused('BinData(300, "AA==")'), /subtype/);
      assert.match(refused('Timestamp(1)'), /1 argument where 2 are read/);
    });
  });

  describe('hostile input is refused, never run', () => {
    const hostile: [string, RegExp][] = [
      ['process.exit()', /not a known constructor/],
      ["require('fs')", /unknown function require/],
      ["constructor.constructor('return process')()", /not a known constructor/],
      ["{ a: constructor.constructor('return process')() }", /line 1, column 6/],
      ['{ get a() { return 1 } }', /getter/],
      ['{ set a(v) {} }', /setter/],
      ['{ a() {} }', /method/],
      ['{ a: `x${process.exit()}` }', /template literal/],
      ['{ a: tag`x` }', /tagged template/],
      ['{ [key]: 1 }', /computed/],
      ['{ ...other }', /spread/],
      ['{ a: () => 1 }', /function/],
      ['{ a: function () {} }', /function/],
      ['{ a: x = 1 }', /assigns/],
      ['{ a: this }', /this/],
      ['{ a: globalThis }', /name globalThis/],
      ['{ a: 1 + 2 }', /not both strings/],
      ['{ a: !0 }', /operator !/],
      ['{ a: typeof x }', /operator typeof/],
      ['{ a: new Function("return 1") }', /unknown function Function/],
      ['{ a: ObjectId.createFromTime(1) }', /not a known constructor/],
      ['{ a: (1, 2) }', /several values/],
      ['{ a: 1 } ; process.exit()', /unexpected text after the value at line 1, column 12/],
    ];
    for (const [text, why] of hostile) {
      it(`refuses ${text}`, () => {
        let exited = false;
        const exit = process.exit;
        process.exit = ((): never => {
          exited = true;
          throw new Error('process.exit was called');
        }) as typeof process.exit;
        try {
          assert.match(refused(text), why);
        } finally {
          process.exit = exit;
        }
        assert.equal(exited, false);
      });
    }

    it('refuses huge nesting without crashing', () => {
      for (const text of ['['.repeat(100000) + ']'.repeat(100000), '{a:'.repeat(20000) + '1' + '}'.repeat(20000)]) {
        assert.match(refused(text), /nested/);
      }
    });

    it('refuses nesting deeper than the reader allows even when the parser copes', () => {
      const text = '['.repeat(450) + ']'.repeat(450);
      assert.match(refused(text), /nested/);
    });

    it('reports where the text is malformed or cut short, with line and column', () => {
      assert.match(refused('{\n  a: 1,\n  b: : 2\n}'), /malformed at line 3, column 6/);
      assert.match(refused('{ a: { b: 1 }'), /ends early.*truncated/);
      assert.match(refused('   '), /empty/);
    });
  });

  describe('evaluateShellExpression', () => {
    it('reads an expression parsed elsewhere', () => {
      const r = evaluateShellExpression(expr('{ a: Long("5"), b: [1, "x"] }'));
      assert.deepEqual(r, { ok: true, value: { a: { $numberLong: '5' }, b: [1, 'x'] } });
    });

    it('refuses non-literals by default, naming where they are', () => {
      const r = evaluateShellExpression(expr('{ user: userId }'));
      assert.equal(r.ok, false);
      assert.match((r as { error: string }).error, /name userId at line 1, column 9/);
    });

    it('keeps non-literals as placeholders with their source text when asked', () => {
      const src = '{ user: userId, at: { $gt: new Date() }, f: lookup(a.b), s: { ...rest }, n: [1, x + 1] }';
      const r = evaluateShellExpression(expr(src), { placeholders: true, source: src });
      // A spread cannot stand for one value, so it stays an error even with placeholders.
      assert.equal(r.ok, false);
      const src2 = '{ user: userId, at: { $gt: new Date() }, f: lookup(a.b), n: [1, x + 1], o: ObjectId() }';
      const r2 = evaluateShellExpression(expr(src2), { placeholders: true, source: src2 });
      assert.deepEqual(r2, {
        ok: true,
        value: {
          user: { $placeholder: 'userId' }, at: { $gt: { $placeholder: 'new Date()' } }, f: { $placeholder: 'lookup(a.b)' },
          n: [1, { $placeholder: 'x + 1' }], o: { $placeholder: 'ObjectId()' },
        },
      });
    });

    it('makes a shorthand property a placeholder of its name', () => {
      const src = '{ status, n: 1 }';
      assert.deepEqual(evaluateShellExpression(expr(src), { placeholders: true, source: src }), {
        ok: true, value: { status: { $placeholder: 'status' }, n: 1 },
      });
    });
  });

  describe('one reader for shell text and code', () => {
    it('gives the query finder the values readShellNotation gives, for literals and every constructor', () => {
      const values = [
        `{ id: ObjectId("5f1d7a3b2c4e5f6a7b8c9d0e"), old: new ObjectID('5f1d7a3b2c4e5f6a7b8c9d0f') }`,
        `{ d: ISODate("2022-04-18T00:00:00.000Z"), e: new Date(0), l: NumberLong("-7"), b: 12n, m: Decimal128("2.5") }`,
        `{ re: /^ab[c]/i, r2: RegExp("y", "m"), t: Timestamp(1637232324, 1), bin: BinData(0, "AAEC"), h: HexData(4, "ff00") }`,
        `{ u: UUID("0e8b1a4e-7a3c-4d3e-9d55-0c1d2e3f4a5b"), k: [MinKey, MaxKey()], n: [Infinity, -Infinity, NaN, -2.5, +3] }`,
        `{ s: \`plain\`, x: undefined, z: null, ok: true, ref: DBRef("c", 5) }`,
      ];
      for (const text of values) {
        const [q] = findQueries(`db.orders.find(${text});`, 'script').queries as FoundMongoQuery[];
        assert.ok(q, `the finder found the query with ${text}`);
        assert.deepEqual(q.command.filter, read(text), text);
      }
    });
  });

  describe('the shell-notation files of the corpus', () => {
    const files = readdirSync(CORPUS).filter((f) => f.endsWith('.js'));
    it('has shell-notation files to read', () => assert.ok(files.length >= 7, `found ${files.length}`));
    for (const f of files) {
      it(`reads ${f} and gives the same shape as the shell would`, () => {
        const text = readFileSync(join(CORPUS, f), 'utf8');
        const v = read(text) as Record<string, unknown>;
        assert.equal(typeof v, 'object');
        const keys = Object.keys(v);
        assert.ok(keys.includes('stages') || keys.includes('queryPlanner'), `top-level keys: ${keys.join(', ')}`);
        // Every constructor in the text became an Extended JSON value: none is left as text or dropped.
        const longs = (text.match(/\b(?:NumberLong|Long)\(/g) ?? []).length;
        assert.equal((JSON.stringify(v).match(/"\$numberLong"/g) ?? []).length, longs);
      });
    }

    it('reads NumberLong stage figures as numbers', () => {
      const text = readFileSync(join(CORPUS, 'mongo-shell-agg-tpch-q3-collscan-unwind-group-sort-4.4.js'), 'utf8');
      const v = read(text) as { stages: Record<string, unknown>[] };
      const group = v.stages.find((s) => '$group' in s)!;
      assert.equal(typeof shellNumber(group.nReturned), 'number');
      assert.equal(typeof shellNumber(group.executionTimeMillisEstimate), 'number');
    });
  });
});
