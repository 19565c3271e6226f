/**
 * Every domain's tables, merged into the database's schema (src/db/schema.ts): the one place that
 * knows them all, as the composition root knows every domain. Types only; nothing here runs.
 */
import type { AccountSettingsTable, NotificationsTable } from './account/account.tables.ts';
import type {
  ApiKeysTable,
  AuthSessionsTable,
  DeviceTokensTable,
  OneTimeTokensTable,
  UsersTable,
} from './auth/auth.tables.ts';
import type { BillingTables } from './billing/billing.tables.ts';
import type { DeviceLastLocationsTable, DevicesTable } from './devices/devices.tables.ts';
import type { EventOutboxTable, GeofenceEventsTable } from './events/events.tables.ts';
import type {
  GeofencePresenceTable,
  GeofencesTable,
  GeofenceVersionsTable,
} from './geofences/geofences.tables.ts';
import type { LocationsStagedTable, LocationsTable } from './locations/locations.tables.ts';
import type { EmailOutboxTable } from './mail/mail.tables.ts';
import type { TrackingSessionsTable } from './tracking/tracking.tables.ts';
import type { UsageCountersTable } from './usage/usage.tables.ts';
import type { DeliveryTables } from './webhooks/deliveries.tables.ts';
import type { WebhooksTable } from './webhooks/webhooks.tables.ts';
import type { WorkflowTables } from './workflows/workflows.tables.ts';
import type {
  InvitationsTable,
  WorkspaceMembersTable,
  WorkspacesTable,
} from './workspaces/workspaces.tables.ts';

declare module './db/schema.ts' {
  /** Domain table groups added by later migrations are merged in through `extends`. */
  interface DatabaseSchema extends DeliveryTables, BillingTables, WorkflowTables {
    users: UsersTable;
    workspaces: WorkspacesTable;
    workspace_members: WorkspaceMembersTable;
    invitations: InvitationsTable;
    auth_sessions: AuthSessionsTable;
    one_time_tokens: OneTimeTokensTable;
    api_keys: ApiKeysTable;
    device_tokens: DeviceTokensTable;
    account_settings: AccountSettingsTable;
    notifications: NotificationsTable;
    email_outbox: EmailOutboxTable;
    geofences: GeofencesTable;
    geofence_versions: GeofenceVersionsTable;
    geofence_presence: GeofencePresenceTable;
    devices: DevicesTable;
    device_last_locations: DeviceLastLocationsTable;
    locations: LocationsTable;
    locations_staged: LocationsStagedTable;
    geofence_events: GeofenceEventsTable;
    event_outbox: EventOutboxTable;
    tracking_sessions: TrackingSessionsTable;
    usage_counters: UsageCountersTable;
    webhooks: WebhooksTable;
  }
}
