/**
 * A device's tracking session (contract §4.4): the one in progress with its running summary, or
 * what "No tracking session" means — and starting or stopping one.
 */
import { useState } from 'react';
import { errorMessage, type Schemas, thrownMessage } from '../../api/client.ts';
import { failureMessage } from '../../api/queries.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { startTrackingSession, stopTrackingSession, useLatestSession } from './devicesApi.ts';

type Session = Schemas['TrackingSession'];

/** What a device without an active session still does, and what a session would add. */
export function NoSessionExplained() {
  return (
    <p className="hint">
      No tracking session is running. That is normal: every location is still stored and checked against the
      geofences, so events, webhooks and workflows work as usual. A session only groups the locations of one
      trip — while it runs each location carries its id, and it counts the trip’s locations, distance,
      duration, events and geofences visited.
    </p>
  );
}

export function SessionPanel({ deviceId }: { deviceId: string }) {
  const latest = useLatestSession(deviceId);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const session: Session | null = latest.data?.results[0] ?? null;
  const active = session?.status === 'active' ? session : null;

  const act = async (call: () => Promise<{ data?: unknown; error?: unknown }>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      const { data, error: failure } = await call();
      if (data === undefined) setError(errorMessage(failure));
      void latest.refetch();
    } catch (thrown) {
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };
  const start = () => act(() => startTrackingSession(deviceId));
  const stop = (id: string) => act(() => stopTrackingSession(id));

  return (
    <section className="device-session" aria-labelledby="session-title">
      <h2 id="session-title">Tracking session</h2>
      {latest.data === undefined ? (
        latest.error ? null : (
          <p className="hint">Loading…</p>
        )
      ) : active ? (
        <>
          <p data-testid="session-state">
            <span className="badge badge-success">In progress</span> since{' '}
            <time dateTime={active.started_at}>{formatTime(active.started_at)}</time>
          </p>
          <SessionSummary session={active} />
          <button type="button" disabled={busy} onClick={() => void stop(active.id)}>
            Stop tracking session
          </button>
        </>
      ) : (
        <>
          <p data-testid="session-state">
            <strong>No tracking session</strong>
            {session?.ended_at ? (
              <>
                {' '}
                (the last one ended <time dateTime={session.ended_at}>{formatTime(session.ended_at)}</time>)
              </>
            ) : null}
          </p>
          <NoSessionExplained />
          <button type="button" disabled={busy} onClick={() => void start()}>
            Start a tracking session
          </button>
        </>
      )}
      <Notice kind="error">{error ?? failureMessage(latest.error)}</Notice>
    </section>
  );
}

function SessionSummary({ session }: { session: Session }) {
  const { location_count, distance_m, duration_s, event_count } = session.summary;
  return (
    <p className="hint">
      {location_count.toLocaleString()} {location_count === 1 ? 'location' : 'locations'},{' '}
      {distance_m >= 1000 ? `${(distance_m / 1000).toFixed(1)} km` : `${Math.round(distance_m)} m`},{' '}
      {duration(duration_s)}, {event_count.toLocaleString()} geofence {event_count === 1 ? 'event' : 'events'}
      .
    </p>
  );
}

function duration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}
