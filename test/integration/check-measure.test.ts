// `qpi check --measure` on real servers: the fixture application of test/fixtures/check-app with a new
// PostgreSQL query and a new MongoDB query that no index serves. The gate fails both; with --measure each
// failing result carries the measured first suggestion of the same advice service `qpi advise --uri`
// asks (PostgreSQL's tournament on temporary copies, MongoDB's sampled trial on a scratch collection), the
// same index `qpi advise --uri` names, its work today and with it, and the tier `measured`. Nothing is left
// on the servers, the SARIF passes Microsoft's SARIF multitool, and without --measure nothing changes.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { run } from '../../src/cli/main';
import { collectQueries, loadSqlParser } from '../../src/core/index';
import { capturedIo } from './support/cliIo';
import { copyCheckApp, loadCheckDatabases, pgAdmin } from './support/checkFixture';
import { env, pgUriFor } from './support/env';

const PG_DB = 'qpi_check_measure';
const MONGO_DB = 'qpi_check_app';
const PG_QUERY = "SELECT id, total FROM orders WHERE status = 'open'";

interface Measured {
  status: string;
  index?: string;
  createIndex?: string;
  action?: string;
  label?: string;
  unit?: string;
  before?: { work: number; text: string; plan: string };
  after?: { work: number; text: string; plan: string };
  confirms?: boolean;
  reason?: string;
}

interface CheckJson {
  passed: boolean;
  queries: { key: string; file: string; engine: string; outcome: string; measurement?: Measured; results: { rule: string; fails: boolean; tier: string; suggestion?: string; measured?: Measured }[] }[];
}

interface SarifResult { ruleId: string; level: string; message: { text: string; markdown: string }; properties: { tier: string; measured?: Measured } }

