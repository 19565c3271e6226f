/**
 * A workspace's enabled geofences as evaluation sees them (contract §4.3, §4.5): the geometry
 * index and, beside it, the rules of the few geofences that set any (dwell, exit buffer, accuracy
 * gate). A workspace whose geofences set none answers `hasRules` false, and evaluation takes the
 * plain path of §4.3 without looking any rule up.
 */
import { type FenceGeometry, type GeofenceEntry, GeofenceIndex } from '../geo/index.ts';

export interface FenceRules {
  dwellSeconds: number | null;
  exitBufferM: number | null;
  maxAccuracyM: number | null;
}

export interface RuledEntry extends GeofenceEntry {
  rules: FenceRules;
}

export const NO_RULES: FenceRules = { dwellSeconds: null, exitBufferM: null, maxAccuracyM: null };

export function hasAnyRule(rules: FenceRules): boolean {
  return rules.dwellSeconds !== null || rules.exitBufferM !== null || rules.maxAccuracyM !== null;
}

export class WorkspaceFences {
  readonly index: GeofenceIndex;
  /** Only geofences with at least one rule. */
  readonly #rules = new Map<string, FenceRules>();

  constructor(index: GeofenceIndex, entries: Iterable<RuledEntry> = []) {
    this.index = index;
    for (const entry of entries) if (hasAnyRule(entry.rules)) this.#rules.set(entry.id, entry.rules);
  }

  static build(entries: readonly RuledEntry[]): WorkspaceFences {
    return new WorkspaceFences(GeofenceIndex.build(entries), entries);
  }

  get size(): number {
    return this.index.size;
  }

  /** Whether any geofence of the workspace sets a rule. */
  get hasRules(): boolean {
    return this.#rules.size > 0;
  }

  query(lng: number, lat: number): string[] {
    return this.index.query(lng, lat);
  }

  has(id: string): boolean {
    return this.index.has(id);
  }

  rulesOf(id: string): FenceRules {
    return this.#rules.get(id) ?? NO_RULES;
  }

  /** Whether the point is within `metres` of geofence `id` (inside counts); false for an unknown id. */
  withinM(id: string, lng: number, lat: number, metres: number): boolean {
    return this.index.withinM(id, lng, lat, metres);
  }

  upsert(id: string, geometry: FenceGeometry, rules: FenceRules): void {
    this.index.upsert(id, geometry);
    if (hasAnyRule(rules)) this.#rules.set(id, rules);
    else this.#rules.delete(id);
  }

  remove(id: string): void {
    this.index.remove(id);
    this.#rules.delete(id);
  }
}
