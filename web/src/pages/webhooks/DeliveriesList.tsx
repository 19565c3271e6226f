/**
 * A filtered, paged deliveries list: every webhook's (the Deliveries page) or one webhook's (on
 * its page). Filters and offset live in the URL.
 */
import { useMemo } from 'react';
import { failureMessage } from '../../api/queries.ts';
import { setQuery, useLocation } from '../../app/router.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { DeliveriesTable } from './DeliveriesTable.tsx';
import { DeliveryFilterForm } from './DeliveryFilterForm.tsx';
import { type DeliveryFilters, readDeliveryFilters } from './filters.ts';
import { useDeliveries, useWebhookNames } from './webhooksApi.ts';

export function DeliveriesList({
  webhookId,
}: {
  /** Only this webhook's deliveries (no webhook filter), or null for all. */
  webhookId: string | null;
}) {
  const { query } = useLocation();
  const queryText = query.toString();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the filters change when the query text does
  const filters = useMemo(() => readDeliveryFilters(query), [queryText]);
  const offset = offsetOf(query);
  const names = useWebhookNames();
  const list = useDeliveries(filters, webhookId, offset);
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
        <button type="button" onClick={() => void list.refetch()} disabled={list.isFetching}>
          Refresh
        </button>
      </div>
      <Notice kind="error">{failureMessage(list.error)}</Notice>
      {list.data === undefined ? (
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
