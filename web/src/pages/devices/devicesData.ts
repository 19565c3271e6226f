/**
 * Loading the whole picture for the devices map: every device's last position and every geofence.
 * Each has a one-request feed (`/devices/positions`, `/geofences/export`); a server without it
 * answers 404, and then the ordinary lists are paged through instead (200 at a time, a few requests
 * in parallel).
 */
import { api, type Schemas } from '../../api/client.ts';
import type { StreamLocation } from '../../live/stream-types.ts';
import type { DeviceState, GeofenceShape } from '../../map/devicesMap.ts';

const PAGE = 200;
const PARALLEL = 3;

export interface Progress {
  loaded: number;
  total: number;
}

interface Page<T> {
  results: T[];
  pagination: { total: number };
}

/**
 * Every device with a position. `onPage` gets each part as it arrives; resolves with whether the
 * server cut the feed short.
 */
export async function loadDevicePositions(
  signal: AbortSignal,
  onPage: (devices: DeviceState[], progress: Progress) => void,
): Promise<{ truncated: boolean }> {
  const feed = await api.GET('/api/v1/devices/positions', { signal });
  if (feed.data) {
    const devices = feed.data.features.map(
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
    return { truncated: feed.data.truncated };
  }
  await pageThrough<Schemas['Device']>(
    signal,
    async (offset) => {
      const { data, error } = await api.GET('/api/v1/devices', {
        params: { query: { limit: PAGE, offset } },
        signal,
      });
      if (!data) throw new LoadError(error);
      return data;
    },
    (results, progress) => {
      const devices: DeviceState[] = [];
      for (const d of results) if (d.last_location) devices.push(fromDevice(d));
      onPage(devices, progress);
    },
  );
  return { truncated: false };
}

/** Every geofence, as shapes for the map. */
export async function loadGeofenceShapes(
  signal: AbortSignal,
  onPage: (shapes: GeofenceShape[], progress: Progress) => void,
): Promise<void> {
  const feed = await api.GET('/api/v1/geofences/export', { signal });
  if (feed.data) {
    const shapes = feed.data.features.map((f) => ({
      id: f.id,
      name: f.properties.name,
      geometry: f.geometry,
    }));
    onPage(shapes, { loaded: shapes.length, total: shapes.length });
    return;
  }
  await pageThrough<Schemas['Geofence']>(
    signal,
    async (offset) => {
      const { data, error } = await api.GET('/api/v1/geofences', {
        params: { query: { limit: PAGE, offset } },
        signal,
      });
      if (!data) throw new LoadError(error);
      return data;
    },
    (results, progress) =>
      onPage(
        results.map((g) => ({ id: g.id, name: g.name, geometry: g.geometry })),
        progress,
      ),
  );
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

/** Reads page 1 for the total, then the other pages, PARALLEL requests at a time. */
async function pageThrough<T>(
  signal: AbortSignal,
  fetchPage: (offset: number) => Promise<Page<T>>,
  onPage: (results: T[], progress: Progress) => void,
): Promise<void> {
  const first = await fetchPage(0);
  const total = first.pagination.total;
  let loaded = first.results.length;
  onPage(first.results, { loaded, total });
  const offsets: number[] = [];
  for (let offset = PAGE; offset < total; offset += PAGE) offsets.push(offset);
  const worker = async (): Promise<void> => {
    for (let offset = offsets.shift(); offset !== undefined; offset = offsets.shift()) {
      if (signal.aborted) return;
      const page = await fetchPage(offset);
      loaded += page.results.length;
      onPage(page.results, { loaded, total });
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}
