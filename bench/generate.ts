// Generators of big, realistically shaped explain outputs for benchmarks and scale tests. Shapes follow
// real server output (field names and nesting as MongoDB 6.0 and PostgreSQL 15 print them); sizes are
// what real users paste on bad days. Deterministic: the same arguments give the same text.

/** A small seeded PRNG (mulberry32) so generated plans are identical run to run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pgKinds = ['Hash Join', 'Nested Loop', 'Merge Join'];

/** A PostgreSQL EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) document with `nodes` plan nodes. */
export function generatePostgresJsonPlan(nodes: number, seed = 1): string {
  const r = rng(seed);
  let made = 0;
  const leaf = (): Record<string, unknown> => {
    made++;
    const rows = Math.floor(r() * 100000);
    return {
      'Node Type': 'Seq Scan',
      'Parent Relationship': 'Outer',
      'Parallel Aware': false,
      'Async Capable': false,
      'Relation Name': `table_${made}`,
      Alias: `t${made}`,
      'Startup Cost': 0.0,
      'Total Cost': Math.round(r() * 10000) / 100,
      'Plan Rows': Math.floor(r() * 100000),
      'Plan Width': 32,
      'Actual Startup Time': 0.01,
      'Actual Total Time': Math.round(r() * 1000) / 100,
      'Actual Rows': rows,
      'Actual Loops': 1,
      Filter: `(status = 'open'::text)`,
      'Rows Removed by Filter': Math.floor(r() * 5000),
      'Shared Hit Blocks': Math.floor(r() * 500),
      'Shared Read Blocks': Math.floor(r() * 100),
      'Shared Dirtied Blocks': 0,
      'Shared Written Blocks': 0,
      'Local Hit Blocks': 0,
      'Local Read Blocks': 0,
      'Local Dirtied Blocks': 0,
      'Local Written Blocks': 0,
      'Temp Read Blocks': 0,
      'Temp Written Blocks': 0,
    };
  };
  const build = (budget: number, time: number): Record<string, unknown> => {
    if (budget <= 1) return leaf();
    made++;
    const left = Math.max(1, Math.floor((budget - 1) / 2));
    const right = budget - 1 - left;
    const children = [build(left, time * 0.45)];
    if (right > 0) {
      const inner = build(right, time * 0.45);
      inner['Parent Relationship'] = 'Inner';
      children.push(inner);
    }
    return {
      'Node Type': pgKinds[Math.floor(r() * pgKinds.length)],
      'Parent Relationship': 'Outer',
      'Parallel Aware': false,
      'Join Type': 'Inner',
      'Startup Cost': 1.5,
      'Total Cost': Math.round(r() * 1e6) / 100,
      'Plan Rows': Math.floor(r() * 1000),
      'Plan Width': 64,
      'Actual Startup Time': 0.5,
      'Actual Total Time': Math.round(time * 1000) / 1000,
      'Actual Rows': Math.floor(r() * 100000),
      'Actual Loops': 1,
      'Hash Cond': `(t${made}.id = t${made + 1}.parent_id)`,
      'Shared Hit Blocks': Math.floor(r() * 5000),
      'Shared Read Blocks': Math.floor(r() * 1000),
      'Shared Dirtied Blocks': 0,
      'Shared Written Blocks': 0,
      'Temp Read Blocks': 0,
      'Temp Written Blocks': 0,
      Plans: children,
    };
  };
  const root = build(nodes, 5000);
  root['Parent Relationship'] = undefined;
  return JSON.stringify([{ Plan: root, Planning: { 'Shared Hit Blocks': 12 }, 'Planning Time': 3.2, Triggers: [], 'Execution Time': 5012.3 }], null, 2);
}

/**
 * A MongoDB find explain at allPlansExecution of about `targetBytes`, shaped like the big outputs real
 * servers print: the planner keeps few candidates (it stops enumerating after a handful), so size comes
 * from index bounds: an `$in` over tens of thousands of values lists one point interval per value, in
 * every candidate plan and again in every trial's stages. Real field names and nesting (MongoDB 6.0).
 */
