/** Rows of deliveries: time (the link to the delivery), webhook, event, status, response, duration, attempts. */
import { Link } from '../../app/Link.tsx';
import { formatTime } from '../../ui/format.ts';
import type { Delivery, Webhook } from './types.ts';
import { webhookLabel } from './useWebhookNames.ts';

export function StatusBadge({ status }: { status: Delivery['status'] }) {
  return <span className={`badge badge-${status}`}>{status}</span>;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function DeliveriesTable({
  deliveries,
  names,
  caption,
}: {
  deliveries: Delivery[];
  names: Map<string, Webhook>;
  caption: string;
}) {
  return (
    <div className="table-wrap">
      <table className="deliveries-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Webhook</th>
            <th scope="col">Event type</th>
            <th scope="col">Status</th>
            <th scope="col">Response</th>
            <th scope="col">Duration</th>
            <th scope="col">Attempts</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id}>
              <td>
                <Link href={`/webhooks/deliveries/${d.id}`}>
                  <time dateTime={d.created_at}>{formatTime(d.created_at)}</time>
                </Link>
              </td>
              <td>
                {d.webhook_id ? (
                  <Link href={`/webhooks/${d.webhook_id}`}>{webhookLabel(names, d.webhook_id)}</Link>
                ) : (
                  webhookLabel(names, null)
                )}
              </td>
              <td>
                <code>{d.event_type}</code>
              </td>
              <td>
                <StatusBadge status={d.status} />
              </td>
              <td className="num">{d.response_status_code ?? '—'}</td>
              <td className="num">{formatDuration(d.response_time_ms)}</td>
              <td className="num">{d.attempt_count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
