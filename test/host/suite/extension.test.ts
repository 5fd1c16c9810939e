// Extension tests that run INSIDE code-server's extension host (scripts/host.mjs), with the full vscode
// API and the real test servers of scripts/with-servers.mjs (sample data loaded by host.mjs). They drive
// the extension through its commands, as a user's clicks would, and read the handle activate() returns.

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import pg from 'pg';
import * as vscode from 'vscode';
import type { PlanNode } from '../../../src/core/model';
import type { ConsentQuestion } from '../../../src/extension/adviceView';
import { Commands } from '../../../src/extension/commands';
import type { ConnectionSpec } from '../../../src/extension/connections/spec';
import type { ExplainSummary } from '../../../src/extension/explain';
import type { ExtensionHandle } from '../../../src/extension/main';
import type { OpenPlanSummary } from '../../../src/extension/openPlan';
import type { PanelActions } from '../../../src/extension/planPanel';
import type { MeasureRequest } from '../../../src/extension/gateway';
import type { CreateIndexOutcome } from '../../../src/extension/build';
import type { ClientCommands, CreateIndexArgs } from '../../../src/protocol/languageServer';
import type { HostToViewMessage, SuggestionVerdict, SuggestionView } from '../../../src/protocol/webview';
import { until } from '../../until';

/**
 * The language server's Create Index command, checked against ClientCommands by its type: a value import
 * of the protocol module would bundle the core (and its parser's WASM) into the in-host tests.
 */
const CREATE_INDEX: (typeof ClientCommands)['createIndex'] = 'queryPlanInspector.createIndex';
/** The language server's Explain lens command, checked the same way. */
const EXPLAIN_INLINE: (typeof ClientCommands)['explainInline'] = 'queryPlanInspector.explainInline';

