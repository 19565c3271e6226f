/**
 * "Retry all matching this filter" on the dead-letter page: ONE server job
 * (POST /webhooks/dlq/retry-matching) takes every entry matching the page's filters, across all
 * pages, that was not retried yet; the page then follows the job (GET …/{job_id}, once a second)
 * and shows matched / queued / failed until it is done, then reloads the list.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { errorMessage, thrownMessage } from '../../api/client.ts';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { Notice } from '../../ui/forms.tsx';
import type { DeadLetterFilters } from './filters.ts';
import type { RetryJob } from './types.ts';
import { getRetryJob, retryMatching } from './webhooksApi.ts';

const POLL_MS = 1000;

/** Follows a running job until it is done; each answer goes to `onJob`. */
function useJobPolling(job: RetryJob | null, onJob: (job: RetryJob) => void, onError: (e: string) => void) {
  const onJobRef = useRef(onJob);
  onJobRef.current = onJob;
  const onErrorRef = useRef(onError);
  onErrorRef.current = onError;
  const running = job?.status === 'running' ? job.job_id : null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: each answer moves `job` on, which schedules the next look
  useEffect(() => {
    if (running === null) return;
    const abort = new AbortController();
    const timer = setTimeout(() => {
      getRetryJob(running, abort.signal)
        .then(({ data, error }) => {
          if (data) onJobRef.current(data);
          else onErrorRef.current(errorMessage(error));
        })
        .catch((thrown: unknown) => {
          if (!abort.signal.aborted) onErrorRef.current(thrownMessage(thrown));
        });
    }, POLL_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [running, job]);
}

export interface RetryMatchingState {
  job: RetryJob | null;
  error: string | null;
  start(): Promise<void>;
}

/** Starts the job for `filters` and follows it; `onFinished` once it is done (the list is stale). */
export function useRetryMatching(filters: DeadLetterFilters, onFinished: () => void): RetryMatchingState {
  const [job, setJob] = useState<RetryJob | null>(null);
  const [error, setError] = useState<string | null>(null);
  useJobPolling(
    job,
    (next) => {
      setJob(next);
      if (next.status === 'done') onFinished();
    },
    setError,
  );
  const start = async (): Promise<void> => {
    setError(null);
    const { data, error: failure } = await retryMatching(filters);
    if (!data) {
      setError(errorMessage(failure));
      return;
    }
    const started: RetryJob = {
      job_id: data.job_id,
      status: data.matched === 0 ? 'done' : 'running',
      matched: data.matched,
      queued: 0,
      failed: 0,
      created_at: new Date().toISOString(),
      finished_at: null,
    };
    setJob(started);
    if (started.status === 'done') onFinished();
  };
  return { job, error, start };
}

/** The button (with its confirmation), for the page's action bar. */
export function RetryMatchingButton({
  state,
  filters,
  disabled,
}: {
  state: RetryMatchingState;
  filters: DeadLetterFilters;
  disabled: boolean;
}) {
  const onlyRetried = filters.requeued === 'true';
  return (
    <>
      <ConfirmButton
        question="Retry every dead letter matching these filters that was not retried yet, on every page?"
        confirmLabel="Retry all"
        disabled={disabled || state.job?.status === 'running' || onlyRetried}
        onConfirm={state.start}
      >
        Retry all matching this filter
      </ConfirmButton>
      {onlyRetried ? <span className="hint">Entries already retried are not retried again.</span> : null}
    </>
  );
}

/** The job's progress: matched, queued and failed, as a bar and a live status line. */
export function RetryMatchingReport({ state }: { state: RetryMatchingState }) {
  const id = useId();
  const { job } = state;
  return (
    <>
      <Notice kind="error">{state.error}</Notice>
      {job ? (
        <section className="bulk-report" aria-labelledby={`${id}-title`}>
          <h2 id={`${id}-title`}>
            Retry of all matching: {job.matched === 1 ? '1 entry' : `${job.matched} entries`}
          </h2>
          <progress
            value={job.queued + job.failed}
            max={Math.max(job.matched, 1)}
            aria-labelledby={`${id}-title`}
          />
          <p role="status" aria-live="polite" data-testid="retry-matching-progress">
            {job.matched === 0
              ? 'No entry matches these filters: nothing to retry.'
              : `${job.status === 'done' ? 'Done' : 'Retrying'}: ${job.matched} matched, ${job.queued} queued, ${job.failed} failed${job.status === 'done' ? '.' : '…'}`}
          </p>
          {job.status === 'done' && job.failed > 0 ? (
            <p className="hint">Failed entries belong to webhooks deleted since; they stay in the list.</p>
          ) : null}
        </section>
      ) : null}
    </>
  );
}