export function generateMongoAllPlansExplain(targetBytes: number, seed = 2): string {
  const r = rng(seed);
  const indexes = [
    ['customer_id', 'created_at'],
    ['customer_id', 'status', 'created_at'],
    ['customer_id', 'total'],
    ['customer_id', 'region', 'created_at'],
    ['customer_id'],
  ];
  const candidates = indexes.length;
  // Each value's interval appears in the candidate's queryPlanner tree and in its trial stages.
  const values = Math.max(1, Math.floor(targetBytes / (candidates * 2 * 44)));
  const ids = Array.from({ length: values }, (_, i) => 100000 + i * 7 + Math.floor(r() * 7));
  const points = ids.map((v) => `[${v}, ${v}]`);
  const plan = (fields: string[], withStats: boolean): Record<string, unknown> => {
    const keyPattern = Object.fromEntries(fields.map((f) => [f, f === 'created_at' ? -1 : 1]));
    const indexBounds = Object.fromEntries(fields.map((f, i) => [f, i === 0 ? points : ['[MaxKey, MinKey]']]));
    const keys = Math.floor(r() * 50000);
    const ix: Record<string, unknown> = {
      stage: 'IXSCAN',
      keyPattern,
      indexName: fields.map((f) => `${f}_${keyPattern[f]}`).join('_'),
      isMultiKey: false,
      multiKeyPaths: Object.fromEntries(fields.map((f) => [f, []])),
      isUnique: false,
      isSparse: false,
      isPartial: false,
      indexVersion: 2,
      direction: 'forward',
      indexBounds,
    };
    const fetch: Record<string, unknown> = { stage: 'FETCH', filter: { status: { $eq: 'open' } }, inputStage: ix };
    const limit: Record<string, unknown> = { stage: 'LIMIT', limitAmount: 100, inputStage: fetch };
    if (withStats) {
      Object.assign(ix, { nReturned: Math.floor(keys / 4), executionTimeMillisEstimate: 12, works: keys + 1, advanced: Math.floor(keys / 4), needTime: keys - Math.floor(keys / 4), needYield: 0, saveState: 3, restoreState: 3, isEOF: 0, keysExamined: keys, seeks: values, dupsTested: 0, dupsDropped: 0 });
      Object.assign(fetch, { nReturned: 100, executionTimeMillisEstimate: 15, works: keys + 1, advanced: 100, needTime: keys, needYield: 0, saveState: 3, restoreState: 3, isEOF: 0, docsExamined: Math.floor(keys / 4), alreadyHasObj: 0 });
      Object.assign(limit, { nReturned: 100, executionTimeMillisEstimate: 15, works: keys + 2, advanced: 100, needTime: keys, needYield: 0, saveState: 3, restoreState: 3, isEOF: 1 });
    }
    return limit;
  };
  const doc = {
    explainVersion: '1',
    queryPlanner: {
      namespace: 'shop.orders',
      indexFilterSet: false,
      parsedQuery: { $and: [{ status: { $eq: 'open' } }, { customer_id: { $in: ids } }] },
      queryHash: 'A1B2C3D4',
      planCacheKey: 'E5F6A7B8',
      maxIndexedOrSolutionsReached: false,
      maxIndexedAndSolutionsReached: false,
      maxScansToExplodeReached: true,
      winningPlan: plan(indexes[0]!, false),
      rejectedPlans: indexes.slice(1).map((f) => plan(f, false)),
    },
    executionStats: {
      executionSuccess: true,
      nReturned: 100,
      executionTimeMillis: 42,
      totalKeysExamined: 1234,
      totalDocsExamined: 1200,
      executionStages: plan(indexes[0]!, true),
      allPlansExecution: indexes.map((f) => ({ nReturned: 100, executionTimeMillisEstimate: 10, totalKeysExamined: Math.floor(r() * 5000), totalDocsExamined: Math.floor(r() * 5000), score: 1.5, executionStages: plan(f, true) })),
    },
    command: { find: 'orders', filter: { status: 'open', customer_id: { $in: ids } }, limit: 100, $db: 'shop' },
    serverInfo: { host: 'db1', port: 27017, version: '6.0.5', gitVersion: 'c9a99c120371d4d4c52cbb15dac34a36ce8d3b1d' },
    ok: 1,
  };
  return JSON.stringify(doc, null, 2);
}

