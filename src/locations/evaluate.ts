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
  const now = index.query(lng, lat).sort();
  const before = new Set(cursor.insideIds);
  const after = new Set(now);
  // Exits first, then enters, each in id order: a deterministic sequence for one location.
  const transitions: Transition[] = [];
  for (const id of cursor.insideIds) {
    if (!after.has(id) && index.has(id)) transitions.push({ type: 'exit', geofenceId: id });
  }
  for (const id of now) {
    if (!before.has(id)) transitions.push({ type: 'enter', geofenceId: id });
  }
  return { outOfOrder: false, transitions, cursor: { insideIds: now, lastEvaluatedAt: recordedAt } };
}
