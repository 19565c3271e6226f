/** The connection state of the live stream, for a page's header (role=status: read out politely). */
import { useEffect, useState } from 'react';
import type { StreamStatus } from './stream.ts';
import { useStreamStatus } from './useStream.ts';

const TEXT: Record<StreamStatus, string> = {
  idle: 'Not live',
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  unavailable: 'Live updates unavailable',
};

/**
 * A live stream is reopened about once a minute (its token expires), normally within a fraction of
 * a second: showing "Reconnecting…" only when it lasts avoids a flicker and a spoken announcement
 * every minute.
 */
const SHOW_RECONNECTING_AFTER_MS = 2000;

export function LiveStatus() {
  const status = useStreamStatus();
  const [shown, setShown] = useState<StreamStatus>(status);
  useEffect(() => {
    if (status !== 'reconnecting' || shown !== 'live') {
      setShown(status);
      return;
    }
    const timer = setTimeout(() => setShown(status), SHOW_RECONNECTING_AFTER_MS);
    return () => clearTimeout(timer);
  }, [status, shown]);
  return (
    <p className="live-status" role="status" data-state={shown}>
      <span className="live-dot" aria-hidden="true" />
      {TEXT[shown]}
    </p>
  );
}
