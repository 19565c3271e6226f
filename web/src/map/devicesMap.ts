/**
 * The devices map, outside React: every device's last position, clustered when zoomed out, moving
 * live. Live positions are queued and applied once per animation frame; devices shown on their own
 * move at once, clusters follow when the worker has rebuilt its index (a few times a second). The
 * map draws only what the worker answered for the view (a few hundred circles), never one shape per
 * device when zoomed out.
 *
 * The devices have a canvas of their own, in a pane above the shared renderer's (which holds the
 * geofences and the trail): it repaints up to once per frame, and repainting thousands of
 * geofences with it — or a canvas padded to twice the map's size, like the shared one — would
 * not fit in a frame on a machine without a GPU.
 */
import L from 'leaflet';
import type { BaseMap } from './baseMap.ts';
import { type ClusterAnswer, ClusterClient } from './clusterClient.ts';
import { clusterRadius, countLabel, LabelledCircle } from './clusterMarker.ts';
import { ITEM_STRIDE } from './clusterProtocol.ts';
import { DeviceGeofenceLayer, type GeofenceShape } from './devicesGeofences.ts';
import { type DeviceState, DeviceStore } from './devicesStore.ts';
import {
  type DrawnMarker,
  type KeyboardTarget,
  KeyboardTargets,
  keyboardTargetsOf,
} from './keyboardTargets.ts';

export type { GeofenceShape } from './devicesGeofences.ts';
export type { DeviceState } from './devicesStore.ts';

const BLUE = '#0b5cad';
const INSIDE = '#d9480f';
const INK = '#1b2530';
const TRAIL = '#6b3fa0';
const PANE = 'devices-points';

export interface DevicesMapEvents {
  /** A device was clicked (not in simulate mode). */
  onDeviceClick(id: string): void;
  /** The map (or a device on it) was clicked in simulate mode. */
  onSimulateClick(latlng: L.LatLng): void;
  /** The selected device moved or changed (at most once per frame). */
  onSelectedChange(device: DeviceState | undefined): void;
  /** The number of devices on the map changed. */
  onCountChange(count: number): void;
  /** The first answer for a full set of positions has been drawn. */
  onDrawn(): void;
}

interface ItemRef {
  /** A cluster id, or a device index when `count` is 1. */
  id: number;
  count: number;
  build: number;
}

export class DevicesMap {
  readonly map: L.Map;
  readonly store = new DeviceStore();
  readonly geofences: DeviceGeofenceLayer;
  simulating = false;

  /** The devices' own canvas; the shared one (geofences, trail) is `base.renderer`. */
  #renderer: L.Canvas;
  #events: DevicesMapEvents;
  #cluster: ClusterClient;
  #pending = new Map<string, DeviceState>();
  #frame = 0;
  /** Some positions are on the map (views can be asked for). */
  #loaded = false;
  /** A snapshot is being loaded: live updates wait, to be applied on top of it. */
  #paused = false;
  #drawnPending = false;
  /**
   * Markers drawn for the current answer by item ("c<cluster id>" or "p<device index>"): an item in
   * the next answer keeps its marker, so only what changed is repainted.
   */
  #drawn = new Map<string, LabelledCircle>();
  #refs = new WeakMap<LabelledCircle, ItemRef>();
  /** Devices drawn on their own (not in a cluster): index → marker. */
  #singles = new Map<number, LabelledCircle>();
  #selectedId: string | null = null;
  #selectedMarker: LabelledCircle;
  #trail: L.Polyline;
  /** Focusable, named stand-ins for the markers drawn (keyboardTargets.ts), by item key. */
  #keyboard: KeyboardTargets;
  /** The map keeps the selected device in view while it moves. */
  #follow = false;

