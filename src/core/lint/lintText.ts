// The query lint over one whole file, for the command line: the same finder and the same rules the
// language server runs as you type, with positions as line and column. Without a schema it gives the
// findings that hold whatever the data; with one (index lists) also the collection scans and blocking sorts.

import { findQueries, querySourceKind, scriptDialect, type FinderContext } from '../query/find';
import { lineColumn } from '../text';
import { analyzeQuery, anchorRange, type DocumentSchema, type FindingSeverity } from './analysis';
import type { DiagnosticCode } from './codes';

export interface LintFinding {
  /** 1-based, as editors and compilers print them. */
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: FindingSeverity;
  code: DiagnosticCode;
  message: string;
  engine: 'mongodb' | 'postgres';
  /** The index the rules suggest for the query, as the statement that builds it. */
  suggestion?: string;
}

export interface LintResult {
  /** Queries found in the file. */
  queries: number;
  findings: LintFinding[];
  /** Why parts of the file could not be read (a syntax error), one sentence each. */
  warnings: string[];
}

/**
 * Lints a file's text; the kind of file comes from its name. The SQL parser must be loaded first.
 * `context`: the repository's Prisma schema (so Prisma calls are written with the tables and columns it
 * maps them to, as the language server writes them) and its modules (so imports are followed).
 */
export function lintText(text: string, fileName: string, schema?: DocumentSchema, context: FinderContext = {}): LintResult {
  const kind = querySourceKind('', fileName);
  if (kind === 'other') return { queries: 0, findings: [], warnings: [] };
  const found = findQueries(text, kind, scriptDialect('', fileName), { file: fileName, ...context });
  const findings: LintFinding[] = [];
  for (const q of found.queries) {
    const analysis = analyzeQuery(q, text, schema);
    for (const f of analysis.findings) {
      const range = anchorRange(q, f.anchor);
      const start = lineColumn(text, range.start);
      const end = lineColumn(text, range.end);
      findings.push({
        line: start.line, column: start.column, endLine: end.line, endColumn: end.column,
        severity: f.severity, code: f.code, message: f.message, engine: analysis.engine,
        ...(f.suggestion ? { suggestion: f.suggestion.createText } : {}),
      });
    }
  }
  findings.sort((a, b) => a.line - b.line || a.column - b.column);
  return { queries: found.queries.length, findings, warnings: found.warnings };
}
