/**
 * SQLite keeps statement journals in memory (sqlite-driver.ts, ADR 008 "Storage settings"): a
 * multi-row statement that fails half-way inside a transaction must still undo exactly itself,
 * also when the pages it changed are far more than the 64 KiB a journal held in memory before
 * spilling to a file. Runs on a file database, as the server opens one (also under the PostgreSQL
 * test run: the setting is SQLite's own).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { withTransaction } from '../../src/db/transaction.ts';

let dir: string;
let handle: DatabaseHandle;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statement-journal-'));
  handle = openDatabase({ kind: 'sqlite', path: path.join(dir, 'journal.db') });
  await sql`create table items (id integer primary key, body text not null)`.execute(handle.db);
  await sql`create index items_body_idx on items (body)`.execute(handle.db);
});
after(async () => {
  await handle.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the connection keeps temporary data, statement journals included, in memory', async () => {
  const { rows } = await sql<{ temp_store: number }>`pragma temp_store`.execute(handle.db);
  assert.equal(rows[0]?.temp_store, 2);
});

test('a multi-row insert failing half-way undoes only itself, however many pages it changed', async () => {
  // 2,000 rows of 1 KiB each: some 500 pages of table and index, far past 64 KiB.
  const body = (i: number) => `${String(i).padStart(6, '0')}${'x'.repeat(1018)}`;
  const rows = (from: number, count: number) =>
    Array.from({ length: count }, (_, k) => sql`(${from + k}, ${body(from + k)})`);
  await withTransaction(handle.db, async (trx) => {
    await sql`insert into items (id, body) values ${sql.join(rows(1, 100))}`.execute(trx);
    // Rows 101..1100 are new; row 1 repeats a primary key and fails the statement at its end.
    const failing = [...rows(101, 1000), ...rows(1, 1)];
    await assert.rejects(
      sql`insert into items (id, body) values ${sql.join(failing)}`.execute(trx),
      /UNIQUE/,
    );
    await sql`insert into items (id, body) values ${sql.join(rows(2001, 1000))}`.execute(trx);
  });
  const { rows: counted } = await sql<{ n: number; low: number; high: number }>`
    select count(*) as n, sum(id <= 100) as low, sum(id > 2000) as high from items`.execute(handle.db);
  assert.deepEqual({ ...counted[0] }, { n: 1100, low: 100, high: 1000 });
  const { rows: check } = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(handle.db);
  assert.equal(check[0]?.integrity_check, 'ok');
});
