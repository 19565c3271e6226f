/**
 * The calls the workflows area makes besides /workflows itself: geofences for the trigger picker
 * (by name, by id, all of them for the map) and the workspace's webhooks for `webhook` actions.
 */
import { api, errorMessage, type Schemas } from '../../api/client.ts';
import type { EntityOption } from '../../ui/EntityCombobox.tsx';
import type { PreviewGeofence } from './preview.ts';

const MATCHES = 20;

export async function searchGeofences(q: string, signal: AbortSignal): Promise<EntityOption[]> {
  const { data } = await api.GET('/api/v1/geofences', {
    params: { query: { q: q.trim() || undefined, limit: MATCHES } },
    signal,
  });
  return (data?.results ?? []).map((g) => ({
    id: g.id,
    label: g.name,
    detail: g.enabled ? null : 'disabled',
  }));
}

/** The trigger geofence as the preview's sample event needs it (name, metadata, bounding box). */
export async function loadGeofence(id: string, signal?: AbortSignal): Promise<PreviewGeofence | null> {
  const { data } = await api.GET('/api/v1/geofences/{geofence_id}', {
    params: { path: { geofence_id: id } },
    signal,
  });
  return data ? { id: data.id, name: data.name, metadata: data.metadata, bbox: data.bbox } : null;
}

export async function resolveGeofence(id: string, signal: AbortSignal): Promise<EntityOption | null> {
  const found = await loadGeofence(id, signal);
  return found ? { id: found.id, label: found.name } : null;
}

export async function loadWebhooks(): Promise<Schemas['Webhook'][]> {
  const { data, error } = await api.GET('/api/v1/webhooks', { params: { query: { limit: 200 } } });
  if (!data) throw new Error(errorMessage(error));
  return data.results;
}
