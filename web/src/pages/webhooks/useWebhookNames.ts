/**
 * The workspace's webhooks by id, for the webhook column of the deliveries and dead-letter lists
 * and their webhook filter. Read in pages of the largest size, all of them (a business plan allows
 * 500), up to MAX_PAGES pages; each page shows as it arrives.
 */
import { useEffect, useState } from 'react';
import { api } from '../../api/client.ts';
import type { Webhook } from './types.ts';

const PAGE = 200;
/** 10,000 webhooks; a workspace with more sees the ids of the rest instead of names. */
const MAX_PAGES = 50;

export function useWebhookNames(): Map<string, Webhook> {
  const [byId, setById] = useState<Map<string, Webhook>>(new Map());
  useEffect(() => {
    const abort = new AbortController();
    const load = async (): Promise<void> => {
      const all = new Map<string, Webhook>();
      for (let page = 0; page < MAX_PAGES; page++) {
        const { data } = await api.GET('/api/v1/webhooks', {
          params: { query: { limit: PAGE, offset: page * PAGE } },
          signal: abort.signal,
        });
        if (!data || abort.signal.aborted) return;
        for (const webhook of data.results) all.set(webhook.id, webhook);
        setById(new Map(all));
        if (data.results.length < PAGE || all.size >= data.pagination.total) return;
      }
    };
    void load().catch(() => undefined);
    return () => abort.abort();
  }, []);
  return byId;
}

/** A webhook's name for a table cell: its name, "Deleted webhook" for null, else a short id. */
export function webhookLabel(names: Map<string, Webhook>, id: string | null): string {
  if (id === null) return 'Deleted webhook';
  return names.get(id)?.name ?? `${id.slice(0, 8)}…`;
}
