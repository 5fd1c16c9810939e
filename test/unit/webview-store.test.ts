// The plan view's state transitions (webview/store.ts), in Node: the store holds no DOM, so what the view
// shows after each host message can be checked without a browser.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPlan } from '../../src/core/index';
import type { Plan } from '../../src/core/model';
import { nodeRawOf, parseHostMessage, wirePlanWithoutRaw, type SuggestionVerdict } from '../../src/protocol/webview';
import { ViewStore, type ViewState } from '../../webview/store';

function plan(name: string): Plan {
  const r = loadPlan(readFileSync(join(__dirname, '..', 'fixtures', 'corpus', name), 'utf8'));
  if (!r.ok) throw new Error(r.refusal);
  return r.plan;
}

describe('webview store', () => {
  const pg = plan('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json');
  const mongo = plan('mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json');
  const verdict: SuggestionVerdict = { method: 'hypopg', how: 'a hypothetical index', beforeLabel: 'today', afterLabel: 'with the index', before: 100, after: 4 };

  it('keeps preferences through the host and merges each change', () => {
    const saved: ViewState[] = [];
    const store = new ViewStore({ heat: 'time' }, (s) => saved.push(s));
    store.savePrefs({ sideHidden: true });
    store.savePrefs({ heat: 'rows' });
    assert.deepEqual(saved, [{ heat: 'time', sideHidden: true }, { heat: 'rows', sideHidden: true }]);
    assert.deepEqual(store.state.prefs, { heat: 'rows', sideHidden: true });
  });

  it('asks for the raw text once per plan and drops it while a comparison is shown', () => {
    const store = new ViewStore({}, () => undefined);
    store.showPlan({ type: 'showPlan', title: 'a', plan: pg, findings: [], hasRawText: true });
    assert.equal(store.askRawText(), true);
    assert.equal(store.askRawText(), false);
    assert.equal(store.setRawText('[]'), true);
    assert.equal(store.state.shown?.rawText, '[]');
    store.showPlan({ type: 'showPlan', title: 'b', plan: pg, findings: [], hasRawText: true });
    assert.equal(store.askRawText(), true, 'a new plan asks again');
    const side = { label: 'x', plan: pg, findings: [] };
    store.showComparison({ type: 'showComparison', title: 'c', before: side, after: side }, 'both');
    assert.equal(store.setRawText('[]'), false);
  });

  it('waits for the nodes\' raw fields of a plan sent without them, and takes them once, for that plan only', () => {
    const store = new ViewStore({}, () => undefined);
    // As the view receives it: through JSON and the guard, which rebuilds the node index.
    const parsed = parseHostMessage(JSON.parse(JSON.stringify({ type: 'showPlan', title: 'm', plan: wirePlanWithoutRaw(mongo), findings: [], nodeRawLater: true })));
    assert.ok(parsed.ok && parsed.message.type === 'showPlan');
    assert.equal(store.setNodeRaw(nodeRawOf(mongo)), false, 'nothing shown yet');
    store.showPlan(parsed.message);
    assert.equal(store.nodeRawLater, true);
    assert.equal(store.setNodeRaw(nodeRawOf(pg)), false, 'another plan\'s fields');
    assert.equal(store.nodeRawLater, true);
    assert.equal(store.setNodeRaw(nodeRawOf(mongo)), true);
    assert.equal(store.nodeRawLater, false);
    assert.deepEqual(store.state.shown?.plan.root.raw, mongo.root.raw);
    // A rejected plan drawn later has its fields too: its nodes are the ones filled.
    assert.deepEqual(store.drawRejected(0)?.plan.root.raw, mongo.rejectedPlans[0]!.root.raw);
    assert.equal(store.setNodeRaw(nodeRawOf(mongo)), false, 'taken once');
    const side = { label: 'x', plan: pg, findings: [] };
    store.showComparison({ type: 'showComparison', title: 'c', before: side, after: side }, 'both');
    assert.equal(store.nodeRawLater, false, 'a comparison carries its own');
    assert.equal(store.setNodeRaw(nodeRawOf(pg)), false);
  });

  it('draws a rejected plan with its own maxima and its nodes by id, and goes back to the winner', () => {
    const store = new ViewStore({}, () => undefined);
    assert.equal(store.drawRejected(0), undefined, 'nothing shown yet');
    store.showPlan({ type: 'showPlan', title: 'm', plan: mongo, findings: [] });
    assert.ok(mongo.rejectedPlans.length > 0);
    const r = store.drawRejected(0)!;
    assert.equal(r.rejected, 0);
    assert.equal(r.plan.root, mongo.rejectedPlans[0]!.root);
    assert.deepEqual(r.plan.nodes.map((n) => n.id), [...r.plan.nodes.map((n) => n.id)].sort((a, b) => a - b));
    assert.deepEqual(r.plan.totals, {});
    assert.equal(store.drawRejected(mongo.rejectedPlans.length), undefined);
    assert.equal(store.state.drawn?.rejected, 0, 'an unknown position leaves the drawing alone');
    assert.equal(store.drawRejected(undefined)?.plan, mongo);
  });

  it('keeps a verdict through the index build and clears it on a new check', () => {
    const store = new ViewStore({}, () => undefined);
    store.showPlan({ type: 'showPlan', title: 'a', plan: pg, findings: [], suggestions: [{ id: 's1', title: 'CREATE INDEX' }] });
    assert.equal(store.setSuggestionStatus('s2', 'verified'), false);
    assert.equal(store.setSuggestionStatus('s1', 'verified', '25 times less work', verdict), true);
    store.setSuggestionStatus('s1', 'creating');
    const s = store.state.shown!.suggestions[0]!;
    assert.deepEqual([s.status, s.statusDetail, s.verdict], ['creating', undefined, verdict]);
    store.setSuggestionStatus('s1', 'verifying');
    assert.deepEqual([s.status, s.verdict], ['verifying', undefined]);
  });

  it('steps through search hits both ways and wraps around', () => {
    const store = new ViewStore({}, () => undefined);
    assert.equal(store.stepSearch(1), undefined);
    store.setSearchHits([{ id: 1 }, { id: 4, side: 'after' }, { id: 9 }]);
    assert.deepEqual([1, 1, 1, 1].map(() => store.stepSearch(1)!.id), [1, 4, 9, 1]);
    assert.equal(store.stepSearch(-1)!.id, 9);
    store.selectTab('plan');
    assert.deepEqual([store.nextTab(1), store.nextTab(-1)], ['findings', 'raw']);
  });
});
