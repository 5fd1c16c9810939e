// One verdict on every face: the rule every advice passes before it is shown (no index that exists or
// that an existing one serves), and the language server taking the advice service's answer for its
// lens, squiggles and hover, asking again when the index list changes.

import assert from 'node:assert/strict';
import { adviseMongo, advisePostgres, loadSqlParser } from '../../src/core/index';
import { keepServedIndexes, mongoIndexServing, pgIndexServing } from '../../src/core/advice/served';
import type { ExistingMongoIndex, ExistingPgIndex } from '../../src/core/advice/types';
import { AdviceWanted, DiagnosticCodes, type AdviceWantedParams } from '../../src/protocol/languageServer';
import { openFixture } from './lsp-fixtures';

describe('advice: never an index that exists or that an existing one serves', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('turns the $match-first suggestion into "keep using" the index on the original path', () => {
    const existing: ExistingMongoIndex[] = [{ name: '_id_', key: { _id: 1 } }, { name: 'contact.email_1', key: { 'contact.email': 1 } }];
    const query = { collection: 'customers', operation: 'aggregate' as const, pipeline: [{ $project: { email: '$contact.email', total: 1 } }, { $match: { email: 'ann@example.com' } }] };
    const advice = keepServedIndexes(adviseMongo(query, { existing }), { mongodb: existing });
    assert.deepEqual(advice.suggestions.filter((s) => s.createText?.includes('contact.email')), []);
    const top = advice.suggestions[0]!;
    assert.equal(top.action, 'keep');
    assert.equal(top.keep?.name, 'contact.email_1');
    assert.match(top.keep!.reason, /rewritten query needs \(match-first\)/);
    assert.deepEqual(top.rewrites.map((r) => r.rule), ['match-first'], 'the rewrite is still offered');
  });

  it('keeps a UNION ALL suggestion on the existing index, and numbers the suggestions again', async () => {
    const existing: ExistingPgIndex[] = [{ name: 'orders_status_created', table: 'orders', columns: [{ column: 'status' }, { column: 'created_at', desc: true }] }];
    // Counts that make the two statuses rare: the rewrite leads.
    const stats = { tables: { orders: { rows: 100_000, result: 40 } } };
    const advice = keepServedIndexes(await advisePostgres("SELECT * FROM orders WHERE status = ANY('{paid,shipped}') ORDER BY created_at DESC LIMIT 10", { existing, stats }), { postgres: existing });
    for (const s of advice.suggestions) {
      if (s.index?.engine !== 'postgres' || s.action !== 'create') continue;
      assert.equal(pgIndexServing(s.index, existing), undefined, `${s.createText} repeats an existing index`);
    }
    assert.equal(advice.suggestions[0]!.keep?.name, 'orders_status_created');
    assert.deepEqual(advice.suggestions.map((s) => s.rank), advice.suggestions.map((_, i) => i + 1));
  });

  it('an index serves the keys it starts with, in the same or the reversed directions, unless hidden, sparse or partial', () => {
    const spec = { engine: 'mongodb' as const, collection: 'c', keys: [{ field: 'a', direction: 1 as const }, { field: 'b', direction: -1 as const }], keyPattern: { a: 1 as const, b: -1 as const } };
    assert.equal(mongoIndexServing(spec, [{ name: 'x', key: { a: 1, b: -1, c: 1 } }])?.name, 'x');
    assert.equal(mongoIndexServing(spec, [{ name: 'r', key: { a: -1, b: 1 } }])?.name, 'r');
    assert.equal(mongoIndexServing(spec, [{ name: 'm', key: { a: 1, b: 1 } }]), undefined);
    assert.equal(mongoIndexServing(spec, [{ name: 's', key: { a: 1 } }]), undefined);
    assert.equal(mongoIndexServing(spec, [{ name: 'h', key: { a: 1, b: -1 }, hidden: true }]), undefined);
    assert.equal(mongoIndexServing(spec, [{ name: 'p', key: { a: 1, b: -1 }, partialFilterExpression: { a: { $gt: 1 } } }]), undefined);
    const pg = { engine: 'postgres' as const, table: 't', method: 'btree' as const, keys: [{ column: 'a' }, { column: 'b' }], include: ['c'] };
    assert.equal(pgIndexServing(pg, [{ name: 'i', table: 't', columns: [{ column: 'a' }, { column: 'b' }], include: ['c'] }])?.name, 'i');
    assert.equal(pgIndexServing(pg, [{ name: 'k', table: 't', columns: [{ column: 'a' }, { column: 'b' }, { column: 'c' }] }])?.name, 'k');
    assert.equal(pgIndexServing(pg, [{ name: 'n', table: 't', columns: [{ column: 'a' }, { column: 'b' }] }]), undefined, 'without the INCLUDE column');
    assert.equal(pgIndexServing(pg, [{ name: 'v', table: 't', columns: [{ column: 'a' }, { column: 'b' }, { column: 'c' }], invalid: true }]), undefined);
  });
});

