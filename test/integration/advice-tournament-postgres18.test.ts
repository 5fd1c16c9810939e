// The tournament on two major versions: PostgreSQL 15 (the test servers) and the embedded PostgreSQL 18
// (started here, without HypoPG). PostgreSQL 18 answers a filter on the second column of an index by a
// skip scan (one index search per value of the first column), which PostgreSQL 15 cannot do; the rules
// know neither, so only the measurement can tell. The same table, index and query go to both servers
// through `qpi advise --verify`; the measured work of the existing index must show the skip scan on 18
// alone, and nothing may remain on either server.

import { strict as assert } from 'node:assert';
import pg from 'pg';
import { run } from '../../src/cli/main';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../scripts/embedded-postgres';
import { capturedIo } from './support/cliIo';
import { env } from './support/env';

const DB = 'qpi_skip_scan';
const SETUP = [
  'CREATE TABLE events (id int PRIMARY KEY, region int NOT NULL, created_at timestamptz NOT NULL, payload text NOT NULL)',
  // 8 regions, one row a minute per region: 100,000 rows, deterministic.
  `INSERT INTO events SELECT g, g % 8, timestamptz '2025-01-01' + (g / 8) * interval '1 minute', repeat('x', 40) FROM generate_series(1, 100000) g`,
  'CREATE INDEX events_region_created_at ON events (region, created_at)',
  'VACUUM ANALYZE events',
];
const QUERY = "SELECT region, created_at FROM events WHERE created_at >= timestamptz '2025-01-10' AND created_at < timestamptz '2025-01-10 00:30'";

interface Ranked { label: string; work: number | null; index?: { text: string } | null }
interface Doc { measurement: { status: string; ranking: Ranked[] } }

function withDb(uri: string, db: string): string {
  const u = new URL(uri);
  u.pathname = `/${db}`;
  return u.toString();
}

/** Indexes and temporary tables anywhere on the server: what a measurement could leave behind. */
async function leftovers(client: pg.Client): Promise<string> {
  const ix = await client.query("SELECT indexname FROM pg_indexes WHERE tablename = 'events' ORDER BY indexname");
  const temp = await client.query("SELECT count(*)::int AS n FROM pg_class WHERE relpersistence = 't'");
  return JSON.stringify({ ix: ix.rows, temp: temp.rows[0].n });
}

describe('the PostgreSQL tournament on versions 15 and 18 (real servers)', function () {
  this.timeout(300_000);
  let pg18: EmbeddedServer | undefined;
  const clients: pg.Client[] = [];
  const uris: Record<'15' | '18', string> = { '15': '', '18': '' };

  before(async function () {
    pg18 = await startEmbeddedPostgres({ prefix: 'qpi-pg18-', password: 'qpi-test' });
    for (const [version, base] of [['15', env.pgUri], ['18', pg18.uri]] as const) {
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
      await admin.query(`CREATE DATABASE ${DB}`);
      await admin.end();
      const client = new pg.Client({ connectionString: withDb(base, DB) });
      await client.connect();
      clients.push(client);
      const major = Number((await client.query('SHOW server_version_num')).rows[0].server_version_num) / 10_000;
      assert.equal(Math.floor(major), Number(version));
      for (const sql of SETUP) await client.query(sql);
      uris[version] = withDb(base, DB);
    }
  });

  after(async function () {
    for (const c of clients) await c.end().catch(() => {});
    const admin = new pg.Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin.end();
    await pg18?.pg.stop();
  });

  it('measures the existing index by what each version does with it: a skip scan on 18 only', async function () {
    const work: Record<string, number> = {};
    for (const [i, version] of (['15', '18'] as const).entries()) {
      const before = await leftovers(clients[i]!);
      const io = capturedIo();
      assert.equal(await run(['advise', '--uri', uris[version], '--verify', '--json', '--query', QUERY], io), 0, io.err);
      assert.equal(await leftovers(clients[i]!), before, `the measurement left something behind on ${version}`);
      const doc = JSON.parse(io.out) as Doc;
      assert.equal(doc.measurement.status, 'measured', `${version}: ${io.out.slice(0, 400)}`);
      const existing = doc.measurement.ranking.find((e) => e.label === 'existing events_region_created_at');
      assert.ok(existing?.work !== undefined && existing.work !== null, `${version}: the existing index was not measured: ${JSON.stringify(doc.measurement.ranking)}`);
      work[version] = existing.work;
    }
    console.log(`    existing (region, created_at) for created_at alone: ${work['15']} buffers on 15, ${work['18']} on 18`);
    // On 15 the index is read whole (or not at all); on 18 only eight slices of it.
    assert.ok(work['18']! * 5 < work['15']!, `PostgreSQL 18 read ${work['18']} buffers through the index, 15 read ${work['15']}`);
  });

  it('does not charge the candidate measured first with the catalog reads of the session\'s first index scan', async function () {
    // On 18 the first index scan of a session that needs an operator family's support procedures counts
    // their catalog pages in its Buffers (a few pages); on a query that reads a handful of pages, that is
    // enough to rank a worse candidate above the one measured first (the rules' pick).
    const client = clients[1]!;
    await client.query('CREATE TABLE triples (id int PRIMARY KEY, a int NOT NULL, b int NOT NULL, c int NOT NULL)');
    await client.query('INSERT INTO triples SELECT g, g % 3, (g::bigint * 7919) % 1000, (g::bigint * 104729) % 50 FROM generate_series(1, 100000) g');
    await client.query('VACUUM ANALYZE triples');
    try {
      const io = capturedIo();
      const query = 'SELECT a, b, c FROM triples WHERE a = 1 AND c > 10 ORDER BY b LIMIT 50';
      assert.equal(await run(['advise', '--uri', uris['18'], '--verify', '--json', '--query', query], io), 0, io.err);
      const doc = JSON.parse(io.out) as Doc;
      assert.equal(doc.measurement.status, 'measured', io.out.slice(0, 400));
      const of = (keys: string): number | null | undefined => doc.measurement.ranking.find((e) => e.index?.text === `triples ${keys}`)?.work;
      const abc = of('(a, b, c)');
      const bac = of('(b, a, c)');
      assert.ok(typeof abc === 'number' && typeof bac === 'number', `both orders measured: ${JSON.stringify(doc.measurement.ranking)}`);
      assert.ok(abc <= bac, `(a, b, c) read ${abc} buffers and (b, a, c) ${bac}: ${JSON.stringify(doc.measurement.ranking)}`);
    } finally {
      await client.query('DROP TABLE triples');
    }
  });
});
