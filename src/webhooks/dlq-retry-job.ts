/**
 * "Retry every dead letter matching this filter" as a kind of the one job loop (src/jobs/, ADR 020):
 * a claim leases due jobs; an attempt is one batch, in one transaction that holds the job's lease,
 * requeues each entry exactly as POST /webhooks/dlq/{dlq_id}/retry does, and moves the job's cursor
 * and counts. A process that dies mid-batch rolls the batch back whole; its lease runs out and any
 * worker resumes at the cursor, so no entry of the set is requeued twice and none is skipped. After
 * each batch the lease is given back (due now), so a long job is shared out batch by batch and a
 * shutdown never waits for more than one batch.
 */
import type { Logger } from 'pino';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { type JobKind, JobWorker } from '../jobs/job-worker.ts';
import type { JobSignals } from '../jobs/wake-signal.ts';
import type { Clock } from '../shared/clock.ts';
import { DomainError } from '../shared/errors.ts';
import { requeue } from './delivery-retries.service.ts';
import {
  claimRetryJobs,
  hasDueRetryJob,
  holdRetryJob,
  nextEntries,
  releaseRetryJobs,
  saveRetryProgress,
} from './dlq-retry-jobs.repository.ts';

/** Entries per batch: a short write transaction (a few statements each) even on SQLite's one writer. */
export const RETRY_BATCH = 200;
/** Far beyond a batch's time: only a worker that died loses its job before the batch commits. */
const LEASE_MS = 60_000;

export interface ClaimedRetryJob {
  id: string;
  workspaceId: string;
  workerId: string;
}

export interface RetryBatchOutcome {
  id: string;
  /** Deliveries queued by this batch (the delivery worker is woken for them). */
  queued: number;
  /** The job has more batches: the worker claims it again at once. */
  more: boolean;
}

export interface RetryJobKindOptions {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  signals: JobSignals;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  batchSize?: number;
}

export class RetryJobKind implements JobKind<ClaimedRetryJob, RetryBatchOutcome> {
  readonly name = 'dead-letter retry';
  private readonly o: RetryJobKindOptions;
  private readonly batchSize: number;

  constructor(options: RetryJobKindOptions) {
    this.o = options;
    this.batchSize = options.batchSize ?? RETRY_BATCH;
  }

  async claim(workerId: string, limit: number, now: Date): Promise<ClaimedRetryJob[]> {
    // Most polls find nothing: they only read, and take no write transaction (SQLite's one lock).
    if (!(await hasDueRetryJob(this.o.db, now))) return [];
    const leaseUntil = new Date(now.getTime() + LEASE_MS);
    const claimed = await withTransaction(this.o.db, (trx) =>
      claimRetryJobs(trx, this.o.capabilities, { now, workerId, limit, leaseUntil }),
    );
    return claimed.map((j) => ({ ...j, workerId }));
  }

  async execute(claimed: ClaimedRetryJob): Promise<RetryBatchOutcome> {
    const { db, capabilities, clock } = this.o;
    return withTransaction(db, async (trx) => {
      const now = clock.now();
      const job = await holdRetryJob(trx, claimed.id, claimed.workerId, new Date(now.getTime() + LEASE_MS));
      // The lease ran out and another worker has the job (or it is done): nothing to do here.
      if (!job) return { id: claimed.id, queued: 0, more: false };
      const entries = await nextEntries(trx, capabilities, job, this.batchSize);
      const ctx = { db, capabilities, clock, signals: this.o.signals };
      let queued = 0;
      let failed = 0;
      for (const entry of entries) {
        try {
          await requeue(ctx, trx, job.workspaceId, entry);
          queued += 1;
        } catch (error) {
          // A refusal (the entry's webhook was deleted) is decided by reads before any write of
          // the entry: counted, passed by the cursor, and the batch goes on.
          if (!(error instanceof DomainError)) throw error;
          failed += 1;
        }
      }
      const last = entries.at(-1);
      const cursor = last ? { queuedAt: last.queuedAt, id: last.id } : null;
      const done = last === undefined || (last.id === job.bound?.id && sameTime(last.queuedAt, job.bound));
      await saveRetryProgress(trx, job.id, { cursor, queued, failed, done, now });
      return { id: job.id, queued, more: !done };
    });
  }

  failure(job: ClaimedRetryJob): RetryBatchOutcome {
    // The batch rolled back; the lease runs out and the job is resumed at its cursor.
    return { id: job.id, queued: 0, more: false };
  }

  async record(_workerId: string, outcomes: readonly RetryBatchOutcome[]): Promise<void> {
    // Each batch committed in its own attempt; here only the wake-ups.
    if (outcomes.some((o) => o.queued > 0)) this.o.signals.deliveries.notify();
    if (outcomes.some((o) => o.more)) this.o.signals.deadLetterRetries.notify();
  }

  async release(workerId: string, ids: readonly string[], now: Date): Promise<void> {
    await releaseRetryJobs(this.o.db, workerId, ids, now);
  }
}

function sameTime(a: Date, bound: { queuedAt: Date } | null): boolean {
  return bound !== null && a.getTime() === bound.queuedAt.getTime();
}

export type RetryJobWorker = JobWorker<ClaimedRetryJob, RetryBatchOutcome>;

export function createRetryJobWorker(options: RetryJobKindOptions & { workerId?: string }): RetryJobWorker {
  return new JobWorker(new RetryJobKind(options), {
    clock: options.clock,
    logger: options.logger,
    // A few jobs at once: each batch is a write transaction, and SQLite has one writer.
    batchSize: 4,
    maxInFlight: 4,
    workerId: options.workerId,
  });
}
