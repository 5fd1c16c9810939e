// The one advice service on real servers: the same query gets the same answer (from the cache) and the
// CLI gives the same verdict; an index built on the server is seen at the next request, which then says
// "keep using" it and tells the faces; invalidation drops a connection's answers and no other's.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db, type Document } from 'mongodb';
import pg from 'pg';
import { openMongoAdvice, openPostgresAdvice, type MongoAdviceSession, type PostgresAdviceSession } from '../../src/adapters/advise';
import { AdviceService } from '../../src/adapters/adviceService';
import { parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import { run } from '../../src/cli/main';
import { capturedIo } from './support/cliIo';
import { customers } from './support/adviceData';
import { env } from './support/env';

const DB = 'qpi_advice_service';
const QUERY = 'db.customers.find({tenant: 7, status: "active"}).sort({created: -1}).limit(20)';

function command(text: string): MongoCommand {
  const r = parseMongoQuery(text);
  if (!r.ok) assert.fail(r.error);
  return r.command;
}

interface CliAdvice {
  suggestions: { action: string; createIndex: string | null; keep: { name: string } | null }[];
  measurement: { status: string };
}

async function cliAdvice(uri: string, query: string, ...flags: string[]): Promise<CliAdvice> {
  const io = capturedIo();
  const code = await run(['advise', '--uri', uri, '--json', ...flags, '--query', query], io);
  assert.equal(code, 0, io.err);
  return JSON.parse(io.out) as CliAdvice;
}

describe('One advice service behind every face (real servers)', function () {
  this.timeout(120_000);

  describe('MongoDB', () => {
    let client: MongoClient;
    let db: Db;
    let session: MongoAdviceSession;

    before(async () => {
      client = await MongoClient.connect(env.mongoUri);
      db = client.db(DB);
      await db.dropDatabase();
      await db.collection('customers').insertMany(customers(5_000) as unknown as Document[], { ordered: false });
      session = await openMongoAdvice({ uri: env.mongoUri, database: DB });
    });

    after(async () => {
      await session?.close();
      await db?.dropDatabase().catch(() => {});
      await client?.close();
    });

    it('one answer for one query, whatever its spacing, and the CLI gives the same verdict', async () => {
      const service = new AdviceService();
      const a = await service.mongo(session, command(QUERY), { connection: 'local' });
      const b = await service.mongo(session, command(QUERY.replace(/, /g, ',   ')), { connection: 'local' });
      assert.equal(b, a, 'the cached answer');
      assert.equal(service.computed, 1);
      const top = a.advice.suggestions[0]!;
      assert.equal(top.action, 'create');
      const cli = await cliAdvice(env.mongoUri.replace(/\/(\?|$)/, `/${DB}$1`), QUERY);
      assert.equal(cli.suggestions[0]!.createIndex, top.createText);
    });

    it('an index built on the server is seen at the next request: "keep using" it, and the faces are told', async () => {
      const service = new AdviceService();
      const told: { connection?: string; targets?: string[] }[] = [];
      service.onInvalidate((e) => told.push(e));
      const before = await service.mongo(session, command(QUERY), { connection: 'local' });
      const top = before.advice.suggestions[0]!;
      assert.equal(top.index?.engine, 'mongodb');
      const name = await db.collection('customers').createIndex(top.index.engine === 'mongodb' ? top.index.keyPattern : {});
      try {
        const after = await service.mongo(session, command(QUERY), { connection: 'local' });
        assert.equal(service.computed, 2);
        assert.equal(after.advice.suggestions[0]!.action, 'keep');
        assert.equal(after.advice.suggestions[0]!.keep?.name, name);
        assert.ok(!after.advice.suggestions.some((s) => s.createText === top.createText), 'the index that exists is not suggested again');
        assert.deepEqual(told, [{ connection: 'local', targets: ['customers'] }]);
        const cli = await cliAdvice(env.mongoUri.replace(/\/(\?|$)/, `/${DB}$1`), QUERY);
        assert.equal(cli.suggestions[0]!.keep?.name, name);
      } finally {
        await db.collection('customers').dropIndex(name);
      }
    });

    it('invalidation drops the answers of one connection and keeps another\'s', async () => {
      const service = new AdviceService();
      await service.mongo(session, command(QUERY), { connection: 'a' });
      await service.mongo(session, command(QUERY), { connection: 'b' });
      assert.equal(service.computed, 2);
      service.invalidate({ connection: 'a' });
      await service.mongo(session, command(QUERY), { connection: 'b' });
      assert.equal(service.computed, 2, 'b is still cached');
      await service.mongo(session, command(QUERY), { connection: 'a' });
      assert.equal(service.computed, 3, 'a is asked again');
    });
  });

  describe('PostgreSQL', () => {
    const SQL = 'SELECT id FROM svc_orders WHERE customer_id = 42 ORDER BY created_at DESC LIMIT 10';
    let admin: pg.Client;
    let session: PostgresAdviceSession;

    before(async () => {
      admin = new pg.Client({ connectionString: env.pgUri });
      await admin.connect();
      await admin.query(`DROP TABLE IF EXISTS svc_orders;
        CREATE TABLE svc_orders AS SELECT g AS id, g % 500 AS customer_id, now() - g * interval '1 minute' AS created_at FROM generate_series(1, 20000) g;
        ANALYZE svc_orders;`);
      session = await openPostgresAdvice({ uri: env.pgUri });
    });

    after(async () => {
      await session?.close();
      await admin?.query('DROP TABLE IF EXISTS svc_orders').catch(() => {});
      await admin?.end();
    });

    it('the same verdict twice from the cache, "keep using" an index built meanwhile, and statistics in the key', async () => {
      const service = new AdviceService();
      const a = await service.postgres(session, SQL, { connection: 'pg' });
      const b = await service.postgres(session, `${SQL.replace(/ /g, '\n  ')};`, { connection: 'pg' });
      assert.equal(b, a);
      assert.equal(a.advice.suggestions[0]!.action, 'create');
      await admin.query('CREATE INDEX svc_orders_cust_created ON svc_orders (customer_id, created_at DESC)');
      const c = await service.postgres(session, SQL, { connection: 'pg' });
      assert.equal(service.computed, 2);
      assert.equal(c.advice.suggestions[0]!.keep?.name, 'svc_orders_cust_created');
      // A table ten times bigger, analysed again: new statistics, a new answer.
      await admin.query("INSERT INTO svc_orders SELECT g, g % 500, now() - g * interval '1 minute' FROM generate_series(20001, 200000) g; ANALYZE svc_orders;");
      await service.postgres(session, SQL, { connection: 'pg' });
      assert.equal(service.computed, 3);
    });

    it('the CLI gives the faces\' rules verdict with --rules-only, and otherwise measures as the panel does after an explain', async () => {
      await admin.query('DROP INDEX IF EXISTS svc_orders_cust_created');
      const service = new AdviceService();
      const faces = await service.postgres(session, SQL, { connection: 'pg' });
      const top = faces.advice.suggestions[0]!;
      assert.equal(top.action, 'create');
      const cli = await cliAdvice(env.pgUri, SQL, '--rules-only');
      assert.equal(cli.suggestions[0]!.createIndex, top.createText);
      assert.equal(cli.measurement.status, 'not-measured');
      const measured = await cliAdvice(env.pgUri, SQL);
      assert.equal(measured.measurement.status, 'measured');
      const verified = await service.measurePostgres(session, SQL, faces, { measuredOrder: true });
      assert.equal(measured.suggestions[0]!.createIndex, verified.advice.suggestions[0]!.createText ?? null, 'Verify and --verify measure the same winner');
    });
  });
});
