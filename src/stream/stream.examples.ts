/** Examples of the live stream (ADR 016). */
import { device } from '../devices/devices.examples.ts';
import { event } from '../events/events.examples.ts';
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { ids, point } from '../http/examples/records.ts';

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
};
