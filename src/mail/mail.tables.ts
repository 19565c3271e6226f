import type { NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';

/** `logged`: no SMTP configured, kept for operators; `sent`; `failed`: SMTP refused it. */
export type EmailStatus = 'logged' | 'sent' | 'failed';

export interface EmailOutboxTable {
  id: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: EmailStatus;
  error_message: string | null;
  created_at: TimestampColumn;
  sent_at: NullableTimestampColumn;
}
