/**
 * Outgoing e-mails as jobs of the one job engine (src/mail/mail-job.ts, ADR 020), through real SMTP
 * servers on 127.0.0.1 and a real database, time moved by a manual clock: a message is sent once
 * and marked sent; a mail server that is down gets the message at the retry schedule's times, and
 * after the last attempt it is failed for good with its reason; a message still pending when its
 * process stops is sent by the next one; workers of two processes on one database send each
 * message once; without SMTP_URL a message stays `logged` and no worker ever takes it; messages
 * the previous release stored (logged, sent, failed) stay as they were. As processes: a server
 * sends through its engine; an API node with RUN_WORKER=false only stores, and a worker process
 * sends.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { SMTPServer } from 'smtp-server';
import { parseDatabaseUrl } from '../../src/config.ts';
import { toIsoOrNull } from '../../src/db/columns.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createMailWorker } from '../../src/engine.ts';
import { MAIL_LEASE_MS, MAIL_RETRY_SCHEDULE_MS, type MailWorker } from '../../src/mail/mail-job.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, type TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, IS_POSTGRES, type TestDatabase } from '../helpers/database.ts';
import { uniqueEmail } from '../helpers/identity.ts';
import { migrateUpTo } from '../helpers/previous-release.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { createProcessDatabase, httpExpect, spawnServer } from '../helpers/spawned-server.ts';

const message = (to: string, subject = 'Mail job check') => ({
  to,
  subject,
  text: 'Hello',
  html: '<p>Hello</p>',
});

async function outboxRow(t: TestApp, to: string) {
  const rows = await t.deps.database.db
    .selectFrom('email_outbox')
    .select(['status', 'attempt_count', 'error_message', 'sent_at', 'due_at', 'next_retry_at', 'lease_owner'])
    .where('to_address', '=', to)
    .execute();
  assert.equal(rows.length, 1, `one outbox row for ${to}`);
  const row = rows[0] as (typeof rows)[number];
  return {
    ...row,
    sent_at: toIsoOrNull(row.sent_at),
    due_at: toIsoOrNull(row.due_at),
    next_retry_at: toIsoOrNull(row.next_retry_at),
  };
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = new SMTPServer({ logger: false });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A real SMTP server that refuses every recipient (550), or every login repeating what it was given. */
async function startRefusingServer(refuse: 'recipients' | 'logins') {
  let received = 0;
  const server = new SMTPServer({
    authOptional: refuse !== 'logins',
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      callback(new Error(`Invalid login for ${auth.username} with ${auth.password}`));
    },
    onRcptTo(_address, _session, callback) {
      if (refuse === 'recipients') {
        callback(Object.assign(new Error('5.1.1 Mailbox unavailable'), { responseCode: 550 }));
      } else {
        callback();
      }
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => {
        received += 1;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: (credentials?: string) => `smtp://${credentials ? `${credentials}@` : ''}127.0.0.1:${port}`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A real SMTP server that holds each message's DATA until `release()`: sends stay in flight. */
async function startHoldingServer() {
  let received = 0;
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived: () => void = () => {};
  const firstArrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => {
        received += 1;
        arrived();
        void released.then(() => callback());
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: () => received,
    firstArrival,
    release: () => release(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The schema of the release before e-mail jobs (through migration 0015), with `rows` in its outbox. */
async function previousRelease(
  database: TestDatabase,
  rows: ReadonlyArray<{ id: string; to: string; status: string; error: string | null; sentAt: Date | null }>,
): Promise<void> {
  await migrateUpTo(database, '0015_one_job_engine', async (db) => {
    const created = new Date('2026-03-09T12:00:00.000Z');
    for (const r of rows) {
      await sql`insert into email_outbox
        (id, to_address, subject, text_body, html_body, status, error_message, created_at, sent_at)
        values (${r.id}, ${r.to}, ${'Old'}, ${'Hello'}, ${'<p>Hello</p>'}, ${r.status}, ${r.error},
          ${created}, ${r.sentAt})`.execute(db);
    }
  });
}

/** Rounds of `worker` until one claims nothing; returns how many it claimed in all. */
async function drain(worker: MailWorker): Promise<number> {
  let total = 0;
  for (;;) {
    const claimed = await worker.runOnce();
    if (claimed === 0) return total;
    total += claimed;
  }
}

describe(`e-mail jobs on ${IS_POSTGRES ? 'PostgreSQL' : 'SQLite'}`, () => {
  let sink: SmtpSink;
  before(async () => {
    sink = await startSmtpSink();
  });
  after(async () => sink?.close());

  test('a message is stored pending, sent once by the app’s mail worker and marked sent', async () => {
    const t = await startTestApp({ env: { SMTP_URL: sink.url } });
    try {
      const to = uniqueEmail('once');
      await t.deps.mailer.send(message(to));
      // No idle(): storing it woke the app's mail worker, which sends it on its own.
      const received = await sink.waitFor((m) => m.to.includes(to));
      assert.equal(received.subject, 'Mail job check');
      await t.deps.mailer.idle();
      const row = await outboxRow(t, to);
      assert.deepEqual(row, {
        status: 'sent',
        attempt_count: 1,
        error_message: null,
        sent_at: t.clock.now().toISOString(),
        due_at: null,
        next_retry_at: null,
        lease_owner: null,
      });
      // Another worker, another idle(), a day later: nothing is sent again.
      t.clock.advance(86_400_000);
      assert.equal(await createMailWorker(t.deps).runOnce(), 0);
      await t.deps.mailer.idle();
      assert.equal(sink.messagesTo(to).length, 1);
    } finally {
      await t.close();
    }
  });

  test('SMTP down: retried at the schedule’s times, then failed for good with its reason', async () => {
    const port = await closedPort();
    // RUN_WORKER=false: no worker of the app's own; the test runs the rounds.
    const t = await startTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, RUN_WORKER: 'false' } });
    try {
      const worker = createMailWorker(t.deps);
      const to = uniqueEmail('down');
      const storedAt = t.clock.now();
      await t.deps.mailer.send(message(to));
      let row = await outboxRow(t, to);
      assert.equal(row.status, 'pending');
      assert.equal(row.attempt_count, 0);
      assert.equal(row.due_at, storedAt.toISOString(), 'due at once');

      assert.equal(await worker.runOnce(), 1, 'the first attempt');
      row = await outboxRow(t, to);
      assert.equal(row.status, 'pending');
      assert.equal(row.attempt_count, 1);
      assert.match(row.error_message ?? '', /^SMTP: .*ECONNREFUSED/);
      assert.equal(row.lease_owner, null);

      for (const [index, delayMs] of MAIL_RETRY_SCHEDULE_MS.entries()) {
        const retryAt = new Date(t.clock.now().getTime() + delayMs).toISOString();
        assert.equal(row.next_retry_at, retryAt, `attempt ${index + 2} planned ${delayMs} ms later`);
        assert.equal(row.due_at, retryAt);
        t.clock.advance(delayMs - 1);
        assert.equal(await worker.runOnce(), 0, `attempt ${index + 2} not before its time`);
        t.clock.advance(1);
        assert.equal(await worker.runOnce(), 1, `attempt ${index + 2} at its time`);
        row = await outboxRow(t, to);
        assert.equal(row.attempt_count, index + 2);
      }
      assert.deepEqual(
        { ...row, error_message: undefined },
        {
          status: 'failed',
          attempt_count: MAIL_RETRY_SCHEDULE_MS.length + 1,
          error_message: undefined,
          sent_at: null,
          due_at: null,
          next_retry_at: null,
          lease_owner: null,
        },
      );
      assert.match(row.error_message ?? '', /^SMTP: .*ECONNREFUSED/, 'the reason is kept');
      assert.ok(t.logs.some((l) => l.msg === 'e-mail failed for good' && l.mailId !== undefined));

      t.clock.advance(7 * 86_400_000);
      assert.equal(await worker.runOnce(), 0, 'failed for good: never taken again');
      await t.deps.mailer.idle();
      assert.equal((await outboxRow(t, to)).status, 'failed');
    } finally {
      await t.close();
    }
  });

  test('a message being sent is not taken again by its process when the clock passes its lease', async () => {
    const server = await startHoldingServer();
    const t = await startTestApp({ env: { SMTP_URL: server.url } });
    try {
      const to = uniqueEmail('in-flight');
      await t.deps.mailer.send(message(to));
      await server.firstArrival;
      // A test's clock jumps a day while the app's worker waits for the server's answer.
      t.clock.advance(86_400_000);
      assert.equal(await createMailWorker(t.deps).runOnce(), 0, 'its lease looks run out; still not taken');
      server.release();
      await t.deps.mailer.idle();
      assert.equal(server.received(), 1);
      const row = await outboxRow(t, to);
      assert.equal(row.status, 'sent');
      assert.equal(row.attempt_count, 1);
    } finally {
      server.release();
      await t.close();
      await server.close();
    }
  });

  test('a message the server refuses (550) is failed at once, not retried', async () => {
    const server = await startRefusingServer('recipients');
    const t = await startTestApp({ env: { SMTP_URL: server.url() } });
    try {
      const to = uniqueEmail('refused');
      await t.deps.mailer.send(message(to));
      await t.deps.mailer.idle();
      const row = await outboxRow(t, to);
      assert.equal(row.status, 'failed');
      assert.equal(row.attempt_count, 1);
      assert.match(row.error_message ?? '', /^SMTP: .*550 5\.1\.1 Mailbox unavailable/);
      assert.equal(row.next_retry_at, null);
      assert.equal(server.received(), 0);
    } finally {
      await t.close();
      await server.close();
    }
  });

  test('a refused login is retried, and the kept reason never holds the credentials of SMTP_URL', async () => {
    const server = await startRefusingServer('logins');
    const t = await startTestApp({ env: { SMTP_URL: server.url('mailer-user:s3cr%40t-Pass%2Fword') } });
    try {
      const to = uniqueEmail('login');
      await t.deps.mailer.send(message(to));
      await t.deps.mailer.idle();
      const row = await outboxRow(t, to);
      assert.equal(row.status, 'pending', 'a login refused may succeed once SMTP_URL is fixed');
      const reason = row.error_message ?? '';
      assert.match(reason, /^SMTP: .*535 /);
      assert.match(reason, /Invalid login for … with …/, 'the server repeated both; both are blanked');
      const logged = JSON.stringify(t.logs);
      for (const secret of ['mailer-user', 's3cr@t-Pass/word', 's3cr%40t-Pass%2Fword']) {
        assert.ok(!reason.includes(secret), `${secret} in: ${reason}`);
        assert.ok(!logged.includes(secret), `${secret} in the logs`);
      }
    } finally {
      await t.close();
      await server.close();
    }
  });

  describe('processes on one database', () => {
    let shared: TestDatabase;
    before(async () => {
      shared = await createSharedTestDatabase();
    });
    after(async () => shared?.drop());

    test('a message pending when its process stops is sent by the next process', async () => {
      const clock = new ManualClock('2026-03-10T12:00:00.000Z');
      // A node whose mail server is down makes the first attempt and stops: the retry is pending.
      const down = await startTestApp({
        database: shared,
        clock,
        env: { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`, RUN_WORKER: 'false' },
      });
      const retried = uniqueEmail('retried');
      try {
        await down.deps.mailer.send(message(retried));
        assert.equal(await createMailWorker(down.deps).runOnce(), 1);
        assert.equal((await outboxRow(down, retried)).attempt_count, 1);
      } finally {
        await down.close();
      }
      // A node that dies holding a lease: the message is its until the lease runs out.
      const dying = await startTestApp({
        database: shared,
        clock,
        env: { SMTP_URL: sink.url, RUN_WORKER: 'false' },
      });
      const leased = uniqueEmail('leased');
      try {
        await dying.deps.mailer.send(message(leased));
        const claimed = await dying.deps.mailer.jobKind.claim('dead-worker', 10, clock.now());
        assert.deepEqual(
          claimed.map((c) => c.message.to),
          [leased],
        );
      } finally {
        await dying.close();
      }
      // An API node (RUN_WORKER=false) stores a message and stops before any worker took it.
      const api = await startTestApp({
        database: shared,
        clock,
        env: { SMTP_URL: sink.url, RUN_WORKER: 'false' },
      });
      const stored = uniqueEmail('stored');
      try {
        await api.deps.mailer.send(message(stored));
      } finally {
        await api.close();
      }
      assert.equal(sink.messagesTo(stored).length + sink.messagesTo(leased).length, 0);

      const next = await startTestApp({ database: shared, clock, env: { SMTP_URL: sink.url } });
      try {
        await sink.waitFor((m) => m.to.includes(stored));
        await next.deps.mailer.idle();
        assert.equal((await outboxRow(next, stored)).status, 'sent');
        assert.equal((await outboxRow(next, retried)).status, 'pending', 'its retry is not due yet');
        assert.equal((await outboxRow(next, leased)).lease_owner, 'dead-worker');

        clock.advance(MAIL_RETRY_SCHEDULE_MS[0] ?? 0);
        await next.deps.mailer.idle();
        const sent = await outboxRow(next, retried);
        assert.equal(sent.status, 'sent');
        assert.equal(sent.attempt_count, 2);
        assert.equal(sent.error_message, null);
        assert.equal(sink.messagesTo(leased).length, 0, 'the lease still holds');

        clock.advance(MAIL_LEASE_MS - (MAIL_RETRY_SCHEDULE_MS[0] ?? 0));
        await next.deps.mailer.idle();
        const recovered = await outboxRow(next, leased);
        assert.equal(recovered.status, 'sent');
        assert.equal(recovered.attempt_count, 1, 'the attempt the dead node never made');
        for (const to of [stored, retried, leased]) assert.equal(sink.messagesTo(to).length, 1, to);
      } finally {
        await next.close();
      }
    });

    test('workers of two processes send each message exactly once', async () => {
      const env = { SMTP_URL: sink.url, RUN_WORKER: 'false' };
      const a = await startTestApp({ database: shared, env });
      // On SQLite both use A's connection: two connections of one process would block each other's
      // synchronous BEGIN IMMEDIATE (separate processes wait on the busy timeout); there the claims
      // are serialised by the single writer, on PostgreSQL they race through SKIP LOCKED.
      const b = IS_POSTGRES ? await startTestApp({ database: shared, env, clock: a.clock }) : a;
      try {
        const recipients = Array.from({ length: 60 }, (_, i) => uniqueEmail(`both-${i}`));
        for (const [i, to] of recipients.entries()) await (i % 2 === 0 ? a : b).deps.mailer.send(message(to));
        // Small batches, two workers per process, all at once: their claims interleave.
        const workers = [a, a, b, b].map((t) => createMailWorker(t.deps, { batchSize: 3, maxInFlight: 3 }));
        const claimed = await Promise.all(workers.map(drain));
        assert.equal(
          claimed.reduce((sum, n) => sum + n, 0),
          recipients.length,
          'each message claimed once',
        );
        await Promise.all([a.deps.mailer.idle(), b.deps.mailer.idle()]);
        for (const to of recipients) {
          assert.equal(sink.messagesTo(to).length, 1, `${to} received once`);
          const row = await outboxRow(a, to);
          assert.equal(row.status, 'sent');
          assert.equal(row.attempt_count, 1);
        }
      } finally {
        if (b !== a) await b.close();
        await a.close();
      }
    });

    test('without SMTP_URL a message stays logged and no worker ever takes it', async () => {
      const quiet = await startTestApp({ database: shared });
      const to = uniqueEmail('logged');
      try {
        await quiet.deps.mailer.send(message(to));
        assert.ok(quiet.logs.some((l) => l.msg === 'e-mail kept in outbox (no SMTP_URL)' && l.to === to));
        await quiet.deps.mailer.idle();
      } finally {
        await quiet.close();
      }
      // A process with SMTP on the same database, a day later, does not send it either.
      const clock = new ManualClock(quiet.clock.now().getTime() + 86_400_000);
      const sender = await startTestApp({ database: shared, clock, env: { SMTP_URL: sink.url } });
      try {
        assert.equal(await createMailWorker(sender.deps).runOnce(), 0);
        await sender.deps.mailer.idle();
        assert.deepEqual(await outboxRow(sender, to), {
          status: 'logged',
          attempt_count: 0,
          error_message: null,
          sent_at: null,
          due_at: null,
          next_retry_at: null,
          lease_owner: null,
        });
        assert.equal(sink.messagesTo(to).length, 0);
      } finally {
        await sender.close();
      }
    });
  });

  test('messages the previous release stored stay as they were: none is sent', async () => {
    const database = await createSharedTestDatabase();
    try {
      const sentAt = new Date('2026-03-09T12:00:01.000Z');
      const old = [
        { id: 'old-logged', to: uniqueEmail('old-logged'), status: 'logged', error: null, sentAt: null },
        { id: 'old-sent', to: uniqueEmail('old-sent'), status: 'sent', error: null, sentAt },
        { id: 'old-failed', to: uniqueEmail('old-failed'), status: 'failed', error: 'refused', sentAt: null },
      ];
      await previousRelease(database, old);
      // Starting the app migrates the database; its mail worker runs.
      const t = await startTestApp({ database, env: { SMTP_URL: sink.url } });
      try {
        t.clock.advance(86_400_000);
        await t.deps.mailer.idle();
        for (const r of old) {
          assert.deepEqual(await outboxRow(t, r.to), {
            status: r.status,
            attempt_count: 0,
            error_message: r.error,
            sent_at: toIsoOrNull(r.sentAt),
            due_at: null,
            next_retry_at: null,
            lease_owner: null,
          });
          assert.equal(sink.messagesTo(r.to).length, 0);
        }
      } finally {
        await t.close();
      }
    } finally {
      await database.drop();
    }
  });
});

describe('e-mail jobs in server and worker processes', () => {
  let sink: SmtpSink;
  let database: TestDatabase;
  let dir: string;
  before(async () => {
    sink = await startSmtpSink();
    database = await createProcessDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-mail-'));
  });
  after(async () => {
    await sink?.close();
    await database?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The status of the newest reset e-mail to `email`, read from the processes' database. */
  async function resetMailStatus(email: string): Promise<string | undefined> {
    const target = parseDatabaseUrl(database.url);
    assert.ok(target);
    const handle = openDatabase(target);
    try {
      const row = await handle.db
        .selectFrom('email_outbox')
        .select('status')
        .where('to_address', '=', email)
        .where('subject', '=', 'Reset your password')
        .executeTakeFirst();
      return row?.status;
    } finally {
      await handle.close();
    }
  }

  test('a server sends through its engine; with RUN_WORKER=false a worker process sends', async () => {
    const env = { SMTP_URL: sink.url };
    const email = uniqueEmail('processes');
    const server = await spawnServer(database, dir, env);
    try {
      await httpExpect(201, server.base, 'POST', '/auth/register', {
        body: { email, password: 'correct horse battery staple' },
      });
      const verification = await sink.waitFor((m) => m.to.includes(email), 10_000);
      assert.equal(verification.subject, 'Verify your e-mail address', server.output());
    } finally {
      await server.stop();
    }

    const api = await spawnServer(database, dir, { ...env, RUN_WORKER: 'false' });
    try {
      await httpExpect(202, api.base, 'POST', '/auth/password-reset/request', { body: { email } });
      // The reset e-mail is stored after the answer; nothing on this node sends it.
      const deadline = Date.now() + 10_000;
      while ((await resetMailStatus(email)) === undefined && Date.now() < deadline) await sleep(50);
      assert.equal(await resetMailStatus(email), 'pending', api.output());
      assert.deepEqual(
        sink.messagesTo(email).map((m) => m.subject),
        ['Verify your e-mail address'],
      );

      const worker = spawn(process.execPath, ['src/worker.ts'], {
        env: {
          ...process.env,
          DATA_DIR: dir,
          DATABASE_URL: database.url,
          JWT_SECRET: TEST_JWT_SECRET,
          ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
          LOG_LEVEL: 'warn',
          ...env,
        },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      try {
        const reset = await sink.waitFor((m) => m.to.includes(email) && /reset/i.test(m.subject), 15_000);
        assert.ok(reset.token, 'the reset e-mail carries its token');
      } finally {
        worker.kill('SIGTERM');
        await exited;
      }
      assert.equal(await resetMailStatus(email), 'sent');
    } finally {
      await api.stop();
    }
  });
});
