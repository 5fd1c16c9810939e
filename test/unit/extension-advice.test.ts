// The plan panel's view of live advice (src/extension/adviceView.ts), without a server: the real advisor's
// suggestions for the sample queries flattened for the view, which of them the server can verify and why
// not, the verdict figures read from real trial plans, and the questions asked before anything is written
// or built. Every message built here must pass the view's own guard after the JSON transport.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LiveAdvice } from '../../src/adapters/advise';
import { mongoNumbers, type MeasuredVerdict } from '../../src/adapters/adviceService';
import { fromMongoCommand } from '../../src/core/advice/fromMongoCommand';
import { adviseMongo } from '../../src/core/advice/mongoAdvisor';
import { advisePostgres } from '../../src/core/advice/pgAdvisor';
import type { Advice, ExistingMongoIndex, MongoStats, PgStats } from '../../src/core/advice/types';
import { analyze, loadPlan } from '../../src/core/index';
import type { Plan } from '../../src/core/model';
import { parseMongoQuery, type MongoCommand } from '../../src/core/query/mongoShell';
import {
  buildQuestion, findSuggestion, statusOf, suggestionsToTry, suggestionViews, measureQuestion, measureStepText, unverifiableReason, verdictOf,
  type AdviceContext,
} from '../../src/extension/adviceView';
import { parseHostMessage, wirePlan } from '../../src/protocol/webview';

const FIXTURES = join(__dirname, '..', 'fixtures');

/** The indexes samples/load-sample-data.mjs builds on orders. */
const ORDERS_INDEXES: ExistingMongoIndex[] = [
  { name: '_id_', key: { _id: 1 } },
  { name: 'country_id_1_order_details.product_id_1_created_at_-1', key: { country_id: 1, 'order_details.product_id': 1, created_at: -1 } },
  { name: 'country_id_1_created_at_-1', key: { country_id: 1, created_at: -1 } },
];

function command(text: string, placeholders = false): MongoCommand {
  const p = parseMongoQuery(text, { placeholders });
  if (!p.ok) assert.fail(p.error);
  return p.command;
}

/** The advisor's answer wrapped as the live advisor returns it before any verification. */
function live(advice: Advice, stats: MongoStats | PgStats | undefined, existing: string[]): LiveAdvice {
  const out: LiveAdvice = { advice, engine: advice.engine, serverVersion: advice.engine === 'mongodb' ? '7.0.14' : '15.8', existingIndexes: existing, verification: { method: 'none' } };
  if (stats) {
    out.stats = stats;
    out.statsMethod = 'exact';
  }
  return out;
}

function mongoCtx(text: string, opts: { existing?: ExistingMongoIndex[]; stats?: MongoStats | undefined; placeholders?: boolean } = {}): AdviceContext {
  const cmd = command(text, opts.placeholders);
  const input = fromMongoCommand(cmd);
  if (!input.ok) assert.fail(input.refusal);
  const existing = opts.existing ?? ORDERS_INDEXES;
  const advice = adviseMongo(input.query, { existing });
  const stats = 'stats' in opts ? opts.stats : { total: 20_000 };
  return { engine: 'mongodb', live: live(advice, stats, existing.map((e) => e.name)), command: cmd };
}

async function pgCtx(sql: string): Promise<AdviceContext> {
  const advice = await advisePostgres(sql);
  return { engine: 'postgres', live: live(advice, { tables: {} }, []) };
}

function truthPlan(caseId: string, file: string): Plan {
  const raw = JSON.parse(readFileSync(join(FIXTURES, 'truth-plans', caseId, file), 'utf8')) as Record<string, unknown>;
  const loaded = loadPlan(JSON.stringify(raw['hinted_explain']));
  if (!loaded.ok) assert.fail(loaded.refusal);
  return loaded.plan;
}

function corpusPlan(name: string): Plan {
  const loaded = loadPlan(readFileSync(join(FIXTURES, 'corpus', name), 'utf8'));
  if (!loaded.ok) assert.fail(loaded.refusal);
  return loaded.plan;
}

/** What arrives in the view after VS Code's JSON transport, through the view's guard. */
function throughView(message: unknown): void {
  const parsed = parseHostMessage(JSON.parse(JSON.stringify(message)));
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.reason);
}

