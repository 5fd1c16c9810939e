// The language server in the real host: opening a file shows its diagnostics (no connection needed),
// the hover shows how the fields are classified and the index key order, a quick fix applies and its
// diagnostic goes away, and the "Suggest index" lens sits beside the one "Explain" lens.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import * as vscode from 'vscode';
import { until as waitUntil } from '../../until';
import type { CreateIndexOutcome } from '../../../src/extension/build';
import { Commands } from '../../../src/extension/commands';
import type { ConnectionSpec } from '../../../src/extension/connections/spec';
import type { ExtensionHandle } from '../../../src/extension/main';
import type { ExplainSummary } from '../../../src/extension/explain';

export const EXTENSION_ID = 'query-plan-inspector.query-plan-inspector';

/** The shared bounded wait with the host's longer deadline: the extension host and its server start slowly. */
export function until<T>(what: string | (() => string), get: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  return waitUntil(what, get, { timeoutMs, pauseMs: 100 });
}

function ours(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Query Plan Inspector');
}

function codeOf(d: vscode.Diagnostic): string {
  return typeof d.code === 'object' ? String(d.code.value) : String(d.code);
}

const SOURCE = [
  "import type { Db } from 'mongodb';",
  '',
  'export async function customerByEmail(db: Db) {',
  "  const pipeline = [{ $project: { name: 1, email: '$contact.email' } }, { $match: { email: 'a@example.com' } }];",
  "  return db.collection('customers').aggregate(pipeline).toArray();",
  '}',
  '',
  'export async function recent(db: Db, name: string) {',
  "  return db.collection('orders').find({ country_id: 1, name: /smith/i }).sort({ created_at: -1 }).limit(10).toArray();",
  '}',
  '',
].join('\n');

