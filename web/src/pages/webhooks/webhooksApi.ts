/**
 * The calls of the webhooks area that go beyond one typed request: deliveries and dead letters
 * with their filters, one delivery with its attempts, and retries.
 */
import { api } from '../../api/client.ts';
import type { ApiAnswer } from '../../ui/useResource.ts';
import type { DeadLetterFilters, DeliveryFilters } from './filters.ts';
import type { BulkRetryAnswer, DeadLetter, Delivery, DeliveryDetail } from './types.ts';

export const PAGE_SIZE = 50;

interface Page<T> {
  results: T[];
  pagination: { total: number; offset: number; limit: number; has_more: boolean };
}

interface Init {
  params?: { path?: Record<string, string>; query?: Record<string, unknown> };
  body?: unknown;
  signal?: AbortSignal;
}
/** The client without the generated path types, for operations not yet in the typed schema. */
const loose = api as unknown as {
  GET(path: string, init: Init): Promise<ApiAnswer<unknown>>;
  POST(path: string, init: Init): Promise<ApiAnswer<unknown>>;
};

export function deliveryQuery(filters: DeliveryFilters, offset: number) {
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
export async function listDeliveries(
  filters: DeliveryFilters,
  webhookId: string | null,
  offset: number,
  signal: AbortSignal,
): Promise<ApiAnswer<Page<Delivery>>> {
  const query = deliveryQuery(filters, offset);
  if (webhookId)
    return (await loose.GET('/api/v1/webhooks/{webhook_id}/deliveries', {
      params: { path: { webhook_id: webhookId }, query },
      signal,
    })) as ApiAnswer<Page<Delivery>>;
  return (await loose.GET('/api/v1/webhooks/deliveries', {
    params: { query: { ...query, webhook_id: filters.webhook ?? undefined } },
    signal,
  })) as ApiAnswer<Page<Delivery>>;
}

export async function getDelivery(id: string, signal?: AbortSignal): Promise<ApiAnswer<DeliveryDetail>> {
  return (await loose.GET('/api/v1/webhooks/deliveries/{delivery_id}', {
    params: { path: { delivery_id: id } },
    signal,
  })) as ApiAnswer<DeliveryDetail>;
}

export async function retryDelivery(id: string): Promise<ApiAnswer<{ delivery_id: string }>> {
  return (await loose.POST('/api/v1/webhooks/deliveries/{delivery_id}/retry', {
    params: { path: { delivery_id: id } },
  })) as ApiAnswer<{ delivery_id: string }>;
}

export async function listDeadLetters(
  filters: DeadLetterFilters,
  offset: number,
  signal: AbortSignal,
): Promise<ApiAnswer<Page<DeadLetter>>> {
  return (await loose.GET('/api/v1/webhooks/dlq', {
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
  })) as ApiAnswer<Page<DeadLetter>>;
}

export async function retryDeadLetters(ids: string[]): Promise<ApiAnswer<BulkRetryAnswer>> {
  return (await loose.POST('/api/v1/webhooks/dlq/retry', {
    body: { dlq_ids: ids },
  })) as ApiAnswer<BulkRetryAnswer>;
}
