import { identity } from './0001-identity.ts';
import { geofences } from './0002-geofences.ts';
import { devicesEvents } from './0003-devices-events.ts';
import { webhooks } from './0004-webhooks.ts';
import { webhookDeliveries } from './0005-webhook-deliveries.ts';
import { billing } from './0006-billing.ts';
import { locationsWithoutDeviceFk } from './0007-locations-without-device-fk.ts';
import { shardedUsageCounters } from './0008-sharded-usage-counters.ts';
import { workflows } from './0009-workflows.ts';
import { presenceAndFenceRules } from './0010-presence-and-fence-rules.ts';
import { deliveryPortal } from './0011-delivery-portal.ts';
import { deviceStateFromLocations } from './0012-device-state-from-locations.ts';
import { workflowVersion } from './0013-workflow-version.ts';
import { identityLookupsByUser } from './0014-identity-lookups-by-user.ts';
import { oneJobEngine } from './0015-one-job-engine.ts';
import { mailJobs } from './0016-mail-jobs.ts';
import { eventContexts } from './0017-event-contexts.ts';
import { deviceTokens } from './0018-device-tokens.ts';
import { deliveryOperations } from './0019-delivery-operations.ts';
import { stagedLocationHistory } from './0020-staged-location-history.ts';
import type { Migration } from './migration.ts';

/** Every migration, in order. Names are never changed once released. */
export const MIGRATIONS: readonly Migration[] = [
  identity,
  geofences,
  devicesEvents,
  webhooks,
  webhookDeliveries,
  billing,
  locationsWithoutDeviceFk,
  shardedUsageCounters,
  workflows,
  presenceAndFenceRules,
  deliveryPortal,
  deviceStateFromLocations,
  workflowVersion,
  identityLookupsByUser,
  oneJobEngine,
  mailJobs,
  eventContexts,
  deviceTokens,
  deliveryOperations,
  stagedLocationHistory,
];
