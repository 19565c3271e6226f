/** Request and response schemas of tracking sessions (contract §4.4). */
import { Type } from 'typebox';
import { freeObject } from '../http/free-object.ts';
import { FreeObject, Id, Nullable, PaginationQuery, StringEnum, Timestamp } from '../http/schemas.ts';
import type { TrackingSession } from './sessions.repository.ts';

export const SessionSchema = Type.Object({
  id: Id,
  device_id: Id,
  status: StringEnum(['active', 'completed']),
  started_at: Timestamp,
  ended_at: Nullable(Type.String({ format: 'date-time' })),
  metadata: FreeObject,
  summary: Type.Object(
    {
      location_count: Type.Integer({ description: 'Locations recorded with this session id' }),
      distance_m: Type.Number({ description: 'Haversine path length over the in-order locations, metres' }),
      duration_s: Type.Integer({
        description:
          'Seconds from the start to the newest in-order location while active; to ended_at once completed',
      }),
      event_count: Type.Integer({ description: 'Geofence events produced by its locations' }),
      geofence_ids_visited: Type.Array(Id, { description: 'Geofences it was inside, first visit first' }),
    },
    { description: 'Kept current while the session is active' },
  ),
});

export const StartSessionBody = Type.Object(
  {
    metadata: Type.Optional(freeObject('Free-form JSON object')),
  },
  { additionalProperties: false },
);

export const DeviceSessionParams = Type.Object({ device_id: Type.String() });
export const SessionParams = Type.Object({ session_id: Type.String() });

export const ListSessionsQuery = Type.Object({
  ...PaginationQuery.properties,
  device_id: Type.Optional(Type.String()),
  status: Type.Optional(StringEnum(['active', 'completed'])),
});

export function sessionOut(s: TrackingSession) {
  return {
    id: s.id,
    device_id: s.deviceId,
    status: s.status,
    started_at: s.startedAt.toISOString(),
    ended_at: s.endedAt?.toISOString() ?? null,
    metadata: s.metadata,
    summary: {
      location_count: s.locationCount,
      distance_m: s.distanceM,
      duration_s: s.durationS,
      event_count: s.eventCount,
      geofence_ids_visited: s.geofenceIdsVisited,
    },
  };
}
