import { Link } from '../../app/Link.tsx';
import type { DeviceState, DevicesMap } from '../../map/devicesMap.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { useDevice } from './devicesApi.ts';
import { fromDevice } from './devicesData.ts';
import { NoSessionExplained } from './SessionPanel.tsx';
import { useTrail } from './useTrail.ts';

interface Props {
  deviceId: string;
  /** The device's live state on the map (absent when it has no position yet). */
  live: DeviceState | undefined;
  map: DevicesMap | null;
  geofenceNames: ReadonlyMap<string, string> | null;
  /** The map keeps the device in view as it moves. */
  follow: boolean;
  onFollowChange(on: boolean): void;
  onClose(): void;
}

export function DeviceDetails({
  deviceId,
  live,
  map,
  geofenceNames,
  follow,
  onFollowChange,
  onClose,
}: Props) {
  const loaded = useDevice(deviceId);
  const record = loaded.data ?? null;
  const missing = loaded.isError;
  const { trail, error: trailError } = useTrail(deviceId, map, live);

  if (missing) {
    return (
      <section className="device-details" aria-label="Selected device">
        <Notice kind="error">This device does not exist (any more) in this workspace.</Notice>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </section>
    );
  }
  const state = live ?? (record?.last_location ? fromDevice(record) : undefined);
  const name = live?.name ?? record?.name ?? '…';
  const insideNames = (state?.inside_geofence_ids ?? []).map((id) => geofenceNames?.get(id) ?? id);
  return (
    <section className="device-details" aria-labelledby="device-title">
      <h2 id="device-title">{name}</h2>
      <dl className="facts">
        <dt>External id</dt>
        <dd>{(live?.external_id ?? record?.external_id) || '—'}</dd>
        <dt>Last position</dt>
        <dd>{state ? `${state.lat.toFixed(5)}, ${state.lng.toFixed(5)}` : 'No location yet'}</dd>
        <dt>Last seen</dt>
        <dd>{state?.at ? <time dateTime={state.at}>{formatTime(state.at)}</time> : '—'}</dd>
        <dt>Accuracy</dt>
        <dd>{state?.accuracy != null ? `± ${Math.round(state.accuracy)} m` : '—'}</dd>
        <dt>Inside</dt>
        <dd>
          {insideNames.length === 0 ? (
            'No geofence'
          ) : (
            <ul className="inside-list">
              {insideNames.map((n, i) => (
                <li key={state?.inside_geofence_ids[i]}>{n}</li>
              ))}
            </ul>
          )}
        </dd>
      </dl>
      <div className="button-row">
        <button
          type="button"
          disabled={!state}
          onClick={() => {
            map?.focus(deviceId);
            // On a phone the map is above the panel: bring it into sight.
            map?.map.getContainer().scrollIntoView({ block: 'nearest' });
          }}
        >
          Show on map
        </button>
        <button type="button" onClick={onClose}>
          Close<span className="visually-hidden"> device details</span>
        </button>
      </div>
      <label className="check">
        <input type="checkbox" checked={follow} onChange={(event) => onFollowChange(event.target.checked)} />{' '}
        Follow this device (the map keeps it in view as it moves)
      </label>
      <p>
        <Link href={`/devices/${encodeURIComponent(deviceId)}`}>
          Device page<span className="visually-hidden"> of {name}</span>
        </Link>
        : rename, metadata, connect a tracker, trail by time.
      </p>
      <h3>Trail</h3>
      <p className="hint" data-testid="device-trail">
        {trailError
          ? 'The trail could not be loaded.'
          : trail === null
            ? 'Loading the trail…'
            : trail.session
              ? `Tracking session ${trail.session.status === 'active' ? 'in progress' : 'ended'}, started ${formatTime(trail.session.started_at)}: ${trail.points} ${trail.points === 1 ? 'location' : 'locations'} shown.`
              : trail.points === 0
                ? 'No locations yet.'
                : `No tracking session: the latest ${trail.points} ${trail.points === 1 ? 'location' : 'locations'} shown.`}
      </p>
      {trail && !trail.session ? <NoSessionExplained /> : null}
    </section>
  );
}
