// Explain over a slow link: what our checked, rolled-back explain costs in round trips where the server is
// not on this machine. A proxy in this process holds every chunk for --delay ms each way (a round trip of
// twice that), and the same statement is explained through it, in turn, by the driver alone (the
// baseline: one EXPLAIN ANALYZE, or MongoDB's explain command) and by the adapters Explain uses (PostgreSQL:
// BEGIN with the side-effect check, EXPLAIN ANALYZE, ROLLBACK; MongoDB: the explain and the server's
// version facts). It prints the medians, the difference, and that difference in round trips.
//
// Run: npm run bench:explain-link [-- --runs 40 --delay 10]

import { createServer, connect, type Server, type Socket } from 'node:net';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { connectMongo } from '../src/adapters/mongodb';
import { connectPostgres } from '../src/adapters/postgres';
import { parseMongoQuery } from '../src/core/query/mongoShell';
import { median, runsArg, serverUri } from './support';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = runsArg(40);
const DELAY = arg('delay', 10);

/** A TCP proxy to `target` that holds each chunk `delayMs` in each direction, in order. */
async function slowLink(target: URL, delayMs: number): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const pipeLate = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), delayMs));
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
    from.on('error', () => to.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('close', () => sockets.delete(s));
    }
    pipeLate(client, upstream);
    pipeLate(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** The same URI, pointed at the proxy. */
function through(uri: string, port: number): string {
  const u = new URL(uri);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Runs the two in turn RUNS times (after two warm-ups each) and prints their medians. */
async function compare(label: string, baseline: () => Promise<unknown>, ours: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await baseline();
    await ours();
  }
  const b: number[] = [];
  const o: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    b.push(await timed(baseline));
    o.push(await timed(ours));
  }
  const mb = median(b);
  const mo = median(o);
  const rtt = 2 * DELAY;
  console.log(`${label}: driver alone ${mb.toFixed(1)} ms, Explain's adapter ${mo.toFixed(1)} ms, ` +
    `difference ${(mo - mb).toFixed(1)} ms = ${((mo - mb) / rtt).toFixed(2)} round trips of ${rtt} ms (ratio x${(mo / mb).toFixed(2)})`);
}

async function postgres(): Promise<void> {
  const uri = serverUri('QPI_TEST_PG_URI');
  const setup = new pg.Client({ connectionString: uri });
  await setup.connect();
  await setup.query('DROP TABLE IF EXISTS link_orders; CREATE TABLE link_orders (id int PRIMARY KEY, customer int, total numeric)');
  await setup.query('INSERT INTO link_orders SELECT g, g % 500, g * 1.5 FROM generate_series(1, 20000) g; ANALYZE link_orders');
  const link = await slowLink(new URL(uri), DELAY);
  const sql = 'SELECT id, total FROM link_orders WHERE customer = 42 ORDER BY id LIMIT 20';
  const driver = new pg.Client({ connectionString: through(uri, link.port) });
  await driver.connect();
  const conn = await connectPostgres({ uri: through(uri, link.port) });
  try {
    await compare('PostgreSQL EXPLAIN ANALYZE', () => driver.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`), () => conn.explain(sql, { analyze: true, buffers: true }));
  } finally {
    await conn.close();
    await driver.end();
    await link.close();
    await setup.query('DROP TABLE IF EXISTS link_orders');
    await setup.end();
  }
}

async function mongodb(): Promise<void> {
  const uri = serverUri('QPI_TEST_MONGO_URI');
  const setup = new MongoClient(uri);
  await setup.connect();
  const coll = setup.db('qpi_link').collection<{ _id: number; customer: number; total: number }>('orders');
  await coll.drop().catch(() => undefined);
  await coll.insertMany(Array.from({ length: 5000 }, (_, i) => ({ _id: i, customer: i % 500, total: i * 1.5 })));
  const link = await slowLink(new URL(uri), DELAY);
  const parsed = parseMongoQuery('db.orders.find({ customer: 42 }).sort({ _id: 1 }).limit(20)');
  if (!parsed.ok) throw new Error(parsed.error);
  const driver = new MongoClient(through(uri, link.port), { directConnection: true });
  await driver.connect();
  const conn = await connectMongo({ uri: through(uri, link.port) });
  try {
    const driverColl = driver.db('qpi_link').collection('orders');
    await compare('MongoDB explain (executionStats)', () => driverColl.find({ customer: 42 }).sort({ _id: 1 }).limit(20).explain('executionStats'),
      () => conn.explain(parsed.command, { verbosity: 'executionStats', database: 'qpi_link' }));
  } finally {
    await conn.close();
    await driver.close();
    await link.close();
    await setup.db('qpi_link').dropDatabase();
    await setup.close();
  }
}

async function main(): Promise<void> {
  console.log(`Explain over a link of ${DELAY} ms each way, ${RUNS} runs each, in turn`);
  await postgres();
  await mongodb();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
