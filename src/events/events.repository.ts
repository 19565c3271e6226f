/** SQL for geofence events and their outbox rows; every query is scoped by workspace. */
import type { Expression, ExpressionBuilder, Selectable, SqlBool } from 'kysely';
import type { RowOf } from '../db/bulk-table.ts';
import { fromJson, json, toDate } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { DatabaseSchema } from '../db/schema.ts';
import { chunks, residualEquals, type StatementRunner } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { uuidv7 } from '../shared/ids.ts';
import { type EventType, eventWrites, type GeofenceEventsTable, outboxWrites } from './events.tables.ts';

export interface GeofenceEvent {
  id: string;
  workspaceId: string;
  eventId: string;
  eventType: EventType;
  deviceId: string;
  userId: string;
  geofenceId: string;
  geofenceName: string;
  lng: number;
  lat: number;
  locationId: string;
  sessionId: string | null;
  occurredAt: Date;
  createdAt: Date;
  metadata: { geofence_metadata: Record<string, unknown>; event_metadata: Record<string, unknown> };
}

export interface EventFilters {
  deviceId?: string | undefined;
  geofenceId?: string | undefined;
  eventType?: EventType | undefined;
  /** Inclusive bounds on `occurred_at`. */
  from?: Date | undefined;
  to?: Date | undefined;
}

const COLUMNS = [
  'id',
  'workspace_id',
  'event_id',
  'event_type',
  'device_id',
  'user_id',
  'geofence_id',
  'geofence_name',
  'lng',
  'lat',
  'location_id',
  'session_id',
  'occurred_at',
  'created_at',
  'metadata',
] as const;

/** A row as read, derived from the table declaration so the two cannot drift apart. */
type EventRow = Pick<Selectable<GeofenceEventsTable>, (typeof COLUMNS)[number]>;

function toEvent(row: EventRow): GeofenceEvent {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    eventId: row.event_id,
    eventType: row.event_type,
    deviceId: row.device_id,
    userId: row.user_id,
    geofenceId: row.geofence_id,
    geofenceName: row.geofence_name,
    lng: row.lng,
    lat: row.lat,
    locationId: row.location_id,
    sessionId: row.session_id,
    occurredAt: toDate(row.occurred_at),
    createdAt: toDate(row.created_at),
    metadata: fromJson<GeofenceEvent['metadata']>(row.metadata),
  };
}

/** An event's row (`eventWrites`). */
function eventRow(e: GeofenceEvent): RowOf<typeof eventWrites> {
  return {
    id: e.id,
    workspace_id: e.workspaceId,
    event_id: e.eventId,
    event_type: e.eventType,
    device_id: e.deviceId,
    user_id: e.userId,
    geofence_id: e.geofenceId,
    geofence_name: e.geofenceName,
    lng: e.lng,
    lat: e.lat,
    location_id: e.locationId,
    session_id: e.sessionId,
    occurred_at: e.occurredAt,
    created_at: e.createdAt,
    metadata: json(e.metadata),
  };
}

/**
 * Inserts the events and one outbox row each (ADR 008). Callers run this inside the transaction
 * that stores the locations, so an event never exists without its outbox row. `dispatchedAt` is
 * null for rows the dispatcher must fan out, or the time the caller found the workspace without a
 * subscriber: such rows are dispatched already, to nobody (ADR 010, "Dispatch").
 */
export async function insertEventsWithOutbox(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  events: readonly GeofenceEvent[],
  dispatchedAt: Date | null,
): Promise<void> {
  if (events.length === 0) return;
  await eventWrites.insert(db, capabilities, events, eventRow);
  await outboxWrites.insert(db, capabilities, events, (e) => ({
    id: uuidv7(),
    workspace_id: e.workspaceId,
    event_row_id: e.id,
    created_at: e.createdAt,
    dispatched_at: dispatchedAt,
  }));
}

export async function findEvent(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<GeofenceEvent | undefined> {
  const row = await db
    .selectFrom('geofence_events')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toEvent(row) : undefined;
}

/**
 * Events by row id across workspaces, keyed by id: the outbox dispatcher's read, whose ids come
 * from outbox rows that already carry their workspace.
 */
export async function findEventsByIds(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, GeofenceEvent>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('geofence_events')
    .select(COLUMNS)
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, toEvent(row)]));
}

function filterConditions(
  eb: ExpressionBuilder<DatabaseSchema, 'geofence_events'>,
  workspaceId: string,
  filters: EventFilters,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [eb('workspace_id', '=', workspaceId)];
  if (filters.deviceId !== undefined) conditions.push(eb('device_id', '=', filters.deviceId));
  if (filters.geofenceId !== undefined) conditions.push(eb('geofence_id', '=', filters.geofenceId));
  if (filters.eventType !== undefined) conditions.push(eb('event_type', '=', filters.eventType));
  if (filters.from !== undefined) conditions.push(eb('occurred_at', '>=', filters.from));
  if (filters.to !== undefined) conditions.push(eb('occurred_at', '<=', filters.to));
  return eb.and(conditions);
}

/**
 * A page of events, newest first. Events of one location share `occurred_at`; the row id (UUIDv7,
 * monotonic in insertion order) breaks the tie so the page is the exact reverse of processing order.
 */
export async function listEvents(
  db: Executor,
  workspaceId: string,
  filters: EventFilters,
  offset: number,
  limit: number,
): Promise<{ events: GeofenceEvent[]; total: number }> {
  const rows = await db
    .selectFrom('geofence_events')
    .select(COLUMNS)
    .where((eb) => filterConditions(eb, workspaceId, filters))
    .orderBy('occurred_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('geofence_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where((eb) => filterConditions(eb, workspaceId, filters))
    .executeTakeFirstOrThrow();
  return { events: rows.map(toEvent), total: Number(count.n) };
}

/** What an event copies from its geofence. */
export interface EventGeofence {
  name: string;
  metadata: Record<string, unknown>;
}

const IN_CHUNK = 500;

/**
 * Name and metadata of those of `ids` that are enabled geofences of the workspace now. The index
 * proposes transitions; the database is the truth for whether the geofence still exists (a delete
 * on another node reaches this node's index only within its check interval). Reads the geofences
 * table, which belongs to the geofences module, because events freeze a copy of these two fields.
 */
export async function loadEventGeofences(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, EventGeofence>> {
  const out = new Map<string, EventGeofence>();
  for (const part of chunks(ids, IN_CHUNK)) {
    const rows = await db
      .selectFrom('geofences')
      .select(['id', 'name', 'metadata'])
      .where('id', 'in', part)
      .where(residualEquals('workspace_id', workspaceId))
      .where('enabled', '=', true)
      .execute();
    for (const row of rows) {
      out.set(row.id, { name: row.name, metadata: fromJson<Record<string, unknown>>(row.metadata) });
    }
  }
  return out;
}
