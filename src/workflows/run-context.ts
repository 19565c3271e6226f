/**
 * The template context of a run (contract §6): the event, its device, geofence and workflow, and
 * the seed §6.3 payload. Built once when the run starts and stored with it, so every attempt and
 * retry of every action renders the same values.
 */

import { geofenceEventPayload } from '../events/event-payload.ts';
import { eventNameOf } from '../events/event-types.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import type { TemplateDevice } from './runs.repository.ts';
import type { TemplateContext } from './templates.ts';

export function eventContext(
  event: GeofenceEvent,
  device: TemplateDevice | undefined,
  workflow: { id: string; name: string },
  payloadId: string,
  test: boolean,
): TemplateContext {
  return {
    event: eventNameOf(event.eventType),
    event_type: event.eventType,
    event_id: event.eventId,
    occurred_at: event.occurredAt.toISOString(),
    geofence: {
      id: event.geofenceId,
      name: event.geofenceName,
      metadata: event.metadata.geofence_metadata ?? {},
    },
    device: {
      id: event.deviceId,
      // A device deleted since the event keeps its id; its name is then unknown.
      name: device?.name ?? event.deviceId,
      external_id: device?.externalId ?? null,
      user_id: device?.userId ?? event.userId ?? null,
      metadata: device?.metadata ?? {},
    },
    point: { lat: event.lat, lng: event.lng },
    metadata: event.metadata.event_metadata ?? {},
    workflow,
    payload_json: geofenceEventPayload(event, payloadId),
    test,
  };
}
