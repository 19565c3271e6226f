/**
 * Contract §0, faults, at the driver: a connection the server ends while the pool has lent it out
 * (a restart, a failover, `pg_terminate_backend`) must not end the process (an `error` event
 * without a listener would), the statement fails with `DatabaseUnavailableError` (503), the broken
 * client is not lent again, and the next statement runs on a fresh connection. Also the classifier
 * that tells a lost connection from a failing statement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { DatabaseUnavailableError, isConnectionFailure } from '../../src/db/availability.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { IS_POSTGRES, TEST_DATABASE_URL } from '../helpers/database.ts';

describe('lost connections', { skip: !IS_POSTGRES && 'runs against PostgreSQL' }, () => {
  let database: DatabaseHandle;
  let admin: pg.Client;

  before(async () => {
    database = openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL }, { poolSize: 2 });
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
  });

  after(async () => {
    await admin.end();
    await database.close();
  });

  it('a transaction whose connection is ended answers DatabaseUnavailableError; the process carries on', async () => {
    let report: (pid: number) => void = () => {};
    const pidSeen = new Promise<number>((resolve) => {
      report = resolve;
    });
    const transaction = database.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
      report(Number(rows[0]?.pid));
      // Still in the transaction when the server ends the session.
      await sql`select pg_sleep(5)`.execute(trx);
    });
    // The rejection can arrive before pg_terminate_backend's own answer: it is awaited from the
    // start so it is never an unhandled rejection.
    const refused = assert.rejects(transaction, (error: unknown) => {
      assert.ok(error instanceof DatabaseUnavailableError, `got ${String(error)}`);
      assert.equal(error.code, 'SERVICE_UNAVAILABLE');
      return true;
    });
    await admin.query('select pg_terminate_backend($1)', [await pidSeen]);
    await refused;
    // The broken client went out of the pool: every following statement runs on a working one.
    for (let i = 0; i < 4; i++) {
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      assert.equal(rows[0]?.one, 1);
    }
    assert.equal(await database.ping(), true);
  });

  it('an idle pooled connection ended by the server is replaced on the next checkout', async () => {
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where pid = $1', [
      rows[0]?.pid,
    ]);
    await new Promise((r) => setTimeout(r, 50));
    const again = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    assert.equal(again.rows[0]?.one, 1);
  });

  it('a server that refuses connections answers DatabaseUnavailableError quickly', async () => {
    const url = new URL(TEST_DATABASE_URL);
    url.port = '1'; // nothing listens there
    const unreachable = openDatabase({ kind: 'postgres', url: url.toString() }, { poolSize: 1 });
    try {
      const started = Date.now();
      await assert.rejects(sql`select 1`.execute(unreachable.db), DatabaseUnavailableError);
      assert.ok(Date.now() - started < 2_000, 'refused at once, not after a hang');
      assert.equal(await unreachable.ping(), false);
    } finally {
      await unreachable.close();
    }
  });
});

describe('isConnectionFailure', () => {
  const pgError = (code: string, message = 'x') =>
    Object.assign(new Error(message), { code, severity: 'FATAL' });

  it('takes socket errors, connection SQLSTATEs and pg’s own lost-connection messages', () => {
    for (const error of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      pgError('57P01', 'terminating connection due to administrator command'),
      pgError('57P03', 'the database system is starting up'),
      pgError('08006'),
      pgError('53300', 'sorry, too many clients already'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })], 'all refused'),
      new Error('wrapped', { cause: Object.assign(new Error('reset'), { code: 'EPIPE' }) }),
      new DatabaseUnavailableError(new Error('x')),
    ]) {
      assert.equal(isConnectionFailure(error), true, String(error));
    }
  });

  it('leaves a failing statement alone: constraints, syntax, serialisation, anything else', () => {
    for (const error of [
      Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' }),
      Object.assign(new Error('syntax error'), { code: '42601', severity: 'ERROR' }),
      Object.assign(new Error('could not serialize'), { code: '40001', severity: 'ERROR' }),
      Object.assign(new Error('UNIQUE constraint failed'), { errcode: 2067 }),
      new TypeError('x is undefined'),
      'a string',
      null,
      undefined,
    ]) {
      assert.equal(isConnectionFailure(error), false, String(error));
    }
  });
});
