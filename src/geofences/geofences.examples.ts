/** Examples of /geofences (contract §3). */
import { device } from '../devices/devices.examples.ts';
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { CREATED, FIX_TIME, ids, listOf, UPDATED } from '../http/examples/records.ts';
import { EXAMPLE_POLYGON } from './geofences.schemas.ts';

export const geofence = {
  id: ids.geofence,
  workspace_id: ids.workspace,
  name: 'Berlin depot',
  description: 'Loading yard and gate',
  external_id: 'depot-berlin',
  geometry: EXAMPLE_POLYGON,
  metadata: { region: 'north' },
  enabled: true,
  bbox: [13.3777, 52.5155, 13.3795, 52.5163],
  dwell_seconds: null,
  exit_buffer_m: null,
  max_accuracy_m: null,
  created_at: CREATED,
  updated_at: UPDATED,
};

/** The devices inside the geofence: Truck 7 since its enter, a van there for longer. */
const devicesInside = [
  {
    device_id: ids.device,
    name: device.name,
    external_id: device.external_id,
    user_id: device.user_id,
    entered_at: FIX_TIME,
    dwelling: false,
    last_seen_at: FIX_TIME,
    last_location: device.last_location,
  },
  {
    device_id: ids.otherDevice,
    name: 'Van 3',
    external_id: 'van-3',
    user_id: null,
    entered_at: '2026-03-10T11:02:00.000Z',
    dwelling: true,
    last_seen_at: '2026-03-10T12:09:30.000Z',
    last_location: {
      point: { type: 'Point', coordinates: [13.3781, 52.5157] },
      timestamp: '2026-03-10T12:09:30.000Z',
      accuracy: 12,
    },
  },
];

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
