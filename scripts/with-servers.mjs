// Runs one command with real MongoDB and PostgreSQL servers started for it, and always stops them:
// after success, failure, or Ctrl-C. Exits with the command's exit code.
//
//   node scripts/with-servers.mjs mocha --config .mocharc.integration.json
//
// The command sees QPI_TEST_MONGO_URI, QPI_TEST_PG_URI (superuser, no password) and QPI_TEST_PW_USER /
// QPI_TEST_PW_PASSWORD (a role on both servers that must give its password).

import { spawn } from 'node:child_process';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServers, stopServers } from './servers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  console.error('usage: node scripts/with-servers.mjs <command> [args...]');
  process.exit(2);
}

let state = null;
let stopping = null;
let child = null;

/** Stops the servers once, however many paths ask for it. */
function stopOnce() {
  stopping ??= stopServers(state).catch((err) => console.error(`[servers] stopping failed: ${err.message}`));
  return stopping;
}

let signalled = null;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (signalled) return;
    signalled = sig;
    // The command gets the signal too (from the terminal, or from here), then the servers are stopped
    // when it has exited; if it was not running yet, stop now.
    if (child && child.exitCode === null) child.kill(sig);
    else stopOnce().then(() => process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1)));
  });
}

try {
  state = await startServers();
} catch (err) {
  console.error(`[servers] could not start the test servers: ${err.message}`);
  await stopOnce();
  process.exit(1);
}
if (signalled) {
  await stopOnce();
  process.exit(130);
}

const env = { ...process.env, ...state.env, PATH: [join(ROOT, 'node_modules', '.bin'), process.env.PATH].join(delimiter) };
child = spawn(cmd, args, { stdio: 'inherit', env });
const code = await new Promise((resolvePromise) => {
  child.on('error', (err) => {
    console.error(`[servers] could not run ${cmd}: ${err.message}`);
    resolvePromise(127);
  });
  child.on('exit', (c, sig) => resolvePromise(c ?? (sig === 'SIGINT' ? 130 : 1)));
});
await stopOnce();
process.exit(code);