describe('language server: the advice service\'s verdict on the lens, the squiggles and the hover', () => {
  before(async () => {
    await loadSqlParser();
  });
  const LINE = 3; // SELECT id, created_at FROM orders WHERE customer_id = 42 ORDER BY created_at DESC LIMIT 10
  const pkey: ExistingPgIndex = { name: 'orders_pkey', table: 'orders', columns: [{ column: 'id' }], primary: true, unique: true };
  const served: ExistingPgIndex = { name: 'orders_cust_created', table: 'orders', columns: [{ column: 'customer_id' }, { column: 'created_at', desc: true }] };

  function setup() {
    const f = openFixture('queries.sql', { explainDelayMs: 0 });
    const wanted = () => f.port.notifications.filter((n) => n.method === AdviceWanted.method).map((n) => n.params as AdviceWantedParams);
    const lensTitles = () => f.service.codeLenses(f.uri).filter((l) => l.range.start.line === LINE).map((l) => l.command?.title ?? '');
    const codesOnLine = () => f.port.last(f.uri).filter((d) => d.range.start.line === LINE).map((d) => String(d.code)).sort();
    return { ...f, wanted, lensTitles, codesOnLine };
  }

  it('waits for the verdict instead of guessing, then shows it on the lens, the squiggles and the hover', async () => {
    const t = setup();
    t.service.setSchema({ uris: [t.uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [pkey] }] });
    const asked = t.wanted();
    assert.equal(asked.length, 1);
    const text = asked[0]!.queries.find((q) => q.text.includes('customer_id = 42'))!.text;
    assert.ok(t.lensTitles().some((x) => /Checking indexes on pg/.test(x)), t.lensTitles().join(' | '));
    assert.ok(!t.lensTitles().some((x) => /Suggest index/.test(x)), 'no guess while the verdict is computed');

    // The service saw the index the server's lists do not have yet: its verdict wins everywhere.
    const advice = keepServedIndexes(await advisePostgres(text, { existing: [pkey, served] }), { postgres: [pkey, served] });
    t.service.setAdvice({ uris: [t.uri], connectionName: 'pg', entries: [{ engine: 'postgres', text, advice }] });
    assert.ok(t.lensTitles().some((x) => x.includes('Index orders_cust_created serves it')), t.lensTitles().join(' | '));
    assert.deepEqual(t.codesOnLine(), [DiagnosticCodes.indexServes]);
    const hover = t.service.hover(t.uri, { line: LINE, character: 10 });
    assert.match((hover?.contents as { value: string }).value, /orders_cust_created/);
  });

  it('a changed index list drops the verdicts and asks again; without an answer the rules speak', async () => {
    const t = setup();
    t.service.setSchema({ uris: [t.uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [pkey, served] }] });
    const text = t.wanted()[0]!.queries.find((q) => q.text.includes('customer_id = 42'))!.text;
    const advice = keepServedIndexes(await advisePostgres(text, { existing: [pkey, served] }), { postgres: [pkey, served] });
    t.service.setAdvice({ uris: [t.uri], connectionName: 'pg', entries: [{ engine: 'postgres', text, advice }] });
    assert.deepEqual(t.codesOnLine(), [DiagnosticCodes.indexServes]);

    // The index was dropped on the server: the old verdict goes, the question is asked again.
    t.service.setSchema({ uris: [t.uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [pkey] }] });
    assert.equal(t.wanted().length, 2);
    assert.ok(t.wanted()[1]!.queries.some((q) => q.text === text));
    assert.ok(t.lensTitles().some((x) => /Checking indexes on pg/.test(x)));

    // The service could not answer: the server's own rules do, with the lists it has.
    t.service.setAdvice({ uris: [t.uri], connectionName: 'pg', entries: [{ engine: 'postgres', text, error: 'the connection was refused' }] });
    assert.ok(t.lensTitles().some((x) => /Suggest index/.test(x)), t.lensTitles().join(' | '));
    assert.deepEqual(t.codesOnLine(), [DiagnosticCodes.blockingSort, DiagnosticCodes.collectionScan].sort());

    // Unchanged lists ask nothing more.
    t.service.setSchema({ uris: [t.uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [pkey] }] });
    assert.equal(t.wanted().length, 2);
  });

  it('after the lists are cleared (Create Index, Refresh, a switch) the lens waits for them instead of guessing', async () => {
    const t = setup();
    t.service.setSchema({ uris: [t.uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [pkey, served] }] });
    const text = t.wanted()[0]!.queries.find((q) => q.text.includes('customer_id = 42'))!.text;
    t.service.setAdvice({ uris: [t.uri], connectionName: 'pg', entries: [{ engine: 'postgres', text, advice: keepServedIndexes(await advisePostgres(text, { existing: [pkey, served] }), { postgres: [pkey, served] }) }] });
    t.service.clearSchema({});
    assert.ok(t.lensTitles().some((x) => /Checking indexes on pg/.test(x)), t.lensTitles().join(' | '));
    assert.ok(!t.lensTitles().some((x) => /Suggest index/.test(x)));
    t.service.setSchema({ uris: [t.uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [pkey, served] }] });
    assert.ok(t.wanted().at(-1)!.queries.some((q) => q.text === text), 'the verdict is asked for again');
  });
});
