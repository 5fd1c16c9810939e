// What the language server reports after edits equals what it reports when the edited text is opened
// afresh: the incremental re-parse, the moved query positions, the analyses kept for unchanged queries
// and the document edited in place must not change a diagnostic. Run over every fixture of
// test/fixtures/lsp/ and over long files with a problem in every query, edited at many places, with
// characters typed and deleted and lines added and removed.

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import type { Diagnostic, Range, TextEdit } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { loadSqlParser, type FoundQuery } from '../../src/core/query/find';
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

/** The code actions a service offers for each of its published diagnostics (the fixes with their edits). */
function actionsOf(service: InlineAdviceService, uri: string, diagnostics: Diagnostic[]): unknown[] {
  return diagnostics.map((d) => service.codeActions({ textDocument: { uri }, range: d.range, context: { diagnostics: [d] } }));
}

/**
 * Applies each edit in turn and after every one compares the diagnostics, and the code actions offered
 * for them, with those of the same text opened afresh.
 */
async function sequenceEqualsFreshOpens(uri: string, languageId: string, text: string, edits: [string, (t: string) => string][]): Promise<void> {
  const port = new FakePort();
  const service = new InlineAdviceService(port, OPTIONS);
  service.open(uri, languageId, 1, text);
  let current = text;
  let version = 1;
  for (const [what, edit] of edits) {
    const next = edit(current);
    assert.notEqual(next, current, `${what} changes the text`);
    current = next;
    service.change(uri, ++version, current);
    await service.settled(uri);
    const freshPort = new FakePort();
    const freshService = new InlineAdviceService(freshPort, OPTIONS);
    freshService.open(uri, languageId, version, current);
    const expected = freshPort.last(uri);
    assert.deepEqual(port.last(uri), expected, `diagnostics after: ${what}`);
    assert.deepEqual(actionsOf(service, uri, expected), actionsOf(freshService, uri, expected), `code actions after: ${what}`);
  }
}

function rangeOf(doc: TextDocument, start: number, end: number): Range {
  return { start: doc.positionAt(start), end: doc.positionAt(end) };
}

/** `text` with `insert` put at the `n`th place (from 0) where `at` occurs, right after it. */
function insertAfter(text: string, at: string, n: number, insert: string): string {
  let i = -1;
  for (let k = 0; k <= n; k++) {
    i = text.indexOf(at, i + 1);
    assert.ok(i >= 0, `no ${n}th ${at}`);
  }
  return text.slice(0, i + at.length) + insert + text.slice(i + at.length);
}

