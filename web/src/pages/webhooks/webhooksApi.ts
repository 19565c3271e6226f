/**
 * The calls of the webhooks area and the queries over them: webhooks, deliveries (every webhook's
 * or one webhook's), dead letters, one delivery with its attempts, and retries. Query keys start
 * with the kind of record, so a change invalidates every list and detail of that kind.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';
import type { DeadLetterFilters, DeliveryFilters } from './filters.ts';
import type { Webhook } from './types.ts';

export const webhookKeys = {
  all: ['webhooks'] as const,
  list: (enabled: boolean | null, offset: number) => ['webhooks', 'list', { enabled, offset }] as const,
  one: (id: string) => ['webhooks', 'one', id] as const,
  names: ['webhooks', 'names'] as const,
};
/** Deliveries and what is computed from them (a webhook's health, the dead-letter queue). */
export const deliveryKeys = {
  all: ['deliveries'] as const,
  list: (filters: DeliveryFilters, webhookId: string | null, offset: number) =>
    ['deliveries', 'list', { filters, webhookId, offset }] as const,
  one: (id: string) => ['deliveries', 'one', id] as const,
  health: (webhookId: string) => ['deliveries', 'health', webhookId] as const,
  deadLetters: (filters: DeadLetterFilters, offset: number) =>
    ['deliveries', 'dead-letters', { filters, offset }] as const,
  deadLetterStats: ['deliveries', 'dead-letter-stats'] as const,
};

export const PAGE_SIZE = 50;

function deliveryQuery(filters: DeliveryFilters, offset: number) {
  return {
    status: filters.status ?? undefined,
    event_type: filters.event_type ?? undefined,
    status_class: filters.status_class ?? undefined,
    from: filters.from ?? undefined,
    to: filters.to ?? undefined,
    offset,
    limit: PAGE_SIZE,
  };
}

/** One webhook's deliveries when `webhookId` is given, else every webhook's (filtered by `filters.webhook`). */
export function listDeliveries(
  filters: DeliveryFilters,
  webhookId: string | null,
  offset: number,
  signal: AbortSignal,
) {
  const query = deliveryQuery(filters, offset);
  if (webhookId)
    return api.GET('/api/v1/webhooks/{webhook_id}/deliveries', {
      params: { path: { webhook_id: webhookId }, query },
      signal,
    });
  return api.GET('/api/v1/webhooks/deliveries', {
    params: { query: { ...query, webhook_id: filters.webhook ?? undefined } },
    signal,
  });
}

export function getDelivery(id: string, signal?: AbortSignal) {
  return api.GET('/api/v1/webhooks/deliveries/{delivery_id}', {
    params: { path: { delivery_id: id } },
    signal,
  });
}

export function retryDelivery(id: string) {
  return api.POST('/api/v1/webhooks/deliveries/{delivery_id}/retry', {
    params: { path: { delivery_id: id } },
  });
}

export function listDeadLetters(filters: DeadLetterFilters, offset: number, signal: AbortSignal) {
  return api.GET('/api/v1/webhooks/dlq', {
    params: {
      query: {
        webhook_id: filters.webhook ?? undefined,
        event_type: filters.event_type ?? undefined,
        requeued: filters.requeued === null ? undefined : filters.requeued === 'true',
        from: filters.from ?? undefined,
        to: filters.to ?? undefined,
        offset,
        limit: PAGE_SIZE,
      },
    },
    signal,
  });
}

export function retryDeadLetters(ids: string[]) {
  return api.POST('/api/v1/webhooks/dlq/retry', { body: { dlq_ids: ids } });
}

export function resendDelivery(id: string) {
  return api.POST('/api/v1/webhooks/deliveries/{delivery_id}/resend', {
    params: { path: { delivery_id: id } },
  });
}

/** "Retry all matching": the page's filters, except `requeued` (the job takes entries not retried yet). */
export function retryMatching(filters: DeadLetterFilters) {
  return api.POST('/api/v1/webhooks/dlq/retry-matching', {
    body: {
      webhook_id: filters.webhook ?? undefined,
      event_type: filters.event_type ?? undefined,
      from: filters.from ?? undefined,
      to: filters.to ?? undefined,
    },
  });
}

export function getRetryJob(jobId: string, signal?: AbortSignal) {
  return api.GET('/api/v1/webhooks/dlq/retry-matching/{job_id}', {
    params: { path: { job_id: jobId } },
    signal,
  });
}

