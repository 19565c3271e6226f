/**
 * What the action executors are handed in tests: a template context shaped like a real event's
 * (overridable piece by piece) and a runtime holding only the HTTP parts; the mail transport and
 * database targets refuse to be used, since no HTTP action may touch them.
 */
import type { Dispatcher } from 'undici';
import type { ActionRuntime } from '../../../src/workflows/actions/action.ts';
import type { TemplateContext } from '../../../src/workflows/templates.ts';

export interface ContextChanges {
  event_type?: TemplateContext['event_type'];
  geofenceName?: string;
  deviceName?: string;
  test?: boolean;
}

export function eventContext(changes: ContextChanges = {}): TemplateContext {
  const eventType = changes.event_type ?? 'enter';
  const geofence = {
    id: '0198a3c1-7e2f-7b10-8c41-3f2a9d1e5b01',
    name: changes.geofenceName ?? 'Depot North',
    metadata: { site: 'north' },
  };
  const device = {
    id: '0198a3c1-7e2f-7b10-8c41-3f2a9d1e5b02',
    name: changes.deviceName ?? 'Truck 7',
    external_id: 'truck-7',
    user_id: 'driver-7',
    metadata: { fleet: 'blue' },
  };
  const occurredAt = '2026-03-14T09:26:53.589Z';
  const eventId = `${geofence.id}_${eventType}_1773480413`;
  return {
    event: `geofence.${eventType}`,
    event_type: eventType,
    event_id: eventId,
    occurred_at: occurredAt,
    geofence,
    device,
    point: { lat: 52.52, lng: 13.405 },
    metadata: { speed_kmh: 42 },
    workflow: { id: '0198a3c1-7e2f-7b10-8c41-3f2a9d1e5b03', name: 'Notify dispatch' },
    payload_json: JSON.stringify({ event_id: eventId, event_type: eventType, geofence_id: geofence.id }),
    test: changes.test ?? false,
  };
}

export function httpRuntime(dispatcher: Dispatcher, timeoutMs = 5000): ActionRuntime {
  const unused = (what: string) => () => Promise.reject(new Error(`an HTTP action used ${what}`));
  return {
    dispatcher,
    allowPrivateTargets: true,
    timeoutMs,
    mail: { sendNow: unused('the mail transport') },
    databases: { insertEvent: unused('a database target'), close: () => Promise.resolve() },
  };
}
