import assert from 'node:assert/strict';
import { classifySelection, findQueries, findSqlStatements, inlineParameters, isDataChanging, queryAt, sourceKind, writesThroughPipeline } from '../../src/extension/queries';

describe('extension: finding queries in source files', () => {
  it('tells files apart by language and name', () => {
    assert.equal(sourceKind('javascript', '/w/orders.mongodb.js'), 'mongodb-playground');
    assert.equal(sourceKind('sql', '/w/q.sql'), 'sql');
    assert.equal(sourceKind('typescript', '/w/app.ts'), 'script');
    assert.equal(sourceKind('markdown', '/w/README.md'), 'other');
  });

  it('finds a shell call with its cursor chain and stops at toArray', () => {
    const text = `// orders\nconst r = await db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}})\n  .sort({created_at: -1})\n  .limit(10).toArray();\n`;
    const qs = findQueries(text, 'script');
    assert.equal(qs.length, 1);
    assert.equal(qs[0]!.engine, 'mongodb');
    assert.equal(qs[0]!.text, 'db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}}).sort({created_at: -1}).limit(10)');
    assert.equal(text.slice(qs[0]!.start, qs[0]!.start + 9), 'db.orders');
    assert.ok(text.slice(qs[0]!.end).startsWith('.toArray()'));
  });

  it('rewrites driver calls to getCollection and ignores calls in comments and strings', () => {
    const text = [
      `// db.fake.find({})`,
      `const s = "db.alsoFake.find({})";`,
      `const docs = await client.db('shop').collection('customers').aggregate([{ $match: { 'contact.email': e } }]).toArray();`,
    ].join('\n');
    const qs = findQueries(text, 'script');
    assert.equal(qs.length, 1);
    assert.equal(qs[0]!.text, `db.customers.aggregate([{ $match: { 'contact.email': e } }])`);
    assert.ok(text.slice(qs[0]!.start).startsWith(`client.db('shop').collection('customers')`));
  });

  it('keeps strings with brackets and regex literals inside the arguments', () => {
    const text = `db.getCollection('weird-name').find({ name: /^ab(c/i, note: ")]}" }).limit(2)`;
    const qs = findQueries(text, 'mongodb-playground');
    assert.equal(qs.length, 1);
    assert.equal(qs[0]!.text, `db.getCollection("weird-name").find({ name: /^ab(c/i, note: ")]}" }).limit(2)`);
  });

  it('splits SQL files into statements, honouring quotes, comments and dollar quotes', () => {
    const text = `-- first\nSELECT 'a;b' FROM t WHERE x = 1;\n/* c; */ UPDATE t SET v = $$x;y$$ WHERE id = 2;\nSELECT 3`;
    const qs = findSqlStatements(text);
    assert.deepEqual(qs.map((q) => q.text), [`SELECT 'a;b' FROM t WHERE x = 1`, `UPDATE t SET v = $$x;y$$ WHERE id = 2`, 'SELECT 3']);
    assert.equal(queryAt(qs, text.indexOf('SET'), text)?.text.startsWith('UPDATE'), true);
  });

  it('finds SQL passed to client.query and inlines literal parameters', () => {
    const text = `const { rows } = await pool.query(\n  'SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT $2',\n  [42, 20],\n);\nawait client.query(\`SELECT * FROM t WHERE id = \${id}\`);\nawait client.query('SELECT 1 FROM t WHERE a = $1', [someVar]);`;
    const qs = findQueries(text, 'script');
    assert.equal(qs.length, 3);
    assert.equal(qs[0]!.text, 'SELECT * FROM orders WHERE customer_id = 42 ORDER BY created_at DESC LIMIT 20');
    assert.equal(qs[0]!.problem, undefined);
    assert.match(qs[1]!.problem ?? '', /\$\{\.\.\.\}/);
    assert.match(qs[2]!.problem ?? '', /parameters/);
  });

  it('classifies a selection by what it holds', () => {
    assert.equal(classifySelection(`  "SELECT * FROM t"  `, 'script')?.text, 'SELECT * FROM t');
    assert.equal(classifySelection(`db.c.find({a: 1})`, 'script')?.engine, 'mongodb');
    assert.equal(classifySelection(`const x = 1`, 'script'), undefined);
    assert.equal(classifySelection(`select 1;`, 'sql')?.text, 'select 1');
  });

  it('recognises writes', () => {
    assert.equal(isDataChanging('UPDATE t SET a = 1'), true);
    assert.equal(isDataChanging('WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x'), true);
    assert.equal(isDataChanging(`SELECT 'update' FROM t`), false);
    assert.equal(writesThroughPipeline(`db.c.aggregate([{$match:{}}, {$out: 'x'}])`), true);
    assert.equal(writesThroughPipeline(`db.c.find({a: '$out'})`), false);
    assert.equal(inlineParameters(`SELECT '$1', $1, $2`, ["o'k", null]), `SELECT '$1', 'o''k', NULL`);
  });
});