/**
 * A MongoDB find explain at executionStats whose winning plan has about `nodes` stages: a wide `$or`,
 * one branch per customer and time window, each branch an IXSCAN of its own bounds (every third one under
 * a FETCH with the branch's residual filter) below one OR, as MongoDB 6.0 prints a contained $or it
 * answers with an index per branch. Real field names and nesting.
 */
export function generateMongoWideOrExplain(nodes: number, seed = 3): string {
  const r = rng(seed);
  const branches: Record<string, unknown>[] = [];
  const predicates: Record<string, unknown>[] = [];
  let stages = 3; // SUBPLAN, FETCH, OR
  let keysTotal = 0;
  let docsTotal = 0;
  for (let i = 0; stages < nodes; i++) {
    const customer = 1000 + i;
    const from = `new Date(${1700000000000 + Math.floor(r() * 1e9)})`;
    const keys = Math.floor(r() * 400);
    keysTotal += keys;
    const ix: Record<string, unknown> = {
      stage: 'IXSCAN',
      nReturned: keys,
      executionTimeMillisEstimate: Math.floor(r() * 3),
      works: keys + 1,
      advanced: keys,
      needTime: 0,
      needYield: 0,
      saveState: 1,
      restoreState: 1,
      isEOF: 1,
      keyPattern: { customer_id: 1, created_at: -1 },
      indexName: 'customer_id_1_created_at_-1',
      isMultiKey: false,
      multiKeyPaths: { customer_id: [], created_at: [] },
      isUnique: false,
      isSparse: false,
      isPartial: false,
      indexVersion: 2,
      direction: 'forward',
      indexBounds: { customer_id: [`[${customer}, ${customer}]`], created_at: [`[new Date(9223372036854775807), ${from}]`] },
      keysExamined: keys,
      seeks: 1,
      dupsTested: 0,
      dupsDropped: 0,
    };
    stages++;
    predicates.push({ $and: [{ customer_id: { $eq: customer } }, { created_at: { $gte: from } }] });
    if (i % 3 === 2 && stages < nodes) {
      const kept = Math.floor(keys / 2);
      docsTotal += keys;
      branches.push({
        stage: 'FETCH',
        filter: { status: { $eq: 'open' } },
        nReturned: kept,
        executionTimeMillisEstimate: Math.floor(r() * 3),
        works: keys + 1,
        advanced: kept,
        needTime: keys - kept,
        needYield: 0,
        saveState: 1,
        restoreState: 1,
        isEOF: 1,
        docsExamined: keys,
        alreadyHasObj: 0,
        inputStage: ix,
      });
      stages++;
    } else {
      branches.push(ix);
    }
  }
  const returned = Math.floor(keysTotal * 0.6);
  const or = { stage: 'OR', nReturned: returned, executionTimeMillisEstimate: 40, works: keysTotal + branches.length, advanced: returned, needTime: keysTotal - returned, needYield: 0, saveState: 3, restoreState: 3, isEOF: 1, dupsTested: keysTotal, dupsDropped: 0, inputStages: branches };
  const fetch = { stage: 'FETCH', nReturned: returned, executionTimeMillisEstimate: 55, works: keysTotal + branches.length, advanced: returned, needTime: keysTotal - returned, needYield: 0, saveState: 3, restoreState: 3, isEOF: 1, docsExamined: returned, alreadyHasObj: docsTotal > 0 ? 1 : 0, inputStage: or };
  const winning = { stage: 'SUBPLAN', nReturned: returned, executionTimeMillisEstimate: 60, works: keysTotal + branches.length, advanced: returned, needTime: keysTotal - returned, needYield: 0, saveState: 3, restoreState: 3, isEOF: 1, inputStage: fetch };
  const strip = (s: Record<string, unknown>): Record<string, unknown> => {
    const { nReturned: _n, executionTimeMillisEstimate: _e, works: _w, advanced: _a, needTime: _t, needYield: _y, saveState: _s, restoreState: _r, isEOF: _i, keysExamined: _k, docsExamined: _d, seeks: _k2, dupsTested: _dt, dupsDropped: _dd, alreadyHasObj: _h, inputStage, inputStages, ...rest } = s;
    if (inputStage) rest['inputStage'] = strip(inputStage as Record<string, unknown>);
    if (inputStages) rest['inputStages'] = (inputStages as Record<string, unknown>[]).map(strip);
    return rest;
  };
  const doc = {
    explainVersion: '1',
    queryPlanner: {
      namespace: 'shop.orders',
      indexFilterSet: false,
      parsedQuery: { $and: [{ status: { $eq: 'open' } }, { $or: predicates }] },
      queryHash: '5F1C2A9E',
      planCacheKey: '9A3E77B0',
      maxIndexedOrSolutionsReached: false,
      maxIndexedAndSolutionsReached: false,
      maxScansToExplodeReached: false,
      winningPlan: strip(winning),
      rejectedPlans: [],
    },
    executionStats: { executionSuccess: true, nReturned: returned, executionTimeMillis: 61, totalKeysExamined: keysTotal, totalDocsExamined: docsTotal + returned, executionStages: winning },
    command: { find: 'orders', filter: { status: 'open', $or: predicates }, $db: 'shop' },
    serverInfo: { host: 'db1', port: 27017, version: '6.0.5', gitVersion: 'c9a99c120371d4d4c52cbb15dac34a36ce8d3b1d' },
    ok: 1,
  };
  return JSON.stringify(doc, null, 2);
}

