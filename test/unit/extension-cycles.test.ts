// The extension's modules import each other without a circle (type imports and `import()` included):
// each command, panel and connection module can be read and tested with only the modules below it.

import assert from 'node:assert/strict';
import { relative, resolve } from 'node:path';
import { circles, importGraph, sources } from './importGraph';

const EXTENSION = resolve(__dirname, '../../src/extension');

describe('the extension imports without circles', () => {
  it('has no circle among src/extension modules, type imports and import() included', () => {
    const found = circles(importGraph(sources(EXTENSION), { dynamic: true })).map((c) => c.map((f) => relative(EXTENSION, f)).sort().join(' -> '));
    assert.deepEqual(found, []);
  });

  it('counts an import() as an edge of the graph (the check itself can fail)', () => {
    const graph = importGraph([resolve(EXTENSION, 'main.ts'), resolve(EXTENSION, 'languageClient.ts')], { dynamic: true });
    assert.deepEqual(graph.get(resolve(EXTENSION, 'main.ts')), [resolve(EXTENSION, 'languageClient.ts')]);
  });
});
