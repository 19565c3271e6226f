/**
 * Places from a Nominatim-compatible search API (GEOCODER_URL), asked by the browser itself: the
 * server only names the URL, and its Content-Security-Policy lets the page reach that origin and no
 * other. The request is `?q=…&format=jsonv2&limit=5`; each result's `lat`, `lon`, `display_name`
 * and `boundingbox` ([south, north, west, east], strings) are what the map needs.
 */
export interface Place {
  name: string;
  lat: number;
  lng: number;
  /** [south, west, north, east] in degrees. */
  bounds: [number, number, number, number] | null;
}

export const PLACES = 5;
/** Characters typed before places are asked for: shorter text matches half the world. */
export const PLACE_MIN_LENGTH = 3;
/**
 * Extra quiet time before the geocoder is asked, on top of the box's own debounce: a geocoder is a
 * shared service with a rate limit, not an index to ask on every keystroke.
 */
const PAUSE_MS = 350;

const answers = new Map<string, Place[]>();

export async function searchPlaces(geocoderUrl: string, text: string, signal: AbortSignal): Promise<Place[]> {
  const q = text.trim();
  if (q.length < PLACE_MIN_LENGTH) return [];
  const known = answers.get(q);
  if (known) return known;
  await pause(PAUSE_MS, signal);
  const url = new URL(geocoderUrl);
  url.searchParams.set('q', q);
  url.searchParams.set('format', 'jsonv2');
  url.searchParams.set('limit', String(PLACES));
  const response = await fetch(url, { signal, credentials: 'omit', headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`The place search answered ${response.status}`);
  const body: unknown = await response.json();
  const places = Array.isArray(body) ? body.flatMap(readPlace).slice(0, PLACES) : [];
  // Remembered for the tab's life, a few dozen at most: retyping a name asks no one twice.
  if (answers.size >= 50) answers.delete(answers.keys().next().value ?? '');
  answers.set(q, places);
  return places;
}

/** One result, or nothing when it lacks a name or a position (a geocoder's answer is not trusted). */
function readPlace(value: unknown): Place[] {
  if (!value || typeof value !== 'object') return [];
  const r = value as { lat?: unknown; lon?: unknown; display_name?: unknown; boundingbox?: unknown };
  const lat = Number(r.lat);
  const lng = Number(r.lon);
  if (typeof r.display_name !== 'string' || !(Math.abs(lat) <= 90) || !(Math.abs(lng) <= 180)) return [];
  let bounds: Place['bounds'] = null;
  if (Array.isArray(r.boundingbox) && r.boundingbox.length === 4) {
    const [south, north, west, east] = r.boundingbox.map(Number) as [number, number, number, number];
    if ([south, north, west, east].every(Number.isFinite) && south <= north)
      bounds = [south, west, north, east];
  }
  return [{ name: r.display_name, lat, lng, bounds }];
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
