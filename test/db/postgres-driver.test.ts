/**
 * The PostgreSQL driver that sends BEGIN with a transaction's first statement and a marked write
 * with its COMMIT (src/db/postgres-driver.ts). The literal inlining is checked against a real
 * server: whatever the value, the inlined text must read back exactly what a parameter gives.
 * The round trips are counted on the pool's clients.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { CompiledQuery, Kysely, sql } from 'kysely';
import pg from 'pg';
import { inlineParameters, PipelinedPostgresDialect, sendWithCommit } from '../../src/db/postgres-driver.ts';
import { IS_POSTGRES, TEST_DATABASE_URL } from '../helpers/database.ts';

describe('inlineParameters', () => {
  it('writes each $n as an escape-string literal of pg’s own text form, NULL for null', () => {
    assert.equal(
      inlineParameters('select $1, $2, $10, $3', ["it's", null, 'c', 'd', 5, 6, 7, 8, 9, true]),
      "select E'it''s', NULL, E'true', E'c'",
    );
    assert.equal(inlineParameters('select $1', ['back\\slash']), "select E'back\\\\slash'");
    assert.equal(inlineParameters('select 1', []), 'select 1');
  });

  it('refuses what it cannot inline safely: text with literals of its own, NUL, binary data, missing values', () => {
    assert.equal(inlineParameters("select $1 where x = 'a'", ['v']), undefined);
    assert.equal(inlineParameters('select $$a$$, $1', ['v']), undefined);
    assert.equal(inlineParameters('select $1', ['a\u0000b']), undefined);
    assert.equal(inlineParameters('select $1', [Buffer.from('ab')]), undefined);
    assert.equal(inlineParameters('select $2', ['only one']), undefined);
  });
});

/** A pool whose clients count the messages they send. */
function countingPool(): { pool: pg.Pool; sent: string[] } {
  const sent: string[] = [];
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      sent.push(String(args[0]));
      return query(...args);
    };
  });
  return { pool, sent };
}

describe('PipelinedPostgresDialect', { skip: !IS_POSTGRES && 'runs against PostgreSQL' }, () => {
  let db: Kysely<Record<string, Record<string, unknown>>>;
  let sent: string[];
  const table = `pipelined_${process.pid}`;

  before(async () => {
    const counting = countingPool();
    sent = counting.sent;
    db = new Kysely({ dialect: new PipelinedPostgresDialect(counting.pool) });
    await sql.raw(`create table ${table} (id text primary key, n integer not null)`).execute(db);
  });

  after(async () => {
    await sql.raw(`drop table if exists ${table}`).execute(db);
    await db.destroy();
  });

  it('inlined values read back exactly as parameters do', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary' }).filter((s) => !s.includes('\u0000')),
          fc.string({ unit: fc.constantFrom("'", '\\', 'E', '$', '1', ';', '"', '-', '\n') }),
        ),
        async (text) => {
          const inlined = inlineParameters('select $1::text as v', [text]);
          assert.ok(inlined);
          const { rows } = await db.executeQuery<{ v: string }>(CompiledQuery.raw(inlined));
          assert.equal(rows[0]?.v, text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('sends BEGIN with the first statement and the held write with the COMMIT: two messages', async () => {
    sent.length = 0;
    await db.transaction().execute(async (trx) => {
      await trx.executeQuery(CompiledQuery.raw(`select count(*) from ${table} where id = $1`, ['x']));
      await trx.executeQuery(
        sendWithCommit(CompiledQuery.raw(`insert into ${table} (id, n) values ($1, $2)`, ['a', 1])),
      );
    });
    assert.deepEqual(sent, [
      `begin; select count(*) from ${table} where id = E'x'`,
      `insert into ${table} (id, n) values (E'a', E'1'); commit`,
    ]);
    const rows = await db.selectFrom(table).selectAll().execute();
    assert.deepEqual(rows, [{ id: 'a', n: 1 }]);
  });

  it('a statement after a held write is sent after it and sees its row', async () => {
    sent.length = 0;
    const seen = await db.transaction().execute(async (trx) => {
      await trx.executeQuery(
        sendWithCommit(CompiledQuery.raw(`insert into ${table} (id, n) values ($1, $2)`, ['b', 2])),
      );
      const { rows } = await trx.executeQuery<{ n: number }>(
        CompiledQuery.raw(`select n from ${table} where id = $1`, ['b']),
      );
      return rows[0]?.n;
    });
    assert.equal(seen, 2);
    assert.equal(sent.length, 3);
    assert.match(sent[0] ?? '', /^begin; insert/);
    assert.equal(sent[2], 'commit');
  });

  it('a failing held write fails the commit and leaves nothing behind', async () => {
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.executeQuery(CompiledQuery.raw(`insert into ${table} (id, n) values ($1, $2)`, ['c', 3]));
        // A duplicate key: the error surfaces from the COMMIT's message.
        await trx.executeQuery(
          sendWithCommit(CompiledQuery.raw(`insert into ${table} (id, n) values ($1, $2)`, ['c', 4])),
        );
      }),
      /duplicate key/,
    );
    const row = await db.selectFrom(table).selectAll().where('id', '=', 'c').executeTakeFirst();
    assert.equal(row, undefined);
    // The connection is usable again: nothing is left open on it.
    await db.transaction().execute((trx) => trx.executeQuery(CompiledQuery.raw('select 1')));
  });

  it('a transaction that ran nothing sends nothing; a rollback before any statement neither', async () => {
    sent.length = 0;
    await db.transaction().execute(async () => {});
    await assert.rejects(
      db.transaction().execute(async () => {
        throw new Error('before any statement');
      }),
      /before any statement/,
    );
    assert.deepEqual(sent, []);
  });

  it('counts affected rows as Kysely expects', async () => {
    const result = await db
      .updateTable(table)
      .set({ n: 10 })
      .where('id', 'in', ['a', 'b'])
      .executeTakeFirst();
    assert.equal(result.numUpdatedRows, 2n);
  });
});
