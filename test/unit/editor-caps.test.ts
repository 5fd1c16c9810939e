// The per-file caps of inline advice: the language server analyses a file's first queries only and says
// so once, reads nothing of a file past the cap of characters and says that once, and says when a file is
// under the caps again; the extension's figures are the server's, and its sentences name the file and the cap.

import { strict as assert } from 'node:assert';
import { loadSqlParser } from '../../src/core/index';
import { CapReached, type CapReachedParams } from '../../src/protocol/languageServer';
import { DEFAULT_OPTIONS, InlineAdviceService } from '../../src/server/service';
import { capHint, capSentence, fileName, MAX_FILE_CHARACTERS, MAX_FILE_QUERIES } from '../../src/extension/caps';
import { FakePort } from './lsp-fixtures';

const sql = (count: number) => Array.from({ length: count }, (_, i) => `SELECT id FROM orders WHERE status = 's${i}';`).join('\n');

function caps(port: FakePort): CapReachedParams[] {
  return port.notifications.filter((n) => n.method === CapReached.method).map((n) => n.params as CapReachedParams);
}

describe('per-file caps of inline advice', () => {
  before(() => loadSqlParser());

  it('the extension uses the language server\'s figures', () => {
    assert.equal(MAX_FILE_CHARACTERS, DEFAULT_OPTIONS.maxTextLength);
    assert.equal(MAX_FILE_QUERIES, DEFAULT_OPTIONS.maxQueries);
  });

  it('analyses only the first queries of a file over the cap of queries, and says so once', async () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6, maxQueries: 5, explainDelayMs: 0 });
    const uri = 'file:///w/reports.sql';
    service.open(uri, 'sql', 1, sql(8));
    const explains = service.codeLenses(uri).filter((l) => l.command?.title.includes('Explain'));
    assert.equal(explains.length, 5);
    assert.deepEqual(explains.map((l) => l.range.start.line), [0, 1, 2, 3, 4]);
    assert.deepEqual(caps(port), [{ uri, cap: 'queries', limit: 5, size: 8 }]);
    assert.equal(port.logs.filter((l) => l.includes('over the cap')).length, 1);
    // An edit that keeps the file over the cap says nothing again.
    service.applyChanges(uri, 2, [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '-- edited\n' }]);
    await service.settled(uri);
    assert.equal(caps(port).length, 1);
    // Under the cap again: the client is told, and every query is analysed.
    service.applyChanges(uri, 3, [{ text: sql(3) }]);
    await service.settled(uri);
    assert.deepEqual(caps(port).at(-1), { uri, cap: null });
    assert.equal(service.codeLenses(uri).filter((l) => l.command?.title.includes('Explain')).length, 3);
  });

  it('reads nothing of a file over the cap of characters, says so once, and reads it when it is under again', async () => {
    const port = new FakePort();
    const text = sql(40);
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: text.length - 1, maxQueries: 1000, explainDelayMs: 0 });
    const uri = 'file:///w/big.sql';
    service.open(uri, 'sql', 1, text);
    assert.deepEqual(service.codeLenses(uri), []);
    assert.deepEqual(caps(port), [{ uri, cap: 'characters', limit: text.length - 1, size: text.length }]);
    service.applyChanges(uri, 2, [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: ' ' }]);
    await service.settled(uri);
    assert.equal(caps(port).length, 1);
    // The last statement removed: the whole text is read again, not only what the edits touched.
    service.applyChanges(uri, 3, [{ text: sql(39) }]);
    await service.settled(uri);
    assert.deepEqual(caps(port).at(-1), { uri, cap: null });
    assert.equal(service.codeLenses(uri).filter((l) => l.command?.title.includes('Explain')).length, 39);
  });

  it('a file under both caps is never reported', () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6, maxQueries: 10, explainDelayMs: 0 });
    service.open('file:///w/small.sql', 'sql', 1, sql(10));
    assert.deepEqual(caps(port), []);
  });

  it('the sentences name the file and the cap', () => {
    assert.equal(fileName('file:///w/src/big%20file.sql'), 'big file.sql');
    assert.match(capSentence('file:///w/a.sql', 'queries', 750, 53_000), /^a\.sql has 53,000 queries, over the cap of 750 per file: only its first 750 get inline advice/);
    assert.match(capSentence('file:///w/b.ts', 'characters', 600_000, 20_156_781), /^b\.ts has 20,156,781 characters, over the cap of 600,000 per file: it gets no inline advice/);
    assert.equal(capHint('file:///w/a.sql', 'queries', 750), '$(warning) a.sql: inline advice on the first 750 queries');
  });
});
