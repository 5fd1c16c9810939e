// The measurement never runs a side effect, on a real PostgreSQL 15: `qpi advise --uri` measures by
// default, and the editor measures right after Explain, so a statement that would advance a sequence,
// call a volatile function that writes (here through COPY ... TO a file, which no rollback undoes) or run
// a trigger must not be executed at all. Sequence positions, a second table's rows and the files on the
// server are read before and after; the advice still comes, ranked by the planner's estimates, with one
// sentence naming what would have run. A harmless statement is still measured, and a time budget
// bounds the whole measurement.

import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresAdvice, type PostgresAdviceSession } from '../../src/adapters/advise';
import { advisePostgresLive } from '../../src/adapters/adviceService';
import { AdapterError } from '../../src/adapters/errors';
import { pgExecute, pgSend, pgVerdict, type Clearance } from '../../src/adapters/door';
import { connectPostgres } from '../../src/adapters/postgres';
import { until } from '../until';
import { run, type Io } from '../../src/cli/main';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../scripts/embedded-postgres';
import { env } from './support/env';

const DB = 'qpi_measure_safety';

/** The servers: PostgreSQL 15 of the test scripts, and the embedded PostgreSQL 18 (the demo's), started here. */
const servers: { version: string; base: () => string }[] = [{ version: '15', base: () => env.pgUri }];
let pg18: EmbeddedServer | undefined;
servers.push({ version: '18 (embedded)', base: () => pg18!.uri });

