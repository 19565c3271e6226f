/**
 * The calls of the devices pages that read lists and sessions, and the queries over them. Keys
 * start with `devices` (names in the pickers included), so a created or changed device refreshes
 * every list and label; a device's sessions sit under `['devices', 'sessions', id]`.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';

export const PAGE_SIZE = 50;

export type DeviceSort = NonNullable<NonNullable<operations['listDevices']['parameters']['query']>['sort']>;

export const deviceKeys = {
  all: ['devices'] as const,
  list: (q: string | undefined, sort: DeviceSort, offset: number) =>
    ['devices', 'list', { q, sort, offset }] as const,
  one: (id: string) => ['devices', 'one', id] as const,
  sessions: (deviceId: string) => ['devices', 'sessions', deviceId] as const,
};

export function useDeviceList(q: string | undefined, sort: DeviceSort, offset: number) {
  return useQuery({
    queryKey: deviceKeys.list(q, sort, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/devices', { params: { query: { q, sort, offset, limit: PAGE_SIZE } }, signal }),
      ),
  });
}

/** The device's newest tracking session, active or not (a session changes as it runs: no staleness). */
export function useLatestSession(deviceId: string) {
  return useQuery({
    queryKey: deviceKeys.sessions(deviceId),
    queryFn: ({ signal }) =>
      answerOf(api.GET('/api/v1/sessions', { params: { query: { device_id: deviceId, limit: 1 } }, signal })),
    staleTime: 0,
  });
}

export function createDevice(body: operations['createDevice']['requestBody']['content']['application/json']) {
  return api.POST('/api/v1/devices', { body });
}

export function startTrackingSession(deviceId: string) {
  return api.POST('/api/v1/devices/{device_id}/sessions', {
    params: { path: { device_id: deviceId } },
    body: {},
  });
}

export function stopTrackingSession(sessionId: string) {
  return api.POST('/api/v1/sessions/{session_id}/stop', { params: { path: { session_id: sessionId } } });
}

/** One device. Its last position moves, so it is read again whenever a page shows it. */
export function useDevice(id: string) {
  return useQuery({
    queryKey: deviceKeys.one(id),
    queryFn: ({ signal }) =>
      answerOf(api.GET('/api/v1/devices/{device_id}', { params: { path: { device_id: id } }, signal })),
    staleTime: 0,
  });
}

type DeviceChange = operations['updateDevice']['requestBody']['content']['application/json'];

export function updateDevice(id: string, body: DeviceChange) {
  return api.PATCH('/api/v1/devices/{device_id}', { params: { path: { device_id: id } }, body });
}

export function deleteDevice(id: string) {
  return api.DELETE('/api/v1/devices/{device_id}', { params: { path: { device_id: id } } });
}

type NewLocation = operations['createLocation']['requestBody']['content']['application/json'];

export function sendLocation(deviceId: string, body: NewLocation) {
  return api.POST('/api/v1/devices/{device_id}/locations', {
    params: { path: { device_id: deviceId } },
    body,
  });
}

type LocationsQuery = NonNullable<operations['listDeviceLocations']['parameters']['query']>;

/** A page of the device's stored locations (its trail is drawn from them, kept by the map). */
export function listDeviceLocations(deviceId: string, query: LocationsQuery, signal: AbortSignal) {
  return api.GET('/api/v1/devices/{device_id}/locations', {
    params: { path: { device_id: deviceId }, query },
    signal,
  });
}

/**
 * The device's newest tracking session (or null) and its locations, newest first; without any
 * session, the device's latest locations. `locations` is undefined when they could not be read.
 */
export async function loadRecentTrail(deviceId: string, limit: number, signal: AbortSignal) {
  const sessions = await api.GET('/api/v1/sessions', {
    params: { query: { device_id: deviceId, limit: 1 } },
    signal,
  });
  const session = sessions.data?.results[0] ?? null;
  const locations = session
    ? await api.GET('/api/v1/sessions/{session_id}/locations', {
        params: { path: { session_id: session.id }, query: { limit } },
        signal,
      })
    : await listDeviceLocations(deviceId, { limit }, signal);
  return { session, locations: locations.data?.results };
}

export const tokenKeys = { of: (deviceId: string) => ['devices', 'tokens', deviceId] as const };

/** The device's tracker tokens (the first 200). */
export function useDeviceTokens(deviceId: string) {
  return useQuery({
    queryKey: tokenKeys.of(deviceId),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/devices/{device_id}/tokens', {
          params: { path: { device_id: deviceId }, query: { limit: 200 } },
          signal,
        }),
      ),
  });
}

export function createDeviceToken(deviceId: string, name: string) {
  return api.POST('/api/v1/devices/{device_id}/tokens', {
    params: { path: { device_id: deviceId } },
    body: { name },
  });
}

export function revokeDeviceToken(deviceId: string, tokenId: string) {
  return api.DELETE('/api/v1/devices/{device_id}/tokens/{token_id}', {
    params: { path: { device_id: deviceId, token_id: tokenId } },
  });
}
