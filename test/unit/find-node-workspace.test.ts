// The workspace as the language server and the CLI read it from disk (src/node/workspaceModules.ts): a
// workspace package is found by its name at its source, not at the build its package.json points to.

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_READ_BYTES, nodeWorkspaceModules } from '../../src/node/workspaceModules';

describe('finder: workspace packages on disk', () => {
  let root = '';
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'qpi-ws-'));
    const write = (path: string, text: string) => {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write('package.json', JSON.stringify({ name: 'shop', workspaces: ['packages/*'] }));
    // Built into lib/, which the repository does not hold: the source is src/db-index.ts.
    write('packages/db/package.json', JSON.stringify({ name: '@shop/db', main: 'lib/db-index.js', types: 'lib/db-index.d.ts' }));
    write('packages/db/src/db-index.ts', "import * as mongodb from 'mongodb';\nexport { mongodb };");
    // JavaScript whose lib/ is its source.
    write('packages/legacy/package.json', JSON.stringify({ name: '@shop/legacy', main: 'lib/index.js' }));
    write('packages/legacy/lib/index.js', 'module.exports = {};');
    write('packages/app/src/catalog.ts', "import { mongodb } from '@shop/db';");
    // Four folders down, declarations in types/ and the build in lib/: the source is src/index.ts.
    write('platform/base/packages/model/package.json', JSON.stringify({ name: '@shop/model', main: 'lib/index.js', types: 'types/index.d.ts' }));
    write('platform/base/packages/model/src/index.ts', "export const DOMAIN_ORDER = 'order' as string;");
    // Only `exports` says where the entry is, by a condition of its root: the source is src/index.ts.
    write('packages/locks/package.json', JSON.stringify({ name: '@shop/locks', type: 'module', exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' }, './extra': './dist/extra.js' } }));
    write('packages/locks/src/index.ts', "export * as driver from 'mongodb';");
    write('packages/flags/package.json', JSON.stringify({ name: '@shop/flags', exports: './dist/main.js' }));
    write('packages/flags/src/main.ts', 'export const ON = true;');
    // A JavaScript service: subpath imports in its package.json, paths in its jsconfig.json.
    write('services/ledger/package.json', JSON.stringify({ name: 'ledger', type: 'module', imports: { '#repos/*': './src/repositories/*', '#config': { types: './types/config.d.ts', default: './src/config.js' }, '#lodash': 'lodash' } }));
    write('services/ledger/jsconfig.json', JSON.stringify({ compilerOptions: { paths: { '~/*': ['./src/*'] } } }));
    write('services/ledger/src/repositories/entries.js', "export const ENTRIES = 'entries';");
    write('services/ledger/src/config.js', 'export default {};');
    write('services/ledger/src/routes/list.js', "import { ENTRIES } from '#repos/entries.js';");
    // A service whose tsconfig gives only a baseUrl: bare names are looked for under it, then among packages.
    write('services/forms/tsconfig.json', '{\n  // comments are allowed\n  "compilerOptions": { "baseUrl": "." }\n}');
    write('services/forms/src/models/user.model.ts', "export default () => 'user';");
    write('services/forms/src/app/users.service.ts', "import getUserModel from 'src/models/user.model';");
    // A service whose tsconfig sets paths and extends one that sets the baseUrl: the paths are relative
    // to that baseUrl (TypeScript merges the two files' options), not to the service's own folder.
    write('services/tsconfig.base.json', JSON.stringify({ compilerOptions: { baseUrl: './shared' } }));
    write('services/billing/tsconfig.json', JSON.stringify({ extends: '../tsconfig.base.json', compilerOptions: { paths: { '@models/*': ['models/*'] } } }));
    write('services/shared/models/invoice.ts', "export const INVOICES = 'invoices';");
    write('services/billing/src/list.ts', "import { INVOICES } from '@models/invoice';");
    // One that sets its own baseUrl and inherits the paths: they are relative to its baseUrl; and a
    // malformed target list maps nothing instead of stopping the reading.
    write('services/tsconfig.paths.json', JSON.stringify({ compilerOptions: { paths: { '@lib/*': ['lib/*'], '@broken/*': 'lib/*' } } }));
    write('services/payouts/tsconfig.json', JSON.stringify({ extends: ['../tsconfig.paths.json'], compilerOptions: { baseUrl: './src' } }));
    write('services/payouts/src/lib/transfers.ts', "export const TRANSFERS = 'transfers';");
    write('services/payouts/src/run.ts', "import { TRANSFERS } from '@lib/transfers';");
    // The same name again deeper (a fixture copied into a test folder): the shallower one is the package.
    write('a/b/c/fixtures/db/package.json', JSON.stringify({ name: '@shop/db', main: 'index.js' }));
    write('a/b/c/fixtures/db/index.js', 'module.exports = {};');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('resolves a package whose main is in a lib/ build folder to its src/, and a lib/ that is source to itself', () => {
    const modules = nodeWorkspaceModules(root);
    const from = join(root, 'packages/app/src/catalog.ts');
    assert.equal(modules.resolve(from, '@shop/db'), join(root, 'packages/db/src/db-index.ts'));
    assert.equal(modules.resolve(from, '@shop/legacy'), join(root, 'packages/legacy/lib/index.js'));
  });

  it('takes, of two packages of one name, the one fewer folders down, whatever the folders\' order', () => {
    const modules = nodeWorkspaceModules(root);
    assert.equal(modules.resolve(join(root, 'packages/app/src/catalog.ts'), '@shop/db'), join(root, 'packages/db/src/db-index.ts'));
  });

  it("resolves a package that names its entry only by `exports`, a string or its root's condition, to its src/", () => {
    const modules = nodeWorkspaceModules(root);
    const from = join(root, 'packages/app/src/catalog.ts');
    assert.equal(modules.resolve(from, '@shop/locks'), join(root, 'packages/locks/src/index.ts'));
    assert.equal(modules.resolve(from, '@shop/flags'), join(root, 'packages/flags/src/main.ts'));
  });

  it("resolves a subpath import by the nearest package.json's imports, and a path by a jsconfig.json", () => {
    const modules = nodeWorkspaceModules(root);
    const from = join(root, 'services/ledger/src/routes/list.js');
    assert.equal(modules.resolve(from, '#repos/entries.js'), join(root, 'services/ledger/src/repositories/entries.js'));
    assert.equal(modules.resolve(from, '#config'), join(root, 'services/ledger/src/config.js'));
    assert.equal(modules.resolve(from, '#lodash'), undefined);
    assert.equal(modules.resolve(from, '~/repositories/entries.js'), join(root, 'services/ledger/src/repositories/entries.js'));
    // Outside the package, its imports name nothing.
    assert.equal(modules.resolve(join(root, 'packages/app/src/catalog.ts'), '#repos/entries.js'), undefined);
  });

  it("resolves a bare name under the tsconfig's baseUrl, and a package's name still to the package", () => {
    const modules = nodeWorkspaceModules(root);
    const from = join(root, 'services/forms/src/app/users.service.ts');
    assert.equal(modules.resolve(from, 'src/models/user.model'), join(root, 'services/forms/src/models/user.model.ts'));
    assert.equal(modules.resolve(from, '@shop/flags'), join(root, 'packages/flags/src/main.ts'));
    assert.equal(modules.resolve(from, 'mongoose'), undefined);
  });

  it("merges a tsconfig's baseUrl and paths over what it extends, as TypeScript does", () => {
    const modules = nodeWorkspaceModules(root);
    assert.equal(modules.resolve(join(root, 'services/billing/src/list.ts'), '@models/invoice'), join(root, 'services/shared/models/invoice.ts'));
    const run = join(root, 'services/payouts/src/run.ts');
    assert.equal(modules.resolve(run, '@lib/transfers'), join(root, 'services/payouts/src/lib/transfers.ts'));
    assert.equal(modules.resolve(run, '@broken/transfers'), undefined);
  });

  it('reads a file again once its modification time changed, from the next turn of the event loop on', async () => {
    const modules = nodeWorkspaceModules(root);
    const file = join(root, 'packages/app/src/limits.ts');
    writeFileSync(file, 'export const LIMIT = 1;');
    utimesSync(file, new Date(1_000_000), new Date(1_000_000));
    assert.equal(modules.read(file), 'export const LIMIT = 1;');
    writeFileSync(file, 'export const LIMIT = 2;');
    utimesSync(file, new Date(2_000_000), new Date(2_000_000));
    // One reading asks for the same file many times in one turn: it is not looked at again within it.
    assert.equal(modules.read(file), 'export const LIMIT = 1;');
    await new Promise<void>((next) => setImmediate(next));
    assert.equal(modules.read(file), 'export const LIMIT = 2;');
  });

  it('finds a package four folders down whose types are in a declarations folder, at its src/', () => {
    const modules = nodeWorkspaceModules(root);
    const from = join(root, 'packages/app/src/catalog.ts');
    assert.equal(modules.resolve(from, '@shop/model'), join(root, 'platform/base/packages/model/src/index.ts'));
  });

  it('reads no file larger than the cap (a dump a seed script loads), and a file at the cap whole', () => {
    const big = join(root, 'db', 'dump.sql');
    mkdirSync(join(root, 'db'), { recursive: true });
    writeFileSync(big, 'x'.repeat(MAX_READ_BYTES + 1));
    const atCap = join(root, 'db', 'one.sql');
    writeFileSync(atCap, `SELECT 1;${' '.repeat(MAX_READ_BYTES - 9)}`);
    const modules = nodeWorkspaceModules(root);
    assert.equal(modules.read(big), undefined);
    assert.equal(modules.read(atCap)?.length, MAX_READ_BYTES);
  });
});
