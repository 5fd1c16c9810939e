// The sample data the generated truth cases run on: two MongoDB collections and three PostgreSQL tables,
// made from fixed seeds so every machine loads the same rows. The fields mix skewed (Zipf, weighted) and
// uniform distributions, monotonic dates, sparse and null fields, arrays of scalars and of sub-documents
// (multikey) and jsonb, so that the same query shape can be selective or not depending on the value drawn.
// Sizes are chosen so that the oracle (every candidate index built on the full data) runs in minutes on
// two cores.

import type { Db } from 'mongodb';
import type { Client } from 'pg';
import { int, letters, mulberry32, pickSome, weighted, zipf } from './prng';

/** Bumped whenever a generator changes, so cached oracle results of older data are not reused. */
export const DATA_VERSION = 3;

export const MONGO_SIZES = { gorders: 60_000, gusers: 40_000 } as const;
export const PG_SIZES = { customers: 20_000, orders: 100_000 } as const;

export const STATUSES = ['paid', 'shipped', 'new', 'cancelled', 'returned'] as const;
export const STATUS_WEIGHTS = [70, 15, 8, 5, 2];
export const PLANS = ['free', 'pro', 'enterprise'] as const;
export const PLAN_WEIGHTS = [75, 20, 5];
export const CHANNELS = ['web', 'app', 'store', 'phone'] as const;
export const CHANNEL_WEIGHTS = [55, 30, 10, 5];
export const TAGS = Array.from({ length: 30 }, (_, i) => `t${i}`);
export const COUNTRIES = Array.from({ length: 40 }, (_, i) => `c${String(i).padStart(2, '0')}`);
export const BASE_TIME = Date.UTC(2024, 0, 1);
/** gorders.created advances 90 s per document; gusers.signup 10 min; PostgreSQL orders 60 s per row. */
export const ORDER_STEP_MS = 90_000;
export const USER_STEP_MS = 600_000;
export const PG_ORDER_STEP_MS = 60_000;

/**
 * gorders {_id, cust, status, region, total, created, priority, tags[], items[{sku, qty}], coupon?, ref}:
 * cust Zipf(1.1) over 0..1999 (cust 0 about 12%); status weighted 70/15/8/5/2; region uniform 0..19;
 * total uniform 0..99,999; created monotonic; priority weighted 60/25/10/4/1 over 0..4; tags 1-4
 * distinct of 30, Zipf; items 1-6 sub-documents, sku Zipf(1.0) over 0..499, qty uniform 1..9; coupon a
 * string in 15%, null in 5%, missing otherwise; ref 8 uniform lowercase letters.
 */
export function* gorders(): Generator<Record<string, unknown>> {
  const rand = mulberry32(101);
  const cust = zipf(rand, 2000, 1.1);
  const status = weighted(rand, STATUSES, STATUS_WEIGHTS);
  const priority = weighted(rand, [0, 1, 2, 3, 4], [60, 25, 10, 4, 1]);
  const tag = zipf(rand, TAGS.length, 1.0);
  const sku = zipf(rand, 500, 1.0);
  for (let i = 0; i < MONGO_SIZES.gorders; i++) {
    const tags = new Set<string>();
    const nt = int(rand, 1, 4);
    while (tags.size < nt) tags.add(TAGS[tag()]!);
    const items = Array.from({ length: int(rand, 1, 6) }, () => ({ sku: sku(), qty: int(rand, 1, 9) }));
    const d: Record<string, unknown> = {
      _id: i, cust: cust(), status: status(), region: int(rand, 0, 19), total: int(rand, 0, 99_999),
      created: new Date(BASE_TIME + i * ORDER_STEP_MS), priority: priority(), tags: [...tags], items,
    };
    const u = rand();
    if (u < 0.15) d.coupon = `C${letters(rand, 5)}`;
    else if (u < 0.2) d.coupon = null;
    d.ref = letters(rand, 8);
    yield d;
  }
}

