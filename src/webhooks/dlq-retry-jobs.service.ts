/**
 * POST /webhooks/dlq/retry-matching and its status (contract §5 "Operating deliveries", ADR 018):
 * the request measures the set and stores the job; the job engine's retry worker
 * (dlq-retry-job.ts) works through it in batches. Plain functions of a context.
 */
import { withTransaction } from '../db/transaction.ts';
import { NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { DeliveriesContext } from './deliveries.service.ts';
import {
  findRetryJob,
  insertRetryJob,
  measureSet,
  type RetryFilter,
  type RetryJob,
} from './dlq-retry-jobs.repository.ts';

/**
 * Entries one job takes on at most: the oldest this many of the matching set. The rest stay in the
 * queue, not requeued; the same request made again once the job is done takes the next ones.
 */
export const RETRY_MATCHING_MAX = 100_000;

export async function startRetryJob(
  ctx: DeliveriesContext,
  workspaceId: string,
  filter: RetryFilter,
): Promise<RetryJob> {
  const job = await withTransaction(ctx.db, async (trx) => {
    const { matched, bound } = await measureSet(trx, workspaceId, filter, RETRY_MATCHING_MAX);
    const created = {
      id: uuidv7(),
      workspaceId,
      filter,
      bound,
      matched,
      // Nothing to do: done at once, and no worker is woken for it.
      status: matched === 0 ? ('done' as const) : ('running' as const),
      createdAt: ctx.clock.now(),
    };
    await insertRetryJob(trx, created);
    return created;
  });
  if (job.status === 'running') ctx.signals.deadLetterRetries.notify();
  return {
    ...job,
    cursor: null,
    queued: 0,
    failed: 0,
    finishedAt: job.status === 'done' ? job.createdAt : null,
  };
}

export async function retryJobStatus(
  ctx: DeliveriesContext,
  workspaceId: string,
  jobId: string,
): Promise<RetryJob> {
  const job = await findRetryJob(ctx.db, workspaceId, jobId);
  if (!job) throw new NotFoundError('Retry job');
  return job;
}
