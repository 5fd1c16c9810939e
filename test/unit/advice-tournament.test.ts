// The tournament's pure parts: the candidates read from a query's shape (generous, deduplicated, capped,
// the rules' picks and today's indexes first), the sample size chosen from the selectivity counts, and
// the verdict written from measured figures (least work first, an existing index kept when it does as
// well, the runner-up and today's figures in the message, the rule that lost named with its reason).
// The truth cases check that the candidates reach the index the oracle measured best, when the tournament
// applies to the query.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { adviseMongo } from '../../src/core/advice/mongoAdvisor';
import { canonicalKey, mongoCandidates, mongoOrCandidates } from '../../src/core/advice/mongoCandidates';
import { mongoShape, type MongoShape } from '../../src/core/advice/mongoShape';
import { applyTournament, indexLabel, NOISE_FLOOR, noiseFloor, rankEntries, SAME_WORK, tournamentSampleSize, MAX_TOURNAMENT_SAMPLE, type TournamentInput } from '../../src/core/advice/tournament';
import type { Advice, ExistingMongoIndex, MeasuredWork, MongoIndexKey, MongoQueryInput, PgIndexSpec, TournamentEntry } from '../../src/core/advice/types';
import { candidatesMeasurable } from '../../src/adapters/measure/mongoCandidates';
import { canonicalPgKey, pgCandidates, pgJoinCandidates } from '../../src/core/advice/pgCandidates';
import { mergedPgShape, parsePostgresQuery, type PgShape } from '../../src/core/advice/pgShape';

const truthDir = join(__dirname, '..', 'fixtures', 'truth');

function shapeOf(q: MongoQueryInput): MongoShape {
  const r = mongoShape(q);
  if (!r.ok) assert.fail(r.refusal);
  return r.shape;
}

const keysOf = (p: Record<string, number>): MongoIndexKey[] => Object.entries(p).map(([field, d]) => ({ field, direction: d === -1 ? -1 : 1 }));

