/**
 * The calls the workflows area makes besides /workflows itself: geofences for the trigger picker
 * (by name, by id, all of them for the map) and the workspace's webhooks for `webhook` actions.
 */
import { type QueryClient, useQuery } from '@tanstack/react-query';
import { api, errorMessage, type Schemas } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';
import type { GeofenceGeometry } from '../../map/geofenceGeometry.ts';
import type { GeofenceShape } from '../../map/geofenceLayer.ts';
import type { EntityOption } from '../../ui/EntityCombobox.tsx';
import type { PreviewGeofence } from './preview.ts';

const MATCHES = 20;

export async function searchGeofences(q: string, signal: AbortSignal): Promise<EntityOption[]> {
  const { data } = await api.GET('/api/v1/geofences', {
    params: { query: { q: q.trim() || undefined, limit: MATCHES } },
    signal,
  });
  return (data?.results ?? []).map((g) => ({
    id: g.id,
    label: g.name,
    detail: g.enabled ? null : 'disabled',
  }));
}

/** The trigger geofence as the preview's sample event needs it (name, metadata, bounding box). */
export async function loadGeofence(id: string, signal?: AbortSignal): Promise<PreviewGeofence | null> {
  const { data } = await api.GET('/api/v1/geofences/{geofence_id}', {
    params: { path: { geofence_id: id } },
    signal,
  });
  return data ? { id: data.id, name: data.name, metadata: data.metadata, bbox: data.bbox } : null;
}

export async function resolveGeofence(id: string, signal: AbortSignal): Promise<EntityOption | null> {
  const found = await loadGeofence(id, signal);
  return found ? { id: found.id, label: found.name } : null;
}

export async function loadWebhooks(): Promise<Schemas['Webhook'][]> {
  const { data, error } = await api.GET('/api/v1/webhooks', { params: { query: { limit: 200 } } });
  if (!data) throw new Error(errorMessage(error));
  return data.results;
}

/** While a run is pending its page looks again this often. */
const RUN_POLL_MS = 1500;

/**
 * Queries of the workflows area. The builder saves without the query cache, so the workflow list
 * and a workflow are read again each time they are shown (staleTime 0; the rows shown meanwhile
 * are the same filter's).
 */
export const workflowKeys = {
  all: ['workflows'] as const,
  list: (enabled: boolean | undefined, offset: number) => ['workflows', 'list', { enabled, offset }] as const,
  one: (id: string) => ['workflows', 'one', id] as const,
  runs: (id: string, status: string | undefined, offset: number) =>
    ['workflow-runs', 'list', id, { status, offset }] as const,
  run: (id: string, runId: string) => ['workflow-runs', 'one', id, runId] as const,
  shapes: ['geofences', 'shapes'] as const,
};

export const WORKFLOWS_PAGE = 25;
export const RUNS_PAGE = 25;

export function useWorkflows(enabled: boolean | undefined, offset: number) {
  return useQuery({
    queryKey: workflowKeys.list(enabled, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/workflows', {
          params: { query: { enabled, offset, limit: WORKFLOWS_PAGE } },
          signal,
        }),
      ),
    staleTime: 0,
  });
}

export function useWorkflow(id: string) {
  return useQuery({
    queryKey: workflowKeys.one(id),
    queryFn: ({ signal }) =>
      answerOf(api.GET('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: id } }, signal })),
    staleTime: 0,
  });
}

export function useWorkflowRuns(
  id: string,
  status: 'pending' | 'success' | 'failed' | undefined,
  offset: number,
) {
  return useQuery({
    queryKey: workflowKeys.runs(id, status, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/workflows/{workflow_id}/runs', {
          params: { path: { workflow_id: id }, query: { status, offset, limit: RUNS_PAGE } },
          signal,
        }),
      ),
    staleTime: 0,
  });
}

/** One run, looked at again every RUN_POLL_MS while it is pending. */
export function useWorkflowRun(id: string, runId: string) {
  return useQuery({
    queryKey: workflowKeys.run(id, runId),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/workflows/{workflow_id}/runs/{run_id}', {
          params: { path: { workflow_id: id, run_id: runId } },
          signal,
        }),
      ),
    staleTime: 0,
    refetchInterval: (query) => (query.state.data?.status === 'pending' ? RUN_POLL_MS : false),
  });
}

export function testWorkflow(id: string) {
  return api.POST('/api/v1/workflows/{workflow_id}/test', { params: { path: { workflow_id: id } } });
}

/** The builder's read of a workflow: outside the query cache, so "Load their version" reads anew. */
export function loadWorkflow(id: string, signal: AbortSignal) {
  return api.GET('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: id } }, signal });
}

export type WorkflowBody = operations['createWorkflow']['requestBody']['content']['application/json'];

/**
 * The builder's save: a new workflow, or the whole workflow replaced at the version the draft was
 * made from (If-Match; 412 when someone saved since), so kept secrets stay with their action.
 */
export function saveWorkflow(id: string | null, version: number | null, body: WorkflowBody) {
  if (!id) return api.POST('/api/v1/workflows', { body });
  return api.PATCH('/api/v1/workflows/{workflow_id}', {
    params: {
      path: { workflow_id: id },
      ...(version === null ? {} : { header: { 'if-match': `"${version}"` } }),
    },
    body,
  });
}

export function deleteWorkflow(id: string) {
  return api.DELETE('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: id } } });
}

export function retryWorkflowRun(id: string, runId: string) {
  return api.POST('/api/v1/workflows/{workflow_id}/runs/{run_id}/retry', {
    params: { path: { workflow_id: id, run_id: runId } },
  });
}

/** Every geofence's shape, for the trigger map (one request to GET /geofences/export). */
export function loadGeofenceShapes(client: QueryClient): Promise<GeofenceShape[]> {
  return client.fetchQuery({
    queryKey: workflowKeys.shapes,
    queryFn: async ({ signal }) => {
      const { data, error } = await api.GET('/api/v1/geofences/export', { parseAs: 'json', signal });
      if (!data) throw new Error(errorMessage(error));
      return data.features.map((f) => ({
        id: f.id,
        name: f.properties.name,
        enabled: f.properties.enabled,
        geometry: f.geometry as GeofenceGeometry,
        bbox: f.bbox,
      }));
    },
  });
}
