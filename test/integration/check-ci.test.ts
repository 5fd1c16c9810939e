// `qpi check` as a CI pipeline runs it, on real servers, with the fixture application of
// test/fixtures/check-app: --update that records failures says what it accepted and exits as the next
// check will; --changed-since in a git repository checks the changed files and the queries on what a
// new migration touches, and points the lost index at the migration's line; --shard and `qpi check
// merge` give the outputs one run gives; --gitlab writes the code quality report.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shardOf } from '../../src/cli/check/index';
import { run } from '../../src/cli/main';
import { capturedIo } from './support/cliIo';
import { copyCheckApp, loadCheckDatabases, pgAdmin } from './support/checkFixture';
import { env, pgUriFor } from './support/env';

const PG_DB = 'qpi_check_ci';
const MONGO_DB = 'qpi_check_app';

interface CheckJson {
  passed: boolean;
  exitCode: number;
  counts: { queries: number; failed: number };
  queries: { key: string; file: string; line: number; outcome: string; results: { rule: string; fails: boolean; related?: { file: string; line: number }[] }[] }[];
  update?: { added: number; updated: number; removed: number; unchanged: number; accepted: { rule: string; file: string; line: number }[] };
}

describe('qpi check in CI pipelines, on real servers', function () {
  let app: string;
  const pgUri = (): string => pgUriFor(PG_DB);

  async function check(...extra: string[]): Promise<{ code: number; out: string; err: string }> {
    const io = capturedIo();
    const code = await run(['check', join(app, 'src'), '--uri', pgUri(), '--uri', env.mongoUri, ...extra], io);
    return { code, out: io.out, err: io.err };
  }
  const lockArg = (): string[] => ['--lock', join(app, 'qpi.lock.json')];


  function git(...args: string[]): string {
    return execFileSync('git', ['-c', 'user.name=CI', '-c', 'user.email=ci@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: app, encoding: 'utf8' });
  }

  before(async function () {
    await loadCheckDatabases(PG_DB, MONGO_DB);
  });

  beforeEach(function () {
    app = copyCheckApp('qpi-check-ci-');
  });

  afterEach(function () {
    rmSync(app, { recursive: true, force: true });
  });

  it('--update that records a failure says it accepted it, exits 0, and the next check passes; an expired waiver still exits 3', async function () {
    assert.equal((await check(...lockArg(), '--update')).code, 0);
    const file = join(app, 'src', 'orders.js');
    const changed = readFileSync(file, 'utf8').replace('\nmodule.exports', `\nasync function openOrders() {\n  return client.query("SELECT id FROM orders WHERE status = 'open'");\n}\n\nmodule.exports`);
    writeFileSync(file, changed);
    const line = changed.split('\n').findIndex((l) => l.includes("status = 'open'")) + 1;
    assert.equal((await check(...lockArg())).code, 3, 'the new query fails without --update');

    const text = await check(...lockArg(), '--update');
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, new RegExp(`^src/orders\\.js:${line}:\\d+ accepted qpi\\.collection-scan \\(structural\\) `, 'm'));
    assert.doesNotMatch(text.out, / FAIL /);
    assert.match(text.err, /qpi\.lock\.json written: 1 added, 0 updated, 0 removed, 6 unchanged\. 1 failure of the check against the previous lock is now the baseline/);
    assert.match(text.err, /A check against the written lock passes\./);
    const next = await check(...lockArg(), '--json');
    assert.equal(next.code, 0, next.err);

    // A waiver past its date is a person's to renew: --update records the rest and still exits 3.
    const lockFile = join(app, 'qpi.lock.json');
    const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { queries: Record<string, unknown>; waivers: unknown[] };
    const key = Object.keys(lock.queries).find((k) => k.includes(' openOrders '))!;
    lock.waivers = [{ query: key, rule: 'qpi.collection-scan', reason: 'until the index ships', owner: 'shop-team', expires: '2020-01-01' }];
    writeFileSync(lockFile, JSON.stringify(lock));
    const expired = await check(...lockArg(), '--update', '--json');
    assert.equal(expired.code, 3, expired.err);
    const doc = JSON.parse(expired.out) as CheckJson;
    assert.equal(doc.exitCode, 3);
    assert.deepEqual(doc.update!.accepted, []);
    assert.ok(doc.queries.some((q) => q.results.some((r) => r.rule === 'qpi.check.waiver-expired' && r.fails)));
    assert.match(expired.err, /still fails: --update does not renew an expired waiver/);
  });

  it('--changed-since checks changed files and the queries on what a new migration touches, pointing at its line', async function () {
    assert.equal((await check(...lockArg(), '--update', '--schema', join(app, 'migrations'))).code, 0);
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'baseline');
    git('branch', 'base');
    // A branch that drops an index in a new migration, run on the CI database as a migration step would.
    git('checkout', '-q', '-b', 'feature');
    const migration = '-- Emails are looked up by the search service now.\n\nDROP INDEX customers_email_idx;\n';
    writeFileSync(join(app, 'migrations', '002_drop_email_index.sql'), migration);
    git('add', '.');
    git('commit', '-q', '-m', 'drop an index');
    await pgAdmin(PG_DB, (c) => c.query('DROP INDEX customers_email_idx'));
    try {
      const sarifFile = join(app, 'out', 'check.sarif');
      const r = await check(...lockArg(), '--schema', join(app, 'migrations'), '--changed-since', 'base', '--json', '--sarif', sarifFile);
      assert.equal(r.code, 3, r.err);
      assert.match(r.err, /--changed-since base: 1 changed file; migrations and schema files touch customers; 1 of 6 queries checked\./);
      const doc = JSON.parse(r.out) as CheckJson;
      assert.deepEqual(doc.queries.map((q) => [q.file, q.outcome]), [['src/orders.js', 'failed']]);
      const lost = doc.queries[0]!.results.find((x) => x.rule === 'qpi.check.lost-index')!;
      assert.deepEqual(lost.related!.map((p) => [p.file, p.line]), [['migrations/002_drop_email_index.sql', 3]]);
      const sarif = JSON.parse(readFileSync(sarifFile, 'utf8')) as { runs: { results: { ruleId: string; relatedLocations?: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }[] }[] };
      const alert = sarif.runs[0]!.results.find((x) => x.ruleId === 'qpi.check.lost-index')!;
      assert.deepEqual(alert.relatedLocations!.map((l) => [l.physicalLocation.artifactLocation.uri, l.physicalLocation.region.startLine]), [['migrations/002_drop_email_index.sql', 3]]);

      // A changed application file is checked too; the files nobody changed are not, and the lock keeps them.
      const events = join(app, 'src', 'events.js');
      writeFileSync(events, `${readFileSync(events, 'utf8')}\n// touched\n`);
      const both = await check(...lockArg(), '--schema', join(app, 'migrations'), '--changed-since', 'base', '--json', '--update');
      const bothDoc = JSON.parse(both.out) as CheckJson;
      assert.deepEqual([...new Set(bothDoc.queries.map((q) => q.file))].sort(), ['src/events.js', 'src/orders.js']);
      assert.equal(bothDoc.queries.length, 3);
      assert.equal(bothDoc.update!.removed, 0);
      assert.equal(Object.keys((JSON.parse(readFileSync(join(app, 'qpi.lock.json'), 'utf8')) as { queries: object }).queries).length, 6);
      const unknown = await check(...lockArg(), '--changed-since', 'no-such-branch');
      assert.equal(unknown.code, 2);
      assert.match(unknown.err, /--changed-since no-such-branch: git knows no commit shared by no-such-branch and HEAD/);
    } finally {
      await pgAdmin(PG_DB, (c) => c.query('CREATE INDEX customers_email_idx ON customers (email)'));
    }
  });

  it('--shard i/n runs merge into the outputs and the lock one run writes', async function () {
    this.timeout(240_000);
    const out = (n: string): string => join(app, 'out', n);
    // Every lock sits in the application's root: paths in it are relative to its folder.
    const atRoot = (n: string): string => join(app, n);
    // A query the gate cannot explain (the code gives its whole filter), so the merged outputs count a skipped one.
    const events = join(app, 'src', 'events.js');
    writeFileSync(events, readFileSync(events, 'utf8').replace('\nmodule.exports', `\nasync function anyEvents(filter) {\n  return db.collection('events').find(filter).toArray();\n}\n\nmodule.exports`));
    const whole = await check('--lock', atRoot('whole.lock.json'), '--update');
    assert.equal(whole.code, 0, whole.err);
    // A new query that fails, so the merged verdict has something to say.
    const file = join(app, 'src', 'orders.js');
    writeFileSync(file, readFileSync(file, 'utf8').replace('\nmodule.exports', `\nasync function openOrders() {\n  return client.query("SELECT id FROM orders WHERE status = 'open'");\n}\n\nmodule.exports`));
    cpSync(atRoot('whole.lock.json'), join(app, 'qpi.lock.json'));
    const one = await check(...lockArg(), '--json', '--sarif', out('whole.sarif'), '--junit', out('whole.xml'), '--gitlab', out('whole.gitlab.json'));
    assert.equal(one.code, 3, one.err);
    const n = 2;
    const shards = ['events.js', 'orders.js', 'reports.sql'].map((f) => shardOf(`src/${f}`, n));
    for (let i = 1; i <= n; i++) {
      const r = await check(...lockArg(), '--shard', `${i}/${n}`, '--json', '--sarif', out(`s${i}.sarif`), '--junit', out(`s${i}.xml`));
      assert.equal(r.code, shards.some((s, k) => s === i && k === 1) ? 3 : 0, r.err);
      writeFileSync(out(`s${i}.json`), r.out);
      const doc = JSON.parse(r.out) as CheckJson & { part: string };
      assert.equal(doc.part, `shard ${i}/${n}`);
    }
    const io = capturedIo();
    const code = await run(['check', 'merge', out('s1.json'), out('s2.json'), '--json', '--gitlab', out('merged.gitlab.json')], io);
    assert.equal(code, 3, io.err);
    assert.equal(io.out, one.out, 'the merged --json document is the one run\'s');
    assert.equal(readFileSync(out('merged.gitlab.json'), 'utf8'), readFileSync(out('whole.gitlab.json'), 'utf8'));
    const sarifIo = capturedIo();
    assert.equal(await run(['check', 'merge', out('s2.sarif'), out('s1.sarif'), '--sarif', out('merged.sarif'), '--junit', out('merged.xml'), out('s1.xml'), out('s2.xml')], sarifIo), 0, sarifIo.err);
    const results = (f: string) => (JSON.parse(readFileSync(f, 'utf8')) as { runs: { results: { ruleId: string; partialFingerprints: unknown }[] }[] }).runs[0]!.results.map((x) => JSON.stringify(x)).sort();
    assert.deepEqual(results(out('merged.sarif')), results(out('whole.sarif')));
    assert.ok(existsSync(out('merged.xml')));
    assert.match(readFileSync(out('merged.xml'), 'utf8'), /<testsuites name="qpi check" tests="8" failures="1" skipped="1" errors="0">/);

    // Each shard's --update writes its part; the merged lock is the one run's.
    for (let i = 1; i <= n; i++) assert.equal((await check('--lock', atRoot(`l${i}.json`), '--shard', `${i}/${n}`, '--update')).code, 0);
    await check('--lock', atRoot('whole2.lock.json'), '--update');
    const lockIo = capturedIo();
    assert.equal(await run(['check', 'merge', atRoot('l1.json'), atRoot('l2.json'), '--lock', out('merged.lock.json')], lockIo), 0, lockIo.err);
    assert.equal(readFileSync(out('merged.lock.json'), 'utf8'), readFileSync(atRoot('whole2.lock.json'), 'utf8'));
  });
});
