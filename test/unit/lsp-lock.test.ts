// One verdict with the editor: the language server shows a finding waived in qpi.lock.json, or ignored
// by a `qpi-ignore` comment, as `qpi check` lets it pass (information, with the reason, owner and expiry
// in its message and hover), an expired waiver as expired, and reads the lock from the workspace again
// when it changes. The lock's keys are the ones `qpi check` computes (collectQueries).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Diagnostic } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { collectQueries, decide, emptyLock, loadSqlParser, serializeLock, type Lock, type QueryRun, type Waiver } from '../../src/core/index';
import { InlineAdviceService, type WorkspaceLock } from '../../src/server/service';
import { WorkspaceLocks } from '../../src/server/workspaceLock';
import { FakePort } from './lsp-fixtures';

const TEXT = `import { Pool } from 'pg';
const pool = new Pool();
export async function byEmail(email) {
  return pool.query("SELECT id FROM customers WHERE lower(email) = 'a@b.c'");
}
export async function page() {
  return pool.query("SELECT id FROM customers ORDER BY id OFFSET 5000 LIMIT 20");
}
`;

const FILE = 'src/customers.ts';
const FUNCTION_ON_COLUMN = 'qpi.function-on-column';
const SKIP = 'qpi.skip-pagination';
const TODAY = '2026-11-20';

/** The keys `qpi check` writes in the lock for the text's queries. */
function keysOf(text: string, file = FILE): string[] {
  return collectQueries(text, file).queries.map((q) => q.key);
}

function lockWith(waivers: Waiver[]): Lock {
  return { ...emptyLock(), waivers };
}

function service(): { s: InlineAdviceService; port: FakePort } {
  const port = new FakePort();
  const s = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 1e6, today: () => TODAY });
  return { s, port };
}

function byCode(port: FakePort, uri: string, code: string): Diagnostic[] {
  return port.last(uri).filter((d) => d.code === code);
}

/** A diagnostic's message as text. */
function text(d: Diagnostic | undefined): string {
  const m = d?.message ?? '';
  return typeof m === 'string' ? m : m.value;
}

function hoverAt(s: InlineAdviceService, uri: string, text: string, needle: string): string {
  const h = s.hover(uri, TextDocument.create(uri, 'typescript', 1, text).positionAt(text.indexOf(needle)));
  return h ? (h.contents as { value: string }).value : '';
}

