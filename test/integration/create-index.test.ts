// "Create Index" on real servers: both engines build the index from the exact text the user saw and it
// is listed afterwards; a refused text runs nothing; a duplicate name is one sentence; cancelling a long
// PostgreSQL build stops it on the server and leaves no INVALID index behind.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db } from 'mongodb';
import pg from 'pg';
import { AdapterError, type AdapterErrorKind } from '../../src/adapters/errors';
import { connectMongo, type MongoConnection } from '../../src/adapters/mongodb';
import { connectPostgres, type PostgresConnection } from '../../src/adapters/postgres';
import { parseMongoCreateIndex, type MongoIndexCreation } from '../../src/core/query/createIndex';
import { env } from './support/env';
import { until } from '../until';

const DB = 'qpi_create_index';
const TABLE = 'qpi_ci_orders';

async function failsWith(kind: AdapterErrorKind, promise: Promise<unknown>): Promise<AdapterError> {
  let error: unknown;
  try {
    await promise;
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof AdapterError, `expected an AdapterError of kind ${kind}, got ${error === undefined ? 'success' : String(error)}`);
  assert.equal(error.kind, kind, error.message);
  assert.match(error.message, /^[A-Z].*\.$/, 'one sentence, capitalised, ending with a full stop');
  assert.doesNotMatch(error.message, /\n/);
  return error;
}

function mongoText(text: string): MongoIndexCreation {
  const r = parseMongoCreateIndex(text);
  if (!r.ok) assert.fail(r.error);
  return r.value;
}

