/**
 * The selected device: where it is, since when, how precisely, in which geofences, its trail, and
 * how to connect a tracker app to it.
 */
import { useEffect, useState } from 'react';
import { api, type Schemas } from '../../api/client.ts';
import type { DeviceState, DevicesMap } from '../../map/devicesMap.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { fromDevice } from './devicesData.ts';
import { TrackerConnect } from './TrackerConnect.tsx';
import { useTrail } from './useTrail.ts';

interface Props {
  deviceId: string;
  /** The device's live state on the map (absent when it has no position yet). */
  live: DeviceState | undefined;
  map: DevicesMap | null;
  geofenceNames: ReadonlyMap<string, string> | null;
  onClose(): void;
}

export function DeviceDetails({ deviceId, live, map, geofenceNames, onClose }: Props) {
  const [record, setRecord] = useState<Schemas['Device'] | null>(null);
  const [missing, setMissing] = useState(false);
  const { trail, error: trailError } = useTrail(deviceId, map, live);

  useEffect(() => {
    const abort = new AbortController();
    setRecord(null);
    setMissing(false);
    void api
      .GET('/api/v1/devices/{device_id}', { params: { path: { device_id: deviceId } }, signal: abort.signal })
      .then(({ data }) => {
        if (abort.signal.aborted) return;
        if (data) setRecord(data);
        else setMissing(true);
      })
      .catch(() => undefined);
    return () => abort.abort();
  }, [deviceId]);

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
      {record ? (
        // Keyed by device: a token shown once must not stay on screen for the next device.
        <TrackerConnect
          key={deviceId}
          deviceId={deviceId}
          deviceName={record.name}
          externalId={record.external_id ?? null}
        />
      ) : null}
    </section>
  );
}
