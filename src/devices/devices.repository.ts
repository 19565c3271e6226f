/** SQL for devices; every query is scoped by workspace. */
import { type Expression, type ExpressionBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import { fromJson, json, toDate } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { DatabaseSchema } from '../db/schema.ts';
import { statement } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type { DevicesTable } from './devices.tables.ts';
import { lastLocationOf, type NewestLocation, newestLocations } from './last-location.repository.ts';

export interface LastLocation {
  point: { type: 'Point'; coordinates: [number, number] };
  timestamp: string;
  accuracy: number | null;
  /** The location's id: a dwell event's `location_id` (absent in rows written before dwell existed). */
  location_id?: string;
}

export interface Device {
  id: string;
  workspaceId: string;
  name: string;
  externalId: string | null;
  userId: string | null;
  metadata: Record<string, unknown>;
  /** The newest location (its row: last-location.repository.ts), when it has one. */
  lastLocation: LastLocation | null;
  /** When that location arrived. */
  lastSeenAt: Date | null;
  insideGeofenceIds: string[];
  activeSessionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The orders of the device list; a leading `-` is descending. */
export const DEVICE_SORTS = ['-created_at', 'created_at', 'name', '-name'] as const;
export type DeviceSort = (typeof DEVICE_SORTS)[number];

export interface DeviceFilters {
  externalId?: string | undefined;
  /** Case-insensitive substring of the name or the external id. */
  q?: string | undefined;
}

const COLUMNS = [
  'id',
  'workspace_id',
  'name',
  'external_id',
  'user_id',
  'metadata',
  'inside_geofence_ids',
  'active_session_id',
  'created_at',
  'updated_at',
] as const;

/** A row as read, derived from the table declaration so the two cannot drift apart. */
type DeviceRow = Pick<Selectable<DevicesTable>, (typeof COLUMNS)[number]>;

function toDevice(row: DeviceRow, newest: NewestLocation | undefined): Device {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    externalId: row.external_id,
    userId: row.user_id,
    metadata: fromJson<Record<string, unknown>>(row.metadata),
    lastLocation: newest === undefined ? null : lastLocationOf(newest),
    lastSeenAt: newest?.receivedAt ?? null,
    insideGeofenceIds: fromJson<string[]>(row.inside_geofence_ids),
    activeSessionId: row.active_session_id,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export function newDevice(
  id: string,
  workspaceId: string,
  fields: {
    name: string;
    externalId: string | null;
    userId: string | null;
    metadata: Record<string, unknown>;
  },
  now: Date,
): Device {
  return {
    id,
    workspaceId,
    ...fields,
    lastLocation: null,
    lastSeenAt: null,
    insideGeofenceIds: [],
    activeSessionId: null,
    createdAt: now,
    updatedAt: now,
  };
}

function insertValues(d: Device) {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    name: d.name,
    external_id: d.externalId,
    user_id: d.userId,
    metadata: json(d.metadata),
    inside_geofence_ids: json(d.insideGeofenceIds),
    active_session_id: d.activeSessionId,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export async function insertDevice(db: Executor, device: Device): Promise<void> {
  await db.insertInto('devices').values(insertValues(device)).execute();
}

/**
 * Inserts devices whose external id is not taken yet; existing ones are left alone (a concurrent
 * batch may create the same device: both then use the one that won).
 */
export async function insertDevicesIfAbsent(db: Executor, devices: readonly Device[]): Promise<void> {
  if (devices.length === 0) return;
  await db
    .insertInto('devices')
    .values(devices.map(insertValues))
    .onConflict((oc) => oc.columns(['workspace_id', 'external_id']).doNothing())
    .execute();
}

/** Devices from their rows, each with its newest location (one more statement for all of them). */
async function withLastLocations(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  rows: readonly DeviceRow[],
): Promise<Device[]> {
  if (rows.length === 0) return [];
  const newest = await newestLocations(
    db,
    capabilities,
    workspaceId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => toDevice(row, newest.get(row.id)));
}

export async function findDevice(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  id: string,
): Promise<Device | undefined> {
  const row = await db
    .selectFrom('devices')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? (await withLastLocations(db, capabilities, workspaceId, [row]))[0] : undefined;
}

/** Whether the device exists in the workspace (without reading its last location). */
export async function deviceExists(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('devices')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findIdByExternalId(
  db: Executor,
  workspaceId: string,
  externalId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('devices')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  return row?.id;
}

/**
 * external id → device id for those of `externalIds` that exist. Hand-written like `lockDevices`
 * (a batch resolves up to 1,000 external ids: the query builder's nodes for them cost more than
 * the query); the dialect's list form binds them (one JSON parameter on PostgreSQL, see
 * db/statement-forms.ts).
 */
export async function idsByExternalIds(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  externalIds: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (externalIds.length === 0) return out;
  const query = statement(capabilities)
    .sql('select id, external_id from devices where workspace_id = ')
    .value(workspaceId);
  capabilities.statements.inList(query.sql(' and '), 'external_id', externalIds);
  const { rows } = await db.executeQuery(query.compile<{ id: string; external_id: string | null }>());
  for (const row of rows) if (row.external_id !== null) out.set(row.external_id, row.id);
  return out;
}

/** LIKE pattern for a literal substring: `!` escapes the wildcards and itself. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

function filterConditions(
  eb: ExpressionBuilder<DatabaseSchema, 'devices'>,
  workspaceId: string,
  filters: DeviceFilters,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [eb('workspace_id', '=', workspaceId)];
  if (filters.externalId !== undefined) conditions.push(eb('external_id', '=', filters.externalId));
  if (filters.q !== undefined) {
    const pattern = containsPattern(filters.q);
    conditions.push(
      eb.or([
        sql<SqlBool>`lower(${eb.ref('name')}) like ${pattern} escape '!'`,
        sql<SqlBool>`lower(${eb.ref('external_id')}) like ${pattern} escape '!'`,
      ]),
    );
  }
  return eb.and(conditions);
}

export async function listDevices(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  filters: DeviceFilters,
  offset: number,
  limit: number,
  sort: DeviceSort = '-created_at',
): Promise<{ devices: Device[]; total: number }> {
  const direction = sort.startsWith('-') ? 'desc' : 'asc';
  let query = db
    .selectFrom('devices')
    .select(COLUMNS)
    .where((eb) => filterConditions(eb, workspaceId, filters));
  // The id breaks ties, so pages never overlap or skip a device. Names compare case-insensitively;
  // names equal but for case then follow the id (creation order), the same on every database.
  query =
    sort === 'name' || sort === '-name'
      ? query.orderBy(sql`lower(${sql.ref('name')})`, direction).orderBy('id', direction)
      : query.orderBy('created_at', direction).orderBy('id', direction);
  const rows = await query.offset(offset).limit(limit).execute();
  const count = await db
    .selectFrom('devices')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where((eb) => filterConditions(eb, workspaceId, filters))
    .executeTakeFirstOrThrow();
  return { devices: await withLastLocations(db, capabilities, workspaceId, rows), total: Number(count.n) };
}

export interface DeviceChanges {
  name?: string | undefined;
  externalId?: string | null | undefined;
  userId?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Applies the given fields only; the device as it is now, or undefined when absent. */
export async function updateDevice(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  id: string,
  changes: DeviceChanges,
  now: Date,
): Promise<Device | undefined> {
  const row = await db
    .updateTable('devices')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.externalId !== undefined ? { external_id: changes.externalId } : {}),
      ...(changes.userId !== undefined ? { user_id: changes.userId } : {}),
      ...(changes.metadata !== undefined ? { metadata: json(changes.metadata) } : {}),
      updated_at: now,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? (await withLastLocations(db, capabilities, workspaceId, [row]))[0] : undefined;
}

export async function deleteDevice(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('devices')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
