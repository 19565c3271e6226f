/**
 * Presence and dwell of one device through one ingestion (contract §4.5, ADR 015), pure: which
 * `geofence_presence` rows the device's enters and exits leave behind, and which dwell timers come
 * due before a later location of the same device. A timer due at or before a location's timestamp
 * fires before that location is evaluated, at the device's last known point: device time orders
 * a dwell among the device's own events, whatever the server's clock says.
 */

/** A pending dwell timer: the visit began at `enteredAt`; its dwell is due at `dueAt`. */
export interface DwellTimer {
  geofenceId: string;
  dueAt: Date;
}

/** Where the device last was: a dwell event's point and location. */
export interface KnownPoint {
  lng: number;
  lat: number;
  locationId: string;
}

export interface FiredDwell {
  geofenceId: string;
  at: Date;
  point: KnownPoint;
}

/** The final state of one (device, geofence) pair this ingestion touched. */
export type PresenceFinal =
  | { kind: 'inside'; enteredAt: Date; dwellDueAt: Date | null; dwelledAt: Date | null }
  | { kind: 'outside' };

export class DevicePresence {
  /** Pairs whose row this ingestion rewrites (deleted, then inserted when inside). */
  readonly finals = new Map<string, PresenceFinal>();
  /** Rows stored before that only gained `dwelled_at`. */
  readonly dwelled: Array<{ geofenceId: string; at: Date }> = [];
  readonly #timers: DwellTimer[];
  #last: KnownPoint | null;

  constructor(storedTimers: readonly DwellTimer[], lastPoint: KnownPoint | null) {
    this.#timers = [...storedTimers];
    this.#last = lastPoint;
  }

  /** Fires the timers due at or before `at` (oldest first), at the last known point. */
  fireDue(at: Date): FiredDwell[] {
    if (this.#timers.length === 0 || this.#last === null) return [];
    const due = this.#timers.filter((t) => t.dueAt.getTime() <= at.getTime());
    if (due.length === 0) return [];
    due.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime() || (a.geofenceId < b.geofenceId ? -1 : 1));
    const fired: FiredDwell[] = [];
    for (const timer of due) {
      this.#timers.splice(this.#timers.indexOf(timer), 1);
      fired.push({ geofenceId: timer.geofenceId, at: timer.dueAt, point: this.#last });
      const final = this.finals.get(timer.geofenceId);
      if (final?.kind === 'inside') final.dwelledAt = timer.dueAt;
      else this.dwelled.push({ geofenceId: timer.geofenceId, at: timer.dueAt });
    }
    return fired;
  }

  enter(geofenceId: string, at: Date, dwellSeconds: number | null): void {
    const dwellDueAt = dwellSeconds === null ? null : new Date(at.getTime() + dwellSeconds * 1000);
    this.finals.set(geofenceId, { kind: 'inside', enteredAt: at, dwellDueAt, dwelledAt: null });
    this.#dropTimer(geofenceId);
    if (dwellDueAt !== null) this.#timers.push({ geofenceId, dueAt: dwellDueAt });
  }

  /** An exit, or a geofence dropped silently (deleted or disabled): the visit and its timer end. */
  leave(geofenceId: string): void {
    this.finals.set(geofenceId, { kind: 'outside' });
    this.#dropTimer(geofenceId);
  }

  /** The location just evaluated is the device's last known point from now on. */
  moved(point: KnownPoint): void {
    this.#last = point;
  }

  #dropTimer(geofenceId: string): void {
    const i = this.#timers.findIndex((t) => t.geofenceId === geofenceId);
    if (i >= 0) this.#timers.splice(i, 1);
  }
}
