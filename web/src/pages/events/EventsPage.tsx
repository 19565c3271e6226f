/**
 * The events area: the feed at /events, one event at /events/{id} (EventPage.tsx).
 *
 * The feed: `GET /events` newest first, filtered by device, geofence, type and time (all in
 * the URL), paged, with new events from the live stream prepended as they happen. Live events are
 * gathered and shown in one render every LIVE_BATCH_MS, never one render per message.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { setQuery, useLocation } from '../../app/router.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { LiveStatus } from '../../live/LiveStatus.tsx';
import { useStreamReady, useStreamTopic } from '../../live/useStream.ts';
import { Notice } from '../../ui/forms.tsx';
import { EventFilterForm } from './EventFilterForm.tsx';
import { EventPage } from './EventPage.tsx';
import { EventTable } from './EventTable.tsx';
import { listEvents } from './eventApi.ts';
import { apiQuery, type EventFilters, matches, readFilters } from './eventFilters.ts';

type Event = Schemas['Event'];

const PAGE_SIZE = 50;
/** Rows kept on screen while new ones keep arriving (the oldest fall off; paging stays exact). */
const MAX_ROWS = 200;
const LIVE_BATCH_MS = 250;
/** At most one "N new events" announcement this often, so a busy feed does not talk non-stop. */
const ANNOUNCE_EVERY_MS = 5000;
const HIGHLIGHT_MS = 6000;

interface Feed {
  rows: Event[];
  /** Total of the filtered feed, counting events that arrived live. */
  total: number;
  hasMore: boolean;
}

export default function EventsPage() {
  const { path } = useLocation();
  const rest = path.replace(/^\/events\/?/, '').replace(/\/$/, '');
  if (rest === '') return <EventFeed />;
  if (!rest.includes('/')) return <EventPage key={rest} id={decodeURIComponent(rest)} />;
  return (
    <main id="main" className="page">
      <h1>Page not found</h1>
      <p>There is no events page at this address.</p>
    </main>
  );
}

