import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyze, summarize } from '../../src/core/findings/index';
import { loadPlan } from '../../src/core/load';
import { derive } from '../../src/core/metrics';
import { emptyMaxima, makeNode, type Engine, type Finding, type NodeDetails, type NodeMetrics, type Plan, type PlanNode, type PlanTotals } from '../../src/core/model';

// Trees built by hand with the figures of the seeds and the measured truth cases; the same rules run on
// the real explain outputs further down.

function n(kind: string, metrics: NodeMetrics = {}, details: NodeDetails = {}, children: PlanNode[] = [], raw: Record<string, unknown> = {}): PlanNode {
  const node = makeNode(kind, kind, raw);
  node.metrics = metrics;
  node.details = details;
  node.children = children;
  return node;
}

function plan(engine: Engine, root: PlanNode, totals: PlanTotals = {}, extra: Partial<Plan> = {}): Plan {
  const p: Plan = {
    engine,
    format: engine === 'mongodb' ? 'mongodb-json' : 'postgres-json',
    root,
    nodes: [],
    rejectedPlans: [],
    totals,
    maxima: emptyMaxima(),
    warnings: [],
    ...extra,
  };
  return derive(p);
}

function codes(fs: Finding[]): string[] {
  return fs.map((f) => f.code);
}

function one(fs: Finding[], code: string): Finding {
  const hits = fs.filter((f) => f.code === code);
  assert.equal(hits.length, 1, `expected one ${code}, got ${JSON.stringify(codes(fs))}`);
  return hits[0]!;
}

function waste(fs: Finding[]): Finding[] {
  return fs.filter((f) => f.good !== true && f.severity !== 'info');
}

const full = ['[MinKey, MaxKey]'];

