/** SQL for stored locations; every query is scoped by workspace. */
import { type Expression, type ExpressionBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import type { RowOf } from '../db/bulk-table.ts';
import { fromJson, json, toBool, toDate, toIso } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { DatabaseSchema } from '../db/schema.ts';
import { residualEquals, type StatementRunner } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { type LocationsTable, locationWrites, stagedLocationWrites } from './locations.tables.ts';

export interface StoredLocation {
  id: string;
  workspaceId: string;
  deviceId: string;
  sessionId: string | null;
  lng: number;
  lat: number;
  accuracy: number | null;
  speed: number | null;
  heading: number | null;
  altitude: number | null;
  metadata: Record<string, unknown>;
  recordedAt: Date;
  /** `recordedAt` as ISO 8601 text (what is stored and answered). */
  recordedAtIso: string;
  receivedAt: Date;
  outOfOrder: boolean;
}

export interface LocationFilters {
  deviceId?: string | undefined;
  sessionId?: string | undefined;
  /** Inclusive bounds on the location's timestamp. */
  from?: Date | undefined;
  to?: Date | undefined;
}

const COLUMNS = [
  'id',
  'workspace_id',
  'device_id',
  'session_id',
  'lng',
  'lat',
  'accuracy',
  'speed',
  'heading',
  'altitude',
  'metadata',
  'recorded_at',
  'received_at',
  'out_of_order',
] as const;

/** A row as read, derived from the table declaration so the two cannot drift apart. */
type LocationRow = Pick<Selectable<LocationsTable>, (typeof COLUMNS)[number]>;

function toLocation(row: LocationRow): StoredLocation {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    deviceId: row.device_id,
    sessionId: row.session_id,
    lng: row.lng,
    lat: row.lat,
    accuracy: row.accuracy,
    speed: row.speed,
    heading: row.heading,
    altitude: row.altitude,
    metadata: fromJson<Record<string, unknown>>(row.metadata),
    recordedAt: toDate(row.recorded_at),
    // SQLite keeps the ISO text it was given; PostgreSQL answers a Date.
    recordedAtIso: toIso(row.recorded_at),
    receivedAt: toDate(row.received_at),
    outOfOrder: toBool(row.out_of_order),
  };
}

/** A location's row (`locationWrites`): its timestamp as the ISO text it came as. */
function locationRow(l: StoredLocation): RowOf<typeof locationWrites> {
  return {
    id: l.id,
    workspace_id: l.workspaceId,
    device_id: l.deviceId,
    session_id: l.sessionId,
    lng: l.lng,
    lat: l.lat,
    accuracy: l.accuracy,
    speed: l.speed,
    heading: l.heading,
    altitude: l.altitude,
    metadata: json(l.metadata),
    recorded_at: l.recordedAtIso,
    received_at: l.receivedAt,
    out_of_order: l.outOfOrder,
  };
}

/**
 * Inserts the locations in one statement (per chunk on SQLite): the ingestion hot path. `staged`:
 * appended to the staged history, for the merge to move (ADR 008, "The staged history").
 */
export async function insertLocations(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  locations: readonly StoredLocation[],
  staged: boolean,
): Promise<void> {
  await (staged ? stagedLocationWrites : locationWrites).insert(db, capabilities, locations, locationRow);
}

/**
 * The WHERE of a history query. A device's or a session's locations all carry its workspace, and
 * both callers first find that device or session in the workspace (404 otherwise), so with either
 * filter the workspace needs no test of its own. Testing it anyway would lead SQLite through the
 * (workspace_id, received_at) index, which would count a device's history over every location of
 * the workspace, and keeps PostgreSQL from an index-only count (ADR 008, "Storage settings";
 * history-query-plans.test.ts checks the plans). Column names only: it serves both tables.
 */
function filterConditions(
  eb: ExpressionBuilder<DatabaseSchema, 'locations'>,
  workspaceId: string,
  filters: LocationFilters,
): Expression<SqlBool> {
  const ownerChecked = filters.deviceId !== undefined || filters.sessionId !== undefined;
  const conditions: Expression<SqlBool>[] = ownerChecked ? [] : [eb('workspace_id', '=', workspaceId)];
  if (filters.deviceId !== undefined) conditions.push(eb('device_id', '=', filters.deviceId));
  if (filters.sessionId !== undefined) conditions.push(eb('session_id', '=', filters.sessionId));
  if (filters.from !== undefined) conditions.push(eb('recorded_at', '>=', filters.from));
  if (filters.to !== undefined) conditions.push(eb('recorded_at', '<=', filters.to));
  return eb.and(conditions);
}

type HistoryWhere = (eb: ExpressionBuilder<DatabaseSchema, 'locations'>) => Expression<SqlBool>;

/**
 * The history's two tables as one (ADR 008, "The staged history"): the merged rows, in
 * `locations` with the per-device index, and the staged ones, appended in arrival order and moved
 * there every few seconds by the merge (history-merge.ts). Every history reader reads through
 * here, in ONE statement: a statement sees one snapshot, so a merge committing meanwhile can
 * neither hide a row nor show it twice (two statements could see it in neither table or in both).
 * `where` names columns only, so the same condition serves both tables; each is selected with it.
 */
function historyArms(db: Executor, where: HistoryWhere) {
  const merged = db.selectFrom('locations').where(where);
  // The staged table has the same columns (and `seq`, which no reader selects): the condition and
  // any selection read the same there, so it is typed as the merged one.
  const staged = db.selectFrom('locations_staged').where(where as never) as unknown as typeof merged;
  return { merged, staged };
}

