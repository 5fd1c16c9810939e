// The pure part of `qpi check`: identities that do not move with lines, the lock's bytes, the policy's
// decisions, and the CI formats (SARIF checked by Microsoft's SARIF multitool, JUnit read back by
// fast-xml-parser, markdown within GitHub's comment limit).

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import {
  collectQueries, decide, loadSqlParser, nextLock, parseLock, serializeLock, toJunit, toMarkdown, toSarif,
  type CheckFinding, type GateDecision, type Lock, type QueryRun,
} from '../../src/core/index';

const TODAY = '2026-06-15';

const ORDERS_JS = `const { Client } = require('pg');
const client = new Client();

async function byCustomer(id) {
  return client.query('SELECT id FROM orders WHERE customer_id = 42');
}

const repo = {
  async open() {
    // qpi-ignore qpi.collection-scan -- the table holds ten rows
    return client.query("SELECT id FROM orders WHERE status = 'open'");
  },
  async closed() {
    return client.query("SELECT id FROM orders WHERE status = 'closed'");
  },
};
`;

const REPORT_SQL = `-- Reports.
SELECT id FROM orders ORDER BY created_at DESC LIMIT 10 OFFSET 20;

-- qpi-ignore * -- run once a year
SELECT count(*) FROM orders WHERE status = 'x';
`;

function range(line: number) {
  return { startLine: line, startColumn: 3, endLine: line, endColumn: 40 };
}

function finding(rule: string, tier: CheckFinding['tier'] = 'structural', severity: CheckFinding['severity'] = 'warning'): CheckFinding {
  return { rule, tier, severity, message: `${rule} here`, range: range(5) };
}

function queryRun(key: string, extra: Partial<QueryRun> = {}): QueryRun {
  return {
    key, engine: 'postgres', file: 'src/a.js', shape: 'select ?', title: 'SELECT 1', range: range(5), ignores: [], status: 'explained',
    signature: { access: [{ target: 'orders', path: 'index-scan', index: 'orders_customer_idx' }], indexes: ['orders_customer_idx'], blockingSort: false, stages: 'Index Scan' },
    counters: { cost: 100, rows: 10 },
    findings: [],
    ...extra,
  };
}

describe('qpi check: identities', function () {
  before(() => loadSqlParser());

  it('gives the same keys when lines move, and names the enclosing function or method', function () {
    const a = collectQueries(ORDERS_JS, 'src/orders.js');
    const b = collectQueries(`// a header\n\n\n${ORDERS_JS.replace('async function byCustomer', '\n\nasync function byCustomer')}`, 'src/orders.js');
    assert.equal(a.queries.length, 3);
    assert.deepEqual(b.queries.map((q) => q.key), a.queries.map((q) => q.key));
    assert.deepEqual(b.queries.map((q) => q.range.startLine), a.queries.map((q) => q.range.startLine + 5));
    assert.deepEqual(a.queries.map((q) => q.scope), ['byCustomer', 'repo.open', 'repo.closed']);
    assert.deepEqual(a.queries.map((q) => q.key.split(' ').slice(0, 3).join(' ')), ['src/orders.js postgres byCustomer', 'src/orders.js postgres repo.open', 'src/orders.js postgres repo.closed']);
  });

  it('takes literal values out of the shape, and tells equal shapes in one scope apart by order', function () {
    const text = 'async function f() {\n  await client.query("SELECT 1 FROM t WHERE a = 5");\n  await client.query("SELECT 1 FROM t WHERE a = 6");\n}\n';
    const qs = collectQueries(text, 'x.js').queries;
    assert.equal(qs[0]!.shape, 'select ? from t where a = ?');
    assert.equal(qs[1]!.key, `${qs[0]!.key} #2`);
  });

  it('reads qpi-ignore comments on the line before a query, in scripts and in SQL', function () {
    const js = collectQueries(ORDERS_JS, 'src/orders.js').queries;
    assert.deepEqual(js.map((q) => q.ignores.map((i) => [i.rule, i.reason])), [[], [['qpi.collection-scan', 'the table holds ten rows']], []]);
    const sql = collectQueries(REPORT_SQL, 'src/report.sql').queries;
    assert.deepEqual(sql.map((q) => q.range.startLine), [2, 5]);
    assert.deepEqual(sql.map((q) => q.ignores.map((i) => [i.rule, i.reason])), [[], [['*', 'run once a year']]]);
  });
});

