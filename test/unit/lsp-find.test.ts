// The query finder (src/core/query/find.ts) on the language-server fixtures and on focused cases:
// what is found, with which values and placeholders, and where, character for character.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import {
  findQueries, loadSqlParser, querySourceKind, scriptDialect, sqlRangeToSource, ScriptQueryIndex, SqlQueryIndex,
  type FoundMongoQuery, type FoundSqlQuery,
} from '../../src/core/query/find';
import { VISITOR_KEYS } from '../../src/core/query/find/visitorKeys';
import { describeQueries, languageOf, LSP_FIXTURES, type DescribedDiagnostic, type DescribedQuery } from './lsp-fixtures';
import { fuzzRandom } from '../fuzz-seed';

interface Expected {
  queries: DescribedQuery[];
  diagnostics: DescribedDiagnostic[];
}

const SOURCES = readdirSync(LSP_FIXTURES).filter((f) => !f.endsWith('.expected.json')).sort();

function find(text: string, name: string) {
  return findQueries(text, querySourceKind(languageOf(name), name), scriptDialect(languageOf(name), name));
}

function mongo(text: string, kind: 'script' | 'mongodb-playground' = 'script'): FoundMongoQuery[] {
  const r = findQueries(text, kind, 'ts');
  assert.deepEqual(r.warnings, []);
  return r.queries.filter((q): q is FoundMongoQuery => q.engine === 'mongodb');
}

function sqls(text: string): FoundSqlQuery[] {
  return findQueries(text, 'script', 'ts').queries.filter((q): q is FoundSqlQuery => q.engine === 'postgres');
}

