// The hand-made truth cases (test/fixtures/truth, measured on MongoDB 6.0.5 and PostgreSQL 15 with every
// candidate built alone) judged the way their own tests judge them, offline and connected. Connected
// advice needs their data on the server: the generators below make the same rows as the ones the cases
// were measured on (same seeds, same draws, in the same order): the integration tests' generators for
// demoesr and orders, and the customers below.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from 'mongodb';
import type { Client } from 'pg';
import { COLLSCAN, NO_INDEX, mongoKey, pgKey } from './candidates';
import type { CaseRecord, Measure } from './oracle';
import { esrDocs, orderDocs, zipfRank } from '../../test/integration/support/seed';
import { inBatches, settle } from './datasets';
import { mulberry32, weighted } from './prng';

// ---- the cases' data ----------------------------------------------------------------------------------

/** customers: 100,000 documents (seed 7). */
function* customers(): Generator<Record<string, unknown>> {
  const rand = mulberry32(7);
  const tenant = zipfRank(rand, 200, 1.1);
  const status = weighted(rand, ['active', 'pending', 'suspended', 'deleted'], [90, 6, 3, 1]);
  const plan = weighted(rand, ['free', 'pro', 'enterprise'], [70, 25, 5]);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  for (let i = 0; i < 100_000; i++) {
    const len = 6 + Math.floor(rand() * 5);
    let name = '';
    for (let k = 0; k < len; k++) name += letters[Math.floor(rand() * 26)];
    const d: Record<string, unknown> = { _id: i, customer_id: 100_000 + i, tenant: tenant(), status: status(), plan: plan(), name, contact: { email: `${name}.${i}@example${i % 5}.com` } };
    const u = rand();
    if (u < 0.2) d.phone = `+1-555-${String(Math.floor(rand() * 1e7)).padStart(7, '0')}`;
    else if (u < 0.25) d.phone = null;
    d.created = 1_672_531_200_000 + i * 60_000;
    d.score = Math.floor(rand() * 1000);
    const nr = 3 + Math.floor(rand() * 4);
    d.ratings = Array.from({ length: nr }, () => Math.floor(rand() * 101));
    yield d;
  }
}

export async function loadHandmadeMongo(db: Db): Promise<void> {
  const gens: Record<string, () => Iterable<Record<string, unknown>>> = {
    demoesr: () => esrDocs(200_000) as unknown as Record<string, unknown>[],
    orders: () => orderDocs(200_000) as unknown as Record<string, unknown>[],
    customers,
  };
  for (const [name, gen] of Object.entries(gens)) {
    if ((await db.collection(name).estimatedDocumentCount()) > 0) continue;
    await inBatches(gen(), 5000, (b) => db.collection(name).insertMany(b, { ordered: false }));
  }
}

export async function loadHandmadePostgres(pg: Client): Promise<void> {
  const have = await pg.query("SELECT 1 FROM pg_class WHERE relname = 'order_details'");
  if (have.rowCount) return;
  await pg.query(`CREATE TABLE esr (id int PRIMARY KEY, a int NOT NULL, b int NOT NULL, c int NOT NULL);
    CREATE TABLE orders (id int PRIMARY KEY, country_id int NOT NULL, created_at timestamptz NOT NULL);
    CREATE TABLE order_details (order_id int NOT NULL, line int NOT NULL, product_id int NOT NULL, quantity int NOT NULL, PRIMARY KEY (order_id, line))`);
  await inBatches(esrDocs(200_000), 20_000, (b) => pg.query('INSERT INTO esr SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::int[])', [b.map((d) => d._id), b.map((d) => d.e), b.map((d) => d.s), b.map((d) => d.r)]));
  await inBatches(orderDocs(200_000), 10_000, async (b) => {
    await pg.query('INSERT INTO orders SELECT * FROM unnest($1::int[], $2::int[], $3::timestamptz[])', [b.map((d) => d._id), b.map((d) => d.country_id), b.map((d) => d.created_at.toISOString())]);
    const det = b.flatMap((d) => d.order_details.map((x) => [d._id, x.line, x.product_id, x.quantity]));
    await pg.query('INSERT INTO order_details SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::int[])', [0, 1, 2, 3].map((k) => det.map((r) => r[k])));
  });
  await settle(pg, ['esr', 'orders', 'order_details']);
}

