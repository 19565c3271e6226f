/**
 * The geofence calls the generated client does not know yet: `GET /geofences/export` (every
 * geofence as one GeoJSON FeatureCollection) and `POST /geofences/batch` (import). They are typed
 * here, locally, and called through the same client (so the token and its refresh apply); once the
 * OpenAPI document lists them, `web/src/api/schema.ts` takes over and this file shrinks to the helpers.
 */
import type { Client } from 'openapi-fetch';
import { type ApiError, api, errorMessage, type Schemas } from '../../api/client.ts';
import type { GeofenceGeometry } from '../../map/geofenceGeometry.ts';
import type { GeofenceShape } from '../../map/geofenceLayer.ts';

export type Geofence = Schemas['Geofence'];

export interface GeofenceFeature {
  type: 'Feature';
  id: string;
  geometry: GeofenceGeometry;
  properties: {
    name: string;
    description: string | null;
    external_id: string | null;
    metadata: Record<string, unknown>;
    enabled: boolean;
    dwell_seconds: number | null;
    exit_buffer_m: number | null;
    max_accuracy_m: number | null;
    created_at: string;
    updated_at: string;
  };
  bbox: number[];
}

export interface GeofenceFeatureCollection {
  type: 'FeatureCollection';
  features: GeofenceFeature[];
}

export interface BatchRejection {
  index: number;
  detail: ApiError['detail'];
  error_code?: string;
  details?: Record<string, unknown>;
}

export interface BatchResult {
  created: Geofence[];
  updated?: Geofence[];
  rejected: BatchRejection[];
}

/** An item of an import: a GeoJSON Feature (fields in `properties`) or a create body. */
export type ImportItem = Record<string, unknown>;
export type BatchBody = { type: 'FeatureCollection'; features: ImportItem[] } | { geofences: ImportItem[] };

type Json<T> = { content: { 'application/json': T } };
interface PendingPaths {
  '/api/v1/geofences/export': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    get: {
      parameters: { query?: { enabled?: boolean; q?: string } };
      responses: {
        200: { content: { 'application/geo+json': GeofenceFeatureCollection } };
        401: Json<ApiError>;
        403: Json<ApiError>;
        404: Json<ApiError>;
      };
    };
  };
  '/api/v1/geofences/batch': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    post: {
      requestBody: Json<BatchBody>;
      responses: {
        200: Json<BatchResult>;
        400: Json<ApiError>;
        401: Json<ApiError>;
        403: Json<ApiError>;
        404: Json<ApiError>;
        413: Json<ApiError>;
        422: Json<ApiError>;
      };
    };
  };
}

/** The shared client (same middleware, same token) typed for the two pending operations. */
const pending = api as unknown as Client<PendingPaths>;

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
    geometry: f.geometry,
    bbox: f.bbox,
  };
}

/**
 * Every geofence of the workspace for the map: the export in one request, or, from a server
 * without it (404), the list 200 at a time.
 */
export async function loadAllShapes(): Promise<GeofenceShape[]> {
  const { data, error, response } = await pending.GET('/api/v1/geofences/export');
  // Positions arrive as number[]; the server wrote them as [lng, lat] pairs.
  if (data) return (data.features as GeofenceFeature[]).map(featureShape);
  if (response.status !== 404) throw new Error(errorMessage(error));
  const shapes: GeofenceShape[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await api.GET('/api/v1/geofences', { params: { query: { limit: 200, offset } } });
    if (!page.data) throw new Error(errorMessage(page.error));
    shapes.push(...page.data.results.map(geofenceShape));
    if (!page.data.pagination.has_more) return shapes;
  }
}

/** The export as a file download (`geofences.geojson`), fetched with the session's token. */
export async function downloadExport(): Promise<void> {
  const { data, error } = await pending.GET('/api/v1/geofences/export', { parseAs: 'blob' });
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
    const body: BatchBody =
      form === 'features' ? { type: 'FeatureCollection', features: chunk } : { geofences: chunk };
    const { data, error, response } = await pending.POST('/api/v1/geofences/batch', { body });
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
        failure:
          response.status === 404
            ? 'This server cannot import geofences yet (POST /geofences/batch answered 404).'
            : errorMessage(error),
      });
    done += chunk.length;
    onProgress(done);
  };
  for (let start = 0; start < items.length; start += IMPORT_CHUNK) {
    await send(start, items.slice(start, start + IMPORT_CHUNK));
  }
  return outcomes;
}
