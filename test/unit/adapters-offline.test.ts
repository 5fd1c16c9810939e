// The parts of the adapters that need no server: statement inspection with PostgreSQL's parser, server
// kind detection from hello/buildInfo (a real FerretDB buildInfo from the corpus), and error hygiene.

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdapterError, describeHost, oneSentence, scrub } from '../../src/adapters/errors';
import { describeServer } from '../../src/adapters/mongodb';
import { inspectStatement } from '../../src/adapters/pgStatement';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

async function rejected(promise: Promise<unknown>): Promise<AdapterError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AdapterError, String(err));
    return err;
  }
  assert.fail('expected a rejection');
}

describe('adapters without a server', () => {
  describe('PostgreSQL statement inspection', () => {
    it('accepts one statement and says whether it writes, CTEs included', async () => {
      assert.deepEqual(await inspectStatement('SELECT * FROM t WHERE a = $1;  '), {
        sql: 'SELECT * FROM t WHERE a = $1', kind: 'SelectStmt', writes: false,
        refs: { functions: [], operators: [{ schema: null, name: '=' }], relations: ['"t"'], inserts: [], written: [], casts: [], locks: false },
      });
      assert.equal((await inspectStatement('UPDATE t SET a = 1')).writes, true);
      assert.equal((await inspectStatement('INSERT INTO t VALUES (1)')).writes, true);
      assert.equal((await inspectStatement('MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE')).writes, true);
      assert.equal((await inspectStatement('WITH x AS (DELETE FROM t RETURNING *) SELECT count(*) FROM x')).writes, true);
      assert.equal((await inspectStatement('SELECT * INTO copy FROM t')).writes, true);
      assert.equal((await inspectStatement("SELECT 'UPDATE t SET a = 1' AS text")).writes, false);
    });

    it('removes an EXPLAIN the user wrote, with or without options', async () => {
      assert.equal((await inspectStatement('EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT) SELECT 1')).sql, 'SELECT 1');
      assert.equal((await inspectStatement('explain analyze verbose select 2')).sql, 'select 2');
      assert.equal((await inspectStatement('EXPLAIN DELETE FROM t')).writes, true);
    });

    it('refuses several statements, non-explainable statements and syntax errors in one sentence', async () => {
      const many = await rejected(inspectStatement('SELECT 1; DROP TABLE t'));
      assert.equal(many.kind, 'unsupported');
      assert.equal(many.message, 'The SQL holds 2 statements; explain them one at a time.');
      const ddl = await rejected(inspectStatement('CREATE INDEX ON t (a)'));
      assert.equal(ddl.kind, 'unsupported');
      assert.match(ddl.message, /CREATE INDEX statement/);
      const syntax = await rejected(inspectStatement('SELECT a,\nFROM t'));
      assert.equal(syntax.kind, 'syntax');
      assert.equal(syntax.message, 'The SQL has an error at line 2, column 1: syntax error at or near "FROM".');
      assert.equal((await rejected(inspectStatement('  ;  '))).kind, 'syntax');
      assert.equal((await rejected(inspectStatement('-- only a comment'))).kind, 'syntax');
    });
  });

  describe('MongoDB server kind', () => {
    it('recognises FerretDB from its real buildInfo', () => {
      const buildInfo = JSON.parse(readFileSync(join(CORPUS, 'compat', 'ferretdb-explain-buildinfo.json'), 'utf8'));
      const info = describeServer('mongodb://127.0.0.1:27017/', { isWritablePrimary: true, maxWireVersion: 21 }, buildInfo);
      assert.equal(info.kind, 'compatible');
      assert.equal(info.product, 'FerretDB');
      assert.equal(info.productVersion, 'v1.24.0');
      assert.equal(info.version, '7.0.42');
      assert.match(info.detail, /^This is FerretDB v1\.24\.0, which speaks the MongoDB protocol/);
    });

    it('recognises mongos, managed compatible services by host, and a plain mongod', () => {
      const build = { version: '7.0.2' };
      assert.equal(describeServer('mongodb://r:27017', { msg: 'isdbgrid' }, build).kind, 'mongos');
      assert.equal(describeServer('mongodb://u@docs.cluster-abc.us-east-1.docdb.amazonaws.com:27017/?tls=true', {}, { version: '5.0.0' }).product, 'Amazon DocumentDB');
      assert.equal(describeServer('mongodb+srv://u:p@acct.mongocluster.cosmos.azure.com/', {}, build).product, 'Azure Cosmos DB');
      const plain = describeServer('mongodb://h:27017', { setName: 'rs0', maxWireVersion: 21 }, build);
      assert.deepEqual([plain.kind, plain.replicaSet, plain.detail], ['mongod', 'rs0', 'This is MongoDB 7.0.2 (replica set rs0).']);
    });
  });

  describe('error hygiene', () => {
    it('scrubs credentials from URIs, key=value pairs and known secrets', () => {
      assert.equal(scrub('failed for mongodb://alice:s3cr3t@db:27017/x'), 'failed for mongodb://db:27017/x');
      assert.equal(scrub('host=db password=s3cr3t user=a'), 'host=db password=*** user=a');
      assert.equal(scrub('auth s3cr3t-Value failed', ['s3cr3t-Value']), 'auth *** failed');
    });

    it('names hosts without user info and keeps messages to one sentence', () => {
      assert.equal(describeHost('postgresql://bob:pw@db.internal:5433/app'), 'db.internal:5433');
      assert.equal(describeHost('mongodb+srv://bob:pw@cluster0.example.net/?x=1'), 'cluster0.example.net');
      assert.equal(oneSentence('first line\n  DETAIL: more'), 'first line DETAIL: more.');
      assert.equal(new AdapterError('network', 'Cannot reach it').message, 'Cannot reach it.');
    });
  });
});
