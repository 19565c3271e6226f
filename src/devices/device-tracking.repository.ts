/**
 * SQL for a device's tracking state: the row lock taken by ingestion and session changes, and the
 * state they write back. Scoped by workspace like every device query.
 */
import type { Selectable } from 'kysely';
import { fromJson, json, toDateOrNull } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import { type StatementRunner, statement, updateFromValues } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type { LastLocation } from './devices.repository.ts';
import type { DevicesTable } from './devices.tables.ts';

type LockedDeviceRow = Pick<
  Selectable<DevicesTable>,
  'id' | 'user_id' | 'last_evaluated_at' | 'inside_geofence_ids' | 'active_session_id'
>;

/**
 * What ingestion and session changes read of a device, under its row lock. Not `last_location`:
 * ingestion replaces it whenever it evaluates a location and leaves the row alone otherwise, so
 * reading (and parsing) it for 1,000 devices a batch would be wasted.
 */
export interface LockedDevice {
  id: string;
  userId: string | null;
  lastEvaluatedAt: Date | null;
  insideGeofenceIds: string[];
  activeSessionId: string | null;
}

/**
 * Reads the devices' tracking state, locking their rows until the transaction ends (`FOR UPDATE`
 * where the dialect has row locks; SQLite's single writer already serialises transactions). Rows
 * are locked in id order, so two batches sharing devices cannot deadlock. Ids of other workspaces
 * (or of no device) are simply absent from the result.
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
  // Hand-built rather than through the query builder: its nodes for 1,000 ids cost more than the
  // query. The workspace is a residual filter (see `residualEquals`): the ids pick the rows.
  const b = statement(capabilities).sql(
    'select id, user_id, last_evaluated_at, inside_geofence_ids, active_session_id from devices where ',
  );
  capabilities.statements.inList(b, 'id', sorted);
  b.sql(" and workspace_id || '' = ").value(workspaceId);
  b.sql(` order by id${capabilities.rowLocks ? ' for update' : ''}`);
  const { rows } = await db.executeQuery(b.compile<LockedDeviceRow>());
  for (const row of rows) {
    out.set(row.id, {
      id: row.id,
      userId: row.user_id,
      lastEvaluatedAt: toDateOrNull(row.last_evaluated_at),
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

/** The evaluation state ingestion writes back (name, metadata etc. are left to their owners). */
export interface DeviceTrackingState {
  id: string;
  lastLocation: LastLocation | null;
  lastSeenAt: Date;
  /** ISO 8601 text of the newest in-order location's time (the text ingestion already has). */
  lastEvaluatedAt: string | null;
  insideGeofenceIds: readonly string[];
}

/** Writes the tracking state of many devices in one statement per chunk. */
export async function saveTrackingStates(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  workspaceId: string,
  states: readonly DeviceTrackingState[],
): Promise<void> {
  await updateFromValues(db, capabilities, {
    table: 'devices',
    key: 'id',
    columns: [
      { name: 'last_location', type: 'json' },
      { name: 'last_seen_at', type: 'timestamp' },
      { name: 'last_evaluated_at', type: 'timestamp' },
      { name: 'inside_geofence_ids', type: 'json' },
    ],
    rows: states.map((s) => [
      s.id,
      s.lastLocation === null ? null : json(s.lastLocation),
      s.lastSeenAt,
      s.lastEvaluatedAt,
      json(s.insideGeofenceIds),
    ]),
    workspaceId,
  });
}