describe('tournament candidates (MongoDB)', () => {
  const query: MongoQueryInput = { collection: 'demoesr', filter: { e: 42, r: { $gt: 10 } }, sort: { s: 1 } };

  it('holds ESR, ERS, the variants without the range, prefixes and the sort alone, once each', () => {
    const set = mongoCandidates(shapeOf(query), { cap: 100 });
    const keys = set.candidates.map((c) => canonicalKey(c.keys));
    for (const want of <Record<string, number>[]>[{ e: 1, s: 1, r: 1 }, { e: 1, r: 1, s: 1 }, { e: 1, s: 1 }, { e: 1 }, { s: 1 }, { r: 1, e: 1, s: 1 }]) {
      assert.ok(keys.includes(canonicalKey(keysOf(want))), `missing ${JSON.stringify(want)} in ${keys.join(' | ')}`);
    }
    assert.equal(new Set(keys).size, keys.length, 'a candidate appears twice');
    assert.equal(set.generated, set.candidates.length);
  });

  it('treats an index and its full reverse as one candidate', () => {
    assert.equal(canonicalKey(keysOf({ a: 1, b: -1 })), canonicalKey(keysOf({ a: -1, b: 1 })));
    assert.notEqual(canonicalKey(keysOf({ a: 1, b: 1 })), canonicalKey(keysOf({ a: 1, b: -1 })));
  });

  it('puts the rules\' picks first, marks existing indexes, extends them, and respects the cap', () => {
    const existing: ExistingMongoIndex[] = [{ name: '_id_', key: { _id: 1 } }, { name: 'e_1', key: { e: 1 } }, { name: 'r_1', key: { r: 1 } }];
    const advice = adviseMongo(query, { existing });
    const set = mongoCandidates(shapeOf(query), { advice, existing, cap: 5 });
    assert.equal(set.candidates.length, 5);
    assert.ok(set.generated > 5, 'the cap should have cut something');
    assert.equal(set.candidates[0]!.origin, 'rule');
    assert.equal(set.candidates[0]!.ruleRank, 1);
    const all = mongoCandidates(shapeOf(query), { advice, existing, cap: 100 }).candidates;
    assert.equal(all.find((c) => canonicalKey(c.keys) === canonicalKey(keysOf({ e: 1 })))?.existing, 'e_1');
    assert.ok(all.some((c) => c.origin === 'extension' && c.label === 'extends r_1' && c.keys[0]!.field === 'r' && c.keys.length === 3));
    assert.ok(!all.some((c) => c.keys.some((k) => k.field === '_id')));
  });

  it('leaves out an array field and adds covered variants', () => {
    const shape = shapeOf({ collection: 'c', filter: { status: 'pending', ratings: { $gt: 50, $lt: 52 } }, projection: { name: 1, _id: 0 } });
    const set = mongoCandidates(shape, { stats: { arrays: ['ratings'] }, cap: 100 });
    assert.ok(set.candidates.some((c) => canonicalKey(c.keys) === canonicalKey(keysOf({ status: 1 }))));
    assert.ok(set.candidates.some((c) => c.origin === 'covered' && c.keys.some((k) => k.field === 'name')));
  });

  it('measures a $or as groups: the rules\' index per branch, a candidate of every branch together, and indexes on what lies outside the $or', () => {
    const q: MongoQueryInput = { collection: 'orders', operation: 'find', filter: { status: 'paid', $or: [{ customer: 7 }, { region: 'eu', total: { $gt: 100 } }] } };
    const advice = adviseMongo(q);
    const { groups } = mongoOrCandidates(shapeOf(q), { advice, existing: [{ name: 'status_1', key: { status: 1 } }] });
    const text = groups.map((g) => g.members.map((m) => Object.keys(m.keyPattern).join('_')).join(' + '));
    assert.equal(groups[0]!.rule, 'or-branch');
    assert.deepEqual(groups[0]!.members.map((m) => m.rule), advice.suggestions.filter((s) => s.rule === 'or-branch' && s.action === 'create').map(() => 'or-branch'));
    assert.ok(text.includes('status_customer + status_region_total'), text.join(' | '));
    // The condition outside the $or serves every branch at once; its index exists, so it is today's, not a candidate.
    assert.ok(!text.includes('status'), text.join(' | '));
    assert.equal(new Set(text.map((t) => t.split(' + ').sort().join(' + '))).size, text.length, 'a group measured twice');
  });

  it('reaches the oracle\'s index in every truth case the tournament judges', () => {
    let judged = 0;
    for (const id of readdirSync(truthDir).filter((d) => d.startsWith('m'))) {
      const c = JSON.parse(readFileSync(join(truthDir, id, 'case.json'), 'utf8')) as { query: { structured: MongoQueryInput }; oracle: { index: unknown }; ties?: { index: unknown }[] };
      const shape = mongoShape(c.query.structured);
      // A $or over different fields is measured as groups of indexes, which a hinted oracle index is not.
      if (!shape.ok || !candidatesMeasurable(shape.shape) || shape.shape.orBranches.length > 0 || typeof c.oracle.index !== 'object') continue;
      judged++;
      const keys = mongoCandidates(shape.shape, { advice: adviseMongo(c.query.structured) }).candidates.map((x) => canonicalKey(x.keys));
      const good = [c.oracle.index, ...(c.ties ?? []).map((t) => t.index)].filter((i): i is Record<string, number> => typeof i === 'object' && i !== null);
      assert.ok(good.some((g) => keys.includes(canonicalKey(keysOf(g)))), `${id}: the oracle's ${JSON.stringify(c.oracle.index)} is not among ${keys.join(' | ')}`);
    }
    assert.ok(judged >= 10, `only ${judged} truth cases were judged`);
  });
});

