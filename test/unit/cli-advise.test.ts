// `qpi advise` without a connection: the engine read from the text, the documented --json document (key
// patterns in key order, PostgreSQL columns with direction and the CREATE INDEX text, rewrites, rules,
// verification left not-run), the text report, and the exit codes 0 / 2 / 64. The queries are the truth
// cases' own texts, so the suggestions checked here are the ones measured on real servers.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { adviceText, detectEngine } from '../../src/cli/advise';
import type { LiveAdvice } from '../../src/adapters/advise';
import { adviseMongo } from '../../src/core/advice/mongoAdvisor';
import { run } from '../../src/cli/main';
import { builtCli } from './builtCli';
import { captureIo } from './cli-io';

const truthDir = join(__dirname, '..', 'fixtures', 'truth');

function caseText(id: string): string {
  return (JSON.parse(readFileSync(join(truthDir, id, 'case.json'), 'utf8')) as { query: { text: string } }).query.text;
}

const capture = () => captureIo();

interface JsonSuggestion {
  rank: number;
  action: string;
  rule: string;
  keyPattern?: Record<string, number>;
  collection?: string;
  table?: string;
  columns?: { column: string; direction: string; nulls: string; expression: boolean }[];
  include?: string[];
  createIndex: string | null;
  servesQueryAsWritten: boolean;
  rewrites: { rule: string; text: string; parameters: string[] }[];
  verification: { status: string };
  conditions: { text: string; decided: string | null }[];
}

interface JsonAdvice {
  schemaVersion: number;
  engine: string;
  connected: boolean;
  serverVersion: string | null;
  suggestions: JsonSuggestion[];
  rewrites: { rule: string; text: string; parameters: string[] }[];
  existingIndexes: string[] | null;
  notes: string[];
}

async function adviseJson(...args: string[]): Promise<{ doc: JsonAdvice; raw: string }> {
  const io = capture();
  const code = await run(['advise', ...args, '--json'], io);
  assert.equal(code, 0, io.err);
  assert.equal(io.err, '');
  return { doc: JSON.parse(io.out) as JsonAdvice, raw: io.out };
}

