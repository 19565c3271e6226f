/** Examples of /events (contract §4.3, §4.5). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { FIX_TIME, ids, listOf, point } from '../http/examples/records.ts';

export const event = {
  id: ids.event,
  event_id: `${ids.geofence}_enter_1773144600`,
  event_type: 'enter',
  event: 'geofence.enter',
  device_id: ids.device,
  user_id: 'driver-42',
  geofence_id: ids.geofence,
  geofence_name: 'Berlin depot',
  point,
  location_id: ids.location,
  session_id: ids.session,
  occurred_at: FIX_TIME,
  created_at: '2026-03-10T12:10:01.000Z',
  metadata: { geofence_metadata: { region: 'north' }, event_metadata: { trip: 'T-1001' } },
};

/** The `dwell` of the same visit (contract §4.5), with a geofence `dwell_seconds` of 600. */
export const dwellEvent = {
  ...event,
  id: '0197a0c2-3b18-71c9-85a6-314151617182',
  event_id: `${ids.geofence}_dwell_1773145200`,
  event_type: 'dwell',
  event: 'geofence.dwell',
  occurred_at: '2026-03-10T12:20:00.000Z',
  created_at: '2026-03-10T12:20:00.150Z',
};

/** The body its deliveries send, less each one's `id` (seed §6.3). */
const payload = {
  event: event.event,
  timestamp: event.occurred_at,
  data: {
    event_id: event.event_id,
    user_id: event.user_id,
    device_id: event.device_id,
    geofence_id: event.geofence_id,
    geofence_name: event.geofence_name,
    event_type: event.event_type,
    point,
    metadata: event.metadata,
  },
};

const eventRun = {
  id: '0197a0c2-3b1f-7830-9c1d-a1b1c1d1e1f1',
  workflow_id: '0197a0c2-3b1e-772f-8b0c-91a1b1c1d1e1',
  workflow_name: 'Truck 7 at the depot',
  status: 'success',
  created_at: '2026-03-10T12:10:01.000Z',
  finished_at: '2026-03-10T12:10:01.480Z',
};

export const eventExamples: OperationExamples = {
  'GET /api/v1/events': { responses: { 200: listOf(dwellEvent, event) } },
  'GET /api/v1/events/{event_id}': { responses: { 200: event } },
  'GET /api/v1/events/{event_id}/payload': { responses: { 200: payload } },
  'GET /api/v1/events/{event_id}/workflow-runs': { responses: { 200: listOf(eventRun) } },
};
