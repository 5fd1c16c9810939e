// Every MongoDB explain of the corpus goes through loadPlan and is either analysed or refused with one
// sentence; each file's expectations pin what that file is about. The truth-plan fixtures (measured on a
// real MongoDB 6.0.5) check the reader against the figures recorded with them in case.json.

import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadPlan } from '../../src/core/load';
import type { Plan, PlanNode, PlanTotals } from '../../src/core/model';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');
const TRUTH = join(__dirname, '..', 'fixtures', 'truth-plans');

type Obj = Record<string, unknown>;

function load(path: string): Plan {
  const r = loadPlan(readFileSync(path, 'utf8'));
  if (!r.ok) assert.fail(`expected ${path} to be analysed, got: ${r.refusal}`);
  return r.plan;
}

function loadDoc(doc: unknown): ReturnType<typeof loadPlan> {
  return loadPlan(JSON.stringify(doc));
}

function assertOneSentence(s: string, what: string): void {
  assert.match(s, /\.$/, `${what} ends with a full stop: ${s}`);
  assert.doesNotMatch(s, /\n/, `${what} has no newline: ${s}`);
  assert.ok(s.length > 20, `${what} says something: ${s}`);
}

function all(n: PlanNode): PlanNode[] {
  return [n, ...n.children.flatMap(all)];
}

function byKind(plan: Plan, kind: string): PlanNode[] {
  return plan.nodes.filter((n) => n.kind === kind);
}

function only(plan: Plan, kind: string): PlanNode {
  const found = byKind(plan, kind);
  assert.equal(found.length, 1, `one ${kind} node`);
  return found[0]!;
}

/** The chain of kinds from the root down the first child: what one reads top to bottom. */
function spine(plan: Plan): string[] {
  const out: string[] = [];
  for (let n: PlanNode | undefined = plan.root; n; n = n.children[0]) out.push(n.kind);
  return out;
}

interface Expect {
  refused?: RegExp;
  root?: string;
  /** Distinct node kinds in preorder of first appearance. */
  kinds?: string[];
  nodes?: number;
  totals?: PlanTotals;
  rejected?: number;
  shards?: string[];
  engine?: 'classic' | 'sbe';
  verbosity?: 'queryPlanner' | 'executionStats' | 'allPlansExecution';
  version?: string;
}