/**
 * gusers {_id, tenant, country, age, score, plan, name, signup, address{city, zip}, logins[], verified?}:
 * tenant Zipf(1.0) over 0..99; country uniform over 40 codes; age uniform 18..90; score uniform 0..999;
 * plan weighted 75/20/5; name 5-9 lowercase letters; signup monotonic; city Zipf(1.2) over 300; zip
 * uniform; logins 0-8 day numbers uniform 0..999; verified true 30%, false 60%, missing 10%.
 */
export function* gusers(): Generator<Record<string, unknown>> {
  const rand = mulberry32(202);
  const tenant = zipf(rand, 100, 1.0);
  const plan = weighted(rand, PLANS, PLAN_WEIGHTS);
  const city = zipf(rand, 300, 1.2);
  for (let i = 0; i < MONGO_SIZES.gusers; i++) {
    const d: Record<string, unknown> = {
      _id: i, tenant: tenant(), country: COUNTRIES[int(rand, 0, COUNTRIES.length - 1)], age: int(rand, 18, 90),
      score: int(rand, 0, 999), plan: plan(), name: letters(rand, int(rand, 5, 9)),
      signup: new Date(BASE_TIME + i * USER_STEP_MS),
      address: { city: `city${city()}`, zip: int(rand, 10_000, 99_999) },
      logins: Array.from({ length: int(rand, 0, 8) }, () => int(rand, 0, 999)),
    };
    const u = rand();
    if (u < 0.3) d.verified = true;
    else if (u < 0.9) d.verified = false;
    yield d;
  }
}

export const MONGO_GENERATORS = { gorders, gusers } as const;

/** customers(id, tenant, country, plan, score, created): tenant Zipf(1.0) over 0..99, the rest as gusers. */
export function* customers(): Generator<[number, number, string, string, number, string]> {
  const rand = mulberry32(303);
  const tenant = zipf(rand, 100, 1.0);
  const plan = weighted(rand, PLANS, PLAN_WEIGHTS);
  for (let i = 1; i <= PG_SIZES.customers; i++) {
    yield [i, tenant(), COUNTRIES[int(rand, 0, COUNTRIES.length - 1)]!, plan(), int(rand, 0, 999), new Date(BASE_TIME + i * USER_STEP_MS).toISOString()];
  }
}

/**
 * orders(id, customer_id, status, total, region, priority, created_at, attrs jsonb) and
 * order_items(order_id, line, sku, qty): customer_id Zipf(1.1) over the customers (customer 1 about 12%),
 * attrs {channel weighted 55/30/10/5, gift true in 10%, tags 0-3 of 30}, 1-5 items per order.
 */
export function* orders(): Generator<{ row: [number, number, string, number, number, number, string, string]; items: [number, number, number, number][] }> {
  const rand = mulberry32(404);
  const cust = zipf(rand, PG_SIZES.customers, 1.1);
  const status = weighted(rand, STATUSES, STATUS_WEIGHTS);
  const priority = weighted(rand, [0, 1, 2, 3, 4], [60, 25, 10, 4, 1]);
  const channel = weighted(rand, CHANNELS, CHANNEL_WEIGHTS);
  const sku = zipf(rand, 500, 1.0);
  for (let i = 1; i <= PG_SIZES.orders; i++) {
    const attrs: Record<string, unknown> = { channel: channel() };
    if (rand() < 0.1) attrs.gift = true;
    attrs.tags = pickSome(rand, TAGS, int(rand, 0, 3));
    const row: [number, number, string, number, number, number, string, string] = [
      i, cust() + 1, status(), int(rand, 0, 99_999), int(rand, 0, 19), priority(), new Date(BASE_TIME + i * PG_ORDER_STEP_MS).toISOString(), JSON.stringify(attrs),
    ];
    const items = Array.from({ length: int(rand, 1, 5) }, (_, k): [number, number, number, number] => [i, k + 1, sku(), int(rand, 1, 9)]);
    yield { row, items };
  }
}

