/** SQL for webhook endpoints (contract §5); every query is scoped by workspace. */
import type { Selectable } from 'kysely';
import { fromJson, json, toBool, toDate } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import type { EventName } from '../events/event-types.ts';
import type { WebhookMethod, WebhooksTable } from './webhooks.tables.ts';

/** Event types a webhook subscribes to (`webhook.test` is never subscribed; see ADR 009). */
export type WebhookEventType = EventName;

/** A webhook as the domain sees it. The signing secret is not part of it: see `findSealedSecret`. */
export interface Webhook {
  id: string;
  workspaceId: string;
  name: string;
  url: string;
  method: WebhookMethod;
  contentType: string;
  timeoutSeconds: number;
  headers: Record<string, string>;
  rateLimitPerMinute: number;
  events: WebhookEventType[];
  /** null = every geofence of the workspace. */
  geofenceIds: string[] | null;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export type WebhookFields = Omit<Webhook, 'id' | 'workspaceId' | 'createdAt' | 'updatedAt'>;
export type WebhookChanges = Partial<WebhookFields>;

const COLUMNS = [
  'id',
  'workspace_id',
  'name',
  'url',
  'method',
  'content_type',
  'timeout_seconds',
  'headers',
  'rate_limit_per_minute',
  'events',
  'geofence_ids',
  'enabled',
  'created_at',
  'updated_at',
] as const;

type WebhookRow = Pick<Selectable<WebhooksTable>, (typeof COLUMNS)[number]>;

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    url: row.url,
    method: row.method,
    contentType: row.content_type,
    timeoutSeconds: row.timeout_seconds,
    headers: fromJson<Record<string, string>>(row.headers),
    rateLimitPerMinute: row.rate_limit_per_minute,
    events: fromJson<WebhookEventType[]>(row.events),
    geofenceIds: row.geofence_ids === null ? null : fromJson<string[]>(row.geofence_ids),
    enabled: toBool(row.enabled),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export async function insertWebhook(db: Executor, webhook: Webhook, secretSealed: string): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({
      id: webhook.id,
      workspace_id: webhook.workspaceId,
      name: webhook.name,
      url: webhook.url,
      method: webhook.method,
      content_type: webhook.contentType,
      timeout_seconds: webhook.timeoutSeconds,
      headers: json(webhook.headers),
      rate_limit_per_minute: webhook.rateLimitPerMinute,
      events: json(webhook.events),
      geofence_ids: webhook.geofenceIds === null ? null : json(webhook.geofenceIds),
      enabled: webhook.enabled,
      secret_sealed: secretSealed,
      created_at: webhook.createdAt,
      updated_at: webhook.updatedAt,
    })
    .execute();
}

export async function findWebhookById(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<Webhook | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toWebhook(row) : undefined;
}

/** The webhook with its sealed secret, for the one caller that opens it (the service). */
export async function findWebhookWithSealedSecret(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<{ webhook: Webhook; secretSealed: string } | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .select([...COLUMNS, 'secret_sealed'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? { webhook: toWebhook(row), secretSealed: row.secret_sealed } : undefined;
}

export async function findSealedSecret(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .select('secret_sealed')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.secret_sealed;
}

/** Newest first (ids are UUIDv7, so `id` breaks ties of one millisecond in creation order). */
export async function listWebhooks(
  db: Executor,
  workspaceId: string,
  filters: { enabled?: boolean | undefined },
  offset: number,
  limit: number,
): Promise<{ webhooks: Webhook[]; total: number }> {
  let rows = db.selectFrom('webhooks').where('workspace_id', '=', workspaceId);
  if (filters.enabled !== undefined) rows = rows.where('enabled', '=', filters.enabled);
  const [page, count] = await Promise.all([
    rows
      .select(COLUMNS)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute(),
    rows.select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { webhooks: page.map(toWebhook), total: Number(count.n) };
}

export async function updateWebhook(
  db: Executor,
  workspaceId: string,
  id: string,
  changes: WebhookChanges,
  now: Date,
): Promise<Webhook | undefined> {
  const set: Record<string, unknown> = { updated_at: now };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.url !== undefined) set.url = changes.url;
  if (changes.method !== undefined) set.method = changes.method;
  if (changes.contentType !== undefined) set.content_type = changes.contentType;
  if (changes.timeoutSeconds !== undefined) set.timeout_seconds = changes.timeoutSeconds;
  if (changes.headers !== undefined) set.headers = json(changes.headers);
  if (changes.rateLimitPerMinute !== undefined) set.rate_limit_per_minute = changes.rateLimitPerMinute;
  if (changes.events !== undefined) set.events = json(changes.events);
  if (changes.geofenceIds !== undefined) {
    set.geofence_ids = changes.geofenceIds === null ? null : json(changes.geofenceIds);
  }
  if (changes.enabled !== undefined) set.enabled = changes.enabled;
  const result = await db
    .updateTable('webhooks')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return undefined;
  return findWebhookById(db, workspaceId, id);
}

export async function replaceSealedSecret(
  db: Executor,
  workspaceId: string,
  id: string,
  secretSealed: string,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ secret_sealed: secretSealed, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteWebhook(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhooks')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Of `ids`, those that are geofences of the workspace. */
export async function existingGeofenceIds(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('geofences')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}
