// Which PostgreSQL errors mean the connection is gone (one sentence of the project's, kind 'network') and
// which leave it working: a protocol violation (08P01) is also what the server says of a statement sent
// with the wrong number of parameters, so it is the statement's error, not a lost connection.

import assert from 'node:assert/strict';
import { pgConnectionLost, pgLostError } from '../../src/adapters/errors';

describe('a lost PostgreSQL connection', () => {
  it('is told from the server\'s session-ending codes, class 08 and a reset socket', () => {
    for (const code of ['57P01', '08006', '08003', '08000']) assert.ok(pgConnectionLost({ code, message: 'x' }), code);
    assert.ok(pgConnectionLost({ code: 'ECONNRESET', message: 'read ECONNRESET' }));
    assert.ok(pgConnectionLost({ message: 'Connection terminated unexpectedly' }));
    assert.match(pgLostError({ code: '57P01' }, 'while the explain ran', 'db:5432')?.message ?? '', /^The PostgreSQL connection to db:5432 was lost while the explain ran: /);
  });

  it('is not a statement sent with the wrong number of parameters (08P01), nor any other statement error', () => {
    assert.equal(pgConnectionLost({ code: '08P01', message: 'bind message supplies 0 parameters, but prepared statement "" requires 2' }), undefined);
    assert.equal(pgConnectionLost({ code: '42P01', message: 'relation "x" does not exist' }), undefined);
    assert.equal(pgLostError({ code: '08P01' }, 'while the explain ran'), undefined);
  });
});
