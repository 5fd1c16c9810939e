// The language server's handlers driven through a fake connection: diagnostics per fixture (codes and
// ranges), hovers, code actions whose edits are applied and re-analysed, the schema messages with the
// extension, and debouncing.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CodeAction, Diagnostic, TextEdit } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { parseMongoQuery } from '../../src/core/query/mongoShell';
import { findQueries, loadSqlParser, type FoundMongoQuery } from '../../src/core/query/find';
import { ClientCommands, DiagnosticCodes, ExplainWanted, SchemaNeeded, type DiagnosticData, type InlineExplainArgs } from '../../src/protocol/languageServer';
import { loadPlan } from '../../src/core/load';
import { summarize } from '../../src/extension/planSummary';
import { explainText } from '../../src/core/lint/explainText';
import { InlineAdviceService } from '../../src/server/service';
import { describeDiagnostics, FakePort, languageOf, LSP_FIXTURES, openFixture, type DescribedDiagnostic } from './lsp-fixtures';

const SOURCES = readdirSync(LSP_FIXTURES).filter((f) => !f.endsWith('.expected.json')).sort();

function codes(ds: Diagnostic[]): string[] {
  return ds.map((d) => String(d.code));
}

function hoverText(service: InlineAdviceService, uri: string, text: string, needle: string): string {
  const doc = TextDocument.create(uri, 'x', 1, text);
  const h = service.hover(uri, doc.positionAt(text.indexOf(needle)));
  assert.ok(h, `no hover at ${needle}`);
  return (h.contents as { value: string }).value;
}

function actionsFor(service: InlineAdviceService, uri: string, d: Diagnostic): CodeAction[] {
  return service.codeActions({ textDocument: { uri }, range: d.range, context: { diagnostics: [d] } });
}

function applyEdits(text: string, edits: TextEdit[]): string {
  const doc = TextDocument.create('file:///x', 'x', 1, text);
  return TextDocument.applyEdits(doc, edits);
}

function fixOf(actions: CodeAction[], title: RegExp): TextEdit[] {
  const a = actions.find((x) => title.test(x.title));
  assert.ok(a, `no action ${title} among ${actions.map((x) => x.title).join(' | ')}`);
  const change = a.edit?.documentChanges?.[0] as { edits: TextEdit[] } | undefined;
  assert.ok(change, `${a.title} has no edit`);
  return change.edits;
}

