/**
 * Every device's last position for the map, outside React: plain objects for the side panel and
 * parallel typed arrays (index = position in `devices`) that are cheap to copy to the clustering
 * worker. An update changes a device in place; indices only change when the whole set is replaced.
 */
export interface DeviceState {
  id: string;
  name: string;
  external_id: string | null;
  lng: number;
  lat: number;
  accuracy: number | null;
  /** When the position was recorded (or, from the positions feed, last seen); null if unknown. */
  at: string | null;
  inside_geofence_ids: readonly string[];
}

export class DeviceStore {
  readonly devices: DeviceState[] = [];
  #index = new Map<string, number>();
  lng = new Float64Array(1024);
  lat = new Float64Array(1024);
  /** 1 when the device is inside at least one geofence. */
  inside = new Uint8Array(1024);

  get size(): number {
    return this.devices.length;
  }

  indexOf(id: string): number | undefined {
    return this.#index.get(id);
  }

  get(id: string): DeviceState | undefined {
    const i = this.#index.get(id);
    return i === undefined ? undefined : this.devices[i];
  }

  /** Adds or updates a device; returns its index. */
  upsert(device: DeviceState): number {
    let i = this.#index.get(device.id);
    if (i === undefined) {
      i = this.devices.length;
      this.#grow(i + 1);
      this.devices.push({ ...device });
      this.#index.set(device.id, i);
    } else {
      Object.assign(this.devices[i] as DeviceState, device);
    }
    this.lng[i] = device.lng;
    this.lat[i] = device.lat;
    this.inside[i] = device.inside_geofence_ids.length > 0 ? 1 : 0;
    return i;
  }

  clear(): void {
    this.devices.length = 0;
    this.#index.clear();
  }

  #grow(size: number): void {
    if (size <= this.lng.length) return;
    const capacity = Math.max(size, this.lng.length * 2);
    const lng = new Float64Array(capacity);
    const lat = new Float64Array(capacity);
    const inside = new Uint8Array(capacity);
    lng.set(this.lng);
    lat.set(this.lat);
    inside.set(this.inside);
    this.lng = lng;
    this.lat = lat;
    this.inside = inside;
  }
}
