/**
 * A webhook's health over the last 24 hours (GET /webhooks/{id}/health): success rate, median and
 * 95th-percentile attempt duration, the last failure and the failures since the last success.
 */
import { failureMessage } from '../../api/queries.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { formatDuration } from './DeliveriesTable.tsx';
import { useWebhookHealth } from './webhooksApi.ts';

function percent(rate: number | null): string {
  if (rate === null) return 'no attempts';
  return `${(rate * 100).toFixed(rate === 1 || rate === 0 ? 0 : 1)} %`;
}

export function WebhookHealthPanel({ webhookId }: { webhookId: string }) {
  const health = useWebhookHealth(webhookId);
  const h = health.data;
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Health, last 24 hours</h2>
      <Notice kind="error">{failureMessage(health.error)}</Notice>
      {h === undefined ? (
        health.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <dl className="facts">
          <dt>Success rate</dt>
          <dd>
            {percent(h.success_rate)}
            {h.attempts > 0 ? ` of ${h.attempts} ${h.attempts === 1 ? 'attempt' : 'attempts'}` : ''}
          </dd>
          <dt>Duration p50 / p95</dt>
          <dd>
            {formatDuration(h.p50_ms)} / {formatDuration(h.p95_ms)}
          </dd>
          <dt>Last failure</dt>
          <dd>
            {h.last_failure_at ? (
              <>
                <time dateTime={h.last_failure_at}>{formatTime(h.last_failure_at)}</time>:{' '}
                {h.last_failure_message}
              </>
            ) : (
              'none'
            )}
          </dd>
          <dt>Consecutive failures</dt>
          <dd>{h.consecutive_failures}</dd>
        </dl>
      )}
    </section>
  );
}
