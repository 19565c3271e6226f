/**
 * The PostgreSQL driver that writes BEGIN with a transaction's first statement and marked writes
 * with its COMMIT, in pg's pipeline mode (src/db/postgres-driver.ts). The clients' traffic is
 * recorded as it happens: each statement written, each answer read. A wait is a run of writes
 * followed by the answers to them, so the log shows how many round trips a transaction waited for.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import fc from 'fast-check';
import { CompiledQuery, Kysely, sql } from 'kysely';
import pg from 'pg';
import { PipelinedPostgresDialect, sendWithCommit } from '../../src/db/postgres-driver.ts';
import { IS_POSTGRES, TEST_DATABASE_URL } from '../helpers/database.ts';

/** A pipelining pool whose clients log `write <text>` when a statement goes out and `read <text>` when its answer comes back. */
function recordingPool(): { pool: pg.Pool; log: string[] } {
  const log: string[] = [];
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2, pipeline: true });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<unknown>;
    (client as { query: unknown }).query = (text: string, values?: unknown[]) => {
      const name = text.split(' ')[0] ?? text;
      log.push(`write ${name}`);
      return query(text, values).finally(() => log.push(`read ${name}`));
    };
  });
  return { pool, log };
}

describe('PipelinedPostgresDialect', { skip: !IS_POSTGRES && 'runs against PostgreSQL' }, () => {
  let db: Kysely<Record<string, Record<string, unknown>>>;
  let log: string[];
  const table = `pipelined_${process.pid}`;
  const insert = (id: string, n: number) =>
    CompiledQuery.raw(`insert into ${table} (id, n) values ($1, $2)`, [id, n]);

  before(async () => {
    const recording = recordingPool();
    log = recording.log;
    db = new Kysely({ dialect: new PipelinedPostgresDialect(recording.pool) });
    await sql.raw(`create table ${table} (id text primary key, n integer not null)`).execute(db);
  });

  beforeEach(() => {
    log.length = 0;
  });

  after(async () => {
    await sql.raw(`drop table if exists ${table}`).execute(db);
    await db.destroy();
  });

  it('writes BEGIN with the first statement and the held write with the COMMIT: two waits', async () => {
    await db.transaction().execute(async (trx) => {
      await trx.executeQuery(CompiledQuery.raw(`select count(*) from ${table} where id = $1`, ['x']));
      await trx.executeQuery(sendWithCommit(insert('a', 1)));
    });
    assert.deepEqual(log, [
      'write begin',
      'write select',
      'read begin',
      'read select',
      'write insert',
      'write commit',
      'read insert',
      'read commit',
    ]);
    const rows = await db.selectFrom(table).selectAll().where('id', '=', 'a').execute();
    assert.deepEqual(rows, [{ id: 'a', n: 1 }]);
  });

  it('bound values of pipelined statements read back exactly, held writes included', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary' }).map((s) => s.replaceAll('\u0000', '')),
          fc.string({ unit: fc.constantFrom("'", '\\', 'E', '$', '1', ';', '"', '-', '\n') }),
        ),
        async (text) => {
          const id = `p${n++}`;
          const echoed = await db.transaction().execute(async (trx) => {
            // The first statement goes out with BEGIN, the insert with the COMMIT.
            const { rows } = await trx.executeQuery<{ v: string }>(
              CompiledQuery.raw('select $1::text as v', [text]),
            );
            await trx.executeQuery(
              sendWithCommit(
                CompiledQuery.raw(`insert into ${table} (id, n) values ($1, length($2))`, [id, text]),
              ),
            );
            return rows[0]?.v;
          });
          assert.equal(echoed, text);
          const row = await db.selectFrom(table).select('n').where('id', '=', id).executeTakeFirst();
          assert.equal(row?.n, [...text].length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a statement after held writes is written after them, in the same wait, and sees their rows', async () => {
    const seen = await db.transaction().execute(async (trx) => {
      await trx.executeQuery(sendWithCommit(insert('b', 2)));
      await trx.executeQuery(sendWithCommit(insert('b2', 3)));
      const { rows } = await trx.executeQuery<{ total: number }>(
        CompiledQuery.raw(`select sum(n)::int as total from ${table} where id = any($1)`, [['b', 'b2']]),
      );
      return rows[0]?.total;
    });
    assert.equal(seen, 5);
    assert.deepEqual(log, [
      'write begin',
      'write insert',
      'write insert',
      'write select',
      'read begin',
      'read insert',
      'read insert',
      'read select',
      'write commit',
      'read commit',
    ]);
  });

  it('a failing held write fails the commit with its own error and leaves nothing behind', async () => {
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.executeQuery(insert('c', 3));
        await trx.executeQuery(sendWithCommit(insert('c2', 4)));
        // A duplicate key: the error surfaces from the wait on the COMMIT.
        await trx.executeQuery(sendWithCommit(insert('c', 5)));
      }),
      /duplicate key/,
    );
    const rows = await db.selectFrom(table).selectAll().where('id', 'in', ['c', 'c2']).execute();
    assert.deepEqual(rows, []);
    // Nothing is left open on the connection: the next transaction commits.
    await db.transaction().execute((trx) => trx.executeQuery(insert('c3', 6)));
    const after = await db.selectFrom(table).select('n').where('id', '=', 'c3').executeTakeFirst();
    assert.equal(after?.n, 6);
  });

  it('a failing first statement is reported, not the BEGIN written with it, and rolls back', async () => {
    await assert.rejects(
      db.transaction().execute((trx) => trx.executeQuery(CompiledQuery.raw('select 1 / $1::int', [0]))),
      /division by zero/,
    );
    assert.deepEqual(log.slice(0, 4), ['write begin', 'write select', 'read begin', 'read select']);
    assert.deepEqual(log.slice(4), ['write rollback', 'read rollback']);
  });

  it('a transaction that ran nothing sends nothing; nor does one that only held writes and failed', async () => {
    await db.transaction().execute(async () => {});
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.executeQuery(sendWithCommit(insert('d', 1)));
        throw new Error('after a held write');
      }),
      /after a held write/,
    );
    assert.deepEqual(log, []);
    const row = await db.selectFrom(table).selectAll().where('id', '=', 'd').executeTakeFirst();
    assert.equal(row, undefined);
  });

  it('runs a transaction with an isolation level, and counts affected rows as Kysely expects', async () => {
    await db
      .transaction()
      .setIsolationLevel('serializable')
      .execute((trx) => trx.executeQuery(insert('e', 1)));
    assert.equal(log[0], 'write start');
    const result = await db
      .updateTable(table)
      .set({ n: 10 })
      .where('id', 'in', ['a', 'e'])
      .executeTakeFirst();
    assert.equal(result.numUpdatedRows, 2n);
  });
});
