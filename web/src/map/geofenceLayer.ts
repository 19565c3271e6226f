/**
 * Every geofence of the workspace on the map: one Leaflet path each on the shared canvas renderer
 * (thousands of shapes, one canvas, no DOM node per shape), circles as true circles in metres,
 * polygons with their holes, disabled ones grey and dashed. Clicking a shape reports its id; a
 * single tooltip follows the pointer with the name. Nothing here is React state.
 */
import L from 'leaflet';
import { type GeofenceGeometry, geometryBounds, geometryLayer } from './geofenceGeometry.ts';

export interface GeofenceShape {
  id: string;
  name: string;
  enabled: boolean;
  geometry: GeofenceGeometry;
  bbox?: readonly number[] | null;
}

interface Entry {
  shape: GeofenceShape;
  layer: L.Polygon | L.Circle;
}

const ENABLED: L.PathOptions = {
  color: '#0b5cad',
  weight: 2,
  opacity: 0.9,
  fillOpacity: 0.12,
  dashArray: undefined,
};
const DISABLED: L.PathOptions = {
  color: '#6b7785',
  weight: 2,
  opacity: 0.9,
  fillOpacity: 0.05,
  dashArray: '6 6',
};
const SELECTED: L.PathOptions = { color: '#d9480f', weight: 4, opacity: 1, fillOpacity: 0.2 };

export function shapeStyle(enabled: boolean): L.PathOptions {
  return enabled ? ENABLED : DISABLED;
}

export class GeofenceLayer {
  private readonly group: L.FeatureGroup;
  private readonly entries = new Map<string, Entry>();
  private readonly ids = new WeakMap<L.Layer, string>();
  private readonly tooltip = L.tooltip({ sticky: true, direction: 'top', offset: [0, -8] });
  private selected: string | null = null;
  private hidden: string | null = null;

  constructor(
    private readonly map: L.Map,
    private readonly renderer: L.Canvas,
    onSelect: (id: string) => void,
    /** True while a drawing tool is active: then a click belongs to the tool, not to selection. */
    busy: () => boolean,
  ) {
    this.group = L.featureGroup().addTo(map);
    this.group.on('click', (e: L.LeafletMouseEvent) => {
      const id = this.ids.get(e.propagatedFrom as L.Layer);
      if (id && !busy()) onSelect(id);
    });
    this.group.on('mouseover', (e: L.LeafletMouseEvent) => {
      const id = this.ids.get(e.propagatedFrom as L.Layer);
      const entry = id ? this.entries.get(id) : undefined;
      if (!entry || busy()) return;
      const label = document.createElement('span');
      label.textContent = entry.shape.enabled ? entry.shape.name : `${entry.shape.name} (disabled)`;
      this.tooltip.setContent(label).setLatLng(e.latlng).addTo(this.map);
    });
    this.group.on('mousemove', (e: L.LeafletMouseEvent) => {
      if (this.map.hasLayer(this.tooltip)) this.tooltip.setLatLng(e.latlng);
    });
    this.group.on('mouseout', () => this.tooltip.remove());
  }

  /** Replaces every shape (after the first load or an import). */
  setAll(shapes: readonly GeofenceShape[]): void {
    this.group.clearLayers();
    this.entries.clear();
    for (const shape of shapes) this.add(shape);
    this.restyleSelected();
  }

  upsert(shape: GeofenceShape): void {
    this.remove(shape.id);
    this.add(shape);
    this.restyleSelected();
  }

  remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.group.removeLayer(entry.layer);
    this.entries.delete(id);
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Highlights one shape (or none) and draws it above the others. */
  select(id: string | null): void {
    const previous = this.selected ? this.entries.get(this.selected) : undefined;
    if (previous) previous.layer.setStyle(shapeStyle(previous.shape.enabled));
    this.selected = id;
    this.restyleSelected();
  }

  /** Takes a shape off the map while its editable copy is shown, and puts back the last one hidden. */
  hide(id: string | null): void {
    if (this.hidden === id) return;
    const shown = this.hidden ? this.entries.get(this.hidden) : undefined;
    if (shown && !this.group.hasLayer(shown.layer)) this.group.addLayer(shown.layer);
    this.hidden = id;
    const entry = id ? this.entries.get(id) : undefined;
    if (entry) this.group.removeLayer(entry.layer);
  }

  boundsOf(id: string): L.LatLngBounds | null {
    const entry = this.entries.get(id);
    return entry ? geometryBounds(entry.shape.geometry, entry.shape.bbox) : null;
  }

  /** The bounds of every shape, from their bboxes (no projection needed), or null with none. */
  bounds(): L.LatLngBounds | null {
    let all: L.LatLngBounds | null = null;
    for (const { shape } of this.entries.values()) {
      const b = geometryBounds(shape.geometry, shape.bbox);
      all = all ? all.extend(b) : L.latLngBounds(b.getSouthWest(), b.getNorthEast());
    }
    return all;
  }

  private add(shape: GeofenceShape): void {
    const layer = geometryLayer(shape.geometry, {
      ...shapeStyle(shape.enabled),
      renderer: this.renderer,
      // Geoman leaves these alone: only the one shape being edited takes part in drawing tools.
      pmIgnore: true,
      snapIgnore: true,
    });
    this.entries.set(shape.id, { shape, layer });
    this.ids.set(layer, shape.id);
    if (shape.id !== this.hidden) this.group.addLayer(layer);
  }

  private restyleSelected(): void {
    const entry = this.selected ? this.entries.get(this.selected) : undefined;
    if (!entry) return;
    entry.layer.setStyle(entry.shape.enabled ? SELECTED : { ...SELECTED, dashArray: '6 6' });
    if (this.group.hasLayer(entry.layer)) entry.layer.bringToFront();
  }
}
