/**
 * A `dwell` event (contract §4.5) stored the way the engine stores events: a `geofence_events` row
 * and its outbox row, in one transaction, through the events repository. It continues a visit that
 * began with a real `enter` posted through the location API, read back from GET /events.
 */
import { withTransaction } from '../../src/db/transaction.ts';
import { seedEventId } from '../../src/events/event-id.ts';
import { type GeofenceEvent, insertEventsWithOutbox } from '../../src/events/events.repository.ts';
import { uuidv7 } from '../../src/shared/ids.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus } from '../helpers/identity.ts';

/** The event record of GET /events. */
export interface EventOut {
  id: string;
  event_id: string;
  event_type: string;
  event: string;
  device_id: string;
  user_id: string;
  geofence_id: string;
  geofence_name: string;
  point: { type: 'Point'; coordinates: [number, number] };
  location_id: string;
  session_id: string | null;
  occurred_at: string;
  created_at: string;
  metadata: { geofence_metadata: Record<string, unknown>; event_metadata: Record<string, unknown> };
}

/** The device's latest `enter` of the geofence, as GET /events answers it. */
export async function latestEnter(
  t: TestApp,
  token: string,
  deviceId: string,
  geofenceId: string,
): Promise<EventOut> {
  const page = expectStatus<{ results: EventOut[] }>(
    await call(t, '/events', {
      token,
      query: { device_id: deviceId, geofence_id: geofenceId, event_type: 'enter', limit: '1' },
    }),
    200,
    'the enter event',
  );
  const enter = page.results[0];
  if (!enter) throw new Error('the device has no enter event in that geofence');
  return enter;
}

/**
 * Stores the dwell of the visit `enter` began, `dwellSeconds` after it: the device's point and
 * location are those of the enter (its last ones when it did not report again). Its outbox row is
 * pending, as for a workspace with recipients; `drainOutbox` dispatches it.
 */
export async function storeDwellEvent(
  t: TestApp,
  workspaceId: string,
  enter: EventOut,
  dwellSeconds: number,
): Promise<GeofenceEvent> {
  const dwellAt = new Date(Date.parse(enter.occurred_at) + dwellSeconds * 1000);
  const [lng, lat] = enter.point.coordinates;
  const event: GeofenceEvent = {
    id: uuidv7(),
    workspaceId,
    eventId: seedEventId(enter.geofence_id, 'dwell', dwellAt),
    eventType: 'dwell',
    deviceId: enter.device_id,
    userId: enter.user_id,
    geofenceId: enter.geofence_id,
    geofenceName: enter.geofence_name,
    lng,
    lat,
    locationId: enter.location_id,
    sessionId: enter.session_id,
    occurredAt: dwellAt,
    createdAt: t.clock.now(),
    metadata: enter.metadata,
  };
  const { db, capabilities } = t.deps.database;
  await withTransaction(db, (trx) => insertEventsWithOutbox(trx, capabilities, [event], null));
  return event;
}
