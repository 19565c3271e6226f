import { identity } from './0001-identity.ts';
import { geofences } from './0002-geofences.ts';
import { devicesEvents } from './0003-devices-events.ts';
import type { Migration } from './migration.ts';

/** Every migration, in order. Names are never changed once released. */
export const MIGRATIONS: readonly Migration[] = [identity, geofences, devicesEvents];
