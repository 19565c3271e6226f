/**
 * The calls of the webhooks area that take the URL's filters: deliveries (every webhook's or one
 * webhook's), dead letters, one delivery with its attempts, and retries.
 */
import { api } from '../../api/client.ts';
import type { DeadLetterFilters, DeliveryFilters } from './filters.ts';

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
