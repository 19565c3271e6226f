/**
 * The rows of the events feed; rows that just arrived live carry a highlight for a few seconds.
 * Each row opens its event's page: its time is a link (keyboard, screen readers, a new tab), and a
 * click anywhere else on the row follows that link too.
 */
import './events.css';
import type { MouseEvent } from 'react';
import type { Schemas } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { useDeviceNames } from './entities.ts';

type Event = Schemas['Event'];

function eventHref(event: Event): string {
  return `/events/${encodeURIComponent(event.id)}`;
}

/** A plain click on the row, not on a link inside it nor the end of selecting its text. */
function openRow(event: MouseEvent<HTMLTableRowElement>, href: string): void {
  const target = event.target as HTMLElement;
  if (target.closest('a, button') || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
    return;
  if (window.getSelection()?.toString()) return;
  navigate(href);
}

export function EventTable({ events, fresh }: { events: Event[]; fresh: ReadonlySet<string> }) {
  const names = useDeviceNames(events.map((e) => e.device_id));
  if (events.length === 0) return <p>No events match these filters.</p>;
  return (
    <div className="table-wrap">
      <table className="events-table">
        <caption className="visually-hidden">Geofence events, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Type</th>
            <th scope="col">Device</th>
            <th scope="col">Geofence</th>
            <th scope="col">Point</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => {
            const [lng = 0, lat = 0] = event.point.coordinates;
            const href = eventHref(event);
            return (
              // The row's first cell is the same link, for the keyboard and screen readers.
              <tr
                key={event.id}
                className={fresh.has(event.id) ? 'event-row row-new' : 'event-row'}
                onClick={(e) => openRow(e, href)}
              >
                <td>
                  <Link href={href}>
                    <time dateTime={event.occurred_at}>{formatTime(event.occurred_at)}</time>
                    <span className="visually-hidden">{` – ${event.event_type} at ${event.geofence_name}`}</span>
                  </Link>
                </td>
                <td>
                  <span className={`event-type event-${event.event_type}`}>{event.event_type}</span>
                </td>
                <td>
                  <Link href={`/devices?device=${encodeURIComponent(event.device_id)}`}>
                    {names.get(event.device_id) ?? `${event.device_id.slice(0, 8)}…`}
                  </Link>
                </td>
                <td>{event.geofence_name}</td>
                <td className="coords">
                  {lat.toFixed(5)}, {lng.toFixed(5)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