describe('qpi check: the lock', function () {
  it('is sorted and byte-identical whatever the order the queries came in', function () {
    const runs = [queryRun('src/b.js postgres - 2'), queryRun('src/a.js postgres f 1', { findings: [finding('qpi.skip-pagination'), finding('qpi.blocking-sort')] })];
    const env = { postgres: { server: '15.20' } };
    const one = serializeLock(nextLock(runs, undefined, env));
    const two = serializeLock(nextLock([...runs].reverse(), undefined, env));
    assert.equal(one, two);
    const doc = JSON.parse(one) as Lock;
    assert.deepEqual(Object.keys(doc), ['environment', 'queries', 'version', 'waivers']);
    assert.deepEqual(Object.keys(doc.queries), ['src/a.js postgres f 1', 'src/b.js postgres - 2']);
    assert.deepEqual(doc.queries['src/a.js postgres f 1']!.findings, ['qpi.blocking-sort', 'qpi.skip-pagination']);
    assert.ok(one.endsWith('}\n'));
    const back = parseLock(one);
    assert.ok(back.ok);
    assert.equal(serializeLock(back.lock), one);
  });

  it('keeps the waivers people wrote and refuses one without an owner or a date', function () {
    const waiver = { query: 'k', rule: '*', reason: 'legacy report', owner: 'data-team', expires: '2026-12-31' };
    const lock = nextLock([queryRun('k')], { version: 1, environment: {}, queries: {}, waivers: [waiver] }, {});
    assert.deepEqual(lock.waivers, [waiver]);
    const bad = parseLock(JSON.stringify({ version: 1, queries: {}, waivers: [{ query: 'k', rule: '*', reason: 'x', expires: '2026-12-31' }] }));
    assert.ok(!bad.ok && /needs owner/.test(bad.error));
    const badDate = parseLock(JSON.stringify({ version: 1, queries: {}, waivers: [{ ...waiver, expires: 'next week' }] }));
    assert.ok(!badDate.ok && /YYYY-MM-DD/.test(badDate.error));
  });
});