/**
 * A MongoDB aggregate explain at executionStats whose pipeline has `stages` stages after its `$cursor`
 * (MongoDB 5.0+ accepts at most 1,000): the long, tool-generated pipelines of reporting code, cycling
 * through $addFields, $match, $lookup, $unwind, $project, $set and $group, each with the nReturned and
 * executionTimeMillisEstimate the server prints per stage, above a $cursor whose query layer is an index
 * scan under a FETCH. Real field names and nesting (MongoDB 6.0). Drawn as data flow, it is a chain as
 * deep as the pipeline is long.
 */
export function generateMongoDeepAggregateExplain(stages: number, seed = 4): string {
  const r = rng(seed);
  let docs = 200000;
  let time = 180;
  const keys = docs + Math.floor(r() * 1000);
  const cursor = {
    $cursor: {
      queryPlanner: {
        namespace: 'shop.orders',
        indexFilterSet: false,
        parsedQuery: { created_at: { $gte: '2024-01-01T00:00:00.000Z' } },
        queryHash: '7C1B2D3E',
        planCacheKey: '0A9F8E7D',
        maxIndexedOrSolutionsReached: false,
        maxIndexedAndSolutionsReached: false,
        maxScansToExplodeReached: false,
        winningPlan: { stage: 'FETCH', inputStage: { stage: 'IXSCAN', keyPattern: { created_at: 1 }, indexName: 'created_at_1', isMultiKey: false, multiKeyPaths: { created_at: [] }, isUnique: false, isSparse: false, isPartial: false, indexVersion: 2, direction: 'forward', indexBounds: { created_at: ['[new Date(1704067200000), new Date(9223372036854775807)]'] } } },
        rejectedPlans: [],
      },
      executionStats: {
        executionSuccess: true,
        nReturned: docs,
        executionTimeMillis: time,
        totalKeysExamined: keys,
        totalDocsExamined: docs,
        executionStages: {
          stage: 'FETCH', nReturned: docs, executionTimeMillisEstimate: 150, works: keys + 1, advanced: docs, needTime: keys - docs, needYield: 0, saveState: 210, restoreState: 210, isEOF: 1, docsExamined: docs, alreadyHasObj: 0,
          inputStage: { stage: 'IXSCAN', nReturned: keys, executionTimeMillisEstimate: 40, works: keys + 1, advanced: keys, needTime: 0, needYield: 0, saveState: 210, restoreState: 210, isEOF: 1, keyPattern: { created_at: 1 }, indexName: 'created_at_1', isMultiKey: false, multiKeyPaths: { created_at: [] }, isUnique: false, isSparse: false, isPartial: false, indexVersion: 2, direction: 'forward', indexBounds: { created_at: ['[new Date(1704067200000), new Date(9223372036854775807)]'] }, keysExamined: keys, seeks: 1, dupsTested: 0, dupsDropped: 0 },
        },
      },
    },
    nReturned: docs,
    executionTimeMillisEstimate: time,
  };
  const out: Record<string, unknown>[] = [cursor];
  const command: Record<string, unknown>[] = [{ $match: { created_at: { $gte: '2024-01-01T00:00:00.000Z' } } }];
  for (let i = 1; i <= stages; i++) {
    const f = `f${i}`;
    let stage: Record<string, unknown>;
    switch (i % 7) {
      case 0:
        stage = { $addFields: { [f]: { $multiply: [`$total`, { $const: 1 + (i % 5) / 10 }] } } };
        break;
      case 1:
        docs = Math.max(1, Math.floor(docs * (0.9 + r() * 0.1)));
        stage = { $match: { [`f${i - 1}`]: { $gte: Math.floor(r() * 100) } } };
        break;
      case 2:
        stage = { $lookup: { from: `dim_${i}`, as: f, localField: 'customer_id', foreignField: '_id' }, totalDocsExamined: docs, totalKeysExamined: docs, collectionScans: 0, indexesUsed: ['_id_'] };
        break;
      case 3:
        stage = { $unwind: { path: `$${`f${i - 1}`}`, preserveNullAndEmptyArrays: true } };
        break;
      case 4:
        stage = { $project: { _id: true, customer_id: true, total: true, [f]: true } };
        break;
      case 5:
        stage = { $set: { [f]: { $concat: ['$region', { $const: '-' }, '$status'] } } };
        break;
      default:
        // Regrouping by the same key keeps the documents, as generated pipelines often do.
        stage = { $group: { _id: '$_id', total: { $first: '$total' }, customer_id: { $first: '$customer_id' } }, maxAccumulatorMemoryUsageBytes: { total: 4096 + i, customer_id: 4096 + i }, totalOutputDataSizeBytes: docs * 64, usedDisk: false, spills: 0 };
    }
    time += Math.floor(r() * 5);
    command.push(Object.fromEntries(Object.entries(stage).filter(([k]) => k.startsWith('$'))));
    out.push({ ...stage, nReturned: docs, executionTimeMillisEstimate: time });
  }
  const doc = {
    explainVersion: '1',
    stages: out,
    serverInfo: { host: 'db1', port: 27017, version: '6.0.5', gitVersion: 'c9a99c120371d4d4c52cbb15dac34a36ce8d3b1d' },
    serverParameters: { internalQueryFacetBufferSizeBytes: 104857600, internalQueryFacetMaxOutputDocSizeBytes: 104857600, internalLookupStageIntermediateDocumentMaxSizeBytes: 104857600, internalDocumentSourceGroupMaxMemoryBytes: 104857600, internalQueryMaxBlockingSortMemoryUsageBytes: 104857600, internalQueryProhibitBlockingMergeOnMongoS: 0, internalQueryMaxAddToSetBytes: 104857600, internalDocumentSourceSetWindowFieldsMaxMemoryBytes: 104857600 },
    command: { aggregate: 'orders', pipeline: command, cursor: {}, $db: 'shop' },
    ok: 1,
  };
  return JSON.stringify(doc, null, 2);
}

