/** SQL for `email_outbox`: every message the service sends is kept here first (contract §0 `SMTP_URL`). */
import type { Executor } from '../db/transaction.ts';
import type { MailMessage } from './mailer.ts';

/** Stored as `logged`: without SMTP that is where it stays, for operators to read. */
export async function insertOutboxMessage(
  db: Executor,
  entry: { id: string; message: MailMessage; now: Date },
): Promise<void> {
  await db
    .insertInto('email_outbox')
    .values({
      id: entry.id,
      to_address: entry.message.to,
      subject: entry.message.subject,
      text_body: entry.message.text,
      html_body: entry.message.html,
      status: 'logged',
      error_message: null,
      created_at: entry.now,
      sent_at: null,
    })
    .execute();
}

export async function markOutboxSent(db: Executor, id: string, now: Date): Promise<void> {
  await db.updateTable('email_outbox').set({ status: 'sent', sent_at: now }).where('id', '=', id).execute();
}

export async function markOutboxFailed(db: Executor, id: string, reason: string): Promise<void> {
  await db
    .updateTable('email_outbox')
    .set({ status: 'failed', error_message: reason.slice(0, 500) })
    .where('id', '=', id)
    .execute();
}