describe('qpi check --measure on real servers', function () {
  this.timeout(240_000);
  let app: string;
  const pgUri = (): string => pgUriFor(PG_DB);


  async function check(...extra: string[]): Promise<{ code: number; doc: CheckJson; sarif: { runs: { results: SarifResult[] }[] }; sarifFile: string; markdown: string; err: string }> {
    const io = capturedIo();
    const sarifFile = join(app, 'out', 'check.sarif');
    const md = join(app, 'out', 'check.md');
    const code = await run(['check', join(app, 'src'), '--uri', pgUri(), '--uri', env.mongoUri, '--lock', join(app, 'qpi.lock.json'), '--json', '--sarif', sarifFile, '--markdown', md, ...extra], io);
    return { code, doc: JSON.parse(io.out) as CheckJson, sarif: JSON.parse(readFileSync(sarifFile, 'utf8')) as { runs: { results: SarifResult[] }[] }, sarifFile, markdown: readFileSync(md, 'utf8'), err: io.err };
  }

  async function advise(...args: string[]): Promise<{ suggestions: { createIndex: string | null }[]; measurement: { status: string } }> {
    const io = capturedIo();
    const code = await run(['advise', ...args, '--json'], io);
    assert.equal(code, 0, io.err);
    return JSON.parse(io.out) as { suggestions: { createIndex: string | null }[]; measurement: { status: string } };
  }

  /** What the servers hold that a measurement could have left: PostgreSQL's indexes and tables, MongoDB's collections and indexes. */
  async function serverState(): Promise<string> {
    const pg = await pgAdmin(PG_DB, async (c) => (await c.query("SELECT relname, relkind FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY relname")).rows);
    const mongo = await MongoClient.connect(env.mongoUri);
    try {
      const out: string[] = [];
      for (const d of (await mongo.db().admin().listDatabases()).databases) {
        for (const c of await mongo.db(d.name).listCollections().toArray()) {
          if (d.name === MONGO_DB || /qpi/i.test(c.name)) out.push(`${d.name}.${c.name}: ${(await mongo.db(d.name).collection(c.name).indexes().catch(() => [])).map((i) => i.name).join(',')}`);
        }
      }
      return JSON.stringify({ pg, mongo: out.sort() });
    } finally {
      await mongo.close();
    }
  }

  before(async function () {
    await loadSqlParser();
    await loadCheckDatabases(PG_DB, MONGO_DB, { openOrder: 'g <= 40', clickEvery: 50 });
  });

  beforeEach(function () {
    app = copyCheckApp('qpi-check-measure-');
  });

  afterEach(function () {
    rmSync(app, { recursive: true, force: true });
  });

  /** The baseline lock, then a new unindexed query in each engine's file; returns the MongoDB query's text as check explains it. */
  async function addUnindexedQueries(): Promise<string> {
    const io = capturedIo();
    assert.equal(await run(['check', join(app, 'src'), '--uri', pgUri(), '--uri', env.mongoUri, '--lock', join(app, 'qpi.lock.json'), '--update'], io), 0, io.err);
    const orders = join(app, 'src', 'orders.js');
    writeFileSync(orders, readFileSync(orders, 'utf8').replace('\nmodule.exports', `\nasync function openOrders() {\n  return client.query("${PG_QUERY}");\n}\n\nmodule.exports`));
    const events = join(app, 'src', 'events.js');
    const text = readFileSync(events, 'utf8').replace('\nmodule.exports', `\nasync function recentClicks() {\n  return db.collection('events').find({ kind: 'click' }).sort({ created_at: -1 }).limit(5).toArray();\n}\n\nmodule.exports`);
    writeFileSync(events, text);
    const q = collectQueries(text, 'src/events.js').queries.find((x) => x.scope === 'recentClicks');
    assert.ok(q && q.explain.ok, 'the new MongoDB query is found and explainable');
    return q.explain.text;
  }

  it('attaches the measured suggestion qpi advise --uri names, tier measured, leaving nothing on the servers', async function () {
    const mongoText = await addUnindexedQueries();
    const state = await serverState();

    const plain = await check();
    assert.equal(plain.code, 3, plain.err);
    const plainFailed = plain.doc.queries.filter((q) => q.outcome === 'failed');
    assert.equal(plainFailed.length, 2, JSON.stringify(plainFailed));
    assert.ok(plainFailed.every((q) => q.measurement === undefined && q.results.every((r) => r.tier !== 'measured' && r.measured === undefined)));

    const r = await check('--measure');
    assert.equal(r.code, 3, r.err);
    assert.equal(await serverState(), state, 'no index, table or scratch collection is left');
    const failed = r.doc.queries.filter((q) => q.outcome === 'failed');
    assert.deepEqual(failed.map((q) => q.engine).sort(), ['mongodb', 'postgres']);
    // Only the failing queries are measured.
    assert.ok(r.doc.queries.filter((q) => q.outcome !== 'failed').every((q) => q.measurement === undefined));

    const pgAdvice = await advise('--query', PG_QUERY, '--uri', pgUri());
    const mongoAdvice = await advise('--query', mongoText, '--uri', env.mongoUri, '--verify');
    assert.equal(pgAdvice.measurement.status, 'measured');
    assert.equal(mongoAdvice.measurement.status, 'measured');
    const named = { postgres: pgAdvice.suggestions[0]!.createIndex, mongodb: mongoAdvice.suggestions[0]!.createIndex };
    assert.ok(named.postgres && named.mongodb, JSON.stringify(named));
    assert.equal(await serverState(), state, 'qpi advise leaves nothing either');

    for (const q of failed) {
      const m = q.measurement!;
      assert.equal(m?.status, 'measured', JSON.stringify(m));
      assert.equal(m.createIndex, named[q.engine as 'postgres' | 'mongodb'], q.key);
      assert.equal(m.action, 'create');
      assert.equal(m.confirms, true, JSON.stringify(m));
      assert.ok(m.before && m.after && m.after.work < m.before.work, JSON.stringify(m));
      const failing = q.results.filter((x) => x.fails);
      assert.ok(failing.length > 0);
      for (const x of failing) {
        assert.equal(x.tier, 'measured', JSON.stringify(x));
        assert.equal(x.suggestion, m.createIndex);
        assert.deepEqual(x.measured, m);
      }
    }

    // SARIF: the measured index and its work in the message; tier measured; valid for code scanning.
    const errors = r.sarif.runs[0]!.results.filter((x) => x.level === 'error');
    assert.ok(errors.length >= 2);
    for (const e of errors) {
      assert.equal(e.properties.tier, 'measured');
      assert.match(e.message.markdown, /today/);
      assert.ok(e.message.text.includes(e.properties.measured!.index!), e.message.text);
    }
    const tool = join(__dirname, '..', '..', 'node_modules', '@microsoft', 'sarif-multitool-linux', 'Sarif.Multitool');
    const out = join(app, 'out', 'validated.sarif');
    const v = spawnSync(tool, ['validate', r.sarifFile, '--rule-kind', 'Gh;Sarif', '--output', out], { encoding: 'utf8', env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' } });
    assert.equal(v.status, 0, `${v.error ?? ''}${v.stdout}${v.stderr}`);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { runs: { results?: { level?: string; ruleId: string; message: { arguments?: string[] } }[] }[] };
    assert.deepEqual((report.runs[0]!.results ?? []).filter((x) => (x.level ?? 'warning') === 'error').map((x) => `${x.ruleId} ${JSON.stringify(x.message.arguments)}`), []);

    // Markdown: the measured index with its work before and after.
    for (const q of failed) assert.ok(r.markdown.includes(q.measurement!.createIndex!), r.markdown);
    assert.match(r.markdown, /today .* -> .* with it/);
  });

  it('says why nothing was measured once the budget is spent', async function () {
    await addUnindexedQueries();
    const r = await check('--measure', '--measure-budget-ms', '1');
    assert.equal(r.code, 3, r.err);
    const failed = r.doc.queries.filter((q) => q.outcome === 'failed');
    assert.equal(failed.length, 2);
    for (const q of failed) {
      assert.ok(q.measurement, q.key);
      assert.ok(q.results.filter((x) => x.fails).every((x) => x.tier !== 'measured'));
    }
    assert.ok(failed.some((q) => q.measurement!.status === 'not-measured' && /budget/.test(q.measurement!.reason ?? '')), JSON.stringify(failed.map((q) => q.measurement)));
  });
});
