import type { BooleanColumn, JsonColumn, NullableJsonColumn, TimestampColumn } from '../db/columns.ts';

export type WebhookMethod = 'POST' | 'PUT' | 'PATCH' | 'GET';

/** A webhook endpoint of a workspace (contract §5). */
export interface WebhooksTable {
  id: string;
  workspace_id: string;
  name: string;
  url: string;
  method: WebhookMethod;
  content_type: string;
  timeout_seconds: number;
  /** Custom request headers, `{name: value}`. */
  headers: JsonColumn;
  rate_limit_per_minute: number;
  /** Subscribed event types, e.g. `["geofence.enter","geofence.exit"]`. */
  events: JsonColumn;
  /** Geofence filter; null = every geofence of the workspace. */
  geofence_ids: NullableJsonColumn;
  enabled: BooleanColumn;
  /** The `whsec_…` signing secret, sealed with `SecretBox` (src/shared/encryption.ts). */
  secret_sealed: string;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}
