/** Request and response schemas of the device-token routes (contract §2.3b). */
import { Type } from 'typebox';
import { component } from '../http/components.ts';
import { Id, Nullable, PaginationQuery, Timestamp } from '../http/schemas.ts';
import type { DeviceToken } from './device-tokens.repository.ts';

export const DeviceTokenSchema = Type.Object({
  id: Id,
  name: Nullable(Type.String()),
  prefix: Type.String({ description: 'First 12 characters of the token, for recognising it' }),
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
});
component('DeviceToken', DeviceTokenSchema);

export const CreatedDeviceTokenSchema = Type.Object({
  ...DeviceTokenSchema.properties,
  token: Type.String({ description: 'The secret token (`gf_dev_…`): shown in this response only' }),
});
component('CreatedDeviceToken', CreatedDeviceTokenSchema);

export const CreateDeviceTokenBody = Type.Object(
  { name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))) },
  {
    additionalProperties: false,
    example: { name: "Anna's phone (OwnTracks)" },
  },
);

export const DeviceTokensParams = Type.Object({ device_id: Type.String() });
export const DeviceTokenParams = Type.Object({ device_id: Type.String(), token_id: Type.String() });
export const DeviceTokensQuery = PaginationQuery;

export function deviceTokenOut(t: DeviceToken) {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    created_at: t.createdAt.toISOString(),
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
  };
}
