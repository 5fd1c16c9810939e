// The "Index X serves it" lens says whose verdict it shows, as the Suggest index lens does: the rules'
// (read from the query and the index lists, not measured yet) or the measurement's, with its sentence.

import assert from 'node:assert/strict';
import { advisePostgres, loadSqlParser } from '../../src/core/index';
import { keepServedIndexes } from '../../src/core/advice/served';
import type { ExistingPgIndex } from '../../src/core/advice/types';
import { AdviceWanted, type AdviceWantedParams } from '../../src/protocol/languageServer';
import { openFixture } from './lsp-fixtures';

describe('the "serves it" lens names its verdict', () => {
  before(() => loadSqlParser());
  const LINE = 3; // SELECT id, created_at FROM orders WHERE customer_id = 42 ORDER BY created_at DESC LIMIT 10
  const pkey: ExistingPgIndex = { name: 'orders_pkey', table: 'orders', columns: [{ column: 'id' }], primary: true, unique: true };
  const served: ExistingPgIndex = { name: 'orders_cust_created', table: 'orders', columns: [{ column: 'customer_id' }, { column: 'created_at', desc: true }] };

  it('says "(rules)" before a measurement and "(measured)" with the measurement\'s sentence after', async () => {
    const f = openFixture('queries.sql', { explainDelayMs: 0 });
    const lens = () => f.service.codeLenses(f.uri).find((l) => l.range.start.line === LINE && /serves it/.test(l.command?.title ?? ''))?.command;
    f.service.setSchema({ uris: [f.uri], engine: 'postgres', connectionName: 'pg', tables: [{ name: 'orders', indexes: [pkey, served] }] });
    const asked = f.port.notifications.filter((n) => n.method === AdviceWanted.method).map((n) => n.params as AdviceWantedParams);
    const text = asked[0]!.queries.find((q) => q.text.includes('customer_id = 42'))!.text;
    const advice = keepServedIndexes(await advisePostgres(text, { existing: [pkey, served] }), { postgres: [pkey, served] });
    f.service.setAdvice({ uris: [f.uri], connectionName: 'pg', entries: [{ engine: 'postgres', text, advice }] });
    assert.equal(lens()?.title, '$(check) Index orders_cust_created serves it (rules)');
    assert.match(lens()?.tooltip ?? '', /Not measured yet/);

    // The advice service measured it (Explain's tournament): the cached answer now carries the verdict.
    const top = advice.suggestions[0]!;
    assert.equal(top.keep?.name, 'orders_cust_created');
    const sentence = 'Measured on a copy of orders: orders_cust_created reads 3 buffers, the least of 4 candidates.';
    top.verification = { status: 'verified', method: 'sampled', before: 3, after: 3, unit: 'buffers', message: sentence };
    f.service.setAdvice({ uris: [f.uri], connectionName: 'pg', entries: [{ engine: 'postgres', text, advice }] });
    assert.equal(lens()?.title, '$(check) Index orders_cust_created serves it (measured)');
    assert.equal(lens()?.tooltip, sentence);
  });
});
