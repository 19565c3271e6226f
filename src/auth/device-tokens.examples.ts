/** Examples of the device-token routes (contract §2.3b). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { CREATED, ids, listOf } from '../http/examples/records.ts';

export const deviceToken = {
  id: ids.deviceToken,
  name: "Anna's phone (OwnTracks)",
  prefix: 'gf_dev_Q3vX8',
  created_at: CREATED,
  last_used_at: '2026-03-10T12:10:01.000Z',
};

export const deviceTokenExamples: OperationExamples = {
  'POST /api/v1/devices/{device_id}/tokens': {
    request: { name: deviceToken.name },
    responses: {
      201: {
        ...deviceToken,
        last_used_at: null,
        token: 'gf_dev_Q3vX8kLm2nP4qR6sT8uV0wX2yZ4aB6cD8eF0gH2iJ4k',
      },
    },
  },
  'GET /api/v1/devices/{device_id}/tokens': { responses: { 200: listOf(deviceToken) } },
};
