/** SQL for the dead-letter queue (seed §2.5, §2.6); every query is scoped by workspace. */
import type { Selectable } from 'kysely';
import { toBool, toDate } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import type { DeliveryEventType, WebhookDeadLettersTable } from './deliveries.tables.ts';

export interface DeadLetter {
  id: string;
  workspaceId: string;
  deliveryId: string;
  webhookId: string | null;
  webhookName: string;
  webhookUrl: string;
  eventType: DeliveryEventType;
  eventId: string;
  errorMessage: string;
  retryCount: number;
  lastAttemptAt: Date;
  queuedAt: Date;
  requeued: boolean;
}

/** Every column the API shows of an entry. */
export const DEAD_LETTER_COLUMNS = [
  'id',
  'workspace_id',
  'delivery_id',
  'webhook_id',
  'webhook_name',
  'webhook_url',
  'event_type',
  'event_id',
  'error_message',
  'retry_count',
  'last_attempt_at',
  'queued_at',
  'requeued',
] as const;

type Row = Pick<Selectable<WebhookDeadLettersTable>, (typeof DEAD_LETTER_COLUMNS)[number]>;

export function toDeadLetter(row: Row): DeadLetter {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    deliveryId: row.delivery_id,
    webhookId: row.webhook_id,
    webhookName: row.webhook_name,
    webhookUrl: row.webhook_url,
    eventType: row.event_type,
    eventId: row.event_id,
    errorMessage: row.error_message,
    retryCount: row.retry_count,
    lastAttemptAt: toDate(row.last_attempt_at),
    queuedAt: toDate(row.queued_at),
    requeued: toBool(row.requeued),
  };
}

export interface DeadLetterFilters {
  requeued?: boolean | undefined;
  webhookId?: string | undefined;
  eventType?: DeliveryEventType | undefined;
  /** Inclusive bounds on `queued_at`. */
  from?: Date | undefined;
  to?: Date | undefined;
}

/** Entries matching `filters`, newest first (the range reads `(workspace_id, queued_at)`). */
export async function listDeadLetters(
  db: Executor,
  workspaceId: string,
  filters: DeadLetterFilters,
  offset: number,
  limit: number,
): Promise<{ entries: DeadLetter[]; total: number }> {
  let base = db.selectFrom('webhook_dead_letters').where('workspace_id', '=', workspaceId);
  if (filters.requeued !== undefined) base = base.where('requeued', '=', filters.requeued);
  if (filters.webhookId !== undefined) base = base.where('webhook_id', '=', filters.webhookId);
  if (filters.eventType !== undefined) base = base.where('event_type', '=', filters.eventType);
  if (filters.from !== undefined) base = base.where('queued_at', '>=', filters.from);
  if (filters.to !== undefined) base = base.where('queued_at', '<=', filters.to);
  const rows = await base
    .select(DEAD_LETTER_COLUMNS)
    .orderBy('queued_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { entries: rows.map(toDeadLetter), total: Number(count.n) };
}

/** The entry of a failed delivery (at most one: `delivery_id` is unique). */
export async function findDeadLetterOfDelivery(
  db: Executor,
  workspaceId: string,
  deliveryId: string,
): Promise<DeadLetter | undefined> {
  const row = await db
    .selectFrom('webhook_dead_letters')
    .select(DEAD_LETTER_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('delivery_id', '=', deliveryId)
    .executeTakeFirst();
  return row ? toDeadLetter(row) : undefined;
}

export async function findDeadLetter(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<DeadLetter | undefined> {
  const row = await db
    .selectFrom('webhook_dead_letters')
    .select(DEAD_LETTER_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toDeadLetter(row) : undefined;
}

export async function markRequeued(db: Executor, id: string, now: Date): Promise<void> {
  await db
    .updateTable('webhook_dead_letters')
    .set({ requeued: true, requeued_at: now })
    .where('id', '=', id)
    .execute();
}

export interface DeadLetterStats {
  total: number;
  requeued: number;
  top: Array<{ webhookId: string | null; webhookName: string; count: number }>;
}

/** Totals and the webhooks with the most entries (at most five, most first). */
export async function deadLetterStats(db: Executor, workspaceId: string): Promise<DeadLetterStats> {
  const totals = await db
    .selectFrom('webhook_dead_letters')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(eb.case().when('requeued', '=', true).then(1).else(0).end()).as('requeued'),
    ])
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  const top = await db
    .selectFrom('webhook_dead_letters')
    .select((eb) => [
      'webhook_id',
      eb.fn.max('webhook_name').as('webhook_name'),
      eb.fn.countAll<number>().as('n'),
    ])
    .where('workspace_id', '=', workspaceId)
    .groupBy('webhook_id')
    .orderBy('n', 'desc')
    .orderBy('webhook_id')
    .limit(5)
    .execute();
  return {
    total: Number(totals.total),
    requeued: Number(totals.requeued ?? 0),
    top: top.map((t) => ({
      webhookId: t.webhook_id,
      webhookName: String(t.webhook_name),
      count: Number(t.n),
    })),
  };
}
