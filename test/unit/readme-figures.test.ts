// The README's package figures come from what vsce prints when it packs the extension
// (scripts/host.mjs readmeFiguresDiffer, which `npm run test:host` runs after packing): a figure that
// no longer matches the package fails that run with a sentence naming both.

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

describe('the README\'s package figures', () => {
  it('agree with a vsce summary of the same figures, and a different count or size is named', async () => {
    const { readmeFiguresDiffer } = await import('../../scripts/host.mjs');
    const said = /packs the extension[\s\S]*?(\d+) files, ([\d.]+ [KM]B)/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    assert.ok(said, 'the README gives the package figures');
    assert.equal(readmeFiguresDiffer(`Packaged: out/query-plan-inspector.vsix (${said[1]} files, ${said[2]})`), undefined);
    assert.match(readmeFiguresDiffer(`Packaged: out/query-plan-inspector.vsix (${Number(said[1]) + 1} files, ${said[2]})`) ?? '', new RegExp(`README says the package is ${said[1]} files, ${said[2].replace('.', '\\.')}; vsce packed ${Number(said[1]) + 1} files`));
    assert.match(readmeFiguresDiffer('Packaged: out/query-plan-inspector.vsix (20 files, 9.99 MB)') ?? '', /vsce packed 20 files, 9\.99 MB: put the packaging command's figures in the README/);
    assert.match(readmeFiguresDiffer(undefined) ?? '', /could not be compared/);
  });
});
