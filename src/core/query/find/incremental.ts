// The one incremental re-parse of a file read in top-level pieces (statements of a script, statements of
// a .sql file): an edit re-reads only the pieces it touched, from the end of the untouched piece before
// to the start of the untouched one after; the pieces after it move by the edit's length. What a piece
// is, how a region is read, how a piece moves and what else an edit invalidates are the language's part.

import { touchedSpan, type TouchedSpan } from './ranges';
import type { FindResult } from './types';

export interface Piece {
  start: number;
  end: number;
}

export abstract class IncrementalIndex<P extends Piece> {
  protected pieces: P[] = [];
  protected text = '';
  protected warnings: string[] = [];

  /** The queries found, in text order, and the warnings of the last read. */
  abstract result(): FindResult;

  update(text: string): void {
    if (this.mustReadAll()) {
      this.readAll(text);
      return;
    }
    const span = touchedSpan(this.pieces, this.text, text);
    if (!span) {
      this.unchanged();
      return;
    }
    const region = this.readRegion(text.slice(span.from, span.to), span.from);
    if (region === undefined) this.regionUnreadable(text, span);
    else this.splice(text, span, region);
  }

  /** True when the last state cannot be edited in place (nothing read yet, or it read with problems). */
  protected abstract mustReadAll(): boolean;
  protected abstract readAll(text: string): void;
  /** The pieces of `slice` (which sits at `offset` in the file), or undefined when it does not read alone. */
  protected abstract readRegion(slice: string, offset: number): P[] | undefined;
  /** What to do when the touched region does not read alone. */
  protected abstract regionUnreadable(text: string, span: TouchedSpan): void;
  /** Moves a piece that lies after the edit. */
  protected abstract move(piece: P, delta: number, oldEnd: number): void;
  /** Called after a splice, with the pieces removed and added. */
  protected abstract spliced(removed: P[], added: P[], span: TouchedSpan): void;
  /** Called when the text did not change. */
  protected unchanged(): void {}

  /** Replaces the touched pieces by `added` and moves the pieces after them. */
  protected splice(text: string, span: TouchedSpan, added: P[]): void {
    const { first, last, delta, oldEnd } = span;
    const removed = this.pieces.slice(first, last + 1);
    const after = this.pieces.slice(last + 1);
    for (const p of after) this.move(p, delta, oldEnd);
    this.pieces = [...this.pieces.slice(0, first), ...added, ...after];
    this.text = text;
    this.spliced(removed, added, span);
  }
}
