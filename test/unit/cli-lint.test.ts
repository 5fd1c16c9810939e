// `qpi lint` through the CLI's entry: source files written here as a user's repository would hold them,
// the findings printed with line and column, the JSON document, folders walked past node_modules, and the
// exit codes (0, 2 for an unreadable file, 3 with --fail-on-warning, 64 for usage).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main';
import { captureIo } from './cli-io';

const capture = () => captureIo();

describe('qpi lint', function () {
  this.timeout(20_000);
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'qpi-lint-'));
    writeFileSync(join(dir, 'pages.sql'), 'SELECT id FROM orders WHERE customer_id = 7;\n\nSELECT id FROM orders ORDER BY created_at DESC OFFSET 5000 LIMIT 20;\n');
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'repo.ts'), [
      "import { MongoClient } from 'mongodb';",
      "const db = new MongoClient('mongodb://localhost').db('shop');",
      'export function page() {',
      "  return db.collection('orders').find({ status: 'open' }).sort({ created_at: -1 }).skip(2000).limit(20).toArray();",
      '}',
      '',
    ].join('\n'));
    writeFileSync(join(dir, 'src', 'clean.ts'), "export const nothing = 'SELECT';\n");
    mkdirSync(join(dir, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', 'dep', 'index.js'), "db.orders.find({}).skip(100);\n");
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints each finding with its file, line and column, and a summary on stderr', async () => {
    const io = capture();
    const file = join(dir, 'pages.sql');
    assert.equal(await run(['lint', file], io), 0);
    const lines = io.out.trim().split('\n');
    assert.equal(lines.length, 1, io.out);
    assert.ok(lines[0]!.startsWith(`${file}:3:`), lines[0]);
    assert.match(lines[0]!, / warning qpi\.skip-pagination OFFSET 5000 still reads and throws away the rows it skips/);
    assert.equal(io.err, '1 file, 2 queries, 1 finding (without a database: the rules that hold whatever the data).\n');
  });

  it('walks a folder for the files the finder reads, never into node_modules', async () => {
    const io = capture();
    assert.equal(await run(['lint', dir], io), 0);
    const files = io.out.trim().split('\n').map((l) => l.slice(0, l.indexOf(':')));
    assert.deepEqual(files, [join(dir, 'pages.sql'), join(dir, 'src', 'repo.ts')]);
    assert.match(io.out, /repo\.ts:4:\d+ warning qpi\.skip-pagination skip\(2000\)/);
    assert.match(io.err, /^3 files, /);
  });

  it('writes one JSON document with --json', async () => {
    const io = capture();
    assert.equal(await run(['lint', join(dir, 'src'), '--json'], io), 0);
    const doc = JSON.parse(io.out) as { files: { file: string; queries: number; findings: { line: number; code: string; severity: string }[] }[] };
    assert.deepEqual(doc.files.map((f) => [f.file.slice(dir.length), f.queries]), [['/src/clean.ts', 0], ['/src/repo.ts', 1]]);
    assert.deepEqual(doc.files[1]!.findings.map((f) => [f.line, f.code, f.severity]), [[4, 'qpi.skip-pagination', 'warning']]);
  });

  it('exits 3 with --fail-on-warning when a warning is found, 0 when none is', async () => {
    assert.equal(await run(['lint', join(dir, 'pages.sql'), '--fail-on-warning'], capture()), 3);
    assert.equal(await run(['lint', join(dir, 'src', 'clean.ts'), '--fail-on-warning'], capture()), 0);
  });

  it('says in one sentence which file it cannot read, and exits 2', async () => {
    const io = capture();
    assert.equal(await run(['lint', join(dir, 'missing.sql')], io), 2);
    assert.match(io.err, /^There is no file .*missing\.sql\.\n/);
  });

  it('writes Prisma calls with the tables and columns of the nearest schema.prisma above the file, or of --schema', async () => {
    const app = join(dir, 'prisma-app');
    mkdirSync(join(app, 'prisma'), { recursive: true });
    mkdirSync(join(app, 'src', 'orders'), { recursive: true });
    writeFileSync(join(app, 'prisma', 'schema.prisma'), 'model OrderNote {\n  id   Int    @id\n  note String @map("note_text")\n  @@map("order_notes")\n}\n');
    writeFileSync(join(dir, 'other.prisma'), 'model OrderNote {\n  id   Int    @id\n  note String @map("remark")\n}\n');
    const call = "import { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\nexport const find = () => prisma.orderNote.findMany({ where: { note: { contains: 'late' } } });\n";
    writeFileSync(join(app, 'src', 'orders', 'notes.ts'), call);
    writeFileSync(join(dir, 'src', 'notes.ts'), call);
    const lint = async (...args: string[]) => {
      const io = capture();
      assert.equal(await run(['lint', ...args], io), 0, io.err);
      return io.out;
    };
    assert.match(await lint(join(app, 'src', 'orders', 'notes.ts')), / note_text LIKE '%late%' starts with a wildcard/);
    assert.match(await lint(join(app, 'src', 'orders', 'notes.ts'), '--schema', join(dir, 'other.prisma')), / remark LIKE '%late%'/);
    // No schema above this one: the model's own field name.
    assert.match(await lint(join(dir, 'src', 'notes.ts')), / note LIKE '%late%'/);
  });

  it('needs at least one file', async () => {
    const io = capture();
    assert.equal(await run(['lint'], io), 64);
    assert.match(io.err, /^qpi lint takes one or more source files\./);
  });
});
