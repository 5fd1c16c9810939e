// Diagnostics: each query's findings as squiggles, kept (or moved by lines) where an edit did not touch
// them, with the gate's waivers and ignores said in their message.

import type { Diagnostic } from 'vscode-languageserver';
import { anchorRange, CheckRules, coverOf, expiredOf, expiredSentence, type FoundQuery, type InlineFinding, type SourceRange } from '../../core/index';
import type { DiagnosticData } from '../../protocol/languageServer';
import type { ServerContext } from '../context';
import { coverSentence } from '../covers';
import { rangeOf, type DocState, type Edit, type QueryCovers } from '../documents';

/** The `source` of every diagnostic the server publishes; code actions answer only these. */
export const SOURCE = 'Query Plan Inspector';
const SEVERITY = { warning: 2, information: 3, hint: 4 } as const;

export function diagnosticsOf(ctx: ServerContext, state: DocState, edit?: Edit): Diagnostic[] {
  const out: Diagnostic[] = [];
  const covers = ctx.covers.of(state);
  const today = ctx.covers.today();
  for (const q of state.queries) {
    const entry = ctx.analyses.cached(state, q, false, true);
    const cover = covers.get(q);
    const expired = cover ? expiredOf(cover.waivers, today) : [];
    if (entry.analysis.findings.length === 0 && expired.length === 0) continue;
    const sig = cover?.sig ?? '';
    // Diagnostics built with other waivers or ignores (a comment typed above the query, the lock
    // changed) are built again.
    const last = entry.published?.covers === sig ? entry.published : undefined;
    // A query the edit did not touch keeps its object and its diagnostics: the same objects where the
    // edit came after the text they lie in, the same moved by the lines the edit added or removed
    // where it came before on an earlier line. A keystroke builds only the diagnostics it touched.
    if (last && edit && q.range.start === last.start && edit.p >= last.hi) {
      for (const d of last.diagnostics) out.push(d);
      continue;
    }
    if (last && edit && q.range.start === last.start + edit.delta && edit.oldEnd <= last.lo && edit.endLine < last.loLine) {
      const diagnostics = edit.delta === 0 && edit.lines === 0 ? last.diagnostics : moved(last.diagnostics, q, edit.lines);
      entry.published = { start: q.range.start, line: last.line + edit.lines, character: last.character, diagnostics, covers: sig, lo: last.lo + edit.delta, hi: last.hi + edit.delta, loLine: last.loLine + edit.lines };
      for (const d of diagnostics) out.push(d);
      continue;
    }
    // Without the edit's place (several edits, a new index list), a query at the same line and column
    // keeps its diagnostics.
    const at = state.doc.positionAt(q.range.start);
    if (last && !edit && last.start === q.range.start && last.line === at.line && last.character === at.character) {
      for (const d of last.diagnostics) out.push(d);
      continue;
    }
    let lo = q.range.start;
    let hi = q.range.end;
    let loLine = at.line;
    const diagnostics = entry.analysis.findings.map((f) => {
      const r = anchorRange(q, f.anchor);
      const d = diagnostic(state, q, f, r, today, cover);
      lo = Math.min(lo, r.start);
      hi = Math.max(hi, r.end);
      loLine = Math.min(loLine, d.range.start.line);
      return d;
    });
    // An expired waiver fails `qpi check` whatever the query's findings: the editor says so at the query.
    for (const w of expired) {
      const d: Diagnostic = { range: rangeOf(state, q.range), severity: SEVERITY.warning, code: CheckRules.waiverExpired, source: SOURCE, message: `${expiredSentence(w)} qpi check fails on it until the waiver is renewed in ${cover?.lockFile ?? 'qpi.lock.json'} or the query is fixed.` };
      loLine = Math.min(loLine, d.range.start.line);
      diagnostics.push(d);
    }
    entry.published = { start: q.range.start, line: at.line, character: at.character, diagnostics, covers: sig, lo, hi, loLine };
    for (const d of diagnostics) out.push(d);
  }
  return out;
}

/**
 * Only what finds the finding again travels with the diagnostic: its code and its query. Quick fixes
 * read the rest (the index to build, the rewrite) from the cached analysis, which keeps the published
 * diagnostics of a file with a thousand findings small.
 */
function diagnostic(state: DocState, q: FoundQuery, f: InlineFinding, at: SourceRange, today: string, covers?: QueryCovers): Diagnostic {
  const data: DiagnosticData = { code: f.code, query: { start: q.range.start, end: q.range.end } };
  const cover = covers ? coverOf(f.code, covers.ignores, covers.waivers, today) : undefined;
  // A finding the gate would not fail on (waived in the lock, or ignored by a comment) is information,
  // with the reason in its message: the editor and `qpi check` give one verdict.
  const severity = cover && f.severity === 'warning' ? SEVERITY.information : SEVERITY[f.severity];
  const message = cover ? `${f.message} ${coverSentence(cover, covers?.lockFile)}` : f.message;
  return { range: rangeOf(state, at), severity, code: f.code, source: SOURCE, message, data };
}

/**
 * The diagnostics of a query that moved with the text its findings lie in (an edit before it, on an
 * earlier line): each is `lines` lines further, at the same column. Only the query's offsets in `data`
 * are new; a range that did not move is the same object.
 */
function moved(last: Diagnostic[], q: FoundQuery, lines: number): Diagnostic[] {
  return last.map((d) => {
    const { start, end } = d.range;
    const range = lines === 0 ? d.range : { start: { line: start.line + lines, character: start.character }, end: { line: end.line + lines, character: end.character } };
    // An expired waiver's diagnostic has no finding to find again, so no data.
    if (d.data === undefined) return { range, severity: d.severity, code: d.code, source: SOURCE, message: d.message };
    const data: DiagnosticData = { code: (d.data as DiagnosticData).code, query: { start: q.range.start, end: q.range.end } };
    return { range, severity: d.severity, code: d.code, source: SOURCE, message: d.message, data };
  });
}
