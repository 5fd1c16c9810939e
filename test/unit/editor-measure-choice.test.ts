// The MongoDB measure-on-Explain decision: the setting, then the connection's kept answer, else the
// question once per connection.

import assert from 'node:assert/strict';
import { decideMongoMeasure, MeasureChoices, measureQuestion, type MeasureAnswer } from '../../src/extension/connections/measureChoice';

function memento() {
  const data = new Map<string, unknown>();
  return { get: <T>(k: string) => data.get(k) as T | undefined, update: async (k: string, v: unknown) => void data.set(k, v) };
}

describe('MongoDB measured on Explain with one consent per connection', () => {
  it('asks once; Always and Never are kept per connection, This Time is not', async () => {
    const choices = new MeasureChoices(memento());
    const asked: string[] = [];
    const answering = (a: MeasureAnswer | undefined, id: string) => async () => {
      asked.push(id);
      return a;
    };
    assert.equal(await decideMongoMeasure(choices, 'a', false, answering('always', 'a')), true);
    assert.equal(await decideMongoMeasure(choices, 'a', false, answering('never', 'a')), true, 'kept: not asked again');
    assert.equal(await decideMongoMeasure(choices, 'b', false, answering('this-time', 'b')), true);
    assert.equal(await decideMongoMeasure(choices, 'b', false, answering('never', 'b')), false);
    assert.equal(await decideMongoMeasure(choices, 'b', false, answering('always', 'b')), false, 'Never is kept');
    assert.deepEqual(asked, ['a', 'b', 'b']);
  });

  it('measures nothing when the question is dismissed, and does not ask again in this window until an answer is set', async () => {
    const choices = new MeasureChoices(memento());
    assert.equal(await decideMongoMeasure(choices, 'a', false, async () => undefined), false);
    assert.equal(choices.get('a'), undefined);
    assert.equal(await decideMongoMeasure(choices, 'a', false, async () => assert.fail('not asked again')), false);
    await choices.set('a', 'always');
    assert.equal(await decideMongoMeasure(choices, 'a', false, async () => assert.fail('kept')), true);
  });

  it('the setting measures everywhere without asking; forgetting an answer asks again', async () => {
    const choices = new MeasureChoices(memento());
    await choices.set('a', 'never');
    assert.equal(await decideMongoMeasure(choices, 'a', true, async () => assert.fail('not asked')), true);
    await choices.set('a', undefined);
    assert.equal(await decideMongoMeasure(choices, 'a', false, async () => 'always'), true);
  });

  it('the question names the connection and says what measuring writes', () => {
    const q = measureQuestion('shop-dev');
    assert.match(q.message, /shop-dev/);
    assert.match(q.message, /scratch collection/);
    assert.deepEqual(q.buttons.map((b) => b.label), ['Always on shop-dev', 'This Time', 'Never']);
  });
});
