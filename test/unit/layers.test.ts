// The architecture's import rules are lint rules (eslint.config.mjs); this proves they bite: a file that
// breaks one is reported, a file that keeps it is not.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const root = join(__dirname, '..', '..');
const eslint = new ESLint({ cwd: root });

// The rules that carry the layers: static imports, dynamic loads (import(), require()) and host globals;
// and the formatter's hold on every number a person reads (no toFixed or toLocaleString outside it).
const LAYER_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax', 'no-restricted-globals', 'no-restricted-properties']);

async function violations(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return (result?.messages ?? []).filter((m) => LAYER_RULES.has(m.ruleId ?? '')).map((m) => m.message);
}

describe('layer rules', function () {
  this.timeout(60_000);

  const cases: [string, string, boolean][] = [
    ['src/core/probe.ts', "import { readFileSync } from 'fs';", true],
    ['src/core/probe.ts', "import { readFileSync } from 'node:fs';", true],
    ['src/core/probe.ts', "import { MongoClient } from 'mongodb';", true],
    ['src/core/probe.ts', "import * as vscode from 'vscode';", true],
    ['src/core/probe.ts', "import { connectPostgres } from '../adapters/postgres';", true],
    ['src/core/probe.ts', "import { derive } from './metrics';", false],
    ['src/server/probe.ts', "import * as vscode from 'vscode';", true],
    ['src/server/probe.ts', "import { Client } from 'pg';", true],
    ['src/adapters/probe.ts', "import * as vscode from 'vscode';", true],
    ['src/adapters/probe.ts', "import { Client } from 'pg';", false],
    ['webview/probe.ts', "import { Client } from 'pg';", true],
    ['webview/probe.ts', "import { select } from 'd3-selection';", false],
    ['src/cli/probe.ts', "import * as vscode from 'vscode';", true],
    // Dynamic loads: the same modules reached at run time.
    ['src/core/probe.ts', "export const load = () => import('./metrics');", true],
    ['src/core/probe.ts', "export const load = () => require('node:fs');", true],
    ['src/protocol/probe.ts', "export const load = () => import('./webview');", true],
    ['webview/probe.ts', "export const load = () => import('d3-selection');", true],
    ['src/server/probe.ts', "export const load = () => import('vscode');", true],
    ['src/server/probe.ts', "export const load = () => require('mongodb');", true],
    ['src/server/probe.ts', "export const load = () => import('./analysis');", false],
    ['src/cli/probe.ts', "export const load = () => import('vscode');", true],
    ['src/adapters/probe.ts', "export const load = () => import('vscode-languageclient/node');", true],
    ['src/adapters/probe.ts', "export const load = () => import('pg');", false],
    // Host globals keep the core the same in Node, the language server and the browser.
    ['src/core/probe.ts', 'export const env = process.env.HOME;', true],
    ['src/core/probe.ts', "export const bytes = Buffer.from('x');", true],
    ['src/core/probe.ts', 'export const title = document.title;', true],
    ['src/core/probe.ts', "export const bytes = new Uint8Array([1]);", false],
    ['src/adapters/probe.ts', 'export const env = process.env.HOME;', false],
    // Outside the core, only its public surface: core/index, and core/view for the webview's bundle.
    ['src/adapters/probe.ts', "import { loadPlan } from '../core/load';", true],
    ['src/adapters/probe.ts', "import { loadPlan } from '../core/index';", false],
    ['src/extension/probe.ts', "import { statementInfo } from '../core/sql/kinds';", true],
    ['src/extension/probe.ts', "import { statementInfo } from '../core/index';", false],
    ['src/server/probe.ts', "import type { Plan } from '../core/model';", true],
    ['src/cli/probe.ts', "export { analyze } from '../core/findings/index';", true],
    ['src/protocol/probe.ts', "import type { Plan } from '../core/index';", false],
    ['webview/probe.ts', "import { formatMs } from '../src/core/format';", true],
    ['webview/probe.ts', "import { formatMs } from '../src/core/index';", true],
    ['webview/probe.ts', "import { formatMs } from '../src/core/view';", false],
    ['src/core/probe.ts', "import { formatMs } from './format';", false],
    // The core's floor plan: the plan wing never imports the code wing; inside the code wing no floor
    // imports one above it (SQL syntax, query parsers, finder, schema, advice, then lint/check/targets);
    // the notation floor under both wings imports neither.
    ['src/core/findings/probe.ts', "import { findQueries } from '../query/find/index';", true],
    ['src/core/findings/probe.ts', "import { formatMs } from '../format';", false],
    ['src/core/load.ts', "import { parseSql } from './sql/parser';", true],
    ['src/core/load.ts', "import { readShellNotation } from './mongo/shellNotation';", false],
    ['src/core/postgres/probe.ts', "import { possibleOnly } from '../advice/possible';", true],
    ['src/core/query/find/syntax.ts', "import { findQueries } from './index';", true],
    ['src/core/mongo/shellNotation.ts', "import { derive } from '../metrics';", true],
    ['src/core/mongo/shellNotation.ts', "import { cookedOf } from '../query/find/syntax';", false],
    ['src/core/mongo/shellNotation.ts', "import { formatCount } from '../format';", false],
    ['src/core/sql/probe.ts', "import { findQueries } from '../query/find/index';", true],
    ['src/core/sql/probe.ts', "import { lineColumn } from '../text';", false],
    ['src/core/query/mongoShell.ts', "import { findQueries } from './find/index';", true],
    ['src/core/query/mongoShell.ts', "import { cookedOf } from './find/syntax';", false],
    ['src/core/query/find/probe.ts', "import { shellValue } from '../../advice/mongoText';", true],
    ['src/core/query/find/probe.ts', "import { explainText } from '../../lint/explainText';", true],
    ['src/core/query/find/probe.ts', "import { parseMongoShell } from '../mongoShell';", false],
    ['src/core/schema/probe.ts', "import type { Catalog } from '../advice/catalog';", true],
    ['src/core/schema/probe.ts', "import type { FoundQuery } from '../query/find/types';", false],
    ['src/core/advice/probe.ts', "import { explainText } from '../lint/explainText';", true],
    ['src/core/advice/probe.ts', "import { targetOf } from '../query/targets';", true],
    ['src/core/advice/probe.ts', "import type { RepositorySchema } from '../schema/types';", false],
    ['src/core/lint/probe.ts', "import { analyze } from '../index';", true],
    ['src/core/advice/probe.ts', "import { readFileSync } from 'node:fs';", true],
    ['src/core/query/targets.ts', "import { explainText } from '../lint/explainText';", false],
    ['src/core/check/probe.ts', "import { explainTargets } from '../query/targets';", false],
    // The one door to a user's server: a driver's query methods are called in src/adapters/door.ts only.
    ['src/adapters/probe.ts', "export const run = (c: { query(t: string): Promise<unknown> }) => c.query('SELECT 1');", true],
    ['src/adapters/probe.ts', "export const run = (db: { collection(n: string): unknown }) => db.collection('users');", true],
    ['src/adapters/probe.ts', "export const run = (db: { command(c: object): Promise<unknown> }) => db.command({ drop: 'users' });", true],
    ['src/cli/probe.ts', "export const run = (c: { query(t: string): Promise<unknown> }) => c.query('SELECT 1');", true],
    ['src/extension/probe.ts', "export const run = (db: { admin(): unknown }) => db.admin();", true],
    ['src/adapters/door.ts', "export const run = (c: { query(t: string): Promise<unknown> }) => c.query('SELECT 1');", false],
    ['src/adapters/probe.ts', "export const run = (c: { read(t: string): Promise<unknown> }) => c.read('SELECT 1');", false],
    // Measuring has one caller outside src/adapters/measure/: the advice service.
    ['src/extension/probe.ts', "import { measureMongo } from '../adapters/measure/index';", true],
    ['src/cli/probe.ts', "import { measurePgEstimates } from '../adapters/measure/pgEstimates';", true],
    ['src/cli/check/probe.ts', "import type { MeasureOptions } from '../../adapters/measure';", true],
    ['src/extension/probe.ts', "export const load = () => import('../adapters/measure/index');", true],
    ['src/adapters/probe.ts', "import { measurePostgres } from './measure/index';", true],
    ['src/adapters/advise.ts', "import { measureMongo } from './measure';", true],
    ['bench/probe.ts', "import { measureMongo } from '../src/adapters/measure/index';", true],
    ['src/adapters/adviceService.ts', "import { measureMongo } from './measure/index';", false],
    ['src/adapters/measure/probe.ts', "import { planShape } from './figures';", false],
    ['src/cli/check/probe.ts', "import { measureFailing } from './measure';", false],
    ['src/extension/probe.ts', "import { AdviceService } from '../adapters/adviceService';", false],
    // Numbers a person reads are written by src/core/format.ts only.
    ['src/core/probe.ts', "export const n = (x: number) => x.toLocaleString('en-US');", true],
    ['src/adapters/probe.ts', 'export const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;', true],
    ['src/server/probe.ts', "export const n = (x: number) => x.toPrecision(3);", true],
    ['src/core/format.ts', 'export const s = (x: number) => x.toFixed(1);', false],
    ['src/cli/probe.ts', "import { formatSeconds } from '../core/index';\nexport const s = (ms: number) => formatSeconds(ms);", false],
    ['test/unit/probe.test.ts', 'export const pause = new Promise((r) => setTimeout(r, 50));', true],
    ['test/browser/probe.test.ts', 'export const frame = new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));', false],
  ];
  for (const [file, code, broken] of cases) {
    it(`${broken ? 'reports' : 'allows'} \`${code}\` in ${file.replace(/probe\.ts$/, '')}`, async () => {
      const found = await violations(file, `${code}\nexport const x = 1;\n`);
      assert.equal(found.length > 0, broken, found.join('; '));
    });
  }
});