describe('language server: statements an edit did not change are kept, and report what a fresh open reports', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('keeps the unchanged neighbours of an edited statement in a script, with their queries', async () => {
    const { ScriptQueryIndex } = await import('../../src/core/query/find');
    const text = denseScript(6);
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(text);
    const before = index.result().queries;
    index.update(text.replace('owner: 2,', 'owner: 27,'));
    assert.equal(index.lastUpdate.reparsed, 3, 'the edited function and its neighbours are parsed');
    assert.equal(index.lastUpdate.reextracted, 1, 'only the edited function is read again');
    const after = index.result().queries;
    assert.equal(after.length, before.length);
    // Three queries a handler: those of the handlers before and after the edited one are the same objects.
    assert.deepEqual(after.map((q, i) => q === before[i]), [...Array(18).keys()].map((i) => i < 6 || i > 8));
  });

  it("a class's static property read through the class's name: an edit of it, or of a method, reads every query as a fresh open does", async () => {
    const { ScriptQueryIndex, findQueries } = await import('../../src/core/query/find');
    const methods = [...Array(24).keys()].map((i) => `  static async m${i}(uid: string) {\n    const at = ${i};\n    return Sessions.coll.find({ uid, at }).toArray();\n  }`);
    let text = [
      "import { MongoClient } from 'mongodb';",
      "const db = new MongoClient('').db('app');",
      'export class Sessions {',
      "  static coll = db.collection('sessions');",
      ...methods,
      '}',
      'export const count = (uid: string) => Sessions.coll.countDocuments({ uid });',
    ].join('\n');
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(text);
    const names = (qs: readonly { engine: string; command?: { collection?: string } }[]) => qs.map((q) => (q.engine === 'mongodb' ? q.command!.collection : q.engine));
    const inner: boolean[] = [];
    for (const edit of [(t: string) => t.replace('const at = 3;', 'const at = 37;'), (t: string) => t.replace("'sessions'", "'sessions_v2'"), (t: string) => t.replace('const at = 5;', 'const at = 5;\n    const more = 1;')]) {
      text = edit(text);
      index.update(text);
      inner.push(index.lastUpdate.inner);
      assert.deepEqual(names(index.result().queries), names(findQueries(text, 'script', 'ts').queries));
    }
    assert.equal(inner[0], true, "a method's edit is read inside the class");
    assert.deepEqual(names(index.result().queries), Array(25).fill('sessions_v2'));
  });

  it("an enum's member edited: every statement naming a collection or a value by it reads it again, as a fresh open does", async () => {
    const { ScriptQueryIndex, findQueries } = await import('../../src/core/query/find');
    let text = [
      "import { MongoClient } from 'mongodb';",
      "enum Coll { ORDERS = 'orders', STOCK = 'stock' }",
      "const db = new MongoClient('').db('app');",
      'export const a = (sku: string) => db.collection(Coll.ORDERS).find({ sku }).toArray();',
      'export const b = (sku: string) => db.collection(Coll.STOCK).findOne({ sku, kind: Coll.ORDERS });',
    ].join('\n');
    const index = new ScriptQueryIndex('script', 'ts');
    index.update(text);
    const read = (qs: readonly FoundQuery[]) => qs.map((q) => (q.engine === 'mongodb' ? [q.command.collection, q.command.filter?.kind ?? null] : []));
    const seen: unknown[] = [];
    for (const edit of [(t: string) => t.replace("ORDERS = 'orders'", "ORDERS = 'orders_v2'"), (t: string) => t.replace("STOCK = 'stock'", 'STOCK = 3')]) {
      text = edit(text);
      index.update(text);
      assert.deepEqual(read(index.result().queries), read(findQueries(text, 'script', 'ts').queries));
      seen.push(read(index.result().queries));
    }
    assert.deepEqual(seen, [[['orders_v2', null], ['stock', 'orders_v2']], [['orders_v2', null], ['', 'orders_v2']]]);
  });

  it('keeps the unchanged neighbours of an edited statement in a .sql file, with their queries', async () => {
    const { SqlQueryIndex } = await import('../../src/core/query/find');
    const text = denseSql(6);
    const index = new SqlQueryIndex();
    index.update(text);
    const before = index.result().queries;
    index.update(text.replace('i.kind = 2 ', 'i.kind = 27 '));
    assert.equal(index.lastUpdate.reparsed, 3);
    const after = index.result().queries;
    assert.deepEqual(after.map((q, i) => q === before[i]), [true, true, false, true, true, true]);
  });

  it('a script: edits inside a query, between queries, splitting and joining statements, pasting and cutting many lines', async () => {
    const handler = (n: number) => denseScript(n).split('\n').slice(6).join('\n');
    await sequenceEqualsFreshOpens('file:///seq.ts', 'typescript', denseScript(12), [
      ['a digit typed inside a query', (t) => t.replace('owner: 3,', 'owner: 31,')],
      ['a line added at the top, moving every query', (t) => `// header\n${t}`],
      ['a blank line added between two functions', (t) => insertAfter(t, '\n}\n', 4, '\n')],
      ['a comment typed between two functions', (t) => insertAfter(t, '\n}\n', 6, '// between\n')],
      ['a function split in two', (t) => t.replace('  const grouped = await items.aggregate(stages).toArray();\n  const { rows: sql } = await pool.query(`SELECT id FROM items WHERE lower(title) = \'t5\'', '  const grouped = await items.aggregate(stages).toArray();\n  return grouped;\n}\nexport async function split5(q: { text: string; page: number }) {\n  const { rows: sql } = await pool.query(`SELECT id FROM items WHERE lower(title) = \'t5\'')],
      ['the two joined again', (t) => t.replace('  return grouped;\n}\nexport async function split5(q: { text: string; page: number }) {\n', '')],
      ['two statements joined by a deleted line break', (t) => t.replace("const items = db.collection('items');\n", "const items = db.collection('items'); ")],
      ['the module constant renamed in place', (t) => t.replace("db.collection('items')", "db.collection('goods')")],
      ['many lines pasted in the middle', (t) => insertAfter(t, '\n}\n', 7, `${handler(4).replace(/list(\d)/g, 'pasted$1')}\n`)],
      ['a query deleted', (t) => t.replace("  const grouped = await items.aggregate(stages).toArray();\n", '')],
      ['many lines cut', (t) => t.slice(0, t.indexOf('export async function list2(')) + t.slice(t.indexOf('export async function list5('))],
      ['a digit typed at the very end of a query', (t) => t.replace('.limit(10).toArray();', '.limit(101).toArray();')],
    ]);
  });

  it('a script whose queries read constants declared further down: edits between a query and its constant', async () => {
    const text = [
      "import { MongoClient } from 'mongodb';",
      "const db = new MongoClient('').db('app');",
      'export async function list(page: number) {',
      "  return db.collection('items').find(FILTER).sort({ at: -1 }).skip(page * 10).limit(10).toArray();",
      '}',
      'export function other() { return 1; }',
      'export async function more() {',
      "  return db.collection('items').aggregate(STAGES).toArray();",
      '}',
      'export function last() { return 2; }',
      "const FILTER = { owner: 1, title: new RegExp('x', 'i') };",
      "const STAGES = [{ $project: { mail: '$user.mail' } }, { $match: { mail: 'a' } }];",
      '',
    ].join('\n');
    assert.ok(fresh('file:///later.ts', 'typescript', 1, text).some((d) => d.range.start.line === 10), 'a finding lies on the constant');
    await sequenceEqualsFreshOpens('file:///later.ts', 'typescript', text, [
      ['a line added between a query and its constant', (t) => t.replace('export function other() { return 1; }', 'export function other() {\n  return 1;\n}')],
      ['a digit typed between them', (t) => t.replace('return 2;', 'return 27;')],
      ['a line removed between them', (t) => t.replace('export function other() {\n  return 1;\n}', 'export function other() { return 1; }')],
      ['a line added before both', (t) => `// header\n${t}`],
    ]);
  });

  it("a class whose bulkWrite runs operations its other methods push into a field: an edit in a pushed operation", async () => {
    const padding = Array.from({ length: 70 }, (_, i) => `  helper${i}(x: number) { return x * ${i} + ${i}; }`);
    const text = [
      "import { MongoClient } from 'mongodb';",
      'export class Batch {',
      "  private readonly items = new MongoClient('').db('app').collection<{ title: string; n: number }>('items');",
      '  private pending: object[] = [];',
      ...padding,
      '  queue(text: string) {',
      '    const n = 1;',
      "    this.pending.push({ updateOne: { filter: { owner: n, title: new RegExp(text, 'i') }, update: { $inc: { n: 1 } } } });",
      '  }',
      '  async flush() { await this.items.bulkWrite(this.pending as any); this.pending = []; }',
      '}',
      '',
    ].join('\n');
    assert.ok(text.length > 2500, 'the class is long enough to be read again in parts');
    await sequenceEqualsFreshOpens('file:///batch.ts', 'typescript', text, [
      ['the pushed filter loses its regular expression', (t) => t.replace("title: new RegExp(text, 'i')", 'title: text')],
      ['and gains it back', (t) => t.replace('title: text', "title: new RegExp(text, 'i')")],
      ['a digit typed in the method that pushes', (t) => t.replace('const n = 1;', 'const n = 12;')],
    ]);
  });

  it("the editor's changes as LSP sends them: ranges, several in one notification, a whole text", async () => {
    const uri = 'file:///changes.ts';
    const port = new FakePort();
    const service = new InlineAdviceService(port, OPTIONS);
    let text = denseScript(10);
    service.open(uri, 'typescript', 1, text);
    const doc = () => TextDocument.create(uri, 'typescript', 1, text);
    const steps: { what: string; changes: { range: Range; text: string }[] }[] = [
      { what: 'a digit typed', changes: [{ range: rangeOf(doc(), text.indexOf('owner: 4,') + 7, text.indexOf('owner: 4,') + 7), text: '2' }] },
      { what: 'a line joined to the next', changes: [{ range: rangeOf(doc(), text.indexOf('\n', text.indexOf('owner: 7,')), text.indexOf('\n', text.indexOf('owner: 7,')) + 1), text: ' ' }] },
      { what: 'lines pasted at the top', changes: [{ range: rangeOf(doc(), 0, 0), text: '// one\n// two\n' }] },
    ];
    let version = 1;
    for (const step of steps) {
      text = TextDocument.applyEdits(doc(), step.changes.map((c): TextEdit => ({ range: c.range, newText: c.text })));
      service.applyChanges(uri, ++version, step.changes);
      await service.settled(uri);
      assert.deepEqual(port.last(uri), fresh(uri, 'typescript', version, text), `after ${step.what}`);
    }
    // Two changes in one notification, the second in the text the first left (as multi-cursor typing sends them).
    const first = text.indexOf('owner: 2,') + 7;
    const second = text.indexOf('owner: 8,') + 7;
    const once = `${text.slice(0, first)}5${text.slice(first)}`;
    const twice = `${once.slice(0, second + 1)}6${once.slice(second + 1)}`;
    service.applyChanges(uri, ++version, [
      { range: rangeOf(doc(), first, first), text: '5' },
      { range: rangeOf(TextDocument.create(uri, 'typescript', 1, once), second + 1, second + 1), text: '6' },
    ]);
    text = twice;
    await service.settled(uri);
    assert.deepEqual(port.last(uri), fresh(uri, 'typescript', version, text), 'after two changes in one notification');
    text = text.replace('owner: 3,', 'owner: 33,');
    service.applyChanges(uri, ++version, [{ text }]);
    await service.settled(uri);
    assert.deepEqual(port.last(uri), fresh(uri, 'typescript', version, text), 'after a whole new text');
  });

  it('a .sql file with two statements on a line: an edit in the first moves the second along its line', async () => {
    const two = "SELECT id FROM items WHERE lower(kind) = 'a' OFFSET 5 LIMIT 1; SELECT id FROM items WHERE lower(kind) = 'b' OFFSET 5 LIMIT 1;";
    await sequenceEqualsFreshOpens('file:///two.sql', 'sql', `${denseSql(3)}\n${two}\n${denseSql(3)}`, [
      ['a digit typed in the first statement', (t) => t.replace('OFFSET 5 LIMIT 1; SELECT', 'OFFSET 57 LIMIT 1; SELECT')],
      ['deleted again', (t) => t.replace('OFFSET 57 LIMIT 1; SELECT', 'OFFSET 5 LIMIT 1; SELECT')],
      ['a line break typed in the first statement', (t) => t.replace("= 'a' OFFSET", "= 'a'\nOFFSET")],
    ]);
  });

  it('a .sql file: edits inside a statement, between statements, splitting and joining statements, pasting and cutting many lines', async () => {
    await sequenceEqualsFreshOpens('file:///seq.sql', 'sql', denseSql(16), [
      ['a digit typed inside a statement', (t) => t.replace('i.kind = 3 ', 'i.kind = 37 ')],
      ['a line added at the top, moving every statement', (t) => `-- header\n${t}`],
      ['a blank line added between two statements', (t) => insertAfter(t, 'LIMIT 5;\n', 4, '\n')],
      ['a comment typed between two statements', (t) => insertAfter(t, 'LIMIT 5;\n', 6, '-- between\n')],
      ['a statement split in two', (t) => t.replace("WHERE i.kind = 5 AND", 'LIMIT 3;\nSELECT i.id FROM items i WHERE i.kind = 5 AND')],
      ['the two joined again', (t) => t.replace('LIMIT 3;\nSELECT i.id FROM items i WHERE i.kind = 5 AND', 'WHERE i.kind = 5 AND')],
      ['two statements joined by a deleted semicolon', (t) => insertAfter(t, 'LIMIT 5', 8, '').replace(/(OFFSET 40 LIMIT 5);/, '$1 UNION ALL')],
      ['many lines pasted in the middle', (t) => insertAfter(t, 'LIMIT 5;\n', 9, denseSql(5).replace(/statement (\d)/g, 'pasted $1'))],
      ['a statement deleted', (t) => t.replace(/-- statement 11\n[^;]*;\n/, '')],
      ['many lines cut', (t) => t.slice(0, t.indexOf('-- statement 2\n')) + t.slice(t.indexOf('-- statement 6\n'))],
      ['a digit typed at the very end of a statement', (t) => t.replace('OFFSET 70 LIMIT 5;', 'OFFSET 70 LIMIT 57;')],
    ]);
  });
});
