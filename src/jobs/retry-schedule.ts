/**
 * The retry schedule every job kind follows (WEBHOOK_RETRY_SCHEDULE, contract §5, §6): attempt n
 * failing before the last is tried again `scheduleMs[n-1]` after it ended; the last attempt, or one
 * its kind calls final (a template over its bounds), ends the job for good.
 */
export type AfterAttempt = { ended: true } | { ended: false; retryAt: Date };

export function afterAttempt(
  scheduleMs: readonly number[],
  attempt: number,
  finishedAt: Date,
  outcome: { success: boolean; final?: boolean | undefined },
): AfterAttempt {
  if (outcome.success || outcome.final === true || attempt >= scheduleMs.length + 1) return { ended: true };
  return { ended: false, retryAt: new Date(finishedAt.getTime() + (scheduleMs[attempt - 1] ?? 0)) };
}
