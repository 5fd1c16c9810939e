// Index suggestions for an explained query: the core's advisor run on the query and the indexes the
// server listed, turned into the plan view's SuggestionView list. For PostgreSQL a suggestion can be
// checked from the panel ("Verify"): plain EXPLAIN without and with the index, hypothetical through
// HypoPG when installed, otherwise built inside a transaction that is rolled back (after asking, since
// the build locks writes on the table).

import * as vscode from 'vscode';
import { fromMongoCommand } from '../core/advice/fromMongoCommand';
import { adviseMongo } from '../core/advice/mongoAdvisor';
import { advisePostgres } from '../core/advice/pgAdvisor';
import type { Advice, Suggestion } from '../core/advice/types';
import type { MongoCommand } from '../core/query/mongoShell';
import type { SuggestionView } from '../protocol/webview';
import type { ExplainOutcome, Gateway } from './gateway';
import type { Log } from './log';
import type { HostToViewMessage } from '../protocol/webview';

/** Advice for one explain; never throws (advice must not cost the user the plan). */
export async function adviseOutcome(log: Log, engine: 'mongodb' | 'postgres', text: string, command: MongoCommand | undefined, outcome: ExplainOutcome): Promise<Advice | undefined> {
  try {
    if (engine === 'mongodb') {
      if (!command) return undefined;
      const input = fromMongoCommand(command);
      if (!input.ok) {
        log.info(`No index advice: ${input.refusal}`);
        return undefined;
      }
      return adviseMongo(input.query, outcome.existing?.mongodb ? { existing: outcome.existing.mongodb } : {});
    }
    return await advisePostgres(text, outcome.existing?.postgres ? { existing: outcome.existing.postgres } : {});
  } catch (err) {
    log.error('The index advisor failed on this query', err);
    return undefined;
  }
}

function titleOf(s: Suggestion): string {
  if (s.action === 'keep' && s.keep) return `Keep using ${s.keep.name}`;
  if (s.action === 'none') return 'No index helps this query';
  if (s.createText) return s.createText;
  return s.ruleText;
}

export function suggestionViews(advice: Advice | undefined, engine: 'mongodb' | 'postgres'): SuggestionView[] {
  if (!advice || advice.refusal) return [];
  return advice.suggestions.map((s) => {
    const detail = [s.ruleText, s.expectedPlan ? `Expected plan: ${s.expectedPlan}.`.replace(/\.\.$/, '.') : '', s.tradeOff, ...s.conditions.map((c) => c.text), ...s.rewrites.map((r) => `Rewrite: ${r.description}`)]
      .filter((x) => x && x.trim() !== '')
      .join(' ');
    const view: SuggestionView = { id: `s${s.rank}`, title: titleOf(s), detail, status: 'unverified' };
    if (s.createText) view.ddl = s.createText;
    // With nothing to build, the text worth copying is the rewritten query (keyset pagination, UNION ALL...).
    else if (s.rewrites[0]?.text) view.ddl = s.rewrites[0].text;
    view.verifiable = engine === 'postgres' && s.action === 'create' && !!s.createText && s.servesQueryAsWritten;
    if (!view.verifiable) delete view.status;
    return view;
  });
}

/** The panel's verify hook for the suggestions of one explain. */
export function verifier(log: Log, gateway: () => Promise<Gateway>, uri: string, sql: string, views: SuggestionView[], timeoutMs: number) {
  return async (id: string, post: (m: HostToViewMessage) => void): Promise<void> => {
    const view = views.find((v) => v.id === id);
    if (!view?.ddl || !view.verifiable) {
      post({ type: 'suggestionStatus', id, status: 'failed', detail: 'This suggestion cannot be checked on the server.' });
      return;
    }
    post({ type: 'suggestionStatus', id, status: 'verifying' });
    // CONCURRENTLY cannot run inside a transaction, and the check needs one statement without its semicolon.
    const ddl = view.ddl.replace(/\bCONCURRENTLY\s+/i, '').replace(/;\s*$/, '');
    try {
      const gw = await gateway();
      let check;
      try {
        check = await gw.checkIndex(uri, sql, ddl, false, timeoutMs);
      } catch (err) {
        if (!(err instanceof Error && /HypoPG is not installed/.test(err.message))) throw err;
        const ok = await vscode.window.showWarningMessage(
          'HypoPG is not installed on this server. Build the index inside a transaction that is rolled back? The build locks writes on the table while it runs.',
          { modal: true }, 'Build and Roll Back',
        );
        if (ok !== 'Build and Roll Back') {
          post({ type: 'suggestionStatus', id, status: 'unverified', detail: 'Not checked: HypoPG is not installed and the trial build was declined.' });
          return;
        }
        check = await gw.checkIndex(uri, sql, ddl, true, timeoutMs);
      }
      const how = check.method === 'hypopg' ? 'a hypothetical index (HypoPG), nothing built' : 'the index built inside a rolled-back transaction';
      const fmt = (n: number) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: 1 }) : '?');
      const better = check.used && check.costAfter < check.costBefore * 0.9;
      const detail = check.used
        ? `Estimated cost ${fmt(check.costBefore)} → ${fmt(check.costAfter)} with ${how}.`
        : `The planner did not use the index (estimated cost ${fmt(check.costBefore)} without it), checked with ${how}.`;
      post({ type: 'suggestionStatus', id, status: better ? 'verified' : 'rejected', detail });
      log.info(`Verified ${view.ddl}: ${detail}`);
    } catch (err) {
      const sentence = log.clean(err instanceof Error ? err.message : String(err));
      log.error(`Checking ${view.ddl} failed`, err);
      post({ type: 'suggestionStatus', id, status: 'failed', detail: /[.!?]$/.test(sentence) ? sentence : `${sentence}.` });
    }
  };
}
