/**
 * The event types and their `geofence.<type>` names (contract §4.3, §4.5), and what every consumer
 * of an event derives from them: the seed §6.3 payload, the workflow template context (with its
 * default message) and the seed event id.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedEventId } from '../../src/events/event-id.ts';
import { geofenceEventPayload } from '../../src/events/event-payload.ts';
import { EVENT_NAMES, EVENT_TYPES, eventNameOf } from '../../src/events/event-types.ts';
import type { GeofenceEvent } from '../../src/events/events.repository.ts';
import { eventOut } from '../../src/events/events.schemas.ts';
import { SUBSCRIBABLE_EVENTS } from '../../src/webhooks/webhooks.schemas.ts';
import { eventContext } from '../../src/workflows/run-context.ts';
import { defaultMessage, defaultSubject } from '../../src/workflows/templates.ts';
import { TRIGGER_EVENT_TYPES } from '../../src/workflows/workflows.schemas.ts';

const GEOFENCE = '0198a3c1-7e2f-7b10-8c41-3f2a9d1e5b01';

function eventOf(eventType: GeofenceEvent['eventType']): GeofenceEvent {
  const occurredAt = new Date('2026-03-10T12:20:00.000Z');
  return {
    id: '0198a3c1-7e2f-7b10-8c41-3f2a9d1e5b09',
    workspaceId: '0198a3c1-7e2f-7b10-8c41-3f2a9d1e5b08',
    eventId: seedEventId(GEOFENCE, eventType, occurredAt),
    eventType,
    deviceId: '0198a3c1-7e2f-7b10-8c41-3f2a9d1e5b02',
    userId: 'driver-7',
    geofenceId: GEOFENCE,
    geofenceName: 'Depot',
    lng: 13.405,
    lat: 52.52,
    locationId: '0198a3c1-7e2f-7b10-8c41-3f2a9d1e5b03',
    sessionId: null,
    occurredAt,
    createdAt: occurredAt,
    metadata: { geofence_metadata: { site: 'north' }, event_metadata: { trip: 'T-1' } },
  };
}

describe('event types and names', () => {
  test('each type is named geofence.<type>, in the order of the types', () => {
    assert.deepEqual(EVENT_TYPES, ['enter', 'exit', 'dwell']);
    assert.equal(eventNameOf('enter'), 'geofence.enter');
    assert.equal(eventNameOf('exit'), 'geofence.exit');
    assert.equal(eventNameOf('dwell'), 'geofence.dwell');
    assert.deepEqual(EVENT_NAMES, EVENT_TYPES.map(eventNameOf));
  });

  test('webhooks subscribe to every name and workflows trigger on every type', () => {
    assert.deepEqual([...SUBSCRIBABLE_EVENTS], [...EVENT_NAMES]);
    assert.deepEqual([...TRIGGER_EVENT_TYPES], [...EVENT_TYPES]);
  });

  test('the dwell identifier carries the seconds of the dwell moment', () => {
    assert.equal(
      seedEventId(GEOFENCE, 'dwell', new Date('2026-03-10T12:20:00.999Z')),
      `${GEOFENCE}_dwell_1773145200`,
    );
  });

  for (const type of EVENT_TYPES) {
    test(`event type ${type}: record, seed §6.3 payload and template context agree`, () => {
      const event = eventOf(type);
      const record = eventOut(event);
      assert.equal(record.event_type, type);
      assert.equal(record.event, `geofence.${type}`);

      const payload = JSON.parse(geofenceEventPayload(event, 'key-1'));
      assert.deepEqual(payload, {
        id: 'key-1',
        event: `geofence.${type}`,
        timestamp: '2026-03-10T12:20:00.000Z',
        data: {
          event_id: `${GEOFENCE}_${type}_1773145200`,
          user_id: 'driver-7',
          device_id: event.deviceId,
          geofence_id: GEOFENCE,
          geofence_name: 'Depot',
          event_type: type,
          point: { type: 'Point', coordinates: [13.405, 52.52] },
          metadata: { geofence_metadata: { site: 'north' }, event_metadata: { trip: 'T-1' } },
        },
      });

      const context = eventContext(event, undefined, { id: 'w1', name: 'Flow' }, 'key-2', false);
      assert.equal(context.event, `geofence.${type}`);
      assert.equal(context.event_type, type);
      assert.equal(JSON.parse(context.payload_json).event, `geofence.${type}`);
    });
  }

  test('the default message of a dwell says the device has stayed in the geofence', () => {
    const context = eventContext(eventOf('dwell'), undefined, { id: 'w1', name: 'Flow' }, 'key', false);
    assert.equal(
      defaultMessage(context),
      `${context.device.name} has stayed in Depot (52.52, 13.405) at 2026-03-10T12:20:00.000Z`,
    );
    assert.equal(defaultSubject(context), `${context.device.name} has stayed in Depot`);
  });
});
