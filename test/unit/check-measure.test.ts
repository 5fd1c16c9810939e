// `qpi check --measure`, the pure part: a failing result carries the measured advice and becomes tier
// measured only where the measurement confirms it; a passing one carries nothing; the outputs (SARIF,
// markdown, JUnit, --json read back) show the measured index with its work today and with it; and
// --measure-budget-ms without --measure is a usage error.

import { strict as assert } from 'node:assert';
import { run } from '../../src/cli/main';
import {
  decide, decisionFromJson, gateCounts, measurementSentence, toJsonDocument, toJunit, toMarkdown, toSarif,
  type CheckMeasurement, type QueryRun,
} from '../../src/core/index';

const TODAY = '2026-06-15';
const range = { startLine: 4, startColumn: 3, endLine: 4, endColumn: 40 };

const MEASURED: CheckMeasurement = {
  status: 'measured',
  index: 'orders (status)',
  createIndex: 'CREATE INDEX ON orders (status);',
  action: 'create',
  label: 'measured on the whole table (50,000 rows)',
  unit: 'buffers',
  before: { work: 370, text: '370 buffers, 40 rows', plan: 'Seq Scan on orders' },
  after: { work: 3, text: '3 buffers, 40 rows', plan: 'Index Scan using orders_status_idx on orders' },
  confirms: true,
};

function scanRun(measurement?: CheckMeasurement, key = 'src/a.js postgres open abc'): QueryRun {
  return {
    key, engine: 'postgres', file: 'src/a.js', shape: 'select ? from orders where status = ?', title: 'SELECT id FROM orders', range, ignores: [], status: 'explained',
    signature: { access: [{ target: 'orders', path: 'full-scan' }], indexes: [], blockingSort: false, stages: 'Seq Scan' },
    counters: { cost: 900, rows: 40 },
    findings: [{ rule: 'qpi.collection-scan', tier: 'structural', severity: 'warning', message: 'No index serves the filter.', range, suggestion: 'CREATE INDEX ON orders (status, id);' }],
    ...(measurement ? { measurement } : {}),
  };
}

describe('qpi check --measure: the measured advice on failing results', function () {
  it('makes a confirmed failing result tier measured, with the measured index as its suggestion', function () {
    const d = decide([scanRun(MEASURED)], undefined, () => ({}), TODAY);
    const r = d.verdicts[0]!.results[0]!;
    assert.equal(r.fails, true);
    assert.equal(r.tier, 'measured');
    assert.equal(r.suggestion, MEASURED.createIndex);
    assert.deepEqual(r.measured, MEASURED);
    assert.equal(gateCounts(d).byTier.measured, 1);
  });

  it('keeps the tier when the measurement does not confirm, or nothing was measured, and attaches nothing to a passing result', function () {
    const refuted: CheckMeasurement = { ...MEASURED, confirms: false } as CheckMeasurement;
    for (const m of [refuted, { status: 'not-measured', reason: 'the time budget ran out before it' } as CheckMeasurement]) {
      const r = decide([scanRun(m)], undefined, () => ({}), TODAY).verdicts[0]!.results[0]!;
      assert.equal(r.tier, 'structural');
      assert.equal(r.suggestion, 'CREATE INDEX ON orders (status, id);');
      assert.deepEqual(r.measured, m);
    }
    const ignored = decide([scanRun(MEASURED)], undefined, () => ({ ignore: ['qpi.collection-scan'] }), TODAY).verdicts[0]!.results[0]!;
    assert.equal(ignored.fails, false);
    assert.equal(ignored.measured, undefined);
    assert.equal(ignored.tier, 'structural');
  });

  it('shows the measured index and its work today and with it in SARIF, markdown, JUnit and --json', function () {
    const d = decide([scanRun(MEASURED)], undefined, () => ({}), TODAY);
    const sentence = measurementSentence(MEASURED);
    assert.match(sentence, /orders \(status\)/);
    assert.match(sentence, /370 buffers, 40 rows today, 3 buffers, 40 rows with it/);
    const sarif = JSON.parse(toSarif(d, { toolVersion: '0.1.0', helpBase: 'https://example.org/qpi', lockFile: 'qpi.lock.json' })) as { runs: { results: { message: { text: string; markdown: string }; properties: { tier: string; measured?: unknown } }[] }[] };
    const res = sarif.runs[0]!.results[0]!;
    assert.ok(res.message.text.includes(sentence));
    assert.match(res.message.markdown, /\| today \| 370 buffers, 40 rows \| `Seq Scan on orders` \|/);
    assert.equal(res.properties.tier, 'measured');
    assert.deepEqual(res.properties.measured, MEASURED);
    const md = toMarkdown(d);
    assert.ok(md.includes('measured advice (measured on the whole table (50,000 rows)): `CREATE INDEX ON orders (status);`, confirms the finding'), md);
    assert.ok(md.includes('370 buffers, 40 rows today (`Seq Scan on orders`) -> 3 buffers, 40 rows with it'), md);
    assert.ok(toJunit(d).includes('3 buffers, 40 rows with it'));
    const doc = JSON.parse(JSON.stringify(toJsonDocument(d, 3, {}))) as Parameters<typeof decisionFromJson>[0];
    assert.deepEqual(doc.queries[0]!.measurement, MEASURED);
    assert.deepEqual(decisionFromJson(doc).verdicts[0]!.run.measurement, MEASURED);
    assert.equal(toMarkdown(decisionFromJson(doc)), md);
    const notMeasured = toMarkdown(decide([scanRun({ status: 'not-measured', reason: 'needs write access' })], undefined, () => ({}), TODAY));
    assert.ok(notMeasured.includes('not measured: needs write access'), notMeasured);
  });

  it('refuses --measure-budget-ms without --measure, and a budget that is not a number', async function () {
    for (const args of [['--measure-budget-ms', '1000'], ['--measure', '--measure-budget-ms', 'soon']]) {
      let err = '';
      const code = await run(['check', '--uri', 'postgres://localhost/x', ...args], { stdout: () => {}, stderr: (s: string) => { err += s; }, readFile: async () => '' } as never);
      assert.equal(code, 64, err);
      assert.match(err, /--measure-budget-ms/);
    }
  });
});
