/**
 * The geofence calls of the Geofences page: every geofence for the map (`GET /geofences/export`,
 * one GeoJSON FeatureCollection), the export as a file, and import through `POST /geofences/batch`
 * in chunks (contract §3).
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, errorMessage, type Schemas } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';
import type { GeofenceGeometry } from '../../map/geofenceGeometry.ts';
import type { GeofenceShape } from '../../map/geofenceLayer.ts';

export type Geofence = Schemas['Geofence'];
export type GeofenceFeature = Schemas['GeofenceFeature'];
export type BatchRejection = Schemas['GeofenceBatchRejection'];
export type BatchResult = Schemas['GeofenceBatchResult'];

/** An item of an import: a GeoJSON Feature (fields in `properties`) or a create body, as the file has it. */
export type ImportItem = Record<string, unknown>;

export function geofenceShape(g: Geofence): GeofenceShape {
  return {
    id: g.id,
    name: g.name,
    enabled: g.enabled,
    geometry: g.geometry as GeofenceGeometry,
    bbox: g.bbox,
  };
}

function featureShape(f: GeofenceFeature): GeofenceShape {
  return {
    id: f.id,
    name: f.properties.name,
    enabled: f.properties.enabled,
    geometry: f.geometry as GeofenceGeometry,
    bbox: f.bbox,
  };
}

/** Every geofence of the workspace for the map, in one request. */
export async function loadAllShapes(): Promise<GeofenceShape[]> {
  const { data, error } = await api.GET('/api/v1/geofences/export', { parseAs: 'json' });
  if (!data) throw new Error(errorMessage(error));
  return data.features.map(featureShape);
}

/** The export as a file download (`geofences.geojson`), fetched with the session's token. */
export async function downloadExport(): Promise<void> {
  const { data, error } = await api.GET('/api/v1/geofences/export', { parseAs: 'blob' });
  if (!data) throw new Error(errorMessage(error));
  const url = URL.createObjectURL(new Blob([data], { type: 'application/geo+json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = 'geofences.geojson';
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own copy once started; keep the URL alive a moment for slow browsers.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export const IMPORT_CHUNK = 1000;

export interface ChunkOutcome {
  /** Index of the chunk's first item in the whole file. */
  start: number;
  items: ImportItem[];
  result?: BatchResult;
  /** The whole chunk failed (e.g. 404 from a server without import, 422 for the body). */
  failure?: string;
}

/**
 * Sends the items in chunks of 1,000 (the batch limit). A chunk over the 5 MiB body limit (413)
 * is halved and sent again, so large polygons still go through.
 */
export async function importItems(
  form: 'features' | 'geofences',
  items: ImportItem[],
  onProgress: (done: number) => void,
): Promise<ChunkOutcome[]> {
  const outcomes: ChunkOutcome[] = [];
  let done = 0;
  const send = async (start: number, chunk: ImportItem[]): Promise<void> => {
    // The file's items go as they are: the server validates each one and reports what it refused.
    const body = (
      form === 'features' ? { type: 'FeatureCollection', features: chunk } : { geofences: chunk }
    ) as Schemas['GeofenceBatchRequest'];
    const { data, error, response } = await api.POST('/api/v1/geofences/batch', { body });
    if (response.status === 413 && chunk.length > 1) {
      const half = Math.ceil(chunk.length / 2);
      await send(start, chunk.slice(0, half));
      await send(start + half, chunk.slice(half));
      return;
    }
    if (data) outcomes.push({ start, items: chunk, result: data });
    else
      outcomes.push({
        start,
        items: chunk,
        failure: errorMessage(error),
      });
    done += chunk.length;
    onProgress(done);
  };
  for (let start = 0; start < items.length; start += IMPORT_CHUNK) {
    await send(start, items.slice(start, start + IMPORT_CHUNK));
  }
  return outcomes;
}

/**
 * Queries of the Geofences page. Every key starts with `geofences` (the names in the pickers too),
 * so a save, a deletion or an import invalidates them all at once.
 */
export const geofenceKeys = {
  all: ['geofences'] as const,
  lists: ['geofences', 'list'] as const,
  list: (q: string, enabled: boolean | undefined, offset: number) =>
    ['geofences', 'list', { q, enabled, offset }] as const,
  inside: (id: string, offset: number) => ['geofences', 'inside', id, offset] as const,
};

export const LIST_PAGE_SIZE = 50;
export const INSIDE_PAGE_SIZE = 20;

/**
 * A page of the list beside the map. While a new search or filter loads, the rows of the last one
 * stay shown on purpose: the list follows the search as it is typed and would otherwise flash
 * "Loading…" at every pause; the count above the rows changes when the new answer arrives.
 */
export function useGeofenceList(q: string, enabled: boolean | undefined, offset: number) {
  return useQuery({
    queryKey: geofenceKeys.list(q, enabled, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/geofences', {
          params: {
            query: {
              limit: LIST_PAGE_SIZE,
              offset,
              ...(q ? { q } : {}),
              ...(enabled === undefined ? {} : { enabled }),
            },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

/** The devices inside a geofence now (not live: read again by Refresh or after a save). */
export function useDevicesInside(geofenceId: string, offset: number) {
  return useQuery({
    queryKey: geofenceKeys.inside(geofenceId, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/geofences/{geofence_id}/devices', {
          params: { path: { geofence_id: geofenceId }, query: { offset, limit: INSIDE_PAGE_SIZE } },
          signal,
        }),
      ),
  });
}

export function getGeofence(id: string) {
  return api.GET('/api/v1/geofences/{geofence_id}', { params: { path: { geofence_id: id } } });
}

/** The bodies of the geofence form's saves: a whole new geofence, or the fields an edit changes. */
export type GeofenceCreateBody = operations['createGeofence']['requestBody']['content']['application/json'];
export type GeofenceUpdateBody = operations['updateGeofence']['requestBody']['content']['application/json'];

export function createGeofence(body: GeofenceCreateBody) {
  return api.POST('/api/v1/geofences', { body });
}

export function updateGeofence(id: string, body: GeofenceUpdateBody) {
  return api.PATCH('/api/v1/geofences/{geofence_id}', { params: { path: { geofence_id: id } }, body });
}

export function deleteGeofence(id: string) {
  return api.DELETE('/api/v1/geofences/{geofence_id}', { params: { path: { geofence_id: id } } });
}
