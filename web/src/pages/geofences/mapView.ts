/**
 * The map view in the address: `view=lat,lng,zoom`. Six decimals of a degree (about 10 cm) keep a
 * restored view where it was, to the pixel, at any zoom the map offers.
 */
import type L from 'leaflet';

export interface MapView {
  lat: number;
  lng: number;
  zoom: number;
}

export function parseView(value: string | null): MapView | null {
  if (!value) return null;
  const parts = value.split(',').map(Number);
  if (parts.length !== 3) return null;
  const [lat = Number.NaN, lng = Number.NaN, zoom = Number.NaN] = parts;
  if (!(Math.abs(lat) <= 85.06 && Math.abs(lng) <= 180 && zoom >= 0 && zoom <= 22)) return null;
  return { lat, lng, zoom };
}

export function formatView(map: L.Map): string {
  const centre = map.getCenter().wrap();
  return `${centre.lat.toFixed(6)},${centre.lng.toFixed(6)},${map.getZoom()}`;
}
