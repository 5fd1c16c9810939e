// The explain's transaction and its side-effect check in one round trip (adapters/door.ts
// pgBeginVerdict): one simple-query message that opens the transaction, sets its timeout and executes the
// catalog query, prepared with SQL PREPARE the first time on a connection; the statement's names go in as
// escaped literals. A server answers them in test/integration/side-effects.test.ts.

import { strict as assert } from 'node:assert';
import pg from 'pg';
import { canForceGenericPlan, pgBeginVerdict, pgVerdict, type PgClient } from '../../src/adapters/door';
import { inspectStatement } from '../../src/adapters/pgStatement';

/** A connection that records each message and answers as a server does a multi-statement one: a result per statement. */
function fakeClient(rows: Record<string, unknown>[] = [], fail?: (text: string) => Error | undefined): { client: PgClient; sent: string[] } {
  const sent: string[] = [];
  const client = {
    escapeLiteral: (s: string) => pg.Client.prototype.escapeLiteral.call(undefined, s),
    query: async (text: unknown) => {
      assert.equal(typeof text, 'string', 'a simple-query message, without parameters');
      sent.push(text as string);
      const error = fail?.(text as string);
      if (error) throw error;
      // Each statement's result; the EXECUTE's is the one with rows, whatever its place.
      const statements = (text as string).split(/;\s*(?=BEGIN|SET|EXECUTE|SAVEPOINT|ROLLBACK|RELEASE)/);
      const results = statements.map((one) => (/^\s*EXECUTE /.test(one) ? { rows, command: 'SELECT' } : { rows: [] as unknown[], command: one.trim().split(/\s/)[0]! }));
      return results.length === 1 ? results[0] : results;
    },
  };
  return { client: client as unknown as PgClient, sent };
}

/** The text of a literal as escapeLiteral writes it ('...' or E'...', quotes and backslashes doubled). */
function unquote(literal: string): string {
  const m = /^E?'([\s\S]*)'$/.exec(literal);
  assert.ok(m, literal);
  return m[1]!.replace(/''/g, "'").replace(/\\\\/g, '\\');
}

describe('the explain\'s BEGIN and side-effect check', function () {
  it('are one message: the transaction opened READ ONLY with its timeout, then the check inside it', async function () {
    const { client, sent } = fakeClient();
    const info = await inspectStatement('SELECT * FROM orders WHERE id = 1');
    const verdict = await pgBeginVerdict(client, info, true, 5000);
    assert.equal(sent.length, 1);
    assert.match(sent[0]!, /^PREPARE qpi_side_effects_reads AS [\s\S]*;\nBEGIN READ ONLY; SET LOCAL statement_timeout = 5000; EXECUTE qpi_side_effects_reads\((E?'[^\n]*', ){3}E?'[^\n]*'\)$/);
    assert.ok(verdict.clearance, 'nothing found: cleared');
    // Prepared once per connection: the next explain sends BEGIN and EXECUTE alone.
    await pgBeginVerdict(client, info, false, 7000);
    assert.equal(sent.length, 2);
    assert.match(sent[1]!, /^BEGIN; SET LOCAL statement_timeout = 7000; EXECUTE qpi_side_effects_reads\(/);
    // The measurement's verdict on the same connection uses the same prepared query, without a BEGIN.
    await pgVerdict(client, 'SELECT 1');
    assert.match(sent[2]!, /^EXECUTE qpi_side_effects_reads\(/);
  });

  it('judges from the catalog\'s rows: something a rollback does not undo gives no clearance', async function () {
    const { client } = fakeClient([{ kind: 'sequence', name: 'public.orders_id_seq', proname: null, schema: null, volatility: null, language: null, ctx: null, via: 'nextval' }]);
    const verdict = await pgBeginVerdict(client, await inspectStatement("SELECT nextval('orders_id_seq')"), true, 5000);
    assert.equal(verdict.clearance, undefined);
    assert.ok(verdict.effects.execution.some((e) => /advance the sequence public\.orders_id_seq/.test(e)), verdict.effects.execution.join('; '));
  });

  it('sends the statement\'s names as literals that read back as the same JSON, quotes and backslashes included', async function () {
    const { client, sent } = fakeClient();
    const info = await inspectStatement(`SELECT * FROM "o'rders" o WHERE o."a\\b" = 'x' AND o.id = "f'n"(1)`);
    await pgBeginVerdict(client, info, true, 5000);
    const args = /EXECUTE qpi_side_effects_reads\((.*)\)$/.exec(sent[0]!)![1]!;
    // The literals, split where one ends and the next begins.
    const literals = args.split(/(?<=')\s*,\s*(?=E?')/);
    assert.equal(literals.length, 4, args);
    const values = literals.map(unquote);
    assert.ok(JSON.parse(values[0]!).some((f: { name: string }) => f.name === "f'n"), values[0]);
    assert.ok(JSON.parse(values[2]!).some((r: string) => r.includes("o'rders")), values[2]);
  });

  it('sends the message again without PREPARE when the connection has the query prepared already', async function () {
    const { client, sent } = fakeClient([], (text) => (text.startsWith('PREPARE') ? Object.assign(new Error('prepared statement "qpi_side_effects_reads" already exists'), { code: '42P05' }) : undefined));
    const verdict = await pgBeginVerdict(client, await inspectStatement('SELECT 1'), true, 5000);
    assert.ok(verdict.clearance);
    assert.equal(sent.length, 2);
    assert.match(sent[1]!, /^BEGIN READ ONLY; SET LOCAL statement_timeout = 5000; EXECUTE /);
  });

  it('has the catalog query planned once for the connection where the server can (PostgreSQL 12 on), and the session\'s mode back before the statement', async function () {
    const { client, sent } = fakeClient([{ kind: 'sequence', name: 'public.orders_id_seq', proname: null, schema: null, volatility: null, language: null, ctx: null, via: 'nextval' }]);
    const verdict = await pgBeginVerdict(client, await inspectStatement("SELECT nextval('orders_id_seq')"), true, 5000, { generic: true });
    assert.match(sent[0]!, /\nBEGIN READ ONLY; SET LOCAL statement_timeout = 5000; SAVEPOINT qpi_check; SET LOCAL plan_cache_mode = force_generic_plan; EXECUTE qpi_side_effects_reads\([^\n]*\); ROLLBACK TO SAVEPOINT qpi_check; RELEASE SAVEPOINT qpi_check$/);
    // The rows judged are the EXECUTE's, though other statements' results come after them.
    assert.equal(verdict.clearance, undefined);
    assert.ok(verdict.effects.execution.some((e) => /advance the sequence public\.orders_id_seq/.test(e)), verdict.effects.execution.join('; '));
    // Outside the explain's transaction (the measurement's verdict) nothing would undo the mode: left to the server.
    await pgVerdict(client, 'SELECT 1');
    assert.match(sent[1]!, /^EXECUTE qpi_side_effects_reads\([^\n]*\)$/);
    assert.equal(canForceGenericPlan(110022), false);
    assert.equal(canForceGenericPlan(120000), true);
  });

  it('passes any other failure on', async function () {
    const { client } = fakeClient([], () => Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    await assert.rejects(pgBeginVerdict(client, await inspectStatement('SELECT 1'), true, 5000), /statement timeout/);
  });
});
