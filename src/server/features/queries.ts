// The queries of a document with their places, what Explain runs and their first index, for the
// extension's ListQueries request (Explain at the cursor picks from them).

import { targetOf } from '../../core/index';
import type { ListedQuery } from '../../protocol/languageServer';
import type { ServerContext } from '../context';

export function listQueries(ctx: ServerContext, uri: string): ListedQuery[] {
  const state = ctx.current(uri);
  if (!state) return [];
  const text = state.doc.getText();
  return state.queries.map((q) => {
    const a = ctx.analyses.of(state, q);
    const l: ListedQuery = { ...targetOf(q, text), targets: a.targets };
    if (a.top?.createText) l.createText = a.top.createText;
    return l;
  });
}
