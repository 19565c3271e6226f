/**
 * SQL for a device's tracking state: the row lock taken by ingestion and session changes, and the
 * state they write back. Scoped by workspace like every device query.
 */
import type { Selectable } from 'kysely';
import { fromJson, json, toDateOrNull } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import { type StatementRunner, statement } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type { LastLocation } from './devices.repository.ts';
import { type DevicesTable, insideSetWrites } from './devices.tables.ts';
import { newestLocations } from './last-location.repository.ts';

type LockedDeviceRow = Pick<
  Selectable<DevicesTable>,
  'id' | 'user_id' | 'inside_geofence_ids' | 'active_session_id'
> & { last_at?: Date | string | null };

/** What ingestion and session changes read of a device, under its row lock. */
export interface LockedDevice {
  id: string;
  userId: string | null;
  /** The newest evaluated location's time (its `device_last_locations` row). */
  lastEvaluatedAt: Date | null;
  /**
   * The id of its newest location where ties on the time are read by id (PostgreSQL), which its
   * next in-order location's id must exceed; null where they are read by rowid (SQLite: its one
   * writer inserts in the order applied) or where it has none.
   */
  newestId: string | null;
  insideGeofenceIds: string[];
  activeSessionId: string | null;
}

/** The devices' newest location time, from their narrow newest-location rows (migration 0020). */
const LAST_AT = '(select recorded_at from device_last_locations where device_id = devices.id) as last_at';

/**
 * Reads the devices' tracking state, locking their rows until the transaction ends (`FOR UPDATE`
 * where the dialect has row locks; SQLite's single writer already serialises transactions). Rows
 * are locked in id order, so two batches sharing devices cannot deadlock. Ids of other workspaces
 * (or of no device) are simply absent from the result.
 *
 * With row locks, the newest locations are read by a second statement, once the locks are held:
 * in PostgreSQL's read committed, a statement that waited for a row lock re-reads the locked row
 * but sees other tables as they were when it started, so a subquery in the locking statement would
 * miss the newest location the transaction it waited for wrote (`concurrency.test.ts`). SQLite, which runs
 * one writer at a time, reads them in the same statement.
 */
export async function lockDevices(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, LockedDevice>> {
  const out = new Map<string, LockedDevice>();
  if (ids.length === 0) return out;
  const sorted = [...ids].sort();
  const locking = capabilities.rowLocks;
  // Hand-built rather than through the query builder: its nodes for 1,000 ids cost more than the
  // query. The workspace is a residual filter (see `residualEquals`): the ids pick the rows.
  const b = statement(capabilities).sql(
    `select id, user_id, inside_geofence_ids, active_session_id${locking ? '' : `, ${LAST_AT}`} from devices where `,
  );
  capabilities.statements.inList(b, 'id', sorted);
  b.sql(" and workspace_id || '' = ").value(workspaceId);
  b.sql(` order by id${locking ? ' for update' : ''}`);
  const { rows } = await db.executeQuery(b.compile<LockedDeviceRow>());
  if (rows.length === 0) return out;
  const newest = locking
    ? await newestLocations(
        db,
        capabilities,
        workspaceId,
        rows.map((r) => r.id),
      )
    : undefined;
  for (const row of rows) {
    const n = newest?.get(row.id);
    out.set(row.id, {
      id: row.id,
      userId: row.user_id,
      lastEvaluatedAt: n ? n.recordedAt : toDateOrNull(row.last_at),
      newestId: n?.id ?? null,
      insideGeofenceIds: fromJson<string[]>(row.inside_geofence_ids),
      activeSessionId: row.active_session_id,
    });
  }
  return out;
}

export async function setActiveSession(
  db: Executor,
  workspaceId: string,
  deviceId: string,
  sessionId: string | null,
): Promise<void> {
  await db
    .updateTable('devices')
    .set({ active_session_id: sessionId })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', deviceId)
    .execute();
}

/**
 * A device's state after an ingestion: what the live stream shows of it. A changed inside-set is
 * written to the device (`saveInsideSets`); the newest location to its narrow row
 * (`saveNewestLocations`); the device row is not touched otherwise.
 */
export interface DeviceTrackingState {
  id: string;
  lastLocation: LastLocation | null;
  lastSeenAt: Date;
  /** ISO 8601 text of the newest in-order location's time (the text ingestion already has). */
  lastEvaluatedAt: string | null;
  insideGeofenceIds: readonly string[];
}

/**
 * Writes the inside-sets of devices whose set changed, one statement per chunk. The device row is
 * not touched otherwise: its last location, last seen and last evaluated times are its
 * `device_last_locations` row (last-location.repository.ts).
 */
export async function saveInsideSets(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  workspaceId: string,
  sets: ReadonlyArray<{ id: string; insideGeofenceIds: readonly string[] }>,
): Promise<void> {
  await insideSetWrites.updateInWorkspace(db, capabilities, workspaceId, sets, (s) => ({
    id: s.id,
    inside_geofence_ids: json(s.insideGeofenceIds),
  }));
}
