// qpi check's configuration: thresholds per rule and per counter, entries for some queries only (a file,
// a folder, a function, one query), each package's own qpi.config.json, refusals of what no rule reads;
// and the inline `qpi-ignore` comments in JS/TS and SQL.

import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Configs, parseConfig } from '../../src/cli/check/config';
import { collectQueries, configForQuery, decide, loadSqlParser, nextLock, selects, type CheckConfig, type QueryRun } from '../../src/core/index';

const TODAY = '2026-06-15';
const range = { startLine: 5, startColumn: 3, endLine: 5, endColumn: 40 };

function queryRun(key: string, extra: Partial<QueryRun> = {}): QueryRun {
  return {
    key, engine: 'postgres', file: key.split(' ')[0]!, shape: 'select ?', title: 'SELECT 1', range, ignores: [], status: 'explained',
    signature: { access: [{ target: 'orders', path: 'index-scan', index: 'orders_customer_idx' }], indexes: ['orders_customer_idx'], blockingSort: false, stages: 'Index Scan' },
    counters: { cost: 100, rows: 10, sharedBlocks: 100 },
    findings: [],
    ...extra,
  };
}

describe('qpi check: configuration', function () {
  it('selects queries by file, folder, scope and whole key, relative to the configuration\'s folder', function () {
    const key = 'packages/shop/src/orders.js postgres repo.open 0123456789abcdef';
    assert.ok(selects('src/orders.js', key, 'packages/shop'));
    assert.ok(selects('src/', key, 'packages/shop'));
    assert.ok(selects('src', key, 'packages/shop'));
    assert.ok(selects('src/orders.js postgres repo.open', key, 'packages/shop'));
    assert.ok(selects('src/orders.js * repo.open', key, 'packages/shop'));
    assert.ok(selects('packages/shop/src/orders.js postgres repo.open 0123456789abcdef', key, ''));
    assert.ok(!selects('src/orders.js postgres repo.closed', key, 'packages/shop'));
    assert.ok(!selects('src/orders.j', key, 'packages/shop'));
    assert.ok(!selects('src/orders.js', key, ''), 'a path is read from the configuration\'s folder');
    assert.ok(!selects('src/orders.js mongodb', key, 'packages/shop'));
  });

  it('applies a threshold per counter, and a query\'s own entry over the file\'s, the longer selector last', function () {
    const before = queryRun('src/a.js postgres f 1');
    const lock = nextLock([before], undefined, {});
    const worse = queryRun('src/a.js postgres f 1', { counters: { cost: 130, rows: 10, sharedBlocks: 105 } });
    const outcome = (c: CheckConfig) => decide([worse], lock, () => c, TODAY).verdicts[0]!;
    assert.equal(outcome({}).outcome, 'failed');
    assert.match(outcome({}).results[0]!.message, /estimated cost 100 -> 130 \(\+30%, threshold 10%\)/);
    assert.equal(outcome({ rules: { 'qpi.check.counters-worse': { threshold: { cost: 0.5 } } } }).outcome, 'passed');
    // Shared blocks grew 5%: a per-counter threshold of 1% fails it, the cost's own stays loose.
    const strict = outcome({ rules: { 'qpi.check.counters-worse': { threshold: { cost: 0.5, sharedBlocks: 0.01 } } } });
    assert.equal(strict.outcome, 'failed');
    assert.match(strict.results[0]!.message, /shared blocks 100 -> 105/);
    assert.doesNotMatch(strict.results[0]!.message, /estimated cost/);
    const perQuery: CheckConfig = {
      rules: { 'qpi.check.counters-worse': { threshold: 0.5 } },
      queries: {
        'src/a.js': { rules: { 'qpi.check.counters-worse': { threshold: 0.05 } } },
        'src/a.js postgres f': { rules: { 'qpi.check.counters-worse': { threshold: 0.4 } } },
      },
      base: '',
    };
    assert.equal(configForQuery(perQuery, worse.key).rules!['qpi.check.counters-worse']!.threshold, 0.4);
    assert.equal(outcome(perQuery).outcome, 'passed');
    assert.equal(outcome({ ...perQuery, queries: { 'src/a.js': perQuery.queries!['src/a.js']! } }).outcome, 'failed');
    // Fail and ignore per query.
    const scan = queryRun('src/a.js postgres g 1', { findings: [{ rule: 'qpi.collection-scan', tier: 'structural', severity: 'warning', message: 'scan', range }] });
    assert.equal(decide([scan], undefined, () => ({ queries: { 'src/a.js * g': { ignore: ['qpi.collection-scan'] } }, base: '' }), TODAY).verdicts[0]!.outcome, 'passed');
    assert.equal(decide([scan], undefined, () => ({ queries: { 'src/a.js * f': { ignore: ['qpi.collection-scan'] } }, base: '' }), TODAY).verdicts[0]!.outcome, 'failed');
    assert.equal(decide([scan], undefined, () => ({ queries: { 'src/': { rules: { 'qpi.collection-scan': { fail: false } } } }, base: '' }), TODAY).verdicts[0]!.outcome, 'passed');
  });

  it('refuses, in one sentence, what no rule reads: unknown rules and keys, a threshold elsewhere, a bad counter', function () {
    const ok = parseConfig(JSON.stringify({ rules: { 'qpi.check.counters-worse': { threshold: { cost: 0.2, keysPerReturned: 1 } } }, queries: { 'src/x.js': { ignore: ['qpi.skip-pagination'] } } }), 'c.json');
    assert.equal(typeof ok, 'object');
    const refusals: [unknown, RegExp][] = [
      [{ rules: { 'qpi.colection-scan': { fail: true } } }, /names "qpi.colection-scan", which is no rule/],
      [{ rules: { 'qpi.skip-pagination': { threshold: 0.2 } } }, /threshold is read by no rule but qpi.check.counters-worse/],
      [{ rules: { 'qpi.check.counters-worse': { threshold: { time: 0.2 } } } }, /object of counters \(cost, sharedBlocks, keysPerReturned, docsPerReturned\)/],
      [{ rules: { 'qpi.check.counters-worse': { threshold: -1 } } }, /must be a fraction from 0/],
      [{ rules: { 'qpi.collection-scan': { fails: true } } }, /has "fails"; a rule reads "fail", "level" and "threshold"/],
      [{ queries: { 'src/x.js': { threshold: 1 } } }, /queries\["src\/x.js"\] has "threshold"/],
      [{ queries: { 'src/x.js': { ignore: ['nope'] } } }, /queries\["src\/x.js"\].ignore names "nope"/],
      [{ query: {} }, /has "query", which qpi check does not read/],
    ];
    for (const [doc, re] of refusals) {
      const r = parseConfig(JSON.stringify(doc), 'c.json');
      assert.equal(typeof r, 'string', JSON.stringify(doc));
      assert.match(r as string, re);
    }
  });

  it('gives each package of a monorepo its own qpi.config.json, with selectors read from its folder', function () {
    const root = mkdtempSync(join(tmpdir(), 'qpi-config-'));
    try {
      mkdirSync(join(root, 'packages', 'shop', 'src'), { recursive: true });
      mkdirSync(join(root, 'packages', 'blog', 'src'), { recursive: true });
      writeFileSync(join(root, 'qpi.config.json'), JSON.stringify({ ignore: ['qpi.skip-pagination'] }));
      writeFileSync(join(root, 'packages', 'shop', 'qpi.config.json'), JSON.stringify({ queries: { 'src/orders.js': { ignore: ['qpi.collection-scan'] } } }));
      const configs = new Configs(root);
      const shop = configs.forFile(join(root, 'packages', 'shop', 'src', 'orders.js'));
      const blog = configs.forFile(join(root, 'packages', 'blog', 'src', 'posts.js'));
      assert.equal(shop.base, 'packages/shop');
      assert.deepEqual(blog.ignore, ['qpi.skip-pagination']);
      assert.equal(blog.base, '');
      assert.deepEqual(configForQuery(shop, 'packages/shop/src/orders.js postgres - 1').ignore, ['qpi.collection-scan']);
      assert.equal(configForQuery(shop, 'packages/shop/src/other.js postgres - 1').ignore, undefined);
      assert.deepEqual(configs.errors, []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('qpi check: inline qpi-ignore', function () {
  before(() => loadSqlParser());

  it('reads a comment block above a query, a trailing comment on its line, and JSDoc-style lines', function () {
    const js = `const { Client } = require('pg');
const client = new Client();

async function a() {
  // qpi-ignore qpi.collection-scan -- ten rows
  // (the table is a lookup table)
  return client.query("SELECT id FROM t WHERE x = 1");
}

async function b() {
  return client.query("SELECT id FROM t WHERE y = 1"); // qpi-ignore qpi.collection-scan, qpi.blocking-sort -- nightly only
}

async function c() {
  /*
   * qpi-ignore * -- being rewritten
   */
  return client.query("SELECT id FROM t WHERE z = 1");
}

async function d() {
  const x = 1; // qpi-ignore qpi.collection-scan -- belongs to the line, not the query below
  return client.query("SELECT id FROM t WHERE w = 1");
}
`;
    const got = collectQueries(js, 'src/t.js');
    assert.deepEqual(got.queries.map((q) => q.ignores.map((i) => `${i.rule}|${i.reason}|${i.line}`)), [
      ['qpi.collection-scan|ten rows|5'],
      ['qpi.collection-scan|nightly only|11', 'qpi.blocking-sort|nightly only|11'],
      ['*|being rewritten|16'],
      [],
    ]);
  });

  it('reads SQL comments, and warns about a rule that does not exist', function () {
    const sql = `-- qpi-ignore qpi.skip-pagination -- an admin page
SELECT id FROM orders ORDER BY id LIMIT 10 OFFSET 5000;

SELECT id FROM orders WHERE status = 'x'; -- qpi-ignore qpi.colection-scan -- typo
`;
    const got = collectQueries(sql, 'src/r.sql');
    assert.deepEqual(got.queries.map((q) => q.ignores.map((i) => i.rule)), [['qpi.skip-pagination'], ['qpi.colection-scan']]);
    assert.deepEqual(got.warnings, ['line 4: qpi-ignore names "qpi.colection-scan", which is no rule of qpi check, so it ignores nothing.']);
  });
});
