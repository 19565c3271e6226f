/**
 * Looking up devices and geofences by text (the API's `q`) and by id, for pickers and for showing
 * names where a record only has an id. Names live in the query cache under `['devices', 'name', id]`
 * and `['geofences', 'name', id]`, so a device renamed here (which invalidates `['devices']`) shows
 * its new name, and a search teaches the cache the names it found.
 */
import { type QueryClient, useQueries, useQueryClient } from '@tanstack/react-query';
import { useMemo } from 'react';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { EntityOption } from '../../ui/EntityCombobox.tsx';

const MATCHES = 20;
/** Labels change rarely; a rename made here invalidates them at once. */
const NAME_STALE_MS = 5 * 60_000;

const deviceName = (id: string) => ['devices', 'name', id] as const;
const geofenceName = (id: string) => ['geofences', 'name', id] as const;

function deviceNameQuery(id: string) {
  return {
    queryKey: deviceName(id),
    queryFn: ({ signal }: { signal: AbortSignal }) =>
      answerOf(api.GET('/api/v1/devices/{device_id}', { params: { path: { device_id: id } }, signal })).then(
        (d): EntityOption => ({ id: d.id, label: d.name, detail: d.external_id }),
      ),
    staleTime: NAME_STALE_MS,
  };
}

function geofenceNameQuery(id: string) {
  return {
    queryKey: geofenceName(id),
    queryFn: ({ signal }: { signal: AbortSignal }) =>
      answerOf(
        api.GET('/api/v1/geofences/{geofence_id}', { params: { path: { geofence_id: id } }, signal }),
      ).then((g): EntityOption => ({ id: g.id, label: g.name, detail: g.external_id })),
    staleTime: NAME_STALE_MS,
  };
}

/**
 * Devices whose name or external id contains `q`; a device whose external id is exactly `q` comes
 * first even when thousands of others contain it too (`q` matches are newest first).
 */
async function searchDevices(client: QueryClient, q: string, signal: AbortSignal): Promise<EntityOption[]> {
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
    client.setQueryData(deviceName(d.id), option);
  }
  return [...options.values()].slice(0, MATCHES);
}

async function searchGeofences(q: string, signal: AbortSignal): Promise<EntityOption[]> {
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

export interface EntityLookups {
  searchDevices(q: string, signal: AbortSignal): Promise<EntityOption[]>;
  searchGeofences(q: string, signal: AbortSignal): Promise<EntityOption[]>;
  /** A device's name (cached), or null when it does not exist (any more); a failure is not kept. */
  resolveDevice(id: string): Promise<EntityOption | null>;
  resolveGeofence(id: string): Promise<EntityOption | null>;
  /** Remembers a device's name learned elsewhere (a live message, a created device). */
  rememberDevice(option: EntityOption): void;
}

/** The lookups, bound to the page's query cache. */
export function useEntityLookups(): EntityLookups {
  const client = useQueryClient();
  return useMemo(
    () => ({
      searchDevices: (q, signal) => searchDevices(client, q, signal),
      searchGeofences,
      resolveDevice: (id) => client.fetchQuery(deviceNameQuery(id)).catch(() => null),
      resolveGeofence: (id) => client.fetchQuery(geofenceNameQuery(id)).catch(() => null),
      rememberDevice: (option) => client.setQueryData(deviceName(option.id), option),
    }),
    [client],
  );
}

/** Names of these devices by id, each looked up once (while cached); unknown ones are absent. */
export function useDeviceNames(ids: readonly string[]): ReadonlyMap<string, string> {
  const unique = [...new Set(ids)];
  return useQueries({
    queries: unique.map((id) => ({ ...deviceNameQuery(id), retry: false })),
    combine: (results) => {
      const names = new Map<string, string>();
      for (const { data } of results) if (data) names.set(data.id, data.label);
      return names;
    },
  });
}

/** Names of these geofences by id, each looked up once (while cached); unknown ones are absent. */
export function useGeofenceNames(ids: readonly string[]): ReadonlyMap<string, string> {
  const unique = [...new Set(ids)];
  return useQueries({
    queries: unique.map((id) => ({ ...geofenceNameQuery(id), retry: false })),
    combine: (results) => {
      const names = new Map<string, string>();
      for (const { data } of results) if (data) names.set(data.id, data.label);
      return names;
    },
  });
}
