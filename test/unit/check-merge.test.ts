// qpi check's parts for a large repository and other CI systems: what migrations do (SQL and MongoDB
// scripts, with their lines), the migration line given as a related location of a lost index (SARIF
// checked by Microsoft's multitool), GitLab's code quality report, and the merge of shards' outputs,
// the same bytes whatever order the inputs come in and the same as one run.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import {
  causeOfLostIndex, decide, decisionFromJson, indexTables, loadSqlParser, mergeJsonDocuments, mergeJunit, mergeLocks, mergeSarif, nextLock, readScriptDdl, readSqlDdl,
  serializeLock, sqlTables, toGitlab, toJsonDocument, toJunit, toSarif, touchedTargets, type GateDecision, type QueryRun,
} from '../../src/core/index';

const TODAY = '2026-06-15';
const SARIF_OPTS = { toolVersion: '0.1.0', helpBase: 'https://example.org/qpi', lockFile: 'qpi.lock.json' };

const MIGRATION_1 = `-- The schema.
CREATE TABLE orders (id serial PRIMARY KEY, customer_id int NOT NULL, status text);
CREATE INDEX orders_customer_idx ON orders (customer_id);
CREATE TABLE customers (id serial, email text, CONSTRAINT customers_email_key UNIQUE (email));
`;
const MIGRATION_2 = `-- Tidy up.

/* no longer needed */
DROP INDEX IF EXISTS public.orders_customer_idx;
ALTER TABLE customers DROP CONSTRAINT customers_email_key;
`;
const MONGO_MIGRATION = `module.exports.up = async (db) => {
  await db.collection('events').dropIndex('user_recent');
  await db.collection('events').createIndex({ kind: 1 }, { name: 'kind_1' });
  db.sessions.drop();
};
`;

function run(key: string, file: string, extra: Partial<QueryRun> = {}): QueryRun {
  return {
    key, engine: 'postgres', file, shape: 'select ?', title: 'SELECT id FROM orders', range: { startLine: 3, startColumn: 1, endLine: 3, endColumn: 30 }, ignores: [], status: 'explained',
    signature: { access: [{ target: 'orders', path: 'index-scan', index: 'orders_customer_idx' }], indexes: ['orders_customer_idx'], blockingSort: false, stages: 'Index Scan' },
    counters: { cost: 8.3, rows: 1 },
    findings: [],
    ...extra,
  };
}

const lostPlan = { access: [{ target: 'orders', path: 'full-scan' as const }], indexes: [], blockingSort: false, stages: 'Seq Scan' };

