// The queries of a document with their places and first index, for the extension's ListQueries request.

import type { ListedQuery } from '../../protocol/languageServer';
import type { ServerContext } from '../context';

export function listQueries(ctx: ServerContext, uri: string): ListedQuery[] {
  const state = ctx.current(uri);
  if (!state) return [];
  return state.queries.map((q) => {
    const a = ctx.analyses.of(state, q);
    const l: ListedQuery = { engine: q.engine, start: q.range.start, end: q.range.end, targets: a.targets };
    if (a.top?.createText) l.createText = a.top.createText;
    return l;
  });
}
