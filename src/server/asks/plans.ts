// Background plans the server asks the extension for (ExplainWanted) once edits pause, a few per document
// and minute, and the plans it answers with (SetPlans).

import { explainText, planKey, type DocumentSchema, type FoundQuery } from '../../core/index';
import { ExplainWanted, type SetPlansParams } from '../../protocol/languageServer';
import type { ServerContext } from '../context';
import type { DocState } from '../documents';

/**
 * Once edits pause, asks the extension to explain (without executing) the queries of a connected
 * document it has no plan for, each text once and a few per minute.
 */
export function scheduleExplain(ctx: ServerContext, state: DocState, soon?: number): void {
  const configured = ctx.options.explainDelayMs ?? 0;
  if (configured <= 0 || !state.schema) return;
  // Right after the indexes changed no edit is under way: the plan is asked for at once.
  const delay = soon ?? configured;
  if (state.explainTimer) clearTimeout(state.explainTimer);
  state.explainTimer = setTimeout(() => {
    delete state.explainTimer;
    askExplains(ctx, state);
    for (const w of state.explainWaiters.splice(0)) w();
  }, delay);
}

/** Sends ExplainWanted for the document's queries without a plan, within this minute's budget. */
function askExplains(ctx: ServerContext, state: DocState): void {
  if (!ctx.docs.has(state.uri) || !state.schema) return;
  const now = Date.now();
  state.explainTimes = state.explainTimes.filter((t) => now - t < 60_000);
  const plans = state.schema.plans;
  const queries = unasked(state, state.explainAsked, (key) => plans.has(key), (ctx.options.explainsPerMinute ?? 8) - state.explainTimes.length);
  for (let i = 0; i < queries.length; i++) state.explainTimes.push(now);
  if (queries.length > 0) ctx.port.sendNotification(ExplainWanted, { uri: state.uri, queries });
}

export function setPlans(ctx: ServerContext, params: SetPlansParams): void {
  answered(ctx, params.uris, (state, schema) => {
    for (const p of params.plans) {
      if (p.summary) schema.plans.set(planKey(p.engine, p.text), p.summary);
      else if (p.error) ctx.port.log(`No background plan for a query of ${state.uri}: ${p.error}`);
    }
  });
}

/**
 * Stores the extension's answers (plans, advice) in each open document they are for that still has a
 * connection's schema, publishes it again with them, and has the editor draw the lenses again.
 */
export function answered(ctx: ServerContext, uris: readonly string[], store: (state: DocState, schema: DocumentSchema) => void): void {
  for (const uri of uris) {
    const state = ctx.docs.get(uri);
    if (!state?.schema) continue;
    store(state, state.schema);
    state.schemaVersion++;
    ctx.current(uri);
    ctx.publish(state);
  }
  ctx.port.refreshLenses?.();
}

/**
 * The explainable queries of a document on a connected engine that `asked` has not seen and `known`
 * does not answer, each text once and at most `limit` of them; they are marked asked.
 */
export function unasked(state: DocState, asked: Set<string>, known: (key: string) => boolean, limit: number): { engine: FoundQuery['engine']; text: string }[] {
  const out: { engine: FoundQuery['engine']; text: string }[] = [];
  for (const q of state.queries) {
    if (out.length >= limit) break;
    if (state.schema?.connection[q.engine] === undefined) continue;
    const t = explainText(q);
    if (!t.ok) continue;
    const key = planKey(q.engine, t.text);
    if (asked.has(key) || known(key)) continue;
    asked.add(key);
    out.push({ engine: q.engine, text: t.text });
  }
  return out;
}
