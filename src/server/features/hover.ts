// Hover: a query's analysis as markdown, with what the gate's waivers and ignores say of it.

import type { Hover, Position } from 'vscode-languageserver';
import type { ServerContext } from '../context';
import { queryAt, rangeOf } from '../documents';

export function hoverAt(ctx: ServerContext, uri: string, position: Position): Hover | null {
  const state = ctx.current(uri);
  if (!state) return null;
  const q = queryAt(state, state.doc.offsetAt(position));
  if (!q) return null;
  const a = ctx.analyses.of(state, q);
  const gate = ctx.covers.hover(state, q, a);
  const value = [a.hover, gate].filter((x) => x !== '').join('\n\n---\n\n');
  if (value === '') return null;
  return { contents: { kind: 'markdown', value }, range: rangeOf(state, q.range) };
}
