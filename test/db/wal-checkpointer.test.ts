import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WalCheckpointer } from '../../src/db/wal-checkpointer.ts';

/** Polls `check` every 10 ms until it holds (or fails after `ms`). */
async function eventually(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await sleep(10);
  }
}

/**
 * A WAL database in a fresh folder whose writer never checkpoints (only the thread does) and never
 * waits for a lock, with a table `t`.
 */
function walDatabase(columns: string): { dir: string; file: string; writer: DatabaseSync } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wal-checkpointer-'));
  const file = path.join(dir, 'db.sqlite');
  const writer = new DatabaseSync(file);
  writer.exec('PRAGMA journal_mode = WAL');
  writer.exec('PRAGMA wal_autocheckpoint = 0');
  writer.exec('PRAGMA busy_timeout = 0');
  writer.exec(`create table t (${columns})`);
  return { dir, file, writer };
}

/** Rows of `t` in a copy of the database file alone, without its WAL. */
function rowsInDatabaseFile(dir: string, file: string): number {
  const copy = path.join(dir, 'copy.sqlite');
  fs.copyFileSync(file, copy);
  const reader = new DatabaseSync(copy, { readOnly: true });
  const n = (reader.prepare('select count(*) as n from t').get() as { n: number }).n;
  reader.close();
  return n;
}

describe('WAL checkpoint thread', () => {
  it('copies committed frames into the database file without ever blocking the writer', async () => {
    const { dir, file, writer } = walDatabase('id integer primary key, body text not null');
    const insert = writer.prepare('insert into t (body) values (?)');

    const checkpointer = new WalCheckpointer({ path: file, intervalMs: 5 });
    try {
      // 300 commits while the thread runs: none may fail with SQLITE_BUSY.
      for (let i = 0; i < 300; i++) {
        writer.exec('begin immediate');
        for (let j = 0; j < 20; j++) insert.run('x'.repeat(200));
        writer.exec('commit');
        if (i % 50 === 0) await sleep(2);
      }
      // Every frame copied: the database file alone holds every row.
      // The thread checkpoints on its own...
      await eventually(() => checkpointer.reports > 0 && checkpointer.last.checkpointed > 0);
      // ...and a run after the last commit copies every frame left.
      const report = await checkpointer.checkpointNow();
      assert.ok(report.log > 0);
      assert.equal(report.checkpointed, report.log);
      assert.equal(rowsInDatabaseFile(dir, file), 6000);
    } finally {
      await checkpointer.close();
      writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('close() ends the thread after a last checkpoint', async () => {
    const { dir, file, writer } = walDatabase('id integer primary key');
    // A long interval: only the final checkpoint of close() can copy this row.
    const checkpointer = new WalCheckpointer({ path: file, intervalMs: 60_000 });
    writer.exec('insert into t default values');
    await checkpointer.close();
    assert.equal(rowsInDatabaseFile(dir, file), 1);
    writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
