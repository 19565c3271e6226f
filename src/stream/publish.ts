/**
 * From committed work to stream messages (ADR 016): ingestion's commits (one `location` message per
 * device, its newest position of the commit, then the events in the order they happened) and the
 * dwell worker's events. Nothing is built for a workspace nobody watches; the rest is built on the
 * next turn of the event loop, after the answer to the request that committed it has been written.
 */
import type { GeofenceEvent } from '../events/events.repository.ts';
import type { CommittedIngestion } from '../locations/ingest.service.ts';
import type { StreamHub } from './stream-hub.ts';
import { eventMessage, locationMessage } from './stream-messages.ts';

export function publishCommitted(hub: StreamHub, committed: CommittedIngestion): void {
  if (!hub.wanted(committed.workspaceId)) return;
  setImmediate(() => {
    const { workspaceId, positions, events } = committed;
    for (const position of positions) hub.publish(workspaceId, locationMessage(position));
    publishNow(hub, workspaceId, events);
  });
}

export function publishEvents(hub: StreamHub, workspaceId: string, events: readonly GeofenceEvent[]): void {
  if (events.length === 0 || !hub.wanted(workspaceId)) return;
  setImmediate(() => publishNow(hub, workspaceId, events));
}

function publishNow(hub: StreamHub, workspaceId: string, events: readonly GeofenceEvent[]): void {
  // Events of a commit are stored device by device; across devices they go out as they happened.
  const ordered = [...events].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
  for (const event of ordered) hub.publish(workspaceId, eventMessage(event));
}
