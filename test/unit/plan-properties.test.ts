// Property-based tests on real plans: whatever happens to a real explain output on its way to us
// (truncated, a field deleted or retyped, a hostile string, lines lost), nothing escapes the core but a
// result: a plan whose invariants hold, or a refusal in one sentence.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { analyze, loadPlan, summarize, type LoadResult } from '../../src/core/index';

const corpus = join(__dirname, '..', 'fixtures', 'corpus');
const files = readdirSync(corpus).filter((f) => /\.(json|js|txt|yaml|xml)$/.test(f) && f !== 'INDEX.tsv');
const texts = files.map((f) => ({ f, text: readFileSync(join(corpus, f), 'utf8') }));
const jsonDocs = texts.flatMap(({ f, text }) => {
  try {
    return [{ f, doc: JSON.parse(text) as unknown }];
  } catch {
    return [];
  }
});

const hostile = fc.constantFrom(
  '<img src=x onerror=alert(1)>',
  '</script><script>alert(1)</script>',
  '"; DROP TABLE orders; --',
  '${process.exit(1)}',
  '__proto__',
  'constructor',
  '\u0000\u202e\ud800',
  'a'.repeat(10_000),
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  hostile,
  fc.string(),
  fc.double(),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
  fc.constant(-1),
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/** Checks the contract of loadPlan's result and runs the analysis on it. */
function checkResult(r: LoadResult, what: string): void {
  if (!r.ok) {
    assert.equal(typeof r.refusal, 'string', what);
    assert.ok(r.refusal.length > 0 && r.refusal.length < 400, `${what}: refusal length ${r.refusal.length}`);
    assert.ok(!r.refusal.includes('\n'), `${what}: refusal has a line break: ${r.refusal}`);
    assert.match(r.refusal, /[.!?)]$/, `${what}: not a sentence: ${r.refusal}`);
    assert.ok(!/internal error/.test(r.refusal), `${what}: a reader threw: ${r.refusal}`);
    return;
  }
  const plan = r.plan;
  plan.nodes.forEach((n, i) => assert.equal(n.id, i, `${what}: node ids`));
  for (const n of plan.nodes) {
    const t = n.metrics.exclusiveTimeMs;
    assert.ok(t === undefined || (Number.isFinite(t) && t >= 0), `${what}: exclusive time ${t}`);
    assert.equal(typeof n.kind, 'string', `${what}: kind`);
    assert.equal(typeof n.label, 'string', `${what}: label`);
  }
  const findings = analyze(plan);
  assert.ok(Array.isArray(findings));
  for (const f of findings) {
    assert.equal(typeof f.message, 'string');
    assert.ok(f.nodeId === undefined || plan.nodes[f.nodeId] !== undefined, `${what}: finding on a missing node`);
    assert.notEqual(f.code, 'qpi.rule-error', `${what}: a rule threw: ${f.message}`);
  }
  assert.equal(typeof summarize(plan, findings), 'string');
}

/** Every path to a value inside a JSON document, for picking one to mutate. */
function paths(doc: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = [], depth = 0): (string | number)[][] {
  if (depth > 40 || out.length > 5000) return out;
  const entries: [string | number, unknown][] = Array.isArray(doc) ? doc.map((v, i) => [i, v]) : doc && typeof doc === 'object' ? Object.entries(doc) : [];
  for (const [k, v] of entries) {
    out.push([...prefix, k]);
    paths(v, [...prefix, k], out, depth + 1);
  }
  return out;
}

function mutate(doc: unknown, path: (string | number)[], op: 'delete' | 'replace', value: unknown): unknown {
  const copy = structuredClone(doc) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (op === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else parent[last] = value;
  return copy;
}

describe('real plans, mutated: nothing escapes the core but a result', function () {
  this.timeout(120_000);

  it('every corpus file loads or is refused in one sentence, and analyses without a rule error', () => {
    for (const { f, text } of texts) checkResult(loadPlan(text), f);
  });

  it('a field deleted or replaced by any value (hostile strings included) anywhere in a JSON plan', () => {
    const all = jsonDocs.map(({ f, doc }) => ({ f, doc, paths: paths(doc) }));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: all.length - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        fc.constantFrom<'delete' | 'replace'>('delete', 'replace'),
        anyValue,
        (i, at, op, value) => {
          const { f, doc, paths: ps } = all[i]!;
          if (ps.length === 0) return;
          const path = ps[Math.floor(at * ps.length)]!;
          const text = JSON.stringify(mutate(doc, path, op, value));
          checkResult(loadPlan(text), `${f} ${op} ${path.join('.')}`);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('text cut anywhere, a line dropped, or bytes inserted, in any format', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: texts.length - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom('cut', 'drop-line', 'insert'),
        fc.string({ maxLength: 12 }),
        (i, at, op, junk) => {
          const { f, text } = texts[i]!;
          const pos = Math.floor(at * text.length);
          let mutated: string;
          if (op === 'cut') mutated = text.slice(0, pos);
          else if (op === 'insert') mutated = text.slice(0, pos) + junk + text.slice(pos);
          else {
            const lines = text.split('\n');
            lines.splice(Math.floor(at * lines.length), 1);
            mutated = lines.join('\n');
          }
          checkResult(loadPlan(mutated), `${f} ${op} at ${pos}`);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('keeps a hostile index or relation name as inert data in the model', () => {
    const mongo = JSON.parse(readFileSync(join(corpus, 'mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json'), 'utf8')) as Record<string, unknown>;
    const bad = '<img src=x onerror=alert(1)></script>';
    const text = JSON.stringify(mongo).replaceAll('"indexName":"', `"indexName":"${bad.replaceAll('"', '\\"')}`);
    const r = loadPlan(text);
    assert.ok(r.ok);
    const ix = r.plan.nodes.find((n) => n.kind === 'IXSCAN');
    assert.ok(ix?.details.indexName?.startsWith(bad));
  });

  it('refuses what is not a plan, with a sentence, for arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => checkResult(loadPlan(s), JSON.stringify(s))),
      { numRuns: 500 },
    );
  });
});
