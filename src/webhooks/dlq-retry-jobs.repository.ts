/**
 * SQL for "retry every dead letter matching this filter" jobs (contract §5, ADR 018): the job row
 * (filter, the set's bound, a cursor and counts) and the entries of its set, walked in
 * (queued_at, id) order. Every query is scoped by workspace or guarded by the worker's lease.
 */
import { type Expression, type ExpressionBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import { toDate, toDateOrNull } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { DatabaseSchema } from '../db/schema.ts';
import type { Executor } from '../db/transaction.ts';
import { DEAD_LETTER_COLUMNS, type DeadLetter, toDeadLetter } from './dead-letters.repository.ts';
import type { DeliveryEventType, RetryJobStatus, WebhookDlqRetryJobsTable } from './deliveries.tables.ts';

export interface RetryFilter {
  webhookId: string | null;
  eventType: DeliveryEventType | null;
  /** Inclusive bounds on `queued_at`. */
  from: Date | null;
  to: Date | null;
  /** A substring of `error_message`, compared case-insensitively. */
  errorContains: string | null;
}

/** A position in the (queued_at, id) order of the dead letters. */
export interface EntryKey {
  queuedAt: Date;
  id: string;
}

export interface RetryJob {
  id: string;
  workspaceId: string;
  filter: RetryFilter;
  /** The last entry of the job's set; null when it matched nothing. */
  bound: EntryKey | null;
  /** The last entry handled; null before the first batch. */
  cursor: EntryKey | null;
  matched: number;
  queued: number;
  failed: number;
  status: RetryJobStatus;
  createdAt: Date;
  finishedAt: Date | null;
}

type JobRow = Selectable<WebhookDlqRetryJobsTable>;

function key(queuedAt: Date | string | null, id: string | null): EntryKey | null {
  return queuedAt === null || id === null ? null : { queuedAt: toDate(queuedAt), id };
}

function toJob(row: JobRow): RetryJob {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    filter: {
      webhookId: row.webhook_id,
      eventType: row.event_type,
      from: toDateOrNull(row.from_at),
      to: toDateOrNull(row.to_at),
      errorContains: row.error_contains,
    },
    bound: key(row.bound_queued_at, row.bound_id),
    cursor: key(row.cursor_queued_at, row.cursor_id),
    matched: row.matched,
    queued: row.queued,
    failed: row.failed,
    status: row.status,
    createdAt: toDate(row.created_at),
    finishedAt: toDateOrNull(row.finished_at),
  };
}

type DeadLetterEb = ExpressionBuilder<DatabaseSchema, 'webhook_dead_letters'>;

/** `LIKE` pattern of a literal substring: `%`, `_` and the escape character itself escaped. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Entries of the workspace not requeued yet that match `filter`. */
function matching(eb: DeadLetterEb, workspaceId: string, filter: RetryFilter) {
  const conditions: Expression<SqlBool>[] = [
    eb('workspace_id', '=', workspaceId),
    eb('requeued', '=', false),
  ];
  if (filter.webhookId !== null) conditions.push(eb('webhook_id', '=', filter.webhookId));
  if (filter.eventType !== null) conditions.push(eb('event_type', '=', filter.eventType));
  if (filter.from !== null) conditions.push(eb('queued_at', '>=', filter.from));
  if (filter.to !== null) conditions.push(eb('queued_at', '<=', filter.to));
  if (filter.errorContains !== null) {
    // lower() on both sides: one expression on both databases (SQLite folds ASCII letters only).
    conditions.push(
      sql<SqlBool>`lower(${sql.ref('error_message')}) like ${containsPattern(filter.errorContains)} escape '\\'`,
    );
  }
  return eb.and(conditions);
}

/** (queued_at, id) after `k`, written out: row values compare alike on both databases, but this reads plainer. */
function after(eb: DeadLetterEb, k: EntryKey) {
  return eb.or([
    eb('queued_at', '>', k.queuedAt),
    eb.and([eb('queued_at', '=', k.queuedAt), eb('id', '>', k.id)]),
  ]);
}

function atOrBefore(eb: DeadLetterEb, k: EntryKey) {
  return eb.or([
    eb('queued_at', '<', k.queuedAt),
    eb.and([eb('queued_at', '=', k.queuedAt), eb('id', '<=', k.id)]),
  ]);
}

/**
 * The set a new job takes on: how many entries match (at most `max`) and the last of the oldest
 * `max` in (queued_at, id) order, its bound. Entries dead-lettered later sort after it and stay out.
 */
