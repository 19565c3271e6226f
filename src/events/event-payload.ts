/**
 * The body of a geofence event as sent to receivers (seed §6.3): webhook deliveries and workflow
 * `webhook` actions. The JSON text is built once, when the delivery is created, and stored: every
 * attempt and every dead-letter retry sends (and signs) the very same bytes.
 */
import { eventNameOf } from './event-types.ts';
import type { GeofenceEvent } from './events.repository.ts';

export function geofenceEventPayload(event: GeofenceEvent, idempotencyKey: string): string {
  return JSON.stringify({ id: idempotencyKey, ...geofenceEventBody(event) });
}

/** The body without its `id`: what every receiver of one event gets alike (the id is per receiver). */
export function geofenceEventBody(event: GeofenceEvent): Record<string, unknown> {
  return {
    event: eventNameOf(event.eventType),
    timestamp: event.occurredAt.toISOString(),
    data: {
      event_id: event.eventId,
      user_id: event.userId,
      device_id: event.deviceId,
      geofence_id: event.geofenceId,
      geofence_name: event.geofenceName,
      event_type: event.eventType,
      point: { type: 'Point', coordinates: [event.lng, event.lat] },
      metadata: {
        geofence_metadata: event.metadata.geofence_metadata ?? {},
        event_metadata: event.metadata.event_metadata ?? {},
      },
    },
  };
}