// ---- language server inputs -------------------------------------------------------------------------

/**
 * A service file: handlers with driver calls, pipelines in constants and SQL through pg. One handler in
 * `badEvery` has the problems the server reports (case-insensitive regex, skip pagination, a $match after
 * a renaming $project, a function around a column, OFFSET); the others are written well.
 */
export function scriptFile(lines: number, badEvery: number): string {
  const out = [
    "import { MongoClient, ObjectId } from 'mongodb';",
    "import { Pool } from 'pg';",
    'const pool = new Pool();',
    "const client = new MongoClient(process.env.MONGO_URI ?? '');",
    "const db = client.db('shop');",
    "const orders = db.collection('orders');",
  ];
  for (let i = 0; out.length < lines; i++) {
    const coll = ['orders', 'customers', 'events', 'invoices'][i % 4];
    const bad = i % badEvery === 0;
    out.push(
      `export async function handler${i}(req: { id: string; page: number; name: string; after: Date }): Promise<unknown[]> {`,
      `  const filter = { tenant: ${i % 97}, status: { $in: ['a', 'b', 'c${i}'] }, name: ${bad ? "new RegExp(req.name, 'i')" : `/^n${i}/`} };`,
      bad
        ? `  const docs = await db.collection('${coll}').find(filter).sort({ created_at: -1 }).skip(req.page * 20).limit(20).toArray();`
        : `  const docs = await db.collection('${coll}').find({ ...filter, created_at: { $lt: req.after } }).sort({ created_at: -1 }).limit(20).toArray();`,
      '  const pipeline = [',
      ...(bad
        ? [`    { $project: { email: '$contact.email', total: 1, n: ${i} } },`, '    { $match: { email: req.name, total: { $gt: 10 } } },']
        : ["    { $match: { 'contact.email': req.name, total: { $gt: 10 } } },", `    { $project: { email: '$contact.email', total: 1, n: ${i} } },`]),
      '  ];',
      '  const agg = await orders.aggregate(pipeline).toArray();',
      bad
        ? `  const { rows } = await pool.query(\`SELECT id, total FROM orders WHERE customer_id = \${req.id} AND lower(email) = 'x${i}' ORDER BY created_at DESC OFFSET 40 LIMIT 10\`);`
        : `  const { rows } = await pool.query(\`SELECT id, total FROM orders WHERE customer_id = \${req.id} AND email = 'x${i}' ORDER BY created_at DESC LIMIT 10\`);`,
      `  const one = await orders.findOne({ _id: new ObjectId(req.id), status: { $ne: 'deleted' } });`,
      '  const list: unknown[] = [];',
      '  for (const d of docs) if (d) list.push(d);',
      '  return [...list, ...agg, ...rows, one];',
      '}',
      '',
    );
  }
  return out.slice(0, lines).join('\n');
}

export function sqlFile(lines: number, badEvery: number): string {
  const out: string[] = [];
  for (let i = 0; out.length < lines; i++) {
    const bad = i % badEvery === 0;
    out.push(
      `-- report ${i}`,
      'SELECT o.id, o.total, c.name',
      'FROM orders o JOIN customers c ON c.id = o.customer_id',
      bad ? `WHERE o.status = 's${i % 13}' AND lower(c.email) LIKE '%@example${i}.com'` : `WHERE o.status = 's${i % 13}' AND c.email = 'a${i}@example.com'`,
      'ORDER BY o.created_at DESC',
      bad ? `OFFSET ${i * 10} LIMIT 10;` : 'LIMIT 10;',
      '',
    );
  }
  return out.slice(0, lines).join('\n');
}
