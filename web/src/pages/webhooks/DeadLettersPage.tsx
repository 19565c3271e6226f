/**
 * /webhooks/dead-letters: deliveries whose every attempt failed. Filtered in the URL; one entry or
 * a selection of this page is retried (a new delivery with the same payload), the selection in
 * chunks with progress; "Retry all matching this filter" is one server job over every page
 * (RetryMatching.tsx). Then the list and the totals are loaded again.
 */
import { useId, useMemo, useState } from 'react';
import { errorMessage, thrownMessage } from '../../api/client.ts';
import { failureMessage, useInvalidate } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { setQuery, useLocation } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { type BulkProgress, retryInChunks } from './bulkRetry.ts';
import { DeadLetterStats } from './DeadLetterStats.tsx';
import { Select, TimeRange } from './DeliveryFilterForm.tsx';
import { activeCount, type DeadLetterFilters, readDeadLetterFilters } from './filters.ts';
import { RetryMatchingButton, RetryMatchingReport, useRetryMatching } from './RetryMatching.tsx';
import { type DeadLetter, EVENT_TYPES } from './types.ts';
import {
  deliveryKeys,
  retryDeadLetter,
  useDeadLetterStats,
  useDeadLetters,
  useWebhookNames,
} from './webhooksApi.ts';

type Change = Partial<Record<keyof DeadLetterFilters, string | null>>;

