/**
 * Rows of deliveries: time (the link to the delivery), webhook, event, device and geofence, origin,
 * status, response, duration, attempts.
 */
import { Link } from '../../app/Link.tsx';
import { formatTime } from '../../ui/format.ts';
import { StatusBadge } from '../../ui/StatusBadge.tsx';
import { type Delivery, ORIGIN_LABELS, type Webhook } from './types.ts';

export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** "Truck 7 · Depot" for an event's delivery; the device id when the device was deleted; — for a test. */
export function subjectLabel(d: Pick<Delivery, 'device_id' | 'device_name' | 'geofence_name'>): string {
  const device = d.device_name ?? (d.device_id ? `device ${d.device_id.slice(-8)} (deleted)` : null);
  const parts = [device, d.geofence_name].filter((p): p is string => p !== null);
  return parts.length === 0 ? '—' : parts.join(' · ');
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
            <th scope="col">Device · geofence</th>
            <th scope="col">Origin</th>
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
              <td>{subjectLabel(d)}</td>
              <td>{ORIGIN_LABELS[d.origin]}</td>
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

/** A webhook's name for a table cell: its name, "Deleted webhook" for null, else a short id. */
export function webhookLabel(names: Map<string, Webhook>, id: string | null): string {
  if (id === null) return 'Deleted webhook';
  return names.get(id)?.name ?? `${id.slice(0, 8)}…`;
}
