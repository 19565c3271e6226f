/**
 * The filters of the deliveries and dead-letter lists, kept in the URL query so a filtered view is
 * a link and survives a reload. Times are ISO 8601 UTC in the URL and local in the inputs.
 */
import { isoOrNull } from '../../ui/localTime.ts';
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
    from: isoOrNull(query.get('from')),
    to: isoOrNull(query.get('to')),
  };
}

export function readDeadLetterFilters(query: URLSearchParams): DeadLetterFilters {
  return {
    webhook: query.get('webhook') || null,
    event_type: oneOf(EVENT_TYPES, query.get('event_type')),
    requeued: oneOf(['true', 'false'] as const, query.get('requeued')),
    from: isoOrNull(query.get('from')),
    to: isoOrNull(query.get('to')),
  };
}

/** How many filters are set (for the folded filter box's summary). */
export function activeCount(filters: object): number {
  return Object.values(filters).filter((v) => v !== null).length;
}
