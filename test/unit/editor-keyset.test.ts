// The keyset quick fix, the way the editor goes through it: on a MongoDB playground the fix declares the
// last value without one, so Explain asks for it (as for SQL's $1) instead of explaining with null; the
// run before the fix is still found for Compare, though the declaration moved the query a line down; and
// the SQL fix leaves no double space where OFFSET was.

import assert from 'node:assert/strict';
import type { CodeAction, TextEdit } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { explainTargets, fillExplainValues, loadSqlParser, parseMongoQuery } from '../../src/core/index';
import { lineAfter, type LineChange } from '../../src/extension/runPlaces';
import { DiagnosticCodes } from '../../src/protocol/languageServer';
import { InlineAdviceService } from '../../src/server/service';
import { FakePort } from './lsp-fixtures';

async function keysetFix(uri: string, languageId: string, text: string): Promise<TextEdit[]> {
  const port = new FakePort();
  const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
  service.open(uri, languageId, 1, text);
  await service.settled(uri);
  const d = port.last(uri).find((x) => x.code === DiagnosticCodes.skipPagination);
  assert.ok(d, `no skip-pagination diagnostic among ${port.last(uri).map((x) => String(x.code)).join(', ')}`);
  const actions: CodeAction[] = service.codeActions({ textDocument: { uri }, range: d.range, context: { diagnostics: [d] } });
  const a = actions.find((x) => x.title.startsWith('Rewrite to keyset pagination'));
  assert.ok(a, `no keyset fix among ${actions.map((x) => x.title).join(' | ')}`);
  return (a.edit!.documentChanges![0] as { edits: TextEdit[] }).edits;
}

/** The edits as the editor reports them to the extension: ranges in the text before, and the new text. */
function changesOf(edits: readonly TextEdit[]): LineChange[] {
  return edits.map((e) => ({ startLine: e.range.start.line, startCharacter: e.range.start.character, endLine: e.range.end.line, endCharacter: e.range.end.character, text: e.newText }));
}

const PLAYGROUND = [
  '// Orders of country 2, newest first, a page at a time.',
  "use('qpi_samples');",
  'db.orders.find({ country_id: 2 }).sort({ created_at: -1 }).skip(2000).limit(20);',
  '',
].join('\n');

describe('the keyset quick fix in the editor', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('on a playground: the last value is declared without a value, so Explain asks for it and runs with the one given', async () => {
    const edits = await keysetFix('file:///w/orders.mongodb.js', 'javascript', PLAYGROUND);
    const fixed = TextDocument.applyEdits(TextDocument.create('file:///x', 'javascript', 1, PLAYGROUND), edits);
    assert.match(fixed, /^let lastCreatedAt; \/\/ the created_at of the last document of the previous page$/m);
    assert.doesNotMatch(fixed, /= null/);
    const [target] = explainTargets(fixed, 'mongodb-playground');
    assert.ok(target, fixed);
    assert.match(target.problem ?? '', /Explain asks for their values/);
    assert.deepEqual(target.values?.names, ['lastCreatedAt']);
    const text = fillExplainValues(target.values!, ['ISODate("2024-01-10T00:00:00Z")']);
    const parsed = parseMongoQuery(text);
    assert.ok(parsed.ok, text);
    assert.deepEqual(parsed.command.filter, { country_id: 2, created_at: { $lt: { $date: '2024-01-10T00:00:00Z' } } });
  });

  it('after the fix, the run before it is found at the line the query moved to', async () => {
    const edits = await keysetFix('file:///w/orders.mongodb.js', 'javascript', PLAYGROUND);
    const fixed = TextDocument.applyEdits(TextDocument.create('file:///x', 'javascript', 1, PLAYGROUND), edits);
    const before = PLAYGROUND.split('\n').findIndex((l) => l.startsWith('db.orders'));
    const after = fixed.split('\n').findIndex((l) => l.startsWith('db.orders'));
    assert.equal(after, before + 1, 'the declaration moved the query down a line');
    assert.equal(lineAfter(before, changesOf(edits)), after);
    // The same edits reported in either order give the same line.
    assert.equal(lineAfter(before, changesOf([...edits].reverse())), after);
  });

  it('follows lines added and removed above a query, and keeps it where an edit is on or below its first line', () => {
    const at = (l: number, c: number) => ({ line: l, character: c });
    const change = (s: { line: number; character: number }, e: { line: number; character: number }, text: string): LineChange => ({ startLine: s.line, startCharacter: s.character, endLine: e.line, endCharacter: e.character, text });
    assert.equal(lineAfter(10, [change(at(2, 0), at(2, 0), 'a\nb\n')]), 12);
    assert.equal(lineAfter(10, [change(at(2, 0), at(5, 0), '')]), 7);
    assert.equal(lineAfter(10, [change(at(10, 0), at(10, 0), 'let x;\n')]), 11, 'a line inserted at the start of its line pushes it down');
    assert.equal(lineAfter(10, [change(at(10, 15), at(10, 30), 'created_at: 1')]), 10, 'a rewrite inside the query');
    assert.equal(lineAfter(10, [change(at(10, 0), at(10, 4), 'db2.')]), 10, 'a rewrite at its start');
    assert.equal(lineAfter(10, [change(at(12, 0), at(12, 0), '\n\n')]), 10);
    assert.equal(lineAfter(10, [change(at(4, 3), at(10, 0), 'x')]), 4, 'lines above merged into one');
  });

  it('in SQL: the keyset rewrite leaves no double space where OFFSET was, on one line or several', async () => {
    const one = 'SELECT id, created_at FROM orders ORDER BY created_at DESC, id DESC OFFSET 10000 LIMIT 20;\n';
    const several = 'SELECT id, created_at FROM orders\nWHERE country_id = 1\nORDER BY created_at DESC, id DESC\nOFFSET 10000 LIMIT 20;\n';
    for (const [text, expected] of [
      [one, 'SELECT id, created_at FROM orders WHERE (created_at, id) < ($1, $2) ORDER BY created_at DESC, id DESC LIMIT 20;\n'],
      [several, 'SELECT id, created_at FROM orders\nWHERE country_id = 1 AND (created_at, id) < ($1, $2)\nORDER BY created_at DESC, id DESC\nLIMIT 20;\n'],
    ] as const) {
      const edits = await keysetFix('file:///w/orders.sql', 'sql', text);
      const fixed = TextDocument.applyEdits(TextDocument.create('file:///x', 'sql', 1, text), edits);
      assert.equal(fixed, expected);
      assert.doesNotMatch(fixed, / {2}|\n /);
    }
  });
});
