import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * Outgoing e-mails become jobs of the one job engine (ADR 020): `email_outbox` gets what a job
 * needs. A message waiting for the worker is `pending` with `due_at` (when a worker may take it;
 * while it is claimed, when the lease runs out), `lease_owner`, `attempt_count` and, after a
 * failed attempt, `next_retry_at`. Rows already stored keep their status: `logged` (no SMTP),
 * `sent` and `failed` are final, so they get no due time and no claim ever reads them. The claim
 * index holds pending messages only: the outbox keeps every message ever sent beside them.
 */
export const mailJobs: Migration = {
  name: '0016_mail_jobs',
  async up(db, { types: t }) {
    await db.schema
      .alterTable('email_outbox')
      .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('email_outbox').addColumn('due_at', t.timestamp).execute();
    await db.schema.alterTable('email_outbox').addColumn('lease_owner', 'text').execute();
    await db.schema.alterTable('email_outbox').addColumn('next_retry_at', t.timestamp).execute();
    await db.schema
      .createIndex('email_outbox_claim_idx')
      .on('email_outbox')
      .columns(['due_at', 'id'])
      .where(sql.raw<boolean>(`status = 'pending'`))
      .execute();
  },
};
