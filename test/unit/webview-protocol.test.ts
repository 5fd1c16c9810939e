// The webview message guards on real corpus plans: valid messages pass (slim or not), malformed ones
// are refused with a reason that names the field, and nothing throws.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyze, loadPlan } from '../../src/core/index';
import type { Plan } from '../../src/core/model';
import { fillNodeRaw, nodeRawOf, parseHostMessage, parseViewMessage, webviewCsp, webviewHtml, wirePlan, wirePlanWithoutRaw } from '../../src/protocol/webview';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

function plan(name: string): Plan {
  const r = loadPlan(readFileSync(join(CORPUS, name), 'utf8'));
  if (!r.ok) throw new Error(r.refusal);
  return r.plan;
}

/** What arrives after VS Code's JSON transport. */
function overJson<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

describe('webview protocol guards', () => {
  const pg = plan('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json');
  const mongo = plan('mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json');

  it('accepts showPlan for real plans and rebuilds the node index of a slim plan', () => {
    for (const p of [pg, mongo]) {
      const findings = analyze(p);
      const r = parseHostMessage(overJson({ type: 'showPlan', title: 't', plan: wirePlan(p), findings }));
      assert.ok(r.ok, r.ok ? '' : r.reason);
      if (r.ok && r.message.type === 'showPlan') {
        assert.equal(r.message.plan.nodes.length, p.nodes.length);
        r.message.plan.nodes.forEach((n, i) => assert.equal(n.id, i));
        assert.equal(r.message.plan.nodes[0], r.message.plan.root);
      }
      const full = parseHostMessage(overJson({ type: 'showPlan', title: 't', plan: p, findings }));
      assert.ok(full.ok);
    }
  });

  it('keeps a slim plan small on the wire', () => {
    const full = JSON.stringify(pg).length;
    const slim = JSON.stringify(wirePlan(pg)).length;
    assert.ok(slim < full * 0.6, `slim ${slim} vs full ${full}`);
  });

  it('the nodes\' raw fields cross after the plan: showPlan without them, then nodeRaw fills every tree node for node', () => {
    for (const p of [pg, mongo]) {
      const before = JSON.stringify(p);
      const message = overJson({ type: 'showPlan', title: 't', plan: wirePlanWithoutRaw(p), findings: analyze(p), nodeRawLater: true });
      assert.equal(JSON.stringify(p), before, 'the host\'s plan keeps its raw fields');
      const size = JSON.stringify(message).length;
      const withRaw = JSON.stringify({ ...message, plan: wirePlan(p) }).length;
      assert.ok(size < withRaw * 0.8, `${size} bytes without the raw fields, ${withRaw} with them`);
      const r = parseHostMessage(message);
      assert.ok(r.ok && r.message.type === 'showPlan' && r.message.nodeRawLater === true, r.ok ? '' : r.reason);
      const shown = r.message.plan;
      assert.ok(shown.nodes.every((n) => Object.keys(n.raw).length === 0), 'no raw field in the message that draws the plan');
      const raw = parseHostMessage(overJson(nodeRawOf(p)));
      assert.ok(raw.ok && raw.message.type === 'nodeRaw', raw.ok ? '' : raw.reason);
      assert.equal(fillNodeRaw(shown, raw.message), true);
      // With its raw fields back, the plan is the one the host read, rejected plans included.
      assert.deepEqual(overJson({ ...shown, nodes: [] }), overJson(wirePlan(p)));
    }
    assert.ok(mongo.rejectedPlans.length > 0, 'the MongoDB plan has rejected plans to fill');
    const other = parseHostMessage(overJson({ type: 'showPlan', title: 't', plan: wirePlanWithoutRaw(mongo), findings: [], nodeRawLater: true }));
    assert.ok(other.ok && other.message.type === 'showPlan');
    assert.equal(fillNodeRaw(other.message.plan, nodeRawOf(pg)), false, 'fields of another tree are refused');
    const short = { ...nodeRawOf(mongo), rejected: [] };
    assert.equal(fillNodeRaw(other.message.plan, short), false, 'a missing rejected plan is refused');
    assert.ok(other.message.plan.nodes.every((n) => Object.keys(n.raw).length === 0), 'a refused nodeRaw changes nothing');
    const bad = parseHostMessage({ type: 'nodeRaw', nodes: [{}, []], rejected: [] });
    assert.ok(!bad.ok && bad.reason === 'nodeRaw.nodes[1] is not an object', bad.ok ? '' : bad.reason);
    const noRejected = parseHostMessage({ type: 'nodeRaw', nodes: [] });
    assert.ok(!noRejected.ok && noRejected.reason === 'nodeRaw.rejected is not a list', noRejected.ok ? '' : noRejected.reason);
    const flag = parseHostMessage(overJson({ type: 'showPlan', title: 't', plan: wirePlan(pg), findings: [], nodeRawLater: 1 }));
    assert.ok(!flag.ok && flag.reason === 'showPlan.nodeRawLater is not a boolean');
  });

  it('the raw text crosses on request: hasRawText in showPlan, rawTextWanted from the view, rawText back', () => {
    const slim = parseHostMessage(overJson({ type: 'showPlan', title: 't', plan: wirePlan(pg), findings: [], hasRawText: true }));
    assert.ok(slim.ok && slim.message.type === 'showPlan' && slim.message.hasRawText === true);
    const bad = parseHostMessage(overJson({ type: 'showPlan', title: 't', plan: wirePlan(pg), findings: [], hasRawText: 'yes' }));
    assert.ok(!bad.ok && bad.reason === 'showPlan.hasRawText is not a boolean');
    assert.deepEqual(parseViewMessage({ type: 'rawTextWanted' }), { ok: true, message: { type: 'rawTextWanted' } });
    assert.deepEqual(parseViewMessage({ type: 'planDrawn' }), { ok: true, message: { type: 'planDrawn' } });
    assert.deepEqual(parseHostMessage({ type: 'rawText', text: '[{"Plan": {}}]' }), { ok: true, message: { type: 'rawText', text: '[{"Plan": {}}]' } });
    const noText = parseHostMessage({ type: 'rawText' });
    assert.ok(!noText.ok && noText.reason === 'rawText.text is not a string');
  });

  it('refuses malformed plans with the field that is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [null, /^message is not an object$/],
      [{ type: 'showPlan', title: 1 }, /^showPlan\.title is not a string$/],
      [{ type: 'showPlan', title: 't', plan: { ...overJson(wirePlan(pg)), engine: 'oracle' }, findings: [] }, /showPlan\.plan\.engine/],
      [{ type: 'bogus' }, /"bogus" is not a message the view knows/],
    ];
    for (const [msg, re] of cases) {
      const r = parseHostMessage(msg);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.reason, re);
    }
    const broken = overJson(wirePlan(pg));
    (broken.root.children[0]!.metrics as Record<string, unknown>).rowsReturned = '12';
    const r1 = parseHostMessage({ type: 'showPlan', title: 't', plan: broken, findings: [] });
    assert.ok(!r1.ok && r1.reason === 'showPlan.plan.root.children[0].metrics.rowsReturned is not a number');
    const renumbered = overJson(wirePlan(pg));
    renumbered.root.children[0]!.id = 5;
    const r2 = parseHostMessage({ type: 'showPlan', title: 't', plan: renumbered, findings: [] });
    assert.ok(!r2.ok && /repeats id 5|preorder position/.test(r2.reason), r2.ok ? '' : r2.reason);
    const badFinding = parseHostMessage({ type: 'showPlan', title: 't', plan: overJson(wirePlan(pg)), findings: [{ code: 'x', severity: 'high', title: 't', message: 'm', numbers: {}, nodeId: 999 }] });
    assert.ok(!badFinding.ok && /points at no node/.test(badFinding.reason));
  });

  it('names the field for a list where an object belongs, a fraction where an integer belongs, a missing field', () => {
    const cases: [unknown, string][] = [
      [[], 'message is not an object'],
      [{ type: 'focusNode', nodeId: 1.5 }, 'focusNode.nodeId is not an integer'],
      [{ type: 'showPlan', title: 't', plan: { ...overJson(wirePlan(pg)), totals: [] }, findings: [] }, 'showPlan.plan.totals is not an object'],
      [{ type: 'showPlan', title: 't', plan: { ...overJson(wirePlan(pg)), warnings: undefined }, findings: [] }, 'showPlan.plan.warnings is not a list'],
      [{ type: 'suggestionStatus', id: 's', status: 'done' }, 'suggestionStatus.status is not a known status'],
      [{ type: 'showPlan', title: 't', plan: overJson(wirePlan(pg)), findings: [], suggestions: [{ id: 'a', title: 'x' }, { id: 'a', title: 'y' }] }, 'showPlan.suggestions[1].id repeats id a'],
    ];
    for (const [msg, reason] of cases) assert.deepEqual(parseHostMessage(msg), { ok: false, reason });
    const deep = overJson(wirePlan(pg));
    (deep.root.details as Record<string, unknown>).sortKey = ['a', 2];
    assert.deepEqual(parseHostMessage({ type: 'showPlan', title: 't', plan: deep, findings: [] }), { ok: false, reason: 'showPlan.plan.root.details.sortKey[1] is not a string' });
  });

  it('refuses a tree that contains itself instead of walking it forever', () => {
    const p = overJson(wirePlan(pg));
    p.root.children.push(p.root);
    const r = parseHostMessage({ type: 'showPlan', title: 't', plan: p, findings: [] });
    assert.ok(!r.ok && /appears twice/.test(r.reason));
  });

  it('checks what the view sends', () => {
    assert.ok(parseViewMessage({ type: 'ready', protocolVersion: 1 }).ok);
    assert.ok(parseViewMessage({ type: 'saveFile', fileName: 'plan.svg', mimeType: 'image/svg+xml', encoding: 'utf8', content: '<svg/>' }).ok);
    const escape = parseViewMessage({ type: 'saveFile', fileName: '../../.bashrc', mimeType: 'application/json', encoding: 'utf8', content: '' });
    assert.ok(!escape.ok && /plain file name/.test(escape.reason));
    assert.ok(!parseViewMessage({ type: 'openNode', nodeId: 'x' }).ok);
    assert.deepEqual(parseViewMessage({ type: 'createIndex', id: 's1' }), { ok: true, message: { type: 'createIndex', id: 's1' } });
    const noId = parseViewMessage({ type: 'createIndex', ddl: 'DROP TABLE t' });
    assert.ok(!noId.ok && noId.reason === 'createIndex.id is not a string');
  });

  it('writes a page with the strict policy and no inline code', () => {
    const html = webviewHtml({ cspSource: 'https://x.example', nonce: 'abc123', scriptUri: 'https://x.example/w.js', styleUri: 'https://x.example/s.css' });
    assert.ok(html.includes(webviewCsp('https://x.example', 'abc123')));
    assert.match(webviewCsp('S', 'N'), /^default-src 'none'; img-src data: S; style-src S; script-src 'nonce-N';$/);
    assert.equal((html.match(/<script/g) ?? []).length, 1);
    assert.ok(!/<style|\sstyle=|\son\w+=/.test(html));
  });
});
