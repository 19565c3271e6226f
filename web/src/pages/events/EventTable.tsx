/** The rows of the events feed; rows that just arrived live carry a highlight for a few seconds. */
import type { Schemas } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { formatTime } from '../../ui/format.ts';
import { useDeviceNames } from './useDeviceNames.ts';

type Event = Schemas['Event'];

export function EventTable({ events, fresh }: { events: Event[]; fresh: ReadonlySet<string> }) {
  const names = useDeviceNames(events);
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
            return (
              <tr key={event.id} className={fresh.has(event.id) ? 'row-new' : undefined}>
                <td>
                  <time dateTime={event.occurred_at}>{formatTime(event.occurred_at)}</time>
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
