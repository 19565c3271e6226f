/**
 * What the map's "Go to" box offers for a text, and how the map gets there: typed coordinates,
 * the workspace's geofences and devices (the API's `q` search, as the pages' pickers use it) and,
 * when the server names a geocoder, places. A geofence is fitted into view, a device centred.
 */
import L from 'leaflet';
import { api } from '../api/client.ts';
import type { EntityOption } from '../ui/EntityCombobox.tsx';
import { parseCoordinates } from './coordinates.ts';
import { searchPlaces } from './geocoder.ts';
import { type GeofenceGeometry, geometryBounds } from './geofenceGeometry.ts';

/** Matches of each kind offered at most: the box is a shortcut, not a list. */
const PER_KIND = 5;
/** The zoom a point (coordinates, a device) is shown at, unless the map is closer already. */
const POINT_ZOOM = 16;

export type GoToTarget =
  | { option: EntityOption; kind: 'point'; lat: number; lng: number }
  | { option: EntityOption; kind: 'bounds'; bounds: L.LatLngBounds; maxZoom: number };

export async function findTargets(
  text: string,
  signal: AbortSignal,
  geocoderUrl: string | null,
): Promise<GoToTarget[]> {
  const q = text.trim();
  const coordinates = parseCoordinates(q);
  const [geofences, devices, places] = await Promise.all([
    api.GET('/api/v1/geofences', { params: { query: { q: q || undefined, limit: PER_KIND } }, signal }),
    api.GET('/api/v1/devices', { params: { query: { q: q || undefined, limit: PER_KIND } }, signal }),
    // Typed coordinates need no geocoder; a geocoder that fails leaves the workspace's matches.
    geocoderUrl && !coordinates ? searchPlaces(geocoderUrl, q, signal).catch(() => []) : Promise.resolve([]),
  ]);
  const targets: GoToTarget[] = [];
  if (coordinates) {
    const { lat, lng } = coordinates;
    const label = `${lat.toFixed(5)}, ${lng.toFixed(5)}`;
    targets.push({ option: { id: `c:${label}`, label, detail: 'Coordinates' }, kind: 'point', lat, lng });
  }
  for (const g of geofences.data?.results ?? []) {
    targets.push({
      option: { id: `g:${g.id}`, label: g.name, detail: 'Geofence' },
      kind: 'bounds',
      bounds: geometryBounds(g.geometry as GeofenceGeometry, g.bbox),
      maxZoom: 18,
    });
  }
  for (const d of devices.data?.results ?? []) {
    const point = d.last_location?.point.coordinates;
    const [lng, lat] = point ?? [];
    // A device that never reported is nowhere to go to.
    if (lng === undefined || lat === undefined) continue;
    targets.push({ option: { id: `d:${d.id}`, label: d.name, detail: 'Device' }, kind: 'point', lat, lng });
  }
  places.forEach((p, index) => {
    const option = { id: `p:${index}`, label: p.name, detail: 'Place' };
    if (!p.bounds) targets.push({ option, kind: 'point', lat: p.lat, lng: p.lng });
    else {
      const [south, west, north, east] = p.bounds;
      targets.push({
        option,
        kind: 'bounds',
        bounds: L.latLngBounds([south, west], [north, east]),
        maxZoom: 17,
      });
    }
  });
  return targets;
}

export function goTo(map: L.Map, target: GoToTarget): void {
  if (target.kind === 'point') {
    map.setView([target.lat, target.lng], Math.max(map.getZoom(), POINT_ZOOM));
  } else {
    map.fitBounds(target.bounds, { padding: [40, 40], maxZoom: target.maxZoom });
  }
}
