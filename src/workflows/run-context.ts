/**
 * The template context of a run (contract §6): the event, its device, geofence and workflow, and
 * the seed §6.3 payload. Built when the run starts and stored, so every attempt and retry of every
 * action renders the same values.
 *
 * Most of it depends on the event only, and one event often starts several workflows: that part
 * (`EventContext`) is stored once per event, in `workflow_event_contexts` (migration 0017, ADR 020),
 * and each run adds its own part when an action runs: the workflow's id and name as of the run's
 * start, `test`, and the payload's `id` (the run's id). Runs started before migration 0017 keep
 * their whole context in their own row.
 */

import { geofenceEventBody } from '../events/event-payload.ts';
import { eventNameOf } from '../events/event-types.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import type { TemplateDevice } from './runs.repository.ts';
import type { TemplateContext } from './templates.ts';

/**
 * What every workflow of an event renders alike. The payload is kept as the §6.3 body without its
 * `id`, an object rather than JSON text (stored inside JSON, text would escape every quote).
 */
export type EventContext = Omit<TemplateContext, 'workflow' | 'payload_json' | 'test'> & {
  payload: Record<string, unknown>;
};

/** What a run adds to its event's context. */
export interface RunPart {
  /** The payload's `id`: the run's id. */
  payloadId: string;
  workflow: { id: string; name: string };
  test: boolean;
}

export function eventContextOf(event: GeofenceEvent, device: TemplateDevice | undefined): EventContext {
  return {
    event: eventNameOf(event.eventType),
    event_type: event.eventType,
    event_id: event.eventId,
    occurred_at: event.occurredAt.toISOString(),
    geofence: {
      id: event.geofenceId,
      name: event.geofenceName,
      metadata: event.metadata.geofence_metadata ?? {},
    },
    device: {
      id: event.deviceId,
      // A device deleted since the event keeps its id; its name is then unknown.
      name: device?.name ?? event.deviceId,
      external_id: device?.externalId ?? null,
      user_id: device?.userId ?? event.userId ?? null,
      metadata: device?.metadata ?? {},
    },
    point: { lat: event.lat, lng: event.lng },
    metadata: event.metadata.event_metadata ?? {},
    payload: geofenceEventBody(event),
  };
}

/**
 * The whole context of a run. The keys keep the order a whole stored context has, and the payload
 * text is the one `geofenceEventPayload` writes: `id` first, then the body as it was stored (JSON
 * text read back and written again is the same text).
 */
export function runContext(shared: EventContext, run: RunPart): TemplateContext {
  return {
    event: shared.event,
    event_type: shared.event_type,
    event_id: shared.event_id,
    occurred_at: shared.occurred_at,
    geofence: shared.geofence,
    device: shared.device,
    point: shared.point,
    metadata: shared.metadata,
    workflow: run.workflow,
    payload_json: JSON.stringify({ id: run.payloadId, ...shared.payload }),
    test: run.test,
  };
}

export function eventContext(
  event: GeofenceEvent,
  device: TemplateDevice | undefined,
  workflow: { id: string; name: string },
  payloadId: string,
  test: boolean,
): TemplateContext {
  return runContext(eventContextOf(event, device), { payloadId, workflow, test });
}

/** A run's context as the database holds it. */
export type StoredRunContext =
  /** A run started before migration 0017: its whole context, JSON text. */
  | { whole: string }
  /** The event's shared part (JSON text of an `EventContext`) and the run's own. */
  | ({ shared: string } & RunPart);

/** Parses a stored context (when an action runs: each attempt gets objects of its own). */
export function parseRunContext(stored: StoredRunContext): TemplateContext {
  if ('whole' in stored) return JSON.parse(stored.whole) as TemplateContext;
  return runContext(JSON.parse(stored.shared) as EventContext, stored);
}
