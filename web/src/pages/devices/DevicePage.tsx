/**
 * /devices/{id}: one device. Where it is (live), its trail over a chosen time range and follow mode
 * on the map, its tracking session, its name, identifiers and metadata, the tracker apps that report
 * it (device tokens), and deleting it.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { navigate, useLocation } from '../../app/router.ts';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { isoOrNull } from '../../ui/localTime.ts';
import { DeviceForm } from './DeviceForm.tsx';
import { deleteDevice, deviceKeys, useDevice } from './devicesApi.ts';
import { fromDevice } from './devicesData.ts';
import { MetadataEditor } from './MetadataEditor.tsx';
import { SessionPanel } from './SessionPanel.tsx';
import { TrackerConnect } from './TrackerConnect.tsx';
import { TrailSection } from './TrailSection.tsx';
import { useDeviceMap } from './useDeviceMap.ts';
import { useTrailRange } from './useTrailRange.ts';

type Device = Schemas['Device'];

export function DevicePage({ id }: { id: string }) {
  const { query } = useLocation();
  const from = isoOrNull(query.get('from'));
  const to = isoOrNull(query.get('to'));
  const follow = query.get('follow') === '1';
  const client = useQueryClient();
  const loaded = useDevice(id);
  const device = loaded.data ?? null;
  const failure = failureMessage(loaded.error);
  const mapElement = useRef<HTMLDivElement>(null);
  const { map, live } = useDeviceMap(mapElement, device);
  const { trail, error: trailError } = useTrailRange(id, map, from, to, live);

  /** A saved device shows at once; the lists and names that show it are read again. */
  const saved = (next: Device): void => {
    client.setQueryData(deviceKeys.one(id), next);
    void client.invalidateQueries({ queryKey: deviceKeys.all });
  };

  const hasPosition = live !== undefined;
  useEffect(() => {
    map?.setFollow(follow && hasPosition);
  }, [map, follow, hasPosition]);

  const remove = async (): Promise<void> => {
    const { response, error } = await deleteDevice(id);
    if (!response.ok) throw new Error(errorMessage(error));
    void client.invalidateQueries({ queryKey: deviceKeys.all, refetchType: 'none' });
    navigate('/devices/list');
  };

  const state = live ?? (device?.last_location ? fromDevice(device) : undefined);
  return (
    <main id="main" className="map-page devices-page device-page">
      <section className="panel" aria-labelledby="device-title">
        <nav className="back-links" aria-label="Devices">
          <Link href="/devices/list">All devices</Link> ·{' '}
          <Link href={`/devices?device=${encodeURIComponent(id)}`}>On the live map</Link>
        </nav>
        <h1 id="device-title">{device?.name ?? (failure ? 'Device' : 'Loading…')}</h1>
        <Notice kind="error">{failure}</Notice>
        {device ? (
          <>
            <dl className="facts">
              <dt>External id</dt>
              <dd>{device.external_id ?? '—'}</dd>
              <dt>Last position</dt>
              <dd data-testid="device-position">
                {state ? `${state.lat.toFixed(5)}, ${state.lng.toFixed(5)}` : 'No location yet'}
              </dd>
              <dt>Last seen</dt>
              <dd>{state?.at ? <time dateTime={state.at}>{formatTime(state.at)}</time> : '—'}</dd>
              <dt>Inside</dt>
              <dd>{insideText(state?.inside_geofence_ids.length ?? 0)}</dd>
            </dl>
            <TrailSection
              from={from}
              to={to}
              trail={trail}
              error={trailError}
              follow={follow}
              hasPosition={hasPosition}
            />
            <SessionPanel deviceId={id} />
            <DeviceForm device={device} onSaved={saved} />
            <MetadataEditor device={device} onSaved={saved} />
            <TrackerConnect deviceId={id} deviceName={device.name} externalId={device.external_id ?? null} />
            <section className="device-delete" aria-labelledby="delete-title">
              <h2 id="delete-title">Delete</h2>
              <p className="hint">
                Deleting the device deletes its locations and tracking sessions and revokes its tokens at
                once. Its geofence events stay in the history.
              </p>
              <ConfirmButton
                danger
                question={`Delete “${device.name}” for good?`}
                confirmLabel="Delete device"
                onConfirm={remove}
              >
                Delete device
              </ConfirmButton>
            </section>
          </>
        ) : null}
      </section>
      <div className="map" ref={mapElement} data-testid="device-map" data-ready={map ? 'true' : 'false'} />
    </main>
  );
}

function insideText(count: number): string {
  if (count === 0) return 'No geofence';
  return count === 1 ? '1 geofence' : `${count} geofences`;
}