export function languageServerTests(): void {
  describe('language server', () => {
    let doc: vscode.TextDocument;

    before(async () => {
      doc = await vscode.workspace.openTextDocument({ language: 'typescript', content: SOURCE });
      await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
    });

    it('shows the diagnostics of a file without a connection', async () => {
      const ds = await until('the language server diagnostics', () => {
        const d = ours(doc.uri);
        return d.length >= 2 ? d : undefined;
      });
      const described = ds.map((d) => `${codeOf(d)} ${d.range.start.line + 1}:${d.range.start.character + 1} ${doc.getText(d.range)}`).sort();
      assert.deepEqual(described, ['qpi.match-after-rename 4:85 email', 'qpi.regex-case-insensitive 9:62 /smith/i']);
    });

    it('hovers a query with each field classified and the index it wants', async () => {
      const at = doc.positionAt(doc.getText().indexOf("db.collection('orders')") + 3);
      const hovers = await until('a hover', async () => {
        const h = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, at);
        return h.some((x) => x.contents.some((c) => (c as vscode.MarkdownString).value?.includes('classified as'))) ? h : undefined;
      });
      const text = hovers.flatMap((h) => h.contents.map((c) => (c as vscode.MarkdownString).value ?? String(c))).join('\n');
      assert.match(text, /\| `country_id` \| equality \(=\) \|/);
      assert.match(text, /\| `name` \| range \(case-insensitive regex\) \|/);
      assert.match(text, /\| `created_at` \| sort descending \|/);
      assert.match(text, /Index it wants/);
    });

    it('applies "Move $match before $project" and the diagnostic goes away', async () => {
      const d = ours(doc.uri).find((x) => codeOf(x) === 'qpi.match-after-rename')!;
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, d.range);
      const fix = actions.find((a) => a.title === 'Move $match before $project');
      assert.ok(fix?.edit, `no fix among ${actions.map((a) => a.title).join(' | ')}`);
      assert.ok(actions.some((a) => a.title === 'Copy createIndex: db.customers.createIndex({"contact.email": 1})'), actions.map((a) => a.title).join(' | '));
      assert.equal(await vscode.workspace.applyEdit(fix.edit), true);
      assert.match(doc.getText(), /const pipeline = \[\{ \$match: \{ 'contact\.email': 'a@example\.com' \} \}, \{ \$project: \{ name: 1, email: '\$contact\.email' \} \}\];/);
      await until('the diagnostic to go away', () => (ours(doc.uri).some((x) => codeOf(x) === 'qpi.match-after-rename') ? undefined : true));
    });

    it('offers Explain on a query, with the query text its constants give', async () => {
      const at = doc.positionAt(doc.getText().indexOf("db.collection('customers')") + 3);
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, new vscode.Range(at, at));
      const explain = actions.find((a) => a.title === 'Explain this query');
      assert.ok(explain?.command, actions.map((a) => a.title).join(' | '));
      const args = explain.command.arguments?.[0] as { text?: string };
      assert.equal(args.text, 'db.customers.aggregate([{$match: {"contact.email": "a@example.com"}}, {$project: {name: 1, email: "$contact.email"}}])');
    });

    it('with the folder\'s connection, advises with the indexes and the plan the server chose', async () => {
      const uri = process.env.QPI_SAMPLES_MONGO_URI;
      assert.ok(uri, 'QPI_SAMPLES_MONGO_URI is not set: run these tests with npm run test:host');
      const handle = vscode.extensions.getExtension<ExtensionHandle>(EXTENSION_ID)!.exports;
      const spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.addConnection, { name: 'inline mongo', uri, test: false });
      assert.ok(spec, handle.lastError());
      const folder = vscode.workspace.workspaceFolders![0]!.uri;
      const repo = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, 'app', 'ordersRepository.ts'));
      await vscode.window.showTextDocument(repo, vscode.ViewColumn.One);
      // Binding the folder makes the extension send the index lists and answer the background explains.
      await handle.parts.bindings.set(repo.uri, spec);
      const lineOf = (needle: string) => repo.positionAt(repo.getText().indexOf(needle)).line;
      const seen = () => ours(repo.uri).map((x) => `${x.range.start.line + 1}: ${codeOf(x)} ${x.message}`).join('\n');
      const ds = await until(() => `diagnostics from the server's plans; the diagnostics were:\n${seen()}`, () => {
        const d = ours(repo.uri);
        const onFind = d.filter((x) => x.range.start.line === lineOf("db.collection('orders')")).map(codeOf);
        const onAgg = d.filter((x) => x.range.start.line === lineOf("db.collection('customers')")).map(codeOf);
        // The MongoDB queries' plans come from this connection (the file's SQL may have another's).
        const mongoLines = new Set([lineOf("db.collection('orders')"), lineOf("db.collection('customers')")]);
        const fresh = d.every((x) => !mongoLines.has(x.range.start.line) || !x.message.startsWith('The plan ') || x.message.startsWith('The plan inline mongo '));
        // The plan and the collection's index list come in separate answers: the message names the index
        // once both have arrived.
        const indexed = d.some((x) => codeOf(x) === 'qpi.plan-full-scan' && x.message.includes('contact.email_1'));
        return fresh && indexed && onFind.includes('qpi.plan-uses-index') && onAgg.includes('qpi.plan-full-scan') ? d : undefined;
      }, 45_000);
      const full = ds.find((x) => codeOf(x) === 'qpi.plan-full-scan')!;
      assert.match(full.message, /^The plan inline mongo chose reads the whole customers collection \(.*COLLSCAN.*, queryPlanner\)\. The index contact\.email_1 has the keys it needs, but the query as written cannot use it\.$/);
      const uses = ds.find((x) => codeOf(x) === 'qpi.plan-uses-index')!;
      assert.match(uses.message, /country_id_1_order_details\.product_id_1_created_at_-1/);
    });

    /** A connection to a sample server (from its environment variable), and a sample file bound to it. */
    async function openBound(envName: string, name: string, fileName: string) {
      const uri = process.env[envName];
      assert.ok(uri, `${envName} is not set: run these tests with npm run test:host`);
      const ext = vscode.extensions.getExtension<ExtensionHandle>(EXTENSION_ID)!;
      const handle = ext.exports;
      const spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.addConnection, { name, uri, test: false });
      assert.ok(spec, handle.lastError());
      const folder = vscode.workspace.workspaceFolders![0]!.uri;
      const file = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, fileName));
      const editor = await vscode.window.showTextDocument(file, vscode.ViewColumn.One);
      await handle.parts.bindings.set(file.uri, spec);
      return { uri, ext, handle, file, editor };
    }

    /** `qpi advise --json` from a terminal, on the query text the language server's Explain action carries at `at`. */
    async function cliAdviceAt(ext: vscode.Extension<ExtensionHandle>, file: vscode.TextDocument, at: vscode.Position, uri: string, ...flags: string[]) {
      const explainAction = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', file.uri, new vscode.Range(at, at)))
        .find((a) => a.title === 'Explain this query');
      const text = (explainAction?.command?.arguments?.[0] as { text?: string } | undefined)?.text;
      assert.ok(text, 'the Explain action carries the query text');
      const cli = spawnSync(process.execPath, [join(ext.extensionPath, 'dist', 'cli.js'), 'advise', '--query', text, '--uri', uri, ...flags, '--json'], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(cli.status, 0, cli.stderr);
      return { json: JSON.parse(cli.stdout) as { suggestions: { createIndex: string | null }[] }, out: cli.stdout };
    }

    it('one verdict for one query: the lens, the squiggle, the plan panel and qpi advise name the same index', async () => {
      const { uri, ext, handle, file, editor } = await openBound('QPI_SAMPLES_MONGO_URI', 'one verdict mongo', 'customers.mongodb.js');
      const offset = file.getText().indexOf("db.customers.find({ status: 'pending'");
      const line = file.positionAt(offset).line;
      // The lens, once the connection's verdict is in (not "Checking indexes on ...").
      const lens = await until('the lens with the connection\'s verdict', async () => {
        const all = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', file.uri, 20);
        const mine = all.filter((l) => l.range.start.line === line && l.command?.title.includes('Suggest index'));
        const checking = all.some((l) => l.range.start.line === line && l.command?.title.includes('Checking indexes'));
        return !checking && mine[0] ? mine[0] : undefined;
      }, 45_000);
      const fromLens = (lens.command!.arguments![0] as { createText: string }).createText;
      // The squiggle's quick fix copies the same command.
      // The diagnostics are published on their own (after the lens's verdict, or just before it).
      const squiggles = await until('the query without its index underlined', async () => {
        const s = ours(file.uri).filter((d) => d.range.start.line === line);
        return s.length > 0 ? s : undefined;
      }, 15_000);
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', file.uri, squiggles[0]!.range);
      const copies = actions.filter((a) => a.title.startsWith('Copy createIndex: ')).map((a) => a.title.slice('Copy createIndex: '.length));
      assert.deepEqual([...new Set(copies)], [fromLens], `quick fixes: ${actions.map((a) => a.title).join(' | ')}`);
      // The plan panel, explaining the query on the same connection.
      const at = file.positionAt(offset + 1);
      editor.selection = new vscode.Selection(at, at);
      const explained = await vscode.commands.executeCommand<{ suggestions: string[] } | undefined>(Commands.explainQuery);
      assert.ok(explained, handle.lastError());
      const shown = handle.panel()?.lastMessage;
      assert.equal(shown?.type, 'showPlan');
      const panelFirst = shown?.type === 'showPlan' ? shown.suggestions?.find((v) => v.ddl)?.ddl : undefined;
      assert.equal(panelFirst, fromLens, `panel: ${explained.suggestions.join(' | ')}`);
      // qpi advise on the same server, from a terminal.
      const { json, out } = await cliAdviceAt(ext, file, at, uri);
      assert.equal(json.suggestions.find((x) => x.createIndex)?.createIndex, fromLens, out.slice(0, 2000));
      console.log(`      lens, squiggle, panel and qpi advise: ${fromLens}`);
    });

    it('one verdict on PostgreSQL, measured at once after Explain: the rules agree with the plan\'s finding, then the panel\'s measured list, the lens and qpi advise name the same index', async () => {
      const { uri, ext, handle, file, editor } = await openBound('QPI_SAMPLES_PG_URI', 'one verdict pg', 'orders.sql');
      // The join of orders and their lines: orders has its index, the lines are filtered row by row.
      const offset = file.getText().indexOf('SELECT o.id, o.created_at');
      const line = file.positionAt(offset).line;
      const lensAt = async (): Promise<vscode.CodeLens[]> => {
        const all = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', file.uri, 20);
        return all.filter((l) => l.range.start.line === line);
      };
      const createOf = (l: vscode.CodeLens | undefined): string | undefined => (l?.command?.arguments?.[0] as { createText?: string } | undefined)?.createText;
      // Before anything is measured: the rules' lens names the table the plan will say is filtered.
      const rules = await until('the lens with the connection\'s verdict', async () => {
        const mine = await lensAt();
        return !mine.some((l) => l.command?.title.includes('Checking indexes')) ? mine.find((l) => l.command?.title.includes('Suggest index')) : undefined;
      }, 45_000);
      assert.ok(!rules.command!.title.includes('(measured)'), rules.command!.title);
      assert.match(createOf(rules) ?? '', /ON order_details /, `the rules' lens: ${createOf(rules)}`);
      const at = file.positionAt(offset + 1);
      editor.selection = new vscode.Selection(at, at);
      const explained = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery);
      assert.ok(explained, handle.lastError());
      assert.ok(explained.findings.includes('pg.rows-removed-by-filter'), explained.findings.join(', '));
      assert.equal(explained.measuring, true, 'PostgreSQL measures at once after an explain');
      await handle.explainer.measuring;
      const shown = handle.panel()?.lastMessage;
      assert.equal(shown?.type, 'showPlan');
      const winner = shown?.type === 'showPlan' ? shown.suggestions?.[0] : undefined;
      assert.equal(winner?.status, 'verified', JSON.stringify(winner));
      const want = winner!.ddl;
      assert.ok(want?.startsWith('CREATE INDEX'), `the measured winner: ${JSON.stringify(winner)}`);
      assert.match(winner!.statusDetail ?? '', /least work of \d+ candidates/);
      // The lens follows: the same cached answer, now in measured order, and says so.
      const measured = await until('the lens with the measured verdict', async () => {
        const lens = (await lensAt()).find((l) => l.command?.title.includes('Suggest index'));
        return createOf(lens) === want && lens!.command!.title.includes('(measured)') ? lens : undefined;
      }, 30_000);
      assert.match(measured.command!.tooltip ?? '', /least work/);
      // qpi advise on the same server, with the text the language server reads: it measures too.
      const { json, out } = await cliAdviceAt(ext, file, at, uri);
      assert.equal(json.suggestions[0]?.createIndex, want, out.slice(0, 2000));
      console.log(`      rules ${createOf(rules)}; measured: the panel, the lens and qpi advise: ${want}`);
    });

    it('the lens follows Create Index (the new index named) and a switch to a connection without that index ("Suggest index")', async () => {
      const { uri, handle, file } = await openBound('QPI_SAMPLES_PG_URI', 'follow pg', 'orders.sql');
      const line = file.positionAt(file.getText().indexOf("SELECT id, created_at FROM orders WHERE country_id = ANY")).line;
      const lensOf = async (): Promise<vscode.CodeLens | undefined> => {
        const all = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', file.uri, 20);
        const mine = all.filter((l) => l.range.start.line === line);
        return mine.some((l) => l.command?.title.includes('Checking indexes')) ? undefined : mine.find((l) => /Suggest index|serves it|Rewrite it to use/.test(l.command?.title ?? ''));
      };
      const suggest = await until('the lens suggesting an index', async () => {
        const l = await lensOf();
        return l?.command?.title.includes('Suggest index') ? l : undefined;
      }, 45_000);
      const wanted = (suggest.command!.arguments![0] as { createText: string }).createText;
      const admin = new pg.Client({ connectionString: uri });
      await admin.connect();
      const before = new Set((await admin.query("SELECT indexname FROM pg_indexes WHERE tablename = 'orders'")).rows.map((r: { indexname: string }) => r.indexname));
      const other = new URL(uri);
      other.pathname = '/qpi_follow';
      try {
        // "Create index..." among the query's code actions, as a user picks it; the modal answered yes.
        const at = file.positionAt(file.getText().indexOf('country_id = ANY'));
        const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', file.uri, new vscode.Range(at, at));
        const create = actions.find((a) => a.title === 'Create index...' && (a.command?.arguments?.[0] as { createText?: string } | undefined)?.createText === wanted);
        assert.ok(create?.command, `no "Create index..." for ${wanted} among: ${actions.map((a) => a.title).join(' | ')}`);
        handle.prompts.consent = async () => true;
        const outcome = await vscode.commands.executeCommand<CreateIndexOutcome>(create.command.command, ...(create.command.arguments ?? []));
        assert.equal(outcome?.status, 'created', outcome?.detail);
        const built = (await admin.query("SELECT indexname FROM pg_indexes WHERE tablename = 'orders'")).rows.map((r: { indexname: string }) => r.indexname).filter((n: string) => !before.has(n));
        assert.equal(built.length, 1, `indexes built: ${built.join(', ')}`);
        // = ANY(...) ORDER BY ... LIMIT: the index serves the UNION ALL rewrite, and the lens says so by name.
        const serves = await until(() => `the lens to name ${built[0]}`, async () => {
          const l = await lensOf();
          return l?.command?.title.includes(`use ${built[0]}`) || l?.command?.title.includes(`Index ${built[0]} serves it`) ? l : undefined;
        }, 30_000);
        console.log(`      after Create Index: ${serves.command!.title}`);

        // Another database with the same table and no such index: the folder switches to it.
        await admin.query('DROP DATABASE IF EXISTS qpi_follow WITH (FORCE)');
        await admin.query('CREATE DATABASE qpi_follow');
        const db = new pg.Client({ connectionString: other.toString() });
        await db.connect();
        try {
          await db.query(`CREATE TABLE orders (id int PRIMARY KEY, country_id int NOT NULL, created_at timestamptz NOT NULL);
            INSERT INTO orders SELECT g, g % 20, now() - g * interval '1 minute' FROM generate_series(1, 20000) g; ANALYZE orders;`);
        } finally {
          await db.end();
        }
        const spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.addConnection, { name: 'follow other', uri: other.toString(), test: false });
        assert.ok(spec, handle.lastError());
        await handle.parts.bindings.set(file.uri, spec);
        const again = await until('the lens to suggest the index again on the other connection', async () => {
          const l = await lensOf();
          return l?.command?.title.includes('Suggest index') ? l : undefined;
        }, 30_000);
        console.log(`      after the switch: ${again.command!.title}`);
        await vscode.commands.executeCommand(Commands.removeConnection, { id: spec.id, confirm: false });
      } finally {
        delete handle.prompts.consent;
        const now = (await admin.query("SELECT indexname FROM pg_indexes WHERE tablename = 'orders'")).rows.map((r: { indexname: string }) => r.indexname);
        for (const n of now.filter((x: string) => !before.has(x))) await admin.query(`DROP INDEX IF EXISTS "${n.replace(/"/g, '""')}"`);
        await admin.query('DROP DATABASE IF EXISTS qpi_follow WITH (FORCE)').catch(() => undefined);
        await admin.end();
      }
    });

    it('puts "Suggest index" beside the one "Explain" above a query', async () => {
      const lenses = await until('the lenses', async () => {
        const l = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri, 20);
        return l.some((x) => x.command?.title.includes('Suggest index')) ? l : undefined;
      });
      const line = doc.positionAt(doc.getText().indexOf("db.collection('orders')")).line;
      const titles = lenses.filter((l) => l.range.start.line === line).map((l) => l.command?.title ?? '');
      assert.equal(titles.filter((t) => t.includes('Explain')).length, 1, `one Explain, not two: ${titles.join(' | ')}`);
      assert.ok(titles.some((t) => t.includes('Suggest index')), titles.join(' | '));
    });
  });
}
