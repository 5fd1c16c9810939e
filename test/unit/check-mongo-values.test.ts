// The values the CI gate gives a MongoDB query's variables (src/core/check/mongoValues.ts): each variable's
// field and kind read from the filter, a pipeline's $match and an update's operators; a variable that
// decides the query's shape leaves it not explainable, with the reason; the text explained has the values in.

import assert from 'node:assert/strict';
import { bindableMongo, mongoVariables, mongoVariableValue, STAND_IN, STAND_IN_LIMIT, type MongoVariable } from '../../src/core/check/mongoValues';
import { findQueries, type FoundQuery } from '../../src/core/query/find/index';
import type { MongoCommand } from '../../src/core/query/mongoShell';

const P = (name: string) => ({ $placeholder: name });
const cmd = (over: Partial<MongoCommand>): MongoCommand => ({ collection: 'events', operation: 'find', hasPlaceholders: true, ranges: {}, ...over });

/** The MongoDB driver calls the finder reads in `functions`, written after a `db` of the database `app`. */
function driverQueries(...functions: string[]): Extract<FoundQuery, { engine: 'mongodb' }>[] {
  const text = ["const { MongoClient } = require('mongodb');", "const db = new MongoClient('mongodb://localhost').db('app');", ...functions].join('\n');
  return findQueries(text, 'script', 'js', {}).queries as Extract<FoundQuery, { engine: 'mongodb' }>[];
}

