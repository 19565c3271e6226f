/**
 * The events page's filters, kept in the URL query (`device`, `geofence`, `type`, `from`, `to`,
 * `offset`) so a filtered feed is a link; times are ISO 8601 UTC there and local in the inputs.
 */

import type { Schemas } from '../../api/client.ts';
import { isoOrNull } from '../../ui/localTime.ts';

export type EventType = Schemas['Event']['event_type'];
export const EVENT_TYPES: readonly EventType[] = ['enter', 'exit', 'dwell'];

export interface EventFilters {
  device: string | null;
  geofence: string | null;
  type: EventType | null;
  from: string | null;
  to: string | null;
  offset: number;
}

export function readFilters(query: URLSearchParams): EventFilters {
  const type = query.get('type');
  const offset = Number(query.get('offset') ?? 0);
  return {
    device: query.get('device') || null,
    geofence: query.get('geofence') || null,
    type: EVENT_TYPES.includes(type as EventType) ? (type as EventType) : null,
    from: isoOrNull(query.get('from')),
    to: isoOrNull(query.get('to')),
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
  };
}

/** The query of `GET /events` for these filters (offset and limit apart). */
export function apiQuery(filters: EventFilters) {
  return {
    device_id: filters.device ?? undefined,
    geofence_id: filters.geofence ?? undefined,
    event_type: filters.type ?? undefined,
    from: filters.from ?? undefined,
    to: filters.to ?? undefined,
  };
}

/** Whether a live event belongs in the feed these filters show (the API's rules: from/to inclusive). */
export function matches(event: Schemas['Event'], filters: EventFilters): boolean {
  if (filters.device && event.device_id !== filters.device) return false;
  if (filters.geofence && event.geofence_id !== filters.geofence) return false;
  if (filters.type && event.event_type !== filters.type) return false;
  const at = Date.parse(event.occurred_at);
  if (filters.from && at < Date.parse(filters.from)) return false;
  if (filters.to && at > Date.parse(filters.to)) return false;
  return true;
}
