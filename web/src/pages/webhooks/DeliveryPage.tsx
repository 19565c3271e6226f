/**
 * /webhooks/deliveries/{id}: one delivery and its attempts as a timeline (request headers and body,
 * the receiver's answer or the error), with "Retry now" and "Resend" (any status: a new delivery
 * of the same event, which the page then shows). While an attempt is due the page looks again every
 * few seconds (deliveryPolling.ts), so a retry's outcome shows without a reload.
 *
 * Attempts are numbered per delivery (as `X-SVC-Attempt` was sent): a dead-letter retry or a
 * resend is a new delivery whose attempts start at 1, and the page links the delivery it repeats,
 * whose own attempts stay listed there.
 */
import { useCallback, useState } from 'react';
import { errorMessage, thrownMessage } from '../../api/client.ts';
import { failureMessage, useInvalidate } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { ScrollRegion } from '../../ui/ScrollRegion.tsx';
import { StatusBadge } from '../../ui/StatusBadge.tsx';
import { formatDuration, subjectLabel, webhookLabel } from './DeliveriesTable.tsx';
import { useDeliveryPolling } from './deliveryPolling.ts';
import { type Attempt, type DeliveryDetail, ORIGIN_LABELS } from './types.ts';
import { deliveryKeys, resendDelivery, retryDelivery, useDelivery, useWebhookNames } from './webhooksApi.ts';

