/**
 * Coordinates typed by a person: "52.52, 13.405", "52.52 13.405", or with hemisphere letters
 * ("52.52N 13.405E", "N 52.52, E 13.405", "52.52° S 13.4° W"). Latitude comes first unless the
 * letters say otherwise ("13.405E 52.52N"). Decimal degrees only: a comma separates the two numbers,
 * it is never a decimal mark.
 */
export interface LatLng {
  lat: number;
  lng: number;
}

const NUMBER = String.raw`[-+]?\d+(?:\.\d+)?`;
/** One coordinate: an optional letter before or after the number, an optional degree sign. */
const PART = new RegExp(String.raw`^([NSEW])?\s*(${NUMBER})\s*°?\s*([NSEW])?$`, 'i');

export function parseCoordinates(text: string): LatLng | null {
  const trimmed = text.trim();
  const halves = trimmed.split(/\s*[,;]\s*/);
  if (halves.length === 2) return pair(halves[0] ?? '', halves[1] ?? '');
  if (halves.length > 2) return null;
  // No separator: the first split at a space, from the right, that leaves two coordinates. From the
  // right, a letter between the numbers belongs to the first ("52.52 N 13.4" is 52.52° N).
  const spaces = [...trimmed.matchAll(/\s+/g)].reverse();
  for (const space of spaces) {
    const found = pair(trimmed.slice(0, space.index), trimmed.slice(space.index + space[0].length));
    if (found) return found;
  }
  return null;
}

function pair(a: string, b: string): LatLng | null {
  const first = readPart(a);
  const second = readPart(b);
  if (!first || !second) return null;
  // Letters can put longitude first; without them latitude comes first.
  const swapped = first.axis === 'lng' || second.axis === 'lat';
  const lat = swapped ? second : first;
  const lng = swapped ? first : second;
  if (lat.axis === 'lng' || lng.axis === 'lat') return null;
  if (Math.abs(lat.value) > 90 || Math.abs(lng.value) > 180) return null;
  return { lat: lat.value, lng: lng.value };
}

function readPart(text: string): { value: number; axis: 'lat' | 'lng' | null } | null {
  const match = PART.exec(text.trim());
  if (!match) return null;
  const before = match[1]?.toUpperCase();
  const after = match[3]?.toUpperCase();
  if (before && after) return null;
  const letter = before ?? after;
  const value = Number(match[2]);
  if (letter === undefined) return { value, axis: null };
  // A letter names the hemisphere: a signed number with one would say it twice.
  if (/^[-+]/.test(match[2] ?? '')) return null;
  const sign = letter === 'S' || letter === 'W' ? -1 : 1;
  return { value: sign * value, axis: letter === 'N' || letter === 'S' ? 'lat' : 'lng' };
}