describe('qpi check: the policy', function () {
  const lockOf = (runs: QueryRun[], waivers: Lock['waivers'] = []): Lock => ({ ...nextLock(runs, undefined, {}), waivers });
  const outcome = (d: GateDecision) => d.verdicts.map((v) => v.outcome);

  it('fails a new query with a structural warning, and passes it once it is in the lock', function () {
    const run = queryRun('q', { findings: [finding('qpi.collection-scan')] });
    const fresh = decide([run], undefined, () => ({}), TODAY);
    assert.deepEqual([fresh.passed, ...outcome(fresh)], [false, 'failed']);
    assert.equal(fresh.verdicts[0]!.baselineState, 'new');
    const locked = decide([run], lockOf([run]), () => ({}), TODAY);
    assert.deepEqual([locked.passed, ...outcome(locked)], [true, 'passed']);
    assert.equal(locked.verdicts[0]!.baselineState, 'unchanged');
  });

  it('does not fail on statistical findings, shallow skips, rules not gated by default, or queries that cannot be explained', function () {
    const runs = [
      queryRun('a', { findings: [finding('qpi.plan-full-scan', 'statistical', 'information')] }),
      queryRun('b', { findings: [finding('qpi.skip-pagination', 'structural', 'information')] }),
      queryRun('c', { findings: [finding('qpi.regex-unanchored')] }),
      queryRun('d', { status: 'not-explainable', why: 'relation "x" does not exist', findings: [finding('qpi.skip-pagination')] }),
    ];
    const d = decide(runs, undefined, () => ({}), TODAY);
    assert.deepEqual(outcome(d), ['passed', 'passed', 'passed', 'not-explainable']);
    assert.ok(d.passed);
    const strict = decide(runs, undefined, () => ({ rules: { 'qpi.regex-unanchored': { fail: true } } }), TODAY);
    assert.deepEqual(outcome(strict), ['passed', 'passed', 'failed', 'not-explainable']);
  });

  it('fails a query in the lock that lost its index, sorts in memory, or grew its cost beyond the threshold', function () {
    const before = queryRun('q');
    const lock = lockOf([before]);
    const lost = queryRun('q', { signature: { access: [{ target: 'orders', path: 'full-scan' }], indexes: [], blockingSort: true, stages: 'Sort > Seq Scan' } });
    const d = decide([lost], lock, () => ({}), TODAY);
    assert.deepEqual(d.verdicts[0]!.results.filter((r) => r.fails).map((r) => r.rule), ['qpi.check.lost-index', 'qpi.check.new-blocking-sort']);
    assert.match(d.verdicts[0]!.results[0]!.message, /orders was read through the index orders_customer_idx.*read in full/);
    assert.equal(d.verdicts[0]!.baselineState, 'updated');
    const worse = decide([queryRun('q', { counters: { cost: 111, rows: 10 } })], lock, () => ({}), TODAY);
    assert.deepEqual(worse.verdicts[0]!.results.map((r) => [r.rule, r.tier, r.fails]), [['qpi.check.counters-worse', 'statistical', true]]);
    assert.deepEqual(outcome(decide([queryRun('q', { counters: { cost: 109, rows: 10 } })], lock, () => ({}), TODAY)), ['passed']);
    const loose = decide([queryRun('q', { counters: { cost: 111, rows: 10 } })], lock, () => ({ rules: { 'qpi.check.counters-worse': { threshold: 0.25 } } }), TODAY);
    assert.deepEqual(outcome(loose), ['passed']);
  });

  it('fails a query the lock holds a plan of when it can no longer be explained, and says why', function () {
    const lock = lockOf([queryRun('q')]);
    const gone = queryRun('q', { status: 'not-explainable', why: 'relation "orders" does not exist' });
    delete (gone as { signature?: unknown }).signature;
    const d = decide([gone], lock, () => ({}), TODAY);
    assert.equal(d.passed, false);
    assert.deepEqual(outcome(d), ['failed']);
    assert.equal(d.verdicts[0]!.results[0]!.rule, 'qpi.check.no-longer-explained');
    assert.match(d.verdicts[0]!.results[0]!.message, /cannot be now: relation "orders" does not exist\.$/);
    // A query that could not be explained at the baseline either fails nothing.
    const never = lockOf([gone]);
    assert.deepEqual(outcome(decide([gone], never, () => ({}), TODAY)), ['not-explainable']);
  });

  it('measures MongoDB counters per document returned, as the measured tier', function () {
    const mongo = (keys: number): QueryRun => queryRun('m', { engine: 'mongodb', signature: { access: [{ target: 'events', path: 'index-scan', index: 'i' }], indexes: ['i'], blockingSort: false, stages: 'FETCH > IXSCAN' }, counters: { keysPerReturned: keys, docsPerReturned: 1 } });
    const d = decide([mongo(3)], lockOf([mongo(1)]), () => ({}), TODAY);
    assert.deepEqual(d.verdicts[0]!.results.map((r) => [r.rule, r.tier]), [['qpi.check.counters-worse', 'measured']]);
  });

  it('suppresses by inline ignore, by waiver and by configuration; an expired waiver fails', function () {
    const run = queryRun('q', { findings: [finding('qpi.collection-scan')] });
    const inline = decide([{ ...run, ignores: [{ rule: 'qpi.collection-scan', reason: 'ten rows', line: 4 }] }], undefined, () => ({}), TODAY);
    assert.deepEqual([outcome(inline)[0], inline.verdicts[0]!.results[0]!.suppressed], ['passed', { kind: 'inSource', justification: 'ten rows' }]);
    const waiver = { query: 'q', rule: 'qpi.collection-scan', reason: 'small table', owner: 'ops', expires: TODAY };
    const waived = decide([run], lockOf([], [waiver]), () => ({}), TODAY);
    assert.equal(outcome(waived)[0], 'passed');
    assert.match(waived.verdicts[0]!.results[0]!.suppressed!.justification, /until 2026-06-15 by ops: small table/);
    const expired = decide([run], lockOf([], [{ ...waiver, expires: '2026-06-14' }]), () => ({}), TODAY);
    assert.deepEqual(expired.verdicts[0]!.results.filter((r) => r.fails).map((r) => r.rule), ['qpi.collection-scan', 'qpi.check.waiver-expired']);
    const orphan = decide([], lockOf([], [{ ...waiver, query: 'gone', expires: '2026-01-01' }]), () => ({}), TODAY);
    assert.deepEqual([orphan.passed, orphan.expiredWaivers.length], [false, 1]);
    const ignored = decide([run], undefined, () => ({ ignore: ['qpi.collection-scan'] }), TODAY);
    assert.deepEqual([outcome(ignored)[0], ignored.verdicts[0]!.results[0]!.suppressed?.kind], ['passed', 'external']);
  });
});

