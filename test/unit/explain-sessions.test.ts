// The sessions Explain keeps between two Explains (src/extension/connections/sessions.ts): one per
// connection, lent to one Explain at a time, closed when idle, lost, removed, changed or at the end.

import assert from 'node:assert/strict';
import { changedConnections, keepsSession, lostConnection, SessionPool } from '../../src/extension/connections/sessions';

class Fake {
  static opened = 0;
  readonly n = ++Fake.opened;
  closed = 0;
  lost = false;
  async close(): Promise<void> {
    this.closed++;
  }
}

/** A pool whose idle timers are run by the test, and a counter of the sessions it opened. */
function pool() {
  const timers = new Map<number, () => void>();
  let next = 0;
  const opened: Fake[] = [];
  const p = new SessionPool<Fake>({
    alive: (s) => !s.lost,
    setTimer: (fn) => (timers.set(++next, fn), next),
    clearTimer: (t) => void timers.delete(t as number),
  });
  const open = async () => {
    const f = new Fake();
    opened.push(f);
    return f;
  };
  const expire = () => {
    for (const [t, fn] of [...timers]) {
      timers.delete(t);
      fn();
    }
  };
  return { p, open, opened, expire, timers };
}

/** Lets the closes started without waiting (`void session.close()`) run. */
const settled = () => new Promise<void>((r) => setImmediate(r));

describe('the sessions Explain keeps open between Explains', () => {
  it('lends the same session to the next Explain of the connection, opened once', async () => {
    const { p, open, opened } = pool();
    const first = await p.acquire('a', 'uri', open);
    assert.equal(first.reused, false);
    first.release(true);
    const second = await p.acquire('a', 'uri', open);
    assert.equal(second.reused, true);
    assert.equal(second.session, first.session);
    assert.equal(opened.length, 1);
    assert.equal(first.session.closed, 0);
  });

  it('opens a second session while the first is lent out, and keeps only one of them', async () => {
    const { p, open, opened } = pool();
    const a = await p.acquire('a', 'uri', open);
    const b = await p.acquire('a', 'uri', open);
    assert.notEqual(a.session, b.session);
    a.release(true);
    b.release(true);
    await settled();
    assert.equal(p.size, 1);
    assert.deepEqual(opened.map((s) => s.closed), [0, 1]);
  });

  it('closes a session given back after a failure, and opens a new one for the next Explain', async () => {
    const { p, open, opened } = pool();
    (await p.acquire('a', 'uri', open)).release(false);
    await settled();
    assert.equal(opened[0]!.closed, 1);
    const next = await p.acquire('a', 'uri', open);
    assert.equal(next.reused, false);
    assert.equal(opened.length, 2);
  });

  it('replaces a kept session whose connection the server ended while it waited', async () => {
    const { p, open, opened } = pool();
    (await p.acquire('a', 'uri', open)).release(true);
    opened[0]!.lost = true;
    const next = await p.acquire('a', 'uri', open);
    await settled();
    assert.equal(next.reused, false);
    assert.equal(next.session, opened[1]);
    assert.equal(opened[0]!.closed, 1);
  });

  it('opens another session when the URI, password or limits changed', async () => {
    const { p, open, opened } = pool();
    (await p.acquire('a', 'uri-1', open)).release(true);
    const next = await p.acquire('a', 'uri-2', open);
    await settled();
    assert.equal(next.session, opened[1]);
    assert.equal(opened[0]!.closed, 1);
  });

  it('closes a session left idle for its idle life', async () => {
    const { p, open, opened, expire } = pool();
    (await p.acquire('a', 'uri', open)).release(true);
    expire();
    await settled();
    assert.equal(opened[0]!.closed, 1);
    assert.equal(p.size, 0);
  });

  it('closes the session of a removed connection, kept or lent out, and no other', async () => {
    const { p, open, opened } = pool();
    (await p.acquire('a', 'uri', open)).release(true);
    (await p.acquire('b', 'uri', open)).release(true);
    const lent = await p.acquire('a', 'uri', open);
    (await p.acquire('a', 'uri', open)).release(true);
    const before = new Map([['a', JSON.stringify({ id: 'a', name: 'A' })], ['b', JSON.stringify({ id: 'b', name: 'B' })]]);
    const { gone } = changedConnections(before, [{ id: 'b', name: 'B' } as { id: string }]);
    assert.deepEqual(gone, ['a']);
    for (const id of gone) p.forget(id);
    lent.release(true);
    await settled();
    assert.deepEqual(opened.map((s) => s.closed), [1, 0, 1]);
    assert.equal(p.size, 1);
  });

  it('counts an edited connection as gone', () => {
    const before = changedConnections(new Map(), [{ id: 'a', port: 5432 } as { id: string }]).seen;
    assert.deepEqual(changedConnections(before, [{ id: 'a', port: 5433 } as { id: string }]).gone, ['a']);
    assert.deepEqual(changedConnections(before, [{ id: 'a', port: 5432 } as { id: string }]).gone, []);
  });

  it('lends a warmed session to the first Explain, waiting for it if it is still connecting', async () => {
    const { p, opened } = pool();
    let resolveOpen!: (f: Fake) => void;
    const warming = p.warm('a', 'uri', () => new Promise<Fake>((r) => (resolveOpen = r)));
    const asked = p.acquire('a', 'uri', async () => new Fake());
    const f = new Fake();
    opened.push(f);
    resolveOpen(f);
    assert.equal(await warming, true);
    const lease = await asked;
    assert.equal(lease.reused, true);
    assert.equal(lease.session, f);
    assert.equal(await p.warm('b', 'uri', async () => new Fake()), true);
    assert.equal(await p.warm('b', 'uri', async () => new Fake()), false, 'a kept session is not opened again');
  });

  it('leaves nothing behind when a warm-up cannot connect, and the Explain opens its own session', async () => {
    const { p, open } = pool();
    assert.equal(await p.warm('a', 'uri', () => Promise.reject(new Error('refused'))), false);
    assert.equal(p.size, 0);
    const lease = await p.acquire('a', 'uri', open);
    assert.equal(lease.reused, false);
  });

  it('closes every session at the end, and each lent one when it comes back', async () => {
    const { p, open, opened } = pool();
    (await p.acquire('a', 'uri', open)).release(true);
    const lent = await p.acquire('b', 'uri', open);
    await p.closeAll();
    lent.release(true);
    await settled();
    assert.deepEqual(opened.map((s) => s.closed), [1, 1]);
    assert.equal(await p.warm('c', 'uri', open), false);
  });

  it('keeps a session after a refusal that left the connection as it was, not after a lost connection or a timeout', () => {
    assert.equal(keepsSession({ kind: 'side-effects' }), true);
    assert.equal(keepsSession({ kind: 'syntax' }), true);
    assert.equal(keepsSession(Object.assign(new Error('x'), { name: 'UserError' })), true);
    assert.equal(keepsSession({ kind: 'network' }), false);
    assert.equal(keepsSession({ kind: 'timeout' }), false);
    assert.equal(keepsSession({ kind: 'cancelled' }), false);
    assert.equal(keepsSession(new TypeError('bug')), false);
    assert.equal(lostConnection({ kind: 'network' }), true);
    assert.equal(lostConnection({ kind: 'timeout' }), false);
  });
});
