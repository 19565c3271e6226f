/**
 * A filtered, paged deliveries list: every webhook's (the Deliveries page) or one webhook's (on
 * its page). Filters and offset live in the URL.
 */
import { useMemo } from 'react';
import { setQuery, useLocation } from '../../app/router.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { useResource } from '../../ui/useResource.ts';
import { DeliveriesTable } from './DeliveriesTable.tsx';
import { DeliveryFilterForm } from './DeliveryFilterForm.tsx';
import { type DeliveryFilters, readDeliveryFilters } from './filters.ts';
import { useWebhookNames } from './useWebhookNames.ts';
import { listDeliveries } from './webhooksApi.ts';

export function DeliveriesList({
  webhookId,
  refreshKey = 0,
}: {
  /** Only this webhook's deliveries (no webhook filter), or null for all. */
  webhookId: string | null;
  /** Changing it reloads the list (e.g. after a test event). */
  refreshKey?: number;
}) {
  const { query } = useLocation();
  const queryText = query.toString();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the filters change when the query text does
  const filters = useMemo(() => readDeliveryFilters(query), [queryText]);
  const offset = offsetOf(query);
  const names = useWebhookNames();
  const list = useResource(
    (signal) => listDeliveries(filters, webhookId, offset, signal),
    `${webhookId}:${JSON.stringify(filters)}:${offset}:${refreshKey}`,
  );
  useLastPageWhenPastEnd(list.data?.pagination, list.data?.results.length ?? 0);
  const change = (values: Partial<Record<keyof DeliveryFilters, string | null>>): void =>
    setQuery({ ...values, offset: null });

  return (
    <div className="deliveries-list">
      <DeliveryFilterForm
        filters={filters}
        onChange={change}
        webhooks={webhookId === null ? [...names.values()] : null}
      />
      <div className="list-actions">
        <button type="button" onClick={list.reload} disabled={list.loading}>
          Refresh
        </button>
      </div>
      <Notice kind="error">{list.error}</Notice>
      {list.data === null ? (
        list.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : list.data.results.length === 0 ? (
        <p>No deliveries match these filters.</p>
      ) : (
        <>
          <DeliveriesTable
            deliveries={list.data.results}
            names={names}
            caption={webhookId ? "This webhook's deliveries, newest first" : 'Deliveries, newest first'}
          />
          <Pager pagination={list.data.pagination} shown={list.data.results.length} noun="deliveries" />
        </>
      )}
    </div>
  );
}
