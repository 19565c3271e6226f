/**
 * The list beside the map: name search and an enabled filter kept in the address (`q`, `enabled`,
 * `page`), one page of 50 from `GET /geofences` at a time. Choosing an item selects it on the map.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { failureMessage } from '../../api/queries.ts';
import { setQuery } from '../../app/router.ts';
import { Notice } from '../../ui/forms.tsx';
import { type Geofence, LIST_PAGE_SIZE as PAGE_SIZE, useGeofenceList } from './geofenceApi.ts';

export interface ListFilters {
  q: string;
  /** 'true', 'false' or '' (all) */
  enabled: string;
  page: number;
}

interface Props {
  filters: ListFilters;
  selectedId: string | null;
  onSelect: (geofence: Geofence) => void;
}

export function GeofenceList({ filters, selectedId, onSelect }: Props) {
  const enabled = filters.enabled === 'true' ? true : filters.enabled === 'false' ? false : undefined;
  const page = useGeofenceList(filters.q, enabled, (filters.page - 1) * PAGE_SIZE);
  const list = page.data
    ? {
        results: page.data.results,
        total: page.data.pagination.total,
        hasMore: page.data.pagination.has_more,
      }
    : null;
  const error = failureMessage(page.error);
  const [search, setSearch] = useState(filters.q);
  const listRef = useRef<HTMLUListElement>(null);
  const searchId = useId();
  const statusId = useId();

  // Typing updates the address (and the fetch) once the typist pauses, not on every key.
  useEffect(() => {
    if (search === filters.q) return;
    const timer = setTimeout(() => setQuery({ q: search, page: null }), 300);
    return () => clearTimeout(timer);
  }, [search, filters.q]);
  // The address changed by other means (back, a shared link): the field follows.
  useEffect(() => setSearch(filters.q), [filters.q]);

  // A shape clicked on the map: bring its list item into view when it is on this page.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the item exists only once the page arrived.
  useEffect(() => {
    if (!selectedId) return;
    listRef.current
      ?.querySelector(`[data-geofence-id="${CSS.escape(selectedId)}"]`)
      ?.scrollIntoView({ block: 'nearest' });
  }, [selectedId, page.data]);

  const pages = list ? Math.max(1, Math.ceil(list.total / PAGE_SIZE)) : 1;

  return (
    <section aria-labelledby="geofence-list-title" className="geofence-list">
      <h2 id="geofence-list-title">All geofences</h2>
      <div className="list-filters">
        <div className="field">
          <label htmlFor={searchId}>Search geofences</label>
          <input
            id={searchId}
            type="search"
            value={search}
            maxLength={255}
            onChange={(e) => setSearch(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={statusId}>Show</label>
          <select
            id={statusId}
            value={filters.enabled}
            onChange={(e) => setQuery({ enabled: e.target.value, page: null })}
          >
            <option value="">All</option>
            <option value="true">Enabled only</option>
            <option value="false">Disabled only</option>
          </select>
        </div>
      </div>
      <Notice kind="error">{error}</Notice>
      {list === null ? (
        error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <p role="status" className="hint">
            {list.total === 0
              ? filters.q || filters.enabled
                ? 'No geofence matches.'
                : 'No geofences yet: draw one on the map, type one in, or import a file.'
              : `${list.total.toLocaleString()} geofence${list.total === 1 ? '' : 's'}`}
          </p>
          <ul className="geofence-items" ref={listRef}>
            {list.results.map((g) => (
              <li key={g.id}>
                <button
                  type="button"
                  className="geofence-item"
                  data-geofence-id={g.id}
                  aria-current={g.id === selectedId ? 'true' : undefined}
                  onClick={() => onSelect(g)}
                >
                  <span className="geofence-item-name">{g.name}</span>
                  <span className="geofence-item-meta">
                    {describeGeometry(g)}
                    {' · '}
                    <span className={g.enabled ? 'state-on' : 'state-off'}>
                      {g.enabled ? 'enabled' : 'disabled'}
                    </span>
                    {g.external_id ? ` · ${g.external_id}` : ''}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          {pages > 1 ? (
            <nav className="pager" aria-label="Geofence pages">
              <button
                type="button"
                disabled={filters.page <= 1}
                onClick={() => setQuery({ page: filters.page - 1 > 1 ? String(filters.page - 1) : null })}
              >
                Previous page
              </button>
              <span>
                Page {filters.page} of {pages}
              </span>
              <button
                type="button"
                disabled={!list.hasMore}
                onClick={() => setQuery({ page: String(filters.page + 1) })}
              >
                Next page
              </button>
            </nav>
          ) : null}
        </>
      )}
    </section>
  );
}

function describeGeometry(g: Geofence): string {
  if (g.geometry.type === 'Circle') return `Circle, ${formatMetres(g.geometry.radius)}`;
  const holes = g.geometry.coordinates.length - 1;
  return holes > 0 ? `Polygon, ${holes} hole${holes === 1 ? '' : 's'}` : 'Polygon';
}

export function formatMetres(m: number): string {
  return m >= 1000
    ? `${(m / 1000).toLocaleString(undefined, { maximumFractionDigits: 2 })} km`
    : `${Math.round(m)} m`;
}
