/** SQL for geofences and their index change counter; every query is scoped by workspace. */
import { type Expression, type ExpressionBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import { fromJson, json, toBool, toDate } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { DatabaseSchema } from '../db/schema.ts';
import {
  type BulkColumnType,
  chunks,
  quote,
  residualEquals,
  type StatementRunner,
  statement,
} from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type { Bbox, FenceGeometry } from '../geo/index.ts';
import { type GeofencesTable, geofenceReplacements, geofenceWrites } from './geofences.tables.ts';
import type { FenceRules, RuledEntry } from './workspace-fences.ts';

export interface Geofence {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  externalId: string | null;
  geometry: FenceGeometry;
  metadata: Record<string, unknown>;
  enabled: boolean;
  bbox: Bbox;
  vertexCount: number;
  version: number;
  /** Contract §4.5; each null = off. */
  rules: FenceRules;
  createdAt: Date;
  updatedAt: Date;
}

export interface GeofenceFilters {
  enabled?: boolean | undefined;
  externalId?: string | undefined;
  /** Case-insensitive substring of the name. */
  nameContains?: string | undefined;
}

// Bound parameters per IN list: far below SQLite's and PostgreSQL's limits.
const IN_CHUNK = 500;

const COLUMNS = [
  'id',
  'workspace_id',
  'name',
  'description',
  'external_id',
  'geometry',
  'metadata',
  'enabled',
  'bbox',
  'vertex_count',
  'version',
  'dwell_seconds',
  'exit_buffer_m',
  'max_accuracy_m',
  'created_at',
  'updated_at',
] as const;

/** A row as read, derived from the table declaration so the two cannot drift apart. */
type GeofenceRow = Pick<Selectable<GeofencesTable>, (typeof COLUMNS)[number]>;

function rulesOf(row: {
  dwell_seconds: number | null;
  exit_buffer_m: number | null;
  max_accuracy_m: number | null;
}): FenceRules {
  return {
    dwellSeconds: row.dwell_seconds === null ? null : Number(row.dwell_seconds),
    exitBufferM: row.exit_buffer_m === null ? null : Number(row.exit_buffer_m),
    maxAccuracyM: row.max_accuracy_m === null ? null : Number(row.max_accuracy_m),
  };
}

function toGeofence(row: GeofenceRow): Geofence {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    description: row.description,
    externalId: row.external_id,
    geometry: fromJson<FenceGeometry>(row.geometry),
    metadata: fromJson<Record<string, unknown>>(row.metadata),
    enabled: toBool(row.enabled),
    bbox: fromJson<Bbox>(row.bbox),
    vertexCount: Number(row.vertex_count),
    version: Number(row.version),
    rules: rulesOf(row),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** A geofence's row: for Kysely, `geofenceWrites` and `geofenceReplacements` alike. */
function rowOf(g: Geofence) {
  return {
    id: g.id,
    workspace_id: g.workspaceId,
    name: g.name,
    description: g.description,
    external_id: g.externalId,
    geometry: json(g.geometry),
    metadata: json(g.metadata),
    enabled: g.enabled,
    bbox: json(g.bbox),
    vertex_count: g.vertexCount,
    version: g.version,
    dwell_seconds: g.rules.dwellSeconds,
    exit_buffer_m: g.rules.exitBufferM,
    max_accuracy_m: g.rules.maxAccuracyM,
    created_at: g.createdAt,
    updated_at: g.updatedAt,
  };
}

export async function insertGeofence(db: Executor, g: Geofence): Promise<void> {
  await db.insertInto('geofences').values(rowOf(g)).execute();
}

/**
 * Inserts many geofences (a batch) with the many-row statement of db/statements.ts: on PostgreSQL
 * one parameter for all rows, so 1,000 geofences are not a 16,000-parameter statement to parse.
 */
export async function insertGeofences(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  geofences: readonly Geofence[],
): Promise<void> {
  await geofenceWrites.insert(db, capabilities, geofences, rowOf);
}

/**
 * Replaces every field of the workspace's geofences `replacements` name by id (all but
 * `external_id`, `created_at` and the row version, which goes up by one), in one statement per
 * chunk; returns the rows as they are now, in no particular order. A geofence that no longer exists
 * is missing from the answer.
 */
export async function replaceGeofences(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  workspaceId: string,
  replacements: readonly Geofence[],
): Promise<Geofence[]> {
  const forms = capabilities.statements;
  const table = quote('geofences');
  const replaced = geofenceReplacements.columns;
  const types: BulkColumnType[] = ['text', ...replaced.map((c) => c.type)];
  const assignments = [
    ...replaced.map((c, i) => `${quote(c.name)} = v.column${i + 2}`),
    `${quote('version')} = ${table}.${quote('version')} + 1`,
  ].join(', ');
  const returning = COLUMNS.map((c) => `${table}.${quote(c)}`).join(', ');
  const out: Geofence[] = [];
  for (const part of chunks(replacements, forms.maxRows(types.length, 1))) {
    const b = statement(capabilities).sql(`update ${table} set ${assignments} from `);
    forms.updateSource(b, types, geofenceReplacements.valuesOf(part, rowOf));
    // The id picks the rows; the workspace is a residual check (as db/statements.ts guards do).
    b.sql(` where ${table}.${quote('id')} = v.column1 and ${table}.${quote('workspace_id')} || '' = `)
      .value(workspaceId)
      .sql(` returning ${returning}`);
    const result = await db.executeQuery<GeofenceRow>(b.compile());
    for (const row of result.rows) out.push(toGeofence(row));
  }
  return out;
}

export async function findGeofence(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<Geofence | undefined> {
  const row = await db
    .selectFrom('geofences')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toGeofence(row) : undefined;
}

/** The id of the workspace's geofence carrying `externalId`, if any. */
export async function findIdByExternalId(
  db: Executor,
  workspaceId: string,
  externalId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('geofences')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  return row?.id;
}

/** The workspace's geofences carrying any of `externalIds`. */
export async function findByExternalIds(
  db: Executor,
  workspaceId: string,
  externalIds: readonly string[],
): Promise<Geofence[]> {
  const out: Geofence[] = [];
  for (let i = 0; i < externalIds.length; i += IN_CHUNK) {
    const rows = await db
      .selectFrom('geofences')
      .select(COLUMNS)
      .where('workspace_id', '=', workspaceId)
      .where('external_id', 'in', externalIds.slice(i, i + IN_CHUNK))
      .execute();
    for (const row of rows) out.push(toGeofence(row));
  }
  return out;
}

/** LIKE pattern for a literal substring: `!` escapes the wildcards and itself. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

function filterConditions(
  eb: ExpressionBuilder<DatabaseSchema, 'geofences'>,
  workspaceId: string,
  filters: GeofenceFilters,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [eb('workspace_id', '=', workspaceId)];
  if (filters.enabled !== undefined) conditions.push(eb('enabled', '=', filters.enabled));
  if (filters.externalId !== undefined) conditions.push(eb('external_id', '=', filters.externalId));
  if (filters.nameContains !== undefined) {
    // lower() on both sides rather than ILIKE: one spelling for SQLite and PostgreSQL.
    conditions.push(
      sql<SqlBool>`lower(${eb.ref('name')}) like ${containsPattern(filters.nameContains)} escape '!'`,
    );
  }
  return eb.and(conditions);
}

/** A page of the workspace's geofences, newest first, and the total matching the filters. */
export async function listGeofences(
  db: Executor,
  workspaceId: string,
  filters: GeofenceFilters,
  offset: number,
  limit: number,
): Promise<{ geofences: Geofence[]; total: number }> {
  const rows = await db
    .selectFrom('geofences')
    .select(COLUMNS)
    .where((eb) => filterConditions(eb, workspaceId, filters))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('geofences')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where((eb) => filterConditions(eb, workspaceId, filters))
    .executeTakeFirstOrThrow();
  return { geofences: rows.map(toGeofence), total: Number(count.n) };
}

/**
 * A page (newest first) of the enabled geofences among `ids`, and how many of them exist. The
 * index proposes the ids; the database stays the truth for what is enabled and for every field.
 */
export async function pageEnabledByIds(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
  offset: number,
  limit: number,
): Promise<{ geofences: Geofence[]; total: number }> {
  const keys: Array<{ id: string; created: number }> = [];
  for (let i = 0; i < ids.length; i += IN_CHUNK) {
    const rows = await db
      .selectFrom('geofences')
      .select(['id', 'created_at'])
      .where('workspace_id', '=', workspaceId)
      .where('enabled', '=', true)
      .where('id', 'in', ids.slice(i, i + IN_CHUNK))
      .execute();
    for (const row of rows) keys.push({ id: row.id, created: toDate(row.created_at).getTime() });
  }
  keys.sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const pageIds = keys.slice(offset, offset + limit).map((k) => k.id);
  if (pageIds.length === 0) return { geofences: [], total: keys.length };
  const rows = await db
    .selectFrom('geofences')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', pageIds)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, toGeofence(row)]));
  const geofences = pageIds.flatMap((id) => byId.get(id) ?? []);
  return { geofences, total: keys.length };
}

/**
 * A geofence as the export reads it: the JSON columns as the JSON text the database holds, so the
 * export splices them into its answer without parsing and re-serialising them (on PostgreSQL the
 * jsonb's text form: the same values, spaced and with object keys in jsonb's order).
 */
export interface ExportedGeofence {
  id: string;
  name: string;
  description: string | null;
  externalId: string | null;
  geometryJson: string;
  metadataJson: string;
  bboxJson: string;
  enabled: boolean;
  rules: FenceRules;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The ids of the workspace's geofences matching the filters, oldest first (creation order, so that
 * a re-import recreates them in the same order). One narrow read and one sort: the rows themselves
 * are read a page at a time by `exportRowsByIds`. (Keyset pages over `(created_at, id)` would re-sort
 * every geofence of a batch, which share one `created_at`, for each page.)
 */
export async function idsInCreationOrder(
  db: Executor,
  workspaceId: string,
  filters: GeofenceFilters,
): Promise<string[]> {
  const rows = await db
    .selectFrom('geofences')
    .select('id')
    .where((eb) => filterConditions(eb, workspaceId, filters))
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map((row) => row.id);
}

/** The export form of the workspace's geofences `ids`, in the order of `ids` (absent ones left out). */
export async function exportRowsByIds(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<ExportedGeofence[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('geofences')
    .select((eb) => [
      'id',
      'name',
      'description',
      'external_id',
      'enabled',
      'dwell_seconds',
      'exit_buffer_m',
      'max_accuracy_m',
      'created_at',
      'updated_at',
      sql<string>`cast(${eb.ref('geometry')} as text)`.as('geometry_json'),
      sql<string>`cast(${eb.ref('metadata')} as text)`.as('metadata_json'),
      sql<string>`cast(${eb.ref('bbox')} as text)`.as('bbox_json'),
    ])
    .where('id', 'in', ids)
    // The ids pick the rows; the workspace is a residual check (db/statements.ts).
    .where(residualEquals('workspace_id', workspaceId))
    .execute();
  const byId = new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        name: row.name,
        description: row.description,
        externalId: row.external_id,
        geometryJson: row.geometry_json,
        metadataJson: row.metadata_json,
        bboxJson: row.bbox_json,
        enabled: toBool(row.enabled),
        rules: rulesOf(row),
        createdAt: toDate(row.created_at),
        updatedAt: toDate(row.updated_at),
      },
    ]),
  );
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export interface GeofenceChanges {
  name?: string | undefined;
  description?: string | null | undefined;
  externalId?: string | null | undefined;
  geometry?: { geometry: FenceGeometry; bbox: Bbox; vertexCount: number } | undefined;
  metadata?: Record<string, unknown> | undefined;
  enabled?: boolean | undefined;
  /** Only the rules given change; null turns one off. */
  rules?: Partial<FenceRules> | undefined;
}

/**
 * Applies the given fields only (so concurrent patches of different fields both survive), bumps
 * the row version and returns the row as it is now; undefined when no such geofence exists.
 */
export async function updateGeofence(
  db: Executor,
  workspaceId: string,
  id: string,
  changes: GeofenceChanges,
  now: Date,
): Promise<Geofence | undefined> {
  const row = await db
    .updateTable('geofences')
    .set((eb) => ({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.externalId !== undefined ? { external_id: changes.externalId } : {}),
      ...(changes.geometry !== undefined
        ? {
            geometry: json(changes.geometry.geometry),
            bbox: json(changes.geometry.bbox),
            vertex_count: changes.geometry.vertexCount,
          }
        : {}),
      ...(changes.metadata !== undefined ? { metadata: json(changes.metadata) } : {}),
      ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
      ...(changes.rules?.dwellSeconds !== undefined ? { dwell_seconds: changes.rules.dwellSeconds } : {}),
      ...(changes.rules?.exitBufferM !== undefined ? { exit_buffer_m: changes.rules.exitBufferM } : {}),
      ...(changes.rules?.maxAccuracyM !== undefined ? { max_accuracy_m: changes.rules.maxAccuracyM } : {}),
      version: eb('version', '+', 1),
      updated_at: now,
    }))
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toGeofence(row) : undefined;
}

