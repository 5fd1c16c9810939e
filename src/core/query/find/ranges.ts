// Positions: from a character of found SQL back to the file, the changed span between two versions of a
// text, moving a found query after an edit, and the paths that name a value's place in a command.

import type { MongoCommandPart, SourceRange } from '../mongoShell';
import type { FoundQuery, FoundSqlQuery, SqlRun } from './types';

/** The file range holding character `i` of `q.sql`. */
export function sqlCharToSource(q: Pick<FoundSqlQuery, 'runs' | 'textRange'>, i: number): SourceRange {
  const runs = q.runs;
  let lo = 0;
  let hi = runs.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid]![0] <= i) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (best < 0) return { start: q.textRange.start, end: q.textRange.start };
  const [s, f, len, flen] = runs[best]!;
  if (i >= s + len) return { start: f + flen, end: f + flen };
  if (len === flen) return { start: f + (i - s), end: f + (i - s) + 1 };
  return { start: f, end: f + flen };
}

/** A range of `q.sql` as a file range. */
export function sqlRangeToSource(q: Pick<FoundSqlQuery, 'runs' | 'textRange'>, start: number, end: number): SourceRange {
  const a = sqlCharToSource(q, start);
  if (end <= start) return { start: a.start, end: a.start };
  const b = sqlCharToSource(q, end - 1);
  return { start: a.start, end: Math.max(a.start, b.end) };
}

/**
 * The runs of SQL whose text is not in the file (a `.sql` file it loads, another module's constant): every
 * character maps to `at`, the code that names it, after a run of no SQL over `at`, so a fix never writes it there.
 */
export function runsElsewhere(sqlLength: number, at: SourceRange): SqlRun[] {
  return [[0, at.start, 0, at.end - at.start], [0, at.start, sqlLength, at.end - at.start]];
}

/**
 * Where two versions of a text differ: `p` is the length of their common prefix, `oldEnd` the end of the
 * changed part in the old text (its common suffix follows). Compares in blocks first, natively.
 */
export function changedSpan(old: string, text: string): { p: number; oldEnd: number } {
  const max = Math.min(old.length, text.length);
  const BLOCK = 2048;
  let p = 0;
  while (p + BLOCK <= max && old.slice(p, p + BLOCK) === text.slice(p, p + BLOCK)) p += BLOCK;
  while (p < max && old.charCodeAt(p) === text.charCodeAt(p)) p++;
  let s = 0;
  while (s + BLOCK <= max - p && old.slice(old.length - s - BLOCK, old.length - s) === text.slice(text.length - s - BLOCK, text.length - s)) s += BLOCK;
  while (s < max - p && old.charCodeAt(old.length - 1 - s) === text.charCodeAt(text.length - 1 - s)) s++;
  return { p, oldEnd: old.length - s };
}


/**
 * A copy of a part of a long text that shares no memory with it. V8 keeps a slice of a long string as a
 * view of the whole string, so a query holding a slice of the file (a placeholder's source text, a
 * statement's text) would keep that version of the whole file alive as long as the query lives: a file's
 * worth of memory kept per edit while typing.
 */
