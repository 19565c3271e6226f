/**
 * "Devices inside now" of the selected geofence (GET /geofences/{id}/devices, contract §4.5): the
 * latest to enter first, with when the visit began and whether it has dwelt, each a link to the
 * device on the Devices page. Paged with `inside` (the offset) in the address beside `selected`.
 * Not live: a Refresh button asks again (and saving the geofence does).
 */
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { useLocation } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { offsetOf, Pager } from '../../ui/Pager.tsx';
import { type Geofence, useDevicesInside } from './geofenceApi.ts';

export const INSIDE_OFFSET = 'inside';

export function GeofenceDevices({ geofence }: { geofence: Geofence }) {
  const { query } = useLocation();
  const offset = offsetOf(query, INSIDE_OFFSET);
  const inside = useDevicesInside(geofence.id, offset);
  const rows = inside.data?.results ?? [];

  return (
    <section aria-labelledby="inside-title" className="geofence-inside">
      <div className="editor-head">
        <h2 id="inside-title">Devices inside now</h2>
        <button type="button" onClick={() => void inside.refetch()} disabled={inside.isFetching}>
          Refresh<span className="visually-hidden"> devices inside</span>
        </button>
      </div>
      {inside.error ? (
        <div className="notice notice-error" role="alert">
          {failureMessage(inside.error)}
        </div>
      ) : inside.data === undefined ? (
        <p role="status">Loading…</p>
      ) : rows.length === 0 && offset === 0 ? (
        <p role="status">No device is inside “{geofence.name}” now.</p>
      ) : (
        <>
          <ul className="inside-items" aria-label={`Devices inside ${geofence.name}`}>
            {rows.map((device) => (
              <li key={device.device_id} className="inside-item">
                <Link href={`/devices?device=${encodeURIComponent(device.device_id)}`}>{device.name}</Link>
                {device.dwelling ? <span className="badge badge-success">dwelling</span> : null}
                <span className="hint">
                  Inside since {formatTime(device.entered_at)}
                  {device.last_seen_at ? `, last seen ${formatTime(device.last_seen_at)}` : ''}
                </span>
              </li>
            ))}
          </ul>
          <Pager
            pagination={inside.data.pagination}
            shown={rows.length}
            noun="devices inside"
            queryKey={INSIDE_OFFSET}
          />
        </>
      )}
    </section>
  );
}
