/**
 * Billing periods are calendar months in UTC, the same months as `usage_counters.period`
 * ('YYYY-MM', src/usage/usage.repository.ts): `start` inclusive, `end` exclusive.
 */
export interface BillingPeriod {
  /** 'YYYY-MM' */
  id: string;
  start: Date;
  end: Date;
}

export function periodOf(at: Date): BillingPeriod {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { id: start.toISOString().slice(0, 7), start, end };
}

/** The month before the one containing `at` (the latest closed period). */
export function previousPeriod(at: Date): BillingPeriod {
  return periodOf(new Date(periodOf(at).start.getTime() - 1));
}

/** 'YYYY-MM-DD' (UTC) of each day of the period up to and including `until`'s day. */
export function daysOf(period: BillingPeriod, until: Date): string[] {
  const days: string[] = [];
  const last = Math.min(until.getTime(), period.end.getTime() - 1);
  for (let t = period.start.getTime(); t <= last; t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}
