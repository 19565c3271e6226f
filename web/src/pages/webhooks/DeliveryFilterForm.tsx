/** Filters of a deliveries list; each change goes to the URL at once (the list reloads from it). */
import { useId, useState } from 'react';
import { endOfMinute, fromLocalInput, toLocalInput } from '../../ui/localTime.ts';
import { activeCount, type DeliveryFilters } from './filters.ts';
import { EVENT_TYPES, STATUS_CLASSES, STATUSES, type Webhook } from './types.ts';

type Change = Partial<Record<keyof DeliveryFilters, string | null>>;

const CLASS_LABELS: Record<(typeof STATUS_CLASSES)[number], string> = {
  '2xx': '2xx success',
  '3xx': '3xx redirect',
  '4xx': '4xx client error',
  '5xx': '5xx server error',
  none: 'No response',
};

export function DeliveryFilterForm({
  filters,
  onChange,
  webhooks,
}: {
  filters: DeliveryFilters;
  onChange(change: Change): void;
  /** The webhooks to choose from; null when the list is of one webhook (no webhook filter). */
  webhooks: Webhook[] | null;
}) {
  const id = useId();
  const shown = webhooks === null ? { ...filters, webhook: null } : filters;
  const active = activeCount(shown);
  const [open, setOpen] = useState(() => !window.matchMedia('(max-width: 48rem)').matches);
  return (
    <details className="filters-box" open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Filters{active > 0 ? ` (${active} active)` : ''}</summary>
      <form className="filters" aria-label="Filter deliveries" onSubmit={(event) => event.preventDefault()}>
        {webhooks === null ? null : (
          <Select
            id={`${id}-webhook`}
            label="Webhook"
            value={filters.webhook}
            any="Any webhook"
            options={webhooks.map((w) => [w.id, w.name])}
            onChange={(webhook) => onChange({ webhook })}
          />
        )}
        <Select
          id={`${id}-status`}
          label="Status"
          value={filters.status}
          any="Any status"
          options={STATUSES.map((s) => [s, s])}
          onChange={(status) => onChange({ status })}
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
          id={`${id}-class`}
          label="Response"
          value={filters.status_class}
          any="Any response"
          options={STATUS_CLASSES.map((c) => [c, CLASS_LABELS[c]])}
          onChange={(status_class) => onChange({ status_class })}
        />
        <TimeRange idPrefix={id} from={filters.from} to={filters.to} onChange={onChange} />
        <div className="filters-actions">
          <button
            type="button"
            disabled={active === 0}
            onClick={() =>
              onChange({
                webhook: null,
                status: null,
                event_type: null,
                status_class: null,
                from: null,
                to: null,
              })
            }
          >
            Clear filters
          </button>
        </div>
      </form>
    </details>
  );
}

export function Select({
  id,
  label,
  value,
  any,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: string | null;
  any: string;
  options: Array<[value: string, label: string]>;
  onChange(value: string | null): void;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        className="input-full"
        id={id}
        value={value ?? ''}
        onChange={(e) => onChange(e.target.value || null)}
      >
        <option value="">{any}</option>
        {/* A value from the URL not among the options (yet): shown as it is, so the filter is visible. */}
        {value !== null && !options.some(([v]) => v === value) ? (
          <option value={value}>{value}</option>
        ) : null}
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

export function TimeRange({
  idPrefix,
  from,
  to,
  onChange,
}: {
  idPrefix: string;
  from: string | null;
  to: string | null;
  onChange(change: { from?: string | null; to?: string | null }): void;
}) {
  return (
    <>
      <div className="field">
        <label htmlFor={`${idPrefix}-from`}>From</label>
        <input
          className="input-full"
          id={`${idPrefix}-from`}
          type="datetime-local"
          value={toLocalInput(from)}
          onChange={(event) => onChange({ from: fromLocalInput(event.target.value) })}
        />
      </div>
      <div className="field">
        <label htmlFor={`${idPrefix}-to`}>To</label>
        <input
          className="input-full"
          id={`${idPrefix}-to`}
          type="datetime-local"
          value={toLocalInput(to)}
          onChange={(event) => onChange({ to: endOfMinute(fromLocalInput(event.target.value)) })}
        />
      </div>
    </>
  );
}
