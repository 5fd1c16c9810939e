// Small helpers on source text shared by the readers and the adapters.

/** 1-based line and column of a 0-based offset, the way editors and error messages count them. */
export function lineColumn(text: string, pos: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: pos - start + 1 };
}

/** Offsets into the text that was read: `text.slice(start, end)` is the part. */
export interface SourceRange {
  start: number;
  end: number;
}
