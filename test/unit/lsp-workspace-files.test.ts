// An open script whose queries follow another file of the workspace (a helper it imports, the calls of its
// functions in a file that imports it) is read again when that file is saved, and only then: the language
// server's service over an in-memory workspace, the file watcher's notification given by hand.

import assert from 'node:assert/strict';
import { loadSqlParser, resolveSpecifier, savedFilesReach, type WorkspaceModules } from '../../src/core/index';
import { InlineAdviceService } from '../../src/server/service';
import { until } from '../until';
import { FakePort } from './lsp-fixtures';

function workspace(files: Record<string, string>): WorkspaceModules {
  return {
    resolve: (from, spec) => resolveSpecifier({ exists: (f) => f in files }, from, spec),
    read: (f) => files[f],
    files: () => Object.keys(files),
  };
}

const fileOf = (uri: string) => (uri.startsWith('file://') ? uri.slice('file://'.length) : undefined);
const targets = (service: InlineAdviceService, uri: string) => service.listQueries(uri).map((q) => q.targets.join(','));

/** The language server's service over an in-memory workspace of `files`, each edit read at once. */
function serviceOver(files: Record<string, string>): { port: FakePort; service: InlineAdviceService } {
  const port = new FakePort();
  const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
  service.setWorkspaceModules(workspace(files), fileOf);
  return { port, service };
}