/** Deletes the geofence; returns whether it was enabled, or undefined when there was none. */
export async function deleteGeofence(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<{ wasEnabled: boolean } | undefined> {
  const row = await db
    .deleteFrom('geofences')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning('enabled')
    .executeTakeFirst();
  return row ? { wasEnabled: toBool(row.enabled) } : undefined;
}

/**
 * Increments the workspace's index version and returns the new value. Run inside the write's
 * transaction: on PostgreSQL the upsert's row lock also orders concurrent writers of one
 * workspace, so versions follow commit order.
 */
export async function bumpIndexVersion(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .insertInto('geofence_versions')
    .values({ workspace_id: workspaceId, version: 1 })
    .onConflict((oc) =>
      oc.column('workspace_id').doUpdateSet((eb) => ({ version: eb('geofence_versions.version', '+', 1) })),
    )
    .returning('version')
    .executeTakeFirstOrThrow();
  return Number(row.version);
}

/** The workspace's index version; 0 before its first indexed write. */
export async function readIndexVersion(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('geofence_versions')
    .select('version')
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return row ? Number(row.version) : 0;
}

/** Every enabled geofence of the workspace, as index entries with their rules (validated when stored). */
export async function loadIndexEntries(db: Executor, workspaceId: string): Promise<RuledEntry[]> {
  const rows = await db
    .selectFrom('geofences')
    .select(['id', 'geometry', 'dwell_seconds', 'exit_buffer_m', 'max_accuracy_m'])
    .where('workspace_id', '=', workspaceId)
    .where('enabled', '=', true)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    geometry: fromJson<FenceGeometry>(row.geometry),
    rules: rulesOf(row),
  }));
}
