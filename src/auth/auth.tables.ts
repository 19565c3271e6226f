import type { JsonColumn, NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';

export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  password_hash: string;
  email_verified_at: NullableTimestampColumn;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

export interface AuthSessionsTable {
  id: string;
  user_id: string;
  workspace_id: string;
  /** The id (`jti`) of the only refresh token of this session that may still be used. */
  refresh_jti: string;
  expires_at: TimestampColumn;
  revoked_at: NullableTimestampColumn;
  revoked_reason: string | null;
  created_at: TimestampColumn;
  refreshed_at: NullableTimestampColumn;
}

export type OneTimeTokenPurpose = 'verify_email' | 'password_reset';

export interface OneTimeTokensTable {
  id: string;
  user_id: string;
  purpose: OneTimeTokenPurpose;
  token_hash: string;
  expires_at: TimestampColumn;
  used_at: NullableTimestampColumn;
  created_at: TimestampColumn;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  created_by: string | null;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: JsonColumn;
  expires_at: NullableTimestampColumn;
  last_used_at: NullableTimestampColumn;
  revoked_at: NullableTimestampColumn;
  created_at: TimestampColumn;
}

/**
 * Device tokens (contract §2.3b): a credential that writes one device's locations and nothing else.
 * Revoking one deletes its row; deleting the device deletes them all (a foreign key).
 */
export interface DeviceTokensTable {
  id: string;
  workspace_id: string;
  device_id: string;
  name: string | null;
  prefix: string;
  token_hash: string;
  last_used_at: NullableTimestampColumn;
  created_at: TimestampColumn;
}
