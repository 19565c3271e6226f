/**
 * The bodies of deliveries: a geofence event as seed §6.3 and the `webhook.test` message of
 * contract §5. The JSON text is built once, when the delivery is created, and stored: every
 * attempt and every dead-letter retry sends (and signs) the very same bytes.
 */
import { eventNameOf } from '../events/event-types.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';

export function geofenceEventPayload(event: GeofenceEvent, idempotencyKey: string): string {
  return JSON.stringify({
    id: idempotencyKey,
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
  });
}

export function testEventId(now: Date): string {
  return `webhook_test_${Math.floor(now.getTime() / 1000)}`;
}

export function testPayload(
  idempotencyKey: string,
  now: Date,
  webhook: { id: string; name: string },
): string {
  return JSON.stringify({
    id: idempotencyKey,
    event: 'webhook.test',
    timestamp: now.toISOString(),
    data: {
      event_id: testEventId(now),
      webhook_id: webhook.id,
      webhook_name: webhook.name,
      message: 'This is a test delivery from the geofencing service.',
    },
  });
}
