// Create Index, the build: shows the exact command and the connection it would run on, asks first, then
// builds the index through the adapters and drops the advice given with the old index list, so every
// face (lens, squiggles, hover, panel) asks again. The language server's code actions and lenses and the
// plan panel's Create Index button all build through here.

import * as vscode from 'vscode';
import { isCollectionFamily, onFamilyMember, otherMembers, parseMongoCreateIndex, type IndexCreationResult } from '../core/index';
import type { CreateIndexArgs } from '../protocol/languageServer';
import { Commands } from './commands';
import type { AdviceHub } from './adviceHub';
import { familyMember, type ConnectionChoice } from './connectionChoice';
import type { Bindings } from './connections/bindings';
import type { Gateway } from './gateway';
import type { Log } from './log';
import type { Prompts } from './prompts';
import { connectionUri, type ConnectionSpec } from './connections/spec';

/** What the Create Index command did: the plan panel shows it under the suggestion. */
export interface CreateIndexOutcome {
  status: 'created' | 'declined' | 'failed';
  /** One sentence: the index built (or found), or why the build failed. */
  detail?: string;
}

/** Create Index, for the language server's actions and the plan panel alike. */
export class IndexBuilder {
  constructor(
    private readonly log: Log,
    private readonly bindings: Bindings,
    private readonly connections: ConnectionChoice,
    private readonly gateway: () => Promise<Gateway>,
    private readonly prompts: Prompts,
    private readonly advice: AdviceHub,
  ) {}