  constructor(base: BaseMap, events: DevicesMapEvents) {
    this.map = base.map;
    const pane = this.map.getPane(PANE) ?? this.map.createPane(PANE);
    // Above the overlay pane (400) with the shared canvas, below markers and popups (600+).
    pane.style.zIndex = '450';
    this.#renderer = L.canvas({ pane: PANE, padding: 0.1, tolerance: 4 });
    this.#events = events;
    this.geofences = new DeviceGeofenceLayer(this.map, base.renderer);
    this.#cluster = new ClusterClient((answer) => this.#draw(answer));
    this.#keyboard = new KeyboardTargets(this.map, (key, latlng) => {
      const marker = this.#drawn.get(key);
      if (marker) void this.#onMarkerClick(marker, latlng);
    });
    this.#trail = L.polyline([], {
      renderer: base.renderer,
      color: TRAIL,
      weight: 3,
      opacity: 0.85,
      interactive: false,
    }).addTo(this.map);
    this.#selectedMarker = new LabelledCircle([0, 0], {
      renderer: this.#renderer,
      radius: 8,
      weight: 3,
      color: INK,
      fillOpacity: 1,
      bubblingMouseEvents: false,
    });
    this.#selectedMarker.on('click', (e) => {
      if (this.simulating) this.#events.onSimulateClick(e.latlng);
    });
    this.map.on('moveend', this.#requestView);
    this.map.on('click', this.#onMapClick);
  }

  destroy(): void {
    cancelAnimationFrame(this.#frame);
    this.map.off('moveend', this.#requestView);
    this.map.off('click', this.#onMapClick);
    this.#cluster.destroy();
    this.#keyboard.destroy();
  }

  /** A new snapshot is on its way: hold live updates until `setDevices(…, true)` has applied it. */
  holdLiveUpdates(): void {
    this.#paused = true;
  }

  /**
   * Replaces every device with a snapshot (`complete`: the whole of it, not a part still loading).
   * Live updates queued meanwhile are newer than the snapshot and applied after it.
   */
  setDevices(devices: readonly DeviceState[], complete = true): void {
    this.store.clear();
    for (const device of devices) this.store.upsert(device);
    this.#loaded = true;
    if (complete) this.#paused = false;
    this.#drawnPending = complete;
    this.#cluster.set(this.store.size, this.store.lng, this.store.lat, this.store.inside);
    this.#requestView();
    this.#events.onCountChange(this.store.size);
    this.#refreshSelected(true);
    this.#schedule();
  }

  /** Queues a device's new position; applied with the others at the next animation frame. */
  queue(device: DeviceState): void {
    this.#pending.set(device.id, device);
    this.#schedule();
  }

  select(id: string | null): void {
    this.#selectedId = id;
    this.#refreshSelected(true);
  }

  /**
   * Follow mode: while on, the map centres the selected device whenever it moves (and at once when
   * turned on), so a moving device never leaves the view.
   */
  setFollow(on: boolean): void {
    this.#follow = on;
    if (on) this.#keepSelectedInView();
  }

  get following(): boolean {
    return this.#follow;
  }

  /** Centres the map on a device (zooming in to at least `minZoom`). */
  focus(id: string, minZoom = 15): boolean {
    const device = this.store.get(id);
    if (!device) return false;
    this.map.setView([device.lat, device.lng], Math.max(this.map.getZoom(), minZoom));
    return true;
  }

  /** Fits the map to every device; with none yet, to the geofences (nothing when there are neither). */
  fitAll(): void {
    const { size, lat, lng } = this.store;
    if (size === 0) {
      const box = this.geofences.bounds();
      if (box) this.map.fitBounds(box, { padding: [30, 30], maxZoom: 15 });
      return;
    }
    let south = 90;
    let north = -90;
    let west = 180;
    let east = -180;
    for (let i = 0; i < size; i++) {
      const la = lat[i] ?? 0;
      const ln = lng[i] ?? 0;
      if (la < south) south = la;
      if (la > north) north = la;
      if (ln < west) west = ln;
      if (ln > east) east = ln;
    }
    this.map.fitBounds(
      [
        [south, west],
        [north, east],
      ],
      { padding: [30, 30], maxZoom: 15 },
    );
  }

  /** Adds geofences under the devices (in chunks); resolves when all are on the map. */
  async addGeofences(shapes: readonly GeofenceShape[]): Promise<void> {
    await this.geofences.add(shapes);
    this.#trail.bringToFront();
  }

  /** Highlights the geofences a device is inside; the trail stays above them. */
  highlightGeofences(ids: readonly string[]): void {
    this.geofences.highlight(ids);
    this.#trail.bringToFront();
  }

  setTrail(points: L.LatLngExpression[]): void {
    this.#trail.setLatLngs(points);
    this.#trail.bringToFront();
  }

  /** Fits the map to the trail (nothing when it has no point). */
  fitTrail(): void {
    if (this.#trail.getLatLngs().length === 0) return;
    this.map.fitBounds(this.#trail.getBounds(), { padding: [30, 30], maxZoom: 16 });
  }

  extendTrail(point: L.LatLngExpression): void {
    this.#trail.addLatLng(point);
  }

  #schedule(): void {
    if (!this.#frame) this.#frame = requestAnimationFrame(this.#flush);
  }

  #flush = (): void => {
    this.#frame = 0;
    if (!this.#loaded || this.#paused || this.#pending.size === 0) return;
    const n = this.#pending.size;
    const idx = new Int32Array(n);
    const lng = new Float64Array(n);
    const lat = new Float64Array(n);
    const inside = new Uint8Array(n);
    const sizeBefore = this.store.size;
    let selectedMoved = false;
    let k = 0;
    for (const device of this.#pending.values()) {
      const i = this.store.upsert(device);
      idx[k] = i;
      lng[k] = device.lng;
      lat[k] = device.lat;
      inside[k] = this.store.inside[i] ?? 0;
      k += 1;
      const single = this.#singles.get(i);
      if (single) {
        this.#moveTo(single, device.lat, device.lng);
        this.#stylePoint(single, inside[k - 1] === 1);
        this.#keyboard.move(`p${i}`, device.lat, device.lng);
      }
      if (device.id === this.#selectedId) selectedMoved = true;
    }
    this.#pending.clear();
    this.#cluster.patch(idx, lng, lat, inside);
    if (this.store.size !== sizeBefore) this.#events.onCountChange(this.store.size);
    if (selectedMoved) {
      this.#refreshSelected(false);
      if (this.#follow) this.#keepSelectedInView();
    }
  };

  #keepSelectedInView(): void {
    const device = this.#selectedId ? this.store.get(this.#selectedId) : undefined;
    if (device) this.map.panTo([device.lat, device.lng]);
  }

  #requestView = (): void => {
    if (!this.#loaded) return;
    // The devices canvas is padded by 0.1 of the view: what lies beyond would not be painted.
    const bounds = this.map.getBounds().pad(0.1);
    let west = bounds.getWest();
    let east = bounds.getEast();
    if (east - west >= 360) {
      west = -180;
      east = 180;
    } else {
      west = wrap(west);
      east = wrap(east);
    }
    const bbox: [number, number, number, number] = [
      west,
      Math.max(-85, bounds.getSouth()),
      east,
      Math.min(85, bounds.getNorth()),
    ];
    this.#cluster.view(bbox, Math.floor(this.map.getZoom()));
  };

  #draw({ items, build }: ClusterAnswer): void {
    const count = items.length / ITEM_STRIDE;
    const previous = this.#drawn;
    const next = new Map<string, LabelledCircle>();
    const unmatched: number[] = [];
    for (let k = 0; k < count; k++) {
      const key = itemKey(items, k);
      const marker = previous.get(key);
      if (marker) {
        previous.delete(key);
        next.set(key, marker);
        this.#apply(marker, items, k, build);
      } else unmatched.push(k);
    }
    // Markers of items gone serve the new items (no removing and re-adding layers); the rest go.
    const spare = [...previous.values()];
    for (const k of unmatched) {
      const marker = spare.pop() ?? this.#newMarker();
      next.set(itemKey(items, k), marker);
      this.#apply(marker, items, k, build);
    }
    for (const marker of spare) marker.remove();
    this.#drawn = next;
    this.#singles.clear();
    for (const [key, marker] of next)
      if (key.startsWith('p')) this.#singles.set(Number(key.slice(1)), marker);
    this.#keyboard.sync(this.#keyboardTargets(next));
    if (this.map.hasLayer(this.#selectedMarker)) this.#selectedMarker.bringToFront();
    if (this.#drawnPending) {
      this.#drawnPending = false;
      // Leaflet paints the canvas at the next frame; report after that.
      requestAnimationFrame(() => requestAnimationFrame(() => this.#events.onDrawn()));
    }
  }

  /** What each marker drawn is, for keyboards and screen readers: a device's name, a group's size. */
  #keyboardTargets(drawn: ReadonlyMap<string, LabelledCircle>): Map<string, KeyboardTarget> {
    const markers: DrawnMarker[] = [];
    for (const [key, marker] of drawn) {
      const ref = this.#refs.get(marker);
      if (!ref) continue;
      const device = ref.count === 1 ? this.store.devices[ref.id] : undefined;
      if (ref.count === 1 && !device) continue;
      markers.push({ key, at: marker.getLatLng(), radius: marker.getRadius(), count: ref.count, device });
    }
    return keyboardTargetsOf(markers, this.map.getCenter());
  }

  #apply(marker: LabelledCircle, items: Float64Array, k: number, build: number): void {
    const o = k * ITEM_STRIDE;
    const n = items[o + 2] ?? 1;
    const id = items[o + 3] ?? 0;
    this.#refs.set(marker, { id, count: n, build });
    const label = n > 1 ? countLabel(n) : '';
    if (marker.label !== label) {
      marker.label = label;
      marker.redraw();
    }
    if (n > 1) {
      this.#moveTo(marker, items[o + 1] ?? 0, items[o] ?? 0);
      this.#styleCluster(marker, n, (items[o + 4] ?? 0) > 0);
    } else {
      // A device alone is drawn where it is now, which may be newer than the worker's index.
      const { lng, lat, inside } = this.store;
      this.#moveTo(marker, lat[id] ?? 0, lng[id] ?? 0);
      this.#stylePoint(marker, inside[id] === 1);
    }
  }

  /**
   * Moves a marker unless the move is under half a pixel: every move adds the marker's area to
   * what the canvas repaints, and most cluster centres barely shift between two index builds.
   */
  #moveTo(marker: LabelledCircle, lat: number, lng: number): void {
    const current = marker.getLatLng();
    const degreesPerPixel = 360 / (256 * 2 ** this.map.getZoom());
    const halfPixel = degreesPerPixel / 2;
    if (
      Math.abs(current.lng - lng) < halfPixel &&
      Math.abs(current.lat - lat) < halfPixel * Math.cos((lat * Math.PI) / 180)
    )
      return;
    marker.setLatLng([lat, lng]);
  }

  #newMarker(): LabelledCircle {
    const marker = new LabelledCircle([0, 0], {
      renderer: this.#renderer,
      radius: 5,
      bubblingMouseEvents: false,
    });
    marker.on('click', (e) => void this.#onMarkerClick(marker, e.latlng));
    marker.addTo(this.map);
    return marker;
  }

  #stylePoint(marker: LabelledCircle, isInside: boolean): void {
    const key = isInside ? 'p1' : 'p0';
    if (marker.styleKey === key) return;
    marker.styleKey = key;
    marker.setStyle({
      radius: 5,
      color: '#ffffff',
      weight: 1.5,
      opacity: 1,
      fillColor: isInside ? INSIDE : BLUE,
      fillOpacity: 1,
    });
  }

  #styleCluster(marker: LabelledCircle, count: number, anyInside: boolean): void {
    const radius = clusterRadius(count);
    const key = `c${radius}${anyInside ? 1 : 0}`;
    if (marker.styleKey === key) return;
    marker.styleKey = key;
    marker.setStyle({
      radius,
      color: anyInside ? INSIDE : '#ffffff',
      weight: anyInside ? 3 : 2,
      opacity: 1,
      fillColor: BLUE,
      fillOpacity: 0.88,
    });
  }

  async #onMarkerClick(marker: LabelledCircle, latlng: L.LatLng): Promise<void> {
    if (this.simulating) {
      this.#events.onSimulateClick(latlng);
      return;
    }
    const ref = this.#refs.get(marker);
    if (!ref) return;
    if (ref.count === 1) {
      const device = this.store.devices[ref.id];
      if (device) this.#events.onDeviceClick(device.id);
      return;
    }
    const center = marker.getLatLng();
    const zoom = await this.#cluster.expansionZoom(ref.build, ref.id);
    this.map.setView(center, Math.min(zoom ?? this.map.getZoom() + 2, this.map.getMaxZoom()));
  }

  #onMapClick = (e: L.LeafletMouseEvent): void => {
    if (this.simulating) this.#events.onSimulateClick(e.latlng);
  };

  #refreshSelected(changed: boolean): void {
    const device = this.#selectedId ? this.store.get(this.#selectedId) : undefined;
    if (device) {
      this.#selectedMarker.setLatLng([device.lat, device.lng]);
      this.#selectedMarker.setStyle({ fillColor: device.inside_geofence_ids.length > 0 ? INSIDE : BLUE });
      if (!this.map.hasLayer(this.#selectedMarker)) this.#selectedMarker.addTo(this.map);
      this.#selectedMarker.bringToFront();
    } else if (this.map.hasLayer(this.#selectedMarker)) {
      this.#selectedMarker.remove();
    }
    if (changed || device) this.#events.onSelectedChange(device);
  }
}

function itemKey(items: Float64Array, k: number): string {
  const o = k * ITEM_STRIDE;
  return `${(items[o + 2] ?? 1) > 1 ? 'c' : 'p'}${items[o + 3] ?? 0}`;
}

function wrap(lng: number): number {
  return ((((lng + 180) % 360) + 360) % 360) - 180;
}
