/** Examples of the live stream and the map snapshot (ADR 016). */
import type { OperationExamples } from './operation-example.ts';
import { device, event, ids, point } from './records.ts';

const streamLocation = {
  device_id: device.id,
  external_id: device.external_id,
  name: device.name,
  lng: point.coordinates[0],
  lat: point.coordinates[1],
  accuracy: device.last_location.accuracy,
  recorded_at: device.last_location.timestamp,
  inside_geofence_ids: device.inside_geofence_ids,
};

/** What a stream of both topics shows: ready, a position, the event it caused, a keepalive. */
const streamText = [
  `event: ready\ndata: ${JSON.stringify({ workspace_id: ids.workspace, topics: ['locations', 'events'] })}\n`,
  `event: location\ndata: ${JSON.stringify(streamLocation)}\n`,
  `id: ${event.id}\nevent: geofence_event\ndata: ${JSON.stringify(event)}\n`,
  ': keepalive\n',
].join('\n');

export const streamExamples: OperationExamples = {
  'POST /api/v1/stream/tokens': {
    responses: {
      201: {
        token:
          'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ3aWQiOiIwMTk3YTBjMiIsInR5cCI6InN0cmVhbSJ9.c2lnbmF0dXJl',
        expires_at: '2026-03-10T12:11:00.000Z',
        expires_in: 60,
      },
    },
  },
  'GET /api/v1/stream': { responses: { 200: streamText } },
  'GET /api/v1/devices/positions': {
    responses: {
      200: {
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            id: device.id,
            geometry: point,
            properties: {
              name: device.name,
              external_id: device.external_id,
              last_seen_at: device.last_seen_at,
              recorded_at: device.last_location.timestamp,
              accuracy: device.last_location.accuracy,
              inside_geofence_ids: device.inside_geofence_ids,
            },
          },
          {
            type: 'Feature',
            id: ids.otherDevice,
            geometry: { type: 'Point', coordinates: [13.4012, 52.5203] },
            properties: {
              name: 'Van 3',
              external_id: null,
              last_seen_at: '2026-03-10T12:09:42.000Z',
              recorded_at: '2026-03-10T12:09:41.000Z',
              accuracy: null,
              inside_geofence_ids: [],
            },
          },
        ],
        truncated: false,
      },
    },
  },
};
