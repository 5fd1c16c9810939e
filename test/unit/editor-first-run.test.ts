// The walkthrough is offered once per install: the first start claims the offer in the global state, and
// every later start (or a second window of the same install) finds it claimed. The id it opens is the
// one package.json contributes.

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { claimWalkthroughOffer, WALKTHROUGH_ID, WALKTHROUGH_OFFERED, type FirstRunState } from '../../src/extension/firstRun';

/** A Memento kept in a map, as VS Code's global state keeps its values for one install. */
class MapState implements FirstRunState {
  readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  }
}

describe('the walkthrough offered on first start', () => {
  it('is offered on the first start of an install and never again', async () => {
    const state = new MapState();
    assert.equal(await claimWalkthroughOffer(state), true);
    assert.equal(state.values.get(WALKTHROUGH_OFFERED), true);
    assert.equal(await claimWalkthroughOffer(state), false);
    assert.equal(await claimWalkthroughOffer(state), false);
  });

  it('two windows starting together offer it once', async () => {
    const state = new MapState();
    const answers = await Promise.all([claimWalkthroughOffer(state), claimWalkthroughOffer(state)]);
    assert.deepEqual(answers.sort(), [false, true]);
  });

  it('another install (its own global state) is offered it too', async () => {
    await claimWalkthroughOffer(new MapState());
    assert.equal(await claimWalkthroughOffer(new MapState()), true);
  });

  it('opens the walkthrough the manifest contributes', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { publisher: string; name: string; contributes: { walkthroughs: { id: string }[] } };
    const [extension, id] = WALKTHROUGH_ID.split('#');
    assert.equal(extension, `${pkg.publisher}.${pkg.name}`);
    assert.ok(pkg.contributes.walkthroughs.some((w) => w.id === id), `${id} among the contributed walkthroughs`);
  });
});
