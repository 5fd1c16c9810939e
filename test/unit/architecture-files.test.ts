// ARCHITECTURE.md's "Files, one line each" lists every source file of src/ and webview/ with its job, and
// names no file that is gone: a file added or removed without its line there fails here.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

/** The files listed under each folder heading of the section, as folder/name. */
function listed(): Set<string> {
  const text = readFileSync(resolve(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const at = text.indexOf('## Files, one line each');
  assert.ok(at >= 0, 'ARCHITECTURE.md has no "Files, one line each" section');
  const out = new Set<string>();
  let folder = '';
  for (const line of text.slice(at).split('\n').slice(1)) {
    if (line.startsWith('## ')) break;
    const heading = /^`([^`]+)\/`$/.exec(line);
    if (heading) folder = heading[1]!;
    const item = /^- `([^`]+)`: \S/.exec(line);
    if (item) out.add(`${folder}/${item[1]}`);
  }
  return out;
}

/** The source files git knows under src/ and webview/. */
function sources(): string[] {
  return execFileSync('git', ['ls-files', 'src', 'webview'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter((f) => /\.(ts|css)$/.test(f) && existsSync(resolve(ROOT, f)));
}

describe('ARCHITECTURE.md names every source file', function () {
  it('lists each file of src/ and webview/ once, and no file that does not exist', function () {
    const names = listed();
    const files = sources();
    assert.ok(files.length > 100, `only ${files.length} source files found`);
    const missing = files.filter((f) => !names.has(f));
    assert.deepEqual(missing, [], `files without their line in ARCHITECTURE.md: ${missing.join(', ')}`);
    const gone = [...names].filter((f) => !existsSync(resolve(ROOT, f)));
    assert.deepEqual(gone, [], `ARCHITECTURE.md lists files that do not exist: ${gone.join(', ')}`);
  });
});
