/**
 * Outgoing e-mails as a job kind of the one job loop (`src/jobs/job-worker.ts`, ADR 020): a claim
 * leases due `pending` messages of `email_outbox`, each attempt is one SMTP send through the
 * mailer's transport, and outcomes are recorded in groups where the lease is still held — sent,
 * a retry on MAIL_RETRY_SCHEDULE_MS, or failed for good with its reason. A process without SMTP
 * configured claims nothing: its messages are `logged`, and another process's `pending` ones wait
 * for a worker that can send them.
 *
 * The kind also knows which claims and attempts of its process are under way (`settled()`), so
 * that `Mailer.idle()` can wait for the worker's sends as well as make its own.
 */
import type { Logger } from 'pino';
import { isConnectionFailure } from '../db/availability.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { type JobKind, JobWorker } from '../jobs/job-worker.ts';
import { afterAttempt } from '../jobs/retry-schedule.ts';
import type { Clock } from '../shared/clock.ts';
import {
  type ClaimedMessage,
  claimDueMessages,
  hasDueMessage,
  type MessageOutcome,
  recordMessageOutcomes,
  releaseMessageLeases,
} from './email-outbox.repository.ts';
import type { MailMessage } from './mailer.ts';

export type { ClaimedMessage } from './email-outbox.repository.ts';

/**
 * Delays between attempts: 1 min, 5 min, 30 min, 2 h, 6 h — six attempts over about 8.5 hours,
 * long enough to outlast a mail server's restart or a night's outage, short enough that a reset
 * or invitation link (valid 1 hour and 7 days) still arrives while it is of use. Then the message
 * is `failed`, kept with its reason.
 */
export const MAIL_RETRY_SCHEDULE_MS: readonly number[] = [
  60_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  6 * 3_600_000,
];

/**
 * How long a claimed message is the worker's: far beyond the transport's own bounds (5 s to
 * connect, 5 s for the greeting, 10 s of silence), so only a worker that died loses it, and
 * another process sends it once the lease has run out.
 */
export const MAIL_LEASE_MS = 120_000;

export interface MailAttempt {
  job: ClaimedMessage;
  finishedAt: Date;
  /** Null when the server took the message. */
  errorMessage: string | null;
  /** The server refused the message itself: another attempt would be refused the same way. */
  final: boolean;
}

export interface MailJobOptions {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** One SMTP attempt, resolved once the server took the message. Undefined without SMTP_URL. */
  send: ((message: MailMessage) => Promise<void>) | undefined;
  /** Blanks the credentials of SMTP_URL in what is kept and logged. */
  redact(text: string): string;
  retryScheduleMs?: readonly number[];
  leaseMs?: number;
}

export type MailWorker = JobWorker<ClaimedMessage, MailAttempt>;

export interface MailWorkerOptions {
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  batchSize?: number;
  maxInFlight?: number;
  workerId?: string;
}

/** A worker of the mail kind: the engine starts one; `Mailer.idle()` runs rounds of another. */
export function createMailJobWorker(kind: MailJobKind, options: MailWorkerOptions): MailWorker {
  return new JobWorker(kind, {
    clock: options.clock,
    logger: options.logger,
    // A few dozen at once: each is a connection to the mail server, which may count them.
    batchSize: options.batchSize ?? 20,
    maxInFlight: options.maxInFlight ?? 20,
    workerId: options.workerId,
  });
}

/**
 * A refusal of the message itself (of its sender, its recipient or its content) with a permanent
 * reply (5xx, or none: nodemailer refused it before sending) is final (RFC 5321 §4.2.1). A server
 * that cannot be reached, a refused login or a temporary reply (4xx) is retried: the next attempt
 * may go through.
 */
function isFinal(error: unknown): boolean {
  const { code, responseCode } = (error ?? {}) as { code?: unknown; responseCode?: unknown };
  if (code !== 'EENVELOPE' && code !== 'EMESSAGE') return false;
  return typeof responseCode !== 'number' || responseCode >= 500;
}

export class MailJobKind implements JobKind<ClaimedMessage, MailAttempt> {
  readonly name = 'e-mail';
  private readonly o: MailJobOptions;
  private readonly scheduleMs: readonly number[];
  private readonly leaseMs: number;
  /** Claims under way, and messages claimed whose outcome is not recorded (nor given back) yet. */
  private claiming = 0;
  private readonly open = new Set<string>();
  private waiters: Array<() => void> = [];

