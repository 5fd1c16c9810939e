import assert from 'node:assert/strict';
import { analyze, loadPlan, type Finding } from '../../src/core/index';

// explain('executionStats') from MongoDB 6.0.5 over the samples' orders (samples/load-sample-data.mjs:
// 2,561 orders of country 2, index { country_id: 1, created_at: -1 }), kept verbatim but for the
// server's own fields (serverInfo, serverParameters, cluster time).
const EXPLAINS: Record<string, Record<string, unknown>> = {
  desc5000: {"explainVersion":"1","queryPlanner":{"namespace":"qpi_samples.orders","indexFilterSet":false,"parsedQuery":{"country_id":{"$eq":2}},"queryHash":"C1BEBBFA","planCacheKey":"A2B161CA","maxIndexedOrSolutionsReached":false,"maxIndexedAndSolutionsReached":false,"maxScansToExplodeReached":false,"winningPlan":{"stage":"LIMIT","limitAmount":20,"inputStage":{"stage":"FETCH","inputStage":{"stage":"SKIP","skipAmount":2439,"inputStage":{"stage":"IXSCAN","keyPattern":{"country_id":1,"created_at":-1},"indexName":"country_id_1_created_at_-1","isMultiKey":false,"multiKeyPaths":{"country_id":[],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"forward","indexBounds":{"country_id":["[2, 2]"],"created_at":["[MaxKey, MinKey]"]}}}}},"rejectedPlans":[{"stage":"FETCH","inputStage":{"stage":"SKIP","skipAmount":5000,"inputStage":{"stage":"SORT","sortPattern":{"created_at":-1},"memLimit":104857600,"limitAmount":5020,"type":"default","inputStage":{"stage":"IXSCAN","keyPattern":{"country_id":1,"order_details.product_id":1,"created_at":-1},"indexName":"country_id_1_order_details.product_id_1_created_at_-1","isMultiKey":true,"multiKeyPaths":{"country_id":[],"order_details.product_id":["order_details"],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"forward","indexBounds":{"country_id":["[2, 2]"],"order_details.product_id":["[MinKey, MaxKey]"],"created_at":["[MaxKey, MinKey]"]}}}}}]},"executionStats":{"executionSuccess":true,"nReturned":0,"executionTimeMillis":3,"totalKeysExamined":2561,"totalDocsExamined":0,"executionStages":{"stage":"LIMIT","nReturned":0,"executionTimeMillisEstimate":1,"works":2563,"advanced":0,"needTime":2561,"needYield":0,"saveState":5,"restoreState":5,"isEOF":1,"limitAmount":20,"inputStage":{"stage":"FETCH","nReturned":0,"executionTimeMillisEstimate":1,"works":2563,"advanced":0,"needTime":2561,"needYield":0,"saveState":5,"restoreState":5,"isEOF":1,"docsExamined":0,"alreadyHasObj":0,"inputStage":{"stage":"SKIP","nReturned":0,"executionTimeMillisEstimate":1,"works":2562,"advanced":0,"needTime":2561,"needYield":0,"saveState":5,"restoreState":5,"isEOF":1,"skipAmount":2439,"inputStage":{"stage":"IXSCAN","nReturned":2561,"executionTimeMillisEstimate":1,"works":2562,"advanced":2561,"needTime":0,"needYield":0,"saveState":5,"restoreState":5,"isEOF":1,"keyPattern":{"country_id":1,"created_at":-1},"indexName":"country_id_1_created_at_-1","isMultiKey":false,"multiKeyPaths":{"country_id":[],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"forward","indexBounds":{"country_id":["[2, 2]"],"created_at":["[MaxKey, MinKey]"]},"keysExamined":2561,"seeks":1,"dupsTested":0,"dupsDropped":0}}}}},"command":{"find":"orders","filter":{"country_id":2},"sort":{"created_at":-1},"skip":5000,"limit":20,"$db":"qpi_samples"},"ok":1},
  desc2000: {"explainVersion":"1","queryPlanner":{"namespace":"qpi_samples.orders","indexFilterSet":false,"parsedQuery":{"country_id":{"$eq":2}},"queryHash":"C1BEBBFA","planCacheKey":"A2B161CA","maxIndexedOrSolutionsReached":false,"maxIndexedAndSolutionsReached":false,"maxScansToExplodeReached":false,"winningPlan":{"stage":"LIMIT","limitAmount":20,"inputStage":{"stage":"FETCH","inputStage":{"stage":"SKIP","skipAmount":0,"inputStage":{"stage":"IXSCAN","keyPattern":{"country_id":1,"created_at":-1},"indexName":"country_id_1_created_at_-1","isMultiKey":false,"multiKeyPaths":{"country_id":[],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"forward","indexBounds":{"country_id":["[2, 2]"],"created_at":["[MaxKey, MinKey]"]}}}}},"rejectedPlans":[{"stage":"FETCH","inputStage":{"stage":"SKIP","skipAmount":2000,"inputStage":{"stage":"SORT","sortPattern":{"created_at":-1},"memLimit":104857600,"limitAmount":2020,"type":"default","inputStage":{"stage":"IXSCAN","keyPattern":{"country_id":1,"order_details.product_id":1,"created_at":-1},"indexName":"country_id_1_order_details.product_id_1_created_at_-1","isMultiKey":true,"multiKeyPaths":{"country_id":[],"order_details.product_id":["order_details"],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"forward","indexBounds":{"country_id":["[2, 2]"],"order_details.product_id":["[MinKey, MaxKey]"],"created_at":["[MaxKey, MinKey]"]}}}}}]},"executionStats":{"executionSuccess":true,"nReturned":20,"executionTimeMillis":1,"totalKeysExamined":2020,"totalDocsExamined":20,"executionStages":{"stage":"LIMIT","nReturned":20,"executionTimeMillisEstimate":0,"works":2021,"advanced":20,"needTime":2000,"needYield":0,"saveState":4,"restoreState":4,"isEOF":1,"limitAmount":20,"inputStage":{"stage":"FETCH","nReturned":20,"executionTimeMillisEstimate":0,"works":2020,"advanced":20,"needTime":2000,"needYield":0,"saveState":4,"restoreState":4,"isEOF":0,"docsExamined":20,"alreadyHasObj":0,"inputStage":{"stage":"SKIP","nReturned":20,"executionTimeMillisEstimate":0,"works":2020,"advanced":20,"needTime":2000,"needYield":0,"saveState":4,"restoreState":4,"isEOF":0,"skipAmount":0,"inputStage":{"stage":"IXSCAN","nReturned":2020,"executionTimeMillisEstimate":0,"works":2020,"advanced":2020,"needTime":0,"needYield":0,"saveState":4,"restoreState":4,"isEOF":0,"keyPattern":{"country_id":1,"created_at":-1},"indexName":"country_id_1_created_at_-1","isMultiKey":false,"multiKeyPaths":{"country_id":[],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"forward","indexBounds":{"country_id":["[2, 2]"],"created_at":["[MaxKey, MinKey]"]},"keysExamined":2020,"seeks":1,"dupsTested":0,"dupsDropped":0}}}}},"command":{"find":"orders","filter":{"country_id":2},"sort":{"created_at":-1},"skip":2000,"limit":20,"$db":"qpi_samples"},"ok":1},
  asc2000: {"explainVersion":"1","queryPlanner":{"namespace":"qpi_samples.orders","indexFilterSet":false,"parsedQuery":{"country_id":{"$eq":2}},"queryHash":"D5E66311","planCacheKey":"21906E4E","maxIndexedOrSolutionsReached":false,"maxIndexedAndSolutionsReached":false,"maxScansToExplodeReached":false,"winningPlan":{"stage":"LIMIT","limitAmount":20,"inputStage":{"stage":"FETCH","inputStage":{"stage":"SKIP","skipAmount":0,"inputStage":{"stage":"IXSCAN","keyPattern":{"country_id":1,"created_at":-1},"indexName":"country_id_1_created_at_-1","isMultiKey":false,"multiKeyPaths":{"country_id":[],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"backward","indexBounds":{"country_id":["[2, 2]"],"created_at":["[MinKey, MaxKey]"]}}}}},"rejectedPlans":[{"stage":"FETCH","inputStage":{"stage":"SKIP","skipAmount":2000,"inputStage":{"stage":"SORT","sortPattern":{"created_at":1},"memLimit":104857600,"limitAmount":2020,"type":"default","inputStage":{"stage":"IXSCAN","keyPattern":{"country_id":1,"order_details.product_id":1,"created_at":-1},"indexName":"country_id_1_order_details.product_id_1_created_at_-1","isMultiKey":true,"multiKeyPaths":{"country_id":[],"order_details.product_id":["order_details"],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"forward","indexBounds":{"country_id":["[2, 2]"],"order_details.product_id":["[MinKey, MaxKey]"],"created_at":["[MaxKey, MinKey]"]}}}}}]},"executionStats":{"executionSuccess":true,"nReturned":20,"executionTimeMillis":1,"totalKeysExamined":2020,"totalDocsExamined":20,"executionStages":{"stage":"LIMIT","nReturned":20,"executionTimeMillisEstimate":0,"works":2021,"advanced":20,"needTime":2000,"needYield":0,"saveState":4,"restoreState":4,"isEOF":1,"limitAmount":20,"inputStage":{"stage":"FETCH","nReturned":20,"executionTimeMillisEstimate":0,"works":2020,"advanced":20,"needTime":2000,"needYield":0,"saveState":4,"restoreState":4,"isEOF":0,"docsExamined":20,"alreadyHasObj":0,"inputStage":{"stage":"SKIP","nReturned":20,"executionTimeMillisEstimate":0,"works":2020,"advanced":20,"needTime":2000,"needYield":0,"saveState":4,"restoreState":4,"isEOF":0,"skipAmount":0,"inputStage":{"stage":"IXSCAN","nReturned":2020,"executionTimeMillisEstimate":0,"works":2020,"advanced":2020,"needTime":0,"needYield":0,"saveState":4,"restoreState":4,"isEOF":0,"keyPattern":{"country_id":1,"created_at":-1},"indexName":"country_id_1_created_at_-1","isMultiKey":false,"multiKeyPaths":{"country_id":[],"created_at":[]},"isUnique":false,"isSparse":false,"isPartial":false,"indexVersion":2,"direction":"backward","indexBounds":{"country_id":["[2, 2]"],"created_at":["[MinKey, MaxKey]"]},"keysExamined":2020,"seeks":1,"dupsTested":0,"dupsDropped":0}}}}},"command":{"find":"orders","filter":{"country_id":2},"sort":{"created_at":1},"skip":2000,"limit":20,"$db":"qpi_samples"},"ok":1},
};

function skipFinding(doc: Record<string, unknown>): Finding {
  const loaded = loadPlan(JSON.stringify(doc));
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.refusal);
  const found = analyze(loaded.plan).filter((f) => f.code === 'mongo.skip-reads');
  assert.equal(found.length, 1, `one skip finding, got ${found.map((f) => f.code).join(', ')}`);
  return found[0]!;
}

describe('the skip finding says the skip the code has, and pages the way the sort goes', () => {
  it('skip(5000) over 2,561 entries: the server prints 2439 left to skip, the finding says skip(5000)', () => {
    const stages = JSON.stringify(EXPLAINS['desc5000']);
    assert.match(stages, /"skipAmount":2439/, 'the server counts the skip down');
    const f = skipFinding(EXPLAINS['desc5000']!);
    assert.match(f.message, /skip\(5000\) discards what it reads/);
    assert.doesNotMatch(f.message, /2439/);
    assert.equal(f.numbers['skipAmount'], 5000);
    assert.equal(f.numbers['skipped'], 2561);
    assert.equal(f.numbers['returned'], 0);
  });

  it('without the command, the count-down is added back to what the SKIP read: still skip(5000)', () => {
    const { command: _command, ...doc } = EXPLAINS['desc5000']!;
    const f = skipFinding(doc);
    assert.match(f.message, /skip\(5000\)/);
    assert.equal(f.numbers['skipAmount'], 5000);
  });

  it('skip(2000) that completes (the server prints 0 left): skip(2000), 2,020 keys read for 20', () => {
    for (const doc of [EXPLAINS['desc2000']!, (({ command: _c, ...rest }) => rest)(EXPLAINS['desc2000']!)]) {
      const f = skipFinding(doc);
      assert.match(f.message, /^Read 2,020 index keys to return 20: skip\(2000\) discards what it reads/);
      assert.deepEqual([f.numbers['skipAmount'], f.numbers['skipped'], f.numbers['returned']], [2000, 2000, 20]);
    }
  });

  it('a descending sort continues with $lt, an ascending one with $gt', () => {
    assert.match(skipFinding(EXPLAINS['desc2000']!).message, /\{ created_at: \{ \$lt: <last created_at> \} \}/);
    assert.match(skipFinding(EXPLAINS['asc2000']!).message, /\{ created_at: \{ \$gt: <last created_at> \} \}/);
  });

  it('without the command, the direction comes from the index key and the way the scan walked it', () => {
    const strip = (d: Record<string, unknown>): Record<string, unknown> => {
      const { command: _c, ...rest } = d;
      return rest;
    };
    assert.match(skipFinding(strip(EXPLAINS['desc2000']!)).message, /\$lt: <last created_at>/);
    assert.match(skipFinding(strip(EXPLAINS['asc2000']!)).message, /\$gt: <last created_at>/);
  });
});
