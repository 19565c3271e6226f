import type { EventType } from './events.tables.ts';

/**
 * The seed's event identifier (§6.3): `<geofence_id>_<enter|exit|dwell>_<epoch_seconds>`, the
 * seconds being those of the location's timestamp (for `dwell`, of the dwell moment; contract
 * §4.5), not of processing, so a replayed location yields the same identifier. It is not unique on
 * its own: two devices crossing one boundary in the same second share it. Rows are addressed by
 * their own `id`.
 */
export function seedEventId(geofenceId: string, type: EventType, occurredAt: Date): string {
  return `${geofenceId}_${type}_${Math.floor(occurredAt.getTime() / 1000)}`;
}
