// Plans for the browser tests: real corpus outputs read with loadPlan, hostile outputs whose names and
// filters carry markup, and a generated PostgreSQL plan of 5,000 nodes in EXPLAIN (FORMAT JSON) form.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { analyze, loadPlan } from '../../src/core/index';
import type { Finding, Plan } from '../../src/core/model';
import type { ShowPlanMessage } from '../../src/protocol/webview';
const CORPUS = resolve(__dirname, '..', 'fixtures', 'corpus');

export function corpusText(name: string): string {
  return readFileSync(join(CORPUS, name), 'utf8');
}

/** Reads a text with the product's loader; a refusal fails the test with its sentence. */
export function load(text: string, what: string): Plan {
  const r = loadPlan(text);
  if (!r.ok) throw new Error(`${what} was refused: ${r.refusal}`);
  return r.plan;
}

/** A showPlan message for a corpus file, with the product's own findings. */
export function corpusMessage(name: string, extra: Partial<ShowPlanMessage> = {}): ShowPlanMessage {
  const text = corpusText(name);
  const plan = load(text, name);
  const findings: Finding[] = analyze(plan);
  return { type: 'showPlan', title: name, plan, findings, rawText: text, ...extra };
}

// ---- hostile --------------------------------------------------------------------------------------

export const HOSTILE = [
  '<img src=x onerror=alert(1)>',
  '</script><script>alert(2)</script>',
  '"><svg onload=alert(3)>',
  "'><iframe src=javascript:alert(4)>",
  '<style>*{display:none}</style>',
  '{{constructor.constructor("alert(5)")()}}',
];

/** A PostgreSQL JSON explain whose relation, index, alias, filters and node type carry markup. */
export function hostilePostgresText(): string {
  const scan = (i: number, extra: Record<string, unknown>) => ({
    'Parent Relationship': i === 0 ? 'Outer' : 'Inner',
    'Parallel Aware': false,
    'Startup Cost': 0.0,
    'Total Cost': 35.5,
    'Plan Rows': 10,
    'Plan Width': 40,
    'Actual Startup Time': 0.01,
    'Actual Total Time': 0.5,
    'Actual Rows': 3,
    'Actual Loops': 1,
    ...extra,
  });
  const plan = [
    {
      Plan: {
        'Node Type': 'Nested Loop',
        'Parallel Aware': false,
        'Join Type': 'Inner',
        'Startup Cost': 0.0,
        'Total Cost': 100.0,
        'Plan Rows': 10,
        'Plan Width': 80,
        'Actual Startup Time': 0.02,
        'Actual Total Time': 1.5,
        'Actual Rows': 3,
        'Actual Loops': 1,
        'Join Filter': `(a.name <> '${HOSTILE[1]}'::text)`,
        'Rows Removed by Join Filter': 7,
        Plans: [
          scan(0, {
            'Node Type': 'Index Scan',
            'Scan Direction': 'Forward',
            'Index Name': HOSTILE[0],
            'Relation Name': HOSTILE[1],
            Alias: HOSTILE[2],
            'Index Cond': `(id = '${HOSTILE[0]}'::text)`,
            Filter: `(note ~~ '${HOSTILE[3]}'::text)`,
            'Rows Removed by Filter': 40,
          }),
          scan(1, {
            'Node Type': 'Seq Scan',
            'Relation Name': HOSTILE[4],
            Alias: HOSTILE[5],
            Filter: `(x = '${HOSTILE[2]}')`,
            'Rows Removed by Filter': 1200,
            [HOSTILE[0]]: HOSTILE[1],
          }),
        ],
      },
      'Planning Time': 0.2,
      'Execution Time': 1.7,
    },
  ];
  return JSON.stringify(plan, null, 2);
}

