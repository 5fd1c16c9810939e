import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModule, parseSync } from 'libpg-query';
import { advisePostgres } from '../../src/core/advice/pgAdvisor';
import { OTHER_DATABASE, parsePostgresQuery, type PgShape } from '../../src/core/advice/pgShape';
import type { PgIndexSpec, Suggestion } from '../../src/core/advice/types';

async function shapeOf(sql: string): Promise<PgShape> {
  const r = await parsePostgresQuery(sql);
  assert.ok(r.ok, r.ok ? '' : r.refusal);
  return r.shapes[0]!;
}

function cols(s: Suggestion | undefined): string {
  const spec = s?.index as PgIndexSpec | undefined;
  return spec ? `${spec.table}(${spec.keys.map((k) => `${k.column}${k.desc ? ' DESC' : ''}`).join(', ')})` : '';
}

/** A parse tree without positions, to compare two SQL texts by meaning. */
function tree(sql: string): unknown {
  return JSON.parse(JSON.stringify(parseSync(sql)), (k, v) => (k === 'location' || k === 'stmt_len' || k === 'stmt_location' ? undefined : v));
}

const truth = (id: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'truth', id, 'case.json'), 'utf8')) as {
  query: { structured: { sql: string }; prepared: Record<string, number> | null };
};

describe('advice: PostgreSQL shapes (libpg-query)', () => {
  before(() => loadModule());

  it("says a statement with MySQL's backquoted names is written for another database, and other errors are the parser's", async () => {
    const mysql = await parsePostgresQuery('DELETE FROM `roles` WHERE name="USER"');
    assert.deepEqual(mysql, { ok: false, refusal: OTHER_DATABASE });
    const tsql = await parsePostgresQuery('ALTER TABLE [dbo].[jackson_store] ADD [namespace] varchar(64) NULL');
    assert.equal(!tsql.ok ? tsql.refusal : '', 'The SQL is written for SQL Server (`[bracketed]` names), which PostgreSQL does not read, so it is not advised here.');
    // A subscript in a statement that does not parse is not SQL Server's quoting.
    const subscript = await parsePostgresQuery('SELECT tags[idx] FROM posts WHERE');
    assert.match(!subscript.ok ? subscript.refusal : '', /^The SQL does not parse/);
    const broken = await parsePostgresQuery('SELECT * FROM orders WHERE');
    assert.equal(broken.ok, false);
    assert.match(!broken.ok ? broken.refusal : '', /^The SQL does not parse: syntax error/);
  });

  it('classifies WHERE conjuncts as PostgreSQL indexes see them', async () => {
    const s = await shapeOf(`SELECT * FROM t WHERE a = 1 AND b IN (1, 2, 3) AND c = ANY(ARRAY[4, 5]) AND d = ANY($1::int[])
      AND e LIKE 'ab%' AND f LIKE '%ab' AND g IS NULL AND h IS NOT NULL AND i <> 3 AND j BETWEEN 1 AND 9
      AND lower(k) = 'x' AND m @> '{"a": 1}' AND n ILIKE 'a%' AND (p = 1 OR p = 2)`);
    const by = Object.fromEntries(s.predicates.map((p) => [p.column, `${p.kind}:${p.detail}${p.values !== undefined ? `:${p.values}` : ''}`]));
    assert.deepEqual(by, {
      a: 'equality:=', b: 'in:IN:3', c: 'in:= ANY:2', d: 'in:= ANY', e: 'range:LIKE prefix',
      f: "unindexable:LIKE '%...' (a B-tree cannot seek it; a pg_trgm GIN index can)", g: 'equality:IS NULL', h: 'range:IS NOT NULL',
      i: 'unindexable:<> (a B-tree cannot seek a "not equal")', j: 'range:BETWEEN', 'lower(k)': 'equality:=', m: 'gin:@>',
      n: 'unindexable:ILIKE (an index on lower(column) with LIKE, or pg_trgm)', p: 'in:OR of =:2',
    });
    assert.equal(s.predicates.find((p) => p.column === 'd')!.arrayParamText, '$1::int[]');
    assert.equal(s.predicates.find((p) => p.column === 'lower(k)')!.expression, true);
  });

  it('reads ORDER BY directions and NULLS, LIMIT and OFFSET, and the columns read', async () => {
    const s = await shapeOf('SELECT id, total FROM orders WHERE customer_id = $1 ORDER BY created_at DESC NULLS LAST, id LIMIT 20 OFFSET 40');
    assert.deepEqual(s.orderBy.map((o) => [o.column, o.desc, o.nullsFirst, o.explicitNulls]), [['created_at', true, false, true], ['id', false, false, false]]);
    assert.equal(s.limit, 20);
    assert.equal(s.offset, 40);
    assert.deepEqual(new Set(s.referenced['orders']), new Set(['id', 'total', 'customer_id', 'created_at']));
    assert.equal(s.maxParam, 1);
  });

  it('finds join keys of JOIN ... ON, USING, EXISTS and IN (subquery), with the subquery sides marked', async () => {
    const s = await shapeOf(`SELECT o.* FROM orders o JOIN customers c ON c.id = o.customer_id
      WHERE c.country = 'FR' AND o.id IN (SELECT order_id FROM lines l WHERE l.sku = 'x')
      AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.order_id = o.id)`);
    assert.deepEqual(s.tables.map((t) => `${t.key}:${t.role}`), ['o:from', 'c:from', 'l:semi', 'r:anti']);
    const keys = s.joins.map((j) => `${j.kind} ${j.table}.${j.column}=${j.otherTable}.${j.otherColumn}`);
    for (const k of ['inner c.id=o.customer_id', 'semi l.order_id=o.id', 'anti r.order_id=o.id']) assert.ok(keys.includes(k), `${k} in ${keys.join(', ')}`);
  });

  it('keeps string positions right when the text has multi-byte characters', async () => {
    const s = await shapeOf("SELECT * FROM t WHERE name = 'éèà' AND a = ANY('{1,2}') ORDER BY b LIMIT 5");
    assert.deepEqual(s.clauses.conjuncts!.map((c) => s.sql.slice(c.start, c.end)), ["name = 'éèà'", "a = ANY('{1,2}')"]);
  });

  it('refuses what it cannot advise in one sentence', async () => {
    for (const sql of ['SELEC * FROM t', 'CREATE TABLE t (a int)', '   ', 'INSERT INTO t VALUES (1)']) {
      const a = await advisePostgres(sql);
      assert.ok(a.refusal && /^[A-Z].*\.$/.test(a.refusal), `${sql}: ${a.refusal}`);
      assert.equal(a.suggestions.length, 0);
    }
  });
});

