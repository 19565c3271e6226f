import type { BooleanColumn, JsonColumn, NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';

export interface AccountSettingsTable {
  user_id: string;
  timezone: string;
  email_notifications: BooleanColumn;
  notify_on: JsonColumn;
  updated_at: TimestampColumn;
}

export interface NotificationsTable {
  id: string;
  user_id: string;
  workspace_id: string | null;
  type: string;
  title: string;
  body: string;
  data: JsonColumn;
  read_at: NullableTimestampColumn;
  created_at: TimestampColumn;
}