export function DeadLettersPage() {
  const { query } = useLocation();
  const queryText = query.toString();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the filters change when the query text does
  const filters = useMemo(() => readDeadLetterFilters(query), [queryText]);
  const offset = offsetOf(query);
  const names = useWebhookNames();
  const invalidate = useInvalidate();
  const list = useDeadLetters(filters, offset);
  useLastPageWhenPastEnd(list.data?.pagination, list.data?.results.length ?? 0);
  const stats = useDeadLetterStats();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [progress, setProgress] = useState<BulkProgress | null>(null);
  /** The entries of the selection being retried, so the report names each one. */
  const [bulkEntries, setBulkEntries] = useState<ReadonlyMap<string, DeadLetter>>(new Map());
  const [running, setRunning] = useState(false);
  const [single, setSingle] = useState<{ entry: DeadLetter; deliveryId: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** Entries whose single retry is under way: their Retry is off, so one press sends one retry. */
  const [inFlight, setInFlight] = useState<ReadonlySet<string>>(new Set());
  /** Entries retried here, with the new delivery each became: a link to it replaces Retry. */
  const [retried, setRetried] = useState<ReadonlyMap<string, string>>(new Map());

  const refresh = (): void => {
    setSelected(new Set());
    invalidate(deliveryKeys.all);
  };
  const change = (values: Change): void => {
    setSelected(new Set());
    setQuery({ ...values, offset: null });
  };

  const matching = useRetryMatching(filters, refresh);
  const rows = list.data?.results ?? [];
  const selectable = rows.filter(retryable);
  const allSelected = selectable.length > 0 && selectable.every((r) => selected.has(r.dlq_id));

  const retryOne = async (entry: DeadLetter): Promise<void> => {
    setInFlight((previous) => new Set(previous).add(entry.dlq_id));
    try {
      const { data, error: failure } = await retryDeadLetter(entry.dlq_id);
      if (data) {
        setError(null);
        setSingle({ entry, deliveryId: data.delivery_id });
        setRetried((previous) => new Map(previous).set(entry.dlq_id, data.delivery_id));
        refresh();
      } else setError(errorMessage(failure));
    } catch (thrown) {
      setError(thrownMessage(thrown));
    } finally {
      setInFlight((previous) => {
        const next = new Set(previous);
        next.delete(entry.dlq_id);
        return next;
      });
    }
  };

  const retrySelected = async (): Promise<void> => {
    const chosen = rows.filter((r) => selected.has(r.dlq_id));
    const ids = chosen.map((r) => r.dlq_id);
    if (ids.length === 0) return;
    setBulkEntries(new Map(chosen.map((r) => [r.dlq_id, r])));
    setRunning(true);
    setSingle(null);
    setError(null);
    try {
      await retryInChunks(ids, setProgress);
    } finally {
      setRunning(false);
      refresh();
    }
  };

  return (
    <>
      <h1>Dead letters</h1>
      <p className="lead">
        Deliveries that failed every attempt. A retry sends the same payload again as a new delivery.
      </p>
      {stats.data ? <DeadLetterStats stats={stats.data} /> : null}
      <Notice kind="error">{failureMessage(stats.error)}</Notice>
      <DeadLetterFilterForm filters={filters} onChange={change} names={names} />
      <div className="bulk-bar">
        <label className="check">
          <input
            type="checkbox"
            checked={allSelected}
            disabled={selectable.length === 0 || running}
            onChange={(event) =>
              setSelected(event.target.checked ? new Set(selectable.map((r) => r.dlq_id)) : new Set())
            }
          />{' '}
          Select all on this page
        </label>
        <button
          type="button"
          className="primary"
          disabled={selected.size === 0 || running}
          onClick={() => void retrySelected()}
        >
          Retry selected{selected.size > 0 ? ` (${selected.size})` : ''}
        </button>
        <RetryMatchingButton state={matching} filters={filters} disabled={running} />
        <button type="button" onClick={refresh} disabled={running}>
          Refresh
        </button>
      </div>
      <RetryMatchingReport state={matching} />
      <BulkReport progress={progress} running={running} entries={bulkEntries} />
      {single ? (
        <p className="notice notice-success" role="status">
          Retry queued for the {single.entry.event_type} delivery to {single.entry.webhook.name}:{' '}
          <Link href={`/webhooks/deliveries/${single.deliveryId}`}>follow the new delivery</Link>.
        </p>
      ) : null}
      <Notice kind="error">{error ?? failureMessage(list.error)}</Notice>
      {list.data === undefined ? (
        list.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : rows.length === 0 ? (
        <p>No dead letters match these filters.</p>
      ) : (
        <>
          <div className="table-wrap">
            <table className="dlq-table">
              <caption className="visually-hidden">Dead-letter entries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">
                    <span className="visually-hidden">Selected</span>
                  </th>
                  <th scope="col">Queued</th>
                  <th scope="col">Webhook</th>
                  <th scope="col">Event type</th>
                  <th scope="col">Last error</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Retried</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((entry) => (
                  <tr key={entry.dlq_id}>
                    <td>
                      {!retryable(entry) || retried.has(entry.dlq_id) ? null : (
                        <input
                          type="checkbox"
                          aria-label={`Select ${entry.event_type} to ${entry.webhook.name}, ${formatTime(entry.queued_at)}`}
                          checked={selected.has(entry.dlq_id)}
                          disabled={running}
                          onChange={(event) =>
                            setSelected((previous) => {
                              const next = new Set(previous);
                              if (event.target.checked) next.add(entry.dlq_id);
                              else next.delete(entry.dlq_id);
                              return next;
                            })
                          }
                        />
                      )}
                    </td>
                    <td>
                      <Link href={`/webhooks/deliveries/${entry.delivery_id}`}>
                        <time dateTime={entry.queued_at}>{formatTime(entry.queued_at)}</time>
                      </Link>
                    </td>
                    <td>
                      {entry.webhook.id ? (
                        <Link href={`/webhooks/${entry.webhook.id}`}>{entry.webhook.name}</Link>
                      ) : (
                        `${entry.webhook.name} (deleted)`
                      )}
                    </td>
                    <td>
                      <code>{entry.event_type}</code>
                    </td>
                    <td className="error-cell">{entry.error_message}</td>
                    <td className="num">{entry.retry_count + 1}</td>
                    <td>{entry.requeued ? 'Yes' : 'No'}</td>
                    <td>
                      <RetryCell
                        entry={entry}
                        newDelivery={retried.get(entry.dlq_id) ?? null}
                        disabled={running || inFlight.has(entry.dlq_id)}
                        onRetry={() => void retryOne(entry)}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pagination={list.data.pagination} shown={rows.length} noun="dead letters" />
        </>
      )}
    </>
  );
}

/**
 * An entry can be retried once, and only while its webhook exists: the retry of an entry whose
 * webhook was deleted is refused (NOT_FOUND), so it offers none.
 */
function retryable(entry: DeadLetter): boolean {
  return !entry.requeued && entry.webhook.id !== null;
}

function RetryCell({
  entry,
  newDelivery,
  disabled,
  onRetry,
}: {
  entry: DeadLetter;
  /** The delivery a retry from this page created, if any. */
  newDelivery: string | null;
  disabled: boolean;
  onRetry(): void;
}) {
  if (newDelivery !== null)
    return (
      <Link href={`/webhooks/deliveries/${newDelivery}`}>
        New delivery
        <span className="visually-hidden">
          {' '}
          of {entry.event_type} to {entry.webhook.name}
        </span>
      </Link>
    );
  if (entry.requeued) return null;
  if (entry.webhook.id === null) return <span className="hint">webhook deleted</span>;
  return (
    <button type="button" disabled={disabled} onClick={onRetry}>
      Retry
      <span className="visually-hidden">
        {' '}
        {entry.event_type} to {entry.webhook.name}
      </span>
    </button>
  );
}

/** How a retried entry is named in the report: what it was and when it failed, not an id. */
function entryLabel(entry: DeadLetter | undefined, dlqId: string): string {
  if (!entry) return `entry ${dlqId}`;
  return `${entry.event_type} to ${entry.webhook.name}, failed ${formatTime(entry.queued_at)}`;
}

function BulkReport({
  progress,
  running,
  entries,
}: {
  progress: BulkProgress | null;
  running: boolean;
  entries: ReadonlyMap<string, DeadLetter>;
}) {
  const id = useId();
  if (progress === null) return null;
  return (
    <section className="bulk-report" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Retry of {progress.total === 1 ? '1 entry' : `${progress.total} entries`}</h2>
      <progress id={`${id}-bar`} value={progress.done} max={progress.total} aria-labelledby={`${id}-title`} />
      <p role="status" aria-live="polite" data-testid="bulk-progress">
        {progress.done} of {progress.total} queued
        {!running ? `: done, ${progress.retried.length} retried, ${progress.failed.length} failed.` : '…'}
      </p>
      {!running && progress.retried.length + progress.failed.length > 0 ? (
        <ul className="bulk-outcomes" aria-label="Outcome per entry">
          {progress.retried.map((r) => (
            <li key={r.dlq_id} className="outcome-ok">
              Queued:{' '}
              <Link href={`/webhooks/deliveries/${r.delivery_id}`}>
                {entryLabel(entries.get(r.dlq_id), r.dlq_id)}
              </Link>
            </li>
          ))}
          {progress.failed.map((f) => (
            <li key={f.dlq_id} className="outcome-failed">
              Not retried ({entryLabel(entries.get(f.dlq_id), f.dlq_id)}): {f.detail}{' '}
              <code>{f.error_code}</code>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function DeadLetterFilterForm({
  filters,
  onChange,
  names,
}: {
  filters: DeadLetterFilters;
  onChange(change: Change): void;
  names: Map<string, { id: string; name: string }>;
}) {
  const id = useId();
  const active = activeCount(filters);
  const [open, setOpen] = useState(() => !window.matchMedia('(max-width: 48rem)').matches);
  return (
    <details className="filters-box" open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Filters{active > 0 ? ` (${active} active)` : ''}</summary>
      <form className="filters" aria-label="Filter dead letters" onSubmit={(event) => event.preventDefault()}>
        <Select
          id={`${id}-webhook`}
          label="Webhook"
          value={filters.webhook}
          any="Any webhook"
          options={[...names.values()].map((w) => [w.id, w.name])}
          onChange={(webhook) => onChange({ webhook })}
        />
        <Select
          id={`${id}-type`}
          label="Event type"
          value={filters.event_type}
          any="Any event type"
          options={EVENT_TYPES.map((t) => [t, t])}
          onChange={(event_type) => onChange({ event_type })}
        />
        <Select
          id={`${id}-requeued`}
          label="Retried"
          value={filters.requeued}
          any="Retried or not"
          options={[
            ['false', 'Not retried'],
            ['true', 'Retried'],
          ]}
          onChange={(requeued) => onChange({ requeued })}
        />
        <TimeRange idPrefix={id} from={filters.from} to={filters.to} onChange={onChange} />
        <div className="filters-actions">
          <button
            type="button"
            disabled={active === 0}
            onClick={() =>
              onChange({ webhook: null, event_type: null, requeued: null, from: null, to: null })
            }
          >
            Clear filters
          </button>
        </div>
      </form>
    </details>
  );
}
