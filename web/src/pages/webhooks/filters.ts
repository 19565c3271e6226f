/**
 * The filters of the deliveries and dead-letter lists, kept in the URL query so a filtered view is
 * a link and survives a reload. Times are ISO 8601 UTC in the URL and local in the inputs.
 */
import {
  type DeliveryEventType,
  type DeliveryStatus,
  EVENT_TYPES,
  STATUS_CLASSES,
  STATUSES,
  type StatusClass,
} from './types.ts';

export interface DeliveryFilters {
  webhook: string | null;
  status: DeliveryStatus | null;
  event_type: DeliveryEventType | null;
  status_class: StatusClass | null;
  from: string | null;
  to: string | null;
}

export interface DeadLetterFilters {
  webhook: string | null;
  event_type: DeliveryEventType | null;
  /** 'true' / 'false' as in the URL, null for both. */
  requeued: 'true' | 'false' | null;
  from: string | null;
  to: string | null;
}

function oneOf<T extends string>(values: readonly T[], value: string | null): T | null {
  return values.includes(value as T) ? (value as T) : null;
}

export function readDeliveryFilters(query: URLSearchParams): DeliveryFilters {
  return {
    webhook: query.get('webhook') || null,
    status: oneOf(STATUSES, query.get('status')),
    event_type: oneOf(EVENT_TYPES, query.get('event_type')),
    status_class: oneOf(STATUS_CLASSES, query.get('status_class')),
    from: validIso(query.get('from')),
    to: validIso(query.get('to')),
  };
}

export function readDeadLetterFilters(query: URLSearchParams): DeadLetterFilters {
  return {
    webhook: query.get('webhook') || null,
    event_type: oneOf(EVENT_TYPES, query.get('event_type')),
    requeued: oneOf(['true', 'false'] as const, query.get('requeued')),
    from: validIso(query.get('from')),
    to: validIso(query.get('to')),
  };
}

/** How many filters are set (for the folded filter box's summary). */
export function activeCount(filters: object): number {
  return Object.values(filters).filter((v) => v !== null).length;
}

/** ISO UTC → the value of a `datetime-local` input in the reader's time zone. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (local time) → ISO UTC; null when empty or incomplete. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The input has minutes only: "to 12:30" includes the whole minute. */
export function endOfMinute(iso: string | null): string | null {
  return iso ? new Date(Date.parse(iso) + 59_999).toISOString() : null;
}

function validIso(value: string | null): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
