// The Output log's line for one Explain: its steps in running order, each rounded, with their total.

import assert from 'node:assert/strict';
import { phasesLine, stepsLine } from '../../src/extension/explainSteps';

describe('the Explain steps line of the Output log', () => {
  it('lists the timed steps in running order with their total, whatever order they were timed in', () => {
    const line = stepsLine({ render: 14.6, find: 2.2, advise: 30.4, explain: 1203.7, connect: 40.1, analyse: 3.4 });
    assert.equal(line, 'find 2 ms, connect 40 ms, explain 1,204 ms, analyse 3 ms, render 15 ms, advise 30 ms (total 1,294 ms)');
  });

  it('puts what comes between the query found and the explain sent after find and before connect', () => {
    assert.equal(stepsLine({ connect: 0.4, prepare: 3.2, find: 1 }), 'find 1 ms, prepare 3 ms, connect 0 ms (total 5 ms)');
  });

  it('leaves out a step that was not timed or is not a number', () => {
    assert.equal(stepsLine({ find: 1, explain: Number.NaN, render: 2 }), 'find 1 ms, render 2 ms (total 3 ms)');
  });

  it('lists an explain\'s own parts in running order, to a tenth of a millisecond', () => {
    assert.equal(phasesLine([{ label: 'statement read', ms: 0.04 }, { label: 'BEGIN and side-effect check', ms: 2.96 }, { label: 'EXPLAIN ANALYZE', ms: 1.25 }]),
      'statement read 0.0 ms, BEGIN and side-effect check 3.0 ms, EXPLAIN ANALYZE 1.3 ms');
  });
});
