// The lens above a query says whose verdict it shows: "(rules)" before anything was measured, with a
// tooltip that says Explain may choose another index once it measures; "(measured)" after.

import assert from 'node:assert/strict';
import { loadSqlParser } from '../../src/core/index';
import { openFixture } from './lsp-fixtures';

describe('the Suggest index lens names its kind of verdict', () => {
  before(async () => {
    await loadSqlParser();
  });

  it('before a measurement: "(rules)", and the tooltip says it is not measured yet', () => {
    const { service, uri } = openFixture('playground.mongodb.js');
    const suggest = service.codeLenses(uri).filter((l) => l.command?.title.includes('Suggest index'));
    assert.ok(suggest.length > 0, 'a Suggest index lens');
    for (const l of suggest) {
      assert.equal(l.command!.title, '$(lightbulb) Suggest index (rules)');
      assert.match(l.command!.tooltip ?? '', /^The index the rules choose for this query: db\..+\.createIndex\(.*\)\. Not measured yet: Explain measures the candidates and may choose another\.$/);
    }
  });
});
