/** Examples of /geofences (contract §3). */
import type { OperationExamples } from './operation-example.ts';
import { devicesInside, geofence, listOf } from './records.ts';

const {
  id: _id,
  workspace_id: _workspace,
  bbox: _bbox,
  created_at: _c,
  updated_at: _u,
  ...created
} = geofence;

export const geofenceExamples: OperationExamples = {
  'POST /api/v1/geofences': { request: created, responses: { 201: geofence } },
  'GET /api/v1/geofences': { responses: { 200: listOf(geofence) } },
  'GET /api/v1/geofences/contains': { responses: { 200: listOf(geofence) } },
  'GET /api/v1/geofences/{geofence_id}': { responses: { 200: geofence } },
  'GET /api/v1/geofences/{geofence_id}/devices': { responses: { 200: listOf(...devicesInside) } },
  'PATCH /api/v1/geofences/{geofence_id}': {
    request: { name: 'Berlin depot (north gate)', enabled: false },
    responses: { 200: { ...geofence, name: 'Berlin depot (north gate)', enabled: false } },
  },
  'DELETE /api/v1/geofences/{geofence_id}': { responses: {} },
};
