/**
 * The merge of the staged history (ADR 008, "The staged history"): moves the oldest staged
 * locations into `locations`, in device order, so each device's leaf of the per-device history
 * index is written once per merge instead of once per commit.
 *
 * One call moves at most `maxRows` rows, atomically: their insertion into `locations` and their
 * deletion from `locations_staged` commit together or not at all, so a crash during a merge loses
 * and duplicates nothing, and the next merge simply takes the same rows again. Rows whose device no
 * longer exists are dropped instead of moved (the device's deletion removed its merged rows).
 */
import { sql } from 'kysely';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';

const COLUMNS =
  'id, workspace_id, device_id, session_id, lng, lat, accuracy, speed, heading, altitude, metadata, recorded_at, received_at, out_of_order';

/** Moves up to `maxRows` of the oldest staged rows; returns how many left the staged table. */
export function mergeStagedChunk(
  db: Db,
  capabilities: DialectCapabilities,
  maxRows: number,
): Promise<number> {
  return capabilities.skipLocked ? mergeLockingRows(db, maxRows) : mergeUnderWriteLock(db, maxRows);
}

/**
 * PostgreSQL: one statement, so one transaction. The rows are claimed with `SKIP LOCKED`: two nodes
 * merging at once take different rows, never the same ones twice.
 */
async function mergeLockingRows(db: Db, maxRows: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with moved as (
      delete from locations_staged where seq in (
        select seq from locations_staged order by seq limit ${maxRows} for update skip locked
      )
      returning seq, ${sql.raw(COLUMNS)}
    ), merged as (
      insert into locations (${sql.raw(COLUMNS)})
      select ${sql.raw(COLUMNS)} from moved m
      where exists (select 1 from devices d where d.id = m.device_id)
      order by m.device_id, m.recorded_at, m.seq
    )
    select count(*)::int as n from moved`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * SQLite: its one writer serialises merges (also of two processes on one file), so the rows are
 * bounded by their sequence, read inside the write transaction.
 */
function mergeUnderWriteLock(db: Db, maxRows: number): Promise<number> {
  return withTransaction(db, async (trx) => {
    const { rows } = await sql<{ bound: number | null; n: number }>`
      select max(seq) as bound, count(*) as n
      from (select seq from locations_staged order by seq limit ${maxRows})`.execute(trx);
    const bound = rows[0]?.bound;
    if (bound === null || bound === undefined) return 0;
    await sql`
      insert into locations (${sql.raw(COLUMNS)})
      select ${sql.raw(COLUMNS)} from locations_staged s
      where s.seq <= ${bound} and exists (select 1 from devices d where d.id = s.device_id)
      order by s.device_id, s.recorded_at, s.seq`.execute(trx);
    await sql`delete from locations_staged where seq <= ${bound}`.execute(trx);
    return Number(rows[0]?.n ?? 0);
  });
}

/** How many locations are staged (for the merge's metrics and tests). */
export async function stagedCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom('locations_staged')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
