/**
 * Types of the live stream and of the two map feeds (device positions, geofence export), typed here
 * until the generated `schema.ts` has them; then these become aliases of the generated schemas.
 */
import type { Schemas } from '../api/client.ts';

/** Topics of `GET /api/v1/stream?topics=…`. */
export const STREAM_TOPICS = ['locations', 'events'] as const;
export type StreamTopic = (typeof STREAM_TOPICS)[number];

/** `POST /api/v1/stream/tokens` → 201: a short-lived token for EventSource, which cannot send headers. */
export interface StreamToken {
  token: string;
  expires_at: string;
  expires_in: number;
}

/** `event: ready`: the stream is open for this workspace and these topics. */
export interface StreamReady {
  workspace_id: string;
  topics: StreamTopic[];
}

/** `event: location`: a device's newest position after a commit. */
export interface StreamLocation {
  device_id: string;
  external_id: string | null;
  name: string;
  lng: number;
  lat: number;
  accuracy: number | null;
  recorded_at: string;
  inside_geofence_ids: string[];
}

/** `event: geofence_event`: the JSON of `GET /api/v1/events/{id}`. */
export type StreamEvent = Schemas['Event'];

export interface TopicPayload {
  locations: StreamLocation;
  events: StreamEvent;
}

/** `GET /api/v1/devices/positions`: every device's last position, for maps (not paginated). */
export interface DevicePositions {
  type: 'FeatureCollection';
  features: Array<{
    type: 'Feature';
    id: string;
    geometry: { type: 'Point'; coordinates: number[] };
    properties: {
      name: string;
      external_id: string | null;
      last_seen_at: string | null;
      accuracy: number | null;
      inside_geofence_ids: string[];
    };
  }>;
  truncated: boolean;
}

/** `GET /api/v1/geofences/export`: the workspace's geofences as one FeatureCollection. */
export interface GeofenceExport {
  type: 'FeatureCollection';
  features: Array<{
    type: 'Feature';
    id: string;
    geometry: Schemas['GeofenceGeometry'];
    properties: { name: string; enabled: boolean };
  }>;
}

type Json<T> = { content: { 'application/json': T } };
type Failure = Json<Schemas['Error']>;

/** The operations above in openapi-typescript's shape, so the typed client can call them. */
export interface LivePaths {
  '/api/v1/stream/tokens': {
    post: {
      parameters: { query?: never; header?: never; path?: never; cookie?: never };
      requestBody?: never;
      responses: { 201: Json<StreamToken>; 401: Failure; 403: Failure; 404: Failure };
    };
  };
  '/api/v1/devices/positions': {
    get: {
      parameters: { query?: never; header?: never; path?: never; cookie?: never };
      requestBody?: never;
      responses: { 200: Json<DevicePositions>; 401: Failure; 404: Failure };
    };
  };
  '/api/v1/geofences/export': {
    get: {
      parameters: { query?: { enabled?: boolean }; header?: never; path?: never; cookie?: never };
      requestBody?: never;
      responses: { 200: Json<GeofenceExport>; 401: Failure; 404: Failure };
    };
  };
}
