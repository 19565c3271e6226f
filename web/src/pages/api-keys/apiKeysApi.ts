/** The calls of the API keys page: the workspace's keys (the first 200), creation and revocation. */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';

export const apiKeyKeys = { all: ['api-keys'] as const };

type NewKey = operations['createApiKey']['requestBody']['content']['application/json'];

export function useApiKeys() {
  return useQuery({
    queryKey: apiKeyKeys.all,
    queryFn: ({ signal }) =>
      answerOf(api.GET('/api/v1/account/api-keys', { params: { query: { limit: 200 } }, signal })),
  });
}

export function createApiKey(body: NewKey) {
  return api.POST('/api/v1/account/api-keys', { body });
}

export function revokeApiKey(id: string) {
  return api.DELETE('/api/v1/account/api-keys/{api_key_id}', { params: { path: { api_key_id: id } } });
}
