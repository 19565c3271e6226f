/**
 * The e-mail outbox (contract §0 `SMTP_URL`): every message is stored first; without SMTP it stays
 * `logged` for operators, with SMTP it becomes `sent`, and a delivery the server refuses is kept
 * `pending` with its reason and retried, then `failed` with its reason after the last attempt.
 * Never lost. (The retries, the leases and restarts: mail-jobs.test.ts.)
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MAIL_RETRY_SCHEDULE_MS } from '../../src/mail/mail-job.ts';
import type { TestApp } from '../helpers/app.ts';
import { startIdentityApp, uniqueEmail } from '../helpers/identity.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const message = (to: string) => ({ to, subject: 'Outbox check', text: 'Hello', html: '<p>Hello</p>' });

async function outboxRows(t: TestApp, to: string) {
  return t.deps.database.db
    .selectFrom('email_outbox')
    .select(['status', 'subject', 'text_body', 'html_body', 'error_message', 'sent_at', 'attempt_count'])
    .where('to_address', '=', to)
    .execute();
}

describe('e-mail outbox', () => {
  let sink: SmtpSink;
  before(async () => {
    sink = await startSmtpSink();
  });
  after(async () => sink?.close());

  test('without SMTP_URL a message is kept as logged', async () => {
    const t = await startIdentityApp();
    try {
      const to = uniqueEmail('logged');
      await t.deps.mailer.send(message(to));
      await t.deps.mailer.idle();
      const rows = await outboxRows(t, to);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.status, 'logged');
      assert.equal(rows[0]?.subject, 'Outbox check');
      assert.equal(rows[0]?.text_body, 'Hello');
      assert.equal(rows[0]?.html_body, '<p>Hello</p>');
      assert.equal(rows[0]?.sent_at, null);
    } finally {
      await t.close();
    }
  });

  test('with SMTP the stored message is delivered and marked sent', async () => {
    const t = await startIdentityApp({ env: { SMTP_URL: sink.url } });
    try {
      const to = uniqueEmail('sent');
      await t.deps.mailer.send(message(to));
      await t.deps.mailer.idle();
      assert.equal(sink.messagesTo(to).length, 1);
      const rows = await outboxRows(t, to);
      assert.equal(rows[0]?.status, 'sent');
      assert.notEqual(rows[0]?.sent_at, null);
    } finally {
      await t.close();
    }
  });

  test('a refused delivery stays in the outbox, retried, then failed with the reason', async () => {
    // A port that accepts and closes at once: the SMTP greeting never comes.
    const closer = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => closer.listen(0, '127.0.0.1', resolve));
    const address = closer.address();
    assert.ok(address && typeof address === 'object');
    const t = await startIdentityApp({ env: { SMTP_URL: `smtp://127.0.0.1:${address.port}` } });
    try {
      const to = uniqueEmail('failed');
      await t.deps.mailer.send(message(to));
      await t.deps.mailer.idle();
      let rows = await outboxRows(t, to);
      assert.equal(rows[0]?.status, 'pending', 'kept for another attempt');
      assert.equal(rows[0]?.attempt_count, 1);
      assert.ok(rows[0]?.error_message, 'the reason is kept');
      for (const delayMs of MAIL_RETRY_SCHEDULE_MS) {
        t.clock.advance(delayMs);
        await t.deps.mailer.idle();
      }
      rows = await outboxRows(t, to);
      assert.equal(rows[0]?.status, 'failed');
      assert.equal(rows[0]?.attempt_count, MAIL_RETRY_SCHEDULE_MS.length + 1);
      assert.ok(rows[0]?.error_message, 'the reason is kept');
      assert.equal(rows[0]?.sent_at, null);
    } finally {
      await t.close();
      await new Promise((resolve) => closer.close(resolve));
    }
  });
});
