/** Examples of /devices and the map snapshot /devices/positions (contract §4.1, ADR 016). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { CREATED, FIX_TIME, ids, listOf, point, UPDATED } from '../http/examples/records.ts';

export const device = {
  id: ids.device,
  workspace_id: ids.workspace,
  name: 'Truck 7',
  external_id: 'truck-7',
  user_id: 'driver-42',
  metadata: { plate: 'B-GF 707' },
  last_location: { point, timestamp: FIX_TIME, accuracy: 5 },
  last_seen_at: FIX_TIME,
  inside_geofence_ids: [ids.geofence],
  created_at: CREATED,
  updated_at: UPDATED,
};

export const deviceExamples: OperationExamples = {
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
