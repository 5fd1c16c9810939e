#!/usr/bin/env node
// Loads the sample data the queries in this folder run against, deterministically (seeded), into the
// servers you name. Both arguments are optional; give the ones you have:
//
//   node samples/load-sample-data.mjs --mongo mongodb://127.0.0.1:27017/qpi_samples --pg postgresql://postgres@127.0.0.1:5432/postgres
//
// MongoDB: collections orders (embedded order_details), demoesr (e, s, r) and customers (contact.email),
// with the indexes the samples discuss. PostgreSQL: tables orders and order_details with theirs.
// Re-running replaces the data. Sizes are small enough to load in seconds and large enough to show the
// effects (--scale 2 doubles them).

import { MongoClient } from 'mongodb';
import pg from 'pg';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const mongoUri = opt('mongo') ?? process.env.QPI_SAMPLES_MONGO_URI;
const pgUri = opt('pg') ?? process.env.QPI_SAMPLES_PG_URI;
const scale = Number(opt('scale') ?? 1);
if (!mongoUri && !pgUri) {
  console.error('usage: node samples/load-sample-data.mjs [--mongo URI] [--pg URI] [--scale N]');
  process.exit(64);
}

const SIZES = { orders: Math.round(20000 * scale), demoesr: Math.round(50000 * scale), customers: Math.round(20000 * scale) };

/** A small seeded generator (xorshift-multiply), so every run makes the same data. */
function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pickWeighted(rand, values, weights) {
  const total = weights.reduce((a, b) => a + b, 0);
  let u = rand() * total;
  for (let i = 0; i < values.length; i++) {
    u -= weights[i];
    if (u < 0) return values[i];
  }
  return values[values.length - 1];
}

/** Orders: country 1 is 18% of them; low product ids sit in old orders; created_at grows with _id. */
function* orders() {
  const rand = random(1);
  const base = Date.UTC(2024, 0, 1);
  for (let i = 0; i < SIZES.orders; i++) {
    const country_id = pickWeighted(rand, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [25, 18, 13, 10, 8, 7, 6, 5, 4, 4]);
    const created_at = new Date(base + i * 60000 + Math.floor(rand() * 60) * 1000);
    const order_details = [];
    for (let line = 1; line <= 10; line++) {
      order_details.push({ line, product_id: Math.floor(Math.log2(1 + i * rand())), quantity: 1 + Math.floor(rand() * 10) });
    }
    yield { _id: i, country_id, created_at, order_details };
  }
}

/** demoesr: e = 42 for a tenth of the documents, s unique, r mostly small. */
function* demoesr() {
  const rand = random(42);
  const perm = Array.from({ length: SIZES.demoesr }, (_, i) => i);
  const shuffle = random(43);
  for (let i = perm.length - 1; i > 0; i--) {
    const j = Math.floor(shuffle() * (i + 1));
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  for (let i = 0; i < SIZES.demoesr; i++) {
    const e = rand() < 0.1 ? 42 : Math.floor(1000 * rand() ** 3);
    const r = Math.min(999, Math.floor(-Math.log(1 - rand()) * 25));
    yield { _id: i, e, s: perm[i], r };
  }
}

function* customers() {
  const rand = random(7);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  for (let i = 0; i < SIZES.customers; i++) {
    let name = '';
    const len = 6 + Math.floor(rand() * 5);
    for (let k = 0; k < len; k++) name += letters[Math.floor(rand() * 26)];
    yield {
      _id: i, customer_id: 100000 + i, status: pickWeighted(rand, ['active', 'pending', 'suspended'], [90, 7, 3]), name,
      contact: { email: `${name}.${i}@example.com` }, created: new Date(Date.UTC(2023, 0, 1) + i * 60000), score: Math.floor(rand() * 1000),
    };
  }
}

async function loadMongo(uri) {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10000 });
  await client.connect();
  try {
    const db = client.db();
    for (const [name, gen] of Object.entries({ orders, demoesr, customers })) {
      await db.collection(name).drop().catch(() => undefined);
      let batch = [];
      for (const doc of gen()) {
        batch.push(doc);
        if (batch.length === 5000) {
          await db.collection(name).insertMany(batch, { ordered: false });
          batch = [];
        }
      }
      if (batch.length) await db.collection(name).insertMany(batch, { ordered: false });
    }
    await db.collection('orders').createIndex({ country_id: 1, 'order_details.product_id': 1, created_at: -1 });
    await db.collection('orders').createIndex({ country_id: 1, created_at: -1 });
    await db.collection('demoesr').createIndexes([{ key: { e: 1, s: 1, r: 1 } }, { key: { e: 1, r: 1 } }, { key: { r: 1, e: 1 } }]);
    await db.collection('customers').createIndex({ 'contact.email': 1 });
    console.log(`MongoDB ${db.databaseName}: orders ${SIZES.orders}, demoesr ${SIZES.demoesr}, customers ${SIZES.customers}`);
  } finally {
    await client.close();
  }
}

async function loadPostgres(uri) {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    await client.query(`DROP TABLE IF EXISTS order_details; DROP TABLE IF EXISTS orders;
      CREATE TABLE orders (id int PRIMARY KEY, country_id int NOT NULL, created_at timestamptz NOT NULL);
      CREATE TABLE order_details (order_id int NOT NULL REFERENCES orders(id), line int NOT NULL, product_id int NOT NULL, quantity int NOT NULL, PRIMARY KEY (order_id, line));`);
    let rows = [];
    let details = [];
    const flush = async () => {
      if (rows.length) {
        await client.query('INSERT INTO orders SELECT * FROM unnest($1::int[], $2::int[], $3::timestamptz[])', [rows.map((r) => r._id), rows.map((r) => r.country_id), rows.map((r) => r.created_at)]);
      }
      if (details.length) {
        await client.query('INSERT INTO order_details SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::int[])', [0, 1, 2, 3].map((k) => details.map((d) => d[k])));
      }
      rows = [];
      details = [];
    };
    for (const o of orders()) {
      rows.push(o);
      for (const d of o.order_details) details.push([o._id, d.line, d.product_id, d.quantity]);
      if (rows.length === 5000) await flush();
    }
    await flush();
    await client.query(`CREATE INDEX orders_country_created ON orders (country_id, created_at);
      CREATE INDEX orders_created_id ON orders (created_at, id);
      CREATE INDEX order_details_product ON order_details (product_id);
      ANALYZE orders; ANALYZE order_details;`);
    console.log(`PostgreSQL: orders ${SIZES.orders}, order_details ${SIZES.orders * 10}`);
  } finally {
    await client.end();
  }
}

try {
  if (mongoUri) await loadMongo(mongoUri);
  if (pgUri) await loadPostgres(pgUri);
} catch (err) {
  console.error(`Loading the sample data failed: ${err.message}`);
  process.exit(1);
}
