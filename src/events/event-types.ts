/**
 * The geofence event types (contract §4.3, §4.5) and their names: `event_type` is `enter`, `exit`
 * or `dwell`; the `event` of records, payloads, deliveries and runs is `geofence.<event_type>`.
 * Every module naming an event uses these, so a new type is added here once.
 */

export const EVENT_TYPES = ['enter', 'exit', 'dwell'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export type EventName = `geofence.${EventType}`;

/** The names in the order of EVENT_TYPES (test/events/event-types.test.ts checks they agree). */
export const EVENT_NAMES = [
  'geofence.enter',
  'geofence.exit',
  'geofence.dwell',
] as const satisfies readonly EventName[];

/** `enter` → `geofence.enter`. */
export function eventNameOf(type: EventType): EventName {
  return `geofence.${type}`;
}
