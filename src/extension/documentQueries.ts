// The queries of a document, for Explain at the cursor and the Compare lens: the language server's
// (ListQueries), the same queries its Explain lens is drawn above, so the lens and the context menu pick
// the same query and the extension host does not read the file again. Where the server has none to give
// (its client not started yet or stopped, a document it does not open: another language or scheme, one
// over its per-file caps, or one it has not read yet), Explain reads the document with the extension's
// own finder (targets.ts).

import * as vscode from 'vscode';
import { loadSqlParser, type QueryTarget } from '../core/index';
import type { ListedQuery } from '../protocol/languageServer';
import { MAX_FILE_QUERIES, underCharacterCap } from './caps';
import { prismaSchemasRead, queryKind, targetsOf } from './targets';

/** The documents the language server opens: SQL, JavaScript and TypeScript files and playgrounds. */
export const SERVER_DOCUMENTS = [
  ...['file', 'untitled'].flatMap((scheme) => ['sql', 'javascript', 'typescript', 'javascriptreact', 'typescriptreact'].map((language) => ({ scheme, language }))),
  { pattern: '**/*.mongodb.js' },
];

export class DocumentQueries {
  private ask: ((uri: string) => Promise<ListedQuery[]>) | undefined;

  /** The language client lends its ListQueries request while it runs. */
  serve(ask: (uri: string) => Promise<ListedQuery[]>): vscode.Disposable {
    this.ask = ask;
    return { dispose: () => this.ask === ask && (this.ask = undefined) };
  }

  /**
   * The server's queries of the document; undefined when it has none to give: not running, a document it
   * does not read, or a list cut at its per-file cap of queries.
   */
  async listed(doc: vscode.TextDocument): Promise<ListedQuery[] | undefined> {
    if (!this.ask || vscode.languages.match(SERVER_DOCUMENTS, doc) === 0 || !underCharacterCap(doc.getText().length)) return undefined;
    const listed = await this.ask(doc.uri.toString()).catch(() => undefined);
    return listed && listed.length > 0 && listed.length < MAX_FILE_QUERIES ? listed : undefined;
  }

  /** The queries Explain picks from: the server's, else the extension's own finder's. */
  async of(doc: vscode.TextDocument): Promise<QueryTarget[]> {
    const listed = await this.listed(doc);
    if (listed) return listed;
    await loadSqlParser();
    if (queryKind(doc) === 'script') await prismaSchemasRead();
    return targetsOf(doc);
  }
}
