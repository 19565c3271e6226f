/** Examples of the location pipeline (contract §4): devices, locations, events, tracking sessions. */
import type { OperationExamples } from './operation-example.ts';
import { device, dwellEvent, event, ids, listOf, location, point, trackingSession } from './records.ts';

export const pipelineExamples: OperationExamples = {
  'POST /api/v1/devices': {
    request: {
      name: device.name,
      external_id: device.external_id,
      user_id: device.user_id,
      metadata: device.metadata,
    },
    responses: {
      201: { ...device, last_location: null, last_seen_at: null, inside_geofence_ids: [] },
    },
  },
  'GET /api/v1/devices': { responses: { 200: listOf(device) } },
  'GET /api/v1/devices/{device_id}': { responses: { 200: device } },
  'PATCH /api/v1/devices/{device_id}': {
    request: { name: 'Truck 7 (refrigerated)', metadata: { plate: 'B-GF 707', cooled: true } },
    responses: {
      200: { ...device, name: 'Truck 7 (refrigerated)', metadata: { plate: 'B-GF 707', cooled: true } },
    },
  },
  'DELETE /api/v1/devices/{device_id}': { responses: {} },
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
  'GET /api/v1/events': { responses: { 200: listOf(dwellEvent, event) } },
  'GET /api/v1/events/{event_id}': { responses: { 200: event } },
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
  'GET /api/v1/sessions/{session_id}/locations': { responses: { 200: listOf(location) } },
};
