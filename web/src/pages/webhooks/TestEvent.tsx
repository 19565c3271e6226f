/**
 * "Send test event": queues a `webhook.test` delivery, then follows it (polling the delivery for a
 * little while) until its first attempt is done, and says how the receiver answered.
 */
import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import type { DeliveryDetail } from './types.ts';
import { getDelivery, sendTestEvent } from './webhooksApi.ts';

const POLL_MS = 500;
/** How long the page follows the test delivery before leaving it to the deliveries list. */
const FOLLOW_MS = 30_000;

export function TestEvent({ webhookId, onDone }: { webhookId: string; onDone?(): void }) {
  const [deliveryId, setDeliveryId] = useState<string | null>(null);
  const [delivery, setDelivery] = useState<DeliveryDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [waiting, setWaiting] = useState(false);
  const onDoneRef = useRef(onDone);
  onDoneRef.current = onDone;

  useEffect(() => {
    if (deliveryId === null) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const until = Date.now() + FOLLOW_MS;
    const poll = async (): Promise<void> => {
      const { data } = await getDelivery(deliveryId).catch(() => ({ data: undefined }));
      if (stopped) return;
      if (data) setDelivery(data);
      const done = data !== undefined && (data.status !== 'pending' || data.attempt_count > 0);
      if (done || Date.now() > until) {
        setWaiting(false);
        onDoneRef.current?.();
        return;
      }
      timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [deliveryId]);

  const send = async (): Promise<void> => {
    setError(null);
    setDelivery(null);
    const { data, error: failure } = await sendTestEvent(webhookId);
    if (!data) return setError(errorMessage(failure));
    setWaiting(true);
    setDeliveryId(data.delivery_id);
  };

  return (
    <div className="test-event">
      <button type="button" disabled={waiting} onClick={() => void send()}>
        Send test event
      </button>
      <div role="status" className="test-result">
        {waiting ? <p>Test event sent; waiting for the receiver…</p> : null}
        {!waiting && delivery ? <TestResult delivery={delivery} /> : null}
      </div>
      <Notice kind="error">{error}</Notice>
    </div>
  );
}

function TestResult({ delivery }: { delivery: DeliveryDetail }) {
  const link = <Link href={`/webhooks/deliveries/${delivery.id}`}>See the delivery</Link>;
  const code = delivery.response_status_code;
  const took = delivery.response_time_ms === null ? '' : ` in ${Math.round(delivery.response_time_ms)} ms`;
  if (delivery.status === 'success')
    return (
      <p className="result-ok">
        Test event delivered: <span className="badge badge-success">success</span> (HTTP {code}
        {took}). {link}
      </p>
    );
  if (delivery.attempt_count === 0) return <p>The test event is still queued. {link} to follow it.</p>;
  const why = delivery.error_message ?? (code === null ? 'no answer' : `HTTP ${code}`);
  return (
    <p className="result-failed">
      Test event not delivered: <span className="badge badge-failed">{delivery.status}</span> ({why}
      {took}).
      {delivery.next_retry_at ? ` Next attempt ${formatTime(delivery.next_retry_at)}.` : ''} {link}
    </p>
  );
}