describe('extension: live advice in the plan panel', () => {
  describe('suggestions as the panel shows them', () => {
    it('the sample orders query keeps its ESR index: the view names it and can verify it by a trial', () => {
      const ctx = mongoCtx("db.orders.find({ country_id: 1, order_details: { $elemMatch: { product_id: 5 } } }).sort({ created_at: -1 }).limit(10)");
      const views = suggestionViews(ctx);
      assert.equal(views.length, 1);
      const v = views[0]!;
      assert.equal(v.title, 'Keep using country_id_1_order_details.product_id_1_created_at_-1');
      assert.equal(v.keep, 'country_id_1_order_details.product_id_1_created_at_-1');
      assert.equal(v.rule, 'existing');
      assert.equal(v.ddl, undefined, 'nothing to build for an index that exists');
      assert.ok(v.detail && v.detail.length > 20, `detail: ${v.detail}`);
      assert.equal(v.verifiable, true);
      assert.equal(v.status, 'unverified');
    });

    it('a query without an index gets ESR and ERS with their createIndex, expected plan, trade-off and condition', () => {
      const ctx = mongoCtx("db.customers.find({ status: 'pending', score: { $gt: 900 } }).sort({ created: -1 }).limit(10)", { existing: [{ name: '_id_', key: { _id: 1 } }] });
      const views = suggestionViews(ctx);
      assert.deepEqual(views.map((v) => v.rule), ['esr', 'ers']);
      const [esr, ers] = views as [typeof views[0], typeof views[0]];
      assert.equal(esr.title, 'db.customers.createIndex({status: 1, created: -1, score: 1})');
      assert.equal(esr.ddl, esr.title);
      assert.equal(ers.ddl, 'db.customers.createIndex({status: 1, score: 1, created: -1})');
      for (const v of views) {
        assert.ok(v.expectedPlan, `${v.rule} has no expected plan`);
        assert.ok(v.tradeOff, `${v.rule} has no trade-off`);
        assert.ok(v.verifiable, `${v.rule} is not verifiable`);
      }
      // The ESR/ERS choice depends on how many documents match the range: the condition says so.
      assert.equal(esr.conditions?.length, 1);
      assert.match(esr.conditions![0]!, /ERS|range/);
    });

    it('skip pagination carries its keyset rewrite, ready to paste, next to the index to keep', () => {
      const ctx = mongoCtx('db.orders.find({ country_id: 2 }).sort({ created_at: -1 }).skip(5000).limit(20)');
      const [v] = suggestionViews(ctx);
      assert.equal(v?.title, 'Keep using country_id_1_created_at_-1');
      assert.equal(v?.rewrites?.length, 1);
      assert.equal(v!.rewrites![0]!.rule, 'keyset');
      assert.match(v!.rewrites![0]!.text, /created_at/);
      assert.ok(v!.rewrites![0]!.description.length > 0);
    });

    it('PostgreSQL OFFSET: the index that serves only the keyset rewrite is shown with it but cannot be verified', async () => {
      const ctx = await pgCtx('SELECT id, created_at FROM orders ORDER BY created_at DESC, id DESC OFFSET 10000 LIMIT 20');
      const [v] = suggestionViews(ctx);
      assert.equal(v?.ddl, 'CREATE INDEX CONCURRENTLY ON orders (created_at DESC, id DESC);');
      assert.match(v!.detail!, /serves the rewritten query below, not the query as written/);
      assert.equal(v!.verifiable, false);
      assert.equal(v!.status, undefined, 'no status for what cannot be verified');
      assert.match(unverifiableReason(ctx.live.advice.suggestions[0]!, ctx)!, /previous page/);
    });

    it('PostgreSQL: CREATE INDEX suggestions are verifiable, and the panel message passes the view guard', async () => {
      const ctx = await pgCtx('SELECT order_id, line FROM order_details WHERE quantity = 7 AND product_id = 9 ORDER BY order_id LIMIT 10');
      const views = suggestionViews(ctx);
      assert.ok(views.length >= 1);
      assert.match(views[0]!.ddl!, /^CREATE INDEX CONCURRENTLY ON order_details \(quantity, product_id, order_id\)/);
      assert.ok(views.every((v) => v.verifiable));
      const plan = corpusPlan('pg-json-analyze-sort-hashjoins-seqscans-missing-index.json');
      throughView({ type: 'showPlan', title: 'order_details', plan: wirePlan(plan), findings: analyze(plan), suggestions: views });
    });

    it('a refusal or no advice gives no suggestions', () => {
      assert.deepEqual(suggestionViews(undefined), []);
      const ctx = mongoCtx('db.orders.find({ country_id: 1 })');
      ctx.live.advice.refusal = 'The query cannot be advised.';
      assert.deepEqual(suggestionViews(ctx), []);
    });
  });

  describe('what the server cannot verify, in one sentence', () => {
    const q = "db.customers.find({ status: 'pending', score: { $gt: 900 } }).sort({ created: -1 }).limit(10)";
    const first = (ctx: AdviceContext) => ctx.live.advice.suggestions[0]!;

    it('a compatible server (no selectivity figures), an empty collection, variables of the code, $out', () => {
      const compatible = mongoCtx(q, { stats: undefined });
      assert.match(unverifiableReason(first(compatible), compatible)!, /not MongoDB itself/);
      const empty = mongoCtx(q, { stats: { total: 0 } });
      assert.match(unverifiableReason(first(empty), empty)!, /empty/);
      const vars = mongoCtx('db.customers.find({ status: s, score: { $gt: 900 } }).sort({ created: -1 }).limit(10)', { placeholders: true });
      assert.match(unverifiableReason(first(vars), vars)!, /variables in the code/);
      const out = mongoCtx("db.customers.aggregate([{ $match: { status: 'pending' } }, { $sort: { created: -1 } }, { $out: 'x' }])");
      assert.ok(out.live.advice.suggestions.length > 0);
      assert.match(unverifiableReason(first(out), out)!, /\$out or \$merge/);
      for (const ctx of [compatible, empty, vars, out]) {
        const [v] = suggestionViews(ctx);
        assert.equal(v?.verifiable, false);
      }
      const ok = mongoCtx(q);
      assert.equal(unverifiableReason(first(ok), ok), undefined);
    });
  });

  describe('the verdict of a verification', () => {
    it('a MongoDB trial verdict carries keys, documents and in-memory sort before and after, from real plans', () => {
      const ctx = mongoCtx("db.demoesr.find({ e: 42, r: { $gt: 10 } }).sort({ s: 1 })", { existing: [{ name: '_id_', key: { _id: 1 } }] });
      const s = ctx.live.advice.suggestions[0]!;
      const before = mongoNumbers(truthPlan('m02b_esr_sort_range64', 'loser2_bestWithBlockingSort__e_1_r_1.json'));
      const after = mongoNumbers(truthPlan('m02b_esr_sort_range64', 'oracle__e_1_s_1_r_1.json'));
      const v: MeasuredVerdict = {
        status: 'verified', method: 'sampled', unit: 'keys + documents examined + documents sorted in memory', before: before.work, after: after.work,
        planBefore: before.plan, planAfter: after.plan, numbersBefore: before, numbersAfter: after, sampleSize: 1000, collectionSize: 100_000, usedByPlanner: true,
        message: 'Verified on a random sample of 1,000 of 100,000 documents.',
      };
      s.verification = v;
      const st = statusOf(s);
      assert.equal(st.status, 'verified');
      assert.equal(st.detail, v.message);
      const verdict = st.verdict!;
      assert.equal(verdict.beforeLabel, 'today');
      assert.equal(verdict.afterLabel, 'with the index');
      assert.equal(verdict.before, before.work);
      assert.equal(verdict.after, after.work);
      assert.equal(verdict.figuresBefore!['sortedInMemory'], before.sorted);
      assert.ok(before.sorted > 0, 'the ER plan sorts in memory');
      assert.equal(verdict.figuresAfter!['sortedInMemory'], undefined, 'the ESR plan gives the order');
      assert.equal(verdict.figuresAfter!['keysExamined'], after.keysExamined);
      assert.equal(verdict.sampleSize, 1000);
      assert.match(verdict.how, /1,000 of 100,000 documents/);
      assert.equal(verdict.planBefore, 'SORT > FETCH > IXSCAN {e: 1, r: 1}');
      throughView({ type: 'suggestionStatus', id: 's1', status: st.status, detail: st.detail, verdict });
      // The view shows the verdict again when it reloads: it is part of the suggestion too.
      const [view] = suggestionViews(ctx);
      assert.equal(view?.status, 'verified');
      assert.deepEqual(view?.verdict, verdict);
    });

    it('a keep verdict compares the index with a collection scan; a cost that is not a number is left out', () => {
      const ctx = mongoCtx("db.orders.find({ country_id: 1, order_details: { $elemMatch: { product_id: 5 } } }).sort({ created_at: -1 }).limit(10)");
      const s = ctx.live.advice.suggestions[0]!;
      s.verification = { status: 'refuted', method: 'sampled', before: 120, after: Number.NaN, message: 'Not better than a collection scan.' } as MeasuredVerdict;
      const st = statusOf(s);
      assert.equal(st.status, 'rejected');
      assert.equal(st.verdict?.beforeLabel, 'collection scan');
      assert.equal(st.verdict?.afterLabel, 'through country_id_1_order_details.product_id_1_created_at_-1');
      assert.equal(st.verdict?.before, 120);
      assert.ok(!('after' in st.verdict!), 'NaN would arrive as null and fail the guard');
      throughView({ type: 'suggestionStatus', id: 's1', status: st.status, verdict: st.verdict });
    });

    it('a PostgreSQL measurement is told in PostgreSQL\'s words: rows in a temporary table, not documents in a scratch collection', async () => {
      const ctx = await pgCtx('SELECT order_id, line FROM order_details WHERE quantity = 7 AND product_id = 9 ORDER BY order_id LIMIT 10');
      const s = ctx.live.advice.suggestions[0]!;
      s.verification = { status: 'verified', method: 'sampled', unit: 'buffers (shared + local, hit + read) under EXPLAIN (ANALYZE, BUFFERS)', before: 40, after: 4, message: 'Verified.', sampleSize: 200_000, collectionSize: 220_000 } as MeasuredVerdict;
      const how = verdictOf(s)!.how;
      assert.match(how, /^a sample of 200,000 of 220,000 rows, copied into a temporary table/);
      assert.doesNotMatch(how, /document|collection/);
      s.verification = { ...s.verification, sampleSize: 50_000, collectionSize: 50_000 } as MeasuredVerdict;
      assert.match(verdictOf(s)!.how, /^all 50,000 rows/);
      // A verdict that does not say how many were copied never says "all 0".
      s.verification = { status: 'verified', method: 'sampled', unit: 'buffers (shared + local, hit + read) under EXPLAIN (ANALYZE, BUFFERS)', before: 40, after: 4, message: 'Verified.' } as MeasuredVerdict;
      assert.match(verdictOf(s)!.how, /^the rows, copied into a temporary table/);
    });

    it('the view guard refuses a verdict without its labels', () => {
      const parsed = parseHostMessage({ type: 'suggestionStatus', id: 's1', status: 'verified', verdict: { method: 'hypopg', how: 'x', before: 1 } });
      assert.equal(parsed.ok, false);
      assert.match(parsed.ok ? '' : parsed.reason, /verdict\.beforeLabel/);
    });

    it('a failed check has a sentence and no figures; not run is unverified', async () => {
      const ctx = await pgCtx('SELECT order_id, line FROM order_details WHERE quantity = 7 AND product_id = 9 ORDER BY order_id LIMIT 10');
      const s = ctx.live.advice.suggestions[0]!;
      assert.deepEqual(statusOf(s), { status: 'unverified' });
      s.verification = { status: 'failed', method: 'hypopg', message: 'The check failed: permission denied.' };
      assert.deepEqual(statusOf(s), { status: 'failed', detail: 'The check failed: permission denied.' });
      assert.equal(verdictOf(s), undefined);
    });
  });

  describe('what is tried, and what is asked first', () => {
    it('the suggestion asked for is among those tried, even beyond the first three', () => {
      const ctx = mongoCtx("db.customers.find({ status: 'pending', score: { $gt: 900 } }).sort({ created: -1 }).limit(10)", { existing: [] });
      const advice = ctx.live.advice;
      assert.equal(suggestionsToTry(advice, advice.suggestions[0]!), 3);
      const many: Advice = { ...advice, suggestions: [1, 2, 3, 4, 5].map((rank) => ({ ...advice.suggestions[0]!, rank })) };
      assert.equal(suggestionsToTry(many, many.suggestions[4]!), 5);
      assert.equal(findSuggestion(many, 's4')?.rank, 4);
    });

    it('the trial question says what is copied, where, how much, and that it is dropped', () => {
      const q = measureQuestion('orders', 'qpi_samples', 2500);
      assert.equal(q.kind, 'mongo-trial');
      assert.match(q.message, /random sample of qpi_samples\.orders/);
      assert.match(q.detail, /2,500 documents/);
      assert.match(q.detail, /scratch collection/);
      assert.match(q.detail, /same server/);
      assert.match(q.detail, /dropped, also on error or Cancel/);
      assert.match(q.detail, /orders itself and its indexes are not changed/);
      assert.match(measureStepText('copy', 'orders', 2500), /2,500 documents of orders/);
    });

    it('the build question says that writes to the table wait while the index builds', () => {
      const q = buildQuestion(['order_details'], false);
      assert.equal(q.kind, 'pg-build');
      assert.match(q.message, /rolled back/);
      assert.match(q.message, /locks writes to order_details/);
      assert.match(q.detail, /HypoPG is not installed/);
      assert.match(q.detail, /ROLLBACK/);
      assert.match(buildQuestion(['docs'], true).detail, /HypoPG cannot simulate/);
    });
  });
});
