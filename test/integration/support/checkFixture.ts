// The databases of the `qpi check` fixture application (test/fixtures/check-app), loaded fresh for a test
// file: its migration and data in a PostgreSQL database of its own, and its events in a MongoDB database.

import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { Client } from 'pg';
import { env, pgUriFor } from './env';

export const CHECK_FIXTURE = join(__dirname, '..', '..', 'fixtures', 'check-app');

/** Runs `fn` on a connection to one database of the test server, as its superuser. */
export async function pgAdmin<T>(db: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: pgUriFor(db) });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface CheckData {
  /** The SQL condition on `g` (1..50,000) that makes an order open. */
  openOrder: string;
  /** One event in this many is a click. */
  clickEvery: number;
}

/** The fixture's databases, dropped and loaded again: 20,000 customers, 50,000 orders, 5,000 events with their index. */
export async function loadCheckDatabases(pgDb: string, mongoDb: string, data: CheckData = { openOrder: 'g % 10 = 0', clickEvery: 3 }): Promise<void> {
  await pgAdmin('postgres', async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${pgDb}`);
    await c.query(`CREATE DATABASE ${pgDb}`);
  });
  await pgAdmin(pgDb, async (c) => {
    await c.query(readFileSync(join(CHECK_FIXTURE, 'migrations', '001_schema.sql'), 'utf8'));
    await c.query(`INSERT INTO customers (email) SELECT 'user' || g || '@example.com' FROM generate_series(1, 20000) g`);
    await c.query(`INSERT INTO orders (customer_id, status, total, created_at) SELECT g % 5000, CASE WHEN ${data.openOrder} THEN 'open' ELSE 'done' END, g % 100, now() - g * interval '1 minute' FROM generate_series(1, 50000) g`);
    // VACUUM as well: autovacuum would otherwise vacuum the freshly inserted tables while the test runs and
    // change the planner's estimates (pages, all-visible pages) between two checks that must agree.
    await c.query('VACUUM ANALYZE');
  });
  const mongo = await MongoClient.connect(env.mongoUri);
  try {
    const db = mongo.db(mongoDb);
    await db.dropDatabase();
    await db.collection('events').insertMany(Array.from({ length: 5000 }, (_, i) => ({ user_id: i % 100, kind: i % data.clickEvery === 0 ? 'click' : 'view', created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000) })));
    await db.collection('events').createIndex({ user_id: 1, created_at: -1 }, { name: 'user_recent' });
  } finally {
    await mongo.close();
  }
}

/** A copy of the fixture application in a temporary folder, for one test to change. */
export function copyCheckApp(prefix: string): string {
  const app = mkdtempSync(join(tmpdir(), prefix));
  cpSync(CHECK_FIXTURE, app, { recursive: true });
  return app;
}