describe('language server: handlers', () => {
  before(async () => {
    await loadSqlParser();
  });

  for (const name of SOURCES) {
    it(`publishes the expected diagnostics for ${name}`, () => {
      const { port, text, uri } = openFixture(name);
      const expected = JSON.parse(readFileSync(join(LSP_FIXTURES, `${name}.expected.json`), 'utf8')) as { diagnostics: DescribedDiagnostic[] };
      const got = port.last(uri);
      assert.deepEqual(describeDiagnostics(text, got), expected.diagnostics);
      for (const d of got) {
        const data = d.data as DiagnosticData;
        assert.equal(data.code, d.code, 'data repeats the code');
        assert.deepEqual(Object.keys(data).sort(), ['code', 'query'], 'data carries only what finds the finding again');
        assert.equal(d.source, 'Query Plan Inspector');
        assert.match(String(d.message), /[.!]$/, 'messages are sentences');
      }
    });
  }

  it('hovers with each field classified and the index key order the query wants', () => {
    const { service, uri, text } = openFixture('playground.mongodb.js');
    const h = hoverText(service, uri, text, 'db.orders.find({ country_id: 1');
    assert.match(h, /\| `country_id` \| equality \(=\) \|/);
    assert.match(h, /\| `order_details\.product_id` \| equality \(=\) \|/);
    assert.match(h, /\| `created_at` \| sort descending \|/);
    assert.match(h, /Index it wants.*`\{ country_id: 1, order_details\.product_id: 1, created_at: -1 \}`/);
    assert.match(h, /db\.orders\.createIndex\(/);
  });

  it('hovers an $in as exploded for the sort up to 200 values, and as a range above', () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
    const many = Array.from({ length: 201 }, (_, i) => i).join(', ');
    const text = `db.c.find({ e: 42, r: { $in: [10, 30] } }).sort({ s: 1 });\ndb.c.find({ e: 42, r: { $in: [${many}] } }).sort({ s: 1 });\n`;
    service.open('file:///in.mongodb.js', 'javascript', 1, text);
    const small = hoverText(service, 'file:///in.mongodb.js', text, 'db.c.find({ e: 42, r: { $in: [10');
    assert.match(small, /`r` \| \$in of 2 values, exploded for the sort: counts as equality/);
    assert.match(small, /\{ e: 1, r: 1, s: 1 \}/);
    const big = hoverText(service, 'file:///in.mongodb.js', text, `db.c.find({ e: 42, r: { $in: [0`);
    assert.match(big, /`r` \| \$in of 201 values, over 200: placed like a range/);
    assert.match(big, /\{ e: 1, s: 1, r: 1 \}/);
    assert.deepEqual(codes(port.last('file:///in.mongodb.js')), [DiagnosticCodes.inTooLargeForSort]);
  });

  it('moves the $match before the $project, and the diagnostic goes away', () => {
    const { service, port, uri, text } = openFixture('driver.ts');
    const d = port.last(uri).find((x) => x.code === DiagnosticCodes.matchAfterRename)!;
    const edits = fixOf(actionsFor(service, uri, d), /^Move \$match before \$project$/);
    const fixed = applyEdits(text, edits);
    assert.ok(fixed.includes("    { $match: { 'contact.email': 'ann@example.com' } },\n    { $project: { email: '$contact.email', total: 1 } },\n  ];"), fixed.slice(fixed.indexOf('const pipeline'), fixed.indexOf('return db.collection')));
    service.change(uri, 2, fixed);
    return service.settled(uri).then(() => {
      assert.ok(!codes(port.last(uri)).includes(DiagnosticCodes.matchAfterRename));
    });
  });

  it('rewrites skip() to keyset pagination on the sort key', async () => {
    const { service, port, uri, text } = openFixture('playground.mongodb.js');
    const d = port.last(uri).find((x) => x.code === DiagnosticCodes.skipPagination)!;
    const edits = fixOf(actionsFor(service, uri, d), /^Rewrite to keyset pagination/);
    const fixed = applyEdits(text, edits);
    assert.ok(fixed.includes('db.orders.find({ country_id: 2, created_at: { $lt: lastCreatedAt } }).sort({ created_at: -1 }).limit(20);'), fixed);
    service.change(uri, 2, fixed);
    await service.settled(uri);
    assert.ok(!codes(port.last(uri)).includes(DiagnosticCodes.skipPagination));
  });

  it('rewrites OFFSET to keyset pagination in a .sql file', async () => {
    const { service, port, uri, text } = openFixture('queries.sql');
    const d = port.last(uri).find((x) => x.code === DiagnosticCodes.skipPagination)!;
    const edits = fixOf(actionsFor(service, uri, d), /^Rewrite to keyset pagination$/);
    const fixed = applyEdits(text, edits);
    assert.ok(!/OFFSET 2000/.test(fixed));
    assert.match(fixed, /WHERE email LIKE '%@example\.com'[\s\S]*\bid > \$1[\s\S]*ORDER BY id[\s\S]*LIMIT 20/);
    service.change(uri, 2, fixed);
    await service.settled(uri);
    assert.ok(!codes(port.last(uri)).includes(DiagnosticCodes.skipPagination));
  });

  it('offers Explain, Copy and Create index for a query, with the arguments the extension commands take', () => {
    const { service, uri, text } = openFixture('playground.mongodb.js');
    const doc = TextDocument.create(uri, 'javascript', 1, text);
    const at = doc.positionAt(text.indexOf('db.orders.find({ country_id: 1'));
    const actions = service.codeActions({ textDocument: { uri }, range: { start: at, end: at }, context: { diagnostics: [] } });
    const explain = actions.find((a) => a.title === 'Explain this query')!;
    assert.equal(explain.command?.command, ClientCommands.explainInline);
    const args = explain.command!.arguments![0] as InlineExplainArgs;
    assert.equal(text.slice(args.start, args.end), 'db.orders.find({ country_id: 1, order_details: { $elemMatch: { product_id: 5 } } }).sort({ created_at: -1 }).limit(10)');
    assert.equal(args.text, 'db.orders.find({country_id: 1, order_details: {$elemMatch: {product_id: 5}}}).sort({created_at: -1}).limit(10)');
    const copy = actions.find((a) => a.title.startsWith('Copy createIndex'))!;
    assert.deepEqual(copy.command!.arguments, [{ text: 'db.orders.createIndex({country_id: 1, "order_details.product_id": 1, created_at: -1})', what: 'The createIndex command' }]);
    const create = actions.find((a) => a.title === 'Create index...')!;
    assert.equal(create.command!.command, ClientCommands.createIndex);
    const lenses = service.codeLenses(uri);
    assert.equal(lenses.length, 10);
    assert.equal(lenses.filter((l) => l.command?.title === '$(lightbulb) Suggest index (rules)').length, 5);
    assert.equal(lenses.filter((l) => l.command?.command === ClientCommands.explainInline).length, 5);
  });

  it('gives Explain the shell text of driver calls, constants resolved, and refuses values from the code', () => {
    const text = readFileSync(join(LSP_FIXTURES, 'driver.ts'), 'utf8');
    const qs = findQueries(text, 'script', 'ts').queries as FoundMongoQuery[];
    const byOp = (op: string) => qs.find((q) => q.command.operation === op)!;
    const agg = explainText(byOp('aggregate'));
    assert.deepEqual(agg, { ok: true, text: 'db.getSiblingDB("shop").customers.aggregate([{$project: {email: "$contact.email", total: 1}}, {$match: {email: "ann@example.com"}}])' });
    for (const q of [byOp('aggregate'), byOp('updateMany'), byOp('countDocuments'), qs[2]!]) {
      const t = explainText(q);
      assert.ok(t.ok, JSON.stringify(t));
      const back = parseMongoQuery(t.text);
      assert.ok(back.ok, t.text);
      assert.deepEqual([back.command.database, back.command.collection, back.command.operation, back.command.filter ?? {}, back.command.pipeline, back.command.update],
        [q.command.database, q.command.collection, q.command.operation, q.command.filter ?? {}, q.command.pipeline, q.command.update]);
    }
    const page = explainText(qs[0]!);
    assert.equal(page.ok, false);
    assert.match(!page.ok ? page.problem : '', /values from the code \(customerId, skip, limit\)/);
  });

  it('offers an edit from a diagnostic of an older version only where its query still stands', async () => {
    const { service, port, uri, text } = openFixture('playground.mongodb.js');
    const d = port.last(uri).find((x) => x.code === DiagnosticCodes.skipPagination)!;
    // An edit after the query leaves it where it was: the fix is built for the current version.
    service.change(uri, 2, `${text}\n// edited\n`);
    await service.settled(uri);
    const kept = actionsFor(service, uri, d).filter((a) => a.edit !== undefined);
    assert.equal(kept.length, 1);
    const change = kept[0]!.edit!.documentChanges![0] as { textDocument: { version: number } };
    assert.equal(change.textDocument.version, 2);
    // A line added above it moves the query: the old diagnostic finds nothing there.
    service.change(uri, 3, `// edited\n${text}\n// edited\n`);
    await service.settled(uri);
    assert.deepEqual(actionsFor(service, uri, d), []);
  });

  it('asks the extension for the schema of the collections a document uses, and advises with it', async () => {
    const { service, port, uri } = openFixture('driver.ts');
    const need = port.sent(SchemaNeeded);
    assert.equal(need.length, 1);
    assert.deepEqual(need[0]!.mongodb, [{ collection: 'orders', database: 'shop' }, { collection: 'customers', database: 'shop' }]);
    const base = codes(port.last(uri));

    // Only _id: the customer filter scans the collection and the sort is done in memory.
    let r = service.setSchema({ uris: [uri], engine: 'mongodb', connectionName: 'Local', collections: [{ name: 'orders', database: 'shop', indexes: [{ name: '_id_', key: { _id: 1 } }] }] });
    assert.ok(r.advised >= 5, `advised ${r.advised}`);
    let ds = port.last(uri);
    const page = ds.filter((d) => d.range.start.line === 12);
    assert.deepEqual(codes(page).sort(), [DiagnosticCodes.blockingSort, DiagnosticCodes.collectionScan, DiagnosticCodes.skipPagination].sort());
    const scan = page.find((d) => d.code === DiagnosticCodes.collectionScan)!;
    assert.match(String(scan.message), /No index on orders supports this filter on Local/);
    const scanActions = service.codeActions({ textDocument: { uri }, range: scan.range, context: { diagnostics: [scan] } });
    assert.ok(scanActions.some((a) => a.title === 'Copy createIndex: db.orders.createIndex({customer_id: 1, status: 1, created_at: -1})'), scanActions.map((a) => a.title).join(' | '));

    // With the index it wants, the query is served.
    r = service.setSchema({ uris: [uri], engine: 'mongodb', connectionName: 'Local', collections: [{ name: 'orders', indexes: [{ name: '_id_', key: { _id: 1 } }, { name: 'cust_status_created', key: { customer_id: 1, status: 1, created_at: -1 } }] }] });
    ds = port.last(uri);
    const served = ds.filter((d) => d.range.start.line === 12);
    assert.deepEqual(codes(served).sort(), [DiagnosticCodes.indexServes, DiagnosticCodes.skipPagination].sort());
    assert.match(String(served.find((d) => d.code === DiagnosticCodes.indexServes)!.message), /^Index cust_status_created serves this query on Local/);

    service.clearSchema({});
    assert.deepEqual(codes(port.last(uri)), base);
  });

  it('says when no PostgreSQL index supports a filter or gives the order', () => {
    const { service, port, uri } = openFixture('queries.sql');
    const need = port.sent(SchemaNeeded);
    assert.deepEqual(need[0]!.postgres, [{ table: 'orders' }]);
    service.setSchema({ uris: [uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [{ name: 'orders_pkey', table: 'orders', columns: [{ column: 'id' }], primary: true, unique: true }] }] });
    const first = port.last(uri).filter((d) => d.range.start.line === 3);
    assert.deepEqual(codes(first).sort(), [DiagnosticCodes.blockingSort, DiagnosticCodes.collectionScan].sort());
    service.setSchema({ uris: [uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [{ name: 'orders_cust_created', table: 'orders', columns: [{ column: 'customer_id' }, { column: 'created_at', desc: true }] }] }] });
    assert.deepEqual(codes(port.last(uri).filter((d) => d.range.start.line === 3)), [DiagnosticCodes.indexServes]);
  });

  it('names the index a function hides, and is quiet when an expression index serves it', () => {
    const { service, port, uri } = openFixture('queries.sql');
    const onLine = (line: number) => port.last(uri).filter((d) => d.range.start.line === line && d.code === DiagnosticCodes.functionOnColumn);
    service.setSchema({ uris: [uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [{ name: 'orders_email', table: 'orders', columns: [{ column: 'email' }] }] }] });
    assert.match(String(onLine(5)[0]?.message), /^lower\(email\) wraps email in a function or cast, so the index orders_email on it cannot be used/);
    service.setSchema({ uris: [uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [{ name: 'orders_lower_email', table: 'orders', columns: [{ expression: 'lower(email)' }] }] }] });
    assert.deepEqual(onLine(5), []);
    assert.equal(onLine(13).length, 1, 'created_at::date is still reported');
  });

  it('asks for background explains once edits pause, within a budget, and shows the server\'s plan', async () => {
    const { service, port, uri, text } = openFixture('driver.ts', { explainDelayMs: 5, explainsPerMinute: 8 });
    await service.explainsSettled(uri);
    assert.equal(port.sent(ExplainWanted).length, 0, 'no connection, no explain');
    service.setSchema({ uris: [uri], engine: 'mongodb', connectionName: 'Local', collections: [{ name: 'orders', indexes: [{ name: '_id_', key: { _id: 1 } }] }] });
    await service.explainsSettled(uri);
    const wanted = port.sent(ExplainWanted);
    assert.equal(wanted.length, 1, 'one request once the indexes came');
    const asked = wanted[0]!;
    // The five queries written with literal values; the three with values from the code are not asked for.
    assert.deepEqual(asked.queries.map((q) => /\.(\w+)\(/.exec(q.text.replace('db.getSiblingDB("shop").', ''))![1]), ['find', 'aggregate', 'find', 'updateMany', 'countDocuments']);
    const update = asked.queries.find((q) => q.text.includes('updateMany'))!;
    assert.ok(update, asked.queries.map((q) => q.text).join('\n'));
    const line = (needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length - 1;
    const before = port.last(uri).filter((d) => d.range.start.line === line('orders.updateMany'));
    assert.deepEqual(codes(before), [DiagnosticCodes.collectionScan], 'from the index lists first');
    service.setPlans({ uris: [uri], connectionName: 'Local', plans: [{ engine: 'mongodb', text: update.text, summary: { stages: ['UPDATE', 'COLLSCAN'], fullScan: 'orders', blockingSort: false, indexes: [] } }] });
    const after = port.last(uri).filter((d) => d.range.start.line === line('orders.updateMany'));
    assert.deepEqual(codes(after), [DiagnosticCodes.planFullScan], 'the plan replaces what the index lists suggested');
    assert.match(String(after[0]!.message), /^The plan Local chose reads the whole orders collection \(UPDATE > COLLSCAN, queryPlanner\)/);
    const again = port.sent(ExplainWanted).length;
    service.change(uri, 2, `${text}\n`);
    await service.explainsSettled(uri);
    assert.equal(port.sent(ExplainWanted).length, again, 'each text is explained once');

    const small = openFixture('driver.ts', { explainDelayMs: 5, explainsPerMinute: 2 });
    small.service.setSchema({ uris: [small.uri], engine: 'mongodb', connectionName: 'Local', collections: [] });
    await small.service.explainsSettled(small.uri);
    const first = small.port.sent(ExplainWanted).map((n) => n.queries.length);
    assert.deepEqual(first, [2], 'two per minute');
    // An invalidation (Create Index, another connection, Refresh) asks again at once, whatever this
    // minute's budget has left: the lens and the squiggles must follow the server.
    for (let round = 0; round < 3; round++) {
      small.service.clearSchema({});
      small.service.setSchema({ uris: [small.uri], engine: 'mongodb', connectionName: 'Local', collections: [] });
      await small.service.explainsSettled(small.uri);
    }
    const rounds = small.port.sent(ExplainWanted).map((n) => n.queries.length);
    assert.deepEqual(rounds, [2, 2, 2, 2], 'asked again after each invalidation');
  });

  it('summarizes real plans for the server: full scans, in-memory sorts, indexes', () => {
    const read = (name: string) => {
      const r = loadPlan(readFileSync(join(__dirname, '..', 'fixtures', 'corpus', name), 'utf8'));
      assert.ok(r.ok, name);
      return summarize(r.plan);
    };
    const collscan = read('mongo-find-collscan-empty-filter-allplans-5.0.json');
    assert.ok(collscan.fullScan, JSON.stringify(collscan));
    assert.ok(collscan.stages.includes('COLLSCAN'));
    const ix = read('mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json');
    assert.equal(ix.fullScan, undefined);
    assert.equal(ix.blockingSort, false);
    assert.ok(ix.indexes.length > 0, JSON.stringify(ix));
    const pg = read('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json');
    assert.ok(pg.fullScan, JSON.stringify(pg));
    assert.equal(pg.blockingSort, true);
  });

  it('an open reported again as a change is not analysed twice', async () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 10_000, codeLens: true, maxTextLength: 1e6 });
    const uri = 'file:///opened.mongodb.js';
    const text = 'db.c.find({ a: /x/ });\n';
    service.open(uri, 'javascript', 1, text);
    assert.equal(port.published.length, 1);
    // What the LSP document manager sends right after an open: the same version and text.
    service.change(uri, 1, text);
    await service.settled(uri);
    assert.equal(port.published.length, 1, 'the same text was analysed again');
  });

  it('folds a burst of edits into few analyses and ends on the last text', async () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 40, codeLens: true, maxTextLength: 1e6 });
    const uri = 'file:///burst.mongodb.js';
    service.open(uri, 'javascript', 1, 'db.c.find({ a: /x/ });\n');
    const before = port.published.length;
    for (let v = 2; v <= 11; v++) service.change(uri, v, `db.c.find({ a: /x/ });\n${'db.c.find({ b: 1 }).skip(5);\n'.repeat(v - 1)}`);
    await service.settled(uri);
    const runs = port.published.length - before;
    assert.ok(runs >= 1 && runs <= 2, `${runs} analyses for 10 edits`);
    const last = port.published.at(-1)!;
    assert.equal(last.version, 11);
    assert.equal(last.diagnostics.filter((d) => d.code === DiagnosticCodes.skipPagination).length, 10);
  });

  it('clears the diagnostics of a closed document and ignores other languages', () => {
    const { service, port, uri } = openFixture('driver.ts');
    service.close(uri);
    assert.deepEqual(port.published.at(-1), { uri, diagnostics: [] });
    service.open('file:///notes.md', 'markdown', 1, 'db.c.find({ a: /x/ })');
    assert.equal(port.published.at(-1)!.uri, uri);
    assert.equal(languageOf('x.sql'), 'sql');
  });
});