describe('the measurement on PostgreSQL 15 and 18', function () {
  before(async function () {
    this.timeout(120_000);
    pg18 = await startEmbeddedPostgres({ prefix: 'qpi-pg18-safety-', password: 'qpi-test' });
  });

  after(async function () {
    await pg18?.pg.stop().catch(() => {});
  });

  for (const server of servers) describe(`PostgreSQL ${server.version}: the measurement runs no side effect (real server)`, function () {
    this.timeout(180_000);
    const pgUriFor = (db: string): string => {
      const u = new URL(server.base());
      u.pathname = `/${db}`;
      return u.toString();
    };
    let admin: pg.Client;
    let client: pg.Client;
    let session: PostgresAdviceSession;
    let outDir: string;

    before(async function () {
      admin = new pg.Client({ connectionString: server.base() });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
      await admin.query(`CREATE DATABASE ${DB}`);
      client = new pg.Client({ connectionString: pgUriFor(DB) });
      await client.connect();
      // A folder the server's own user can write into, so that a COPY ... TO really would write there.
      outDir = mkdtempSync(join(tmpdir(), 'qpi-copy-'));
      chmodSync(outDir, 0o777);
      await client.query(`
        CREATE TABLE small (id int PRIMARY KEY, customer_id int NOT NULL, v int NOT NULL);
        INSERT INTO small SELECT g, g % 500, (g * 7919) % 10007 FROM generate_series(1, 50000) g;
        CREATE TABLE audit (n int);
        CREATE SEQUENCE s1;
        CREATE SEQUENCE calls;
        CREATE FUNCTION counted(x int) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
          BEGIN PERFORM nextval('calls'); RETURN x >= 0; END $$;
        CREATE FUNCTION dumped(x int) RETURNS int LANGUAGE plpgsql VOLATILE AS $$
          BEGIN EXECUTE format('COPY (SELECT %s) TO %L', x, ${pg.escapeLiteral(outDir)} || '/row-' || x || '-' || nextval('calls')); RETURN x; END $$;
      `);
      await client.query('VACUUM ANALYZE small');
      session = await openPostgresAdvice({ uri: pgUriFor(DB) });
    });

    after(async function () {
      await session?.close();
      await client?.end();
      await admin?.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
      await admin?.end();
      if (outDir) rmSync(outDir, { recursive: true, force: true });
    });

    /** Sequence positions, the second table's rows, the files written, and temporary tables left. */
    async function state(): Promise<string> {
      const r = await client.query(`SELECT
        (SELECT last_value || '/' || is_called FROM s1) AS s1,
        (SELECT last_value || '/' || is_called FROM calls) AS calls,
        (SELECT count(*)::int FROM audit) AS audit,
        (SELECT count(*)::int FROM pg_class WHERE relpersistence = 't') AS temp`);
      return JSON.stringify({ ...r.rows[0], files: existsSync(outDir) ? readdirSync(outDir).length : -1 });
    }

    function io(): { io: Io; out: () => string; err: () => string } {
      let out = '';
      let err = '';
      return {
        io: { stdout: (s) => void (out += s), stderr: (s) => void (err += s), readStdin: () => '', readFile: () => '' },
        out: () => out,
        err: () => err,
      };
    }

    const cases: { name: string; sql: string; names: RegExp }[] = [
      { name: 'nextval() in the select list', sql: "SELECT *, nextval('s1') FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3", names: /nextval/ },
      { name: 'a volatile function in WHERE', sql: 'SELECT * FROM small WHERE customer_id = 5 AND counted(v) ORDER BY v LIMIT 3', names: /counted\(integer\)/ },
      { name: 'a function writing a file with COPY', sql: 'SELECT dumped(id) FROM small WHERE customer_id = 7 ORDER BY v LIMIT 3', names: /dumped\(integer\)/ },
    ];

    for (const c of cases) {
      it(`does not execute ${c.name}, and still advises from the estimates with one sentence naming it`, async function () {
        const before = await state();
        const { io: cli, out } = io();
        const code = await run(['advise', '--uri', pgUriFor(DB), '--query', c.sql, '--json'], cli);
        assert.equal(code, 0);
        assert.equal(await state(), before, 'nothing changed: sequences, the second table, the files on the server, temporary tables');
        const doc = JSON.parse(out()) as { measurement: { status: string; reason?: string }; suggestions: unknown[] };
        assert.equal(doc.measurement.status, 'not-measured');
        assert.match(doc.measurement.reason ?? '', /^Not measured: running the statement would /);
        assert.match(doc.measurement.reason ?? '', c.names);
        assert.match(doc.measurement.reason ?? '', /ranked by the planner's estimates without running it\.$/);
        assert.ok(doc.suggestions.length > 0, 'the rules and the estimates still advise');
      });
    }

    it('does not count exactly through a volatile function either (--exact-counts)', async function () {
      const before = await state();
      const { io: cli, out } = io();
      const code = await run(['advise', '--uri', pgUriFor(DB), '--query', 'SELECT * FROM small WHERE counted(v) AND customer_id = 5', '--exact-counts', '--json'], cli);
      assert.equal(code, 0);
      assert.equal(await state(), before);
      const doc = JSON.parse(out()) as { warnings: string[] };
      assert.ok(doc.warnings.some((w) => /^Selectivity was not counted exactly: counting would call the volatile function (public\.)?counted\(integer\)/.test(w)), doc.warnings.join('\n'));
    });

    it('measures a statement that runs nothing of the kind, and leaves nothing behind', async function () {
      const before = await state();
      const live = await advisePostgresLive(session, 'SELECT * FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3');
      assert.equal(live.measurement?.status, 'measured');
      assert.equal(await state(), before);
    });

    it('stops starting candidates when the time budget is spent and labels the best measured so far', async function () {
      // A budget already spent when the measurement starts: nothing is measured, and it says why.
      const spent = await advisePostgresLive(session, 'SELECT * FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3', { until: Date.now() });
      assert.equal(spent.measurement?.status, 'not-measured');
      assert.match(spent.measurement?.status === 'not-measured' ? spent.measurement.reason : '', /No candidate could be measured/);
      // Progress is reported as candidates are measured, up to all of them.
      const seen: { measured: number; of: number }[] = [];
      const live = await advisePostgresLive(session, 'SELECT * FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3', { onProgress: (p) => seen.push(p) });
      assert.equal(live.measurement?.status, 'measured');
      assert.ok(seen.length >= 2 && seen[0]!.measured === 0, JSON.stringify(seen));
      assert.equal(seen.at(-1)!.measured, seen.at(-1)!.of);
    });

    /** The pid of our backend running a statement that matches `like`, once it runs. */
    async function runningBackend(like: string): Promise<number> {
      let pid = 0;
      await until(`a backend running ${like}`, async () => {
        const r = await client.query("SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()", [like]);
        pid = (r.rows[0] as { pid?: number } | undefined)?.pid ?? 0;
        return pid > 0;
      }, { timeoutMs: 30_000 });
      return pid;
    }

    async function gone(pid: number): Promise<void> {
      await until(`backend ${pid} ended`, async () => (await client.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0, { timeoutMs: 30_000 });
    }

    it('Cancel ends an explain whose backend does not answer (a frozen process) without waiting for the deadline', async function () {
      const conn = await connectPostgres({ uri: pgUriFor(DB) });
      const abort = new AbortController();
      let pid = 0;
      try {
        const running = conn.explain('SELECT 1 FROM pg_sleep(20)', { analyze: true, timeoutMs: 60_000, signal: abort.signal });
        running.catch(() => {});
        pid = await runningBackend('EXPLAIN%pg_sleep(20)%');
        process.kill(pid, 'SIGSTOP');
        abort.abort();
        const err = await running.then(() => undefined, (e: unknown) => e);
        assert.ok(err instanceof AdapterError, String(err));
        assert.equal(err.kind, 'cancelled');
        assert.match(err.message, /did not stop the statement within 1\.5 s, so this connection was closed and the backend asked to end\.$/);
      } finally {
        if (pid > 0) process.kill(pid, 'SIGCONT');
        await conn.close();
      }
      await gone(pid);
    });

    it('Cancel ends a measurement whose backend does not answer, and the next measurement opens a connection of its own', async function () {
      const abort = new AbortController();
      const slow = 'SELECT * FROM small WHERE customer_id = 5 AND (SELECT 1 FROM pg_sleep(20)) = 1 ORDER BY v LIMIT 3';
      const running = advisePostgresLive(session, slow, { signal: abort.signal, timeoutMs: 60_000 });
      running.catch(() => {});
      let pid = 0;
      try {
        pid = await runningBackend('EXPLAIN (ANALYZE%pg_sleep(20)%');
        process.kill(pid, 'SIGSTOP');
        abort.abort();
        const err = await running.then(() => undefined, (e: unknown) => e);
        assert.ok(err instanceof AdapterError, String(err));
        assert.equal(err.kind, 'cancelled');
        assert.match(err.message, /the server did not stop it within 1\.5 s/);
      } finally {
        if (pid > 0) process.kill(pid, 'SIGCONT');
      }
      await gone(pid);
      const again = await advisePostgresLive(session, 'SELECT * FROM small WHERE customer_id = 6 ORDER BY v LIMIT 3');
      assert.equal(again.measurement?.status, 'measured');
    });

    describe('the one door', function () {
      async function refusedAtTheDoor(run: () => Promise<unknown>, message: RegExp): Promise<void> {
        const before = await state();
        const err = await run().then(() => undefined, (e: unknown) => e);
        assert.ok(err instanceof AdapterError && err.kind === 'side-effects', String(err));
        assert.match(err.message, message);
        assert.equal(await state(), before, 'nothing ran');
      }

      it('refuses a statement under EXPLAIN ANALYZE sent as the product\'s own', async function () {
        await refusedAtTheDoor(() => pgSend(client, "EXPLAIN (ANALYZE, BUFFERS) SELECT nextval('s1')"), /only once the side-effect check has cleared it/);
        await refusedAtTheDoor(() => pgSend(client, "explain analyze select nextval('s1')"), /only once the side-effect check has cleared it/);
      });

      it('executes only with a clearance it gave, and a text built from the statement only within what was cleared', async function () {
        const forged = { statement: "SELECT nextval('s1')", by: 'verdict', calls: new Set(['f:nextval']) } as Clearance;
        await refusedAtTheDoor(() => pgExecute(client, forged, "EXPLAIN (ANALYZE) SELECT nextval('s1')"), /only once the side-effect check has cleared it/);
        const verdict = await pgVerdict(client, 'SELECT * FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3');
        assert.ok(verdict.clearance, 'a plain SELECT is cleared');
        const c = verdict.clearance;
        await refusedAtTheDoor(() => pgExecute(client, c, "EXPLAIN (ANALYZE) SELECT *, nextval('s1') FROM small WHERE customer_id = 5 ORDER BY v LIMIT 3"), /calls nextval\(\)/);
        await refusedAtTheDoor(() => pgExecute(client, c, 'EXPLAIN (ANALYZE) SELECT * FROM small WHERE customer_id = 5 AND counted(v) ORDER BY v LIMIT 3'), /calls counted\(\)/);
        await refusedAtTheDoor(() => pgExecute(client, c, 'WITH d AS (DELETE FROM audit RETURNING n) SELECT * FROM small WHERE customer_id = 5'), /writes/);
        // The statement itself, and the same statement pointed at a temporary copy, run.
        const own = await pgExecute(client, c, `EXPLAIN (ANALYZE, FORMAT JSON) ${c.statement}`);
        assert.equal(own.rows.length, 1);
        const copy = await pgExecute(client, c, 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM pg_temp.small WHERE customer_id = 5 ORDER BY v LIMIT 3').then(() => 'ran', (e: Error) => e.message);
        assert.match(copy, /^ran$|relation "pg_temp.small" does not exist/, 'the door lets it through; only the server may refuse it');
      });

      it('gives no clearance to a statement with a side effect, and names it', async function () {
        const verdict = await pgVerdict(client, "SELECT *, nextval('s1') FROM small WHERE customer_id = 5");
        assert.equal(verdict.clearance, undefined);
        assert.ok(verdict.effects.execution.some((e) => /nextval|s1/.test(e)), verdict.effects.execution.join('; '));
      });
    });
  });
});
