// What an EXPLAIN ANALYZE of a write reaches beyond the statement's own text, on a real server: CHECK
// constraints of tables and domains, casts, rules, row-level security policies, foreign-key actions,
// partitions, expression and partial indexes, generated columns. Each construct here calls a function
// that advances a sequence or writes another table through dblink (a second connection, which the
// rollback cannot reach). Each test shows the effect is real (allowed, it persists) and that without
// consent the explain is refused in one sentence naming what it would run, with nothing changed.

import { strict as assert } from 'node:assert';
import pg from 'pg';
import { AdapterError } from '../../src/adapters/errors';
import { connectPostgres, type PostgresConnection } from '../../src/adapters/postgres';
import { env, planOf } from './support/env';
import { until } from '../until';

const READER = 'sec_reader';
const READER_PASSWORD = 'sec_reader_pw';

// The table dblink writes is committed first: the second connection does not see the setup's transaction.
const SETUP_FIRST = `
DROP SCHEMA IF EXISTS sec CASCADE;
DROP ROLE IF EXISTS ${READER};
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE SCHEMA sec;
CREATE TABLE sec.audit (msg text);
`;

const SETUP = `
CREATE SEQUENCE sec.seq;
CREATE TABLE sec.log (id serial PRIMARY KEY, msg text);

-- Advances a sequence and logs a row: the row is rolled back with the explain, the sequence is not.
CREATE FUNCTION sec.noted(v int) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN INSERT INTO sec.log (msg) VALUES ('noted ' || v); PERFORM nextval('sec.seq'); RETURN true; END $$;
-- Writes a row through a second connection: it is committed whatever the explain's transaction does.
CREATE FUNCTION sec.remote(v int) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM dblink_exec(format('host=127.0.0.1 port=%s dbname=%s user=postgres', current_setting('port'), current_database()),
                      format('INSERT INTO sec.audit VALUES (%L)', 'remote ' || v));
  RETURN true;
END $$;
-- Declared IMMUTABLE, which the server requires of index expressions and generated columns, and it is not.
CREATE FUNCTION sec.fake_immutable(v int) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RETURN nextval('sec.seq') + v; END $$;
CREATE FUNCTION sec.bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM nextval('sec.seq'); RETURN coalesce(NEW, OLD); END $$;

CREATE TABLE sec.checked (id int, v int CONSTRAINT checked_v CHECK (sec.remote(v)));
INSERT INTO sec.checked VALUES (1, 1);

CREATE DOMAIN sec.noted_int AS int CONSTRAINT noted_int_check CHECK (sec.noted(VALUE));
CREATE DOMAIN sec.still_noted_int AS sec.noted_int;
CREATE TABLE sec.domained (id int, v sec.still_noted_int);
INSERT INTO sec.domained VALUES (1, 1);

CREATE TYPE sec.code AS (v text);
CREATE FUNCTION sec.code_of(t text) RETURNS sec.code LANGUAGE plpgsql VOLATILE AS $$
BEGIN PERFORM nextval('sec.seq'); RETURN ROW(t)::sec.code; END $$;
CREATE CAST (text AS sec.code) WITH FUNCTION sec.code_of(text) AS ASSIGNMENT;
CREATE TABLE sec.coded (id int, c sec.code);
INSERT INTO sec.coded VALUES (1, ROW('a'));

CREATE TABLE sec.ruled (id int);
CREATE TABLE sec.rule_target (id serial, note text);
CREATE RULE ruled_bump AS ON INSERT TO sec.ruled DO ALSO SELECT nextval('sec.seq');
CREATE RULE ruled_instead AS ON DELETE TO sec.ruled DO INSTEAD INSERT INTO sec.rule_target (note) VALUES ('deleted ' || OLD.id);
CREATE TRIGGER rule_target_bump AFTER INSERT ON sec.rule_target FOR EACH ROW EXECUTE FUNCTION sec.bump();
INSERT INTO sec.ruled VALUES (1);
CREATE TABLE sec.notified (id int);
CREATE RULE notified_notify AS ON INSERT TO sec.notified DO ALSO NOTIFY sec_channel;

CREATE TABLE sec.secured (id int, note text);
INSERT INTO sec.secured VALUES (1, 'a'), (2, 'b');
ALTER TABLE sec.secured ENABLE ROW LEVEL SECURITY;
CREATE POLICY secured_noted ON sec.secured USING (sec.noted(id));

CREATE TABLE sec.parent (id int PRIMARY KEY);
CREATE TABLE sec.child (id int PRIMARY KEY, parent_id int REFERENCES sec.parent ON DELETE CASCADE);
CREATE TABLE sec.grandchild (id int, child_id int REFERENCES sec.child ON DELETE SET NULL);
CREATE TRIGGER grandchild_bump BEFORE UPDATE ON sec.grandchild FOR EACH ROW EXECUTE FUNCTION sec.bump();
INSERT INTO sec.parent VALUES (1), (2);
INSERT INTO sec.child VALUES (10, 1);
INSERT INTO sec.grandchild VALUES (100, 10);

CREATE TABLE sec.parted (id int, v int) PARTITION BY RANGE (id);
CREATE TABLE sec.parted_low PARTITION OF sec.parted FOR VALUES FROM (0) TO (100) PARTITION BY RANGE (id);
CREATE TABLE sec.parted_lowest PARTITION OF sec.parted_low FOR VALUES FROM (0) TO (50);
CREATE TRIGGER parted_lowest_bump BEFORE INSERT ON sec.parted_lowest FOR EACH ROW EXECUTE FUNCTION sec.bump();

CREATE TABLE sec.indexed (id int, v int);
CREATE INDEX indexed_expr ON sec.indexed (sec.fake_immutable(v));
CREATE TABLE sec.partial (id int, v int);
CREATE INDEX partial_pred ON sec.partial (id) WHERE sec.fake_immutable(v) > 0;

CREATE TABLE sec.generated (id int, v int, g bigint GENERATED ALWAYS AS (sec.fake_immutable(v)) STORED);
INSERT INTO sec.generated (id, v) VALUES (1, 1);

CREATE TABLE sec.harmless (id int, v int CONSTRAINT harmless_v CHECK (abs(v) >= 0));
INSERT INTO sec.harmless VALUES (1, 1), (2, -2);

CREATE ROLE ${READER} LOGIN PASSWORD '${READER_PASSWORD}';
GRANT USAGE ON SCHEMA sec TO ${READER};
GRANT ALL ON ALL TABLES IN SCHEMA sec TO ${READER};
GRANT ALL ON ALL SEQUENCES IN SCHEMA sec TO ${READER};
`;

