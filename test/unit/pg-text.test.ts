// The text format as people paste it: psql's header, footer, frames and "+" marks, pgAdmin's quoted
// lines, auto_explain logs, Windows line endings, damaged or cut input. Each case checks what the
// reader makes of it, and that bad input gets one sentence, never an exception.

import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { detectFormat, loadPlan } from '../../src/core/load';
import type { Plan, PlanNode } from '../../src/core/model';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

function ok(text: string): Plan {
  const r = loadPlan(text);
  if (!r.ok) assert.fail(`expected a plan, got: ${r.refusal}`);
  return r.plan;
}

function refused(text: string): string {
  const r = loadPlan(text);
  if (r.ok) assert.fail(`expected a refusal, got a plan rooted at ${r.plan.root.label}`);
  assert.match(r.refusal, /\.$/, `one sentence: ${r.refusal}`);
  assert.doesNotMatch(r.refusal, /\n/);
  assert.doesNotMatch(r.refusal, /internal error/);
  return r.refusal;
}

function labels(p: Plan): string[] {
  return p.nodes.map((n) => `${n.role ?? '-'}:${n.label}`);
}

/** Kind, label, role, metrics and details of every node: what two readings must share. */
function essence(p: Plan): unknown {
  return p.nodes.map((n: PlanNode) => [n.kind, n.label, n.role, n.metrics, n.details]);
}

const BARE = [
  'Limit  (cost=0.29..8.31 rows=1 width=4) (actual time=0.020..0.021 rows=1 loops=1)',
  '  Buffers: shared hit=3',
  '  ->  Index Scan using t_pkey on t  (cost=0.29..8.31 rows=1 width=4) (actual time=0.019..0.019 rows=1 loops=1)',
  '        Index Cond: (id = 42)',
  '        Filter: (flag IS TRUE)',
  '        Rows Removed by Filter: 2',
  '        Buffers: shared hit=3',
  'Planning Time: 0.080 ms',
  'Execution Time: 0.040 ms',
];

