/**
 * Location retention (`LOCATION_RETENTION_DAYS`, default 90): locations received more than that
 * many days ago are deleted. Events keep their own copy of the point, so they outlive the
 * location they came from. Deletes go workspace by workspace in bounded chunks (through the
 * (workspace_id, received_at) index), so a large backlog never holds the write lock for long.
 */
import type { Db } from '../db/database.ts';
import type { Clock } from '../shared/clock.ts';
import { deleteLocationsReceivedBefore, workspaceIdsWithDevices } from './locations.repository.ts';

const DAY_MS = 86_400_000;
const CHUNK = 5_000;

/** Deletes every location received before now − `days`; returns how many went. */
export async function purgeOldLocations(db: Db, clock: Clock, days: number): Promise<{ deleted: number }> {
  const cutoff = new Date(clock.now().getTime() - days * DAY_MS);
  let deleted = 0;
  for (const workspaceId of await workspaceIdsWithDevices(db)) {
    for (;;) {
      const n = await deleteLocationsReceivedBefore(db, workspaceId, cutoff, CHUNK);
      deleted += n;
      if (n < CHUNK) break;
    }
  }
  return { deleted };
}