/**
 * A page of locations, newest (by their timestamp) first, and the total matching. With a device or
 * session filter, the caller has found that device or session in `workspaceId` (see above).
 * Each table gives its first `offset + limit` rows in the page's order (the merged ones through
 * the per-device or per-session index), and the page is cut from the two.
 */
export async function listLocations(
  db: Executor,
  workspaceId: string,
  filters: LocationFilters,
  offset: number,
  limit: number,
): Promise<{ locations: StoredLocation[]; total: number }> {
  const where: HistoryWhere = (eb) => filterConditions(eb, workspaceId, filters);
  const { merged, staged } = historyArms(db, where);
  const end = offset + limit;
  const firstOf = (q: typeof merged) =>
    q.select(COLUMNS).orderBy('recorded_at', 'desc').orderBy('id', 'desc').limit(end);
  const rows = await db
    .selectFrom(
      db
        .selectFrom(firstOf(merged).as('m'))
        .selectAll()
        .unionAll(db.selectFrom(firstOf(staged).as('s')).selectAll())
        .as('h'),
    )
    .selectAll()
    .orderBy('recorded_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  // A merge moves rows between the tables without changing their sum, so the total may come from
  // a statement of its own.
  const count = await db
    .selectNoFrom((eb) => [
      eb(
        merged.select((c) => c.fn.countAll<number>().as('n')),
        '+',
        staged.select((c) => c.fn.countAll<number>().as('n')),
      ).as('n'),
    ])
    .executeTakeFirstOrThrow();
  return { locations: rows.map(toLocation), total: Number(count.n) };
}

/**
 * The fixes already stored among `fixes` (device and timestamp; a device is not at two places at
 * one moment), for a tracker's batch sent again (ADR 021). One read over the per-device history
 * index and the staged rows, between the batch's first and last times.
 */
export async function storedFixes(
  db: Executor,
  workspaceId: string,
  fixes: ReadonlyArray<{ deviceId: string; recordedAt: Date }>,
): Promise<Set<string>> {
  if (fixes.length === 0) return new Set();
  const times = fixes.map((f) => f.recordedAt.getTime());
  // A second either side: a timestamp stored as text in another form still falls inside.
  const from = new Date(Math.min(...times) - 1000);
  const to = new Date(Math.max(...times) + 1000);
  const deviceIds = [...new Set(fixes.map((f) => f.deviceId))];
  const { merged, staged } = historyArms(db, (eb) =>
    eb.and([
      // A residual filter: the per-device history index must be the one used, not the workspace's.
      residualEquals('workspace_id', workspaceId),
      eb('device_id', 'in', deviceIds),
      eb('recorded_at', '>=', from),
      eb('recorded_at', '<=', to),
    ]),
  );
  const rows = await merged
    .select(['device_id', 'recorded_at'])
    .unionAll(staged.select(['device_id', 'recorded_at']))
    .execute();
  return new Set(rows.map((r) => fixKey(r.device_id, toDate(r.recorded_at))));
}

export function fixKey(deviceId: string, recordedAt: Date): string {
  return `${deviceId} ${recordedAt.getTime()}`;
}

/** Every workspace that has stored locations could hold old ones; retention walks them one by one. */
export async function workspaceIdsWithDevices(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('devices').select('workspace_id').distinct().execute();
  return rows.map((r) => r.workspace_id);
}

/**
 * A row `l` (of either history table) older than its device's newest location: retention may delete
 * it. The newest one and any other of its time are kept, whichever way ties are read.
 */
const olderThanDevicesNewest = sql<SqlBool>`l.recorded_at < (
  select newest.recorded_at from device_last_locations newest where newest.device_id = l.device_id)`;

/**
 * Deletes up to `limit` of the workspace's locations received before `cutoff` (through the
 * (workspace_id, received_at) index) and returns how many went; then as many of its staged ones
 * (rarely any: they are merged within seconds). Bounded so that one call never holds the write
 * lock for long. A device's newest location is never deleted, however old: it is the device's
 * last location (devices/last-location.repository.ts). Locations of the same time stay with it.
 */
export async function deleteLocationsReceivedBefore(
  db: Executor,
  workspaceId: string,
  cutoff: Date,
  limit: number,
): Promise<number> {
  const merged = await db
    .deleteFrom('locations')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('locations as l')
        .select('l.id')
        .where('l.workspace_id', '=', workspaceId)
        .where('l.received_at', '<', cutoff)
        // A row of no device at all goes too (a merge on PostgreSQL racing its device's deletion
        // can leave one).
        .where((w) =>
          w.or([
            olderThanDevicesNewest,
            w.not(w.exists(w.selectFrom('devices as d').select('d.id').whereRef('d.id', '=', 'l.device_id'))),
          ]),
        )
        .limit(limit),
    )
    .executeTakeFirst();
  const deleted = Number(merged.numDeletedRows);
  if (deleted >= limit) return deleted;
  const staged = await db
    .deleteFrom('locations_staged')
    .where('seq', 'in', (eb) =>
      eb
        .selectFrom('locations_staged as l')
        .select('l.seq')
        .where('l.workspace_id', '=', workspaceId)
        .where('l.received_at', '<', cutoff)
        .where(olderThanDevicesNewest)
        .limit(limit - deleted),
    )
    .executeTakeFirst();
  return deleted + Number(staged.numDeletedRows);
}