describe('tournament sample size', () => {
  it('grows as fewer documents match, within its bounds', () => {
    assert.equal(tournamentSampleSize(500, 10), 500, 'a small collection is copied whole');
    const common = tournamentSampleSize(200_000, 100_000);
    const rare = tournamentSampleSize(200_000, 2_000);
    assert.ok(rare > common, `${rare} should exceed ${common}`);
    assert.equal(tournamentSampleSize(200_000, 1), MAX_TOURNAMENT_SAMPLE);
    assert.equal(tournamentSampleSize(200_000, 2_000, { max: 5_000 }), 5_000);
    assert.ok(tournamentSampleSize(200_000, 100_000, { limit: 1_000 }) >= 8_000, 'four times the limit must match');
    assert.equal(tournamentSampleSize(0, undefined), 0);
  });
});

// ---- verdicts -------------------------------------------------------------------------------------------

function work(keys: number, docs: number, sorted = 0): MeasuredWork {
  return { work: keys + docs + sorted, keysExamined: keys, docsExamined: docs, sorted, rows: docs, blockingSort: sorted > 0, plan: sorted > 0 ? 'SORT > FETCH > IXSCAN' : 'FETCH > IXSCAN' };
}

function entry(pattern: Record<string, number>, m: MeasuredWork | undefined, extra: Partial<TournamentEntry> = {}): TournamentEntry {
  const keys = keysOf(pattern);
  const e: TournamentEntry = { label: JSON.stringify(pattern), origin: 'esr', index: { engine: 'mongodb', collection: 'c', keys, keyPattern: pattern as Record<string, 1 | -1> }, createText: `db.c.createIndex(${JSON.stringify(pattern)})`, ...extra };
  if (m) e.measured = m;
  return e;
}

function input(entries: TournamentEntry[], extra: Partial<TournamentInput> = {}): TournamentInput {
  return { engine: 'mongodb', unit: 'work', sample: { size: 1000, total: 10_000, scaled: true }, label: 'measured from a sample of 1,000 of 10,000 documents', generated: entries.length, entries, today: work(0, 1000, 50), ...extra };
}

function emptyAdvice(): Advice {
  return { engine: 'mongodb', shapes: [], suggestions: [], rewrites: [], notes: [], warnings: [] };
}

