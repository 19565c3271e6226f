/**
 * Geofence evaluation of one location against a device's previous state (contract §4.3, §4.5), as a
 * pure function so the rules are testable without storage:
 * - a location older than the device's newest evaluated one is out of order: no evaluation;
 * - a geofence newly containing the point → `enter`; one that no longer does → `exit`;
 * - a geofence the device was inside that is no longer in the index at all (deleted or disabled)
 *   is dropped from the state silently: deleting or disabling produces no event;
 * - §4.5, per geofence that sets them: a location less accurate than `max_accuracy_m` changes
 *   nothing for it (no enter, no exit); a device inside stays inside while within `exit_buffer_m`
 *   of the geometry.
 * A workspace without rules takes the plain path, exactly §4.3.
 */
import type { EventType } from '../events/events.tables.ts';
import type { FenceRules } from '../geofences/workspace-fences.ts';

/** What evaluation needs of the workspace's geofences (`WorkspaceFences` satisfies it). */
export interface ContainmentIndex {
  query(lng: number, lat: number): string[];
  has(id: string): boolean;
  /** Whether any geofence sets a §4.5 rule; false → `rulesOf`/`withinM` are never asked. */
  readonly hasRules?: boolean;
  rulesOf?(id: string): FenceRules;
  withinM?(id: string, lng: number, lat: number, metres: number): boolean;
}

export interface Transition {
  type: EventType;
  geofenceId: string;
}

export interface DeviceCursor {
  /** Sorted ids of the geofences the device is inside after the newest evaluated location. */
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
  accuracy: number | null = null,
): Evaluation {
  // Equal timestamps are in order: two fixes in the same millisecond are both evaluated.
  if (cursor.lastEvaluatedAt !== null && recordedAt.getTime() < cursor.lastEvaluatedAt.getTime()) {
    return { outOfOrder: true };
  }
  let now = index.query(lng, lat);
  if (now.length > 1) now.sort();
  const before = isSorted(cursor.insideIds) ? cursor.insideIds : [...cursor.insideIds].sort();
  if (index.hasRules === true) now = applyRules(index, before, now, lng, lat, accuracy);
  // Exits first, then enters, each in id order: a deterministic sequence for one location. Both
  // lists are sorted, so one merge finds them (no sets: most locations are in 0–2 geofences).
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

/**
 * The inside set after §4.5's rules, sorted: a geofence that gates this location out keeps the
 * device's previous membership; one the device was inside keeps it while within its exit buffer.
 */
function applyRules(
  index: ContainmentIndex,
  before: readonly string[],
  contained: readonly string[],
  lng: number,
  lat: number,
  accuracy: number | null,
): string[] {
  const rulesOf = index.rulesOf;
  if (!rulesOf) return [...contained];
  const gated = (rules: FenceRules): boolean =>
    rules.maxAccuracyM !== null && accuracy !== null && accuracy > rules.maxAccuracyM;
  const out: string[] = [];
  const wasInside = new Set(before);
  for (const id of contained) {
    // A poor fix cannot enter a geofence that gates it.
    if (!wasInside.has(id) && gated(rulesOf.call(index, id))) continue;
    out.push(id);
  }
  const isInside = new Set(contained);
  for (const id of before) {
    if (isInside.has(id) || !index.has(id)) continue;
    const rules = rulesOf.call(index, id);
    // A poor fix cannot take the device out; nor can a point within the exit buffer.
    if (gated(rules)) out.push(id);
    else if (rules.exitBufferM !== null && index.withinM?.(id, lng, lat, rules.exitBufferM) === true)
      out.push(id);
  }
  return out.length > 1 ? out.sort() : out;
}

function isSorted(ids: readonly string[]): boolean {
  for (let k = 1; k < ids.length; k++) if ((ids[k - 1] as string) > (ids[k] as string)) return false;
  return true;
}
