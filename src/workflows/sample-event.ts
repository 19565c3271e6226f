/**
 * The sample event of a test run (POST /workflows/{id}/test, contract §6): a device called
 * "Sample device" at the centre of the trigger geofence's bounding box, with the first trigger
 * event type. Pure and free of I/O, so the dashboard's template preview renders the very context
 * a test run sends; ids come from the caller (the server draws UUIDv7s, the preview needs none).
 */
import type { EventType } from '../events/event-types.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import type { TemplateDevice } from './runs.repository.ts';

export const SAMPLE_DEVICE_ID = '00000000-0000-7000-8000-000000000000';

export const SAMPLE_DEVICE: TemplateDevice = {
  id: SAMPLE_DEVICE_ID,
  name: 'Sample device',
  externalId: null,
  userId: 'sample-user',
  metadata: {},
};

export interface SampleTrigger {
  workspaceId: string;
  geofenceId: string;
  eventTypes: readonly EventType[];
}

export interface SampleGeofence {
  name: string;
  metadata: Record<string, unknown>;
  bbox: readonly number[];
}

/** `workflow_test_<epoch seconds>`: the event id of a test run started at `now`. */
export function sampleEventId(now: Date): string {
  return `workflow_test_${Math.floor(now.getTime() / 1000)}`;
}

/** A sample event in the trigger geofence: its name and metadata, a point at its centre. */
export function sampleEvent(
  trigger: SampleTrigger,
  geofence: SampleGeofence,
  now: Date,
  ids: { id: string; locationId: string },
): GeofenceEvent {
  const [west = 0, south = 0, east = 0, north = 0] = geofence.bbox;
  return {
    id: ids.id,
    workspaceId: trigger.workspaceId,
    eventId: sampleEventId(now),
    eventType: trigger.eventTypes[0] ?? 'enter',
    deviceId: SAMPLE_DEVICE.id,
    userId: SAMPLE_DEVICE.userId ?? 'sample-user',
    geofenceId: trigger.geofenceId,
    geofenceName: geofence.name,
    lng: centre(west, east),
    lat: centre(south, north),
    locationId: ids.locationId,
    sessionId: null,
    occurredAt: now,
    createdAt: now,
    metadata: { geofence_metadata: geofence.metadata, event_metadata: { test: true } },
  };
}

/**
 * The middle of two coordinates to 7 decimals (about a centimetre): floating-point halves such as
 * (52.5 + 52.52) / 2 = 52.510000000000005 would reach messages as written, digits of noise in them.
 */
function centre(a: number, b: number): number {
  return Math.round(((a + b) / 2) * 1e7) / 1e7;
}
