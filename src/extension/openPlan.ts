// "Open Plan" for an explain output someone saved or pasted (a file, the clipboard, or the active
// editor), and "Compare Plans..." for two of them. The engine and format are detected by the core's
// loadPlan; a text it cannot read is refused with its one sentence.

import * as vscode from 'vscode';
import { analyze, loadPlan } from '../core/index';
import type { Plan } from '../core/index';
import { Dismissed, UserError } from './commands';
import type { Log } from './log';

/** Where a saved plan is shown: the extension's files (the view's bundle) and the log. */
export interface PanelParts {
  extensionUri: vscode.Uri;
  log: Log;
}
import { PlanPanel } from './planPanel';

/** What Open Plan accepts: a file (explorer context menu), or `{ text }` / `{ uri }` from scripts and tests. */
export type OpenPlanArgs = vscode.Uri | { uri?: string | vscode.Uri; text?: string; source?: 'editor' | 'clipboard' | 'file' } | undefined;

export interface OpenPlanSummary {
  engine: string;
  format: string;
  nodeCount: number;
  findings: string[];
  title: string;
}

const MAX_FILE_BYTES = 64 * 1024 * 1024;

async function readUri(uri: vscode.Uri): Promise<string> {
  const stat = await vscode.workspace.fs.stat(uri);
  if (stat.size > MAX_FILE_BYTES) throw new UserError(`${baseName(uri)} is ${Math.round(stat.size / 1048576)} MB, larger than the 64 MB a plan may be.`);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  return new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(uri));
}

function baseName(uri: vscode.Uri): string {
  return uri.path.split('/').pop() ?? uri.toString();
}

/** Reads a plan text; throws the loader's refusal sentence as a UserError. */
function read(text: string, what: string): Plan {
  const result = loadPlan(text);
  if (!result.ok) throw new UserError(`${what} could not be read as a plan: ${lowerFirst(result.refusal)}`);
  return result.plan;
}

function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}

async function pickSource(): Promise<{ text: string; title: string; uri?: vscode.Uri }> {
  const editor = vscode.window.activeTextEditor;
  const items: (vscode.QuickPickItem & { id: 'editor' | 'clipboard' | 'file' })[] = [];
  if (editor) items.push({ id: 'editor', label: '$(file-code) Active editor', description: baseName(editor.document.uri) });
  items.push({ id: 'clipboard', label: '$(clippy) Clipboard', description: 'An explain output you copied' });
  items.push({ id: 'file', label: '$(folder-opened) File...', description: 'A saved explain output (.json, .txt, .yaml, .xml)' });
  const pick = await vscode.window.showQuickPick(items, { title: 'Open Plan', placeHolder: 'Where is the explain output?' });
  if (!pick) throw new Dismissed();
  return sourceText(pick.id);
}

async function sourceText(id: 'editor' | 'clipboard' | 'file'): Promise<{ text: string; title: string; uri?: vscode.Uri }> {
  if (id === 'editor') {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new UserError('No editor is active: open the file that holds the plan first.');
    const sel = editor.selection;
    const text = sel.isEmpty ? editor.document.getText() : editor.document.getText(sel);
    return { text, title: baseName(editor.document.uri), uri: editor.document.uri };
  }
  if (id === 'clipboard') {
    const text = await vscode.env.clipboard.readText();
    if (!text.trim()) throw new UserError('The clipboard is empty: copy an explain output first.');
    return { text, title: 'Plan from the clipboard' };
  }
  const files = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: 'Open Plan', filters: { 'Explain output': ['json', 'txt', 'yaml', 'yml', 'xml', 'log', 'js'], 'All files': ['*'] } });
  if (!files?.[0]) throw new Dismissed();
  return { text: await readUri(files[0]), title: baseName(files[0]), uri: files[0] };
}

export async function openPlan(s: PanelParts, args: OpenPlanArgs): Promise<OpenPlanSummary> {
  let src: { text: string; title: string; uri?: vscode.Uri };
  if (args instanceof vscode.Uri) src = { text: await readUri(args), title: baseName(args), uri: args };
  else if (args?.text !== undefined) src = { text: args.text, title: 'Pasted plan' };
  else if (args?.uri) {
    const uri = typeof args.uri === 'string' ? vscode.Uri.parse(args.uri) : args.uri;
    src = { text: await readUri(uri), title: baseName(uri), uri };
  } else if (args?.source) src = await sourceText(args.source);
  else src = await pickSource();
  const plan = read(src.text, src.title);
  const findings = analyze(plan);
  // A saved plan has no live connection to check suggestions against: it has no session.
  PlanPanel.showPlan(s.extensionUri, s.log, { title: src.title, plan, findings, rawText: src.text }, src.uri ? { uri: src.uri } : undefined);
  for (const w of plan.warnings) s.log.warn(`${src.title}: ${w}`);
  return { engine: plan.engine, format: plan.format, nodeCount: plan.nodes.length, findings: findings.map((f) => f.code), title: src.title };
}

/** Compares two saved plans: `{ before, after }` URIs, or chosen in open dialogs. */
export async function comparePlans(s: PanelParts, args?: { before?: string | vscode.Uri; after?: string | vscode.Uri }): Promise<boolean> {
  const toUri = (u: string | vscode.Uri) => (typeof u === 'string' ? vscode.Uri.parse(u) : u);
  let before = args?.before ? toUri(args.before) : undefined;
  let after = args?.after ? toUri(args.after) : undefined;
  if (!before) {
    const files = await vscode.window.showOpenDialog({ canSelectMany: true, openLabel: 'Compare', title: 'Choose the plan before (or both plans)' });
    if (!files?.length) throw new Dismissed();
    before = files[0];
    if (files.length > 1) after = files[1];
  }
  if (!after) {
    const files = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: 'Compare', title: 'Choose the plan after' });
    if (!files?.[0]) throw new Dismissed();
    after = files[0];
  }
  const b = read(await readUri(before!), baseName(before!));
  const a = read(await readUri(after), baseName(after));
  if (a.engine !== b.engine) throw new UserError('The two plans come from different engines (MongoDB and PostgreSQL) and cannot be compared.');
  PlanPanel.showComparison(s.extensionUri, s.log, {
    title: `${baseName(before!)} → ${baseName(after)}`,
    before: { label: baseName(before!), plan: b, findings: analyze(b) },
    after: { label: baseName(after), plan: a, findings: analyze(a) },
  });
  return true;
}