describe('advice: PostgreSQL candidates', () => {
  it('orders keys E, S, R with ORDER BY directions and NULLS in the DDL', async () => {
    const a = await advisePostgres("SELECT * FROM orders WHERE status = 'paid' AND total > 100 ORDER BY created_at DESC NULLS LAST LIMIT 10");
    assert.equal(a.suggestions[0]!.createText, 'CREATE INDEX CONCURRENTLY ON orders (status, created_at DESC NULLS LAST, total);');
    assert.equal(a.suggestions[1]!.rule, 'ers');
  });

  it('indexes the expression when a function wraps the column, and uses GIN for jsonb containment', async () => {
    const a = await advisePostgres("SELECT id FROM users WHERE lower(email) = 'a@b.c'");
    assert.equal(a.suggestions[0]!.rule, 'expression');
    assert.equal(a.suggestions[0]!.createText, 'CREATE INDEX CONCURRENTLY ON users ((lower(email)));');
    const g = await advisePostgres(`SELECT * FROM events WHERE payload @> '{"type": "click"}'`);
    assert.equal(g.suggestions[0]!.rule, 'gin');
    assert.equal(g.suggestions[0]!.createText, 'CREATE INDEX CONCURRENTLY ON events USING gin (payload);');
    assert.match(g.suggestions[0]!.tradeOff, /jsonb_path_ops/);
  });

  it('quotes a column named by a word PostgreSQL reserves, as the finder does when it writes the statement', async () => {
    const a = await advisePostgres('SELECT id FROM shelves WHERE "left" = 3 AND "natural" = true');
    assert.equal(a.suggestions[0]!.createText, 'CREATE INDEX CONCURRENTLY ON shelves ("left", "natural");');
  });

  it('adds INCLUDE columns for an index-only scan when the query reads a few more columns', async () => {
    const a = await advisePostgres('SELECT total FROM orders WHERE customer_id = 7 ORDER BY created_at');
    const inc = a.suggestions.find((s) => s.rule === 'index-only')!;
    assert.equal(inc.createText, 'CREATE INDEX CONCURRENTLY ON orders (customer_id, created_at) INCLUDE (total);');
    assert.match(inc.expectedPlan, /Index Only Scan/);
  });

  it('advises the probed side of a join on its filter then the join key', async () => {
    const a = await advisePostgres("SELECT o.* FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'FR' ORDER BY o.created_at DESC LIMIT 10");
    // The walk in created_at order first (it can stop after 10 rows), then the many side probed per customer.
    assert.deepEqual(a.suggestions.map(cols), ['orders(created_at DESC)', 'orders(customer_id)', 'customers(country, id)']);
    assert.equal(a.suggestions[1]!.rule, 'join-key');
  });

  it('in a many-to-one join whose one side is filtered, leads with the many side\'s filters then its join column', async () => {
    const join = await advisePostgres("SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.tenant = 7 AND o.status = 'paid'");
    assert.equal(cols(join.suggestions[0]), 'orders(status, customer_id)');
    assert.equal(join.suggestions[0]!.rule, 'join-key');
    const exists = await advisePostgres("SELECT c.* FROM customers c WHERE c.country = 'FR' AND EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.region = 3)");
    assert.equal(cols(exists.suggestions[0]), 'orders(region, customer_id)');
    // Without a filter on the one side nothing drives from it: the many side's own filter leads.
    const unfiltered = await advisePostgres("SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid'");
    assert.equal(cols(unfiltered.suggestions[0]), 'orders(status)');
  });

  it('in a join, puts the table an existing index does not serve first and keeps the served one after it', async () => {
    const sql = "SELECT o.* FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'FR' ORDER BY o.created_at DESC LIMIT 10";
    const existing = [{ name: 'orders_created', table: 'orders', columns: [{ column: 'created_at', desc: true }] }];
    const a = await advisePostgres(sql, { existing });
    assert.deepEqual(a.suggestions.map((s) => `${s.action} ${cols(s)}`), ['create customers(country, id)', 'keep orders(created_at DESC)']);
    // With both tables served, nothing moves: the driving table's keep stays first.
    const both = await advisePostgres(sql, { existing: [...existing, { name: 'customers_country_id', table: 'customers', columns: [{ column: 'country' }, { column: 'id' }] }] });
    assert.deepEqual(both.suggestions.map((s) => `${s.action} ${cols(s)}`), ['keep orders(created_at DESC)', 'keep customers(country, id)']);
  });

  it('advises the query a cursor is declared for', async () => {
    const a = await advisePostgres('DECLARE batch NO SCROLL CURSOR WITH HOLD FOR SELECT id, total FROM invoices WHERE shop_id = $1 ORDER BY issued_at');
    assert.equal(a.refusal, undefined);
    assert.equal(cols(a.suggestions[0]), 'invoices(shop_id, issued_at)');
  });

  it('advises an UPDATE on its WHERE', async () => {
    const a = await advisePostgres("UPDATE accounts SET balance = 0 WHERE owner = 'x' AND closed_at < now()");
    assert.equal(cols(a.suggestions[0]), 'accounts(owner, closed_at)');
  });

  it('advises the subqueries of a select list, of a SELECT without FROM, of VALUES and of SET on their own', async () => {
    const cases: [string, string[]][] = [
      ['SELECT EXISTS (SELECT 1 FROM edges WHERE journey_id = $1 AND active = true) AS has_edges', ['edges(journey_id, active)']],
      ['SELECT COALESCE((SELECT enabled FROM prefs WHERE user_id = $1), true) AS enabled', ['prefs(user_id)']],
      ["SELECT CASE WHEN $1::boolean THEN (SELECT count(*) FROM customers WHERE status = 'Lead') ELSE 0 END AS leads", ['customers(status)']],
      // Insert if not there yet: the NOT EXISTS probe is the read.
      ['INSERT INTO followups (customer_id, note) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM followups WHERE customer_id = $1)', ['followups(customer_id)']],
      ['INSERT INTO line_items (order_id, sku) VALUES ((SELECT id FROM orders WHERE ref = $1), $2)', ['orders(ref)']],
      ['UPDATE carts SET total = (SELECT sum(price) FROM cart_items WHERE cart_id = $1) WHERE id = $1', ['cart_items(cart_id)', 'carts(id)']],
      // A correlated subquery of a select list, beside its FROM: advised on its own, the outer column one value per row.
      ['SELECT u.id, (SELECT count(*) FROM posts p WHERE p.author_id = u.id AND p.draft = false) AS n FROM users u WHERE u.team = $1', ['users(team)', 'posts(author_id, draft)']],
    ];
    for (const [sql, want] of cases) {
      const a = await advisePostgres(sql);
      assert.equal(a.refusal, undefined, `${sql}: ${a.refusal}`);
      assert.deepEqual([...new Set(a.suggestions.filter((s) => s.action === 'create').map(cols))].sort(), [...want].sort(), sql);
    }
    // Still nothing to read: a SELECT of no table, an INSERT of plain values.
    for (const sql of ['SELECT pg_advisory_xact_lock($1)', "SELECT nextval('seq') AS value", 'INSERT INTO t (a) VALUES ($1)']) {
      assert.equal((await parsePostgresQuery(sql)).ok, false, sql);
    }
  });

  it('decides ESR or ERS with row counts', async () => {
    const sql = 'SELECT * FROM esr WHERE a = 42 AND c > 132 ORDER BY b LIMIT 10';
    const selective = await advisePostgres(sql, { stats: { tables: { esr: { rows: 200_000, equality: 20_000, result: 100 } } } });
    assert.equal(cols(selective.suggestions[0]), 'esr(a, c, b)');
    const broad = await advisePostgres(sql, { stats: { tables: { esr: { rows: 200_000, equality: 20_000, result: 12_800 } } } });
    assert.equal(cols(broad.suggestions[0]), 'esr(a, b, c)');
  });

  it('with page counts, keeps the index for a shallow OFFSET and requires keyset for a deep one', async () => {
    const sql = 'SELECT * FROM esr WHERE a = 42 ORDER BY b LIMIT 20 OFFSET 10000';
    const deep = await advisePostgres(sql, { stats: { tables: { esr: { pages: 1082 } } } });
    assert.equal(deep.suggestions[0]!.servesQueryAsWritten, false);
    const shallow = await advisePostgres(sql.replace('10000', '100'), { stats: { tables: { esr: { pages: 1082 } } } });
    assert.equal(shallow.suggestions[0]!.servesQueryAsWritten, true);
    assert.equal(shallow.suggestions[0]!.rewrites[0]!.rule, 'keyset');
  });
});

