/**
 * The calls of the event page and their queries: the event and its payload, the deliveries it
 * caused (the workspace's delivery list filtered by the event's record id) and the runs it started.
 * An event never changes; its deliveries and runs sit under `['deliveries']` and `['workflow-runs']`
 * so that a retry made elsewhere shows here too.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';

/** The most of each list one page shows (the API's page limit); more are counted, not listed. */
export const JOBS_SHOWN = 200;

export function getEvent(id: string, signal: AbortSignal) {
  return api.GET('/api/v1/events/{event_id}', { params: { path: { event_id: id } }, signal });
}

export function getEventPayload(id: string, signal: AbortSignal) {
  return api.GET('/api/v1/events/{event_id}/payload', { params: { path: { event_id: id } }, signal });
}

export function listEventDeliveries(id: string, signal: AbortSignal) {
  return api.GET('/api/v1/webhooks/deliveries', {
    params: { query: { event_id: id, limit: JOBS_SHOWN } },
    signal,
  });
}

export function listEventRuns(id: string, signal: AbortSignal) {
  return api.GET('/api/v1/events/{event_id}/workflow-runs', {
    params: { path: { event_id: id }, query: { limit: JOBS_SHOWN } },
    signal,
  });
}

export function getGeofence(id: string, signal?: AbortSignal) {
  return api.GET('/api/v1/geofences/{geofence_id}', { params: { path: { geofence_id: id } }, signal });
}

export function useEvent(id: string) {
  return useQuery({
    queryKey: ['events', 'one', id],
    queryFn: ({ signal }) => answerOf(getEvent(id, signal)),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export function useEventPayload(id: string) {
  return useQuery({
    queryKey: ['events', 'payload', id],
    queryFn: ({ signal }) => answerOf(getEventPayload(id, signal)),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export function useEventDeliveries(id: string) {
  return useQuery({
    queryKey: ['deliveries', 'of-event', id],
    queryFn: ({ signal }) => answerOf(listEventDeliveries(id, signal)),
  });
}

export function useEventRuns(id: string) {
  return useQuery({
    queryKey: ['workflow-runs', 'of-event', id],
    queryFn: ({ signal }) => answerOf(listEventRuns(id, signal)),
  });
}

/**
 * A page of the events feed. The feed merges live messages into what it read, so it keeps its rows
 * in its own state rather than in the query cache.
 */
export function listEvents(query: ListEventsQuery, signal?: AbortSignal) {
  return api.GET('/api/v1/events', { params: { query }, signal });
}
type ListEventsQuery = NonNullable<operations['listEvents']['parameters']['query']>;