// What each corpus file is about. The Atlas Search files are labelled queryPlanner by their source, but
// their stages carry nReturned and executionTimeMillisEstimate, which the server prints only at
// executionStats or above, so executionStats is what the reader detects.
const EXPECT: Record<string, Expect> = {
  'mongo-agg-atlas-search-addfields-meta-sort-limit-qp-6.0.json': { root: '$sort', kinds: ['$sort', '$project', '$addFields', '$match', '$_internalSearchIdLookup', '$_internalSearchMongotRemote'], nodes: 6, totals: { nReturned: 0, executionTimeMs: 44 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '6.0.24' },
  'mongo-agg-atlas-search-mongotremote-group-sort-qp-6.0.json': { root: '$sort', kinds: ['$sort', '$group', '$match', '$_internalSearchIdLookup', '$_internalSearchMongotRemote'], nodes: 5, totals: { nReturned: 0, executionTimeMs: 59 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '6.0.24' },
  'mongo-agg-count-scan-sbe-multikey-8.0.json': { root: '$project', kinds: ['$project', '$cursor', 'GROUP', 'COUNT_SCAN'], nodes: 4, totals: { nReturned: 1, keysExamined: 2, docsExamined: 0, executionTimeMs: 2 }, rejected: 0, shards: [], engine: 'sbe', verbosity: 'allPlansExecution', version: '8.0.0-rc15' },
  'mongo-agg-cursor-sbe-regex-unwind-limit-allplans-5.3.json': { root: '$limit', kinds: ['$limit', '$unwind', '$cursor', 'LIMIT', 'FETCH', 'IXSCAN'], nodes: 6, totals: { nReturned: 6, keysExamined: 479, docsExamined: 6, executionTimeMs: 1 }, rejected: 0, shards: [], engine: 'sbe', verbosity: 'allPlansExecution', version: '5.3.0-rc3' },
  'mongo-agg-geonear-2dsphere-allplans-5.0.json': { root: '$geoNearCursor', kinds: ['$geoNearCursor', 'GEO_NEAR_2DSPHERE', 'FETCH', 'IXSCAN'], nodes: 4, totals: { nReturned: 16116, keysExamined: 16116, docsExamined: 16116, executionTimeMs: 205 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '5.0.3' },
  'mongo-agg-lookup-limit-unwind-match-collscan-5.0.json': { root: '$lookup', kinds: ['$lookup', '$match', '$cursor', 'LIMIT', 'COLLSCAN'], nodes: 5, totals: { nReturned: 20, keysExamined: 0, docsExamined: 100, executionTimeMs: 5 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '5.0.3' },
  'mongo-agg-out-4.4.json': { root: '$out', kinds: ['$out', '$cursor', 'LIMIT', 'FETCH', 'IXSCAN'], nodes: 5, totals: {}, rejected: 0, shards: [], engine: 'classic', verbosity: 'queryPlanner', version: '4.4.22' },
  'mongo-agg-rankfusion-vectorsearch-unionwith-setwindowfields-8.1.json': { root: '$group', kinds: ['$group', '$replaceRoot', '$sort', '$setMetadata', '$addFields', '$unionWith', '$_internalSetWindowFields', '$_internalSearchIdLookup', '$_internalSearchMongotRemote', '$vectorSearch'], nodes: 20, totals: { nReturned: 1, executionTimeMs: 221 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '8.1.2' },
  'mongo-agg-sbe-group-execstats-6.0.5-local.json': { root: '$sort', kinds: ['$sort', '$cursor', 'GROUP', 'FETCH', 'IXSCAN'], nodes: 5, totals: { nReturned: 5, keysExamined: 50, docsExamined: 50, executionTimeMs: 0 }, rejected: 0, shards: [], engine: 'sbe', verbosity: 'executionStats', version: '6.0.5' },
  'mongo-agg-sbe-match-project-unwind-limit-execstats-5.3.json': { root: '$limit', kinds: ['$limit', '$unwind', '$cursor', 'PROJECTION_SIMPLE', 'COLLSCAN'], nodes: 5, totals: { nReturned: 6, keysExamined: 0, docsExamined: 100000, executionTimeMs: 61 }, rejected: 0, shards: [], engine: 'sbe', verbosity: 'executionStats', version: '5.3.0-rc3' },
  'mongo-find-collscan-759k-returned-execstats-atlas-7.0.json': { root: 'COLLSCAN', kinds: ['COLLSCAN'], nodes: 1, totals: { nReturned: 759349, keysExamined: 0, docsExamined: 998014, executionTimeMs: 1233 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '7.0.22' },
  'mongo-find-collscan-empty-filter-allplans-5.0.json': { root: 'COLLSCAN', kinds: ['COLLSCAN'], nodes: 1, totals: { nReturned: 6048, keysExamined: 0, docsExamined: 6048, executionTimeMs: 4 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '5.0.8' },
  'mongo-find-covered-ixscan-projection-3.2.json': { root: 'PROJECTION', kinds: ['PROJECTION', 'IXSCAN'], nodes: 2, totals: { nReturned: 191665, keysExamined: 191665, docsExamined: 0, executionTimeMs: 118 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '3.2.5' },
  'mongo-find-express-ixscan-limit1-8.0.json': { root: 'EXPRESS_IXSCAN', kinds: ['EXPRESS_IXSCAN'], nodes: 1, totals: { nReturned: 1, keysExamined: 1, docsExamined: 1, executionTimeMs: 0 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '8.0.0-rc15' },
  'mongo-find-idhack-3.2.json': { root: 'IDHACK', kinds: ['IDHACK'], nodes: 1, totals: { nReturned: 0, keysExamined: 0, docsExamined: 0, executionTimeMs: 1 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '3.2.5' },
  'mongo-find-ixscan-fetch-range-3.2.json': { root: 'FETCH', kinds: ['FETCH', 'IXSCAN'], nodes: 2, totals: { nReturned: 191665, keysExamined: 191665, docsExamined: 191665, executionTimeMs: 135 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '3.2.5' },
  'mongo-find-or-subplan-limit-sort-merge-execstats-7.0.json': { root: 'SUBPLAN', kinds: ['SUBPLAN', 'LIMIT', 'FETCH', 'SORT_MERGE', 'IXSCAN'], nodes: 6, totals: { nReturned: 40, keysExamined: 40, docsExamined: 40, executionTimeMs: 0 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '7.0.40' },
  'mongo-find-sbe-collscan-projection-simple-execstats-5.0.json': { root: 'PROJECTION_SIMPLE', kinds: ['PROJECTION_SIMPLE', 'COLLSCAN'], nodes: 2, totals: { nReturned: 1000, keysExamined: 0, docsExamined: 100000, executionTimeMs: 61 }, rejected: 0, shards: [], engine: 'sbe', verbosity: 'executionStats', version: '5.0.0-rc7' },
  'mongo-find-sbe-ixscan-fetch-execstats-4.9.json': { root: 'FETCH', kinds: ['FETCH', 'IXSCAN'], nodes: 2, totals: { nReturned: 1432, keysExamined: 1432, docsExamined: 1432, executionTimeMs: 5 }, rejected: 0, shards: [], engine: 'sbe', verbosity: 'executionStats', version: '4.9.0-alpha4-346-g16aff18' },
  'mongo-find-sbe-queryplanner-only-partial.json': { root: 'LIMIT', kinds: ['LIMIT', 'COLLSCAN'], nodes: 2, totals: {}, rejected: 0, shards: [], engine: 'sbe', verbosity: 'queryPlanner' },
  'mongo-find-sort-limit-ixscan-execstats-6.0.5-local.json': { root: 'LIMIT', kinds: ['LIMIT', 'FETCH', 'IXSCAN'], nodes: 3, totals: { nReturned: 5, keysExamined: 5, docsExamined: 5, executionTimeMs: 0 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '6.0.5' },
  'mongo-find-sort-skip-limit-keep-mutations-3.2.json': { root: 'SKIP', kinds: ['SKIP', 'PROJECTION', 'SORT', 'KEEP_MUTATIONS', 'SORT_KEY_GENERATOR', 'FETCH', 'IXSCAN'], nodes: 7, totals: { nReturned: 9, keysExamined: 191665, docsExamined: 191665, executionTimeMs: 495 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '3.2.5' },
  'mongo-legacy-2.6-covered-index-indexonly.json': { refused: /pre-3\.0 explain format.*MongoDB 3\.0 or later/ },
  'mongo-legacy-2.6-sharded-parallelsort-btreecursor.json': { refused: /pre-3\.0 explain format.*MongoDB 3\.0 or later/ },
  'mongo-legacy-2.6-sort-skip-limit-clauses-or.json': { refused: /pre-3\.0 explain format.*MongoDB 3\.0 or later/ },
  'mongo-sharded-agg-classic-no-stages-5.0.json': { root: 'SINGLE_SHARD', kinds: ['SINGLE_SHARD', 'FETCH', 'SHARDING_FILTER', 'IXSCAN'], nodes: 4, totals: { nReturned: 0, keysExamined: 1, docsExamined: 0, executionTimeMs: 0 }, rejected: 0, shards: ['shard1'], engine: 'classic', verbosity: 'allPlansExecution', version: '5.0.8' },
  'mongo-sharded-agg-geonear-group-sort-singleshard-5.3.json': { root: 'SINGLE_SHARD', kinds: ['SINGLE_SHARD', '$sort', '$group', '$geoNearCursor', 'SHARDING_FILTER', 'GEO_NEAR_2DSPHERE', 'FETCH', 'IXSCAN'], nodes: 30, totals: { nReturned: 422, keysExamined: 719, docsExamined: 490, executionTimeMs: 12 }, rejected: 0, shards: ['shard1'], engine: 'classic', verbosity: 'allPlansExecution', version: '5.3.0-rc3' },
  'mongo-sharded-agg-in-group-sort-covered-qp-5.0.json': { root: 'SINGLE_SHARD', kinds: ['SINGLE_SHARD', '$sort', '$group', '$cursor', 'PROJECTION_COVERED', 'SHARDING_FILTER', 'IXSCAN'], nodes: 7, totals: {}, rejected: 0, shards: ['shard1'], engine: 'classic', verbosity: 'queryPlanner', version: '5.0.8' },
  'mongo-sharded-agg-multishard-no-stages-5.3.json': { root: '$unwind', kinds: ['$unwind', '$group', '$mergeCursors', 'GROUP', 'SHARDING_FILTER', 'COLLSCAN'], nodes: 9, totals: { nReturned: 1, keysExamined: 0, docsExamined: 5555, executionTimeMs: 50 }, rejected: 0, shards: ['shard2', 'shard1'], engine: 'sbe', verbosity: 'allPlansExecution', version: '5.3.0-rc3' },
  'mongo-sharded-agg-sbe-group-pushdown-skip-limit-5.3.json': { root: 'SINGLE_SHARD', kinds: ['SINGLE_SHARD', '$limit', '$cursor', 'GROUP', 'SHARDING_FILTER', 'COLLSCAN'], nodes: 6, totals: { nReturned: 1, keysExamined: 0, docsExamined: 121254, executionTimeMs: 90 }, rejected: 0, shards: ['shard1'], engine: 'sbe', verbosity: 'allPlansExecution', version: '5.3.0-rc3' },
  'mongo-sharded-agg-sbe-no-stages-5.3.json': { root: 'SINGLE_SHARD', kinds: ['SINGLE_SHARD', 'LIMIT', 'SHARDING_FILTER', 'COLLSCAN'], nodes: 4, totals: { nReturned: 20, keysExamined: 0, docsExamined: 581, executionTimeMs: 0 }, rejected: 0, shards: ['shard1'], engine: 'sbe', verbosity: 'allPlansExecution', version: '5.3.0-rc3' },
  'mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json': { root: 'SHARD_MERGE', kinds: ['SHARD_MERGE', 'SHARDING_FILTER', 'FETCH', 'IXSCAN'], nodes: 10, totals: { nReturned: 1138, keysExamined: 203214, docsExamined: 46294, executionTimeMs: 2961 }, rejected: 6, shards: ['shard01', 'shard02', 'shard03'], engine: 'classic', verbosity: 'allPlansExecution', version: '3.2.6' },
  'mongo-sharded-find-single-shard-eof-5.0.json': { root: 'SINGLE_SHARD', kinds: ['SINGLE_SHARD', 'EOF'], nodes: 2, totals: { nReturned: 0, keysExamined: 0, docsExamined: 0, executionTimeMs: 0 }, rejected: 0, shards: ['config'], engine: 'classic', verbosity: 'allPlansExecution', version: '5.0.8' },
  'mongo-sharded-find-single-shard-idhack-3.2.json': { root: 'SINGLE_SHARD', kinds: ['SINGLE_SHARD', 'IDHACK'], nodes: 2, totals: { nReturned: 0, keysExamined: 0, docsExamined: 0, executionTimeMs: 4 }, rejected: 0, shards: ['rsmyset'], engine: 'classic', verbosity: 'allPlansExecution', version: '3.2.6' },
  'mongo-sharded-find-single-shard-sbe-collscan-5.3.json': { root: 'SINGLE_SHARD', kinds: ['SINGLE_SHARD', 'COLLSCAN'], nodes: 2, totals: { nReturned: 0, keysExamined: 0, docsExamined: 0, executionTimeMs: 0 }, rejected: 0, shards: ['shard1'], engine: 'sbe', verbosity: 'allPlansExecution', version: '5.3.0-rc3' },
  'mongo-shell-agg-tpch-q22-cursor-projection-default-rejected-lookup-group-allplans-4.4.js': { root: '$sort', kinds: ['$sort', '$group', '$match', '$lookup', '$project', '$cursor', 'PROJECTION_DEFAULT', 'FETCH', 'IXSCAN'], nodes: 11, totals: { nReturned: 7, keysExamined: 136308, docsExamined: 136308, executionTimeMs: 2606 }, rejected: 1, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '4.4.10' },
  'mongo-shell-agg-tpch-q3-collscan-unwind-group-sort-4.4.js': { root: '$sort', kinds: ['$sort', '$group', '$match', '$unwind', '$project', '$cursor', 'PROJECTION_DEFAULT', 'COLLSCAN'], nodes: 9, totals: { nReturned: 10, keysExamined: 0, docsExamined: 150000, executionTimeMs: 5371 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '4.4.10' },
  'mongo-shell-agg-tpch-q4-projection-simple-ixscan-lookup-group-4.4.js': { root: '$sort', kinds: ['$sort', '$group', '$match', '$project', '$lookup', '$cursor', 'PROJECTION_SIMPLE', 'FETCH', 'IXSCAN'], nodes: 9, totals: { nReturned: 5, keysExamined: 56741, docsExamined: 56741, executionTimeMs: 11641 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'allPlansExecution', version: '4.4.10' },
  'mongosh-agg-sbe-group-pushdown-collscan-6.0.js': { root: '$sort', kinds: ['$sort', '$cursor', 'GROUP', 'COLLSCAN'], nodes: 4, totals: { nReturned: 1, keysExamined: 0, docsExamined: 7930000, executionTimeMs: 18998 }, rejected: 0, shards: [], engine: 'sbe', verbosity: 'executionStats', version: '6.0.3' },
  'mongosh-find-projection-default-sort-limit-ixscan-in-6.0.js': { root: 'PROJECTION_DEFAULT', kinds: ['PROJECTION_DEFAULT', 'SORT', 'FETCH', 'IXSCAN'], nodes: 4, totals: { nReturned: 10, keysExamined: 128467, docsExamined: 128466, executionTimeMs: 131 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '6.0.3' },
  'mongosh-update-explain-update-collscan-6.0.js': { root: 'UPDATE', kinds: ['UPDATE', 'COLLSCAN'], nodes: 2, totals: { nReturned: 0, keysExamined: 0, docsExamined: 1678, executionTimeMs: 1 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '6.0.3' },
  'mongosh-update-explain-update-fetch-ixscan-6.0.js': { root: 'UPDATE', kinds: ['UPDATE', 'FETCH', 'IXSCAN'], nodes: 3, totals: { nReturned: 0, keysExamined: 1, docsExamined: 1, executionTimeMs: 2 }, rejected: 0, shards: [], engine: 'classic', verbosity: 'executionStats', version: '6.0.3' },
  'compat/ferretdb-explain-aggregate-executionStats.json': { refused: /^This explain comes from FerretDB v1\.24\.0 on SQLite, .*no winningPlan or executionStats stage tree/ },
  'compat/ferretdb-explain-find-sort-executionStats.json': { refused: /^This explain comes from FerretDB v1\.24\.0 on SQLite, .*no winningPlan or executionStats stage tree/ },
  'compat/ferretdb-pg-explain-find-sort-executionStats.json': { refused: /^This explain comes from FerretDB v1\.24\.0 on PostgreSQL, .*no winningPlan or executionStats stage tree/ },
  'compat/ferretdb-explain-buildinfo.json': { refused: /FerretDB v1\.24\.0 server information \(buildInfo\), not an explain output/ },
};

const mongoFiles = readdirSync(CORPUS).filter((f) => /^mongo(sh)?-/.test(f));
const compatFiles = readdirSync(join(CORPUS, 'compat')).map((f) => `compat/${f}`);

describe('MongoDB corpus', () => {
  it('has an expectation for every MongoDB and compatible-API file, and a file for every expectation', () => {
    assert.ok(mongoFiles.length >= 40, `found ${mongoFiles.length} MongoDB files`);
    const files = [...mongoFiles, ...compatFiles].sort();
    assert.deepEqual(files, Object.keys(EXPECT).sort());
  });

  for (const file of [...mongoFiles, ...compatFiles]) {
    const exp = EXPECT[file] ?? {};
    it(`${file}: ${exp.refused ? 'refused in one sentence' : `analysed (${exp.root})`}`, () => {
      const r = loadPlan(readFileSync(join(CORPUS, file), 'utf8'));
      if (exp.refused) {
        assert.equal(r.ok, false, 'refused');
        const refusal = (r as { refusal: string }).refusal;
        assertOneSentence(refusal, 'the refusal');
        assert.match(refusal, exp.refused);
        return;
      }
      if (!r.ok) assert.fail(`refused: ${r.refusal}`);
      const plan = r.plan;
      assert.equal(plan.engine, 'mongodb');
      assert.equal(plan.format, file.endsWith('.js') ? 'mongodb-shell' : 'mongodb-json');
      assert.equal(plan.root.kind, exp.root);
      assert.deepEqual([...new Set(plan.nodes.map((n) => n.kind))], exp.kinds);
      assert.equal(plan.nodes.length, exp.nodes);
      assert.deepEqual(plan.totals, exp.totals);
      assert.equal(plan.rejectedPlans.length, exp.rejected);
      assert.deepEqual(plan.nodes.filter((n) => n.role === 'shard').map((n) => n.details.shardName), exp.shards);
      assert.equal(plan.mongo?.sharded, exp.shards!.length > 0);
      assert.equal(plan.mongo?.engineKind, exp.engine);
      assert.equal(plan.mongo?.verbosity, exp.verbosity);
      assert.equal(plan.serverVersion, exp.version);
      // Slot-based plans keep slotBasedPlan; classic ones have none.
      assert.equal(plan.mongo?.slotBasedPlan !== undefined, exp.engine === 'sbe');
      for (const w of plan.warnings) assertOneSentence(w, 'a warning');
      // The tree is well formed: preorder ids, a label on every node, raw without the child stages.
      plan.nodes.forEach((n, i) => {
        assert.equal(n.id, i);
        assert.ok(n.label.startsWith(n.kind), `label ${n.label} names ${n.kind}`);
        for (const k of ['inputStage', 'inputStages', 'outerStage', 'innerStage']) assert.equal(k in n.raw, false, `${n.kind} raw keeps ${k}`);
      });
      // Every key and document the query layer examined sits on one of its stages: the per-stage figures
      // add up to the server's totals (for slot-based plans this checks the planNodeId mapping).
      const query = plan.nodes.filter((n) => !n.kind.startsWith('$'));
      if (plan.totals.keysExamined !== undefined) assert.equal(query.reduce((a, n) => a + (n.metrics.keysExamined ?? 0), 0), plan.totals.keysExamined);
      if (plan.totals.docsExamined !== undefined) assert.equal(query.reduce((a, n) => a + (n.metrics.docsExamined ?? 0), 0), plan.totals.docsExamined);
      // With execution figures, every drawn query stage has its returned count.
      if (exp.verbosity !== 'queryPlanner' && exp.totals!.keysExamined !== undefined) {
        for (const n of query) if (!/^(SINGLE_SHARD|SHARD_MERGE)$/.test(n.kind) || n.raw.nReturned !== undefined) assert.notEqual(n.metrics.rowsReturned, undefined, `${n.kind} has rows`);
      }
    });
  }
});

describe('MongoDB reader details, file by file', () => {
  const f = (name: string): Plan => load(join(CORPUS, name));

  it('labels stages with their index key pattern, collection or pipeline stage name', () => {
    const q22 = f('mongo-shell-agg-tpch-q22-cursor-projection-default-rejected-lookup-group-allplans-4.4.js');
    assert.equal(only(q22, 'IXSCAN').label, 'IXSCAN { c_acctbal: -1 }');
    assert.equal(only(q22, '$lookup').label, '$lookup scale1');
    assert.deepEqual(byKind(q22, '$group').map((n) => n.label), ['$group', '$group']);
    assert.equal(only(f('mongo-shell-agg-tpch-q3-collscan-unwind-group-sort-4.4.js'), 'COLLSCAN').label, 'COLLSCAN scale1');
    assert.equal(only(f('mongo-agg-geonear-2dsphere-allplans-5.0.json'), 'GEO_NEAR_2DSPHERE').label, "GEO_NEAR_2DSPHERE { location: '2dsphere' }");
    const sortMerge = f('mongo-find-or-subplan-limit-sort-merge-execstats-7.0.json');
    assert.deepEqual(byKind(sortMerge, 'IXSCAN').map((n) => n.label), ['IXSCAN { ChallengerId: 1, CreatedAt: -1 }', 'IXSCAN { OpponentId: 1, CreatedAt: -1 }']);
    assert.equal(only(sortMerge, 'SORT_MERGE').label, 'SORT_MERGE { CreatedAt: -1 }');
    assert.equal(only(f('mongosh-find-projection-default-sort-limit-ixscan-in-6.0.js'), 'SORT').label, 'SORT { baseFare: 1 } limit 10');
    // MongoDB 8.0 express stages print keyPattern as text; it is read into the same form.
    const express = only(f('mongo-find-express-ixscan-limit1-8.0.json'), 'EXPRESS_IXSCAN');
    assert.deepEqual(express.details.keyPattern, { a: 1, b: 1 });
    assert.equal(express.label, 'EXPRESS_IXSCAN { a: 1, b: 1 }');
  });

  it('reads an index scan: bounds, multikey paths, direction, figures', () => {
    const plan = f('mongosh-find-projection-default-sort-limit-ixscan-in-6.0.js');
    const ix = only(plan, 'IXSCAN');
    assert.equal(ix.details.indexName, 'startingAirport_1_destinationAirport_1');
    assert.deepEqual(ix.details.keyPattern, { startingAirport: 1, destinationAirport: 1 });
    assert.equal(ix.details.direction, 'forward');
    assert.equal(ix.details.isMultiKey, false);
    assert.deepEqual(Object.keys(ix.details.indexBounds!), ['startingAirport', 'destinationAirport']);
    assert.ok(ix.details.indexBounds!.startingAirport!.length >= 1);
    assert.deepEqual(ix.metrics, { ...ix.metrics, rowsReturned: 128466, keysExamined: 128467, seeks: 1 });
    const sort = only(plan, 'SORT');
    assert.deepEqual(sort.details.sortPattern, { baseFare: 1 });
    assert.equal(sort.metrics.limitAmount, 10);
    assert.equal(sort.metrics.usedDisk, false);
    assert.equal(typeof sort.metrics.memUsageBytes, 'number');
    // Exclusive time: each stage's estimate minus its input's.
    assert.equal(sort.metrics.inclusiveTimeMs, 5);
    assert.equal(sort.metrics.exclusiveTimeMs, 1);
  });

  it('classic 3.2 output without explainVersion: SORT with KEEP_MUTATIONS and SKIP amounts', () => {
    const plan = f('mongo-find-sort-skip-limit-keep-mutations-3.2.json');
    assert.deepEqual(spine(plan), ['SKIP', 'PROJECTION', 'SORT', 'KEEP_MUTATIONS', 'SORT_KEY_GENERATOR', 'FETCH', 'IXSCAN']);
    assert.equal(plan.mongo?.explainVersion, undefined);
    assert.equal(only(plan, 'SORT').metrics.memUsageBytes !== undefined, true);
    assert.equal(only(plan, 'SKIP').metrics.skipAmount, 0);
    assert.equal(only(plan, 'IXSCAN').metrics.works, 191666);
  });

  it('slot-based find: queryPlan drawn, figures mapped from the SBE stages by planNodeId', () => {
    const plan = f('mongo-find-sbe-ixscan-fetch-execstats-4.9.json');
    assert.equal(plan.mongo?.explainVersion, '2');
    const ix = only(plan, 'IXSCAN');
    // ixseek (planNodeId 1) read 1432 keys in one seek; the seek stage (planNodeId 2) read 1432 documents.
    assert.equal(ix.metrics.keysExamined, 1432);
    assert.equal(ix.metrics.seeks, 1);
    assert.equal(ix.metrics.rowsReturned, 1432);
    assert.equal(only(plan, 'FETCH').metrics.docsExamined, 1432);
    const sbp = plan.mongo?.slotBasedPlan as Obj;
    assert.match(String(sbp.stages), /ixseek/);
    assert.equal((plan.mongo?.slotBasedExecutionStages as Obj).stage, 'nlj');
  });

  it('slot-based: the filtered COLLSCAN returns what its filter kept, and counts every document read', () => {
    const plan = f('mongo-find-sbe-collscan-projection-simple-execstats-5.0.json');
    const scan = only(plan, 'COLLSCAN');
    assert.equal(scan.metrics.rowsReturned, 1000);
    assert.equal(scan.metrics.docsExamined, 100000);
    assert.equal(scan.label, 'COLLSCAN test');
  });

  it('slot-based 6.0: keysExamined from the index stage, not its numReads, and COUNT_SCAN dedup figures on 8.0', () => {
    const g = f('mongo-agg-sbe-group-execstats-6.0.5-local.json');
    assert.equal(only(g, 'IXSCAN').metrics.keysExamined, 50);
    assert.equal(only(g, 'GROUP').metrics.rowsReturned, 5);
    const c = f('mongo-agg-count-scan-sbe-multikey-8.0.json');
    const cs = only(c, 'COUNT_SCAN');
    assert.equal(cs.metrics.keysExamined, 2);
    assert.equal(cs.metrics.dupsTested, 2);
  });

  it('aggregate: data flow with the last stage at the root and the cursor plan under $cursor', () => {
    const plan = f('mongo-shell-agg-tpch-q4-projection-simple-ixscan-lookup-group-4.4.js');
    assert.deepEqual(spine(plan), ['$sort', '$group', '$match', '$project', '$lookup', '$cursor', 'PROJECTION_SIMPLE', 'FETCH', 'IXSCAN']);
    assert.deepEqual(plan.mongo?.pipeline, ['$cursor', '$lookup', '$project', '$match', '$group', '$sort']);
    const lookup = only(plan, '$lookup');
    // NumberLong figures of the legacy shell are read as numbers.
    assert.equal(lookup.metrics.rowsReturned, 56741);
    assert.equal(lookup.metrics.inclusiveTimeMs, 11580);
    assert.equal(lookup.role, 'inputStage');
    const cursor = only(plan, '$cursor');
    assert.equal(cursor.metrics.rowsReturned, 56741);
    // The $cursor keeps its own fields, without the plan trees drawn below it.
    const raw = cursor.raw.$cursor as Obj;
    assert.equal('winningPlan' in (raw.queryPlanner as Obj), false);
    assert.equal('executionStages' in (raw.executionStats as Obj), false);
    assert.equal(only(plan, '$match').details.filter !== undefined, true);
  });

  it('aggregate totals: the pipeline result is the last stage output, the examined figures the cursor', () => {
    const plan = f('mongo-agg-lookup-limit-unwind-match-collscan-5.0.json');
    assert.equal(plan.root.metrics.rowsReturned, 20);
    assert.equal(plan.totals.nReturned, 20);
    assert.equal(plan.totals.docsExamined, 100);
    assert.equal(only(plan, '$lookup').label, '$lookup listings');
  });

  it('aggregate: $unionWith draws its explained sub-pipeline as a second input', () => {
    const plan = f('mongo-agg-rankfusion-vectorsearch-unionwith-setwindowfields-8.1.json');
    const union = only(plan, '$unionWith');
    assert.deepEqual(union.children.map((c) => c.role), ['inputStage', 'unionWith']);
    assert.deepEqual(union.raw.$unionWith, { coll: 'embedded_movies' });
    const sub = union.children[1]!;
    assert.deepEqual(all(sub).map((n) => n.kind).reverse().slice(0, 2), ['$vectorSearch', '$_internalSearchIdLookup']);
    assert.equal(only(plan, '$vectorSearch').metrics.rowsReturned, 50);
    const idLookups = byKind(plan, '$_internalSearchIdLookup');
    assert.deepEqual(idLookups.map((n) => n.metrics.docsExamined).sort(), [50, 978]);
  });

  it('aggregate pushed down into the slot-based engine: GROUP inside the cursor plan', () => {
    const plan = f('mongosh-agg-sbe-group-pushdown-collscan-6.0.js');
    assert.deepEqual(spine(plan), ['$sort', '$cursor', 'GROUP', 'COLLSCAN']);
    assert.equal(only(plan, 'COLLSCAN').metrics.docsExamined, 7930000);
    assert.equal(only(plan, 'GROUP').metrics.rowsReturned, 16);
    assert.equal(only(plan, '$sort').metrics.limitAmount, 1);
  });

  it('write explain: UPDATE keeps nMatched and nWouldModify in raw', () => {
    const plan = f('mongosh-update-explain-update-fetch-ixscan-6.0.js');
    const upd = plan.root;
    assert.equal(upd.label, 'UPDATE tickets');
    assert.equal(upd.raw.nMatched, 1);
    assert.equal(upd.raw.nWouldModify, 1);
    assert.equal(upd.metrics.rowsReturned, 0);
    assert.deepEqual((plan.mongo?.command as Obj).update, 'tickets');
  });

  it('meta: namespace, parsed query, query hash and plan cache key', () => {
    const plan = f('mongosh-update-explain-update-fetch-ixscan-6.0.js');
    assert.equal(plan.mongo?.namespace, 'expedia.tickets');
    assert.equal(plan.mongo?.queryHash, '172A34AE');
    assert.equal(plan.mongo?.planCacheKey, '0BC0C420');
    assert.deepEqual(plan.mongo?.parsedQuery, { legId: { $eq: 'c38a6e4b807d15541e5866676febcbec' } });
  });

  it('rejected plans carry their trial figures, matched to the right candidate', () => {
    const plan = f('mongo-shell-agg-tpch-q22-cursor-projection-default-rejected-lookup-group-allplans-4.4.js');
    const [rej] = plan.rejectedPlans;
    assert.equal(rej!.index, 0);
    assert.equal(all(rej!.root).find((n) => n.kind === 'IXSCAN')!.details.indexName, 'idx_customer_a');
    assert.deepEqual(rej!.trial, { nReturned: 101, keysExamined: 101, docsExamined: 101, works: 101 });
    assert.equal(all(rej!.root).find((n) => n.kind === 'IXSCAN')!.metrics.keysExamined, 101);
  });

  it('sharded find: one child per shard, rejected plans matched per shard by shape (not by position)', () => {
    const file = 'mongo-sharded-find-geowithin-shard-merge-rejected-3.2.json';
    const plan = f(file);
    const doc = JSON.parse(readFileSync(join(CORPUS, file), 'utf8')) as { executionStats: { allPlansExecution: ({ shardName: string; allPlans: Obj[] } | null)[] } };
    assert.equal(plan.root.metrics.inclusiveTimeMs, 2961);
    for (const shard of plan.root.children) {
      assert.equal(shard.role, 'shard');
      assert.equal(shard.kind, 'SHARDING_FILTER');
    }
    assert.deepEqual(plan.rejectedPlans.map((r) => `${r.shardName}#${r.index}`), ['shard01#0', 'shard01#1', 'shard02#0', 'shard02#1', 'shard03#0', 'shard03#1']);
    for (const r of plan.rejectedPlans) {
      const index = all(r.root).find((n) => n.kind === 'IXSCAN')!.details.indexName;
      const trials = doc.executionStats.allPlansExecution.find((a) => a?.shardName === r.shardName)!.allPlans;
      // The trial that ran the same index, found in the fixture independently of the reader.
      const trial = trials.find((t) => JSON.stringify(t.executionStages).includes(`"indexName":"${index}"`))!;
      assert.equal(r.trial?.nReturned, trial.nReturned, `${r.shardName} ${index}`);
      assert.equal(r.trial?.keysExamined, trial.totalKeysExamined);
      assert.equal(r.trial?.docsExamined, trial.totalDocsExamined);
    }
  });

  it('sharded aggregate: the merging half drawn above $mergeCursors, shards below it', () => {
    const plan = f('mongo-sharded-agg-multishard-no-stages-5.3.json');
    assert.deepEqual(spine(plan).slice(0, 3), ['$unwind', '$group', '$mergeCursors']);
    const merge = only(plan, '$mergeCursors');
    assert.deepEqual(merge.children.map((c) => `${c.role}:${c.details.shardName}:${c.kind}`), ['shard:shard2:GROUP', 'shard:shard1:GROUP']);
    assert.equal(plan.totals.docsExamined, 5555);
    assert.deepEqual(Object.keys(plan.mongo?.slotBasedPlan as Obj), ['shard2', 'shard1']);
  });

  it('sharded aggregate with shard stages: the shard pipeline hangs under SINGLE_SHARD', () => {
    const plan = f('mongo-sharded-agg-in-group-sort-covered-qp-5.0.json');
    assert.deepEqual(spine(plan), ['SINGLE_SHARD', '$sort', '$group', '$cursor', 'PROJECTION_COVERED', 'SHARDING_FILTER', 'IXSCAN']);
    assert.equal(plan.root.children[0]!.details.shardName, 'shard1');
    assert.equal(plan.mongo?.namespace, 'shard.listings');
  });

  it('sharded find with a slot-based shard maps the shard figures too', () => {
    const plan = f('mongo-sharded-find-single-shard-sbe-collscan-5.3.json');
    const scan = only(plan, 'COLLSCAN');
    assert.equal(scan.role, 'shard');
    assert.equal(scan.metrics.rowsReturned, 0);
    assert.equal(scan.metrics.docsExamined, 0);
  });
});

describe('MongoDB reader: executed stages against the winning plan', () => {
  const SHAPE_WARNING = 'The executed stages differ in shape from the winning plan; the executed stages are drawn.';
  const ix = (name: string, bounds: string[], stats = false): Record<string, unknown> => ({
    stage: 'IXSCAN',
    ...(stats ? { nReturned: 5, keysExamined: 5 } : {}),
    keyPattern: { a: 1 },
    indexName: name,
    indexBounds: { a: bounds },
  });
  const explain = (winning: unknown, executed: unknown): Plan => {
    const r = loadDoc({ queryPlanner: { namespace: 'db.c', winningPlan: winning, rejectedPlans: [] }, executionStats: { nReturned: 5, executionStages: executed }, ok: 1 });
    assert.ok(r.ok);
    return r.plan;
  };

  it('warns only when the executed tree differs from the winning plan, however its inputs are held', () => {
    const or = (stats: boolean, second: string, bounds = ['[1, 1]']): Record<string, unknown> => ({
      stage: 'FETCH',
      ...(stats ? { nReturned: 5, docsExamined: 5 } : {}),
      inputStage: { stage: 'OR', inputStages: [ix('a_1', ['[1, 1]'], stats), ix(second, bounds, stats)] },
    });
    assert.ok(!explain(or(false, 'a_1'), or(true, 'a_1')).warnings.includes(SHAPE_WARNING));
    assert.ok(explain(or(false, 'a_1'), or(true, 'b_1')).warnings.includes(SHAPE_WARNING));
    assert.ok(explain(or(false, 'a_1'), or(true, 'a_1', ['[2, 2]'])).warnings.includes(SHAPE_WARNING));
    // The same inputs held under another key are the same shape; a missing input is not.
    const single = { stage: 'FETCH', inputStages: [ix('a_1', ['[1, 1]'])] };
    const executed = { stage: 'FETCH', nReturned: 5, inputStage: ix('a_1', ['[1, 1]'], true) };
    assert.ok(!explain(single, executed).warnings.includes(SHAPE_WARNING));
    assert.ok(explain({ stage: 'FETCH' }, executed).warnings.includes(SHAPE_WARNING));
    assert.ok(explain(single, { stage: 'FETCH', nReturned: 5, inputStage: ix('b_1', ['[1, 1]'], true) }).warnings.includes(SHAPE_WARNING));
  });
});

describe('MongoDB reader on odd and hostile documents', () => {
  const refusal = (doc: unknown): string => {
    const r = loadDoc(doc);
    assert.equal(r.ok, false, `refused: ${JSON.stringify(doc).slice(0, 80)}`);
    const s = (r as { refusal: string }).refusal;
    assertOneSentence(s, 'the refusal');
    return s;
  };
  const plan = (doc: unknown): Plan => {
    const r = loadDoc(doc);
    if (!r.ok) assert.fail(r.refusal);
    return r.plan;
  };

  it('refuses an explain-like document without a plan tree', () => {
    assert.match(refusal({ serverInfo: { version: '7.0.1' }, ok: 1 }), /no queryPlanner, stages or shards/);
    assert.match(refusal({ queryPlanner: { namespace: 'a.b' }, ok: 1 }), /no winningPlan/);
    assert.match(refusal({ stages: [], ok: 1 }), /empty stages list/);
    assert.match(refusal({ ok: 0, errmsg: 'ns does not exist.\nreally', code: 26 }), /error instead of a plan: ns does not exist\. really\.$/);
  });

  it('refuses Azure Cosmos DB RU explain output, naming it', () => {
    const doc = { stages: [{ stage: '$query', timeInclusiveMS: 3.2, timeExclusiveMS: 3.2, in: 10, out: 10, details: { database: 'db', collection: 'c' } }], estimatedDelayFromRateLimitingInMilliseconds: 0, ok: 1 };
    assert.match(refusal(doc), /Azure Cosmos DB for MongoDB/);
  });

  it('reads Amazon DocumentDB output (numbers as strings) with a warning instead of refusing', () => {
    const doc = {
      queryPlanner: { plannerVersion: 2, namespace: 'limit_test.test', winningPlan: { stage: 'LIMIT_SKIP', inputStage: { stage: 'SORT', sortPattern: { createdAt: 1 }, inputStage: { stage: 'IXSCAN', indexName: 'companyname_1' } } } },
      executionStats: { executionSuccess: true, executionTimeMillis: '4.186', planningTimeMillis: '3.909', executionStages: { stage: 'LIMIT_SKIP', nReturned: '2', executionTimeMillisEstimate: '0.199', inputStage: { stage: 'SORT', nReturned: '2', executionTimeMillisEstimate: '0.197', sortPattern: { createdAt: 1 }, inputStage: { stage: 'IXSCAN', nReturned: '34', executionTimeMillisEstimate: '0.151', indexName: 'companyname_1' } } } },
      ok: 1,
    };
    const p = plan(doc);
    assert.deepEqual(spine(p), ['LIMIT_SKIP', 'SORT', 'IXSCAN']);
    assert.equal(only(p, 'IXSCAN').metrics.rowsReturned, 34);
    assert.equal(p.totals.executionTimeMs, 4.186);
    assert.match(p.warnings.join(' '), /Amazon DocumentDB/);
  });

  it('slot-based rejected plans get their trial by the index they read, whatever the trial order', () => {
    // A real 6.0.5 slot-based explain, with a rejected collection-scan candidate added in memory: the
    // trials list the rejected plan first and the winner second.
    const doc = JSON.parse(readFileSync(join(CORPUS, 'mongo-agg-sbe-group-execstats-6.0.5-local.json'), 'utf8')) as { stages: { $cursor: { queryPlanner: Obj; executionStats: Obj } }[] };
    const cursor = doc.stages[0]!.$cursor;
    cursor.queryPlanner.rejectedPlans = [{ queryPlan: { stage: 'GROUP', planNodeId: 2, inputStage: { stage: 'COLLSCAN', planNodeId: 1, direction: 'forward' } }, slotBasedPlan: { stages: 'scan' } }];
    cursor.executionStats.allPlansExecution = [
      { nReturned: 5, executionTimeMillisEstimate: 1, totalKeysExamined: 0, totalDocsExamined: 101, executionStages: { stage: 'group', planNodeId: 2, nReturned: 5, inputStage: { stage: 'scan', planNodeId: 1, nReturned: 101, numReads: 101 } } },
      { nReturned: 5, executionTimeMillisEstimate: 0, totalKeysExamined: 50, totalDocsExamined: 50, executionStages: cursor.executionStats.executionStages },
    ];
    const p = plan(doc);
    assert.equal(p.rejectedPlans.length, 1);
    const rej = p.rejectedPlans[0]!;
    assert.deepEqual(rej.trial, { nReturned: 5, keysExamined: 0, docsExamined: 101 });
    assert.equal(only({ ...p, nodes: all(rej.root) }, 'COLLSCAN').metrics.docsExamined, 101);
    assert.equal(p.mongo?.verbosity, 'allPlansExecution');
    assert.deepEqual(p.warnings, []);
  });

  it('draws each explained $facet branch as an input of the $facet stage', () => {
    const p = plan({
      stages: [
        { $cursor: { queryPlanner: { namespace: 'a.b', winningPlan: { stage: 'COLLSCAN', direction: 'forward' } } } },
        { $facet: { byA: [{ $group: { _id: '$a' } }], top: [{ $sort: { sortKey: { b: -1 } } }, { $limit: 3 }] } },
      ],
      ok: 1,
    });
    assert.deepEqual(p.root.children.map((c) => `${c.role}:${c.label}`), ['inputStage:$cursor', 'facet byA:$group', 'facet top:$limit 3']);
    assert.deepEqual(p.root.raw.$facet, {});
  });

  it('draws an unknown stage with a warning, never a refusal', () => {
    const p = plan({ queryPlanner: { namespace: 'a.b', winningPlan: { stage: 'FUTURE_STAGE', inputStage: { stage: 'COLLSCAN', direction: 'forward' } } }, ok: 1 });
    assert.deepEqual(spine(p), ['FUTURE_STAGE', 'COLLSCAN']);
    assert.deepEqual(p.warnings, ['Stage FUTURE_STAGE is not known to this reader and is drawn with the figures as printed.']);
    assert.equal(p.mongo?.verbosity, 'queryPlanner');
  });

  it('cuts a hostile nesting depth with a warning instead of overflowing the stack', () => {
    const depth = 5000;
    const text = `{"queryPlanner":{"winningPlan":${'{"stage":"LIMIT","limitAmount":1,"inputStage":'.repeat(depth)}{"stage":"COLLSCAN"}${'}'.repeat(depth)}},"ok":1}`;
    const r = loadPlan(text);
    if (!r.ok) assert.fail(r.refusal);
    const p = r.plan;
    assert.ok(p.nodes.length <= 401);
    assert.match(p.warnings.join(' '), /nested more than 400 stages/);
  });

  it('reads odd figures as absent, not as zero', () => {
    const p = plan({
      queryPlanner: { namespace: 'a.b', winningPlan: { stage: 'FETCH', inputStage: { stage: 'IXSCAN', keyPattern: { a: 1 } } } },
      executionStats: { nReturned: 'many', executionStages: { stage: 'FETCH', nReturned: null, docsExamined: { weird: true }, inputStage: { stage: 'IXSCAN', keyPattern: { a: 1 }, keysExamined: 3, indexBounds: 'not a map' } } },
      ok: 1,
    });
    assert.equal(p.root.metrics.rowsReturned, undefined);
    assert.equal(p.root.metrics.docsExamined, undefined);
    assert.equal(p.totals.nReturned, undefined);
    assert.equal(only(p, 'IXSCAN').metrics.keysExamined, 3);
    assert.equal(only(p, 'IXSCAN').details.indexBounds, undefined);
    assert.equal(only(p, 'IXSCAN').raw.indexBounds, 'not a map');
  });
});

// ---- truth plans: MongoDB 6.0.5 explains recorded with their measured figures -----------------------

interface TruthCase {
  plans: { file: string; role: string; candidate: unknown; keysExamined: number; docsExamined: number; blockingSort: boolean }[];
  candidates: { index: unknown; keysExamined: number; docsExamined: number; nReturned: number; blockingSort: boolean; sortMerge: boolean; seeks: number | null; shape: string }[];
}

/** The shape notation of case.json: `LIMIT>FETCH>IXSCAN[name]`, `SORT_MERGE(a, b)`, `... | $match`. */
function truthShape(plan: Plan): string {
  const shape = (n: PlanNode): string => {
    const name = n.kind + (n.details.indexName && /IXSCAN|COUNT_SCAN|DISTINCT_SCAN/.test(n.kind) ? `[${n.details.indexName}]` : '');
    if (n.children.length === 0) return name;
    if (n.children.length === 1) return `${name}>${shape(n.children[0]!)}`;
    return `${name}(${n.children.map(shape).join(', ')})`;
  };
  const cursor = plan.nodes.find((n) => n.kind === '$cursor');
  if (!cursor) return shape(plan.root);
  const after: string[] = [];
  for (let n: PlanNode | undefined = plan.root; n && n !== cursor; n = n.children[0]) after.unshift(n.kind);
  return [shape(cursor.children[0]!), ...after].join(' | ');
}

describe('MongoDB truth plans (MongoDB 6.0.5, measured)', () => {
  const cases = readdirSync(TRUTH).filter((c) => /^m\d/.test(c));
  const truth = (c: string, prefix: string): Plan => {
    const file = readdirSync(join(TRUTH, c)).find((x) => x.startsWith(prefix))!;
    const doc = JSON.parse(readFileSync(join(TRUTH, c, file), 'utf8')) as { hinted_explain: unknown };
    const r = loadDoc(doc.hinted_explain);
    if (!r.ok) assert.fail(r.refusal);
    return r.plan;
  };

  it('has the MongoDB cases', () => assert.ok(cases.length >= 20, `found ${cases.length}`));

  it('m01: LIMIT > FETCH > IXSCAN reads 10 keys and 10 documents for 10 results in one seek, no SORT', () => {
    const plan = truth('m01_orders_elemmatch_sort', 'oracle__');
    assert.deepEqual(spine(plan), ['LIMIT', 'FETCH', 'IXSCAN']);
    const ix = only(plan, 'IXSCAN');
    assert.equal(ix.metrics.keysExamined, 10);
    assert.equal(ix.metrics.seeks, 1);
    assert.equal(ix.details.isMultiKey, true);
    assert.deepEqual(ix.details.multiKeyPaths, { country_id: [], 'order_details.product_id': ['order_details'], created_at: [] });
    assert.deepEqual(ix.details.indexBounds, { country_id: ['[1, 1]'], 'order_details.product_id': ['[5, 5]'], created_at: ['[MaxKey, MinKey]'] });
    assert.equal(only(plan, 'FETCH').metrics.docsExamined, 10);
    assert.ok(only(plan, 'FETCH').details.filter !== undefined);
    assert.equal(plan.root.metrics.rowsReturned, 10);
    assert.equal(plan.root.metrics.limitAmount, 10);
    assert.deepEqual(plan.totals, { nReturned: 10, keysExamined: 10, docsExamined: 10, executionTimeMs: 0 });
    assert.equal(byKind(plan, 'SORT').length, 0);
  });

  it('m03a: $in of two values explodes into SORT_MERGE over two index scans', () => {
    const plan = truth('m03a_in2_explode_sort_merge', 'oracle__');
    const merge = only(plan, 'SORT_MERGE');
    assert.equal(merge.children.length, 2);
    assert.deepEqual(merge.children.map((c) => c.details.indexBounds!.r), [['[10, 10]'], ['[30, 30]']]);
    assert.equal(byKind(plan, 'SORT').length, 0);
  });

  it('m03b: $in of 250 values loses the order, a blocking SORT appears', () => {
    const plan = truth('m03b_in250_no_explode', 'loser2_bestWithBlockingSort');
    const sort = only(plan, 'SORT');
    assert.deepEqual(sort.details.sortPattern, { s: 1 });
    assert.equal(byKind(plan, 'SORT_MERGE').length, 0);
    assert.equal(only(plan, 'IXSCAN').details.indexBounds!.r!.length, 250);
  });

  for (const c of cases) {
    it(`${c}: the reader reports the figures recorded in case.json`, () => {
      const cs = JSON.parse(readFileSync(join(TRUTH, c, 'case.json'), 'utf8')) as TruthCase;
      assert.ok(cs.plans.length >= 2);
      for (const p of cs.plans) {
        const doc = JSON.parse(readFileSync(join(TRUTH, c, p.file.replace(/^plans\//, '')), 'utf8')) as { hinted_explain: unknown };
        const r = loadDoc(doc.hinted_explain);
        if (!r.ok) assert.fail(`${p.file}: ${r.refusal}`);
        const plan = r.plan;
        const what = `${c} ${p.role}`;
        assert.equal(plan.totals.keysExamined, p.keysExamined, `${what} keysExamined`);
        assert.equal(plan.totals.docsExamined, p.docsExamined, `${what} docsExamined`);
        assert.equal(plan.nodes.some((n) => n.kind === 'SORT'), p.blockingSort, `${what} blocking sort`);
        const cand = cs.candidates.find((x) => JSON.stringify(x.index) === JSON.stringify(p.candidate))!;
        assert.ok(cand, `${what} has its candidate`);
        assert.equal(truthShape(plan), cand.shape, `${what} shape`);
        assert.equal(plan.totals.nReturned, cand.nReturned, `${what} nReturned`);
        assert.equal(plan.nodes.some((n) => n.kind === 'SORT_MERGE'), cand.sortMerge, `${what} SORT_MERGE`);
        if (cand.seeks !== null) assert.equal(plan.nodes.reduce((a, n) => a + (n.metrics.seeks ?? 0), 0), cand.seeks, `${what} seeks`);
        assert.deepEqual(plan.warnings, [], `${what} warnings`);
      }
    });
  }
});
