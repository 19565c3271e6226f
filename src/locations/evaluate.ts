/**
 * Geofence evaluation of one location against a device's previous state (contract §4.3), as a pure
 * function so the rules are testable without storage:
 * - a location older than the device's newest evaluated one is out of order: no evaluation;
 * - a geofence newly containing the point → `enter`; one that no longer does → `exit`;
 * - a geofence the device was inside that is no longer in the index at all (deleted or disabled)
 *   is dropped from the state silently: deleting or disabling produces no event.
 */
import type { EventType } from '../events/events.tables.ts';

/** What evaluation needs of the workspace's geofence index (`GeofenceIndex` satisfies it). */
export interface ContainmentIndex {
  query(lng: number, lat: number): string[];
  has(id: string): boolean;
}

export interface Transition {
  type: EventType;
  geofenceId: string;
}

export interface DeviceCursor {
  /** Sorted ids of the geofences containing the newest evaluated location. */
  insideIds: readonly string[];
  lastEvaluatedAt: Date | null;
}

export type Evaluation =
  | { outOfOrder: true }
  | { outOfOrder: false; transitions: Transition[]; cursor: DeviceCursor };

export function evaluateLocation(
  cursor: DeviceCursor,
  index: ContainmentIndex,
  lng: number,
  lat: number,
  recordedAt: Date,
): Evaluation {
  // Equal timestamps are in order: two fixes in the same millisecond are both evaluated.
  if (cursor.lastEvaluatedAt !== null && recordedAt.getTime() < cursor.lastEvaluatedAt.getTime()) {
    return { outOfOrder: true };
  }
  const now = index.query(lng, lat);
  if (now.length > 1) now.sort();
  // Exits first, then enters, each in id order: a deterministic sequence for one location. Both
  // lists are sorted, so one merge finds them (no sets: most locations are in 0–2 geofences).
  const before = isSorted(cursor.insideIds) ? cursor.insideIds : [...cursor.insideIds].sort();
  const exits: Transition[] = [];
  const enters: Transition[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < now.length) {
    const was = before[i];
    const is = now[j];
    if (was !== undefined && (is === undefined || was < is)) {
      if (index.has(was)) exits.push({ type: 'exit', geofenceId: was });
      i++;
    } else if (is !== undefined && (was === undefined || is < was)) {
      enters.push({ type: 'enter', geofenceId: is });
      j++;
    } else {
      i++;
      j++;
    }
  }
  const transitions = exits.length === 0 ? enters : enters.length === 0 ? exits : [...exits, ...enters];
  return { outOfOrder: false, transitions, cursor: { insideIds: now, lastEvaluatedAt: recordedAt } };
}

function isSorted(ids: readonly string[]): boolean {
  for (let k = 1; k < ids.length; k++) if ((ids[k - 1] as string) > (ids[k] as string)) return false;
  return true;
}
