// The advice service's verdicts the server asks the extension for (AdviceWanted), stores (SetAdvice) and
// drops when they are stale (ClearAdvice), and whether a query's lens is still waiting for one.

import { explainText, planKey, type FoundQuery } from '../../core/index';
import { AdviceWanted, type ClearAdviceParams, type SetAdviceParams } from '../../protocol/languageServer';
import type { ServerContext } from '../context';
import type { DocState } from '../documents';
import { answered, scheduleExplain, unasked } from './plans';

/** Drops a document's plans and advice, so both are asked for again. */
export function forgetAdvice(state: DocState): void {
  state.schema?.plans.clear();
  state.schema?.advice.clear();
  state.explainAsked.clear();
  // The per-minute budget guards against typing; an invalidation is a user's action (Create Index,
  // another connection, Refresh) after which the plans must come back at once.
  state.explainTimes = [];
  state.adviceAsked.clear();
  state.adviceFailed.clear();
}

/** The connection whose advice a query of a connected document is waiting for, if it is waiting. */
export function adviceWaiting(state: DocState, q: FoundQuery): string | undefined {
  if (!state.schema && state.reconnecting && Date.now() < state.reconnecting.until) return state.reconnecting.connection[q.engine];
  const connection = state.schema?.connection[q.engine];
  if (connection === undefined) return undefined;
  const t = explainText(q);
  if (!t.ok) return undefined;
  const key = planKey(q.engine, t.text);
  return state.schema!.advice.has(key) || state.adviceFailed.has(key) ? undefined : connection;
}

/** Asks the extension's advice service about the queries of a connected document it has no answer for. */
export function askAdvice(ctx: ServerContext, state: DocState): void {
  const schema = state.schema;
  if (!schema) return;
  const queries = unasked(state, state.adviceAsked, (key) => schema.advice.has(key), Infinity);
  if (queries.length > 0) ctx.port.sendNotification(AdviceWanted, { uri: state.uri, queries });
}

export function setAdvice(ctx: ServerContext, params: SetAdviceParams): void {
  answered(ctx, params.uris, (state, schema) => {
    for (const e of params.entries) {
      const key = planKey(e.engine, e.text);
      if (e.advice) {
        schema.advice.set(key, e.advice);
        state.adviceFailed.delete(key);
      } else {
        state.adviceFailed.add(key);
        if (e.error) ctx.port.log(`No advice from the connection for a query of ${state.uri}: ${e.error}`);
      }
    }
  });
}

export function clearAdvice(ctx: ServerContext, params: ClearAdviceParams): void {
  for (const state of ctx.docs.values()) {
    if (params.uris && !params.uris.includes(state.uri)) continue;
    if (!state.schema) continue;
    forgetAdvice(state);
    state.schemaVersion++;
    ctx.publish(state);
    askAdvice(ctx, state);
    scheduleExplain(ctx, state, 0);
  }
  ctx.port.refreshLenses?.();
}
