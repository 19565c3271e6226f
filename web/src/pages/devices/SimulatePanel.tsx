/**
 * Simulating a device: each click on the map (or the latitude/longitude form, for the keyboard)
 * records a real location for the selected device, so real geofence events happen. A workspace
 * without devices gets one ("Simulator") with one click.
 */
import { type FormEvent, type MutableRefObject, useEffect, useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { useInvalidate } from '../../api/queries.ts';
import { streamStatus } from '../../live/stream.ts';
import type { DevicesMap } from '../../map/devicesMap.ts';
import { Field, Notice } from '../../ui/forms.tsx';
import { useEntityLookups } from '../events/entities.ts';
import { createDevice, deviceKeys, sendLocation } from './devicesApi.ts';

interface Props {
  deviceId: string | null;
  deviceName: string | null;
  workspaceHasDevices: boolean;
  simulating: boolean;
  onSimulatingChange(on: boolean): void;
  /** Set here: what a click on the map does while simulating. */
  clickHandler: MutableRefObject<(lat: number, lng: number) => void>;
  map: DevicesMap | null;
  onCreated(id: string): void;
}

export function SimulatePanel(props: Props) {
  const { deviceId, deviceName, simulating, onSimulatingChange, clickHandler, map } = props;
  const [lat, setLat] = useState('');
  const [lng, setLng] = useState('');
  const [accuracy, setAccuracy] = useState('10');
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!deviceId && simulating) onSimulatingChange(false);
  }, [deviceId, simulating, onSimulatingChange]);

  const send = async (latitude: number, longitude: number): Promise<void> => {
    if (!deviceId) return;
    setBusy(true);
    setError(null);
    const acc = accuracy.trim() === '' ? null : Number(accuracy);
    const { data, error: failure } = await sendLocation(deviceId, {
      coordinates: [longitude, latitude],
      accuracy: acc,
      timestamp: new Date().toISOString(),
      metadata: { source: 'dashboard-simulator' },
    });
    setBusy(false);
    if (!data) {
      setResult(null);
      setError(errorMessage(failure));
      return;
    }
    // Without a live stream the map would not hear of this location: apply it here.
    if (streamStatus() !== 'live' && map) applyLocally(map, deviceId, deviceName, data.location, data.events);
    setResult(describe(deviceName ?? 'the device', latitude, longitude, data.events));
  };

  clickHandler.current = (latitude, longitude) => {
    setLat(latitude.toFixed(6));
    setLng(longitude.toFixed(6));
    void send(latitude, longitude);
  };

  const submit = (event: FormEvent<HTMLFormElement>): void => {
    event.preventDefault();
    const latitude = Number(lat);
    const longitude = Number(lng);
    if (lat.trim() === '' || lng.trim() === '' || !Number.isFinite(latitude) || !Number.isFinite(longitude)) {
      setError('Enter a latitude (−90 to 90) and a longitude (−180 to 180).');
      return;
    }
    void send(latitude, longitude);
  };

  const fillFromCentre = (): void => {
    const centre = map?.map.getCenter();
    if (!centre) return;
    setLat(centre.lat.toFixed(6));
    setLng(centre.lng.toFixed(6));
  };

  return (
    <section className="simulate" aria-labelledby="simulate-title">
      <h2 id="simulate-title">Simulate a location</h2>
      {!deviceId ? (
        <NoDevice {...props} />
      ) : (
        <>
          <p className="hint">
            Records a real location for <strong>{deviceName ?? 'the selected device'}</strong>: geofence
            events, webhooks and workflows follow as they would for the device itself.
          </p>
          <button
            type="button"
            className={simulating ? 'primary' : undefined}
            aria-pressed={simulating}
            onClick={() => onSimulatingChange(!simulating)}
          >
            Send a location where I click on the map
          </button>
          {simulating ? (
            <p className="hint">Each click on the map sends a location. Turn it off with the button.</p>
          ) : null}
          <form onSubmit={submit} className="simulate-form" aria-label="Send a location">
            <div className="field-pair">
              <Field
                label="Latitude"
                className="input-full"
                type="number"
                step="any"
                min={-90}
                max={90}
                value={lat}
                onChange={(e) => setLat(e.target.value)}
              />
              <Field
                label="Longitude"
                className="input-full"
                type="number"
                step="any"
                min={-180}
                max={180}
                value={lng}
                onChange={(e) => setLng(e.target.value)}
              />
            </div>
            <Field
              label="Accuracy (metres)"
              className="input-full"
              type="number"
              step="any"
              min={0}
              value={accuracy}
              onChange={(e) => setAccuracy(e.target.value)}
            />
            <div className="button-row">
              <button type="submit" className="primary" disabled={busy}>
                Send location
              </button>
              <button type="button" onClick={fillFromCentre}>
                Use the map centre
              </button>
            </div>
          </form>
        </>
      )}
      <Notice kind="error">{error}</Notice>
      <p role="status" className="hint" data-testid="simulate-result">
        {result}
      </p>
    </section>
  );
}

function NoDevice({ workspaceHasDevices, onCreated }: Props) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { rememberDevice } = useEntityLookups();
  const invalidate = useInvalidate();
  if (workspaceHasDevices) return <p className="hint">Select a device first.</p>;
  const create = async (): Promise<void> => {
    setBusy(true);
    const { data, error: failure } = await createDevice({
      name: 'Simulator',
      metadata: { source: 'dashboard-simulator' },
    });
    setBusy(false);
    if (!data) {
      setError(errorMessage(failure));
      return;
    }
    invalidate(deviceKeys.all);
    rememberDevice({ id: data.id, label: data.name, detail: data.external_id });
    onCreated(data.id);
  };
  return (
    <>
      <p className="hint">
        This workspace has no device on the map yet. Select one, or create one to simulate.
      </p>
      <button type="button" disabled={busy} onClick={() => void create()}>
        Create a “Simulator” device
      </button>
      <Notice kind="error">{error}</Notice>
    </>
  );
}

function describe(name: string, lat: number, lng: number, events: Schemas['Event'][]): string {
  const where = `${lat.toFixed(5)}, ${lng.toFixed(5)}`;
  if (events.length === 0) return `Location sent for ${name} at ${where}: no geofence events.`;
  const list = events.map((e) => `${e.event_type} “${e.geofence_name}”`).join(', ');
  return `Location sent for ${name} at ${where}: ${list}.`;
}

/** The map's view of a location the stream did not deliver: enters add a geofence, exits remove one. */
function applyLocally(
  map: DevicesMap,
  deviceId: string,
  deviceName: string | null,
  location: Schemas['Location'],
  events: Schemas['Event'][],
): void {
  if (location.out_of_order) return;
  const known = map.store.get(deviceId);
  const inside = new Set(known?.inside_geofence_ids ?? []);
  for (const event of events) {
    if (event.event_type === 'enter') inside.add(event.geofence_id);
    if (event.event_type === 'exit') inside.delete(event.geofence_id);
  }
  map.queue({
    id: deviceId,
    name: known?.name ?? deviceName ?? 'Device',
    external_id: known?.external_id ?? null,
    lng: location.point.coordinates[0] ?? 0,
    lat: location.point.coordinates[1] ?? 0,
    accuracy: location.accuracy,
    at: location.timestamp,
    inside_geofence_ids: [...inside],
  });
}