export async function measureSet(
  db: Executor,
  workspaceId: string,
  filter: RetryFilter,
  max: number,
): Promise<{ matched: number; bound: EntryKey | null }> {
  const inOrder = db
    .selectFrom('webhook_dead_letters')
    .where((eb) => matching(eb, workspaceId, filter))
    .orderBy('queued_at')
    .orderBy('id');
  const counted = await db
    .selectFrom(inOrder.select('id').limit(max).as('s'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const matched = Number(counted.n);
  if (matched === 0) return { matched, bound: null };
  const last = await inOrder
    .select(['queued_at', 'id'])
    .offset(matched - 1)
    .limit(1)
    .executeTakeFirstOrThrow();
  return { matched, bound: { queuedAt: toDate(last.queued_at), id: last.id } };
}

export async function insertRetryJob(
  db: Executor,
  job: Pick<RetryJob, 'id' | 'workspaceId' | 'filter' | 'bound' | 'matched' | 'status' | 'createdAt'>,
): Promise<void> {
  await db
    .insertInto('webhook_dlq_retry_jobs')
    .values({
      id: job.id,
      workspace_id: job.workspaceId,
      webhook_id: job.filter.webhookId,
      event_type: job.filter.eventType,
      from_at: job.filter.from,
      to_at: job.filter.to,
      error_contains: job.filter.errorContains,
      bound_queued_at: job.bound?.queuedAt ?? null,
      bound_id: job.bound?.id ?? null,
      cursor_queued_at: null,
      cursor_id: null,
      matched: job.matched,
      queued: 0,
      failed: 0,
      status: job.status,
      created_at: job.createdAt,
      finished_at: job.status === 'done' ? job.createdAt : null,
      due_at: job.createdAt,
      lease_owner: null,
    })
    .execute();
}

/** The job of the workspace (another workspace's is not found). */
export async function findRetryJob(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<RetryJob | undefined> {
  const row = await db
    .selectFrom('webhook_dlq_retry_jobs')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toJob(row) : undefined;
}

/** Written out so that both databases see the predicate of the partial claim index. */
const runningJob = sql<SqlBool>`status = 'running'`;

/**
 * Leases up to `limit` running jobs due at `now` to `workerId` until `leaseUntil` (on PostgreSQL
 * `FOR UPDATE SKIP LOCKED`: nodes take different jobs without waiting). Returns their ids.
 */
export async function claimRetryJobs(
  trx: Executor,
  capabilities: DialectCapabilities,
  options: { now: Date; workerId: string; limit: number; leaseUntil: Date },
): Promise<Array<{ id: string; workspaceId: string }>> {
  let query = trx
    .selectFrom('webhook_dlq_retry_jobs')
    .select(['id', 'workspace_id'])
    .where(runningJob)
    .where('due_at', '<=', options.now)
    .orderBy('due_at')
    .orderBy('id')
    .limit(options.limit);
  if (capabilities.skipLocked) query = query.forUpdate().skipLocked();
  const due = await query.execute();
  if (due.length === 0) return [];
  await trx
    .updateTable('webhook_dlq_retry_jobs')
    .set({ due_at: options.leaseUntil, lease_owner: options.workerId })
    .where(
      'id',
      'in',
      due.map((d) => d.id),
    )
    .execute();
  return due.map((d) => ({ id: d.id, workspaceId: d.workspace_id }));
}

/** Whether some job is due: read before a claim, so that an idle poll takes no write lock. */
export async function hasDueRetryJob(db: Executor, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_dlq_retry_jobs')
    .select('id')
    .where(runningJob)
    .where('due_at', '<=', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The job, if `workerId` still holds its lease, with the lease extended to `leaseUntil`. The first
 * statement of a batch's transaction: on PostgreSQL it also locks the row until the batch commits,
 * so a worker whose lease ran out cannot write a batch beside the one that took the job over.
 */
export async function holdRetryJob(
  trx: Executor,
  id: string,
  workerId: string,
  leaseUntil: Date,
): Promise<RetryJob | undefined> {
  const result = await trx
    .updateTable('webhook_dlq_retry_jobs')
    .set({ due_at: leaseUntil })
    .where('id', '=', id)
    .where('lease_owner', '=', workerId)
    .where(runningJob)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return undefined;
  const row = await trx
    .selectFrom('webhook_dlq_retry_jobs')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return toJob(row);
}

/**
 * The next `limit` entries of the job's set after its cursor, oldest first, not requeued. On
 * PostgreSQL they are locked, and one another transaction requeued meanwhile is skipped.
 */
export async function nextEntries(
  trx: Executor,
  capabilities: DialectCapabilities,
  job: RetryJob,
  limit: number,
): Promise<DeadLetter[]> {
  const { bound, cursor } = job;
  if (bound === null) return [];
  let query = trx
    .selectFrom('webhook_dead_letters')
    .select(DEAD_LETTER_COLUMNS)
    .where((eb) =>
      eb.and([
        matching(eb, job.workspaceId, job.filter),
        atOrBefore(eb, bound),
        ...(cursor === null ? [] : [after(eb, cursor)]),
      ]),
    )
    .orderBy('queued_at')
    .orderBy('id')
    .limit(limit);
  if (capabilities.rowLocks) query = query.forUpdate();
  return (await query.execute()).map(toDeadLetter);
}

/**
 * A batch's outcome, in the batch's transaction: the cursor moves past it, the counts grow, and the
 * lease is given back (due now: the next batch may be taken by any worker), or the job is done.
 */
export async function saveRetryProgress(
  trx: Executor,
  id: string,
  progress: { cursor: EntryKey | null; queued: number; failed: number; done: boolean; now: Date },
): Promise<void> {
  await trx
    .updateTable('webhook_dlq_retry_jobs')
    .set((eb) => ({
      ...(progress.cursor === null
        ? {}
        : { cursor_queued_at: progress.cursor.queuedAt, cursor_id: progress.cursor.id }),
      queued: eb('queued', '+', progress.queued),
      failed: eb('failed', '+', progress.failed),
      status: progress.done ? 'done' : 'running',
      finished_at: progress.done ? progress.now : null,
      due_at: progress.now,
      lease_owner: null,
    }))
    .where('id', '=', id)
    .execute();
}

/** Gives back jobs claimed and not started: due at once for any worker. */
export async function releaseRetryJobs(
  db: Executor,
  workerId: string,
  ids: readonly string[],
  now: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('webhook_dlq_retry_jobs')
    .set({ due_at: now, lease_owner: null })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', workerId)
    .execute();
}
