/** Request and response schemas of /events (contract §4.3), and the record's JSON form. */
import { Type } from 'typebox';
import { PointSchema, pointOf } from '../geo/point.ts';
import { component, describedComponent } from '../http/components.ts';
import { freeObject } from '../http/free-object.ts';
import { FreeObject, Id, Nullable, PaginationQuery, StringEnum, Timestamp } from '../http/schemas.ts';
import { EVENT_NAMES, EVENT_TYPES, eventNameOf } from './event-types.ts';
import type { GeofenceEvent } from './events.repository.ts';

export const EventSchema = Type.Object({
  id: Id,
  event_id: Type.String({
    description:
      '`<geofence_id>_<enter|exit|dwell>_<epoch_seconds>` (seed §6.3): the seconds of the location timestamp, ' +
      'or of the dwell moment for `dwell`; `data.event_id` of webhook payloads. Not unique across devices: ' +
      'address an event by `id`.',
  }),
  event_type: StringEnum(EVENT_TYPES, {
    description:
      "`enter`, `exit`, or `dwell` (contract §4.5): the device stayed inside for the geofence's `dwell_seconds`",
  }),
  event: StringEnum(EVENT_NAMES, { description: '`geofence.<event_type>`' }),
  device_id: Id,
  user_id: Type.String({ description: "The device's user_id, or the device id when it has none" }),
  geofence_id: Id,
  geofence_name: Type.String({ description: 'The name when the event happened' }),
  point: describedComponent(PointSchema, "Where the device was; for `dwell`, the device's last known point"),
  location_id: Type.String({
    description:
      'The location that produced the event; for `dwell`, the last location before the dwell moment',
  }),
  session_id: Nullable(Id),
  occurred_at: Type.String({
    format: 'date-time',
    description: "The location's timestamp; for `dwell`, the dwell moment (enter time + `dwell_seconds`)",
  }),
  created_at: Timestamp,
  metadata: Type.Object({
    geofence_metadata: FreeObject,
    event_metadata: freeObject("The location's metadata"),
  }),
});
component('Event', EventSchema);

/**
 * GET /events/{event_id}/payload. Free-form rather than spelled out field by field: the response
 * serialiser keeps only declared keys, and this must stay exactly what event-payload.ts sends,
 * whatever that becomes.
 */
export const EventPayloadSchema = component(
  'EventPayload',
  freeObject(
    'The webhook payload of the event as delivered (seed §6.3: `event`, `timestamp`, `data`), without ' +
      'its `id`: each delivery adds its own, its `X-Idempotency-Key`. Workflow `webhook` actions send the ' +
      'same body.',
  ),
);

export const EventParams = Type.Object({ event_id: Type.String({ description: 'The event record id' }) });

export const ListEventsQuery = Type.Object({
  ...PaginationQuery.properties,
  device_id: Type.Optional(Type.String()),
  geofence_id: Type.Optional(Type.String()),
  event_type: Type.Optional(StringEnum(EVENT_TYPES)),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'occurred_at ≥ from' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'occurred_at ≤ to' })),
});

export function eventOut(e: GeofenceEvent) {
  return {
    id: e.id,
    event_id: e.eventId,
    event_type: e.eventType,
    event: eventNameOf(e.eventType),
    device_id: e.deviceId,
    user_id: e.userId,
    geofence_id: e.geofenceId,
    geofence_name: e.geofenceName,
    point: pointOf(e.lng, e.lat),
    location_id: e.locationId,
    session_id: e.sessionId,
    occurred_at: e.occurredAt.toISOString(),
    created_at: e.createdAt.toISOString(),
    metadata: e.metadata,
  };
}