describe('findings: MongoDB rules on constructed trees', () => {
  it('the seed orders query (10 keys, 10 docs, 10 returned, one seek) has no waste and says so', () => {
    const ix = n('IXSCAN', { rowsReturned: 10, keysExamined: 10, seeks: 1 }, {
      indexName: 'country_id_1_order_details.product_id_1_created_at_-1',
      keyPattern: { country_id: 1, 'order_details.product_id': 1, created_at: -1 },
      indexBounds: { country_id: ['[1, 1]'], 'order_details.product_id': ['[5, 5]'], created_at: ['[MaxKey, MinKey]'] },
      isMultiKey: true,
      multiKeyPaths: { country_id: [], 'order_details.product_id': ['order_details'], created_at: [] },
    });
    const fetch = n('FETCH', { rowsReturned: 10, docsExamined: 10 }, { filter: { order_details: { $elemMatch: { product_id: { $eq: 5 } } } } }, [ix]);
    const p = plan('mongodb', n('LIMIT', { rowsReturned: 10, limitAmount: 10 }, {}, [fetch]), { keysExamined: 10, docsExamined: 10, nReturned: 10 });
    const fs = analyze(p);
    assert.deepEqual(waste(fs), []);
    const eff = one(fs, 'mongo.efficient');
    assert.equal(eff.good, true);
    assert.deepEqual(eff.numbers, { keysExamined: 10, docsExamined: 10, returned: 10 });
    assert.match(summarize(p, fs), /^Efficient/);
  });

  it('ESR index without a sort: 5 keys for 2 results with 3 seeks is a skip scan on the IXSCAN', () => {
    const ix = n('IXSCAN', { rowsReturned: 2, keysExamined: 5, seeks: 3 }, {
      indexName: 'e_1_s_1_r_1',
      keyPattern: { e: 1, s: 1, r: 1 },
      indexBounds: { e: ['[42, 42]'], s: full, r: ['(10, inf.0]'] },
    });
    const p = plan('mongodb', n('PROJECTION_COVERED', { rowsReturned: 2 }, {}, [ix]), { keysExamined: 5, docsExamined: 0, nReturned: 2 });
    const fs = analyze(p);
    const f = one(fs, 'mongo.skip-scan-seeks');
    assert.equal(f.nodeId, ix.id);
    assert.equal(f.numbers['keysExamined'], 5);
    assert.equal(f.numbers['returned'], 2);
    assert.equal(f.numbers['seeks'], 3);
    assert.equal(f.severity, 'low');
    assert.match(f.message, /Examined 5 index keys on e_1_s_1_r_1 to return 2, with 3 seeks/);
    assert.match(f.message, /s is not bounded/);
    assert.ok(!fs.some((x) => x.code === 'mongo.keys-examined-ratio'), 'one finding per IXSCAN, not two');
    assert.ok(!fs.some((x) => x.code === 'mongo.efficient'));
  });

  it('RE index: 3 keys for 2 with 2 seeks names the range field ahead of the equality', () => {
    const ix = n('IXSCAN', { rowsReturned: 2, keysExamined: 3, seeks: 2 }, {
      indexName: 'r_1_e_1',
      keyPattern: { r: 1, e: 1 },
      indexBounds: { r: ['(10, inf.0]'], e: ['[42, 42]'] },
    });
    const fetch = n('FETCH', { rowsReturned: 2, docsExamined: 2 }, {}, [ix]);
    const fs = analyze(plan('mongodb', n('PROJECTION_SIMPLE', { rowsReturned: 2 }, {}, [fetch]), { keysExamined: 3, docsExamined: 2, nReturned: 2 }));
    const f = one(fs, 'mongo.skip-scan-seeks');
    assert.deepEqual([f.numbers['keysExamined'], f.numbers['returned'], f.numbers['seeks']], [3, 2, 2]);
    assert.match(f.message, /r is a range \(\(10, inf\.0\]\) ahead of e/);
    assert.match(f.message, /good enough/);
  });

  it('ER index: 2 keys, 2 docs, 2 returned, one seek is efficient', () => {
    const ix = n('IXSCAN', { rowsReturned: 2, keysExamined: 2, seeks: 1 }, { indexName: 'e_1_r_1', keyPattern: { e: 1, r: 1 }, indexBounds: { e: ['[42, 42]'], r: ['(10, inf.0]'] } });
    const fs = analyze(plan('mongodb', n('FETCH', { rowsReturned: 2, docsExamined: 2 }, {}, [ix]), { keysExamined: 2, docsExamined: 2, nReturned: 2 }));
    assert.deepEqual(waste(fs), []);
    assert.ok(fs.some((f) => f.code === 'mongo.efficient'));
  });

  it('a collection scan of a 5-document collection is only informational', () => {
    const scan = n('COLLSCAN', { rowsReturned: 2, docsExamined: 5 }, { filter: { $and: [{ e: { $eq: 42 } }, { r: { $gt: 10 } }] } });
    const fs = analyze(plan('mongodb', n('PROJECTION_SIMPLE', { rowsReturned: 2 }, {}, [scan]), { keysExamined: 0, docsExamined: 5, nReturned: 2 }));
    const f = one(fs, 'mongo.collscan');
    assert.equal(f.severity, 'info');
    assert.equal(f.nodeId, scan.id);
    assert.ok(!fs.some((x) => x.code === 'mongo.efficient'), 'a collection scan is never called efficient');
  });

  it('a collection scan that keeps 1 document of 100,000 is high; one that keeps 90% is low', () => {
    const big = analyze(plan('mongodb', n('COLLSCAN', { rowsReturned: 1, docsExamined: 100_000 }, { filter: { email: { $eq: 'x' } } }), { nReturned: 1, docsExamined: 100_000, keysExamined: 0 }));
    assert.equal(one(big, 'mongo.collscan').severity, 'high');
    assert.match(one(big, 'mongo.collscan').message, /Read 100,000 documents to keep 1/);
    const most = analyze(plan('mongodb', n('COLLSCAN', { rowsReturned: 89_996, docsExamined: 100_000 }, { filter: { status: { $eq: 'active' } } }), { nReturned: 89_996, docsExamined: 100_000, keysExamined: 0 }));
    const f = one(most, 'mongo.collscan');
    assert.equal(f.severity, 'low');
    assert.match(f.message, /90%/);
  });

  it('$in with 250 values: a blocking SORT that names the 200 point-scan limit', () => {
    const points = Array.from({ length: 250 }, (_, i) => `[${i * 2}, ${i * 2}]`);
    const ix = n('IXSCAN', { rowsReturned: 10_462, keysExamined: 10_557, seeks: 95 }, {
      indexName: 'e_1_r_1_s_1',
      keyPattern: { e: 1, r: 1, s: 1 },
      indexBounds: { e: ['[42, 42]'], r: points, s: full },
    });
    const sort = n('SORT', { rowsReturned: 5, limitAmount: 5, usedDisk: false }, { sortPattern: { s: 1 } }, [ix]);
    const p = plan('mongodb', n('FETCH', { rowsReturned: 5, docsExamined: 5 }, {}, [sort]), { keysExamined: 10_557, docsExamined: 5, nReturned: 5 });
    const fs = analyze(p);
    const f = one(fs, 'mongo.blocking-sort');
    assert.equal(f.nodeId, sort.id);
    assert.equal(f.severity, 'medium');
    assert.equal(f.numbers['sortedDocs'], 10_462);
    assert.equal(f.numbers['pointScans'], 250);
    assert.match(f.message, /Sorted 10,462 documents in memory to return 5 \(top-5 sort\)/);
    assert.match(f.message, /more than the 200/);
    assert.equal(fs[0]!.code, 'mongo.blocking-sort', 'the sort outranks the low skip-scan finding');
    assert.match(summarize(p, fs), /^2 problems \(1 medium, 1 low\): Blocking sort; Index scan hops/);
  });

  it('$in with 2 values: SORT_MERGE is reported as good explode-for-sort, with no blocking sort', () => {
    const scan = (v: number, keys: number) =>
      n('IXSCAN', { rowsReturned: keys, keysExamined: keys, seeks: 1 }, { indexName: 'e_1_r_1_s_1', keyPattern: { e: 1, r: 1, s: 1 }, indexBounds: { e: ['[42, 42]'], r: [`[${v}, ${v}]`], s: full } });
    const merge = n('SORT_MERGE', { rowsReturned: 5, dupsTested: 6, dupsDropped: 0 }, { sortPattern: { s: 1 } }, [scan(10, 3), scan(30, 3)]);
    const p = plan('mongodb', n('LIMIT', { rowsReturned: 5, limitAmount: 5 }, {}, [n('FETCH', { rowsReturned: 5, docsExamined: 5 }, {}, [merge])]), { keysExamined: 6, docsExamined: 5, nReturned: 5 });
    const fs = analyze(p);
    const f = one(fs, 'mongo.sort-merge-explode');
    assert.equal(f.good, true);
    assert.equal(f.nodeId, merge.id);
    assert.equal(f.numbers['branches'], 2);
    assert.match(f.message, /2 index scans on e_1_r_1_s_1, each already in the order \{ s: 1 \}/);
    assert.deepEqual(waste(fs), []);
    assert.ok(!fs.some((x) => x.code === 'mongo.blocking-sort'));
    assert.match(summarize(p, fs), /^Efficient: no wasted work found \(Explode-for-sort/);
  });

  it('skip(5000).limit(20) reads 5,020 index keys to return 20, reported on the SKIP stage', () => {
    const ix = n('IXSCAN', { rowsReturned: 5_020, keysExamined: 5_020, seeks: 1 }, { indexName: 'e_1_s_1', keyPattern: { e: 1, s: 1 }, indexBounds: { e: ['[42, 42]'], s: full } });
    const skip = n('SKIP', { rowsReturned: 20, skipAmount: 5_000 }, {}, [ix]);
    const p = plan('mongodb', n('LIMIT', { rowsReturned: 20, limitAmount: 20 }, {}, [n('FETCH', { rowsReturned: 20, docsExamined: 20 }, {}, [skip])]), { keysExamined: 5_020, docsExamined: 20, nReturned: 20 });
    const fs = analyze(p);
    const f = one(fs, 'mongo.skip-reads');
    assert.equal(f.nodeId, skip.id);
    assert.equal(f.severity, 'medium');
    assert.deepEqual([f.numbers['keysExamined'], f.numbers['skipped'], f.numbers['returned']], [5_020, 5_000, 20]);
    assert.match(f.message, /^Read 5,020 index keys to return 20: skip\(5000\) discards what it reads/);
    assert.match(f.message, /\{ s: \{ \$gt: <last s> \} \}/);
  });

  it('a FETCH filter after an IXSCAN names the fields the index lacks, with the multikey caveat', () => {
    const ix = n('IXSCAN', { rowsReturned: 2_168, keysExamined: 2_168, seeks: 1 }, {
      indexName: 'order_details.product_id_1',
      keyPattern: { 'order_details.product_id': 1 },
      isMultiKey: true,
      multiKeyPaths: { 'order_details.product_id': ['order_details'] },
    });
    const fetch = n('FETCH', { rowsReturned: 1_911, docsExamined: 2_168 }, { filter: { 'order_details.quantity': { $gte: 9 } } }, [ix]);
    const fs = analyze(plan('mongodb', fetch, { keysExamined: 2_168, docsExamined: 2_168, nReturned: 1_911 }));
    const f = one(fs, 'mongo.residual-fetch-filter');
    assert.equal(f.nodeId, fetch.id);
    assert.equal(f.severity, 'low');
    assert.match(f.message, /Fetched 2,168 documents and kept 1,911/);
    assert.match(f.message, /order_details\.product_id_1 does not contain order_details\.quantity/);
    assert.match(f.message, /\$elemMatch/);
    assert.ok(!fs.some((x) => x.code === 'mongo.docs-examined-ratio'), 'the FETCH is not reported twice');
  });

  it('an IXSCAN that examines 2,175 keys to return 23 in one seek is a keys-examined ratio', () => {
    const ix = n('IXSCAN', { rowsReturned: 23, keysExamined: 2_175, seeks: 1 }, { indexName: 'tenant_1_name_1', keyPattern: { tenant: 1, name: 1 } }, [], { filter: { name: { $regex: 'ab' } } });
    const fs = analyze(plan('mongodb', n('FETCH', { rowsReturned: 23, docsExamined: 23 }, {}, [ix]), { keysExamined: 2_175, docsExamined: 23, nReturned: 23 }));
    const f = one(fs, 'mongo.keys-examined-ratio');
    assert.equal(f.severity, 'medium');
    assert.equal(f.numbers['ratio'], 94.57);
    assert.match(f.message, /Examined 2,175 index keys on tenant_1_name_1 to return 23 \(95x\): the condition on name/);
  });

  it('multikey duplicates alone are not waste', () => {
    const ix = n('IXSCAN', { rowsReturned: 354, keysExamined: 379, seeks: 1, dupsTested: 379, dupsDropped: 25 }, { indexName: 'tenant_1_ratings_1' });
    const fs = analyze(plan('mongodb', n('FETCH', { rowsReturned: 354, docsExamined: 354 }, {}, [ix]), { keysExamined: 379, docsExamined: 354, nReturned: 354 }));
    assert.deepEqual(waste(fs), []);
  });

  it('$project renaming contact.email before $match: the COLLSCAN and the pipeline order are both reported', () => {
    const scan = n('COLLSCAN', { rowsReturned: 100_000, docsExamined: 100_000 });
    const proj = n('PROJECTION_DEFAULT', { rowsReturned: 100_000 }, {}, [scan], { transformBy: { _id: true, customer_id: true, email: '$contact.email' } });
    const match = n('$match', { rowsReturned: 1 }, { filter: { email: { $eq: 'a@b.c' } } }, [proj], { $match: { email: { $eq: 'a@b.c' } } });
    const p = plan('mongodb', match, { keysExamined: 0, docsExamined: 100_000, nReturned: 1 }, {
      mongo: { command: { aggregate: 'customers', pipeline: [{ $project: { customer_id: 1, email: '$contact.email' } }, { $match: { email: 'a@b.c' } }] } },
    });
    const fs = analyze(p);
    const pm = one(fs, 'mongo.project-before-match');
    assert.equal(pm.nodeId, match.id);
    assert.equal(pm.severity, 'high');
    assert.match(pm.message, /\$match on email comes after a \$project that computes email from "contact\.email"/);
    assert.match(pm.message, /Match on "contact\.email" before the \$project/);
    assert.match(pm.message, /arrays/);
    const cs = one(fs, 'mongo.collscan');
    assert.equal(cs.severity, 'high', 'the scan keeps 1 of 100,000 once the $match above it is counted');
    assert.equal(cs.numbers['returned'], 1);
  });

  it('$match before $project is not reported', () => {
    const ix = n('IXSCAN', { rowsReturned: 1, keysExamined: 1, seeks: 1 }, { indexName: 'contact.email_1' });
    const proj = n('PROJECTION_DEFAULT', { rowsReturned: 1 }, {}, [n('FETCH', { rowsReturned: 1, docsExamined: 1 }, {}, [ix])], { transformBy: { email: '$contact.email' } });
    const p = plan('mongodb', proj, { keysExamined: 1, docsExamined: 1, nReturned: 1 }, {
      mongo: { command: { aggregate: 'customers', pipeline: [{ $match: { 'contact.email': 'a' } }, { $project: { email: '$contact.email' } }] } },
    });
    const fs = analyze(p);
    assert.deepEqual(waste(fs), []);
    assert.ok(fs.some((f) => f.code === 'mongo.efficient'));
  });

  it('documents examined and dropped by a stage without its own rule are a docs-examined ratio', () => {
    const text = n('TEXT_MATCH', { rowsReturned: 40, docsExamined: 4_000 }, {}, [n('IXSCAN', { rowsReturned: 4_000, keysExamined: 4_000, seeks: 1 })]);
    const f = one(analyze(plan('mongodb', text, { keysExamined: 4_000, docsExamined: 4_000, nReturned: 40 })), 'mongo.docs-examined-ratio');
    assert.equal(f.nodeId, text.id);
    assert.equal(f.severity, 'medium');
    assert.deepEqual([f.numbers['docsExamined'], f.numbers['returned']], [4_000, 40]);
  });

  it('queryPlanner output: a COLLSCAN with a filter is medium and the missing statistics are said', () => {
    const p = plan('mongodb', n('COLLSCAN', {}, { filter: { a: { $eq: 1 } } }), {});
    const fs = analyze(p);
    assert.equal(one(fs, 'mongo.collscan').severity, 'medium');
    one(fs, 'mongo.no-execution-stats');
    assert.ok(!fs.some((f) => f.code === 'mongo.efficient'));
  });

  it('a blocking sort that spilled to disk is high', () => {
    const sort = n('SORT', { rowsReturned: 50, usedDisk: true }, { sortPattern: { created: -1 } }, [n('COLLSCAN', { rowsReturned: 500, docsExamined: 500 })]);
    const f = one(analyze(plan('mongodb', sort, { nReturned: 50, docsExamined: 500, keysExamined: 0 })), 'mongo.blocking-sort');
    assert.equal(f.severity, 'high');
    assert.equal(f.numbers['usedDisk'], 1);
    assert.match(f.message, /spilled to disk/);
  });
});

describe('findings: PostgreSQL rules on constructed trees', () => {
  it('LIMIT 20 OFFSET 10000 over a top-N sort: OFFSET reads, the sort and the sequential scan', () => {
    const scan = n('Seq Scan', { rowsReturned: 20_616, loops: 1, rowsRemovedByFilter: 179_384, inclusiveTimeMs: 12, plannedRows: 20_000 }, { relationName: 'esr', conditions: { Filter: '(a = 42)' } });
    const sort = n('Sort', { rowsReturned: 10_020, loops: 1, sortMethod: 'top-N heapsort', sortSpaceKb: 1_565, sortSpaceType: 'Memory', inclusiveTimeMs: 18.4, plannedRows: 20_616 }, { sortKey: ['b'] }, [scan]);
    const limit = n('Limit', { rowsReturned: 20, loops: 1, inclusiveTimeMs: 18.755, plannedRows: 20 }, {}, [sort]);
    const p = plan('postgres', limit, { executionTimeMs: 18.8, rows: 20 });
    const fs = analyze(p);
    const off = one(fs, 'pg.offset-reads');
    assert.equal(off.nodeId, limit.id);
    assert.equal(off.severity, 'high');
    assert.deepEqual(off.numbers, { rowsRead: 10_020, rowsReturned: 20, offset: 10_000 });
    assert.match(off.message, /^Read 10,020 rows to return 20: OFFSET 10000 discards what it reads/);
    assert.match(off.message, /WHERE \(b\) > /);
    const seq = one(fs, 'pg.seq-scan');
    assert.equal(seq.nodeId, scan.id);
    assert.equal(seq.severity, 'high');
    assert.match(seq.message, /Seq Scan on esr read 200,000 rows to keep 20,616/);
    const s = one(fs, 'pg.sort');
    assert.match(s.message, /top-N heapsort/);
    assert.ok(!fs.some((f) => f.code === 'pg.rows-removed-by-filter'), 'a Seq Scan filter is reported once, as pg.seq-scan');
  });

  it('Rows Removed by Filter is a per-loop average: the total multiplies by loops', () => {
    const inner = n('Index Scan', { rowsReturned: 1_000, loops: 100, actualRowsPerLoop: 10, rowsRemovedByFilter: 90, inclusiveTimeMs: 50 }, { indexName: 'i', relationName: 't', conditions: { Filter: '(x > 1)' } });
    const outer = n('Seq Scan', { rowsReturned: 100, loops: 1, inclusiveTimeMs: 1 }, { relationName: 'o' });
    const p = plan('postgres', n('Nested Loop', { rowsReturned: 1_000, loops: 1, inclusiveTimeMs: 60 }, {}, [outer, inner]), { executionTimeMs: 60 });
    const f = one(analyze(p), 'pg.rows-removed-by-filter');
    assert.equal(f.numbers['rowsRemovedByFilter'], 9_000);
    assert.equal(f.numbers['rowsRead'], 10_000);
    assert.equal(f.severity, 'high', 'medium by its counts, raised because the scan takes 83% of the time');
    assert.match(f.message, /over 100 loops/);
    assert.match(f.message, /83% of the execution time/);
  });

  it('an external merge sort is pg.sort-disk, not pg.sort', () => {
    const scan = n('Seq Scan', { rowsReturned: 500_000, loops: 1, inclusiveTimeMs: 40 }, { relationName: 't' });
    const sort = n('Sort', { rowsReturned: 500_000, loops: 1, sortMethod: 'external merge', sortSpaceKb: 23_000, sortSpaceType: 'Disk', inclusiveTimeMs: 240 }, { sortKey: ['t.b'] }, [scan]);
    const fs = analyze(plan('postgres', sort, { executionTimeMs: 250 }));
    const f = one(fs, 'pg.sort-disk');
    assert.equal(f.severity, 'high');
    assert.equal(f.numbers['diskKb'], 23_000);
    assert.match(f.message, /Sorting 500,000 rows by t\.b did not fit in work_mem and spilled to disk \(external merge, 22\.5 MB/);
    assert.ok(!fs.some((x) => x.code === 'pg.sort'));
  });

  it('a hash in 32 batches is pg.hash-batches on the Hash node, without a second temp-spill finding on the join', () => {
    const build = n('Seq Scan', { rowsReturned: 100_000, loops: 1, inclusiveTimeMs: 10 }, { relationName: 'b' });
    const hash = n('Hash', { rowsReturned: 100_000, loops: 1, hashBatches: 32, originalHashBatches: 1, hashBuckets: 65_536, peakMemoryKb: 64, inclusiveTimeMs: 30, buffers: { tempWritten: 400 } }, {}, [build]);
    const probe = n('Seq Scan', { rowsReturned: 100_000, loops: 1, inclusiveTimeMs: 10 }, { relationName: 'a' });
    const join = n('Hash Join', { rowsReturned: 100_000, loops: 1, inclusiveTimeMs: 90, buffers: { tempWritten: 900 } }, {}, [probe, hash]);
    const fs = analyze(plan('postgres', join, { executionTimeMs: 90 }));
    const f = one(fs, 'pg.hash-batches');
    assert.equal(f.nodeId, hash.id);
    assert.equal(f.numbers['batches'], 32);
    assert.match(f.message, /32 batches \(the planner expected 1/);
    assert.ok(!fs.some((x) => x.code === 'pg.temp-spill'));
  });

  it('a misestimate is reported where it starts, with factor and direction, and tiny counts are ignored', () => {
    const a = n('Seq Scan', { rowsReturned: 50_000, plannedRows: 50, loops: 1 }, { relationName: 'a' });
    const b = n('Seq Scan', { rowsReturned: 10, plannedRows: 10, loops: 1 }, { relationName: 'b' });
    const hash = n('Hash', { rowsReturned: 10, plannedRows: 10, loops: 1 }, {}, [b]);
    const join = n('Hash Join', { rowsReturned: 60_000, plannedRows: 60, loops: 1 }, {}, [a, hash]);
    const tiny = n('Seq Scan', { rowsReturned: 40, plannedRows: 1, loops: 1 }, { relationName: 'c' });
    const fs = analyze(plan('postgres', n('Append', { rowsReturned: 60_040, plannedRows: 61, loops: 1 }, {}, [join, tiny])));
    const mis = fs.filter((f) => f.code === 'pg.misestimate');
    assert.deepEqual(mis.map((f) => f.nodeId), [a.id]);
    assert.equal(mis[0]!.numbers['factor'], 1000);
    assert.equal(mis[0]!.numbers['under'], 1);
    assert.equal(mis[0]!.severity, 'medium');
    assert.match(mis[0]!.message, /expected 50 rows and got 50,000 \(1,000x under-estimate\)/);
  });

  it('keeps the three largest misestimates, the first in plan order among equal factors', () => {
    // Scans under one join, planned 100 rows each: factors 20, 50, 50, 900, 50, 30 (in plan order).
    const got = [2000, 5000, 5000, 90_000, 5000, 3000];
    const scans = got.map((rows, i) => n('Seq Scan', { rowsReturned: rows, plannedRows: 100, loops: 1 }, { relationName: `t${i}` }));
    const fs = analyze(plan('postgres', n('Hash Join', { rowsReturned: 1, plannedRows: 1, loops: 1 }, {}, scans)));
    const mis = fs.filter((f) => f.code === 'pg.misestimate');
    assert.deepEqual(mis.map((f) => f.numbers['factor']), [900, 50, 50]);
    assert.deepEqual(mis.map((f) => f.nodeId).sort(), [scans[1]!.id, scans[2]!.id, scans[3]!.id].sort());
    for (const f of mis) assert.match(f.message, /^Seq Scan on t\d: the planner expected 100 rows and got [\d,]+ \(\d+x under-estimate\)/);
  });

  it('never-executed parts are one info finding at their top node', () => {
    const leaf = n('Index Scan', { neverExecuted: true, loops: 0, plannedRows: 1 }, { indexName: 'i', relationName: 't' });
    const mat = n('Materialize', { neverExecuted: true, loops: 0, plannedRows: 1 }, {}, [leaf]);
    const outer = n('Seq Scan', { rowsReturned: 0, loops: 1, plannedRows: 1 }, { relationName: 'o' });
    const fs = analyze(plan('postgres', n('Nested Loop', { rowsReturned: 0, loops: 1, plannedRows: 1 }, {}, [outer, mat])));
    const f = one(fs, 'pg.never-executed');
    assert.equal(f.nodeId, mat.id);
    assert.equal(f.severity, 'info');
    assert.equal(f.numbers['nodes'], 2);
  });

  it('heap fetches, workers not launched, lossy recheck and join filters', () => {
    const ios = n('Index Only Scan', { rowsReturned: 5_000, loops: 1, heapFetches: 4_000 }, { indexName: 'i_ab', relationName: 't' });
    const gather = n('Gather', { rowsReturned: 5_000, loops: 1, workersPlanned: 2, workersLaunched: 0 }, {}, [ios]);
    const bhs = n('Bitmap Heap Scan', { rowsReturned: 100, loops: 1, rowsRemovedByIndexRecheck: 20_000, lossyHeapBlocks: 300, exactHeapBlocks: 10 }, { relationName: 'u' }, [
      n('Bitmap Index Scan', { rowsReturned: 20_100, loops: 1 }, { indexName: 'u_x' }),
    ]);
    const nl = n('Nested Loop', { rowsReturned: 10, loops: 1, rowsRemovedByJoinFilter: 499_990 }, { conditions: { 'Join Filter': '(t.a < u.b)' } }, [gather, bhs]);
    const fs = analyze(plan('postgres', nl));
    assert.equal(one(fs, 'pg.heap-fetches').severity, 'medium');
    assert.deepEqual(one(fs, 'pg.workers-not-launched').numbers, { workersPlanned: 2, workersLaunched: 0 });
    const rc = one(fs, 'pg.index-recheck');
    assert.equal(rc.severity, 'high', '20,000 rows rechecked away to keep 100');
    assert.match(rc.message, /lossy/);
    const jf = one(fs, 'pg.rows-removed-by-join-filter');
    assert.equal(jf.severity, 'high');
    assert.equal(jf.numbers['rowsRemovedByJoinFilter'], 499_990);
    assert.equal(fs[0]!.code, 'pg.rows-removed-by-join-filter', 'the high finding comes first');
  });

  it('a Sort over = ANY suggests the UNION ALL rewrite', () => {
    const ix = n('Index Scan', { rowsReturned: 3_000, loops: 1 }, { indexName: 'esr_a_b_idx', relationName: 'esr', conditions: { 'Index Cond': "(a = ANY ('{1,2,3}'::integer[]))" } });
    const sort = n('Sort', { rowsReturned: 10, loops: 1, sortMethod: 'top-N heapsort', sortSpaceType: 'Memory', sortSpaceKb: 25 }, { sortKey: ['b'] }, [ix]);
    const f = one(analyze(plan('postgres', n('Limit', { rowsReturned: 10, loops: 1 }, {}, [sort]))), 'pg.sort');
    assert.match(f.message, /UNION ALL/);
  });

  it('an index scan returning exactly its rows is efficient', () => {
    const ix = n('Index Scan', { rowsReturned: 20, plannedRows: 20, loops: 1, inclusiveTimeMs: 0.02, buffers: { sharedHit: 23 } }, { indexName: 'esr_a_b_idx', relationName: 'esr' });
    const p = plan('postgres', n('Limit', { rowsReturned: 20, plannedRows: 20, loops: 1, inclusiveTimeMs: 0.023, buffers: { sharedHit: 23 } }, {}, [ix]), { executionTimeMs: 0.023, rows: 20 });
    const fs = analyze(p);
    assert.deepEqual(codes(fs), ['pg.efficient']);
    assert.equal(summarize(p, fs), 'Efficient: no wasted work found — 20 rows, 0.023 ms, 23 buffers.');
  });

  it('JIT compiling longer than the query runs, and planning longer than execution', () => {
    const scan = n('Seq Scan', { rowsReturned: 10, loops: 1, inclusiveTimeMs: 2 }, { relationName: 't' });
    const p = plan('postgres', scan, { executionTimeMs: 150, planningTimeMs: 400 }, { postgres: { analyzed: true, jit: { functions: 4, timingMs: { Total: 120 } } } });
    const fs = analyze(p);
    const jit = one(fs, 'pg.jit-time');
    assert.equal(jit.severity, 'medium');
    assert.match(jit.message, /JIT compilation took 120 ms of the 150 ms execution \(80%\)/);
    assert.deepEqual(one(fs, 'pg.planning-time').numbers, { planningMs: 400, executionMs: 150 });
  });

  it('a plan without ANALYZE says so and still flags a filtered sequential scan', () => {
    const fs = analyze(plan('postgres', n('Seq Scan', { plannedRows: 5 }, { relationName: 't', conditions: { Filter: '(a = 1)' } })));
    assert.equal(one(fs, 'pg.seq-scan').severity, 'low');
    one(fs, 'pg.not-analyzed');
    assert.ok(!fs.some((f) => f.code === 'pg.efficient'));
  });
});

describe('findings: robustness', () => {
  it('odd values do not make analyze throw', () => {
    const weird = n('IXSCAN', { rowsReturned: 3, keysExamined: 9, seeks: 2 }, { indexBounds: { a: [] }, keyPattern: { b: 1 } }, [], { filter: [1, null, { $and: 'x' }] });
    const fetch = n('FETCH', { rowsReturned: 1, docsExamined: 3 }, { filter: { $and: [null, 7, { 'a.b': { $elemMatch: { $gt: 1 } } }] } }, [weird]);
    const sort = n('SORT', { rowsReturned: 1 }, {}, [fetch], { sortPattern: 'nope', limitAmount: 'x', spills: '2' });
    const match = n('$match', { rowsReturned: 0 }, {}, [sort], { $match: 42 });
    const p = plan('mongodb', match, {}, { mongo: { command: { pipeline: [null, {}, { $project: 'bad' }, { $match: [] }] } } });
    const fs = analyze(p);
    assert.ok(fs.length > 0);
    assert.ok(!fs.some((f) => f.code === 'qpi.rule-error'), JSON.stringify(fs.filter((f) => f.code === 'qpi.rule-error')));
    assert.equal(typeof summarize(p, fs), 'string');
  });
});

// ---------------------------------------------------------------------------------------------
// Real explain outputs: the corpus (servers and tools in the wild) and the truth plans measured on
// MongoDB 6.0.5 and PostgreSQL 15.

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');
const TRUTH = join(__dirname, '..', 'fixtures', 'truth-plans');

function corpusPlan(file: string): Plan {
  const r = loadPlan(readFileSync(join(CORPUS, file), 'utf8'));
  if (!r.ok) assert.fail(`${file} should load: ${r.refusal}`);
  return r.plan;
}

/** Truth plans keep the explain under `hinted_explain` (MongoDB) or `natural` (PostgreSQL). */
function truthPlan(caseId: string, file: string): Plan {
  const doc = JSON.parse(readFileSync(join(TRUTH, caseId, file), 'utf8')) as { hinted_explain?: unknown; natural?: unknown };
  const r = loadPlan(JSON.stringify(doc.hinted_explain ?? doc.natural));
  if (!r.ok) assert.fail(`${caseId}/${file} should load: ${r.refusal}`);
  return r.plan;
}

const RANKS = { high: 0, medium: 1, low: 2, info: 3 } as const;

/** What every finding on every plan must satisfy, whatever the rule. */
function checkWellFormed(plan: Plan, fs: Finding[], what: string): void {
  assert.ok(!fs.some((f) => f.code === 'qpi.rule-error'), `${what}: ${fs.find((f) => f.code === 'qpi.rule-error')?.message}`);
  const prefix = plan.engine === 'mongodb' ? 'mongo.' : 'pg.';
  let last = 0;
  for (const f of fs) {
    assert.ok(f.code.startsWith(prefix), `${what}: ${f.code} belongs to ${plan.engine}`);
    assert.match(f.code, /^[a-z]+\.[a-z-]+$/);
    assert.ok(RANKS[f.severity] >= last, `${what}: findings sorted by severity`);
    last = RANKS[f.severity];
    assert.ok(f.title.length > 0 && !/\n/.test(f.title));
    assert.match(f.message, /\.$/, `${what}: ${f.code} message ends a sentence`);
    const sentences = f.message.split(/(?<=[.!?])\s+(?=[A-Z$])/).length;
    assert.ok(sentences >= 1 && sentences <= 3, `${what}: ${f.code} has ${sentences} sentences: ${f.message}`);
    if (f.nodeId !== undefined) assert.ok(plan.nodes[f.nodeId] !== undefined, `${what}: ${f.code} points at node ${f.nodeId}`);
    for (const [k, v] of Object.entries(f.numbers)) assert.ok(Number.isFinite(v), `${what}: ${f.code} number ${k} is finite`);
  }
  const line = summarize(plan, fs);
  assert.ok(line.length > 10 && !/\n/.test(line), `${what}: summary is one line`);
}

describe('findings: every real plan', () => {
  it('analyses every corpus file that loads, without throwing, with well-formed findings', () => {
    const files = readdirSync(CORPUS, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile() && !/^(INDEX\.tsv|README\.md)$/.test(d.name) && !d.parentPath.includes('_provenance'))
      .map((d) => join(d.parentPath, d.name));
    let analysed = 0;
    for (const path of files) {
      const r = loadPlan(readFileSync(path, 'utf8'));
      if (!r.ok) continue;
      const fs = analyze(r.plan);
      checkWellFormed(r.plan, fs, path.slice(CORPUS.length + 1));
      analysed++;
    }
    assert.ok(analysed >= 90, `analysed ${analysed} corpus plans`);
  });

  it('analyses every truth plan of both engines', () => {
    let analysed = 0;
    for (const c of readdirSync(TRUTH)) {
      for (const file of readdirSync(join(TRUTH, c)).filter((f) => f !== 'case.json')) {
        const plan = truthPlan(c, file);
        checkWellFormed(plan, analyze(plan), `${c}/${file}`);
        analysed++;
      }
    }
    assert.ok(analysed >= 100, `analysed ${analysed} truth plans`);
  });
});

describe('findings: MongoDB truth plans (6.0.5)', () => {
  it('the seed orders query: 10 keys, 10 documents, 10 returned, no waste', () => {
    const plan = truthPlan('m01_orders_elemmatch_sort', 'oracle__country_id_1_order_details.product_id_1_created_at_-1.json');
    const fs = analyze(plan);
    assert.deepEqual(waste(fs), []);
    assert.deepEqual(one(fs, 'mongo.efficient').numbers, { keysExamined: 10, docsExamined: 10, returned: 10 });
  });

  it('an index without the $elemMatch field filters after fetching: 10,222 documents for 10', () => {
    const plan = truthPlan('m01_orders_elemmatch_sort', 'loser4_instructive__country_id_1_created_at_-1.json');
    const f = one(analyze(plan), 'mongo.residual-fetch-filter');
    assert.equal(plan.nodes[f.nodeId!]!.kind, 'FETCH');
    assert.equal(f.severity, 'high');
    assert.deepEqual([f.numbers['docsExamined'], f.numbers['returned']], [10_222, 10]);
    assert.match(f.message, /does not contain order_details\.product_id/);
  });

  it('skip scans: the RE index hops 413 times and is good enough; the ESR index hops for the sort', () => {
    const re = one(analyze(truthPlan('m02a_er_nosort_range64', 'loser1_runnerUp__r_1_e_1.json')), 'mongo.skip-scan-seeks');
    assert.deepEqual([re.numbers['keysExamined'], re.numbers['returned'], re.numbers['seeks']], [13_637, 13_225, 413]);
    assert.equal(re.severity, 'low');
    assert.match(re.message, /r is a range .* ahead of e/);
    assert.match(re.message, /good enough/);
    const esr = one(analyze(truthPlan('m02b_esr_sort_range64', 'oracle__e_1_s_1_r_1.json')), 'mongo.skip-scan-seeks');
    assert.deepEqual([esr.numbers['keysExamined'], esr.numbers['returned'], esr.numbers['seeks']], [20_617, 13_225, 7_392]);
    assert.match(esr.message, /sort field s before the range on r so that no blocking SORT is needed/);
    const er = analyze(truthPlan('m02a_er_nosort_range64', 'oracle__e_1_r_1.json'));
    assert.deepEqual(waste(er), [], 'E,R: one seek, keys = docs = returned');
  });

  it('$in with 2 values is explode-for-sort (good); with 250 values the SORT blocks', () => {
    const in2 = analyze(truthPlan('m03a_in2_explode_sort_merge', 'oracle__e_1_r_1_s_1.json'));
    const good = one(in2, 'mongo.sort-merge-explode');
    assert.equal(good.good, true);
    assert.equal(good.numbers['branches'], 2);
    assert.deepEqual(waste(in2), []);
    const in250 = analyze(truthPlan('m03b_in250_no_explode', 'loser2_bestWithBlockingSort__e_1_r_1_s_1.json'));
    const sort = one(in250, 'mongo.blocking-sort');
    assert.deepEqual([sort.numbers['sortedDocs'], sort.numbers['returned'], sort.numbers['pointScans']], [10_462, 5, 250]);
    assert.match(sort.message, /250 point scans .* more than the 200/);
    assert.ok(!in250.some((f) => f.code === 'mongo.sort-merge-explode'));
  });

  it('$or on one field explodes the same way', () => {
    const fs = analyze(truthPlan('m04_or_explode', 'oracle__e_1_r_1_s_1.json'));
    assert.equal(one(fs, 'mongo.sort-merge-explode').good, true);
    assert.deepEqual(waste(fs), []);
  });

  it('skip(5000) with the ideal index reads 5,020 keys for 20; keyset pagination reads 20', () => {
    const skip = one(analyze(truthPlan('m05a_skip_pagination', 'oracle__e_1_s_1.json')), 'mongo.skip-reads');
    assert.deepEqual([skip.numbers['keysExamined'], skip.numbers['skipped'], skip.numbers['returned']], [5_020, 5_000, 20]);
    assert.match(skip.message, /^Read 5,020 index keys to return 20: skip\(5000\) discards what it reads/);
    const keyset = analyze(truthPlan('m05b_keyset_pagination', 'oracle__e_1_s_1.json'));
    assert.deepEqual(waste(keyset), []);
    assert.deepEqual(one(keyset, 'mongo.efficient').numbers, { keysExamined: 20, docsExamined: 20, returned: 20 });
  });

  it('an unanchored regex examines 2,175 keys to return 23 on the IXSCAN', () => {
    const plan = truthPlan('m06d_regex_unanchored', 'oracle__tenant_1_name_1.json');
    const f = one(analyze(plan), 'mongo.keys-examined-ratio');
    assert.equal(plan.nodes[f.nodeId!]!.kind, 'IXSCAN');
    assert.deepEqual([f.numbers['keysExamined'], f.numbers['returned']], [2_175, 23]);
    assert.equal(f.severity, 'medium');
  });

  it('$project before $match: reported on the $match, with the original path to match on', () => {
    for (const file of ['oracle__COLLSCAN.json', 'loser1_runnerUp__contact.email_1.json']) {
      const plan = truthPlan('m09a_agg_project_then_match', file);
      const f = one(analyze(plan), 'mongo.project-before-match');
      assert.equal(plan.nodes[f.nodeId!]!.kind, '$match', file);
      assert.equal(f.severity, 'high');
      assert.deepEqual([f.numbers['docsExamined'], f.numbers['returned']], [100_000, 1]);
      assert.match(f.message, /Match on "contact\.email" before the \$project/);
    }
    const first = analyze(truthPlan('m09b_agg_match_then_project', 'oracle__contact.email_1.json'));
    assert.deepEqual(waste(first), []);
  });

  it('a multikey index without $elemMatch leaves the quantity to the FETCH filter', () => {
    const f = one(analyze(truthPlan('m10_multikey_compound_no_elemmatch', 'oracle__order_details.product_id_1.json')), 'mongo.residual-fetch-filter');
    assert.deepEqual([f.numbers['docsExamined'], f.numbers['returned']], [2_168, 1_911]);
    assert.match(f.message, /Because order_details is an array/);
  });

  it('a low-selectivity collection scan is low, and a count reads no document', () => {
    assert.equal(one(analyze(truthPlan('m16_low_selectivity', 'oracle__COLLSCAN.json')), 'mongo.collscan').severity, 'low');
    const count = one(analyze(truthPlan('m14_count_er', 'oracle__e_1_r_1.json')), 'mongo.efficient');
    assert.deepEqual(count.numbers, { keysExamined: 13_226, docsExamined: 0, counted: 13_225 });
  });
});

describe('findings: PostgreSQL truth plans (15)', () => {
  it('LIMIT 20 OFFSET 10000: the Limit reads 10,020 rows to return 20', () => {
    for (const file of ['oracle__none_PK_only_.json', 'loser2_textbook___a_b_.json']) {
      const plan = truthPlan('p10e1_offset_pagination', file);
      const f = one(analyze(plan), 'pg.offset-reads');
      assert.equal(plan.nodes[f.nodeId!]!.kind, 'Limit');
      assert.equal(f.severity, 'high');
      assert.deepEqual(f.numbers, { rowsRead: 10_020, rowsReturned: 20, offset: 10_000 });
      assert.match(f.message, /^Read 10,020 rows to return 20: OFFSET 10000 discards what it reads/);
    }
  });

  it('keyset pagination and the covering index are efficient', () => {
    for (const [c, file] of [
      ['p10e2_keyset_pagination', 'oracle___a_b_.json'],
      ['p12_index_only_scan', 'oracle___a_b_c_.json'],
      ['p10c1_esr_limit_range64', 'oracle___a_b_c_.json'],
    ] as const) {
      const fs = analyze(truthPlan(c, file));
      assert.deepEqual(codes(fs), ['pg.efficient'], `${c}: ${JSON.stringify(codes(fs))}`);
    }
  });

  it('rows under a Limit are not a misestimate: the UNION ALL rewrite has no finding', () => {
    const fs = analyze(truthPlan('p10d2_union_all_rewrite', 'oracle___a_b_.json'));
    assert.deepEqual(codes(fs), ['pg.efficient']);
  });

  it('a sequential scan keeping 13,225 of 200,000 rows is high', () => {
    const f = one(analyze(truthPlan('p10c0_er_nosort', 'oracle__none_PK_only_.json')), 'pg.seq-scan');
    assert.equal(f.severity, 'high');
    assert.deepEqual([f.numbers['rowsRead'], f.numbers['rowsReturned'], f.numbers['rowsRemovedByFilter']], [200_000, 13_225, 186_775]);
  });

  it('= ANY with ORDER BY LIMIT sorts, and the finding suggests the UNION ALL rewrite', () => {
    const f = one(analyze(truthPlan('p10d1_any_sort_limit', 'loser2_textbook___a_b_.json')), 'pg.sort');
    assert.equal(f.numbers['rowsSorted'], 26_144);
    assert.match(f.message, /UNION ALL/);
  });
});

describe('findings: corpus plans', () => {
  it('PostgreSQL external merge sorts are pg.sort-disk', () => {
    const fs = analyze(corpusPlan('pg-text-analyze-buffers-sort-external-merge-hash-32-batches-temp-io-jit-15.txt'));
    const disk = one(fs, 'pg.sort-disk');
    assert.equal(disk.numbers['rowsSorted'], 400_000);
    assert.equal(disk.severity, 'high');
    assert.equal(one(fs, 'pg.hash-batches').numbers['batches'], 32);
    const job = analyze(corpusPlan('pg-json-analyze-buffers-job-1a-merge-joins-external-merge-sorts-temp-blocks.json'));
    assert.equal(job.filter((f) => f.code === 'pg.sort-disk').length, 5);
  });

  it('a hash aggregate that spilled in 193 batches, and hash batches that grew past the plan', () => {
    const agg = one(analyze(corpusPlan('pg-text-analyze-hashagg-planned-partitions-disk-usage-13.txt')), 'pg.hash-batches');
    assert.equal(agg.numbers['batches'], 193);
    assert.match(agg.message, /hash aggregate/);
    const grew = one(analyze(corpusPlan('pg-text-analyze-buffers-hash-batches-originally-jit-deform-18.txt')), 'pg.hash-batches');
    assert.deepEqual([grew.numbers['batches'], grew.numbers['originalBatches']], [2_048, 8]);
  });

  it('a lossy bitmap recheck, heap fetches, workers not launched, never-executed nodes', () => {
    const rc = one(analyze(corpusPlan('pg-text-analyze-initplan-bitmap-lossy-rows-removed-by-index-recheck.txt')), 'pg.index-recheck');
    assert.equal(rc.numbers['rowsRemovedByIndexRecheck'], 14_687_029);
    assert.equal(rc.numbers['lossyHeapBlocks'], 79_844);
    const hf = one(analyze(corpusPlan('pg-text-analyze-buffers-delete-triggers-any-subquery.txt')), 'pg.heap-fetches');
    assert.equal(hf.numbers['heapFetches'], 609);
    const w = one(analyze(corpusPlan('pg-text-analyze-verbose-gather-24-planned-7-launched-function-scan.txt')), 'pg.workers-not-launched');
    assert.deepEqual(w.numbers, { workersPlanned: 24, workersLaunched: 7 });
    const plan = corpusPlan('pg-json-analyze-verbose-buffers-nestloop-bitmap-materialize.json');
    const ne = one(analyze(plan), 'pg.never-executed');
    assert.equal(plan.nodes[ne.nodeId!]!.kind, 'Materialize');
  });

  it('PostgreSQL 18 index searches: a skip scan over the leading column, and one search per listed value', () => {
    for (const file of ['pg-json-analyze-buffers-skip-scan-index-searches-18.json', 'pg-text-analyze-buffers-skip-scan-index-searches-18.txt']) {
      const plan = corpusPlan(file);
      const f = one(analyze(plan), 'pg.index-searches');
      const node = plan.nodes[f.nodeId!]!;
      assert.equal(node.kind, 'Index Only Scan', file);
      assert.deepEqual(f.numbers, { indexSearches: 10, rowsReturned: 240 }, file);
      // Each of the ten searches finds rows: worth knowing, not worth a new index.
      assert.equal(f.severity, 'info', file);
      assert.match(f.message, /searched the index 10 times to return 240 rows/);
      assert.match(f.message, /skip scan/);
    }
    const list = one(analyze(corpusPlan('pg-json-analyze-buffers-index-searches-any-list-18.json')), 'pg.index-searches');
    assert.deepEqual([list.numbers['indexSearches'], list.title], [3, 'One index search per listed value']);
    assert.match(list.message, /= ANY/);
  });

  it('index searches: many searches for few rows rise with their number; one per loop is no finding', () => {
    const scan = (searches: number, rows: number, loops = 1) =>
      n('Index Scan', { rowsReturned: rows, loops, indexSearches: searches }, { indexName: 'i_ab', relationName: 't', conditions: { 'Index Cond': '(b = 7)' } });
    const severity = (searches: number, rows: number) => one(analyze(plan('postgres', scan(searches, rows))), 'pg.index-searches').severity;
    assert.equal(severity(50, 10), 'info');
    assert.equal(severity(500, 10), 'low');
    assert.equal(severity(20_000, 10), 'medium');
    assert.equal(severity(20_000, 30_000), 'info', 'every search finds rows');
    assert.deepEqual(codes(analyze(plan('postgres', scan(40, 4_000, 40)))).filter((c) => c === 'pg.index-searches'), [], 'one search per loop');
  });

  it('parallel scans are read across processes, not once per outer row', () => {
    const f = one(analyze(corpusPlan('pg-text-analyze-tpch-q3-limit-topn-gather-merge-nested-loops-12.txt')), 'pg.seq-scan');
    assert.match(f.message, /across 3 parallel processes/);
    assert.doesNotMatch(f.message, /once per outer row/);
  });

  it('EXPLAIN without ANALYZE says so', () => {
    const fs = analyze(corpusPlan('pg-json-plain-subquery-scan-limit-seqscan-no-analyze-14.json'));
    one(fs, 'pg.not-analyzed');
    assert.deepEqual(waste(fs), []);
  });

  it('MongoDB 3.2: a blocking sort of 191,665 documents and a SKIP of 20 that printed skipAmount 0', () => {
    const fs = analyze(corpusPlan('mongo-find-sort-skip-limit-keep-mutations-3.2.json'));
    const sort = one(fs, 'mongo.blocking-sort');
    assert.equal(sort.severity, 'high');
    assert.equal(sort.numbers['sortedDocs'], 191_665);
    assert.match(sort.message, /age_1 does not deliver the order \{ email: -1 \}/);
    assert.equal(one(fs, 'mongo.skip-reads').numbers['skipped'], 20);
  });

  it('$or over two indexes merged in order is good; geo index scans are not called skip scans', () => {
    const or = analyze(corpusPlan('mongo-find-or-subplan-limit-sort-merge-execstats-7.0.json'));
    assert.equal(one(or, 'mongo.sort-merge-explode').good, true);
    assert.deepEqual(waste(or), []);
    const geo = analyze(corpusPlan('mongo-sharded-agg-geonear-group-sort-singleshard-5.3.json'));
    assert.ok(!geo.some((f) => f.code === 'mongo.skip-scan-seeks' || f.code === 'mongo.keys-examined-ratio'));
  });

  it('a $match after $unwind is not blamed on the $project before it', () => {
    const fs = analyze(corpusPlan('mongo-shell-agg-tpch-q3-collscan-unwind-group-sort-4.4.js'));
    assert.ok(!fs.some((f) => f.code === 'mongo.project-before-match'));
    assert.equal(one(fs, 'mongo.collscan').numbers['docsExamined'], 150_000);
  });

  it('a sharded FETCH filter names the fields the index lacks', () => {
    const fs = analyze(corpusPlan('mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json'));
    const top = fs.find((f) => f.code === 'mongo.residual-fetch-filter' && f.severity === 'high');
    assert.ok(top);
    assert.match(top.message, /does not contain membership_status and last_position/);
  });
});