describe('Create index on PostgreSQL', function () {
  let admin: pg.Client;
  let conn: PostgresConnection;
  const names = async (): Promise<{ name: string; valid: boolean }[]> =>
    (await admin.query(`SELECT i.relname AS name, x.indisvalid AS valid FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = '${TABLE}'::regclass ORDER BY 1`)).rows;

  before(async function () {
    admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP TABLE IF EXISTS ${TABLE}; CREATE TABLE ${TABLE} (id int PRIMARY KEY, country_id int NOT NULL, email text NOT NULL)`);
    await admin.query(`INSERT INTO ${TABLE} SELECT g, g % 10, 'user' || (g % 3000) || '@example.com' FROM generate_series(1, 6000) g`);
    // An expression that sleeps a millisecond per row: a build over 6,000 rows takes several seconds.
    await admin.query(`CREATE OR REPLACE FUNCTION qpi_ci_slow(x int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.001); RETURN x; END $$`);
    conn = await connectPostgres({ uri: env.pgUri });
  });

  after(async function () {
    await conn?.close();
    await admin?.query(`DROP TABLE IF EXISTS ${TABLE}; DROP FUNCTION IF EXISTS qpi_ci_slow(int)`).catch(() => {});
    await admin?.end();
  });

  it('creates a named index and an unnamed one; both are listed afterwards with the names reported', async function () {
    const named = await conn.createIndex(`CREATE INDEX ${TABLE}_country ON ${TABLE} (country_id);`);
    assert.equal(named.name, `${TABLE}_country`);
    assert.equal(named.target, `public.${TABLE}`);
    assert.equal(named.created, true);
    assert.ok(named.durationMs >= 0);
    assert.ok(named.notes.some((n) => /blocked writes/.test(n)), named.notes.join(' '));
    const unnamed = await conn.createIndex(`CREATE INDEX CONCURRENTLY ON ${TABLE} (email, country_id DESC)`);
    assert.equal(unnamed.name, `${TABLE}_email_country_id_idx`, 'the name PostgreSQL chose');
    assert.ok(unnamed.notes.some((n) => /outside a transaction/.test(n)), unnamed.notes.join(' '));
    const listed = await conn.listIndexes({ table: TABLE });
    for (const name of [named.name, unnamed.name]) assert.ok(listed.some((ix) => ix.name === name && ix.valid), `${name} is listed and valid`);
    const again = await conn.createIndex(`CREATE INDEX IF NOT EXISTS ${TABLE}_country ON ${TABLE} (country_id)`);
    assert.equal(again.created, false);
    assert.ok(again.notes.some((n) => /already existed/.test(n)));
  });

  it('a duplicate name is one sentence, and nothing else is built', async function () {
    const before = await names();
    const err = await failsWith('server', conn.createIndex(`CREATE INDEX ${TABLE}_country ON ${TABLE} (email)`));
    assert.match(err.message, /PostgreSQL did not create the index: relation "qpi_ci_orders_country" already exists\./);
    assert.deepEqual(await names(), before);
  });

  it('a refused text runs nothing on the server', async function () {
    const before = await names();
    await failsWith('unsupported', conn.createIndex(`CREATE INDEX ${TABLE}_x ON ${TABLE} (email); DROP TABLE ${TABLE}`));
    await failsWith('unsupported', conn.createIndex(`DROP INDEX ${TABLE}_country`));
    await failsWith('syntax', conn.createIndex(`CREATE INDEX ON ${TABLE} (email`));
    assert.deepEqual(await names(), before, 'no index was added or dropped');
    assert.equal((await admin.query(`SELECT count(*)::int AS n FROM ${TABLE}`)).rows[0].n, 6000, 'the table is still there');
  });

  it('a failed CONCURRENTLY build leaves no INVALID index: it is dropped, and the error says so', async function () {
    const before = await names();
    const err = await failsWith('server', conn.createIndex(`CREATE UNIQUE INDEX CONCURRENTLY ${TABLE}_email_unique ON ${TABLE} (email)`));
    assert.match(err.message, /^The unique index cannot be built on public\.qpi_ci_orders: could not create unique index "qpi_ci_orders_email_unique", and the invalid index qpi_ci_orders_email_unique it left was dropped\.$/);
    assert.deepEqual(await names(), before);
  });

  for (const concurrently of [false, true]) {
    it(`cancel of a long ${concurrently ? 'CONCURRENTLY ' : ''}build stops it on the server and leaves no invalid index`, async function () {
      const before = await names();
      const controller = new AbortController();
      const text = `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}${TABLE}_slow ON ${TABLE} (qpi_ci_slow(country_id))`;
      const running = conn.createIndex(text, { signal: controller.signal });
      const active = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE '%qpi_ci_slow(country_id)%'";
      await until('the build running on the server', async () => ((await admin.query(active, [conn.backendPid])).rows[0].n === 1 ? true : undefined));
      const started = Date.now();
      controller.abort();
      const err = await failsWith('cancelled', running);
      assert.ok(Date.now() - started < 5000, 'stopped well before the build would have ended');
      assert.match(err.message, /^The index build on public\.qpi_ci_orders was cancelled and stopped on the server/);
      if (concurrently) assert.match(err.message, /the invalid index qpi_ci_orders_slow it left was dropped\.$/);
      assert.equal((await admin.query(active, [conn.backendPid])).rows[0].n, 0, 'nothing of it still runs');
      assert.deepEqual(await names(), before, 'no index, valid or invalid, is left');
      assert.equal((await admin.query('SELECT count(*)::int AS n FROM pg_index WHERE NOT indisvalid')).rows[0].n, 0);
      // The connection's own statement_timeout is back to the default after the build.
      const r = await conn.createIndex(`CREATE INDEX ${TABLE}_id_country ON ${TABLE} (id, country_id)`);
      assert.equal(r.created, true);
      await admin.query(`DROP INDEX ${TABLE}_id_country`);
    });
  }

  it('a build longer than its timeout is stopped on the server', async function () {
    const err = await failsWith('timeout', conn.createIndex(`CREATE INDEX ${TABLE}_slow ON ${TABLE} (qpi_ci_slow(id))`, { timeoutMs: 300 }));
    assert.match(err.message, /300 ms limit \(statement_timeout\)/);
    assert.ok(!(await names()).some((x) => x.name === `${TABLE}_slow`));
  });
});

describe('Create index on MongoDB', function () {
  let client: MongoClient;
  let db: Db;
  let conn: MongoConnection;

  before(async function () {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db(DB);
    await db.dropDatabase();
    await db.collection<{ _id: number; country_id: number; created_at: Date; email: string }>('orders').insertMany(Array.from({ length: 2000 }, (_, i) => ({ _id: i, country_id: i % 10, created_at: new Date(1_700_000_000_000 + i * 60_000), email: `u${i % 500}@example.com` })));
    conn = await connectMongo({ uri: env.mongoUri });
  });

  after(async function () {
    await conn?.close();
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  it('creates the index from the shell text; it is listed afterwards under the name reported', async function () {
    const r = await conn.createIndex(mongoText('db.orders.createIndex({ country_id: 1, created_at: -1 })'), { database: DB });
    assert.equal(r.name, 'country_id_1_created_at_-1');
    assert.equal(r.target, `${DB}.orders`);
    assert.equal(r.created, true);
    const named = await conn.createIndex(mongoText(`db.getSiblingDB("${DB}").getCollection("orders").createIndex({ email: 1 }, { name: "by_email", partialFilterExpression: { country_id: { $gt: NumberInt(2) } } })`));
    assert.equal(named.name, 'by_email');
    const listed = await conn.listIndexes('orders', DB);
    assert.deepEqual(listed.find((ix) => ix.name === 'country_id_1_created_at_-1')?.key, { country_id: 1, created_at: -1 });
    assert.deepEqual(listed.find((ix) => ix.name === 'by_email')?.partialFilterExpression, { country_id: { $gt: 2 } });
    const again = await conn.createIndex(mongoText('db.orders.createIndex({ country_id: 1, created_at: -1 })'), { database: DB });
    assert.equal(again.created, false, 'the same index again builds nothing');
  });

  it('a duplicate name with other keys is one sentence, and nothing is built', async function () {
    const before = (await conn.listIndexes('orders', DB)).map((ix) => ix.name);
    const err = await failsWith('server', conn.createIndex(mongoText('db.orders.createIndex({ created_at: 1 }, { name: "by_email" })'), { database: DB }));
    assert.match(err.message, /^MongoDB did not create the index on qpi_create_index\.orders: .*by_email/);
    assert.deepEqual((await conn.listIndexes('orders', DB)).map((ix) => ix.name), before);
  });

  it('a unique index over duplicates is one sentence and leaves no index', async function () {
    const err = await failsWith('server', conn.createIndex(mongoText('db.orders.createIndex({ email: 1 }, { unique: true, name: "email_unique" })'), { database: DB }));
    assert.match(err.message, /^The unique index cannot be built on qpi_create_index\.orders: .*duplicate key/i);
    assert.ok(!(await conn.listIndexes('orders', DB)).some((ix) => ix.name === 'email_unique'));
  });

  it('a refused text never reaches the server', async function () {
    const r = parseMongoCreateIndex('db.orders.createIndex({ a: 1 }); db.orders.drop()');
    assert.equal(r.ok, false);
    assert.equal(await db.collection('orders').countDocuments(), 2000);
  });
});
