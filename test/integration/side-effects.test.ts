// Explaining changes nothing on PostgreSQL, on a real server: what a rollback does not undo (sequences,
// volatile functions, triggers, a wrongly declared IMMUTABLE function the planner folds) is found before
// anything runs and refused in one sentence naming it; sequence values and table checksums are the same
// before and after; a SELECT under ANALYZE runs READ ONLY; --allow-side-effects runs it anyway.

import { strict as assert } from 'node:assert';
import pg from 'pg';
import { pgBeginVerdict } from '../../src/adapters/door';
import { AdapterError } from '../../src/adapters/errors';
import { connectPostgres, type PostgresConnection } from '../../src/adapters/postgres';
import { sideEffectsQuery } from '../../src/adapters/pgSideEffects';
import { inspectStatement } from '../../src/adapters/pgStatement';
import { qpi } from './support/cli';
import { env, planOf } from './support/env';



const SETUP = `
DROP TABLE IF EXISTS se_orders, se_ident, se_log CASCADE;
DROP SEQUENCE IF EXISTS se_seq;
DROP FUNCTION IF EXISTS se_bump(), se_fake_immutable(int), se_touch() CASCADE;
CREATE SEQUENCE se_seq;
CREATE TABLE se_orders (id serial PRIMARY KEY, v int NOT NULL);
CREATE TABLE se_ident (id int GENERATED ALWAYS AS IDENTITY, v int);
CREATE TABLE se_log (msg text);
INSERT INTO se_orders (v) SELECT g FROM generate_series(1, 200) g;
INSERT INTO se_ident (v) VALUES (1), (2);
CREATE FUNCTION se_bump() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN INSERT INTO se_log VALUES ('bumped'); RETURN nextval('se_seq'); END $$;
CREATE FUNCTION se_fake_immutable(int) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RETURN nextval('se_seq') + $1; END $$;
CREATE FUNCTION se_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM nextval('se_seq'); RETURN NEW; END $$;
CREATE TRIGGER se_orders_touch BEFORE UPDATE ON se_orders FOR EACH ROW EXECUTE FUNCTION se_touch();
CREATE VIEW se_view AS SELECT id, se_bump() AS b FROM se_orders;
`;

