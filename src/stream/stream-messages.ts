/**
 * The messages of the live stream (ADR 016) and their server-sent-events text. A message is built
 * once on the node where its work committed, travels to the other nodes as JSON, and is turned
 * into SSE text once per node, however many connections of the workspace receive it.
 */

import type { GeofenceEvent } from '../events/events.repository.ts';
import { eventOut } from '../events/events.schemas.ts';

/** `data` of a `location` message: a device's newest position after a commit. */
export interface StreamLocation {
  device_id: string;
  external_id: string | null;
  name: string;
  lng: number;
  lat: number;
  accuracy: number | null;
  recorded_at: string;
  inside_geofence_ids: readonly string[];
}

export type StreamMessage =
  | { event: 'location'; data: StreamLocation }
  /** `id` is the event record's id; `data` the JSON of GET /events/{id}. */
  | { event: 'geofence_event'; id: string; data: ReturnType<typeof eventOut> };

export const TOPICS = ['locations', 'events'] as const;
export type Topic = (typeof TOPICS)[number];

export function topicOf(message: StreamMessage): Topic {
  return message.event === 'location' ? 'locations' : 'events';
}

/** A device's position as a `location` message is made of. */
export interface PositionOf {
  deviceId: string;
  name: string;
  externalId: string | null;
  lng: number;
  lat: number;
  accuracy: number | null;
  /** ISO 8601, as stored. */
  recordedAt: string;
  insideGeofenceIds: readonly string[];
}

export function locationMessage(p: PositionOf): StreamMessage {
  return {
    event: 'location',
    data: {
      device_id: p.deviceId,
      external_id: p.externalId,
      name: p.name,
      lng: p.lng,
      lat: p.lat,
      accuracy: p.accuracy,
      recorded_at: p.recordedAt,
      inside_geofence_ids: p.insideGeofenceIds,
    },
  };
}

export function eventMessage(e: GeofenceEvent): StreamMessage {
  return { event: 'geofence_event', id: e.id, data: eventOut(e) };
}

const texts = new WeakMap<StreamMessage, string>();

/**
 * The SSE text of a message, made once per message object. JSON text holds no raw line breaks, so
 * `data` is always one line.
 */
export function sseText(message: StreamMessage): string {
  let text = texts.get(message);
  if (text === undefined) {
    const data = JSON.stringify(message.data);
    text =
      message.event === 'geofence_event'
        ? `id: ${message.id}\nevent: geofence_event\ndata: ${data}\n\n`
        : `event: ${message.event}\ndata: ${data}\n\n`;
    texts.set(message, text);
  }
  return text;
}

export function readyText(workspaceId: string, topics: readonly Topic[]): string {
  return `event: ready\ndata: ${JSON.stringify({ workspace_id: workspaceId, topics })}\n\n`;
}

export const KEEPALIVE_TEXT = ': keepalive\n\n';

/** Whether a value received from another node is a message this node can forward. */
export function isStreamMessage(value: unknown): value is StreamMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as { event?: unknown; id?: unknown; data?: unknown };
  if (typeof m.data !== 'object' || m.data === null) return false;
  return m.event === 'location' || (m.event === 'geofence_event' && typeof m.id === 'string');
}
