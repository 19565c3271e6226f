/** Types of the live stream and the device positions feed: names for the generated schemas. */
import type { Schemas } from '../api/client.ts';

/** Topics of `GET /api/v1/stream?topics=…`. */
export const STREAM_TOPICS = ['locations', 'events'] as const;
export type StreamTopic = (typeof STREAM_TOPICS)[number];

/** `POST /api/v1/stream/tokens` → 201: a short-lived token for EventSource, which cannot send headers. */
export type StreamToken = Schemas['StreamToken'];

/** `event: ready`: the stream is open for this workspace and these topics. */
export type StreamReady = Schemas['StreamReadyMessage'];

/** `event: location`: a device's newest position after a commit. */
export type StreamLocation = Schemas['StreamLocationMessage'];

/** `event: geofence_event`: the JSON of `GET /api/v1/events/{id}`. */
export type StreamEvent = Schemas['Event'];

export interface TopicPayload {
  locations: StreamLocation;
  events: StreamEvent;
}

/** `GET /api/v1/devices/positions`: every device's last position, for maps (not paginated). */
export type DevicePositions = Schemas['DevicePositions'];
