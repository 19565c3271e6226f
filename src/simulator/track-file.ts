/**
 * Reads a track for the simulator: GeoJSON (a LineString, a Feature or FeatureCollection of
 * LineStrings or Points; a Point's `properties.timestamp` is kept) or CSV (`lng,lat[,timestamp]`,
 * an optional header line). Returns points in file order.
 */
export interface TrackPoint {
  lng: number;
  lat: number;
  /** ISO timestamp from the file, when it has one. */
  timestamp?: string;
}

export class TrackFormatError extends Error {}

function position(value: unknown, where: string): TrackPoint {
  if (
    !Array.isArray(value) ||
    value.length < 2 ||
    typeof value[0] !== 'number' ||
    typeof value[1] !== 'number'
  ) {
    throw new TrackFormatError(`${where}: expected [lng, lat]`);
  }
  return { lng: value[0], lat: value[1] };
}

function fromGeometry(geometry: unknown, where: string, timestamp?: unknown): TrackPoint[] {
  const g = geometry as { type?: unknown; coordinates?: unknown };
  if (g?.type === 'LineString' && Array.isArray(g.coordinates)) {
    return g.coordinates.map((c, i) => position(c, `${where}.coordinates[${i}]`));
  }
  if (g?.type === 'Point') {
    const point = position(g.coordinates, `${where}.coordinates`);
    return typeof timestamp === 'string' ? [{ ...point, timestamp }] : [point];
  }
  throw new TrackFormatError(`${where}: only LineString and Point geometries make a track`);
}

export function parseGeoJsonTrack(text: string): TrackPoint[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new TrackFormatError(`not valid JSON: ${(error as Error).message}`);
  }
  const d = doc as {
    type?: unknown;
    features?: unknown;
    geometry?: unknown;
    properties?: { timestamp?: unknown };
  };
  if (d?.type === 'FeatureCollection' && Array.isArray(d.features)) {
    return d.features.flatMap((f: { geometry?: unknown; properties?: { timestamp?: unknown } }, i: number) =>
      fromGeometry(f?.geometry, `features[${i}].geometry`, f?.properties?.timestamp),
    );
  }
  if (d?.type === 'Feature') return fromGeometry(d.geometry, 'geometry', d.properties?.timestamp);
  return fromGeometry(doc, 'geometry');
}

export function parseCsvTrack(text: string): TrackPoint[] {
  const points: TrackPoint[] = [];
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  lines.forEach((line, index) => {
    const [a, b, c] = line.split(',').map((cell) => cell.trim());
    const lng = Number(a);
    const lat = Number(b);
    if (index === 0 && (Number.isNaN(lng) || Number.isNaN(lat))) return; // header
    if (!Number.isFinite(lng) || !Number.isFinite(lat))
      throw new TrackFormatError(`line ${index + 1}: expected lng,lat[,timestamp]`);
    if (!c) {
      points.push({ lng, lat });
      return;
    }
    const time = Date.parse(c);
    if (Number.isNaN(time)) throw new TrackFormatError(`line ${index + 1}: "${c}" is not a timestamp`);
    points.push({ lng, lat, timestamp: new Date(time).toISOString() });
  });
  return points;
}

export function parseTrack(fileName: string, text: string): TrackPoint[] {
  const points = /\.csv$/i.test(fileName) ? parseCsvTrack(text) : parseGeoJsonTrack(text);
  if (points.length === 0) throw new TrackFormatError('the track has no points');
  return points;
}