describe('qpi check: outputs', function () {
  function sample(): GateDecision {
    const runs = [
      queryRun('src/a.js postgres f 1', { findings: [finding('qpi.collection-scan')] }),
      queryRun('src/a.js postgres g 2', { findings: [{ ...finding('qpi.skip-pagination'), message: 'OFFSET <20> & "more"' }], ignores: [{ rule: '*', reason: 'known', line: 4 }] }),
      queryRun('src/b.sql postgres - 3', { file: 'src/b.sql', status: 'not-explainable', why: 'no values for $1', findings: [] }),
      queryRun('src/b.sql postgres - 4', { file: 'src/b.sql' }),
    ];
    return decide(runs, undefined, () => ({}), TODAY);
  }

  it('writes SARIF 2.1.0 that Microsoft\'s SARIF multitool accepts with no error, fingerprints free of line numbers', function () {
    this.timeout(120_000);
    const d = sample();
    const text = toSarif(d, { toolVersion: '0.1.0', helpBase: 'https://example.org/qpi', lockFile: 'qpi.lock.json' });
    const log = JSON.parse(text) as { version: string; runs: { tool: { driver: { rules: Record<string, unknown>[] } }; results: Record<string, unknown>[] }[] };
    assert.equal(log.version, '2.1.0');
    const results = log.runs[0]!.results as { ruleId: string; level: string; partialFingerprints: { primaryLocationLineHash: string }; suppressions?: unknown[]; baselineState: string; locations: { physicalLocation: { region: { startLine: number } } }[] }[];
    assert.deepEqual(results.map((r) => [r.ruleId, r.level, r.baselineState, r.suppressions !== undefined]), [
      ['qpi.collection-scan', 'error', 'new', false],
      ['qpi.skip-pagination', 'warning', 'new', true],
    ]);
    assert.equal(results[0]!.locations[0]!.physicalLocation.region.startLine, 5);
    const moved = decide(sample().verdicts.map((v) => ({ ...v.run, range: range(50) })), undefined, () => ({}), TODAY);
    const movedResults = (JSON.parse(toSarif(moved, { toolVersion: '0.1.0', helpBase: 'https://example.org/qpi', lockFile: 'qpi.lock.json' })) as typeof log).runs[0]!.results as typeof results;
    assert.deepEqual(movedResults.map((r) => r.partialFingerprints.primaryLocationLineHash), results.map((r) => r.partialFingerprints.primaryLocationLineHash));
    const rule = log.runs[0]!.tool.driver.rules.find((r) => r.id === 'qpi.collection-scan') as { shortDescription: { text: string }; fullDescription: { text: string }; help: { text: string; markdown: string }; helpUri: string; defaultConfiguration: { level: string }; properties: { precision: string; tags: string[] } };
    assert.ok(rule.shortDescription.text && rule.fullDescription.text && rule.help.text && rule.help.markdown);
    assert.deepEqual([rule.defaultConfiguration.level, rule.properties.precision, rule.properties.tags], ['error', 'very-high', ['performance', 'database', 'structural']]);

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
  });

  it('writes JUnit XML with one test case per query, read back by fast-xml-parser', function () {
    const xml = toJunit(sample());
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase'].includes(name) }).parse(xml) as { testsuites: { tests: string; failures: string; skipped: string; testsuite: { name: string; testcase: { name: string; line: string; failure?: { message: string }; skipped?: { message: string } }[] }[] } };
    const cases = doc.testsuites.testsuite.flatMap((s) => s.testcase);
    assert.deepEqual([doc.testsuites.tests, doc.testsuites.failures, doc.testsuites.skipped], ['4', '1', '1']);
    assert.equal(cases.length, 4);
    assert.deepEqual(cases.filter((c) => c.failure).map((c) => c.failure!.message), ['qpi.collection-scan']);
    assert.deepEqual(cases.filter((c) => c.skipped).map((c) => c.skipped!.message), ['not explainable: no values for $1']);
    assert.deepEqual(doc.testsuites.testsuite.map((s) => s.name), ['src/a.js', 'src/b.sql']);
  });

  it('writes a markdown summary with the failed queries first, within GitHub\'s comment limit', function () {
    const runs: QueryRun[] = [];
    for (let i = 0; i < 3000; i++) runs.push(queryRun(`src/q.js postgres f ${i}`, { findings: [finding(i === 2999 ? 'qpi.collection-scan' : 'qpi.regex-unanchored')] }));
    const md = toMarkdown(decide(runs, undefined, () => ({}), TODAY));
    assert.ok(md.length < 65_000, String(md.length));
    assert.match(md, /^## qpi check: failed/);
    const lines = md.split('\n').filter((l) => l.startsWith('- '));
    assert.match(lines[0]!, /:x:/);
    assert.match(md, /and \d+ more queries/);
  });
});