describe('qpi advise (offline)', () => {
  it('gives the orders query its ESR index as an ordered key pattern, with the createIndex text', async () => {
    const { doc, raw } = await adviseJson('--query', caseText('m01_orders_elemmatch_sort'));
    assert.equal(doc.schemaVersion, 1);
    assert.equal(doc.engine, 'mongodb');
    assert.equal(doc.connected, false);
    assert.equal(doc.serverVersion, null);
    assert.equal(doc.existingIndexes, null);
    const first = doc.suggestions[0]!;
    assert.equal(first.rank, 1);
    assert.equal(first.action, 'create');
    assert.equal(first.collection, 'orders');
    // Key order is the whole point: compare the serialised pattern, not a deep-equal that ignores order.
    assert.equal(JSON.stringify(first.keyPattern), '{"country_id":1,"order_details.product_id":1,"created_at":-1}');
    assert.ok(raw.includes('"keyPattern": {\n        "country_id": 1,\n        "order_details.product_id": 1,\n        "created_at": -1\n      }'));
    assert.equal(first.createIndex, 'db.orders.createIndex({country_id: 1, "order_details.product_id": 1, created_at: -1})');
    assert.deepEqual(first.verification, { status: 'not-run' });
    assert.ok(doc.notes.some((n) => /give --uri/.test(n)));
  });

  it('counts a 2-value $in as equality before the sort, and a 250-value $in after it', async () => {
    const small = (await adviseJson('--query', caseText('m03a_in2_explode_sort_merge'))).doc.suggestions[0]!;
    assert.equal(small.rule, 'explode-in');
    assert.equal(JSON.stringify(small.keyPattern), '{"e":1,"r":1,"s":1}');
    const big = (await adviseJson('--query', caseText('m03b_in250_no_explode'))).doc.suggestions[0]!;
    assert.equal(JSON.stringify(big.keyPattern), '{"e":1,"s":1,"r":1}');
  });

  it('attaches the keyset rewrite to skip pagination, with its parameter', async () => {
    const { doc } = await adviseJson('--query', caseText('m05a_skip_pagination'));
    const first = doc.suggestions[0]!;
    assert.equal(JSON.stringify(first.keyPattern), '{"e":1,"s":1}');
    const keyset = first.rewrites.find((r) => r.rule === 'keyset');
    assert.ok(keyset, 'keyset rewrite missing');
    assert.equal(keyset.text, 'db.demoesr.find({e: 42, s: {$gt: lastS}}).sort({s: 1}).limit(20)');
    assert.equal(keyset.parameters.length, 1);
    assert.ok(doc.rewrites.some((r) => r.text === keyset.text));
  });

  it('gives PostgreSQL = ANY ... LIMIT, without counts, the index for the query as written first and the UNION ALL rewrite next, with table, ordered columns and CREATE INDEX', async () => {
    const { doc } = await adviseJson('--query', caseText('p10d1_any_sort_limit'));
    assert.equal(doc.engine, 'postgres');
    // The index for the query as written leads: the ORDER BY column first, and a condition saying when to rewrite.
    const asWritten = doc.suggestions[0]!;
    assert.equal(asWritten.servesQueryAsWritten, true);
    assert.deepEqual(asWritten.columns!.map((c) => c.column), ['b', 'a']);
    const first = doc.suggestions.find((s) => s.rule === 'union-all')!;
    assert.equal(first.table, 'esr');
    assert.deepEqual(first.columns!.map((c) => [c.column, c.direction]), [['a', 'asc'], ['b', 'asc']]);
    assert.equal(first.createIndex, 'CREATE INDEX CONCURRENTLY ON esr (a, b);');
    assert.equal(first.servesQueryAsWritten, false);
    assert.match(first.rewrites[0]!.text, /UNION ALL/);
  });

  it('writes DESC and the NULLS order of PostgreSQL columns, and INCLUDE for an index-only scan', async () => {
    const desc = (await adviseJson('--query', 'SELECT * FROM orders WHERE country_id = 1 ORDER BY created_at DESC LIMIT 10')).doc.suggestions[0]!;
    assert.deepEqual(desc.columns!.map((c) => [c.column, c.direction, c.nulls]), [['country_id', 'asc', 'last'], ['created_at', 'desc', 'first']]);
    assert.equal(desc.createIndex, 'CREATE INDEX CONCURRENTLY ON orders (country_id, created_at DESC);');
    const covered = (await adviseJson('--query', 'SELECT a, d FROM t WHERE a = 1 AND b > 2')).doc.suggestions.find((s) => s.rule === 'index-only');
    assert.ok(covered, 'no index-only suggestion');
    assert.deepEqual(covered.include, ['d']);
  });

  it('states the ESR/ERS condition when no counts decide it', async () => {
    const { doc } = await adviseJson('--query', caseText('m06c_regex_prefix_sort'));
    const cond = doc.suggestions[0]!.conditions.find((c) => /^ERS/.test(c.text));
    assert.ok(cond, 'no ESR/ERS condition');
    assert.equal(cond.decided, null);
  });

  it('reads the engine from the text, and --engine overrides it', async () => {
    assert.equal(detectEngine('db.orders.find({a: 1})'), 'mongodb');
    assert.equal(detectEngine('  // the hot query\n db.getSiblingDB("x").orders.find()'), 'mongodb');
    assert.equal(detectEngine('SELECT * FROM t WHERE a = 1'), 'postgres');
    assert.equal(detectEngine('WITH x AS (SELECT 1) SELECT * FROM x'), 'postgres');
    const io = capture();
    assert.equal(await run(['advise', '--engine', 'postgres', '--query', 'db.orders.find({a: 1})'], io), 2);
    assert.match(io.err, /^The SQL does not parse[^\n]*\.\n$/);
  });

  it('prints a text report with the rule, the expected plan and the verification state', async () => {
    const io = capture();
    assert.equal(await run(['advise', '--query', caseText('m16_low_selectivity')], io), 0, io.err);
    assert.match(io.out, /^Index advice for customers \(MongoDB, offline\)\n/);
    assert.match(io.out, /\n1\. db\.customers\.createIndex\(\{status: 1\}\)\n/);
    assert.match(io.out, /Expected plan: /);
    assert.match(io.out, /Verification: not run/);
    // The deciding condition is stated because nothing was counted.
    assert.match(io.out, /30%/);
  });

  it('refuses unreadable queries with exit 2 and one sentence', async () => {
    for (const q of ['db.orders.find({a: 1', 'SELEKT * FROM t', 'db.orders.explain()']) {
      const io = capture();
      const code = await run(['advise', '--query', q], io);
      assert.equal(code, 2, `${q}: ${io.out}`);
      assert.equal(io.out, '');
      assert.match(io.err, /^[^\n]+[.!?]\n$/, q);
    }
  });

  it('treats missing or contradictory options as usage errors (64)', async () => {
    const cases: string[][] = [
      ['advise'],
      ['advise', '--query', 'db.a.find()', '--verify'],
      ['advise', '--query', 'db.a.find()', '--sample', '100'],
      ['advise', '--query', 'SELECT 1 FROM t', '--allow-build'],
      ['advise', '--query', 'SELECT 1 FROM t', '--rules-only'],
      ['advise', '--query', 'SELECT 1 FROM t', '--uri', 'postgresql://127.0.0.1:1/x', '--rules-only', '--verify'],
      ['advise', '--query', 'db.a.find()', '--uri', 'mongodb://127.0.0.1:1', '--sample', 'lots'],
      ['advise', '--query', 'db.a.find()', '--uri', 'mongodb://127.0.0.1:1', '--sample', '0'],
      ['advise', '--query', 'db.a.find()', '--engine', 'oracle'],
      ['advise', '--query', 'db.a.find()', '--uri', 'mongodb://127.0.0.1:1', '--engine', 'postgres'],
      ['advise', '--query', 'db.a.find()', '--uri', 'mysql://127.0.0.1:1'],
      ['advise', 'db.a.find()'],
      ['advise', '--query'],
      ['advise', '--query', 'db.a.find()', '--frobnicate'],
    ];
    for (const args of cases) {
      const io = capture();
      assert.equal(await run(args, io), 64, args.join(' '));
      assert.equal(io.out, '', args.join(' '));
    }
  });

  it('heads a trial on a sample as one, and only an unmeasured advice as "Not measured"', () => {
    const advice = adviseMongo({ collection: 'customers', operation: 'aggregate', pipeline: [{ $project: { email: '$contact.email' } }, { $match: { email: 'a@example.com' } }] });
    const live = (measurement: LiveAdvice['measurement']): LiveAdvice =>
      ({ advice, engine: 'mongodb', serverVersion: '6.0.5', existingIndexes: ['_id_'], verification: { method: 'sampled-trial', sampleSize: 1000 }, measurement });
    const tried = adviceText(advice, live({ status: 'not-measured', label: 'tried on a sample of 1,000 documents', reason: 'the rules\' suggestions were tried together on the sample.' }));
    assert.match(tried, /^Tried on a sample of 1,000 documents: the rules' suggestions were tried together on the sample\.$/m);
    assert.doesNotMatch(tried, /Not measured/);
    const none = adviceText(advice, live({ status: 'not-measured', label: 'not measured', reason: 'Measurement was not asked for.' }));
    assert.match(none, /^Not measured: Measurement was not asked for\.$/m);
  });

  it('runs as a built binary', () => {
    const cli = builtCli();
    const r = spawnSync(process.execPath, [cli, 'advise', '--json', '--query', caseText('p12_index_only_scan')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as JsonAdvice;
    assert.equal(doc.suggestions[0]!.createIndex, 'CREATE INDEX CONCURRENTLY ON esr (a, b, c);');
  });
});
