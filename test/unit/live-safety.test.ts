// Connection settings and sentences of the live adapters that need no server: no piece of a password in
// any sentence (however the URI is written), the password given apart sent verbatim, the URI's own
// time limits kept, statement words with their article, and --timeout-ms checked as usage.

import assert from 'node:assert/strict';
import { graceFor, withDeadline } from '../../src/adapters/deadline';
import { describeHost, misplacedAt, scrub, uriSecrets } from '../../src/adapters/errors';
import { mongoClientConfig } from '../../src/adapters/mongodb';
import { postgresClientConfig } from '../../src/adapters/postgres';
import { inspectStatement, statementWord } from '../../src/adapters/pgStatement';
import { timeoutOf } from '../../src/cli/explain';
import { run, type Io } from '../../src/cli/main';

function capture(): Io & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (s: string) => void (io.out += s),
    stderr: (s: string) => void (io.err += s),
    readStdin: () => '',
    readFile: () => '',
  };
  return io;
}

/** Every way a password breaks a URI that a user may type, with the password each one holds. */
const AWKWARD: { uri: string; password: string }[] = [
  { uri: 'postgresql://postgres:p@ssw0rd-3344@127.0.0.1:1/app', password: 'p@ssw0rd-3344' },
  { uri: 'postgresql://postgres:Sl/ash-9981@127.0.0.1:5432/app', password: 'Sl/ash-9981' },
  { uri: 'postgresql://postgres:Ha#sh-77210@127.0.0.1:5432/app', password: 'Ha#sh-77210' },
  { uri: 'postgresql://postgres:Qu?ery-55310@127.0.0.1:5432/app', password: 'Qu?ery-55310' },
  { uri: 'postgresql://postgres:12/34567890@127.0.0.1:5432/app', password: '12/34567890' },
  { uri: 'postgresql://postgres:99#88776655@db.internal/app', password: '99#88776655' },
  { uri: 'mongodb://app:p@ss/w#rd?x-123@127.0.0.1:27017/test', password: 'p@ss/w#rd?x-123' },
  { uri: 'mongodb://app:Sl/ash-9981@127.0.0.1:27017,127.0.0.2:27018/test?replicaSet=rs0', password: 'Sl/ash-9981' },
];

