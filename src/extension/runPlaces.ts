// Where a query that ran is after its file was edited, without the editor API (unit-tested in Node).
// "Compare with previous run" keeps a run under the line its query starts on, so that a query rewritten
// in place (a quick fix) compares with its run before the rewrite; a fix that also inserts lines above
// the query (the keyset fix declares the last value before the statement) moves that line.

/** One change of a document, as the editor reports it: its range before the change, and the text put there. */
export interface LineChange {
  startLine: number;
  startCharacter: number;
  endLine: number;
  endCharacter: number;
  text: string;
}

/**
 * The line a query that started on `line` starts on after the changes. A change wholly above the query
 * (ending at the start of its line at the latest) moves it by the lines it adds or removes; a change on
 * or after its first line leaves that line where it is. The changes are taken from the last in the file
 * to the first, so each range still holds in the text before the ones above it apply.
 */
export function lineAfter(line: number, changes: readonly LineChange[]): number {
  const sorted = [...changes].sort((a, b) => b.startLine - a.startLine || b.startCharacter - a.startCharacter);
  let at = line;
  for (const c of sorted) {
    const above = c.endLine < line || (c.endLine === line && c.endCharacter === 0 && (c.startLine < line || c.text.endsWith('\n')));
    if (!above) continue;
    const added = c.text.split('\n').length - 1;
    at += added - (c.endLine - c.startLine);
  }
  return at;
}