/** Calls fn with consecutive slices of `size` items (the last may be shorter). */
export async function inBatches<T>(gen: Iterable<T>, size: number, fn: (batch: T[]) => Promise<unknown>): Promise<void> {
  let batch: T[] = [];
  for (const x of gen) {
    batch.push(x);
    if (batch.length === size) {
      await fn(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await fn(batch);
}

/** Loads the collections into `db` unless the same version is already there. */
export async function loadMongo(db: Db): Promise<void> {
  const meta = db.collection<{ _id: string; v: number }>('_meta');
  for (const [name, gen] of Object.entries(MONGO_GENERATORS)) {
    const m = await meta.findOne({ _id: name });
    if (m?.v === DATA_VERSION) continue;
    await db.collection(name).drop().catch(() => undefined);
    await inBatches(gen(), 5000, (b) => db.collection(name).insertMany(b, { ordered: false }));
    await meta.replaceOne({ _id: name }, { v: DATA_VERSION }, { upsert: true });
  }
}

/**
 * Makes the planner's view of freshly loaded tables the same on every load: statistics from a full-table
 * sample, and every page marked all-visible (index-only scans are costed by that share). A plain VACUUM
 * right after the load leaves most pages unmarked on PostgreSQL 15; VACUUM FREEZE marks them all. It is
 * repeated, a bounded number of times, until the visibility map covers the table, and autovacuum is off
 * on these tables so that nothing changes them afterwards.
 */
export async function settle(pg: Client, tables: string[]): Promise<void> {
  await pg.query('SET default_statistics_target = 10000');
  for (const t of tables) {
    await pg.query(`ALTER TABLE ${t} SET (autovacuum_enabled = off)`);
    for (let i = 0; i < 5; i++) {
      await pg.query(`VACUUM (FREEZE, ANALYZE) ${t}`);
      const r = await pg.query<{ done: boolean }>('SELECT relallvisible >= relpages AS done FROM pg_class WHERE oid = $1::regclass', [t]);
      if (r.rows[0]?.done) break;
    }
  }
  await pg.query('RESET default_statistics_target');
}

/** Creates and fills the tables unless the same version is already there; VACUUM ANALYZE at the end. */
export async function loadPostgres(pg: Client): Promise<void> {
  await pg.query('CREATE TABLE IF NOT EXISTS _meta (name text PRIMARY KEY, v int)');
  const m = await pg.query<{ v: number }>("SELECT v FROM _meta WHERE name = 'gen'");
  if (m.rows[0]?.v === DATA_VERSION) return;
  await pg.query(`DROP TABLE IF EXISTS order_items, orders, customers;
    CREATE TABLE customers (id int PRIMARY KEY, tenant int NOT NULL, country text NOT NULL, plan text NOT NULL, score int NOT NULL, created timestamptz NOT NULL);
    CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, status text NOT NULL, total int NOT NULL, region int NOT NULL, priority int NOT NULL, created_at timestamptz NOT NULL, attrs jsonb NOT NULL);
    CREATE TABLE order_items (order_id int NOT NULL, line int NOT NULL, sku int NOT NULL, qty int NOT NULL, PRIMARY KEY (order_id, line))`);
  const columns = <T extends unknown[]>(rows: T[], k: number): unknown[] => rows.map((r) => r[k]);
  await inBatches(customers(), 10_000, (b) => pg.query('INSERT INTO customers SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::int[], $6::timestamptz[])', [0, 1, 2, 3, 4, 5].map((k) => columns(b, k))));
  await inBatches(orders(), 10_000, async (b) => {
    const rows = b.map((x) => x.row);
    await pg.query('INSERT INTO orders SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::int[], $5::int[], $6::int[], $7::timestamptz[], $8::jsonb[])', [0, 1, 2, 3, 4, 5, 6, 7].map((k) => columns(rows, k)));
    const items = b.flatMap((x) => x.items);
    await pg.query('INSERT INTO order_items SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::int[])', [0, 1, 2, 3].map((k) => columns(items, k)));
  });
  await settle(pg, ['customers', 'orders', 'order_items']);
  await pg.query("INSERT INTO _meta VALUES ('gen', $1) ON CONFLICT (name) DO UPDATE SET v = EXCLUDED.v", [DATA_VERSION]);
}
