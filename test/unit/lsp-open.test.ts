// A document is opened with its diagnostics computed from the findings alone: without a connection's
// schema no finding's code, place or message depends on the advice, which is left for the hover, the
// lens or the code action that asks for it. These tests hold that the findings are the same either way,
// on every fixture of test/fixtures/lsp/ and the samples, with and without the schema a repository
// declares, and that what is asked for after the open is the whole analysis.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeQuery, type DocumentSchema, type QueryAnalysis } from '../../src/core/lint/analysis';
import { findQueries, loadSqlParser, querySourceKind, scriptDialect, type FoundQuery } from '../../src/core/query/find';
import { readRepositorySchema } from '../../src/core/schema/index';
import { DiagnosticCodes, type DiagnosticData } from '../../src/protocol/languageServer';
import { languageOf, LSP_FIXTURES, openFixture } from './lsp-fixtures';

const SAMPLES = join(__dirname, '..', '..', 'samples');

/** Every source the tests read: the fixtures and the samples, with their text and language. */
function sources(): { name: string; text: string; languageId: string }[] {
  const fixtures = readdirSync(LSP_FIXTURES).filter((f) => !f.endsWith('.expected.json')).map((f) => ({ name: f, text: readFileSync(join(LSP_FIXTURES, f), 'utf8') }));
  const samples = ['customers.mongodb.js', 'demoesr.mongodb.js', 'orders.mongodb.js', 'orders.sql', 'app/ordersRepository.ts', 'app/prismaOrders.ts', 'app/report.js']
    .map((f) => ({ name: f, text: readFileSync(join(SAMPLES, f), 'utf8') }));
  return [...fixtures, ...samples].map((s) => ({ ...s, languageId: languageOf(s.name) }));
}

function queriesOf(name: string, text: string, languageId: string): FoundQuery[] {
  const uri = `file:///x/${name}`;
  const kind = querySourceKind(languageId, uri);
  return findQueries(text, kind, scriptDialect(languageId, uri)).queries;
}

/** What a diagnostic is made of: code, severity, place and message. */
function published(a: QueryAnalysis) {
  return a.findings.map((f) => ({ code: f.code, severity: f.severity, anchor: f.anchor, message: f.message }));
}

describe('language server: a document opened with its findings first', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('finds the same findings without the advice as with it, on every fixture and sample', () => {
    const repo = readRepositorySchema([
      { path: 'samples/orders.sql', text: readFileSync(join(SAMPLES, 'orders.sql'), 'utf8') },
      { path: 'prisma/schema.prisma', text: readFileSync(join(SAMPLES, 'prisma', 'schema.prisma'), 'utf8') },
      { path: 'db/indexes.sql', text: 'CREATE TABLE orders (id bigint PRIMARY KEY, status text, created_at timestamptz); CREATE INDEX orders_status_idx ON orders (status);' },
    ]);
    let queries = 0;
    let findings = 0;
    for (const { name, text, languageId } of sources()) {
      for (const q of queriesOf(name, text, languageId)) {
        for (const r of [undefined, repo]) {
          const whole = analyzeQuery(q, text, undefined, r);
          const first = analyzeQuery(q, text, undefined, r, { findingsOnly: true });
          assert.deepEqual(published(first), published(whole), `${name} at ${q.range.start}`);
          assert.deepEqual(first.targets, whole.targets, `${name} at ${q.range.start}: targets`);
          assert.equal(whole.findingsOnly, undefined);
          if (first.findingsOnly) assert.equal(first.top, undefined, 'no advice was computed');
          findings += whole.findings.length;
        }
        queries++;
      }
    }
    assert.ok(queries > 40 && findings > 20, `${queries} queries, ${findings} findings read`);
  });

  it('computes the whole analysis when the document has a connection\'s schema, whose findings name the index', () => {
    const text = "db.collection('orders').find({ status: 'open' }).sort({ created_at: -1 });";
    const [q] = findQueries(text, 'script', 'js').queries;
    const schema: DocumentSchema = { connection: { mongodb: 'local' }, collections: new Map([['orders', { indexes: [{ name: '_id_', key: { _id: 1 } }] }]]), tables: new Map(), plans: new Map(), advice: new Map() };
    const a = analyzeQuery(q!, text, schema, undefined, { findingsOnly: true });
    assert.equal(a.findingsOnly, undefined);
    assert.deepEqual(a, analyzeQuery(q!, text, schema));
    assert.ok(a.findings.some((f) => f.code === DiagnosticCodes.collectionScan && /createIndex/.test(f.message)), 'the scan finding names the index to build');
  });

  it('offers on the diagnostics published at open the code actions of the whole analysis, and keeps those diagnostics', async () => {
    for (const name of ['driver.ts', 'queries.sql', 'playground.mongodb.js']) {
      const { service, port, text, uri } = openFixture(name);
      const opened = port.last(uri);
      assert.ok(opened.length > 0, name);
      const queries = queriesOf(name, text, languageOf(name));
      for (const d of opened) {
        const data = d.data as DiagnosticData;
        const q = queries.find((x) => x.range.start === data.query.start && x.range.end === data.query.end)!;
        const f = analyzeQuery(q, text, undefined).findings.find((x) => x.code === data.code && x.message === d.message);
        assert.ok(f, `${name}: ${String(d.code)} is a finding of the whole analysis`);
        const titles = service.codeActions({ textDocument: { uri }, range: d.range, context: { diagnostics: [d] } }).filter((a) => a.kind === 'quickfix').map((a) => a.title);
        const expected = [
          f.fix?.title,
          f.suggestion ? `Copy ${q.engine === 'mongodb' ? 'createIndex' : 'CREATE INDEX'}: ${f.suggestion.createText}` : undefined,
          f.suggestion ? 'Create index...' : undefined,
          f.rewriteText && !f.fix ? 'Copy the rewritten query' : undefined,
        ].filter((t): t is string => t !== undefined);
        assert.deepEqual(titles, expected, `${name}: the code actions of ${String(d.code)}`);
      }
      // The lenses ask for every query's whole analysis; an edit after the last query then publishes the
      // diagnostics it kept, unchanged.
      assert.ok(service.codeLenses(uri).length >= queries.length);
      service.change(uri, 2, `${text}\n`);
      await service.settled(uri);
      assert.deepEqual(port.last(uri), opened, name);
    }
  });
});
