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

function ixscan(r: () => number, fields: string[]): Record<string, unknown> {
  const keyPattern: Record<string, number> = {};
  const indexBounds: Record<string, string[]> = {};
  for (const f of fields) {
    keyPattern[f] = r() < 0.5 ? 1 : -1;
    indexBounds[f] = [`[${Math.floor(r() * 100)}, ${Math.floor(r() * 100) + 100}]`];
  }
  const keys = Math.floor(r() * 100000);
  return {
    stage: 'IXSCAN',
    nReturned: Math.floor(keys / 3),
    executionTimeMillisEstimate: Math.floor(r() * 50),
    works: keys + 1,
    advanced: Math.floor(keys / 3),
    needTime: keys - Math.floor(keys / 3),
    needYield: 0,
    saveState: 10,
    restoreState: 10,
    isEOF: 0,
    keyPattern,
    indexName: fields.map((f) => `${f}_1`).join('_'),
    isMultiKey: false,
    multiKeyPaths: Object.fromEntries(fields.map((f) => [f, []])),
    isUnique: false,
    isSparse: false,
    isPartial: false,
    indexVersion: 2,
    direction: 'forward',
    indexBounds,
    keysExamined: keys,
    seeks: 1 + Math.floor(r() * 3),
    dupsTested: 0,
    dupsDropped: 0,
  };
}

function fetchOver(r: () => number, input: Record<string, unknown>): Record<string, unknown> {
  return {
    stage: 'FETCH',
    filter: { status: { $eq: 'open' }, total: { $gt: Math.floor(r() * 1000) } },
    nReturned: Math.floor(((input.nReturned as number) ?? 0) / 2),
    executionTimeMillisEstimate: Math.floor(r() * 80),
    works: input.works,
    advanced: 5,
    needTime: 100,
    needYield: 0,
    saveState: 10,
    restoreState: 10,
    isEOF: 0,
    docsExamined: input.nReturned,
    alreadyHasObj: 0,
    inputStage: input,
  };
}

/**
 * A MongoDB find explain at allPlansExecution of about `targetBytes`, made of many candidate plans
 * (what a collection with many overlapping indexes and an $or produces). Real shape: queryPlanner with
 * winningPlan and rejectedPlans, executionStats with allPlansExecution trial stats, serverInfo.
 */
export function generateMongoAllPlansExplain(targetBytes: number, seed = 2): string {
  const r = rng(seed);
  const fields = ['status', 'customer_id', 'created_at', 'total', 'region', 'sku'];
  const candidate = (): Record<string, unknown> => {
    const k = 1 + Math.floor(r() * 3);
    const chosen = Array.from({ length: k }, () => fields[Math.floor(r() * fields.length)]!);
    const inputs = Array.from({ length: 1 + Math.floor(r() * 4) }, () => fetchOver(r, ixscan(r, [...new Set(chosen)])));
    return {
      stage: 'LIMIT',
      nReturned: 10,
      executionTimeMillisEstimate: 3,
      works: 1000,
      advanced: 10,
      needTime: 990,
      needYield: 0,
      isEOF: 1,
      limitAmount: 10,
      inputStage: { stage: 'SORT_MERGE', sortPattern: { created_at: -1 }, nReturned: 10, works: 1000, dupsTested: 10, dupsDropped: 0, inputStages: inputs },
    };
  };
  const strip = (p: Record<string, unknown>): Record<string, unknown> =>
    JSON.parse(JSON.stringify(p, (k, v) => (['nReturned', 'works', 'advanced', 'needTime', 'needYield', 'isEOF', 'executionTimeMillisEstimate', 'keysExamined', 'docsExamined', 'seeks', 'saveState', 'restoreState', 'dupsTested', 'dupsDropped', 'alreadyHasObj'].includes(k) ? undefined : v))) as Record<string, unknown>;
  const winning = candidate();
  const rejected: Record<string, unknown>[] = [];
  const trials: Record<string, unknown>[] = [];
  let size = 0;
  while (size < targetBytes) {
    const c = candidate();
    const stripped = strip(c);
    rejected.push(stripped);
    const trial = { nReturned: 10, executionTimeMillisEstimate: 1, totalKeysExamined: Math.floor(r() * 5000), totalDocsExamined: Math.floor(r() * 5000), executionStages: c };
    trials.push(trial);
    // Counted as printed (indented by two more levels than here), so the total lands near the target.
    size += (JSON.stringify(stripped, null, 2).length + JSON.stringify(trial, null, 2).length) * 1.25;
  }
  const doc = {
    explainVersion: '1',
    queryPlanner: {
      namespace: 'shop.orders',
      indexFilterSet: false,
      parsedQuery: { $or: [{ status: { $eq: 'open' } }, { region: { $in: ['eu', 'us'] } }] },
      queryHash: 'A1B2C3D4',
      planCacheKey: 'E5F6A7B8',
      maxIndexedOrSolutionsReached: false,
      maxIndexedAndSolutionsReached: false,
      maxScansToExplodeReached: false,
      winningPlan: strip(winning),
      rejectedPlans: rejected,
    },
    executionStats: {
      executionSuccess: true,
      nReturned: 10,
      executionTimeMillis: 42,
      totalKeysExamined: 1234,
      totalDocsExamined: 1200,
      executionStages: winning,
      allPlansExecution: trials,
    },
    command: { find: 'orders', filter: { $or: [{ status: 'open' }, { region: { $in: ['eu', 'us'] } }] }, sort: { created_at: -1 }, limit: 10, $db: 'shop' },
    serverInfo: { host: 'db1', port: 27017, version: '6.0.5', gitVersion: 'c9a99c120371d4d4c52cbb15dac34a36ce8d3b1d' },
    ok: 1,
  };
  return JSON.stringify(doc, null, 2);
}