  constructor(options: MailJobOptions) {
    this.o = options;
    this.scheduleMs = options.retryScheduleMs ?? MAIL_RETRY_SCHEDULE_MS;
    this.leaseMs = options.leaseMs ?? MAIL_LEASE_MS;
  }

  async claim(workerId: string, limit: number, now: Date): Promise<ClaimedMessage[]> {
    // Without SMTP nothing could be sent: the database is not even asked.
    if (!this.o.send) return [];
    this.claiming += 1;
    try {
      // Never one this process is sending: should the clock have passed its lease (a test's manual
      // clock moved on), taking it again would send it twice.
      const exclude = [...this.open];
      // Most polls find nothing: they only read, and take no write transaction (SQLite's one lock).
      if (!(await hasDueMessage(this.o.db, now, exclude))) return [];
      const leaseUntil = new Date(now.getTime() + this.leaseMs);
      const claimed = await withTransaction(this.o.db, (trx) =>
        claimDueMessages(trx, this.o.capabilities, { now, workerId, limit, leaseUntil, exclude }),
      );
      for (const job of claimed) this.open.add(job.id);
      return claimed;
    } finally {
      this.claiming -= 1;
      this.wakeIfSettled();
    }
  }

  async execute(job: ClaimedMessage): Promise<MailAttempt> {
    const send = this.o.send;
    if (!send) throw new Error('SMTP_URL is not configured');
    try {
      await send(job.message);
      return { job, finishedAt: this.o.clock.now(), errorMessage: null, final: false };
    } catch (error) {
      const reason = this.o.redact(error instanceof Error ? error.message : String(error));
      return { job, finishedAt: this.o.clock.now(), errorMessage: `SMTP: ${reason}`, final: isFinal(error) };
    }
  }

  failure(job: ClaimedMessage): MailAttempt {
    return {
      job,
      finishedAt: this.o.clock.now(),
      errorMessage: 'Internal error: the attempt could not be made',
      final: false,
    };
  }

  async record(workerId: string, attempts: readonly MailAttempt[]): Promise<void> {
    let done = true;
    try {
      const outcomes = attempts.map((a) => this.outcomeOf(a));
      const written = new Set(
        await withTransaction(this.o.db, (trx) =>
          recordMessageOutcomes(trx, this.o.capabilities, workerId, outcomes),
        ),
      );
      for (const [i, outcome] of outcomes.entries()) {
        const to = attempts[i]?.job.message.to;
        const fields = { mailId: outcome.id, to, attempt: outcome.attempt, worker: workerId };
        if (!written.has(outcome.id)) {
          this.o.logger.warn(fields, 'e-mail attempt not recorded: its lease had run out');
        } else if (outcome.kind === 'retry') {
          this.o.logger.warn(
            { ...fields, err: outcome.errorMessage, retry_at: outcome.retryAt.toISOString() },
            'e-mail attempt failed; it will be retried',
          );
        } else if (outcome.kind === 'failed') {
          this.o.logger.error({ ...fields, err: outcome.errorMessage }, 'e-mail failed for good');
        }
      }
    } catch (error) {
      // The loop keeps these outcomes and records them once the database answers: still this
      // process's. After any other error their leases run out and they are attempted again.
      if (isConnectionFailure(error)) done = false;
      throw error;
    } finally {
      if (done) {
        for (const a of attempts) this.open.delete(a.job.id);
        this.wakeIfSettled();
      }
    }
  }

  async release(workerId: string, ids: readonly string[], now: Date): Promise<void> {
    try {
      await releaseMessageLeases(this.o.db, workerId, ids, now);
    } finally {
      for (const id of ids) this.open.delete(id);
      this.wakeIfSettled();
    }
  }

  /** No claim of this process under way, and every message claimed recorded or given back. */
  get isSettled(): boolean {
    return this.claiming === 0 && this.open.size === 0;
  }

  /** Resolves once `isSettled`. */
  settled(): Promise<void> {
    if (this.isSettled) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private wakeIfSettled(): void {
    if (!this.isSettled || this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private outcomeOf(a: MailAttempt): MessageOutcome {
    const { id, attempt } = a.job;
    if (a.errorMessage === null) return { id, attempt, kind: 'sent', at: a.finishedAt };
    const step = afterAttempt(this.scheduleMs, attempt, a.finishedAt, { success: false, final: a.final });
    return step.ended
      ? { id, attempt, kind: 'failed', errorMessage: a.errorMessage }
      : { id, attempt, kind: 'retry', errorMessage: a.errorMessage, retryAt: step.retryAt };
  }
}