const TEARDOWN = `DROP SCHEMA IF EXISTS sec CASCADE; DROP ROLE IF EXISTS ${READER}`;

describe('PostgreSQL: explaining changes nothing, beyond the statement text', function () {
  let admin: pg.Client;
  let conn: PostgresConnection;
  let reader: PostgresConnection;

  /** Every sequence of the schema and the rows of the tables its functions write. */
  async function snapshot(): Promise<Record<string, string>> {
    const r = await admin.query(`SELECT
      (SELECT string_agg(sequencename || '=' || coalesce(last_value::text, '-'), ',' ORDER BY sequencename) FROM pg_sequences WHERE schemaname = 'sec') AS sequences,
      (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t.msg), '')) FROM sec.audit t) AS audit,
      (SELECT count(*)::text FROM sec.log) AS log`);
    return r.rows[0] as Record<string, string>;
  }

  /** Runs `sql` refused under ANALYZE and returns the refusal, after checking nothing changed. */
  async function refused(sql: string, on: PostgresConnection = conn): Promise<AdapterError> {
    const before = await snapshot();
    let error: unknown;
    try {
      await on.explain(sql, { analyze: true });
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof AdapterError && error.kind === 'side-effects', `expected a side-effects refusal for ${sql}, got ${String(error ?? 'success')}`);
    assert.match(error.message, /^EXPLAIN ANALYZE would [^\n]*, which the rollback does not undo\.$/);
    assert.deepEqual(await snapshot(), before, 'nothing changed');
    return error;
  }

  /** One of the refusal's phrases matches `pattern` (the message shows the first four). */
  function names(err: AdapterError, pattern: RegExp): void {
    assert.ok((err.sideEffects ?? []).some((p) => pattern.test(p)), `no phrase matches ${pattern}: ${JSON.stringify(err.sideEffects)}`);
  }

  /** Runs `sql` under ANALYZE with consent and checks that what the refusal stopped really persists. */
  async function persists(sql: string, what: 'sequences' | 'audit', on: PostgresConnection = conn): Promise<void> {
    const before = await snapshot();
    const r = await on.explain(sql, { analyze: true, allowSideEffects: true });
    assert.equal(r.rolledBack, true);
    const after = await snapshot();
    assert.notEqual(after[what], before[what], `${sql} changed ${what}: the refusal is what keeps them`);
    assert.equal(after.log, before.log, 'the rows written inside the transaction were rolled back');
  }

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(SETUP_FIRST);
    await admin.query(SETUP);
    conn = await connectPostgres({ uri: env.pgUri });
    const url = new URL(env.pgUri);
    url.username = READER;
    url.password = READER_PASSWORD;
    reader = await connectPostgres({ uri: url.toString() });
  });

  after(async function () {
    await conn?.close();
    await reader?.close();
    await admin?.query(TEARDOWN).catch(() => {});
    await admin?.end();
  });

  it('a table CHECK constraint that calls a function writing through dblink', async function () {
    const err = await refused('INSERT INTO sec.checked (id, v) VALUES (2, 2)');
    assert.match(err.message, /call the volatile function sec\.remote\(integer\) \(CHECK constraint checked_v on sec\.checked\)/);
    names((await refused('UPDATE sec.checked SET v = v + 1')), /sec\.remote\(integer\) \(CHECK constraint checked_v/);
    await persists('INSERT INTO sec.checked (id, v) VALUES (2, 2)', 'audit');
  });

  it('a domain CHECK constraint, through a domain over the domain', async function () {
    const err = await refused('UPDATE sec.domained SET v = 2');
    assert.match(err.message, /call the volatile function sec\.noted\(integer\) \(CHECK constraint noted_int_check of domain sec\.noted_int, column sec\.domained\.v\)/);
    names(await refused("SELECT 3::sec.noted_int"), /sec\.noted\(integer\) \(CHECK constraint noted_int_check of domain sec\.noted_int, cast to sec\.noted_int\)/);
    await persists('UPDATE sec.domained SET v = 2', 'sequences');
  });

  it('an UPDATE of other columns does not reach a domain constraint', async function () {
    const before = await snapshot();
    const r = await conn.explain('UPDATE sec.domained SET id = id + 1', { analyze: true });
    assert.equal(planOf(r).root.kind, 'ModifyTable');
    assert.deepEqual(await snapshot(), before);
  });

  it('casts through a function: explicit in the statement, and an assignment cast to a written column', async function () {
    const explicit = await refused("DELETE FROM sec.coded WHERE 'x'::text::sec.code IS NULL");
    assert.match(explicit.message, /call the volatile function sec\.code_of\(text\) \(cast from text to sec\.code\)/);
    const implicit = await refused("INSERT INTO sec.coded (id, c) VALUES (1, 'y'::text)");
    assert.match(implicit.message, /call the volatile function sec\.code_of\(text\) \(cast from text to sec\.code, column sec\.coded\.c\)/);
    await persists("DELETE FROM sec.coded WHERE 'x'::text::sec.code IS NULL", 'sequences');
    await persists("INSERT INTO sec.coded (id, c) VALUES (1, 'y'::text)", 'sequences');
  });

  it('rules: DO ALSO SELECT nextval, and DO INSTEAD INSERT into a table whose trigger and serial column it reaches', async function () {
    const also = await refused('INSERT INTO sec.ruled VALUES (2)');
    assert.match(also.message, /advance the sequence sec\.seq \(rule ruled_bump on sec\.ruled\)/);
    const instead = await refused('DELETE FROM sec.ruled WHERE id = 1');
    names(instead, /^fire trigger rule_target_bump on sec\.rule_target through rule ruled_instead on sec\.ruled \(sec\.bump\(\)\)$/);
    names(instead, /^advance the sequence sec\.rule_target_id_seq \(default of sec\.rule_target\.id through rule ruled_instead on sec\.ruled\)$/);
    await persists('INSERT INTO sec.ruled VALUES (2)', 'sequences');
    await persists('DELETE FROM sec.ruled WHERE id = 1', 'sequences');
  });

  it('a DO ALSO NOTIFY rule is not refused: EXPLAIN does not run it, and nothing is delivered', async function () {
    const listener = new pg.Client({ connectionString: env.pgUri });
    await listener.connect();
    try {
      const received: string[] = [];
      listener.on('notification', (n) => received.push(n.payload ?? ''));
      await listener.query('LISTEN sec_channel');
      const before = await snapshot();
      const r = await conn.explain('INSERT INTO sec.notified VALUES (1)', { analyze: true });
      assert.equal(r.rolledBack, true);
      assert.deepEqual(await snapshot(), before);
      // Notifications arrive in commit order: once the marker sent after the explain is here, anything
      // the explain had sent would be here too.
      await admin.query("SELECT pg_notify('sec_channel', 'marker')");
      await until('the marker notification', () => received.includes('marker'));
      assert.deepEqual(received, ['marker']);
    } finally {
      await listener.end();
    }
  });

  it('row-level security policies that call a function, when row security applies', async function () {
    const err = await refused('DELETE FROM sec.secured WHERE id = 1', reader);
    assert.match(err.message, /call the volatile function sec\.noted\(integer\) \(policy secured_noted on sec\.secured\)/);
    names(await refused('UPDATE sec.secured SET note = 2::text WHERE id = 2', reader), /policy secured_noted on sec\.secured/);
    await persists('DELETE FROM sec.secured WHERE id = 1', 'sequences', reader);
    // The superuser bypasses row security: the policy does not run, and the explain is not refused.
    const before = await snapshot();
    assert.equal(planOf(await conn.explain('DELETE FROM sec.secured WHERE id = 1', { analyze: true })).root.kind, 'ModifyTable');
    assert.deepEqual(await snapshot(), before);
  });

  it('foreign-key actions: ON DELETE CASCADE then ON DELETE SET NULL reach a trigger two tables away', async function () {
    const err = await refused('DELETE FROM sec.parent WHERE id = 1');
    assert.match(err.message, /fire trigger grandchild_bump on sec\.grandchild through ON DELETE CASCADE of child_parent_id_fkey from sec\.parent \(sec\.bump\(\)\)/);
    await persists('DELETE FROM sec.parent WHERE id = 1', 'sequences');
  });

  it('partitions: a trigger on a partition of a partition of the written table', async function () {
    const err = await refused('INSERT INTO sec.parted VALUES (1, 1)');
    assert.match(err.message, /fire trigger parted_lowest_bump on sec\.parted_lowest as a partition of sec\.parted \(sec\.bump\(\)\)/);
    await persists('INSERT INTO sec.parted VALUES (1, 1)', 'sequences');
  });

  it('expression and partial indexes whose user-written IMMUTABLE function is not', async function () {
    const expr = await refused('INSERT INTO sec.indexed VALUES (1, 1)');
    assert.match(expr.message, /call the user-written IMMUTABLE function sec\.fake_immutable\(integer\) \(plpgsql, index sec\.indexed_expr on sec\.indexed\)/);
    const pred = await refused('INSERT INTO sec.partial VALUES (1, 1)');
    assert.match(pred.message, /call the user-written IMMUTABLE function sec\.fake_immutable\(integer\) \(plpgsql, index sec\.partial_pred on sec\.partial\)/);
    await persists('INSERT INTO sec.indexed VALUES (1, 1)', 'sequences');
    await persists('INSERT INTO sec.partial VALUES (1, 1)', 'sequences');
  });

  it('a generated column, on UPDATE as on INSERT', async function () {
    const update = await refused('UPDATE sec.generated SET v = 2');
    assert.match(update.message, /call the user-written IMMUTABLE function sec\.fake_immutable\(integer\) \(plpgsql, generated column sec\.generated\.g\)/);
    names(await refused('INSERT INTO sec.generated (id, v) VALUES (2, 2)'), /generated column sec\.generated\.g/);
    await persists('UPDATE sec.generated SET v = 2', 'sequences');
  });

  it('does not refuse statements on a table whose CHECK constraint calls an immutable built-in', async function () {
    const before = await snapshot();
    const read = await conn.explain('SELECT * FROM sec.harmless WHERE v > 0', { analyze: true });
    assert.equal(planOf(read).root.metrics.rowsReturned, 1);
    const write = await conn.explain('INSERT INTO sec.harmless (id, v) VALUES (3, 3)', { analyze: true });
    assert.equal(planOf(write).root.kind, 'ModifyTable');
    const update = await conn.explain('UPDATE sec.harmless SET v = -v', { analyze: true });
    assert.equal(write.rolledBack && update.rolledBack, true);
    assert.deepEqual(await snapshot(), before);
  });
});
