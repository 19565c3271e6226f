/** Reading geofence events (contract §4.3); they are written only by the location pipeline. */
import type { Db } from '../db/database.ts';
import { NotFoundError } from '../shared/errors.ts';
import { type EventRun, listEventRuns } from './event-runs.repository.ts';
import {
  type EventFilters,
  findEvent,
  type GeofenceEvent,
  listEvents as listRows,
} from './events.repository.ts';

export interface EventsContext {
  db: Db;
}

export async function getEvent(ctx: EventsContext, workspaceId: string, id: string): Promise<GeofenceEvent> {
  const event = await findEvent(ctx.db, workspaceId, id);
  if (!event) throw new NotFoundError('Event');
  return event;
}

export function listEvents(
  ctx: EventsContext,
  workspaceId: string,
  filters: EventFilters,
  offset: number,
  limit: number,
): Promise<{ events: GeofenceEvent[]; total: number }> {
  return listRows(ctx.db, workspaceId, filters, offset, limit);
}

/** The workflow runs the event started, newest first; an event not in the workspace is not found. */
export async function listRunsOfEvent(
  ctx: EventsContext,
  workspaceId: string,
  id: string,
  offset: number,
  limit: number,
): Promise<{ runs: EventRun[]; total: number }> {
  const event = await getEvent(ctx, workspaceId, id);
  return listEventRuns(ctx.db, workspaceId, event.id, offset, limit);
}