describe('language server: finding queries', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('has fixtures to read', () => {
    assert.ok(SOURCES.length >= 5, SOURCES.join(', '));
  });

  for (const name of SOURCES) {
    it(`finds the queries of ${name} with their ranges`, () => {
      const text = readFileSync(join(LSP_FIXTURES, name), 'utf8');
      const found = find(text, name);
      const queries = describeQueries(text, found.queries.map((q) => ({ engine: q.engine, start: q.range.start, end: q.range.end })));
      const expectFile = join(LSP_FIXTURES, `${name}.expected.json`);
      assert.ok(existsSync(expectFile), `${expectFile} is missing`);
      const expected = JSON.parse(readFileSync(expectFile, 'utf8')) as Expected;
      assert.deepEqual(queries, expected.queries);
    });
  }

  it('reads driver calls through constants, options documents and cursor methods', () => {
    const text = readFileSync(join(LSP_FIXTURES, 'driver.ts'), 'utf8');
    const qs = find(text, 'driver.ts').queries as FoundMongoQuery[];
    const page = qs[0]!;
    assert.equal(page.flavour, 'driver');
    assert.equal(page.command.collection, 'orders');
    assert.equal(page.command.database, 'shop');
    assert.deepEqual(page.command.filter, { customer_id: { $placeholder: 'customerId' }, status: 'shipped' });
    assert.deepEqual(page.command.sort, { created_at: -1 }, 'the sort comes from the constant `recent`');
    assert.deepEqual(page.variableParts.sort(), ['limit', 'skip']);
    const search = qs[1]!;
    assert.deepEqual(search.command.projection, { name: 1 }, 'the driver takes options second');
    assert.equal(search.command.limit, 20);
    assert.deepEqual(search.command.filter, { name: { $regex: { $placeholder: 'name' }, $options: 'i' }, deleted: { $ne: true } });
    const agg = qs[3]!;
    assert.deepEqual(agg.command.pipeline, [{ $project: { email: '$contact.email', total: 1 } }, { $match: { email: 'ann@example.com' } }]);
    // The $match's field is located inside the constant, where it is written.
    const l = agg.locations['pipeline/1/$match/email']!;
    assert.equal(text.slice(l.key!.start, l.key!.end), 'email');
    assert.equal(text.slice(l.value.start, l.value.end), "'ann@example.com'");
    const fou = qs.find((q) => q.command.operation === 'findOneAndUpdate')!;
    assert.deepEqual(fou.command.sort, { created_at: 1 });
    assert.deepEqual(fou.command.update, { $set: { status: 'paid' } });
  });

  it('reads the shell form: projection second, getCollection, getSiblingDB, shorthand properties from constants', () => {
    const text = readFileSync(join(LSP_FIXTURES, 'playground.mongodb.js'), 'utf8');
    const qs = find(text, 'playground.mongodb.js').queries as FoundMongoQuery[];
    assert.deepEqual(qs.map((q) => q.command.collection), ['orders', 'orders', 'order items', 'customers', 'tickets']);
    assert.deepEqual(qs[2]!.command.projection, { sku: 1, _id: 0 });
    assert.equal(qs[3]!.command.database, 'crm');
    assert.deepEqual(qs[4]!.command.filter, { status: 'open', title: { $regex: 'timeout', $options: 'i' } });
    assert.equal(qs[1]!.command.skip, 5000);
    assert.ok(qs.every((q) => q.flavour === 'shell'));
  });

  it('keeps non-literal values as placeholders and never trusts a constant that is changed later', () => {
    const text = [
      'async function f(coll, x) {',
      '  const filter = { a: 1 };',
      '  filter.b = x;',
      '  const pipeline = [{ $match: { c: 1 } }];',
      '  pipeline.push({ $sort: { d: 1 } });',
      '  const fixed = { e: 2 };',
      '  const c = client.db().collection("t");',
      '  await c.find(filter).toArray();',
      '  await c.aggregate(pipeline).toArray();',
      '  await c.find({ ...fixed, f: x.y, g: `v${x}`, h: -3, i: null, j: [1, "2", true] }).toArray();',
      '}',
    ].join('\n');
    const qs = mongo(text);
    assert.equal(qs.length, 3);
    assert.deepEqual(qs[0]!.command.filter, { $placeholder: 'filter' });
    assert.deepEqual(qs[0]!.variableParts, ['filter']);
    assert.deepEqual(qs[1]!.command.pipeline, []);
    assert.deepEqual(qs[1]!.variableParts, ['pipeline']);
    assert.deepEqual(qs[2]!.command.filter, { e: 2, f: { $placeholder: 'x.y' }, g: { $placeholder: '`v${x}`' }, h: -3, i: null, j: [1, '2', true] });
    assert.equal(qs[2]!.command.hasPlaceholders, true);
  });

  it('does not take array methods or an ORM client named db for MongoDB calls', () => {
    const text = [
      "import { db } from './prisma';",
      'const items = [1, 2, 3];',
      'items.find((x) => x > 1);',
      'await db.user.findOne({ where: { id: 1 } });',
      'await db.user.deleteMany({ where: { id: 1 } });',
      "const rows = await other.collection('a').find({}).toArray();",
      'rows.find((r) => r.ok);',
    ].join('\n');
    const qs = mongo(text);
    assert.deepEqual(qs.map((q) => q.command.collection), ['a']);
  });

  it('maps SQL in templates back to the file, ${} parts to their $n (a `$` written before one with it) and escapes to the escape', () => {
    const text = 'const r = await pool.query(`SELECT *\\tFROM t WHERE a = ${id} AND b LIKE \'%\\u00e9\' AND c = $${n}`);';
    const [q] = sqls(text);
    assert.ok(q);
    assert.equal(q.sql, "SELECT *\tFROM t WHERE a = $1 AND b LIKE '%é' AND c = $2");
    const at = (s: string) => {
      const i = q.sql.indexOf(s);
      const r = sqlRangeToSource(q, i, i + s.length);
      return text.slice(r.start, r.end);
    };
    assert.equal(at('$1'), '${id}');
    assert.equal(at('$2'), '$${n}');
    assert.equal(at("'%é'"), "'%\\u00e9'");
    assert.equal(at('\t'), '\\t');
    assert.equal(at('FROM t'), 'FROM t');
    assert.deepEqual(q.params.map((p) => [p.n, p.text]), [[1, 'id'], [2, 'n']]);
  });

  it('finds SQL held in a constant, in query({ text }), and in sql`` tags, but not other strings', () => {
    const text = [
      "const q = 'SELECT 1 FROM t WHERE id = $1';",
      'await client.query(q, [1]);',
      "await client.query({ text: 'DELETE FROM t WHERE id = 2' });",
      'const s = sql`UPDATE t SET a = ${a} WHERE id = ${id}`;',
      "await client.query('LISTEN channel');",
      "router.query('select an option');",
      "const notSql = 'SELECT is a word';",
    ].join('\n');
    const found = sqls(text);
    assert.deepEqual(found.map((q) => q.sql), ['SELECT 1 FROM t WHERE id = $1', 'DELETE FROM t WHERE id = 2', 'UPDATE t SET a = $1 WHERE id = $2', 'select an option']);
    assert.deepEqual(found.map((q) => q.origin), ['string', 'string', 'tagged-template', 'string']);
    // The constant's text is where the SQL is written; the call is where the query is used.
    assert.equal(text.slice(found[0]!.textRange.start, found[0]!.textRange.end), 'SELECT 1 FROM t WHERE id = $1');
    assert.equal(text.slice(found[0]!.range.start, found[0]!.range.end), 'client.query(q, [1])');
  });

  it('splits .sql files at the parser statement locations, also after non-ASCII text', () => {
    const text = "SELECT 'é' FROM t;\n-- ü comment\nSELECT * FROM u WHERE name = 'ø';\nCREATE INDEX i ON u (name);\n";
    const r = findQueries(text, 'sql');
    assert.deepEqual(r.queries.map((q) => text.slice(q.range.start, q.range.end)), ["SELECT 'é' FROM t", "SELECT * FROM u WHERE name = 'ø'"]);
  });

  it('reads an edited file again statement by statement, with the same result as reading it whole', function () {
    // Hundreds of whole-file reads to compare against: a slow machine needs more than the suite's default.
    this.timeout(120_000);
    const base = readFileSync(join(LSP_FIXTURES, 'driver.ts'), 'utf8');
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(base);
    let text = base;
    const rnd = fuzzRandom(11);
    const inserts = ["'x'", '1', ' ', '\n', '{', '}', ';', 'status: 2, ', 'recent', '`', '(', ')', '[', '// ', 'const z = 1;\n'];
    let compared = 0;
    let partial = 0;
    for (let k = 0; k < 300; k++) {
      const pos = Math.floor(rnd() * text.length);
      const del = rnd() < 0.5 ? Math.floor(rnd() * 6) : 0;
      const next = text.slice(0, pos) + inserts[Math.floor(rnd() * inserts.length)] + text.slice(pos + del);
      index.update(next);
      if (!index.lastUpdate.full) partial++;
      const whole = findQueries(next, 'script', 'ts');
      if (whole.warnings.length === 0) {
        compared++;
        assert.deepEqual(index.result().queries, whole.queries, `after edit ${k} at ${pos}`);
        text = next;
      } else {
        // Typing went through a broken state: undo it, as an editor's next keystrokes would.
        index.update(text);
        assert.deepEqual(index.result().queries, findQueries(text, 'script', 'ts').queries, `after undoing edit ${k}`);
      }
    }
    assert.ok(compared > 50, `only ${compared} edits left the file readable`);
    assert.ok(partial > 200, `only ${partial} updates were partial`);
  });

  it('reads an edit inside a file wrapped in one statement by the statement around the edit, with the same result as reading it whole', function () {
    this.timeout(240_000);
    const suite = readFileSync(join(__dirname, '..', 'fixtures', 'incremental', 'wrapped-suite.js'), 'utf8');
    const whole = (t: string) => findQueries(t, 'script', 'js');
    // With semicolons, and without (where a line starting with `(` or `[` continues the one before).
    for (const [seed, base] of [[23, suite], [29, suite.replace(/;\n/g, '\n')]] as const) {
      assert.ok(whole(base).queries.length >= 12, 'the suite has queries to compare');
      const index = new ScriptQueryIndex('script', 'js');
      index.update(base);
      let text = base;
      const rnd = fuzzRandom(seed);
      // Edits of every kind: inside values, names, assignments (`bulk = `), pushes, declarations that shadow, brackets that break.
      const inserts = ["'x'", '1', ' ', '\n', '{', '}', ';', 'status: 2, ', 'recent', 'orders', 'const orders = 1;\n', 'bulk = null;\n', 'ops.push(1);\n',
        "template.orders = db.collection('z');\n", 'items', 'customers', '(', ')', '[0]', '\n(a)', '// ', 'x.', 'await ', '.sort({ a: 1 })'];
      let compared = 0;
      let inner = 0;
      let alone = 0;
      // Edits inside the wrapper: one that breaks `module.exports = (...) => {` makes every later edit a
      // reading of the whole statement, which the test above covers.
      const head = base.indexOf('=> {', base.indexOf('module.exports')) + 4;
      for (let k = 0; k < 400; k++) {
        const pos = head + Math.floor(rnd() * (text.length - head));
        const del = rnd() < 0.5 ? Math.floor(rnd() * 6) : 0;
        const next = text.slice(0, pos) + inserts[Math.floor(rnd() * inserts.length)] + text.slice(pos + del);
        index.update(next);
        if (index.lastUpdate.inner) inner++;
        if (index.lastUpdate.alone) alone++;
        const read = whole(next);
        if (read.warnings.length === 0) {
          compared++;
          assert.deepEqual(index.result(), read, `after edit ${k} at ${pos} (seed ${seed})`);
          text = next;
        } else {
          index.update(text);
          assert.deepEqual(index.result(), whole(text), `after undoing edit ${k} (seed ${seed})`);
        }
      }
      assert.ok(compared > 80, `only ${compared} edits left the file readable`);
      assert.ok(inner > 80, `only ${inner} edits were parsed by the statement around them`);
      assert.ok(alone > 60, `only ${alone} edits were read by the statement around them alone (seed ${seed})`);
    }
  });

  it('parses a statement inside a wrapped file alone only when what follows cannot continue it', () => {
    // Without semicolons, `async function () {}` followed by a line starting with `(` is called by it;
    // an arrow function is not. Turning the one into the other changes where the statement ends.
    const padding = Array.from({ length: 60 }, (_, i) => `  const q${i} = await db.collection('c${i}').find({ n: ${i} }).toArray()`).join('\n');
    const text = `module.exports = async (db) => {\n  const f = async () => { return db }\n  (async () => { await db.collection('a').find({ x: 1 }).toArray() })()\n${padding}\n}\n`;
    const index = new ScriptQueryIndex('script', 'js');
    index.update(text);
    const called = text.replace('async () => { return db }', 'async function () { return db }');
    index.update(called);
    assert.equal(index.lastUpdate.inner, false, 'the statement is not parsed alone');
    assert.deepEqual(index.result(), findQueries(called, 'script', 'js'));
    // Inside a query, what follows is a word: parsed alone.
    const edited = called.replace('{ n: 7 }', '{ n: 77 }');
    index.update(edited);
    assert.equal(index.lastUpdate.inner, true, 'the query\'s statement is parsed alone');
    assert.equal(index.lastUpdate.reparsed, 1);
    assert.deepEqual(index.result(), findQueries(edited, 'script', 'js'));
  });

  it('reads a statement of a wrapped file again with the whole statement around it when queries outside it read inside it', () => {
    // Each edit changes a query outside the edited statement: through a function declared around it,
    // through a builder's callback, through a name an inner parameter or declaration now hides (or no
    // longer hides). Reading only the
    // edited statement would keep those queries as they were.
    const padding = Array.from({ length: 40 }, (_, i) => `    it('t${i}', async () => { await db.collection('c${i}').find({ n: ${i} }).toArray(); });`).join('\n');
    const text = [
      'module.exports = (db, items) => {',
      '  function customers() {',
      "    return db.collection('customers');",
      '  }',
      '  const ops = [];',
      "  describe('s', () => {",
      '    before(() => {',
      "      ops.push({ deleteMany: { filter: { status: 'gone' } } });",
      '    });',
      "    it('a', async () => {",
      "      await customers().find({ name: 'ann' }).toArray();",
      "      await db.collection('orders').bulkWrite(items.map((i) => {",
      '        return { updateOne: { filter: { sku: i }, update: { $set: { seen: true } } } };',
      '      }));',
      "      await db.collection('orders').bulkWrite(ops);",
      '    });',
      padding,
      '  });',
      '};',
      '',
    ].join('\n');
    const index = new ScriptQueryIndex('script', 'js');
    index.update(text);
    let current = text;
    for (const [from, to] of [
      ["return db.collection('customers');", "return db.collection('clients');"],
      ['filter: { sku: i }', 'filter: { code: i }'],
      ['    before(() => {', '    before((ops) => {'],
      ['    before((ops) => {', '    before(() => {'],
      ["    before(() => {\n", "    before(() => {\n      const ops = [];\n"],
    ] as const) {
      assert.ok(current.includes(from), from);
      const next = current.replace(from, to);
      const whole = findQueries(next, 'script', 'js');
      assert.notDeepEqual(whole.queries, findQueries(current, 'script', 'js').queries, `${to} changes what is found`);
      index.update(next);
      assert.equal(index.lastUpdate.inner, true, `${to}: parsed by the statement around it`);
      assert.deepEqual(index.result(), whole, to);
      current = next;
    }
  });

  it('reads an edited .sql file again statement by statement, with the same result as reading it whole', function () {
    // Hundreds of whole-file reads to compare against: a slow machine needs more than the suite's default.
    this.timeout(120_000);
    let text = ['queries.sql', 'broken.sql'].map((n) => readFileSync(join(LSP_FIXTURES, n), 'utf8')).join('\n').replace('SELEC broken FROM;', '');
    const index = new SqlQueryIndex();
    index.update(text);
    const rnd = fuzzRandom(5);
    const inserts = [';', ' ', '\n', "'", 'x', '1', '-- c\n', '/*', '*/', 'SELECT 1;', '$$', '('];
    let partial = 0;
    for (let k = 0; k < 200; k++) {
      const pos = Math.floor(rnd() * text.length);
      const next = text.slice(0, pos) + inserts[Math.floor(rnd() * inserts.length)] + text.slice(pos + (rnd() < 0.4 ? 3 : 0));
      index.update(next);
      if (!index.lastUpdate.full) partial++;
      const whole = findQueries(next, 'sql');
      assert.deepEqual(index.result().queries, whole.queries, `after edit ${k} at ${pos}`);
      if (whole.warnings.length === 0) text = next;
      else {
        index.update(text);
        assert.deepEqual(index.result().queries, findQueries(text, 'sql').queries);
      }
    }
    assert.ok(partial > 60, `only ${partial} updates were partial`);
  });

  it('re-reads a statement that uses a module constant when the constant changes elsewhere', () => {
    const a = "const f = { a: 1 };\nconst other = 1;\nfunction h() { return other; }\nfunction g() { return db.collection('c').find(f); }\n";
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(a);
    index.update(a.replace('a: 1', 'a: 2'));
    assert.deepEqual((index.result().queries[0] as FoundMongoQuery).command.filter, { a: 2 });
    assert.equal(index.lastUpdate.reparsed, 2, 'the changed statement and its neighbour are parsed');
    assert.equal(index.lastUpdate.reextracted, 2, 'the changed statement and the one using the constant are read again; the neighbour came back unchanged and is kept, h is not read');
  });

  it('re-reads a statement whose fragment a module constant holds when the constant changes elsewhere', () => {
    const a = "import { sql } from 'slonik';\nconst where = sql.fragment`WHERE a = 1`;\nconst other = 1;\nfunction h() { return other; }\nfunction g(pool) { return pool.any(sql.unsafe`SELECT * FROM t ${where}`); }\n";
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(a);
    const b = a.replace('a = 1', 'b = 22');
    index.update(b);
    const q = index.result().queries[0] as FoundSqlQuery;
    assert.equal(q.sql, 'SELECT * FROM t WHERE b = 22');
    assert.deepEqual(q, findQueries(b, 'script', 'ts').queries[0], 'the same as reading the edited file whole');
    const r = sqlRangeToSource(q, q.sql.indexOf('b = 22'), q.sql.length);
    assert.equal(b.slice(r.start, r.end), 'b = 22');
  });

  it('re-reads a statement that uses a field when the statement assigning it changes elsewhere', () => {
    const a = "function Store(db) { this.coll = db.collection('sessions'); }\nconst other = 1;\nfunction h() { return other; }\nStore.prototype.touch = function (sid) { return this.coll.updateOne({ sid }, { $set: { at: 1 } }); };\n";
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(a);
    assert.equal((index.result().queries[0] as FoundMongoQuery).command.collection, 'sessions');
    index.update(a.replace("'sessions'", "'tokens'"));
    assert.equal((index.result().queries[0] as FoundMongoQuery).command.collection, 'tokens');
    assert.equal(index.lastUpdate.reextracted, 2, 'the changed statement and the statement using the field are read again, not its unchanged neighbour, not h');
  });

  it('re-reads a statement on a bare db parameter when the statement showing that db holds collections comes or goes', () => {
    const shows = "const list = (req) => { const db = req.app.db; return db.users.find({}); };\n";
    const a = "const menu = (db) => db.menu.findOne({});\nconst other = 1;\nfunction h() { return other; }\n";
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(a);
    assert.deepEqual(index.result().queries, []);
    index.update(a + shows);
    assert.deepEqual(index.result().queries.map((q) => (q as FoundMongoQuery).command.collection), ['menu', 'users']);
    assert.deepEqual(index.result().queries, findQueries(a + shows, 'script', 'ts').queries);
    // An edit that keeps the file showing it reads the bare db's statement as it was.
    index.update(a + shows.replace('find({})', 'find({ a: 1 })'));
    assert.equal(index.lastUpdate.reextracted, 1, 'the edited statement, not its unchanged neighbour, not the statement on the bare db');
    assert.deepEqual(index.result().queries.map((q) => (q as FoundMongoQuery).command.collection), ['menu', 'users']);
    index.update(a + shows.replace('req.app.db', 'req.app.sql'));
    assert.deepEqual(index.result().queries, []);
  });

  it('reads a client\'s count() as Prisma\'s while the file calls a method only Prisma has on it, and again when that call goes', () => {
    const prismaOnly = 'export const latest = ({ ctx }) => ctx.db.post.findFirst({ orderBy: { createdAt: "desc" } });\n';
    const a = 'export const total = ({ ctx }) => ctx.db.post.count();\nconst other = 1;\n';
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(a);
    assert.deepEqual(index.result().queries.map((q) => q.engine), ['mongodb']);
    index.update(a + prismaOnly);
    assert.deepEqual(index.result().queries.map((q) => (q.engine === 'postgres' ? q.sql : q.engine)), ['SELECT count(*) FROM "Post"', 'SELECT * FROM "Post" ORDER BY "createdAt" DESC LIMIT 1']);
    assert.deepEqual(index.result().queries, findQueries(a + prismaOnly, 'script', 'ts').queries);
    index.update(a);
    assert.deepEqual(index.result().queries.map((q) => q.engine), ['mongodb']);
  });

  it('keeps the other statements while one does not parse, and reads the whole file again when an unclosed template spans statements', () => {
    const a = "const one = db.orders.find({ status: 'open' });\nconst gap = 1;\nconst two = { tenant: 1 };\nconst gap2 = 2;\nconst three = db.users.find({ email: 'a' });\n";
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(a);
    assert.equal(index.result().queries.length, 2);
    // A value left out in the middle statement: its error is inside it, so the statements beyond the
    // region read again (the edited one and its neighbours) stay as they were read.
    index.update(a.replace('tenant: 1', 'tenant: '));
    assert.deepEqual(index.result().queries.map((q) => (q as FoundMongoQuery).command.collection), ['orders', 'users']);
    assert.match(index.result().warnings.join(' '), /does not parse/);
    index.update(a);
    assert.deepEqual(index.result().queries, findQueries(a, 'script', 'ts').queries);
    // A template opened in the second statement and closed in the third: the whole file reads, as from scratch.
    const spanning = a.replace('{ tenant: 1 }', '`x').replace("db.users.find({ email: 'a' })", '`');
    index.update(spanning);
    assert.deepEqual(index.result(), findQueries(spanning, 'script', 'ts'));
    assert.deepEqual(index.result().queries.map((q) => (q as FoundMongoQuery).command.collection), ['orders']);
  });

  it('walks every node type by the child keys of the parser\'s own package (the table scripts/visitor-keys.mjs writes)', () => {
    const require = createRequire(import.meta.url);
    const babel = require('@babel/types') as { VISITOR_KEYS: Record<string, string[]> };
    assert.deepEqual({ ...VISITOR_KEYS }, babel.VISITOR_KEYS, 'run node scripts/visitor-keys.mjs after upgrading @babel/parser');
    // A query under each kind of child key is found: a switch case's test, a template's expression, a JSX child.
    const text = [
      'switch (await db.orders.findOne({ a: 1 })) { case 1: break; }',
      'const s = `${await db.users.find({ b: 2 }).toArray()}`;',
      'const el = <div>{db.items.find({ c: 3 })}</div>;',
    ].join('\n');
    const found = findQueries(text, 'script', 'tsx').queries.map((q) => (q as FoundMongoQuery).command.collection);
    assert.deepEqual(found, ['orders', 'users', 'items']);
  });

  it('never throws on text that is not code', () => {
    for (const text of ['', '(((', '`${', '\u0000\uffff', 'db.', "db.c.find({a: 1}", '/* open']) {
      const r = findQueries(text, 'script', 'ts');
      assert.ok(Array.isArray(r.queries));
    }
    assert.deepEqual(findQueries('SELEC x;', 'sql').queries, []);
  });
});
