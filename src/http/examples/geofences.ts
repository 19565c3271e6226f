/** Examples of /geofences (contract §3). */
import type { OperationExamples } from './operation-example.ts';
import { devicesInside, geofence, ids, listOf } from './records.ts';

const BATCH_TIME = '2026-03-11T02:00:00.000Z';

const {
  id: _id,
  workspace_id: _workspace,
  bbox: _bbox,
  created_at: _c,
  updated_at: _u,
  ...created
} = geofence;

/** A new circle of the batch example. */
const dropOff = {
  ...geofence,
  id: ids.otherGeofence,
  name: 'Mitte drop-off',
  description: null,
  external_id: 'drop-mitte',
  geometry: { type: 'Circle', coordinates: [13.405, 52.52], radius: 250 },
  metadata: {},
  bbox: [13.401305, 52.517752, 13.408695, 52.522248],
  dwell_seconds: 300,
  created_at: BATCH_TIME,
  updated_at: BATCH_TIME,
};
const bowtie = {
  type: 'Polygon',
  coordinates: [
    [
      [13.4, 52.5],
      [13.42, 52.52],
      [13.42, 52.5],
      [13.4, 52.52],
      [13.4, 52.5],
    ],
  ],
};

const feature = (g: { id: string; workspace_id: string; geometry: unknown; bbox: number[] }) => {
  const { id, workspace_id: _w, geometry, bbox, ...properties } = g;
  return { type: 'Feature', id, geometry, properties, bbox };
};

export const geofenceExamples: OperationExamples = {
  'POST /api/v1/geofences/batch': {
    request: {
      geofences: [
        { ...created, name: 'Berlin depot (north gate)' },
        {
          name: dropOff.name,
          external_id: dropOff.external_id,
          geometry: dropOff.geometry,
          dwell_seconds: dropOff.dwell_seconds,
        },
        { name: 'Bow tie', geometry: bowtie },
      ],
    },
    responses: {
      200: {
        created: [dropOff],
        updated: [{ ...geofence, name: 'Berlin depot (north gate)', updated_at: BATCH_TIME }],
        rejected: [
          {
            index: 2,
            detail: 'the exterior ring crosses itself',
            error_code: 'INVALID_GEOMETRY',
            details: { reason: 'self_intersection', location: [13.41, 52.51] },
          },
        ],
      },
    },
  },
  'GET /api/v1/geofences/export': {
    responses: { 200: { type: 'FeatureCollection', features: [feature(geofence), feature(dropOff)] } },
  },
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
