// `qpi compare` end to end through the CLI's entry: real plan pairs (truth plans measured on MongoDB 6.0.5
// and PostgreSQL 15, an update before and after its index from the corpus), the text report, the JSON
// document of docs/cli.md, and the refusals with their exit codes.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../src/cli/main';
import { captureIo } from './cli-io';
import { comparePlans } from '../../src/core/compare';
import { loadPlan } from '../../src/core/index';

const TRUTH = join(__dirname, '..', 'fixtures', 'truth-plans');
const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

/** The explain output a truth plan file holds, as the text a user would have saved. */
function truthText(caseId: string, file: string): string {
  const doc = JSON.parse(readFileSync(join(TRUTH, caseId, file), 'utf8')) as { hinted_explain?: unknown; natural?: unknown };
  return JSON.stringify(doc.hinted_explain ?? doc.natural, null, 1);
}

const capture = (files: Record<string, string> = {}, stdin = '') => captureIo({ files, stdin });

function verdictOf(before: string, after: string): string {
  const a = loadPlan(before);
  const b = loadPlan(after);
  assert.ok(a.ok && b.ok);
  const c = comparePlans(a.plan, b.plan);
  assert.ok(c.ok);
  return c.verdict;
}

describe('qpi compare', () => {
  const m01 = 'm01_orders_elemmatch_sort';
  const files = {
    'collscan.json': truthText(m01, 'loser3_COLLSCAN__COLLSCAN.json'),
    'oracle.json': truthText(m01, 'oracle__country_id_1_order_details.product_id_1_created_at_-1.json'),
    'offset.json': truthText('p10e1_offset_pagination', 'loser2_textbook___a_b_.json'),
    'keyset.json': truthText('p10e2_keyset_pagination', 'oracle___a_b_.json'),
  };

  it('prints the verdict, the totals before and after, and each node marked', async () => {
    const io = capture(files);
    assert.equal(await run(['compare', 'collscan.json', 'oracle.json'], io), 0);
    assert.equal(io.err, '');
    const lines = io.out.split('\n');
    assert.match(lines[0]!, /^MongoDB plans compared: collscan\.json \(2 nodes\) → oracle\.json \(3 nodes\)$/);
    assert.equal(lines[1], verdictOf(files['collscan.json'], files['oracle.json']));
    assert.ok(lines.some((l) => /^\s+docs examined\s+200,000\s+10\s+20,000x fewer$/.test(l)), io.out);
    assert.ok(lines.some((l) => /^\s+sorts in memory\s+yes\s+no\s+better$/.test(l)), io.out);
    assert.match(io.out, /^Nodes: 0 unchanged, 1 changed, 2 added, 1 removed/m);
    assert.match(io.out, /^ {2}- SORT /m);
    assert.match(io.out, /^ {2}~ +COLLSCAN orders → IXSCAN /m);
    assert.match(io.out, /^Findings gone: .*mongo\.collscan/m);
  });

  it('writes the documented JSON document', async () => {
    const io = capture(files);
    assert.equal(await run(['compare', 'offset.json', 'keyset.json', '--json'], io), 0);
    const doc = JSON.parse(io.out) as {
      schemaVersion: number; engine: string; direction: string; verdict: string; counts: Record<string, number>;
      nodes: { status: string; before: { kind: string } | null; after: { kind: string } | null; differences: string[] }[];
      totals: { key: string; before: number | null; after: number | null; material: boolean; trend: string }[];
      findings: { disappeared: { code: string }[] };
    };
    assert.equal(doc.schemaVersion, 1);
    assert.equal(doc.engine, 'postgres');
    assert.equal(doc.direction, 'better');
    assert.equal(doc.verdict, verdictOf(files['offset.json'], files['keyset.json']));
    assert.deepEqual(doc.nodes.map((n) => [n.status, n.before?.kind, n.after?.kind]), [['changed', 'Limit', 'Limit'], ['changed', 'Index Scan', 'Index Scan']]);
    const buffers = doc.totals.find((t) => t.key === 'sharedBlocks')!;
    assert.equal(buffers.trend, 'better');
    assert.ok(buffers.before! > buffers.after!);
    assert.ok(doc.findings.disappeared.some((f) => f.code === 'pg.offset-reads'));
  });

  it('reads one of the plans from standard input', async () => {
    const io = capture(files, files['collscan.json']);
    assert.equal(await run(['compare', '-', 'oracle.json'], io), 0);
    assert.match(io.out, /^MongoDB plans compared: standard input \(2 nodes\)/);
  });

  it('compares corpus files: an update before and after its index', async () => {
    const io = capture();
    const before = join(CORPUS, 'mongosh-update-explain-update-collscan-6.0.js');
    const after = join(CORPUS, 'mongosh-update-explain-update-fetch-ixscan-6.0.js');
    assert.equal(await run(['compare', before, after], io), 0);
    assert.match(io.out, /no longer scans the whole collection\.\n/);
    assert.match(io.out, /^ {2}\+ {3}FETCH/m);
  });

  it('refuses plans of two engines, a missing file and a plan it cannot read, in one sentence with exit 2', async () => {
    let io = capture(files);
    assert.equal(await run(['compare', 'oracle.json', 'keyset.json'], io), 2);
    assert.equal(io.out, '');
    assert.match(io.err, /^The plans come from different engines \(MongoDB before, PostgreSQL after\) and cannot be compared\.\n$/);
    io = capture(files);
    assert.equal(await run(['compare', 'oracle.json', join(CORPUS, 'no-such-plan.json')], io), 2);
    assert.match(io.err, /^There is no file .*no-such-plan\.json\.\n$/);
    io = capture({ ...files, 'cut.json': files['oracle.json'].slice(0, 200) });
    assert.equal(await run(['compare', 'cut.json', 'oracle.json'], io), 2);
    assert.match(io.err, /^cut\.json: [^\n]+\.\n$/);
  });

  it('needs exactly two plans, at most one from standard input', async () => {
    let io = capture(files);
    assert.equal(await run(['compare', 'oracle.json'], io), 64);
    assert.match(io.err, /takes two plan files/);
    io = capture(files);
    assert.equal(await run(['compare', '-', '-'], io), 64);
    io = capture(files);
    assert.equal(await run(['compare', 'oracle.json', 'collscan.json', '--bogus'], io), 64);
  });
});
