/**
 * Looking up devices and geofences by text (the API's `q`) and by id, for pickers and for showing
 * names where a record only has an id. Names are cached for the tab's life: a rename shows after a
 * reload, which is fine for labels.
 */
import { api } from '../../api/client.ts';
import type { EntityOption } from '../../ui/EntityCombobox.tsx';

const MATCHES = 20;
const names = new Map<string, Promise<EntityOption | null>>();

/**
 * Devices whose name or external id contains `q`; a device whose external id is exactly `q` comes
 * first even when thousands of others contain it too (`q` matches are newest first).
 */
export async function searchDevices(q: string, signal: AbortSignal): Promise<EntityOption[]> {
  const text = q.trim();
  const [contains, exact] = await Promise.all([
    api.GET('/api/v1/devices', { params: { query: { q: text || undefined, limit: MATCHES } }, signal }),
    text
      ? api.GET('/api/v1/devices', { params: { query: { external_id: text, limit: 1 } }, signal })
      : Promise.resolve(null),
  ]);
  const found = [...(exact?.data?.results ?? []), ...(contains.data?.results ?? [])];
  const options = new Map<string, EntityOption>();
  for (const d of found) {
    const option = { id: d.id, label: d.name, detail: d.external_id === d.name ? null : d.external_id };
    options.set(d.id, option);
    names.set(d.id, Promise.resolve(option));
  }
  return [...options.values()].slice(0, MATCHES);
}

export async function searchGeofences(q: string, signal: AbortSignal): Promise<EntityOption[]> {
  const { data } = await api.GET('/api/v1/geofences', {
    params: { query: { q: q.trim() || undefined, limit: MATCHES } },
    signal,
  });
  return (data?.results ?? []).map((g) => ({
    id: g.id,
    label: g.name,
    detail: g.external_id === g.name ? null : g.external_id,
  }));
}

/** A device's name (cached), or null when it does not exist (any more). */
export function resolveDevice(id: string): Promise<EntityOption | null> {
  let found = names.get(id);
  if (!found) {
    found = api
      .GET('/api/v1/devices/{device_id}', { params: { path: { device_id: id } } })
      .then(({ data }) => (data ? { id: data.id, label: data.name, detail: data.external_id } : null))
      .catch(() => null);
    names.set(id, found);
    // A failure is not remembered: the next call asks again.
    void found.then((option) => {
      if (!option) names.delete(id);
    });
  }
  return found;
}

export async function resolveGeofence(id: string, signal?: AbortSignal): Promise<EntityOption | null> {
  const { data } = await api.GET('/api/v1/geofences/{geofence_id}', {
    params: { path: { geofence_id: id } },
    signal,
  });
  return data ? { id: data.id, label: data.name, detail: data.external_id } : null;
}

/** Remembers a device's name learned elsewhere (a live message, a created device). */
export function rememberDevice(option: EntityOption): void {
  names.set(option.id, Promise.resolve(option));
}