const EXTENSION_ID = 'query-plan-inspector.query-plan-inspector';

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these tests with npm run test:host (it starts the servers).`);
  return v;
}

/** Checks the text is one sentence: one line, ends with a full stop, no stack trace. */
function assertOneSentence(text: string | undefined, pattern?: RegExp): void {
  assert.ok(text, 'no sentence was shown');
  assert.ok(!text.includes('\n'), `more than one line: ${text}`);
  assert.match(text, /[.!?]$/, `not a sentence: ${text}`);
  assert.doesNotMatch(text, /\bat .+:\d+:\d+/, `looks like a stack trace: ${text}`);
  if (pattern) assert.match(text, pattern);
}

async function openAt(relative: string, needle: string): Promise<vscode.TextEditor> {
  const folder = vscode.workspace.workspaceFolders![0]!.uri;
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, relative));
  const editor = await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
  const offset = doc.getText().indexOf(needle);
  assert.ok(offset >= 0, `${needle} is not in ${relative}`);
  const pos = doc.positionAt(offset + 1);
  editor.selection = new vscode.Selection(pos, pos);
  return editor;
}

/** The nodes of a plan tree in preorder: the panel posts plans slim, without their `nodes` index. */
function preorder(root: PlanNode): PlanNode[] {
  const out: PlanNode[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

interface StatusSeen {
  id: string;
  status: string;
  detail?: string;
  verdict?: SuggestionVerdict;
}

export function extensionTests(): void {
  let handle: ExtensionHandle;
  let root: string;

  /** The suggestions the plan panel shows now. */
  function shownSuggestions(): SuggestionView[] {
    const message = handle.panel()?.lastMessage;
    assert.equal(message?.type, 'showPlan');
    return message?.type === 'showPlan' ? message.suggestions ?? [] : [];
  }

  /**
   * Presses Verify on a suggestion as the panel does, with the session of the plan shown (or the one
   * given), and collects the statuses the extension answers with.
   */
  async function verifyFromPanel(id: string, onStatus?: (m: StatusSeen) => void, session: PanelActions | undefined = handle.panel()?.session): Promise<StatusSeen[]> {
    assert.ok(session, 'no session after a live explain');
    const seen: StatusSeen[] = [];
    await session.measure(id, (m: HostToViewMessage) => {
      if (m.type !== 'suggestionStatus') return;
      const x: StatusSeen = { id: m.id, status: m.status, ...(m.detail ? { detail: m.detail } : {}), ...(m.verdict ? { verdict: m.verdict } : {}) };
      seen.push(x);
      onStatus?.(x);
    });
    return seen;
  }

  /** The last status of one suggestion. */
  function lastOf(seen: StatusSeen[], id: string): StatusSeen {
    const mine = seen.filter((x) => x.id === id);
    assert.ok(mine.length > 0, `no status for ${id}`);
    return mine.at(-1)!;
  }

  /** Answers the questions asked before a trial or a build, and records them. */
  function answerConsent(answer: boolean): ConsentQuestion[] {
    const asked: ConsentQuestion[] = [];
    handle.prompts.consent = async (q) => {
      asked.push(q);
      return answer;
    };
    return asked;
  }

  before(async () => {
    const ext = vscode.extensions.getExtension<ExtensionHandle>(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not installed in the host`);
    handle = await ext.activate();
    root = ext.extensionPath;
  });

  beforeEach(() => handle.clearLastError());
  afterEach(() => {
    delete handle.prompts.consent;
  });

  describe('activation', () => {
    it('registers every command of the Commands object', async () => {
      const all = new Set(await vscode.commands.getCommands(true));
      const missing = Object.values(Commands).filter((id) => !all.has(id));
      assert.deepEqual(missing, []);
      console.log(`    host: VS Code ${vscode.version}, ${vscode.env.appName}, Node ${process.version}`);
    });

    it('offers the walkthrough on the first start of an install, and not again', async () => {
      // The host starts with a new user data folder: this start is the install's first.
      assert.equal(await handle.walkthroughOffered, true);
      assert.equal(await handle.offerWalkthrough(), false);
    });
  });

  describe('Open Plan', () => {
    it('opens a saved MongoDB explain in the plan panel, and the view says ready', async () => {
      const file = vscode.Uri.file(path.join(root, 'test', 'fixtures', 'corpus', 'mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json'));
      const summary = await vscode.commands.executeCommand<OpenPlanSummary | undefined>(Commands.openPlan, file);
      assert.ok(summary, `Open Plan failed: ${handle.lastError()}`);
      assert.equal(summary.engine, 'mongodb');
      assert.ok(summary.nodeCount >= 2, `only ${summary.nodeCount} nodes`);
      const panel = handle.panel();
      assert.ok(panel, 'no plan panel');
      assert.equal(await panel.whenReady(30_000), true, 'the view never said ready');
      assert.ok(panel.received.some((m) => m.type === 'ready'));
      assert.equal(panel.lastMessage?.type, 'showPlan');
      // The page says when it has drawn the plan: an Explain's advice waits for that message.
      await until('the view to say planDrawn', () => panel.received.some((m) => m.type === 'planDrawn'), { timeoutMs: 30_000 });
    });

    it('refuses a text that is not a plan with one sentence and keeps working', async () => {
      const r = await vscode.commands.executeCommand(Commands.openPlan, { text: 'this is not a plan at all' });
      assert.equal(r, undefined);
      assertOneSentence(handle.lastError(), /could not be read as a plan/);
      const again = await vscode.commands.executeCommand<OpenPlanSummary | undefined>(Commands.openPlan, {
        text: JSON.stringify({ queryPlanner: { namespace: 'db.c', winningPlan: { stage: 'COLLSCAN', direction: 'forward' }, rejectedPlans: [] } }),
      });
      assert.equal(again?.engine, 'mongodb');
    });
  });

  describe('Compare Plans', () => {
    it('shows two saved plans of the same engine side by side, and refuses to mix engines', async () => {
      const corpus = (name: string) => vscode.Uri.file(path.join(root, 'test', 'fixtures', 'corpus', name)).toString();
      const ok = await vscode.commands.executeCommand(Commands.comparePlans, {
        before: corpus('mongo-find-collscan-empty-filter-allplans-5.0.json'), after: corpus('mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json'),
      });
      assert.equal(ok, true, handle.lastError());
      const message = handle.panel()?.lastMessage;
      assert.equal(message?.type, 'showComparison');
      if (message?.type !== 'showComparison') return;
      assert.equal(message.before.plan.engine, 'mongodb');
      assert.ok(preorder(message.after.plan.root).length >= 2);
      const mixed = await vscode.commands.executeCommand(Commands.comparePlans, {
        before: corpus('mongo-find-idhack-3.2.json'), after: corpus('pg-json-analyze-verbose-buffers-nestloop-bitmap-materialize.json'),
      });
      assert.equal(mixed, undefined);
      assertOneSentence(handle.lastError(), /different engines/);
    });
  });

  describe('connections', () => {
    // Each test stands alone: the connection they share is added here, and a test that changes it puts it
    // back; the removal test removes a connection of its own.
    let pwSpec: ConnectionSpec;

    async function addPasswordConnection(name: string): Promise<ConnectionSpec> {
      const pgUri = new URL(env('QPI_SAMPLES_PG_URI'));
      const uri = `postgresql://${env('QPI_TEST_PW_USER')}:${encodeURIComponent(env('QPI_TEST_PW_PASSWORD'))}@${pgUri.host}${pgUri.pathname}`;
      const spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.addConnection, { name, uri, test: false });
      assert.ok(spec, `adding failed: ${handle.lastError()}`);
      return spec;
    }

    before(async () => {
      pwSpec = await addPasswordConnection('pw user');
    });

    it('keeps the password in SecretStorage only, never in the saved metadata', async () => {
      const pgUri = new URL(env('QPI_SAMPLES_PG_URI'));
      const user = env('QPI_TEST_PW_USER');
      const password = env('QPI_TEST_PW_PASSWORD');
      const spec = pwSpec;
      assert.equal(spec.hasPassword, true);
      assert.equal(spec.uri, `postgresql://${user}@${pgUri.host}${pgUri.pathname}`);
      const stored = JSON.stringify(handle.parts.context.globalState.get('queryPlanInspector.connections'));
      assert.ok(stored.includes('pw user'));
      assert.ok(!stored.includes(password), 'the password is in globalState');
      assert.equal(await handle.parts.store.password(spec.id), password);
      const settings = JSON.stringify(vscode.workspace.getConfiguration('queryPlanInspector'));
      assert.ok(!settings.includes(password), 'the password is in the settings');
    });

    it('tests a connection and shows its state and server version', async () => {
      const r = await vscode.commands.executeCommand<{ ok: boolean; serverVersion?: string }>(Commands.testConnection, pwSpec.id);
      assert.equal(r?.ok, true, handle.lastError());
      assert.match(r.serverVersion ?? '', /^\d+\.\d+/);
      assert.equal(handle.parts.store.state(pwSpec.id).kind, 'ok');
    });

    it('a wrong password gives one sentence, marks the connection failed, and the extension keeps working', async () => {
      const bad = await vscode.commands.executeCommand<ConnectionSpec>(Commands.editConnection, { id: pwSpec.id, password: 'not-the-password' });
      assert.ok(bad);
      const editor = await openAt('orders.sql', 'SELECT id, created_at FROM orders ORDER BY');
      await vscode.commands.executeCommand(Commands.selectConnection, { id: bad.id, uri: editor.document.uri.toString() });
      const r = await vscode.commands.executeCommand(Commands.explainQuery);
      assert.equal(r, undefined);
      assertOneSentence(handle.lastError(), /refused the login|password/i);
      assert.ok(!handle.lastError()!.includes('not-the-password'));
      assert.equal(handle.parts.store.state(bad.id).kind, 'failed');
      // Still working: the right password explains.
      await vscode.commands.executeCommand(Commands.editConnection, { id: pwSpec.id, password: env('QPI_TEST_PW_PASSWORD') });
      handle.clearLastError();
      const ok = await vscode.commands.executeCommand<{ ok: boolean }>(Commands.testConnection, pwSpec.id);
      assert.equal(ok?.ok, true, handle.lastError());
    });

    it('removes a connection and its password', async () => {
      const spec = await addPasswordConnection('pw user to remove');
      assert.equal(await handle.parts.store.password(spec.id), env('QPI_TEST_PW_PASSWORD'));
      assert.equal(await vscode.commands.executeCommand(Commands.removeConnection, { id: spec.id, confirm: false }), true);
      assert.equal(handle.parts.store.get(spec.id), undefined);
      assert.equal(await handle.parts.store.password(spec.id), undefined);
    });
  });

  describe('Explain Query on PostgreSQL', () => {
    let spec: ConnectionSpec;
    const settings = () => vscode.workspace.getConfiguration('queryPlanInspector');

    before(async () => {
      // These tests press Verify themselves (and answer its questions); the measurement at once after an
      // explain is the languageServer suite's "one verdict" test.
      await settings().update('postgres.measureOnExplain', false, vscode.ConfigurationTarget.Global);
      const added = await vscode.commands.executeCommand<ConnectionSpec>(Commands.addConnection, { name: 'samples pg', uri: env('QPI_SAMPLES_PG_URI') });
      assert.ok(added, handle.lastError());
      spec = added;
    });

    it('explains the statement under the cursor in orders.sql and shows the plan', async () => {
      const editor = await openAt('orders.sql', 'SELECT id, created_at FROM orders ORDER BY created_at DESC, id DESC OFFSET');
      await vscode.commands.executeCommand(Commands.selectConnection, { id: spec.id, uri: editor.document.uri.toString() });
      assert.match(handle.statusBarText(), /samples pg/);
      const t0 = Date.now();
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
      assert.ok(r, `explain failed: ${handle.lastError()}`);
      console.log(`    explained in ${Date.now() - t0} ms: ${r.rootKind}, ${r.nodeCount} nodes, findings ${r.findings.join(', ')}`);
      assert.equal(r.engine, 'postgres');
      assert.equal(r.rootKind, 'Limit');
      assert.ok(r.findings.includes('pg.offset-reads'), `findings: ${r.findings.join(', ')}`);
      const panel = handle.panel();
      assert.ok(panel && (await panel.whenReady(30_000)));
      assert.equal(panel.lastMessage?.type, 'showPlan');
    });

    it('explaining orders.sql again on a connection as it was tells the Connections view and the status bar nothing', async () => {
      await openAt('orders.sql', 'SELECT id, created_at FROM orders ORDER BY created_at DESC, id DESC OFFSET');
      const store = handle.parts.store;
      assert.equal(store.state(spec.id).kind, 'ok');
      let changes = 0;
      const sub = store.onDidChange(() => changes++);
      try {
        const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
        assert.ok(r, `explain failed: ${handle.lastError()}`);
        assert.equal(changes, 0);
        assert.equal(store.state(spec.id).kind, 'ok');
      } finally {
        sub.dispose();
      }
    });

    it('suggests an index and checks it on the server with a hypothetical index', async () => {
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, {
        text: 'SELECT order_id, line FROM order_details WHERE quantity = 7 AND product_id = 9 ORDER BY order_id LIMIT 10', engine: 'postgres', connectionId: spec.id,
      });
      assert.ok(r, `explain failed: ${handle.lastError()}`);
      console.log(`    suggestions: ${r.suggestions.join(' | ')}`);
      const message = handle.panel()?.lastMessage;
      assert.equal(message?.type, 'showPlan');
      if (message?.type !== 'showPlan') return;
      const create = message.suggestions?.find((v) => v.verifiable && v.ddl?.startsWith('CREATE INDEX'));
      assert.ok(create, `no verifiable CREATE INDEX among: ${r.suggestions.join(' | ')}`);
      assert.ok(create.expectedPlan && create.tradeOff && create.rule, 'the suggestion lacks its expected plan, trade-off or rule');
      assert.equal(create.status, 'unverified', 'nothing is verified before the user asks');
      // HypoPG builds nothing, so nothing is asked.
      const asked = answerConsent(false);
      const statuses = (await verifyFromPanel(create.id)).filter((x) => x.id === create.id);
      console.log(`    ${create.ddl}: ${statuses.map((x) => `${x.status} ${x.detail ?? ''}`).join(' / ')}`);
      assert.deepEqual(asked, []);
      assert.equal(statuses[0]?.status, 'verifying');
      const last = statuses.at(-1)!;
      assert.ok(last.status === 'verified' || last.status === 'rejected', `ended ${last.status}: ${last.detail}`);
      // Measured on a copy (the tournament), or HypoPG's estimates.
      assert.match(last.detail ?? '', /HypoPG|measured (from a sample|on all)/i);
      assert.ok(['hypopg', 'sampled'].includes(last.verdict?.method ?? ''), `method ${last.verdict?.method}`);
      assert.ok(Number.isFinite(last.verdict?.before) && Number.isFinite(last.verdict?.after), 'no estimated costs before and after');
      assert.ok(last.verdict!.planBefore && last.verdict!.planAfter);
      console.log(`    cost ${last.verdict!.before} -> ${last.verdict!.after}: ${last.verdict!.planBefore} -> ${last.verdict!.planAfter}`);
      // Nothing was built: the index does not exist afterwards.
      const client = new pg.Client({ connectionString: env('QPI_SAMPLES_PG_URI') });
      await client.connect();
      try {
        const n = (await client.query("SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = 'order_details'")).rows[0].n;
        assert.equal(n, 2);
      } finally {
        await client.end();
      }
    });

    it('two plans explained one after the other keep their own sessions: each Verify measures its own query on its own connection, at the same time', async () => {
      // The measure requests that reach the gateway, with the suggestion each was asked for.
      const asked: { text: string; ddl: string | undefined }[] = [];
      const unwrap = handle.wrapGateway((inner) => ({
        ...inner,
        measure: (request: MeasureRequest) => {
          asked.push({ text: request.text, ddl: request.live.advice.suggestions.find((x) => x.rank === request.rank)?.createText });
          return inner.measure(request);
        },
      }));
      try {
        const explain = async (text: string) => {
          const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { text, engine: 'postgres', connectionId: spec.id });
          assert.ok(r, `explain failed: ${handle.lastError()}`);
          const create = shownSuggestions().find((v) => v.verifiable && v.ddl?.startsWith('CREATE INDEX'));
          assert.ok(create, `no verifiable CREATE INDEX among: ${r.suggestions.join(' | ')}`);
          const session = handle.panel()?.session;
          assert.ok(session, 'no session after a live explain');
          return { text, create, session };
        };
        const first = await explain('SELECT order_id, line FROM order_details WHERE quantity = 7 AND product_id = 9 ORDER BY order_id LIMIT 10');
        const second = await explain('SELECT order_id FROM order_details WHERE quantity = 3 AND line = 2 ORDER BY order_id LIMIT 10');
        assert.notEqual(first.session, second.session);
        assert.equal(handle.panel()?.session, second.session);
        assert.notEqual(first.create.ddl, second.create.ddl);
        answerConsent(false);
        // The first plan's Verify, pressed after the second plan replaced it, and the second's, at once.
        const [seenFirst, seenSecond] = await Promise.all([
          verifyFromPanel(first.create.id, undefined, first.session),
          verifyFromPanel(second.create.id, undefined, second.session),
        ]);
        for (const [seen, x] of [[seenFirst, first], [seenSecond, second]] as const) {
          const last = lastOf(seen, x.create.id);
          assert.ok(last.status === 'verified' || last.status === 'rejected', `${x.create.ddl} ended ${last.status}: ${last.detail}`);
        }
        assert.deepEqual(asked.map((a) => a.text).sort(), [first.text, second.text].sort());
        assert.equal(asked.find((a) => a.text === first.text)?.ddl, first.create.ddl);
        assert.equal(asked.find((a) => a.text === second.text)?.ddl, second.create.ddl);
      } finally {
        unwrap();
      }
    });

    it('without HypoPG, measures a SELECT on copies without asking; asks before building for what the copies cannot measure; declined builds nothing, accepted leaves no index', async () => {
      const admin = new pg.Client({ connectionString: env('QPI_SAMPLES_PG_URI') });
      await admin.connect();
      const uri = new URL(env('QPI_SAMPLES_PG_URI'));
      uri.pathname = '/qpi_nohypo';
      try {
        await admin.query('DROP DATABASE IF EXISTS qpi_nohypo WITH (FORCE)');
        await admin.query('CREATE DATABASE qpi_nohypo');
        const db = new pg.Client({ connectionString: uri.toString() });
        await db.connect();
        try {
          await db.query(`CREATE TABLE items (id int PRIMARY KEY, cat int NOT NULL, price int NOT NULL);
            INSERT INTO items SELECT g, g % 50, (g * 7919) % 10007 FROM generate_series(1, 50000) g;
            ANALYZE items;`);
          assert.equal((await db.query("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'hypopg'")).rows[0].n, 0);
          const added = await vscode.commands.executeCommand<ConnectionSpec>(Commands.addConnection, { name: 'no hypopg', uri: uri.toString(), test: false });
          assert.ok(added, handle.lastError());

          // A SELECT: the tournament builds only on temporary copies, so nothing is asked.
          const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, {
            text: 'SELECT id, price FROM items WHERE cat = 7 ORDER BY price LIMIT 10', engine: 'postgres', connectionId: added.id,
          });
          assert.ok(r, `explain failed: ${handle.lastError()}`);
          const select = shownSuggestions().find((v) => v.verifiable && v.ddl?.startsWith('CREATE INDEX'));
          assert.ok(select, `no verifiable CREATE INDEX among: ${r.suggestions.join(' | ')}`);
          const none = answerConsent(false);
          const measured = (await verifyFromPanel(select.id)).filter((x) => x.verdict).at(-1);
          assert.deepEqual(none, [], 'the tournament on copies asked for consent');
          assert.equal(measured?.verdict?.method, 'sampled', JSON.stringify(measured));
          assert.match(measured?.detail ?? '', /measured on all/i);

          // An UPDATE is not measured on copies: its check builds the index on the table, after asking.
          const u = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, {
            text: 'UPDATE items SET price = price + 1 WHERE cat = 7 AND price < 100', engine: 'postgres', connectionId: added.id,
          });
          assert.ok(u, `explain failed: ${handle.lastError()}`);
          console.log(`    suggestions: ${u.suggestions.join(' | ')}`);
          const create = shownSuggestions().find((v) => v.verifiable && v.ddl?.startsWith('CREATE INDEX'));
          assert.ok(create, `no verifiable CREATE INDEX among: ${u.suggestions.join(' | ')}`);

          const declined = answerConsent(false);
          const no = lastOf(await verifyFromPanel(create.id), create.id);
          assert.equal(declined.length, 1);
          assert.equal(declined[0]!.kind, 'pg-build');
          assert.match(declined[0]!.message, /locks writes to items/);
          assert.match(declined[0]!.detail, /HypoPG is not installed/);
          assert.equal(no.status, 'unverified');
          assert.match(no.detail ?? '', /declined/);

          const accepted = answerConsent(true);
          const yes = lastOf(await verifyFromPanel(create.id), create.id);
          console.log(`    ${create.ddl}: ${yes.status} ${yes.detail}`);
          assert.equal(accepted.length, 1);
          assert.ok(yes.status === 'verified' || yes.status === 'rejected', `ended ${yes.status}: ${yes.detail}`);
          assert.equal(yes.verdict?.method, 'trial-index');
          assert.match(yes.detail ?? '', /rolled back/i);
          const left = (await db.query("SELECT indexname FROM pg_indexes WHERE tablename = 'items'")).rows.map((x: { indexname: string }) => x.indexname);
          assert.deepEqual(left, ['items_pkey'], 'the trial index was left behind');
          await vscode.commands.executeCommand(Commands.removeConnection, { id: added.id, confirm: false });
        } finally {
          await db.end();
        }
      } finally {
        await admin.query('DROP DATABASE IF EXISTS qpi_nohypo WITH (FORCE)').catch(() => undefined);
        await admin.end();
      }
    });

    it('explains SQL passed to client.query in JavaScript', async () => {
      const editor = await openAt('app/report.js', 'WHERE country_id');
      await vscode.commands.executeCommand(Commands.selectConnection, { id: spec.id, uri: editor.document.uri.toString() });
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
      assert.ok(r, `explain failed: ${handle.lastError()}`);
      assert.equal(r.engine, 'postgres');
      assert.match(r.title, /^SELECT id, created_at FROM orders WHERE/);
      assert.equal(r.rootKind, 'Limit');
      // The 20,000 sample orders: walking an index in created_at order rejects rows of other countries.
      assert.ok(r.findings.includes('pg.rows-removed-by-filter') || r.findings.includes('pg.sort'), `findings: ${r.findings.join(', ')}`);
    });

    it('offers a CodeLens above each statement', async () => {
      const editor = await openAt('orders.sql', 'UPDATE orders');
      const explains = await until('an Explain lens above each statement', async () => {
        const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', editor.document.uri);
        const all = lenses.filter((l) => l.command?.command === EXPLAIN_INLINE);
        return all.length > 0 ? all : undefined;
      });
      assert.equal(explains.length, 6);
      assert.equal(new Set(explains.map((l) => l.range.start.line)).size, 6, 'one Explain lens per statement');
    });

    it('the Explain lens and Explain at the cursor pick the same query, the one the language server reads with its constants resolved', async () => {
      const editor = await openAt('app/report.js', 'WHERE country_id');
      const doc = editor.document;
      const cursor = doc.offsetAt(editor.selection.active);
      const lens = await until('the Explain lens of the query at the cursor', async () => {
        const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
        return lenses.find((l) => {
          const a = l.command?.command === EXPLAIN_INLINE ? (l.command.arguments?.[0] as { start: number; end: number }) : undefined;
          return a !== undefined && a.start <= cursor && cursor <= a.end;
        });
      });
      const fromLens = await vscode.commands.executeCommand<ExplainSummary | undefined>(lens.command!.command, ...(lens.command!.arguments ?? []));
      assert.ok(fromLens, `explain from the lens failed: ${handle.lastError()}`);
      await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      editor.selection = new vscode.Selection(doc.positionAt(cursor), doc.positionAt(cursor));
      const atCursor = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
      assert.ok(atCursor, `explain at the cursor failed: ${handle.lastError()}`);
      assert.equal(atCursor.title, fromLens.title);
      assert.equal(atCursor.nodeCount, fromLens.nodeCount);
      // The same query, explained twice from the same place: the second run finds the first for Compare.
      assert.ok(handle.history.find(handle.history.lastKey ? [handle.history.lastKey] : [], 2), 'the two runs are not kept under one place');
    });

    it('ANALYZE on an UPDATE is rolled back: the rows do not change', async () => {
      const client = new pg.Client({ connectionString: env('QPI_SAMPLES_PG_URI') });
      await client.connect();
      try {
        const before = (await client.query('SELECT sum(country_id)::int AS s, count(*)::int AS n FROM orders WHERE id < 100')).rows[0];
        await openAt('orders.sql', 'UPDATE orders');
        const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { analyze: true });
        assert.ok(r, handle.lastError());
        assert.equal(r.rolledBack, true);
        const after = (await client.query('SELECT sum(country_id)::int AS s, count(*)::int AS n FROM orders WHERE id < 100')).rows[0];
        assert.deepEqual(after, before);
      } finally {
        await client.end();
      }
    });

    it('Cancel stops the statement on the server', async () => {
      const client = new pg.Client({ connectionString: env('QPI_SAMPLES_PG_URI') });
      await client.connect();
      try {
        const pending = vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, {
          text: 'SELECT pg_sleep(30), count(*) FROM orders', engine: 'postgres', connectionId: spec.id, analyze: true,
        });
        // Wait until the statement runs on the server, then press Cancel.
        const seen = async () => (await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND state = 'active' AND pid <> pg_backend_pid()")).rows[0].n as number;
        await until('the statement in pg_stat_activity', async () => (await seen()) > 0, { timeoutMs: 20_000, pauseMs: 100 });
        const t0 = Date.now();
        assert.equal(handle.cancelRunningExplain(), true);
        assert.equal(await pending, undefined);
        const took = Date.now() - t0;
        assertOneSentence(handle.lastError(), /cancelled/);
        assert.ok(took < 10_000, `cancel took ${took} ms`);
        await until('the statement gone from the server', async () => (await seen()) === 0, { timeoutMs: 5_000, pauseMs: 100 });
        console.log(`    cancelled on the server in ${took} ms`);
      } finally {
        await client.end();
      }
    });

    after(async () => {
      await settings().update('postgres.measureOnExplain', undefined, vscode.ConfigurationTarget.Global);
    });
  });

  describe('Explain Query on MongoDB', () => {
    let spec: ConnectionSpec;

    before(async () => {
      const added = await vscode.commands.executeCommand<ConnectionSpec>(Commands.addConnection, { name: 'samples mongo', uri: env('QPI_SAMPLES_MONGO_URI') });
      assert.ok(added, handle.lastError());
      spec = added;
    });

    it('explains the orders query of the playground: the ESR index reads exactly what it returns', async () => {
      const editor = await openAt('orders.mongodb.js', 'db.orders.find({ country_id: 1, order_details');
      await vscode.commands.executeCommand(Commands.selectConnection, { id: spec.id, uri: editor.document.uri.toString() });
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
      assert.ok(r, `explain failed: ${handle.lastError()}`);
      console.log(`    ${r.title}: ${r.rootKind}, ${r.nodeCount} nodes, MongoDB ${r.serverVersion}, findings ${r.findings.join(', ')}`);
      assert.equal(r.engine, 'mongodb');
      assert.equal(r.title, 'orders.find');
      const message = handle.panel()?.lastMessage;
      assert.equal(message?.type, 'showPlan');
      if (message?.type !== 'showPlan') return;
      assert.deepEqual(preorder(message.plan.root).map((n) => n.kind), ['LIMIT', 'FETCH', 'IXSCAN']);
      assert.equal(message.plan.totals.keysExamined, 10);
      assert.equal(message.plan.totals.docsExamined, 10);
      assert.equal(message.plan.totals.nReturned, 10);
      assert.ok(!r.findings.includes('mongo.blocking-sort'));
      console.log(`    suggestions: ${r.suggestions.join(' | ')}`);
      assert.match(r.suggestions[0] ?? '', /^Keep using country_id_1_order_details\.product_id_1_created_at_-1$/);
    });

    it('explains a driver call in TypeScript: $project before $match scans the collection', async () => {
      const editor = await openAt('app/ordersRepository.ts', "db.collection('customers')");
      await vscode.commands.executeCommand(Commands.selectConnection, { id: spec.id, uri: editor.document.uri.toString() });
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
      assert.ok(r, `explain failed: ${handle.lastError()}`);
      assert.equal(r.title, 'customers.aggregate');
      assert.ok(r.findings.includes('mongo.project-before-match') || r.findings.includes('mongo.collscan'), `findings: ${r.findings.join(', ')}`);
    });

    it('explaining the same query twice offers Compare with previous run', async () => {
      await openAt('orders.mongodb.js', 'db.orders.find({ country_id: 1, order_details');
      for (let run = 0; run < 2; run++) {
        const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
        assert.ok(r, handle.lastError());
      }
      assert.equal(await vscode.commands.executeCommand(Commands.compareWithPrevious), true);
      assert.equal(handle.panel()?.lastMessage?.type, 'showComparison');
    });

    it('a query the reader cannot read is one sentence, before any connection is made', async () => {
      const r = await vscode.commands.executeCommand(Commands.explainQuery, { text: 'db.orders.find({ country_id: 1 ', engine: 'mongodb', connectionId: spec.id });
      assert.equal(r, undefined);
      assertOneSentence(handle.lastError());
    });
  });

  describe('Verify on MongoDB: a sampled trial on a scratch collection', () => {
    let spec: ConnectionSpec;
    let client: MongoClient;
    let db: Db;
    const settings = () => vscode.workspace.getConfiguration('queryPlanInspector');
    const customersQuery = "db.customers.find({ status: 'pending', score: { $gt: 900 } }).sort({ created: -1 }).limit(10)";

    /** Scratch collections of trials, on the samples database. */
    const scratch = async (): Promise<string[]> => (await db.listCollections({ name: { $regex: '^qpi_trial_' } }, { nameOnly: true }).toArray()).map((c) => c.name);
    const indexNames = async (collection: string): Promise<string[]> => (await db.collection(collection).indexes()).map((ix) => String(ix.name)).sort();

    before(async () => {
      const added = await vscode.commands.executeCommand<ConnectionSpec>(Commands.addConnection, { name: 'trial mongo', uri: env('QPI_SAMPLES_MONGO_URI'), test: false });
      assert.ok(added, handle.lastError());
      spec = added;
      client = new MongoClient(env('QPI_SAMPLES_MONGO_URI'));
      await client.connect();
      db = client.db();
      await settings().update('mongodb.trialSampleSize', 500, vscode.ConfigurationTarget.Global);
    });

    after(async () => {
      await settings().update('mongodb.trialSampleSize', undefined, vscode.ConfigurationTarget.Global);
      await client?.close();
    });

    it('explains the orders query of the playground, verifies the kept index on a sample after asking, and drops the scratch collection', async () => {
      const indexesBefore = await indexNames('orders');
      const editor = await openAt('orders.mongodb.js', 'db.orders.find({ country_id: 1, order_details');
      await vscode.commands.executeCommand(Commands.selectConnection, { id: spec.id, uri: editor.document.uri.toString() });
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
      assert.ok(r, `explain failed: ${handle.lastError()}`);
      const keep = shownSuggestions().find((v) => v.keep === 'country_id_1_order_details.product_id_1_created_at_-1');
      assert.ok(keep, `no "keep using" among: ${r.suggestions.join(' | ')}`);
      assert.equal(keep.verifiable, true);
      assert.equal(keep.status, 'unverified');

      const asked = answerConsent(true);
      const t0 = Date.now();
      const seen = await verifyFromPanel(keep.id);
      const last = lastOf(seen, keep.id);
      console.log(`    trial in ${Date.now() - t0} ms: ${last.status}: ${last.detail}`);
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.kind, 'mongo-trial');
      assert.match(asked[0]!.detail, /500 documents/, 'the question does not give the sample size of the setting');
      assert.match(asked[0]!.detail, /scratch collection/);
      assert.ok(seen.some((x) => x.status === 'verifying' && /copying a random sample of 500 documents of \S+ or more \(at most 20,000\)/i.test(x.detail ?? '')), 'no progress of the copy step');
      assert.equal(last.status, 'verified', `the ESR index should beat a collection scan: ${last.detail}`);
      const v = last.verdict;
      assert.ok(v, 'no verdict figures');
      assert.equal(v.method, 'sampled');
      // The setting is the least the trial copies: a measurement sizes its sample for the query.
      assert.ok((v.sampleSize ?? 0) >= 500, `sample size ${v.sampleSize}`);
      assert.ok((v.collectionSize ?? 0) > 500, `collection size ${v.collectionSize}`);
      assert.equal(v.beforeLabel, 'collection scan');
      // Kept: today's plan already reads that index, so the measured work stays where it is.
      assert.ok(v.after! <= v.before!, `work ${v.before} -> ${v.after}`);
      assert.ok(v.figuresBefore?.['docsExamined'] !== undefined && v.figuresAfter?.['keysExamined'] !== undefined);
      assert.match(last.detail ?? '', /[\d,]+ of [\d,]+ documents/);
      // The scratch collection is gone, and the real collection kept exactly its indexes.
      assert.deepEqual(await scratch(), []);
      assert.deepEqual(await indexNames('orders'), indexesBefore);
    });

    it('with mongodb.measureOnExplain on, measures right after Explain without a modal, and drops the scratch collection', async () => {
      const indexesBefore = await indexNames('customers');
      await settings().update('mongodb.measureOnExplain', true, vscode.ConfigurationTarget.Global);
      try {
        const asked = answerConsent(false);
        const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { text: customersQuery, engine: 'mongodb', connectionId: spec.id });
        assert.ok(r, `explain failed: ${handle.lastError()}`);
        assert.equal(r.measuring, true);
        await handle.explainer.measuring;
        const shown = shownSuggestions();
        const measured = shown.filter((v) => v.status === 'verified' || v.status === 'rejected');
        console.log(`    measured at once: ${measured.map((v) => `${v.ddl ?? v.keep} ${v.status}`).join(' | ')}`);
        assert.deepEqual(asked, [], 'the setting is the consent: no modal');
        assert.ok(measured.length > 0, `nothing measured: ${shown.map((v) => `${v.status} ${v.statusDetail ?? ''}`).join(' | ')}`);
        assert.deepEqual(await scratch(), []);
        assert.deepEqual(await indexNames('customers'), indexesBefore);
      } finally {
        await settings().update('mongodb.measureOnExplain', undefined, vscode.ConfigurationTarget.Global);
      }
    });

    it('asks once per connection whether to measure on Explain: Always measures now and at the next Explain without asking again', async () => {
      const indexesBefore = await indexNames('customers');
      // The explains above asked too and went unanswered (not asked again in this window): start afresh.
      await handle.parts.measureChoices.set(spec.id, undefined);
      let asked = 0;
      handle.prompts.measureAnswer = async () => {
        asked++;
        return 'always';
      };
      try {
        for (const round of [1, 2]) {
          const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { text: customersQuery, engine: 'mongodb', connectionId: spec.id });
          assert.ok(r, `explain failed: ${handle.lastError()}`);
          // Wrapped: an async check returning the promise itself would be awaited through.
          const measuring = await until(`the measurement of round ${round}`, () => (handle.explainer.measuring ? { done: handle.explainer.measuring } : undefined), { timeoutMs: 20_000 });
          await measuring.done;
          const measured = shownSuggestions().filter((v) => v.status === 'verified' || v.status === 'rejected');
          assert.ok(measured.length > 0, `round ${round}: nothing measured`);
        }
        assert.equal(asked, 1, 'asked once for the connection');
        assert.equal(handle.parts.measureChoices.get(spec.id), 'always');
        assert.deepEqual(await scratch(), []);
        assert.deepEqual(await indexNames('customers'), indexesBefore);
      } finally {
        delete handle.prompts.measureAnswer;
        await handle.parts.measureChoices.set(spec.id, undefined);
      }
    });

    it('verifies the new indexes of a query without one: every index tried gets its verdict, none is left on the collection', async () => {
      const indexesBefore = await indexNames('customers');
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { text: customersQuery, engine: 'mongodb', connectionId: spec.id });
      assert.ok(r, `explain failed: ${handle.lastError()}`);
      const creates = shownSuggestions().filter((v) => v.ddl?.startsWith('db.customers.createIndex'));
      assert.ok(creates.length >= 2, `suggestions: ${r.suggestions.join(' | ')}`);
      assert.ok(creates.every((v) => v.verifiable));
      answerConsent(true);
      const seen = await verifyFromPanel(creates[0]!.id);
      for (const c of creates) {
        const last = lastOf(seen, c.id);
        console.log(`    ${c.ddl}: ${last.status} ${last.verdict?.before} -> ${last.verdict?.after}`);
        assert.ok(last.status === 'verified' || last.status === 'rejected', `${c.ddl} ended ${last.status}: ${last.detail}`);
        assert.equal(last.verdict?.beforeLabel, 'today');
        assert.ok(last.verdict?.figuresBefore?.['keysExamined'] !== undefined && last.verdict?.figuresAfter?.['keysExamined'] !== undefined);
        assert.match(last.verdict?.planAfter ?? '', /IXSCAN/);
      }
      assert.deepEqual(await scratch(), []);
      assert.deepEqual(await indexNames('customers'), indexesBefore);
    });

    it('Cancel during the trial stops it on the server and still drops the scratch collection', async () => {
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { text: customersQuery, engine: 'mongodb', connectionId: spec.id });
      assert.ok(r, handle.lastError());
      const first = shownSuggestions().find((v) => v.verifiable && v.ddl?.startsWith('db.customers.createIndex'));
      assert.ok(first);
      answerConsent(true);
      let pressed = false;
      // Cancel once the sample is copied and indexed, while the query runs on it: the scratch collection exists then.
      const seen = await verifyFromPanel(first.id, (m) => {
        if (!pressed && m.status === 'verifying' && /running the query on the sample/i.test(m.detail ?? '')) {
          pressed = true;
          assert.equal(handle.cancelRunningExplain(), true, 'nothing to cancel while the trial runs');
        }
      });
      assert.ok(pressed, `the trial never reached its explain step: ${seen.map((x) => `${x.status} ${x.detail ?? ''}`).join(' / ')}`);
      const last = lastOf(seen, first.id);
      assert.equal(last.status, 'unverified');
      assert.match(last.detail ?? '', /^Cancelled: .*scratch collection was dropped\.$/);
      assert.deepEqual(await scratch(), []);
      const running = async () => ((await client.db('admin').command({ currentOp: true, 'command.comment': { $regex: '^qpi-trial' } })).inprog as unknown[]).length;
      await until('no trial operation left on the server', async () => (await running()) === 0, { timeoutMs: 5_000, pauseMs: 100 });
    });

    it('declining the trial runs nothing on the server', async () => {
      const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { text: customersQuery, engine: 'mongodb', connectionId: spec.id });
      assert.ok(r, handle.lastError());
      const first = shownSuggestions().find((v) => v.verifiable);
      assert.ok(first);
      const asked = answerConsent(false);
      const seen = await verifyFromPanel(first.id);
      assert.equal(asked.length, 1);
      assert.deepEqual(seen.map((x) => x.status), ['unverified']);
      assert.match(seen[0]!.detail ?? '', /declined/);
      assert.deepEqual(await scratch(), []);
    });

    it('a query on a family of collections is explained and verified on the largest, and Create Index builds on it only, naming the other', async () => {
      const orders = (n: number) => Array.from({ length: n }, (_, i) => ({ status: i % 10 === 0 ? 'open' : 'done', created: i }));
      await db.collection('tenant_orders_a').insertMany(orders(300));
      await db.collection('tenant_orders_b').insertMany(orders(2_000));
      try {
        // The folder of the samples is bound to this connection (the first test): Create Index builds there.
        await openAt('orders.mongodb.js', 'db.orders.find({ country_id: 1, order_details');
        const text = 'db.getCollection("tenant_orders_*").find({ status: "open" }).sort({ created: -1 }).limit(20)';
        const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, { text, engine: 'mongodb', connectionId: spec.id });
        assert.ok(r, `explain failed: ${handle.lastError()}`);
        assert.equal(r.collection, 'tenant_orders_b');
        assert.equal(r.title, 'tenant_orders_b.find (the largest of 2 collections of the family tenant_orders_*)');
        const first = shownSuggestions().find((v) => v.verifiable && v.ddl?.startsWith('db.tenant_orders_b.createIndex'));
        assert.ok(first, `suggestions: ${r.suggestions.join(' | ')}`);
        answerConsent(true);
        const last = lastOf(await verifyFromPanel(first.id), first.id);
        assert.equal(last.status, 'verified', last.detail);
        const asked = answerConsent(true);
        const session = handle.panel()?.session;
        assert.ok(session, 'no session after a live explain');
        const outcome = await session.build(first.id);
        assert.equal(outcome.status, 'created', outcome.detail);
        assert.match(asked[0]!.detail, /creates the index on tenant_orders_b only, one collection of the family tenant_orders_\*; the others \(tenant_orders_a\) are left as they are/);
        assert.equal((await indexNames('tenant_orders_b')).length, 2);
        assert.deepEqual(await indexNames('tenant_orders_a'), ['_id_']);

        // The language server's "Create index..." names the family: the build goes to the largest too.
        const folder = vscode.workspace.workspaceFolders![0]!.uri;
        const args: CreateIndexArgs = { uri: vscode.Uri.joinPath(folder, 'orders.mongodb.js').toString(), engine: 'mongodb', target: 'tenant_orders_*', createText: 'db.getCollectionNames().filter((n) => /^tenant_orders_.+$/.test(n)).forEach((n) => db.getCollection(n).createIndex({created: 1}))' };
        const fromServer = answerConsent(true);
        const built = await vscode.commands.executeCommand<CreateIndexOutcome>(CREATE_INDEX, args);
        assert.equal(built?.status, 'created', built?.detail);
        assert.match(fromServer[0]!.detail, /^db\.getCollection\("tenant_orders_b"\)\.createIndex\(\{created: 1\}\)\n\nIt creates the index on tenant_orders_b only/);
        assert.ok((await indexNames('tenant_orders_b')).includes('created_1'));
        assert.deepEqual(await indexNames('tenant_orders_a'), ['_id_']);
      } finally {
        await db.collection('tenant_orders_a').drop().catch(() => undefined);
        await db.collection('tenant_orders_b').drop().catch(() => undefined);
      }
    });
  });
}
