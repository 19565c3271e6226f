import { bulkUpdate } from '../db/bulk-table.ts';
import type { NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';

/**
 * `logged`: no SMTP configured, kept for operators (never sent); `pending`: waiting for the mail
 * worker (a first attempt or a retry); `sent`; `failed`: given up after the last attempt, or at
 * once when the server refused the message itself, with the reason in `error_message`.
 */
export type EmailStatus = 'logged' | 'pending' | 'sent' | 'failed';

export interface EmailOutboxTable {
  id: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: EmailStatus;
  /** The last failed attempt's reason (credentials of SMTP_URL blanked); null once sent. */
  error_message: string | null;
  created_at: TimestampColumn;
  sent_at: NullableTimestampColumn;
  /** Attempts made; moves only when an outcome is recorded (a lease that runs out repeats one). */
  attempt_count: number;
  /** Pending: when a worker may take it; claimed: when the lease runs out. Null when not a job. */
  due_at: NullableTimestampColumn;
  lease_owner: string | null;
  /** After a failed attempt followed by a retry: when it is made. */
  next_retry_at: NullableTimestampColumn;
}

/** The outcome of an attempt, written to its message where the lease is still held. */
export const outboxOutcomeWrites = bulkUpdate<EmailOutboxTable>()('email_outbox', {
  status: 'text',
  attempt_count: 'integer',
  error_message: 'text',
  sent_at: 'timestamp',
  next_retry_at: 'timestamp',
  due_at: 'timestamp',
  lease_owner: 'text',
});
