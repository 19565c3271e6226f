/** How the billing page writes money, limits and periods: one place, so every section agrees. */
import type { Schemas } from '../../api/client.ts';

export type Plan = Schemas['Plan'];
export type PlanLimits = Schemas['PlanLimits'];
export type Subscription = Schemas['Subscription'];
export type Usage = Schemas['Usage'];
export type Invoice = Schemas['Invoice'];

const money = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' });
const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
const monthFormat = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });

/** Cents as money; the API's prices are US dollars. */
export function formatCents(cents: number): string {
  return money.format(cents / 100);
}

/** A plan's price: null means the price is agreed per contract (enterprise). */
export function formatPrice(cents: number | null): string {
  if (cents === null) return 'By agreement';
  return cents === 0 ? 'Free' : `${formatCents(cents)} a month`;
}

/** A limit of the plan; null is "no limit" in every field of PlanLimits. */
export function formatLimit(limit: number | null): string {
  return limit === null ? 'No limit' : limit.toLocaleString();
}

/**
 * A period `[start, end)` as the reader says it. Periods are calendar months in UTC (contract §7),
 * so the last day shown is the day before `end`, in UTC, whatever the reader's time zone.
 */
export function formatPeriod(startIso: string, endIso: string): string {
  const start = new Date(startIso);
  const lastDay = new Date(new Date(endIso).getTime() - 1);
  return `${dayFormat.format(start)} – ${dayFormat.format(lastDay)}`;
}

/** The month a period covers ("March 2026"), the name of an invoice. */
export function formatMonth(startIso: string): string {
  return monthFormat.format(new Date(startIso));
}

/** A day of the daily series (`2026-03-10`, a UTC date) as the reader writes dates. */
export function formatDay(date: string): string {
  return dayFormat.format(new Date(`${date}T00:00:00Z`));
}

/** The limits in the order every table and meter lists them, with their readable names. */
export const LIMIT_NAMES: ReadonlyArray<{ key: keyof PlanLimits; label: string }> = [
  { key: 'events_per_month', label: 'Events per month' },
  { key: 'api_requests_per_hour', label: 'API requests per hour (per key)' },
  { key: 'geofences', label: 'Geofences' },
  { key: 'webhooks', label: 'Webhooks' },
  { key: 'devices', label: 'Devices' },
];
