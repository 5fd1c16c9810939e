// A statement is parsed once for the readers that read it in turn (the finder, the findings, the advice):
// they share its tree, so none may change it. Every fixture and sample is opened and every query's hover,
// lens and code actions asked for; then each statement's shared tree must still equal a fresh parse.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSync } from 'libpg-query';
import { parseSqlSync } from '../../src/core/sql/parser';
import { findQueries, loadSqlParser, querySourceKind, scriptDialect, type FoundSqlQuery } from '../../src/core/query/find';
import { InlineAdviceService } from '../../src/server/service';
import { FakePort, languageOf, LSP_FIXTURES } from './lsp-fixtures';

const SAMPLES = join(__dirname, '..', '..', 'samples');

describe('SQL parse trees shared by the readers of a statement', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('are the same tree for each reader, and no reader changes it', () => {
    const files = [
      ...readdirSync(LSP_FIXTURES).filter((f) => !f.endsWith('.expected.json')).map((f) => join(LSP_FIXTURES, f)),
      ...['orders.sql', 'app/ordersRepository.ts', 'app/prismaOrders.ts', 'app/report.js'].map((f) => join(SAMPLES, f)),
    ];
    let statements = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const uri = `file://${file}`;
      const service = new InlineAdviceService(new FakePort(), { debounceMs: 0, codeLens: true, maxTextLength: 4_000_000, explainDelayMs: 0 });
      service.open(uri, languageOf(file), 1, text);
      service.codeLenses(uri);
      const sql = service.listQueries(uri).filter((q) => q.engine === 'postgres');
      for (const q of sql) {
        const position = { line: text.slice(0, q.start).split('\n').length - 1, character: q.start - (text.lastIndexOf('\n', q.start - 1) + 1) };
        service.hover(uri, position);
        service.codeActions({ textDocument: { uri }, range: { start: position, end: position }, context: { diagnostics: [] } });
      }
      // The texts the readers parsed: each query's SQL as the finder wrote it.
      const kind = querySourceKind(languageOf(file), uri);
      const found = findQueries(text, kind, scriptDialect(languageOf(file), uri)).queries.filter((q): q is FoundSqlQuery => q.engine === 'postgres');
      assert.equal(found.length, sql.length, file);
      for (const q of found) {
        let tree: unknown;
        try {
          tree = parseSqlSync(q.sql);
        } catch {
          continue;
        }
        assert.equal(parseSqlSync(q.sql), tree, 'one tree for every reader');
        assert.deepEqual(tree, parseSync(q.sql), `${file}: the tree of ${q.sql.slice(0, 60)} as parsed`);
        statements++;
      }
    }
    assert.ok(statements > 15, `${statements} statements checked`);
  });
});
