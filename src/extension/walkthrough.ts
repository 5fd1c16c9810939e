// The commands behind the Getting Started walkthrough's buttons (package.json contributes.walkthroughs):
// each does one step of a first hour on the sample folder (explain a sample query, show the plan, verify
// the first suggestion, create its index), and each is an ordinary command too, usable from the palette
// on whatever plan the panel shows. The walkthrough is offered once per install, the first time the
// extension starts (firstRun.ts decides).

import * as vscode from 'vscode';
import { UserError } from './commands';
import type { Explainer, ExplainSummary } from './explain';
import { PlanPanel } from './planPanel';
import { loadSqlParser } from '../core/index';
import { targetsOf } from './targets';
import { claimWalkthroughOffer, WALKTHROUGH_ID } from './firstRun';
import type { Log } from './log';

/**
 * Offers the walkthrough when this install has never offered it: a notification whose button opens it.
 * Resolves true when it was offered now (the extension's tests read it).
 */
export async function offerWalkthrough(context: vscode.ExtensionContext, log: Log): Promise<boolean> {
  if (!(await claimWalkthroughOffer(context.globalState))) return false;
  log.info('First start on this install: the walkthrough is offered (Help > Welcome > Walkthroughs opens it later).');
  void vscode.window.showInformationMessage('Query Plan Inspector is installed. Its walkthrough explains a query, reads the plan and verifies an index on a sample folder, in six steps.', 'Open Walkthrough').then((choice) => {
    if (choice) void vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, false);
  });
  return true;
}

export interface SampleArgs {
  /** A file of the folder, by name (orders.sql, customers.mongodb.js). */
  file: string;
  /** Text inside the query to explain; the file's first query when absent. */
  match?: string;
}

/** Opens a sample file of the workspace, puts the cursor in the query, and explains it. */
export async function explainSample(explainer: Explainer, args: SampleArgs | undefined): Promise<ExplainSummary | undefined> {
  const file = args?.file ?? 'orders.sql';
  const [found] = await vscode.workspace.findFiles(`**/${file}`, '**/node_modules/**', 1);
  if (!found) throw new UserError(`No ${file} in this workspace: open the samples folder of Query Plan Inspector (or your own project) and try again.`);
  const doc = await vscode.workspace.openTextDocument(found);
  await loadSqlParser();
  const queries = targetsOf(doc);
  // The match is written as the file spells it, so it is looked for in the file's text, not in the
  // query text the finder normalises.
  const source = doc.getText();
  const q = args?.match !== undefined ? queries.find((x) => source.slice(x.start, x.end).includes(args.match!)) : queries[0];
  if (!q) throw new UserError(`No query${args?.match !== undefined ? ` with ${args.match}` : ''} in ${file}.`);
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  const at = doc.positionAt(q.start);
  editor.selection = new vscode.Selection(at, at);
  editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  return explainer.explain({ uri: doc.uri, start: q.start, end: q.end });
}

function shownPanel(): PlanPanel {
  const panel = PlanPanel.active;
  if (!panel) throw new UserError('No plan is shown yet: explain a query first.');
  return panel;
}

export function showPlan(): void {
  shownPanel().show();
}

/** Verifies the first suggestion of the plan shown that can be verified (a new index before a kept one). */
export async function verifyFirstSuggestion(): Promise<void> {
  const panel = shownPanel();
  const all = panel.suggestions.filter((v) => v.verifiable);
  const first = all.find((v) => v.ddl) ?? all[0];
  if (!first) throw new UserError('The plan shown has no suggestion to verify: explain a query on a connection first.');
  panel.show();
  await panel.measureSuggestion(first.id);
}

/** Creates the index of the first suggestion of the plan shown that has one (the Create Index command asks first). */
export async function createSuggestedIndex(): Promise<void> {
  const panel = shownPanel();
  const first = panel.suggestions.find((v) => v.ddl);
  if (!first) throw new UserError('The plan shown suggests no new index: its query is served by the indexes that exist.');
  await panel.buildIndex(first.id);
}