describe('advice: PostgreSQL rewrites', () => {
  it('p10d1: the UNION ALL rewrite is the query measured in p10d2', async () => {
    const a = await advisePostgres(truth('p10d1_any_sort_limit').query.structured.sql);
    const rw = a.suggestions.flatMap((s) => s.rewrites).find((r) => r.rule === 'union-all')!;
    assert.deepEqual(tree(rw.text), tree(truth('p10d2_union_all_rewrite').query.structured.sql));
  });

  it('p10e1: the keyset rewrite is the query measured in p10e2 once the last b is bound', async () => {
    const a = await advisePostgres(truth('p10e1_offset_pagination').query.structured.sql);
    const rw = a.suggestions[0]!.rewrites.find((r) => r.rule === 'keyset')!;
    const e2 = truth('p10e2_keyset_pagination');
    assert.deepEqual(tree(rw.text.replace('$1', String(e2.query.prepared!['lastB']))), tree(e2.query.structured.sql));
  });

  it('numbers keyset parameters after the existing ones and compares rows for a multi-column order', async () => {
    const a = await advisePostgres('SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET $2');
    const rw = a.suggestions[0]!.rewrites.find((r) => r.rule === 'keyset')!;
    // The depth of OFFSET $2 is unknown: the index serves as written, and keyset is offered beside it.
    assert.equal(a.suggestions[0]!.servesQueryAsWritten, true);
    assert.equal(rw.text, 'SELECT * FROM orders WHERE customer_id = $1 AND (created_at, id) < ($3, $4) ORDER BY created_at DESC, id DESC LIMIT 20');
    const b = await advisePostgres('SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET 400');
    const kw = b.suggestions[0]!.rewrites.find((r) => r.rule === 'keyset')!;
    assert.equal(kw.text, 'SELECT * FROM orders WHERE customer_id = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT 20');
    assert.doesNotThrow(() => parseSync(kw.text));
  });

  it('uses a LATERAL join over unnest() for an array parameter', async () => {
    const a = await advisePostgres('SELECT * FROM esr WHERE a = ANY($1::int[]) ORDER BY b LIMIT 10');
    const rw = a.suggestions.flatMap((s) => s.rewrites).find((r) => r.rule === 'lateral-unnest')!;
    assert.ok(rw, a.suggestions.map((s) => s.rule).join(', '));
    assert.equal(rw.text, 'SELECT t.* FROM unnest($1::int[]) AS v(val)\nCROSS JOIN LATERAL (SELECT * FROM esr WHERE a = v.val ORDER BY b LIMIT 10) AS t\nORDER BY t.b LIMIT 10');
    assert.doesNotThrow(() => parseSync(rw.text));
  });
});

