/** Examples of location ingestion and history (contract §4.2, §4.4). */
import { event } from '../events/events.examples.ts';
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { FIX_TIME, ids, listOf, point } from '../http/examples/records.ts';

export const location = {
  id: ids.location,
  device_id: ids.device,
  session_id: ids.session,
  point,
  timestamp: FIX_TIME,
  accuracy: 5,
  speed: 8.3,
  heading: 90,
  altitude: null,
  metadata: { trip: 'T-1001' },
  out_of_order: false,
  received_at: '2026-03-10T12:10:01.000Z',
};

export const locationExamples: OperationExamples = {
  'POST /api/v1/devices/{device_id}/locations': {
    request: {
      point,
      timestamp: location.timestamp,
      accuracy: location.accuracy,
      speed: location.speed,
      heading: location.heading,
      metadata: location.metadata,
    },
    responses: { 201: { location, events: [event] } },
  },
  'GET /api/v1/devices/{device_id}/locations': { responses: { 200: listOf(location) } },
  'POST /api/v1/locations/batch': {
    request: {
      locations: [
        { device_external_id: 'truck-7', coordinates: [13.3785, 52.5159], timestamp: location.timestamp },
        { device_id: ids.device, coordinates: [13.3801, 52.5171], timestamp: '2026-03-10T12:10:30.000Z' },
        { device_external_id: 'truck-9', coordinates: [200, 52.5] },
      ],
    },
    responses: {
      200: {
        accepted: 2,
        rejected: [
          {
            index: 2,
            detail: [
              {
                type: 'less_than_equal',
                loc: ['body', 'locations', 2, 'coordinates', 0],
                msg: 'Input should be less than or equal to 180',
              },
            ],
          },
        ],
        events: [event],
      },
    },
  },
  'GET /api/v1/sessions/{session_id}/locations': { responses: { 200: listOf(location) } },
};