  /**
   * Shows the exact command and the connection it would run on, and asks before anything happens. "Create
   * Index" builds it through the adapters under a cancellable progress notification (cancel stops the build
   * on the server), then drops the advice given with the old index list, so every face asks again. The
   * command can also be copied, or opened as a script for the user's own shell or client.
   */
  async create(args: CreateIndexArgs): Promise<CreateIndexOutcome> {
    const docUri = vscode.Uri.parse(args.uri);
    let spec = this.bindings.get(docUri, args.engine);
    const engineName = args.engine === 'postgres' ? 'PostgreSQL' : 'MongoDB';
    if (!spec) {
      const pick = await vscode.window.showWarningMessage(
        `No ${engineName} connection is bound to this file's folder, so the index cannot be created here yet.`,
        'Choose Connection', 'Copy Command',
      );
      if (pick === 'Copy Command') {
        await vscode.env.clipboard.writeText(args.createText);
        vscode.window.setStatusBarMessage('The index command is on the clipboard.', 4000);
        return { status: 'declined' };
      }
      if (pick !== 'Choose Connection') return { status: 'declined' };
      spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.selectConnection, { engine: args.engine, uri: args.uri });
      if (!spec) return { status: 'declined' };
    }
    if (args.engine === 'mongodb' && isCollectionFamily(args.target)) {
      // The index the language server suggests for a family (`app_users*`) is built on one real collection of it.
      const member = await familyMember(await this.gateway(), spec, connectionUri(spec, await this.connections.password(spec)), args.target, args.database);
      args = { ...args, createText: onFamilyMember(args.createText, args.target, member.name), target: member.name, family: { name: args.target, others: member.others } };
    }
    const where = ` on ${spec.name}`;
    const lock = args.engine === 'postgres'
      ? /\bconcurrently\b/i.test(args.createText)
        ? 'CREATE INDEX CONCURRENTLY does not block writes but takes longer, and runs outside a transaction; if it fails or is cancelled, the invalid index it leaves is dropped.'
        : 'CREATE INDEX blocks writes to the table while it builds; CREATE INDEX CONCURRENTLY does not, but takes longer.'
      : 'The build reads the whole collection and uses memory and I/O while it runs; writes go on meanwhile.';
    const message = `Create this index${where}?`;
    const family = args.family
      ? `\n\nIt creates the index on ${args.target} only, one collection of the family ${args.family.name}; ${args.family.others.length > 0 ? `the others (${otherMembers(args.family.others.map((name) => ({ name })), args.target)}) are left as they are.` : 'no other collection of it is on this server yet.'}`
      : '';
    const detail = `${args.createText}${family}\n\n${lock}${args.reason ? `\n\n${args.reason}` : ''}`;
    let choice: string | undefined;
    if (this.prompts.consent) {
      // Tests answer the modal through the consent hook: agreeing means "Create Index".
      choice = (await this.prompts.consent({ kind: args.engine === 'postgres' ? 'pg-build' : 'mongo-trial', message, detail, accept: 'Create Index' })) ? 'Create Index' : undefined;
    } else {
      choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Create Index', 'Copy Command', 'Open as Script');
    }
    if (choice === 'Create Index') {
      return this.build(args, spec);
    } else if (choice === 'Copy Command') {
      await vscode.env.clipboard.writeText(args.createText);
      vscode.window.setStatusBarMessage('The index command is on the clipboard.', 4000);
    } else if (choice === 'Open as Script') {
      const content = args.engine === 'mongodb'
        ? `// Run in mongosh${where} (or a MongoDB playground).\n${args.database ? `use('${args.database}');\n` : ''}${args.createText}\n`
        : `-- Run with psql${where}.\n${args.createText.replace(/;?$/, ';')}\n`;
      const doc = await vscode.workspace.openTextDocument({ language: args.engine === 'mongodb' ? 'javascript' : 'sql', content });
      await vscode.window.showTextDocument(doc);
    }
    return { status: 'declined' };
  }

  /** Builds the index on the connection, then invalidates the advice about its collection or table. */
  private async build(args: CreateIndexArgs, spec: ConnectionSpec): Promise<CreateIndexOutcome> {
    const mongoSpec = args.engine === 'mongodb' ? parseMongoCreateIndex(args.createText) : undefined;
    if (mongoSpec && !mongoSpec.ok) throw new Error(mongoSpec.error);
    const connectUri = connectionUri(spec, await this.connections.password(spec));
    this.log.info(`Creating an index on ${spec.name}: ${args.createText}`);
    let result: IndexCreationResult;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Creating the index on ${args.target} (${spec.name})`, cancellable: true },
        async (_progress, token) => {
          const controller = new AbortController();
          const sub = token.onCancellationRequested(() => controller.abort());
          try {
            if (mongoSpec?.ok) {
              const mongo = await import('../adapters/mongodb');
              const conn = await mongo.connectMongo({ uri: connectUri, connectTimeoutMs: 10_000 });
              try {
                return await conn.createIndex(mongoSpec.value, { signal: controller.signal, ...(args.database !== undefined ? { database: args.database } : {}) });
              } finally {
                await conn.close();
              }
            }
            const pg = await import('../adapters/postgres');
            const conn = await pg.connectPostgres({ uri: connectUri, connectTimeoutMs: 10_000 });
            try {
              return await conn.createIndex(args.createText, { signal: controller.signal });
            } finally {
              await conn.close();
            }
          } finally {
            sub.dispose();
          }
        },
      );
    } catch (err) {
      const sentence = this.log.clean(`${err instanceof Error ? err.message : String(err)}`.replace(/([^.!?])$/, '$1.'));
      this.log.error(`Create Index on ${spec.name} failed: ${sentence}`, err);
      const cancelled = (err as { kind?: unknown }).kind === 'cancelled';
      const shown = cancelled ? vscode.window.showInformationMessage(sentence, 'Show Log') : vscode.window.showErrorMessage(sentence, 'Show Log');
      void shown.then((c) => c === 'Show Log' && this.log.show());
      return { status: 'failed', detail: sentence };
    }
    for (const note of result.notes) this.log.info(note);
    const seconds = result.durationMs < 1000 ? `${result.durationMs} ms` : `${(result.durationMs / 1000).toFixed(1)} s`;
    const line = result.created
      ? `Index ${result.name} created on ${result.target} (${spec.name}) in ${seconds}.`
      : `Index ${result.name} already existed on ${result.target} (${spec.name}); nothing was built.`;
    this.log.info(line);
    void vscode.window.showInformationMessage(line);
    // The walkthrough's Create step is done however the index was asked for (its button, the panel, a lens).
    void vscode.commands.executeCommand('setContext', 'queryPlanInspector.indexCreated', true);
    // Every face drops what it said with the old index list and asks again: lens, squiggles, hover, panel.
    const target = mongoSpec?.ok ? mongoSpec.value.collection : result.target.split('.').pop()!;
    this.advice.invalidate({ connection: spec.id, targets: [target] });
    return { status: 'created', detail: line };
  }
}
