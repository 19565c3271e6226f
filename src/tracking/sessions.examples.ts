/** Examples of tracking sessions (contract §4.4). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { ids, listOf, UPDATED } from '../http/examples/records.ts';

export const trackingSession = {
  id: ids.session,
  device_id: ids.device,
  status: 'active',
  started_at: UPDATED,
  ended_at: null,
  metadata: { trip: 'T-1001' },
  summary: {
    location_count: 12,
    distance_m: 1843.6,
    duration_s: 300,
    event_count: 1,
    geofence_ids_visited: [ids.geofence],
  },
};

export const sessionExamples: OperationExamples = {
  'POST /api/v1/devices/{device_id}/sessions': {
    request: { metadata: trackingSession.metadata },
    responses: {
      201: {
        ...trackingSession,
        summary: {
          location_count: 0,
          distance_m: 0,
          duration_s: 0,
          event_count: 0,
          geofence_ids_visited: [],
        },
      },
    },
  },
  'POST /api/v1/sessions/{session_id}/stop': {
    responses: {
      200: {
        ...trackingSession,
        status: 'completed',
        ended_at: '2026-03-10T12:15:00.000Z',
        summary: { ...trackingSession.summary, duration_s: 600 },
      },
    },
  },
  'GET /api/v1/sessions': { responses: { 200: listOf(trackingSession) } },
  'GET /api/v1/sessions/{session_id}': { responses: { 200: trackingSession } },
};
