/**
 * What every area's operation examples share (ADR 013): the ids of the example resources, their
 * times, the device's position and the list envelope, so that a geofence or a device is the same
 * one in the examples of every folder. The example records themselves live beside each domain's
 * schemas (`src/<domain>/*.examples.ts`); each is checked against its own schema by
 * test/http/openapi-examples.test.ts.
 */

export const ids = {
  user: '0197a0c2-3b10-7c41-8d2e-5f6a7b8c9d01',
  otherUser: '0197a0c2-3b10-7c41-8d2e-5f6a7b8c9d02',
  workspace: '0197a0c2-3b11-7a52-9e3f-6a7b8c9d0e11',
  apiKey: '0197a0c2-3b12-7b63-8f40-7b8c9d0e1f21',
  notification: '0197a0c2-3b13-7c74-9051-8c9d0e1f2031',
  invitation: '0197a0c2-3b14-7d85-8162-9d0e1f203141',
  geofence: '0197a0c2-3b15-7e96-9273-0e1f20314151',
  otherGeofence: '019cdad0-1a00-7e96-9273-0e1f20314152',
  device: '0197a0c2-3b16-7fa7-8384-1f2031415161',
  otherDevice: '0197a0c2-3b16-7fa7-8384-1f2031415162',
  location: '0197a0c2-3b17-70b8-9495-203141516171',
  event: '0197a0c2-3b18-71c9-85a6-314151617181',
  session: '0197a0c2-3b19-72da-96b7-415161718191',
  webhook: '0197a0c2-3b1a-73eb-87c8-5161718191a1',
  delivery: '0197a0c2-3b1b-74fc-98d9-61718191a1b1',
  deadLetter: '0197a0c2-3b1c-750d-89ea-718191a1b1c1',
  invoice: '0197a0c2-3b1d-761e-9afb-8191a1b1c1d1',
  deviceToken: '0197a0c2-3b1e-772f-8b0c-91a1b1c1d1e1',
};

export const CREATED = '2026-03-10T12:00:00.000Z';
export const UPDATED = '2026-03-10T12:05:00.000Z';
/** The location's timestamp: 2026-03-10T12:10:00Z is epoch second 1773144600. */
export const FIX_TIME = '2026-03-10T12:10:00.000Z';

/** Where the example device was at FIX_TIME: inside the example geofence. */
export const point = { type: 'Point', coordinates: [13.3785, 52.5159] };

/** The list envelope of `items` (contract §1), as a first page holding everything. */
export function listOf(...items: unknown[]) {
  return {
    results: items,
    pagination: { total: items.length, limit: 50, offset: 0, has_more: false },
  };
}
