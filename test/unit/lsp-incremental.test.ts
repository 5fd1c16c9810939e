// What the language server reports after edits equals what it reports when the edited text is opened
// afresh: the incremental re-parse, the moved query positions, the analyses kept for unchanged queries
// and the document edited in place must not change a diagnostic. Run over every fixture of
// test/fixtures/lsp/ and over long files with a problem in every query, edited at many places, with
// characters typed and deleted and lines added and removed.

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import type { Diagnostic } from 'vscode-languageserver';
import { loadSqlParser } from '../../src/core/query/find';
import { InlineAdviceService } from '../../src/server/service';
import { FakePort, languageOf, LSP_FIXTURES, readFixture } from './lsp-fixtures';

const OPTIONS = { debounceMs: 0, codeLens: true, maxTextLength: 4_000_000, explainDelayMs: 0 };

/** The diagnostics a new server publishes for `text` opened at `version`. */
function fresh(uri: string, languageId: string, version: number, text: string): Diagnostic[] {
  const port = new FakePort();
  new InlineAdviceService(port, OPTIONS).open(uri, languageId, version, text);
  return port.last(uri);
}

/** Places where typing keeps the file readable: after a digit, and at the end of a line. */
function editPlaces(text: string, count: number): number[] {
  const places: number[] = [];
  for (const m of text.matchAll(/\d|\n/g)) places.push(m[0] === '\n' ? m.index : m.index + 1);
  const step = Math.max(1, Math.floor(places.length / count));
  return places.filter((_, i) => i % step === 0).slice(0, count);
}

/** A long script with a problem in every handler: a regex filter, skip paging, a late $match, OFFSET. */
function denseScript(handlers: number): string {
  const out = ["import { MongoClient } from 'mongodb';", "import { Pool } from 'pg';", 'const pool = new Pool();', "const db = new MongoClient('').db('app');", "const items = db.collection('items');", ''];
  for (let i = 0; i < handlers; i++) {
    out.push(
      `export async function list${i}(q: { text: string; page: number }) {`,
      `  const rows = await db.collection('c${i % 3}').find({ owner: ${i}, title: new RegExp(q.text, 'i') }).sort({ at: -1 }).skip(q.page * 10).limit(10).toArray();`,
      `  const stages = [{ $project: { mail: '$user.mail', n: ${i} } }, { $match: { mail: q.text } }];`,
      '  const grouped = await items.aggregate(stages).toArray();',
      `  const { rows: sql } = await pool.query(\`SELECT id FROM items WHERE lower(title) = 't${i}' ORDER BY at DESC OFFSET 20 LIMIT 10\`);`,
      '  return [rows, grouped, sql];',
      '}',
      '',
    );
  }
  return out.join('\n');
}

function denseSql(statements: number): string {
  const out: string[] = [];
  for (let i = 0; i < statements; i++) {
    out.push(`-- statement ${i}`, 'SELECT i.id, u.name FROM items i JOIN users u ON u.id = i.owner_id', `WHERE i.kind = ${i % 7} AND lower(u.mail) LIKE '%@x${i}.org'`, `ORDER BY i.at DESC OFFSET ${i * 5} LIMIT 5;`, '');
  }
  return out.join('\n');
}

/**
 * Opens `text`, then at each place types a character (a digit, or a new line at a line's end) and
 * deletes it again, and after every edit compares the published diagnostics with a fresh open.
 */
async function editsEqualFreshOpens(name: string, text: string, places: number): Promise<number> {
  const uri = `file:///edited/${name}`;
  const languageId = languageOf(name);
  const port = new FakePort();
  const service = new InlineAdviceService(port, OPTIONS);
  service.open(uri, languageId, 1, text);
  assert.deepEqual(port.last(uri), fresh(uri, languageId, 1, text), `${name} as opened`);
  let version = 1;
  let compared = 0;
  for (const at of editPlaces(text, places)) {
    const typed = text[at] === '\n' || at === text.length ? '\n' : '7';
    for (const edited of [text.slice(0, at) + typed + text.slice(at), text]) {
      service.change(uri, ++version, edited);
      await service.settled(uri);
      const last = port.published.at(-1)!;
      assert.equal(last.version, version);
      assert.deepEqual(last.diagnostics, fresh(uri, languageId, version, edited), `${name} after version ${version} (typed at offset ${at})`);
      compared++;
    }
  }
  return compared;
}

describe('language server: edits report what a fresh open reports', () => {
  before(async () => {
    await loadSqlParser();
  });

  for (const name of readdirSync(LSP_FIXTURES).filter((f) => !f.endsWith('.expected.json')).sort()) {
    it(`${name}, edited at ten places`, async () => {
      assert.ok((await editsEqualFreshOpens(name, readFixture(name), 10)) > 0);
    });
  }

  it('a script with a problem in every handler, edited at twelve places', async () => {
    const text = denseScript(60);
    assert.ok(fresh('file:///dense.ts', 'typescript', 1, text).length >= 240, 'the file has a problem in every handler');
    assert.equal(await editsEqualFreshOpens('dense.ts', text, 12), 24);
  });

  it('a declaration edited beside a function is seen by every statement using it', async () => {
    const text = denseScript(8);
    const uri = 'file:///declared.ts';
    const port = new FakePort();
    const service = new InlineAdviceService(port, OPTIONS);
    service.open(uri, 'typescript', 1, text);
    // The collection's name changes, then a digit is typed in the function right after it: the region
    // read again holds both, and every aggregate on `items` must now name the other collection.
    const renamed = text.replace("db.collection('items')", "db.collection('goods')");
    service.change(uri, 2, renamed);
    await service.settled(uri);
    const typed = renamed.replace('owner: 0', 'owner: 70');
    service.change(uri, 3, typed);
    await service.settled(uri);
    assert.deepEqual(port.last(uri), fresh(uri, 'typescript', 3, typed));
    const listed = service.listQueries(uri).filter((q) => typed.slice(q.start, q.end).startsWith('items.aggregate'));
    assert.equal(listed.length, 8);
    assert.deepEqual([...new Set(listed.map((q) => q.targets.join()))], ['goods']);
  });

  it('a .sql file with a problem in every statement, edited at twelve places', async () => {
    const text = denseSql(80);
    assert.ok(fresh('file:///dense.sql', 'sql', 1, text).length >= 160, 'the file has a problem in every statement');
    assert.equal(await editsEqualFreshOpens('dense.sql', text, 12), 24);
  });
});
