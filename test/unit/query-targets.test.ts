import assert from 'node:assert/strict';
import { querySourceKind } from '../../src/core/query/find/index';
import { explainWouldWrite } from '../../src/core/query/mongoServerCommand';
import { parseMongoQuery } from '../../src/core/query/mongoShell';
import { classifySelection, explainTargets, queryAt } from '../../src/core/query/targets';
import { inlineParameters, loadSqlParser, statementInfo } from '../../src/core/sql/index';

describe('query targets: what Explain and the CodeLens act on', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('tells files apart by language and name', () => {
    assert.equal(querySourceKind('javascript', '/w/orders.mongodb.js'), 'mongodb-playground');
    assert.equal(querySourceKind('sql', '/w/q.sql'), 'sql');
    assert.equal(querySourceKind('typescript', '/w/app.ts'), 'script');
    assert.equal(querySourceKind('markdown', '/w/README.md'), 'other');
  });

  it('gives a shell call with its cursor chain as shell notation, and stops at toArray', () => {
    const text = `// orders\nconst r = await db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}})\n  .sort({created_at: -1})\n  .limit(10).toArray();\n`;
    const qs = explainTargets(text, 'script');
    assert.equal(qs.length, 1);
    assert.equal(qs[0]!.engine, 'mongodb');
    assert.equal(qs[0]!.title, 'orders.find');
    assert.equal(qs[0]!.text, 'db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}}).sort({created_at: -1}).limit(10)');
    assert.equal(text.slice(qs[0]!.start, qs[0]!.start + 9), 'db.orders');
    assert.ok(text.slice(qs[0]!.end).startsWith('.toArray()'));
  });

  it('ignores calls in comments and strings, and says why a driver call with a variable cannot run', () => {
    const text = [
      `// db.fake.find({})`,
      `const s = "db.alsoFake.find({})";`,
      `const docs = await client.db('shop').collection('customers').aggregate([{ $match: { 'contact.email': e } }]).toArray();`,
    ].join('\n');
    const qs = explainTargets(text, 'script');
    assert.equal(qs.length, 1);
    assert.equal(qs[0]!.title, 'customers.aggregate');
    assert.match(qs[0]!.problem ?? '', /values from the code \(e\)/);
    assert.ok(text.slice(qs[0]!.start).startsWith(`client.db('shop').collection('customers')`));
  });

  it('keeps strings with brackets and regex literals inside the arguments', () => {
    const qs = explainTargets(String.raw`db.getCollection('weird-name').find({ name: /^ab\(c/i, note: ")]}" }).limit(2)`, 'mongodb-playground');
    assert.equal(qs.length, 1);
    assert.equal(qs[0]!.text, String.raw`db.getCollection("weird-name").find({name: /^ab\(c/i, note: ")]}"}).limit(2)`);
    const parsed = parseMongoQuery(qs[0]!.text);
    assert.ok(parsed.ok && parsed.command.collection === 'weird-name' && parsed.command.limit === 2);
  });

  it('splits SQL files into statements, honouring quotes, comments and dollar quotes', () => {
    const text = `-- first\nSELECT 'a;b' FROM t WHERE x = 1;\n/* c; */ UPDATE t SET v = $$x;y$$ WHERE id = 2;\nSELECT 3`;
    const qs = explainTargets(text, 'sql');
    assert.deepEqual(qs.map((q) => q.text), [`SELECT 'a;b' FROM t WHERE x = 1`, `UPDATE t SET v = $$x;y$$ WHERE id = 2`, 'SELECT 3']);
    assert.equal(queryAt(qs, text.indexOf('SET'), text)?.text.startsWith('UPDATE'), true);
  });

  it('finds SQL passed to client.query and inlines literal parameters', () => {
    const text = `const { rows } = await pool.query(\n  'SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT $2',\n  [42, 20],\n);\nawait client.query(\`SELECT * FROM t WHERE id = \${id}\`);\nawait client.query({ text: 'SELECT 1 FROM t WHERE a = $1', values: ['x'] });\nawait client.query('SELECT 1 FROM t WHERE a = $1', [someVar]);`;
    const qs = explainTargets(text, 'script');
    assert.equal(qs.length, 4);
    assert.equal(qs[0]!.text, 'SELECT * FROM orders WHERE customer_id = 42 ORDER BY created_at DESC LIMIT 20');
    assert.equal(qs[0]!.problem, undefined);
    assert.match(qs[1]!.problem ?? '', /takes id from the code/);
    assert.equal(qs[2]!.text, `SELECT 1 FROM t WHERE a = 'x'`);
    assert.match(qs[3]!.problem ?? '', /parameters/);
  });

  it('classifies a selection by what it holds', () => {
    assert.equal(classifySelection(`  "SELECT * FROM t"  `, 'script')?.text, 'SELECT * FROM t');
    assert.match(classifySelection('`SELECT * FROM t WHERE a = ${a}`', 'script')?.problem ?? '', /\$\{\.\.\.\}/);
    assert.equal(classifySelection(`db.c.find({a: 1})`, 'script')?.engine, 'mongodb');
    assert.equal(classifySelection(`const x = 1`, 'script'), undefined);
    assert.equal(classifySelection(`select 1;`, 'sql')?.text, 'select 1');
    assert.equal(classifySelection('db.orders.find({ country_id: 1 ', 'mongodb-playground')?.engine, 'mongodb');
  });

  it('tells writes from the parse tree, not from words in the text', () => {
    assert.deepEqual(statementInfo('UPDATE t SET a = 1'), { kind: 'UpdateStmt', verb: 'UPDATE', writes: true });
    assert.deepEqual(statementInfo('WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x'), { kind: 'SelectStmt', verb: 'DELETE', writes: true });
    assert.deepEqual(statementInfo(`SELECT 'update' FROM t`), { kind: 'SelectStmt', verb: 'SELECT', writes: false });
    assert.equal(statementInfo('SELECT * INTO t2 FROM t')?.writes, true);
    assert.equal(statementInfo('SELEC 1'), undefined);
    const out = parseMongoQuery(`db.c.aggregate([{$match:{}}, {$out: 'x'}])`);
    assert.ok(out.ok && explainWouldWrite(out.command));
    const find = parseMongoQuery(`db.c.find({a: '$out'})`);
    assert.ok(find.ok && !explainWouldWrite(find.command));
  });

  it('inlines parameters where the scanner sees them, not inside strings or comments', () => {
    assert.equal(inlineParameters(`SELECT '$1', $1, $2 -- $1`, ["o'k", null]), `SELECT '$1', 'o''k', NULL -- $1`);
    assert.equal(inlineParameters(`SELECT $1, $3`, [true]), `SELECT TRUE, $3`);
  });
});
