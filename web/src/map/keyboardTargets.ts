/**
 * Keyboard and screen-reader access to markers painted on a canvas: a canvas circle is no element,
 * so it can take no focus and carry no name. Over each marker drawn (a device or a group of them)
 * lies a transparent element of the same size that does: reached with Tab, named ("Van 7", "Group
 * of 12 devices"), and pressed with Enter or a click. Only the markers in view have one (the
 * clustering worker answers a few hundred at most), and a target keeps its element while its key
 * stays in the answers, so a focused device keeps the focus while it moves.
 */
import L from 'leaflet';
import type { DeviceState } from './devicesStore.ts';

/**
 * At most this many markers get a keyboard target (the ones nearest the centre): zoomed in past
 * the clustering's last level, thousands of devices can be in view, and thousands of elements
 * would make every zoom slow. Tab then reaches the devices around the centre; panning brings others.
 */
const MAX_TARGETS = 400;

export interface KeyboardTarget {
  lat: number;
  lng: number;
  /** The accessible name. */
  label: string;
  /** Diameter in pixels, the drawn circle's. */
  size: number;
}

/** A marker as drawn: one device, or a group of `count`. */
export interface DrawnMarker {
  key: string;
  at: L.LatLng;
  radius: number;
  count: number;
  device: DeviceState | undefined;
}

/** The targets for the markers drawn, named, the nearest `MAX_TARGETS` to `centre` when more. */
export function keyboardTargetsOf(markers: DrawnMarker[], centre: L.LatLng): Map<string, KeyboardTarget> {
  const distance = (m: DrawnMarker): number => (m.at.lat - centre.lat) ** 2 + (m.at.lng - centre.lng) ** 2;
  const kept =
    markers.length > MAX_TARGETS ? [...markers].sort((a, b) => distance(a) - distance(b)) : markers;
  const targets = new Map<string, KeyboardTarget>();
  for (const m of kept.slice(0, MAX_TARGETS)) {
    const inside = m.device && m.device.inside_geofence_ids.length > 0 ? ', inside a geofence' : '';
    targets.set(m.key, {
      lat: m.at.lat,
      lng: m.at.lng,
      size: 2 * Math.max(m.radius, 8),
      label: m.device
        ? `Device ${m.device.name}${inside}`
        : `Group of ${m.count.toLocaleString()} devices (zoom in)`,
    });
  }
  return targets;
}

export class KeyboardTargets {
  #map: L.Map;
  #markers = new Map<string, L.Marker>();
  #sizes = new WeakMap<L.Marker, number>();
  #onActivate: (key: string, latlng: L.LatLng) => void;

  constructor(map: L.Map, onActivate: (key: string, latlng: L.LatLng) => void) {
    this.#map = map;
    this.#onActivate = onActivate;
  }

  /** Makes the targets exactly these (by key): new ones added, gone ones removed, others updated. */
  sync(targets: ReadonlyMap<string, KeyboardTarget>): void {
    for (const [key, marker] of this.#markers) {
      if (targets.has(key)) continue;
      marker.remove();
      this.#markers.delete(key);
    }
    for (const [key, target] of targets) {
      const marker = this.#markers.get(key);
      if (marker) this.#update(marker, target);
      else this.#markers.set(key, this.#create(key, target));
    }
  }

  /** A device moved between two answers of the worker: its target follows at once. */
  move(key: string, lat: number, lng: number): void {
    this.#markers.get(key)?.setLatLng([lat, lng]);
  }

  destroy(): void {
    for (const marker of this.#markers.values()) marker.remove();
    this.#markers.clear();
  }

  #create(key: string, target: KeyboardTarget): L.Marker {
    const marker = L.marker([target.lat, target.lng], {
      icon: targetIcon(target.size),
      keyboard: true,
      title: target.label,
      // The circle below is the picture; the target only takes focus and clicks.
      riseOnHover: false,
      autoPanOnFocus: true,
    });
    this.#sizes.set(marker, target.size);
    marker.on('click', (e) => this.#onActivate(key, e.latlng));
    // Leaflet passes key presses on a marker to it as `keypress`; Enter presses the target.
    marker.on('keypress', (e) => {
      const event = (e as L.LeafletKeyboardEvent).originalEvent;
      if (event.key !== 'Enter' && event.key !== ' ') return;
      event.preventDefault();
      this.#onActivate(key, marker.getLatLng());
    });
    marker.addTo(this.#map);
    marker.getElement()?.setAttribute('aria-label', target.label);
    return marker;
  }

  #update(marker: L.Marker, target: KeyboardTarget): void {
    const at = marker.getLatLng();
    if (at.lat !== target.lat || at.lng !== target.lng) marker.setLatLng([target.lat, target.lng]);
    if (this.#sizes.get(marker) !== target.size) {
      this.#sizes.set(marker, target.size);
      const focused = marker.getElement() === document.activeElement;
      marker.setIcon(targetIcon(target.size));
      if (focused) marker.getElement()?.focus();
    }
    const element = marker.getElement();
    if (element && element.getAttribute('aria-label') !== target.label) {
      element.setAttribute('aria-label', target.label);
      element.title = target.label;
    }
  }
}

function targetIcon(size: number): L.DivIcon {
  return L.divIcon({ className: 'map-keyboard-target', iconSize: [size, size], html: '' });
}
