/** The filters of the events feed; every change goes to the URL at once (the page reloads from it). */
import { useId, useState } from 'react';
import { EntityCombobox } from '../../ui/EntityCombobox.tsx';
import { fromLocalInput, toLocalInput } from '../../ui/localTime.ts';
import { useEntityLookups } from './entities.ts';
import { EVENT_TYPES, type EventFilters } from './eventFilters.ts';

interface Props {
  filters: EventFilters;
  onChange(values: Partial<Record<keyof EventFilters, string | null>>): void;
}

export function EventFilterForm({ filters, onChange }: Props) {
  const id = useId();
  const lookups = useEntityLookups();
  const active = [filters.device, filters.geofence, filters.type, filters.from, filters.to].filter(
    Boolean,
  ).length;
  // Open on a laptop; folded on a phone, where the filters would otherwise fill the first screen.
  const [open, setOpen] = useState(() => !window.matchMedia('(max-width: 48rem)').matches);
  return (
    <details className="filters-box" open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Filters{active > 0 ? ` (${active} active)` : ''}</summary>
      <form className="filters" aria-label="Filter events" onSubmit={(event) => event.preventDefault()}>
        <EntityCombobox
          label="Device"
          placeholder="Any device"
          value={filters.device}
          onChange={(device) => onChange({ device })}
          search={lookups.searchDevices}
          resolve={lookups.resolveDevice}
        />
        <EntityCombobox
          label="Geofence"
          placeholder="Any geofence"
          value={filters.geofence}
          onChange={(geofence) => onChange({ geofence })}
          search={lookups.searchGeofences}
          resolve={lookups.resolveGeofence}
        />
        <div className="field">
          <label htmlFor={`${id}-type`}>Type</label>
          <select
            className="input-full"
            id={`${id}-type`}
            value={filters.type ?? ''}
            onChange={(event) => onChange({ type: event.target.value || null })}
          >
            <option value="">Any type</option>
            {EVENT_TYPES.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-from`}>From</label>
          <input
            className="input-full"
            id={`${id}-from`}
            type="datetime-local"
            value={toLocalInput(filters.from)}
            onChange={(event) => onChange({ from: fromLocalInput(event.target.value) })}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-to`}>To</label>
          <input
            className="input-full"
            id={`${id}-to`}
            type="datetime-local"
            value={toLocalInput(filters.to)}
            // The input has minutes only: "to 12:30" includes the whole minute.
            onChange={(event) => onChange({ to: endOfMinute(fromLocalInput(event.target.value)) })}
          />
        </div>
        <div className="filters-actions">
          <button
            type="button"
            disabled={active === 0}
            onClick={() => onChange({ device: null, geofence: null, type: null, from: null, to: null })}
          >
            Clear filters
          </button>
        </div>
      </form>
    </details>
  );
}

function endOfMinute(iso: string | null): string | null {
  return iso ? new Date(Date.parse(iso) + 59_999).toISOString() : null;
}