describe('language server: the waivers of qpi.lock.json and qpi-ignore comments', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('shows a finding waived in the lock as information with the waiver, and only on the query the waiver names', () => {
    const { s, port } = service();
    const uri = 'file:///repo/src/customers.ts';
    s.open(uri, 'typescript', 1, TEXT);
    assert.equal(byCode(port, uri, FUNCTION_ON_COLUMN)[0]?.severity, 2);
    assert.equal(byCode(port, uri, SKIP)[0]?.severity, 2);

    const [byEmail, page] = keysOf(TEXT);
    assert.match(byEmail!, /^src\/customers\.ts postgres byEmail [0-9a-f]{16}$/);
    s.setLocks([{ dir: '/repo', lock: lockWith([{ query: byEmail!, rule: FUNCTION_ON_COLUMN, reason: 'lower() is indexed by an expression index', owner: 'alice', expires: '2027-01-31' }]) }]);
    const waived = byCode(port, uri, FUNCTION_ON_COLUMN)[0]!;
    assert.equal(waived.severity, 3);
    assert.match(text(waived), /Waived in qpi\.lock\.json until 2027-01-31 by alice: lower\(\) is indexed by an expression index\.$/);
    // The other query's finding is not waived, and neither is the same rule on another key.
    assert.equal(byCode(port, uri, SKIP)[0]?.severity, 2);
    assert.match(hoverAt(s, uri, TEXT, 'lower(email)'), /\*\*qpi check\*\*[\s\S]*`qpi\.function-on-column`: Waived in qpi\.lock\.json until 2027-01-31 by alice/);
    assert.doesNotMatch(hoverAt(s, uri, TEXT, 'OFFSET'), /Waived/);

    // `*` waives every rule of its query; a lock in another folder waives nothing here.
    s.setLocks([{ dir: '/repo', lock: lockWith([{ query: page!, rule: '*', reason: 'an admin page', owner: 'bob', expires: TODAY }]) }]);
    assert.equal(byCode(port, uri, FUNCTION_ON_COLUMN)[0]?.severity, 2);
    assert.equal(byCode(port, uri, SKIP)[0]?.severity, 3);
    s.setLocks([{ dir: '/elsewhere', lock: lockWith([{ query: page!, rule: '*', reason: 'an admin page', owner: 'bob', expires: TODAY }]) }]);
    assert.equal(byCode(port, uri, SKIP)[0]?.severity, 2);
  });

  it('shows an expired waiver as expired: the finding stays a warning and the query says the waiver fails the gate', () => {
    const { s, port } = service();
    const uri = 'file:///repo/src/customers.ts';
    s.open(uri, 'typescript', 1, TEXT);
    const [byEmail] = keysOf(TEXT);
    const waiver: Waiver = { query: byEmail!, rule: FUNCTION_ON_COLUMN, reason: 'until the migration', owner: 'carol', expires: '2026-11-19' };
    s.setLocks([{ dir: '/repo', lock: lockWith([waiver]) }]);
    assert.equal(byCode(port, uri, FUNCTION_ON_COLUMN)[0]?.severity, 2);
    const expired = byCode(port, uri, 'qpi.check.waiver-expired');
    assert.equal(expired.length, 1);
    assert.equal(expired[0]!.severity, 2);
    assert.match(text(expired[0]), /^The waiver of qpi\.function-on-column on this query expired on 2026-11-19 \(carol: until the migration\)\./);
    assert.match(hoverAt(s, uri, TEXT, 'lower(email)'), /\*\*Expired:\*\* The waiver of qpi\.function-on-column on this query expired on 2026-11-19/);

    // The gate says the same of the same lock: the finding is not suppressed and the waiver fails.
    const q = collectQueries(TEXT, FILE).queries[0]!;
    const run: QueryRun = { key: q.key, engine: q.engine, file: q.file, shape: q.shape, title: q.title, range: q.range, ignores: q.ignores, status: 'explained', findings: [{ rule: FUNCTION_ON_COLUMN, tier: 'structural', severity: 'warning', message: 'm', range: q.range }] };
    const verdict = decide([run], lockWith([waiver]), () => ({}), TODAY).verdicts[0]!;
    assert.equal(verdict.results.find((r) => r.rule === FUNCTION_ON_COLUMN)?.suppressed, undefined);
    assert.ok(verdict.results.some((r) => r.rule === 'qpi.check.waiver-expired' && r.fails));
  });

  it('honours a qpi-ignore comment typed above a query, as qpi check reads it, and drops it when the comment goes', () => {
    const { s, port } = service();
    const uri = 'file:///anywhere/src/customers.ts';
    s.open(uri, 'typescript', 1, TEXT);
    const line = TEXT.split('\n').findIndex((l) => l.includes('lower(email)'));
    const comment = `  // qpi-ignore ${FUNCTION_ON_COLUMN} -- an expression index on lower(email) exists\n`;
    s.applyChanges(uri, 2, [{ range: { start: { line, character: 0 }, end: { line, character: 0 } }, text: comment }]);
    // Wait for the edit's analysis: the service runs it on the next turn.
    return s.settled(uri).then(() => {
      const lines = TEXT.split('\n');
      lines.splice(line, 0, comment.trimEnd());
      const after = lines.join('\n');
      const d = byCode(port, uri, FUNCTION_ON_COLUMN)[0]!;
      assert.equal(d.severity, 3);
      assert.equal(text(d).endsWith(`Ignored by a qpi-ignore comment (line ${line + 1}): an expression index on lower(email) exists.`), true, text(d));
      assert.equal(byCode(port, uri, SKIP)[0]?.severity, 2);
      // qpi check reads the same comment on the same query.
      assert.deepEqual(collectQueries(after, FILE).queries[0]!.ignores, [{ rule: FUNCTION_ON_COLUMN, reason: 'an expression index on lower(email) exists', line: line + 1 }]);
      assert.match(hoverAt(s, uri, after, 'lower(email) ='), /`qpi\.function-on-column`: Ignored by a qpi-ignore comment/);
      s.applyChanges(uri, 3, [{ range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } }, text: '' }]);
      return s.settled(uri);
    }).then(() => {
      assert.equal(byCode(port, uri, FUNCTION_ON_COLUMN)[0]?.severity, 2);
    });
  });

  it('computes the key the host test (test/host/suite/lock.test.ts) writes in its lock, as qpi check does', () => {
    const source = `export async function recentAudit(db, actor) {
  return db.collection('audit_log').find({ actor: 'x' }).sort({ at: -1 }).skip(5000).limit(20).toArray();
}
`;
    assert.deepEqual(keysOf(source, 'app/qpiLockAudit.js'), ['app/qpiLockAudit.js mongodb recentAudit 3f5bb6cd8ec53f51']);
  });

  describe('reading the lock from the workspace', () => {
    let root: string;
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'qpi-lsp-lock-'));
      mkdirSync(join(root, 'src'));
      writeFileSync(join(root, 'src', 'customers.ts'), TEXT);
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('finds the root lock, reads it again when the watcher reports it changed or deleted, and logs a broken one', async () => {
      const { s, port } = service();
      const logs: string[] = [];
      const locks = new WorkspaceLocks([root], (l: WorkspaceLock[]) => s.setLocks(l), (m) => logs.push(m), 0);
      const uri = pathToFileURL(join(root, 'src', 'customers.ts')).href;
      s.open(uri, 'typescript', 1, TEXT);
      const [byEmail] = keysOf(TEXT);
      const lockPath = join(root, 'qpi.lock.json');
      writeFileSync(lockPath, serializeLock(lockWith([{ query: byEmail!, rule: FUNCTION_ON_COLUMN, reason: 'known', owner: 'dan', expires: '2030-01-01' }])));
      assert.equal((await locks.load()).length, 1);
      assert.equal(byCode(port, uri, FUNCTION_ON_COLUMN)[0]?.severity, 3);

      const lockUri = pathToFileURL(lockPath).href;
      writeFileSync(lockPath, '{ "version": 1, "waivers": [{ "query": "x" }] }');
      locks.changed([lockUri]);
      await locks.applyChanges();
      assert.equal(byCode(port, uri, FUNCTION_ON_COLUMN)[0]?.severity, 2);
      assert.ok(logs.some((m) => m.includes('Waiver 1 in the lock needs rule, reason, owner, expires')), logs.join('\n'));

      writeFileSync(lockPath, serializeLock(lockWith([{ query: byEmail!, rule: FUNCTION_ON_COLUMN, reason: 'known again', owner: 'dan', expires: '2030-01-01' }])));
      locks.changed([lockUri]);
      await locks.applyChanges();
      assert.match(text(byCode(port, uri, FUNCTION_ON_COLUMN)[0]), /known again\.$/);

      unlinkSync(lockPath);
      locks.changed([lockUri]);
      await locks.applyChanges();
      assert.equal(byCode(port, uri, FUNCTION_ON_COLUMN)[0]?.severity, 2);
      locks.dispose();
    });

    it("finds a package's own lock above an opened document, whose keys name files from the package's folder", async () => {
      const pkg = join(root, 'packages', 'api');
      mkdirSync(join(pkg, 'src'), { recursive: true });
      writeFileSync(join(pkg, 'src', 'customers.ts'), TEXT);
      const [, page] = keysOf(TEXT, 'src/customers.ts');
      writeFileSync(join(pkg, 'qpi.lock.json'), serializeLock(lockWith([{ query: page!, rule: SKIP, reason: 'an admin page', owner: 'erin', expires: '2030-01-01' }])));
      const { s, port } = service();
      const locks = new WorkspaceLocks([root], (l: WorkspaceLock[]) => s.setLocks(l), () => undefined, 0);
      await locks.load();
      const uri = pathToFileURL(join(pkg, 'src', 'customers.ts')).href;
      s.open(uri, 'typescript', 1, TEXT);
      assert.equal(byCode(port, uri, SKIP)[0]?.severity, 2);
      assert.equal((await locks.opened(uri))?.length, 1);
      assert.equal(byCode(port, uri, SKIP)[0]?.severity, 3);
      assert.match(text(byCode(port, uri, SKIP)[0]), /Waived in qpi\.lock\.json until 2030-01-01 by erin: an admin page\.$/);
    });
  });
});