describe('language server: other files of the workspace saved', () => {
  before(() => loadSqlParser());

  it('reads a function named by its callers in another file again when that file is saved', async () => {
    const files: Record<string, string> = {
      '/ws/stores.ts': [
        "import type { Collection } from 'mongodb';",
        "export async function listOpen(coll: Collection) { return coll.find({ state: 'open' }).toArray(); }",
      ].join('\n'),
      '/ws/app.ts': [
        "import { MongoClient } from 'mongodb';",
        "import { listOpen } from './stores';",
        "const db = new MongoClient('mongodb://localhost').db();",
        "export const run = () => listOpen(db.collection('tickets'));",
      ].join('\n'),
      '/ws/other.ts': "export const answer = 42;\n",
    };
    const { port, service } = serviceOver(files);
    const uri = 'file:///ws/stores.ts';
    service.open(uri, 'typescript', 1, files['/ws/stores.ts']!);
    assert.deepEqual(targets(service, uri), ['tickets']);

    // A file that neither imports it nor is imported by it: nothing is read again.
    files['/ws/other.ts'] = "export const answer = 43;\n";
    service.workspaceFilesChanged(['file:///ws/other.ts']);
    assert.equal(service.docs.get(uri)!.timer, undefined, 'an unrelated file made the open one be read again');

    files['/ws/app.ts'] = files['/ws/app.ts']!.replace("'tickets'", "'issues'");
    service.workspaceFilesChanged(['file:///ws/app.ts']);
    await until('the query to follow the saved caller', () => targets(service, uri)[0] === 'issues');
    assert.ok(port.published.length >= 2, 'the diagnostics were published again');
  });

  it('counts the calls of a caller file created after the workspace was first read, as soon as it is saved', async () => {
    const files: Record<string, string> = {
      '/ws/stores.ts': [
        "import type { Collection } from 'mongodb';",
        "export async function listOpen(coll: Collection) { return coll.find({ state: 'open' }).toArray(); }",
      ].join('\n'),
    };
    const { service } = serviceOver(files);
    const uri = 'file:///ws/stores.ts';
    service.open(uri, 'typescript', 1, files['/ws/stores.ts']!);
    assert.deepEqual(targets(service, uri), [''], 'no caller yet: chosen at run time, no collection named');
    files['/ws/jobs.ts'] = [
      "import { MongoClient } from 'mongodb';",
      "import { listOpen } from './stores';",
      "export const nightly = () => listOpen(new MongoClient('mongodb://localhost').db().collection('jobs'));",
    ].join('\n');
    service.workspaceFilesChanged(['file:///ws/jobs.ts']);
    await until('the new caller file to name the collection', () => targets(service, uri)[0] === 'jobs');
  });

  it('reads a collection a helper of another module gives again when the helper is saved, also through a module between', async () => {
    const files: Record<string, string> = {
      '/ws/db/collections.ts': [
        "import type { Db } from 'mongodb';",
        "export const ordersOf = (db: Db) => db.collection('orders');",
      ].join('\n'),
      '/ws/db/index.ts': "export { ordersOf } from './collections';\n",
      '/ws/routes.ts': [
        "import { MongoClient } from 'mongodb';",
        "import { ordersOf } from './db';",
        "const db = new MongoClient('mongodb://localhost').db();",
        "export const recent = () => ordersOf(db).find({ status: 'paid' }).sort({ at: -1 }).toArray();",
      ].join('\n'),
    };
    const modules = workspace(files);
    assert.equal(savedFilesReach(modules, ['/ws/db/collections.ts'])('/ws/routes.ts'), true);
    assert.equal(savedFilesReach(modules, ['/ws/routes.ts'])('/ws/db/collections.ts'), true, 'a caller of a module it passes on');
    assert.equal(savedFilesReach(modules, ['/ws/routes.ts'])('/ws/routes.ts'), false);
    assert.equal(savedFilesReach(modules, ['/ws/other.ts'])('/ws/routes.ts'), false, 'a file neither imports');
    // A branch switched: past the bound, every open file is read again rather than each closure walked.
    assert.equal(savedFilesReach(modules, Array.from({ length: 101 }, (_, i) => `/ws/gen/f${i}.ts`))('/ws/routes.ts'), true);
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
    service.setWorkspaceModules(modules, fileOf);
    const uri = 'file:///ws/routes.ts';
    service.open(uri, 'typescript', 1, files['/ws/routes.ts']!);
    assert.deepEqual(targets(service, uri), ['orders']);
    files['/ws/db/collections.ts'] = files['/ws/db/collections.ts']!.replace("'orders'", "'invoices'");
    service.workspaceFilesChanged(['file:///ws/db/collections.ts']);
    await until('the query to follow the saved helper', () => targets(service, uri)[0] === 'invoices');
  });

  it('reads a statement again when the .sql file a script loads by name is saved, and leaves a script that does not name it', async () => {
    const files: Record<string, string> = {
      '/ws/sql/open-orders.sql': "SELECT id FROM orders WHERE state = 'open'\n",
      '/ws/report.ts': [
        "import { readFileSync } from 'node:fs';",
        "import { join } from 'node:path';",
        "import { Pool } from 'pg';",
        "const pool = new Pool();",
        "const OPEN = readFileSync(join(__dirname, 'sql', 'open-orders.sql'), 'utf8');",
        "export const open = () => pool.query(OPEN);",
      ].join('\n'),
      '/ws/other.ts': [
        "import { Pool } from 'pg';",
        "export const n = () => new Pool().query('SELECT count(*) FROM users');",
      ].join('\n'),
    };
    const { service } = serviceOver(files);
    const uri = 'file:///ws/report.ts';
    service.open(uri, 'typescript', 1, files['/ws/report.ts']!);
    service.open('file:///ws/other.ts', 'typescript', 1, files['/ws/other.ts']!);
    assert.deepEqual(targets(service, uri), ['orders']);
    files['/ws/sql/open-orders.sql'] = "SELECT id FROM tickets WHERE state = 'open'\n";
    service.workspaceFilesChanged(['file:///ws/sql/open-orders.sql']);
    assert.equal(service.docs.get('file:///ws/other.ts')!.timer, undefined, 'a script that names no such file was read again');
    await until('the query to read the saved .sql file', () => targets(service, uri)[0] === 'tickets');
  });

  it('reads a statement again when the .sql file a registry gives for a key is saved, though the script never names the file', async () => {
    const files: Record<string, string> = {
      '/ws/queries/orders/by-customer.sql': 'SELECT id FROM orders WHERE customer_id = $1\n',
      '/ws/queries/index.ts': [
        "import { readFileSync } from 'node:fs';",
        "import { join } from 'node:path';",
        "const FILES = { byCustomer: 'orders/by-customer.sql' };",
        "export const query = (k: keyof typeof FILES) => readFileSync(join(__dirname, FILES[k]), 'utf8');",
      ].join('\n'),
      '/ws/report.ts': [
        "import { Pool } from 'pg';",
        "import { query } from './queries';",
        'const pool = new Pool();',
        "export const mine = (c: string) => pool.query(query('byCustomer'), [c]);",
      ].join('\n'),
    };
    const { service } = serviceOver(files);
    const uri = 'file:///ws/report.ts';
    service.open(uri, 'typescript', 1, files['/ws/report.ts']!);
    assert.deepEqual(targets(service, uri), ['orders']);
    assert.ok(!files['/ws/report.ts']!.includes('by-customer'), 'the script does not name the file');
    files['/ws/queries/orders/by-customer.sql'] = 'SELECT id FROM invoices WHERE customer_id = $1\n';
    service.workspaceFilesChanged(['file:///ws/queries/orders/by-customer.sql']);
    await until('the query to read the saved .sql file', () => targets(service, uri)[0] === 'invoices');
  });
});
