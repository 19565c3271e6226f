/** The calls of the workspace settings page: the workspace (name, token lifetime) and its change. */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';

export const workspaceKeys = { one: (id: string) => ['workspace', id] as const };

type WorkspaceChange = operations['updateWorkspace']['requestBody']['content']['application/json'];

export function useWorkspace(workspaceId: string) {
  return useQuery({
    queryKey: workspaceKeys.one(workspaceId),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/workspaces/{workspace_id}', {
          params: { path: { workspace_id: workspaceId } },
          signal,
        }),
      ),
  });
}

export function updateWorkspace(workspaceId: string, body: WorkspaceChange) {
  return api.PATCH('/api/v1/workspaces/{workspace_id}', {
    params: { path: { workspace_id: workspaceId } },
    body,
  });
}