/** A MongoDB explain whose index name, key pattern, bounds and filter carry markup. */
export function hostileMongoText(): string {
  const doc = {
    explainVersion: '1',
    queryPlanner: {
      namespace: `db.${HOSTILE[1]}`,
      parsedQuery: { name: { $eq: HOSTILE[0] } },
      winningPlan: {
        stage: 'FETCH',
        filter: { name: { $eq: HOSTILE[0] } },
        inputStage: {
          stage: 'IXSCAN',
          keyPattern: { [HOSTILE[2]]: 1, age: -1 },
          indexName: HOSTILE[0],
          isMultiKey: false,
          direction: 'forward',
          indexBounds: { [HOSTILE[2]]: [`["${HOSTILE[1]}", "${HOSTILE[1]}"]`], age: ['[MaxKey, MinKey]'] },
        },
      },
      rejectedPlans: [],
    },
    executionStats: {
      executionSuccess: true,
      nReturned: 2,
      executionTimeMillis: 1,
      totalKeysExamined: 50,
      totalDocsExamined: 50,
      executionStages: {
        stage: 'FETCH',
        filter: { name: { $eq: HOSTILE[0] } },
        nReturned: 2,
        executionTimeMillisEstimate: 0,
        works: 51,
        advanced: 2,
        docsExamined: 50,
        inputStage: {
          stage: 'IXSCAN',
          nReturned: 50,
          executionTimeMillisEstimate: 0,
          keyPattern: { [HOSTILE[2]]: 1, age: -1 },
          indexName: HOSTILE[0],
          indexBounds: { [HOSTILE[2]]: [`["${HOSTILE[1]}", "${HOSTILE[1]}"]`], age: ['[MaxKey, MinKey]'] },
          keysExamined: 50,
          seeks: 1,
        },
      },
    },
    serverInfo: { host: HOSTILE[3], version: '7.0.0' },
    ok: 1,
  };
  return JSON.stringify(doc, null, 2);
}

// ---- big ------------------------------------------------------------------------------------------

interface PgNode {
  'Node Type': string;
  'Parent Relationship'?: string;
  'Join Type'?: string;
  'Relation Name'?: string;
  Alias?: string;
  'Index Name'?: string;
  Filter?: string;
  'Rows Removed by Filter'?: number;
  'Startup Cost': number;
  'Total Cost': number;
  'Plan Rows': number;
  'Plan Width': number;
  'Actual Startup Time': number;
  'Actual Total Time': number;
  'Actual Rows': number;
  'Actual Loops': number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PgNode[];
}

/**
 * A PostgreSQL EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of exactly `total` nodes: an Append over many
 * join trees of varying depth, one of them a long chain, with times and buffers that add up. Built
 * deterministically so the same plan is drawn on every run.
 */
export function bigPostgresText(total = 5000): { text: string; deepRelation: string } {
  let seed = 42;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  let made = 0;
  let deepRelation = '';
  const leaf = (rel: string, role: string): PgNode => {
    made++;
    const rows = Math.floor(rnd() * 50_000) + 1;
    const removed = rnd() < 0.3 ? Math.floor(rnd() * 200_000) : undefined;
    const time = Math.round(rnd() * 4000) / 100;
    const n: PgNode = {
      'Node Type': rnd() < 0.5 ? 'Seq Scan' : 'Index Scan',
      'Parent Relationship': role,
      'Relation Name': rel,
      Alias: rel,
      'Startup Cost': 0,
      'Total Cost': rows * 1.5,
      'Plan Rows': Math.max(1, Math.floor(rows * (0.05 + rnd() * 3))),
      'Plan Width': 40,
      'Actual Startup Time': 0.01,
      'Actual Total Time': time,
      'Actual Rows': rows,
      'Actual Loops': 1,
      'Shared Hit Blocks': Math.floor(rnd() * 5000),
      'Shared Read Blocks': Math.floor(rnd() * 2000),
    };
    if (n['Node Type'] === 'Index Scan') n['Index Name'] = `${rel}_pkey`;
    if (removed !== undefined) {
      n.Filter = `(${rel}.status = 'open'::text)`;
      n['Rows Removed by Filter'] = removed;
    }
    return n;
  };
  const inner = (kind: string, role: string, kids: PgNode[]): PgNode => {
    made++;
    const childTime = kids.reduce((s, k) => s + k['Actual Total Time'], 0);
    const rows = Math.max(1, Math.floor(kids.reduce((s, k) => Math.max(s, k['Actual Rows']), 0) * (0.2 + rnd())));
    const n: PgNode = {
      'Node Type': kind,
      'Parent Relationship': role,
      'Startup Cost': 1,
      'Total Cost': rows * 2,
      'Plan Rows': Math.max(1, Math.floor(rows * (0.1 + rnd() * 2))),
      'Plan Width': 64,
      'Actual Startup Time': 0.1,
      'Actual Total Time': Math.round((childTime + rnd() * 30) * 1000) / 1000,
      'Actual Rows': rows,
      'Actual Loops': 1,
      'Shared Hit Blocks': kids.reduce((s, k) => s + k['Shared Hit Blocks'], 0),
      'Shared Read Blocks': kids.reduce((s, k) => s + k['Shared Read Blocks'], 0),
      Plans: kids,
    };
    if (kind.endsWith('Join') || kind === 'Nested Loop') n['Join Type'] = 'Inner';
    return n;
  };
  // One branch: a join tree whose size is bounded by `budget` nodes.
  const branch = (budget: number, depth: number, tag: string, role: string): PgNode => {
    if (budget <= 1 || depth > 40) return leaf(`t_${tag}_${made}`, role);
    if (budget === 2) return inner(rnd() < 0.5 ? 'Sort' : 'Materialize', role, [leaf(`t_${tag}_${made}`, 'Outer')]);
    const kind = ['Hash Join', 'Nested Loop', 'Merge Join'][Math.floor(rnd() * 3)]!;
    const left = Math.max(1, Math.floor((budget - 1) * (0.3 + rnd() * 0.4)));
    const right = budget - 1 - left;
    const l = branch(left, depth + 1, tag, 'Outer');
    const r = right > 0 ? branch(right, depth + 1, tag, 'Inner') : leaf(`t_${tag}_${made}`, 'Inner');
    return inner(kind, role, [l, r]);
  };
  // A long chain to test deep paths: Limit -> Sort -> Materialize -> ... -> a scan.
  const chain = (length: number): PgNode => {
    deepRelation = `deep_target_${length}`;
    let n = leaf(deepRelation, 'Outer');
    for (let i = 0; i < length - 1; i++) n = inner(['Materialize', 'Sort', 'Limit', 'Unique'][i % 4]!, 'Outer', [n]);
    return n;
  };
  const children: PgNode[] = [];
  const chainLen = 120;
  const branches = 60;
  // Root Aggregate + Append take two nodes; the chain takes its length; branches share the rest.
  let left = total - 2 - chainLen;
  children.push(chain(chainLen));
  for (let b = 0; b < branches; b++) {
    const size = b === branches - 1 ? left : Math.max(1, Math.floor(left / (branches - b)));
    left -= size;
    children.push(branch(size, 1, `b${b}`, 'Member'));
  }
  for (const c of children) c['Parent Relationship'] = 'Member';
  const append = inner('Append', 'Outer', children);
  const root = inner('Aggregate', 'Outer', [append]);
  delete root['Parent Relationship'];
  if (made !== total) throw new Error(`generated ${made} nodes, wanted ${total}`);
  const text = JSON.stringify([{ Plan: root, 'Planning Time': 12.5, 'Execution Time': root['Actual Total Time'] + 1 }]);
  return { text, deepRelation };
}