export function DeliveryPage({ id }: { id: string }) {
  const delivery = useDelivery(id);
  const invalidate = useInvalidate();
  const names = useWebhookNames();
  const [message, setMessage] = useState<string | null>(null);
  /** A failed delivery is retried as a new one (through its dead-letter entry): its id. */
  const [retriedAs, setRetriedAs] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** When "Retry now" last succeeded: the page keeps looking for a while after. */
  const [retriedAt, setRetriedAt] = useState<number | null>(null);
  const d = delivery.data ?? null;
  const { refetch } = delivery;
  const reload = useCallback(() => void refetch(), [refetch]);
  useDeliveryPolling(d, delivery.isFetching, retriedAt, reload);

  const retry = async (): Promise<void> => {
    setBusy(true);
    try {
      const { data, error: failure } = await retryDelivery(id);
      if (data) {
        setError(null);
        setRetriedAt(Date.now());
        if (data.delivery_id === id) {
          setMessage('Retry queued: the next attempt starts now.');
        } else {
          setMessage('Retry queued as a new delivery with the same payload.');
          setRetriedAs(data.delivery_id);
        }
        invalidate(deliveryKeys.all);
      } else {
        setMessage(null);
        setError(errorMessage(failure));
      }
    } catch (thrown) {
      setMessage(null);
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  const resend = async (): Promise<void> => {
    setBusy(true);
    try {
      const { data, error: failure } = await resendDelivery(id);
      if (data) {
        invalidate(deliveryKeys.all);
        navigate(`/webhooks/deliveries/${data.delivery_id}`);
      } else {
        setMessage(null);
        setError(errorMessage(failure));
      }
    } catch (thrown) {
      setMessage(null);
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  if (d === null)
    return (
      <>
        <h1>Delivery</h1>
        {delivery.error ? (
          <Notice kind="error">{failureMessage(delivery.error)}</Notice>
        ) : (
          <p role="status">Loading…</p>
        )}
      </>
    );
  return (
    <>
      <div className="page-head">
        <h1>
          Delivery <code>{d.event_type}</code>
        </h1>
        <StatusBadge status={d.status} />
      </div>
      <dl className="facts delivery-facts">
        <dt>Webhook</dt>
        <dd>
          {d.webhook_id ? (
            <Link href={`/webhooks/${d.webhook_id}`}>{webhookLabel(names, d.webhook_id)}</Link>
          ) : (
            webhookLabel(names, null)
          )}
        </dd>
        <dt>Origin</dt>
        <dd>
          {ORIGIN_LABELS[d.origin]}
          {d.source_delivery_id ? (
            <>
              {' of '}
              <Link href={`/webhooks/deliveries/${d.source_delivery_id}`}>the earlier delivery</Link>
              <span className="hint"> (its attempts are listed there; this one counts its own from 1)</span>
            </>
          ) : null}
        </dd>
        <dt>Device · geofence</dt>
        <dd>{subjectLabel(d)}</dd>
        <dt>Request</dt>
        <dd>
          <code>
            {d.method} {d.url}
          </code>
        </dd>
        <dt>Created</dt>
        <dd>{formatTime(d.created_at)}</dd>
        <dt>Delivered</dt>
        <dd>{d.delivered_at ? formatTime(d.delivered_at) : '—'}</dd>
        {d.next_retry_at ? (
          <>
            <dt>Next attempt</dt>
            <dd>{formatTime(d.next_retry_at)}</dd>
          </>
        ) : null}
        <dt>Attempts</dt>
        <dd>{d.attempt_count}</dd>
        <dt>Event id</dt>
        <dd>
          <code>{d.event_id}</code>
        </dd>
        <dt>Idempotency key</dt>
        <dd>
          <code>{d.idempotency_key}</code>
        </dd>
      </dl>
      <div className="button-row">
        {/* Retried as a new delivery: a second retry would send the payload twice; the link below leads on. */}
        {d.status === 'success' || retriedAs ? null : (
          <button type="button" disabled={busy} onClick={() => void retry()}>
            Retry now
          </button>
        )}
        {d.webhook_id ? (
          <button type="button" disabled={busy} onClick={() => void resend()}>
            Resend
          </button>
        ) : null}
        {d.status === 'success' ? null : (
          <button type="button" onClick={reload}>
            Refresh
          </button>
        )}
      </div>
      {d.webhook_id ? (
        <p className="hint">
          Resend sends this event again as a new delivery, with the same payload and idempotency key.
        </p>
      ) : null}
      <p role="status">
        {message ?? ''}{' '}
        {retriedAs ? <Link href={`/webhooks/deliveries/${retriedAs}`}>Follow the new delivery</Link> : null}
      </p>
      <Notice kind="error">{error}</Notice>
      <section aria-labelledby="attempts-title">
        <h2 id="attempts-title">Attempts</h2>
        {d.attempts.length === 0 ? (
          <p>No attempt yet.</p>
        ) : (
          <ol className="timeline">
            {d.attempts.map((a) => (
              <AttemptItem key={a.n} attempt={a} delivery={d} />
            ))}
          </ol>
        )}
      </section>
    </>
  );
}

function AttemptItem({ attempt: a, delivery }: { attempt: Attempt; delivery: DeliveryDetail }) {
  const ok = a.response_status_code !== null && a.response_status_code < 300 && a.error_message === null;
  return (
    <li className={`attempt ${ok ? 'attempt-ok' : 'attempt-failed'}`}>
      <h3>
        Attempt {a.n}{' '}
        <span className={`badge ${ok ? 'badge-success' : 'badge-failed'}`}>
          {a.response_status_code === null ? 'no response' : `HTTP ${a.response_status_code}`}
        </span>
      </h3>
      <dl className="facts">
        <dt>Started</dt>
        <dd>
          <time dateTime={a.started_at}>{formatTime(a.started_at)}</time>
        </dd>
        <dt>Duration</dt>
        <dd>{formatDuration(a.duration_ms)}</dd>
        <dt>Response status</dt>
        <dd>{a.response_status_code ?? '—'}</dd>
        {a.error_message ? (
          <>
            <dt>Error</dt>
            <dd className="attempt-error">{a.error_message}</dd>
          </>
        ) : null}
      </dl>
      {a.response_body_excerpt ? (
        <div className="excerpt">
          <h4>Response body (excerpt)</h4>
          <ScrollRegion label={`Response body of attempt ${a.n}`} className="scroll-box">
            {a.response_body_excerpt}
          </ScrollRegion>
        </div>
      ) : null}
      <details>
        <summary>Request headers</summary>
        {a.request_headers ? (
          <dl className="facts headers-list">
            {Object.entries(a.request_headers).map(([name, value]) => (
              <div key={name} className="header-pair">
                <dt>
                  <code>{name}</code>
                </dt>
                <dd>
                  <code>{value}</code>
                </dd>
              </div>
            ))}
          </dl>
        ) : (
          <p>Not recorded.</p>
        )}
      </details>
      <details>
        <summary>Request body</summary>
        {delivery.request_body === null ? (
          <p>No body (or not recorded).</p>
        ) : (
          <ScrollRegion label={`Request body of attempt ${a.n}`} className="scroll-box">
            {formatBody(delivery.request_body)}
          </ScrollRegion>
        )}
      </details>
    </li>
  );
}

/** JSON bodies indented for reading; anything else as sent. */
function formatBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
