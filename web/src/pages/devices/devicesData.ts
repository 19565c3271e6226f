/**
 * Loading the whole picture for the devices map: every device's last position
 * (`/devices/positions`) and every geofence (`/geofences/export`), one request each.
 */
import { api, type Schemas } from '../../api/client.ts';
import type { StreamLocation } from '../../live/stream-types.ts';
import type { DeviceState, GeofenceShape } from '../../map/devicesMap.ts';

export interface Progress {
  loaded: number;
  total: number;
}

/** Every device with a position; resolves with whether the server cut the feed short. */
export async function loadDevicePositions(
  signal: AbortSignal,
  onPage: (devices: DeviceState[], progress: Progress) => void,
): Promise<{ truncated: boolean }> {
  const { data, error } = await api.GET('/api/v1/devices/positions', { signal });
  if (!data) throw new LoadError(error);
  const devices = data.features.map(
    (f): DeviceState => ({
      id: f.id,
      name: f.properties.name,
      external_id: f.properties.external_id,
      lng: f.geometry.coordinates[0] ?? 0,
      lat: f.geometry.coordinates[1] ?? 0,
      accuracy: f.properties.accuracy,
      at: f.properties.last_seen_at,
      inside_geofence_ids: f.properties.inside_geofence_ids,
    }),
  );
  onPage(devices, { loaded: devices.length, total: devices.length });
  return { truncated: data.truncated };
}

/** Every geofence, as shapes for the map. */
export async function loadGeofenceShapes(
  signal: AbortSignal,
  onPage: (shapes: GeofenceShape[], progress: Progress) => void,
): Promise<void> {
  const { data, error } = await api.GET('/api/v1/geofences/export', { signal });
  if (!data) throw new LoadError(error);
  const shapes = data.features.map((f) => ({ id: f.id, name: f.properties.name, geometry: f.geometry }));
  onPage(shapes, { loaded: shapes.length, total: shapes.length });
}

/** A device record of the API as map state. */
export function fromDevice(d: Schemas['Device']): DeviceState {
  return {
    id: d.id,
    name: d.name,
    external_id: d.external_id,
    lng: d.last_location?.point.coordinates[0] ?? 0,
    lat: d.last_location?.point.coordinates[1] ?? 0,
    accuracy: d.last_location?.accuracy ?? null,
    at: d.last_location?.timestamp ?? d.last_seen_at,
    inside_geofence_ids: d.inside_geofence_ids,
  };
}

/** A `location` message of the stream as map state. */
export function fromStream(m: StreamLocation): DeviceState {
  return {
    id: m.device_id,
    name: m.name,
    external_id: m.external_id,
    lng: m.lng,
    lat: m.lat,
    accuracy: m.accuracy,
    at: m.recorded_at,
    inside_geofence_ids: m.inside_geofence_ids,
  };
}

export class LoadError extends Error {
  constructor(readonly body: unknown) {
    super('load failed');
  }
}
