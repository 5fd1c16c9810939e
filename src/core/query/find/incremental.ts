// The one incremental re-parse of a file read in top-level pieces (statements of a script, statements of
// a .sql file): an edit re-reads only the pieces it touched, from the end of the untouched piece before
// to the start of the untouched one after; the pieces after it move by the edit's length. What a piece
// is, how a region is read, how a piece moves and what else an edit invalidates are the language's part.
//
// The region read again reaches one piece past the edit on either side (a removed separator can merge
// two pieces), so most reads give those neighbours back with the text they had. A neighbour that comes
// back with its old text at its old place (before the edit) or at its old place moved by the edit
// (after it) is the old piece, kept with what was read from it (its queries and their analyses): only
// the pieces whose text changed are read and analysed again.

import { detached, touchedSpan, type KnownChange, type TouchedSpan } from './ranges';
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

  /** Reads `text`, the file's new version; `known`, when given, bounds what changed since the last one. */
  update(text: string, known?: KnownChange): void {
    if (this.mustReadAll()) {
      this.readAll(text);
      return;
    }
    const span = touchedSpan(this.pieces, this.text, text, known);
    if (!span) {
      this.unchanged();
      return;
    }
    const region = this.readRegion(detached(text.slice(span.from, span.to)), span.from, span);
    if (region === undefined) this.regionUnreadable(text, span);
    else this.splice(text, span, region);
  }

  /** True when the last state cannot be edited in place (nothing read yet, or it read with problems). */
  protected abstract mustReadAll(): boolean;
  protected abstract readAll(text: string): void;
  /**
   * The pieces of `slice` (which sits at `offset` in the file), or undefined when it does not read alone.
   * A piece the edit left as it was may be given back as the old object (see `unchangedPiece`).
   */
  protected abstract readRegion(slice: string, offset: number, span: TouchedSpan): P[] | undefined;
  /** What to do when the touched region does not read alone. */
  protected abstract regionUnreadable(text: string, span: TouchedSpan): void;
  /** Moves a piece that lies after the edit. */
  protected abstract move(piece: P, delta: number, oldEnd: number): void;
  /** Called after a splice, with the pieces removed and added (the pieces kept from the old read in neither). */
  protected abstract spliced(removed: P[], added: P[], span: TouchedSpan): void;
  /** Called when the text did not change. */
  protected unchanged(): void {}

  /**
   * The old piece that a piece read again at [start, end) of the new text is, when the edit did not
   * touch it: the same text at the same place before the changed part, or after it moved by the edit.
   * `slice` is the region being read, at `offset`.
   */
  protected unchangedPiece(span: TouchedSpan, slice: string, offset: number, start: number, end: number): P | undefined {
    for (let i = span.first; i <= span.last; i++) {
      const old = this.pieces[i]!;
      const before = old.end <= span.p && old.start === start;
      const after = old.start >= span.oldEnd && old.start + span.delta === start;
      if (!before && !after) continue;
      if (old.end - old.start !== end - start) return undefined;
      return this.text.startsWith(slice.slice(start - offset, end - offset), old.start) ? old : undefined;
    }
    return undefined;
  }

  /** Replaces the touched pieces by `added` and moves the pieces after them. */
  protected splice(text: string, span: TouchedSpan, added: P[]): void {
    const { first, last, delta, oldEnd } = span;
    const touched = this.pieces.slice(first, last + 1);
    const after = this.pieces.slice(last + 1);
    for (const p of after) this.move(p, delta, oldEnd);
    const kept = new Set(added.filter((p) => touched.includes(p)));
    for (const p of kept) if (p.start >= oldEnd) this.move(p, delta, oldEnd);
    this.pieces = [...this.pieces.slice(0, first), ...added, ...after];
    this.text = text;
    this.spliced(touched.filter((p) => !kept.has(p)), added.filter((p) => !kept.has(p)), span);
  }
}

