// The skip-to-keyset quick fix produces code that compiles: the last value it compares with is declared
// (the enclosing function's parameter, or a constant before a top-level statement), proved by type-checking
// the fixed file with the TypeScript compiler against the MongoDB driver's own types; and Explain on the
// fixed query asks for that value and explains the query with it.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import ts from 'typescript';
import type { CodeAction, TextEdit } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { fillExplainValues } from '../../src/core/index';
import { parseMongoQuery } from '../../src/core/query/mongoShell';
import { explainTargets } from '../../src/core/query/targets';
import { loadSqlParser } from '../../src/core/sql/index';
import { DiagnosticCodes } from '../../src/protocol/languageServer';
import { InlineAdviceService } from '../../src/server/service';
import { FakePort } from './lsp-fixtures';

/** Type errors of a TypeScript text, checked strictly as a module beside the project's node_modules. */
function typeErrors(text: string): string[] {
  const file = join(process.cwd(), 'test', 'unit', '__keyset_fixture.ts');
  const options: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => (name === file ? ts.createSourceFile(name, text, lang) : getSourceFile(name, lang, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).filter((d) => d.file?.fileName === file).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

function fix(service: InlineAdviceService, port: FakePort, uri: string): { title: string; edits: TextEdit[] } {
  const d = port.last(uri).find((x) => x.code === DiagnosticCodes.skipPagination);
  assert.ok(d, 'no skip-pagination diagnostic');
  const actions: CodeAction[] = service.codeActions({ textDocument: { uri }, range: d.range, context: { diagnostics: [d] } });
  const a = actions.find((x) => x.title.startsWith('Rewrite to keyset pagination'));
  assert.ok(a, `no keyset fix among ${actions.map((x) => x.title).join(' | ')}`);
  return { title: a.title, edits: (a.edit!.documentChanges![0] as { edits: TextEdit[] }).edits };
}

function apply(text: string, edits: TextEdit[]): string {
  return TextDocument.applyEdits(TextDocument.create('file:///x', 'x', 1, text), edits);
}

const SERVICE = [
  "import { MongoClient } from 'mongodb';",
  '',
  "const db = new MongoClient('mongodb://localhost').db('shop');",
  '',
  'export async function openOrders(customerId: string, page: number) {',
  "  return db.collection('orders').find({ customerId, status: 'open' }).sort({ createdAt: -1 }).skip(page * 20).limit(20).toArray();",
  '}',
  '',
  'export const recent = (tenant = "a") =>',
  "  db.collection('orders').find({ tenant }).sort({ placedAt: 1 }).skip(100).limit(10).toArray();",
  '',
].join('\n');

describe('language server: the keyset quick fix compiles', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('type-checks the fixture before the fix (the check can fail: an undeclared name is an error)', () => {
    assert.deepEqual(typeErrors(SERVICE), []);
    assert.match(typeErrors(`${SERVICE}\nexport const x = lastCreatedAt;\n`).join(' '), /Cannot find name 'lastCreatedAt'/);
  });

  it('adds the last value as a parameter of the enclosing function, and the fixed file type-checks', async () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
    const uri = 'file:///app/orders.ts';
    service.open(uri, 'typescript', 1, SERVICE);
    const first = fix(service, port, uri);
    assert.equal(first.title, 'Rewrite to keyset pagination (after lastCreatedAt)');
    const once = apply(SERVICE, first.edits);
    assert.ok(once.includes('export async function openOrders(customerId: string, page: number, lastCreatedAt: unknown) {'), once);
    assert.ok(once.includes("find({ customerId, status: 'open', createdAt: { $lt: lastCreatedAt } }).sort({ createdAt: -1 }).limit(20)"), once);
    assert.deepEqual(typeErrors(once), []);

    // The second query: an arrow function whose parameter has a default, so the new one is optional.
    service.change(uri, 2, once);
    await service.settled(uri);
    const twice = apply(once, fix(service, port, uri).edits);
    assert.ok(twice.includes('export const recent = (tenant = "a", lastPlacedAt?: unknown) =>'), twice);
    assert.deepEqual(typeErrors(twice), []);
  });

  it('sends the declaration as a snippet with a tab stop on the type when the client applies snippet edits', () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6, snippets: true });
    const uri = 'file:///app/orders.ts';
    service.open(uri, 'typescript', 1, SERVICE);
    const edits = fix(service, port, uri).edits as unknown as ({ snippet?: { kind: string; value: string } } & Partial<TextEdit>)[];
    assert.deepEqual(edits[0]!.snippet, { kind: 'snippet', value: ', lastCreatedAt: ${1:unknown}' });
    assert.ok(edits.slice(1).every((e) => typeof e.newText === 'string'));
  });

  it('declares the last value before a top-level playground statement, which Explain asks for', () => {
    const text = "use('shop');\ndb.orders.find({ country_id: 2 }).sort({ created_at: -1 }).skip(5000).limit(20);\n";
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
    const uri = 'file:///app/page.mongodb.js';
    service.open(uri, 'javascript', 1, text);
    const fixed = apply(text, fix(service, port, uri).edits);
    assert.equal(fixed, "use('shop');\nlet lastCreatedAt; // the created_at of the last document of the previous page\ndb.orders.find({ country_id: 2, created_at: { $lt: lastCreatedAt } }).sort({ created_at: -1 }).limit(20);\n");
    const [target] = explainTargets(fixed, 'mongodb-playground');
    assert.deepEqual(target!.values?.names, ['lastCreatedAt']);
    assert.equal(fillExplainValues(target!.values!, ['ISODate("2024-01-10T00:00:00Z")']), 'db.orders.find({country_id: 2, created_at: {$lt: (ISODate("2024-01-10T00:00:00Z"))}}).sort({created_at: -1}).limit(20)');
  });

  it('Explain on the fixed query asks for the last value and explains the query with it', () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6 });
    const uri = 'file:///app/orders.ts';
    service.open(uri, 'typescript', 1, SERVICE);
    const fixed = apply(SERVICE, fix(service, port, uri).edits);
    const target = explainTargets(fixed, 'script', 'ts')[0]!;
    assert.match(target.problem ?? '', /values from the code \(customerId, lastCreatedAt\).*Explain asks for their values/);
    assert.deepEqual(target.values?.names, ['customerId', 'lastCreatedAt']);
    const text = fillExplainValues(target.values!, ['"c42"', 'ISODate("2024-01-31T00:00:00Z")']);
    assert.equal(text, 'db.getSiblingDB("shop").orders.find({customerId: ("c42"), status: "open", createdAt: {$lt: (ISODate("2024-01-31T00:00:00Z"))}}).sort({createdAt: -1}).limit(20)');
    const parsed = parseMongoQuery(text);
    assert.ok(parsed.ok, text);
    assert.deepEqual(parsed.command.filter, { customerId: 'c42', status: 'open', createdAt: { $lt: { $date: '2024-01-31T00:00:00Z' } } });
    service.change(uri, 2, fixed);
    return service.settled(uri).then(() => {
      const lens = service.codeLenses(uri).find((l) => l.command?.title.includes('Explain'));
      assert.equal(lens?.command?.title, '$(debug-start) Explain (asks for values)');
    });
  });

  it('never writes SQL back over a template whose text has a part chosen at run time: it offers the rewritten query to copy', async () => {
    const port = new FakePort();
    const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 4_000_000 });
    const uri = 'file:///ws/pages.ts';
    const plain = "pool.query(`SELECT * FROM orders WHERE status = 'open' ORDER BY id LIMIT 20 OFFSET 10000`);";
    const chosen = "pool.query(`SELECT * FROM orders WHERE status = 'open' ${mine ? 'AND owner = 1' : ''} ORDER BY id LIMIT 20 OFFSET 10000`);";
    const titles = async (call: string, version: number) => {
      const text = `import { Pool } from 'pg';\nconst pool = new Pool();\nexport const page = (mine: boolean) => ${call}\n`;
      if (version === 1) service.open(uri, 'typescript', 1, text);
      else service.change(uri, version, text);
      await service.settled(uri);
      const d = port.last(uri).find((x) => x.code === DiagnosticCodes.skipPagination);
      assert.ok(d, 'no skip-pagination diagnostic');
      const actions: CodeAction[] = service.codeActions({ textDocument: { uri }, range: d.range, context: { diagnostics: [d] } });
      return actions.map((a) => a.title);
    };
    assert.ok((await titles(plain, 1)).includes('Rewrite to keyset pagination'));
    const offered = await titles(chosen, 2);
    assert.ok(!offered.some((t) => t.startsWith('Rewrite to keyset pagination')), offered.join(' | '));
    assert.ok(offered.includes('Copy the rewritten query'), offered.join(' | '));
    // A part read as the first of the constants the file writes for it is chosen at run time too.
    const either = "pool.query(`SELECT * FROM orders WHERE status = 'open' ORDER BY id ${mine ? 'ASC' : 'DESC'} LIMIT 20 OFFSET 10000`);";
    const offeredEither = await titles(either, 3);
    assert.ok(!offeredEither.some((t) => t.startsWith('Rewrite to keyset pagination')), offeredEither.join(' | '));
    assert.ok(offeredEither.includes('Copy the rewritten query'), offeredEither.join(' | '));
  });

  it('asks for the $n parameters of SQL and puts the literals in their place', () => {
    const [target] = explainTargets('SELECT id FROM orders WHERE status = $1 AND created_at < $2 ORDER BY created_at DESC LIMIT 20;', 'sql');
    assert.deepEqual(target!.values?.names, ['$1', '$2']);
    assert.equal(fillExplainValues(target!.values!, ["'open'", "now() - interval '1 day'"]), "SELECT id FROM orders WHERE status = ('open') AND created_at < (now() - interval '1 day') ORDER BY created_at DESC LIMIT 20");
  });
});
