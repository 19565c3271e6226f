/** SQL for tracking sessions; every query is scoped by workspace. */
import type { Expression, ExpressionBuilder, Selectable, SqlBool } from 'kysely';
import { fromJson, json, toDate, toDateOrNull } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { DatabaseSchema } from '../db/schema.ts';
import { residualEquals, type StatementRunner } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { type SessionStatus, sessionSummaryWrites, type TrackingSessionsTable } from './tracking.tables.ts';

export interface TrackingSession {
  id: string;
  workspaceId: string;
  deviceId: string;
  status: SessionStatus;
  metadata: Record<string, unknown>;
  startedAt: Date;
  endedAt: Date | null;
  locationCount: number;
  distanceM: number;
  durationS: number;
  eventCount: number;
  geofenceIdsVisited: string[];
  lastLng: number | null;
  lastLat: number | null;
  lastRecordedAt: Date | null;
  createdAt: Date;
}

export interface SessionFilters {
  deviceId?: string | undefined;
  status?: SessionStatus | undefined;
}

const COLUMNS = [
  'id',
  'workspace_id',
  'device_id',
  'status',
  'metadata',
  'started_at',
  'ended_at',
  'location_count',
  'distance_m',
  'duration_s',
  'event_count',
  'geofence_ids_visited',
  'last_lng',
  'last_lat',
  'last_recorded_at',
  'created_at',
] as const;

/** A row as read, derived from the table declaration so the two cannot drift apart. */
type SessionRow = Pick<Selectable<TrackingSessionsTable>, (typeof COLUMNS)[number]>;

function toSession(row: SessionRow): TrackingSession {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    deviceId: row.device_id,
    status: row.status,
    metadata: fromJson<Record<string, unknown>>(row.metadata),
    startedAt: toDate(row.started_at),
    endedAt: toDateOrNull(row.ended_at),
    locationCount: Number(row.location_count),
    distanceM: Number(row.distance_m),
    durationS: Number(row.duration_s),
    eventCount: Number(row.event_count),
    geofenceIdsVisited: fromJson<string[]>(row.geofence_ids_visited),
    lastLng: row.last_lng,
    lastLat: row.last_lat,
    lastRecordedAt: toDateOrNull(row.last_recorded_at),
    createdAt: toDate(row.created_at),
  };
}

export async function insertSession(db: Executor, s: TrackingSession): Promise<void> {
  await db
    .insertInto('tracking_sessions')
    .values({
      id: s.id,
      workspace_id: s.workspaceId,
      device_id: s.deviceId,
      status: s.status,
      metadata: json(s.metadata),
      started_at: s.startedAt,
      ended_at: s.endedAt,
      location_count: s.locationCount,
      distance_m: s.distanceM,
      duration_s: s.durationS,
      event_count: s.eventCount,
      geofence_ids_visited: json(s.geofenceIdsVisited),
      last_lng: s.lastLng,
      last_lat: s.lastLat,
      last_recorded_at: s.lastRecordedAt,
      created_at: s.createdAt,
    })
    .execute();
}

export async function findSession(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<TrackingSession | undefined> {
  const row = await db
    .selectFrom('tracking_sessions')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toSession(row) : undefined;
}

/** The sessions among `ids` (the active sessions of a batch's devices), by id. */
export async function sessionsByIds(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, TrackingSession>> {
  const out = new Map<string, TrackingSession>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('tracking_sessions')
    .select(COLUMNS)
    .where('id', 'in', ids)
    .where(residualEquals('workspace_id', workspaceId))
    .execute();
  for (const row of rows) out.set(row.id, toSession(row));
  return out;
}

function filterConditions(
  eb: ExpressionBuilder<DatabaseSchema, 'tracking_sessions'>,
  workspaceId: string,
  filters: SessionFilters,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [eb('workspace_id', '=', workspaceId)];
  if (filters.deviceId !== undefined) conditions.push(eb('device_id', '=', filters.deviceId));
  if (filters.status !== undefined) conditions.push(eb('status', '=', filters.status));
  return eb.and(conditions);
}

export async function listSessions(
  db: Executor,
  workspaceId: string,
  filters: SessionFilters,
  offset: number,
  limit: number,
): Promise<{ sessions: TrackingSession[]; total: number }> {
  const rows = await db
    .selectFrom('tracking_sessions')
    .select(COLUMNS)
    .where((eb) => filterConditions(eb, workspaceId, filters))
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('tracking_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where((eb) => filterConditions(eb, workspaceId, filters))
    .executeTakeFirstOrThrow();
  return { sessions: rows.map(toSession), total: Number(count.n) };
}

/** Marks the session completed; false when it was not active (already stopped). */
export async function completeSession(
  db: Executor,
  workspaceId: string,
  id: string,
  endedAt: Date,
  durationS: number,
): Promise<boolean> {
  const result = await db
    .updateTable('tracking_sessions')
    .set({ status: 'completed', ended_at: endedAt, duration_s: durationS })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Writes the running summaries of many sessions in one statement per chunk. */
export async function saveSummaries(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  workspaceId: string,
  sessions: readonly TrackingSession[],
): Promise<void> {
  await sessionSummaryWrites.updateInWorkspace(db, capabilities, workspaceId, sessions, (s) => ({
    id: s.id,
    location_count: s.locationCount,
    distance_m: s.distanceM,
    duration_s: s.durationS,
    event_count: s.eventCount,
    geofence_ids_visited: json(s.geofenceIdsVisited),
    last_lng: s.lastLng,
    last_lat: s.lastLat,
    last_recorded_at: s.lastRecordedAt,
  }));
}