/**
 * A PostgreSQL plan in EXPLAIN (ANALYZE, FORMAT JSON) form whose Append reads `partitions` partitions, one
 * Seq Scan each, below an Aggregate: the shape of a query over a table partitioned by day for years.
 */
export function wideAppendText(partitions: number): string {
  const scans = Array.from({ length: partitions }, (_, i) => ({
    'Node Type': 'Seq Scan',
    'Parent Relationship': 'Member',
    'Parallel Aware': false,
    'Relation Name': `events_p${i}`,
    Alias: `events_${i + 1}`,
    'Startup Cost': 0,
    'Total Cost': 35.5,
    'Plan Rows': 2550,
    'Plan Width': 0,
    'Actual Startup Time': 0.004,
    'Actual Total Time': 0.2,
    'Actual Rows': 1000 + (i % 7),
    'Actual Loops': 1,
  }));
  const append = { 'Node Type': 'Append', 'Parent Relationship': 'Outer', 'Parallel Aware': false, 'Startup Cost': 0, 'Total Cost': 35.5 * partitions, 'Plan Rows': 2550 * partitions, 'Plan Width': 0, 'Actual Startup Time': 0.01, 'Actual Total Time': 0.21 * partitions, 'Actual Rows': 1003 * partitions, 'Actual Loops': 1, 'Subplans Removed': 0, Plans: scans };
  const agg = { 'Node Type': 'Aggregate', Strategy: 'Plain', 'Partial Mode': 'Simple', 'Parallel Aware': false, 'Startup Cost': 36 * partitions, 'Total Cost': 36 * partitions + 0.01, 'Plan Rows': 1, 'Plan Width': 8, 'Actual Startup Time': 0.22 * partitions, 'Actual Total Time': 0.22 * partitions, 'Actual Rows': 1, 'Actual Loops': 1, Plans: [append] };
  return JSON.stringify([{ Plan: agg, 'Planning Time': 40.1, Triggers: [], 'Execution Time': 0.23 * partitions }], null, 2);
}
