/**
 * Geofence geometries (contract §3) and their Leaflet layers: a GeoJSON Polygon (shell, then holes)
 * or our Circle `{type: 'Circle', coordinates: [lng, lat], radius: metres}`. Leaflet speaks
 * [lat, lng], GeoJSON [lng, lat]; every conversion between the two lives here.
 */
import L from 'leaflet';

export type Position = [number, number];
// Type aliases, not interfaces: they fit the API's open `{type: string, [key]: unknown}` input.
export type PolygonGeometry = {
  type: 'Polygon';
  coordinates: Position[][];
};
export type CircleGeometry = {
  type: 'Circle';
  coordinates: Position;
  radius: number;
};
export type GeofenceGeometry = PolygonGeometry | CircleGeometry;

/** Seven decimals of a degree: about a centimetre, finer than any phone's fix. */
const PRECISION = 7;
const round = (n: number, digits = PRECISION): number => Number(n.toFixed(digits));

/** A ring with its first position repeated last, as GeoJSON (RFC 7946 §3.1.6) and the API want it. */
export function closeRing(ring: Position[]): Position[] {
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (!first || !last || (first[0] === last[0] && first[1] === last[1])) return ring;
  return [...ring, [first[0], first[1]]];
}

/**
 * The geometry a drawn or edited layer stands for. A cut that splits a polygon in two leaves a
 * MultiPolygon, which no geofence can be: that is reported as a problem instead.
 */
export function layerGeometry(layer: L.Layer): { geometry: GeofenceGeometry } | { problem: string } {
  if (layer instanceof L.Circle) {
    const c = layer.getLatLng();
    const [lng, lat] = wrapPosition([c.lng, c.lat]);
    return { geometry: { type: 'Circle', coordinates: [lng, lat], radius: round(layer.getRadius(), 2) } };
  }
  if (layer instanceof L.Polygon) {
    const geojson = layer.toGeoJSON(PRECISION).geometry;
    let rings: Position[][] | undefined;
    if (geojson.type === 'Polygon') rings = geojson.coordinates as Position[][];
    else if (geojson.type === 'MultiPolygon') {
      if (geojson.coordinates.length !== 1) {
        return {
          problem: `The shape is now ${geojson.coordinates.length} separate pieces; a geofence is one polygon. Undo the cut or draw it again.`,
        };
      }
      rings = geojson.coordinates[0] as Position[][];
    }
    if (!rings || rings.length === 0) return { problem: 'Nothing is left of the shape.' };
    return { geometry: { type: 'Polygon', coordinates: shiftIntoRange(rings.map(closeRing)) } };
  }
  return { problem: 'Only polygons and circles can be geofences.' };
}

/** A longitude drawn on a copy of the world (beyond ±180) brought back to the one the API accepts. */
function wrapPosition([lng, lat]: Position): Position {
  return [round(((((lng + 180) % 360) + 360) % 360) - 180), round(lat)];
}

/** A polygon drawn on another copy of the world, moved by whole turns so its first vertex is in range. */
function shiftIntoRange(rings: Position[][]): Position[][] {
  const first = rings[0]?.[0];
  if (!first || (first[0] >= -180 && first[0] <= 180)) return rings;
  const turns = Math.round(first[0] / 360) * 360;
  return rings.map((ring) => ring.map(([lng, lat]) => [round(lng - turns), lat] as Position));
}

/** A Leaflet layer drawing the geometry (not yet on a map). */
export function geometryLayer(geometry: GeofenceGeometry, options: L.PathOptions): L.Polygon | L.Circle {
  if (geometry.type === 'Circle') {
    const [lng, lat] = geometry.coordinates;
    return L.circle([lat, lng], { ...options, radius: geometry.radius });
  }
  return L.polygon(
    geometry.coordinates.map((ring) => ring.map(([lng, lat]) => L.latLng(lat, lng))),
    options,
  );
}

/** Mean Earth radius (metres), as the API uses for circles. */
const EARTH_RADIUS = 6_371_008.8;

/**
 * The bounds of a geometry, from the API's bbox `[west, south, east, north]` when there is one. A
 * bbox with west > east (a circle across the antimeridian) is drawn east of 180° so the bounds stay
 * one rectangle.
 */
export function geometryBounds(geometry: GeofenceGeometry, bbox?: readonly number[] | null): L.LatLngBounds {
  if (bbox && bbox.length === 4) {
    const [west = 0, south = 0, east = 0, north = 0] = bbox;
    return L.latLngBounds([south, west], [north, east < west ? east + 360 : east]);
  }
  if (geometry.type === 'Circle') {
    const [lng, lat] = geometry.coordinates;
    const dLat = (geometry.radius / EARTH_RADIUS) * (180 / Math.PI);
    const dLng = dLat / Math.max(Math.cos((lat * Math.PI) / 180), 1e-6);
    return L.latLngBounds([lat - dLat, lng - dLng], [lat + dLat, lng + dLng]);
  }
  const shell = geometry.coordinates[0] ?? [];
  return L.latLngBounds(shell.map(([lng, lat]) => L.latLng(lat, lng)));
}

/**
 * Reads a geometry typed as GeoJSON text. Only the shape is checked here (valid JSON, an object with
 * a type we know and arrays of numbers where positions belong): whether the rings close, cross or
 * nest is the server's answer (400 INVALID_GEOMETRY), shown with its location.
 */
export function parseGeometry(text: string): { geometry: GeofenceGeometry } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `Not valid JSON: ${(error as Error).message}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { problem: 'The geometry must be a JSON object with a "type".' };
  }
  const g = value as { type?: unknown; coordinates?: unknown; radius?: unknown };
  if (g.type === 'Circle') {
    if (!isPosition(g.coordinates)) return { problem: 'A Circle needs "coordinates": [lng, lat].' };
    if (typeof g.radius !== 'number') return { problem: 'A Circle needs "radius" in metres.' };
    return { geometry: { type: 'Circle', coordinates: g.coordinates, radius: g.radius } };
  }
  if (g.type === 'Polygon') {
    const rings = g.coordinates;
    if (
      !Array.isArray(rings) ||
      rings.length === 0 ||
      !rings.every((r) => Array.isArray(r) && r.every(isPosition))
    ) {
      return {
        problem: 'A Polygon needs "coordinates": rings of [lng, lat] positions (the shell, then holes).',
      };
    }
    return { geometry: { type: 'Polygon', coordinates: rings as Position[][] } };
  }
  return { problem: 'The type must be "Polygon" or "Circle".' };
}

function isPosition(value: unknown): value is Position {
  return (
    Array.isArray(value) && value.length >= 2 && typeof value[0] === 'number' && typeof value[1] === 'number'
  );
}

/** The geometry as the text field shows it: one position per line, readable and diff-able. */
export function geometryText(geometry: GeofenceGeometry | null): string {
  if (!geometry) return '';
  if (geometry.type === 'Circle') return JSON.stringify(geometry);
  const rings = geometry.coordinates
    .map((ring) => `    [\n${ring.map((p) => `      ${JSON.stringify(p)}`).join(',\n')}\n    ]`)
    .join(',\n');
  return `{\n  "type": "Polygon",\n  "coordinates": [\n${rings}\n  ]\n}`;
}