function secretPieces(password: string): string[] {
  return [password, ...password.split(/[@/#?:]/).filter((p) => p.length >= 6)];
}

describe('live adapters without a server', () => {
  describe('no piece of a password in a sentence', () => {
    it('names the host after the last @ and never a piece of the user info', () => {
      assert.equal(describeHost('postgresql://postgres:p@ssw0rd-3344@127.0.0.1:1/app'), '127.0.0.1:1');
      assert.equal(describeHost('postgresql://postgres:Sl/ash@127.0.0.1:5432/app'), '127.0.0.1:5432');
      assert.equal(describeHost('mongodb://a:b@h1:1,h2:2/?replicaSet=x'), 'h1:1,h2:2');
      assert.equal(describeHost('postgresql://[::1]:5432/app'), '[::1]:5432');
      // Without an '@' a "host" that is not a host list is not printed: it may be user:password.
      assert.equal(describeHost('postgresql://postgres:secret-word/app'), 'the server');
      assert.equal(describeHost('not a uri'), 'the server');
    });

    it('finds an @ the URI grammar would not read as the end of the user info', () => {
      for (const { uri } of AWKWARD.filter((x) => /[/#?]/.test(x.password))) assert.equal(misplacedAt(uri), true, uri);
      assert.equal(misplacedAt('postgresql://u:p%40ss@h/db?application_name=me@laptop'), false);
      assert.equal(misplacedAt('postgresql://u:p@ss@h/db'), false);
      assert.equal(misplacedAt('mongodb://h/db?replicaSet=rs0'), false);
    });

    it('lists the user info and the password, raw and decoded, as secrets, and scrubs their pieces', () => {
      assert.deepEqual(uriSecrets('postgresql://u:p%41ss@h/db'), ['u:p%41ss', 'p%41ss', 'pAss']);
      assert.deepEqual(uriSecrets('postgresql://h/db'), []);
      assert.equal(scrub('Cannot reach ssw0rd-3344@127.0.0.1', uriSecrets('postgresql://postgres:p@ssw0rd-3344@127.0.0.1:1/app')), 'Cannot reach ***@127.0.0.1');
    });

    it('refuses every awkward URI as malformed with no piece of its password', () => {
      for (const { uri, password } of AWKWARD) {
        let message = '';
        try {
          if (uri.startsWith('mongodb')) mongoClientConfig({ uri });
          else postgresClientConfig({ uri });
        } catch (err) {
          message = (err as Error).message;
        }
        if (password.includes('@') && !/[/#?]/.test(password)) {
          // An unescaped '@' alone still reads as one user info: the URI is accepted as written.
          assert.equal(message, '', uri);
          continue;
        }
        assert.match(message, /^The (PostgreSQL|MongoDB) URI for \S+ is malformed \(/, uri);
        for (const piece of secretPieces(password)) assert.ok(!message.includes(piece), `${message} holds ${piece}`);
      }
    });
  });

  describe('PostgreSQL settings', () => {
    it('sends a password given apart exactly as given', () => {
      assert.equal(postgresClientConfig({ uri: 'postgresql://app@h/db', password: '%41b%zz' }).password, '%41b%zz');
      assert.equal(postgresClientConfig({ uri: 'postgresql://app:x%41@h/db' }).password, 'xA');
    });

    it('keeps connect_timeout and application_name from the URI', () => {
      const fromUri = postgresClientConfig({ uri: 'postgresql://app@h/db?connect_timeout=3&application_name=mine', connectTimeoutMs: 10_000 });
      assert.equal(fromUri.connectionTimeoutMillis, 3000);
      assert.equal(fromUri.application_name, 'mine');
      const ours = postgresClientConfig({ uri: 'postgresql://app@h/db', connectTimeoutMs: 7000, applicationName: 'qpi' });
      assert.deepEqual([ours.connectionTimeoutMillis, ours.application_name], [7000, 'qpi']);
    });

    it('reads sslmode=require with the driver\'s meaning and prints no warning', async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error): void => void warnings.push(w.message);
      process.on('warning', onWarning);
      try {
        const config = postgresClientConfig({ uri: 'postgresql://app@h/db?sslmode=require' });
        assert.deepEqual({ ...(config.ssl as object) }, {});
        await new Promise((r) => setImmediate(r));
      } finally {
        process.removeListener('warning', onWarning);
      }
      assert.deepEqual(warnings, []);
    });

    it('reads statement words with their article', async () => {
      assert.equal(statementWord('AlterTableStmt'), 'an ALTER TABLE');
      assert.equal(statementWord('SelectStmt'), 'a SELECT');
      assert.equal(statementWord('AlterRoleStmt'), 'an ALTER ROLE');
      await assert.rejects(inspectStatement('ALTER TABLE t ADD COLUMN c int'), /EXPLAIN cannot show a plan for an ALTER TABLE statement; /);
      await assert.rejects(inspectStatement('GRANT SELECT ON t TO r'), /for a GRANT statement; /);
    });
  });

  describe('MongoDB settings', () => {
    it('keeps serverSelectionTimeoutMS and connectTimeoutMS from the URI, and fills in only what it lacks', () => {
      const fromUri = mongoClientConfig({ uri: 'mongodb://h/?serverSelectionTimeoutMS=500&connectTimeoutMS=700', connectTimeoutMs: 10_000 });
      assert.equal(fromUri.clientOptions.serverSelectionTimeoutMS, undefined);
      assert.equal(fromUri.clientOptions.connectTimeoutMS, undefined);
      const ours = mongoClientConfig({ uri: 'mongodb://h/', connectTimeoutMs: 4000 });
      assert.deepEqual([ours.clientOptions.serverSelectionTimeoutMS, ours.clientOptions.connectTimeoutMS], [4000, 4000]);
    });

    it('sends a password given apart verbatim, for the user in the URI', () => {
      const { clientOptions } = mongoClientConfig({ uri: 'mongodb://app%40corp@h/', password: '%41' });
      assert.deepEqual(clientOptions.auth, { username: 'app@corp', password: '%41' });
    });
  });

  describe('--timeout-ms', () => {
    it('accepts whole milliseconds from 1 to 2^31-1', () => {
      assert.equal(timeoutOf(new Map([['--timeout-ms', '1']])), 1);
      assert.equal(timeoutOf(new Map([['--timeout-ms', '2147483647']])), 2147483647);
      assert.equal(timeoutOf(new Map()), 30_000);
    });

    for (const bad of ['0', '2147483648', '1.5', '-3', 'abc', '', '1e3']) {
      it(`refuses ${JSON.stringify(bad)} as a usage error before connecting`, async () => {
        for (const command of ['explain', 'advise']) {
          const io = capture();
          const code = await run([command, '--uri', 'postgresql://app:Secret-Pw-77@127.0.0.1:1/db', '--query', 'SELECT 1', '--timeout-ms', bad], io);
          assert.equal(code, 64, io.err);
          assert.match(io.err, /^--timeout-ms must be a whole number of milliseconds from 1 to 2147483647\.\n/);
        }
      });
    }
  });
});

describe('statement references for the side-effect check', () => {
  it('reads functions, operators, relations, inserted columns, written tables and row locks from the parse tree', async () => {
    const select = (await inspectStatement('SELECT s.f(a) + 1, nextval(\'q\') FROM v JOIN "W x" USING (id) WHERE a OPERATOR(pg_catalog.+) 1 > 2 FOR UPDATE')).refs;
    assert.deepEqual(select.functions.map((f) => `${f.schema ?? ''}.${f.name}`).sort(), ['.nextval', 's.f']);
    assert.deepEqual(select.operators.map((o) => `${o.schema ?? ''}.${o.name}`).sort(), ['.+', '.>', 'pg_catalog.+']);
    assert.deepEqual(select.relations.sort(), ['"W x"', '"v"']);
    assert.equal(select.locks, true);
    const listed = (await inspectStatement('INSERT INTO app.t (a, b) VALUES (1, 2) ON CONFLICT (a) DO UPDATE SET b = 3')).refs;
    assert.deepEqual(listed.inserts, [{ rel: '"app"."t"', cols: ['a', 'b'], width: null }]);
    assert.deepEqual(listed.written, [{ rel: '"app"."t"', events: 4 | 16, cols: null }]);
    assert.deepEqual((await inspectStatement('INSERT INTO t VALUES (1, 2), (3)')).refs.inserts, [{ rel: '"t"', cols: null, width: 1 }]);
    assert.deepEqual((await inspectStatement('INSERT INTO t (a) VALUES (DEFAULT)')).refs.inserts, [{ rel: '"t"', cols: null, width: null }]);
    // A MERGE that may insert reaches every column default; one that only deletes reaches none.
    assert.deepEqual((await inspectStatement('MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)')).refs.inserts, [{ rel: '"t"', cols: null, width: null }]);
    assert.deepEqual((await inspectStatement('MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE')).refs.inserts, []);
    assert.deepEqual((await inspectStatement('DELETE FROM t')).refs.written, [{ rel: '"t"', events: 8, cols: [] }]);
  });
});

describe('client-side deadlines', () => {
  it('gives the work its answer while it comes in time', async () => {
    assert.equal(await withDeadline(Promise.resolve(7), 1000, async () => new Error('expired')), 7);
    await assert.rejects(withDeadline(Promise.reject(new Error('own')), 1000, async () => new Error('expired')), /^Error: own$/);
  });

  it('stops waiting for work that never answers and throws what onExpire returns, after it ran', async () => {
    let stopped = false;
    const never = new Promise<number>(() => {});
    await assert.rejects(withDeadline(never, 5, async () => ((stopped = true), new Error('stopped on the server'))), /stopped on the server/);
    assert.equal(stopped, true);
  });

  it('ends at once on an abort, before or during the wait', async () => {
    const controller = new AbortController();
    const waiting = withDeadline(new Promise<number>(() => {}), 60_000, async () => new Error('expired'), { signal: controller.signal, onAbort: () => new Error('cancelled') });
    controller.abort();
    await assert.rejects(waiting, /cancelled/);
    await assert.rejects(withDeadline(new Promise<number>(() => {}), 60_000, async () => new Error('expired'), { signal: controller.signal, onAbort: () => new Error('already') }), /already/);
  });

  it('grants a grace of 2 s and a tenth of the limit, at most 10 s, and caps timers at 2^31-1 ms', async () => {
    assert.deepEqual([graceFor(1000), graceFor(30_000), graceFor(2 ** 31 - 1)], [2100, 5000, 10_000]);
    // A longer delay would make Node fire the timer at once: the work must win here.
    // The work must outlast the 1 ms an overflowed timer would wait, so it is a timer itself, not a sleep.
    // eslint-disable-next-line no-restricted-syntax
    assert.equal(await withDeadline(new Promise<number>((r) => setTimeout(() => r(1), 20)), 2 ** 31 - 1 + 10_000, async () => new Error('fired at once')), 1);
  });
});
