/**
 * SQL for `email_outbox`: every message the service sends is kept here first (contract §0
 * `SMTP_URL`), and a message waiting to be sent is a job of the mail worker (mail-job.ts): claimed
 * with a lease, its outcome recorded where the lease is still held, given back when not started.
 */
import { type SqlBool, sql } from 'kysely';
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import { outboxOutcomeWrites } from './mail.tables.ts';
import type { MailMessage } from './mailer.ts';

/**
 * The mail worker's jobs. Written out, not bound, so that both databases see the predicate of the
 * partial claim index (`email_outbox_claim_idx`) and walk it instead of the whole outbox.
 */
const pendingMessage = sql<SqlBool>`status = 'pending'`;

/**
 * `logged` (no SMTP: where it stays, for operators to read), or `pending`: due at once, for the
 * mail worker.
 */
export async function insertOutboxMessage(
  db: Executor,
  entry: { id: string; message: MailMessage; now: Date; status: 'logged' | 'pending' },
): Promise<void> {
  await db
    .insertInto('email_outbox')
    .values({
      id: entry.id,
      to_address: entry.message.to,
      subject: entry.message.subject,
      text_body: entry.message.text,
      html_body: entry.message.html,
      status: entry.status,
      error_message: null,
      created_at: entry.now,
      sent_at: null,
      attempt_count: 0,
      due_at: entry.status === 'pending' ? entry.now : null,
      lease_owner: null,
      next_retry_at: null,
    })
    .execute();
}

/**
 * Whether some message is due, `exclude` aside: read before a claim, so that an idle poll takes no
 * write lock.
 */
export async function hasDueMessage(db: Executor, now: Date, exclude: readonly string[]): Promise<boolean> {
  const row = await dueMessages(db, now, exclude).select('id').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Pending messages due at `now`, except `exclude`: what a claim may take. */
function dueMessages(db: Executor, now: Date, exclude: readonly string[]) {
  const query = db.selectFrom('email_outbox').where(pendingMessage).where('due_at', '<=', now);
  return exclude.length > 0 ? query.where('id', 'not in', [...exclude]) : query;
}

export interface ClaimedMessage {
  id: string;
  message: MailMessage;
  /** The attempt about to be made (1-based). */
  attempt: number;
}

/**
 * Leases up to `limit` due messages to `workerId` until `leaseUntil`, oldest due first, except
 * `exclude` (messages this process is sending: their lease may look run out when the clock moved
 * on). On PostgreSQL they are taken `FOR UPDATE SKIP LOCKED`: workers of several processes take
 * disjoint messages without waiting; SQLite serialises the claim's transaction instead.
 */
export async function claimDueMessages(
  trx: Executor,
  capabilities: DialectCapabilities,
  options: { now: Date; workerId: string; limit: number; leaseUntil: Date; exclude: readonly string[] },
): Promise<ClaimedMessage[]> {
  let query = dueMessages(trx, options.now, options.exclude)
    .select(['id', 'to_address', 'subject', 'text_body', 'html_body', 'attempt_count'])
    .orderBy('due_at')
    .orderBy('id')
    .limit(options.limit);
  if (capabilities.skipLocked) query = query.forUpdate().skipLocked();
  const due = await query.execute();
  if (due.length === 0) return [];
  await trx
    .updateTable('email_outbox')
    .set({ due_at: options.leaseUntil, lease_owner: options.workerId })
    .where(
      'id',
      'in',
      due.map((d) => d.id),
    )
    .execute();
  return due.map((d) => ({
    id: d.id,
    message: { to: d.to_address, subject: d.subject, text: d.text_body, html: d.html_body },
    // attempt_count moves only when an outcome is recorded: a lease that runs out repeats it.
    attempt: d.attempt_count + 1,
  }));
}

/** What an attempt's outcome writes to its message. */
export type MessageOutcome =
  | { id: string; attempt: number; kind: 'sent'; at: Date }
  | { id: string; attempt: number; kind: 'retry'; errorMessage: string; retryAt: Date }
  | { id: string; attempt: number; kind: 'failed'; errorMessage: string };

/**
 * Records outcomes in one statement, where `workerId` still holds the lease (a worker whose lease
 * ran out lost the message to another and must not overwrite its record). Returns the ids written.
 */
export function recordMessageOutcomes(
  trx: Executor,
  capabilities: DialectCapabilities,
  workerId: string,
  outcomes: readonly MessageOutcome[],
): Promise<string[]> {
  if (outcomes.length === 0) return Promise.resolve([]);
  return outboxOutcomeWrites.updateById(
    trx,
    capabilities,
    outcomes,
    (o) => ({
      id: o.id,
      status: o.kind === 'retry' ? 'pending' : o.kind,
      attempt_count: o.attempt,
      error_message: o.kind === 'sent' ? null : o.errorMessage.slice(0, 500),
      sent_at: o.kind === 'sent' ? o.at : null,
      next_retry_at: o.kind === 'retry' ? o.retryAt : null,
      due_at: o.kind === 'retry' ? o.retryAt : null,
      lease_owner: null,
    }),
    { column: 'lease_owner', value: workerId },
  );
}

/** Gives back leases of claimed messages that were never attempted (a worker stopping): due at once. */
export async function releaseMessageLeases(
  db: Executor,
  workerId: string,
  ids: readonly string[],
  now: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('email_outbox')
    .set({ due_at: now, lease_owner: null })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', workerId)
    .where(pendingMessage)
    .execute();
}
