/**
 * The workspace's webhooks by id, for the webhook column of the deliveries and dead-letter lists
 * and their webhook filter. One page of the largest size: a workspace with more than 200 webhooks
 * sees the ids of the rest instead of names.
 */
import { useEffect, useState } from 'react';
import { api } from '../../api/client.ts';
import type { Webhook } from './types.ts';

export function useWebhookNames(): Map<string, Webhook> {
  const [byId, setById] = useState<Map<string, Webhook>>(new Map());
  useEffect(() => {
    const abort = new AbortController();
    void api
      .GET('/api/v1/webhooks', { params: { query: { limit: 200 } }, signal: abort.signal })
      .then(({ data }) => {
        if (data && !abort.signal.aborted) setById(new Map(data.results.map((w) => [w.id, w])));
      })
      .catch(() => undefined);
    return () => abort.abort();
  }, []);
  return byId;
}

/** A webhook's name for a table cell: its name, "Deleted webhook" for null, else a short id. */
export function webhookLabel(names: Map<string, Webhook>, id: string | null): string {
  if (id === null) return 'Deleted webhook';
  return names.get(id)?.name ?? `${id.slice(0, 8)}…`;
}
