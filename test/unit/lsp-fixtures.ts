// Shared by the language-server tests: runs the server's service over a fixture of test/fixtures/lsp/
// through a fake connection and describes what it found in a form the expectation files hold (ranges
// as line:column, 1-based, with the text they cover). The expectation files are written and checked by
// hand: no test writes them, so a change of behaviour shows as a failure, never as a new expectation.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Diagnostic, PublishDiagnosticsParams } from 'vscode-languageserver';
import type { NotificationType } from '../../src/protocol/messages';
import { InlineAdviceService, type ServerPort } from '../../src/server/service';

export const LSP_FIXTURES = join(__dirname, '..', 'fixtures', 'lsp');

export const LANGUAGE: Record<string, string> = { '.ts': 'typescript', '.js': 'javascript', '.sql': 'sql' };

export function languageOf(file: string): string {
  const ext = file.slice(file.lastIndexOf('.'));
  return LANGUAGE[ext] ?? 'plaintext';
}

export class FakePort implements ServerPort {
  readonly published: PublishDiagnosticsParams[] = [];
  readonly notifications: { method: string; params: unknown }[] = [];
  readonly logs: string[] = [];
  sendDiagnostics(p: PublishDiagnosticsParams): void {
    this.published.push(p);
  }
  sendNotification<P>(type: NotificationType<P, 'server'>, params: P): void {
    this.notifications.push({ method: type.method, params });
  }
  /** The parameters of each notification the server sent with this descriptor, oldest first. */
  sent<P>(type: NotificationType<P>): P[] {
    return this.notifications.filter((n) => n.method === type.method).map((n) => n.params as P);
  }
  log(m: string): void {
    this.logs.push(m);
  }
  last(uri: string): Diagnostic[] {
    const p = [...this.published].reverse().find((x) => x.uri === uri);
    return p ? p.diagnostics : [];
  }
}

export function readFixture(name: string): string {
  return readFileSync(join(LSP_FIXTURES, name), 'utf8');
}

export function uriOf(name: string): string {
  return `file:///fixtures/${name}`;
}

/** Opens a fixture in a fresh service; returns the service, the port and the text. */
export function openFixture(name: string, options: Partial<ConstructorParameters<typeof InlineAdviceService>[1]> = {}) {
  const port = new FakePort();
  const service = new InlineAdviceService(port, { debounceMs: 0, codeLens: true, maxTextLength: 4_000_000, ...options });
  const text = readFixture(name);
  const uri = uriOf(name);
  service.open(uri, languageOf(name), 1, text);
  return { service, port, text, uri };
}

export function lineColumn(text: string, offset: number): string {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return `${line}:${offset - start + 1}`;
}

export function offsetOf(text: string, pos: { line: number; character: number }): number {
  let off = 0;
  for (let l = 0; l < pos.line; l++) off = text.indexOf('\n', off) + 1;
  return off + pos.character;
}

export interface DescribedDiagnostic {
  code: string;
  severity: number;
  at: string;
  text: string;
}

export function describeDiagnostics(text: string, diagnostics: Diagnostic[]): DescribedDiagnostic[] {
  return diagnostics.map((d) => {
    const s = offsetOf(text, d.range.start);
    const e = offsetOf(text, d.range.end);
    return { code: String(d.code), severity: d.severity ?? 0, at: `${lineColumn(text, s)}-${lineColumn(text, e)}`, text: text.slice(s, e) };
  });
}

export interface DescribedQuery {
  engine: string;
  at: string;
  text: string;
}

export function describeQueries(text: string, queries: { engine: string; start: number; end: number }[]): DescribedQuery[] {
  return queries.map((q) => {
    const t = text.slice(q.start, q.end);
    return { engine: q.engine, at: `${lineColumn(text, q.start)}-${lineColumn(text, q.end)}`, text: t.length > 120 ? `${t.slice(0, 117)}...` : t };
  });
}
