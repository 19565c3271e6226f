/**
 * Time behind an interface so token expiry, retry schedules and monthly quotas are tested by moving
 * a clock, never by sleeping.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to; for tests and simulations. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | string | number = '2026-01-01T00:00:00.000Z') {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  set(time: Date | string | number): void {
    this.current = new Date(time).getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