function validateSarif(text: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'qpi-sarif-'));
  try {
    writeFileSync(join(dir, 'check.sarif'), text);
    const tool = join(__dirname, '..', '..', 'node_modules', '@microsoft', 'sarif-multitool-linux', 'Sarif.Multitool');
    const r = spawnSync(tool, ['validate', join(dir, 'check.sarif'), '--rule-kind', 'Gh;Sarif', '--output', join(dir, 'out.sarif')], { encoding: 'utf8', env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' } });
    assert.equal(r.status, 0, `${r.error ?? ''}${r.stdout}${r.stderr}`);
    const report = JSON.parse(readFileSync(join(dir, 'out.sarif'), 'utf8')) as { runs: { results?: { level?: string; ruleId: string; message: { arguments?: string[] } }[] }[] };
    const errors = (report.runs[0]!.results ?? []).filter((x) => (x.level ?? 'warning') === 'error');
    assert.deepEqual(errors.map((e) => `${e.ruleId} ${JSON.stringify(e.message.arguments)}`), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('qpi check: migrations', function () {
  before(() => loadSqlParser());

  it('reads what SQL migrations do, statement by statement, at the line the code starts', function () {
    const one = readSqlDdl(MIGRATION_1, 'migrations/001.sql');
    assert.deepEqual(one.map((s) => [s.action, s.line, s.targets, s.indexes]), [
      ['create-table', 2, ['orders'], []],
      ['create-index', 3, ['orders'], ['orders_customer_idx']],
      ['create-table', 4, ['customers'], ['customers_email_key']],
    ]);
    const two = readSqlDdl(MIGRATION_2, 'migrations/002.sql');
    assert.deepEqual(two.map((s) => [s.action, s.line, s.column, s.targets, s.indexes]), [
      ['drop-index', 4, 1, [], ['orders_customer_idx']],
      ['drop-constraint', 5, 1, ['customers'], ['customers_email_key']],
    ]);
    const owners = indexTables([...one, ...two]);
    assert.deepEqual([...touchedTargets(two, owners)].sort(), ['customers', 'orders']);
    assert.deepEqual(readSqlDdl('this is not SQL', 'x.sql'), []);
  });

  it('reads MongoDB migration scripts: dropIndex, createIndex and drop on a collection', function () {
    const s = readScriptDdl(MONGO_MIGRATION, 'migrations/003.js', 'js');
    assert.deepEqual(s.map((x) => [x.action, x.line, x.targets, x.indexes]), [
      ['drop-index', 2, ['events'], ['user_recent']],
      ['create-index', 3, ['events'], ['kind_1']],
      ['drop-table', 4, ['sessions'], []],
    ]);
    assert.deepEqual(causeOfLostIndex(s, 'events', 'user_recent'), { file: 'migrations/003.js', line: 2, column: 9, message: "migrations/003.js:2 drops user_recent: db.collection('events').dropIndex('user_recent')" });
  });

  it('names the tables a statement reads', function () {
    assert.deepEqual(sqlTables('SELECT o.id FROM orders o JOIN app.customers c ON c.id = o.customer_id WHERE EXISTS (SELECT 1 FROM refunds r)'), ['customers', 'orders', 'refunds']);
  });

  it('gives a lost index the line that dropped it, as a SARIF related location the multitool accepts', function () {
    this.timeout(120_000);
    const statements = [...readSqlDdl(MIGRATION_1, 'migrations/001.sql'), ...readSqlDdl(MIGRATION_2, 'migrations/002.sql')];
    const cause = causeOfLostIndex(statements, 'orders', 'orders_customer_idx');
    assert.deepEqual([cause?.file, cause?.line], ['migrations/002.sql', 4]);
    assert.equal(causeOfLostIndex(statements, 'orders', 'orders_status_idx'), undefined);
    const lock = nextLock([run('src/a.js postgres f 1', 'src/a.js')], undefined, {});
    const d = decide([run('src/a.js postgres f 1', 'src/a.js', { signature: lostPlan })], lock, () => ({}), TODAY);
    const lost = d.verdicts[0]!.results[0]!;
    assert.deepEqual(lost.lost, { target: 'orders', index: 'orders_customer_idx' });
    lost.related = [cause!];
    const sarif = JSON.parse(toSarif(d, SARIF_OPTS)) as { runs: { results: { message: { text: string }; relatedLocations: { id: number; physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }[] }[] };
    const result = sarif.runs[0]!.results[0]!;
    assert.deepEqual(result.relatedLocations.map((l) => [l.id, l.physicalLocation.artifactLocation.uri, l.physicalLocation.region.startLine]), [[1, 'migrations/002.sql', 4]]);
    assert.match(result.message.text, /Cause: \[migrations\/002\.sql:4 drops orders_customer_idx: DROP INDEX IF EXISTS public\.orders_customer_idx;\]\(1\)/);
    validateSarif(JSON.stringify(sarif));
  });

  it('writes GitLab\'s code quality report: what fails is major, suppressed results are left out', function () {
    const d = decide([
      run('src/a.js postgres f 1', 'src/a.js', { findings: [{ rule: 'qpi.collection-scan', tier: 'structural', severity: 'warning', message: 'No index.', range: { startLine: 7, startColumn: 3, endLine: 8, endColumn: 4 } }] }),
      run('src/a.js postgres g 1', 'src/a.js', { findings: [{ rule: 'qpi.regex-unanchored', tier: 'structural', severity: 'warning', message: 'Regex.', range: { startLine: 9, startColumn: 3, endLine: 9, endColumn: 4 } }] }),
      run('src/b.js postgres - 1', 'src/b.js', { ignores: [{ rule: '*', reason: 'known', line: 2 }], findings: [{ rule: 'qpi.collection-scan', tier: 'structural', severity: 'warning', message: 'No index.', range: { startLine: 3, startColumn: 1, endLine: 3, endColumn: 9 } }] }),
    ], undefined, () => ({}), TODAY);
    const issues = JSON.parse(toGitlab(d, 'qpi.lock.json')) as { description: string; check_name: string; fingerprint: string; severity: string; location: { path: string; lines: { begin: number } } }[];
    assert.deepEqual(issues.map((i) => [i.check_name, i.severity, i.location.path, i.location.lines.begin]), [
      ['qpi.collection-scan', 'major', 'src/a.js', 7],
      ['qpi.regex-unanchored', 'minor', 'src/a.js', 9],
    ]);
    assert.ok(issues.every((i) => /^[0-9a-f]{16}$/.test(i.fingerprint) && i.description.length > 0));
    assert.notEqual(issues[0]!.fingerprint, issues[1]!.fingerprint);
  });
});

describe('qpi check merge', function () {
  before(() => loadSqlParser());

  // Two shards of one run, and the one run they split.
  const previous = nextLock([run('src/a.js postgres f 1', 'src/a.js'), run('src/b.js postgres - 1', 'src/b.js')], undefined, { postgres: { server: '15.20' } });
  previous.waivers = [{ query: 'src/gone.js postgres - 1', rule: '*', reason: 'old', owner: 'ops', expires: '2026-01-01' }];
  const runsA = [run('src/a.js postgres f 1', 'src/a.js', { signature: lostPlan }), run('src/a.js postgres g 1', 'src/a.js', { range: { startLine: 9, startColumn: 1, endLine: 9, endColumn: 20 } })];
  const runsB = [run('src/b.js postgres - 1', 'src/b.js'), run('src/b.js postgres - 1 #2', 'src/b.js', { status: 'not-explainable', why: 'no values for $1', findings: [] })];
  delete (runsB[1] as { signature?: unknown }).signature;
  const env = { postgres: { server: '15.20' } };
  const partA = (k: string): boolean => k.startsWith('src/a.js');
  const partB = (k: string): boolean => k.startsWith('src/b.js') || k.startsWith('src/gone.js');
  const shardA = decide(runsA, previous, () => ({}), TODAY, { inPart: partA });
  const shardB = decide(runsB, previous, () => ({}), TODAY, { inPart: partB });
  const whole = decide([...runsA, ...runsB], previous, () => ({}), TODAY);
  const json = (d: GateDecision) => toJsonDocument(d, d.passed ? 0 : 3, env);

  it('joins --json documents into the document one run gives, in any order', function () {
    assert.deepEqual([shardA.expiredWaivers.length, shardB.expiredWaivers.length], [0, 1], 'an expired waiver is reported by the shard it belongs to only');
    const ab = mergeJsonDocuments([json(shardA), json(shardB)]);
    const ba = mergeJsonDocuments([json(shardB), json(shardA)]);
    assert.ok(ab.ok && ba.ok);
    assert.equal(JSON.stringify(ab.doc), JSON.stringify(ba.doc));
    assert.equal(JSON.stringify(ab.doc), JSON.stringify(json(whole)));
    assert.deepEqual([ab.doc.passed, ab.doc.exitCode, ab.doc.counts.queries, ab.doc.counts.failed], [false, 3, 4, 1]);
    // And every format written from the joined document is the one run's.
    assert.equal(toSarif(decisionFromJson(ab.doc), SARIF_OPTS), toSarif(whole, SARIF_OPTS));
    assert.equal(toJunit(decisionFromJson(ab.doc)), toJunit(whole));
    const clash = mergeJsonDocuments([json(shardA), json(decide([run('src/a.js postgres f 1', 'src/a.js')], previous, () => ({}), TODAY, { inPart: partA }))]);
    assert.ok(!clash.ok && /in two inputs with different results/.test(clash.error));
    const otherServer = mergeJsonDocuments([json(shardA), { ...json(shardB), environment: { postgres: { server: '16.4' } } }]);
    assert.ok(!otherServer.ok && /two PostgreSQL versions, 15.20 and 16.4/.test(otherServer.error));
  });

  it('joins SARIF logs into one run per tool and category, the same bytes in any order, accepted by the multitool', function () {
    this.timeout(120_000);
    const a = { name: 'a.sarif', text: toSarif(shardA, SARIF_OPTS) };
    const b = { name: 'b.sarif', text: toSarif(shardB, SARIF_OPTS) };
    const ab = mergeSarif([a, b]);
    const ba = mergeSarif([b, a]);
    assert.ok(ab.ok && ba.ok);
    assert.equal(ab.text, ba.text);
    const log = JSON.parse(ab.text) as { runs: { tool: { driver: { rules: { id: string }[] } }; results: { ruleId: string; ruleIndex: number }[] }[] };
    assert.equal(log.runs.length, 1);
    const ids = log.runs[0]!.tool.driver.rules.map((r) => r.id);
    assert.deepEqual(ids, [...ids].sort());
    assert.ok(log.runs[0]!.results.every((r) => ids[r.ruleIndex] === r.ruleId));
    const wholeLog = JSON.parse(toSarif(whole, SARIF_OPTS)) as typeof log;
    assert.deepEqual(log.runs[0]!.results.map((r) => r.ruleId).sort(), wholeLog.runs[0]!.results.map((r) => r.ruleId).sort());
    validateSarif(ab.text);
    assert.ok(!mergeSarif([{ name: 'x', text: '{"version":"2.0.0","runs":[]}' }]).ok);
  });

  it('joins JUnit reports, read back by fast-xml-parser with the counts of the cases', function () {
    const ab = mergeJunit([{ name: 'a.xml', text: toJunit(shardA) }, { name: 'b.xml', text: toJunit(shardB) }]);
    const ba = mergeJunit([{ name: 'b.xml', text: toJunit(shardB) }, { name: 'a.xml', text: toJunit(shardA) }]);
    assert.ok(ab.ok && ba.ok);
    assert.equal(ab.text, ba.text);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (n) => ['testsuite', 'testcase'].includes(n) }).parse(ab.text) as { testsuites: { tests: string; failures: string; skipped: string; testsuite: { name: string; testcase: { name: string; failure?: { message: string; '#text': string }; skipped?: { message: string } }[] }[] } };
    assert.deepEqual([doc.testsuites.tests, doc.testsuites.failures, doc.testsuites.skipped], ['4', '1', '1']);
    assert.deepEqual(doc.testsuites.testsuite.map((s) => s.name), ['src/a.js', 'src/b.js']);
    const failure = doc.testsuites.testsuite[0]!.testcase.find((c) => c.failure)!.failure!;
    assert.equal(failure.message, 'qpi.check.lost-index');
    assert.match(failure['#text'], /read through the index orders_customer_idx/);
    assert.equal(doc.testsuites.testsuite[1]!.testcase.find((c) => c.skipped)!.skipped!.message, 'not explainable: no values for $1');
  });

  it('joins the shards\' locks into the lock one run writes', function () {
    const lockA = serializeLock(nextLock(runsA, previous, env, { inPart: () => true }));
    const lockB = serializeLock(nextLock(runsB, previous, env, { inPart: () => true }));
    const ab = mergeLocks([{ name: 'a', text: lockA }, { name: 'b', text: lockB }]);
    const ba = mergeLocks([{ name: 'b', text: lockB }, { name: 'a', text: lockA }]);
    assert.ok(ab.ok && ba.ok);
    assert.equal(ab.text, ba.text);
    assert.equal(ab.text, serializeLock(nextLock([...runsA, ...runsB], previous, env)));
    const bad = mergeLocks([{ name: 'a', text: lockA }, { name: 'c', text: serializeLock(nextLock([run('src/a.js postgres f 1', 'src/a.js')], undefined, env)) }]);
    assert.ok(!bad.ok && /two different entries/.test(bad.error));
  });
});
