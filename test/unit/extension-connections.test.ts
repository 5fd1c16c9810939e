import assert from 'node:assert/strict';
import { connectionUri, describe as describeSpec, parseConnectionString, redact, tlsFromUri, validateSpec, withoutPassword, type ConnectionSpec } from '../../src/extension/connections/spec';

describe('extension: connection specs', () => {
  it('reads connection strings of both engines and keeps the password apart', () => {
    const p = parseConnectionString('postgresql://app:s%40cret@db.example:6543/shop?sslmode=require');
    assert.ok(p.ok);
    assert.equal(p.value.engine, 'postgres');
    assert.equal(p.value.user, 'app');
    assert.equal(p.value.password, 's@cret');
    assert.equal(p.value.hosts, 'db.example:6543');
    assert.equal(p.value.database, 'shop');
    assert.deepEqual(tlsFromUri(p.value), { enabled: true, allowInvalidCertificates: true });
    assert.equal(withoutPassword('postgresql://app:s%40cret@db.example:6543/shop'), 'postgresql://app@db.example:6543/shop');
    const m = parseConnectionString('mongodb+srv://u:p@cluster0.example/test');
    assert.ok(m.ok);
    assert.equal(m.value.srv, true);
    assert.equal(tlsFromUri(m.value).enabled, true);
  });

  it('refuses what is not a connection string in one sentence', () => {
    const r = parseConnectionString('localhost:5432');
    assert.ok(!r.ok);
    assert.match(r.error, /^This is not a connection string.*\.$/);
    assert.match(validateSpec({ name: 'x', engine: 'mongodb', form: 'uri', uri: 'postgres://h/db', tls: { enabled: false } }) ?? '', /PostgreSQL connection string, not a MongoDB one/);
    assert.match(validateSpec({ name: 'x', engine: 'postgres', form: 'fields', host: 'h', port: 70000, tls: { enabled: false } }) ?? '', /port/);
  });

  it('joins the password only when building the URI to connect with', () => {
    const spec: ConnectionSpec = { id: 'a', name: 'local', engine: 'postgres', form: 'fields', host: '127.0.0.1', port: 5433, database: 'shop', user: 'app', tls: { enabled: true, caFile: '/ca.pem' }, hasPassword: true };
    assert.equal(connectionUri(spec, 'p@ss'), 'postgresql://app:p%40ss@127.0.0.1:5433/shop?sslmode=verify-full&sslrootcert=%2Fca.pem');
    assert.equal(describeSpec(spec), 'app@127.0.0.1:5433/shop (TLS)');
    const mongo: ConnectionSpec = { id: 'b', name: 'm', engine: 'mongodb', form: 'uri', uri: 'mongodb://u@127.0.0.1:27017/admin?authSource=admin', tls: { enabled: true, allowInvalidCertificates: true }, hasPassword: true };
    assert.equal(connectionUri(mongo, 'pw'), 'mongodb://u:pw@127.0.0.1:27017/admin?authSource=admin&tls=true&tlsAllowInvalidCertificates=true');
    assert.equal(connectionUri({ ...mongo, uri: 'mongodb://127.0.0.1:27017/?tls=false' }, undefined), 'mongodb://127.0.0.1:27017/?tls=false');
  });

  it('redacts passwords from text that is logged', () => {
    assert.equal(redact('failed mongodb://u:hunter22@h/x and hunter22 again', ['hunter22']), 'failed mongodb://u:****@h/x and **** again');
    assert.equal(redact('password=abc123 ok'), 'password=**** ok');
  });
});