describe('PostgreSQL: explaining changes nothing', function () {
  let admin: pg.Client;
  let conn: PostgresConnection;

  /** Everything the statements below could change: sequence positions and table checksums. */
  async function snapshot(): Promise<Record<string, string>> {
    const r = await admin.query(`SELECT
      (SELECT last_value || '/' || is_called FROM se_seq) AS se_seq,
      (SELECT last_value || '/' || is_called FROM se_orders_id_seq) AS orders_seq,
      (SELECT last_value || '/' || is_called FROM se_ident_id_seq) AS ident_seq,
      (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t.id), '')) FROM se_orders t) AS orders,
      (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t.id), '')) FROM se_ident t) AS ident,
      (SELECT count(*)::text FROM se_log) AS log`);
    return r.rows[0] as Record<string, string>;
  }

  async function refused(sql: string, analyze: boolean): Promise<AdapterError> {
    const before = await snapshot();
    let error: unknown;
    try {
      await conn.explain(sql, { analyze });
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof AdapterError && error.kind === 'side-effects', `expected a side-effects refusal for ${sql}, got ${String(error ?? 'success')}`);
    assert.match(error.message, /^EXPLAIN (ANALYZE )?would [^\n]*\.$/);
    assert.deepEqual(await snapshot(), before, 'nothing changed');
    return error;
  }

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(SETUP);
    conn = await connectPostgres({ uri: env.pgUri });
  });

  after(async function () {
    await conn?.close();
    await admin?.query('DROP VIEW IF EXISTS se_view; DROP TABLE IF EXISTS se_orders, se_ident, se_log CASCADE; DROP SEQUENCE IF EXISTS se_seq; DROP FUNCTION IF EXISTS se_bump(), se_fake_immutable(int), se_touch() CASCADE').catch(() => {});
    await admin?.end();
  });

  it('refuses ANALYZE of a volatile function that writes and advances a sequence, naming it', async function () {
    const err = await refused('SELECT se_bump()', true);
    assert.match(err.message, /call the volatile function se_bump\(\)/);
    assert.match(err.message, /which the rollback does not undo\.$/);
  });

  it('refuses ANALYZE of nextval and setval', async function () {
    assert.match((await refused("SELECT nextval('se_seq')", true)).message, /nextval\(regclass\)/);
    assert.match((await refused("SELECT setval('se_seq', 1000)", true)).message, /setval\(regclass,bigint\)/);
  });

  it('refuses ANALYZE of an INSERT that fills a serial or identity column, naming the sequence', async function () {
    assert.match((await refused('INSERT INTO se_orders (v) VALUES (1)', true)).message, /advance the sequence se_orders_id_seq \(default of se_orders\.id\)/);
    assert.match((await refused('INSERT INTO se_ident (v) VALUES (1)', true)).message, /advance the sequence se_ident_id_seq \(identity column se_ident\.id\)/);
    assert.match((await refused('INSERT INTO se_orders VALUES (DEFAULT, 5)', true)).message, /se_orders_id_seq/);
    // A MERGE that may insert fills the same default.
    assert.match((await refused('MERGE INTO se_orders o USING (VALUES (7)) s(v) ON o.v = s.v WHEN NOT MATCHED THEN INSERT (v) VALUES (s.v)', true)).message, /se_orders_id_seq/);
  });

  it('lets an INSERT that gives every column run under ANALYZE, rolled back, with nothing changed', async function () {
    const before = await snapshot();
    const listed = await conn.explain('INSERT INTO se_orders (id, v) VALUES (100000, 1)', { analyze: true });
    const positional = await conn.explain('INSERT INTO se_orders VALUES (100001, 1)', { analyze: true });
    assert.equal(listed.rolledBack && positional.rolledBack, true);
    assert.equal(planOf(listed).root.kind, 'ModifyTable');
    assert.deepEqual(await snapshot(), before);
  });

  it('refuses ANALYZE through a view that calls a volatile function, and an UPDATE whose trigger does', async function () {
    assert.match((await refused('SELECT count(*) FROM se_view', true)).message, /se_bump\(\) \(view se_view\)/);
    assert.match((await refused('UPDATE se_orders SET v = v + 1 WHERE id < 10', true)).message, /fire trigger se_orders_touch on se_orders \(se_touch\(\)\)/);
  });

  it('refuses even plain EXPLAIN of a user-written IMMUTABLE function the planner would fold', async function () {
    const err = await refused('SELECT se_fake_immutable(1)', false);
    assert.match(err.message, /^EXPLAIN would evaluate the user-written IMMUTABLE function se_fake_immutable\(integer\) \(plpgsql\) while planning/);
  });

  it('explains plain EXPLAIN of nextval without running it, and ANALYZE of a SELECT with harmless volatile functions', async function () {
    const before = await snapshot();
    assert.equal(planOf(await conn.explain("SELECT nextval('se_seq')")).root.kind, 'Result');
    assert.equal(planOf(await conn.explain('SELECT random(), clock_timestamp(), pg_sleep(0)', { analyze: true })).root.kind, 'Result');
    assert.deepEqual(await snapshot(), before);
  });

  it('runs a SELECT under ANALYZE in a READ ONLY transaction', async function () {
    const r = await conn.explain("SELECT id FROM se_orders WHERE current_setting('transaction_read_only') = 'on'", { analyze: true });
    assert.equal(planOf(r).root.metrics.rowsReturned, 200, 'every row passes the filter only when the transaction is read-only');
  });

  it('asks the catalog the shorter query for a statement that writes nothing, and it answers what the whole one does', async function () {
    await admin.query(`DROP DOMAIN IF EXISTS se_dom; CREATE DOMAIN se_dom AS int CHECK (se_fake_immutable(VALUE) > 0);
      DROP VIEW IF EXISTS se_seq_view; CREATE VIEW se_seq_view AS SELECT nextval('se_seq') AS n`);
    try {
      const reads = [
        'SELECT se_bump()', 'SELECT * FROM se_view', "SELECT nextval('se_seq')", 'SELECT se_fake_immutable(1)', 'SELECT 1::se_dom',
        "SELECT CAST('{1}' AS se_dom[])", 'SELECT * FROM se_seq_view', 'SELECT id FROM se_orders WHERE v > 3 FOR UPDATE',
        'SELECT count(*) FROM se_orders o JOIN se_ident i ON i.v = o.v', 'VALUES (1), (2)', 'SELECT now(), random()',
      ];
      let found = 0;
      for (const text of reads) {
        const refs = (await inspectStatement(text)).refs;
        const short = sideEffectsQuery(refs);
        const whole = sideEffectsQuery(refs, true);
        assert.equal(short.name, 'qpi_side_effects_reads', text);
        assert.equal(whole.name, 'qpi_side_effects', text);
        const a = await admin.query(short.text, short.values);
        const b = await admin.query(whole.text, whole.values);
        assert.deepEqual(a.rows, b.rows, text);
        found += a.rows.length;
      }
      assert.ok(found > 10, 'the statements reach functions and sequences the two queries both find');
      for (const text of ['INSERT INTO se_orders (v) VALUES (1)', 'UPDATE se_orders SET v = 1', 'DELETE FROM se_orders', 'WITH d AS (DELETE FROM se_log RETURNING 1) SELECT * FROM d']) {
        assert.equal(sideEffectsQuery((await inspectStatement(text)).refs).name, 'qpi_side_effects', `${text} is asked the whole query`);
      }
      // Through the adapter: refused for what only the domain's check, the view or the cast reach.
      for (const text of ['SELECT 1::se_dom', 'SELECT * FROM se_seq_view']) await refused(text, true);
    } finally {
      await admin.query('DROP VIEW IF EXISTS se_seq_view; DROP DOMAIN IF EXISTS se_dom');
    }
  });

  it('judges the same text again on every explain, inside its transaction: a view redefined between two is refused, and no transaction is left open', async function () {
    await admin.query('DROP VIEW IF EXISTS se_flip; CREATE VIEW se_flip AS SELECT id FROM se_orders');
    try {
      const text = 'SELECT count(*) FROM se_flip';
      const first = await conn.explain(text, { analyze: true });
      assert.equal(planOf(first).root.metrics.rowsReturned, 1);
      // The same text, so the same parse; the catalog now says the view calls a volatile function.
      await admin.query('DROP VIEW se_flip; CREATE VIEW se_flip AS SELECT id FROM se_orders WHERE se_bump() > 0');
      const err = await refused(text, true);
      assert.match(err.message, /call the volatile function se_bump\(\)/);
      const state = await admin.query<{ state: string }>('SELECT state FROM pg_stat_activity WHERE pid = $1', [conn.backendPid]);
      assert.equal(state.rows[0]?.state, 'idle', 'the refused statement\'s transaction was rolled back');
      // The connection goes on: the next explain runs, READ ONLY, in a transaction of its own.
      const next = await conn.explain("SELECT id FROM se_orders WHERE current_setting('transaction_read_only') = 'on'", { analyze: true });
      assert.equal(planOf(next).root.metrics.rowsReturned, 200);
    } finally {
      await admin.query('DROP VIEW IF EXISTS se_flip');
    }
  });

  it('has the check planned once per connection, and gives the statement the session\'s own plan cache mode back', async function () {
    const c = new pg.Client({ connectionString: env.pgUri });
    await c.connect();
    try {
      // A mode of the user's own for the session (a role's setting would give it too).
      await c.query('SET plan_cache_mode = force_custom_plan');
      const info = await inspectStatement('SELECT count(*) FROM se_view WHERE id = 5');
      for (let i = 0; i < 3; i++) {
        const verdict = await pgBeginVerdict(c, info, true, 5000, { generic: true });
        assert.match(verdict.effects.execution.join('; '), /se_bump/, 'judged from the catalog\'s rows');
        const mode = await c.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
        assert.equal(mode.rows[0]!.plan_cache_mode, 'force_custom_plan', 'the statement after the check is planned as the session plans');
        await c.query('ROLLBACK');
      }
      const plans = await c.query<{ generic_plans: string; custom_plans: string }>("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'qpi_side_effects%'");
      assert.deepEqual(plans.rows.map((r) => [Number(r.generic_plans), Number(r.custom_plans)]), [[3, 0]], 'three executions of one cached plan, none planned again');
      // Without it, the server plans each of the first executions again.
      await c.query('RESET plan_cache_mode; DEALLOCATE ALL');
      const d = new pg.Client({ connectionString: env.pgUri });
      await d.connect();
      try {
        for (let i = 0; i < 3; i++) {
          await pgBeginVerdict(d, info, true, 5000);
          await d.query('ROLLBACK');
        }
        const custom = await d.query<{ generic_plans: string; custom_plans: string }>("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'qpi_side_effects%'");
        assert.deepEqual(custom.rows.map((r) => [Number(r.generic_plans), Number(r.custom_plans)]), [[0, 3]]);
      } finally {
        await d.end();
      }
    } finally {
      await c.end();
    }
  });

  it('hands the plan over as its ROLLBACK is sent: what the connection runs next runs after the ROLLBACK, and nothing changed', async function () {
    const before = await snapshot();
    for (let i = 0; i < 5; i++) {
      // A read-write transaction (the INSERT), then at once the READ ONLY check, as the advice follows a plan:
      // every row passes only when the check runs in a transaction of its own, i.e. the INSERT's ended first.
      const insert = await conn.explain(`INSERT INTO se_orders (id, v) VALUES (${200000 + i}, 1)`, { analyze: true });
      assert.equal(insert.rolledBack, true);
      const next = await conn.explain("SELECT id FROM se_orders WHERE current_setting('transaction_read_only') = 'on'", { analyze: true });
      assert.equal(planOf(next).root.metrics.rowsReturned, 200);
    }
    // Not awaited in between: the explains take their turns on the connection one after another.
    const both = await Promise.all([
      conn.explain('INSERT INTO se_orders (id, v) VALUES (300000, 1)', { analyze: true }),
      conn.explain("SELECT id FROM se_orders WHERE current_setting('transaction_read_only') = 'on'", { analyze: true }),
      conn.listIndexes({ table: 'se_orders' }),
    ]);
    assert.equal(planOf(both[1]).root.metrics.rowsReturned, 200);
    assert.deepEqual(await snapshot(), before);
    const state = await admin.query<{ state: string }>('SELECT state FROM pg_stat_activity WHERE pid = $1', [conn.backendPid]);
    assert.equal(state.rows[0]?.state, 'idle', 'no transaction is left open');
  });

  it('with allowSideEffects runs what was refused: the sequence advances, the rows are rolled back', async function () {
    const before = await snapshot();
    const r = await conn.explain('SELECT se_bump()', { analyze: true, allowSideEffects: true });
    assert.equal(planOf(r).root.kind, 'Result');
    const after = await snapshot();
    assert.notEqual(after.se_seq, before.se_seq, 'the sequence advanced: the refusal was what kept it');
    assert.equal(after.log, before.log, 'the row it wrote was rolled back');
    const folded = await conn.explain('SELECT se_fake_immutable(1)', { allowSideEffects: true });
    assert.equal(planOf(folded).root.kind, 'Result');
    assert.notEqual((await snapshot()).se_seq, after.se_seq, 'planning alone advanced it: plain EXPLAIN is not harmless here');
  });

  it('qpi explain refuses with exit 2 and one sentence, and --allow-side-effects runs it', async function () {
    const before = await snapshot();
    const r = await qpi(['explain', '--uri', env.pgUri, '--query', 'SELECT se_bump()', '--analyze']);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^EXPLAIN ANALYZE would call the volatile function se_bump\(\), which the rollback does not undo; give --allow-side-effects to run it anyway, or leave out --analyze\.\n$/);
    assert.deepEqual(await snapshot(), before);
    const plain = await qpi(['explain', '--uri', env.pgUri, '--query', 'SELECT se_fake_immutable(2)']);
    assert.equal(plain.status, 2);
    assert.match(plain.stderr, /; give --allow-side-effects to explain it anyway\.\n$/);
    const allowed = await qpi(['explain', '--uri', env.pgUri, '--query', 'SELECT se_bump()', '--analyze', '--allow-side-effects', '--json']);
    assert.equal(allowed.status, 0, allowed.stderr);
    assert.equal((JSON.parse(allowed.stdout) as { engine: string }).engine, 'postgres');
  });
});