describe('advice: PostgreSQL existing indexes', () => {
  const sql = 'SELECT * FROM esr WHERE a = 42 AND c > 10 ORDER BY b LIMIT 10';

  it('keeps an index the ideal one is a prefix of, or its full reverse', async () => {
    for (const columns of [[{ column: 'a' }, { column: 'b' }, { column: 'c' }, { column: 'd' }], [{ column: 'a', desc: true }, { column: 'b', desc: true }, { column: 'c', desc: true }]]) {
      const a = await advisePostgres(sql, { existing: [{ name: 'esr_pkey', table: 'esr', columns: [{ column: 'id' }], primary: true, unique: true }, { name: 'ix', table: 'esr', columns }] });
      assert.equal(a.suggestions[0]!.action, 'keep', JSON.stringify(columns));
      assert.equal(a.suggestions[0]!.keep!.name, 'ix');
    }
  });

  it('does not keep an index whose NULLS order does not match, and replaces a plain prefix but never a primary key', async () => {
    const a = await advisePostgres('SELECT * FROM t WHERE a = 1 ORDER BY b DESC NULLS LAST LIMIT 5', { existing: [{ name: 't_a_b', table: 't', columns: [{ column: 'a' }, { column: 'b', desc: true }] }] });
    assert.equal(a.suggestions[0]!.action, 'create');
    // An index led by the primary key adds nothing (one row per key): none is suggested, so none replaces it.
    const pk = await advisePostgres(sql, { existing: [{ name: 'esr_pkey', table: 'esr', columns: [{ column: 'a' }], primary: true, unique: true }] });
    assert.equal(pk.suggestions.filter((s) => s.action === 'create').length, 0);
    assert.match(pk.notes.join(' '), /starts with the primary key \(a\)/);
    const b = await advisePostgres(sql, { existing: [{ name: 'esr_pkey', table: 'esr', columns: [{ column: 'id' }], primary: true, unique: true }, { name: 'esr_a_b', table: 'esr', columns: [{ column: 'a' }, { column: 'b' }] }] });
    assert.equal(b.suggestions[0]!.action, 'create');
    assert.deepEqual(b.suggestions[0]!.replaces, ['esr_a_b']);
    assert.match(b.writeCost!, /esr has 2 indexes/);
    assert.match(b.writeCost!, /HOT update/);
  });

  it('orders equality columns so the new index extends an existing one', async () => {
    const a = await advisePostgres("SELECT * FROM t WHERE tenant = 7 AND status = 'x' ORDER BY created DESC LIMIT 5", { existing: [{ name: 't_status', table: 't', columns: [{ column: 'status' }] }] });
    assert.equal(cols(a.suggestions[0]), 't(status, tenant, created DESC)');
    assert.deepEqual(a.suggestions[0]!.replaces, ['t_status']);
  });

  it('keeps an existing index with the equality columns in another order', async () => {
    const a = await advisePostgres('SELECT * FROM t WHERE x = 1 AND y = 2', { existing: [{ name: 't_y_x', table: 't', columns: [{ column: 'y' }, { column: 'x' }] }] });
    assert.equal(a.suggestions[0]!.action, 'keep');
  });
});