describe('PostgreSQL text plans as pasted', () => {
  const bare = ok(BARE.join('\n'));

  it('reads a bare plan', () => {
    assert.deepEqual(labels(bare), ['-:Limit', 'Outer:Index Scan using t_pkey on t']);
    const scan = bare.nodes[1]!;
    assert.deepEqual([scan.metrics.rowsRemovedByFilter, scan.metrics.buffers?.sharedHit, scan.details.conditions?.['Index Cond']], [2, 3, '(id = 42)']);
    assert.deepEqual([bare.totals.planningTimeMs, bare.totals.executionTimeMs], [0.08, 0.04]);
  });

  it('strips the psql prompt, header, dashes, leading space and "(N rows)" footer', () => {
    const psql = [
      'shop=# EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM t WHERE id = 42 AND flag;',
      '                                   QUERY PLAN',
      '--------------------------------------------------------------------------------',
      ...BARE.map((l) => ` ${l}`),
      '(9 rows)',
      '',
      'shop=# ',
    ].join('\n');
    assert.equal(detectFormat(psql), 'postgres-text');
    const p = ok(psql);
    assert.deepEqual(essence(p), essence(bare));
    assert.deepEqual(p.warnings, []);
  });

  it('accepts a footer in another language', () => {
    const p = ok(['QUERY PLAN', '-----------', ...BARE.map((l) => ` ${l}`), '(9 lignes)'].join('\n'));
    assert.deepEqual(essence(p), essence(bare));
  });

  it('reads Windows line endings like Unix ones', () => {
    assert.deepEqual(essence(ok(BARE.join('\r\n') + '\r\n')), essence(bare));
  });

  it('unwraps pgAdmin lines in double quotes, with quotes inside doubled', () => {
    const lines = ['"QUERY PLAN"', ...BARE.map((l) => `"${l}"`)];
    assert.deepEqual(essence(ok(lines.join('\n'))), essence(bare));
    const quoted = ok(
      [
        '"Index Scan using ""My Idx"" on ""My Table"" m  (cost=0.29..8.30 rows=1 width=4) (actual time=0.010..0.020 rows=1 loops=1)"',
        '"  Index Cond: (id = 1)"',
      ].join('\n'),
    );
    assert.deepEqual([quoted.root.details.indexName, quoted.root.details.relationName, quoted.root.details.alias], ['My Idx', 'My Table', 'm']);
    assert.equal(quoted.root.label, 'Index Scan using "My Idx" on "My Table" m');
  });

  it('strips psql frames (border 2), ASCII and Unicode', () => {
    const width = 100;
    const ascii = [
      `+${'-'.repeat(width)}+`,
      `|${'QUERY PLAN'.padStart(55).padEnd(width)}|`,
      `+${'-'.repeat(width)}+`,
      ...BARE.map((l) => `| ${l.padEnd(width - 1)}|`),
      `+${'-'.repeat(width)}+`,
      '(9 rows)',
    ].join('\n');
    assert.deepEqual(essence(ok(ascii)), essence(bare));
    const unicode = [
      `┌${'─'.repeat(width)}┐`,
      `│${'QUERY PLAN'.padStart(55).padEnd(width)}│`,
      `├${'─'.repeat(width)}┤`,
      ...BARE.map((l) => `│ ${l.padEnd(width - 1)}│`),
      `└${'─'.repeat(width)}┘`,
      '(9 rows)',
    ].join('\n');
    assert.deepEqual(essence(ok(unicode)), essence(bare));
  });

  it("reads psql's expanded display (\\x), one record per line", () => {
    const x = BARE.flatMap((l, i) => [`-[ RECORD ${i + 1} ]${'-'.repeat(40)}`, `QUERY PLAN | ${l}`]).join('\n');
    assert.deepEqual(essence(ok(x)), essence(bare));
  });

  it('follows "+" continuation marks to a JSON, YAML or XML plan in one psql cell', () => {
    const json = [
      '              QUERY PLAN',
      '--------------------------------------',
      ' [                                   +',
      '   {                                 +',
      '     "Plan": {                       +',
      '       "Node Type": "Seq Scan",      +',
      '       "Relation Name": "t",         +',
      '       "Alias": "t",                 +',
      '       "Plan Rows": 2550             +',
      '     }                               +',
      '   }                                 +',
      ' ]',
      '(1 row)',
    ].join('\n');
    const pj = ok(json);
    assert.deepEqual([pj.format, pj.root.label, pj.root.metrics.plannedRows], ['postgres-json', 'Seq Scan on t', 2550]);
    const yaml = ['     QUERY PLAN', '-------------------------', ' - Plan:                 +', '     Node Type: "Result"  +', '     Plan Rows: 1         +', '(1 row)'].join('\n');
    assert.deepEqual([ok(yaml).format, ok(yaml).root.kind], ['postgres-yaml', 'Result']);
    const xml = [
      '     QUERY PLAN',
      '------------------',
      ' <explain xmlns="http://www.postgresql.org/2009/explain">+',
      '   <Query>                                               +',
      '     <Plan>                                              +',
      '       <Node-Type>Result</Node-Type>                     +',
      '     </Plan>                                             +',
      '   </Query>                                              +',
      ' </explain>',
      '(1 row)',
    ].join('\n');
    assert.deepEqual([ok(xml).format, ok(xml).root.kind], ['postgres-xml', 'Result']);
  });

  it('refuses a JSON plan cut inside its psql cell, saying so', () => {
    const cut = ['QUERY PLAN', '------------', ' [                +', '   {              +', '     "Plan": {    +', '       "Node Type": "Res'].join('\n');
    assert.match(refused(cut), /truncated/);
  });

  it('reads an auto_explain log entry: query text, tab-indented plan, up to the next record', () => {
    const log = [
      '2024-05-01 10:00:00.123 UTC [4242] LOG:  duration: 3.627 ms  plan:',
      '\tQuery Text: select count(*)',
      '\t  from pg_class',
      '\tAggregate  (cost=16.79..16.80 rows=1 width=8) (actual time=3.626..3.627 rows=1 loops=1)',
      '\t  ->  Seq Scan on pg_class  (cost=0.00..9.55 rows=255 width=0) (actual time=0.016..0.140 rows=255 loops=1)',
      '2024-05-01 10:00:01.000 UTC [4242] LOG:  statement: select 2;',
    ].join('\n');
    assert.equal(detectFormat(log), 'postgres-text');
    const p = ok(log);
    assert.deepEqual(labels(p), ['-:Aggregate', 'Outer:Seq Scan on pg_class']);
    assert.equal(p.postgres?.queryText, 'select count(*)\nfrom pg_class');
    assert.deepEqual(p.warnings, []);
  });

  it('reads a COSTS OFF plan without ANALYZE (bare node names)', () => {
    const text = ['Limit', '  ->  Sort', '        Sort Key: b', '        ->  Bitmap Heap Scan on t', '              Recheck Cond: (a = 1)', '              ->  Bitmap Index Scan on t_a_idx', '                    Index Cond: (a = 1)'].join('\n');
    assert.equal(detectFormat(text), 'postgres-text');
    const p = ok(text);
    assert.deepEqual(labels(p), ['-:Limit', 'Outer:Sort', 'Outer:Bitmap Heap Scan on t', 'Outer:Bitmap Index Scan on t_a_idx']);
    assert.equal(p.postgres?.analyzed, false);
    assert.deepEqual(p.nodes[1]!.details.sortKey, ['b']);
  });

  it('reads TIMING OFF figures: rows and loops, no times', () => {
    const p = ok('Seq Scan on t  (cost=0.00..35.50 rows=2550 width=4) (actual rows=3 loops=2)\n  Filter: (a > 1)\n  Rows Removed by Filter: 7');
    assert.deepEqual([p.root.metrics.rowsReturned, p.root.metrics.loops, p.root.metrics.inclusiveTimeMs, p.root.metrics.rowsRemovedByFilter], [6, 2, undefined, 7]);
  });

  it('keeps lines it does not understand as text on their node, with a warning', () => {
    const p = ok('Seq Scan on t  (cost=0.00..35.50 rows=2550 width=4)\n  Filter: (a = 1)\n  something odd here\n  Frobnication Level: 11');
    assert.deepEqual(p.root.raw['Unparsed Lines'], ['something odd here']);
    assert.equal(p.root.raw['Frobnication Level'], '11');
    assert.equal(p.warnings.length, 1);
    assert.match(p.warnings[0]!, /something odd here/);
  });

  it('reads the first of two plans and says there was another', () => {
    const p = ok('Result  (cost=0.00..0.01 rows=1 width=4)\nResult  (cost=0.00..0.02 rows=1 width=4)');
    assert.deepEqual([p.nodes.length, p.root.metrics.totalCost], [1, 0.01]);
    assert.match(p.warnings.join(' '), /more than one plan/);
  });

  it('refuses text that is not a plan, in one sentence', () => {
    refused('hello world\nthis is not a plan');
    assert.match(refused('QUERY PLAN\n----------\n(0 rows)'), /no plan/);
  });

  it('refuses a plan cut in the middle of a line and says which line', () => {
    const cut = 'Limit  (cost=0.00..1.00 rows=1 width=4) (actual time=0.1..0.2 rows=1 loops=1)\n  ->  Seq Scan on t  (cost=0.00..35.50 rows=2550 width=4) (actual time=0.01..0.02 rows=1 loo';
    assert.match(refused(cut), /line 2 .*truncated/);
    assert.match(refused('Seq Scan on t  (cost=0.00..35.50 rows=2550 width=4)\n  Filter: ((a > 1) AND (b <'), /line 2/);
    assert.match(refused('Seq Scan on t  (cost=0.00..35.50 rows=2550 width=4)\n  Buffers: shared hit='), /truncated/);
  });

  it('reads all three generations of I/O Timings', () => {
    const node = (io: string): Plan => ok(`Seq Scan on t  (cost=0.00..1.00 rows=1 width=4) (actual time=0.1..0.2 rows=1 loops=1)\n  Buffers: shared read=10\n  I/O Timings: ${io}`);
    const up14 = node('read=1.500 write=0.250').root.metrics.buffers!;
    assert.deepEqual([up14.ioReadTimeMs, up14.ioWriteTimeMs, up14.tempIoReadTimeMs], [1.5, 0.25, undefined]);
    const v15 = node('shared/local read=1.500, temp read=0.500 write=0.750').root.metrics.buffers!;
    assert.deepEqual([v15.ioReadTimeMs, v15.ioWriteTimeMs, v15.tempIoReadTimeMs, v15.tempIoWriteTimeMs], [1.5, 0, 0.5, 0.75]);
    const v17 = node('shared read=1.500 write=0.100, local read=0.500, temp write=0.750').root.metrics.buffers!;
    assert.deepEqual([v17.ioReadTimeMs, v17.ioWriteTimeMs, v17.tempIoReadTimeMs, v17.tempIoWriteTimeMs], [2, 0.1, 0, 0.75]);
  });

  it('reads Settings values that hold commas, and names with " on " inside quotes', () => {
    const p = ok(`Index Scan using "idx on x" on "tab on y" z  (cost=0.29..8.30 rows=1 width=4)\nSettings: search_path = '"$user", public', work_mem = '64MB'`);
    assert.deepEqual([p.root.details.indexName, p.root.details.relationName, p.root.details.alias], ['idx on x', 'tab on y', 'z']);
    assert.deepEqual(p.postgres?.settings, { search_path: '"$user", public', work_mem: '64MB' });
  });

  it('reads per-worker blocks, JIT included, into the worker figures', () => {
    const p = ok(
      [
        'Gather  (cost=1000.00..2000.00 rows=1 width=4) (actual time=1.000..10.000 rows=3 loops=1)',
        '  Workers Planned: 2',
        '  Workers Launched: 1',
        '  ->  Parallel Seq Scan on t  (cost=0.00..1000.00 rows=1 width=4) (actual time=0.500..8.000 rows=1 loops=2)',
        '        Worker 0:  actual time=0.500..8.000 rows=1 loops=1',
        '          JIT:',
        '            Functions: 2',
        '            Options: Inlining false, Optimization false, Expressions true, Deforming true',
        '            Timing: Generation 0.100 ms, Inlining 0.000 ms, Optimization 0.100 ms, Emission 1.000 ms, Total 1.200 ms',
        'Planning Time: 0.100 ms',
        'Execution Time: 10.500 ms',
      ].join('\n'),
    );
    const scan = p.nodes[1]!;
    assert.deepEqual(scan.metrics.workers, [{ worker: 0, actualRows: 1, actualTotalTimeMs: 8, loops: 1 }]);
    assert.deepEqual((scan.raw.Workers as Record<string, unknown>[])[0]!.JIT, {
      Functions: 2,
      Options: { Inlining: false, Optimization: false, Expressions: true, Deforming: true },
      Timing: { Generation: 0.1, Inlining: 0, Optimization: 0.1, Emission: 1, Total: 1.2 },
    });
    // One worker and the leader share the section: 8 ms x 2 loops / 2 participants.
    assert.equal(scan.metrics.inclusiveTimeMs, 8);
    assert.deepEqual(p.warnings, []);
  });

  it('reads the detail lines added in 17 and 18', () => {
    const p = ok(
      [
        'Nested Loop  (cost=0.29..20.00 rows=10 width=8) (actual time=0.050..0.300 rows=10.00 loops=1)',
        '  Buffers: shared hit=25',
        '  WAL: records=3 fpi=1 bytes=512 buffers full=2',
        '  ->  Seq Scan on a  (cost=0.00..1.10 rows=10 width=4) (actual time=0.010..0.020 rows=10.00 loops=1)',
        '        Disabled: true',
        '        Buffers: shared hit=1',
        '  ->  Memoize  (cost=0.30..2.00 rows=1 width=4) (actual time=0.020..0.020 rows=1.00 loops=10)',
        '        Cache Key: a.x',
        '        Cache Mode: logical',
        '        Hits: 7  Misses: 3  Evictions: 0  Overflows: 0  Memory Usage: 1kB',
        '        Buffers: shared hit=24',
        '        ->  Index Scan using b_pkey on b  (cost=0.29..1.90 rows=1 width=4) (actual time=0.010..0.010 rows=1.00 loops=3)',
        '              Index Cond: (x = a.x)',
        '              Index Searches: 3',
        '              Buffers: shared hit=24',
        'Planning Time: 0.100 ms',
        'Serialization: time=0.010 ms  output=1kB  format=text',
        'Execution Time: 0.400 ms',
      ].join('\n'),
    );
    assert.deepEqual([p.root.metrics.walRecords, p.root.metrics.walFpi, p.root.metrics.walBytes, p.root.raw['WAL Buffers Full']], [3, 1, 512, 2]);
    assert.equal(p.nodes[1]!.raw.Disabled, true);
    const memo = p.nodes[2]!;
    assert.deepEqual([memo.raw['Cache Hits'], memo.raw['Cache Misses'], memo.metrics.peakMemoryKb, memo.details.conditions?.['Cache Key']], [7, 3, 1, 'a.x']);
    assert.deepEqual([p.nodes[3]!.metrics.indexSearches, p.nodes[3]!.metrics.rowsReturned], [3, 3]);
    assert.deepEqual(p.postgres?.serialization, { Time: 0.01, 'Output Volume': 1, Format: 'text' });
    assert.deepEqual(p.warnings, []);
  });

  it('reads deep indentation in linear time', () => {
    const started = Date.now();
    const p = ok(`Limit  (cost=0.00..1.00 rows=1 width=4)\n${' '.repeat(200000)}->  Result  (cost=0.00..0.01 rows=1 width=4)`);
    assert.equal(p.nodes.length, 2);
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
  });

  it('never throws, whatever prefix of a real plan it is given', function () {
    this.timeout(60000);
    const texts = readdirSync(CORPUS)
      .filter((f) => f.startsWith('pg-'))
      .map((f) => readFileSync(join(CORPUS, f), 'utf8'));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: texts.length - 1 }), fc.double({ min: 0, max: 1, noNaN: true }), (i, at) => {
        const text = texts[i]!;
        const r = loadPlan(text.slice(0, Math.floor(text.length * at)));
        if (!r.ok) {
          assert.doesNotMatch(r.refusal, /internal error/, r.refusal);
          assert.match(r.refusal, /\.$/);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('PostgreSQL text plans cut inside a node name', () => {
  // EXPLAIN (COSTS OFF) of a join on PostgreSQL 15: no figures, so no open parenthesis shows a cut.
  const COSTS_OFF = [
    'Sort',
    '  Sort Key: o.created_at DESC',
    '  ->  Hash Join',
    '        Hash Cond: (o.customer_id = c.id)',
    '        ->  Seq Scan on co_orders o',
    '        ->  Hash',
    '              ->  Bitmap Heap Scan on co_customers c',
    '                    Recheck Cond: (id < 200)',
    "                    Filter: (region = 'eu'::text)",
    '                    ->  Bitmap Index Scan on co_customers_pkey',
    '                          Index Cond: (id < 200)',
  ].join('\n');

  it('reads the whole plan', () => {
    assert.equal(ok(COSTS_OFF).nodes.length, 6);
    assert.equal(ok(`${COSTS_OFF}\n`).nodes.length, 6);
  });

  it('refuses the plan cut in the middle of its last node name, with or without a line break after it', () => {
    const cut = COSTS_OFF.slice(0, COSTS_OFF.indexOf('Bitmap Index Scan') + 'Bitm'.length);
    for (const text of [cut, `${cut}\n`]) {
      assert.match(refused(text), /^The plan text stops in the middle of a node name on line 10 \("->  Bitm"\): it looks truncated/);
    }
    assert.match(refused(COSTS_OFF.slice(0, COSTS_OFF.indexOf('Hash Join') + 'Hash Jo'.length)), /middle of a node name on line 3/);
    assert.match(refused(COSTS_OFF.slice(0, COSTS_OFF.indexOf(' co_customers_pkey'))), /middle of a node name on line 10/);
  });

  it('refuses a corpus plan cut in the middle of its last node name', () => {
    const text = readFileSync(join(CORPUS, 'pg-text-analyze-buffers-bitmapor-three-bitmap-index-scans-15.txt'), 'utf8');
    const at = text.lastIndexOf('->  Bitmap Index Scan');
    assert.ok(at > 0);
    assert.match(refused(text.slice(0, at + '->  Bitmap In'.length)), /stops in the middle of a node name/);
  });

  it('still loads a node type it does not know, warning only when it ends a text without a line break', () => {
    const future = COSTS_OFF.replace('Bitmap Index Scan on co_customers_pkey', 'Vector Index Scan on co_customers_embedding');
    const inside = ok(future.replace(/\n\s+Index Cond: \(id < 200\)$/, '\n                          Index Cond: (id < 200)\n'));
    assert.ok(inside.nodes.some((n) => n.label.startsWith('Vector Index Scan')));
    assert.ok(!inside.warnings.some((w) => /does not know/.test(w)), inside.warnings.join(' | '));
    const atEnd = ok(future.replace(/\n\s+Index Cond: \(id < 200\)$/, ''));
    assert.ok(atEnd.warnings.some((w) => /^The last line \(10, "->  Vector Index Scan on co_customers_embedding"\) names a node type this reader does not know/.test(w)), atEnd.warnings.join(' | '));
    assert.ok(!ok(`${future.replace(/\n\s+Index Cond: \(id < 200\)$/, '')}\n`).warnings.some((w) => /does not know/.test(w)));
  });

  it('reads a rule\'s several plans and utility statement from the JSON format, saying only the first is shown', () => {
    const doc = ['Notify', { Plan: { 'Node Type': 'ModifyTable', Operation: 'Delete', 'Relation Name': 'rt', Alias: 'rt', 'Startup Cost': 0.15, 'Total Cost': 8.17, 'Plan Rows': 0, 'Plan Width': 0 } }];
    const plan = ok(JSON.stringify(doc));
    assert.equal(plan.root.raw['Operation'], 'Delete');
    assert.ok(plan.warnings.some((w) => /holds 1 plan and a NOTIFY \(no plan\)/.test(w)), plan.warnings.join(' | '));
  });
});

