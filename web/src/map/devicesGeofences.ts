/**
 * The geofences under the devices map, drawn lightly on the shared canvas renderer, with the ones a
 * device is inside highlighted. They change rarely (a view change, a new highlight), so they share
 * the canvas of the map's other static shapes; the devices, which move many times a second, have a
 * canvas of their own above (see DevicesMap).
 */
import L from 'leaflet';
import type { Schemas } from '../api/client.ts';

export interface GeofenceShape {
  id: string;
  name: string;
  geometry: Schemas['GeofenceGeometry'];
}

/** Shapes created per animation frame while loading, so thousands never block the page. */
const CHUNK = 1000;

const NORMAL: L.PathOptions = {
  color: '#3f6e9e',
  weight: 1,
  opacity: 0.55,
  fillColor: '#3f6e9e',
  fillOpacity: 0.06,
};
const HIGHLIGHT: L.PathOptions = {
  color: '#d9480f',
  weight: 2.5,
  opacity: 1,
  fillColor: '#d9480f',
  fillOpacity: 0.18,
};

export class DeviceGeofenceLayer {
  readonly names = new Map<string, string>();
  #layers = new Map<string, L.Path>();
  #highlighted: string[] = [];
  #renderer: L.Canvas;
  #group: L.LayerGroup;
  #loading = 0;

  constructor(map: L.Map, renderer: L.Canvas) {
    this.#renderer = renderer;
    this.#group = L.layerGroup().addTo(map);
  }

  get size(): number {
    return this.names.size;
  }

  /** Adds shapes (in chunks, one per animation frame); resolves when all are on the map. */
  /** The box around every geofence on the map, or null when there is none. */
  bounds(): L.LatLngBounds | null {
    let box: L.LatLngBounds | null = null;
    for (const layer of this.#layers.values()) {
      const b = (layer as L.Polygon | L.Circle).getBounds();
      box = box ? box.extend(b) : L.latLngBounds(b.getSouthWest(), b.getNorthEast());
    }
    return box;
  }

  async add(shapes: readonly GeofenceShape[]): Promise<void> {
    const run = this.#loading;
    for (let start = 0; start < shapes.length; start += CHUNK) {
      if (start > 0) await nextFrame();
      if (run !== this.#loading) return;
      for (const shape of shapes.slice(start, start + CHUNK)) this.#add(shape);
    }
    this.#applyHighlight(this.#highlighted, true);
  }

  clear(): void {
    this.#loading += 1;
    this.#group.clearLayers();
    this.#layers.clear();
    this.names.clear();
  }

  /** Highlights exactly these geofences (those the selected device is inside). */
  highlight(ids: readonly string[]): void {
    const next = [...ids];
    for (const id of this.#highlighted) if (!next.includes(id)) this.#layers.get(id)?.setStyle(NORMAL);
    this.#applyHighlight(next, false);
    this.#highlighted = next;
  }

  #applyHighlight(ids: readonly string[], force: boolean): void {
    for (const id of ids) {
      if (!force && this.#highlighted.includes(id)) continue;
      const layer = this.#layers.get(id);
      layer?.setStyle(HIGHLIGHT);
      layer?.bringToFront();
    }
  }

  #add(shape: GeofenceShape): void {
    const style = { ...NORMAL, renderer: this.#renderer, interactive: false };
    const g = shape.geometry;
    let layer: L.Path;
    if (g.type === 'Circle') {
      layer = L.circle([g.coordinates[1] ?? 0, g.coordinates[0] ?? 0], { ...style, radius: g.radius });
    } else {
      const rings = g.coordinates.map((ring) => ring.map(([lng = 0, lat = 0]) => L.latLng(lat, lng)));
      layer = L.polygon(rings, style);
    }
    this.#layers.get(shape.id)?.remove();
    this.#layers.set(shape.id, layer);
    this.names.set(shape.id, shape.name);
    this.#group.addLayer(layer);
  }
}

function nextFrame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}