describe('tournament verdicts', () => {
  it('ranks by measured work and puts failed runs last', () => {
    const r = rankEntries([entry({ a: 1 }, work(50, 50)), entry({ b: 1 }, undefined, { error: 'x' }), entry({ c: 1 }, work(5, 5))]);
    assert.deepEqual(r.map((e) => e.label), ['{"c":1}', '{"a":1}', '{"b":1}']);
  });

  it('verifies the least work, with the runner-up and today in the message, and says which rule lost', () => {
    const advice = emptyAdvice();
    const rulePick = entry({ e: 1, s: 1, r: 1 }, work(1875, 195, 0), { ruleRank: 1, rule: 'esr', origin: 'rule' });
    const best = entry({ r: 1, e: 1, s: 1 }, work(199, 195, 195));
    const t = applyTournament(advice, input([rulePick, best, entry({ e: 1 }, work(3000, 3000))]));
    assert.equal(t.winner, best);
    assert.equal(t.runnerUp, rulePick);
    const first = advice.suggestions[0]!;
    assert.equal(first.action, 'create');
    assert.deepEqual((first.index as { keyPattern: unknown }).keyPattern, { r: 1, e: 1, s: 1 });
    assert.equal(first.verification.status, 'verified');
    const msg = first.verification.status === 'verified' ? first.verification.message : '';
    assert.match(msg, /least work of 3 candidates/);
    assert.match(msg, /runner-up \{e: 1, s: 1, r: 1\}/);
    assert.match(msg, /today /);
    assert.equal(advice.suggestions[1]!.verification.status, 'refuted');
    assert.match(t.overturned ?? '', /rules' pick \{e: 1, s: 1, r: 1\} \(esr\) lost/);
    assert.match(t.overturned ?? '', /examines 1,875 keys against 199/);
  });

  it('names an in-memory sort and multikey bounds as the reason a rule lost', () => {
    const sortLoses = applyTournament(emptyAdvice(), input([entry({ e: 1, r: 1 }, work(10, 10, 900), { ruleRank: 1, rule: 'ers' }), entry({ e: 1, s: 1 }, work(100, 100))]));
    assert.match(sortLoses.overturned ?? '', /sorts 900 documents in memory/);
    const arrays = applyTournament(emptyAdvice(), input([entry({ status: 1, ratings: 1 }, work(491, 205), { ruleRank: 1, rule: 'er' }), entry({ status: 1 }, work(214, 214))], { facts: { arrays: ['ratings'] } }));
    assert.match(arrays.overturned ?? '', /ratings holds arrays/);
  });

  it('keeps an existing index that does as well, and lets the rules\' pick stand within noise', () => {
    const advice = emptyAdvice();
    const t = applyTournament(advice, input([entry({ a: 1, b: 1 }, work(100, 100)), entry({ a: 1 }, work(100, 100 * SAME_WORK - 110), { existing: 'a_1' })]));
    assert.equal(t.winner?.existing, 'a_1');
    assert.equal(advice.suggestions[0]!.action, 'keep');
    assert.equal(advice.suggestions[0]!.keep?.name, 'a_1');
    assert.equal(advice.suggestions[0]!.createText, undefined);
    assert.ok(!advice.suggestions.some((s) => s.action === 'create' && JSON.stringify((s.index as { keyPattern?: unknown }).keyPattern) === '{"a":1}'), 'an existing index must never be suggested for creation');

    const near = applyTournament(emptyAdvice(), input([entry({ x: 1 }, work(100, 100)), entry({ y: 1 }, work(104, 100), { ruleRank: 1, rule: 'esr' })]));
    assert.equal(near.winner?.label, '{"y":1}');
    assert.equal(near.overturned, undefined);
  });

  it('keeps today\'s plan when the best new index does no less work beyond noise (4 buffers against 3), and says so', () => {
    const pgWork = (buffers: number, timeMs: number, index?: string): MeasuredWork => ({ work: buffers, buffers, rows: 3, timeMs, blockingSort: false, plan: 'Limit > Index Scan', ...(index !== undefined ? { index } : {}) });
    const today = pgWork(4, 0.1, 'orders_created_id');
    const newIndex = entry({ created_at: -1, country_id: 1 }, pgWork(3, 0.1));
    const existing = entry({ created_at: -1, id: 1 }, pgWork(4, 0.1, 'orders_created_id'), { existing: 'orders_created_id' });
    const advice = emptyAdvice();
    const t = applyTournament(advice, input([newIndex, existing], { today }));
    assert.equal(t.winner?.existing, 'orders_created_id');
    assert.equal(advice.suggestions[0]!.action, 'keep');
    const first = advice.suggestions[0]!.verification;
    assert.match(first.status === 'verified' ? first.message : '', /within noise/);
    // The new index is second and not "rejected": it is as good within noise.
    assert.equal(advice.suggestions[1]!.verification.status, 'verified');
    assert.match(advice.suggestions[1]!.verification.status === 'verified' ? advice.suggestions[1]!.verification.message : '', /^Within noise of the first/);

    // Today's plan without an index of its own: no new index, even without a scan entry to stand for it.
    const scanToday = applyTournament(emptyAdvice(), input([entry({ a: 1 }, work(10, 10))], { today: work(0, 21) }));
    assert.equal(scanToday.winner?.index, undefined);
    assert.match(scanToday.verdict, /^No new index\. Verified: today's plan/);
  });

  it('never verifies a new index that ran clearly slower than today\'s plan, nor one that does more work', () => {
    const timed = (w: number, timeMs: number): MeasuredWork => ({ ...work(w, 0), timeMs });
    const slower = applyTournament(emptyAdvice(), input([entry({ a: 1 }, timed(100, 20.3))], { today: timed(400, 12.2) }));
    assert.equal(slower.winner?.index, undefined, 'a candidate slower than today is not the winner');
    assert.match(slower.verdict, /ran slower, so today's plan stays/);
    const more = applyTournament(emptyAdvice(), input([entry({ a: 1 }, timed(500, 1))], { today: timed(400, 1) }));
    assert.equal(more.winner?.index, undefined);
    const clearly = applyTournament(emptyAdvice(), input([entry({ a: 1 }, timed(100, 1))], { today: timed(400, 1) }));
    assert.deepEqual((clearly.winner?.index as { keyPattern?: unknown } | undefined)?.keyPattern, { a: 1 });
  });

  it('never suggests a new index whose keys an existing index starts with, however little it reads', () => {
    const advice = emptyAdvice();
    const narrow = entry({ created_at: -1 }, work(85, 0));
    const today = entry({ created_at: -1, id: -1 }, work(96, 0), { existing: 'created_id' });
    const t = applyTournament(advice, input([narrow, today, entry({ x: 1 }, work(500, 500))], { existing: { mongodb: [{ name: 'created_id', key: { created_at: -1, id: -1 } }] } }));
    assert.equal(t.winner?.existing, 'created_id');
    assert.equal(advice.suggestions[0]!.action, 'keep');
    assert.ok(!advice.suggestions.some((s) => s.action === 'create' && JSON.stringify((s.index as { keyPattern?: unknown }).keyPattern) === '{"created_at":-1}'));
    // Without the existing indexes given, the narrower one would have won.
    const blind = applyTournament(emptyAdvice(), input([narrow, today]));
    assert.equal(blind.winner, narrow);
    // Three were measured (the header's count): the verdict's "of 2" says where the third went.
    assert.equal(t.tried, 3);
    const verification = advice.suggestions[0]!.verification;
    assert.ok(verification && 'message' in verification);
    assert.match(verification.message, /least work of 2 candidates, .* 1 more, which an existing index already serves, was measured and not suggested\.$/);
    assert.match(t.verdict, /1 more, which an existing index already serves, was measured and not suggested\.$/);
    assert.doesNotMatch(blind.verdict, /more, which an existing index/);
  });

  it('gives the same first suggestion whatever the order and the noise of near-equal candidates', () => {
    const firstOf = (a: number, b: number, c: number, order: number[]): string => {
      const advice = emptyAdvice();
      const es = [entry({ a: 1, b: 1 }, work(a, 10)), entry({ b: 1 }, work(b, 10)), entry({ c: 1, a: 1 }, work(c, 10))];
      applyTournament(advice, input(order.map((i) => es[i]!)));
      return JSON.stringify((advice.suggestions[0]!.index as { keyPattern?: unknown } | undefined)?.keyPattern ?? null);
    };
    const seen = new Set<string>();
    for (const [a, b, c] of [[100, 101, 102], [102, 100, 101], [101, 102, 100], [100, 100, 100]]) {
      for (const order of [[0, 1, 2], [2, 1, 0], [1, 0, 2]]) seen.add(firstOf(a!, b!, c!, order));
    }
    assert.deepEqual([...seen], ['{"b":1}'], 'within noise the smaller index wins every time');
    // A difference beyond noise still decides.
    assert.equal(firstOf(50, 100, 100, [0, 1, 2]), '{"a":1,"b":1}');
  });

  it('on a PostgreSQL table measured whole counts one buffer as a difference, and on a sample as noise', () => {
    // `WHERE priority = 2 AND customer_id = 4007 ORDER BY id`: (customer_id) reads 3 pages, (customer_id,
    // priority) 2 on the whole table; today's plan (the primary key walked in order) reads 420.
    const pgWork = (buffers: number): MeasuredWork => ({ work: buffers, buffers, rows: 2, timeMs: 0.1, blockingSort: false, plan: 'Index Scan' });
    const pgEntry = (columns: string[], buffers: number): TournamentEntry => {
      const spec: PgIndexSpec = { engine: 'postgres', table: 'orders', method: 'btree', keys: columns.map((column) => ({ column })) };
      return { label: indexLabel(spec), origin: 'esr', index: spec, createText: `CREATE INDEX ON orders (${columns.join(', ')});`, measured: pgWork(buffers) };
    };
    const first = (sample: TournamentInput['sample']): string | undefined => {
      const advice: Advice = { engine: 'postgres', shapes: [], suggestions: [], rewrites: [], notes: [], warnings: [] };
      const entries = [pgEntry(['customer_id'], 3), pgEntry(['customer_id', 'priority'], 2)];
      applyTournament(advice, { engine: 'postgres', unit: 'buffers', sample, label: 'measured on all rows', generated: 2, entries, today: pgWork(420) });
      const ix = advice.suggestions[0]?.index;
      return ix?.engine === 'postgres' ? ix.keys.map((k) => k.column).join(', ') : undefined;
    };
    assert.equal(first({ size: 100_000, total: 100_000, scaled: false }), 'customer_id, priority', 'measured whole, a page less is less work');
    assert.equal(first({ size: 200_000, total: 1_000_000, scaled: true }), 'customer_id', 'on a sample one buffer is noise: the smaller index');
    assert.equal(noiseFloor({ engine: 'postgres', sample: { size: 100_000, total: 100_000, scaled: false } }), 0);
    assert.equal(noiseFloor({ engine: 'mongodb', sample: { size: 20_000, total: 20_000, scaled: false } }), NOISE_FLOOR);
  });

  it('suggests a measured group of $or branch indexes whole, each as an or-branch index, and no other group', () => {
    const advice = emptyAdvice();
    const group = (patterns: Record<string, number>[], m: MeasuredWork, extra: Partial<TournamentEntry> = {}): TournamentEntry => {
      const members = patterns.map((p) => entry(p, undefined));
      return { ...members[0]!, label: 'one index per branch', measured: m, set: members.map((x) => ({ index: x.index!, createText: x.createText! })), ...extra };
    };
    const rules = group([{ a: 1 }, { b: 1 }], work(400, 300), { ruleRank: 1, rule: 'or-branch', origin: 'rule' });
    const best = group([{ a: 1, c: 1 }, { b: 1, c: 1 }, { d: 1 }], work(40, 30));
    const other = group([{ a: 1, d: 1 }, { b: 1 }], work(60, 50));
    const t = applyTournament(advice, input([rules, best, other, entry({ c: 1 }, work(900, 900))]));
    assert.equal(t.winner, best);
    assert.deepEqual(advice.suggestions.filter((s) => s.rule === 'or-branch').map((s) => JSON.stringify((s.index as { keyPattern: unknown }).keyPattern)), ['{"a":1,"c":1}', '{"b":1,"c":1}', '{"d":1}']);
    assert.ok(advice.suggestions.slice(0, 3).every((s) => s.action === 'create' && s.verification.status === 'verified'));
    assert.match(t.verdict, /^Create \{a: 1, c: 1\} \+ \{b: 1, c: 1\} \+ \{d: 1\}\. Verified: least work of 4 candidates/);
    assert.match(t.overturned ?? '', /The rules' pick \{a: 1\} \+ \{b: 1\} \(or-branch\) lost/);
  });

  it('says when nothing could be measured', () => {
    const t = applyTournament(emptyAdvice(), input([entry({ a: 1 }, undefined, { error: 'cannot build' })]));
    assert.equal(t.winner, undefined);
    assert.match(t.verdict, /No candidate could be measured/);
  });
});

describe('tournament candidates (PostgreSQL)', () => {
  async function shape(sql: string): Promise<PgShape> {
    const r = await parsePostgresQuery(sql);
    if (!r.ok) assert.fail(r.refusal);
    return r.shapes[0]!;
  }
  const text = (c: { spec: PgIndexSpec }): string => indexLabel(c.spec);

  it('holds ESR with the ORDER BY direction, ERS, a partial index, INCLUDE and prefixes, once each', async () => {
    // a has 5 distinct values here, so one of them may deserve a partial index of its own.
    const set = pgCandidates(await shape('SELECT b, c, d FROM esr WHERE a = 42 AND c > 10 ORDER BY b DESC LIMIT 10'), { cap: 100, stats: { distinct: { a: 5 } } })!;
    const all = set.candidates.map(text);
    for (const want of ['esr (a, b DESC, c)', 'esr (a, c, b DESC)', 'esr (b DESC, c) WHERE a = 42', 'esr (a, b DESC, c) INCLUDE (d)', 'esr (a)', 'esr (a, b DESC)']) {
      assert.ok(all.includes(want), `missing ${want} in ${all.join(' | ')}`);
    }
    assert.equal(new Set(set.candidates.map((c) => canonicalPgKey(c.spec))).size, set.candidates.length);
    assert.ok(set.candidates.every((c) => !/CONCURRENTLY|;/.test(c.ddl)), 'a trial DDL must run inside a transaction');
  });

  it('offers a partial index only on a column of few values, never for one id among many', async () => {
    const sql = 'SELECT * FROM esr WHERE a = 42 AND b = 7 ORDER BY c LIMIT 10';
    const partials = (distinct: Record<string, number> | undefined): string[] =>
      pgCandidates(parsed, { cap: 100, ...(distinct ? { stats: { distinct } } : {}) })!.candidates.filter((c) => c.spec.predicate !== undefined).map(text);
    const parsed = await shape(sql);
    assert.deepEqual(partials({ a: 100_000, b: 4 }), ['esr (a, c) WHERE b = 7']);
    assert.deepEqual(partials(undefined), [], 'without statistics no value is known to be one of few');
    const nulls = pgCandidates(await shape('SELECT * FROM esr WHERE a IS NULL ORDER BY c LIMIT 10'), { cap: 100 })!;
    assert.ok(nulls.candidates.some((c) => text(c) === 'esr (c) WHERE a IS NULL'), nulls.candidates.map(text).join(' | '));
  });

  it('offers a trigram GIN for patterns with a leading wildcard, GiST for overlaps, and GIN with btree_gin beside an equality', async () => {
    const like = pgCandidates(await shape("SELECT id FROM items WHERE name ILIKE '%abc%'"), { cap: 100 })!;
    const trgm = like.candidates.find((c) => c.spec.opclass === 'gin_trgm_ops');
    assert.equal(trgm?.ddl, 'CREATE INDEX ON items USING gin (name gin_trgm_ops)');
    const prefix = pgCandidates(await shape("SELECT id FROM items WHERE name LIKE 'abc%'"), { cap: 100 })!;
    assert.ok(!prefix.candidates.some((c) => c.spec.opclass === 'gin_trgm_ops'), 'a prefix is a B-tree range, not a trigram search');
    const overlap = pgCandidates(await shape("SELECT id FROM bookings WHERE room = 3 AND during && tstzrange('2025-01-01', '2025-01-02')"), { cap: 100 })!;
    const ddls = overlap.candidates.map((c) => c.ddl);
    assert.ok(ddls.includes('CREATE INDEX ON bookings USING gist (during)'), ddls.join(' | '));
    assert.ok(ddls.includes('CREATE INDEX ON bookings USING gin (room, during)'), ddls.join(' | '));
    const contains = pgCandidates(await shape(`SELECT * FROM docs WHERE body @> '{"a": 1}'`), { cap: 100 })!;
    assert.ok(contains.candidates.some((c) => c.ddl === 'CREATE INDEX ON docs USING gin (body jsonb_path_ops)'));
  });

  it('puts the join columns of each table before, after and without its filters in a join', async () => {
    const r = await parsePostgresQuery('SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = \'fr\' AND o.status = \'paid\' ORDER BY o.created_at LIMIT 5');
    if (!r.ok) assert.fail(r.refusal);
    const set = pgJoinCandidates(r.shapes[0]!, { cap: 100, existing: [{ name: 'customers_pkey', table: 'customers', columns: [{ column: 'id' }], primary: true, unique: true }] });
    const all = set.candidates.map(text);
    for (const want of ['orders (customer_id, status, created_at)', 'orders (status, customer_id)', 'orders (status, created_at)', 'orders (customer_id)', 'customers (country, id)', 'customers (country)']) {
      assert.ok(all.includes(want), `missing ${want} in ${all.join(' | ')}`);
    }
    assert.ok(!all.includes('customers (id)'), 'the primary key exists: today already has it');
    assert.equal(new Set(all).size, all.length);
    const capped = pgJoinCandidates(r.shapes[0]!, { cap: 4 });
    assert.equal(capped.candidates.length, 4);
    assert.deepEqual([...new Set(capped.candidates.map((c) => c.spec.table))].sort(), ['customers', 'orders'], 'a cap keeps candidates of every table');
  });

  it('reads a LATERAL subquery\'s reference to the table before it as one value per row', async () => {
    const r = await parsePostgresQuery('SELECT c.id, o.total FROM customers c CROSS JOIN LATERAL (SELECT total FROM orders o WHERE o.customer_id = c.id ORDER BY o.created_at DESC LIMIT 3) o WHERE c.tenant = 7');
    if (!r.ok) assert.fail(r.refusal);
    const inner = r.shapes.find((x) => x.tables.some((t) => t.name === 'orders'))!;
    assert.deepEqual(inner.predicates.map((p) => [p.column, p.kind]), [['customer_id', 'equality']]);
    const merged = mergedPgShape(r.shapes)!;
    assert.deepEqual(merged.tables.map((t) => t.name).sort(), ['customers', 'orders']);
    const all = pgJoinCandidates(merged, { cap: 100 }).candidates.map(text);
    assert.ok(all.includes('orders (customer_id, created_at DESC)'), all.join(' | '));
  });

  it('treats an index and its full reverse as one, and marks the existing ones', async () => {
    const a: PgIndexSpec = { engine: 'postgres', table: 't', method: 'btree', keys: [{ column: 'a' }, { column: 'b', desc: true }] };
    const b: PgIndexSpec = { engine: 'postgres', table: 't', method: 'btree', keys: [{ column: 'a', desc: true }, { column: 'b' }] };
    assert.equal(canonicalPgKey(a), canonicalPgKey(b));
    const set = pgCandidates(await shape('SELECT * FROM esr WHERE a = 42 ORDER BY b'), { existing: [{ name: 'esr_a_b', table: 'esr', columns: [{ column: 'a' }, { column: 'b' }] }] })!;
    assert.equal(set.candidates.find((c) => text(c) === 'esr (a, b)')?.existing, 'esr_a_b');
  });

  it('offers GIN for containment, jsonb_path_ops when @> is the only operator', async () => {
    const set = pgCandidates(await shape(`SELECT * FROM docs WHERE body @> '{"a": 1}'`))!;
    assert.ok(set.candidates.some((c) => c.spec.method === 'gin' && c.spec.opclass === 'jsonb_path_ops'));
    assert.ok(set.candidates.some((c) => c.spec.method === 'gin' && c.spec.opclass === undefined));
  });

  it('gives none for a statement over several tables', async () => {
    assert.equal(pgCandidates(await shape('SELECT * FROM a JOIN b ON a.id = b.a_id WHERE a.x = 1')), undefined);
  });
});
