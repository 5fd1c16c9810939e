// What a saved connection keeps: the connection string without any password or token, whatever form the
// password was typed in (an unencoded '@' in it, a `password=` parameter), and the password apart for the
// secret storage. Also the port a string names, checked before anything blames the password.

import { strict as assert } from 'node:assert';
import { parseConnectionString, redact, splitUriSecret, withoutPassword } from '../../src/extension/connections/spec';
import { portProblem } from '../../src/adapters/errors';

describe('Connection strings split into what is stored and the secret', () => {
  it('takes the user info up to the LAST @, so a password holding an unencoded @ is never stored', () => {
    assert.deepEqual(splitUriSecret('postgresql://app:p@ss-Word9@db/shop'), { uri: 'postgresql://app@db/shop', password: 'p@ss-Word9' });
    assert.deepEqual(splitUriSecret('mongodb://app:p@ss@w0rd@db1:27017,db2:27017/shop?replicaSet=rs0'), { uri: 'mongodb://app@db1:27017,db2:27017/shop?replicaSet=rs0', password: 'p@ss@w0rd' });
    assert.equal(withoutPassword('postgresql://app:p@ss-Word9@db/shop'), 'postgresql://app@db/shop');
    const parsed = parseConnectionString('postgresql://app:p@ss-Word9@db/shop');
    assert.ok(parsed.ok);
    assert.deepEqual([parsed.value.user, parsed.value.password, parsed.value.hosts, parsed.value.database], ['app', 'p@ss-Word9', 'db', 'shop']);
  });

  it('refuses a user info with an unencoded @ and no password separator, which may hold a password', () => {
    const parsed = parseConnectionString('postgresql://app@ss-Word9@db/shop');
    assert.ok(!parsed.ok);
    assert.match(parsed.error, /holds an '@' that is not percent-encoded/);
  });

  it('moves a PostgreSQL password= parameter out of the stored string', () => {
    assert.deepEqual(splitUriSecret('postgresql://app@db:5432/shop?sslmode=require&password=s%40cret&application_name=me@host'), {
      uri: 'postgresql://app@db:5432/shop?sslmode=require&application_name=me@host',
      password: 's@cret',
    });
    assert.deepEqual(splitUriSecret('postgres://db/shop?user=app&password=hunter22'), { uri: 'postgres://db/shop?user=app', password: 'hunter22' });
    const parsed = parseConnectionString('postgresql://app@db/shop?password=hunter22');
    assert.ok(parsed.ok);
    assert.equal(parsed.value.password, 'hunter22');
    assert.ok(!parsed.value.params.has('password'));
  });

  it('drops an AWS session token from MongoDB authMechanismProperties and keeps the other properties', () => {
    assert.deepEqual(splitUriSecret('mongodb://db/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:FQoGZXIvYX%2Fsecret,SERVICE_NAME:mongodb'), {
      uri: 'mongodb://db/?authMechanism=MONGODB-AWS&authMechanismProperties=SERVICE_NAME:mongodb',
    });
    assert.equal(withoutPassword('mongodb://db/?authMechanismProperties=AWS_SESSION_TOKEN:abc'), 'mongodb://db/');
    // A MongoDB string has no password parameter: one named so is left to the driver, which refuses it.
    assert.deepEqual(splitUriSecret('mongodb://u:pw@db/?password=x'), { uri: 'mongodb://u@db/?password=x', password: 'pw' });
  });

  it('leaves a string without secrets as typed', () => {
    for (const uri of ['postgresql://app@db:5432/shop?sslmode=require', 'mongodb+srv://cluster0.example/test?retryWrites=true', 'postgresql://db']) {
      assert.deepEqual(splitUriSecret(uri), { uri });
    }
  });

  it('redacts a logged password holding an unencoded @', () => {
    assert.equal(redact('failed postgresql://app:p@ss-Word9@db/shop'), 'failed postgresql://app:****@db/shop');
  });

  it('blames a port out of range on the port', () => {
    const parsed = parseConnectionString('postgresql://app:secret@db:99999/shop');
    assert.ok(!parsed.ok);
    assert.equal(parsed.error, 'The connection string cannot be used: port 99999 is out of range (1-65535).');
    assert.equal(portProblem('postgresql://app:s@cret@db:99999/shop'), 'port 99999 is out of range (1-65535)');
    assert.equal(portProblem('mongodb://db1:27017,[::1]:0/'), 'port 0 is out of range (1-65535)');
    assert.equal(portProblem('postgresql://db:5432/shop'), undefined);
  });
});