// ---- the cases and their judgement --------------------------------------------------------------------

interface RecordedCandidate { index: unknown; keysExamined: number; docsExamined: number; blockingSort: boolean; buffers: number; sorted?: number }
export interface HandmadeCase {
  id: string;
  engine: string;
  query: { text: string };
  oracle: { index: unknown; metrics: RecordedCandidate };
  candidates: RecordedCandidate[];
}

export function readHandmade(dir: string): HandmadeCase[] {
  return readdirSync(dir).filter((d) => !d.startsWith('.')).sort().map((d) => JSON.parse(readFileSync(join(dir, d, 'case.json'), 'utf8')) as HandmadeCase);
}

/** Cases whose suggestion serves a rewrite that another case measured, as the cases' own tests pair them. */
export const REWRITTEN_IN: Record<string, string> = {
  m09a_agg_project_then_match: 'm09b_agg_match_then_project',
  p10d1_any_sort_limit: 'p10d2_union_all_rewrite',
  p10e1_offset_pagination: 'p10e2_keyset_pagination',
};

/** The recorded candidates under the oracle's keys (mongoKey, pgKey, COLLSCAN, NO_INDEX). */
export function recordedKeys(c: HandmadeCase): Map<string, RecordedCandidate> {
  const out = new Map<string, RecordedCandidate>();
  const table = /\bfrom\s+(\w+)/i.exec(c.query.text)?.[1] ?? '';
  for (const x of c.candidates) {
    if (c.id.startsWith('m')) {
      if (typeof x.index === 'object' && x.index !== null) out.set(mongoKey(x.index as Record<string, number>), x);
      else if (String(x.index).startsWith('COLLSCAN')) out.set(COLLSCAN, x);
    } else if (typeof x.index === 'string') {
      if (x.index.startsWith('none')) out.set(NO_INDEX, x);
      else if (!x.index.includes('+')) out.set(pgKey(`CREATE INDEX ON ${x.index.startsWith('(') ? table : ''}${x.index}`), x);
    }
  }
  return out;
}

/** keys + documents (MongoDB) or buffers (PostgreSQL), the unit the recorded oracle ranks by. */
export function recordedWork(c: HandmadeCase, m: RecordedCandidate): number {
  return c.id.startsWith('m') ? m.keysExamined + m.docsExamined : m.buffers;
}

/** A live measure in the recorded unit, with the blocking sort it saw. */
export function asRecorded(m: Measure): RecordedCandidate {
  return { index: null, keysExamined: m.keysExamined ?? 0, docsExamined: m.docsExamined ?? 0, blockingSort: (m.sorted ?? 0) > 0, sorted: m.sorted ?? 0, buffers: m.work };
}

/** Documents a blocking sort held: measured live, or for a recorded candidate the documents it fetched. */
function sortedOf(m: RecordedCandidate): number {
  return m.sorted ?? (m.blockingSort ? m.docsExamined || m.keysExamined : 0);
}

/**
 * Correct as the cases' README ranks them: within 10% of the oracle's work (keys + documents, or
 * buffers) without a blocking sort where the oracle has none; or, for MongoDB, within 10% of the oracle
 * counting the documents sorted in memory as work too (the ERS side of the trade-off, which wins when
 * the range keeps a handful of documents).
 */
export function handmadeCorrect(c: HandmadeCase, m: RecordedCandidate): boolean {
  const o = c.oracle.metrics;
  if (recordedWork(c, m) <= recordedWork(c, o) * 1.1 && (!c.id.startsWith('m') || o.blockingSort || !m.blockingSort)) return true;
  return c.id.startsWith('m') && recordedWork(c, m) + sortedOf(m) <= (recordedWork(c, o) + sortedOf(o)) * 1.1;
}

/** A record for the live measures of suggestions outside the recorded candidates (never cached). */
export function handmadeRecord(c: HandmadeCase): CaseRecord {
  const mongo = c.id.startsWith('m');
  const collection = /^db\.(\w+)/.exec(c.query.text)?.[1] ?? '';
  return { case: { seed: 0, engine: mongo ? 'mongodb' : 'postgres', set: 'checking', category: c.id, query: c.query.text, ...(mongo ? { mongo: { collection, fields: [], sort: [] } } : {}) }, candidates: {}, extra: {} };
}