describe('qpi check: values for a MongoDB query\'s variables', () => {
  it('gives each variable the field it is compared to, and the kind of value its operator takes', () => {
    const r = mongoVariables(cmd({
      filter: {
        user_id: P('userId'),
        created_at: { $gt: P('since'), $lt: P('until') },
        tags: { $in: P('tags') },
        'a.b': { $elemMatch: { c: P('c') } },
        $or: [{ kind: P('kind') }, { kind: { $exists: P('has') } }],
        name: { $regex: P('pattern') },
        list: { $size: P('n') },
        ids: { $nin: [P('one'), 2] },
      },
    }));
    assert.ok(r.ok);
    assert.deepEqual(r.variables, [
      { name: 'userId', field: 'user_id', kind: 'value' },
      { name: 'since', field: 'created_at', kind: 'value' },
      { name: 'until', field: 'created_at', kind: 'value' },
      { name: 'tags', field: 'tags', kind: 'list' },
      { name: 'c', field: 'a.b.c', kind: 'value' },
      { name: 'kind', field: 'kind', kind: 'value' },
      { name: 'has', kind: 'boolean' },
      { name: 'pattern', kind: 'string' },
      { name: 'n', kind: 'number' },
      { name: 'one', field: 'ids', kind: 'value' },
    ]);
  });

  it("reads a pipeline's $match stages and an update's operators; refuses a variable that decides the shape", () => {
    const piped = mongoVariables(cmd({ operation: 'aggregate', pipeline: [{ $match: { team: P('team') } }, { $sort: { at: -1 } }, { $limit: 5 }] }));
    assert.deepEqual(piped, { ok: true, variables: [{ name: 'team', field: 'team', kind: 'value' }] });
    const update = mongoVariables(cmd({ operation: 'updateOne', filter: { _id: P('id') }, update: { $set: { seen: P('at') }, $inc: { views: P('by') }, $push: { log: { $each: P('entries') } } } }));
    assert.deepEqual(update, { ok: true, variables: [
      { name: 'id', field: '_id', kind: 'value' }, { name: 'at', kind: 'null' }, { name: 'by', kind: 'number' }, { name: 'entries', kind: 'list' },
    ] });
    assert.deepEqual(mongoVariables(cmd({ operation: 'updateOne', filter: {}, update: { $set: P('changes') } })), { ok: true, variables: [{ name: 'changes', kind: 'document' }] });

    const refused = (c: MongoCommand) => {
      const r = mongoVariables(c);
      assert.ok(!r.ok, JSON.stringify(c));
      return r.why;
    };
    assert.match(refused(cmd({ filter: P('filter') })), /^The filter is filter, a value of the code/);
    assert.match(refused(cmd({ filter: { a: 1 }, sort: { [String('at')]: P('dir') } })), /^The sort is built from dir/);
    assert.match(refused(cmd({ filter: { $expr: { $eq: ['$a', P('x')] } } })), /^\$expr takes x/);
    assert.match(refused(cmd({ operation: 'aggregate', pipeline: [{ $limit: P('n') }] })), /^The \$limit stage takes n/);
    assert.match(refused(cmd({ operation: 'updateOne', filter: {}, update: P('u') })), /^The update is u, a value of the code/);
    assert.match(refused(cmd({ filter: { a: { $near: P('point') } } })), /^\$near takes point/);
  });

  it('takes the value of the data, an element of an array field, or a stand-in of the kind', () => {
    const v = (kind: MongoVariable['kind'], field?: string): MongoVariable => ({ name: 'x', kind, ...(field ? { field } : {}) });
    assert.deepEqual(mongoVariableValue(v('value', 'a'), { $oid: '65f0a1b2c3d4e5f601234567' }), { $oid: '65f0a1b2c3d4e5f601234567' });
    assert.equal(mongoVariableValue(v('value', 'a'), [null, 'red', 'blue']), 'red');
    assert.equal(mongoVariableValue(v('value', 'a'), undefined), STAND_IN);
    assert.equal(mongoVariableValue(v('value', 'a'), []), STAND_IN);
    assert.deepEqual(mongoVariableValue(v('list', 'a'), 7), [7]);
    assert.deepEqual(mongoVariableValue(v('list', 'a'), undefined), [STAND_IN]);
    assert.equal(mongoVariableValue(v('number'), 'ignored'), 1);
    assert.equal(mongoVariableValue(v('boolean'), undefined), true);
    assert.deepEqual(mongoVariableValue(v('document'), undefined), {});
    assert.equal(mongoVariableValue(v('null'), 'x'), null);
  });

  it('writes the text explained with the values in, from a query the finder read', () => {
    const [recent, any] = driverQueries(
      "async function recent(userId, since) { return db.collection('events').find({ user_id: userId, at: { $gt: since } }).sort({ at: -1 }).limit(20).toArray(); }",
      "async function any(filter) { return db.collection('events').find(filter).toArray(); }",
    );
    const b = bindableMongo(recent!);
    assert.ok(b?.ok);
    const values: Record<string, unknown> = { user_id: 42, at: { $date: '2026-01-01T00:00:00Z' } };
    assert.equal(b.text((v) => mongoVariableValue(v, values[v.field ?? ''])), 'db.getSiblingDB("app").events.find({user_id: (42), at: {$gt: (ISODate("2026-01-01T00:00:00Z"))}}).sort({at: -1}).limit(20)');
    assert.equal(b.standInParts, false);
    // The whole filter from the code: no values can make it a query, and the finder's own reason stands.
    assert.equal(bindableMongo(any!), undefined);
  });

  it('leaves out a projection the code gives, and puts stand-ins for its skip and limit', () => {
    const [page, listed] = driverQueries(
      "async function page(kind, fields, offset, size) { return db.collection('events').find({ kind }, { projection: fields }).sort({ at: -1 }).skip(offset).limit(size).toArray(); }",
      "async function listed(offset) { return db.collection('events').find({ kind: 'click' }).sort({ at: -1 }).skip(offset).limit(10).toArray(); }",
    );
    const p = bindableMongo(page!);
    assert.ok(p?.ok);
    assert.equal(p.standInParts, true);
    assert.deepEqual(p.variables, [{ name: 'kind', field: 'kind', kind: 'value' }]);
    assert.equal(p.text((v) => mongoVariableValue(v, 'view')), `db.getSiblingDB("app").events.find({kind: ("view")}).sort({at: -1}).skip(0).limit(${STAND_IN_LIMIT})`);
    // No variable left once the skip has its stand-in: the text is the literal query.
    const l = bindableMongo(listed!);
    assert.ok(l?.ok);
    assert.deepEqual([l.variables, l.standInParts], [[], true]);
    assert.equal(l.text(() => undefined), 'db.getSiblingDB("app").events.find({kind: "click"}).sort({at: -1}).skip(0).limit(10)');
  });
});