function EventFeed() {
  const { query } = useLocation();
  const queryText = query.toString();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the filters change when the query text does
  const filters = useMemo(() => readFilters(query), [queryText]);
  const { me } = useAuth();
  const workspaceId = me?.workspace_id ?? null;
  const [feed, setFeed] = useState<Feed | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const [waiting, setWaiting] = useState(0);
  const [announcement, announce] = useAnnouncer();

  const filtersRef = useRef(filters);
  filtersRef.current = filters;
  const feedRef = useRef(feed);
  feedRef.current = feed;

  const filterKey = JSON.stringify(apiQuery(filters));
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload when the filters, page or workspace change
  useEffect(() => {
    const abort = new AbortController();
    setFeed(null);
    setError(null);
    setWaiting(0);
    setFresh(new Set());
    void listEvents({ ...apiQuery(filters), limit: PAGE_SIZE, offset: filters.offset }, abort.signal)
      .then(({ data, error: failure }) => {
        if (abort.signal.aborted) return;
        if (data)
          setFeed({ rows: data.results, total: data.pagination.total, hasMore: data.pagination.has_more });
        else setError(errorMessage(failure));
      })
      .catch(() => undefined);
    return () => abort.abort();
  }, [filterKey, filters.offset, workspaceId]);

  /** Shows events newer than the feed's newest: prepends them on the first page, counts them on others. */
  const addNew = useCallback(
    (events: Event[]) => {
      const current = feedRef.current;
      if (!current) return;
      const known = new Set(current.rows.map((e) => e.id));
      const added = events.filter((e) => !known.has(e.id) && matches(e, filtersRef.current));
      if (added.length === 0) return;
      // Duplicates within the batch (a refetch overlapping live messages) count once.
      const unique = [...new Map(added.map((e) => [e.id, e])).values()].sort(
        (a, b) => Date.parse(b.occurred_at) - Date.parse(a.occurred_at),
      );
      announce(unique.length);
      if (filtersRef.current.offset > 0) {
        setWaiting((n) => n + unique.length);
        return;
      }
      setFeed({
        rows: [...unique, ...current.rows].slice(0, MAX_ROWS),
        total: current.total + unique.length,
        hasMore: current.hasMore || current.rows.length + unique.length > MAX_ROWS,
      });
      setFresh((previous) => new Set([...previous, ...unique.map((e) => e.id)]));
      const ids = unique.map((e) => e.id);
      setTimeout(() => {
        setFresh((previous) => {
          const next = new Set(previous);
          for (const id of ids) next.delete(id);
          return next;
        });
      }, HIGHLIGHT_MS);
    },
    [announce],
  );

  // Live events: gathered, shown together.
  const buffer = useRef<Event[]>([]);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  useStreamTopic('events', (event) => {
    buffer.current.push(event);
    timer.current ??= setTimeout(() => {
      timer.current = undefined;
      const batch = buffer.current;
      buffer.current = [];
      addNew(batch);
    }, LIVE_BATCH_MS);
  });

  // Each time the stream is live (again): fetch what happened since the newest event shown.
  useStreamReady(() => {
    const current = feedRef.current;
    const f = filtersRef.current;
    if (!current || f.offset > 0) return;
    const newest = current.rows[0]?.occurred_at;
    const from = newest && (!f.from || newest > f.from) ? newest : f.from;
    void listEvents({ ...apiQuery(f), from: from ?? undefined, limit: 200 }).then(({ data }) => {
      if (data && filtersRef.current === f) addNew(data.results);
    });
  });

  const change = (values: Partial<Record<keyof EventFilters, string | null>>): void =>
    setQuery({ ...values, offset: null });

  const start = filters.offset;
  const shown = feed?.rows.length ?? 0;
  return (
    <main id="main" className="page full events-page">
      <div className="page-head">
        <h1>Events</h1>
        <LiveStatus />
      </div>
      <p className="lead">Enter, exit and dwell events of your devices, newest first.</p>
      <EventFilterForm filters={filters} onChange={change} />
      <Notice kind="error">{error}</Notice>
      <div className="visually-hidden" aria-live="polite" data-testid="events-announcer">
        {announcement}
      </div>
      {waiting > 0 ? (
        <p className="notice notice-info">
          {waiting === 1 ? '1 new event' : `${waiting} new events`} since this page was loaded.{' '}
          <button type="button" onClick={() => setQuery({ offset: null })}>
            Show newest
          </button>
        </p>
      ) : null}
      {feed === null ? (
        error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <EventTable events={feed.rows} fresh={fresh} />
          <nav className="pager" aria-label="Pagination">
            <button
              type="button"
              disabled={start === 0}
              onClick={() => setQuery({ offset: start > PAGE_SIZE ? String(start - PAGE_SIZE) : null })}
            >
              Previous page
            </button>
            <span className="pager-range">
              {shown === 0
                ? 'No events'
                : `${(start + 1).toLocaleString()}–${(start + shown).toLocaleString()} of ${feed.total.toLocaleString()}`}
            </span>
            <button
              type="button"
              disabled={!feed.hasMore}
              onClick={() => setQuery({ offset: String(start + shown) })}
            >
              Next page
            </button>
          </nav>
        </>
      )}
    </main>
  );
}

/**
 * A polite announcement of how many events arrived, at most once every ANNOUNCE_EVERY_MS: counts in
 * between are added up and told together.
 */
function useAnnouncer(): [text: string, add: (count: number) => void] {
  const [text, setText] = useState('');
  const pending = useRef(0);
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const add = useCallback((count: number) => {
    pending.current += count;
    if (timer.current !== undefined) return;
    const wait = Math.max(0, last.current + ANNOUNCE_EVERY_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = undefined;
      last.current = Date.now();
      const n = pending.current;
      pending.current = 0;
      // A trailing no-break space alternates so the same words are announced again.
      setText((previous) => {
        const words = n === 1 ? '1 new event' : `${n} new events`;
        return previous === words ? `${words}\u00a0` : words;
      });
    }, wait);
  }, []);
  return [text, add];
}
