// Pipelines as the server rewrites them, without a server: the filter an aggregate's explain shows
// pushed to the collection scan, read from real explain output (test/fixtures/corpus, the server version
// in each name); the advice following that filter where it and the rules' split disagree, and staying as
// it was where they agree; and a $lookup's other collection: a note offline, a suggestion on that
// collection when the indexes listed there do not lead with its foreignField.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { adviseMongo } from '../../src/core/advice/mongoAdvisor';
import { explainedLead, lookupAdvice } from '../../src/core/advice/mongoPipeline';
import { mongoLookups, mongoShape, withExplainedLead } from '../../src/core/advice/mongoShape';
import { keepServedIndexes } from '../../src/core/advice/served';
import type { ExistingMongoIndex, MongoIndexSpec, MongoQueryInput } from '../../src/core/advice/types';

const corpus = join(__dirname, '..', 'fixtures', 'corpus');
const explainOf = (file: string): unknown => JSON.parse(readFileSync(join(corpus, file), 'utf8'));

describe('advice: the pipeline as the server explains it', function () {
  describe('explainedLead reads real explains', function () {
    it('slot-based engine, $group pushed down (6.0.5): the $cursor parsedQuery', function () {
      assert.deepEqual(explainedLead(explainOf('mongo-agg-sbe-group-execstats-6.0.5-local.json'))?.filter, { status: { $eq: 'B' } });
    });

    it('slot-based engine with $unwind left in the pipeline (5.3): the range pushed down', function () {
      assert.deepEqual(explainedLead(explainOf('mongo-agg-sbe-match-project-unwind-limit-execstats-5.3.json'))?.filter, { i: { $lt: 1000 } });
    });

    it('classic engine, a $match left after $lookup (5.0): nothing pushed down, an empty filter', function () {
      const lead = explainedLead(explainOf('mongo-agg-lookup-limit-unwind-match-collscan-5.0.json'));
      assert.deepEqual(lead, { filter: {} });
    });

    it('sharded (5.0 classic, 5.3 slot-based with $group pushed down): the first shard\'s, which every shard was given', function () {
      assert.deepEqual(explainedLead(explainOf('mongo-sharded-agg-in-group-sort-covered-qp-5.0.json'))?.filter, { host_id: { $in: [1, 100000000] } });
      assert.deepEqual(explainedLead(explainOf('mongo-sharded-agg-sbe-no-stages-5.3.json'))?.filter, { abbreviation: { $eq: 'PNG' } });
      assert.deepEqual(explainedLead(explainOf('mongo-sharded-agg-multishard-no-stages-5.3.json'))?.filter, {});
    });

    it('an Atlas Search cursor has no query layer to read', function () {
      assert.equal(explainedLead(explainOf('mongo-agg-atlas-search-addfields-meta-sort-limit-qp-6.0.json')), undefined);
    });

    it('a SORT of what a pushed-down $group made is no sort of the collection\'s documents', function () {
      const explain = {
        explainVersion: '2',
        queryPlanner: {
          parsedQuery: { status: { $eq: 'A' } },
          winningPlan: { queryPlan: { stage: 'SORT', sortPattern: { total: -1 }, inputStage: { stage: 'GROUP', inputStage: { stage: 'COLLSCAN' } } } },
        },
      };
      assert.deepEqual(explainedLead(explain), { filter: { status: { $eq: 'A' } } });
    });

    it('a $geoNear cursor has no query layer to read', function () {
      assert.equal(explainedLead(explainOf('mongo-agg-geonear-2dsphere-allplans-5.0.json')), undefined);
    });

    it('not an explain at all: undefined, no throw', function () {
      assert.equal(explainedLead(null), undefined);
      assert.equal(explainedLead({ stages: ['x'] }), undefined);
      assert.equal(explainedLead({ ok: 1 }), undefined);
    });

    it('the sort a SORT stage of the winning plan does, and $expr comparisons as the bounds they give', function () {
      const explain = {
        explainVersion: '1',
        stages: [
          {
            $cursor: {
              queryPlanner: {
                parsedQuery: { $and: [{ a: { $_internalExprEq: 5 } }, { $expr: { $eq: ['$a', 5] } }] },
                winningPlan: { stage: 'PROJECTION_SIMPLE', inputStage: { stage: 'SORT', sortPattern: { b: -1 }, inputStage: { stage: 'COLLSCAN' } } },
              },
            },
          },
          { $unwind: { path: '$tags' } },
        ],
      };
      assert.deepEqual(explainedLead(explain), { filter: { $and: [{ a: { $eq: 5 } }, { $expr: { $eq: ['$a', 5] } }] }, sort: { b: -1 } });
    });
  });

  describe('the advisor given the explained filter', function () {

    const unwindThenMatch: MongoQueryInput = { collection: 'orders', operation: 'aggregate', pipeline: [{ $unwind: '$items' }, { $match: { status: 'A' } }] };

    it('where the explain agrees with the rules\' split, the advice is the same as without it', function () {
      const rules = adviseMongo(unwindThenMatch);
      const explained = adviseMongo(withExplainedLead(unwindThenMatch, { filter: { status: { $eq: 'A' } } }));
      assert.deepEqual(explained, rules);
      assert.deepEqual(rules.suggestions[0]?.index && (rules.suggestions[0].index as MongoIndexSpec).keyPattern, { status: 1 });
    });

    it('where the server did not move the $match, no index is suggested for it and the notes say why', function () {
      const advice = adviseMongo(withExplainedLead(unwindThenMatch, { filter: {} }));
      assert.ok(!advice.suggestions.some((s) => s.action === 'create'), JSON.stringify(advice.suggestions.map((s) => s.createText)));
      assert.ok(advice.notes.some((n) => /stage 2 on status stays after \$unwind on this server .*no index can help that stage/.test(n)), advice.notes.join('\n'));
      assert.equal(advice.notes.filter((n) => /the advice follows the explain/.test(n)).length, 1);
      assert.ok(!advice.notes.some((n) => /The server moves the part/.test(n)));
    });

    it('where the server moved more than the rules read, the index is for what it moved', function () {
      // A $match after a computed field the rules cannot see through, which the explain shows pushed down.
      const query: MongoQueryInput = { collection: 'orders', operation: 'aggregate', pipeline: [{ $addFields: { total: { $add: ['$a', 1] } } }, { $match: { region: 'EU', total: { $gt: 3 } } }] };
      const rules = mongoShape(query);
      assert.ok(rules.ok);
      const advice = adviseMongo(withExplainedLead(query, { filter: { region: { $eq: 'EU' } } }));
      const first = advice.suggestions.find((s) => s.action === 'create');
      assert.deepEqual(first && (first.index as MongoIndexSpec).keyPattern, { region: 1 });
      assert.ok(advice.notes.some((n) => /filtered on region where the rules' reading of the pipeline gives .*: the advice follows the explain\./.test(n)), advice.notes.join('\n'));
    });

    it('a sort the explain shows the query layer doing is advised for', function () {
      const query: MongoQueryInput = { collection: 'orders', operation: 'aggregate', pipeline: [{ $unwind: '$items' }, { $match: { status: 'A' } }] };
      const shape = mongoShape(withExplainedLead(query, { filter: { status: { $eq: 'A' } }, sort: { created: -1 } }));
      assert.ok(shape.ok);
      assert.deepEqual(shape.shape.sort, [{ path: 'created', direction: -1 }]);
    });
  });

  describe('$lookup: the other collection', function () {
    const joined: MongoQueryInput = {
      collection: 'orders',
      operation: 'aggregate',
      pipeline: [{ $match: { status: 'A' } }, { $lookup: { from: 'customers', localField: 'customer_id', foreignField: 'cust_no', as: 'customer' } }],
    };

    it('offline: a note naming the other collection and its foreignField, and no suggestion on it', function () {
      const advice = adviseMongo(joined);
      assert.ok(advice.notes.some((n) => /\$lookup at stage 2 reads customers by cust_no .*db\.customers\.createIndex\(\{cust_no: 1\}\)/.test(n)), advice.notes.join('\n'));
      assert.ok(!advice.suggestions.some((s) => (s.index as MongoIndexSpec | undefined)?.collection === 'customers'));
    });

    it('the suggestion on customers is not turned into "keep using" an index of orders that leads with the same field', function () {
      const advice = lookupAdvice(adviseMongo(joined), mongoLookups(joined), { customers: [{ name: '_id_', key: { _id: 1 } }] });
      const ordersIndexes: ExistingMongoIndex[] = [{ name: '_id_', key: { _id: 1 } }, { name: 'cust_no_1', key: { cust_no: 1 } }];
      const onCustomers = (a: typeof advice) => a.suggestions.find((x) => (x.index as MongoIndexSpec | undefined)?.collection === 'customers');
      // Without the queried collection's name, the orders index would be taken to serve it.
      assert.equal(onCustomers(keepServedIndexes(structuredClone(advice), { mongodb: ordersIndexes }))?.action, 'keep');
      const kept = keepServedIndexes(structuredClone(advice), { mongodb: ordersIndexes }, 'orders');
      assert.equal(onCustomers(kept)?.action, 'create');
      assert.equal(onCustomers(kept)?.createText, 'db.customers.createIndex({cust_no: 1})');
    });

    it('connected, no index on customers leads with cust_no: a second suggestion on customers with its reason', function () {
      const rules = adviseMongo(joined);
      const advice = lookupAdvice(rules, mongoLookups(joined), { customers: [{ name: '_id_', key: { _id: 1 } }, { name: 'name_1_cust_no_1', key: { name: 1, cust_no: 1 } }] });
      assert.equal(advice.suggestions.length, rules.suggestions.length + 1);
      const last = advice.suggestions.at(-1)!;
      assert.equal(last.rank, advice.suggestions.length);
      assert.equal(last.rule, 'join-key');
      assert.deepEqual((last.index as MongoIndexSpec).collection, 'customers');
      assert.deepEqual((last.index as MongoIndexSpec).keyPattern, { cust_no: 1 });
      assert.equal(last.createText, 'db.customers.createIndex({cust_no: 1})');
      assert.match(last.ruleText, /customers has no index that leads with cust_no/);
      assert.equal(advice.suggestions[0], rules.suggestions[0]);
      assert.ok(!advice.notes.some((n) => /reads customers by cust_no once/.test(n)));
    });

    it('connected, an index leads with cust_no: a note names it, no suggestion', function () {
      const rules = adviseMongo(joined);
      const advice = lookupAdvice(rules, mongoLookups(joined), { customers: [{ name: 'cust_no_1', key: { cust_no: 1 } }] });
      assert.equal(advice.suggestions.length, rules.suggestions.length);
      assert.ok(advice.notes.some((n) => /through its index cust_no_1/.test(n)), advice.notes.join('\n'));
    });

    it('connected, a hidden or partial index leading with cust_no does not count', function () {
      const rules = adviseMongo(joined);
      const advice = lookupAdvice(rules, mongoLookups(joined), { customers: [
        { name: 'h', key: { cust_no: 1 }, hidden: true },
        { name: 'p', key: { cust_no: 1 }, partialFilterExpression: { active: true } },
      ] });
      assert.equal(advice.suggestions.length, rules.suggestions.length + 1);
    });

    it('connected, the other collection does not exist: the join reads nothing and nothing is suggested', function () {
      const rules = adviseMongo(joined);
      const advice = lookupAdvice(rules, mongoLookups(joined), {}, { customers: 'customers does not exist on shop.' });
      assert.equal(advice.suggestions.length, rules.suggestions.length);
      assert.ok(advice.notes.some((n) => n === 'The $lookup at stage 2 joins nothing: customers does not exist on shop, so no index is advised for it.'), advice.notes.join('\n'));
    });

    it('a lookup by _id needs no index: the note says the _id index serves it, with or without a connection', function () {
      const byId: MongoQueryInput = { collection: 'orders', operation: 'aggregate', pipeline: [{ $lookup: { from: 'customers', localField: 'cid', foreignField: '_id', as: 'c' } }] };
      const lookups = mongoLookups(byId);
      const advice = lookupAdvice(adviseMongo(byId), lookups, { customers: [{ name: '_id_', key: { _id: 1 } }] });
      assert.ok(!advice.suggestions.some((s) => (s.index as MongoIndexSpec | undefined)?.collection === 'customers'));
      assert.equal(lookups[0]?.foreignField, '_id');
    });

    it('a pipeline-form $lookup (let/pipeline) is not read as a join by field', function () {
      assert.deepEqual(mongoLookups({ collection: 'o', operation: 'aggregate', pipeline: [{ $lookup: { from: 'c', let: { x: '$a' }, pipeline: [], as: 'y' } }] }), []);
    });
  });
});