export function detached(s: string): string {
  // Shorter slices are copied by V8 itself.
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/** Moves the positions of a query that were at or after `oldEnd` in the old text by `delta`. */
export function shiftQuery(q: FoundQuery, delta: number, oldEnd: number): void {
  if (delta === 0) return;
  // Every range object of a query is its own (none is shared), so each is moved once. This runs for
  // every query after an edit, so it allocates nothing (no closure per query).
  moveRange(q.range, delta, oldEnd);
  if (q.engine === 'mongodb') {
    const ranges = q.command.ranges;
    for (const k in ranges) moveRange(ranges[k as MongoCommandPart], delta, oldEnd);
    const locs = q.locations;
    for (const k in locs) {
      const l = locs[k]!;
      moveRange(l.value, delta, oldEnd);
      moveRange(l.member, delta, oldEnd);
      moveRange(l.key, delta, oldEnd);
    }
    if (q.calledFrom) for (const r of q.calledFrom) moveRange(r, delta, oldEnd);
  } else {
    moveRange(q.textRange, delta, oldEnd);
    for (const r of q.runs) if (r[1] >= oldEnd) r[1] += delta;
    for (const p of q.params) moveRange(p.range, delta, oldEnd);
  }
}

/**
 * Every position of some queries (those of one statement), gathered once, so that moving them after an
 * edit is one loop over plain ranges, and nothing at all when the edit came after the last of them: the
 * same positions, moved the same way, as shiftQuery on each query.
 */
export class QueryPositions {
  private readonly ranges: SourceRange[] = [];
  private readonly runs: SqlRun[] = [];
  /** The largest start among them: an edit at or after it moves none. */
  private last = -1;

  constructor(queries: readonly FoundQuery[]) {
    const seen = new Set<object>();
    const add = (r: SourceRange | undefined) => {
      if (!r || seen.has(r)) return;
      seen.add(r);
      this.ranges.push(r);
      if (r.start > this.last) this.last = r.start;
    };
    for (const q of queries) {
      add(q.range);
      if (q.engine === 'mongodb') {
        const ranges = q.command.ranges;
        for (const k in ranges) add(ranges[k as MongoCommandPart]);
        for (const l of Object.values(q.locations)) {
          add(l.value);
          add(l.member);
          add(l.key);
        }
        for (const r of q.calledFrom ?? []) add(r);
      } else {
        add(q.textRange);
        for (const p of q.params) add(p.range);
        for (const r of q.runs) {
          if (seen.has(r)) continue;
          seen.add(r);
          this.runs.push(r);
          if (r[1] > this.last) this.last = r[1];
        }
      }
    }
  }

  shift(delta: number, oldEnd: number): void {
    if (delta === 0 || this.last < oldEnd) return;
    let last = -1;
    for (const r of this.ranges) {
      if (r.start >= oldEnd) {
        r.start += delta;
        r.end += delta;
      }
      if (r.start > last) last = r.start;
    }
    for (const r of this.runs) {
      if (r[1] >= oldEnd) r[1] += delta;
      if (r[1] > last) last = r[1];
    }
    this.last = last;
  }
}

function moveRange(r: SourceRange | undefined, delta: number, oldEnd: number): void {
  if (!r || r.start < oldEnd) return;
  r.start += delta;
  r.end += delta;
}

/** Path segments escape '/' and '~' as JSON Pointer does. */
export function escapeKey(k: string): string {
  return k.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The path of a member below a part: locationPath('filter', 'contact.email', '$regex'). */
export function locationPath(...segments: (string | number)[]): string {
  return segments.map((s) => escapeKey(String(s))).join('/');
}

/**
 * What the caller knows of a change without comparing the texts (the editor said where it typed): the
 * two texts have at least this common prefix and common suffix. A smaller span than the real one is
 * still right, it only reads more again.
 */
export interface KnownChange {
  p: number;
  suffix: number;
}

/** The statements an edit touched, and the region of the new text to read again in their place. */
export interface TouchedSpan {
  /** First and last statement (indexes) to replace. */
  first: number;
  last: number;
  /** The region [from, to) of the new text to read again. */
  from: number;
  to: number;
  /** The change in length, and the changed part [p, oldEnd) of the old text. */
  delta: number;
  p: number;
  oldEnd: number;
}

/** The changed part [p, oldEnd) of `old`, from what the editor said (`known`) or by comparing the texts. */
export function changeBounds(old: string, text: string, known?: KnownChange): { p: number; oldEnd: number } {
  return known && known.p + known.suffix <= Math.min(old.length, text.length) ? { p: known.p, oldEnd: old.length - known.suffix } : changedSpan(old, text);
}

/**
 * Which of a file's statements (in order, with old offsets) an edit from `old` to `text` touched, plus
 * one on each side (a removed separator can merge two statements), and the text between the untouched
 * statements around them. Undefined when the texts are equal.
 */
export function touchedSpan(chunks: readonly { start: number; end: number }[], old: string, text: string, known?: KnownChange): TouchedSpan | undefined {
  const { p, oldEnd } = changeBounds(old, text, known);
  if (p === old.length && p === text.length) return undefined;
  const delta = text.length - old.length;
  // Statements touching [p, oldEnd] in the old text (touching their ends too: typing right after one).
  let first = chunks.findIndex((c) => c.end >= p);
  if (first < 0) first = chunks.length;
  let last = first - 1;
  for (let i = first; i < chunks.length && chunks[i]!.start <= oldEnd; i++) last = i;
  first = Math.max(0, first - 1);
  last = Math.min(chunks.length - 1, last + 1);
  const from = first > 0 ? chunks[first - 1]!.end : 0;
  const to = Math.max(last + 1 < chunks.length ? chunks[last + 1]!.start : old.length, oldEnd) + delta;
  return { first, last, from, to, delta, p, oldEnd };
}

/**
 * The query with parts of its SQL replaced (a placeholder style rewritten to $n, an identifier stand-in):
 * each new text maps to the file range of what it replaced, the rest keeps its mapping.
 */
export function replaceInSql(q: FoundSqlQuery, edits: readonly { start: number; end: number; text: string }[]): FoundSqlQuery {
  let sql = '';
  const runs: SqlRun[] = [];
  let at = 0;
  const copy = (from: number, to: number) => {
    for (const [s, f, len, flen] of q.runs) {
      const a = Math.max(s, from);
      const b = Math.min(s + len, to);
      if (a >= b) continue;
      // A run whose characters map one to one is cut; one that stands for a larger text is kept whole.
      if (len === flen) runs.push([sql.length + (a - from), f + (a - s), b - a, b - a]);
      else runs.push([sql.length + (a - from), f, b - a, flen]);
    }
    sql += q.sql.slice(from, to);
  };
  for (const e of [...edits].sort((x, y) => x.start - y.start)) {
    if (e.start < at) continue;
    copy(at, e.start);
    const src = sqlRangeToSource(q, e.start, e.end);
    runs.push([sql.length, src.start, e.text.length, src.end - src.start]);
    sql += e.text;
    at = e.end;
  }
  copy(at, q.sql.length);
  // Runs must be in SQL order for the binary search, and a copy run directly followed by its own pieces stays ordered.
  runs.sort((x, y) => x[0] - y[0]);
  return { ...q, sql, runs };
}
