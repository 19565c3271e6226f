/**
 * The size of a shape while it is drawn, in a label beside the pointer: a circle's radius, a
 * rectangle's sides, a polygon's area. Whoever draws a "depot" sees at once that it is 4 m across,
 * not 400.
 */
import L from 'leaflet';

/** Mean Earth radius (metres), as the API measures geofences. */
const EARTH_RADIUS = 6_371_008.8;

export function showDrawSize(map: L.Map): void {
  map.on('pm:drawstart', ({ shape, workingLayer }) => {
    if (shape !== 'Circle' && shape !== 'Rectangle' && shape !== 'Polygon') return;
    const tip = L.tooltip({ permanent: true, direction: 'top', offset: [0, -14], className: 'draw-size' });
    const follow = (event: L.LeafletMouseEvent): void => {
      const text = sizeText(map, workingLayer, event.latlng);
      if (text === null) tip.remove();
      else {
        tip.setLatLng(event.latlng).setContent(text);
        if (!map.hasLayer(tip)) tip.addTo(map);
      }
    };
    map.on('mousemove', follow);
    map.once('pm:drawend', () => {
      map.off('mousemove', follow);
      tip.remove();
    });
  });
}

/** The size to show with the pointer at `pointer`, or null before the shape has one. */
function sizeText(map: L.Map, layer: L.Layer, pointer: L.LatLng): string | null {
  if (layer instanceof L.Circle) {
    // Geoman's working circle joins the map when its centre is placed.
    return map.hasLayer(layer) ? `Radius ${distance(layer.getRadius())}` : null;
  }
  if (layer instanceof L.Rectangle) {
    if (!map.hasLayer(layer)) return null;
    const b = layer.getBounds();
    return `${distance(map.distance(b.getSouthWest(), b.getSouthEast()))} × ${distance(map.distance(b.getSouthWest(), b.getNorthWest()))}`;
  }
  if (layer instanceof L.Polyline) {
    const placed = layer.getLatLngs() as L.LatLng[];
    return placed.length >= 2 ? `Area ${area(ringArea([...placed, pointer]))}` : null;
  }
  return null;
}

/**
 * The area of a ring on the sphere, m² (Chamberlain & Duquette, "Some algorithms for polygons on a
 * sphere", JPL 2007, as in Mapbox's geojson-area).
 */
function ringArea(ring: L.LatLng[]): number {
  const rad = Math.PI / 180;
  let sum = 0;
  for (let i = 0; i < ring.length; i++) {
    const before = ring[(i + ring.length - 1) % ring.length] as L.LatLng;
    const here = ring[i] as L.LatLng;
    const after = ring[(i + 1) % ring.length] as L.LatLng;
    sum += (after.lng - before.lng) * rad * Math.sin(here.lat * rad);
  }
  return Math.abs((sum * EARTH_RADIUS * EARTH_RADIUS) / 2);
}

const number = (value: number, digits: number): string =>
  value.toLocaleString(undefined, { maximumFractionDigits: digits });

function distance(metres: number): string {
  if (metres < 10) return `${number(metres, 1)} m`;
  if (metres < 1000) return `${number(metres, 0)} m`;
  return `${number(metres / 1000, metres < 10_000 ? 2 : 1)} km`;
}

function area(squareMetres: number): string {
  if (squareMetres < 10_000) return `${number(squareMetres, 0)} m²`;
  if (squareMetres < 1_000_000) return `${number(squareMetres / 10_000, 2)} ha`;
  return `${number(squareMetres / 1_000_000, 2)} km²`;
}