export function getWebhookHealth(webhookId: string, signal: AbortSignal) {
  return api.GET('/api/v1/webhooks/{webhook_id}/health', {
    params: { path: { webhook_id: webhookId }, query: { window: '24h' } },
    signal,
  });
}

export function useWebhooks(enabled: boolean | null, offset: number) {
  return useQuery({
    queryKey: webhookKeys.list(enabled, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/webhooks', {
          params: { query: { enabled: enabled ?? undefined, offset, limit: PAGE_SIZE } },
          signal,
        }),
      ),
  });
}

export function useWebhook(id: string) {
  return useQuery({
    queryKey: webhookKeys.one(id),
    queryFn: ({ signal }) =>
      answerOf(api.GET('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } }, signal })),
  });
}

const NAMES_PAGE = 200;
/** 10,000 webhooks; a workspace with more sees the ids of the rest instead of names. */
const NAMES_MAX_PAGES = 50;

/**
 * The workspace's webhooks by id, for the webhook column of the deliveries and dead-letter lists
 * and their webhook filter: every page of the largest size (a business plan allows 500), up to
 * NAMES_MAX_PAGES pages. Empty until they arrive (the column shows short ids meanwhile).
 */
export function useWebhookNames(): Map<string, Webhook> {
  const { data } = useQuery({
    queryKey: webhookKeys.names,
    queryFn: async ({ signal }) => {
      const all = new Map<string, Webhook>();
      for (let page = 0; page < NAMES_MAX_PAGES; page++) {
        const answer = await answerOf(
          api.GET('/api/v1/webhooks', {
            params: { query: { limit: NAMES_PAGE, offset: page * NAMES_PAGE } },
            signal,
          }),
        );
        for (const webhook of answer.results) all.set(webhook.id, webhook);
        if (answer.results.length < NAMES_PAGE || all.size >= answer.pagination.total) break;
      }
      return all;
    },
  });
  return data ?? EMPTY_NAMES;
}
const EMPTY_NAMES = new Map<string, Webhook>();

type WebhookBody = operations['updateWebhook']['requestBody']['content']['application/json'];
type NewWebhookBody = operations['createWebhook']['requestBody']['content']['application/json'];

export function updateWebhook(id: string, body: WebhookBody) {
  return api.PATCH('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } }, body });
}

export function createWebhook(body: NewWebhookBody) {
  return api.POST('/api/v1/webhooks', { body });
}

export function deleteWebhook(id: string) {
  return api.DELETE('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } } });
}

export function revealSecret(id: string) {
  return api.GET('/api/v1/webhooks/{webhook_id}/secret', { params: { path: { webhook_id: id } } });
}

export function rotateSecret(id: string) {
  return api.POST('/api/v1/webhooks/{webhook_id}/rotate-secret', { params: { path: { webhook_id: id } } });
}

export function sendTestEvent(id: string) {
  return api.POST('/api/v1/webhooks/{webhook_id}/test', { params: { path: { webhook_id: id } } });
}

export function retryDeadLetter(dlqId: string) {
  return api.POST('/api/v1/webhooks/dlq/{dlq_id}/retry', { params: { path: { dlq_id: dlqId } } });
}

export function useDeliveries(filters: DeliveryFilters, webhookId: string | null, offset: number) {
  return useQuery({
    queryKey: deliveryKeys.list(filters, webhookId, offset),
    queryFn: ({ signal }) => answerOf(listDeliveries(filters, webhookId, offset, signal)),
  });
}

/** One delivery; `refetchInterval` is the page's polling plan (deliveryPolling.ts). */
export function useDelivery(id: string) {
  return useQuery({
    queryKey: deliveryKeys.one(id),
    queryFn: ({ signal }) => answerOf(getDelivery(id, signal)),
    staleTime: 0,
  });
}

export function useWebhookHealth(webhookId: string) {
  return useQuery({
    queryKey: deliveryKeys.health(webhookId),
    queryFn: ({ signal }) => answerOf(getWebhookHealth(webhookId, signal)),
  });
}

export function useDeadLetters(filters: DeadLetterFilters, offset: number) {
  return useQuery({
    queryKey: deliveryKeys.deadLetters(filters, offset),
    queryFn: ({ signal }) => answerOf(listDeadLetters(filters, offset, signal)),
  });
}

/** The totals keep showing while a refresh reads them again (they only count up or down). */
export function useDeadLetterStats() {
  return useQuery({
    queryKey: deliveryKeys.deadLetterStats,
    queryFn: ({ signal }) => answerOf(api.GET('/api/v1/webhooks/dlq/stats', { signal })),
    placeholderData: keepPreviousData,
  });
}
