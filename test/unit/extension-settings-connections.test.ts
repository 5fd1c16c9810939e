import assert from 'node:assert/strict';
import { AdapterError } from '../../src/adapters/errors';
import {
  askingPasswords, asksForPassword, readSettingsConnections, settingsConnectionOf, settingsDefault, settingsId,
} from '../../src/extension/connections/settings';
import { connectionUri, type ConnectionSpec, type SettingsOrigin } from '../../src/extension/connections/spec';
import type { ExplainOutcome, ExplainRequest, Gateway, MeasureRequest } from '../../src/extension/gateway';

const folderA: SettingsOrigin = { scope: 'folder', folder: 'file:///home/dev/shop', where: 'the settings of the folder shop' };
const folderB: SettingsOrigin = { scope: 'folder', folder: 'file:///home/dev/billing', where: 'the settings of the folder billing' };
const workspace: SettingsOrigin = { scope: 'workspace', where: 'the workspace settings' };
const user: SettingsOrigin = { scope: 'user', where: 'the user settings' };

function oneSentence(text: string | undefined): string {
  assert.ok(text);
  assert.ok(!text.includes('\n'), text);
  assert.match(text, /\.$/);
  return text;
}

describe('extension: connections from settings', () => {
  it('reads entries of both engines: TLS from the uri or from tls, a relative CA file resolved', () => {
    const read = readSettingsConnections([
      { name: 'shop pg', engine: 'postgres', uri: 'postgresql://app@db.example:5432/shop?sslmode=require' },
      { name: 'shop mongo', engine: 'mongodb', uri: 'mongodb://app@m.example:27017/shop?authSource=admin', tls: { caFile: 'certs/ca.pem' } },
    ], folderA, (p) => `/home/dev/shop/${p}`);
    assert.deepEqual(read.problems, []);
    const [pg, mongo] = read.specs;
    assert.equal(pg!.engine, 'postgres');
    assert.equal(pg!.form, 'uri');
    assert.equal(pg!.hasPassword, false);
    assert.deepEqual(pg!.origin, folderA);
    assert.deepEqual(pg!.tls, { enabled: true, allowInvalidCertificates: true });
    assert.deepEqual(mongo!.tls, { enabled: true, caFile: '/home/dev/shop/certs/ca.pem' });
    assert.equal(connectionUri(mongo!, 'p@ss'), 'mongodb://app:p%40ss@m.example:27017/shop?authSource=admin&tls=true&tlsCAFile=%2Fhome%2Fdev%2Fshop%2Fcerts%2Fca.pem');
  });

  it('gives each connection an id that lasts across sessions and depends on where, name, engine and user', () => {
    const id = settingsId(folderA, 'shop', 'postgres', 'app');
    assert.equal(settingsId(folderA, 'shop', 'postgres', 'app'), id);
    assert.match(id, /^settings-[0-9a-f]{16}$/);
    const others = [
      settingsId(folderB, 'shop', 'postgres', 'app'), settingsId(workspace, 'shop', 'postgres', 'app'), settingsId(folderA, 'shop2', 'postgres', 'app'),
      settingsId(folderA, 'shop', 'mongodb', 'app'), settingsId(folderA, 'shop', 'postgres', 'admin'), settingsId(folderA, 'shop', 'postgres', undefined),
    ];
    assert.equal(new Set([id, ...others]).size, 7);
    const read = readSettingsConnections([{ name: 'shop', engine: 'postgres', uri: 'postgresql://app@h/db' }], folderA);
    assert.equal(read.specs[0]!.id, id);
  });

  it('refuses an entry with a password in its uri in one sentence that says to remove it, without repeating the password', () => {
    const read = readSettingsConnections([
      { name: 'leaky', engine: 'postgres', uri: 'postgresql://app:hunter22@db.example/shop' },
      { name: 'fine', engine: 'postgres', uri: 'postgresql://app@db.example/shop' },
    ], workspace);
    assert.deepEqual(read.specs.map((s) => s.name), ['fine']);
    assert.equal(read.problems.length, 1);
    const p = read.problems[0]!;
    assert.equal(p.name, 'leaky');
    assert.equal(p.engine, 'postgres');
    const sentence = oneSentence(p.error);
    assert.match(sentence, /^The connection "leaky" in the workspace settings has a password in its uri: remove it/);
    assert.ok(!sentence.includes('hunter22'));
    assert.ok(!JSON.stringify(read).includes('hunter22'));
  });

  it('refuses each entry that cannot be used with its own sentence, and keeps the others', () => {
    const read = readSettingsConnections([
      'postgresql://h/db',
      { engine: 'postgres', uri: 'postgresql://h/db' },
      { name: 'no engine', uri: 'postgresql://h/db' },
      { name: 'no uri', engine: 'mongodb' },
      { name: 'not a uri', engine: 'postgres', uri: 'host=db user=app' },
      { name: 'wrong engine', engine: 'mongodb', uri: 'postgresql://h/db' },
      { name: 'bad tls', engine: 'postgres', uri: 'postgresql://h/db', tls: true },
      { name: 'twice', engine: 'postgres', uri: 'postgresql://h/db' },
      { name: 'twice', engine: 'postgres', uri: 'postgresql://h/other' },
    ], user);
    assert.deepEqual(read.specs.map((s) => s.name), ['twice']);
    const errors = read.problems.map((p) => oneSentence(p.error));
    assert.equal(errors.length, 8);
    assert.match(errors[0]!, /^Connection 1 in the user settings is not an object/);
    assert.match(errors[1]!, /^Connection 2 in the user settings has no name\.$/);
    assert.match(errors[2]!, /"no engine".*needs "engine": "mongodb" or "postgres"/);
    assert.match(errors[3]!, /"no uri".*needs a "uri", such as mongodb:\/\//);
    assert.match(errors[4]!, /"not a uri".*key=value connection strings are not supported/);
    assert.match(errors[5]!, /"wrong engine".*PostgreSQL connection string, not a MongoDB one/);
    assert.match(errors[6]!, /"bad tls".*"tls" that is not an object/);
    assert.match(errors[7]!, /"twice".*defined twice/);
    assert.equal(new Set(read.problems.map((p) => p.id)).size, 8);
    assert.match(oneSentence(readSettingsConnections({ name: 'x' }, user).problems[0]?.error), /must be a list of connections/);
    assert.deepEqual(readSettingsConnections(undefined, user), { specs: [], problems: [] });
  });

  it('the default of a folder is the first connection of the engine in its own settings, then the workspace, then the user settings', () => {
    const specs = [
      ...readSettingsConnections([{ name: 'user pg', engine: 'postgres', uri: 'postgresql://u/db' }, { name: 'user mongo', engine: 'mongodb', uri: 'mongodb://u/db' }], user).specs,
      ...readSettingsConnections([{ name: 'ws pg', engine: 'postgres', uri: 'postgresql://w/db' }], workspace).specs,
      ...readSettingsConnections([{ name: 'a mongo', engine: 'mongodb', uri: 'mongodb://a/db' }, { name: 'a pg 1', engine: 'postgres', uri: 'postgresql://a1/db' }, { name: 'a pg 2', engine: 'postgres', uri: 'postgresql://a2/db' }], folderA).specs,
    ];
    const saved: ConnectionSpec = { id: 'x', name: 'saved', engine: 'postgres', form: 'uri', uri: 'postgresql://s/db', tls: { enabled: false }, hasPassword: false };
    const all = [saved, ...specs];
    assert.equal(settingsDefault(all, folderA.folder!, 'postgres')?.name, 'a pg 1');
    assert.equal(settingsDefault(all, folderA.folder!, 'mongodb')?.name, 'a mongo');
    assert.equal(settingsDefault(all, folderB.folder!, 'postgres')?.name, 'ws pg');
    assert.equal(settingsDefault(all, folderB.folder!, 'mongodb')?.name, 'user mongo');
    assert.equal(settingsDefault(all, '', 'postgres')?.name, 'ws pg');
    assert.equal(settingsDefault([saved], folderA.folder!, 'postgres'), undefined);
  });

  it('tells a refused login from a refused statement, and asks only when the connection names a user', () => {
    const [withUser, withoutUser] = readSettingsConnections([
      { name: 'a', engine: 'postgres', uri: 'postgresql://app@h/db' },
      { name: 'b', engine: 'postgres', uri: 'postgresql://h/db' },
    ], folderA).specs;
    assert.equal(asksForPassword(new AdapterError('auth', 'PostgreSQL at h refused the login: password authentication failed.', { code: '28P01' }), withUser!), true);
    assert.equal(asksForPassword(new AdapterError('auth', 'PostgreSQL at h needs a password for this user, and none or an unusable one was given.'), withUser!), true);
    assert.equal(asksForPassword(new AdapterError('auth', 'MongoDB at h refused the login.', { code: 18 }), withUser!), true);
    assert.equal(asksForPassword(new AdapterError('auth', 'PostgreSQL refused the statement: permission denied.', { code: '42501' }), withUser!), false);
    assert.equal(asksForPassword(new AdapterError('network', 'Cannot reach PostgreSQL at h.'), withUser!), false);
    assert.equal(asksForPassword(new AdapterError('auth', 'PostgreSQL at h refused the login.', { code: '28P01' }), withoutUser!), false);
  });

  it('finds the settings connection a uri was built from, never a saved one with the same address', () => {
    const [spec] = readSettingsConnections([{ name: 'a', engine: 'postgres', uri: 'postgresql://app@h:5432/db' }], folderA).specs;
    assert.equal(settingsConnectionOf([spec!], connectionUri(spec!, undefined))?.id, spec!.id);
    assert.equal(settingsConnectionOf([spec!], connectionUri(spec!, 's3:cr/t@'))?.id, spec!.id);
    assert.equal(settingsConnectionOf([spec!], 'postgresql://app@other:5432/db'), undefined);
    const saved: ConnectionSpec = { id: 'x', name: 'saved', engine: 'postgres', form: 'uri', uri: 'postgresql://app@h:5432/db', tls: { enabled: false }, hasPassword: true };
    assert.equal(settingsConnectionOf([saved, spec!], connectionUri(spec!, undefined)), undefined);
    assert.equal(settingsConnectionOf([saved], connectionUri(saved, 'pw')), undefined);
  });

  describe('the gateway that asks for the password of a settings connection', () => {
    const [spec] = readSettingsConnections([{ name: 'team pg', engine: 'postgres', uri: 'postgresql://app@db.example:5432/shop' }], folderA).specs;
    const saved: ConnectionSpec = { id: 'x', name: 'saved', engine: 'postgres', form: 'uri', uri: 'postgresql://app@other:5432/shop', tls: { enabled: false }, hasPassword: false };
    const outcome = { plan: {}, rawText: 'plan', durationMs: 1, notes: [] } as unknown as ExplainOutcome;
    const request = (uri: string): ExplainRequest => ({
      engine: 'postgres', connectionId: 'x', uri, text: 'SELECT 1', verbosity: 'executionStats', allowWrites: false, analyze: true, buffers: true, timeoutMs: 1000, connectTimeoutMs: 1000,
    });

    /** A server whose only password is "right", and a record of what it was sent. */
    function fakeServer() {
      const sent: string[] = [];
      let cancels = 0;
      const check = (uri: string) => {
        sent.push(uri);
        if (!uri.includes(':right@')) {
          return Promise.reject(uri.includes('@') && /:\w+@/.test(uri)
            ? new AdapterError('auth', 'PostgreSQL at db.example refused the login: password authentication failed.', { code: '28P01' })
            : new AdapterError('auth', 'PostgreSQL at db.example needs a password for this user, and none or an unusable one was given.'));
        }
        return Promise.resolve(outcome);
      };
      const gateway: Gateway = {
        test: async () => ({}),
        familyCollections: async () => [],
        explain: (r) => ({ done: check(r.uri), cancel: async () => void cancels++ }),
        measure: (r: MeasureRequest) => ({ done: check(r.uri).then(() => ({ declined: false, notes: [], warnings: [] })), cancel: () => void cancels++ }),
      };
      return { gateway, sent, cancels: () => cancels };
    }

    function source(answers: (string | undefined)[], kept: Map<string, string>) {
      const asked: string[] = [];
      return {
        asked,
        src: {
          connections: () => [saved, { ...spec!, hasPassword: kept.has(spec!.id) }],
          password: async (id: string) => kept.get(id),
          ask: async (s: ConnectionSpec, reason: string) => {
            asked.push(reason);
            const a = answers.shift();
            if (a !== undefined) kept.set(s.id, a);
            return a;
          },
        },
      };
    }

    it('asks when the server wants a password, keeps it, runs again with it, and a later verify uses it', async () => {
      const server = fakeServer();
      const kept = new Map<string, string>();
      const { asked, src } = source(['wrong', 'right'], kept);
      const gw = askingPasswords(server.gateway, src);
      const first = connectionUri(spec!, undefined);
      assert.equal(await gw.explain(request(first)).done, outcome);
      assert.deepEqual(server.sent, [first, connectionUri(spec!, 'wrong'), connectionUri(spec!, 'right')]);
      assert.deepEqual(asked, ['team pg asks for the password of app.', 'team pg refused the login of app with that password: type it again.']);
      assert.equal(kept.get(spec!.id), 'right');
      // The panel verifies with the uri the explain was started with: the kept password joins it.
      await gw.measure({ ...request(first), live: {} as MeasureRequest['live'], rank: 1, sampleSize: 10 }).done;
      assert.equal(server.sent.at(-1), connectionUri(spec!, 'right'));
    });

    it('shows the refusal when the question is dismissed, and never asks for a saved connection', async () => {
      const server = fakeServer();
      const { asked, src } = source([undefined], new Map());
      const gw = askingPasswords(server.gateway, src);
      await assert.rejects(gw.explain(request(connectionUri(spec!, undefined))).done, /needs a password/);
      assert.equal(asked.length, 1);
      await assert.rejects(gw.explain(request(connectionUri(saved, undefined))).done, /needs a password/);
      assert.equal(asked.length, 1);
    });

    it('stops asking after three refused passwords, and Cancel reaches the running explain', async () => {
      const server = fakeServer();
      const { asked, src } = source(['a', 'b', 'c', 'd'], new Map());
      const gw = askingPasswords(server.gateway, src);
      await assert.rejects(gw.explain(request(connectionUri(spec!, undefined))).done, /refused the login/);
      assert.equal(asked.length, 3);
      const running = gw.explain(request(connectionUri(spec!, undefined)));
      await running.cancel();
      await assert.rejects(running.done, /needs a password/);
      assert.equal(asked.length, 3, 'a cancelled explain asked for a password');
      assert.equal(server.cancels(), 1);
    });
  });
});