describe('advice: PostgreSQL never throws on odd input', () => {
  it('returns advice or a refusal for generated statements and for noise', async () => {
    const pred = fc.constantFrom('a = 1', 't.b > $1', 'c IN (1, 2)', "d LIKE 'x%'", 'e = ANY($2)', 'f IS NULL', "lower(g) = 'q'", '(h = 1 OR i = 2)',
      "j @> '{}'", 'NOT k', 'EXISTS (SELECT 1 FROM u WHERE u.x = t.y AND u.z = 3)', 't.m IN (SELECT n FROM v WHERE w = 1)', 'a BETWEEN 1 AND 2', "o <> 'p'", 'q = r');
    const from = fc.constantFrom('t', 't JOIN s ON s.id = t.sid', 't, s', 't LEFT JOIN s USING (k)', '(SELECT * FROM t) t', 't AS x');
    const order = fc.constantFrom('', ' ORDER BY a', ' ORDER BY t.b DESC NULLS LAST, c', ' ORDER BY 1', ' ORDER BY lower(g)', ' ORDER BY s.z');
    const tail = fc.constantFrom('', ' LIMIT 10', ' LIMIT $3 OFFSET 100', ' OFFSET 5000', ' LIMIT ALL', ' FOR UPDATE');
    const stmt = fc.tuple(fc.constantFrom('SELECT *', 'SELECT a, b', 'UPDATE t SET a = 1', 'DELETE', 'WITH c AS (SELECT 1) SELECT *'), from, fc.array(pred, { maxLength: 4 }), order, tail)
      .map(([head, f, ps, o, l]) => {
        const where = ps.length > 0 ? ` WHERE ${ps.join(' AND ')}` : '';
        if (head.startsWith('UPDATE')) return `${head}${where}`;
        if (head === 'DELETE') return `DELETE FROM t${where}`;
        return `${head} FROM ${f}${where}${o}${l}`;
      });
    await fc.assert(fc.asyncProperty(fc.oneof(stmt, fc.string({ maxLength: 40 })), async (sql) => {
      const a = await advisePostgres(sql);
      if (a.refusal !== undefined) assert.equal(a.suggestions.length, 0);
      else assert.ok(a.shapes.length > 0);
      assert.doesNotThrow(() => JSON.stringify(a));
      for (const r of a.rewrites) assert.doesNotThrow(() => parseSync(r.text), `${sql} -> ${r.text}`);
    }), { numRuns: Number(process.env['QPI_FUZZ_RUNS'] ?? 300) });
  });
});
